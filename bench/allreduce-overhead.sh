#!/bin/bash
# bench/allreduce-overhead.sh: benchd-allreduce vs a bare MPI_Allreduce loop
# on the CPU path, same ranks, same size, same iterations, alternating R
# rounds; prints the median time per iteration of each and the ratio
# (target <= 1.05 at 64 MiB).
#
#   bench/allreduce-overhead.sh [BUILD_DIR] [RANKS] [BYTES] [ROUNDS]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
np=${2:-2}
bytes=${3:-67108864}
rounds=${4:-5}
iters=20
AR="$build/benchd-allreduce"
[ -x "$AR" ] || { echo "allreduce-overhead: no $AR (build first)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -o "$tmp/bare" "$src/bench/allreduce-bare.c"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
ours=() bare=()
for _ in $(seq "$rounds"); do
    ours+=("$(mpirun -np "$np" "$AR" --min-bytes "$bytes" --max-bytes "$bytes" --iters "$iters" --warmup 5 |
              awk '$3 == "float" {print $4}')")
    bare+=("$(mpirun -np "$np" "$tmp/bare" "$bytes" "$iters" 5)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
m_ours=$(median "${ours[@]}")
m_bare=$(median "${bare[@]}")
printf 'allreduce of %d bytes, %d ranks, %d iterations, median of %d rounds\n' "$bytes" "$np" "$iters" "$rounds"
printf 'benchd-allreduce:   %.1f us per iteration\n' "$m_ours"
printf 'bare MPI_Allreduce: %.1f us per iteration\n' "$m_bare"
printf 'ratio:              %.3f (target <= 1.05)\n' "$(echo "$m_ours / $m_bare" | bc -l)"

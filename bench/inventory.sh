#!/bin/bash
# bench/inventory.sh: a full node inventory, `benchd --inventory --json`, vs
# hwloc's `lstopo --of xml` (Debian package hwloc-nox) on this machine, in
# one run: median wall time of N runs of each, alternating, and the ratio
# (target <= 0.5).
#
#   bench/inventory.sh [BUILD_DIR] [RUNS]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
runs=${2:-30}
BENCHD="$build/benchd"
[ -x "$BENCHD" ] || { echo "inventory: no $BENCHD (build first)" >&2; exit 1; }
command -v lstopo >/dev/null || { echo "inventory: lstopo not installed (apt-get install hwloc-nox)" >&2; exit 1; }
now() { date +%s.%N; }
ours=() theirs=()
for _ in $(seq "$runs"); do
    t0=$(now); "$BENCHD" --inventory --json >/dev/null; t1=$(now)
    lstopo --of xml - >/dev/null; t2=$(now)
    ours+=("$(echo "$t1 - $t0" | bc -l)")
    theirs+=("$(echo "$t2 - $t1" | bc -l)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mo=$(median "${ours[@]}")
mt=$(median "${theirs[@]}")
printf 'inventory of this machine, median of %d runs each, alternating\n' "$runs"
printf 'benchd --inventory --json: %7.2f ms\n' "$(echo "$mo * 1000" | bc -l)"
printf 'lstopo --of xml:           %7.2f ms\n' "$(echo "$mt * 1000" | bc -l)"
printf 'ratio:                     %.3f (target <= 0.5)\n' "$(echo "$mo / $mt" | bc -l)"

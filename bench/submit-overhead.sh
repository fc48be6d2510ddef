#!/bin/bash
# bench/submit-overhead.sh: how much benchctl submit costs over plain sbatch.
#
# On the local Slurm test cluster (started here, stopped at the end), submit
# the same rendered 4xlocal allreduce script N times each way, alternating:
# 'benchctl submit' (render, record in the results store, libslurm submit) and
# 'sbatch' of the script benchctl rendered, the nodes drained so that no job
# runs meanwhile.  Prints the medians and the ratio
# (target <= 1.2).  Needs root (munge, slurmd) and a built tree.
#
#   bench/submit-overhead.sh [BUILD_DIR] [N]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
n=${2:-20}
BENCHCTL="$build/benchctl"
[ -x "$BENCHCTL" ] || { echo "submit-overhead: no $BENCHCTL (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
export BENCHD_HOME="$tmp/home" BENCHD_CLUSTER_DIR="$tmp/cluster" BENCHD_SYSTEMS="$src/systems"
cleanup() {
    bash "$src/tests/cluster/cluster.sh" down "$BENCHD_CLUSTER_DIR" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
envline=$(bash "$src/tests/cluster/cluster.sh" up "$BENCHD_CLUSTER_DIR" 2>"$tmp/up.err" | tail -1) ||
    { cat "$tmp/up.err" >&2; echo "submit-overhead: the local Slurm cluster did not start" >&2; exit 1; }
eval "$envline"
# only submission is measured: the nodes are drained, so the jobs stay
# pending instead of starting 16 ranks each on this machine's CPUs while the
# next submissions are timed (they are cancelled with the cluster at the end)
scontrol update nodename=ALL state=drain reason="submit-overhead bench" ||
    { echo "submit-overhead: cannot drain the cluster's nodes" >&2; exit 1; }
mkdir -p "$tmp/bin" "$tmp/logs"
printf '#!/bin/sh\nexit 0\n' > "$tmp/bin/benchd-allreduce"
chmod +x "$tmp/bin/benchd-allreduce"
sets=(--set paths.bin="$tmp/bin" --set clear_caches=false --logdir "$tmp/logs")
"$BENCHCTL" render --system 4xlocal allreduce --runs 1 --set paths.bin="$tmp/bin" \
    --set clear_caches=false --set paths.logs="$tmp/logs" -o "$tmp/job.sbatch"

# what creating a file costs here now: benchctl creates three (the run
# directory before submitting, its script and config in a thread while it
# submits) and slurmctld as many per job; on ext4
# without a journal (as on this VM) that cost grows for minutes after a big
# deletion, which is how consecutive runs of this script slow each other
mkdir "$tmp/probe"
t0=$EPOCHREALTIME
for i in $(seq 200); do : >"$tmp/probe/$i"; done
t1=$EPOCHREALTIME
create_us=$(echo "($t1 - $t0) * 1000000 / 200" | bc -l)
bc_times=() sb_times=()
for _ in $(seq "$n"); do
    t0=$EPOCHREALTIME; "$BENCHCTL" submit --system 4xlocal allreduce --runs 1 "${sets[@]}" >/dev/null; t1=$EPOCHREALTIME
    bc_times+=("$(echo "$t1 - $t0" | bc -l)")
    t0=$EPOCHREALTIME; sbatch --parsable "$tmp/job.sbatch" >/dev/null; t1=$EPOCHREALTIME
    sb_times+=("$(echo "$t1 - $t0" | bc -l)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
m_bc=$(median "${bc_times[@]}")
m_sb=$(median "${sb_times[@]}")
printf 'submissions:        %d each, alternating, on the local 4-node Slurm cluster\n' "$n"
printf 'file creation:      %.0f us per file in %s before the runs\n' "$create_us" "$tmp"
printf 'benchctl submit:    median %.4f s\n' "$m_bc"
printf 'sbatch:             median %.4f s\n' "$m_sb"
printf 'ratio:              %.2f (target <= 1.2)\n' "$(echo "$m_bc / $m_sb" | bc -l)"
if [ "$(echo "$create_us > 60" | bc -l)" = 1 ]; then
    printf 'note:               creating a file took %.0f us here (30-50 when the disk is quiet): files\n' "$create_us"
    printf '                    deleted in the last minutes slow inode allocation (ext4 without a journal),\n'
    printf '                    which costs benchctl (3 files per submission) more than sbatch\n'
fi

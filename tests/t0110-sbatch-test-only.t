#!/bin/bash
# Every rendered Slurm script is accepted by sbatch --test-only on the real
# local test cluster (started and stopped here).
. "${srcdir:-.}/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to run munge and slurmd"
command -v sbatch >/dev/null || skip_all "sbatch not installed (slurm-wlm)"
command -v slurmctld >/dev/null || [ -x /usr/sbin/slurmctld ] || skip_all "slurmctld not installed"

tmp=$(mktemp -d)
export BENCHD_CLUSTER_DIR="$tmp/cluster" BENCHD_CLUSTER_PORT=16917  # distinct from the other cluster tests: make check runs them in parallel
cleanup() { bash "$srcdir/tests/cluster/cluster.sh" down "$BENCHD_CLUSTER_DIR" >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
if ! envline=$(bash "$srcdir/tests/cluster/cluster.sh" up "$BENCHD_CLUSTER_DIR" 2>"$tmp/up.err" | tail -1); then
    sed 's/^/# /' "$tmp/up.err"
    echo "not ok 1 - local test cluster starts"
    echo "1..1"
    exit 1
fi
eval "$envline"
_t_result 0 "local test cluster is up"

# (24xlocal and 24xp3dn need 24 nodes: t0990, make check-scale, checks them)
for sys in C4140 2xC4140 4xC4140 4xlocal 4xlocal-ch; do
    for w in ssd maskrcnn allreduce; do
        f="$tmp/$sys-$w.sbatch"
        "$BENCHCTL" render --system "$sys" "$w" --set paths.logs="$tmp/logs" -o "$f"
        out=$(sbatch --test-only "$f" 2>&1); rc=$?
        is "$sys $w: sbatch --test-only accepts the script" "$rc" 0
        like "$sys $w: it would run on the cluster's nodes" "$out" "Job [0-9]+ to start at .* on nodes n"
    done
done
# and a script asking for more than the cluster has is refused by the same check
"$BENCHCTL" render --system 4xC4140 ssd --set nodes=5 --set paths.logs="$tmp/logs" -o "$tmp/five.sbatch"
check_fails "5 nodes refused by sbatch --test-only" sbatch --test-only "$tmp/five.sbatch"
# submit --dry-run on a Slurm system: a trainer this host lacks may be on the
# nodes (a node-local paths.bin): a warning, and the controller is asked
out=$(BENCHD_HOME="$tmp/home" "$BENCHCTL" submit --system 4xlocal allreduce --dry-run --logdir "$tmp/logs" \
      --set paths.bin="$tmp/node-local/bin" 2>"$tmp/err"); rc=$?
is "submit --dry-run, trainer not on this host: exit 0" "$rc" 0
like "  a warning naming it" "$(cat "$tmp/err")" "^benchctl: warning: allreduce: no trainer '$tmp/node-local/bin/benchd-allreduce' on this host .*the nodes must have it"
like "  and where it would run" "$out" "on nodes? n"
done_testing

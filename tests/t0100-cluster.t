#!/usr/bin/env bash
# t0100-cluster: bring a real 4-node Slurm cluster up with
# tests/cluster/cluster.sh, run jobs on it, and take it down again.
# TAP output. Needs root and the Debian slurm-wlm + munge packages.

set -uo pipefail

srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
CLUSTER=$srcdir/tests/cluster/cluster.sh

skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

[[ $(id -u) == 0 ]] || skip_all "needs root (the test cluster runs SlurmUser=root)"
for p in slurmctld slurmd munged sbatch sinfo srun; do
	command -v "$p" >/dev/null 2>&1 || skip_all "$p not installed"
done
[[ -x $CLUSTER ]] || [[ -r $CLUSTER ]] || skip_all "$CLUSTER not found"

# Inherited Slurm variables (say, when run inside a job) would steer sbatch.
while read -r v; do
	unset "$v"
done < <(compgen -e | grep -E '^(SLURM|SBATCH|SALLOC|SRUN)_' || true)

DIR=$(mktemp -d "${TMPDIR:-/tmp}/benchd-t0100.XXXXXX") || {
	echo "1..0 # SKIP mktemp failed"
	exit 0
}
CDIR=$DIR/cluster
WORK=$DIR/work
mkdir -p "$WORK"

# A base port whose 5 ports (controller, 4 nodes) are all free.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick_port() {
	local try base ok off
	for try in $(seq 1 50); do
		base=$((20000 + (RANDOM % 200) * 100 + try))
		ok=1
		for off in 0 184 185 186 187; do
			port_free $((base + off)) || ok=0
		done
		((ok)) && {
			echo "$base"
			return 0
		}
	done
	return 1
}
BENCHD_CLUSTER_PORT=$(pick_port) || BENCHD_CLUSTER_PORT=26817
export BENCHD_CLUSTER_PORT
unset BENCHD_CLUSTER_DIR

started=0
cleanup() {
	local rc=$?
	if ((started)); then
		bash "$CLUSTER" down "$CDIR" >/dev/null 2>&1 || true
	fi
	rm -rf -- "$DIR"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $*"
}
check() { # check DESC CMD...: CMD's output shows only when it fails
	local desc=$1
	shift
	if "$@" >"$WORK/check.out" 2>&1; then
		ok "$desc"
	else
		not_ok "$desc"
		diag <"$WORK/check.out"
	fi
}
diag() { sed 's/^/# /'; }

echo "1..10"

# 1: up
if out=$(bash "$CLUSTER" up "$CDIR" 2>"$DIR/up.err"); then
	started=1
	ok "cluster.sh up starts the cluster"
else
	started=1
	not_ok "cluster.sh up starts the cluster"
	diag <"$DIR/up.err"
fi
last=$(tail -n 1 <<<"$out")
if [[ $last == "export SLURM_CONF=$CDIR/slurm.conf" ]]; then
	eval "$last"
else
	echo "# unexpected last line: $last"
	export SLURM_CONF=$CDIR/slurm.conf
fi

# 2: four idle nodes
nodes=$(timeout 20 sinfo -h -N -p debug -o '%N %t %c %G' 2>&1)
if [[ $(grep -cE '^n[1-4] idle 4 gpu:4' <<<"$nodes") == 4 ]]; then
	ok "4 idle nodes with 4 CPUs and gpu:4"
else
	not_ok "4 idle nodes with 4 CPUs and gpu:4"
	diag <<<"$nodes"
fi

# 3: a 16-task job over 4 nodes reaches every node with srun
jobout=$WORK/job.out
# shellcheck disable=SC2016 # $SLURMD_NODENAME expands in the job, not here
if timeout 120 sbatch --wait --chdir="$WORK" -o "$jobout" -N 4 -n 16 --gres=gpu:4 \
	--wrap 'srun bash -c "echo node=\$SLURMD_NODENAME task=\$SLURM_PROCID"' \
	>"$WORK/sbatch.out" 2>&1 &&
	[[ $(grep -c '^node=n[1-4] task=' "$jobout") == 16 ]] &&
	[[ $(sed -n 's/^node=\(n[1-4]\) .*/\1/p' "$jobout" | sort | uniq -c |
		awk '$1 == 4' | wc -l) == 4 ]]; then
	ok "sbatch -N 4 -n 16 --gres=gpu:4: srun runs 4 tasks on each of n1..n4"
else
	not_ok "sbatch -N 4 -n 16 --gres=gpu:4: srun runs 4 tasks on each of n1..n4"
	cat "$WORK/sbatch.out" "$jobout" 2>/dev/null | diag
fi

# 4, 5: sbatch --test-only
check "sbatch --test-only accepts -N 4 -n 16 --gres=gpu:4 --exclusive" \
	timeout 30 sbatch --test-only --chdir="$WORK" -N 4 -n 16 --gres=gpu:4 \
	--exclusive --mem=0 --wrap 'srun hostname'
if timeout 30 sbatch --test-only --chdir="$WORK" -N 5 --wrap hostname >"$WORK/t5.out" 2>&1; then
	not_ok "sbatch --test-only rejects -N 5"
	diag <"$WORK/t5.out"
else
	ok "sbatch --test-only rejects -N 5"
fi

# 6: up again is a no-op
before=$(cat "$CDIR"/run/*.pid 2>/dev/null | sort)
if out2=$(bash "$CLUSTER" up "$CDIR" 2>"$DIR/up2.err") &&
	grep -q 'already up' "$DIR/up2.err" &&
	[[ $(tail -n 1 <<<"$out2") == "export SLURM_CONF=$CDIR/slurm.conf" ]] &&
	[[ $(cat "$CDIR"/run/*.pid 2>/dev/null | sort) == "$before" ]]; then
	ok "cluster.sh up again is idempotent"
else
	not_ok "cluster.sh up again is idempotent"
	diag <"$DIR/up2.err"
fi

# 7: status
check "cluster.sh status exits 0 with all daemons alive" \
	bash "$CLUSTER" status "$CDIR"

# 8, 9: down, and nothing it recorded is left alive
pids=$(cat "$CDIR"/run/*.pid 2>/dev/null)
if bash "$CLUSTER" down "$CDIR" 2>"$DIR/down.err"; then
	started=0
	ok "cluster.sh down"
else
	not_ok "cluster.sh down"
	diag <"$DIR/down.err"
fi
alive=
for p in $pids; do
	# A zombie waiting for init to reap it is not alive.
	if [[ -e /proc/$p ]] && [[ $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) != Z ]]; then
		alive+=" $p"
	fi
done
if [[ -n $pids && -z $alive ]]; then
	ok "no recorded daemon is alive after down"
else
	not_ok "no recorded daemon is alive after down (alive:${alive:- none}; recorded: ${pids:-none})"
fi


# make check runs the cluster tests in parallel: each one's ports (the
# controller's PORT and its nodes' PORT+184 to PORT+184+N-1, 24 nodes at most
# in check-scale) must not meet another's.  t0780 and t0785 once shared two.
overlap=$(for f in "$srcdir"/tests/*.t; do
              port=$(sed -n 's/^ *cluster_test \([0-9][0-9]*\)$/\1/p' "$f")
              [[ -n $port ]] || continue
              n=4; grep -q 'BENCHD_CLUSTER_NODES=' "$f" && n=24
              echo "${f##*/} $port $n"
          done | awk '
    { f[NR] = $1; c[NR] = $2; lo[NR] = $2 + 184; hi[NR] = $2 + 184 + $3 - 1 }
    END { for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++)
              if (c[i] == c[j] || (c[i] >= lo[j] && c[i] <= hi[j]) || (c[j] >= lo[i] && c[j] <= hi[i]) ||
                  (lo[i] <= hi[j] && lo[j] <= hi[i]))
                  printf " %s(%d)/%s(%d)", f[i], c[i], f[j], c[j] }')
if [[ -z $overlap ]]; then
	ok "the cluster tests' ports are disjoint"
else
	not_ok "the cluster tests' ports are disjoint:$overlap"
fi

((failed == 0))

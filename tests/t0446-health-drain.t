#!/bin/bash
# benchctl health --drain on the local Slurm test cluster (nodes n1..n4): a
# failed node is drained in Slurm with its first failed finding as the
# reason, exactly it; without --drain only said.  The node is found as a
# Slurm prolog finds it ($SLURMD_NODENAME, with --node-local), by the host
# name its benchd gives, or by the host of its address when it does not
# answer; one Slurm cannot name is not drained, said on standard error with
# exit 1.
. "${srcdir:-.}/tests/lib.sh"
BENCHD="$top_builddir/benchd"
"$BENCHD" --help | grep -q -- '--listen' || skip_all "benchd built without libmicrohttpd"
cluster_test 17277
pids=()
trap 'for p in "${pids[@]}"; do stop_pid "$p"; done; _cluster_cleanup' EXIT
jget() { /usr/bin/python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"; }
fixtures="$srcdir/tests/fixtures/sysfs"
# state NODE: Slurm's state of a node and its reason
state() { scontrol -o show node "$1" | sed -n 's/.* State=\([^ ]*\) .*/\1/p'; }
reason() { scontrol -o show node "$1" | sed -n 's/.* Reason=\(.*\) \[.*/\1/p'; }
resume() { scontrol update NodeName="$1" State=RESUME; }
# drained N1 N2...: those of the nodes Slurm has draining or drained
drained() { local k; for k; do [[ $(state "$k") == *DRAIN* ]] && echo "$k"; done; }
is "none of the four nodes is drained" "$(drained n1 n2 n3 n4)" ""

# 1. a prolog on n3 (this machine against the C4140: no GPUs, failed)
out=$(SLURMD_NODENAME=n3 "$BENCHCTL" health --system C4140 --node-local); rc=$?
is "without --drain: exit 7 (failed)" "$rc" 7
like "  says what it would drain, and why" "$out" "^would drain localhost: benchd health: gpu\.count: 0 GPUs, the system has 4"
like "  and how" "$out" "^\(--drain asks Slurm to drain it\)$"
is "  and drains nothing" "$(drained n1 n2 n3 n4)" ""
out=$(SLURMD_NODENAME=n3 "$BENCHCTL" health --system C4140 --node-local --drain); rc=$?
is "with --drain: exit 7" "$rc" 7
like "  says it drained n3" "$out" "^drained localhost \(Slurm node n3\): benchd health: gpu\.count: 0 GPUs"
like "  Slurm has n3 draining" "$(state n3)" "DRAIN"
like "  with the finding as the reason" "$(reason n3)" "^benchd health: gpu\.count: 0 GPUs, the system has 4"
is "  exactly n3" "$(drained n1 n2 n3 n4)" "n3"
resume n3
out=$(SLURMD_NODENAME=n2 "$BENCHCTL" health --system local --node-local --drain); rc=$?
is "a healthy node with --drain: exit 0" "$rc" 0
is "  nothing drained" "$(drained n1 n2 n3 n4)" ""

# 2. through benchd: n2's benchd serves a C4140 that lost a GPU (its host
# name n2), n1's a good one, n4's is down (named by its Slurm name)
port=$(free_port 19620)
t="$tmp/n2-tree"; cp -a "$fixtures/c4140" "$t"
rm "$t/sys/bus/pci/devices/0000:af:00.0"; rm -rf "$t/proc/driver/nvidia/gpus/0000:af:00.0"
echo n2 > "$t/proc/sys/kernel/hostname"
"$BENCHD" -f --listen "127.0.0.1:$port" --token-file "$tmp/token" --state-dir "$tmp/state-1" --sysfs-root "$t" 2>/dev/null &
pids+=($!)
good=$(free_port $((port + 1)))
"$BENCHD" -f --listen "127.0.0.1:$good" --token-file "$tmp/token" --state-dir "$tmp/state-2" --sysfs-root "$fixtures/c4140" 2>/dev/null &
pids+=($!)
wait_until 10 curl -sf "http://127.0.0.1:$port/v1/health"
wait_until 10 curl -sf "http://127.0.0.1:$good/v1/health"
down=n4:$(free_port $((good + 1)))
out=$("$BENCHCTL" health --system C4140 --nodes "127.0.0.1:$good,127.0.0.1:$port,$down" --timeout 2000 --drain --json); rc=$?
is "three nodes, one bad and one down, --drain: exit 7" "$rc" 7
is "  the bad one drained as n2 (its benchd's host name), the down one as n4 (its address)" \
   "$(jget '[(n["verdict"], n.get("drain", {}).get("slurm_node"), n.get("drain", {}).get("drained")) for n in j["nodes"]]' <<<"$out")" \
   "[('ok', None, None), ('failed', 'n2', True), ('failed', 'n4', True)]"
like "  n2 for its GPU" "$(reason n2)" "^benchd health: gpu\.count: 3 GPUs, the system has 4"
like "  n4 for not answering" "$(reason n4)" "^benchd health: node\.reach: its benchd did not answer"
is "  those two, n1 and n3 not" "$(drained n1 n2 n3 n4 | paste -sd' ')" "n2 n4"
resume n2; resume n4

# 3. a node Slurm cannot name: said, exit 1, the others still drained
out=$("$BENCHCTL" health --system C4140 --nodes "127.0.0.1:$port,127.0.0.9:$((good + 2))" --timeout 2000 --drain 2>"$tmp/err"); rc=$?
is "a failed node Slurm cannot name: exit 1" "$rc" 1
like "  named on standard error" "$(cat "$tmp/err")" "cannot drain 127\.0\.0\.9:[0-9]+: no Slurm node is 127\.0\.0\.9"
like "  the other drained" "$out" "^drained 127\.0\.0\.1:$port \(Slurm node n2\)"
resume n2

out=$("$BENCHCTL" health --system C4140 --sysfs-root "$t" --drain 2>&1); rc=$?
is "--drain with --sysfs-root: exit 2" "$rc" 2
done_testing

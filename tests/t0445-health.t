#!/bin/bash
# benchctl health: each node's inventory (its benchd on a recorded sysfs
# tree) held against its system.  The recorded DSS8440, C4140 and p3dn are
# ok against their own systems; each made wrong in one way is named by the
# right check (a GPU gone, the InfiniBand adapter gone, a GPU's link trained
# down to x8, a NUMA node offline, the EFA device down); a node whose benchd
# does not answer is failed, not a hang; the exit status is the worst
# verdict's; JSON for tools.
. "${srcdir:-.}/tests/lib.sh"
BENCHD="$top_builddir/benchd"
"$BENCHD" --help | grep -q -- '--listen' || skip_all "benchd built without libmicrohttpd"
own_servers
jget() { /usr/bin/python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"; }
fixtures="$srcdir/tests/fixtures/sysfs"

base=$(free_port 19560)
next_port=$base
# serve ROOT: a benchd on it; its node name in $node
serve() {
    local port
    port=$(free_port "$next_port")
    next_port=$((port + 1))
    "$BENCHD" -f --listen "127.0.0.1:$port" --token-file "$tmp/token" --sysfs-root "$1" 2>/dev/null &
    pids+=($!)
    wait_until 10 curl -sf "http://127.0.0.1:$port/v1/health"
    node="127.0.0.1:$port"
}
# a copy of a recorded tree to make wrong
tree() { rm -rf "$tmp/$2"; cp -a "$fixtures/$1" "$tmp/$2"; echo "$tmp/$2"; }

# 1. the recorded machines against their own systems
for m in dss8440:DSS8440 c4140:C4140 p3dn:p3dn; do
    serve "$fixtures/${m%%:*}"
    out=$("$BENCHCTL" health --system "${m#*:}" --nodes "$node"); rc=$?
    is "${m#*:}'s recorded node against its system: exit 0" "$rc" 0
    like "  ok, with its checks counted" "$out" "^$node +ok +[^ ]+ +[0-9]+ +0$"
    like "  and the system's verdict" "$out" "^${m#*:}: ok \(1 node: 1 ok, 0 degraded, 0 failed\)$"
done

# 2. each made wrong in one way
t=$(tree c4140 gpu-gone)
rm "$t/sys/bus/pci/devices/0000:af:00.0"
rm -rf "$t/proc/driver/nvidia/gpus/0000:af:00.0"
serve "$t"; gpu_gone=$node
out=$("$BENCHCTL" health --system C4140 --nodes "$node"); rc=$?
is "a GPU gone: exit 7 (failed)" "$rc" 7
like "  named: the count" "$out" "^  failed +gpu\.count +3 GPUs, the system has 4"
like "  with what to do" "$out" "-> drain it; reseat or replace the GPU"

t=$(tree c4140 nic-gone)
rm -rf "$t/sys/class/infiniband/mlx5_0" "$t/sys/class/net/ib0"
serve "$t"
out=$("$BENCHCTL" health --system C4140 --nodes "$node"); rc=$?
is "the InfiniBand adapter gone: exit 7" "$rc" 7
like "  named" "$out" "^  failed +nic\.present +no mlx5_0 \(infiniband\): the node does not see the adapter"

t=$(tree dss8440 link-x8)
dev=$(readlink -f "$t/sys/bus/pci/devices/$(ls "$t/proc/driver/nvidia/gpus" | sed -n 3p)")
echo 8 > "$dev/current_link_width"
serve "$t"
out=$("$BENCHCTL" health --system DSS8440 --nodes "$node"); rc=$?
is "a GPU's link trained down: exit 6 (degraded)" "$rc" 6
like "  named: GPU 2 at x8 of x16" "$out" "^  degraded +pcie\.width +GPU 2 \([0-9a-f:.]+\) trained to x8 of x16"
like "  reseat it" "$out" "-> reseat the card at the next drain"
is "  the only finding" "$(grep -c '^  \(degraded\|failed\) ' <<<"$out")" 1

t=$(tree c4140 numa-off)
rm -rf "$t/sys/devices/system/node/node1"
echo 0 > "$t/sys/devices/system/node/online"
echo 0 > "$t/sys/devices/system/node/has_cpu"
echo 0 > "$t/sys/devices/system/node/has_memory"
serve "$t"
out=$("$BENCHCTL" health --system C4140 --nodes "$node"); rc=$?
is "a NUMA node offline: exit 7" "$rc" 7
like "  named" "$out" "^  failed +numa\.nodes +1 NUMA node, the system has 2 sockets"

t=$(tree p3dn efa-down)
for f in "$t"/sys/class/infiniband/rdmap16s27/ports/1/state; do echo "1: DOWN" > "$f"; done
serve "$t"
out=$("$BENCHCTL" health --system p3dn --nodes "$node"); rc=$?
is "the EFA device down: exit 7" "$rc" 7
like "  named" "$out" "^  failed +nic\.link +rdmap16s27 link DOWN"

# 3. several nodes: one bad, one down, one good; JSON
serve "$fixtures/c4140"; good=$node
down=127.0.0.1:$(free_port $((next_port + 50)))
start=$SECONDS
out=$("$BENCHCTL" health --system C4140 --nodes "$good,$gpu_gone,$down" --timeout 1000 --json); rc=$?
is "three nodes, one bad and one down: exit 7" "$rc" 7
ok "  no hang on the node that is down" [ $((SECONDS - start)) -lt 10 ]
is "  a verdict per node, the cluster's the worst" \
   "$(jget 'j["verdict"], [(n["verdict"], [f["check"] for f in n["findings"]]) for n in j["nodes"]]' <<<"$out")" \
   "failed [('ok', []), ('failed', ['gpu.count']), ('failed', ['node.reach'])]"
is "  each finding with its evidence and action" \
   "$(jget 'sorted(j["nodes"][1]["findings"][0].keys())' <<<"$out")" "['action', 'check', 'evidence', 'level']"

# 4. usage and configuration errors
out=$("$BENCHCTL" health --nodes "$good" 2>&1); rc=$?
is "no --system: exit 2" "$rc" 2
like "  says why" "$out" "missing --system SYSTEM"
out=$("$BENCHCTL" health --system nosuch --nodes "$good" 2>&1); rc=$?
is "an unknown system: exit 3" "$rc" 3
out=$("$BENCHCTL" health --system 4xC4140 2>&1); rc=$?
is "a system of several nodes that names none: exit 3" "$rc" 3
done_testing

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
    "$BENCHD" -f --listen "127.0.0.1:$port" --token-file "$tmp/token" --state-dir "$tmp/state-$port" \
        --sysfs-root "$1" 2>/dev/null &
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

t=$(tree dss8440 no-docker)
rm "$t/usr/bin/docker"
serve "$t"
out=$("$BENCHCTL" health --system DSS8440 --nodes "$node"); rc=$?
is "the container runtime gone (DSS8440 runs docker): exit 6 (degraded: benchd looks in the usual places only)" "$rc" 6
like "  named" "$out" "^  degraded +sw\.container +no docker where benchd looks \(/usr/bin, /usr/local/bin, \.\.\.\): the system runs its trials in docker containers"

# the software a system names (software.*), against the recorded driver 470.199.02
sw() { "$BENCHCTL" health --system DSS8440 --sysfs-root "$fixtures/dss8440" "$@"; }
out=$(sw --set software.nvidia_driver=470.199 --set 'software.mpi=>=4'); rc=$?
is "the driver the system names, at its precision: the driver ok, no MPI found: exit 6" "$rc" 6
unlike "  the driver passes" "$out" "sw\.nvidia_driver"
like "  the MPI the system names and the node lacks: degraded (modules may hold it)" "$out" "^  degraded +sw\.mpi +no MPI found where benchd looks, the system names >=4"
out=$(sw --set software.nvidia_driver=535.104.05); rc=$?
is "another driver than the one named: exit 6 (degraded)" "$rc" 6
like "  named, with both versions" "$out" "^  degraded +sw\.nvidia_driver +NVIDIA driver 470\.199\.02, the system names 535\.104\.05"
out=$(sw --set 'software.nvidia_driver=>= 535'); rc=$?
is "a driver under the minimum: exit 7 (failed)" "$rc" 7
like "  named" "$out" "^  failed +sw\.nvidia_driver +NVIDIA driver 470\.199\.02, the system names >= 535"
out=$(sw --set software.cuda=twelve 2>&1); rc=$?
is "a version that is not one: exit 3" "$rc" 3
like "  says how one is written" "$out" "software\.cuda.*a version: 12\.2 \(that version\), >=12\.2 \(at least\)"

# 3. several nodes: one bad, one down, one good; JSON
serve "$fixtures/c4140"; good=$node
down=127.0.0.1:$(free_port $((next_port + 50)))
start=$SECONDS
out=$("$BENCHCTL" health --system C4140 --nodes "$good,$gpu_gone,$down" --timeout 1000 --json); rc=$?
is "three nodes, one bad and one down: exit 7" "$rc" 7
check "  no hang on the node that is down" [ $((SECONDS - start)) -lt 10 ]
is "  a verdict per node, the cluster's the worst" \
   "$(jget 'j["verdict"], [(n["verdict"], [f["check"] for f in n["findings"]]) for n in j["nodes"]]' <<<"$out")" \
   "failed [('ok', []), ('failed', ['gpu.count']), ('failed', ['node.reach'])]"
is "  each finding with its evidence and action" \
   "$(jget 'sorted(j["nodes"][1]["findings"][0].keys())' <<<"$out")" "['action', 'check', 'evidence', 'level']"

# each node's benchd given its verdict (POST /v1/health/report): served
# back and as metrics, kept across a restart
out=$("$BENCHCTL" health --system C4140 --nodes "$good,$gpu_gone,$down" --timeout 1000 --token-file "$tmp/token" \
      2>"$tmp/err"); rc=$?
is "the verdicts given to the nodes: the same exit" "$rc" 7
is "  nothing said: each node that answered took its verdict" "$(cat "$tmp/err")" ""
is "  the bad node's benchd serves it" \
   "$(curl -sf "http://$gpu_gone/v1/health/report" | jget 'j["system"], j["verdict"], j["checks"] > 5, [(f["level"], f["check"]) for f in j["findings"]]')" \
   "C4140 failed True [('failed', 'gpu.count')]"
metrics=$(curl -sf "http://$gpu_gone/metrics")
like "  as metrics: its verdict" "$metrics" '^benchd_health_verdict\{system="C4140"\} 2$'
like "  its findings by level and check" "$metrics" '^benchd_health_findings\{level="failed",check="gpu\.count"\} 1$'
like "  when" "$metrics" '^benchd_health_report_time_seconds [0-9]{10}'
like "  the good node's: ok" "$(curl -sf "http://$good/metrics")" '^benchd_health_verdict\{system="C4140"\} 0$'
printf '%s' wrongtoken > "$tmp/wrong"
out=$("$BENCHCTL" health --system C4140 --nodes "$good" --token-file "$tmp/wrong" 2>&1 >/dev/null); rc=$?
is "a token benchd refuses: the verdict stands (exit 0)" "$rc" 0
like "  said" "$out" "health: $good did not take its verdict: "
out=$(BENCHD_TOKEN= "$BENCHCTL" health --system C4140 --nodes "$good" --set benchd.token_file="$tmp/nosuch" 2>&1 >/dev/null); rc=$?
is "no token: exit 0" "$rc" 0
like "  said" "$out" "health: the nodes not given their verdicts: cannot read the token file '$tmp/nosuch'"
out=$("$BENCHCTL" health --system C4140 --nodes "$good" --no-report --set benchd.token_file="$tmp/nosuch" 2>&1 >/dev/null); rc=$?
is "--no-report: nothing given, nothing said" "$rc:$out" "0:"
bad=$(curl -s -X POST -H "Authorization: Bearer $(cat "$tmp/token")" \
      --data '{"system":"x","verdict":"ok","checks":1,"trainer":{"benchmark":"b","unit":"u","rate":-1}}' \
      "http://$good/v1/health/report")
like "a report benchd refuses names the field" "$bad" "trainer: 'rate' must be a number from 0 to"
bad=$(curl -s -X POST -H "Authorization: Bearer $(cat "$tmp/token")" \
      --data '{"system":"x","verdict":"ok","checks":1,"trainer":{"benchmark":"b","unit":"u","rate":1,"rate":2}}' \
      "http://$good/v1/health/report")
like "  a field twice, inside an object too" "$bad" "trainer: field 'rate' given twice"
is "  and one without the token: 401" \
   "$(curl -s -o /dev/null -w '%{http_code}' -X POST --data '{"system":"x","verdict":"ok","checks":1}' "http://$good/v1/health/report")" 401
# kept in the state directory: a benchd started again on it serves it
kport=$(free_port 19720)
mkdir -p "$tmp/state-keep"
keep_benchd() {
    "$BENCHD" -f --listen "127.0.0.1:$kport" --token-file "$tmp/token" --state-dir "$tmp/state-keep" \
        --sysfs-root "$fixtures/c4140" 2>/dev/null &
    kpid=$!
    pids+=($kpid)
    wait_until 10 curl -sf "http://127.0.0.1:$kport/v1/health"
}
keep_benchd
"$BENCHCTL" health --system C4140 --nodes "127.0.0.1:$kport" --token-file "$tmp/token" >/dev/null 2>&1
stop_pid "$kpid"
keep_benchd
is "  a benchd started again serves the last verdict" \
   "$(curl -sf "http://127.0.0.1:$kport/v1/health/report" | jget 'j["system"], j["verdict"]')" "C4140 ok"
out=$("$BENCHCTL" health --system C4140 --nodes "$good,$gpu_gone,$down" --timeout 1000 --html "$tmp/h.html"); rc=$?
is "--html: the same verdict" "$rc" 7
is "  the page: a row per node, the findings, what --drain would do; nothing fetched, no script" \
   "$(python3 "$srcdir/tests/html-check.py" "$tmp/h.html" "<td>$good</td><td>ok</td>" "<td>$down</td><td>failed</td>" \
      "<td>gpu.count</td>" "<td>node.reach</td>" "would drain (--drain)" "C4140: failed (3 nodes: 1 ok, 0 degraded, 2 failed)")" \
   "0 no-script [] [] True True True True True True"
out=$("$BENCHCTL" health --system C4140 --nodes "$good" --html "$tmp/nosuch/h.html" 2>&1); rc=$?
is "--html in a directory that is not there: exit 2, before any check" "$rc" 2
like "  names it" "$out" "--html $tmp/nosuch/h.html: no directory $tmp/nosuch"

# 4. the signals: NVML's answers (recorded: tests/fixtures/nvml/, read by
# benchd's own NVML code through tests/helper/libnvidia-ml.so.1) and the
# NICs' error counters, judged by their thresholds
NVML_LIB="$top_builddir/tests/helper/libnvidia-ml.so.1"
answers="$srcdir/tests/fixtures/nvml/c4140.json"
# answers FILE PYTHON: a copy of the C4140's answers changed by PYTHON (g: the GPUs)
answers() {
    /usr/bin/python3 - "$answers" "$tmp/$1.json" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); g = j["gpus"]
exec(sys.argv[3])
json.dump(j, open(sys.argv[2], "w"))
PY
    echo "$tmp/$1.json"
}
# local ANSWERS [TREE]: benchctl health of the recorded C4140 in-process
local_health() {
    NVML_RECORDED=$1 "$BENCHCTL" health --system C4140 --sysfs-root "${2:-$fixtures/c4140}" --nvml-library "$NVML_LIB" "${@:3}"
}
out=$(local_health "$answers"); rc=$?
is "the recorded C4140 with its NVML answers: exit 0" "$rc" 0
like "  the signals were checked (more checks than the shape's)" "$out" "^[^ ]*c4140 +ok +c4140-n01 +([5-9][0-9]) +0$"
unlike "  no note that signals are missing" "$out" "no GPU signals"
# the recorder (what a lent GPU's NVML answers, through benchd's NVML code)
# writes what the recorded library answers from: recorded again, the same
NVML_RECORDED=$answers "$top_builddir/tests/helper/nvml-record" "$NVML_LIB" >"$tmp/again.json"; rc=$?
is "nvml-record records the recorded answers: exit 0" "$rc" 0
is "  and they answer the same" "$(local_health "$tmp/again.json" "" --json)" "$(local_health "$answers" "" --json)"
out=$("$BENCHCTL" health --system C4140 --sysfs-root "$fixtures/c4140"); rc=$?
is "without NVML: exit 0" "$rc" 0
like "  and a note saying why the GPUs' signals are not judged" "$out" "^  note +no GPU signals: "

# wrong NAME PYTHON RC CHECK EVIDENCE: the answers made wrong in one way are named
wrong() {
    local f
    f=$(answers "$1" "$2")
    out=$(local_health "$f"); rc=$?
    is "$1: exit $3" "$rc" "$3"
    [ "$3" = 0 ] || like "  named by $4" "$out" "^  (failed|degraded) +$4 +$5"
    is "  the only finding" "$(grep -c '^  \(degraded\|failed\) ' <<<"$out")" "$([ "$3" = 0 ] && echo 0 || echo 1)"
}
wrong "an uncorrected ECC error now" 'g[2]["ecc"]["volatile"]["uncorrected"] = 1; g[2]["ecc"]["aggregate"]["uncorrected"] = 1' \
    7 gpu.ecc "GPU 2 \(0000:86:00.0\): 1 uncorrected ECC error since the driver loaded"
wrong "an uncorrected ECC error in the past" 'g[0]["ecc"]["aggregate"]["uncorrected"] = 3' \
    6 gpu.ecc "GPU 0 .*: 3 uncorrected ECC errors in its history"
wrong "a page waiting to be retired" 'g[1]["retired_pages"].update(single_bit=4, pending=True)' \
    6 gpu.retired "GPU 1 .*: a page waits to be retired \(4 retired\)"
wrong "60 retired pages" 'g[3]["retired_pages"].update(single_bit=41, double_bit=19)' \
    7 gpu.retired "GPU 3 .*: 60 retired pages \(41 single-bit, 19 double-bit\)"
wrong "a failed row remapping" 'g[0]["remapped_rows"] = dict(correctable=0, uncorrectable=1, pending=False, failure=True)' \
    7 gpu.remap "GPU 0 .*: a row remapping failed"
wrong "a hardware thermal slowdown" 'g[3]["clocks_event_reasons"] = 0x40' \
    6 gpu.throttle "GPU 3 .* slowed down: hardware thermal slowdown"
wrong "a hot GPU" 'g[1]["temperature"] = 84' \
    6 gpu.temp "GPU 1 .* at 84 C, its slowdown temperature is 87 C"
wrong "a power cap" 'g[2]["power_limit"] = 250000' \
    6 gpu.power "GPU 2 .* power capped at 250 W of its default 300 W"
wrong "a busy GPU at its power cap is fine" 'g[2]["clocks_event_reasons"] = 0x4; g[2]["temperature"] = 70' 0
t=$(tree c4140 symbol-errors)
echo 5000 > "$t/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error"
out=$(local_health "$answers" "$t"); rc=$?
is "symbol errors on the InfiniBand port: exit 6" "$rc" 6
like "  named, per day up" "$out" "^  degraded +nic\.errors +mlx5_0: symbol_error 5000 in 10\.0 days up \(symbol errors"
t=$(tree c4140 link-downed)
echo 1 > "$t/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed"
echo 3 > "$t/sys/class/net/ib0/statistics/rx_crc_errors"
out=$(local_health "$answers" "$t"); rc=$?
is "the link went down once since boot: exit 6" "$rc" 6
like "  named" "$out" "^  degraded +nic\.errors +mlx5_0: link_downed 1 in 10\.0 days up \(link went down; 1 since boot\)"
is "  a few CRC errors in ten days are not" "$(grep -c 'rx_crc_errors' <<<"$out")" 0

# through benchd: its /v1/signals read by the same code, one bad node among good ones
serve_nvml() {
    local port
    port=$(free_port "$next_port")
    next_port=$((port + 1))
    NVML_RECORDED=$2 "$BENCHD" -f --listen "127.0.0.1:$port" --token-file "$tmp/token" --state-dir "$tmp/state-$port" \
        --sysfs-root "$1" \
        --nvml-library "$NVML_LIB" 2>/dev/null &
    pids+=($!)
    wait_until 10 curl -sf "http://127.0.0.1:$port/v1/health"
    node="127.0.0.1:$port"
}
serve_nvml "$fixtures/c4140" "$answers"; good_nvml=$node
serve_nvml "$fixtures/c4140" "$(answers ecc-now 'g[1]["ecc"]["volatile"]["uncorrected"] = 2')"; bad_nvml=$node
like "benchd serves the signals" "$(curl -sf "http://$good_nvml/v1/signals")" '"retired_pages":\{"single_bit":0'
like "  and exports them as metrics" "$(curl -sf "http://$bad_nvml/metrics")" \
    'benchd_gpu_ecc_errors_total\{gpu="1",type="uncorrected",counter="volatile"\} 2'
like "  the NICs' error counters too" "$(curl -sf "http://$bad_nvml/metrics")" \
    'benchd_nic_errors_total\{device="mlx5_0",counter="symbol_error"\} 0'
out=$("$BENCHCTL" health --system C4140 --nodes "$good_nvml,$bad_nvml" --json); rc=$?
is "two nodes through benchd, one with ECC errors: exit 7" "$rc" 7
is "  that one failed by gpu.ecc, the other ok" \
   "$(jget '[(n["verdict"], [f["check"] for f in n["findings"]]) for n in j["nodes"]]' <<<"$out")" \
   "[('ok', []), ('failed', ['gpu.ecc'])]"

# the prolog mode: this node in-process, in seconds
start=$(date +%s%N)
out=$("$BENCHCTL" health --system local --node-local); rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
is "--node-local on this machine against local: exit 0" "$rc" 0
check "  in under 5 s (${ms} ms)" [ "$ms" -lt 5000 ]
like "  this node, by its host name" "$out" "^localhost +ok +$(hostname | cut -c1-20)"

# 5. usage and configuration errors
out=$("$BENCHCTL" health --nodes "$good" 2>&1); rc=$?
is "no --system: exit 2" "$rc" 2
like "  says why" "$out" "missing --system SYSTEM"
out=$("$BENCHCTL" health --system nosuch --nodes "$good" 2>&1); rc=$?
is "an unknown system: exit 3" "$rc" 3
out=$("$BENCHCTL" health --system 4xC4140 --level shape 2>&1); rc=$?
is "a system of several nodes that names none, --level shape: exit 3" "$rc" 3
# node_groups, the key health's allreduce runs are made with
out=$("$BENCHCTL" show local --set node_groups=1+1 2>&1); rc=$?
is "node_groups naming a node twice in a round: exit 3" "$rc" 3
like "  says how it is written" "$out" "'node_groups': '1\+1' is not off, or rounds of node groups by their places"
out=$("$BENCHCTL" render --system local allreduce --set node_groups=1+2 2>&1); rc=$?
is "node_groups beyond the system's nodes: exit 3" "$rc" 3
like "  names the node and the count" "$out" "'node_groups' '1\+2': node 2: the run has 1 node"
out=$("$BENCHCTL" render --system local allreduce --set node_groups=1 --set tenants=2 2>&1); rc=$?
is "node_groups with tenants: exit 3" "$rc" 3
out=$("$BENCHCTL" render --system local allreduce --set 'node_groups=1;1' --run-id r1); rc=$?
is "two rounds of this node alone: rendered" "$rc" 0
like "  its rounds" "$out" '^ROUNDS=\("1" "1"\)$'
like "  the node by its host" "$out" "^NODE_NAMES=\(localhost\)$"
like "  each trial's ranks on its group's hosts" "$out" 'mpirun -np "\$GROUP_RANKS" -H "\$GROUP_HOSTS"'
out=$("$BENCHCTL" health --system local --level slow 2>&1); rc=$?
is "--level slow: exit 2" "$rc" 2
like "  says which there are" "$out" "--level slow: shape, quick or full"
out=$("$BENCHCTL" health --system local --node-local --nodes "$good" 2>&1); rc=$?
is "--node-local with --nodes: exit 2" "$rc" 2
like "  says why" "$out" "--nodes asks benchd on each node; --node-local reads one node here"
out=$("$BENCHCTL" health --system local --nvml-library "$NVML_LIB" 2>&1); rc=$?
is "--nvml-library without --node-local or --sysfs-root: exit 2" "$rc" 2
out=$("$BENCHCTL" health --system local --sysfs-root "$tmp/nosuch" 2>&1); rc=$?
is "--sysfs-root that is not a directory: exit 2" "$rc" 2
like "  names it" "$out" "--sysfs-root $tmp/nosuch: not a directory"
done_testing

#!/bin/bash
# benchctl health's allreduce checks, run for real: on the local Slurm test
# cluster (4xlocal: nodes n1..n4, 4 ranks each) one job of the allreduce
# workload whose trials are the node groups of the rounds (each node alone,
# then every pair, the round's groups at once); one node made slow (its
# slurmd, and so every rank it starts, confined to 10% of a CPU by the cpu
# controller) is named by its pairs while the others pass; the system's
# expectation judges against itself; a degraded node is not drained;
# --level full's trainer (a tiny SSD from a baselines file) on each node
# alone names the slow node against the nodes' median; a page.  And on
# local (mpirun, one node): the shape from benchd, the allreduce inside the
# node, the trainer against a target it misses and one it meets.  A node Slurm holds down is failed after --start-timeout, not
# waited for.
. "${srcdir:-.}/tests/lib.sh"
BENCHD="$top_builddir/benchd"
"$BENCHD" --help | grep -q -- '--listen' || skip_all "benchd built without libmicrohttpd"
[ -x "$top_builddir/benchd-allreduce" ] || skip_all "benchd-allreduce not built (no MPI)"
# a cgroup of the cpu controller to slow a node with (v1, or v2's cpu.max)
if [ -w /sys/fs/cgroup/cpu/cgroup.procs ]; then
    cgv=1 cgbase=/sys/fs/cgroup/cpu
elif [ -w /sys/fs/cgroup/cgroup.procs ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    cgv=2 cgbase=/sys/fs/cgroup
else
    skip_all "no writable cpu cgroup controller to slow a node with"
fi
cluster_test 17287
pids=()
slow_cg=
unslow() {
    [ -n "$slow_cg" ] || return 0
    local p
    for p in $(cat "$slow_cg/cgroup.procs" 2>/dev/null); do echo "$p" > "$cgbase/cgroup.procs" 2>/dev/null; done
    rmdir "$slow_cg" 2>/dev/null
    slow_cg=
}
trap 'unslow; for p in "${pids[@]}"; do stop_pid "$p"; done; _cluster_cleanup' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
jget() { /usr/bin/python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"; }
# small, and a wide tolerance: the emulated nodes share this machine's two
# cores with each other and with whatever else runs (make check, ASan), so
# a healthy pair's figure strays, by a fifth on a quiet machine and up to
# six times under load, and may be flagged as a slow link (perf.link); a
# node slow with each of its three partners (perf.pairs) is not noise: the
# slowed node is ten times slower in all of them
# the ranks busy-poll as Open MPI's do on a real node, where each rank has a
# core (4xlocal's ranks yield theirs: 16 share this machine's): a node held
# to 10% of a CPU then starves its ranks as a slow node would; yielding, its
# ranks need so little CPU that its pairs were not slow under CI's load
small=(--set health.allreduce_bytes=65536 --set health.tolerance=0.6 --set mpirun.mca.mpi_yield_when_idle=0)
# --level full's trainer: a tiny SSD throughput run from a baselines file
check "a small shapes dataset" "$BENCHCTL" dataset synth --images 64 --val-images 16 --seed 4 -o "$tmp/data"
cat > "$tmp/tiny.json" <<'EOF'
{
  "benchmarks": {
    "allreduce": { "workload": "allreduce", "targets": { "local": 1 } },
    "tiny-ssd": {
      "workload": "ssd",
      "set": { "batch_size": 2, "image_size": 64, "backbone": "resnet18", "width_mult": 0.25, "threads": 1 },
      "benchmark_steps": 3, "warmup_steps": 1,
      "targets": { "local": 1e9 }
    }
  }
}
EOF
full=(--level full --baselines "$tmp/tiny.json" --set paths.data="$tmp/data")

# 1. four healthy nodes, each with all three others (health.pair_rounds=3:
# with two partners, both pairs of a healthy node strayed as far under the
# sanitizers' load now and then; 24 nodes take the default two, t0990)
out=$("$BENCHCTL" health --system 4xlocal "${small[@]}" --set health.pair_rounds=3 2>"$tmp/err"); rc=$?
check "4xlocal, every node well: exit 0 (6 where a pair strayed: $rc)" [ "$rc" = 0 -o "$rc" = 6 ]
like "  the system's verdict over its 4 nodes" "$out" "^4xlocal: (ok|degraded) \(4 nodes: [0-9] ok, [0-9] degraded, 0 failed\)$"
# (under the sanitizers every rank runs several times slower and a healthy
# node's figures stray as far as the slowed node's: the verdict's timing is
# judged in the plain build, the sanitized run checks the code's memory)
if ldd "$BENCHCTL" "$top_builddir/benchd-allreduce" 2>/dev/null | grep -q libasan; then
    skip 1 "no node slow with each of its partners, none slow alone: timing not judged under the sanitizers"
else
    is "  no node slow with each of its partners, none slow alone" "$(grep -c 'perf\.pairs\|perf\.node' <<<"$out")" 0
fi
like "  says the inventories were not checked (no benchd.hosts)" "$out" "^note: inventories and signals not checked: "
like "  each node alone and with each other" "$out" "^  n3 +inside [0-9.]+ [kMG]B/s  with n[124] [0-9.]+ [kMG]B/s( slow)?, n[124] [0-9.]+ [kMG]B/s( slow)?, n[124] [0-9.]+ [kMG]B/s( slow)?$"
like "  the run's lines on standard error" "$(cat "$tmp/err")" "^run [0-9a-f-]+ submitted: Slurm job [0-9]+ .*, 10 trials"
id=$(sed -n 's/^allreduce of 65536 bytes (run \([0-9a-f-]*\)).*/\1/p' <<<"$out")
like "  a run of its own, kept like any" "$("$BENCHCTL" status "$id" 2>&1)" "allreduce on 4xlocal, completed"
like "  whose script has the rounds: each node alone, three of pairs" "$("$BENCHCTL" render --run "$id")" '^ROUNDS=\("1 2 3 4" "1\+4 2\+3" "1\+2 3\+4" "1\+3 2\+4"\)$'

# 2. n3 slow
slow_cg=$cgbase/benchd-t0447-$$
mkdir "$slow_cg"
if [ "$cgv" = 1 ]; then echo 10000 > "$slow_cg/cpu.cfs_quota_us"; else echo "10000 100000" > "$slow_cg/cpu.max"; fi
echo "$(cat "$BENCHD_CLUSTER_DIR/run/slurmd-n3.pid")" > "$slow_cg/cgroup.procs"
out=$("$BENCHCTL" health --system 4xlocal "${small[@]}" "${full[@]}" --json --html "$tmp/slow.html" 2>/dev/null); rc=$?
unslow
is "n3 slow: exit 6 (degraded)" "$rc" 6
# (alone, capped at 10% of a CPU, n3 is slower too, by less: its own
# allreduce is not asserted)
is "  n3, and only n3, named slow with each of its partners" \
   "$(jget '[(n["node"], [f["check"] for f in n["findings"] if f["check"] == "perf.pairs"]) for n in j["nodes"]]' <<<"$out")" \
   "[('n1', []), ('n2', []), ('n3', ['perf.pairs']), ('n4', [])]"
is "  each of n3's pairs slow" \
   "$(jget 'sorted((p["a"], p["b"]) for p in j["allreduce"]["pairs"] if p["slow"] and "n3" in (p["a"], p["b"]))' <<<"$out")" \
   "[('n1', 'n3'), ('n2', 'n3'), ('n3', 'n4')]"
like "  with the figures against the pairs' median" "$(jget '[f["evidence"] for n in j["nodes"] for f in n["findings"] if f["check"] == "perf.pairs"][0]' <<<"$out")" \
   "^slow with each of its 3 partners: n[124] [0-9.]+ [kMG]B/s, .*against [0-9.]+ [kMG]B/s \(the pairs' median\)"

is "  --level full: the trainer on each node alone, n3 and only n3 slow (against the nodes' median)" \
   "$(jget '[(n["node"], [f["check"] for f in n["findings"] if f["check"] == "perf.trainer"]) for n in j["nodes"]], j["trainer"]["benchmark"], j["trainer"]["reference_from"]' <<<"$out")" \
   "[('n1', []), ('n2', []), ('n3', ['perf.trainer']), ('n4', [])] tiny-ssd median"
printf '#   %s\n' "$(jget '[(n["name"], n["rate"]) for n in j["trainer"]["nodes"]]' <<<"$out")"
is "  the page: its plots (the pairs' map, the trainer's rates) parse, nothing fetched, no script" \
   "$(python3 "$srcdir/tests/html-check.py" "$tmp/slow.html" "<td>n3</td><td>degraded</td>" "perf.pairs" \
      "allreduce between two nodes" "perf.trainer" "trainer rate per node")" "2 no-script [] [] True True True True True"

# 3. the system's expectation: every pair below 1000 GB/s
out=$("$BENCHCTL" health --system 4xlocal "${small[@]}" --set health.pair_gbps=1000 --set health.pair_rounds=2 2>/dev/null); rc=$?
is "an expectation no pair meets: exit 6" "$rc" 6
is "  every node slow with each of its partners" "$(grep -c '^  degraded  perf\.pairs' <<<"$out")" 4
like "  against the expectation" "$out" "against 1000 GB/s \(expected\)"
like "  two rounds of pairs" "$out" "^  n1 +inside [^ ]+ [kMG]B/s  with n[0-9] [^,]*, n[0-9] [^,]*$"

# 4. a node down: the job cannot start; after --start-timeout it is
# cancelled, and the node Slurm holds down is named failed (not a hang).
# Its slurmd killed too: a node set down whose slurmd still answers comes
# back by itself on the test cluster (ReturnToService=2), maybe before
# health asks Slurm which nodes are down
wait_until 60 eval '[ -z "$(sinfo -h -N -t completing -o %N)" ]'
bash "$CLUSTER" kill-node n4 "$BENCHD_CLUSTER_DIR" >/dev/null 2>&1
scontrol update NodeName=n4 State=DOWN Reason=t0447-down
start=$SECONDS
out=$("$BENCHCTL" health --system 4xlocal "${small[@]}" --start-timeout 5 2>"$tmp/err"); rc=$?
bash "$CLUSTER" start-node n4 "$BENCHD_CLUSTER_DIR" >/dev/null 2>&1
scontrol update NodeName=n4 State=RESUME
is "n4 down: exit 7 (failed)" "$rc" 7
check "  no hang: $((SECONDS - start)) s" [ $((SECONDS - start)) -lt 60 ]
like "  n4 failed: Slurm holds it down" "$out" "^  failed +slurm\.state +Slurm holds it down \(t0447-down\)"
like "  the job said and cancelled" "$(cat "$tmp/err")" "waited 5 s for its nodes and did not start"
like "  the checks not run" "$out" "^allreduce checks: not run"

# 5. --level shape runs nothing
out=$("$BENCHCTL" health --system 4xlocal --level shape 2>&1); rc=$?
is "--level shape on a system that names no benchd: exit 3" "$rc" 3
like "  says why" "$out" "no benchd.hosts"

# 6. local: benchd on this machine for the shape, the allreduce inside it
port=$(free_port 19640)
"$BENCHD" -f --listen "127.0.0.1:$port" --token-file "$tmp/token" --state-dir "$tmp/state" 2>/dev/null &
pids+=($!)
wait_until 10 curl -sf "http://127.0.0.1:$port/v1/health"
out=$("$BENCHCTL" health --system local --port "$port" "${small[@]}" --json 2>/dev/null); rc=$?
is "local: exit 0" "$rc" 0
is "  one node, its shape checked and its allreduce run" \
   "$(jget '[(n["node"], n["verdict"], n["checks"] > 5) for n in j["nodes"]], [n["name"] for n in j["allreduce"]["nodes"]], j["allreduce"]["pairs"]' <<<"$out")" \
   "[('localhost', 'ok', True)] ['localhost'] []"
out=$("$BENCHCTL" health --system local --port "$port" "${small[@]}" "${full[@]}" 2>/dev/null); rc=$?
is "--level full on local against a target no CPU meets (1e9 images/s): exit 6" "$rc" 6
like "  the node slow against the system's target" "$out" \
     "^  degraded +perf\.trainer +tiny-ssd \(ssd\) [0-9.]+ images/s, 100% below 1e\+09 images/s \(the target for local\)"
like "  the trainer's line: its benchmark, run and device" "$out" "^trainer: tiny-ssd \(ssd, run [0-9a-f-]+, .+\) on each node alone, images/s; reference 1e\+09"
sed 's/"local": 1e9/"local": 1e-3/' "$tmp/tiny.json" > "$tmp/tiny-low.json"
out=$("$BENCHCTL" health --system local --port "$port" "${small[@]}" "${full[@]}" --baselines "$tmp/tiny-low.json" --json 2>/dev/null); rc=$?
is "against a target it meets: exit 0" "$rc" 0
is "  its rate over the target" "$(jget 'j["trainer"]["nodes"][0]["rate"] > 1e-3, j["trainer"]["nodes"][0]["slow"], j["nodes"][0]["verdict"]' <<<"$out")" "True False ok"
out=$("$BENCHCTL" health --system local --level full --baselines "$tmp/nosuch.json" 2>&1); rc=$?
is "a baselines file that is not there: exit 3, nothing run" "$rc" 3
out=$("$BENCHCTL" health --system local --baselines "$tmp/tiny.json" 2>&1); rc=$?
is "--baselines without --level full: exit 2" "$rc" 2
like "  says why" "$out" "--baselines goes with --level full"
done_testing

#!/bin/bash
# Where a step's time goes: a 2-rank SSD and a 2-rank Mask R-CNN run with
# the workload key trace (benchd-ssd/benchd-maskrcnn --trace): each rank
# writes its last steps as Chrome trace events; benchctl report merges a
# trial's ranks into one file that is valid trace JSON with a process per
# rank and every gradient bucket, and prints the breakdown, whose phases add
# up to the step within 5%.  A trace path that cannot be written: one line,
# nothing started.
. "${srcdir:-.}/tests/lib.sh"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
[ -x "$top_builddir/benchd-ssd" ] && [ -x "$top_builddir/benchd-maskrcnn" ] || skip_all "trainers not built"
own_runs
export OMP_WAIT_POLICY=passive
check "a small shapes dataset" "$BENCHCTL" dataset synth --images 32 --val-images 8 --size 128 --classes 3 \
      --seed 6 -o "$tmp/data" --quiet

check_trace() {   # check_trace WHAT: the last run's trial 1
    local what=$1 json file
    json=$("$BENCHCTL" report last --json)
    file=$(/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["trials"][0]["trace"]["file"])' <<<"$json")
    is "$what: the merged trace: valid trace JSON, a named process per rank, every rank's buckets" \
       "$(/usr/bin/python3 - "$file" "$tmp"/logs <<'PY'
import glob, json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
bad = []
if names != {0: "rank 0", 1: "rank 1"}:
    bad.append(("processes", names))
for e in ev:
    if e.get("ph") == "X" and not (isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0):
        bad.append(("event", e))
        break
for r in (0, 1):
    own = json.load(open(sys.argv[1][:-len(".json")] + ".rank%d.json" % r))["otherData"]
    seen = {e["args"]["bucket"] for e in ev if e["pid"] == r and e.get("cat") == "allreduce"}
    if own["buckets"] < 1 or seen != set(range(own["buckets"])):
        bad.append(("buckets of rank %d" % r, own["buckets"], sorted(seen)))
    if not any(e["pid"] == r and e["name"] == "step" for e in ev):
        bad.append(("no step of rank", r))
print(bad or "ok")
PY
)" ok
    is "$what: the breakdown adds up to the step within 5%" "$(/usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)[0]["trials"][0]["trace"]
parts = sum(v for k, v in t["ms"].items() if k != "other")
print("ok" if t["ranks"] == 2 and t["steps"] > 0 and abs(parts - t["step_ms"]) <= 0.05 * t["step_ms"]
      else (parts, t))' <<<"$json")" ok
    like "$what: report prints it" "$("$BENCHCTL" report last 2>&1)" \
         "^    step [0-9.]+ ms: data [0-9.]+%, forward [0-9.]+%, backward [0-9.]+%, allreduce wait [0-9.]+%, optimizer [0-9.]+%, other -?[0-9.]+%; allreduce [0-9.]+ ms a step, [0-9]+% of it hidden by the backward; slowest rank [01] \([0-9.]+ ms a step\)$"
}

out=$("$BENCHCTL" submit --system local ssd --data "$tmp/data" --logdir "$tmp/logs" --runs 1 --set ssd.epochs=1 \
      --set 'ssd.eval_epochs=[1]' --set ssd.image_size=64 --set ssd.batch_size=2 --set ssd.trace=true \
      --set ssd.bucket_mb=1 --wait --quiet 2>&1); rc=$?
is "SSD, 2 ranks, traced: exit 0" "$rc" 0
check_trace "SSD"

out=$("$BENCHCTL" submit --system local maskrcnn --data "$tmp/data" --logdir "$tmp/logs" --runs 1 \
      --set maskrcnn.max_iter=4 --set 'maskrcnn.eval_iters=[4]' --set 'maskrcnn.decay_steps=[3]' \
      --set maskrcnn.warmup_iters=1 --set maskrcnn.trace=true --set maskrcnn.trace_steps=3 --wait --quiet 2>&1); rc=$?
is "Mask R-CNN, 2 ranks, traced: exit 0" "$rc" 0
check_trace "Mask R-CNN"
like "  the ring kept the last 3 steps" "$("$BENCHCTL" report last 2>&1)" "trace of trial 1 \(2 ranks, 3 steps kept\)"

err=$("$top_builddir/benchd-ssd" --data "$tmp/data" --trace "$tmp/no/such/dir/t" 2>&1); rc=$?
is "a trace that cannot be written: exit 2" "$rc" 2
is "  one line naming it, before anything ran" "$err" \
   "benchd-ssd: rank 0: --trace: cannot write '$tmp/no/such/dir/t.rank0.json': No such file or directory"
done_testing

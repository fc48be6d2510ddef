#!/bin/bash
# benchctl sweep on the 'local' system: the cartesian product of settings as
# one recorded group of runs, one cell at a time.  SSD throughput over ranks
# 1,2 x batch 2,4: the table's numbers recomputed from each trial's JSON
# result (their observations), speedup and efficiency from those; a cell
# made to fail (an injected NaN) shows NaN and no number; the learning-rate
# rule (Mask R-CNN's linear scaling, shown by --dry-run); one-line errors
# before anything runs; --resume reruns nothing done; --cancel stops the
# running cell and the rest; report --html writes a page of well-formed SVG.
. "${srcdir:-.}/tests/lib.sh"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
[ -x "$top_builddir/benchd-ssd" ] || skip_all "benchd-ssd not built (needs MPI and the COCO data pipeline)"
own_runs
export OMP_WAIT_POLICY=passive
logs="$tmp/logs"
check "a small shapes dataset" "$BENCHCTL" dataset synth --images 64 --val-images 8 --seed 2 -o "$tmp/data"
common=(--system local --data "$tmp/data" --logdir "$logs")

# 1. errors, before anything runs or is recorded
err=$("$BENCHCTL" sweep "${common[@]}" ssd --set rnaks=1,2 2>&1); rc=$?
is "unknown sweep key: exit 3" "$rc" 3
like "  one line naming the key" "$err" "^benchctl: unknown sweep key 'rnaks': not ranks, nodes, batch_size, precision"
is "  on one line" "$(printf '%s\n' "$err" | wc -l)" 1
err=$("$BENCHCTL" sweep "${common[@]}" ssd --set ranks=1,4 2>&1); rc=$?
is "ranks beyond the system: exit 3" "$rc" 3
like "  saying how many nodes it needs" "$err" "^benchctl: ranks=4 needs 2 nodes of 2; system local has 1$"
err=$("$BENCHCTL" sweep "${common[@]}" allreduce --set batch_size=2,4 2>&1); rc=$?
is "batch_size of allreduce: exit 3" "$rc" 3
like "  allreduce has no batch" "$err" "sweep key 'batch_size': allreduce has no batch"
err=$("$BENCHCTL" sweep "${common[@]}" ssd --set ranks=1,2 --set ssd.batch_size=0 2>&1); rc=$?
is "a value the schema refuses: exit 3" "$rc" 3
like "  named by the system loader" "$err" "batch_size"
err=$("$BENCHCTL" sweep "${common[@]}" ssd --set 'ranks=1,,2' 2>&1); rc=$?
is "an empty value: exit 3" "$rc" 3
err=$("$BENCHCTL" sweep --resume sw-nonesuch 2>&1); rc=$?
is "resume of an unknown sweep: exit 1" "$rc" 1
like "  unknown sweep" "$err" "unknown sweep 'sw-nonesuch'"
err=$("$BENCHCTL" sweep "${common[@]}" ssd --mode fast --set ranks=1 2>&1); rc=$?
is "a bad --mode: exit 2" "$rc" 2
is "nothing was recorded" "$(ls "$BENCHD_HOME/runs" 2>/dev/null | wc -l)" 0

# 2. the learning-rate rule: Mask R-CNN scales linearly from the system's global batch 4
out=$("$BENCHCTL" sweep "${common[@]}" maskrcnn --set ranks=2 --set batch_size=2,4 --mode time-to-train --dry-run 2>&1)
like "dry run: the rule" "$out" "learning rate: linear scaling \(Goyal et al\.\) from the system's global batch 4 at lr 0.02"
like "  batch 2 x 2 ranks = 4: the system's own lr" "$out" "^cell 1: batch_size=2: .*--set maskrcnn.ims_per_batch=4"
unlike "  (no lr change at the reference batch)" "$(grep '^cell 1' <<<"$out")" "maskrcnn.lr="
like "  batch 4 x 2 ranks = 8: lr x2, warmup and schedule /2" "$(grep '^cell 2' <<<"$out")" \
     "maskrcnn.ims_per_batch=8 .*maskrcnn.lr=0.04 --set maskrcnn.warmup_iters=50 --set maskrcnn.max_iter=750 --set maskrcnn.decay_steps=600"
out=$("$BENCHCTL" sweep "${common[@]}" maskrcnn --set batch_size=4 --set lr=0.01 --dry-run 2>&1)
like "a pinned lr is not scaled" "$out" "learning rate: pinned"
unlike "  no lr set but the user's" "$out" "maskrcnn.lr=0.0[^1]"
out=$("$BENCHCTL" sweep "${common[@]}" ssd --set batch_size=2 --dry-run 2>&1)
like "SSD: the MLPerf rule in the trainer" "$out" "learning rate: MLPerf SSD rule, in the trainer"
like "  throughput mode's steps" "$out" "ssd.benchmark_steps=20 --set ssd.warmup_steps=5"
# the README's example: one GPU of a node, one node, four; mlperf_linear's
# warmup (an increment per iteration) scaled with the rate and the warmup
# iterations, so that it starts where the system's does (at 0: 625 x 0.000192 = 0.12)
out=$("$BENCHCTL" sweep --system 4xC4140 maskrcnn --set ranks=1,4,16 --set precision=fp32,amp --set batch_size=2,4 \
      --dry-run 2>&1); rc=$?
is "README's sweep on 4xC4140 (dry run): exit 0" "$rc" 0
is "  12 cells" "$(grep -c '^cell ' <<<"$out")" 12
like "  one rank: one GPU of one node" "$out" "^cell 1: ranks=1 precision=fp32 batch_size=2: --set nodes=1 --set ranks_per_node=1 "
is "  every cell's warmup starts at 0, as the system's (iterations x increment = rate)" "$(grep '^cell' <<<"$out" |
    python3 -c '
import re, sys
bad = []
for line in sys.stdin:
    v = dict(re.findall(r"maskrcnn\.(lr|warmup_iters|warmup_factor)=([0-9.e+-]+)", line))
    if abs(float(v["warmup_iters"]) * float(v["warmup_factor"]) - float(v["lr"])) > 1e-9 * float(v["lr"]):
        bad.append(line.split(":")[0])
print(bad or "ok")')" ok
out=$("$BENCHCTL" render --system 4xC4140 maskrcnn --set nodes=1 --set ranks_per_node=1 2>&1)
like "  a node's first GPU asked of Slurm, not all four" "$out" "^#SBATCH --gres=gpu:1$"
is "dry runs record nothing" "$(ls "$BENCHD_HOME/runs" 2>/dev/null | wc -l)" 0

# 3. SSD throughput: ranks 1,2 x batch 2,4
out=$(timeout 600 "$BENCHCTL" sweep "${common[@]}" ssd --set ranks=1,2 --set batch_size=2,4 --set ssd.image_size=64 \
      --steps 4 --warmup 1 2>&1); rc=$?
is "sweep exits 0" "$rc" 0
sw=$(sed -n 's/^sweep \(sw-[^:]*\): ssd on local.*/\1/p' <<<"$out" | head -1)
like "a sweep id" "$sw" "^sw-[0-9]{8}-[0-9]{6}-[0-9a-f]{4}$"
like "four cells, one run each" "$(grep -c '^cell [1-4]/4' <<<"$out")" "^4$"
like "the table: rows ranks, columns batch" "$out" "^ranks +bs2 +bs4$"
like "  speedup and efficiency" "$out" "^2 +[0-9.]+x +[0-9]+% +[0-9.]+x +[0-9]+%$"
is "runs recorded" "$("$BENCHCTL" runs --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 4
"$BENCHCTL" report "$sw" --json > "$tmp/sweep.json"
is "the cells recomputed from the trials' JSON results" "$(python3 - "$tmp/sweep.json" "$logs" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
bad = []
by = {}
for c in rep["cells"]:
    r = json.load(open("%s/%s_1.json" % (sys.argv[2], c["run"])))
    rates = [i / s for i, s in zip(r["observations_items"], r["observations_s"])]
    mean = sum(rates) / len(rates)
    if r["outcome"] != "completed" or c["outcome"] != "completed" or abs(c["value"] - mean) > 1e-6 * mean:
        bad.append((c["label"], c["value"], mean))
    if r["ranks"] != int(c["values"]["ranks"]) or r["batch"] != int(c["values"]["batch_size"]) * r["ranks"]:
        bad.append((c["label"], r["ranks"], r["batch"]))
    if len(rates) != 4:
        bad.append((c["label"], "observations", len(rates)))
    by[(c["values"]["ranks"], c["values"]["batch_size"])] = c
best = max(rep["cells"], key=lambda c: c["value"])
if rep["best"] != best["label"]:
    bad.append(("best", rep["best"], best["label"]))
for b in ("2", "4"):
    one, two = by[("1", b)], by[("2", b)]
    sp = two["value"] / one["value"]
    if abs(two["speedup"] - sp) > 1e-9 or abs(two["efficiency"] - sp / 2) > 1e-9 or one["speedup"] != 1:
        bad.append(("speedup", b, two["speedup"], sp))
print(bad or "ok")
PY
)" ok
text=$("$BENCHCTL" report "$sw")
is "report SWEEP prints the same table" "$(grep -c '^ranks' <<<"$text")" 2
like "  the best cell marked and named" "$text" "^best \(\*\): .+, [0-9.]+ images/s \(the highest\)$"
is "  one cell marked" "$(grep -c ' \*$\| \* ' <<<"$text")" 1
like "  with the rule" "$text" "^learning rate: MLPerf SSD rule"
err=$("$BENCHCTL" report last 2>&1 >/dev/null)
like "report last after a sweep: its last cell's run, said so, with the sweep's command" "$err" \
     "is cell 4 of 4 of sweep $sw: 'benchctl report $sw' reports the sweep"

# 4. resume: nothing done is rerun
out=$("$BENCHCTL" sweep --resume "$sw" 2>&1); rc=$?
is "resume of a finished sweep exits 0" "$rc" 0
is "  every cell done already" "$(grep -c 'done by run' <<<"$out")" 4
is "  no new run" "$("$BENCHCTL" runs --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 4

# a sweep over one rank count has no speedup: its page leaves those plots out
out=$(timeout 600 "$BENCHCTL" sweep "${common[@]}" allreduce --set ranks=2 --set allreduce.max_bytes=4096 2>&1); rc=$?
is "a one-cell allreduce sweep: exit 0" "$rc" 0
one=$(sed -n 's/^sweep \(sw-[^:]*\):.*/\1/p' <<<"$out" | head -1)
"$BENCHCTL" report "$one" --html "$tmp/one.html" >/dev/null 2>&1
unlike "  its page draws no empty plot" "$(cat "$tmp/one.html")" "no data"
unlike "  and no speedup plot" "$(cat "$tmp/one.html")" "<title>speedup"

# 5. a cell made to fail: an injected NaN shows as NaN, not a number
out=$(timeout 600 "$BENCHCTL" sweep "${common[@]}" ssd --set ranks=2 --set ssd.image_size=64 \
      --set 'extra_args=--log-interval\,1,--inject-nan\,2' --steps 4 --warmup 1 2>&1); rc=$?
is "a sweep with a failed cell: exit 5" "$rc" 5
like "  saying how many" "$out" "^1 of 2 cells did not complete every trial$"
nsw=$(sed -n 's/^sweep \(sw-[^:]*\): ssd on local.*/\1/p' <<<"$out" | head -1)
like "the NaN cell in the table" "$out" "^2 +[0-9.]+ +NaN$"
is "report --json: outcome NaN, value null" "$("$BENCHCTL" report "$nsw" --json | python3 -c '
import json, sys
c = json.load(sys.stdin)["cells"]
print(c[0]["outcome"], c[0]["value"] is not None, c[1]["outcome"], c[1]["value"], c[1]["trials"][0]["outcome"])')" \
   "completed True NaN None NaN"

# 6. cancel: the running cell and every cell after it
"$BENCHCTL" sweep "${common[@]}" ssd --set ranks=1,2 --set ssd.image_size=64 --steps 100000 --warmup 1 \
    > "$tmp/long.out" 2>&1 &
bg=$!
wait_until 60 grep -q "^cell 1/2" "$tmp/long.out"
lsw=$(sed -n 's/^sweep \(sw-[^:]*\):.*/\1/p' "$tmp/long.out" | head -1)
wait_until 60 sh -c "'$BENCHCTL' status last --json | grep -q '\"state\":[[:space:]]*\"running\"'"
out=$("$BENCHCTL" sweep --cancel "$lsw" 2>&1); rc=$?
is "sweep --cancel exits 0" "$rc" 0
like "  stopping its running cell" "$out" "^sweep $lsw cancelled \(1 running cell stopped\)"
wait "$bg"; rc=$?
is "the sweep itself ends, not zero" "$([ "$rc" -ne 0 ] && echo nonzero)" nonzero
like "  saying it was cancelled" "$(cat "$tmp/long.out")" "sweep $lsw was cancelled: 1 of 2 cells ran"
is "report: the cancelled cell and the one never run" "$("$BENCHCTL" report "$lsw" --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["state"], " ".join(c["outcome"] for c in j["cells"]))')" "cancelled cancelled cancelled"

# 7. the page: well-formed SVG plots, the table, no script
"$BENCHCTL" report "$sw" --html "$tmp/sweep.html" > /dev/null
out=$(python3 "$srcdir/tests/html-check.py" "$tmp/sweep.html" bs2)
like "report --html writes a page: plots of well-formed SVG, no script, nothing fetched, the table" \
     "$out" "^([4-9]|[1-9][0-9]) no-script \[\] \[\] True$"
# 8. the autotune of the gradient allreduce: a sweep over its bucket size
out=$(timeout 600 "$BENCHCTL" sweep "${common[@]}" ssd --set ranks=2 --set ssd.bucket_mb=0.25,16 \
      --set ssd.image_size=64 --steps 3 --warmup 1 2>&1); rc=$?
is "sweep over ssd.bucket_mb: exit 0" "$rc" 0
like "  a column per bucket size, the best marked" "$out" "^best \(\*\): .*bucket_mb=(0\.25|16).*, [0-9.]+ images/s \(the highest\)$"
bucket_logs=$(grep -l 'gradient allreduce: ' "$logs"/*.log | xargs grep -h '^# gradient allreduce: ' | sort -u)
like "  the trainers took the sizes: more buckets of 0.25 MiB" "$bucket_logs" \
     "^# gradient allreduce: [0-9]+ buckets of about 0\.25 MiB, each started during the backward$"
like "  one of 16 MiB" "$bucket_logs" "^# gradient allreduce: [0-9]+ buckets? of about 16 MiB"
out=$("$BENCHCTL" render --system local ssd --set ssd.bucket_mb=4 --set ssd.overlap=false 2>&1)
like "render: the bucket size reaches the trainer" "$out" "--bucket-mb 4( |$)"
like "  and the overlap" "$out" "--overlap 0( |$)"

done_testing

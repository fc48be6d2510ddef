#!/bin/bash
# benchctl suite on the 'local' system: a baselines file of three benchmarks
# (allreduce and SSD throughput at two batch sizes) repeated 4 times; the
# report's numbers (olympic mean, sd, sd%, diff, pass, the verdict and its
# criteria) recomputed here from the raw observations kept in the results
# store; the same report again with other targets (--baselines) and
# compared with a second set of runs (Welch); one-line errors naming the
# baselines file and line; report --html.
. "${srcdir:-.}/tests/lib.sh"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
[ -x "$top_builddir/benchd-ssd" ] || skip_all "benchd-ssd not built (needs MPI and the COCO data pipeline)"
own_runs
export OMP_WAIT_POLICY=passive
check "a small shapes dataset" "$BENCHCTL" dataset synth --images 64 --val-images 8 --seed 2 -o "$tmp/data"
cat > "$tmp/base.json" <<EOF
// three benchmarks, small enough for two cores
{
  "description": "test suite",
  "performance_tolerance": -0.5,
  "deviation_tolerance": 0.5,
  "benchmarks": {
    "allreduce": { "workload": "allreduce", "set": { "max_bytes": 262144, "iters": 5, "warmup": 1 },
                   "targets": { "local": 0.5 } },
    "ssd-b2": { "workload": "ssd", "set": { "batch_size": 2, "image_size": 64, "paths.data": "$tmp/data",
                "paths.logs": "$tmp/logs" }, "benchmark_steps": 4, "warmup_steps": 1,
                "targets": { "local": 30 } },
    "ssd-b4": { "workload": "ssd", "set": { "batch_size": 4, "image_size": 64, "paths.data": "$tmp/data",
                "paths.logs": "$tmp/logs" }, "benchmark_steps": 4, "warmup_steps": 1,
                "targets": { "AMD": 40, "Intel": 40 } }
  }
}
EOF
sed -i "s|\"max_bytes\": 262144|\"max_bytes\": 262144, \"paths.logs\": \"$tmp/logs\"|" "$tmp/base.json"

# 1. errors name the file and the line, before anything runs
sed 's/"workload": "allreduce"/"workload": "allreduse"/' "$tmp/base.json" > "$tmp/bad1.json"
err=$("$BENCHCTL" suite run "$tmp/bad1.json" --system local 2>&1); rc=$?
is "unknown benchmark workload: exit 3" "$rc" 3
like "  FILE:LINE: the benchmark and the workload" "$err" "^benchctl: $tmp/bad1.json:7: benchmark 'allreduce': unknown workload 'allreduse'"
is "  one line" "$(printf '%s\n' "$err" | wc -l)" 1
sed 's/"targets": { "local": 30 }/"tragets": { "local": 30 }/' "$tmp/base.json" > "$tmp/bad2.json"
err=$("$BENCHCTL" suite run "$tmp/bad2.json" --system local 2>&1); rc=$?
is "a misspelt key: exit 3" "$rc" 3
like "  FILE:LINE: unknown key" "$err" "^benchctl: $tmp/bad2.json:1[0-9]: benchmark 'ssd-b2': unknown key 'tragets'"
printf '{ "benchmarks": { "x": { "workload": "ssd" } }\n' > "$tmp/bad3.json"
err=$("$BENCHCTL" suite run "$tmp/bad3.json" --system local 2>&1); rc=$?
is "a JSON syntax error: exit 3" "$rc" 3
like "  FILE:LINE:COLUMN" "$err" "^benchctl: $tmp/bad3.json:[0-9]+:[0-9]+: "
err=$("$BENCHCTL" suite run "$tmp/base.json" --system local --repeat 1 2>&1); rc=$?
is "--repeat 1 (no deviation to judge): a usage error" "$rc" 2
like "  the range said" "$err" "--repeat: expected a number from 2 to 100"
out=$("$BENCHCTL" suite run "$tmp/base.json" --system p3dn --dry-run 2>&1); rc=$?
is "a system none of its targets names (dry run): exit 0" "$rc" 0
like "  said before anything runs, with the benchmarks (ssd-b4's targets name devices: they may apply)" \
     "$out" "warning: $tmp/base.json: no target for system 'p3dn' in some of 3 benchmarks \(allreduce, ssd-b2\): they cannot pass"
# batch_size as a sweep has it: images per rank, also for a workload whose
# batch is all ranks' (Mask R-CNN's ims_per_batch = batch_size x ranks)
cat > "$tmp/bs.json" <<'JSON'
{ "benchmarks": {
    "mr": { "workload": "maskrcnn", "set": { "batch_size": 2 }, "targets": { "local": 1 } },
    "mr1": { "workload": "maskrcnn", "set": { "batch_size": 3, "ranks_per_node": 1 }, "targets": { "local": 1 } },
    "ssd": { "workload": "ssd", "set": { "batch_size": 4 }, "targets": { "local": 1 } } } }
JSON
out=$("$BENCHCTL" suite run "$tmp/bs.json" --system local --dry-run 2>&1); rc=$?
is "a suite's batch_size, as a sweep's (dry run): exit 0" "$rc" 0
like "  Mask R-CNN on 2 ranks: 2 a rank, 4 in all" "$out" "^mr \(maskrcnn, 4 runs\): --set maskrcnn\.ims_per_batch=4 --set maskrcnn\.test_ims_per_batch=4 "
like "  on the 1 rank its other settings give: 3" "$out" "^mr1 \(maskrcnn, 4 runs\): --set maskrcnn\.ims_per_batch=3 "
like "  SSD's own per-rank batch" "$out" "^ssd \(ssd, 4 runs\): --set ssd\.batch_size=4 "
sed -i 's/"batch_size": 2 }/"batch_size": 2.5 }/' "$tmp/bs.json"
err=$("$BENCHCTL" suite run "$tmp/bs.json" --system local --dry-run 2>&1); rc=$?
like "  half an image: exit 3 with FILE:LINE" "$rc:$err" "^3:benchctl: $tmp/bs.json:2: benchmark 'mr': 'set': 'batch_size' is a whole number"
err=$("$BENCHCTL" suite run "$tmp/missing.json" --system local 2>&1); rc=$?
is "a missing file: not 0" "$([ "$rc" -ne 0 ] && echo nonzero)" nonzero
like "  naming it" "$err" "$tmp/missing.json"
err=$("$BENCHCTL" suite report 2>&1); rc=$?
is "report before any suite: exit 1" "$rc" 1
like "  none recorded" "$err" "no suite recorded yet"
is "nothing ran" "$(ls "$BENCHD_HOME/runs" 2>/dev/null | wc -l)" 0

# 2. the suite, 4 runs of each
out=$(timeout 900 "$BENCHCTL" suite run "$tmp/base.json" --system local --repeat 4 2>&1); rc=$?
is "suite run exits 0" "$rc" 0
su=$(sed -n 's/^suite \(su-[^:]*\): 3 benchmarks.*/\1/p' <<<"$out" | head -1)
like "a suite id" "$su" "^su-[0-9]{8}-"
like "the report: a row per benchmark" "$out" "ssd-b4"
like "  the verdict with its criteria" "$out" "verdict: (PASS|FAIL) \(every benchmark produced a result: yes; 80th percentile of sd% [0-9.]+% < 50.0%: (yes|no); mean diff [-+][0-9.]+% >= -50.0%: (yes|no)\)"
"$BENCHCTL" suite report "$su" --json > "$tmp/suite.json"
db="$BENCHD_HOME/benchd.db"
is "the numbers recomputed from the raw observations in the store" "$(python3 - "$tmp/suite.json" "$db" "$tmp/logs" <<'PY'
import json, sqlite3, statistics, sys
rep = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
logs = sys.argv[3]
bad = []
def olympic(v):
    v = sorted(v)
    return sum(v[1:-1]) / (len(v) - 2) if len(v) >= 3 else sum(v) / len(v)
targets = {"allreduce": 0.5, "ssd-b2": 30, "ssd-b4": 40}
for b in rep["benchmarks"]:
    name = b["name"]
    if name == "allreduce":
        # the bus bandwidth at the largest size of each trial, from its log
        rates = []
        for t in range(1, 5):
            best = None
            for line in open("%s/%s_%d.log" % (logs, b["run"], t)):
                if '"allreduce_result"' in line:
                    v = json.loads(line.split(":::MLLOG ", 1)[1])["value"]
                    if best is None or v["bytes"] > best["bytes"]:
                        best = v
            rates.append(best["busbw_gbps"])
    else:
        rows = db.execute("SELECT trial, json FROM results WHERE run_id = ? ORDER BY trial", (b["run"],)).fetchall()
        rates = []
        for trial, text in rows:
            r = json.loads(text)
            obs = [i / s for i, s in zip(r["observations_items"], r["observations_s"])]
            rates.append(sum(obs) / len(obs))
        if len(rows) != 4 or any(abs(a - x) > 1e-6 * x for a, x in zip(rates, b["rates"])):
            bad.append((name, "raw", rates, b["rates"]))
    if len(rates) != 4:
        bad.append((name, "runs", len(rates)))
        continue
    res = olympic(rates)
    sd = statistics.stdev(rates)
    diff = (res - targets[name]) / targets[name]
    want = {"result": res, "sd": sd, "sd_pct": 100 * sd / res, "diff_pct": 100 * diff}
    for k, v in want.items():
        if b.get(k) is None or abs(b[k] - v) > 1e-6 * max(1, abs(v)):
            bad.append((name, k, b.get(k), v))
    if b["pass"] != (diff >= -0.5 and sd / res <= 0.5):
        bad.append((name, "pass", b["pass"]))
v = rep["verdict"]
sds = sorted(b["sd_pct"] for b in rep["benchmarks"])
print(bad or "ok", v["all_results"])
PY
)" "ok True"
like "the device the target was matched on" "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j.get("device"), [b.get("target_key") for b in j["benchmarks"]])' "$tmp/suite.json")" \
     "'local', 'local', '(AMD|Intel)'"

# 3. other targets later: --baselines, nothing rerun
sed 's/"targets": { "local": 30 }/"targets": { "local": 1e6 }/' "$tmp/base.json" > "$tmp/other.json"
out=$("$BENCHCTL" suite report "$su" --baselines "$tmp/other.json" --json)
is "report --baselines: the new target judges the same runs" "$(python3 -c '
import json, sys
j = json.loads(sys.argv[1])
b = [x for x in j["benchmarks"] if x["name"] == "ssd-b2"][0]
print(b["target"], b["pass"], round(b["diff_pct"]) < -99)' "$out")" "1000000 False True"

# 4. a second set, compared (Welch's t-test per benchmark)
out=$(timeout 900 "$BENCHCTL" suite run "$tmp/base.json" --system local --repeat 3 2>&1); rc=$?
is "a second suite" "$rc" 0
su2=$(sed -n 's/^suite \(su-[^:]*\): 3 benchmarks.*/\1/p' <<<"$out" | head -1)
out=$("$BENCHCTL" suite report "$su2" --compare "$su" 2>&1)
like "compare: Welch per benchmark" "$out" "ssd-b2 .*(significant|not significant|no variance)"
like "  allreduce too" "$out" "allreduce .*(significant|not significant|no variance)"

# 5. the page
"$BENCHCTL" suite report "$su" --html "$tmp/suite.html" > /dev/null
out=$(python3 "$srcdir/tests/html-check.py" "$tmp/suite.html" Verdict:)
like "suite report --html: well-formed plots, the verdict" "$out" "^([4-9]|[1-9][0-9]) no-script \[\] \[\] True$"
done_testing

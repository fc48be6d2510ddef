#!/bin/bash
# Sweeps and a scaling report through the real local Slurm cluster (4
# emulated nodes x 4 CPU ranks): allreduce over ranks 2,4,8,16 (nodes from
# the ranks: 1,1,2,4); SSD throughput over batch 2,4 x ranks 2,4; a cell
# made to fail (an injected NaN) shown as NaN; a time-to-train sweep over
# 1, 2 and 4 nodes with a cost per node hour, reported with --scaling
# (speedup, efficiency, cost = nodes x price x wall time, cost to target)
# as a table and a page.
. "${srcdir:-.}/tests/lib.sh"
[ -x "$top_builddir/benchd-ssd" ] || skip_all "benchd-ssd not built (needs MPI and the COCO data pipeline)"
cluster_test 17317
export OMP_WAIT_POLICY=passive

check "a small shapes dataset" "$BENCHCTL" dataset synth --images 64 --val-images 16 --seed 4 -o "$tmp/data"
common=(--system 4xlocal --data "$tmp/data" --logdir "$tmp/logs")
runs_json() { "$BENCHCTL" report "$1" --json; }

# 1. allreduce over ranks 2,4,8,16
out=$(timeout 900 "$BENCHCTL" sweep "${common[@]}" allreduce --set ranks=2,4,8,16 --set allreduce.max_bytes=1048576 \
      --set allreduce.iters=3 2>&1); rc=$?
is "allreduce sweep exits 0" "$rc" 0
sw=$(sed -n 's/^sweep \(sw-[^:]*\): allreduce.*/\1/p' <<<"$out" | head -1)
printf '%s\n' "$out" | sed -n '/^bus bandwidth/,$p' | sed 's/^/#   /'
is "four cells with a bus bandwidth, nodes from the ranks" "$(runs_json "$sw" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(" ".join("%s:%s" % (c["values"]["ranks"], c["outcome"]) for c in j["cells"]),
      all(c["value"] > 0 for c in j["cells"]))')" "2:completed 4:completed 8:completed 16:completed True"
is "each cell's job had the nodes its ranks need" "$(for r in $(runs_json "$sw" | python3 -c '
import json, sys
print(" ".join(c["run"] for c in json.load(sys.stdin)["cells"]))'); do
    "$BENCHCTL" show --run "$r" --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print("%d/%d" % (j["nodes"], j["ranks_per_node"]), end=" ")'
done)" "1/2 1/4 2/4 4/4 "

# 2. SSD throughput over batch 2,4 x ranks 2,4
out=$(timeout 900 "$BENCHCTL" sweep "${common[@]}" ssd --set ranks=2,4 --set batch_size=2,4 --set ssd.image_size=64 \
      --steps 3 --warmup 1 2>&1); rc=$?
is "SSD sweep exits 0" "$rc" 0
printf '%s\n' "$out" | sed -n '/^throughput/,$p' | sed 's/^/#   /'
like "the table" "$out" "^ranks +bs2 +bs4$"
like "  a row of numbers (the best cell marked *)" "$out" "^4 +[0-9.]+( \\*)? +[0-9.]+( \\*)?$"
ssw=$(sed -n 's/^sweep \(sw-[^:]*\): ssd.*/\1/p' <<<"$out" | head -1)
"$BENCHCTL" report "$ssw" --html "$tmp/ssd.html" > /dev/null
check "  and its page" test -s "$tmp/ssd.html"

# 3. a cell made to fail
out=$(timeout 900 "$BENCHCTL" sweep "${common[@]}" ssd --set ranks=2 --set ssd.image_size=64 \
      --set 'extra_args=--log-interval\,1,--inject-nan\,2' --steps 3 --warmup 1 2>&1); rc=$?
like "the injected NaN shows as NaN" "$out" "^2 +[0-9.]+ +NaN$"
is "  and the sweep exits 5" "$rc" 5

# 4. scaling over 1, 2 and 4 nodes, time to train, with a price
out=$(timeout 1200 "$BENCHCTL" sweep "${common[@]}" ssd --mode time-to-train --runs 1 --set nodes=1,2,4 \
      --set cost_per_node_hour=3.5 --set ssd.image_size=64 --set ssd.epochs=1 --set 'ssd.eval_epochs=[1]' \
      --set 'ssd.decay_epochs=[]' --set ssd.target_map=0 2>&1); rc=$?
is "time-to-train sweep over nodes exits 0" "$rc" 0
tsw=$(sed -n 's/^sweep \(sw-[^:]*\): ssd.*/\1/p' <<<"$out" | head -1)
mapfile -t ids < <(runs_json "$tsw" | python3 -c '
import json, sys
for c in json.load(sys.stdin)["cells"]:
    print(c["run"])')
is "three runs" "${#ids[@]}" 3
rep=$("$BENCHCTL" report --scaling "${ids[@]}" 2>&1); rc=$?
is "report --scaling exits 0" "$rc" 0
printf '%s\n' "$rep" | sed 's/^/#   /'
like "  a row per node count" "$rep" "^4 +16 "
"$BENCHCTL" report --scaling "${ids[@]}" --json > "$tmp/scaling.json"
is "cost = nodes x price x wall time; speedup and efficiency against 1 node" "$(python3 - "$tmp/scaling.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
bad = []
if [r["nodes"] for r in rows] != [1, 2, 4]:
    bad.append("nodes")
base = rows[0]
for r in rows:
    if r["cost_per_node_hour"] != 3.5 or abs(r["cost"] - r["nodes"] * 3.5 * r["wall_min"] / 60) > 1e-9:
        bad.append(("cost", r))
    if r["time_to_train_min"] is None or abs(r["cost_to_target"] - r["nodes"] * 3.5 * r["time_to_train_min"] / 60) > 1e-9:
        bad.append(("to target", r))
    sp = base["time_to_train_min"] / r["time_to_train_min"]
    if abs(r["speedup"] - sp) > 1e-9 or abs(r["efficiency"] - sp / r["nodes"]) > 1e-9:
        bad.append(("speedup", r))
    if r["accuracy"] is None:
        bad.append(("accuracy", r))
print(bad or "ok")
PY
)" ok
"$BENCHCTL" report --scaling "${ids[@]}" --html "$tmp/scaling.html" > /dev/null
like "the page: speedup against node count with the ideal line" "$(cat "$tmp/scaling.html")" "ideal"
err=$("$BENCHCTL" report --scaling "${ids[0]}" "$("$BENCHCTL" runs --workload allreduce --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["run"])')" 2>&1); rc=$?
is "--scaling of two workloads: a usage error" "$rc" 2
like "  saying so" "$err" "compares runs of one workload"
# the sweep itself: the same report as its runs
"$BENCHCTL" report --scaling "$tsw" --json > "$tmp/scaling-sweep.json"; rc=$?
is "report --scaling SWEEP exits 0" "$rc" 0
check "  the same rows as its three runs" cmp "$tmp/scaling.json" "$tmp/scaling-sweep.json"
err=$("$BENCHCTL" report --scaling "$ssw" 2>&1); rc=$?
is "--scaling of a sweep over ranks and batch: a usage error" "$rc" 2
like "  naming its columns" "$err" "sweep $ssw is not over nodes or ranks alone \\(its columns: bs2, \\.\\.\\.\\)"
done_testing

#!/bin/bash
# Throughput mode of the trainers (trainer/common/tbench.h): --benchmark-steps
# N --warmup-steps W --result FILE on benchd-ssd and benchd-maskrcnn
# (synthetic data, 1 and 2 ranks): the JSON result's statistics recomputed
# from its own observations, the MLPerf throughput line agreeing with it,
# the unique id (same arguments: same id, another --result: same id, other
# arguments: another id), an injected NaN recorded as the outcome "nan"
# with no number, and usage errors.
. "${srcdir:-.}/tests/lib.sh"
SSD="$top_builddir/benchd-ssd"
MR="$top_builddir/benchd-maskrcnn"
if [ ! -x "$SSD" ] || [ ! -x "$MR" ]; then
    skip_all "trainers not built (need MPI and the COCO data pipeline)"
fi
command -v mpirun >/dev/null || skip_all "mpirun not installed"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_WAIT_POLICY=passive
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

ssd_args=(--synthetic --batch-size 2 --image-size 64 --backbone resnet18 --width-mult 0.25 --threads 1 --seed 3)
mr_args=(--synthetic --config small --mode torchvision --ims-per-batch 2 --threads 1 --seed 3)

# check_result NAME FILE LOG STEPS WARMUP RANKS BATCH: the result recomputed from its observations
check_result() {
    local name=$1 file=$2 log=$3
    local out
    out=$(python3 - "$file" "$log" "$4" "$5" "$6" "$7" <<'PY' 2>&1
import json, math, re, sys
r = json.load(open(sys.argv[1]))
steps, warmup, ranks, batch = (int(x) for x in sys.argv[3:7])
bad = []
for k in ("program", "benchmark", "arguments", "version", "unique_id", "hostname", "device", "ranks", "batch",
          "precision", "warmup_steps", "benchmark_steps", "outcome", "completed", "batch_loss", "observations_s",
          "observations_items", "train", "train_item"):
    if k not in r:
        bad.append("no " + k)
if r["outcome"] != "completed" or r["completed"] is not True:
    bad.append("outcome " + r["outcome"])
if (r["ranks"], r["batch"], r["benchmark_steps"], r["warmup_steps"]) != (ranks, batch, steps, warmup):
    bad.append("ranks/batch/steps %s" % [r["ranks"], r["batch"], r["benchmark_steps"], r["warmup_steps"]])
s, n = r["observations_s"], r["observations_items"]
if len(s) != steps or len(n) != steps or any(x != batch for x in n) or any(not x > 0 for x in s):
    bad.append("observations %s %s" % (s, n))
rate = [i / t for i, t in zip(n, s)]
m = sum(rate) / len(rate)
sd = math.sqrt(sum((x - m) ** 2 for x in rate) / (len(rate) - 1))
tq = {2: 4.302652730, 3: 3.182446305, 4: 2.776445105, 5: 2.570581836}[len(rate) - 1]
ti = r["train_item"]
def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))
for key, want in (("avg", m), ("sd", sd), ("min", min(rate)), ("max", max(rate)), ("count", len(rate)),
                  ("ci95_lo", m - tq * sd / math.sqrt(len(rate))), ("ci95_hi", m + tq * sd / math.sqrt(len(rate)))):
    if not close(ti[key], want):
        bad.append("train_item.%s %r, recomputed %r" % (key, ti[key], want))
tr = r["train"]
if not close(tr["avg"], sum(s) / len(s)) or tr["unit"] != "s" or ti["unit"] != "images/s":
    bad.append("train %r" % tr)
# the MLPerf line says the same
lines = [json.loads(l.split(":::MLLOG ", 1)[1]) for l in open(sys.argv[2]) if ":::MLLOG" in l]
tp = [l for l in lines if l["key"] == "throughput" and "count" in l["metadata"]]
if len(tp) != 1 or not close(tp[0]["value"], m) or tp[0]["metadata"]["count"] != steps:
    bad.append("MLPerf throughput line %r" % tp)
stop = [l for l in lines if l["key"] == "run_stop"]
if not stop or stop[-1]["metadata"].get("status") != "success":
    bad.append("run_stop %r" % stop)
if [l for l in lines if l["key"] == "eval_start"]:
    bad.append("evaluated in throughput mode")
print("; ".join(bad) if bad else "ok")
PY
)
    is "$name: result recomputed from its observations" "$out" "ok"
}

"$SSD" "${ssd_args[@]}" --benchmark-steps 4 --warmup-steps 2 --result "$tmp/ssd1.json" > "$tmp/ssd1.log" 2>&1
is "benchd-ssd throughput: exit 0" "$?" 0
like "benchd-ssd throughput: summary line" "$(cat "$tmp/ssd1.log")" "# throughput: 4 steps after 2: "
check_result "benchd-ssd 1 rank" "$tmp/ssd1.json" "$tmp/ssd1.log" 4 2 1 2

mpirun -np 2 "$SSD" "${ssd_args[@]}" --benchmark-steps 3 --warmup-steps 1 --result "$tmp/ssd2.json" > "$tmp/ssd2.log" 2>&1
is "benchd-ssd throughput, 2 ranks: exit 0" "$?" 0
check_result "benchd-ssd 2 ranks" "$tmp/ssd2.json" "$tmp/ssd2.log" 3 1 2 4

"$MR" "${mr_args[@]}" --benchmark-steps 3 --warmup-steps 1 --result "$tmp/mr1.json" > "$tmp/mr1.log" 2>&1
is "benchd-maskrcnn throughput: exit 0" "$?" 0
check_result "benchd-maskrcnn 1 rank" "$tmp/mr1.json" "$tmp/mr1.log" 3 1 1 2

# the unique id: of the arguments, not of where the result goes
"$SSD" "${ssd_args[@]}" --benchmark-steps 4 --warmup-steps 2 --result "$tmp/other-name.json" > /dev/null 2>&1
"$SSD" "${ssd_args[@]}" --benchmark-steps 3 --warmup-steps 2 --result "$tmp/ssd3.json" > /dev/null 2>&1
uid() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["unique_id"])' "$1"; }
is "unique_id: the same arguments, another --result: the same id" "$(uid "$tmp/other-name.json")" "$(uid "$tmp/ssd1.json")"
check "unique_id: other arguments: another id" test "$(uid "$tmp/ssd3.json")" != "$(uid "$tmp/ssd1.json")"

# a NaN: the outcome, never a number
for prog in SSD MR; do
    if [ $prog = SSD ]; then cmd=("$SSD" "${ssd_args[@]}"); else cmd=("$MR" "${mr_args[@]}"); fi
    "${cmd[@]}" --benchmark-steps 4 --warmup-steps 1 --inject-nan 3 --result "$tmp/nan-$prog.json" > "$tmp/nan.log" 2>&1
    rc=$?
    check "$prog NaN: exit non-zero" test "$rc" -ne 0
    is "$prog NaN: outcome nan, no rates" "$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["outcome"], r["completed"], r["train"], r["train_item"], len(r["observations_s"]))' "$tmp/nan-$prog.json")" \
        "nan False None None 1"
    like "$prog NaN: the summary says so" "$(cat "$tmp/nan.log")" "# throughput: none .nan after 1 of 4 timed steps."
    like "$prog NaN: run_stop aborted" "$(grep run_stop "$tmp/nan.log")" '"status": "aborted"'
done

# usage errors
for bad in "--benchmark-steps 0" "--warmup-steps -1" "--benchmark-steps x"; do
    # shellcheck disable=SC2086
    out=$("$SSD" --synthetic $bad 2>&1 >/dev/null); rc=$?
    is "$bad: exit 2" "$rc" 2
    is "$bad: one line" "$(wc -l <<<"$out")" 1
    like "$bad: names the option" "$out" "${bad%% *}"
done
done_testing

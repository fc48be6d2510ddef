#!/bin/bash
# Runs of workloads of someone else's, added by a file alone, on the local
# system: one that exits 0 and prints no MLPerf line has no result (not a
# number); one that dies is a failed trial whose reason quotes its last words,
# not Open MPI's; one whose program prints MLPerf lines is scored as ours.
. "${srcdir:-.}/tests/lib.sh"
command -v mpirun >/dev/null || skip_all "mpirun not installed"
own_runs
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$tmp/wl" "$tmp/bin"
cat > "$tmp/wl/quiet.json" <<'JSON'
{ "title": "exits 0 and says nothing", "program": "true", "command": ["{program}"] }
JSON
cat > "$tmp/wl/dies.json" <<'JSON'
{ "title": "dies", "program": "sh",
  "command": ["{program}", "-c", "echo starting; echo 'RuntimeError: out of cheese' >&2; exit 3"] }
JSON
# a trainer that prints MLPerf lines (as mlperf-logging would) and progress
cat > "$tmp/bin/toy-train" <<'SH'
#!/bin/bash
# toy-train --epochs N --target T: accuracy 0.1 more each epoch
epochs=3 target=0.25
while [ $# -gt 0 ]; do case "$1" in --epochs) epochs=$2; shift 2;; --target) target=$2; shift 2;; *) shift;; esac; done
t0=$(date +%s%3N)
mll() { printf ':::MLLOG {"namespace": "", "time_ms": %s, "event_type": "%s", "key": "%s", "value": %s, "metadata": {"file": "toy", "lineno": 1%s}}\n' "$(( t0 + $1 ))" "$2" "$3" "$4" "$5"; }
[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0
mll 0 INTERVAL_START init_start null ""
mll 1 INTERVAL_END init_stop null ""
mll 2 INTERVAL_START run_start null ""
status=aborted
for e in $(seq "$epochs"); do
    acc=$(awk -v e="$e" 'BEGIN { printf "%.1f", e * 0.1 }')
    echo "epoch $e: accuracy $acc"
    mll $((10 * e)) POINT_IN_TIME eval_accuracy "$acc" ", \"epoch_num\": $e"
    if awk -v a="$acc" -v t="$target" 'BEGIN { exit !(a >= t) }'; then status=success; break; fi
done
mll 100 INTERVAL_END run_stop null ", \"status\": \"$status\""
SH
chmod +x "$tmp/bin/toy-train"
cat > "$tmp/wl/toy.json" <<JSON
{
  "title": "toy trainer with MLPerf lines",
  "program": "$tmp/bin/toy-train",
  "mlperf": { "benchmark": "toy", "result": "TOY" },
  "result": { "kind": "time-to-train", "targets": ["target"] },
  "command": ["{program}", "{args}"],
  "keys": {
    "epochs": { "type": "int", "default": 5, "min": 1 },
    "target": { "type": "number", "default": 0.25, "min": 0, "max": 1 }
  }
}
JSON
run() { "$BENCHCTL" --workloads-dir "$tmp/wl" submit --system local "$@" --runs 1 --logdir "$tmp/logs" --wait 2>&1; }

out=$(run quiet); rc=$?
is "exits 0 and prints nothing: the trial completed" "$rc" 0
report=$("$BENCHCTL" report last 2>&1)
like "  but its report has no result: no run, no number" "$report" "^  1 +no run +- +- +0 "
like "  and says why" "$report" "no run_start in the log"

out=$(run dies); rc=$?
is "a trainer that dies: the run did not complete every trial (exit 5)" "$rc" 5
like "  its trial failed with the trainer's own last words, not Open MPI's" "$out" \
     "^  1 +failed .* 3 +the trainer exited with an error: RuntimeError: out of cheese$"

out=$(run toy); rc=$?
is "a trainer of someone else's with MLPerf lines: exit 0" "$rc" 0
like "  it ran as its file says" "$(cat "$tmp"/logs/*_1.log | tail -n 30)" "^epoch 3: accuracy 0\.3"
report=$("$BENCHCTL" --workloads-dir "$tmp/wl" report last 2>&1)
like "  scored as ours: success, the epochs, the accuracy over its target" "$report" \
     "^  1 +success +[0-9.]+ +[0-9.]+ +3 +0\.3000 +0\.250 +yes"
like "  under its own workload" "$report" "^run [^ ]+: toy on local"
out=$(run toy --set toy.target=0.9); rc=$?
is "  --set of its key: the trainer ends without reaching it (exit 0, as ours)" "$rc" 0
like "  reported so" "$("$BENCHCTL" --workloads-dir "$tmp/wl" report last 2>&1)" "^  1 +aborted +.* 5 +0\.5000 +0\.900 +no +.*below the target 0\.9000"
# The launch script's node check, before the first trial: the GPUs the node
# sees (nvidia-smi -L, a recorded answer of two V100s, here given one and
# two lines) against the system's, and the dataset's tree where only the
# node can see it
mkdir -p "$tmp/sys" "$tmp/gpu-bin"
cat > "$tmp/sys/gpu2.json" <<'JSON'
{ "extends": "local", "description": "this machine as if it had two GPUs", "gpus_per_node": 2 }
JSON
smi() {  # nvidia-smi -L answering N of the recorded GPUs
    printf '#!/bin/sh\nhead -n %d <<EOF\n%s\nEOF\n' "$1" \
        "$(cat "$srcdir/tests/fixtures/nvidia-smi-L.txt")" > "$tmp/gpu-bin/nvidia-smi"
    chmod +x "$tmp/gpu-bin/nvidia-smi"
}
gpu_run() { PATH="$tmp/gpu-bin:$PATH" "$BENCHCTL" --systems-dir "$tmp/sys" --workloads-dir "$tmp/wl" submit \
                --system gpu2 toy --runs 1 --logdir "$tmp/logs" --wait 2>&1; }
smi 1
out=$(gpu_run); rc=$?
is "a node that sees 1 GPU of the system's 2: the run fails (exit 5)" "$rc" 5
like "  before any trial, saying which node and how many it sees" "$out" \
     "node check failed on $(hostname): it sees 1 GPU\(s\) \(nvidia-smi -L\), the run uses 2 \(gpu2: 2 per node\)"
smi 2
out=$(gpu_run); rc=$?
is "  with both GPUs: the trial runs (exit 0)" "$rc" 0
script=$("$BENCHCTL" render --system local ssd --set paths.data="$tmp/no-such-data" --set paths.logs="$tmp/logs" --runs 1)
out=$(bash -c "$script" 2>&1); rc=$?
is "a rendered script whose node lacks the dataset: exit 1" "$rc" 1
like "  the node and the path named" "$out" "node check failed on $(hostname): no $tmp/no-such-data \(the dataset, paths.data\)"
like "  and no trial started" "$out" "node check failed: no trial started"
unlike "  not one" "$out" "trial 1/1 started"
done_testing

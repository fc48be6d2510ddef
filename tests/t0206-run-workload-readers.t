#!/bin/bash
# Trainers of someone else's that write no MLPerf lines, added by a file
# alone and read as their file says: regular expressions over the output
# (GluonCV's "Speed: X samples/sec" and its two-line "~~~~ Mean AP for bbox
# ~~~~" / "=NN.N"), a JSON report left unclosed (the mila suite's), and
# NVIDIA's DLLogger records.  Each runs on 'local', is scored (time to train
# against its target, or the mean of its trials' throughput), is swept over
# its batch size, and its report reads by the rules the run recorded, with
# or without the file on the search path.  A program that fails after
# printing rates is a failed trial, never a number; rules that cannot match
# are refused before anything runs.
. "${srcdir:-.}/tests/lib.sh"
command -v mpirun >/dev/null || skip_all "mpirun not installed"
own_runs
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$tmp/wl" "$tmp/bin"

# the trainer: progress in one of three styles, as GluonCV, mila and NVIDIA's print them
cat > "$tmp/bin/rate-train" <<'SH'
#!/bin/bash
bs=2 steps=5 style=regex out= fail=0
while [ $# -gt 0 ]; do case "$1" in
  --batch-size) bs=$2; shift 2;; --steps) steps=$2; shift 2;; --style) style=$2; shift 2;;
  --report) out=$2; shift 2;; --fail) fail=$2; shift 2;; *) shift;; esac; done
[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0
for s in $(seq "$steps"); do
  speed=$(( bs * 100 + s ))
  loss=$(awk -v s="$s" 'BEGIN { printf "%.3f", 2.0 / s }')
  case $style in
  regex) echo "INFO:root:[Epoch 0][Batch $((s * 100 - 1))], Speed: $speed samples/sec, RPN_Conf=$loss";;
  dllogger) printf 'DLLL {"timestamp": "1.0", "datetime": "x", "elapsedtime": "1.0", "type": "LOG", "step": [%d], "data": {"loss": %s}}\n' "$s" "$loss";;
  esac
done
[ "$fail" = 0 ] || { echo "Traceback: boom at step $steps" >&2; exit 1; }
case $style in
regex) printf '[Epoch 0] Validation:\n~~~~ Mean AP for bbox ~~~~\n=%s\n~~~~ Mean AP for segm ~~~~\n=%s\n' "$(( 30 + bs )).5" "$(( 20 + bs )).5";;
dllogger) printf 'DLLL {"timestamp": "2.0", "type": "LOG", "step": [], "data": {"train_perf_fps": %d, "BBOX_mAP": 0.%d}}\n' $((bs * 100)) $((30 + bs));;
json) { echo "["; for s in $(seq "$steps"); do printf '{"name": "r", "batch_size": %d, "train_item": {"avg": %d, "unit": "items/sec"}},\n' "$bs" $((bs * 100 + s)); done; } > "$out";;
esac
SH
chmod +x "$tmp/bin/rate-train"
keys='"batch_size": { "type": "int", "default": 2, "min": 1 },
    "steps": { "type": "int", "default": 5, "min": 1 },
    "fail": { "type": "int", "default": 0 }'
cat > "$tmp/wl/gluonish.json" <<JSON
// GluonCV-like: time to a bbox and a segm target, read by regular expressions
{
  "title": "prints GluonCV's lines",
  "program": "$tmp/bin/rate-train",
  "result": {
    "kind": "time-to-train", "read": "regex", "targets": ["target_bbox", "target_segm"], "skip": 1,
    "match": {
      "step": "\\\\[Batch ([0-9]+)\\\\]",
      "loss": "RPN_Conf=([0-9.]+)",
      "throughput": "Speed: ([0-9.]+) samples/sec",
      "accuracy": "~~~~ Mean AP for bbox ~~~~\\n=([0-9.]+)",
      "accuracy_segm": "~~~~ Mean AP for segm ~~~~\\n=([0-9.]+)"
    },
    "scale": { "accuracy": 0.01, "accuracy_segm": 0.01 }
  },
  "command": ["{program}", "--style", "regex", "{args}"],
  "keys": { $keys,
    "target_bbox": { "type": "number", "default": 0.3, "arg": null },
    "target_segm": { "type": "number", "default": 0.2, "arg": null } }
}
JSON
cat > "$tmp/wl/milaish.json" <<JSON
{
  "title": "writes the mila suite's report",
  "program": "$tmp/bin/rate-train",
  "result": { "kind": "throughput", "read": "json", "unit": "items/s", "file": "{result}.*",
              "match": { "throughput": "train_item.avg" } },
  "command": ["{program}", "--style", "json", "--report", "{result}_4242.json", "{args}"],
  "keys": { $keys }
}
JSON
sed -i 's/"{result}_4242.json"/"{result}.4242"/' "$tmp/wl/milaish.json"
cat > "$tmp/wl/nvish.json" <<JSON
{
  "title": "writes DLLogger records",
  "program": "$tmp/bin/rate-train",
  "result": { "kind": "throughput", "read": "dllogger",
              "match": { "throughput": "train_perf_fps", "accuracy": "BBOX_mAP", "loss": "loss" } },
  "command": ["{program}", "--style", "dllogger", "{args}"],
  "keys": { $keys }
}
JSON
run() { "$BENCHCTL" --workloads-dir "$tmp/wl" submit --system local "$@" --logdir "$tmp/logs" --wait 2>&1; }

# 1. rules that cannot match: refused before anything runs, naming file:line
bad() {
    cat > "$tmp/bad/$1.json"
    err=$("$BENCHCTL" --workloads-dir "$tmp/bad" submit --system local "$1" --logdir "$tmp/logs" --dry-run 2>&1); rc=$?
}
mkdir -p "$tmp/bad"
bad nogroup <<JSON
{ "title": "t", "program": "true", "command": ["{program}"],
  "result": { "kind": "throughput", "read": "regex",
              "match": { "throughput": "Speed: [0-9.]+" } } }
JSON
is "a regular expression without a group: exit 3" "$rc" 3
like "  file:line, which value, why" "$err" "nogroup\.json:3: 'result\.match\.throughput': .*has no group"
rm "$tmp/bad/nogroup.json"
bad broken <<JSON
{ "title": "t", "program": "true", "command": ["{program}"],
  "result": { "kind": "throughput", "read": "regex",
              "match": { "throughput": "Speed: ([0-9.]+" } } }
JSON
like "a regular expression that does not compile" "$err" "broken\.json:3: 'result\.match\.throughput': .*not an extended regular expression"
rm "$tmp/bad/broken.json"
bad every <<JSON
{ "title": "t", "program": "true", "command": ["{program}"],
  "result": { "kind": "throughput", "read": "regex", "match": { "throughput": "([0-9]*)" } } }
JSON
like "one that matches every line" "$err" "every\.json:2: .*matches an empty line"
rm "$tmp/bad/every.json"
bad nothing <<JSON
{ "title": "t", "program": "true", "command": ["{program}"], "result": { "kind": "throughput", "read": "json" } }
JSON
like "a throughput result with no rule for it" "$err" "nothing\.json:1: 'result\.match': a throughput result needs 'throughput'"
rm "$tmp/bad/nothing.json"
bad path <<JSON
{ "title": "t", "program": "true", "command": ["{program}"],
  "result": { "kind": "throughput", "read": "json", "match": { "throughput": "train_item..avg" } } }
JSON
like "a JSON path that is not one" "$err" "path\.json:2: 'result\.match\.throughput': 'train_item\.\.avg' is not a path"
rm "$tmp/bad/path.json"
bad mll <<JSON
{ "title": "t", "program": "true", "command": ["{program}"], "result": { "skip": 2 } }
JSON
like "a reader's field on MLLOG lines" "$err" "mll\.json:1: 'result\.skip': for the regex, json and dllogger readers"
is "nothing was recorded" "$(ls "$BENCHD_HOME/runs" 2>/dev/null | wc -l)" 0
rm "$tmp/bad/mll.json"

# a program missing on a node: the launch script's pre-flight names the node, no trial starts
cat > "$tmp/bad/ghost.json" <<JSON
{ "title": "t", "program": "no-such-trainer-$$", "command": ["{program}"],
  "result": { "kind": "throughput", "read": "regex", "match": { "throughput": "speed ([0-9]+)" } } }
JSON
out=$("$BENCHCTL" --workloads-dir "$tmp/bad" submit --system local ghost --logdir "$tmp/logs" --wait 2>&1); rc=$?
is "a program that is not there: the run failed (exit 5)" "$rc" 5
like "  the pre-flight named the node and the program, and no trial started" "$out" \
     "^  1 +incomplete .*program check failed on $(hostname): no-such-trainer-$$: no no-such-trainer-$$ in PATH"
rm "$tmp/bad/ghost.json"

# 2. regular expressions: the time to both targets, the rate after the skipped first
out=$(run gluonish --runs 2); rc=$?
is "GluonCV-like run: exit 0" "$rc" 0
rid=$(sed -n 's/^run \([^ :]*\).*/\1/p' <<<"$out" | head -1)
report=$("$BENCHCTL" report "$rid" 2>&1)
like "both trials succeeded, bbox/segm read from the two-line summaries, over the targets" "$report" \
     "^  1 +success +[0-9.]+ +[0-9.]+ +0 +0\.3250/0\.2250 +0\.300/0\.200 +yes +203\.5"
like "  the second too" "$report" "^  2 +success .* yes +203\.5"
like "  time to train: 2 of 5 trials, no official score, but a mean" "$report" "MLPerf score: no score: 2 of 5 trials"
is "the run kept its workload file" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["read"])' \
    "$BENCHD_HOME"/runs/"$rid"/workload.json)" regex
like "  so its report reads without the file on the path" "$report" "^run [^ ]+: gluonish on local"
out=$(run gluonish --runs 1 --set gluonish.target_segm=0.5); rc=$?
like "a target not reached: reported with the value read" "$("$BENCHCTL" report last 2>&1)" \
     "^  1 +success .* no .*segm accuracy 0\.2250 below the target 0\.5000"

# 3. a program that fails after printing its rates: failed, never a number
out=$(run gluonish --runs 1 --set gluonish.fail=1); rc=$?
is "a failing trainer: exit 5" "$rc" 5
report=$("$BENCHCTL" report last 2>&1)
like "  failed, quoting its last words" "$report" "^  1 +aborted .*Traceback: boom at step 5"
like "  no score" "$report" "MLPerf score: (no score|INVALID)"

# 4. the mila report, an array left unclosed, found by its pattern: throughput scored
out=$(run milaish --runs 2 --set milaish.batch_size=4); rc=$?
is "mila-like run: exit 0" "$rc" 0
report=$("$BENCHCTL" report last 2>&1)
like "  its rate: the last item's train_item.avg" "$report" "^  1 +success .* 405\.0"
like "  scored: the mean of the trials' rates, in its unit" "$report" \
     "MLPerf score: 405\.000 items/s \(mean throughput over 2 trials\)"
rm -f "$tmp"/logs/*.4242
out=$(run milaish --runs 1 --set milaish.steps=2); rc=$?
is "a run whose report has gone" "$rc" 0
rm -f "$tmp"/logs/*.4242
like "  no result, and which file was looked for" "$("$BENCHCTL" report last 2>&1)" \
     "no result: no file .*_1\\.json\\.\\*"

# 5. DLLogger records
out=$(run nvish --runs 1 --set nvish.batch_size=3); rc=$?
is "DLLogger run: exit 0" "$rc" 0
like "  train_perf_fps and BBOX_mAP read" "$("$BENCHCTL" report last 2>&1)" "^  1 +success .* 0\.3300 .* 300\.0"

# 6. a sweep of its batch size: each cell's rate as its file reads it
out=$("$BENCHCTL" --workloads-dir "$tmp/wl" sweep --system local nvish --set nvish.batch_size=2,4 \
      --logdir "$tmp/logs" 2>&1); rc=$?
is "sweep of an outside workload: exit 0" "$rc" 0
sw=$(sed -n 's/^sweep \(sw-[^:]*\):.*/\1/p' <<<"$out" | head -1)
is "  the cells' values are the trainer's rates" "$("$BENCHCTL" --workloads-dir "$tmp/wl" report "$sw" --json |
    python3 -c 'import json,sys; print(" ".join("%g" % c["value"] for c in json.load(sys.stdin)["cells"]))')" "200 400"
# 7. what the launch knows, in the command and the environment: {nodes},
# {ranks}, {ranks_per_node}; {rank} and {local_rank}, each rank's own; a key
# that reaches the program in an environment variable ("env")
cat > "$tmp/wl/where.json" <<'JSON'
{
  "title": "says where it runs",
  "program": "sh",
  "result": { "kind": "throughput", "read": "regex", "match": { "throughput": "^rank=0 .* speed ([0-9]+)" } },
  "command": ["{program}", "-c", "echo \"rank=$3 of $2 on $1 node(s), $4 a node, local $5, out=$6, BS=$BATCHSIZE speed 7\"",
              "where", "{nodes}", "{ranks}", "{rank}", "{ranks_per_node}", "{local_rank}", "{logdir}/r{rank}"],
  "keys": { "batch": { "type": "int", "default": 6, "env": "BATCHSIZE" } }
}
JSON
out=$(run where --runs 1 --set where.batch=12); rc=$?
is "a command of the launch's numbers and each rank's own: exit 0" "$rc" 0
log=$(cat "$tmp"/logs/*_1.log | grep -a 'rank=' | sed 's/^\[[0-9,]*\]<stdout>: *//' | sort)
like "  rank 0: its numbers, its own rank, the script's log directory, the key's variable" "$log" \
     "^rank=0 of 2 on 1 node\(s\), 2 a node, local 0, out=$tmp/logs/r0, BS=12 speed 7$"
like "  rank 1: its own" "$log" "^rank=1 of 2 on 1 node\(s\), 2 a node, local 1, out=$tmp/logs/r1, BS=12 speed 7$"
like "  read and scored" "$("$BENCHCTL" report last 2>&1)" "MLPerf score: 7\.000 images/s"
# a per-rank launch that meets at a rendezvous: torch.distributed's variables on every rank
cat > "$tmp/wl/rdv.json" <<'JSON'
{
  "title": "meets at a rendezvous", "program": "sh",
  "launch": { "shape": "per-rank", "rendezvous": true },
  "result": { "kind": "throughput", "read": "regex", "match": { "throughput": "^rank=0 .* speed ([0-9]+)" } },
  "command": ["{program}", "-c", "echo \"rank=$RANK local=$LOCAL_RANK world=$WORLD_SIZE at $MASTER_ADDR:$MASTER_PORT speed 5\""]
}
JSON
out=$(run rdv --runs 1); rc=$?
is "a rendezvous of two ranks: exit 0" "$rc" 0
log=$(cat "$tmp"/logs/*_1.log | grep -a 'rank=' | sed 's/^\[[0-9,]*\]<stdout>: *//' | sort)
like "  rank 0: RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR:MASTER_PORT" "$log" "^rank=0 local=0 world=2 at [0-9.]+:[0-9]+ speed 5$"
like "  rank 1: its own" "$log" "^rank=1 local=1 world=2 at [0-9.]+:[0-9]+ speed 5$"
cat > "$tmp/bad/pernode.json" <<'JSON'
{ "title": "t", "program": "python3", "command": ["{program}", "x.py", "--rank", "{local_rank}"],
  "launch": { "shape": "per-node", "launcher": "torchrun" } }
JSON
err=$("$BENCHCTL" --workloads-dir "$tmp/bad" render --system local pernode 2>&1); rc=$?
like "{local_rank} per node: refused, the launcher gives it" "$err" "pernode\.json:[0-9]+: 'command': \{rank\} and \{local_rank\} are a rank's own"
rm "$tmp/bad/pernode.json"
cat > "$tmp/bad/envkey.json" <<'JSON'
{ "title": "t", "program": "true", "command": ["{program}"],
  "keys": { "batch": { "type": "int", "env": "BATCH SIZE" } } }
JSON
err=$("$BENCHCTL" --workloads-dir "$tmp/bad" render --system local envkey 2>&1); rc=$?
like "a key's env that is not a variable's name" "$err" "envkey\.json:2: 'keys\.batch': 'env' is an environment variable's name"
done_testing

#!/bin/bash
# SSD through the real local Slurm cluster: `benchctl submit --system 4xlocal
# ssd --wait` runs 16 data-parallel ranks on the emulated nodes n1..n4 (MPI
# over TCP), and status, logs and report show the trial with its epochs,
# accuracy and throughput.  A short run on a small shapes dataset: learning is
# what t0670 proves; this proves the 16-rank path (sharding, gradient
# allreduce, evaluation gathered from every rank, MLPerf log on rank 0).
. "${srcdir:-.}/tests/lib.sh"
[ -x "$top_builddir/benchd-ssd" ] || skip_all "benchd-ssd not built (needs MPI and the COCO data pipeline)"
cluster_test 17217

check "a small shapes dataset" "$BENCHCTL" dataset synth --images 128 --val-images 32 --seed 3 -o "$tmp/coco-synth"
# 128 images over 16 ranks x 2: four steps an epoch; evaluation after each epoch
out=$(timeout 900 "$BENCHCTL" submit --system 4xlocal ssd --runs 1 --data "$tmp/coco-synth" --logdir "$tmp/logs" \
      --set ssd.epochs=2 --set 'ssd.eval_epochs=[1,2]' --set 'ssd.decay_epochs=[]' --wait 2>&1); rc=$?
is "submit --system 4xlocal ssd --wait exits 0" "$rc" 0
printf '%s\n' "$out" | tail -3 | sed 's/^/#   /'
like "submitted to Slurm" "$out" "^run [^ ]+ submitted: Slurm job [0-9]+ \((libslurm|sbatch)\), 1 trial"
id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted.*/\1/p')

json=$("$BENCHCTL" status "$id" --json)
is "the trial completed on n[1-4]" "$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["state"], " ".join(t["state"] + "@" + str(t["nodes"]) for t in j["trials"]))')" "completed completed@n[1-4]"

log=$("$BENCHCTL" logs "$id" --trial 1 2>&1)
like "16 ranks trained" "$log" "16 ranks"
like "global batch 32 (16 ranks x 2) in the MLPerf log" "$log" '"key": "global_batch_size", "value": 32[,}]'
is "two evaluations logged" "$(grep -c '"key": "eval_accuracy"' <<<"$log")" 2
like "the run stopped normally" "$log" '"key": "run_stop".*"status": "(success|aborted)"'

report=$("$BENCHCTL" report "$id" 2>&1)
printf '%s\n' "$report" | sed 's/^/#   /'
is "report --json: 2 epochs, an accuracy and a throughput" "$("$BENCHCTL" report "$id" --json | /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)[0]["trials"][0]
ok = t["epochs"] == 2 and t["accuracy"] is not None and 0 <= t["accuracy"] <= 1 and t["throughput"] > 0
print("ok" if ok else t)')" ok
done_testing

#!/bin/bash
# Mask R-CNN through the real local Slurm cluster: `benchctl submit --system
# 4xlocal maskrcnn --wait` runs 16 data-parallel ranks (one image each) on the
# emulated nodes n1..n4 (MPI over TCP); status, logs and report show the trial
# with both accuracies and its throughput.  A short run on a small dataset:
# learning is what t0770 and t0771 prove; this proves the 16-rank path
# (sharding, the gradient allreduce, batch norm synchronised over the ranks,
# bbox and segm evaluation gathered from every rank, the MLPerf log from rank 0).
. "${srcdir:-.}/tests/lib.sh"
[ -x "$top_builddir/benchd-maskrcnn" ] || skip_all "benchd-maskrcnn not built (needs MPI and the COCO data pipeline)"
cluster_test 17237
check "a small shapes dataset" "$BENCHCTL" dataset synth --images 64 --val-images 32 --size 128 --classes 3 \
      --objects 3 --seed 3 -o "$tmp/shapes"
# 16 ranks x 1 image: 4 iterations, evaluated after 2 and 4
out=$(timeout 900 "$BENCHCTL" submit --system 4xlocal maskrcnn --runs 1 --data "$tmp/shapes" --logdir "$tmp/logs" \
      --set maskrcnn.max_iter=4 --set 'maskrcnn.eval_iters=[2,4]' --set 'maskrcnn.decay_steps=[3]' \
      --set maskrcnn.warmup_iters=2 --wait 2>&1); rc=$?
is "submit --system 4xlocal maskrcnn --wait exits 0" "$rc" 0
printf '%s\n' "$out" | tail -3 | sed 's/^/#   /'
like "submitted to Slurm" "$out" "^run [^ ]+ submitted: Slurm job [0-9]+ \((libslurm|sbatch)\), 1 trial"
id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted.*/\1/p')
is "the trial completed on n[1-4]" "$("$BENCHCTL" status "$id" --json | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["state"], " ".join(t["state"] + "@" + str(t["nodes"]) for t in j["trials"]))')" "completed completed@n[1-4]"
log=$("$BENCHCTL" logs "$id" --trial 1 2>&1)
like "16 ranks x 1 image" "$log" "^# benchd-maskrcnn .*: 16 ranks x 1 images"
like "batch norm synchronised over them (4xlocal's sync_bn)" "$log" \
     "^# batch norm: synchronised, statistics over the 16 ranks' images$"
like "global batch 16 in the MLPerf log" "$log" '"key": "global_batch_size", "value": 16[,}]'
is "two evaluations, bbox and segm" "$(grep -c '"key": "eval_accuracy", "value": {"BBOX": ' <<<"$log")" 2
like "the run stopped normally" "$log" '"key": "run_stop".*"status": "(success|aborted)"'
report=$("$BENCHCTL" report "$id" 2>&1)
printf '%s\n' "$report" | sed 's/^/#   /'
is "report --json: both accuracies and a throughput" "$("$BENCHCTL" report "$id" --json | /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)[0]["trials"][0]
ok = all(t[k] is not None and 0 <= t[k] <= 1 for k in ("accuracy", "accuracy_segm")) and t["throughput"] > 0
print("ok" if ok else t)')" ok
done_testing

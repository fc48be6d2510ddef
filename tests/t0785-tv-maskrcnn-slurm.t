#!/bin/bash
# torchvision's Mask R-CNN (the workload torchvision-maskrcnn) through the
# real local Slurm cluster: `benchctl submit --system 4xlocal
# torchvision-maskrcnn --wait` on two of the emulated nodes, one rank each,
# meeting through torch.distributed's rendezvous (MASTER_ADDR: the first
# node of the job, a port per trial), both ranks training and evaluating,
# rank 0's MLPerf lines scored as benchd's own.  A short run: learning is
# what t0795 proves on local; this proves the multi-node path of someone
# else's trainer; and report --scaling over it on one and two nodes.
. "${srcdir:-.}/tests/lib.sh"
TV="$top_builddir/benchd-tv-maskrcnn"
[ -x "$TV" ] || skip_all "benchd-tv-maskrcnn not built"
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null ||
    skip_all "no torch or torchvision for /usr/bin/python3 (python3-torch, python3-torchvision)"
venv_module pycocotools.cocoeval pycocotools || skip_all "$venv_why"
mlperf_venv || skip_all "$mlperf_why"
cluster_test 17247
# pycocotools and mlperf-logging from the tests' venv, on every node: the
# system's env reaches every rank (mpirun -x)
sites=("$top_builddir"/venv/lib/python3*/site-packages)
check "a small shapes dataset" "$BENCHCTL" dataset synth --images 16 --val-images 8 --size 128 --classes 3 \
      --objects 3 --seed 3 -o "$tmp/shapes"
# NODES nodes x 1 rank x 1 image: 2 iterations, evaluated after 2, targets of 0;
# the batch norm of each rank's own images (4xlocal's synchronises it, which
# benchd-tv-maskrcnn refuses: torch's SyncBatchNorm needs CUDA)
tv_run() {
    local n=$1
    timeout 900 "$BENCHCTL" submit --system 4xlocal torchvision-maskrcnn --runs 1 --data "$tmp/shapes" \
        --logdir "$tmp/logs" --set nodes="$n" --set ranks_per_node=1 --set maskrcnn.ims_per_batch="$n" \
        --set maskrcnn.test_ims_per_batch="$n" --set maskrcnn.max_iter=2 --set 'maskrcnn.eval_iters=[2]' \
        --set 'maskrcnn.decay_steps=[2]' --set maskrcnn.warmup_iters=1 --set maskrcnn.target_map_bbox=0 \
        --set maskrcnn.target_map_segm=0 --set maskrcnn.sync_bn=false --set "env.BENCHD_PYTHONPATH=${sites[0]}" \
        --wait 2>&1
}
out=$(tv_run 2); rc=$?
is "submit --system 4xlocal torchvision-maskrcnn --wait exits 0" "$rc" 0
printf '%s\n' "$out" | tail -3 | sed 's/^/#   /'
like "submitted to Slurm" "$out" "^run [^ ]+ submitted: Slurm job [0-9]+ \((libslurm|sbatch)\), 1 trial"
id=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted.*/\1/p')
is "the trial completed on two nodes" "$("$BENCHCTL" status "$id" --json | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["state"], " ".join(t["state"] + "@" + str(t["nodes"]) for t in j["trials"]))')" "completed completed@n[1-2]"
log=$("$BENCHCTL" logs "$id" --trial 1 2>&1)
like "2 ranks x 1 image, met through the rendezvous" "$log" "^# benchd-tv-maskrcnn .*: 2 ranks x 1 images"
like "global batch 2 in the MLPerf log" "$log" '"key": "global_batch_size", "value": 2[,}]'
like "the targets reached" "$log" '"key": "run_stop".*"status": "success"'
report=$("$BENCHCTL" report "$id" 2>&1)
printf '%s\n' "$report" | sed 's/^/#   /'
like "report: a converged trial with both accuracies and a throughput" "$report" \
     "^  1 +success +[0-9.]+ +[0-9.]+ +1 +0\.[0-9]+/0\.[0-9]+ +0\.000/0\.000 +yes +[0-9.]+"
# the same on one node: report --scaling over the two
out=$(tv_run 1); rc=$?
is "one node, one rank: exit 0" "$rc" 0
id1=$(printf '%s\n' "$out" | sed -n 's/^run \([^ ]*\) submitted.*/\1/p')
rep=$("$BENCHCTL" report --scaling "$id1" "$id" 2>&1); rc=$?
is "report --scaling of torchvision-maskrcnn over 1 and 2 nodes: exit 0" "$rc" 0
printf '%s\n' "$rep" | sed 's/^/#   /'
like "  a row per node count" "$rep" "^2 +2 "
done_testing

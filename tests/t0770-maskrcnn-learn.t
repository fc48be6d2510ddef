#!/bin/bash
# Mask R-CNN learning for real (a long test, about 8-15 minutes on 2 cores;
# `make check-learn`, not `make check`): the small configuration of
# systems/local.json on the CPU backend learns the generated 128-pixel shapes
# dataset to a bbox AP and a segm AP of at least 0.30 on its held-out split
# within 1,500 iterations of global batch 4, through the real flow:
#
#   benchctl dataset synth --images 2000 --val-images 200 --size 128 \
#       --classes 3 --objects 3 --seed 1 -o DIR
#   benchctl submit --system local maskrcnn --data DIR --wait
#   benchctl report last
#
# The report must show a converged trial with both accuracies, its time to
# train and throughput; the trial log must pass the MLPerf compliance checker
# for maskrcnn (rulesets 1.0.0 and 0.7.0) but for the rules the small
# configuration breaks by design (below).  MASKRCNN_LEARN=0
# skips the whole test; MASKRCNN_LEARN_SYSTEM=4xlocal runs it on the local
# Slurm cluster (16 ranks, global batch 16, a quarter of the iterations).
. "${srcdir:-.}/tests/lib.sh"
[ "${MASKRCNN_LEARN:-1}" = 0 ] && skip_all "MASKRCNN_LEARN=0"
[ -x "$top_builddir/benchd-maskrcnn" ] || skip_all "benchd-maskrcnn not built (needs MPI and the COCO data pipeline)"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
system=${MASKRCNN_LEARN_SYSTEM:-local}
if [ "$system" = local ]; then
    own_runs
else
    cluster_test 17227
fi

check "the shapes dataset" "$BENCHCTL" dataset synth --images 2000 --val-images 200 --size 128 --classes 3 \
      --objects 3 --seed 1 -o "$tmp/shapes-128"
max_iter=$("$BENCHCTL" show "$system" --json | /usr/bin/python3 -c 'import json, sys
print(json.load(sys.stdin)["maskrcnn"]["max_iter"])')
start=$(date +%s)
out=$(timeout 3000 "$BENCHCTL" submit --system "$system" maskrcnn --runs 1 --data "$tmp/shapes-128" \
      --logdir "$tmp/logs" --wait 2>&1); rc=$?
echo "# submit --system $system maskrcnn --wait took $(( $(date +%s) - start )) s"
is "submit --system $system maskrcnn --wait exits 0" "$rc" 0
printf '%s\n' "$out" | tail -5 | sed 's/^/#   /'
report=$("$BENCHCTL" report last 2>&1)
printf '%s\n' "$report" | sed 's/^/#   /'
like "report: the trial converged with time, epochs, both accuracies and throughput" "$report" \
     "^  1 +success +[0-9.]+ +[0-9.]+ +[0-9]+ +0\.[0-9]+/0\.[0-9]+ +0\.300/0\.300 +yes +[0-9.]+"
json=$("$BENCHCTL" report last --json)
is "report --json: bbox and segm AP >= 0.30, time to train, epochs and throughput known" \
   "$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)[0]["trials"][0]
ok = t["status"] == "success" and t["converged"] and t["accuracy"] >= 0.30 and t["accuracy_segm"] >= 0.30 \
     and t["time_to_train_s"] > 0 and t["epochs"] > 0 and t["throughput"] > 0
print("ok" if ok else t)')" ok
printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)[0]["trials"][0]
print("# time to train %.1f min, %d epochs, bbox AP %.4f, segm AP %.4f, %.1f images/s" %
      (t["time_to_train_min"], t["epochs"], t["accuracy"], t["accuracy_segm"], t["throughput"]))'

logs=("$tmp"/logs/*_1.log)
log=${logs[0]}
# the step of the evaluation that reached the targets, within the configured iterations
last=$(sed -n 's/^step \([0-9]*\) (epoch [0-9]*): bbox mAP.*/\1/p' "$log" | tail -1)
is "the targets were reached at iteration ${last:-?}, at most $max_iter" \
   "$([ -n "$last" ] && [ "$last" -le "$max_iter" ] && echo yes)" yes
like "the run said so" "$(cat "$log")" "^# targets reached: bbox mAP >= 0\.[0-9]+ and segm mAP >= 0\.[0-9]+"

# the MLPerf compliance checker on the trial log.  The small configuration
# breaks three of the checker's rules for COCO by design: candidates per image
# a multiple of 1000 (it keeps 200), two decay steps (it has one), and the
# COCO accuracies BBOX >= 0.377, SEGM >= 0.339 (this dataset's targets are
# 0.30).  Those are the only failed checks allowed; t0760 runs the checker on
# settings that keep its rules.
allowed='eval_accuracy|num_image_candidates|opt_learning_rate_decay_steps'
mlperf_venv
for rs in 1.0.0 0.7.0; do
    if [ -n "$mlperf_why" ]; then
        skip 2 "$mlperf_why"
        continue
    fi
    res=$(mlperf_check "$rs" "$log")
    like "ruleset $rs: the checker ran on the trial log" "$res" "SUCCESS|FAILED"
    failed=$(grep -oE "CHECK for '[A-Za-z_]+'|Failed checks for [A-Za-z_]+" <<<"$res" |
             sed -E "s/.*for '?([A-Za-z_]+)'?/\1/" | sort -u | grep -vxE "$allowed" | tr '\n' ' ')
    is "ruleset $rs: no failed check but the small configuration's ($allowed)" "$failed" ""
    grep -E "^(ERROR|WARNING) " <<<"$res" | grep -v "ERROR - FAILED" | sed 's/^/#   /' | head -5
done
done_testing

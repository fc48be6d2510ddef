#!/bin/bash
# Faster R-CNN learning for real (a long test, `make check-learn`): the
# bundled workload fasterrcnn, benchd-maskrcnn with its mask branch off, in
# the small configuration of systems/local.json, learns a generated
# 128-pixel shapes dataset (seed FASTERRCNN_LEARN_SEED, default 2: not the
# Mask R-CNN test's) to a bbox AP of at least 0.30 on its held-out split
# within 1,500 iterations of global batch 4, through the real flow:
#
#   benchctl dataset synth --images 2000 --val-images 200 --size 128 \
#       --classes 3 --objects 3 --seed 2 -o DIR
#   benchctl submit --system local fasterrcnn --data DIR --wait
#   benchctl report last
#
# The report must show a converged trial with its bbox accuracy (no segm),
# time to train and throughput; the log MLPerf-style lines of benchmark
# fasterrcnn and no mask loss.  FASTERRCNN_LEARN=0 skips the test.
. "${srcdir:-.}/tests/lib.sh"
[ "${FASTERRCNN_LEARN:-1}" = 0 ] && skip_all "FASTERRCNN_LEARN=0"
[ -x "$top_builddir/benchd-maskrcnn" ] || skip_all "benchd-maskrcnn not built (needs MPI and the COCO data pipeline)"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
own_runs
seed=${FASTERRCNN_LEARN_SEED:-2}
check "the shapes dataset (seed $seed)" "$BENCHCTL" dataset synth --images 2000 --val-images 200 --size 128 \
      --classes 3 --objects 3 --seed "$seed" -o "$tmp/shapes-128" --quiet
max_iter=$("$BENCHCTL" show local --json | /usr/bin/python3 -c 'import json, sys
print(json.load(sys.stdin)["fasterrcnn"]["max_iter"])')
start=$(date +%s)
out=$(timeout 3000 "$BENCHCTL" submit --system local fasterrcnn --runs 1 --data "$tmp/shapes-128" \
      --logdir "$tmp/logs" --wait --quiet 2>&1); rc=$?
echo "# submit --system local fasterrcnn --wait took $(( $(date +%s) - start )) s"
is "submit --system local fasterrcnn --wait exits 0" "$rc" 0
printf '%s\n' "$out" | tail -5 | sed 's/^/#   /'
log=$(ls "$tmp"/logs/*_1.log)
report=$("$BENCHCTL" report last 2>&1)
printf '%s\n' "$report" | sed 's/^/#   /'
like "report: the trial converged with time, epochs, its bbox accuracy over 0.30 and throughput" "$report" \
     "^  1 +success +[0-9.]+ +[0-9.]+ +[0-9]+ +0\.[0-9]+ +0\.300 +yes +[0-9.]+"
is "report --json: bbox AP >= 0.30 and no segm" "$("$BENCHCTL" report last --json | /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)[0]["trials"][0]
ok = t["status"] == "success" and t["converged"] and t["accuracy"] >= 0.30 and t.get("accuracy_segm") is None \
     and t["time_to_train_s"] > 0 and t["throughput"] > 0
print("ok" if ok else t)')" ok
last=$(sed -n 's/^step \([0-9]*\) (epoch [0-9]*): bbox mAP.*/\1/p' "$log" | tail -1)
is "the target was reached at iteration ${last:-?}, at most $max_iter" \
   "$([ -n "$last" ] && [ "$last" -le "$max_iter" ] && echo yes)" yes
like "the run said so" "$(cat "$log")" "^# target reached: bbox mAP >= 0\.3"
like "MLPerf lines of benchmark fasterrcnn" "$(cat "$log")" '"key": "submission_benchmark", "value": "fasterrcnn"'
like "  its accuracy is the bbox AP alone" "$(cat "$log")" '"key": "eval_accuracy", "value": \{"BBOX": [0-9.e-]+\}'
like "no mask head" "$(cat "$log")" "no mask head \(Faster R-CNN\)"
unlike "  no mask loss" "$(cat "$log")" "mask [0-9]"
done_testing

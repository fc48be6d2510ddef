#!/bin/bash
# A fixed schedule (ssd.schedule fixed, benchd-ssd --schedule fixed): the
# run trains every epoch of its schedule, evaluates as configured and at its
# end, never stops at the target, and its report gives the whole time, the
# final and best accuracy and when the target was met on the way; against
# the same run to the target (time-to-train), which stops at the first
# evaluation that meets it.  report --scaling compares on the schedule's time
# and the final accuracy.
. "${srcdir:-.}/tests/lib.sh"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
[ -x "$top_builddir/benchd-ssd" ] || skip_all "benchd-ssd not built"
own_runs
export OMP_WAIT_POLICY=passive
check "a small shapes dataset" "$BENCHCTL" dataset synth --images 32 --val-images 8 --seed 4 -o "$tmp/data" --quiet
# target 0: met at the first evaluation, after epoch 1 of 2
run=(submit --system local ssd --data "$tmp/data" --logdir "$tmp/logs" --runs 1 --set ssd.epochs=2
     --set 'ssd.eval_epochs=[1]' --set 'ssd.decay_epochs=[2]' --set ssd.image_size=64 --set ssd.target_map=0
     --wait --quiet)

out=$("$BENCHCTL" "${run[@]}" --set ssd.schedule=fixed 2>&1); rc=$?
is "a fixed schedule of 2 epochs: exit 0" "$rc" 0
log=$(ls "$tmp"/logs/*_1.log)
is "  both epochs trained, evaluated after the first and at the end" \
   "$(grep -c '"key": "epoch_stop"' "$log") $(grep -c '"key": "eval_accuracy"' "$log")" "2 2"
like "  the trainer said the target was met and went on" "$(cat "$log")" \
     "^# target met at step [0-9]+ \(epoch 1\); the fixed schedule goes on"
report=$("$BENCHCTL" report last 2>&1)
printf '%s\n' "$report" | sed 's/^/#   /'
like "  report: the whole time, 2 epochs, final and best accuracy, the target met in epoch 1" "$report" \
     "^  1 +success +[0-9.]+ +2 +[0-9.]+ +[0-9.]+ +0\.000 +[0-9.]+ min, ep 1 +[0-9.]+"
like "  no MLPerf score, the means of what it reached" "$report" \
     "^  fixed schedule \(no MLPerf score: the run does not stop at the target\): mean [0-9.]+ min, final accuracy [0-9.]+, best [0-9.]+ over 1 trial; the target met in 1 of them"
is "  report --json: schedule, best accuracy, target met" "$("$BENCHCTL" report last --json | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)[0]; t = r["trials"][0]
print(r["schedule"], t["epochs"], t["target_met"], t["best_accuracy"] >= t["accuracy"], t["target_met_min"] <= t["time_to_train_min"])')" \
   "fixed 2 True True True"
fixed_id=$("$BENCHCTL" runs --json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')
scaling=$("$BENCHCTL" report --scaling "$fixed_id" 2>&1)
like "  report --scaling: on the schedule's time and the final accuracy" "$scaling" \
     "on the fixed schedule's time.*"$'\n'"nodes +ranks +run +time min +final "
like "  and where the target was met" "$scaling" "target met in 1 of 1 trials, at [0-9.]+ min"

out=$("$BENCHCTL" "${run[@]}" 2>&1); rc=$?
is "the same to the target (time-to-train): exit 0" "$rc" 0
log=$(ls -t "$tmp"/logs/*_1.log | head -1)
is "  it stops at the first evaluation that meets the target: one epoch" \
   "$(grep -c '"key": "epoch_stop"' "$log")" 1
like "  scored as before" "$("$BENCHCTL" report last 2>&1)" "^  MLPerf score: no score: 1 of 5 trials"

out=$("$BENCHCTL" render --system local ssd --set ssd.schedule=fixed 2>&1)
like "render: --schedule fixed reaches the trainer" "$out" " --schedule fixed "
out=$("$BENCHCTL" render --system local ssd --set ssd.schedule=sometimes 2>&1); rc=$?
is "an unknown schedule: exit 3" "$rc" 3
like "  naming the choices" "$out" "schedule.*time-to-train.*fixed"
out=$("$top_builddir/benchd-ssd" --data "$tmp/data" --schedule sometimes 2>&1); rc=$?
is "benchd-ssd --schedule sometimes: exit 2" "$rc" 2
like "  one line naming the option" "$out" "^benchd-ssd: --schedule: expected time-to-train or fixed, got 'sometimes'$"
done_testing

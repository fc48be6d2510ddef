#!/bin/bash
# A waiting user sees the run move: submit --wait's line says where the
# running trial is, from its own log as it is written (trial k of N, epoch
# and step of the total, images/s, the last loss and evaluation, the time
# left): one line redrawn on a terminal (script(1) gives it one), a plain
# line per change of state and at most one a minute of progress when the
# output is not a terminal, and nothing of it with --quiet.
. "${srcdir:-.}/tests/lib.sh"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
[ -x "$top_builddir/benchd-ssd" ] || skip_all "benchd-ssd not built"
own_runs
export OMP_WAIT_POLICY=passive
check "a small shapes dataset" "$BENCHCTL" dataset synth --images 64 --val-images 8 --seed 2 -o "$tmp/data"
run=(submit --system local ssd --data "$tmp/data" --logdir "$tmp/logs" --runs 1 --set ssd.epochs=30
     --set 'ssd.eval_epochs=[10,20,30]' --set 'ssd.decay_epochs=[20]' --set ssd.image_size=64 --wait)

if command -v script >/dev/null; then
    script -qec "$(printf '%q ' "$BENCHCTL" "${run[@]}")" "$tmp/tty" >/dev/null 2>&1; rc=$?
    is "on a terminal: exit 0" "$rc" 0
    lines=$(tr '\r' '\n' < "$tmp/tty" | sed 's/\x1b\[K//g' | grep -a '^run .*running, trial 1/1: ')
    like "  the line says the epoch of the total, the step, the rate, the loss and the time left" "$lines" \
         "running, trial 1/1: epoch [0-9]+/30, step 1/1, [0-9.]+ images/s, loss [0-9.e+-]+, .*about [0-9]+:[0-9]{2}:[0-9]{2} left"
    like "  and, after the first evaluation, its accuracy" "$lines" "eval [0-9]\.[0-9]{3}"
    is "  redrawn in place: one line, not one per look" "$(grep -ac $'\n' <(tr -d '\r' < "$tmp/tty" | grep -a 'running, trial'))" 1
else
    skip 4 "no script(1) (bsdutils) to give benchctl a terminal"
fi
out=$("$BENCHCTL" "${run[@]}" 2>&1); rc=$?
is "not a terminal: exit 0" "$rc" 0
like "  the trial's progress at most once a minute (the run takes less than two), beside the changes of state" \
   "$(grep -c '^run .*: running, trial 1/1: epoch [0-9]*/30' <<<"$out")" "^[12]$"
out=$("$BENCHCTL" "${run[@]}" --quiet 2>&1); rc=$?
is "--quiet: exit 0" "$rc" 0
unlike "  the state only, not the trial's progress" "$out" "images/s"
# the long local steps: dataset synth and check move on a terminal too
synth=(dataset synth --images 400 --val-images 40 --size 128 --seed 3 --threads 1 -o "$tmp/synth")
if command -v script >/dev/null; then
    script -qec "$(printf '%q ' "$BENCHCTL" "${synth[@]}")" "$tmp/tty2" >/dev/null 2>&1; rc=$?
    is "dataset synth on a terminal: exit 0" "$rc" 0
    like "  its line: the share, the images of the total, the rate and the time left" \
         "$(tr '\r' '\n' < "$tmp/tty2" | sed 's/\x1b\[K//g')" \
         "^dataset synth: 100% 440/440 images, [0-9.]+/s, [0-9]+s elapsed, [0-9]+s left"
    script -qec "$(printf '%q ' "$BENCHCTL" dataset check "$tmp/synth" --decode --split val2017)" "$tmp/tty3" \
        >/dev/null 2>&1; rc=$?
    is "dataset check --decode on a terminal: exit 0" "$rc" 0
    like "  its line: the batches decoded of the split" "$(tr '\r' '\n' < "$tmp/tty3" | sed 's/\x1b\[K//g')" \
         "^dataset check val2017: 100% 3/3 batches decoded"
    script -qec "$(printf '%q ' "$BENCHCTL" "${synth[@]}" --force --quiet)" "$tmp/tty4" >/dev/null 2>&1
    unlike "  --quiet: no line" "$(cat "$tmp/tty4")" "images, .*elapsed"
else
    skip 5 "no script(1) (bsdutils) to give benchctl a terminal"
fi
out=$("$BENCHCTL" "${synth[@]}" --force 2>&1)
unlike "dataset synth, not a terminal: no progress in a run of seconds (a line a minute at most)" "$out" "elapsed"
done_testing

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
done_testing

#!/bin/bash
# benchd-ssd on a tiny generated dataset: the command line of the rendered
# scripts, usage errors, a short data-parallel run on 2 ranks with its
# progress and MLPerf lines, reaching a target, NaN loss, checkpoints and
# resuming, bad data, synthetic mode.  (Learning for real: t0670.)
. "${srcdir:-.}/tests/lib.sh"
SSD="$top_builddir/benchd-ssd"
[ -x "$SSD" ] || skip_all "benchd-ssd not built (needs MPI and the COCO data pipeline)"
command -v mpirun >/dev/null || skip_all "mpirun not installed"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# the flags of the rendered launch scripts are all known to the trainer
help=$("$SSD" --help); rc=$?
is "--help exits 0" "$rc" 0
# the trainer's command: from the line naming benchd-ssd to the end of the command
flags=$({ "$BENCHCTL" render --system local ssd; "$BENCHCTL" render --system 4xC4140 ssd; } |
        awk '/benchd-ssd/ { on = 1 } on { print } on && !/\\$/ { on = 0 }' | sed 's/.*benchd-ssd//')
missing=
while read -r f; do
    grep -q -- "^  $f" <<<"$help" || missing="$missing $f"
done < <(grep -o -- '--[a-z-]*' <<<"$flags" | sort -u)
is "every flag of the rendered ssd scripts is in --help" "$missing" ""
like "--version" "$("$SSD" --version)" "^benchd-ssd [0-9]"

# usage errors: one line, exit 2
usage_prog=$SSD
usage_err "unknown option" "unknown option '--frobnicate'" --data x --frobnicate
usage_err "bad number" "--batch-size: expected an integer from 1 to 65536, got 'zero'" --data x --batch-size zero
usage_err "bad backbone" "--backbone: expected resnet34 or resnet18, got 'vgg16'" --data x --backbone vgg16
usage_err "bad list" "--eval-epochs: expected increasing epochs" --data x --eval-epochs 5,3
usage_err "evaluation after the last epoch" "--eval-epochs: epoch 3 is beyond --epochs 2$" \
    --data x --epochs 2 --eval-epochs 1,3,4
usage_err "no data" "--data DIR is required" --batch-size 2
usage_err "amp on the CPU" "--precision amp needs --backend cuda" --data x --precision amp
usage_err "missing argument" "option '--lr' needs an argument" --data x --lr
# options come before MPI starts: an MPI that cannot start (no such pml) does
# not hide a usage error, and a rank other than 0 says nothing
out=$(OMPI_MCA_pml=nonesuch "$SSD" --data x --frobnicate 2>&1 >/dev/null); rc=$?
is "usage error, MPI not started: exit 2" "$rc" 2
is "  only the usage line" "$out" "benchd-ssd: unknown option '--frobnicate' (see --help)"
out=$(OMPI_COMM_WORLD_RANK=1 OMPI_MCA_pml=nonesuch "$SSD" --data x --frobnicate 2>&1); rc=$?
is "usage error on rank 1: exit 2" "$rc" 2
is "  silent" "$out" ""

# a tiny dataset
"$BENCHCTL" dataset synth --images 48 --val-images 12 --size 96 --classes 3 --seed 5 -o "$tmp/ds" >/dev/null
decay=40,50
small=(--batch-size 4 --image-size 64 --backbone resnet18 --width-mult 0.125 --threads 1 --loader-workers 1
       --lr 0.005 --warmup-epochs 0.5 --decay-epochs "$decay" --platform test-box --seed 7 --log-interval 2)

out=$("$SSD" --data "$tmp/nowhere" "${small[@]}" 2>&1); rc=$?
is "missing dataset: exit 1" "$rc" 1
like "missing dataset: the file is named" "$out" "benchd-ssd: .*$tmp/nowhere/annotations/instances_train2017.json"

# 2 ranks, 2 epochs, evaluation after each, a target out of reach
out=$(timeout 600 mpirun -np 2 --bind-to none "$SSD" --data "$tmp/ds" "${small[@]}" --epochs 2 --eval-epochs 1,2 \
      --target-map 0.99 2>"$tmp/err"); rc=$?
is "2 ranks: exit 0 when the epochs run out" "$rc" 0
sed 's/^/#   /' "$tmp/err" | grep -v warning | head -5
like "progress lines: loss, lr, images/s" "$out" "^epoch 1/2 step [0-9]+/[0-9]+ \([0-9]+\): loss [0-9.]+ \(loc [0-9.]+, conf [0-9.]+\), lr [0-9.e-]+, [0-9.]+ images/s"
like "evaluation line" "$out" "^epoch 2: bbox mAP [0-9.]+ \(AP50"
like "not reached" "$out" "^# target mAP 0.9900 not reached"
is "MLPerf lines from rank 0 only: one run_start" "$(grep -c '"key": "run_start"' <<<"$out")" 1
check "every MLPerf line is one JSON object" /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    if ":::MLLOG" in line:
        json.loads(line.split(":::MLLOG", 1)[1])
' <<<"$out"
keys=$(grep -o '"key": "[a-z_]*"' <<<"$out" | sort -u | sed 's/"key": //; s/"//g' | tr '\n' ' ')
for k in cache_clear init_start init_stop run_start run_stop submission_benchmark submission_org \
         submission_division submission_status submission_platform seed global_batch_size train_samples \
         eval_samples opt_base_learning_rate opt_weight_decay opt_learning_rate_warmup_steps \
         opt_learning_rate_warmup_factor opt_learning_rate_decay_boundary_epochs \
         opt_learning_rate_decay_boundary_steps epoch_start epoch_stop block_start block_stop eval_start eval_stop \
         eval_accuracy eval_target throughput; do
    like "MLLOG key $k" " $keys" " $k "
done
like "global batch = 2 ranks x 4" "$out" '"key": "global_batch_size", "value": 8,'
like "base lr: 2.5e-3 max(1, round(0.005 / 2.5e-3 x 8 / 32)) = 2.5e-3" "$out" '"key": "opt_base_learning_rate", "value": 0.0025,'
like "the platform" "$out" '"key": "submission_platform", "value": "test-box"'
like "eval_accuracy with its epoch" "$out" '"key": "eval_accuracy", "value": [0-9.e-]+, "metadata": \{[^}]*"epoch_num": 2\}'
like "run_stop aborted when the target was not reached" "$out" '"key": "run_stop", .*"status": "aborted"'
printf '%s\n' "$out" > "$tmp/run.log"

# a target reached at the first evaluation: success
out=$("$SSD" --data "$tmp/ds" "${small[@]}" --epochs 3 --eval-epochs 1,2,3 --target-map 0 2>/dev/null); rc=$?
is "target reached: exit 0" "$rc" 0
like "target reached: run_stop success" "$out" '"key": "run_stop", .*"status": "success"'
is "target reached: stopped after the first evaluation" "$(grep -c '"key": "epoch_start"' <<<"$out")" 1

# the default warmup (5 epochs: int(5 x 46 / 4) = 57 steps) passes the MLPerf
# compliance checker's opt_learning_rate_warmup_steps >= 1 (rule sets 0.7.0
# and 1.0.0; eval_accuracy < 0.23 is the one failure a tiny run may have)
nowarm=(--batch-size 4 --image-size 64 --backbone resnet18 --width-mult 0.125 --threads 1 --seed 7)
out=$("$SSD" --data "$tmp/ds" "${nowarm[@]}" --epochs 1 --eval-epochs 1 --target-map 0 2>"$tmp/err"); rc=$?
is "default warmup: exit 0" "$rc" 0
like "default warmup: 5 epochs, 57 steps" "$out" "^# 46 training images, 11 steps per epoch, .*, 57 warmup steps"
like "default warmup: logged" "$out" '"key": "opt_learning_rate_warmup_steps", "value": 57,'
is "default warmup: no warning" "$(grep -c warmup "$tmp/err")" 0
printf '%s\n' "$out" > "$tmp/warm.log"
mlperf_venv
for rs in 1.0.0 0.7.0; do
    if [ -n "$mlperf_why" ]; then
        skip 2 "$mlperf_why"
        continue
    fi
    res=$(mlperf_check "$rs" "$tmp/warm.log")
    like "default warmup, ruleset $rs: the checker ran" "$res" "Failed checks for eval_accuracy|SUCCESS"
    is "default warmup, ruleset $rs: no failed check but eval_accuracy" \
       "$(grep -E "CHECK for|Failed checks|failed test" <<<"$res" | grep -vc eval_accuracy)" 0
done
out=$("$SSD" --data "$tmp/ds" "${nowarm[@]}" --warmup-epochs 0 --epochs 1 --max-steps 1 2>"$tmp/err"); rc=$?
is "--warmup-epochs 0: exit 0" "$rc" 0
like "--warmup-epochs 0: a warning that the log is not compliant" "$(cat "$tmp/err")" \
     "^benchd-ssd: warning: no warmup step \(--warmup-epochs 0\): the MLPerf compliance checker needs opt_learning_rate_warmup_steps >= 1"

# NaN loss: every rank stops, run_stop aborted, a clear message, exit 1
out=$(timeout 300 mpirun -np 2 --bind-to none "$SSD" --data "$tmp/ds" "${small[@]}" --epochs 2 --inject-nan 3 2>"$tmp/err"); rc=$?
is "NaN loss: exit 1" "$rc" 1
like "NaN loss: the message" "$(cat "$tmp/err")" "benchd-ssd: the loss is NaN at epoch 1, step 3: stopping \(run_stop status aborted\)"
like "NaN loss: run_stop aborted" "$out" '"key": "run_stop", .*"status": "aborted"'
is "NaN loss: no step after it" "$(grep -c '^epoch 1/2 step [0-9]*/[0-9]* (4)' <<<"$out")" 0

# checkpoints: one epoch, then a second run resumes after it
ck="$tmp/ck"
out=$("$SSD" --data "$tmp/ds" "${small[@]}" --epochs 1 --eval-epochs '' --checkpoint "$ck" 2>/dev/null); rc=$?
is "checkpoint run: exit 0" "$rc" 0
check "checkpoint written" test -s "$ck/ssd.ckpt"
out=$("$SSD" --data "$tmp/ds" "${small[@]}" --epochs 2 --eval-epochs '' --checkpoint "$ck" 2>/dev/null); rc=$?
is "resumed run: exit 0" "$rc" 0
like "resumed after epoch 1" "$out" "^# resumed from '$ck/ssd.ckpt' after epoch 1"
is "resumed run: only epoch 2" "$(grep -o '"key": "epoch_start".*"epoch_num": [0-9]*' <<<"$out" | grep -o '[0-9]*$' | tr '\n' ' ')" "2 "
out=$("$SSD" --data "$tmp/ds" "${small[@]}" --width-mult 0.25 --epochs 2 --checkpoint "$ck" 2>&1); rc=$?
is "checkpoint of another model: exit 1" "$rc" 1
like "checkpoint of another model: one line" "$out" "benchd-ssd: .*ssd.ckpt"
head -c 1000 "$ck/ssd.ckpt" > "$tmp/trunc" && mv "$tmp/trunc" "$ck/ssd.ckpt"
out=$("$SSD" --data "$tmp/ds" "${small[@]}" --epochs 2 --checkpoint "$ck" 2>&1); rc=$?
is "damaged checkpoint: exit 1" "$rc" 1
like "damaged checkpoint: one line" "$out" "benchd-ssd: checkpoint '$ck/ssd.ckpt': "

# bad data: a corrupt JPEG and a missing one are skipped with a warning
cp -r "$tmp/ds" "$tmp/bad"
imgs=("$tmp"/bad/train2017/*.jpg)
first=$(basename "${imgs[0]}"); second=$(basename "${imgs[1]}")
head -c 300 "$tmp/bad/train2017/$first" > "$tmp/bad/train2017/x" && mv "$tmp/bad/train2017/x" "$tmp/bad/train2017/$first"
rm "$tmp/bad/train2017/$second"
out=$("$SSD" --data "$tmp/bad" "${small[@]}" --epochs 1 --eval-epochs 1 2>"$tmp/err"); rc=$?
is "bad data: exit 0" "$rc" 0
like "bad data: the missing file is reported" "$(cat "$tmp/err")" "warning: .*$second.*skipped"
like "bad data: the run completed" "$out" '"key": "run_stop"'
# the same in the validation split: reported, left out of the evaluation
vals=("$tmp"/bad/val2017/*.jpg)
echo junk > "${vals[0]}"; rm "${vals[1]}"
out=$("$SSD" --data "$tmp/bad" "${small[@]}" --epochs 1 --eval-epochs 1 2>"$tmp/err"); rc=$?
is "bad validation data: exit 0" "$rc" 0
like "bad validation data: the corrupt JPEG is reported" "$(cat "$tmp/err")" \
     "warning: .*$(basename "${vals[0]}").*not a JPEG"
like "bad validation data: the missing one too" "$(cat "$tmp/err")" "warning: .*$(basename "${vals[1]}").*missing"
like "bad validation data: evaluated" "$out" '"key": "eval_accuracy"'
for v in "${vals[@]}"; do [ -f "$v" ] && echo junk > "$v"; done
out=$("$SSD" --data "$tmp/bad" "${small[@]}" --epochs 1 --eval-epochs 1 2>&1); rc=$?
is "no validation image decodes: exit 1" "$rc" 1
like "no validation image decodes: says so" "$out" \
     "benchd-ssd: .*evaluation: none of the $((${#vals[@]} - 1)) validation images in $tmp/bad/val2017 could be decoded"
like "no validation image decodes: the run is aborted" "$out" '"key": "run_stop".*"status": "aborted"'

# pretrained backbone weights (torchvision names; layer4 and fc are not used)
if /usr/bin/python3 -c 'import torchvision' 2>/dev/null; then
    /usr/bin/python3 "$srcdir/trainer/tools/convert-torchvision.py" --random resnet18 --seed 1 "$tmp/r18.bdw" >/dev/null
    out=$("$SSD" --data "$tmp/ds" "${small[@]}" --width-mult 1 --epochs 1 --max-steps 1 --pretrained "$tmp/r18.bdw" 2>&1); rc=$?
    is "pretrained resnet18: exit 0" "$rc" 0
    like "pretrained resnet18: loaded" "$out" "^# pretrained backbone: [0-9]+ tensors from '$tmp/r18.bdw'"
    out=$("$SSD" --data "$tmp/ds" "${small[@]}" --width-mult 1 --backbone resnet34 --epochs 1 --pretrained "$tmp/r18.bdw" 2>&1); rc=$?
    is "resnet18 weights for a resnet34: exit 1" "$rc" 1
    like "resnet18 weights for a resnet34: one line naming a missing tensor" "$out" "benchd-ssd: weights '$tmp/r18.bdw': has no tensor 'layer1.2"
else
    echo "# no torchvision: pretrained weights not checked"
fi

# synthetic data: no dataset, no evaluation
out=$("$SSD" --synthetic "${small[@]}" --max-steps 3 2>&1); rc=$?
is "synthetic: exit 0" "$rc" 0
like "synthetic: 81 classes" "$out" "81 classes"
is "synthetic: no evaluation" "$(grep -c '"key": "eval_start"' <<<"$out")" 0

# synchronised batch norm (test-trainer-syncbn checks its arithmetic): 2
# ranks train with it and say so; --sync-bn takes 0 or 1
out=$(timeout 300 mpirun -np 2 --bind-to none "$SSD" --synthetic "${small[@]}" --max-steps 2 --sync-bn 1 2>&1); rc=$?
is "2 ranks, --sync-bn 1: exit 0" "$rc" 0
like "  said so" "$out" "^# batch norm: synchronised, statistics over the 2 ranks' images$"
like "  and trained" "$out" "^epoch 1/[0-9]+ step 2/"
usage_err "--sync-bn 2" "--sync-bn: expected 0 or 1, got '2'" --data x --sync-bn 2

# the CUDA backend where there is none
out=$("$SSD" --synthetic "${small[@]}" --backend cuda --max-steps 1 2>&1); rc=$?
if [ "$rc" -ne 0 ]; then
    is "cuda without a GPU or CUDA: exit 1" "$rc" 1
    like "cuda without a GPU or CUDA: one line" "$out" "benchd-ssd: .*(CUDA|GPU|cuda)"
fi
done_testing

#!/bin/bash
# benchd-maskrcnn on a tiny generated dataset: the command line of the
# rendered scripts, usage errors, short data-parallel runs with progress
# lines, both evaluations and the MLPerf log (through the compliance
# checker), reaching the targets, NaN loss, checkpoints and resuming after a
# kill, and 2 ranks on split batches against 1 rank on the whole batch.
. "${srcdir:-.}/tests/lib.sh"
MR="$top_builddir/benchd-maskrcnn"
[ -x "$MR" ] || skip_all "benchd-maskrcnn not built (needs MPI and the COCO data pipeline)"
command -v mpirun >/dev/null || skip_all "mpirun not installed"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# the flags of the rendered launch scripts are all known to the trainer
help=$("$MR" --help); rc=$?
is "--help exits 0" "$rc" 0
flags=$(for s in local 4xlocal p3dn; do maskrcnn_flags "$s"; done)
missing=
while read -r f; do
    grep -q -- "^  $f" <<<"$help" || missing="$missing $f"
done < <(grep -o -- '--[a-z-]*' <<<"$flags" | sort -u)
is "every flag of the rendered maskrcnn scripts is in --help" "$missing" ""
like "--version" "$("$MR" --version)" "^benchd-maskrcnn [0-9]"
# and every option of --help in the manual page
undoc=
while read -r f; do
    grep -qF -- "$(sed 's/-/\\-/g' <<<"$f")" "$srcdir/man/benchd-maskrcnn.1" || undoc="$undoc $f"
done < <(grep -o -- '^  --[a-z-]*' <<<"$help" | sed 's/^ *//')
is "every option of --help is in benchd-maskrcnn.1" "$undoc" ""

# usage errors: one line, exit 2
usage_prog=$MR
usage_err "unknown option" "unknown option '--frobnicate'" --data x --frobnicate
usage_err "bad number" "--ims-per-batch: expected an integer from 1 to 65536, got 'two'" --data x --ims-per-batch two
usage_err "bad mode" "--mode: expected mlperf or torchvision, got 'detectron'" --data x --mode detectron
usage_err "no data" "--data DIR is required" --ims-per-batch 2
# synchronised batch norm needs trained batch norm: the reference preset's is frozen
usage_err "sync BN of the reference preset" \
          "--sync-bn 1: batch norm is frozen \(--config reference; --frozen-bn 0 trains it\): it has no batch statistics" \
          --data x --sync-bn 1
usage_err "sync BN of frozen BN" "--sync-bn 1: batch norm is frozen \(--frozen-bn 1\)" \
          --data x --config small --frozen-bn 1 --sync-bn 1
# options come before MPI starts: an MPI that cannot start (no such pml) does
# not hide a usage error, and a rank other than 0 says nothing
out=$(OMPI_MCA_pml=nonesuch "$MR" --data x --frobnicate 2>&1 >/dev/null); rc=$?
is "usage error, MPI not started: exit 2" "$rc" 2
is "  only the usage line" "$out" "benchd-maskrcnn: unknown option '--frobnicate' (see --help)"
out=$(OMPI_COMM_WORLD_RANK=1 OMPI_MCA_pml=nonesuch "$MR" --data x --frobnicate 2>&1); rc=$?
is "usage error on rank 1: exit 2" "$rc" 2
is "  silent" "$out" ""
out=$(mpirun -np 2 --bind-to none "$MR" --data x --ims-per-batch 3 2>&1 >/dev/null); rc=$?
is "--ims-per-batch 3 on 2 ranks: exit 2" "$rc" 2
like "  one line saying so" "$out" "^benchd-maskrcnn: --ims-per-batch 3 is not a multiple of the 2 ranks$"
is "  only one line from the trainer (rank 0)" "$(grep -c '^benchd-maskrcnn' <<<"$out")" 1

# a tiny dataset
"$BENCHCTL" dataset synth --images 40 --val-images 8 --size 128 --classes 3 --objects 3 --seed 1 -o "$tmp/ds" >/dev/null
out=$("$MR" --data "$tmp/nowhere" --config small 2>&1); rc=$?
is "missing dataset: exit 1" "$rc" 1
like "missing dataset: the file is named" "$out" "benchd-maskrcnn: .*$tmp/nowhere/annotations/instances_train2017.json"

# the rendered command line of the local system runs as it is (one step)
read -r -a local_flags <<<"$(maskrcnn_flags local | tr -d '"' | sed 's/\$seed/1/' | tr '\n' ' ')"
out=$("$MR" "${local_flags[@]}" --data "$tmp/ds" --max-steps 1 2>&1); rc=$?
is "the local system's rendered options: exit 0" "$rc" 0
like "  the small configuration" "$out" "^# benchd-maskrcnn .*resnet18 .*FPN 64, 128x128..128, 4 classes"
like "  one step" "$out" "^epoch 1 step 1/1500: loss"

# settings the MLPerf checker accepts (2 decay steps, candidates a multiple of 1000, lr 0.02 K)
small=(--data "$tmp/ds" --config small --ims-per-batch 4 --test-ims-per-batch 4 --lr 0.02 --warmup-iters 2
       --warmup-factor 0.001 --decay-steps 3,4 --fpn-post-nms-top-n-train 1000 --threads 1 --loader-workers 1
       --platform test-box --seed 7 --log-interval 1)

# 2 ranks, 4 iterations, evaluations after 2 and 4, targets out of reach
out=$(timeout 900 mpirun -np 2 --bind-to none "$MR" "${small[@]}" --max-iter 4 --eval-iters 2,4 \
      --target-map-bbox 0.99 --target-map-segm 0.99 2>"$tmp/err"); rc=$?
is "2 ranks: exit 0 when the iterations run out" "$rc" 0
grep -v warning "$tmp/err" | head -5 | sed 's/^/#   /'
num='[0-9]+\.[0-9]+'
like "progress lines: the five losses, total, lr, images/s" "$out" \
     "^epoch 1 step 3/4: loss $num \(objectness $num, rpn_box $num, classifier $num, box_reg $num, mask $num\), lr [0-9.e-]+, $num images/s"
like "39 usable training images, 10 iterations per epoch" "$out" "^# 39 training images, 10 iterations per epoch"
like "evaluation after 2: bbox and segm" "$out" "^step 2 \(epoch 1\): bbox mAP $num \(AP50 $num, AP75 $num\), segm mAP $num"
like "evaluation after 4" "$out" "^step 4 \(epoch 1\): bbox mAP $num .*segm mAP $num"
like "not reached" "$out" "^# targets not reached: bbox mAP >= 0.9900 and segm mAP >= 0.9900"
is "MLPerf lines from rank 0 only: one run_start" "$(grep -c '"key": "run_start"' <<<"$out")" 1
check "every MLPerf line is one JSON object" /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    if ":::MLLOG" in line:
        json.loads(line.split(":::MLLOG", 1)[1])
' <<<"$out"
like "eval_accuracy: BBOX and SEGM with the epoch" "$out" \
     '"key": "eval_accuracy", "value": \{"BBOX": [0-9.e-]+, "SEGM": [0-9.e-]+\}, "metadata": \{[^}]*"epoch_num": 1\}'
like "global batch 4" "$out" '"key": "global_batch_size", "value": 4,'
like "submission_benchmark maskrcnn" "$out" '"key": "submission_benchmark", "value": "maskrcnn"'
like "num_image_candidates" "$out" '"key": "num_image_candidates", "value": 1000,'
like "decay steps" "$out" '"key": "opt_learning_rate_decay_steps", "value": \[3, 4\],'
like "run_stop aborted when the targets were not reached" "$out" '"key": "run_stop", .*"status": "aborted"'
printf '%s\n' "$out" > "$tmp/run.log"
checker_checks "$tmp/run.log"

# targets reached at the first evaluation: success, and no step after it
out=$("$MR" "${small[@]}" --max-iter 4 --eval-iters 1,4 --target-map-bbox 0 --target-map-segm 0 2>/dev/null); rc=$?
is "targets reached: exit 0" "$rc" 0
like "targets reached: said so" "$out" "^# targets reached: bbox mAP >= 0.0000 and segm mAP >= 0.0000"
like "targets reached: run_stop success" "$out" '"key": "run_stop", .*"status": "success"'
is "targets reached: stopped after step 1" "$(grep -c '^epoch 1 step 2/' <<<"$out")" 0

# NaN loss: every rank stops, run_stop aborted, a clear message, exit 1
out=$(timeout 600 mpirun -np 2 --bind-to none "$MR" "${small[@]}" --max-iter 4 --inject-nan 2 2>"$tmp/err"); rc=$?
is "NaN loss: exit 1" "$rc" 1
like "NaN loss: the message" "$(cat "$tmp/err")" \
     "benchd-maskrcnn: the loss is NaN at epoch 1, step 2: stopping \(run_stop status aborted\)"
like "NaN loss: run_stop aborted" "$out" '"key": "run_stop", .*"status": "aborted"'
is "NaN loss: no step after it" "$(grep -c '^epoch 1 step [2-4]/' <<<"$out")" 0

# checkpoints: an uninterrupted run of 6 steps; one stopped after step 3
# (checkpoint after 2) and resumed; one killed and resumed
steps() { grep -E '^epoch [0-9]+ step' <<<"$1" | sed 's/, [0-9.]* images\/s$//'; }
full=$("$MR" "${small[@]}" --max-iter 6 --eval-iters 6 2>/dev/null)
ck="$tmp/ck"
out=$("$MR" "${small[@]}" --max-iter 6 --eval-iters 6 --checkpoint "$ck" --checkpoint-interval 2 --max-steps 3 \
      2>/dev/null); rc=$?
is "checkpoint run: exit 0" "$rc" 0
check "checkpoint written" test -s "$ck/maskrcnn.ckpt"
out=$("$MR" "${small[@]}" --max-iter 6 --eval-iters 6 --checkpoint "$ck" --checkpoint-interval 2 2>/dev/null); rc=$?
is "resumed run: exit 0" "$rc" 0
like "resumed at step 2" "$out" "^# resumed from '$ck/maskrcnn.ckpt' at step 2 \(epoch 1\)"
is "resumed run: steps 3 to 6 as the uninterrupted run's (the loader skips what was taken)" \
   "$(steps "$out")" "$(steps "$full" | tail -4)"
like "resumed run: evaluated at the end" "$out" "^step 6 \(epoch 1\): bbox mAP"
ck2="$tmp/ck2"
"$MR" "${small[@]}" --max-iter 6 --eval-iters 6 --checkpoint "$ck2" --checkpoint-interval 1 >"$tmp/killed" 2>&1 &
pid=$!
if wait_until 600 grep -q '^epoch 1 step 2/' "$tmp/killed"; then
    kill -KILL "$pid"; wait "$pid" 2>/dev/null
    out=$("$MR" "${small[@]}" --max-iter 6 --eval-iters 6 --checkpoint "$ck2" --checkpoint-interval 1 2>/dev/null); rc=$?
    is "killed and resumed: exit 0" "$rc" 0
    like "killed and resumed: from a checkpoint" "$out" "^# resumed from '$ck2/maskrcnn.ckpt' at step [1-6] "
    like "killed and resumed: ran to the end" "$out" "^step 6 \(epoch 1\): bbox mAP"
    last=$(steps "$out" | tail -1)
    is "killed and resumed: the last step as the uninterrupted run's" "$last" "$(steps "$full" | tail -1)"
else
    _t_result 1 "the run to kill never reached step 2"
    stop_pid "$pid"
fi
out=$("$MR" "${small[@]}" --fpn-channels 32 --max-iter 6 --checkpoint "$ck" 2>&1); rc=$?
is "checkpoint of another model: exit 1" "$rc" 1
like "checkpoint of another model: one line" "$out" "benchd-maskrcnn: .*maskrcnn.ckpt"

# 2 ranks on split batches = 1 rank on the whole batch: 4 training images of
# one padded size (128 x 128) and one orientation, global batch 4, so the one
# permutation of an epoch is the global batch, rank r's share its r-th half,
# and the samplers' streams are keyed by global image positions; torchvision
# mode (RPN top-n per image), frozen batch norm (no batch statistics)
mkdir -p "$tmp/eq/annotations"
ln -s "$tmp/ds/train2017" "$tmp/eq/train2017"
ln -s "$tmp/ds/val2017" "$tmp/eq/val2017"
cp "$tmp/ds/annotations/instances_val2017.json" "$tmp/eq/annotations/"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
keep = [i for i in d["images"] if i["width"] == 128 and 96 < i["height"] < 128][:4]
ids = {i["id"] for i in keep}
d["images"] = keep
d["annotations"] = [a for a in d["annotations"] if a["image_id"] in ids]
json.dump(d, open(sys.argv[2], "w"))' "$tmp/ds/annotations/instances_train2017.json" \
    "$tmp/eq/annotations/instances_train2017.json"
eq=(--data "$tmp/eq" --config small --mode torchvision --frozen-bn 1 --ims-per-batch 4 --max-iter 2
    --eval-iters 2 --warmup-iters 1 --threads 1 --seed 11 --log-interval 1)
one=$("$MR" "${eq[@]}" 2>/dev/null)
two=$(timeout 600 mpirun -np 2 --bind-to none "$MR" "${eq[@]}" 2>/dev/null)
like "1 rank x 4 images" "$one" "^# benchd-maskrcnn .*: 1 ranks x 4 images"
like "2 ranks x 2 images" "$two" "^# benchd-maskrcnn .*: 2 ranks x 2 images"
is "steps 1 and 2: the same losses (to 1e-5)" "$(/usr/bin/python3 -c '
import re, sys
def losses(text):
    return [[float(x) for x in re.findall(r"[0-9]+\.[0-9]+", l.split("lr")[0])]
            for l in text.splitlines() if re.match(r"epoch 1 step [12]/", l)]
a, b = losses(sys.argv[1]), losses(sys.argv[2])
bad = len(a) != 2 or len(b) != 2 or any(abs(x - y) > 1e-5 * max(1, abs(x)) + 1e-5
                                        for ra, rb in zip(a, b) for x, y in zip(ra, rb))
print("differ: %s vs %s" % (a, b) if bad else "same")' "$one" "$two")" same

# the same with trained batch norm: synchronised (--sync-bn 1), the 2 ranks'
# five losses of step 1 are the whole batch's; each rank with its own
# statistics, not.  (From step 2 on, after a step at the full rate from
# scratch, the losses move apart as one rank's do on oneDNN and on the
# reference loops, BD_CPU_REF=1: 0.4% at step 2.)
step1() {   # the five losses of step 1 of $1 and of $2: "same" to 1e-5, or how they differ
    /usr/bin/python3 -c '
import re, sys
def losses(text):
    return [[float(x) for x in re.findall(r"[0-9]+\.[0-9]+", l.split("lr")[0])]
            for l in text.splitlines() if re.match(r"epoch 1 step 1/", l)]
a, b = losses(sys.argv[1]), losses(sys.argv[2])
bad = len(a) != 1 or len(b) != 1 or any(abs(x - y) > 1e-5 * max(1, abs(x)) for x, y in zip(a[0], b[0]))
print("differ: %s vs %s" % (a, b) if bad else "same")' "$@"
}
eqbn=("${eq[@]}" --frozen-bn 0 --max-iter 1 --eval-iters 1)
one=$("$MR" "${eqbn[@]}" 2>/dev/null)
two=$(timeout 600 mpirun -np 2 --bind-to none "$MR" "${eqbn[@]}" --sync-bn 1 2>/dev/null)
like "trained batch norm, 2 ranks: synchronised" "$two" "^# batch norm: synchronised, statistics over the 2 ranks' images$"
is "  step 1: the losses of 1 rank x 4 images (to 1e-5)" "$(step1 "$one" "$two")" same
two=$(timeout 600 mpirun -np 2 --bind-to none "$MR" "${eqbn[@]}" 2>/dev/null)
like "trained batch norm, 2 ranks, not synchronised: other losses" "$(step1 "$one" "$two")" "^differ"

# synthetic data: no dataset, no evaluation
out=$("$MR" --synthetic --config small --ims-per-batch 2 --threads 1 --seed 1 --max-steps 1 2>&1); rc=$?
is "synthetic: exit 0" "$rc" 0
like "synthetic: 81 classes" "$out" "81 classes"
is "synthetic: no evaluation" "$(grep -c '"key": "eval_start"' <<<"$out")" 0

# a pretrained backbone through the converter: a torchvision ResNet-50 state
# dict (random weights: the same names and shapes as ImageNet's), every
# tensor but the classifier loaded under backbone.body.; a ResNet-18 file is
# refused by the ResNet-50 backbone, naming the file
CONV=$srcdir/trainer/tools/convert-torchvision.py
if /usr/bin/python3 -c 'import torchvision' 2>/dev/null; then
    check "converter: a torchvision resnet50" /usr/bin/python3 "$CONV" --random resnet50 --seed 3 "$tmp/r50.bdw"
    check "converter: a torchvision resnet18" /usr/bin/python3 "$CONV" --random resnet18 --seed 3 "$tmp/r18.bdw"
    r50=(--synthetic --config small --backbone resnet50 --frozen-bn 1 --ims-per-batch 1 --threads 1 --seed 1
         --max-steps 1)
    out=$("$MR" "${r50[@]}" --pretrained "$tmp/r50.bdw" 2>&1); rc=$?
    is "--pretrained resnet50: exit 0" "$rc" 0
    like "  265 backbone tensors loaded, the classifier's 2 not" "$out" \
         "^# pretrained backbone: 265 tensors from '$tmp/r50.bdw' \(torchvision resnet50 random seed 3\), 2 not used$"
    like "  and it trained a step" "$out" "^epoch 1 step 1/"
    out=$("$MR" "${r50[@]}" --pretrained "$tmp/r18.bdw" 2>&1); rc=$?
    is "--pretrained resnet18 into resnet50: exit 1" "$rc" 1
    like "  one line naming the file" "$out" "^benchd-maskrcnn: .*$tmp/r18.bdw"
else
    skip 7 "no torchvision in /usr/bin/python3"
fi
done_testing

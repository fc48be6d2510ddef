#!/bin/bash
# benchd-tv-maskrcnn (trainer/torchvision/), torchvision's Mask R-CNN with
# benchd-maskrcnn's command line and logs, on a tiny generated dataset: the
# options (benchd-maskrcnn's, those it cannot honour refused by name), usage
# errors, a missing package and a missing dataset, 1 rank with evaluations
# and the same MLPerf keys as benchd-maskrcnn on the same command line, 2
# ranks under mpirun (evaluation over the ranks, the compliance checker),
# targets reached, NaN loss, a checkpoint and its resumption, and throughput
# mode's result against benchd-maskrcnn's fields, and benchctl's scoring
# of its log (benchctl submit of the local system's maskrcnn with it in
# place of benchd-maskrcnn).  About 3 minutes on two busy cores; the
# learning run is t0795 (make check-learn).
. "${srcdir:-.}/tests/lib.sh"
TV="$top_builddir/benchd-tv-maskrcnn"
MR="$top_builddir/benchd-maskrcnn"
[ -x "$TV" ] || skip_all "benchd-tv-maskrcnn not built"
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null ||
    skip_all "no torch or torchvision for /usr/bin/python3 (python3-torch, python3-torchvision)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
own_runs
have_mr=$([ -x "$MR" ] && echo yes)

help=$("$TV" --help); rc=$?
is "--help exits 0" "$rc" 0
like "--help: the rendezvous defaults" "$help" "MASTER_ADDR:\\\$MASTER_PORT, default 127\\.0\\.0\\.1:29500"
like "--version" "$("$TV" --version)" "^benchd-tv-maskrcnn [0-9]"
undoc=
while read -r f; do
    grep -qF -- "${f//-/\\-}" "$srcdir/man/benchd-tv-maskrcnn.1" || undoc="$undoc $f"
done < <(grep -o -- '^  --[a-z-]*' <<<"$help" | sed 's/^ *//')
is "every option of --help is in benchd-tv-maskrcnn.1" "$undoc" ""
# every option of benchd-maskrcnn is ours or refused by name with the reason
if [ -n "$have_mr" ]; then
    unknown=
    while read -r f; do
        grep -q -- "^  $f" <<<"$help" && continue
        "$TV" "$f" x 2>&1 | grep -q "^benchd-tv-maskrcnn: $f: not available here: " || unknown="$unknown $f"
    done < <("$MR" --help | grep -o -- '^  --[a-z-]*' | sed 's/^ *//')
    is "benchd-maskrcnn's options: each ours or refused with a reason" "$unknown" ""
else
    skip 1 "benchd-maskrcnn not built"
fi

# usage errors: one line, exit 2, before torch is imported
usage_prog=$TV
usage_err "unknown option" "unknown option '--frobnicate' \(see --help\)" --data x --frobnicate
usage_err "bad number" "--ims-per-batch: expected an integer from 1 to 65536, got 'two'" --data x --ims-per-batch two
usage_err "mlperf mode" "--mode: expected torchvision .*, got 'mlperf'" --data x --mode mlperf
usage_err "CUDA" "--backend: expected cpu .*, got 'cuda'" --data x --backend cuda
usage_err "width multiplier" "--width-mult: not available here: torchvision's ResNet has no channel width" \
          --data x --width-mult 0.5
usage_err "synchronised batch norm" "--sync-bn 1: not available here: torch 1\.13's SyncBatchNorm runs on CUDA only" \
          --data x --sync-bn 1
usage_err "no data" "--data DIR is required" --ims-per-batch 2
usage_err "iterations twice" "--max-iter and --epochs exclude each other" --data x --max-iter 3 --epochs 2
usage_err "missing argument" "option '--lr' needs an argument" --data x --lr
# the ranks from torchrun's, Open MPI's or Slurm's environment: rank 1 of 2
# says nothing, rank 0 speaks (before any rendezvous)
for vars in "RANK WORLD_SIZE" "OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE" "SLURM_PROCID SLURM_NTASKS"; do
    read -r r n <<<"$vars"
    out=$(env "$r=1" "$n=2" "$TV" --data x --frobnicate 2>&1); rc=$?
    is "$r=1 $n=2: a usage error, exit 2, silent" "$rc:$out" "2:"
    out=$(env "$r=0" "$n=2" timeout 60 "$TV" --data x --ims-per-batch 3 2>&1); rc=$?
    is "$r=0 $n=2: --ims-per-batch 3 on 2 ranks, exit 2" "$rc:$out" \
       "2:benchd-tv-maskrcnn: --ims-per-batch 3 is not a multiple of the 2 ranks"
done

# a package missing: one line saying what to install, before anything runs
mkdir -p "$tmp/nococo/pycocotools"
echo 'raise ImportError("No module named pycocotools (test)")' > "$tmp/nococo/pycocotools/__init__.py"
out=$(PYTHONPATH="$tmp/nococo" "$TV" --data "$tmp/ds" --config small 2>&1); rc=$?
is "pycocotools missing: exit 1" "$rc" 1
like "  one line: what to install" "$out" "^benchd-tv-maskrcnn: cannot import pycocotools\.cocoeval .*pip install pycocotools"
is "  and nothing else" "$(printf '%s\n' "$out" | wc -l)" 1

# pycocotools and mlperf-logging (the checker's package) from PyPI in the venv
if ! venv_module pycocotools.cocoeval pycocotools || ! mlperf_venv; then
    skip 1 "${venv_why:-$mlperf_why}"
    done_testing
    exit
fi
sites=("$top_builddir"/venv/lib/python3*/site-packages)
export BENCHD_PYTHONPATH=${sites[0]}

"$BENCHCTL" dataset synth --images 40 --val-images 8 --size 128 --classes 3 --objects 3 --seed 1 -o "$tmp/ds" >/dev/null
out=$("$TV" --data "$tmp/nowhere" --config small 2>&1); rc=$?
is "missing dataset: exit 1" "$rc" 1
like "missing dataset: the file is named" "$out" "^benchd-tv-maskrcnn: $tmp/nowhere/annotations/instances_train2017.json"

mllog() { sed -n 's/^:::MLLOG //p' <<<"$1"; }
# the MLPerf lines as event, key and metadata but file and line (and epoch values)
mlkeys() {
    mllog "$1" | /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    m = {k: v for k, v in d["metadata"].items() if k not in ("file", "lineno")}
    print(d["event_type"], d["key"], json.dumps(m, sort_keys=True))'
}

# 1 rank, the command line benchctl renders for benchd-maskrcnn on the local system, 4 steps
# shellcheck disable=SC2016  # the script's own $seed
read -r -a local_flags <<<"$(maskrcnn_flags local | tr -d '"' | sed 's/\$seed/1/' | tr '\n' ' ')"
one=("${local_flags[@]}" --data "$tmp/ds" --max-iter 4 --eval-iters '2,4' --log-interval 1)
out=$("$TV" "${one[@]}" 2>"$tmp/err"); rc=$?
is "1 rank, the local system's rendered options: exit 0" "$rc" 0
grep -v warning "$tmp/err" | head -5 | sed 's/^/#   /'
num='[0-9]+\.[0-9]+'
like "  the small configuration" "$out" \
     "^# benchd-tv-maskrcnn .*: 1 ranks x 4 images, .*resnet18 .*FPN 64, 128x128..128, 4 classes"
like "  39 usable training images, 10 iterations per epoch" "$out" "^# 39 training images, 10 iterations per epoch"
like "  progress lines: the five losses, total, lr, images/s" "$out" \
     "^epoch 1 step 3/4: loss $num \(objectness $num, rpn_box $num, classifier $num, box_reg $num, mask $num\), lr [0-9.e-]+, $num images/s"
like "  evaluation after 2: bbox and segm" "$out" \
     "^step 2 \(epoch 1\): bbox mAP $num \(AP50 $num, AP75 $num\), segm mAP $num \(AP50 $num, AP75 $num\), targets 0.3000 and 0.3000"
like "  evaluation after 4" "$out" "^step 4 \(epoch 1\): bbox mAP $num .*segm mAP $num"
like "  the epoch's line" "$out" "^epoch 1: $num s, $num images/s"
like "  not reached" "$out" "^# targets not reached: bbox mAP >= 0.3000 and segm mAP >= 0.3000"
like "  run_stop aborted" "$out" '"key": "run_stop", .*"status": "aborted"'
like "  eval_accuracy: BBOX and SEGM with the epoch" "$out" \
     '"key": "eval_accuracy", "value": \{"BBOX": [0-9.e-]+, "SEGM": [0-9.e-]+\}, "metadata": \{[^}]*"epoch_num": 1\}'
like "  metadata file: the program" "$out" '"metadata": \{"file": "benchd-tv-maskrcnn", "lineno": [0-9]+'
like "  submission_platform local" "$out" '"key": "submission_platform", "value": "local"'
check "  every MLPerf line is one JSON object" /usr/bin/python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    if line.startswith(":::MLLOG "):
        json.loads(line[9:]); n += 1
sys.exit(n < 30)' <<<"$out"
if [ -n "$have_mr" ]; then
    ours=$("$MR" "${one[@]}" 2>/dev/null)
    is "  the MLPerf events, keys and metadata of benchd-maskrcnn on the same command line" \
       "$(mlkeys "$out")" "$(mlkeys "$ours")"
    is "  the same lines on stdout but the header (progress, evaluations, summary)" \
       "$(grep -v '^[#:]' <<<"$out" | sed -E 's/[0-9]+\.[0-9]+/N/g')" \
       "$(grep -v '^[#:]' <<<"$ours" | sed -E 's/[0-9]+\.[0-9]+/N/g')"
else
    skip 2 "benchd-maskrcnn not built"
fi

# settings the MLPerf checker accepts (2 decay steps, candidates a multiple of 1000, lr 0.02 K)
small=(--data "$tmp/ds" --config small --ims-per-batch 4 --test-ims-per-batch 4 --lr 0.02 --warmup-iters 2
       --warmup-factor 0.001 --decay-steps '3,4' --fpn-post-nms-top-n-train 1000 --threads 1 --loader-workers 1
       --platform test-box --seed 7 --log-interval 1)

# 2 ranks under mpirun, 4 iterations, evaluations after 2 and 4 (each rank
# its share of val2017, gathered), targets out of reach
export MASTER_PORT
MASTER_PORT=$(free_port 29500)
out=$(timeout 600 mpirun -np 2 --bind-to none "$TV" "${small[@]}" --max-iter 4 --eval-iters 2,4 \
      --target-map-bbox 0.99 --target-map-segm 0.99 2>"$tmp/err"); rc=$?
is "2 ranks: exit 0 when the iterations run out" "$rc" 0
grep -v warning "$tmp/err" | head -5 | sed 's/^/#   /'
like "  2 ranks x 2 images" "$out" "^# benchd-tv-maskrcnn .*: 2 ranks x 2 images"
like "  evaluation after 2 and 4" "$out" "^step 4 \(epoch 1\): bbox mAP $num .*segm mAP $num"
is "  rank 0 prints: one header" "$(grep -c '^# benchd-tv-maskrcnn' <<<"$out")" 1
is "  one run_start" "$(grep -c '"key": "run_start"' <<<"$out")" 1
is "  one warning (the image without an object), from rank 0" "$(grep -c warning "$tmp/err")" 1
like "  global batch 4" "$out" '"key": "global_batch_size", "value": 4,'
like "  num_image_candidates" "$out" '"key": "num_image_candidates", "value": 1000,'
like "  decay steps" "$out" '"key": "opt_learning_rate_decay_steps", "value": \[3, 4\],'
printf '%s\n' "$out" > "$tmp/run.log"
checker_checks "$tmp/run.log"

# the workload torchvision-maskrcnn (workloads/torchvision-maskrcnn.json: the
# system's maskrcnn section, its own rendezvous): the local system, 2 ranks,
# 4 steps to targets of 0, its log scored and reported by benchctl as ours
out=$(timeout 600 "$BENCHCTL" submit --system local torchvision-maskrcnn --runs 1 --data "$tmp/ds" \
      --set maskrcnn.max_iter=4 --set maskrcnn.target_map_bbox=0 --set maskrcnn.target_map_segm=0 \
      --logdir "$tmp/logs" --wait 2>&1); rc=$?
is "benchctl submit --system local torchvision-maskrcnn: exit 0" "$rc" 0
printf '%s\n' "$out" | tail -3 | sed 's/^/#   /'
like "  the trial log is its" "$(cat "$tmp"/logs/*_1.log)" "^# benchd-tv-maskrcnn .*: 2 ranks x 2 images"
report=$("$BENCHCTL" report last 2>&1)
like "  benchctl report: a converged trial, 1 epoch, both accuracies, throughput" "$report" \
     "^  1 +success +[0-9.]+ +[0-9.]+ +1 +0\.[0-9]+/0\.[0-9]+ +0\.000/0\.000 +yes +[0-9.]+"
is "  report --json: time to train, both accuracies and throughput" "$("$BENCHCTL" report last --json |
   /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)[0]["trials"][0]
ok = t["status"] == "success" and t["converged"] and t["epochs"] == 1 and t["time_to_train_s"] > 0 \
     and "accuracy" in t and "accuracy_segm" in t and t["throughput"] > 0
print("ok" if ok else t)')" ok
tv_run=$("$BENCHCTL" runs --json --limit 1 | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["run"])')

# one system, two implementations, one report: benchd-maskrcnn on the same
# settings beside it
out=$(timeout 600 "$BENCHCTL" submit --system local maskrcnn --runs 1 --data "$tmp/ds" \
      --set maskrcnn.max_iter=4 --set maskrcnn.target_map_bbox=0 --set maskrcnn.target_map_segm=0 \
      --logdir "$tmp/logs" --wait 2>&1); rc=$?
is "benchd-maskrcnn on the same settings: exit 0" "$rc" 0
report=$("$BENCHCTL" report "$tv_run" last --html "$tmp/side.html" 2>&1); rc=$?
is "report of both, with --html: exit 0" "$rc" 0
like "  each run's workload named" "$report" "torchvision-maskrcnn on local"
like "  and ours" "$report" "maskrcnn on local"
like "  the comparison table at the end" "$report" "^RUN +SYSTEM +WORKLOAD"
is "  the page: plots of both, no script, nothing fetched" \
   "$(python3 "$srcdir/tests/html-check.py" "$tmp/side.html" torchvision-maskrcnn "$tv_run" | cut -d' ' -f2-)" \
   "no-script [] [] True True"

# the ranks as torchrun starts them (its RANK, WORLD_SIZE, LOCAL_RANK and
# the rendezvous; two processes started here: Debian's torchrun 1.13 fails
# on Python 3.11 before it starts any)
MASTER_PORT=$(free_port 29500)
tr=("${small[@]}" --max-iter 2 --eval-iters 2 --target-map-bbox 0 --target-map-segm 0)
RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 timeout 600 "$TV" "${tr[@]}" >"$tmp/rank1" 2>&1 &
pid=$!
out=$(RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 timeout 600 "$TV" "${tr[@]}" 2>/dev/null); rc=$?
wait "$pid"; rc1=$?
is "torchrun's environment: both ranks exit 0" "$rc $rc1" "0 0"
like "  2 ranks x 2 images" "$out" "^# benchd-tv-maskrcnn .*: 2 ranks x 2 images"
like "  evaluated over both, reached" "$out" "^# targets reached: bbox mAP >= 0.0000"
is "  rank 1 printed nothing" "$(cat "$tmp/rank1")" ""

# targets reached at the first evaluation: success, and no step after it
out=$("$TV" "${small[@]}" --max-iter 4 --eval-iters 1,4 --target-map-bbox 0 --target-map-segm 0 2>/dev/null); rc=$?
is "targets reached: exit 0" "$rc" 0
like "  said so" "$out" "^# targets reached: bbox mAP >= 0.0000 and segm mAP >= 0.0000"
like "  run_stop success" "$out" '"key": "run_stop", .*"status": "success"'
is "  stopped after step 1" "$(grep -c '^epoch 1 step 2/' <<<"$out")" 0

# NaN loss on rank 0: every rank stops, run_stop aborted, one message, exit 1
MASTER_PORT=$(free_port 29500)
out=$(timeout 600 mpirun -np 2 --bind-to none "$TV" "${small[@]}" --max-iter 4 --inject-nan 2 2>"$tmp/err"); rc=$?
is "NaN loss: exit 1" "$rc" 1
like "  the message" "$(cat "$tmp/err")" \
     "^benchd-tv-maskrcnn: the loss is NaN at epoch 1, step 2: stopping \(run_stop status aborted\)$"
is "  once" "$(grep -c 'the loss is NaN' "$tmp/err")" 1
like "  run_stop aborted" "$out" '"key": "run_stop", .*"status": "aborted"'
is "  no step after it" "$(grep -c '^epoch 1 step [2-4]/' <<<"$out")" 0

# a checkpoint after step 2, the run stopped after 3, resumed from 2 to the end
ck="$tmp/ck"
out=$("$TV" "${small[@]}" --max-iter 4 --eval-iters 4 --checkpoint "$ck" --checkpoint-interval 2 --max-steps 3 \
      2>/dev/null); rc=$?
is "checkpoint run: exit 0" "$rc" 0
check "  checkpoint written" test -s "$ck/tv-maskrcnn.pt"
out=$("$TV" "${small[@]}" --max-iter 4 --eval-iters 4 --checkpoint "$ck" 2>/dev/null); rc=$?
is "resumed run: exit 0" "$rc" 0
like "  resumed at step 2" "$out" "^# resumed from '$ck/tv-maskrcnn.pt' at step 2 \(epoch 1\)$"
is "  steps 3 and 4" "$(grep -oE '^epoch 1 step [0-9]+/' <<<"$out" | tr '\n' ' ')" "epoch 1 step 3/ epoch 1 step 4/ "
like "  evaluated at the end" "$out" "^step 4 \(epoch 1\): bbox mAP"
out=$("$TV" "${small[@]}" --fpn-channels 32 --max-iter 4 --checkpoint "$ck" 2>&1); rc=$?
is "checkpoint of another model: exit 1" "$rc" 1
like "  one line naming it" "$out" "^benchd-tv-maskrcnn: checkpoint '$ck/tv-maskrcnn.pt' holds tv-maskrcnn-.*-f64-"

# a pretrained backbone: a torchvision ResNet-18's state dict (random
# weights: the names and shapes of ImageNet's), every tensor but the
# classifier's; a ResNet-50's refused, naming the file
# (the directory and the name apart: a temporary directory's name may hold
# any letter)
/usr/bin/python3 -c 'import os, sys, torch, torchvision
for name in sys.argv[2:]:
    torch.save(getattr(torchvision.models, name)().state_dict(), os.path.join(sys.argv[1], name + ".pth"))' \
    "$tmp" resnet18 resnet50
out=$("$TV" "${small[@]}" --ims-per-batch 2 --max-steps 1 --pretrained "$tmp/resnet18.pth" 2>&1); rc=$?
is "--pretrained resnet18: exit 0" "$rc" 0
like "  120 tensors loaded, the classifier's 2 not" "$out" \
     "^# pretrained backbone: 120 tensors from '$tmp/resnet18.pth', 2 not used$"
out=$("$TV" "${small[@]}" --ims-per-batch 2 --max-steps 1 --pretrained "$tmp/resnet50.pth" 2>&1 >/dev/null); rc=$?
is "--pretrained resnet50 into resnet18: exit 1" "$rc" 1
like "  one line naming the file" "$(grep -v warning <<<"$out")" \
     "^benchd-tv-maskrcnn: pretrained '$tmp/resnet50.pth': not this backbone's tensors: [0-9]+ not in the backbone"

# throughput mode: 1 untimed step, 3 timed, the JSON result of benchd-maskrcnn's fields
bench=("${small[@]}" --benchmark-steps 3 --warmup-steps 1)
out=$("$TV" "${bench[@]}" --result "$tmp/tv.json" 2>/dev/null); rc=$?
is "throughput mode: exit 0" "$rc" 0
like "  the line" "$out" "^# throughput: 3 steps after 1: $num images/s \(sd $num, min $num, max $num, 95% interval [0-9.e+-]+ \.\. $num\), $num s a step$"
like "  the MLPerf throughput event" "$out" \
     '"key": "throughput", "value": [0-9.e+-]+, "metadata": \{[^}]*"unit": "images/s", "count": 3, "warmup_steps": 1, "sd"'
like "  run_stop success" "$out" '"key": "run_stop", .*"status": "success"'
is "  no evaluation" "$(grep -c '"key": "eval_start"' <<<"$out")" 0
fields='program benchmark arguments version unique_id hostname device ranks batch precision warmup_steps benchmark_steps time outcome completed batch_loss observations_s observations_items train train_item'
is "  the result: benchd-maskrcnn's fields, its statistics recomputed from the observations" "$(/usr/bin/python3 -c '
import json, math, statistics, sys
r = json.load(open(sys.argv[1]))
bad = []
if list(r) != sys.argv[2].split():
    bad.append("fields %s" % list(r))
rates = [i / s for i, s in zip(r["observations_items"], r["observations_s"])]
ti = r["train_item"]
if r["program"] != "benchd-tv-maskrcnn" or r["benchmark"] != "maskrcnn" or r["outcome"] != "completed" \
        or r["completed"] is not True or r["ranks"] != 1 or r["batch"] != 4 or len(rates) != 3:
    bad.append("values")
if abs(ti["avg"] - statistics.mean(rates)) > 1e-9 * ti["avg"] or abs(ti["sd"] - statistics.stdev(rates)) > 1e-9 * ti["avg"]:
    bad.append("statistics")
h = 4.302652729911275 * statistics.stdev(rates) / math.sqrt(3)  # t(0.975, 2)
if abs(ti["ci95_hi"] - ti["avg"] - h) > 1e-6 * ti["avg"] or ti["unit"] != "images/s" or r["train"]["unit"] != "s":
    bad.append("interval")
if r["arguments"][-2:] != ["--result", sys.argv[3]]:
    bad.append("arguments")
print(" ".join(bad) or "ok")' "$tmp/tv.json" "$fields" "$tmp/tv.json")" ok
if [ -n "$have_mr" ]; then
    "$MR" "${bench[@]}" --result "$tmp/mr.json" >/dev/null 2>&1
    is "  the unique id of benchd-maskrcnn's result for the same arguments (XXH3-128 of them)" \
       "$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["unique_id"])' "$tmp/tv.json")" \
       "$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["unique_id"])' "$tmp/mr.json")"
else
    skip 1 "benchd-maskrcnn not built"
fi
out=$("$TV" "${bench[@]}" --inject-nan 3 --result "$tmp/nan.json" 2>/dev/null); rc=$?
is "throughput mode, NaN at step 3: exit 1" "$rc" 1
like "  no number" "$out" "^# throughput: none \(nan after 1 of 3 timed steps\)$"
is "  the result: outcome nan, no statistics" "$(/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["outcome"], r["completed"], r["train"], r["train_item"], r["observations_s"] != [])' "$tmp/nan.json")" \
   "nan False None None True"
done_testing

#!/bin/bash
# bench/maskrcnn-eval.sh: the evaluation a Mask R-CNN trainer runs every
# epoch, bbox and segm of a 200-image validation split with 100 detections
# per image, each with a box and a mask (gen-synth-dets.py: jittered from
# the ground truth, masks as a mask head pastes them), `benchctl coco-eval
# --type both` (data/coco-eval.h) against pycocotools (COCO() + loadRes +
# evaluate + accumulate + summarize for bbox, then evaluate + accumulate +
# summarize for segm, timed inside Python, imports left out).  The split is
# the shapes' val2017 of `benchctl dataset synth --images 2000 --val-images
# 200 --size 128 --classes 3 --objects 3` (the learning test's data), or
# the val2017 of DATA.  benchctl runs as a whole process (reading both
# JSON files and indexing the ground truth included), on 1 thread and on
# all CPUs, the median of ROUNDS runs each; pycocotools runs ROUNDS times,
# its median total is the reference.  Both must print the same 24 lines;
# the ratio is pycocotools' time / ours (target >= 10).
#
#   bench/maskrcnn-eval.sh [BUILD_DIR] [ROUNDS] [DATA] [DETS_PER_IMAGE]
#   PYTHON=... a python with numpy and pycocotools (default: BUILD_DIR/venv,
#              which t0620 makes)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
rounds=${2:-3}
data=${3:-}
dets=${4:-100}
py=${PYTHON:-$build/venv/bin/python}
B="$build/benchctl"
. "$src/bench/coco-eval-lib.sh"
coco_eval_check maskrcnn-eval.sh both
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ -z "$data" ]; then
        data=$tmp/synth
        "$B" dataset synth --images 2000 --val-images 200 --size 128 --classes 3 --objects 3 --seed 1 -o "$data" >&2
fi
gt="$data/annotations/instances_val2017.json" dt="$tmp/dt.json"
"$py" "$src/bench/gen-synth-dets.py" "$gt" "$dt" "$dets" 1 >&2

# pycocotools: the 24 lines into ref.txt, its phases' seconds on stdout
for _ in $(seq "$rounds"); do
        "$py" - "$gt" "$dt" "$tmp/ref.txt" >> "$tmp/ref.times" <<'PY'
import contextlib, io, sys, time
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
t = [time.perf_counter()]
c0 = time.process_time()
out = io.StringIO()
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO(sys.argv[1]); t.append(time.perf_counter())
    dt = gt.loadRes(sys.argv[2]); t.append(time.perf_counter())
for k, iou_type in enumerate(("bbox", "segm")):
    with contextlib.redirect_stdout(io.StringIO()):
        e = COCOeval(gt, dt, iouType=iou_type)
        e.evaluate(); t.append(time.perf_counter())
        e.accumulate(); t.append(time.perf_counter())
    with contextlib.redirect_stdout(out):
        print("%sIoU type: %s" % ("\n" if k else "", iou_type))
        e.summarize()
    t.append(time.perf_counter())
open(sys.argv[3], "w").write(out.getvalue())
print("%.3f %.3f load %.3f loadRes %.3f bbox-evaluate %.3f bbox-accumulate %.3f segm-evaluate %.3f segm-accumulate %.3f" %
      (t[-1] - t[0], time.process_time() - c0, t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[6] - t[5], t[7] - t[6]))
PY
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ref=$(awk '{print $1}' "$tmp/ref.times" | median)
refcpu=$(awk '{print $2}' "$tmp/ref.times" | median)

ours() {   # THREADS: median wall seconds, peak RSS (MB), median CPU seconds of ROUNDS whole benchctl runs
        : > "$tmp/times"
        for _ in $(seq "$rounds"); do
                /usr/bin/time -f '%e %M %U %S' -a -o "$tmp/times" "$B" coco-eval "$gt" "$dt" --type both --threads "$1" \
                        > "$tmp/ours$1.txt"
        done
        printf '%s %.0f %s\n' "$(awk '{print $1}' "$tmp/times" | median)" \
                "$(awk '$2 > m {m = $2} END {print m / 1024}' "$tmp/times")" \
                "$(awk '{print $3 + $4}' "$tmp/times" | median)"
}
read -r one rss1 cpu1 < <(ours 1)
n=$(nproc)
read -r many rssn cpun < <(ours "$n")

same() { if diff -q "$tmp/ref.txt" "$1" >/dev/null; then echo "same 24 lines"; else echo "DIFFERENT lines"; fi; }
echo "pycocotools $("$py" -c 'import importlib.metadata as m; print(m.version("pycocotools"))'),"\
        "$(lscpu | sed -n 's/^Model name: *//p'), $n CPUs; $("$py" -c '
import json, sys
g = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
print("%d images, %d objects, %d detections" % (len(g["images"]), len(g["annotations"]), len(d)))' "$gt" "$dt")"
echo "pycocotools phases of the median round (s): $(sort -g "$tmp/ref.times" | sed -n "$(( (rounds + 1) / 2 ))p" | cut -d' ' -f3-)"
printf '%-44s %9s %8s %9s %8s %9s  %s\n' "" "seconds" "ratio" "CPU s" "ratio" "peak MB" \
        "24 numbers (medians of $rounds runs)"
printf '%-44s %9.3f %8s %9.3f %8s\n' "pycocotools COCOeval (bbox + segm)" "$ref" "" "$refcpu" ""
row() {
        printf '%-44s %9.3f %8.1f %9.3f %8.1f %9s  %s\n' "benchctl coco-eval --type both --threads $1" "$2" \
                "$(echo "$ref / $2" | bc -l)" "$3" "$(echo "$refcpu / $3" | bc -l)" "$4" "$(same "$tmp/ours$1.txt")"
}
row 1 "$one" "$cpu1" "$rss1"
row "$n" "$many" "$cpun" "$rssn"
echo "(ratio: pycocotools time / ours; target >= 10; CPU: all threads, benchctl's user + system)"
if ! diff -q "$tmp/ref.txt" "$tmp/ours1.txt" >/dev/null || ! diff -q "$tmp/ref.txt" "$tmp/ours$n.txt" >/dev/null; then
        diff "$tmp/ref.txt" "$tmp/ours1.txt" >&2 || true
        exit 1
fi

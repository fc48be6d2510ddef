#!/bin/bash
# bench/segm-eval.sh: COCO segm evaluation of a val2017-sized result set,
# `benchctl coco-eval --type segm` against pycocotools' COCOeval (COCO() +
# loadRes + evaluate + accumulate + summarize, timed inside Python, imports
# left out) on the same files: 5,000 images of about 640x480 with ~7
# objects each (polygons of 1-3 parts, 1% crowd RLE) and 100 Mask R-CNN-like
# detections per image (gen-segm.py: 28x28 soft masks resized into their box,
# thresholded at 0.5, encoded by pycocotools).  benchctl runs as a whole
# process (reading both files included) on 1 thread, then on all CPUs, the
# median of ROUNDS runs each (pycocotools, about a minute, runs once); the
# ratio is pycocotools' time / ours (target >= 10 on one thread), and both
# must print the same 12 lines.
#
#   bench/segm-eval.sh [BUILD_DIR] [IMAGES] [DETS_PER_IMAGE] [ROUNDS]
#   PYTHON=... a python with numpy and pycocotools (default: BUILD_DIR/venv,
#              which t0620 makes)
#   SEGM_EVAL_DATA=DIR keeps (and reuses) the generated files; they take a
#              few minutes to make and about 150 MB for 5,000 images.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
images=${2:-5000}
dets=${3:-100}
rounds=${4:-3}
py=${PYTHON:-$build/venv/bin/python}
B="$build/benchctl"
. "$src/bench/coco-eval-lib.sh"
coco_eval_check segm-eval.sh segm
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
data=${SEGM_EVAL_DATA:-$tmp/data}
stamp="images=$images dets=$dets gen=$(cksum < "$src/bench/gen-segm.py")"
if [ ! -f "$data/stamp" ] || [ "$(cat "$data/stamp")" != "$stamp" ]; then
    mkdir -p "$data"
    rm -f "$data/stamp"
    echo "generating $images images x $dets detections into $data ..." >&2
    "$py" "$src/bench/gen-segm.py" "$data" "$images" "$dets" 1 >&2
    echo "$stamp" > "$data/stamp"
fi
gt="$data/gt.json" dt="$data/dt.json"
printf '%s: %s MB, %s: %s MB\n' "$gt" "$(( $(stat -c %s "$gt") / 1000000 ))" "$dt" "$(( $(stat -c %s "$dt") / 1000000 ))"

# pycocotools: the 12 lines into ref.txt, its phases' seconds on stdout
"$py" - "$gt" "$dt" "$tmp/ref.txt" > "$tmp/ref.times" <<'PY'
import contextlib, io, sys, time
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
t = [time.perf_counter()]
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO(sys.argv[1]); t.append(time.perf_counter())
    dt = gt.loadRes(sys.argv[2]); t.append(time.perf_counter())
    e = COCOeval(gt, dt, iouType="segm")
    e.evaluate(); t.append(time.perf_counter())
    e.accumulate(); t.append(time.perf_counter())
out = io.StringIO()
with contextlib.redirect_stdout(out):
    e.summarize()
t.append(time.perf_counter())
open(sys.argv[3], "w").write(out.getvalue())
print("total %.3f load %.3f loadRes %.3f evaluate %.3f accumulate %.3f summarize %.3f" %
      (t[-1] - t[0], t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4]))
PY
ref=$(awk '{print $2}' "$tmp/ref.times")

ours() {   # THREADS: median wall seconds and peak RSS (MB) of ROUNDS whole benchctl runs
    : > "$tmp/times"
    for _ in $(seq "$rounds"); do
        /usr/bin/time -f '%e %M' -a -o "$tmp/times" "$B" coco-eval "$gt" "$dt" --type segm --threads "$1" \
            > "$tmp/ours$1.txt"
    done
    sort -g "$tmp/times" | awk '{t[NR] = $1; if ($2 > m) m = $2}
        END {printf "%s %.0f\n", NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2, m / 1024}'
}
read -r one rss1 < <(ours 1)
n=$(nproc)
read -r many rssn < <(ours "$n")

same() { if diff -q "$tmp/ref.txt" "$1" >/dev/null; then echo "same 12 lines"; else echo "DIFFERENT lines"; fi; }
echo "pycocotools $("$py" -c 'import importlib.metadata as m; print(m.version("pycocotools"))'), $(lscpu | sed -n 's/^Model name: *//p'), $n CPUs"
echo "pycocotools phases (s): $(cut -d' ' -f3- "$tmp/ref.times")"
printf '%-40s %9s %9s %8s  %s\n' "" "seconds" "peak MB" "ratio" "12 numbers (benchctl: median of $rounds runs)"
printf '%-40s %9.2f %9s %8s\n' "pycocotools COCOeval (segm)" "$ref" "" ""
printf '%-40s %9.2f %9s %8.1f  %s\n' "benchctl coco-eval --threads 1" "$one" "$rss1" "$(echo "$ref / $one" | bc -l)" \
    "$(same "$tmp/ours1.txt")"
printf '%-40s %9.2f %9s %8.1f  %s\n' "benchctl coco-eval --threads $n" "$many" "$rssn" "$(echo "$ref / $many" | bc -l)" \
    "$(same "$tmp/ours$n.txt")"
echo "(ratio: pycocotools time / ours; target >= 10 on one thread)"
if ! diff -q "$tmp/ref.txt" "$tmp/ours1.txt" >/dev/null || ! diff -q "$tmp/ref.txt" "$tmp/ours$n.txt" >/dev/null; then
    diff "$tmp/ref.txt" "$tmp/ours1.txt" >&2 || true
    exit 1
fi

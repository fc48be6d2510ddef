#!/bin/bash
# bench/rle-ops.sh: data/mask.c against pycocotools' mask API on the same
# inputs, each side timed in its own process around the calls only (median
# of ROUNDS rounds): encoding 100 Mask R-CNN-like masks of 640x480, the IoU
# matrices of 50 images of 100 detections x 20 ground truths (from the
# compressed strings, as COCOeval calls it), and 2,000 COCO-like objects of
# 1-3 polygons of 10-60 vertices rasterised and merged (annToRLE).  Prints
# each ratio, pycocotools time / ours (masks given as rows: pycocotools
# needs np.asfortranarray first, rle_encode_rows reads them as they are) (target >= 1.0 each); rle-bench also
# checks that every result equals pycocotools'.
#
#   bench/rle-ops.sh [BUILD_DIR] [ROUNDS]
#   PYTHON=... a python with numpy and pycocotools (default: BUILD_DIR/venv,
#              which t0620 makes); RLE_BENCH_DATA=DIR keeps (reuses) the inputs.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
rounds=${2:-5}
py=${PYTHON:-$build/venv/bin/python}
"$py" -c 'import numpy, pycocotools.mask' 2>/dev/null ||
    { echo "rle-ops.sh: $py cannot import numpy and pycocotools (set PYTHON)" >&2; exit 1; }
make -s -C "$build" bench/rle-bench
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
data=${RLE_BENCH_DATA:-$tmp/data}
"$py" "$src/bench/rle-ops.py" "$data" "$rounds" > "$tmp/theirs"
"$build/bench/rle-bench" "$data" "$rounds" > "$tmp/ours" || {
    cat "$tmp/ours"; echo "rle-ops.sh: results differ from pycocotools'" >&2; exit 1; }
get() { awk -v op="$2" '$2 == op {print $3}' "$tmp/$1"; }
row() {   # label, pycocotools op, our op
    local p o
    p=$(get theirs "$2"); o=$(get ours "$3")
    printf '%-52s %10.2f %10.2f %8.2f\n' "$1" "$(echo "$p * 1000" | bc -l)" "$(echo "$o * 1000" | bc -l)" \
        "$(echo "$p / $o" | bc -l)"
}
echo "pycocotools $("$py" -c 'import importlib.metadata as m; print(m.version("pycocotools"))'), $(lscpu | sed -n 's/^Model name: *//p'), median of $rounds rounds, one thread"
printf '%-52s %10s %10s %8s\n' "" "pycocotools" "ours" "ratio"
printf '%-52s %10s %10s %8s\n' "" "ms" "ms" ""
row "encode 100 masks 640x480 (column-major)" encode encode
row "encode the same masks given as rows" encode-rows encode-rows
row "iou, 50 images x 100 dt x 20 gt (strings parsed)" iou iou
row "  ours on parsed RLEs (rle_iou alone)" iou iou-parsed
row "2,000 objects: frPyObjects + merge" poly poly
echo "(ratio: pycocotools time / ours, target >= 1.0; results that differ from pycocotools: $(awk '$1 == "mismatches" {print $2}' "$tmp/ours"))"

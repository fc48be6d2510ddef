#!/bin/bash
# bench/maskrcnn-pipeline.sh: the Mask R-CNN input pipeline (data/det-loader.h:
# decode, resize to 800/1333, flip, normalise, pad to 32, targets with
# polygons) against plain TurboJPEG decoding of the same COCO-sized JPEGs
# (640 pixels on the long side, quality 90, about 160 KB), on the same
# number of threads.  Rates are images per CPU second of the process (all
# its threads), so other load on the machine does not bias the ratio; R
# rounds alternate the two and the medians are compared.  Target: the
# training pipeline at >= 0.6 of the decode-only rate, per core.
#
#   bench/maskrcnn-pipeline.sh [BUILD_DIR] [IMAGES] [ROUNDS] [THREADS]
#   MASKRCNN_BENCH_DATA=DIR reuses (or keeps) the generated dataset.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
images=${2:-800}
rounds=${3:-5}
threads=${4:-1}
bench="$build/bench/maskrcnn-pipeline"
[ -x "$bench" ] || { echo "maskrcnn-pipeline.sh: no $bench (make bench/maskrcnn-pipeline first)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
data=${MASKRCNN_BENCH_DATA:-$tmp/coco}
if [ ! -d "$data/train2017" ]; then
    "$build/benchctl" dataset synth --images "$images" --val-images 0 --size 640 --noise 36 --quality 90 \
        -o "$data" >/dev/null
fi
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs available, $threads thread(s) each"
/usr/bin/python3 - "$data/annotations/instances_train2017.json" "$data/train2017" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
n = len(d["images"])
w = sum(i["width"] for i in d["images"]) / n
h = sum(i["height"] for i in d["images"]) / n
kb = sum(os.path.getsize(os.path.join(sys.argv[2], i["file_name"])) for i in d["images"]) / n / 1000
print("%d JPEGs, %.0fx%.0f pixels and %.0f KB on average" % (n, w, h, kb))
PY
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for conv in mlperf torchvision; do
    ours=() base=() walls=()
    for _ in $(seq "$rounds"); do
        out=$("$bench" "$data" train2017 --convention "$conv" --threads "$threads" --images "$images")
        ours+=("$(printf '%s\n' "$out" | sed -n 's/.*wall, \([0-9.]*\) images per CPU second.*/\1/p')")
        walls+=("$(printf '%s\n' "$out" | sed -n 's/.*: \([0-9.]*\) images\/s wall,.*/\1/p' | head -1)")
        base+=("$(printf '%s\n' "$out" | sed -n 's/^TurboJPEG decode only: \([0-9.]*\) images.*/\1/p')")
    done
    m_ours=$(median "${ours[@]}")
    m_base=$(median "${base[@]}")
    printf '%s\n' "$conv training pipeline (resize 800/1333, flip, normalise, pad, targets), median of $rounds rounds:"
    printf '%s\n' "$out" | sed -n '2p'
    printf '  pipeline:         %7.1f images per CPU second (%s images/s wall)\n' "$m_ours" "$(median "${walls[@]}")"
    printf '  TurboJPEG decode: %7.1f images per CPU second\n' "$m_base"
    printf '  ratio:            %7.3f (target >= 0.6)\n' "$(echo "$m_ours / $m_base" | bc -l)"
done

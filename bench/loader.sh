#!/bin/bash
# bench/loader.sh: the SSD data loader against plain TurboJPEG decoding of
# the same COCO-sized JPEGs (640 pixels on the long side, about 160 KB),
# one thread each.  Rates are images per CPU second of the process (all its
# threads), so other load on the machine does not bias the ratio; R rounds
# alternate the two and the medians are compared.  Target: the training
# pipeline (random IoU crop, flip, resize to 300x300, colour jitter,
# normalisation) at >= 0.6 of the decode-only rate.
#
#   bench/loader.sh [BUILD_DIR] [IMAGES] [ROUNDS]
#   LOADER_BENCH_DATA=DIR reuses (or keeps) the generated dataset.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
images=${2:-600}
rounds=${3:-5}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# loader-bench.c against the build's libraries, with its compiler and flags
cc=$(sed -n 's/^CC = //p' "$build/Makefile")
cflags=$(sed -n 's/^CFLAGS = //p' "$build/Makefile")
libs=$(sed -n 's/^\(TURBOJPEG\|JPEG\|XXHASH\|CJSON\)_LIBS = //p' "$build/Makefile" | tr '\n' ' ')
[ -f "$build/libbddata.a" ] || { echo "loader.sh: no $build/libbddata.a (build first)" >&2; exit 1; }
# shellcheck disable=SC2086
$cc -std=gnu11 $cflags -I"$build" -I"$build/lib" -I"$src/lib" -I"$src/data" -o "$tmp/loader-bench" \
    "$src/bench/loader-bench.c" "$build/libbddata.a" "$build/libbd.a" $libs -lpthread -lm
bench="$tmp/loader-bench"
data=${LOADER_BENCH_DATA:-$tmp/coco}
if [ ! -d "$data/train2017" ]; then
    "$build/benchctl" dataset synth --images "$images" --val-images 0 --size 640 --noise 36 --quality 90 \
        -o "$data" >/dev/null
fi
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
for mode in train eval; do
    ours=() base=()
    for _ in $(seq "$rounds"); do
        out=$("$bench" "$data" train2017 --mode "$mode" --threads 1 --images "$images")
        ours+=("$(printf '%s\n' "$out" | sed -n 's/.*wall, \([0-9.]*\) images per CPU second.*/\1/p')")
        base+=("$(printf '%s\n' "$out" | sed -n 's/^TurboJPEG decode only: \([0-9.]*\) images.*/\1/p')")
    done
    m_ours=$(median "${ours[@]}")
    m_base=$(median "${base[@]}")
    case $mode in
        train) what="training pipeline (crop, flip, resize 300x300, jitter, normalise)" ;;
        eval) what="evaluation pipeline (resize 300x300, normalise)" ;;
    esac
    printf '%s\n' "$what, median of $rounds rounds:"
    printf '  loader:           %7.1f images per CPU second\n' "$m_ours"
    printf '  TurboJPEG decode: %7.1f images per CPU second\n' "$m_base"
    printf '  ratio:            %7.3f (target >= 0.6)\n' "$(echo "$m_ours / $m_base" | bc -l)"
done

#!/bin/bash
# bench/det-post.sh: Mask R-CNN's inference postprocessing of one image
# (1000 proposals, 81 classes, 100 detections pasted into 480 x 640),
# trainer/det/postprocess.h against torchvision 0.14 (/usr/bin/python3) on
# the same inputs, machine and threads, alternating R rounds; prints the
# medians over rounds of each side's median times and the ratios (target >=
# 1.0 each: ours at least as fast), and the C side's RLE encoding time.
#
#   bench/det-post.sh [BUILD_DIR] [THREADS] [ROUNDS]
set -euo pipefail
die() { echo "det-post: $*" >&2; exit 1; }
src=$(cd "$(dirname "$0")/.." && pwd)
B="${1:-$src/build}/bench/det-post" threads=${2:-$(nproc)} rounds=${3:-5}
test -x "$B" || die "no $B (make bench/det-post first)"
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null || die "/usr/bin/python3 needs torch and torchvision"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=$threads
args=(--threads "$threads" --iters 20 --warmup 3)
for r in $(seq "$rounds"); do
    "$B" "${args[@]}" > "$tmp/o$r"
    /usr/bin/python3 "$src/bench/det-post.py" "${args[@]}" > "$tmp/t$r"
    echo "round $r: ours detect $(awk '/^detect/ {print $2}' "$tmp/o$r") paste $(awk '/^paste/ {print $2}' "$tmp/o$r") ms," \
         "torchvision detect $(awk '/^detect/ {print $2}' "$tmp/t$r") paste $(awk '/^paste/ {print $2}' "$tmp/t$r") ms" >&2
done
med() { cat "$tmp"/"$1"* | awk -v k="$2" '$1 == k {print $2}' | sort -g |
        awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
nd=$(awk '/^detections/ {print $2}' "$tmp/o1"); nt=$(awk '/^detections/ {print $2}' "$tmp/t1")
printf 'Mask R-CNN postprocess, one image: %d threads, %d rounds, %s detections (torchvision %s)\n' "$threads" "$rounds" "$nd" "$nt"
printf '%-34s %10s %12s %8s\n' "median ms" "ours" "torchvision" "ratio"
for k in detect paste; do
    o=$(med o "$k"); t=$(med t "$k")
    printf '%-34s %10.3f %12.3f %8.2f\n' "$k" "$o" "$t" "$(echo "$t / $o" | bc -l)"
done
printf '%-34s %10.3f %12s\n' "rle (100 COCO strings)" "$(med o rle)" "-"
echo "(ratio > 1: ours is faster; target >= 1.0)"

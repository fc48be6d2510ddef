#!/bin/bash
# bench/roi-align.sh: multi-scale RoIAlign forward + backward of Mask R-CNN's
# RoI heads on the CPU: 512 RoIs per image x 2 images over P2-P5 of an
# 800 x 1344 batch (200x336 ... 25x42), 256 channels, sampling 2, output
# 7x7 (box head) and 14x14 (mask head); bench/roi-align (the trainer's
# operators, NCHW8C maps) against torchvision.ops.MultiScaleRoIAlign forward
# + autograd backward (/usr/bin/python3) with the same RoIs and thread count.
# Each side times itself in-process (median of its rounds); the two
# alternate R times and the medians of those are printed with the ratio
# (torchvision time / ours: > 1 is faster; target >= 1.0).
#
#   bench/roi-align.sh [BUILD_DIR] [ROUNDS] [THREADS...]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
rounds=${2:-3}
shift 2 2>/dev/null || shift $#
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2)
B="$build/bench/roi-align"
[ -x "$B" ] || { echo "roi-align: no $B (make bench/roi-align first)" >&2; exit 1; }
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null || { echo "roi-align: /usr/bin/python3 needs torch and torchvision" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf 'multi-scale RoIAlign forward + backward, 2 x 512 RoIs, P2-P5 of 800x1344, 256 channels, %d rounds\n' "$rounds"
printf '%-7s %-6s %11s %11s %11s %11s %11s %11s %7s\n' threads output "ours fwd" "ours bwd" "ours step" "tv fwd" "tv bwd" "tv step" ratio
for t in "${threads[@]}"; do
    for out in 7 14; do
        : > "$tmp/o"; : > "$tmp/t"
        for r in $(seq "$rounds"); do
            OMP_NUM_THREADS=$t "$B" --threads "$t" --out "$out" --rounds 5 | awk '/^step/ {print $2, $4, $6}' >> "$tmp/o"
            OMP_NUM_THREADS=$t /usr/bin/python3 "$src/bench/roi-align.py" --threads "$t" --out "$out" --rounds 5 |
                awk '/^step/ {print $2, $4, $6}' >> "$tmp/t"
        done
        col() { awk -v c="$2" '{print $c}' "$1" | median; }
        so=$(col "$tmp/o" 1); st=$(col "$tmp/t" 1)
        printf '%-7s %-6s %11.1f %11.1f %11.1f %11.1f %11.1f %11.1f %7.2f\n' "$t" "${out}x$out" \
            "$(col "$tmp/o" 2)" "$(col "$tmp/o" 3)" "$so" "$(col "$tmp/t" 2)" "$(col "$tmp/t" 3)" "$st" \
            "$(echo "$st / $so" | bc -l)"
    done
done
echo "(milliseconds per step, median; ratio = torchvision / ours, target >= 1.0)"

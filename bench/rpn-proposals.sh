#!/bin/bash
# bench/rpn-proposals.sh: the RPN's anchors and proposal selection
# (trainer/det: det_grid_anchors + det_rpn_proposals) against torchvision's
# AnchorGenerator + box_coder.decode + filter_proposals, on 2 images of
# 800x1344 (P2..P6: 268,569 anchors each; bench/rpn-proposals.py), training
# sizes (top 2000 per level, NMS 0.7, top 2000 per image), both timed
# in-process with the same thread count (1, then 2).  ROUNDS alternating
# rounds of REPS runs each side; prints the median of the rounds' medians and
# the ratio torchvision time / ours (target >= 1.0), and how many images'
# proposals differ from torchvision's.
#
#   bench/rpn-proposals.sh [BUILD_DIR] [ROUNDS] [REPS]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
rounds=${2:-5}
reps=${3:-5}
py=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/det-bench-lib.sh
. "$src/bench/det-bench-lib.sh"
make -s -C "$build" bench/rpn-proposals
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
header runs
for threads in 1 2; do
        : > "$tmp/theirs"; : > "$tmp/ours"
        for _ in $(seq "$rounds"); do
                "$py" "$src/bench/rpn-proposals.py" "$tmp/data" "$reps" "$threads" >> "$tmp/theirs"
                OMP_NUM_THREADS=$threads "$build/bench/rpn-proposals" "$tmp/data" "$reps" "$threads" >> "$tmp/ours"
        done
        p=$(awk '$2 == "rpn" {print $3}' "$tmp/theirs" | med)
        o=$(awk '$2 == "rpn" {print $3}' "$tmp/ours" | med)
        ratio_row "anchors + decode + top-n + NMS + post top-n" "$threads" "$p" "$o"
done
echo "(ratio: torchvision time / ours, target >= 1.0; of 2 images, proposals that differ from torchvision's" \
        "as sets: $(awk '$1 == "mismatches" {print $2}' "$tmp/ours" | sort -n | tail -1)," \
        "largest coordinate difference $(awk '$1 == "maxdiff" {print $2}' "$tmp/ours" | sort -g | tail -1);" \
        "in order: $(awk '$1 == "reordered" {print $2}' "$tmp/ours" | sort -n | tail -1) (rows of equal score" \
        "ordered otherwise: torch's sorts are not stable))"

#!/bin/bash
# bench/nms.sh: det_nms (trainer/det/boxes.c) against torchvision.ops.nms on
# the CPU, on 2,000 and 20,000 detection-like boxes (bench/nms.py: clustered
# about objects, random scores, IoU > 0.5), both timed in-process around the
# call only, with the same thread count (1, then 2).  ROUNDS alternating
# rounds of REPS calls each side; prints the median of the rounds' medians
# and the ratio torchvision time / ours (target >= 1.0 each).  Fails if a
# keep list differs from torchvision's.
#
#   bench/nms.sh [BUILD_DIR] [ROUNDS] [REPS]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
rounds=${2:-5}
reps=${3:-20}
py=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/det-bench-lib.sh
. "$src/bench/det-bench-lib.sh"
make -s -C "$build" bench/nms
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
header calls
for threads in 1 2; do
        : > "$tmp/theirs"; : > "$tmp/ours"
        for _ in $(seq "$rounds"); do
                "$py" "$src/bench/nms.py" "$tmp/data" "$reps" "$threads" >> "$tmp/theirs"
                OMP_NUM_THREADS=$threads "$build/bench/nms" "$tmp/data" "$reps" "$threads" >> "$tmp/ours" || {
                        echo "nms.sh: det_nms's keep lists differ from torchvision's" >&2; exit 1; }
        done
        for n in 2000 20000; do
                p=$(awk -v op="nms-$n" '$2 == op {print $3}' "$tmp/theirs" | med)
                o=$(awk -v op="nms-$n" '$2 == op {print $3}' "$tmp/ours" | med)
                ratio_row "nms of $n boxes (IoU > 0.5)" "$threads" "$p" "$o"
        done
done
echo "(ratio: torchvision time / ours, target >= 1.0; keep lists identical to torchvision's)"

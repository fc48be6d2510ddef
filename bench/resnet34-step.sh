#!/bin/bash
# bench/resnet34-step.sh: a ResNet-34 training step (forward, backward, SGD)
# at batch 8 x 3 x 300 x 300 on the CPU, the trainer core against the same
# network in PyTorch (/usr/bin/python3) on the same machine and threads,
# alternating R rounds; prints images/s of each and the ratio (target >= 1.0),
# then forward + backward time per convolution shape of the network.
#
# On a shared machine other load slows either side at random: the ratio is
# given for the best round of each (least disturbed), for the median, and for
# CPU time per step (all threads), which other load disturbs least.
#
#   bench/resnet34-step.sh [BUILD_DIR] [THREADS] [ROUNDS] [BATCH] [SIZE]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
threads=${2:-$(nproc)}
rounds=${3:-3}
batch=${4:-8}
size=${5:-300}
B="$build/bench/resnet34-step"
[ -x "$B" ] || { echo "resnet34-step: no $B (build first)" >&2; exit 1; }
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null || { echo "resnet34-step: /usr/bin/python3 needs torch and torchvision" >&2; exit 1; }
export OMP_NUM_THREADS=$threads
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
args=(--batch "$batch" --size "$size" --threads "$threads" --iters 3 --warmup 1)
for r in $(seq "$rounds"); do
    "$B" "${args[@]}" | awk '/^step/ {print $4, $8}' >> "$tmp/ours"
    /usr/bin/python3 "$src/bench/resnet34-step.py" "${args[@]}" | awk '/^step/ {print $4, $8}' >> "$tmp/torch"
    echo "round $r: ours $(tail -1 "$tmp/ours" | cut -d' ' -f1) images/s, pytorch $(tail -1 "$tmp/torch" | cut -d' ' -f1) images/s" >&2
done
col() { awk -v c="$2" '{print $c}' "$1"; }
best() { sort -g | tail -1; }
lowest() { sort -g | head -1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { echo "$1 / $2" | bc -l; }
bo=$(col "$tmp/ours" 1 | best); bt=$(col "$tmp/torch" 1 | best)
mo=$(col "$tmp/ours" 1 | median); mt=$(col "$tmp/torch" 1 | median)
co=$(col "$tmp/ours" 2 | lowest); ct=$(col "$tmp/torch" 2 | lowest)
printf 'ResNet-34 training step, batch %d x 3 x %d x %d, %d threads, %d rounds\n' "$batch" "$size" "$size" "$threads" "$rounds"
printf '%-28s %12s %12s %8s\n' "" "trainer core" "PyTorch" "ratio"
printf '%-28s %12.3f %12.3f %8.3f\n' "images/s, best round" "$bo" "$bt" "$(ratio "$bo" "$bt")"
printf '%-28s %12.3f %12.3f %8.3f\n' "images/s, median" "$mo" "$mt" "$(ratio "$mo" "$mt")"
printf '%-28s %12.0f %12.0f %8.3f\n' "CPU ms per step, lowest" "$co" "$ct" "$(ratio "$ct" "$co")"
echo "(ratio > 1: the trainer core is faster; target >= 1.0)"

"$B" "${args[@]}" --layers --no-step | awk '/^conv/ {print $2, $3, $4}' > "$tmp/lo"
/usr/bin/python3 "$src/bench/resnet34-step.py" "${args[@]}" --layers --no-step | awk '/^conv/ {print $2, $3, $4}' > "$tmp/lt"
echo
echo "convolution shapes, forward + backward (ms per call, median; count per step)"
printf '%-24s %5s %10s %10s %7s\n' shape count ours pytorch ratio
join "$tmp/lo" "$tmp/lt" | awk '{ printf "%-24s %5d %10.2f %10.2f %7.2f\n", $1, $2, $3, $5, $5 / $3; to += $2 * $3; tt += $2 * $5 }
    END { printf "%-24s %5s %10.1f %10.1f %7.2f\n", "all convolutions", "", to, tt, tt / to }'

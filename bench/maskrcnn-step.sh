#!/bin/bash
# bench/maskrcnn-step.sh: a Mask R-CNN training step on the CPU (forward with
# the five losses, backward, SGD update), bench/maskrcnn-step (trainer/maskrcnn,
# --mode mlperf) against torchvision 0.14's MaskRCNN (bench/maskrcnn-step.py,
# /usr/bin/python3) on the same objects, machine and threads, alternating
# ROUNDS rounds; each side's figure is the median of its rounds' median steps.
#
#   reference  R50-FPN, 2 images of 800x1333 (800x1344 padded), 81 classes,
#              frozen batch norm, stem + layer1 frozen, RPN 2000/2000, 512
#              RoIs per image (target >= 1.0x)
#   small      maskrcnn.md section 7, 4 images of 128x128 (target >= 1.2x)
#
#   bench/maskrcnn-step.sh [BUILD_DIR] [THREADS] [ROUNDS] [CONFIGS...]
#
# MASKS=0: Faster R-CNN, the same models without the mask head (ours
# --masks 0 against torchvision's FasterRCNN; the same targets).
#
# Environment: MODE (mlperf or torchvision, ours; default mlperf), MASKS,
# TORCH_BLAS and OMP_WAIT_POLICY (bench/torch-env.sh), STEPS_REFERENCE and
# STEPS_SMALL (timed steps per round, after one untimed: 3 and 10).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
threads=${2:-2}
rounds=${3:-3}
shift 3 2>/dev/null || shift $#
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(small reference)
B="$build/bench/maskrcnn-step"
[ -x "$B" ] || { echo "maskrcnn-step: no $B (make bench/maskrcnn-step first)" >&2; exit 1; }
/usr/bin/python3 -c 'import torch, torchvision, PIL' 2>/dev/null ||
        { echo "maskrcnn-step: /usr/bin/python3 needs torch, torchvision and PIL" >&2; exit 1; }
. "$src/bench/torch-env.sh"
torch_blas
export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $threads threads, $rounds alternating rounds;" \
        "torch BLAS: $(torch_blas_name); OMP_WAIT_POLICY $OMP_WAIT_POLICY; ours --mode ${MODE:-mlperf}" \
        "$([ "${MASKS:-1}" = 0 ] && echo "; Faster R-CNN (no mask head)")"
for cfg in "${configs[@]}"; do
        if [ "$cfg" = small ]; then steps=${STEPS_SMALL:-10}; else steps=${STEPS_REFERENCE:-3}; fi
        args=(--config "$cfg" --threads "$threads" --iters "$steps" --warmup 1)
        ours=(); tv=()
        if [ "${MASKS:-1}" = 0 ]; then ours=(--masks 0); tv=(--no-masks); fi
        : > "$tmp/o"; : > "$tmp/t"
        for r in $(seq "$rounds"); do
                "$B" "${args[@]}" "${ours[@]}" --mode "${MODE:-mlperf}" > "$tmp/out-o"
                /usr/bin/python3 "$src/bench/maskrcnn-step.py" "${args[@]}" "${tv[@]}" > "$tmp/out-t"
                awk '/^step/ {print $2, $8}' "$tmp/out-o" >> "$tmp/o"
                awk '/^step/ {print $2, $8}' "$tmp/out-t" >> "$tmp/t"
                echo "$cfg round $r: ours $(tail -1 "$tmp/o" | cut -d' ' -f1) ms, torchvision" \
                        "$(tail -1 "$tmp/t" | cut -d' ' -f1) ms" >&2
        done
        sed -n 's/^losses/  ours losses:       /p' "$tmp/out-o"
        sed -n 's/^losses/  torchvision losses:/p' "$tmp/out-t"
        col() { awk -v c="$2" '{print $c}' "$1" | median; }
        so=$(col "$tmp/o" 1); st=$(col "$tmp/t" 1); co=$(col "$tmp/o" 2); ct=$(col "$tmp/t" 2)
        printf '%-10s step: ours %9.1f ms, torchvision %9.1f ms, ratio %5.2f;' "$cfg" "$so" "$st" \
                "$(echo "$st / $so" | bc -l)"
        printf ' CPU per step: ours %9.1f ms, torchvision %9.1f ms, ratio %5.2f\n' "$co" "$ct" \
                "$(echo "$ct / $co" | bc -l)"
done
echo "(median step of $rounds rounds each; ratio = torchvision / ours, > 1: ours faster; targets: reference >= 1.0," \
        "small >= 1.2)"

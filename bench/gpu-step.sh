#!/bin/bash
# bench/gpu-step.sh: training steps on one GPU, ours (the CUDA backend) against
# PyTorch on the same GPU, in three precisions: fp32 (no TF32 on either side),
# tf32 (convolutions in TF32: PyTorch's default for cuDNN, BD_CUDA_TF32=1 for
# ours) and amp (float16 activations, dynamic loss scaling).
#
#   ssd    benchd-ssd --synthetic, batch 32, 300x300, 60 steps: the images/s of
#          its last progress line; PyTorch: tests/ssd-golden.py bench (the same
#          model and loss), 20 steps after 5, cudnn.benchmark on
#   mrcnn  bench/maskrcnn-step --config reference (2 images of 800x1333, the
#          MLPerf R50-FPN) against bench/maskrcnn-step.py on the GPU: median step,
#          and the median host CPU time of a step on each side
#
#   bench/gpu-step.sh [BUILD_DIR] [ssd] [mrcnn]
#
# PYTHON (default python3) must have torch and torchvision with CUDA.  Ratios
# are PyTorch's step time / ours (> 1: ours faster).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
shift $(($# > 0 ? 1 : 0))
what=("$@")
[ ${#what[@]} -gt 0 ] || what=(ssd mrcnn)
py=${PYTHON:-python3}
grep -q '^#define HAVE_CUDA 1' "$build/config.h" 2>/dev/null || { echo "gpu-step.sh: $build was built without CUDA" >&2; exit 1; }
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L | grep -q '^GPU'; then
    echo "gpu-step.sh: no GPU (nvidia-smi)" >&2
    exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(nproc) CPUs;" \
     "$($py -c 'import torch; print("torch", torch.__version__)' 2>&1 | tail -1)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
field() { awk -v k="$1" '/^step/ { for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$2"; }   # NAME FILE
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'; }
for w in "${what[@]}"; do
    case $w in
    ssd)
        for p in fp32 tf32 amp; do
            tf=0; prec=fp32; targ=(--no-tf32)
            [ $p = tf32 ] && { tf=1; targ=(); }
            [ $p = amp ] && { prec=amp; targ=(--amp); }
            BD_CUDA_TF32=$tf "$build/benchd-ssd" --synthetic --backend cuda --precision $prec --batch-size 32 \
                --max-steps 60 --log-interval 10 --seed 1 --loader-workers 4 > "$tmp/o" 2>&1
            ours=$(sed -n 's/^epoch 1\/[0-9]* step 60\/.* \([0-9.]*\) images\/s$/\1/p' "$tmp/o")
            "$py" "$src/tests/ssd-golden.py" bench --device cuda "${targ[@]}" --batch 32 --steps 20 --warmup 5 > "$tmp/t" 2>&1
            theirs=$(sed -n 's/^images\/s \([0-9.]*\)$/\1/p' "$tmp/t")
            printf 'ssd   %-5s ours %8s images/s, PyTorch %8s images/s, ratio %s\n' $p "${ours:-failed}" \
                "${theirs:-failed}" "$(ratio "${ours:-0}" "${theirs:-0}")"
            [ -n "$ours" ] || tail -3 "$tmp/o"
        done ;;
    mrcnn)
        for p in fp32 tf32 amp; do
            tf=0; prec=fp32; targ=(--no-tf32)
            [ $p = tf32 ] && { tf=1; targ=(); }
            [ $p = amp ] && { prec=amp; targ=(--amp); }
            BD_CUDA_TF32=$tf "$build/bench/maskrcnn-step" --config reference --backend cuda --precision $prec \
                --iters 10 --warmup 3 --threads 8 > "$tmp/o" 2>&1
            ours=$(awk '/^step/ { print $2 }' "$tmp/o")
            "$py" "$src/bench/maskrcnn-step.py" --config reference --device cuda "${targ[@]}" --iters 10 --warmup 3 \
                --threads 8 > "$tmp/t" 2>&1
            theirs=$(awk '/^step/ { print $2 }' "$tmp/t")
            ocpu=$(field cpu-ms "$tmp/o"); tcpu=$(field cpu-ms "$tmp/t")
            omain=$(field main-ms "$tmp/o"); tmain=$(field main-ms "$tmp/t")
            printf 'mrcnn %-5s ours %8s ms/step, PyTorch %8s ms/step, ratio %s; host CPU ms/step ours %s (main thread %s), PyTorch %s (%s)\n' \
                $p "${ours:-failed}" "${theirs:-failed}" "$(ratio "${theirs:-0}" "${ours:-0}")" "${ocpu:--}" "${omain:--}" \
                "${tcpu:--}" "${tmain:--}"
            [ -n "$ours" ] || tail -3 "$tmp/o"
        done ;;
    *) echo "gpu-step.sh: $w: ssd or mrcnn" >&2; exit 2 ;;
    esac
done

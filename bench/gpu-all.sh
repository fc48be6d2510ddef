#!/bin/bash
# bench/gpu-all.sh: everything a lent GPU is for, in one run that fits in ten
# minutes on one H200, ending in one table.
#
#   bench/gpu-all.sh [BUILD_DIR] [OUT_DIR] [PART...]
#
# PARTs (default all, in this order): checks steps variants profiles learn.
#
#  1. make check-gpu's programs: the CUDA backend, SSD, the detection
#     operators and Mask R-CNN against the CPU (tests/gpu/check-gpu.sh and
#     the test-*-gpu programs), run from BUILD_DIR without make;
#  2. bench/gpu-step.sh: SSD (batch 32, 300x300) and the MLPerf Mask R-CNN
#     reference step in fp32, tf32 and amp against PyTorch on the same GPU,
#     with our and PyTorch's host CPU time per Mask R-CNN step;
#  3. the choices behind our figures (and the Mask R-CNN amp step's host CPU
#     with OpenMP's threads passive, and with 2 threads): SSD with the convolution algorithms of
#     cuDNN's heuristics instead of measured (BD_CUDA_CONV_ALGO=heuristic), and
#     in amp each way of running half-precision batch norm (BD_CUDA_BN=ex,
#     persistent, spatial), and the measured algorithms kept on disk
#     (BD_CUDA_ALGO_CACHE) by one run and taken by the next;
#  4. where the time goes: BD_CUDA_PROFILE tables of SSD in fp32 and amp and
#     of the Mask R-CNN amp step (each operation kind's time with the stream
#     drained around it);
#  5. SSD learning the generated shapes dataset to bbox mAP 0.30 on the GPU
#     (systems/local.json's recipe, one rank of 32 images).
#
# Every part has its own time limit (GPU_ALL_BUDGET, default 570 s, bounds the
# last); a part that fails or runs out of time
# says so in the table and the rest still run.  Logs and profiles go to
# OUT_DIR (default: a temporary directory, removed).  Exit 1 when a check
# failed.  Prepare the machine first: on a lent machine with no Debian
# packages, bench/gpu-bundle.sh's archive, unpacked and its env.sh sourced.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
out=${2:-}
shift $(($# > 2 ? 2 : $#))
parts=" ${*:-checks steps variants profiles learn} "
for p in $parts; do
    case $p in checks|steps|variants|profiles|learn) ;; *) echo "gpu-all.sh: unknown part '$p'" >&2; exit 2 ;; esac
done
want() { [[ $parts == *" $1 "* ]]; }
py=${PYTHON:-python3}
grep -q '^#define HAVE_CUDA 1' "$build/config.h" 2>/dev/null || { echo "gpu-all.sh: $build was built without CUDA" >&2; exit 1; }
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L | grep -q '^GPU'; then
    echo "gpu-all.sh: no GPU (nvidia-smi)" >&2
    exit 1
fi
if [ -z "$out" ]; then
    out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
t_start=$(date +%s)
budget=${GPU_ALL_BUDGET:-570}     # seconds the whole run may take: the learning run gets what is left
table=()
row() { table+=("$(printf '%-44s %s' "$1" "$2")"); printf '== %-44s %s\n' "$1" "$2"; }
elapsed() { echo $(($(date +%s) - t_start)); }
fail=0

echo "gpu-all: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1);" \
     "$(nproc) CPUs; $($py -c 'import torch; print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version())' 2>&1 | tail -1)"

# ---- 1. check-gpu -------------------------------------------------------------
if want checks; then
timeout 240 env srcdir="$src" top_builddir="$build" bash "$src/tests/gpu/check-gpu.sh" > "$out/check-gpu.log" 2>&1
rc=$?
sed 's/^/  /' "$out/check-gpu.log"
row "check-gpu.sh (backend, 1 rank, amp training)" "$([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)")"
[ $rc -eq 0 ] || fail=1
for t in helper/ssd-cuda-check gpu/test-det-boxes-gpu gpu/test-det-masks-gpu gpu/test-det-roi-gpu gpu/test-mrcnn-gpu; do
    timeout 180 "$build/tests/$t" > "$out/$(basename "$t").tap" 2>&1
    rc=$?
    p=$(grep -c '^ok' "$out/$(basename "$t").tap"); b=$(grep -c '^not ok' "$out/$(basename "$t").tap")
    grep -E '^not ok' "$out/$(basename "$t").tap" | head -10 | sed 's/^/  /'
    row "$(basename "$t")" "$p passed, $b failed$([ $rc -eq 0 ] || echo ", exit $rc")"
    [ $rc -eq 0 ] && [ "$b" -eq 0 ] || fail=1
done
echo "gpu-all: checks done at $(elapsed) s"
fi

# ---- 2. training steps against PyTorch --------------------------------------------
if want steps; then
timeout 300 bash "$src/bench/gpu-step.sh" "$build" ssd mrcnn > "$out/gpu-step.log" 2>&1
rc=$?
cat "$out/gpu-step.log"
while read -r line; do
    case $line in ssd*|mrcnn*) row "$(echo "$line" | awk '{ print $1, $2 }')" "$(echo "$line" | cut -d' ' -f3- | sed 's/^ *//')" ;; esac
done < "$out/gpu-step.log"
[ $rc -eq 0 ] || row "gpu-step.sh" "exit $rc"
echo "gpu-all: steps done at $(elapsed) s"
fi

# ---- 3. our choices, each against its alternative -----------------------------------
ssd_rate() {    # precision, then environment assignments: images/s of the 60th step
    local prec=$1; shift
    env "$@" timeout 60 "$build/benchd-ssd" --synthetic --backend cuda --precision "$prec" --batch-size 32 \
        --max-steps 60 --log-interval 10 --seed 1 --loader-workers 4 > "$out/ssd-variant.log" 2>&1
    sed -n 's/^epoch 1\/[0-9]* step 60\/.* \([0-9.]*\) images\/s$/\1/p' "$out/ssd-variant.log" | grep . ||
        { tail -2 "$out/ssd-variant.log" | sed 's/^/  /' >&2; echo failed; }
}
if want variants; then
row "ssd tf32 measured algorithms" "$(ssd_rate fp32 BD_CUDA_TF32=1) images/s"
row "ssd tf32 heuristic algorithms" "$(ssd_rate fp32 BD_CUDA_TF32=1 BD_CUDA_CONV_ALGO=heuristic) images/s"
row "ssd amp measured algorithms, ex bn" "$(ssd_rate amp) images/s"
row "ssd amp heuristic algorithms, ex bn" "$(ssd_rate amp BD_CUDA_CONV_ALGO=heuristic) images/s"
# measured algorithms kept on disk (BD_CUDA_ALGO_CACHE): the first run
# writes them, the second takes them without timing
rm -rf "$out/algos"
r1=$(ssd_rate amp BD_CUDA_ALGO_CACHE="$out/algos")
n1=$(grep -c '^[0-9a-f]\{16\} ' "$out"/algos/conv-algos-*.txt 2>/dev/null)
r2=$(ssd_rate amp BD_CUDA_ALGO_CACHE="$out/algos")
row "ssd amp algorithms from disk" "$r2 images/s (writing run $r1; ${n1:-no} shapes in the file)"
[ "${n1:-0}" -gt 0 ] || fail=1
row "ssd amp persistent bn" "$(ssd_rate amp BD_CUDA_BN=persistent) images/s"
row "ssd amp spatial bn" "$(ssd_rate amp BD_CUDA_BN=spatial) images/s"
# the host CPU of a Mask R-CNN step: how much of it is OpenMP threads
# spinning between regions, and whether fewer threads slow the step
mrcnn_host() {  # threads, then environment assignments: "MS ms/step, CPU ms/step"
    local th=$1; shift
    env OMP_NUM_THREADS="$th" "$@" timeout 120 "$build/bench/maskrcnn-step" --config reference --backend cuda --precision amp \
        --iters 10 --warmup 3 --threads "$th" > "$out/mrcnn-host.log" 2>&1
    awk '/^step/ { for (i = 1; i < NF; i++) { if ($i == "cpu-ms") c = $(i + 1); if ($i == "main-ms") m = $(i + 1) }
                   printf "%s ms/step, host CPU %s ms/step (main thread %s)", $2, c, m; f = 1 }
         END { if (!f) print "failed" }' "$out/mrcnn-host.log"
}
row "mrcnn amp, 8 threads" "$(mrcnn_host 8)"
row "mrcnn amp, 8 threads, OMP_WAIT_POLICY=passive" "$(mrcnn_host 8 OMP_WAIT_POLICY=passive)"
row "mrcnn amp, 2 threads, OMP_WAIT_POLICY=passive" "$(mrcnn_host 2 OMP_WAIT_POLICY=passive)"
echo "gpu-all: variants done at $(elapsed) s"
fi

# ---- 4. profiles -----------------------------------------------------------------
if want profiles; then
for p in fp32 amp; do
    rm -f "$out/profile-ssd-$p.txt"
    BD_CUDA_PROFILE="$out/profile-ssd-$p.txt" timeout 90 "$build/benchd-ssd" --synthetic --backend cuda \
        --precision $p --batch-size 32 --max-steps 20 --log-interval 10 --seed 1 --loader-workers 4 \
        > "$out/profile-ssd-$p.log" 2>&1
    echo "profile: SSD $p, 20 steps, batch 32"; sed 's/^/  /' "$out/profile-ssd-$p.txt" 2>/dev/null
done
rm -f "$out/profile-mrcnn-amp.txt"
BD_CUDA_PROFILE="$out/profile-mrcnn-amp.txt" timeout 90 "$build/bench/maskrcnn-step" --config reference \
    --backend cuda --precision amp --iters 5 --warmup 2 --threads 8 > "$out/profile-mrcnn-amp.log" 2>&1
echo "profile: Mask R-CNN reference step, amp, 7 steps"; head -20 "$out/profile-mrcnn-amp.txt" 2>/dev/null | sed 's/^/  /'
echo "gpu-all: profiles done at $(elapsed) s"
fi

# ---- 5. SSD learns on the GPU ----------------------------------------------------------
data=$out/shapes
if ! want learn; then
    :
elif timeout 60 "$build/benchctl" dataset synth --images 1200 --val-images 200 --seed 1 -o "$data" > "$out/synth.log" 2>&1; then
    s0=$(date +%s)
    left=$((budget - $(elapsed) - 15)); [ $left -gt 240 ] && left=240
    [ $left -gt 30 ] || left=30
    timeout $left "$build/benchd-ssd" --data "$data" --backend cuda --batch-size 32 --lr 0.02 --warmup-epochs 1 \
        --epochs 24 --decay-epochs 16,20 --eval-epochs 10,12,14,16,18,20,22,24 --target-map 0.30 \
        --image-size 160 --backbone resnet18 --width-mult 0.25 --threads 8 --loader-workers 6 --seed 1 \
        > "$out/ssd-learn.log" 2>&1
    rc=$?
    grep -E 'eval_accuracy|run_stop' "$out/ssd-learn.log" | tail -4 | sed 's/^/  /'
    st=$(grep -o '"status": *"[a-z]*"' "$out/ssd-learn.log" | tail -1 | sed 's/.*"\([a-z]*\)"$/\1/')
    acc=$(grep -o '"key": *"eval_accuracy", *"value": *[0-9.]*' "$out/ssd-learn.log" | tail -1 | sed 's/.*: *//')
    row "ssd learns shapes to mAP 0.30 (cuda)" "${st:-no result} (mAP ${acc:--}, $(($(date +%s) - s0)) s, exit $rc)"
    [ "$st" = success ] || { fail=1; tail -3 "$out/ssd-learn.log" | sed 's/^/  /'; }
else
    row "ssd learns shapes (cuda)" "no data: $(tail -1 "$out/synth.log")"; fail=1
fi

echo
echo "gpu-all: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(elapsed) s"
printf '%s\n' "${table[@]}"
exit $fail

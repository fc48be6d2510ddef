#!/bin/bash
# bench/ssd-step.sh: full SSD300-ResNet-34 training steps on the CPU, benchd-ssd
# against the PyTorch implementation of the same model (tests/ssd-golden.py,
# the one the golden tests compare with) on the same machine and threads.
# A step: targets encoded, forward, loss with hard negative mining, backward,
# SGD with momentum; batch 8, 300x300, 81 classes, random images.  Ours runs
# as `benchd-ssd --synthetic` (its data loader on one more thread making
# random images); images/s over the timed steps after the warmup ones.
# Target: ours / PyTorch >= 1.0.
#
#   bench/ssd-step.sh [BUILD_DIR] [THREADS] [STEPS] [WARMUP]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
threads=${2:-2}
steps=${3:-3}
warmup=${4:-1}
ssd="$build/benchd-ssd"
[ -x "$ssd" ] || { echo "ssd-step.sh: no $ssd (build first)" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "ssd-step.sh: no PyTorch for /usr/bin/python3" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "SSD300-ResNet-34 training step, batch 8, 300x300, $threads threads, $steps timed steps after $warmup"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1); load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ours: one progress line per step; the time of a step is 8 / its images/s
out=$("$ssd" --synthetic --batch-size 8 --image-size 300 --backbone resnet34 --threads "$threads" \
      --loader-workers 1 --max-steps $((warmup + steps)) --log-interval 1 --seed 1 2>&1) ||
    { printf '%s\n' "$out" | tail -5 >&2; exit 1; }
ours=$(printf '%s\n' "$out" | sed -n 's/^epoch 1\/80 step [0-9]*\/[0-9]* (\([0-9]*\)):.* \([0-9.]*\) images\/s$/\1 \2/p' |
       awk -v w="$warmup" '$1 > w { t += 8 / $2; n += 8 } END { if (t > 0) printf "%.4f", n / t }')
[ -n "$ours" ] || { echo "ssd-step.sh: no step timings in benchd-ssd's output" >&2; exit 1; }

theirs=$(/usr/bin/python3 "$src/tests/ssd-golden.py" bench --batch 8 --size 300 --depth 34 --classes 81 \
         --threads "$threads" --steps "$steps" --warmup "$warmup" | sed -n 's/^images\/s //p')

printf '  benchd-ssd (%s): %8.3f images/s\n' "$(printf '%s\n' "$out" | sed -n 's/^# benchd-ssd [^:]*: .*\(cpu backend ([0-9]* threads)\).*/\1/p')" "$ours"
printf '  PyTorch %s:    %8.3f images/s\n' "$(/usr/bin/python3 -c 'import torch; print(torch.__version__)')" "$theirs"
printf '  ratio:                             %8.3f (target >= 1.0)\n' "$(echo "$ours / $theirs" | bc -l)"

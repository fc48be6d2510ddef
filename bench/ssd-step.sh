#!/bin/bash
# bench/ssd-step.sh: full SSD300-ResNet-34 training steps on the CPU, benchd-ssd
# against the PyTorch implementation of the same model (tests/ssd-golden.py,
# the one the golden tests compare with) on the same machine and threads.
# A step: targets encoded, forward, loss with hard negative mining, backward,
# SGD with momentum; batch 8, 300x300, 81 classes, random images.  Ours runs
# as `benchd-ssd --synthetic` (its data loader on one more thread making
# random images).  The two alternate for ROUNDS rounds so that drift of a
# shared machine hits both alike; each round times STEPS steps after WARMUP
# ones, and the figure of each side is 8 / its median step time.
# Target: ours / PyTorch >= 1.0.
#
#   bench/ssd-step.sh [BUILD_DIR] [THREADS] [STEPS] [WARMUP] [ROUNDS]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
threads=${2:-2}
steps=${3:-4}
warmup=${4:-1}
rounds=${5:-2}
ssd="$build/benchd-ssd"
[ -x "$ssd" ] || { echo "ssd-step.sh: no $ssd (build first)" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "ssd-step.sh: no PyTorch for /usr/bin/python3" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "SSD300-ResNet-34 training step, batch 8, 300x300, $threads threads; $rounds rounds of $steps timed steps after $warmup"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1); load average $(cut -d' ' -f1-3 /proc/loadavg)"

ours_times=() theirs_times=() ours_desc=
for ((round = 1; round <= rounds; round++)); do
    # ours: one progress line per step; the time of a step is 8 / its images/s
    out=$("$ssd" --synthetic --batch-size 8 --image-size 300 --backbone resnet34 --threads "$threads" \
          --loader-workers 1 --max-steps $((warmup + steps)) --log-interval 1 --seed 1 2>&1) ||
        { printf '%s\n' "$out" | tail -5 >&2; exit 1; }
    ours_desc=$(printf '%s\n' "$out" | sed -n 's/^# benchd-ssd [^:]*: .*\(cpu backend ([0-9]* threads)\).*/\1/p')
    t=$(printf '%s\n' "$out" | sed -n 's/^epoch 1\/[0-9]* step [0-9]*\/[0-9]* (\([0-9]*\)):.* \([0-9.]*\) images\/s$/\1 \2/p' |
        awk -v w="$warmup" '$1 > w { printf "%.4f\n", 8 / $2 }')
    [ -n "$t" ] || { echo "ssd-step.sh: no step timings in benchd-ssd's output" >&2; exit 1; }
    ours_times+=($t)
    t=$(/usr/bin/python3 "$src/tests/ssd-golden.py" bench --batch 8 --size 300 --depth 34 --classes 81 \
        --threads "$threads" --steps "$steps" --warmup "$warmup" | sed -n 's/^step [0-9]* \([0-9.]*\) s$/\1/p')
    [ -n "$t" ] || { echo "ssd-step.sh: no step timings from the PyTorch bench" >&2; exit 1; }
    theirs_times+=($t)
    echo "  round $round: benchd-ssd steps ${ours_times[*]: -$steps} s; PyTorch ${theirs_times[*]: -$steps} s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ours=$(echo "8 / $(median "${ours_times[@]}")" | bc -l)
theirs=$(echo "8 / $(median "${theirs_times[@]}")" | bc -l)
printf '  benchd-ssd (%s): %8.3f images/s (median step)\n' "$ours_desc" "$ours"
printf '  PyTorch %s:    %8.3f images/s (median step)\n' "$(/usr/bin/python3 -c 'import torch; print(torch.__version__)')" "$theirs"
printf '  ratio:                             %8.3f (target >= 1.0)\n' "$(echo "$ours / $theirs" | bc -l)"

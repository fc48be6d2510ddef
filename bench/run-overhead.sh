#!/bin/bash
# bench/run-overhead.sh: what benchctl costs around a local run.
#
# 'benchctl submit --system local torchvision-maskrcnn --wait' (render,
# record in the results store, start the script, follow the run to its end)
# against the same mpirun command run by hand: the launch line benchctl
# renders for it, the same 2 ranks, the same options and the same exports
# (MASTER_ADDR, MASTER_PORT), its output to a log file.  Each run is a
# throughput run of STEPS timed steps after 1 on a tiny generated dataset
# (40 images of 128 pixels), so the trainer's start (Python, torch, the
# model, gloo's rendezvous) is most of it.  ROUNDS rounds, alternating;
# prints the medians of the wall times and the ratio (target <= 1.02).
# Needs Debian's python3 with torch and torchvision, and pycocotools and
# mlperf-logging for it (BENCHD_PYTHONPATH, default the site-packages of
# BUILD_DIR/venv, which the tests make).
#
#   bench/run-overhead.sh [BUILD_DIR] [ROUNDS] [STEPS]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
rounds=${2:-5}
steps=${3:-2}
BENCHCTL="$build/benchctl"
[ -x "$BENCHCTL" ] || { echo "run-overhead: no $BENCHCTL (build first)" >&2; exit 1; }
[ -x "$build/benchd-tv-maskrcnn" ] || { echo "run-overhead: no $build/benchd-tv-maskrcnn" >&2; exit 1; }
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null ||
    { echo "run-overhead: no torch or torchvision for /usr/bin/python3" >&2; exit 1; }
if [ -z "${BENCHD_PYTHONPATH:-}" ]; then
    sites=("$build"/venv/lib/python3*/site-packages)
    export BENCHD_PYTHONPATH=${sites[0]}
fi
PYTHONPATH=$BENCHD_PYTHONPATH /usr/bin/python3 -c 'import pycocotools, mlperf_logging' 2>/dev/null ||
    { echo "run-overhead: no pycocotools and mlperf-logging in BENCHD_PYTHONPATH ($BENCHD_PYTHONPATH)" >&2; exit 1; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
export HOME="$tmp/home" BENCHD_HOME="$tmp/benchd" BENCHD_SYSTEMS="$src/systems"
unset BENCHD_WORKLOADS XDG_CONFIG_HOME
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$HOME" "$tmp/logs"
"$BENCHCTL" dataset synth --images 40 --val-images 8 --size 128 --classes 3 --objects 3 --seed 1 \
    -o "$tmp/ds" >/dev/null
sets=(--set maskrcnn.benchmark_steps="$steps" --set maskrcnn.warmup_steps=1)
submit=("$BENCHCTL" submit --system local torchvision-maskrcnn --runs 1 --data "$tmp/ds" --logdir "$tmp/logs"
        "${sets[@]}" --wait)
# the launch line benchctl renders, continuation lines joined: mpirun ... --seed "$seed"
launch=$("$BENCHCTL" render --system local torchvision-maskrcnn --runs 1 --set paths.data="$tmp/ds" \
             --set paths.logs="$tmp/logs" "${sets[@]}" --run-id hand |
         sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' | grep -E '^ *mpirun ')
by_hand() {   # ROUND
    BENCHD_BIN=$build LOGDIR=$tmp/logs RUN_ID=hand trial=$1 seed=$((1000 + $1)) MASTER_ADDR=127.0.0.1 \
        MASTER_PORT=$((29500 + $1)) bash -c "export MASTER_ADDR MASTER_PORT; $launch" >"$tmp/logs/hand_$1.log" 2>&1
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# one of each first, not counted: the page cache holds torch after it
by_hand 0 || { echo "run-overhead: the command by hand failed ($tmp/logs/hand_0.log):" >&2;
               tail -5 "$tmp/logs/hand_0.log" >&2; exit 1; }
"${submit[@]}" >"$tmp/submit.out" 2>&1 || { echo "run-overhead: benchctl submit failed:" >&2;
                                            tail -5 "$tmp/submit.out" >&2; exit 1; }
bc_times=() hand_times=() ratios=()
for r in $(seq "$rounds"); do
    t0=$EPOCHREALTIME; "${submit[@]}" >"$tmp/submit.out" 2>&1 || fail=submit; t1=$EPOCHREALTIME
    b=$(echo "$t1 - $t0" | bc -l)
    t0=$EPOCHREALTIME; by_hand "$r" || fail="by hand"; t1=$EPOCHREALTIME
    [ -z "${fail:-}" ] || { echo "run-overhead: round $r: $fail failed (a port taken? run again)" >&2; exit 1; }
    h=$(echo "$t1 - $t0" | bc -l)
    bc_times+=("$b") hand_times+=("$h") ratios+=("$(echo "$b / $h" | bc -l)")
done
printf 'CPU:                %s, %s cores\n' "$(lscpu | sed -n 's/^Model name: *//p')" "$(nproc)"
printf 'runs:               %d each, alternating, after one of each; %d timed steps after 1, 2 ranks\n' \
    "$rounds" "$steps"
printf 'benchctl submit:    median %.3f s (%s)\n' "$(median "${bc_times[@]}")" \
    "$(printf '%.2f ' "${bc_times[@]}")"
printf 'by hand (mpirun):   median %.3f s (%s)\n' "$(median "${hand_times[@]}")" \
    "$(printf '%.2f ' "${hand_times[@]}")"
printf 'ratio:              %.3f of the medians, %.3f the median pair (target <= 1.02)\n' \
    "$(echo "$(median "${bc_times[@]}") / $(median "${hand_times[@]}")" | bc -l)" "$(median "${ratios[@]}")"

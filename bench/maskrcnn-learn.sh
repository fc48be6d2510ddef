#!/bin/bash
# bench/maskrcnn-learn.sh: the learning run of maskrcnn.md section 7 (the
# small configuration, batch 4, 2 threads, up to ~1,500 iterations on the
# shapes dataset, bbox and segm AP of the 200-image validation split after
# every epoch) until both APs reach TARGET (default 0.30, the learning
# test's; TARGET=0: every iteration), by torchvision 0.14
# (bench/maskrcnn-tv-learn.py) and by ours, one after the other on the same
# data, machine and cores; the time of each run and the ratio ours /
# torchvision (target <= 1.0).
#
#   bench/maskrcnn-learn.sh [BUILD_DIR] [THREADS] [DATA]
#
# Ours: `benchctl submit --system local maskrcnn --data DATA --wait` (2 ranks
# of 1 thread, systems/local.json's settings), timed from the command's
# start to its end (launch, data loading and evaluations included), in a
# results store of its own; OURS=COMMAND instead runs COMMAND --data DATA.
# Torchvision: its training loops and evaluations (the loading of the images
# into memory left out), 1 process of THREADS threads.
#
# DATA: a dataset of benchctl dataset synth (default: made in BUILD_DIR/
# synth128 with --images 2000 --val-images 200 --size 128 --classes 3
# --objects 3 --seed 1).  pycocotools: BUILD_DIR/venv (PYTHON's
# site-packages, made as t0620 makes it).  TORCH_BLAS and OMP_WAIT_POLICY:
# bench/torch-env.sh; torchvision's OpenBLAS runs on 1 thread (its matrix
# products are small here; a second BLAS thread only contends with
# OpenMP's).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
threads=${2:-2}
data=${3:-$build/synth128}
B="$build/benchctl"
if [ ! -d "$data" ]; then
        [ -x "$B" ] || { echo "maskrcnn-learn.sh: no $B (build first)" >&2; exit 1; }
        "$B" dataset synth --images 2000 --val-images 200 --size 128 --classes 3 --objects 3 --seed 1 -o "$data"
fi
venv=$build/venv
site=$(echo "$venv"/lib/python3*/site-packages)
[ -d "$site/pycocotools" ] || { echo "maskrcnn-learn.sh: no pycocotools in $venv (run t0620 or pip install it)" >&2; exit 1; }
. "$src/bench/torch-env.sh"
torch_blas
export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $threads threads; torch BLAS: $(torch_blas_name);" \
        "OMP_WAIT_POLICY $OMP_WAIT_POLICY"
target=${TARGET:-0.30}
/usr/bin/python3 "$src/bench/maskrcnn-tv-learn.py" "$data" --threads "$threads" --pycocotools "$site" \
        --target "$target" | tee "$tmp/tv" | grep -E '^(it|epoch|final|data|parameters|target) '
tv=$(awk '/^final/ {print $5 + $9}' "$tmp/tv")
start=$(date +%s.%N)
if [ -n "${OURS:-}" ]; then
        # shellcheck disable=SC2086  # OURS is a command line
        $OURS --data "$data" | tee "$tmp/ours"
else
        t=$target
        [ "$(echo "$t > 0" | bc -l)" = 1 ] || t=1
        BENCHD_HOME=$tmp/home "$B" submit --system local maskrcnn --runs 1 --data "$data" --logdir "$tmp/logs" \
                --set maskrcnn.target_map_bbox="$t" --set maskrcnn.target_map_segm="$t" --wait
        grep -hE '^(step|#) ' "$tmp"/logs/*.log || true
        BENCHD_HOME=$tmp/home "$B" report last
fi
ours=$(echo "$(date +%s.%N) - $start" | bc -l)
printf 'runs to bbox and segm AP %s: ours %.1f s, torchvision %.1f s (training and evaluations, its data loading apart);' \
        "$target" "$ours" "$tv"
printf ' ratio ours / torchvision %.2f (target <= 1.0)\n' "$(echo "$ours / $tv" | bc -l)"

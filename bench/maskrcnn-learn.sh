#!/bin/bash
# bench/maskrcnn-learn.sh: the learning run of maskrcnn.md section 7 (the
# small configuration, batch 4, 2 threads, ~1,500 iterations on the shapes
# dataset, bbox and segm AP of the 200-image validation split after every
# epoch), torchvision 0.14 (bench/maskrcnn-tv-learn.py) and, when OURS is
# set, our trainer (OURS: its command line, run with --data DATA appended),
# one after the other on the same data, machine and threads; the time of
# each run (torchvision: its training loops and evaluations, the loading of
# the images into memory left out; ours: the whole process) and the ratio
# ours / torchvision (target <= 1.0).
#
#   bench/maskrcnn-learn.sh [BUILD_DIR] [THREADS] [DATA]
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
/usr/bin/python3 "$src/bench/maskrcnn-tv-learn.py" "$data" --threads "$threads" --pycocotools "$site" |
        tee "$tmp/tv" | grep -E '^(it|epoch|final|data|parameters) '
tv=$(awk '/^final/ {print $5 + $9}' "$tmp/tv")
if [ -n "${OURS:-}" ]; then
        start=$(date +%s.%N)
        # shellcheck disable=SC2086  # OURS is a command line
        $OURS --data "$data" | tee "$tmp/ours"
        ours=$(echo "$(date +%s.%N) - $start" | bc -l)
        printf 'whole runs: ours %.1f s, torchvision %.1f s (training and evaluations, data loading apart);' \
                "$ours" "$tv"
        printf ' ratio ours / torchvision %.2f (target <= 1.0)\n' "$(echo "$ours / $tv" | bc -l)"
fi

#!/bin/bash
# SSD against a PyTorch implementation of the same model on random weights
# (tests/ssd-golden.py, Debian's torch): default boxes, encoded targets,
# forward outputs, loss, gradients, decoding and NMS (tolerances in
# tests/helper/ssd-golden.c).  Two models: a small one (ResNet-18, 128x128,
# width 1/4, 7 classes, 3 images) in float32 and in float64, and the MLPerf
# SSD300-ResNet-34 (81 classes, 1 image) in float32.  SSD_GOLDEN_FULL=1 also
# runs SSD300 in float64 (minutes: the reference loops); SSD_GOLDEN_SSD300=0
# leaves SSD300 out (CI's ASan/UBSan stage: the small model runs the same
# code sanitized, SSD300 took 7 of its minutes there).
. "${srcdir:-.}/tests/lib.sh"
G="$top_builddir/tests/helper/ssd-golden"
[ -x "$G" ] || skip_all "tests/helper/ssd-golden not built"
/usr/bin/python3 -c 'import torch' 2>/dev/null || skip_all "no PyTorch for /usr/bin/python3 (python3-torch)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
GEN="$srcdir/tests/ssd-golden.py"

run_golden() { golden_run "$G" "$@"; }

small=(--depth 18 --size 128 --width 0.25 --classes 7)
check "small model: PyTorch reference generated" \
    /usr/bin/python3 "$GEN" gen "$tmp/small" "${small[@]}" --batch 3 --threads 2
run_golden "small model, float32" "$tmp/small" "${small[@]}"
run_golden "small model, float64" "$tmp/small" "${small[@]}" --f64

if [ "${SSD_GOLDEN_SSD300:-1}" = 0 ]; then
    skip 4 "SSD300-ResNet-34: SSD_GOLDEN_SSD300=0"
else
    check "SSD300-ResNet-34: PyTorch reference generated" \
        /usr/bin/python3 "$GEN" gen "$tmp/ssd300" --batch 1 --threads 2
    run_golden "SSD300-ResNet-34, float32" "$tmp/ssd300"
    if [ "${SSD_GOLDEN_FULL:-0}" = 1 ]; then
        run_golden "SSD300-ResNet-34, float64" "$tmp/ssd300" --f64
    fi
fi
done_testing

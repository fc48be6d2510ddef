#!/bin/bash
# check-gpu.sh: what `make check-gpu` runs on a machine with a GPU.
#
#  1. tests/gpu/test-trainer-gpu: every CUDA operation against the CPU
#     backend on random inputs (float32 and mixed precision), and a few
#     ResNet training steps on both;
#  2. trainer-tool on the CUDA backend: 1 rank, 2 ranks over NCCL (2 GPUs or
#     more) and 2 ranks sharing one GPU (MPI through host memory: NCCL
#     refuses them), whose parameters must equal the 1-rank run's (1e-5) and
#     each other's;
#  3. mixed precision training: finite, decreasing losses.
# Elsewhere it says that it skipped and why, and succeeds.
set -u
: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$PWD}"
skip() { echo "check-gpu: skipped: $*"; exit 0; }
grep -q '^#define HAVE_CUDA 1' "$top_builddir/config.h" 2>/dev/null ||
    skip "built without CUDA (configure found no nvcc, cuDNN, cuBLAS and NCCL; see --with-cuda)"
command -v nvidia-smi >/dev/null 2>&1 || skip "no nvidia-smi: no NVIDIA driver on this machine"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ngpu" -gt 0 ] || skip "nvidia-smi lists no GPU"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
T=$top_builddir/tests/helper/trainer-tool
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0

echo "check-gpu: $ngpu GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
"$top_builddir/tests/gpu/test-trainer-gpu" > "$tmp/ops.tap" 2>&1
rc=$?
grep -E '^(not ok|#)' "$tmp/ops.tap" | head -40
pass=$(grep -c '^ok' "$tmp/ops.tap"); bad=$(grep -c '^not ok' "$tmp/ops.tap")
echo "check-gpu: CUDA against CPU: $pass passed, $bad failed"
[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] || fail=1

common=(--backend cuda --frozen-bn --steps 4 --batch 8 --depth 18 --width 16 --size 32 --seed 5)
if "$T" train "${common[@]}" --params-out "$tmp/p1" > "$tmp/one.out" 2>&1; then
    echo "check-gpu: 1 rank on CUDA: ok ($(grep -c '^step' "$tmp/one.out") steps)"
else
    echo "check-gpu: 1 rank on CUDA: FAILED"; sed 's/^/  /' "$tmp/one.out" | tail -5; fail=1
fi
# two_ranks WHAT OK_WHAT NAME SHARED [mpirun options]: 2 ranks whose
# parameters must equal each other's and the 1-rank run's (1e-5); SHARED 1:
# the run must say its ranks share a GPU (MPI through host memory), 0: not
two_ranks() {
    local what=$1 ok_what=$2 out=$tmp/$3.out params=$tmp/$3.params shared=$4 rel
    shift 4
    if timeout 600 mpirun -np 2 "$@" "$T" train "${common[@]}" --params-out "$params" > "$out" 2>&1 &&
       grep -q '^ranks 2 identical yes' "$out" && { grep -q '^ranks share a GPU' "$out"; [ $? -eq $((1 - shared)) ]; }; then
        rel=$("$T" compare "$tmp/p1" "$params" | awk '{ for (i = 1; i < NF; i++) if ($i == "relative") print $(i + 1) }')
        if awk -v r="$rel" 'BEGIN { exit !(r + 0 <= 1e-5) }'; then
            echo "check-gpu: $ok_what: ok (identical ranks, $rel from 1 rank)"
        else
            echo "check-gpu: $what: FAILED ($rel from 1 rank)"; fail=1
        fi
    else
        echo "check-gpu: $what: FAILED"; sed 's/^/  /' "$out" | tail -5; fail=1
    fi
}
if [ "$ngpu" -ge 2 ] && command -v mpirun >/dev/null; then
    two_ranks "2 ranks over NCCL" "2 ranks over NCCL" two 0
else
    echo "check-gpu: 2 ranks over NCCL: skipped: NCCL runs one rank per GPU and $ngpu is visible (or no mpirun)"
fi
# two ranks on one GPU: NCCL refuses them, the gradients go through MPI on
# the host, and the result is the 1-rank run's as over NCCL
if command -v mpirun >/dev/null; then
    one=${CUDA_VISIBLE_DEVICES:-0}
    two_ranks "2 ranks sharing one GPU" "2 ranks sharing one GPU (MPI through host memory)" two-shared 1 \
        -x "CUDA_VISIBLE_DEVICES=${one%%,*}"
else
    echo "check-gpu: 2 ranks sharing one GPU: skipped: no mpirun"
fi
if "$T" train --backend cuda --precision amp --steps 30 --batch 16 --depth 18 --width 32 --size 32 --lr 0.02 > "$tmp/amp.out" 2>&1 &&
   awk '/^step/ { if (n == 0) first = $4; last = $4; n++; if ($4 != $4 + 0) bad = 1 } END { exit !(n == 30 && !bad && last < first) }' "$tmp/amp.out"; then
    echo "check-gpu: mixed precision training: ok (loss $(awk '/^step 1 /{print $4}' "$tmp/amp.out") -> $(awk '/^step 30 /{print $4}' "$tmp/amp.out"))"
else
    echo "check-gpu: mixed precision training: FAILED"; tail -5 "$tmp/amp.out" | sed 's/^/  /'; fail=1
fi
exit $fail

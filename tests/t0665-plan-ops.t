#!/bin/bash
# The plan backend (--backend plan): a training step's operations without
# their arithmetic, counted on this host as a GPU would be asked for them.
# amp keeps activations in half precision between the ops that take it: the
# casts of a step do not grow with the network (the input to half, the two
# heads' outputs to float32 and their gradients back: 5), while fp32 has
# none; the plan runs the same op graph as the CPU backend (the same
# convolutions); and a plan run reports no rates.
. "${srcdir:-.}/tests/lib.sh"
SSD="$top_builddir/benchd-ssd"
MRCNN="$top_builddir/benchd-maskrcnn"
[ -x "$SSD" ] || skip_all "benchd-ssd not built (needs MPI and the COCO data pipeline)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# ops KEY FILE: ops_per_step[KEY] of a --result file
ops() {
    python3 -c 'import json, sys; print(json.load(open(sys.argv[2]))["ops_per_step"][sys.argv[1]])' "$1" "$2"
}

# run NAME ARGS...: a synthetic throughput run into $tmp/NAME.{json,out}
run() {
    local name=$1; shift
    "$SSD" --synthetic --batch-size 2 --image-size 128 --width-mult 0.25 --benchmark-steps 2 --warmup-steps 1 \
        --seed 7 --result "$tmp/$name.json" "$@" > "$tmp/$name.out" 2>&1
}

for bb in resnet34 resnet18; do
    run "$bb-fp32" --backend plan --backbone $bb; rc1=$?
    run "$bb-amp" --backend plan --backbone $bb --precision amp; rc2=$?
    is "plan, $bb: fp32 and amp runs exit 0" "$rc1 $rc2" "0 0"
done
is "fp32: no casts" "$(ops casts "$tmp/resnet34-fp32.json") $(ops casts "$tmp/resnet18-fp32.json")" "0 0"
c34=$(ops casts "$tmp/resnet34-amp.json"); c18=$(ops casts "$tmp/resnet18-amp.json")
is "amp: the casts of a step do not depend on the depth" "$c34" "$c18"
is "amp: 5 casts a step (input, two outputs, two gradients)" "$c34" 5
v34=$(ops convolutions "$tmp/resnet34-amp.json"); v18=$(ops convolutions "$tmp/resnet18-amp.json")
is "amp and fp32 ask for the same convolutions" "$v34" "$(ops convolutions "$tmp/resnet34-fp32.json")"
check "a deeper backbone, more convolutions ($v34 > $v18 > 0)" test "$v34" -gt "$v18" -a "$v18" -gt 0
e32=$(ops elementwise "$tmp/resnet34-fp32.json"); e16=$(ops elementwise "$tmp/resnet34-amp.json")
check "amp adds only its casts and the input's relayout to the element launches ($e32 + $c34 + 1 >= $e16)" \
    test $((e32 + c34 + 1)) -ge "$e16"

# the same graph as the CPU backend (which computes): the same convolutions
run cpu --backend cpu --backbone resnet18 --threads 2; rc=$?
is "cpu run exits 0" "$rc" 0
is "the CPU backend runs the plan's convolutions" "$(ops convolutions "$tmp/cpu.json")" "$v18"
like "the CPU's throughput line reports ops" "$(cat "$tmp/cpu.out")" "# ops per step: [0-9]+ element launches"

# a plan run has no rates: no images/s anywhere, none in the result
out=$(cat "$tmp/resnet34-amp.out")
like "plan: ops per step on stdout" "$out" "# ops per step: $e16 element launches \\($c34 casts\\), $v34 convolutions"
like "plan: the host's seconds a step" "$out" "# plan backend: 2 steps after 1, [0-9.]+ s of host time a step"
unlike "plan: no rate printed" "$out" "images/s"
unlike "plan: no throughput value logged" "$out" '"key": "throughput", "value": [0-9]'
res=$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(r["device"], r["train_item"], r["completed"], r["host_s_per_step"] > 0)' "$tmp/resnet34-amp.json")
is "plan result: the device named, no rate, completed, host seconds" "$res" "plan (no arithmetic) None True True"

# usage
usage_prog=$SSD
usage_err "plan needs timed steps" "--backend plan counts the operations of timed steps: give --benchmark-steps N" \
    --synthetic --backend plan
usage_err "a backend that is not there" "--backend: expected cpu, cuda or plan, got 'tpu'" --synthetic --backend tpu
if [ -x "$MRCNN" ]; then
    usage_prog=$MRCNN
    usage_err "Mask R-CNN refuses the plan" "--backend plan: Mask R-CNN's detection steps" \
        --synthetic --backend plan --benchmark-steps 1
else
    skip "benchd-maskrcnn not built"
fi
done_testing

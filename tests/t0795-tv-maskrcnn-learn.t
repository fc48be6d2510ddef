#!/bin/bash
# torchvision's Mask R-CNN learning for real (a long test, about 7 minutes on
# 2 busy cores; `make check-learn`, not `make check`): benchd-tv-maskrcnn
# with the local system's maskrcnn settings (the small configuration, 2 ranks
# of 1 thread, global batch 4, at most 1,500 iterations) learns the generated
# 128-pixel shapes dataset to a bbox AP and a segm AP of at least 0.30 on its
# held-out split, through the real flow:
#
#   benchctl dataset synth --images 2000 --val-images 200 --size 128 \
#       --classes 3 --objects 3 --seed 1 -o DIR
#   benchctl submit --system local torchvision-maskrcnn --data DIR --wait
#   benchctl report last
#
# (workloads/torchvision-maskrcnn.json: the system's maskrcnn section, the
# rendezvous of torch.distributed); benchctl scores its log as ours.
# The report and the trial log are checked as t0770's (lib.sh's
# learn_checks: the compliance checker included).
# TV_MASKRCNN_LEARN_SYSTEM=4xlocal runs the same recipe (2 ranks of 2
# images: local's maskrcnn settings) on two nodes of the local Slurm
# cluster, one rank each, meeting through torch.distributed's rendezvous.
# Torch does its matrix products in OpenBLAS (bench/torch-env.sh fetches
# Debian's libopenblas0-pthread once into the build tree; TORCH_BLAS=system
# keeps the system's BLAS, 2 to 3 times slower).  TV_MASKRCNN_LEARN=0 skips
# the test.
. "${srcdir:-.}/tests/lib.sh"
[ "${TV_MASKRCNN_LEARN:-1}" = 0 ] && skip_all "TV_MASKRCNN_LEARN=0"
TV="$top_builddir/benchd-tv-maskrcnn"
[ -x "$TV" ] || skip_all "benchd-tv-maskrcnn not built"
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null ||
    skip_all "no torch or torchvision for /usr/bin/python3 (python3-torch, python3-torchvision)"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
venv_module pycocotools.cocoeval pycocotools || skip_all "$venv_why"
mlperf_venv || skip_all "$mlperf_why"  # benchd-tv-maskrcnn writes its lines with it
system=${TV_MASKRCNN_LEARN_SYSTEM:-local}
sites=("$top_builddir"/venv/lib/python3*/site-packages)
export BENCHD_PYTHONPATH=${sites[0]}
sets=()
if [ "$system" = local ]; then
    own_runs
else
    cluster_test 17257
    # local's recipe on two nodes: its maskrcnn settings, one rank a node,
    # the packages of the venv on every rank (the system's env: mpirun -x)
    mapfile -t sets < <("$BENCHCTL" show local --json | /usr/bin/python3 -c 'import json, sys
m = json.load(sys.stdin)["maskrcnn"]
for k in ("ims_per_batch", "test_ims_per_batch", "lr", "warmup_iters", "max_iter", "decay_steps",
          "eval_iters", "fpn_post_nms_top_n_train"):
    if k in m:
        print("--set"); print("maskrcnn.%s=%s" % (k, json.dumps(m[k])))')
    # (and local's batch norm, each rank's own: 4xlocal's is synchronised,
    # which benchd-tv-maskrcnn refuses)
    sets+=(--set nodes=2 --set ranks_per_node=1 --set maskrcnn.sync_bn=false
           --set "env.BENCHD_PYTHONPATH=$BENCHD_PYTHONPATH")
fi
build=$top_builddir
# shellcheck source=bench/torch-env.sh
. "$srcdir/bench/torch-env.sh"
torch_blas || echo "# the system's BLAS, then"
export OPENBLAS_NUM_THREADS=1

check "the shapes dataset" "$BENCHCTL" dataset synth --images 2000 --val-images 200 --size 128 --classes 3 \
      --objects 3 --seed 1 -o "$tmp/shapes-128"
max_iter=$("$BENCHCTL" show local --json | /usr/bin/python3 -c 'import json, sys
print(json.load(sys.stdin)["maskrcnn"]["max_iter"])')
start=$(date +%s)
out=$(timeout 3000 "$BENCHCTL" submit --system "$system" torchvision-maskrcnn --runs 1 --data "$tmp/shapes-128" \
      --logdir "$tmp/logs" "${sets[@]}" --wait 2>&1); rc=$?
echo "# submit --system $system torchvision-maskrcnn --wait took $(( $(date +%s) - start )) s"
is "submit --system $system torchvision-maskrcnn --wait exits 0" "$rc" 0
printf '%s\n' "$out" | tail -5 | sed 's/^/#   /'
logs=("$tmp"/logs/*_1.log)
log=${logs[0]}
like "the trial ran benchd-tv-maskrcnn" "$(cat "$log")" "^# benchd-tv-maskrcnn .*: 2 ranks x 2 images, .*resnet18 "
grep -E '^# benchd-tv|^step [0-9]+ \(epoch' "$log" | sed 's/^/#   /'
learn_checks "$log" "$max_iter"
done_testing

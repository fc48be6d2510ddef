#!/bin/bash
# Every system x workload renders a script that bash and shellcheck accept;
# -o writes it atomically and executable.
. "${srcdir:-.}/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
SHELLCHECK=${SHELLCHECK:-$(command -v shellcheck || true)}

for sys in DSS8440 C4140 2xC4140 4xC4140 p3dn 24xp3dn local 4xlocal 24xlocal 4xlocal-ch local-podman; do
    for w in ssd maskrcnn allreduce; do
        f="$tmp/$sys-$w.sh"
        check "$sys $w renders" "$BENCHCTL" render --system "$sys" "$w" --run-id test -o "$f"
        check "$sys $w: bash -n" bash -n "$f"
        if [ -n "$SHELLCHECK" ]; then
            check "$sys $w: shellcheck without warnings" "$SHELLCHECK" -S style "$f"
        fi
        is "$sys $w: exactly one RESULT line per trial" "$(grep -c 'echo "RESULT,' "$f")" 1
    done
done
[ -n "$SHELLCHECK" ] || echo "# shellcheck not found: lint checks skipped"

f="$tmp/4xC4140-ssd.sh"
is "-o writes an executable file" "$(stat -c %a "$f")" 755
like "slurm script: #SBATCH directives" "$(cat "$f")" "^#SBATCH --nodes=4$"
"$BENCHCTL" render --system 4xC4140 ssd --run-id test > "$tmp/stdout.sh"
check "stdout and -o render the same script" cmp "$f" "$tmp/stdout.sh"
out=$("$BENCHCTL" render --system 4xC4140 ssd --runs 3 --set ssd.batch_size=64 --set slurm.partition=gpu)
like "--runs sets the trial count" "$out" "^NTRIALS=3$"
like "--set reaches the trainer" "$out" "--batch-size 64"
like "--set reaches the #SBATCH lines" "$out" "^#SBATCH --partition=gpu$"
out=$("$BENCHCTL" render --system 4xC4140 ssd --set 'ssd.decay_epochs=[]' --set 'ssd.eval_epochs=[5,10]')
like "an empty list is an empty argument" "$out" "--decay-epochs '' "
like "a list is comma-separated" "$out" "--eval-epochs 5,10 "
# Mask R-CNN: the warmup rule of each system's source, the small configuration's keys
launch() {   # the rendered script with continuation lines joined
    "$BENCHCTL" render "$@" | sed -e ':a' -e '/\\$/N; s/\\\n *//; ta'
}
# DSS8440's image (containers/Dockerfile) must run the command a launch gives
# it: the long-lived container's 'sleep infinity', not an entrypoint's
# arguments (an ENTRYPOINT of benchctl made it 'benchctl sleep infinity')
out=$(launch --system DSS8440 ssd --run-id test)
like "DSS8440: one container kept alive by its command" "$out" "benchd/trainers:latest sleep infinity"
is "containers/Dockerfile: no entrypoint in front of that command" \
    "$(grep -c '^ENTRYPOINT' "$srcdir/containers/Dockerfile")" 0
out=$(launch --system DSS8440 maskrcnn --run-id test)
like "DSS8440 maskrcnn: the MLPerf absolute warmup" "$out" "--warmup-factor 0.0001 --warmup-iters 800 --warmup-method mlperf_linear "
like "  and both targets" "$out" "--target-map-bbox 0.377 --target-map-segm 0.339 "
like "4xC4140 maskrcnn inherits C4140's mlperf_linear" "$(launch --system 4xC4140 maskrcnn)" "--warmup-method mlperf_linear "
like "p3dn maskrcnn: GluonCV's multiplicative warmup" "$(launch --system p3dn maskrcnn)" \
    "--warmup-factor 0.03 --warmup-iters 1000 --warmup-method linear "
like "24xp3dn maskrcnn: linear too (the default)" "$(launch --system 24xp3dn maskrcnn)" "--warmup-method linear "
out=$(launch --system local maskrcnn)
like "local maskrcnn: the small configuration" "$out" \
    "--config small --backbone resnet18 --frozen-bn 0 --fpn-channels 64 --min-size 128 --max-size 128 "
like "  its schedule" "$out" "--ims-per-batch 4 .*--lr 0.02 --max-iter 1500 --warmup-factor 0.001 --warmup-iters 100 --warmup-method linear --decay-steps 1200 "
unlike "  evaluated at each epoch's end (no --eval-iters)" "$out" "--eval-iters"
like "evaluation iterations as a list" "$(launch --system local maskrcnn --set 'maskrcnn.eval_iters=[500,1000,1500]')" \
    "--eval-iters 500,1000,1500 "
like "  threads as SSD's" "$out" "--threads 1 --loader-workers 1 "
like "4xlocal maskrcnn: one image per rank" "$(launch --system 4xlocal maskrcnn)" "--ims-per-batch 16 "
# ranks in ch-run, each a user namespace of its own: no CMA single copy
# between them (large messages hung): on one node they join one container,
# across nodes the single copy is off, unless the system says otherwise
out=$(launch --system local --set container.runtime=charliecloud --set container.image=/x.sqfs allreduce)
like "charliecloud on one node: the ranks join one container" "$out" "^ *mpirun .* ch-run --join .*/x.sqfs -- "
unlike "  the single copy stays on" "$out" "single_copy"
unlike "  the image check runs outside an MPI launch: no --join" "$(grep -v '^ *mpirun' <<<"$out")" "ch-run --join"
out=$(launch --system 4xlocal-ch --set container.image=/x.sqfs allreduce)
like "charliecloud across nodes: no single copy" "$out" "^ *mpirun .*--mca btl_vader_single_copy_mechanism none .*ch-run "
unlike "  and no --join" "$out" "ch-run --join"
unlike "not without a container" "$(launch --system 4xlocal allreduce)" "single_copy"
out=$(launch --system 4xlocal-ch --set container.image=/x.sqfs --set mpirun.mca.btl_vader_single_copy_mechanism=xpmem allreduce)
like "  the system's own value wins" "$out" "--mca btl_vader_single_copy_mechanism xpmem "
unlike "  alone" "$out" "single_copy_mechanism none"
# GPUs in Charliecloud: the host's driver goes into the (directory) image on
# every node before the image check (ch-fromhost --nvidia), and stops the run
# when it cannot
out=$(launch --system 4xlocal-ch --set gpus_per_node=4 --set container.image=/x allreduce)
like "charliecloud with GPUs: ch-fromhost --nvidia on every node" "$out" 'out=\$\(ch-fromhost --nvidia "\$IMAGE" 2>&1\)'
like "  its failure names the node and stops the run" "$(sed -n '/^require_driver()/,/^fi/p' <<<"$out" | tr '\n' ' ')" \
     'srun .*driver_check.*if ! require_driver; then +echo "benchd: image check failed: no trial started" +exit 1'
is "  before the image check" "$(grep -n '^if ! require_driver\|^if ! require_image' <<<"$out" | cut -d: -f2 | tr '\n' ' ')" \
   "if ! require_driver; then if ! require_image; then "
unlike "  not without GPUs" "$(launch --system 4xlocal-ch --set container.image=/x allreduce)" "ch-fromhost"
out=$(launch --system local maskrcnn --set maskrcnn.mode=torchvision --set maskrcnn.anchor_size=16 \
      --set maskrcnn.rpn_pre_nms_top_n_train=300 --set maskrcnn.rpn_pre_nms_top_n_test=150 \
      --set maskrcnn.rpn_post_nms_top_n_test=100 --set maskrcnn.rpn_batch=128 --set maskrcnn.roi_batch=64 \
      --set maskrcnn.box_head_dim=256 --set maskrcnn.mask_convs=2 --set maskrcnn.mask_dim=64 \
      --set maskrcnn.detections=20 --set maskrcnn.freeze_at=0 --set maskrcnn.width_mult=0.5 \
      --set maskrcnn.checkpoint_interval=100 --set maskrcnn.frozen_bn=true)
for opt in "--mode torchvision" "--anchor-size 16" "--rpn-pre-nms-top-n-train 300" "--rpn-pre-nms-top-n-test 150" \
           "--rpn-post-nms-top-n-test 100" "--rpn-batch 128" "--roi-batch 64" "--box-head-dim 256" "--mask-convs 2" \
           "--mask-dim 64" "--detections 20" "--freeze-at 0" "--width-mult 0.5" "--checkpoint-interval 100" \
           "--frozen-bn 1"; do
    like "  --set maskrcnn key renders $opt" "$out" "$opt "
done
err=$("$BENCHCTL" render --system local maskrcnn --set maskrcnn.warmup_method=mlperf_linear 2>&1); rc=$?
is "mlperf_linear with warmup_iters x warmup_factor > lr: exit 3" "$rc" 3
like "  names the options" "$err" "'maskrcnn.warmup_iters' x 'maskrcnn.warmup_factor' \(0.1\) exceeds 'maskrcnn.lr' \(0.02\)"
is "  in one line" "$(printf '%s\n' "$err" | wc -l)" 1
err=$("$BENCHCTL" render --system local maskrcnn --set maskrcnn.warmup_method=cosine 2>&1); rc=$?
is "an unknown warmup_method: exit 3" "$rc" 3
like "  says which ones there are" "$err" "linear"
err=$("$BENCHCTL" render --system local maskrcnn --set 'maskrcnn.eval_iters=[2000]' 2>&1); rc=$?
is "eval_iters beyond max_iter: exit 3" "$rc" 3
like "  names both" "$err" "'maskrcnn.eval_iters': iteration 2000 is beyond 'maskrcnn.max_iter' \(1500\)"
err=$("$BENCHCTL" render --system local maskrcnn --set maskrcnn.backbone=resnet101 2>&1); rc=$?
is "an unknown backbone: exit 3" "$rc" 3
id1=$("$BENCHCTL" render --system local allreduce | sed -n "s/^RUN_ID='\(.*\)'$/\1/p")
like "a fresh run id by default" "$id1" "^[0-9]{8}-[0-9]{6}-[0-9a-f]{4}$"

# the environment reaches every rank: exported, and named with -x for mpirun
out=$("$BENCHCTL" render --system p3dn allreduce --set 'env.MY_VAR=a "quoted" $HOME value')
like "configured variable exported" "$out" '^export MY_VAR="a \\"quoted\\" \$\{HOME:-\} value"$'
like "configured variable passed to mpirun" "$out" "-x MY_VAR"
printf '%s\n' "$out" > "$tmp/env.sh"
check "quoted environment values still lint clean" bash -n "$tmp/env.sh"

# the local script really runs: a stand-in for the trainer records its arguments
# and environment, so the launch path itself is what is tested here
if command -v mpirun >/dev/null; then
    bin="$tmp/bin"; mkdir -p "$bin"
    cat > "$bin/benchd-allreduce" <<'SH'
#!/bin/bash
echo "rank ${OMPI_COMM_WORLD_RANK:-?} args $* env MY_VAR=${MY_VAR:-unset}"
SH
    chmod +x "$bin/benchd-allreduce"
    "$BENCHCTL" render --system local allreduce --runs 2 --run-id run1 \
        --set paths.logs="$tmp/logs" --set paths.bin="$bin" --set env.MY_VAR=hello -o "$tmp/local.sh"
    out=$(bash "$tmp/local.sh" 2>&1); rc=$?
    is "local allreduce script exits 0" "$rc" 0
    like "both trials reported" "$out" "trial 2/2 ended at [0-9]+ with exit status 0"
    check "trial 1 log" test -f "$tmp/logs/run1_1.log"
    check "trial 2 log" test -f "$tmp/logs/run1_2.log"
    log=$(cat "$tmp/logs/run1_1.log")
    is "2 ranks ran" "$(grep -c '^rank [01] args' <<<"$log")" 2
    like "the environment reached the ranks" "$log" "env MY_VAR=hello"
    is "one RESULT line in the trial log" "$(grep -Ec '^RESULT,ALLREDUCE,,[0-9]+,benchd,' <<<"$log")" 1
    like "timing markers" "$log" "^STARTING TIMING RUN AT .*"
    # a failing trial is counted and the script says so
    printf '#!/bin/sh\nexit 3\n' > "$bin/benchd-allreduce"
    out=$(bash "$tmp/local.sh" 2>&1); rc=$?
    is "failed trials make the script fail" "$rc" 1
    like "  and are reported" "$out" "0 of 2 trials succeeded"
else
    echo "# mpirun not found: local launch not exercised"
fi
done_testing

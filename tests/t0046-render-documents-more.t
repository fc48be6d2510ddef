#!/bin/bash
# More of the source documents' trainers, bundled as workload files, render
# as their documents run them: the trainer's command line flag by flag
# against the document's (or, where it gives none, against the facts of
# ../shared/reference/workloads.md, said so below), the shape of the launch,
# the image, the pre-flight check of another's program.
. "${srcdir:-.}/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export HOME=/home/bench

flags() { doc_flags "$@"; }
after() {   # PATTERN: the words after the first word matching it, in the rendered launch
    grep -oE "$1 .*" | head -1 | cut -d' ' -f2-
}
render() { "$BENCHCTL" render --run-id x "$@"; }

# ---- NGC Mask R-CNN (document 001: "NGC PyTorch Mask R-CNN 性能测试") ----
# Its environment: "Docker: nvcr.io/nvidia/pytorch:20.06-py3", "GPU：Tesla V100-SXM2-16GB * 8";
# its script follows NVIDIA's train_benchmark.sh ("我们参照NGC公开的train_benchmark.sh编写了测试脚本"),
# which it does not print; the table's cells are 1 and 8 GPUs, FP32 and AMP, BS=2 and 4, and
# "NGC提供的0.04应该是为8卡每卡BatchSize为4准备的" (NGC's 0.04 is for 8 GPUs x 4 images).
# The command line is therefore workloads.md §3's (scripts/train.sh):
#   python -m torch.distributed.launch --nproc_per_node=$GPU tools/train_net.py
#   --config-file configs/e2e_mask_rcnn_R_50_FPN_1x.yaml [--skip-test] KEY VALUE...
# with the 8-GPU AMP BS=4 cell's KEY VALUEs, train_benchmark.sh's 500 iterations, and
# --json-summary (the DLLogger file benchd reads; its default is dllogger.out).
ngc=(--config-file configs/e2e_mask_rcnn_R_50_FPN_1x.yaml --skip-test --json-summary RESULT
     SOLVER.BASE_LR 0.04 SOLVER.IMS_PER_BATCH 32 SOLVER.MAX_ITER 500 DTYPE float16 OUTPUT_DIR OUT)
for case in "DSS8440 8" "C4140 4"; do
    read -r sys gpus <<<"$case"
    script=$(render --system "$sys" ngc-maskrcnn); rc=$?
    is "ngc-maskrcnn on $sys renders" "$rc" 0
    launch=$(joined <<<"$script" | grep -E '^ +(docker|singularity) .*torch\.distributed\.launch')
    # shellcheck disable=SC2016 # the rendered text, not an expansion
    words=$(after 'train_net\.py' <<<"$launch" | sed -e 's#/workspace/object_detection/##' \
            -e 's#"/logs/${RUN_ID}_${trial}.json"#RESULT#' -e 's#/logs/ngc-maskrcnn#OUT#')
    # shellcheck disable=SC2086 # the words, split as the shell would run them
    is "  train_net.py's flags and overrides are the document's, one by one" "$(flags $words)" "$(flags "${ngc[@]}")"
    like "  one process on the node: python -m torch.distributed.launch, a rank per GPU" "$launch" \
         " python -m torch\.distributed\.launch --nproc_per_node=$gpus --nnodes=1 --node_rank=0 --master_addr=\"\\\$MASTER_ADDR\" --master_port=\"\\\$MASTER_PORT\" /workspace/object_detection/tools/train_net\.py "
    like "  in NGC's PyTorch 20.06 image, not the system's" "$script" \
         "^IMAGE='(docker://)?nvcr\.io/nvidia/pytorch:20\.06-py3'$"
    unlike "  no mpirun and no benchd-bind around the launcher" "$launch" "mpirun|benchd-bind"
    like "  python checked in the image before the first trial" "$script" \
         "benchd: program check failed on \\\$node: python in image \\\$IMAGE: "
    unlike "  no check of benchd's own version there" "$script" "image_info|--version"
    like "  a port of the trial's own" "$script" "MASTER_PORT=\\$\\(\\(20000 \\+ RANDOM % 40000\\)\\)"
done
like "DSS8440: in the container that docker run started" "$(render --system DSS8440 ngc-maskrcnn | joined)" \
     "docker run -d --rm --name \"\\\$CONTAINER\" .* nvcr\.io/nvidia/pytorch:20\.06-py3 sleep infinity"
out=$(render --system C4140 ngc-maskrcnn --set 'ngc-maskrcnn.steps=[30000, 40000]' --set ngc-maskrcnn.precision=float32 \
      --set ngc-maskrcnn.warmup_iters=800 | joined)
like "a list override is a tuple" "$out" " SOLVER\.STEPS '\(30000,40000\)' "
like "  float32 as DTYPE, the warmup as SOLVER.WARMUP_ITERS" "$out" " DTYPE float32 .* SOLVER\.WARMUP_ITERS 800"
like "  one item: a tuple still" "$(render --system C4140 ngc-maskrcnn --set 'ngc-maskrcnn.steps=[30000]' | joined)" \
     "SOLVER\.STEPS '\(30000,\)'"

# per-node across nodes: one launcher per node, its node rank read there
out=$(render --system 4xC4140 ngc-maskrcnn | joined)
like "4xC4140 (Slurm, mpirun): one process per node" "$out" \
     "mpirun -np \"\\\$SLURM_JOB_NUM_NODES\" --bind-to none --map-by ppr:1:node -x MASTER_ADDR -x MASTER_PORT singularity exec "
like "  its node rank is Open MPI's rank of that process, read on the node" "$out" \
     "bash -c 'exec python -m torch\.distributed\.launch --nproc_per_node=4 --nnodes=4 --node_rank=\"\\\$OMPI_COMM_WORLD_RANK\" --master_addr=\"\\\$MASTER_ADDR\" --master_port=\"\\\$MASTER_PORT\" \"\\\$@\"' benchd-node /workspace/object_detection/tools/train_net\.py "
like "  MASTER_ADDR: the job's first node" "$out" "MASTER_ADDR=\\$\\(scontrol show node \"\\$\\(scontrol show hostnames \"\\\$SLURM_JOB_NODELIST\" \\| head -n 1\\)\""
like "  the program checked on every node" "$out" "srun --nodes=\"\\\$SLURM_JOB_NUM_NODES\" .*bash -c \"\\$\\(declare -f program_check\\); program_check\""
out=$(render --system 24xp3dn ngc-maskrcnn --set ngc-maskrcnn.ims_per_batch=384 | joined)  # 2 a GPU: a multiple of the 192 ranks
like "24xp3dn (mpirun, a hostfile): one process per node of it" "$out" \
     "mpirun -np 24 --hostfile /home/bench/hosts_24 --bind-to none --map-by ppr:1:node "
like "  MASTER_ADDR: the hostfile's first host" "$out" "MASTER_ADDR=\\$\\(awk .* /home/bench/hosts_24\\)"
mkdir -p "$tmp/sys" "$tmp/wl"
printf '{ "extends": "4xC4140", "slurm": { "launch": "srun", "mpi": "pmix" } }\n' > "$tmp/sys/srun4.json"
printf '{ "extends": "ngc-maskrcnn", "title": "x", "launch": { "shape": "per-node", "launcher": "torchrun" } }\n' \
    > "$tmp/wl/trun.json"
out=$("$BENCHCTL" --systems-dir "$tmp/sys" --workloads-dir "$tmp/wl" render --system srun4 trun --run-id x | joined); rc=$?
is "torchrun under srun: renders" "$rc" 0
like "  srun, one task per node" "$out" \
     "srun --nodes=\"\\\$SLURM_JOB_NUM_NODES\" --ntasks=\"\\\$SLURM_JOB_NUM_NODES\" --ntasks-per-node=1 --cpu-bind=none --export=ALL --mpi=pmix singularity exec "
like "  torchrun in python's place, its node rank Slurm's, c10d at the first node" "$out" \
     "bash -c 'exec torchrun --nproc-per-node=4 --nnodes=4 --node-rank=\"\\\$SLURM_NODEID\" --rdzv-backend=c10d --rdzv-endpoint=\"\\\$MASTER_ADDR:\\\$MASTER_PORT\" \"\\\$@\"' benchd-node /workspace/object_detection/tools/train_net\.py "
like "  torchrun is what is checked" "$out" "sh -c 'command -v \"\\\$0\" .*' torchrun 2>&1"

# ---- NVIDIA's MXNet SSD as Dell EMC ran it (document 002: "mlperf-training SSD in mxnet") ----
#   docker build --pull -t mlperf-nvidia:image_classification .
#   CONT=mlperf-nvidia:image_classification DATADIR=<path/to/data/dir> LOGDIR=<path/to/output/dir>
#   PRETRAINED_DIR=<path/to/pretrained/dir> SYSTEM=DSS8440 ./run_with_docker.sh
#   DATADIR=... SYSTEM=C4140 sbatch -N 1 -n 4 run.slurm
# "Launch configuration and system-specific hyperparameters ... are in the config_?C4140.sh script":
# the document's scripts (its implementation directory) run, per rank (run_and_time.sh,
# run_and_time_multi.sh):
#   python ssd_main_async.py --log-interval=100 --coco-root=${DATASET_DIR} \
#     --pretrained-backbone=${PRETRAINED_DIR}/resnet34-333f7ec4.pickle --data-layout=NHWC \
#     --epochs "${NUMEPOCHS}" --async-val --dataset-size 117266 --eval-dataset-size 5000 ${EXTRA_PARAMS}
# with DATASET_DIR=/data/coco2017, PRETRAINED_DIR=/pretrained/mxnet, NUMEPOCHS 80 and
#   config_DSS8440.sh: EXTRA_PARAMS='--batch-size=128 --lr-warmup-epoch=5 --lr=5.84e-3 --weight-decay=1.6e-4'
#   config_C4140.sh:   EXTRA_PARAMS='--batch-size=128 --lr-warmup-epoch=5.25 --lr=2.92e-3 --weight-decay=1.6e-4'
#   config_4xC4140_01x08x56.sh: '--batch-size=56 --lr-warmup-epoch=5 --lr=3.2e-3 --weight-decay=1.3e-4 --dali-workers=3'
# (the document mounts DATADIR, holding coco2017/, at /data and PRETRAINED_DIR at /pretrained/mxnet;
# benchd mounts paths.data itself at /data and paths.pretrained at /pretrained: those two values differ)
ssd_fixed=(--log-interval=100 --coco-root=/data/coco2017 --pretrained-backbone=/pretrained/mxnet/resnet34-333f7ec4.pickle
           --data-layout=NHWC --epochs 80 --async-val --dataset-size 117266 --eval-dataset-size 5000)
# shellcheck disable=SC2034 # read through declare -n below
ssd_DSS8440=(--batch-size=128 --lr-warmup-epoch=5 --lr=5.84e-3 --weight-decay=1.6e-4)
# shellcheck disable=SC2034
ssd_C4140=(--batch-size=128 --lr-warmup-epoch=5.25 --lr=2.92e-3 --weight-decay=1.6e-4)
# shellcheck disable=SC2034
ssd_4xC4140=(--batch-size=56 --lr-warmup-epoch=5 --lr=3.2e-3 --weight-decay=1.3e-4 --dali-workers=3)
for case in "DSS8440 mlperf-nvidia:image_classification" "C4140 sandbox-mxnet-ngc20.06" \
            "4xC4140 sandbox-mxnet-ngc20.06"; do
    read -r sys image <<<"$case"
    script=$(render --system "$sys" mxnet-ssd); rc=$?
    is "mxnet-ssd on $sys renders" "$rc" 0
    launch=$(joined <<<"$script" | grep -E '^ +(docker exec|mpirun) .*ssd_main_async')
    words=$(after 'ssd_main_async\.py' <<<"$launch" | sed -e 's#--coco-root=/data #--coco-root=/data/coco2017 #' \
            -e 's#=/pretrained/#=/pretrained/mxnet/#')
    declare -n extra=ssd_$sys
    # shellcheck disable=SC2086 # the words, split as the shell would run them
    is "  ssd_main_async.py's flags are the document's scripts', one by one" "$(flags $words)" \
       "$(flags "${ssd_fixed[@]}" "${extra[@]}" | sed 's/^--lr 5.84e-3$/--lr 0.00584/; s/^--lr 2.92e-3$/--lr 0.00292/; s/^--lr 3.2e-3$/--lr 0.0032/; s/^--weight-decay 1.6e-4$/--weight-decay 0.00016/; s/^--weight-decay 1.3e-4$/--weight-decay 0.00013/')"
    like "  in the document's image" "$script" "^IMAGE='$image'$"
    like "  one rank per GPU by mpirun, python -u" "$launch" "mpirun -np [^ ]+ .* python -u /workspace/ssd/ssd_main_async\.py "
done
unlike "DSS8440: no benchd-bind in the document's image" "$(render --system DSS8440 mxnet-ssd | joined)" "benchd-bind"
like "C4140: benchd-bind on the host around singularity exec" "$(render --system C4140 mxnet-ssd | joined)" \
     "benchd-bind -r .* -- singularity exec "
like "the lr decay epochs, when set, as its nargs" \
     "$(render --system C4140 mxnet-ssd --set 'mxnet-ssd.lr_decay_epochs=[44, 55]' | joined)" " --lr-decay-epochs 44 55$"

# ---- GluonCV Faster R-CNN on p3dn with Horovod (document 003, the SageMaker notebook) ----
#   gpu_per_instance = 8 #How many gpus are on this instance
#   bs = 1
#   distributions = {'mpi': {'enabled': True, 'processes_per_host': gpu_per_instance, }}
#   hyperparameters = {
#       'epochs':14, 'batch-size':bs, 'horovod':'true','lr':.01,'amp':'true',
#       'val-interval':6,'num-workers':15}
#   Results: **Faster RCNN - with Horovod** ... 1 p3dn.24xlarge Approximately 5 hours 19 mins with mAP 37
# SageMaker passes the hyperparameters as --NAME VALUE; 'true' is the flag alone here.  The notebook
# trains on COCO 2017 but its hyperparameters do not say --dataset (train_faster_rcnn.py's default is
# voc, workloads.md §2): --dataset coco is benchd's.
frcnn=(--dataset coco --epochs 14 --batch-size 1 --horovod --lr 0.01 --amp --val-interval 6 --num-workers 15)
script=$(render --system p3dn gluoncv-fasterrcnn); rc=$?
is "gluoncv-fasterrcnn on p3dn renders" "$rc" 0
launch=$(joined <<<"$script" | grep -E '^ +mpirun .*train_faster_rcnn')
# shellcheck disable=SC2046 # the words, split as the shell would run them
is "  train_faster_rcnn.py's flags are the notebook's, one by one" \
   "$(flags $(after 'train_faster_rcnn\.py' <<<"$launch"))" "$(flags "${frcnn[@]}")"
like "  eight processes on the node, python -u on GluonCV's script" "$launch" \
     "mpirun -np 8 -H localhost:8 .* python -u /home/bench/gluoncv/scripts/detection/faster_rcnn/train_faster_rcnn\.py "
like "  python checked on the node (no image)" "$script" "benchd: program check failed on \\\$node: python: "

# ---- the mila-iqia training suite (document 004) ----
# Its systems are none of benchd's (an MI50, an RTX; no container: "-- NO DOCKER --"), each benchmark
# run "N_GPU times in parallel": rendered on p3dn (one node of eight GPUs, no container), one process
# per GPU.  The document gives no command line, only the arguments its convnet printed:
#   batch_size: 32  cuda: True  workers: 4  seed: 0  devices: 1  jr_id: 0  vcd: 0  cpu_cores: 0
#   data: /media/setepenre/UserData/tmp/fake/  arch: resnet18  lr: 0.1  opt_level: O0
#   repeat: 15  number: 1  report: None
# The flags are workloads.md §5's (perf/arguments.py; conv_simple.py: positional data directory, --arch,
# --lr), --report a file of the trial's (its report is REPORT_<JOB_ID>.json).
convnet=(DATA --batch-size 32 --cuda --workers 4 --seed 0 --arch resnet18 --lr 0.1 --opt-level O0
         --repeat 15 --number 1 --report REPORT)
launch=$(render --system p3dn mila-convnet | joined | grep -E '^ +mpirun .*conv_simple')
# shellcheck disable=SC2016 # the rendered text, not an expansion
words=$(after 'conv_simple\.py' <<<"$launch" | sed -e 's#/home/bench/data/ImageNet/train#DATA#' \
        -e 's#"$LOGDIR"/"$RUN_ID"_"$trial"#REPORT#')
# shellcheck disable=SC2086 # the words, split as the shell would run them
is "mila-convnet: its printed arguments as flags, one by one" "$(flags $words)" "$(flags "${convnet[@]}")"
like "  one process per GPU" "$launch" "mpirun -np 8 -H localhost:8 "
# ssd (train.py): --data, --threshold 0.212, --no-save (workloads.md §5), --report
mssd=(--data DATA --threshold 0.212 --no-save --report REPORT)
launch=$(render --system p3dn mila-ssd | joined | grep -E '^ +mpirun .*single_stage_detector')
# shellcheck disable=SC2016 # the rendered text, not an expansion
words=$(after 'pytorch/train\.py' <<<"$launch" | sed -e 's#/home/bench/data/coco#DATA#' \
        -e 's#"$LOGDIR"/"$RUN_ID"_"$trial"#REPORT#')
# shellcheck disable=SC2086 # the words, split as the shell would run them
is "mila-ssd: train.py's flags, one by one" "$(flags $words)" "$(flags "${mssd[@]}")"
out=$(render --system local-podman mila-ssd | joined)
like "  in a container, the report goes to /logs" "$out" "--report /logs/\"\\\$RUN_ID\"_\"\\\$trial\""
like "  the log directory mounted there" "$out" "-v [^ ]+/logs:/logs "
# the NGC table as a sweep: precision x images per GPU on one 8-GPU node, the
# learning rate linear in the global batch (NGC's 0.04 is for 8 GPUs x 4)
out=$("$BENCHCTL" sweep --system DSS8440 ngc-maskrcnn --set precision=float32,float16 --set batch_size=2,4 \
      --dry-run 2>&1); rc=$?
is "ngc-maskrcnn: the document's table as a sweep (dry run): exit 0" "$rc" 0
like "  the rule stated by its file" "$out" "learning rate: linear scaling .* at lr 0\.04"
like "  fp32, 2 images a GPU: global 16, lr halved" "$out" \
     "^cell 1: precision=float32 batch_size=2: .*ngc-maskrcnn\.ims_per_batch=16 --set ngc-maskrcnn\.lr=0\.02$"
like "  fp16, 4 a GPU: NGC's own 32 at 0.04" "$out" "^cell 4: precision=float16 batch_size=4: --set ngc-maskrcnn\.precision=float16 --set ngc-maskrcnn\.ims_per_batch=32$"
done_testing

#!/bin/bash
# The source documents' own trainers, bundled as workload files, render as
# their documents run them: the trainer's command line flag by flag, the
# launcher's settings, the environment every rank gets.
. "${srcdir:-.}/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export HOME=/home/bench

# flags WORDS...: doc_flags, train_mask_rcnn.py's --num-workers as its -j
flags() {
    local w words=()
    for w in "$@"; do
        [ "$w" = --num-workers ] && w=-j
        words+=("$w")
    done
    doc_flags "${words[@]}"
}
trainer_words() {   # the words after the script in the rendered launch
    grep -o 'train_mask_rcnn\.py .*' | head -1 | cut -d' ' -f2-
}

# ---- GluonCV Mask R-CNN on p3dn (document 000: "Benchmarking instruction to
# run Mask R-CNN", AWS p3dn.24xlarge, Horovod) ----
# Its one-node command:
#   mpirun --allow-run-as-root -np 8 -H localhost:8 -bind-to none -map-by slot -mca pml ob1 -mca btl ^openib
#   -mca btl_tcp_if_include ens5 -x NCCL_SOCKET_IFNAME=ens5 -x FI_PROVIDER="efa" -x FI_EFA_TX_MIN_CREDITS=64
#   ... --tag-output $HOME/ompi_bind_DGX1.sh python -u $HOME/gluoncv/scripts/instance/mask_rcnn/train_mask_rcnn.py
#   -j4 --horovod --amp --lr-decay-epoch 8,10 --epochs 12 --log-interval 100 --val-interval 12 --batch-size 16
#   --use-fpn --lr 0.02 --lr-warmup-factor 0.03 --lr-warmup 1000 --static-alloc --clip-gradient 1.5 --use-ext
doc1=(-j4 --horovod --amp --lr-decay-epoch 8,10 --epochs 12 --log-interval 100 --val-interval 12 --batch-size 16
      --use-fpn --lr 0.02 --lr-warmup-factor 0.03 --lr-warmup 1000 --static-alloc --clip-gradient 1.5 --use-ext)
# and its 24-node one (-np 192 --hostfile $HOME/hosts_24 ...):
#   --num-workers 8 --horovod --amp --lr-decay-epoch 10,14 --epochs 12 --log-interval 100 --val-interval 1
#   --batch-size 192 --use-fpn --lr 0.16 --lr-warmup-factor 0.001 --lr-warmup 1600 --static-alloc
#   --clip-gradient 1.5 --use-ext
doc24=(--num-workers 8 --horovod --amp --lr-decay-epoch 10,14 --epochs 12 --log-interval 100 --val-interval 1
       --batch-size 192 --use-fpn --lr 0.16 --lr-warmup-factor 0.001 --lr-warmup 1600 --static-alloc
       --clip-gradient 1.5 --use-ext)
# Its exports ("Export Flags"), on the root node and passed to every rank:
doc_env="HOROVOD_FUSION_THRESHOLD=134217728 HOROVOD_NUM_STREAMS=2 MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD=999
MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD=25 OMP_NUM_THREADS=2 NCCL_DEBUG=VERSION HOROVOD_CYCLE_TIME=0.1
HOROVOD_HIERARCHICAL_ALLREDUCE=0 HOROVOD_CACHE_CAPACITY=0 NCCL_MIN_NRINGS=1 NCCL_TREE_THRESHOLD=4294967296
NCCL_NSOCKS_PERTHREAD=8 NCCL_SOCKET_NTHREADS=2 NCCL_BUFFSIZE=16777216 HOROVOD_NUM_NCCL_STREAMS=2
NCCL_NET_GDR_READ=1 HOROVOD_TWO_STAGE_LOOP=1 HOROVOD_ALLREDUCE_MODE=1 HOROVOD_FIXED_PAYLOAD=161
HOROVOD_MPI_THREADS_DISABLE=1 MXNET_USE_FUSION=0"

for case in "p3dn doc1" "24xp3dn doc24"; do
    read -r sys doc <<<"$case"
    script=$("$BENCHCTL" render --system "$sys" gluoncv-maskrcnn --run-id x); rc=$?
    is "gluoncv-maskrcnn on $sys renders" "$rc" 0
    launch=$(joined <<<"$script" | grep -E '^ +mpirun ')
    declare -n want=$doc
    # shellcheck disable=SC2046 # the words, split as the shell would run them
    is "  the trainer's flags are the document's, flag by flag" "$(flags $(trainer_words <<<"$launch"))" \
       "$(flags "${want[@]}")"
    like "  python -u on the script in GluonCV's scripts directory" "$launch" \
         " python -u /home/bench/gluoncv/scripts/instance/mask_rcnn/train_mask_rcnn\.py "
    like "  mpirun: no binding of its own, by slot, ob1, no openib, TCP on ens5" "$launch" \
         "--bind-to none --map-by slot --mca pml ob1 --mca btl '\^openib' --mca btl_tcp_if_include ens5 "
    like "  its output tagged by rank" "$launch" " --tag-output "
    missing=
    for kv in $doc_env NCCL_SOCKET_IFNAME=ens5 FI_PROVIDER=efa FI_EFA_TX_MIN_CREDITS=64; do
        k=${kv%%=*} v=${kv#*=}
        grep -qE "^export $k=\"?$v\"?\$" <<<"$script" || missing="$missing $k"
        grep -q -- "-x $k " <<<"$launch" || missing="$missing -x$k"
    done
    is "  every variable of the document exported with its value, and passed to every rank" "$missing" ""
done
like "p3dn: 8 ranks on localhost" "$("$BENCHCTL" render --system p3dn gluoncv-maskrcnn | joined)" \
     "mpirun -np 8 -H localhost:8 "
like "24xp3dn: 192 ranks from the hostfile" "$("$BENCHCTL" render --system 24xp3dn gluoncv-maskrcnn | joined)" \
     "mpirun -np 192 --hostfile /home/bench/hosts_24 "
out=$("$BENCHCTL" render --system p3dn gluoncv-maskrcnn --set gluoncv-maskrcnn.amp=false \
      --set 'gluoncv-maskrcnn.extra_args=["--save-prefix", "/tmp/x"]' | joined)
unlike "a flag set false is left out" "$out" " --amp "
like "extra arguments at the end" "$out" "--use-ext --save-prefix /tmp/x$"
done_testing

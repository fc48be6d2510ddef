#!/bin/bash
# t0795 on the local Slurm cluster (make check-learn): torchvision's Mask
# R-CNN learns local's recipe (2 ranks of 2 images) on two nodes of 4xlocal,
# one rank each, meeting through torch.distributed's rendezvous:
#
#   benchctl submit --system 4xlocal torchvision-maskrcnn --set nodes=2 \
#       --set ranks_per_node=1 --set maskrcnn.ims_per_batch=4 ... --wait
export TV_MASKRCNN_LEARN_SYSTEM=4xlocal
# shellcheck source=tests/t0795-tv-maskrcnn-learn.t
. "${srcdir:-.}/tests/t0795-tv-maskrcnn-learn.t"

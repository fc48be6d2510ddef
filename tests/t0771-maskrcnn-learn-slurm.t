#!/bin/bash
# t0770 on the local Slurm cluster (make check-learn): benchd-maskrcnn learns
# the shapes dataset with 4xlocal's maskrcnn recipe, 16 ranks of one image
# on the four emulated nodes with synchronised batch norm (sync_bn: every
# trained batch norm layer normalises with the statistics of all 16 ranks'
# images), to bbox and segm AP >= 0.30 within its 150 iterations:
#
#   benchctl submit --system 4xlocal maskrcnn --data DIR --wait
#
# About 6 minutes on two cores (the submission, 16 ranks over TCP, two
# evaluations); the report and the trial log are checked as t0770's.
export MASKRCNN_LEARN_SYSTEM=4xlocal
# shellcheck source=tests/t0770-maskrcnn-learn.t
. "${srcdir:-.}/tests/t0770-maskrcnn-learn.t"

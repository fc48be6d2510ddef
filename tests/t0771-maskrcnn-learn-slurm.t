#!/bin/bash
# t0770 on the local Slurm cluster (make check-learn): benchd-maskrcnn learns
# the shapes dataset with 4xlocal's maskrcnn recipe, 16 ranks of one image
# on the four emulated nodes with synchronised batch norm (sync_bn: every
# trained batch norm layer normalises with the statistics of all 16 ranks'
# images), to bbox and segm AP >= 0.30 within its 150 iterations:
#
#   benchctl submit --system 4xlocal maskrcnn --data DIR --wait
#
# The report and the trial log are checked as t0770's.  Its time is the
# cores': 16 ranks over TCP trained it in about 4 minutes on two idle cores
# (10 images/s, mpirun alone); through Slurm on cores shared with builds and
# other tests (1.4 to 2.1 images/s) the test took 16 to 24 minutes.  The
# targets came at the first evaluation (iteration 123, 3 after the decay:
# bbox AP 0.32 to 0.50 in three runs); the last, at 150, gave 0.57 to 0.59
# with seeds 1, 2 and 3.
export MASKRCNN_LEARN_SYSTEM=4xlocal
# shellcheck source=tests/t0770-maskrcnn-learn.t
. "${srcdir:-.}/tests/t0770-maskrcnn-learn.t"

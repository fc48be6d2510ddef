/* dp.h: data-parallel training over MPI (CPU) or NCCL (CUDA).
 *
 * Every rank holds the whole model and trains on its share of the batch.
 * Rank 0's initial parameters are broadcast; after each backward the
 * gradients are summed over the ranks (the optimiser then scales by 1/ranks).
 *
 * The sum runs in buckets of about bucket_bytes, contiguous ranges of the
 * gradient buffer numbered from its end (the last layers finish their
 * backward first).  The model reports each parameter whose gradient is final
 * (model.h); a bucket whose parameters are all final starts its reduction
 * (MPI_Iallreduce on host memory, ncclAllReduce on a second CUDA stream) while
 * the backward goes on.  Buckets start strictly in their order so every rank
 * issues the same collectives in the same sequence, whatever order its
 * gradients became final in.  bd_dp_finish() waits for all of them.
 *
 * Buffers (batch-norm running statistics) come from each rank's own share
 * of the batch; bd_dp_finish() replaces them by their average over the ranks,
 * so every rank keeps the same model.
 *
 * Synchronised batch norm (bd_dp_sync_bn): trained batch norm layers sum
 * their per-channel statistics over the ranks in the forward, and the two
 * per-channel sums of their backward (layers.h, ops.h), with MPI_Allreduce
 * (CPU) or ncclAllReduce on the compute stream (CUDA), so that N ranks of B
 * images compute what one rank of N B images would.  They use a
 * communicator of their own: their collectives come in the same order on
 * every rank, but not always in the same order relative to the gradient
 * buckets' (a rank whose batch gave a head nothing to train reports that
 * head's gradients final at the start of its backward and may start a
 * bucket earlier than the others).
 *
 * CUDA ranks that share a GPU (more ranks on a node than GPUs) cannot use
 * NCCL, which refuses two ranks on one device: there the sums go through
 * MPI on pinned host copies (each bucket copied down when it is ready, the
 * sums copied back in bd_dp_finish; synchronised batch norm's sums and the
 * broadcast the same way), and shared_gpu says so.
 *
 * Ranks, sizes and the local rank (ranks sharing the node, which picks the
 * GPU) come from MPI.  Built without MPI, there is one rank and nothing to do.
 */
#ifndef BD_DP_H
#define BD_DP_H

#include <stddef.h>

#include "model.h"

struct bd_dp_bucket {
        size_t off, n;                  /* elements of the gradient buffer */
        int nparams, pending;
        int launched;
        double t_launch, t_done;        /* with timing: when its allreduce started and was seen done
                                         * (CLOCK_REALTIME seconds; NCCL's: when finish returned) */
};

struct bd_dp {
        int rank, size, local_rank, local_size;
        int own_mpi;                    /* MPI_Init was ours */
        int overlap;                    /* 0: one allreduce of everything in finish */
        int timing;                     /* record each bucket's t_launch and t_done (traces) */
        int sync_bn;                    /* batch norm statistics summed over the ranks */
        int shared_gpu;                 /* CUDA ranks sharing a GPU: MPI through host copies, not NCCL */
        struct bd_model *m;
        struct bd_dp_bucket *b;
        int nb;
        int *param_bucket;              /* per parameter id, -1 when not trained */
        int next;                       /* next bucket to start */
        void *impl;
};

/* Initialises MPI if nobody did (and finalises it in bd_dp_release). */
int bd_dp_init(struct bd_dp *dp, int *argc, char ***argv, struct bd_err *err);
/* Buckets over the model's gradients and the ready hook; on the CUDA backend
 * also the NCCL communicator (one GPU per local rank). */
int bd_dp_attach(struct bd_dp *dp, struct bd_model *m, size_t bucket_bytes, struct bd_err *err);
int bd_dp_broadcast_params(struct bd_dp *dp, struct bd_err *err);
/* After attach: synchronised batch norm (the model's sync_bn hook and its
 * communicator); nothing with one rank, whose statistics are the batch's. */
int bd_dp_sync_bn(struct bd_dp *dp, struct bd_err *err);
/* Before a backward (calls bd_model_begin_backward). */
int bd_dp_begin_backward(struct bd_dp *dp, struct bd_err *err);
/* After it: every gradient summed over the ranks, buffers averaged. */
int bd_dp_finish(struct bd_dp *dp, struct bd_err *err);
/* Sum of a few host values over the ranks (losses, counts). */
int bd_dp_sum(struct bd_dp *dp, double *v, int n, struct bd_err *err);
/* Whether every rank holds bit-identical parameters. */
int bd_dp_params_identical(struct bd_dp *dp, int *ret_same, struct bd_err *err);
void bd_dp_barrier(struct bd_dp *dp);
void bd_dp_release(struct bd_dp *dp);

#endif

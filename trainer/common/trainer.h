/* trainer.h: the main() of the trainer programs (benchd-ssd,
 * benchd-maskrcnn).  A trainer fills a table of what its workload does its
 * own way (struct trainer_ops), keeps a struct trainer in its state, and
 * calls trainer_main(), which runs what every trainer does alike, in order:
 *
 *   options   ops->parse, before MPI_Init: --help, --version and usage
 *             errors never start MPI (exit 0, or 2 with the message from
 *             rank 0 only)
 *   MPI       bd_dp_init (exit 1 when it fails); ops->setup, what the rank
 *             count decides (a usage error: exit 2, rank 0 prints); the
 *             MLPerf lines that open a run, the seed and threads
 *             (trun_start); throughput mode (tbench.h)
 *   init      each step agreed over the ranks (an error on one rank ends
 *             all of them with exit 1, each failing rank saying why):
 *             the backend; ops->open_data; the model (ops->build_model
 *             between bd_model_init and the parameters' initialisation,
 *             then --pretrained); bd_dp_attach, rank 0's parameters
 *             broadcast, ops->optimizer; the checkpoint in --checkpoint's
 *             directory loaded, then ops->resume
 *   config    ops->header on rank 0; the MLPerf configuration (seed,
 *             global_batch_size, train_samples, eval_samples, then
 *             ops->log_config); init_stop, a barrier, run_start
 *   loop      ops->train: the workload's schedule of epochs, steps,
 *             checkpoints and evaluations, built from the helpers below,
 *             which keep the shared bookkeeping
 *   end       the throughput result, run_stop ("success" when the target
 *             was reached, or in throughput mode every timed step ran),
 *             ops->report on rank 0; then the exit status (trainer/README.md,
 *             "Errors"): 0 whether or not the target was reached, 1 when
 *             the loss diverged (every rank knows it alike), MPI_Abort
 *             after an error on any rank (the others may be waiting in a
 *             collective); ops->release, then the skeleton's own state
 *
 * Callbacks return 0 or a negative errno with the failure in err (one
 * line), and print only what they document.
 */
#ifndef BD_TRAINER_H
#define BD_TRAINER_H

#include <stdbool.h>
#include <stdint.h>

#include "checkpoint.h"
#include "dp.h"
#include "model.h"
#include "optim.h"
#include "tbench.h"
#include "topts.h"
#include "trun.h"
#include "ttrace.h"

struct trainer;

/* What an evaluation found (ops->evaluate). */
struct trainer_eval {
        char accuracy[96];              /* the value of MLPerf's eval_accuracy (JSON) */
        char line[256];                 /* rank 0's line, which ", evaluation N s" ends */
        bool reached;                   /* the target(s) are met */
};

struct trainer_ops {
        const char *workload;           /* its workload (workloads/NAME.json): program and MLPerf names */
        const char *checkpoint;         /* the checkpoint's file name in --checkpoint DIR ("ssd.ckpt") */
        const char *pretrained_prefix;  /* where --pretrained's tensors go ("backbone.") */
        const char *const *pretrained_unused;   /* prefixes of its tensors the model has no use for, NULL-ended */

        /* The command line into the workload's options, whose common part
         * is t->opt: 0, 1 (--help, --version: printed to out unless NULL),
         * -EINVAL (a usage error). */
        int (*parse)(struct trainer *t, int argc, char **argv, FILE *out, struct bd_err *err);
        /* After MPI_Init (t->dp): t->global_batch and what else the options
         * and the ranks decide; -EINVAL: a usage error. */
        int (*setup)(struct trainer *t, struct bd_err *err);
        /* The loaders (t->be is there): t->train_size, t->eval_samples (0
         * without evaluation). */
        int (*open_data)(struct trainer *t, struct bd_err *err);
        /* The network's parameters into t->m, and t->model_name (what a
         * checkpoint must hold to be resumed). */
        int (*build_model)(struct trainer *t, struct bd_err *err);
        /* t->sgd (t->m is attached and rank 0's everywhere), and what the
         * steps need besides. */
        int (*optimizer)(struct trainer *t, struct bd_err *err);
        /* After a checkpoint (meta) was loaded into t->m and t->sgd: the
         * data where the run stood; prints "# resumed ..." on rank 0. */
        int (*resume)(struct trainer *t, const struct bd_ckpt_meta *meta, struct bd_err *err);
        /* Rank 0's lines about the run before it starts ("# benchd-ssd ..."). */
        void (*header)(struct trainer *t);
        /* The MLPerf configuration lines after the shared ones. */
        void (*log_config)(struct trainer *t);
        /* The loop between run_start and run_stop: how it ended (err says
         * why for RUN_DIVERGED and RUN_FAILED). */
        enum run_end (*train)(struct trainer *t, struct bd_err *err);
        /* For trainer_step: the next batch; its forward (step: 1-based
         * over the run; nan: --inject-nan's step, on rank 0) to the loss of
         * the global batch (the mean of the ranks') and the images of every
         * rank; the backward of a finite loss (the gradients go to the
         * ranks' allreduce as they are done). */
        int (*next)(struct trainer *t, struct bd_err *err);
        int (*forward)(struct trainer *t, int64_t step, bool nan, double *loss, long *images, struct bd_err *err);
        int (*backward)(struct trainer *t, struct bd_err *err);
        /* For trainer_evaluate, collective: the evaluation after step (of
         * epoch). */
        int (*evaluate)(struct trainer *t, int64_t step, long epoch, struct trainer_eval *ev, struct bd_err *err);
        /* Rank 0's last line when the run ended with or without its target
         * (not in throughput mode). */
        void (*report)(struct trainer *t, bool reached);
        /* What the workload holds (the skeleton's state is released after). */
        void (*release)(struct trainer *t);
};

struct trainer {
        const struct trainer_ops *ops;
        const char *prog;               /* "benchd-ssd": messages start with it */
        const char *benchmark;          /* "ssd": MLPerf's submission_benchmark */
        struct topt_common *opt;        /* the common options, in the workload's (set before trainer_main) */
        struct bd_dp dp;
        struct bd_backend *be;
        struct bd_model m;
        struct bd_sgd sgd;
        char model_name[64];
        char ckpt_path[4096];           /* --checkpoint DIR/ops->checkpoint; "" without */
        long global_batch;              /* images per step over all ranks */
        long train_size, eval_samples;
        struct tbench bench;            /* throughput mode */
        int argc;                       /* after MPI_Init: the throughput result's */
        char **argv;
        /* the loop's bookkeeping (the helpers') */
        struct bd_step_info info;       /* of the last step */
        double last_loss;               /* of the last step; NaN before the first */
        int fail_r;                     /* the errno of a failed step */
        double epoch_t0;                /* the epoch's start, evaluations left out */
        long epoch_images;              /* images of every rank in the epoch */
        double log_t0;                  /* the last progress line (or restart) */
        long log_images;                /* images since */
        int64_t eval_step;              /* the step of the last evaluation, -1: none yet */
        struct ttrace trace;            /* --trace */
        bool reached;                   /* an evaluation met the target (--schedule fixed goes on) */
};

/* The program: exit status as above. */
int trainer_main(struct trainer *t, const struct trainer_ops *ops, int argc, char **argv);

/* ---- the loop's helpers (ops->train) ---- */

/* The MLPerf epoch_start; the epoch's clock and images start at 0. */
void trainer_epoch_begin(struct trainer *t, long epoch);
/* The progress lines' rate counts from now. */
void trainer_progress_restart(struct trainer *t);
/* One step, timed in throughput mode: ops->next; ops->forward; when the
 * loss is finite, ops->backward, the allreduce finished and, unless the
 * gradients are not finite (in fp32; amp's loss scaling skips those
 * steps itself), SGD with the gradients averaged over the ranks; the images
 * counted.  true: the run goes on; false: it ends, *end RUN_FAILED (err:
 * this rank's error) or RUN_DIVERGED (a non-finite loss or gradients, the
 * same on every rank; err: where). */
bool trainer_step(struct trainer *t, int64_t step, long epoch, enum run_end *end, struct bd_err *err);
/* Whether --max-steps ends the run after step. */
bool trainer_max_steps(const struct trainer *t, int64_t step);
/* Whether rank 0 prints a progress line after step: at every
 * --log-interval'th step, and when last. */
bool trainer_progress_due(const struct trainer *t, int64_t step, bool last);
/* Rank 0's progress line: head (the epoch, step and losses), then the
 * learning rate and the images per second since the last one. */
void trainer_progress(struct trainer *t, const char *head);
/* The MLPerf epoch_stop and the epoch's throughput; block_stop with
 * block_meta when it is not NULL; rank 0's "epoch E: N s, R images/s". */
void trainer_epoch_end(struct trainer *t, long epoch, const char *block_meta);
/* Rank 0 saves the checkpoint after step (with --checkpoint); a failure
 * is a warning: the run goes on. */
void trainer_checkpoint(struct trainer *t, int64_t step, long epoch);
/* Collective: ops->evaluate between the MLPerf eval_start and eval_stop,
 * eval_accuracy, rank 0's line; the training rates leave its time out.
 * true: the run goes on; false: it ends, *end RUN_REACHED, RUN_FAILED
 * (err: this rank's error) or RUN_FAILED_ELSEWHERE.  With --schedule fixed
 * a met target does not end the run (t->reached says it was met). */
bool trainer_evaluate(struct trainer *t, int64_t step, long epoch, enum run_end *end, struct bd_err *err);
/* The end of the schedule at step (ops->train's after its loop): with
 * --schedule fixed, an evaluation there unless the last one was, and
 * RUN_REACHED when the target was met on the way; else RUN_NOT_REACHED. */
enum run_end trainer_schedule_end(struct trainer *t, int64_t step, long epoch, bool can_eval, struct bd_err *err);

/* The loaders' warnings (ctx: the struct trainer): on rank 0's stderr. */
void trainer_warn(void *ctx, const char *msg);

#endif

/* tbench.h: throughput mode, shared by the trainers (--benchmark-steps N
 * --warmup-steps W, topts.h).  The training loop runs W steps that are not
 * timed, then N steps each timed on its own between two synchronisations
 * of the device (an observation: the images of every rank over its
 * seconds), and stops; no evaluation.  The result:
 *
 *   - on stdout, "# throughput: ..." with count, mean, sd, min, max and the
 *     95% interval of the mean (Student's t) in images/s;
 *   - MLPerf lines: "throughput" (the mean, its statistics as metadata),
 *     and run_stop's status;
 *   - with --result FILE, a JSON object written atomically by rank 0, with
 *     the fields of the mila suite's reports: the arguments, version,
 *     unique_id (XXH3-128 of the arguments, hex), hostname, device,
 *     outcome, batch_loss, the per-observation seconds and items, train
 *     {avg, min, max, sd, count, unit "s"} and train_item {avg, min, max,
 *     sd, count, ci95_lo, ci95_hi, unit "images/s"}.
 *
 * Both also give the backend operations of a timed step (struct
 * bd_op_counts, the mean over the timed steps): "# ops per step: ..." and
 * "ops_per_step".  On the plan backend (no arithmetic) the seconds are the
 * host's alone: there are no rates, "host_s_per_step" instead.
 *
 * A run that ends otherwise records the outcome ("nan": the loss or the
 * gradients became non-finite, "oom": out of memory, "failed": any other
 * error) with no rates: a number is only ever written for a completed run.
 */
#ifndef BD_TBENCH_H
#define BD_TBENCH_H

#include <stdint.h>

#include "backend.h"
#include "topts.h"
#include "trun.h"

enum tbench_outcome { TBENCH_COMPLETED, TBENCH_NAN, TBENCH_OOM, TBENCH_FAILED };

struct tbench {
        int64_t warmup, steps;          /* 0 steps: off */
        double *secs;                   /* the observations */
        double *items;
        int64_t n;
        double t0;
        struct bd_op_counts c0, ops;    /* the backend's counts at a timed step's start; their sum over the steps */
};

/* From the options; off unless --benchmark-steps was given. */
void tbench_init(struct tbench *b, const struct topt_common *c);
static inline int tbench_on(const struct tbench *b)
{
        return b->steps > 0;
}
/* The steps the run makes in all (W + N); 0 when off. */
int64_t tbench_total(const struct tbench *b);
/* Around step (1-based) of the loop: the timed ones synchronise the device
 * at both ends.  items: the images of every rank in the step. */
int tbench_begin(struct tbench *b, struct bd_backend *be, int64_t step);
int tbench_end(struct tbench *b, struct bd_backend *be, int64_t step, double items);

/* What the run was (for the JSON result). */
struct tbench_run {
        const char *prog;               /* "benchd-ssd" */
        const char *benchmark;          /* "ssd" */
        int argc;
        char **argv;
        const char *device;             /* "cpu backend (2 threads)", "NVIDIA H200" */
        int ranks;
        int batch;                      /* images per step over all ranks */
        const char *precision;
        const char *result;             /* --result, or NULL */
        int plan;                       /* the plan backend: no rates */
};
/* On rank 0 (rank: the caller's): prints, logs and writes the result of
 * a run that ended with outcome, its last loss loss.  Returns 0, or -errno
 * when the result file cannot be written (err). */
int tbench_finish(struct tbench *b, const struct tbench_run *run, int rank, enum tbench_outcome outcome,
                  double loss, struct bd_err *err);
/* The outcome of a training loop's error (ENOMEM: oom). */
enum tbench_outcome tbench_outcome_of(int r);
/* The outcome of a training loop that ended so (fail_r: the errno of a
 * failure on this rank). */
enum tbench_outcome tbench_outcome_end(enum run_end end, int fail_r);
/* run_stop's status: in throughput mode, whether every timed step ran;
 * otherwise whether the target was reached. */
int tbench_success(const struct tbench *b, enum tbench_outcome outcome, enum run_end end);
void tbench_release(struct tbench *b);

#endif

/* trun.h: what the trainer programs (benchd-ssd, benchd-maskrcnn) share
 * around their training loops: clocks and rates, decisions every rank
 * agrees on, the seed and thread defaults, and the MLPerf lines that open a
 * run.  Needs MPI (the trainers are MPI programs).
 */
#ifndef BD_TRUN_H
#define BD_TRUN_H

#include <stdint.h>

#include "checkpoint.h"
#include "dp.h"
#include "topts.h"

/* How a training loop ended. */
enum run_end {
        RUN_REACHED,            /* the target(s) */
        RUN_NOT_REACHED,        /* the epochs or iterations (or --max-steps) ran out first */
        RUN_DIVERGED,           /* a non-finite loss, on every rank alike: err says where */
        RUN_FAILED,             /* an error on this rank, in err: the others may be waiting in a collective */
        RUN_FAILED_ELSEWHERE,   /* an evaluation failed on another rank (reported there) */
};

/* Seconds on the monotonic clock. */
double trun_now(void);
/* Decimals that print a rate (images/s) with three significant digits from 1 up. */
int trun_rate_decimals(double v);
/* Collective: the lowest r of all ranks (an error anywhere fails everyone). */
int trun_agree(int r);
/* "\"epoch_num\": E" in a small rotating set of static buffers (4). */
const char *trun_epoch_meta(long epoch);
/* An error of this rank on stderr: "PROG: msg", rank-prefixed with several ranks. */
void trun_print_err(const char *prog, const struct bd_dp *dp, const struct bd_err *err);
/* Collective, after the options are parsed: without --seed, a seed from the
 * clock (rank 0's for everyone); the MLPerf lines every run starts with
 * (cache_clear from BENCHD_CACHE_CLEARED, init_start, submission_benchmark,
 * org, division, status and platform, the host name when none); without
 * --threads, the CPUs divided by the ranks on the node; in throughput mode
 * (--benchmark-steps, tbench.h) --max-steps becomes the warmup and timed
 * steps together. */
void trun_start(struct topt_common *c, const char *benchmark, const struct bd_dp *dp);
/* The checkpoint DIR/FILE (path: its name, pathlen bytes) of a model
 * named model: 0 when dir is NULL or no checkpoint is there yet (DIR is
 * made), 1 when one was loaded into m and sgd (meta filled), or a negative
 * errno (err: a directory that cannot be made, a damaged file, another
 * model's checkpoint). */
int trun_resume(const char *dir, const char *file, const char *model, struct bd_model *m, struct bd_sgd *sgd,
                char *path, size_t pathlen, struct bd_ckpt_meta *meta, struct bd_err *err);

#endif

/* trace.h: a trial's step traces (benchd-ssd/benchd-maskrcnn --trace, the
 * Chrome trace files LOGDIR/RUN_TRIAL.trace.rankR.json), merged into one
 * file with a process per rank, and where a step's time goes.
 *
 * Per rank, over the steps it kept (those with a "step" event): the mean
 * step, and of it the data wait, the forward, the backward, the wait for the
 * gradient allreduce after the backward, the optimizer and the rest; the
 * buckets' allreduce time and how much of it the backward hid (each bucket's
 * span within its step's backward).  The shares of the run are the ranks'
 * means; the slowest rank is the one of the longest mean step.  Nothing here
 * prints. */
#ifndef BD_TRACE_H
#define BD_TRACE_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"

enum trace_phase { TP_DATA, TP_FORWARD, TP_BACKWARD, TP_WAIT, TP_OPTIMIZER, _TP_MAX };

/* "data", "forward", "backward", "allreduce wait", "optimizer" */
extern const char *const trace_phase_names[_TP_MAX];

struct trace_rank {
        int rank;
        int steps;                      /* complete steps read */
        int buckets;                    /* bucket events of those steps */
        double step_ms;                 /* the mean step */
        double phase_ms[_TP_MAX];       /* the mean of each phase */
        double bucket_ms, hidden_ms;    /* per step: the buckets' allreduce, and what the backward hid of it */
};

struct trace_summary {
        int ranks;
        int steps;                      /* complete steps, the fewest of a rank */
        double step_ms;                 /* the mean over the ranks */
        double phase_ms[_TP_MAX], other_ms;
        double bucket_ms, hidden_ms;
        int slowest;                    /* the rank of the longest mean step */
        double slowest_ms;
};

/* One rank's file (its text, len bytes): -EINVAL with err naming what is
 * wrong (not JSON, no traceEvents array, an event without a number ts/dur). */
int trace_read_rank(const char *text, size_t len, struct trace_rank *ret, struct bd_err *err);
/* The files base.rank0.json, base.rank1.json, ... of a trial (until the first
 * missing rank): merged into base.json (atomically; a process per rank, named)
 * and summarised.  0 when there are none (*ret zeroed), 1 when merged, or
 * -errno with err naming the file. */
int trace_merge(const char *base, struct trace_summary *ret, struct bd_err *err);
/* "step 12.3 ms: data 1.0%, forward 30.1%, ... ; allreduce 4.0 ms a step,
 * 80% hidden by the backward; slowest rank 1 (13.0 ms)" */
void trace_summary_text(const struct trace_summary *s, struct bd_buf *out);

#endif

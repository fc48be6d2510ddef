/* mlperf.h: reading MLPerf log lines back, and MLPerf's scoring of a run.
 *
 * A trial log mixes ordinary output with lines ":::MLLOG {json}" (possibly
 * behind an mpirun --tag-output prefix such as "[1,0]<stdout>:").  Only rank
 * 0's lines matter; every MLLOG line that is not valid is counted, never
 * silently dropped.  A log with run_start but no run_stop is incomplete,
 * never a success.
 */
#ifndef BD_MLPERF_H
#define BD_MLPERF_H

#include <stdbool.h>

#include "err.h"

enum trial_outcome {
        OUT_SUCCESS,    /* run_stop with status success */
        OUT_ABORTED,    /* run_stop with status aborted (or any other status) */
        OUT_INCOMPLETE, /* run_start without run_stop: killed or truncated */
        OUT_NO_RUN,     /* no run_start at all */
        OUT_MISSING,    /* the log file cannot be read */
};

struct mlperf_trial {
        enum trial_outcome outcome;
        char reason[160];
        char benchmark[64];             /* submission_benchmark */
        double run_start_ms, run_stop_ms;
        double time_to_train;           /* seconds, run_stop - run_start; 0 if unknown */
        int epochs;                     /* highest epoch number seen */
        bool has_accuracy;
        double accuracy;                /* last eval_accuracy */
        bool has_target;
        double target;                  /* from the log (eval_target/target_accuracy) or the caller */
        bool converged;                 /* success and target reached (allreduce: no wrong element) */
        double throughput;              /* samples/s: mean of logged 'throughput', else train_samples x epochs / time */
        long train_samples, global_batch_size;
        /* allreduce */
        int ar_sizes;
        double ar_bytes, ar_busbw, ar_algbw;    /* at the largest size */
        long long ar_wrong;
        /* what was read */
        long lines, mllog_lines, bad_lines, first_bad_line;
        int duplicate_keys;             /* run_start or run_stop seen twice */
};

/* Parses a trial log.  target < 0: none known besides what the log says.
 * An unreadable file is not an error: outcome OUT_MISSING with the reason. */
void mlperf_parse_file(const char *path, double target, struct mlperf_trial *t);
void mlperf_parse_text(const char *text, double target, struct mlperf_trial *t);
const char *trial_outcome_name(enum trial_outcome o);

struct mlperf_score {
        int trials, converged;
        bool scored;            /* an official score exists */
        bool valid;             /* false: the rules make the result invalid */
        double score;           /* minutes (ssd, maskrcnn) or GB/s (allreduce) */
        double mean, sd, sd_pct;        /* over converged trials, same unit */
        bool higher_is_better;
        char unit[16];
        char method[96];
        char reason[160];       /* why there is no score, when there is none */
};

/* MLPerf scoring: 5 trials, drop the fastest and the slowest, mean of the
 * rest; one non-converged trial counts as the slowest, more make the result
 * invalid.  allreduce: mean bus bandwidth at the largest size. */
void mlperf_score(const struct mlperf_trial *t, int n, const char *workload, struct mlperf_score *s);

#endif

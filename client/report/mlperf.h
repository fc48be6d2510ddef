/* mlperf.h: reading MLPerf trial logs back, and MLPerf's scoring of a run.
 *
 * A trial log mixes ordinary output with lines
 *
 *     :::MLLOG {"namespace": "", "time_ms": 1600000000000, "event_type": "INTERVAL_START",
 *               "key": "run_start", "value": null, "metadata": {"file": "x.c", "lineno": 42}}
 *
 * possibly behind a prefix (mpirun --tag-output: "[1,0]<stdout>::::MLLOG {...}").
 * Only the JSON after ":::MLLOG" matters; it must be one JSON object with a
 * string "key" and a number "time_ms", followed by nothing but blanks, and
 * the keys this parser uses must have a value of the right type (a number for
 * eval_accuracy, throughput, eval_target; the members of allreduce_result).
 * Any other MLLOG line is unparseable.
 *
 * Invariants of a parsed trial:
 *   - every line holding ":::MLLOG" is counted in mllog_lines, and is either
 *     used, ignored as another rank's (other_rank_lines) or counted as
 *     unparseable (bad_lines, with the first MLPERF_BAD_KEPT line numbers):
 *     nothing is dropped silently;
 *   - OUT_SUCCESS needs both run_start and run_stop with status "success"; a
 *     log that stops after run_start is OUT_INCOMPLETE, never a success;
 *   - converged implies OUT_SUCCESS, a time_to_train (run_stop not before
 *     run_start; the same millisecond counts) and, when a target is known,
 *     accuracy >= target (allreduce: no wrong element).
 *
 * Keys read: submission_benchmark, seed, global_batch_size, train_samples,
 * run_start, run_stop (metadata "status"), epoch_start/epoch_stop and
 * eval_start/eval_stop/eval_accuracy (metadata "epoch_num"),
 * block_start/block_stop (metadata "first_epoch_num", "epoch_count"),
 * throughput (a number, samples/s; also tracked_stats {"throughput": x}),
 * the quality target "eval_target" or "target_accuracy" (a number), and
 * allreduce_result (value {"bytes", "time_us", "algbw_gbps", "busbw_gbps",
 * "wrong"}).  eval_accuracy may be a number or, as Mask R-CNN logs it, an
 * object {"BBOX": x, "SEGM": y}: BBOX is the accuracy, SEGM is kept aside.
 * The run script's own lines "RESULT,<BENCHMARK>,,<seconds>,<org>,<date>" and
 * "ENDING TIMING RUN AT ..." are recognised too.
 *
 * Epoch numbers are taken as 1-based (epoch_num 1 is the first epoch) unless
 * the log shows an epoch_num or first_epoch_num of 0, in which case they are
 * 0-based and counts are number + 1.
 */
#ifndef BD_MLPERF_H
#define BD_MLPERF_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

enum trial_outcome {
        OUT_SUCCESS,    /* run_stop with status "success" */
        OUT_ABORTED,    /* run_stop with status "aborted" (or any status but "success") */
        OUT_INCOMPLETE, /* run_start without run_stop: killed or truncated */
        OUT_NO_RUN,     /* no run_start at all (an empty log too) */
        OUT_MISSING,    /* the log file cannot be read */
        /* set by callers that know the trial has not ended (never by the parser) */
        OUT_RUNNING,    /* still running: no run_stop yet */
        OUT_PENDING,    /* not started yet */
        _OUT_MAX,
};

/* "success", "aborted", "incomplete", "no run", "missing" */
const char *mlperf_outcome_name(enum trial_outcome o);

#define MLPERF_BAD_KEPT 5

/* What one trial log says.  Unknown numbers are 0 unless a has_* flag says
 * otherwise. */
struct mlperf_trial {
        enum trial_outcome outcome;
        char reason[160];               /* why it is not a plain converged success; "" when it is */
        char benchmark[64];             /* submission_benchmark, "" when not logged */

        /* timing: time_ms of the first run_start and run_stop */
        double run_start_ms, run_stop_ms;
        bool timed;                     /* run_start and run_stop, in that order (the same millisecond too) */
        double time_to_train;           /* seconds, (run_stop - run_start) / 1000; 0 when unknown (!timed) */

        /* progress (see the epoch numbering above) */
        int epochs;                     /* epochs reached: highest epoch in epoch_start/stop, eval_*, block_* */
        int epochs_completed;           /* epochs finished: epoch_stop, eval_*, block_stop only */

        /* quality */
        bool has_accuracy;
        double accuracy;                /* last eval_accuracy (Mask R-CNN: its BBOX) */
        int accuracy_epoch;             /* its epoch_num, 0 when not given */
        bool has_accuracy_segm;
        double accuracy_segm;           /* Mask R-CNN: SEGM of the last eval_accuracy */
        bool has_target_segm;
        double target_segm;             /* Mask R-CNN: the caller's segm target */
        bool has_target;
        double target;                  /* eval_target/target_accuracy from the log, else the caller's */
        bool target_from_log;
        bool reached;                   /* accuracy >= target (and accuracy_segm >= target_segm when there
                                         * is one); allreduce: results and none wrong */
        /* every evaluation, for a fixed schedule (which trains on past its target) */
        int evals;                      /* eval_accuracy events */
        double best_accuracy, best_accuracy_segm;       /* the highest accuracy (and its SEGM) */
        int best_epoch;
        bool met;                       /* an evaluation met the target(s) (the caller's or one logged before) */
        double met_s;                   /* seconds from run_start to the first one that did */
        int met_epoch;
        bool converged;                 /* counts for the score: success, timed, reached (or no target) */

        /* throughput, samples/s: the mean of the logged 'throughput' values when
         * there are any (throughput_logged of them), else train_samples x
         * epochs_completed / time_to_train, else 0 */
        double throughput;
        int throughput_logged;
        long train_samples;             /* samples per epoch */
        long global_batch_size;
        bool has_seed;
        long long seed;

        /* the run script's lines */
        int result_lines;               /* "RESULT,..." lines (more than one is an anomaly) */
        double result_seconds;          /* the seconds of the first one, 0 when none */
        bool ending_seen;               /* "ENDING TIMING RUN AT" */

        /* allreduce: allreduce_result lines */
        int ar_sizes;                   /* how many results (one per message size) */
        double ar_bytes, ar_busbw, ar_algbw;    /* at the largest size; GB/s; ar_busbw NaN: one rank, which has
                                                 * no bus bandwidth ("busbw_gbps": null) */
        long long ar_wrong;             /* wrong elements over all sizes */

        /* what was read */
        long lines, mllog_lines;
        long bad_lines;                 /* unparseable MLLOG lines */
        long first_bad_line;            /* 1-based line number, 0 when none (== bad_at[0]) */
        long bad_at[MLPERF_BAD_KEPT];   /* the first unparseable line numbers */
        long other_rank_lines;          /* MLLOG lines tagged with a rank other than 0, ignored */
        int duplicate_keys;             /* run_start or run_stop seen again (the first one counts) */
};

/* Parses the text of a trial log (len bytes; NUL bytes inside are treated as
 * ordinary characters).  target: the quality target when the log gives none,
 * < 0 when unknown.  Never fails. */
void mlperf_parse_text(const char *text, size_t len, double target, struct mlperf_trial *t);

/* The same with a second target, the segm accuracy's (Mask R-CNN: both
 * must be met by the same evaluation, the last one), < 0 when none. */
void mlperf_parse_text_segm(const char *text, size_t len, double target, double target_segm, struct mlperf_trial *t);

/* Reads and parses a trial log.  When the file cannot be read, *t has outcome
 * OUT_MISSING with the error as reason, err is filled in and the negative
 * errno is returned; *t is valid either way. */
int mlperf_read_trial(const char *path, double target, struct mlperf_trial *t, struct bd_err *err);

/* With a segm target too (mlperf_parse_text_segm). */
int mlperf_read_trial_segm(const char *path, double target, double target_segm, struct mlperf_trial *t,
                           struct bd_err *err);

/* The same for callers that need only *t (t->reason holds the error). */
static inline int mlperf_parse_file(const char *path, double target, struct mlperf_trial *t)
{
        return mlperf_read_trial(path, target, t, NULL);
}

/* Where a log line's own text starts, after mpirun's --tag-output prefix
 * ("[1,0]<stdout>:"); *rank: the tag's rank, -1 when there is none. */
const char *mlperf_line_body(const char *p, const char *end, long *rank);

/* True when the workload's score is a bandwidth (higher is better): its
 * row's result (workload.h), found by its name or its MLPerf name. */
bool mlperf_is_bandwidth(const char *workload);

/* The score of a run (all numbers in `unit`). */
struct mlperf_score {
        int trials, converged;          /* trials given; those that converged */
        int required;                   /* trials the rules score: 5 (time to train), 1 (bandwidth) */
        bool scored;                    /* an official score exists */
        bool valid;                     /* false: the rules make the result invalid */
        double score;                   /* olympic mean in minutes, or mean bus bandwidth in GB/s */
        double mean, sd, sd_pct;        /* over converged trials; sd is the sample sd (n - 1), 0 for one */
        int fastest, slowest;           /* indices of the trials the olympic mean dropped, -1 if none */
        bool higher_is_better;
        char unit[32];                  /* "min", "GB/s", or the workload's unit ("images/s") */
        char method[128];               /* how the score was made, when scored */
        char reason[160];               /* why there is no score, when there is none */
};

/* MLPerf scoring of n trials of a workload.  Time to train (ssd, maskrcnn,
 * and any workload without a row): exactly 5 trials; drop the fastest and the slowest
 * time to train and take the mean of the other three; one trial that did not
 * converge counts as the slowest, two or more make the result invalid; with
 * another number of trials there is no score, only mean and sd.  Bandwidth
 * (allreduce): the mean bus bandwidth at the largest size over the converged trials, all of
 * which must end at the same size.  While any trial is OUT_RUNNING or
 * OUT_PENDING there is no score yet (valid, with the reason), unless two
 * trials that ended did not converge: invalid already (not for bandwidth). */
void mlperf_score(const struct mlperf_trial *t, int n, const char *workload, struct mlperf_score *s);
/* The same for a workload in hand (a run's recorded one); NULL: time to train. */
struct workload;
void mlperf_score_of(const struct mlperf_trial *t, int n, const struct workload *w, struct mlperf_score *s);

#endif

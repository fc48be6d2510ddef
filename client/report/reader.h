/* reader.h: a trial's result read as its workload file says ("result" of
 * workloads/README.md).
 *
 * benchd's own trainers and the MLPerf containers write :::MLLOG lines
 * (mlperf.h).  Other trainers say what they did in their own words, and a
 * workload file names how to read them:
 *
 *   regex     extended regular expressions over the log's lines, the number
 *             in each one's first group (GluonCV's "Speed: 85.1 samples/sec",
 *             maskrcnn-benchmark's "iter: 20  loss: 1.5 ...");
 *   json      a JSON file the program writes and a path in it (the mila
 *             suite's "train_item.avg"); a top-level array left unclosed, as
 *             the mila report is ("[{...},{...},"), is read as far as it goes;
 *             a path's first name on an array is looked up in its last item
 *             that has it;
 *   dllogger  NVIDIA DLLogger's records ("DLLL {...}" lines, in the log or in
 *             the result file), by the names of their data ("train_perf_fps",
 *             "BBOX_mAP").
 *
 * Whatever the reader, the result is a struct mlperf_trial, so scores,
 * reports, sweeps and suites treat every workload alike.  For the readers
 * other than mllog:
 *   - the trial ended when the launch script's RESULT line (or its "ENDING
 *     TIMING RUN") is in the log; its time is the RESULT line's seconds;
 *   - a trial that ended but gave no value of its kind (no throughput line
 *     matched; no accuracy for a target) has no result, never a number;
 *   - throughput is the mean of the values read after the first `skip`;
 *     accuracy the last one read; each multiplied by its scale.
 * The parsers take any bytes (fuzzed: tests/fuzz/fuzz-reader-*.c); nothing
 * here prints.
 */
#ifndef BD_READER_H
#define BD_READER_H

#include <stddef.h>

#include "err.h"
#include "mlperf.h"
#include "workload.h"

/* A point of a series read (the loss at a step). */
struct reader_point {
        double x, y;
};

/* What the values read from a log and a result file were. */
struct reader_values {
        double tp_sum;                  /* throughputs after the skipped ones, scaled */
        int tp_count;
        int tp_seen;                    /* all throughputs read, skipped ones too */
        bool has_accuracy, has_accuracy_segm;
        double accuracy, accuracy_segm; /* the last ones read, scaled */
        double step;                    /* the last step read; -1 when none */
        struct reader_point *loss;      /* the loss at each step it was read */
        size_t nloss;
        long matched;                   /* lines or records that gave a value */
        long records;                   /* dllogger: records read; json: items */
        long bad_records;               /* dllogger: "DLLL" lines that are not a JSON object */
};

/* A workload's reader, compiled (its regular expressions). */
struct reader;

/* Compiles rd (from a workload file that loaded, so its expressions compile);
 * NULL with err set when one does not. */
struct reader *reader_new(const struct workload_reader *rd, struct bd_err *err);
void reader_free(struct reader *r);

/* Reads the values of a log's text (regex, dllogger) into v (zeroed first by
 * reader_values_init). */
void reader_values_init(struct reader_values *v);
void reader_values_release(struct reader_values *v);
void reader_scan_log(const struct reader *r, const char *text, size_t len, struct reader_values *v);
/* Reads the values of a result file's text (json; dllogger records).
 * 0, or -EINVAL with the reason in err when it holds nothing to read. */
int reader_scan_file(const struct reader *r, const char *text, size_t len, struct reader_values *v,
                     struct bd_err *err);

/* Where a trial's files are. */
struct reader_where {
        const char *log;                /* the trial log */
        const char *logdir;             /* the run's log directory */
        const char *run;                /* the run's id */
        int trial;                      /* 1-based */
};

/* A trial's {result}: LOGDIR/RUN_TRIAL.json beside its log (caller frees;
 * NULL when neither the log nor the log directory is known). */
char *reader_trial_result(const struct reader_where *at);

/* The result file of a trial by the template (NULL when the workload reads
 * none, or when a '*' in it matches no file: *missing then holds the
 * pattern).  Caller frees both. */
char *reader_result_file(const struct workload_reader *rd, const struct reader_where *at, char **missing);

/* Reads trial `at` of a workload as its file says, with the accuracy targets
 * (< 0: none).  *t is always valid; OUT_MISSING with err set when the log
 * cannot be read (negative errno returned). */
int reader_read_trial(const struct workload *w, const struct reader_where *at, double target, double target_segm,
                      struct mlperf_trial *t, struct bd_err *err);

/* The same over texts in memory (the log, and the result file's or NULL),
 * for the tests and the fuzz harnesses. */
void reader_read_text(const struct workload *w, const struct reader *r, const char *log, size_t len,
                      const char *file_text, size_t file_len, double target, double target_segm,
                      struct mlperf_trial *t, struct reader_values *v);

#endif

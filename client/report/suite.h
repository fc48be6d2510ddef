/* suite.h: a suite's baselines file and the arithmetic of its report.
 *
 * A baselines file (JSON with comments, systems/baselines/NAME.json) names
 * the benchmarks of a suite, each a workload with overrides of its settings
 * and a target rate per system or device, and the tolerances the suite is
 * judged by:
 *
 *     {
 *       "description": "...",
 *       "performance_tolerance": 0.0,   // fraction: mean diff >= this passes
 *       "deviation_tolerance": 0.05,    // fraction: sd / result under this
 *       "benchmarks": {
 *         "ssd-b4": {
 *           "workload": "ssd",
 *           "set": { "batch_size": 4, "nodes": 1, "ssd.lr": 0.01 },
 *           "benchmark_steps": 20, "warmup_steps": 5,
 *           "targets": { "local": 40.0, "AMD EPYC": 35.5, "H200": 900 },
 *           "performance_tolerance": -0.1, "deviation_tolerance": 0.1
 *         }
 *       }
 *     }
 *
 * "set" keys are keys of the workload's section ("batch_size") or system
 * keys, dotted ("ssd.lr", "slurm.partition") or not ("nodes"); values are
 * scalars or lists, checked against the schema as --set values are (the
 * steps go beside "set", not in it: throughput mode's benchmark_steps and
 * warmup_steps, 20 and 5 by default, unused by allreduce).  Targets
 * are items/s (GB/s of bus bandwidth for allreduce), positive.  Everything is
 * checked on load; an error is one line naming the file and line.
 *
 * The report follows the mila suite's: per benchmark, result = the olympic
 * mean of the per-run rates (the plain mean below 3 runs), sd the sample
 * standard deviation across runs, sd% = sd / result, diff = (result -
 * target) / target; the suite passes when every benchmark produced a result,
 * the 80th percentile of sd% is under the deviation tolerance and the mean
 * diff is at or above the performance tolerance.  Fractions are stored as
 * fractions and printed as real percents ("+21.3%"): the mila tool printed
 * the fraction with a % sign, which users read as a hundredth of the truth.
 */
#ifndef BD_SUITE_H
#define BD_SUITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

#define BASELINE_BENCHMARK_STEPS 20
#define BASELINE_WARMUP_STEPS 5
#define BASELINES_PERF_TOL 0.0
#define BASELINES_DEV_TOL 0.05

struct baseline {
        char *name;                     /* its key in "benchmarks": [A-Za-z0-9][A-Za-z0-9._-]{0,63} */
        char *workload;                 /* a known workload (workload.h) */
        cJSON *set;                     /* object, as given (an empty one when absent) */
        long benchmark_steps, warmup_steps;     /* the trainers' throughput mode; unused by allreduce */
        cJSON *targets;                 /* object: system or device name -> rate (empty when absent) */
        double perf_tol, dev_tol;       /* the benchmark's, or the file's */
        int line;                       /* of its key in the file */
};

struct baselines {
        char *path;                     /* the label given to baselines_parse() */
        char *description;              /* NULL when absent */
        double perf_tol, dev_tol;       /* the file's */
        struct baseline *b;             /* in file order */
        size_t n;                       /* at least 1 */
};

/* Reads and checks a baselines file.  On error *ret is untouched and err
 * holds "FILE:LINE: ...". */
int baselines_load(const char *path, struct baselines *ret, struct bd_err *err);
/* The same from text (comments allowed), named label in errors: for tests
 * and for a copy kept in the results store. */
int baselines_parse(const char *text, const char *label, struct baselines *ret, struct bd_err *err);
void baselines_release(struct baselines *b);

/* The target of a benchmark for a run on system (its name) and device (the
 * trainer's device name, "AMD EPYC 9R14 96-Core Processor", "NVIDIA H200"):
 * the key equal to the system name, else the longest key found in the device
 * name ignoring case (the first in the file among equally long ones); NAN
 * when none matches.  *ret_key (optional) is the key that matched (borrowed),
 * NULL when none.  system and device may be NULL. */
double baseline_target(const struct baseline *b, const char *system, const char *device,
                       const char **ret_key);
/* "KEY=VALUE" for each "set" entry, NULL-terminated, for system_load()'s
 * sets: a key of the workload's section becomes "WORKLOAD.KEY"; strings go
 * as they are, other values as JSON.  Free with strv_free() (system.h). */
char **baseline_sets(const struct baseline *b);
/* The sets a run of b takes on ranks ranks: baseline_sets(), a "batch_size"
 * of a workload whose batch is all ranks' (ims_per_batch) made images per
 * rank, as a sweep's batch_size is (ims_per_batch and test_ims_per_batch
 * for ranks; ranks 0: left out, to find the ranks without it), then
 * throughput mode's steps (trainers).  Free with strv_free(). */
char **baseline_run_sets(const struct baseline *b, long ranks);
/* "GB/s" for allreduce, "images/s" for the trainers. */
const char *baseline_unit(const struct baseline *b);

/* One benchmark's runs: the rate of each successful run (items/s; GB/s for
 * allreduce) and how many runs failed (NaN, out of memory, crash).  A rate
 * that is not a finite positive number counts as a failed run. */
struct suite_input {
        const double *rates;
        size_t n;
        size_t failed;
};

/* Absent values are NAN and their has_* false; pointers borrow from the
 * baselines. */
struct suite_row {
        const char *name;
        size_t n, failed;               /* runs with a rate, failed runs */
        bool has_result, has_sd, has_target;    /* has_sd: at least 2 runs */
        double target, result, sd;
        double sdpct;                   /* sd / result, a fraction */
        double diff;                    /* (result - target) / target, a fraction */
        const char *target_key;         /* the targets key that matched */
        /* has a result, a target and an sd; diff >= perf_tol, sdpct <=
         * dev_tol and no failed run */
        bool pass;
};

struct suite_verdict {
        bool all_results;               /* every benchmark produced a result */
        double q80_sdpct;               /* 80th percentile of sd% over rows with one; NAN: none */
        bool dev_ok;                    /* q80_sdpct < the file's deviation tolerance */
        double mean_diff;               /* mean diff over rows with a target; NAN: none */
        bool perf_ok;                   /* mean_diff >= the file's performance tolerance */
        bool pass;                      /* all three */
};

/* Fills rows[0 .. b->n-1] and *v from in[0 .. b->n-1] (one per benchmark, in
 * the file's order) for a run on system and device (for the targets). */
void suite_compute(const struct baselines *b, const char *system, const char *device,
                   const struct suite_input *in, struct suite_row *rows, struct suite_verdict *v);
/* The table (benchmark, runs, failed, target, result, sd, sd%, diff, unit,
 * pass with the reasons it does not), where each target came from, what has
 * none, and the verdict line with each criterion, its value and whether it
 * holds:
 *   verdict: FAIL (every benchmark produced a result: yes; 80th percentile of
 *   sd% 6.2% < 5.0%: no; mean diff +3.1% >= +0.0%: yes)
 * An absent value is "-" (or says why), never "nan". */
void suite_print(FILE *f, const struct baselines *b, const struct suite_row *rows,
                 const struct suite_verdict *v);
/* The same as one JSON object: "benchmarks" (one object per row: numbers as
 * numbers, null where absent; sd% and diff in percent, as sd_pct and
 * diff_pct) and "verdict". */
void suite_json(struct bd_buf *out, const struct baselines *b, const struct suite_row *rows,
                const struct suite_verdict *v);
/* Two sets of runs of the same suite (before and after, one input per
 * benchmark each): per benchmark both results (olympic means, as in the
 * report), the change in percent and Welch's t-test of the runs (t, df,
 * two-sided p): "significant: faster/slower" at p < 0.05, "not
 * significant", "too few runs" below 2 rates on a side, "no variance" when
 * neither side varies. */
void suite_print_compare(FILE *f, const struct baselines *b, const struct suite_input *before,
                         const struct suite_input *after);

#endif

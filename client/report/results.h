/* results.h: what a trial produced, read the same way by sweeps, suites and
 * scaling reports.
 *
 * A throughput trial's result is its JSON file (LOGDIR/RUN_TRIAL.json, the
 * trainer's --result); the first read of an ended trial copies it into the
 * results store, which is what later reports read: the raw observations
 * outlive a purged log directory.  An allreduce trial's result is the bus
 * bandwidth at its largest size, a time-to-train trial's the minutes from
 * its MLPerf log.  Anything but a completed trial is an outcome (NaN, OOM,
 * failed...), never a number.
 */
#ifndef BD_RESULTS_H
#define BD_RESULTS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "mlperf.h"
#include "store.h"

enum tv_outcome {
        TV_VALUE,               /* completed: value holds the result */
        TV_NAN,                 /* the loss or the gradients became non-finite */
        TV_OOM,
        TV_FAILED,
        TV_NOT_CONVERGED,       /* time to train: ended without reaching the target */
        TV_CANCELLED,
        TV_PENDING,
        TV_RUNNING,
        _TV_MAX,
};

/* "value", "NaN", "OOM", "failed", "not converged", "cancelled", "pending", "running" */
const char *tv_outcome_name(enum tv_outcome o);

enum tv_kind {
        TV_THROUGHPUT,          /* items/s, from the JSON result */
        TV_BUSBW,               /* GB/s, allreduce */
        TV_TIME_TO_TRAIN,       /* minutes, from the MLPerf log */
};

struct trial_value {
        enum tv_outcome outcome;
        double value;
        double ci_lo, ci_hi;    /* throughput: the 95% interval of the mean; else the value */
        double *obs;            /* throughput: the rate of each timed step (items/s), obs[nobs] */
        size_t nobs;
        double throughput;      /* time to train: the logged samples/s; 0 when none */
        double accuracy;        /* time to train: the last accuracy reached; NAN when none */
        double wall_s;          /* the trial's wall time (start to end), 0 when unknown */
        bool fixed;             /* a fixed schedule: value is the whole schedule's time, accuracy its final */
        double met_min;         /* fixed: minutes from run_start to the first evaluation at the target, NAN: never */
        char *device;           /* the result's device, NULL when unknown */
        char why[160];          /* for an outcome: the reason */
};

/* The kind of result of a run of workload (mode "throughput" or "time-to-train"). */
enum tv_kind tv_kind_of(const char *workload, bool time_to_train);
/* Its unit: a throughput workload's own (its file's result.unit). */
const char *tv_unit(const char *workload, enum tv_kind k);
/* Loads trial t of run r (as last refreshed). */
void trial_value_load(struct bd_store *s, const struct bd_run *r, const struct bd_trial *t, enum tv_kind kind,
                      struct trial_value *ret);
void trial_value_release(struct trial_value *v);

/* Reads trial t of run r from log (the trial log to read) as the run's
 * workload file says (w: run_workload(r), NULL when unknown; reader.h), against the accuracy targets it recorded.
 * A program read by its own words (not MLLOG) whose trial failed is a failed
 * trial, whatever its log says. */
struct workload;
/* Whether a run's recorded configuration gives its workload's section
 * (section) a fixed schedule ("schedule": "fixed"). */
bool run_fixed(const cJSON *config, const char *section);
void trial_read(const struct bd_run *r, const struct workload *w, const struct bd_trial *t, const char *log,
                struct mlperf_trial *m);

/* A run of tenants (tenants.h): how many its recorded configuration
 * (config, parsed) has ("tenants"); false when none. */
struct tenants_model;
bool tenants_of_run(const struct bd_run *r, const cJSON *config, int *ret_n);
/* The model of run r's n tenants, each its trial's result (its rate, or its
 * time to train), with where benchd-bind said it ran, round by round. */
void tenants_load(struct bd_store *s, const struct bd_run *r, const struct bd_trial *trials, int n,
                  struct tenants_model *m);

#endif

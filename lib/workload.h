/* workload.h: the workloads benchd runs, one row each.
 *
 * Everything the tree knows about a workload is its row in workload.c: the
 * word on the command line (also its section of a system file), its names in
 * MLPerf logs and RESULT lines, the program that runs it, what its result is,
 * the keys and defaults of its section, and whether this build makes its
 * program.  The schema and the defaults of system files, the launch
 * renderer, submit, the MLPerf scorer and the report read it: adding a
 * workload is a row here, its trainer and its systems' settings.
 */
#ifndef BD_WORKLOAD_H
#define BD_WORKLOAD_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

struct schema_key;

/* What a trial's result is and how MLPerf scores a run of them. */
enum workload_result {
        /* minutes to the accuracy target: the olympic mean of exactly 5
         * trials, lower is better */
        RESULT_TIME_TO_TRAIN,
        /* bus bandwidth at the largest size (GB/s): the mean of the trials
         * that converged, higher is better */
        RESULT_BUS_BANDWIDTH,
};

struct workload {
        const char *name;               /* command line and system-file section: "ssd" */
        const char *title;              /* for people: "SSD (ResNet-34)" */
        const char *mlperf_name;        /* submission_benchmark in its MLPerf log lines */
        const char *result_name;        /* the benchmark of its RESULT lines */
        const char *program;            /* the trainer: benchd-NAME */
        enum workload_result result;
        const char *target_key;         /* its section's accuracy target (bbox for detectors); NULL: none */
        const char *target_segm_key;    /* a second target, met with the first: Mask R-CNN's segm; NULL: none */
        bool dataset;                   /* reads the dataset (--data) */
        bool built;                     /* this build makes the program (configure's BUILD_*) */
        const struct schema_key *keys;  /* its section's keys, NULL-name terminated */
        const char *defaults;           /* its section's built-in values, a JSON object */
        const char *help;               /* the section, for the schema */
        /* Checks of its section that need the whole of it, once merged
         * (label: the system file); NULL: none. */
        int (*check)(const cJSON *section, const char *label, struct bd_err *err);
};

#define WORKLOAD_MAX 16

/* The rows (at most WORKLOAD_MAX), ending with one whose name is NULL. */
extern const struct workload workloads[];

/* The row of a name; NULL when there is none. */
const struct workload *workload_find(const char *name);
/* The row of a name; NULL, with "unknown workload 'x'; known workloads: ..."
 * in err, when there is none. */
const struct workload *workload_lookup(const char *name, struct bd_err *err);
/* Appends "ssd, maskrcnn or allreduce" (last: "or", or ", " for a list). */
void workload_names(struct bd_buf *out, const char *last);
/* Whether its section has KEY (seed, precision...). */
bool workload_has_key(const struct workload *w, const char *key);

#endif

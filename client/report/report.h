/* report.h: what `benchctl report RUN... [--json|--csv] [--reference]` prints.
 *
 * The input is a list of runs, each with its parsed trial logs (mlperf.h) and
 * optionally the result published for the same system and workload.  The
 * score of each run is computed here with mlperf_score().  Output goes into a
 * struct bd_buf:
 *
 *   text  per run a header, a table of trials (a fixed schedule's: status,
 *         the whole run's time, epochs, final and best accuracy, the target
 *         and when it was met on the way, throughput, notes; else status, time to train in s and
 *         min, epochs, accuracy/target/reached, throughput, notes: the reason
 *         and every anomaly, such as "3 unparseable MLLOG lines (first at line
 *         17)"), the score line ("MLPerf score: 12.440 min (...)",
 *         "MLPerf score: no score: 3 of 5 trials" or "MLPerf score: INVALID:
 *         2 trials did not converge ..."), mean/sd/sd%, and with
 *         REPORT_REFERENCE the published result and the difference in percent;
 *         with more than one run a comparison table at the end;
 *   JSON  an array with one object per run, built with cJSON: numbers as
 *         numbers, null where unknown;
 *   CSV   a header row and one row per trial (RFC 4180 quoting; rows end
 *         with "\n"), unknown values empty.
 *
 * A trial's status is never better than its log: a truncated log is
 * "incomplete", an unreadable one "missing".  Nothing in here prints or exits.
 */
#ifndef BD_REPORT_H
#define BD_REPORT_H

#include <cjson/cJSON.h>

#include "buf.h"
#include "mlperf.h"
#include "trace.h"

/* A published result to compare with.  Zero means not published. */
struct report_reference {
        double minutes;                 /* time to train (the MLPerf score) */
        double images_per_second;       /* throughput */
        const char *source;             /* where it was published, or NULL */
};

struct report_trial {
        int number;                     /* 1-based trial number */
        const char *log_path;           /* the trial log, or NULL when none was recorded */
        struct mlperf_trial result;     /* mlperf_read_trial() of log_path */
        const char *trace_file;         /* its ranks' step traces merged (trace.h), NULL: none */
        struct trace_summary trace;     /* where its steps' time went, when trace_file */
        const char *trace_error;        /* traces that could not be read: why, NULL: none */
};

/* All pointers are borrowed and must outlive the report call. */
struct tenants_model;

struct report_run {
        const char *id;
        const char *system;
        const char *workload;           /* ssd, maskrcnn, allreduce, ... */
        const char *state;              /* the run's scheduling state, or NULL */
        const struct report_trial *trials;
        int ntrials;
        const struct report_reference *reference;       /* NULL: nothing published */
        char *const *warnings;          /* the launch script's warnings (image and host disagree...) */
        int nwarnings;
        const struct workload *wl;      /* its workload as the run recorded it; NULL: found by its name */
        bool fixed;                     /* a fixed schedule (its section's "schedule"): no time to train to
                                         * score, but the final and best accuracy and where the target was met */
        const struct tenants_model *tenants;    /* a run of tenants (tenants.h): theirs, not an MLPerf score */
};

enum report_format {
        REPORT_TEXT,
        REPORT_JSON,
        REPORT_CSV,
};

enum report_flags {
        REPORT_REFERENCE = 1 << 0,      /* compare with the published result */
};

/* The MLPerf score of one run. */
void report_score(const struct report_run *run, struct mlperf_score *ret);

/* Appends the report of n runs to out.  0, or -ENOMEM when cJSON runs out of
 * memory (out then holds what was written before). */
int report_write(const struct report_run *runs, int n, enum report_format format, unsigned flags,
                 struct bd_buf *out);

void report_text(const struct report_run *runs, int n, unsigned flags, struct bd_buf *out);
void report_csv(const struct report_run *runs, int n, unsigned flags, struct bd_buf *out);
/* The JSON array of the runs (caller frees with cJSON_Delete), NULL when out of memory. */
cJSON *report_json(const struct report_run *runs, int n, unsigned flags);

/* Appends s as one CSV field, quoted when it holds a comma, quote, CR or LF. */
void report_csv_field(struct bd_buf *out, const char *s);

#endif

/* sweep.h: sweeps (cmd-sweep.c) and their report (sweep-report.c).
 *
 * A sweep is the cartesian product of its axes (--set KEY=V1,V2,...), one
 * run per cell, recorded as a group of kind "sweep" in the results store
 * (store.h).  Its spec, JSON:
 *   { "mode": "throughput"|"time-to-train", "runs": R, "steps": N, "warmup": W,
 *     "axes": [ { "key": "ranks", "values": ["2", "4"] }, ... ],
 *     "rule": "how the learning rate follows the global batch" }
 * and each cell's params: { "values": { KEY: VALUE... }, "sets": [ "nodes=1", ... ],
 *   "ranks": R, "nodes": N, "global_batch": G }.
 */
#ifndef BD_SWEEP_H
#define BD_SWEEP_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "benchctl.h"
#include "buf.h"
#include "results.h"
#include "store.h"
#include "suite.h"

struct sweep_cell {
        const char *label;              /* the group's */
        cJSON *params;
        const char *run_id;             /* the group's; NULL: not run */
        const char *outcome;            /* NULL: value holds the result; else "NaN", "OOM", "failed", "not run"... */
        double value, ci_lo, ci_hi;     /* the mean of its trials and the 95% interval */
        struct trial_value *trials;
        int ntrials;
        long nodes;
        double wall_s;                  /* all its trials' wall time */
        int row, col_index;
        char *col;
};

/* A recorded sweep with every cell's result, laid out as its table. */
struct sweep_data {
        struct bd_group g;
        struct bd_cell *raw;
        cJSON *spec;
        bool ttt;                       /* time-to-train mode */
        enum tv_kind kind;
        const char *unit;
        const char *rowkey;             /* the rows' axis; NULL: one row */
        bool scaling;                   /* rows are ranks or nodes: speedup and efficiency */
        struct sweep_cell *cells;
        int ncells;
        char **rows, **cols;
        int nrows, ncols;
        int *grid;                      /* [row * ncols + col]: a cell, -1 when none */
};

/* Loads a sweep and refreshes its runs; an exit status (errors printed). */
int sweep_data_load(struct bd_store *s, const char *id, struct sweep_data *d);
void sweep_data_release(struct sweep_data *d);
double sweep_row_scale(const struct sweep_data *d, int r);
/* The speedup of cell (r, c) against its column's first row with a number,
 * and the scaling efficiency (speedup / scale ratio, NAN without a scale). */
double sweep_speedup(const struct sweep_data *d, int r, int c, double *ret_eff);
/* Runs the cells of a recorded group (kind "sweep" or "suite") that have no
 * result yet, one after another, then prints its report.  A cell's params
 * give its sets and, for suites, its workload; the spec's "runs" the trials
 * of each.  The group's state is read again before each cell: a cancel from
 * elsewhere stops it.  An exit status. */
int group_run(struct bd_ctx *ctx, struct bd_store *s, const char *id, const char *kind);
/* Records the group cancelled and cancels its running cell's run. */
int group_cancel(struct bd_store *s, const char *id, const char *kind);
/* The report of a recorded suite (cmd-suite.c): its stored baselines, or
 * those of baselines_path; compare: another suite, the "before" of a Welch
 * comparison; html: also the page. */
int suite_report(struct bd_store *s, const char *id, const char *baselines_path, const char *compare, bool json,
                 const char *html);

/* Writes a page atomically; prints the error and returns -1 on failure. */
int write_page(const char *path, const struct bd_buf *page);
/* The pages (report-html.c): a sweep, a suite. */
void sweep_html(const struct sweep_data *d, struct bd_buf *out);
void suite_html(const struct bd_group *g, const struct baselines *b, const struct suite_row *rows,
                const struct suite_verdict *v, const struct suite_input *in, struct bd_buf *out);

enum sweep_format { SWEEP_TEXT, SWEEP_JSON };

/* The report of a recorded sweep (refreshes its runs): the NGC table (rows:
 * the ranks, or the first axis; columns: the other axes), then speedup and
 * scaling efficiency per row.  html: also write the page there (NULL: no).
 * An exit status; prints errors. */
int sweep_report(struct bd_store *s, const char *id, enum sweep_format format, const char *html);

#endif

/* sweep.h: a recorded sweep as its report reads it (sweep.c); cmd-sweep.c
 * makes sweeps, group.h runs them, pages.h draws them.
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
/* The NGC table of a loaded sweep as text: rows the ranks (or the first
 * axis), columns the other axes, each cell its mean result or outcome; then
 * speedup and scaling efficiency per row; which cells have no result and
 * why; the runs. */
void sweep_text(const struct sweep_data *d, struct bd_buf *out);
/* The index of the cell with the best result (the shortest time to train,
 * the highest rate unless the workload says lower is better), -1 unless
 * two cells or more have a result. */
int sweep_best(const struct sweep_data *d);
/* The same as one JSON object (caller deletes): the sweep, its axes, and
 * each cell with its value, interval, speedup, efficiency and trials. */
cJSON *sweep_json(const struct sweep_data *d);
#endif

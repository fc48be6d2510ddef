/* sweep.c: the table of a sweep, as NGC's Mask R-CNN test shows its
 * own: rows are the rank counts (or the first axis), columns the other
 * axes' combinations, each cell the mean result of its run's trials or
 * its outcome (NaN, OOM, failed...); then speedup and scaling efficiency
 * per row against the first row that has a number. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "benchctl.h"
#include "json.h"
#include "results.h"
#include "run.h"
#include "stats.h"
#include "workload.h"
#include "strutil.h"
#include "sweep.h"

/* The short form of an axis value in a column label: "bs4", "amp", "lr=0.1". */
static void col_part(struct bd_buf *b, const char *key, const char *v)
{
        if (b->len)
                buf_putc(b, ' ');
        if (streq(key, "batch_size"))
                buf_printf(b, "bs%s", v);
        else if (streq(key, "precision"))
                buf_puts(b, v);
        else
                buf_printf(b, "%s=%s", key, v);
}

static void cell_load(struct bd_store *s, const struct bd_cell *c, bool ttt, const char *workload, bool cancelled,
                      struct sweep_cell *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->value = NAN;
        ret->ci_lo = ret->ci_hi = NAN;
        ret->label = c->label;
        ret->params = cJSON_Parse(c->params ? c->params : "{}");
        if (!c->run_id) {
                ret->outcome = cancelled ? "cancelled" : "not run";
                return;
        }
        ret->run_id = c->run_id;
        struct bd_run r;
        struct bd_trial *t;
        if (load_run(s, c->run_id, &r, &t) != 0) {
                ret->outcome = "missing";
                return;
        }
        enum tv_kind kind = tv_kind_of(workload, ttt);
        ret->ntrials = r.ntrials;
        ret->trials = xcalloc((size_t)r.ntrials + 1, sizeof(*ret->trials));
        double *vals = xcalloc((size_t)r.ntrials + 1, sizeof(double));
        size_t nv = 0;
        for (int i = 0; i < r.ntrials; i++) {
                trial_value_load(s, &r, &t[i], kind, &ret->trials[i]);
                if (ret->trials[i].outcome == TV_VALUE)
                        vals[nv++] = ret->trials[i].value;
                else if (!ret->outcome)
                        ret->outcome = tv_outcome_name(ret->trials[i].outcome);
                ret->wall_s += ret->trials[i].wall_s;
        }
        ret->nodes = json_int(ret->params, "nodes", 0);
        if (!ret->outcome && nv > 0) {
                if (nv == 1) {
                        ret->value = vals[0];
                        ret->ci_lo = ret->trials[0].ci_lo;
                        ret->ci_hi = ret->trials[0].ci_hi;
                } else {
                        struct stats st;
                        stats_summary(vals, nv, &st);
                        ret->value = st.mean;
                        ret->ci_lo = st.ci_lo;
                        ret->ci_hi = st.ci_hi;
                }
        } else if (!ret->outcome)
                ret->outcome = "no result";
        free(vals);
        bd_trials_free(t, r.ntrials);
        bd_run_release(&r);
}

void sweep_data_release(struct sweep_data *d)
{
        for (int i = 0; i < d->ncells; i++) {
                for (int k = 0; k < d->cells[i].ntrials; k++)
                        trial_value_release(&d->cells[i].trials[k]);
                free(d->cells[i].trials);
                cJSON_Delete(d->cells[i].params);
                free(d->cells[i].col);
        }
        free(d->cells);
        for (int i = 0; i < d->nrows; i++)
                free(d->rows[i]);
        for (int i = 0; i < d->ncols; i++)
                free(d->cols[i]);
        free(d->rows);
        free(d->cols);
        free(d->grid);
        cJSON_Delete(d->spec);
        bd_cells_free(d->raw, d->g.ncells);
        bd_group_release(&d->g);
}

static int find_or_add(char ***list, int *n, const char *s)
{
        for (int i = 0; i < *n; i++)
                if (streq((*list)[i], s))
                        return i;
        *list = xrealloc(*list, (size_t)(*n + 1) * sizeof(char *));
        (*list)[*n] = xstrdup(s);
        return (*n)++;
}

int sweep_data_load(struct bd_store *s, const char *id, struct sweep_data *d)
{
        struct bd_err err;
        memset(d, 0, sizeof(*d));
        if (store_get_group(s, id, "sweep", &d->g, &d->raw, &err) < 0)
                return bd_error("%s", err.msg), BD_EXIT_FAIL;
        d->spec = cJSON_Parse(d->g.spec ? d->g.spec : "{}");
        d->ttt = streq(json_str(d->spec, "mode", "throughput"), "time-to-train");
        d->kind = tv_kind_of(d->g.workload, d->ttt);
        d->unit = tv_unit(d->g.workload, d->kind);
        /* the row axis: ranks, else nodes, else the first with more than one value */
        const cJSON *axes = json_get(d->spec, "axes"), *a;
        d->rowkey = NULL;
        cJSON_ArrayForEach(a, axes)
                if (streq(json_str(a, "key", ""), "ranks"))
                        d->rowkey = "ranks";
        if (!d->rowkey)
                cJSON_ArrayForEach(a, axes)
                        if (streq(json_str(a, "key", ""), "nodes"))
                                d->rowkey = "nodes";
        if (!d->rowkey)
                cJSON_ArrayForEach(a, axes)
                        if (cJSON_GetArraySize(json_get(a, "values")) > 1) {
                                d->rowkey = json_str(a, "key", NULL);
                                break;
                        }
        d->scaling = d->rowkey && (streq(d->rowkey, "ranks") || streq(d->rowkey, "nodes"));
        d->ncells = d->g.ncells;
        d->cells = xcalloc((size_t)d->ncells + 1, sizeof(*d->cells));
        bool cancelled = streq(d->g.state, "cancelled");
        for (int i = 0; i < d->ncells; i++) {
                struct sweep_cell *c = &d->cells[i];
                cell_load(s, &d->raw[i], d->ttt, d->g.workload, cancelled, c);
                const cJSON *vals = json_get(c->params, "values");
                const char *rv = d->rowkey ? json_str(vals, d->rowkey, "?") : "all";
                c->row = find_or_add(&d->rows, &d->nrows, rv);
                _cleanup_buf_ struct bd_buf col = BD_BUF_INIT;
                cJSON_ArrayForEach(a, axes) {
                        const char *k = json_str(a, "key", "");
                        if ((d->rowkey && streq(k, d->rowkey)) || cJSON_GetArraySize(json_get(a, "values")) < 2)
                                continue;
                        col_part(&col, k, json_str(vals, k, "?"));
                }
                c->col_index = find_or_add(&d->cols, &d->ncols, col.len ? col.s : d->unit);
                c->col = xstrdup(col.len ? col.s : d->unit);
        }
        d->grid = xcalloc((size_t)(d->nrows * d->ncols) + 1, sizeof(int));
        for (int i = 0; i < d->nrows * d->ncols; i++)
                d->grid[i] = -1;
        for (int i = 0; i < d->ncells; i++)
                d->grid[d->cells[i].row * d->ncols + d->cells[i].col_index] = i;
        return 0;
}

/* The numeric scale of row r (its ranks or nodes): NAN when none. */
double sweep_row_scale(const struct sweep_data *d, int r)
{
        double x;
        if (!d->scaling || str_parse_double(d->rows[r], &x) < 0 || x <= 0)
                return NAN;
        return x;
}

/* The speedup of cell (r, c) against the column's first row with a number;
 * NAN where either has none.  Time to train: the base's minutes over the
 * cell's; else the cell's rate over the base's. */
double sweep_speedup(const struct sweep_data *d, int r, int c, double *ret_eff)
{
        *ret_eff = NAN;
        int i = d->grid[r * d->ncols + c];
        if (i < 0 || d->cells[i].outcome)
                return NAN;
        for (int b = 0; b < d->nrows; b++) {
                int k = d->grid[b * d->ncols + c];
                if (k < 0 || d->cells[k].outcome)
                        continue;
                double v = d->cells[i].value, v0 = d->cells[k].value;
                double sp = d->ttt ? v0 / v : v / v0;
                double scale = sweep_row_scale(d, r) / sweep_row_scale(d, b);
                if (isfinite(scale) && scale > 0)
                        *ret_eff = sp / scale;
                return sp;
        }
        return NAN;
}

/* The cell with the best result: the shortest time to train, the highest
 * bandwidth or throughput (the lowest where the workload's result says
 * lower is better); -1 unless two cells or more have one.  A sweep over a tuning key
 * (bucket_mb, overlap) is the autotune: this is its answer. */
int sweep_best(const struct sweep_data *d)
{
        bool higher = d->kind != TV_TIME_TO_TRAIN;
        const struct workload *w = workload_find(d->g.workload);
        if (d->kind == TV_THROUGHPUT && w && w->result == RESULT_THROUGHPUT)
                higher = w->higher_is_better;   /* a rate of its own (seconds per item: lower) */
        int best = -1, with = 0;
        for (int i = 0; i < d->ncells; i++) {
                const struct sweep_cell *x = &d->cells[i];
                if (x->outcome || !isfinite(x->value))
                        continue;
                with++;
                if (best < 0 || (higher ? x->value > d->cells[best].value : x->value < d->cells[best].value))
                        best = i;
        }
        return with > 1 ? best : -1;    /* one result is no choice */
}

static void print_cell_text(const struct sweep_cell *c, char *buf, size_t n)
{
        if (c->outcome)
                snprintf(buf, n, "%s", c->outcome);
        else
                snprintf(buf, n, "%.4g", c->value);
}

static void text_table(const struct sweep_data *d, const char *corner, bool speedup, struct bd_buf *out)
{
        int best = speedup ? -1 : sweep_best(d);
        int w0 = (int)strlen(corner);
        for (int r = 0; r < d->nrows; r++)
                if ((int)strlen(d->rows[r]) > w0)
                        w0 = (int)strlen(d->rows[r]);
        int wc = 12;
        for (int c = 0; c < d->ncols; c++)
                if ((int)strlen(d->cols[c]) + 2 > wc)
                        wc = (int)strlen(d->cols[c]) + 2;
        buf_printf(out, "%-*s", w0, corner);
        for (int c = 0; c < d->ncols; c++)
                buf_printf(out, "%*s", wc, d->cols[c]);
        buf_putc(out, '\n');
        for (int r = 0; r < d->nrows; r++) {
                buf_printf(out, "%-*s", w0, d->rows[r]);
                for (int c = 0; c < d->ncols; c++) {
                        char cell[64] = "-";
                        int i = d->grid[r * d->ncols + c];
                        if (i >= 0 && !speedup) {
                                print_cell_text(&d->cells[i], cell, sizeof(cell));
                                if (i == best)  /* the best cell */
                                        strcat(cell, " *");
                        }
                        else if (i >= 0) {
                                double eff, sp = sweep_speedup(d, r, c, &eff);
                                if (isfinite(sp) && isfinite(eff))
                                        snprintf(cell, sizeof(cell), "%.2fx %3.0f%%", sp, eff * 100);
                                else if (isfinite(sp))
                                        snprintf(cell, sizeof(cell), "%.2fx", sp);
                        }
                        buf_printf(out, "%*s", wc, cell);
                }
                buf_putc(out, '\n');
        }
}

void sweep_text(const struct sweep_data *d, struct bd_buf *out)
{
        const char *mode = json_str(d->spec, "mode", "throughput");
        buf_printf(out, "sweep %s: %s on %s, %s", d->g.id, d->g.workload, d->g.system, mode);
        long steps = json_int(d->spec, "steps", 0);
        if (steps > 0 && d->kind == TV_THROUGHPUT)
                buf_printf(out, " (%ld timed steps after %ld)", steps, json_int(d->spec, "warmup", 0));
        buf_printf(out, ", %d cell%s, %s\n", d->ncells, d->ncells == 1 ? "" : "s", d->g.state);
        buf_printf(out, "learning rate: %s\n", json_str(d->spec, "rule", "?"));
        const cJSON *a;
        cJSON_ArrayForEach(a, json_get(d->spec, "axes"))
                if (cJSON_GetArraySize(json_get(a, "values")) == 1)
                        buf_printf(out, "fixed: %s=%s\n", json_str(a, "key", "?"),
                                   cJSON_IsString(cJSON_GetArrayItem(json_get(a, "values"), 0))
                                           ? cJSON_GetArrayItem(json_get(a, "values"), 0)->valuestring : "?");
        const char *what = d->kind == TV_BUSBW ? "bus bandwidth at the largest size"
                         : d->kind == TV_TIME_TO_TRAIN ? "time to train (mean of the converged trials)"
                                                       : "throughput (mean of the trials)";
        buf_printf(out, "\n%s, %s\n", what, d->unit);
        text_table(d, d->rowkey ? d->rowkey : "", false, out);
        if (d->nrows > 1 && d->scaling) {
                buf_printf(out, "\nspeedup and scaling efficiency against the first %s with a result\n", d->rowkey);
                text_table(d, d->rowkey, true, out);
        }
        int best = sweep_best(d);
        if (best >= 0 && d->ncells > 1)
                buf_printf(out, "\nbest (*): %s, %.4g %s (%s)\n", d->cells[best].label, d->cells[best].value, d->unit,
                           d->kind == TV_TIME_TO_TRAIN ? "the shortest" : "the highest");
        int ok = 0;
        for (int i = 0; i < d->ncells; i++)
                ok += !d->cells[i].outcome;
        buf_printf(out, "\n%d of %d cells have a result", ok, d->ncells);
        bool first = true;
        for (int i = 0; i < d->ncells; i++)
                if (d->cells[i].outcome) {
                        buf_printf(out, "%s%s: %s", first ? "; " : ", ", d->cells[i].label, d->cells[i].outcome);
                        const struct trial_value *bad = NULL;
                        for (int k = 0; k < d->cells[i].ntrials && !bad; k++)
                                if (d->cells[i].trials[k].outcome != TV_VALUE && d->cells[i].trials[k].why[0])
                                        bad = &d->cells[i].trials[k];
                        if (bad)
                                buf_printf(out, " (%s)", bad->why);
                        first = false;
                }
        buf_puts(out, "\n");
        for (int i = 0; i < d->ncells; i++)
                if (d->cells[i].run_id)
                        buf_printf(out, "%s%s: run %s", i ? "; " : "runs: ", d->cells[i].label, d->cells[i].run_id);
        buf_puts(out, "\n");
}

cJSON *sweep_json(const struct sweep_data *d)
{
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", d->g.id);
        cJSON_AddStringToObject(o, "system", d->g.system);
        cJSON_AddStringToObject(o, "workload", d->g.workload);
        cJSON_AddStringToObject(o, "state", d->g.state);
        cJSON_AddStringToObject(o, "mode", json_str(d->spec, "mode", "throughput"));
        int best = sweep_best(d);
        if (best >= 0)
                cJSON_AddStringToObject(o, "best", d->cells[best].label);
        else
                cJSON_AddNullToObject(o, "best");
        cJSON_AddStringToObject(o, "unit", d->unit);
        cJSON_AddStringToObject(o, "lr_rule", json_str(d->spec, "rule", ""));
        cJSON_AddItemToObject(o, "axes", cJSON_Duplicate(json_get(d->spec, "axes"), true));
        if (d->rowkey)
                cJSON_AddStringToObject(o, "row_key", d->rowkey);
        else
                cJSON_AddNullToObject(o, "row_key");
        cJSON *cells = cJSON_AddArrayToObject(o, "cells");
        for (int i = 0; i < d->ncells; i++) {
                const struct sweep_cell *c = &d->cells[i];
                cJSON *x = cJSON_CreateObject();
                cJSON_AddStringToObject(x, "label", c->label ? c->label : "");
                cJSON_AddItemToObject(x, "values", cJSON_Duplicate(json_get(c->params, "values"), true));
                cJSON_AddStringToObject(x, "row", d->rows[c->row]);
                cJSON_AddStringToObject(x, "column", d->cols[c->col_index]);
                if (c->run_id)
                        cJSON_AddStringToObject(x, "run", c->run_id);
                else
                        cJSON_AddNullToObject(x, "run");
                cJSON_AddStringToObject(x, "outcome", c->outcome ? c->outcome : "completed");
                json_add_number(x, "value", c->outcome ? NAN : c->value);
                json_add_number(x, "ci95_lo", c->outcome ? NAN : c->ci_lo);
                json_add_number(x, "ci95_hi", c->outcome ? NAN : c->ci_hi);
                double eff, sp = sweep_speedup(d, c->row, c->col_index, &eff);
                json_add_number(x, "speedup", sp);
                json_add_number(x, "efficiency", eff);
                cJSON *tr = cJSON_AddArrayToObject(x, "trials");
                for (int k = 0; k < c->ntrials; k++) {
                        cJSON *t = cJSON_CreateObject();
                        cJSON_AddNumberToObject(t, "trial", k + 1);
                        cJSON_AddStringToObject(t, "outcome", c->trials[k].outcome == TV_VALUE
                                                                      ? "completed"
                                                                      : tv_outcome_name(c->trials[k].outcome));
                        json_add_number(t, "value", c->trials[k].outcome == TV_VALUE ? c->trials[k].value : NAN);
                        cJSON_AddItemToArray(tr, t);
                }
                cJSON_AddItemToArray(cells, x);
        }
        return o;
}

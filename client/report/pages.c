/* pages.c: the reports as self-contained pages (html.h for the text,
 * svg.h for the plots): runs (loss, learning rate, accuracy,
 * throughput per trial), sweeps (the table, a heat map, speedup and
 * efficiency against the ideal), suites (the table, the diff per
 * benchmark) and scaling reports (speedup, efficiency, time and cost per
 * node count) and health checks (a row per node, its findings, the
 * allreduce pairs as a map).  Nothing is fetched: one file, readable offline, printable. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "html.h"
#include "json.h"
#include "pages.h"
#include "report.h"
#include "results.h"
#include "scaling.h"
#include "strutil.h"
#include "svg.h"
#include "suite.h"
#include "sweep.h"

int write_page(const char *path, const struct bd_buf *page)
{
        struct bd_err err;
        if (fs_write_atomic(path, page->s ? page->s : "", page->len, 0644, &err) < 0) {
                fprintf(stderr, "benchctl: %s\n", err.msg);
                return -1;
        }
        return 0;
}

/* ---- curves from a trial log ---- */

struct curve {
        double *x, *y;
        size_t n, cap;
};


/* A plot with no point or bar to draw is left out of a page, not drawn as
 * an empty "no data" frame (a sweep over one rank count has no speedup; a
 * one-rank allreduce no bus bandwidth). */
static void line_plot(struct bd_buf *out, const struct svg_plot *p)
{
        for (size_t i = 0; i < p->nseries; i++)
                for (size_t k = 0; k < p->series[i].n; k++)
                        if (isfinite(p->series[i].y[k]) && isfinite(p->series[i].x[k]) &&
                            (!p->xlog2 || p->series[i].x[k] > 0)) {
                                svg_line_plot(out, p);
                                return;
                        }
}

static void bar_chart(struct bd_buf *out, const struct svg_bars *b)
{
        for (size_t i = 0; i < b->n; i++)
                if (isfinite(b->values[i])) {
                        svg_bar_chart(out, b);
                        return;
                }
}

static void curve_add(struct curve *c, double x, double y)
{
        if (c->n == c->cap) {
                c->cap = c->cap ? 2 * c->cap : 64;
                c->x = xrealloc(c->x, c->cap * sizeof(double));
                c->y = xrealloc(c->y, c->cap * sizeof(double));
        }
        c->x[c->n] = x;
        c->y[c->n++] = y;
}

static void curve_release(struct curve *c)
{
        free(c->x);
        free(c->y);
        memset(c, 0, sizeof(*c));
}

struct trial_curves {
        struct curve loss, lr, acc, acc_segm;
};

static void curves_release(struct trial_curves *t)
{
        curve_release(&t->loss);
        curve_release(&t->lr);
        curve_release(&t->acc);
        curve_release(&t->acc_segm);
}

/* The trainers' progress lines ("epoch 1/24 step 20/75 (20): loss 2.5 ...,
 * lr 0.001, ..." for SSD, "epoch 1 step 20/1500: loss 1.7 (...), lr 0.004,
 * ..." for Mask R-CNN) and the MLPerf eval_accuracy events. */
static void parse_line(const char *line, double *eval_x, struct trial_curves *tc)
{
        const char *ml = strstr(line, ":::MLLOG ");
        if (ml) {
                if (!strstr(ml, "\"eval_accuracy\""))
                        return;
                _cleanup_json_ cJSON *j = cJSON_Parse(ml + 9);
                const cJSON *v = json_get(j, "value");
                double epoch = json_num(json_get(j, "metadata"), "epoch_num", *eval_x + 1);
                *eval_x = epoch;
                if (cJSON_IsNumber(v))
                        curve_add(&tc->acc, epoch, v->valuedouble);
                else if (cJSON_IsObject(v)) {
                        curve_add(&tc->acc, epoch, json_num(v, "BBOX", NAN));
                        curve_add(&tc->acc_segm, epoch, json_num(v, "SEGM", NAN));
                }
                return;
        }
        const char *loss = strstr(line, ": loss ");
        const char *step = strstr(line, "step ");
        if (!loss || !step || step > loss)
                return;
        double s = NAN;
        const char *paren = loss;
        while (paren > step && *paren != '(')
                paren--;
        if (*paren == '(' && paren[-1] == ' ')
                s = strtod(paren + 1, NULL);
        else
                s = strtod(step + 5, NULL);
        char *end;
        double l = strtod(loss + 7, &end);
        if (end != loss + 7)
                curve_add(&tc->loss, s, l);
        const char *lr = strstr(loss, ", lr ");
        if (lr) {
                double v = strtod(lr + 5, &end);
                if (end != lr + 5)
                        curve_add(&tc->lr, s, v);
        }
}

static void curves_load(const char *path, struct trial_curves *tc)
{
        memset(tc, 0, sizeof(*tc));
        _cleanup_free_ char *text = NULL;
        size_t len;
        if (!path || fs_read_file(path, 256 << 20, &text, &len, NULL) < 0)
                return;
        double eval_x = 0;
        for (char *p = text, *nl; p && *p; p = nl ? nl + 1 : NULL) {
                nl = strchr(p, '\n');
                if (nl)
                        *nl = '\0';
                parse_line(p, &eval_x, tc);
        }
}

/* Loss, learning rate and accuracy plots of the trials whose logs are given. */
static void trial_plots(struct bd_buf *out, const char *what, char *const *logs, const int *numbers, int n,
                        double target)
{
        struct trial_curves *tc = xcalloc((size_t)n + 1, sizeof(*tc));
        struct svg_series *loss = xcalloc((size_t)n + 1, sizeof(*loss)), *lr = xcalloc((size_t)n + 1, sizeof(*lr));
        struct svg_series *acc = xcalloc(2 * (size_t)n + 1, sizeof(*acc));
        char **names = xcalloc(2 * (size_t)n + 1, sizeof(char *));
        size_t nacc = 0, nloss = 0;
        for (int i = 0; i < n; i++) {
                curves_load(logs[i], &tc[i]);
                names[2 * i] = xasprintf("trial %d", numbers[i]);
                names[2 * i + 1] = xasprintf("trial %d segm", numbers[i]);
                loss[i] = (struct svg_series){ .label = names[2 * i], .x = tc[i].loss.x, .y = tc[i].loss.y,
                                               .n = tc[i].loss.n };
                lr[i] = (struct svg_series){ .label = names[2 * i], .x = tc[i].lr.x, .y = tc[i].lr.y, .n = tc[i].lr.n };
                nloss += tc[i].loss.n;
                if (tc[i].acc.n)
                        acc[nacc++] = (struct svg_series){ .label = names[2 * i], .x = tc[i].acc.x, .y = tc[i].acc.y,
                                                           .n = tc[i].acc.n };
                if (tc[i].acc_segm.n)
                        acc[nacc++] = (struct svg_series){ .label = names[2 * i + 1], .x = tc[i].acc_segm.x,
                                                           .y = tc[i].acc_segm.y, .n = tc[i].acc_segm.n };
        }
        _cleanup_free_ char *t1 = xasprintf("%s: training loss", what), *t2 = xasprintf("%s: learning rate", what);
        _cleanup_free_ char *t3 = xasprintf("%s: accuracy at each evaluation", what);
        if (nloss) {
                line_plot(out, &(struct svg_plot){ .title = t1, .xlabel = "step", .ylabel = "loss",
                                                       .series = loss, .nseries = (size_t)n });
                line_plot(out, &(struct svg_plot){ .title = t2, .xlabel = "step", .ylabel = "learning rate",
                                                       .series = lr, .nseries = (size_t)n, .y_from_zero = true });
        } else
                html_p(out, "No loss lines in the logs (allreduce, or logs not found).");
        if (nacc) {
                struct svg_refline ref = { .label = "target", .a = target };
                line_plot(out, &(struct svg_plot){ .title = t3, .xlabel = "epoch", .ylabel = "mAP",
                                                       .series = acc, .nseries = nacc, .refs = &ref,
                                                       .nrefs = target > 0 ? 1 : 0, .y_from_zero = true });
        }
        for (int i = 0; i < n; i++) {
                curves_release(&tc[i]);
                free(names[2 * i]);
                free(names[2 * i + 1]);
        }
        free(names);
        free(tc);
        free(loss);
        free(lr);
        free(acc);
}

/* a number, or "-" when there is none */
#define FMT(buf, f, v) (isfinite(v) ? (snprintf((buf), sizeof(buf), (f), (v)), (const char *)(buf)) : "-")

/* ---- runs ---- */

void runs_html(const struct report_run *runs, int n, struct bd_buf *out)
{
        html_begin(out, n == 1 ? "benchd run report" : "benchd report");
        html_h(out, 1, n == 1 ? "benchd run report" : "benchd report");
        for (int i = 0; i < n; i++) {
                const struct report_run *r = &runs[i];
                _cleanup_free_ char *h = xasprintf("Run %s: %s on %s (%s)", r->id, r->workload, r->system,
                                                   r->state ? r->state : "?");
                html_h(out, 2, h);
                struct mlperf_score sc;
                report_score(r, &sc);
                static const char *const head[] = { "trial", "outcome", "time to train (min)", "accuracy", "target",
                                                    "throughput (samples/s)", "notes" };
                html_table_begin(out, head, ARRAY_SIZE(head));
                char *logs[r->ntrials + 1];
                int numbers[r->ntrials + 1];
                double target = -1;
                struct svg_bars bars = { 0 };
                const char **labels = xcalloc((size_t)r->ntrials + 1, sizeof(char *));
                double *tp = xcalloc((size_t)r->ntrials + 1, sizeof(double));
                double *lo = xcalloc((size_t)r->ntrials + 1, sizeof(double));
                double *hi = xcalloc((size_t)r->ntrials + 1, sizeof(double));
                char **lab = xcalloc((size_t)r->ntrials + 1, sizeof(char *));
                for (int k = 0; k < r->ntrials; k++) {
                        const struct mlperf_trial *t = &r->trials[k].result;
                        char a[32], b[32], c[32], d[32], num[16];
                        snprintf(num, sizeof(num), "%d", r->trials[k].number);
                        const char *cells[] = {
                                num, mlperf_outcome_name(t->outcome),
                                FMT(a, "%.2f", t->timed ? t->time_to_train / 60 : NAN),
                                FMT(b, "%.4f", t->has_accuracy ? t->accuracy : NAN),
                                FMT(c, "%.4f", t->has_target ? t->target : NAN),
                                FMT(d, "%.4g", t->throughput > 0 ? t->throughput : NAN), t->reason,
                        };
                        html_row(out, cells, ARRAY_SIZE(cells));
                        if (t->has_target)
                                target = t->target;
                        logs[k] = (char *)r->trials[k].log_path;
                        numbers[k] = r->trials[k].number;
                        /* throughput with its interval: the JSON result beside the log, when there is one */
                        tp[k] = t->throughput > 0 ? t->throughput : NAN;
                        lo[k] = hi[k] = tp[k];
                        if (r->trials[k].log_path && str_has_suffix(r->trials[k].log_path, ".log")) {
                                _cleanup_free_ char *jp = xasprintf("%.*s.json",
                                                                    (int)strlen(r->trials[k].log_path) - 4,
                                                                    r->trials[k].log_path);
                                _cleanup_free_ char *text = NULL;
                                size_t len;
                                if (fs_read_file(jp, 64 << 20, &text, &len, NULL) == 0) {
                                        _cleanup_json_ cJSON *j = cJSON_Parse(text);
                                        const cJSON *ti = json_get(j, "train_item");
                                        tp[k] = json_num(ti, "avg", NAN);
                                        lo[k] = json_num(ti, "ci95_lo", tp[k]);
                                        hi[k] = json_num(ti, "ci95_hi", tp[k]);
                                }
                        }
                        lab[k] = xasprintf("trial %d", r->trials[k].number);
                        labels[k] = lab[k];
                }
                html_table_end(out);
                _cleanup_buf_ struct bd_buf score = BD_BUF_INIT;
                if (sc.scored && sc.valid)
                        buf_printf(&score, "MLPerf score: %.3f %s (%s)", sc.score, sc.unit, sc.method);
                else
                        buf_printf(&score, "MLPerf score: none (%s)", sc.reason[0] ? sc.reason : "not scored");
                html_p(out, score.s);
                trial_plots(out, r->id, logs, numbers, r->ntrials, target);
                _cleanup_free_ char *tt = xasprintf("%s: throughput per trial (95%% interval)", r->id);
                bars = (struct svg_bars){ .title = tt, .ylabel = "samples/s", .n = (size_t)r->ntrials,
                                          .labels = labels, .values = tp, .lo = lo, .hi = hi };
                bar_chart(out, &bars);
                for (int k = 0; k < r->ntrials; k++)
                        free(lab[k]);
                free(lab);
                free(labels);
                free(tp);
                free(lo);
                free(hi);
        }
        html_end(out);
}

/* ---- sweeps ---- */

void sweep_html(const struct sweep_data *d, struct bd_buf *out)
{
        _cleanup_free_ char *title = xasprintf("benchd sweep %s", d->g.id);
        html_begin(out, title);
        html_h(out, 1, title);
        _cleanup_free_ char *what = xasprintf("%s on %s, %s, %d cells (%s). Values: %s.", d->g.workload, d->g.system,
                                              json_str(d->spec, "mode", "throughput"), d->ncells, d->g.state, d->unit);
        html_p(out, what);
        _cleanup_free_ char *rule = xasprintf("Learning rate: %s.", json_str(d->spec, "rule", "?"));
        html_p(out, rule);

        const char **head = xcalloc((size_t)d->ncols + 2, sizeof(char *));
        head[0] = d->rowkey ? d->rowkey : "";
        for (int c = 0; c < d->ncols; c++)
                head[c + 1] = d->cols[c];
        double *vals = xcalloc((size_t)(d->nrows * d->ncols) + 1, sizeof(double));
        char **texts = xcalloc((size_t)(d->nrows * d->ncols) + 1, sizeof(char *));
        html_table_begin(out, head, (size_t)d->ncols + 1);
        for (int r = 0; r < d->nrows; r++) {
                const char **cells = xcalloc((size_t)d->ncols + 2, sizeof(char *));
                cells[0] = d->rows[r];
                for (int c = 0; c < d->ncols; c++) {
                        int i = d->grid[r * d->ncols + c];
                        vals[r * d->ncols + c] = NAN;
                        if (i < 0)
                                texts[r * d->ncols + c] = xstrdup("-");
                        else if (d->cells[i].outcome)
                                texts[r * d->ncols + c] = xstrdup(d->cells[i].outcome);
                        else {
                                vals[r * d->ncols + c] = d->cells[i].value;
                                texts[r * d->ncols + c] = xasprintf("%.4g", d->cells[i].value);
                        }
                        cells[c + 1] = texts[r * d->ncols + c];
                }
                html_row(out, cells, (size_t)d->ncols + 1);
                free(cells);
        }
        html_table_end(out);
        svg_heatmap(out, &(struct svg_heatmap){ .title = "sweep table", .rowlabel = d->rowkey ? d->rowkey : "",
                                                .collabel = "settings", .valuelabel = d->unit,
                                                .nrows = (size_t)d->nrows, .ncols = (size_t)d->ncols,
                                                .rowlabels = (const char *const *)d->rows,
                                                .collabels = (const char *const *)d->cols, .values = vals,
                                                .cell_text = (const char *const *)texts });
        /* each cell's result with its interval */
        const char **labels = xcalloc((size_t)d->ncells + 1, sizeof(char *));
        double *v = xcalloc((size_t)d->ncells + 1, sizeof(double)), *lo = xcalloc((size_t)d->ncells + 1, sizeof(double));
        double *hi = xcalloc((size_t)d->ncells + 1, sizeof(double));
        for (int i = 0; i < d->ncells; i++) {
                labels[i] = d->cells[i].label;
                v[i] = d->cells[i].outcome ? NAN : d->cells[i].value;
                lo[i] = d->cells[i].outcome ? NAN : d->cells[i].ci_lo;
                hi[i] = d->cells[i].outcome ? NAN : d->cells[i].ci_hi;
        }
        _cleanup_free_ char *bt = xasprintf("each cell (%s, 95%% interval)", d->unit);
        bar_chart(out, &(struct svg_bars){ .title = bt, .ylabel = d->unit, .n = (size_t)d->ncells,
                                               .labels = labels, .values = v, .lo = lo, .hi = hi });
        if (d->scaling && d->nrows > 1) {
                struct svg_series *sp = xcalloc((size_t)d->ncols + 1, sizeof(*sp));
                struct svg_series *ef = xcalloc((size_t)d->ncols + 1, sizeof(*ef));
                double *xs = xcalloc((size_t)d->nrows + 1, sizeof(double));
                double *sv = xcalloc((size_t)(d->nrows * d->ncols) + 1, sizeof(double));
                double *ev = xcalloc((size_t)(d->nrows * d->ncols) + 1, sizeof(double));
                double x0 = NAN;
                for (int r = 0; r < d->nrows; r++)
                        xs[r] = sweep_row_scale(d, r);
                for (int c = 0; c < d->ncols; c++) {
                        for (int r = 0; r < d->nrows; r++) {
                                double eff, s = sweep_speedup(d, r, c, &eff);
                                sv[c * d->nrows + r] = s;
                                ev[c * d->nrows + r] = eff * 100;
                                if (!isfinite(x0) && isfinite(s) && fabs(s - 1) < 1e-12)
                                        x0 = xs[r];
                        }
                        sp[c] = (struct svg_series){ .label = d->cols[c], .x = xs, .y = sv + c * d->nrows,
                                                     .n = (size_t)d->nrows };
                        ef[c] = (struct svg_series){ .label = d->cols[c], .x = xs, .y = ev + c * d->nrows,
                                                     .n = (size_t)d->nrows };
                }
                struct svg_refline ideal = { .label = "ideal", .a = 0, .b = isfinite(x0) ? 1 / x0 : 1 };
                struct svg_refline full = { .label = "ideal (100%)", .a = 100 };
                _cleanup_free_ char *xl = xasprintf("%s", d->rowkey);
                line_plot(out, &(struct svg_plot){ .title = "speedup", .xlabel = xl, .ylabel = "speedup (x)",
                                                       .series = sp, .nseries = (size_t)d->ncols, .refs = &ideal,
                                                       .nrefs = 1, .xlog2 = true, .y_from_zero = true });
                line_plot(out, &(struct svg_plot){ .title = "scaling efficiency", .xlabel = xl,
                                                       .ylabel = "efficiency (%)", .series = ef,
                                                       .nseries = (size_t)d->ncols, .refs = &full, .nrefs = 1,
                                                       .xlog2 = true, .y_from_zero = true });
                free(sp);
                free(ef);
                free(xs);
                free(sv);
                free(ev);
        }
        for (int i = 0; i < d->nrows * d->ncols; i++)
                free(texts[i]);
        free(texts);
        free(vals);
        free(head);
        free(labels);
        free(v);
        free(lo);
        free(hi);
        html_end(out);
}

/* ---- suites ---- */

void suite_html(const struct bd_group *g, const struct baselines *b, const struct suite_row *rows,
                const struct suite_verdict *v, const struct suite_input *in, struct bd_buf *out)
{
        _cleanup_free_ char *title = xasprintf("benchd suite %s", g->id);
        html_begin(out, title);
        html_h(out, 1, title);
        _cleanup_free_ char *what = xasprintf("%s on %s (%s)%s%s", b->path, g->system, g->state,
                                              b->description ? ": " : "", b->description ? b->description : "");
        html_p(out, what);
        static const char *const head[] = { "benchmark", "runs", "failed", "target", "result", "sd", "sd %",
                                            "diff %", "unit", "pass" };
        html_table_begin(out, head, ARRAY_SIZE(head));
        const char **labels = xcalloc(b->n + 1, sizeof(char *));
        double *diff = xcalloc(b->n + 1, sizeof(double));
        for (size_t i = 0; i < b->n; i++) {
                const struct suite_row *r = &rows[i];
                char n1[16], n2[16], t[32], res[32], sd[32], sp[32], df[32];
                snprintf(n1, sizeof(n1), "%zu", r->n);
                snprintf(n2, sizeof(n2), "%zu", r->failed);
                const char *cells[] = { r->name, n1, n2, FMT(t, "%.4g", r->has_target ? r->target : NAN),
                                        FMT(res, "%.4g", r->has_result ? r->result : NAN),
                                        FMT(sd, "%.3g", r->has_sd ? r->sd : NAN),
                                        FMT(sp, "%.1f%%", r->has_sd ? r->sdpct * 100 : NAN),
                                        FMT(df, "%+.1f%%",
                                            r->has_target && r->has_result ? r->diff * 100 : NAN),
                                        baseline_unit(&b->b[i]), r->pass ? "PASS" : "FAIL" };
                html_row(out, cells, ARRAY_SIZE(cells));
                labels[i] = r->name;
                diff[i] = r->has_target && r->has_result ? r->diff * 100 : NAN;
        }
        html_table_end(out);
        char q[32], m[32];
        _cleanup_free_ char *verdict = xasprintf(
                "Verdict: %s. Every benchmark produced a result: %s; 80th percentile of sd%% %s < %.1f%%: %s; mean "
                "diff %s >= %+.1f%%: %s.", v->pass ? "PASS" : "FAIL", v->all_results ? "yes" : "no",
                FMT(q, "%.1f%%", v->q80_sdpct * 100), b->dev_tol * 100, v->dev_ok ? "yes" : "no",
                FMT(m, "%+.1f%%", v->mean_diff * 100), b->perf_tol * 100, v->perf_ok ? "yes" : "no");
        html_p(out, verdict);
        struct svg_refline tol = { .label = "performance tolerance", .a = b->perf_tol * 100 };
        bar_chart(out, &(struct svg_bars){ .title = "diff against the target per benchmark", .ylabel = "diff (%)",
                                               .n = b->n, .labels = labels, .values = diff, .refs = &tol,
                                               .nrefs = 1 });
        /* every run's rate, so the spread behind sd% is visible */
        for (size_t i = 0; i < b->n; i++) {
                if (!in[i].n)
                        continue;
                double *x = xcalloc(in[i].n, sizeof(double));
                for (size_t k = 0; k < in[i].n; k++)
                        x[k] = (double)(k + 1);
                struct svg_series s = { .label = rows[i].name, .x = x, .y = in[i].rates, .n = in[i].n, .points = true };
                struct svg_refline ref = { .label = "target", .a = rows[i].target };
                _cleanup_free_ char *t = xasprintf("%s: rate of each run", rows[i].name);
                line_plot(out, &(struct svg_plot){ .title = t, .xlabel = "run", .ylabel = baseline_unit(&b->b[i]),
                                                       .series = &s, .nseries = 1, .refs = &ref,
                                                       .nrefs = rows[i].has_target ? 1 : 0, .y_from_zero = true });
                free(x);
        }
        free(labels);
        free(diff);
        html_end(out);
}

/* ---- scaling ---- */

void scaling_html(const struct scaling_data *d, struct bd_buf *out)
{
        html_begin(out, "benchd scaling report");
        html_h(out, 1, "benchd scaling report");
        if (d->n == 0) {
                html_p(out, "No runs.");
                html_end(out);
                return;
        }
        _cleanup_free_ char *what = xasprintf("%s: speedup and efficiency on %s against %ld node(s).",
                                              d->rows[0].workload, d->basis, d->rows[0].nodes);
        html_p(out, what);
        static const char *const head[] = { "nodes", "ranks", "run", "time to train (min)", "accuracy", "throughput",
                                            "speedup", "efficiency", "wall (min)", "cost", "cost to target" };
        html_table_begin(out, head, ARRAY_SIZE(head));
        double *x = xcalloc((size_t)d->n + 1, sizeof(double)), *sp = xcalloc((size_t)d->n + 1, sizeof(double));
        double *ef = xcalloc((size_t)d->n + 1, sizeof(double)), *ttt = xcalloc((size_t)d->n + 1, sizeof(double));
        double *cost = xcalloc((size_t)d->n + 1, sizeof(double));
        for (int i = 0; i < d->n; i++) {
                const struct scaling_row *r = &d->rows[i];
                char a[16], b[16], c[32], e[32], f[32], g[32], h[32], k[32], l[32], m[32];
                snprintf(a, sizeof(a), "%ld", r->nodes);
                snprintf(b, sizeof(b), "%ld", r->ranks);
                const char *cells[] = { a, b, r->run_id, FMT(c, "%.2f", r->ttt_min),
                                        FMT(e, "%.4f", r->accuracy), FMT(f, "%.4g", r->throughput),
                                        FMT(g, "%.2fx", r->speedup),
                                        FMT(h, "%.0f%%", r->efficiency * 100),
                                        FMT(k, "%.2f", r->wall_min), FMT(l, "%.4g", r->cost),
                                        FMT(m, "%.4g", r->cost_to_target) };
                html_row(out, cells, ARRAY_SIZE(cells));
                x[i] = (double)r->nodes;
                sp[i] = r->speedup;
                ef[i] = r->efficiency * 100;
                ttt[i] = r->ttt_min;
                cost[i] = isfinite(r->cost_to_target) ? r->cost_to_target : r->cost;
        }
        html_table_end(out);
        struct svg_refline ideal = { .label = "ideal", .a = 0, .b = 1.0 / (double)d->rows[0].nodes };
        struct svg_refline full = { .label = "ideal (100%)", .a = 100 };
        struct svg_series s1 = { .label = "speedup", .x = x, .y = sp, .n = (size_t)d->n };
        struct svg_series s2 = { .label = "efficiency", .x = x, .y = ef, .n = (size_t)d->n };
        struct svg_series s3 = { .label = "time to train", .x = x, .y = ttt, .n = (size_t)d->n };
        struct svg_series s4 = { .label = "cost", .x = x, .y = cost, .n = (size_t)d->n };
        line_plot(out, &(struct svg_plot){ .title = "speedup against node count", .xlabel = "nodes",
                                               .ylabel = "speedup (x)", .series = &s1, .nseries = 1, .refs = &ideal,
                                               .nrefs = 1, .xlog2 = true, .y_from_zero = true });
        line_plot(out, &(struct svg_plot){ .title = "scaling efficiency", .xlabel = "nodes",
                                               .ylabel = "efficiency (%)", .series = &s2, .nseries = 1, .refs = &full,
                                               .nrefs = 1, .xlog2 = true, .y_from_zero = true });
        line_plot(out, &(struct svg_plot){ .title = "time to train", .xlabel = "nodes", .ylabel = "minutes",
                                               .series = &s3, .nseries = 1, .xlog2 = true, .y_from_zero = true });
        line_plot(out, &(struct svg_plot){ .title = "cost (to target where reached)", .xlabel = "nodes",
                                               .ylabel = "cost (price units)", .series = &s4, .nseries = 1,
                                               .xlog2 = true, .y_from_zero = true });
        for (int i = 0; i < d->n; i++) {
                const struct scaling_row *r = &d->rows[i];
                int *numbers = xcalloc((size_t)r->trials + 1, sizeof(int));
                for (int k = 0; k < r->trials; k++)
                        numbers[k] = k + 1;
                _cleanup_free_ char *w = xasprintf("%ld node%s (run %s)", r->nodes, r->nodes == 1 ? "" : "s",
                                                   r->run_id);
                html_h(out, 2, w);
                trial_plots(out, w, r->logs, numbers, r->trials, -1);
                free(numbers);
        }
        free(x);
        free(sp);
        free(ef);
        free(ttt);
        free(cost);
        html_end(out);
}

/* ---- benchctl health ---- */

static void health_perf_html(const struct health_perf *p, struct bd_buf *out)
{
        char a[48], b[48];
        _cleanup_free_ char *what = xasprintf("Allreduce of %.0f bytes (run %s), bus bandwidth in GB/s; slow: %.0f%% "
                                              "or more below the reference.", p->bytes, p->run_id ? p->run_id : "-",
                                              100 * p->tolerance);
        html_h(out, 2, "allreduce");
        html_p(out, what);
        if (isfinite(p->node_ref))
                snprintf(a, sizeof(a), "%.3g GB/s (%s)", p->node_ref, p->node_expect > 0 ? "expected" : "median");
        else
                snprintf(a, sizeof(a), "no expectation");
        if (isfinite(p->pair_ref))
                snprintf(b, sizeof(b), "%.3g GB/s (%s)", p->pair_ref, p->pair_expect > 0 ? "expected" : "median");
        else
                snprintf(b, sizeof(b), "no expectation");
        _cleanup_free_ char *refs = xasprintf("Reference inside a node: %s; between two nodes: %s.", a, p->npairs ? b : "none run");
        html_p(out, refs);
        static const char *const head[] = { "node", "inside (GB/s)", "pairs", "slow pairs", "lowest pair (GB/s)" };
        html_table_begin(out, head, ARRAY_SIZE(head));
        for (int i = 0; i < p->nnodes; i++) {
                int np = 0, slow = 0;
                double low = NAN;
                for (int q = 0; q < p->npairs; q++) {
                        const struct health_perf_pair *pr = &p->pairs[q];
                        if (pr->a != i && pr->b != i)
                                continue;
                        np++;
                        slow += pr->slow;
                        if (isfinite(pr->bw) && !(pr->bw >= low))
                                low = pr->bw;
                }
                char c1[32], c2[16], c3[16], c4[32];
                const char *cells[] = { p->nodes[i].name,
                                        !p->nodes[i].alone_ran ? "-" : isfinite(p->nodes[i].alone)
                                                ? FMT(c1, "%.3g", p->nodes[i].alone) : "failed",
                                        FMT(c2, "%.0f", (double)np), FMT(c3, "%.0f", (double)slow),
                                        FMT(c4, "%.3g", low) };
                html_row(out, cells, ARRAY_SIZE(cells));
        }
        html_table_end(out);
        if (!p->npairs || p->nnodes < 2)
                return;
        /* the pairs as a node-by-node map: a slow node is a row and a column
         * of low figures, a slow link one cell (and its mirror) */
        size_t n = (size_t)p->nnodes;
        double *vals = xcalloc(n * n, sizeof(double));
        char **texts = xcalloc(n * n, sizeof(char *));
        const char **labels = xcalloc(n, sizeof(char *));
        for (size_t i = 0; i < n * n; i++)
                vals[i] = NAN;
        for (size_t i = 0; i < n; i++)
                labels[i] = p->nodes[i].name;
        for (int q = 0; q < p->npairs; q++) {
                const struct health_perf_pair *pr = &p->pairs[q];
                size_t x = (size_t)pr->a, y = (size_t)pr->b;
                for (int side = 0; side < 2; side++) {
                        size_t k = side ? y * n + x : x * n + y;
                        vals[k] = pr->bw;
                        free(texts[k]);
                        texts[k] = isfinite(pr->bw) ? xasprintf("%.3g%s", pr->bw, pr->slow ? " slow" : "")
                                                    : xstrdup("failed");
                }
        }
        for (size_t i = 0; i < n * n; i++)
                if (!texts[i])
                        texts[i] = xstrdup("");
        svg_heatmap(out, &(struct svg_heatmap){ .title = "allreduce between two nodes", .rowlabel = "node",
                                                .collabel = "with", .valuelabel = "GB/s", .nrows = n, .ncols = n,
                                                .rowlabels = labels, .collabels = labels, .values = vals,
                                                .cell_text = (const char *const *)texts });
        for (size_t i = 0; i < n * n; i++)
                free(texts[i]);
        free(texts);
        free(vals);
        free(labels);
}

static void health_tput_html(const struct health_tput *t, struct bd_buf *out)
{
        html_h(out, 2, "trainer");
        _cleanup_free_ char *what = xasprintf("%s (%s, run %s%s%s), %s on each node alone; reference: %s; slow: %.0f%% "
                                              "or more below.", t->benchmark, t->workload, t->run_id ? t->run_id : "-",
                                              t->device ? ", " : "", t->device ? t->device : "", t->unit,
                                              isfinite(t->target) ? t->target_src : isfinite(t->ref) ? "the nodes' median"
                                                                                                     : "no expectation",
                                              100 * t->tolerance);
        html_p(out, what);
        _cleanup_free_ char *rate_head = xasprintf("rate (%s)", t->unit);
        const char *head[] = { "node", rate_head, "against the reference" };
        html_table_begin(out, head, ARRAY_SIZE(head));
        const char **labels = xcalloc((size_t)t->nnodes + 1, sizeof(char *));
        double *vals = xcalloc((size_t)t->nnodes + 1, sizeof(double));
        for (int i = 0; i < t->nnodes; i++) {
                char a[32], b[32];
                double r = t->nodes[i].rate;
                const char *cells[] = { t->nodes[i].name, isfinite(r) ? FMT(a, "%.4g", r) : "failed",
                                        FMT(b, "%+.1f%%", isfinite(t->ref) ? 100 * (r / t->ref - 1) : NAN) };
                html_row(out, cells, ARRAY_SIZE(cells));
                labels[i] = t->nodes[i].name;
                vals[i] = r;
        }
        html_table_end(out);
        struct svg_refline ref = { .label = "reference", .a = t->ref };
        svg_bar_chart(out, &(struct svg_bars){ .title = "trainer rate per node", .ylabel = t->unit,
                                               .n = (size_t)t->nnodes, .labels = labels, .values = vals,
                                               .refs = isfinite(t->ref) ? &ref : NULL, .nrefs = isfinite(t->ref) });
        free(labels);
        free(vals);
}

void health_html(const char *system, const struct health_node *nodes, int n, const char *const *drain,
                 const struct health_perf *perf, const struct health_tput *tput, const char *note, struct bd_buf *out)
{
        _cleanup_free_ char *title = xasprintf("benchd health: %s", system);
        int count[3] = { 0 };
        for (int i = 0; i < n; i++)
                count[nodes[i].verdict]++;
        html_begin(out, title);
        html_h(out, 1, title);
        _cleanup_free_ char *verdict = xasprintf("%s: %s (%d node%s: %d ok, %d degraded, %d failed).", system,
                                                 health_level_name(health_worst(nodes, n)), n, n == 1 ? "" : "s",
                                                 count[HEALTH_OK], count[HEALTH_DEGRADED], count[HEALTH_FAILED]);
        html_p(out, verdict);
        if (note)
                html_p(out, note);
        static const char *const head[] = { "node", "verdict", "host", "checks", "findings", "drain" };
        html_table_begin(out, head, ARRAY_SIZE(head));
        for (int i = 0; i < n; i++) {
                const struct health_node *h = &nodes[i];
                char c[16], f[16];
                snprintf(c, sizeof(c), "%d", h->checks);
                snprintf(f, sizeof(f), "%d", h->nfindings);
                const char *cells[] = { h->node, health_level_name(h->verdict), h->host ? h->host : "-", c, f,
                                        drain && drain[i] ? drain[i] : "" };
                html_row(out, cells, ARRAY_SIZE(cells));
        }
        html_table_end(out);
        bool any = false;
        for (int i = 0; i < n; i++)
                any |= nodes[i].nfindings > 0 || nodes[i].note;
        if (any) {
                html_h(out, 2, "findings");
                static const char *const fhead[] = { "node", "level", "check", "evidence", "what to do" };
                html_table_begin(out, fhead, ARRAY_SIZE(fhead));
                for (int i = 0; i < n; i++) {
                        const struct health_node *h = &nodes[i];
                        if (h->note) {
                                const char *cells[] = { h->node, "note", "", h->note, "" };
                                html_row(out, cells, ARRAY_SIZE(cells));
                        }
                        for (int k = 0; k < h->nfindings; k++) {
                                const struct health_finding *fd = &h->findings[k];
                                const char *cells[] = { h->node, health_level_name(fd->level), fd->check, fd->evidence,
                                                        fd->action };
                                html_row(out, cells, ARRAY_SIZE(cells));
                        }
                }
                html_table_end(out);
        }
        if (perf)
                health_perf_html(perf, out);
        if (tput)
                health_tput_html(tput, out);
        html_end(out);
}

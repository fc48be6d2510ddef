/* scaling.c: the scaling and cost table of runs over node counts. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchctl.h"
#include "json.h"
#include "run.h"
#include "scaling.h"
#include "strutil.h"
#include "workload.h"

static int by_nodes(const void *a, const void *b)
{
        const struct scaling_row *x = a, *y = b;
        return (x->nodes > y->nodes) - (x->nodes < y->nodes);
}

static void row_load(struct bd_store *s, const struct bd_run *r, const struct bd_trial *t, struct scaling_row *row)
{
        _cleanup_json_ cJSON *cfg = cJSON_Parse(r->config ? r->config : "{}");
        row->run_id = xstrdup(r->id);
        row->system = xstrdup(r->system);
        row->workload = xstrdup(r->workload);
        row->nodes = json_int(cfg, "nodes", 1);
        row->ranks = row->nodes * json_int(cfg, "ranks_per_node", 1);
        row->cost_per_node_hour = json_num(cfg, "cost_per_node_hour", 0);
        bool bench = json_int(json_get(cfg, r->workload), "benchmark_steps", 0) > 0;
        row->kind = tv_kind_of(r->workload, !bench);
        row->trials = r->ntrials;
        row->logs = xcalloc((size_t)r->ntrials + 1, sizeof(char *));
        double ttt = 0, acc = 0, tp = 0, wall = 0, met = 0;
        int nacc = 0, ntp = 0, nwall = 0;
        for (int i = 0; i < r->ntrials; i++) {
                bool copy;
                row->logs[i] = trial_log_best(r, &t[i], &copy);
                struct trial_value v;
                trial_value_load(s, r, &t[i], row->kind, &v);
                if (v.wall_s > 0)
                        wall += v.wall_s, nwall++;
                row->fixed |= v.fixed;
                if (v.fixed && isfinite(v.met_min))
                        met += v.met_min, row->met++;
                if (isfinite(v.accuracy))
                        acc += v.accuracy, nacc++;
                if (v.outcome == TV_VALUE) {
                        row->converged++;
                        if (row->kind == TV_TIME_TO_TRAIN) {
                                ttt += v.value;
                                if (v.throughput > 0)
                                        tp += v.throughput, ntp++;
                        } else
                                tp += v.value, ntp++;
                } else if (!row->outcome)
                        row->outcome = tv_outcome_name(v.outcome);
                else if (row->kind == TV_TIME_TO_TRAIN && v.throughput > 0)
                        tp += v.throughput, ntp++;
                trial_value_release(&v);
        }
        if (row->converged > 0)
                row->outcome = NULL;    /* some trials made it: the means are of those */
        row->ttt_min = row->kind == TV_TIME_TO_TRAIN && row->converged ? ttt / row->converged : NAN;
        row->met_min = row->met ? met / row->met : NAN;
        row->accuracy = nacc ? acc / nacc : NAN;
        row->throughput = ntp ? tp / ntp : NAN;
        row->wall_min = nwall ? wall / nwall / 60.0 : NAN;
        double cph = row->cost_per_node_hour > 0 ? row->cost_per_node_hour : NAN;
        row->cost = (double)row->nodes * cph * row->wall_min / 60.0;
        row->cost_to_target = (double)row->nodes * cph * (row->fixed ? row->met_min : row->ttt_min) / 60.0;
}

int scaling_load(struct bd_store *s, char **ids, int n, struct scaling_data *d)
{
        memset(d, 0, sizeof(*d));
        d->rows = xcalloc((size_t)n + 1, sizeof(*d->rows));
        for (int i = 0; i < n; i++) {
                struct bd_run r;
                struct bd_trial *t;
                if (load_run(s, ids[i], &r, &t) != 0) {
                        scaling_release(d);
                        return BD_EXIT_FAIL;
                }
                row_load(s, &r, t, &d->rows[d->n++]);
                bd_trials_free(t, r.ntrials);
                bd_run_release(&r);
        }
        for (int i = 1; i < d->n; i++)
                if (!streq(d->rows[i].workload, d->rows[0].workload)) {
                        bd_error("--scaling compares runs of one workload: run %s is %s, run %s is %s",
                                 d->rows[0].run_id, d->rows[0].workload, d->rows[i].run_id, d->rows[i].workload);
                        scaling_release(d);
                        return BD_EXIT_USAGE;
                }
        qsort(d->rows, (size_t)d->n, sizeof(*d->rows), by_nodes);
        /* speedup on time to train when every run has one, else on throughput */
        bool ttt = d->n > 0;
        for (int i = 0; i < d->n; i++)
                ttt = ttt && isfinite(d->rows[i].ttt_min);
        d->basis = ttt ? (d->n > 0 && d->rows[0].fixed ? "the fixed schedule's time" : "time to train") : "throughput";
        const struct scaling_row *base = NULL;
        for (int i = 0; i < d->n && !base; i++)
                if (ttt || isfinite(d->rows[i].throughput))
                        base = &d->rows[i];
        for (int i = 0; i < d->n; i++) {
                struct scaling_row *x = &d->rows[i];
                x->speedup = x->efficiency = NAN;
                if (!base)
                        continue;
                x->speedup = ttt ? base->ttt_min / x->ttt_min : x->throughput / base->throughput;
                x->efficiency = x->speedup / ((double)x->nodes / (double)base->nodes);
        }
        return 0;
}

void scaling_release(struct scaling_data *d)
{
        for (int i = 0; i < d->n; i++) {
                struct scaling_row *x = &d->rows[i];
                for (int k = 0; x->logs && k < x->trials; k++)
                        free(x->logs[k]);
                free(x->logs);
                free(x->run_id);
                free(x->system);
                free(x->workload);
        }
        free(d->rows);
        memset(d, 0, sizeof(*d));
}

/* a number, or "-" when there is none */
#define NUM(buf, f, v) (isfinite(v) ? (snprintf((buf), sizeof(buf), (f), (v)), (const char *)(buf)) : "-")

void scaling_text(const struct scaling_data *d, struct bd_buf *out)
{
        if (d->n == 0)
                return;
        const char *unit = tv_unit(d->rows[0].workload, d->rows[0].kind == TV_TIME_TO_TRAIN ? TV_THROUGHPUT : d->rows[0].kind);
        buf_printf(out, "scaling of %s: speedup and efficiency on %s against %ld node%s\n", d->rows[0].workload,
                   d->basis, d->rows[0].nodes, d->rows[0].nodes == 1 ? "" : "s");
        bool fixed = d->rows[0].fixed;
        buf_printf(out, "%-5s %-5s %-24s %9s %8s %12s %8s %6s %9s %10s %10s  %s\n", "nodes", "ranks", "run",
                   fixed ? "time min" : "ttt min", fixed ? "final" : "accuracy", unit, "speedup", "eff", "wall min",
                   "cost", "to target", "notes");
        bool priced = false;
        for (int i = 0; i < d->n; i++) {
                const struct scaling_row *x = &d->rows[i];
                char a[32], b[32], c[32], e[32], f[32], g[32], h[32], k[32];
                priced = priced || x->cost_per_node_hour > 0;
                buf_printf(out, "%-5ld %-5ld %-24s %9s %8s %12s %8s %6s %9s %10s %10s  ", x->nodes, x->ranks,
                           x->run_id, NUM(a, "%.2f", x->ttt_min), NUM(b, "%.4f", x->accuracy),
                           NUM(c, "%.4g", x->throughput), NUM(e, "%.2fx", x->speedup),
                           NUM(f, "%.0f%%", x->efficiency * 100), NUM(g, "%.2f", x->wall_min),
                           NUM(h, "%.4g", x->cost), NUM(k, "%.4g", x->cost_to_target));
                if (x->outcome)
                        buf_printf(out, "%s", x->outcome);
                else if (x->converged < x->trials)
                        buf_printf(out, "%d of %d trials", x->converged, x->trials);
                if (x->fixed && x->met)
                        buf_printf(out, "%starget met in %d of %d trials, at %.2f min", x->outcome ||
                                   x->converged < x->trials ? "; " : "", x->met, x->trials, x->met_min);
                else if (x->fixed)
                        buf_printf(out, "%starget not met", x->outcome || x->converged < x->trials ? "; " : "");
                buf_putc(out, '\n');
        }
        if (priced)
                buf_printf(out, "cost: nodes x cost_per_node_hour x the mean wall time of a trial; to target: the same "
                                "over the mean time %s\n", d->rows[0].fixed ? "to the first evaluation at the target"
                                                                             : "to train");
        else
                buf_puts(out, "cost: no cost_per_node_hour set for these systems (--set cost_per_node_hour=PRICE at "
                              "submission, or in the system file)\n");
}

void scaling_json(const struct scaling_data *d, struct bd_buf *out)
{
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "basis", d->basis ? d->basis : "");
        cJSON *rows = cJSON_AddArrayToObject(o, "rows");
        for (int i = 0; i < d->n; i++) {
                const struct scaling_row *x = &d->rows[i];
                cJSON *r = cJSON_CreateObject();
                cJSON_AddStringToObject(r, "run", x->run_id);
                cJSON_AddStringToObject(r, "system", x->system);
                cJSON_AddStringToObject(r, "workload", x->workload);
                cJSON_AddNumberToObject(r, "nodes", (double)x->nodes);
                cJSON_AddNumberToObject(r, "ranks", (double)x->ranks);
                cJSON_AddNumberToObject(r, "trials", x->trials);
                cJSON_AddNumberToObject(r, "with_result", x->converged);
                json_add_number(r, "time_to_train_min", x->ttt_min);
                json_add_number(r, "accuracy", x->accuracy);
                cJSON_AddStringToObject(r, "schedule", x->fixed ? "fixed" : "time-to-train");
                if (x->fixed) {
                        cJSON_AddNumberToObject(r, "target_met_trials", x->met);
                        json_add_number(r, "target_met_min", x->met_min);
                }
                json_add_number(r, "throughput", x->throughput);
                json_add_number(r, "speedup", x->speedup);
                json_add_number(r, "efficiency", x->efficiency);
                json_add_number(r, "wall_min", x->wall_min);
                json_add_number(r, "cost_per_node_hour", x->cost_per_node_hour > 0 ? x->cost_per_node_hour : NAN);
                json_add_number(r, "cost", x->cost);
                json_add_number(r, "cost_to_target", x->cost_to_target);
                if (x->outcome)
                        cJSON_AddStringToObject(r, "outcome", x->outcome);
                else
                        cJSON_AddNullToObject(r, "outcome");
                cJSON_AddItemToArray(rows, r);
        }
        char *text = cJSON_Print(o);
        buf_printf(out, "%s\n", text);
        free(text);
        cJSON_Delete(o);
}

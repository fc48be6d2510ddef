/* suite-report.c: a recorded suite's report: the rates of its runs, its
 * rows and verdict against its baselines, and the comparison with an
 * earlier suite (suite-report.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchctl.h"
#include "json.h"
#include "results.h"
#include "run.h"
#include "strutil.h"
#include "suite-report.h"

void suite_rates_release(struct suite_rates *r)
{
        for (size_t i = 0; i < r->n; i++) {
                free(r->rates[i]);
                free(r->run_ids[i]);
        }
        free(r->rates);
        free(r->run_ids);
        free(r->in);
        free(r->device);
        memset(r, 0, sizeof(*r));
}

int suite_rates_load(struct bd_store *s, const struct bd_group *g, const struct bd_cell *cells,
                     const struct baselines *b, struct suite_rates *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->n = b->n;
        ret->in = xcalloc(b->n + 1, sizeof(*ret->in));
        ret->rates = xcalloc(b->n + 1, sizeof(double *));
        ret->run_ids = xcalloc(b->n + 1, sizeof(char *));
        for (size_t i = 0; i < b->n; i++) {
                const struct bd_cell *c = NULL;
                for (int k = 0; k < g->ncells && !c; k++)
                        if (cells[k].label && streq(cells[k].label, b->b[i].name))
                                c = &cells[k];
                if (!c || !c->run_id)
                        continue;
                struct bd_run r;
                struct bd_trial *t;
                if (load_run(s, c->run_id, &r, &t) != 0)
                        return BD_EXIT_FAIL;
                ret->run_ids[i] = xstrdup(r.id);
                enum tv_kind kind = tv_kind_of(r.workload, false);
                ret->rates[i] = xcalloc((size_t)r.ntrials + 1, sizeof(double));
                for (int k = 0; k < r.ntrials; k++) {
                        struct trial_value v;
                        trial_value_load(s, &r, &t[k], kind, &v);
                        if (v.outcome == TV_VALUE)
                                ret->rates[i][ret->in[i].n++] = v.value;
                        else if (v.outcome != TV_PENDING && v.outcome != TV_RUNNING)
                                ret->in[i].failed++;
                        if (!ret->device && v.device)
                                ret->device = xstrdup(v.device);
                        trial_value_release(&v);
                }
                ret->in[i].rates = ret->rates[i];
                bd_trials_free(t, r.ntrials);
                bd_run_release(&r);
        }
        return 0;
}

int suite_report_load(struct bd_store *s, const char *id, const char *baselines_path, const char *compare,
                      struct suite_report *r)
{
        struct bd_err err;
        memset(r, 0, sizeof(*r));
        if (store_get_group(s, id, "suite", &r->g, &r->cells, &err) < 0)
                return bd_error("%s", err.msg), BD_EXIT_FAIL;
        _cleanup_json_ cJSON *spec = cJSON_Parse(r->g.spec ? r->g.spec : "{}");
        int ret = BD_EXIT_OK;
        if (baselines_path) {
                if (baselines_load(baselines_path, &r->b, &err) < 0) {
                        bd_error("%s", err.msg);
                        ret = BD_EXIT_CONFIG;
                }
        } else if (baselines_parse(json_str(spec, "baselines", ""), json_str(spec, "baselines_path", "baselines"),
                                   &r->b, &err) < 0) {
                bd_error("%s (the copy kept with suite %s)", err.msg, r->g.id);
                ret = BD_EXIT_FAIL;
        }
        if (ret == BD_EXIT_OK)
                ret = suite_rates_load(s, &r->g, r->cells, &r->b, &r->now);
        if (ret == BD_EXIT_OK && compare) {
                r->compared = true;
                if (store_get_group(s, compare, "suite", &r->before_g, &r->before_cells, &err) < 0) {
                        bd_error("%s", err.msg);
                        ret = BD_EXIT_FAIL;
                } else
                        ret = suite_rates_load(s, &r->before_g, r->before_cells, &r->b, &r->before);
        }
        if (ret == BD_EXIT_OK) {
                r->rows = xcalloc(r->b.n + 1, sizeof(*r->rows));
                suite_compute(&r->b, r->g.system, r->now.device, r->now.in, r->rows, &r->v);
        }
        return ret;
}

void suite_report_release(struct suite_report *r)
{
        free(r->rows);
        suite_rates_release(&r->now);
        suite_rates_release(&r->before);
        baselines_release(&r->b);
        bd_cells_free(r->cells, r->g.ncells);
        bd_cells_free(r->before_cells, r->before_g.ncells);
        bd_group_release(&r->g);
        bd_group_release(&r->before_g);
        memset(r, 0, sizeof(*r));
}

void suite_report_text(const struct suite_report *r, FILE *f)
{
        fprintf(f, "suite %s: %s on %s (%s)%s%s\n", r->g.id, r->b.path, r->g.system, r->g.state,
                r->now.device ? ", device " : "", r->now.device ? r->now.device : "");
        suite_print(f, &r->b, r->rows, &r->v);
        if (r->compared) {
                fprintf(f, "\ncompared with suite %s (before) :\n", r->before_g.id);
                suite_print_compare(f, &r->b, r->before.in, r->now.in);
        }
}

cJSON *suite_report_json(const struct suite_report *r)
{
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        suite_json(&out, &r->b, r->rows, &r->v);
        /* the rates each row was computed from, so the numbers can be checked */
        cJSON *o = cJSON_Parse(out.s ? out.s : "{}");
        if (!o)
                return NULL;
        cJSON_AddStringToObject(o, "suite", r->g.id);
        cJSON_AddStringToObject(o, "system", r->g.system);
        if (r->now.device)
                cJSON_AddStringToObject(o, "device", r->now.device);
        cJSON *bs = cJSON_GetObjectItemCaseSensitive(o, "benchmarks"), *x;
        size_t i = 0;
        cJSON_ArrayForEach(x, bs) {
                if (i >= r->b.n)
                        break;
                cJSON_AddItemToObject(x, "rates",
                                      cJSON_CreateDoubleArray(r->now.in[i].rates ? r->now.in[i].rates : (double[]){ 0 },
                                                              (int)r->now.in[i].n));
                if (r->now.run_ids[i])
                        cJSON_AddStringToObject(x, "run", r->now.run_ids[i]);
                i++;
        }
        return o;
}

/* results.c: a trial's result for sweeps, suites, scaling reports and
 * tenants. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "fs.h"
#include "json.h"
#include "mlperf.h"
#include "results.h"
#include "run.h"
#include "reader.h"
#include "strutil.h"
#include "tenants.h"
#include "workload.h"

static const char *const outcome_names[_TV_MAX] = {
        [TV_VALUE] = "value",   [TV_NAN] = "NaN",         [TV_OOM] = "OOM",         [TV_FAILED] = "failed",
        [TV_NOT_CONVERGED] = "not converged", [TV_CANCELLED] = "cancelled", [TV_PENDING] = "pending",
        [TV_RUNNING] = "running",
};

const char *tv_outcome_name(enum tv_outcome o)
{
        return (unsigned)o < _TV_MAX ? outcome_names[o] : "?";
}

enum tv_kind tv_kind_of(const char *workload, bool time_to_train)
{
        const struct workload *w = workload_find(workload);
        if (w && w->result == RESULT_BUS_BANDWIDTH)
                return TV_BUSBW;
        if (w && w->result == RESULT_THROUGHPUT)
                return TV_THROUGHPUT;
        return time_to_train ? TV_TIME_TO_TRAIN : TV_THROUGHPUT;
}

const char *tv_unit(const char *workload, enum tv_kind k)
{
        const struct workload *w = workload ? workload_find(workload) : NULL;
        if (k == TV_THROUGHPUT && w && w->result == RESULT_THROUGHPUT)
                return w->unit;
        return k == TV_BUSBW ? "GB/s" : k == TV_TIME_TO_TRAIN ? "min" : "images/s";
}

/* The accuracy target of a run (segm: the second), from the configuration
 * it recorded; -1: none. */
static double run_target(const cJSON *config, const struct workload *w, bool segm)
{
        const char *key = w ? (segm ? w->target_segm_key : w->target_key) : NULL;
        return key ? json_num(json_get(config, w->section), key, -1) : -1;
}

bool run_fixed(const cJSON *config, const char *section)
{
        return section && streq(json_str(json_get(config, section), "schedule", ""), "fixed");
}

void trial_read(const struct bd_run *r, const struct workload *w, const struct bd_trial *t, const char *log,
                struct mlperf_trial *m)
{
        _cleanup_json_ cJSON *config = cJSON_Parse(r->config ? r->config : "{}");
        double target = run_target(config, w, false), target_segm = run_target(config, w, true);
        if (!w) {
                (void) mlperf_read_trial_segm(log, target, target_segm, m, NULL);
                return;
        }
        struct reader_where at = { .log = log, .logdir = r->logdir, .run = r->id, .trial = t->trial };
        if (reader_read_trial(w, &at, target, target_segm, m, NULL) < 0 || w->reader.read == READ_MLLOG)
                return;
        /* the program's own words say nothing of how it ended: its exit status does */
        if (bd_state_final(t->state) && t->state != ST_COMPLETED &&
            (m->outcome == OUT_SUCCESS || m->outcome == OUT_NO_RUN || m->outcome == OUT_INCOMPLETE)) {
                m->outcome = OUT_ABORTED;
                m->converged = false;
                snprintf(m->reason, sizeof(m->reason), "%s%s%.120s", bd_state_name(t->state), t->reason ? ": " : "",
                         t->reason ? t->reason : "");
        }
}

/* The outcome of a trial that left no result of its own: its state. */
static void from_state(const struct bd_trial *t, struct trial_value *v)
{
        switch (t->state) {
        case ST_PENDING: v->outcome = TV_PENDING; break;
        case ST_RUNNING: v->outcome = TV_RUNNING; break;
        case ST_CANCELLED: v->outcome = TV_CANCELLED; break;
        case ST_OOM: v->outcome = TV_OOM; break;
        default: v->outcome = TV_FAILED; break;
        }
        if (!v->why[0])
                snprintf(v->why, sizeof(v->why), "%s%s%s", bd_state_name(t->state), t->reason ? ": " : "",
                         t->reason ? t->reason : "");
}

/* LOGDIR/RUN_TRIAL.json beside the trial's log */
static char *result_path(const struct bd_run *r, const struct bd_trial *t)
{
        return reader_trial_result(&(struct reader_where){ .log = t->log_path, .logdir = r->logdir, .run = r->id,
                                                           .trial = t->trial });
}

static void from_json(const char *text, struct trial_value *v)
{
        _cleanup_json_ cJSON *j = cJSON_Parse(text);
        const char *outcome = json_str(j, "outcome", NULL);
        const char *dev = json_str(j, "device", NULL);
        if (dev)
                v->device = xstrdup(dev);
        if (!j || !outcome) {
                v->outcome = TV_FAILED;
                STR_COPY(v->why, "unreadable JSON result");
                return;
        }
        if (!streq(outcome, "completed")) {
                v->outcome = streq(outcome, "nan") ? TV_NAN : streq(outcome, "oom") ? TV_OOM : TV_FAILED;
                snprintf(v->why, sizeof(v->why), "outcome %s", outcome);
                return;
        }
        const cJSON *ti = json_get(j, "train_item");
        const cJSON *avg = json_get(ti, "avg");
        if (!cJSON_IsNumber(avg) || !isfinite(avg->valuedouble)) {
                v->outcome = TV_FAILED;
                STR_COPY(v->why, "completed without a rate");
                return;
        }
        v->outcome = TV_VALUE;
        v->value = avg->valuedouble;
        v->ci_lo = json_num(ti, "ci95_lo", v->value);
        v->ci_hi = json_num(ti, "ci95_hi", v->value);
        const cJSON *secs = json_get(j, "observations_s"), *items = json_get(j, "observations_items");
        int n = cJSON_GetArraySize(secs);
        if (n > 0 && cJSON_GetArraySize(items) == n) {
                v->obs = xcalloc((size_t)n, sizeof(double));
                for (int i = 0; i < n; i++) {
                        double s = cJSON_GetArrayItem(secs, i)->valuedouble;
                        double it = cJSON_GetArrayItem(items, i)->valuedouble;
                        if (s > 0)
                                v->obs[v->nobs++] = it / s;
                }
        }
}

void trial_value_load(struct bd_store *s, const struct bd_run *r, const struct bd_trial *t, enum tv_kind kind,
                      struct trial_value *v)
{
        memset(v, 0, sizeof(*v));
        v->accuracy = NAN;
        if (t->start_time > 0 && t->end_time >= t->start_time)
                v->wall_s = t->end_time - t->start_time;
        const struct workload *w = run_workload(r);
        if (kind == TV_THROUGHPUT && (!w || w->own)) {
                _cleanup_free_ char *text = NULL;
                struct bd_err err;
                if (store_get_result(s, r->id, t->trial, &text, &err) < 0) {
                        _cleanup_free_ char *path = result_path(r, t);
                        size_t len;
                        if (path && fs_read_file(path, 64 << 20, &text, &len, NULL) == 0 && bd_state_final(t->state))
                                (void) store_put_result(s, r->id, t->trial, text, NULL);
                }
                if (text)
                        from_json(text, v);
                else
                        from_state(t, v);
                return;
        }
        bool copy;
        _cleanup_free_ char *log = trial_log_best(r, t, &copy);
        struct mlperf_trial m;
        if (!log || !bd_state_final(t->state)) {
                from_state(t, v);
                return;
        }
        trial_read(r, w, t, log, &m);
        if (m.outcome == OUT_MISSING) {
                from_state(t, v);
                return;
        }
        if (kind == TV_THROUGHPUT) {
                /* another trainer's rate, read as its file says */
                if (m.converged) {
                        v->outcome = TV_VALUE;
                        v->value = v->ci_lo = v->ci_hi = m.throughput;
                } else {
                        v->outcome = TV_FAILED;
                        STR_COPY(v->why, m.reason[0] ? m.reason : "no result");
                }
                if (m.has_accuracy)
                        v->accuracy = m.accuracy;
                return;
        }
        if (kind == TV_BUSBW) {
                if (m.ar_sizes > 0 && m.ar_wrong == 0 && m.outcome == OUT_SUCCESS) {
                        v->outcome = TV_VALUE;
                        v->value = v->ci_lo = v->ci_hi = m.ar_busbw;
                } else {
                        v->outcome = TV_FAILED;
                        STR_COPY(v->why, m.reason[0] ? m.reason : "no allreduce result");
                }
                return;
        }
        v->throughput = m.throughput;
        if (m.has_accuracy)
                v->accuracy = m.accuracy;
        _cleanup_json_ cJSON *config = cJSON_Parse(r->config ? r->config : "{}");
        v->met_min = m.met ? m.met_s / 60.0 : NAN;
        if (w && run_fixed(config, w->section) && m.timed && m.time_to_train > 0 &&
            (m.outcome == OUT_SUCCESS || m.outcome == OUT_ABORTED)) {
                /* the whole schedule ran: its time and final accuracy, target or not */
                v->fixed = true;
                v->outcome = TV_VALUE;
                v->value = v->ci_lo = v->ci_hi = m.time_to_train / 60.0;
        } else if (m.converged && m.time_to_train > 0) {
                v->outcome = TV_VALUE;
                v->value = v->ci_lo = v->ci_hi = m.time_to_train / 60.0;
        } else if (m.outcome == OUT_SUCCESS || m.outcome == OUT_ABORTED) {
                v->outcome = TV_NOT_CONVERGED;
                STR_COPY(v->why, m.reason[0] ? m.reason : "did not reach the target");
        } else
                from_state(t, v);
}

void trial_value_release(struct trial_value *v)
{
        free(v->obs);
        free(v->device);
        memset(v, 0, sizeof(*v));
}
bool tenants_of_run(const struct bd_run *r, const cJSON *config, int *ret_n)
{
        const char *t = json_str(config, "tenants", "off");
        long n = 0;
        if (streq(t, "per-gpu"))
                n = json_int(config, "gpus_per_node", 0);
        else if (str_parse_long(t, &n) < 0)
                n = 0;
        if (n < 1 || r->ntrials < n || r->ntrials % n != 0)
                return false;
        *ret_n = (int)n;
        return true;
}

/* What benchd-bind said of the tenant in its log: "NODE: CPUs ..., memory
 * at most ..." */
static void tenant_where(const struct bd_run *r, const struct bd_trial *t, char *buf, size_t n)
{
        bool copy;
        _cleanup_free_ char *log = trial_log_best(r, t, &copy), *text = NULL;
        buf[0] = '\0';
        if (!log || fs_read_file(log, 64u << 20, &text, NULL, NULL) < 0)
                return;
        const char *p = strstr(text, "benchd-bind: tenant ");
        const char *on = p ? strstr(p, " on ") : NULL;
        if (!on)
                return;
        on += 4;
        size_t len = strcspn(on, "\n");
        /* its cgroup's path is for the log, not the table */
        const char *paren = memchr(on, '(', len);
        if (paren && paren > on)
                len = (size_t)(paren - on - 1);
        _cleanup_free_ char *line = xstrndup(on, len);
        str_sanitize(buf, n, line, "?");
}

void tenants_load(struct bd_store *s, const struct bd_run *r, const struct bd_trial *trials, int n,
                  struct tenants_model *m)
{
        _cleanup_json_ cJSON *config = cJSON_Parse(r->config ? r->config : "{}");
        const struct workload *w = run_workload(r);
        const char *section = w ? w->section : r->workload;
        bool bench = json_int(json_get(config, section), "benchmark_steps", 0) > 0;
        enum tv_kind kind = tv_kind_of(r->workload, !bench);
        *m = (struct tenants_model){ .n = n, .rounds = r->ntrials / n, .time = kind == TV_TIME_TO_TRAIN };
        m->unit = tv_unit(r->workload, kind);
        m->higher_better = !m->time && !(w && w->result == RESULT_THROUGHPUT && !w->higher_is_better);
        m->tolerance = json_num(config, "tenant_tolerance", 0.1);
        m->rows = xcalloc((size_t)r->ntrials + 1, sizeof(*m->rows));
        m->round = xcalloc((size_t)m->rounds + 1, sizeof(*m->round));
        for (int i = 0; i < m->rounds * n; i++) {
                struct tenant_row *row = &m->rows[i];
                struct trial_value v;
                trial_value_load(s, r, &trials[i], kind, &v);
                *row = (struct tenant_row){ .round = i / n + 1, .tenant = i % n, .trial = trials[i].trial,
                                            .has_value = v.outcome == TV_VALUE, .value = v.value,
                                            .outcome = tv_outcome_name(v.outcome) };
                STR_COPY(row->why, v.why);
                tenant_where(r, &trials[i], row->where, sizeof(row->where));
                trial_value_release(&v);
        }
        tenants_compute(m);
}


/* health-report.c: the last verdict benchctl health gave this node
 * (health-report.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "health-report.h"
#include "strutil.h"

static const char *const verdicts[] = { "ok", "degraded", "failed" };

/* A string field: present (required, or NULL), a string of printable
 * UTF-8 without control characters, shorter than size */
static int get_str(const cJSON *j, const char *key, const char *where, bool required, char *dst, size_t size,
                   struct bd_err *err)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
        dst[0] = '\0';
        if (!v)
                return required ? bd_err_set(err, -EINVAL, "%s'%s' is missing", where, key) : 0;
        if (!cJSON_IsString(v))
                return bd_err_set(err, -EINVAL, "%s'%s' must be a string", where, key);
        size_t n = strlen(v->valuestring);
        if (n >= size)
                return bd_err_set(err, -EINVAL, "%s'%s' is longer than %zu bytes", where, key, size - 1);
        char clean[300];
        if (str_sanitize(clean, sizeof(clean), v->valuestring, "?") || strchr(v->valuestring, '\t'))
                return bd_err_set(err, -EINVAL, "%s'%s' holds a control character or is not UTF-8", where, key);
        memcpy(dst, v->valuestring, n + 1);
        return 0;
}

/* A figure: a number from 0 to max, or null (NAN: the check failed) */
static int get_figure(const cJSON *j, const char *key, const char *where, double max, double *ret, struct bd_err *err)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
        if (!v)
                return bd_err_set(err, -EINVAL, "%s'%s' is missing", where, key);
        if (cJSON_IsNull(v)) {
                *ret = NAN;
                return 0;
        }
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > max)
                return bd_err_set(err, -EINVAL, "%s'%s' must be a number from 0 to %g, or null", where, key, max);
        *ret = v->valuedouble;
        return 0;
}

/* Only the fields named, each once */
static int known_fields(const cJSON *j, const char *where, const char *const *names, struct bd_err *err)
{
        for (const cJSON *e = j->child; e; e = e->next) {
                for (const cJSON *o = j->child; o != e; o = o->next)
                        if (e->string && o->string && streq(e->string, o->string))
                                return bd_err_set(err, -EINVAL, "%sfield '%s' given twice", where, e->string);
                bool ok = false;
                for (const char *const *n = names; *n && !ok; n++)
                        ok = e->string && streq(e->string, *n);
                if (!ok) {
                        char clean[64];
                        str_sanitize(clean, sizeof(clean), e->string ? e->string : "", "?");
                        return bd_err_set(err, -EINVAL, "%sunknown field '%s'", where, clean);
                }
        }
        return 0;
}

static int parse_into(const cJSON *j, struct health_report *r, struct bd_err *err)
{
        static const char *const top[] = { "system", "verdict", "checks", "findings", "allreduce", "trainer",
                                           "received", NULL };
        if (!cJSON_IsObject(j))
                return bd_err_set(err, -EINVAL, "a report is a JSON object");
        if (known_fields(j, "", top, err) < 0 || get_str(j, "system", "", true, r->system, sizeof(r->system), err) < 0)
                return -EINVAL;
        char verdict[16];
        if (get_str(j, "verdict", "", true, verdict, sizeof(verdict), err) < 0)
                return -EINVAL;
        r->verdict = -1;
        for (int i = 0; i < 3; i++)
                if (streq(verdict, verdicts[i]))
                        r->verdict = i;
        if (r->verdict < 0)
                return bd_err_set(err, -EINVAL, "'verdict' must be ok, degraded or failed");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "checks");
        if (!cJSON_IsNumber(c) || c->valuedouble < 0 || c->valuedouble > 1e6 || c->valuedouble != (long)c->valuedouble)
                return bd_err_set(err, -EINVAL, "'checks' must be a whole number from 0 to 1000000");
        r->checks = (long)c->valuedouble;

        const cJSON *fs = cJSON_GetObjectItemCaseSensitive(j, "findings"), *e;
        if (fs && !cJSON_IsArray(fs))
                return bd_err_set(err, -EINVAL, "'findings' must be an array");
        if (cJSON_GetArraySize(fs) > HEALTH_REPORT_MAX)
                return bd_err_set(err, -EINVAL, "'findings' holds more than %d", HEALTH_REPORT_MAX);
        r->findings = xcalloc((size_t)cJSON_GetArraySize(fs) + 1, sizeof(*r->findings));
        static const char *const finding_keys[] = { "level", "check", NULL };
        cJSON_ArrayForEach(e, fs) {
                struct health_report_finding *f = &r->findings[r->nfindings];
                char where[48];
                snprintf(where, sizeof(where), "findings[%d]: ", r->nfindings);
                if (!cJSON_IsObject(e))
                        return bd_err_set(err, -EINVAL, "%sa finding is an object", where);
                if (known_fields(e, where, finding_keys, err) < 0 ||
                    get_str(e, "level", where, true, f->level, sizeof(f->level), err) < 0 ||
                    get_str(e, "check", where, true, f->check, sizeof(f->check), err) < 0)
                        return -EINVAL;
                if (!streq(f->level, "degraded") && !streq(f->level, "failed"))
                        return bd_err_set(err, -EINVAL, "%s'level' must be degraded or failed", where);
                r->nfindings++;
        }

        const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "allreduce");
        if (a) {
                static const char *const keys[] = { "inside_gbps", "pairs", NULL };
                if (!cJSON_IsObject(a))
                        return bd_err_set(err, -EINVAL, "'allreduce' must be an object");
                if (known_fields(a, "allreduce: ", keys, err) < 0)
                        return -EINVAL;
                if (cJSON_GetObjectItemCaseSensitive(a, "inside_gbps")) {
                        r->has_inside = true;
                        if (get_figure(a, "inside_gbps", "allreduce: ", 1e6, &r->inside_gbps, err) < 0)
                                return -EINVAL;
                }
                const cJSON *ps = cJSON_GetObjectItemCaseSensitive(a, "pairs");
                if (ps && !cJSON_IsArray(ps))
                        return bd_err_set(err, -EINVAL, "allreduce: 'pairs' must be an array");
                if (cJSON_GetArraySize(ps) > HEALTH_REPORT_MAX)
                        return bd_err_set(err, -EINVAL, "allreduce: 'pairs' holds more than %d", HEALTH_REPORT_MAX);
                r->pairs = xcalloc((size_t)cJSON_GetArraySize(ps) + 1, sizeof(*r->pairs));
                static const char *const pair_keys[] = { "with", "gbps", NULL };
                cJSON_ArrayForEach(e, ps) {
                        struct health_report_pair *p = &r->pairs[r->npairs];
                        char where[48];
                        snprintf(where, sizeof(where), "allreduce: pairs[%d]: ", r->npairs);
                        if (!cJSON_IsObject(e))
                                return bd_err_set(err, -EINVAL, "%sa pair is an object", where);
                        if (known_fields(e, where, pair_keys, err) < 0 ||
                            get_str(e, "with", where, true, p->with, sizeof(p->with), err) < 0 ||
                            get_figure(e, "gbps", where, 1e6, &p->gbps, err) < 0)
                                return -EINVAL;
                        if (!p->with[0] || streq(p->with, "self"))
                                return bd_err_set(err, -EINVAL, "%s'with' is empty or \"self\"", where);
                        /* one series a partner in the metrics */
                        for (int k = 0; k < r->npairs; k++)
                                if (streq(r->pairs[k].with, p->with))
                                        return bd_err_set(err, -EINVAL, "%s'with' names a partner twice", where);
                        r->npairs++;
                }
        }

        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "trainer");
        if (t) {
                static const char *const keys[] = { "benchmark", "unit", "rate", NULL };
                if (!cJSON_IsObject(t))
                        return bd_err_set(err, -EINVAL, "'trainer' must be an object");
                r->has_trainer = true;
                if (known_fields(t, "trainer: ", keys, err) < 0 ||
                    get_str(t, "benchmark", "trainer: ", true, r->benchmark, sizeof(r->benchmark), err) < 0 ||
                    get_str(t, "unit", "trainer: ", true, r->unit, sizeof(r->unit), err) < 0 ||
                    get_figure(t, "rate", "trainer: ", 1e12, &r->rate, err) < 0)
                        return -EINVAL;
        }
        const cJSON *when = cJSON_GetObjectItemCaseSensitive(j, "received");
        if (when && (!cJSON_IsNumber(when) || !isfinite(when->valuedouble) || when->valuedouble < 0 ||
                     when->valuedouble > 1e11))
                return bd_err_set(err, -EINVAL, "'received' must be seconds since the epoch");
        r->received = when ? when->valuedouble : 0;
        return 0;
}

int health_report_parse(const cJSON *j, struct health_report *ret, struct bd_err *err)
{
        struct health_report r = { 0 };
        if (parse_into(j, &r, err) < 0) {
                health_report_release(&r);
                return -EINVAL;
        }
        *ret = r;
        return 0;
}

static cJSON *figure(double v)
{
        return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

cJSON *health_report_json(const struct health_report *r)
{
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "system", r->system);
        cJSON_AddStringToObject(o, "verdict", verdicts[r->verdict]);
        cJSON_AddNumberToObject(o, "checks", (double)r->checks);
        cJSON *fs = cJSON_AddArrayToObject(o, "findings");
        for (int i = 0; i < r->nfindings; i++) {
                cJSON *f = cJSON_CreateObject();
                cJSON_AddStringToObject(f, "level", r->findings[i].level);
                cJSON_AddStringToObject(f, "check", r->findings[i].check);
                cJSON_AddItemToArray(fs, f);
        }
        if (r->has_inside || r->npairs) {
                cJSON *a = cJSON_AddObjectToObject(o, "allreduce");
                if (r->has_inside)
                        cJSON_AddItemToObject(a, "inside_gbps", figure(r->inside_gbps));
                cJSON *ps = cJSON_AddArrayToObject(a, "pairs");
                for (int i = 0; i < r->npairs; i++) {
                        cJSON *p = cJSON_CreateObject();
                        cJSON_AddStringToObject(p, "with", r->pairs[i].with);
                        cJSON_AddItemToObject(p, "gbps", figure(r->pairs[i].gbps));
                        cJSON_AddItemToArray(ps, p);
                }
        }
        if (r->has_trainer) {
                cJSON *t = cJSON_AddObjectToObject(o, "trainer");
                cJSON_AddStringToObject(t, "benchmark", r->benchmark);
                cJSON_AddStringToObject(t, "unit", r->unit);
                cJSON_AddItemToObject(t, "rate", figure(r->rate));
        }
        cJSON_AddNumberToObject(o, "received", r->received);
        return o;
}

void health_report_release(struct health_report *r)
{
        free(r->findings);
        free(r->pairs);
        *r = (struct health_report){ 0 };
}

void health_report_metrics(const struct health_report *r, struct bd_buf *out)
{
        metrics_family(out, "health_verdict", "gauge",
                       "The last verdict benchctl health gave this node: 0 ok, 1 degraded, 2 failed.");
        metrics_sample(out, "health_verdict", r->verdict, 1, "system", r->system);
        metrics_family(out, "health_report_time_seconds", "gauge", "When benchd received that verdict.");
        metrics_sample(out, "health_report_time_seconds", r->received, 0);
        metrics_family(out, "health_checks", "gauge", "The checks that verdict ran on this node.");
        metrics_sample(out, "health_checks", (double)r->checks, 0);
        metrics_family(out, "health_findings", "gauge", "Its findings, by level and check.");
        for (int i = 0; i < r->nfindings; i++) {
                int n = 0;
                bool first = true;
                for (int k = 0; k < r->nfindings; k++) {
                        bool same = streq(r->findings[k].level, r->findings[i].level) &&
                                    streq(r->findings[k].check, r->findings[i].check);
                        first &= !(same && k < i);
                        n += same;
                }
                if (first)
                        metrics_sample(out, "health_findings", n, 2, "level", r->findings[i].level, "check",
                                       r->findings[i].check);
        }
        if (r->has_inside || r->npairs) {
                metrics_family(out, "health_allreduce_bus_gbps", "gauge",
                               "Bus bandwidth of health's allreduce inside this node (with=\"self\") and with each "
                               "partner, GB/s (NaN: it failed).");
                if (r->has_inside)
                        metrics_sample(out, "health_allreduce_bus_gbps", r->inside_gbps, 1, "with", "self");
                for (int i = 0; i < r->npairs; i++)
                        metrics_sample(out, "health_allreduce_bus_gbps", r->pairs[i].gbps, 1, "with",
                                       r->pairs[i].with);
        }
        if (r->has_trainer) {
                metrics_family(out, "health_trainer_rate", "gauge",
                               "The rate of health's trainer check on this node alone (NaN: it failed).");
                metrics_sample(out, "health_trainer_rate", r->rate, 2, "benchmark", r->benchmark, "unit", r->unit);
        }
}

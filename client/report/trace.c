/* trace.c: merging and breaking down a trial's step traces (trace.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fs.h"
#include "json.h"
#include "macro.h"
#include "trace.h"

const char *const trace_phase_names[_TP_MAX] = { "data", "forward", "backward", "allreduce wait", "optimizer" };

#define MAX_STEP_SLOTS 4096

struct step_acc {
        double step, phase[_TP_MAX];
        double b0, b1;                  /* the backward's span */
        bool have_step, have_back;
};

static int phase_of(const char *name)
{
        for (int i = 0; i < _TP_MAX; i++)
                if (streq(name, trace_phase_names[i]))
                        return i;
        return -1;
}

/* The step slots of the events: steps are numbered from 1; kept ones are
 * the last, so slot = step - first step kept. */
static int read_events(const cJSON *events, struct trace_rank *r, struct bd_err *err)
{
        double first = INFINITY;
        const cJSON *e;
        int i = 0;
        cJSON_ArrayForEach(e, events) {
                const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts"), *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
                const cJSON *step = json_get(cJSON_GetObjectItemCaseSensitive(e, "args"), "step");
                if (!cJSON_IsObject(e) || !cJSON_IsNumber(ts) || !cJSON_IsNumber(dur) || dur->valuedouble < 0)
                        return bd_err_set(err, -EINVAL, "event %d: no number ts and dur", i);
                if (cJSON_IsNumber(step) && step->valuedouble < first)
                        first = step->valuedouble;
                i++;
        }
        if (!isfinite(first))
                return 0;
        struct step_acc *acc = xcalloc(MAX_STEP_SLOTS, sizeof(*acc));
        /* buckets need their step's backward: a second pass */
        for (int pass = 0; pass < 2; pass++)
                cJSON_ArrayForEach(e, events) {
                        const char *name = json_str(e, "name", "");
                        const cJSON *step = json_get(cJSON_GetObjectItemCaseSensitive(e, "args"), "step");
                        if (!cJSON_IsNumber(step) || step->valuedouble - first >= MAX_STEP_SLOTS)
                                continue;
                        struct step_acc *a = &acc[(int)(step->valuedouble - first)];
                        double t0 = json_num(e, "ts", 0) / 1e3, d = json_num(e, "dur", 0) / 1e3;
                        bool bucket = streq(json_str(e, "cat", ""), "allreduce");
                        if (pass == 0 && streq(name, "step")) {
                                a->step = d;
                                a->have_step = true;
                        } else if (pass == 0 && !bucket && phase_of(name) >= 0) {
                                a->phase[phase_of(name)] += d;
                                if (phase_of(name) == TP_BACKWARD) {
                                        a->b0 = t0;
                                        a->b1 = t0 + d;
                                        a->have_back = true;
                                }
                        } else if (pass == 1 && bucket && a->have_step) {
                                r->bucket_ms += d;
                                r->buckets++;
                                double lo = fmax(t0, a->b0), hi = fmin(t0 + d, a->b1);
                                if (a->have_back && hi > lo)
                                        r->hidden_ms += hi - lo;
                        }
                }
        for (int s = 0; s < MAX_STEP_SLOTS; s++) {
                if (!acc[s].have_step)
                        continue;
                r->steps++;
                r->step_ms += acc[s].step;
                for (int p = 0; p < _TP_MAX; p++)
                        r->phase_ms[p] += acc[s].phase[p];
        }
        if (r->steps) {
                r->step_ms /= r->steps;
                for (int p = 0; p < _TP_MAX; p++)
                        r->phase_ms[p] /= r->steps;
                r->bucket_ms /= r->steps;
                r->hidden_ms /= r->steps;
        }
        free(acc);
        return 0;
}

/* A rank's file, parsed (*ret_json, the caller's to delete) and read. */
static int read_rank(const char *text, size_t len, cJSON **ret_json, struct trace_rank *ret, struct bd_err *err)
{
        memset(ret, 0, sizeof(*ret));
        *ret_json = cJSON_ParseWithLength(text, len);
        if (!*ret_json)
                return bd_err_set(err, -EINVAL, "not JSON");
        const cJSON *events = cJSON_GetObjectItemCaseSensitive(*ret_json, "traceEvents");
        if (!cJSON_IsArray(events))
                return bd_err_set(err, -EINVAL, "no traceEvents array");
        ret->rank = (int)json_int(json_get(*ret_json, "otherData"), "rank", 0);
        return read_events(events, ret, err);
}

int trace_read_rank(const char *text, size_t len, struct trace_rank *ret, struct bd_err *err)
{
        _cleanup_json_ cJSON *j = NULL;
        return read_rank(text, len, &j, ret, err);
}

int trace_merge(const char *base, struct trace_summary *s, struct bd_err *err)
{
        memset(s, 0, sizeof(*s));
        _cleanup_json_ cJSON *all = cJSON_CreateArray();
        for (int rank = 0;; rank++) {
                _cleanup_free_ char *path = xasprintf("%s.rank%d.json", base, rank), *text = NULL;
                size_t len;
                int r = fs_read_file(path, 1u << 30, &text, &len, NULL);
                if (r == -ENOENT)
                        break;
                if (r < 0)
                        return bd_err_set(err, r, "%s: %s", path, strerror(-r));
                struct trace_rank tr;
                struct bd_err e;
                _cleanup_json_ cJSON *j = NULL;
                if (read_rank(text, len, &j, &tr, &e) < 0)
                        return bd_err_set(err, -EINVAL, "%s: %s", path, e.msg);
                cJSON *ev = cJSON_DetachItemFromObjectCaseSensitive(j, "traceEvents"), *x;
                /* the rank's process named for the viewers */
                cJSON *meta = cJSON_CreateObject(), *args = cJSON_CreateObject();
                cJSON_AddStringToObject(meta, "name", "process_name");
                cJSON_AddStringToObject(meta, "ph", "M");
                cJSON_AddNumberToObject(meta, "pid", rank);
                _cleanup_free_ char *pname = xasprintf("rank %d", rank);
                cJSON_AddStringToObject(args, "name", pname);
                cJSON_AddItemToObject(meta, "args", args);
                cJSON_AddItemToArray(all, meta);
                while ((x = cJSON_DetachItemFromArray(ev, 0)))
                        cJSON_AddItemToArray(all, x);
                cJSON_Delete(ev);
                s->ranks++;
                s->steps = s->ranks == 1 || tr.steps < s->steps ? tr.steps : s->steps;
                s->step_ms += tr.step_ms;
                for (int p = 0; p < _TP_MAX; p++)
                        s->phase_ms[p] += tr.phase_ms[p];
                s->bucket_ms += tr.bucket_ms;
                s->hidden_ms += tr.hidden_ms;
                if (s->ranks == 1 || tr.step_ms > s->slowest_ms) {
                        s->slowest = rank;
                        s->slowest_ms = tr.step_ms;
                }
        }
        if (!s->ranks)
                return 0;
        s->step_ms /= s->ranks;
        double sum = 0;
        for (int p = 0; p < _TP_MAX; p++)
                sum += s->phase_ms[p] /= s->ranks;
        s->other_ms = s->step_ms - sum;
        s->bucket_ms /= s->ranks;
        s->hidden_ms /= s->ranks;
        _cleanup_json_ cJSON *doc = cJSON_CreateObject();
        cJSON_AddItemToObject(doc, "traceEvents", TAKE_PTR(all));
        cJSON_AddStringToObject(doc, "displayTimeUnit", "ms");
        _cleanup_free_ char *text = cJSON_PrintUnformatted(doc);
        _cleanup_free_ char *out = xasprintf("%s.json", base);
        int r = fs_write_atomic(out, text, strlen(text), 0644, err);
        return r < 0 ? r : 1;
}

void trace_summary_text(const struct trace_summary *s, struct bd_buf *out)
{
        double st = s->step_ms > 0 ? s->step_ms : 1;
        buf_printf(out, "step %.1f ms:", s->step_ms);
        for (int p = 0; p < _TP_MAX; p++)
                buf_printf(out, " %s %.1f%%,", trace_phase_names[p], 100 * s->phase_ms[p] / st);
        buf_printf(out, " other %.1f%%", 100 * s->other_ms / st);
        if (s->bucket_ms > 0)
                buf_printf(out, "; allreduce %.1f ms a step, %.0f%% of it hidden by the backward", s->bucket_ms,
                           100 * s->hidden_ms / s->bucket_ms);
        if (s->ranks > 1)
                buf_printf(out, "; slowest rank %d (%.1f ms a step)", s->slowest, s->slowest_ms);
}

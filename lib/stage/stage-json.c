/* stage-json.c: a job's progress and problems as JSON, one spelling for
 * benchctl stage --json and benchd's /v1/datasets. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "json.h"
#include "macro.h"
#include "stage.h"

void stage_record_progress(const struct bd_stage_record *r, struct bd_stage_progress *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->from_record = true;
        ret->state = r->state;
        ret->eta = -1;
        ret->files_total = r->files;
        ret->bytes_total = r->bytes;
        ret->files_copied = r->files_copied;
        ret->bytes_copied = r->bytes_copied;
        ret->files_present = r->files_present;
        ret->files_repaired = r->files_repaired;
        ret->errors = r->errors;
}

cJSON *stage_progress_json(const struct bd_stage_progress *p)
{
        bool live = !p->from_record;   /* a job's own progress, not what a state record keeps */
        /* the counters, in their order, and whether a state record keeps them */
        const struct {
                const char *key;
                uint64_t v;
                bool recorded;
        } counters[] = {
                { "files_total", p->files_total, true },        { "files_done", p->files_done, false },
                { "bytes_total", p->bytes_total, true },        { "bytes_done", p->bytes_done, false },
                { "files_copied", p->files_copied, true },      { "bytes_copied", p->bytes_copied, true },
                { "files_present", p->files_present, true },    { "files_repaired", p->files_repaired, true },
                { "files_verified", p->files_verified, false }, { "files_hashed", p->files_hashed, false },
                { "errors", p->errors, true },                  { "warnings", p->warnings, false },
        };
        cJSON *o = cJSON_CreateObject();
        if (live) {
                cJSON_AddStringToObject(o, "phase", stage_phase_name(p->phase));
                cJSON_AddNumberToObject(o, "elapsed_seconds", p->elapsed);
        }
        for (size_t i = 0; i < ARRAY_SIZE(counters); i++)
                if (live || counters[i].recorded)
                        cJSON_AddNumberToObject(o, counters[i].key, (double)counters[i].v);
        if (live) {
                cJSON_AddNumberToObject(o, "rate_bytes_per_second", isfinite(p->rate) ? p->rate : 0);
                cJSON_AddItemToObject(o, "eta_seconds", p->eta >= 0 ? cJSON_CreateNumber(p->eta) : cJSON_CreateNull());
                cJSON *methods = cJSON_AddObjectToObject(o, "copy_methods");
                for (int m = 0; m < _COPY_METHOD_MAX; m++)
                        cJSON_AddNumberToObject(methods, copy_method_name((enum bd_copy_method)m),
                                                (double)p->method_files[m]);
        }
        return o;
}

cJSON *stage_problem_json(const struct bd_stage_problem *p)
{
        cJSON *o = cJSON_CreateObject();
        _cleanup_free_ char *path = manifest_escaped(p->path);
        cJSON_AddStringToObject(o, "kind", stage_problem_name(p->kind));
        cJSON_AddStringToObject(o, "severity", stage_severity_name(p->severity));
        cJSON_AddStringToObject(o, "path", path);
        cJSON_AddStringToObject(o, "message", p->msg);
        return o;
}

cJSON *stage_problems_json(struct bd_stage *s, size_t max)
{
        const struct bd_stage_problem *pr;
        size_t n = stage_problems(s, &pr);
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 0; i < n && (max == 0 || i < max); i++)
                cJSON_AddItemToArray(a, stage_problem_json(&pr[i]));
        return a;
}

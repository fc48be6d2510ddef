/* fuzz-reader-json.c: a result file read as JSON at a path (reader.h), as
 * the mila suite writes its report: an array appended to and never closed.
 * Besides fuzz-reader.h's promises: a text that is JSON reads as cJSON reads
 * it (the value at the path, an array's last item that has it; a number, or
 * a string that is one); the same array left unclosed reads the same. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "fuzz-reader.h"

static const char spec[] =
        "{\"title\": \"fuzz\", \"program\": \"true\", \"command\": [\"{program}\"],"
        " \"result\": {\"kind\": \"throughput\", \"read\": \"json\", \"file\": \"{result}\","
        "  \"match\": {\"throughput\": \"train_item.avg\", \"accuracy\": \"eval.-1\"}}}";

static const char log_end[] = "RESULT,X,,10,benchd,2026-11-28 12:00:00 PM\n";

/* train_item.avg as the reader promises to find it, by cJSON */
static bool expected(const cJSON *j, double *ret)
{
        const cJSON *hit = NULL;
        if (cJSON_IsArray(j)) {
                const cJSON *e;
                cJSON_ArrayForEach(e, j)
                        if (cJSON_GetObjectItemCaseSensitive(e, "train_item"))
                                hit = cJSON_GetObjectItemCaseSensitive(e, "train_item");
        } else
                hit = cJSON_GetObjectItemCaseSensitive(j, "train_item");
        const cJSON *avg = cJSON_GetObjectItemCaseSensitive(hit, "avg");
        if (cJSON_IsString(avg)) {
                /* a string that is a number and nothing more (blanks after it) */
                char *end;
                errno = 0;
                double x = strtod(avg->valuestring, &end);
                if (end == avg->valuestring)
                        return false;
                end += strspn(end, " \t");
                if (*end || errno == ERANGE || !isfinite(x))
                        return false;
                *ret = x;
                return true;
        }
        if (!cJSON_IsNumber(avg) || !isfinite(avg->valuedouble))
                return false;
        *ret = avg->valuedouble;
        return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const struct workload *w = fuzz_workload("fuzz-json", spec);
        const char *text = (const char *)data;
        struct mlperf_trial t, again;
        struct reader_values v, va;
        fuzz_read(w, log_end, strlen(log_end), text, size, &t, &v);
        fuzz_check_read(w, &t, &v);
        FUZZ_CHECK(t.outcome == OUT_SUCCESS, "the log ends as a trial does: outcome %d", (int)t.outcome);
        fuzz_read(w, log_end, strlen(log_end), text, size, &again, &va);
        fuzz_same(&t, &v, &again, &va, "two reads of one file");
        reader_values_release(&va);
        cJSON *j = cJSON_ParseWithLength(text, size);
        double want;
        if (j && expected(j, &want)) {
                FUZZ_CHECK(t.converged && t.throughput == want, "JSON with train_item.avg %g read as %g (%s)", want,
                           t.throughput, t.reason);
                if (cJSON_IsArray(j) && cJSON_GetArraySize(j) > 0) {
                        /* the same array, unclosed as the mila report leaves it */
                        char *printed = cJSON_PrintUnformatted(j);
                        size_t n = strlen(printed);
                        printed[n - 1] = ',';
                        fuzz_read(w, log_end, strlen(log_end), printed, n, &again, &va);
                        FUZZ_CHECK(again.converged && again.throughput == want, "unclosed: %g, closed %g",
                                   again.throughput, want);
                        reader_values_release(&va);
                        free(printed);
                }
        } else if (j)
                FUZZ_CHECK(!t.converged, "JSON without train_item.avg gave %g", t.throughput);
        cJSON_Delete(j);
        reader_values_release(&v);
        return 0;
}

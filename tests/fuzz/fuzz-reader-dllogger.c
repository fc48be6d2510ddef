/* fuzz-reader-dllogger.c: a trial log read as NVIDIA DLLogger records
 * ("DLLL {...}" lines, reader.h), as maskrcnn-benchmark writes them. */
#include "config.h"

#include "fuzz-reader.h"

static const char spec[] =
        "{\"title\": \"fuzz\", \"program\": \"true\", \"command\": [\"{program}\"],"
        " \"result\": {\"kind\": \"throughput\", \"read\": \"dllogger\","
        "  \"match\": {\"throughput\": \"train_perf_fps\", \"accuracy\": \"BBOX_mAP\","
        "   \"accuracy_segm\": \"MASK_mAP\", \"loss\": \"loss\"}}}";

/* Lines holding the mark, counted here on their own. */
static long marked(const char *text, size_t len)
{
        long n = 0;
        for (const char *p = text, *end = text + len; p < end;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                const char *e = nl ? nl : end;
                n += memmem(p, (size_t)(e - p), "DLLL ", 5) != NULL;
                p = nl ? nl + 1 : end;
        }
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const struct workload *w = fuzz_workload("fuzz-dllogger", spec);
        const char *text = (const char *)data;
        struct mlperf_trial t, again;
        struct reader_values v, va;
        fuzz_read(w, text, size, NULL, 0, &t, &v);
        fuzz_check_read(w, &t, &v);
        FUZZ_CHECK(v.records + v.bad_records <= marked(text, size), "%ld records and %ld bad of %ld marked lines",
                   v.records, v.bad_records, marked(text, size));
        FUZZ_CHECK(v.matched <= v.records, "%ld records gave values of %ld", v.matched, v.records);
        fuzz_read(w, text, size, NULL, 0, &again, &va);
        fuzz_same(&t, &v, &again, &va, "two reads of one log");
        reader_values_release(&va);
        /* the same records as the result file: the same values */
        struct mlperf_trial f;
        static const char end[] = "RESULT,X,,10,benchd,2026-11-28 12:00:00 PM\n";
        fuzz_read(w, end, strlen(end), text, size, &f, &va);
        FUZZ_CHECK(va.records == v.records && va.tp_seen == v.tp_seen, "the file gave %ld records, the log %ld",
                   va.records, v.records);
        FUZZ_CHECK(f.outcome == OUT_SUCCESS && f.converged == (va.tp_count > 0), "a file's rate: converged %d",
                   f.converged);
        reader_values_release(&va);
        reader_values_release(&v);
        return 0;
}

/* fuzz-reader-regex.c: a trial log read by regular expressions (reader.h),
 * as GluonCV's Mask R-CNN prints it: "Speed: X samples/sec" progress lines
 * and its two-line "~~~~ Mean AP for bbox ~~~~" / "=NN.N" summaries. */
#include "config.h"

#include "fuzz-reader.h"

static const char spec[] =
        "{\"title\": \"fuzz\", \"program\": \"true\", \"command\": [\"{program}\"],"
        " \"result\": {\"kind\": \"time-to-train\", \"read\": \"regex\", \"skip\": 1,"
        "  \"targets\": [\"bbox\", \"segm\"],"
        "  \"match\": {\"step\": \"\\\\[Batch ([0-9]+)\\\\]\", \"loss\": \"RPN_Conf=([-0-9.e]+)\","
        "   \"throughput\": \"Speed: ([0-9.]+) samples/sec\","
        "   \"accuracy\": \"~~~~ Mean AP for bbox ~~~~\\n=([0-9.]+)\","
        "   \"accuracy_segm\": \"~~~~ Mean AP for segm ~~~~\\n=([0-9.]+)\"},"
        "  \"scale\": {\"accuracy\": 0.01, \"accuracy_segm\": 0.01}},"
        " \"keys\": {\"bbox\": {\"type\": \"number\", \"default\": 0.3},"
        "  \"segm\": {\"type\": \"number\", \"default\": 0.2}}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const struct workload *w = fuzz_workload("fuzz-regex", spec);
        const char *text = (const char *)data;
        struct mlperf_trial t, again;
        struct reader_values v, va;
        fuzz_read(w, text, size, NULL, 0, &t, &v);
        fuzz_check_read(w, &t, &v);
        fuzz_read(w, text, size, NULL, 0, &again, &va);
        fuzz_same(&t, &v, &again, &va, "two reads of one log");
        reader_values_release(&va);
        if (size && text[size - 1] != '\n' && !memchr(text, '\0', size)) {
                _cleanup_free_ char *nl = xmalloc(size + 1);
                memcpy(nl, text, size);
                nl[size] = '\n';
                fuzz_read(w, nl, size + 1, NULL, 0, &again, &va);
                again.lines = t.lines;
                fuzz_same(&t, &v, &again, &va, "a final newline");
                reader_values_release(&va);
        }
        reader_values_release(&v);
        return 0;
}

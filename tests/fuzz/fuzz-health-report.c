/* fuzz-health-report.c: a health report as benchctl health posts it to
 * benchd (POST /v1/health/report, daemon/health-report.h), or as benchd
 * reads it back from its state directory.
 *
 * Promises checked: a JSON text that is not a report is refused with one
 * printable line naming what is wrong, never a crash; a report taken is
 * within the stated limits (the verdict one of three, at most
 * HEALTH_REPORT_MAX findings and pairs, names printable UTF-8, figures
 * from 0 or NaN); written back as JSON it reads again to the same JSON; its
 * metrics are lines of the Prometheus text format (each sample's labels
 * quoted and escaped: no line break inside a line), one series a partner. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "buf.h"
#include "fuzz.h"
#include "health-report.h"
#include "strutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        cJSON *j = cJSON_ParseWithLength((const char *)data, size);
        if (!j)
                return 0;
        struct health_report r;
        struct bd_err err;
        if (health_report_parse(j, &r, &err) < 0) {
                FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n') && fuzz_utf8_valid(err.msg),
                           "a refusal is one printable line: '%s'", err.msg);
                cJSON_Delete(j);
                return 0;
        }
        cJSON_Delete(j);
        FUZZ_CHECK(r.verdict >= 0 && r.verdict <= 2, "verdict %d", r.verdict);
        FUZZ_CHECK(r.nfindings <= HEALTH_REPORT_MAX && r.npairs <= HEALTH_REPORT_MAX, "%d findings, %d pairs",
                   r.nfindings, r.npairs);
        FUZZ_CHECK(fuzz_utf8_valid(r.system), "system not UTF-8");
        for (int i = 0; i < r.npairs; i++) {
                FUZZ_CHECK(fuzz_utf8_valid(r.pairs[i].with) && r.pairs[i].with[0], "pair %d's name", i);
                FUZZ_CHECK(isnan(r.pairs[i].gbps) || r.pairs[i].gbps >= 0, "pair %d's figure", i);
                for (int k = 0; k < i; k++)
                        FUZZ_CHECK(!streq(r.pairs[i].with, r.pairs[k].with), "a partner twice: %s", r.pairs[i].with);
        }
        /* written back, read again: the same */
        cJSON *out = health_report_json(&r);
        char *text = cJSON_PrintUnformatted(out);
        struct health_report again;
        FUZZ_CHECK(health_report_parse(out, &again, &err) == 0, "its own JSON refused: %s", err.msg);
        cJSON *out2 = health_report_json(&again);
        char *text2 = cJSON_PrintUnformatted(out2);
        FUZZ_CHECK(streq(text, text2), "JSON round trip:\n%s\n%s", text, text2);
        /* the metrics: every line a comment or NAME{LABELS} VALUE */
        struct bd_buf m = BD_BUF_INIT;
        health_report_metrics(&r, &m);
        FUZZ_CHECK(m.s && fuzz_utf8_valid(m.s), "metrics not UTF-8");
        for (char *line = m.s, *nl; line && *line; line = nl + 1) {
                nl = strchr(line, '\n');
                FUZZ_CHECK(nl, "the metrics end without a newline");
                *nl = '\0';
                if (line[0] == '#')
                        continue;
                FUZZ_CHECK(!strncmp(line, "benchd_health_", 14), "a sample of another name: %s", line);
                const char *sp = strrchr(line, ' ');
                FUZZ_CHECK(sp && sp[1], "a sample without a value: %s", line);
                double v;
                FUZZ_CHECK(streq(sp + 1, "NaN") || str_parse_double(sp + 1, &v) == 0, "a value that is none: %s", line);
        }
        buf_release(&m);
        free(text);
        free(text2);
        cJSON_Delete(out);
        cJSON_Delete(out2);
        health_report_release(&r);
        health_report_release(&again);
        return 0;
}

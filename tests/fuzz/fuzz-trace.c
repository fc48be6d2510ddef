/* fuzz-trace.c: a rank's step trace (client/report/trace.h), as a trainer's
 * --trace writes it and benchctl report reads it back.
 *
 * Promises checked: an error with a one-line message, or a breakdown whose
 * counts and times are finite and not negative, with phases that sum to no
 * more than the steps' own time plus what overlaps (each phase is within
 * its step); the same text read twice gives the same breakdown. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *text = fuzz_str(data, size);
        struct trace_rank a, b;
        struct bd_err err = { { 0 } }, err2 = { { 0 } };
        int r = trace_read_rank(text, size, &a, &err);
        int r2 = trace_read_rank(text, size, &b, &err2);
        FUZZ_CHECK(r == r2, "read twice: %d then %d", r, r2);
        if (r < 0) {
                FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n'), "error '%s'", err.msg);
                return 0;
        }
        FUZZ_CHECK(a.steps >= 0 && a.buckets >= 0, "counts %d %d", a.steps, a.buckets);
        FUZZ_CHECK(isfinite(a.step_ms) && a.step_ms >= 0 && isfinite(a.bucket_ms) && a.bucket_ms >= 0 &&
                   isfinite(a.hidden_ms) && a.hidden_ms >= 0 && a.hidden_ms <= a.bucket_ms * (1 + 1e-9) + 1e-9,
                   "step %g, buckets %g, hidden %g", a.step_ms, a.bucket_ms, a.hidden_ms);
        for (int p = 0; p < _TP_MAX; p++)
                FUZZ_CHECK(isfinite(a.phase_ms[p]) && a.phase_ms[p] >= 0, "phase %d: %g", p, a.phase_ms[p]);
        FUZZ_CHECK(memcmp(&a, &b, sizeof(a)) == 0 || (isnan(a.step_ms) && isnan(b.step_ms)), "read twice: differs");
        return 0;
}

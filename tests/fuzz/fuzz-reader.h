/* fuzz-reader.h: what the result readers' harnesses share
 * (client/report/reader.h).
 *
 * Each harness defines its workload's "result" (READER_SPEC) and what the
 * input is: the trial log (regex, dllogger) or the result file (json, with
 * a fixed log that ends as the launch script ends a trial).  Promises
 * checked:
 *   - the outcome is success (the log has the RESULT line), incomplete or no
 *     run; the reason is empty exactly when the trial converged; converged
 *     means success and a value of the workload's kind (a throughput; a time
 *     and the targets met);
 *   - throughputs: the ones kept are those read after result.skip; their
 *     mean is finite; losses are never more than the values read;
 *   - reading is deterministic, and a final newline changes nothing.
 */
#ifndef BD_FUZZ_READER_H
#define BD_FUZZ_READER_H

#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "reader.h"
#include "workload.h"

static const struct workload *fuzz_workload(const char *name, const char *spec)
{
        struct bd_err err;
        const struct workload *w = workload_recorded(name, name, spec, &err);
        FUZZ_CHECK(w, "the harness's workload does not load: %s", err.msg);
        return w;
}

static void fuzz_read(const struct workload *w, const char *log, size_t len, const char *file, size_t flen,
                      struct mlperf_trial *t, struct reader_values *v)
{
        struct bd_err err;
        struct reader *r = reader_new(&w->reader, &err);
        FUZZ_CHECK(r, "the workload's reader does not compile: %s", err.msg);
        reader_values_init(v);
        reader_read_text(w, r, log, len, file, flen, 0.3, w->target_segm_key ? 0.2 : -1, t, v);
        reader_free(r);
}

static void fuzz_check_read(const struct workload *w, const struct mlperf_trial *t, const struct reader_values *v)
{
        FUZZ_CHECK(t->outcome == OUT_SUCCESS || t->outcome == OUT_INCOMPLETE || t->outcome == OUT_NO_RUN,
                   "outcome %d", (int)t->outcome);
        FUZZ_CHECK(memchr(t->reason, '\0', sizeof(t->reason)), "an unterminated reason");
        FUZZ_CHECK(t->converged == !t->reason[0], "converged %d with reason '%s'", t->converged, t->reason);
        FUZZ_CHECK(v->tp_count == (v->tp_seen > w->reader.skip ? v->tp_seen - w->reader.skip : 0),
                   "%d throughputs kept of %d read, skip %d", v->tp_count, v->tp_seen, w->reader.skip);
        FUZZ_CHECK(v->tp_count == 0 || isfinite(t->throughput), "throughput %g", t->throughput);
        FUZZ_CHECK(t->throughput_logged == v->tp_count, "throughput_logged %d, %d kept", t->throughput_logged,
                   v->tp_count);
        FUZZ_CHECK(v->matched >= 0 && (long)v->nloss <= v->matched + v->records + t->lines,
                   "%zu losses of %ld values read", v->nloss, v->matched);
        if (t->converged) {
                FUZZ_CHECK(t->outcome == OUT_SUCCESS, "converged without success");
                if (w->result == RESULT_THROUGHPUT)
                        FUZZ_CHECK(t->throughput_logged > 0, "a throughput result without a throughput");
                else
                        FUZZ_CHECK(t->timed && (!t->has_target || t->reached), "converged short of the target");
        }
        if (t->reached)
                FUZZ_CHECK(t->has_accuracy && t->accuracy >= t->target, "reached %g of %g", t->accuracy, t->target);
}

/* Two reads agree (the loss series compared by value). */
static void fuzz_same(const struct mlperf_trial *a, const struct reader_values *va, const struct mlperf_trial *b,
                      const struct reader_values *vb, const char *what)
{
        FUZZ_CHECK(memcmp(a, b, sizeof(*a)) == 0, "%s: the trials differ", what);
        FUZZ_CHECK(va->nloss == vb->nloss && va->tp_seen == vb->tp_seen && va->matched == vb->matched &&
                   (va->nloss == 0 || memcmp(va->loss, vb->loss, va->nloss * sizeof(*va->loss)) == 0),
                   "%s: the values read differ", what);
}

#endif

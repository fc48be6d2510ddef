/* fuzz-mlperf.c: MLPerf trial logs (client/report/mlperf.h).
 *
 * The input is a trial log, parsed without a target, with one, and with a
 * segm target too.  Promises checked (mlperf.h's invariants):
 *   - every line holding ":::MLLOG" (after an mpirun tag, which may end in
 *     ':' itself) is counted in mllog_lines (counted here independently),
 *     and the unparseable and other ranks' lines are among them; the kept
 *     bad line numbers are such lines, in order;
 *   - the parser's outcomes are success, aborted, incomplete or no run;
 *   - timed means run_stop not before run_start and time_to_train their
 *     difference; converged means success and timed, with the accuracy at
 *     the target when there is one; the reason is empty exactly when the
 *     trial converged;
 *   - epochs completed are never more than epochs reached;
 *   - parsing is deterministic, and a final newline changes nothing;
 *   - five copies of the trial score as MLPerf says: all or none converged.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "mlperf.h"

#define MARK ":::MLLOG"

/* The length of an mpirun --tag-output tag ("[1,0]<stdout>:", "[1,3]:")
 * at the start of a line: the mark counts after it. */
static size_t tag_len(const char *p, size_t n)
{
        size_t i = 1;
        if (n == 0 || p[0] != '[')
                return 0;
        while (i < n && p[i] >= '0' && p[i] <= '9')
                i++;
        if (i == n || p[i++] != ',')
                return 0;
        while (i < n && p[i] >= '0' && p[i] <= '9')
                i++;
        if (i == n || p[i++] != ']')
                return 0;
        if (i < n && p[i] == '<') {
                const char *gt = memchr(p + i, '>', n - i);
                if (!gt || (size_t)(gt - p) + 1 == n || gt[1] != ':')
                        return 0;
                i = (size_t)(gt - p) + 2;
        }
        return i;
}

/* Lines holding the mark, and whether line number n (1-based) does. */
static long marked_lines(const char *text, size_t len, long n, bool *ret_marked)
{
        long count = 0, lineno = 0;
        const char *p = text, *end = text + len;
        *ret_marked = false;
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));
                const char *le = eol ? eol : end;
                size_t tag = tag_len(p, (size_t)(le - p));
                bool marked = memmem(p + tag, (size_t)(le - p) - tag, MARK, strlen(MARK)) != NULL;
                lineno++;
                count += marked;
                if (lineno == n)
                        *ret_marked = marked;
                p = eol ? eol + 1 : end;
        }
        return count;
}

static void check_trial(const struct mlperf_trial *t, const char *text, size_t len)
{
        bool marked;
        long marks = marked_lines(text, len, 0, &marked);
        FUZZ_CHECK(t->mllog_lines == marks, "mllog_lines %ld, the log has %ld lines with the mark", t->mllog_lines,
                   marks);
        FUZZ_CHECK(t->mllog_lines <= t->lines, "%ld MLLOG lines of %ld", t->mllog_lines, t->lines);
        FUZZ_CHECK(t->bad_lines >= 0 && t->other_rank_lines >= 0 &&
                   t->bad_lines + t->other_rank_lines <= t->mllog_lines,
                   "%ld bad and %ld other ranks' lines, %ld MLLOG lines", t->bad_lines, t->other_rank_lines,
                   t->mllog_lines);
        FUZZ_CHECK(t->first_bad_line == (t->bad_lines ? t->bad_at[0] : 0), "first_bad_line %ld, bad_at[0] %ld",
                   t->first_bad_line, t->bad_at[0]);
        for (long i = 0; i < t->bad_lines && i < MLPERF_BAD_KEPT; i++) {
                FUZZ_CHECK(t->bad_at[i] >= 1 && t->bad_at[i] <= t->lines && (i == 0 || t->bad_at[i] > t->bad_at[i - 1]),
                           "bad_at[%ld] = %ld", i, t->bad_at[i]);
                marked_lines(text, len, t->bad_at[i], &marked);
                FUZZ_CHECK(marked, "bad line %ld has no MLLOG mark", t->bad_at[i]);
        }
        FUZZ_CHECK(t->outcome == OUT_SUCCESS || t->outcome == OUT_ABORTED || t->outcome == OUT_INCOMPLETE ||
                   t->outcome == OUT_NO_RUN, "outcome %d from the parser", (int)t->outcome);
        FUZZ_CHECK(memchr(t->reason, '\0', sizeof(t->reason)) && memchr(t->benchmark, '\0', sizeof(t->benchmark)),
                   "an unterminated string");
        if (t->timed) {
                FUZZ_CHECK(t->run_stop_ms >= t->run_start_ms, "timed, but run_stop %g before run_start %g",
                           t->run_stop_ms, t->run_start_ms);
                FUZZ_CHECK(t->time_to_train == (t->run_stop_ms - t->run_start_ms) / 1000.0,
                           "time_to_train %g, run %g to %g ms", t->time_to_train, t->run_start_ms, t->run_stop_ms);
        } else
                FUZZ_CHECK(t->time_to_train == 0, "not timed, time_to_train %g", t->time_to_train);
        bool allreduce = mlperf_is_bandwidth(t->benchmark) || t->ar_sizes > 0;
        if (t->converged) {
                FUZZ_CHECK(t->outcome == OUT_SUCCESS && t->timed, "converged without a timed success");
                if (allreduce)
                        FUZZ_CHECK(t->ar_sizes > 0 && t->ar_wrong == 0, "allreduce converged with %lld wrong",
                                   t->ar_wrong);
                else if (t->has_target)
                        FUZZ_CHECK(t->has_accuracy && t->accuracy >= t->target, "converged below the target");
        }
        FUZZ_CHECK(t->converged == !t->reason[0], "converged %d with reason '%s'", t->converged, t->reason);
        FUZZ_CHECK(t->epochs_completed <= t->epochs, "%d epochs completed of %d reached", t->epochs_completed,
                   t->epochs);
}

static void check_score(const struct mlperf_trial *t)
{
        struct mlperf_trial five[5];
        struct mlperf_score s;
        const char *workload = t->benchmark[0] ? t->benchmark : "ssd";
        for (int i = 0; i < 5; i++)
                five[i] = *t;
        mlperf_score(five, 5, workload, &s);
        FUZZ_CHECK(s.trials == 5 && s.converged == (t->converged ? 5 : 0), "%d of 5 identical trials converged",
                   s.converged);
        FUZZ_CHECK(!s.scored || s.valid, "scored but not valid");
        FUZZ_CHECK(s.scored || s.reason[0], "no score and no reason");
        if (!mlperf_is_bandwidth(workload) && isfinite(t->time_to_train)) {
                double want = t->time_to_train / 60.0;
                FUZZ_CHECK(s.scored == t->converged, "five converged trials without a score: %s", s.reason);
                FUZZ_CHECK(!s.scored || fabs(s.score - want) <= 1e-12 * fabs(want),
                           "the olympic mean of five %.17g is %.17g", want, s.score);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *text = (const char *)data;
        struct mlperf_trial t, again;
        mlperf_parse_text(text, size, -1, &t);
        check_trial(&t, text, size);
        check_score(&t);
        mlperf_parse_text(text, size, -1, &again);
        FUZZ_CHECK(memcmp(&t, &again, sizeof(t)) == 0, "two parses of one log differ");
        if (size == 0 || text[size - 1] != '\n') {
                _cleanup_free_ char *nl = xmalloc(size + 1);
                memcpy(nl, text, size);
                nl[size] = '\n';
                mlperf_parse_text(nl, size + 1, -1, &again);
                FUZZ_CHECK(memcmp(&t, &again, sizeof(t)) == 0 || size == 0, "a final newline changed the trial");
        }
        mlperf_parse_text(text, size, 0.23, &t);
        check_trial(&t, text, size);
        check_score(&t);
        mlperf_parse_text_segm(text, size, 0.377, 0.339, &t);
        check_trial(&t, text, size);
        return 0;
}

/* test-mlperf.c: reading MLPerf log lines back and MLPerf's scoring rules. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "mlperf.h"
#include "tap.h"

/* An SSD-like trial: run_start at t0, one epoch per `per_epoch` seconds,
 * eval_accuracy after each epoch from `accs`, run_stop (status) unless cut. */
static char *ssd_log(double t0, double per_epoch, const double *accs, int epochs, const char *status, const char *prefix)
{
        struct bd_buf b = BD_BUF_INIT;
        long long ms = (long long)(t0 * 1000);
#define L(fmt, ...) buf_printf(&b, "%s:::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, " fmt "}\n", prefix, ms, __VA_ARGS__)
        buf_puts(&b, "STARTING TIMING RUN AT 2026-11-22 01:00:00 PM\n");
        L("\"event_type\": \"POINT_IN_TIME\", \"key\": \"submission_benchmark\", \"value\": \"%s\", \"metadata\": {}", "ssd");
        L("\"event_type\": \"POINT_IN_TIME\", \"key\": \"train_samples\", \"value\": %d, \"metadata\": {}", 1000);
        L("\"event_type\": \"INTERVAL_START\", \"key\": \"run_start\", \"value\": %s, \"metadata\": {}", "null");
        for (int e = 1; e <= epochs; e++) {
                L("\"event_type\": \"INTERVAL_START\", \"key\": \"epoch_start\", \"value\": null, \"metadata\": {\"epoch_num\": %d}", e);
                buf_printf(&b, "epoch %d loss 3.2 lr 0.1\n", e);
                ms += (long long)(per_epoch * 1000);
                L("\"event_type\": \"INTERVAL_END\", \"key\": \"epoch_stop\", \"value\": null, \"metadata\": {\"epoch_num\": %d}", e);
                L("\"event_type\": \"POINT_IN_TIME\", \"key\": \"eval_accuracy\", \"value\": %.4f, \"metadata\": {\"epoch_num\": %d}",
                  accs[e - 1], e);
        }
        if (status)
                L("\"event_type\": \"INTERVAL_END\", \"key\": \"run_stop\", \"value\": null, \"metadata\": {\"status\": \"%s\"}",
                  status);
#undef L
        return buf_detach(&b);
}

static const double accs[] = { 0.10, 0.18, 0.24 };

static void test_parse(void)
{
        struct mlperf_trial t;
        char *log = ssd_log(1000, 20, accs, 3, "success", "");
        mlperf_parse_text(log, 0.23, &t);
        is_str(trial_outcome_name(t.outcome), "success", "success log");
        ok(fabs(t.time_to_train - 60) < 1e-9, "time to train = run_stop - run_start = 60 s");
        is_int(t.epochs, 3, "three epochs");
        ok(t.has_accuracy && fabs(t.accuracy - 0.24) < 1e-12, "last eval_accuracy");
        ok(t.converged, "0.24 reaches the 0.23 target");
        ok(fabs(t.throughput - 50) < 1e-9, "throughput = train_samples x epochs / time = 50/s");
        is_int(t.bad_lines, 0, "no unparseable line");
        is_str(t.benchmark, "ssd", "benchmark name");
        free(log);

        log = ssd_log(1000, 20, accs, 3, "success", "");
        mlperf_parse_text(log, 0.30, &t);
        ok(!t.converged, "0.24 misses a 0.30 target");
        like(t.reason, "below the target", "  and says so");
        free(log);

        log = ssd_log(1000, 20, accs, 2, NULL, "");
        mlperf_parse_text(log, 0.23, &t);
        is_str(trial_outcome_name(t.outcome), "incomplete", "run_start without run_stop is incomplete");
        ok(!t.converged && t.time_to_train == 0, "  never a success, no time");
        free(log);

        log = ssd_log(1000, 20, accs, 3, "aborted", "");
        mlperf_parse_text(log, 0.23, &t);
        is_str(trial_outcome_name(t.outcome), "aborted", "run_stop aborted");
        ok(!t.converged, "  does not converge");
        free(log);

        /* mpirun --tag-output prefixes, garbage, a broken MLLOG line */
        log = ssd_log(1000, 20, accs, 3, "success", "[1,0]<stdout>:");
        char *mixed = xasprintf("garbage line\n:::MLLOG {\"namespace\": \"\", \"time_ms\": oops}\n%s", log);
        mlperf_parse_text(mixed, 0.23, &t);
        ok(t.outcome == OUT_SUCCESS && t.converged, "tag-output prefixed lines are read");
        is_int(t.bad_lines, 1, "a broken MLLOG line is counted");
        is_int(t.first_bad_line, 2, "  with its line number");
        free(log);
        free(mixed);

        log = ssd_log(1000, 20, accs, 1, "success", "");
        char *twice = xasprintf("%s%s", log, log);
        mlperf_parse_text(twice, 0.05, &t);
        is_int(t.duplicate_keys, 2, "a second run_start and run_stop are anomalies");
        free(log);
        free(twice);

        mlperf_parse_text("no mllog at all\n", -1, &t);
        is_str(trial_outcome_name(t.outcome), "no run", "a log without run_start");
        mlperf_parse_file("/nonexistent/trial.log", -1, &t);
        is_str(trial_outcome_name(t.outcome), "missing", "a missing log");
        like(t.reason, "/nonexistent/trial.log", "  named");

        const char *ar =
                ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1000, \"event_type\": \"POINT_IN_TIME\", \"key\": \"submission_benchmark\", \"value\": \"allreduce\", \"metadata\": {}}\n"
                ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1000, \"event_type\": \"INTERVAL_START\", \"key\": \"run_start\", \"value\": null, \"metadata\": {}}\n"
                ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1100, \"event_type\": \"POINT_IN_TIME\", \"key\": \"allreduce_result\", \"value\": {\"bytes\": 1024, \"time_us\": 5, \"algbw_gbps\": 0.2, \"busbw_gbps\": 0.3, \"wrong\": 0}, \"metadata\": {}}\n"
                ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1200, \"event_type\": \"POINT_IN_TIME\", \"key\": \"allreduce_result\", \"value\": {\"bytes\": 4096, \"time_us\": 9, \"algbw_gbps\": 0.4, \"busbw_gbps\": 0.6, \"wrong\": 0}, \"metadata\": {}}\n"
                ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1300, \"event_type\": \"INTERVAL_END\", \"key\": \"run_stop\", \"value\": null, \"metadata\": {\"status\": \"success\"}}\n";
        mlperf_parse_text(ar, -1, &t);
        ok(t.converged && t.ar_sizes == 2, "allreduce: two sizes, no wrong element");
        ok(t.ar_bytes == 4096 && fabs(t.ar_busbw - 0.6) < 1e-12, "allreduce: bus bandwidth at the largest size");
}

static struct mlperf_trial trial(double minutes, bool converged)
{
        struct mlperf_trial t = { 0 };
        t.outcome = OUT_SUCCESS;
        t.time_to_train = minutes * 60;
        t.converged = converged;
        return t;
}

static void test_score(void)
{
        struct mlperf_score s;
        struct mlperf_trial five[5] = { trial(20, true), trial(11, true), trial(10, true), trial(13, true), trial(12, true) };
        mlperf_score(five, 5, "ssd", &s);
        ok(s.scored && s.valid, "5 converged trials are scored");
        ok(fabs(s.score - 12) < 1e-12, "olympic mean: drop 10 and 20, mean of 11, 12, 13 = 12");
        ok(fabs(s.mean - 13.2) < 1e-12, "mean of all five");
        double sd = sqrt(((20 - 13.2) * (20 - 13.2) + (11 - 13.2) * (11 - 13.2) + (10 - 13.2) * (10 - 13.2) +
                          (13 - 13.2) * (13 - 13.2) + (12 - 13.2) * (12 - 13.2)) / 4);
        ok(fabs(s.sd - sd) < 1e-12 && fabs(s.sd_pct - sd / 13.2 * 100) < 1e-9, "sample standard deviation and sd%");

        struct mlperf_trial one_bad[5] = { trial(10, true), trial(11, true), trial(12, true), trial(13, true),
                                           trial(5, false) };
        mlperf_score(one_bad, 5, "ssd", &s);
        ok(s.scored && fabs(s.score - 12) < 1e-12, "one non-converged trial counts as the slowest: mean of 11, 12, 13");
        like(s.method, "counted as the slowest", "  and the method says so");

        struct mlperf_trial two_bad[5] = { trial(10, true), trial(11, true), trial(12, true), trial(13, false),
                                           trial(5, false) };
        mlperf_score(two_bad, 5, "ssd", &s);
        ok(!s.scored && !s.valid, "two non-converged trials make the result invalid");
        like(s.reason, "2 trials did not converge", "  and say why");

        mlperf_score(five, 3, "ssd", &s);
        ok(!s.scored && s.valid, "three trials: no official score");
        like(s.reason, "3 of the 5 trials", "  and say why");
        ok(fabs(s.mean - (20 + 11 + 10) / 3.0) < 1e-12, "  but a mean");
}

int main(void)
{
        test_parse();
        test_score();
        return done_testing();
}

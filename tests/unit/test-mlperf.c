/* test-mlperf.c: MLPerf trial logs read back (client/report/mlperf.c), MLPerf's scoring
 * rules, and benchctl report's text, JSON and CSV (client/report/report.c).
 *
 * Realistic SSD and allreduce logs are written to a mkdtemp directory and read
 * back through the same path benchctl uses.  Every expected number is worked
 * out by hand from the generator's parameters. */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "fs.h"
#include "json.h"
#include "mlperf.h"
#include "report.h"
#include "strutil.h"
#include "tap.h"

#define T0_MS 1600000000000LL   /* run_start */
#define TARGET 0.23
#define near(a, b) (fabs((a) - (b)) < 1e-9)

static char dir[4096];   /* $TMPDIR/test-mlperf.XXXXXX */

/* ---- an SSD-like trial log, in the shape of NVIDIA's MLPerf v0.7 SSD ---- */

static const int eval_epochs[] = { 40, 50, 55, 60, 65, 70, 75, 80 };

struct gen {
        const char *prefix;     /* before every line: "" or an mpirun --tag-output tag */
        int epoch_s, eval_s;    /* seconds per epoch, per evaluation */
        int converge_at;        /* the first evaluation at or after this epoch reaches the target; 0: never */
        int cut_in_epoch;       /* > 0: the log ends in the middle of this epoch */
        int progress;           /* progress lines per epoch */
        bool throughput;        /* log "throughput" (8000 + epoch) after each epoch */
        bool garbage;           /* garbage lines, a broken and a time-less MLLOG line, CRLF */
        bool other_rank;        /* an MLLOG line of rank 3 */
        /* out */
        long bad_at[2];         /* line numbers of the two unparseable MLLOG lines */
        int evals;
        long long seconds;      /* run_stop - run_start */
};

static long line_no(const struct bd_buf *b)
{
        long n = 1;
        for (size_t i = 0; i < b->len; i++)
                n += b->s[i] == '\n';
        return n;
}

static void mllog(struct bd_buf *b, const struct gen *g, long long ms, const char *event, const char *key,
                  const char *value, const char *meta)
{
        buf_printf(b, "%s:::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": \"%s\", \"key\": \"%s\", "
                      "\"value\": %s, \"metadata\": {\"file\": \"ssd/train.py\", \"lineno\": 100%s%s}}\n",
                   g->prefix, ms, event, key, value ? value : "null", meta ? ", " : "", meta ? meta : "");
}

static double acc_at(const struct gen *g, int e)
{
        return g->converge_at && e >= g->converge_at ? 0.2321 : 0.14 + e / 1000.0;
}

static char *ssd_log(struct gen *g, int seed)
{
        struct bd_buf b = BD_BUF_INIT;
        long long ms = T0_MS - 60000;
        char v[64], m[64];
        buf_printf(&b, "%sSTARTING TIMING RUN AT 2026-11-22 01:00:00 PM\n", g->prefix);
        buf_printf(&b, "%sRunning on 4 ranks, DALI 0.22\n", g->prefix);
        mllog(&b, g, ms, "POINT_IN_TIME", "submission_benchmark", "\"ssd\"", NULL);
        mllog(&b, g, ms, "POINT_IN_TIME", "submission_org", "\"benchd\"", NULL);
        mllog(&b, g, ms, "POINT_IN_TIME", "submission_division", "\"closed\"", NULL);
        mllog(&b, g, ms, "POINT_IN_TIME", "submission_platform", "\"4xC4140\"", NULL);
        mllog(&b, g, ms, "POINT_IN_TIME", "cache_clear", "true", NULL);
        mllog(&b, g, ms, "INTERVAL_START", "init_start", NULL, NULL);
        snprintf(v, sizeof(v), "%d", seed);
        mllog(&b, g, ms, "POINT_IN_TIME", "seed", v, NULL);
        mllog(&b, g, ms, "POINT_IN_TIME", "global_batch_size", "896", NULL);
        mllog(&b, g, ms, "POINT_IN_TIME", "opt_base_learning_rate", "0.09", NULL);
        mllog(&b, g, ms, "POINT_IN_TIME", "opt_learning_rate_decay_boundary_epochs", "[44, 55]", NULL);
        mllog(&b, g, ms, "POINT_IN_TIME", "train_samples", "117266", NULL);
        mllog(&b, g, ms, "POINT_IN_TIME", "eval_samples", "5000", NULL);
        ms = T0_MS;
        mllog(&b, g, ms, "INTERVAL_END", "init_stop", NULL, NULL);
        mllog(&b, g, ms, "INTERVAL_START", "run_start", NULL, NULL);
        if (g->other_rank)
                buf_printf(&b, "[1,3]<stdout>::::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": "
                               "\"INTERVAL_START\", \"key\": \"run_start\", \"value\": null, \"metadata\": {}}\n", ms);
        bool reached = false;
        g->evals = 0;
        for (int e = 1; e <= 80 && !reached; e++) {
                snprintf(m, sizeof(m), "\"epoch_num\": %d", e);
                mllog(&b, g, ms, "INTERVAL_START", "epoch_start", NULL, m);
                for (int it = 0; it < g->progress; it++) {
                        if (g->cut_in_epoch == e && it == g->progress / 2) {
                                buf_printf(&b, "%sEpoch %d iteration %d loss 2.3", g->prefix, e, it * 10);
                                return buf_detach(&b);  /* killed mid-line */
                        }
                        buf_printf(&b, "%sEpoch %d iteration %d loss %.4f lr 0.09000 %.1f img/s\n", g->prefix, e,
                                   it * 10, 8.0 / (1 + e / 10.0), 8000.0 + it);
                }
                if (g->garbage && e == 3) {
                        buf_puts(&b, "NCCL WARN \x01\x02 garbage, then a Python traceback\n");
                        g->bad_at[0] = line_no(&b);
                        buf_puts(&b, ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"key\": \"epoch_stop\", \"val\n");
                        buf_puts(&b, "Traceback (most recent call last):\n");
                        g->bad_at[1] = line_no(&b);
                        buf_puts(&b, ":::MLLOG {\"namespace\": \"\", \"event_type\": \"POINT_IN_TIME\", \"key\": \"seed\", "
                                     "\"value\": 1, \"metadata\": {}}\n");
                }
                ms += g->epoch_s * 1000LL;
                if (g->throughput) {
                        snprintf(v, sizeof(v), "%d", 8000 + e);
                        mllog(&b, g, ms, "POINT_IN_TIME", "throughput", v, m);
                }
                mllog(&b, g, ms, "INTERVAL_END", "epoch_stop", NULL, m);
                for (size_t k = 0; k < ARRAY_SIZE(eval_epochs); k++)
                        if (eval_epochs[k] == e) {
                                mllog(&b, g, ms, "INTERVAL_START", "eval_start", NULL, m);
                                ms += g->eval_s * 1000LL;
                                snprintf(v, sizeof(v), "%.4f", acc_at(g, e));
                                mllog(&b, g, ms, "POINT_IN_TIME", "eval_accuracy", v, m);
                                mllog(&b, g, ms, "INTERVAL_END", "eval_stop", NULL, m);
                                g->evals++;
                                reached = acc_at(g, e) >= TARGET;
                        }
        }
        g->seconds = (ms - T0_MS) / 1000;
        mllog(&b, g, ms, "INTERVAL_END", "run_stop", NULL, reached ? "\"status\": \"success\"" : "\"status\": \"aborted\"");
        if (g->garbage) {       /* the same line once more, CRLF-terminated: a duplicate run_stop */
                b.len--;
                buf_puts(&b, "\r\n");
                mllog(&b, g, ms + 5, "INTERVAL_END", "run_stop", NULL, "\"status\": \"success\"");
        }
        buf_printf(&b, "%sENDING TIMING RUN AT 2026-11-22 01:13:00 PM\n", g->prefix);
        buf_printf(&b, "%sRESULT,SINGLE_STAGE_DETECTOR,,%lld,benchd,2026-11-22 01:00:00 PM\n", g->prefix, g->seconds);
        return buf_detach(&b);
}

static char *write_log(const char *name, const char *text)
{
        char *path = xasprintf("%s/%s", dir, name);
        struct bd_err err;
        if (fs_write_replace(path, text, strlen(text), 0644, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                exit(1);
        }
        return path;
}

/* ---- run A: one of each kind of trial, read from files ---- */

struct run_files {
        struct report_trial trials[5];
        char *paths[5];
        struct gen gens[5];
};

static void read_trials(struct run_files *f, int n, double target)
{
        for (int i = 0; i < n; i++) {
                f->trials[i].number = i + 1;
                f->trials[i].log_path = f->paths[i];
                (void) mlperf_read_trial(f->paths[i], target, &f->trials[i].result, NULL);
        }
}

static void free_files(struct run_files *f, int n)
{
        for (int i = 0; i < n; i++)
                free(f->paths[i]);
}

static struct run_files run_a;

static void test_trial_logs(void)
{
        struct run_files *f = &run_a;
        const struct gen proto = { .prefix = "", .epoch_s = 12, .eval_s = 10, .progress = 6 };
        for (int i = 0; i < 5; i++)
                f->gens[i] = proto;
        f->gens[0].converge_at = 55;                    /* evals at 40, 50, 55 */
        f->gens[0].throughput = true;
        f->gens[1].converge_at = 0;                     /* never: 80 epochs, aborted */
        f->gens[2].cut_in_epoch = 52;                   /* killed in epoch 52 */
        f->gens[3].converge_at = 50;                    /* evals at 40, 50 */
        f->gens[3].garbage = true;
        f->gens[4].converge_at = 60;                    /* evals at 40, 50, 55, 60 */
        f->gens[4].prefix = "[1,0]<stdout>:";
        f->gens[4].other_rank = true;
        for (int i = 0; i < 5; i++) {
                _cleanup_free_ char *text = ssd_log(&f->gens[i], 100 + i);
                _cleanup_free_ char *name = xasprintf(i == 4 ? "a_trial,%d.log" : "a_%d.log", i + 1);
                f->paths[i] = write_log(name, text);
        }
        read_trials(f, 5, TARGET);
        const struct mlperf_trial *t = &f->trials[0].result;

        /* 1: a plain success */
        is_str(mlperf_outcome_name(t->outcome), "success", "trial 1: success");
        is_str(t->reason, "", "  no reason");
        is_str(t->benchmark, "ssd", "  submission_benchmark");
        ok(near(t->run_start_ms, T0_MS), "  run_start time_ms");
        ok(near(t->run_stop_ms, T0_MS + 690000), "  run_stop time_ms");
        ok(near(t->time_to_train, 55 * 12 + 3 * 10), "  time to train 55 x 12 s + 3 evals x 10 s = 690 s");
        is_int(f->gens[0].seconds, 690, "  (the generator agrees)");
        is_int(t->epochs, 55, "  55 epochs");
        is_int(t->epochs_completed, 55, "  all completed");
        ok(t->has_accuracy && near(t->accuracy, 0.2321), "  last eval_accuracy");
        is_int(t->accuracy_epoch, 55, "  at epoch 55");
        ok(t->has_target && near(t->target, TARGET) && !t->target_from_log, "  the caller's target");
        ok(t->reached && t->converged, "  reached and converged");
        ok(near(t->throughput, 8028) && t->throughput_logged == 55, "  throughput: mean of 8001..8055 logged = 8028");
        is_int(t->train_samples, 117266, "  train_samples");
        is_int(t->global_batch_size, 896, "  global_batch_size");
        ok(t->has_seed && t->seed == 100, "  seed");
        is_int(t->result_lines, 1, "  one RESULT line");
        ok(near(t->result_seconds, 690), "  RESULT seconds");
        ok(t->ending_seen, "  ENDING TIMING RUN seen");
        /* 2 header lines, 14 init MLLOG lines, 55 x (start, 6 progress, throughput, stop), 3 x 3 eval,
         * run_stop, ENDING, RESULT */
        is_int(t->lines, 2 + 14 + 55 * 9 + 9 + 3, "  every line counted");
        is_int(t->mllog_lines, 14 + 55 * 3 + 9 + 1, "  every MLLOG line counted");
        is_int(t->bad_lines, 0, "  no unparseable line");
        is_int(t->first_bad_line, 0, "  so no first one");
        is_int(t->duplicate_keys + t->other_rank_lines, 0, "  no anomaly");

        /* 2: aborted after 80 epochs */
        t = &f->trials[1].result;
        is_str(mlperf_outcome_name(t->outcome), "aborted", "trial 2: aborted");
        like(t->reason, "run_stop status 'aborted'", "  says why");
        ok(near(t->time_to_train, 80 * 12 + 8 * 10), "  time to train still measured: 1040 s");
        is_int(t->epochs, 80, "  80 epochs");
        ok(near(t->accuracy, 0.22) && !t->reached && !t->converged, "  0.22 at epoch 80: not reached");
        ok(near(t->throughput, 117266.0 * 80 / 1040), "  throughput computed: train_samples x epochs / time");
        is_int(t->throughput_logged, 0, "  (none logged)");

        /* 3: truncated in epoch 52 */
        t = &f->trials[2].result;
        is_str(mlperf_outcome_name(t->outcome), "incomplete", "trial 3: a truncated log is incomplete");
        like(t->reason, "ends in epoch 52", "  and where it ends");
        ok(!t->converged && !t->reached && t->time_to_train == 0, "  never a success, no time to train");
        is_int(t->epochs, 52, "  epochs reached: 52 (epoch_start)");
        is_int(t->epochs_completed, 51, "  epochs completed: 51");
        ok(near(t->accuracy, 0.19) && t->accuracy_epoch == 50, "  last accuracy from epoch 50");
        ok(!t->ending_seen && t->result_lines == 0, "  no ENDING, no RESULT");
        is_int(t->bad_lines, 0, "  the cut progress line is not an MLLOG line");

        /* 4: garbage, a broken MLLOG line, one without time_ms, CRLF, a duplicate run_stop */
        t = &f->trials[3].result;
        is_str(mlperf_outcome_name(t->outcome), "success", "trial 4: success despite garbage");
        ok(near(t->time_to_train, 50 * 12 + 2 * 10), "  the first run_stop counts: 620 s");
        is_int(t->bad_lines, 2, "  two unparseable MLLOG lines");
        is_int(t->first_bad_line, f->gens[3].bad_at[0], "  the first one's line number");
        ok(t->bad_at[0] == f->gens[3].bad_at[0] && t->bad_at[1] == f->gens[3].bad_at[1], "  both line numbers kept");
        is_int(t->duplicate_keys, 1, "  a duplicate run_stop is an anomaly");
        ok(t->converged && near(t->accuracy, 0.2321), "  converged at epoch 50");
        ok(t->has_seed && t->seed == 103, "  the time-less seed line did not count");

        /* 5: every line behind mpirun --tag-output, plus a line of rank 3 */
        t = &f->trials[4].result;
        is_str(mlperf_outcome_name(t->outcome), "success", "trial 5: tag-output prefixed lines are read");
        ok(near(t->time_to_train, 60 * 12 + 4 * 10), "  time to train 760 s");
        is_int(t->epochs, 60, "  60 epochs");
        is_int(t->other_rank_lines, 1, "  rank 3's MLLOG line is counted and ignored");
        is_int(t->duplicate_keys, 0, "  so its run_start is no duplicate");
        ok(t->result_lines == 1 && near(t->result_seconds, 760), "  the tagged RESULT line");
        is_int(t->bad_lines, 0, "  nothing unparseable");

        struct mlperf_score s;
        struct mlperf_trial arr[5];
        for (int i = 0; i < 5; i++)
                arr[i] = f->trials[i].result;
        mlperf_score(arr, 5, "ssd", &s);
        ok(!s.scored && !s.valid, "run A: an aborted and an incomplete trial make it invalid");
        like(s.reason, "2 trials did not converge", "  and say so");
        is_int(s.converged, 3, "  3 converged");
        ok(near(s.mean, (690 + 620 + 760) / 3.0 / 60), "  mean of the converged trials, in minutes");
}

/* ---- single-log corner cases ---- */

static void parse(const char *text, double target, struct mlperf_trial *t)
{
        mlperf_parse_text(text, strlen(text), target, t);
}

#define LOG(ms, event, key, value, meta)                                                                  \
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": " #ms ", \"event_type\": \"" event "\", \"key\": \"" key \
        "\", \"value\": " value ", \"metadata\": {" meta "}}\n"

static void test_corner_cases(void)
{
        struct mlperf_trial t;
        struct bd_err err = { "" };

        int r = mlperf_read_trial("/nonexistent/trial.log", TARGET, &t, &err);
        is_int(r, -ENOENT, "a missing log: -ENOENT");
        like(err.msg, "/nonexistent/trial.log", "  the error names the file");
        is_str(mlperf_outcome_name(t.outcome), "missing", "  outcome missing");
        like(t.reason, "cannot open", "  the reason is the error");
        ok(!t.converged, "  not converged");
        r = mlperf_parse_file(dir, TARGET, &t);
        ok(r < 0 && t.outcome == OUT_MISSING, "a directory is not a log: missing, no crash");

        parse("", -1, &t);
        ok(t.outcome == OUT_NO_RUN && !strcmp(t.reason, "empty log"), "an empty log");
        parse("working on it\nout of cheese\n", -1, &t);
        ok(t.outcome == OUT_NO_RUN && t.lines == 2, "a log without MLLOG lines: no run");
        is_str(t.reason, "no run_start in the log", "  says so");

        /* no run_stop, but the script's ENDING line: the trainer quit */
        parse(LOG(1000, "INTERVAL_START", "run_start", "null", "") "ENDING TIMING RUN AT x\n", -1, &t);
        ok(t.outcome == OUT_INCOMPLETE && t.ending_seen, "run_start, ENDING, no run_stop: incomplete");
        like(t.reason, "ended without", "  the trainer ended without run_stop");

        /* a NUL byte in the middle does not hide the rest */
        static const char nul[] = "bin\0ary\n" LOG(1000, "INTERVAL_START", "run_start", "null", "")
                LOG(61000, "INTERVAL_END", "run_stop", "null", "\"status\": \"success\"");
        mlperf_parse_text(nul, sizeof(nul) - 1, -1, &t);
        ok(t.outcome == OUT_SUCCESS && near(t.time_to_train, 60), "a NUL byte: the lines after it are read");
        ok(t.converged && !t.has_target, "  no target anywhere: the trainer's success stands");

        /* target from the log wins; Mask R-CNN's object accuracy */
        parse(LOG(1000, "POINT_IN_TIME", "submission_benchmark", "\"maskrcnn\"", "")
              LOG(1000, "POINT_IN_TIME", "eval_target", "0.377", "")
              LOG(1000, "INTERVAL_START", "run_start", "null", "")
              LOG(9000, "POINT_IN_TIME", "eval_accuracy", "{\"BBOX\": 0.3781, \"SEGM\": 0.3412}", "\"epoch_num\": 12")
              LOG(10000, "INTERVAL_END", "run_stop", "null", "\"status\": \"success\""), 0.5, &t);
        ok(t.target_from_log && near(t.target, 0.377), "eval_target in the log wins over the caller's");
        ok(near(t.accuracy, 0.3781) && t.has_accuracy_segm && near(t.accuracy_segm, 0.3412), "  BBOX and SEGM");
        ok(t.reached && t.converged && t.epochs == 12, "  reached at epoch 12");

        /* Mask R-CNN with both targets: the last evaluation must meet both */
#define MRCNN_LOG(bbox, segm, status)                                                                            \
        LOG(1000, "POINT_IN_TIME", "submission_benchmark", "\"maskrcnn\"", "")                                  \
        LOG(1000, "INTERVAL_START", "run_start", "null", "")                                                    \
        LOG(5000, "POINT_IN_TIME", "eval_accuracy", "{\"BBOX\": 0.2, \"SEGM\": 0.2}", "\"epoch_num\": 1")      \
        LOG(9000, "POINT_IN_TIME", "eval_accuracy", "{\"BBOX\": " bbox ", \"SEGM\": " segm "}", "\"epoch_num\": 2") \
        LOG(10000, "INTERVAL_END", "run_stop", "null", "\"status\": \"" status "\"")
        const char *both = MRCNN_LOG("0.3781", "0.3412", "success");
        mlperf_parse_text_segm(both, strlen(both), 0.377, 0.339, &t);
        ok(t.has_target_segm && near(t.target_segm, 0.339), "segm target from the caller");
        ok(t.reached && t.converged && !t.reason[0], "  both met at the last evaluation: converged");
        const char *segm_short = MRCNN_LOG("0.3781", "0.3380", "success");
        mlperf_parse_text_segm(segm_short, strlen(segm_short), 0.377, 0.339, &t);
        ok(!t.reached && !t.converged && t.outcome == OUT_SUCCESS, "bbox met, segm 0.3380 < 0.339: not converged");
        is_str(t.reason, "segm accuracy 0.3380 below the target 0.3390", "  the reason names segm");
        mlperf_parse_text(segm_short, strlen(segm_short), 0.377, &t);
        ok(t.reached && t.converged, "  without a segm target only bbox counts");
        const char *bbox_short = MRCNN_LOG("0.3700", "0.3500", "aborted");
        mlperf_parse_text_segm(bbox_short, strlen(bbox_short), 0.377, 0.339, &t);
        ok(t.outcome == OUT_ABORTED && !t.reached, "bbox 0.3700 short, aborted");
        is_str(t.reason, "run_stop status 'aborted': accuracy 0.3700 below the target 0.3770", "  the reason names bbox");
        const char *no_segm = LOG(1000, "INTERVAL_START", "run_start", "null", "")
                LOG(2000, "POINT_IN_TIME", "eval_accuracy", "{\"BBOX\": 0.5}", "\"epoch_num\": 1")
                LOG(3000, "INTERVAL_END", "run_stop", "null", "\"status\": \"success\"");
        mlperf_parse_text_segm(no_segm, strlen(no_segm), 0.377, 0.339, &t);
        ok(!t.converged, "a segm target and no SEGM in the log: not converged");
        like(t.reason, "no segm accuracy in the log", "  says so");
#undef MRCNN_LOG
        parse(LOG(1000, "POINT_IN_TIME", "target_accuracy", "0.75", "")
              LOG(1000, "INTERVAL_START", "run_start", "null", "")
              LOG(2000, "POINT_IN_TIME", "eval_accuracy", "0.7", "")
              LOG(3000, "INTERVAL_END", "run_stop", "null", "\"status\": \"success\""), -1, &t);
        ok(t.target_from_log && near(t.target, 0.75) && !t.reached && !t.converged, "target_accuracy, not reached");
        like(t.reason, "below the target", "  says so");

        /* blocks, numbered from 0: 2 blocks of 4 epochs = 8 epochs */
        parse(LOG(1000, "INTERVAL_START", "run_start", "null", "")
              LOG(1000, "INTERVAL_START", "block_start", "null", "\"first_epoch_num\": 0, \"epoch_count\": 4")
              LOG(2000, "INTERVAL_END", "block_stop", "null", "\"first_epoch_num\": 0, \"epoch_count\": 4")
              LOG(2000, "INTERVAL_START", "block_start", "null", "\"first_epoch_num\": 4, \"epoch_count\": 4")
              LOG(3000, "INTERVAL_END", "block_stop", "null", "\"first_epoch_num\": 4, \"epoch_count\": 4")
              LOG(3000, "POINT_IN_TIME", "train_samples", "1000", "")
              LOG(3000, "INTERVAL_END", "run_stop", "null", "\"status\": \"success\""), -1, &t);
        ok(t.epochs == 8 && t.epochs_completed == 8, "blocks from epoch 0: first_epoch_num + epoch_count = 8");
        ok(near(t.throughput, 1000.0 * 8 / 2), "  throughput 1000 x 8 / 2 s");
        /* the same, numbered from 1 */
        parse(LOG(1000, "INTERVAL_START", "run_start", "null", "")
              LOG(2000, "INTERVAL_END", "block_stop", "null", "\"first_epoch_num\": 1, \"epoch_count\": 4")
              LOG(3000, "INTERVAL_END", "block_stop", "null", "\"first_epoch_num\": 5, \"epoch_count\": 4"), -1, &t);
        ok(t.epochs == 8 && t.outcome == OUT_INCOMPLETE, "blocks from epoch 1: 8 epochs");

        /* duplicates, trailing junk after the JSON, JSON that is no object */
        parse(LOG(1000, "INTERVAL_START", "run_start", "null", "")
              LOG(1500, "INTERVAL_START", "run_start", "null", "")
              ":::MLLOG {\"time_ms\": 1, \"key\": \"x\"} trailing junk\n"
              ":::MLLOG [1, 2]\n"
              ":::MLLOG\n"
              LOG(3000, "INTERVAL_END", "run_stop", "null", "\"status\": \"success\"")
              LOG(4000, "INTERVAL_END", "run_stop", "null", "\"status\": \"aborted\"")
              "RESULT,X,,2,benchd,now\nRESULT,X,,2,benchd,now\n", -1, &t);
        is_int(t.duplicate_keys, 2, "a second run_start and run_stop are anomalies");
        ok(near(t.time_to_train, 2) && t.outcome == OUT_SUCCESS, "  the first of each counts");
        is_int(t.bad_lines, 3, "junk after the object, a list, nothing: unparseable");
        is_int(t.bad_at[2], 5, "  line numbers kept");
        is_int(t.result_lines, 2, "two RESULT lines are counted");

        /* Open MPI 5's tag has a blank after it; rank 1's lines are ignored */
        parse("[1,0]<stdout>: " LOG(1000, "INTERVAL_START", "run_start", "null", "")
              "[1,1]<stdout>: " LOG(1000, "INTERVAL_START", "run_start", "null", "")
              "[1,0]<stdout>: " LOG(4000, "INTERVAL_END", "run_stop", "null", "\"status\": \"success\"")
              "[1,0]<stdout>: RESULT,X,,3.5,benchd,now\n", -1, &t);
        ok(t.outcome == OUT_SUCCESS && near(t.time_to_train, 3) && t.other_rank_lines == 1 && t.duplicate_keys == 0,
           "Open MPI 5 tags: read, rank 1 ignored");
        ok(t.result_lines == 1 && near(t.result_seconds, 3.5), "  and the tagged RESULT line");

        /* run_stop before run_start */
        parse(LOG(5000, "INTERVAL_START", "run_start", "null", "")
              LOG(1000, "INTERVAL_END", "run_stop", "null", "\"status\": \"success\""), -1, &t);
        ok(t.outcome == OUT_SUCCESS && !t.converged && !t.timed && t.time_to_train == 0,
           "run_stop before run_start: no time");
        like(t.reason, "before run_start", "  says so");

        /* run_stop in run_start's millisecond: timed, 0 s, and it counts */
        parse(LOG(5000, "INTERVAL_START", "run_start", "null", "")
              LOG(5000, "INTERVAL_END", "run_stop", "null", "\"status\": \"success\""), -1, &t);
        ok(t.outcome == OUT_SUCCESS && t.timed && t.time_to_train == 0 && t.converged && !t.reason[0],
           "run_stop in run_start's millisecond: 0 s, converged, no complaint");

        /* more unparseable lines than are kept */
        struct bd_buf b = BD_BUF_INIT;
        for (int i = 0; i < 9; i++)
                buf_puts(&b, ":::MLLOG {oops\n");
        parse(b.s, -1, &t);
        ok(t.bad_lines == 9 && t.bad_at[MLPERF_BAD_KEPT - 1] == MLPERF_BAD_KEPT, "9 bad lines counted, 5 kept");
        buf_release(&b);
}

/* ---- allreduce ---- */

static char *allreduce_log(const char *prefix, double scale, int wrong_at_largest)
{
        struct bd_buf b = BD_BUF_INIT;
        long long ms = T0_MS;
        buf_printf(&b, "%s# benchd-allreduce: 4 ranks, float, sum\n", prefix);
        buf_printf(&b, "%s:::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": \"POINT_IN_TIME\", "
                       "\"key\": \"submission_benchmark\", \"value\": \"allreduce\", \"metadata\": {}}\n", prefix, ms);
        buf_printf(&b, "%s:::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": \"INTERVAL_START\", "
                       "\"key\": \"run_start\", \"value\": null, \"metadata\": {}}\n", prefix, ms);
        for (long bytes = 1024; bytes <= 65536; bytes *= 4) {
                ms += 100;
                double bus = scale * (double)bytes / 65536;
                buf_printf(&b, "%s%10ld %8ld float sum %8.2f %8.3f %8.3f 0\n", prefix, bytes, bytes / 4, 10.0,
                           bus / 1.5, bus);
                buf_printf(&b, "%s:::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": \"POINT_IN_TIME\", "
                               "\"key\": \"allreduce_result\", \"value\": {\"bytes\": %ld, \"time_us\": 10.0, "
                               "\"algbw_gbps\": %.6f, \"busbw_gbps\": %.6f, \"wrong\": %d}, \"metadata\": {}}\n",
                           prefix, ms, bytes, bus / 1.5, bus, bytes == 65536 ? wrong_at_largest : 0);
        }
        buf_printf(&b, "%s:::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": \"INTERVAL_END\", "
                       "\"key\": \"run_stop\", \"value\": null, \"metadata\": {\"status\": \"%s\"}}\n",
                   prefix, ms + 100, wrong_at_largest ? "aborted" : "success");
        return buf_detach(&b);
}

static struct run_files run_ar;

static void test_allreduce(void)
{
        struct run_files *f = &run_ar;
        const double scale[3] = { 12.0, 14.0, 13.0 };
        for (int i = 0; i < 3; i++) {
                _cleanup_free_ char *text = allreduce_log(i == 1 ? "[0,0]<stdout>:" : "", scale[i], i == 2 ? 7 : 0);
                _cleanup_free_ char *name = xasprintf("ar_%d.log", i + 1);
                f->paths[i] = write_log(name, text);
        }
        read_trials(f, 3, -1);
        const struct mlperf_trial *t = &f->trials[0].result;
        is_str(t->benchmark, "allreduce", "allreduce: benchmark");
        is_int(t->ar_sizes, 4, "  4 sizes (1 KiB .. 64 KiB)");
        ok(near(t->ar_bytes, 65536) && near(t->ar_busbw, 12) && near(t->ar_algbw, 8), "  largest size: bytes, bus, alg bw");
        ok(t->ar_wrong == 0 && t->reached && t->converged, "  no wrong element: reached");
        ok(near(t->time_to_train, 0.5), "  time 0.5 s");
        ok(f->trials[1].result.converged && near(f->trials[1].result.ar_busbw, 14), "trial 2 (tagged) read");
        t = &f->trials[2].result;
        ok(t->ar_wrong == 7 && !t->reached && !t->converged, "trial 3: 7 wrong elements, not reached");
        is_str(mlperf_outcome_name(t->outcome), "aborted", "  and aborted");

        struct mlperf_trial arr[3] = { f->trials[0].result, f->trials[1].result, f->trials[2].result };
        struct mlperf_score s;
        mlperf_score(arr, 3, "allreduce", &s);
        ok(s.scored && s.valid && s.higher_is_better, "allreduce is scored, higher is better");
        ok(near(s.score, 13) && near(s.mean, 13), "  mean bus bandwidth of the converged trials: (12 + 14) / 2");
        ok(near(s.sd, sqrt(2)) && near(s.sd_pct, sqrt(2) / 13 * 100), "  sd sqrt(((12-13)^2 + (14-13)^2) / 1)");
        is_str(s.unit, "GB/s", "  in GB/s");
        like(s.method, "over 2 of 3 trials", "  method");
        mlperf_score(arr + 2, 1, "allreduce", &s);
        ok(!s.scored && !s.valid, "only a wrong trial: invalid");
        /* a fast run on small sizes: run_stop in run_start's millisecond */
        _cleanup_free_ char *fast = allreduce_log("", 12.0, 0);
        for (char *p = strstr(fast, "\"run_stop\""); p && p > fast && *p != '\n'; p--)
                if (!strncmp(p, "\"time_ms\": ", 11)) {
                        char ms[32];
                        int n = snprintf(ms, sizeof(ms), "%lld", (long long)T0_MS);
                        memcpy(p + 11, ms, (size_t)n); /* same width: T0_MS + 500 has as many digits */
                        break;
                }
        struct mlperf_trial z;
        mlperf_parse_text(fast, strlen(fast), -1, &z);
        ok(z.timed && z.time_to_train == 0 && z.converged && z.outcome == OUT_SUCCESS && !z.reason[0],
           "allreduce whose run_stop is in run_start's millisecond: converged, 0 s");
        struct mlperf_trial one[1] = { z };
        mlperf_score(one, 1, "allreduce", &s);
        ok(s.scored && s.valid && near(s.score, 12), "  and scored by its bus bandwidth");

        arr[1].ar_bytes = 1 << 20;
        mlperf_score(arr, 2, "allreduce", &s);
        ok(!s.valid && strstr(s.reason, "different largest sizes"), "different largest sizes: invalid");
}

/* ---- scoring rules on hand-made numbers ---- */

static struct mlperf_trial trial(double minutes, bool converged)
{
        struct mlperf_trial t = { 0 };
        t.outcome = converged ? OUT_SUCCESS : OUT_ABORTED;
        t.time_to_train = minutes * 60;
        t.converged = converged;
        return t;
}

static void test_score(void)
{
        struct mlperf_score s;
        struct mlperf_trial five[5] = { trial(20, true), trial(11, true), trial(10, true), trial(13, true),
                                        trial(12, true) };
        mlperf_score(five, 5, "ssd", &s);
        ok(s.scored && s.valid, "5 converged trials are scored");
        ok(near(s.score, 12), "olympic mean: drop 10 and 20, (11 + 13 + 12) / 3 = 12");
        ok(s.fastest == 2 && s.slowest == 0, "  the fastest (index 2) and slowest (index 0) are dropped");
        ok(near(s.mean, 13.2), "mean of all five: 66 / 5 = 13.2");
        /* deviations 6.8, -2.2, -3.2, -0.2, -1.2: squares 46.24 + 4.84 + 10.24 + 0.04 + 1.44 = 62.8 */
        ok(near(s.sd, sqrt(62.8 / 4)), "sample sd: sqrt(62.8 / 4) = 3.962");
        ok(near(s.sd_pct, sqrt(62.8 / 4) / 13.2 * 100), "sd% = sd / mean x 100 = 30.0");
        is_str(s.unit, "min", "  in minutes");
        is_int(s.required, 5, "  5 required");

        struct mlperf_trial one_bad[5] = { trial(10, true), trial(11, true), trial(5, false), trial(12, true),
                                           trial(13, true) };
        mlperf_score(one_bad, 5, "maskrcnn", &s);
        ok(s.scored && near(s.score, 12), "one non-converged trial (a fast one) counts as the slowest: (11+12+13)/3");
        ok(s.fastest == 0 && s.slowest == 2, "  drops the fastest converged and the non-converged");
        like(s.method, "counted as the slowest", "  the method says so");
        ok(near(s.mean, 11.5) && s.converged == 4, "  mean of the 4 converged: 11.5");

        struct mlperf_trial two_bad[5] = { trial(10, true), trial(11, true), trial(12, true), trial(13, false),
                                           trial(5, false) };
        mlperf_score(two_bad, 5, "ssd", &s);
        ok(!s.scored && !s.valid, "two non-converged trials make the result invalid");
        is_str(s.reason, "2 trials did not converge (MLPerf allows one)", "  and say why");
        ok(near(s.mean, 11) && near(s.sd, 1), "  but mean 11 and sd 1 of the converged three");

        /* a run that has not ended: no score yet, unless it is already invalid */
        struct mlperf_trial live[5] = { trial(10, true), trial(5, false), trial(11, true), trial(0, false),
                                        trial(0, false) };
        live[3].outcome = OUT_RUNNING;
        live[4].outcome = OUT_PENDING;
        mlperf_score(live, 5, "ssd", &s);
        ok(!s.scored && s.valid, "a live run with one failed trial: no score yet, not invalid");
        is_str(s.reason, "the run has not ended (2 of 5 trials still to finish)", "  and say why");
        live[2] = trial(7, false);
        mlperf_score(live, 5, "ssd", &s);
        ok(!s.scored && !s.valid, "a live run with two failed trials is already invalid");
        is_str(s.reason, "2 trials did not converge (MLPerf allows one), with 2 still to finish", "  and say why");

        mlperf_score(five, 3, "ssd", &s);
        ok(!s.scored && s.valid, "three trials: no official score");
        is_str(s.reason, "3 of 5 trials", "  and say why");
        ok(near(s.mean, (20 + 11 + 10) / 3.0), "  but a mean");

        struct mlperf_trial six[6] = { trial(1, true), trial(2, true), trial(3, true), trial(4, true), trial(5, true),
                                       trial(6, true) };
        mlperf_score(six, 6, "ssd", &s);
        ok(!s.scored && s.valid && strstr(s.reason, "exactly 5"), "six trials: no score either");
        mlperf_score(five, 1, "ssd", &s);
        ok(!s.scored && near(s.sd, 0) && near(s.mean, 20), "one trial: mean, sd 0");
        mlperf_score(NULL, 0, "ssd", &s);
        ok(!s.scored && s.converged == 0, "no trials");
}

/* ---- runs from files, and the three outputs ---- */

static struct run_files run_b, run_c;

static void make_run(struct run_files *f, const char *tag, const int *epoch_s, int n, int aborted)
{
        for (int i = 0; i < n; i++) {
                f->gens[i] = (struct gen){ .prefix = "", .epoch_s = epoch_s[i], .eval_s = 10, .progress = 3,
                                           .converge_at = i == aborted ? 0 : 55 };
                _cleanup_free_ char *text = ssd_log(&f->gens[i], i);
                _cleanup_free_ char *name = xasprintf("%s_%d.log", tag, i + 1);
                f->paths[i] = write_log(name, text);
        }
        read_trials(f, n, TARGET);
}

/* Splits one RFC 4180 record at *p; returns the number of fields, advances *p. */
static int csv_record(const char **p, char fields[][256], int max)
{
        const char *s = *p;
        int n = 0;
        for (;;) {
                char *out = n < max ? fields[n] : NULL;
                size_t len = 0;
                if (*s == '"') {
                        for (s++; *s && !(*s == '"' && s[1] != '"'); s++) {
                                if (*s == '"')
                                        s++;
                                if (out && len < 255)
                                        out[len++] = *s;
                        }
                        if (*s == '"')
                                s++;
                } else
                        for (; *s && *s != ',' && *s != '\n'; s++)
                                if (out && len < 255)
                                        out[len++] = *s;
                if (out)
                        out[len] = '\0';
                n++;
                if (*s == ',') {
                        s++;
                        continue;
                }
                if (*s == '\n')
                        s++;
                *p = s;
                return n;
        }
}

/* The member at a dotted path, array items by index: "0.trials.2.status". */
static const cJSON *jget(const cJSON *o, const char *path)
{
        while (o && *path) {
                size_t n = strcspn(path, ".");
                char k[64];
                long i;
                snprintf(k, sizeof(k), "%.*s", (int)n, path);
                if (cJSON_IsArray(o))
                        o = str_parse_long(k, &i) == 0 ? cJSON_GetArrayItem(o, (int)i) : NULL;
                else
                        o = cJSON_GetObjectItemCaseSensitive(o, k);
                path += n + (path[n] == '.');
        }
        return o;
}

static bool jnum(const cJSON *root, const char *path, double want)
{
        const cJSON *v = jget(root, path);
        if (cJSON_IsNumber(v) && fabs(v->valuedouble - want) < 1e-6)
                return true;
        printf("#   %s: want %g\n", path, want);
        return false;
}

static bool jstr(const cJSON *root, const char *path, const char *want)
{
        const cJSON *v = jget(root, path);
        if (cJSON_IsString(v) && !strcmp(v->valuestring, want))
                return true;
        printf("#   %s: want '%s'\n", path, want);
        return false;
}

static bool jnull(const cJSON *root, const char *path)
{
        return cJSON_IsNull(jget(root, path));
}

/* the line of text that starts with prefix, "" when none */
static const char *line_of(const char *text, const char *prefix, char *buf, size_t n)
{
        size_t pl = strlen(prefix);
        for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (!strncmp(p, prefix, pl)) {
                        size_t len = strcspn(p, "\n");
                        snprintf(buf, n, "%.*s", (int)len, p);
                        return buf;
                }
        return "";
}

static void test_report(void)
{
        /* B: 5 successes, times 55 x epoch + 3 x 10 s = 690, 635, 745, 580, 1130 s */
        static const int epoch_b[5] = { 12, 11, 13, 10, 20 };
        make_run(&run_b, "b", epoch_b, 5, -1);
        /* C: 4 successes (690, 635, 745, 580 s) and an aborted trial 5 */
        make_run(&run_c, "c", epoch_b, 5, 4);

        struct mlperf_score s;
        const struct report_reference ssd_4x = { 12.440, 8053, "MLPerf Training v0.7, 4xC4140" };
        struct report_run runs[4] = {
                { "20261122-130000-aaaa", "4xC4140", "ssd", "completed", run_a.trials, 5, &ssd_4x, NULL, 0, NULL, false, NULL },
                { "20261122-140000-bbbb", "4xC4140", "ssd", "completed", run_b.trials, 5, &ssd_4x, NULL, 0, NULL, false, NULL },
                { "20261122-150000-cccc", "C4140", "ssd", NULL, run_c.trials, 5, NULL, NULL, 0, NULL, false, NULL },
                { "20261122-160000-dddd", "local", "allreduce", "completed", run_ar.trials, 3, NULL, NULL, 0, NULL, false, NULL },
        };
        report_score(&runs[1], &s);
        ok(s.scored && near(s.score, 690.0 / 60), "run B: olympic mean of 635, 690, 745 s = 11.5 min");
        ok(near(s.mean, 3780.0 / 5 / 60), "  mean 3780 / 5 = 756 s");
        /* deviations -66, -121, -11, -176, 374 s: squares 4356 + 14641 + 121 + 30976 + 139876 = 189970 */
        ok(near(s.sd, sqrt(189970.0 / 4) / 60), "  sd sqrt(189970 / 4) s");
        ok(s.fastest == 3 && s.slowest == 4, "  drops trial 4 (580 s) and trial 5 (1130 s)");
        report_score(&runs[2], &s);
        ok(s.scored && near(s.score, 690.0 / 60) && s.slowest == 4 && s.fastest == 3,
           "run C: the aborted trial 5 counts as the slowest: (635 + 690 + 745) / 3");

        /* text */
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        char line[512];
        is_int(report_write(runs, 4, REPORT_TEXT, REPORT_REFERENCE, &out), 0, "text report");
        printf("# --- text report ---\n");
        for (const char *p = out.s; *p;) {
                size_t len = strcspn(p, "\n");
                printf("# %.*s\n", (int)len, p);
                p += len + (p[len] == '\n');
        }
        like(out.s, "run 20261122-130000-aaaa: ssd on 4xC4140, 5 trials, completed\n", "  a header per run");
        like(out.s, "  TRIAL STATUS        TIME(s) TIME(min) EPOCHS  ACCURACY  TARGET REACHED    SAMPLES/s  NOTES\n",
             "  the SSD table header");
        is_str(line_of(out.s, "  1     success", line, sizeof(line)),
               "  1     success         690.0     11.50     55    0.2321   0.230     yes       8028.0", "  trial 1's row");
        like(line_of(out.s, "  3 ", line, sizeof(line)), "  3     incomplete          -         -     52    0.1900",
             "  the truncated trial is incomplete, without time");
        like(line, "ends in epoch 52", "  with the reason");
        like(out.s, "2 unparseable MLLOG lines (first at line ", "  unparseable lines are shown");
        char want[96];
        snprintf(want, sizeof(want), "(first at line %ld); 1 duplicate run_start/run_stop", run_a.gens[3].bad_at[0]);
        like(out.s, want, "  with the first line number, and the duplicate run_stop");
        like(out.s, "1 MLLOG line of other ranks ignored", "  other ranks' lines are shown");
        like(out.s, "  MLPerf score: INVALID: 2 trials did not converge (MLPerf allows one)\n", "  run A is invalid");
        like(out.s, "  mean 11.500 min, sd 1.167 min (10.1%) over 3 converged trials\n", "  but has a mean and sd");
        like(out.s, "  MLPerf score: 11.500 min (olympic mean of 3 trials; trial 4 dropped as the fastest, trial 5 "
                    "as the slowest)\n", "  run B's score");
        like(out.s, "  MLPerf score: 11.500 min (olympic mean of 3 trials, the non-converged one counted as the "
                    "slowest; trial 4 dropped as the fastest, trial 5 as the slowest)\n", "  run C's score");
        like(out.s, "  published: 12.440 min (MLPerf Training v0.7, 4xC4140); ours 11.500 min, -7.6%\n",
             "  --reference: published minutes and the difference");
        like(out.s, "  published: 12.440 min (MLPerf Training v0.7, 4xC4140); ours 11.500 min (mean, no official score), "
                    "-7.6%\n", "  run A compares its mean, and says so");
        like(out.s, "  published throughput: 8053 samples/s; ours ", "  and the throughput");
        like(out.s, "  published: no published result for ssd on C4140\n", "  a run without a published result");
        like(out.s, "dropped as the slowest", "  dropped trials are marked");
        like(out.s, "  5     aborted        1680.0     28.00     80    0.2200   0.230      no       5584.1  run_stop "
                    "status 'aborted': accuracy 0.2200 below the target 0.2300; dropped as the slowest\n",
             "  run C's aborted trial: why, and dropped as the slowest");
        like(out.s, "  TRIAL STATUS        TIME(s)   SIZES   LARGEST(B)  BUSBW(GB/s)   WRONG  NOTES\n",
             "  the allreduce table header");
        like(out.s, "\n  1     success         0.500       4        65536       12.000       0\n", "  an allreduce row");
        like(out.s, "  aborted         0.500       4        65536       13.000       7  run_stop status 'aborted': "
                    "7 wrong elements\n", "  wrong elements");
        like(out.s, "  MLPerf score: 13.000 GB/s (mean bus bandwidth at the largest size over 2 of 3 trials, "
                    "1 did not converge)\n",
             "  the allreduce score");
        like(out.s, "\nRUN                   SYSTEM   WORKLOAD          SCORE          MEAN     SD%  VS PUBLISHED\n",
             "  a comparison table at the end");
        like(out.s, "\n20261122-140000-bbbb  4xC4140  ssd          11.500 min    12.600 min   28.8%         -7.6%\n",
             "  a comparison row");
        like(out.s, "\n20261122-130000-aaaa  4xC4140  ssd             invalid    11.500 min   10.1%         -7.6%\n",
             "  an invalid run in the comparison");
        ok(!strstr(line_of(out.s, "  3 ", line, sizeof(line)), "success"), "  the truncated trial never shows as success");
        like(out.s, "\n20261122-160000-dddd  local    allreduce   13.000 GB/s   13.000 GB/s   10.9%             -\n",
             "  an allreduce row in the comparison");

        /* E: 3 trials, the second log gone */
        struct report_trial e[3] = { run_b.trials[0], run_b.trials[1], run_b.trials[2] };
        e[1].log_path = "/nonexistent/e_2.log";
        (void) mlperf_read_trial(e[1].log_path, TARGET, &e[1].result, NULL);
        struct report_run run_e = { "e", "C4140", "ssd", "failed", e, 3, NULL, NULL, 0, NULL, false, NULL };
        buf_reset(&out);
        report_text(&run_e, 1, REPORT_REFERENCE, &out);
        like(out.s, "\n  2     missing             -         -      -         -       -       -            -  cannot open "
                    "'/nonexistent/e_2.log': No such file or directory\n", "a missing log is a row that says so");
        like(out.s, "  MLPerf score: no score: 3 of 5 trials\n", "  3 trials: no score, and why");
        /* 717.5 s = 11.958 min; sd 55 / sqrt(2) = 38.89 s = 0.648 min, 5.4% */
        like(out.s, "  mean 11.958 min, sd 0.648 min (5.4%) over 2 converged trials\n", "  mean and sd of 690 and 745 s");
        buf_reset(&out);
        report_write(&run_e, 1, REPORT_JSON, 0, &out);
        _cleanup_json_ cJSON *je = cJSON_Parse(out.s);
        ok(jstr(je, "0.trials.1.status", "missing") && jnull(je, "0.trials.1.epochs") && jnull(je, "0.trials.1.lines"),
           "  JSON: missing, nothing known");
        ok(jnull(je, "0.score.value") && cJSON_IsTrue(jget(je, "0.score.valid")) &&
           jstr(je, "0.score.reason", "3 of 5 trials"), "  JSON: no score, valid, the reason");

        buf_reset(&out);
        report_text(runs + 1, 1, 0, &out);
        ok(!strstr(out.s, "published") && !strstr(out.s, "\nRUN "), "one run without --reference: no published, no table");

        /* JSON */
        buf_reset(&out);
        is_int(report_write(runs, 4, REPORT_JSON, REPORT_REFERENCE, &out), 0, "JSON report");
        _cleanup_json_ cJSON *j = cJSON_Parse(out.s);
        ok(cJSON_IsArray(j) && cJSON_GetArraySize(j) == 4, "  parses: an array of 4 runs");
        ok(jstr(j, "0.run", "20261122-130000-aaaa") && jstr(j, "0.system", "4xC4140") && jstr(j, "0.workload", "ssd"),
           "  run, system, workload");
        ok(jnum(j, "0.trials.0.time_to_train_s", 690) && jnum(j, "0.trials.0.time_to_train_min", 11.5),
           "  time to train in s and min");
        ok(jnum(j, "0.trials.0.epochs", 55) && jnum(j, "0.trials.0.accuracy", 0.2321) && jnum(j, "0.trials.0.target", 0.23),
           "  epochs, accuracy, target");
        ok(cJSON_IsTrue(jget(j, "0.trials.0.reached")) && cJSON_IsTrue(jget(j, "0.trials.0.converged")), "  reached");
        ok(jnum(j, "0.trials.0.throughput", 8028) && jstr(j, "0.trials.0.throughput_source", "logged"), "  throughput");
        ok(jnum(j, "0.trials.0.seed", 100) && jnum(j, "0.trials.0.global_batch_size", 896), "  seed, batch size");
        ok(jstr(j, "0.trials.2.status", "incomplete") && jnull(j, "0.trials.2.time_to_train_s") &&
           jnull(j, "0.trials.2.throughput"), "  incomplete: null time and throughput");
        ok(jnum(j, "0.trials.3.unparseable_lines", 2) && jnum(j, "0.trials.3.unparseable_at.0", run_a.gens[3].bad_at[0]) &&
           jnum(j, "0.trials.3.unparseable_at.1", run_a.gens[3].bad_at[1]), "  unparseable lines and where");
        ok(jnum(j, "0.trials.3.duplicate_keys", 1) && jnum(j, "0.trials.4.other_rank_lines", 1), "  anomalies");
        ok(jnull(j, "0.trials.0.busbw_gbps") && jnull(j, "0.score.value"), "  null where there is nothing");
        ok(cJSON_IsFalse(jget(j, "0.score.valid")) && jstr(j, "0.score.reason", "2 trials did not converge (MLPerf allows one)"),
           "  run A invalid, with the reason");
        ok(jnum(j, "1.score.value", 11.5) && jstr(j, "1.score.unit", "min") && jnum(j, "1.score.mean", 12.6),
           "  run B: score and mean");
        ok(jnum(j, "1.score.sd", sqrt(189970.0 / 4) / 60) && jnum(j, "1.score.fastest_trial", 4) &&
           jnum(j, "1.score.slowest_trial", 5), "  sd, dropped trials");
        ok(jstr(j, "1.trials.3.dropped", "fastest") && jnull(j, "1.trials.0.dropped"), "  dropped per trial");
        ok(jnum(j, "1.published.minutes", 12.44) && jnum(j, "1.published.difference_pct", (11.5 - 12.44) / 12.44 * 100),
           "  published and the difference");
        ok(jnum(j, "1.published.images_per_second", 8053) && jstr(j, "1.published.source", "MLPerf Training v0.7, 4xC4140"),
           "  published throughput and source");
        ok(jnull(j, "2.published") && jnull(j, "2.state"), "  nothing published, no state: null");
        ok(jnum(j, "3.score.value", 13) && jnum(j, "3.trials.1.busbw_gbps", 14) && jnum(j, "3.trials.2.wrong", 7) &&
           jnum(j, "3.trials.0.sizes", 4) && jnum(j, "3.trials.0.largest_bytes", 65536), "  allreduce fields");
        ok(cJSON_IsTrue(jget(j, "3.trials.0.reached")) && cJSON_IsFalse(jget(j, "3.trials.2.reached")),
           "  allreduce reached: no wrong element");

        buf_reset(&out);
        report_write(runs + 1, 1, REPORT_JSON, 0, &out);
        _cleanup_json_ cJSON *jone = cJSON_Parse(out.s);
        ok(jone && !jget(jone, "0.published"), "without --reference no 'published'");

        /* CSV */
        buf_reset(&out);
        is_int(report_write(runs, 4, REPORT_CSV, REPORT_REFERENCE, &out), 0, "CSV report");
        int rows = 0, bad_width = 0, header_fields = 0, col_pub = -1, col_diff = -1;
        char fields[48][256], path5[256] = "", pub6[256] = "", diff6[256] = "", pub11[256] = "x";
        for (const char *p = out.s; *p; rows++) {
                int nf = csv_record(&p, fields, 48);
                if (rows == 0) {
                        header_fields = nf;
                        for (int f = 0; f < nf; f++) {
                                if (streq(fields[f], "published_minutes"))
                                        col_pub = f;
                                if (streq(fields[f], "difference_pct"))
                                        col_diff = f;
                        }
                } else if (nf != header_fields) {
                        bad_width++;
                }
                if (rows == 5)
                        snprintf(path5, sizeof(path5), "%s", fields[4]);
                if (rows == 6 && col_pub >= 0 && col_diff >= 0) {
                        snprintf(pub6, sizeof(pub6), "%s", fields[col_pub]);
                        snprintf(diff6, sizeof(diff6), "%s", fields[col_diff]);
                }
                if (rows == 11 && col_pub >= 0)
                        snprintf(pub11, sizeof(pub11), "%s", fields[col_pub]);
        }
        ok(col_pub > 0 && col_diff > col_pub, "  --reference: published and difference columns");
        is_str(pub6, "12.440", "  run B's published minutes on its rows");
        is_str(diff6, "-7.556", "  and its score's difference (11.5 vs 12.44 min)");
        is_str(pub11, "", "  nothing published: empty");
        is_int(rows, 1 + 5 + 5 + 5 + 3, "  a header and one row per trial");
        ok(header_fields > 20, "  many columns");
        is_int(bad_width, 0, "  every row as wide as the header");
        is_str(path5, run_a.paths[4], "  the log path with a comma reads back whole");
        like(out.s, "/a_trial,5.log\",success,", "  quoted per RFC 4180");
        like(out.s, "\n20261122-130000-aaaa,4xC4140,ssd,3,", "  rows start with run, system, workload, trial");
        like(out.s, ",incomplete,,,52,0.190000,0.230000,no,no,,", "  the incomplete row: empty time");

        buf_reset(&out);
        report_write(runs, 4, REPORT_CSV, 0, &out);
        ok(!strstr(out.s, "published"), "  without --reference: no published columns");

        struct bd_buf q = BD_BUF_INIT;
        report_csv_field(&q, "say \"hi\", then\nleave");
        is_str(q.s, "\"say \"\"hi\"\", then\nleave\"", "a field with quotes, a comma and a newline");
        buf_reset(&q);
        report_csv_field(&q, "plain");
        is_str(q.s, "plain", "a plain field is bare");
        buf_release(&q);
}

/* ---- Mask R-CNN: five trial logs in the shape of the MLPerf v0.7 reference's
 * (maskrcnn_benchmark), eval_accuracy {"BBOX": b, "SEGM": s} per epoch ---- */

static char *maskrcnn_log(int epoch_s, int eval_s, bool segm_short, int seed)
{
        struct bd_buf b = BD_BUF_INIT;
        struct gen g = { .prefix = "" };
        long long ms = T0_MS - 90000;
        char v[96], m[64];
        buf_puts(&b, "STARTING TIMING RUN AT 2026-11-22 01:00:00 PM\n");
        mllog(&b, &g, ms, "POINT_IN_TIME", "submission_benchmark", "\"maskrcnn\"", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "submission_org", "\"benchd\"", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "submission_division", "\"closed\"", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "submission_status", "\"onprem\"", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "submission_platform", "\"DSS8440\"", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "cache_clear", "true", NULL);
        mllog(&b, &g, ms, "INTERVAL_START", "init_start", NULL, NULL);
        snprintf(v, sizeof(v), "%d", seed);
        mllog(&b, &g, ms, "POINT_IN_TIME", "seed", v, NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "global_batch_size", "64", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "opt_base_learning_rate", "0.08", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "opt_learning_rate_warmup_factor", "0.0001", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "opt_learning_rate_warmup_steps", "800", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "num_image_candidates", "8000", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "opt_learning_rate_decay_factor", "0.1", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "opt_learning_rate_decay_steps", "[18000, 24000]", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "min_image_size", "800", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "max_image_size", "1333", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "train_samples", "117266", NULL);
        mllog(&b, &g, ms, "POINT_IN_TIME", "eval_samples", "5000", NULL);
        ms = T0_MS;
        mllog(&b, &g, ms, "INTERVAL_END", "init_stop", NULL, NULL);
        mllog(&b, &g, ms, "INTERVAL_START", "run_start", NULL, NULL);
        bool reached = false;
        int e;
        for (e = 1; e <= 16 && !reached; e++) {
                snprintf(m, sizeof(m), "\"epoch_num\": %d", e);
                mllog(&b, &g, ms, "INTERVAL_START", "epoch_start", NULL, m);
                buf_printf(&b, "iter %d: loss 1.2 (objectness 0.05 rpn_box 0.06 classifier 0.3 box_reg 0.3 mask 0.5) "
                               "lr 0.08 410.0 img/s\n", e * 1833);
                ms += epoch_s * 1000LL;
                mllog(&b, &g, ms, "INTERVAL_END", "epoch_stop", NULL, m);
                mllog(&b, &g, ms, "INTERVAL_START", "eval_start", NULL, m);
                ms += eval_s * 1000LL;
                /* bbox reaches 0.377 at epoch 13; segm 0.339 then too unless segm_short */
                double bbox = e >= 13 ? 0.3781 : 0.25 + e * 0.009, segm = e >= 13 && !segm_short ? 0.3412 : 0.3380;
                if (e < 13)
                        segm = 0.23 + e * 0.008;
                snprintf(v, sizeof(v), "{\"BBOX\": %.4f, \"SEGM\": %.4f}", bbox, segm);
                mllog(&b, &g, ms, "POINT_IN_TIME", "eval_accuracy", v, m);
                mllog(&b, &g, ms, "INTERVAL_END", "eval_stop", NULL, m);
                reached = bbox >= 0.377 && segm >= 0.339;
        }
        mllog(&b, &g, ms, "INTERVAL_END", "run_stop", NULL, reached ? "\"status\": \"success\"" : "\"status\": \"aborted\"");
        buf_puts(&b, "ENDING TIMING RUN AT 2026-11-22 03:31:00 PM\n");
        buf_printf(&b, "RESULT,OBJECT_DETECTION,,%lld,benchd,2026-11-22 01:00:00 PM\n", (ms - T0_MS) / 1000);
        return buf_detach(&b);
}

static void test_maskrcnn_report(void)
{
        /* trials 1-4 converge at epoch 13: 13 x (epoch + 55 s) = 9035, 8775, 9295, 8515 s; trial 5
         * meets bbox but not segm and stops after 16 epochs, aborted */
        static const int epoch_s[5] = { 640, 620, 660, 600, 640 };
        struct report_trial rt[5];
        char *paths[5];
        for (int i = 0; i < 5; i++) {
                _cleanup_free_ char *text = maskrcnn_log(epoch_s[i], 55, i == 4, i);
                _cleanup_free_ char *name = xasprintf("mrcnn_%d.log", i + 1);
                paths[i] = write_log(name, text);
                rt[i] = (struct report_trial){ .number = i + 1, .log_path = paths[i] };
                (void) mlperf_read_trial_segm(paths[i], 0.377, 0.339, &rt[i].result, NULL);
        }
        ok(rt[0].result.converged && rt[0].result.epochs == 13 && near(rt[0].result.time_to_train, 9035),
           "maskrcnn trial 1: both targets at epoch 13, 9035 s");
        ok(rt[4].result.outcome == OUT_ABORTED && !rt[4].result.converged && rt[4].result.epochs == 16,
           "  trial 5: segm short through epoch 16, aborted");
        const struct report_reference dss = { 150.640, 0, "MLPerf Training v0.7, Dell EMC DSS8440 (Mask R-CNN, PyTorch)" };
        struct report_run run = { "20261122-170000-eeee", "DSS8440", "maskrcnn", "completed", rt, 5, &dss, NULL, 0, NULL, false, NULL };
        struct mlperf_score s;
        report_score(&run, &s);
        /* drop 8515 (fastest) and trial 5 (slowest): (8775 + 9035 + 9295) / 3 = 9035 s */
        ok(s.scored && near(s.score, 9035.0 / 60), "  olympic mean 9035 s = 150.583 min");
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        char line[512];
        is_int(report_write(&run, 1, REPORT_TEXT, REPORT_REFERENCE, &out), 0, "maskrcnn text report");
        for (const char *p = out.s; *p;) {
                size_t len = strcspn(p, "\n");
                printf("# %.*s\n", (int)len, p);
                p += len + (p[len] == '\n');
        }
        like(out.s, "  TRIAL STATUS        TIME(s) TIME(min) EPOCHS     BBOX/SEGM      TARGET REACHED", "  a BBOX/SEGM column");
        like(line_of(out.s, "  1     success", line, sizeof(line)),
             "  1     success        9035.0    150.58     13 0.3781/0.3412 0.377/0.339     yes", "  trial 1: both accuracies, both targets");
        like(line_of(out.s, "  5 ", line, sizeof(line)),
             "  5     aborted       11120.0    185.33     16 0.3781/0.3380 0.377/0.339      no", "  trial 5: not reached");
        like(line, "segm accuracy 0.3380 below the target 0.3390", "    because of segm");
        like(out.s, "  published: 150.640 min (MLPerf Training v0.7, Dell EMC DSS8440 (Mask R-CNN, PyTorch)); "
                    "ours 150.583 min, -0.0%", "  DSS8440's published 150.640 min and ours");
        _cleanup_buf_ struct bd_buf js = BD_BUF_INIT;
        is_int(report_write(&run, 1, REPORT_JSON, 0, &js), 0, "maskrcnn JSON report");
        cJSON *root = cJSON_Parse(js.s);
        ok(jnum(root, "0.trials.0.accuracy", 0.3781) && jnum(root, "0.trials.0.accuracy_segm", 0.3412),
           "  a trial's accuracy and accuracy_segm");
        ok(jnum(root, "0.trials.0.target", 0.377) && jnum(root, "0.trials.0.target_segm", 0.339),
           "  and both targets");
        cJSON_Delete(root);
        for (int i = 0; i < 5; i++)
                free(paths[i]);
}

/* ---- size: 5 trials of 80 epochs ----
 * How fast they parse is measured in bench/report-speed.sh, not asserted
 * here; this prints the time for whoever reads the log. */

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_long_logs(void)
{
        double worst = 0;
        long lines = 0;
        for (int i = 0; i < 5; i++) {
                struct gen g = { .prefix = "", .epoch_s = 10, .eval_s = 15, .progress = 30, .converge_at = 80,
                                 .throughput = true };
                _cleanup_free_ char *text = ssd_log(&g, i);
                _cleanup_free_ char *name = xasprintf("speed_%d.log", i);
                _cleanup_free_ char *path = write_log(name, text);
                struct mlperf_trial t;
                double best = 1e9;
                for (int rep = 0; rep < 5; rep++) {
                        double t0 = now();
                        (void) mlperf_read_trial(path, TARGET, &t, NULL);
                        double d = now() - t0;
                        if (d < best)
                                best = d;
                }
                if (best > worst)
                        worst = best;
                lines = t.lines;
                if (i == 0)
                        ok(t.converged && t.epochs == 80 && t.lines > 2500, "an 80-epoch trial of 2500+ lines");
        }
        printf("# parse: %.3f ms per trial at worst (best of 5), %ld lines each\n", worst * 1e3, lines);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path);
}

/* One rank: its allreduce results have no bus bandwidth ("busbw_gbps": null):
 * a converged trial without a score, never a 0 GB/s one. */
static void test_one_rank_allreduce(void)
{
        const char *log =
                ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1000, \"event_type\": \"INTERVAL_START\", \"key\": "
                "\"run_start\", \"value\": null, \"metadata\": {}}\n"
                ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1001, \"event_type\": \"POINT_IN_TIME\", \"key\": "
                "\"allreduce_result\", \"value\": {\"bytes\": 4096, \"time_us\": 0.1, \"algbw_gbps\": 40.0, "
                "\"busbw_gbps\": null, \"wrong\": 0}, \"metadata\": {\"ranks\": 1}}\n"
                ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1002, \"event_type\": \"INTERVAL_END\", \"key\": "
                "\"run_stop\", \"value\": null, \"metadata\": {\"status\": \"success\"}}\n";
        struct mlperf_trial t;
        mlperf_parse_text(log, strlen(log), -1, &t);
        ok(t.bad_lines == 0 && t.ar_sizes == 1 && isnan(t.ar_busbw) && t.ar_algbw == 40.0,
           "one rank: a null busbw_gbps is read, as no bus bandwidth");
        ok(t.converged, "  the trial converged (no wrong element)");
        struct mlperf_score s;
        mlperf_score(&t, 1, "allreduce", &s);
        ok(!s.scored && s.valid && strstr(s.reason, "no bus bandwidth: one rank"), "  no score, and why");
}

int main(void)
{
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/test-mlperf.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
                printf("Bail out! mkdtemp: %s\n", strerror(errno));
                return 1;
        }
        test_trial_logs();
        test_corner_cases();
        test_allreduce();
        test_score();
        test_report();
        test_maskrcnn_report();
        test_long_logs();
        free_files(&run_a, 5);
        free_files(&run_b, 5);
        free_files(&run_c, 5);
        free_files(&run_ar, 3);
        (void) nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
        test_one_rank_allreduce();
        return done_testing();
}

/* mlperf.c: MLPerf log parsing and scoring. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fs.h"
#include "mlperf.h"

#define TRIALS_FOR_SCORE 5

const char *trial_outcome_name(enum trial_outcome o)
{
        static const char *const names[] = { "success", "aborted", "incomplete", "no run", "missing" };
        return (unsigned)o < ARRAY_SIZE(names) ? names[o] : "unknown";
}

static double num_value(const cJSON *v, bool *ok)
{
        *ok = cJSON_IsNumber(v);
        return *ok ? v->valuedouble : 0;
}

static int epoch_of(const cJSON *meta, const cJSON *value, const char *key)
{
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(meta, "epoch_num");
        if (cJSON_IsNumber(e))
                return (int)e->valuedouble;
        if (!strcmp(key, "block_stop")) {
                const cJSON *f = cJSON_GetObjectItemCaseSensitive(meta, "first_epoch_num");
                const cJSON *c = cJSON_GetObjectItemCaseSensitive(meta, "epoch_count");
                if (cJSON_IsNumber(f) && cJSON_IsNumber(c))
                        return (int)(f->valuedouble + c->valuedouble - 1);
        }
        (void) value;
        return -1;
}

static void bad_line(struct mlperf_trial *t, long lineno)
{
        if (!t->bad_lines++)
                t->first_bad_line = lineno;
}

void mlperf_parse_text(const char *text, double target, struct mlperf_trial *t)
{
        memset(t, 0, sizeof(*t));
        if (target >= 0) {
                t->has_target = true;
                t->target = target;
        }
        bool started = false, stopped = false, aborted = false;
        double tp_sum = 0;
        int tp_n = 0;
        char status[32] = "";
        const char *p = text;
        long lineno = 0;
        while (*p) {
                const char *eol = strchr(p, '\n');
                size_t len = eol ? (size_t)(eol - p) : strlen(p);
                lineno++;
                t->lines++;
                const char *m = memmem(p, len, ":::MLLOG", 8);
                if (m) {
                        t->mllog_lines++;
                        const char *js = m + 8;
                        size_t jl = len - (size_t)(js - p);
                        cJSON *j = cJSON_ParseWithLength(js, jl);
                        const cJSON *key = cJSON_GetObjectItemCaseSensitive(j, "key");
                        const cJSON *tm = cJSON_GetObjectItemCaseSensitive(j, "time_ms");
                        if (!j || !cJSON_IsString(key) || !cJSON_IsNumber(tm)) {
                                bad_line(t, lineno);
                        } else {
                                const char *k = key->valuestring;
                                const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "value");
                                const cJSON *meta = cJSON_GetObjectItemCaseSensitive(j, "metadata");
                                bool ok;
                                int ep = epoch_of(meta, v, k);
                                if (ep > t->epochs && strcmp(k, "epoch_start") && strcmp(k, "block_start"))
                                        t->epochs = ep;
                                if (!strcmp(k, "run_start")) {
                                        if (started)
                                                t->duplicate_keys++;
                                        else
                                                t->run_start_ms = tm->valuedouble;
                                        started = true;
                                } else if (!strcmp(k, "run_stop")) {
                                        if (stopped)
                                                t->duplicate_keys++;
                                        else {
                                                t->run_stop_ms = tm->valuedouble;
                                                const cJSON *st = cJSON_GetObjectItemCaseSensitive(meta, "status");
                                                snprintf(status, sizeof(status), "%s",
                                                         cJSON_IsString(st) ? st->valuestring : "unknown");
                                                aborted = strcmp(status, "success") != 0;
                                        }
                                        stopped = true;
                                } else if (!strcmp(k, "submission_benchmark") && cJSON_IsString(v)) {
                                        snprintf(t->benchmark, sizeof(t->benchmark), "%s", v->valuestring);
                                } else if (!strcmp(k, "eval_accuracy")) {
                                        double a = num_value(v, &ok);
                                        if (ok) {
                                                t->accuracy = a;
                                                t->has_accuracy = true;
                                        }
                                } else if (!strcmp(k, "eval_target") || !strcmp(k, "target_accuracy")) {
                                        double a = num_value(v, &ok);
                                        if (ok) {
                                                t->target = a;
                                                t->has_target = true;
                                        }
                                } else if (!strcmp(k, "throughput")) {
                                        double a = num_value(v, &ok);
                                        if (ok) {
                                                tp_sum += a;
                                                tp_n++;
                                        }
                                } else if (!strcmp(k, "train_samples")) {
                                        t->train_samples = (long)num_value(v, &ok);
                                } else if (!strcmp(k, "global_batch_size")) {
                                        t->global_batch_size = (long)num_value(v, &ok);
                                } else if (!strcmp(k, "allreduce_result") && cJSON_IsObject(v)) {
                                        const cJSON *b = cJSON_GetObjectItemCaseSensitive(v, "bytes");
                                        const cJSON *bus = cJSON_GetObjectItemCaseSensitive(v, "busbw_gbps");
                                        const cJSON *alg = cJSON_GetObjectItemCaseSensitive(v, "algbw_gbps");
                                        const cJSON *w = cJSON_GetObjectItemCaseSensitive(v, "wrong");
                                        if (!cJSON_IsNumber(b) || !cJSON_IsNumber(bus) || !cJSON_IsNumber(w)) {
                                                bad_line(t, lineno);
                                        } else {
                                                t->ar_sizes++;
                                                t->ar_wrong += (long long)w->valuedouble;
                                                if (b->valuedouble >= t->ar_bytes) {
                                                        t->ar_bytes = b->valuedouble;
                                                        t->ar_busbw = bus->valuedouble;
                                                        t->ar_algbw = cJSON_IsNumber(alg) ? alg->valuedouble : 0;
                                                }
                                        }
                                }
                        }
                        cJSON_Delete(j);
                }
                p += len + (eol ? 1 : 0);
        }
        if (!started) {
                t->outcome = OUT_NO_RUN;
                snprintf(t->reason, sizeof(t->reason), "no run_start in the log");
        } else if (!stopped) {
                t->outcome = OUT_INCOMPLETE;
                snprintf(t->reason, sizeof(t->reason), "run_start without run_stop: the trial was cut short");
        } else if (aborted) {
                t->outcome = OUT_ABORTED;
                snprintf(t->reason, sizeof(t->reason), "run_stop status '%s'", status);
        } else
                t->outcome = OUT_SUCCESS;
        if (started && stopped && t->run_stop_ms >= t->run_start_ms)
                t->time_to_train = (t->run_stop_ms - t->run_start_ms) / 1000.0;
        if (tp_n)
                t->throughput = tp_sum / tp_n;
        else if (t->train_samples > 0 && t->epochs > 0 && t->time_to_train > 0)
                t->throughput = (double)t->train_samples * t->epochs / t->time_to_train;
        bool allreduce = !strcmp(t->benchmark, "allreduce");
        if (t->outcome != OUT_SUCCESS)
                t->converged = false;
        else if (allreduce)
                t->converged = t->ar_sizes > 0 && t->ar_wrong == 0;
        else if (t->has_target)
                t->converged = t->has_accuracy && t->accuracy >= t->target;
        else
                t->converged = true; /* no quality target known: success is all there is */
        if (t->outcome == OUT_SUCCESS && !t->converged) {
                if (allreduce)
                        snprintf(t->reason, sizeof(t->reason), "%lld wrong elements", t->ar_wrong);
                else
                        snprintf(t->reason, sizeof(t->reason), "accuracy %.4f below the target %.4f", t->accuracy,
                                 t->target);
        }
        if (t->outcome == OUT_SUCCESS && !allreduce && t->has_target && !t->has_accuracy)
                snprintf(t->reason, sizeof(t->reason), "no eval_accuracy in the log");
}

void mlperf_parse_file(const char *path, double target, struct mlperf_trial *t)
{
        _cleanup_free_ char *text = NULL;
        struct bd_err err;
        if (read_file(path, 1u << 30, &text, NULL, &err) < 0) {
                memset(t, 0, sizeof(*t));
                t->outcome = OUT_MISSING;
                snprintf(t->reason, sizeof(t->reason), "%.150s", err.msg);
                return;
        }
        mlperf_parse_text(text, target, t);
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

void mlperf_score(const struct mlperf_trial *t, int n, const char *workload, struct mlperf_score *s)
{
        memset(s, 0, sizeof(*s));
        s->trials = n;
        s->valid = true;
        bool allreduce = !strcmp(workload, "allreduce");
        s->higher_is_better = allreduce;
        snprintf(s->unit, sizeof(s->unit), "%s", allreduce ? "GB/s" : "min");
        double v[256];
        int k = 0;
        for (int i = 0; i < n && k < (int)ARRAY_SIZE(v); i++)
                if (t[i].converged)
                        v[k++] = allreduce ? t[i].ar_busbw : t[i].time_to_train / 60.0;
        s->converged = k;
        if (k > 0) {
                double sum = 0, sq = 0;
                for (int i = 0; i < k; i++)
                        sum += v[i];
                s->mean = sum / k;
                for (int i = 0; i < k; i++)
                        sq += (v[i] - s->mean) * (v[i] - s->mean);
                s->sd = k > 1 ? sqrt(sq / (k - 1)) : 0;
                s->sd_pct = s->mean != 0 ? s->sd / s->mean * 100 : 0;
        }
        if (allreduce) {
                if (k == 0) {
                        s->valid = false;
                        snprintf(s->reason, sizeof(s->reason), "no trial completed without wrong elements");
                        return;
                }
                s->scored = true;
                s->score = s->mean;
                snprintf(s->method, sizeof(s->method), "mean bus bandwidth at the largest size over %d trial%s", k,
                         k == 1 ? "" : "s");
                return;
        }
        int failed = n - k;
        if (failed > 1) {
                s->valid = false;
                snprintf(s->reason, sizeof(s->reason), "%d trials did not converge (MLPerf allows one)", failed);
                return;
        }
        if (n < TRIALS_FOR_SCORE) {
                snprintf(s->reason, sizeof(s->reason), "%d of the %d trials MLPerf scores", n, TRIALS_FOR_SCORE);
                return;
        }
        qsort(v, (size_t)k, sizeof(double), cmp_double);
        /* drop the fastest, and the slowest (the non-converged trial when there is one) */
        int lo = 1, hi = failed ? k : k - 1;
        double sum = 0;
        for (int i = lo; i < hi; i++)
                sum += v[i];
        s->scored = true;
        s->score = sum / (hi - lo);
        snprintf(s->method, sizeof(s->method), "olympic mean of %d trials%s", hi - lo,
                 failed ? ", the non-converged one counted as the slowest" : "");
}

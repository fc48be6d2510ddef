/* mlperf.c: MLPerf trial log parsing and scoring. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fs.h"
#include "mlperf.h"
#include "strutil.h"
#include "workload.h"

#define MLLOG_MARK ":::MLLOG"
#define MLLOG_MARK_LEN (sizeof(MLLOG_MARK) - 1)
#define TRIAL_LOG_MAX (1u << 30)        /* bytes of one trial log */
#define EPOCH_MAX 1000000               /* larger epoch numbers are taken as garbage */

const char *mlperf_outcome_name(enum trial_outcome o)
{
        static const char *const names[] = {
                [OUT_SUCCESS] = "success",
                [OUT_ABORTED] = "aborted",
                [OUT_INCOMPLETE] = "incomplete",
                [OUT_NO_RUN] = "no run",
                [OUT_MISSING] = "missing",
                [OUT_RUNNING] = "running",
                [OUT_PENDING] = "pending",
        };
        return (unsigned)o < ARRAY_SIZE(names) ? names[o] : "unknown";
}

/* The workload of a name or an MLPerf name; NULL when none. */
static const struct workload *workload_of(const char *workload)
{
        const struct workload *w = workload_find(workload);
        if (w)
                return w;
        for (const struct workload *const *p = workload_all(); *p; p++)
                if (streq((*p)->mlperf_name, workload))
                        return *p;
        return NULL;
}

bool mlperf_is_bandwidth(const char *workload)
{
        const struct workload *w = workload_of(workload);
        return w && w->result == RESULT_BUS_BANDWIDTH;
}

/* The keys this parser uses; everything else is validated and skipped. */
enum mkey {
        K_OTHER,
        K_BENCHMARK,
        K_SEED,
        K_GLOBAL_BATCH_SIZE,
        K_TRAIN_SAMPLES,
        K_RUN_START,
        K_RUN_STOP,
        K_EPOCH_START,
        K_EPOCH_STOP,
        K_BLOCK_START,
        K_BLOCK_STOP,
        K_EVAL_START,
        K_EVAL_STOP,
        K_EVAL_ACCURACY,
        K_TARGET,
        K_THROUGHPUT,
        K_TRACKED_STATS,
        K_ALLREDUCE_RESULT,
};

static const struct {
        const char *name;
        enum mkey key;
} mkeys[] = {
        { "submission_benchmark", K_BENCHMARK },
        { "seed", K_SEED },
        { "global_batch_size", K_GLOBAL_BATCH_SIZE },
        { "train_samples", K_TRAIN_SAMPLES },
        { "run_start", K_RUN_START },
        { "run_stop", K_RUN_STOP },
        { "epoch_start", K_EPOCH_START },
        { "epoch_stop", K_EPOCH_STOP },
        { "block_start", K_BLOCK_START },
        { "block_stop", K_BLOCK_STOP },
        { "eval_start", K_EVAL_START },
        { "eval_stop", K_EVAL_STOP },
        { "eval_accuracy", K_EVAL_ACCURACY },
        { "eval_target", K_TARGET },
        { "target_accuracy", K_TARGET },
        { "throughput", K_THROUGHPUT },
        { "tracked_stats", K_TRACKED_STATS },
        { "allreduce_result", K_ALLREDUCE_RESULT },
};

static enum mkey mkey_of(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(mkeys); i++)
                if (!strcmp(mkeys[i].name, name))
                        return mkeys[i].key;
        return K_OTHER;
}

struct parse_state {
        struct mlperf_trial *t;
        bool started, stopped;
        char status[32];                /* run_stop's metadata status */
        double tp_sum;
        int max_reached, max_completed; /* highest epoch numbers seen, -1 for none */
        bool zero_based;
};

static const cJSON *member(const cJSON *obj, const char *name)
{
        return cJSON_GetObjectItemCaseSensitive(obj, name);
}

static bool num(const cJSON *v, double *ret)
{
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
                return false;
        *ret = v->valuedouble;
        return true;
}

/* A number that fits a long long exactly enough (counts, seeds, sizes). */
static bool integer(const cJSON *v, long long *ret)
{
        double d;
        if (!num(v, &d) || fabs(d) >= 9.2e18)
                return false;
        *ret = (long long)d;
        return true;
}

static bool epoch_num(const cJSON *meta, const char *name, int *ret)
{
        long long e;
        if (!integer(member(meta, name), &e) || e < 0 || e > EPOCH_MAX)
                return false;
        *ret = (int)e;
        return true;
}

static void saw_epoch(struct parse_state *ps, int e, bool completed)
{
        if (e == 0)
                ps->zero_based = true;
        if (e > ps->max_reached)
                ps->max_reached = e;
        if (completed && e > ps->max_completed)
                ps->max_completed = e;
}

static void bad_line(struct mlperf_trial *t, long lineno)
{
        if (t->bad_lines < MLPERF_BAD_KEPT)
                t->bad_at[t->bad_lines] = lineno;
        if (!t->bad_lines++)
                t->first_bad_line = lineno;
}

/* allreduce_result: {"bytes", "time_us", "algbw_gbps", "busbw_gbps", "wrong"}.
 * false when a needed member is missing. */
static bool allreduce_result(struct mlperf_trial *t, const cJSON *v)
{
        double bytes, busbw, algbw = 0;
        long long wrong;
        const cJSON *bb = member(v, "busbw_gbps");
        if (!num(member(v, "bytes"), &bytes) || !integer(member(v, "wrong"), &wrong))
                return false;
        /* null: one rank, whose allreduce moves nothing between ranks */
        if (cJSON_IsNull(bb))
                busbw = NAN;
        else if (!num(bb, &busbw))
                return false;
        (void) num(member(v, "algbw_gbps"), &algbw);
        t->ar_sizes++;
        t->ar_wrong += wrong;
        if (bytes >= t->ar_bytes) {
                t->ar_bytes = bytes;
                t->ar_busbw = busbw;
                t->ar_algbw = algbw;
        }
        return true;
}

/* One parsed MLLOG record; false when it is unusable (counted as unparseable). */
static bool mllog_record(struct parse_state *ps, const cJSON *j)
{
        struct mlperf_trial *t = ps->t;
        const cJSON *key = member(j, "key");
        double time_ms;
        if (!cJSON_IsObject(j) || !cJSON_IsString(key) || !num(member(j, "time_ms"), &time_ms))
                return false;
        const cJSON *v = member(j, "value"), *meta = member(j, "metadata");
        enum mkey k = mkey_of(key->valuestring);
        double d;
        long long ll;
        int e, count;

        switch (k) {
        case K_OTHER:
                break;
        case K_BENCHMARK:
                if (cJSON_IsString(v))
                        STR_COPY(t->benchmark, v->valuestring);
                break;
        case K_SEED:
                if (integer(v, &ll)) {
                        t->seed = ll;
                        t->has_seed = true;
                }
                break;
        case K_GLOBAL_BATCH_SIZE:
                if (integer(v, &ll) && ll >= 0 && ll <= (long long)1e15)
                        t->global_batch_size = (long)ll;
                break;
        case K_TRAIN_SAMPLES:
                if (integer(v, &ll) && ll >= 0 && ll <= (long long)1e15)
                        t->train_samples = (long)ll;
                break;
        case K_RUN_START:
                if (ps->started)
                        t->duplicate_keys++;
                else
                        t->run_start_ms = time_ms;
                ps->started = true;
                break;
        case K_RUN_STOP: {
                const cJSON *st = member(meta, "status");
                if (ps->stopped) {
                        t->duplicate_keys++;
                        break;
                }
                ps->stopped = true;
                t->run_stop_ms = time_ms;
                STR_COPY(ps->status, cJSON_IsString(st) ? st->valuestring : "");
                break;
        }
        case K_EPOCH_START:
        case K_EPOCH_STOP:
        case K_EVAL_START:
        case K_EVAL_STOP:
                /* an evaluation of epoch e comes after e is finished */
                if (epoch_num(meta, "epoch_num", &e))
                        saw_epoch(ps, e, k != K_EPOCH_START);
                break;
        case K_BLOCK_START:
        case K_BLOCK_STOP:
                if (!epoch_num(meta, "first_epoch_num", &e))
                        break;
                if (k == K_BLOCK_START || !epoch_num(meta, "epoch_count", &count) || count == 0)
                        saw_epoch(ps, e, false);
                else
                        saw_epoch(ps, e + count - 1, true);
                break;
        case K_EVAL_ACCURACY:
                if (epoch_num(meta, "epoch_num", &e)) {
                        saw_epoch(ps, e, true);
                        t->accuracy_epoch = e;
                }
                if (cJSON_IsObject(v)) {
                        double segm;
                        if (!num(member(v, "BBOX"), &d) && !num(member(v, "bbox"), &d))
                                return false;
                        t->has_accuracy_segm = num(member(v, "SEGM"), &segm) || num(member(v, "segm"), &segm);
                        t->accuracy_segm = t->has_accuracy_segm ? segm : 0;
                } else if (!num(v, &d))
                        return false;
                t->accuracy = d;
                t->has_accuracy = true;
                if (!t->evals++ || d > t->best_accuracy) {
                        t->best_accuracy = d;
                        t->best_accuracy_segm = t->has_accuracy_segm ? t->accuracy_segm : 0;
                        t->best_epoch = t->accuracy_epoch;
                }
                if (!t->met && t->has_target && d >= t->target &&
                    (!t->has_target_segm || (t->has_accuracy_segm && t->accuracy_segm >= t->target_segm))) {
                        t->met = true;
                        t->met_s = ps->started ? (time_ms - t->run_start_ms) / 1000.0 : 0;
                        t->met_epoch = t->accuracy_epoch;
                }
                break;
        case K_TARGET:
                if (!num(v, &d))
                        return false;
                t->target = d;
                t->has_target = true;
                t->target_from_log = true;
                break;
        case K_THROUGHPUT:
        case K_TRACKED_STATS:
                if (k == K_TRACKED_STATS && !cJSON_IsObject(v))
                        break;
                if (!num(k == K_THROUGHPUT ? v : member(v, "throughput"), &d))
                        return k == K_TRACKED_STATS;    /* tracked_stats without throughput is fine */
                t->throughput_logged++;
                ps->tp_sum += d;
                break;
        case K_ALLREDUCE_RESULT:
                return allreduce_result(t, v);
        }
        return true;
}

/* mpirun --tag-output: "[JOB,RANK]<stdout>:" or "<stderr>:".  Returns where the
 * line's own text starts and sets *rank (-1 when there is no tag). */
static const char *skip_tag(const char *p, const char *end, long *rank)
{
        const char *q = p;
        long r = 0;
        *rank = -1;
        if (q == end || *q != '[')
                return p;
        for (q++; q < end && *q >= '0' && *q <= '9'; q++)
                ;
        if (q == end || *q != ',')
                return p;
        for (q++; q < end && *q >= '0' && *q <= '9'; q++)
                r = r < 100000000 ? r * 10 + (*q - '0') : r;
        if (q == end || *q++ != ']')
                return p;
        if (q < end && *q == '<') {
                const char *gt = memchr(q, '>', (size_t)(end - q));
                if (!gt || gt + 1 == end || gt[1] != ':')
                        return p;
                q = gt + 2;
        }
        while (q < end && *q == ' ')    /* Open MPI 5 adds a blank */
                q++;
        *rank = r;
        return q;
}

const char *mlperf_line_body(const char *p, const char *end, long *rank)
{
        return skip_tag(p, end, rank);
}

static bool starts_with(const char *p, const char *end, const char *prefix)
{
        size_t n = strlen(prefix);
        return (size_t)(end - p) >= n && !memcmp(p, prefix, n);
}

/* "RESULT,<BENCHMARK>,,<seconds>,<org>,<date>" */
static void result_line(struct mlperf_trial *t, const char *p, const char *end)
{
        if (t->result_lines++)
                return;
        for (int field = 0; field < 3; field++) {
                const char *c = memchr(p, ',', (size_t)(end - p));
                if (!c)
                        return;
                p = c + 1;
        }
        const char *c = memchr(p, ',', (size_t)(end - p));
        char tmp[32];
        size_t n = (size_t)((c ? c : end) - p);
        double sec;
        if (n == 0 || n >= sizeof(tmp))
                return;
        memcpy(tmp, p, n);
        tmp[n] = '\0';
        if (str_parse_double(tmp, &sec) == 0 && sec >= 0)
                t->result_seconds = sec;
}

static void parse_line(struct parse_state *ps, const char *p, const char *end, long lineno)
{
        struct mlperf_trial *t = ps->t;
        long rank;
        if (end > p && end[-1] == '\r')
                end--;
        const char *body = skip_tag(p, end, &rank);
        const char *m = memmem(body, (size_t)(end - body), MLLOG_MARK, MLLOG_MARK_LEN);
        if (!m) {
                if (starts_with(body, end, "RESULT,"))
                        result_line(t, body, end);
                else if (starts_with(body, end, "ENDING TIMING RUN AT"))
                        t->ending_seen = true;
                return;
        }
        t->mllog_lines++;
        if (rank > 0) {
                t->other_rank_lines++;
                return;
        }
        const char *js = m + MLLOG_MARK_LEN, *parse_end = NULL;
        cJSON *j = cJSON_ParseWithLengthOpts(js, (size_t)(end - js), &parse_end, false);
        bool good = j != NULL;
        /* nothing but blanks after the object, then use it */
        for (const char *q = parse_end; good && q < end; q++)
                if (*q != ' ' && *q != '\t')
                        good = false;
        if (good)
                good = mllog_record(ps, j);
        if (!good)
                bad_line(t, lineno);
        cJSON_Delete(j);
}

/* No segm target, or a SEGM accuracy that meets it. */
static bool segm_reached(const struct mlperf_trial *t)
{
        return !t->has_target_segm || (t->has_accuracy_segm && t->accuracy_segm >= t->target_segm);
}

/* Why a detector's accuracy falls short: "accuracy 0.3 below the target
 * 0.377", "segm accuracy ..." or "no segm accuracy in the log". */
static void short_of(const struct mlperf_trial *t, char *buf, size_t n)
{
        if (t->accuracy < t->target)
                snprintf(buf, n, "accuracy %.4f below the target %.4f", t->accuracy, t->target);
        else if (!t->has_accuracy_segm)
                snprintf(buf, n, "no segm accuracy in the log (segm target %.4f)", t->target_segm);
        else
                snprintf(buf, n, "segm accuracy %.4f below the target %.4f", t->accuracy_segm, t->target_segm);
}

static void finish(struct parse_state *ps)
{
        struct mlperf_trial *t = ps->t;
        bool allreduce = mlperf_is_bandwidth(t->benchmark) || t->ar_sizes > 0;
        int base = ps->zero_based ? 1 : 0;
        t->epochs = ps->max_reached >= 0 ? ps->max_reached + base : 0;
        t->epochs_completed = ps->max_completed >= 0 ? ps->max_completed + base : 0;
        bool timed = t->timed = ps->started && ps->stopped && t->run_stop_ms >= t->run_start_ms;
        if (timed)
                t->time_to_train = (t->run_stop_ms - t->run_start_ms) / 1000.0;
        if (t->throughput_logged)
                t->throughput = ps->tp_sum / t->throughput_logged;
        else if (t->train_samples > 0 && t->epochs_completed > 0 && t->time_to_train > 0)
                t->throughput = (double)t->train_samples * t->epochs_completed / t->time_to_train;

        if (allreduce)
                t->reached = t->ar_sizes > 0 && t->ar_wrong == 0;
        else
                t->reached = t->has_target && t->has_accuracy && t->accuracy >= t->target && segm_reached(t);

        if (!ps->started) {
                t->outcome = OUT_NO_RUN;
                STR_COPY(t->reason, t->lines ? "no run_start in the log" : "empty log");
        } else if (!ps->stopped) {
                t->outcome = OUT_INCOMPLETE;
                if (t->ending_seen)
                        STR_COPY(t->reason, "no run_stop: the trainer ended without one");
                else if (t->epochs)
                        snprintf(t->reason, sizeof(t->reason),
                                 "no run_stop: the log ends in epoch %d (killed or truncated)", t->epochs);
                else
                        STR_COPY(t->reason, "no run_stop: the log ends after run_start (killed or truncated)");
        } else if (strcmp(ps->status, "success")) {
                t->outcome = OUT_ABORTED;
                int n = snprintf(t->reason, sizeof(t->reason), "run_stop status '%.32s'",
                                 ps->status[0] ? ps->status : "(none)");
                /* and what went wrong, when the log says */
                if (allreduce && t->ar_wrong)
                        snprintf(t->reason + n, sizeof(t->reason) - (size_t)n, ": %lld wrong elements", t->ar_wrong);
                else if (!allreduce && t->has_target && t->has_accuracy && !t->reached) {
                        char why[120];
                        short_of(t, why, sizeof(why));
                        snprintf(t->reason + n, sizeof(t->reason) - (size_t)n, ": %s", why);
                }
        } else {
                t->outcome = OUT_SUCCESS;
                if (!timed)
                        STR_COPY(t->reason, "run_stop before run_start");
                else if (allreduce && !t->ar_sizes)
                        STR_COPY(t->reason, "no allreduce_result in the log");
                else if (allreduce && t->ar_wrong)
                        snprintf(t->reason, sizeof(t->reason), "%lld wrong elements", t->ar_wrong);
                else if (!allreduce && t->has_target && !t->has_accuracy)
                        STR_COPY(t->reason, "no eval_accuracy in the log");
                else if (!allreduce && t->has_target && !t->reached)
                        short_of(t, t->reason, sizeof(t->reason));
        }
        /* without any target the trainer's own "success" is all there is to go by;
         * a run that took less than the log's millisecond counts (an allreduce
         * on small sizes can) */
        t->converged = t->outcome == OUT_SUCCESS && timed && (t->reached || (!allreduce && !t->has_target));
}

void mlperf_parse_text(const char *text, size_t len, double target, struct mlperf_trial *t)
{
        mlperf_parse_text_segm(text, len, target, -1, t);
}

void mlperf_parse_text_segm(const char *text, size_t len, double target, double target_segm, struct mlperf_trial *t)
{
        struct parse_state ps = { .t = t, .max_reached = -1, .max_completed = -1 };
        memset(t, 0, sizeof(*t));
        if (target >= 0) {
                t->has_target = true;
                t->target = target;
        }
        if (target_segm >= 0) {
                t->has_target_segm = true;
                t->target_segm = target_segm;
        }
        const char *p = text, *end = text + len;
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));
                const char *le = eol ? eol : end;
                t->lines++;
                parse_line(&ps, p, le, t->lines);
                p = eol ? eol + 1 : end;
        }
        finish(&ps);
}

int mlperf_read_trial(const char *path, double target, struct mlperf_trial *t, struct bd_err *err)
{
        return mlperf_read_trial_segm(path, target, -1, t, err);
}

int mlperf_read_trial_segm(const char *path, double target, double target_segm, struct mlperf_trial *t,
                           struct bd_err *err)
{
        _cleanup_free_ char *text = NULL;
        struct bd_err e;
        size_t len;
        int r = fs_read_file(path, TRIAL_LOG_MAX, &text, &len, &e);
        if (r < 0) {
                memset(t, 0, sizeof(*t));
                t->outcome = OUT_MISSING;
                STR_COPY(t->reason, e.msg);
                return bd_err_set(err, r, "%s", e.msg);
        }
        mlperf_parse_text_segm(text, len, target, target_segm, t);
        return 0;
}

/* ---- scoring ---- */

struct scored_value {
        double v;
        int index;
};

static int cmp_value(const void *a, const void *b)
{
        const struct scored_value *x = a, *y = b;
        if (x->v != y->v)
                return x->v < y->v ? -1 : 1;
        return x->index - y->index;     /* ties: earlier trial first, so the result is stable */
}

static void mean_sd(const struct scored_value *v, int k, struct mlperf_score *s)
{
        double sum = 0, sq = 0;
        if (k == 0)
                return;
        for (int i = 0; i < k; i++)
                sum += v[i].v;
        s->mean = sum / k;
        for (int i = 0; i < k; i++)
                sq += (v[i].v - s->mean) * (v[i].v - s->mean);
        s->sd = k > 1 ? sqrt(sq / (k - 1)) : 0;
        s->sd_pct = s->mean != 0 ? s->sd / s->mean * 100 : 0;
}

static void score_allreduce(const struct mlperf_trial *t, int n, const struct scored_value *v, int k,
                            struct mlperf_score *s)
{
        for (int i = 0; i < k; i++)
                if (isnan(t[v[i].index].ar_busbw)) {
                        s->mean = s->sd = s->sd_pct = NAN;
                        snprintf(s->reason, sizeof(s->reason),
                                 "no bus bandwidth: one rank moves nothing between ranks (its algorithm bandwidth "
                                 "is in the log)");
                        return;
                }
        if (k == 0) {
                s->valid = false;
                snprintf(s->reason, sizeof(s->reason),
                         "no trial converged (%d trial%s, none succeeded without wrong elements)", n, n == 1 ? "" : "s");
                return;
        }
        for (int i = 1; i < k; i++)
                if (t[v[i].index].ar_bytes != t[v[0].index].ar_bytes) {
                        s->valid = false;
                        snprintf(s->reason, sizeof(s->reason),
                                 "trials ended at different largest sizes (%.0f and %.0f bytes)", t[v[0].index].ar_bytes,
                                 t[v[i].index].ar_bytes);
                        return;
                }
        s->scored = true;
        s->score = s->mean;
        if (k == n)
                snprintf(s->method, sizeof(s->method), "mean bus bandwidth at the largest size over %d trial%s", k,
                         k == 1 ? "" : "s");
        else
                snprintf(s->method, sizeof(s->method),
                         "mean bus bandwidth at the largest size over %d of %d trials, %d did not converge", k, n, n - k);
}

/* A throughput workload: the mean rate of the trials that gave one. */
static void score_throughput(int n, int k, struct mlperf_score *s)
{
        if (k == 0) {
                s->valid = false;
                snprintf(s->reason, sizeof(s->reason), "no trial gave a result (%d trial%s)", n, n == 1 ? "" : "s");
                return;
        }
        s->scored = true;
        s->score = s->mean;
        if (k == n)
                snprintf(s->method, sizeof(s->method), "mean throughput over %d trial%s", k, k == 1 ? "" : "s");
        else
                snprintf(s->method, sizeof(s->method), "mean throughput over %d of %d trials, %d gave none", k, n,
                         n - k);
}

void mlperf_score(const struct mlperf_trial *t, int n, const char *workload, struct mlperf_score *s)
{
        mlperf_score_of(t, n, workload_of(workload), s);
}

void mlperf_score_of(const struct mlperf_trial *t, int n, const struct workload *w, struct mlperf_score *s)
{
        bool allreduce = w && w->result == RESULT_BUS_BANDWIDTH;
        bool rate = w && w->result == RESULT_THROUGHPUT;
        memset(s, 0, sizeof(*s));
        s->trials = n;
        s->valid = true;
        s->fastest = s->slowest = -1;
        s->higher_is_better = allreduce || (rate && w->higher_is_better);
        s->required = allreduce || rate ? 1 : 5;
        STR_COPY(s->unit, w ? w->unit : "min");
        if (n < 0)
                n = 0;

        _cleanup_free_ struct scored_value *v = xcalloc((size_t)n + 1, sizeof(*v));
        int k = 0, failed_index = -1;
        for (int i = 0; i < n; i++) {
                if (t[i].converged)
                        v[k++] = (struct scored_value){ allreduce ? t[i].ar_busbw
                                                        : rate    ? t[i].throughput
                                                                  : t[i].time_to_train / 60.0, i };
                else
                        failed_index = i;
        }
        s->converged = k;
        mean_sd(v, k, s);
        int live = 0;
        for (int i = 0; i < n; i++)
                live += t[i].outcome == OUT_RUNNING || t[i].outcome == OUT_PENDING;
        if (live) {
                /* trials that ended without converging count already: two of
                 * them make the result invalid whatever the rest do */
                int ended_failed = n - k - live;
                if (!allreduce && !rate && ended_failed > 1) {
                        s->valid = false;
                        snprintf(s->reason, sizeof(s->reason),
                                 "%d trials did not converge (MLPerf allows one), with %d still to finish",
                                 ended_failed, live);
                } else
                        snprintf(s->reason, sizeof(s->reason), "the run has not ended (%d of %d trial%s still to finish)",
                                 live, n, n == 1 ? "" : "s");
                return;
        }
        if (allreduce) {
                score_allreduce(t, n, v, k, s);
                return;
        }
        if (rate) {
                score_throughput(n, k, s);
                return;
        }

        int failed = n - k;
        if (n == 0) {
                snprintf(s->reason, sizeof(s->reason), "no trials");
                return;
        }
        if (failed > 1) {
                s->valid = false;
                snprintf(s->reason, sizeof(s->reason), "%d trials did not converge (MLPerf allows one)", failed);
                return;
        }
        if (n != s->required) {
                if (n < s->required)
                        snprintf(s->reason, sizeof(s->reason), "%d of %d trials", n, s->required);
                else
                        snprintf(s->reason, sizeof(s->reason), "%d trials, MLPerf scores exactly %d", n, s->required);
                return;
        }
        qsort(v, (size_t)k, sizeof(*v), cmp_value);
        /* drop the fastest, and the slowest: the non-converged trial when there is one */
        int lo = 1, hi = failed ? k : k - 1;
        double sum = 0;
        for (int i = lo; i < hi; i++)
                sum += v[i].v;
        s->scored = true;
        s->score = sum / (hi - lo);
        s->fastest = v[0].index;
        s->slowest = failed ? failed_index : v[k - 1].index;
        snprintf(s->method, sizeof(s->method), "olympic mean of %d trials%s", hi - lo,
                 failed ? ", the non-converged one counted as the slowest" : "");
}

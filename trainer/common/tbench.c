/* tbench.c: throughput mode (tbench.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "buf.h"
#include "fs.h"
#include "json.h"
#include "macro.h"
#include "mllog.h"
#include "stats.h"
#include "tbench.h"
#include "trun.h"

static const char *const outcome_name[] = { "completed", "nan", "oom", "failed" };

void tbench_init(struct tbench *b, const struct topt_common *c)
{
        memset(b, 0, sizeof(*b));
        b->steps = c->benchmark_steps;
        b->warmup = c->benchmark_steps > 0 ? c->warmup_steps : 0;
        if (b->steps > 0) {
                b->secs = xcalloc((size_t)b->steps, sizeof(double));
                b->items = xcalloc((size_t)b->steps, sizeof(double));
        }
}

int64_t tbench_total(const struct tbench *b)
{
        return b->steps > 0 ? b->warmup + b->steps : 0;
}

static int timed(const struct tbench *b, int64_t step)
{
        return b->steps > 0 && step > b->warmup && step <= b->warmup + b->steps;
}

int tbench_begin(struct tbench *b, struct bd_backend *be, int64_t step)
{
        if (!timed(b, step))
                return 0;
        int r = be->ops->sync(be);
        b->c0 = be->count;
        b->t0 = trun_now();
        return r;
}

int tbench_end(struct tbench *b, struct bd_backend *be, int64_t step, double items)
{
        if (!timed(b, step))
                return 0;
        int r = be->ops->sync(be);
        double dt = trun_now() - b->t0;
        if (r == 0 && b->n < b->steps) {
                b->secs[b->n] = dt;
                b->items[b->n] = items;
                b->n++;
                b->ops.elementwise += be->count.elementwise - b->c0.elementwise;
                b->ops.casts += be->count.casts - b->c0.casts;
                b->ops.convolutions += be->count.convolutions - b->c0.convolutions;
                b->ops.sums_read += be->count.sums_read - b->c0.sums_read;
        }
        return r;
}

enum tbench_outcome tbench_outcome_of(int r)
{
        return r == -ENOMEM ? TBENCH_OOM : r == -EDOM ? TBENCH_NAN : TBENCH_FAILED;
}

enum tbench_outcome tbench_outcome_end(enum run_end end, int fail_r)
{
        switch (end) {
        case RUN_DIVERGED: return TBENCH_NAN;
        case RUN_FAILED: return tbench_outcome_of(fail_r);
        case RUN_FAILED_ELSEWHERE: return TBENCH_FAILED;
        default: return TBENCH_COMPLETED;
        }
}

int tbench_success(const struct tbench *b, enum tbench_outcome outcome, enum run_end end)
{
        if (tbench_on(b))
                return outcome == TBENCH_COMPLETED && b->n == b->steps;
        return end == RUN_REACHED;
}

static void stats_json(struct bd_buf *o, const char *key, const struct stats *s, const char *unit, int ci)
{
        buf_printf(o, ",\n  \"%s\": {\"avg\": ", key);
        json_number(o, s->mean);
        buf_puts(o, ", \"min\": ");
        json_number(o, s->min);
        buf_puts(o, ", \"max\": ");
        json_number(o, s->max);
        buf_puts(o, ", \"sd\": ");
        json_number(o, s->sd);
        buf_printf(o, ", \"count\": %zu", s->n);
        if (ci) {
                buf_puts(o, ", \"ci95_lo\": ");
                json_number(o, s->ci_lo);
                buf_puts(o, ", \"ci95_hi\": ");
                json_number(o, s->ci_hi);
        }
        buf_puts(o, ", \"unit\": ");
        json_quote(o, unit);
        buf_puts(o, "}");
}

static void list_json(struct bd_buf *o, const char *key, const double *v, int64_t n)
{
        buf_printf(o, ",\n  \"%s\": [", key);
        for (int64_t i = 0; i < n; i++) {
                if (i)
                        buf_puts(o, ", ");
                json_number(o, v[i]);
        }
        buf_puts(o, "]");
}

/* the unique id: XXH3-128 of the arguments after the program (but --result
 * FILE: where the result goes does not change what was measured),
 * NUL-separated */
static void args_id(int argc, char **argv, char out[33])
{
        XXH3_state_t *st = XXH3_createState();
        XXH3_128bits_reset(st);
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--result")) {
                        i++;
                        continue;
                }
                if (!strncmp(argv[i], "--result=", 9))
                        continue;
                XXH3_128bits_update(st, argv[i], strlen(argv[i]) + 1);
        }
        XXH128_hash_t h = XXH3_128bits_digest(st);
        XXH3_freeState(st);
        snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.high64, (unsigned long long)h.low64);
}

int tbench_finish(struct tbench *b, const struct tbench_run *run, int rank, enum tbench_outcome outcome,
                  double loss, struct bd_err *err)
{
        if (rank != 0)
                return 0;
        /* a number only for a run that completed every timed step */
        if (outcome == TBENCH_COMPLETED && b->n < b->steps)
                outcome = TBENCH_FAILED;
        double *rate = xcalloc((size_t)(b->n ? b->n : 1), sizeof(double));
        for (int64_t i = 0; i < b->n; i++)
                rate[i] = b->items[i] / b->secs[i];
        struct stats st, si;
        stats_summary(b->secs, (size_t)b->n, &st);
        stats_summary(rate, (size_t)b->n, &si);
        char meta[512];
        double n = b->n ? (double)b->n : 1;
        double ops[4] = { (double)b->ops.elementwise / n, (double)b->ops.casts / n, (double)b->ops.convolutions / n,
                          (double)b->ops.sums_read / n };
        static const char *const op_key[4] = { "elementwise", "casts", "convolutions", "sums_read" };
        if (b->n)
                printf("# ops per step: %.6g element launches (%.6g casts), %.6g convolutions, %.6g sums read "
                       "back\n", ops[0], ops[1], ops[2], ops[3]);
        if (run->plan && outcome == TBENCH_COMPLETED) {
                printf("# plan backend: %lld steps after %lld, %.4f s of host time a step (no arithmetic: no "
                       "rates)\n", (long long)b->n, (long long)b->warmup, st.mean);
        } else if (outcome == TBENCH_COMPLETED) {
                int d = trun_rate_decimals(si.mean);
                printf("# throughput: %lld steps after %lld: %.*f images/s (sd %.*f, min %.*f, max %.*f, 95%% "
                       "interval %.*f .. %.*f), %.4f s a step\n", (long long)b->n, (long long)b->warmup, d, si.mean,
                       d, si.sd, d, si.min, d, si.max, d, si.ci_lo, d, si.ci_hi, st.mean);
                snprintf(meta, sizeof(meta),
                         "\"unit\": \"images/s\", \"count\": %zu, \"warmup_steps\": %lld, \"sd\": %s, \"min\": %s, "
                         "\"max\": %s, \"ci95_lo\": %s, \"ci95_hi\": %s", si.n, (long long)b->warmup,
                         mllog_num(si.sd), mllog_num(si.min), mllog_num(si.max), mllog_num(si.ci_lo),
                         mllog_num(si.ci_hi));
                MLLOG_EVENT("throughput", mllog_num(si.mean), meta);
        } else {
                printf("# throughput: none (%s after %lld of %lld timed steps)\n", outcome_name[outcome],
                       (long long)b->n, (long long)b->steps);
                snprintf(meta, sizeof(meta), "\"unit\": \"images/s\", \"outcome\": \"%s\"", outcome_name[outcome]);
                MLLOG_EVENT("throughput", NULL, meta);
        }
        fflush(stdout);
        int r = 0;
        if (run->result) {
                struct bd_buf o = BD_BUF_INIT;
                char id[33], host[256] = "";
                args_id(run->argc, run->argv, id);
                gethostname(host, sizeof(host) - 1);
                buf_puts(&o, "{\n  \"program\": ");
                json_quote(&o, run->prog);
                buf_puts(&o, ",\n  \"benchmark\": ");
                json_quote(&o, run->benchmark);
                buf_puts(&o, ",\n  \"arguments\": [");
                for (int i = 1; i < run->argc; i++) {
                        if (i > 1)
                                buf_puts(&o, ", ");
                        json_quote(&o, run->argv[i]);
                }
                buf_puts(&o, "],\n  \"version\": ");
                json_quote(&o, PACKAGE_VERSION);
                buf_puts(&o, ",\n  \"unique_id\": ");
                json_quote(&o, id);
                buf_puts(&o, ",\n  \"hostname\": ");
                json_quote(&o, host);
                buf_puts(&o, ",\n  \"device\": ");
                json_quote(&o, run->device);
                buf_printf(&o, ",\n  \"ranks\": %d,\n  \"batch\": %d,\n  \"precision\": ", run->ranks, run->batch);
                json_quote(&o, run->precision);
                buf_printf(&o, ",\n  \"warmup_steps\": %lld,\n  \"benchmark_steps\": %lld,\n  \"time\": %lld",
                              (long long)b->warmup, (long long)b->steps, (long long)time(NULL));
                buf_puts(&o, ",\n  \"outcome\": ");
                json_quote(&o, outcome_name[outcome]);
                buf_printf(&o, ",\n  \"completed\": %s,\n  \"batch_loss\": ",
                              outcome == TBENCH_COMPLETED ? "true" : "false");
                if (isfinite(loss))
                        json_number(&o, loss);
                else
                        buf_puts(&o, "null");
                list_json(&o, "observations_s", b->secs, b->n);
                list_json(&o, "observations_items", b->items, b->n);
                buf_puts(&o, ",\n  \"ops_per_step\": {");
                for (int k = 0; k < 4; k++) {
                        buf_printf(&o, "%s\"%s\": ", k ? ", " : "", op_key[k]);
                        json_number(&o, ops[k]);
                }
                buf_puts(&o, "}");
                if (run->plan && outcome == TBENCH_COMPLETED) {
                        buf_puts(&o, ",\n  \"host_s_per_step\": ");
                        json_number(&o, st.mean);
                        buf_puts(&o, ",\n  \"train\": null,\n  \"train_item\": null");
                } else if (outcome == TBENCH_COMPLETED) {
                        stats_json(&o, "train", &st, "s", 0);
                        stats_json(&o, "train_item", &si, "images/s", 1);
                } else {
                        buf_puts(&o, ",\n  \"train\": null,\n  \"train_item\": null");
                }
                buf_puts(&o, "\n}\n");
                r = fs_write_atomic(run->result, o.s, o.len, 0644, err);
                buf_release(&o);
        }
        free(rate);
        return r;
}

void tbench_release(struct tbench *b)
{
        free(b->secs);
        free(b->items);
        memset(b, 0, sizeof(*b));
}

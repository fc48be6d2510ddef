/* report.c: benchctl report as text, JSON and CSV. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "tenants.h"
#include "workload.h"

void report_score(const struct report_run *run, struct mlperf_score *ret)
{
        int n = run->ntrials > 0 ? run->ntrials : 0;
        _cleanup_free_ struct mlperf_trial *t = xcalloc((size_t)n + 1, sizeof(*t));
        for (int i = 0; i < n; i++)
                t[i] = run->trials[i].result;
        if (run->wl)
                mlperf_score_of(t, n, run->wl, ret);
        else
                mlperf_score(t, n, run->workload, ret);
}

static struct mlperf_score *scores_new(const struct report_run *runs, int n)
{
        struct mlperf_score *s = xcalloc((size_t)(n > 0 ? n : 0) + 1, sizeof(*s));
        for (int i = 0; i < n; i++)
                report_score(&runs[i], &s[i]);
        return s;
}

static const char *or_dash(const char *s)
{
        return s && *s ? s : "-";
}

static bool is_allreduce(const struct report_run *r)
{
        return r->wl ? r->wl->result == RESULT_BUS_BANDWIDTH : mlperf_is_bandwidth(r->workload);
}

/* The trial number of the trial at index i of a run, 0 for none. */
static int trial_number(const struct report_run *r, int i)
{
        return i >= 0 && i < r->ntrials ? r->trials[i].number : 0;
}

static const char *dropped_as(const struct mlperf_score *s, int i)
{
        if (!s->scored)
                return NULL;
        if (i == s->fastest)
                return "fastest";
        if (i == s->slowest)
                return "slowest";
        return NULL;
}

/* What is published, NULL when nothing is. */
static const struct report_reference *published(const struct report_run *r)
{
        const struct report_reference *p = r->reference;
        return p && (p->minutes > 0 || p->images_per_second > 0) ? p : NULL;
}

/* Our time to train to compare with the published one: the score, else the
 * mean of the converged trials; false when there is neither. */
static bool ours_minutes(const struct report_run *r, const struct mlperf_score *s, double *ret)
{
        if (is_allreduce(r) || strcmp(s->unit, "min"))
                return false;
        if (s->scored)
                *ret = s->score;
        else if (s->converged > 0)
                *ret = s->mean;
        else
                return false;
        return true;
}

/* The mean throughput of the trials that have one, 0 when none has. */
static double mean_throughput(const struct report_run *r, int *ret_n)
{
        double sum = 0;
        int k = 0;
        for (int i = 0; i < r->ntrials; i++)
                if (r->trials[i].result.throughput > 0) {
                        sum += r->trials[i].result.throughput;
                        k++;
                }
        *ret_n = k;
        return k ? sum / k : 0;
}

static double pct_diff(double ours, double theirs)
{
        return (ours - theirs) / theirs * 100;
}

/* ---- text ---- */

static void note(struct bd_buf *b, const char *fmt, ...) _printf_(2, 3);
static void note(struct bd_buf *b, const char *fmt, ...)
{
        va_list ap;
        if (b->len)
                buf_puts(b, "; ");
        va_start(ap, fmt);
        buf_vprintf(b, fmt, ap);
        va_end(ap);
}

/* The reason and every anomaly of a trial, "; "-separated. */
static void trial_notes(const struct report_run *r, const struct mlperf_score *s, int i, struct bd_buf *b)
{
        const struct mlperf_trial *t = &r->trials[i].result;
        const char *dropped = dropped_as(s, i);
        if (t->reason[0])
                note(b, "%s", t->reason);
        if (dropped)
                note(b, "dropped as the %s", dropped);
        if (t->bad_lines)
                note(b, "%ld unparseable MLLOG line%s (first at line %ld)", t->bad_lines, t->bad_lines == 1 ? "" : "s",
                     t->first_bad_line);
        if (t->duplicate_keys)
                note(b, "%d duplicate run_start/run_stop", t->duplicate_keys);
        if (t->other_rank_lines)
                note(b, "%ld MLLOG line%s of other ranks ignored", t->other_rank_lines,
                     t->other_rank_lines == 1 ? "" : "s");
        if (t->result_lines > 1)
                note(b, "%d RESULT lines", t->result_lines);
}

/* "-" for unknown (zero or negative) values */
static const char *fmt_pos(char *buf, size_t n, double v, int decimals)
{
        if (v > 0 && isfinite(v))
                snprintf(buf, n, "%.*f", decimals, v);
        else
                snprintf(buf, n, "-");
        return buf;
}

/* A trial's time to train in seconds / unit; "-" when the log does not say */
static const char *fmt_time(char *buf, size_t n, const struct mlperf_trial *t, double unit, int decimals)
{
        if (t->timed)
                snprintf(buf, n, "%.*f", decimals, t->time_to_train / unit);
        else
                snprintf(buf, n, "-");
        return buf;
}

static void rstrip(struct bd_buf *b)
{
        while (b->len && b->s[b->len - 1] == ' ')
                b->s[--b->len] = '\0';
}

/* A fixed schedule's trials: the whole run, its final and best accuracy,
 * and when (minutes from run_start) the target was first met. */
static void text_fixed_trials(const struct report_run *r, const struct mlperf_score *s, struct bd_buf *out)
{
        bool two = false;
        for (int i = 0; i < r->ntrials; i++)
                two |= r->trials[i].result.has_target_segm || r->trials[i].result.has_accuracy_segm;
        int aw = two ? 13 : 8, tw = two ? 11 : 7;
        buf_printf(out, "  %-5s %-11s %9s %6s %*s %*s %*s %-14s %12s  %s\n", "TRIAL", "STATUS", "TIME(min)", "EPOCHS",
                   aw, "FINAL", aw, "BEST", tw, "TARGET", "MET", "SAMPLES/s", "NOTES");
        for (int i = 0; i < r->ntrials; i++) {
                const struct mlperf_trial *t = &r->trials[i].result;
                _cleanup_buf_ struct bd_buf notes = BD_BUF_INIT;
                char ttm[32], fin[32] = "-", best[32] = "-", tgt[32] = "-", met[32] = "-", tp[32], ep[16] = "-";
                trial_notes(r, s, i, &notes);
                if (t->has_accuracy)
                        snprintf(fin, sizeof(fin), two ? "%.4f/%.4f" : "%.4f", t->accuracy, t->accuracy_segm);
                if (t->evals)
                        snprintf(best, sizeof(best), two ? "%.4f/%.4f" : "%.4f", t->best_accuracy,
                                 t->best_accuracy_segm);
                if (t->has_target && t->has_target_segm)
                        snprintf(tgt, sizeof(tgt), "%.3f/%.3f", t->target, t->target_segm);
                else if (t->has_target)
                        snprintf(tgt, sizeof(tgt), "%.3f", t->target);
                if (t->met && t->met_epoch > 0)
                        snprintf(met, sizeof(met), "%.2f min, ep %d", t->met_s / 60, t->met_epoch);
                else if (t->met)
                        snprintf(met, sizeof(met), "%.2f min", t->met_s / 60);
                else if (t->has_target && t->evals)
                        snprintf(met, sizeof(met), "no");
                if (t->outcome != OUT_MISSING)
                        snprintf(ep, sizeof(ep), "%d", t->epochs);
                buf_printf(out, "  %-5d %-11s %9s %6s %*s %*s %*s %-14s %12s  %s", r->trials[i].number,
                           mlperf_outcome_name(t->outcome), fmt_time(ttm, sizeof(ttm), t, 60, 2), ep, aw, fin, aw,
                           best, tw, tgt, met, fmt_pos(tp, sizeof(tp), t->throughput, 1), notes.s ? notes.s : "");
                rstrip(out);
                buf_putc(out, '\n');
        }
}

/* A fixed schedule has no MLPerf score: the means of what it reached. */
static void text_fixed_summary(const struct report_run *r, struct bd_buf *out)
{
        int n = 0, met = 0;
        double time = 0, fin = 0, best = 0;
        for (int i = 0; i < r->ntrials; i++) {
                const struct mlperf_trial *t = &r->trials[i].result;
                if (!t->timed || !t->has_accuracy)
                        continue;
                n++;
                time += t->time_to_train / 60;
                fin += t->accuracy;
                best += t->evals ? t->best_accuracy : t->accuracy;
                met += t->met;
        }
        if (!n) {
                buf_puts(out, "  fixed schedule: no trial ran its schedule to the end\n");
                return;
        }
        buf_printf(out, "  fixed schedule (no MLPerf score: the run does not stop at the target): mean %.3f min, final "
                        "accuracy %.4f, best %.4f over %d trial%s; the target met in %d of them\n", time / n,
                   fin / n, best / n, n, n == 1 ? "" : "s", met);
}

static void text_trials(const struct report_run *r, const struct mlperf_score *s, struct bd_buf *out)
{
        if (r->fixed) {
                text_fixed_trials(r, s, out);
                return;
        }
        bool ar = is_allreduce(r);
        /* Mask R-CNN: bbox/segm accuracies against both targets */
        bool two = false;
        for (int i = 0; i < r->ntrials; i++)
                two |= r->trials[i].result.has_target_segm || r->trials[i].result.has_accuracy_segm;
        int aw = two ? 13 : 9, tw = two ? 11 : 7;
        if (ar)
                buf_printf(out, "  %-5s %-11s %9s %7s %12s %12s %7s  %s\n", "TRIAL", "STATUS", "TIME(s)", "SIZES",
                           "LARGEST(B)", "BUSBW(GB/s)", "WRONG", "NOTES");
        else
                buf_printf(out, "  %-5s %-11s %9s %9s %6s %*s %*s %7s %12s  %s\n", "TRIAL", "STATUS", "TIME(s)",
                           "TIME(min)", "EPOCHS", aw, two ? "BBOX/SEGM" : "ACCURACY", tw, "TARGET", "REACHED",
                           "SAMPLES/s", "NOTES");
        for (int i = 0; i < r->ntrials; i++) {
                const struct mlperf_trial *t = &r->trials[i].result;
                _cleanup_buf_ struct bd_buf notes = BD_BUF_INIT;
                char tts[32], ttm[32], acc[32] = "-", tgt[32] = "-", tp[32];
                const char *status = mlperf_outcome_name(t->outcome);
                trial_notes(r, s, i, &notes);
                fmt_time(tts, sizeof(tts), t, 1, ar ? 3 : 1);
                if (ar && t->ar_sizes) {
                                char bw[32];
                        if (isnan(t->ar_busbw))
                                snprintf(bw, sizeof(bw), "-");  /* one rank: no bus bandwidth */
                        else
                                snprintf(bw, sizeof(bw), "%.3f", t->ar_busbw);
                        buf_printf(out, "  %-5d %-11s %9s %7d %12.0f %12s %7lld  %s", r->trials[i].number, status,
                                   tts, t->ar_sizes, t->ar_bytes, bw, t->ar_wrong, notes.s ? notes.s : "");
                } else if (ar) {
                        /* no results: nothing measured (the JSON's nulls) */
                        buf_printf(out, "  %-5d %-11s %9s %7s %12s %12s %7s  %s", r->trials[i].number, status, tts, "-",
                                   "-", "-", "-", notes.s ? notes.s : "");
                } else {
                        const char *reached = "-";
                        if (t->has_target && t->outcome != OUT_MISSING && t->outcome != OUT_RUNNING &&
                            t->outcome != OUT_PENDING)
                                reached = t->reached ? "yes" : "no";
                        if (t->has_accuracy && two && t->has_accuracy_segm)
                                snprintf(acc, sizeof(acc), "%.4f/%.4f", t->accuracy, t->accuracy_segm);
                        else if (t->has_accuracy)
                                snprintf(acc, sizeof(acc), two ? "%.4f/-" : "%.4f", t->accuracy);
                        if (t->has_target && t->has_target_segm)
                                snprintf(tgt, sizeof(tgt), "%.3f/%.3f", t->target, t->target_segm);
                        else if (t->has_target)
                                snprintf(tgt, sizeof(tgt), "%.3f", t->target);
                        char ep[16] = "-";
                        if (t->outcome != OUT_MISSING)
                                snprintf(ep, sizeof(ep), "%d", t->epochs);
                        buf_printf(out, "  %-5d %-11s %9s %9s %6s %*s %*s %7s %12s  %s", r->trials[i].number, status,
                                   tts, fmt_time(ttm, sizeof(ttm), t, 60, 2), ep, aw, acc, tw, tgt, reached,
                                   fmt_pos(tp, sizeof(tp), t->throughput, 1), notes.s ? notes.s : "");
                }
                rstrip(out);
                buf_putc(out, '\n');
        }
}

static void text_score(const struct report_run *r, const struct mlperf_score *s, struct bd_buf *out)
{
        if (s->scored) {
                buf_printf(out, "  MLPerf score: %.3f %s (%s", s->score, s->unit, s->method);
                if (s->fastest >= 0 && s->slowest >= 0)
                        buf_printf(out, "; trial %d dropped as the fastest, trial %d as the slowest",
                                   trial_number(r, s->fastest), trial_number(r, s->slowest));
                buf_puts(out, ")\n");
        } else
                buf_printf(out, "  MLPerf score: %s: %s\n", s->valid ? "no score" : "INVALID", s->reason);
        if (s->converged > 0 && isnan(s->mean))
                buf_printf(out, "  mean -, sd -: no bus bandwidth over %d converged trial%s\n", s->converged,
                           s->converged == 1 ? "" : "s");
        else if (s->converged > 0)
                buf_printf(out, "  mean %.3f %s, sd %.3f %s (%.1f%%) over %d converged trial%s\n", s->mean, s->unit,
                           s->sd, s->unit, s->sd_pct, s->converged, s->converged == 1 ? "" : "s");
        else
                buf_printf(out, "  mean -, sd -: no trial converged\n");
}

static void text_reference(const struct report_run *r, const struct mlperf_score *s, struct bd_buf *out)
{
        const struct report_reference *p = published(r);
        double ours;
        if (!p) {
                buf_printf(out, "  published: no published result for %s on %s\n", or_dash(r->workload),
                           or_dash(r->system));
                return;
        }
        const char *src = p->source ? p->source : "source unknown";
        if (p->minutes > 0) {
                buf_printf(out, "  published: %.3f min (%s)", p->minutes, src);
                if (ours_minutes(r, s, &ours))
                        buf_printf(out, "; ours %.3f min%s, %+.1f%%", ours,
                                   s->scored ? "" : " (mean, no official score)", pct_diff(ours, p->minutes));
                else
                        buf_puts(out, "; ours: none to compare");
                buf_putc(out, '\n');
        } else
                buf_printf(out, "  published: no time to train published (%s)\n", src);
        if (p->images_per_second > 0) {
                int k;
                double tp = mean_throughput(r, &k);
                buf_printf(out, "  published throughput: %.0f samples/s", p->images_per_second);
                if (k)
                        buf_printf(out, "; ours %.0f (%+.1f%%, mean of %d trial%s)", tp,
                                   pct_diff(tp, p->images_per_second), k, k == 1 ? "" : "s");
                else
                        buf_puts(out, "; ours: no throughput in the logs");
                buf_putc(out, '\n');
        }
}

static void widen(int *w, const char *s)
{
        int len = (int)strlen(or_dash(s));
        if (len > *w)
                *w = len;
}

static void text_comparison(const struct report_run *runs, int n, const struct mlperf_score *scores, unsigned flags,
                            struct bd_buf *out)
{
        bool ref = flags & REPORT_REFERENCE;
        int wi = 3, ws = 6, ww = 8;
        for (int i = 0; i < n; i++) {
                widen(&wi, runs[i].id);
                widen(&ws, runs[i].system);
                widen(&ww, runs[i].workload);
        }
        buf_printf(out, "%-*s  %-*s  %-*s  %12s  %12s  %6s", wi, "RUN", ws, "SYSTEM", ww, "WORKLOAD", "SCORE", "MEAN",
                   "SD%");
        if (ref)
                buf_printf(out, "  %12s", "VS PUBLISHED");
        buf_putc(out, '\n');
        for (int i = 0; i < n; i++) {
                const struct mlperf_score *s = &scores[i];
                char sc[48], mean[48] = "-", sd[16] = "-", vs[16] = "-";
                double ours;
                if (s->scored)
                        snprintf(sc, sizeof(sc), "%.3f %s", s->score, s->unit);
                else
                        snprintf(sc, sizeof(sc), "%s", s->valid ? "none" : "invalid");
                if (s->converged) {
                        snprintf(mean, sizeof(mean), "%.3f %s", s->mean, s->unit);
                        snprintf(sd, sizeof(sd), "%.1f%%", s->sd_pct);
                }
                if (published(&runs[i]) && runs[i].reference->minutes > 0 && ours_minutes(&runs[i], s, &ours))
                        snprintf(vs, sizeof(vs), "%+.1f%%", pct_diff(ours, runs[i].reference->minutes));
                buf_printf(out, "%-*s  %-*s  %-*s  %12s  %12s  %6s", wi, or_dash(runs[i].id), ws,
                           or_dash(runs[i].system), ww, or_dash(runs[i].workload), sc, mean, sd);
                if (ref)
                        buf_printf(out, "  %12s", vs);
                buf_putc(out, '\n');
        }
}

void report_text(const struct report_run *runs, int n, unsigned flags, struct bd_buf *out)
{
        _cleanup_free_ struct mlperf_score *scores = scores_new(runs, n);
        for (int i = 0; i < n; i++) {
                const struct report_run *r = &runs[i];
                if (i)
                        buf_putc(out, '\n');
                buf_printf(out, "run %s: %s on %s, %d trial%s", or_dash(r->id), or_dash(r->workload),
                           or_dash(r->system), r->ntrials, r->ntrials == 1 ? "" : "s");
                if (r->state)
                        buf_printf(out, ", %s", r->state);
                buf_putc(out, '\n');
                for (int k = 0; k < r->nwarnings; k++)
                        buf_printf(out, "  warning: %s\n", r->warnings[k]);
                text_trials(r, &scores[i], out);
                for (int k = 0; k < r->ntrials; k++) {
                        const struct report_trial *rt = &r->trials[k];
                        if (rt->trace_error)
                                buf_printf(out, "  trace of trial %d: %s\n", rt->number, rt->trace_error);
                        if (!rt->trace_file)
                                continue;
                        buf_printf(out, "  trace of trial %d (%d rank%s, %d step%s kept): %s\n    ", rt->number,
                                   rt->trace.ranks, rt->trace.ranks == 1 ? "" : "s", rt->trace.steps,
                                   rt->trace.steps == 1 ? "" : "s", rt->trace_file);
                        trace_summary_text(&rt->trace, out);
                        buf_putc(out, '\n');
                }
                if (r->tenants)
                        tenants_text(r->tenants, out);
                else if (r->fixed)
                        text_fixed_summary(r, out);
                else
                        text_score(r, &scores[i], out);
                if (flags & REPORT_REFERENCE)
                        text_reference(r, &scores[i], out);
        }
        if (n > 1) {
                buf_putc(out, '\n');
                text_comparison(runs, n, scores, flags, out);
        }
}

/* ---- JSON ---- */

static void add_num(cJSON *o, const char *key, double v, bool known)
{
        json_add_number(o, key, known ? v : NAN);
}

static void add_str(cJSON *o, const char *key, const char *s)
{
        cJSON_AddItemToObject(o, key, s && *s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

static void add_bool(cJSON *o, const char *key, bool v, bool known)
{
        cJSON_AddItemToObject(o, key, known ? cJSON_CreateBool(v) : cJSON_CreateNull());
}

static cJSON *trial_json(const struct report_run *r, const struct mlperf_score *s, int i)
{
        const struct report_trial *rt = &r->trials[i];
        const struct mlperf_trial *t = &rt->result;
        bool read = t->outcome != OUT_MISSING, ar = is_allreduce(r);
        cJSON *o = cJSON_CreateObject(), *bad;
        cJSON_AddNumberToObject(o, "trial", rt->number);
        add_str(o, "log", rt->log_path);
        cJSON_AddStringToObject(o, "status", mlperf_outcome_name(t->outcome));
        add_str(o, "reason", t->reason);
        add_str(o, "benchmark", t->benchmark);
        add_num(o, "time_to_train_s", t->time_to_train, t->timed);
        add_num(o, "time_to_train_min", t->time_to_train / 60, t->timed);
        add_num(o, "epochs", t->epochs, read);
        add_num(o, "epochs_completed", t->epochs_completed, read);
        add_num(o, "accuracy", t->accuracy, t->has_accuracy);
        add_num(o, "accuracy_epoch", t->accuracy_epoch, t->has_accuracy && t->accuracy_epoch > 0);
        add_num(o, "accuracy_segm", t->accuracy_segm, t->has_accuracy_segm);
        add_num(o, "target", t->target, t->has_target);
        add_num(o, "target_segm", t->target_segm, t->has_target_segm);
        add_str(o, "target_source", t->has_target ? (t->target_from_log ? "log" : "config") : NULL);
        add_bool(o, "reached", t->reached, read && (ar || t->has_target));
        /* every evaluation's best, and where the target was first met (a fixed schedule's question) */
        add_num(o, "best_accuracy", t->best_accuracy, t->evals > 0);
        add_num(o, "best_accuracy_segm", t->best_accuracy_segm, t->evals > 0 && t->has_accuracy_segm);
        add_bool(o, "target_met", t->met, read && t->has_target && t->evals > 0);
        add_num(o, "target_met_min", t->met_s / 60, t->met);
        if (rt->trace_file) {
                const struct trace_summary *ts = &rt->trace;
                cJSON *tr = cJSON_AddObjectToObject(o, "trace"), *sh = NULL;
                add_str(tr, "file", rt->trace_file);
                cJSON_AddNumberToObject(tr, "ranks", ts->ranks);
                cJSON_AddNumberToObject(tr, "steps", ts->steps);
                cJSON_AddNumberToObject(tr, "step_ms", ts->step_ms);
                sh = cJSON_AddObjectToObject(tr, "ms");
                for (int p = 0; p < _TP_MAX; p++)
                        cJSON_AddNumberToObject(sh, trace_phase_names[p], ts->phase_ms[p]);
                cJSON_AddNumberToObject(sh, "other", ts->other_ms);
                cJSON_AddNumberToObject(tr, "allreduce_ms", ts->bucket_ms);
                cJSON_AddNumberToObject(tr, "hidden_ms", ts->hidden_ms);
                cJSON_AddNumberToObject(tr, "slowest_rank", ts->slowest);
                cJSON_AddNumberToObject(tr, "slowest_step_ms", ts->slowest_ms);
        } else
                add_str(o, "trace_error", rt->trace_error);
        cJSON_AddBoolToObject(o, "converged", t->converged);
        add_str(o, "dropped", dropped_as(s, i));
        add_num(o, "throughput", t->throughput, t->throughput > 0);
        add_str(o, "throughput_source", t->throughput > 0 ? (t->throughput_logged ? "logged" : "computed") : NULL);
        add_num(o, "train_samples", (double)t->train_samples, t->train_samples > 0);
        add_num(o, "global_batch_size", (double)t->global_batch_size, t->global_batch_size > 0);
        add_num(o, "seed", (double)t->seed, t->has_seed);
        add_num(o, "result_seconds", t->result_seconds, t->result_lines > 0);
        /* allreduce: numbers for allreduce runs, null for the others */
        add_num(o, "sizes", t->ar_sizes, ar && read);
        add_num(o, "largest_bytes", t->ar_bytes, ar && t->ar_sizes);
        add_num(o, "busbw_gbps", t->ar_busbw, ar && t->ar_sizes);
        add_num(o, "algbw_gbps", t->ar_algbw, ar && t->ar_sizes);
        add_num(o, "wrong", (double)t->ar_wrong, ar && read);
        add_num(o, "lines", (double)t->lines, read);
        add_num(o, "mllog_lines", (double)t->mllog_lines, read);
        add_num(o, "unparseable_lines", (double)t->bad_lines, read);
        bad = cJSON_AddArrayToObject(o, "unparseable_at");
        for (long k = 0; k < t->bad_lines && k < MLPERF_BAD_KEPT; k++)
                cJSON_AddItemToArray(bad, cJSON_CreateNumber((double)t->bad_at[k]));
        add_num(o, "other_rank_lines", (double)t->other_rank_lines, read);
        add_num(o, "duplicate_keys", t->duplicate_keys, read);
        add_num(o, "result_lines", t->result_lines, read);
        return o;
}

static cJSON *score_json(const struct report_run *r, const struct mlperf_score *s)
{
        cJSON *o = cJSON_CreateObject();
        add_num(o, "value", s->score, s->scored);
        cJSON_AddStringToObject(o, "unit", s->unit);
        cJSON_AddBoolToObject(o, "higher_is_better", s->higher_is_better);
        cJSON_AddBoolToObject(o, "scored", s->scored);
        cJSON_AddBoolToObject(o, "valid", s->valid);
        add_str(o, "method", s->scored ? s->method : NULL);
        add_str(o, "reason", s->reason);
        cJSON_AddNumberToObject(o, "trials", s->trials);
        cJSON_AddNumberToObject(o, "required", s->required);
        cJSON_AddNumberToObject(o, "converged", s->converged);
        add_num(o, "fastest_trial", trial_number(r, s->fastest), s->fastest >= 0);
        add_num(o, "slowest_trial", trial_number(r, s->slowest), s->slowest >= 0);
        add_num(o, "mean", s->mean, s->converged > 0);
        add_num(o, "sd", s->sd, s->converged > 0);
        add_num(o, "sd_pct", s->sd_pct, s->converged > 0);
        return o;
}

/* Ours next to the published result, as the JSON and CSV reports show it. */
struct ref_cmp {
        const struct report_reference *p;       /* NULL: nothing published */
        bool have_ours, have_diff, have_tp, have_tp_diff;
        double ours, diff, tp, tp_diff;
};

static void ref_compare(const struct report_run *r, const struct mlperf_score *s, struct ref_cmp *c)
{
        int k;
        memset(c, 0, sizeof(*c));
        c->p = published(r);
        if (!c->p)
                return;
        c->have_ours = ours_minutes(r, s, &c->ours);
        c->have_diff = c->have_ours && c->p->minutes > 0;
        c->diff = c->have_diff ? pct_diff(c->ours, c->p->minutes) : 0;
        c->tp = mean_throughput(r, &k);
        c->have_tp = k > 0;
        c->have_tp_diff = k > 0 && c->p->images_per_second > 0;
        c->tp_diff = c->have_tp_diff ? pct_diff(c->tp, c->p->images_per_second) : 0;
}

static cJSON *reference_json(const struct report_run *r, const struct mlperf_score *s)
{
        struct ref_cmp c;
        ref_compare(r, s, &c);
        if (!c.p)
                return cJSON_CreateNull();
        cJSON *o = cJSON_CreateObject();
        add_num(o, "minutes", c.p->minutes, c.p->minutes > 0);
        add_num(o, "images_per_second", c.p->images_per_second, c.p->images_per_second > 0);
        add_str(o, "source", c.p->source);
        add_num(o, "ours_minutes", c.ours, c.have_ours);
        add_bool(o, "ours_official", s->scored, c.have_ours);
        add_num(o, "difference_pct", c.diff, c.have_diff);
        add_num(o, "ours_throughput", c.tp, c.have_tp);
        add_num(o, "throughput_difference_pct", c.tp_diff, c.have_tp_diff);
        return o;
}

cJSON *report_json(const struct report_run *runs, int n, unsigned flags)
{
        _cleanup_free_ struct mlperf_score *scores = scores_new(runs, n);
        cJSON *arr = cJSON_CreateArray();
        if (!arr)
                return NULL;
        for (int i = 0; i < n; i++) {
                const struct report_run *r = &runs[i];
                cJSON *o = cJSON_CreateObject(), *trials;
                add_str(o, "run", r->id);
                add_str(o, "system", r->system);
                add_str(o, "workload", r->workload);
                add_str(o, "state", r->state);
                cJSON_AddStringToObject(o, "schedule", r->fixed ? "fixed" : "time-to-train");
                cJSON *warn = cJSON_AddArrayToObject(o, "warnings");
                for (int k = 0; k < r->nwarnings; k++)
                        cJSON_AddItemToArray(warn, cJSON_CreateString(r->warnings[k]));
                trials = cJSON_AddArrayToObject(o, "trials");
                for (int k = 0; k < r->ntrials; k++)
                        cJSON_AddItemToArray(trials, trial_json(r, &scores[i], k));
                cJSON_AddItemToObject(o, "score", score_json(r, &scores[i]));
                if (r->tenants)
                        cJSON_AddItemToObject(o, "tenants", tenants_json(r->tenants));
                else
                        cJSON_AddNullToObject(o, "tenants");
                if (flags & REPORT_REFERENCE)
                        cJSON_AddItemToObject(o, "published", reference_json(r, &scores[i]));
                cJSON_AddItemToArray(arr, o);
        }
        return arr;
}

/* ---- CSV ---- */

void report_csv_field(struct bd_buf *out, const char *s)
{
        if (!s)
                return;
        if (!strpbrk(s, ",\"\r\n")) {
                buf_puts(out, s);
                return;
        }
        buf_putc(out, '"');
        for (; *s; s++) {
                if (*s == '"')
                        buf_putc(out, '"');
                buf_putc(out, *s);
        }
        buf_putc(out, '"');
}

/* ",value" with that many decimals, or "," when unknown */
static void csv_num(struct bd_buf *out, int decimals, double v, bool known)
{
        buf_putc(out, ',');
        if (known && isfinite(v))
                buf_printf(out, "%.*f", decimals, v);
}

static void csv_str(struct bd_buf *out, const char *s)
{
        buf_putc(out, ',');
        report_csv_field(out, s);
}

static const char csv_header[] =
        "run,system,workload,trial,log,status,time_to_train_s,time_to_train_min,epochs,accuracy,target,reached,"
        "converged,dropped,throughput,global_batch_size,train_samples,seed,sizes,largest_bytes,busbw_gbps,algbw_gbps,"
        "wrong,lines,mllog_lines,unparseable_lines,first_unparseable_line,duplicate_keys,reason,score,score_unit";
/* with --reference: the run's published result and ours beside it */
static const char csv_reference_header[] =
        ",published_minutes,published_images_per_second,published_source,ours_minutes,ours_official,difference_pct,"
        "ours_throughput,throughput_difference_pct";

static void csv_reference(const struct report_run *r, const struct mlperf_score *s, struct bd_buf *out)
{
        struct ref_cmp c;
        ref_compare(r, s, &c);
        csv_num(out, 3, c.p ? c.p->minutes : 0, c.p && c.p->minutes > 0);
        csv_num(out, 3, c.p ? c.p->images_per_second : 0, c.p && c.p->images_per_second > 0);
        csv_str(out, c.p ? c.p->source : NULL);
        csv_num(out, 3, c.ours, c.have_ours);
        csv_str(out, c.have_ours ? (s->scored ? "yes" : "no") : NULL);
        csv_num(out, 3, c.diff, c.have_diff);
        csv_num(out, 3, c.tp, c.have_tp);
        csv_num(out, 3, c.tp_diff, c.have_tp_diff);
}

void report_csv(const struct report_run *runs, int n, unsigned flags, struct bd_buf *out)
{
        _cleanup_free_ struct mlperf_score *scores = scores_new(runs, n);
        buf_puts(out, csv_header);
        if (flags & REPORT_REFERENCE)
                buf_puts(out, csv_reference_header);
        buf_putc(out, '\n');
        for (int i = 0; i < n; i++) {
                const struct report_run *r = &runs[i];
                const struct mlperf_score *s = &scores[i];
                bool ar = is_allreduce(r);
                for (int k = 0; k < r->ntrials; k++) {
                        const struct mlperf_trial *t = &r->trials[k].result;
                        bool read = t->outcome != OUT_MISSING;
                        report_csv_field(out, r->id);
                        csv_str(out, r->system);
                        csv_str(out, r->workload);
                        buf_printf(out, ",%d", r->trials[k].number);
                        csv_str(out, r->trials[k].log_path);
                        csv_str(out, mlperf_outcome_name(t->outcome));
                        csv_num(out, 3, t->time_to_train, t->timed);
                        csv_num(out, 4, t->time_to_train / 60, t->timed);
                        csv_num(out, 0, t->epochs, read);
                        csv_num(out, 6, t->accuracy, t->has_accuracy);
                        csv_num(out, 6, t->target, t->has_target);
                        csv_str(out, read && (ar || t->has_target) ? (t->reached ? "yes" : "no") : NULL);
                        csv_str(out, t->converged ? "yes" : "no");
                        csv_str(out, dropped_as(s, k));
                        csv_num(out, 3, t->throughput, t->throughput > 0);
                        csv_num(out, 0, (double)t->global_batch_size, t->global_batch_size > 0);
                        csv_num(out, 0, (double)t->train_samples, t->train_samples > 0);
                        buf_putc(out, ',');
                        if (t->has_seed)
                                buf_printf(out, "%lld", t->seed);
                        csv_num(out, 0, t->ar_sizes, ar && read);
                        csv_num(out, 0, t->ar_bytes, ar && t->ar_sizes);
                        csv_num(out, 6, t->ar_busbw, ar && t->ar_sizes);
                        csv_num(out, 6, t->ar_algbw, ar && t->ar_sizes);
                        csv_num(out, 0, (double)t->ar_wrong, ar && read);
                        csv_num(out, 0, (double)t->lines, read);
                        csv_num(out, 0, (double)t->mllog_lines, read);
                        csv_num(out, 0, (double)t->bad_lines, read);
                        csv_num(out, 0, (double)t->first_bad_line, t->bad_lines > 0);
                        csv_num(out, 0, t->duplicate_keys, read);
                        csv_str(out, t->reason);
                        csv_num(out, 6, s->score, s->scored);
                        csv_str(out, s->unit);
                        if (flags & REPORT_REFERENCE)
                                csv_reference(r, s, out);
                        buf_putc(out, '\n');
                }
        }
}

int report_write(const struct report_run *runs, int n, enum report_format format, unsigned flags,
                 struct bd_buf *out)
{
        switch (format) {
        case REPORT_TEXT:
                report_text(runs, n, flags, out);
                return 0;
        case REPORT_CSV:
                report_csv(runs, n, flags, out);
                return 0;
        case REPORT_JSON: {
                cJSON *j = report_json(runs, n, flags);
                char *text = j ? cJSON_Print(j) : NULL;
                cJSON_Delete(j);
                if (!text)
                        return -ENOMEM;
                buf_puts(out, text);
                buf_putc(out, '\n');
                cJSON_free(text);
                return 0;
        }
        }
        return -EINVAL;
}

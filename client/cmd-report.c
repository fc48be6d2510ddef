/* cmd-report.c: benchctl report: time to train, accuracy and throughput of
 * each trial from its MLPerf log lines, and the run's MLPerf score, next to
 * the published result. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "benchctl.h"
#include "json.h"
#include "mlperf.h"
#include "run.h"
#include "system.h"

#define OPT_CSV 360
#define OPT_REFERENCE 361

static const struct bd_option options[] = {
        { "json", 'j', NULL, "print JSON" },
        { "csv", OPT_CSV, NULL, "print CSV, one row per trial" },
        { "reference", OPT_REFERENCE, NULL, "compare with the published result of the system" },
        { 0 }
};

struct report_run {
        struct bd_run run;
        struct bd_trial *trials;
        struct mlperf_trial *parsed;
        struct mlperf_score score;
        double pub_minutes, pub_ips;    /* 0: none */
        const char *pub_source;
        cJSON *config;
};

static double target_of(const cJSON *config, const char *workload)
{
        if (!strcmp(workload, "ssd"))
                return sys_num(config, "ssd.target_map", -1);
        if (!strcmp(workload, "maskrcnn"))
                return sys_num(config, "maskrcnn.target_map_bbox", -1);
        return -1;
}

/* "-" for unknown (zero or negative) values */
static void fmt_pos(char *buf, size_t n, double v, int decimals)
{
        if (v > 0)
                snprintf(buf, n, "%.*f", decimals, v);
        else
                snprintf(buf, n, "-");
}

static void print_text(const struct report_run *rr, bool reference)
{
        const struct bd_run *r = &rr->run;
        bool ar = !strcmp(r->workload, "allreduce");
        printf("run %s: %s on %s, %d trial%s, %s\n", r->id, r->workload, r->system, r->ntrials,
               r->ntrials == 1 ? "" : "s", state_name(r->state));
        if (ar)
                printf("  %-5s %-11s %9s %7s %12s %12s %7s  %s\n", "TRIAL", "STATUS", "TIME(s)", "SIZES", "LARGEST(B)",
                       "BUSBW(GB/s)", "WRONG", "NOTES");
        else
                printf("  %-5s %-11s %9s %9s %6s %9s %7s %7s %12s  %s\n", "TRIAL", "STATUS", "TIME(s)", "TIME(min)",
                       "EPOCHS", "ACCURACY", "TARGET", "REACHED", "SAMPLES/s", "NOTES");
        for (int i = 0; i < r->ntrials; i++) {
                const struct mlperf_trial *t = &rr->parsed[i];
                char tts[32], ttm[32], acc[32], tgt[32], tp[32], notes[256] = "";
                fmt_pos(tts, sizeof(tts), t->time_to_train, 1);
                fmt_pos(ttm, sizeof(ttm), t->time_to_train / 60, 2);
                if (t->has_accuracy)
                        snprintf(acc, sizeof(acc), "%.4f", t->accuracy);
                else
                        snprintf(acc, sizeof(acc), "-");
                if (t->has_target)
                        snprintf(tgt, sizeof(tgt), "%.3f", t->target);
                else
                        snprintf(tgt, sizeof(tgt), "-");
                fmt_pos(tp, sizeof(tp), t->throughput, 1);
                size_t nl = 0;
                if (t->reason[0])
                        nl += (size_t)snprintf(notes + nl, sizeof(notes) - nl, "%s", t->reason);
                if (t->bad_lines && nl < sizeof(notes))
                        nl += (size_t)snprintf(notes + nl, sizeof(notes) - nl, "%s%ld unparseable MLLOG line%s (first at line %ld)",
                                               nl ? "; " : "", t->bad_lines, t->bad_lines == 1 ? "" : "s",
                                               t->first_bad_line);
                if (t->duplicate_keys && nl < sizeof(notes))
                        snprintf(notes + nl, sizeof(notes) - nl, "%s%d duplicate run_start/run_stop", nl ? "; " : "",
                                 t->duplicate_keys);
                if (ar)
                        printf("  %-5d %-11s %9s %7d %12.0f %12.3f %7lld  %s\n", i + 1, trial_outcome_name(t->outcome),
                               tts, t->ar_sizes, t->ar_bytes, t->ar_busbw, t->ar_wrong, notes);
                else
                        printf("  %-5d %-11s %9s %9s %6d %9s %7s %7s %12s  %s\n", i + 1, trial_outcome_name(t->outcome),
                               tts, ttm, t->epochs, acc, tgt,
                               t->outcome == OUT_SUCCESS ? (t->converged ? "yes" : "no") : "-", tp, notes);
        }
        const struct mlperf_score *s = &rr->score;
        if (s->scored)
                printf("  MLPerf score: %.3f %s (%s)\n", s->score, s->unit, s->method);
        else
                printf("  MLPerf score: %s: %s\n", s->valid ? "none" : "INVALID", s->reason);
        if (s->converged > 0)
                printf("  mean %.3f %s, sd %.3f %s (%.1f%%) over %d converged trial%s\n", s->mean, s->unit, s->sd, s->unit,
                       s->sd_pct, s->converged, s->converged == 1 ? "" : "s");
        if (reference) {
                if (rr->pub_minutes > 0 && !ar) {
                        double ours = s->scored ? s->score : s->mean;
                        printf("  published: %.3f min (%s)", rr->pub_minutes, rr->pub_source ? rr->pub_source : "");
                        if (ours > 0)
                                printf("; ours %+.1f%%", (ours - rr->pub_minutes) / rr->pub_minutes * 100);
                        printf("\n");
                } else
                        printf("  published: no published result for %s on %s\n", r->workload, r->system);
                if (rr->pub_ips > 0) {
                        double tp = 0;
                        int k = 0;
                        for (int i = 0; i < r->ntrials; i++)
                                if (rr->parsed[i].throughput > 0)
                                        tp += rr->parsed[i].throughput, k++;
                        printf("  published throughput: %.0f samples/s", rr->pub_ips);
                        if (k)
                                printf("; ours %.0f (%+.1f%%)", tp / k, (tp / k - rr->pub_ips) / rr->pub_ips * 100);
                        printf("\n");
                }
        }
}

static cJSON *num_or_null(double v, bool known)
{
        return known ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *run_to_json(const struct report_run *rr, bool reference)
{
        const struct bd_run *r = &rr->run;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "run", r->id);
        cJSON_AddStringToObject(o, "system", r->system);
        cJSON_AddStringToObject(o, "workload", r->workload);
        cJSON_AddStringToObject(o, "state", state_name(r->state));
        cJSON *arr = cJSON_AddArrayToObject(o, "trials");
        for (int i = 0; i < r->ntrials; i++) {
                const struct mlperf_trial *t = &rr->parsed[i];
                cJSON *e = cJSON_CreateObject();
                cJSON_AddNumberToObject(e, "trial", i + 1);
                cJSON_AddStringToObject(e, "status", trial_outcome_name(t->outcome));
                cJSON_AddItemToObject(e, "reason", t->reason[0] ? cJSON_CreateString(t->reason) : cJSON_CreateNull());
                cJSON_AddItemToObject(e, "log", rr->trials[i].log_path ? cJSON_CreateString(rr->trials[i].log_path)
                                                                       : cJSON_CreateNull());
                cJSON_AddItemToObject(e, "time_to_train_s", num_or_null(t->time_to_train, t->time_to_train > 0));
                cJSON_AddNumberToObject(e, "epochs", t->epochs);
                cJSON_AddItemToObject(e, "accuracy", num_or_null(t->accuracy, t->has_accuracy));
                cJSON_AddItemToObject(e, "target", num_or_null(t->target, t->has_target));
                cJSON_AddBoolToObject(e, "converged", t->converged);
                cJSON_AddItemToObject(e, "throughput", num_or_null(t->throughput, t->throughput > 0));
                if (!strcmp(r->workload, "allreduce")) {
                        cJSON_AddNumberToObject(e, "sizes", t->ar_sizes);
                        cJSON_AddNumberToObject(e, "largest_bytes", t->ar_bytes);
                        cJSON_AddNumberToObject(e, "busbw_gbps", t->ar_busbw);
                        cJSON_AddNumberToObject(e, "algbw_gbps", t->ar_algbw);
                        cJSON_AddNumberToObject(e, "wrong", (double)t->ar_wrong);
                }
                cJSON_AddNumberToObject(e, "lines", (double)t->lines);
                cJSON_AddNumberToObject(e, "mllog_lines", (double)t->mllog_lines);
                cJSON_AddNumberToObject(e, "unparseable_lines", (double)t->bad_lines);
                cJSON_AddItemToArray(arr, e);
        }
        const struct mlperf_score *s = &rr->score;
        cJSON *sc = cJSON_AddObjectToObject(o, "score");
        cJSON_AddItemToObject(sc, "value", num_or_null(s->score, s->scored));
        cJSON_AddStringToObject(sc, "unit", s->unit);
        cJSON_AddBoolToObject(sc, "valid", s->valid);
        cJSON_AddItemToObject(sc, "method", s->scored ? cJSON_CreateString(s->method) : cJSON_CreateNull());
        cJSON_AddItemToObject(sc, "reason", s->reason[0] ? cJSON_CreateString(s->reason) : cJSON_CreateNull());
        cJSON_AddNumberToObject(sc, "converged", s->converged);
        cJSON_AddItemToObject(sc, "mean", num_or_null(s->mean, s->converged > 0));
        cJSON_AddItemToObject(sc, "sd", num_or_null(s->sd, s->converged > 0));
        cJSON_AddItemToObject(sc, "sd_pct", num_or_null(s->sd_pct, s->converged > 0));
        if (reference) {
                cJSON *p = cJSON_AddObjectToObject(o, "published");
                cJSON_AddItemToObject(p, "minutes", num_or_null(rr->pub_minutes, rr->pub_minutes > 0));
                cJSON_AddItemToObject(p, "images_per_second", num_or_null(rr->pub_ips, rr->pub_ips > 0));
                cJSON_AddItemToObject(p, "source", rr->pub_source ? cJSON_CreateString(rr->pub_source) : cJSON_CreateNull());
                double ours = s->scored ? s->score : s->mean;
                bool cmp = rr->pub_minutes > 0 && ours > 0 && strcmp(r->workload, "allreduce");
                cJSON_AddItemToObject(p, "difference_pct",
                                      num_or_null(cmp ? (ours - rr->pub_minutes) / rr->pub_minutes * 100 : 0, cmp));
        }
        return o;
}

static void csv_field(const char *s)
{
        if (strpbrk(s, ",\"\n\r")) {
                putchar('"');
                for (; *s; s++) {
                        if (*s == '"')
                                putchar('"');
                        putchar(*s);
                }
                putchar('"');
        } else
                fputs(s, stdout);
}

static void print_csv(const struct report_run *rr)
{
        const struct bd_run *r = &rr->run;
        for (int i = 0; i < r->ntrials; i++) {
                const struct mlperf_trial *t = &rr->parsed[i];
                printf("%s,%s,%s,%d,", r->id, r->system, r->workload, i + 1);
                csv_field(trial_outcome_name(t->outcome));
                printf(",%.3f,%d,", t->time_to_train, t->epochs);
                if (t->has_accuracy)
                        printf("%.6f", t->accuracy);
                printf(",");
                if (t->has_target)
                        printf("%.6f", t->target);
                printf(",%s,%.3f,%.4f,%lld,%ld,", t->converged ? "yes" : "no", t->throughput, t->ar_busbw, t->ar_wrong,
                       t->bad_lines);
                csv_field(t->reason);
                printf("\n");
        }
}

int cmd_report(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        struct bd_opts o = { argc, argv, options, cmd, NULL };
        bool json = false, csv = false, reference = false;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                if (c == 'h')
                        return opts_release(&o), BD_EXIT_OK;
                if (c == 'j')
                        json = true;
                else if (c == OPT_CSV)
                        csv = true;
                else if (c == OPT_REFERENCE)
                        reference = true;
        }
        int next = opts_finish(&o, c, 1, 64, "RUN");
        if (next < 0)
                return BD_EXIT_USAGE;
        if (json && csv)
                return usage_error(cmd, "--json and --csv exclude each other");
        struct bd_store store;
        if (open_store(&store))
                return BD_EXIT_FAIL;
        int n = argc - next, ret = BD_EXIT_OK, loaded = 0;
        struct report_run *rr = xcalloc((size_t)n, sizeof(*rr));
        for (int i = 0; i < n; i++, loaded++) {
                struct report_run *x = &rr[i];
                if (load_run(&store, argv[next + i], &x->run, &x->trials)) {
                        ret = BD_EXIT_FAIL;
                        break;
                }
                x->config = cJSON_Parse(x->run.config ? x->run.config : "{}");
                double target = target_of(x->config, x->run.workload);
                x->parsed = xcalloc((size_t)(x->run.ntrials > 0 ? x->run.ntrials : 1), sizeof(*x->parsed));
                for (int k = 0; k < x->run.ntrials; k++)
                        mlperf_parse_file(x->trials[k].log_path ? x->trials[k].log_path : "", target, &x->parsed[k]);
                mlperf_score(x->parsed, x->run.ntrials, x->run.workload, &x->score);
                _cleanup_free_ char *kmin = xasprintf("%s.published.minutes", x->run.workload);
                _cleanup_free_ char *kips = xasprintf("%s.published.images_per_second", x->run.workload);
                _cleanup_free_ char *ksrc = xasprintf("%s.published.source", x->run.workload);
                x->pub_minutes = sys_num(x->config, kmin, 0);
                x->pub_ips = sys_num(x->config, kips, 0);
                x->pub_source = sys_str(x->config, ksrc, NULL);
        }
        if (ret == BD_EXIT_OK) {
                if (json) {
                        cJSON *arr = cJSON_CreateArray();
                        for (int i = 0; i < n; i++)
                                cJSON_AddItemToArray(arr, run_to_json(&rr[i], reference));
                        _cleanup_free_ char *text = cJSON_Print(arr);
                        puts(text);
                        cJSON_Delete(arr);
                } else if (csv) {
                        printf("run,system,workload,trial,status,time_to_train_s,epochs,accuracy,target,converged,"
                               "throughput,busbw_gbps,wrong,unparseable_lines,reason\n");
                        for (int i = 0; i < n; i++)
                                print_csv(&rr[i]);
                } else {
                        for (int i = 0; i < n; i++) {
                                if (i)
                                        printf("\n");
                                print_text(&rr[i], reference);
                        }
                        if (n > 1) {
                                printf("\n%-22s %-10s %-10s %12s %12s %7s\n", "RUN", "SYSTEM", "WORKLOAD", "SCORE", "MEAN",
                                       "SD%");
                                for (int i = 0; i < n; i++) {
                                        char sc[32], mean[32];
                                        const struct mlperf_score *s = &rr[i].score;
                                        if (s->scored)
                                                snprintf(sc, sizeof(sc), "%.3f %s", s->score, s->unit);
                                        else
                                                snprintf(sc, sizeof(sc), "%s", s->valid ? "none" : "invalid");
                                        if (s->converged)
                                                snprintf(mean, sizeof(mean), "%.3f %s", s->mean, s->unit);
                                        else
                                                snprintf(mean, sizeof(mean), "-");
                                        printf("%-22s %-10s %-10s %12s %12s %6.1f%%\n", rr[i].run.id, rr[i].run.system,
                                               rr[i].run.workload, sc, mean, s->sd_pct);
                                }
                        }
                }
        }
        for (int i = 0; i < loaded; i++) {
                free(rr[i].parsed);
                cJSON_Delete(rr[i].config);
                trials_free(rr[i].trials, rr[i].run.ntrials);
                run_release(&rr[i].run);
        }
        free(rr);
        store_close(&store);
        return ret;
}

/* cmd-report.c: benchctl report: time to train, accuracy and throughput of
 * each trial from its MLPerf log lines, and the run's MLPerf score, next to
 * the published result.  The formatting lives in report.c. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "benchctl.h"
#include "json.h"
#include "fs.h"
#include "mlperf.h"
#include "pages.h"
#include "report.h"
#include "run.h"
#include "scaling.h"
#include "strutil.h"
#include "sweep.h"
#include "system.h"
#include "tenants.h"
#include "workload.h"

#define OPT_CSV 360
#define OPT_REFERENCE 361
#define OPT_SCALING 362
#define OPT_HTML 363

static const struct bd_option options[] = {
        { "json", 'j', NULL, "print JSON" },
        { "csv", OPT_CSV, NULL, "print CSV, one row per trial" },
        { "reference", OPT_REFERENCE, NULL, "compare with the published result of the system" },
        { "scaling", OPT_SCALING, NULL, "the runs (or a sweep's) are one workload over node counts: speedup, efficiency and cost" },
        { "html", OPT_HTML, "FILE", "also write the report as a self-contained HTML page with plots" },
        { 0 }
};

/* A run loaded from the store, with what report.c borrows from it. */
struct loaded_run {
        struct bd_run run;
        struct bd_trial *trials;
        cJSON *config;
        struct report_trial *rt;
        char **paths;                   /* the logs read, per trial */
        char **traces, **trace_errors;  /* per trial: its merged trace, or why not */
        struct report_reference ref;
        char *pub_source;
        char **warnings;                /* the job output's "benchd: warning:" lines */
        int nwarnings;
        struct tenants_model tenants;   /* a run of tenants: theirs */
        bool has_tenants;
};

/* A trial of a run that has not ended, whose log has no run_stop (or is not
 * there yet), is running or pending: not killed, not missing. */
static void live_outcome(const struct bd_run *run, const struct bd_trial *trial, struct mlperf_trial *t)
{
        if (bd_state_final(run->state) || (t->outcome != OUT_INCOMPLETE && t->outcome != OUT_NO_RUN &&
                                        t->outcome != OUT_MISSING))
                return;
        if (trial->state == ST_RUNNING) {
                t->outcome = OUT_RUNNING;
                STR_COPY(t->reason, "no run_stop yet");
        } else if (trial->state == ST_PENDING) {
                t->outcome = OUT_PENDING;
                STR_COPY(t->reason, "not started yet");
        }
}

/* The launch script's warnings in the job output ("benchd: warning: ..."),
 * each once: the image and the host disagree, ... */
static void job_warnings(struct loaded_run *x)
{
        _cleanup_free_ char *path = run_output_path(&x->run), *text = NULL;
        if (!path || fs_read_file(path, 64u << 20, &text, NULL, NULL) < 0)
                return;
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (!str_has_prefix(line, "benchd: warning: "))
                        continue;
                line += strlen("benchd: warning: ");
                bool seen = false;
                for (int i = 0; i < x->nwarnings && !seen; i++)
                        seen = streq(x->warnings[i], line);
                if (seen || x->nwarnings >= 32)
                        continue;
                x->warnings = xrealloc(x->warnings, (size_t)(x->nwarnings + 1) * sizeof(*x->warnings));
                x->warnings[x->nwarnings++] = xstrdup(line);
        }
}

static void loaded_run_load(struct bd_store *s, struct loaded_run *x, struct report_run *ret)
{
        const char *w = x->run.workload;
        const struct workload *wl = run_workload(&x->run);    /* read once, for every trial */
        x->config = cJSON_Parse(x->run.config ? x->run.config : "{}");
        x->rt = xcalloc((size_t)(x->run.ntrials > 0 ? x->run.ntrials : 0) + 1, sizeof(*x->rt));
        x->paths = xcalloc((size_t)(x->run.ntrials > 0 ? x->run.ntrials : 0) + 1, sizeof(*x->paths));
        x->traces = xcalloc((size_t)(x->run.ntrials > 0 ? x->run.ntrials : 0) + 1, sizeof(*x->traces));
        x->trace_errors = xcalloc((size_t)(x->run.ntrials > 0 ? x->run.ntrials : 0) + 1, sizeof(*x->trace_errors));
        for (int k = 0; k < x->run.ntrials; k++) {
                bool kept;
                x->rt[k].number = x->trials[k].trial;
                /* the copy `benchctl logs` collected when the log directory's is gone or shorter */
                x->paths[k] = trial_log_best(&x->run, &x->trials[k], &kept);
                x->rt[k].log_path = x->paths[k];
                if (x->paths[k])
                        trial_read(&x->run, wl, &x->trials[k], x->paths[k], &x->rt[k].result);
                else {
                        memset(&x->rt[k].result, 0, sizeof(x->rt[k].result));
                        x->rt[k].result.outcome = OUT_MISSING;
                        snprintf(x->rt[k].result.reason, sizeof(x->rt[k].result.reason), "no log recorded");
                }
                live_outcome(&x->run, &x->trials[k], &x->rt[k].result);
                /* its ranks' step traces (--trace), merged into one */
                if (x->run.logdir) {
                        _cleanup_free_ char *base = xasprintf("%s/%s_%d.trace", x->run.logdir, x->run.id,
                                                              x->trials[k].trial);
                        struct bd_err err;
                        int r = trace_merge(base, &x->rt[k].trace, &err);
                        if (r > 0)
                                x->rt[k].trace_file = x->traces[k] = xasprintf("%s.json", base);
                        else if (r < 0)
                                x->rt[k].trace_error = x->trace_errors[k] = xstrdup(err.msg);
                }
        }
        _cleanup_free_ char *kmin = xasprintf("%s.published.minutes", w);
        _cleanup_free_ char *kips = xasprintf("%s.published.images_per_second", w);
        _cleanup_free_ char *ksrc = xasprintf("%s.published.source", w);
        const char *src = json_str(x->config, ksrc, NULL);
        x->ref.minutes = json_num(x->config, kmin, 0);
        x->ref.images_per_second = json_num(x->config, kips, 0);
        x->pub_source = src ? xstrdup(src) : NULL;
        x->ref.source = x->pub_source;
        *ret = (struct report_run){
                .id = x->run.id,
                .system = x->run.system,
                .workload = w,
                .wl = wl,
                .state = bd_state_name(x->run.state),
                .trials = x->rt,
                .ntrials = x->run.ntrials,
                .reference = &x->ref,
                .fixed = run_fixed(x->config, wl ? wl->section : w),
        };
        job_warnings(x);
        ret->warnings = x->warnings;
        ret->nwarnings = x->nwarnings;
        int n;
        if ((x->has_tenants = tenants_of_run(&x->run, x->config, &n))) {
                tenants_load(s, &x->run, x->trials, n, &x->tenants);
                ret->tenants = &x->tenants;
        }
}

static void loaded_run_release(struct loaded_run *x)
{
        if (x->has_tenants)
                tenants_release(&x->tenants);
        free(x->rt);
        for (int k = 0; x->paths && k < x->run.ntrials; k++) {
                free(x->paths[k]);
                free(x->traces[k]);
                free(x->trace_errors[k]);
        }
        free(x->paths);
        free(x->traces);
        free(x->trace_errors);
        free(x->pub_source);
        for (int k = 0; k < x->nwarnings; k++)
                free(x->warnings[k]);
        free(x->warnings);
        cJSON_Delete(x->config);
        bd_trials_free(x->trials, x->run.ntrials);
        bd_run_release(&x->run);
}

/* The runs of a sweep over node or rank counts, for --scaling: every cell's
 * run, in the sweep's order; a sweep that varies anything else, or with a
 * cell that has not run, is an error. */
static int sweep_runs(struct bd_store *s, const char *id, char ***ret_ids, int *ret_n)
{
        struct sweep_data d;
        int ret = sweep_data_load(s, id, &d);
        if (ret != BD_EXIT_OK)
                return ret;
        if (!d.scaling || d.ncols > 1) {
                bd_error("--scaling: sweep %s is not over nodes or ranks alone (its columns: %s%s)", d.g.id,
                         d.ncols ? d.cols[0] : "none", d.ncols > 1 ? ", ..." : "");
                sweep_data_release(&d);
                return BD_EXIT_USAGE;
        }
        char **ids = xcalloc((size_t)d.ncells + 1, sizeof(char *));
        int n = 0;
        for (int i = 0; i < d.ncells && ret == BD_EXIT_OK; i++) {
                if (!d.raw[i].run_id) {
                        bd_error("--scaling: cell %d (%s) of sweep %s has not run (benchctl sweep --resume %s)", i + 1,
                                 d.raw[i].label, d.g.id, d.g.id);
                        ret = BD_EXIT_FAIL;
                        break;
                }
                ids[n++] = xstrdup(d.raw[i].run_id);
        }
        sweep_data_release(&d);
        if (ret != BD_EXIT_OK) {
                for (int i = 0; i < n; i++)
                        free(ids[i]);
                free(ids);
                return ret;
        }
        *ret_ids = ids;
        *ret_n = n;
        return BD_EXIT_OK;
}

/* A sweep's table as text or JSON, and its page. */
static int report_sweep(struct bd_store *s, const char *id, bool json, const char *html)
{
        struct sweep_data d;
        int ret = sweep_data_load(s, id, &d);
        if (ret)
                return ret;
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        if (json) {
                cJSON *o = sweep_json(&d);
                char *text = cJSON_Print(o);
                buf_printf(&out, "%s\n", text);
                free(text);
                cJSON_Delete(o);
        } else
                sweep_text(&d, &out);
        fwrite(out.s, 1, out.len, stdout);
        if (html) {
                _cleanup_buf_ struct bd_buf page = BD_BUF_INIT;
                sweep_html(&d, &page);
                if (write_page(html, &page) < 0)
                        ret = BD_EXIT_FAIL;
        }
        sweep_data_release(&d);
        return ret;
}

/* --scaling: the runs given, or every cell's run of a sweep over nodes or
 * ranks alone. */
static int report_scaling(struct bd_store *s, char **ids, int n, bool sweep, bool json, const char *html)
{
        struct scaling_data sd;
        _cleanup_free_ char **cell_runs = NULL;
        int ret;
        if (sweep && (ret = sweep_runs(s, ids[0], &cell_runs, &n)) != BD_EXIT_OK)
                return ret;
        if (sweep)
                ids = cell_runs;
        ret = scaling_load(s, ids, n, &sd);
        for (int i = 0; sweep && i < n; i++)
                free(cell_runs[i]);
        if (ret != BD_EXIT_OK)
                return ret;
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        if (json)
                scaling_json(&sd, &out);
        else
                scaling_text(&sd, &out);
        fwrite(out.s, 1, out.len, stdout);
        if (html) {
                _cleanup_buf_ struct bd_buf page = BD_BUF_INIT;
                scaling_html(&sd, &page);
                if (write_page(html, &page) < 0)
                        ret = BD_EXIT_FAIL;
        }
        scaling_release(&sd);
        return ret;
}

/* "last" after a sweep or a suite is its last cell's run: said, with how to
 * report the whole of it. */
static void say_group(struct bd_store *s, const char *run_id)
{
        _cleanup_free_ char *group = NULL, *kind = NULL;
        int idx, n;
        struct bd_err err;
        if (store_group_of_run(s, run_id, &group, &kind, &idx, &n, &err) <= 0)
                return;
        fprintf(stderr, "benchctl: run %s is cell %d of %d of %s %s: 'benchctl %s%s' reports the %s\n", run_id,
                idx + 1, n, kind, group, streq(kind, "suite") ? "suite report " : "report ", group, kind);
}

/* The runs' trials and scores as text, JSON or CSV, and their page. */
static int report_runs(struct bd_store *s, char **ids, int n, enum report_format format, unsigned flags,
                       const char *html)
{
        int ret = BD_EXIT_OK, loaded = 0;
        _cleanup_free_ struct loaded_run *lr = xcalloc((size_t)n, sizeof(*lr));
        _cleanup_free_ struct report_run *runs = xcalloc((size_t)n, sizeof(*runs));
        for (int i = 0; i < n; i++, loaded++) {
                if (load_run(s, ids[i], &lr[i].run, &lr[i].trials)) {
                        ret = BD_EXIT_FAIL;
                        break;
                }
                loaded_run_load(s, &lr[i], &runs[i]);
                if (streq(ids[i], "last"))
                        say_group(s, lr[i].run.id);
        }
        if (ret == BD_EXIT_OK) {
                _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
                int r = report_write(runs, n, format, flags, &out);
                if (r < 0) {
                        bd_error("cannot write the report: %s", strerror(-r));
                        ret = BD_EXIT_FAIL;
                } else if (out.len)
                        fwrite(out.s, 1, out.len, stdout);
                if (html && ret == BD_EXIT_OK) {
                        _cleanup_buf_ struct bd_buf page = BD_BUF_INIT;
                        runs_html(runs, n, &page);
                        if (write_page(html, &page) < 0)
                                ret = BD_EXIT_FAIL;
                }
        }
        for (int i = 0; i < loaded; i++)
                loaded_run_release(&lr[i]);
        return ret;
}

int cmd_report(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        unsigned flags = 0;
        bool json = false, csv = false, scaling = false;
        const char *arg, *html = NULL;
        int c, next, n, ret;
        struct bd_store store;
        while ((c = opts_next(&o, &arg)) > 0) {
                if (c == 'j')
                        json = true;
                else if (c == OPT_CSV)
                        csv = true;
                else if (c == OPT_REFERENCE)
                        flags |= REPORT_REFERENCE;
                else if (c == OPT_SCALING)
                        scaling = true;
                else if (c == OPT_HTML)
                        html = arg;
        }
        next = opts_finish(&o, 1, 64, "RUN");
        if (next < 0)
                return opts_exit(next);
        if (json && csv)
                return usage_error(cmd, "--json and --csv exclude each other");
        n = argc - next;
        bool sweep = str_has_prefix(argv[next], "sw-");
        if (sweep && (n > 1 || csv || (flags & REPORT_REFERENCE)))
                return usage_error(cmd, "a sweep's report takes one SWEEP and --json, --html or --scaling only");
        if (csv && (scaling || html))
                return usage_error(cmd, "--csv goes with neither --scaling nor --html");
        if (open_store(&store))
                return BD_EXIT_FAIL;
        if (scaling)
                ret = report_scaling(&store, argv + next, n, sweep, json, html);
        else if (sweep)
                ret = report_sweep(&store, argv[next], json, html);
        else
                ret = report_runs(&store, argv + next, n, json ? REPORT_JSON : csv ? REPORT_CSV : REPORT_TEXT, flags,
                                  html);
        store_close(&store);
        return ret;
}

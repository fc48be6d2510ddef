/* cmd-suite.c: benchctl suite: a baselines file's benchmarks, each run
 * --repeat times (one run of that many throughput trials), recorded as one
 * group of kind "suite"; its report judges them against their targets
 * (suite.h).  The baselines file's text is kept with the suite, so a report
 * can be made again later, or with other targets (--baselines). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "benchctl.h"
#include "fs.h"
#include "group.h"
#include "json.h"
#include "launch.h"
#include "pages.h"
#include "render.h"
#include "results.h"
#include "run.h"
#include "strutil.h"
#include "suite-report.h"
#include "workload.h"

#define OPT_REPEAT 380
#define OPT_DRY 381
#define OPT_BASELINES 382
#define OPT_COMPARE 383
#define OPT_HTML 384
#define OPT_RESUME 385
#define OPT_CANCEL 386
#define OPT_DATA 387
#define OPT_LOGDIR 388

static const struct bd_option run_options[] = {
        { "system", 's', "SYSTEM", "system to run on" },
        { "repeat", OPT_REPEAT, "N", "runs of each benchmark, 2 to 100 (default 4: the olympic mean drops two)" },
        { "dry-run", OPT_DRY, NULL, "check the baselines and print what would run; run nothing" },
        { "resume", OPT_RESUME, "SUITE", "run what a suite has not run yet (no BASELINES)" },
        { "cancel", OPT_CANCEL, "SUITE", "cancel a suite: its running benchmark and the rest" },
        { "data", OPT_DATA, "DIR", "dataset directory of every benchmark (sets paths.data)" },
        { "logdir", OPT_LOGDIR, "DIR", "log directory of every benchmark (sets paths.logs)" },
        COMMON_SYSTEM_OPTIONS,
        { 0 }
};

static const struct bd_option report_options[] = {
        { "baselines", OPT_BASELINES, "FILE", "judge against this file's targets instead of the suite's own" },
        { "compare", OPT_COMPARE, "SUITE", "compare with an earlier suite (Welch's t-test per benchmark)" },
        { "json", 'j', NULL, "print JSON" },
        { "html", OPT_HTML, "FILE", "also write the report as a self-contained HTML page" },
        { 0 }
};

/* The sets of a benchmark: the command line's directories, then its own
 * for the ranks the system has with them (baseline_run_sets).  0, or an
 * exit status (the error printed). */
static int bench_sets(struct bd_ctx *ctx, const char *system, const struct baseline *b, char *const *dirs,
                      char ***ret)
{
        long ranks = 0;
        for (int pass = 0; pass < 2; pass++) {
                char **own = baseline_run_sets(b, ranks), **v = xcalloc(3, sizeof(char *));
                int n = 0;
                for (int i = 0; i < 2; i++)
                        if (dirs[i])
                                v[n++] = xstrdup(dirs[i]);
                for (int i = 0; own[i]; i++) {
                        v = xrealloc(v, (size_t)(n + 2) * sizeof(char *));
                        v[n++] = own[i];
                }
                v[n] = NULL;
                free(own);
                if (pass == 1) {
                        *ret = v;
                        return 0;
                }
                _cleanup_(system_release) struct bd_system sys = { 0 };
                int r = ctx_load_system(ctx, system, v, &sys);
                strv_free(v);
                if (r != 0)
                        return r;
                ranks = sys_int(sys.json, "nodes") * sys_int(sys.json, "ranks_per_node");
        }
        return 0;
}

/* The report of suite id as text or JSON, and its page (html: NULL for none). */
static int print_report(struct bd_store *s, const char *id, const char *baselines_path, const char *compare,
                        bool json, const char *html)
{
        struct suite_report r;
        int ret = suite_report_load(s, id, baselines_path, compare, &r);
        if (ret == BD_EXIT_OK) {
                if (json) {
                        cJSON *o = suite_report_json(&r);
                        if (o) {
                                char *t = cJSON_Print(o);
                                printf("%s\n", t);
                                free(t);
                                cJSON_Delete(o);
                        }
                } else
                        suite_report_text(&r, stdout);
                if (html) {
                        _cleanup_buf_ struct bd_buf page = BD_BUF_INIT;
                        suite_html(&r.g, &r.b, r.rows, &r.v, r.now.in, &page);
                        if (write_page(html, &page) < 0)
                                ret = BD_EXIT_FAIL;
                }
        }
        suite_report_release(&r);
        return ret;
}

/* Runs the suite's benchmarks that have not run and, when all have, prints
 * its report. */
static int run_suite(struct bd_ctx *ctx, struct bd_store *s, const char *id)
{
        int ret = group_run(ctx, s, id, "suite", NULL);
        if (ret != BD_EXIT_OK)
                return ret;
        printf("\n");
        fflush(stdout);
        return print_report(s, id, NULL, NULL, false, NULL);
}

/* Whether a benchmark has a target that may be a part of a device's name:
 * a key that is not a known system's. */
static bool device_keyed(const struct baseline *b, char *const *systems)
{
        const cJSON *t;
        cJSON_ArrayForEach(t, b->targets) {
                bool sys = false;
                for (char *const *s = systems; s && *s && !sys; s++)
                        sys = streq(*s, t->string);
                if (!sys)
                        return true;
        }
        return false;
}

/* Benchmarks with no target for the system, by its name or possibly by its
 * device's: said before they run. */
static void warn_untargeted(struct bd_ctx *ctx, const struct baselines *b, const char *system)
{
        _cleanup_buf_ struct bd_buf none = BD_BUF_INIT;
        size_t n = 0;
        char **systems = system_list(ctx_dirs(ctx));
        for (size_t i = 0; i < b->n; i++) {
                const char *key;
                if (!isnan(baseline_target(&b->b[i], system, NULL, &key)) || device_keyed(&b->b[i], systems))
                        continue;
                buf_printf(&none, "%s%s", none.len ? ", " : "", b->b[i].name);
                n++;
        }
        strv_free(systems);
        if (n)
                bd_warning("%s: no target for system '%s' in %s of %zu benchmark%s (%s): %s cannot pass",
                           b->path, system, n == b->n ? "any" : "some", b->n, b->n == 1 ? "" : "s", none.s,
                           n == 1 ? "it" : "they");
}

static int suite_run(struct bd_ctx *ctx, const char *path, const char *system, long repeat, bool dry,
                     char *const *dirs)
{
        struct bd_err err;
        struct baselines b;
        if (baselines_load(path, &b, &err) < 0)
                return bd_error("%s", err.msg), BD_EXIT_CONFIG;
        _cleanup_free_ char *text = NULL;
        size_t len;
        if (fs_read_file(path, 16 << 20, &text, &len, &err) < 0) {
                baselines_release(&b);
                return bd_error("%s", err.msg), BD_EXIT_FAIL;
        }
        int ret = 0;
        struct bd_cell *cells = xcalloc(b.n + 1, sizeof(*cells));
        _cleanup_(system_release) struct bd_system base = { 0 };
        ret = ctx_load_system(ctx, system, NULL, &base);
        /* every benchmark's system checked before anything runs */
        for (size_t i = 0; i < b.n && ret == 0; i++) {
                int n;
                char **sets = NULL;
                if ((ret = bench_sets(ctx, system, &b.b[i], dirs, &sets)) != 0) {
                        bd_error("(in benchmark '%s' of %s, line %d)", b.b[i].name, path, b.b[i].line);
                        break;
                }
                for (n = 0; sets[n];)
                        n++;
                struct bd_system check = { 0 };
                if ((ret = ctx_load_system(ctx, system, sets, &check)) != 0)
                        bd_error("(in benchmark '%s' of %s, line %d)", b.b[i].name, path, b.b[i].line);
                system_release(&check);
                cJSON *p = cJSON_CreateObject();
                cJSON_AddStringToObject(p, "workload", b.b[i].workload);
                cJSON_AddItemToObject(p, "sets", cJSON_CreateStringArray((const char *const *)sets, n));
                cells[i] = (struct bd_cell){ .idx = (int)i, .label = b.b[i].name, .params = cJSON_PrintUnformatted(p) };
                cJSON_Delete(p);
                if (dry && ret == 0) {
                        printf("%s (%s, %ld run%s):", b.b[i].name, b.b[i].workload, repeat, repeat == 1 ? "" : "s");
                        for (int k = 0; k < n; k++)
                                printf(" --set %s", sets[k]);
                        printf("\n");
                }
                strv_free(sets);
        }
        if (ret == 0)
                warn_untargeted(ctx, &b, base.name);
        if (ret == 0 && !dry) {
                struct bd_store store;
                if (open_store(&store))
                        ret = BD_EXIT_FAIL;
                else {
                        _cleanup_free_ char *rid = run_id_new();
                        _cleanup_free_ char *id = xasprintf("su-%s", rid);
                        _cleanup_free_ char *abs = fs_path_clean(path);
                        cJSON *spec = cJSON_CreateObject();
                        cJSON_AddStringToObject(spec, "baselines_path", abs);
                        cJSON_AddStringToObject(spec, "baselines", text);
                        cJSON_AddNumberToObject(spec, "runs", (double)repeat);
                        _cleanup_free_ char *spec_text = cJSON_PrintUnformatted(spec);
                        cJSON_Delete(spec);
                        struct bd_group g = { .id = id, .kind = (char *)"suite", .system = base.name,
                                              .spec = spec_text, .created = (double)time(NULL),
                                              .state = (char *)"running", .ncells = (int)b.n };
                        if (store_add_group(&store, &g, cells, &err) < 0) {
                                bd_error("%s", err.msg);
                                ret = BD_EXIT_FAIL;
                        } else {
                                printf("suite %s: %zu benchmark%s of %s on %s, %ld run%s each\n", id, b.n,
                                       b.n == 1 ? "" : "s", path, base.name, repeat, repeat == 1 ? "" : "s");
                                fflush(stdout);
                                ret = run_suite(ctx, &store, id);
                        }
                        store_close(&store);
                }
        }
        for (size_t i = 0; i < b.n; i++)
                free(cells[i].params);
        free(cells);
        baselines_release(&b);
        return ret;
}

static int cmd_suite_run(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, run_options, cmd, ctx);
        const char *system = NULL, *resume = NULL, *cancel = NULL, *arg;
        _cleanup_free_ char *data = NULL, *logdir = NULL;
        long repeat = 4;
        bool dry = false;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 's': system = arg; break;
                case OPT_DRY: dry = true; break;
                case OPT_RESUME: resume = arg; break;
                case OPT_CANCEL: cancel = arg; break;
                case OPT_DATA:
                        free(data);
                        data = path_set("paths.data", arg);
                        break;
                case OPT_LOGDIR:
                        free(logdir);
                        logdir = path_set("paths.logs", arg);
                        break;
                /* one run has no deviation: the verdict needs two */
                case OPT_REPEAT: opts_number(&o, "repeat", arg, 2, 100, &repeat); break;
                }
        }
        bool by_id = resume || cancel;
        int next = opts_finish(&o, by_id ? 0 : 1, by_id ? 0 : 1, "BASELINES");
        if (next < 0)
                return opts_exit(next);
        if (o.sets)
                return usage_error(cmd, "--set: a suite's settings are in its baselines file ('set')");
        if (by_id && (system || data || logdir || dry))
                return usage_error(cmd, "--resume and --cancel take a recorded suite: no --system, --data, --logdir "
                                   "or --dry-run");
        if (by_id) {
                if (resume && cancel)
                        return usage_error(cmd, "--resume and --cancel exclude each other");
                struct bd_store store;
                if (open_store(&store))
                        return BD_EXIT_FAIL;
                int ret = resume ? run_suite(ctx, &store, resume) : group_cancel(&store, cancel, "suite");
                store_close(&store);
                return ret;
        }
        if (!system)
                return usage_error(cmd, "missing --system SYSTEM");
        char *const dirs[2] = { data, logdir };
        return suite_run(ctx, argv[next], system, repeat, dry, dirs);
}

static int cmd_suite_report(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, report_options, cmd, ctx);
        const char *baselines = NULL, *compare = NULL, *html = NULL, *arg;
        bool json = false;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case OPT_BASELINES: baselines = arg; break;
                case OPT_COMPARE: compare = arg; break;
                case OPT_HTML: html = arg; break;
                case 'j': json = true; break;
                }
        }
        int next = opts_finish(&o, 0, 1, "SUITE");
        if (next < 0)
                return opts_exit(next);
        struct bd_store store;
        if (open_store(&store))
                return BD_EXIT_FAIL;
        int ret = print_report(&store, next < argc ? argv[next] : "last", baselines, compare, json, html);
        store_close(&store);
        return ret;
}

int cmd_suite(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        if (argc >= 2 && streq(argv[1], "run"))
                return cmd_suite_run(argc - 1, argv + 1, ctx, cmd);
        if (argc >= 2 && streq(argv[1], "report"))
                return cmd_suite_report(argc - 1, argv + 1, ctx, cmd);
        if (argc >= 2 && (streq(argv[1], "--help") || streq(argv[1], "-h"))) {
                printf("Usage: benchctl suite %s\n%s\n\n"
                       "  run BASELINES --system SYSTEM [--repeat N] [--dry-run]\n"
                       "        run each benchmark of BASELINES N times (default 4) and print the report\n"
                       "  run --resume SUITE | --cancel SUITE\n"
                       "  report [SUITE] [--baselines FILE] [--compare SUITE] [--json] [--html FILE]\n"
                       "        the report of SUITE (default: the last one)\n"
                       "\nSee benchctl(1).\n", cmd->usage, cmd->summary);
                return BD_EXIT_OK;
        }
        return usage_error(cmd, argc >= 2 ? "unknown action '%s': run or report" : "missing action%s: run or report",
                           argc >= 2 ? argv[1] : "");
}

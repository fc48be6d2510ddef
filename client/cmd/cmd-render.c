/* cmd-render.c: benchctl render: print or write a run's launch script. */
#include "config.h"

#include <string.h>

#include "benchctl.h"
#include "fs.h"
#include "bd-paths.h"
#include "render.h"
#include "run.h"
#include "strutil.h"

#define OPT_RUN_ID 310
#define OPT_RUN 311

static const struct bd_option options[] = {
        { "system", 's', "SYSTEM", "system to run on" },
        { "runs", 'n', "N", "number of trials (default: the system's 'trials')" },
        { "output", 'o', "FILE", "write the script to FILE (atomically, mode 0755)" },
        { "run-id", OPT_RUN_ID, "ID", "run id used in log names (default: a new one)" },
        { "run", OPT_RUN, "RUN", "the script recorded with run RUN, as it was submitted (no WORKLOAD)" },
        COMMON_SYSTEM_OPTIONS,
        { 0 }
};

/* Prints a script, or writes it to output (atomically, mode 0755). */
static int emit(const char *script, size_t len, const char *output)
{
        struct bd_err err;
        if (!output)
                fputs(script, stdout);
        else if (fs_write_atomic(output, script, len, 0755, &err) < 0) {
                bd_error("%s", err.msg);
                return BD_EXIT_FAIL;
        }
        return BD_EXIT_OK;
}

int cmd_render(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        const char *system = NULL, *output = NULL, *run_id = NULL, *run = NULL;
        long runs = 0;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 's': system = arg; break;
                case 'o': output = arg; break;
                case OPT_RUN_ID: run_id = arg; break;
                case OPT_RUN: run = arg; break;
                case 'n': opts_number(&o, "runs", arg, 1, 100, &runs); break;
                }
        }
        int next = opts_finish(&o, run ? 0 : 1, run ? 0 : 1, opts_workload);
        if (next < 0)
                return opts_exit(next);
        if (run) {
                if (system || runs || run_id || o.sets)
                        return usage_error(cmd, "--run prints what was recorded: no --system, --runs, --run-id "
                                                "or --set with it");
                struct bd_run r;
                if (load_recorded_run(run, &r))
                        return BD_EXIT_FAIL;
                int ret = BD_EXIT_FAIL;
                if (!r.script)
                        bd_error("run %s has no recorded script", r.id);
                else
                        ret = emit(r.script, strlen(r.script), output);
                bd_run_release(&r);
                return ret;
        }
        if (!system)
                return usage_error(cmd, "missing --system SYSTEM");
        if (run_id && (!*run_id || strspn(run_id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
                                            strlen(run_id)))
                return usage_error(cmd, "--run-id: use letters, digits and _.- only");

        const struct workload *w;
        int ret = ctx_workload(argv[next], &w);
        if (ret)
                return ret;
        struct bd_system s;
        ret = ctx_load_system(ctx, system, o.sets, &s);
        if (ret)
                return ret;
        _cleanup_free_ char *id = run_id ? xstrdup(run_id) : run_id_new();
        _cleanup_free_ char *bin = fs_exe_dir();
        struct render_opts ro = {
                .workload = argv[next],
                .trials = (int)runs,
                .run_id = id,
                .bin_dir = bin ? bin : BD_BINDIR,
                .version = PACKAGE_VERSION,
        };
        _cleanup_buf_ struct bd_buf script = BD_BUF_INIT, warnings = BD_BUF_INIT;
        ro.warnings = &warnings;
        struct bd_err err;
        int r = render_script(&s, &ro, &script, &err);
        print_warnings(&warnings);
        if (r < 0) {
                bd_error("%s", err.msg);
                ret = BD_EXIT_CONFIG;
        } else
                ret = emit(script.s, script.len, output);
        system_release(&s);
        return ret;
}

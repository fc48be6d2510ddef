/* cmd-submit.c: benchctl submit: render, start, record, and optionally wait
 * (run/submit.c). */
#include "config.h"

#include <stdlib.h>

#include "benchctl.h"
#include "launch.h"

#define OPT_DATA 330
#define OPT_LOGDIR 331
#define OPT_WAIT 332
#define OPT_DRY 333
#define OPT_QUIET 334
#define OPT_TENANTS 335

static const struct bd_option options[] = {
        { "system", 's', "SYSTEM", "system to run on" },
        { "runs", 'n', "N", "number of trials (default: the system's 'trials')" },
        { "data", OPT_DATA, "DIR", "dataset directory (sets paths.data)" },
        { "logdir", OPT_LOGDIR, "DIR", "log directory on shared storage (sets paths.logs)" },
        { "wait", OPT_WAIT, NULL, "follow the run until it ends; exit with its outcome" },
        { "quiet", OPT_QUIET, NULL, "with --wait: the run's state only, not its trial's progress" },
        { "dry-run", OPT_DRY, NULL, "render and check where it would run; record nothing" },
        { "tenants", OPT_TENANTS, "per-gpu|N", "independent single-rank runs at once on one node, each confined to "
          "its GPU and share (sets tenants)" },
        COMMON_SYSTEM_OPTIONS,
        { 0 }
};

int cmd_submit(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        /* declared first, freed last: o.sets ends with these */
        _cleanup_free_ char *data_set = NULL, *log_set = NULL, *tenants_set = NULL;
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        const char *system = NULL;
        long runs = 0;
        bool wait = false, dry = false, quiet = false;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 's': system = arg; break;
                case OPT_WAIT: wait = true; break;
                case OPT_DRY: dry = true; break;
                case OPT_QUIET: quiet = true; break;
                case OPT_DATA:
                        free(data_set);
                        data_set = path_set("paths.data", arg);
                        break;
                case OPT_LOGDIR:
                        free(log_set);
                        log_set = path_set("paths.logs", arg);
                        break;
                case 'n': opts_number(&o, "runs", arg, 1, 100, &runs); break;
                case OPT_TENANTS:
                        free(tenants_set);
                        tenants_set = xasprintf("tenants=%s", arg);
                        break;
                }
        }
        int next = opts_finish(&o, 1, 1, opts_workload);
        if (next < 0)
                return opts_exit(next);
        if (!system)
                return usage_error(cmd, "missing --system SYSTEM");
        if (data_set)
                opts_add_set(&o, data_set);
        if (log_set)
                opts_add_set(&o, log_set);
        if (tenants_set)
                opts_add_set(&o, tenants_set);

        enum follow_mode follow = !wait ? FOLLOW_NONE : quiet ? FOLLOW_QUIET : FOLLOW_TEXT;
        return submit_run(ctx, system, argv[next], o.sets, (int)runs, dry, follow, NULL);
}

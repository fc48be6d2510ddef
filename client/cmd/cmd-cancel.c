/* cmd-cancel.c: benchctl cancel [--force] RUN (run/cancel.c). */
#include "config.h"

#include "benchctl.h"
#include "launch.h"
#include "run.h"

#define OPT_FORCE 340

static const struct bd_option options[] = {
        { "force", OPT_FORCE, NULL, "record the run as cancelled even when its processes cannot be stopped from "
                                    "here (its host is gone, or restarted under another name)" },
        { 0 }
};

int cmd_cancel(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        const char *arg;
        bool force = false;
        int c;
        while ((c = opts_next(&o, &arg)) > 0)
                if (c == OPT_FORCE)
                        force = true;
        int next = opts_finish(&o, 1, 1, "RUN");
        if (next < 0)
                return opts_exit(next);
        struct bd_store store;
        if (open_store(&store))
                return BD_EXIT_FAIL;
        int ret = cancel_run(&store, argv[next], force);
        store_close(&store);
        return ret;
}

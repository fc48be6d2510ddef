/* cmd-cancel.c: benchctl cancel: stop a run's job or processes. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "benchctl.h"
#include "run.h"
#include "scheduler.h"
#include "strutil.h"

#define OPT_FORCE 340
#define FORCED "cancelled by benchctl --force, not stopped: "

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

int cancel_run(struct bd_store *store_p, const char *id, bool force)
{
#define store (*store_p)
        struct bd_run r;
        struct bd_trial *t;
        int ret = BD_EXIT_OK;
        if (load_run(&store, id, &r, &t))
                return BD_EXIT_FAIL;
        /* recorded cancelled with --force, not stopped: try again to stop it */
        bool again = r.state == ST_CANCELLED && r.reason && str_has_prefix(r.reason, FORCED);
        if (bd_state_final(r.state) && !again) {
                printf("run %s already ended: %s\n", r.id, bd_state_name(r.state));
        } else {
                struct bd_err err;
                bool here = run_started_here(&r);
                int x = streq(r.launcher, "slurm") ? slurm_cancel(r.job_id, &err)
                                                   : local_cancel(r.rundir, r.pid, here, &err);
                if (again && x == -ENOENT)
                        x = 0; /* the controller no longer knows the job: it ended */
                _cleanup_free_ char *reason = NULL;
                if (x < 0 && force) {
                        bd_warning("run %s: %s; recorded as cancelled without stopping it (--force)", r.id, err.msg);
                        reason = xasprintf(FORCED "%s", err.msg);
                } else if (x == -EREMOTE) {
                        bd_error("run %s was started on host '%s'%s: cancel it there (or, if that host is gone, "
                                 "'benchctl cancel --force %s')", r.id, r.host,
                                 here ? " (another container or PID namespace)" : "", r.id);
                        ret = BD_EXIT_FAIL;
                } else if (x < 0) {
                        bd_error("%s", err.msg);
                        ret = exit_for_error(x);
                }
                if (ret == BD_EXIT_OK && again && !reason) {
                        free(r.reason);
                        r.reason = xstrdup("cancelled by benchctl (stopped after --force)");
                        if (store_update(&store, &r, t, &err) < 0) {
                                bd_error("%s", err.msg);
                                ret = BD_EXIT_FAIL;
                        } else
                                printf("run %s cancelled: its job is stopped now\n", r.id);
                } else if (ret == BD_EXIT_OK && !again) {
                        double now = (double)time(NULL);
                        r.state = ST_CANCELLED;
                        r.end_time = now;
                        free(r.reason);
                        r.reason = xstrdup(reason ? reason : "cancelled by benchctl");
                        for (int i = 0; i < r.ntrials; i++)
                                if (!bd_state_final(t[i].state)) {
                                        if (t[i].state == ST_RUNNING)
                                                t[i].end_time = now;
                                        t[i].state = ST_CANCELLED;
                                        free(t[i].reason);
                                        t[i].reason = xstrdup("cancelled by benchctl");
                                }
                        if (store_update(&store, &r, t, &err) < 0) {
                                bd_error("%s", err.msg);
                                ret = BD_EXIT_FAIL;
                        } else
                                printf("run %s cancelled\n", r.id);
                }
        }
        bd_trials_free(t, r.ntrials);
        bd_run_release(&r);
        return ret;
#undef store
}

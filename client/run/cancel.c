/* cancel.c: cancelling a run through its scheduler (or its local
 * processes) and recording it (benchctl cancel, sweeps and suites). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "benchctl.h"
#include "launch.h"
#include "run.h"
#include "scheduler.h"
#include "strutil.h"

#define FORCED "cancelled by benchctl --force, not stopped: "

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

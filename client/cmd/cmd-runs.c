/* cmd-runs.c: benchctl runs: the history from the results store. */
#include "config.h"

#include <limits.h>
#include <string.h>
#include <time.h>

#include "benchctl.h"
#include "json.h"
#include "run.h"
#include "strutil.h"

#define OPT_WORKLOAD 350
#define OPT_LIMIT 351

static const struct bd_option options[] = {
        { "system", 's', "SYSTEM", "only runs on SYSTEM" },
        { "workload", OPT_WORKLOAD, "WORKLOAD", "only runs of WORKLOAD" },
        { "limit", OPT_LIMIT, "N", "at most N runs (default 50)" },
        { "json", 'j', NULL, "print JSON" },
        { 0 }
};

struct list {
        bool json;
        cJSON *arr;
        int n;
};

static int print_one(const struct bd_run *r, void *data)
{
        struct list *l = data;
        l->n++;
        if (l->json) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "run", r->id);
                cJSON_AddStringToObject(o, "system", r->system);
                cJSON_AddStringToObject(o, "workload", r->workload);
                cJSON_AddStringToObject(o, "state", bd_state_name(r->state));
                cJSON_AddNumberToObject(o, "trials", r->ntrials);
                cJSON_AddNumberToObject(o, "submit_time", r->submit_time);
                cJSON_AddItemToObject(o, "job_id", r->job_id ? cJSON_CreateString(r->job_id) : cJSON_CreateNull());
                cJSON_AddStringToObject(o, "user", r->user ? r->user : "");
                cJSON_AddItemToArray(l->arr, o);
                return 0;
        }
        char when[32] = "-";
        time_t t = (time_t)r->submit_time;
        struct tm tm;
        if (t > 0 && localtime_r(&t, &tm))
                strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
        printf("%-22s %-10s %-10s %-14s %-6d %-16s %s\n", r->id, r->system, r->workload, bd_state_name(r->state),
               r->ntrials, when, r->job_id ? r->job_id : "-");
        return 0;
}

struct live {
        char **ids;
        size_t n;
};

static int collect_live(const struct bd_run *r, void *data)
{
        struct live *l = data;
        if (!bd_state_final(r->state)) {
                l->ids = xrealloc(l->ids, (l->n + 1) * sizeof(*l->ids));
                l->ids[l->n++] = xstrdup(r->id);
        }
        return 0;
}

/* Brings the runs that had not ended when last seen up to date (as status
 * does), so that the history does not show long-finished runs as running;
 * one warning when the scheduler cannot be asked. */
static void refresh_live(struct bd_store *store, const char *system, const char *workload, int limit)
{
        struct live l = { 0 };
        struct bd_err err;
        /* one warning of each kind (static texts), with the first run it concerns */
        const char *warning[2] = { NULL, NULL };
        char *warned[2] = { NULL, NULL };
        if (store_list(store, system, workload, limit, collect_live, &l, &err) < 0)
                bd_warning("%s", err.msg);
        bool slurm_down = false;
        for (size_t i = 0; i < l.n; i++) {
                struct bd_run r;
                struct bd_trial *t;
                const char *w = NULL;
                if (store_get(store, l.ids[i], &r, &t, &err) == 0) {
                        /* a controller that did not answer is not asked again for each run */
                        bool slurm = r.launcher && streq(r.launcher, "slurm");
                        if (!(slurm && slurm_down) && run_refresh(store, &r, t, &w, &err) < 0)
                                bd_warning("run %s: %s", l.ids[i], err.msg);
                        if (w && slurm)
                                slurm_down = true;
                        for (size_t k = 0; w && k < ARRAY_SIZE(warning); k++) {
                                if (warning[k] == w)
                                        break;
                                if (!warning[k]) {
                                        warning[k] = w;
                                        warned[k] = xstrdup(l.ids[i]);
                                        break;
                                }
                        }
                        bd_trials_free(t, r.ntrials);
                        bd_run_release(&r);
                }
                free(l.ids[i]);
        }
        free(l.ids);
        for (size_t k = 0; k < ARRAY_SIZE(warning); k++) {
                if (warning[k])
                        bd_warning("run %s: %s", warned[k], warning[k]);
                free(warned[k]);
        }
}

int cmd_runs(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        const char *system = NULL, *workload = NULL;
        long limit = 50;
        struct list l = { 0 };
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 's': system = arg; break;
                case 'j': l.json = true; break;
                case OPT_WORKLOAD: workload = arg; break;
                case OPT_LIMIT: opts_number(&o, "limit", arg, 1, LONG_MAX, &limit); break;
                }
        }
        int next = opts_finish(&o, 0, 0, NULL);
        if (next < 0)
                return opts_exit(next);
        struct bd_store store;
        if (open_store(&store))
                return BD_EXIT_FAIL;
        refresh_live(&store, system, workload, (int)limit);
        struct bd_err err;
        if (l.json)
                l.arr = cJSON_CreateArray();
        else
                printf("%-22s %-10s %-10s %-14s %-6s %-16s %s\n", "RUN", "SYSTEM", "WORKLOAD", "STATE", "TRIALS",
                       "SUBMITTED", "JOB");
        int r = store_list(&store, system, workload, (int)limit, print_one, &l, &err);
        store_close(&store);
        if (l.json) {
                _cleanup_free_ char *text = cJSON_Print(l.arr);
                puts(text);
                cJSON_Delete(l.arr);
        }
        if (r < 0) {
                bd_error("%s", err.msg);
                return BD_EXIT_FAIL;
        }
        return BD_EXIT_OK;
}

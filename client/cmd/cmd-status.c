/* cmd-status.c: benchctl status [--watch] [--json] [RUN]. */
#include "config.h"

#include "benchctl.h"
#include "json.h"
#include "launch.h"
#include "run.h"

#define OPT_WATCH 340

static const struct bd_option options[] = {
        { "json", 'j', NULL, "print JSON" },
        { "watch", OPT_WATCH, NULL, "refresh until the run ends" },
        { 0 }
};

int cmd_status(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        bool json = false, watch = false;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                if (c == 'j')
                        json = true;
                else if (c == OPT_WATCH)
                        watch = true;
        }
        int next = opts_finish(&o, 0, 1, NULL);
        if (next < 0)
                return opts_exit(next);
        const char *id = next < argc ? argv[next] : "last";
        struct bd_store store;
        if (open_store(&store))
                return BD_EXIT_FAIL;
        int ret = BD_EXIT_OK;
        if (watch) {
                ret = wait_for_run(&store, id, json ? FOLLOW_JSON : FOLLOW_TEXT);
                store_close(&store);
                return ret == BD_EXIT_RUN ? BD_EXIT_OK : ret;
        }
        struct bd_run r;
        struct bd_trial *t;
        if (load_run(&store, id, &r, &t)) {
                store_close(&store);
                return BD_EXIT_FAIL;
        }
        if (json) {
                cJSON *j = run_json(&r, t);
                _cleanup_free_ char *text = cJSON_Print(j);
                puts(text);
                cJSON_Delete(j);
        } else
                run_print_status(&r, t);
        bd_trials_free(t, r.ntrials);
        bd_run_release(&r);
        store_close(&store);
        return ret;
}

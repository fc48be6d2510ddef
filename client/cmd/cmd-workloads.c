/* cmd-workloads.c: benchctl workloads: the table of known workloads. */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "benchctl.h"
#include "json.h"
#include "workload.h"

static const struct bd_option options[] = {
        { "json", 'j', NULL, "print JSON" },
        WORKLOADS_DIR_OPTION,
        { 0 }
};

static const char *result_kind(const struct workload *w)
{
        return w->result == RESULT_BUS_BANDWIDTH ? "bus-bandwidth"
               : w->result == RESULT_THROUGHPUT  ? "throughput"
                                                 : "time-to-train";
}

/* Whether its program can run here: benchd's own, built; another, on PATH
 * (or a path that is there).  A container image or another host may have
 * what this one lacks. */
static const char *runs_here(const struct workload *w)
{
        if (w->own)
                return w->built ? "yes" : "not built";
        if (strchr(w->program, '/'))
                return access(w->program, X_OK) == 0 ? "yes" : "not here";
        const char *path = getenv("PATH");
        _cleanup_free_ char *copy = xstrdup(path ? path : "");
        char *save = NULL;
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                _cleanup_free_ char *p = xasprintf("%s/%s", d, w->program);
                if (access(p, X_OK) == 0)
                        return "yes";
        }
        return "not on PATH";
}

int cmd_workloads(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        bool json = false;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0)
                if (c == 'j')
                        json = true;
        int next = opts_finish(&o, 0, 0, NULL);
        if (next < 0)
                return opts_exit(next);
        int ret = ctx_workloads(ctx);
        const struct workload *const *all = workload_all();
        if (json) {
                _cleanup_json_ cJSON *arr = cJSON_CreateArray();
                for (const struct workload *const *w = all; *w; w++) {
                        cJSON *e = cJSON_CreateObject();
                        cJSON_AddStringToObject(e, "name", (*w)->name);
                        cJSON_AddStringToObject(e, "title", (*w)->title);
                        cJSON_AddStringToObject(e, "result", result_kind(*w));
                        cJSON_AddStringToObject(e, "program", (*w)->program);
                        cJSON_AddBoolToObject(e, "own", (*w)->own);
                        cJSON_AddStringToObject(e, "runs_here", runs_here(*w));
                        cJSON_AddStringToObject(e, "file", (*w)->file);
                        cJSON_AddItemToArray(arr, e);
                }
                _cleanup_free_ char *text = cJSON_Print(arr);
                puts(text);
                return ret;
        }
        int wn = (int)strlen("WORKLOAD"), wt = (int)strlen("TITLE"), wp = (int)strlen("PROGRAM");
        for (const struct workload *const *w = all; *w; w++) {
                if ((int)strlen((*w)->name) > wn)
                        wn = (int)strlen((*w)->name);
                if ((int)strlen((*w)->title) > wt)
                        wt = (int)strlen((*w)->title);
                if ((int)strlen((*w)->program) > wp)
                        wp = (int)strlen((*w)->program);
        }
        printf("%-*s %-*s %-13s %-*s %s\n", wn, "WORKLOAD", wt, "TITLE", "RESULT", wp, "PROGRAM", "RUNS HERE");
        for (const struct workload *const *w = all; *w; w++)
                printf("%-*s %-*s %-13s %-*s %s\n", wn, (*w)->name, wt, (*w)->title, result_kind(*w), wp,
                       (*w)->program, runs_here(*w));
        return ret;
}

/* cmd-systems.c: benchctl systems: the table of known systems. */
#include "config.h"

#include <string.h>

#include "benchctl.h"
#include "json.h"

static const struct bd_option options[] = {
        { "json", 'j', NULL, "print JSON" },
        SYSTEMS_DIR_OPTION,
        { 0 }
};

int cmd_systems(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
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

        char **names = system_list(ctx_dirs(ctx));
        int ret = BD_EXIT_OK;
        _cleanup_json_ cJSON *arr = cJSON_CreateArray();
        int w = (int)strlen("SYSTEM");  /* the longest name: the columns stay aligned */
        for (char **n = names; *n; n++)
                if ((int)strlen(*n) > w)
                        w = (int)strlen(*n);
        if (!json)
                printf("%-*s %-9s %-18s %-9s %-12s %s\n", w, "SYSTEM", "NODESxGPU", "GPU", "LAUNCHER", "CONTAINER",
                       "DESCRIPTION");
        for (char **n = names; *n; n++) {
                struct bd_system s;
                struct bd_err err;
                if (system_load(ctx_dirs(ctx), *n, NULL, &s, &err) < 0) {
                        bd_error("%s", err.msg);
                        ret = BD_EXIT_CONFIG;
                        continue;
                }
                const cJSON *j = s.json;
                long nodes = sys_int(j, "nodes"), gpus = sys_int(j, "gpus_per_node");
                const char *gpu = gpus > 0 ? json_str(j, "gpu_model", "?") : "none (CPU)";
                if (json) {
                        cJSON *e = cJSON_CreateObject();
                        cJSON_AddStringToObject(e, "name", s.name);
                        cJSON_AddNumberToObject(e, "nodes", (double)nodes);
                        cJSON_AddNumberToObject(e, "gpus_per_node", (double)gpus);
                        cJSON_AddNumberToObject(e, "ranks_per_node", (double)sys_int(j, "ranks_per_node"));
                        cJSON_AddStringToObject(e, "gpu_model", gpus > 0 ? json_str(j, "gpu_model", "") : "");
                        cJSON_AddStringToObject(e, "launcher", sys_str(j, "launcher"));
                        cJSON_AddStringToObject(e, "container", sys_str(j, "container.runtime"));
                        cJSON_AddStringToObject(e, "description", sys_str(j, "description"));
                        cJSON_AddStringToObject(e, "path", s.path);
                        cJSON_AddItemToArray(arr, e);
                } else {
                        char shape[32];
                        snprintf(shape, sizeof(shape), "%ldx%ld", nodes, gpus);
                        printf("%-*s %-9s %-18s %-9s %-12s %s\n", w, s.name, shape, gpu, sys_str(j, "launcher"),
                               sys_str(j, "container.runtime"), sys_str(j, "description"));
                }
                system_release(&s);
        }
        if (json) {
                _cleanup_free_ char *text = cJSON_Print(arr);
                puts(text);
        }
        if (!names[0])
                bd_error("no systems found (searched %zu directories; see 'benchctl systems --help')",
                         ctx_dirs(ctx)->n);
        strv_free(names);
        return ret;
}

/* cmd-show.c: benchctl show: a system's resolved configuration. */
#include "config.h"

#include <string.h>

#include "benchctl.h"
#include "json.h"
#include "run.h"

#define OPT_RUN 310

static const struct bd_option options[] = {
        { "json", 'j', NULL, "print JSON" },
        { "run", OPT_RUN, "RUN", "the configuration recorded with run RUN, as it ran (no SYSTEM)" },
        COMMON_SYSTEM_OPTIONS,
        { 0 }
};

/* key = value lines, dotted keys, JSON values */
static void print_flat(const cJSON *v, const char *prefix, struct bd_buf *out)
{
        if (cJSON_IsObject(v) && v->child) {
                const cJSON *e;
                cJSON_ArrayForEach(e, v) {
                        _cleanup_free_ char *k = prefix ? xasprintf("%s.%s", prefix, e->string) : xstrdup(e->string);
                        print_flat(e, k, out);
                }
                return;
        }
        _cleanup_free_ char *text = cJSON_PrintUnformatted(v);
        buf_printf(out, "%s = %s\n", prefix ? prefix : "", text);
}

int cmd_show(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        bool json = false;
        const char *run = NULL;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                if (c == 'j')
                        json = true;
                else if (c == OPT_RUN)
                        run = arg;
        }
        int next = opts_finish(&o, run ? 0 : 1, run ? 0 : 1, "SYSTEM");
        if (next < 0)
                return opts_exit(next);
        if (run && o.sets)
                return usage_error(cmd, "--run prints what was recorded: no --set with it");

        struct bd_system s = { 0 };
        struct bd_run r = { 0 };
        cJSON *conf = NULL;     /* a run's, parsed here */
        const cJSON *values;
        cJSON *out;
        if (run) {
                if (load_recorded_run(run, &r))
                        return BD_EXIT_FAIL;
                conf = r.config ? cJSON_Parse(r.config) : NULL;
                if (!cJSON_IsObject(conf)) {
                        bd_error("run %s: its recorded configuration is %s", r.id, r.config ? "not a JSON object" : "missing");
                        cJSON_Delete(conf);
                        bd_run_release(&r);
                        return BD_EXIT_FAIL;
                }
                values = conf;
                out = cJSON_CreateObject();
                cJSON_AddStringToObject(out, "name", r.system);
                cJSON_AddStringToObject(out, "run", r.id);
        } else {
                int ret = ctx_load_system(ctx, argv[next], o.sets, &s);
                if (ret)
                        return ret;
                values = s.json;
                out = cJSON_CreateObject();
                cJSON_AddStringToObject(out, "name", s.name);
                cJSON_AddStringToObject(out, "file", s.path);
        }
        for (const cJSON *e = values->child; e; e = e->next)
                cJSON_AddItemToObject(out, e->string, cJSON_Duplicate(e, true));
        cJSON_Delete(conf);
        bd_run_release(&r);
        if (json) {
                _cleanup_free_ char *text = cJSON_Print(out);
                puts(text);
        } else {
                _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
                print_flat(out, NULL, &b);
                fputs(b.s, stdout);
        }
        cJSON_Delete(out);
        system_release(&s);
        return BD_EXIT_OK;
}

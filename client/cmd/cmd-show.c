/* cmd-show.c: benchctl show: a system's resolved configuration, or a
 * workload's. */
#include "config.h"

#include <string.h>

#include "benchctl.h"
#include "json.h"
#include "run.h"
#include "workload.h"

#define OPT_RUN 310
#define OPT_WORKLOAD 311

static const struct bd_option options[] = {
        { "json", 'j', NULL, "print JSON" },
        { "run", OPT_RUN, "RUN", "the configuration recorded with run RUN, as it ran (no SYSTEM)" },
        { "workload", OPT_WORKLOAD, "NAME", "the workload NAME's file, resolved (no SYSTEM)" },
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

static void print_json_or_flat(const cJSON *out, bool json)
{
        if (json) {
                _cleanup_free_ char *text = cJSON_Print(out);
                puts(text);
        } else {
                _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
                print_flat(out, NULL, &b);
                fputs(b.s, stdout);
        }
}

/* --workload NAME: its file, resolved, with where it comes from */
static int show_workload(struct bd_ctx *ctx, const char *name, bool json)
{
        const struct workload *w;
        int ret = ctx_workload(name, &w);
        if (ret)
                return ret;
        _cleanup_json_ cJSON *out = cJSON_CreateObject();
        cJSON_AddStringToObject(out, "name", w->name);
        cJSON_AddStringToObject(out, "file", w->file);
        for (const cJSON *e = w->spec->child; e; e = e->next)
                cJSON_AddItemToObject(out, e->string, cJSON_Duplicate(e, true));
        print_json_or_flat(out, json);
        return BD_EXIT_OK;
}

int cmd_show(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        bool json = false;
        const char *run = NULL, *workload = NULL;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                if (c == 'j')
                        json = true;
                else if (c == OPT_RUN)
                        run = arg;
                else if (c == OPT_WORKLOAD)
                        workload = arg;
        }
        bool named = run || workload;
        int next = opts_finish(&o, named ? 0 : 1, named ? 0 : 1, "SYSTEM");
        if (next < 0)
                return opts_exit(next);
        if (run && workload)
                return usage_error(cmd, "--run and --workload exclude each other");
        if (run && o.sets)
                return usage_error(cmd, "--run prints what was recorded: no --set with it");
        if (workload && o.sets)
                return usage_error(cmd, "--workload prints a workload's file: no --set with it");
        if (workload)
                return show_workload(ctx, workload, json);

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
        print_json_or_flat(out, json);
        cJSON_Delete(out);
        system_release(&s);
        return BD_EXIT_OK;
}

/* cmd-show.c: benchctl show: a system's resolved configuration. */
#include "config.h"

#include <string.h>

#include "benchctl.h"
#include "json.h"

static const struct bd_option options[] = {
        { "json", 'j', NULL, "print JSON" },
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
        struct bd_opts o = { argc, argv, options, cmd, NULL };
        bool json = false;
        _cleanup_free_ char **sets = NULL;
        size_t nsets = 0;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                if (c == 'h')
                        return opts_release(&o), BD_EXIT_OK;
                if (c == 'j')
                        json = true;
                else if (c == OPT_SYSTEMS_DIR)
                        ctx->systems_dir = arg;
                else if (c == OPT_SET)
                        sets_add(&sets, &nsets, arg);
        }
        int next = opts_finish(&o, c, 1, 1, "SYSTEM");
        if (next < 0)
                return BD_EXIT_USAGE;

        struct bd_system s;
        int ret = ctx_load_system(ctx, argv[next], sets, &s);
        if (ret)
                return ret;
        cJSON *out = cJSON_CreateObject();
        cJSON_AddStringToObject(out, "name", s.name);
        cJSON_AddStringToObject(out, "file", s.path);
        for (cJSON *e = s.json->child; e; e = e->next)
                cJSON_AddItemToObject(out, e->string, cJSON_Duplicate(e, true));
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

/* context.c: what the commands share (benchctl.h): the search paths of
 * systems and workloads, loading a system with a command's overrides, the
 * workload operand. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchctl.h"
#include "macro.h"
#include "workload.h"

const struct bd_sysdirs *ctx_dirs(struct bd_ctx *ctx)
{
        if (!ctx->dirs.dirs)
                sysdirs_init(&ctx->dirs, ctx->systems_dir);
        return &ctx->dirs;
}

void ctx_workload_path(struct bd_ctx *ctx)
{
        char *dirs[64];
        size_t n = 0;
        if (ctx->workloads_dir)
                dirs[n++] = xstrdup(ctx->workloads_dir);
        const char *env = getenv("BENCHD_WORKLOADS");
        if (env && *env) {
                _cleanup_free_ char *copy = xstrdup(env);
                char *save = NULL;
                for (char *p = strtok_r(copy, ":", &save); p && n < ARRAY_SIZE(dirs) - 2; p = strtok_r(NULL, ":", &save))
                        dirs[n++] = xstrdup(p);
        }
        const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
        if (xdg && *xdg)
                dirs[n++] = xasprintf("%s/benchd/workloads", xdg);
        else if (home && *home)
                dirs[n++] = xasprintf("%s/.config/benchd/workloads", home);
        dirs[n] = NULL;
        workload_path_set(dirs);
        for (size_t i = 0; i < n; i++)
                free(dirs[i]);
}

int ctx_workloads(struct bd_ctx *ctx)
{
        (void) ctx;
        const char *e = workload_path_error();
        if (e) {
                bd_error("%s", e);
                return BD_EXIT_CONFIG;
        }
        return BD_EXIT_OK;
}

int ctx_load_system(struct bd_ctx *ctx, const char *name, char *const *sets, struct bd_system *ret)
{
        struct bd_err err;
        int r = ctx_workloads(ctx);
        if (r)
                return r;
        if (system_load(ctx_dirs(ctx), name, sets, ret, &err) < 0) {
                bd_error("%s", err.msg);
                return BD_EXIT_CONFIG;
        }
        return BD_EXIT_OK;
}

const char *workload_operand(void)
{
        static char what[256];
        if (!what[0]) {
                _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
                buf_puts(&b, "WORKLOAD (");
                workload_names(&b, " or ");
                buf_putc(&b, ')');
                snprintf(what, sizeof(what), "%s", b.s);
        }
        return what;
}

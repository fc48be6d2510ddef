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
        struct bd_sysdirs d;
        sysdirs_user(&d, ctx->workloads_dir, "BENCHD_WORKLOADS", "workloads");
        workload_path_set(d.dirs);
        sysdirs_release(&d);
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

int ctx_workload(const char *name, const struct workload **ret)
{
        struct bd_err err;
        if (!(*ret = workload_lookup(name, &err))) {
                bd_error("%s", err.msg);
                return BD_EXIT_CONFIG;
        }
        return BD_EXIT_OK;
}

int ctx_load_system(struct bd_ctx *ctx, const char *name, char *const *sets, struct bd_system *ret)
{
        struct bd_err err;
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

/* cmd-stage-none.c: benchctl stage and manifest in a build without libxxhash. */
#include "config.h"

#include "benchctl.h"

static int unavailable(const struct bd_command *cmd)
{
        bd_error("%s: this benchctl was built without libxxhash (install libxxhash-dev and rebuild)", cmd->name);
        return BD_EXIT_FAIL;
}

int cmd_stage(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        return unavailable(cmd);
}

int cmd_manifest(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        return unavailable(cmd);
}

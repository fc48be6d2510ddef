/* cmd-dataset.c: benchctl dataset: placeholder until synth/index/check land. */
#include "config.h"

#include "benchctl.h"

int cmd_dataset(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        bd_error("dataset: not yet");
        return BD_EXIT_FAIL;
}

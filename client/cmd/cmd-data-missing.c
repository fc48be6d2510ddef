/* cmd-data-missing.c: dataset and coco-eval in a build without the COCO data
 * pipeline (libjpeg-turbo, its libjpeg API or xxHash missing at configure time). */
#include "config.h"

#include "benchctl.h"

static int missing(const struct bd_command *cmd)
{
        bd_error("%s: built without the COCO data pipeline (install libturbojpeg0-dev, libjpeg62-turbo-dev "
                 "and libxxhash-dev, then configure again)", cmd->name);
        return BD_EXIT_FAIL;
}

int cmd_dataset(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        return missing(cmd);
}

int cmd_coco_eval(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        return missing(cmd);
}

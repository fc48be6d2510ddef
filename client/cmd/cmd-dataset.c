/* cmd-dataset.c: benchctl dataset, which runs in a program of its own:
 * it executes benchd-dataset (benchd-dataset.c), found next to benchctl
 * (a build tree) or in the package's libexec directory. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "benchctl.h"
#include "fs.h"
#include "bd-paths.h"

static char *helper_path(const char *prog)
{
        _cleanup_free_ char *dir = fs_exe_dir();
        if (dir) {
                char *p = xasprintf("%s/%s", dir, prog);
                if (access(p, X_OK) == 0)
                        return p;
                free(p);
        }
        return xasprintf("%s/%s", BD_PKGLIBEXECDIR, prog);
}

int cmd_dataset(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_free_ char *prog = xasprintf("benchd-%s", cmd->name);
        _cleanup_free_ char *path = helper_path(prog);
        char **args = xcalloc((size_t)argc + 1, sizeof(char *));
        args[0] = prog;
        for (int i = 1; i < argc; i++)
                args[i] = argv[i];
        fflush(NULL);
        execv(path, args);
        bd_error("%s: cannot run %s: %s (an incomplete installation?)", cmd->name, path, strerror(errno));
        free(args);
        return BD_EXIT_FAIL;
}

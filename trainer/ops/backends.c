/* backends.c: making a backend by its name, and freeing one (the one file
 * that names every backend). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "backend.h"

int bd_backend_new(const char *name, int device, int nthreads, struct bd_backend **ret, struct bd_err *err)
{
        if (streq(name, "cpu"))
                return bd_backend_cpu_new(nthreads, ret, err);
        if (streq(name, "cuda"))
                return bd_backend_cuda_new(device, ret, err);
        return bd_err_set(err, -EINVAL, "unknown backend '%s' (expected cpu or cuda)", name ? name : "");
}

void bd_backend_free(struct bd_backend *be)
{
        if (be)
                be->ops->destroy(be);
}

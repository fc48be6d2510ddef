/* backends.c: making a backend by its name, and freeing one (the one file
 * that names every backend). */
#include "config.h"

#include <errno.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend.h"

int bd_backend_new(const char *name, int device, int nthreads, struct bd_backend **ret, struct bd_err *err)
{
        if (streq(name, "cpu"))
                return bd_backend_cpu_new(nthreads, ret, err);
        if (streq(name, "cuda")) {
                int r = bd_backend_cuda_new(device, ret, err);
#ifdef _OPENMP
                /* the host's share of the work (detection targets, proposals,
                 * evaluation) on the rank's threads, not every CPU of the node
                 * per rank */
                if (r >= 0 && nthreads > 0)
                        omp_set_num_threads(nthreads);
#endif
                return r;
        }
        if (streq(name, "plan"))
                return bd_backend_plan_new(ret, err);
        return bd_err_set(err, -EINVAL, "unknown backend '%s' (expected cpu, cuda or plan)", name ? name : "");
}

void bd_backend_free(struct bd_backend *be)
{
        if (be)
                be->ops->destroy(be);
}

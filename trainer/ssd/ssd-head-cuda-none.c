/* ssd-head-cuda-none.c: builds without CUDA have no CUDA launcher. */
#include "config.h"

#include <errno.h>

#include "ssd-head-launch.h"

int ssd_head_cuda(struct bd_backend *be, const struct ssd_head_args *a)
{
        (void) a;
        return bd_err_set(&be->err, -EOPNOTSUPP, "ssd head: built without CUDA");
}

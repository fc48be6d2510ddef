/* ops-cuda-none.c: the CUDA backend in builds without CUDA. */
#include "config.h"

#include <errno.h>

#include "backend.h"

int bd_backend_cuda_new(int device, struct bd_backend **ret, struct bd_err *err)
{
        return bd_err_set(err, -EOPNOTSUPP, "backend cuda: built without CUDA (configure found no nvcc, cuDNN or cuBLAS)");
}

int bd_cuda_device_count(const char **why)
{
        if (why)
                *why = "built without CUDA";
        return 0;
}

void *bd_backend_cuda_stream(struct bd_backend *be)
{
        return NULL;
}

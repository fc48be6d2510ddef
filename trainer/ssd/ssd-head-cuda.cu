/* ssd-head-cuda.cu: the head gather of ssd-elem.h as a CUDA kernel, one
 * thread per element of the head, on the backend's stream. */
#include "config.h"

#include <errno.h>

#include <cuda_runtime.h>

/* the project's headers are C */
extern "C" {
#include "ssd-head-launch.h"
}

__global__ void ssd_head_kernel(struct ssd_head_args a, int64_t n)
{
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
                int64_t nn, c, h, w;
                bd_coord4(&a.s, i, &nn, &c, &h, &w);
                ssd_k_head(i, nn, c, h, w, &a);
        }
}

extern "C" int ssd_head_cuda(struct bd_backend *be, const struct ssd_head_args *a)
{
        int64_t n = a->s.N * a->s.C * a->s.H * a->s.W;
        if (n == 0)
                return 0;
        int threads = 256;
        int64_t blocks = (n + threads - 1) / threads;
        if (blocks > 65535 * 4)
                blocks = 65535 * 4;
        cudaStream_t stream = (cudaStream_t)bd_backend_cuda_stream(be);
        ssd_head_kernel<<<(unsigned)blocks, threads, 0, stream>>>(*a, n);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
                return bd_err_set(&be->err, -EIO, "ssd head: %s", cudaGetErrorString(e));
        return 0;
}

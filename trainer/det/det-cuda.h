/* det-cuda.h: launch helpers shared by the detection kernels (boxes-cuda.cu,
 * proposals.cu).  Internal to those files. */
#ifndef BD_DET_CUDA_H
#define BD_DET_CUDA_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "boxes-impl.h"

#define DET_THREADS 256

/* a failed CUDA call: the message in err, r set, on to the function's out: */
#define CU(call)                                                                                         \
        do {                                                                                             \
                cudaError_t _e = (call);                                                                 \
                if (_e != cudaSuccess) {                                                                 \
                        r = bd_err_set(err, -EIO, "cuda: %s:%d: %s: %s", __FILE__, __LINE__, #call,      \
                                       cudaGetErrorString(_e));                                          \
                        goto out;                                                                        \
                }                                                                                        \
        } while (0)

/* grid-stride loop over [0, n) */
#define GRID_LOOP(i, n) for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
                             i += (int64_t)gridDim.x * blockDim.x)

/* blocks for n threads (at least 1; a grid-stride loop covers the rest) */
static inline unsigned det_blocks(int64_t n)
{
        int64_t b = (n + DET_THREADS - 1) / DET_THREADS;
        return (unsigned)(b < 1 ? 1 : b > 65535 ? 65535 : b);
}

/* the maximum (det_smax, boxes-impl.h) of every thread's v in a block of
 * DET_THREADS threads, for every thread (a max: any order gives the same) */
__device__ static inline float det_block_max(float v)
{
        __shared__ float red[DET_THREADS];
        red[threadIdx.x] = v;
        __syncthreads();
        for (int s = DET_THREADS / 2; s > 0; s /= 2) {
                if ((int)threadIdx.x < s)
                        red[threadIdx.x] = det_smax(red[threadIdx.x], red[threadIdx.x + s]);
                __syncthreads();
        }
        v = red[0];
        __syncthreads();
        return v;
}

/* stream-ordered free that accepts NULL */
static inline void det_dfree(void *p, cudaStream_t st)
{
        if (p)
                cudaFreeAsync(p, st);
}

#endif

/* masks.cu: the CUDA side of masks.h: polygon mask targets by the column
 * rule of masks-impl.h (pycocotools' rasterisation, one column at a time),
 * one thread per proposal and column.  The host crops, scales and packs the
 * vertices (det_poly_pack); the walk's double arithmetic is rounded
 * operation by operation, as on the host, so the bits are the host's.
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>

extern "C" {
#include "config.h"
#include "masks.h"
}

#define DET_HD static __device__ inline
#include "masks-impl.h"

#define THREADS 128

/* thread (p, x): column x of proposal p's target, the union of its parts */
__global__ void k_poly_targets(const int *vx, const int *vy, const int *part_k, const int64_t *part_v,
                               const int64_t *prop_part, int64_t P, int M, float *out)
{
        int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (t >= P * M)
                return;
        int64_t p = t / M;
        int x = (int)(t % M);
        if (prop_part[p] == prop_part[p + 1])
                return;         /* no parts: the host's target stays */
        uint32_t col[DET_COL_WORDS(DET_MASK_COLUMN_MAX)], acc[DET_COL_WORDS(DET_MASK_COLUMN_MAX)];
        for (int w = 0; w < DET_COL_WORDS(M); w++)
                acc[w] = 0;
        for (int64_t q = prop_part[p]; q < prop_part[p + 1]; q++) {
                det_poly_column(vx + part_v[q], vy + part_v[q], part_k[q], M, M, x, col);
                for (int w = 0; w < DET_COL_WORDS(M); w++)
                        acc[w] |= col[w];
        }
        float *o = out + p * M * M;
        for (int y = 0; y < M; y++)
                o[(int64_t)y * M + x] = (float)((acc[y / 32] >> (y % 32)) & 1);
}

extern "C" int det_cuda_poly_targets(void *stream, const int *vx, const int *vy, const int *part_k,
                                     const int64_t *part_v, const int64_t *prop_part, int64_t P, int M, float *out)
{
        if (M < 1 || M > DET_MASK_COLUMN_MAX)
                return -EINVAL;
        int64_t n = P * M;
        if (n == 0)
                return 0;
        unsigned blocks = (unsigned)((n + THREADS - 1) / THREADS);
        k_poly_targets<<<blocks, THREADS, 0, (cudaStream_t)stream>>>(vx, vy, part_k, part_v, prop_part, P, M, out);
        return cudaGetLastError() == cudaSuccess ? 0 : -EIO;
}

/* roi-align.cu: the CUDA kernels of RoIAlign, multi-scale RoIAlign and mask
 * targets (roi-align.h).  One thread per output element, as torchvision's
 * CUDA kernel, with the arithmetic of roi-align-impl.h that the CPU loops
 * use (no fused multiply-adds: the products go through __fmul_rn), so the
 * forward equals the CPU's; the backward adds with atomicAdd, whose order
 * varies: equal to rounding.  The level of a RoI is computed in the kernel
 * (the mapper) or read from a level array. */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include "config.h"
#include "roi-align.h"
}

#include "roi-align-types.h"

/* the suffixed functions of roi-align-impl.h by element type */
template <typename T> struct ra;
#define RA_TRAITS(T, SFX)                                                                                       \
        template <> struct ra<T> {                                                                              \
                typedef struct ra_geom_##SFX geom;                                                              \
                typedef struct ra_axis_##SFX axis;                                                              \
                typedef struct ra_taps_##SFX taps;                                                              \
                static __device__ void geometry(const T *roi, T s, int al, int64_t ph, int64_t pw, int sr,      \
                                                int64_t N, geom *g)                                             \
                {                                                                                               \
                        ra_geom_##SFX(roi, s, al, ph, pw, sr, N, g);                                            \
                }                                                                                               \
                static __device__ axis ax(T start, T bin, int64_t j, int i, int grid, int64_t size)             \
                {                                                                                               \
                        return ra_axis_##SFX(ra_coord_##SFX(start, bin, j, i, grid), size);                     \
                }                                                                                               \
                static __device__ taps tap(axis ya, axis xa, int64_t W, int64_t sP)                             \
                {                                                                                               \
                        return ra_taps_##SFX(ya, xa, W, sP);                                                    \
                }                                                                                               \
                static __device__ int level(const T *b, int p1, int kmin, int kmax, int s0, int k0)             \
                {                                                                                               \
                        return ra_level_##SFX(b, p1, kmin, kmax, s0, k0);                                       \
                }                                                                                               \
        };
RA_TRAITS(float, f32)
RA_TRAITS(double, f64)

static unsigned blocks_for(int64_t n)
{
        int64_t b = (n + 255) / 256;
        return (unsigned)(b > (1 << 20) ? (1 << 20) : b);
}

/* the RoI's level, or -1 */
template <typename T>
static __device__ int roi_level(const det_roi_job &j, const T *roi, const int32_t *levels, int64_t r)
{
        int l = j.mapper ? ra<T>::level(roi + 1, j.plus_one, j.kmin, j.kmax, j.canonical_scale, j.canonical_level)
                         : levels ? levels[r] : 0;
        return l >= 0 && l < j.nlevels ? l : -1;
}

/* bwd == 0: y[i] = the bin's mean; bwd == 1: dy[i] spread into the map */
template <typename T, int bwd>
__global__ void k_roi(det_roi_job j, const T *rois, const int32_t *levels, T *y, const T *dy)
{
        int64_t total = j.R * j.C * j.ph * j.pw;
        for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
             i += (int64_t)blockDim.x * gridDim.x) {
                int64_t pw = i % j.pw, ph = i / j.pw % j.ph, c = i / (j.pw * j.ph) % j.C, r = i / (j.pw * j.ph * j.C);
                const T *roi = rois + 5 * r;
                int l = roi_level<T>(j, roi, levels, r);
                typename ra<T>::geom g;
                g.n = -1;
                if (l >= 0)
                        ra<T>::geometry(roi, (T)j.map[l].scale, j.aligned, j.ph, j.pw, j.sampling, j.N, &g);
                if (g.n < 0) {
                        if (!bwd)
                                y[i] = 0;
                        continue;
                }
                const det_roi_map &m = j.map[l];
                int64_t sP = ra_pstride(m.layout, j.C);
                T *x = (T *)m.data + g.n * j.C * m.H * m.W + ra_coff(m.layout, j.C, m.H * m.W, c);
                T acc = 0, d = bwd ? dy[i] : (T)0, count = (T)(g.gh * g.gw);
                for (int iy = 0; iy < g.gh; iy++) {
                        typename ra<T>::axis ya = ra<T>::ax(g.start_h, g.bin_h, ph, iy, g.gh, m.H);
                        if (ya.lo < 0)
                                continue;
                        for (int ix = 0; ix < g.gw; ix++) {
                                typename ra<T>::axis xa = ra<T>::ax(g.start_w, g.bin_w, pw, ix, g.gw, m.W);
                                if (xa.lo < 0)
                                        continue;
                                typename ra<T>::taps t = ra<T>::tap(ya, xa, m.W, sP);
                                if (bwd) {
                                        /* torchvision: dy w / count, in the order of the taps */
                                        atomicAdd(x + t.p1, RA_MUL(d, t.w1) / count);
                                        atomicAdd(x + t.p2, RA_MUL(d, t.w2) / count);
                                        atomicAdd(x + t.p3, RA_MUL(d, t.w3) / count);
                                        atomicAdd(x + t.p4, RA_MUL(d, t.w4) / count);
                                } else {
                                        acc = acc + (RA_MUL(t.w1, x[t.p1]) + RA_MUL(t.w2, x[t.p2]) +
                                                     RA_MUL(t.w3, x[t.p3]) + RA_MUL(t.w4, x[t.p4]));
                                }
                        }
                }
                if (!bwd)
                        y[i] = acc / g.count;
        }
}

__global__ void k_mask(int64_t P, int64_t M, const uint8_t *masks, int64_t ngt, int64_t H, int64_t W,
                       const float *boxes, const int32_t *matched, float *out)
{
        int64_t total = P * M * M;
        for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
             i += (int64_t)blockDim.x * gridDim.x) {
                int64_t pw = i % M, ph = i / M % M, p = i / (M * M);
                const float *b = boxes + 4 * p;
                int32_t idx = matched[p];
                float roi[5] = { idx >= 0 && idx < ngt ? (float)idx : -1.0f, b[0], b[1], b[2], b[3] };
                struct ra_geom_f32 g;
                ra_geom_f32(roi, 1.0f, 0, M, M, -1, ngt, &g);
                if (g.n < 0) {
                        out[i] = 0;
                        continue;
                }
                const uint8_t *mk = masks + g.n * H * W;
                float acc = 0;
                for (int iy = 0; iy < g.gh; iy++) {
                        ra<float>::axis ya = ra<float>::ax(g.start_h, g.bin_h, ph, iy, g.gh, H);
                        if (ya.lo < 0)
                                continue;
                        for (int ix = 0; ix < g.gw; ix++) {
                                ra<float>::axis xa = ra<float>::ax(g.start_w, g.bin_w, pw, ix, g.gw, W);
                                if (xa.lo < 0)
                                        continue;
                                ra<float>::taps t = ra<float>::tap(ya, xa, W, 1);
                                acc = acc + (RA_MUL(t.w1, (float)mk[t.p1]) + RA_MUL(t.w2, (float)mk[t.p2]) +
                                             RA_MUL(t.w3, (float)mk[t.p3]) + RA_MUL(t.w4, (float)mk[t.p4]));
                        }
                }
                out[i] = acc / g.count;
        }
}

static int launched(struct bd_backend *be, const char *op)
{
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
                return bd_err_set(&be->err, -EIO, "%s: %s", op, cudaGetErrorString(e));
        return 0;
}

extern "C" int det_roi_cuda_fwd(struct bd_backend *be, const struct det_roi_job *j, const void *rois,
                                const int32_t *levels, void *y)
{
        cudaStream_t st = (cudaStream_t)bd_backend_cuda_stream(be);
        int64_t n = j->R * j->C * j->ph * j->pw;
        if (n == 0)
                return 0;
        if (j->dtype == BD_F64)
                k_roi<double, 0><<<blocks_for(n), 256, 0, st>>>(*j, (const double *)rois, levels, (double *)y, NULL);
        else
                k_roi<float, 0><<<blocks_for(n), 256, 0, st>>>(*j, (const float *)rois, levels, (float *)y, NULL);
        return launched(be, "roi_align");
}

extern "C" int det_roi_cuda_bwd(struct bd_backend *be, const struct det_roi_job *j, const void *rois,
                                const int32_t *levels, const void *dy)
{
        cudaStream_t st = (cudaStream_t)bd_backend_cuda_stream(be);
        size_t es = j->dtype == BD_F64 ? sizeof(double) : sizeof(float);
        for (int l = 0; l < j->nlevels && !j->acc; l++) {
                size_t bytes = (size_t)(j->N * j->C * j->map[l].H * j->map[l].W) * es;
                cudaError_t e = cudaMemsetAsync(j->map[l].data, 0, bytes, st);
                if (e != cudaSuccess)
                        return bd_err_set(&be->err, -EIO, "roi_align_bwd: %s", cudaGetErrorString(e));
        }
        int64_t n = j->R * j->C * j->ph * j->pw;
        if (n == 0)
                return 0;
        if (j->dtype == BD_F64)
                k_roi<double, 1><<<blocks_for(n), 256, 0, st>>>(*j, (const double *)rois, levels, NULL,
                                                                 (const double *)dy);
        else
                k_roi<float, 1><<<blocks_for(n), 256, 0, st>>>(*j, (const float *)rois, levels, NULL,
                                                                (const float *)dy);
        return launched(be, "roi_align_bwd");
}

extern "C" int det_mask_targets_cuda(struct bd_backend *be, int64_t M, const uint8_t *masks, int64_t ngt, int64_t H,
                                     int64_t W, int64_t P, const float *boxes, const int32_t *matched, float *out)
{
        cudaStream_t st = (cudaStream_t)bd_backend_cuda_stream(be);
        int64_t n = P * M * M;
        if (n == 0)
                return 0;
        k_mask<<<blocks_for(n), 256, 0, st>>>(P, M, masks, ngt, H, W, boxes, matched, out);
        return launched(be, "mask_targets");
}

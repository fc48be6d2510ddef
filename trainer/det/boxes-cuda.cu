/* boxes-cuda.cu: CUDA twins of the box operators and the matcher
 * (boxes-dev.h).  The per-box arithmetic is boxes-impl.h's, shared with the
 * host; sorting is a stable radix sort on det_desc_key, the host's order.
 *
 * NMS is torchvision's CUDA nms: boxes sorted by score, one 64-bit word per
 * (box, block of 64 later boxes) saying which it suppresses, computed by a
 * grid of block pairs; the greedy scan over the words runs on the host.
 * Batched NMS keeps classes apart in the mask (boxes of other classes never
 * suppress), which is per-class NMS exactly; torchvision's coordinate trick
 * (up to 1000 boxes) shifts the boxes on the host, as det_batched_nms does.
 */
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "config.h"
#include "boxes-dev.h"
}
#include "boxes-impl.h"
#include "det-cuda.h"

/* ---- anchors, coder, IoU ---- */

struct cell_arg {
        float v[64 * 4];
};

__global__ void k_grid_anchors(struct cell_arg cell, int ncell, int H, int W, int sy, int sx, float *out)
{
        int64_t n = (int64_t)H * W * ncell;
        GRID_LOOP(i, n) {
                int a = (int)(i % ncell);
                int64_t loc = i / ncell;
                int x = (int)(loc % W), y = (int)(loc / W);
                float fx = (float)((int64_t)x * sx), fy = (float)((int64_t)y * sy);
                const float *ca = cell.v + 4 * a;
                out[4 * i] = fx + ca[0];
                out[4 * i + 1] = fy + ca[1];
                out[4 * i + 2] = fx + ca[2];
                out[4 * i + 3] = fy + ca[3];
        }
}

extern "C" int det_cuda_grid_anchors(void *stream, const float *cell, int ncell, int H, int W, int stride_y,
                                     int stride_x, float *out, struct bd_err *err)
{
        cudaStream_t st = (cudaStream_t)stream;
        int r = 0;
        struct cell_arg ca;
        if (ncell < 0 || ncell > 64 || H < 0 || W < 0)
                return bd_err_set(err, -EINVAL, "det grid anchors: %d cell anchors (at most 64), map %dx%d", ncell,
                                  H, W);
        if ((int64_t)H * W * ncell == 0)
                return 0;
        memcpy(ca.v, cell, (size_t)ncell * 4 * sizeof(float));
        k_grid_anchors<<<det_blocks((int64_t)H * W * ncell), DET_THREADS, 0, st>>>(ca, ncell, H, W, stride_y,
                                                                                   stride_x, out);
        CU(cudaGetLastError());
out:
        return r;
}

__global__ void k_encode(float one, struct det_coder k, const float *gt, const float *props, int64_t n, float *codes)
{
        GRID_LOOP(i, n)
                det_encode1(gt + 4 * i, props + 4 * i, k.wx, k.wy, k.ww, k.wh, one, codes + 4 * i);
}

extern "C" int det_cuda_encode(void *stream, int plus_one, const struct det_coder *k, const float *gt,
                               const float *props, int64_t n, float *codes, struct bd_err *err)
{
        cudaStream_t st = (cudaStream_t)stream;
        int r = 0;
        if (n <= 0)
                return 0;
        k_encode<<<det_blocks(n), DET_THREADS, 0, st>>>(plus_one ? 1.0f : 0.0f, *k, gt, props, n, codes);
        CU(cudaGetLastError());
out:
        return r;
}

__global__ void k_decode(float one, struct det_coder k, const float *codes, const float *boxes, int64_t n, int ncls,
                         float *out)
{
        GRID_LOOP(i, n * ncls)
                det_decode1(codes + 4 * i, boxes + 4 * (i / ncls), k.wx, k.wy, k.ww, k.wh, k.clip, one, out + 4 * i);
}

extern "C" int det_cuda_decode(void *stream, int plus_one, const struct det_coder *k, const float *codes,
                               const float *boxes, int64_t n, int ncls, float *out, struct bd_err *err)
{
        cudaStream_t st = (cudaStream_t)stream;
        int r = 0;
        if (n <= 0 || ncls <= 0)
                return 0;
        k_decode<<<det_blocks(n * ncls), DET_THREADS, 0, st>>>(plus_one ? 1.0f : 0.0f, *k, codes, boxes, n, ncls,
                                                               out);
        CU(cudaGetLastError());
out:
        return r;
}

__global__ void k_box_iou(float one, const float *a, int64_t n, const float *b, int64_t m, float *iou)
{
        GRID_LOOP(t, n * m) {
                int64_t i = t / m, j = t % m;
                iou[t] = det_iou1(a + 4 * i, det_area(a + 4 * i, one), b + 4 * j, det_area(b + 4 * j, one), one);
        }
}

extern "C" int det_cuda_box_iou(void *stream, int plus_one, const float *a, int64_t n, const float *b, int64_t m,
                                float *iou, struct bd_err *err)
{
        cudaStream_t st = (cudaStream_t)stream;
        int r = 0;
        if (n <= 0 || m <= 0)
                return 0;
        k_box_iou<<<det_blocks(n * m), DET_THREADS, 0, st>>>(plus_one ? 1.0f : 0.0f, a, n, b, m, iou);
        CU(cudaGetLastError());
out:
        return r;
}

/* ---- NMS ---- */

__global__ void k_sort_keys(const float *scores, int64_t n, uint32_t *key, int32_t *val)
{
        GRID_LOOP(i, n) {
                key[i] = det_desc_key(scores[i]);
                val[i] = (int32_t)i;
        }
}

__global__ void k_class_keys(const int32_t *idx, const int32_t *order, int64_t n, uint32_t *key)
{
        GRID_LOOP(i, n)
                key[i] = (uint32_t)idx[order[i]] ^ 0x80000000u;   /* ascending signed order */
}

__global__ void k_gather(const float *boxes, const int32_t *idx, const int32_t *order, int64_t n, float one,
                         float *sb, float *area, int32_t *scls)
{
        GRID_LOOP(i, n) {
                const float *b = boxes + 4 * (int64_t)order[i];
                for (int q = 0; q < 4; q++)
                        sb[4 * i + q] = b[q];
                area[i] = det_area(b, one);
                scls[i] = idx ? idx[order[i]] : 0;
        }
}

/* mask[i * cb + c]: bit t set when sorted box i suppresses box 64 c + t
 * (> i, same class); block (c, rb) holds rows 64 rb.., columns 64 c.. */
__global__ void k_nms_mask(const float *sb, const float *area, const int32_t *scls, int64_t n, float one, int ge,
                           float fthr, double thr, unsigned long long *mask)
{
        int64_t rb = blockIdx.y, c = blockIdx.x, cb = (n + 63) / 64;
        if (c < rb)
                return;
        __shared__ float cbox[64 * 4], carea[64];
        __shared__ int32_t ccls[64];
        int64_t c0 = 64 * c, r0 = 64 * rb;
        int ncol = (int)(n - c0 < 64 ? n - c0 : 64), nrow = (int)(n - r0 < 64 ? n - r0 : 64);
        int t = threadIdx.x;
        if (t < ncol) {
                for (int q = 0; q < 4; q++)
                        cbox[4 * t + q] = sb[4 * (c0 + t) + q];
                carea[t] = area[c0 + t];
                ccls[t] = scls[c0 + t];
        }
        __syncthreads();
        if (t >= nrow)
                return;
        int64_t i = r0 + t;
        const float *bi = sb + 4 * i;
        float ai = area[i];
        int32_t ki = scls[i];
        unsigned long long bits = 0;
        for (int j = c == rb ? t + 1 : 0; j < ncol; j++)
                if (ccls[j] == ki && det_suppress(det_ovr(bi, ai, cbox + 4 * j, carea[j], one), ge, fthr, thr))
                        bits |= 1ull << j;
        mask[i * cb + c] = bits;
}

/* The greedy scan of the suppression mask, in one block (torchvision's
 * host loop, on the device): rows in sorted order, a row not yet removed is
 * kept and removes the rows its mask row names.  Every thread reads the same
 * removed bit (bit i is never written by row i's own words), so the branch
 * and its __syncthreads are uniform; the removed bits live in shared memory,
 * or in gremoved where cb words do not fit. */
#define NMS_SCAN_THREADS 256
#define NMS_SCAN_SMEM_WORDS 6144        /* 48 KiB */
__global__ void k_nms_scan(const unsigned long long *mask, const int32_t *order, int64_t n, int64_t cb,
                           unsigned long long *gremoved, int32_t *keep, int64_t *nkeep)
{
        extern __shared__ unsigned long long sremoved[];
        unsigned long long *removed = gremoved ? gremoved : sremoved;
        for (int64_t w = threadIdx.x; w < cb; w += blockDim.x)
                removed[w] = 0;
        __syncthreads();
        int64_t nk = 0;
        for (int64_t i = 0; i < n; i++) {
                if (removed[i / 64] >> (i % 64) & 1)
                        continue;
                if (threadIdx.x == 0)
                        keep[nk] = order[i];
                nk++;
                const unsigned long long *mi = mask + i * cb;
                for (int64_t w = i / 64 + threadIdx.x; w < cb; w += blockDim.x)
                        removed[w] |= mi[w];
                __syncthreads();
        }
        if (threadIdx.x == 0)
                *nkeep = nk;
}

/* Greedy NMS over boxes (classes idx or one class) on the device, queued
 * on st without waiting: dkeep (n, device) gets the kept indices in the
 * sorted order (by class ascending when idx, then descending score), *dcount
 * (device) their number.  (det_cuda_nms_batch reads them back.) */
static int nms_dev(cudaStream_t st, const struct det_conv *c, const float *boxes, const float *scores,
                   const int32_t *idx, int64_t n, double thr, int32_t *dkeep, int64_t *dcount, struct bd_err *err)
{
        int r = 0;
        float one = c->plus_one ? 1.0f : 0.0f;
        int64_t cb = (n + 63) / 64;
        uint32_t *key = NULL, *key2 = NULL;
        int32_t *val = NULL, *val2 = NULL, *scls = NULL;
        float *sb = NULL, *area = NULL;
        void *tmp = NULL;
        size_t tmpb = 0;
        unsigned long long *mask = NULL, *gremoved = NULL;
        if (n <= 0) {
                CU(cudaMemsetAsync(dcount, 0, sizeof(*dcount), st));
                return 0;
        }
        if (n > INT32_MAX / 2)
                return bd_err_set(err, -EINVAL, "det nms: %lld boxes", (long long)n);
        CU(cudaMallocAsync((void **)&key, 2 * (size_t)n * sizeof(uint32_t), st));
        CU(cudaMallocAsync((void **)&val, 3 * (size_t)n * sizeof(int32_t), st));
        key2 = key + n;
        val2 = val + n;
        scls = val + 2 * n;
        CU(cudaMallocAsync((void **)&sb, 5 * (size_t)n * sizeof(float), st));
        area = sb + 4 * n;
        CU(cudaMallocAsync((void **)&mask, (size_t)(n * cb) * sizeof(*mask), st));
        if (cb > NMS_SCAN_SMEM_WORDS)
                CU(cudaMallocAsync((void **)&gremoved, (size_t)cb * sizeof(*gremoved), st));
        k_sort_keys<<<det_blocks(n), DET_THREADS, 0, st>>>(scores, n, key, val);
        CU(cudaGetLastError());
        CU(cub::DeviceRadixSort::SortPairs(NULL, tmpb, key, key2, val, val2, (int)n, 0, 32, st));
        CU(cudaMallocAsync(&tmp, tmpb, st));
        CU(cub::DeviceRadixSort::SortPairs(tmp, tmpb, key, key2, val, val2, (int)n, 0, 32, st));
        if (idx) {
                /* then a stable sort by class: class ascending, score descending inside */
                k_class_keys<<<det_blocks(n), DET_THREADS, 0, st>>>(idx, val2, n, key);
                CU(cudaGetLastError());
                CU(cub::DeviceRadixSort::SortPairs(tmp, tmpb, key, key2, val2, val, (int)n, 0, 32, st));
                CU(cudaMemcpyAsync(val2, val, (size_t)n * sizeof(int32_t), cudaMemcpyDeviceToDevice, st));
        }
        k_gather<<<det_blocks(n), DET_THREADS, 0, st>>>(boxes, idx, val2, n, one, sb, area, scls);
        CU(cudaGetLastError());
        k_nms_mask<<<dim3((unsigned)cb, (unsigned)cb), 64, 0, st>>>(sb, area, scls, n, one, c->nms_ge ? 1 : 0,
                                                                    (float)thr, thr, mask);
        CU(cudaGetLastError());
        k_nms_scan<<<1, NMS_SCAN_THREADS, gremoved ? 0 : (size_t)cb * sizeof(*mask), st>>>(mask, val2, n, cb,
                                                                                            gremoved, dkeep, dcount);
        CU(cudaGetLastError());
out:
        det_dfree(key, st);
        det_dfree(val, st);
        det_dfree(sb, st);
        det_dfree(mask, st);
        det_dfree(gremoved, st);
        det_dfree(tmp, st);
        return r;
}

extern "C" int det_cuda_nms_batch(void *stream, const struct det_conv *c, const float *boxes, const float *scores,
                                  const int32_t *idx, const int64_t *n, int N, int64_t stride, double thr,
                                  int64_t *keep, int64_t *nkeep, struct bd_err *err)
{
        cudaStream_t st = (cudaStream_t)stream;
        int r = 0;
        /* the kept indices (N x stride), then the N counts 8-byte aligned */
        int64_t kc = ((int64_t)N * stride + 1) & ~(int64_t)1;
        size_t bytes = (size_t)kc * sizeof(int32_t) + (size_t)N * sizeof(int64_t);
        int32_t *dkeep = NULL, *hkeep = NULL;
        int64_t *hcnt;
        for (int i = 0; i < N; i++)
                nkeep[i] = 0;
        if ((int64_t)N * stride <= 0)
                return 0;
        CU(cudaMallocAsync((void **)&dkeep, bytes, st));
        if (!(hkeep = (int32_t *)malloc(bytes))) {
                r = bd_err_set(err, -ENOMEM, "det nms: no host memory for %lld indices", (long long)kc);
                goto out;
        }
        for (int i = 0; i < N; i++)
                if ((r = nms_dev(st, c, boxes + 4 * i * stride, scores + i * stride, idx ? idx + i * stride : NULL,
                                 n[i], thr, dkeep + i * stride, (int64_t *)(dkeep + kc) + i, err)) < 0)
                        goto out;
        CU(cudaMemcpyAsync(hkeep, dkeep, bytes, cudaMemcpyDeviceToHost, st));
        CU(cudaStreamSynchronize(st));
        hcnt = (int64_t *)(hkeep + kc);
        for (int i = 0; i < N; i++) {
                if (hcnt[i] < 0 || hcnt[i] > n[i]) {
                        r = bd_err_set(err, -EIO, "det nms: set %d: %lld kept of %lld", i, (long long)hcnt[i],
                                       (long long)n[i]);
                        goto out;
                }
                for (int64_t k = 0; k < hcnt[i]; k++)
                        keep[i * stride + k] = hkeep[i * stride + k];
                nkeep[i] = hcnt[i];
        }
out:
        det_dfree(dkeep, st);
        free(hkeep);
        return r;
}

/* one set: keep (host) and *nkeep */
static int nms_core(cudaStream_t st, const struct det_conv *c, const float *boxes, const float *scores,
                    const int32_t *idx, int64_t n, double thr, int64_t *keep, int64_t *nkeep, struct bd_err *err)
{
        return det_cuda_nms_batch(st, c, boxes, scores, idx, &n, 1, n, thr, keep, nkeep, err);
}

extern "C" int det_cuda_nms(void *stream, const struct det_conv *c, const float *boxes, const float *scores,
                            const int32_t *idx, int64_t n, double thr, int64_t *keep, int64_t *nkeep,
                            struct bd_err *err)
{
        cudaStream_t st = (cudaStream_t)stream;
        int r = 0;
        float *hb = NULL, *hs = NULL, *db = NULL;
        int32_t *hi = NULL;
        int64_t *o = NULL;
        *nkeep = 0;
        if (n <= 0)
                return 0;
        if (!idx || c->plus_one)        /* det_nms, or [R]: per class in ascending class order */
                return nms_core(st, c, boxes, scores, idx, n, thr, keep, nkeep, err);
        if (n * 4 > 4000) {
                /* _batched_nms_vanilla: per class, then all kept by descending score */
                r = nms_core(st, c, boxes, scores, idx, n, thr, keep, nkeep, err);
                if (r < 0)
                        return r;
                hs = (float *)malloc((size_t)n * sizeof(float));
                o = (int64_t *)malloc((size_t)(*nkeep ? *nkeep : 1) * sizeof(int64_t));
                if (!hs || !o) {
                        r = bd_err_set(err, -ENOMEM, "det batched nms: no host memory");
                        goto out;
                }
                CU(cudaMemcpyAsync(hs, scores, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost, st));
                CU(cudaStreamSynchronize(st));
                det_argsort_desc(hs, keep, *nkeep, o);
                memcpy(keep, o, (size_t)*nkeep * sizeof(int64_t));
                goto out;
        }
        /* _batched_nms_coordinate_trick on at most 1000 boxes: shifted on the
         * host exactly as det_batched_nms does (the same floats), then NMS */
        hb = (float *)malloc((size_t)n * 4 * sizeof(float));
        hi = (int32_t *)malloc((size_t)n * sizeof(int32_t));
        if (!hb || !hi) {
                r = bd_err_set(err, -ENOMEM, "det batched nms: no host memory");
                goto out;
        }
        CU(cudaMemcpyAsync(hb, boxes, (size_t)n * 4 * sizeof(float), cudaMemcpyDeviceToHost, st));
        CU(cudaMemcpyAsync(hi, idx, (size_t)n * sizeof(int32_t), cudaMemcpyDeviceToHost, st));
        CU(cudaStreamSynchronize(st));
        det_shift_by_class(hb, hi, n, hb);
        CU(cudaMallocAsync((void **)&db, (size_t)n * 4 * sizeof(float), st));
        CU(cudaMemcpyAsync(db, hb, (size_t)n * 4 * sizeof(float), cudaMemcpyHostToDevice, st));
        r = nms_core(st, c, db, scores, NULL, n, thr, keep, nkeep, err);
out:
        det_dfree(db, st);
        free(hb);
        free(hs);
        free(hi);
        free(o);
        return r;
}

/* ---- matcher ---- */

__global__ void k_match_cols(const float *iou, int64_t g, int64_t n, float high, float low, int32_t *best,
                             int32_t *matches)
{
        GRID_LOOP(j, n) {
                float v = det_denan(iou[j]);
                int32_t b = 0;
                for (int64_t i = 1; i < g; i++) {
                        float x = det_denan(iou[i * n + j]);
                        if (x > v) {
                                v = x;
                                b = (int32_t)i;
                        }
                }
                best[j] = b;
                matches[j] = v < low ? DET_MATCH_BELOW_LOW : v < high ? DET_MATCH_BETWEEN : b;
        }
}

/* one block per GT: the row's maximum (a max: any order gives the same) */
__global__ void k_match_rows(const float *iou, int64_t n, float *rowmax)
{
        const float *row = iou + (int64_t)blockIdx.x * n;
        float v = 0.0f;
        int any = 0;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
                float x = det_denan(row[j]);
                v = any ? det_smax(v, x) : x;
                any = 1;
        }
        v = det_block_max(any ? v : -INFINITY);
        if (threadIdx.x == 0)
                rowmax[blockIdx.x] = v;
}

__global__ void k_match_low_quality(const float *iou, int64_t g, int64_t n, const float *rowmax, const int32_t *best,
                                    int32_t *matches)
{
        GRID_LOOP(j, n)
                for (int64_t i = 0; i < g; i++)
                        if (det_denan(iou[i * n + j]) == rowmax[i]) {
                                matches[j] = best[j];
                                break;
                        }
}

__global__ void k_fill_i32(int32_t *p, int64_t n, int32_t v)
{
        GRID_LOOP(i, n)
                p[i] = v;
}

extern "C" int det_cuda_match(void *stream, const struct det_matcher *m, const float *iou, int64_t g, int64_t n,
                              int32_t *matches, struct bd_err *err)
{
        cudaStream_t st = (cudaStream_t)stream;
        int r = 0;
        int32_t *best = NULL;
        float *rowmax = NULL;
        if (g < 0 || n < 0 || !(m->low <= m->high))
                return bd_err_set(err, -EINVAL, "det match: %lld x %lld, thresholds %g, %g", (long long)g,
                                  (long long)n, m->low, m->high);
        if (n == 0)
                return 0;
        if (g == 0) {
                k_fill_i32<<<det_blocks(n), DET_THREADS, 0, st>>>(matches, n, DET_MATCH_BELOW_LOW);
                CU(cudaGetLastError());
                goto out;
        }
        if (g > 65535)
                return bd_err_set(err, -EINVAL, "det match: %lld ground-truth boxes (at most 65535)", (long long)g);
        CU(cudaMallocAsync((void **)&best, (size_t)n * sizeof(int32_t), st));
        CU(cudaMallocAsync((void **)&rowmax, (size_t)g * sizeof(float), st));
        k_match_cols<<<det_blocks(n), DET_THREADS, 0, st>>>(iou, g, n, m->high, m->low, best, matches);
        CU(cudaGetLastError());
        if (m->allow_low_quality) {
                k_match_rows<<<(unsigned)g, DET_THREADS, 0, st>>>(iou, n, rowmax);
                CU(cudaGetLastError());
                k_match_low_quality<<<det_blocks(n), DET_THREADS, 0, st>>>(iou, g, n, rowmax, best, matches);
                CU(cudaGetLastError());
        }
out:
        det_dfree(best, st);
        det_dfree(rowmax, st);
        return r;
}

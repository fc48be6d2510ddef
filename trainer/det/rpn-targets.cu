/* rpn-targets.cu: the RPN's targets on the device (det_dev_rpn_targets in
 * boxes-dev.h; the host function is det_rpn_targets in match.c).
 *
 * Per step, for all images at once:
 *   1. each ground-truth box's best IoU over the anchors (a block per box,
 *      the IoU computed on the fly as det_match_boxes does: no matrix);
 *   2. each (image, anchor): visibility, its first best box, the matcher's
 *      thresholds, the low-quality rule against step 1's maxima, the label,
 *      and (positive, negative) flags packed in one 64-bit count;
 *   3. an exclusive scan of the packed flags (cub): each image's positives
 *      and negatives in index order, as the host lists them;
 *   4. one thread per image draws the sampler's partial Fisher-Yates shuffles
 *      from lib/rng.h's generator with the host's keys, so the same anchors
 *      are chosen, and marks them;
 *   5. the labels and box codes written in the heads' (level, image,
 *      location) order.
 * The sampled counts come back to the host: the one copy, for all images.
 * The arithmetic is boxes-impl.h's, shared with the host.
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
#include "rng.h"
}
#include "boxes-impl.h"
#include "det-cuda.h"
#include "sample-impl.h"

#define MAXN 64
#define MAXL 16

/* the batch's small facts, passed by value */
struct tgt_arg {
        int64_t A, N, G;
        int64_t off[MAXL + 1];
        int64_t gt_off[MAXN + 1];
        int hw[2 * MAXN];
        uint64_t streams[MAXN];
        uint64_t seed;
        int64_t kp_max, bs;             /* int(bs * fraction), bs */
        int L;
        float one, high, low, straddle;
        int low_quality;
        struct det_coder k;
};

/* 1. rowmax[g]: box g's best IoU over all anchors (starting from 0, as the host) */
__global__ void k_gt_best(struct tgt_arg a, const float *anchors, const float *gt, float *rowmax)
{
        const int64_t g = blockIdx.x;
        const float *gb = gt + 4 * g;
        const float ga = det_area(gb, a.one);
        float v = 0.0f;
        for (int64_t j = threadIdx.x; j < a.A; j += blockDim.x) {
                const float *b = anchors + 4 * j;
                v = det_smax(v, det_denan(det_iou1(gb, ga, b, det_area(b, a.one), a.one)));
        }
        v = det_block_max(v);
        if (threadIdx.x == 0)
                rowmax[g] = v;
}

/* 2. per (image, anchor): the match (GT row within the image, or -1, -2),
 * the label, and the packed flags: 1 for a positive, 1 << 32 for a negative
 * (one extra element, 0, at the end so the scan gives the totals) */
__global__ void k_label(struct tgt_arg a, const float *anchors, const float *gt, const float *rowmax,
                        int32_t *match, unsigned long long *flags)
{
        GRID_LOOP(u, a.N * a.A + 1) {
                if (u == a.N * a.A) {
                        flags[u] = 0;
                        continue;
                }
                const int64_t i = u / a.A, j = u % a.A, g0 = a.gt_off[i], ng = a.gt_off[i + 1] - g0;
                const float *b = anchors + 4 * j;
                int vis = det_visible1(b, a.straddle, (float)a.hw[2 * i + 1], (float)a.hw[2 * i]);
                int32_t m = DET_MATCH_BELOW_LOW;
                if (ng > 0) {
                        const float ba = det_area(b, a.one);
                        float v = 0.0f;
                        int32_t bi = 0;
                        for (int64_t q = 0; q < ng; q++) {
                                const float *gb = gt + 4 * (g0 + q);
                                float x = det_denan(det_iou1(gb, det_area(gb, a.one), b, ba, a.one));
                                if (q == 0 || x > v) {
                                        v = x;
                                        bi = (int32_t)q;
                                }
                        }
                        m = v < a.low ? DET_MATCH_BELOW_LOW : v < a.high ? DET_MATCH_BETWEEN : bi;
                        if (a.low_quality)
                                for (int64_t q = 0; q < ng; q++) {
                                        const float *gb = gt + 4 * (g0 + q);
                                        if (det_denan(det_iou1(gb, det_area(gb, a.one), b, ba, a.one)) ==
                                            rowmax[g0 + q]) {
                                                m = bi;
                                                break;
                                        }
                                }
                }
                int lab = m >= 0 ? 1 : m == DET_MATCH_BELOW_LOW ? 0 : -1;
                if (!vis)
                        lab = -1;
                match[u] = m;
                flags[u] = lab == 1 ? 1ull : lab == 0 ? 1ull << 32 : 0ull;
        }
}

/* 3b. the candidates in index order: pos[scan] = j, neg[scan] = j */
__global__ void k_compact(struct tgt_arg a, const unsigned long long *flags, const unsigned long long *scan,
                          int64_t *pos, int64_t *neg)
{
        GRID_LOOP(u, a.N * a.A) {
                unsigned long long f = flags[u], s = scan[u];
                int64_t j = u % a.A;
                if (f & 0xffffffffull)
                        pos[s & 0xffffffffull] = j;
                else if (f)
                        neg[s >> 32] = j;
        }
}

/* 4. one thread per image: the counts, the draws, the marks (1 positive, 2
 * negative) in chosen (N A, zeroed), the sampled counts in cnt (2 N) */
__global__ void k_sample(struct tgt_arg a, const unsigned long long *scan, int64_t *pos, int64_t *neg, uint8_t *chosen,
                         int64_t *cnt)
{
        const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= a.N)
                return;
        unsigned long long s0 = scan[i * a.A], s1 = scan[(i + 1) * a.A];
        int64_t p0 = (int64_t)(s0 & 0xffffffffull), np = (int64_t)(s1 & 0xffffffffull) - p0;
        int64_t n0 = (int64_t)(s0 >> 32), nn = (int64_t)(s1 >> 32) - n0;
        int64_t kp = a.kp_max < np ? a.kp_max : np;
        int64_t kn = a.bs - kp < nn ? a.bs - kp : nn;
        det_partial_shuffle(pos + p0, np, kp, a.seed, a.streams[i], 0);   /* det_sample's draws */
        det_partial_shuffle(neg + n0, nn, kn, a.seed, a.streams[i], 1);
        uint8_t *ch = chosen + i * a.A;
        for (int64_t t = 0; t < kp; t++)
                ch[pos[p0 + t]] = 1;
        for (int64_t t = 0; t < kn; t++)
                ch[neg[n0 + t]] = 2;
        cnt[2 * i] = kp;
        cnt[2 * i + 1] = kn;
}

/* 5. labels and codes in the (level, image, location) order */
__global__ void k_write(struct tgt_arg a, const float *anchors, const float *gt, const int32_t *match,
                        const uint8_t *chosen, int32_t *labels, float *tgt)
{
        GRID_LOOP(u, a.N * a.A) {
                const int64_t i = u / a.A, j = u % a.A;
                int l = 0;
                while (l + 1 < a.L && a.off[l + 1] <= j)
                        l++;
                const int64_t a0 = a.off[l], o = a.N * a0 + i * (a.off[l + 1] - a0) + (j - a0);
                const int c = chosen[u];
                labels[o] = c == 1 ? 1 : c == 2 ? 0 : -1;
                float *to = tgt + 4 * o;
                if (c == 1)
                        det_encode1(gt + 4 * (a.gt_off[i] + match[u]), anchors + 4 * j, a.k.wx, a.k.wy, a.k.ww, a.k.wh,
                                    a.one, to);
                else
                        to[0] = to[1] = to[2] = to[3] = 0.0f;
        }
}

extern "C" int det_cuda_rpn_targets(void *stream, const struct det_conv *c, const struct det_rpn_batch *b,
                                    const float *anchors, const float *gt, int32_t *labels, float *tgt,
                                    int64_t *npos, int64_t *nneg, struct bd_err *err)
{
        cudaStream_t st = (cudaStream_t)stream;
        int r = 0;
        struct tgt_arg a;
        float *rowmax = NULL;
        int32_t *match = NULL;
        int64_t *pos = NULL, *neg = NULL;
        unsigned long long *flags = NULL, *scan = NULL;
        uint8_t *chosen = NULL;
        int64_t *cnt = NULL, hcnt[2 * MAXN];
        void *tmp = NULL;
        size_t tmpb = 0;
        const int64_t A = b->off[b->L], M = (int64_t)b->N * A;
        if (b->N < 0 || b->N > MAXN || b->L < 1 || b->L > MAXL)
                return bd_err_set(err, -EINVAL, "det rpn targets: %d images, %d levels (at most %d, %d)", b->N, b->L,
                                  MAXN, MAXL);
        /* the scan counts in 32 bits and in an int (cub) */
        if (M + 1 > INT32_MAX || b->gt_off[b->N] > INT32_MAX)
                return bd_err_set(err, -EINVAL, "det rpn targets: %d images of %lld anchors and %lld boxes (at most "
                                  "2^31 - 1 of each in all)", b->N, (long long)A, (long long)b->gt_off[b->N]);
        if (M == 0) {
                for (int i = 0; i < b->N; i++)
                        npos[i] = nneg[i] = 0;
                return 0;
        }
        memset(&a, 0, sizeof(a));
        a.A = A;
        a.N = b->N;
        a.G = b->gt_off[b->N];
        a.L = b->L;
        memcpy(a.off, b->off, (size_t)(b->L + 1) * sizeof(int64_t));
        memcpy(a.gt_off, b->gt_off, (size_t)(b->N + 1) * sizeof(int64_t));
        memcpy(a.hw, b->image_hw, (size_t)b->N * 2 * sizeof(int));
        memcpy(a.streams, b->streams, (size_t)b->N * sizeof(uint64_t));
        a.seed = b->seed;
        a.bs = b->s->batch_size_per_image;
        a.kp_max = (int64_t)((double)a.bs * b->s->positive_fraction);   /* det_sample's: Python's int() */
        a.one = c->plus_one ? 1.0f : 0.0f;
        a.high = b->m->high;
        a.low = b->m->low;
        a.low_quality = b->m->allow_low_quality;
        a.straddle = c->straddle;
        a.k = *b->k;
        CU(cudaMallocAsync((void **)&rowmax, (size_t)(a.G + 1) * sizeof(float), st));
        CU(cudaMallocAsync((void **)&match, (size_t)(M + 1) * sizeof(int32_t), st));
        CU(cudaMallocAsync((void **)&pos, (size_t)(M + 1) * sizeof(int64_t), st));
        CU(cudaMallocAsync((void **)&neg, (size_t)(M + 1) * sizeof(int64_t), st));
        CU(cudaMallocAsync((void **)&flags, (size_t)(M + 1) * sizeof(unsigned long long), st));
        CU(cudaMallocAsync((void **)&scan, (size_t)(M + 1) * sizeof(unsigned long long), st));
        CU(cudaMallocAsync((void **)&chosen, (size_t)M, st));
        CU(cudaMallocAsync((void **)&cnt, (size_t)(2 * b->N) * sizeof(int64_t), st));
        CU(cudaMemsetAsync(chosen, 0, (size_t)M, st));
        if (a.G > 0 && a.low_quality) {
                k_gt_best<<<(unsigned)a.G, DET_THREADS, 0, st>>>(a, anchors, gt, rowmax);
                CU(cudaGetLastError());
        }
        k_label<<<det_blocks(M + 1), DET_THREADS, 0, st>>>(a, anchors, gt, rowmax, match, flags);
        CU(cudaGetLastError());
        CU(cub::DeviceScan::ExclusiveSum(NULL, tmpb, flags, scan, (int)(M + 1), st));
        CU(cudaMallocAsync(&tmp, tmpb + 1, st));
        CU(cub::DeviceScan::ExclusiveSum(tmp, tmpb, flags, scan, (int)(M + 1), st));
        k_compact<<<det_blocks(M), DET_THREADS, 0, st>>>(a, flags, scan, pos, neg);
        CU(cudaGetLastError());
        k_sample<<<(unsigned)((b->N + 31) / 32), 32, 0, st>>>(a, scan, pos, neg, chosen, cnt);
        CU(cudaGetLastError());
        k_write<<<det_blocks(M), DET_THREADS, 0, st>>>(a, anchors, gt, match, chosen, labels, tgt);
        CU(cudaGetLastError());
        CU(cudaMemcpyAsync(hcnt, cnt, (size_t)(2 * b->N) * sizeof(int64_t), cudaMemcpyDeviceToHost, st));
        CU(cudaStreamSynchronize(st));
        for (int i = 0; i < b->N; i++) {
                npos[i] = hcnt[2 * i];
                nneg[i] = hcnt[2 * i + 1];
        }
out:
        det_dfree(rowmax, st);
        det_dfree(match, st);
        det_dfree(pos, st);
        det_dfree(neg, st);
        det_dfree(flags, st);
        det_dfree(scan, st);
        det_dfree(chosen, st);
        det_dfree(cnt, st);
        det_dfree(tmp, st);
        return r;
}

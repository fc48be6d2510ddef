/* postprocess.cu: the CUDA side of postprocess.h: detection candidates
 * (softmax, decode, clip, score threshold) and mask paste.
 *
 * The arithmetic is postprocess-impl.h's, the host's own, with every float
 * operation rounded (_rn intrinsics: no fused multiply-adds); expf differs
 * from the host's by an ulp or two, so scores and boxes agree with the CPU
 * within a few ulps and pasted masks within 1e-6.
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>

extern "C" {
#include "config.h"
#include "postprocess.h"
}

#define DET_HD static __device__ inline
#include "postprocess-impl.h"

#define THREADS 256

/* one thread per (proposal, class >= 1); the row's softmax recomputed by each
 * (K is 81 at most in practice: cheaper than a second pass) */
__global__ void k_candidates(float one, struct det_coder k, float thr, const float *logits, const float *deltas,
                             const float *props, int64_t N, int K, float wmax, float hmax, int *cnt, int64_t *idx,
                             float *scores, float *boxes)
{
        int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (t >= N * (K - 1))
                return;
        int64_t i = t / (K - 1);
        int j = (int)(t % (K - 1)) + 1;
        const float *l = logits + i * K;
        float mx, inv = det_softmax_inv(l, K, &mx);
        float s = __fmul_rn(expf(__fsub_rn(l[j], mx)), inv);
        if (!(s > thr))
                return;
        int at = atomicAdd(cnt, 1);
        idx[at] = i * K + j;
        scores[at] = s;
        det_decode_clip(one, &k, deltas + (i * K + j) * 4, props + 4 * i, wmax, hmax, boxes + 4 * (int64_t)at);
}

extern "C" int det_cuda_candidates(void *stream, int plus_one, const struct det_coder *k, float score_thresh,
                                   const float *logits, const float *deltas, const float *props, int64_t N, int K,
                                   int img_h, int img_w, int *cnt, int64_t *idx, float *scores, float *boxes)
{
        cudaStream_t st = (cudaStream_t)stream;
        if (cudaMemsetAsync(cnt, 0, sizeof(int), st) != cudaSuccess)
                return -EIO;
        int64_t n = N * (K - 1);
        if (n == 0)
                return 0;
        float one = plus_one ? 1.0f : 0.0f;
        unsigned blocks = (unsigned)((n + THREADS - 1) / THREADS);
        k_candidates<<<blocks, THREADS, 0, st>>>(one, *k, score_thresh, logits, deltas, props, N, K,
                                                 (float)img_w - one, (float)img_h - one, cnt, idx, scores, boxes);
        return cudaGetLastError() == cudaSuccess ? 0 : -EIO;
}

/* blockIdx.y: the detection; threads stride over its clipped box's pixels */
__global__ void k_paste(const float *masks, const float *boxes, int M, int H, int W, float *out)
{
        int64_t i = blockIdx.y;
        int64_t ib[4], r[4];
        if (!det_paste_box(boxes + 4 * i, M, ib))
                return;
        det_paste_clip(ib, H, W, r);
        int64_t rw = r[2] - r[0], rh = r[3] - r[1];
        if (rw <= 0 || rh <= 0)
                return;
        const float *m = masks + i * M * M;
        float *o = out + i * H * W;
        for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < rw * rh;
             p += (int64_t)gridDim.x * blockDim.x) {
                int64_t y = r[1] + p / rw, x = r[0] + p % rw;
                o[y * W + x] = det_paste_px(m, M, ib, y, x);
        }
}

extern "C" int det_cuda_paste_masks(void *stream, const float *masks, const float *boxes, int64_t n, int M, int H,
                                    int W, float *out)
{
        cudaStream_t st = (cudaStream_t)stream;
        if (cudaMemsetAsync(out, 0, (size_t)n * H * W * sizeof(float), st) != cudaSuccess)
                return -EIO;
        for (int64_t first = 0; first < n; first += 65535) {
                int64_t cnt = n - first < 65535 ? n - first : 65535;
                /* enough blocks for a large box; small ones leave most idle at once */
                dim3 grid(64, (unsigned)cnt);
                k_paste<<<grid, THREADS, 0, st>>>(masks + first * M * M, boxes + 4 * first, M, H, W,
                                                  out + first * H * W);
        }
        return cudaGetLastError() == cudaSuccess ? 0 : -EIO;
}

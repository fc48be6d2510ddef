/* boxes-impl.h: the per-box arithmetic of boxes.c, shared by the host
 * operators (boxes.c, match.c, proposals.c) and their CUDA twins
 * (boxes-cuda.cu, proposals.cu), so both sides compute the same floats.
 *
 * torchvision rounds every operation: nothing may become a fused
 * multiply-add.  The host files switch contraction off; nvcc has no such
 * pragma, so on the device the products that feed a sum go through
 * __fmul_rn (never contracted).  Internal header: not part of the API.
 */
#ifndef BD_DET_BOXES_IMPL_H
#define BD_DET_BOXES_IMPL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define DET_HD __host__ __device__ __forceinline__
#else
#define DET_HD static inline
#endif

#ifdef __CUDA_ARCH__
#define DET_MUL(a, b) __fmul_rn((a), (b))
#else
#define DET_MUL(a, b) ((a) * (b))
#endif

/* std::max and std::min as torchvision's kernels use them (NaN handling included) */
DET_HD float det_smax(float a, float b)
{
        return a < b ? b : a;
}

DET_HD float det_smin(float a, float b)
{
        return b < a ? b : a;
}

/* NaN as 0: the matchers' IoU of a box with a NaN coordinate */
DET_HD float det_denan(float v)
{
        return v == v ? v : 0.0f;
}

DET_HD float det_area(const float *b, float one)
{
        return DET_MUL(b[2] - b[0] + one, b[3] - b[1] + one);
}

/* intersection of a and b (0 when they do not overlap) */
DET_HD float det_inter(const float *a, const float *b, float one)
{
        float x1 = det_smax(a[0], b[0]), y1 = det_smax(a[1], b[1]);
        float x2 = det_smin(a[2], b[2]), y2 = det_smin(a[3], b[3]);
        float w = x2 - x1 + one, h = y2 - y1 + one;
        w = w > 0 ? w : 0;
        h = h > 0 ? h : 0;
        return DET_MUL(w, h);
}

/* maskrcnn_benchmark's straddle rule: anchor b lies within the image of
 * img_w x img_h widened by t on every side (t < 0: every anchor counts) */
DET_HD int det_visible1(const float *b, float t, float img_w, float img_h)
{
        return t < 0 || (b[0] >= -t && b[1] >= -t && b[2] < img_w + t && b[3] < img_h + t);
}

/* box_iou's intersection over union; 0 where the union is not > 0 (or NaN) */
DET_HD float det_iou1(const float *a, float aa, const float *b, float ab, float one)
{
        float inter = det_inter(a, b, one), uni = aa + ab - inter;
        return uni > 0 ? inter / uni : 0.0f;
}

/* NMS's overlap, as torchvision's nms kernel and nms_cpu: no guard on the
 * union (0/0 is NaN and suppresses nothing) */
DET_HD float det_ovr(const float *a, float aa, const float *b, float ab, float one)
{
        float inter = det_inter(a, b, one);
        return inter / (aa + ab - inter);
}

/* does an overlap suppress?  nms_ge: ovr >= thr in float ([R]); else
 * ovr > thr in double (torchvision compares a float with a double) */
DET_HD int det_suppress(float ovr, int nms_ge, float fthr, double thr)
{
        return nms_ge ? ovr >= fthr : (double)ovr > thr;
}

/* BoxCoder.decode_single for one box b and one code d (weights wx..wh,
 * dw and dh clamped above at clip; NaN stays NaN) */
DET_HD void det_decode1(const float *d, const float *b, float wx, float wy, float ww, float wh, float clip,
                        float one, float *o)
{
        float w = b[2] - b[0] + one, h = b[3] - b[1] + one;
        float cx = b[0] + DET_MUL(0.5f, w), cy = b[1] + DET_MUL(0.5f, h);
        float dx = d[0] / wx, dy = d[1] / wy;
        float dw = d[2] / ww, dh = d[3] / wh;
        if (dw > clip)
                dw = clip;
        if (dh > clip)
                dh = clip;
        float pcx = DET_MUL(dx, w) + cx, pcy = DET_MUL(dy, h) + cy;
        float pw = DET_MUL(expf(dw), w), ph = DET_MUL(expf(dh), h);
        float hw = DET_MUL(0.5f, pw), hh = DET_MUL(0.5f, ph);
        o[0] = pcx - hw;
        o[1] = pcy - hh;
        o[2] = pcx + hw - one;
        o[3] = pcy + hh - one;
}
/* the RPN's clip and filters on one decoded box b and its score: clip to
 * [0, W - one] x [0, H - one] (torch.clamp: NaN stays NaN), then keep when
 * both sides (+ one) are >= min_size and score >= score_thresh (NaN fails) */
DET_HD int det_clip_keep1(float *b, float one, float img_w, float img_h, float min_size, float score,
                          float score_thresh)
{
        float mx[4] = { img_w - one, img_h - one, img_w - one, img_h - one };
        for (int q = 0; q < 4; q++) {
                float v = b[q] < 0 ? 0.0f : b[q];
                b[q] = v > mx[q] ? mx[q] : v;
        }
        float ws = b[2] - b[0] + one, hs = b[3] - b[1] + one;
        return ws >= min_size && hs >= min_size && score >= score_thresh;
}

DET_HD float det_sigmoid(float x)
{
        return 1.0f / (1.0f + expf(-x));
}


/* BoxCoder.encode_single for one pair: gt g relative to proposal p */
DET_HD void det_encode1(const float *g, const float *p, float wx, float wy, float ww, float wh, float one, float *o)
{
        float pw = p[2] - p[0] + one, ph = p[3] - p[1] + one;
        float pcx = p[0] + DET_MUL(0.5f, pw), pcy = p[1] + DET_MUL(0.5f, ph);
        float gw = g[2] - g[0] + one, gh = g[3] - g[1] + one;
        float gcx = g[0] + DET_MUL(0.5f, gw), gcy = g[1] + DET_MUL(0.5f, gh);
        o[0] = wx * (gcx - pcx) / pw;
        o[1] = wy * (gcy - pcy) / ph;
        o[2] = ww * logf(gw / pw);
        o[3] = wh * logf(gh / ph);
}

/* A sort key whose ascending order is descending score with every NaN first
 * (torch.sort(descending=True) treats NaN as the largest) and -0 == +0: a
 * stable sort on it is torch.sort(descending=True, stable=True). */
DET_HD uint32_t det_desc_key(float f)
{
        if (f != f)
                return 0;
        if (f == 0)
                f = 0;  /* -0 sorts with +0 */
        uint32_t u;
#ifdef __CUDA_ARCH__
        u = __float_as_uint(f);
#else
        memcpy(&u, &f, sizeof(u));
#endif
        u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);   /* ascending float order */
        return ~u;  /* descending; never 0 (only +NaN's ascending key is all ones) */
}

#endif

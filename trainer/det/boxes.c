/* boxes.c: anchors, box coder, IoU and NMS in both conventions (boxes.h).
 *
 * Arithmetic is float32 in torchvision's order of operations (Detectron's
 * cell anchors in double, as numpy computes them), so results agree with
 * torchvision to an ulp or two (log, exp) and exactly where no
 * transcendental is involved.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "boxes.h"

/* torchvision rounds every operation: no fused multiply-adds, whatever the
 * target (the keep lists must be torchvision's exactly) */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

const struct det_conv det_conv_mlperf = { .plus_one = 1, .anchor_detectron = 1, .nms_ge = 1, .straddle = 0 };
const struct det_conv det_conv_torchvision = { .plus_one = 0, .anchor_detectron = 0, .nms_ge = 0,
                                               .straddle = -1 };

const struct det_conv *det_conv_get(enum det_conv_kind kind)
{
        return kind == DET_CONV_MLPERF ? &det_conv_mlperf : &det_conv_torchvision;
}

/* ---- anchors ---- */

static void mkanchor(double w, double h, double cx, double cy, float *a)
{
        a[0] = (float)(cx - 0.5 * (w - 1));
        a[1] = (float)(cy - 0.5 * (h - 1));
        a[2] = (float)(cx + 0.5 * (w - 1));
        a[3] = (float)(cy + 0.5 * (h - 1));
}

int det_cell_anchors(const struct det_conv *c, int stride, const float *sizes, int nsizes, const float *ratios,
                     int nratios, float *cell)
{
        if (nsizes < 1 || nratios < 1 || stride < 1)
                return -EINVAL;
        int k = 0;
        for (int r = 0; r < nratios; r++) {
                if (c->anchor_detectron) {
                        /* _ratio_enum on [0, 0, s-1, s-1]: w = h = s, centre (s-1)/2 */
                        double s = stride, ctr = 0.5 * (s - 1), ratio = ratios[r];
                        double ws = nearbyint(sqrt(s * s / ratio));
                        double hs = nearbyint(ws * ratio);
                        /* _scale_enum: the ratio anchor's w, h and centre are ws, hs, ctr */
                        for (int z = 0; z < nsizes; z++, k++) {
                                double scale = (double)sizes[z] / s;
                                mkanchor(ws * scale, hs * scale, ctr, ctr, cell + 4 * k);
                        }
                } else {
                        float hr = sqrtf(ratios[r]), wr = 1.0f / hr;
                        for (int z = 0; z < nsizes; z++, k++) {
                                float ws = wr * sizes[z], hs = hr * sizes[z];
                                float *a = cell + 4 * k;
                                a[0] = nearbyintf(-ws / 2);
                                a[1] = nearbyintf(-hs / 2);
                                a[2] = nearbyintf(ws / 2);
                                a[3] = nearbyintf(hs / 2);
                        }
                }
        }
        return k;
}

int64_t det_grid_anchors(const float *cell, int ncell, int H, int W, int stride_y, int stride_x, float *out)
{
        if (ncell < 0 || H < 0 || W < 0)
                return -EINVAL;
        int64_t i = 0;
        for (int y = 0; y < H; y++) {
                float sy = (float)((int64_t)y * stride_y);
                for (int x = 0; x < W; x++) {
                        float sx = (float)((int64_t)x * stride_x);
                        for (int a = 0; a < ncell; a++, i++) {
                                const float *ca = cell + 4 * a;
                                float *o = out + 4 * i;
                                o[0] = sx + ca[0];
                                o[1] = sy + ca[1];
                                o[2] = sx + ca[2];
                                o[3] = sy + ca[3];
                        }
                }
        }
        return i;
}

int64_t det_anchor_visibility(const struct det_conv *c, const float *anchors, int64_t n, float img_w, float img_h,
                              uint8_t *vis)
{
        if (n < 0)
                return -EINVAL;
        int64_t nv = 0;
        float t = c->straddle;
        for (int64_t i = 0; i < n; i++) {
                const float *a = anchors + 4 * i;
                int v = t < 0 || (a[0] >= -t && a[1] >= -t && a[2] < img_w + t && a[3] < img_h + t);
                vis[i] = (uint8_t)v;
                nv += v;
        }
        return nv;
}

/* ---- box coder ---- */

void det_encode(const struct det_conv *c, const struct det_coder *k, const float *gt, const float *props, int64_t n,
                float *codes)
{
        float one = c->plus_one ? 1.0f : 0.0f;
        for (int64_t i = 0; i < n; i++) {
                const float *p = props + 4 * i, *g = gt + 4 * i;
                float pw = p[2] - p[0] + one, ph = p[3] - p[1] + one;
                float pcx = p[0] + 0.5f * pw, pcy = p[1] + 0.5f * ph;
                float gw = g[2] - g[0] + one, gh = g[3] - g[1] + one;
                float gcx = g[0] + 0.5f * gw, gcy = g[1] + 0.5f * gh;
                float *o = codes + 4 * i;
                o[0] = k->wx * (gcx - pcx) / pw;
                o[1] = k->wy * (gcy - pcy) / ph;
                o[2] = k->ww * logf(gw / pw);
                o[3] = k->wh * logf(gh / ph);
        }
}

void det_decode(const struct det_conv *c, const struct det_coder *k, const float *codes, const float *boxes,
                int64_t n, int ncls, float *out)
{
        float one = c->plus_one ? 1.0f : 0.0f;
        for (int64_t i = 0; i < n; i++) {
                const float *b = boxes + 4 * i;
                float w = b[2] - b[0] + one, h = b[3] - b[1] + one;
                float cx = b[0] + 0.5f * w, cy = b[1] + 0.5f * h;
                for (int j = 0; j < ncls; j++) {
                        const float *d = codes + 4 * (i * ncls + j);
                        float *o = out + 4 * (i * ncls + j);
                        float dx = d[0] / k->wx, dy = d[1] / k->wy;
                        float dw = d[2] / k->ww, dh = d[3] / k->wh;
                        /* torch.clamp(max=): NaN stays NaN */
                        if (dw > k->clip)
                                dw = k->clip;
                        if (dh > k->clip)
                                dh = k->clip;
                        float pcx = dx * w + cx, pcy = dy * h + cy;
                        float pw = expf(dw) * w, ph = expf(dh) * h;
                        float hw = 0.5f * pw, hh = 0.5f * ph;
                        o[0] = pcx - hw;
                        o[1] = pcy - hh;
                        o[2] = pcx + hw - one;
                        o[3] = pcy + hh - one;
                }
        }
}

/* ---- IoU ---- */

/* std::max and std::min as torchvision's kernels use them (NaN handling included) */
static inline float smax(float a, float b)
{
        return a < b ? b : a;
}

static inline float smin(float a, float b)
{
        return b < a ? b : a;
}

static inline float box_area(const float *b, float one)
{
        return (b[2] - b[0] + one) * (b[3] - b[1] + one);
}

/* intersection over union; 0 where the union is not > 0 (or NaN) */
static inline float iou1(const float *a, float aa, const float *b, float ab, float one)
{
        float x1 = smax(a[0], b[0]), y1 = smax(a[1], b[1]);
        float x2 = smin(a[2], b[2]), y2 = smin(a[3], b[3]);
        float w = x2 - x1 + one, h = y2 - y1 + one;
        w = w > 0 ? w : 0;
        h = h > 0 ? h : 0;
        float inter = w * h, uni = aa + ab - inter;
        return uni > 0 ? inter / uni : 0.0f;
}

void det_box_iou(const struct det_conv *c, const float *a, int64_t n, const float *b, int64_t m, float *iou)
{
        float one = c->plus_one ? 1.0f : 0.0f;
        for (int64_t i = 0; i < n; i++) {
                float aa = box_area(a + 4 * i, one);
                for (int64_t j = 0; j < m; j++)
                        iou[i * m + j] = iou1(a + 4 * i, aa, b + 4 * j, box_area(b + 4 * j, one), one);
        }
}

/* ---- NMS ---- */

struct order_ent {
        float score;
        int64_t i;
};

/* descending score, NaN first (torch.sort), ties by index: a stable sort */
static int order_cmp(const void *pa, const void *pb)
{
        const struct order_ent *a = pa, *b = pb;
        int na = isnan(a->score), nb = isnan(b->score);
        if (na != nb)
                return na ? -1 : 1;
        if (!na && a->score != b->score)
                return a->score > b->score ? -1 : 1;
        return (a->i > b->i) - (a->i < b->i);
}

static struct order_ent *sorted_order(const float *scores, const int64_t *sel, int64_t n)
{
        struct order_ent *o = xmalloc((size_t)(n ? n : 1) * sizeof(*o));
        for (int64_t k = 0; k < n; k++) {
                int64_t i = sel ? sel[k] : k;
                o[k].score = scores[i];
                o[k].i = i;
        }
        qsort(o, (size_t)n, sizeof(*o), order_cmp);
        return o;
}

/* Greedy NMS over the n boxes sel[0..n) (or 0..n) of boxes; kept indices
 * (into boxes) appended to keep in descending score order. */
static int64_t nms_sel(const struct det_conv *c, const float *boxes, const float *scores, const int64_t *sel,
                       int64_t n, double thr, int64_t *keep)
{
        float one = c->plus_one ? 1.0f : 0.0f, fthr = (float)thr;
        struct order_ent *o = sorted_order(scores, sel, n);
        float *area = xmalloc((size_t)(n ? n : 1) * sizeof(float));
        uint8_t *sup = xcalloc((size_t)(n ? n : 1), 1);
        for (int64_t k = 0; k < n; k++)
                area[k] = box_area(boxes + 4 * o[k].i, one);
        int64_t nk = 0;
        for (int64_t k = 0; k < n; k++) {
                if (sup[k])
                        continue;
                keep[nk++] = o[k].i;
                const float *bi = boxes + 4 * o[k].i;
                for (int64_t l = k + 1; l < n; l++) {
                        if (sup[l])
                                continue;
                        const float *bj = boxes + 4 * o[l].i;
                        float x1 = smax(bi[0], bj[0]), y1 = smax(bi[1], bj[1]);
                        float x2 = smin(bi[2], bj[2]), y2 = smin(bi[3], bj[3]);
                        float w = x2 - x1 + one, h = y2 - y1 + one;
                        w = w > 0 ? w : 0;
                        h = h > 0 ? h : 0;
                        float inter = w * h;
                        float ovr = inter / (area[k] + area[l] - inter);
                        if (c->nms_ge ? ovr >= fthr : (double)ovr > thr)
                                sup[l] = 1;
                }
        }
        free(o);
        free(area);
        free(sup);
        return nk;
}

int64_t det_nms(const struct det_conv *c, const float *boxes, const float *scores, int64_t n, double thr,
                int64_t *keep)
{
        if (n < 0)
                return -EINVAL;
        return nms_sel(c, boxes, scores, NULL, n, thr, keep);
}

static int cmp_i32(const void *pa, const void *pb)
{
        int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
        return (a > b) - (a < b);
}

/* NMS of each class in ascending class order, appended to keep */
static int64_t per_class(const struct det_conv *c, const float *boxes, const float *scores, const int32_t *idx,
                         int64_t n, double thr, int64_t *keep)
{
        int32_t *cls = xmalloc((size_t)n * sizeof(*cls));
        int64_t *sel = xmalloc((size_t)n * sizeof(*sel));
        memcpy(cls, idx, (size_t)n * sizeof(*cls));
        qsort(cls, (size_t)n, sizeof(*cls), cmp_i32);
        int64_t nk = 0;
        for (int64_t u = 0; u < n; u++) {
                if (u > 0 && cls[u] == cls[u - 1])
                        continue;
                int64_t ns = 0;
                for (int64_t i = 0; i < n; i++)
                        if (idx[i] == cls[u])
                                sel[ns++] = i;
                nk += nms_sel(c, boxes, scores, sel, ns, thr, keep + nk);
        }
        free(cls);
        free(sel);
        return nk;
}

int64_t det_batched_nms(const struct det_conv *c, const float *boxes, const float *scores, const int32_t *idx,
                        int64_t n, double thr, int64_t *keep)
{
        if (n < 0)
                return -EINVAL;
        if (n == 0)
                return 0;
        if (c->plus_one)
                return per_class(c, boxes, scores, idx, n, thr, keep);
        if (n * 4 > 4000) {
                /* _batched_nms_vanilla: per class, then all kept by descending score */
                int64_t nk = per_class(c, boxes, scores, idx, n, thr, keep);
                struct order_ent *o = sorted_order(scores, keep, nk);
                for (int64_t k = 0; k < nk; k++)
                        keep[k] = o[k].i;
                free(o);
                return nk;
        }
        /* _batched_nms_coordinate_trick: boxes + idx * (max + 1), in float */
        float mx = boxes[0];
        for (int64_t i = 0; i < 4 * n; i++) {
                if (isnan(boxes[i])) {
                        mx = boxes[i];  /* torch.max propagates NaN */
                        break;
                }
                if (boxes[i] > mx)
                        mx = boxes[i];
        }
        float *shifted = xmalloc((size_t)n * 4 * sizeof(float));
        for (int64_t i = 0; i < n; i++) {
                float off = (float)idx[i] * (mx + 1.0f);
                for (int q = 0; q < 4; q++)
                        shifted[4 * i + q] = boxes[4 * i + q] + off;
        }
        int64_t nk = nms_sel(c, shifted, scores, NULL, n, thr, keep);
        free(shifted);
        return nk;
}

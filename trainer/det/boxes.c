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
#include "boxes-impl.h"

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
                int v = det_visible1(anchors + 4 * i, t, img_w, img_h);
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
        for (int64_t i = 0; i < n; i++)
                det_encode1(gt + 4 * i, props + 4 * i, k->wx, k->wy, k->ww, k->wh, one, codes + 4 * i);
}

void det_decode(const struct det_conv *c, const struct det_coder *k, const float *codes, const float *boxes,
                int64_t n, int ncls, float *out)
{
        float one = c->plus_one ? 1.0f : 0.0f;
        for (int64_t i = 0; i < n; i++)
                for (int j = 0; j < ncls; j++)
                        det_decode1(codes + 4 * (i * ncls + j), boxes + 4 * i, k->wx, k->wy, k->ww, k->wh, k->clip,
                                    one, out + 4 * (i * ncls + j));
}

/* ---- IoU ---- */

void det_box_iou(const struct det_conv *c, const float *a, int64_t n, const float *b, int64_t m, float *iou)
{
        float one = c->plus_one ? 1.0f : 0.0f;
        for (int64_t i = 0; i < n; i++) {
                float aa = det_area(a + 4 * i, one);
                for (int64_t j = 0; j < m; j++)
                        iou[i * m + j] = det_iou1(a + 4 * i, aa, b + 4 * j, det_area(b + 4 * j, one), one);
        }
}

/* ---- NMS ---- */

#define RADIX_BITS 11
#define RADIX_N (1 << RADIX_BITS)

/* stable LSD radix sort of (key, idx) pairs by key; tmp arrays of n each */
static void radix_sort(uint32_t *key, int64_t *idx, uint32_t *tkey, int64_t *tidx, int64_t n)
{
        if (n < 2)
                return;
        int64_t *hist = xcalloc(3 * RADIX_N, sizeof(*hist));
        for (int64_t i = 0; i < n; i++)
                for (int p = 0; p < 3; p++)
                        hist[p * RADIX_N + ((key[i] >> (p * RADIX_BITS)) & (RADIX_N - 1))]++;
        for (int p = 0; p < 3; p++) {
                int64_t *h = hist + p * RADIX_N, sum = 0;
                int shift = p * RADIX_BITS;
                if (h[(key[0] >> shift) & (RADIX_N - 1)] == n)
                        continue;   /* one digit for all: the pass would not move anything */
                for (int b = 0; b < RADIX_N; b++) {
                        int64_t t = h[b];
                        h[b] = sum;
                        sum += t;
                }
                for (int64_t i = 0; i < n; i++) {
                        int64_t d = h[(key[i] >> shift) & (RADIX_N - 1)]++;
                        tkey[d] = key[i];
                        tidx[d] = idx[i];
                }
                memcpy(key, tkey, (size_t)n * sizeof(*key));
                memcpy(idx, tidx, (size_t)n * sizeof(*idx));
        }
        free(hist);
}

void det_argsort_desc(const float *scores, const int64_t *sel, int64_t n, int64_t *order)
{
        if (n <= 0)
                return;
        uint32_t *key = xmalloc(2 * (size_t)n * sizeof(*key));
        int64_t *tidx = xmalloc((size_t)n * sizeof(*tidx));
        for (int64_t k = 0; k < n; k++) {
                int64_t i = sel ? sel[k] : k;
                key[k] = det_desc_key(scores[i]);
                order[k] = i;
        }
        radix_sort(key, order, key + n, tidx, n);
        free(key);
        free(tidx);
}

int64_t det_topk(const float *scores, int64_t n, int64_t k, int64_t *idx)
{
        if (n < 0 || k < 0)
                return -EINVAL;
        if (k > n)
                k = n;
        if (k == 0)
                return 0;
        if (k * 8 >= n) {
                int64_t *all = xmalloc((size_t)n * sizeof(*all));
                det_argsort_desc(scores, NULL, n, all);
                memcpy(idx, all, (size_t)k * sizeof(*idx));
                free(all);
                return k;
        }
        /* the top 11 bits' histogram finds the bucket that holds the k-th
         * key; everything before it and that bucket are sorted, in index
         * order, so ties stay by index */
        uint32_t *key = xmalloc((size_t)n * sizeof(*key));
        int64_t *hist = xcalloc(RADIX_N, sizeof(*hist));
        int shift = 32 - RADIX_BITS;
        for (int64_t i = 0; i < n; i++) {
                key[i] = det_desc_key(scores[i]);
                hist[key[i] >> shift]++;
        }
        int64_t cum = 0;
        uint32_t b = 0;
        while (cum + hist[b] < k)
                cum += hist[b++];
        int64_t m = cum + hist[b], j = 0;
        uint32_t *ck = xmalloc(2 * (size_t)m * sizeof(*ck));
        int64_t *ci = xmalloc(2 * (size_t)m * sizeof(*ci));
        for (int64_t i = 0; i < n; i++)
                if ((key[i] >> shift) <= b) {
                        ck[j] = key[i];
                        ci[j++] = i;
                }
        radix_sort(ck, ci, ck + m, ci + m, m);
        memcpy(idx, ci, (size_t)k * sizeof(*idx));
        free(key);
        free(hist);
        free(ck);
        free(ci);
        return k;
}

/* the largest float <= thr: for a float f, (double)f > thr iff f > it */
static float float_below(double thr)
{
        float f = (float)thr;
        if ((double)f > thr)
                f = nextafterf(f, -INFINITY);
        return f;
}

/* Greedy NMS over the n boxes sel[0..n) (or 0..n) of boxes; kept indices
 * (into boxes) appended to keep in descending score order.  The boxes are
 * sorted once into columns with their areas; each kept box flags the
 * candidates after it that it suppresses in one branch-free (vectorised)
 * pass, and the columns are compacted to the survivors whenever a quarter
 * of the rest is flagged, so later passes visit few suppressed boxes
 * (torchvision's loop branches on every later box). */
static int64_t nms_sel(const struct det_conv *c, const float *boxes, const float *scores, const int64_t *sel,
                       int64_t n, double thr, int64_t *keep)
{
        if (n <= 0)
                return 0;
        float one = c->plus_one ? 1.0f : 0.0f;
        /* suppress when ovr > t, or ovr == t under nms_ge (ovr >= thr in float) */
        float t = c->nms_ge ? (float)thr : float_below(thr);
        int ge = c->nms_ge ? 1 : 0;
        int64_t *id = xmalloc((size_t)n * sizeof(*id));
        float *col = xmalloc(5 * (size_t)n * sizeof(*col));
        float *x1 = col, *y1 = col + n, *x2 = col + 2 * n, *y2 = col + 3 * n, *ar = col + 4 * n;
        uint8_t *rm = xcalloc((size_t)n, 1);
        det_argsort_desc(scores, sel, n, id);
        for (int64_t k = 0; k < n; k++) {
                const float *b = boxes + 4 * id[k];
                x1[k] = b[0];
                y1[k] = b[1];
                x2[k] = b[2];
                y2[k] = b[3];
                ar[k] = det_area(b, one);
        }
        int64_t nk = 0, m = n, nrm = 0;   /* nrm: flagged entries in (p, m) */
        for (int64_t p = 0; p < m; p++) {
                if (rm[p]) {
                        nrm--;
                        continue;
                }
                keep[nk++] = id[p];
                float bx1 = x1[p], by1 = y1[p], bx2 = x2[p], by2 = y2[p], ba = ar[p];
                int64_t cnt = 0;
                #pragma omp simd reduction(+ : cnt)
                for (int64_t l = p + 1; l < m; l++) {
                        float w = det_smin(bx2, x2[l]) - det_smax(bx1, x1[l]) + one;
                        float h = det_smin(by2, y2[l]) - det_smax(by1, y1[l]) + one;
                        w = w > 0 ? w : 0;
                        h = h > 0 ? h : 0;
                        float inter = w * h;
                        float ovr = inter / (ba + ar[l] - inter);
                        int s = (ovr > t) | (ge & (ovr == t));
                        cnt += s & !rm[l];
                        rm[l] |= (uint8_t)s;
                }
                nrm += cnt;
                if (nrm * 4 > m - p) {
                        int64_t j = p + 1;
                        for (int64_t l = p + 1; l < m; l++) {
                                x1[j] = x1[l];
                                y1[j] = y1[l];
                                x2[j] = x2[l];
                                y2[j] = y2[l];
                                ar[j] = ar[l];
                                id[j] = id[l];
                                j += !rm[l];
                        }
                        memset(rm + p + 1, 0, (size_t)(m - p - 1));
                        m = j;
                        nrm = 0;
                }
        }
        free(id);
        free(col);
        free(rm);
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

void det_shift_by_class(const float *boxes, const int32_t *idx, int64_t n, float *out)
{
        if (n <= 0)
                return;
        float mx = boxes[0];
        for (int64_t i = 0; i < 4 * n; i++) {
                if (isnan(boxes[i])) {
                        mx = boxes[i];  /* torch.max propagates NaN */
                        break;
                }
                if (boxes[i] > mx)
                        mx = boxes[i];
        }
        for (int64_t i = 0; i < n; i++) {
                float off = (float)idx[i] * (mx + 1.0f);
                for (int q = 0; q < 4; q++)
                        out[4 * i + q] = boxes[4 * i + q] + off;
        }
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
                int64_t *o = xmalloc((size_t)(nk ? nk : 1) * sizeof(*o));
                det_argsort_desc(scores, keep, nk, o);
                memcpy(keep, o, (size_t)nk * sizeof(*o));
                free(o);
                return nk;
        }
        /* _batched_nms_coordinate_trick */
        float *shifted = xmalloc((size_t)n * 4 * sizeof(float));
        det_shift_by_class(boxes, idx, n, shifted);
        int64_t nk = nms_sel(c, shifted, scores, NULL, n, thr, keep);
        free(shifted);
        return nk;
}

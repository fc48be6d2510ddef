/* postprocess-impl.h: the per-element arithmetic of postprocess.h, shared
 * by postprocess.c (host) and postprocess.cu (device) so that both round the
 * same operations the same way.  Included with DET_HD defined as the
 * functions' qualifiers; on the device every float operation goes through
 * an _rn intrinsic (nvcc would otherwise fuse multiply-adds), on the host
 * the includer turns contraction off.
 */
#ifndef BD_DET_POSTPROCESS_IMPL_H
#define BD_DET_POSTPROCESS_IMPL_H

#ifdef __CUDA_ARCH__
#define DET_MUL(a, b) __fmul_rn((a), (b))
#define DET_ADD(a, b) __fadd_rn((a), (b))
#define DET_SUB(a, b) __fsub_rn((a), (b))
#else
#define DET_MUL(a, b) ((a) * (b))
#define DET_ADD(a, b) ((a) + (b))
#define DET_SUB(a, b) ((a) - (b))
#endif

/* expanded boxes beyond this are bad input (masks paste nothing) */
#define DET_PASTE_MAX 1073741824.0f

/* Softmax of a row of K logits: *mx its max (NaN if any is NaN, as torch's
 * max), returns 1 / sum exp(l - mx); score j = exp(l[j] - mx) * that. */
DET_HD float det_softmax_inv(const float *l, int K, float *mx)
{
        float m = l[0];
        for (int j = 1; j < K; j++)
                if (l[j] > m || l[j] != l[j])
                        m = l[j];
        float s = 0;
        for (int j = 0; j < K; j++)
                s = DET_ADD(s, expf(DET_SUB(l[j], m)));
        *mx = m;
        return 1.0f / s;
}

/* One class's box: deltas d (4) on proposal b (4) as det_decode (BoxCoder
 * decode_single), then clamped to [0, wmax] x [0, hmax] (NaN stays). */
DET_HD void det_decode_clip(float one, const struct det_coder *k, const float *d, const float *b, float wmax,
                            float hmax, float *o)
{
        float w = DET_ADD(DET_SUB(b[2], b[0]), one), h = DET_ADD(DET_SUB(b[3], b[1]), one);
        float cx = DET_ADD(b[0], DET_MUL(0.5f, w)), cy = DET_ADD(b[1], DET_MUL(0.5f, h));
        float dx = d[0] / k->wx, dy = d[1] / k->wy, dw = d[2] / k->ww, dh = d[3] / k->wh;
        if (dw > k->clip)
                dw = k->clip;
        if (dh > k->clip)
                dh = k->clip;
        float pcx = DET_ADD(DET_MUL(dx, w), cx), pcy = DET_ADD(DET_MUL(dy, h), cy);
        float hw = DET_MUL(0.5f, DET_MUL(expf(dw), w)), hh = DET_MUL(0.5f, DET_MUL(expf(dh), h));
        float v[4] = { DET_SUB(pcx, hw), DET_SUB(pcy, hh), DET_SUB(DET_ADD(pcx, hw), one),
                       DET_SUB(DET_ADD(pcy, hh), one) };
        for (int q = 0; q < 4; q++) {
                float mx = q & 1 ? hmax : wmax, x = v[q];
                x = x < 0 ? 0 : x;
                o[q] = x > mx ? mx : x;
        }
}

/* expand_boxes by (M + 2) / M about the centre, truncated to integers (ib:
 * x1 y1 x2 y2); 0 when a coordinate is not finite or beyond DET_PASTE_MAX. */
DET_HD int det_paste_box(const float *b, int M, int64_t *ib)
{
        float scale = (float)((double)(M + 2) / M);
        float wh = DET_MUL(DET_SUB(b[2], b[0]), 0.5f), hh = DET_MUL(DET_SUB(b[3], b[1]), 0.5f);
        float xc = DET_MUL(DET_ADD(b[2], b[0]), 0.5f), yc = DET_MUL(DET_ADD(b[3], b[1]), 0.5f);
        wh = DET_MUL(wh, scale);
        hh = DET_MUL(hh, scale);
        float e[4] = { DET_SUB(xc, wh), DET_SUB(yc, hh), DET_ADD(xc, wh), DET_ADD(yc, hh) };
        for (int q = 0; q < 4; q++) {
                if (!(e[q] > -DET_PASTE_MAX && e[q] < DET_PASTE_MAX))
                        return 0;
                ib[q] = (int64_t)e[q];
        }
        return 1;
}

/* torch's bilinear source taps (align_corners False) of output i of n from
 * an axis of m: indices i0, i1 and weights l0, l1. */
DET_HD void det_taps(int64_t m, int64_t n, int64_t i, int64_t *i0, int64_t *i1, float *l0, float *l1)
{
        float scale = (float)m / (float)n;
        float src = DET_SUB(DET_MUL(scale, DET_ADD((float)i, 0.5f)), 0.5f);
        if (src < 0)
                src = 0;
        *i0 = (int64_t)src;
        *i1 = *i0 + (*i0 < m - 1 ? 1 : 0);
        float l = DET_SUB(src, (float)*i0);
        l = l < 0 ? 0 : l > 1 ? 1 : l;
        *l1 = l;
        *l0 = DET_SUB(1.0f, l);
}

/* the mask (M x M) padded with a ring of zeros, at (y, x) of M + 2 */
DET_HD float det_padded(const float *mask, int M, int64_t y, int64_t x)
{
        return y >= 1 && y <= M && x >= 1 && x <= M ? mask[(y - 1) * M + (x - 1)] : 0.0f;
}

/* The pasted value at image pixel (y, x), inside the clipped expanded box ib. */
DET_HD float det_paste_px(const float *mask, int M, const int64_t *ib, int64_t y, int64_t x)
{
        int64_t w = ib[2] - ib[0] + 1, h = ib[3] - ib[1] + 1;
        w = w > 1 ? w : 1;
        h = h > 1 ? h : 1;
        int64_t x0, x1, y0, y1;
        float wx0, wx1, wy0, wy1;
        det_taps(M + 2, w, x - ib[0], &x0, &x1, &wx0, &wx1);
        det_taps(M + 2, h, y - ib[1], &y0, &y1, &wy0, &wy1);
        float t0 = DET_ADD(DET_MUL(det_padded(mask, M, y0, x0), wx0), DET_MUL(det_padded(mask, M, y0, x1), wx1));
        float t1 = DET_ADD(DET_MUL(det_padded(mask, M, y1, x0), wx0), DET_MUL(det_padded(mask, M, y1, x1), wx1));
        return DET_ADD(DET_MUL(t0, wy0), DET_MUL(t1, wy1));
}

/* the image rectangle [x0, x1) x [y0, y1) the expanded box ib pastes into */
DET_HD void det_paste_clip(const int64_t *ib, int H, int W, int64_t *r)
{
        r[0] = ib[0] > 0 ? ib[0] : 0;
        r[1] = ib[1] > 0 ? ib[1] : 0;
        r[2] = ib[2] + 1 < W ? ib[2] + 1 : W;
        r[3] = ib[3] + 1 < H ? ib[3] + 1 : H;
}

#endif

/* resample.c: resampling, colour jitter and normalisation of one image.
 *
 * The loops use 4-wide vectors (GCC and clang vector extensions: SSE2 on
 * x86-64, NEON on arm64) so that the speed does not depend on the compiler's
 * auto-vectoriser, which GCC runs at -O2 only for trivial loops.  Pixels are
 * floats in [0, 1] from the horizontal pass on, in three planes, so every
 * colour operation is a straight loop over whole vectors.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "augment.h"
#include "macro.h"

/* On x86-64, the two big loops are also compiled for AVX2 (VEX encoding,
 * wider registers for the compiler's own choices) and picked at run time:
 * about a fifth faster where the CPU has it, the same numbers. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define MULTIVERSION __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef MULTIVERSION
#define MULTIVERSION
#endif

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef uint8_t v4b __attribute__((vector_size(4)));

static inline v4f ld(const float *p)
{
        v4f v;
        memcpy(&v, p, sizeof(v));
        return v;
}

static inline void st(float *p, v4f v)
{
        memcpy(p, &v, sizeof(v));
}

/* 16 bytes to 4 vectors of floats */
static inline void ld8x16(const uint8_t *p, v4f *ret)
{
#ifdef __SSE2__
        /* GCC widens byte vectors one element at a time: unpack with zeros instead */
        __m128i b = _mm_loadu_si128((const __m128i *)p), z = _mm_setzero_si128();
        __m128i lo = _mm_unpacklo_epi8(b, z), hi = _mm_unpackhi_epi8(b, z);
        ret[0] = (v4f)_mm_cvtepi32_ps(_mm_unpacklo_epi16(lo, z));
        ret[1] = (v4f)_mm_cvtepi32_ps(_mm_unpackhi_epi16(lo, z));
        ret[2] = (v4f)_mm_cvtepi32_ps(_mm_unpacklo_epi16(hi, z));
        ret[3] = (v4f)_mm_cvtepi32_ps(_mm_unpackhi_epi16(hi, z));
#else
        for (int i = 0; i < 4; i++) {
                v4b b;
                memcpy(&b, p + 4 * i, sizeof(b));
                ret[i] = __builtin_convertvector(b, v4f);
        }
#endif
}

static inline v4f splat(float f)
{
        return (v4f){ f, f, f, f };
}

static inline v4f sel(v4i m, v4f a, v4f b)
{
        return (v4f)((m & (v4i)a) | (~m & (v4i)b));
}

/* a < b ? a : b and a > b ? a : b, as minps and maxps compute them */
static inline v4f vmin(v4f a, v4f b)
{
#ifdef __SSE2__
        return (v4f)_mm_min_ps((__m128)a, (__m128)b);
#else
        return sel(a < b, a, b);
#endif
}

static inline v4f vmax(v4f a, v4f b)
{
#ifdef __SSE2__
        return (v4f)_mm_max_ps((__m128)a, (__m128)b);
#else
        return sel(a > b, a, b);
#endif
}

static inline v4f clamp01(v4f v)
{
        return vmin(vmax(v, splat(0.f)), splat(1.f));
}

void ssd_scratch_release(struct ssd_scratch *s)
{
        free(s->tmp);
        free(s->hwc);
        free(s->hx);
        free(s->hn);
        free(s->hw);
        free(s->vy);
        free(s->vn);
        free(s->vw);
        memset(s, 0, sizeof(*s));
}

/* ---- filter coefficients ---------------------------------------------------------------- */

static double bilinear(double x)
{
        if (x < 0)
                x = -x;
        return x < 1 ? 1 - x : 0;
}

/* PIL's precompute_coeffs for the bilinear filter: for each output position,
 * the first source index, the number of taps and kmax weights (normalised,
 * times gain). */
int ssd_bilinear_coeffs(double in0, double in1, int in_size, int out_size, float gain, int32_t **first,
                        int32_t **count, float **w, size_t *cap)
{
        double scale = (in1 - in0) / out_size;
        double filterscale = scale < 1.0 ? 1.0 : scale;
        double support = 1.0 * filterscale;
        int kmax = (int)ceil(support) * 2 + 1;
        if (kmax > 64)
                kmax = 64;      /* shrinking by more than 30x: not in our use */
        size_t need = (size_t)out_size * (size_t)kmax;
        if (need > *cap || !*first) {
                free(*first);
                free(*count);
                free(*w);
                /* need >= out_size: one capacity fits the three arrays */
                *cap = need;
                *first = xmalloc(need * sizeof(int32_t));
                *count = xmalloc(need * sizeof(int32_t));
                *w = xmalloc(need * sizeof(float));
        }
        for (int xx = 0; xx < out_size; xx++) {
                double center = in0 + (xx + 0.5) * scale;
                double ss = 1.0 / filterscale;
                int xmin = (int)(center - support + 0.5);
                if (xmin < 0)
                        xmin = 0;
                int xmax = (int)(center + support + 0.5);
                if (xmax > in_size)
                        xmax = in_size;
                xmax -= xmin;
                if (xmax < 1) {         /* degenerate: the nearest pixel */
                        xmin = xmin >= in_size ? in_size - 1 : xmin;
                        xmax = 1;
                }
                if (xmax > kmax)
                        xmax = kmax;
                double k[64], ww = 0;
                for (int x = 0; x < xmax; x++) {
                        k[x] = bilinear((x + xmin - center + 0.5) * ss);
                        ww += k[x];
                }
                float *o = *w + (size_t)xx * (size_t)kmax;
                for (int x = 0; x < xmax; x++)
                        o[x] = (float)(ww != 0.0 ? k[x] / ww * gain : (x == 0 ? gain : 0));
                (*first)[xx] = xmin;
                (*count)[xx] = xmax;
        }
        return kmax;
}

static float *ensure(float **p, size_t *cap, size_t n)
{
        if (n > *cap) {
                free(*p);
                *cap = n;
                *p = xmalloc(n * sizeof(float));
        }
        return *p;
}

/* ---- colour operations, on 4 pixels at a time ------------------------------------------- */

static inline v4f luma(v4f r, v4f g, v4f b)
{
        return splat(0.299f) * r + splat(0.587f) * g + splat(0.114f) * b;
}

/* HSV to RGB, one channel: v - c * clamp(min(k, 4 - k), 0, 1), k = (n + h) mod 6 */
static inline v4f hsv_channel(float n, v4f h, v4f v, v4f c)
{
        v4f k = splat(n) + h;
        k = sel(k >= splat(6.f), k - splat(6.f), k);
        v4f t = vmin(k, splat(4.f) - k);
        return v - c * clamp01(t);
}

/* Rotates the hue by shift / 6 turns: RGB -> HSV, H += shift, HSV -> RGB. */
__attribute__((always_inline)) static inline void hue(v4f *r, v4f *g, v4f *b, v4f shift)
{
        v4f R = *r, G = *g, B = *b;
        v4f mx = vmax(R, vmax(G, B)), mn = vmin(R, vmin(G, B)), c = mx - mn;
        v4f inv = splat(1.f) / vmax(c, splat(1e-20f));  /* c == 0: grey, the hue does not matter */
        v4f hr = (G - B) * inv, hg = (B - R) * inv + splat(2.f), hb = (R - G) * inv + splat(4.f);
        v4f h = sel(mx == R, hr, sel(mx == G, hg, hb)) + shift;
        h = sel(h < splat(0.f), h + splat(6.f), h);
        h = sel(h >= splat(6.f), h - splat(6.f), h);
        *r = hsv_channel(5.f, h, mx, c);
        *g = hsv_channel(3.f, h, mx, c);
        *b = hsv_channel(1.f, h, mx, c);
}

/* One jitter operation with its factor (the contrast's term (1 - f) * mean
 * in m), each clamped to [0, 1] as PIL's uint8 images are. */
__attribute__((always_inline)) static inline void apply_op(int op, v4f f, v4f m, v4f *r, v4f *g, v4f *b)
{
        switch (op) {
        case JIT_BRIGHTNESS:
                *r = clamp01(*r * f);
                *g = clamp01(*g * f);
                *b = clamp01(*b * f);
                break;
        case JIT_CONTRAST:
                *r = clamp01(f * *r + m);
                *g = clamp01(f * *g + m);
                *b = clamp01(f * *b + m);
                break;
        case JIT_SATURATION: {
                v4f gray = (splat(1.f) - f) * luma(*r, *g, *b);
                *r = clamp01(f * *r + gray);
                *g = clamp01(f * *g + gray);
                *b = clamp01(f * *b + gray);
                break;
        }
        case JIT_HUE:
                hue(r, g, b, f);
                break;
        }
}

/* The jitter as two passes over the planes: the operations before the
 * contrast, summing the grey level they leave (the contrast's mean); then
 * the contrast, the operations after it and the normalisation into out. */
MULTIVERSION static void jitter_normalise(float *pr, float *pg, float *pb, size_t npix, size_t n4, const struct ssd_jitter *j,
                             const struct ssd_norm *norm, float *out)
{
        int ops[4], nops = 0, ci = 0;
        v4f f[4];
        if (j && j->on) {
                for (int i = 0; i < 4; i++) {
                        ops[nops] = j->order[i];
                        float v = j->order[i] == JIT_BRIGHTNESS ? j->brightness
                                : j->order[i] == JIT_CONTRAST   ? j->contrast
                                : j->order[i] == JIT_SATURATION ? j->saturation
                                                                : 6.f * j->hue;
                        f[nops] = splat(v);
                        if (j->order[i] == JIT_CONTRAST)
                                ci = nops;
                        nops++;
                }
        }
        v4f m = splat(0.f);
        if (nops) {
                /* padding pixels are 0 and stay 0 through these operations */
                v4f acc = splat(0.f);
                double sum = 0;
                for (size_t i = 0; i < n4; i += 4) {
                        v4f r = ld(pr + i), g = ld(pg + i), b = ld(pb + i);
                        for (int k = 0; k < ci; k++)
                                apply_op(ops[k], f[k], m, &r, &g, &b);
                        if (ci) {
                                st(pr + i, r);
                                st(pg + i, g);
                                st(pb + i, b);
                        }
                        acc += luma(r, g, b);
                        if ((i & 4095) == 4092) {       /* float partial sums stay short */
                                sum += (double)acc[0] + acc[1] + acc[2] + acc[3];
                                acc = splat(0.f);
                        }
                }
                sum += (double)acc[0] + acc[1] + acc[2] + acc[3];
                float mean = (float)(sum / (double)npix);
                m = (splat(1.f) - f[ci]) * splat(mean);
        }
        v4f vm[3], vs[3];
        for (int c = 0; c < 3; c++) {
                vm[c] = splat(norm->mean[c]);
                vs[c] = splat(1.f / norm->std[c]);
        }
        float *o0 = out, *o1 = out + npix, *o2 = out + 2 * npix;
        for (size_t i = 0; i < n4; i += 4) {
                v4f r = ld(pr + i), g = ld(pg + i), b = ld(pb + i);
                for (int k = ci; k < nops; k++)
                        apply_op(ops[k], f[k], m, &r, &g, &b);
                r = (r - vm[0]) * vs[0];
                g = (g - vm[1]) * vs[1];
                b = (b - vm[2]) * vs[2];
                if (i + 4 <= npix) {
                        st(o0 + i, r);
                        st(o1 + i, g);
                        st(o2 + i, b);
                } else {        /* the planes of out are adjacent: no store past npix */
                        for (size_t k = 0; i + k < npix; k++) {
                                o0[i + k] = r[k];
                                o1[i + k] = g[k];
                                o2[i + k] = b[k];
                        }
                }
        }
}

/* ---- the whole image ------------------------------------------------------------------------ */

/* static: clang dispatches target_clones only inside the translation unit */
MULTIVERSION static void render(struct ssd_scratch *s, const uint8_t *src, size_t stride, int src_w, int src_h,
                                double sx0, double sy0, double sx1, double sy1, bool flip,
                                const struct ssd_jitter *jitter, const struct ssd_norm *norm, int out_w, int out_h,
                                float *out)
{
        int hk = ssd_bilinear_coeffs(sx0, sx1, src_w, out_w, 1.f / 255.f, &s->hx, &s->hn, &s->hw, &s->hcap);
        int vk = ssd_bilinear_coeffs(sy0, sy1, src_h, out_h, 1.f, &s->vy, &s->vn, &s->vw, &s->vcap);
        /* source columns the horizontal pass reads */
        int c0 = src_w, c1 = 0;
        for (int x = 0; x < out_w; x++) {
                if (s->hx[x] < c0)
                        c0 = s->hx[x];
                if (s->hx[x] + s->hn[x] > c1)
                        c1 = s->hx[x] + s->hn[x];
        }
        size_t span = (size_t)(c1 - c0) * 3, tspan = span + 4;        /* +4: the last pixel's 4-wide load */
        float *tmp = ensure(&s->tmp, &s->tmp_cap, tspan * (size_t)out_h);
        size_t npix = (size_t)out_w * (size_t)out_h, n4 = (npix + 3) & ~(size_t)3;
        float *pl = ensure(&s->hwc, &s->hwc_cap, 3 * n4);
        float *pr = pl, *pg = pl + n4, *pb = pl + 2 * n4;

        /* vertical, on the 8-bit source: out_h rows of the needed columns, interleaved */
        for (int y = 0; y < out_h; y++) {
                float *t = tmp + (size_t)y * tspan;
                const float *w = s->vw + (size_t)y * (size_t)vk;
                const uint8_t *row = src + (size_t)s->vy[y] * stride + (size_t)c0 * 3;
                int n = s->vn[y];
                size_t i = 0;
                for (; i + 16 <= span; i += 16) {
                        v4f x[4];
                        ld8x16(row + i, x);
                        v4f wk = splat(w[0]);
                        /* four named accumulators: GCC keeps an array of them in memory */
                        v4f a0 = wk * x[0], a1 = wk * x[1], a2 = wk * x[2], a3 = wk * x[3];
                        for (int k = 1; k < n; k++) {
                                ld8x16(row + (size_t)k * stride + i, x);
                                wk = splat(w[k]);
                                a0 += wk * x[0];
                                a1 += wk * x[1];
                                a2 += wk * x[2];
                                a3 += wk * x[3];
                        }
                        st(t + i, a0);
                        st(t + i + 4, a1);
                        st(t + i + 8, a2);
                        st(t + i + 12, a3);
                }
                for (; i < span; i++) {
                        float acc = 0;
                        for (int k = 0; k < n; k++)
                                acc += w[k] * row[(size_t)k * stride + i];
                        t[i] = acc;
                }
                st(t + span, splat(0.f));
        }
        /* horizontal, mirrored when flipping, into planes; the weights scale to [0, 1] */
        for (int y = 0; y < out_h; y++) {
                const float *t = tmp + (size_t)y * tspan;
                size_t o = (size_t)y * (size_t)out_w;
                for (int x = 0; x < out_w; x++) {
                        const float *w = s->hw + (size_t)x * (size_t)hk;
                        const float *p = t + (size_t)(s->hx[x] - c0) * 3;
                        v4f acc = splat(w[0]) * ld(p);
                        for (int k = 1; k < s->hn[x]; k++)
                                acc += splat(w[k]) * ld(p + 3 * k);
                        acc = clamp01(acc);
                        size_t q = o + (size_t)(flip ? out_w - 1 - x : x);
                        pr[q] = acc[0];
                        pg[q] = acc[1];
                        pb[q] = acc[2];
                }
        }
        for (size_t i = npix; i < n4; i++)
                pr[i] = pg[i] = pb[i] = 0;
        jitter_normalise(pr, pg, pb, npix, n4, jitter, norm, out);
}

void ssd_render(struct ssd_scratch *s, const uint8_t *src, size_t stride, int src_w, int src_h, double sx0,
                double sy0, double sx1, double sy1, bool flip, const struct ssd_jitter *jitter,
                const struct ssd_norm *norm, int out_w, int out_h, float *out)
{
        render(s, src, stride, src_w, src_h, sx0, sy0, sx1, sy1, flip, jitter, norm, out_w, out_h, out);
}

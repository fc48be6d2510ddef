/* det-render.c: the Mask R-CNN pipeline's geometry (sizes, ratios, boxes,
 * flips), its rendering (resize, mirror, normalise and pad in one go) and
 * the resampling of RLE masks.  See det-render.h for the conventions.
 *
 * Rendering is separable, horizontal pass first, as PIL computes (torch
 * sums the four taps at once: see det-render.h): each source row that a
 * vertical tap needs is converted to floats (RGBX), filtered horizontally
 * into three planar rows (mirrored when flipping) kept in a small ring,
 * and each output row is the vertical combination of ring rows, normalised
 * and written straight into the batch with the padding: the output (10 MB
 * of floats for an 800x1066 image) is written once, with non-temporal
 * stores where the rows are aligned, and the rest stays in the first two
 * cache levels.  On x86-64 the
 * two passes have AVX2 versions picked at run time; elsewhere (and without
 * AVX2) 4-wide vector code does the same sums in the same order.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "augment.h"
#include "det-render.h"
#include "mask.h"
#include "macro.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2_PATH 1
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2")))
#else
#define HAVE_AVX2_PATH 0
#endif

/* ---- geometry -------------------------------------------------------------------------------- */

void det_resize_size(enum det_convention c, int w, int h, int min_size, int max_size, int *ret_w, int *ret_h)
{
        int mn = w < h ? w : h, mx = w < h ? h : w;
        if (c == DET_MLPERF) {
                /* maskrcnn_benchmark's Resize.get_size, Python's arithmetic: doubles,
                 * round() to even, int() truncating */
                int size = min_size;
                if ((double)mx / (double)mn * size > max_size)
                        size = (int)nearbyint((double)max_size * (double)mn / (double)mx);
                if ((w <= h && w == size) || (h <= w && h == size)) {
                        *ret_w = w;
                        *ret_h = h;
                } else if (w < h) {
                        *ret_w = size;
                        *ret_h = (int)((double)((long)size * h) / (double)w);
                } else {
                        *ret_h = size;
                        *ret_w = (int)((double)((long)size * w) / (double)h);
                }
                return;
        }
        /* torchvision: scale = min(min_size / short, max_size / long) on float32
         * tensors (Python's number / tensor is tensor.reciprocal() * number),
         * then F.interpolate's floor(side * scale) in doubles */
        float s1 = (1.0f / (float)mn) * (float)min_size;
        float s2 = (1.0f / (float)mx) * (float)max_size;
        double scale = s1 < s2 ? s1 : s2;
        *ret_w = (int)floor((double)w * scale);
        *ret_h = (int)floor((double)h * scale);
}

float det_resize_ratio(enum det_convention c, int old_size, int new_size)
{
        if (c == DET_MLPERF)
                return (float)((double)new_size / (double)old_size);    /* a double, cast by the multiply */
        return (float)new_size / (float)old_size;
}

static inline float clampf(float v, float lo, float hi)
{
        /* torch.clamp: min(max(v, lo), hi) */
        v = v < lo ? lo : v;
        return v > hi ? hi : v;
}

bool det_convert_box(enum det_convention c, const double bbox[4], int w, int h, float ret[4])
{
        float x = (float)bbox[0], y = (float)bbox[1], bw = (float)bbox[2], bh = (float)bbox[3];
        float x2, y2, W, H;
        if (c == DET_MLPERF) {
                /* xywh to xyxy with TO_REMOVE = 1, clip_to_image to size - 1 */
                float dw = bw - 1.0f, dh = bh - 1.0f;
                x2 = x + (dw < 0 ? 0.0f : dw);
                y2 = y + (dh < 0 ? 0.0f : dh);
                W = (float)(w - 1);
                H = (float)(h - 1);
        } else {
                x2 = x + bw;
                y2 = y + bh;
                W = (float)w;
                H = (float)h;
        }
        ret[0] = clampf(x, 0, W);
        ret[1] = clampf(y, 0, H);
        ret[2] = clampf(x2, 0, W);
        ret[3] = clampf(y2, 0, H);
        return ret[3] > ret[1] && ret[2] > ret[0];
}

/* W - 1 - x (MLPerf) or W - x (torchvision): exact for float-valued x */
static inline double flip_origin(enum det_convention c, int width)
{
        return c == DET_MLPERF ? (double)width - 1.0 : (double)width;
}

void det_flip_boxes(enum det_convention c, int width, double *boxes, size_t n)
{
        double o = flip_origin(c, width);
        for (size_t i = 0; i < n; i++) {
                double *b = boxes + 4 * i;
                double x1 = o - b[2], x2 = o - b[0];
                b[0] = x1;
                b[2] = x2;
        }
}

void det_flip_xy(enum det_convention c, int width, double *xy, size_t n_points)
{
        double o = flip_origin(c, width);
        for (size_t i = 0; i < n_points; i++)
                xy[2 * i] = o - xy[2 * i];
}

/* ---- resampling coefficients ------------------------------------------------------------------- */

/* torch's upsample_bilinear2d (align_corners False) for one axis: two taps,
 * at first and first + 1 (the caller repeats the last sample past the end,
 * which is torch's index clamp).  The arithmetic is torch 1.13's on the
 * CPU: a float scale in / out, the source position (dst + 0.5) * scale - 0.5
 * in doubles, the second weight rounded from it to float, the first 1 minus
 * that in float. */
static void torch_coeffs(int in, int out, int32_t *first, int32_t *count, float *w)
{
        float scale = (float)in / (float)out;
        for (int i = 0; i < out; i++) {
                count[i] = 2;
                if (in == out) {
                        first[i] = i;
                        w[2 * i] = 1;
                        w[2 * i + 1] = 0;
                        continue;
                }
                double src = (double)scale * (i + 0.5) - 0.5;
                if (src < 0)
                        src = 0;
                int i0 = (int)floor(src);
                if (i0 > in - 1)
                        i0 = in - 1;
                double l1 = src - i0;
                l1 = l1 < 0 ? 0 : l1 > 1 ? 1 : l1;
                first[i] = i0;
                w[2 * i + 1] = (float)l1;
                w[2 * i] = 1.0f - (float)l1;
        }
}

/* The tables of one axis in s: first, count, kmax weights; returns kmax. */
static int axis_coeffs(enum det_convention c, int in, int out, int32_t **first, int32_t **count, float **w,
                       size_t *cap)
{
        if (c == DET_MLPERF)
                return ssd_bilinear_coeffs(0, in, in, out, 1.0f, first, count, w, cap);
        size_t need = 2 * (size_t)out;
        if (need > *cap || !*first) {
                free(*first);
                free(*count);
                free(*w);
                *cap = need;
                *first = xmalloc(need * sizeof(int32_t));
                *count = xmalloc(need * sizeof(int32_t));
                *w = xmalloc(need * sizeof(float));
        }
        torch_coeffs(in, out, *first, *count, *w);
        return 2;
}

void det_render_scratch_release(struct det_render_scratch *s)
{
        free(s->row);
        free(s->ring);
        free(s->hw);
        free(s->hw8);
        free(s->vw);
        free(s->hx);
        free(s->hn);
        free(s->vy);
        free(s->vn);
        memset(s, 0, sizeof(*s));
}

static const float mlperf_mean_bgr[3] = { 102.9801f, 115.9465f, 122.7717f };
static const float tv_mean[3] = { 0.485f, 0.456f, 0.406f }, tv_std[3] = { 0.229f, 0.224f, 0.225f };

/* ---- the two passes, portable ------------------------------------------------------------------- */

typedef float v4f __attribute__((vector_size(16)));

static inline v4f ld4(const float *p)
{
        v4f v;
        memcpy(&v, p, sizeof(v));
        return v;
}

static inline void st4(float *p, v4f v)
{
        memcpy(p, &v, sizeof(v));
}

static inline v4f splat4(float f)
{
        return (v4f){ f, f, f, f };
}

/* Source pixels [i, w) of a row (RGB) to RGBX floats, then the last pixel
 * repeated once past the end and 4 zeros. */
static void row_to_float(const uint8_t *src, int i, int w, float *row)
{
        for (; i < w; i++) {
                row[4 * i] = src[3 * i];
                row[4 * i + 1] = src[3 * i + 1];
                row[4 * i + 2] = src[3 * i + 2];
                row[4 * i + 3] = 0;
        }
        memcpy(row + 4 * (size_t)w, row + 4 * (size_t)(w - 1), 4 * sizeof(float));
        memset(row + 4 * (size_t)w + 4, 0, 4 * sizeof(float));
}

/* Horizontal filter of an RGBX row into three planar rows (mirrored when flip). */
static void hpass_generic(const float *row, const int32_t *hx, const int32_t *hn, const float *hw, int kmax,
                          int out_w, bool flip, float *r, float *g, float *b)
{
        for (int x = 0; x < out_w; x++) {
                const float *w = hw + (size_t)x * (size_t)kmax;
                const float *p = row + 4 * (size_t)hx[x];
                v4f acc = splat4(w[0]) * ld4(p);
                for (int k = 1; k < hn[x]; k++)
                        acc += splat4(w[k]) * ld4(p + 4 * k);
                int q = flip ? out_w - 1 - x : x;
                r[q] = acc[0];
                g[q] = acc[1];
                b[q] = acc[2];
        }
}

/* How an output plane is normalised from its filtered values (0..255):
 * clamped to 0..255 (MLPerf: PIL's 8-bit range), times scale, plus bias. */
struct norm {
        bool clamp;
        float scale, bias;
};

static void store_row_tail(float *out, int x, int out_w, int pad_w, const float *vals)
{
        for (int k = 0; x + k < pad_w && k < 4; k++)
                out[x + k] = x + k < out_w ? vals[k] : 0.0f;
}

/* One output row of one plane: the vertical filter of n ring rows, the
 * normalisation, zeros from out_w to pad_w. */
static void vpass_generic(const float *const *rows, const float *w, int n, int out_w, int pad_w, struct norm nm,
                          float *out)
{
        int x = 0;
        for (; x < out_w; x += 4) {
                v4f acc = splat4(w[0]) * ld4(rows[0] + x);
                for (int k = 1; k < n; k++)
                        acc += splat4(w[k]) * ld4(rows[k] + x);
                float v[4];
                for (int k = 0; k < 4; k++)
                        v[k] = (nm.clamp ? clampf(acc[k], 0, 255) : acc[k]) * nm.scale + nm.bias;
                if (x + 4 <= out_w && x + 4 <= pad_w)
                        st4(out + x, (v4f){ v[0], v[1], v[2], v[3] });
                else
                        store_row_tail(out, x, out_w, pad_w, v);
        }
        for (; x < pad_w; x++)
                out[x] = 0;
}

/* ---- the two passes, AVX2 -------------------------------------------------------------------------- */

#if HAVE_AVX2_PATH
AVX2 static void row_to_float_avx2(const uint8_t *src, int w, float *row)
{
        const __m128i spread = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
        int i = 0;
        /* 4 pixels from a 16-byte load: 4 bytes past them must be in the row */
        for (; i + 6 <= w; i += 4) {
                __m128i v = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(src + 3 * i)), spread);
                _mm256_storeu_ps(row + 4 * i, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v)));
                _mm256_storeu_ps(row + 4 * i + 8, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(v, 8))));
        }
        row_to_float(src, i, w, row);
}

/* Two taps at first and first + 1: one 8-float load covers both; hw8 holds
 * (w0 x4, w1 x4) per output.  Four outputs are summed and transposed into
 * the three planes together. */
AVX2 static void hpass2_avx2(const float *row, const int32_t *hx, const float *hw8, int out_w, bool flip, float *r,
                             float *g, float *b)
{
        int x = 0;
        for (; x + 4 <= out_w; x += 4) {
                __m256 p0 = _mm256_mul_ps(_mm256_loadu_ps(row + 4 * hx[x]), _mm256_load_ps(hw8 + 8 * x));
                __m256 p1 = _mm256_mul_ps(_mm256_loadu_ps(row + 4 * hx[x + 1]), _mm256_load_ps(hw8 + 8 * x + 8));
                __m256 p2 = _mm256_mul_ps(_mm256_loadu_ps(row + 4 * hx[x + 2]), _mm256_load_ps(hw8 + 8 * x + 16));
                __m256 p3 = _mm256_mul_ps(_mm256_loadu_ps(row + 4 * hx[x + 3]), _mm256_load_ps(hw8 + 8 * x + 24));
                /* w0 * tap0 + w1 * tap1 of each: the low half plus the high half */
                __m256 s01 = _mm256_add_ps(_mm256_permute2f128_ps(p0, p1, 0x20), _mm256_permute2f128_ps(p0, p1, 0x31));
                __m256 s23 = _mm256_add_ps(_mm256_permute2f128_ps(p2, p3, 0x20), _mm256_permute2f128_ps(p2, p3, 0x31));
                __m256 u0 = _mm256_unpacklo_ps(s01, s23), u1 = _mm256_unpackhi_ps(s01, s23);
                __m128 lo = _mm256_castps256_ps128(u0), hi = _mm256_extractf128_ps(u0, 1);
                __m128 lo1 = _mm256_castps256_ps128(u1), hi1 = _mm256_extractf128_ps(u1, 1);
                __m128 vr = _mm_unpacklo_ps(lo, hi), vg = _mm_unpackhi_ps(lo, hi), vb = _mm_unpacklo_ps(lo1, hi1);
                if (flip) {
                        int q = out_w - 4 - x;
                        _mm_storeu_ps(r + q, _mm_shuffle_ps(vr, vr, _MM_SHUFFLE(0, 1, 2, 3)));
                        _mm_storeu_ps(g + q, _mm_shuffle_ps(vg, vg, _MM_SHUFFLE(0, 1, 2, 3)));
                        _mm_storeu_ps(b + q, _mm_shuffle_ps(vb, vb, _MM_SHUFFLE(0, 1, 2, 3)));
                } else {
                        _mm_storeu_ps(r + x, vr);
                        _mm_storeu_ps(g + x, vg);
                        _mm_storeu_ps(b + x, vb);
                }
        }
        for (; x < out_w; x++) {
                __m256 p = _mm256_mul_ps(_mm256_loadu_ps(row + 4 * hx[x]), _mm256_load_ps(hw8 + 8 * x));
                __m128 sum = _mm_add_ps(_mm256_castps256_ps128(p), _mm256_extractf128_ps(p, 1));
                float v[4];
                _mm_storeu_ps(v, sum);
                int q = flip ? out_w - 1 - x : x;
                r[q] = v[0];
                g[q] = v[1];
                b[q] = v[2];
        }
}

AVX2 static void vpass_avx2(const float *const *rows, const float *w, int n, int out_w, int pad_w, struct norm nm,
                            bool stream, float *out)
{
        const __m256 lo = _mm256_setzero_ps(), hi = _mm256_set1_ps(255.0f), bias = _mm256_set1_ps(nm.bias);
        const __m256 scale = _mm256_set1_ps(nm.scale);
        const __m256 w0 = _mm256_set1_ps(w[0]), w1 = _mm256_set1_ps(n > 1 ? w[1] : 0.0f);
        int x = 0;
        if (n <= 2 && stream) {
                /* two taps (enlarging, and torchvision always): the common case,
                 * without branches; the second row is the first when n == 1 */
                const float *r0 = rows[0], *r1 = rows[n > 1 ? 1 : 0];
                for (; x + 8 <= out_w; x += 8) {
                        __m256 acc = _mm256_add_ps(_mm256_mul_ps(w0, _mm256_loadu_ps(r0 + x)),
                                                   _mm256_mul_ps(w1, _mm256_loadu_ps(r1 + x)));
                        if (nm.clamp)
                                acc = _mm256_min_ps(_mm256_max_ps(acc, lo), hi);
                        _mm256_stream_ps(out + x, _mm256_add_ps(_mm256_mul_ps(acc, scale), bias));
                }
        }
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        for (; x + 8 <= pad_w; x += 8) {
                __m256 acc = _mm256_setzero_ps();
                if (x < out_w) {
                        acc = _mm256_mul_ps(w0, _mm256_loadu_ps(rows[0] + x));
                        for (int k = 1; k < n; k++)
                                acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(w[k]), _mm256_loadu_ps(rows[k] + x)));
                        if (nm.clamp)
                                acc = _mm256_min_ps(_mm256_max_ps(acc, lo), hi);
                        acc = _mm256_add_ps(_mm256_mul_ps(acc, scale), bias);
                        if (x + 8 > out_w) {    /* zeros past the image */
                                __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(out_w - x), lane);
                                acc = _mm256_and_ps(acc, _mm256_castsi256_ps(keep));
                        }
                }
                if (stream)
                        _mm256_stream_ps(out + x, acc);
                else
                        _mm256_storeu_ps(out + x, acc);
        }
        for (; x < pad_w; x++) {
                float v = 0;
                if (x < out_w) {
                        float acc = w[0] * rows[0][x];
                        for (int k = 1; k < n; k++)
                                acc += w[k] * rows[k][x];
                        v = (nm.clamp ? clampf(acc, 0, 255) : acc) * nm.scale + nm.bias;
                }
                out[x] = v;
        }
}

static bool have_avx2(void)
{
        static int have = -1;   /* threads may race to set it: the same value */
        int h = __atomic_load_n(&have, __ATOMIC_RELAXED);
        if (h < 0) {
                h = __builtin_cpu_supports("avx2") ? 1 : 0;
                __atomic_store_n(&have, h, __ATOMIC_RELAXED);
        }
        return h;
}
#endif

/* ---- the whole image ----------------------------------------------------------------------------- */

/* p with room for n floats, 32-byte aligned, zeros when (re)allocated */
static float *grow(float *p, size_t *cap, size_t n)
{
        if (n <= *cap && p)
                return p;
        free(p);
        *cap = n;
        float *q = xaligned_alloc(32, n * sizeof(float));
        memset(q, 0, n * sizeof(float));
        return q;
}

void det_render(struct det_render_scratch *s, enum det_convention c, const uint8_t *rgb, size_t stride, int w,
                int h, int out_w, int out_h, bool flip, float *out, int pad_w, int pad_h)
{
        if (s->key[0] != (int)c + 1 || s->key[1] != w || s->key[2] != h || s->key[3] != out_w || s->key[4] != out_h) {
                s->hk = axis_coeffs(c, w, out_w, &s->hx, &s->hn, &s->hw, &s->hcap);
                s->vk = axis_coeffs(c, h, out_h, &s->vy, &s->vn, &s->vw, &s->vcap);
                /* two taps at most: the (w0 x4, w1 x4) table of the AVX2 pass */
                s->two_taps = 1;
                for (int x = 0; x < out_w; x++)
                        s->two_taps &= s->hn[x] <= 2;
                if (s->two_taps) {
                        s->hw8 = grow(s->hw8, &s->hw8_cap, 8 * (size_t)out_w + 8);
                        for (int x = 0; x < out_w; x++)
                                for (int l = 0; l < 4; l++) {
                                        const float *wx = s->hw + (size_t)x * (size_t)s->hk;
                                        s->hw8[8 * x + l] = wx[0];
                                        s->hw8[8 * x + 4 + l] = s->hn[x] > 1 ? wx[1] : 0.0f;
                                }
                }
                s->key[0] = (int)c + 1;
                s->key[1] = w;
                s->key[2] = h;
                s->key[3] = out_w;
                s->key[4] = out_h;
        }
        /* a ring of vk planar rows (3 planes each), each a multiple of 8 floats
         * and 8 more, zeroed once: the vertical pass reads whole vectors */
        size_t rs = ((size_t)out_w + 7) / 8 * 8 + 8;
        s->ring = grow(s->ring, &s->ring_cap, (size_t)s->vk * 3 * rs);
        s->row = grow(s->row, &s->row_cap, 4 * (size_t)w + 16);
        int ring_row[64];
        for (int i = 0; i < s->vk; i++)
                ring_row[i] = -1;
        /* MLPerf: B, G, R less the mean; torchvision: ((v / 255) - mean) / std,
         * after the resize (the interpolation is linear: the same to a float
         * ulp or two as torchvision's normalisation before it) */
        struct norm norms[3];
        for (int p = 0; p < 3; p++)
                norms[p] = c == DET_MLPERF ? (struct norm){ true, 1.0f, -mlperf_mean_bgr[p] }
                                           : (struct norm){ false, (float)(1.0 / (255.0 * tv_std[p])),
                                                            (float)(-(double)tv_mean[p] / tv_std[p]) };
        size_t plane = (size_t)pad_w * (size_t)pad_h;
#if HAVE_AVX2_PATH
        bool avx2 = have_avx2() && !s->portable;
        bool stream = pad_w % 8 == 0 && (uintptr_t)out % 32 == 0;
#endif
        for (int y = 0; y < out_h; y++) {
                const float *rows[3][64];
                int n = s->vn[y];
                for (int k = 0; k < n; k++) {
                        int sy = s->vy[y] + k;
                        if (sy > h - 1)
                                sy = h - 1;     /* torch's last row repeated */
                        int slot = sy % s->vk;
                        float *base = s->ring + (size_t)slot * 3 * rs;
                        if (ring_row[slot] != sy) {
                                const uint8_t *src = rgb + (size_t)sy * stride;
#if HAVE_AVX2_PATH
                                if (avx2) {
                                        row_to_float_avx2(src, w, s->row);
                                        if (s->two_taps)
                                                hpass2_avx2(s->row, s->hx, s->hw8, out_w, flip, base, base + rs,
                                                            base + 2 * rs);
                                        else
                                                hpass_generic(s->row, s->hx, s->hn, s->hw, s->hk, out_w, flip, base,
                                                              base + rs, base + 2 * rs);
                                } else
#endif
                                {
                                        row_to_float(src, 0, w, s->row);
                                        hpass_generic(s->row, s->hx, s->hn, s->hw, s->hk, out_w, flip, base, base + rs,
                                                      base + 2 * rs);
                                }
                                ring_row[slot] = sy;
                        }
                        /* MLPerf's planes are B, G, R */
                        for (int p = 0; p < 3; p++)
                                rows[p][k] = base + (size_t)(c == DET_MLPERF ? 2 - p : p) * rs;
                }
                const float *wy = s->vw + (size_t)y * (size_t)s->vk;
                for (int p = 0; p < 3; p++) {
                        float *o = out + (size_t)p * plane + (size_t)y * (size_t)pad_w;
#if HAVE_AVX2_PATH
                        if (avx2) {
                                vpass_avx2(rows[p], wy, n, out_w, pad_w, norms[p], stream, o);
                                continue;
                        }
#endif
                        vpass_generic(rows[p], wy, n, out_w, pad_w, norms[p], o);
                }
        }
        for (int p = 0; p < 3; p++)
                for (int y = out_h; y < pad_h; y++) {
                        float *o = out + (size_t)p * plane + (size_t)y * (size_t)pad_w;
#if HAVE_AVX2_PATH
                        if (stream) {
                                for (int x = 0; x < pad_w; x += 4)
                                        _mm_stream_ps(o + x, _mm_setzero_ps());
                                continue;
                        }
#endif
                        memset(o, 0, (size_t)pad_w * sizeof(float));
                }
#if HAVE_AVX2_PATH
        if (stream)
                _mm_sfence();   /* the non-temporal stores are visible before the batch is handed over */
#endif
}

/* ---- RLE masks ------------------------------------------------------------------------------------- */

/* F.interpolate(mode="nearest")'s source index: floor(dst * (in / out)) in float */
static int nearest(int dst, int in, int out)
{
        if (in == out)
                return dst;
        if (out == 2 * in)
                return dst >> 1;
        float scale = (float)in / (float)out;
        long s = (long)floorf((float)dst * scale);
        return s > in - 1 ? in - 1 : (int)s;
}

long det_rle_resize(const uint32_t *counts, uint32_t n, int w, int h, int out_w, int out_h, bool flip,
                    uint32_t **counts_out, size_t *n_out, size_t *cap_out)
{
        const struct rle in = { (uint32_t)h, (uint32_t)w, n, (uint32_t *)counts };
        if (rle_check(&in) < 0)
                return -EBADMSG;
        _cleanup_free_ uint8_t *bits = xmalloc((size_t)w * (size_t)h + 1);
        rle_decode(&in, bits);
        _cleanup_free_ int *sy = xmalloc(((size_t)out_h + 1) * sizeof(int));
        for (int y = 0; y < out_h; y++)
                sy[y] = nearest(y, h, out_h);
        /* the resized mask, column-major; column x of the output is column
         * out_w - 1 - x of the resized mask when flipped */
        _cleanup_free_ uint8_t *res = xmalloc((size_t)out_w * (size_t)out_h + 1);
        for (int x = 0; x < out_w; x++) {
                const uint8_t *col = bits + (size_t)nearest(flip ? out_w - 1 - x : x, w, out_w) * (size_t)h;
                uint8_t *dst = res + (size_t)x * (size_t)out_h;
                for (int y = 0; y < out_h; y++)
                        dst[y] = col[sy[y]];
        }
        _cleanup_rle_ struct rle r = RLE_INIT;
        rle_encode(&r, res, (uint32_t)out_h, (uint32_t)out_w);
        if (*n_out + r.m > *cap_out) {
                *cap_out = (*n_out + r.m) * 2;
                *counts_out = xrealloc(*counts_out, *cap_out * sizeof(uint32_t));
        }
        memcpy(*counts_out + *n_out, r.cnts, (size_t)r.m * sizeof(uint32_t));
        *n_out += r.m;
        return (long)r.m;
}

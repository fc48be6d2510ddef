/* roi-align-impl.h: the arithmetic of RoIAlign that the CPU loops
 * (roi-align-cpu.h) and the CUDA kernels (roi-align.cu) share, so the two
 * compute the same numbers: the RoI's geometry, one axis of a bilinear
 * sample, the level mapper and channel offsets in each layout.
 *
 * Included once per element type by roi-align-types.h, with RA_T (float or
 * double), RA_SFX (f32, f64) and RA_F64 (0, 1) defined; names get the
 * suffix through RA_FN.
 * C and C++ (nvcc): no designated initializers.  Products go through
 * RA_MUL, which is __fmul_rn / __dmul_rn on the device so nvcc cannot fuse
 * them into the following add (torchvision's CPU kernel has no FMAs; the C
 * side is compiled with fp-contract off).
 */
#ifndef BD_ROI_ALIGN_IMPL_ONCE
#define BD_ROI_ALIGN_IMPL_ONCE

#include <stdint.h>

#include "elem.h"               /* BD_HD */
#include "tensor.h"

#define RA_CAT_(a, b) a##_##b
#define RA_CAT(a, b) RA_CAT_(a, b)
#define RA_FN(name) RA_CAT(name, RA_SFX)

#ifdef __CUDA_ARCH__
static __device__ __forceinline__ float ra_mul(float a, float b) { return __fmul_rn(a, b); }
static __device__ __forceinline__ double ra_mul(double a, double b) { return __dmul_rn(a, b); }
#define RA_MUL(a, b) ra_mul((a), (b))
#else
#define RA_MUL(a, b) ((a) * (b))
#endif

/* Offset of channel c within an image of a map of C x HW in a layout, and
 * the distance between two pixels of one channel: element (n, c, pix) sits
 * at n C HW + ra_coff(c) + pix ra_pstride. */
BD_HD static inline int64_t ra_coff(int layout, int64_t C, int64_t HW, int64_t c)
{
        (void)C;
        switch (layout) {
        case BD_NHWC:
                return c;
        case BD_NCHW8C:
                return (c >> 3) * HW * 8 + (c & 7);
        default:
                return c * HW;
        }
}

BD_HD static inline int64_t ra_pstride(int layout, int64_t C)
{
        return layout == BD_NHWC ? C : layout == BD_NCHW8C ? 8 : 1;
}

#endif /* BD_ROI_ALIGN_IMPL_ONCE */

#if RA_F64
#define RA_SQRT sqrt
#define RA_LOG2 log2
#define RA_FLOOR floor
#define RA_CEIL ceil
#else
#define RA_SQRT sqrtf
#define RA_LOG2 log2f
#define RA_FLOOR floorf
#define RA_CEIL ceilf
#endif

/* A RoI's sampling grid on one map. */
struct RA_FN(ra_geom) {
        RA_T start_h, start_w, bin_h, bin_w;
        RA_T count;             /* max(gh gw, 1): the divisor of the forward */
        int gh, gw;             /* samples per bin and side */
        int64_t n;              /* batch index; -1: the RoI gives zeros */
};

/* One axis of a bilinear sample: rows (or columns) lo and hi with weights
 * h and l; lo < 0 when the sample lies outside [-1, size]. */
struct RA_FN(ra_axis) {
        int lo, hi;
        RA_T l, h;
};

/* x - x is 0 only for finite x (no isfinite: C and device code alike) */
BD_HD static inline int RA_FN(ra_finite)(RA_T v)
{
        return v - v == 0;
}

BD_HD static inline int RA_FN(ra_grid)(RA_T q)
{
        if (!(q > 0))
                return 0;       /* torchvision's grid <= 0: no samples, zeros */
        return q > DET_ROI_GRID_MAX ? DET_ROI_GRID_MAX : (int)q;
}

/* torchvision's roi_align geometry for roi (b, x1, y1, x2, y2) */
BD_HD static inline void RA_FN(ra_geom)(const RA_T *roi, RA_T scale, int aligned, int64_t ph, int64_t pw,
                                        int sampling, int64_t N, struct RA_FN(ra_geom) *g)
{
        g->start_h = g->start_w = g->bin_h = g->bin_w = 0;
        g->count = 1;
        g->gh = g->gw = 0;
        g->n = -1;
        /* torchvision casts the index to int: (-1, N) truncates into [0, N) */
        if (!(roi[0] > -1 && roi[0] < (RA_T)N))
                return;
        for (int k = 1; k < 5; k++)
                if (!RA_FN(ra_finite)(roi[k]))
                        return;
        RA_T off = aligned ? (RA_T)0.5 : (RA_T)0;
        RA_T sw = RA_MUL(roi[1], scale) - off, sh = RA_MUL(roi[2], scale) - off;
        RA_T ew = RA_MUL(roi[3], scale) - off, eh = RA_MUL(roi[4], scale) - off;
        RA_T rw = ew - sw, rh = eh - sh;
        if (!aligned) {
                /* malformed RoIs become 1 x 1 */
                rw = rw < 1 ? (RA_T)1 : rw;
                rh = rh < 1 ? (RA_T)1 : rh;
        }
        if (!RA_FN(ra_finite)(rw) || !RA_FN(ra_finite)(rh))
                return;         /* coordinates times scale overflowed */
        g->start_h = sh;
        g->start_w = sw;
        g->bin_h = rh / (RA_T)ph;
        g->bin_w = rw / (RA_T)pw;
        g->gh = sampling > 0 ? sampling : RA_FN(ra_grid)(RA_CEIL(g->bin_h));
        g->gw = sampling > 0 ? sampling : RA_FN(ra_grid)(RA_CEIL(g->bin_w));
        g->count = (RA_T)(g->gh * g->gw > 1 ? g->gh * g->gw : 1);
        g->n = (int64_t)roi[0];
}

/* coordinate of sample i of bin j: start + j bin + (i + .5) bin / grid, in
 * torchvision's order of operations */
BD_HD static inline RA_T RA_FN(ra_coord)(RA_T start, RA_T bin, int64_t j, int i, int grid)
{
        return (start + RA_MUL((RA_T)j, bin)) + RA_MUL((RA_T)(i + .5f), bin) / (RA_T)grid;
}

BD_HD static inline struct RA_FN(ra_axis) RA_FN(ra_axis)(RA_T v, int64_t size)
{
        struct RA_FN(ra_axis) a;
        /* outside [-1, size] (or NaN): the sample is 0 */
        if (!(v >= -1 && v <= (RA_T)size)) {
                a.lo = a.hi = -1;
                a.l = a.h = 0;
                return a;
        }
        if (v <= 0)
                v = 0;
        a.lo = (int)v;
        if (a.lo >= size - 1) {
                a.lo = a.hi = (int)size - 1;
                v = (RA_T)a.lo;
        } else {
                a.hi = a.lo + 1;
        }
        a.l = v - (RA_T)a.lo;
        /* torchvision: T hy = 1. - ly, a double subtraction */
        a.h = (RA_T)(1. - (double)a.l);
        return a;
}

/* The four taps of a sample at rows ya, columns xa of a map W wide whose
 * pixels are sP elements apart: weights (products in torchvision's order)
 * and offsets. */
struct RA_FN(ra_taps) {
        RA_T w1, w2, w3, w4;
        int64_t p1, p2, p3, p4;
};

BD_HD static inline struct RA_FN(ra_taps) RA_FN(ra_taps)(struct RA_FN(ra_axis) ya, struct RA_FN(ra_axis) xa,
                                                         int64_t W, int64_t sP)
{
        struct RA_FN(ra_taps) t;
        t.w1 = RA_MUL(ya.h, xa.h);
        t.w2 = RA_MUL(ya.h, xa.l);
        t.w3 = RA_MUL(ya.l, xa.h);
        t.w4 = RA_MUL(ya.l, xa.l);
        t.p1 = (ya.lo * W + xa.lo) * sP;
        t.p2 = (ya.lo * W + xa.hi) * sP;
        t.p3 = (ya.hi * W + xa.lo) * sP;
        t.p4 = (ya.hi * W + xa.hi) * sP;
        return t;
}

/* level index (k - kmin) of a box (x1, y1, x2, y2); -1 when NaN */
BD_HD static inline int RA_FN(ra_level)(const RA_T *box, int plus_one, int kmin, int kmax, int s0, int k0)
{
        RA_T one = plus_one ? (RA_T)1 : (RA_T)0;
        RA_T w = box[2] - box[0] + one, h = box[3] - box[1] + one;
        RA_T s = RA_SQRT(RA_MUL(w, h)), k;
        if (plus_one)
                k = RA_FLOOR((RA_T)k0 + RA_LOG2(s / (RA_T)s0 + (RA_T)1e-6));
        else
                k = RA_FLOOR((RA_T)k0 + RA_LOG2(s / (RA_T)s0) + (RA_T)1e-6);
        if (!(k == k))
                return -1;
        if (k < (RA_T)kmin)
                k = (RA_T)kmin;
        if (k > (RA_T)kmax)
                k = (RA_T)kmax;
        return (int)k - kmin;
}

#undef RA_SQRT
#undef RA_LOG2
#undef RA_FLOOR
#undef RA_CEIL

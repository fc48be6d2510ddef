/* elem.h: the operations that are not library calls, written once for both
 * backends.
 *
 * Each operation is an element function: what happens at one index (or one
 * row, or one feature-map element given its coordinates).  elem-impl.h holds
 * the functions; a backend includes it once per element type and wraps each
 * function in its own launch code: an OpenMP loop on the CPU (ops-cpu.c), a
 * kernel on CUDA (ops-cuda.cu).  The argument structs below are shared by the
 * two, hold device pointers and are passed by value to CUDA kernels.
 *
 * Kinds of element functions:
 *   flat     f(i, args)                  for i in [0, n)
 *   4-D      f(i, n, c, h, w, args)      over the feature map args->s, i being
 *                                        the element's offset in its layout
 *   channel  f(i, c, args, &v0, &v1)     two values per element of the map
 *                                        args->s, each summed per channel over
 *                                        (N, H, W) in a fixed order, in double:
 *                                        args->sums (2C + 1) = [sums of v0 |
 *                                        sums of v1 | N H W, the count]
 *   reducer  v = f(i, args)              summed over [0, n) in a fixed order,
 *                                        so results are the same run to run
 *
 * This header is C and C++ (nvcc): no designated initializers, no restrict.
 */
#ifndef BD_ELEM_H
#define BD_ELEM_H

#include <stdint.h>

#include "tensor.h"

#ifdef __CUDACC__
#define BD_HD __host__ __device__
#else
#define BD_HD
#endif

/* Iteration space of a 4-D element function, first member of its args. */
struct bd_shape4 {
        int64_t N, C, H, W;
        int layout;             /* enum bd_layout */
};

/* Offset of element (n, c, h, w) of a feature map of shape s. */
BD_HD static inline int64_t bd_off4(const struct bd_shape4 *s, int64_t n, int64_t c, int64_t h, int64_t w)
{
        switch (s->layout) {
        case BD_NHWC:
                return ((n * s->H + h) * s->W + w) * s->C + c;
        case BD_NCHW8C:
                return (((n * (s->C >> 3) + (c >> 3)) * s->H + h) * s->W + w) * 8 + (c & 7);
        default:
                return ((n * s->C + c) * s->H + h) * s->W + w;
        }
}

/* Coordinates of the element at offset i (used by CUDA launches; the CPU
 * walks the loops instead). */
BD_HD static inline void bd_coord4(const struct bd_shape4 *s, int64_t i, int64_t *n, int64_t *c, int64_t *h,
                                   int64_t *w)
{
        switch (s->layout) {
        case BD_NHWC:
                *c = i % s->C; i /= s->C;
                *w = i % s->W; i /= s->W;
                *h = i % s->H; *n = i / s->H;
                break;
        case BD_NCHW8C: {
                int64_t j = i & 7;
                i >>= 3;
                *w = i % s->W; i /= s->W;
                *h = i % s->H; i /= s->H;
                int64_t cb = i % (s->C >> 3);
                *n = i / (s->C >> 3);
                *c = cb * 8 + j;
                break;
        }
        default:
                *w = i % s->W; i /= s->W;
                *h = i % s->H; i /= s->H;
                *c = i % s->C; *n = i / s->C;
                break;
        }
}

/* ---- argument structs ---------------------------------------------------- */

struct bd_fill_args { void *y; double v; };                             /* y = v */
struct bd_axpby_args { const void *x; void *y; double a, b; };          /* y = a x + b y (b == 0: y not read) */
struct bd_add_args { const void *x, *y; void *z; int relu; };           /* z = x + y, then ReLU if relu */
struct bd_relu_args { const void *x; void *y; };                        /* y = max(x, 0) */
/* dx = dy where y > 0 else 0; accumulate: dx += that */
struct bd_relu_bwd_args { const void *y, *dy; void *dx; int accumulate; };

/* per-row softmax cross-entropy over K classes; label < 0: row ignored.
 * loss[r] = w[r] * (logsumexp(x[r]) - x[r][label]), dx = scale * w[r] * (softmax - onehot) */
struct bd_softmax_ce_args {
        const void *x; const int32_t *label; const void *w;             /* w may be NULL (1) */
        void *loss, *dx;                                                /* either may be NULL */
        int64_t K; double scale;
};
/* sigmoid binary cross-entropy with logits, per element, weights optional */
struct bd_bce_args { const void *x, *t, *w; void *loss, *dx; double scale; };
/* smooth L1: |d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta (beta 0: L1), d = x - t */
struct bd_smooth_l1_args { const void *x, *t, *w; void *loss, *dx; double beta, scale; };

/* SGD with momentum (PyTorch semantics):
 *   g' = g * gscale + wd * p;  v = momentum * v + g';  p -= lr * v */
struct bd_sgd_args { void *p; const void *g; void *v; double lr, momentum, wd, gscale; };
/* BN running statistics, per channel: r = (1 - m) r + m batch (variance unbiased by n/(n-1)) */
struct bd_bn_running_args { void *rmean, *rvar; const void *mean, *var; double momentum, unbias; };
/* Frozen BN as an affine map, per channel: scale = gamma / sqrt(var + eps), shift = beta - mean scale */
struct bd_bn_coef_args { const void *gamma, *beta, *mean, *var; void *scale, *shift; double eps; };
/* y = x * scale + shift per row of cols (FC bias: scale NULL, shift = bias) */
struct bd_bias_rows_args { void *y; const void *b; int64_t cols; };
/* element type conversion, any pair of types: y = x scale (+ y when accumulate) */
struct bd_cast_args { const void *x; void *y; int xtype, ytype; double scale; int accumulate; };
/* batch-norm variance from the inverse standard deviation: var = 1 / inv^2 - eps */
struct bd_bn_invstd_args { const void *inv; void *var; double eps; };
/* Synchronised batch norm (ops.h), per channel c of C, from sums over the
 * ranks (f64, 2C + 1: sum of x, of x^2, the count M): mean, var (biased),
 * invstd = 1 / sqrt(var + eps), scale = gamma invstd, shift = beta - mean
 * scale, and the running statistics as bn_running's (variance unbiased by
 * M / (M - 1)) */
struct bd_bn_sync_coef_args {
        const double *sums; const void *gamma, *beta;
        void *mean, *var, *invstd, *scale, *shift, *rmean, *rvar;
        int64_t C; double eps, momentum;
};
/* its parameter gradients from this rank's sums (2C + 1: sum of g, of
 * g x_hat): dbeta = sum g, dgamma = sum g x_hat (either NULL; added to when
 * accumulate) */
struct bd_bn_sync_dparams_args { const double *sums; void *dgamma, *dbeta; int64_t C; int accumulate; };
/* plain-tensor permutation: y (dims out) = x with in-strides permuted */
struct bd_permute_args { const void *x; void *y; int ndim; int64_t dims[BD_MAX_DIMS], xstride[BD_MAX_DIMS]; };

/* 4-D, iteration space first */
/* y = x * scale[c] + shift[c] (NULL: 1 and 0), then ReLU if relu */
struct bd_affine_args { struct bd_shape4 s; const void *x; void *y; const void *scale, *shift; int relu; };
/* dx = dy * scale[c], zero where y <= 0 when y is given (fused ReLU) */
struct bd_affine_bwd_args { struct bd_shape4 s; const void *y, *dy; void *dx; const void *scale; };
/* synchronised batch norm's input gradient from the sums over the ranks
 * (2C + 1: sum of g, of g x_hat, the count M):
 *   dx = gamma invstd (g - sum g / M - x_hat sum g x_hat / M) (+ dx when accumulate),
 * g = dy, 0 where y <= 0 when y is given (fused ReLU), x_hat = (x - mean) invstd */
struct bd_bn_sync_bwd_args {
        struct bd_shape4 s; const void *x, *y, *dy; void *dx;
        const void *gamma, *mean, *invstd; const double *sums; int accumulate;
};
/* nearest x2: forward over y (2H, 2W) from x; backward over dx summing 4 of dy */
struct bd_upsample_args { struct bd_shape4 s; struct bd_shape4 o; const void *src; void *dst; };
/* channel concat: over part x, copy to/from channels [c_off, c_off + C) of whole y */
struct bd_concat_args { struct bd_shape4 s; struct bd_shape4 o; void *part, *whole; int64_t c_off; int split; };
/* layout conversion: over x (s), y has the same dims in layout ylayout */
struct bd_relayout_args { struct bd_shape4 s; struct bd_shape4 o; const void *x; void *y; };

/* one channel per row (detection heads: the ground-truth class's mask
 * logits or box deltas) of a map x of shape s in its layout, idx (N) int32.
 * Forward, flat over y (N, 1, H, W) plain (src x, dst y): y = x[n, idx[n], h, w],
 * 0 where idx[n] is outside [0, C).  Backward, 4-D over dx of shape s (src
 * dy, dst dx): dx = dy[n, h, w] where c == idx[n], else 0 (+ dx when
 * accumulate). */
struct bd_select_args { struct bd_shape4 s; const void *src; void *dst; const int32_t *idx; int accumulate; };
/* y[i] = 1 where lo <= label[i / cols] <= hi, else 0: targets and weights of
 * sampled rows from their labels (1 positive, 0 negative, -1 ignored) */
struct bd_label_mask_args { const int32_t *label; void *y; int64_t cols; int32_t lo, hi; };

/* global average pooling over the map s: forward per (n, c) into dst (N, C);
 * backward over the map's gradient from src (N, C) */
struct bd_avgpool_args { struct bd_shape4 s; const void *src; void *dst; };

/* channel sums (iteration space first, then the sums: 2C + 1 doubles) */
/* batch norm's statistics: v0 = x, v1 = x^2 */
struct bd_bn_sums_args { struct bd_shape4 s; double *sums; const void *x; };
/* its backward's: v0 = g, v1 = g x_hat, g and x_hat as bd_bn_sync_bwd_args' */
struct bd_bn_grad_sums_args { struct bd_shape4 s; double *sums; const void *x, *y, *dy, *mean, *invstd; };

/* reducers */
struct bd_reduce_args { const void *x; };

#define BD_FLAT_KERNELS(X)                              \
        X(fill, bd_fill_args)                           \
        X(axpby, bd_axpby_args)                         \
        X(add, bd_add_args)                             \
        X(relu_fwd, bd_relu_args)                       \
        X(relu_bwd, bd_relu_bwd_args)                   \
        X(softmax_ce, bd_softmax_ce_args)               \
        X(bce, bd_bce_args)                             \
        X(smooth_l1, bd_smooth_l1_args)                 \
        X(sgd, bd_sgd_args)                             \
        X(bn_running, bd_bn_running_args)               \
        X(bn_coef, bd_bn_coef_args)                     \
        X(bias_rows, bd_bias_rows_args)                 \
        X(permute, bd_permute_args)                     \
        X(avgpool_fwd, bd_avgpool_args)                 \
        X(bn_invstd, bd_bn_invstd_args)                 \
        X(select_fwd, bd_select_args)                   \
        X(label_mask, bd_label_mask_args)               \
        X(bn_sync_coef, bd_bn_sync_coef_args)           \
        X(bn_sync_dparams, bd_bn_sync_dparams_args)

#define BD_4D_KERNELS(X)                                \
        X(affine, bd_affine_args)                       \
        X(affine_bwd, bd_affine_bwd_args)               \
        X(upsample_fwd, bd_upsample_args)               \
        X(upsample_bwd, bd_upsample_args)               \
        X(concat, bd_concat_args)                       \
        X(relayout, bd_relayout_args)                   \
        X(avgpool_bwd, bd_avgpool_args)                 \
        X(select_bwd, bd_select_args)                   \
        X(bn_sync_bwd, bd_bn_sync_bwd_args)

#define BD_CHAN_KERNELS(X)                              \
        X(bn_sums, bd_bn_sums_args)                     \
        X(bn_grad_sums, bd_bn_grad_sums_args)

#define BD_REDUCERS(X)                                  \
        X(sum, bd_reduce_args)                          \
        X(sumsq, bd_reduce_args)                        \
        X(nonfinite, bd_reduce_args)

enum bd_kernel {
#define BD_X(name, args) BD_K_##name,
        BD_FLAT_KERNELS(BD_X)
        _BD_K_FLAT_END,
        BD_4D_KERNELS(BD_X)
        BD_CHAN_KERNELS(BD_X)   /* n: the channels */
        BD_K_cast,              /* one instance, any pair of types */
        _BD_K_MAX,
#undef BD_X
};

enum bd_reducer {
#define BD_X(name, args) BD_R_##name,
        BD_REDUCERS(BD_X)
        _BD_R_MAX,
#undef BD_X
};

/* Any-type load and store for the cast kernel (the CUDA backend adds the
 * half types where cuda_fp16.h is available). */
BD_HD static inline double bd_ld_any(const void *p, int64_t i, int t)
{
        switch (t) {
        case BD_F64: return ((const double *)p)[i];
        case BD_I32: return ((const int32_t *)p)[i];
#ifdef BD_ELEM_HALF
        case BD_F16: return (double)__half2float(((const __half *)p)[i]);
        case BD_BF16: return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
#endif
        default: return ((const float *)p)[i];
        }
}

BD_HD static inline void bd_st_any(void *p, int64_t i, int t, double v)
{
        switch (t) {
        case BD_F64: ((double *)p)[i] = v; break;
        case BD_I32: ((int32_t *)p)[i] = (int32_t)v; break;
#ifdef BD_ELEM_HALF
        case BD_F16: ((__half *)p)[i] = __float2half((float)v); break;
        case BD_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16((float)v); break;
#endif
        default: ((float *)p)[i] = (float)v; break;
        }
}

BD_HD static inline void bd_k_cast(int64_t i, const struct bd_cast_args *a)
{
        double v = bd_ld_any(a->x, i, a->xtype) * a->scale;
        if (a->accumulate)
                v += bd_ld_any(a->y, i, a->ytype);
        bd_st_any(a->y, i, a->ytype, v);
}

#endif

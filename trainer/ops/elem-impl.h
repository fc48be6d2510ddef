/* elem-impl.h: the element functions, included once per element type.
 *
 * The includer defines:
 *   BD_S     storage type of tensor elements (float, double, __half, ...)
 *   BD_T     arithmetic type (float for the half types)
 *   BD_SFX   name suffix (f32, f64, f16, bf16): functions are bd_k_<name>_<sfx>
 *   BD_T_DOUBLE  1 when BD_T is double (picks the math functions)
 * Per-channel vectors (BN statistics, scales, biases) and optimiser state are
 * always of type BD_T (fp32 master values next to fp16 activations).
 * No include guard on purpose.
 */
#ifndef BD_S
#error "define BD_S, BD_T and BD_SFX before including elem-impl.h"
#endif

#define BD_CAT_(a, b) a##b
#define BD_CAT(a, b) BD_CAT_(a, b)
#define BD_KN(name) BD_CAT(BD_CAT(bd_k_, name), BD_CAT(_, BD_SFX))

#define LD(p, i) ((BD_T)(((const BD_S *)(p))[i]))
#define ST(p, i, v) (((BD_S *)(p))[i] = (BD_S)(v))
#define LDP(p, i) (((const BD_T *)(p))[i])
#define STP(p, i, v) (((BD_T *)(p))[i] = (BD_T)(v))

#if BD_T_DOUBLE
#define BD_EXP exp
#define BD_LOG log
#define BD_LOG1P log1p
#define BD_FABS fabs
#define BD_SQRT sqrt
#else
#define BD_EXP expf
#define BD_LOG logf
#define BD_LOG1P log1pf
#define BD_FABS fabsf
#define BD_SQRT sqrtf
#endif

/* ---- flat ------------------------------------------------------------------ */

BD_HD static inline void BD_KN(fill)(int64_t i, const struct bd_fill_args *a)
{
        ST(a->y, i, (BD_T)a->v);
}

BD_HD static inline void BD_KN(axpby)(int64_t i, const struct bd_axpby_args *a)
{
        BD_T v = (BD_T)a->a * LD(a->x, i);
        if (a->b != 0)
                v += (BD_T)a->b * LD(a->y, i);
        ST(a->y, i, v);
}

BD_HD static inline void BD_KN(add)(int64_t i, const struct bd_add_args *a)
{
        BD_T v = LD(a->x, i) + LD(a->y, i);
        if (a->relu && !(v > 0))
                v = 0;
        ST(a->z, i, v);
}

BD_HD static inline void BD_KN(relu_fwd)(int64_t i, const struct bd_relu_args *a)
{
        BD_T v = LD(a->x, i);
        ST(a->y, i, v > 0 ? v : (BD_T)0);
}

BD_HD static inline void BD_KN(relu_bwd)(int64_t i, const struct bd_relu_bwd_args *a)
{
        BD_T g = LD(a->y, i) > 0 ? LD(a->dy, i) : (BD_T)0;
        if (a->accumulate)
                g += LD(a->dx, i);
        ST(a->dx, i, g);
}

/* one row of K logits */
BD_HD static inline void BD_KN(softmax_ce)(int64_t r, const struct bd_softmax_ce_args *a)
{
        int64_t K = a->K, base = r * K;
        int32_t label = a->label[r];
        if (label < 0 || label >= K) {
                if (a->loss)
                        ST(a->loss, r, 0);
                if (a->dx)
                        for (int64_t k = 0; k < K; k++)
                                ST(a->dx, base + k, 0);
                return;
        }
        BD_T m = LD(a->x, base);
        for (int64_t k = 1; k < K; k++) {
                BD_T v = LD(a->x, base + k);
                m = v > m ? v : m;
        }
        BD_T s = 0;
        for (int64_t k = 0; k < K; k++)
                s += BD_EXP(LD(a->x, base + k) - m);
        BD_T lse = m + BD_LOG(s);
        BD_T w = a->w ? LD(a->w, r) : (BD_T)1;
        if (a->loss)
                ST(a->loss, r, w * (lse - LD(a->x, base + label)));
        if (a->dx) {
                BD_T gs = (BD_T)a->scale * w;
                for (int64_t k = 0; k < K; k++) {
                        BD_T p = BD_EXP(LD(a->x, base + k) - lse);
                        ST(a->dx, base + k, gs * (p - (k == label ? (BD_T)1 : (BD_T)0)));
                }
        }
}

BD_HD static inline void BD_KN(bce)(int64_t i, const struct bd_bce_args *a)
{
        BD_T x = LD(a->x, i), t = LD(a->t, i);
        BD_T w = a->w ? LD(a->w, i) : (BD_T)1;
        BD_T ax = BD_FABS(x);
        if (a->loss)
                ST(a->loss, i, w * ((x > 0 ? x : (BD_T)0) - x * t + BD_LOG1P(BD_EXP(-ax))));
        if (a->dx) {
                BD_T e = BD_EXP(-ax);
                BD_T sig = x >= 0 ? (BD_T)1 / ((BD_T)1 + e) : e / ((BD_T)1 + e);
                ST(a->dx, i, (BD_T)a->scale * w * (sig - t));
        }
}

BD_HD static inline void BD_KN(smooth_l1)(int64_t i, const struct bd_smooth_l1_args *a)
{
        BD_T d = LD(a->x, i) - LD(a->t, i);
        BD_T w = a->w ? LD(a->w, i) : (BD_T)1;
        BD_T ad = BD_FABS(d), beta = (BD_T)a->beta;
        int quad = ad < beta;
        if (a->loss)
                ST(a->loss, i, w * (quad ? (BD_T)0.5 * d * d / beta : ad - (BD_T)0.5 * beta));
        if (a->dx) {
                BD_T g = quad ? d / beta : (d > 0 ? (BD_T)1 : d < 0 ? (BD_T)-1 : (BD_T)0);
                ST(a->dx, i, (BD_T)a->scale * w * g);
        }
}

BD_HD static inline void BD_KN(sgd)(int64_t i, const struct bd_sgd_args *a)
{
        BD_T p = LDP(a->p, i);
        BD_T g = LDP(a->g, i) * (BD_T)a->gscale + (BD_T)a->wd * p;
        BD_T v = (BD_T)a->momentum * LDP(a->v, i) + g;
        STP(a->v, i, v);
        STP(a->p, i, p - (BD_T)a->lr * v);
}

BD_HD static inline void BD_KN(bn_running)(int64_t c, const struct bd_bn_running_args *a)
{
        BD_T m = (BD_T)a->momentum;
        STP(a->rmean, c, ((BD_T)1 - m) * LDP(a->rmean, c) + m * LDP(a->mean, c));
        STP(a->rvar, c, ((BD_T)1 - m) * LDP(a->rvar, c) + m * LDP(a->var, c) * (BD_T)a->unbias);
}

BD_HD static inline void BD_KN(bn_coef)(int64_t c, const struct bd_bn_coef_args *a)
{
        BD_T s = LDP(a->gamma, c) / BD_SQRT(LDP(a->var, c) + (BD_T)a->eps);
        STP(a->scale, c, s);
        STP(a->shift, c, LDP(a->beta, c) - LDP(a->mean, c) * s);
}

BD_HD static inline void BD_KN(bn_invstd)(int64_t c, const struct bd_bn_invstd_args *a)
{
        BD_T inv = LDP(a->inv, c);
        BD_T v = (BD_T)1 / (inv * inv) - (BD_T)a->eps;
        STP(a->var, c, v > 0 ? v : (BD_T)0);
}

BD_HD static inline void BD_KN(bn_sync_coef)(int64_t c, const struct bd_bn_sync_coef_args *a)
{
        double M = a->sums[2 * a->C], mean = a->sums[c] / M, var = a->sums[a->C + c] / M - mean * mean;
        if (!(var > 0))
                var = 0;
        BD_T inv = (BD_T)(1.0 / sqrt(var + a->eps)), s = LDP(a->gamma, c) * inv, m = (BD_T)a->momentum;
        STP(a->mean, c, mean);
        STP(a->var, c, var);
        STP(a->invstd, c, inv);
        STP(a->scale, c, s);
        STP(a->shift, c, LDP(a->beta, c) - (BD_T)mean * s);
        STP(a->rmean, c, ((BD_T)1 - m) * LDP(a->rmean, c) + m * (BD_T)mean);
        STP(a->rvar, c, ((BD_T)1 - m) * LDP(a->rvar, c) + m * (BD_T)(M > 1 ? var * M / (M - 1) : var));
}

BD_HD static inline void BD_KN(bn_sync_dparams)(int64_t c, const struct bd_bn_sync_dparams_args *a)
{
        if (a->dbeta)
                STP(a->dbeta, c, (BD_T)a->sums[c] + (a->accumulate ? LDP(a->dbeta, c) : (BD_T)0));
        if (a->dgamma)
                STP(a->dgamma, c, (BD_T)a->sums[a->C + c] + (a->accumulate ? LDP(a->dgamma, c) : (BD_T)0));
}

BD_HD static inline void BD_KN(bias_rows)(int64_t i, const struct bd_bias_rows_args *a)
{
        ST(a->y, i, LD(a->y, i) + LDP(a->b, i % a->cols));
}

BD_HD static inline void BD_KN(permute)(int64_t i, const struct bd_permute_args *a)
{
        int64_t rest = i, off = 0;
        for (int d = a->ndim - 1; d >= 0; d--) {
                off += (rest % a->dims[d]) * a->xstride[d];
                rest /= a->dims[d];
        }
        ((BD_S *)a->y)[i] = ((const BD_S *)a->x)[off];
}

BD_HD static inline void BD_KN(avgpool_fwd)(int64_t i, const struct bd_avgpool_args *a)
{
        int64_t n = i / a->s.C, c = i % a->s.C;
        BD_T acc = 0;
        for (int64_t h = 0; h < a->s.H; h++)
                for (int64_t w = 0; w < a->s.W; w++)
                        acc += LD(a->src, bd_off4(&a->s, n, c, h, w));
        ST(a->dst, i, acc / (BD_T)(a->s.H * a->s.W));
}

BD_HD static inline void BD_KN(select_fwd)(int64_t i, const struct bd_select_args *a)
{
        int64_t hw = a->s.H * a->s.W, n = i / hw, r = i % hw;
        int32_t c = a->idx[n];
        ((BD_S *)a->dst)[i] = c >= 0 && c < a->s.C ?
                ((const BD_S *)a->src)[bd_off4(&a->s, n, c, r / a->s.W, r % a->s.W)] : (BD_S)(BD_T)0;
}

BD_HD static inline void BD_KN(label_mask)(int64_t i, const struct bd_label_mask_args *a)
{
        int32_t l = a->label[i / a->cols];
        ST(a->y, i, l >= a->lo && l <= a->hi ? (BD_T)1 : (BD_T)0);
}

/* ---- 4-D ------------------------------------------------------------------- */

BD_HD static inline void BD_KN(affine)(int64_t i, int64_t n, int64_t c, int64_t h, int64_t w,
                                       const struct bd_affine_args *a)
{
        BD_T v = LD(a->x, i);
        if (a->scale)
                v *= LDP(a->scale, c);
        if (a->shift)
                v += LDP(a->shift, c);
        if (a->relu && !(v > 0))
                v = 0;
        ST(a->y, i, v);
}

BD_HD static inline void BD_KN(affine_bwd)(int64_t i, int64_t n, int64_t c, int64_t h, int64_t w,
                                           const struct bd_affine_bwd_args *a)
{
        BD_T g = LD(a->dy, i);
        if (a->y && !(LD(a->y, i) > 0))
                g = 0;
        if (a->scale)
                g *= LDP(a->scale, c);
        ST(a->dx, i, g);
}

BD_HD static inline void BD_KN(upsample_fwd)(int64_t i, int64_t n, int64_t c, int64_t h, int64_t w,
                                             const struct bd_upsample_args *a)
{
        ((BD_S *)a->dst)[i] = ((const BD_S *)a->src)[bd_off4(&a->o, n, c, h >> 1, w >> 1)];
}

BD_HD static inline void BD_KN(upsample_bwd)(int64_t i, int64_t n, int64_t c, int64_t h, int64_t w,
                                             const struct bd_upsample_args *a)
{
        BD_T v = LD(a->src, bd_off4(&a->o, n, c, 2 * h, 2 * w)) + LD(a->src, bd_off4(&a->o, n, c, 2 * h, 2 * w + 1)) +
                 LD(a->src, bd_off4(&a->o, n, c, 2 * h + 1, 2 * w)) +
                 LD(a->src, bd_off4(&a->o, n, c, 2 * h + 1, 2 * w + 1));
        ST(a->dst, i, v);
}

BD_HD static inline void BD_KN(concat)(int64_t i, int64_t n, int64_t c, int64_t h, int64_t w,
                                       const struct bd_concat_args *a)
{
        int64_t o = bd_off4(&a->o, n, c + a->c_off, h, w);
        if (a->split)
                ((BD_S *)a->part)[i] = ((const BD_S *)a->whole)[o];
        else
                ((BD_S *)a->whole)[o] = ((const BD_S *)a->part)[i];
}

BD_HD static inline void BD_KN(relayout)(int64_t i, int64_t n, int64_t c, int64_t h, int64_t w,
                                         const struct bd_relayout_args *a)
{
        ((BD_S *)a->y)[bd_off4(&a->o, n, c, h, w)] = ((const BD_S *)a->x)[i];
}

BD_HD static inline void BD_KN(avgpool_bwd)(int64_t i, int64_t n, int64_t c, int64_t h, int64_t w,
                                            const struct bd_avgpool_args *a)
{
        ST(a->dst, i, LD(a->src, n * a->s.C + c) / (BD_T)(a->s.H * a->s.W));
}

BD_HD static inline void BD_KN(select_bwd)(int64_t i, int64_t n, int64_t c, int64_t h, int64_t w,
                                           const struct bd_select_args *a)
{
        BD_T v = c == a->idx[n] ? LD(a->src, (n * a->s.H + h) * a->s.W + w) : (BD_T)0;
        if (a->accumulate)
                v += LD(a->dst, i);
        ST(a->dst, i, v);
}

BD_HD static inline void BD_KN(bn_sync_bwd)(int64_t i, int64_t n, int64_t c, int64_t h, int64_t w,
                                            const struct bd_bn_sync_bwd_args *a)
{
        BD_T g = a->y && !(LD(a->y, i) > 0) ? (BD_T)0 : LD(a->dy, i);
        BD_T inv = LDP(a->invstd, c), xh = (LD(a->x, i) - LDP(a->mean, c)) * inv;
        BD_T rM = (BD_T)(1.0 / a->sums[2 * a->s.C]);
        BD_T v = LDP(a->gamma, c) * inv * (g - (BD_T)a->sums[c] * rM - xh * (BD_T)a->sums[a->s.C + c] * rM);
        if (a->accumulate)
                v += LD(a->dx, i);
        ST(a->dx, i, v);
}

/* ---- channel sums ---------------------------------------------------------- */

BD_HD static inline void BD_KN(c_bn_sums)(int64_t i, int64_t c, const struct bd_bn_sums_args *a, double *v0,
                                          double *v1)
{
        double x = (double)LD(a->x, i);
        *v0 = x;
        *v1 = x * x;
}

BD_HD static inline void BD_KN(c_bn_grad_sums)(int64_t i, int64_t c, const struct bd_bn_grad_sums_args *a,
                                               double *v0, double *v1)
{
        BD_T g = a->y && !(LD(a->y, i) > 0) ? (BD_T)0 : LD(a->dy, i);
        BD_T xh = (LD(a->x, i) - LDP(a->mean, c)) * LDP(a->invstd, c);
        *v0 = (double)g;
        *v1 = (double)(g * xh);
}

/* ---- reducers -------------------------------------------------------------- */

BD_HD static inline BD_T BD_KN(r_sum)(int64_t i, const struct bd_reduce_args *a)
{
        return LD(a->x, i);
}

BD_HD static inline BD_T BD_KN(r_sumsq)(int64_t i, const struct bd_reduce_args *a)
{
        BD_T v = LD(a->x, i);
        return v * v;
}

/* inf - inf and nan - nan are nan, which is the only value unequal to itself */
BD_HD static inline BD_T BD_KN(r_nonfinite)(int64_t i, const struct bd_reduce_args *a)
{
        BD_T v = LD(a->x, i);
        BD_T z = v - v;
        return z != z ? (BD_T)1 : (BD_T)0;
}

#undef BD_KN
#undef LD
#undef ST
#undef LDP
#undef STP
#undef BD_EXP
#undef BD_LOG
#undef BD_LOG1P
#undef BD_FABS
#undef BD_SQRT

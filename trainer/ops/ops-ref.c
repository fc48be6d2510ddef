/* ops-ref.c: reference loops for convolution, batch norm, max pooling and
 * fully connected layers, in double precision (see ops-ref.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "ops-ref.h"

static inline double ld(const struct bd_tensor *t, int64_t i)
{
        return t->dtype == BD_F64 ? ((const double *)t->data)[i] : ((const float *)t->data)[i];
}

static inline void st(const struct bd_tensor *t, int64_t i, double v)
{
        if (t->dtype == BD_F64)
                ((double *)t->data)[i] = v;
        else
                ((float *)t->data)[i] = (float)v;
}

static inline void add(const struct bd_tensor *t, int64_t i, double v)
{
        st(t, i, ld(t, i) + v);
}

static void zero(const struct bd_tensor *t)
{
        memset(t->data, 0, bd_tensor_bytes(t));
}

static struct bd_shape4 shape4(const struct bd_tensor *t)
{
        struct bd_shape4 s = { t->dims[0], t->dims[1], t->dims[2], t->dims[3], t->layout };
        return s;
}

/* ---- convolution --------------------------------------------------------------
 * One relation serves the three passes and both directions.  The "small" side
 * is a normal convolution's output (a transposed convolution's input), the
 * "big" side the other one; weights are always w[small channel][big channel in
 * group][kh][kw], which is PyTorch's layout for both Conv2d and
 * ConvTranspose2d.  Small position (oh, ow) meets big position
 * (oh sh - ph + kh dh, ow sw - pw + kw dw). */

enum rel_mode { TO_SMALL, TO_BIG, TO_W };

static void conv_relation(const struct bd_conv_desc *d, enum rel_mode mode, const struct bd_tensor *small,
                          const struct bd_tensor *big, const struct bd_tensor *w)
{
        struct bd_shape4 ss = shape4(small), bs = shape4(big);
        int64_t G = d->groups, SCg = ss.C / G, BCg = bs.C / G;
        int64_t N = ss.N;

        if (mode == TO_SMALL) {
#pragma omp parallel for collapse(2) schedule(static)
                for (int64_t n = 0; n < N; n++)
                        for (int64_t sc = 0; sc < ss.C; sc++) {
                                int64_t g = sc / SCg;
                                for (int64_t oh = 0; oh < ss.H; oh++)
                                        for (int64_t ow = 0; ow < ss.W; ow++) {
                                                double acc = 0;
                                                for (int64_t bl = 0; bl < BCg; bl++)
                                                        for (int64_t kh = 0; kh < d->kh; kh++) {
                                                                int64_t ih = oh * d->sh - d->ph + kh * d->dh;
                                                                if (ih < 0 || ih >= bs.H)
                                                                        continue;
                                                                for (int64_t kw = 0; kw < d->kw; kw++) {
                                                                        int64_t iw = ow * d->sw - d->pw + kw * d->dw;
                                                                        if (iw < 0 || iw >= bs.W)
                                                                                continue;
                                                                        acc += ld(big, bd_off4(&bs, n, g * BCg + bl, ih, iw)) *
                                                                               ld(w, ((sc * BCg + bl) * d->kh + kh) * d->kw + kw);
                                                                }
                                                        }
                                                add(small, bd_off4(&ss, n, sc, oh, ow), acc);
                                        }
                        }
        } else if (mode == TO_BIG) {
                /* gather form: each big element collects from the small ones */
#pragma omp parallel for collapse(2) schedule(static)
                for (int64_t n = 0; n < N; n++)
                        for (int64_t bc = 0; bc < bs.C; bc++) {
                                int64_t g = bc / BCg, bl = bc % BCg;
                                for (int64_t ih = 0; ih < bs.H; ih++)
                                        for (int64_t iw = 0; iw < bs.W; iw++) {
                                                double acc = 0;
                                                for (int64_t kh = 0; kh < d->kh; kh++) {
                                                        int64_t t = ih + d->ph - kh * d->dh;
                                                        if (t < 0 || t % d->sh || t / d->sh >= ss.H)
                                                                continue;
                                                        int64_t oh = t / d->sh;
                                                        for (int64_t kw = 0; kw < d->kw; kw++) {
                                                                int64_t u = iw + d->pw - kw * d->dw;
                                                                if (u < 0 || u % d->sw || u / d->sw >= ss.W)
                                                                        continue;
                                                                int64_t ow = u / d->sw;
                                                                for (int64_t sl = 0; sl < SCg; sl++) {
                                                                        int64_t sc = g * SCg + sl;
                                                                        acc += ld(small, bd_off4(&ss, n, sc, oh, ow)) *
                                                                               ld(w, ((sc * BCg + bl) * d->kh + kh) * d->kw + kw);
                                                                }
                                                        }
                                                }
                                                add(big, bd_off4(&bs, n, bc, ih, iw), acc);
                                        }
                        }
        } else {
#pragma omp parallel for collapse(2) schedule(static)
                for (int64_t sc = 0; sc < ss.C; sc++)
                        for (int64_t bl = 0; bl < BCg; bl++) {
                                int64_t g = sc / SCg;
                                for (int64_t kh = 0; kh < d->kh; kh++)
                                        for (int64_t kw = 0; kw < d->kw; kw++) {
                                                double acc = 0;
                                                for (int64_t n = 0; n < N; n++)
                                                        for (int64_t oh = 0; oh < ss.H; oh++) {
                                                                int64_t ih = oh * d->sh - d->ph + kh * d->dh;
                                                                if (ih < 0 || ih >= bs.H)
                                                                        continue;
                                                                for (int64_t ow = 0; ow < ss.W; ow++) {
                                                                        int64_t iw = ow * d->sw - d->pw + kw * d->dw;
                                                                        if (iw < 0 || iw >= bs.W)
                                                                                continue;
                                                                        acc += ld(small, bd_off4(&ss, n, sc, oh, ow)) *
                                                                               ld(big, bd_off4(&bs, n, g * BCg + bl, ih, iw));
                                                                }
                                                        }
                                                add(w, ((sc * BCg + bl) * d->kh + kh) * d->kw + kw, acc);
                                        }
                        }
        }
}

/* per-channel sum of a feature map (bias gradient) added into db */
static void channel_sum_add(const struct bd_tensor *t, const struct bd_tensor *db)
{
        struct bd_shape4 s = shape4(t);
        for (int64_t c = 0; c < s.C; c++) {
                double acc = 0;
                for (int64_t n = 0; n < s.N; n++)
                        for (int64_t h = 0; h < s.H; h++)
                                for (int64_t w = 0; w < s.W; w++)
                                        acc += ld(t, bd_off4(&s, n, c, h, w));
                add(db, c, acc);
        }
}

int bd_ref_conv_fwd(struct bd_backend *be, const struct bd_conv_desc *d, const struct bd_tensor *x,
                    const struct bd_tensor *w, const struct bd_tensor *b, struct bd_tensor *y)
{
        zero(y);
        if (d->transposed)
                conv_relation(d, TO_BIG, x, y, w);
        else
                conv_relation(d, TO_SMALL, y, x, w);
        if (b) {
                struct bd_shape4 s = shape4(y);
                for (int64_t n = 0; n < s.N; n++)
                        for (int64_t c = 0; c < s.C; c++)
                                for (int64_t h = 0; h < s.H; h++)
                                        for (int64_t ww = 0; ww < s.W; ww++)
                                                add(y, bd_off4(&s, n, c, h, ww), ld(b, c));
        }
        return 0;
}

int bd_ref_conv_bwd(struct bd_backend *be, const struct bd_conv_desc *d, const struct bd_tensor *x,
                    const struct bd_tensor *w, const struct bd_tensor *dy, struct bd_tensor *dx, struct bd_tensor *dw,
                    struct bd_tensor *db, unsigned flags)
{
        if (dx) {
                if (!(flags & BD_ACC_DX))
                        zero(dx);
                if (d->transposed)
                        conv_relation(d, TO_SMALL, dx, dy, w);
                else
                        conv_relation(d, TO_BIG, dy, dx, w);
        }
        if (dw) {
                if (!(flags & BD_ACC_DW))
                        zero(dw);
                if (d->transposed)
                        conv_relation(d, TO_W, x, dy, dw);
                else
                        conv_relation(d, TO_W, dy, x, dw);
        }
        if (db) {
                if (!(flags & BD_ACC_DW))
                        zero(db);
                channel_sum_add(dy, db);
        }
        return 0;
}

/* ---- batch norm ------------------------------------------------------------------ */

int bd_ref_bn_fwd(struct bd_backend *be, double eps, int relu, const struct bd_tensor *x,
                  const struct bd_tensor *gamma, const struct bd_tensor *beta, struct bd_tensor *y,
                  struct bd_tensor *mean, struct bd_tensor *var)
{
        struct bd_shape4 s = shape4(x);
        double M = (double)(s.N * s.H * s.W);
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < s.C; c++) {
                double sum = 0, sq = 0;
                for (int64_t n = 0; n < s.N; n++)
                        for (int64_t h = 0; h < s.H; h++)
                                for (int64_t w = 0; w < s.W; w++)
                                        sum += ld(x, bd_off4(&s, n, c, h, w));
                double mu = sum / M;
                for (int64_t n = 0; n < s.N; n++)
                        for (int64_t h = 0; h < s.H; h++)
                                for (int64_t w = 0; w < s.W; w++) {
                                        double v = ld(x, bd_off4(&s, n, c, h, w)) - mu;
                                        sq += v * v;
                                }
                double vr = sq / M, inv = 1.0 / sqrt(vr + eps), g = ld(gamma, c), bb = beta ? ld(beta, c) : 0;
                st(mean, c, mu);
                st(var, c, vr);
                for (int64_t n = 0; n < s.N; n++)
                        for (int64_t h = 0; h < s.H; h++)
                                for (int64_t w = 0; w < s.W; w++) {
                                        int64_t o = bd_off4(&s, n, c, h, w);
                                        double v = (ld(x, o) - mu) * inv * g + bb;
                                        st(y, o, relu && v < 0 ? 0 : v);
                                }
        }
        return 0;
}

int bd_ref_bn_bwd(struct bd_backend *be, double eps, int relu, const struct bd_tensor *x, const struct bd_tensor *y,
                  const struct bd_tensor *dy, const struct bd_tensor *gamma, const struct bd_tensor *mean,
                  const struct bd_tensor *var, struct bd_tensor *dx, struct bd_tensor *dgamma,
                  struct bd_tensor *dbeta, unsigned flags)
{
        struct bd_shape4 s = shape4(x);
        double M = (double)(s.N * s.H * s.W);
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < s.C; c++) {
                double mu = ld(mean, c), inv = 1.0 / sqrt(ld(var, c) + eps), g = ld(gamma, c);
                double sdy = 0, sdyx = 0;
                for (int64_t n = 0; n < s.N; n++)
                        for (int64_t h = 0; h < s.H; h++)
                                for (int64_t w = 0; w < s.W; w++) {
                                        int64_t o = bd_off4(&s, n, c, h, w);
                                        double gy = relu && !(ld(y, o) > 0) ? 0 : ld(dy, o);
                                        sdy += gy;
                                        sdyx += gy * (ld(x, o) - mu) * inv;
                                }
                for (int64_t n = 0; n < s.N; n++)
                        for (int64_t h = 0; h < s.H; h++)
                                for (int64_t w = 0; w < s.W; w++) {
                                        int64_t o = bd_off4(&s, n, c, h, w);
                                        double gy = relu && !(ld(y, o) > 0) ? 0 : ld(dy, o);
                                        double xh = (ld(x, o) - mu) * inv;
                                        double v = g * inv * (gy - sdy / M - xh * sdyx / M);
                                        if (flags & BD_ACC_DX)
                                                v += ld(dx, o);
                                        st(dx, o, v);
                                }
                if (dgamma)
                        st(dgamma, c, sdyx + ((flags & BD_ACC_DW) ? ld(dgamma, c) : 0));
                if (dbeta)
                        st(dbeta, c, sdy + ((flags & BD_ACC_DW) ? ld(dbeta, c) : 0));
        }
        return 0;
}

/* ---- max pooling ------------------------------------------------------------------ */

int bd_ref_pool_fwd(struct bd_backend *be, const struct bd_pool_desc *d, const struct bd_tensor *x,
                    struct bd_tensor *y, struct bd_tensor *ws)
{
        int64_t n1 = bd_tensor_numel(y);
        int r = bd_tensor_resize(be, ws, BD_I32, BD_NCHW, 1, &n1);
        if (r < 0)
                return r;
        struct bd_shape4 xs = shape4(x), ys = shape4(y);
        int32_t *arg = ws->data;
#pragma omp parallel for collapse(2) schedule(static)
        for (int64_t n = 0; n < ys.N; n++)
                for (int64_t c = 0; c < ys.C; c++)
                        for (int64_t oh = 0; oh < ys.H; oh++)
                                for (int64_t ow = 0; ow < ys.W; ow++) {
                                        double best = -INFINITY;
                                        int64_t at = -1;
                                        for (int64_t kh = 0; kh < d->kh; kh++) {
                                                int64_t ih = oh * d->sh - d->ph + kh;
                                                if (ih < 0 || ih >= xs.H)
                                                        continue;
                                                for (int64_t kw = 0; kw < d->kw; kw++) {
                                                        int64_t iw = ow * d->sw - d->pw + kw;
                                                        if (iw < 0 || iw >= xs.W)
                                                                continue;
                                                        int64_t o = bd_off4(&xs, n, c, ih, iw);
                                                        double v = ld(x, o);
                                                        if (at < 0 || v > best || v != v) {
                                                                best = v;
                                                                at = o;
                                                        }
                                                }
                                        }
                                        int64_t yo = bd_off4(&ys, n, c, oh, ow);
                                        st(y, yo, best);
                                        arg[yo] = (int32_t)at;
                                }
        return 0;
}

int bd_ref_pool_bwd(struct bd_backend *be, const struct bd_pool_desc *d, const struct bd_tensor *x,
                    const struct bd_tensor *dy, const struct bd_tensor *ws, struct bd_tensor *dx)
{
        zero(dx);
        const int32_t *arg = ws->data;
        int64_t n = bd_tensor_numel(dy);
        for (int64_t i = 0; i < n; i++)
                if (arg[i] >= 0)
                        add(dx, arg[i], ld(dy, i));
        return 0;
}

/* ---- fully connected -------------------------------------------------------------- */

int bd_ref_fc_fwd(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *w,
                  const struct bd_tensor *b, struct bd_tensor *y)
{
        int64_t N = x->dims[0], K = x->dims[1], O = w->dims[0];
#pragma omp parallel for collapse(2) schedule(static)
        for (int64_t n = 0; n < N; n++)
                for (int64_t o = 0; o < O; o++) {
                        double acc = b ? ld(b, o) : 0;
                        for (int64_t k = 0; k < K; k++)
                                acc += ld(x, n * K + k) * ld(w, o * K + k);
                        st(y, n * O + o, acc);
                }
        return 0;
}

int bd_ref_fc_bwd(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *w,
                  const struct bd_tensor *dy, struct bd_tensor *dx, struct bd_tensor *dw, struct bd_tensor *db,
                  unsigned flags)
{
        int64_t N = x->dims[0], K = x->dims[1], O = w->dims[0];
        if (dx) {
#pragma omp parallel for collapse(2) schedule(static)
                for (int64_t n = 0; n < N; n++)
                        for (int64_t k = 0; k < K; k++) {
                                double acc = (flags & BD_ACC_DX) ? ld(dx, n * K + k) : 0;
                                for (int64_t o = 0; o < O; o++)
                                        acc += ld(dy, n * O + o) * ld(w, o * K + k);
                                st(dx, n * K + k, acc);
                        }
        }
        if (dw) {
#pragma omp parallel for collapse(2) schedule(static)
                for (int64_t o = 0; o < O; o++)
                        for (int64_t k = 0; k < K; k++) {
                                double acc = (flags & BD_ACC_DW) ? ld(dw, o * K + k) : 0;
                                for (int64_t n = 0; n < N; n++)
                                        acc += ld(dy, n * O + o) * ld(x, n * K + k);
                                st(dw, o * K + k, acc);
                        }
        }
        if (db) {
                for (int64_t o = 0; o < O; o++) {
                        double acc = (flags & BD_ACC_DW) ? ld(db, o) : 0;
                        for (int64_t n = 0; n < N; n++)
                                acc += ld(dy, n * O + o);
                        st(db, o, acc);
                }
        }
        return 0;
}

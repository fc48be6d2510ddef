/* ops.c: operand checks, output shapes and dispatch to the backend. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ops.h"

#define TS(t, b) bd_tensor_str(t, b, sizeof(b))

/* element type of per-channel vectors next to activations of type dt */
static enum bd_dtype param_dtype(enum bd_dtype dt)
{
        return dt == BD_F16 || dt == BD_BF16 ? BD_F32 : dt;
}

static int bad(struct bd_backend *be, const char *op, const char *what, const struct bd_tensor *t)
{
        char b[128];
        return bd_err_set(&be->err, -EINVAL, "%s: %s %s", op, what, t ? TS(t, b) : "missing");
}

static const char *dev_name(enum bd_device d)
{
        return d == BD_CUDA ? "GPU" : d == BD_PLAN ? "plan backend" : "host";
}

static int check_dev(struct bd_backend *be, const char *op, const char *name, const struct bd_tensor *t)
{
        if (!t || !t->data)
                return bd_err_set(&be->err, -EINVAL, "%s: %s is missing", op, name);
        if (t->dev != be->dev)
                return bd_err_set(&be->err, -EINVAL, "%s: %s is on the %s, the backend on the %s", op, name,
                                  dev_name(t->dev), dev_name(be->dev));
        if (t->dtype == BD_F64 && be->dev == BD_CUDA)
                return bd_err_set(&be->err, -EINVAL, "%s: %s: f64 is CPU-only", op, name);
        if ((t->dtype == BD_F16 || t->dtype == BD_BF16) && be->dev == BD_CPU)
                return bd_err_set(&be->err, -EINVAL, "%s: %s: %s is CUDA-only (mixed precision)", op, name,
                                  bd_dtype_name(t->dtype));
        return 0;
}

/* same shape, layout and element type */
static int check_same(struct bd_backend *be, const char *op, const char *an, const struct bd_tensor *a,
                      const char *bn, const struct bd_tensor *b)
{
        int r = check_dev(be, op, bn, b);
        if (r < 0)
                return r;
        if (!bd_tensor_same_shape(a, b) || a->dtype != b->dtype || (a->ndim == 4 && a->layout != b->layout)) {
                char x[128], y[128];
                return bd_err_set(&be->err, -EINVAL, "%s: %s %s and %s %s differ", op, an, TS(a, x), bn, TS(b, y));
        }
        return 0;
}

/* a per-channel vector of C values of type dt */
static int check_vec(struct bd_backend *be, const char *op, const char *name, const struct bd_tensor *v, int64_t C,
                     enum bd_dtype dt)
{
        int r = check_dev(be, op, name, v);
        if (r < 0)
                return r;
        if (v->ndim != 1 || v->dims[0] != C || v->dtype != dt) {
                char b[128];
                return bd_err_set(&be->err, -EINVAL, "%s: %s is %s, expected (%lld) %s", op, name, TS(v, b),
                                  (long long)C, bd_dtype_name(dt));
        }
        return 0;
}

static int check_fmap(struct bd_backend *be, const char *op, const char *name, const struct bd_tensor *x)
{
        int r = check_dev(be, op, name, x);
        if (r < 0)
                return r;
        if (x->ndim != 4)
                return bad(be, op, "expects a feature map (N, C, H, W), got", x);
        if (x->dtype == BD_I32)
                return bad(be, op, "expects floating point, got", x);
        return 0;
}

/* resize out like `like` unless accumulating into it, then it must match */
static int out_like(struct bd_backend *be, const char *op, const char *name, struct bd_tensor *out,
                    const struct bd_tensor *like, int accumulate)
{
        if (accumulate)
                return check_same(be, op, "input", like, name, out);
        if (out->data && out->cap == 0) {
                /* a view (parameter gradient): shape must already match */
                if (!bd_tensor_same_shape(out, like) || out->dtype != like->dtype) {
                        char a[128], b[128];
                        return bd_err_set(&be->err, -EINVAL, "%s: %s %s does not match %s", op, name, TS(out, a),
                                          TS(like, b));
                }
                return 0;
        }
        return bd_tensor_resize_like(be, out, like);
}

static struct bd_shape4 shape4(const struct bd_tensor *t)
{
        struct bd_shape4 s;
        if (t->ndim == 4) {
                s.N = t->dims[0];
                s.C = t->dims[1];
                s.H = t->dims[2];
                s.W = t->dims[3];
                s.layout = t->layout;
        } else {        /* (N, C) as (N, C, 1, 1) */
                s.N = t->dims[0];
                s.C = t->ndim > 1 ? t->dims[1] : 1;
                s.H = s.W = 1;
                s.layout = BD_NCHW;
        }
        return s;
}

int bd_op_err_prefix(struct bd_backend *be, int r, const char *what)
{
        char tmp[sizeof(be->err.msg)];
        memcpy(tmp, be->err.msg, sizeof(tmp));
        return bd_err_set(&be->err, r, "%s: %s", what, tmp);
}

/* ---- convolution ------------------------------------------------------------- */

int bd_conv_out_dims(const struct bd_conv_desc *d, const struct bd_tensor *x, const struct bd_tensor *w,
                     int64_t ret_dims[4], struct bd_err *err)
{
        char a[128], b[128];
        if (w->ndim != 4 || w->dims[2] != d->kh || w->dims[3] != d->kw)
                return bd_err_set(err, -EINVAL, "conv: weights %s do not match kernel %lldx%lld", TS(w, a),
                                  (long long)d->kh, (long long)d->kw);
        if (d->groups < 1 || d->sh < 1 || d->sw < 1 || d->dh < 1 || d->dw < 1 || d->ph < 0 || d->pw < 0)
                return bd_err_set(err, -EINVAL, "conv: bad stride, padding, dilation or groups");
        int64_t C = x->dims[1], O, OH, OW;
        if (!d->transposed) {
                if (w->dims[1] * d->groups != C || w->dims[0] % d->groups)
                        return bd_err_set(err, -EINVAL, "conv: input %s does not match weights %s (groups %lld)",
                                          TS(x, a), TS(w, b), (long long)d->groups);
                O = w->dims[0];
                OH = (x->dims[2] + 2 * d->ph - d->dh * (d->kh - 1) - 1) / d->sh + 1;
                OW = (x->dims[3] + 2 * d->pw - d->dw * (d->kw - 1) - 1) / d->sw + 1;
                if (x->dims[2] + 2 * d->ph < d->dh * (d->kh - 1) + 1 || x->dims[3] + 2 * d->pw < d->dw * (d->kw - 1) + 1)
                        OH = OW = 0;
        } else {
                if (w->dims[0] != C || C % d->groups)
                        return bd_err_set(err, -EINVAL,
                                          "transposed conv: input %s does not match weights %s (groups %lld)",
                                          TS(x, a), TS(w, b), (long long)d->groups);
                O = w->dims[1] * d->groups;
                OH = (x->dims[2] - 1) * d->sh - 2 * d->ph + d->dh * (d->kh - 1) + 1;
                OW = (x->dims[3] - 1) * d->sw - 2 * d->pw + d->dw * (d->kw - 1) + 1;
        }
        if (OH < 1 || OW < 1)
                return bd_err_set(err, -EINVAL, "conv: input %s is too small for a %lldx%lld kernel", TS(x, a),
                                  (long long)d->kh, (long long)d->kw);
        ret_dims[0] = x->dims[0];
        ret_dims[1] = O;
        ret_dims[2] = OH;
        ret_dims[3] = OW;
        return 0;
}

static int conv_check(struct bd_backend *be, const struct bd_conv_desc *d, const struct bd_tensor *x,
                      const struct bd_tensor *w, const struct bd_tensor *b, int64_t ydims[4])
{
        const char *op = d->transposed ? "transposed conv" : "conv";
        int r;
        if ((r = check_fmap(be, op, "input", x)) < 0 || (r = check_dev(be, op, "weights", w)) < 0)
                return r;
        if (w->dtype != param_dtype(x->dtype))
                return bad(be, op, "weights have the wrong element type:", w);
        if ((r = bd_conv_out_dims(d, x, w, ydims, &be->err)) < 0)
                return r;
        if (b && (r = check_vec(be, op, "bias", b, ydims[1], w->dtype)) < 0)
                return r;
        return 0;
}

int bd_op_conv_fwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                   const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *b, struct bd_tensor *y,
                   uint64_t wver)
{
        int64_t yd[4];
        int r = conv_check(be, d, x, w, b, yd);
        if (r < 0)
                return r;
        if ((r = bd_tensor_resize(be, y, x->dtype, be->ops->pref_layout(be, yd[1], x->dtype), 4, yd)) < 0)
                return r;
        be->count.convolutions++;
        return be->ops->conv_fwd(be, d, pc, x, w, b, y, wver);
}

int bd_op_conv_bwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                   const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *dy, struct bd_tensor *dx,
                   struct bd_tensor *dw, struct bd_tensor *db, unsigned flags, uint64_t wver)
{
        const char *op = d->transposed ? "transposed conv backward" : "conv backward";
        int64_t yd[4];
        int r = conv_check(be, d, x, w, NULL, yd);
        if (r < 0)
                return r;
        if ((r = check_fmap(be, op, "output gradient", dy)) < 0)
                return r;
        struct bd_tensor ylike = bd_tensor_view(NULL, be->dev, x->dtype, dy->layout, 4, yd);
        if (!bd_tensor_same_shape(dy, &ylike) || dy->dtype != x->dtype)
                return bad(be, op, "output gradient has the wrong shape:", dy);
        if (dx && (r = out_like(be, op, "input gradient", dx, x, flags & BD_ACC_DX)) < 0)
                return r;
        if (dw && (r = out_like(be, op, "weight gradient", dw, w, flags & BD_ACC_DW)) < 0)
                return r;
        if (db) {
                if ((r = check_vec(be, op, "bias gradient", db, yd[1], w->dtype)) < 0)
                        return r;
        }
        if (!dx && !dw && !db)
                return 0;
        be->count.convolutions++;
        return be->ops->conv_bwd(be, d, pc, x, w, dy, dx, dw, db, flags, wver);
}

/* ---- batch norm -------------------------------------------------------------- */

static int bn_check(struct bd_backend *be, const char *op, const struct bd_tensor *x, const struct bd_tensor *gamma,
                    const struct bd_tensor *beta)
{
        int r;
        if ((r = check_fmap(be, op, "input", x)) < 0)
                return r;
        if ((r = check_vec(be, op, "weight", gamma, BD_C(x), param_dtype(x->dtype))) < 0)
                return r;
        if (beta && (r = check_vec(be, op, "bias", beta, BD_C(x), param_dtype(x->dtype))) < 0)
                return r;
        if (BD_N(x) * BD_H(x) * BD_W(x) < 2)
                return bad(be, op, "needs more than one value per channel in training, got", x);
        return 0;
}

int bd_op_bn_fwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                 const struct bd_tensor *gamma, const struct bd_tensor *beta, struct bd_tensor *y,
                 struct bd_tensor *mean, struct bd_tensor *var, struct bd_tensor *ws)
{
        int r;
        if ((r = bn_check(be, "batch norm", x, gamma, beta)) < 0)
                return r;
        if ((r = bd_tensor_resize_like(be, y, x)) < 0 ||
            (r = bd_tensor_resize(be, mean, gamma->dtype, BD_NCHW, 1, gamma->dims)) < 0 ||
            (r = bd_tensor_resize(be, var, gamma->dtype, BD_NCHW, 1, gamma->dims)) < 0)
                return r;
        return be->ops->bn_fwd(be, pc, eps, relu, x, gamma, beta, y, mean, var, ws);
}

int bd_op_bn_bwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                 const struct bd_tensor *y, const struct bd_tensor *dy, const struct bd_tensor *gamma,
                 const struct bd_tensor *mean, const struct bd_tensor *var, const struct bd_tensor *ws,
                 struct bd_tensor *dx, struct bd_tensor *dgamma, struct bd_tensor *dbeta, unsigned flags)
{
        const char *op = "batch norm backward";
        int r;
        if ((r = bn_check(be, op, x, gamma, NULL)) < 0 || (r = check_same(be, op, "input", x, "output gradient", dy)) < 0 ||
            (r = check_same(be, op, "input", x, "output", y)) < 0 ||
            (r = check_vec(be, op, "mean", mean, BD_C(x), gamma->dtype)) < 0 ||
            (r = check_vec(be, op, "variance", var, BD_C(x), gamma->dtype)) < 0)
                return r;
        if ((r = out_like(be, op, "input gradient", dx, x, flags & BD_ACC_DX)) < 0)
                return r;
        if (dgamma && (r = check_vec(be, op, "weight gradient", dgamma, BD_C(x), gamma->dtype)) < 0)
                return r;
        if (dbeta && (r = check_vec(be, op, "bias gradient", dbeta, BD_C(x), gamma->dtype)) < 0)
                return r;
        return be->ops->bn_bwd(be, pc, eps, relu, x, y, dy, gamma, mean, var, ws, dx, dgamma, dbeta, flags);
}

/* ---- pooling ----------------------------------------------------------------- */

static int pool_dims(struct bd_backend *be, const struct bd_pool_desc *d, const struct bd_tensor *x, int64_t yd[4])
{
        if (d->kh < 1 || d->kw < 1 || d->sh < 1 || d->sw < 1 || d->ph < 0 || d->pw < 0 || 2 * d->ph > d->kh ||
            2 * d->pw > d->kw)
                return bd_err_set(&be->err, -EINVAL, "max pool: bad kernel, stride or padding");
        yd[0] = x->dims[0];
        yd[1] = x->dims[1];
        yd[2] = (x->dims[2] + 2 * d->ph - d->kh) / d->sh + 1;
        yd[3] = (x->dims[3] + 2 * d->pw - d->kw) / d->sw + 1;
        if (x->dims[2] + 2 * d->ph < d->kh || x->dims[3] + 2 * d->pw < d->kw)
                return bad(be, "max pool", "input is smaller than the window:", x);
        return 0;
}

int bd_op_pool_fwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                   const struct bd_tensor *x, struct bd_tensor *y, struct bd_tensor *ws)
{
        int64_t yd[4];
        int r;
        if ((r = check_fmap(be, "max pool", "input", x)) < 0 || (r = pool_dims(be, d, x, yd)) < 0)
                return r;
        if ((r = bd_tensor_resize(be, y, x->dtype, x->layout, 4, yd)) < 0)
                return r;
        return be->ops->pool_fwd(be, d, pc, x, y, ws);
}

int bd_op_pool_bwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                   const struct bd_tensor *x, const struct bd_tensor *y, const struct bd_tensor *dy,
                   const struct bd_tensor *ws, struct bd_tensor *dx)
{
        const char *op = "max pool backward";
        int64_t yd[4];
        int r;
        if ((r = check_fmap(be, op, "input", x)) < 0 || (r = pool_dims(be, d, x, yd)) < 0)
                return r;
        if ((r = check_same(be, op, "output", y, "output gradient", dy)) < 0)
                return r;
        struct bd_tensor ylike = bd_tensor_view(NULL, be->dev, x->dtype, x->layout, 4, yd);
        if (!bd_tensor_same_shape(&ylike, y))
                return bad(be, op, "output has the wrong shape:", y);
        if ((r = bd_tensor_resize_like(be, dx, x)) < 0)
                return r;
        return be->ops->pool_bwd(be, d, pc, x, y, dy, ws, dx);
}

/* ---- fully connected --------------------------------------------------------- */

static int fc_check(struct bd_backend *be, const char *op, const struct bd_tensor *x, const struct bd_tensor *w,
                    const struct bd_tensor *b)
{
        int r;
        if ((r = check_dev(be, op, "input", x)) < 0 || (r = check_dev(be, op, "weights", w)) < 0)
                return r;
        if (x->ndim != 2)
                return bad(be, op, "expects an input (N, K), got", x);
        if (w->ndim != 2 || w->dims[1] != x->dims[1] || w->dtype != param_dtype(x->dtype)) {
                char a[128], c[128];
                return bd_err_set(&be->err, -EINVAL, "%s: input %s does not match weights %s", op, TS(x, a), TS(w, c));
        }
        if (b && (r = check_vec(be, op, "bias", b, w->dims[0], w->dtype)) < 0)
                return r;
        return 0;
}

int bd_op_fc_fwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                 const struct bd_tensor *w, const struct bd_tensor *b, struct bd_tensor *y, uint64_t wver)
{
        int r;
        if ((r = fc_check(be, "fully connected", x, w, b)) < 0)
                return r;
        int64_t yd[2] = { x->dims[0], w->dims[0] };
        if ((r = bd_tensor_resize(be, y, x->dtype, BD_NCHW, 2, yd)) < 0)
                return r;
        return be->ops->fc_fwd(be, pc, x, w, b, y, wver);
}

int bd_op_fc_bwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                 const struct bd_tensor *w, const struct bd_tensor *dy, struct bd_tensor *dx, struct bd_tensor *dw,
                 struct bd_tensor *db, unsigned flags, uint64_t wver)
{
        const char *op = "fully connected backward";
        int r;
        if ((r = fc_check(be, op, x, w, NULL)) < 0 || (r = check_dev(be, op, "output gradient", dy)) < 0)
                return r;
        if (dy->ndim != 2 || dy->dims[0] != x->dims[0] || dy->dims[1] != w->dims[0] || dy->dtype != x->dtype)
                return bad(be, op, "output gradient has the wrong shape:", dy);
        if (dx && (r = out_like(be, op, "input gradient", dx, x, flags & BD_ACC_DX)) < 0)
                return r;
        if (dw && (r = out_like(be, op, "weight gradient", dw, w, flags & BD_ACC_DW)) < 0)
                return r;
        if (db && (r = check_vec(be, op, "bias gradient", db, w->dims[0], w->dtype)) < 0)
                return r;
        if (!dx && !dw && !db)
                return 0;
        return be->ops->fc_bwd(be, pc, x, w, dy, dx, dw, db, flags, wver);
}

/* ---- element-wise -------------------------------------------------------------- */

static int elem(struct bd_backend *be, enum bd_kernel k, enum bd_dtype dt, int64_t n, const void *args)
{
        if (n <= 0)
                return 0;
        be->count.elementwise++;
        be->count.casts += k == BD_K_cast;
        return be->ops->elem(be, k, dt, n, args);
}

static int check_float(struct bd_backend *be, const char *op, const char *name, const struct bd_tensor *t)
{
        int r = check_dev(be, op, name, t);
        if (r < 0)
                return r;
        if (t->dtype == BD_I32)
                return bad(be, op, "expects floating point, got", t);
        return 0;
}

int bd_op_fill(struct bd_backend *be, struct bd_tensor *y, double v)
{
        int r = check_dev(be, "fill", "output", y);
        if (r < 0)
                return r;
        if (y->dtype == BD_I32)
                return bad(be, "fill", "expects floating point, got", y);
        struct bd_fill_args a = { y->data, v };
        return elem(be, BD_K_fill, y->dtype, bd_tensor_numel(y), &a);
}

int bd_op_axpby(struct bd_backend *be, double a, const struct bd_tensor *x, double b, struct bd_tensor *y)
{
        int r;
        if ((r = check_float(be, "axpby", "x", x)) < 0)
                return r;
        if ((r = out_like(be, "axpby", "y", y, x, b != 0)) < 0)
                return r;
        struct bd_axpby_args args = { x->data, y->data, a, b };
        return elem(be, BD_K_axpby, x->dtype, bd_tensor_numel(x), &args);
}

int bd_op_add(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *y, struct bd_tensor *z,
              int relu)
{
        int r;
        if ((r = check_float(be, "add", "x", x)) < 0 || (r = check_same(be, "add", "x", x, "y", y)) < 0)
                return r;
        if (z != x && z != y && (r = bd_tensor_resize_like(be, z, x)) < 0)
                return r;
        struct bd_add_args a = { x->data, y->data, z->data, relu };
        return elem(be, BD_K_add, x->dtype, bd_tensor_numel(x), &a);
}

int bd_op_relu(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *y)
{
        int r;
        if ((r = check_float(be, "relu", "x", x)) < 0)
                return r;
        if (y != x && (r = bd_tensor_resize_like(be, y, x)) < 0)
                return r;
        struct bd_relu_args a = { x->data, y->data };
        return elem(be, BD_K_relu_fwd, x->dtype, bd_tensor_numel(x), &a);
}

int bd_op_relu_bwd(struct bd_backend *be, const struct bd_tensor *y, const struct bd_tensor *dy, struct bd_tensor *dx,
                   int accumulate)
{
        const char *op = "relu backward";
        int r;
        if ((r = check_float(be, op, "y", y)) < 0 || (r = check_same(be, op, "y", y, "dy", dy)) < 0)
                return r;
        if (dx != dy && (r = out_like(be, op, "dx", dx, y, accumulate)) < 0)
                return r;
        struct bd_relu_bwd_args a = { y->data, dy->data, dx->data, accumulate };
        return elem(be, BD_K_relu_bwd, y->dtype, bd_tensor_numel(y), &a);
}

static int check_chan(struct bd_backend *be, const char *op, const struct bd_tensor *x)
{
        int r = check_float(be, op, "input", x);
        if (r < 0)
                return r;
        if (x->ndim != 4 && x->ndim != 2)
                return bad(be, op, "expects (N, C, H, W) or (N, C), got", x);
        return 0;
}

int bd_op_affine(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *scale,
                 const struct bd_tensor *shift, int relu, struct bd_tensor *y)
{
        int r;
        if ((r = check_chan(be, "affine", x)) < 0)
                return r;
        if (scale && (r = check_vec(be, "affine", "scale", scale, x->dims[1], param_dtype(x->dtype))) < 0)
                return r;
        if (shift && (r = check_vec(be, "affine", "shift", shift, x->dims[1], param_dtype(x->dtype))) < 0)
                return r;
        if (y != x && (r = bd_tensor_resize_like(be, y, x)) < 0)
                return r;
        struct bd_affine_args a;
        memset(&a, 0, sizeof(a));
        a.s = shape4(x);
        a.x = x->data;
        a.y = y->data;
        a.scale = scale ? scale->data : NULL;
        a.shift = shift ? shift->data : NULL;
        a.relu = relu;
        return elem(be, BD_K_affine, x->dtype, bd_tensor_numel(x), &a);
}

int bd_op_affine_bwd(struct bd_backend *be, const struct bd_tensor *y, const struct bd_tensor *dy,
                     const struct bd_tensor *scale, struct bd_tensor *dx)
{
        const char *op = "affine backward";
        int r;
        if ((r = check_chan(be, op, dy)) < 0)
                return r;
        if (y && (r = check_same(be, op, "dy", dy, "y", y)) < 0)
                return r;
        if (scale && (r = check_vec(be, op, "scale", scale, dy->dims[1], param_dtype(dy->dtype))) < 0)
                return r;
        if (dx != dy && (r = bd_tensor_resize_like(be, dx, dy)) < 0)
                return r;
        struct bd_affine_bwd_args a;
        memset(&a, 0, sizeof(a));
        a.s = shape4(dy);
        a.y = y ? y->data : NULL;
        a.dy = dy->data;
        a.dx = dx->data;
        a.scale = scale ? scale->data : NULL;
        return elem(be, BD_K_affine_bwd, dy->dtype, bd_tensor_numel(dy), &a);
}

int bd_op_bn_coef(struct bd_backend *be, const struct bd_tensor *gamma, const struct bd_tensor *beta,
                  const struct bd_tensor *mean, const struct bd_tensor *var, double eps, struct bd_tensor *scale,
                  struct bd_tensor *shift)
{
        const char *op = "batch norm coefficients";
        int r;
        if ((r = check_dev(be, op, "weight", gamma)) < 0)
                return r;
        int64_t C = gamma->dims[0];
        if ((r = check_vec(be, op, "weight", gamma, C, gamma->dtype)) < 0 ||
            (r = check_vec(be, op, "bias", beta, C, gamma->dtype)) < 0 ||
            (r = check_vec(be, op, "running mean", mean, C, gamma->dtype)) < 0 ||
            (r = check_vec(be, op, "running var", var, C, gamma->dtype)) < 0)
                return r;
        if ((r = bd_tensor_resize_like(be, scale, gamma)) < 0 || (r = bd_tensor_resize_like(be, shift, gamma)) < 0)
                return r;
        struct bd_bn_coef_args a = { gamma->data, beta->data, mean->data, var->data, scale->data, shift->data, eps };
        return elem(be, BD_K_bn_coef, gamma->dtype, C, &a);
}

int bd_op_bn_running(struct bd_backend *be, struct bd_tensor *rmean, struct bd_tensor *rvar,
                     const struct bd_tensor *mean, const struct bd_tensor *var, double momentum, int64_t count)
{
        const char *op = "batch norm running statistics";
        int r;
        if ((r = check_dev(be, op, "running mean", rmean)) < 0)
                return r;
        int64_t C = rmean->dims[0];
        if ((r = check_vec(be, op, "running mean", rmean, C, rmean->dtype)) < 0 ||
            (r = check_vec(be, op, "running var", rvar, C, rmean->dtype)) < 0 ||
            (r = check_vec(be, op, "mean", mean, C, rmean->dtype)) < 0 ||
            (r = check_vec(be, op, "var", var, C, rmean->dtype)) < 0)
                return r;
        struct bd_bn_running_args a = { rmean->data, rvar->data, mean->data, var->data, momentum,
                                        count > 1 ? (double)count / (double)(count - 1) : 1.0 };
        return elem(be, BD_K_bn_running, rmean->dtype, C, &a);
}

/* ---- synchronised batch norm ---------------------------------------------------- */

/* sums of C channels: f64 (2C + 1) on the backend's device */
static int check_sums(struct bd_backend *be, const char *op, const struct bd_tensor *sums, int64_t C)
{
        if (!sums || !sums->data || sums->dev != be->dev || sums->dtype != BD_F64 || sums->ndim != 1 ||
            sums->dims[0] != 2 * C + 1)
                return bad(be, op, "expects sums (2C + 1) f64, got", sums);
        return 0;
}

static int new_sums(struct bd_backend *be, struct bd_tensor *sums, int64_t C)
{
        int64_t n = 2 * C + 1;
        return bd_tensor_resize(be, sums, BD_F64, BD_NCHW, 1, &n);
}

int bd_op_bn_sums(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *sums)
{
        int r;
        if ((r = check_fmap(be, "batch norm sums", "input", x)) < 0 ||
            (r = new_sums(be, sums, BD_C(x))) < 0)
                return r;
        struct bd_bn_sums_args a = { shape4(x), sums->data, x->data };
        return elem(be, BD_K_bn_sums, x->dtype, BD_C(x), &a);
}

int bd_op_bn_sync_fwd(struct bd_backend *be, double eps, double momentum, int relu, const struct bd_tensor *x,
                      const struct bd_tensor *gamma, const struct bd_tensor *beta, const struct bd_tensor *sums,
                      struct bd_tensor *y, struct bd_tensor *mean, struct bd_tensor *var, struct bd_tensor *invstd,
                      struct bd_tensor *scale, struct bd_tensor *shift, struct bd_tensor *rmean, struct bd_tensor *rvar)
{
        const char *op = "synchronised batch norm";
        int r;
        /* one value per channel here is enough: the sums are the whole batch's */
        if ((r = check_fmap(be, op, "input", x)) < 0 ||
            (r = check_vec(be, op, "weight", gamma, BD_C(x), param_dtype(x->dtype))) < 0 ||
            (r = check_vec(be, op, "bias", beta, BD_C(x), gamma->dtype)) < 0 ||
            (r = check_sums(be, op, sums, BD_C(x))) < 0 ||
            (r = check_vec(be, op, "running mean", rmean, BD_C(x), gamma->dtype)) < 0 ||
            (r = check_vec(be, op, "running var", rvar, BD_C(x), gamma->dtype)) < 0)
                return r;
        struct bd_tensor *vecs[] = { mean, var, invstd, scale, shift };
        for (size_t i = 0; i < ARRAY_SIZE(vecs); i++)
                if ((r = bd_tensor_resize_like(be, vecs[i], gamma)) < 0)
                        return r;
        struct bd_bn_sync_coef_args a = { sums->data, gamma->data, beta->data, mean->data, var->data, invstd->data,
                                          scale->data, shift->data, rmean->data, rvar->data, BD_C(x), eps, momentum };
        if ((r = elem(be, BD_K_bn_sync_coef, gamma->dtype, BD_C(x), &a)) < 0)
                return r;
        return bd_op_affine(be, x, scale, shift, relu, y);
}

/* the backward's operands: x, y and dy alike, mean and invstd per channel */
static int sync_bwd_check(struct bd_backend *be, const char *op, const struct bd_tensor *x, const struct bd_tensor *y,
                          const struct bd_tensor *dy, const struct bd_tensor *mean, const struct bd_tensor *invstd)
{
        int r;
        if ((r = check_fmap(be, op, "input", x)) < 0 || (r = check_same(be, op, "input", x, "output gradient", dy)) < 0 ||
            (y && (r = check_same(be, op, "input", x, "output", y)) < 0) ||
            (r = check_vec(be, op, "mean", mean, BD_C(x), param_dtype(x->dtype))) < 0 ||
            (r = check_vec(be, op, "inverse std", invstd, BD_C(x), param_dtype(x->dtype))) < 0)
                return r;
        return 0;
}

int bd_op_bn_grad_sums(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *y,
                       const struct bd_tensor *dy, const struct bd_tensor *mean, const struct bd_tensor *invstd,
                       struct bd_tensor *sums, struct bd_tensor *dgamma, struct bd_tensor *dbeta, unsigned flags)
{
        const char *op = "batch norm gradient sums";
        int r;
        if ((r = sync_bwd_check(be, op, x, y, dy, mean, invstd)) < 0 || (r = new_sums(be, sums, BD_C(x))) < 0 ||
            (dgamma && (r = check_vec(be, op, "weight gradient", dgamma, BD_C(x), mean->dtype)) < 0) ||
            (dbeta && (r = check_vec(be, op, "bias gradient", dbeta, BD_C(x), mean->dtype)) < 0))
                return r;
        struct bd_bn_grad_sums_args a = { shape4(x), sums->data, x->data, y ? y->data : NULL, dy->data, mean->data,
                                          invstd->data };
        if ((r = elem(be, BD_K_bn_grad_sums, x->dtype, BD_C(x), &a)) < 0 || (!dgamma && !dbeta))
                return r;
        struct bd_bn_sync_dparams_args p = { sums->data, dgamma ? dgamma->data : NULL, dbeta ? dbeta->data : NULL,
                                             BD_C(x), (flags & BD_ACC_DW) != 0 };
        return elem(be, BD_K_bn_sync_dparams, mean->dtype, BD_C(x), &p);
}

int bd_op_bn_sync_bwd(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *y,
                      const struct bd_tensor *dy, const struct bd_tensor *gamma, const struct bd_tensor *mean,
                      const struct bd_tensor *invstd, const struct bd_tensor *sums, struct bd_tensor *dx,
                      unsigned flags)
{
        const char *op = "synchronised batch norm backward";
        int r;
        if ((r = sync_bwd_check(be, op, x, y, dy, mean, invstd)) < 0 ||
            (r = check_vec(be, op, "weight", gamma, BD_C(x), mean->dtype)) < 0 ||
            (r = check_sums(be, op, sums, BD_C(x))) < 0 ||
            (r = out_like(be, op, "input gradient", dx, x, flags & BD_ACC_DX)) < 0)
                return r;
        struct bd_bn_sync_bwd_args a = { shape4(x), x->data, y ? y->data : NULL, dy->data, dx->data, gamma->data,
                                         mean->data, invstd->data, sums->data, (flags & BD_ACC_DX) != 0 };
        return elem(be, BD_K_bn_sync_bwd, x->dtype, bd_tensor_numel(x), &a);
}

int bd_op_upsample2x(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *y)
{
        int r;
        if ((r = check_fmap(be, "upsample", "input", x)) < 0)
                return r;
        int64_t yd[4] = { x->dims[0], x->dims[1], 2 * x->dims[2], 2 * x->dims[3] };
        if ((r = bd_tensor_resize(be, y, x->dtype, x->layout, 4, yd)) < 0)
                return r;
        struct bd_upsample_args a;
        a.s = shape4(y);
        a.o = shape4(x);
        a.src = x->data;
        a.dst = y->data;
        return elem(be, BD_K_upsample_fwd, x->dtype, bd_tensor_numel(y), &a);
}

int bd_op_upsample2x_bwd(struct bd_backend *be, const struct bd_tensor *dy, struct bd_tensor *dx)
{
        int r;
        if ((r = check_fmap(be, "upsample backward", "output gradient", dy)) < 0)
                return r;
        if (dy->dims[2] % 2 || dy->dims[3] % 2)
                return bad(be, "upsample backward", "output gradient has odd height or width:", dy);
        int64_t xd[4] = { dy->dims[0], dy->dims[1], dy->dims[2] / 2, dy->dims[3] / 2 };
        if ((r = bd_tensor_resize(be, dx, dy->dtype, dy->layout, 4, xd)) < 0)
                return r;
        struct bd_upsample_args a;
        a.s = shape4(dx);
        a.o = shape4(dy);
        a.src = dy->data;
        a.dst = dx->data;
        return elem(be, BD_K_upsample_bwd, dy->dtype, bd_tensor_numel(dx), &a);
}

int bd_op_global_avgpool(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *y)
{
        int r;
        if ((r = check_fmap(be, "average pool", "input", x)) < 0)
                return r;
        int64_t yd[2] = { x->dims[0], x->dims[1] };
        if ((r = bd_tensor_resize(be, y, x->dtype, BD_NCHW, 2, yd)) < 0)
                return r;
        struct bd_avgpool_args a;
        a.s = shape4(x);
        a.src = x->data;
        a.dst = y->data;
        return elem(be, BD_K_avgpool_fwd, x->dtype, yd[0] * yd[1], &a);
}

int bd_op_global_avgpool_bwd(struct bd_backend *be, const struct bd_tensor *dy, const struct bd_tensor *x,
                             struct bd_tensor *dx)
{
        const char *op = "average pool backward";
        int r;
        if ((r = check_fmap(be, op, "input", x)) < 0 || (r = check_dev(be, op, "output gradient", dy)) < 0)
                return r;
        if (dy->ndim != 2 || dy->dims[0] != x->dims[0] || dy->dims[1] != x->dims[1] || dy->dtype != x->dtype)
                return bad(be, op, "output gradient has the wrong shape:", dy);
        if ((r = bd_tensor_resize_like(be, dx, x)) < 0)
                return r;
        struct bd_avgpool_args a;
        a.s = shape4(x);
        a.src = dy->data;
        a.dst = dx->data;
        return elem(be, BD_K_avgpool_bwd, x->dtype, bd_tensor_numel(x), &a);
}

static int concat_check(struct bd_backend *be, const char *op, const struct bd_tensor *const *parts, int nparts,
                        int64_t *ret_C)
{
        int r;
        if (nparts < 1)
                return bd_err_set(&be->err, -EINVAL, "%s: no parts", op);
        int64_t C = 0;
        for (int i = 0; i < nparts; i++) {
                const struct bd_tensor *p = parts[i];
                if ((r = check_fmap(be, op, "part", p)) < 0)
                        return r;
                if (p->dims[0] != parts[0]->dims[0] || p->dims[2] != parts[0]->dims[2] ||
                    p->dims[3] != parts[0]->dims[3] || p->layout != parts[0]->layout || p->dtype != parts[0]->dtype) {
                        char a[128], b[128];
                        return bd_err_set(&be->err, -EINVAL, "%s: part %d %s does not match part 0 %s", op, i,
                                          TS(p, a), TS(parts[0], b));
                }
                C += p->dims[1];
        }
        *ret_C = C;
        return 0;
}

/* copies each part to (split: from) its channels of y */
static int concat_copy(struct bd_backend *be, const struct bd_tensor *const *parts, int nparts, const struct bd_tensor *y,
                       int split)
{
        int64_t off = 0;
        for (int i = 0; i < nparts; i++) {
                struct bd_concat_args a;
                a.s = shape4(parts[i]);
                a.o = shape4(y);
                a.part = parts[i]->data;
                a.whole = y->data;
                a.c_off = off;
                a.split = split;
                int r = elem(be, BD_K_concat, y->dtype, bd_tensor_numel(parts[i]), &a);
                if (r < 0)
                        return r;
                off += parts[i]->dims[1];
        }
        return 0;
}

int bd_op_concat(struct bd_backend *be, const struct bd_tensor *const *parts, int nparts, struct bd_tensor *y)
{
        int64_t C;
        int r = concat_check(be, "concat", parts, nparts, &C);
        if (r < 0)
                return r;
        int64_t yd[4] = { parts[0]->dims[0], C, parts[0]->dims[2], parts[0]->dims[3] };
        if ((r = bd_tensor_resize(be, y, parts[0]->dtype, parts[0]->layout, 4, yd)) < 0)
                return r;
        return concat_copy(be, parts, nparts, y, 0);
}

int bd_op_split(struct bd_backend *be, const struct bd_tensor *y, struct bd_tensor *const *parts, int nparts)
{
        int64_t C;
        const struct bd_tensor *const *cparts = (const struct bd_tensor *const *)parts;
        int r = concat_check(be, "split", cparts, nparts, &C);
        if (r < 0)
                return r;
        if ((r = check_fmap(be, "split", "input", y)) < 0)
                return r;
        if (C != y->dims[1] || y->dims[0] != parts[0]->dims[0] || y->dims[2] != parts[0]->dims[2] ||
            y->dims[3] != parts[0]->dims[3] || y->layout != parts[0]->layout || y->dtype != parts[0]->dtype)
                return bad(be, "split", "input does not match the parts:", y);
        return concat_copy(be, cparts, nparts, y, 1);
}

int bd_op_permute(struct bd_backend *be, const struct bd_tensor *x, const int *perm, struct bd_tensor *y)
{
        int r;
        if ((r = check_dev(be, "permute", "input", x)) < 0)
                return r;
        if (x->ndim == 4 && x->layout != BD_NCHW)
                return bad(be, "permute", "expects a plain (nchw) tensor, got", x);
        int64_t stride[BD_MAX_DIMS], yd[BD_MAX_DIMS];
        int seen = 0;
        int64_t s = 1;
        for (int i = x->ndim - 1; i >= 0; i--) {
                stride[i] = s;
                s *= x->dims[i];
        }
        struct bd_permute_args a;
        memset(&a, 0, sizeof(a));
        for (int i = 0; i < x->ndim; i++) {
                if (perm[i] < 0 || perm[i] >= x->ndim || (seen & (1 << perm[i])))
                        return bd_err_set(&be->err, -EINVAL, "permute: axis order is not a permutation of %d axes",
                                          x->ndim);
                seen |= 1 << perm[i];
                yd[i] = x->dims[perm[i]];
                a.dims[i] = yd[i];
                a.xstride[i] = stride[perm[i]];
        }
        if ((r = bd_tensor_resize(be, y, x->dtype, BD_NCHW, x->ndim, yd)) < 0)
                return r;
        a.x = x->data;
        a.y = y->data;
        a.ndim = x->ndim;
        return elem(be, BD_K_permute, x->dtype == BD_I32 ? BD_F32 : x->dtype, bd_tensor_numel(x), &a);
}

int bd_op_relayout(struct bd_backend *be, const struct bd_tensor *x, enum bd_layout layout, struct bd_tensor *y)
{
        int r;
        if ((r = check_fmap(be, "relayout", "input", x)) < 0)
                return r;
        if ((r = bd_tensor_resize(be, y, x->dtype, layout, 4, x->dims)) < 0)
                return r;
        struct bd_relayout_args a;
        a.s = shape4(x);
        a.o = shape4(y);
        a.x = x->data;
        a.y = y->data;
        return elem(be, BD_K_relayout, x->dtype, bd_tensor_numel(x), &a);
}

int bd_op_cast(struct bd_backend *be, const struct bd_tensor *x, enum bd_dtype dt, double scale, struct bd_tensor *y)
{
        int r;
        if ((r = check_dev(be, "cast", "input", x)) < 0)
                return r;
        if ((dt == BD_F16 || dt == BD_BF16) && be->dev == BD_CPU)
                return bd_err_set(&be->err, -EINVAL, "cast: %s is CUDA-only (mixed precision)", bd_dtype_name(dt));
        if (dt == BD_F64 && be->dev == BD_CUDA)
                return bd_err_set(&be->err, -EINVAL, "cast: f64 is CPU-only");
        if (!(y->data && y->cap == 0) && (r = bd_tensor_resize(be, y, dt, x->layout, x->ndim, x->dims)) < 0)
                return r;
        if (!bd_tensor_same_shape(x, y) || y->dtype != dt || (x->ndim == 4 && x->layout != y->layout))
                return bad(be, "cast", "output does not match the input:", y);
        struct bd_cast_args a = { x->data, y->data, (int)x->dtype, (int)dt, scale, 0 };
        return elem(be, BD_K_cast, BD_F32, bd_tensor_numel(x), &a);
}

int bd_op_cast_input(struct bd_backend *be, const struct bd_tensor *x, enum bd_dtype dt, struct bd_tensor *tmp,
                     struct bd_tensor *y)
{
        int r;
        if ((r = check_fmap(be, "cast_input", "input", x)) < 0)
                return r;
        enum bd_layout l = be->ops->pref_layout(be, x->dims[1], dt);
        if (l == x->layout)
                return bd_op_cast(be, x, dt, 1.0, y);
        if ((r = bd_op_cast(be, x, dt, 1.0, tmp)) < 0)
                return r;
        return bd_op_relayout(be, tmp, l, y);
}

int bd_op_copy(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *y)
{
        int r;
        if (y->data && y->cap == 0) {
                if (!bd_tensor_same_shape(x, y) || x->dtype != y->dtype)
                        return bad(be, "copy", "output does not match the input:", y);
        } else if ((r = bd_tensor_resize_like(be, y, x)) < 0) {
                return r;
        }
        y->layout = x->layout;
        return be->ops->copy(be, y->data, y->dev, x->data, x->dev, bd_tensor_bytes(x));
}

/* ---- detection heads: one channel per row, label masks ---------------------- */

int bd_op_select_channel(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *idx,
                         struct bd_tensor *y)
{
        const char *op = "select channel";
        int r;
        if ((r = check_fmap(be, op, "input", x)) < 0 || (r = check_vec(be, op, "channels", idx, x->dims[0], BD_I32)) < 0)
                return r;
        int64_t yd[4] = { x->dims[0], 1, x->dims[2], x->dims[3] };
        if ((r = bd_tensor_resize(be, y, x->dtype, BD_NCHW, 4, yd)) < 0)
                return r;
        struct bd_select_args a;
        a.s = shape4(x);
        a.src = x->data;
        a.dst = y->data;
        a.idx = idx->data;
        a.accumulate = 0;
        return elem(be, BD_K_select_fwd, x->dtype, yd[0] * yd[2] * yd[3], &a);
}

int bd_op_select_channel_bwd(struct bd_backend *be, const struct bd_tensor *dy, const struct bd_tensor *idx,
                             const struct bd_tensor *x, struct bd_tensor *dx, int accumulate)
{
        const char *op = "select channel backward";
        int r;
        if ((r = check_fmap(be, op, "input", x)) < 0 || (r = check_vec(be, op, "channels", idx, x->dims[0], BD_I32)) < 0 ||
            (r = check_dev(be, op, "output gradient", dy)) < 0)
                return r;
        if (dy->ndim != 4 || dy->dims[0] != x->dims[0] || dy->dims[1] != 1 || dy->dims[2] != x->dims[2] ||
            dy->dims[3] != x->dims[3] || dy->dtype != x->dtype || dy->layout != BD_NCHW)
                return bad(be, op, "output gradient has the wrong shape:", dy);
        if ((r = out_like(be, op, "input gradient", dx, x, accumulate)) < 0)
                return r;
        struct bd_select_args a;
        a.s = shape4(x);
        a.src = dy->data;
        a.dst = dx->data;
        a.idx = idx->data;
        a.accumulate = accumulate;
        return elem(be, BD_K_select_bwd, x->dtype, bd_tensor_numel(x), &a);
}

int bd_op_label_mask(struct bd_backend *be, const struct bd_tensor *label, int64_t cols, int32_t lo, int32_t hi,
                     enum bd_dtype dt, struct bd_tensor *y)
{
        const char *op = "label mask";
        int r;
        if ((r = check_dev(be, op, "labels", label)) < 0)
                return r;
        if (label->ndim != 1 || label->dtype != BD_I32)
                return bad(be, op, "labels must be (R) i32, got", label);
        if (cols < 1 || dt == BD_I32)
                return bd_err_set(&be->err, -EINVAL, "%s: %lld columns of %s", op, (long long)cols, bd_dtype_name(dt));
        int64_t yd[2] = { label->dims[0], cols };
        if ((r = bd_tensor_resize(be, y, dt, BD_NCHW, cols == 1 ? 1 : 2, yd)) < 0)
                return r;
        struct bd_label_mask_args a = { label->data, y->data, cols, lo, hi };
        return elem(be, BD_K_label_mask, dt, yd[0] * cols, &a);
}

/* ---- losses ------------------------------------------------------------------- */

static int loss_outs(struct bd_backend *be, const char *op, const struct bd_tensor *x, const struct bd_tensor *w,
                     struct bd_tensor *loss, struct bd_tensor *dx, int ndim_loss, const int64_t *ldims)
{
        int r;
        struct bd_tensor lshape = bd_tensor_view(NULL, be->dev, x->dtype, BD_NCHW, ndim_loss, ldims);
        if (w && ((r = check_dev(be, op, "weights", w)) < 0 || !bd_tensor_same_shape(w, &lshape) ||
                  w->dtype != x->dtype))
                return r < 0 ? r : bad(be, op, "weights have the wrong shape:", w);
        if (loss && (r = bd_tensor_resize(be, loss, x->dtype, BD_NCHW, ndim_loss, ldims)) < 0)
                return r;
        if (dx && dx != x && (r = bd_tensor_resize_like(be, dx, x)) < 0)
                return r;
        return 0;
}

int bd_op_softmax_ce(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *label,
                     const struct bd_tensor *w, double scale, struct bd_tensor *loss, struct bd_tensor *dx)
{
        const char *op = "softmax cross-entropy";
        int r;
        if ((r = check_float(be, op, "logits", x)) < 0 || (r = check_dev(be, op, "labels", label)) < 0)
                return r;
        if (x->ndim != 2)
                return bad(be, op, "expects logits (R, K), got", x);
        if (label->ndim != 1 || label->dims[0] != x->dims[0] || label->dtype != BD_I32)
                return bad(be, op, "labels must be (R) i32, got", label);
        if ((r = loss_outs(be, op, x, w, loss, dx, 1, x->dims)) < 0)
                return r;
        struct bd_softmax_ce_args a = { x->data, label->data, w ? w->data : NULL, loss ? loss->data : NULL,
                                        dx ? dx->data : NULL, x->dims[1], scale };
        return elem(be, BD_K_softmax_ce, x->dtype, x->dims[0], &a);
}

static int pointwise_loss(struct bd_backend *be, const char *op, const struct bd_tensor *x, const struct bd_tensor *t,
                          const struct bd_tensor *w, struct bd_tensor *loss, struct bd_tensor *dx)
{
        int r;
        if ((r = check_float(be, op, "input", x)) < 0 || (r = check_dev(be, op, "target", t)) < 0)
                return r;
        if (!bd_tensor_same_shape(x, t) || t->dtype != x->dtype) {
                char a[128], b[128];
                return bd_err_set(&be->err, -EINVAL, "%s: input %s and target %s differ", op, TS(x, a), TS(t, b));
        }
        return loss_outs(be, op, x, w, loss, dx, x->ndim, x->dims);
}

int bd_op_bce(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *t,
              const struct bd_tensor *w, double scale, struct bd_tensor *loss, struct bd_tensor *dx)
{
        int r = pointwise_loss(be, "sigmoid cross-entropy", x, t, w, loss, dx);
        if (r < 0)
                return r;
        struct bd_bce_args a = { x->data, t->data, w ? w->data : NULL, loss ? loss->data : NULL,
                                 dx ? dx->data : NULL, scale };
        return elem(be, BD_K_bce, x->dtype, bd_tensor_numel(x), &a);
}

int bd_op_smooth_l1(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *t,
                    const struct bd_tensor *w, double beta, double scale, struct bd_tensor *loss,
                    struct bd_tensor *dx)
{
        if (beta < 0)
                return bd_err_set(&be->err, -EINVAL, "smooth L1: beta %g is negative", beta);
        int r = pointwise_loss(be, "smooth L1", x, t, w, loss, dx);
        if (r < 0)
                return r;
        struct bd_smooth_l1_args a = { x->data, t->data, w ? w->data : NULL, loss ? loss->data : NULL,
                                       dx ? dx->data : NULL, beta, scale };
        return elem(be, BD_K_smooth_l1, x->dtype, bd_tensor_numel(x), &a);
}

/* ---- reductions ---------------------------------------------------------------- */

static int reduce(struct bd_backend *be, enum bd_reducer k, const char *op, const struct bd_tensor *x, double *ret)
{
        int r = check_float(be, op, "input", x);
        if (r < 0)
                return r;
        struct bd_reduce_args a = { x->data };
        *ret = 0;
        int64_t n = bd_tensor_numel(x);
        if (n == 0)
                return 0;
        be->count.sums_read++;
        return be->ops->reduce(be, k, x->dtype, n, &a, ret);
}

int bd_op_sum(struct bd_backend *be, const struct bd_tensor *x, double *ret)
{
        return reduce(be, BD_R_sum, "sum", x, ret);
}

int bd_op_sum_to(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *acc, int64_t slot)
{
        int r = check_float(be, "sum", "input", x);
        if (r < 0)
                return r;
        /* f64 on either backend: the accumulator is only written, by the
         * reducers' double sums */
        if (!acc || !acc->data || acc->dev != be->dev || acc->dtype != BD_F64 || acc->ndim != 1 || slot < 0 ||
            slot >= acc->dims[0])
                return bd_err_set(&be->err, -EINVAL, "sum: slot %lld of a (%lld) f64 accumulator wanted",
                                  (long long)slot, acc && acc->ndim == 1 ? (long long)acc->dims[0] : -1LL);
        struct bd_reduce_args a = { x->data };
        return be->ops->reduce_to(be, BD_R_sum, x->dtype, bd_tensor_numel(x), &a, (double *)acc->data + slot);
}

int bd_op_sumsq(struct bd_backend *be, const struct bd_tensor *x, double *ret)
{
        return reduce(be, BD_R_sumsq, "sum of squares", x, ret);
}

int bd_op_count_nonfinite(struct bd_backend *be, const struct bd_tensor *x, double *ret)
{
        return reduce(be, BD_R_nonfinite, "non-finite count", x, ret);
}

int bd_op_sgd(struct bd_backend *be, enum bd_dtype dt, int64_t n, void *p, const void *g, void *v, double lr,
              double momentum, double wd, double gscale)
{
        if (dt != BD_F32 && dt != BD_F64)
                return bd_err_set(&be->err, -EINVAL, "sgd: parameters must be f32 or f64");
        struct bd_sgd_args a = { p, g, v, lr, momentum, wd, gscale };
        return elem(be, BD_K_sgd, dt, n, &a);
}

/* test-trainer-ops.c: the oneDNN (f32) path of the CPU backend against the
 * reference loops in double precision, and operand checks.
 *
 * Each library operation (convolution forward, backward data, backward
 * weights and bias; transposed convolution; batch norm training forward and
 * backward, with and without fused ReLU; max pooling; fully connected) runs
 * on random f32 tensors and on the same values in f64; outputs and gradients
 * must agree to max|f32 - f64| <= 2e-5 (4e-5 for batch norm) times the largest
 * reference magnitude (sums of at most a few thousand products in float).
 * Also: accumulation flags, plan reuse across shapes, weights cached in
 * oneDNN's layout refreshed when their version changes, and shape mismatches
 * rejected with one-line errors.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "rng.h"
#include "tap.h"

static struct bd_backend *be;
static struct bd_rng rng;

struct pair {
        struct bd_tensor d, f;  /* f64 and f32 */
};

static void pair_rand(struct pair *p, enum bd_layout l, int nd, const int64_t *dims, double lo, double hi)
{
        memset(p, 0, sizeof(*p));
        if (bd_tensor_resize(be, &p->d, BD_F64, l, nd, dims) < 0)
                abort();
        int64_t n = bd_tensor_numel(&p->d);
        for (int64_t i = 0; i < n; i++)
                ((double *)p->d.data)[i] = lo + (hi - lo) * bd_rng_uniform(&rng);
        if (bd_op_cast(be, &p->d, BD_F32, 1.0, &p->f) < 0)
                abort();
        /* the f64 side holds exactly the f32 values */
        if (bd_op_cast(be, &p->f, BD_F64, 1.0, &p->d) < 0)
                abort();
}

static struct pair *pair4(enum bd_layout l, int64_t a, int64_t b, int64_t c, int64_t d)
{
        struct pair *p = xmalloc(sizeof(*p));
        int64_t dims[4] = { a, b, c, d };
        pair_rand(p, l, 4, dims, -1, 1);
        return p;
}

static struct pair *pairn(int nd, int64_t a, int64_t b, double lo, double hi)
{
        struct pair *p = xmalloc(sizeof(*p));
        int64_t dims[2] = { a, b };
        pair_rand(p, BD_NCHW, nd, dims, lo, hi);
        return p;
}

static void pair_free(struct pair *p)
{
        if (!p)
                return;
        bd_tensor_release(&p->d);
        bd_tensor_release(&p->f);
        free(p);
}

/* max |f - d| / max(1e-3, max |d|) */
static double rel_err(const struct bd_tensor *f, const struct bd_tensor *d)
{
        struct bd_tensor fd = { 0 };
        if (!bd_tensor_same_shape(f, d) || f->layout != d->layout)
                return INFINITY;
        if (bd_op_cast(be, f, BD_F64, 1.0, &fd) < 0)
                return INFINITY;
        int64_t n = bd_tensor_numel(d);
        double mx = 1e-3, err = 0;
        for (int64_t i = 0; i < n; i++) {
                double a = ((double *)fd.data)[i], b = ((double *)d->data)[i];
                mx = fmax(mx, fabs(b));
                err = fmax(err, fabs(a - b));
                if (a != a)
                        err = INFINITY;
        }
        bd_tensor_release(&fd);
        return err / mx;
}

static void close_enough(const char *what, const struct bd_tensor *f, const struct bd_tensor *d, double tol)
{
        double e = rel_err(f, d);
        if (!ok(e <= tol, what))
                printf("#   relative error %.3g > %.3g\n", e, tol);
}

static struct bd_tensor T0(void)
{
        struct bd_tensor t;
        memset(&t, 0, sizeof(t));
        return t;
}

static void conv_check(const char *name, struct bd_conv_desc d, enum bd_layout l, int64_t N, int64_t C, int64_t H,
                       int64_t W, int64_t O, int bias, int acc)
{
        char what[256];
        struct bd_plan_cache pc32 = { 0 }, pc64 = { 0 };
        struct pair *x = pair4(l, N, C, H, W);
        int64_t G = d.groups;
        struct pair *w = d.transposed ? pair4(BD_NCHW, C, O / G, d.kh, d.kw) : pair4(BD_NCHW, O, C / G, d.kh, d.kw);
        struct pair *b = bias ? pairn(1, O, 0, -1, 1) : NULL;
        struct bd_tensor y32 = T0(), y64 = T0();
        int r1 = bd_op_conv_fwd(be, &d, &pc32, &x->f, &w->f, b ? &b->f : NULL, &y32, 1);
        int r2 = bd_op_conv_fwd(be, &d, &pc64, &x->d, &w->d, b ? &b->d : NULL, &y64, 1);
        snprintf(what, sizeof(what), "%s: forward runs", name);
        if (!ok(r1 == 0 && r2 == 0, what)) {
                printf("#   %s\n", be->err.msg);
                goto out;
        }
        snprintf(what, sizeof(what), "%s: forward", name);
        close_enough(what, &y32, &y64, 2e-5);

        /* backward with dy random, optionally accumulating into existing values */
        struct pair *dy = pair4(y32.layout, y32.dims[0], y32.dims[1], y32.dims[2], y32.dims[3]);
        struct pair *dx = pair4(l, N, C, H, W);
        struct pair *dw = d.transposed ? pair4(BD_NCHW, C, O / G, d.kh, d.kw) : pair4(BD_NCHW, O, C / G, d.kh, d.kw);
        struct pair *db = bias ? pairn(1, O, 0, -1, 1) : NULL;
        unsigned fl = acc ? BD_ACC_DW | BD_ACC_DX : 0;
        r1 = bd_op_conv_bwd(be, &d, &pc32, &x->f, &w->f, &dy->f, &dx->f, &dw->f, db ? &db->f : NULL, fl, 1);
        r2 = bd_op_conv_bwd(be, &d, &pc64, &x->d, &w->d, &dy->d, &dx->d, &dw->d, db ? &db->d : NULL, fl, 1);
        snprintf(what, sizeof(what), "%s: backward runs", name);
        if (ok(r1 == 0 && r2 == 0, what)) {
                snprintf(what, sizeof(what), "%s: input gradient%s", name, acc ? " (accumulated)" : "");
                close_enough(what, &dx->f, &dx->d, 2e-5);
                snprintf(what, sizeof(what), "%s: weight gradient%s", name, acc ? " (accumulated)" : "");
                close_enough(what, &dw->f, &dw->d, 2e-5);
                if (db) {
                        snprintf(what, sizeof(what), "%s: bias gradient", name);
                        close_enough(what, &db->f, &db->d, 2e-5);
                }
        } else {
                printf("#   %s\n", be->err.msg);
        }
        pair_free(dy);
        pair_free(dx);
        pair_free(dw);
        pair_free(db);
out:
        bd_tensor_release(&y32);
        bd_tensor_release(&y64);
        bd_plan_cache_clear(be, &pc32);
        bd_plan_cache_clear(be, &pc64);
        pair_free(x);
        pair_free(w);
        pair_free(b);
}

static struct bd_conv_desc cd(int k, int s, int p, int dil, int g, int tr)
{
        struct bd_conv_desc d = { k, k, s, s, p, p, dil, dil, g, tr };
        return d;
}

static void bn_check(const char *name, enum bd_layout l, int64_t N, int64_t C, int64_t H, int64_t W, int relu)
{
        char what[256];
        struct bd_plan_cache pc32 = { 0 }, pc64 = { 0 };
        struct pair *x = pair4(l, N, C, H, W);
        struct pair *g = pairn(1, C, 0, 0.5, 1.5), *b = pairn(1, C, 0, -0.5, 0.5);
        struct bd_tensor y32 = T0(), y64 = T0(), m32 = T0(), m64 = T0(), v32 = T0(), v64 = T0(), ws32 = T0(), ws64 = T0();
        int r1 = bd_op_bn_fwd(be, &pc32, 1e-5, relu, &x->f, &g->f, &b->f, &y32, &m32, &v32, &ws32);
        int r2 = bd_op_bn_fwd(be, &pc64, 1e-5, relu, &x->d, &g->d, &b->d, &y64, &m64, &v64, &ws64);
        snprintf(what, sizeof(what), "%s: forward runs", name);
        if (!ok(r1 == 0 && r2 == 0, what)) {
                printf("#   %s\n", be->err.msg);
                return;
        }
        snprintf(what, sizeof(what), "%s: output", name);
        close_enough(what, &y32, &y64, 4e-5);
        snprintf(what, sizeof(what), "%s: batch mean", name);
        close_enough(what, &m32, &m64, 4e-5);
        snprintf(what, sizeof(what), "%s: batch variance (biased)", name);
        close_enough(what, &v32, &v64, 4e-5);
        struct pair *dy = pair4(l, N, C, H, W);
        struct bd_tensor dx32 = T0(), dx64 = T0();
        struct pair *dg = pairn(1, C, 0, 0, 1), *dbt = pairn(1, C, 0, 0, 1);
        r1 = bd_op_bn_bwd(be, &pc32, 1e-5, relu, &x->f, &y32, &dy->f, &g->f, &m32, &v32, &ws32, &dx32, &dg->f, &dbt->f, 0);
        r2 = bd_op_bn_bwd(be, &pc64, 1e-5, relu, &x->d, &y64, &dy->d, &g->d, &m64, &v64, &ws64, &dx64, &dg->d, &dbt->d, 0);
        snprintf(what, sizeof(what), "%s: backward runs", name);
        if (ok(r1 == 0 && r2 == 0, what)) {
                snprintf(what, sizeof(what), "%s: input gradient", name);
                close_enough(what, &dx32, &dx64, 4e-5);
                snprintf(what, sizeof(what), "%s: weight gradient", name);
                close_enough(what, &dg->f, &dg->d, 4e-5);
                snprintf(what, sizeof(what), "%s: bias gradient", name);
                close_enough(what, &dbt->f, &dbt->d, 4e-5);
        } else {
                printf("#   %s\n", be->err.msg);
        }
        struct bd_tensor *ts[] = { &y32, &y64, &m32, &m64, &v32, &v64, &ws32, &ws64, &dx32, &dx64 };
        for (size_t i = 0; i < ARRAY_SIZE(ts); i++)
                bd_tensor_release(ts[i]);
        pair_free(x);
        pair_free(g);
        pair_free(b);
        pair_free(dy);
        pair_free(dg);
        pair_free(dbt);
        bd_plan_cache_clear(be, &pc32);
        bd_plan_cache_clear(be, &pc64);
}

static void pool_check(const char *name, enum bd_layout l, int k, int s, int p, int64_t H)
{
        char what[256];
        struct bd_plan_cache pc32 = { 0 }, pc64 = { 0 };
        struct bd_pool_desc d = { k, k, s, s, p, p };
        struct pair *x = pair4(l, 2, 16, H, H);
        struct bd_tensor y32 = T0(), y64 = T0(), ws32 = T0(), ws64 = T0(), dx32 = T0(), dx64 = T0();
        int r1 = bd_op_pool_fwd(be, &d, &pc32, &x->f, &y32, &ws32), r2 = bd_op_pool_fwd(be, &d, &pc64, &x->d, &y64, &ws64);
        snprintf(what, sizeof(what), "%s: forward", name);
        if (ok(r1 == 0 && r2 == 0, what))
                close_enough(what, &y32, &y64, 1e-7);
        struct pair *dy = pair4(l, y32.dims[0], y32.dims[1], y32.dims[2], y32.dims[3]);
        r1 = bd_op_pool_bwd(be, &d, &pc32, &x->f, &y32, &dy->f, &ws32, &dx32);
        r2 = bd_op_pool_bwd(be, &d, &pc64, &x->d, &y64, &dy->d, &ws64, &dx64);
        snprintf(what, sizeof(what), "%s: backward", name);
        if (ok(r1 == 0 && r2 == 0, what))
                close_enough(what, &dx32, &dx64, 1e-6);
        struct bd_tensor *ts[] = { &y32, &y64, &ws32, &ws64, &dx32, &dx64 };
        for (size_t i = 0; i < ARRAY_SIZE(ts); i++)
                bd_tensor_release(ts[i]);
        pair_free(x);
        pair_free(dy);
        bd_plan_cache_clear(be, &pc32);
        bd_plan_cache_clear(be, &pc64);
}

static void fc_check(const char *name, int64_t N, int64_t K, int64_t O, int bias)
{
        char what[256];
        struct bd_plan_cache pc32 = { 0 }, pc64 = { 0 };
        struct pair *x = pairn(2, N, K, -1, 1), *w = pairn(2, O, K, -1, 1), *b = bias ? pairn(1, O, 0, -1, 1) : NULL;
        struct bd_tensor y32 = T0(), y64 = T0(), dx32 = T0(), dx64 = T0();
        int r1 = bd_op_fc_fwd(be, &pc32, &x->f, &w->f, b ? &b->f : NULL, &y32, 1);
        int r2 = bd_op_fc_fwd(be, &pc64, &x->d, &w->d, b ? &b->d : NULL, &y64, 1);
        snprintf(what, sizeof(what), "%s: forward", name);
        if (ok(r1 == 0 && r2 == 0, what))
                close_enough(what, &y32, &y64, 2e-5);
        struct pair *dy = pairn(2, N, O, -1, 1), *dw = pairn(2, O, K, -1, 1), *db = bias ? pairn(1, O, 0, -1, 1) : NULL;
        r1 = bd_op_fc_bwd(be, &pc32, &x->f, &w->f, &dy->f, &dx32, &dw->f, db ? &db->f : NULL, BD_ACC_DW, 1);
        r2 = bd_op_fc_bwd(be, &pc64, &x->d, &w->d, &dy->d, &dx64, &dw->d, db ? &db->d : NULL, BD_ACC_DW, 1);
        snprintf(what, sizeof(what), "%s: backward", name);
        if (ok(r1 == 0 && r2 == 0, what)) {
                snprintf(what, sizeof(what), "%s: input gradient", name);
                close_enough(what, &dx32, &dx64, 2e-5);
                snprintf(what, sizeof(what), "%s: weight gradient (accumulated)", name);
                close_enough(what, &dw->f, &dw->d, 2e-5);
                if (db) {
                        snprintf(what, sizeof(what), "%s: bias gradient (accumulated)", name);
                        close_enough(what, &db->f, &db->d, 2e-5);
                }
        } else {
                printf("#   %s\n", be->err.msg);
        }
        struct bd_tensor *ts[] = { &y32, &y64, &dx32, &dx64 };
        for (size_t i = 0; i < ARRAY_SIZE(ts); i++)
                bd_tensor_release(ts[i]);
        pair_free(x);
        pair_free(w);
        pair_free(b);
        pair_free(dy);
        pair_free(dw);
        pair_free(db);
        bd_plan_cache_clear(be, &pc32);
        bd_plan_cache_clear(be, &pc64);
}

/* weights cached in oneDNN's blocked format follow their version */
static void weight_version_check(void)
{
        struct bd_plan_cache pc = { 0 }, pcr = { 0 };
        struct bd_conv_desc d = cd(3, 1, 1, 1, 1, 0);
        struct pair *x = pair4(BD_NCHW8C, 2, 16, 6, 6), *w = pair4(BD_NCHW, 16, 16, 3, 3);
        struct bd_tensor y = T0(), y2 = T0(), yr = T0();
        bd_op_conv_fwd(be, &d, &pc, &x->f, &w->f, NULL, &y, 1);
        /* change the weights without a new version: the cached copy is used */
        bd_op_fill(be, &w->f, 0.25);
        bd_op_fill(be, &w->d, 0.25);
        bd_op_conv_fwd(be, &d, &pc, &x->f, &w->f, NULL, &y2, 1);
        int same = memcmp(y2.data, y.data, bd_tensor_bytes(&y)) == 0;
#ifdef HAVE_DNNL
        ok(same || getenv("BD_CPU_REF"), "same weight version: the cached reordered weights are used");
#else
        ok(!same, "reference loops read the weights every time");
#endif
        bd_op_conv_fwd(be, &d, &pc, &x->f, &w->f, NULL, &y2, 2);
        bd_op_conv_fwd(be, &d, &pcr, &x->d, &w->d, NULL, &yr, 2);
        close_enough("new weight version: weights reordered again", &y2, &yr, 2e-5);
        /* a second shape through the same plan cache */
        struct pair *x2 = pair4(BD_NCHW8C, 1, 16, 9, 4);
        struct bd_tensor z = T0(), zr = T0();
        bd_op_conv_fwd(be, &d, &pc, &x2->f, &w->f, NULL, &z, 2);
        bd_op_conv_fwd(be, &d, &pcr, &x2->d, &w->d, NULL, &zr, 2);
        close_enough("another input size through the same plan cache", &z, &zr, 2e-5);
        bd_op_conv_fwd(be, &d, &pc, &x->f, &w->f, NULL, &y2, 2);
        close_enough("and back to the first size", &y2, &yr, 2e-5);
        struct bd_tensor *ts[] = { &y, &y2, &yr, &z, &zr };
        for (size_t i = 0; i < ARRAY_SIZE(ts); i++)
                bd_tensor_release(ts[i]);
        pair_free(x);
        pair_free(x2);
        pair_free(w);
        bd_plan_cache_clear(be, &pc);
        bd_plan_cache_clear(be, &pcr);
}

static void bad_input_checks(void)
{
        struct bd_plan_cache pc = { 0 };
        struct bd_conv_desc d = cd(3, 1, 1, 1, 1, 0);
        struct pair *x = pair4(BD_NCHW, 2, 8, 5, 5), *w = pair4(BD_NCHW, 16, 4, 3, 3);
        struct bd_tensor y = T0();
        int r = bd_op_conv_fwd(be, &d, &pc, &x->f, &w->f, NULL, &y, 1);
        ok(r == -EINVAL, "conv: input channels not matching the weights is an error");
        like(be->err.msg, "conv: input (2, 8, 5, 5) f32 nchw does not match weights (16, 4, 3, 3)", "  naming both shapes");
        ok(!strchr(be->err.msg, '\n'), "  in one line");
        r = bd_op_conv_fwd(be, &d, &pc, &x->d, &w->f, NULL, &y, 1);
        ok(r == -EINVAL, "conv: f64 input with f32 weights is an error");
        struct pair *a = pair4(BD_NCHW, 2, 8, 5, 5), *b = pair4(BD_NHWC, 2, 8, 5, 5);
        r = bd_op_add(be, &a->f, &b->f, &y, 0);
        ok(r == -EINVAL, "add: operands in different layouts is an error");
        like(be->err.msg, "add: x (2, 8, 5, 5) f32 nchw and y (2, 8, 5, 5) f32 nhwc differ", "  naming both");
        int64_t dims[4] = { 1, 12, 2, 2 };
        r = bd_tensor_resize(be, &y, BD_F32, BD_NCHW8C, 4, dims);
        ok(r == -EINVAL, "nchw8c with channels not divisible by 8 is an error");
        struct bd_tensor half = T0();
        r = bd_op_cast(be, &a->f, BD_F16, 1.0, &half);
        ok(r == -EINVAL, "cast to f16 is refused by the CPU backend");
        like(be->err.msg, "f16 is CUDA-only", "  saying why");
        half = bd_tensor_view(a->f.data, BD_CPU, BD_F16, BD_NCHW, 4, a->f.dims);
        r = bd_op_relu(be, &half, &y);
        ok(r == -EINVAL, "f16 tensors are refused by the CPU backend");
        half = T0();
        struct pair *big = pair4(BD_NCHW, 1, 8, 2, 2);
        struct bd_conv_desc d7 = cd(7, 1, 0, 1, 1, 0);
        struct pair *w7 = pair4(BD_NCHW, 8, 8, 7, 7);
        r = bd_op_conv_fwd(be, &d7, &pc, &big->f, &w7->f, NULL, &y, 1);
        ok(r == -EINVAL, "conv: input smaller than the kernel is an error");
        like(be->err.msg, "too small", "  saying so");
        bd_tensor_release(&y);
        bd_tensor_release(&half);
        pair_free(x);
        pair_free(w);
        pair_free(a);
        pair_free(b);
        pair_free(big);
        pair_free(w7);
        bd_plan_cache_clear(be, &pc);
}

int main(void)
{
        struct bd_err err;
        if (bd_backend_cpu_new(0, &be, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                return 1;
        }
        bd_rng_seed(&rng, 4242, 0);
#ifndef HAVE_DNNL
        printf("# built without oneDNN: the f32 path is the reference loops too\n");
#endif
        /* ResNet shapes (small spatial sizes), all layouts */
        conv_check("conv 3x3 64->64 nchw8c", cd(3, 1, 1, 1, 1, 0), BD_NCHW8C, 2, 64, 10, 9, 64, 0, 0);
        conv_check("conv 3x3 s2 64->128 nchw8c", cd(3, 2, 1, 1, 1, 0), BD_NCHW8C, 2, 64, 11, 11, 128, 0, 0);
        conv_check("conv 1x1 s2 64->128 from 38 (negative right padding)", cd(1, 2, 0, 1, 1, 0), BD_NCHW8C, 1, 64,
                   38, 38, 128, 0, 0);
        conv_check("conv 7x7 s2 stem 3->64 nhwc", cd(7, 2, 3, 1, 1, 0), BD_NHWC, 2, 3, 30, 28, 64, 0, 0);
        conv_check("conv 7x7 s2 stem 3->64 nchw", cd(7, 2, 3, 1, 1, 0), BD_NCHW, 2, 3, 30, 28, 64, 0, 0);
        conv_check("conv 3x3 bias 16->12 nhwc (head: channels not /8)", cd(3, 1, 1, 1, 1, 0), BD_NCHW8C, 2, 16, 7,
                   7, 12, 1, 0);
        conv_check("conv 3x3 bias accumulate nchw8c", cd(3, 1, 1, 1, 1, 0), BD_NCHW8C, 2, 16, 7, 7, 16, 1, 1);
        conv_check("conv 3x3 dilation 2 nchw", cd(3, 1, 2, 2, 1, 0), BD_NCHW, 2, 8, 9, 9, 8, 1, 0);
        conv_check("conv 3x3 groups 2 nchw8c", cd(3, 1, 1, 1, 2, 0), BD_NCHW8C, 2, 16, 6, 6, 16, 1, 0);
        conv_check("transposed conv 2x2 s2 nchw8c", cd(2, 2, 0, 1, 1, 1), BD_NCHW8C, 2, 16, 7, 7, 16, 1, 0);
        conv_check("transposed conv 2x2 s2 nhwc accumulate", cd(2, 2, 0, 1, 1, 1), BD_NHWC, 2, 16, 5, 5, 8, 1, 1);
        conv_check("conv 3x3 s1 pad 0 (SSD extra) nchw8c", cd(3, 1, 0, 1, 1, 0), BD_NCHW8C, 2, 128, 5, 5, 256, 1, 0);
        conv_check("conv 3x3 pad 1 on a 1x1 map (SSD's last head) nchw8c", cd(3, 1, 1, 1, 1, 0), BD_NCHW8C, 3, 16, 1,
                   1, 12, 1, 0);
        conv_check("conv 3x3 pad 1 on a 1x1 map, accumulate, nchw", cd(3, 1, 1, 1, 1, 0), BD_NCHW, 2, 5, 1, 1, 7, 1,
                   1);

        bn_check("batch norm nchw8c", BD_NCHW8C, 4, 16, 9, 9, 0);
        bn_check("batch norm + relu nchw8c", BD_NCHW8C, 4, 16, 9, 9, 1);
        bn_check("batch norm nhwc", BD_NHWC, 2, 3, 9, 9, 0);
        bn_check("batch norm + relu 512 channels at 2x2 nchw8c", BD_NCHW8C, 4, 512, 2, 2, 1);
        bn_check("batch norm 512 channels at 2x2 nchw8c", BD_NCHW8C, 4, 512, 2, 2, 0);
        bn_check("batch norm + relu nchw", BD_NCHW, 2, 8, 5, 7, 1);

        pool_check("max pool 3x3 s2 p1 nchw8c", BD_NCHW8C, 3, 2, 1, 15);
        pool_check("max pool 1x1 s2 nchw8c", BD_NCHW8C, 1, 2, 0, 7);
        pool_check("max pool 2x2 s2 nhwc", BD_NHWC, 2, 2, 0, 8);

        fc_check("fully connected 512->1000 bias", 4, 512, 1000, 1);
        fc_check("fully connected 100->7 no bias", 3, 100, 7, 0);

        weight_version_check();
        bad_input_checks();

        bd_backend_free(be);
        return done_testing();
}

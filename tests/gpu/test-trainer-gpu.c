/* test-trainer-gpu.c: every CUDA operation against the CPU backend (make
 * check-gpu).
 *
 * Random inputs go through each operation on both backends; outputs and
 * gradients must agree within 1e-4 of the largest CPU value in float32 (cuDNN
 * without TF32), and within 2e-2 in mixed precision (float16 activations,
 * float32 parameters), where the operation has a mixed-precision path.  Then
 * a few training steps of a small ResNet on each backend give the same
 * losses within 1e-3; and the measured convolution algorithms kept on disk
 * (BD_CUDA_ALGO_CACHE) by one backend and read by the next.  Without a
 * visible GPU the test is skipped, saying why.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "losses.h"
#include "optim.h"
#include "resnet.h"
#include "../unit/tap.h"

static struct bd_backend *cpu, *gpu;
static struct bd_rng rng;

static struct bd_tensor T0(void)
{
        struct bd_tensor t;
        memset(&t, 0, sizeof(t));
        return t;
}

/* a random CPU tensor */
static struct bd_tensor hrand(enum bd_layout l, int nd, int64_t a, int64_t b, int64_t c, int64_t d, double lo,
                              double hi)
{
        int64_t dims[4] = { a, b, c, d };
        struct bd_tensor t = T0();
        bd_tensor_resize(cpu, &t, BD_F32, l, nd, dims);
        for (int64_t i = 0; i < bd_tensor_numel(&t); i++)
                ((float *)t.data)[i] = (float)(lo + (hi - lo) * bd_rng_uniform(&rng));
        return t;
}

/* the same values on the GPU: f32 in the layout given, or f16 NHWC */
static struct bd_tensor dev(const struct bd_tensor *h, int f16)
{
        struct bd_tensor a = T0(), b = T0(), c = T0();
        if (h->ndim == 4 && h->layout != BD_NCHW)
                bd_op_relayout(cpu, h, BD_NCHW, &a);
        else
                bd_op_copy(cpu, h, &a);
        bd_op_copy(gpu, &a, &b);
        bd_tensor_release(&a);
        if (!f16)
                return b;
        bd_op_cast(gpu, &b, BD_F16, 1.0, &c);
        bd_tensor_release(&b);
        if (c.ndim == 4) {
                bd_op_relayout(gpu, &c, BD_NHWC, &b);
                bd_tensor_release(&c);
                return b;
        }
        return c;
}

/* max |cpu - gpu| / max |cpu| over the elements, both brought to f32 nchw on the host */
static double diff(const struct bd_tensor *c, const struct bd_tensor *g)
{
        struct bd_tensor cn = T0(), g32 = T0(), gn = T0(), gh = T0();
        if (c->ndim == 4)
                bd_op_relayout(cpu, c, BD_NCHW, &cn);
        else
                bd_op_copy(cpu, c, &cn);
        if (g->dtype != BD_F32)
                bd_op_cast(gpu, g, BD_F32, 1.0, &g32);
        else
                bd_op_copy(gpu, g, &g32);
        if (g32.ndim == 4)
                bd_op_relayout(gpu, &g32, BD_NCHW, &gn);
        else
                bd_op_copy(gpu, &g32, &gn);
        /* into a host view: bd_op_copy(gpu, ...) would reallocate an owned
         * tensor on the GPU */
        bd_tensor_resize(cpu, &gh, BD_F32, BD_NCHW, gn.ndim, gn.dims);
        struct bd_tensor hv = bd_tensor_view(gh.data, BD_CPU, BD_F32, BD_NCHW, gn.ndim, gn.dims);
        bd_op_copy(gpu, &gn, &hv);
        gpu->ops->sync(gpu);
        double mx = 1e-20, d = 0;
        if (!bd_tensor_same_shape(&cn, &gh))
                d = INFINITY;
        else
                for (int64_t i = 0; i < bd_tensor_numel(&cn); i++) {
                        double a = ((float *)cn.data)[i], b = ((float *)gh.data)[i];
                        mx = fmax(mx, fabs(a));
                        d = fmax(d, fabs(a - b));
                        if (b != b)
                                d = INFINITY;
                }
        bd_tensor_release(&cn);
        bd_tensor_release(&g32);
        bd_tensor_release(&gn);
        bd_tensor_release(&gh);
        return d / mx;
}

static void same(const char *what, const struct bd_tensor *c, const struct bd_tensor *g, int f16)
{
        double tol = f16 ? 2e-2 : 1e-4, e = diff(c, g);
        char d[256];
        snprintf(d, sizeof(d), "%s%s", what, f16 ? " (mixed precision)" : "");
        if (!ok(e <= tol, d))
                printf("#   relative difference %.3g > %.0e\n", e, tol);
}

#define REL(...) do { struct bd_tensor *_r[] = { __VA_ARGS__ }; for (size_t _i = 0; _i < ARRAY_SIZE(_r); _i++) bd_tensor_release(_r[_i]); } while (0)

static void conv_case(const char *name, struct bd_conv_desc d, int64_t N, int64_t C, int64_t H, int64_t O, int bias,
                      int f16)
{
        struct bd_plan_cache pcc = { 0 }, pcg = { 0 };
        struct bd_tensor x = hrand(cpu->ops->pref_layout(cpu, C, BD_F32), 4, N, C, H, H, -1, 1);
        struct bd_tensor w = d.transposed ? hrand(BD_NCHW, 4, C, O / d.groups, d.kh, d.kw, -0.5, 0.5)
                                          : hrand(BD_NCHW, 4, O, C / d.groups, d.kh, d.kw, -0.5, 0.5);
        struct bd_tensor b = hrand(BD_NCHW, 1, O, 0, 0, 0, -1, 1);
        struct bd_tensor gx = dev(&x, f16), gw = dev(&w, 0), gb = dev(&b, 0);
        struct bd_tensor y = T0(), gy = T0(), dx = T0(), gdx = T0(), gdy = T0();
        struct bd_tensor dw = hrand(BD_NCHW, 4, w.dims[0], w.dims[1], w.dims[2], w.dims[3], 0, 0), db = hrand(BD_NCHW, 1, O, 0, 0, 0, 0, 0);
        struct bd_tensor gdw = dev(&dw, 0), gdb = dev(&db, 0);
        char what[256];
        int r = bd_op_conv_fwd(cpu, &d, &pcc, &x, &w, bias ? &b : NULL, &y, 1);
        int r2 = bd_op_conv_fwd(gpu, &d, &pcg, &gx, &gw, bias ? &gb : NULL, &gy, 1);
        snprintf(what, sizeof(what), "%s: forward", name);
        if (!ok(r == 0 && r2 == 0, "  runs on both")) {
                printf("#   %s / %s\n", cpu->err.msg, gpu->err.msg);
                goto out;
        }
        same(what, &y, &gy, f16);
        struct bd_tensor dy = hrand(y.layout, 4, y.dims[0], y.dims[1], y.dims[2], y.dims[3], -1, 1);
        gdy = dev(&dy, f16);
        r = bd_op_conv_bwd(cpu, &d, &pcc, &x, &w, &dy, &dx, &dw, bias ? &db : NULL, 0, 1);
        r2 = bd_op_conv_bwd(gpu, &d, &pcg, &gx, &gw, &gdy, &gdx, &gdw, bias ? &gdb : NULL, 0, 1);
        if (ok(r == 0 && r2 == 0, "  backward runs on both")) {
                snprintf(what, sizeof(what), "%s: input gradient", name);
                same(what, &dx, &gdx, f16);
                snprintf(what, sizeof(what), "%s: weight gradient", name);
                same(what, &dw, &gdw, f16);
                if (bias) {
                        snprintf(what, sizeof(what), "%s: bias gradient", name);
                        same(what, &db, &gdb, f16);
                }
        } else {
                printf("#   %s / %s\n", cpu->err.msg, gpu->err.msg);
        }
        bd_tensor_release(&dy);
out:
        REL(&x, &w, &b, &gx, &gw, &gb, &y, &gy, &dx, &gdx, &gdy, &dw, &db, &gdw, &gdb);
        bd_plan_cache_clear(cpu, &pcc);
        bd_plan_cache_clear(gpu, &pcg);
}

static struct bd_conv_desc cd(int k, int s, int p, int dil, int g, int tr)
{
        struct bd_conv_desc d = { k, k, s, s, p, p, dil, dil, g, tr };
        return d;
}

static void bn_case(int relu, int f16)
{
        struct bd_plan_cache pcc = { 0 }, pcg = { 0 };
        struct bd_tensor x = hrand(BD_NCHW8C, 4, 4, 16, 9, 9, -1, 2), g = hrand(BD_NCHW, 1, 16, 0, 0, 0, 0.5, 1.5),
                         b = hrand(BD_NCHW, 1, 16, 0, 0, 0, -0.5, 0.5), dy = hrand(BD_NCHW8C, 4, 4, 16, 9, 9, -1, 1);
        struct bd_tensor gx = dev(&x, f16), gg = dev(&g, 0), gb = dev(&b, 0), gdy = dev(&dy, f16);
        struct bd_tensor y = T0(), m = T0(), v = T0(), ws = T0(), gy = T0(), gm = T0(), gv = T0(), gws = T0();
        struct bd_tensor dx = T0(), gdx = T0(), dg = hrand(BD_NCHW, 1, 16, 0, 0, 0, 0, 0), dbt = hrand(BD_NCHW, 1, 16, 0, 0, 0, 0, 0);
        struct bd_tensor gdg = dev(&dg, 0), gdbt = dev(&dbt, 0);
        int r = bd_op_bn_fwd(cpu, &pcc, 1e-5, relu, &x, &g, &b, &y, &m, &v, &ws);
        int r2 = bd_op_bn_fwd(gpu, &pcg, 1e-5, relu, &gx, &gg, &gb, &gy, &gm, &gv, &gws);
        if (ok(r == 0 && r2 == 0, relu ? "batch norm + relu: runs" : "batch norm: runs")) {
                same("batch norm: output", &y, &gy, f16);
                same("batch norm: batch mean", &m, &gm, f16);
                same("batch norm: batch variance", &v, &gv, f16);
                r = bd_op_bn_bwd(cpu, &pcc, 1e-5, relu, &x, &y, &dy, &g, &m, &v, &ws, &dx, &dg, &dbt, 0);
                r2 = bd_op_bn_bwd(gpu, &pcg, 1e-5, relu, &gx, &gy, &gdy, &gg, &gm, &gv, &gws, &gdx, &gdg, &gdbt, 0);
                if (ok(r == 0 && r2 == 0, "batch norm: backward runs")) {
                        same("batch norm: input gradient", &dx, &gdx, f16);
                        same("batch norm: weight gradient", &dg, &gdg, f16);
                        same("batch norm: bias gradient", &dbt, &gdbt, f16);
                }
        }
        if (r < 0 || r2 < 0)
                printf("#   %s / %s\n", cpu->err.msg, gpu->err.msg);
        REL(&x, &g, &b, &dy, &gx, &gg, &gb, &gdy, &y, &m, &v, &ws, &gy, &gm, &gv, &gws, &dx, &gdx, &dg, &dbt, &gdg, &gdbt);
        bd_plan_cache_clear(cpu, &pcc);
        bd_plan_cache_clear(gpu, &pcg);
}

/* Distinct values that half precision holds exactly (+-[1/16, 16), shuffled):
 * the maximum of every pooling window is then the same element on both
 * sides.  Random floats rounded to half tie now and then, and a tie's
 * gradient goes to whichever element each library picks. */
static void half_distinct(struct bd_tensor *t)
{
        int64_t n = bd_tensor_numel(t), m = 2 * 8 * 1024;
        float *v = malloc((size_t)m * sizeof(float));
        if (n > m || !v) {
                printf("Bail out! half_distinct: %lld values, at most %lld\n", (long long)n, (long long)m);
                exit(1);
        }
        for (int64_t i = 0; i < m; i++) {
                int64_t k = i / 2, e = k / 1024 - 4, mant = k % 1024;
                v[i] = (float)ldexp((1.0 + mant / 1024.0) * (i % 2 ? -1 : 1), (int)e);
        }
        for (int64_t i = m - 1; i > 0; i--) {
                int64_t j = (int64_t)(bd_rng_uniform(&rng) * (double)(i + 1));
                float s = v[i];
                v[i] = v[j < i ? j : i];
                v[j < i ? j : i] = s;
        }
        memcpy(t->data, v, (size_t)n * sizeof(float));
        free(v);
}

static void pool_case(int f16)
{
        struct bd_plan_cache pcc = { 0 }, pcg = { 0 };
        struct bd_pool_desc d = { 3, 3, 2, 2, 1, 1 };
        struct bd_tensor x = hrand(BD_NCHW8C, 4, 2, 16, 15, 15, -1, 1);
        if (f16)
                half_distinct(&x);
        struct bd_tensor gx = dev(&x, f16);
        struct bd_tensor y = T0(), gy = T0(), ws = T0(), gws = T0(), dx = T0(), gdx = T0();
        int r = bd_op_pool_fwd(cpu, &d, &pcc, &x, &y, &ws), r2 = bd_op_pool_fwd(gpu, &d, &pcg, &gx, &gy, &gws);
        if (ok(r == 0 && r2 == 0, "max pool: runs")) {
                same("max pool: output", &y, &gy, f16);
                struct bd_tensor dy = hrand(y.layout, 4, y.dims[0], y.dims[1], y.dims[2], y.dims[3], -1, 1), gdy = dev(&dy, f16);
                r = bd_op_pool_bwd(cpu, &d, &pcc, &x, &y, &dy, &ws, &dx);
                r2 = bd_op_pool_bwd(gpu, &d, &pcg, &gx, &gy, &gdy, &gws, &gdx);
                if (ok(r == 0 && r2 == 0, "max pool: backward runs"))
                        same("max pool: input gradient", &dx, &gdx, f16);
                REL(&dy, &gdy);
        }
        REL(&x, &gx, &y, &gy, &ws, &gws, &dx, &gdx);
        bd_plan_cache_clear(cpu, &pcc);
        bd_plan_cache_clear(gpu, &pcg);
}

static void fc_case(int f16)
{
        struct bd_plan_cache pcc = { 0 }, pcg = { 0 };
        struct bd_tensor x = hrand(BD_NCHW, 2, 6, 40, 0, 0, -1, 1), w = hrand(BD_NCHW, 2, 12, 40, 0, 0, -0.5, 0.5),
                         b = hrand(BD_NCHW, 1, 12, 0, 0, 0, -1, 1), dy = hrand(BD_NCHW, 2, 6, 12, 0, 0, -1, 1);
        struct bd_tensor gx = dev(&x, f16), gw = dev(&w, 0), gb = dev(&b, 0), gdy = dev(&dy, f16);
        struct bd_tensor y = T0(), gy = T0(), dx = T0(), gdx = T0();
        struct bd_tensor dw = hrand(BD_NCHW, 2, 12, 40, 0, 0, 0, 0), db = hrand(BD_NCHW, 1, 12, 0, 0, 0, 0, 0);
        struct bd_tensor gdw = dev(&dw, 0), gdb = dev(&db, 0);
        int r = bd_op_fc_fwd(cpu, &pcc, &x, &w, &b, &y, 1), r2 = bd_op_fc_fwd(gpu, &pcg, &gx, &gw, &gb, &gy, 1);
        if (ok(r == 0 && r2 == 0, "fully connected: runs")) {
                same("fully connected: output", &y, &gy, f16);
                r = bd_op_fc_bwd(cpu, &pcc, &x, &w, &dy, &dx, &dw, &db, 0, 1);
                r2 = bd_op_fc_bwd(gpu, &pcg, &gx, &gw, &gdy, &gdx, &gdw, &gdb, 0, 1);
                if (ok(r == 0 && r2 == 0, "fully connected: backward runs")) {
                        same("fully connected: input gradient", &dx, &gdx, f16);
                        same("fully connected: weight gradient", &dw, &gdw, f16);
                        same("fully connected: bias gradient", &db, &gdb, f16);
                }
        }
        if (r < 0 || r2 < 0)
                printf("#   %s / %s\n", cpu->err.msg, gpu->err.msg);
        REL(&x, &w, &b, &dy, &gx, &gw, &gb, &gdy, &y, &gy, &dx, &gdx, &dw, &db, &gdw, &gdb);
        bd_plan_cache_clear(cpu, &pcc);
        bd_plan_cache_clear(gpu, &pcg);
}

/* element-wise operations: each runs the same call on both backends */
static void elementwise(int f16)
{
        struct bd_tensor x = hrand(BD_NCHW, 4, 2, 16, 6, 5, -1, 1), x2 = hrand(BD_NCHW, 4, 2, 16, 6, 5, -1, 1);
        struct bd_tensor gx = dev(&x, f16), gx2 = dev(&x2, f16), y = T0(), gy = T0(), z = T0(), gz = T0();
        struct bd_tensor sc = hrand(BD_NCHW, 1, 16, 0, 0, 0, 0.5, 1.5), sh = hrand(BD_NCHW, 1, 16, 0, 0, 0, -1, 1);
        struct bd_tensor gsc = dev(&sc, 0), gsh = dev(&sh, 0);
        /* the CPU side in the GPU's layout, so that shapes and layouts match */
        struct bd_tensor xc = T0(), x2c = T0();
        bd_op_relayout(cpu, &x, f16 ? BD_NHWC : BD_NCHW, &xc);
        bd_op_relayout(cpu, &x2, f16 ? BD_NHWC : BD_NCHW, &x2c);

        ok(bd_op_relu(cpu, &xc, &y) == 0 && bd_op_relu(gpu, &gx, &gy) == 0, "relu: runs");
        same("relu", &y, &gy, f16);
        ok(bd_op_relu_bwd(cpu, &y, &x2c, &z, 0) == 0 && bd_op_relu_bwd(gpu, &gy, &gx2, &gz, 0) == 0, "relu backward: runs");
        same("relu backward", &z, &gz, f16);
        ok(bd_op_add(cpu, &xc, &x2c, &y, 1) == 0 && bd_op_add(gpu, &gx, &gx2, &gy, 1) == 0, "add + relu: runs");
        same("add + relu", &y, &gy, f16);
        ok(bd_op_affine(cpu, &xc, &sc, &sh, 1, &y) == 0 && bd_op_affine(gpu, &gx, &gsc, &gsh, 1, &gy) == 0, "affine: runs");
        same("affine (frozen batch norm) + relu", &y, &gy, f16);
        ok(bd_op_affine_bwd(cpu, &y, &x2c, &sc, &z) == 0 && bd_op_affine_bwd(gpu, &gy, &gx2, &gsc, &gz) == 0,
           "affine backward: runs");
        same("affine backward", &z, &gz, f16);
        ok(bd_op_upsample2x(cpu, &xc, &y) == 0 && bd_op_upsample2x(gpu, &gx, &gy) == 0, "upsample: runs");
        same("nearest upsample x2", &y, &gy, f16);
        ok(bd_op_upsample2x_bwd(cpu, &y, &z) == 0 && bd_op_upsample2x_bwd(gpu, &gy, &gz) == 0, "upsample backward: runs");
        same("nearest upsample x2 backward", &z, &gz, f16);
        const struct bd_tensor *pc[2] = { &xc, &x2c }, *pg[2] = { &gx, &gx2 };
        ok(bd_op_concat(cpu, pc, 2, &y) == 0 && bd_op_concat(gpu, pg, 2, &gy) == 0, "concat: runs");
        same("concat", &y, &gy, f16);
        ok(bd_op_global_avgpool(cpu, &xc, &y) == 0 && bd_op_global_avgpool(gpu, &gx, &gy) == 0, "average pool: runs");
        same("global average pool", &y, &gy, f16);
        REL(&x, &x2, &gx, &gx2, &y, &gy, &z, &gz, &sc, &sh, &gsc, &gsh, &xc, &x2c);
}

static void losses_and_more(void)
{
        struct bd_tensor x = hrand(BD_NCHW, 2, 30, 81, 0, 0, -3, 3), t = hrand(BD_NCHW, 2, 30, 81, 0, 0, 0, 1);
        struct bd_tensor gx = dev(&x, 0), gt = dev(&t, 0), l = T0(), gl = T0(), d = T0(), gd = T0();
        int64_t R = 30;
        struct bd_tensor lab = T0(), glab = T0();
        bd_tensor_resize(cpu, &lab, BD_I32, BD_NCHW, 1, &R);
        for (int i = 0; i < 30; i++)
                ((int32_t *)lab.data)[i] = i == 7 ? -1 : (int32_t)bd_rng_below(&rng, 81);
        bd_op_copy(gpu, &lab, &glab);
        ok(bd_op_softmax_ce(cpu, &x, &lab, NULL, 0.5, &l, &d) == 0 && bd_op_softmax_ce(gpu, &gx, &glab, NULL, 0.5, &gl, &gd) == 0,
           "softmax cross-entropy: runs");
        same("softmax cross-entropy: losses", &l, &gl, 0);
        same("softmax cross-entropy: gradient", &d, &gd, 0);
        ok(bd_op_bce(cpu, &x, &t, NULL, 1, &l, &d) == 0 && bd_op_bce(gpu, &gx, &gt, NULL, 1, &gl, &gd) == 0, "bce: runs");
        same("sigmoid binary cross-entropy: losses", &l, &gl, 0);
        same("sigmoid binary cross-entropy: gradient", &d, &gd, 0);
        ok(bd_op_smooth_l1(cpu, &x, &t, NULL, 1.0 / 9, 1, &l, &d) == 0 &&
           bd_op_smooth_l1(gpu, &gx, &gt, NULL, 1.0 / 9, 1, &gl, &gd) == 0, "smooth L1: runs");
        same("smooth L1: losses", &l, &gl, 0);
        same("smooth L1: gradient", &d, &gd, 0);
        int perm[2] = { 1, 0 };
        ok(bd_op_permute(cpu, &x, perm, &l) == 0 && bd_op_permute(gpu, &gx, perm, &gl) == 0, "permute: runs");
        same("permute", &l, &gl, 0);
        double s1 = 0, s2 = 0, q1 = 0, q2 = 0;
        ok(bd_op_sum(cpu, &x, &s1) == 0 && bd_op_sum(gpu, &gx, &s2) == 0 && bd_op_sumsq(cpu, &x, &q1) == 0 &&
           bd_op_sumsq(gpu, &gx, &q2) == 0, "reductions: run");
        ok(fabs(s1 - s2) <= 1e-4 * fabs(q1) && fabs(q1 - q2) <= 1e-5 * q1, "sum and sum of squares agree");
        double r1 = 0, r2 = 0;
        bd_op_sum(gpu, &gx, &r1);
        bd_op_sum(gpu, &gx, &r2);
        ok(r1 == r2, "the GPU sum is the same twice");
        /* SGD on 1000 values */
        int64_t n = 1000;
        struct bd_tensor p = hrand(BD_NCHW, 1, n, 0, 0, 0, -1, 1), g = hrand(BD_NCHW, 1, n, 0, 0, 0, -1, 1),
                         v = hrand(BD_NCHW, 1, n, 0, 0, 0, -1, 1);
        struct bd_tensor gp = dev(&p, 0), gg = dev(&g, 0), gv = dev(&v, 0);
        ok(bd_op_sgd(cpu, BD_F32, n, p.data, g.data, v.data, 0.1, 0.9, 1e-4, 0.5) == 0 &&
           bd_op_sgd(gpu, BD_F32, n, gp.data, gg.data, gv.data, 0.1, 0.9, 1e-4, 0.5) == 0, "sgd: runs");
        same("sgd: parameters", &p, &gp, 0);
        same("sgd: momentum", &v, &gv, 0);
        REL(&x, &t, &gx, &gt, &l, &gl, &d, &gd, &lab, &glab, &p, &g, &v, &gp, &gg, &gv);
}

/* the detection heads' selection, label masks and losses (trainer/det/losses.h) */
static void det_heads(int f16)
{
        int64_t P = 12, K = 9, M = 6;
        struct bd_tensor x = hrand(BD_NCHW, 4, P, K, M, M, -4, 4), gx = dev(&x, f16), y = T0(), gy = T0(), dx = T0(),
                         gdx = T0();
        struct bd_tensor lab = T0(), glab = T0();
        bd_tensor_resize(cpu, &lab, BD_I32, BD_NCHW, 1, &P);
        for (int i = 0; i < P; i++)
                ((int32_t *)lab.data)[i] = i == 3 ? -1 : i == 5 ? (int32_t)K : (int32_t)bd_rng_below(&rng, (uint64_t)K);
        bd_op_copy(gpu, &lab, &glab);
        ok(bd_op_select_channel(cpu, &x, &lab, &y) == 0 && bd_op_select_channel(gpu, &gx, &glab, &gy) == 0,
           "select channel: runs");
        same("select channel", &y, &gy, f16);
        ok(bd_op_select_channel_bwd(cpu, &y, &lab, &x, &dx, 0) == 0 &&
           bd_op_select_channel_bwd(gpu, &gy, &glab, &gx, &gdx, 0) == 0, "select channel backward: runs");
        same("select channel backward", &dx, &gdx, f16);
        REL(&x, &gx, &y, &gy, &dx, &gdx);
        if (f16) {
                REL(&lab, &glab);
                return;
        }
        ok(bd_op_label_mask(cpu, &lab, 4, 1, 5, BD_F32, &y) == 0 && bd_op_label_mask(gpu, &glab, 4, 1, 5, BD_F32, &gy) == 0,
           "label mask: runs");
        same("label mask", &y, &gy, 0);
        REL(&y, &gy);
        /* RPN loss over 3000 anchors, box head over 64 RoIs of 9 classes, mask over P RoIs */
        int64_t A = 3000;
        struct bd_tensor obj = hrand(BD_NCHW, 1, A, 0, 0, 0, -3, 3), del = hrand(BD_NCHW, 2, A, 4, 0, 0, -1, 1),
                         tgt = hrand(BD_NCHW, 2, A, 4, 0, 0, -1, 1), al = T0(), gal = T0();
        bd_tensor_resize(cpu, &al, BD_I32, BD_NCHW, 1, &A);
        for (int i = 0; i < A; i++)
                ((int32_t *)al.data)[i] = (int32_t)bd_rng_below(&rng, 10) - 7;  /* mostly -1..-7, some 0, 1, 2 */
        bd_op_copy(gpu, &al, &gal);
        struct bd_tensor gobj = dev(&obj, 0), gdel = dev(&del, 0), gtgt = dev(&tgt, 0), d1 = T0(), d2 = T0(), g1 = T0(),
                         g2 = T0();
        struct det_loss_ws ws = { 0 }, gws = { 0 };
        /* the CPU counts and reads at once; the GPU takes the counts from
         * here and its values come back in one read at the end */
        struct det_loss_acc gacc = { 0 };
        struct det_loss_opts now = { .n = -1, .gscale = 0.5 }, later = { .gscale = 0.5, .acc = &gacc };
        double c[6], g[6] = { -1, -1, -1, -1, -1, -1 }, gnow[2];
        for (int i = 0; i < A; i++)
                later.n += ((int32_t *)al.data)[i] >= 0;
        ok(det_loss_acc_begin(gpu, &gacc) == 0, "loss accumulator on the GPU");
        ok(det_rpn_loss(cpu, &ws, &now, &obj, &del, &al, &tgt, DET_BETA_RPN, &c[0], &c[1], &d1, &d2) == 0 &&
           det_rpn_loss(gpu, &gws, &now, &gobj, &gdel, &gal, &gtgt, DET_BETA_RPN, &gnow[0], &gnow[1], NULL, NULL) == 0 &&
           det_rpn_loss(gpu, &gws, &later, &gobj, &gdel, &gal, &gtgt, DET_BETA_RPN, &g[0], &g[1], &g1, &g2) == 0 &&
           fabs(c[0] - gnow[0]) <= 1e-5 * fabs(c[0]) && fabs(c[1] - gnow[1]) <= 1e-5 * fabs(c[1]),
           "RPN loss: same values (read at once)");
        same("RPN loss: objectness gradient", &d1, &g1, 0);
        same("RPN loss: delta gradient", &d2, &g2, 0);
        REL(&obj, &del, &tgt, &al, &gal, &gobj, &gdel, &gtgt, &d1, &d2, &g1, &g2);
        int64_t R = 64;
        struct bd_tensor cls = hrand(BD_NCHW, 2, R, K, 0, 0, -3, 3), box = hrand(BD_NCHW, 2, R, 4 * K, 0, 0, -1, 1),
                         bt = hrand(BD_NCHW, 2, R, 4, 0, 0, -1, 1), rl = T0(), grl = T0();
        bd_tensor_resize(cpu, &rl, BD_I32, BD_NCHW, 1, &R);
        for (int i = 0; i < R; i++)
                ((int32_t *)rl.data)[i] = bd_rng_below(&rng, 4) ? 0 : (int32_t)bd_rng_below(&rng, (uint64_t)K);
        bd_op_copy(gpu, &rl, &grl);
        struct bd_tensor gcls = dev(&cls, 0), gbox = dev(&box, 0), gbt = dev(&bt, 0);
        now.gscale = later.gscale = 1;
        later.n = (double)R;
        ok(det_fastrcnn_loss(cpu, &ws, &now, &cls, &box, &rl, &bt, 1.0, &c[2], &c[3], &d1, &d2) == 0 &&
           det_fastrcnn_loss(gpu, &gws, &later, &gcls, &gbox, &grl, &gbt, 1.0, &g[2], &g[3], &g1, &g2) == 0,
           "box head loss: runs");
        same("box head loss: logit gradient", &d1, &g1, 0);
        same("box head loss: delta gradient", &d2, &g2, 0);
        REL(&cls, &box, &bt, &rl, &grl, &gcls, &gbox, &gbt, &d1, &d2, &g1, &g2);
        for (int i = 0; i < P; i++)
                ((int32_t *)lab.data)[i] = 1 + (int32_t)bd_rng_below(&rng, (uint64_t)(K - 1));
        bd_op_copy(gpu, &lab, &glab);
        struct bd_tensor ml = hrand(BD_NCHW, 4, P, K, 28, 28, -4, 4), mt = hrand(BD_NCHW, 3, P, 28, 28, 0, 0, 1);
        struct bd_tensor gml = dev(&ml, 0), gmt = dev(&mt, 0);
        ok(det_mask_loss(cpu, &ws, &now, &ml, &lab, &mt, &c[4], &d1) == 0 &&
           det_mask_loss(gpu, &gws, &later, &gml, &glab, &gmt, &g[4], &g1) == 0, "mask loss: runs");
        same("mask loss: gradient", &d1, &g1, 0);
        int unread = gacc.used == 5 && g[0] == 0 && g[4] == 0, good = det_loss_acc_read(gpu, &gacc) == 0 && unread;
        for (int i = 0; i < 5; i++)
                good &= fabs(c[i] - g[i]) <= 1e-5 * fabs(c[i]) && (c[i] != 0 || i == 3);
        ok(good, "RPN, box head and mask losses read back once: the CPU's values");
        if (!good)
                printf("#   cpu %g %g %g %g %g, gpu %g %g %g %g %g\n", c[0], c[1], c[2], c[3], c[4], g[0], g[1], g[2], g[3],
                     g[4]);
        det_loss_acc_release(&gacc);
        REL(&ml, &mt, &gml, &gmt, &d1, &g1, &lab, &glab);
        det_loss_ws_release(&ws);
        det_loss_ws_release(&gws);
}

/* a few steps of a small ResNet on each backend */
static void resnet_steps(void)
{
        struct bd_model m[2];
        struct bd_resnet r[2];
        struct bd_sgd o[2];
        struct bd_backend *bes[2] = { cpu, gpu };
        struct bd_resnet_cfg cfg = { .depth = 18, .width = 16, .num_classes = 10 };
        struct bd_sgd_cfg sc = { .lr = 0.02, .momentum = 0.9, .weight_decay = 1e-4 };
        struct bd_err err;
        struct bd_tensor hx = hrand(BD_NCHW, 4, 8, 3, 32, 32, -1, 1), lab = T0();
        int64_t n = 8;
        bd_tensor_resize(cpu, &lab, BD_I32, BD_NCHW, 1, &n);
        for (int i = 0; i < 8; i++)
                ((int32_t *)lab.data)[i] = i % 10;
        double loss[2][3] = { { 0 } };
        int fine = 1;
        for (int k = 0; k < 2; k++) {
                struct bd_tensor x = T0(), l = T0(), gl = T0(), dl = T0();
                bd_model_init(&m[k], bes[k], BD_F32);
                fine &= bd_resnet_init(&r[k], &m[k], "", &cfg) == 0 && bd_model_finalize(&m[k], &err) == 0 &&
                        bd_model_init_params(&m[k], 5, &err) == 0 && bd_sgd_init(&o[k], &m[k], &sc, &err) == 0 &&
                        bd_op_copy(bes[k], &hx, &x) == 0 && bd_op_copy(bes[k], &lab, &l) == 0;
                for (int s = 0; s < 3 && fine; s++) {
                        bd_model_begin_step(&m[k]);
                        fine &= bd_resnet_fwd(&m[k], &r[k], &x) == 0 &&
                                bd_op_softmax_ce(bes[k], &r[k].logits, &l, NULL, 1.0 / 8, &gl, &dl) == 0 &&
                                bd_op_sum(bes[k], &gl, &loss[k][s]) == 0 && bd_model_begin_backward(&m[k]) == 0 &&
                                bd_resnet_bwd(&m[k], &r[k], NULL, &dl) == 0 && bd_sgd_step(&o[k], &m[k], 1.0, NULL) == 0;
                }
                if (!fine)
                        printf("#   %s\n", bes[k]->err.msg);
                bd_sgd_release(&o[k], &m[k]);
                bd_resnet_release(&r[k]);
                bd_model_release(&m[k]);
                REL(&x, &l, &gl, &dl);
        }
        ok(fine, "resnet-18: three training steps on each backend");
        for (int s = 0; s < 3; s++) {
                char d[128];
                snprintf(d, sizeof(d), "resnet-18: loss of step %d within 1e-3", s + 1);
                if (!ok(fabs(loss[0][s] - loss[1][s]) <= 1e-3 * fabs(loss[0][s]), d))
                        printf("#   cpu %.9g, cuda %.9g\n", loss[0][s] / 8, loss[1][s] / 8);
        }
        REL(&hx, &lab);
}

/* BD_CUDA_ALGO_CACHE: a backend that measured a shape leaves it in its
 * GPU's file when freed; the next backend reads the file and computes the
 * same as the CPU with it; a malformed file stops the backend, naming it. */
static void algo_cache_on_disk(void)
{
        char dir[] = "/tmp/test-trainer-gpu-algos.XXXXXX";
        if (!ok(mkdtemp(dir) != NULL, "algorithm cache: a scratch directory"))
                return;
        setenv("BD_CUDA_ALGO_CACHE", dir, 1);
        struct bd_backend *keep = gpu, *g = NULL;
        struct bd_err err;
        if (ok(bd_backend_cuda_new(0, &g, &err) == 0, "algorithm cache: a backend with BD_CUDA_ALGO_CACHE")) {
                gpu = g;
                /* the second sighting of the shape has cuDNN time it */
                conv_case("conv 3x3 32->48 (measured, then saved)", cd(3, 1, 1, 1, 1, 0), 2, 32, 10, 48, 0, 0);
                conv_case("conv 3x3 32->48 again", cd(3, 1, 1, 1, 1, 0), 2, 32, 10, 48, 0, 0);
                bd_backend_free(g);
                gpu = keep;
        }
        char cmd[512], line[256] = "";
        snprintf(cmd, sizeof(cmd), "cat %s/conv-algos-*.txt 2>/dev/null | grep -c '^[0-9a-f]\\{16\\} '", dir);
        FILE *f = popen(cmd, "r");
        if (f) {
                if (!fgets(line, sizeof(line), f))
                        line[0] = '\0';
                pclose(f);
        }
        ok(atoi(line) >= 1, "algorithm cache: the freed backend's file holds the measured shape");
        if (!ok(bd_backend_cuda_new(0, &g, &err) == 0, "algorithm cache: the next backend reads it"))
                printf("#   %s\n", err.msg);
        else {
                gpu = g;
                conv_case("conv 3x3 32->48 with the algorithms from disk", cd(3, 1, 1, 1, 1, 0), 2, 32, 10, 48, 0, 0);
                bd_backend_free(g);
                gpu = keep;
        }
        snprintf(cmd, sizeof(cmd), "for f in %s/conv-algos-*.txt; do echo nonsense >> \"$f\"; done", dir);
        if (system(cmd) != 0)
                printf("#   could not spoil the file\n");
        g = NULL;
        int r = bd_backend_cuda_new(0, &g, &err);
        ok(r < 0 && strstr(err.msg, "conv-algos-") && strstr(err.msg, "an entry is"),
           "algorithm cache: a malformed file stops the backend, naming the file and line");
        if (r == 0)
                bd_backend_free(g);
        else
                printf("#   %s\n", err.msg);
        unsetenv("BD_CUDA_ALGO_CACHE");
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        if (system(cmd) != 0)
                printf("#   could not remove %s\n", dir);
}

int main(void)
{
        const char *why = "";
        struct bd_err err;
        if (bd_cuda_device_count(&why) == 0) {
                printf("1..0 # SKIP no GPU: %s\n", why);
                return 0;
        }
        if (bd_backend_cpu_new(0, &cpu, &err) < 0 || bd_backend_cuda_new(0, &gpu, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                return 1;
        }
        bd_rng_seed(&rng, 77, 0);
        for (int f16 = 0; f16 < 2; f16++) {
                conv_case("conv 3x3 64->64", cd(3, 1, 1, 1, 1, 0), 2, 64, 12, 64, 0, f16);
                conv_case("conv 3x3 s2 bias", cd(3, 2, 1, 1, 1, 0), 2, 32, 11, 64, 1, f16);
                conv_case("conv 1x1 s2", cd(1, 2, 0, 1, 1, 0), 2, 64, 10, 128, 0, f16);
                conv_case("conv 7x7 s2 stem", cd(7, 2, 3, 1, 1, 0), 2, 3, 32, 64, 0, f16);
                conv_case("conv 3x3 dilation 2 groups 2 bias", cd(3, 1, 2, 2, 2, 0), 2, 16, 9, 16, 1, f16);
                conv_case("conv 3x3 head 64->12 bias", cd(3, 1, 1, 1, 1, 0), 2, 64, 8, 12, 1, f16);
                conv_case("transposed conv 2x2 s2 bias", cd(2, 2, 0, 1, 1, 1), 2, 32, 7, 32, 1, f16);
                bn_case(0, f16);
                bn_case(1, f16);
                pool_case(f16);
                fc_case(f16);
                elementwise(f16);
        }
        losses_and_more();
        det_heads(0);
        det_heads(1);
        resnet_steps();
        algo_cache_on_disk();
        bd_backend_free(gpu);
        bd_backend_free(cpu);
        return done_testing();
}

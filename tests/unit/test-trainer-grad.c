/* test-trainer-grad.c: every layer's and operation's backward against finite
 * differences, in double precision on the CPU backend.
 *
 * Each case computes out = f(inputs, parameters) and the scalar
 * L = sum(out * R) for a fixed random R; the backward with dout = R must give
 * dL/dinput and dL/dparameter.  Central differences with h = 1e-6 on up to 24
 * elements of each input and parameter; tolerance |fd - an| <= 1e-6 +
 * 1e-5 |an| (the differences of a double-precision forward are good to about
 * 1e-9 here).  Inputs are drawn away from the kinks of ReLU, max pooling and
 * smooth L1 so that the differences are of a smooth function.  Layouts nchw,
 * nhwc and nchw8c are all covered.  Synchronised batch norm runs its own
 * path (element functions, not the library's) with a sum over one rank.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layers.h"
#include "ops.h"
#include "tap.h"

static struct bd_backend *be;
static struct bd_rng rng;

#define H_FD 1e-6
#define MAX_CHECK 24

struct gcase {
        const char *name;
        struct bd_model m;
        int nin;
        struct bd_tensor in[3];         /* differentiable inputs */
        int din_wanted[3];
        struct bd_tensor out, dout, din[3];
        int ones;                       /* R = 1: losses (their dx is of sum(loss)) */
        int (*fwd)(struct gcase *c);
        int (*bwd)(struct gcase *c);
        void *layer;
        struct bd_tensor aux[4];        /* case-specific (labels, targets, saved) */
        double dval;                    /* case-specific number */
        int ival;
};

static double *D(const struct bd_tensor *t)
{
        return t->data;
}

static void rand_fill(struct bd_tensor *t, double lo, double hi)
{
        int64_t n = bd_tensor_numel(t);
        for (int64_t i = 0; i < n; i++)
                D(t)[i] = lo + (hi - lo) * bd_rng_uniform(&rng);
}

/* values with |v| in [0.1, 1] and random sign: away from ReLU's kink */
static void rand_fill_away0(struct bd_tensor *t)
{
        int64_t n = bd_tensor_numel(t);
        for (int64_t i = 0; i < n; i++) {
                double v = 0.1 + 0.9 * bd_rng_uniform(&rng);
                D(t)[i] = bd_rng_uniform(&rng) < 0.5 ? -v : v;
        }
}

static void mk(struct bd_tensor *t, enum bd_layout l, int nd, int64_t a, int64_t b, int64_t c, int64_t d)
{
        int64_t dims[4] = { a, b, c, d };
        memset(t, 0, sizeof(*t));
        if (bd_tensor_resize(be, t, BD_F64, l, nd, dims) < 0)
                abort();
}

static double loss_of(struct gcase *c)
{
        if (c->fwd(c) < 0) {
                printf("# forward failed: %s\n", be->err.msg);
                return NAN;
        }
        double s = 0;
        int64_t n = bd_tensor_numel(&c->out);
        for (int64_t i = 0; i < n; i++)
                s += D(&c->out)[i] * D(&c->dout)[i];
        return s;
}

/* checks one gradient array against differences of the values in vals */
static int check_grad(struct gcase *c, const char *what, double *vals, const double *grad, int64_t n, int bump_version)
{
        int bad = 0;
        double worst = 0;
        int64_t step = n > MAX_CHECK ? n / MAX_CHECK : 1;
        for (int64_t i = 0; i < n; i += step) {
                double keep = vals[i];
                vals[i] = keep + H_FD;
                if (bump_version)
                        c->m.version++;
                double lp = loss_of(c);
                vals[i] = keep - H_FD;
                if (bump_version)
                        c->m.version++;
                double lm = loss_of(c);
                vals[i] = keep;
                if (bump_version)
                        c->m.version++;
                double fd = (lp - lm) / (2 * H_FD), an = grad[i];
                double err = fabs(fd - an);
                if (!(err <= 1e-6 + 1e-5 * fabs(an))) {
                        if (bad < 3)
                                printf("#   %s %s[%lld]: analytic %.10g, differences %.10g\n", c->name, what,
                                       (long long)i, an, fd);
                        bad++;
                }
                if (err > worst)
                        worst = err;
        }
        return bad;
}

static void run_case(struct gcase *c)
{
        char desc[1400];
        int bad = 0;
        c->m.training = 1;
        bd_model_begin_step(&c->m);
        if (c->fwd(c) < 0) {
                snprintf(desc, sizeof(desc), "%s: forward (%s)", c->name, be->err.msg);
                ok(0, desc);
                return;
        }
        if (!c->dout.data) {
                bd_tensor_resize_like(be, &c->dout, &c->out);
                if (c->ones)
                        bd_op_fill(be, &c->dout, 1.0);
                else
                        rand_fill(&c->dout, -1, 1);
        }
        if (bd_model_begin_backward(&c->m) < 0 || c->bwd(c) < 0) {
                snprintf(desc, sizeof(desc), "%s: backward (%s)", c->name, be->err.msg);
                ok(0, desc);
                return;
        }
        /* copy analytic gradients before the differences overwrite them */
        for (int k = 0; k < c->nin; k++) {
                if (!c->din_wanted[k])
                        continue;
                int64_t n = bd_tensor_numel(&c->in[k]);
                _cleanup_free_ double *g = xmalloc((size_t)n * sizeof(double));
                memcpy(g, c->din[k].data, (size_t)n * sizeof(double));
                char w[16];
                snprintf(w, sizeof(w), "input%d", k);
                bad += check_grad(c, w, D(&c->in[k]), g, n, 0);
        }
        if (c->m.n_train) {
                _cleanup_free_ double *g = xmalloc(c->m.n_train * sizeof(double));
                memcpy(g, c->m.grads, c->m.n_train * sizeof(double));
                for (int i = 0; i < c->m.np; i++)
                        if (bd_model_trained(&c->m, i))
                                bad += check_grad(c, c->m.p[i].name, (double *)c->m.params + c->m.p[i].offset,
                                                  g + c->m.p[i].goffset, c->m.p[i].numel, 1);
        }
        snprintf(desc, sizeof(desc), "%s: gradients match finite differences", c->name);
        ok(bad == 0, desc);
}

static void free_case(struct gcase *c)
{
        for (int k = 0; k < 3; k++) {
                bd_tensor_release(&c->in[k]);
                bd_tensor_release(&c->din[k]);
        }
        for (int k = 0; k < 4; k++)
                bd_tensor_release(&c->aux[k]);
        bd_tensor_release(&c->out);
        bd_tensor_release(&c->dout);
        bd_model_release(&c->m);
}

static void new_case(struct gcase *c, const char *name)
{
        memset(c, 0, sizeof(*c));
        c->name = name;
        bd_model_init(&c->m, be, BD_F64);
}

static void finalize(struct gcase *c)
{
        struct bd_err err;
        if (bd_model_finalize(&c->m, &err) < 0 || bd_model_init_params(&c->m, 7, &err) < 0)
                abort();
        /* non-trivial batch-norm and bias values */
        for (int i = 0; i < c->m.np; i++) {
                struct bd_param *p = &c->m.p[i];
                double *v = (double *)c->m.params + p->offset;
                if (strstr(p->name, "running_var"))
                        for (int64_t j = 0; j < p->numel; j++)
                                v[j] = 0.5 + bd_rng_uniform(&rng);
                else if (strstr(p->name, "running_mean") || (p->ndim == 1 && !strstr(p->name, "conv")))
                        for (int64_t j = 0; j < p->numel; j++)
                                v[j] = strstr(p->name, "weight") ? 0.5 + bd_rng_uniform(&rng) : bd_rng_uniform(&rng) - 0.5;
        }
}

/* ---- convolution ---- */

static int conv_fwd(struct gcase *c)
{
        return bd_conv_fwd(&c->m, c->layer, &c->in[0], &c->out);
}

static int conv_bwd(struct gcase *c)
{
        return bd_conv_bwd(&c->m, c->layer, &c->in[0], &c->dout, &c->din[0], 0);
}

static void conv_case(const char *name, struct bd_conv_cfg cfg, enum bd_layout l, int64_t N, int64_t H, int64_t W)
{
        struct gcase c;
        struct bd_conv conv;
        new_case(&c, name);
        if (bd_conv_init(&conv, &c.m, "conv", &cfg) < 0)
                abort();
        finalize(&c);
        c.layer = &conv;
        c.nin = 1;
        c.din_wanted[0] = 1;
        mk(&c.in[0], l, 4, N, cfg.cin, H, W);
        rand_fill(&c.in[0], -1, 1);
        c.fwd = conv_fwd;
        c.bwd = conv_bwd;
        run_case(&c);
        free_case(&c);
}

/* ---- batch norm ---- */

static int bn_fwd(struct gcase *c)
{
        return bd_bn_fwd(&c->m, c->layer, &c->in[0], &c->out);
}

static int bn_bwd(struct gcase *c)
{
        return bd_bn_bwd(&c->m, c->layer, &c->in[0], &c->out, &c->dout, &c->din[0]);
}

/* synchronised batch norm's sum over the ranks, on one rank */
static int sum_one(void *ctx, struct bd_model *m, double *v, int64_t n)
{
        return 0;
}

static void bn_case(const char *name, enum bd_bn_mode mode, int relu, enum bd_layout l, int64_t C, int sync)
{
        struct gcase c;
        struct bd_bn bn;
        new_case(&c, name);
        if (bd_bn_init(&bn, &c.m, "bn", C, mode, relu) < 0)
                abort();
        finalize(&c);
        if (sync)
                c.m.sync_bn = sum_one;
        c.layer = &bn;
        c.nin = 1;
        c.din_wanted[0] = 1;
        mk(&c.in[0], l, 4, 3, C, 4, 5);
        rand_fill(&c.in[0], -2, 2);
        if (relu && mode == BD_BN_FROZEN)
                rand_fill_away0(&c.in[0]);
        c.fwd = bn_fwd;
        c.bwd = bn_bwd;
        run_case(&c);
        bd_bn_release(&bn);
        free_case(&c);
}

/* ---- fully connected ---- */

static int fc_fwd(struct gcase *c)
{
        return bd_fc_fwd(&c->m, c->layer, &c->in[0], &c->out);
}

static int fc_bwd(struct gcase *c)
{
        return bd_fc_bwd(&c->m, c->layer, &c->in[0], &c->dout, &c->din[0]);
}

static void fc_case(const char *name, int bias)
{
        struct gcase c;
        struct bd_fc fc;
        new_case(&c, name);
        if (bd_fc_init(&fc, &c.m, "fc", 7, 5, bias, 0) < 0)
                abort();
        finalize(&c);
        c.layer = &fc;
        c.nin = 1;
        c.din_wanted[0] = 1;
        mk(&c.in[0], BD_NCHW, 2, 4, 7, 0, 0);
        rand_fill(&c.in[0], -1, 1);
        c.fwd = fc_fwd;
        c.bwd = fc_bwd;
        run_case(&c);
        free_case(&c);
}

/* ---- max pooling: distinct values per window (no ties) ---- */

static int pool_fwd(struct gcase *c)
{
        return bd_pool_fwd(&c->m, c->layer, &c->in[0], &c->out);
}

static int pool_bwd(struct gcase *c)
{
        return bd_pool_bwd(&c->m, c->layer, &c->in[0], &c->out, &c->dout, &c->din[0]);
}

static void pool_case(const char *name, int k, int s, int p, enum bd_layout l)
{
        struct gcase c;
        struct bd_pool pool;
        new_case(&c, name);
        bd_pool_init(&pool, &c.m, k, s, p);
        finalize(&c);
        c.layer = &pool;
        c.nin = 1;
        c.din_wanted[0] = 1;
        mk(&c.in[0], l, 4, 2, 8, 7, 6);
        /* a shuffled grid of values 0.01 apart: differences of 1e-6 never change a maximum */
        int64_t n = bd_tensor_numel(&c.in[0]);
        for (int64_t i = 0; i < n; i++)
                D(&c.in[0])[i] = 0.01 * (double)i;
        for (int64_t i = n - 1; i > 0; i--) {
                int64_t j = (int64_t)bd_rng_below(&rng, (uint64_t)i + 1);
                double t = D(&c.in[0])[i];
                D(&c.in[0])[i] = D(&c.in[0])[j];
                D(&c.in[0])[j] = t;
        }
        c.fwd = pool_fwd;
        c.bwd = pool_bwd;
        run_case(&c);
        bd_pool_release(&pool);
        free_case(&c);
}

/* ---- element-wise operations ---- */

static int relu_fwd(struct gcase *c)
{
        return bd_op_relu(be, &c->in[0], &c->out);
}

static int relu_bwd(struct gcase *c)
{
        return bd_op_relu_bwd(be, &c->out, &c->dout, &c->din[0], 0);
}

static int add_fwd(struct gcase *c)
{
        return bd_op_add(be, &c->in[0], &c->in[1], &c->out, c->ival);
}

static int add_bwd(struct gcase *c)
{
        int r;
        if (c->ival) {
                if ((r = bd_op_relu_bwd(be, &c->out, &c->dout, &c->din[0], 0)) < 0)
                        return r;
        } else if ((r = bd_op_axpby(be, 1, &c->dout, 0, &c->din[0])) < 0) {
                return r;
        }
        return bd_op_axpby(be, 1, &c->din[0], 0, &c->din[1]);
}

static int affine_fwd(struct gcase *c)
{
        return bd_op_affine(be, &c->in[0], &c->aux[0], &c->aux[1], c->ival, &c->out);
}

static int affine_bwd(struct gcase *c)
{
        return bd_op_affine_bwd(be, c->ival ? &c->out : NULL, &c->dout, &c->aux[0], &c->din[0]);
}

static int up_fwd(struct gcase *c)
{
        return bd_op_upsample2x(be, &c->in[0], &c->out);
}

static int up_bwd(struct gcase *c)
{
        return bd_op_upsample2x_bwd(be, &c->dout, &c->din[0]);
}

static int cat_fwd(struct gcase *c)
{
        const struct bd_tensor *parts[3] = { &c->in[0], &c->in[1], &c->in[2] };
        return bd_op_concat(be, parts, c->nin, &c->out);
}

static int cat_bwd(struct gcase *c)
{
        struct bd_tensor *parts[3] = { &c->din[0], &c->din[1], &c->din[2] };
        for (int k = 0; k < c->nin; k++)
                if (bd_tensor_resize_like(be, parts[k], &c->in[k]) < 0)
                        return -1;
        return bd_op_split(be, &c->dout, parts, c->nin);
}

static const int perm3[3] = { 2, 0, 1 }, inv3[3] = { 1, 2, 0 };

static int perm_fwd(struct gcase *c)
{
        return bd_op_permute(be, &c->in[0], perm3, &c->out);
}

static int perm_bwd(struct gcase *c)
{
        return bd_op_permute(be, &c->dout, inv3, &c->din[0]);
}

static int relayout_fwd(struct gcase *c)
{
        return bd_op_relayout(be, &c->in[0], (enum bd_layout)c->ival, &c->out);
}

static int relayout_bwd(struct gcase *c)
{
        return bd_op_relayout(be, &c->dout, c->in[0].layout, &c->din[0]);
}

static void simple_case(const char *name, int (*fwd)(struct gcase *), int (*bwd)(struct gcase *), int nin,
                        enum bd_layout l, int64_t C, int ival, int away0)
{
        struct gcase c;
        new_case(&c, name);
        finalize(&c);
        c.nin = nin;
        c.ival = ival;
        for (int k = 0; k < nin; k++) {
                c.din_wanted[k] = 1;
                mk(&c.in[k], l, 4, 2, C + (fwd == cat_fwd ? 8 * k : 0), 3, 4);
                if (away0)
                        rand_fill_away0(&c.in[k]);
                else
                        rand_fill(&c.in[k], -1, 1);
        }
        if (fwd == add_fwd && ival) {
                /* x + y away from 0: y = -x + away0 */
                struct bd_tensor t = { 0 };
                mk(&t, l, 4, 2, C, 3, 4);
                rand_fill_away0(&t);
                int64_t n = bd_tensor_numel(&t);
                for (int64_t i = 0; i < n; i++)
                        D(&c.in[1])[i] = D(&t)[i] - D(&c.in[0])[i];
                bd_tensor_release(&t);
        }
        if (fwd == affine_fwd) {
                mk(&c.aux[0], BD_NCHW, 1, C, 0, 0, 0);
                mk(&c.aux[1], BD_NCHW, 1, C, 0, 0, 0);
                rand_fill(&c.aux[0], 0.5, 1.5);
                rand_fill(&c.aux[1], -0.05, 0.05);
        }
        if (fwd == perm_fwd) {
                bd_tensor_release(&c.in[0]);
                mk(&c.in[0], BD_NCHW, 3, 2, 3, 5, 0);
                rand_fill(&c.in[0], -1, 1);
        }
        c.fwd = fwd;
        c.bwd = bwd;
        run_case(&c);
        free_case(&c);
}

/* ---- losses ---- */

static int ce_fwd(struct gcase *c)
{
        return bd_op_softmax_ce(be, &c->in[0], &c->aux[0], c->ival ? &c->aux[1] : NULL, 1.0, &c->out, NULL);
}

static int ce_bwd(struct gcase *c)
{
        return bd_op_softmax_ce(be, &c->in[0], &c->aux[0], c->ival ? &c->aux[1] : NULL, 1.0, NULL, &c->din[0]);
}

static int bce_fwd(struct gcase *c)
{
        return bd_op_bce(be, &c->in[0], &c->aux[0], c->ival ? &c->aux[1] : NULL, 1.0, &c->out, NULL);
}

static int bce_bwd(struct gcase *c)
{
        return bd_op_bce(be, &c->in[0], &c->aux[0], c->ival ? &c->aux[1] : NULL, 1.0, NULL, &c->din[0]);
}

static int sl1_fwd(struct gcase *c)
{
        return bd_op_smooth_l1(be, &c->in[0], &c->aux[0], c->ival ? &c->aux[1] : NULL, c->dval, 1.0, &c->out, NULL);
}

static int sl1_bwd(struct gcase *c)
{
        return bd_op_smooth_l1(be, &c->in[0], &c->aux[0], c->ival ? &c->aux[1] : NULL, c->dval, 1.0, NULL,
                               &c->din[0]);
}

static void loss_case(const char *name, int (*fwd)(struct gcase *), int (*bwd)(struct gcase *), int weighted,
                      double beta)
{
        struct gcase c;
        new_case(&c, name);
        finalize(&c);
        c.nin = 1;
        c.din_wanted[0] = 1;
        c.ones = 1;
        c.ival = weighted;
        c.dval = beta;
        int64_t R = 9, K = 6;
        if (fwd == ce_fwd) {
                mk(&c.in[0], BD_NCHW, 2, R, K, 0, 0);
                rand_fill(&c.in[0], -3, 3);
                int64_t rd[1] = { R };
                memset(&c.aux[0], 0, sizeof(c.aux[0]));
                bd_tensor_resize(be, &c.aux[0], BD_I32, BD_NCHW, 1, rd);
                for (int64_t r = 0; r < R; r++)
                        ((int32_t *)c.aux[0].data)[r] = r == 3 ? -1 : (int32_t)bd_rng_below(&rng, (uint64_t)K);
                mk(&c.aux[1], BD_NCHW, 1, R, 0, 0, 0);
        } else {
                mk(&c.in[0], BD_NCHW, 2, R, K, 0, 0);
                mk(&c.aux[0], BD_NCHW, 2, R, K, 0, 0);
                mk(&c.aux[1], BD_NCHW, 2, R, K, 0, 0);
                if (fwd == bce_fwd) {
                        rand_fill(&c.in[0], -4, 4);
                        rand_fill(&c.aux[0], 0, 1);
                } else {
                        /* differences away from 0 and from +-beta */
                        rand_fill(&c.aux[0], -1, 1);
                        int64_t n = R * K;
                        for (int64_t i = 0; i < n; i++) {
                                double d;
                                do
                                        d = 4 * bd_rng_uniform(&rng) - 2;
                                while (fabs(d) < 1e-3 || fabs(fabs(d) - beta) < 1e-3);
                                D(&c.in[0])[i] = D(&c.aux[0])[i] + d;
                        }
                }
        }
        rand_fill(&c.aux[1], 0.2, 2);
        c.fwd = fwd;
        c.bwd = bwd;
        run_case(&c);
        free_case(&c);
}

int main(void)
{
        struct bd_err err;
        if (bd_backend_cpu_new(0, &be, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                return 1;
        }
        bd_rng_seed(&rng, 42, 0);

        static const enum bd_layout L[3] = { BD_NCHW, BD_NHWC, BD_NCHW8C };
        static const char *const LN[3] = { "nchw", "nhwc", "nchw8c" };
        char name[128];

        for (int li = 0; li < 3; li++) {
                struct bd_conv_cfg c3 = { .cin = 8, .cout = 16, .k = 3, .stride = 1, .pad = 1, .bias = 1,
                                          .winit = BD_INIT_KAIMING_UNIFORM };
                snprintf(name, sizeof(name), "conv 3x3 pad 1 bias %s", LN[li]);
                conv_case(name, c3, L[li], 2, 6, 5);
        }
        struct bd_conv_cfg cs = { .cin = 8, .cout = 8, .k = 3, .stride = 2, .pad = 1, .winit = BD_INIT_KAIMING_UNIFORM };
        conv_case("conv 3x3 stride 2 nchw8c", cs, BD_NCHW8C, 2, 7, 6);
        struct bd_conv_cfg c7 = { .cin = 3, .cout = 8, .k = 7, .stride = 2, .pad = 3, .winit = BD_INIT_KAIMING_UNIFORM };
        conv_case("conv 7x7 stride 2 (stem) nhwc", c7, BD_NHWC, 2, 11, 9);
        struct bd_conv_cfg cd = { .cin = 8, .cout = 16, .k = 3, .stride = 1, .pad = 2, .dilation = 2, .bias = 1,
                                  .winit = BD_INIT_KAIMING_UNIFORM };
        conv_case("conv 3x3 dilation 2 nchw8c", cd, BD_NCHW8C, 2, 7, 7);
        struct bd_conv_cfg cg = { .cin = 16, .cout = 8, .k = 3, .stride = 1, .pad = 1, .groups = 4, .bias = 1,
                                  .winit = BD_INIT_KAIMING_UNIFORM };
        conv_case("conv 3x3 groups 4 nchw", cg, BD_NCHW, 2, 5, 5);
        struct bd_conv_cfg c1 = { .cin = 8, .cout = 16, .k = 1, .stride = 2, .winit = BD_INIT_KAIMING_UNIFORM };
        conv_case("conv 1x1 stride 2 (downsample) nchw8c", c1, BD_NCHW8C, 2, 7, 7);
        struct bd_conv_cfg ct = { .cin = 8, .cout = 8, .k = 2, .stride = 2, .bias = 1, .transposed = 1,
                                  .winit = BD_INIT_KAIMING_UNIFORM };
        conv_case("transposed conv 2x2 stride 2 nchw8c", ct, BD_NCHW8C, 2, 4, 3);
        conv_case("transposed conv 2x2 stride 2 nhwc", ct, BD_NHWC, 2, 4, 3);
        struct bd_conv_cfg ct3 = { .cin = 8, .cout = 4, .k = 3, .stride = 2, .pad = 1, .groups = 2, .transposed = 1,
                                   .winit = BD_INIT_KAIMING_UNIFORM };
        conv_case("transposed conv 3x3 stride 2 pad 1 groups 2 nchw", ct3, BD_NCHW, 2, 4, 3);

        for (int li = 0; li < 3; li++) {
                snprintf(name, sizeof(name), "batch norm training %s", LN[li]);
                bn_case(name, BD_BN_TRAIN, 0, L[li], 8, 0);
                snprintf(name, sizeof(name), "synchronised batch norm (one rank) %s", LN[li]);
                bn_case(name, BD_BN_TRAIN, 0, L[li], 8, 1);
        }
        bn_case("batch norm training + relu nchw8c", BD_BN_TRAIN, 1, BD_NCHW8C, 8, 0);
        bn_case("synchronised batch norm (one rank) + relu nchw8c", BD_BN_TRAIN, 1, BD_NCHW8C, 8, 1);
        bn_case("batch norm frozen nhwc", BD_BN_FROZEN, 0, BD_NHWC, 8, 0);
        bn_case("batch norm frozen + relu nchw8c", BD_BN_FROZEN, 1, BD_NCHW8C, 8, 0);

        fc_case("fully connected with bias", 1);
        fc_case("fully connected without bias", 0);

        pool_case("max pool 3x3 stride 2 pad 1 nchw8c", 3, 2, 1, BD_NCHW8C);
        pool_case("max pool 2x2 stride 2 nchw", 2, 2, 0, BD_NCHW);
        pool_case("max pool 1x1 stride 2 (P6) nhwc", 1, 2, 0, BD_NHWC);

        for (int li = 0; li < 3; li++) {
                snprintf(name, sizeof(name), "relu %s", LN[li]);
                simple_case(name, relu_fwd, relu_bwd, 1, L[li], 8, 0, 1);
                snprintf(name, sizeof(name), "add %s", LN[li]);
                simple_case(name, add_fwd, add_bwd, 2, L[li], 8, 0, 0);
                snprintf(name, sizeof(name), "affine (frozen BN) + relu %s", LN[li]);
                simple_case(name, affine_fwd, affine_bwd, 1, L[li], 8, 1, 1);
                snprintf(name, sizeof(name), "nearest upsample x2 %s", LN[li]);
                simple_case(name, up_fwd, up_bwd, 1, L[li], 8, 0, 0);
                snprintf(name, sizeof(name), "concat of 3 %s", LN[li]);
                simple_case(name, cat_fwd, cat_bwd, 3, L[li], 8, 0, 0);
                snprintf(name, sizeof(name), "relayout %s -> %s", LN[li], LN[(li + 1) % 3]);
                simple_case(name, relayout_fwd, relayout_bwd, 1, L[li], 16, (int)L[(li + 1) % 3], 0);
        }
        simple_case("add + relu nchw8c", add_fwd, add_bwd, 2, BD_NCHW8C, 8, 1, 0);
        simple_case("permute (2, 0, 1)", perm_fwd, perm_bwd, 1, BD_NCHW, 8, 0, 0);

        loss_case("softmax cross-entropy (one row ignored)", ce_fwd, ce_bwd, 0, 0);
        loss_case("softmax cross-entropy weighted", ce_fwd, ce_bwd, 1, 0);
        loss_case("sigmoid binary cross-entropy", bce_fwd, bce_bwd, 0, 0);
        loss_case("sigmoid binary cross-entropy weighted", bce_fwd, bce_bwd, 1, 0);
        loss_case("smooth L1 beta 1", sl1_fwd, sl1_bwd, 0, 1.0);
        loss_case("smooth L1 beta 1/9 weighted", sl1_fwd, sl1_bwd, 1, 1.0 / 9);
        loss_case("smooth L1 beta 0 (L1)", sl1_fwd, sl1_bwd, 0, 0.0);

        bd_backend_free(be);
        return done_testing();
}

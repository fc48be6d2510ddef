/* test-trainer-optim.c: the optimiser and the model's parameter bookkeeping.
 *
 * Learning-rate schedule (linear warmup from a factor, the MLPerf reference's
 * absolute "mlperf_linear" warmup, the bias group's factor, decay at milestones),
 * the SGD update against its formula in double precision (weight decay on
 * weights only, momentum carried over), clipping by the global norm, dynamic
 * loss scaling (skip and halve on inf/NaN, double after the growth interval),
 * gradient overwrite-then-accumulate for a layer used twice, and reshape views.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "layers.h"
#include "optim.h"
#include "tap.h"

static struct bd_backend *be;

static int near(double a, double b)
{
        return fabs(a - b) <= 1e-12 * fmax(1.0, fabs(b));
}

static void schedule(void)
{
        struct bd_sgd_cfg c = { .lr = 0.1, .warmup_factor = 0.25, .warmup_iters = 4, .milestones = { 10, 20 },
                                .nmilestones = 2, .gamma = 0.1 };
        ok(near(bd_sgd_lr(&c, 0), 0.025), "warmup starts at lr x factor");
        ok(near(bd_sgd_lr(&c, 2), 0.1 * (0.25 * 0.5 + 0.5)), "and rises linearly");
        ok(near(bd_sgd_lr(&c, 4), 0.1), "base lr after warmup");
        ok(near(bd_sgd_lr(&c, 9), 0.1) && near(bd_sgd_lr(&c, 10), 0.01), "x0.1 at the first milestone");
        ok(near(bd_sgd_lr(&c, 19), 0.01) && near(bd_sgd_lr(&c, 20), 0.001), "x0.01 at the second");
        struct bd_sgd_cfg bad = { .lr = 0.1, .milestones = { 20, 10 }, .nmilestones = 2 };
        struct bd_model m;
        struct bd_sgd o;
        struct bd_err err;
        bd_model_init(&m, be, BD_F64);
        bd_model_finalize(&m, &err);
        ok(bd_sgd_init(&o, &m, &bad, &err) == -EINVAL, "decreasing milestones are refused");
        like(err.msg, "milestones must increase", "  with a message");
        bd_model_release(&m);
}

/* The expected values are worked by hand from the reference's formulas
 * (maskrcnn.md section 3), not from the code under test. */
static void schedule_mlperf(void)
{
        /* DSS8440: lr 0.08, 1e-4 per iteration over 800, decay at 18000 and 24000 */
        struct bd_sgd_cfg c = { .lr = 0.08, .warmup = BD_WARMUP_MLPERF, .warmup_factor = 1e-4, .warmup_iters = 800,
                                .bias_lr_factor = 2, .milestones = { 18000, 24000 }, .nmilestones = 2, .gamma = 0.1 };
        ok(fabs(bd_sgd_lr(&c, 0)) < 1e-15, "mlperf_linear: 0.08 - 800 x 1e-4 = 0 at iteration 0");
        ok(near(bd_sgd_lr(&c, 1), 1e-4), "  1e-4 at iteration 1");
        ok(near(bd_sgd_lr(&c, 400), 0.04), "  0.04 halfway");
        ok(near(bd_sgd_lr(&c, 799), 0.0799) && near(bd_sgd_lr(&c, 800), 0.08), "  0.0799 then the base at 800");
        ok(near(bd_sgd_bias_lr(&c, 0), 0.08) && near(bd_sgd_bias_lr(&c, 1), 0.0801),
           "  the bias group: base 0.16 less the same delta (0.08 at 0, 0.0801 at 1)");
        ok(near(bd_sgd_bias_lr(&c, 800), 0.16), "  0.16 after the warmup");
        ok(near(bd_sgd_lr(&c, 18000), 0.008) && near(bd_sgd_bias_lr(&c, 18000), 0.016),
           "  decay multiplies both groups");
        ok(near(bd_sgd_lr(&c, 24000), 0.0008) && near(bd_sgd_bias_lr(&c, 24000), 0.0016), "  twice");
        /* a milestone inside the warmup multiplies the warmed-up value */
        struct bd_sgd_cfg w = { .lr = 0.1, .warmup = BD_WARMUP_MLPERF, .warmup_factor = 0.01, .warmup_iters = 10,
                                .bias_lr_factor = 2, .milestones = { 5 }, .nmilestones = 1, .gamma = 0.1 };
        ok(near(bd_sgd_lr(&w, 6), 0.006) && near(bd_sgd_bias_lr(&w, 6), 0.016),
           "  a milestone in the warmup: (0.1 - 4 x 0.01) x 0.1 and (0.2 - 0.04) x 0.1");
        /* the multiplicative warmup scales the bias group alike */
        struct bd_sgd_cfg l = { .lr = 0.02, .warmup_factor = 1.0 / 3, .warmup_iters = 500, .bias_lr_factor = 2 };
        ok(near(bd_sgd_lr(&l, 250), 0.02 * 2 / 3) && near(bd_sgd_bias_lr(&l, 250), 0.04 * 2 / 3),
           "linear: 2/3 of the base halfway from 1/3, for both groups");
        ok(near(bd_sgd_bias_lr(&(struct bd_sgd_cfg){ .lr = 0.3 }, 7), 0.3), "a bias factor of 0 means 1");

        struct bd_model m;
        struct bd_sgd o;
        struct bd_err err;
        bd_model_init(&m, be, BD_F64);
        bd_model_finalize(&m, &err);
        struct bd_sgd_cfg neg = { .lr = 0.05, .warmup = BD_WARMUP_MLPERF, .warmup_factor = 0.01, .warmup_iters = 10 };
        ok(bd_sgd_init(&o, &m, &neg, &err) == -EINVAL, "mlperf_linear with iters x factor > lr is refused");
        like(err.msg, "exceeds the learning rate", "  with a message");
        ok(bd_sgd_init(&o, &m, &c, &err) == 0, "iters x factor == lr (0.08, up to rounding) is accepted");
        bd_sgd_release(&o, &m);
        bd_model_release(&m);
}

/* a model of one weight (decayed) and one bias (not), f64 */
struct tiny {
        struct bd_model m;
        int w, b;
};

static void tiny_init(struct tiny *t)
{
        struct bd_err err;
        int64_t n = 3;
        struct bd_param_init init = { BD_INIT_ONE, 0, 0, 0 };
        bd_model_init(&t->m, be, BD_F64);
        t->w = bd_model_add(&t->m, "w", 1, &n, 0, &init);
        t->b = bd_model_add(&t->m, "b", 1, &n, BD_P_NO_DECAY, &init);
        bd_model_finalize(&t->m, &err);
        bd_model_init_params(&t->m, 1, &err);
}

static void set_grads(struct tiny *t, double g)
{
        double *gr = t->m.grads;
        for (size_t i = 0; i < t->m.n_train; i++)
                gr[i] = g * (double)(i + 1);
}

static void sgd_update(void)
{
        struct tiny t;
        struct bd_sgd o;
        struct bd_err err;
        struct bd_step_info info;
        tiny_init(&t);
        ok(t.m.p[t.w].offset == 0 && t.m.p[t.b].offset == 3 && t.m.n_decay == 3 && t.m.n_train == 6,
           "layout: decayed weights first, then biases");
        struct bd_sgd_cfg c = { .lr = 0.5, .momentum = 0.9, .weight_decay = 0.01 };
        bd_sgd_init(&o, &t.m, &c, &err);
        double p[6], v[6] = { 0 };
        for (int i = 0; i < 6; i++)
                p[i] = 1.0;
        int good = 1;
        for (int step = 0; step < 3; step++) {
                set_grads(&t, 0.1 * (step + 1));
                bd_sgd_step(&o, &t.m, 0.5, &info);
                for (int i = 0; i < 6; i++) {
                        double g = 0.1 * (step + 1) * (i + 1) * 0.5 + (i < 3 ? 0.01 * p[i] : 0);
                        v[i] = 0.9 * v[i] + g;
                        p[i] -= 0.5 * v[i];
                        good &= near(((double *)t.m.params)[i], p[i]);
                }
        }
        ok(good, "three SGD steps follow g' = g s + wd p, v = m v + g', p -= lr v (decay on weights only)");
        ok(t.m.version > 0, "each step changes the model's version");
        bd_sgd_release(&o, &t.m);

        /* clipping: global norm of the scaled gradient */
        bd_model_init_params(&t.m, 1, &err);
        struct bd_sgd_cfg cc = { .lr = 1.0, .clip_norm = 1.0 };
        bd_sgd_init(&o, &t.m, &cc, &err);
        set_grads(&t, 1.0);     /* 1..6: norm sqrt(91) */
        bd_sgd_step(&o, &t.m, 1.0, &info);
        ok(near(info.grad_norm, sqrt(91.0)), "clipping reports the global norm");
        double moved = 0;
        for (int i = 0; i < 6; i++)
                moved += pow(((double *)t.m.params)[i] - 1.0, 2);
        ok(fabs(sqrt(moved) - 1.0) < 1e-6, "and the update is scaled to the clip norm");
        bd_sgd_release(&o, &t.m);

        /* the bias region at its own rate; first_iter 1: the schedule's iteration 1 first */
        bd_model_init_params(&t.m, 1, &err);
        struct bd_sgd_cfg bc = { .lr = 0.1, .warmup = BD_WARMUP_MLPERF, .warmup_factor = 0.01, .warmup_iters = 10,
                                 .first_iter = 1, .bias_lr_factor = 2 };
        bd_sgd_init(&o, &t.m, &bc, &err);
        set_grads(&t, 1.0);
        bd_sgd_step(&o, &t.m, 1.0, &info);
        ok(near(info.lr, 0.01) && near(info.bias_lr, 0.11), "first step with first_iter 1: lr 0.1 - 9 x 0.01, bias 0.2 - 0.09");
        good = 1;
        for (int i = 0; i < 6; i++)
                good &= near(((double *)t.m.params)[i], 1.0 - (i < 3 ? 0.01 : 0.11) * (i + 1));
        ok(good, "  weights move by 0.01 x g, biases by 0.11 x g");
        bd_sgd_release(&o, &t.m);

        /* loss scaling */
        bd_model_init_params(&t.m, 1, &err);
        struct bd_sgd_cfg ls = { .lr = 0.1, .loss_scaling = 1, .init_scale = 1024, .growth_interval = 2 };
        bd_sgd_init(&o, &t.m, &ls, &err);
        set_grads(&t, 1024.0);
        ((double *)t.m.grads)[4] = NAN;
        bd_sgd_step(&o, &t.m, 1.0, &info);
        ok(info.skipped && o.loss_scale == 512 && ((double *)t.m.params)[0] == 1.0,
           "a NaN gradient: step skipped, parameters kept, scale halved");
        set_grads(&t, 512.0);
        bd_sgd_step(&o, &t.m, 1.0, &info);
        ok(!info.skipped && near(((double *)t.m.params)[0], 1.0 - 0.1 * 1.0), "good step: gradients unscaled");
        set_grads(&t, 512.0);
        bd_sgd_step(&o, &t.m, 1.0, &info);
        ok(o.loss_scale == 1024, "the scale doubles after the growth interval");
        bd_sgd_release(&o, &t.m);
        bd_model_release(&t.m);
}

/* a layer used twice in one step: its gradient is the sum of both uses */
static void shared_layer(void)
{
        struct bd_model m;
        struct bd_err err;
        struct bd_fc fc;
        bd_model_init(&m, be, BD_F64);
        bd_fc_init(&fc, &m, "head", 4, 2, 1, 0);
        bd_model_finalize(&m, &err);
        bd_model_init_params(&m, 2, &err);
        int64_t xd[2] = { 3, 4 }, yd[2] = { 3, 2 };
        struct bd_tensor x1 = { 0 }, x2 = { 0 }, y1 = { 0 }, y2 = { 0 }, dy = { 0 }, dx = { 0 };
        bd_tensor_resize(be, &x1, BD_F64, BD_NCHW, 2, xd);
        bd_tensor_resize(be, &x2, BD_F64, BD_NCHW, 2, xd);
        bd_tensor_resize(be, &dy, BD_F64, BD_NCHW, 2, yd);
        for (int i = 0; i < 12; i++) {
                ((double *)x1.data)[i] = 0.1 * i;
                ((double *)x2.data)[i] = 1.0 - 0.05 * i;
        }
        bd_op_fill(be, &dy, 1.0);
        bd_model_begin_step(&m);
        bd_fc_fwd(&m, &fc, &x1, &y1);
        bd_fc_fwd(&m, &fc, &x2, &y2);
        bd_model_begin_backward(&m);
        bd_fc_bwd(&m, &fc, &x1, &dy, &dx);
        ok(m.p[fc.w].done == 1 && m.p[fc.w].uses == 2, "after the first backward the gradient is not final");
        bd_fc_bwd(&m, &fc, &x2, &dy, &dx);
        ok(m.p[fc.w].done == 2, "after the second it is");
        /* dW[o][k] = sum over rows of x1 and x2 */
        double *g = (double *)m.grads + m.p[fc.w].goffset;
        int good = 1;
        for (int k = 0; k < 4; k++) {
                double s = 0;
                for (int r = 0; r < 3; r++)
                        s += ((double *)x1.data)[r * 4 + k] + ((double *)x2.data)[r * 4 + k];
                good &= near(g[k], s) && near(g[4 + k], s);
        }
        ok(good, "the weight gradient is the sum over both uses");
        double *gb = (double *)m.grads + m.p[fc.b].goffset;
        ok(near(gb[0], 6) && near(gb[1], 6), "and so is the bias gradient");
        bd_tensor_release(&x1);
        bd_tensor_release(&x2);
        bd_tensor_release(&y1);
        bd_tensor_release(&y2);
        bd_tensor_release(&dy);
        bd_tensor_release(&dx);
        bd_model_release(&m);
}

static void reshape(void)
{
        struct bd_tensor t = { 0 }, v;
        int64_t d[4] = { 2, 8, 1, 1 }, d2[2] = { 2, 8 }, d3[2] = { 3, 5 };
        bd_tensor_resize(be, &t, BD_F32, BD_NCHW, 4, d);
        ok(bd_tensor_reshape(&t, 2, d2, &v) == 0 && v.data == t.data && v.ndim == 2 && v.dims[1] == 8 && v.cap == 0,
           "reshape (2, 8, 1, 1) -> (2, 8) is a view");
        ok(bd_tensor_reshape(&t, 2, d3, &v) == -EINVAL, "a reshape to another size is refused");
        t.layout = BD_NCHW8C;
        ok(bd_tensor_reshape(&t, 2, d2, &v) == -EINVAL, "a blocked layout cannot be reshaped");
        t.layout = BD_NCHW;
        bd_tensor_release(&t);
}

int main(void)
{
        struct bd_err err;
        if (bd_backend_cpu_new(1, &be, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                return 1;
        }
        schedule();
        schedule_mlperf();
        sgd_update();
        shared_layer();
        reshape();
        bd_backend_free(be);
        return done_testing();
}

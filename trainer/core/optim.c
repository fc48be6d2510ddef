/* optim.c: SGD with momentum, schedule, clipping, loss scaling. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "ops.h"
#include "optim.h"

static double sched_lr(const struct bd_sgd_cfg *c, double base, int64_t iter)
{
        double f = 1.0;
        for (int i = 0; i < c->nmilestones; i++)
                if (iter >= c->milestones[i])
                        f *= c->gamma;
        if (iter < c->warmup_iters && c->warmup_iters > 0) {
                if (c->warmup == BD_WARMUP_MLPERF)
                        return (base - (double)(c->warmup_iters - iter) * c->warmup_factor) * f;
                double a = (double)iter / (double)c->warmup_iters;
                f *= c->warmup_factor * (1 - a) + a;
        }
        return base * f;
}

static double bias_factor(const struct bd_sgd_cfg *c)
{
        return c->bias_lr_factor > 0 ? c->bias_lr_factor : 1.0;
}

double bd_sgd_lr(const struct bd_sgd_cfg *c, int64_t iter)
{
        return sched_lr(c, c->lr, iter);
}

double bd_sgd_bias_lr(const struct bd_sgd_cfg *c, int64_t iter)
{
        return sched_lr(c, c->lr * bias_factor(c), iter);
}

int bd_sgd_init(struct bd_sgd *o, struct bd_model *m, const struct bd_sgd_cfg *cfg, struct bd_err *err)
{
        memset(o, 0, sizeof(*o));
        o->cfg = *cfg;
        if (o->cfg.init_scale <= 0)
                o->cfg.init_scale = 65536.0;
        if (o->cfg.growth_interval <= 0)
                o->cfg.growth_interval = 2000;
        if (cfg->nmilestones < 0 || cfg->nmilestones > BD_MAX_MILESTONES)
                return bd_err_set(err, -EINVAL, "sgd: at most %d decay milestones", BD_MAX_MILESTONES);
        for (int i = 1; i < cfg->nmilestones; i++)
                if (cfg->milestones[i] <= cfg->milestones[i - 1])
                        return bd_err_set(err, -EINVAL, "sgd: decay milestones must increase");
        if (!(cfg->lr >= 0) || !(cfg->momentum >= 0) || !(cfg->weight_decay >= 0) || !(cfg->clip_norm >= 0) ||
            !(cfg->bias_lr_factor >= 0))
                return bd_err_set(err, -EINVAL, "sgd: negative or NaN learning rate, momentum, decay or clip norm");
        /* the absolute warmup would start below zero (equal is the MLPerf
         * configs' rule, up to rounding: 800 x 1e-4 for 0.08) */
        if (cfg->warmup == BD_WARMUP_MLPERF && cfg->warmup_iters > 0 &&
            (double)cfg->warmup_iters * cfg->warmup_factor > cfg->lr * (1 + 1e-9))
                return bd_err_set(err, -EINVAL, "sgd: mlperf_linear warmup: warmup_iters x warmup_factor (%g) exceeds the "
                                  "learning rate %g", (double)cfg->warmup_iters * cfg->warmup_factor, cfg->lr);
        o->loss_scale = cfg->loss_scaling ? o->cfg.init_scale : 1.0;
        size_t bytes = (m->n_train ? m->n_train : 1) * bd_dtype_size(m->dtype);
        o->mom = m->be->ops->alloc(m->be, bytes);
        if (!o->mom)
                return bd_err_set(err, -ENOMEM, "sgd: out of memory for momentum");
        int64_t n = (int64_t)m->n_train;
        struct bd_tensor v = bd_tensor_view(o->mom, m->be->dev, m->dtype, BD_NCHW, 1, &n);
        int r = bd_op_fill(m->be, &v, 0);
        if (r < 0)
                return bd_err_set(err, r, "%s", m->be->err.msg);
        return 0;
}

void bd_sgd_release(struct bd_sgd *o, struct bd_model *m)
{
        if (o->mom)
                m->be->ops->free(m->be, o->mom);
        o->mom = NULL;
}

int bd_sgd_step(struct bd_sgd *o, struct bd_model *m, double grad_scale, struct bd_step_info *info)
{
        struct bd_backend *be = m->be;
        struct bd_tensor g = bd_model_all_grads(m);
        double gscale = grad_scale / o->loss_scale;
        int r;
        int64_t it = o->iter + o->cfg.first_iter;
        struct bd_step_info inf = { bd_sgd_lr(&o->cfg, it), bd_sgd_bias_lr(&o->cfg, it), -1, 0, o->loss_scale };

        if (o->cfg.loss_scaling) {
                double bad;
                if ((r = bd_op_count_nonfinite(be, &g, &bad)) < 0)
                        return r;
                if (bad > 0) {
                        o->loss_scale = fmax(o->loss_scale / 2, 1.0);
                        o->good_steps = 0;
                        o->iter++;
                        inf.skipped = 1;
                        if (info)
                                *info = inf;
                        return 0;
                }
        }
        if (o->cfg.clip_norm > 0) {
                double ss;
                if ((r = bd_op_sumsq(be, &g, &ss)) < 0)
                        return r;
                inf.grad_norm = sqrt(ss) * gscale;
                if (inf.grad_norm > o->cfg.clip_norm)
                        gscale *= o->cfg.clip_norm / (inf.grad_norm + 1e-6);
        }
        size_t ds = bd_dtype_size(m->dtype);
        /* decay region, then the no-decay region */
        if (m->n_decay &&
            (r = bd_op_sgd(be, m->dtype, (int64_t)m->n_decay, m->params, m->grads, o->mom, inf.lr, o->cfg.momentum,
                           o->cfg.weight_decay, gscale)) < 0)
                return r;
        if (m->n_train > m->n_decay &&
            (r = bd_op_sgd(be, m->dtype, (int64_t)(m->n_train - m->n_decay), (char *)m->params + m->n_decay * ds,
                           (char *)m->grads + m->n_decay * ds, (char *)o->mom + m->n_decay * ds, inf.bias_lr,
                           o->cfg.momentum, 0.0, gscale)) < 0)
                return r;
        m->version++;
        o->iter++;
        if (o->cfg.loss_scaling && ++o->good_steps >= o->cfg.growth_interval) {
                o->loss_scale *= 2;
                o->good_steps = 0;
        }
        if (info)
                *info = inf;
        return 0;
}

/* layers.c: convolution, batch norm, fully connected and pooling layers. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "layers.h"

static int add_param(struct bd_model *m, const char *layer, const char *suffix, int ndim, const int64_t *dims,
                     unsigned flags, enum bd_init kind, int64_t fan_in, int64_t fan_out, double std)
{
        char name[BD_NAME_MAX + 32];
        snprintf(name, sizeof(name), "%s.%s", layer, suffix);
        struct bd_param_init init = { kind, fan_in, fan_out, std };
        return bd_model_add(m, name, ndim, dims, flags, &init);
}

static struct bd_tensor param(struct bd_model *m, int id)
{
        return bd_model_param(m, id);
}

/* ---- convolution ----------------------------------------------------------------- */

int bd_conv_init(struct bd_conv *l, struct bd_model *m, const char *name, const struct bd_conv_cfg *cfg)
{
        memset(l, 0, sizeof(*l));
        snprintf(l->name, sizeof(l->name), "%s", name);
        int g = cfg->groups > 0 ? cfg->groups : 1;
        if (cfg->cin < 1 || cfg->cout < 1 || cfg->k < 1 || cfg->cin % g || cfg->cout % g)
                return bd_err_set(&m->be->err, -EINVAL, "%s: bad channels %lld -> %lld for %d groups", name,
                                  (long long)cfg->cin, (long long)cfg->cout, g);
        l->cin = cfg->cin;
        l->cout = cfg->cout;
        l->d.kh = l->d.kw = cfg->k;
        l->d.sh = l->d.sw = cfg->stride > 0 ? cfg->stride : 1;
        l->d.ph = l->d.pw = cfg->pad;
        l->d.dh = l->d.dw = cfg->dilation > 0 ? cfg->dilation : 1;
        l->d.groups = g;
        l->d.transposed = cfg->transposed;
        int64_t kk = (int64_t)cfg->k * cfg->k;
        int64_t wd[4];
        if (!cfg->transposed) {
                wd[0] = cfg->cout;
                wd[1] = cfg->cin / g;
        } else {
                wd[0] = cfg->cin;
                wd[1] = cfg->cout / g;
        }
        wd[2] = wd[3] = cfg->k;
        /* PyTorch's fans come from the weight tensor: fan_in = dims[1] k k */
        int64_t fan_in = wd[1] * kk, fan_out = wd[0] * kk;
        l->w = add_param(m, name, "weight", 4, wd, cfg->pflags, cfg->winit, fan_in, fan_out, cfg->wstd);
        if (l->w < 0)
                return l->w;
        l->b = -1;
        if (cfg->bias) {
                l->b = add_param(m, name, "bias", 1, &cfg->cout, cfg->pflags | BD_P_NO_DECAY,
                                 cfg->winit == BD_INIT_KAIMING_UNIFORM ? BD_INIT_UNIFORM_FAN_IN : BD_INIT_ZERO,
                                 fan_in, 0, 0);
                if (l->b < 0)
                        return l->b;
        }
        l->pc = bd_model_plan_cache(m);
        return 0;
}

int bd_conv_fwd(struct bd_model *m, struct bd_conv *l, const struct bd_tensor *x, struct bd_tensor *y)
{
        struct bd_tensor w = param(m, l->w), b;
        if (l->b >= 0)
                b = param(m, l->b);
        bd_model_use(m, l->w);
        bd_model_use(m, l->b);
        int r = bd_op_conv_fwd(m->be, &l->d, l->pc, x, &w, l->b >= 0 ? &b : NULL, y, m->version);
        return r < 0 ? bd_op_err_prefix(m->be, r, l->name) : 0;
}

/* the gradient views and flags of a layer's weight w and bias b (-1: none) */
struct wgrads {
        struct bd_tensor dw, db;
        int tw, tb;
        unsigned flags;
};

static struct wgrads wgrads_begin(struct bd_model *m, int w, int b)
{
        struct wgrads g;
        memset(&g, 0, sizeof(g));
        g.tw = bd_model_trained(m, w);
        g.tb = bd_model_trained(m, b);
        if (g.tw)
                g.dw = bd_model_grad(m, w);
        if (g.tb)
                g.db = bd_model_grad(m, b);
        g.flags = g.tw ? bd_model_grad_flags(m, w) : g.tb ? bd_model_grad_flags(m, b) : 0;
        return g;
}

static void wgrads_done(struct bd_model *m, const struct wgrads *g, int w, int b)
{
        if (g->tw)
                bd_model_grad_done(m, w);
        if (g->tb)
                bd_model_grad_done(m, b);
}

int bd_conv_bwd(struct bd_model *m, struct bd_conv *l, const struct bd_tensor *x, const struct bd_tensor *dy,
                struct bd_tensor *dx, int acc_dx)
{
        struct bd_tensor w = param(m, l->w);
        struct wgrads g = wgrads_begin(m, l->w, l->b);
        int r = bd_op_conv_bwd(m->be, &l->d, l->pc, x, &w, dy, dx, g.tw ? &g.dw : NULL, g.tb ? &g.db : NULL,
                               g.flags | (acc_dx ? BD_ACC_DX : 0), m->version);
        if (r < 0)
                return bd_op_err_prefix(m->be, r, l->name);
        wgrads_done(m, &g, l->w, l->b);
        return 0;
}

/* ---- batch norm -------------------------------------------------------------------- */

int bd_bn_init(struct bd_bn *l, struct bd_model *m, const char *name, int64_t C, enum bd_bn_mode mode, int relu)
{
        memset(l, 0, sizeof(*l));
        snprintf(l->name, sizeof(l->name), "%s", name);
        l->C = C;
        l->mode = mode;
        l->eps = 1e-5;
        l->momentum = 0.1;
        l->relu = relu;
        unsigned f = BD_P_NO_DECAY | (mode == BD_BN_FROZEN ? BD_P_FROZEN : 0);
        if ((l->gamma = add_param(m, name, "weight", 1, &C, f, BD_INIT_ONE, 0, 0, 0)) < 0 ||
            (l->beta = add_param(m, name, "bias", 1, &C, f, BD_INIT_ZERO, 0, 0, 0)) < 0 ||
            (l->rmean = add_param(m, name, "running_mean", 1, &C, BD_P_BUFFER, BD_INIT_ZERO, 0, 0, 0)) < 0 ||
            (l->rvar = add_param(m, name, "running_var", 1, &C, BD_P_BUFFER, BD_INIT_ONE, 0, 0, 0)) < 0)
                return -EINVAL;
        l->pc = bd_model_plan_cache(m);
        return 0;
}

void bd_bn_release(struct bd_bn *l)
{
        bd_tensor_release(&l->mean);
        bd_tensor_release(&l->var);
        bd_tensor_release(&l->ws);
        bd_tensor_release(&l->invstd);
        bd_tensor_release(&l->sums);
        bd_tensor_release(&l->scale);
        bd_tensor_release(&l->shift);
}

/* synchronised: the sums of this rank's share, summed over the ranks, then
 * the whole batch's statistics */
static int bn_fwd_sync(struct bd_model *m, struct bd_bn *l, const struct bd_tensor *x, const struct bd_tensor *g,
                       const struct bd_tensor *b, struct bd_tensor *rm, struct bd_tensor *rv, struct bd_tensor *y)
{
        struct bd_backend *be = m->be;
        int r;
        if ((r = bd_op_bn_sums(be, x, &l->sums)) < 0 ||
            (r = m->sync_bn(m->sync_bn_ctx, m, l->sums.data, bd_tensor_numel(&l->sums))) < 0)
                return r;
        return bd_op_bn_sync_fwd(be, l->eps, l->momentum, l->relu, x, g, b, &l->sums, y, &l->mean, &l->var, &l->invstd,
                                 &l->scale, &l->shift, rm, rv);
}

int bd_bn_fwd(struct bd_model *m, struct bd_bn *l, const struct bd_tensor *x, struct bd_tensor *y)
{
        struct bd_backend *be = m->be;
        struct bd_tensor g = param(m, l->gamma), b = param(m, l->beta), rm = param(m, l->rmean),
                         rv = param(m, l->rvar);
        int r;
        if (x->ndim != 4 || BD_C(x) != l->C) {
                char s[128];
                return bd_err_set(&be->err, -EINVAL, "%s: input %s, expected %lld channels", l->name,
                                  bd_tensor_str(x, s, sizeof(s)), (long long)l->C);
        }
        if (l->mode == BD_BN_TRAIN && m->training) {
                bd_model_use(m, l->gamma);
                bd_model_use(m, l->beta);
                l->synced = m->sync_bn != NULL;
                if (l->synced)
                        r = bn_fwd_sync(m, l, x, &g, &b, &rm, &rv, y);
                else if ((r = bd_op_bn_fwd(be, l->pc, l->eps, l->relu, x, &g, &b, y, &l->mean, &l->var, &l->ws)) >= 0)
                        r = bd_op_bn_running(be, &rm, &rv, &l->mean, &l->var, l->momentum, BD_N(x) * BD_H(x) * BD_W(x));
                if (r < 0)
                        return bd_op_err_prefix(be, r, l->name);
                l->batch_stats = 1;
                return 0;
        }
        if ((r = bd_op_bn_coef(be, &g, &b, &rm, &rv, l->eps, &l->scale, &l->shift)) < 0 ||
            (r = bd_op_affine(be, x, &l->scale, &l->shift, l->relu, y)) < 0)
                return bd_op_err_prefix(be, r, l->name);
        l->batch_stats = 0;
        return 0;
}

int bd_bn_bwd(struct bd_model *m, struct bd_bn *l, const struct bd_tensor *x, const struct bd_tensor *y,
              const struct bd_tensor *dy, struct bd_tensor *dx)
{
        struct bd_backend *be = m->be;
        int r;
        if (!l->batch_stats) {
                if (l->mode == BD_BN_TRAIN)
                        return bd_err_set(&be->err, -EINVAL, "%s: backward after an inference-mode forward", l->name);
                r = bd_op_affine_bwd(be, l->relu ? y : NULL, dy, &l->scale, dx);
                return r < 0 ? bd_op_err_prefix(be, r, l->name) : 0;
        }
        struct bd_tensor g = param(m, l->gamma), dg = bd_model_grad(m, l->gamma), db = bd_model_grad(m, l->beta);
        unsigned flags = bd_model_grad_flags(m, l->gamma);
        if (l->synced) {
                /* this rank's share of dgamma and dbeta (the gradient allreduce
                 * sums them), then the sums over the ranks for dx */
                const struct bd_tensor *yr = l->relu ? y : NULL;
                if ((r = bd_op_bn_grad_sums(be, x, yr, dy, &l->mean, &l->invstd, &l->sums, &dg, &db, flags)) < 0)
                        return bd_op_err_prefix(be, r, l->name);
                bd_model_grad_done(m, l->gamma);
                bd_model_grad_done(m, l->beta);
                if ((r = m->sync_bn(m->sync_bn_ctx, m, l->sums.data, bd_tensor_numel(&l->sums))) < 0 ||
                    (r = bd_op_bn_sync_bwd(be, x, yr, dy, &g, &l->mean, &l->invstd, &l->sums, dx, 0)) < 0)
                        return bd_op_err_prefix(be, r, l->name);
                return 0;
        }
        if ((r = bd_op_bn_bwd(be, l->pc, l->eps, l->relu, x, y, dy, &g, &l->mean, &l->var, &l->ws, dx, &dg, &db,
                              flags)) < 0)
                return bd_op_err_prefix(be, r, l->name);
        bd_model_grad_done(m, l->gamma);
        bd_model_grad_done(m, l->beta);
        return 0;
}

/* ---- fully connected ------------------------------------------------------------- */

int bd_fc_init(struct bd_fc *l, struct bd_model *m, const char *name, int64_t in, int64_t out, int bias,
               unsigned pflags)
{
        memset(l, 0, sizeof(*l));
        snprintf(l->name, sizeof(l->name), "%s", name);
        l->in = in;
        l->out = out;
        int64_t wd[2] = { out, in };
        if ((l->w = add_param(m, name, "weight", 2, wd, pflags, BD_INIT_KAIMING_UNIFORM, in, out, 0)) < 0)
                return l->w;
        l->b = -1;
        if (bias && (l->b = add_param(m, name, "bias", 1, &out, pflags | BD_P_NO_DECAY, BD_INIT_UNIFORM_FAN_IN, in, 0,
                                      0)) < 0)
                return l->b;
        l->pc = bd_model_plan_cache(m);
        return 0;
}

int bd_fc_fwd(struct bd_model *m, struct bd_fc *l, const struct bd_tensor *x, struct bd_tensor *y)
{
        struct bd_tensor w = param(m, l->w), b;
        if (l->b >= 0)
                b = param(m, l->b);
        bd_model_use(m, l->w);
        bd_model_use(m, l->b);
        int r = bd_op_fc_fwd(m->be, l->pc, x, &w, l->b >= 0 ? &b : NULL, y, m->version);
        return r < 0 ? bd_op_err_prefix(m->be, r, l->name) : 0;
}

int bd_fc_bwd(struct bd_model *m, struct bd_fc *l, const struct bd_tensor *x, const struct bd_tensor *dy,
              struct bd_tensor *dx)
{
        struct bd_tensor w = param(m, l->w);
        struct wgrads g = wgrads_begin(m, l->w, l->b);
        int r = bd_op_fc_bwd(m->be, l->pc, x, &w, dy, dx, g.tw ? &g.dw : NULL, g.tb ? &g.db : NULL, g.flags, m->version);
        if (r < 0)
                return bd_op_err_prefix(m->be, r, l->name);
        wgrads_done(m, &g, l->w, l->b);
        return 0;
}

/* ---- max pooling ----------------------------------------------------------------- */

void bd_pool_init(struct bd_pool *l, struct bd_model *m, int k, int stride, int pad)
{
        memset(l, 0, sizeof(*l));
        l->d.kh = l->d.kw = k;
        l->d.sh = l->d.sw = stride;
        l->d.ph = l->d.pw = pad;
        l->pc = bd_model_plan_cache(m);
}

void bd_pool_release(struct bd_pool *l)
{
        bd_tensor_release(&l->ws);
}

int bd_pool_fwd(struct bd_model *m, struct bd_pool *l, const struct bd_tensor *x, struct bd_tensor *y)
{
        return bd_op_pool_fwd(m->be, &l->d, l->pc, x, y, &l->ws);
}

int bd_pool_bwd(struct bd_model *m, struct bd_pool *l, const struct bd_tensor *x, const struct bd_tensor *y,
                const struct bd_tensor *dy, struct bd_tensor *dx)
{
        return bd_op_pool_bwd(m->be, &l->d, l->pc, x, y, dy, &l->ws, dx);
}

/* model.c: parameter registry, layout, initialisation, step bookkeeping. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "model.h"
#include "ops.h"

void bd_model_init(struct bd_model *m, struct bd_backend *be, enum bd_dtype dtype)
{
        memset(m, 0, sizeof(*m));
        m->be = be;
        m->dtype = dtype;
        m->training = 1;
}

void bd_model_release(struct bd_model *m)
{
        for (int i = 0; i < m->ncaches; i++) {
                bd_plan_cache_clear(m->be, m->caches[i]);
                free(m->caches[i]);
        }
        free(m->caches);
        if (m->params)
                m->be->ops->free(m->be, m->params);
        if (m->grads)
                m->be->ops->free(m->be, m->grads);
        free(m->p);
        memset(m, 0, sizeof(*m));
}

int bd_model_find(const struct bd_model *m, const char *name)
{
        for (int i = 0; i < m->np; i++)
                if (streq(m->p[i].name, name))
                        return i;
        return -ENOENT;
}

int bd_model_add(struct bd_model *m, const char *name, int ndim, const int64_t *dims, unsigned flags,
                 const struct bd_param_init *init)
{
        if (m->finalized)
                return bd_err_set(&m->be->err, -EBUSY, "parameter '%s' added after the model was finalised", name);
        if (strlen(name) >= BD_NAME_MAX)
                return bd_err_set(&m->be->err, -ENAMETOOLONG, "parameter name '%s' is too long", name);
        if (ndim < 1 || ndim > 4)
                return bd_err_set(&m->be->err, -EINVAL, "parameter '%s': %d dimensions", name, ndim);
        if (bd_model_find(m, name) >= 0)
                return bd_err_set(&m->be->err, -EEXIST, "parameter '%s' registered twice", name);
        if (m->np == m->cap) {
                m->cap = m->cap ? 2 * m->cap : 64;
                m->p = xrealloc(m->p, (size_t)m->cap * sizeof(*m->p));
        }
        struct bd_param *p = &m->p[m->np];
        memset(p, 0, sizeof(*p));
        snprintf(p->name, sizeof(p->name), "%s", name);
        p->ndim = ndim;
        p->numel = 1;
        for (int i = 0; i < ndim; i++) {
                p->dims[i] = dims[i];
                p->numel *= dims[i];
        }
        p->flags = flags;
        if (flags & BD_P_BUFFER)
                p->flags |= BD_P_FROZEN;
        if (init)
                p->init = *init;
        return m->np++;
}

static int region(unsigned flags)
{
        if (flags & BD_P_BUFFER)
                return 3;
        if (flags & BD_P_FROZEN)
                return 2;
        return (flags & BD_P_NO_DECAY) ? 1 : 0;
}

int bd_model_finalize(struct bd_model *m, struct bd_err *err)
{
        if (m->finalized)
                return 0;
        size_t off = 0;
        for (int reg = 0; reg < 4; reg++) {
                if (reg == 1)
                        m->n_decay = off;
                if (reg == 2)
                        m->n_train = off;
                if (reg == 3)
                        m->buf_off = off;
                for (int i = 0; i < m->np; i++)
                        if (region(m->p[i].flags) == reg) {
                                m->p[i].offset = off;
                                m->p[i].goffset = reg < 2 ? off : 0;
                                off += (size_t)m->p[i].numel;
                        }
        }
        m->n_all = off;
        size_t ds = bd_dtype_size(m->dtype);
        m->params = m->be->ops->alloc(m->be, (m->n_all ? m->n_all : 1) * ds);
        m->grads = m->be->ops->alloc(m->be, (m->n_train ? m->n_train : 1) * ds);
        if (!m->params || !m->grads)
                return bd_err_set(err, -ENOMEM, "out of memory for %zu parameters", m->n_all);
        struct bd_tensor all = bd_model_all_params(m), g = bd_model_all_grads(m);
        int r;
        if ((m->n_all && (r = bd_op_fill(m->be, &all, 0)) < 0) || (m->n_train && (r = bd_op_fill(m->be, &g, 0)) < 0))
                return bd_err_set(err, r, "%s", m->be->err.msg);
        m->finalized = 1;
        return 0;
}

static uint64_t name_hash(const char *s)
{
        return bd_hash(s, strlen(s), BD_HASH_INIT);
}

int bd_model_init_params(struct bd_model *m, uint64_t seed, struct bd_err *err)
{
        size_t ds = bd_dtype_size(m->dtype);
        _cleanup_free_ void *host = xcalloc(m->n_all ? m->n_all : 1, ds);
        for (int i = 0; i < m->np; i++) {
                struct bd_param *p = &m->p[i];
                struct bd_rng rng;
                bd_rng_seed(&rng, seed, name_hash(p->name));
                double fi = (double)(p->init.fan_in > 0 ? p->init.fan_in : 1);
                double fo = (double)(p->init.fan_out > 0 ? p->init.fan_out : 1);
                for (int64_t j = 0; j < p->numel; j++) {
                        double v = 0;
                        switch (p->init.kind) {
                        case BD_INIT_ZERO: v = 0; break;
                        case BD_INIT_ONE: v = 1; break;
                        case BD_INIT_KAIMING_NORMAL_OUT: v = bd_rng_normal(&rng) * sqrt(2.0 / fo); break;
                        case BD_INIT_KAIMING_UNIFORM:
                        case BD_INIT_UNIFORM_FAN_IN: v = (2 * bd_rng_uniform(&rng) - 1) / sqrt(fi); break;
                        case BD_INIT_NORMAL: v = bd_rng_normal(&rng) * p->init.std; break;
                        case BD_INIT_XAVIER_UNIFORM: v = (2 * bd_rng_uniform(&rng) - 1) * sqrt(6.0 / (fi + fo)); break;
                        case BD_INIT_KAIMING_UNIFORM_A1: v = (2 * bd_rng_uniform(&rng) - 1) * sqrt(3.0 / fi); break;
                        }
                        if (m->dtype == BD_F64)
                                ((double *)host)[p->offset + (size_t)j] = v;
                        else
                                ((float *)host)[p->offset + (size_t)j] = (float)v;
                }
        }
        int r = bd_model_set_params(m, host);
        if (r < 0)
                return bd_err_set(err, r, "%s", m->be->err.msg);
        return 0;
}

struct bd_tensor bd_model_param(struct bd_model *m, int id)
{
        struct bd_param *p = &m->p[id];
        return bd_tensor_view((char *)m->params + p->offset * bd_dtype_size(m->dtype), m->be->dev, m->dtype, BD_NCHW,
                              p->ndim, p->dims);
}

struct bd_tensor bd_model_grad(struct bd_model *m, int id)
{
        struct bd_param *p = &m->p[id];
        if (!bd_model_trained(m, id))
                return bd_tensor_view(NULL, m->be->dev, m->dtype, BD_NCHW, p->ndim, p->dims);
        return bd_tensor_view((char *)m->grads + p->goffset * bd_dtype_size(m->dtype), m->be->dev, m->dtype, BD_NCHW,
                              p->ndim, p->dims);
}

struct bd_tensor bd_model_all_params(struct bd_model *m)
{
        int64_t n = (int64_t)m->n_all;
        return bd_tensor_view(m->params, m->be->dev, m->dtype, BD_NCHW, 1, &n);
}

struct bd_tensor bd_model_all_grads(struct bd_model *m)
{
        int64_t n = (int64_t)m->n_train;
        return bd_tensor_view(m->grads, m->be->dev, m->dtype, BD_NCHW, 1, &n);
}

struct bd_plan_cache *bd_model_plan_cache(struct bd_model *m)
{
        m->caches = xrealloc(m->caches, (size_t)(m->ncaches + 1) * sizeof(*m->caches));
        return m->caches[m->ncaches++] = xcalloc(1, sizeof(struct bd_plan_cache));
}

void bd_model_begin_step(struct bd_model *m)
{
        m->step++;
}

static struct bd_param *cur(struct bd_model *m, int id)
{
        struct bd_param *p = &m->p[id];
        if (p->step != m->step) {
                p->step = m->step;
                p->uses = p->done = 0;
        }
        return p;
}

void bd_model_use(struct bd_model *m, int id)
{
        if (id >= 0)
                cur(m, id)->uses++;
}

unsigned bd_model_grad_flags(struct bd_model *m, int id)
{
        return cur(m, id)->done > 0 ? BD_ACC_DW : 0;
}

void bd_model_grad_done(struct bd_model *m, int id)
{
        struct bd_param *p = cur(m, id);
        p->done++;
        if (p->done == p->uses && m->on_ready)
                m->on_ready(m->on_ready_ctx, m, id);
}

int bd_model_begin_backward(struct bd_model *m)
{
        for (int i = 0; i < m->np; i++) {
                if (!bd_model_trained(m, i))
                        continue;
                struct bd_param *p = cur(m, i);
                if (p->uses > 0)
                        continue;
                struct bd_tensor g = bd_model_grad(m, i);
                int r = bd_op_fill(m->be, &g, 0);
                if (r < 0)
                        return r;
                if (m->on_ready)
                        m->on_ready(m->on_ready_ctx, m, i);
        }
        return 0;
}

int bd_model_get_params(struct bd_model *m, void *host)
{
        return m->be->ops->copy(m->be, host, BD_CPU, m->params, m->be->dev, m->n_all * bd_dtype_size(m->dtype));
}

int bd_model_set_params(struct bd_model *m, const void *host)
{
        m->version++;
        return m->be->ops->copy(m->be, m->params, m->be->dev, host, BD_CPU, m->n_all * bd_dtype_size(m->dtype));
}

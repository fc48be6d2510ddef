/* ops-dnnl-none.c: the CPU backend's library operations in builds without
 * oneDNN (ops-dnnl.h): the reference loops of ops-ref.c. */
#include "config.h"

#include <stdlib.h>

#include "ops-dnnl.h"
#include "ops-ref.h"

int bd_dnnl_new(struct bd_dnnl **ret, struct bd_err *err)
{
        *ret = NULL;
        return 0;
}

void bd_dnnl_free(struct bd_dnnl *d)
{
}

void bd_dnnl_plan_free(struct bd_backend *be, void *p)
{
        free(p);
}

int bd_dnnl_conv_fwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *b,
                     struct bd_tensor *y, uint64_t wver)
{
        return bd_ref_conv_fwd(be, d, x, w, b, y);
}

int bd_dnnl_conv_bwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *dy,
                     struct bd_tensor *dx, struct bd_tensor *dw, struct bd_tensor *db, unsigned flags,
                     uint64_t wver)
{
        return bd_ref_conv_bwd(be, d, x, w, dy, dx, dw, db, flags);
}

int bd_dnnl_bn_fwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                   const struct bd_tensor *gamma, const struct bd_tensor *beta, struct bd_tensor *y,
                   struct bd_tensor *mean, struct bd_tensor *var, struct bd_tensor *ws)
{
        return bd_ref_bn_fwd(be, eps, relu, x, gamma, beta, y, mean, var);
}

int bd_dnnl_bn_bwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                   const struct bd_tensor *y, const struct bd_tensor *dy, const struct bd_tensor *gamma,
                   const struct bd_tensor *mean, const struct bd_tensor *var, const struct bd_tensor *ws,
                   struct bd_tensor *dx, struct bd_tensor *dgamma, struct bd_tensor *dbeta, unsigned flags)
{
        return bd_ref_bn_bwd(be, eps, relu, x, y, dy, gamma, mean, var, dx, dgamma, dbeta, flags);
}

int bd_dnnl_pool_fwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, struct bd_tensor *y, struct bd_tensor *ws)
{
        return bd_ref_pool_fwd(be, d, x, y, ws);
}

int bd_dnnl_pool_bwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *y, const struct bd_tensor *dy,
                     const struct bd_tensor *ws, struct bd_tensor *dx)
{
        return bd_ref_pool_bwd(be, d, x, dy, ws, dx);
}

int bd_dnnl_fc_fwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                   const struct bd_tensor *w, const struct bd_tensor *b, struct bd_tensor *y, uint64_t wver)
{
        return bd_ref_fc_fwd(be, x, w, b, y);
}

int bd_dnnl_fc_bwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                   const struct bd_tensor *w, const struct bd_tensor *dy, struct bd_tensor *dx,
                   struct bd_tensor *dw, struct bd_tensor *db, unsigned flags, uint64_t wver)
{
        return bd_ref_fc_bwd(be, x, w, dy, dx, dw, db, flags);
}

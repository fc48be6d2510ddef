/* ops-plan.c: the plan backend (backend.h): a model's op graph without its
 * arithmetic.  Tensors live in zeroed host memory marked BD_PLAN and may be
 * of any type the GPU takes (half precision included); layouts are chosen
 * as the CUDA backend chooses them; element functions, convolutions, batch
 * norm, pooling, fully connected layers and reductions return at once (a
 * reduction's value is 0).  What runs is the common code of ops.c and of the
 * model around it, so a step here asks for the same casts, launches and
 * library calls as on CUDA: struct bd_op_counts measures them on a host
 * without a GPU.  Results are meaningless by design. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "macro.h"

static void *plan_alloc(struct bd_backend *be, size_t bytes)
{
        size_t n = (bytes + 63) & ~(size_t)63;
        void *p = aligned_alloc(64, n ? n : 64);
        if (p)
                memset(p, 0, n ? n : 64);
        return p;
}

static void plan_free(struct bd_backend *be, void *p)
{
        free(p);
}

static int plan_copy(struct bd_backend *be, void *dst, enum bd_device ddev, const void *src, enum bd_device sdev,
                     size_t bytes)
{
        if (ddev == BD_CUDA || sdev == BD_CUDA)
                return bd_err_set(&be->err, -EINVAL, "plan: copy to or from GPU memory");
        if (dst != src && bytes)
                memmove(dst, src, bytes);
        return 0;
}

static int plan_sync(struct bd_backend *be)
{
        return 0;
}

/* the CUDA backend's choice (ops-cuda.cu) */
static enum bd_layout plan_pref_layout(struct bd_backend *be, int64_t C, enum bd_dtype dt)
{
        return dt == BD_F16 || dt == BD_BF16 ? BD_NHWC : BD_NCHW;
}

static int plan_elem(struct bd_backend *be, enum bd_kernel k, enum bd_dtype dt, int64_t n, const void *args)
{
        return (unsigned)k < _BD_K_MAX ? 0 : bd_err_set(&be->err, -EINVAL, "plan: unknown element function %d", (int)k);
}

static int plan_reduce(struct bd_backend *be, enum bd_reducer k, enum bd_dtype dt, int64_t n, const void *args,
                       double *ret)
{
        *ret = 0;
        return 0;
}

static int plan_conv_fwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                         const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *b,
                         struct bd_tensor *y, uint64_t wver)
{
        return 0;
}

static int plan_conv_bwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                         const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *dy,
                         struct bd_tensor *dx, struct bd_tensor *dw, struct bd_tensor *db, unsigned flags,
                         uint64_t wver)
{
        return 0;
}

static int plan_bn_fwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu,
                       const struct bd_tensor *x, const struct bd_tensor *gamma, const struct bd_tensor *beta,
                       struct bd_tensor *y, struct bd_tensor *mean, struct bd_tensor *var, struct bd_tensor *ws)
{
        return 0;
}

static int plan_bn_bwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu,
                       const struct bd_tensor *x, const struct bd_tensor *y, const struct bd_tensor *dy,
                       const struct bd_tensor *gamma, const struct bd_tensor *mean, const struct bd_tensor *var,
                       const struct bd_tensor *ws, struct bd_tensor *dx, struct bd_tensor *dgamma,
                       struct bd_tensor *dbeta, unsigned flags)
{
        return 0;
}

static int plan_pool_fwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                         const struct bd_tensor *x, struct bd_tensor *y, struct bd_tensor *ws)
{
        return 0;
}

static int plan_pool_bwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                         const struct bd_tensor *x, const struct bd_tensor *y, const struct bd_tensor *dy,
                         const struct bd_tensor *ws, struct bd_tensor *dx)
{
        return 0;
}

static int plan_fc_fwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                       const struct bd_tensor *w, const struct bd_tensor *b, struct bd_tensor *y, uint64_t wver)
{
        return 0;
}

static int plan_fc_bwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                       const struct bd_tensor *w, const struct bd_tensor *dy, struct bd_tensor *dx,
                       struct bd_tensor *dw, struct bd_tensor *db, unsigned flags, uint64_t wver)
{
        return 0;
}

static void plan_plan_free(struct bd_backend *be, void *plan)
{
}

static void plan_destroy(struct bd_backend *be)
{
        free(be);
}

static const struct bd_backend_ops plan_ops = {
        .name = "plan",
        .destroy = plan_destroy,
        .alloc = plan_alloc,
        .free = plan_free,
        .copy = plan_copy,
        .sync = plan_sync,
        .pref_layout = plan_pref_layout,
        .elem = plan_elem,
        .reduce = plan_reduce,
        .reduce_to = plan_reduce,
        .conv_fwd = plan_conv_fwd,
        .conv_bwd = plan_conv_bwd,
        .bn_fwd = plan_bn_fwd,
        .bn_bwd = plan_bn_bwd,
        .pool_fwd = plan_pool_fwd,
        .pool_bwd = plan_pool_bwd,
        .fc_fwd = plan_fc_fwd,
        .fc_bwd = plan_fc_bwd,
        .plan_free = plan_plan_free,
};

int bd_backend_plan_new(struct bd_backend **ret, struct bd_err *err)
{
        struct bd_backend *be = xcalloc(1, sizeof(*be));
        be->ops = &plan_ops;
        be->dev = BD_PLAN;
        be->nthreads = 1;
        snprintf(be->device_name, sizeof(be->device_name), "plan (no arithmetic)");
        *ret = be;
        return 0;
}

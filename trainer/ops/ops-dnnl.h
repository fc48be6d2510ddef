/* ops-dnnl.h: the library operations of the CPU backend (ops-cpu.c):
 * convolution, batch norm, max pooling and fully connected layers.
 *
 * configure chooses the file that implements them: ops-dnnl.c (oneDNN's
 * primitives for f32, the reference loops of ops-ref.c for f64 or with
 * BD_CPU_REF=1) when it found oneDNN, ops-dnnl-none.c (the reference loops
 * only) otherwise.  Signatures follow struct bd_backend_ops: ops-cpu.c puts
 * these functions in its table.
 */
#ifndef BD_OPS_DNNL_H
#define BD_OPS_DNNL_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/* oneDNN's engine, stream and shared scratchpad (NULL without oneDNN) */
struct bd_dnnl;

/* The CPU backend's state (be->impl). */
struct bd_cpu_impl {
        double *part;                   /* reductions: the chunk sums (ops-cpu.c) */
        size_t part_cap;
        struct bd_dnnl *dnnl;
};

/* -EIO when oneDNN cannot create its CPU engine. */
int bd_dnnl_new(struct bd_dnnl **ret, struct bd_err *err);
void bd_dnnl_free(struct bd_dnnl *d);

int bd_dnnl_conv_fwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *b,
                     struct bd_tensor *y, uint64_t wver);
int bd_dnnl_conv_bwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *dy,
                     struct bd_tensor *dx, struct bd_tensor *dw, struct bd_tensor *db, unsigned flags,
                     uint64_t wver);
int bd_dnnl_bn_fwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                   const struct bd_tensor *gamma, const struct bd_tensor *beta, struct bd_tensor *y,
                   struct bd_tensor *mean, struct bd_tensor *var, struct bd_tensor *ws);
int bd_dnnl_bn_bwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                   const struct bd_tensor *y, const struct bd_tensor *dy, const struct bd_tensor *gamma,
                   const struct bd_tensor *mean, const struct bd_tensor *var, const struct bd_tensor *ws,
                   struct bd_tensor *dx, struct bd_tensor *dgamma, struct bd_tensor *dbeta, unsigned flags);
int bd_dnnl_pool_fwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, struct bd_tensor *y, struct bd_tensor *ws);
int bd_dnnl_pool_bwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *y, const struct bd_tensor *dy,
                     const struct bd_tensor *ws, struct bd_tensor *dx);
int bd_dnnl_fc_fwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                   const struct bd_tensor *w, const struct bd_tensor *b, struct bd_tensor *y, uint64_t wver);
int bd_dnnl_fc_bwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                   const struct bd_tensor *w, const struct bd_tensor *dy, struct bd_tensor *dx,
                   struct bd_tensor *dw, struct bd_tensor *db, unsigned flags, uint64_t wver);
void bd_dnnl_plan_free(struct bd_backend *be, void *plan);

#endif

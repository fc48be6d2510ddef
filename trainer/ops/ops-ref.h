/* ops-ref.h: reference loops for the library operations on the CPU.
 *
 * Plain loops in double precision over tensors of f32 or f64 in any layout:
 * the f64 path of the CPU backend (gradient checks), the f32 path when oneDNN
 * is missing or BD_CPU_REF=1, and the oracle the oneDNN path is tested
 * against.  Signatures follow struct bd_backend_ops; operands are checked by
 * ops.c before these run.
 */
#ifndef BD_OPS_REF_H
#define BD_OPS_REF_H

#include "backend.h"

int bd_ref_conv_fwd(struct bd_backend *be, const struct bd_conv_desc *d, const struct bd_tensor *x,
                    const struct bd_tensor *w, const struct bd_tensor *b, struct bd_tensor *y);
int bd_ref_conv_bwd(struct bd_backend *be, const struct bd_conv_desc *d, const struct bd_tensor *x,
                    const struct bd_tensor *w, const struct bd_tensor *dy, struct bd_tensor *dx, struct bd_tensor *dw,
                    struct bd_tensor *db, unsigned flags);
int bd_ref_bn_fwd(struct bd_backend *be, double eps, int relu, const struct bd_tensor *x,
                  const struct bd_tensor *gamma, const struct bd_tensor *beta, struct bd_tensor *y,
                  struct bd_tensor *mean, struct bd_tensor *var);
int bd_ref_bn_bwd(struct bd_backend *be, double eps, int relu, const struct bd_tensor *x, const struct bd_tensor *y,
                  const struct bd_tensor *dy, const struct bd_tensor *gamma, const struct bd_tensor *mean,
                  const struct bd_tensor *var, struct bd_tensor *dx, struct bd_tensor *dgamma,
                  struct bd_tensor *dbeta, unsigned flags);
/* ws: i32 (numel of y), the offset in x of each output's maximum */
int bd_ref_pool_fwd(struct bd_backend *be, const struct bd_pool_desc *d, const struct bd_tensor *x,
                    struct bd_tensor *y, struct bd_tensor *ws);
int bd_ref_pool_bwd(struct bd_backend *be, const struct bd_pool_desc *d, const struct bd_tensor *x,
                    const struct bd_tensor *dy, const struct bd_tensor *ws, struct bd_tensor *dx);
int bd_ref_fc_fwd(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *w,
                  const struct bd_tensor *b, struct bd_tensor *y);
int bd_ref_fc_bwd(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *w,
                  const struct bd_tensor *dy, struct bd_tensor *dx, struct bd_tensor *dw, struct bd_tensor *db,
                  unsigned flags);

#endif

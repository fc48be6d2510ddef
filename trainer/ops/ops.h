/* ops.h: the operations models are written against, on either backend.
 *
 * Every function checks its operands (shapes, layouts, element types,
 * devices) and fails with -EINVAL and a one-line message in be->err naming the
 * operation and the shapes; outputs are resized as needed (their memory is
 * reused between steps).  Feature maps are (N, C, H, W) in any layout of
 * tensor.h; operands of element-wise operations must share shape and layout.
 *
 *   B = batch, C/K = channels, R = rows (boxes, anchors), n = elements
 */
#ifndef BD_OPS_H
#define BD_OPS_H

#include "backend.h"

/* ---- library operations ------------------------------------------------- */

/* x (N, C, H, W), w (O, C/g, kh, kw) [transposed: (C, O/g, kh, kw)], b (O) or
 * NULL -> y (N, O, OH, OW) in the backend's preferred layout */
int bd_op_conv_fwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                   const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *b, struct bd_tensor *y,
                   uint64_t wver);
/* dy like y -> dx like x (NULL: not wanted), dw like w and db like b (NULL: not
 * wanted); flags BD_ACC_*: add into dw/db or dx instead of overwriting */
int bd_op_conv_bwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                   const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *dy, struct bd_tensor *dx,
                   struct bd_tensor *dw, struct bd_tensor *db, unsigned flags, uint64_t wver);
int bd_conv_out_dims(const struct bd_conv_desc *d, const struct bd_tensor *x, const struct bd_tensor *w,
                     int64_t ret_dims[4], struct bd_err *err);

/* training-mode batch norm over (N, H, W) per channel; gamma, beta (C) in the
 * parameter type; mean, var (C) receive the batch statistics (biased var);
 * ws: saved state for the backward */
int bd_op_bn_fwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                 const struct bd_tensor *gamma, const struct bd_tensor *beta, struct bd_tensor *y,
                 struct bd_tensor *mean, struct bd_tensor *var, struct bd_tensor *ws);
int bd_op_bn_bwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                 const struct bd_tensor *y, const struct bd_tensor *dy, const struct bd_tensor *gamma,
                 const struct bd_tensor *mean, const struct bd_tensor *var, const struct bd_tensor *ws,
                 struct bd_tensor *dx, struct bd_tensor *dgamma, struct bd_tensor *dbeta, unsigned flags);

/* Synchronised batch norm (training): the statistics of each rank's share
 * of the batch as sums, which the caller adds up over the ranks in between
 * (dp.h), so that N ranks of B images each compute what one rank of N B
 * images would.  Element functions (elem.h), the same on both backends.
 * sums: f64 (2C + 1) in the backend's memory, [per-channel sums of one value
 * | of another | values per channel]:
 *
 *   forward:  bn_sums(x) -> sums; [sum over the ranks]; bn_sync_fwd(sums) -> y
 *   backward: bn_grad_sums(x, y, dy) -> sums, this rank's dgamma and dbeta;
 *             [sum over the ranks]; bn_sync_bwd(sums) -> dx
 */
/* sums = [sum x | sum x^2 | N H W] of x (N, C, H, W) */
int bd_op_bn_sums(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *sums);
/* From the sums over the ranks: the batch's mean, var (biased) and invstd =
 * 1 / sqrt(var + eps) (C, the parameter type), y = gamma (x - mean) invstd +
 * beta (then ReLU when relu), and the running statistics rmean, rvar updated
 * (momentum; the variance unbiased by the batch's count).  scale, shift (C):
 * work space. */
int bd_op_bn_sync_fwd(struct bd_backend *be, double eps, double momentum, int relu, const struct bd_tensor *x,
                      const struct bd_tensor *gamma, const struct bd_tensor *beta, const struct bd_tensor *sums,
                      struct bd_tensor *y, struct bd_tensor *mean, struct bd_tensor *var, struct bd_tensor *invstd,
                      struct bd_tensor *scale, struct bd_tensor *shift, struct bd_tensor *rmean, struct bd_tensor *rvar);
/* sums = [sum g | sum g x_hat | N H W] of this rank, g = dy (0 where y <= 0
 * when y is given: the forward's fused ReLU), x_hat = (x - mean) invstd; and
 * from them this rank's share of the parameter gradients, dgamma = sum g
 * x_hat, dbeta = sum g (either NULL; added to with BD_ACC_DW), which the
 * gradient allreduce sums as any other */
int bd_op_bn_grad_sums(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *y,
                       const struct bd_tensor *dy, const struct bd_tensor *mean, const struct bd_tensor *invstd,
                       struct bd_tensor *sums, struct bd_tensor *dgamma, struct bd_tensor *dbeta, unsigned flags);
/* dx (added to with BD_ACC_DX) from the sums over the ranks:
 * gamma invstd (g - sum g / M - x_hat sum g x_hat / M), M the batch's count */
int bd_op_bn_sync_bwd(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *y,
                      const struct bd_tensor *dy, const struct bd_tensor *gamma, const struct bd_tensor *mean,
                      const struct bd_tensor *invstd, const struct bd_tensor *sums, struct bd_tensor *dx,
                      unsigned flags);

int bd_op_pool_fwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                   const struct bd_tensor *x, struct bd_tensor *y, struct bd_tensor *ws);
int bd_op_pool_bwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                   const struct bd_tensor *x, const struct bd_tensor *y, const struct bd_tensor *dy,
                   const struct bd_tensor *ws, struct bd_tensor *dx);

/* x (N, K) plain, w (O, K), b (O) or NULL -> y (N, O) */
int bd_op_fc_fwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                 const struct bd_tensor *w, const struct bd_tensor *b, struct bd_tensor *y, uint64_t wver);
int bd_op_fc_bwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                 const struct bd_tensor *w, const struct bd_tensor *dy, struct bd_tensor *dx, struct bd_tensor *dw,
                 struct bd_tensor *db, unsigned flags, uint64_t wver);

/* ---- element-wise (elem.h) ---------------------------------------------- */

int bd_op_fill(struct bd_backend *be, struct bd_tensor *y, double v);
/* y = a x + b y; b == 0: y is only written (resized like x) */
int bd_op_axpby(struct bd_backend *be, double a, const struct bd_tensor *x, double b, struct bd_tensor *y);
/* z = x + y (then ReLU when relu); z may be x or y */
int bd_op_add(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *y, struct bd_tensor *z,
              int relu);
int bd_op_relu(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *y);
/* dx (+)= dy where y > 0; y is the ReLU output */
int bd_op_relu_bwd(struct bd_backend *be, const struct bd_tensor *y, const struct bd_tensor *dy, struct bd_tensor *dx,
                   int accumulate);
/* per-channel y = x scale + shift (either NULL), then ReLU when relu:
 * inference and frozen batch norm, bias */
int bd_op_affine(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *scale,
                 const struct bd_tensor *shift, int relu, struct bd_tensor *y);
/* dx = dy scale (zero where y <= 0 when y is given) */
int bd_op_affine_bwd(struct bd_backend *be, const struct bd_tensor *y, const struct bd_tensor *dy,
                     const struct bd_tensor *scale, struct bd_tensor *dx);
/* batch-norm coefficients for inference: scale, shift (C) */
int bd_op_bn_coef(struct bd_backend *be, const struct bd_tensor *gamma, const struct bd_tensor *beta,
                  const struct bd_tensor *mean, const struct bd_tensor *var, double eps, struct bd_tensor *scale,
                  struct bd_tensor *shift);
/* running statistics update with the batch statistics of count values */
int bd_op_bn_running(struct bd_backend *be, struct bd_tensor *rmean, struct bd_tensor *rvar,
                     const struct bd_tensor *mean, const struct bd_tensor *var, double momentum, int64_t count);
/* nearest upsampling x2: x (N, C, H, W) -> y (N, C, 2H, 2W); backward sums 2x2 */
int bd_op_upsample2x(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *y);
int bd_op_upsample2x_bwd(struct bd_backend *be, const struct bd_tensor *dy, struct bd_tensor *dx);
/* global average pooling: x (N, C, H, W) -> y (N, C); backward dy (N, C) ->
 * dx shaped like x (its shape and layout set before the call) */
int bd_op_global_avgpool(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *y);
int bd_op_global_avgpool_bwd(struct bd_backend *be, const struct bd_tensor *dy, const struct bd_tensor *x,
                             struct bd_tensor *dx);
/* concatenation along channels of nparts feature maps of one layout; split
 * is its backward (parts must have their shapes set: resized like before) */
int bd_op_concat(struct bd_backend *be, const struct bd_tensor *const *parts, int nparts, struct bd_tensor *y);
int bd_op_split(struct bd_backend *be, const struct bd_tensor *y, struct bd_tensor *const *parts, int nparts);
/* plain (NCHW) tensors: y = x with axes permuted (y dim i = x dim perm[i]) */
int bd_op_permute(struct bd_backend *be, const struct bd_tensor *x, const int *perm, struct bd_tensor *y);
/* same feature map in another layout */
int bd_op_relayout(struct bd_backend *be, const struct bd_tensor *x, enum bd_layout layout, struct bd_tensor *y);
/* element type conversion: y (same shape and layout, element type dt) = x * scale */
int bd_op_cast(struct bd_backend *be, const struct bd_tensor *x, enum bd_dtype dt, double scale, struct bd_tensor *y);
/* a network's input: y = x (a feature map) as dt, laid out as the backend's
 * convolutions want dt (half precision on CUDA: NHWC); tmp holds the cast
 * when a relayout follows */
int bd_op_cast_input(struct bd_backend *be, const struct bd_tensor *x, enum bd_dtype dt, struct bd_tensor *tmp,
                     struct bd_tensor *y);
/* copies between any two devices, same shape, dtype and layout; y is resized
 * on be's device unless it is a view (then it must have x's size) */
int bd_op_copy(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *y);

/* ---- detection heads ---------------------------------------------------- */

/* y (N, 1, H, W) plain = channel idx[n] of row n of x (N, C, H, W) (any
 * layout; box deltas (R, 4K) reshaped to (R, K, 4, 1)); idx (N) i32, rows whose
 * idx is outside [0, C) give 0.  The backward writes dx shaped like x: dy
 * where c == idx[n], else 0 (added into dx when accumulate). */
int bd_op_select_channel(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *idx,
                         struct bd_tensor *y);
int bd_op_select_channel_bwd(struct bd_backend *be, const struct bd_tensor *dy, const struct bd_tensor *idx,
                             const struct bd_tensor *x, struct bd_tensor *dx, int accumulate);
/* y (R, cols) of type dt (R when cols == 1) = 1 where lo <= label[r] <= hi,
 * else 0: binary targets and weights of sampled rows from labels (R) i32 */
int bd_op_label_mask(struct bd_backend *be, const struct bd_tensor *label, int64_t cols, int32_t lo, int32_t hi,
                     enum bd_dtype dt, struct bd_tensor *y);

/* ---- losses: per-element (or per-row) losses into loss, gradients scaled by
 * scale into dx; loss or dx may be NULL; w (same shape as loss) or NULL ---- */

/* x (R, K) logits, label (R) int32 (< 0: ignored) -> loss (R) */
int bd_op_softmax_ce(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *label,
                     const struct bd_tensor *w, double scale, struct bd_tensor *loss, struct bd_tensor *dx);
/* sigmoid binary cross-entropy with logits x, targets t (same shape) */
int bd_op_bce(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *t,
              const struct bd_tensor *w, double scale, struct bd_tensor *loss, struct bd_tensor *dx);
/* smooth L1 of x - t with beta (0: L1) */
int bd_op_smooth_l1(struct bd_backend *be, const struct bd_tensor *x, const struct bd_tensor *t,
                    const struct bd_tensor *w, double beta, double scale, struct bd_tensor *loss,
                    struct bd_tensor *dx);

/* ---- reductions (same result run to run) -------------------------------- */
int bd_op_sum(struct bd_backend *be, const struct bd_tensor *x, double *ret);
int bd_op_sumsq(struct bd_backend *be, const struct bd_tensor *x, double *ret);
/* bd_op_sum's value (bit for bit) into element slot of acc, an f64 (S)
 * tensor on the backend, without waiting for it: a step's sums read back in
 * one copy */
int bd_op_sum_to(struct bd_backend *be, const struct bd_tensor *x, struct bd_tensor *acc, int64_t slot);
int bd_op_count_nonfinite(struct bd_backend *be, const struct bd_tensor *x, double *ret);

/* SGD over n contiguous values (optim.c): see struct bd_sgd_args */
int bd_op_sgd(struct bd_backend *be, enum bd_dtype dt, int64_t n, void *p, const void *g, void *v, double lr,
              double momentum, double wd, double gscale);

/* Prefixes be->err with "what: " (a layer or tensor name) and returns r. */
int bd_op_err_prefix(struct bd_backend *be, int r, const char *what);

#endif

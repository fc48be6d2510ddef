/* optim.h: SGD with momentum, learning-rate schedule, gradient clipping and
 * dynamic loss scaling.
 *
 * Update (PyTorch's SGD, weight decay folded into the gradient):
 *   g = grad * gscale + wd * p      (wd only on the model's decay region:
 *   v = momentum * v + g             weights, not biases or batch norm)
 *   p = p - lr * v
 * gscale combines the data-parallel average (1 / ranks), the loss scale and
 * clipping: when clip_norm > 0 and the global norm of the averaged, unscaled
 * gradient exceeds it, gradients are scaled by clip_norm / norm.
 *
 * Schedule (maskrcnn-benchmark's WarmupMultiStepLR): at iteration i
 * (i = steps taken + first_iter), with d = gamma ^ (number of milestones <= i),
 *   BD_WARMUP_LINEAR   lr = base * warm(i) * d
 *                      warm(i) = warmup_factor + (1 - warmup_factor) * i / warmup_iters  for i < warmup_iters, else 1
 *   BD_WARMUP_MLPERF   lr = (base - (warmup_iters - i) * warmup_factor) * d  for i < warmup_iters, else base * d
 *                      (the MLPerf reference's "mlperf_linear": warmup_factor is an absolute lr per
 *                      iteration, so lr 0.08, factor 1e-4 over 800 iterations starts at 0)
 * base is lr for the decay region and lr * bias_lr_factor for the no-decay
 * region (biases; the Mask R-CNN reference's BIAS_LR_FACTOR 2): the
 * multiplicative warmup scales both alike, mlperf_linear subtracts the same
 * delta from both bases.  first_iter is 1 for trainers whose scheduler steps
 * before each forward (maskrcnn-benchmark: the first update uses iteration 1).
 *
 * Mixed precision: the loss is multiplied by loss_scale before the backward;
 * a step whose gradients hold inf or NaN is skipped and halves the scale, and
 * growth_interval good steps in a row double it.
 */
#ifndef BD_OPTIM_H
#define BD_OPTIM_H

#include "model.h"

#define BD_MAX_MILESTONES 8

enum bd_warmup {
        BD_WARMUP_LINEAR,               /* multiplicative, from lr x warmup_factor (the default) */
        BD_WARMUP_MLPERF,               /* absolute, warmup_factor per iteration ("mlperf_linear") */
};

struct bd_sgd_cfg {
        double lr, momentum, weight_decay;
        enum bd_warmup warmup;
        double warmup_factor;
        int64_t warmup_iters;
        int64_t first_iter;             /* the schedule's iteration of the first step: 0 or 1 */
        double bias_lr_factor;          /* the no-decay region's lr x this; 0 is taken as 1 */
        int64_t milestones[BD_MAX_MILESTONES];
        int nmilestones;
        double gamma;
        double clip_norm;               /* 0: no clipping */
        int loss_scaling;               /* dynamic loss scaling (mixed precision) */
        double init_scale;              /* default 65536 */
        int64_t growth_interval;        /* default 2000 */
};

struct bd_sgd {
        struct bd_sgd_cfg cfg;
        void *mom;                      /* device, the model's n_train values */
        int64_t iter;                   /* steps taken (skipped ones included) */
        double loss_scale;
        int64_t good_steps;
};

struct bd_step_info {
        double lr;                      /* the decay region's */
        double bias_lr;                 /* the no-decay region's */
        double grad_norm;               /* of the averaged, unscaled gradient; -1 when not computed */
        int skipped;                    /* non-finite gradients (loss scaling) */
        double loss_scale;
};

/* The decay region's learning rate at schedule iteration iter (first_iter
 * is not added here: iter is the schedule's own). */
double bd_sgd_lr(const struct bd_sgd_cfg *c, int64_t iter);
/* The no-decay region's (biases). */
double bd_sgd_bias_lr(const struct bd_sgd_cfg *c, int64_t iter);
/* momentum buffer zeroed, loss scale at its initial value */
int bd_sgd_init(struct bd_sgd *o, struct bd_model *m, const struct bd_sgd_cfg *cfg, struct bd_err *err);
void bd_sgd_release(struct bd_sgd *o, struct bd_model *m);
/* One update from the model's gradients; grad_scale multiplies them (1/ranks
 * after a sum allreduce).  Bumps the model's version. */
int bd_sgd_step(struct bd_sgd *o, struct bd_model *m, double grad_scale, struct bd_step_info *info);

#endif

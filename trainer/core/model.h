/* model.h: a model's parameters, in one buffer, and their gradients, in another.
 *
 * Layers register their parameters by name ("layer1.0.conv1.weight", the
 * PyTorch names) while the model is built; bd_model_finalize() lays them out
 * and allocates once, on the backend's device:
 *
 *   params: [ trained, with weight decay | trained, no decay | frozen | buffers ]
 *   grads:  [ trained, with weight decay | trained, no decay ]
 *
 * so the optimiser runs over two contiguous ranges, the gradient allreduce
 * over one, and a checkpoint writes the whole parameter buffer in one piece.
 * Within a region parameters keep the order in which they were registered.
 *
 * During a step, forward passes count each parameter's uses and backward
 * passes count them down: the first gradient written in a step overwrites,
 * later ones add (a head shared by several pyramid levels), and when the last
 * use is done the parameter's gradient is final and the "ready" hook tells the
 * data-parallel layer, which can then start reducing that bucket while the
 * rest of the backward runs.
 *
 * Synchronised batch norm: when the data-parallel layer sets sync_bn
 * (bd_dp_sync_bn), trained batch norm layers sum their statistics over the
 * ranks with it in training (layers.h), so that every rank normalises with
 * the whole global batch's.
 */
#ifndef BD_MODEL_H
#define BD_MODEL_H

#include <stdint.h>

#include "backend.h"
#include "rng.h"
#include "tensor.h"

#define BD_NAME_MAX 96

enum bd_param_flags {
        BD_P_NO_DECAY = 1 << 0,         /* biases, batch-norm weights */
        BD_P_FROZEN = 1 << 1,           /* no gradient, no update */
        BD_P_BUFFER = 1 << 2,           /* state, not a parameter (running statistics) */
};

enum bd_init {
        BD_INIT_ZERO,
        BD_INIT_ONE,
        BD_INIT_KAIMING_NORMAL_OUT,     /* N(0, 2 / fan_out): torchvision's ResNet convolutions */
        BD_INIT_KAIMING_UNIFORM,        /* U(-b, b), b = 1 / sqrt(fan_in): PyTorch's default weights */
        BD_INIT_UNIFORM_FAN_IN,         /* same bound for biases (fan_in given) */
        BD_INIT_NORMAL,                 /* N(0, std) */
        BD_INIT_XAVIER_UNIFORM,         /* U(-b, b), b = sqrt(6 / (fan_in + fan_out)) */
        BD_INIT_KAIMING_UNIFORM_A1,     /* U(-b, b), b = sqrt(3 / fan_in): kaiming_uniform_(a=1) (Detectron, FPN) */
};

struct bd_param_init {
        enum bd_init kind;
        int64_t fan_in, fan_out;
        double std;
};

struct bd_param {
        char name[BD_NAME_MAX];
        int ndim;
        int64_t dims[4];
        int64_t numel;
        unsigned flags;
        struct bd_param_init init;
        size_t offset;                  /* elements into params */
        size_t goffset;                 /* elements into grads, trained only */
        int uses, done;                 /* this step */
        uint64_t step;                  /* step of uses/done */
};

struct bd_model;
typedef void (*bd_grad_ready_fn)(void *ctx, struct bd_model *m, int id);
/* Sums the n doubles at v, in the backend's memory, over the ranks in place,
 * in the order of the backend's stream; 0, or a negative errno with
 * m->be->err set. */
typedef int (*bd_rank_sum_fn)(void *ctx, struct bd_model *m, double *v, int64_t n);

struct bd_model {
        struct bd_backend *be;
        enum bd_dtype dtype;            /* of parameters: f32, or f64 in gradient checks */
        struct bd_param *p;
        int np, cap;
        void *params, *grads;           /* device memory */
        size_t n_all, n_train, n_decay; /* elements */
        size_t buf_off;                 /* where the buffers region starts */
        uint64_t version;               /* changes whenever parameter values change */
        uint64_t step;                  /* for use counting, bd_model_begin_step() */
        int training;
        int finalized;
        bd_grad_ready_fn on_ready;
        void *on_ready_ctx;
        bd_rank_sum_fn sync_bn;         /* NULL: each rank's own batch statistics */
        void *sync_bn_ctx;
        struct bd_plan_cache **caches;  /* owned by the model, for its layers */
        int ncaches;
};

void bd_model_init(struct bd_model *m, struct bd_backend *be, enum bd_dtype dtype);
void bd_model_release(struct bd_model *m);

/* Registers a parameter; returns its id (>= 0).  Names must be unique. */
int bd_model_add(struct bd_model *m, const char *name, int ndim, const int64_t *dims, unsigned flags,
                 const struct bd_param_init *init);
int bd_model_find(const struct bd_model *m, const char *name);
/* Lays out and allocates; parameters are zero until bd_model_init_params(). */
int bd_model_finalize(struct bd_model *m, struct bd_err *err);
/* Initialises every parameter from its init rule; each parameter draws from
 * its own stream (seed, hash of its name), so adding a layer elsewhere does
 * not change the others. */
int bd_model_init_params(struct bd_model *m, uint64_t seed, struct bd_err *err);

/* Views of one parameter and of its gradient (data NULL when frozen/buffer). */
struct bd_tensor bd_model_param(struct bd_model *m, int id);
struct bd_tensor bd_model_grad(struct bd_model *m, int id);
/* Views of whole regions (1-D). */
struct bd_tensor bd_model_all_params(struct bd_model *m);
struct bd_tensor bd_model_all_grads(struct bd_model *m);
static inline int bd_model_trained(const struct bd_model *m, int id)
{
        return id >= 0 && !(m->p[id].flags & (BD_P_FROZEN | BD_P_BUFFER));
}

/* A plan cache for a layer, released with the model. */
struct bd_plan_cache *bd_model_plan_cache(struct bd_model *m);

/* Step bookkeeping: begin_step before the forward; layers call use() in the
 * forward and grad_flags()/grad_done() around writing a gradient. */
void bd_model_begin_step(struct bd_model *m);
void bd_model_use(struct bd_model *m, int id);
unsigned bd_model_grad_flags(struct bd_model *m, int id);
void bd_model_grad_done(struct bd_model *m, int id);
/* Before the backward: gradients of trained parameters the forward did not
 * use are zeroed and reported ready. */
int bd_model_begin_backward(struct bd_model *m);

/* Host copies: the whole parameter buffer (n_all values of m->dtype). */
int bd_model_get_params(struct bd_model *m, void *host);
int bd_model_set_params(struct bd_model *m, const void *host);

#endif

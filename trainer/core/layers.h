/* layers.h: layers with parameters, each a forward and a backward.
 *
 *   conv   2-D convolution (stride, padding, dilation, groups, bias) and the
 *          transposed one (Mask R-CNN's 2x2 stride-2 upsampling)
 *   bn     batch norm: training (batch statistics, running averages),
 *          inference (running statistics) or frozen (an affine map that is
 *          never trained), with an optional fused ReLU; in training, the
 *          statistics of the whole global batch when the model's sync_bn
 *          sums them over the ranks (synchronised batch norm, model.h)
 *   fc     fully connected
 *   pool   max pooling
 * Layers without parameters are the operations of ops.h (ReLU, add,
 * upsampling, concat, losses).
 *
 * The caller owns activations: forward(x) -> y resizes y, backward gets x
 * (and y where needed) back with dy and writes dx (NULL: not wanted, e.g. for
 * the image).  Batch norm and pooling keep what their backward needs in the
 * layer, so each forward is followed by at most one backward.  Parameter
 * gradients go to the model's gradient buffer (model.h explains overwrite vs
 * add).  Errors are one line naming the layer, in m->be->err.
 */
#ifndef BD_LAYERS_H
#define BD_LAYERS_H

#include "model.h"
#include "ops.h"

struct bd_conv {
        char name[BD_NAME_MAX];
        struct bd_conv_desc d;
        int64_t cin, cout;
        int w, b;                       /* parameter ids, b -1 without bias */
        struct bd_plan_cache *pc;
};

struct bd_conv_cfg {
        int64_t cin, cout;
        int k, stride, pad, dilation, groups;
        int bias;
        int transposed;
        unsigned pflags;                /* BD_P_FROZEN for frozen stages */
        enum bd_init winit;             /* default BD_INIT_KAIMING_UNIFORM (PyTorch) */
        double wstd;                    /* for BD_INIT_NORMAL */
};

int bd_conv_init(struct bd_conv *l, struct bd_model *m, const char *name, const struct bd_conv_cfg *cfg);
int bd_conv_fwd(struct bd_model *m, struct bd_conv *l, const struct bd_tensor *x, struct bd_tensor *y);
/* acc_dx: add the input gradient into dx (a residual branch) */
int bd_conv_bwd(struct bd_model *m, struct bd_conv *l, const struct bd_tensor *x, const struct bd_tensor *dy,
                struct bd_tensor *dx, int acc_dx);

enum bd_bn_mode {
        BD_BN_TRAIN,    /* batch statistics while training, running ones otherwise */
        BD_BN_FROZEN,   /* running statistics and affine parameters never change */
};

struct bd_bn {
        char name[BD_NAME_MAX];
        int64_t C;
        enum bd_bn_mode mode;
        double eps, momentum;
        int relu;
        int gamma, beta, rmean, rvar;
        struct bd_plan_cache *pc;
        int batch_stats;                /* the last forward used batch statistics */
        int synced;                     /* ... summed over the ranks */
        struct bd_tensor mean, var, ws; /* saved by the forward */
        struct bd_tensor invstd;        /* and when synchronised, with the sums (ops.h) */
        struct bd_tensor sums;
        struct bd_tensor scale, shift;  /* affine coefficients (inference, frozen, synchronised) */
        uint64_t coef_version;
};

/* eps 1e-5, momentum 0.1 (PyTorch's); relu fuses a ReLU after it */
int bd_bn_init(struct bd_bn *l, struct bd_model *m, const char *name, int64_t C, enum bd_bn_mode mode, int relu);
int bd_bn_fwd(struct bd_model *m, struct bd_bn *l, const struct bd_tensor *x, struct bd_tensor *y);
/* y is the forward's output (the ReLU mask when fused) */
int bd_bn_bwd(struct bd_model *m, struct bd_bn *l, const struct bd_tensor *x, const struct bd_tensor *y,
              const struct bd_tensor *dy, struct bd_tensor *dx);
void bd_bn_release(struct bd_bn *l);

struct bd_fc {
        char name[BD_NAME_MAX];
        int64_t in, out;
        int w, b;
        struct bd_plan_cache *pc;
};

int bd_fc_init(struct bd_fc *l, struct bd_model *m, const char *name, int64_t in, int64_t out, int bias,
               unsigned pflags);
int bd_fc_fwd(struct bd_model *m, struct bd_fc *l, const struct bd_tensor *x, struct bd_tensor *y);
int bd_fc_bwd(struct bd_model *m, struct bd_fc *l, const struct bd_tensor *x, const struct bd_tensor *dy,
              struct bd_tensor *dx);

struct bd_pool {
        struct bd_pool_desc d;
        struct bd_plan_cache *pc;
        struct bd_tensor ws;
};

void bd_pool_init(struct bd_pool *l, struct bd_model *m, int k, int stride, int pad);
int bd_pool_fwd(struct bd_model *m, struct bd_pool *l, const struct bd_tensor *x, struct bd_tensor *y);
int bd_pool_bwd(struct bd_model *m, struct bd_pool *l, const struct bd_tensor *x, const struct bd_tensor *y,
                const struct bd_tensor *dy, struct bd_tensor *dx);
void bd_pool_release(struct bd_pool *l);

#endif

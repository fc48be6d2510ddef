/* resnet.h: ResNet-18/34/50 backbones (torchvision's layout and names).
 *
 *   stem     conv1 7x7/2, bn1 + ReLU, max pool 3x3/2
 *   layer1..layer4   basic blocks (18, 34) or bottlenecks (50), the first
 *            block of a stage with the stage's stride and a 1x1 downsample
 *   head     global average pool + fc (only with num_classes > 0)
 *
 * Parameter names are torchvision's ("layer1.0.conv1.weight",
 * "layer2.0.downsample.0.weight", "bn1.running_mean") behind a prefix, so
 * torchvision state dicts load by name (tools/convert-torchvision.py).
 *
 * Options the detectors need: how many stages to build (SSD stops after
 * layer3), each stage's stride (SSD runs layer3 at stride 1), frozen stages
 * (freeze_at as maskrcnn-benchmark's FREEZE_CONV_BODY_AT: 0 nothing, 1 the
 * stem, 2 the stem and layer1, ...), frozen batch norm everywhere, and the
 * bottleneck stride on the first 1x1 (Caffe2 / MSRA weights).
 *
 * Shapes: x (N, 3, H, W) -> stage k output (N, C_k, H / s_k, W / s_k) with
 * C_k = 64, 128, 256, 512 (x4 for bottlenecks), or width, 2 width, ... 
 */
#ifndef BD_RESNET_H
#define BD_RESNET_H

#include "layers.h"
#include "scratch.h"

struct bd_resnet_cfg {
        int depth;                      /* 18, 34 or 50 */
        int stages;                     /* 1..4 built (0: 4) */
        int strides[4];                 /* per stage (0: 1, 2, 2, 2) */
        int freeze_at;
        enum bd_bn_mode bn;
        int stride_in_1x1;
        int num_classes;                /* > 0: classification head */
        int width;                      /* channels of the stem and layer1 (0: 64); smaller for tests */
};

struct bd_block {
        int nconv;                      /* 2 basic, 3 bottleneck */
        struct bd_conv conv[3];
        struct bd_bn bn[3];
        int has_ds;
        struct bd_conv ds;
        struct bd_bn ds_bn;
        int trained;
        const struct bd_tensor *x;      /* input of the last forward */
        struct bd_tensor c[3], b[3], dsc, dsb, out;
};

struct bd_resnet {
        struct bd_resnet_cfg cfg;
        struct bd_conv conv1;
        struct bd_bn bn1;
        struct bd_pool pool;
        struct bd_block *blocks;
        int nblocks;
        int stage_end[4];               /* index of each stage's last block */
        int channels[4];                /* output channels per stage */
        struct bd_fc fc;
        int stem_trained;
        const struct bd_tensor *x;
        struct bd_tensor c1, b1, p1, pooled, logits;
        struct bd_scratch scratch;
};

int bd_resnet_init(struct bd_resnet *r, struct bd_model *m, const char *prefix, const struct bd_resnet_cfg *cfg);
void bd_resnet_release(struct bd_resnet *r);
/* x is kept (not copied) until the backward */
int bd_resnet_fwd(struct bd_model *m, struct bd_resnet *r, const struct bd_tensor *x);
/* output of stage k (1-based) after the forward */
const struct bd_tensor *bd_resnet_stage(const struct bd_resnet *r, int k);
/* dstage[k-1]: gradient of stage k's output (NULL: unused); dlogits for the
 * classification head (NULL without one).  No input gradient (the image). */
int bd_resnet_bwd(struct bd_model *m, struct bd_resnet *r, const struct bd_tensor *const *dstage,
                  const struct bd_tensor *dlogits);

#endif

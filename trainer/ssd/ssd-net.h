/* ssd-net.h: the SSD network (MLPerf SSD300 with a ResNet backbone).
 *
 *   backbone    ResNet-34 (or -18) stem, layer1..layer3, layer3 at stride 1
 *               (its first block and downsample too): 38x38x256 at 300x300
 *   extra       five blocks, each 1x1 conv (bias) to a middle width, ReLU,
 *               3x3 conv (bias), ReLU: stride 2 pad 1 for the first three,
 *               stride 1 pad 0 for the last two -> 19x19x512, 10x10x512,
 *               5x5x256, 3x3x256, 1x1x256 (middle widths 256, 256, 128, 128,
 *               128)
 *   heads       per level a 3x3 conv (pad 1, bias) to 4 A offsets and one to
 *               K A class logits, A = 4, 6, 6, 6, 4, 4 boxes per cell
 *
 * Outputs: ploc (N B, 4) and plabel (N B, K) plain f32 (the activation type),
 * row b of image n at n B + b, boxes in the order of ssd-boxes.h: the
 * reference's (N, 4, B) and (N, K, B) transposed to rows, which is what the
 * loss and the decoder read.
 *
 * Options beyond the reference, for tests and small machines:
 *   image_size  any size >= 32: feature map sizes follow the arithmetic of
 *               the layers; a pad-0 extra block whose input is smaller than
 *               3x3 pads by 1 instead (so every level exists), and the
 *               default boxes follow the sizes (ssd-boxes.h)
 *   width_mult  every channel count (backbone width 64, extra widths) times
 *               w, rounded to a multiple of 8, at least 8
 *   depth       18 or 34
 *
 * Parameter names (PyTorch's for the same module tree): backbone.conv1.weight,
 * backbone.layer3.0.downsample.0.weight, ... (torchvision's ResNet names, so
 * ImageNet weights load with the prefix "backbone."),
 * additional_blocks.<i>.0.weight (1x1) and .2.weight (3x3), loc.<k>.weight,
 * conf.<k>.weight, with biases.  Initialisation as the reference: backbone as
 * torchvision (Kaiming normal fan-out, batch norm 1 and 0), extra and head
 * weights Xavier uniform, their biases PyTorch's default U(+-1/sqrt(fan_in)).
 */
#ifndef BD_SSD_NET_H
#define BD_SSD_NET_H

#include "resnet.h"
#include "ssd-boxes.h"

#define SSD_EXTRA (SSD_LEVELS - 1)

struct ssd_cfg {
        int depth;                      /* 18 or 34 */
        int image_size;                 /* square input */
        double width_mult;              /* 1: the reference */
        int num_classes;                /* K, background included (81 for COCO) */
};

struct ssd_net {
        struct ssd_cfg cfg;
        struct bd_resnet backbone;
        int chan[SSD_LEVELS];           /* channels of each feature map */
        int mid[SSD_EXTRA];
        int fsize[SSD_LEVELS];
        struct bd_conv ex1[SSD_EXTRA], ex2[SSD_EXTRA];
        struct bd_conv loc[SSD_LEVELS], conf[SSD_LEVELS];
        struct ssd_dboxes dboxes;
        int64_t nboxes;                 /* B */
        /* activations of the last forward */
        const struct bd_tensor *feat[SSD_LEVELS];
        struct bd_tensor e1[SSD_EXTRA], e2[SSD_EXTRA];  /* after ReLU */
        struct bd_tensor hloc[SSD_LEVELS], hconf[SSD_LEVELS];
        struct bd_tensor ploc, plabel;
        struct bd_scratch scratch;
};

/* Feature map sizes of the network for an image size; -EINVAL (err filled)
 * when the image is too small. */
int ssd_feature_sizes(int image_size, int ret_fsize[SSD_LEVELS], int ret_pad[SSD_EXTRA], struct bd_err *err);

/* Builds the layers into m (before bd_model_finalize) and the default boxes. */
int ssd_net_init(struct ssd_net *s, struct bd_model *m, const struct ssd_cfg *cfg);
void ssd_net_release(struct ssd_net *s);
/* x (N, 3, S, S) -> s->ploc, s->plabel; x is kept until the backward.  In
 * inference mode (m->training 0) batch norm uses the running statistics. */
int ssd_net_fwd(struct bd_model *m, struct ssd_net *s, const struct bd_tensor *x);
/* Gradients of ploc and plabel -> parameter gradients (none for the image). */
int ssd_net_bwd(struct bd_model *m, struct ssd_net *s, const struct bd_tensor *dploc, const struct bd_tensor *dplabel);

/* Head gather of ssd-elem.h on the backend: head (N, A R, H, W) -> rows
 * (N, B, R) at box offset off (rows must have its shape), or back into head
 * (shape and layout set, to_head 1). */
int ssd_head_gather(struct bd_backend *be, struct bd_tensor *head, int64_t A, int64_t off, struct bd_tensor *rows,
                    int to_head);

#endif

/* mrcnn-net.h: the Mask R-CNN network (ResNet-FPN, RPN, box and mask heads)
 * on the trainer core and the detection operators of trainer/det/.
 *
 *   backbone   ResNet-18/34/50 (models/resnet.h), stages C2..C5 (strides
 *              4, 8, 16, 32); the reference: ResNet-50, batch norm frozen,
 *              stem and layer1 frozen (freeze_at 2)
 *   fpn        per stage a 1x1 lateral (bias) to F channels and a 3x3 output
 *              conv (bias); top-down: nearest x2 of the coarser inner map
 *              added to the lateral; P6 = P5 subsampled by 2 (max pool k1 s2)
 *   rpn        shared over P2..P6: 3x3 conv F (bias) + ReLU, 1x1 to A
 *              objectness logits and 1x1 to 4A deltas, A = 3 (ratios 0.5, 1,
 *              2) anchors of size s_l = anchor_size * 2^l at stride 2^(l+2)
 *   roi heads  MultiScaleRoIAlign over P2..P5 (7x7 boxes, 14x14 masks,
 *              sampling 2, aligned false); box head fc6, fc7 (ReLU) to
 *              box_rep, cls_score (K) and bbox_pred (4K); mask head
 *              mask_convs x (3x3 conv mask_dim + ReLU), 2x2 stride-2
 *              transposed conv + ReLU, 1x1 to K logits at 28x28
 *
 * Parameter names are torchvision 0.14's MaskRCNN state dict names
 * (backbone.body.layer1.0.conv1.weight, backbone.fpn.inner_blocks.0.0.weight,
 * backbone.fpn.layer_blocks.0.0.weight, rpn.head.conv.0.0.weight,
 * rpn.head.cls_logits.weight, rpn.head.bbox_pred.weight,
 * roi_heads.box_head.fc6.weight, roi_heads.box_predictor.cls_score.weight,
 * roi_heads.box_predictor.bbox_pred.weight, roi_heads.mask_head.0.0.weight,
 * roi_heads.mask_predictor.conv5_mask.weight,
 * roi_heads.mask_predictor.mask_fcn_logits.weight, with .bias), so a
 * torchvision state dict converted by trainer/tools/convert-torchvision.py
 * loads by name, and an ImageNet ResNet loads with the prefix
 * "backbone.body.".  Initialisation as the reference: FPN kaiming_uniform
 * (a=1) bias 0; RPN N(0, 0.01) bias 0; fc6/fc7 kaiming_uniform(a=1) bias 0;
 * cls_score N(0, 0.01), bbox_pred N(0, 0.001), biases 0; mask convs and the
 * deconv kaiming_normal(fan_out, relu) bias 0; backbone as torchvision.
 * In torchvision mode fc6, fc7, cls_score and bbox_pred keep nn.Linear's
 * default (weights and biases U(+-1/sqrt(in))), as torchvision does.
 *
 * The two conventions (shared/reference/maskrcnn.md sections 1 and 2) are
 * a switch set, struct mrcnn_cfg, filled by mrcnn_cfg_defaults():
 *
 *   mlperf        det_conv_mlperf (+1 boxes, Detectron anchors, NMS >=,
 *                 straddle 0), RPN post-NMS top-n over the batch in training,
 *                 frozen-BN eps 0, stride on the first 1x1 of a bottleneck,
 *                 box smooth-L1 beta 1, mask targets by polygon
 *                 rasterisation, the reference's level mapper (+1 areas),
 *                 detection cut by kthvalue, bias lr x2 and no decay
 *   torchvision   det_conv_torchvision, top-n per image, eps 1e-5, stride on
 *                 the 3x3, beta 1/9, mask targets by RoIAlign of the bitmask,
 *                 torchvision's mapper and cut, one lr
 *
 * A training step (mrcnn_fwd_train, then mrcnn_bwd):
 *   1. backbone, FPN, RPN head on the padded batch (N, 3, H, W);
 *   2. anchors per level (cached per map size); proposals
 *      (det_rpn_proposals, training preset of the convention with
 *      rpn_pre/post_nms_top_n_train); RPN targets of the whole batch
 *      (det_dev_rpn_targets: per image det_match_boxes (0.7 / 0.3,
 *      low-quality matches), straddle rule, det_sample (rpn_batch per
 *      image, half positive at most), encode (weights 1, 1, 1, 1));
 *   3. the proposals with the ground-truth boxes appended per image; RoI
 *      targets: det_match_boxes (0.5 / 0.5), labels,
 *      det_sample (roi_batch per image, 25 % positive), encode (10, 10, 5,
 *      5) of the matched ground truth;
 *   4. box head on the sampled RoIs (image by image, in proposal order, as
 *      torch.where(pos | neg) in both references), mask head on the
 *      positive ones in the same order, mask targets by the convention's
 *      rule;
 *   5. the five losses (trainer/det/losses.h), their sum; the losses'
 *      gradients (times gscale: the loss scale of mixed precision) are kept
 *      for mrcnn_bwd, which writes the parameters' gradients.
 * Proposal selection and the RPN's targets run on the backend's device
 * (boxes-dev.h: on CUDA the kernels, only the proposals and the sampled
 * counts come back), the RoI sampling and targets on the host, all on
 * float32 values (in a float64 model the RPN outputs are rounded to float32
 * first); no gradient flows through the proposals (as both
 * references: they are detached).  Sampling draws from (seed, step,
 * image) streams (match.h), or uses injected permutations.
 *
 * Inference (mrcnn_detect): proposals with the test preset, box head on
 * all of them, det_op_postprocess, mask head on the detections, the
 * masks pasted into each image at its original size and encoded as COCO
 * RLE; boxes in original pixels.
 *
 * Precision: the model's dtype (f32, or f64 on the CPU for gradient
 * checks).  Mixed precision (cfg.amp, CUDA, a float32 model): the
 * backbone, FPN and RPN head run in half precision (the bulk of the
 * arithmetic); P2..P5 are cast to float32 for RoIAlign, whose heads, the
 * box bookkeeping and all losses stay in float32, and the heads' gradients
 * of P2..P5 are cast back to half for the FPN's backward.  The loss scale
 * (gscale) keeps half-precision gradients in range; the optimiser skips
 * steps whose gradients overflow.
 */
#ifndef BD_MRCNN_NET_H
#define BD_MRCNN_NET_H

#include <stdint.h>

#include "boxes.h"
#include "dp.h"
#include "det-loader.h"
#include "layers.h"
#include "losses.h"
#include "match.h"
#include "postprocess.h"
#include "proposals.h"
#include "resnet.h"
#include "roi-align.h"

#define MRCNN_LEVELS 5          /* P2..P6 */
#define MRCNN_ROI_LEVELS 4      /* P2..P5 */
#define MRCNN_MAX_MASK_CONVS 8

enum mrcnn_mask_rule {
        MRCNN_MASK_POLYGON,     /* [R]: crop and rasterise the polygons (masks.h) */
        MRCNN_MASK_ROIALIGN,    /* [TV]: RoIAlign of the full-image bitmask (roi-align.h) */
};

struct mrcnn_cfg {
        enum det_conv_kind mode;
        /* the switch set (mrcnn_cfg_defaults fills it from mode) */
        struct det_conv conv;
        double frozen_bn_eps;           /* 0 [R], 1e-5 [TV] */
        int stride_in_1x1;
        double box_beta;                /* smooth L1 of the box head */
        enum mrcnn_mask_rule mask_rule;
        struct det_post_config post;
        double bias_lr_factor;          /* 2 [R], 1 [TV] (the optimiser applies it) */
        double bias_weight_decay;       /* 0 */
        int rpn_per_batch;              /* post-NMS top-n over the batch in training ([R]) */
        /* sizes */
        int depth;                      /* 18, 34, 50 */
        double width_mult;              /* backbone widths x this (1: 64 .. 2048) */
        int freeze_at;                  /* 2: stem + layer1 (the reference), 0: nothing */
        int frozen_bn;                  /* 1: frozen batch norm everywhere; 0: trained batch norm */
        int fpn_channels;               /* 256 */
        float anchor_size;              /* 32: sizes 32, 64, ..., 512 on P2..P6 */
        int num_classes;                /* K with the background: 81 */
        int rpn_pre_nms_top_n_train, rpn_post_nms_top_n_train;  /* 2000, 2000 */
        int rpn_pre_nms_top_n_test, rpn_post_nms_top_n_test;    /* 1000, 1000 */
        int rpn_batch;                  /* anchors sampled per image: 256 */
        double rpn_positive_fraction;   /* 0.5 */
        int roi_batch;                  /* RoIs sampled per image: 512 */
        double roi_positive_fraction;   /* 0.25 */
        int box_rep;                    /* fc6, fc7 width: 1024 */
        int mask_convs;                 /* 4 */
        int mask_dim;                   /* 256 */
        int masks;                      /* 1: the mask head (Mask R-CNN); 0: none, boxes only (Faster R-CNN) */
        int detections;                 /* per image at inference: 100 */
        int amp;                        /* CUDA: backbone, FPN and RPN head in half precision */
};

/* The reference model (R50-FPN, 81 classes) in a convention.  Sizes below
 * are then changed field by field (the program's options). */
void mrcnn_cfg_defaults(struct mrcnn_cfg *c, enum det_conv_kind mode);
/* The small configuration of maskrcnn.md section 7 (ResNet-18 from scratch
 * with trained batch norm, FPN 64, anchors from 16, RPN 300/150 -> 200/100
 * with 128 anchors, 64 RoIs, box head 256, mask head 2 x 64, 20
 * detections) for num_classes classes with the background. */
void mrcnn_cfg_small(struct mrcnn_cfg *c, enum det_conv_kind mode, int num_classes);
/* -EINVAL (err names the field) for values out of range. */
int mrcnn_cfg_check(const struct mrcnn_cfg *c, struct bd_err *err);

/* Injected sampler choices (tests): for image i, rpn[i] and roi[i] replace
 * the generator's permutations (match.h); NULL members: the generator. */
struct mrcnn_inject {
        const struct det_perm *rpn;     /* (N) */
        const struct det_perm *roi;     /* (N) */
};

/* The five losses of a step (each already normalised), and their sum. */
struct mrcnn_losses {
        double objectness, rpn_box, classifier, box_reg, mask;
        double total;
        int64_t rpn_pos, rpn_neg, roi_pos, roi_neg;     /* sampled, the whole batch */
};

/* One image's detections, in original pixels. */
struct mrcnn_dets {
        int64_t image_id;
        int64_t n;
        float *boxes;                   /* (n, 4) x1 y1 x2 y2 */
        float *scores;                  /* (n) */
        int32_t *labels;                /* (n) 1..K-1 */
        struct rle *masks;              /* (n) at orig_height x orig_width */
};
void mrcnn_dets_release(struct mrcnn_dets *d);

struct mrcnn_net;       /* opaque: mrcnn-stages.h */

/* Builds the layers into m (before bd_model_finalize).  Errors in err. */
int mrcnn_net_new(struct bd_model *m, const struct mrcnn_cfg *cfg, struct mrcnn_net **ret, struct bd_err *err);
struct mrcnn_net *mrcnn_net_free(struct mrcnn_net *n);
const struct mrcnn_cfg *mrcnn_net_cfg(const struct mrcnn_net *n);

/* What a training step needs besides the batch. */
struct mrcnn_step {
        uint64_t seed;                  /* the run's seed */
        uint64_t step;                  /* 1-based step number */
        int64_t image_base;             /* global index of the batch's first image (rank x local batch) */
        const struct mrcnn_inject *inj; /* NULL: the generator */
        double gscale;                  /* multiplies the kept loss gradients (loss scale) */
        struct bd_dp *dp;               /* NULL or one rank: counts are local */
};

/* Training forward and losses of a batch (images in host memory, as
 * det-loader gives them; the model's dtype on its device is made from
 * them).  The samplers draw from streams keyed by (seed, step, image_base +
 * i).  Loss normalisers (sampled anchors, sampled RoIs, mask pixels) are
 * the counts over all ranks divided by the number of ranks (one
 * bd_dp_sum): so the ranks' average loss and gradient are those of one
 * rank running the whole global batch, however it is split (the
 * references divide by each GPU's own counts: the same in expectation).
 * The RPN's per-batch top-n ([R]) is over this rank's batch, as the
 * reference's per-GPU batch.  Bumps the model's step
 * (bd_model_begin_step). */
int mrcnn_fwd_train(struct mrcnn_net *n, struct bd_model *m, const struct det_batch *b, const struct mrcnn_step *st,
                    struct mrcnn_losses *out, struct bd_err *err);
/* The backward of the last mrcnn_fwd_train: parameter gradients (the
 * data-parallel hooks fire as they become final).  The caller calls
 * bd_model_begin_backward (or bd_dp_begin_backward) first. */
int mrcnn_bwd(struct mrcnn_net *n, struct bd_model *m, struct bd_err *err);

/* Inference of a batch (m->training is set to 0 for it and restored):
 * out[i] for each of b->n images (allocated here; mrcnn_dets_release). */
int mrcnn_detect(struct mrcnn_net *n, struct bd_model *m, const struct det_batch *b, struct mrcnn_dets *out,
                 struct bd_err *err);

/* ---- for tests: the last training forward's intermediate values (host
 * copies, valid until the next call) ---- */
struct mrcnn_debug {
        int64_t nprops[64];             /* proposals per image (with the GT appended) */
        const float *props;             /* the proposals of image 0 .. N-1, concatenated (sum nprops, 4) */
        int64_t nrois;                  /* sampled RoIs of the batch */
        const float *rois;              /* (nrois, 5) batch index, x1 y1 x2 y2 */
        const int32_t *roi_labels;      /* (nrois) */
};
void mrcnn_debug_get(const struct mrcnn_net *n, struct mrcnn_debug *ret);

#endif

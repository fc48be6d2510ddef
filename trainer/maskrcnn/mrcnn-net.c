/* mrcnn-net.c: the Mask R-CNN network as a sequence of stages (mrcnn-net.h
 * explains the model, mrcnn-stages.h the stage files): configuration,
 * construction, the training step and its backward. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mrcnn-stages.h"

/* ---- configuration --------------------------------------------------------------------- */

void mrcnn_cfg_defaults(struct mrcnn_cfg *c, enum det_conv_kind mode)
{
        int mlperf = mode == DET_CONV_MLPERF;
        *c = (struct mrcnn_cfg){
                .mode = mode,
                .conv = *det_conv_get(mode),
                .frozen_bn_eps = mlperf ? 0 : 1e-5,
                .stride_in_1x1 = mlperf,
                .box_beta = mlperf ? DET_BETA_BOX_MLPERF : DET_BETA_BOX_TORCHVISION,
                .mask_rule = mlperf ? MRCNN_MASK_POLYGON : MRCNN_MASK_ROIALIGN,
                .post = mlperf ? det_post_mlperf : det_post_torchvision,
                .bias_lr_factor = mlperf ? 2 : 1,
                .bias_weight_decay = 0,
                .rpn_per_batch = mlperf,
                .depth = 50,
                .width_mult = 1,
                .freeze_at = 2,
                .frozen_bn = 1,
                .fpn_channels = 256,
                .anchor_size = 32,
                .num_classes = 81,
                .rpn_pre_nms_top_n_train = 2000,
                .rpn_post_nms_top_n_train = 2000,
                .rpn_pre_nms_top_n_test = 1000,
                .rpn_post_nms_top_n_test = 1000,
                .rpn_batch = 256,
                .rpn_positive_fraction = 0.5,
                .roi_batch = 512,
                .roi_positive_fraction = 0.25,
                .box_rep = 1024,
                .mask_convs = 4,
                .mask_dim = 256,
                .masks = 1,
                .detections = 100,
        };
        c->post.detections_per_img = c->detections;
}

void mrcnn_cfg_small(struct mrcnn_cfg *c, enum det_conv_kind mode, int num_classes)
{
        mrcnn_cfg_defaults(c, mode);
        c->depth = 18;
        c->freeze_at = 0;
        c->frozen_bn = 0;
        c->fpn_channels = 64;
        c->anchor_size = 16;
        c->num_classes = num_classes;
        c->rpn_pre_nms_top_n_train = 300;
        c->rpn_pre_nms_top_n_test = 150;
        c->rpn_post_nms_top_n_train = 200;
        c->rpn_post_nms_top_n_test = 100;
        c->rpn_batch = 128;
        c->roi_batch = 64;
        c->box_rep = 256;
        c->mask_convs = 2;
        c->mask_dim = 64;
        c->detections = 20;
        c->post.detections_per_img = 20;
}

int mrcnn_cfg_check(const struct mrcnn_cfg *c, struct bd_err *err)
{
#define BAD(cond, ...) do { if (cond) return bd_err_set(err, -EINVAL, __VA_ARGS__); } while (0)
        BAD(c->depth != 18 && c->depth != 34 && c->depth != 50, "backbone: resnet%d (resnet18, resnet34 or resnet50)",
            c->depth);
        BAD(!(c->width_mult > 0 && c->width_mult <= 4), "width multiplier %g out of (0, 4]", c->width_mult);
        BAD(c->freeze_at < 0 || c->freeze_at > 5, "freeze_at %d out of [0, 5]", c->freeze_at);
        BAD(c->fpn_channels < 1 || c->fpn_channels > 4096, "FPN channels %d out of [1, 4096]", c->fpn_channels);
        BAD(!(c->anchor_size >= 1 && c->anchor_size <= 4096), "anchor size %g out of [1, 4096]", c->anchor_size);
        BAD(c->num_classes < 2 || c->num_classes > 100000, "%d classes (with the background): at least 2",
            c->num_classes);
        BAD(c->rpn_pre_nms_top_n_train < 1 || c->rpn_post_nms_top_n_train < 1 || c->rpn_pre_nms_top_n_test < 1 ||
                    c->rpn_post_nms_top_n_test < 1,
            "RPN top-n must be at least 1");
        BAD(c->rpn_batch < 1 || c->roi_batch < 1, "sampled anchors and RoIs per image must be at least 1");
        BAD(!(c->rpn_positive_fraction >= 0 && c->rpn_positive_fraction <= 1) ||
                    !(c->roi_positive_fraction >= 0 && c->roi_positive_fraction <= 1),
            "positive fractions must be in [0, 1]");
        BAD(c->box_rep < 1 || c->mask_dim < 1, "head widths must be at least 1");
        BAD(c->mask_convs < 0 || c->mask_convs > MRCNN_MAX_MASK_CONVS, "mask convolutions %d out of [0, %d]",
            c->mask_convs, MRCNN_MAX_MASK_CONVS);
        BAD(c->detections < 1, "detections per image must be at least 1");
#undef BAD
        return 0;
}

/* ---- the network ------------------------------------------------------------------------ */

const struct mrcnn_cfg *mrcnn_net_cfg(const struct mrcnn_net *n)
{
        return &n->cfg;
}

int mrcnn_net_new(struct bd_model *m, const struct mrcnn_cfg *cfg, struct mrcnn_net **ret, struct bd_err *err)
{
        int r = mrcnn_cfg_check(cfg, err);
        if (r < 0)
                return r;
        struct mrcnn_net *n = calloc(1, sizeof(*n));
        if (!n)
                return bd_err_set(err, -ENOMEM, "out of memory");
        n->cfg = *cfg;
        n->cfg.post.detections_per_img = cfg->detections;
        n->be = m->be;
        n->dt = m->dtype;
        n->adt = m->dtype;
        if (cfg->amp) {
                if (m->be->dev != BD_CUDA || m->dtype != BD_F32) {
                        r = bd_err_set(err, -EINVAL, "mixed precision needs the cuda backend and a float32 model");
                        free(n);
                        return r;
                }
                n->adt = BD_F16;
        }
        n->K = cfg->num_classes;
        bd_scratch_init(&n->scratch, m->be);
        /* the order of the parameters in the model's buffer */
        if ((r = mrcnn_fpn_init(m, n, err)) < 0 || (r = mrcnn_rpn_init(m, n, err)) < 0 ||
            (r = mrcnn_box_init(m, n, err)) < 0 || (cfg->masks && (r = mrcnn_mask_init(m, n, err)) < 0)) {
                mrcnn_net_free(n);
                return r;
        }
        *ret = n;
        return 0;
}

struct mrcnn_net *mrcnn_net_free(struct mrcnn_net *n)
{
        if (!n)
                return NULL;
        mrcnn_fpn_release(&n->fpn);
        mrcnn_rpn_release(&n->rpn);
        mrcnn_box_release(&n->box);
        mrcnn_mask_release(&n->mask);
        det_loss_ws_release(&n->lws);
        det_loss_acc_release(&n->lacc);
        bd_tensor_release(&n->props_dev);
        bd_scratch_release(&n->scratch);
        free(n->dbg.props);
        free(n->dbg.rois);
        free(n->dbg.roi_labels);
        free(n);
        return NULL;
}

int mrcnn_features(struct bd_model *m, struct mrcnn_net *n, const struct det_batch *b)
{
        int r;
        if ((r = mrcnn_fpn_fwd(m, n, b)) < 0 || (r = mrcnn_rpn_anchors(n, b->height, b->width)) < 0 ||
            (r = mrcnn_fpn_roi_maps(n)) < 0)
                return r;
        return mrcnn_rpn_fwd(m, n, b->n);
}

/* ---- the training step ----------------------------------------------------------------- */

static int ground_truth(const struct det_batch *b, struct mrcnn_targets *t, struct bd_err *err)
{
        for (int i = 0; i < b->n; i++)
                if (mrcnn_gt_of(&b->samples[i], &t->gt[i]) < 0)
                        return bd_err_set(err, -ENOMEM, "out of memory");
        return 0;
}

/* the loss normalisers: the counts over all ranks */
static int normalisers(const struct mrcnn_step *st, struct mrcnn_targets *t, struct bd_err *err)
{
        t->cnt[0] = (double)(t->rpn_pos + t->rpn_neg);
        t->cnt[1] = (double)t->rs.n;
        t->cnt[2] = (double)t->rs.npos;
        t->world = 1;
        if (st->dp && st->dp->size > 1) {
                int r = bd_dp_sum(st->dp, t->cnt, 3, err);
                if (r < 0)
                        return r;
                t->world = st->dp->size;
        }
        return 0;
}

static void targets_release(struct mrcnn_targets *t, int N)
{
        for (int i = 0; i < N; i++)
                mrcnn_gt_free(&t->gt[i]);
        free(t->rs.rois);
        free(t->rs.tgt);
        free(t->rs.labels);
        free(t->rs.matched);
}

int mrcnn_fwd_train(struct mrcnn_net *n, struct bd_model *m, const struct det_batch *b, const struct mrcnn_step *st,
                    struct mrcnn_losses *out, struct bd_err *err)
{
        const int N = b->n;
        int r;
        memset(out, 0, sizeof(*out));
        n->have_grads = 0;
        if (N < 1 || N > 64)
                return bd_err_set(err, -EINVAL, "%d images in a batch (1 to 64)", N);
        bd_model_begin_step(m);
        if ((r = mrcnn_features(m, n, b)) < 0)
                return BE_FAIL(n, err, r, "forward");
        /* targets: proposals, the anchors' targets (after the proposals: on
         * CUDA the proposals' copy back waits for the forward, the targets'
         * for their own kernels only; the sampler's keys make the order
         * irrelevant to the result), then the proposals with the ground
         * truth appended sampled into RoIs */
        struct mrcnn_targets t;
        memset(&t, 0, sizeof(t));
        if ((r = ground_truth(b, &t, err)) < 0)
                goto out;
        if ((r = mrcnn_proposals(n, b, 1)) < 0) {
                BE_FAIL(n, err, r, "proposals");
                goto out;
        }
        if ((r = mrcnn_rpn_targets(n, b, st, &t, err)) < 0 || (r = mrcnn_roi_sample(n, b, st, &t, err)) < 0 ||
            (r = normalisers(st, &t, err)) < 0)
                goto out;
        out->rpn_pos = t.rpn_pos;
        out->rpn_neg = t.rpn_neg;
        out->roi_pos = t.rs.npos;
        out->roi_neg = t.rs.n - t.rs.npos;
        /* the heads and their losses (read back together, once) */
        if ((r = det_loss_acc_begin(n->be, &n->lacc)) < 0) {
                BE_FAIL(n, err, r, "losses");
                goto out;
        }
        if ((r = mrcnn_rpn_loss(n, st, &t, out, err)) < 0 || (r = mrcnn_box_train(m, n, st, &t, out, err)) < 0 ||
            (n->cfg.masks && (r = mrcnn_mask_train(m, n, b, st, &t, out, err)) < 0))
                goto out;
        if ((r = det_loss_acc_read(n->be, &n->lacc)) < 0) {
                BE_FAIL(n, err, r, "losses");
                goto out;
        }
        out->total = out->objectness + out->rpn_box + out->classifier + out->box_reg + out->mask;
        n->have_grads = 1;
out:
        targets_release(&t, N);
        return r;
}

int mrcnn_bwd(struct mrcnn_net *n, struct bd_model *m, struct bd_err *err)
{
        if (!n->have_grads)
                return bd_err_set(err, -EINVAL, "mrcnn_bwd without a training forward");
        n->have_grads = 0;
        /* dP: the gradients of P2..P6; dH those the heads write (P2..P5:
         * the same tensors, or with amp float32 ones cast into dP after) */
        struct bd_tensor *dP[MRCNN_LEVELS] = { 0 }, *dH[MRCNN_ROI_LEVELS] = { 0 };
        int r;
        if ((r = mrcnn_fpn_grads(n, dP, dH)) < 0 || (n->cfg.masks && (r = mrcnn_mask_bwd(m, n, dH)) < 0) ||
            (r = mrcnn_box_bwd(m, n, dH)) < 0 || (r = mrcnn_fpn_heads_grads(n, dH, dP)) < 0 ||
            (r = mrcnn_rpn_bwd(m, n, dP)) < 0 || (r = mrcnn_fpn_bwd(m, n, dP)) < 0)
                return BE_FAIL(n, err, r, "backward");
        for (int l = 0; l < MRCNN_LEVELS; l++)
                bd_scratch_put(&n->scratch, dP[l]);
        return 0;
}

void mrcnn_debug_get(const struct mrcnn_net *n, struct mrcnn_debug *ret)
{
        memset(ret, 0, sizeof(*ret));
        memcpy(ret->nprops, n->dbg.nprops, sizeof(ret->nprops));
        ret->props = n->dbg.props;
        ret->nrois = n->dbg.nrois;
        ret->rois = n->dbg.rois;
        ret->roi_labels = n->dbg.roi_labels;
}

/* mrcnn-cfg.c: the model's configuration from benchd-maskrcnn's options
 * (apart from mrcnn-opts.c, which the option tests link without the
 * network). */
#include "config.h"

#include <errno.h>

#include "mrcnn-opts.h"

int mrcnn_opts_model(const struct mrcnn_opts *o, int num_classes, struct mrcnn_cfg *c, struct bd_err *err)
{
        if (o->small)
                mrcnn_cfg_small(c, o->mode, num_classes);
        else {
                mrcnn_cfg_defaults(c, o->mode);
                c->num_classes = num_classes;
        }
        for (int k = 0; k < MRCNN_OV_N; k++) {
                if (!o->ov_given[k])
                        continue;
                double v = o->ov[k];
                switch ((enum mrcnn_ov)k) {
                case MRCNN_OV_DEPTH: c->depth = (int)v; break;
                case MRCNN_OV_WIDTH_MULT: c->width_mult = v; break;
                case MRCNN_OV_FROZEN_BN: c->frozen_bn = (int)v; break;
                case MRCNN_OV_FREEZE_AT: c->freeze_at = (int)v; break;
                case MRCNN_OV_FPN_CHANNELS: c->fpn_channels = (int)v; break;
                case MRCNN_OV_ANCHOR_SIZE: c->anchor_size = (float)v; break;
                case MRCNN_OV_PRE_NMS_TRAIN: c->rpn_pre_nms_top_n_train = (int)v; break;
                case MRCNN_OV_POST_NMS_TRAIN: c->rpn_post_nms_top_n_train = (int)v; break;
                case MRCNN_OV_PRE_NMS_TEST: c->rpn_pre_nms_top_n_test = (int)v; break;
                case MRCNN_OV_POST_NMS_TEST: c->rpn_post_nms_top_n_test = (int)v; break;
                case MRCNN_OV_RPN_BATCH: c->rpn_batch = (int)v; break;
                case MRCNN_OV_ROI_BATCH: c->roi_batch = (int)v; break;
                case MRCNN_OV_BOX_HEAD_DIM: c->box_rep = (int)v; break;
                case MRCNN_OV_MASK_CONVS: c->mask_convs = (int)v; break;
                case MRCNN_OV_MASK_DIM: c->mask_dim = (int)v; break;
                case MRCNN_OV_DETECTIONS: c->detections = (int)v; break;
                case MRCNN_OV_MASKS: c->masks = (int)v; break;
                case MRCNN_OV_N: break;
                }
        }
        struct bd_err e;
        if (mrcnn_cfg_check(c, &e) < 0)
                return bd_err_set(err, -EINVAL, "model configuration: %s", e.msg);
        return 0;
}

/* mrcnn-opts.h: benchd-maskrcnn's command line.
 *
 * The flags are those of the rendered launch scripts (benchctl render ...
 * maskrcnn): one per key of a system's "maskrcnn" section (ims_per_batch
 * becomes --ims-per-batch), plus --data, --platform, --seed and
 * --pretrained.  The defaults are the built-in values of the "maskrcnn" row
 * of lib/workload.c, the reference's 1x schedule
 * (e2e_mask_rcnn_R_50_FPN_1x.yaml: 16 images, lr 0.02, warmup 500
 * iterations linear from 1/3, 90000 iterations, decay at 60000 and 80000,
 * targets bbox 0.377 and segm 0.339), in the MLPerf convention.
 *
 * The model: --config reference|small picks mrcnn_cfg_defaults() or
 * mrcnn_cfg_small() (mrcnn-net.h), then each size option given overrides
 * its field, whatever the order on the command line (mrcnn_opts_model()).
 * --min-size/--max-size are the loader's (reference 800/1333, small 128/128).
 */
#ifndef BD_MRCNN_OPTS_H
#define BD_MRCNN_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "err.h"
#include "topts.h"
#include "mrcnn-net.h"
#include "optim.h"

#define MRCNN_MAX_EVALS 64
#define MRCNN_MAX_DECAYS BD_MAX_MILESTONES

/* The model fields an option can override (mrcnn_opts_model). */
enum mrcnn_ov {
        MRCNN_OV_DEPTH,
        MRCNN_OV_WIDTH_MULT,
        MRCNN_OV_FROZEN_BN,
        MRCNN_OV_FREEZE_AT,
        MRCNN_OV_FPN_CHANNELS,
        MRCNN_OV_ANCHOR_SIZE,
        MRCNN_OV_PRE_NMS_TRAIN,
        MRCNN_OV_POST_NMS_TRAIN,        /* --fpn-post-nms-top-n-train */
        MRCNN_OV_PRE_NMS_TEST,
        MRCNN_OV_POST_NMS_TEST,
        MRCNN_OV_RPN_BATCH,
        MRCNN_OV_ROI_BATCH,
        MRCNN_OV_BOX_HEAD_DIM,
        MRCNN_OV_MASK_CONVS,
        MRCNN_OV_MASK_DIM,
        MRCNN_OV_DETECTIONS,
        MRCNN_OV_MASKS,                 /* --masks 0: Faster R-CNN */
        MRCNN_OV_N,
};

struct mrcnn_opts {
        int ims_per_batch;              /* global: all ranks */
        int test_ims_per_batch;         /* global */
        double lr;
        enum bd_warmup warmup_method;
        double warmup_factor;
        int64_t warmup_iters;
        double weight_decay;
        int64_t max_iter;               /* 0: from --epochs */
        int epochs;                     /* 0: --max-iter */
        int64_t decay_steps[MRCNN_MAX_DECAYS];
        int ndecay_steps;
        int decay_epochs[MRCNN_MAX_DECAYS];
        int ndecay_epochs;              /* > 0: decay at epochs instead of steps */
        double clip_gradient;           /* 0: none */
        double target_map_bbox, target_map_segm;
        enum det_conv_kind mode;
        int small;                      /* --config small */
        int min_size, max_size;         /* 0: the preset's */
        double ov[MRCNN_OV_N];          /* model overrides ... */
        unsigned char ov_given[MRCNN_OV_N];     /* ... those the command line gave */
        int64_t eval_iters[MRCNN_MAX_EVALS];
        int neval;                      /* 0: evaluate at each epoch's end */
        int64_t checkpoint_interval;    /* 0: at epoch ends only */
        struct topt_common common;      /* --data, --threads .. --version */
};

/* 0: run; 1: exit 0 (--help, --version, printed to out unless NULL);
 * -EINVAL: usage error, message in err (one line, without the program name). */
int mrcnn_opts_parse(int argc, char **argv, struct mrcnn_opts *o, FILE *out, struct bd_err *err);

/* The model's configuration: the preset of --config in the convention of
 * --mode for num_classes classes (with the background), then the options'
 * overrides.  -EINVAL (err names the option) when mrcnn_cfg_check refuses. */
int mrcnn_opts_model(const struct mrcnn_opts *o, int num_classes, struct mrcnn_cfg *c, struct bd_err *err);

/* The loader's image sizes: the options' or the preset's. */
void mrcnn_opts_sizes(const struct mrcnn_opts *o, int *min_size, int *max_size);

#endif

/* mrcnn-opts.c: benchd-maskrcnn's command line, from one table. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "mrcnn-opts.h"
#include "topts.h"

enum {
        O_IMS = TOPT_OWN, O_TEST_IMS, O_LR, O_WFACTOR, O_WITERS, O_WMETHOD, O_WD, O_MAX_ITER, O_EPOCHS,
        O_DECAY_STEPS, O_DECAY_EPOCHS, O_CLIP, O_TBBOX, O_TSEGM, O_MODE, O_CONFIG, O_MIN_SIZE,
        O_MAX_SIZE, O_EVAL_ITERS, O_CKPT_INTERVAL,
        O_OV,                           /* O_OV + enum mrcnn_ov: the model's sizes (--backbone: depth) */
};

#define OV(k) (O_OV + MRCNN_OV_##k)

static const struct topt opts[] = {
        TOPT_DATA_ROW,
        { "ims-per-batch", O_IMS, "N", "images per step over all ranks (default 16); a multiple of the ranks" },
        { "test-ims-per-batch", O_TEST_IMS, "N", "images per evaluation step over all ranks (default 8)" },
        { "lr", O_LR, "LR", "base learning rate (default 0.02); biases x2 in --mode mlperf" },
        { "warmup-factor", O_WFACTOR, "F", "linear: start at LR x F (default 1/3); mlperf_linear: F per iteration" },
        { "warmup-iters", O_WITERS, "N", "warmup iterations (default 500)" },
        { "warmup-method", O_WMETHOD, "M", "linear (default: maskrcnn-benchmark's, multiplicative) or\n"
                                           "mlperf_linear (the MLPerf reference's: LR - (N - i) F at iteration i)" },
        { "weight-decay", O_WD, "WD", "weight decay of the weights (default 1e-4; none on biases)" },
        { "max-iter", O_MAX_ITER, "N", "iterations (default 90000); excludes --epochs" },
        { "epochs", O_EPOCHS, "N", "epochs of len(train) // ims-per-batch + 1 iterations instead" },
        { "decay-steps", O_DECAY_STEPS, "S,S", "learning rate x0.1 at these iterations (default 60000,80000)" },
        { "decay-epochs", O_DECAY_EPOCHS, "E,E", "learning rate x0.1 at these epochs instead" },
        { "clip-gradient", O_CLIP, "NORM", "clip the gradients to this global norm (default 0: no clipping)" },
        { "target-map-bbox", O_TBBOX, "MAP", "bbox mAP target (default 0.377)" },
        { "target-map-segm", O_TSEGM, "MAP", "segm mAP target (default 0.339); the run stops when both are met" },
        { "mode", O_MODE, "M", "mlperf (default: the reference's rules) or torchvision" },
        { "config", O_CONFIG, "C", "model preset: reference (R50-FPN, default) or small; the options below\n"
                                   "override its fields" },
        { "backbone", OV(DEPTH), "NAME", "resnet50 (reference), resnet34 or resnet18" },
        { "width-mult", OV(WIDTH_MULT), "W", "backbone channel width multiplier" },
        { "frozen-bn", OV(FROZEN_BN), "0|1", "1: frozen batch norm (reference); 0: trained" },
        { "freeze-at", OV(FREEZE_AT), "N", "frozen backbone stages: 2 (stem and layer1, reference) or 0" },
        { "fpn-channels", OV(FPN_CHANNELS), "N", "FPN width (reference 256)" },
        { "min-size", O_MIN_SIZE, "S", "shorter image side (reference 800)" },
        { "max-size", O_MAX_SIZE, "S", "longest image side (reference 1333)" },
        { "anchor-size", OV(ANCHOR_SIZE), "S", "anchor size on P2, doubled per level (reference 32)" },
        { "rpn-pre-nms-top-n-train", OV(PRE_NMS_TRAIN), "N", "RPN candidates per level in training (2000)" },
        { "fpn-post-nms-top-n-train", OV(POST_NMS_TRAIN), "N", "RPN proposals kept in training (2000): per batch\n"
                                                                 "in --mode mlperf, per image in torchvision" },
        { "rpn-pre-nms-top-n-test", OV(PRE_NMS_TEST), "N", "RPN candidates per level at test (1000)" },
        { "rpn-post-nms-top-n-test", OV(POST_NMS_TEST), "N", "RPN proposals per image at test (1000)" },
        { "rpn-batch", OV(RPN_BATCH), "N", "anchors sampled per image (256)" },
        { "roi-batch", OV(ROI_BATCH), "N", "RoIs sampled per image (512)" },
        { "box-head-dim", OV(BOX_HEAD_DIM), "N", "box head width (1024)" },
        { "mask-convs", OV(MASK_CONVS), "N", "mask head convolutions (4)" },
        { "mask-dim", OV(MASK_DIM), "N", "mask head width (256)" },
        { "detections", OV(DETECTIONS), "N", "detections per image (100)" },
        { "masks", OV(MASKS), "0|1", "1: the mask head, loss and segm evaluation (Mask R-CNN, default);\n"
                                     "0: none, boxes only (Faster R-CNN: the bbox target alone)" },
        { "eval-iters", O_EVAL_ITERS, "I,I,...", "evaluate after these iterations (default: at each epoch's end)" },
        { "checkpoint-interval", O_CKPT_INTERVAL, "N", "with --checkpoint: also every N iterations (default 0:\n"
                                                       "at epoch ends only)" },
        TOPT_COMMON_ROWS("maskrcnn.ckpt", "random images, boxes and polygons"),
};

/* bounds of the integer overrides (the width multiplier and the anchor size
 * are numbers; the depth is --backbone's name) */
static const struct {
        double lo, hi;
        const char *what;
} ov_range[MRCNN_OV_N] = {
        [MRCNN_OV_DEPTH] = { 18, 50, NULL },
        [MRCNN_OV_WIDTH_MULT] = { 0.01, 4, "a number from 0.01 to 4" },
        [MRCNN_OV_FROZEN_BN] = { 0, 1, "0 or 1" },
        [MRCNN_OV_FREEZE_AT] = { 0, 5, "an integer from 0 to 5" },
        [MRCNN_OV_FPN_CHANNELS] = { 1, 4096, "an integer from 1 to 4096" },
        [MRCNN_OV_ANCHOR_SIZE] = { 1, 4096, "a number from 1 to 4096" },
        [MRCNN_OV_PRE_NMS_TRAIN] = { 1, 1e6, "an integer from 1 to 1000000" },
        [MRCNN_OV_POST_NMS_TRAIN] = { 1, 1e6, "an integer from 1 to 1000000" },
        [MRCNN_OV_PRE_NMS_TEST] = { 1, 1e6, "an integer from 1 to 1000000" },
        [MRCNN_OV_POST_NMS_TEST] = { 1, 1e6, "an integer from 1 to 1000000" },
        [MRCNN_OV_RPN_BATCH] = { 1, 65536, "an integer from 1 to 65536" },
        [MRCNN_OV_ROI_BATCH] = { 1, 65536, "an integer from 1 to 65536" },
        [MRCNN_OV_BOX_HEAD_DIM] = { 1, 65536, "an integer from 1 to 65536" },
        [MRCNN_OV_MASK_CONVS] = { 0, MRCNN_MAX_MASK_CONVS, "an integer from 0 to 8" },
        [MRCNN_OV_MASK_DIM] = { 1, 65536, "an integer from 1 to 65536" },
        [MRCNN_OV_DETECTIONS] = { 1, 10000, "an integer from 1 to 10000" },
        [MRCNN_OV_MASKS] = { 0, 1, "0 or 1" },
};

/* one override: integers unless the field is a number */
static const char *set_ov(struct mrcnn_opts *o, enum mrcnn_ov k, const char *arg)
{
        double v;
        if (k == MRCNN_OV_DEPTH) {
                if (strcmp(arg, "resnet50") && strcmp(arg, "resnet34") && strcmp(arg, "resnet18"))
                        return "resnet50, resnet34 or resnet18";
                o->ov[k] = atoi(arg + 6);
                return NULL;
        }
        bool number = k == MRCNN_OV_WIDTH_MULT || k == MRCNN_OV_ANCHOR_SIZE;
        if (topt_num(arg, ov_range[k].lo, ov_range[k].hi, &v) < 0 || (!number && v != floor(v)))
                return ov_range[k].what;
        o->ov[k] = v;
        return NULL;
}

/* a list of increasing whole numbers */
static int int_list(const char *arg, double lo, double hi, int64_t *ret, int max, int *ret_n)
{
        double list[MRCNN_MAX_EVALS];
        int n;
        if (max > MRCNN_MAX_EVALS || topt_num_list(arg, lo, hi, list, max, &n) < 0)
                return -EINVAL;
        for (int i = 0; i < n; i++) {
                if (list[i] != floor(list[i]))
                        return -EINVAL;
                ret[i] = (int64_t)list[i];
        }
        *ret_n = n;
        return 0;
}

static int check(struct mrcnn_opts *o, const struct topt_given *g, struct bd_err *err)
{
        bool max_iter_given = topt_given(g, O_MAX_ITER), epochs_given = topt_given(g, O_EPOCHS);
        bool steps_given = topt_given(g, O_DECAY_STEPS), epochs_decay_given = topt_given(g, O_DECAY_EPOCHS);
        if (max_iter_given && epochs_given)
                return bd_err_set(err, -EINVAL, "--max-iter and --epochs exclude each other");
        if (steps_given && epochs_decay_given)
                return bd_err_set(err, -EINVAL, "--decay-steps and --decay-epochs exclude each other");
        if (epochs_given)
                o->max_iter = 0;
        if (epochs_decay_given)
                o->ndecay_steps = 0;
        for (int i = 0; i < o->ndecay_epochs; i++)
                if (o->epochs && o->decay_epochs[i] > o->epochs)
                        return bd_err_set(err, -EINVAL, "--decay-epochs: epoch %d is beyond --epochs %d",
                                          o->decay_epochs[i], o->epochs);
        if (o->ndecay_epochs && !o->epochs)
                return bd_err_set(err, -EINVAL, "--decay-epochs needs --epochs (or give --decay-steps)");
        for (int i = 0; i < o->neval; i++)
                if (o->max_iter && o->eval_iters[i] > o->max_iter)
                        return bd_err_set(err, -EINVAL, "--eval-iters: iteration %lld is beyond --max-iter %lld",
                                          (long long)o->eval_iters[i], (long long)o->max_iter);
        /* the absolute warmup must not start below zero (equal: the MLPerf
         * configs' rule, up to rounding) */
        if (o->warmup_method == BD_WARMUP_MLPERF &&
            (double)o->warmup_iters * o->warmup_factor > o->lr * (1 + 1e-9))
                return bd_err_set(err, -EINVAL,
                                  "--warmup-method mlperf_linear: --warmup-iters x --warmup-factor (%g) exceeds --lr "
                                  "(%g): the learning rate would start negative",
                                  (double)o->warmup_iters * o->warmup_factor, o->lr);
        if (o->warmup_method == BD_WARMUP_LINEAR && o->warmup_factor > 1)
                return bd_err_set(err, -EINVAL, "--warmup-factor: a linear warmup starts at a fraction of --lr (0 to 1), "
                                  "got %g", o->warmup_factor);
        if (o->min_size && o->max_size && o->min_size > o->max_size)
                return bd_err_set(err, -EINVAL, "--min-size %d is larger than --max-size %d", o->min_size, o->max_size);
        /* frozen batch norm has no batch statistics (the reference preset's
         * is frozen, the small one's trained: mrcnn_cfg_small) */
        bool frozen_given = topt_given(g, OV(FROZEN_BN));
        if (o->common.sync_bn && (frozen_given ? o->ov[MRCNN_OV_FROZEN_BN] != 0 : !o->small))
                return bd_err_set(err, -EINVAL, "--sync-bn 1: batch norm is frozen (%s): it has no batch statistics to "
                                  "synchronise", frozen_given ? "--frozen-bn 1" : "--config reference; --frozen-bn 0 trains it");
        if (o->common.plan)
                return bd_err_set(err, -EINVAL, "--backend plan: Mask R-CNN's detection steps (proposals, targets) "
                                  "run on cpu or cuda only");
        return topt_check(&o->common, err);
}

/* One of benchd-maskrcnn's own options (topts.h). */
static const char *set(void *ctx, int id, const char *arg)
{
        struct mrcnn_opts *o = ctx;
        int64_t list[MRCNN_MAX_DECAYS];
        long v;
        int n;
        if (id >= O_OV && id < O_OV + MRCNN_OV_N)
                return set_ov(o, (enum mrcnn_ov)(id - O_OV), arg);
        switch (id) {
        case O_IMS: if (topt_int(arg, 1, 65536, &v) < 0) return "an integer from 1 to 65536"; o->ims_per_batch = (int)v; break;
        case O_TEST_IMS: if (topt_int(arg, 1, 65536, &v) < 0) return "an integer from 1 to 65536"; o->test_ims_per_batch = (int)v; break;
        case O_LR: if (topt_num(arg, 1e-12, 100, &o->lr) < 0) return "a number in (0, 100]"; break;
        case O_WFACTOR: if (topt_num(arg, 0, 1, &o->warmup_factor) < 0) return "a number from 0 to 1"; break;
        case O_WITERS: if (topt_int(arg, 0, 1000000000L, &v) < 0) return "an integer from 0 to 1000000000"; o->warmup_iters = v; break;
        case O_WMETHOD:
                if (!strcmp(arg, "linear"))
                        o->warmup_method = BD_WARMUP_LINEAR;
                else if (!strcmp(arg, "mlperf_linear"))
                        o->warmup_method = BD_WARMUP_MLPERF;
                else
                        return "linear or mlperf_linear";
                break;
        case O_WD: if (topt_num(arg, 0, 1, &o->weight_decay) < 0) return "a number from 0 to 1"; break;
        case O_MAX_ITER: if (topt_int(arg, 1, 1000000000L, &v) < 0) return "an integer from 1 to 1000000000"; o->max_iter = v; break;
        case O_EPOCHS: if (topt_int(arg, 1, 10000, &v) < 0) return "an integer from 1 to 10000"; o->epochs = (int)v; break;
        case O_DECAY_STEPS:
                if (int_list(arg, 1, 1e9, o->decay_steps, MRCNN_MAX_DECAYS, &o->ndecay_steps) < 0)
                        return "increasing iterations separated by commas (at most 8)";
                break;
        case O_DECAY_EPOCHS:
                if (int_list(arg, 1, 10000, list, MRCNN_MAX_DECAYS, &n) < 0)
                        return "increasing epochs separated by commas (at most 8)";
                for (int i = 0; i < n; i++)
                        o->decay_epochs[i] = (int)list[i];
                o->ndecay_epochs = n;
                break;
        case O_CLIP: if (topt_num(arg, 0, 1e9, &o->clip_gradient) < 0) return "a number >= 0"; break;
        case O_TBBOX: if (topt_num(arg, 0, 1, &o->target_map_bbox) < 0) return "a number from 0 to 1"; break;
        case O_TSEGM: if (topt_num(arg, 0, 1, &o->target_map_segm) < 0) return "a number from 0 to 1"; break;
        case O_MODE:
                if (!strcmp(arg, "mlperf"))
                        o->mode = DET_CONV_MLPERF;
                else if (!strcmp(arg, "torchvision"))
                        o->mode = DET_CONV_TORCHVISION;
                else
                        return "mlperf or torchvision";
                break;
        case O_CONFIG:
                if (strcmp(arg, "reference") && strcmp(arg, "small"))
                        return "reference or small";
                o->small = !strcmp(arg, "small");
                break;
        case O_MIN_SIZE: if (topt_int(arg, 16, 4096, &v) < 0) return "an integer from 16 to 4096"; o->min_size = (int)v; break;
        case O_MAX_SIZE: if (topt_int(arg, 16, 8192, &v) < 0) return "an integer from 16 to 8192"; o->max_size = (int)v; break;
        case O_EVAL_ITERS:
                if (int_list(arg, 1, 1e9, o->eval_iters, MRCNN_MAX_EVALS, &o->neval) < 0)
                        return "increasing iterations separated by commas (at most 64)";
                break;
        case O_CKPT_INTERVAL: if (topt_int(arg, 0, 1000000000L, &v) < 0) return "an integer >= 0"; o->checkpoint_interval = v; break;
        }
        return NULL;
}

static const struct topt_prog prog = {
        .workload = "maskrcnn",
        .intro = "usage: benchd-maskrcnn --data DIR [OPTIONS]\n\n"
                 "Train Mask R-CNN (ResNet-50 FPN) on COCO, data-parallel over the MPI ranks,\n"
                 "evaluating bbox and segm mAP at each epoch's end (or --eval-iters) until both\n"
                 "targets are met; MLPerf log lines from rank 0.\n\n",
        .opts = opts,
        .nopts = ARRAY_SIZE(opts),
        .set = set,
};

int mrcnn_opts_parse(int argc, char **argv, struct mrcnn_opts *o, FILE *out, struct bd_err *err)
{
        /* the rest from the workload's built-in values (workloads/maskrcnn.json);
         * its fpn_post_nms_top_n_train lands in ov[] but overrides nothing:
         * the preset's value stands unless the command line gives one */
        *o = (struct mrcnn_opts){ .mode = DET_CONV_MLPERF };
        struct topt_given given;
        int r = topt_parse(&prog, argc, argv, o, &o->common, &given, out, err);
        if (r != 0)
                return r;
        for (int k = 0; k < MRCNN_OV_N; k++)
                o->ov_given[k] = topt_given(&given, O_OV + k);
        return check(o, &given, err);
}

void mrcnn_opts_sizes(const struct mrcnn_opts *o, int *min_size, int *max_size)
{
        *min_size = o->min_size ? o->min_size : o->small ? 128 : 800;
        *max_size = o->max_size ? o->max_size : o->small ? 128 : 1333;
        if (*max_size < *min_size)
                *max_size = *min_size;
}

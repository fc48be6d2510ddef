/* workload.c: the workload table. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "json.h"
#include "macro.h"
#include "schema.h"
#include "strutil.h"
#include "system.h"
#include "workload.h"

#define ANY 1, 0          /* unbounded */
#define RANGE(a, b) a, b

static const char *const backbones[] = { "resnet18", "resnet34", NULL };
static const char *const mrcnn_backbones[] = { "resnet18", "resnet34", "resnet50", NULL };
static const char *const warmup_methods[] = { "linear", "mlperf_linear", NULL };
static const char *const mrcnn_modes[] = { "mlperf", "torchvision", NULL };
static const char *const mrcnn_configs[] = { "reference", "small", NULL };

/* Keys every workload's section has. */
#define COMMON_KEYS(backend_help)                                                                       \
        { "backend", S_STRING, NULL, ANY, schema_backends, W_ANY, backend_help },                      \
        { "extra_args", S_STRING_LIST, NULL, ANY, NULL, W_ANY, "more arguments for its program" },      \
        { "published", S_OBJECT, schema_published_keys, ANY, NULL, W_ANY, "published result on this system" }

/* And those of a trainer's. */
#define TRAIN_KEYS                                                                                      \
        COMMON_KEYS("cpu or cuda"),                                                                     \
        { "precision", S_STRING, NULL, ANY, schema_precisions, W_ANY, "fp32 or amp" },                 \
        { "seed", S_INT, NULL, RANGE(0, 4294967295.0), NULL, W_ANY, "base seed (trial t uses seed+t)" }, \
        { "threads", S_INT, NULL, RANGE(1, 1024), NULL, W_ANY, "CPU threads per rank" },                \
        { "loader_workers", S_INT, NULL, RANGE(0, 256), NULL, W_ANY, "data loader threads per rank" },  \
        { "max_steps", S_INT, NULL, RANGE(0, 1e12), NULL, W_ANY, "stop after this many steps (0: off)" }, \
        { "benchmark_steps", S_INT, NULL, RANGE(0, 1e9), NULL, W_ANY,                                   \
          "throughput run: time this many steps, no evaluation; the result goes to LOGS/RUN_TRIAL.json (0: off)" }, \
        { "warmup_steps", S_INT, NULL, RANGE(0, 1e9), NULL, W_ANY, "throughput run: untimed steps before them" }

static const struct schema_key ssd_keys[] = {
        { "batch_size", S_INT, NULL, RANGE(1, 65536), NULL, W_ANY, "images per rank per step" },
        { "lr", S_NUMBER, NULL, RANGE(0, 100), NULL, W_ANY, "learning rate as in the MLPerf configs" },
        { "warmup_epochs", S_NUMBER, NULL, RANGE(0, 1000), NULL, W_ANY, "linear warmup epochs" },
        { "weight_decay", S_NUMBER, NULL, RANGE(0, 1), NULL, W_ANY, "weight decay" },
        { "epochs", S_INT, NULL, RANGE(1, 10000), NULL, W_ANY, "maximum epochs" },
        { "decay_epochs", S_NUMBER_LIST, NULL, RANGE(0, 10000), NULL, W_ANY, "lr x0.1 at these epochs" },
        { "eval_epochs", S_INT_LIST, NULL, RANGE(1, 10000), NULL, W_ANY, "evaluate at these epochs" },
        { "target_map", S_NUMBER, NULL, RANGE(0, 1), NULL, W_ANY, "stop when bbox mAP reaches this" },
        { "image_size", S_INT, NULL, RANGE(32, 2048), NULL, W_ANY, "input size (300 in MLPerf)" },
        { "backbone", S_STRING, NULL, ANY, backbones, W_ANY, "resnet34 (MLPerf) or resnet18" },
        { "width_mult", S_NUMBER, NULL, RANGE(0.01, 4), NULL, W_ANY, "channel width multiplier" },
        { "pretrained", S_STRING, NULL, ANY, NULL, W_ANY, "backbone weights file in paths.pretrained" },
        TRAIN_KEYS,
        { 0 }
};

static const struct schema_key maskrcnn_keys[] = {
        { "ims_per_batch", S_INT, NULL, RANGE(1, 65536), NULL, W_ANY, "images per step, all ranks" },
        { "test_ims_per_batch", S_INT, NULL, RANGE(1, 65536), NULL, W_ANY, "images per evaluation step, all ranks" },
        { "lr", S_NUMBER, NULL, RANGE(0, 100), NULL, W_ANY, "base learning rate" },
        { "max_iter", S_INT, NULL, RANGE(1, 1e9), NULL, W_ANY, "iterations" },
        { "epochs", S_INT, NULL, RANGE(1, 10000), NULL, W_ANY, "epochs (instead of max_iter)" },
        { "warmup_factor", S_NUMBER, NULL, RANGE(0, 1), NULL, W_ANY, "warmup starts at lr x this" },
        { "warmup_iters", S_INT, NULL, RANGE(0, 1e9), NULL, W_ANY, "linear warmup iterations" },
        { "warmup_method", S_STRING, NULL, ANY, warmup_methods, W_ANY,
          "linear (from lr x warmup_factor) or mlperf_linear (warmup_factor is an lr per iteration)" },
        { "decay_steps", S_INT_LIST, NULL, RANGE(1, 1e9), NULL, W_ANY, "lr x0.1 at these iterations" },
        { "decay_epochs", S_INT_LIST, NULL, RANGE(1, 10000), NULL, W_ANY, "lr x0.1 at these epochs" },
        { "weight_decay", S_NUMBER, NULL, RANGE(0, 1), NULL, W_ANY, "weight decay" },
        { "clip_gradient", S_NUMBER, NULL, RANGE(0, 1e9), NULL, W_ANY, "clip gradients to this global norm" },
        { "fpn_post_nms_top_n_train", S_INT, NULL, RANGE(1, 1e6), NULL, W_ANY, "RPN proposals kept per batch" },
        { "target_map_bbox", S_NUMBER, NULL, RANGE(0, 1), NULL, W_ANY, "bbox mAP target" },
        { "target_map_segm", S_NUMBER, NULL, RANGE(0, 1), NULL, W_ANY, "segm mAP target" },
        { "eval_iters", S_INT_LIST, NULL, RANGE(1, 1e9), NULL, W_ANY, "evaluate at these iterations (else every epoch)" },
        { "checkpoint_interval", S_INT, NULL, RANGE(0, 1e9), NULL, W_ANY,
          "checkpoint every this many iterations too (0: at epoch ends only)" },
        { "pretrained", S_STRING, NULL, ANY, NULL, W_ANY, "backbone weights file in paths.pretrained" },
        { "mode", S_STRING, NULL, ANY, mrcnn_modes, W_ANY, "mlperf (the reference's rules) or torchvision" },
        /* the model's sizes: a preset, then field by field (the small configuration) */
        { "config", S_STRING, NULL, ANY, mrcnn_configs, W_ANY, "model preset: reference (R50-FPN) or small" },
        { "backbone", S_STRING, NULL, ANY, mrcnn_backbones, W_ANY, "resnet50 (reference), resnet34 or resnet18" },
        { "width_mult", S_NUMBER, NULL, RANGE(0.01, 4), NULL, W_ANY, "backbone channel width multiplier" },
        { "frozen_bn", S_BOOL, NULL, ANY, NULL, W_ANY, "frozen batch norm (reference) or trained" },
        { "freeze_at", S_INT, NULL, RANGE(0, 5), NULL, W_ANY, "backbone stages frozen: 2 (stem, layer1) or 0" },
        { "fpn_channels", S_INT, NULL, RANGE(1, 4096), NULL, W_ANY, "FPN width (256)" },
        { "min_size", S_INT, NULL, RANGE(16, 4096), NULL, W_ANY, "shorter image side (800)" },
        { "max_size", S_INT, NULL, RANGE(16, 8192), NULL, W_ANY, "longest image side (1333)" },
        { "anchor_size", S_NUMBER, NULL, RANGE(1, 4096), NULL, W_ANY, "anchor size on P2 (32)" },
        { "rpn_pre_nms_top_n_train", S_INT, NULL, RANGE(1, 1e6), NULL, W_ANY, "RPN candidates per level (2000)" },
        { "rpn_pre_nms_top_n_test", S_INT, NULL, RANGE(1, 1e6), NULL, W_ANY, "RPN candidates per level at test (1000)" },
        { "rpn_post_nms_top_n_test", S_INT, NULL, RANGE(1, 1e6), NULL, W_ANY, "RPN proposals per image at test (1000)" },
        { "rpn_batch", S_INT, NULL, RANGE(1, 65536), NULL, W_ANY, "anchors sampled per image (256)" },
        { "roi_batch", S_INT, NULL, RANGE(1, 65536), NULL, W_ANY, "RoIs sampled per image (512)" },
        { "box_head_dim", S_INT, NULL, RANGE(1, 65536), NULL, W_ANY, "box head width (1024)" },
        { "mask_convs", S_INT, NULL, RANGE(0, 8), NULL, W_ANY, "mask head convolutions (4)" },
        { "mask_dim", S_INT, NULL, RANGE(1, 65536), NULL, W_ANY, "mask head width (256)" },
        { "detections", S_INT, NULL, RANGE(1, 10000), NULL, W_ANY, "detections per image (100)" },
        TRAIN_KEYS,
        { 0 }
};

static const struct schema_key allreduce_keys[] = {
        { "min_bytes", S_INT, NULL, RANGE(4, 1e12), NULL, W_ANY, "smallest buffer" },
        { "max_bytes", S_INT, NULL, RANGE(4, 1e12), NULL, W_ANY, "largest buffer" },
        { "iters", S_INT, NULL, RANGE(1, 1e6), NULL, W_ANY, "timed iterations per size" },
        { "warmup", S_INT, NULL, RANGE(0, 1e6), NULL, W_ANY, "untimed iterations per size" },
        COMMON_KEYS("cpu (MPI) or cuda (NCCL)"),
        { 0 }
};

/* An evaluation after the last epoch would never run (the run would end
 * aborted).  Keys a null removed are the trainer's to choose. */
static int ssd_check(const cJSON *sec, const char *label, struct bd_err *err)
{
        const cJSON *ep = json_get(sec, "epochs");
        if (!cJSON_IsNumber(ep))
                return 0;
        long epochs = (long)ep->valuedouble;
        const cJSON *e;
        cJSON_ArrayForEach(e, json_get(sec, "eval_epochs"))
                if (e->valuedouble > (double)epochs)
                        return bd_err_set(err, -EINVAL, "%s: 'ssd.eval_epochs': epoch %g is beyond 'ssd.epochs' (%ld)",
                                          label, e->valuedouble, epochs);
        return 0;
}

/* The absolute warmup must not start below zero; evaluations after the
 * last iteration would never run. */
static int maskrcnn_check(const cJSON *sec, const char *label, struct bd_err *err)
{
        const cJSON *m = json_get(sec, "warmup_method"), *lr = json_get(sec, "lr");
        const cJSON *f = json_get(sec, "warmup_factor"), *wi = json_get(sec, "warmup_iters");
        if (cJSON_IsString(m) && streq(m->valuestring, "mlperf_linear") && cJSON_IsNumber(lr) && cJSON_IsNumber(f) &&
            cJSON_IsNumber(wi) && wi->valuedouble * f->valuedouble > lr->valuedouble * (1 + 1e-9))
                return bd_err_set(err, -EINVAL,
                                  "%s: 'maskrcnn.warmup_method' mlperf_linear: 'maskrcnn.warmup_iters' x "
                                  "'maskrcnn.warmup_factor' (%g) exceeds 'maskrcnn.lr' (%g): the learning rate would "
                                  "start negative", label, wi->valuedouble * f->valuedouble, lr->valuedouble);
        const cJSON *mi = json_get(sec, "max_iter"), *e;
        if (cJSON_IsNumber(mi))
                cJSON_ArrayForEach(e, json_get(sec, "eval_iters"))
                        if (e->valuedouble > mi->valuedouble)
                                return bd_err_set(err, -EINVAL,
                                                  "%s: 'maskrcnn.eval_iters': iteration %g is beyond 'maskrcnn.max_iter' "
                                                  "(%g)", label, e->valuedouble, mi->valuedouble);
        return 0;
}

static int allreduce_check(const cJSON *sec, const char *label, struct bd_err *err)
{
        if (json_int(sec, "min_bytes", 0) > json_int(sec, "max_bytes", LONG_MAX))
                return bd_err_set(err, -EINVAL, "%s: 'allreduce.min_bytes' is larger than 'allreduce.max_bytes'", label);
        return 0;
}

#ifdef BUILD_SSD
#define SSD_BUILT true
#else
#define SSD_BUILT false
#endif
#ifdef BUILD_MASKRCNN
#define MASKRCNN_BUILT true
#else
#define MASKRCNN_BUILT false
#endif
#ifdef BUILD_ALLREDUCE
#define ALLREDUCE_BUILT true
#else
#define ALLREDUCE_BUILT false
#endif

const struct workload workloads[] = {
        {
                .name = "ssd",
                .title = "SSD (ResNet-34)",
                .mlperf_name = "ssd",
                .result_name = "SINGLE_STAGE_DETECTOR",
                .program = "benchd-ssd",
                .result = RESULT_TIME_TO_TRAIN,
                .target_key = "target_map",
                .dataset = true,
                .built = SSD_BUILT,
                .keys = ssd_keys,
                .defaults = "{ \"batch_size\": 32, \"lr\": 2.5e-3, \"warmup_epochs\": 5, \"weight_decay\": 5e-4,"
                            "  \"epochs\": 80, \"decay_epochs\": [44, 55],"
                            "  \"eval_epochs\": [40, 50, 55, 60, 65, 70, 75, 80], \"target_map\": 0.23,"
                            "  \"image_size\": 300, \"backbone\": \"resnet34\" }",
                .help = "SSD hyperparameters",
                .check = ssd_check,
        },
        {
                .name = "maskrcnn",
                .title = "Mask R-CNN (ResNet-50 FPN)",
                .mlperf_name = "maskrcnn",
                .result_name = "OBJECT_DETECTION",
                .program = "benchd-maskrcnn",
                .result = RESULT_TIME_TO_TRAIN,
                .target_key = "target_map_bbox",
                .target_segm_key = "target_map_segm",
                .dataset = true,
                .built = MASKRCNN_BUILT,
                .keys = maskrcnn_keys,
                .defaults = "{ \"ims_per_batch\": 16, \"test_ims_per_batch\": 8, \"lr\": 0.02,"
                            "  \"max_iter\": 90000, \"warmup_factor\": 0.3333333333333333, \"warmup_iters\": 500,"
                            "  \"warmup_method\": \"linear\","
                            "  \"decay_steps\": [60000, 80000], \"weight_decay\": 1e-4,"
                            "  \"fpn_post_nms_top_n_train\": 2000, \"target_map_bbox\": 0.377,"
                            "  \"target_map_segm\": 0.339 }",
                .help = "Mask R-CNN hyperparameters",
                .check = maskrcnn_check,
        },
        {
                .name = "allreduce",
                .title = "allreduce bandwidth check",
                .mlperf_name = "allreduce",
                .result_name = "ALLREDUCE",
                .program = "benchd-allreduce",
                .result = RESULT_BUS_BANDWIDTH,
                .target_key = NULL,
                .dataset = false,
                .built = ALLREDUCE_BUILT,
                .keys = allreduce_keys,
                .defaults = "{ \"min_bytes\": 8, \"max_bytes\": 268435456, \"iters\": 20, \"warmup\": 5 }",
                .help = "allreduce benchmark settings",
                .check = allreduce_check,
        },
        { 0 }
};
_Static_assert(ARRAY_SIZE(workloads) <= WORKLOAD_MAX + 1, "more workloads than WORKLOAD_MAX");

const struct workload *workload_find(const char *name)
{
        for (const struct workload *w = workloads; w->name; w++)
                if (streq(w->name, name))
                        return w;
        return NULL;
}

const struct workload *workload_lookup(const char *name, struct bd_err *err)
{
        const struct workload *w = workload_find(name);
        if (!w) {
                _cleanup_buf_ struct bd_buf list = BD_BUF_INIT;
                workload_names(&list, ", ");
                bd_err_set(err, -ENOENT, "unknown workload '%s'; known workloads: %s", name, list.s);
        }
        return w;
}

void workload_names(struct bd_buf *out, const char *last)
{
        for (const struct workload *w = workloads; w->name; w++)
                buf_printf(out, "%s%s", w == workloads ? "" : w[1].name ? ", " : last, w->name);
}

bool workload_has_key(const struct workload *w, const char *key)
{
        for (const struct schema_key *k = w->keys; k->name; k++)
                if (streq(k->name, key))
                        return true;
        return false;
}

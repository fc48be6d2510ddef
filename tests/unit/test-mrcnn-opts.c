/* test-mrcnn-opts.c: benchd-maskrcnn's command line: the reference's
 * defaults, the launch lines benchctl renders for the bundled systems,
 * presets and overrides, and one-line errors naming the option. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "mrcnn-opts.h"
#include "tap.h"

static int parse(struct mrcnn_opts *o, struct bd_err *err, ...)
{
        char *argv[64] = { "benchd-maskrcnn" };
        int argc = 1;
        va_list ap;
        va_start(ap, err);
        for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 63;)
                argv[argc++] = a;
        va_end(ap);
        err->msg[0] = '\0';
        return mrcnn_opts_parse(argc, argv, o, NULL, err);
}

#define P(...) parse(&o, &err, __VA_ARGS__, (char *)NULL)

int main(void)
{
        struct mrcnn_opts o;
        struct bd_err err;
        int mn, mx;

        ok(P("--data", "/d") == 0, "--data alone parses");
        ok(o.ims_per_batch == 16 && o.test_ims_per_batch == 8 && o.lr == 0.02 && o.warmup_iters == 500 &&
           fabs(o.warmup_factor - 1.0 / 3) < 1e-15 && o.warmup_method == BD_WARMUP_LINEAR,
           "defaults: the 1x yaml (16 images, lr 0.02, warmup 500 from 1/3, linear)");
        ok(o.max_iter == 90000 && o.ndecay_steps == 2 && o.decay_steps[0] == 60000 && o.decay_steps[1] == 80000,
           "  90000 iterations, decay at 60000 and 80000");
        ok(o.target_map_bbox == 0.377 && o.target_map_segm == 0.339 && o.mode == DET_CONV_MLPERF && !o.small,
           "  targets 0.377 / 0.339, mlperf mode, the reference model");
        mrcnn_opts_sizes(&o, &mn, &mx);
        ok(mn == 800 && mx == 1333, "  images 800 / 1333");

        /* benchctl render --system DSS8440 maskrcnn */
        ok(P("--data", "/data", "--ims-per-batch", "64", "--test-ims-per-batch", "8", "--lr", "0.08", "--max-iter",
             "40000", "--warmup-factor", "0.0001", "--warmup-iters", "800", "--warmup-method", "mlperf_linear",
             "--decay-steps", "18000,24000", "--weight-decay", "0.0001", "--fpn-post-nms-top-n-train", "8000",
             "--target-map-bbox", "0.377", "--target-map-segm", "0.339", "--backend", "cuda", "--precision", "amp",
             "--pretrained", "/pretrained/resnet50.bdw", "--platform", "DSS8440", "--seed", "7") == 0,
           "DSS8440's launch line parses");
        ok(o.warmup_method == BD_WARMUP_MLPERF && o.warmup_iters == 800 && o.decay_steps[1] == 24000 && o.common.cuda &&
           o.common.amp && o.common.seed == 7 && o.ov_given[MRCNN_OV_POST_NMS_TRAIN] && o.ov[MRCNN_OV_POST_NMS_TRAIN] == 8000,
           "  mlperf_linear, decay, amp on cuda, seed, 8000 proposals");
        /* p3dn: epochs, decay epochs, clipping */
        ok(P("--data", "/d", "--ims-per-batch", "16", "--warmup-factor", "0.03", "--warmup-iters", "1000",
             "--warmup-method", "linear", "--epochs", "12", "--decay-epochs", "8,10", "--clip-gradient", "1.5") == 0,
           "p3dn's launch line parses");
        ok(o.epochs == 12 && o.max_iter == 0 && o.ndecay_epochs == 2 && o.decay_epochs[1] == 10 &&
           o.ndecay_steps == 0 && o.clip_gradient == 1.5, "  epochs replace iterations, decay epochs the steps");
        /* local: the small configuration */
        ok(P("--data", "/d", "--config", "small", "--backbone", "resnet18", "--frozen-bn", "0", "--fpn-channels", "64",
             "--min-size", "128", "--max-size", "128", "--eval-iters", "501,1002,1500", "--max-iter", "1500",
             "--threads", "1", "--loader-workers", "1", "--mode", "torchvision", "--anchor-size", "16",
             "--rpn-pre-nms-top-n-train", "300", "--rpn-pre-nms-top-n-test", "150", "--rpn-post-nms-top-n-test", "100",
             "--rpn-batch", "128", "--roi-batch", "64", "--box-head-dim", "256", "--mask-convs", "2", "--mask-dim", "64",
             "--detections", "20", "--freeze-at", "0", "--width-mult", "0.5", "--checkpoint-interval", "100") == 0,
           "the small configuration's options parse");
        ok(o.small && o.mode == DET_CONV_TORCHVISION && o.ov[MRCNN_OV_DEPTH] == 18 && o.ov_given[MRCNN_OV_FROZEN_BN] &&
           o.ov[MRCNN_OV_FROZEN_BN] == 0 && o.ov[MRCNN_OV_FPN_CHANNELS] == 64 && o.ov[MRCNN_OV_ANCHOR_SIZE] == 16 &&
           o.ov[MRCNN_OV_PRE_NMS_TRAIN] == 300 && o.ov[MRCNN_OV_PRE_NMS_TEST] == 150 &&
           o.ov[MRCNN_OV_POST_NMS_TEST] == 100 && o.ov[MRCNN_OV_RPN_BATCH] == 128 && o.ov[MRCNN_OV_ROI_BATCH] == 64 &&
           o.ov[MRCNN_OV_BOX_HEAD_DIM] == 256 && o.ov[MRCNN_OV_MASK_CONVS] == 2 && o.ov[MRCNN_OV_MASK_DIM] == 64 &&
           o.ov[MRCNN_OV_DETECTIONS] == 20 && o.ov[MRCNN_OV_FREEZE_AT] == 0 && o.ov[MRCNN_OV_WIDTH_MULT] == 0.5,
           "  each lands in its override");
        ok(o.neval == 3 && o.eval_iters[2] == 1500 && o.checkpoint_interval == 100 && o.common.threads == 1,
           "  evaluation iterations, checkpoint interval, threads");
        mrcnn_opts_sizes(&o, &mn, &mx);
        ok(mn == 128 && mx == 128, "  images 128 / 128");
        ok(P("--config", "small", "--synthetic") == 0 && (mrcnn_opts_sizes(&o, &mn, &mx), mn == 128 && mx == 128),
           "the small preset's image size without --min-size");

        /* errors: one line naming the option */
        static const struct {
                const char *args[6];
                const char *msg;
        } bad[] = {
                { { "--data", "/d", "--warmup-method", "mlperf_linear" },
                  "--warmup-method mlperf_linear: --warmup-iters x --warmup-factor (166.667) exceeds --lr (0.02)" },
                { { "--data", "/d", "--warmup-method", "cosine" }, "--warmup-method: expected linear or mlperf_linear" },
                { { "--data", "/d", "--mode", "detectron" }, "--mode: expected mlperf or torchvision, got 'detectron'" },
                { { "--data", "/d", "--backbone", "resnet101" }, "--backbone: expected resnet50, resnet34 or resnet18" },
                { { "--data", "/d", "--max-iter", "10", "--epochs", "2" }, "--max-iter and --epochs exclude each other" },
                { { "--data", "/d", "--decay-steps", "5", "--decay-epochs", "1" },
                  "--decay-steps and --decay-epochs exclude each other" },
                { { "--data", "/d", "--eval-iters", "100000" }, "--eval-iters: iteration 100000 is beyond --max-iter 90000" },
                { { "--data", "/d", "--decay-steps", "9,5" }, "--decay-steps: expected increasing iterations" },
                { { "--data", "/d", "--mask-convs", "9" }, "--mask-convs: expected an integer from 0 to 8, got '9'" },
                { { "--data", "/d", "--fpn-channels", "6.5" }, "--fpn-channels: expected an integer from 1 to 4096" },
                { { "--data", "/d", "--frozen-bn", "yes" }, "--frozen-bn: expected 0 or 1, got 'yes'" },
                { { "--data", "/d", "--min-size", "900", "--max-size", "800" }, "--min-size 900 is larger than --max-size 800" },
                { { "--data", "/d", "--precision", "amp" }, "--precision amp needs --backend cuda" },
                { { "--lr", "0.1" }, "--data DIR is required (or --synthetic)" },
                { { "--data", "/d", "--no-such" }, "unknown option '--no-such' (see --help)" },
                { { "--data" }, "option '--data' needs an argument" },
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                const char *const *a = bad[i].args;
                int r = parse(&o, &err, a[0], a[1], a[2], a[3], a[4], a[5], (char *)NULL);
                char what[160];
                snprintf(what, sizeof(what), "refused: %s", bad[i].msg);
                ok(r == -EINVAL && strstr(err.msg, bad[i].msg) && !strchr(err.msg, '\n'), what);
                if (r != -EINVAL || !strstr(err.msg, bad[i].msg))
                        printf("#   got %d '%s'\n", r, err.msg);
        }
        ok(P("--data", "/d", "--lr", "0.08", "--warmup-method", "mlperf_linear", "--warmup-factor", "0.0001",
             "--warmup-iters", "800") == 0, "mlperf_linear with iters x factor == lr (rounding aside) is accepted");
        ok(P("--help") == 1 && P("--version") == 1, "--help and --version: exit 0");
        return done_testing();
}

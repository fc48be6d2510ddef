/* maskrcnn-step.c: time a Mask R-CNN training step of trainer/maskrcnn/
 * (mrcnn_fwd_train, mrcnn_bwd, bd_sgd_step) on a hand-made batch.
 *
 *   maskrcnn-step [--config reference|small] [--mode mlperf|torchvision]
 *                 [--threads T] [--iters K] [--warmup W] [--objects N]
 *                 [--backend cpu|cuda] [--precision fp32|amp] [--masks 0|1]
 *
 * --masks 0: Faster R-CNN, the same model without the mask head (four
 * losses); maskrcnn-step.py --no-masks is torchvision's FasterRCNN.
 *
 *   reference  mrcnn_cfg_defaults: R50-FPN, frozen batch norm, stem and
 *              layer1 frozen, 81 classes, RPN 2000/2000, 256 anchors, 512
 *              RoIs per image; 2 images of 800 x 1333 padded to 800 x 1344
 *   small      mrcnn_cfg_small (maskrcnn.md section 7), 4 classes; 4 images
 *              of 128 x 128
 *
 * The objects (N per image, default 5: a box, the 16-vertex polygon
 * inscribed in it, a label) come from the LCG bench/maskrcnn-step.py draws
 * the same ones from; the pixels are random values of a normalised image,
 * zero in the padding.  SGD: lr 0.001, momentum 0.9, weight decay 1e-4.
 * Prints "step MS images/s X loss L cpu-ms C main-ms M" (medians of K timed
 * steps after W untimed ones; C: CPU time of all threads, M: of the thread
 * that drives the step, the rest being OpenMP's and the libraries' threads)
 * and "losses ..." of the
 * last step.  bench/maskrcnn-step.sh runs it next to maskrcnn-step.py.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "det-bench.h"
#include "mrcnn-net.h"
#include "optim.h"

#define POLY_VERTICES 16

static double now(clockid_t c)
{
        struct timespec t;
        clock_gettime(c, &t);
        return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* the LCG of maskrcnn-step.py */
static uint64_t lcg = 2022;

static double lcg_u(void)
{
        lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
        return (double)(lcg >> 11) / 9007199254740992.0;
}

static void die(const char *what, const struct bd_err *err)
{
        fprintf(stderr, "maskrcnn-step: %s: %s\n", what, err->msg);
        exit(1);
}

/* One image's objects: sides from smin to smax (log-uniform), aspect 1/2 to
 * 2, inside the image; labels 1..K-1.  Boxes in the convention's rule (the
 * +1 convention: x2 = x1 + w - 1), as det-loader would give them. */
static void make_target(struct det_target *t, int nobj, int H, int W, int K, double smin, double smax,
                        const struct det_conv *cv)
{
        t->n = nobj;
        t->objects = xcalloc((size_t)nobj, sizeof(*t->objects));
        t->poly_len = xcalloc((size_t)nobj, sizeof(uint32_t));
        t->xy = xcalloc((size_t)nobj * 2 * POLY_VERTICES, sizeof(double));
        t->n_poly = t->cap_poly = t->cap_obj = (size_t)nobj;
        t->n_xy = t->cap_xy = (size_t)nobj * 2 * POLY_VERTICES;
        for (int k = 0; k < nobj; k++) {
                double s = smin * pow(smax / smin, lcg_u()), ar = pow(2.0, 2.0 * lcg_u() - 1.0);
                double w = fmin(s * sqrt(ar), W - 2.0), h = fmin(s / sqrt(ar), H - 2.0);
                double x1 = (W - w) * lcg_u(), y1 = (H - h) * lcg_u();
                int label = 1 + (int)((K - 1) * lcg_u());
                struct det_object *o = &t->objects[k];
                double one = cv->plus_one ? 1.0 : 0.0;
                o->box[0] = x1;
                o->box[1] = y1;
                o->box[2] = x1 + w - one;
                o->box[3] = y1 + h - one;
                o->label = label > K - 1 ? K - 1 : label;
                o->mask = DET_MASK_POLYGONS;
                o->first = (uint32_t)k;
                o->n = 1;
                o->xy_first = (size_t)k * 2 * POLY_VERTICES;
                o->ann_id = k + 1;
                t->poly_len[k] = 2 * POLY_VERTICES;
                double *xy = t->xy + o->xy_first;
                for (int v = 0; v < POLY_VERTICES; v++) {
                        xy[2 * v] = x1 + w / 2 + w / 2 * cos(2 * M_PI * v / POLY_VERTICES);
                        xy[2 * v + 1] = y1 + h / 2 + h / 2 * sin(2 * M_PI * v / POLY_VERTICES);
                }
        }
}

int main(int argc, char **argv)
{
        static const struct option lo[] = {
                { "config", 1, 0, 'c' },  { "mode", 1, 0, 'm' },    { "threads", 1, 0, 't' }, { "iters", 1, 0, 'n' },
                { "warmup", 1, 0, 'w' },  { "objects", 1, 0, 'o' }, { "backend", 1, 0, 'B' }, { "help", 0, 0, 'h' },
                { "precision", 1, 0, 'p' }, { "masks", 1, 0, 'M' }, { 0, 0, 0, 0 },
        };
        int threads = 0, iters = 3, warmup = 1, nobj = 5, small = 0, amp = 0, masks = 1, c;
        enum det_conv_kind mode = DET_CONV_MLPERF;
        const char *backend = "cpu";
        while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
                switch (c) {
                case 'c':
                        if (strcmp(optarg, "small") && strcmp(optarg, "reference")) {
                                fprintf(stderr, "maskrcnn-step: --config %s: reference or small\n", optarg);
                                return 2;
                        }
                        small = !strcmp(optarg, "small");
                        break;
                case 'm':
                        if (strcmp(optarg, "mlperf") && strcmp(optarg, "torchvision")) {
                                fprintf(stderr, "maskrcnn-step: --mode %s: mlperf or torchvision\n", optarg);
                                return 2;
                        }
                        mode = strcmp(optarg, "mlperf") ? DET_CONV_TORCHVISION : DET_CONV_MLPERF;
                        break;
                case 't': threads = atoi(optarg); break;
                case 'n': iters = atoi(optarg); break;
                case 'w': warmup = atoi(optarg); break;
                case 'o': nobj = atoi(optarg); break;
                case 'B': backend = optarg; break;
                case 'M':
                        if (strcmp(optarg, "0") && strcmp(optarg, "1")) {
                                fprintf(stderr, "maskrcnn-step: --masks %s: 0 (Faster R-CNN) or 1\n", optarg);
                                return 2;
                        }
                        masks = atoi(optarg);
                        break;
                case 'p':
                        if (strcmp(optarg, "fp32") && strcmp(optarg, "amp")) {
                                fprintf(stderr, "maskrcnn-step: --precision %s: fp32 or amp\n", optarg);
                                return 2;
                        }
                        amp = !strcmp(optarg, "amp");
                        break;
                case 'h':
                        printf("usage: maskrcnn-step [--config reference|small] [--mode mlperf|torchvision] [--threads T]\n"
                               "                     [--iters K] [--warmup W] [--objects N] [--backend cpu|cuda]\n"
                               "                     [--precision fp32|amp] [--masks 0|1]\n");
                        return 0;
                default: return 2;
                }
        }
        if (iters < 1 || warmup < 0 || nobj < 1 || nobj > 100) {
                fprintf(stderr, "maskrcnn-step: bad --iters, --warmup or --objects\n");
                return 2;
        }
        int N = small ? 4 : 2, H = small ? 128 : 800, W = small ? 128 : 1333, K = small ? 4 : 81;
        int PH = (H + 31) / 32 * 32, PW = (W + 31) / 32 * 32;
        double smin = small ? 16 : 32, smax = small ? 56 : 400;
        struct mrcnn_cfg cfg;
        if (small)
                mrcnn_cfg_small(&cfg, mode, K);
        else
                mrcnn_cfg_defaults(&cfg, mode);
        cfg.amp = amp;
        cfg.masks = masks;      /* 0: Faster R-CNN */

        struct bd_backend *be;
        struct bd_err err;
        if (bd_backend_new(backend, 0, threads, &be, &err) < 0)
                die("backend", &err);
        struct bd_model m;
        struct mrcnn_net *net;
        struct bd_sgd o;
        struct bd_sgd_cfg sc = { .lr = 0.001, .momentum = 0.9, .weight_decay = 1e-4, .loss_scaling = amp };
        bd_model_init(&m, be, BD_F32);
        if (mrcnn_net_new(&m, &cfg, &net, &err) < 0 || bd_model_finalize(&m, &err) < 0 ||
            bd_model_init_params(&m, 1, &err) < 0 || bd_sgd_init(&o, &m, &sc, &err) < 0)
                die("model", &err);
        printf("# maskrcnn-step: %s%s (%s), %d x 3 x %d x %d padded to %d x %d, %d classes, %zu trained parameters, "
               "backend %s%s, %d threads\n", masks ? "" : "Faster R-CNN, ",
               small ? "small" : "reference", mode == DET_CONV_MLPERF ? "mlperf" : "torchvision", N, H, W, PH, PW, K,
               m.n_train, backend, amp ? " amp" : "", be->nthreads);

        /* the batch */
        struct det_batch b = { .n = N, .height = PH, .width = PW };
        b.images = xcalloc((size_t)N * 3 * (size_t)PH * (size_t)PW, sizeof(float));
        b.samples = xcalloc((size_t)N, sizeof(*b.samples));
        struct bd_rng rng;
        bd_rng_seed(&rng, 1, 1);
        for (int i = 0; i < N; i++) {
                struct det_sample *s = &b.samples[i];
                s->image_id = i + 1;
                s->height = s->orig_height = H;
                s->width = s->orig_width = W;
                s->scale_x = s->scale_y = 1;
                make_target(&s->target, nobj, H, W, K, smin, smax, det_conv_get(mode));
                for (int ch = 0; ch < 3; ch++)
                        for (int y = 0; y < H; y++) {
                                float *row = b.images + (((size_t)i * 3 + (size_t)ch) * (size_t)PH + (size_t)y) * (size_t)PW;
                                for (int x = 0; x < W; x++)
                                        row[x] = (float)(4 * bd_rng_uniform(&rng) - 2);
                        }
        }

        double *t = xcalloc((size_t)iters, sizeof(double)), *ct = xcalloc((size_t)iters, sizeof(double));
        double *mt = xcalloc((size_t)iters, sizeof(double));
        struct mrcnn_losses L = { 0 };
        for (int it = -warmup; it < iters; it++) {
                struct mrcnn_step st = { .seed = 1, .step = (uint64_t)(it + warmup + 1),
                                         .gscale = amp ? o.loss_scale : 1 };
                double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID), m0 = now(CLOCK_THREAD_CPUTIME_ID);
                if (mrcnn_fwd_train(net, &m, &b, &st, &L, &err) < 0)
                        die("forward", &err);
                if (bd_model_begin_backward(&m) < 0 || mrcnn_bwd(net, &m, &err) < 0)
                        die("backward", &err);
                if (bd_sgd_step(&o, &m, 1.0, NULL) < 0 || be->ops->sync(be) < 0)
                        die("sgd", &be->err);
                if (it >= 0) {
                        t[it] = now(CLOCK_MONOTONIC) - t0;
                        ct[it] = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
                        mt[it] = now(CLOCK_THREAD_CPUTIME_ID) - m0;
                }
        }
        (void)bench_read;       /* det-bench.h's other helper: this driver reads no inputs */
        double med = bench_median(t, iters), cmed = bench_median(ct, iters), mmed = bench_median(mt, iters);
        printf("step %.1f images/s %.3f loss %.4f cpu-ms %.1f main-ms %.1f\n", 1e3 * med, N / med, L.total,
               1e3 * cmed, 1e3 * mmed);
        printf("losses classifier %.4f box_reg %.4f mask %.4f objectness %.4f rpn_box_reg %.4f "
               "(sampled: %lld/%lld anchors, %lld/%lld RoIs positive/negative)\n",
               L.classifier, L.box_reg, L.mask, L.objectness, L.rpn_box, (long long)L.rpn_pos, (long long)L.rpn_neg,
               (long long)L.roi_pos, (long long)L.roi_neg);
        free(t);
        free(mt);
        free(ct);
        for (int i = 0; i < N; i++) {
                struct det_target *tg = &b.samples[i].target;
                free(tg->objects);
                free(tg->poly_len);
                free(tg->xy);
        }
        free(b.samples);
        free(b.images);
        bd_sgd_release(&o, &m);
        mrcnn_net_free(net);
        bd_model_release(&m);
        bd_backend_free(be);
        return 0;
}

/* test-mrcnn-gpu.c: Mask R-CNN training steps on CUDA against the CPU
 * (make check-gpu-maskrcnn).
 *
 * The small network of test-mrcnn-net (ResNet-18 at width 1/4, FPN 16) in
 * float32, in both conventions, from the same weights on both backends
 * (rank 0's CPU initialisation copied to the GPU), on the same batch and
 * sampler seed:
 *   step 1: the sampled counts equal (the box bookkeeping runs on float32
 *     copies of the RPN outputs: a proposal may differ where two scores are
 *     within the convolutions' rounding, so the counts are checked, and the
 *     losses within 1e-3 relative); every trained parameter's gradient within
 *     1e-2 relative L2 of the CPU's (cuDNN's algorithms sum in other
 *     orders);
 *   three SGD steps: the losses stay within 1e-2 relative;
 *   inference on the GPU: as many images, boxes inside the images.
 * The convolutions use cuDNN's heuristics (BD_CUDA_CONV_ALGO=heuristic unless
 * the environment says otherwise): measured algorithms vary run to run.
 * Without a visible GPU (or a build without CUDA) the test is skipped.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/mrcnn-test-batch.h"
#include "../unit/tap.h"
#include "backend.h"
#include "mask.h"
#include "optim.h"

struct side {
        struct bd_backend *be;
        struct bd_model m;
        struct mrcnn_net *net;
        struct bd_sgd sgd;
};

static int build(struct side *s, struct bd_backend *be, const struct mrcnn_cfg *c, struct bd_err *err)
{
        memset(s, 0, sizeof(*s));
        s->be = be;
        bd_model_init(&s->m, be, BD_F32);
        s->m.training = 1;
        struct bd_sgd_cfg sc = { .lr = 0.01, .momentum = 0.9, .weight_decay = 1e-4, .gamma = 0.1 };
        if (mrcnn_net_new(&s->m, c, &s->net, err) < 0 || bd_model_finalize(&s->m, err) < 0 ||
            bd_model_init_params(&s->m, 9, err) < 0 || bd_sgd_init(&s->sgd, &s->m, &sc, err) < 0)
                return -1;
        return 0;
}

static void release(struct side *s)
{
        bd_sgd_release(&s->sgd, &s->m);
        mrcnn_net_free(s->net);
        bd_model_release(&s->m);
}

static int step(struct side *s, struct det_batch *b, uint64_t n, struct mrcnn_losses *L, struct bd_err *err)
{
        struct mrcnn_step st = { .seed = 3, .step = n, .gscale = 1 };
        struct bd_step_info info;
        if (mrcnn_fwd_train(s->net, &s->m, b, &st, L, err) < 0 || bd_model_begin_backward(&s->m) < 0 ||
            mrcnn_bwd(s->net, &s->m, err) < 0)
                return -1;
        s->be->ops->sync(s->be);
        return bd_sgd_step(&s->sgd, &s->m, 1.0, &info) < 0 ? -1 : 0;
}

static double rel(double a, double b)
{
        return fabs(a - b) / fmax(fabs(b), 1e-12);
}

static void compare(enum det_conv_kind mode, struct bd_backend *cpu, struct bd_backend *gpu)
{
        const char *mn = mode == DET_CONV_MLPERF ? "mlperf" : "torchvision";
        char what[1400];
        struct mrcnn_cfg c;
        struct bd_err err = { { 0 } };
        mrcnn_cfg_small(&c, mode, 4);
        c.width_mult = 0.25;
        c.fpn_channels = 16;
        c.box_rep = 32;
        c.mask_dim = 16;
        struct side a, g;
        if (build(&a, cpu, &c, &err) < 0 || build(&g, gpu, &c, &err) < 0) {
                printf("Bail out! %s: %s\n", mn, err.msg);
                exit(1);
        }
        /* the CPU's initial weights on both */
        void *host = malloc(a.m.n_all * sizeof(float));
        bd_model_get_params(&a.m, host);
        bd_model_set_params(&g.m, host);
        free(host);
        struct det_batch b;
        make_batch(&b, 64, 64, mode);

        struct mrcnn_losses la, lg;
        int ra = step(&a, &b, 1, &la, &err), rg = ra < 0 ? -1 : step(&g, &b, 1, &lg, &err);
        snprintf(what, sizeof(what), "%s: a training step on both backends", mn);
        if (!ok(ra == 0 && rg == 0, what)) {
                printf("# %s\n", err.msg);
                free_batch(&b);
                release(&a);
                release(&g);
                return;
        }
        snprintf(what, sizeof(what), "%s: the same sample (RPN %lld/%lld, RoIs %lld/%lld)", mn, (long long)la.rpn_pos,
                 (long long)lg.rpn_pos, (long long)la.roi_pos, (long long)lg.roi_pos);
        ok(la.rpn_pos == lg.rpn_pos && la.rpn_neg == lg.rpn_neg && la.roi_pos == lg.roi_pos && la.roi_neg == lg.roi_neg,
           what);
        double w = fmax(fmax(rel(lg.objectness, la.objectness), rel(lg.classifier, la.classifier)),
                        fmax(rel(lg.mask, la.mask), rel(lg.total, la.total)));
        snprintf(what, sizeof(what), "%s: losses within 1e-3 (worst %.2e; total %.5f vs %.5f)", mn, w, lg.total,
                 la.total);
        ok(w < 1e-3, what);
        /* gradients of the first step: on the host; the SGD step kept them */
        size_t nt = a.m.n_train;
        float *ga = malloc(nt * sizeof(float)), *gg = malloc(nt * sizeof(float));
        struct bd_tensor ta = bd_model_all_grads(&a.m), tg = bd_model_all_grads(&g.m);
        memcpy(ga, ta.data, nt * sizeof(float));
        gpu->ops->copy(gpu, gg, BD_CPU, tg.data, BD_CUDA, nt * sizeof(float));
        gpu->ops->sync(gpu);
        double worst = 0;
        const char *wn = "";
        for (int id = 0; id < a.m.np; id++) {
                if (!bd_model_trained(&a.m, id))
                        continue;
                const struct bd_param *p = &a.m.p[id];
                double num = 0, den = 0;
                for (int64_t j = 0; j < p->numel; j++) {
                        double d = (double)gg[p->goffset + (size_t)j] - ga[p->goffset + (size_t)j];
                        num += d * d;
                        den += (double)ga[p->goffset + (size_t)j] * ga[p->goffset + (size_t)j];
                }
                double e = den > 0 ? sqrt(num / den) : sqrt(num);
                if (e > worst) {
                        worst = e;
                        wn = p->name;
                }
        }
        snprintf(what, sizeof(what), "%s: every gradient within 1e-2 relative L2 (worst %.2e, %s)", mn, worst, wn);
        ok(worst < 1e-2, what);
        free(ga);
        free(gg);
        for (uint64_t s = 2; s <= 4; s++) {
                ra = step(&a, &b, s, &la, &err);
                rg = ra < 0 ? -1 : step(&g, &b, s, &lg, &err);
                if (ra < 0 || rg < 0)
                        break;
        }
        snprintf(what, sizeof(what), "%s: after 3 more SGD steps the losses agree within 1e-2 (%.5f vs %.5f)", mn,
                 lg.total, la.total);
        ok(ra == 0 && rg == 0 && rel(lg.total, la.total) < 1e-2, what);
        struct mrcnn_dets d[NIMG];
        int r = mrcnn_detect(g.net, &g.m, &b, d, &err);
        snprintf(what, sizeof(what), "%s: inference on the GPU%s%s", mn, r ? ": " : "", r ? err.msg : "");
        ok(r == 0, what);
        int inside = 1;
        for (int i = 0; r == 0 && i < NIMG; i++) {
                for (int64_t j = 0; j < d[i].n; j++) {
                        const float *bx = d[i].boxes + 4 * j;
                        inside &= bx[0] >= 0 && bx[2] <= b.samples[i].orig_width && bx[1] >= 0 &&
                                  bx[3] <= b.samples[i].orig_height;
                }
                mrcnn_dets_release(&d[i]);
        }
        snprintf(what, sizeof(what), "%s: GPU detections inside the images", mn);
        ok(inside, what);
        free_batch(&b);
        release(&a);
        release(&g);
}

int main(void)
{
        struct bd_err err = { { 0 } };
        struct bd_backend *cpu, *gpu;
        /* the heuristics' algorithms, the same every run: measured ones
         * change with the timings, and with them the rounding that decides
         * a proposal between two equal scores (the sample the gradients come
         * from); set in the environment, BD_CUDA_CONV_ALGO wins */
        setenv("BD_CUDA_CONV_ALGO", "heuristic", 0);
        if (bd_backend_cuda_new(0, &gpu, &err) < 0) {
                printf("1..0 # SKIP no GPU: %s\n", err.msg);
                return 0;
        }
        if (bd_backend_cpu_new(0, &cpu, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                return 1;
        }
        compare(DET_CONV_MLPERF, cpu, gpu);
        compare(DET_CONV_TORCHVISION, cpu, gpu);
        bd_backend_free(gpu);
        bd_backend_free(cpu);
        return done_testing();
}

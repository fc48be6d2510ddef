/* ssd-cuda-check.c: the SSD network and loss on the CUDA backend against the
 * CPU backend (make check-gpu), as TAP; skips without CUDA or a GPU.
 *
 * One model (ResNet-18 backbone, 128x128, width 1/4, 7 classes, 4 images)
 * built on both backends with the same weights and inputs; compared: the
 * forward outputs, the loss and its gradient with the same targets, and every
 * parameter gradient after the backward.  cuDNN may compute convolutions in
 * TF32 on recent GPUs, so the tolerances are 1e-2 relative (max error over
 * max value for outputs, L2 for the whole gradient), which still catches any
 * layout or indexing mistake (those give errors of order 1).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/tap.h"
#include "ssd-loss.h"
#include "ssd-net.h"

struct side {
        struct bd_backend *be;
        struct bd_model m;
        struct ssd_net s;
        struct ssd_loss L;
        struct bd_tensor x, dl, dc;
        float *hloc, *hconf, *grads;
        double loss;
};

static const struct ssd_cfg cfg = { .depth = 18, .image_size = 128, .width_mult = 0.25, .num_classes = 7 };
#define N 4

static int host_copy(struct bd_backend *be, void *dst, const struct bd_tensor *t)
{
        int r = be->ops->copy(be, dst, BD_CPU, t->data, t->dev, bd_tensor_bytes(t));
        return r < 0 ? r : be->ops->sync(be);
}

static int build(struct side *sd, const float *params, const float *image, const float *gt, const int32_t *lab,
                 const int32_t *cnt, struct bd_err *err)
{
        struct bd_backend *be = sd->be;
        int r;
        bd_model_init(&sd->m, be, BD_F32);
        sd->m.training = 1;
        if ((r = ssd_net_init(&sd->s, &sd->m, &cfg)) < 0 || (r = bd_model_finalize(&sd->m, err)) < 0)
                return r;
        if (params && (r = bd_model_set_params(&sd->m, params)) < 0)
                return r;
        int64_t xd[4] = { N, 3, cfg.image_size, cfg.image_size };
        struct bd_tensor hx = bd_tensor_view((void *)image, BD_CPU, BD_F32, BD_NCHW, 4, xd);
        if ((r = bd_tensor_resize(be, &sd->x, BD_F32, BD_NCHW, 4, xd)) < 0 || (r = bd_op_copy(be, &hx, &sd->x)) < 0)
                return r;
        bd_model_begin_step(&sd->m);
        if ((r = ssd_net_fwd(&sd->m, &sd->s, &sd->x)) < 0)
                return r;
        if ((r = ssd_loss_init(&sd->L, be, N, sd->s.nboxes, cfg.num_classes)) < 0 ||
            (r = ssd_loss_encode(&sd->L, &sd->s.dboxes, gt, lab, cnt, 8)) < 0 ||
            (r = ssd_loss_run(&sd->L, &sd->s.ploc, &sd->s.plabel, 1.0, &sd->dl, &sd->dc, &sd->loss, NULL)) < 0)
                return r;
        sd->hloc = xmalloc(bd_tensor_bytes(&sd->s.ploc));
        sd->hconf = xmalloc(bd_tensor_bytes(&sd->s.plabel));
        if ((r = host_copy(be, sd->hloc, &sd->s.ploc)) < 0 || (r = host_copy(be, sd->hconf, &sd->s.plabel)) < 0)
                return r;
        if ((r = bd_model_begin_backward(&sd->m)) < 0 || (r = ssd_net_bwd(&sd->m, &sd->s, &sd->dl, &sd->dc)) < 0)
                return r;
        sd->grads = xmalloc(sd->m.n_train * sizeof(float));
        struct bd_tensor g = bd_model_all_grads(&sd->m);
        return host_copy(be, sd->grads, &g);
}

static void release(struct side *sd)
{
        if (!sd->be)
                return;
        ssd_loss_release(&sd->L);
        bd_tensor_release(&sd->x);
        bd_tensor_release(&sd->dl);
        bd_tensor_release(&sd->dc);
        free(sd->hloc);
        free(sd->hconf);
        free(sd->grads);
        ssd_net_release(&sd->s);
        bd_model_release(&sd->m);
        bd_backend_free(sd->be);
}

static double rel_max(const float *a, const float *t, size_t n)
{
        double d = 0, m = 0;
        for (size_t i = 0; i < n; i++) {
                double e = fabs((double)a[i] - t[i]);
                d = e > d || isnan(e) ? e : d;
                m = fabs(t[i]) > m ? fabs(t[i]) : m;
        }
        return m > 0 ? d / m : d;
}

int main(void)
{
        struct bd_err err;
        const char *why = NULL;
        /* SSD_CUDA_CHECK_CPU=1: a second CPU backend stands in for CUDA (to
         * check this program where there is no GPU) */
        const char *self = getenv("SSD_CUDA_CHECK_CPU");
        int on_cpu = self && !strcmp(self, "1");
        if (!on_cpu && bd_cuda_device_count(&why) < 1) {
                printf("1..0 # SKIP no CUDA GPU: %s\n", why ? why : "none visible");
                return 0;
        }
        static struct side cpu, gpu;
        if (bd_backend_cpu_new(0, &cpu.be, &err) < 0 ||
            (on_cpu ? bd_backend_cpu_new(1, &gpu.be, &err) : bd_backend_cuda_new(0, &gpu.be, &err)) < 0) {
                printf("1..0 # SKIP %s\n", err.msg);
                return 0;
        }
        /* inputs: random image, 1..8 boxes per image */
        struct bd_rng rng;
        bd_rng_seed(&rng, 11, 0);
        size_t npix = (size_t)N * 3 * cfg.image_size * cfg.image_size;
        float *image = xmalloc(npix * sizeof(float)), gt[N * 8 * 4];
        int32_t lab[N * 8], cnt[N];
        for (size_t i = 0; i < npix; i++)
                image[i] = (float)bd_rng_normal(&rng);
        for (int i = 0; i < N; i++) {
                cnt[i] = 1 + (int)bd_rng_below(&rng, 8);
                for (int j = 0; j < 8; j++) {
                        float w = 0.05f + 0.6f * (float)bd_rng_uniform(&rng), h = 0.05f + 0.6f * (float)bd_rng_uniform(&rng);
                        float x = (1 - w) * (float)bd_rng_uniform(&rng), y = (1 - h) * (float)bd_rng_uniform(&rng);
                        float *b = gt + (i * 8 + j) * 4;
                        b[0] = x, b[1] = y, b[2] = x + w, b[3] = y + h;
                        lab[i * 8 + j] = 1 + (int32_t)bd_rng_below(&rng, cfg.num_classes - 1);
                }
        }
        /* initial weights made on the CPU, loaded on both */
        struct bd_model m0;
        struct ssd_net tmp;
        float *params = NULL;
        bd_model_init(&m0, cpu.be, BD_F32);
        if (ssd_net_init(&tmp, &m0, &cfg) == 0 && bd_model_finalize(&m0, &err) == 0 &&
            bd_model_init_params(&m0, 3, &err) == 0) {
                params = xmalloc(m0.n_all * sizeof(float));
                bd_model_get_params(&m0, params);
        }
        ssd_net_release(&tmp);
        bd_model_release(&m0);
        if (!ok(params != NULL, "initial weights"))
                goto out;
        if (!ok(build(&cpu, params, image, gt, lab, cnt, &err) == 0, "CPU: forward, loss, backward"))
                printf("#   %s %s\n", cpu.be->err.msg, err.msg);
        if (!ok(build(&gpu, params, image, gt, lab, cnt, &err) == 0, "CUDA: forward, loss, backward"))
                printf("#   %s %s\n", gpu.be->err.msg, err.msg);
        if (!gpu.grads || !cpu.grads)
                goto out;
        size_t nl = (size_t)N * cpu.s.nboxes * 4, nc = (size_t)N * cpu.s.nboxes * cfg.num_classes;
        double el = rel_max(gpu.hloc, cpu.hloc, nl), ec = rel_max(gpu.hconf, cpu.hconf, nc);
        printf("# outputs: offsets %.3g, logits %.3g; loss CPU %.7g CUDA %.7g\n", el, ec, cpu.loss, gpu.loss);
        ok(el <= 1e-2 && ec <= 1e-2, "outputs within 1e-2");
        ok(fabs(gpu.loss - cpu.loss) <= 1e-2 * fabs(cpu.loss), "loss within 1e-2");
        double d2 = 0, n2 = 0;
        for (size_t i = 0; i < cpu.m.n_train; i++) {
                double d = (double)gpu.grads[i] - cpu.grads[i];
                d2 += d * d;
                n2 += (double)cpu.grads[i] * cpu.grads[i];
        }
        printf("# whole gradient: relative L2 difference %.3g\n", sqrt(d2 / n2));
        ok(sqrt(d2 / n2) <= 1e-2, "parameter gradients within 1e-2 (relative L2)");
out:
        release(&gpu);
        release(&cpu);
        free(params);
        free(image);
        return done_testing();
}

/* resnet34-step.c: time a ResNet-34 training step on the trainer core.
 *
 *   resnet34-step [--batch N] [--size S] [--threads T] [--iters K] [--warmup W]
 *                 [--backend cpu|cuda] [--layers]
 *
 * A step is the forward of torchvision's ResNet-34 (1000 classes) on a random
 * batch, softmax cross-entropy, the backward and an SGD update (momentum 0.9,
 * weight decay 1e-4).  Prints "step MS images/s X loss L cpu-ms C", medians of
 * K timed steps after W untimed ones (C: CPU time of all threads per step,
 * less sensitive than wall time to other load on the machine).  --layers
 * also times forward + backward (data and weights; weights only for the stem)
 * of each convolution shape of the network: "conv NAME COUNT MS"
 * (milliseconds per call, median).
 * bench/resnet34-step.sh runs it next to the same in PyTorch.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "optim.h"
#include "resnet.h"

static double now(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU time of the whole process (all threads) */
static double cpu_now(void)
{
        struct timespec t;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmpd(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
        qsort(v, (size_t)n, sizeof(double), cmpd);
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(struct bd_backend *be, const char *what)
{
        fprintf(stderr, "resnet34-step: %s: %s\n", what, be->err.msg);
        exit(1);
}

struct shape {
        const char *name;
        int count;
        int64_t cin, cout, k, s, p, h;
        int need_dx;
};

/* the convolutions of ResNet-34 at size S (stage inputs after stem and pool) */
static int shapes(int64_t S, struct shape *out)
{
        int64_t h0 = (S + 2 * 3 - 7) / 2 + 1, h1 = (h0 + 2 - 3) / 2 + 1, h2 = (h1 - 1) / 2 + 1, h3 = (h2 - 1) / 2 + 1;
        struct shape s[] = {
                { "stem-7x7-3-64-s2", 1, 3, 64, 7, 2, 3, S, 0 },
                { "layer1-3x3-64", 6, 64, 64, 3, 1, 1, h1, 1 },
                { "layer2-3x3-64-128-s2", 1, 64, 128, 3, 2, 1, h1, 1 },
                { "layer2-1x1-64-128-s2", 1, 64, 128, 1, 2, 0, h1, 1 },
                { "layer2-3x3-128", 7, 128, 128, 3, 1, 1, h2, 1 },
                { "layer3-3x3-128-256-s2", 1, 128, 256, 3, 2, 1, h2, 1 },
                { "layer3-1x1-128-256-s2", 1, 128, 256, 1, 2, 0, h2, 1 },
                { "layer3-3x3-256", 11, 256, 256, 3, 1, 1, h3, 1 },
                { "layer4-3x3-256-512-s2", 1, 256, 512, 3, 2, 1, h3, 1 },
                { "layer4-1x1-256-512-s2", 1, 256, 512, 1, 2, 0, h3, 1 },
                { "layer4-3x3-512", 5, 512, 512, 3, 1, 1, (h3 - 1) / 2 + 1, 1 },
        };
        memcpy(out, s, sizeof(s));
        return (int)(sizeof(s) / sizeof(s[0]));
}

static void time_layers(struct bd_backend *be, int64_t N, int64_t S, int iters, int warmup)
{
        struct shape sh[16];
        int n = shapes(S, sh);
        struct bd_rng rng;
        bd_rng_seed(&rng, 1, 2);
        for (int i = 0; i < n; i++) {
                struct bd_conv_desc d = { sh[i].k, sh[i].k, sh[i].s, sh[i].s, sh[i].p, sh[i].p, 1, 1, 1, 0 };
                struct bd_plan_cache pc = { 0 };
                struct bd_tensor hx = { 0 }, x = { 0 }, w = { 0 }, y = { 0 }, dy = { 0 }, dx = { 0 }, dw = { 0 }, hw = { 0 };
                int64_t xd[4] = { N, sh[i].cin, sh[i].h, sh[i].h }, wd[4] = { sh[i].cout, sh[i].cin, sh[i].k, sh[i].k };
                struct bd_backend *cpu;
                struct bd_err err;
                bd_backend_cpu_new(be->nthreads, &cpu, &err);
                bd_tensor_resize(cpu, &hx, BD_F32, BD_NCHW, 4, xd);
                bd_tensor_resize(cpu, &hw, BD_F32, BD_NCHW, 4, wd);
                for (int64_t j = 0; j < bd_tensor_numel(&hx); j++)
                        ((float *)hx.data)[j] = (float)bd_rng_normal(&rng);
                for (int64_t j = 0; j < bd_tensor_numel(&hw); j++)
                        ((float *)hw.data)[j] = (float)(0.05 * bd_rng_normal(&rng));
                struct bd_tensor tmp = { 0 };
                bd_op_copy(be, &hx, &tmp);
                /* the input in the layout a model hands it over in */
                enum bd_layout l = sh[i].cin == 3 ? BD_NCHW : be->ops->pref_layout(be, sh[i].cin, BD_F32);
                if (bd_op_relayout(be, &tmp, l, &x) < 0 || bd_op_copy(be, &hw, &w) < 0)
                        die(be, "inputs");
                bd_tensor_resize_like(be, &dw, &w);
                double *t = xcalloc((size_t)iters, sizeof(double));
                for (int it = -warmup; it < iters; it++) {
                        double t0 = now();
                        if (bd_op_conv_fwd(be, &d, &pc, &x, &w, NULL, &y, 1) < 0)
                                die(be, sh[i].name);
                        if (!dy.data) {
                                bd_tensor_resize_like(be, &dy, &y);
                                bd_op_fill(be, &dy, 0.01);
                        }
                        if (bd_op_conv_bwd(be, &d, &pc, &x, &w, &dy, sh[i].need_dx ? &dx : NULL, &dw, NULL, 0, 1) < 0)
                                die(be, sh[i].name);
                        be->ops->sync(be);
                        if (it >= 0)
                                t[it] = now() - t0;
                }
                printf("conv %s %d %.3f\n", sh[i].name, sh[i].count, 1e3 * median(t, iters));
                fflush(stdout);
                free(t);
                struct bd_tensor *ts[] = { &hx, &x, &w, &y, &dy, &dx, &dw, &hw, &tmp };
                for (size_t k = 0; k < ARRAY_SIZE(ts); k++)
                        bd_tensor_release(ts[k]);
                bd_plan_cache_clear(be, &pc);
                bd_backend_free(cpu);
        }
}

int main(int argc, char **argv)
{
        static const struct option lo[] = {
                { "batch", 1, 0, 'b' },   { "size", 1, 0, 's' },    { "threads", 1, 0, 't' }, { "iters", 1, 0, 'n' },
                { "warmup", 1, 0, 'w' },  { "backend", 1, 0, 'B' }, { "layers", 0, 0, 'L' }, { "no-step", 0, 0, 'N' },
                { "help", 0, 0, 'h' },    { 0, 0, 0, 0 },
        };
        int batch = 8, size = 300, threads = 0, iters = 5, warmup = 2, layers = 0, step = 1, c;
        const char *backend = "cpu";
        while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
                switch (c) {
                case 'b': batch = atoi(optarg); break;
                case 's': size = atoi(optarg); break;
                case 't': threads = atoi(optarg); break;
                case 'n': iters = atoi(optarg); break;
                case 'w': warmup = atoi(optarg); break;
                case 'B': backend = optarg; break;
                case 'L': layers = 1; break;
                case 'N': step = 0; break;
                case 'h':
                        printf("usage: resnet34-step [--batch N] [--size S] [--threads T] [--iters K] [--warmup W]\n"
                               "                     [--backend cpu|cuda] [--layers] [--no-step]\n");
                        return 0;
                default: return 2;
                }
        }
        if (batch < 1 || size < 32 || iters < 1 || warmup < 0) {
                fprintf(stderr, "resnet34-step: bad --batch, --size, --iters or --warmup\n");
                return 2;
        }
        struct bd_backend *be;
        struct bd_err err;
        if (bd_backend_new(backend, 0, threads, &be, &err) < 0) {
                fprintf(stderr, "resnet34-step: %s\n", err.msg);
                return 1;
        }
        printf("# resnet34-step: batch %d x 3 x %d x %d, backend %s, %d threads\n", batch, size, size, backend,
               be->nthreads);
        if (step) {
                struct bd_model m;
                struct bd_resnet r;
                struct bd_sgd o;
                struct bd_resnet_cfg cfg = { .depth = 34, .num_classes = 1000 };
                struct bd_sgd_cfg sc = { .lr = 0.01, .momentum = 0.9, .weight_decay = 1e-4 };
                bd_model_init(&m, be, BD_F32);
                if (bd_resnet_init(&r, &m, "", &cfg) < 0)
                        die(be, "model");
                if (bd_model_finalize(&m, &err) < 0 || bd_model_init_params(&m, 1, &err) < 0 || bd_sgd_init(&o, &m, &sc, &err) < 0) {
                        fprintf(stderr, "resnet34-step: %s\n", err.msg);
                        return 1;
                }
                int64_t xd[4] = { batch, 3, size, size }, nb = batch;
                struct bd_tensor hx = { 0 }, hl = { 0 }, x = { 0 }, lab = { 0 }, loss = { 0 }, dl = { 0 };
                struct bd_backend *cpu;
                bd_backend_cpu_new(0, &cpu, &err);
                bd_tensor_resize(cpu, &hx, BD_F32, BD_NCHW, 4, xd);
                bd_tensor_resize(cpu, &hl, BD_I32, BD_NCHW, 1, &nb);
                struct bd_rng rng;
                bd_rng_seed(&rng, 1, 1);
                for (int64_t i = 0; i < bd_tensor_numel(&hx); i++)
                        ((float *)hx.data)[i] = (float)bd_rng_normal(&rng);
                for (int i = 0; i < batch; i++)
                        ((int32_t *)hl.data)[i] = (int32_t)bd_rng_below(&rng, 1000);
                bd_op_copy(be, &hx, &x);
                bd_op_copy(be, &hl, &lab);
                double *t = xcalloc((size_t)iters, sizeof(double)), *ct = xcalloc((size_t)iters, sizeof(double)), l = 0;
                for (int it = -warmup; it < iters; it++) {
                        double t0 = now(), c0 = cpu_now();
                        bd_model_begin_step(&m);
                        if (bd_resnet_fwd(&m, &r, &x) < 0 ||
                            bd_op_softmax_ce(be, &r.logits, &lab, NULL, 1.0 / batch, &loss, &dl) < 0 ||
                            bd_op_sum(be, &loss, &l) < 0 || bd_model_begin_backward(&m) < 0 ||
                            bd_resnet_bwd(&m, &r, NULL, &dl) < 0 || bd_sgd_step(&o, &m, 1.0, NULL) < 0 || be->ops->sync(be) < 0)
                                die(be, "step");
                        if (it >= 0) {
                                t[it] = now() - t0;
                                ct[it] = cpu_now() - c0;
                        }
                }
                double med = median(t, iters), cmed = median(ct, iters);
                printf("step %.1f images/s %.3f loss %.4f cpu-ms %.1f\n", 1e3 * med, batch / med, l / batch, 1e3 * cmed);
                fflush(stdout);
                free(t);
                free(ct);
                struct bd_tensor *ts[] = { &hx, &hl, &x, &lab, &loss, &dl };
                for (size_t k = 0; k < ARRAY_SIZE(ts); k++)
                        bd_tensor_release(ts[k]);
                bd_backend_free(cpu);
                bd_sgd_release(&o, &m);
                bd_resnet_release(&r);
                bd_model_release(&m);
        }
        if (layers)
                time_layers(be, batch, size, iters, warmup);
        bd_backend_free(be);
        return 0;
}

/* roi-align.c: multi-scale RoIAlign forward + backward on the CPU backend,
 * the box head's (7x7) or the mask head's (14x14) pooling of Mask R-CNN
 * (bench/roi-align.sh runs it against bench/roi-align.py).
 *
 * P2-P5 of an 800 x 1344 batch of 2 images (200x336 ... 25x42), 256
 * channels in the CPU's layout (NCHW8C), 512 RoIs per image from the LCG
 * that roi-align.py shares (sizes spread over all levels), sampling 2.  One
 * step: det_msroi_fwd then det_msroi_bwd into zeroed map gradients; prints
 * the median of the rounds' times:
 *
 *   step <ms> fwd <ms> bwd <ms>
 *
 *   bench/roi-align [--threads T] [--out 7|14] [--rounds R] [--warmup W]
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "macro.h"
#include "roi-align.h"

#define NIMG 2
#define PER_IMG 512
#define IMG_H 800
#define IMG_W 1344

static uint64_t lcg = 2022;

/* [0, 1): the generator of roi-align.py */
static double lcg_u(void)
{
        lcg = (lcg * 6364136223846793005ULL + 1442695040888963407ULL);
        return (double)(lcg >> 11) / 9007199254740992.0;
}

/* proposals as the box head sees them: sqrt(area) 16 to 724 (log-uniform),
 * aspect 1/2 to 2, clipped to the image */
static void make_rois(float *r)
{
        lcg = 2022;
        for (int i = 0; i < NIMG * PER_IMG; i++) {
                double s = 16.0 * pow(2.0, 5.5 * lcg_u()), ar = pow(2.0, 2.0 * lcg_u() - 1.0);
                double w = s * sqrt(ar), h = s / sqrt(ar);
                double cx = IMG_W * lcg_u(), cy = IMG_H * lcg_u();
                r[5 * i] = (float)(i / PER_IMG);
                r[5 * i + 1] = (float)fmax(cx - w / 2, 0);
                r[5 * i + 2] = (float)fmax(cy - h / 2, 0);
                r[5 * i + 3] = (float)fmin(cx + w / 2, IMG_W);
                r[5 * i + 4] = (float)fmin(cy + h / 2, IMG_H);
        }
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
        qsort(v, (size_t)n, sizeof(double), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
        int threads = 1, out = 7, rounds = 5, warmup = 1;
        for (int i = 1; i + 1 < argc; i += 2) {
                if (!strcmp(argv[i], "--threads"))
                        threads = atoi(argv[i + 1]);
                else if (!strcmp(argv[i], "--out"))
                        out = atoi(argv[i + 1]);
                else if (!strcmp(argv[i], "--rounds"))
                        rounds = atoi(argv[i + 1]);
                else if (!strcmp(argv[i], "--warmup"))
                        warmup = atoi(argv[i + 1]);
        }
        if (threads < 1 || out < 1 || rounds < 1 || rounds > 100 || warmup < 0) {
                fprintf(stderr, "usage: roi-align [--threads T] [--out N] [--rounds R] [--warmup W]\n");
                return 2;
        }
        struct bd_backend *be;
        struct bd_err err = { 0 };
        if (bd_backend_cpu_new(threads, &be, &err) < 0) {
                fprintf(stderr, "roi-align: %s\n", err.msg);
                return 1;
        }
        struct bd_tensor maps[4], dmaps[4], y = { 0 }, dy = { 0 };
        const struct bd_tensor *fm[4];
        struct bd_tensor *dm[4];
        double scales[4];
        for (int l = 0; l < 4; l++) {
                int64_t d[4] = { NIMG, 256, (IMG_H + (4 << l) - 1) / (4 << l), (IMG_W + (4 << l) - 1) / (4 << l) };
                memset(&maps[l], 0, sizeof(maps[l]));
                memset(&dmaps[l], 0, sizeof(dmaps[l]));
                if (bd_tensor_resize(be, &maps[l], BD_F32, be->ops->pref_layout(be, 256, BD_F32), 4, d) < 0 ||
                    bd_tensor_resize_like(be, &dmaps[l], &maps[l]) < 0) {
                        fprintf(stderr, "roi-align: %s\n", be->err.msg);
                        return 1;
                }
                for (int64_t i = 0; i < bd_tensor_numel(&maps[l]); i++)
                        ((float *)maps[l].data)[i] = (float)(lcg_u() - 0.5);
                fm[l] = &maps[l];
                dm[l] = &dmaps[l];
                scales[l] = det_roi_infer_scale(d[2], IMG_H);
        }
        struct det_msroi m;
        if (det_msroi_init(&m, &det_conv_torchvision, 4, scales, out, 2, &err) < 0) {
                fprintf(stderr, "roi-align: %s\n", err.msg);
                return 1;
        }
        float *rv = xmalloc(NIMG * PER_IMG * 5 * sizeof(float));
        make_rois(rv);
        int64_t rd[2] = { NIMG * PER_IMG, 5 }, yd[4] = { NIMG * PER_IMG, 256, out, out };
        struct bd_tensor rois = bd_tensor_view(rv, BD_CPU, BD_F32, BD_NCHW, 2, rd);
        if (bd_tensor_resize(be, &dy, BD_F32, BD_NCHW, 4, yd) < 0)
                return 1;
        for (int64_t i = 0; i < bd_tensor_numel(&dy); i++)
                ((float *)dy.data)[i] = (float)(lcg_u() - 0.5);
        double tf[100], tb[100], ts[100];
        for (int i = 0; i < warmup + rounds; i++) {
                double t0 = clock_monotonic();
                int r = det_msroi_fwd(be, &m, fm, &rois, NULL, &y);
                double t1 = clock_monotonic();
                r |= det_msroi_bwd(be, &m, &dy, &rois, NULL, dm, 0);
                double t2 = clock_monotonic();
                if (r < 0) {
                        fprintf(stderr, "roi-align: %s\n", be->err.msg);
                        return 1;
                }
                if (i >= warmup) {
                        tf[i - warmup] = (t1 - t0) * 1e3;
                        tb[i - warmup] = (t2 - t1) * 1e3;
                        ts[i - warmup] = (t2 - t0) * 1e3;
                }
        }
        printf("step %.3f fwd %.3f bwd %.3f\n", median(ts, rounds), median(tf, rounds), median(tb, rounds));
        for (int l = 0; l < 4; l++) {
                bd_tensor_release(&maps[l]);
                bd_tensor_release(&dmaps[l]);
        }
        bd_tensor_release(&y);
        bd_tensor_release(&dy);
        free(rv);
        bd_backend_free(be);
        return 0;
}

/* det-post.c: Mask R-CNN's inference postprocessing of one image on the
 * host (trainer/det/postprocess.h), the C side of bench/det-post.sh; the
 * other side is bench/det-post.py (torchvision 0.14).
 *
 *     bench/det-post [--iters 20] [--warmup 3] [--threads T]
 *
 * One image of 480 x 640 resized to 800 x 1066 with 1000 proposals and 81
 * classes (logits, deltas and proposals from the LCG det-post.py uses):
 *   detect  softmax, per-class decode and clip, score > 0.05, size rule,
 *           batched NMS 0.5, top 100 (torchvision), boxes to 480 x 640
 *   paste   sigmoid of the 28 x 28 logits of each detection's class, paste
 *           into 480 x 640, threshold > 0.5
 *   rle     the thresholded masks to COCO RLE strings (no counterpart:
 *           /usr/bin/python3 has no pycocotools)
 * Prints "detect MS", "paste MS", "rle MS" (medians of --iters) and the
 * number of detections.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "macro.h"
#include "mask.h"
#include "postprocess.h"

enum { N = 1000, K = 81, M = 28, H = 800, W = 1066, OH = 480, OW = 640 };

static uint64_t lcg_s;

static int64_t lcg_u(int64_t k)
{
        lcg_s = (lcg_s * 1103515245u + 12345u) % (1u << 31);
        return (int64_t)((lcg_s >> 8) % (uint64_t)k);
}

static double now_ms(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

static double median(double *v, int n)
{
        qsort(v, (size_t)n, sizeof(double), cmp_d);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
        int iters = 20, warmup = 3;
        for (int i = 1; i + 1 < argc; i += 2) {
                if (!strcmp(argv[i], "--iters"))
                        iters = atoi(argv[i + 1]);
                else if (!strcmp(argv[i], "--warmup"))
                        warmup = atoi(argv[i + 1]);
#ifdef _OPENMP
                else if (!strcmp(argv[i], "--threads"))
                        omp_set_num_threads(atoi(argv[i + 1]));
#endif
        }
        if (iters < 1)
                iters = 1;
        float *logits = xmalloc(N * K * sizeof(float)), *deltas = xmalloc(N * K * 4 * sizeof(float));
        float *props = xmalloc(N * 4 * sizeof(float));
        lcg_s = 22;
        for (int q = 0; q < N * K; q++)
                logits[q] = (float)((lcg_u(2049) - 1024) / 256.0);
        for (int q = 0; q < N * K * 4; q++)
                deltas[q] = (float)((lcg_u(1025) - 512) / 2048.0);
        for (int i = 0; i < N; i++) {
                double x1 = lcg_u(W * 4) / 4.0, y1 = lcg_u(H * 4) / 4.0;
                double w = 8 + lcg_u(300 * 4) / 4.0, h = 8 + lcg_u(300 * 4) / 4.0;
                props[4 * i] = (float)x1;
                props[4 * i + 1] = (float)y1;
                props[4 * i + 2] = (float)(x1 + w < W ? x1 + w : W);
                props[4 * i + 3] = (float)(y1 + h < H ? y1 + h : H);
        }
        /* the mask head's output for up to 100 detections, all classes */
        float *mlog = xmalloc((size_t)100 * K * M * M * sizeof(float));
        for (size_t q = 0; q < (size_t)100 * K * M * M; q++)
                mlog[q] = (float)((lcg_u(2049) - 1024) / 256.0);
        float *probs = xmalloc((size_t)100 * M * M * sizeof(float));
        float *img = xmalloc((size_t)100 * OH * OW * sizeof(float));
        uint8_t *bits = xmalloc((size_t)100 * OH * OW);
        double *td = xmalloc((size_t)iters * sizeof(double)), *tp = xmalloc((size_t)iters * sizeof(double));
        double *tr = xmalloc((size_t)iters * sizeof(double));
        int64_t ndet = 0;
        for (int it = 0; it < warmup + iters; it++) {
                struct det_dets d;
                double t0 = now_ms();
                det_postprocess(&det_conv_torchvision, &det_post_torchvision, logits, deltas, props, N, K, H, W, &d);
                det_resize_boxes(&det_conv_torchvision, d.boxes, d.n, H, W, OH, OW);
                double t1 = now_ms();
                det_mask_probs(mlog, d.labels, d.n, K, M, probs);
                det_paste_masks(probs, d.boxes, d.n, M, OH, OW, img);
                for (size_t q = 0; q < (size_t)d.n * OH * OW; q++)
                        bits[q] = img[q] > 0.5f;
                double t2 = now_ms();
                size_t chars = 0;
                for (int64_t k = 0; k < d.n; k++) {
                        _cleanup_rle_ struct rle r = RLE_INIT;
                        rle_encode_rows(&r, bits + (size_t)k * OH * OW, OH, OW, OW);
                        char *s = rle_to_string(&r);
                        chars += strlen(s);
                        free(s);
                }
                double t3 = now_ms();
                if (it >= warmup) {
                        td[it - warmup] = t1 - t0;
                        tp[it - warmup] = t2 - t1;
                        tr[it - warmup] = t3 - t2;
                }
                ndet = d.n;
                det_dets_release(&d);
                (void)chars;
        }
        printf("detect %.3f\npaste %.3f\nrle %.3f\ndetections %lld\n", median(td, iters), median(tp, iters),
               median(tr, iters), (long long)ndet);
        free(logits);
        free(deltas);
        free(props);
        free(mlog);
        free(probs);
        free(img);
        free(bits);
        free(td);
        free(tp);
        free(tr);
        return 0;
}

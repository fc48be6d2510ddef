/* nms.c: det_nms's time on bench/nms.py's inputs (bench/nms.sh).
 *
 *   bench/nms DIR REPS THREADS
 *
 * Reads DIR/boxes-N.f32 and scores-N.f32 for N = 2,000 and 20,000, runs
 * det_nms (torchvision's convention, IoU > 0.5) REPS times after a warm-up
 * with THREADS OpenMP threads, and prints "ours nms-N SECONDS" (the median),
 * then "mismatches K": how many keep lists differ from torchvision's
 * (DIR/keep-N.i64).
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
#include "boxes.h"

static void *slurp(const char *dir, const char *name, int n, size_t *len)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s-%d.%s", dir, name, n, strcmp(name, "keep") ? "f32" : "i64");
        FILE *f = fopen(path, "rb");
        if (!f) {
                fprintf(stderr, "nms: cannot open '%s'\n", path);
                exit(1);
        }
        fseek(f, 0, SEEK_END);
        *len = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        void *p = xmalloc(*len ? *len : 1);
        if (fread(p, 1, *len, f) != *len) {
                fprintf(stderr, "nms: short read of '%s'\n", path);
                exit(1);
        }
        fclose(f);
        return p;
}

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
        if (argc != 4) {
                fprintf(stderr, "usage: nms DIR REPS THREADS\n");
                return 2;
        }
        int reps = atoi(argv[2]), mismatches = 0;
#ifdef _OPENMP
        omp_set_num_threads(atoi(argv[3]));
#endif
        static const int sizes[2] = { 2000, 20000 };
        double *t = xmalloc((size_t)(reps > 0 ? reps : 1) * sizeof(double));
        for (int z = 0; z < 2; z++) {
                int n = sizes[z];
                size_t lb, ls, lk;
                float *boxes = slurp(argv[1], "boxes", n, &lb), *scores = slurp(argv[1], "scores", n, &ls);
                int64_t *want = slurp(argv[1], "keep", n, &lk), *keep = xmalloc((size_t)n * sizeof(int64_t));
                int64_t nk = det_nms(&det_conv_torchvision, boxes, scores, n, 0.5, keep);
                if ((size_t)nk * sizeof(int64_t) != lk || memcmp(keep, want, lk))
                        mismatches++;
                for (int r = 0; r < reps; r++) {
                        double t0 = now();
                        det_nms(&det_conv_torchvision, boxes, scores, n, 0.5, keep);
                        t[r] = now() - t0;
                }
                qsort(t, (size_t)reps, sizeof(double), cmp_double);
                printf("ours nms-%d %.9f\n", n, t[reps / 2]);
                free(boxes);
                free(scores);
                free(want);
                free(keep);
        }
        printf("mismatches %d\n", mismatches);
        free(t);
        return mismatches ? 1 : 0;
}

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
#ifdef _OPENMP
#include <omp.h>
#endif

#include "macro.h"
#include "boxes.h"
#include "clock.h"
#include "det-bench.h"

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
                char name[3][32];
                snprintf(name[0], sizeof(name[0]), "boxes-%d.f32", n);
                snprintf(name[1], sizeof(name[1]), "scores-%d.f32", n);
                snprintf(name[2], sizeof(name[2]), "keep-%d.i64", n);
                float *boxes = bench_read(argv[1], name[0], &lb), *scores = bench_read(argv[1], name[1], &ls);
                int64_t *want = bench_read(argv[1], name[2], &lk), *keep = xmalloc((size_t)n * sizeof(int64_t));
                if (lb != (size_t)n * 4 * sizeof(float) || ls != (size_t)n * sizeof(float)) {
                        fprintf(stderr, "nms: %s or %s is not %d boxes\n", name[0], name[1], n);
                        return 1;
                }
                int64_t nk = det_nms(&det_conv_torchvision, boxes, scores, n, 0.5, keep);
                if ((size_t)nk * sizeof(int64_t) != lk || memcmp(keep, want, lk))
                        mismatches++;
                for (int r = 0; r < reps; r++) {
                        double t0 = clock_monotonic();
                        det_nms(&det_conv_torchvision, boxes, scores, n, 0.5, keep);
                        t[r] = clock_monotonic() - t0;
                }
                printf("ours nms-%d %.9f\n", n, bench_median(t, reps));
                free(boxes);
                free(scores);
                free(want);
                free(keep);
        }
        printf("mismatches %d\n", mismatches);
        free(t);
        return mismatches ? 1 : 0;
}

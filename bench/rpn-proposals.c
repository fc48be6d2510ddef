/* rpn-proposals.c: the RPN's anchors and proposal selection on
 * bench/rpn-proposals.py's inputs (bench/rpn-proposals.sh).
 *
 *   bench/rpn-proposals DIR REPS THREADS
 *
 * Reads DIR/logits.f32 and deltas.f32 (2 images, 268,569 anchors each, cut
 * into the per-level arrays a head produces, outside the timing), then times
 * REPS times after a warm-up, with THREADS OpenMP threads: the cell and grid
 * anchors of P2..P6 (det_cell_anchors, det_grid_anchors) and
 * det_rpn_proposals in torchvision's training convention (top 2000 per level,
 * NMS 0.7 per level, top 2000 per image).  Prints "ours rpn SECONDS" (the
 * median), then against torchvision's proposals (DIR/out.f32): "reordered
 * K", images whose rows differ in order only where scores tie, "mismatches
 * K", images whose proposals differ as sets (in count or by more than 1e-4
 * of 1344 in a coordinate), and "maxdiff D", the largest such difference.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "macro.h"
#include "boxes.h"
#include "proposals.h"
#include "clock.h"
#include "det-bench.h"

#define NI 2
#define L 5

static const int FH[L] = { 200, 100, 50, 25, 13 }, FW[L] = { 336, 168, 84, 42, 21 };
static const int HW[2 * NI] = { 800, 1344, 800, 1199 };

/* DIR/NAME, which must hold n floats */
static float *read_floats(const char *dir, const char *name, size_t n)
{
        size_t len;
        float *p = bench_read(dir, name, &len);
        if (len != n * sizeof(float)) {
                fprintf(stderr, "rpn-proposals: '%s' has %zu bytes, want %zu floats\n", name, len, n);
                exit(1);
        }
        return p;
}

/* descending score, then the box: a total order on rows (x1 y1 x2 y2 score) */
static int cmp_row(const void *pa, const void *pb)
{
        const float *a = pa, *b = pb;
        if (a[4] != b[4])
                return a[4] > b[4] ? -1 : 1;
        for (int q = 0; q < 4; q++)
                if (a[q] != b[q])
                        return a[q] < b[q] ? -1 : 1;
        return 0;
}

/* the largest coordinate difference of two lists of n rows */
static double rows_diff(const float *a, const float *b, int64_t n)
{
        double d = 0;
        for (int64_t k = 0; k < n; k++)
                for (int q = 0; q < 4; q++) {
                        double x = fabs(a[5 * k + q] - b[5 * k + q]);
                        d = x > d ? x : d;
                }
        return d;
}

int main(int argc, char **argv)
{
        if (argc != 4) {
                fprintf(stderr, "usage: rpn-proposals DIR REPS THREADS\n");
                return 2;
        }
        int reps = atoi(argv[2]);
#ifdef _OPENMP
        omp_set_num_threads(atoi(argv[3]));
#endif
        int64_t A[L], tot = 0;
        for (int l = 0; l < L; l++) {
                A[l] = (int64_t)FH[l] * FW[l] * 3;
                tot += A[l];
        }
        float *logits = read_floats(argv[1], "logits.f32", (size_t)(NI * tot));
        float *deltas = read_floats(argv[1], "deltas.f32", (size_t)(NI * tot) * 4);
        struct det_rpn_level lv[L];
        float *obj[L], *del[L], *anc[L];
        for (int l = 0, off = 0; l < L; off += (int)A[l], l++) {
                obj[l] = xmalloc((size_t)(NI * A[l]) * sizeof(float));
                del[l] = xmalloc((size_t)(NI * A[l]) * 4 * sizeof(float));
                anc[l] = xmalloc((size_t)A[l] * 4 * sizeof(float));
                for (int i = 0; i < NI; i++) {
                        memcpy(obj[l] + i * A[l], logits + i * tot + off, (size_t)A[l] * sizeof(float));
                        memcpy(del[l] + i * A[l] * 4, deltas + (i * tot + off) * 4, (size_t)A[l] * 4 * sizeof(float));
                }
                lv[l] = (struct det_rpn_level){ obj[l], del[l], anc[l], A[l] };
        }
        struct det_rpn_params p = det_rpn_params_torchvision(1);
        float *boxes = xmalloc((size_t)(NI * p.post_nms_top_n) * 4 * sizeof(float));
        float *scores = xmalloc((size_t)(NI * p.post_nms_top_n) * sizeof(float));
        int64_t count[NI];
        double *t = xmalloc((size_t)(reps > 0 ? reps : 1) * sizeof(double));
        static const float ratios[3] = { 0.5f, 1.0f, 2.0f };
        for (int r = -1; r < reps; r++) {
                double t0 = clock_monotonic();
                for (int l = 0; l < L; l++) {
                        /* torchvision's stride: the padded size over the map's */
                        float size = (float)(32 << l), cell[12];
                        det_cell_anchors(&det_conv_torchvision, 1344 / FW[l], &size, 1, ratios, 3, cell);
                        det_grid_anchors(cell, 3, FH[l], FW[l], 800 / FH[l], 1344 / FW[l], anc[l]);
                }
                det_rpn_proposals(&det_conv_torchvision, &p, lv, L, NI, HW, boxes, scores, count);
                if (r >= 0)
                        t[r] = clock_monotonic() - t0;
        }
        printf("ours rpn %.9f\n", bench_median(t, reps));
        /* torchvision's answer: the same rows, compared in order and, as
         * sets, sorted by (score, box): equal scores (logits drawn in float
         * repeat) leave torch's unstable sorts free to order them otherwise */
        size_t outlen;
        float *out = bench_read(argv[1], "out.f32", &outlen);
        int mismatches = 0, reordered = 0;
        double maxdiff = 0;
        const float *o = out, *end = out + outlen / sizeof(float);
        for (int i = 0; i < NI; i++) {
                int64_t n = o < end ? (int64_t)o[0] : -1;
                const float *rows = o + 1;
                if (n < 0 || n > end - rows || 5 * n > end - rows) {
                        fprintf(stderr, "rpn-proposals: out.f32 is short\n");
                        return 1;
                }
                o = rows + 5 * n;
                if (n != count[i]) {
                        mismatches++;
                        continue;
                }
                float *ours = xmalloc((size_t)(n ? n : 1) * 5 * sizeof(float));
                float *theirs = xmalloc((size_t)(n ? n : 1) * 5 * sizeof(float));
                for (int64_t k = 0; k < n; k++) {
                        memcpy(ours + 5 * k, boxes + (i * p.post_nms_top_n + k) * 4, 4 * sizeof(float));
                        ours[5 * k + 4] = scores[i * p.post_nms_top_n + k];
                }
                memcpy(theirs, rows, (size_t)n * 5 * sizeof(float));
                double d_ordered = rows_diff(ours, theirs, n);
                qsort(ours, (size_t)n, 5 * sizeof(float), cmp_row);
                qsort(theirs, (size_t)n, 5 * sizeof(float), cmp_row);
                double d = rows_diff(ours, theirs, n);
                maxdiff = d > maxdiff ? d : maxdiff;
                mismatches += d > 1e-4 * 1344;
                reordered += d_ordered > 1e-4 * 1344;
                free(ours);
                free(theirs);
        }
        printf("reordered %d\n", reordered);
        printf("mismatches %d\nmaxdiff %g\n", mismatches, maxdiff);
        for (int l = 0; l < L; l++) {
                free(obj[l]);
                free(del[l]);
                free(anc[l]);
        }
        free(logits);
        free(deltas);
        free(boxes);
        free(scores);
        free(out);
        free(t);
        return 0;
}

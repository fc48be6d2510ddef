/* test-det-masks.c: mask targets (trainer/det/masks.h), detection
 * postprocessing, mask paste and RLE (trainer/det/postprocess.h) against
 * the answers tests/det-mask-golden.py recorded in det-mask-golden.h.
 *
 *   [R] mask targets: maskrcnn_benchmark's crop + resize in float32 (torch)
 *     rasterised by pycocotools 2.0.11: every bit exact, 36 cases (parts
 *     outside the box, boxes under 1 px, multi-part objects, parts of < 3
 *     points, M 14 and 28); the RLE (bitmask) rule against the generator's
 *     numpy version of it: exact.  The GPU's column rule (masks-impl.h, run
 *     on the host) against rle_from_poly: the same bits on those cases and
 *     on 400 random polygons (negative, off-grid, repeated vertices; M 1
 *     to 100).
 *   postprocess: torchvision 0.14 postprocess_detections + resize_boxes and
 *     the reference's PostProcessor (written in torch in the generator) +
 *     BoxList.resize, on LCG inputs this test reproduces: count, labels and
 *     order exact; scores |got - want| <= 1e-6 max(|want|, 1e-3) (torch's
 *     vectorised exp and sum); boxes |got - want| <= 1e-6 max(the box's
 *     largest |want|, 1) (x1 = cx - w/2 cancels: decode's exp differs by an
 *     ulp, and the error is relative to the operands, as in test-det-ops).
 *   paste: torchvision's paste_masks_in_image of sigmoid(LCG logits):
 *     soft values within 1e-5 (recorded x 2^20, so 1e-5 + 2^-21); the > 0.5
 *     pixels: at most 0.1% of the pixels may differ (values at the 0.5 edge);
 *     the C side's RLE string decodes to its own thresholded mask, and
 *     equals pycocotools' encode() string wherever the thresholded masks
 *     agree.
 * Then hand-made cases: the reference's kthvalue cut keeping ties, and bad
 * input (NaN boxes, logits and coordinates, zero and negative boxes, empty
 * images, short polygons, out-of-range matches, the backend-level errors),
 * and LCG-drawn extreme values (infinities, 1e30, NaN) through every
 * operator: results in range, nothing read out of bounds (ASan, UBSan).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "backend.h"
#include "masks.h"
#include "postprocess.h"
#include "tap.h"
#include "det-mask-golden.h"

static const struct det_conv *MP = &det_conv_mlperf, *TV = &det_conv_torchvision;

static int hexbit(const char *s, size_t i)
{
        char c = s[i / 4];
        int v = c <= '9' ? c - '0' : c - 'a' + 10;
        return (v >> (3 - (int)(i % 4))) & 1;
}

/* the generator's LCG (det-mask-golden.py) */
static uint64_t lcg_s;

static int64_t lcg_u(int64_t k)
{
        lcg_s = (lcg_s * 1103515245u + 12345u) % (1u << 31);
        return (int64_t)((lcg_s >> 8) % (uint64_t)k);
}

/* ---- [R] mask targets ---- */

static void test_targets(void)
{
        int bad_cases = 0, col_bad = 0;
        float *all = xmalloc((size_t)G_MT_CASES * 28 * 28 * sizeof(float));
        float *props = xmalloc((size_t)G_MT_CASES * 4 * sizeof(float));
        struct det_gt_mask *gts = xcalloc(G_MT_CASES, sizeof(*gts));
        int64_t *matched = xmalloc(G_MT_CASES * sizeof(int64_t));
        double *xy = xmalloc(sizeof(g_mt_xy) / sizeof(g_mt_xy[0]) * sizeof(double));
        for (size_t i = 0; i < sizeof(g_mt_xy) / sizeof(g_mt_xy[0]); i++)
                xy[i] = g_mt_xy[i];
        size_t bit = 0, off = 0;
        int64_t P = 0;
        for (int c = 0; c < G_MT_CASES; c++) {
                const struct g_mt_case *g = &g_mt_cases[c];
                struct det_gt_mask *gt = &gts[c];
                gt->kind = DET_GT_MASK_POLYGONS;
                gt->poly.n = (uint32_t)g->nparts;
                gt->poly.len = g_mt_len + g->first_part;
                gt->poly.xy = xy + off;
                for (int p = 0; p < g->nparts; p++)
                        off += g_mt_len[g->first_part + p];
                int M = g->M;
                float *t = xmalloc((size_t)M * M * sizeof(float));
                int r = det_mask_target(gt, g->box, M, t);
                int wrong = r != 0;
                for (int q = 0; q < M * M; q++)
                        wrong += t[q] != (float)hexbit(g_mt_bits, bit + (size_t)q);
                float *tc = xmalloc((size_t)M * M * sizeof(float));
                det_mask_target_columns(gt, g->box, M, tc);
                col_bad += memcmp(tc, t, (size_t)M * M * sizeof(float)) != 0;
                free(tc);
                if (wrong) {
                        bad_cases++;
                        printf("# case %d: %d of %d pixels differ\n", c, wrong, M * M);
                }
                if (M == 28) {
                        memcpy(props + 4 * P, g->box, 4 * sizeof(float));
                        memcpy(all + (size_t)P * 784, t, 784 * sizeof(float));
                        matched[P++] = c;
                }
                bit += (size_t)M * M;
                free(t);
        }
        is_int(bad_cases, 0, "[R] polygon mask targets: pycocotools' bits exactly, every case");
        is_int(col_bad, 0, "the GPU's column rule on the host: the same bits, every case");
        float *batch = xmalloc((size_t)P * 784 * sizeof(float));
        is_int(det_mask_targets(gts, G_MT_CASES, props, matched, P, 28, batch), 0, "det_mask_targets: a batch");
        ok(memcmp(batch, all, (size_t)P * 784 * sizeof(float)) == 0, "det_mask_targets: the same as one by one");
        free(batch);
        free(all);
        free(props);
        free(gts);
        free(matched);
        free(xy);
}

static void test_rle_targets(void)
{
        uint8_t *m = xmalloc(G_RT_H * G_RT_W);
        for (int q = 0; q < G_RT_H * G_RT_W; q++)
                m[q] = (uint8_t)hexbit(g_rt_mask, (size_t)q);
        _cleanup_rle_ struct rle r = RLE_INIT;
        rle_encode_rows(&r, m, G_RT_H, G_RT_W, G_RT_W);
        struct det_gt_mask gt = { .kind = DET_GT_MASK_RLE, .rle = { G_RT_H, G_RT_W, r.m, r.cnts } };
        int nb = (int)(sizeof(g_rt_boxes) / sizeof(g_rt_boxes[0]) / 4), wrong = 0;
        float t[G_RT_M * G_RT_M];
        for (int b = 0; b < nb; b++) {
                det_mask_target(&gt, g_rt_boxes + 4 * b, G_RT_M, t);
                for (int q = 0; q < G_RT_M * G_RT_M; q++)
                        wrong += t[q] != (float)hexbit(g_rt_targets, (size_t)(b * G_RT_M * G_RT_M + q));
        }
        is_int(wrong, 0, "RLE objects: nearest at the bin centres, as the generator's numpy");
        free(m);
}

/* The column rule (masks-impl.h, the GPU's) against rle_from_poly on random
 * polygons: vertices inside, outside and on the grid, negative, repeated,
 * collinear; grids from 1 to 100 pixels; several parts. */
static void test_columns_fuzz(void)
{
        static const int Ms[] = { 1, 2, 7, 28, 33, 64, 100 };
        int bad = 0, cases = 0;
        lcg_s = 99;
        for (int it = 0; it < 400; it++) {
                int M = Ms[it % 7], nparts = 1 + (int)lcg_u(3);
                uint32_t len[3];
                double xy[3 * 2 * 12];
                size_t o = 0;
                for (int p = 0; p < nparts; p++) {
                        int k = 3 + (int)lcg_u(10);
                        len[p] = (uint32_t)(2 * k);
                        for (int j = 0; j < 2 * k; j++) {
                                double v = (double)(lcg_u(4001) - 1000) / 2000.0 * M;  /* -0.5 M .. 1.5 M */
                                if (lcg_u(8) == 0)
                                        v = (double)(lcg_u(2 * M + 3) - 1) / 2.0;      /* on the half grid */
                                if (j >= 2 && lcg_u(10) == 0)
                                        v = xy[o + j - 2];                              /* a repeated vertex */
                                xy[o + j] = (float)v;
                        }
                        o += 2 * k;
                }
                struct det_gt_mask gt = { .kind = DET_GT_MASK_POLYGONS, .poly = { (uint32_t)nparts, len, xy } };
                float box[4] = { 0, 0, (float)M, (float)M };   /* scale 1: the coordinates as drawn */
                float *a = xmalloc((size_t)M * M * sizeof(float)), *b = xmalloc((size_t)M * M * sizeof(float));
                det_mask_target(&gt, box, M, a);
                det_mask_target_columns(&gt, box, M, b);
                if (memcmp(a, b, (size_t)M * M * sizeof(float))) {
                        if (!bad)
                                printf("# first difference: iteration %d, M %d\n", it, M);
                        bad++;
                }
                cases++;
                free(a);
                free(b);
        }
        is_int(bad, 0, "column rule = rle_from_poly on 400 random polygons (M 1 to 100)");
        float t[4];
        is_int(det_mask_target_columns(NULL, t, DET_MASK_COLUMN_MAX + 1, t), -EINVAL, "column rule: M too large");
        (void)cases;
}

/* ---- postprocess ---- */

static void lcg_inputs(int N, int K, int seed, int W, int H, float *logits, float *deltas, float *props)
{
        lcg_s = (uint64_t)seed;
        for (int q = 0; q < N * K; q++)
                logits[q] = (float)((lcg_u(2049) - 1024) / 256.0);
        for (int q = 0; q < N * 4 * K; q++)
                deltas[q] = (float)((lcg_u(1025) - 512) / 512.0);
        for (int i = 0; i < N; i++) {
                double x1 = lcg_u(W * 16) / 16.0, y1 = lcg_u(H * 16) / 16.0;
                double w = 1 + lcg_u(W * 8) / 16.0, h = 1 + lcg_u(H * 8) / 16.0;
                props[4 * i] = (float)x1;
                props[4 * i + 1] = (float)y1;
                props[4 * i + 2] = (float)fmin(x1 + w, W);
                props[4 * i + 3] = (float)fmin(y1 + h, H);
        }
}

static int close_to(double got, double want, double rel, double floor_)
{
        double scale = fabs(want) > floor_ ? fabs(want) : floor_;
        return fabs(got - want) <= rel * scale;
}

static void check_dets(const struct det_dets *d, int64_t n, const float *boxes, const float *scores,
                       const int32_t *labels, const char *what)
{
        char msg[160];
        snprintf(msg, sizeof(msg), "%s: detection count", what);
        is_int(d->n, n, msg);
        if (d->n != n)
                return;
        int64_t bl = -1, bs = -1, bb = -1;
        for (int64_t i = 0; i < n; i++) {
                if (bl < 0 && d->labels[i] != labels[i])
                        bl = i;
                if (bs < 0 && !close_to(d->scores[i], scores[i], 1e-6, 1e-3))
                        bs = i;
                double big = 1;
                for (int q = 0; q < 4; q++)
                        big = fmax(big, fabs(boxes[4 * i + q]));
                for (int q = 0; q < 4; q++)
                        if (bb < 0 && !close_to(d->boxes[4 * i + q], boxes[4 * i + q], 1e-6, big))
                                bb = i;
        }
        snprintf(msg, sizeof(msg), "%s: labels and order", what);
        if (!ok(bl < 0, msg))
                printf("#   %lld: label %d, want %d\n", (long long)bl, d->labels[bl], labels[bl]);
        snprintf(msg, sizeof(msg), "%s: scores", what);
        if (!ok(bs < 0, msg))
                printf("#   %lld: %.9g, want %.9g\n", (long long)bs, d->scores[bs], scores[bs]);
        snprintf(msg, sizeof(msg), "%s: boxes", what);
        if (!ok(bb < 0, msg))
                printf("#   %lld: %.9g %.9g %.9g %.9g, want %.9g %.9g %.9g %.9g\n", (long long)bb, d->boxes[4 * bb],
                       d->boxes[4 * bb + 1], d->boxes[4 * bb + 2], d->boxes[4 * bb + 3], boxes[4 * bb],
                       boxes[4 * bb + 1], boxes[4 * bb + 2], boxes[4 * bb + 3]);
}

static void test_postprocess(void)
{
        for (int c = 0; c < G_PP_CASES; c++) {
                const struct g_pp_case *g = &g_pp_cases[c];
                float *logits = xmalloc((size_t)g->N * g->K * sizeof(float));
                float *deltas = xmalloc((size_t)g->N * g->K * 4 * sizeof(float));
                float *props = xmalloc((size_t)g->N * 4 * sizeof(float));
                lcg_inputs(g->N, g->K, g->seed, g->W, g->H, logits, deltas, props);
                char what[96];
                for (int conv = 0; conv < 2; conv++) {
                        struct det_post_config pc = conv ? det_post_mlperf : det_post_torchvision;
                        pc.detections_per_img = g->dets;
                        struct det_dets d;
                        int r = det_postprocess(conv ? MP : TV, &pc, logits, deltas, props, g->N, g->K, g->H, g->W,
                                                &d);
                        snprintf(what, sizeof(what), "case %d %s: postprocess returns 0", c,
                                 conv ? "[R]" : "[TV]");
                        is_int(r, 0, what);
                        det_resize_boxes(conv ? MP : TV, d.boxes, d.n, g->H, g->W, g->orig_h, g->orig_w);
                        snprintf(what, sizeof(what), "case %d %s (N %d, K %d, %d per image)", c,
                                 conv ? "[R] PostProcessor" : "[TV] postprocess_detections", g->N, g->K, g->dets);
                        if (conv)
                                check_dets(&d, g->n_r, g_pp_r_boxes + 4 * g->first_r, g_pp_r_scores + g->first_r,
                                           g_pp_r_labels + g->first_r, what);
                        else
                                check_dets(&d, g->n_tv, g_pp_tv_boxes + 4 * g->first_tv,
                                           g_pp_tv_scores + g->first_tv, g_pp_tv_labels + g->first_tv, what);
                        det_dets_release(&d);
                }
                free(logits);
                free(deltas);
                free(props);
        }
}

/* the reference keeps every detection scoring >= the k-th largest: ties
 * beyond the limit stay; torchvision stops at the limit */
static void test_kthvalue_ties(void)
{
        enum { N = 6, K = 2 };
        float logits[N * K], deltas[N * K * 4], props[N * 4];
        memset(deltas, 0, sizeof(deltas));
        for (int i = 0; i < N; i++) {
                logits[2 * i] = 0;
                logits[2 * i + 1] = i < 5 ? 1.0f : 2.0f;        /* five equal scores and a higher one */
                float x = 20.0f * i;
                float b[4] = { x, 0, x + 10, 10 };
                memcpy(props + 4 * i, b, sizeof(b));
        }
        struct det_post_config pc = det_post_mlperf;
        pc.detections_per_img = 3;
        struct det_dets d;
        det_postprocess(MP, &pc, logits, deltas, props, N, K, 200, 200, &d);
        is_int(d.n, 6, "[R] kthvalue cut at 3: the five tied scores all stay");
        det_dets_release(&d);
        pc = det_post_torchvision;
        pc.detections_per_img = 3;
        det_postprocess(TV, &pc, logits, deltas, props, N, K, 200, 200, &d);
        is_int(d.n, 3, "[TV] top 3: three");
        ok(d.n == 3 && d.proposal[0] == 5 && d.proposal[1] == 0 && d.proposal[2] == 1,
           "[TV] top 3: the best, then ties in index order");
        det_dets_release(&d);
}

/* ---- paste ---- */

static void paste_logits(int n, int M, int seed, float *out)
{
        int c = (M + 3) / 4;
        float *coarse = xmalloc((size_t)n * c * c * sizeof(float));
        lcg_s = (uint64_t)seed;
        for (int q = 0; q < n * c * c; q++)
                coarse[q] = (float)((2 * lcg_u(129) - 128 + 1) / 16.0);
        for (int k = 0; k < n; k++)
                for (int i = 0; i < M; i++)
                        for (int j = 0; j < M; j++)
                                out[((size_t)k * M + i) * M + j] = coarse[((size_t)k * c + i / 4) * c + j / 4];
        free(coarse);
}

static void test_paste(void)
{
        enum { H = G_PASTE_H, W = G_PASTE_W, N = G_PASTE_N, M = G_PASTE_M };
        float *logits = xmalloc((size_t)N * M * M * sizeof(float));
        float *probs = xmalloc((size_t)N * M * M * sizeof(float));
        float *img = xmalloc((size_t)N * H * W * sizeof(float));
        int32_t labels[N] = { 0 };
        paste_logits(N, M, G_PASTE_SEED, logits);
        is_int(det_mask_probs(logits, labels, N, 1, M, probs), 0, "det_mask_probs");
        is_int(det_paste_masks(probs, g_paste_boxes, N, M, H, W, img), 0, "det_paste_masks");
        double worst = 0;
        int64_t edge = 0, string_same = 0, decodes = 0, agree = 0;
        uint8_t *mine = xmalloc(H * W), *theirs = xmalloc((size_t)H * W), *back = xmalloc((size_t)H * W);
        for (int k = 0; k < N; k++) {
                const int *rg = g_paste_region + 5 * k;
                const float *o = img + (size_t)k * H * W;
                for (int y = 0; y < H; y++)
                        for (int x = 0; x < W; x++) {
                                double want = 0;
                                if (x >= rg[0] && x < rg[2] && y >= rg[1] && y < rg[3])
                                        want = g_paste_vals[rg[4] + (y - rg[1]) * (rg[2] - rg[0]) + (x - rg[0])] /
                                               1048576.0;
                                double d = fabs(o[y * W + x] - want);
                                worst = d > worst ? d : worst;
                        }
                /* thresholded: mine (column-major) against pycocotools' string of torchvision's */
                _cleanup_rle_ struct rle rt = RLE_INIT, rm = RLE_INIT, rb = RLE_INIT;
                rle_from_string(&rt, g_paste_rle[k], H, W);
                rle_decode(&rt, theirs);
                det_mask_rle(o, H, W, 0.5f, &rm);
                rle_decode(&rm, mine);
                int64_t diff = 0;
                for (int q = 0; q < H * W; q++)
                        diff += mine[q] != theirs[q];
                edge += diff;
                char *s = rle_to_string(&rm);
                rle_from_string(&rb, s, H, W);
                rle_decode(&rb, back);
                decodes += rle_check(&rb) == 0 && memcmp(back, mine, (size_t)H * W) == 0;
                if (!diff) {
                        agree++;
                        string_same += strcmp(s, g_paste_rle[k]) == 0;
                }
                free(s);
        }
        if (!ok(worst <= 1e-5 + 1.0 / (1 << 21), "paste: soft masks within 1e-5 of torchvision's"))
                printf("#   worst difference %.3g\n", worst);
        if (!ok(edge * 1000 <= (int64_t)N * H * W, "paste: > 0.5 pixels, <= 0.1% differ from torchvision's"))
                printf("#   %lld of %d pixels differ\n", (long long)edge, N * H * W);
        printf("# %lld of %d thresholded pixels differ at the 0.5 edge\n", (long long)edge, N * H * W);
        is_int(decodes, N, "paste: each RLE string decodes to the thresholded mask");
        ok(agree > 0 && string_same == agree, "paste: the RLE string is pycocotools' wherever the masks agree");
        free(logits);
        free(probs);
        free(img);
        free(mine);
        free(theirs);
        free(back);
}

/* ---- bad input ---- */

static int all_zero(const float *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (v[i] != 0)
                        return 0;
        return 1;
}

static void test_bad_targets(void)
{
        float t[28 * 28];
        double tri[6] = { 2, 2, 20, 3, 10, 25 };
        uint32_t len1[1] = { 6 };
        struct det_gt_mask gt = { .kind = DET_GT_MASK_POLYGONS, .poly = { 1, len1, tri } };
        float box[4] = { 0, 0, 28, 28 };
        det_mask_target(&gt, box, 28, t);
        ok(!all_zero(t, 784), "a plain triangle has pixels");
        float nanbox[4] = { NAN, 0, 28, 28 };
        det_mask_target(&gt, nanbox, 28, t);
        ok(all_zero(t, 784), "NaN box: zeros");
        float negbox[4] = { 10, 10, 5, 5 };
        is_int(det_mask_target(&gt, negbox, 28, t), 0, "negative box: w, h clamped to 1, defined");
        double tri_nan[6] = { 2, NAN, 20, 3, 10, 25 };
        struct det_gt_mask gn = { .kind = DET_GT_MASK_POLYGONS, .poly = { 1, len1, tri_nan } };
        det_mask_target(&gn, box, 28, t);
        ok(all_zero(t, 784), "NaN coordinate: the part is dropped");
        double tri_big[6] = { 2, 1e30, 20, 3, 10, 25 };
        struct det_gt_mask gb = { .kind = DET_GT_MASK_POLYGONS, .poly = { 1, len1, tri_big } };
        det_mask_target(&gb, box, 28, t);
        ok(all_zero(t, 784), "coordinate of 1e30: the part is dropped");
        uint32_t len2[2] = { 4, 6 };
        double seg_tri[10] = { 0, 0, 28, 28, 2, 2, 20, 3, 10, 25 };
        struct det_gt_mask gs = { .kind = DET_GT_MASK_POLYGONS, .poly = { 2, len2, seg_tri } };
        float t2[28 * 28];
        det_mask_target(&gs, box, 28, t2);
        det_mask_target(&gt, box, 28, t);
        ok(memcmp(t, t2, sizeof(t)) == 0, "a 2-point part is dropped, not read as a box");
        struct det_gt_mask g0 = { .kind = DET_GT_MASK_POLYGONS, .poly = { 0, NULL, NULL } };
        det_mask_target(&g0, box, 28, t);
        ok(all_zero(t, 784), "no polygons: zeros");
        struct det_gt_mask gnone = { .kind = DET_GT_MASK_NONE };
        det_mask_target(&gnone, box, 28, t);
        ok(all_zero(t, 784), "no mask: zeros");
        uint32_t cnts[3] = { 3, 100, 2 };      /* covers 105 of 6 x 6 */
        struct det_gt_mask gr = { .kind = DET_GT_MASK_RLE, .rle = { 6, 6, 3, cnts } };
        det_mask_target(&gr, box, 28, t);
        ok(all_zero(t, 784), "RLE whose counts do not cover its size: zeros");
        is_int(det_mask_target(&gt, box, 0, t), -EINVAL, "M 0: -EINVAL");
        int64_t m_bad[1] = { 1 };
        is_int(det_mask_targets(&gt, 1, box, m_bad, 1, 28, t), -EINVAL, "matched index out of range: -EINVAL");
        is_int(det_mask_targets(&gt, 1, NULL, NULL, 0, 28, t), 0, "no positives: 0");
}

static void test_bad_postprocess(void)
{
        struct det_dets d;
        is_int(det_postprocess(TV, &det_post_torchvision, NULL, NULL, NULL, 0, 5, 10, 10, &d), 0, "N 0: 0");
        is_int(d.n, 0, "N 0: no detections");
        det_dets_release(&d);
        is_int(det_postprocess(TV, &det_post_torchvision, NULL, NULL, NULL, 0, 1, 10, 10, &d), -EINVAL,
               "K 1: -EINVAL");
        enum { N = 4, K = 3 };
        float logits[N * K] = { 0, 3, 1, NAN, 1, 1, 0, 2, 2, 0, 1, 4 };
        float deltas[N * K * 4], props[N * 4] = { 0, 0, 10, 10, 5, 5, 30, 30, NAN, 0, 10, 10, 8, 8, 8, 8 };
        memset(deltas, 0, sizeof(deltas));
        deltas[(0 * K + 1) * 4 + 2] = NAN;     /* proposal 0, class 1: NaN width */
        for (int conv = 0; conv < 2; conv++) {
                int r = det_postprocess(conv ? MP : TV, conv ? &det_post_mlperf : &det_post_torchvision, logits,
                                        deltas, props, N, K, 40, 40, &d);
                is_int(r, 0, conv ? "[R] NaN logits, deltas, boxes, a zero box: 0" :
                       "[TV] NaN logits, deltas, boxes, a zero box: 0");
                int nan_row = 0, nan_box = 0;
                for (int64_t i = 0; i < d.n; i++) {
                        nan_row += d.proposal[i] == 1;
                        nan_box += isnan(d.boxes[4 * i]) || isnan(d.boxes[4 * i + 2]);
                }
                is_int(nan_row, 0, "a NaN logit: no detection from its proposal");
                if (conv)
                        ok(nan_box > 0, "[R]: NaN boxes are kept (no size rule), never suppress");
                else
                        is_int(nan_box, 0, "[TV]: NaN boxes removed by the size rule");
                int zero = 0;
                for (int64_t i = 0; i < d.n; i++)
                        zero += d.proposal[i] == 3;
                if (conv)
                        ok(zero > 0, "[R]: a zero-size proposal decodes to a 1 px box and stays");
                else
                        is_int(zero, 0, "[TV]: a zero-size proposal is removed by the size rule");
                det_dets_release(&d);
        }
}

static void test_bad_paste(void)
{
        enum { M = 4, H = 8, W = 8 };
        float mask[M * M], out[3 * H * W];
        for (int q = 0; q < M * M; q++)
                mask[q] = 1;
        float boxes[3 * 4] = { NAN, 0, 4, 4, 100, 100, 120, 120, -1e20f, -1e20f, 1e20f, 1e20f };
        float masks3[3 * M * M];
        for (int k = 0; k < 3; k++)
                memcpy(masks3 + k * M * M, mask, sizeof(mask));
        is_int(det_paste_masks(masks3, boxes, 3, M, H, W, out), 0, "paste: bad boxes return 0");
        ok(all_zero(out, 3 * H * W), "paste: NaN, outside the image, beyond 2^30: nothing pasted");
        is_int(det_paste_masks(masks3, boxes, 0, M, H, W, out), 0, "paste: no detections");
        is_int(det_paste_masks(masks3, boxes, 1, 0, H, W, out), -EINVAL, "paste: M 0: -EINVAL");
        _cleanup_rle_ struct rle r = RLE_INIT;
        is_int(det_mask_rle(out, 0, 0, 0.5f, &r), 0, "RLE of an empty image");
        int32_t lab[1] = { 7 };
        float p[M * M];
        det_mask_probs(mask, lab, 1, 1, M, p);
        ok(all_zero(p, M * M), "a label outside [0, K): zeros");
}

/* extreme values everywhere: defined results in range, no crash (ASan and
 * UBSan builds check the reads and conversions) */
static float wild(void)
{
        static const float v[] = { 0, 1, -1, 0.5f, 27.9f, -3e9f, 3e9f, 1e20f, -1e20f, 1e30f, NAN, INFINITY,
                                   -INFINITY, 1e-30f, 2e5f, -2e5f };
        int64_t k = lcg_u(24);
        return k < 16 ? v[k] : (float)(lcg_u(20001) - 10000) / 64.0f;
}

static void test_wild(void)
{
        enum { M = 14, H = 20, W = 24, N = 64 };
        lcg_s = 5;
        float boxes[N * 4], masks[N * M * M], out[N * H * W], t[M * M];
        double xy[N * 2];
        for (int q = 0; q < N * 4; q++)
                boxes[q] = wild();
        for (int q = 0; q < N * M * M; q++)
                masks[q] = (float)lcg_u(1001) / 1000.0f;
        for (int q = 0; q < N * 2; q++)
                xy[q] = wild();
        det_paste_masks(masks, boxes, N, M, H, W, out);
        int in_range = 1;
        for (int q = 0; q < N * H * W; q++)
                in_range &= out[q] >= 0 && out[q] <= 1;
        ok(in_range, "paste, wild boxes: every value in [0, 1]");
        uint32_t len[4] = { 32, 6, 64, 26 };
        struct det_gt_mask gt = { .kind = DET_GT_MASK_POLYGONS, .poly = { 4, len, xy } };
        in_range = 1;
        for (int b = 0; b < N; b++) {
                det_mask_target(&gt, boxes + 4 * b, M, t);
                for (int q = 0; q < M * M; q++)
                        in_range &= t[q] == 0 || t[q] == 1;
        }
        ok(in_range, "mask targets, wild boxes and coordinates: every target 0 or 1");
        float logits[N * 3], deltas[N * 12];
        for (int q = 0; q < N * 3; q++)
                logits[q] = wild();
        for (int q = 0; q < N * 12; q++)
                deltas[q] = wild();
        struct det_dets d;
        for (int conv = 0; conv < 2; conv++) {
                int r = det_postprocess(conv ? MP : TV, conv ? &det_post_mlperf : &det_post_torchvision, logits,
                                        deltas, boxes, N, 3, H, W, &d);
                int good = r == 0 && d.n <= N * 2;
                for (int64_t i = 0; i < d.n; i++)
                        good &= d.scores[i] > 0.05f && d.labels[i] >= 1 && d.labels[i] <= 2;
                ok(good, conv ? "[R] postprocess, wild inputs: scores above the threshold, labels 1..K-1" :
                   "[TV] postprocess, wild inputs: scores above the threshold, labels 1..K-1");
                det_dets_release(&d);
        }
}

/* ---- the backend-level calls on the CPU ---- */

static void test_backend(void)
{
        struct bd_backend *be = NULL;
        struct bd_err err = { 0 };
        if (!ok(bd_backend_cpu_new(1, &be, &err) == 0, "CPU backend"))
                return;
        const struct g_pp_case *g = &g_pp_cases[0];
        float *logits = xmalloc((size_t)g->N * g->K * sizeof(float));
        float *deltas = xmalloc((size_t)g->N * g->K * 4 * sizeof(float));
        float *props = xmalloc((size_t)g->N * 4 * sizeof(float));
        lcg_inputs(g->N, g->K, g->seed, g->W, g->H, logits, deltas, props);
        int64_t dl[2] = { g->N, g->K }, dd[2] = { g->N, 4 * g->K }, dp[2] = { g->N, 4 };
        struct bd_tensor tl = bd_tensor_view(logits, BD_CPU, BD_F32, BD_NCHW, 2, dl);
        struct bd_tensor td = bd_tensor_view(deltas, BD_CPU, BD_F32, BD_NCHW, 2, dd);
        struct bd_tensor tp = bd_tensor_view(props, BD_CPU, BD_F32, BD_NCHW, 2, dp);
        struct det_post_config pc = det_post_torchvision;
        pc.detections_per_img = g->dets;
        struct det_dets a, b;
        is_int(det_op_postprocess(be, TV, &pc, &tl, &td, &tp, g->H, g->W, &a), 0, "det_op_postprocess on the CPU");
        det_postprocess(TV, &pc, logits, deltas, props, g->N, g->K, g->H, g->W, &b);
        ok(a.n == b.n && memcmp(a.boxes, b.boxes, (size_t)a.n * 16) == 0, "det_op_postprocess = det_postprocess");
        det_dets_release(&a);
        det_dets_release(&b);
        is_int(det_op_postprocess(be, TV, &pc, &tl, &tl, &tp, g->H, g->W, &a), -EINVAL, "deltas of the wrong shape");
        like(be->err.msg, "box deltas has the wrong shape", "the message says what is wrong");
        float mk[2 * 28 * 28], bx[8] = { 1, 2, 20, 30, 5, 5, 9, 9 };
        for (int q = 0; q < 2 * 784; q++)
                mk[q] = (float)(q % 29) / 29.0f;
        int64_t dm[3] = { 2, 28, 28 }, db[2] = { 2, 4 };
        struct bd_tensor tm = bd_tensor_view(mk, BD_CPU, BD_F32, BD_NCHW, 3, dm);
        struct bd_tensor tb = bd_tensor_view(bx, BD_CPU, BD_F32, BD_NCHW, 2, db), to;
        memset(&to, 0, sizeof(to));
        is_int(det_op_paste_masks(be, &tm, &tb, 32, 40, &to), 0, "det_op_paste_masks on the CPU");
        float *ref = xmalloc(2 * 32 * 40 * sizeof(float));
        det_paste_masks(mk, bx, 2, 28, 32, 40, ref);
        ok(to.ndim == 3 && to.dims[1] == 32 && memcmp(to.data, ref, 2 * 32 * 40 * sizeof(float)) == 0,
           "det_op_paste_masks = det_paste_masks");
        free(ref);
        bd_tensor_release(&to);
        double tri[6] = { 2, 2, 20, 3, 10, 25 };
        uint32_t len1[1] = { 6 };
        struct det_gt_mask gt = { .kind = DET_GT_MASK_POLYGONS, .poly = { 1, len1, tri } };
        int64_t matched[2] = { 0, 0 };
        float t2[2 * 784];
        is_int(det_op_mask_targets(be, &gt, 1, &tb, matched, 28, &to), 0, "det_op_mask_targets on the CPU");
        det_mask_targets(&gt, 1, bx, matched, 2, 28, t2);
        ok(memcmp(to.data, t2, sizeof(t2)) == 0, "det_op_mask_targets = det_mask_targets");
        struct bd_tensor th = { 0 };
        is_int(det_op_mask_targets_h(be, &gt, 1, bx, matched, 2, 28, &th), 0, "det_op_mask_targets_h on the CPU");
        ok(th.ndim == 3 && th.dims[0] == 2 && memcmp(th.data, t2, sizeof(t2)) == 0,
           "det_op_mask_targets_h (proposals on the host) = det_mask_targets");
        is_int(det_op_mask_targets_h(be, &gt, 1, bx, matched, 2, 0, &th), -EINVAL, "M 0: -EINVAL");
        bd_tensor_release(&th);
        matched[1] = 3;
        is_int(det_op_mask_targets(be, &gt, 1, &tb, matched, 28, &to), -EINVAL, "a match out of range: -EINVAL");
        like(be->err.msg, "matched to 3 of 1", "the message names it");
        bd_tensor_release(&to);
        free(logits);
        free(deltas);
        free(props);
        bd_backend_free(be);
}

int main(void)
{
        test_targets();
        test_rle_targets();
        test_columns_fuzz();
        test_postprocess();
        test_kthvalue_ties();
        test_paste();
        test_bad_targets();
        test_bad_postprocess();
        test_bad_paste();
        test_wild();
        test_backend();
        return done_testing();
}

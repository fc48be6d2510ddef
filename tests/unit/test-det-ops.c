/* test-det-ops.c: the box operators of trainer/det/boxes.[ch].
 *
 * torchvision convention against torchvision 0.14's answers recorded by
 * tests/det-ops-golden.py in det-ops-golden.h:
 *   AnchorGenerator: exact (integer-valued floats);
 *   BoxCoder encode: |got - want| <= 1e-6 max(|want|, 1) (codes are O(1));
 *   BoxCoder decode: |got - want| <= 1e-6 max(the row's largest |want|, 1)
 *     (x1 = cx - w/2 cancels: the error is relative to the operands);
 *   box_iou: |got - want| <= 1e-6 max(|want|, 1e-3);
 *   nms, batched_nms: exact keep lists (indices and order), including
 *     batched_nms' coordinate trick (<= 1000 boxes) and per-class path.
 * MLPerf convention against the reference file (maskrcnn.md section 1):
 *   the Detectron cell anchors of P2..P6 exactly, the anchor count at
 *   800x1344, straddle visibility, and hand-computed +1 coder, IoU and
 *   NMS (>= thr) values, with the same tolerances.
 * Then bad input: NaN, zero and negative boxes, empty and negative counts.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "boxes.h"
#include "tap.h"
#include "det-ops-golden.h"

static const struct det_conv *MP = &det_conv_mlperf, *TV = &det_conv_torchvision;

static int close_to(double got, double want, double rel, double floor_)
{
        double scale = fabs(want) > floor_ ? fabs(want) : floor_;
        return fabs(got - want) <= rel * scale;
}

static void check_floats(const float *got, const float *want, int64_t n, double rel, double floor_,
                         const char *what)
{
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++)
                if (!close_to(got[i], want[i], rel, floor_))
                        bad = i;
        if (!ok(bad < 0, what))
                printf("#   element %lld: got %.9g, want %.9g\n", (long long)bad, got[bad], want[bad]);
}

static void check_keep(const int64_t *got, int64_t ngot, const int64_t *want, int64_t nwant, const char *what)
{
        int64_t bad = -1;
        if (ngot == nwant)
                for (int64_t i = 0; i < ngot && bad < 0; i++)
                        if (got[i] != want[i])
                                bad = i;
        if (!ok(ngot == nwant && bad < 0, what)) {
                printf("#   got %lld kept, want %lld\n", (long long)ngot, (long long)nwant);
                if (bad >= 0)
                        printf("#   position %lld: got %lld, want %lld\n", (long long)bad, (long long)got[bad],
                               (long long)want[bad]);
        }
}

/* ---- anchors ---- */

static void test_anchors_tv(void)
{
        const short *want = g_anchors;
        for (int c = 0; c < G_ANCHOR_CASES; c++) {
                const struct g_anchor_case *g = &g_anchor_cases[c];
                float cell[16 * 4];
                int nc = det_cell_anchors(TV, g->stride_x, g->sizes, g->nsizes, g->ratios, g->nratios, cell);
                is_int(nc, g->nsizes * g->nratios, "torchvision: cell anchor count");
                float *a = xmalloc((size_t)g->n * 4 * sizeof(float));
                int64_t n = det_grid_anchors(cell, nc, g->fh, g->fw, g->stride_y, g->stride_x, a);
                is_int(n, g->n, "torchvision: grid anchor count = AnchorGenerator's");
                int64_t bad = -1;
                for (int64_t i = 0; i < 4 * n && bad < 0; i++)
                        if (a[i] != (float)want[i])
                                bad = i;
                char what[128];
                snprintf(what, sizeof(what), "torchvision: AnchorGenerator case %d (%dx%d map, stride %d,%d) exact",
                         c, g->fh, g->fw, g->stride_y, g->stride_x);
                if (!ok(bad < 0, what))
                        printf("#   element %lld: got %g, want %d\n", (long long)bad, a[bad], want[bad]);
                uint8_t *vis = xmalloc((size_t)n);
                is_int(det_anchor_visibility(TV, a, n, (float)g->img_w, (float)g->img_h, vis), n,
                       "torchvision: no straddle rule, every anchor visible");
                free(vis);
                free(a);
                want += 4 * n;
        }
}

static void test_anchors_mlperf(void)
{
        /* maskrcnn.md: [R] cell anchors, P2..P6 */
        static const float table[5][3][4] = {
                { { -22, -10, 25, 13 }, { -14, -14, 17, 17 }, { -10, -22, 13, 25 } },
                { { -40, -20, 47, 27 }, { -28, -28, 35, 35 }, { -20, -44, 27, 51 } },
                { { -84, -40, 99, 55 }, { -56, -56, 71, 71 }, { -36, -80, 51, 95 } },
                { { -164, -72, 195, 103 }, { -112, -112, 143, 143 }, { -76, -168, 107, 199 } },
                { { -332, -152, 395, 215 }, { -224, -224, 287, 287 }, { -148, -328, 211, 391 } },
        };
        static const float ratios[3] = { 0.5f, 1.0f, 2.0f };
        for (int l = 0; l < 5; l++) {
                float size = (float)(32 << l), cell[12];
                int stride = 4 << l;
                is_int(det_cell_anchors(MP, stride, &size, 1, ratios, 3, cell), 3, "mlperf: 3 cell anchors");
                char what[96];
                snprintf(what, sizeof(what), "mlperf: P%d cell anchors = the reference table (exact)", l + 2);
                ok(memcmp(cell, table[l], sizeof(cell)) == 0, what);
                if (memcmp(cell, table[l], sizeof(cell)) != 0)
                        for (int r = 0; r < 3; r++)
                                printf("#   got (%g,%g,%g,%g)\n", cell[4 * r], cell[4 * r + 1], cell[4 * r + 2],
                                       cell[4 * r + 3]);
        }
        /* torchvision's P2 from the same file */
        float size = 32, cell[12];
        det_cell_anchors(TV, 4, &size, 1, ratios, 3, cell);
        static const float tvp2[12] = { -23, -11, 23, 11, -16, -16, 16, 16, -11, -23, 11, 23 };
        ok(memcmp(cell, tvp2, sizeof(cell)) == 0, "torchvision: P2 cell anchors = the reference file's (exact)");

        /* shifting: P2 on a 2x3 map, location (y 1, x 2), ratio 1 is anchor (1*3+2)*3+1 */
        det_cell_anchors(MP, 4, &size, 1, ratios, 3, cell);
        float g[2 * 3 * 3 * 4];
        is_int(det_grid_anchors(cell, 3, 2, 3, 4, 4, g), 18, "mlperf: 2x3 map, 18 anchors");
        const float *a = g + 4 * 16;
        ok(a[0] == -6 && a[1] == -10 && a[2] == 25 && a[3] == 21, "mlperf: anchor 16 = cell 1 shifted by (8, 4)");

        /* 800x1344: P2 200x336 ... P6 13x21, 268,569 anchors */
        static const int fh[5] = { 200, 100, 50, 25, 13 }, fw[5] = { 336, 168, 84, 42, 21 };
        float *all = xmalloc((size_t)268569 * 4 * sizeof(float));
        int64_t n = 0;
        for (int l = 0; l < 5; l++) {
                float sz = (float)(32 << l);
                det_cell_anchors(MP, 4 << l, &sz, 1, ratios, 3, cell);
                n += det_grid_anchors(cell, 3, fh[l], fw[l], 4 << l, 4 << l, all + 4 * n);
        }
        is_int(n, 268569, "mlperf: 268,569 anchors at 800x1344");
        uint8_t *vis = xmalloc((size_t)n);
        int64_t nv = det_anchor_visibility(MP, all, n, 1344, 800, vis);
        int64_t count = 0, wrong = 0;
        for (int64_t i = 0; i < n; i++) {
                const float *b = all + 4 * i;
                int v = b[0] >= 0 && b[1] >= 0 && b[2] < 1344 && b[3] < 800;
                count += v;
                wrong += v != vis[i];
        }
        ok(nv == count && wrong == 0 && nv > 0 && nv < n, "mlperf: visibility = x1>=0, y1>=0, x2<W, y2<H");
        free(vis);
        free(all);

        /* the straddle edges */
        static const float e[5][4] = { { 0, 0, 19.5f, 9.5f }, { 0, 0, 20, 9 }, { -0.5f, 0, 5, 5 },
                                        { 0, 0, 19, 10 }, { 0, -1e-6f, 3, 3 } };
        uint8_t v[5];
        is_int(det_anchor_visibility(MP, &e[0][0], 5, 20, 10, v), 1, "mlperf: one of the edge anchors visible");
        ok(v[0] == 1 && v[1] == 0 && v[2] == 0 && v[3] == 0 && v[4] == 0, "mlperf: x2 >= W, y2 >= H, x1, y1 < 0 invisible");
        struct det_conv st = det_conv_mlperf;
        st.straddle = 1;
        is_int(det_anchor_visibility(&st, &e[0][0], 5, 20, 10, v), 5, "straddle 1: all five visible");

        ok(det_cell_anchors(MP, 0, &size, 1, ratios, 3, cell) == -EINVAL, "stride 0 is -EINVAL");
        ok(det_cell_anchors(TV, 4, &size, 0, ratios, 3, cell) == -EINVAL, "no sizes is -EINVAL");
        ok(det_grid_anchors(cell, 3, -1, 3, 4, 4, g) == -EINVAL, "negative map is -EINVAL");
        is_int(det_grid_anchors(cell, 3, 0, 3, 4, 4, g), 0, "empty map: no anchors");
}

/* ---- box coder ---- */

static void check_decoded(const float *got, const float *want, int64_t rows, const char *what)
{
        int64_t bad = -1;
        for (int64_t r = 0; r < rows && bad < 0; r++) {
                double m = 1;
                for (int q = 0; q < 4; q++)
                        m = fmax(m, fabs(want[4 * r + q]));
                for (int q = 0; q < 4; q++)
                        if (!(fabs(got[4 * r + q] - want[4 * r + q]) <= 1e-6 * m))
                                bad = 4 * r + q;
        }
        if (!ok(bad < 0, what))
                printf("#   element %lld: got %.9g, want %.9g\n", (long long)bad, got[bad], want[bad]);
}

static void test_coder(void)
{
        const struct det_coder w1 = { 1, 1, 1, 1, (float)DET_BBOX_XFORM_CLIP };
        const struct det_coder w10 = { 10, 10, 5, 5, (float)DET_BBOX_XFORM_CLIP };
        float enc[G_CODER_N * 4], dec[G_CODER_N * 8];

        det_encode(TV, &w1, g_gts, g_props, G_CODER_N, enc);
        check_floats(enc, g_enc_w1, G_CODER_N * 4, 1e-6, 1, "torchvision: encode, weights (1,1,1,1)");
        det_encode(TV, &w10, g_gts, g_props, G_CODER_N, enc);
        check_floats(enc, g_enc_w10, G_CODER_N * 4, 1e-6, 1, "torchvision: encode, weights (10,10,5,5)");
        det_decode(TV, &w1, g_codes, g_props, G_CODER_N, 2, dec);
        check_decoded(dec, g_dec_w1, G_CODER_N * 2, "torchvision: decode 2 classes, weights (1,1,1,1), clamp");
        det_decode(TV, &w10, g_codes, g_props, G_CODER_N, 2, dec);
        check_decoded(dec, g_dec_w10, G_CODER_N * 2, "torchvision: decode 2 classes, weights (10,10,5,5), clamp");

        /* MLPerf +1: prop (0,0,9,19): w 10, h 20, centre (5, 10); gt (2,4,13,23): w 12, h 20, centre (8, 14) */
        const float prop[4] = { 0, 0, 9, 19 }, gt[4] = { 2, 4, 13, 23 };
        float c[4], b[4];
        det_encode(MP, &w1, gt, prop, 1, c);
        const float want1[4] = { 0.3f, 0.2f, logf(1.2f), 0 };
        check_floats(c, want1, 4, 1e-6, 1, "mlperf: encode +1 widths, (1,1,1,1)");
        det_encode(MP, &w10, gt, prop, 1, c);
        const float want10[4] = { 3, 2, 5 * logf(1.2f), 0 };
        check_floats(c, want10, 4, 1e-6, 1, "mlperf: encode +1 widths, (10,10,5,5)");
        det_decode(MP, &w10, c, prop, 1, 1, b);
        check_decoded(b, gt, 1, "mlperf: decode(encode(gt)) = gt, x2 = cx + w/2 - 1");
        /* clamp: dw 10 -> log(1000/16): w' = 62.5 * 10 about cx 5: x1 = -307.5, x2 = 316.5 */
        const float big[4] = { 0, 0, 10, 0 };
        det_decode(MP, &w1, big, prop, 1, 1, b);
        const float wantc[4] = { -307.5f, 0, 316.5f, 19 };
        check_decoded(b, wantc, 1, "mlperf: decode clamps dw at log(1000/16)");
        det_decode(TV, &w1, big, prop, 1, 1, b);
        /* torchvision: w 9, centre 4.5: 62.5 * 9 = 562.5 */
        const float wantt[4] = { 4.5f - 281.25f, 0, 4.5f + 281.25f, 19 };
        check_decoded(b, wantt, 1, "torchvision: decode clamps, no -1");
}

/* ---- IoU ---- */

static void test_iou(void)
{
        float iou[10 * 13];
        det_box_iou(TV, g_iou_a, 10, g_iou_b, 13, iou);
        check_floats(iou, g_iou, 10 * 13, 1e-6, 1e-3, "torchvision: box_iou 10x13");
        ok(iou[2 * 13] == 1.0f, "torchvision: identical boxes have IoU 1");

        const float a[4] = { 0, 0, 9, 9 }, b[8] = { 5, 5, 14, 14, 9, 0, 18, 9 };
        float r[2];
        det_box_iou(MP, a, 1, b, 2, r);
        const float wm[2] = { 25.0f / 175, 10.0f / 190 };
        check_floats(r, wm, 2, 1e-6, 1e-3, "mlperf: +1 IoU 25/175, touching boxes 10/190");
        det_box_iou(TV, a, 1, b, 2, r);
        const float wt[2] = { 16.0f / 146, 0 };
        check_floats(r, wt, 2, 1e-6, 1e-3, "torchvision: IoU 16/146, touching boxes 0");
}

/* ---- NMS ---- */

static uint64_t lcg_s;

static int lcg_u(int k)
{
        lcg_s = (lcg_s * 1103515245u + 12345u) % (1u << 31);
        return (int)((lcg_s >> 8) % (uint64_t)k);
}

static void lcg_case(int n, int ncls, int seed, float *boxes, float *scores, int32_t *idx)
{
        lcg_s = (uint64_t)seed;
        for (int i = 0; i < n; i++) {
                float x1 = lcg_u(2000) / 16.0f, y1 = lcg_u(2000) / 16.0f;
                float w = 1 + lcg_u(1200) / 16.0f, h = 1 + lcg_u(1200) / 16.0f;
                boxes[4 * i] = x1, boxes[4 * i + 1] = y1, boxes[4 * i + 2] = x1 + w, boxes[4 * i + 3] = y1 + h;
                idx[i] = lcg_u(ncls);
                scores[i] = (float)((double)(((int64_t)i * 7919) % n) / n);
        }
}

static void test_nms(void)
{
        int64_t keep[G_LCG_LARGE_N];
        int64_t n;
        n = det_nms(TV, g_nms_boxes, g_nms_scores, G_NMS_N, 0.5, keep);
        check_keep(keep, n, g_nms5, G_NMS5_N, "torchvision: nms 0.5 keep list exact");
        n = det_nms(TV, g_nms_boxes, g_nms_scores, G_NMS_N, 0.3, keep);
        check_keep(keep, n, g_nms3, G_NMS3_N, "torchvision: nms 0.3 keep list exact");
        n = det_nms(TV, g_nms_boxes, g_nms_scores, G_NMS_N, 0.7, keep);
        check_keep(keep, n, g_nms7, G_NMS7_N, "torchvision: nms 0.7 keep list exact");
        n = det_batched_nms(TV, g_nms_boxes, g_nms_scores, g_nms_idx, G_NMS_N, 0.5, keep);
        check_keep(keep, n, g_bnms, G_BNMS_N, "torchvision: batched_nms 4 classes keep list exact");

        static float boxes[G_LCG_LARGE_N * 4], scores[G_LCG_LARGE_N];
        static int32_t idx[G_LCG_LARGE_N];
        lcg_case(G_LCG_SMALL_N, G_LCG_SMALL_NCLS, G_LCG_SMALL_SEED, boxes, scores, idx);
        n = det_batched_nms(TV, boxes, scores, idx, G_LCG_SMALL_N, 0.5, keep);
        check_keep(keep, n, g_lcg_small_bnms, G_LCG_SMALL_NKEEP, "torchvision: batched_nms 900 boxes (coordinate trick)");
        n = det_nms(TV, boxes, scores, G_LCG_SMALL_N, 0.5, keep);
        check_keep(keep, n, g_lcg_small_nms, G_LCG_SMALL_NMS_NKEEP, "torchvision: nms 900 boxes");
        lcg_case(G_LCG_LARGE_N, G_LCG_LARGE_NCLS, G_LCG_LARGE_SEED, boxes, scores, idx);
        n = det_batched_nms(TV, boxes, scores, idx, G_LCG_LARGE_N, 0.5, keep);
        check_keep(keep, n, g_lcg_large_bnms, G_LCG_LARGE_NKEEP, "torchvision: batched_nms 1100 boxes (per class)");
        n = det_nms(TV, boxes, scores, G_LCG_LARGE_N, 0.5, keep);
        check_keep(keep, n, g_lcg_large_nms, G_LCG_LARGE_NMS_NKEEP, "torchvision: nms 1100 boxes");

        /* > vs >=: (0,0,10,10) in (0,0,10,20): 100/200 = 0.5 exactly without +1, 121/231 with */
        const float t[8] = { 0, 0, 10, 10, 0, 0, 10, 20 }, s[2] = { 0.9f, 0.8f };
        n = det_nms(TV, t, s, 2, 0.5, keep);
        is_int(n, 2, "torchvision: IoU 0.5 = thr is kept (IoU > thr suppresses)");
        n = det_nms(MP, t, s, 2, 0.5, keep);
        ok(n == 1 && keep[0] == 0, "mlperf: +1 IoU 121/231 >= 0.5 suppressed");
        /* with +1: (0,0,9,9) in (0,0,9,19): 100/200 = 0.5 exactly */
        const float u[8] = { 0, 0, 9, 9, 0, 0, 9, 19 };
        n = det_nms(MP, u, s, 2, 0.5, keep);
        ok(n == 1 && keep[0] == 0, "mlperf: +1 IoU 0.5 = thr suppressed (>=)");
        struct det_conv gt_only = det_conv_mlperf;
        gt_only.nms_ge = 0;
        is_int(det_nms(&gt_only, u, s, 2, 0.5, keep), 2, "+1 with IoU > thr: IoU 0.5 kept");

        /* MLPerf batched: per class in class order, each by score */
        const float bb[16] = { 0, 0, 10, 10, 0, 0, 10, 10, 1, 1, 10, 10, 50, 50, 60, 60 };
        const float bs[4] = { 0.5f, 0.9f, 0.8f, 0.7f };
        const int32_t bi[4] = { 3, 1, 3, 3 };
        n = det_batched_nms(MP, bb, bs, bi, 4, 0.5, keep);
        ok(n == 3 && keep[0] == 1 && keep[1] == 2 && keep[2] == 3, "mlperf: batched per class: 1 | 2, 3 (0 suppressed by 2)");
        n = det_batched_nms(TV, bb, bs, bi, 4, 0.5, keep);
        ok(n == 3 && keep[0] == 1 && keep[1] == 2 && keep[2] == 3, "torchvision: batched keeps 1, 2, 3 by score");

        /* ties: stable, lower index first */
        const float ts[2] = { 0.5f, 0.5f };
        n = det_nms(TV, t, ts, 2, 0.3, keep);
        ok(n == 1 && keep[0] == 0, "equal scores: the lower index wins");
}

/* ---- bad input ---- */

static void test_bad(void)
{
        int64_t keep[8];
        float nan = NAN;
        const float b[20] = { nan, 0, 10, 10, 0, 0, 10, 10, 5, 5, 5, 5, 10, 10, 0, 0, 0, 0, 10, 10 };
        const float s[5] = { 0.9f, 0.8f, 0.7f, 0.6f, 0.5f };
        const int32_t c[5] = { 0, 0, 1, 1, 0 };
        int64_t n = det_nms(TV, b, s, 5, 0.5, keep);
        /* NaN box suppresses nothing and is kept; zero box kept; negative box kept; box 4 = box 1 suppressed */
        ok(n == 4 && keep[0] == 0 && keep[1] == 1 && keep[2] == 2 && keep[3] == 3, "NaN, zero, negative boxes: defined keep list");
        n = det_nms(MP, b, s, 5, 0.5, keep);
        ok(n >= 1 && n <= 5, "mlperf: the same boxes, a defined count");
        n = det_batched_nms(TV, b, s, c, 5, 0.5, keep);
        ok(n >= 1 && n <= 5, "torchvision batched with a NaN coordinate: defined count");
        const float ns[2] = { 0.1f, nan };
        const float two[8] = { 0, 0, 10, 10, 50, 50, 60, 60 };
        n = det_nms(TV, two, ns, 2, 0.5, keep);
        ok(n == 2 && keep[0] == 1 && keep[1] == 0, "NaN score sorts first (torch.sort descending)");

        float iou[5 * 5];
        det_box_iou(TV, b, 5, b, 5, iou);
        int finite = 1;
        for (int i = 0; i < 25; i++)
                finite &= isfinite(iou[i]) && iou[i] >= 0 && iou[i] <= 1;
        ok(finite, "IoU of NaN, zero and negative boxes: finite, in [0, 1]");
        is_int((int)(iou[2 * 5 + 2] * 1000), 0, "IoU of a zero box with itself (union 0) is 0");
        det_box_iou(MP, b, 5, b, 5, iou);
        ok(iou[2 * 5 + 2] == 1.0f, "mlperf: a one-pixel box (+1) with itself is 1");

        const struct det_coder w1 = { 1, 1, 1, 1, (float)DET_BBOX_XFORM_CLIP };
        float codes[20], out[20];
        det_encode(TV, &w1, b, b + 4, 4, codes);
        ok(1, "encode of NaN, zero and negative boxes returns");
        det_decode(TV, &w1, codes, b, 5, 1, out);
        ok(isnan(out[0]), "decode of a NaN box is NaN");

        is_int(det_nms(TV, b, s, 0, 0.5, keep), 0, "nms of no boxes: none kept");
        is_int(det_batched_nms(TV, b, s, c, 0, 0.5, keep), 0, "batched_nms of no boxes: none kept");
        is_int(det_nms(TV, b, s, -1, 0.5, keep), -EINVAL, "nms n < 0 is -EINVAL");
        is_int(det_batched_nms(MP, b, s, c, -1, 0.5, keep), -EINVAL, "batched_nms n < 0 is -EINVAL");
        is_int(det_anchor_visibility(MP, b, -1, 10, 10, NULL), -EINVAL, "visibility n < 0 is -EINVAL");
        ok(det_conv_get(DET_CONV_MLPERF) == &det_conv_mlperf && det_conv_get(DET_CONV_TORCHVISION) == TV,
           "det_conv_get gives the presets");
}

int main(void)
{
        test_anchors_tv();
        test_anchors_mlperf();
        test_coder();
        test_iou();
        test_nms();
        test_bad();
        return done_testing();
}

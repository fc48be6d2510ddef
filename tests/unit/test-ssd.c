/* test-ssd.c: SSD's pieces on their own (the PyTorch comparison is
 * t0650-ssd-golden.t): feature map sizes and default boxes, matching and
 * encoding on hand-made cases, the selection of hard negatives, the loss
 * against a plain double-precision version (sorting instead of selecting)
 * and against finite differences, decoding and NMS, the head gather in every
 * layout, and the whole network's backward against finite differences in
 * double precision.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ssd-loss.h"
#include "ssd-net.h"
#include "tap.h"

static struct bd_backend *be;
static struct bd_rng rng;

static int near(double a, double b, double tol)
{
        return fabs(a - b) <= tol;
}

/* ---- feature maps and default boxes ------------------------------------------------ */

static void test_dboxes(void)
{
        int f[SSD_LEVELS], pad[SSD_EXTRA];
        struct bd_err err;
        ok(ssd_feature_sizes(300, f, pad, &err) == 0, "feature sizes at 300");
        ok(f[0] == 38 && f[1] == 19 && f[2] == 10 && f[3] == 5 && f[4] == 3 && f[5] == 1,
           "300x300: maps 38, 19, 10, 5, 3, 1");
        ok(pad[3] == 0 && pad[4] == 0, "300x300: the last two extra blocks have no padding");
        ok(ssd_feature_sizes(128, f, pad, &err) == 0 && f[0] == 16 && f[1] == 8 && f[2] == 4 && f[3] == 2 &&
                   f[4] == 2 && f[5] == 2 && pad[3] == 1 && pad[4] == 1,
           "128x128: maps 16, 8, 4, 2, 2, 2 (pad 1 below 3x3)");
        ok(ssd_feature_sizes(160, f, pad, &err) == 0 && f[0] == 20 && f[3] == 3 && f[4] == 1 && f[5] == 1 &&
                   pad[3] == 0 && pad[4] == 1,
           "160x160: maps 20, 10, 5, 3, 1, 1");
        ok(ssd_feature_sizes(16, f, pad, &err) < 0 && strstr(err.msg, "image size 16"), "16x16 is refused");

        struct ssd_dboxes d;
        int ref[SSD_LEVELS] = { 38, 19, 10, 5, 3, 1 };
        ok(ssd_dboxes_init(&d, 300, ref, &err) == 0, "default boxes at 300");
        is_int(d.n, 8732, "8732 default boxes");
        is_int(d.offset[1], 38 * 38 * 4, "level 1 starts after 38 x 38 x 4");
        is_int(d.offset[5], 8732 - 4, "level 5 holds the last 4");
        /* level 0, size 0, row 0, column 0: centre 0.5 / 37.5, size 21 / 300 */
        ok(d.xywh[0] == (float)(0.5 / 37.5) && d.xywh[1] == (float)(0.5 / 37.5) && d.xywh[2] == (float)0.07 &&
                   d.xywh[3] == (float)0.07,
           "first box: centre 0.5/37.5, size 0.07");
        /* box size 1 (sqrt(21 45)/300) of level 0 starts at 38 x 38 */
        ok(d.xywh[4 * 38 * 38 + 2] == (float)(sqrt(21.0 * 45.0) / 300.0), "second size after a whole grid");
        /* level 0, size 0, row 0, column 1 */
        ok(d.xywh[4] == (float)(1.5 / 37.5) && d.xywh[5] == (float)(0.5 / 37.5), "the column varies fastest, then the row");
        /* level 5: centre 0.5, ratio-2 box 261/300 sqrt 2 wide clamped to 1 */
        const float *l5 = d.xywh + 4 * d.offset[5];
        ok(l5[0] == 0.5f && l5[1] == 0.5f, "level 5 centre 0.5");
        ok(l5[8 + 2] == 1.0f && l5[8 + 3] == (float)(0.87 / sqrt(2.0)), "level 5 wide box clamped to 1");
        ok(d.ltrb[4 * d.offset[5] + 8] == 0.0f && d.ltrb[4 * d.offset[5] + 10] == 1.0f, "its corners 0 and 1");
        int bad = 0;
        for (int64_t b = 0; b < d.n; b++)
                for (int k = 0; k < 4; k++)
                        bad += !(d.xywh[4 * b + k] >= 0 && d.xywh[4 * b + k] <= 1);
        is_int(bad, 0, "every centre and size in [0, 1]");
        ssd_dboxes_release(&d);

        ok(ssd_feature_sizes(128, f, pad, &err) == 0 && ssd_dboxes_init(&d, 128, f, &err) == 0,
           "default boxes at 128");
        is_int(d.n, 4 * 256 + 6 * 64 + 6 * 16 + 6 * 4 + 4 * 4 + 4 * 4, "their number follows the maps");
        /* centres follow the 16x16 map: (j + 0.5) / 16 */
        ok(d.xywh[4 * 15] == (float)(15.5 / 16), "centres on the 16x16 grid");
        ssd_dboxes_release(&d);
}

/* ---- matching and encoding ----------------------------------------------------- */

static void test_encode(void)
{
        int f[SSD_LEVELS], pad[SSD_EXTRA];
        struct bd_err err;
        struct ssd_dboxes d;
        ssd_feature_sizes(300, f, pad, &err);
        ssd_dboxes_init(&d, 300, f, &err);
        int32_t *label = xmalloc((size_t)d.n * sizeof(int32_t));
        float *loc = xmalloc((size_t)d.n * 4 * sizeof(float));

        /* a ground truth equal to default box 1000 */
        int64_t b0 = 1000;
        float gt[8];
        memcpy(gt, d.ltrb + 4 * b0, 4 * sizeof(float));
        int32_t lab[2] = { 7, 3 };
        int64_t np = ssd_encode(&d, gt, lab, 1, NULL, label, loc);
        ok(np >= 1 && label[b0] == 7, "a ground truth equal to a default box: that box is positive");
        ok(near(loc[4 * b0], 0, 1e-5) && near(loc[4 * b0 + 1], 0, 1e-5) && near(loc[4 * b0 + 2], 0, 1e-5) &&
                   near(loc[4 * b0 + 3], 0, 1e-5),
           "  with zero offsets");
        int64_t cnt = 0, wrong = 0;
        for (int64_t b = 0; b < d.n; b++) {
                float v = ssd_iou(gt, d.ltrb + 4 * b);
                cnt += label[b] != 0;
                wrong += (label[b] != 0) != (v > 0.5f || b == b0);
        }
        is_int(cnt, np, "the count of positives");
        is_int(wrong, 0, "positive exactly where IoU > 0.5");

        /* a tiny box overlaps nothing by 0.5: its best default box is forced */
        float tiny[4] = { 0.50f, 0.50f, 0.51f, 0.52f };
        np = ssd_encode(&d, tiny, lab, 1, NULL, label, loc);
        is_int(np, 1, "a tiny box: one positive (forced)");
        int64_t pb = -1;
        float best = -1;
        for (int64_t b = 0; b < d.n; b++) {
                float v = ssd_iou(tiny, d.ltrb + 4 * b);
                if (v > best)
                        best = v, pb = b;
        }
        ok(label[pb] == 7, "  on its best default box");
        const float *db = d.xywh + 4 * pb;
        ok(near(loc[4 * pb], 10 * (0.505 - db[0]) / db[2], 1e-4) && near(loc[4 * pb + 3], 5 * log(0.02 / db[3]), 1e-4),
           "  encoded with variances 0.1 and 0.2");

        /* two ground truths whose best default box is the same: the later wins it */
        float two[8];
        memcpy(two, d.ltrb + 4 * b0, 4 * sizeof(float));
        memcpy(two + 4, d.ltrb + 4 * b0, 4 * sizeof(float));
        two[6] += 0.001f;
        np = ssd_encode(&d, two, lab, 2, NULL, label, loc);
        ok(label[b0] == 3, "a default box claimed twice goes to the later ground truth");
        ok(ssd_encode(&d, two, lab, 0, NULL, label, loc) == 0, "no ground truth: no positives");
        cnt = 0;
        for (int64_t b = 0; b < d.n; b++)
                cnt += label[b] != 0;
        is_int(cnt, 0, "  every box background");
        ok(ssd_encode(&d, two, lab, SSD_MAX_GT + 1, NULL, label, loc) < 0, "too many ground truths refused");
        free(label);
        free(loc);
        ssd_dboxes_release(&d);
}

/* ---- hard negatives ------------------------------------------------------------ */

static int cmp_desc(const void *a, const void *b)
{
        float x = *(const float *)a, y = *(const float *)b;
        return x > y ? -1 : x < y;
}

static void test_select(void)
{
        int bad = 0;
        for (int t = 0; t < 200; t++) {
                int m = 1 + (int)bd_rng_below(&rng, 300), k = (int)bd_rng_below(&rng, (uint64_t)m + 2);
                float v[300], s[300];
                for (int i = 0; i < m; i++)
                        v[i] = t % 3 == 0 ? (float)bd_rng_below(&rng, 5) : (float)bd_rng_uniform(&rng);
                memcpy(s, v, sizeof(v));
                qsort(s, (size_t)m, sizeof(float), cmp_desc);
                ssd_select_largest(v, m, k);
                if (k > 0 && k < m) {
                        qsort(v, (size_t)k, sizeof(float), cmp_desc);
                        bad += memcmp(v, s, (size_t)k * sizeof(float)) != 0;
                }
        }
        is_int(bad, 0, "the k largest selected, with and without ties, 200 cases");
}

static int cmp_ce_desc(const void *a, const void *b, void *ctx)
{
        const double *ce = ctx;
        double x = ce[*(const int64_t *)a], y = ce[*(const int64_t *)b];
        return x > y ? -1 : x < y;
}

/* the reference's loss in double precision: the negatives sorted, the quota
 * beyond them taken by positives in index order (counted twice) */
static double ref_loss(int64_t N, int64_t n, int64_t K, const int32_t *glabel, const float *gloc, const float *pl,
                       const float *pc)
{
        double total = 0;
        double *ce = xmalloc((size_t)n * sizeof(double));
        int64_t *order = xmalloc((size_t)n * sizeof(int64_t));
        for (int64_t i = 0; i < N; i++) {
                int64_t P = 0, M = 0;
                double sl1 = 0, con = 0;
                for (int64_t b = 0; b < n; b++) {
                        const float *z = pc + (i * n + b) * K;
                        double m = z[0], s = 0;
                        for (int k = 1; k < K; k++)
                                m = z[k] > m ? z[k] : m;
                        for (int k = 0; k < K; k++)
                                s += exp(z[k] - m);
                        ce[b] = m + log(s) - z[glabel[i * n + b]];
                        if (glabel[i * n + b] > 0) {
                                P++;
                                con += ce[b];
                                for (int c = 0; c < 4; c++) {
                                        double d = fabs((double)pl[(i * n + b) * 4 + c] - gloc[(i * n + b) * 4 + c]);
                                        sl1 += d < 1 ? 0.5 * d * d : d - 0.5;
                                }
                        } else {
                                order[M++] = b;
                        }
                }
                qsort_r(order, (size_t)M, sizeof(int64_t), cmp_ce_desc, ce);
                int64_t k = 3 * P < n ? 3 * P : n;
                for (int64_t a = 0; a < M && a < k; a++)
                        con += ce[order[a]];
                for (int64_t b = 0, extra = k - M; b < n && extra > 0; b++)
                        if (glabel[i * n + b] > 0)
                                con += ce[b], extra--;
                if (P > 0)
                        total += (sl1 + con) / (double)P;
        }
        free(ce);
        free(order);
        return total / (double)N;
}

static void fill_outputs(struct bd_tensor *pl, struct bd_tensor *pc, float sd)
{
        float *a = pl->data, *b = pc->data;
        for (int64_t i = 0; i < bd_tensor_numel(pl); i++)
                a[i] = sd * (float)bd_rng_normal(&rng);
        for (int64_t i = 0; i < bd_tensor_numel(pc); i++)
                b[i] = sd * (float)bd_rng_normal(&rng);
}

static void test_loss(void)
{
        const int64_t N = 3, n = 40, K = 5;
        struct ssd_loss L;
        ok(ssd_loss_init(&L, be, N, n, K) == 0, "loss init");
        /* image 0: 5 positives, image 1: none, image 2: 12 positives (more
         * than a quarter: the quota runs over onto positives) */
        int64_t npos[3] = { 5, 0, 12 };
        for (int64_t i = 0; i < N; i++) {
                L.npos[i] = npos[i];
                for (int64_t b = 0; b < n; b++) {
                        L.glabel[i * n + b] = b < npos[i] ? 1 + (int32_t)bd_rng_below(&rng, K - 1) : 0;
                        for (int c = 0; c < 4; c++)
                                L.gloc[(i * n + b) * 4 + c] = (float)bd_rng_normal(&rng);
                }
        }
        struct bd_tensor pl = { 0 }, pc = { 0 }, dl = { 0 }, dc = { 0 };
        int64_t d2[2] = { N * n, 4 }, d3[2] = { N * n, K };
        bd_tensor_resize(be, &pl, BD_F32, BD_NCHW, 2, d2);
        bd_tensor_resize(be, &pc, BD_F32, BD_NCHW, 2, d3);
        fill_outputs(&pl, &pc, 2.0f);
        double loss = 0;
        struct ssd_loss_parts parts;
        ok(ssd_loss_run(&L, &pl, &pc, 1.0, &dl, &dc, &loss, &parts) == 0, "loss runs");
        double want = ref_loss(N, n, K, L.glabel, L.gloc, pl.data, pc.data);
        ok(near(loss, want, 1e-5 * fabs(want)), "loss equals the sorted double-precision version");
        if (!near(loss, want, 1e-5 * fabs(want)))
                printf("#   got %.9g, want %.9g\n", loss, want);
        is_int(parts.positives, 17, "positives counted");
        ok(near(parts.loc + parts.conf, loss, 1e-12), "loss = loc + conf");

        /* finite differences on a few logits and offsets (the selection is
         * locally constant; values are far from ties and from |d| = 1) */
        int bad = 0;
        float *x[2] = { pc.data, pl.data };
        float *g[2] = { dc.data, dl.data };
        int64_t nx[2] = { N * n * K, N * n * 4 };
        for (int which = 0; which < 2; which++)
                for (int t = 0; t < 12; t++) {
                        int64_t j = (int64_t)bd_rng_below(&rng, (uint64_t)nx[which]);
                        float keep = x[which][j], h = 1e-2f;
                        double lp, lm;
                        x[which][j] = keep + h;
                        ssd_loss_run(&L, &pl, &pc, 1.0, NULL, NULL, &lp, NULL);
                        x[which][j] = keep - h;
                        ssd_loss_run(&L, &pl, &pc, 1.0, NULL, NULL, &lm, NULL);
                        x[which][j] = keep;
                        double fd = (lp - lm) / (2 * h);
                        if (!near(fd, g[which][j], 2e-3 + 2e-2 * fabs(fd))) {
                                bad++;
                                printf("#   %s %lld: finite difference %g, gradient %g\n", which ? "offset" : "logit",
                                       (long long)j, fd, g[which][j]);
                        }
                }
        is_int(bad, 0, "gradients match finite differences (24 values)");

        /* gradient scale */
        struct bd_tensor dl2 = { 0 }, dc2 = { 0 };
        ssd_loss_run(&L, &pl, &pc, 128.0, &dl2, &dc2, &loss, NULL);
        bad = 0;
        for (int64_t i = 0; i < nx[0]; i++)
                bad += !near(((float *)dc2.data)[i], 128.0f * ((float *)dc.data)[i], 1e-4);
        is_int(bad, 0, "grad_scale multiplies the gradient");

        /* a non-finite output gives a non-finite loss */
        ((float *)pc.data)[7] = NAN;
        ok(ssd_loss_run(&L, &pl, &pc, 1.0, &dl, &dc, &loss, NULL) == 0 && !isfinite(loss), "NaN logits: NaN loss");
        bd_tensor_release(&pl);
        bd_tensor_release(&pc);
        bd_tensor_release(&dl);
        bd_tensor_release(&dc);
        bd_tensor_release(&dl2);
        bd_tensor_release(&dc2);
        ssd_loss_release(&L);
}

/* ---- decoding -------------------------------------------------------------------- */

static void test_decode(void)
{
        int f[SSD_LEVELS] = { 2, 1, 1, 1, 1, 1 };
        struct bd_err err;
        struct ssd_dboxes d;
        ok(ssd_dboxes_init(&d, 64, f, &err) == 0, "small default box set");
        const int64_t n = d.n, K = 4;
        float *loc = xcalloc((size_t)n * 4, sizeof(float));
        float *logit = xcalloc((size_t)(n * K), sizeof(float));
        /* every box background except: box 0 class 1 (strong), box 1 class 1
         * (weaker, moved onto box 0), box 2 class 2 (elsewhere); boxes 0, 1, 2
         * are the first size of level 0 at cells (0, 0), (0, 1), (1, 0) */
        for (int64_t b = 0; b < n; b++)
                logit[b * K] = 10;
        struct ssd_nms_cfg c;
        ssd_nms_cfg_init(&c);
        struct ssd_decoder dec;
        ssd_decoder_init(&dec, n, K, &c);
        struct ssd_det out[200];
        is_int(ssd_decode(&dec, &d, &c, loc, logit, out), 0, "all background: no detections");
        logit[0 * K] = 0, logit[0 * K + 1] = 5;
        logit[1 * K] = 0, logit[1 * K + 1] = 4;
        logit[2 * K] = 0, logit[2 * K + 2] = 5;
        loc[4 * 1 + 0] = 10 * (d.xywh[0] - d.xywh[4]) / d.xywh[6];
        loc[4 * 1 + 1] = 10 * (d.xywh[1] - d.xywh[5]) / d.xywh[7];
        int nd = ssd_decode(&dec, &d, &c, loc, logit, out);
        is_int(nd, 2, "two detections: the weaker duplicate suppressed");
        ok(nd == 2 && out[0].label != out[1].label && out[0].score >= out[1].score, "  of two classes, best first");
        ok(nd >= 1 && near(out[0].box[0], d.ltrb[0], 1e-6) && near(out[0].box[2], d.ltrb[2], 1e-6), "  zero offsets decode to the default box");
        logit[1 * K + 1] = 0, logit[1 * K + 3] = 4;     /* now a third class */
        is_int(ssd_decode(&dec, &d, &c, loc, logit, out), 3, "an overlapping box of another class stays");
        /* score threshold: a class probability below 0.05 is dropped */
        for (int64_t k = 0; k < K; k++)
                logit[1 * K + k] = 0;
        logit[1 * K] = 4;       /* class 3 at e^0 / (e^4 + 3) < 0.05 */
        is_int(ssd_decode(&dec, &d, &c, loc, logit, out), 2, "scores under 0.05 are dropped");
        c.max_out = 1;
        is_int(ssd_decode(&dec, &d, &c, loc, logit, out), 1, "at most max_out");
        /* an untrained network's huge size outputs: clipped, finite boxes */
        c.max_out = 200;
        loc[2] = 1e4f, loc[3] = 500;
        nd = ssd_decode(&dec, &d, &c, loc, logit, out);
        const struct ssd_det *b0 = nd == 2 ? &out[out[0].label == 1 ? 0 : 1] : NULL;    /* box 0: class 1 */
        ok(b0 && isfinite(b0->box[0]) && isfinite(b0->box[2]) && isfinite(b0->box[3]) &&
           near(b0->box[2] - b0->box[0], expf(SSD_LOG_SIZE_CLIP) * d.xywh[2], 1e-3),
           "huge size outputs decode to finite boxes 62.5 times the default one");
        /* and a box without a finite place is dropped */
        loc[0] = INFINITY;
        is_int(ssd_decode(&dec, &d, &c, loc, logit, out), 1, "a box at an infinite place is no detection");
        loc[0] = NAN;
        is_int(ssd_decode(&dec, &d, &c, loc, logit, out), 1, "nor one at NaN");
        ssd_decoder_release(&dec);
        free(loc);
        free(logit);
        ssd_dboxes_release(&d);
}

/* ---- head gather ------------------------------------------------------------------ */

static void test_head(void)
{
        const enum bd_layout layouts[3] = { BD_NCHW, BD_NHWC, BD_NCHW8C };
        for (int li = 0; li < 3; li++) {
                int64_t A = 4, R = 6, N = 2, H = 3, W = 5, off = 7, B = off + A * H * W + 3;
                int64_t hd[4] = { N, A * R, H, W }, rd[2] = { N * B, R };
                struct bd_tensor head = { 0 }, rows = { 0 }, back = { 0 };
                bd_tensor_resize(be, &head, BD_F32, layouts[li], 4, hd);
                bd_tensor_resize(be, &rows, BD_F32, BD_NCHW, 2, rd);
                bd_tensor_resize(be, &back, BD_F32, layouts[li], 4, hd);
                struct bd_shape4 s = { N, A * R, H, W, layouts[li] };
                for (int64_t n = 0; n < N; n++)
                        for (int64_t c = 0; c < A * R; c++)
                                for (int64_t h = 0; h < H; h++)
                                        for (int64_t w = 0; w < W; w++)
                                                ((float *)head.data)[bd_off4(&s, n, c, h, w)] =
                                                        (float)(((n * 100 + c) * 10 + h) * 10 + w);
                memset(rows.data, 0xff, bd_tensor_bytes(&rows));
                ok(ssd_head_gather(be, &head, A, off, &rows, 0) == 0, "gather runs");
                int bad = 0;
                for (int64_t n = 0; n < N; n++)
                        for (int64_t c = 0; c < A * R; c++)
                                for (int64_t h = 0; h < H; h++)
                                        for (int64_t w = 0; w < W; w++) {
                                                /* the reference's view(N, R, A H W): value c / A of box c % A */
                                                int64_t box = off + (c % A) * H * W + h * W + w;
                                                float v = ((float *)rows.data)[(n * B + box) * R + c / A];
                                                bad += v != (float)(((n * 100 + c) * 10 + h) * 10 + w);
                                        }
                is_str(bd_layout_name(layouts[li]), bd_layout_name(layouts[li]), "layout");
                is_int(bad, 0, "head values land on (box, value) rows as the reference's view");
                ok(ssd_head_gather(be, &back, A, off, &rows, 1) == 0 &&
                           memcmp(back.data, head.data, bd_tensor_bytes(&head)) == 0,
                   "the backward gather is its inverse");
                ok(ssd_head_gather(be, &head, 5, off, &rows, 0) < 0, "channels not a multiple of A refused");
                ok(ssd_head_gather(be, &head, A, B - 2, &rows, 0) < 0 && strstr(be->err.msg, "does not fit"),
                   "a level past the last box refused");
                bd_tensor_release(&head);
                bd_tensor_release(&rows);
                bd_tensor_release(&back);
        }
}

/* ---- the network's backward, double precision ------------------------------------- */

static double net_objective(struct bd_model *m, struct ssd_net *s, const struct bd_tensor *x, const double *r1,
                            const double *r2)
{
        bd_model_begin_step(m);
        if (ssd_net_fwd(m, s, x) < 0) {
                printf("# forward: %s\n", be->err.msg);
                return NAN;
        }
        double v = 0;
        const double *a = s->ploc.data, *b = s->plabel.data;
        for (int64_t i = 0; i < bd_tensor_numel(&s->ploc); i++)
                v += a[i] * r1[i];
        for (int64_t i = 0; i < bd_tensor_numel(&s->plabel); i++)
                v += b[i] * r2[i];
        return v;
}

static void test_net_grad(void)
{
        struct bd_model m;
        struct ssd_net s;
        struct bd_err err;
        bd_model_init(&m, be, BD_F64);
        m.training = 1;
        struct ssd_cfg cfg = { .depth = 18, .image_size = 64, .width_mult = 0.125, .num_classes = 3 };
        ok(ssd_net_init(&s, &m, &cfg) == 0, "a small SSD (resnet18, 64x64, width 1/8)");
        ok(bd_model_finalize(&m, &err) == 0 && bd_model_init_params(&m, 5, &err) == 0, "  finalised");
        is_int(s.fsize[0], 8, "  8x8 first map");
        int ib = bd_model_find(&m, "additional_blocks.0.0.bias"), il = bd_model_find(&m, "conf.3.weight");
        ok(ib >= 0 && il >= 0 && bd_model_find(&m, "backbone.layer3.0.downsample.0.weight") >= 0,
           "  reference parameter names");
        ok(m.p[ib].init.kind == BD_INIT_UNIFORM_FAN_IN && m.p[il].init.kind == BD_INIT_XAVIER_UNIFORM,
           "  Xavier weights, PyTorch's default biases");
        int64_t xd[4] = { 2, 3, 64, 64 };
        struct bd_tensor x = { 0 };
        bd_tensor_resize(be, &x, BD_F64, BD_NCHW, 4, xd);
        for (int64_t i = 0; i < bd_tensor_numel(&x); i++)
                ((double *)x.data)[i] = bd_rng_normal(&rng);
        bd_model_begin_step(&m);
        ok(ssd_net_fwd(&m, &s, &x) == 0, "forward");
        int64_t nl = bd_tensor_numel(&s.ploc), nc = bd_tensor_numel(&s.plabel);
        is_int(s.ploc.dims[0], 2 * s.nboxes, "ploc rows: images x boxes");
        double *r1 = xmalloc((size_t)nl * sizeof(double)), *r2 = xmalloc((size_t)nc * sizeof(double));
        for (int64_t i = 0; i < nl; i++)
                r1[i] = bd_rng_normal(&rng);
        for (int64_t i = 0; i < nc; i++)
                r2[i] = bd_rng_normal(&rng);
        struct bd_tensor dl = bd_tensor_view(r1, BD_CPU, BD_F64, BD_NCHW, 2, s.ploc.dims);
        struct bd_tensor dc = bd_tensor_view(r2, BD_CPU, BD_F64, BD_NCHW, 2, s.plabel.dims);
        ok(bd_model_begin_backward(&m) == 0 && ssd_net_bwd(&m, &s, &dl, &dc) == 0, "backward");
        is_int(bd_scratch_busy(&s.scratch), 0, "scratch balanced");
        const char *names[] = { "loc.0.bias", "conf.5.weight", "additional_blocks.4.2.weight",
                                "additional_blocks.0.0.weight", "backbone.layer3.1.conv2.weight",
                                "backbone.layer3.0.downsample.1.weight", "backbone.conv1.weight", "backbone.bn1.bias" };
        int bad = 0, checked = 0;
        for (size_t q = 0; q < ARRAY_SIZE(names); q++) {
                int id = bd_model_find(&m, names[q]);
                struct bd_tensor p = bd_model_param(&m, id), g = bd_model_grad(&m, id);
                double *pv = p.data, *gv = g.data;
                for (int t = 0; t < 3; t++) {
                        int64_t j = (int64_t)bd_rng_below(&rng, (uint64_t)m.p[id].numel);
                        double keep = pv[j], h = 1e-6, an = gv[j];
                        pv[j] = keep + h;
                        m.version++;
                        double lp = net_objective(&m, &s, &x, r1, r2);
                        pv[j] = keep - h;
                        m.version++;
                        double lm = net_objective(&m, &s, &x, r1, r2);
                        pv[j] = keep;
                        m.version++;
                        double fd = (lp - lm) / (2 * h);
                        checked++;
                        if (!near(fd, an, 1e-5 + 1e-4 * fabs(an))) {
                                bad++;
                                printf("#   %s[%lld]: finite difference %.9g, backward %.9g\n", names[q], (long long)j,
                                       fd, an);
                        }
                }
        }
        is_int(bad, 0, "parameter gradients from heads to stem match finite differences (24 values)");
        (void) checked;
        free(r1);
        free(r2);
        bd_tensor_release(&x);
        ssd_net_release(&s);
        bd_model_release(&m);
}

int main(void)
{
        struct bd_err err;
        if (bd_backend_cpu_new(2, &be, &err) < 0) {
                printf("1..0 # SKIP no CPU backend: %s\n", err.msg);
                return 0;
        }
        bd_rng_seed(&rng, 42, 0);
        test_dboxes();
        test_encode();
        test_select();
        test_loss();
        test_decode();
        test_head();
        test_net_grad();
        bd_backend_free(be);
        return done_testing();
}

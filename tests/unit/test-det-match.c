/* test-det-match.c: the matcher and the balanced sampler of
 * trainer/det/match.[ch].
 *
 * Against torchvision 0.14's answers recorded by tests/det-rpn-golden.py in
 * det-rpn-golden.h, all exact (no IoU within 1e-5 of a threshold):
 *   det_utils.Matcher(0.7, 0.3, low-quality) and (0.5, 0.5) on box_iou, and on
 *   maskrcnn_benchmark's +1 IoU, with duplicated anchors (ties for a GT's best:
 *   all get it) and a GT that overlaps nothing (its best IoU is 0, so every
 *   anchor gets its best GT back), through det_match on det_box_iou and
 *   through det_match_boxes;
 *   BalancedPositiveNegativeSampler's masks from the injected torch.randperm
 *   permutations (RPN 32/0.5, RoI 64/0.25, an image with too few of both).
 * The built-in generator: deterministic, in range, distinct, every positive
 * reachable, streams independent.  Bad input: no GT, no anchors, NaN IoU (as
 * 0), low > high, bad permutations, negative counts.
 * det_rpn_targets (a batch's RPN targets in the heads' order) against the
 * same steps composed image by image from the functions above (both
 * conventions, an image without boxes, two samplers, injected
 * permutations), and det_dev_rpn_targets on the CPU backend: the same, and
 * its one-line errors for inconsistent sizes.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "rng.h"
#include "backend.h"
#include "boxes-dev.h"
#include "boxes.h"
#include "match.h"
#include "tap.h"
#include "det-rpn-golden.h"
#include "det-rpn-candidates.h"

static const struct det_conv *MP = &det_conv_mlperf, *TV = &det_conv_torchvision;

static void check_matches(const int32_t *got, const int32_t *want, int64_t n, const char *what)
{
        int64_t bad = -1;
        for (int64_t j = 0; j < n && bad < 0; j++)
                if (got[j] != want[j])
                        bad = j;
        if (!ok(bad < 0, what))
                printf("#   anchor %lld: got %d, want %d\n", (long long)bad, got[bad], want[bad]);
}

static void test_matcher_golden(void)
{
        const struct {
                const struct det_conv *c;
                const struct det_matcher *m;
                const int32_t *all, *near;
                const char *name;
        } cases[] = {
                { TV, &det_matcher_rpn, g_match_tv_rpn, g_match_tv_rpn_near, "torchvision RPN 0.7/0.3" },
                { TV, &det_matcher_roi, g_match_tv_roi, g_match_tv_roi_near, "torchvision RoI 0.5/0.5" },
                { MP, &det_matcher_rpn, g_match_r_rpn, g_match_r_rpn_near, "mlperf RPN 0.7/0.3" },
                { MP, &det_matcher_roi, g_match_r_roi, g_match_r_roi_near, "mlperf RoI 0.5/0.5" },
        };
        int32_t got[G_MATCH_N];
        float iou[G_MATCH_G * G_MATCH_N];
        char what[160];
        for (size_t k = 0; k < ARRAY_SIZE(cases); k++)
                for (int near = 0; near < 2; near++) {
                        int g = near ? G_MATCH_G - 1 : G_MATCH_G;
                        const int32_t *want = near ? cases[k].near : cases[k].all;
                        const char *gts = near ? "GTs that overlap" : "with a GT that overlaps nothing";
                        det_box_iou(cases[k].c, g_match_gt, g, g_match_anchors, G_MATCH_N, iou);
                        is_int(det_match(cases[k].m, iou, g, G_MATCH_N, got), 0, "det_match returns 0");
                        snprintf(what, sizeof(what), "%s, %s: det_match = Matcher (exact)", cases[k].name, gts);
                        check_matches(got, want, G_MATCH_N, what);
                        memset(got, 0x55, sizeof(got));
                        is_int(det_match_boxes(cases[k].c, cases[k].m, g_match_gt, g, g_match_anchors, G_MATCH_N,
                                               got), 0, "det_match_boxes returns 0");
                        snprintf(what, sizeof(what), "%s, %s: det_match_boxes = Matcher (exact)", cases[k].name,
                                 gts);
                        check_matches(got, want, G_MATCH_N, what);
                }
        /* the fixture's ties: anchors 3, 40 and 77 are one box, GT 1's best */
        ok(g_match_tv_rpn_near[3] == 1 && g_match_tv_rpn_near[40] == 1 && g_match_tv_rpn_near[77] == 1,
           "fixture: the three copies of GT 1's best anchor all matched (ties)");
}

static void test_matcher_edges(void)
{
        int32_t m[6];
        /* no GT: all background */
        memset(m, 0x55, sizeof(m));
        is_int(det_match(&det_matcher_rpn, NULL, 0, 6, m), 0, "G = 0 returns 0");
        int all_bg = 1;
        for (int j = 0; j < 6; j++)
                all_bg &= m[j] == DET_MATCH_BELOW_LOW;
        ok(all_bg, "G = 0: every anchor -1 (background)");
        float gt[4] = { 0, 0, 10, 10 };
        is_int(det_match_boxes(TV, &det_matcher_rpn, gt, 0, gt, 1, m), 0, "det_match_boxes G = 0 returns 0");
        is_int(m[0], DET_MATCH_BELOW_LOW, "det_match_boxes G = 0: background");
        is_int(det_match(&det_matcher_rpn, NULL, 3, 0, m), 0, "no anchors: 0");
        is_int(det_match_boxes(TV, &det_matcher_rpn, gt, 1, gt, 0, m), 0, "det_match_boxes no anchors: 0");
        /* NaN reads as 0: the same matches as the matrix with zeros */
        float a[2 * 3] = { 0.8f, NAN, 0.2f, NAN, 0.5f, 0.1f };
        float z[2 * 3] = { 0.8f, 0.0f, 0.2f, 0.0f, 0.5f, 0.1f };
        int32_t ma[3], mz[3];
        det_match(&det_matcher_rpn, a, 2, 3, ma);
        det_match(&det_matcher_rpn, z, 2, 3, mz);
        ok(memcmp(ma, mz, sizeof(ma)) == 0, "NaN IoU counts as 0");
        /* hand-worked: anchor 0 -> GT 0 (0.8); anchor 1 best 0.5 (between) but GT 1's best -> 1;
         * anchor 2 best 0.2 < 0.3 -> -1 */
        ok(mz[0] == 0 && mz[1] == 1 && mz[2] == DET_MATCH_BELOW_LOW, "hand-worked low-quality case");
        det_match(&det_matcher_roi, z, 2, 3, mz);
        ok(mz[0] == 0 && mz[1] == 1 && mz[2] == DET_MATCH_BELOW_LOW, "RoI 0.5/0.5: 0.5 matches, no -2");
        struct det_matcher nolq = { 0.7f, 0.3f, 0 };
        det_match(&nolq, z, 2, 3, mz);
        ok(mz[1] == DET_MATCH_BETWEEN, "0.3 <= 0.5 < 0.7 without low-quality: -2");
        /* the first maximum wins an argmax tie, as torch.max(dim=0) */
        float t[2] = { 0.9f, 0.9f };
        det_match(&det_matcher_rpn, t, 2, 1, m);
        is_int(m[0], 0, "argmax tie: the first GT");
        struct det_matcher bad = { 0.3f, 0.7f, 1 };
        is_int(det_match(&bad, z, 2, 3, m), -EINVAL, "low > high is -EINVAL");
        is_int(det_match(&det_matcher_rpn, z, -1, 3, m), -EINVAL, "G < 0 is -EINVAL");
        is_int(det_match_boxes(TV, &det_matcher_rpn, gt, 1, gt, -1, m), -EINVAL, "N < 0 is -EINVAL");
        /* NaN and degenerate boxes through det_match_boxes: no crash, background */
        float nb[8] = { NAN, 0, 5, 5, 3, 3, 3, 3 };
        is_int(det_match_boxes(TV, &det_matcher_roi, gt, 1, nb, 2, m), 0, "NaN and empty anchors: 0");
        ok(m[0] == DET_MATCH_BELOW_LOW && m[1] == DET_MATCH_BELOW_LOW, "NaN and empty anchors: background");
}

static void test_rpn_labels(void)
{
        int32_t m[5] = { 2, DET_MATCH_BELOW_LOW, DET_MATCH_BETWEEN, 0, 1 }, l[5];
        uint8_t vis[5] = { 1, 1, 1, 1, 0 };
        is_int(det_rpn_labels(m, vis, 5, l), 2, "det_rpn_labels counts positives");
        ok(l[0] == 1 && l[1] == 0 && l[2] == -1 && l[3] == 1 && l[4] == -1,
           "labels 1 / 0 / -1, and -1 where not visible (straddle)");
        is_int(det_rpn_labels(m, NULL, 5, l), 3, "no visibility: 3 positives");
}

/* ---- sampler ---- */

static void check_mask(const uint8_t *mask, int64_t n, const int64_t *want, int64_t nwant, const char *what)
{
        int64_t k = 0, bad = -1;
        for (int64_t j = 0; j < n && bad < 0; j++)
                if (mask[j]) {
                        if (k >= nwant || want[k] != j)
                                bad = j;
                        k++;
                }
        if (!ok(bad < 0 && k == nwant, what))
                printf("#   %lld chosen, want %lld; first difference at %lld\n", (long long)k, (long long)nwant,
                       (long long)bad);
}

static void test_sampler_golden(void)
{
        const struct {
                const char *name;
                const int32_t *labels;
                int64_t n, npos, nneg, kp, kn;
                int bs;
                double frac;
                const int64_t *pp, *pn, *pos, *neg;
        } cases[] = {
#define SAMP_CASE(T, t) { #t, g_samp_##t##_labels, G_SAMP_##T##_N, G_SAMP_##T##_NPOS, G_SAMP_##T##_NNEG, \
                          G_SAMP_##T##_KP, G_SAMP_##T##_KN, G_SAMP_##T##_BS, G_SAMP_##T##_FRAC, \
                          g_samp_##t##_perm_pos, g_samp_##t##_perm_neg, g_samp_##t##_pos, g_samp_##t##_neg }
                SAMP_CASE(RPN, rpn), SAMP_CASE(ROI, roi), SAMP_CASE(FEW, few),
#undef SAMP_CASE
        };
        char what[160];
        for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
                struct det_sampler s = { cases[k].bs, cases[k].frac };
                struct det_perm perm = { cases[k].pp, cases[k].npos, cases[k].pn, cases[k].nneg };
                uint8_t *pm = xmalloc((size_t)cases[k].n), *nm = xmalloc((size_t)cases[k].n);
                int64_t np = -1, nn = -1;
                is_int(det_sample(&s, cases[k].labels, cases[k].n, 0, 0, &perm, pm, nm, NULL, NULL, &np, &nn), 0,
                       "det_sample with injected permutations returns 0");
                snprintf(what, sizeof(what), "sampler %s: %lld positives, %lld negatives", cases[k].name,
                         (long long)cases[k].kp, (long long)cases[k].kn);
                ok(np == cases[k].kp && nn == cases[k].kn, what);
                snprintf(what, sizeof(what), "sampler %s: positive mask = torchvision's (exact)", cases[k].name);
                check_mask(pm, cases[k].n, cases[k].pos, cases[k].kp, what);
                snprintf(what, sizeof(what), "sampler %s: negative mask = torchvision's (exact)", cases[k].name);
                check_mask(nm, cases[k].n, cases[k].neg, cases[k].kn, what);
                free(pm);
                free(nm);
        }
        /* bad permutations */
        struct det_sampler s = { G_SAMP_ROI_BS, G_SAMP_ROI_FRAC };
        int64_t pp[G_SAMP_ROI_KP];
        memcpy(pp, g_samp_roi_perm_pos, sizeof(pp));
        struct det_perm perm = { pp, G_SAMP_ROI_NPOS + 1, g_samp_roi_perm_neg, G_SAMP_ROI_NNEG };
        uint8_t m[G_SAMP_ROI_N];
        is_int(det_sample(&s, g_samp_roi_labels, G_SAMP_ROI_N, 0, 0, &perm, m, NULL, NULL, NULL, NULL, NULL),
               -EINVAL, "permutation for another count of positives: -EINVAL");
        perm.npos = G_SAMP_ROI_NPOS;
        pp[1] = pp[0];
        is_int(det_sample(&s, g_samp_roi_labels, G_SAMP_ROI_N, 0, 0, &perm, m, NULL, NULL, NULL, NULL, NULL),
               -EINVAL, "repeated entry: -EINVAL");
        pp[1] = G_SAMP_ROI_NPOS;
        is_int(det_sample(&s, g_samp_roi_labels, G_SAMP_ROI_N, 0, 0, &perm, m, NULL, NULL, NULL, NULL, NULL),
               -EINVAL, "entry out of range: -EINVAL");
}

static void test_sampler_rng(void)
{
        enum { N = 1000 };
        int32_t *labels = xmalloc(N * sizeof(*labels));
        for (int j = 0; j < N; j++)
                labels[j] = j % 100 == 7 ? 1 + j % 3 : j % 5 == 0 ? -1 : 0;   /* 10 positives, 790 negatives */
        struct det_sampler s = { 256, 0.5 };
        int64_t pi[256], ni[256], pi2[256], ni2[256], np, nn, np2, nn2;
        uint8_t pm[N], nm[N];
        is_int(det_sample(&s, labels, N, 42, 3, NULL, pm, nm, pi, ni, &np, &nn), 0, "generator: returns 0");
        ok(np == 10 && nn == 246, "generator: all 10 positives, 256 - 10 negatives");
        int good = 1, cnt = 0;
        for (int j = 0; j < N; j++) {
                good &= !pm[j] || labels[j] >= 1;
                good &= !nm[j] || labels[j] == 0;
                cnt += nm[j];
        }
        ok(good && cnt == nn, "generator: masks hold only positives / negatives, distinct");
        det_sample(&s, labels, N, 42, 3, NULL, NULL, NULL, pi2, ni2, &np2, &nn2);
        ok(np2 == np && nn2 == nn && !memcmp(pi, pi2, (size_t)np * sizeof(int64_t)) &&
           !memcmp(ni, ni2, (size_t)nn * sizeof(int64_t)),
           "generator: same seed and stream, same sample and order");
        det_sample(&s, labels, N, 42, 4, NULL, NULL, NULL, pi2, ni2, &np2, &nn2);
        ok(memcmp(ni, ni2, (size_t)nn * sizeof(int64_t)) != 0, "generator: another stream, another sample");
        /* 1 of 10 positives: over 400 streams each is chosen (p(miss one) ~ 1e-17) */
        struct det_sampler one = { 2, 0.5 };
        int seen[N] = { 0 };
        for (int st = 0; st < 400; st++) {
                det_sample(&one, labels, N, 7, (uint64_t)st, NULL, NULL, NULL, pi, ni, &np, &nn);
                seen[pi[0]]++;
        }
        int all = 1;
        for (int j = 0; j < N; j++)
                if (labels[j] >= 1)
                        all &= seen[j] > 10;
        ok(all, "generator: every positive drawn about as often (> 10 of 400 each)");
        is_int(det_sample(&s, labels, -1, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL), -EINVAL,
               "n < 0 is -EINVAL");
        struct det_sampler bad = { 256, 1.5 };
        is_int(det_sample(&bad, labels, N, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL), -EINVAL,
               "fraction > 1 is -EINVAL");
        is_int(det_sample(&s, labels, 0, 0, 0, NULL, pm, nm, NULL, NULL, &np, &nn), 0, "empty image: 0");
        ok(np == 0 && nn == 0, "empty image: nothing chosen");
        free(labels);
}

/* ---- the RPN's targets ---- */

enum { TL = 3, TN = 3 };

/* the anchors of three levels of a 96x160 batch (stride 8, 16, 32) */
static float *make_anchors(const struct det_conv *c, int64_t off[TL + 1])
{
        static const float ratios[3] = { 0.5f, 1.0f, 2.0f };
        int64_t A = 0;
        off[0] = 0;
        for (int l = 0; l < TL; l++) {
                int s = 8 << l;
                A += (int64_t)(96 / s) * (160 / s) * 3;
                off[l + 1] = A;
        }
        float *an = xmalloc((size_t)A * 4 * sizeof(float));
        for (int l = 0; l < TL; l++) {
                int s = 8 << l;
                float size = (float)(32 << l), cell[12];
                det_cell_anchors(c, s, &size, 1, ratios, 3, cell);
                det_grid_anchors(cell, 3, 96 / s, 160 / s, s, s, an + 4 * off[l]);
        }
        return an;
}

/* the oracle: each image on its own, the steps of match.h and boxes.h */
static void rpn_targets_oracle(const struct det_conv *c, const struct det_rpn_batch *b, const float *an,
                               const float *gt, int32_t *labels, float *tgt, int64_t *npos, int64_t *nneg)
{
        const int64_t A = b->off[b->L], N = b->N;
        int32_t *m = xmalloc((size_t)A * sizeof(int32_t)), *lab = xmalloc((size_t)A * sizeof(int32_t));
        uint8_t *vis = xmalloc((size_t)A), *pos = xmalloc((size_t)A), *neg = xmalloc((size_t)A);
        for (int i = 0; i < b->N; i++) {
                const float *g = gt + 4 * b->gt_off[i];
                det_anchor_visibility(c, an, A, (float)b->image_hw[2 * i + 1], (float)b->image_hw[2 * i], vis);
                det_match_boxes(c, b->m, g, b->gt_off[i + 1] - b->gt_off[i], an, A, m);
                det_rpn_labels(m, vis, A, lab);
                det_sample(b->s, lab, A, b->seed, b->streams[i], b->perms ? &b->perms[i] : NULL, pos, neg, NULL,
                           NULL, &npos[i], &nneg[i]);
                for (int l = 0; l < b->L; l++)
                        for (int64_t a = b->off[l]; a < b->off[l + 1]; a++) {
                                int64_t o = N * b->off[l] + i * (b->off[l + 1] - b->off[l]) + a - b->off[l];
                                labels[o] = pos[a] ? 1 : neg[a] ? 0 : -1;
                                memset(tgt + 4 * o, 0, 4 * sizeof(float));
                                if (pos[a])
                                        det_encode(c, b->k, g + 4 * m[a], an + 4 * a, 1, tgt + 4 * o);
                        }
        }
        free(m);
        free(lab);
        free(vis);
        free(pos);
        free(neg);
}

static void test_rpn_targets(void)
{
        static const struct det_coder k = { 1, 1, 1, 1, (float)DET_BBOX_XFORM_CLIP };
        static const int hw[2 * TN] = { 96, 150, 80, 160, 96, 160 };
        static const int64_t gt_off[TN + 1] = { 0, 5, 5, 17 };   /* 5 boxes, none, 12 */
        static const uint64_t streams[TN] = { 11, 12, 13 };
        struct bd_rng rng;
        bd_rng_seed(&rng, 99, 0);
        float gt[17 * 4];
        for (int g = 0; g < 17; g++) {
                float x = (float)bd_rng_range(&rng, 0, 120), y = (float)bd_rng_range(&rng, 0, 70);
                float w = (float)bd_rng_range(&rng, 4, 90), h = (float)bd_rng_range(&rng, 4, 60);
                gt[4 * g] = x;
                gt[4 * g + 1] = y;
                gt[4 * g + 2] = x + w;
                gt[4 * g + 3] = y + h;
        }
        struct bd_backend *cpu;
        struct bd_err err;
        if (bd_backend_cpu_new(0, &cpu, &err) < 0) {
                printf("Bail out! cpu backend: %s\n", err.msg);
                exit(1);
        }
        const struct det_conv *cs[2] = { TV, MP };
        const struct det_sampler ss[2] = { { 256, 0.5 }, { 16, 0.25 } };
        for (int ci = 0; ci < 2; ci++)
                for (int si = 0; si < 2; si++) {
                        const struct det_conv *c = cs[ci];
                        int64_t off[TL + 1];
                        float *an = make_anchors(c, off);
                        const int64_t A = off[TL], M = TN * A;
                        struct det_rpn_work work = { 0 };
                        struct det_rpn_batch b = { .m = &det_matcher_rpn, .s = &ss[si], .k = &k, .off = off, .L = TL,
                                                   .N = TN, .gt_off = gt_off, .image_hw = hw, .seed = 5,
                                                   .streams = streams, .perms = NULL, .work = &work };
                        int32_t *l1 = xmalloc((size_t)M * sizeof(int32_t)), *l2 = xmalloc((size_t)M * sizeof(int32_t));
                        float *t1 = xmalloc((size_t)M * 16), *t2 = xmalloc((size_t)M * 16);
                        int64_t p1[TN], n1[TN], p2[TN], n2[TN];
                        char what[160];
                        const char *cn = ci ? "mlperf" : "torchvision";
                        rpn_targets_oracle(c, &b, an, gt, l2, t2, p2, n2);
                        snprintf(what, sizeof(what), "rpn targets, %s, sampler %d/%.2f: returns 0", cn,
                                 ss[si].batch_size_per_image, ss[si].positive_fraction);
                        is_int(det_rpn_targets(c, &b, an, gt, l1, t1, p1, n1), 0, what);
                        int same = !memcmp(l1, l2, (size_t)M * sizeof(int32_t)) &&
                                   !memcmp(t1, t2, (size_t)M * 16) && !memcmp(p1, p2, sizeof(p1)) &&
                                   !memcmp(n1, n2, sizeof(n1));
                        snprintf(what, sizeof(what), "  %s: labels, codes and counts as image by image", cn);
                        ok(same, what);
                        int64_t ones = 0, zeros = 0, want1 = 0, want0 = 0;
                        for (int64_t o = 0; o < M; o++) {
                                ones += l1[o] == 1;
                                zeros += l1[o] == 0;
                        }
                        for (int i = 0; i < TN; i++) {
                                want1 += p1[i];
                                want0 += n1[i];
                        }
                        snprintf(what, sizeof(what), "  %s: %lld positives, %lld negatives labelled as counted", cn,
                                 (long long)want1, (long long)want0);
                        ok(ones == want1 && zeros == want0 && want1 + want0 > 0 && p1[1] == 0, what);
                        /* again with the kept scratch: the same */
                        det_rpn_targets(c, &b, an, gt, l1, t1, p1, n1);
                        ok(!memcmp(l1, l2, (size_t)M * sizeof(int32_t)), "  the scratch kept: the same labels");
                        /* injected permutations: reversed */
                        struct det_perm perms[TN];
                        int64_t *pp[TN];
                        for (int i = 0; i < TN; i++) {
                                int64_t np, nn;
                                rpn_candidates(c, &b, an, gt, i, &np, &nn);
                                pp[i] = xmalloc((size_t)(np + nn + 1) * sizeof(int64_t));
                                for (int64_t t = 0; t < np; t++)
                                        pp[i][t] = np - 1 - t;
                                for (int64_t t = 0; t < nn; t++)
                                        pp[i][np + t] = nn - 1 - t;
                                perms[i] = (struct det_perm){ pp[i], np, pp[i] + np, nn };
                        }
                        b.perms = perms;
                        rpn_targets_oracle(c, &b, an, gt, l2, t2, p2, n2);
                        det_rpn_targets(c, &b, an, gt, l1, t1, p1, n1);
                        ok(!memcmp(l1, l2, (size_t)M * sizeof(int32_t)) && !memcmp(t1, t2, (size_t)M * 16),
                           "  injected permutations: as image by image");
                        /* on the CPU backend */
                        int64_t gd[2] = { 17, 4 }, ad[2] = { A, 4 };
                        struct bd_tensor ta = bd_tensor_view(an, BD_CPU, BD_F32, BD_NCHW, 2, ad);
                        struct bd_tensor tg = bd_tensor_view(gt, BD_CPU, BD_F32, BD_NCHW, 2, gd);
                        struct bd_tensor dl, dt;
                        memset(&dl, 0, sizeof(dl));
                        memset(&dt, 0, sizeof(dt));
                        is_int(det_dev_rpn_targets(cpu, c, &b, &ta, &tg, &dl, &dt, p1, n1), 0,
                               "  det_dev_rpn_targets on the CPU backend: 0");
                        ok(dl.dims[0] == M && dt.dims[0] == M && dt.dims[1] == 4 &&
                           !memcmp(dl.data, l2, (size_t)M * sizeof(int32_t)) && !memcmp(dt.data, t2, (size_t)M * 16),
                           "  the same labels (M) and codes (M, 4)");
                        b.perms = NULL;
                        if (ci == 0 && si == 0) {
                                int64_t bad_off[TL + 1];
                                memcpy(bad_off, off, sizeof(bad_off));
                                bad_off[1] = off[2] + 1;
                                b.off = bad_off;
                                is_int(det_rpn_targets(c, &b, an, gt, l1, t1, p1, n1), -EINVAL,
                                       "decreasing level offsets: -EINVAL");
                                bad_off[1] = off[1];
                                bad_off[TL] = A - 1;
                                is_int(det_dev_rpn_targets(cpu, c, &b, &ta, &tg, &dl, &dt, p1, n1), -EINVAL,
                                       "det_dev: level offsets that do not end at the anchors' count: -EINVAL");
                                like(cpu->err.msg, "anchors and 17 boxes",
                                     "  saying what is inconsistent");
                                b.off = off;
                                tg.dims[0] = 16;
                                is_int(det_dev_rpn_targets(cpu, c, &b, &ta, &tg, &dl, &dt, p1, n1), -EINVAL,
                                       "boxes fewer than the images' offsets say: -EINVAL");
                                tg.dims[0] = 17;
                                int64_t bad_gt[TN + 1] = { 0, 5, 4, 17 };
                                b.gt_off = bad_gt;
                                is_int(det_rpn_targets(c, &b, an, gt, l1, t1, p1, n1), -EINVAL,
                                       "decreasing box offsets: -EINVAL");
                                b.gt_off = gt_off;
                        }
                        for (int i = 0; i < TN; i++)
                                free(pp[i]);
                        bd_tensor_release(&dl);
                        bd_tensor_release(&dt);
                        det_rpn_work_free(&work);
                        free(l1);
                        free(l2);
                        free(t1);
                        free(t2);
                        free(an);
                }
        bd_backend_free(cpu);
}

int main(void)
{
        test_matcher_golden();
        test_matcher_edges();
        test_rpn_labels();
        test_sampler_golden();
        test_sampler_rng();
        test_rpn_targets();
        return done_testing();
}

/* test-det-proposals.c: the RPN's proposal selection, trainer/det/proposals.[ch].
 *
 * Two images of 120x180 and 128x150 padded to 128x192, P2..P6 (6,138
 * anchors), logits and deltas from the LCG of tests/det-rpn-golden.py, against
 * the answers it recorded in det-rpn-golden.h:
 *   torchvision: RegionProposalNetwork.filter_proposals after
 *     box_coder.decode, training-sized (pre 400: > 1000 boxes per image, so
 *     batched_nms runs per level) and test-sized (pre 150: the coordinate
 *     trick);
 *   MLPerf: maskrcnn_benchmark's RPNPostProcessor rules (Detectron anchors,
 *     +1 decode, clip W-1, min size 0, NMS >= per level, per-level cap),
 *     post top-n over the batch (training) and per image (test).
 * Counts exact (the same proposals, in the same order); boxes
 * |got - want| <= 1e-6 max(|want|, 64) (exp and the clip against image
 * sides <= 192: the error is relative to the image's scale), scores
 * |got - want| <= 1e-6 max(|want|, 1e-3) (sigmoid: an ulp or two).
 * The same through boxes-dev.h on the CPU backend (det_dev_rpn_proposals,
 * det_dev_batched_nms): identical results.  Then bad input: no anchors, empty
 * images, NaN logits and deltas, zero top-n, negative counts, bad tensors.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "boxes.h"
#include "proposals.h"
#include "boxes-dev.h"
#include "tap.h"
#include "det-rpn-golden.h"

#define NLEV 5

static const struct det_conv *MP = &det_conv_mlperf, *TV = &det_conv_torchvision;

static unsigned long lcg_s;

static long lcg_u(long k)
{
        lcg_s = (lcg_s * 1103515245ul + 12345ul) % (1ul << 31);
        return (long)((lcg_s >> 8) % (unsigned long)k);
}

/* the generator's inputs: per image, logits (N, TOT) and deltas (N, TOT, 4) */
static void lcg_inputs(unsigned seed, float *logits, float *deltas)
{
        int *p = xmalloc(G_RPN_TOT * sizeof(*p));
        lcg_s = seed;
        for (int i = 0; i < G_RPN_NI; i++) {
                for (int j = 0; j < G_RPN_TOT; j++)
                        p[j] = j;
                for (int j = G_RPN_TOT - 1; j > 0; j--) {
                        int k = (int)lcg_u(j + 1), t = p[j];
                        p[j] = p[k];
                        p[k] = t;
                }
                for (int j = 0; j < G_RPN_TOT; j++)
                        logits[i * G_RPN_TOT + j] = (float)((p[j] - G_RPN_TOT / 2) / 512.0);
                for (int j = 0; j < 4 * G_RPN_TOT; j++)
                        deltas[(size_t)i * 4 * G_RPN_TOT + j] = (float)((lcg_u(2001) - 1000) / 4096.0);
        }
        free(p);
}

/* per-level inputs cut from the per-image arrays; anchors of convention c */
struct levels {
        struct det_rpn_level lv[NLEV];
        float *obj[NLEV], *del[NLEV], *anc[NLEV];
};

static void levels_make(const struct det_conv *c, const float *logits, const float *deltas, struct levels *L)
{
        static const float ratios[3] = { 0.5f, 1.0f, 2.0f };
        int64_t off = 0;
        for (int l = 0; l < NLEV; l++) {
                int stride = 4 << l, fh = G_RPN_PAD_H / stride, fw = G_RPN_PAD_W / stride;
                int64_t A = g_rpn_levels[l];
                float size = (float)(32 << l), cell[12];
                det_cell_anchors(c, stride, &size, 1, ratios, 3, cell);
                L->anc[l] = xmalloc((size_t)A * 4 * sizeof(float));
                det_grid_anchors(cell, 3, fh, fw, stride, stride, L->anc[l]);
                L->obj[l] = xmalloc((size_t)(G_RPN_NI * A) * sizeof(float));
                L->del[l] = xmalloc((size_t)(G_RPN_NI * A) * 4 * sizeof(float));
                for (int i = 0; i < G_RPN_NI; i++) {
                        memcpy(L->obj[l] + i * A, logits + i * G_RPN_TOT + off, (size_t)A * sizeof(float));
                        memcpy(L->del[l] + i * A * 4, deltas + ((size_t)i * G_RPN_TOT + (size_t)off) * 4,
                               (size_t)A * 4 * sizeof(float));
                }
                L->lv[l] = (struct det_rpn_level){ L->obj[l], L->del[l], L->anc[l], A };
                off += A;
        }
}

static void levels_free(struct levels *L)
{
        for (int l = 0; l < NLEV; l++) {
                free(L->obj[l]);
                free(L->del[l]);
                free(L->anc[l]);
        }
}

static int close_to(double got, double want, double rel, double floor_)
{
        double scale = fabs(want) > floor_ ? fabs(want) : floor_;
        return fabs(got - want) <= rel * scale;
}

static struct bd_backend *cpu;

static struct bd_tensor view(const float *p, int nd, int64_t d0, int64_t d1, int64_t d2)
{
        int64_t dims[3] = { d0, d1, d2 };
        return bd_tensor_view((void *)p, BD_CPU, BD_F32, BD_NCHW, nd, dims);
}

/* det_dev_rpn_proposals on the CPU backend gives what the host call gave */
static void dispatch_same(const struct det_conv *c, const struct det_rpn_params *p, const struct levels *L,
                          const float *boxes, const float *scores, const int64_t *count, const char *tag)
{
        struct bd_tensor o[NLEV], d[NLEV], a[NLEV], b = { 0 }, s = { 0 };
        int64_t cnt[G_RPN_NI];
        char what[128];
        for (int l = 0; l < NLEV; l++) {
                int64_t A = L->lv[l].A;
                o[l] = view(L->obj[l], 2, G_RPN_NI, A, 0);
                d[l] = view(L->del[l], 3, G_RPN_NI, A, 4);
                a[l] = view(L->anc[l], 2, A, 4, 0);
        }
        snprintf(what, sizeof(what), "%s: det_dev_rpn_proposals on the cpu returns 0", tag);
        is_int(det_dev_rpn_proposals(cpu, c, p, o, d, a, NLEV, g_rpn_image_hw, &b, &s, cnt), 0, what);
        size_t n = (size_t)G_RPN_NI * (size_t)p->post_nms_top_n;
        int same = cnt[0] == count[0] && cnt[1] == count[1];
        for (int i = 0; i < G_RPN_NI && same; i++)
                same = !memcmp((float *)b.data + (size_t)i * p->post_nms_top_n * 4,
                               boxes + (size_t)i * p->post_nms_top_n * 4, (size_t)count[i] * 4 * sizeof(float)) &&
                       !memcmp((float *)s.data + (size_t)i * p->post_nms_top_n,
                               scores + (size_t)i * p->post_nms_top_n, (size_t)count[i] * sizeof(float));
        snprintf(what, sizeof(what), "%s: det_dev_rpn_proposals = det_rpn_proposals (%zu rows)", tag, n);
        ok(same, what);
        bd_tensor_release(&b);
        bd_tensor_release(&s);
}

static void test_dispatch_bad(void)
{
        float bx[8] = { 0, 0, 10, 10, 1, 1, 10, 10 }, sc[2] = { 0.9f, 0.8f };
        struct bd_tensor b = view(bx, 2, 2, 4, 0), s = view(sc, 1, 2, 0, 0), k = { 0 }, s3 = view(sc, 1, 1, 0, 0);
        int64_t nk = -1, want[2];
        is_int(det_dev_nms(cpu, &det_conv_torchvision, &b, &s, 0.5, &k, &nk), 0, "det_dev_nms on the cpu");
        ok(nk == det_nms(&det_conv_torchvision, bx, sc, 2, 0.5, want) && ((int32_t *)k.data)[0] == want[0],
           "det_dev_nms = det_nms");
        is_int(det_dev_nms(cpu, &det_conv_torchvision, &b, &s3, 0.5, &k, &nk), -EINVAL,
               "scores of another length: -EINVAL");
        like(cpu->err.msg, "det nms: scores", "  and says which operand");
        int32_t cls[2] = { 0, 1 };
        struct bd_tensor ci = bd_tensor_view(cls, BD_CPU, BD_I32, BD_NCHW, 1, (int64_t[]){ 2 });
        is_int(det_dev_batched_nms(cpu, &det_conv_torchvision, &b, &s, &ci, 0.5, &k, &nk), 0,
               "det_dev_batched_nms on the cpu");
        is_int(nk, 2, "two classes: both kept");
        is_int(det_dev_batched_nms(cpu, &det_conv_torchvision, &b, &s, &s, 0.5, &k, &nk), -EINVAL,
               "float classes: -EINVAL");
        bd_tensor_release(&k);
}

static void test_golden(void)
{
        float *logits = xmalloc((size_t)G_RPN_NI * G_RPN_TOT * sizeof(float));
        float *deltas = xmalloc((size_t)G_RPN_NI * G_RPN_TOT * 4 * sizeof(float));
        for (size_t k = 0; k < ARRAY_SIZE(g_rpn_cases); k++) {
                const struct g_rpn_case *g = &g_rpn_cases[k];
                const struct det_conv *c = g->mlperf ? MP : TV;
                struct det_rpn_params p = g->mlperf ? det_rpn_params_mlperf(g->per_batch)
                                                    : det_rpn_params_torchvision(0);
                p.pre_nms_top_n = g->pre;
                p.post_nms_top_n = g->post;
                if (g->mlperf)
                        p.level_post_nms_top_n = g->post;
                struct levels L;
                lcg_inputs(g->seed, logits, deltas);
                levels_make(c, logits, deltas, &L);
                float *boxes = xmalloc((size_t)G_RPN_NI * (size_t)g->post * 4 * sizeof(float));
                float *scores = xmalloc((size_t)G_RPN_NI * (size_t)g->post * sizeof(float));
                int64_t count[G_RPN_NI];
                char what[160];
                snprintf(what, sizeof(what), "%s: det_rpn_proposals returns 0", g->tag);
                is_int(det_rpn_proposals(c, &p, L.lv, NLEV, G_RPN_NI, g_rpn_image_hw, boxes, scores, count), 0,
                       what);
                const float *wb = g_rpn_boxes[k], *ws = g_rpn_scores[k];
                for (int i = 0; i < G_RPN_NI; i++) {
                        snprintf(what, sizeof(what), "%s image %d: %d proposals", g->tag, i, g->count[i]);
                        if (!ok(count[i] == g->count[i], what)) {
                                printf("#   got %lld\n", (long long)count[i]);
                                continue;
                        }
                        int64_t bad = -1;
                        for (int64_t t = 0; t < 4 * count[i] && bad < 0; t++)
                                if (!close_to(boxes[(size_t)i * g->post * 4 + t], wb[t], 1e-6, 64))
                                        bad = t;
                        snprintf(what, sizeof(what), "%s image %d: boxes in order (1e-6 of 64)", g->tag, i);
                        if (!ok(bad < 0, what))
                                printf("#   element %lld: got %.9g, want %.9g\n", (long long)bad,
                                       boxes[(size_t)i * g->post * 4 + bad], wb[bad]);
                        bad = -1;
                        for (int64_t t = 0; t < count[i] && bad < 0; t++)
                                if (!close_to(scores[(size_t)i * g->post + t], ws[t], 1e-6, 1e-3))
                                        bad = t;
                        snprintf(what, sizeof(what), "%s image %d: scores in order (rel 1e-6)", g->tag, i);
                        if (!ok(bad < 0, what))
                                printf("#   element %lld: got %.9g, want %.9g\n", (long long)bad,
                                       scores[(size_t)i * g->post + bad], ws[bad]);
                        wb += 4 * count[i];
                        ws += count[i];
                }
                dispatch_same(c, &p, &L, boxes, scores, count, g->tag);
                free(boxes);
                free(scores);
                levels_free(&L);
        }
        free(logits);
        free(deltas);
}

static void test_bad_input(void)
{
        struct det_rpn_params p = det_rpn_params_torchvision(1);
        float anchors[2 * 4] = { 0, 0, 10, 10, 5, 5, 30, 40 };
        float obj[2 * 2] = { 1.0f, NAN, 0.5f, 2.0f };
        float del[2 * 2 * 4] = { 0 };
        del[2 * 4 + 1] = NAN;   /* image 1, anchor 0: NaN box */
        int hw[2 * 2] = { 50, 50, 0, 0 };
        struct det_rpn_level lv[2] = { { obj, del, anchors, 2 }, { NULL, NULL, NULL, 0 } };
        float boxes[2 * 2000 * 4], scores[2 * 2000];
        int64_t count[2];
        for (int mp = 0; mp < 2; mp++) {
                const struct det_conv *c = mp ? MP : TV;
                struct det_rpn_params q = mp ? det_rpn_params_mlperf(1) : p;
                const char *who = mp ? "mlperf" : "torchvision";
                char what[128];
                snprintf(what, sizeof(what), "%s: an empty level and an empty image return 0", who);
                is_int(det_rpn_proposals(c, &q, lv, 2, 2, hw, boxes, scores, count), 0, what);
                snprintf(what, sizeof(what), "%s: NaN logit dropped, the other kept", who);
                ok(count[0] == 1 && scores[0] == 1.0f / (1.0f + expf(-1.0f)), what);
                /* image 1 is 0x0: torchvision's min size removes all; [R] keeps the clipped
                 * boxes (+1 widths) except the NaN one */
                snprintf(what, sizeof(what), "%s: 0x0 image: %d proposals", who, mp ? 1 : 0);
                is_int(count[1], mp ? 1 : 0, what);
        }
        hw[2] = 40;
        hw[3] = 40;
        p.pre_nms_top_n = 0;
        is_int(det_rpn_proposals(TV, &p, lv, 2, 2, hw, boxes, scores, count), 0, "pre top-n 0: returns 0");
        ok(count[0] == 0 && count[1] == 0, "pre top-n 0: no proposals");
        p.pre_nms_top_n = -1;
        is_int(det_rpn_proposals(TV, &p, lv, 2, 2, hw, boxes, scores, count), -EINVAL, "pre top-n < 0: -EINVAL");
        p.pre_nms_top_n = 10;
        hw[0] = -1;
        is_int(det_rpn_proposals(TV, &p, lv, 2, 2, hw, boxes, scores, count), -EINVAL, "negative image: -EINVAL");
        hw[0] = 50;
        lv[1].A = -1;
        is_int(det_rpn_proposals(TV, &p, lv, 2, 2, hw, boxes, scores, count), -EINVAL, "A < 0: -EINVAL");
        lv[1].A = 0;
        is_int(det_rpn_proposals(TV, &p, lv, 2, 0, hw, boxes, scores, count), 0, "no images: 0");
        /* post top-n over the batch: 1 proposal in all, the better image's */
        struct det_rpn_params q = det_rpn_params_mlperf(1);
        q.post_nms_top_n = 1;
        float obj2[2 * 2] = { 1.0f, -3.0f, 0.5f, 2.0f };
        lv[0].objectness = obj2;
        is_int(det_rpn_proposals(MP, &q, lv, 1, 2, hw, boxes, scores, count), 0, "per batch: returns 0");
        ok(count[0] == 0 && count[1] == 1 && scores[1] == 1.0f / (1.0f + expf(-2.0f)),
           "per batch: the one best over both images");
}

int main(void)
{
        struct bd_err err;
        if (bd_backend_cpu_new(1, &cpu, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                return 1;
        }
        test_golden();
        test_dispatch_bad();
        test_bad_input();
        bd_backend_free(cpu);
        return done_testing();
}

/* proposals.c: the RPN's proposal selection on the host (proposals.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "proposals.h"
#include "boxes-impl.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

struct det_rpn_params det_rpn_params_torchvision(int training)
{
        int64_t n = training ? 2000 : 1000;
        return (struct det_rpn_params){ .pre_nms_top_n = n, .post_nms_top_n = n, .level_post_nms_top_n = 0,
                                        .nms_thresh = 0.7, .min_size = 1e-3f, .score_thresh = 0.0f,
                                        .per_batch = 0 };
}

struct det_rpn_params det_rpn_params_mlperf(int training)
{
        int64_t n = training ? 2000 : 1000;
        return (struct det_rpn_params){ .pre_nms_top_n = n, .post_nms_top_n = n, .level_post_nms_top_n = n,
                                        .nms_thresh = 0.7, .min_size = 0.0f, .score_thresh = -INFINITY,
                                        .per_batch = training };
}

/* one image's candidates and their NMS keep list */
struct rpn_image {
        float *boxes;           /* (m, 4) */
        float *scores;
        int32_t *levels;
        int64_t *keep;
        int64_t m, nkeep;
};

/* the candidates of image i: per level top-n, decoded, clipped, filtered;
 * then NMS per level */
static void image_proposals(const struct det_conv *c, const struct det_rpn_params *p, const struct det_rpn_level *lv,
                            int L, int i, const int *image_hw, struct rpn_image *out)
{
        float one = c->plus_one ? 1.0f : 0.0f;
        float img_h = (float)image_hw[2 * i], img_w = (float)image_hw[2 * i + 1];
        int64_t cap = 0;
        for (int l = 0; l < L; l++)
                cap += lv[l].A < p->pre_nms_top_n ? lv[l].A : p->pre_nms_top_n;
        float *bx = xmalloc((size_t)(cap ? cap : 1) * 4 * sizeof(float));
        float *sc = xmalloc((size_t)(cap ? cap : 1) * sizeof(float));
        int32_t *lvl = xmalloc((size_t)(cap ? cap : 1) * sizeof(int32_t));
        int64_t *idx = xmalloc((size_t)(cap ? cap : 1) * sizeof(int64_t));
        int64_t m = 0;
        for (int l = 0; l < L; l++) {
                const float *obj = lv[l].objectness + (size_t)i * (size_t)lv[l].A;
                const float *del = lv[l].deltas + (size_t)i * (size_t)lv[l].A * 4;
                int64_t k = det_topk(obj, lv[l].A, p->pre_nms_top_n, idx);
                for (int64_t t = 0; t < k; t++) {
                        int64_t a = idx[t];
                        float s = det_sigmoid(obj[a]), *b = bx + 4 * m;
                        det_decode1(del + 4 * a, lv[l].anchors + 4 * a, 1.0f, 1.0f, 1.0f, 1.0f,
                                    (float)DET_BBOX_XFORM_CLIP, one, b);
                        if (det_clip_keep1(b, one, img_w, img_h, p->min_size, s, p->score_thresh)) {
                                sc[m] = s;
                                lvl[m++] = l;
                        }
                }
        }
        *out = (struct rpn_image){ bx, sc, lvl, idx, m, det_batched_nms(c, bx, sc, lvl, m, p->nms_thresh, idx) };
}

/* write the entries sel[0..k) of kept list ke (indices into its candidates)
 * as image i's rows */
static void emit(const struct det_rpn_kept *ke, const int64_t *sel, int64_t k, int64_t post, int i, float *boxes,
                 float *scores, int64_t *count)
{
        for (int64_t t = 0; t < k; t++) {
                memcpy(boxes + 4 * ((size_t)i * (size_t)post + (size_t)t), ke->boxes + 4 * sel[t], 4 * sizeof(float));
                scores[(size_t)i * (size_t)post + (size_t)t] = ke->scores[sel[t]];
        }
        count[i] = k;
}

int det_rpn_select(const struct det_rpn_params *p, int L, int N, const struct det_rpn_kept *kept, float *boxes,
                   float *scores, int64_t *count)
{
        int64_t post = p->post_nms_top_n, tot = 0;
        int64_t **sel = xcalloc((size_t)(N ? N : 1), sizeof(*sel)), *nsel = xcalloc((size_t)(N ? N : 1), 8);
        /* the per-level cap, in NMS order */
        for (int i = 0; i < N; i++) {
                const struct det_rpn_kept *ke = &kept[i];
                int64_t *per = xcalloc((size_t)(L ? L : 1), sizeof(int64_t)), j = 0;
                sel[i] = xmalloc((size_t)(ke->nkeep ? ke->nkeep : 1) * sizeof(int64_t));
                for (int64_t t = 0; t < ke->nkeep; t++) {
                        int32_t l = ke->levels[ke->keep[t]];
                        if (p->level_post_nms_top_n <= 0 || l < 0 || l >= L || per[l]++ < p->level_post_nms_top_n)
                                sel[i][j++] = ke->keep[t];
                }
                nsel[i] = j;
                tot += j;
                free(per);
        }
        float *sc = xmalloc((size_t)(tot ? tot : 1) * sizeof(float));
        int64_t *top = xmalloc((size_t)(tot ? tot : 1) * sizeof(int64_t));
        if (!p->per_batch) {
                /* per image: descending score (stable), the first post */
                for (int i = 0; i < N; i++) {
                        for (int64_t t = 0; t < nsel[i]; t++)
                                sc[t] = kept[i].scores[sel[i][t]];
                        int64_t k = det_topk(sc, nsel[i], post, top);
                        for (int64_t t = 0; t < k; t++)
                                top[t] = sel[i][top[t]];
                        emit(&kept[i], top, k, post, i, boxes, scores, count);
                }
        } else {
                /* the batch's top post: marked, each image keeps its order */
                uint8_t *mark = xcalloc((size_t)(tot ? tot : 1), 1);
                int64_t o = 0;
                for (int i = 0; i < N; o += nsel[i], i++)
                        for (int64_t t = 0; t < nsel[i]; t++)
                                sc[o + t] = kept[i].scores[sel[i][t]];
                int64_t k = det_topk(sc, tot, post, top);
                for (int64_t t = 0; t < k; t++)
                        mark[top[t]] = 1;
                o = 0;
                for (int i = 0; i < N; o += nsel[i], i++) {
                        int64_t j = 0;
                        for (int64_t t = 0; t < nsel[i]; t++)
                                if (mark[o + t])
                                        top[j++] = sel[i][t];
                        emit(&kept[i], top, j, post, i, boxes, scores, count);
                }
                free(mark);
        }
        for (int i = 0; i < N; i++)
                free(sel[i]);
        free(sel);
        free(nsel);
        free(sc);
        free(top);
        return 0;
}

int det_rpn_check(const struct det_rpn_params *p, const int64_t *A, int L, int N, const int *image_hw)
{
        if (L < 0 || N < 0 || p->pre_nms_top_n < 0 || p->post_nms_top_n < 0)
                return -EINVAL;
        for (int l = 0; l < L; l++)
                if (A[l] < 0)
                        return -EINVAL;
        for (int i = 0; i < N; i++)
                if (image_hw[2 * i] < 0 || image_hw[2 * i + 1] < 0)
                        return -EINVAL;
        return 0;
}

int det_rpn_proposals(const struct det_conv *c, const struct det_rpn_params *p, const struct det_rpn_level *lv,
                      int L, int N, const int *image_hw, float *boxes, float *scores, int64_t *count)
{
        int64_t *A = xmalloc((size_t)(L > 0 ? L : 1) * sizeof(int64_t));
        for (int l = 0; l < L; l++)
                A[l] = lv[l].A;
        int r = det_rpn_check(p, A, L, N, image_hw);
        free(A);
        if (r < 0)
                return r;
        struct rpn_image *im = xcalloc((size_t)(N ? N : 1), sizeof(*im));
        struct det_rpn_kept *kept = xcalloc((size_t)(N ? N : 1), sizeof(*kept));
        #pragma omp parallel for schedule(dynamic, 1)
        for (int i = 0; i < N; i++)
                image_proposals(c, p, lv, L, i, image_hw, &im[i]);
        for (int i = 0; i < N; i++)
                kept[i] = (struct det_rpn_kept){ im[i].boxes, im[i].scores, im[i].levels, im[i].keep, im[i].nkeep };
        det_rpn_select(p, L, N, kept, boxes, scores, count);
        for (int i = 0; i < N; i++) {
                free(im[i].boxes);
                free(im[i].scores);
                free(im[i].levels);
                free(im[i].keep);
        }
        free(im);
        free(kept);
        return 0;
}

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

/* one image's proposals after NMS and the level cap, in NMS order */
struct rpn_image {
        float *boxes;           /* (n, 4) */
        float *scores;
        int64_t n;
};

/* the candidates of image i: per level top-n, decoded, clipped, filtered;
 * then NMS per level and the level cap */
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
        int64_t nk = det_batched_nms(c, bx, sc, lvl, m, p->nms_thresh, idx);
        if (p->level_post_nms_top_n > 0) {
                int64_t *per = xcalloc((size_t)(L ? L : 1), sizeof(int64_t)), j = 0;
                for (int64_t t = 0; t < nk; t++)
                        if (per[lvl[idx[t]]]++ < p->level_post_nms_top_n)
                                idx[j++] = idx[t];
                nk = j;
                free(per);
        }
        out->boxes = xmalloc((size_t)(nk ? nk : 1) * 4 * sizeof(float));
        out->scores = xmalloc((size_t)(nk ? nk : 1) * sizeof(float));
        out->n = nk;
        for (int64_t t = 0; t < nk; t++) {
                memcpy(out->boxes + 4 * t, bx + 4 * idx[t], 4 * sizeof(float));
                out->scores[t] = sc[idx[t]];
        }
        free(bx);
        free(sc);
        free(lvl);
        free(idx);
}

/* write the entries sel[0..k) of im as image i's rows */
static void emit(const struct rpn_image *im, const int64_t *sel, int64_t k, int64_t post, int i, float *boxes,
                 float *scores, int64_t *count)
{
        for (int64_t t = 0; t < k; t++) {
                memcpy(boxes + 4 * ((size_t)i * (size_t)post + (size_t)t), im->boxes + 4 * sel[t], 4 * sizeof(float));
                scores[(size_t)i * (size_t)post + (size_t)t] = im->scores[sel[t]];
        }
        count[i] = k;
}

int det_rpn_proposals(const struct det_conv *c, const struct det_rpn_params *p, const struct det_rpn_level *lv,
                      int L, int N, const int *image_hw, float *boxes, float *scores, int64_t *count)
{
        if (L < 0 || N < 0 || p->pre_nms_top_n < 0 || p->post_nms_top_n < 0)
                return -EINVAL;
        for (int l = 0; l < L; l++)
                if (lv[l].A < 0)
                        return -EINVAL;
        for (int i = 0; i < N; i++)
                if (image_hw[2 * i] < 0 || image_hw[2 * i + 1] < 0)
                        return -EINVAL;
        int64_t post = p->post_nms_top_n;
        struct rpn_image *im = xcalloc((size_t)(N ? N : 1), sizeof(*im));
        #pragma omp parallel for schedule(dynamic, 1)
        for (int i = 0; i < N; i++)
                image_proposals(c, p, lv, L, i, image_hw, &im[i]);
        if (!p->per_batch) {
                #pragma omp parallel for schedule(dynamic, 1)
                for (int i = 0; i < N; i++) {
                        int64_t *sel = xmalloc((size_t)(im[i].n ? im[i].n : 1) * sizeof(int64_t));
                        int64_t k = det_topk(im[i].scores, im[i].n, post, sel);
                        emit(&im[i], sel, k, post, i, boxes, scores, count);
                        free(sel);
                }
        } else {
                /* the batch's top post: marked, each image keeps its order */
                int64_t tot = 0;
                for (int i = 0; i < N; i++)
                        tot += im[i].n;
                float *all = xmalloc((size_t)(tot ? tot : 1) * sizeof(float));
                int64_t *sel = xmalloc((size_t)(tot ? tot : 1) * sizeof(int64_t));
                uint8_t *mark = xcalloc((size_t)(tot ? tot : 1), 1);
                int64_t o = 0;
                for (int i = 0; i < N; o += im[i].n, i++)
                        memcpy(all + o, im[i].scores, (size_t)im[i].n * sizeof(float));
                int64_t k = det_topk(all, tot, post, sel);
                for (int64_t t = 0; t < k; t++)
                        mark[sel[t]] = 1;
                o = 0;
                for (int i = 0; i < N; i++) {
                        int64_t j = 0;
                        for (int64_t t = 0; t < im[i].n; t++)
                                if (mark[o + t])
                                        sel[j++] = t;
                        emit(&im[i], sel, j, post, i, boxes, scores, count);
                        o += im[i].n;
                }
                free(all);
                free(sel);
                free(mark);
        }
        for (int i = 0; i < N; i++) {
                free(im[i].boxes);
                free(im[i].scores);
        }
        free(im);
        return 0;
}

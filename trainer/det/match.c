/* match.c: the proposal matcher and the balanced sampler (match.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "rng.h"
#include "match.h"
#include "boxes-impl.h"
#include "sample-impl.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

const struct det_matcher det_matcher_rpn = { .high = 0.7f, .low = 0.3f, .allow_low_quality = 1 };
const struct det_matcher det_matcher_roi = { .high = 0.5f, .low = 0.5f, .allow_low_quality = 0 };

static int bad_args(const struct det_matcher *m, int64_t g, int64_t n)
{
        return g < 0 || n < 0 || !(m->low <= m->high);
}

/* the thresholds on one anchor's best IoU v (best GT b) */
static inline int32_t threshold(const struct det_matcher *m, float v, int32_t b)
{
        if (v < m->low)
                return DET_MATCH_BELOW_LOW;
        if (v < m->high)
                return DET_MATCH_BETWEEN;
        return b;
}

int det_match(const struct det_matcher *m, const float *iou, int64_t g, int64_t n, int32_t *matches)
{
        if (bad_args(m, g, n))
                return -EINVAL;
        if (g == 0) {
                for (int64_t j = 0; j < n; j++)
                        matches[j] = DET_MATCH_BELOW_LOW;
                return 0;
        }
        float *rowmax = m->allow_low_quality ? xmalloc((size_t)g * sizeof(float)) : NULL;
        int32_t *best = m->allow_low_quality ? xmalloc((size_t)(n ? n : 1) * sizeof(int32_t)) : NULL;
        #pragma omp parallel for schedule(static)
        for (int64_t j = 0; j < n; j++) {
                float v = det_denan(iou[j]);
                int32_t b = 0;
                for (int64_t i = 1; i < g; i++) {
                        float x = det_denan(iou[i * n + j]);
                        if (x > v) {    /* the first maximum, as torch.max(dim=0) */
                                v = x;
                                b = (int32_t)i;
                        }
                }
                if (best)
                        best[j] = b;
                matches[j] = threshold(m, v, b);
        }
        if (m->allow_low_quality) {
                #pragma omp parallel for schedule(static)
                for (int64_t i = 0; i < g; i++) {
                        float v = n ? det_denan(iou[i * n]) : 0.0f;
                        for (int64_t j = 1; j < n; j++)
                                v = det_smax(v, det_denan(iou[i * n + j]));
                        rowmax[i] = v;
                }
                #pragma omp parallel for schedule(static)
                for (int64_t j = 0; j < n; j++)
                        for (int64_t i = 0; i < g; i++)
                                if (det_denan(iou[i * n + j]) == rowmax[i]) {
                                        matches[j] = best[j];
                                        break;
                                }
        }
        free(rowmax);
        free(best);
        return 0;
}

int det_match_boxes(const struct det_conv *c, const struct det_matcher *m, const float *gt, int64_t g,
                    const float *boxes, int64_t n, int32_t *matches)
{
        if (bad_args(m, g, n))
                return -EINVAL;
        if (g == 0 || n == 0)
                return det_match(m, NULL, g, n, matches);
        float one = c->plus_one ? 1.0f : 0.0f;
        float *garea = xmalloc((size_t)g * sizeof(float));
        for (int64_t i = 0; i < g; i++)
                garea[i] = det_area(gt + 4 * i, one);
        /* pass 1: each anchor's first best GT, and each GT's best IoU
         * (a max: the same whatever the threads' split) */
        float *rowmax = xmalloc((size_t)g * sizeof(float));
        for (int64_t i = 0; i < g; i++)
                rowmax[i] = 0.0f;
        int32_t *best = xmalloc((size_t)n * sizeof(int32_t));
        #pragma omp parallel
        {
                float *rm = xmalloc((size_t)g * sizeof(float));
                for (int64_t i = 0; i < g; i++)
                        rm[i] = 0.0f;
                #pragma omp for schedule(static)
                for (int64_t j = 0; j < n; j++) {
                        const float *b = boxes + 4 * j;
                        float ba = det_area(b, one), v = 0.0f;
                        int32_t bi = 0;
                        for (int64_t i = 0; i < g; i++) {
                                float x = det_denan(det_iou1(gt + 4 * i, garea[i], b, ba, one));
                                if (i == 0 || x > v) {
                                        v = x;
                                        bi = (int32_t)i;
                                }
                                rm[i] = det_smax(rm[i], x);
                        }
                        best[j] = bi;
                        matches[j] = threshold(m, v, bi);
                }
                #pragma omp critical
                for (int64_t i = 0; i < g; i++)
                        rowmax[i] = det_smax(rowmax[i], rm[i]);
                free(rm);
        }
        /* pass 2: the anchors that are some GT's best get their match back */
        if (m->allow_low_quality) {
                #pragma omp parallel for schedule(static)
                for (int64_t j = 0; j < n; j++) {
                        const float *b = boxes + 4 * j;
                        float ba = det_area(b, one);
                        for (int64_t i = 0; i < g; i++)
                                if (det_denan(det_iou1(gt + 4 * i, garea[i], b, ba, one)) == rowmax[i]) {
                                        matches[j] = best[j];
                                        break;
                                }
                }
        }
        free(garea);
        free(rowmax);
        free(best);
        return 0;
}

int64_t det_rpn_labels(const int32_t *matches, const uint8_t *vis, int64_t n, int32_t *labels)
{
        int64_t npos = 0;
        for (int64_t j = 0; j < n; j++) {
                int32_t l = matches[j] >= 0 ? 1 : matches[j] == DET_MATCH_BELOW_LOW ? 0 : -1;
                if (vis && !vis[j])
                        l = -1;
                labels[j] = l;
                npos += l == 1;
        }
        return npos;
}

/* ---- sampler ---- */

/* the chosen: idx[perm[t]] for t < k, checked: perm has cnt entries, the
 * first k in range and distinct (seen: cnt bytes of scratch) */
static int apply_perm(int64_t *idx, int64_t cnt, int64_t k, const int64_t *perm, int64_t plen, uint8_t *seen,
                      int64_t *out)
{
        if (plen != cnt || (k > 0 && !perm))
                return -EINVAL;
        memset(seen, 0, (size_t)cnt);
        for (int64_t t = 0; t < k; t++) {
                if (perm[t] < 0 || perm[t] >= cnt || seen[perm[t]])
                        return -EINVAL;
                seen[perm[t]] = 1;
                out[t] = idx[perm[t]];
        }
        return 0;
}

int det_sample(const struct det_sampler *s, const int32_t *labels, int64_t n, uint64_t seed, uint64_t stream,
               const struct det_perm *perm, uint8_t *pos_mask, uint8_t *neg_mask, int64_t *pos_idx,
               int64_t *neg_idx, int64_t *num_pos, int64_t *num_neg)
{
        if (n < 0 || s->batch_size_per_image < 0 || !(s->positive_fraction >= 0 && s->positive_fraction <= 1))
                return -EINVAL;
        int64_t *pos = xmalloc((size_t)(n ? n : 1) * sizeof(int64_t));
        int64_t *neg = xmalloc((size_t)(n ? n : 1) * sizeof(int64_t));
        int64_t np = 0, nn = 0;
        for (int64_t j = 0; j < n; j++) {
                if (labels[j] >= 1)
                        pos[np++] = j;
                else if (labels[j] == 0)
                        neg[nn++] = j;
        }
        int64_t bs = s->batch_size_per_image;
        int64_t kp = (int64_t)((double)bs * s->positive_fraction);   /* Python's int(): truncation */
        kp = kp < np ? kp : np;
        int64_t kn = bs - kp < nn ? bs - kp : nn;
        int64_t *cp = xmalloc((size_t)(kp + kn + 1) * sizeof(int64_t)), *cn = cp + kp;
        int r = 0;
        if (perm) {
                uint8_t *seen = xmalloc((size_t)(n ? n : 1));
                r = apply_perm(pos, np, kp, perm->perm_pos, perm->npos, seen, cp);
                if (!r)
                        r = apply_perm(neg, nn, kn, perm->perm_neg, perm->nneg, seen, cn);
                free(seen);
        } else {
                det_partial_shuffle(pos, np, kp, seed, stream, 0);
                det_partial_shuffle(neg, nn, kn, seed, stream, 1);
                memcpy(cp, pos, (size_t)kp * sizeof(int64_t));
                memcpy(cn, neg, (size_t)kn * sizeof(int64_t));
        }
        if (!r) {
                if (pos_mask)
                        memset(pos_mask, 0, (size_t)n);
                if (neg_mask)
                        memset(neg_mask, 0, (size_t)n);
                for (int64_t t = 0; t < kp; t++) {
                        if (pos_mask)
                                pos_mask[cp[t]] = 1;
                        if (pos_idx)
                                pos_idx[t] = cp[t];
                }
                for (int64_t t = 0; t < kn; t++) {
                        if (neg_mask)
                                neg_mask[cn[t]] = 1;
                        if (neg_idx)
                                neg_idx[t] = cn[t];
                }
                if (num_pos)
                        *num_pos = kp;
                if (num_neg)
                        *num_neg = kn;
        }
        free(pos);
        free(neg);
        free(cp);
        return r;
}

/* ---- the RPN's targets ---- */

int det_rpn_batch_check(const struct det_rpn_batch *b, int64_t A)
{
        if (!b->m || !b->s || !b->k || !b->off || b->L < 1 || b->N < 0 || (b->N > 0 && (!b->gt_off || !b->image_hw ||
                                                                                      !b->streams)) ||
            b->off[0] != 0 || b->off[b->L] != A || !(b->m->low <= b->m->high) || b->s->batch_size_per_image < 0 ||
            !(b->s->positive_fraction >= 0 && b->s->positive_fraction <= 1))
                return -EINVAL;
        for (int l = 0; l < b->L; l++)
                if (b->off[l + 1] < b->off[l])
                        return -EINVAL;
        if (b->N > 0 && b->gt_off[0] != 0)
                return -EINVAL;
        for (int i = 0; i < b->N; i++)
                if (b->gt_off[i + 1] < b->gt_off[i] || b->image_hw[2 * i] < 0 || b->image_hw[2 * i + 1] < 0)
                        return -EINVAL;
        return 0;
}

int det_rpn_targets(const struct det_conv *c, const struct det_rpn_batch *b, const float *anchors, const float *gt,
                    int32_t *labels, float *tgt, int64_t *npos, int64_t *nneg)
{
        const int64_t A = b->L >= 1 && b->off ? b->off[b->L] : -1, N = b->N;
        if (A < 0 || det_rpn_batch_check(b, A) < 0)
                return -EINVAL;
        size_t na = (size_t)(A ? A : 1);
        struct det_rpn_work own = { 0 }, *w = b->work ? b->work : &own;
        if (w->cap < na) {
                det_rpn_work_free(w);
                w->matches = xmalloc(na * sizeof(int32_t));
                w->lab = xmalloc(na * sizeof(int32_t));
                w->vis = xmalloc(na);
                w->pos = xmalloc(na);
                w->neg = xmalloc(na);
                w->cap = na;
        }
        int32_t *matches = w->matches, *lab = w->lab;
        uint8_t *vis = w->vis, *pos = w->pos, *neg = w->neg;
        int r = 0;
        for (int i = 0; i < b->N && r == 0; i++) {
                const float *g = gt + 4 * b->gt_off[i];
                int64_t ng = b->gt_off[i + 1] - b->gt_off[i];
                det_anchor_visibility(c, anchors, A, (float)b->image_hw[2 * i + 1], (float)b->image_hw[2 * i], vis);
                if ((r = det_match_boxes(c, b->m, g, ng, anchors, A, matches)) < 0)
                        break;
                det_rpn_labels(matches, vis, A, lab);
                if ((r = det_sample(b->s, lab, A, b->seed, b->streams[i], b->perms ? &b->perms[i] : NULL, pos, neg,
                                    NULL, NULL, &npos[i], &nneg[i])) < 0)
                        break;
                for (int l = 0; l < b->L; l++) {
                        int64_t a0 = b->off[l], Al = b->off[l + 1] - a0, base = N * a0 + i * Al;
                        for (int64_t j = 0; j < Al; j++) {
                                int64_t a = a0 + j, o = base + j;
                                labels[o] = pos[a] ? 1 : neg[a] ? 0 : -1;
                                if (pos[a])
                                        det_encode(c, b->k, g + 4 * matches[a], anchors + 4 * a, 1, tgt + 4 * o);
                                else
                                        tgt[4 * o] = tgt[4 * o + 1] = tgt[4 * o + 2] = tgt[4 * o + 3] = 0;
                        }
                }
        }
        det_rpn_work_free(&own);
        return r;
}

void det_rpn_work_free(struct det_rpn_work *w)
{
        free(w->matches);
        free(w->lab);
        free(w->vis);
        free(w->pos);
        free(w->neg);
        memset(w, 0, sizeof(*w));
}

/* ssd-boxes.c: default boxes, matching and encoding, decoding and NMS. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ssd-boxes.h"

static const int ref_fsize[SSD_LEVELS] = { 38, 19, 10, 5, 3, 1 };
static const int ref_steps[SSD_LEVELS] = { 8, 16, 32, 64, 100, 300 };
static const int ref_scales[SSD_LEVELS + 1] = { 21, 45, 99, 153, 207, 261, 315 };
static const int ref_nratios[SSD_LEVELS] = { 1, 2, 2, 2, 1, 1 };       /* ratios 2 | 2, 3 */

static float clamp01(float v)
{
        return v < 0 ? 0 : v > 1 ? 1 : v;
}

int ssd_dboxes_init(struct ssd_dboxes *d, int image_size, const int fsize[SSD_LEVELS], struct bd_err *err)
{
        memset(d, 0, sizeof(*d));
        int reference = 1;
        for (int k = 0; k < SSD_LEVELS; k++) {
                if (fsize[k] < 1 || fsize[k] > 4096)
                        return bd_err_set(err, -EINVAL, "ssd: feature map %d of size %d", k, fsize[k]);
                reference &= fsize[k] == ref_fsize[k];
        }
        d->image_size = image_size;
        for (int k = 0; k < SSD_LEVELS; k++) {
                d->fsize[k] = fsize[k];
                d->per_cell[k] = 2 + 2 * ref_nratios[k];
                d->offset[k] = d->n;
                d->n += (int64_t)d->per_cell[k] * fsize[k] * fsize[k];
        }
        d->xywh = xmalloc((size_t)d->n * 4 * sizeof(float));
        d->ltrb = xmalloc((size_t)d->n * 4 * sizeof(float));
        int64_t b = 0;
        for (int k = 0; k < SSD_LEVELS; k++) {
                /* the reference computes in double and stores float32 */
                double g = reference ? 300.0 / ref_steps[k] : fsize[k];
                double sk1 = ref_scales[k] / 300.0, sk2 = ref_scales[k + 1] / 300.0, sk3 = sqrt(sk1 * sk2);
                double sizes[SSD_MAX_PER_CELL][2] = { { sk1, sk1 }, { sk3, sk3 } };
                int ns = 2;
                for (int r = 0; r < ref_nratios[k]; r++) {
                        double a = r == 0 ? 2 : 3, w = sk1 * sqrt(a), h = sk1 / sqrt(a);
                        sizes[ns][0] = w, sizes[ns][1] = h, ns++;
                        sizes[ns][0] = h, sizes[ns][1] = w, ns++;
                }
                for (int s = 0; s < ns; s++)
                        for (int i = 0; i < fsize[k]; i++)
                                for (int j = 0; j < fsize[k]; j++, b++) {
                                        float *x = d->xywh + 4 * b, *l = d->ltrb + 4 * b;
                                        x[0] = clamp01((float)((j + 0.5) / g));
                                        x[1] = clamp01((float)((i + 0.5) / g));
                                        x[2] = clamp01((float)sizes[s][0]);
                                        x[3] = clamp01((float)sizes[s][1]);
                                        l[0] = x[0] - 0.5f * x[2];
                                        l[1] = x[1] - 0.5f * x[3];
                                        l[2] = x[0] + 0.5f * x[2];
                                        l[3] = x[1] + 0.5f * x[3];
                                }
        }
        return 0;
}

void ssd_dboxes_release(struct ssd_dboxes *d)
{
        free(d->xywh);
        free(d->ltrb);
        memset(d, 0, sizeof(*d));
}

float ssd_iou(const float *a, const float *b)
{
        float dx = fminf(a[2], b[2]) - fmaxf(a[0], b[0]);
        float dy = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
        if (dx < 0)
                dx = 0;
        if (dy < 0)
                dy = 0;
        float inter = dx * dy;
        float area1 = (a[2] - a[0]) * (a[3] - a[1]);
        float area2 = (b[2] - b[0]) * (b[3] - b[1]);
        return inter / (area1 + area2 - inter);
}

/* ---- matching and encoding ------------------------------------------------------- */

int64_t ssd_encode(const struct ssd_dboxes *d, const float *gt, const int32_t *labels, int G, float *best,
                   int32_t *label, float *loc)
{
        const int64_t n = d->n;
        if (G < 0 || G > SSD_MAX_GT)
                return -EINVAL;
        float *own = NULL;
        if (!best)
                best = own = xmalloc((size_t)n * sizeof(float));
        /* label[b]: index of the best ground truth of default box b (the first
         * of equals), best[b] its IoU; -1 while there is none */
        for (int64_t b = 0; b < n; b++)
                label[b] = -1;
        int64_t forced[SSD_MAX_GT];
        for (int g = 0; g < G; g++) {
                const float *a = gt + 4 * g;
                float area1 = (a[2] - a[0]) * (a[3] - a[1]);
                int64_t bb = 0;
                float bv = 0;
                for (int64_t b = 0; b < n; b++) {
                        const float *c = d->ltrb + 4 * b;
                        float dx = fminf(a[2], c[2]) - fmaxf(a[0], c[0]);
                        float dy = fminf(a[3], c[3]) - fmaxf(a[1], c[1]);
                        dx = dx < 0 ? 0 : dx;
                        dy = dy < 0 ? 0 : dy;
                        float inter = dx * dy;
                        float area2 = (c[2] - c[0]) * (c[3] - c[1]);
                        float v = inter / (area1 + area2 - inter);
                        if (b == 0 || v > bv)
                                bb = b, bv = v;
                        if (label[b] < 0 || v > best[b])
                                label[b] = g, best[b] = v;
                }
                forced[g] = bb;
        }
        for (int64_t b = 0; b < n; b++)
                if (label[b] >= 0 && !(best[b] > 0.5f))
                        label[b] = -1;
        /* each ground truth's best default box is forced to it, later ones winning */
        for (int g = 0; g < G; g++)
                label[forced[g]] = g;
        int64_t npos = 0;
        for (int64_t b = 0; b < n; b++) {
                const float *dx = d->xywh + 4 * b;
                float *t = loc + 4 * b;
                int g = label[b];
                if (g < 0) {
                        label[b] = 0;
                        t[0] = t[1] = t[2] = t[3] = 0;
                        continue;
                }
                const float *a = gt + 4 * g;
                float x = 0.5f * (a[0] + a[2]), y = 0.5f * (a[1] + a[3]), w = -a[0] + a[2], h = -a[1] + a[3];
                t[0] = 10.0f * (x - dx[0]) / dx[2];
                t[1] = 10.0f * (y - dx[1]) / dx[3];
                t[2] = 5.0f * logf(w / dx[2]);
                t[3] = 5.0f * logf(h / dx[3]);
                label[b] = labels[g];
                npos++;
        }
        free(own);
        return npos;
}

/* ---- decoding -------------------------------------------------------------------- */

void ssd_nms_cfg_init(struct ssd_nms_cfg *c)
{
        c->score_min = 0.05f;
        c->iou_max = 0.5f;
        c->per_class = 200;
        c->max_out = 200;
}

void ssd_decoder_init(struct ssd_decoder *dec, int64_t n, int64_t K, const struct ssd_nms_cfg *c)
{
        dec->n = n;
        dec->K = K;
        dec->boxes = xmalloc((size_t)n * 4 * sizeof(float));
        dec->prob = xmalloc((size_t)n * (size_t)K * sizeof(float));
        dec->cand = xmalloc((size_t)n * sizeof(int32_t));
        dec->cscore = xmalloc((size_t)n * sizeof(float));
        dec->all = xmalloc((size_t)K * (size_t)c->per_class * sizeof(struct ssd_det));
}

void ssd_decoder_release(struct ssd_decoder *dec)
{
        free(dec->boxes);
        free(dec->prob);
        free(dec->cand);
        free(dec->cscore);
        free(dec->all);
        memset(dec, 0, sizeof(*dec));
}

/* Candidates best first; equal scores in the order a stable ascending sort
 * taken from its end gives (the later index first). */
static int cmp_cand(const void *pa, const void *pb, void *ctx)
{
        const float *score = ctx;
        int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
        float sa = score[a], sb = score[b];
        if (sa != sb)
                return sa > sb ? -1 : 1;
        return a > b ? -1 : a < b;
}

static int cmp_det(const void *pa, const void *pb)
{
        const struct ssd_det *a = pa, *b = pb;
        if (a->score != b->score)
                return a->score > b->score ? -1 : 1;
        if (a->label != b->label)
                return a->label > b->label ? -1 : 1;
        return 0;
}

int ssd_decode(struct ssd_decoder *dec, const struct ssd_dboxes *d, const struct ssd_nms_cfg *c, const float *loc,
               const float *logits, struct ssd_det *out)
{
        const int64_t n = d->n, K = dec->K;
        for (int64_t b = 0; b < n; b++) {
                const float *t = loc + 4 * b, *dx = d->xywh + 4 * b;
                float x = 0.1f * t[0] * dx[2] + dx[0];
                float y = 0.1f * t[1] * dx[3] + dx[1];
                /* sizes at most 62.5 times the default box's, as torchvision's
                 * box coder clips them: early in training a large output
                 * must not make an infinite box */
                float w = expf(fminf(0.2f * t[2], SSD_LOG_SIZE_CLIP)) * dx[2];
                float h = expf(fminf(0.2f * t[3], SSD_LOG_SIZE_CLIP)) * dx[3];
                float *o = dec->boxes + 4 * b;
                o[0] = x - 0.5f * w;
                o[1] = y - 0.5f * h;
                o[2] = x + 0.5f * w;
                o[3] = y + 0.5f * h;
                const float *z = logits + b * K;
                float *p = dec->prob + b * K;
                float m = z[0];
                for (int64_t k = 1; k < K; k++)
                        m = z[k] > m ? z[k] : m;
                float s = 0;
                for (int64_t k = 0; k < K; k++)
                        s += p[k] = expf(z[k] - m);
                /* a box the network gave no finite place is no candidate */
                int lost = !(isfinite(x) && isfinite(y) && isfinite(w) && isfinite(h));
                for (int64_t k = 0; k < K; k++)
                        p[k] = lost ? 0 : p[k] / s;
        }
        int nall = 0;
        for (int64_t k = 1; k < K; k++) {
                int nc = 0;
                for (int64_t b = 0; b < n; b++) {
                        float v = dec->prob[b * K + k];
                        dec->cscore[b] = v;
                        if (v > c->score_min)
                                dec->cand[nc++] = (int32_t)b;
                }
                if (!nc)
                        continue;
                qsort_r(dec->cand, (size_t)nc, sizeof(int32_t), cmp_cand, dec->cscore);
                if (nc > c->per_class)
                        nc = c->per_class;
                /* greedy NMS: keep a box unless a better kept one overlaps it */
                int first = nall;
                for (int i = 0; i < nc; i++) {
                        const float *bx = dec->boxes + 4 * dec->cand[i];
                        int keep = 1;
                        for (int j = first; j < nall && keep; j++)
                                keep = ssd_iou(dec->all[j].box, bx) < c->iou_max;
                        if (!keep)
                                continue;
                        struct ssd_det *e = &dec->all[nall++];
                        memcpy(e->box, bx, sizeof(e->box));
                        e->score = dec->cscore[dec->cand[i]];
                        e->label = (int32_t)k;
                }
        }
        qsort(dec->all, (size_t)nall, sizeof(*dec->all), cmp_det);
        int nout = nall < c->max_out ? nall : c->max_out;
        memcpy(out, dec->all, (size_t)nout * sizeof(*out));
        return nout;
}

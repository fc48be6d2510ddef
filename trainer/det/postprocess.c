/* postprocess.c: detections, boxes to the original size, mask paste and
 * RLE, in both conventions (postprocess.h). */
#include "config.h"

#include "det-fp.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "backend.h"
#include "mask.h"
#include "postprocess.h"

#define DET_HD static inline
#include "postprocess-impl.h"

#define CODER_10_10_5_5 { 10.0f, 10.0f, 5.0f, 5.0f, (float)DET_BBOX_XFORM_CLIP }

const struct det_post_config det_post_mlperf = {
        .coder = CODER_10_10_5_5, .score_thresh = 0.05f, .nms_thresh = 0.5, .detections_per_img = 100,
        .min_size = -1.0f, .kthvalue_cut = 1,
};
const struct det_post_config det_post_torchvision = {
        .coder = CODER_10_10_5_5, .score_thresh = 0.05f, .nms_thresh = 0.5, .detections_per_img = 100,
        .min_size = 1e-2f, .kthvalue_cut = 0,
};

void det_dets_release(struct det_dets *d)
{
        free(d->boxes);
        free(d->scores);
        free(d->labels);
        free(d->proposal);
        memset(d, 0, sizeof(*d));
}

static void dets_alloc(struct det_dets *d, int64_t n)
{
        size_t k = n > 0 ? (size_t)n : 1;
        d->n = 0;
        d->boxes = xmalloc(k * 4 * sizeof(float));
        d->scores = xmalloc(k * sizeof(float));
        d->labels = xmalloc(k * sizeof(int32_t));
        d->proposal = xmalloc(k * sizeof(int64_t));
}

/* appends entry i of src to dst */
static void dets_push(struct det_dets *dst, const struct det_dets *src, int64_t i)
{
        int64_t k = dst->n++;
        memcpy(dst->boxes + 4 * k, src->boxes + 4 * i, 4 * sizeof(float));
        dst->scores[k] = src->scores[i];
        dst->labels[k] = src->labels[i];
        dst->proposal[k] = src->proposal[i];
}

int det_post_candidates(const struct det_conv *c, const struct det_post_config *pc, const float *logits,
                        const float *deltas, const float *props, int64_t N, int K, int img_h, int img_w,
                        struct det_dets *cand)
{
        if (N < 0 || K < 2 || img_h < 0 || img_w < 0)
                return -EINVAL;
        float one = c->plus_one ? 1.0f : 0.0f;
        float wmax = (float)img_w - one, hmax = (float)img_h - one;
        dets_alloc(cand, N * (K - 1));
        for (int64_t i = 0; i < N; i++) {
                const float *l = logits + i * K;
                float mx, inv = det_softmax_inv(l, K, &mx);
                for (int j = 1; j < K; j++) {
                        float s = expf(l[j] - mx) * inv;
                        if (!(s > pc->score_thresh))
                                continue;
                        int64_t k = cand->n++;
                        det_decode_clip(one, &pc->coder, deltas + (i * K + j) * 4, props + 4 * i, wmax, hmax,
                                        cand->boxes + 4 * k);
                        cand->scores[k] = s;
                        cand->labels[k] = j;
                        cand->proposal[k] = i;
                }
        }
        return 0;
}

static int cmp_float(const void *pa, const void *pb)
{
        float a = *(const float *)pa, b = *(const float *)pb;
        return (a > b) - (a < b);
}

int det_post_select(const struct det_conv *c, const struct det_post_config *pc, const struct det_dets *cand,
                    struct det_dets *out)
{
        if (cand->n < 0)
                return -EINVAL;
        struct det_dets f;
        dets_alloc(&f, cand->n);
        for (int64_t i = 0; i < cand->n; i++) {
                const float *b = cand->boxes + 4 * i;
                /* remove_small_boxes: ws >= min_size & hs >= min_size (NaN fails) */
                if (pc->min_size >= 0 && !(b[2] - b[0] >= pc->min_size && b[3] - b[1] >= pc->min_size))
                        continue;
                dets_push(&f, cand, i);
        }
        int64_t *keep = xmalloc((size_t)(f.n ? f.n : 1) * sizeof(*keep));
        int64_t nk = det_batched_nms(c, f.boxes, f.scores, f.labels, f.n, pc->nms_thresh, keep);
        int64_t dets = pc->detections_per_img;
        dets_alloc(out, nk);
        if (!pc->kthvalue_cut) {
                if (nk > dets)
                        nk = dets > 0 ? dets : 0;
                for (int64_t k = 0; k < nk; k++)
                        dets_push(out, &f, keep[k]);
        } else {
                float th = -INFINITY;
                if (nk > dets && dets > 0) {
                        /* torch.kthvalue(scores, nk - dets + 1): the dets-th largest */
                        float *s = xmalloc((size_t)nk * sizeof(float));
                        for (int64_t k = 0; k < nk; k++)
                                s[k] = f.scores[keep[k]];
                        qsort(s, (size_t)nk, sizeof(float), cmp_float);
                        th = s[nk - dets];
                        free(s);
                }
                for (int64_t k = 0; k < nk; k++)
                        if (f.scores[keep[k]] >= th)
                                dets_push(out, &f, keep[k]);
        }
        free(keep);
        det_dets_release(&f);
        return 0;
}

int det_postprocess(const struct det_conv *c, const struct det_post_config *pc, const float *logits,
                    const float *deltas, const float *props, int64_t N, int K, int img_h, int img_w,
                    struct det_dets *out)
{
        struct det_dets cand;
        int r = det_post_candidates(c, pc, logits, deltas, props, N, K, img_h, img_w, &cand);
        if (r < 0)
                return r;
        r = det_post_select(c, pc, &cand, out);
        det_dets_release(&cand);
        return r;
}

void det_resize_boxes(const struct det_conv *c, float *boxes, int64_t n, int h, int w, int orig_h, int orig_w)
{
        float rw, rh;
        if (c->plus_one) {
                rw = (float)((double)orig_w / w);
                rh = (float)((double)orig_h / h);
        } else {
                rw = (float)orig_w / (float)w;
                rh = (float)orig_h / (float)h;
        }
        for (int64_t i = 0; i < n; i++) {
                float *b = boxes + 4 * i;
                b[0] *= rw;
                b[1] *= rh;
                b[2] *= rw;
                b[3] *= rh;
        }
}

/* ---- masks ---- */

int det_mask_probs(const float *logits, const int32_t *labels, int64_t n, int K, int M, float *probs)
{
        if (n < 0 || K < 1 || M < 1)
                return -EINVAL;
        size_t mm = (size_t)M * M;
        for (int64_t i = 0; i < n; i++) {
                float *p = probs + i * mm;
                if (labels[i] < 0 || labels[i] >= K) {
                        memset(p, 0, mm * sizeof(float));
                        continue;
                }
                const float *l = logits + ((size_t)i * K + (size_t)labels[i]) * mm;
                for (size_t q = 0; q < mm; q++)
                        p[q] = 1.0f / (1.0f + expf(-l[q]));
        }
        return 0;
}

int det_paste_masks(const float *masks, const float *boxes, int64_t n, int M, int H, int W, float *out)
{
        if (n < 0 || M < 1 || H < 0 || W < 0)
                return -EINVAL;
        size_t img = (size_t)H * W, mm = (size_t)M * M;
#pragma omp parallel for schedule(dynamic, 1)
        for (int64_t i = 0; i < n; i++) {
                float *o = out + i * img;
                memset(o, 0, img * sizeof(float));
                int64_t ib[4], r[4];
                if (!det_paste_box(boxes + 4 * i, M, ib))
                        continue;
                det_paste_clip(ib, H, W, r);
                for (int64_t y = r[1]; y < r[3]; y++)
                        for (int64_t x = r[0]; x < r[2]; x++)
                                o[y * W + x] = det_paste_px(masks + i * mm, M, ib, y, x);
        }
        return 0;
}

int det_mask_rle(const float *img, int H, int W, float thr, struct rle *r)
{
        if (H < 0 || W < 0)
                return -EINVAL;
        size_t a = (size_t)H * W;
        uint8_t *bits = xmalloc(a ? a : 1);
        for (size_t q = 0; q < a; q++)
                bits[q] = img[q] > thr;
        rle_encode_rows(r, bits, (uint32_t)H, (uint32_t)W, (size_t)W);
        free(bits);
        return 0;
}

/* ---- backend-level ---- */

int det_check_tensor(struct bd_backend *be, const char *op, const char *name, const struct bd_tensor *t, int ndim,
                     int64_t d0, int64_t dl)
{
        char b[128];
        if (!t)
                return bd_err_set(&be->err, -EINVAL, "%s: %s is missing", op, name);
        if (t->ndim != ndim || t->dtype != BD_F32 || (d0 >= 0 && t->dims[0] != d0) ||
            (dl >= 0 && t->dims[ndim - 1] != dl))
                return bd_err_set(&be->err, -EINVAL, "%s: %s has the wrong shape or type: %s", op, name,
                                  bd_tensor_str(t, b, sizeof(b)));
        if (t->dev != be->dev)
                return bd_err_set(&be->err, -EINVAL, "%s: %s is on the %s, the backend on the %s", op, name,
                                  t->dev == BD_CUDA ? "GPU" : "host", be->dev == BD_CUDA ? "GPU" : "host");
        if (!t->data && bd_tensor_numel(t) > 0)
                return bd_err_set(&be->err, -EINVAL, "%s: %s has no data", op, name);
        return 0;
}

#if HAVE_CUDA
struct cand_ent {
        int64_t idx;
        int64_t k;
};

static int cmp_cand(const void *pa, const void *pb)
{
        const struct cand_ent *a = pa, *b = pb;
        return (a->idx > b->idx) - (a->idx < b->idx);
}

/* the GPU's candidates, copied back and put in (proposal, class) order */
static int cuda_candidates(struct bd_backend *be, const struct det_conv *c, const struct det_post_config *pc,
                           const struct bd_tensor *logits, const struct bd_tensor *deltas,
                           const struct bd_tensor *props, int img_h, int img_w, struct det_dets *cand)
{
        int64_t N = logits->dims[0], K = logits->dims[1], cap = N * (K - 1);
        /* the counter, padded to 8 bytes, then the indices, scores and boxes */
        size_t bytes = sizeof(int64_t) + (size_t)cap * (sizeof(int64_t) + 5 * sizeof(float));
        char *d = be->ops->alloc(be, bytes);
        if (!d)
                return bd_err_set(&be->err, -ENOMEM, "postprocess: no GPU memory for %lld candidates", (long long)cap);
        int *dcnt = (int *)d;
        int64_t *didx = (int64_t *)(d + 8);
        float *dsc = (float *)(didx + cap), *dbox = dsc + cap;
        int cnt = 0, r;
        r = det_cuda_candidates(bd_backend_cuda_stream(be), c->plus_one, &pc->coder, pc->score_thresh, logits->data,
                                deltas->data, props->data, N, (int)K, img_h, img_w, dcnt, didx, dsc, dbox);
        if (r == 0)
                r = be->ops->copy(be, &cnt, BD_CPU, dcnt, BD_CUDA, sizeof(int));
        if (r == 0)
                r = be->ops->sync(be);
        int64_t *hidx = xmalloc((size_t)(cnt ? cnt : 1) * sizeof(int64_t));
        float *hsc = xmalloc((size_t)(cnt ? cnt : 1) * 5 * sizeof(float)), *hbox = hsc + cnt;
        if (r == 0 && cnt) {
                r = be->ops->copy(be, hidx, BD_CPU, didx, BD_CUDA, (size_t)cnt * sizeof(int64_t));
                if (r == 0)
                        r = be->ops->copy(be, hsc, BD_CPU, dsc, BD_CUDA, (size_t)cnt * sizeof(float));
                if (r == 0)
                        r = be->ops->copy(be, hbox, BD_CPU, dbox, BD_CUDA, (size_t)cnt * 4 * sizeof(float));
                if (r == 0)
                        r = be->ops->sync(be);
        }
        be->ops->free(be, d);
        if (r == 0) {
                /* the atomic counter's order is the GPU's: sorted back by (proposal, class) */
                struct cand_ent *o = xmalloc((size_t)(cnt ? cnt : 1) * sizeof(*o));
                for (int k = 0; k < cnt; k++)
                        o[k] = (struct cand_ent){ hidx[k], k };
                qsort(o, (size_t)cnt, sizeof(*o), cmp_cand);
                dets_alloc(cand, cnt);
                for (int k = 0; k < cnt; k++) {
                        int64_t s = o[k].k;
                        memcpy(cand->boxes + 4 * k, hbox + 4 * s, 4 * sizeof(float));
                        cand->scores[k] = hsc[s];
                        cand->labels[k] = (int32_t)(o[k].idx % K);
                        cand->proposal[k] = o[k].idx / K;
                }
                cand->n = cnt;
                free(o);
        }
        free(hidx);
        free(hsc);
        return r;
}
#endif

int det_op_postprocess(struct bd_backend *be, const struct det_conv *c, const struct det_post_config *pc,
                       const struct bd_tensor *logits, const struct bd_tensor *deltas, const struct bd_tensor *props,
                       int img_h, int img_w, struct det_dets *out)
{
        int r;
        if ((r = det_check_tensor(be, "postprocess", "class logits", logits, 2, -1, -1)) < 0)
                return r;
        int64_t N = logits->dims[0], K = logits->dims[1];
        if (K < 2 || K > INT32_MAX / 4)
                return bd_err_set(&be->err, -EINVAL, "postprocess: %lld classes", (long long)K);
        if ((r = det_check_tensor(be, "postprocess", "box deltas", deltas, 2, N, 4 * K)) < 0 ||
            (r = det_check_tensor(be, "postprocess", "proposals", props, 2, N, 4)) < 0)
                return r;
        if (img_h < 0 || img_w < 0)
                return bd_err_set(&be->err, -EINVAL, "postprocess: image of %d x %d", img_w, img_h);
        struct det_dets cand;
        memset(&cand, 0, sizeof(cand));
        if (be->dev == BD_CPU) {
                r = det_post_candidates(c, pc, logits->data, deltas->data, props->data, N, (int)K, img_h, img_w,
                                        &cand);
        } else {
#if HAVE_CUDA
                if (N == 0)
                        dets_alloc(&cand, 0);
                else if ((r = cuda_candidates(be, c, pc, logits, deltas, props, img_h, img_w, &cand)) < 0)
                        return r;
#else
                return bd_err_set(&be->err, -EOPNOTSUPP, "postprocess: built without CUDA");
#endif
        }
        if (r == 0)
                r = det_post_select(c, pc, &cand, out);
        det_dets_release(&cand);
        if (r < 0)
                return bd_err_set(&be->err, r, "postprocess: bad arguments");
        return 0;
}

int det_op_paste_masks(struct bd_backend *be, const struct bd_tensor *masks, const struct bd_tensor *boxes, int H,
                       int W, struct bd_tensor *out)
{
        int r;
        if ((r = det_check_tensor(be, "paste_masks", "masks", masks, 3, -1, -1)) < 0)
                return r;
        int64_t n = masks->dims[0], M = masks->dims[1];
        if (M < 1 || masks->dims[2] != M || M > 65536)
                return bd_err_set(&be->err, -EINVAL, "paste_masks: masks are not square: %lld x %lld",
                                  (long long)M, (long long)masks->dims[2]);
        if ((r = det_check_tensor(be, "paste_masks", "boxes", boxes, 2, n, 4)) < 0)
                return r;
        if (H < 0 || W < 0)
                return bd_err_set(&be->err, -EINVAL, "paste_masks: image of %d x %d", W, H);
        int64_t dims[3] = { n, H, W };
        if ((r = bd_tensor_resize(be, out, BD_F32, BD_NCHW, 3, dims)) < 0)
                return bd_err_set(&be->err, r, "paste_masks: no memory for (%lld, %d, %d)", (long long)n, H, W);
        if (be->dev == BD_CPU)
                return det_paste_masks(masks->data, boxes->data, n, (int)M, H, W, out->data);
#if HAVE_CUDA
        if (n == 0 || (int64_t)H * W == 0)
                return 0;
        if ((r = det_cuda_paste_masks(bd_backend_cuda_stream(be), masks->data, boxes->data, n, (int)M, H, W,
                                      out->data)) < 0)
                return bd_err_set(&be->err, r, "paste_masks: kernel launch failed");
        return 0;
#else
        return bd_err_set(&be->err, -EOPNOTSUPP, "paste_masks: built without CUDA");
#endif
}

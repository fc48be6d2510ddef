/* boxes-dev.c: the detection operators on a backend (boxes-dev.h): operand
 * checks, output shapes, then the host functions or the CUDA launchers. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "boxes-dev.h"

/* t is a plain dt tensor of ndim dims on be's device, with d0, d1 (-1: any) */
static int want(struct bd_backend *be, const char *op, const char *name, const struct bd_tensor *t,
                enum bd_dtype dt, int ndim, int64_t d0, int64_t d1)
{
        char buf[96];
        if (!t || (!t->data && bd_tensor_numel(t) > 0))
                return bd_err_set(&be->err, -EINVAL, "%s: %s missing", op, name);
        if (t->dev != be->dev || t->dtype != dt || t->ndim != ndim || t->layout == BD_NCHW8C ||
            (d0 >= 0 && t->dims[0] != d0) || (ndim > 1 && d1 >= 0 && t->dims[1] != d1))
                return bd_err_set(&be->err, -EINVAL, "%s: %s is %s, want %d-D %s (%lld, %lld) on %s", op, name,
                                  bd_tensor_str(t, buf, sizeof(buf)), ndim, bd_dtype_name(dt), (long long)d0,
                                  (long long)d1, be->dev == BD_CPU ? "cpu" : "cuda");
        return 0;
}

static int resize(struct bd_backend *be, struct bd_tensor *t, enum bd_dtype dt, int ndim, int64_t d0, int64_t d1,
                  int64_t d2)
{
        int64_t dims[3] = { d0, d1, d2 };
        return bd_tensor_resize(be, t, dt, BD_NCHW, ndim, dims);
}

static int no_cuda(struct bd_backend *be, const char *op)
{
        return bd_err_set(&be->err, -EOPNOTSUPP, "%s: no %s version (built without CUDA)", op,
                          be->dev == BD_CUDA ? "cuda" : "device");
}

#if HAVE_CUDA
#define ON_CUDA(be) ((be)->dev == BD_CUDA)
#else
#define ON_CUDA(be) 0
#endif

int det_dev_grid_anchors(struct bd_backend *be, const float *cell, int ncell, int H, int W, int stride_y, int stride_x,
                         struct bd_tensor *out)
{
        const char *op = "det grid anchors";
        if (ncell < 0 || ncell > 64 || H < 0 || W < 0)
                return bd_err_set(&be->err, -EINVAL, "%s: %d cell anchors (at most 64), map %dx%d", op, ncell, H, W);
        int r = resize(be, out, BD_F32, 2, (int64_t)H * W * ncell, 4, 0);
        if (r < 0)
                return r;
        if (be->dev == BD_CPU)
                return det_grid_anchors(cell, ncell, H, W, stride_y, stride_x, out->data) < 0 ? -EINVAL : 0;
#if HAVE_CUDA
        if (ON_CUDA(be))
                return det_cuda_grid_anchors(bd_backend_cuda_stream(be), cell, ncell, H, W, stride_y, stride_x,
                                             out->data, &be->err);
#endif
        return no_cuda(be, op);
}

int det_dev_encode(struct bd_backend *be, const struct det_conv *c, const struct det_coder *k,
                   const struct bd_tensor *gt, const struct bd_tensor *props, struct bd_tensor *codes)
{
        const char *op = "det encode";
        int r;
        if ((r = want(be, op, "gt", gt, BD_F32, 2, -1, 4)) < 0 ||
            (r = want(be, op, "proposals", props, BD_F32, 2, gt->dims[0], 4)) < 0 ||
            (r = resize(be, codes, BD_F32, 2, gt->dims[0], 4, 0)) < 0)
                return r;
        if (be->dev == BD_CPU) {
                det_encode(c, k, gt->data, props->data, gt->dims[0], codes->data);
                return 0;
        }
#if HAVE_CUDA
        if (ON_CUDA(be))
                return det_cuda_encode(bd_backend_cuda_stream(be), c->plus_one, k, gt->data, props->data,
                                       gt->dims[0], codes->data, &be->err);
#endif
        return no_cuda(be, op);
}

int det_dev_decode(struct bd_backend *be, const struct det_conv *c, const struct det_coder *k,
                   const struct bd_tensor *codes, const struct bd_tensor *boxes, struct bd_tensor *out)
{
        const char *op = "det decode";
        int r;
        if ((r = want(be, op, "codes", codes, BD_F32, 2, -1, -1)) < 0 ||
            (r = want(be, op, "boxes", boxes, BD_F32, 2, codes->dims[0], 4)) < 0)
                return r;
        if (codes->dims[1] % 4 != 0 || codes->dims[1] / 4 > INT32_MAX)
                return bd_err_set(&be->err, -EINVAL, "%s: codes have %lld columns, want 4 per class", op,
                                  (long long)codes->dims[1]);
        if ((r = resize(be, out, BD_F32, 2, codes->dims[0], codes->dims[1], 0)) < 0)
                return r;
        int ncls = (int)(codes->dims[1] / 4);
        if (be->dev == BD_CPU) {
                det_decode(c, k, codes->data, boxes->data, codes->dims[0], ncls, out->data);
                return 0;
        }
#if HAVE_CUDA
        if (ON_CUDA(be))
                return det_cuda_decode(bd_backend_cuda_stream(be), c->plus_one, k, codes->data, boxes->data,
                                       codes->dims[0], ncls, out->data, &be->err);
#endif
        return no_cuda(be, op);
}

int det_dev_box_iou(struct bd_backend *be, const struct det_conv *c, const struct bd_tensor *a,
                    const struct bd_tensor *b, struct bd_tensor *iou)
{
        const char *op = "det box iou";
        int r;
        if ((r = want(be, op, "a", a, BD_F32, 2, -1, 4)) < 0 || (r = want(be, op, "b", b, BD_F32, 2, -1, 4)) < 0 ||
            (r = resize(be, iou, BD_F32, 2, a->dims[0], b->dims[0], 0)) < 0)
                return r;
        if (be->dev == BD_CPU) {
                det_box_iou(c, a->data, a->dims[0], b->data, b->dims[0], iou->data);
                return 0;
        }
#if HAVE_CUDA
        if (ON_CUDA(be))
                return det_cuda_box_iou(bd_backend_cuda_stream(be), c->plus_one, a->data, a->dims[0], b->data,
                                        b->dims[0], iou->data, &be->err);
#endif
        return no_cuda(be, op);
}

/* keep (host, n) -> the i32 tensor keep (nk) on be */
static int put_keep(struct bd_backend *be, const int64_t *hk, int64_t nk, struct bd_tensor *keep)
{
        int r = resize(be, keep, BD_I32, 1, nk, 0, 0);
        if (r < 0 || nk == 0)
                return r;
        int32_t *k32 = be->dev == BD_CPU ? keep->data : xmalloc((size_t)nk * sizeof(int32_t));
        for (int64_t t = 0; t < nk; t++)
                k32[t] = (int32_t)hk[t];
        if (be->dev != BD_CPU) {
                r = be->ops->copy(be, keep->data, be->dev, k32, BD_CPU, (size_t)nk * sizeof(int32_t));
                if (r >= 0)
                        r = be->ops->sync(be);
                free(k32);
        }
        return r < 0 ? r : 0;
}

static int nms_common(struct bd_backend *be, const char *op, const struct det_conv *c, const struct bd_tensor *boxes,
                      const struct bd_tensor *scores, const struct bd_tensor *idx, double thr, struct bd_tensor *keep,
                      int64_t *nkeep)
{
        int r;
        *nkeep = 0;
        if ((r = want(be, op, "boxes", boxes, BD_F32, 2, -1, 4)) < 0 ||
            (r = want(be, op, "scores", scores, BD_F32, 1, boxes->dims[0], -1)) < 0 ||
            (idx && (r = want(be, op, "classes", idx, BD_I32, 1, boxes->dims[0], -1)) < 0))
                return r;
        if (boxes->dims[0] > INT32_MAX / 2)
                return bd_err_set(&be->err, -EINVAL, "%s: %lld boxes", op, (long long)boxes->dims[0]);
        int64_t n = boxes->dims[0], nk = 0;
        int64_t *hk = xmalloc((size_t)(n ? n : 1) * sizeof(int64_t));
        if (be->dev == BD_CPU) {
                nk = idx ? det_batched_nms(c, boxes->data, scores->data, idx->data, n, thr, hk)
                         : det_nms(c, boxes->data, scores->data, n, thr, hk);
        }
#if HAVE_CUDA
        else if (ON_CUDA(be)) {
                r = det_cuda_nms(bd_backend_cuda_stream(be), c, boxes->data, scores->data, idx ? idx->data : NULL, n,
                                 thr, hk, &nk, &be->err);
        }
#endif
        else {
                r = no_cuda(be, op);
        }
        if (r >= 0)
                r = put_keep(be, hk, nk, keep);
        if (r >= 0)
                *nkeep = nk;
        free(hk);
        return r;
}

int det_dev_nms(struct bd_backend *be, const struct det_conv *c, const struct bd_tensor *boxes,
                const struct bd_tensor *scores, double thr, struct bd_tensor *keep, int64_t *nkeep)
{
        return nms_common(be, "det nms", c, boxes, scores, NULL, thr, keep, nkeep);
}

int det_dev_batched_nms(struct bd_backend *be, const struct det_conv *c, const struct bd_tensor *boxes,
                        const struct bd_tensor *scores, const struct bd_tensor *idx, double thr, struct bd_tensor *keep,
                        int64_t *nkeep)
{
        if (!idx)
                return bd_err_set(&be->err, -EINVAL, "det batched nms: classes missing");
        return nms_common(be, "det batched nms", c, boxes, scores, idx, thr, keep, nkeep);
}

int det_dev_match(struct bd_backend *be, const struct det_matcher *m, const struct bd_tensor *iou,
                  struct bd_tensor *matches)
{
        const char *op = "det match";
        int r;
        if ((r = want(be, op, "iou", iou, BD_F32, 2, -1, -1)) < 0 ||
            (r = resize(be, matches, BD_I32, 1, iou->dims[1], 0, 0)) < 0)
                return r;
        if (be->dev == BD_CPU) {
                r = det_match(m, iou->data, iou->dims[0], iou->dims[1], matches->data);
                return r < 0 ? bd_err_set(&be->err, r, "%s: thresholds %g > %g", op, m->low, m->high) : 0;
        }
#if HAVE_CUDA
        if (ON_CUDA(be))
                return det_cuda_match(bd_backend_cuda_stream(be), m, iou->data, iou->dims[0], iou->dims[1],
                                      matches->data, &be->err);
#endif
        return no_cuda(be, op);
}

int det_dev_rpn_proposals(struct bd_backend *be, const struct det_conv *c, const struct det_rpn_params *p,
                          const struct bd_tensor *objectness, const struct bd_tensor *deltas,
                          const struct bd_tensor *anchors, int L, const int *image_hw, struct bd_tensor *boxes,
                          struct bd_tensor *scores, int64_t *count)
{
        const char *op = "det rpn proposals";
        int r;
        if (L < 0 || L > 16)
                return bd_err_set(&be->err, -EINVAL, "%s: %d levels (at most 16)", op, L);
        if (L == 0)
                return bd_err_set(&be->err, -EINVAL, "%s: no levels (the image count comes from them)", op);
        int64_t N = objectness[0].ndim == 2 ? objectness[0].dims[0] : -1, A[16];
        for (int l = 0; l < L; l++) {
                if ((r = want(be, op, "objectness", &objectness[l], BD_F32, 2, N, -1)) < 0)
                        return r;
                A[l] = objectness[l].dims[1];
                if ((r = want(be, op, "deltas", &deltas[l], BD_F32, 3, N, A[l])) < 0 ||
                    (r = want(be, op, "anchors", &anchors[l], BD_F32, 2, A[l], 4)) < 0)
                        return r;
                if (deltas[l].dims[2] != 4)
                        return bd_err_set(&be->err, -EINVAL, "%s: deltas of level %d: 4 per anchor", op, l);
        }
        if (N > INT32_MAX || det_rpn_check(p, A, L, (int)N, image_hw) < 0)
                return bd_err_set(&be->err, -EINVAL, "%s: negative count, size or top-n", op);
        if ((r = resize(be, boxes, BD_F32, 3, N, p->post_nms_top_n, 4)) < 0 ||
            (r = resize(be, scores, BD_F32, 2, N, p->post_nms_top_n, 0)) < 0)
                return r;
        if (be->dev == BD_CPU) {
                struct det_rpn_level lv[16];
                for (int l = 0; l < L; l++)
                        lv[l] = (struct det_rpn_level){ objectness[l].data, deltas[l].data, anchors[l].data, A[l] };
                return det_rpn_proposals(c, p, lv, L, (int)N, image_hw, boxes->data, scores->data, count);
        }
#if HAVE_CUDA
        if (ON_CUDA(be)) {
                const float *o[16], *d[16], *a[16];
                for (int l = 0; l < L; l++) {
                        o[l] = objectness[l].data;
                        d[l] = deltas[l].data;
                        a[l] = anchors[l].data;
                }
                return det_cuda_rpn_proposals(bd_backend_cuda_stream(be), c, p, o, d, a, A, L, (int)N, image_hw,
                                              boxes->data, scores->data, count, &be->err);
        }
#endif
        return no_cuda(be, op);
}

#if HAVE_CUDA
/* injected permutations on CUDA: the host function on copies */
static int rpn_targets_on_host(struct bd_backend *be, const struct det_conv *c, const struct det_rpn_batch *b,
                               const struct bd_tensor *anchors, const struct bd_tensor *gt, struct bd_tensor *labels,
                               struct bd_tensor *tgt, int64_t *npos, int64_t *nneg)
{
        const int64_t A = anchors->dims[0], G = gt->dims[0], M = (int64_t)b->N * A;
        float *ha = malloc((size_t)(A ? A : 1) * 4 * sizeof(float)), *hg = malloc((size_t)(G ? G : 1) * 4 * sizeof(float));
        float *ht = malloc((size_t)(M ? M : 1) * 4 * sizeof(float));
        int32_t *hl = malloc((size_t)(M ? M : 1) * sizeof(int32_t));
        int r = ha && hg && ht && hl ? 0 : bd_err_set(&be->err, -ENOMEM, "det rpn targets: out of memory");
        if (r == 0 && ((A && (r = be->ops->copy(be, ha, BD_CPU, anchors->data, be->dev, (size_t)A * 4 * sizeof(float))) < 0) ||
                       (G && (r = be->ops->copy(be, hg, BD_CPU, gt->data, be->dev, (size_t)G * 4 * sizeof(float))) < 0)))
                goto out;
        if (r == 0 && (r = det_rpn_targets(c, b, ha, hg, hl, ht, npos, nneg)) < 0) {
                bd_err_set(&be->err, r, "det rpn targets: bad injected permutation");
                goto out;
        }
        if (r == 0 && M &&
            ((r = be->ops->copy(be, labels->data, be->dev, hl, BD_CPU, (size_t)M * sizeof(int32_t))) < 0 ||
             (r = be->ops->copy(be, tgt->data, be->dev, ht, BD_CPU, (size_t)M * 4 * sizeof(float))) < 0))
                goto out;
out:
        free(ha);
        free(hg);
        free(ht);
        free(hl);
        return r;
}
#endif

int det_dev_rpn_targets(struct bd_backend *be, const struct det_conv *c, const struct det_rpn_batch *b,
                        const struct bd_tensor *anchors, const struct bd_tensor *gt, struct bd_tensor *labels,
                        struct bd_tensor *tgt, int64_t *npos, int64_t *nneg)
{
        const char *op = "det rpn targets";
        int r;
        if ((r = want(be, op, "anchors", anchors, BD_F32, 2, -1, 4)) < 0 ||
            (r = want(be, op, "gt", gt, BD_F32, 2, -1, 4)) < 0)
                return r;
        const int64_t A = anchors->dims[0];
        if (det_rpn_batch_check(b, A) < 0 || (b->N > 0 && b->gt_off[b->N] != gt->dims[0]))
                return bd_err_set(&be->err, -EINVAL, "%s: level offsets, image sizes or box rows inconsistent with "
                                  "%lld anchors and %lld boxes", op, (long long)A, (long long)gt->dims[0]);
        if (ON_CUDA(be) && (b->N > 64 || b->L > 16))
                return bd_err_set(&be->err, -EINVAL, "%s: %d images, %d levels (at most 64, 16)", op, b->N, b->L);
        const int64_t M = (int64_t)b->N * A;
        if ((r = resize(be, labels, BD_I32, 1, M, 0, 0)) < 0 || (r = resize(be, tgt, BD_F32, 2, M, 4, 0)) < 0)
                return r;
        if (be->dev == BD_CPU) {
                r = det_rpn_targets(c, b, anchors->data, gt->data, labels->data, tgt->data, npos, nneg);
                return r < 0 ? bd_err_set(&be->err, r, "%s: bad injected permutation", op) : 0;
        }
#if HAVE_CUDA
        if (ON_CUDA(be)) {
                if (b->perms)
                        return rpn_targets_on_host(be, c, b, anchors, gt, labels, tgt, npos, nneg);
                return det_cuda_rpn_targets(bd_backend_cuda_stream(be), c, b, anchors->data, gt->data, labels->data,
                                            tgt->data, npos, nneg, &be->err);
        }
#endif
        return no_cuda(be, op);
}

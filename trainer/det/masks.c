/* masks.c: mask targets by polygon rasterisation, the reference's rule
 * (masks.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "backend.h"
#include "masks.h"
#include "postprocess.h"

/* the crop and scale are float32 operations, each rounded, as the reference's tensors */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/* beyond this a scaled coordinate is bad input: pycocotools' (int)(5 v + .5) would overflow
 * long before, and each edge's walk allocates a point per 1/5 pixel */
#define MAX_COORD 262144.0

/* The box's w or h as PolygonInstance.crop: a difference of doubles, at least 1. */
static double side(float lo, float hi)
{
        double d = (double)hi - (double)lo;
        return d >= 1 ? d : 1;
}

static void polygon_target(const struct coco_polygons *p, const float box[4], int M, float *out)
{
        float rw = (float)(M / side(box[0], box[2])), rh = (float)(M / side(box[1], box[3]));
        struct rle *parts = xcalloc(p->n ? p->n : 1, sizeof(*parts));
        size_t np = 0, off = 0, maxk = 0;
        for (uint32_t i = 0; i < p->n; i++)
                maxk = p->len[i] / 2 > maxk ? p->len[i] / 2 : maxk;
        double *xy = xmalloc((maxk ? maxk : 1) * 2 * sizeof(double));
        for (uint32_t i = 0; i < p->n; off += p->len[i], i++) {
                size_t k = p->len[i] / 2;
                if (p->len[i] < 6)
                        continue;
                bool bad = false;
                for (size_t j = 0; j < k && !bad; j++) {
                        float x = ((float)p->xy[off + 2 * j] - box[0]) * rw;
                        float y = ((float)p->xy[off + 2 * j + 1] - box[1]) * rh;
                        bad = !(fabsf(x) <= MAX_COORD && fabsf(y) <= MAX_COORD);
                        xy[2 * j] = x;
                        xy[2 * j + 1] = y;
                }
                if (!bad)
                        rle_from_poly(&parts[np++], xy, k, (uint32_t)M, (uint32_t)M);
        }
        free(xy);
        if (np) {
                _cleanup_rle_ struct rle merged = RLE_INIT;
                uint8_t *dec = xmalloc((size_t)M * M);
                rle_merge(parts, np, false, &merged);
                rle_decode(&merged, dec);
                /* decode is column-major (x * M + y); targets are rows */
                for (int y = 0; y < M; y++)
                        for (int x = 0; x < M; x++)
                                out[(size_t)y * M + x] = dec[(size_t)x * M + y];
                free(dec);
        }
        for (size_t i = 0; i < np; i++)
                rle_free(&parts[i]);
        free(parts);
}

/* nearest at the bin centres of a decoded column-major h x w mask */
static void bitmask_target(const uint8_t *mask, uint32_t mh, uint32_t mw, const float box[4], int M, float *out)
{
        double x1 = box[0], y1 = box[1], w = side(box[0], box[2]), h = side(box[1], box[3]);
        for (int i = 0; i < M; i++) {
                double sy = floor(y1 + (i + 0.5) * h / M);
                for (int j = 0; j < M; j++) {
                        double sx = floor(x1 + (j + 0.5) * w / M);
                        if (sx >= 0 && sy >= 0 && sx < mw && sy < mh)
                                out[(size_t)i * M + j] = mask[(size_t)sx * mh + (size_t)sy];
                }
        }
}

static int box_finite(const float *b)
{
        return isfinite(b[0]) && isfinite(b[1]) && isfinite(b[2]) && isfinite(b[3]);
}

/* the object's RLE decoded (column-major), NULL when it is not a valid one */
static uint8_t *decode_gt(const struct det_gt_mask *gt)
{
        if (gt->kind != DET_GT_MASK_RLE)
                return NULL;
        struct rle r = { gt->rle.height, gt->rle.width, gt->rle.n, (uint32_t *)gt->rle.counts };
        if (rle_check(&r) < 0 || (size_t)r.h * r.w == 0)
                return NULL;
        uint8_t *m = xmalloc((size_t)r.h * r.w);
        rle_decode(&r, m);
        return m;
}

static void target(const struct det_gt_mask *gt, const uint8_t *decoded, const float box[4], int M, float *out)
{
        memset(out, 0, (size_t)M * M * sizeof(float));
        if (!box_finite(box))
                return;
        if (gt->kind == DET_GT_MASK_POLYGONS)
                polygon_target(&gt->poly, box, M, out);
        else if (decoded)
                bitmask_target(decoded, gt->rle.height, gt->rle.width, box, M, out);
}

int det_mask_target(const struct det_gt_mask *gt, const float box[4], int M, float *out)
{
        if (M < 1)
                return -EINVAL;
        _cleanup_free_ uint8_t *dec = decode_gt(gt);
        target(gt, dec, box, M, out);
        return 0;
}

int det_mask_targets(const struct det_gt_mask *gts, int64_t ngt, const float *props, const int64_t *matched, int64_t P,
                     int M, float *out)
{
        if (M < 1 || P < 0 || ngt < 0)
                return -EINVAL;
        for (int64_t p = 0; p < P; p++)
                if (matched[p] < 0 || matched[p] >= ngt)
                        return -EINVAL;
        /* each RLE object decoded once, only when a proposal uses it */
        uint8_t **dec = xcalloc(ngt ? (size_t)ngt : 1, sizeof(*dec));
        for (int64_t p = 0; p < P; p++)
                if (gts[matched[p]].kind == DET_GT_MASK_RLE && !dec[matched[p]])
                        dec[matched[p]] = decode_gt(&gts[matched[p]]);
#pragma omp parallel for schedule(dynamic, 4)
        for (int64_t p = 0; p < P; p++)
                target(&gts[matched[p]], dec[matched[p]], props + 4 * p, M, out + (size_t)p * M * M);
        for (int64_t g = 0; g < ngt; g++)
                free(dec[g]);
        free(dec);
        return 0;
}

int det_op_mask_targets(struct bd_backend *be, const struct det_gt_mask *gts, int64_t ngt, const struct bd_tensor *props,
                        const int64_t *matched, int M, struct bd_tensor *out)
{
        int r;
        if ((r = det_check_tensor(be, "mask_targets", "proposals", props, 2, -1, 4)) < 0)
                return r;
        int64_t P = props->dims[0];
        if (M < 1)
                return bd_err_set(&be->err, -EINVAL, "mask_targets: M %d < 1", M);
        for (int64_t p = 0; p < P; p++)
                if (matched[p] < 0 || matched[p] >= ngt)
                        return bd_err_set(&be->err, -EINVAL, "mask_targets: proposal %lld matched to %lld of %lld",
                                          (long long)p, (long long)matched[p], (long long)ngt);
        int64_t dims[3] = { P, M, M };
        if ((r = bd_tensor_resize(be, out, BD_F32, BD_NCHW, 3, dims)) < 0)
                return bd_err_set(&be->err, r, "mask_targets: no memory for (%lld, %d, %d)", (long long)P, M, M);
        if (be->dev == BD_CPU)
                return det_mask_targets(gts, ngt, props->data, matched, P, M, out->data);
        /* another device: rasterised on the host, as documented in masks.h */
        size_t nb = (size_t)P * 4 * sizeof(float), tb = (size_t)P * M * M * sizeof(float);
        _cleanup_free_ float *hp = xmalloc(nb ? nb : 1);
        _cleanup_free_ float *ht = xmalloc(tb ? tb : 1);
        if (nb && (r = be->ops->copy(be, hp, BD_CPU, props->data, props->dev, nb)) < 0)
                return r;
        if ((r = be->ops->sync(be)) < 0)
                return r;
        if ((r = det_mask_targets(gts, ngt, hp, matched, P, M, ht)) < 0)
                return r;
        if (tb && (r = be->ops->copy(be, out->data, out->dev, ht, BD_CPU, tb)) < 0)
                return r;
        /* the copy from pageable memory may still read ht when it returns */
        return be->ops->sync(be);
}

/* masks.c: mask targets by polygon rasterisation, the reference's rule
 * (masks.h). */
#include "config.h"

#include "det-fp.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "backend.h"
#include "masks.h"
#include "ops.h"
#include "postprocess.h"

#define DET_HD static inline
#include "masks-impl.h"

/* beyond this a scaled coordinate is bad input: pycocotools' (int)(5 v + .5) would overflow
 * long before, and each edge's walk allocates a point per 1/5 pixel */
#define MAX_COORD 262144.0

/* The box's w or h as PolygonInstance.crop: a difference of doubles, at least 1. */
static double side(float lo, float hi)
{
        double d = (double)hi - (double)lo;
        return d >= 1 ? d : 1;
}

static int box_finite(const float *b)
{
        return isfinite(b[0]) && isfinite(b[1]) && isfinite(b[2]) && isfinite(b[3]);
}

/* Each part of at least 3 points of an object cropped to the box and
 * scaled to M x M with the reference's float arithmetic, handed to fn as
 * doubles; a part with a coordinate that is not finite or beyond
 * MAX_COORD once scaled is skipped. */
typedef void part_fn(const double *xy, size_t k, int M, void *ctx);

static void for_each_part(const struct coco_polygons *p, const float box[4], int M, part_fn *fn, void *ctx)
{
        float rw = (float)(M / side(box[0], box[2])), rh = (float)(M / side(box[1], box[3]));
        size_t off = 0, maxk = 0;
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
                        fn(xy, k, M, ctx);
        }
        free(xy);
}

struct rle_parts {
        struct rle *r;
        size_t n;
};

static void part_rle(const double *xy, size_t k, int M, void *ctx)
{
        struct rle_parts *rp = ctx;
        rle_from_poly(&rp->r[rp->n++], xy, k, (uint32_t)M, (uint32_t)M);
}

static void polygon_target(const struct coco_polygons *p, const float box[4], int M, float *out)
{
        struct rle_parts rp = { xcalloc(p->n ? p->n : 1, sizeof(struct rle)), 0 };
        for_each_part(p, box, M, part_rle, &rp);
        if (rp.n) {
                _cleanup_rle_ struct rle merged = RLE_INIT;
                uint8_t *dec = xmalloc((size_t)M * M);
                rle_merge(rp.r, rp.n, false, &merged);
                rle_decode(&merged, dec);
                /* decode is column-major (x * M + y); targets are rows */
                for (int y = 0; y < M; y++)
                        for (int x = 0; x < M; x++)
                                out[(size_t)y * M + x] = dec[(size_t)x * M + y];
                free(dec);
        }
        for (size_t i = 0; i < rp.n; i++)
                rle_free(&rp.r[i]);
        free(rp.r);
}

/* ---- the column rule of masks-impl.h: packed integer vertices ---- */

static void grow(void **p, size_t *cap, size_t need, size_t size)
{
        if (need <= *cap)
                return;
        *cap = need > 2 * *cap ? need : 2 * *cap;
        *p = xrealloc(*p, *cap * size);
}

/* appends a part's vertices at 5x, rounded as rleFrPoly rounds them */
static void part_pack(const double *xy, size_t k, int M, void *ctx)
{
        struct det_poly_pack *pk = ctx;
        (void)M;
        grow((void **)&pk->vx, &pk->cap_v, pk->nv + k, sizeof(int));
        grow((void **)&pk->vy, &pk->cap_vy, pk->nv + k, sizeof(int));
        grow((void **)&pk->part_k, &pk->cap_p, pk->np + 1, sizeof(int));
        grow((void **)&pk->part_v, &pk->cap_pv, pk->np + 1, sizeof(int64_t));
        pk->part_k[pk->np] = (int)k;
        pk->part_v[pk->np++] = pk->nv;
        for (size_t j = 0; j < k; j++) {
                pk->vx[pk->nv] = (int)(5.0 * xy[2 * j] + .5);
                pk->vy[pk->nv++] = (int)(5.0 * xy[2 * j + 1] + .5);
        }
}

void det_poly_pack_release(struct det_poly_pack *pk)
{
        free(pk->vx);
        free(pk->vy);
        free(pk->part_k);
        free(pk->part_v);
        free(pk->prop_part);
        memset(pk, 0, sizeof(*pk));
}

int det_poly_pack(const struct det_gt_mask *gts, int64_t ngt, const float *props, const int64_t *matched, int64_t P,
                  int M, struct det_poly_pack *pk)
{
        memset(pk, 0, sizeof(*pk));
        if (M < 1 || P < 0 || ngt < 0)
                return -EINVAL;
        for (int64_t p = 0; p < P; p++)
                if (matched[p] < 0 || matched[p] >= ngt)
                        return -EINVAL;
        pk->prop_part = xmalloc((size_t)(P + 1) * sizeof(int64_t));
        for (int64_t p = 0; p < P; p++) {
                const struct det_gt_mask *gt = &gts[matched[p]];
                pk->prop_part[p] = pk->np;
                if (gt->kind == DET_GT_MASK_POLYGONS && box_finite(props + 4 * p))
                        for_each_part(&gt->poly, props + 4 * p, M, part_pack, pk);
        }
        pk->prop_part[P] = pk->np;
        return 0;
}

/* proposal p's target by columns: the union of its parts' columns */
static void columns_target(const struct det_poly_pack *pk, int64_t p, int M, float *out)
{
        uint32_t col[DET_COL_WORDS(DET_MASK_COLUMN_MAX)], acc[DET_COL_WORDS(DET_MASK_COLUMN_MAX)];
        for (int x = 0; x < M; x++) {
                memset(acc, 0, sizeof(acc));
                for (int64_t q = pk->prop_part[p]; q < pk->prop_part[p + 1]; q++) {
                        det_poly_column(pk->vx + pk->part_v[q], pk->vy + pk->part_v[q], pk->part_k[q], M, M, x, col);
                        for (int w = 0; w < DET_COL_WORDS(M); w++)
                                acc[w] |= col[w];
                }
                for (int y = 0; y < M; y++)
                        out[(size_t)y * M + x] = (float)((acc[y / 32] >> (y % 32)) & 1);
        }
}

int det_mask_target_columns(const struct det_gt_mask *gt, const float box[4], int M, float *out)
{
        if (M < 1 || M > DET_MASK_COLUMN_MAX)
                return -EINVAL;
        int64_t zero = 0;
        struct det_poly_pack pk;
        int r = det_poly_pack(gt, 1, box, &zero, 1, M, &pk);
        if (r < 0)
                return r;
        columns_target(&pk, 0, M, out);
        det_poly_pack_release(&pk);
        return 0;
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

/* polygons: whether polygon objects are rasterised here (else left zero) */
static void target(const struct det_gt_mask *gt, const uint8_t *decoded, const float box[4], int M, int polygons,
                   float *out)
{
        memset(out, 0, (size_t)M * M * sizeof(float));
        if (!box_finite(box))
                return;
        if (gt->kind == DET_GT_MASK_POLYGONS && polygons)
                polygon_target(&gt->poly, box, M, out);
        else if (decoded)
                bitmask_target(decoded, gt->rle.height, gt->rle.width, box, M, out);
}

int det_mask_target(const struct det_gt_mask *gt, const float box[4], int M, float *out)
{
        if (M < 1)
                return -EINVAL;
        _cleanup_free_ uint8_t *dec = decode_gt(gt);
        target(gt, dec, box, M, 1, out);
        return 0;
}

static int targets(const struct det_gt_mask *gts, int64_t ngt, const float *props, const int64_t *matched, int64_t P,
                   int M, int polygons, float *out)
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
                target(&gts[matched[p]], dec[matched[p]], props + 4 * p, M, polygons, out + (size_t)p * M * M);
        for (int64_t g = 0; g < ngt; g++)
                free(dec[g]);
        free(dec);
        return 0;
}

int det_mask_targets(const struct det_gt_mask *gts, int64_t ngt, const float *props, const int64_t *matched, int64_t P,
                     int M, float *out)
{
        return targets(gts, ngt, props, matched, P, M, 1, out);
}

#if HAVE_CUDA
/* the packed vertices to the device in one copy and the column kernel */
static int cuda_poly_targets(struct bd_backend *be, const struct det_poly_pack *pk, int64_t P, int M, float *out)
{
        size_t bv = (size_t)pk->nv * sizeof(int), bk = (size_t)pk->np * sizeof(int);
        size_t bpv = (size_t)pk->np * sizeof(int64_t), bpp = (size_t)(P + 1) * sizeof(int64_t);
        size_t bytes = bpv + bpp + 2 * bv + bk;
        /* int64 arrays first: every array stays aligned */
        _cleanup_free_ char *h = xmalloc(bytes);
        memcpy(h, pk->part_v, bpv);
        memcpy(h + bpv, pk->prop_part, bpp);
        memcpy(h + bpv + bpp, pk->vx, bv);
        memcpy(h + bpv + bpp + bv, pk->vy, bv);
        memcpy(h + bpv + bpp + 2 * bv, pk->part_k, bk);
        char *d = be->ops->alloc(be, bytes);
        if (!d)
                return bd_err_set(&be->err, -ENOMEM, "mask_targets: no GPU memory for %lld vertices",
                                  (long long)pk->nv);
        int64_t *dpv = (int64_t *)d, *dpp = (int64_t *)(d + bpv);
        int *dvx = (int *)(d + bpv + bpp), *dvy = dvx + pk->nv, *dk = dvy + pk->nv;
        int r = be->ops->copy(be, d, BD_CUDA, h, BD_CPU, bytes);
        if (r == 0 && (r = det_cuda_poly_targets(bd_backend_cuda_stream(be), dvx, dvy, dk, dpv, dpp, P, M, out)) < 0)
                bd_err_set(&be->err, r, "mask_targets: kernel launch failed");
        be->ops->free(be, d);   /* cudaFree waits for the kernel */
        return r;
}
#endif

int det_op_mask_targets(struct bd_backend *be, const struct det_gt_mask *gts, int64_t ngt, const struct bd_tensor *props,
                        const int64_t *matched, int M, struct bd_tensor *out)
{
        int r;
        if ((r = det_check_tensor(be, "mask_targets", "proposals", props, 2, -1, 4)) < 0)
                return r;
        int64_t P = props->dims[0];
        if (be->dev == BD_CPU)
                return det_op_mask_targets_h(be, gts, ngt, props->data, matched, P, M, out);
        size_t nb = (size_t)P * 4 * sizeof(float);
        _cleanup_free_ float *hp = xmalloc(nb ? nb : 1);
        if (nb && (r = be->ops->copy(be, hp, BD_CPU, props->data, props->dev, nb)) < 0)
                return r;
        return det_op_mask_targets_h(be, gts, ngt, hp, matched, P, M, out);
}

int det_op_mask_targets_h(struct bd_backend *be, const struct det_gt_mask *gts, int64_t ngt, const float *props,
                          const int64_t *matched, int64_t P, int M, struct bd_tensor *out)
{
        int r;
        if (M < 1 || P < 0)
                return bd_err_set(&be->err, -EINVAL, "mask_targets: M %d, %lld proposals", M, (long long)P);
        for (int64_t p = 0; p < P; p++)
                if (matched[p] < 0 || matched[p] >= ngt)
                        return bd_err_set(&be->err, -EINVAL, "mask_targets: proposal %lld matched to %lld of %lld",
                                          (long long)p, (long long)matched[p], (long long)ngt);
        int64_t dims[3] = { P, M, M };
        if ((r = bd_tensor_resize(be, out, BD_F32, BD_NCHW, 3, dims)) < 0)
                return bd_err_set(&be->err, r, "mask_targets: no memory for (%lld, %d, %d)", (long long)P, M, M);
        if (be->dev == BD_CPU)
                return det_mask_targets(gts, ngt, props, matched, P, M, out->data);
#if HAVE_CUDA
        /* on the host the RLE objects' targets (and every target when M is
         * too large for the kernel), copied up only when there are any; then
         * the polygons' columns on the GPU over them */
        int gpu_polygons = M <= DET_MASK_COLUMN_MAX, host = !gpu_polygons;
        for (int64_t p = 0; p < P && !host; p++)
                host = gts[matched[p]].kind == DET_GT_MASK_RLE;
        size_t tb = (size_t)P * M * M * sizeof(float);
        if (host) {
                _cleanup_free_ float *ht = xmalloc(tb ? tb : 1);
                if ((r = targets(gts, ngt, props, matched, P, M, !gpu_polygons, ht)) < 0)
                        return bd_err_set(&be->err, r, "mask_targets: bad input");
                /* a copy from the host waits for itself: ht may go */
                if (tb && (r = be->ops->copy(be, out->data, out->dev, ht, BD_CPU, tb)) < 0)
                        return r;
        } else if ((r = bd_op_fill(be, out, 0)) < 0) {
                return r;
        }
        if (gpu_polygons) {
                struct det_poly_pack pk;
                if ((r = det_poly_pack(gts, ngt, props, matched, P, M, &pk)) < 0)
                        return bd_err_set(&be->err, r, "mask_targets: packing the polygons");
                if (pk.np)
                        r = cuda_poly_targets(be, &pk, P, M, out->data);
                det_poly_pack_release(&pk);
        }
        return r;
#else
        return bd_err_set(&be->err, -EOPNOTSUPP, "mask_targets: built without CUDA");
#endif
}

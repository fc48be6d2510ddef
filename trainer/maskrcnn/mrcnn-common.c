/* mrcnn-common.c: what several stages of the Mask R-CNN network use (layer
 * construction, host work arrays, host <-> device copies, one image's
 * ground truth, the samplers' streams). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "masks.h"
#include "mrcnn-stages.h"
#include "rng.h"

int mrcnn_conv_layer(struct bd_model *m, struct bd_conv *l, const char *name, int64_t cin, int64_t cout, int k,
                     int stride, int pad, int transposed, enum bd_init init, double std)
{
        struct bd_conv_cfg c = { .cin = cin, .cout = cout, .k = k, .stride = stride, .pad = pad, .bias = 1,
                                 .transposed = transposed, .winit = init, .wstd = std };
        return bd_conv_init(l, m, name, &c);
}

int mrcnn_relu_bwd_inplace(struct bd_backend *be, const struct bd_tensor *y, struct bd_tensor *dy)
{
        return bd_op_relu_bwd(be, y, dy, dy, 0);
}

int mrcnn_grow(void *pp, size_t *cap, size_t n, size_t sz)
{
        void **p = pp;
        if (n <= *cap && *p)
                return 0;
        size_t c = n > 2 * *cap ? n : 2 * *cap;
        void *q = realloc(*p, (c ? c : 1) * sz);
        if (!q)
                return -ENOMEM;
        *p = q;
        *cap = c;
        return 0;
}

/* ---- host and device copies ---- */

int mrcnn_to_host(struct mrcnn_net *n, const struct bd_tensor *t, float **buf, size_t *cap, const float **out)
{
        struct bd_backend *be = n->be;
        int64_t cnt = bd_tensor_numel(t);
        if (t->dev == BD_CPU && t->dtype == BD_F32) {
                *out = t->data;
                return 0;
        }
        if (mrcnn_grow(buf, cap, (size_t)cnt, sizeof(float)) < 0)
                return bd_err_set(&be->err, -ENOMEM, "out of memory");
        int r;
        if (t->dtype == BD_F32) {
                r = be->ops->copy(be, *buf, BD_CPU, t->data, t->dev, (size_t)cnt * sizeof(float));
        } else {
                struct bd_tensor *f = bd_scratch_get(&n->scratch, BD_F32, t->layout, t->ndim, t->dims);
                if (!f)
                        return -ENOMEM;
                r = bd_op_cast(be, t, BD_F32, 1.0, f);
                if (r >= 0)
                        r = be->ops->copy(be, *buf, BD_CPU, f->data, f->dev, (size_t)cnt * sizeof(float));
                bd_scratch_put(&n->scratch, f);
        }
        if (r < 0)
                return r;
        *out = *buf;
        return 0;
}

int mrcnn_from_host(struct mrcnn_net *n, const float *v, enum bd_dtype dt, int ndim, const int64_t *dims,
                    struct bd_tensor *t)
{
        struct bd_backend *be = n->be;
        int r = bd_tensor_resize(be, t, dt, BD_NCHW, ndim, dims);
        if (r < 0)
                return r;
        int64_t cnt = bd_tensor_numel(t);
        if (cnt == 0)
                return 0;
        if (dt == BD_F32)
                return be->ops->copy(be, t->data, t->dev, v, BD_CPU, (size_t)cnt * sizeof(float));
        if (dt == BD_F64 && t->dev == BD_CPU) {
                double *d = t->data;
                for (int64_t i = 0; i < cnt; i++)
                        d[i] = v[i];
                return 0;
        }
        struct bd_tensor *f = bd_scratch_get(&n->scratch, BD_F32, BD_NCHW, ndim, dims);
        if (!f)
                return -ENOMEM;
        r = be->ops->copy(be, f->data, f->dev, v, BD_CPU, (size_t)cnt * sizeof(float));
        if (r >= 0)
                r = bd_op_cast(be, f, dt, 1.0, t);
        bd_scratch_put(&n->scratch, f);
        return r;
}

int mrcnn_i32_from_host(struct mrcnn_net *n, const int32_t *v, int64_t cnt, struct bd_tensor *t)
{
        struct bd_backend *be = n->be;
        int r = bd_tensor_resize(be, t, BD_I32, BD_NCHW, 1, &cnt);
        if (r < 0 || cnt == 0)
                return r;
        return be->ops->copy(be, t->data, t->dev, v, BD_CPU, (size_t)cnt * sizeof(int32_t));
}

int mrcnn_roi_levels(struct mrcnn_net *n, const struct det_msroi *ms, const float *rois, int64_t R, int32_t **lv,
                     size_t *cap)
{
        if (mrcnn_grow(lv, cap, (size_t)(R ? R : 1), sizeof(int32_t)) < 0)
                return bd_err_set(&n->be->err, -ENOMEM, "out of memory");
        det_msroi_levels(ms, rois, R, *lv);
        return 0;
}

/* ---- ground truth and sampling ---- */

int mrcnn_gt_of(const struct det_sample *s, struct mrcnn_gt *g)
{
        const struct det_target *t = &s->target;
        g->g = t->n;
        g->boxes = malloc(((size_t)t->n + 1) * 4 * sizeof(float));
        g->labels = malloc(((size_t)t->n + 1) * sizeof(int32_t));
        g->masks = calloc((size_t)t->n + 1, sizeof(*g->masks));
        if (!g->boxes || !g->labels || !g->masks)
                return -ENOMEM;
        for (int i = 0; i < t->n; i++) {
                const struct det_object *o = &t->objects[i];
                for (int k = 0; k < 4; k++)
                        g->boxes[4 * i + k] = (float)o->box[k];
                g->labels[i] = o->label;
                struct det_gt_mask *gm = &g->masks[i];
                if (o->mask == DET_MASK_POLYGONS) {
                        gm->kind = DET_GT_MASK_POLYGONS;
                        gm->poly = (struct coco_polygons){ .n = o->n, .len = t->poly_len + o->first,
                                                           .xy = t->xy + o->xy_first };
                } else if (o->mask == DET_MASK_RLE) {
                        gm->kind = DET_GT_MASK_RLE;
                        gm->rle = (struct coco_rle){ .height = (uint32_t)s->height, .width = (uint32_t)s->width,
                                                     .n = o->n, .counts = t->rle + o->first };
                }
        }
        return 0;
}

void mrcnn_gt_free(struct mrcnn_gt *g)
{
        free(g->boxes);
        free(g->labels);
        free(g->masks);
}

uint64_t mrcnn_image_stream(const struct mrcnn_step *st, int i, int which)
{
        return bd_rng_mix3(st->step, (uint64_t)(st->image_base + i), (uint64_t)which);
}

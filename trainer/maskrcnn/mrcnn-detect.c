/* mrcnn-detect.c: inference of the Mask R-CNN network: proposals, the box
 * head on all of them, postprocessing, the mask head on the detections,
 * the masks pasted at the original size (mrcnn-net.h explains the model). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mask.h"
#include "mrcnn-stages.h"

void mrcnn_dets_release(struct mrcnn_dets *d)
{
        if (!d)
                return;
        for (int64_t i = 0; d->masks && i < d->n; i++)
                rle_free(&d->masks[i]);
        free(d->masks);
        free(d->boxes);
        free(d->scores);
        free(d->labels);
        memset(d, 0, sizeof(*d));
}

/* the box head's outputs for the RoIs of images [first[i], first[i + 1]),
 * as float32 on the device, through det_op_postprocess into dets[i] */
static int postprocess(struct mrcnn_net *n, const struct det_batch *b, const int64_t *first, struct det_dets *dets,
                       int64_t *ndet, struct bd_err *err)
{
        struct bd_backend *be = n->be;
        const int64_t post = n->rpn.post, K = n->K;
        struct bd_tensor *c32 = &n->box.cls_out, *b32 = &n->box.box_out;
        int r = 0;
        if (n->dt != BD_F32) {
                c32 = bd_scratch_get(&n->scratch, BD_F32, BD_NCHW, 2, n->box.cls_out.dims);
                b32 = bd_scratch_get(&n->scratch, BD_F32, BD_NCHW, 2, n->box.box_out.dims);
                if (!c32 || !b32)
                        r = -ENOMEM;
                if (r < 0 || (r = bd_op_cast(be, &n->box.cls_out, BD_F32, 1.0, c32)) < 0 ||
                    (r = bd_op_cast(be, &n->box.box_out, BD_F32, 1.0, b32)) < 0) {
                        BE_FAIL(n, err, r, "box head");
                        goto out;
                }
        }
        for (int i = 0; i < b->n && r >= 0; i++) {
                int64_t ni = first[i + 1] - first[i];
                int64_t dl[2] = { ni, K }, db[2] = { ni, 4 * K }, dp[2] = { ni, 4 };
                size_t es = sizeof(float);
                struct bd_tensor vl = bd_tensor_view((char *)c32->data + (size_t)first[i] * K * es, c32->dev, BD_F32,
                                                     BD_NCHW, 2, dl);
                struct bd_tensor vb = bd_tensor_view((char *)b32->data + (size_t)first[i] * 4 * K * es, b32->dev,
                                                     BD_F32, BD_NCHW, 2, db);
                /* image i's proposals where mrcnn_proposals left them on the device */
                struct bd_tensor vp = bd_tensor_view((char *)n->rpn.props_d.data + (size_t)i * post * 4 * es,
                                                     n->rpn.props_d.dev, BD_F32, BD_NCHW, 2, dp);
                if ((r = det_op_postprocess(be, &n->cfg.conv, &n->cfg.post, &vl, &vb, &vp, b->samples[i].height,
                                            b->samples[i].width, &dets[i])) < 0)
                        BE_FAIL(n, err, r, "postprocess");
                *ndet += dets[i].n;
        }
out:
        if (n->dt != BD_F32) {
                if (c32)
                        bd_scratch_put(&n->scratch, c32);
                if (b32)
                        bd_scratch_put(&n->scratch, b32);
        }
        return r;
}

/* the box head on every proposal of the batch, then postprocessing */
static int detect_boxes(struct bd_model *m, struct mrcnn_net *n, const struct det_batch *b, struct det_dets *dets,
                        int64_t *ndet, struct bd_err *err)
{
        const int N = b->n;
        const int64_t post = n->rpn.post;
        int64_t R = 0;
        for (int i = 0; i < N; i++)
                R += n->rpn.count[i];
        float *rois = malloc((size_t)(R ? R : 1) * 5 * sizeof(float));
        if (!rois)
                return bd_err_set(err, -ENOMEM, "out of memory");
        int64_t at = 0, first[65];
        for (int i = 0; i < N; i++) {
                first[i] = at;
                for (int64_t j = 0; j < n->rpn.count[i]; j++, at++) {
                        rois[5 * at] = (float)i;
                        memcpy(rois + 5 * at + 1, n->rpn.props + ((size_t)i * post + j) * 4, 4 * sizeof(float));
                }
        }
        first[N] = at;
        int r = mrcnn_box_fwd(m, n, rois, R);
        if (r < 0)
                BE_FAIL(n, err, r, "box head");
        else
                r = postprocess(n, b, first, dets, ndet, err);
        free(rois);
        return r;
}

/* out[i]: image i's detections in original pixels, with their masks */
static int results(const struct mrcnn_net *n, const struct det_batch *b, const struct det_dets *dets,
                   const float *probs, struct mrcnn_dets *out, struct bd_err *err)
{
        float *img = NULL;
        int64_t q = 0;
        int r = 0;
        for (int i = 0; i < b->n && r >= 0; i++) {
                const struct det_sample *s = &b->samples[i];
                struct mrcnn_dets *o = &out[i];
                int64_t nd = dets[i].n;
                o->image_id = s->image_id;
                o->n = nd;
                o->boxes = malloc((size_t)(nd ? nd : 1) * 4 * sizeof(float));
                o->scores = malloc((size_t)(nd ? nd : 1) * sizeof(float));
                o->labels = malloc((size_t)(nd ? nd : 1) * sizeof(int32_t));
                o->masks = calloc((size_t)(nd ? nd : 1), sizeof(struct rle));
                size_t px = (size_t)s->orig_height * (size_t)s->orig_width;
                float *im2 = realloc(img, (px ? px : 1) * sizeof(float));
                if (im2)
                        img = im2;
                if (!o->boxes || !o->scores || !o->labels || !o->masks || !im2) {
                        r = bd_err_set(err, -ENOMEM, "out of memory");
                        break;
                }
                memcpy(o->boxes, dets[i].boxes, (size_t)nd * 4 * sizeof(float));
                memcpy(o->scores, dets[i].scores, (size_t)nd * sizeof(float));
                memcpy(o->labels, dets[i].labels, (size_t)nd * sizeof(int32_t));
                det_resize_boxes(&n->cfg.conv, o->boxes, nd, s->height, s->width, s->orig_height, s->orig_width);
                for (int64_t j = 0; probs && j < nd; j++, q++)
                        if ((r = mrcnn_mask_paste(probs, q, o->boxes + 4 * j, s, img, &o->masks[j])) < 0) {
                                bd_err_set(err, r, "pasting mask %lld of image %lld", (long long)j,
                                           (long long)s->image_id);
                                break;
                        }
        }
        free(img);
        return r;
}

int mrcnn_detect(struct mrcnn_net *n, struct bd_model *m, const struct det_batch *b, struct mrcnn_dets *out,
                 struct bd_err *err)
{
        const int N = b->n;
        int training = m->training, r;
        memset(out, 0, (size_t)N * sizeof(*out));
        m->training = 0;
        n->have_grads = 0;
        bd_model_begin_step(m);
        struct det_dets dets[64];
        memset(dets, 0, sizeof(dets));
        int64_t ndet = 0;
        float *probs = NULL;
        if ((r = mrcnn_features(m, n, b)) < 0 || (r = mrcnn_proposals(n, b, 0)) < 0) {
                BE_FAIL(n, err, r, "inference");
                goto out;
        }
        if ((r = detect_boxes(m, n, b, dets, &ndet, err)) >= 0 && ndet > 0 && n->cfg.masks)
                r = mrcnn_mask_detect(m, n, dets, N, ndet, &probs, err);
        if (r >= 0)
                r = results(n, b, dets, probs, out, err);
        for (int i = 0; i < N; i++)
                det_dets_release(&dets[i]);
        if (r < 0)
                for (int i = 0; i < N; i++)
                        mrcnn_dets_release(&out[i]);
out:
        free(probs);
        m->training = training;
        return r < 0 ? r : 0;
}

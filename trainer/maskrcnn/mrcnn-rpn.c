/* mrcnn-rpn.c: the RPN of the Mask R-CNN network: head, anchors,
 * proposals, targets and loss, forward and backward (mrcnn-net.h explains
 * the model). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "boxes-dev.h"
#include "macro.h"
#include "mrcnn-stages.h"

#define NA 3                    /* anchors per location: ratios 0.5, 1, 2 */

static const float ratios[NA] = { 0.5f, 1.0f, 2.0f };
static const struct det_coder rpn_coder = { 1, 1, 1, 1, (float)DET_BBOX_XFORM_CLIP };

int mrcnn_rpn_init(struct bd_model *m, struct mrcnn_net *n, struct bd_err *err)
{
        struct mrcnn_rpn *p = &n->rpn;
        const int64_t F = n->cfg.fpn_channels;
        int r;
        if ((r = mrcnn_conv_layer(m, &p->conv, "rpn.head.conv.0.0", F, F, 3, 1, 1, 0, BD_INIT_NORMAL, 0.01)) < 0 ||
            (r = mrcnn_conv_layer(m, &p->cls, "rpn.head.cls_logits", F, NA, 1, 1, 0, 0, BD_INIT_NORMAL, 0.01)) < 0 ||
            (r = mrcnn_conv_layer(m, &p->box, "rpn.head.bbox_pred", F, 4 * NA, 1, 1, 0, 0, BD_INIT_NORMAL, 0.01)) < 0)
                return bd_err_set(err, r, "%s", m->be->err.msg);
        return 0;
}

void mrcnn_rpn_release(struct mrcnn_rpn *p)
{
        struct bd_tensor *ts[] = { &p->obj, &p->dlt, &p->lab, &p->d_obj, &p->d_dlt, &p->an_dev, &p->props_d,
                                   &p->scores_d, &p->gt_d, &p->tgt32 };
        for (size_t i = 0; i < ARRAY_SIZE(ts); i++)
                bd_tensor_release(ts[i]);
        for (int l = 0; l < MRCNN_LEVELS; l++) {
                bd_tensor_release(&p->rh[l]);
                bd_tensor_release(&p->ro[l]);
                bd_tensor_release(&p->rd[l]);
        }
        free(p->ac.a);
        free(p->props);
        free(p->scores);
        free(p->gt_h);
        det_rpn_work_free(&p->work);
}

int mrcnn_rpn_anchors(struct mrcnn_net *n, int pad_h, int pad_w)
{
        struct mrcnn_anchors *ac = &n->rpn.ac;
        const struct bd_tensor *P = n->fpn.P;
        int same = ac->a && ac->pad_h == pad_h && ac->pad_w == pad_w;
        for (int l = 0; l < MRCNN_LEVELS; l++)
                same = same && ac->H[l] == BD_H(&P[l]) && ac->W[l] == BD_W(&P[l]);
        if (same)
                return 0;
        int64_t total = 0;
        for (int l = 0; l < MRCNN_LEVELS; l++) {
                ac->H[l] = (int)BD_H(&P[l]);
                ac->W[l] = (int)BD_W(&P[l]);
                ac->off[l] = total;
                total += (int64_t)ac->H[l] * ac->W[l] * NA;
        }
        ac->off[MRCNN_LEVELS] = total;
        free(ac->a);
        ac->a = malloc((size_t)(total ? total : 1) * 4 * sizeof(float));
        if (!ac->a)
                return bd_err_set(&n->be->err, -ENOMEM, "out of memory for %lld anchors", (long long)total);
        ac->pad_h = pad_h;
        ac->pad_w = pad_w;
        n->rpn.an_dev_ok = 0;   /* mrcnn_proposals copies them again */
        for (int l = 0; l < MRCNN_LEVELS; l++) {
                int stride = 4 << l;
                float size = n->cfg.anchor_size * (float)(1 << l), cell[NA * 4];
                det_cell_anchors(&n->cfg.conv, stride, &size, 1, ratios, NA, cell);
                /* torchvision's strides are the padded size over the map's (P6 at 800: 61, not 64) */
                int sy = stride, sx = stride;
                if (!n->cfg.conv.anchor_detectron) {
                        sy = ac->H[l] ? pad_h / ac->H[l] : stride;
                        sx = ac->W[l] ? pad_w / ac->W[l] : stride;
                }
                det_grid_anchors(cell, NA, ac->H[l], ac->W[l], sy, sx, ac->a + ac->off[l] * 4);
        }
        return 0;
}

/* ---- the head ---- */

/* The head on every level; obj (M) and dlt (M, 4) get the outputs in the
 * order (level, image, y, x, anchor), M = N x anchors: NHWC of each level's
 * maps, one after the other. */
int mrcnn_rpn_fwd(struct bd_model *m, struct mrcnn_net *n, int64_t N)
{
        struct bd_backend *be = n->be;
        struct mrcnn_rpn *p = &n->rpn;
        int r;
        int64_t M = N * p->ac.off[MRCNN_LEVELS], d2[2] = { M, 4 };
        if ((r = bd_tensor_resize(be, &p->obj, n->adt, BD_NCHW, 1, &M)) < 0 ||
            (r = bd_tensor_resize(be, &p->dlt, n->adt, BD_NCHW, 2, d2)) < 0)
                return r;
        size_t es = bd_dtype_size(n->adt);
        for (int l = 0; l < MRCNN_LEVELS; l++) {
                if ((r = bd_conv_fwd(m, &p->conv, &n->fpn.P[l], &p->rh[l])) < 0 ||
                    (r = bd_op_relu(be, &p->rh[l], &p->rh[l])) < 0 ||
                    (r = bd_conv_fwd(m, &p->cls, &p->rh[l], &p->ro[l])) < 0 ||
                    (r = bd_conv_fwd(m, &p->box, &p->rh[l], &p->rd[l])) < 0)
                        return r;
                int64_t off = N * p->ac.off[l];
                struct bd_tensor vo = bd_tensor_view((char *)p->obj.data + (size_t)off * es, p->obj.dev, n->adt,
                                                     BD_NHWC, 4, p->ro[l].dims);
                struct bd_tensor vd = bd_tensor_view((char *)p->dlt.data + (size_t)off * 4 * es, p->dlt.dev, n->adt,
                                                     BD_NHWC, 4, p->rd[l].dims);
                if ((r = bd_op_relayout(be, &p->ro[l], BD_NHWC, &vo)) < 0 ||
                    (r = bd_op_relayout(be, &p->rd[l], BD_NHWC, &vd)) < 0)
                        return r;
        }
        return 0;
}

/* level by level: the loss's gradients back in each level's layout, the
 * two 1x1 convolutions, the ReLU, the 3x3 convolution into dP */
int mrcnn_rpn_bwd(struct bd_model *m, struct mrcnn_net *n, struct bd_tensor *dP[MRCNN_LEVELS])
{
        struct bd_backend *be = n->be;
        struct bd_scratch *sc = &n->scratch;
        struct mrcnn_rpn *p = &n->rpn;
        const int64_t N = BD_N(&n->fpn.P[0]);
        size_t es = bd_dtype_size(n->adt);
        int r;
        for (int l = 0; l < MRCNN_LEVELS; l++) {
                int64_t off = N * p->ac.off[l];
                struct bd_tensor vo = bd_tensor_view((char *)p->d_obj.data + (size_t)off * es, p->d_obj.dev, n->adt,
                                                     BD_NHWC, 4, p->ro[l].dims);
                struct bd_tensor vd = bd_tensor_view((char *)p->d_dlt.data + (size_t)off * 4 * es, p->d_dlt.dev,
                                                     n->adt, BD_NHWC, 4, p->rd[l].dims);
                struct bd_tensor *go = bd_scratch_get_like(sc, &p->ro[l]), *gd = bd_scratch_get_like(sc, &p->rd[l]);
                struct bd_tensor *gh = bd_scratch_get_like(sc, &p->rh[l]);
                if (!go || !gd || !gh)
                        return -ENOMEM;
                if ((r = bd_op_relayout(be, &vo, p->ro[l].layout, go)) < 0 ||
                    (r = bd_op_relayout(be, &vd, p->rd[l].layout, gd)) < 0 ||
                    (r = bd_conv_bwd(m, &p->cls, &p->rh[l], go, gh, 0)) < 0 ||
                    (r = bd_conv_bwd(m, &p->box, &p->rh[l], gd, gh, 1)) < 0 ||
                    (r = mrcnn_relu_bwd_inplace(be, &p->rh[l], gh)) < 0 ||
                    (r = bd_conv_bwd(m, &p->conv, &n->fpn.P[l], gh, dP[l], 1)) < 0)
                        return r;
                bd_scratch_put(sc, go);
                bd_scratch_put(sc, gd);
                bd_scratch_put(sc, gh);
        }
        return 0;
}

/* ---- proposals ---- */

static struct det_rpn_params rpn_params(const struct mrcnn_net *n, int training)
{
        const struct mrcnn_cfg *c = &n->cfg;
        struct det_rpn_params p = c->mode == DET_CONV_MLPERF ? det_rpn_params_mlperf(training)
                                                             : det_rpn_params_torchvision(training);
        p.pre_nms_top_n = training ? c->rpn_pre_nms_top_n_train : c->rpn_pre_nms_top_n_test;
        p.post_nms_top_n = training ? c->rpn_post_nms_top_n_train : c->rpn_post_nms_top_n_test;
        if (p.level_post_nms_top_n > 0)
                p.level_post_nms_top_n = p.post_nms_top_n;
        p.per_batch = training && c->rpn_per_batch;
        return p;
}

/* a plain float32 view of count values of t from element off, shaped (d0[, d1[, d2]]) */
static struct bd_tensor view_f32(const struct bd_tensor *t, int64_t off, int ndim, int64_t d0, int64_t d1, int64_t d2)
{
        struct bd_tensor v = { .data = (float *)t->data + off, .ndim = ndim, .dims = { d0, d1, d2 },
                               .dtype = BD_F32, .layout = BD_NCHW, .dev = t->dev };
        return v;
}

/* the anchors on the device, once per map size (mrcnn_rpn_anchors) */
static int anchors_on_device(struct mrcnn_net *n)
{
        struct bd_backend *be = n->be;
        struct mrcnn_rpn *rp = &n->rpn;
        const int64_t A = rp->ac.off[MRCNN_LEVELS];
        int64_t d2[2] = { A, 4 };
        int r;
        if (rp->an_dev_ok)
                return 0;
        if ((r = bd_tensor_resize(be, &rp->an_dev, BD_F32, BD_NCHW, 2, d2)) < 0 ||
            (A && (r = be->ops->copy(be, rp->an_dev.data, rp->an_dev.dev, rp->ac.a, BD_CPU,
                                     (size_t)A * 4 * sizeof(float))) < 0))
                return r;
        rp->an_dev_ok = 1;
        return 0;
}

/* On the backend's device (det_dev_rpn_proposals: on CUDA the kernels of
 * proposals.cu, no copy of the head's outputs to the host); the proposals,
 * N x post-NMS top-n boxes, come back to the host for the box head's
 * sampler. */
int mrcnn_proposals(struct mrcnn_net *n, const struct det_batch *b, int training)
{
        struct bd_backend *be = n->be;
        struct mrcnn_rpn *rp = &n->rpn;
        struct det_rpn_params p = rpn_params(n, training);
        int hw[2 * 64], r = 0;
        if (b->n > 64)
                return bd_err_set(&be->err, -EINVAL, "at most 64 images per rank and step (got %d)", b->n);
        for (int i = 0; i < b->n; i++) {
                hw[2 * i] = b->samples[i].height;
                hw[2 * i + 1] = b->samples[i].width;
        }
        const int64_t N = b->n;
        int64_t cnt = N * p.post_nms_top_n;
        if (GROW(rp->props, rp->props_cap, cnt * 4) < 0 || GROW(rp->scores, rp->scores_cap, cnt) < 0)
                return bd_err_set(&be->err, -ENOMEM, "out of memory");
        rp->post = p.post_nms_top_n;
        if ((r = anchors_on_device(n)) < 0)
                return r;
        /* the head's outputs in float32 (amp: cast) */
        const struct bd_tensor *obj = &rp->obj, *dlt = &rp->dlt;
        struct bd_tensor *o32 = NULL, *d32 = NULL;
        if (rp->obj.dtype != BD_F32) {
                o32 = bd_scratch_get(&n->scratch, BD_F32, BD_NCHW, rp->obj.ndim, rp->obj.dims);
                d32 = bd_scratch_get(&n->scratch, BD_F32, BD_NCHW, rp->dlt.ndim, rp->dlt.dims);
                if (!o32 || !d32)
                        r = -ENOMEM;
                if (r >= 0 && (r = bd_op_cast(be, &rp->obj, BD_F32, 1.0, o32)) >= 0)
                        r = bd_op_cast(be, &rp->dlt, BD_F32, 1.0, d32);
                obj = o32;
                dlt = d32;
        }
        if (r >= 0) {
                struct bd_tensor ov[MRCNN_LEVELS], dv[MRCNN_LEVELS], av[MRCNN_LEVELS];
                for (int l = 0; l < MRCNN_LEVELS; l++) {
                        int64_t a0 = rp->ac.off[l], Al = rp->ac.off[l + 1] - a0;
                        ov[l] = view_f32(obj, N * a0, 2, N, Al, 0);
                        dv[l] = view_f32(dlt, N * a0 * 4, 3, N, Al, 4);
                        av[l] = view_f32(&rp->an_dev, a0 * 4, 2, Al, 4, 0);
                }
                r = det_dev_rpn_proposals(be, &n->cfg.conv, &p, ov, dv, av, MRCNN_LEVELS, hw, &rp->props_d,
                                          &rp->scores_d, rp->count);
        }
        if (o32)
                bd_scratch_put(&n->scratch, o32);
        if (d32)
                bd_scratch_put(&n->scratch, d32);
        if (r >= 0 && cnt > 0 &&
            ((r = be->ops->copy(be, rp->props, BD_CPU, rp->props_d.data, rp->props_d.dev,
                                (size_t)cnt * 4 * sizeof(float))) < 0 ||
             (r = be->ops->copy(be, rp->scores, BD_CPU, rp->scores_d.data, rp->scores_d.dev,
                                (size_t)cnt * sizeof(float))) < 0))
                return r;
        return r < 0 ? r : 0;
}

/* ---- targets and loss ---- */

/* Labels (1 sampled positive, 0 sampled negative, -1 not sampled) and
 * box codes of every anchor of every image, in the (level, image, ...) order
 * of the head's outputs, on the backend's device (det_dev_rpn_targets: on
 * CUDA the kernels of rpn-targets.cu, the sampled counts the one copy back):
 * lab (M) and tgt32 (M, 4). */
int mrcnn_rpn_targets(struct mrcnn_net *n, const struct det_batch *b, const struct mrcnn_step *st,
                      struct mrcnn_targets *t, struct bd_err *err)
{
        struct bd_backend *be = n->be;
        struct mrcnn_rpn *p = &n->rpn;
        const int N = b->n;
        int64_t gt_off[65], npos[64], nneg[64], d2[2] = { 0, 4 };
        uint64_t streams[64];
        int hw[2 * 64], r;
        if (N > 64)
                return bd_err_set(err, -EINVAL, "at most 64 images per rank and step (got %d)", N);
        gt_off[0] = 0;
        for (int i = 0; i < N; i++) {
                gt_off[i + 1] = gt_off[i] + t->gt[i].g;
                hw[2 * i] = b->samples[i].height;
                hw[2 * i + 1] = b->samples[i].width;
                streams[i] = mrcnn_image_stream(st, i, 0);
        }
        d2[0] = gt_off[N];
        if (GROW(p->gt_h, p->gt_h_cap, (d2[0] ? d2[0] : 1) * 4) < 0)
                return bd_err_set(err, -ENOMEM, "out of memory for %lld boxes", (long long)d2[0]);
        for (int i = 0; i < N; i++)
                memcpy(p->gt_h + 4 * gt_off[i], t->gt[i].boxes, (size_t)t->gt[i].g * 4 * sizeof(float));
        struct det_sampler s = { n->cfg.rpn_batch, n->cfg.rpn_positive_fraction };
        struct det_rpn_batch rb = { .m = &det_matcher_rpn, .s = &s, .k = &rpn_coder, .off = p->ac.off,
                                    .L = MRCNN_LEVELS, .N = N, .gt_off = gt_off, .image_hw = hw, .seed = st->seed,
                                    .streams = streams, .perms = st->inj ? st->inj->rpn : NULL, .work = &p->work };
        if ((r = anchors_on_device(n)) < 0 || (r = mrcnn_from_host(n, p->gt_h, BD_F32, 2, d2, &p->gt_d)) < 0 ||
            (r = det_dev_rpn_targets(be, &n->cfg.conv, &rb, &p->an_dev, &p->gt_d, &p->lab, &p->tgt32, npos,
                                     nneg)) < 0)
                return BE_FAIL(n, err, r, "RPN targets");
        t->rpn_pos = t->rpn_neg = 0;
        for (int i = 0; i < N; i++) {
                t->rpn_pos += npos[i];
                t->rpn_neg += nneg[i];
        }
        return 0;
}

/* the loss in the heads' type, its gradients back in half (amp) */
static int loss_amp(struct mrcnn_net *n, const struct bd_tensor *tgt_d, const struct det_loss_opts *lo,
                    struct mrcnn_losses *out)
{
        struct bd_backend *be = n->be;
        struct mrcnn_rpn *p = &n->rpn;
        int64_t M = p->obj.dims[0], d2[2] = { M, 4 };
        struct bd_tensor *o = bd_scratch_get(&n->scratch, n->dt, BD_NCHW, 1, &M);
        struct bd_tensor *d = bd_scratch_get(&n->scratch, n->dt, BD_NCHW, 2, d2);
        struct bd_tensor *go = bd_scratch_get(&n->scratch, n->dt, BD_NCHW, 1, &M);
        struct bd_tensor *gd = bd_scratch_get(&n->scratch, n->dt, BD_NCHW, 2, d2);
        int r = o && d && go && gd ? 0 : -ENOMEM;
        if (r >= 0 && (r = bd_op_cast(be, &p->obj, n->dt, 1.0, o)) >= 0 &&
            (r = bd_op_cast(be, &p->dlt, n->dt, 1.0, d)) >= 0 &&
            (r = det_rpn_loss(be, &n->lws, lo, o, d, &p->lab, tgt_d, DET_BETA_RPN, &out->objectness, &out->rpn_box,
                              go, gd)) >= 0 &&
            (r = bd_op_cast(be, go, n->adt, 1.0, &p->d_obj)) >= 0)
                r = bd_op_cast(be, gd, n->adt, 1.0, &p->d_dlt);
        struct bd_tensor *ts[] = { o, d, go, gd };
        for (int k = 0; k < 4; k++)
                if (ts[k])
                        bd_scratch_put(&n->scratch, ts[k]);
        return r;
}

int mrcnn_rpn_loss(struct mrcnn_net *n, const struct mrcnn_step *st, const struct mrcnn_targets *t,
                   struct mrcnn_losses *out, struct bd_err *err)
{
        struct mrcnn_rpn *p = &n->rpn;
        /* the codes in the heads' type (float64 in the golden tests) */
        struct bd_tensor *tgt_d = &p->tgt32, *cast = NULL;
        int r = 0;
        if (n->dt != BD_F32) {
                if (!(cast = bd_scratch_get(&n->scratch, n->dt, BD_NCHW, 2, p->tgt32.dims)))
                        return BE_FAIL(n, err, -ENOMEM, "RPN targets");
                r = bd_op_cast(n->be, &p->tgt32, n->dt, 1.0, cast);
                tgt_d = cast;
        }
        /* the sampled anchors, counted where they were drawn */
        double f = mrcnn_loss_factor(t->rpn_pos + t->rpn_neg, t->world, t->cnt[0]);
        struct det_loss_opts lo = { .n = (double)(t->rpn_pos + t->rpn_neg), .gscale = st->gscale * f, .vscale = f,
                                    .acc = &n->lacc };
        if (r >= 0) {
                if (n->adt == n->dt)
                        r = det_rpn_loss(n->be, &n->lws, &lo, &p->obj, &p->dlt, &p->lab, tgt_d, DET_BETA_RPN,
                                         &out->objectness, &out->rpn_box, &p->d_obj, &p->d_dlt);
                else
                        r = loss_amp(n, tgt_d, &lo, out);
        }
        if (cast)
                bd_scratch_put(&n->scratch, cast);
        return r < 0 ? BE_FAIL(n, err, r, "RPN loss") : 0;
}

/* mrcnn-net.c: the Mask R-CNN network (mrcnn-net.h explains the model). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "mask.h"
#include "masks.h"
#include "mrcnn-net.h"
#include "rng.h"
#include "scratch.h"

#define MASK_M 28               /* mask resolution (the deconv doubles the 14x14 RoI features) */
#define BOX_POOL 7
#define MASK_POOL 14
#define NA 3                    /* anchors per location: ratios 0.5, 1, 2 */

static const float ratios[NA] = { 0.5f, 1.0f, 2.0f };
static const struct det_coder rpn_coder = { 1, 1, 1, 1, (float)DET_BBOX_XFORM_CLIP };
static const struct det_coder roi_coder = { 10, 10, 5, 5, (float)DET_BBOX_XFORM_CLIP };

/* ---- configuration --------------------------------------------------------------------- */

void mrcnn_cfg_defaults(struct mrcnn_cfg *c, enum det_conv_kind mode)
{
        int mlperf = mode == DET_CONV_MLPERF;
        *c = (struct mrcnn_cfg){
                .mode = mode,
                .conv = *det_conv_get(mode),
                .frozen_bn_eps = mlperf ? 0 : 1e-5,
                .stride_in_1x1 = mlperf,
                .box_beta = mlperf ? DET_BETA_BOX_MLPERF : DET_BETA_BOX_TORCHVISION,
                .mask_rule = mlperf ? MRCNN_MASK_POLYGON : MRCNN_MASK_ROIALIGN,
                .post = mlperf ? det_post_mlperf : det_post_torchvision,
                .bias_lr_factor = mlperf ? 2 : 1,
                .bias_weight_decay = 0,
                .rpn_per_batch = mlperf,
                .depth = 50,
                .width_mult = 1,
                .freeze_at = 2,
                .frozen_bn = 1,
                .fpn_channels = 256,
                .anchor_size = 32,
                .num_classes = 81,
                .rpn_pre_nms_top_n_train = 2000,
                .rpn_post_nms_top_n_train = 2000,
                .rpn_pre_nms_top_n_test = 1000,
                .rpn_post_nms_top_n_test = 1000,
                .rpn_batch = 256,
                .rpn_positive_fraction = 0.5,
                .roi_batch = 512,
                .roi_positive_fraction = 0.25,
                .box_rep = 1024,
                .mask_convs = 4,
                .mask_dim = 256,
                .detections = 100,
        };
        c->post.detections_per_img = c->detections;
}

void mrcnn_cfg_small(struct mrcnn_cfg *c, enum det_conv_kind mode, int num_classes)
{
        mrcnn_cfg_defaults(c, mode);
        c->depth = 18;
        c->freeze_at = 0;
        c->frozen_bn = 0;
        c->fpn_channels = 64;
        c->anchor_size = 16;
        c->num_classes = num_classes;
        c->rpn_pre_nms_top_n_train = 300;
        c->rpn_pre_nms_top_n_test = 150;
        c->rpn_post_nms_top_n_train = 200;
        c->rpn_post_nms_top_n_test = 100;
        c->rpn_batch = 128;
        c->roi_batch = 64;
        c->box_rep = 256;
        c->mask_convs = 2;
        c->mask_dim = 64;
        c->detections = 20;
        c->post.detections_per_img = 20;
}

int mrcnn_cfg_check(const struct mrcnn_cfg *c, struct bd_err *err)
{
#define BAD(cond, ...) do { if (cond) return bd_err_set(err, -EINVAL, __VA_ARGS__); } while (0)
        BAD(c->depth != 18 && c->depth != 34 && c->depth != 50, "backbone: resnet%d (resnet18, resnet34 or resnet50)",
            c->depth);
        BAD(!(c->width_mult > 0 && c->width_mult <= 4), "width multiplier %g out of (0, 4]", c->width_mult);
        BAD(c->freeze_at < 0 || c->freeze_at > 5, "freeze_at %d out of [0, 5]", c->freeze_at);
        BAD(c->fpn_channels < 1 || c->fpn_channels > 4096, "FPN channels %d out of [1, 4096]", c->fpn_channels);
        BAD(!(c->anchor_size >= 1 && c->anchor_size <= 4096), "anchor size %g out of [1, 4096]", c->anchor_size);
        BAD(c->num_classes < 2 || c->num_classes > 100000, "%d classes (with the background): at least 2",
            c->num_classes);
        BAD(c->rpn_pre_nms_top_n_train < 1 || c->rpn_post_nms_top_n_train < 1 || c->rpn_pre_nms_top_n_test < 1 ||
                    c->rpn_post_nms_top_n_test < 1,
            "RPN top-n must be at least 1");
        BAD(c->rpn_batch < 1 || c->roi_batch < 1, "sampled anchors and RoIs per image must be at least 1");
        BAD(!(c->rpn_positive_fraction >= 0 && c->rpn_positive_fraction <= 1) ||
                    !(c->roi_positive_fraction >= 0 && c->roi_positive_fraction <= 1),
            "positive fractions must be in [0, 1]");
        BAD(c->box_rep < 1 || c->mask_dim < 1, "head widths must be at least 1");
        BAD(c->mask_convs < 0 || c->mask_convs > MRCNN_MAX_MASK_CONVS, "mask convolutions %d out of [0, %d]",
            c->mask_convs, MRCNN_MAX_MASK_CONVS);
        BAD(c->detections < 1, "detections per image must be at least 1");
#undef BAD
        return 0;
}

/* ---- the network ------------------------------------------------------------------------ */

struct anchor_cache {
        int H[MRCNN_LEVELS], W[MRCNN_LEVELS], pad_h, pad_w;
        float *a;                       /* all levels, concatenated */
        int64_t off[MRCNN_LEVELS + 1];  /* anchors before level l */
};

struct mrcnn_net {
        struct mrcnn_cfg cfg;
        struct bd_backend *be;
        enum bd_dtype dt;               /* the heads' activations and the losses: the model's */
        enum bd_dtype adt;              /* backbone, FPN and RPN head: dt, or f16 with amp */
        int K;
        struct bd_resnet body;
        int need_c[4];                  /* the gradient of C2..C5 is wanted */
        struct bd_conv inner[4], outer[4];
        struct bd_pool p6;
        struct bd_conv rpn_conv, rpn_cls, rpn_box;
        struct det_msroi box_roi, mask_roi;
        struct bd_fc fc6, fc7, cls, bbox;
        struct bd_conv mconv[MRCNN_MAX_MASK_CONVS], deconv, mlogits;
        struct det_loss_ws lws;
        struct bd_scratch scratch;
        struct anchor_cache ac;

        /* forward activations */
        struct bd_tensor x;                             /* the input in the model's type */
        struct bd_tensor lat[4], up[3], inner_t[4];     /* FPN */
        struct bd_tensor P[MRCNN_LEVELS];
        struct bd_tensor P32[MRCNN_ROI_LEVELS];         /* amp: P2..P5 in the heads' type */
        const struct bd_tensor *roi_maps[MRCNN_ROI_LEVELS];     /* what RoIAlign reads: P or P32 */
        struct bd_tensor rh[MRCNN_LEVELS], ro[MRCNN_LEVELS], rd[MRCNN_LEVELS];  /* RPN conv (ReLU'd), outputs */
        struct bd_tensor obj, dlt;                      /* RPN outputs, all levels, NHWC, (M), (M, 4) */
        struct bd_tensor rpn_lab, rpn_tgt;              /* (M) i32, (M, 4) */
        struct bd_tensor rois, box_feat, h6, h7, cls_out, box_out;
        struct bd_tensor roi_lab, roi_tgt;
        struct bd_tensor prois, mask_feat, mh[MRCNN_MAX_MASK_CONVS], mdc, mlog;
        struct bd_tensor pos_lab, mask_tgt, props_dev, matched_dev, mask_f32;
        /* loss gradients kept for the backward */
        struct bd_tensor d_obj, d_dlt, d_cls, d_box, d_mlog;
        int have_grads, have_mask;
        int32_t *roi_levels, *mask_levels;
        size_t roi_levels_cap, mask_levels_cap;

        /* host work space, grown as needed and kept: a step allocates nothing
         * once the sizes repeat (large blocks would otherwise go back to the
         * kernel and fault in again, zeroed, every step) */
        float *obj_h, *dlt_h, *props, *scores;
        size_t obj_h_cap, dlt_h_cap, props_cap, scores_cap;
        int32_t *w_match, *w_lab, *rpn_lab_h;
        uint8_t *w_vis, *w_pos, *w_neg, *w_bits;
        float *rpn_tgt_h;
        size_t w_match_cap, w_lab_cap, w_vis_cap, w_pos_cap, w_neg_cap, w_bits_cap, rpn_lab_cap, rpn_tgt_cap;
        int64_t count[64];
        struct {
                float *props;           /* proposals with the GT appended, all images */
                float *rois;            /* sampled (R, 5) */
                int32_t *roi_labels;
                int64_t nprops[64];
                int64_t nrois;
        } dbg;
        size_t dbg_props_cap, dbg_rois_cap, dbg_lab_cap;
};

const struct mrcnn_cfg *mrcnn_net_cfg(const struct mrcnn_net *n)
{
        return &n->cfg;
}

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

/* grows a malloc'ed array to n elements of size sz */
static int grow(void *pp, size_t *cap, size_t n, size_t sz)
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
#define GROW(p, cap, n) grow(&(p), &(cap), (size_t)(n), sizeof(*(p)))

static int round8(double v)
{
        int r = (int)lround(v / 8) * 8;
        return r < 8 ? 8 : r;
}

static int conv_layer(struct bd_model *m, struct bd_conv *l, const char *name, int64_t cin, int64_t cout, int k,
                      int stride, int pad, int transposed, enum bd_init init, double std)
{
        struct bd_conv_cfg c = { .cin = cin, .cout = cout, .k = k, .stride = stride, .pad = pad, .bias = 1,
                                 .transposed = transposed, .winit = init, .wstd = std };
        return bd_conv_init(l, m, name, &c);
}

/* The box head's and predictors' fully connected layers.  mlperf mode: the
 * reference's rules (weights as given, biases 0); torchvision mode: nn.Linear's
 * defaults (U(+-1/sqrt(in)) for weights and biases), as torchvision's
 * TwoMLPHead and FastRCNNPredictor keep them. */
static int fc_layer(struct bd_model *m, const struct mrcnn_cfg *cfg, struct bd_fc *l, const char *name, int64_t in,
                    int64_t out, enum bd_init init, double std)
{
        int r = bd_fc_init(l, m, name, in, out, 1, 0);
        if (r < 0 || cfg->mode == DET_CONV_TORCHVISION)
                return r;
        m->p[l->w].init.kind = init;
        m->p[l->w].init.std = std;
        m->p[l->b].init.kind = BD_INIT_ZERO;
        return 0;
}

static void set_bn_eps(struct bd_resnet *r, double eps)
{
        r->bn1.eps = eps;
        for (int i = 0; i < r->nblocks; i++) {
                struct bd_block *b = &r->blocks[i];
                for (int k = 0; k < b->nconv; k++)
                        b->bn[k].eps = eps;
                if (b->has_ds)
                        b->ds_bn.eps = eps;
        }
}

int mrcnn_net_new(struct bd_model *m, const struct mrcnn_cfg *cfg, struct mrcnn_net **ret, struct bd_err *err)
{
        int r = mrcnn_cfg_check(cfg, err);
        if (r < 0)
                return r;
        struct mrcnn_net *n = calloc(1, sizeof(*n));
        if (!n)
                return bd_err_set(err, -ENOMEM, "out of memory");
        n->cfg = *cfg;
        n->cfg.post.detections_per_img = cfg->detections;
        n->be = m->be;
        n->dt = m->dtype;
        n->adt = m->dtype;
        if (cfg->amp) {
                if (m->be->dev != BD_CUDA || m->dtype != BD_F32) {
                        r = bd_err_set(err, -EINVAL, "mixed precision needs the cuda backend and a float32 model");
                        free(n);
                        return r;
                }
                n->adt = BD_F16;
        }
        n->K = cfg->num_classes;
        for (int l = 0; l < MRCNN_ROI_LEVELS; l++)
                n->roi_maps[l] = n->adt != n->dt ? &n->P32[l] : &n->P[l];
        bd_scratch_init(&n->scratch, m->be);
        struct bd_resnet_cfg rc = { .depth = cfg->depth, .stages = 4, .freeze_at = cfg->freeze_at,
                                    .bn = cfg->frozen_bn ? BD_BN_FROZEN : BD_BN_TRAIN,
                                    .stride_in_1x1 = cfg->stride_in_1x1, .width = round8(64 * cfg->width_mult) };
        if ((r = bd_resnet_init(&n->body, m, "backbone.body.", &rc)) < 0)
                goto fail;
        if (cfg->frozen_bn)
                set_bn_eps(&n->body, cfg->frozen_bn_eps);
        for (int k = 1; k <= 4; k++)
                n->need_c[k - 1] = cfg->freeze_at <= k;
        const int64_t F = cfg->fpn_channels;
        char name[BD_NAME_MAX];
        for (int i = 0; i < 4; i++) {
                snprintf(name, sizeof(name), "backbone.fpn.inner_blocks.%d.0", i);
                if ((r = conv_layer(m, &n->inner[i], name, n->body.channels[i], F, 1, 1, 0, 0,
                                    BD_INIT_KAIMING_UNIFORM_A1, 0)) < 0)
                        goto fail;
                snprintf(name, sizeof(name), "backbone.fpn.layer_blocks.%d.0", i);
                if ((r = conv_layer(m, &n->outer[i], name, F, F, 3, 1, 1, 0, BD_INIT_KAIMING_UNIFORM_A1, 0)) < 0)
                        goto fail;
        }
        bd_pool_init(&n->p6, m, 1, 2, 0);
        if ((r = conv_layer(m, &n->rpn_conv, "rpn.head.conv.0.0", F, F, 3, 1, 1, 0, BD_INIT_NORMAL, 0.01)) < 0 ||
            (r = conv_layer(m, &n->rpn_cls, "rpn.head.cls_logits", F, NA, 1, 1, 0, 0, BD_INIT_NORMAL, 0.01)) < 0 ||
            (r = conv_layer(m, &n->rpn_box, "rpn.head.bbox_pred", F, 4 * NA, 1, 1, 0, 0, BD_INIT_NORMAL, 0.01)) < 0)
                goto fail;
        const double scales[MRCNN_ROI_LEVELS] = { 0.25, 0.125, 0.0625, 0.03125 };
        if ((r = det_msroi_init(&n->box_roi, &cfg->conv, MRCNN_ROI_LEVELS, scales, BOX_POOL, 2, err)) < 0 ||
            (r = det_msroi_init(&n->mask_roi, &cfg->conv, MRCNN_ROI_LEVELS, scales, MASK_POOL, 2, err)) < 0)
                goto fail_err;
        const int64_t K = cfg->num_classes;
        const enum bd_init a1 = BD_INIT_KAIMING_UNIFORM_A1;
        if ((r = fc_layer(m, cfg, &n->fc6, "roi_heads.box_head.fc6", F * BOX_POOL * BOX_POOL, cfg->box_rep, a1, 0)) < 0 ||
            (r = fc_layer(m, cfg, &n->fc7, "roi_heads.box_head.fc7", cfg->box_rep, cfg->box_rep, a1, 0)) < 0 ||
            (r = fc_layer(m, cfg, &n->cls, "roi_heads.box_predictor.cls_score", cfg->box_rep, K, BD_INIT_NORMAL,
                          0.01)) < 0 ||
            (r = fc_layer(m, cfg, &n->bbox, "roi_heads.box_predictor.bbox_pred", cfg->box_rep, 4 * K, BD_INIT_NORMAL,
                          0.001)) < 0)
                goto fail;
        int64_t cin = F;
        for (int i = 0; i < cfg->mask_convs; i++) {
                snprintf(name, sizeof(name), "roi_heads.mask_head.%d.0", i);
                if ((r = conv_layer(m, &n->mconv[i], name, cin, cfg->mask_dim, 3, 1, 1, 0, BD_INIT_KAIMING_NORMAL_OUT,
                                    0)) < 0)
                        goto fail;
                cin = cfg->mask_dim;
        }
        if ((r = conv_layer(m, &n->deconv, "roi_heads.mask_predictor.conv5_mask", cin, cfg->mask_dim, 2, 2, 0, 1,
                            BD_INIT_KAIMING_NORMAL_OUT, 0)) < 0 ||
            (r = conv_layer(m, &n->mlogits, "roi_heads.mask_predictor.mask_fcn_logits", cfg->mask_dim, K, 1, 1, 0, 0,
                            BD_INIT_KAIMING_NORMAL_OUT, 0)) < 0)
                goto fail;
        *ret = n;
        return 0;
fail:
        bd_err_set(err, r, "%s", m->be->err.msg);
fail_err:
        mrcnn_net_free(n);
        return r;
}

struct mrcnn_net *mrcnn_net_free(struct mrcnn_net *n)
{
        if (!n)
                return NULL;
        bd_resnet_release(&n->body);
        bd_pool_release(&n->p6);
        det_loss_ws_release(&n->lws);
        struct bd_tensor *ts[] = { &n->x, &n->obj, &n->dlt, &n->rpn_lab, &n->rpn_tgt, &n->rois, &n->box_feat, &n->h6,
                                   &n->h7, &n->cls_out, &n->box_out, &n->roi_lab, &n->roi_tgt, &n->prois,
                                   &n->mask_feat, &n->mdc, &n->mlog, &n->pos_lab, &n->mask_tgt, &n->props_dev,
                                   &n->matched_dev, &n->mask_f32, &n->d_obj, &n->d_dlt, &n->d_cls, &n->d_box,
                                   &n->d_mlog };
        for (size_t i = 0; i < ARRAY_SIZE(ts); i++)
                bd_tensor_release(ts[i]);
        for (int i = 0; i < 4; i++) {
                bd_tensor_release(&n->lat[i]);
                bd_tensor_release(&n->P32[i]);
                bd_tensor_release(&n->inner_t[i]);
                if (i < 3)
                        bd_tensor_release(&n->up[i]);
        }
        for (int l = 0; l < MRCNN_LEVELS; l++) {
                bd_tensor_release(&n->P[l]);
                bd_tensor_release(&n->rh[l]);
                bd_tensor_release(&n->ro[l]);
                bd_tensor_release(&n->rd[l]);
        }
        for (int i = 0; i < MRCNN_MAX_MASK_CONVS; i++)
                bd_tensor_release(&n->mh[i]);
        bd_scratch_release(&n->scratch);
        free(n->ac.a);
        free(n->obj_h);
        free(n->w_match);
        free(n->w_lab);
        free(n->rpn_lab_h);
        free(n->w_vis);
        free(n->w_pos);
        free(n->w_neg);
        free(n->w_bits);
        free(n->rpn_tgt_h);
        free(n->dlt_h);
        free(n->props);
        free(n->scores);
        free(n->roi_levels);
        free(n->mask_levels);
        free(n->dbg.props);
        free(n->dbg.rois);
        free(n->dbg.roi_labels);
        free(n);
        return NULL;
}

/* ---- host and device copies -------------------------------------------------------------- */

#define BE_FAIL(n, err, r, what) bd_err_set(err, r, "%s: %s", what, (n)->be->err.msg)

/* A float32 host copy of a plain tensor (any float type, any device) into
 * *buf; on the CPU a float32 tensor is read in place (*out points at it). */
static int to_host(struct mrcnn_net *n, const struct bd_tensor *t, float **buf, size_t *cap, const float **out)
{
        struct bd_backend *be = n->be;
        int64_t cnt = bd_tensor_numel(t);
        if (t->dev == BD_CPU && t->dtype == BD_F32) {
                *out = t->data;
                return 0;
        }
        if (grow(buf, cap, (size_t)cnt, sizeof(float)) < 0)
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

/* t (ndim, dims) of type dt on the device from host float32 values */
static int from_host(struct mrcnn_net *n, const float *v, enum bd_dtype dt, int ndim, const int64_t *dims,
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

static int i32_from_host(struct mrcnn_net *n, const int32_t *v, int64_t cnt, struct bd_tensor *t)
{
        struct bd_backend *be = n->be;
        int r = bd_tensor_resize(be, t, BD_I32, BD_NCHW, 1, &cnt);
        if (r < 0 || cnt == 0)
                return r;
        return be->ops->copy(be, t->data, t->dev, v, BD_CPU, (size_t)cnt * sizeof(int32_t));
}

/* ---- backbone, FPN and RPN head ----------------------------------------------------------- */

static int input(struct mrcnn_net *n, const struct det_batch *b)
{
        int64_t dims[4] = { b->n, 3, b->height, b->width };
        struct bd_tensor v = bd_tensor_view(b->images, BD_CPU, BD_F32, BD_NCHW, 4, dims);
        struct bd_backend *be = n->be;
        if (be->dev == BD_CPU && n->adt == BD_F32) {
                n->x = v;       /* a view: released as one (cap 0) */
                return 0;
        }
        if (n->x.cap == 0)
                memset(&n->x, 0, sizeof(n->x));
        if (be->dev == BD_CPU)
                return bd_op_cast(be, &v, n->adt, 1.0, &n->x);
        int r = bd_tensor_resize(be, &n->x, BD_F32, BD_NCHW, 4, dims);
        if (r >= 0)
                r = be->ops->copy(be, n->x.data, n->x.dev, b->images, BD_CPU, bd_tensor_bytes(&n->x));
        if (r >= 0 && n->adt != BD_F32) {
                struct bd_tensor *h = bd_scratch_get(&n->scratch, BD_F32, BD_NCHW, 4, dims),
                                 *c = bd_scratch_get(&n->scratch, n->adt, BD_NCHW, 4, dims);
                if (!h || !c)
                        r = -ENOMEM;
                if (r >= 0)
                        r = bd_op_copy(be, &n->x, h);
                if (r >= 0)
                        r = bd_op_cast_input(be, h, n->adt, c, &n->x);
                if (h)
                        bd_scratch_put(&n->scratch, h);
                if (c)
                        bd_scratch_put(&n->scratch, c);
        }
        return r;
}

static int fpn_fwd(struct bd_model *m, struct mrcnn_net *n)
{
        struct bd_backend *be = n->be;
        int r;
        const struct bd_tensor *C[4];
        for (int i = 0; i < 4; i++)
                C[i] = bd_resnet_stage(&n->body, i + 1);
        /* top-down: inner_t[3] = lat(C5); inner_t[i] = lat(C_i) + up(inner_t[i + 1]) */
        if ((r = bd_conv_fwd(m, &n->inner[3], C[3], &n->inner_t[3])) < 0)
                return r;
        for (int i = 2; i >= 0; i--) {
                if ((r = bd_conv_fwd(m, &n->inner[i], C[i], &n->lat[i])) < 0 ||
                    (r = bd_op_upsample2x(be, &n->inner_t[i + 1], &n->up[i])) < 0)
                        return r;
                if (!bd_tensor_same_shape(&n->up[i], &n->lat[i]))
                        return bd_err_set(&be->err, -EINVAL, "FPN: level %d is not twice level %d (image size not a "
                                          "multiple of 32)", i + 2, i + 3);
                if (n->up[i].layout != n->lat[i].layout) {
                        struct bd_tensor *t = bd_scratch_get_like(&n->scratch, &n->lat[i]);
                        if (!t)
                                return -ENOMEM;
                        r = bd_op_relayout(be, &n->up[i], n->lat[i].layout, t);
                        if (r >= 0)
                                r = bd_op_add(be, &n->lat[i], t, &n->inner_t[i], 0);
                        bd_scratch_put(&n->scratch, t);
                } else {
                        r = bd_op_add(be, &n->lat[i], &n->up[i], &n->inner_t[i], 0);
                }
                if (r < 0)
                        return r;
        }
        for (int i = 0; i < 4; i++)
                if ((r = bd_conv_fwd(m, &n->outer[i], &n->inner_t[i], &n->P[i])) < 0)
                        return r;
        return bd_pool_fwd(m, &n->p6, &n->P[3], &n->P[4]);
}

/* Anchors of every level for the maps of this forward (cached per size). */
static int anchors(struct mrcnn_net *n, int pad_h, int pad_w)
{
        struct anchor_cache *ac = &n->ac;
        int same = ac->a && ac->pad_h == pad_h && ac->pad_w == pad_w;
        for (int l = 0; l < MRCNN_LEVELS; l++)
                same = same && ac->H[l] == BD_H(&n->P[l]) && ac->W[l] == BD_W(&n->P[l]);
        if (same)
                return 0;
        int64_t total = 0;
        for (int l = 0; l < MRCNN_LEVELS; l++) {
                ac->H[l] = (int)BD_H(&n->P[l]);
                ac->W[l] = (int)BD_W(&n->P[l]);
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

/* RPN head on every level; obj (M) and dlt (M, 4) get the outputs in the
 * order (level, image, y, x, anchor), M = N x anchors: NHWC of each level's
 * maps, one after the other. */
static int rpn_fwd(struct bd_model *m, struct mrcnn_net *n, int64_t N)
{
        struct bd_backend *be = n->be;
        int r;
        int64_t M = N * n->ac.off[MRCNN_LEVELS], d2[2] = { M, 4 };
        if ((r = bd_tensor_resize(be, &n->obj, n->adt, BD_NCHW, 1, &M)) < 0 ||
            (r = bd_tensor_resize(be, &n->dlt, n->adt, BD_NCHW, 2, d2)) < 0)
                return r;
        size_t es = bd_dtype_size(n->adt);
        for (int l = 0; l < MRCNN_LEVELS; l++) {
                if ((r = bd_conv_fwd(m, &n->rpn_conv, &n->P[l], &n->rh[l])) < 0 ||
                    (r = bd_op_relu(be, &n->rh[l], &n->rh[l])) < 0 ||
                    (r = bd_conv_fwd(m, &n->rpn_cls, &n->rh[l], &n->ro[l])) < 0 ||
                    (r = bd_conv_fwd(m, &n->rpn_box, &n->rh[l], &n->rd[l])) < 0)
                        return r;
                int64_t off = N * n->ac.off[l];
                struct bd_tensor vo = bd_tensor_view((char *)n->obj.data + (size_t)off * es, n->obj.dev, n->adt,
                                                     BD_NHWC, 4, n->ro[l].dims);
                struct bd_tensor vd = bd_tensor_view((char *)n->dlt.data + (size_t)off * 4 * es, n->dlt.dev, n->adt,
                                                     BD_NHWC, 4, n->rd[l].dims);
                if ((r = bd_op_relayout(be, &n->ro[l], BD_NHWC, &vo)) < 0 ||
                    (r = bd_op_relayout(be, &n->rd[l], BD_NHWC, &vd)) < 0)
                        return r;
        }
        return 0;
}

static int features(struct bd_model *m, struct mrcnn_net *n, const struct det_batch *b)
{
        int r;
        if ((r = input(n, b)) < 0 || (r = bd_resnet_fwd(m, &n->body, &n->x)) < 0 || (r = fpn_fwd(m, n)) < 0 ||
            (r = anchors(n, b->height, b->width)) < 0)
                return r;
        for (int l = 0; n->adt != n->dt && l < MRCNN_ROI_LEVELS; l++)
                if ((r = bd_op_cast(n->be, &n->P[l], n->dt, 1.0, &n->P32[l])) < 0)
                        return r;
        return rpn_fwd(m, n, b->n);
}

/* The RPN's outputs on the host, per level in the (N, A_l) / (N, A_l, 4)
 * form of det_rpn_proposals. */
static int rpn_levels(struct mrcnn_net *n, int64_t N, struct det_rpn_level lv[MRCNN_LEVELS])
{
        const float *o, *d;
        int r;
        if ((r = to_host(n, &n->obj, &n->obj_h, &n->obj_h_cap, &o)) < 0 ||
            (r = to_host(n, &n->dlt, &n->dlt_h, &n->dlt_h_cap, &d)) < 0)
                return r;
        for (int l = 0; l < MRCNN_LEVELS; l++) {
                int64_t off = N * n->ac.off[l];
                lv[l] = (struct det_rpn_level){ .objectness = o + off, .deltas = d + off * 4,
                                                .anchors = n->ac.a + n->ac.off[l] * 4,
                                                .A = n->ac.off[l + 1] - n->ac.off[l] };
        }
        return 0;
}

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

/* proposals of the batch into n->props (N, post, 4) and n->count */
static int proposals(struct mrcnn_net *n, const struct det_batch *b, const struct det_rpn_level *lv, int training)
{
        struct det_rpn_params p = rpn_params(n, training);
        int hw[2 * 64];
        if (b->n > 64)
                return bd_err_set(&n->be->err, -EINVAL, "at most 64 images per rank and step (got %d)", b->n);
        for (int i = 0; i < b->n; i++) {
                hw[2 * i] = b->samples[i].height;
                hw[2 * i + 1] = b->samples[i].width;
        }
        int64_t cnt = (int64_t)b->n * p.post_nms_top_n;
        if (GROW(n->props, n->props_cap, cnt * 4) < 0 || GROW(n->scores, n->scores_cap, cnt) < 0)
                return bd_err_set(&n->be->err, -ENOMEM, "out of memory");
        int r = det_rpn_proposals(&n->cfg.conv, &p, lv, MRCNN_LEVELS, b->n, hw, n->props, n->scores, n->count);
        return r < 0 ? bd_err_set(&n->be->err, r, "RPN proposals: bad parameters") : 0;
}

/* ---- training targets -------------------------------------------------------------------- */

/* one image's ground truth as float boxes, labels and masks */
struct gt {
        int64_t g;
        float *boxes;
        int32_t *labels;
        struct det_gt_mask *masks;
};

static int gt_of(const struct det_sample *s, struct gt *g)
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

static void gt_free(struct gt *g)
{
        free(g->boxes);
        free(g->labels);
        free(g->masks);
}

static uint64_t image_stream(const struct mrcnn_step *st, int i, int which)
{
        return bd_rng_mix3(st->step, (uint64_t)(st->image_base + i), (uint64_t)which);
}

/* RPN labels (1 sampled positive, 0 sampled negative, -1 not sampled) and
 * regression targets of image i, scattered into the (level, image, ...)
 * order of n->obj: lab (M), tgt (M, 4). */
static int rpn_targets(struct mrcnn_net *n, const struct det_batch *b, int i, const struct gt *g,
                       const struct mrcnn_step *st, int32_t *lab, float *tgt, int64_t *npos, int64_t *nneg)
{
        const struct det_conv *c = &n->cfg.conv;
        const int64_t A = n->ac.off[MRCNN_LEVELS], N = b->n;
        const float *an = n->ac.a;
        size_t na = (size_t)(A ? A : 1);
        if (GROW(n->w_match, n->w_match_cap, na) < 0 || GROW(n->w_lab, n->w_lab_cap, na) < 0 ||
            GROW(n->w_vis, n->w_vis_cap, na) < 0 || GROW(n->w_pos, n->w_pos_cap, na) < 0 ||
            GROW(n->w_neg, n->w_neg_cap, na) < 0)
                return -ENOMEM;
        int32_t *matches = n->w_match, *labels = n->w_lab;
        uint8_t *vis = n->w_vis, *pos = n->w_pos, *neg = n->w_neg;
        int r;
        det_anchor_visibility(c, an, A, (float)b->samples[i].width, (float)b->samples[i].height, vis);
        if ((r = det_match_boxes(c, &det_matcher_rpn, g->boxes, g->g, an, A, matches)) < 0)
                goto out;
        det_rpn_labels(matches, vis, A, labels);
        struct det_sampler s = { n->cfg.rpn_batch, n->cfg.rpn_positive_fraction };
        const struct det_perm *perm = st->inj && st->inj->rpn ? &st->inj->rpn[i] : NULL;
        if ((r = det_sample(&s, labels, A, st->seed, image_stream(st, i, 0), perm, pos, neg, NULL, NULL, npos,
                            nneg)) < 0)
                goto out;
        for (int l = 0; l < MRCNN_LEVELS; l++) {
                int64_t a0 = n->ac.off[l], Al = n->ac.off[l + 1] - a0, base = N * a0 + i * Al;
                for (int64_t j = 0; j < Al; j++) {
                        int64_t a = a0 + j, o = base + j;
                        lab[o] = pos[a] ? 1 : neg[a] ? 0 : -1;
                        if (pos[a])
                                det_encode(c, &rpn_coder, g->boxes + 4 * matches[a], an + 4 * a, 1, tgt + 4 * o);
                        else
                                tgt[4 * o] = tgt[4 * o + 1] = tgt[4 * o + 2] = tgt[4 * o + 3] = 0;
                }
        }
        r = 0;
out:
        return r;
}

/* The sampled RoIs of image i (proposals with the ground truth appended),
 * in proposal order: rois (+5 each: image, box), labels, regression
 * targets, and for positives the matched GT index. */
struct roi_set {
        float *rois, *tgt;
        int32_t *labels;
        int64_t *matched;               /* GT index of each RoI (-1 for negatives) */
        int64_t n, npos;
        size_t cap;
};

static int roi_targets(struct mrcnn_net *n, int i, const float *props, int64_t np, const struct gt *g,
                       const struct mrcnn_step *st, struct roi_set *rs)
{
        const struct det_conv *c = &n->cfg.conv;
        int32_t *matches = malloc((size_t)(np + 1) * sizeof(int32_t)), *labels = malloc((size_t)(np + 1) * 4);
        uint8_t *pos = malloc((size_t)np + 1), *neg = malloc((size_t)np + 1);
        int r = -ENOMEM;
        if (!matches || !labels || !pos || !neg)
                goto out;
        if ((r = det_match_boxes(c, &det_matcher_roi, g->boxes, g->g, props, np, matches)) < 0)
                goto out;
        for (int64_t j = 0; j < np; j++)
                labels[j] = matches[j] >= 0 ? g->labels[matches[j]] : matches[j] == DET_MATCH_BELOW_LOW ? 0 : -1;
        struct det_sampler s = { n->cfg.roi_batch, n->cfg.roi_positive_fraction };
        const struct det_perm *perm = st->inj && st->inj->roi ? &st->inj->roi[i] : NULL;
        int64_t npos, nneg;
        if ((r = det_sample(&s, labels, np, st->seed, image_stream(st, i, 1), perm, pos, neg, NULL, NULL, &npos,
                            &nneg)) < 0)
                goto out;
        size_t want = (size_t)(rs->n + npos + nneg);
        if (want > rs->cap) {
                size_t cap = want * 2;
                float *ro = realloc(rs->rois, cap * 5 * sizeof(float)), *tg;
                if (ro)
                        rs->rois = ro;
                tg = realloc(rs->tgt, cap * 4 * sizeof(float));
                if (tg)
                        rs->tgt = tg;
                int32_t *lb = realloc(rs->labels, cap * sizeof(int32_t));
                if (lb)
                        rs->labels = lb;
                int64_t *mt = realloc(rs->matched, cap * sizeof(int64_t));
                if (mt)
                        rs->matched = mt;
                if (!ro || !tg || !lb || !mt) {
                        r = -ENOMEM;
                        goto out;
                }
                rs->cap = cap;
        }
        for (int64_t j = 0; j < np; j++) {
                if (!pos[j] && !neg[j])
                        continue;
                int64_t k = rs->n++;
                rs->rois[5 * k] = (float)i;
                memcpy(rs->rois + 5 * k + 1, props + 4 * j, 4 * sizeof(float));
                rs->labels[k] = pos[j] ? labels[j] : 0;
                rs->matched[k] = pos[j] ? matches[j] : -1;
                if (pos[j]) {
                        det_encode(c, &roi_coder, g->boxes + 4 * matches[j], props + 4 * j, 1, rs->tgt + 4 * k);
                        rs->npos++;
                } else {
                        memset(rs->tgt + 4 * k, 0, 4 * sizeof(float));
                }
        }
        r = 0;
out:
        free(matches);
        free(labels);
        free(pos);
        free(neg);
        return r;
}

/* ---- heads --------------------------------------------------------------------------------- */

static int box_head_fwd(struct bd_model *m, struct mrcnn_net *n)
{
        struct bd_backend *be = n->be;
        int r;
        int64_t R = n->rois.dims[0];
        if ((r = det_msroi_fwd(be, &n->box_roi, n->roi_maps, &n->rois, n->roi_levels, &n->box_feat)) < 0)
                return r;
        struct bd_tensor flat;
        int64_t d2[2] = { R, bd_tensor_numel(&n->box_feat) / (R ? R : 1) };
        if ((r = bd_tensor_reshape(&n->box_feat, 2, d2, &flat)) < 0)
                return r;
        if ((r = bd_fc_fwd(m, &n->fc6, &flat, &n->h6)) < 0 || (r = bd_op_relu(be, &n->h6, &n->h6)) < 0 ||
            (r = bd_fc_fwd(m, &n->fc7, &n->h6, &n->h7)) < 0 || (r = bd_op_relu(be, &n->h7, &n->h7)) < 0 ||
            (r = bd_fc_fwd(m, &n->cls, &n->h7, &n->cls_out)) < 0 || (r = bd_fc_fwd(m, &n->bbox, &n->h7, &n->box_out)) < 0)
                return r;
        return 0;
}

static int mask_head_fwd(struct bd_model *m, struct mrcnn_net *n)
{
        struct bd_backend *be = n->be;
        int r;
        if ((r = det_msroi_fwd(be, &n->mask_roi, n->roi_maps, &n->prois, n->mask_levels, &n->mask_feat)) < 0)
                return r;
        const struct bd_tensor *x = &n->mask_feat;
        for (int i = 0; i < n->cfg.mask_convs; i++) {
                if ((r = bd_conv_fwd(m, &n->mconv[i], x, &n->mh[i])) < 0 || (r = bd_op_relu(be, &n->mh[i], &n->mh[i])) < 0)
                        return r;
                x = &n->mh[i];
        }
        if ((r = bd_conv_fwd(m, &n->deconv, x, &n->mdc)) < 0 || (r = bd_op_relu(be, &n->mdc, &n->mdc)) < 0 ||
            (r = bd_conv_fwd(m, &n->mlogits, &n->mdc, &n->mlog)) < 0)
                return r;
        return 0;
}

/* the RoIs' pyramid levels on the host (NULL when there are none) */
static int roi_levels(struct mrcnn_net *n, const struct det_msroi *ms, const float *rois, int64_t R, int32_t **lv,
                      size_t *cap)
{
        if (grow(lv, cap, (size_t)(R ? R : 1), sizeof(int32_t)) < 0)
                return bd_err_set(&n->be->err, -ENOMEM, "out of memory");
        det_msroi_levels(ms, rois, R, *lv);
        return 0;
}

/* Mask targets (P, M, M) in the model's type into n->mask_tgt for the
 * positive RoIs of image i (rows [k0, k0 + P) of rs). */
static int mask_targets_image(struct mrcnn_net *n, const struct det_sample *s, const struct gt *g,
                              const struct roi_set *rs, int64_t k0, int64_t P, struct bd_tensor *out)
{
        struct bd_backend *be = n->be;
        float *boxes = malloc((size_t)(P ? P : 1) * 4 * sizeof(float));
        int64_t *matched = malloc((size_t)(P ? P : 1) * sizeof(int64_t));
        int r = -ENOMEM;
        if (!boxes || !matched)
                goto out;
        int64_t p = 0;
        for (int64_t k = k0; p < P; k++)
                if (rs->labels[k] > 0) {
                        memcpy(boxes + 4 * p, rs->rois + 5 * k + 1, 4 * sizeof(float));
                        matched[p++] = rs->matched[k];
                }
        int64_t d2[2] = { P, 4 };
        if ((r = from_host(n, boxes, BD_F32, 2, d2, &n->props_dev)) < 0)
                goto out;
        if (n->cfg.mask_rule == MRCNN_MASK_POLYGON) {
                r = det_op_mask_targets(be, g->masks, g->g, &n->props_dev, matched, MASK_M, out);
        } else {
                /* the ground truth as bitmasks of the (resized) image, then RoIAlign */
                int64_t H = s->height, W = s->width, G = g->g;
                size_t nbits = (size_t)(G ? G : 1) * (size_t)H * (size_t)W;
                int32_t *mi = malloc((size_t)(P ? P : 1) * sizeof(int32_t));
                if (!mi || GROW(n->w_bits, n->w_bits_cap, nbits) < 0) {
                        free(mi);
                        r = -ENOMEM;
                        goto out;
                }
                uint8_t *bits = n->w_bits;
                memset(bits, 0, nbits);
                for (int64_t j = 0; j < G; j++) {
                        struct rle rl = { 0 };
                        const struct det_gt_mask *gm = &g->masks[j];
                        if (gm->kind == DET_GT_MASK_POLYGONS) {
                                rle_from_polygons(&rl, &gm->poly, (uint32_t)H, (uint32_t)W);
                        } else if (gm->kind == DET_GT_MASK_RLE) {
                                rl.h = (uint32_t)H;
                                rl.w = (uint32_t)W;
                                rl.m = gm->rle.n;
                                rl.cnts = (uint32_t *)gm->rle.counts;
                        }
                        if (rl.m)
                                rle_decode_rows(&rl, bits + (size_t)j * (size_t)(H * W), (size_t)W);
                        if (gm->kind == DET_GT_MASK_POLYGONS)
                                rle_free(&rl);
                }
                for (int64_t q = 0; q < P; q++)
                        mi[q] = (int32_t)matched[q];
                uint8_t *dbits = bits;
                r = 0;
                if (be->dev != BD_CPU) {
                        size_t bytes = (size_t)(G ? G : 1) * (size_t)H * (size_t)W;
                        dbits = be->ops->alloc(be, bytes);
                        r = dbits ? be->ops->copy(be, dbits, be->dev, bits, BD_CPU, bytes) : -ENOMEM;
                }
                if (r >= 0)
                        r = i32_from_host(n, mi, P, &n->matched_dev);
                if (r >= 0)
                        r = det_roi_mask_targets(be, MASK_M, dbits, G, H, W, &n->props_dev, &n->matched_dev, out);
                if (dbits != bits && dbits)
                        be->ops->free(be, dbits);
                free(mi);
        }
out:
        free(boxes);
        free(matched);
        return r;
}

/* ---- the training step ----------------------------------------------------------------- */

int mrcnn_fwd_train(struct mrcnn_net *n, struct bd_model *m, const struct det_batch *b, const struct mrcnn_step *st,
                    struct mrcnn_losses *out, struct bd_err *err)
{
        struct bd_backend *be = n->be;
        const int N = b->n;
        int r;
        memset(out, 0, sizeof(*out));
        n->have_grads = 0;
        if (N < 1 || N > 64)
                return bd_err_set(err, -EINVAL, "%d images in a batch (1 to 64)", N);
        bd_model_begin_step(m);
        if ((r = features(m, n, b)) < 0)
                return BE_FAIL(n, err, r, "forward");

        struct gt gts[64];
        memset(gts, 0, sizeof(gts));
        struct roi_set rs = { 0 };
        int32_t *lab = NULL;
        float *tgt = NULL;
        const int64_t A = n->ac.off[MRCNN_LEVELS], M = (int64_t)N * A;
        for (int i = 0; i < N; i++)
                if (gt_of(&b->samples[i], &gts[i]) < 0) {
                        r = bd_err_set(err, -ENOMEM, "out of memory");
                        goto out;
                }

        /* RPN targets, image by image */
        if (GROW(n->rpn_lab_h, n->rpn_lab_cap, M ? M : 1) < 0 || GROW(n->rpn_tgt_h, n->rpn_tgt_cap, (M ? M : 1) * 4) < 0) {
                r = bd_err_set(err, -ENOMEM, "out of memory for the RPN targets of %lld anchors", (long long)M);
                goto out;
        }
        lab = n->rpn_lab_h;
        tgt = n->rpn_tgt_h;
        int64_t rpn_pos = 0, rpn_neg = 0;
        for (int i = 0; i < N; i++) {
                int64_t p, q;
                if ((r = rpn_targets(n, b, i, &gts[i], st, lab, tgt, &p, &q)) < 0) {
                        bd_err_set(err, r, "RPN targets of image %d: %s", i,
                                   r == -ENOMEM ? "out of memory" : "bad injected permutation or sizes");
                        goto out;
                }
                rpn_pos += p;
                rpn_neg += q;
        }

        /* proposals, the ground truth appended, RoI sampling */
        struct det_rpn_level lv[MRCNN_LEVELS];
        if ((r = rpn_levels(n, N, lv)) < 0 || (r = proposals(n, b, lv, 1)) < 0) {
                BE_FAIL(n, err, r, "proposals");
                goto out;
        }
        const int64_t post = rpn_params(n, 1).post_nms_top_n;
        int64_t tot = 0;
        for (int i = 0; i < N; i++)
                tot += n->count[i] + gts[i].g;
        if (GROW(n->dbg.props, n->dbg_props_cap, (tot ? tot : 1) * 4) < 0) {
                r = bd_err_set(err, -ENOMEM, "out of memory");
                goto out;
        }
        int64_t at = 0;
        int64_t img_first[65], img_pos[64];
        for (int i = 0; i < N; i++) {
                float *pp = n->dbg.props + 4 * at;
                memcpy(pp, n->props + (size_t)i * post * 4, (size_t)n->count[i] * 4 * sizeof(float));
                memcpy(pp + 4 * n->count[i], gts[i].boxes, (size_t)gts[i].g * 4 * sizeof(float));
                int64_t np = n->count[i] + gts[i].g;
                n->dbg.nprops[i] = np;
                img_first[i] = rs.n;
                int64_t before = rs.npos;
                if ((r = roi_targets(n, i, pp, np, &gts[i], st, &rs)) < 0) {
                        bd_err_set(err, r, "RoI targets of image %d: %s", i,
                                   r == -ENOMEM ? "out of memory" : "bad injected permutation or sizes");
                        goto out;
                }
                img_pos[i] = rs.npos - before;
                at += np;
        }
        img_first[N] = rs.n;

        /* normalisers over all ranks */
        double cnt[3] = { (double)(rpn_pos + rpn_neg), (double)rs.n, (double)rs.npos };
        double world = 1;
        if (st->dp && st->dp->size > 1) {
                if ((r = bd_dp_sum(st->dp, cnt, 3, err)) < 0)
                        goto out;
                world = st->dp->size;
        }
        out->rpn_pos = rpn_pos;
        out->rpn_neg = rpn_neg;
        out->roi_pos = rs.npos;
        out->roi_neg = rs.n - rs.npos;

        /* RPN loss */
        int64_t d2[2] = { M, 4 };
        struct bd_tensor *tgt_d = bd_scratch_get(&n->scratch, n->dt, BD_NCHW, 2, d2);
        if (!tgt_d) {
                r = BE_FAIL(n, err, -ENOMEM, "RPN targets");
                goto out;
        }
        double f = cnt[0] > 0 ? (double)(rpn_pos + rpn_neg) * world / cnt[0] : 0;
        if ((r = i32_from_host(n, lab, M, &n->rpn_lab)) >= 0 && (r = from_host(n, tgt, n->dt, 2, d2, tgt_d)) >= 0) {
                if (n->adt == n->dt) {
                        r = det_rpn_loss(be, &n->lws, &n->obj, &n->dlt, &n->rpn_lab, tgt_d, DET_BETA_RPN,
                                         st->gscale * f, &out->objectness, &out->rpn_box, &n->d_obj, &n->d_dlt);
                } else {
                        /* amp: the loss in the heads' type, its gradients back in half */
                        struct bd_tensor *o = bd_scratch_get(&n->scratch, n->dt, BD_NCHW, 1, &M);
                        struct bd_tensor *d = bd_scratch_get(&n->scratch, n->dt, BD_NCHW, 2, d2);
                        struct bd_tensor *go = bd_scratch_get(&n->scratch, n->dt, BD_NCHW, 1, &M);
                        struct bd_tensor *gd = bd_scratch_get(&n->scratch, n->dt, BD_NCHW, 2, d2);
                        r = o && d && go && gd ? 0 : -ENOMEM;
                        if (r >= 0 && (r = bd_op_cast(be, &n->obj, n->dt, 1.0, o)) >= 0 &&
                            (r = bd_op_cast(be, &n->dlt, n->dt, 1.0, d)) >= 0 &&
                            (r = det_rpn_loss(be, &n->lws, o, d, &n->rpn_lab, tgt_d, DET_BETA_RPN, st->gscale * f,
                                              &out->objectness, &out->rpn_box, go, gd)) >= 0 &&
                            (r = bd_op_cast(be, go, n->adt, 1.0, &n->d_obj)) >= 0)
                                r = bd_op_cast(be, gd, n->adt, 1.0, &n->d_dlt);
                        struct bd_tensor *ts[] = { o, d, go, gd };
                        for (int k = 0; k < 4; k++)
                                if (ts[k])
                                        bd_scratch_put(&n->scratch, ts[k]);
                }
        }
        bd_scratch_put(&n->scratch, tgt_d);
        if (r < 0) {
                BE_FAIL(n, err, r, "RPN loss");
                goto out;
        }
        out->objectness *= f;
        out->rpn_box *= f;

        /* box head and its loss */
        const int64_t R = rs.n;
        n->dbg.nrois = R;
        if (GROW(n->dbg.rois, n->dbg_rois_cap, (R ? R : 1) * 5) < 0 ||
            GROW(n->dbg.roi_labels, n->dbg_lab_cap, R ? R : 1) < 0) {
                r = bd_err_set(err, -ENOMEM, "out of memory");
                goto out;
        }
        memcpy(n->dbg.rois, rs.rois, (size_t)R * 5 * sizeof(float));
        memcpy(n->dbg.roi_labels, rs.labels, (size_t)R * sizeof(int32_t));
        int64_t r2[2] = { R, 5 }, t2[2] = { R, 4 };
        if ((r = from_host(n, rs.rois, n->dt, 2, r2, &n->rois)) < 0 ||
            (r = roi_levels(n, &n->box_roi, rs.rois, R, &n->roi_levels, &n->roi_levels_cap)) < 0 ||
            (r = box_head_fwd(m, n)) < 0 || (r = i32_from_host(n, rs.labels, R, &n->roi_lab)) < 0 ||
            (r = from_host(n, rs.tgt, n->dt, 2, t2, &n->roi_tgt)) < 0) {
                BE_FAIL(n, err, r, "box head");
                goto out;
        }
        f = cnt[1] > 0 ? (double)R * world / cnt[1] : 0;
        if ((r = det_fastrcnn_loss(be, &n->lws, &n->cls_out, &n->box_out, &n->roi_lab, &n->roi_tgt, n->cfg.box_beta,
                                   st->gscale * f, &out->classifier, &out->box_reg, &n->d_cls, &n->d_box)) < 0) {
                BE_FAIL(n, err, r, "box head loss");
                goto out;
        }
        out->classifier *= f;
        out->box_reg *= f;

        /* mask head on the positives and its loss */
        const int64_t P = rs.npos;
        n->have_mask = P > 0;
        if (P > 0) {
                float *pr = malloc((size_t)P * 5 * sizeof(float));
                int32_t *pl = malloc((size_t)P * sizeof(int32_t));
                if (!pr || !pl) {
                        free(pr);
                        free(pl);
                        r = bd_err_set(err, -ENOMEM, "out of memory");
                        goto out;
                }
                int64_t p = 0;
                for (int64_t k = 0; k < R; k++)
                        if (rs.labels[k] > 0) {
                                memcpy(pr + 5 * p, rs.rois + 5 * k, 5 * sizeof(float));
                                pl[p++] = rs.labels[k];
                        }
                int64_t p2[2] = { P, 5 };
                r = from_host(n, pr, n->dt, 2, p2, &n->prois);
                if (r >= 0)
                        r = roi_levels(n, &n->mask_roi, pr, P, &n->mask_levels, &n->mask_levels_cap);
                if (r >= 0)
                        r = i32_from_host(n, pl, P, &n->pos_lab);
                free(pr);
                free(pl);
                if (r < 0 || (r = mask_head_fwd(m, n)) < 0) {
                        BE_FAIL(n, err, r, "mask head");
                        goto out;
                }
                /* targets image by image into one (P, M, M) tensor */
                int64_t md[3] = { P, MASK_M, MASK_M };
                if ((r = bd_tensor_resize(be, &n->mask_f32, BD_F32, BD_NCHW, 3, md)) < 0) {
                        BE_FAIL(n, err, r, "mask targets");
                        goto out;
                }
                int64_t q = 0;
                for (int i = 0; i < N; i++) {
                        if (!img_pos[i])
                                continue;
                        int64_t d3[3] = { img_pos[i], MASK_M, MASK_M };
                        struct bd_tensor v = bd_tensor_view((char *)n->mask_f32.data +
                                                                    (size_t)q * MASK_M * MASK_M * sizeof(float),
                                                            n->mask_f32.dev, BD_F32, BD_NCHW, 3, d3);
                        if ((r = mask_targets_image(n, &b->samples[i], &gts[i], &rs, img_first[i], img_pos[i], &v)) < 0) {
                                BE_FAIL(n, err, r, "mask targets");
                                goto out;
                        }
                        q += img_pos[i];
                }
                const struct bd_tensor *mt = &n->mask_f32;
                if (n->dt != BD_F32) {
                        if ((r = bd_op_cast(be, &n->mask_f32, n->dt, 1.0, &n->mask_tgt)) < 0) {
                                BE_FAIL(n, err, r, "mask targets");
                                goto out;
                        }
                        mt = &n->mask_tgt;
                }
                f = cnt[2] > 0 ? (double)P * world / cnt[2] : 0;
                if ((r = det_mask_loss(be, &n->lws, &n->mlog, &n->pos_lab, mt, st->gscale * f, &out->mask,
                                       &n->d_mlog)) < 0) {
                        BE_FAIL(n, err, r, "mask loss");
                        goto out;
                }
                out->mask *= f;
        }
        out->total = out->objectness + out->rpn_box + out->classifier + out->box_reg + out->mask;
        n->have_grads = 1;
        r = 0;
out:
        for (int i = 0; i < N; i++)
                gt_free(&gts[i]);
        free(rs.rois);
        free(rs.tgt);
        free(rs.labels);
        free(rs.matched);
        return r;
}

/* ---- the backward ------------------------------------------------------------------------ */

static int relu_bwd_inplace(struct bd_backend *be, const struct bd_tensor *y, struct bd_tensor *dy)
{
        return bd_op_relu_bwd(be, y, dy, dy, 0);
}

int mrcnn_bwd(struct mrcnn_net *n, struct bd_model *m, struct bd_err *err)
{
        struct bd_backend *be = n->be;
        struct bd_scratch *sc = &n->scratch;
        int r = 0;
        if (!n->have_grads)
                return bd_err_set(err, -EINVAL, "mrcnn_bwd without a training forward");
        n->have_grads = 0;
        /* dP: the gradients of P2..P6; dH those the heads write (P2..P5:
         * the same tensors, or with amp float32 ones cast into dP after) */
        struct bd_tensor *dP[MRCNN_LEVELS] = { 0 }, *dH[MRCNN_ROI_LEVELS] = { 0 };
        const int amp = n->adt != n->dt;
        for (int l = 0; l < MRCNN_LEVELS; l++) {
                if (!(dP[l] = bd_scratch_get_like(sc, &n->P[l])))
                        goto oom;
                if ((!amp || l >= MRCNN_ROI_LEVELS) && (r = bd_op_fill(be, dP[l], 0)) < 0)
                        goto fail;
        }
        for (int l = 0; l < MRCNN_ROI_LEVELS; l++) {
                dH[l] = dP[l];
                if (amp && !(dH[l] = bd_scratch_get_like(sc, &n->P32[l])))
                        goto oom;
                if (amp && (r = bd_op_fill(be, dH[l], 0)) < 0)
                        goto fail;
        }

        /* mask head */
        if (n->have_mask) {
                struct bd_tensor *g = bd_scratch_get_like(sc, &n->mdc), *g2;
                if (!g)
                        goto oom;
                if ((r = bd_conv_bwd(m, &n->mlogits, &n->mdc, &n->d_mlog, g, 0)) < 0 ||
                    (r = relu_bwd_inplace(be, &n->mdc, g)) < 0)
                        goto fail;
                const struct bd_tensor *x = n->cfg.mask_convs ? &n->mh[n->cfg.mask_convs - 1] : &n->mask_feat;
                if (!(g2 = bd_scratch_get_like(sc, x)))
                        goto oom;
                if ((r = bd_conv_bwd(m, &n->deconv, x, g, g2, 0)) < 0)
                        goto fail;
                bd_scratch_put(sc, g);
                g = g2;
                for (int i = n->cfg.mask_convs - 1; i >= 0; i--) {
                        const struct bd_tensor *xi = i ? &n->mh[i - 1] : &n->mask_feat;
                        if ((r = relu_bwd_inplace(be, &n->mh[i], g)) < 0)
                                goto fail;
                        if (!(g2 = bd_scratch_get_like(sc, xi)))
                                goto oom;
                        if ((r = bd_conv_bwd(m, &n->mconv[i], xi, g, g2, 0)) < 0)
                                goto fail;
                        bd_scratch_put(sc, g);
                        g = g2;
                }
                if (g->layout != BD_NCHW) {
                        struct bd_tensor *pl = bd_scratch_get(sc, g->dtype, BD_NCHW, 4, g->dims);
                        if (!pl)
                                goto oom;
                        if ((r = bd_op_relayout(be, g, BD_NCHW, pl)) < 0)
                                goto fail;
                        bd_scratch_put(sc, g);
                        g = pl;
                }
                r = det_msroi_bwd(be, &n->mask_roi, g, &n->prois, n->mask_levels, dH, BD_ACC_DX);
                bd_scratch_put(sc, g);
                if (r < 0)
                        goto fail;
        }

        /* box head */
        {
                struct bd_tensor *g7 = bd_scratch_get_like(sc, &n->h7), *gb = bd_scratch_get_like(sc, &n->h7);
                struct bd_tensor *g6 = bd_scratch_get_like(sc, &n->h6);
                int64_t R = n->rois.dims[0];
                int64_t d2[2] = { R, bd_tensor_numel(&n->box_feat) / (R ? R : 1) };
                struct bd_tensor *gf = bd_scratch_get(sc, n->dt, BD_NCHW, 2, d2);
                if (!g7 || !gb || !g6 || !gf)
                        goto oom;
                struct bd_tensor flat;
                if ((r = bd_tensor_reshape(&n->box_feat, 2, d2, &flat)) < 0 ||
                    (r = bd_fc_bwd(m, &n->cls, &n->h7, &n->d_cls, g7)) < 0 ||
                    (r = bd_fc_bwd(m, &n->bbox, &n->h7, &n->d_box, gb)) < 0 ||
                    (r = bd_op_axpby(be, 1.0, gb, 1.0, g7)) < 0 || (r = relu_bwd_inplace(be, &n->h7, g7)) < 0 ||
                    (r = bd_fc_bwd(m, &n->fc7, &n->h6, g7, g6)) < 0 || (r = relu_bwd_inplace(be, &n->h6, g6)) < 0 ||
                    (r = bd_fc_bwd(m, &n->fc6, &flat, g6, gf)) < 0)
                        goto fail;
                struct bd_tensor g4;
                if ((r = bd_tensor_reshape(gf, 4, n->box_feat.dims, &g4)) < 0)
                        goto fail;
                if ((r = det_msroi_bwd(be, &n->box_roi, &g4, &n->rois, n->roi_levels, dH, BD_ACC_DX)) < 0)
                        goto fail;
                bd_scratch_put(sc, g7);
                bd_scratch_put(sc, gb);
                bd_scratch_put(sc, g6);
                bd_scratch_put(sc, gf);
        }
        for (int l = 0; amp && l < MRCNN_ROI_LEVELS; l++) {
                if ((r = bd_op_cast(be, dH[l], n->adt, 1.0, dP[l])) < 0)
                        goto fail;
                bd_scratch_put(sc, dH[l]);
        }

        /* RPN head, level by level */
        {
                const int64_t N = BD_N(&n->P[0]);
                size_t es = bd_dtype_size(n->adt);
                for (int l = 0; l < MRCNN_LEVELS; l++) {
                        int64_t off = N * n->ac.off[l];
                        struct bd_tensor vo = bd_tensor_view((char *)n->d_obj.data + (size_t)off * es, n->d_obj.dev,
                                                             n->adt, BD_NHWC, 4, n->ro[l].dims);
                        struct bd_tensor vd = bd_tensor_view((char *)n->d_dlt.data + (size_t)off * 4 * es,
                                                             n->d_dlt.dev, n->adt, BD_NHWC, 4, n->rd[l].dims);
                        struct bd_tensor *go = bd_scratch_get_like(sc, &n->ro[l]), *gd = bd_scratch_get_like(sc, &n->rd[l]);
                        struct bd_tensor *gh = bd_scratch_get_like(sc, &n->rh[l]);
                        if (!go || !gd || !gh)
                                goto oom;
                        if ((r = bd_op_relayout(be, &vo, n->ro[l].layout, go)) < 0 ||
                            (r = bd_op_relayout(be, &vd, n->rd[l].layout, gd)) < 0 ||
                            (r = bd_conv_bwd(m, &n->rpn_cls, &n->rh[l], go, gh, 0)) < 0 ||
                            (r = bd_conv_bwd(m, &n->rpn_box, &n->rh[l], gd, gh, 1)) < 0 ||
                            (r = relu_bwd_inplace(be, &n->rh[l], gh)) < 0 ||
                            (r = bd_conv_bwd(m, &n->rpn_conv, &n->P[l], gh, dP[l], 1)) < 0)
                                goto fail;
                        bd_scratch_put(sc, go);
                        bd_scratch_put(sc, gd);
                        bd_scratch_put(sc, gh);
                }
        }

        /* FPN: P6 into P5, then top-down in reverse */
        {
                struct bd_tensor *g = bd_scratch_get_like(sc, &n->P[3]);
                if (!g)
                        goto oom;
                if ((r = bd_pool_bwd(m, &n->p6, &n->P[3], &n->P[4], dP[4], g)) < 0 ||
                    (r = bd_op_axpby(be, 1.0, g, 1.0, dP[3])) < 0)
                        goto fail;
                bd_scratch_put(sc, g);
                struct bd_tensor *din[4] = { 0 }, *dC[4] = { 0 };
                const struct bd_tensor *C[4];
                for (int i = 0; i < 4; i++) {
                        C[i] = bd_resnet_stage(&n->body, i + 1);
                        if (!(din[i] = bd_scratch_get_like(sc, &n->inner_t[i])))
                                goto oom;
                        if (n->need_c[i] && !(dC[i] = bd_scratch_get_like(sc, C[i])))
                                goto oom;
                }
                for (int i = 0; i < 4; i++) {
                        /* din[i] = up_bwd(din[i - 1]) + outer_bwd(dP[i]) */
                        int acc = 0;
                        if (i > 0) {
                                struct bd_tensor *gi = din[i - 1];
                                if (gi->layout != n->up[i - 1].layout) {
                                        struct bd_tensor *t = bd_scratch_get_like(sc, &n->up[i - 1]);
                                        if (!t)
                                                goto oom;
                                        r = bd_op_relayout(be, gi, t->layout, t);
                                        if (r >= 0)
                                                r = bd_op_upsample2x_bwd(be, t, din[i]);
                                        bd_scratch_put(sc, t);
                                } else {
                                        r = bd_op_upsample2x_bwd(be, gi, din[i]);
                                }
                                if (r < 0)
                                        goto fail;
                                acc = 1;
                        }
                        if ((r = bd_conv_bwd(m, &n->outer[i], &n->inner_t[i], dP[i], din[i], acc)) < 0)
                                goto fail;
                }
                for (int i = 0; i < 4; i++)
                        if ((r = bd_conv_bwd(m, &n->inner[i], C[i], din[i], dC[i], 0)) < 0)
                                goto fail;
                const struct bd_tensor *ds[4];
                for (int i = 0; i < 4; i++)
                        ds[i] = dC[i];
                if ((r = bd_resnet_bwd(m, &n->body, ds, NULL)) < 0)
                        goto fail;
                for (int i = 0; i < 4; i++) {
                        bd_scratch_put(sc, din[i]);
                        if (dC[i])
                                bd_scratch_put(sc, dC[i]);
                }
        }
        for (int l = 0; l < MRCNN_LEVELS; l++)
                bd_scratch_put(sc, dP[l]);
        return 0;
oom:
        r = -ENOMEM;
fail:
        return BE_FAIL(n, err, r, "backward");
}

/* ---- inference ------------------------------------------------------------------------------ */

int mrcnn_detect(struct mrcnn_net *n, struct bd_model *m, const struct det_batch *b, struct mrcnn_dets *out,
                 struct bd_err *err)
{
        struct bd_backend *be = n->be;
        const int N = b->n;
        int training = m->training, r;
        memset(out, 0, (size_t)N * sizeof(*out));
        m->training = 0;
        n->have_grads = 0;
        bd_model_begin_step(m);
        struct det_rpn_level lv[MRCNN_LEVELS];
        float *rois = NULL, *img = NULL, *probs = NULL, *pr = NULL;
        int32_t *pl = NULL;
        if ((r = features(m, n, b)) < 0 || (r = rpn_levels(n, N, lv)) < 0 || (r = proposals(n, b, lv, 0)) < 0) {
                BE_FAIL(n, err, r, "inference");
                goto out;
        }
        const int64_t post = rpn_params(n, 0).post_nms_top_n, K = n->K;
        int64_t R = 0;
        for (int i = 0; i < N; i++)
                R += n->count[i];
        rois = malloc((size_t)(R ? R : 1) * 5 * sizeof(float));
        if (!rois) {
                r = bd_err_set(err, -ENOMEM, "out of memory");
                goto out;
        }
        int64_t at = 0, first[65];
        for (int i = 0; i < N; i++) {
                first[i] = at;
                for (int64_t j = 0; j < n->count[i]; j++, at++) {
                        rois[5 * at] = (float)i;
                        memcpy(rois + 5 * at + 1, n->props + ((size_t)i * post + j) * 4, 4 * sizeof(float));
                }
        }
        first[N] = at;
        int64_t r2[2] = { R, 5 };
        if ((r = from_host(n, rois, n->dt, 2, r2, &n->rois)) < 0 ||
            (r = roi_levels(n, &n->box_roi, rois, R, &n->roi_levels, &n->roi_levels_cap)) < 0 ||
            (r = box_head_fwd(m, n)) < 0) {
                BE_FAIL(n, err, r, "box head");
                goto out;
        }
        /* the box head's outputs as float32 on the device, per image */
        struct bd_tensor *c32 = &n->cls_out, *b32 = &n->box_out;
        if (n->dt != BD_F32) {
                if (!(c32 = bd_scratch_get(&n->scratch, BD_F32, BD_NCHW, 2, n->cls_out.dims)) ||
                    !(b32 = bd_scratch_get(&n->scratch, BD_F32, BD_NCHW, 2, n->box_out.dims)) ||
                    (r = bd_op_cast(be, &n->cls_out, BD_F32, 1.0, c32)) < 0 ||
                    (r = bd_op_cast(be, &n->box_out, BD_F32, 1.0, b32)) < 0) {
                        BE_FAIL(n, err, r < 0 ? r : -ENOMEM, "box head");
                        goto out;
                }
        }
        struct det_dets dets[64];
        memset(dets, 0, sizeof(dets));
        int64_t ndet = 0;
        for (int i = 0; i < N && r >= 0; i++) {
                int64_t ni = first[i + 1] - first[i];
                int64_t dl[2] = { ni, K }, db[2] = { ni, 4 * K }, dp[2] = { ni, 4 };
                size_t es = sizeof(float);
                struct bd_tensor vl = bd_tensor_view((char *)c32->data + (size_t)first[i] * K * es, c32->dev, BD_F32,
                                                     BD_NCHW, 2, dl);
                struct bd_tensor vb = bd_tensor_view((char *)b32->data + (size_t)first[i] * 4 * K * es, b32->dev,
                                                     BD_F32, BD_NCHW, 2, db);
                if ((r = from_host(n, n->props + (size_t)i * post * 4, BD_F32, 2, dp, &n->props_dev)) < 0 ||
                    (r = det_op_postprocess(be, &n->cfg.conv, &n->cfg.post, &vl, &vb, &n->props_dev,
                                            b->samples[i].height, b->samples[i].width, &dets[i])) < 0)
                        BE_FAIL(n, err, r, "postprocess");
                ndet += dets[i].n;
        }
        if (n->dt != BD_F32) {
                bd_scratch_put(&n->scratch, c32);
                bd_scratch_put(&n->scratch, b32);
        }
        /* masks of the detections */
        if (r >= 0 && ndet > 0) {
                pr = malloc((size_t)ndet * 5 * sizeof(float));
                pl = malloc((size_t)ndet * sizeof(int32_t));
                if (!pr || !pl)
                        r = bd_err_set(err, -ENOMEM, "out of memory");
                int64_t q = 0;
                for (int i = 0; i < N && r >= 0; i++)
                        for (int64_t j = 0; j < dets[i].n; j++, q++) {
                                pr[5 * q] = (float)i;
                                memcpy(pr + 5 * q + 1, dets[i].boxes + 4 * j, 4 * sizeof(float));
                                pl[q] = dets[i].labels[j];
                        }
                int64_t p2[2] = { ndet, 5 };
                if (r >= 0 && ((r = from_host(n, pr, n->dt, 2, p2, &n->prois)) < 0 ||
                               (r = roi_levels(n, &n->mask_roi, pr, ndet, &n->mask_levels, &n->mask_levels_cap)) < 0 ||
                               (r = mask_head_fwd(m, n)) < 0))
                        BE_FAIL(n, err, r, "mask head");
        }
        const float *logits = NULL;
        float *lbuf = NULL;
        size_t lcap = 0;
        if (r >= 0 && ndet > 0) {
                struct bd_tensor *pl4 = &n->mlog;
                if (n->mlog.layout != BD_NCHW) {
                        if (!(pl4 = bd_scratch_get(&n->scratch, n->mlog.dtype, BD_NCHW, 4, n->mlog.dims)) ||
                            (r = bd_op_relayout(be, &n->mlog, BD_NCHW, pl4)) < 0)
                                BE_FAIL(n, err, r < 0 ? r : -ENOMEM, "mask head");
                }
                if (r >= 0 && (r = to_host(n, pl4, &lbuf, &lcap, &logits)) < 0)
                        BE_FAIL(n, err, r, "mask head");
                if (pl4 != &n->mlog)
                        bd_scratch_put(&n->scratch, pl4);
        }
        if (r >= 0 && ndet > 0) {
                probs = malloc((size_t)ndet * MASK_M * MASK_M * sizeof(float));
                if (!probs || det_mask_probs(logits, pl, ndet, (int)K, MASK_M, probs) < 0)
                        r = bd_err_set(err, -ENOMEM, "out of memory");
        }
        int64_t q = 0;
        for (int i = 0; i < N && r >= 0; i++) {
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
                if (!o->boxes || !o->scores || !o->labels || !o->masks || !im2) {
                        r = bd_err_set(err, -ENOMEM, "out of memory");
                        break;
                }
                img = im2;
                memcpy(o->boxes, dets[i].boxes, (size_t)nd * 4 * sizeof(float));
                memcpy(o->scores, dets[i].scores, (size_t)nd * sizeof(float));
                memcpy(o->labels, dets[i].labels, (size_t)nd * sizeof(int32_t));
                det_resize_boxes(&n->cfg.conv, o->boxes, nd, s->height, s->width, s->orig_height, s->orig_width);
                for (int64_t j = 0; j < nd; j++, q++) {
                        if ((r = det_paste_masks(probs + (size_t)q * MASK_M * MASK_M, o->boxes + 4 * j, 1, MASK_M,
                                                 s->orig_height, s->orig_width, img)) < 0 ||
                            (r = det_mask_rle(img, s->orig_height, s->orig_width, 0.5f, &o->masks[j])) < 0) {
                                bd_err_set(err, r, "pasting mask %lld of image %lld", (long long)j,
                                           (long long)s->image_id);
                                break;
                        }
                }
        }
        free(lbuf);
        for (int i = 0; i < N; i++)
                det_dets_release(&dets[i]);
        if (r < 0)
                for (int i = 0; i < N; i++)
                        mrcnn_dets_release(&out[i]);
out:
        free(rois);
        free(img);
        free(probs);
        free(pr);
        free(pl);
        m->training = training;
        return r < 0 ? r : 0;
}

void mrcnn_debug_get(const struct mrcnn_net *n, struct mrcnn_debug *ret)
{
        memset(ret, 0, sizeof(*ret));
        memcpy(ret->nprops, n->dbg.nprops, sizeof(ret->nprops));
        ret->props = n->dbg.props;
        ret->nrois = n->dbg.nrois;
        ret->rois = n->dbg.rois;
        ret->roi_labels = n->dbg.roi_labels;
}

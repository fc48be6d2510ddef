/* mrcnn-fpn.c: the backbone and the FPN of the Mask R-CNN network (C2..C5,
 * P2..P6), forward and backward (mrcnn-net.h explains the model). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mrcnn-stages.h"

static int round8(double v)
{
        int r = (int)lround(v / 8) * 8;
        return r < 8 ? 8 : r;
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

int mrcnn_fpn_init(struct bd_model *m, struct mrcnn_net *n, struct bd_err *err)
{
        const struct mrcnn_cfg *cfg = &n->cfg;
        struct mrcnn_fpn *f = &n->fpn;
        for (int l = 0; l < MRCNN_ROI_LEVELS; l++)
                f->roi_maps[l] = n->adt != n->dt ? &f->P32[l] : &f->P[l];
        struct bd_resnet_cfg rc = { .depth = cfg->depth, .stages = 4, .freeze_at = cfg->freeze_at,
                                    .bn = cfg->frozen_bn ? BD_BN_FROZEN : BD_BN_TRAIN,
                                    .stride_in_1x1 = cfg->stride_in_1x1, .width = round8(64 * cfg->width_mult) };
        int r;
        if ((r = bd_resnet_init(&f->body, m, "backbone.body.", &rc)) < 0)
                goto fail;
        if (cfg->frozen_bn)
                set_bn_eps(&f->body, cfg->frozen_bn_eps);
        for (int k = 1; k <= 4; k++)
                f->need_c[k - 1] = cfg->freeze_at <= k;
        const int64_t F = cfg->fpn_channels;
        char name[BD_NAME_MAX];
        for (int i = 0; i < 4; i++) {
                snprintf(name, sizeof(name), "backbone.fpn.inner_blocks.%d.0", i);
                if ((r = mrcnn_conv_layer(m, &f->inner[i], name, f->body.channels[i], F, 1, 1, 0, 0,
                                          BD_INIT_KAIMING_UNIFORM_A1, 0)) < 0)
                        goto fail;
                snprintf(name, sizeof(name), "backbone.fpn.layer_blocks.%d.0", i);
                if ((r = mrcnn_conv_layer(m, &f->outer[i], name, F, F, 3, 1, 1, 0, BD_INIT_KAIMING_UNIFORM_A1, 0)) <
                    0)
                        goto fail;
        }
        bd_pool_init(&f->p6, m, 1, 2, 0);
        return 0;
fail:
        return bd_err_set(err, r, "%s", m->be->err.msg);
}

void mrcnn_fpn_release(struct mrcnn_fpn *f)
{
        bd_resnet_release(&f->body);
        bd_pool_release(&f->p6);
        bd_tensor_release(&f->x);
        for (int i = 0; i < 4; i++) {
                bd_tensor_release(&f->lat[i]);
                bd_tensor_release(&f->P32[i]);
                bd_tensor_release(&f->inner_t[i]);
                if (i < 3)
                        bd_tensor_release(&f->up[i]);
        }
        for (int l = 0; l < MRCNN_LEVELS; l++)
                bd_tensor_release(&f->P[l]);
}

/* ---- forward ---- */

/* the batch's images in the backbone's type on the device */
static int input(struct mrcnn_net *n, const struct det_batch *b)
{
        struct mrcnn_fpn *f = &n->fpn;
        int64_t dims[4] = { b->n, 3, b->height, b->width };
        struct bd_tensor v = bd_tensor_view(b->images, BD_CPU, BD_F32, BD_NCHW, 4, dims);
        struct bd_backend *be = n->be;
        if (be->dev == BD_CPU && n->adt == BD_F32) {
                f->x = v;       /* a view: released as one (cap 0) */
                return 0;
        }
        if (f->x.cap == 0)
                memset(&f->x, 0, sizeof(f->x));
        if (be->dev == BD_CPU)
                return bd_op_cast(be, &v, n->adt, 1.0, &f->x);
        int r = bd_tensor_resize(be, &f->x, BD_F32, BD_NCHW, 4, dims);
        if (r >= 0)
                r = be->ops->copy(be, f->x.data, f->x.dev, b->images, BD_CPU, bd_tensor_bytes(&f->x));
        if (r >= 0 && n->adt != BD_F32) {
                struct bd_tensor *h = bd_scratch_get(&n->scratch, BD_F32, BD_NCHW, 4, dims),
                                 *c = bd_scratch_get(&n->scratch, n->adt, BD_NCHW, 4, dims);
                if (!h || !c)
                        r = -ENOMEM;
                if (r >= 0)
                        r = bd_op_copy(be, &f->x, h);
                if (r >= 0)
                        r = bd_op_cast_input(be, h, n->adt, c, &f->x);
                if (h)
                        bd_scratch_put(&n->scratch, h);
                if (c)
                        bd_scratch_put(&n->scratch, c);
        }
        return r;
}

/* top-down: inner_t[3] = lat(C5); inner_t[i] = lat(C_i) + up(inner_t[i + 1]);
 * P_i = outer(inner_t[i]); P6 = P5 subsampled */
static int fpn_fwd(struct bd_model *m, struct mrcnn_net *n)
{
        struct bd_backend *be = n->be;
        struct mrcnn_fpn *f = &n->fpn;
        int r;
        const struct bd_tensor *C[4];
        for (int i = 0; i < 4; i++)
                C[i] = bd_resnet_stage(&f->body, i + 1);
        if ((r = bd_conv_fwd(m, &f->inner[3], C[3], &f->inner_t[3])) < 0)
                return r;
        for (int i = 2; i >= 0; i--) {
                if ((r = bd_conv_fwd(m, &f->inner[i], C[i], &f->lat[i])) < 0 ||
                    (r = bd_op_upsample2x(be, &f->inner_t[i + 1], &f->up[i])) < 0)
                        return r;
                if (!bd_tensor_same_shape(&f->up[i], &f->lat[i]))
                        return bd_err_set(&be->err, -EINVAL, "FPN: level %d is not twice level %d (image size not a "
                                          "multiple of 32)", i + 2, i + 3);
                if (f->up[i].layout != f->lat[i].layout) {
                        struct bd_tensor *t = bd_scratch_get_like(&n->scratch, &f->lat[i]);
                        if (!t)
                                return -ENOMEM;
                        r = bd_op_relayout(be, &f->up[i], f->lat[i].layout, t);
                        if (r >= 0)
                                r = bd_op_add(be, &f->lat[i], t, &f->inner_t[i], 0);
                        bd_scratch_put(&n->scratch, t);
                } else {
                        r = bd_op_add(be, &f->lat[i], &f->up[i], &f->inner_t[i], 0);
                }
                if (r < 0)
                        return r;
        }
        for (int i = 0; i < 4; i++)
                if ((r = bd_conv_fwd(m, &f->outer[i], &f->inner_t[i], &f->P[i])) < 0)
                        return r;
        return bd_pool_fwd(m, &f->p6, &f->P[3], &f->P[4]);
}

int mrcnn_fpn_fwd(struct bd_model *m, struct mrcnn_net *n, const struct det_batch *b)
{
        int r;
        if ((r = input(n, b)) < 0 || (r = bd_resnet_fwd(m, &n->fpn.body, &n->fpn.x)) < 0)
                return r;
        return fpn_fwd(m, n);
}

int mrcnn_fpn_roi_maps(struct mrcnn_net *n)
{
        int r;
        for (int l = 0; n->adt != n->dt && l < MRCNN_ROI_LEVELS; l++)
                if ((r = bd_op_cast(n->be, &n->fpn.P[l], n->dt, 1.0, &n->fpn.P32[l])) < 0)
                        return r;
        return 0;
}

/* ---- backward ---- */

int mrcnn_fpn_grads(struct mrcnn_net *n, struct bd_tensor *dP[MRCNN_LEVELS], struct bd_tensor *dH[MRCNN_ROI_LEVELS])
{
        struct bd_backend *be = n->be;
        struct bd_scratch *sc = &n->scratch;
        const int amp = n->adt != n->dt;
        int r;
        for (int l = 0; l < MRCNN_LEVELS; l++) {
                if (!(dP[l] = bd_scratch_get_like(sc, &n->fpn.P[l])))
                        return -ENOMEM;
                if ((!amp || l >= MRCNN_ROI_LEVELS) && (r = bd_op_fill(be, dP[l], 0)) < 0)
                        return r;
        }
        for (int l = 0; l < MRCNN_ROI_LEVELS; l++) {
                dH[l] = dP[l];
                if (amp && !(dH[l] = bd_scratch_get_like(sc, &n->fpn.P32[l])))
                        return -ENOMEM;
                if (amp && (r = bd_op_fill(be, dH[l], 0)) < 0)
                        return r;
        }
        return 0;
}

int mrcnn_fpn_heads_grads(struct mrcnn_net *n, struct bd_tensor *dH[MRCNN_ROI_LEVELS],
                          struct bd_tensor *dP[MRCNN_LEVELS])
{
        int r;
        for (int l = 0; n->adt != n->dt && l < MRCNN_ROI_LEVELS; l++) {
                if ((r = bd_op_cast(n->be, dH[l], n->adt, 1.0, dP[l])) < 0)
                        return r;
                bd_scratch_put(&n->scratch, dH[l]);
        }
        return 0;
}

/* din[i] = up_bwd(din[i - 1]) + outer_bwd(dP[i]), from the finest level */
static int topdown_bwd(struct bd_model *m, struct mrcnn_net *n, struct bd_tensor *dP[MRCNN_LEVELS],
                       struct bd_tensor *din[4])
{
        struct bd_backend *be = n->be;
        struct bd_scratch *sc = &n->scratch;
        struct mrcnn_fpn *f = &n->fpn;
        int r;
        for (int i = 0; i < 4; i++) {
                int acc = 0;
                if (i > 0) {
                        struct bd_tensor *gi = din[i - 1];
                        if (gi->layout != f->up[i - 1].layout) {
                                struct bd_tensor *t = bd_scratch_get_like(sc, &f->up[i - 1]);
                                if (!t)
                                        return -ENOMEM;
                                r = bd_op_relayout(be, gi, t->layout, t);
                                if (r >= 0)
                                        r = bd_op_upsample2x_bwd(be, t, din[i]);
                                bd_scratch_put(sc, t);
                        } else {
                                r = bd_op_upsample2x_bwd(be, gi, din[i]);
                        }
                        if (r < 0)
                                return r;
                        acc = 1;
                }
                if ((r = bd_conv_bwd(m, &f->outer[i], &f->inner_t[i], dP[i], din[i], acc)) < 0)
                        return r;
        }
        return 0;
}

/* P6 into P5, the top-down path in reverse, the laterals, the backbone */
int mrcnn_fpn_bwd(struct bd_model *m, struct mrcnn_net *n, struct bd_tensor *dP[MRCNN_LEVELS])
{
        struct bd_backend *be = n->be;
        struct bd_scratch *sc = &n->scratch;
        struct mrcnn_fpn *f = &n->fpn;
        int r;
        struct bd_tensor *g = bd_scratch_get_like(sc, &f->P[3]);
        if (!g)
                return -ENOMEM;
        if ((r = bd_pool_bwd(m, &f->p6, &f->P[3], &f->P[4], dP[4], g)) < 0 ||
            (r = bd_op_axpby(be, 1.0, g, 1.0, dP[3])) < 0)
                return r;
        bd_scratch_put(sc, g);
        struct bd_tensor *din[4] = { 0 }, *dC[4] = { 0 };
        const struct bd_tensor *C[4];
        for (int i = 0; i < 4; i++) {
                C[i] = bd_resnet_stage(&f->body, i + 1);
                if (!(din[i] = bd_scratch_get_like(sc, &f->inner_t[i])))
                        return -ENOMEM;
                if (f->need_c[i] && !(dC[i] = bd_scratch_get_like(sc, C[i])))
                        return -ENOMEM;
        }
        if ((r = topdown_bwd(m, n, dP, din)) < 0)
                return r;
        for (int i = 0; i < 4; i++)
                if ((r = bd_conv_bwd(m, &f->inner[i], C[i], din[i], dC[i], 0)) < 0)
                        return r;
        const struct bd_tensor *ds[4];
        for (int i = 0; i < 4; i++)
                ds[i] = dC[i];
        if ((r = bd_resnet_bwd(m, &f->body, ds, NULL)) < 0)
                return r;
        for (int i = 0; i < 4; i++) {
                bd_scratch_put(sc, din[i]);
                if (dC[i])
                        bd_scratch_put(sc, dC[i]);
        }
        return 0;
}

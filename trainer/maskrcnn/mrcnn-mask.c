/* mrcnn-mask.c: the mask head of the Mask R-CNN network: targets, the head
 * and its loss, forward and backward, and the masks of detections
 * (mrcnn-net.h explains the model). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "mask.h"
#include "masks.h"
#include "mrcnn-stages.h"

#define MASK_M 28               /* mask resolution (the deconv doubles the 14x14 RoI features) */
#define MASK_POOL 14

int mrcnn_mask_init(struct bd_model *m, struct mrcnn_net *n, struct bd_err *err)
{
        const struct mrcnn_cfg *cfg = &n->cfg;
        struct mrcnn_mask *h = &n->mask;
        const double scales[MRCNN_ROI_LEVELS] = { 0.25, 0.125, 0.0625, 0.03125 };
        int r;
        if ((r = det_msroi_init(&h->roi, &cfg->conv, MRCNN_ROI_LEVELS, scales, MASK_POOL, 2, err)) < 0)
                return r;
        int64_t cin = cfg->fpn_channels;
        char name[BD_NAME_MAX];
        for (int i = 0; i < cfg->mask_convs; i++) {
                snprintf(name, sizeof(name), "roi_heads.mask_head.%d.0", i);
                if ((r = mrcnn_conv_layer(m, &h->conv[i], name, cin, cfg->mask_dim, 3, 1, 1, 0,
                                          BD_INIT_KAIMING_NORMAL_OUT, 0)) < 0)
                        goto fail;
                cin = cfg->mask_dim;
        }
        if ((r = mrcnn_conv_layer(m, &h->deconv, "roi_heads.mask_predictor.conv5_mask", cin, cfg->mask_dim, 2, 2, 0, 1,
                                  BD_INIT_KAIMING_NORMAL_OUT, 0)) < 0 ||
            (r = mrcnn_conv_layer(m, &h->logits, "roi_heads.mask_predictor.mask_fcn_logits", cfg->mask_dim,
                                  cfg->num_classes, 1, 1, 0, 0, BD_INIT_KAIMING_NORMAL_OUT, 0)) < 0)
                goto fail;
        return 0;
fail:
        return bd_err_set(err, r, "%s", m->be->err.msg);
}

void mrcnn_mask_release(struct mrcnn_mask *h)
{
        struct bd_tensor *ts[] = { &h->rois, &h->feat, &h->dc, &h->log, &h->lab, &h->tgt, &h->tgt_f32, &h->matched,
                                   &h->d_log };
        for (size_t i = 0; i < ARRAY_SIZE(ts); i++)
                bd_tensor_release(ts[i]);
        for (int i = 0; i < MRCNN_MAX_MASK_CONVS; i++)
                bd_tensor_release(&h->h[i]);
        free(h->levels);
        free(h->bits);
}

/* ---- the head ---- */

/* P RoIs (P, 5) given on the host to the device, with their levels */
static int head_rois(struct mrcnn_net *n, const float *rois, int64_t P)
{
        struct mrcnn_mask *h = &n->mask;
        int64_t p2[2] = { P, 5 };
        int r = mrcnn_from_host(n, rois, n->dt, 2, p2, &h->rois);
        if (r >= 0)
                r = mrcnn_roi_levels(n, &h->roi, rois, P, &h->levels, &h->levels_cap);
        return r;
}

static int head_fwd(struct bd_model *m, struct mrcnn_net *n)
{
        struct bd_backend *be = n->be;
        struct mrcnn_mask *h = &n->mask;
        int r;
        if ((r = det_msroi_fwd(be, &h->roi, n->fpn.roi_maps, &h->rois, h->levels, &h->feat)) < 0)
                return r;
        const struct bd_tensor *x = &h->feat;
        for (int i = 0; i < n->cfg.mask_convs; i++) {
                if ((r = bd_conv_fwd(m, &h->conv[i], x, &h->h[i])) < 0 || (r = bd_op_relu(be, &h->h[i], &h->h[i])) < 0)
                        return r;
                x = &h->h[i];
        }
        if ((r = bd_conv_fwd(m, &h->deconv, x, &h->dc)) < 0 || (r = bd_op_relu(be, &h->dc, &h->dc)) < 0 ||
            (r = bd_conv_fwd(m, &h->logits, &h->dc, &h->log)) < 0)
                return r;
        return 0;
}

/* the positive RoIs of the sampled ones (in their order) and their labels
 * to the device, then the head */
static int train_fwd(struct bd_model *m, struct mrcnn_net *n, const struct mrcnn_rois *rs, struct bd_err *err)
{
        const int64_t P = rs->npos;
        float *pr = malloc((size_t)P * 5 * sizeof(float));
        int32_t *pl = malloc((size_t)P * sizeof(int32_t));
        if (!pr || !pl) {
                free(pr);
                free(pl);
                return bd_err_set(err, -ENOMEM, "out of memory");
        }
        int64_t p = 0;
        for (int64_t k = 0; k < rs->n; k++)
                if (rs->labels[k] > 0) {
                        memcpy(pr + 5 * p, rs->rois + 5 * k, 5 * sizeof(float));
                        pl[p++] = rs->labels[k];
                }
        int r = head_rois(n, pr, P);
        if (r >= 0)
                r = mrcnn_i32_from_host(n, pl, P, &n->mask.lab);
        free(pr);
        free(pl);
        if (r < 0 || (r = head_fwd(m, n)) < 0)
                return BE_FAIL(n, err, r, "mask head");
        return 0;
}

/* ---- targets ---- */

/* the ground truth of image s as bitmasks of the (resized) image, then
 * RoIAlign of the matched one at each box */
static int roialign_targets(struct mrcnn_net *n, const struct det_sample *s, const struct mrcnn_gt *g,
                            const int64_t *matched, int64_t P, struct bd_tensor *out)
{
        struct bd_backend *be = n->be;
        struct mrcnn_mask *h = &n->mask;
        int64_t H = s->height, W = s->width, G = g->g;
        size_t nbits = (size_t)(G ? G : 1) * (size_t)H * (size_t)W;
        int32_t *mi = malloc((size_t)(P ? P : 1) * sizeof(int32_t));
        if (!mi || GROW(h->bits, h->bits_cap, nbits) < 0) {
                free(mi);
                return -ENOMEM;
        }
        uint8_t *bits = h->bits;
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
        int r = 0;
        if (be->dev != BD_CPU) {
                size_t bytes = (size_t)(G ? G : 1) * (size_t)H * (size_t)W;
                dbits = be->ops->alloc(be, bytes);
                r = dbits ? be->ops->copy(be, dbits, be->dev, bits, BD_CPU, bytes) : -ENOMEM;
        }
        if (r >= 0)
                r = mrcnn_i32_from_host(n, mi, P, &h->matched);
        if (r >= 0)
                r = det_roi_mask_targets(be, MASK_M, dbits, G, H, W, &n->props_dev, &h->matched, out);
        if (dbits != bits && dbits)
                be->ops->free(be, dbits);
        free(mi);
        return r;
}

/* the boxes and matched objects (shifted by g0) of the P positive RoIs
 * from row k0 of rs, into boxes (P, 4) and matched (P) */
static void positives(const struct mrcnn_rois *rs, int64_t k0, int64_t P, int64_t g0, float *boxes, int64_t *matched)
{
        for (int64_t k = k0, p = 0; p < P; k++)
                if (rs->labels[k] > 0) {
                        memcpy(boxes + 4 * p, rs->rois + 5 * k + 1, 4 * sizeof(float));
                        matched[p++] = g0 + rs->matched[k];
                }
}

/* The RoIAlign rule's mask targets (P, M, M) of float32 into out for the
 * positive RoIs of image i (rows [k0, k0 + P) of rs). */
static int image_targets(struct mrcnn_net *n, const struct det_sample *s, const struct mrcnn_gt *g,
                         const struct mrcnn_rois *rs, int64_t k0, int64_t P, struct bd_tensor *out)
{
        float *boxes = malloc((size_t)(P ? P : 1) * 4 * sizeof(float));
        int64_t *matched = malloc((size_t)(P ? P : 1) * sizeof(int64_t));
        int r = -ENOMEM;
        if (!boxes || !matched)
                goto out;
        positives(rs, k0, P, 0, boxes, matched);
        int64_t d2[2] = { P, 4 };
        if ((r = mrcnn_from_host(n, boxes, BD_F32, 2, d2, &n->props_dev)) < 0)
                goto out;
        r = roialign_targets(n, s, g, matched, P, out);
out:
        free(boxes);
        free(matched);
        return r;
}

/* the polygon rule's targets of the whole batch in one call: the images'
 * objects side by side (shallow copies), matched indices shifted into them */
static int batch_polygon_targets(struct mrcnn_net *n, const struct det_batch *b, const struct mrcnn_targets *t,
                                 struct bd_tensor *out)
{
        const struct mrcnn_rois *rs = &t->rs;
        const int64_t P = rs->npos;
        int64_t ngt = 0;
        for (int i = 0; i < b->n; i++)
                ngt += t->gt[i].g;
        struct det_gt_mask *gts = malloc((size_t)(ngt ? ngt : 1) * sizeof(*gts));
        float *boxes = malloc((size_t)(P ? P : 1) * 4 * sizeof(float));
        int64_t *matched = malloc((size_t)(P ? P : 1) * sizeof(int64_t));
        int r = -ENOMEM;
        if (!gts || !boxes || !matched)
                goto out;
        int64_t g0 = 0, p = 0;
        for (int i = 0; i < b->n; i++) {
                if (t->gt[i].g)
                        memcpy(gts + g0, t->gt[i].masks, (size_t)t->gt[i].g * sizeof(*gts));
                positives(rs, t->img_first[i], t->img_pos[i], g0, boxes + 4 * p, matched + p);
                p += t->img_pos[i];
                g0 += t->gt[i].g;
        }
        r = det_op_mask_targets_h(n->be, gts, ngt, boxes, matched, P, MASK_M, out);
out:
        free(gts);
        free(boxes);
        free(matched);
        return r;
}

/* the targets into one (P, M, M) tensor of the model's type (the polygon
 * rule: the batch at once; the RoIAlign rule image by image); *ret:
 * h->tgt_f32 or h->tgt */
static int targets(struct mrcnn_net *n, const struct det_batch *b, const struct mrcnn_targets *t,
                   const struct bd_tensor **ret)
{
        struct bd_backend *be = n->be;
        struct mrcnn_mask *h = &n->mask;
        int64_t md[3] = { t->rs.npos, MASK_M, MASK_M };
        int r;
        if (n->cfg.mask_rule == MRCNN_MASK_POLYGON) {
                if ((r = batch_polygon_targets(n, b, t, &h->tgt_f32)) < 0)
                        return r;
        } else {
                if ((r = bd_tensor_resize(be, &h->tgt_f32, BD_F32, BD_NCHW, 3, md)) < 0)
                        return r;
                int64_t q = 0;
                for (int i = 0; i < b->n; i++) {
                        if (!t->img_pos[i])
                                continue;
                        int64_t d3[3] = { t->img_pos[i], MASK_M, MASK_M };
                        struct bd_tensor v = bd_tensor_view((char *)h->tgt_f32.data +
                                                                    (size_t)q * MASK_M * MASK_M * sizeof(float),
                                                            h->tgt_f32.dev, BD_F32, BD_NCHW, 3, d3);
                        if ((r = image_targets(n, &b->samples[i], &t->gt[i], &t->rs, t->img_first[i],
                                               t->img_pos[i], &v)) < 0)
                                return r;
                        q += t->img_pos[i];
                }
        }
        *ret = &h->tgt_f32;
        if (n->dt != BD_F32) {
                if ((r = bd_op_cast(be, &h->tgt_f32, n->dt, 1.0, &h->tgt)) < 0)
                        return r;
                *ret = &h->tgt;
        }
        return 0;
}

int mrcnn_mask_train(struct bd_model *m, struct mrcnn_net *n, const struct det_batch *b,
                     const struct mrcnn_step *st, const struct mrcnn_targets *t, struct mrcnn_losses *out,
                     struct bd_err *err)
{
        struct mrcnn_mask *h = &n->mask;
        const int64_t P = t->rs.npos;
        h->have = P > 0;
        if (P == 0)
                return 0;
        const struct bd_tensor *mt;
        int r;
        if ((r = train_fwd(m, n, &t->rs, err)) < 0)
                return r;
        if ((r = targets(n, b, t, &mt)) < 0)
                return BE_FAIL(n, err, r, "mask targets");
        double f = mrcnn_loss_factor(P, t->world, t->cnt[2]);
        struct det_loss_opts lo = { .n = -1, .gscale = st->gscale * f, .vscale = f, .acc = &n->lacc };
        if ((r = det_mask_loss(n->be, &n->lws, &lo, &h->log, &h->lab, mt, &out->mask, &h->d_log)) < 0)
                return BE_FAIL(n, err, r, "mask loss");
        return 0;
}

/* ---- backward ---- */

int mrcnn_mask_bwd(struct bd_model *m, struct mrcnn_net *n, struct bd_tensor *dH[MRCNN_ROI_LEVELS])
{
        struct bd_backend *be = n->be;
        struct bd_scratch *sc = &n->scratch;
        struct mrcnn_mask *h = &n->mask;
        int r;
        if (!h->have)
                return 0;
        struct bd_tensor *g = bd_scratch_get_like(sc, &h->dc), *g2;
        if (!g)
                return -ENOMEM;
        if ((r = bd_conv_bwd(m, &h->logits, &h->dc, &h->d_log, g, 0)) < 0 || (r = mrcnn_relu_bwd_inplace(be, &h->dc, g)) < 0)
                return r;
        const struct bd_tensor *x = n->cfg.mask_convs ? &h->h[n->cfg.mask_convs - 1] : &h->feat;
        if (!(g2 = bd_scratch_get_like(sc, x)))
                return -ENOMEM;
        if ((r = bd_conv_bwd(m, &h->deconv, x, g, g2, 0)) < 0)
                return r;
        bd_scratch_put(sc, g);
        g = g2;
        for (int i = n->cfg.mask_convs - 1; i >= 0; i--) {
                const struct bd_tensor *xi = i ? &h->h[i - 1] : &h->feat;
                if ((r = mrcnn_relu_bwd_inplace(be, &h->h[i], g)) < 0)
                        return r;
                if (!(g2 = bd_scratch_get_like(sc, xi)))
                        return -ENOMEM;
                if ((r = bd_conv_bwd(m, &h->conv[i], xi, g, g2, 0)) < 0)
                        return r;
                bd_scratch_put(sc, g);
                g = g2;
        }
        if (g->layout != BD_NCHW) {
                struct bd_tensor *pl = bd_scratch_get(sc, g->dtype, BD_NCHW, 4, g->dims);
                if (!pl)
                        return -ENOMEM;
                if ((r = bd_op_relayout(be, g, BD_NCHW, pl)) < 0)
                        return r;
                bd_scratch_put(sc, g);
                g = pl;
        }
        r = det_msroi_bwd(be, &h->roi, g, &h->rois, h->levels, dH, BD_ACC_DX);
        bd_scratch_put(sc, g);
        return r;
}

/* ---- inference ---- */

/* the logits (ndet, K, M, M) in NCHW as float32 on the host */
static int logits_to_host(struct mrcnn_net *n, float **buf, size_t *cap, const float **ret)
{
        struct mrcnn_mask *h = &n->mask;
        struct bd_tensor *pl4 = &h->log;
        int r = 0;
        if (h->log.layout != BD_NCHW) {
                if (!(pl4 = bd_scratch_get(&n->scratch, h->log.dtype, BD_NCHW, 4, h->log.dims)))
                        return -ENOMEM;
                if ((r = bd_op_relayout(n->be, &h->log, BD_NCHW, pl4)) < 0) {
                        bd_scratch_put(&n->scratch, pl4);
                        return r;
                }
        }
        r = mrcnn_to_host(n, pl4, buf, cap, ret);
        if (pl4 != &h->log)
                bd_scratch_put(&n->scratch, pl4);
        return r;
}

int mrcnn_mask_detect(struct bd_model *m, struct mrcnn_net *n, const struct det_dets *dets, int N, int64_t ndet,
                      float **ret_probs, struct bd_err *err)
{
        float *pr = malloc((size_t)ndet * 5 * sizeof(float)), *lbuf = NULL, *probs = NULL;
        int32_t *pl = malloc((size_t)ndet * sizeof(int32_t));
        const float *logits;
        size_t lcap = 0;
        int r = 0;
        if (!pr || !pl) {
                r = bd_err_set(err, -ENOMEM, "out of memory");
                goto out;
        }
        int64_t q = 0;
        for (int i = 0; i < N; i++)
                for (int64_t j = 0; j < dets[i].n; j++, q++) {
                        pr[5 * q] = (float)i;
                        memcpy(pr + 5 * q + 1, dets[i].boxes + 4 * j, 4 * sizeof(float));
                        pl[q] = dets[i].labels[j];
                }
        if ((r = head_rois(n, pr, ndet)) < 0 || (r = head_fwd(m, n)) < 0 ||
            (r = logits_to_host(n, &lbuf, &lcap, &logits)) < 0) {
                BE_FAIL(n, err, r, "mask head");
                goto out;
        }
        probs = malloc((size_t)ndet * MASK_M * MASK_M * sizeof(float));
        if (!probs || det_mask_probs(logits, pl, ndet, n->K, MASK_M, probs) < 0) {
                r = bd_err_set(err, -ENOMEM, "out of memory");
                goto out;
        }
        *ret_probs = probs;
        probs = NULL;
out:
        free(pr);
        free(pl);
        free(lbuf);
        free(probs);
        return r;
}

int mrcnn_mask_paste(const float *probs, int64_t q, const float *box, const struct det_sample *s, float *img,
                     struct rle *ret)
{
        int r = det_paste_masks(probs + (size_t)q * MASK_M * MASK_M, box, 1, MASK_M, s->orig_height, s->orig_width,
                                img);
        return r < 0 ? r : det_mask_rle(img, s->orig_height, s->orig_width, 0.5f, ret);
}

/* mrcnn-box.c: the box head of the Mask R-CNN network: RoI sampling and
 * targets, the head and its loss, forward and backward (mrcnn-net.h
 * explains the model). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "mrcnn-stages.h"

#define BOX_POOL 7

static const struct det_coder roi_coder = { 10, 10, 5, 5, (float)DET_BBOX_XFORM_CLIP };

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

int mrcnn_box_init(struct bd_model *m, struct mrcnn_net *n, struct bd_err *err)
{
        const struct mrcnn_cfg *cfg = &n->cfg;
        struct mrcnn_box *h = &n->box;
        const double scales[MRCNN_ROI_LEVELS] = { 0.25, 0.125, 0.0625, 0.03125 };
        int r;
        if ((r = det_msroi_init(&h->roi, &cfg->conv, MRCNN_ROI_LEVELS, scales, BOX_POOL, 2, err)) < 0)
                return r;
        const int64_t F = cfg->fpn_channels, K = cfg->num_classes;
        const enum bd_init a1 = BD_INIT_KAIMING_UNIFORM_A1;
        if ((r = fc_layer(m, cfg, &h->fc6, "roi_heads.box_head.fc6", F * BOX_POOL * BOX_POOL, cfg->box_rep, a1, 0)) < 0 ||
            (r = fc_layer(m, cfg, &h->fc7, "roi_heads.box_head.fc7", cfg->box_rep, cfg->box_rep, a1, 0)) < 0 ||
            (r = fc_layer(m, cfg, &h->cls, "roi_heads.box_predictor.cls_score", cfg->box_rep, K, BD_INIT_NORMAL,
                          0.01)) < 0 ||
            (r = fc_layer(m, cfg, &h->bbox, "roi_heads.box_predictor.bbox_pred", cfg->box_rep, 4 * K, BD_INIT_NORMAL,
                          0.001)) < 0)
                return bd_err_set(err, r, "%s", m->be->err.msg);
        return 0;
}

void mrcnn_box_release(struct mrcnn_box *h)
{
        struct bd_tensor *ts[] = { &h->rois, &h->feat, &h->h6, &h->h7, &h->cls_out, &h->box_out, &h->lab, &h->tgt,
                                   &h->d_cls, &h->d_box };
        for (size_t i = 0; i < ARRAY_SIZE(ts); i++)
                bd_tensor_release(ts[i]);
        free(h->levels);
}

/* ---- RoI sampling and targets ---- */

/* room for want RoIs in rs */
static int rois_reserve(struct mrcnn_rois *rs, size_t want)
{
        if (want <= rs->cap)
                return 0;
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
        if (!ro || !tg || !lb || !mt)
                return -ENOMEM;
        rs->cap = cap;
        return 0;
}

/* the sampled RoIs of image i appended to rs: its np proposals (props),
 * matched to its ground truth, sampled, in proposal order */
static int image_rois(struct mrcnn_net *n, int i, const float *props, int64_t np, const struct mrcnn_gt *g,
                      const struct mrcnn_step *st, struct mrcnn_rois *rs)
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
        if ((r = det_sample(&s, labels, np, st->seed, mrcnn_image_stream(st, i, 1), perm, pos, neg, NULL, NULL, &npos,
                            &nneg)) < 0)
                goto out;
        if ((r = rois_reserve(rs, (size_t)(rs->n + npos + nneg))) < 0)
                goto out;
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

int mrcnn_roi_sample(struct mrcnn_net *n, const struct det_batch *b, const struct mrcnn_step *st,
                     struct mrcnn_targets *t, struct bd_err *err)
{
        const int N = b->n;
        const int64_t post = n->rpn.post;
        struct mrcnn_rois *rs = &t->rs;
        int64_t tot = 0;
        for (int i = 0; i < N; i++)
                tot += n->rpn.count[i] + t->gt[i].g;
        if (GROW(n->dbg.props, n->dbg_props_cap, (tot ? tot : 1) * 4) < 0)
                return bd_err_set(err, -ENOMEM, "out of memory");
        int64_t at = 0;
        for (int i = 0; i < N; i++) {
                const struct mrcnn_gt *g = &t->gt[i];
                float *pp = n->dbg.props + 4 * at;
                memcpy(pp, n->rpn.props + (size_t)i * post * 4, (size_t)n->rpn.count[i] * 4 * sizeof(float));
                memcpy(pp + 4 * n->rpn.count[i], g->boxes, (size_t)g->g * 4 * sizeof(float));
                int64_t np = n->rpn.count[i] + g->g;
                n->dbg.nprops[i] = np;
                t->img_first[i] = rs->n;
                int64_t before = rs->npos;
                int r = image_rois(n, i, pp, np, g, st, rs);
                if (r < 0)
                        return bd_err_set(err, r, "RoI targets of image %d: %s", i,
                                          r == -ENOMEM ? "out of memory" : "bad injected permutation or sizes");
                t->img_pos[i] = rs->npos - before;
                at += np;
        }
        t->img_first[N] = rs->n;
        return 0;
}

/* ---- the head ---- */

int mrcnn_box_fwd(struct bd_model *m, struct mrcnn_net *n, const float *rois, int64_t R)
{
        struct bd_backend *be = n->be;
        struct mrcnn_box *h = &n->box;
        int64_t r2[2] = { R, 5 };
        int r;
        if ((r = mrcnn_from_host(n, rois, n->dt, 2, r2, &h->rois)) < 0 ||
            (r = mrcnn_roi_levels(n, &h->roi, rois, R, &h->levels, &h->levels_cap)) < 0 ||
            (r = det_msroi_fwd(be, &h->roi, n->fpn.roi_maps, &h->rois, h->levels, &h->feat)) < 0)
                return r;
        struct bd_tensor flat;
        int64_t d2[2] = { R, bd_tensor_numel(&h->feat) / (R ? R : 1) };
        if ((r = bd_tensor_reshape(&h->feat, 2, d2, &flat)) < 0)
                return r;
        if ((r = bd_fc_fwd(m, &h->fc6, &flat, &h->h6)) < 0 || (r = bd_op_relu(be, &h->h6, &h->h6)) < 0 ||
            (r = bd_fc_fwd(m, &h->fc7, &h->h6, &h->h7)) < 0 || (r = bd_op_relu(be, &h->h7, &h->h7)) < 0 ||
            (r = bd_fc_fwd(m, &h->cls, &h->h7, &h->cls_out)) < 0 || (r = bd_fc_fwd(m, &h->bbox, &h->h7, &h->box_out)) < 0)
                return r;
        return 0;
}

int mrcnn_box_train(struct bd_model *m, struct mrcnn_net *n, const struct mrcnn_step *st,
                    const struct mrcnn_targets *t, struct mrcnn_losses *out, struct bd_err *err)
{
        struct mrcnn_box *h = &n->box;
        const struct mrcnn_rois *rs = &t->rs;
        const int64_t R = rs->n;
        n->dbg.nrois = R;
        if (GROW(n->dbg.rois, n->dbg_rois_cap, (R ? R : 1) * 5) < 0 ||
            GROW(n->dbg.roi_labels, n->dbg_lab_cap, R ? R : 1) < 0)
                return bd_err_set(err, -ENOMEM, "out of memory");
        memcpy(n->dbg.rois, rs->rois, (size_t)R * 5 * sizeof(float));
        memcpy(n->dbg.roi_labels, rs->labels, (size_t)R * sizeof(int32_t));
        int64_t t2[2] = { R, 4 };
        int r;
        if ((r = mrcnn_box_fwd(m, n, rs->rois, R)) < 0 || (r = mrcnn_i32_from_host(n, rs->labels, R, &h->lab)) < 0 ||
            (r = mrcnn_from_host(n, rs->tgt, n->dt, 2, t2, &h->tgt)) < 0)
                return BE_FAIL(n, err, r, "box head");
        /* every sampled RoI counts (labels 0 or a class) */
        double f = mrcnn_loss_factor(R, t->world, t->cnt[1]);
        struct det_loss_opts lo = { .n = (double)R, .gscale = st->gscale * f, .vscale = f, .acc = &n->lacc };
        if ((r = det_fastrcnn_loss(n->be, &n->lws, &lo, &h->cls_out, &h->box_out, &h->lab, &h->tgt, n->cfg.box_beta,
                                   &out->classifier, &out->box_reg, &h->d_cls, &h->d_box)) < 0)
                return BE_FAIL(n, err, r, "box head loss");
        return 0;
}

int mrcnn_box_bwd(struct bd_model *m, struct mrcnn_net *n, struct bd_tensor *dH[MRCNN_ROI_LEVELS])
{
        struct bd_backend *be = n->be;
        struct bd_scratch *sc = &n->scratch;
        struct mrcnn_box *h = &n->box;
        struct bd_tensor *g7 = bd_scratch_get_like(sc, &h->h7), *gb = bd_scratch_get_like(sc, &h->h7);
        struct bd_tensor *g6 = bd_scratch_get_like(sc, &h->h6);
        int64_t R = h->rois.dims[0];
        int64_t d2[2] = { R, bd_tensor_numel(&h->feat) / (R ? R : 1) };
        struct bd_tensor *gf = bd_scratch_get(sc, n->dt, BD_NCHW, 2, d2);
        if (!g7 || !gb || !g6 || !gf)
                return -ENOMEM;
        struct bd_tensor flat, g4;
        int r;
        if ((r = bd_tensor_reshape(&h->feat, 2, d2, &flat)) < 0 || (r = bd_fc_bwd(m, &h->cls, &h->h7, &h->d_cls, g7)) < 0 ||
            (r = bd_fc_bwd(m, &h->bbox, &h->h7, &h->d_box, gb)) < 0 || (r = bd_op_axpby(be, 1.0, gb, 1.0, g7)) < 0 ||
            (r = mrcnn_relu_bwd_inplace(be, &h->h7, g7)) < 0 || (r = bd_fc_bwd(m, &h->fc7, &h->h6, g7, g6)) < 0 ||
            (r = mrcnn_relu_bwd_inplace(be, &h->h6, g6)) < 0 || (r = bd_fc_bwd(m, &h->fc6, &flat, g6, gf)) < 0 ||
            (r = bd_tensor_reshape(gf, 4, h->feat.dims, &g4)) < 0 ||
            (r = det_msroi_bwd(be, &h->roi, &g4, &h->rois, h->levels, dH, BD_ACC_DX)) < 0)
                return r;
        bd_scratch_put(sc, g7);
        bd_scratch_put(sc, gb);
        bd_scratch_put(sc, g6);
        bd_scratch_put(sc, gf);
        return 0;
}

/* ssd-net.c: the SSD network, forward and backward. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ssd-net.h"

static const int ref_chan[SSD_LEVELS] = { 256, 512, 512, 256, 256, 256 };
static const int ref_mid[SSD_EXTRA] = { 256, 256, 128, 128, 128 };

/* channels times the width multiplier, a multiple of 8, at least 8 */
static int width(int c, double mult)
{
        long v = lround(c * mult / 8.0) * 8;
        return v < 8 ? 8 : (int)v;
}

int ssd_feature_sizes(int image_size, int ret_fsize[SSD_LEVELS], int ret_pad[SSD_EXTRA], struct bd_err *err)
{
        if (image_size < 32 || image_size > 4096)
                return bd_err_set(err, -EINVAL, "ssd: image size %d (expected 32 to 4096)", image_size);
        int o = (image_size - 1) / 2 + 1;       /* conv1 7x7/2 pad 3 */
        o = (o - 1) / 2 + 1;                    /* max pool 3x3/2 pad 1 */
        o = (o - 1) / 2 + 1;                    /* layer2, stride 2; layer3 at stride 1 */
        ret_fsize[0] = o;
        for (int e = 0; e < SSD_EXTRA; e++) {
                if (e < 3) {
                        ret_pad[e] = 1;         /* stride 2 */
                        o = (o - 1) / 2 + 1;
                } else {
                        ret_pad[e] = o >= 3 ? 0 : 1;
                        o = o >= 3 ? o - 2 : o;
                }
                ret_fsize[e + 1] = o;
        }
        return 0;
}

static int xconv(struct bd_conv *c, struct bd_model *m, const char *name, int cin, int cout, int k, int stride,
                 int pad)
{
        struct bd_conv_cfg cfg = { .cin = cin, .cout = cout, .k = k, .stride = stride, .pad = pad, .bias = 1,
                                   .winit = BD_INIT_XAVIER_UNIFORM };
        int r = bd_conv_init(c, m, name, &cfg);
        if (r < 0)
                return r;
        /* PyTorch's default bias, U(+-1/sqrt(fan_in)): the layer registered
         * fan_in with the bias, only the rule differs from its default */
        m->p[c->b].init.kind = BD_INIT_UNIFORM_FAN_IN;
        return 0;
}

int ssd_net_init(struct ssd_net *s, struct bd_model *m, const struct ssd_cfg *cfg)
{
        struct bd_err *err = &m->be->err;
        char name[BD_NAME_MAX];
        int pad[SSD_EXTRA], r;
        memset(s, 0, sizeof(*s));
        s->cfg = *cfg;
        if (cfg->depth != 18 && cfg->depth != 34)
                return bd_err_set(err, -EINVAL, "ssd: backbone resnet%d (expected resnet18 or resnet34)", cfg->depth);
        if (!(cfg->width_mult > 0) || cfg->width_mult > 8)
                return bd_err_set(err, -EINVAL, "ssd: width multiplier %g (expected (0, 8])", cfg->width_mult);
        if (cfg->num_classes < 2)
                return bd_err_set(err, -EINVAL, "ssd: %d classes (expected at least 2 with background)",
                                  cfg->num_classes);
        if ((r = ssd_feature_sizes(cfg->image_size, s->fsize, pad, err)) < 0)
                return r;
        bd_scratch_init(&s->scratch, m->be);
        int bw = width(64, cfg->width_mult);
        struct bd_resnet_cfg rc = { .depth = cfg->depth, .stages = 3, .strides = { 1, 2, 1 }, .bn = BD_BN_TRAIN,
                                    .width = bw };
        if ((r = bd_resnet_init(&s->backbone, m, "backbone.", &rc)) < 0)
                return r;
        s->chan[0] = s->backbone.channels[2];
        for (int e = 0; e < SSD_EXTRA; e++) {
                s->chan[e + 1] = width(ref_chan[e + 1], cfg->width_mult);
                s->mid[e] = width(ref_mid[e], cfg->width_mult);
                snprintf(name, sizeof(name), "additional_blocks.%d.0", e);
                if ((r = xconv(&s->ex1[e], m, name, s->chan[e], s->mid[e], 1, 1, 0)) < 0)
                        return r;
                snprintf(name, sizeof(name), "additional_blocks.%d.2", e);
                if ((r = xconv(&s->ex2[e], m, name, s->mid[e], s->chan[e + 1], 3, e < 3 ? 2 : 1, pad[e])) < 0)
                        return r;
        }
        if ((r = ssd_dboxes_init(&s->dboxes, cfg->image_size, s->fsize, err)) < 0)
                return r;
        s->nboxes = s->dboxes.n;
        for (int l = 0; l < SSD_LEVELS; l++) {
                int A = s->dboxes.per_cell[l];
                snprintf(name, sizeof(name), "loc.%d", l);
                if ((r = xconv(&s->loc[l], m, name, s->chan[l], 4 * A, 3, 1, 1)) < 0)
                        return r;
        }
        for (int l = 0; l < SSD_LEVELS; l++) {
                int A = s->dboxes.per_cell[l];
                snprintf(name, sizeof(name), "conf.%d", l);
                if ((r = xconv(&s->conf[l], m, name, s->chan[l], cfg->num_classes * A, 3, 1, 1)) < 0)
                        return r;
        }
        return 0;
}

void ssd_net_release(struct ssd_net *s)
{
        bd_resnet_release(&s->backbone);
        for (int e = 0; e < SSD_EXTRA; e++) {
                bd_tensor_release(&s->e1[e]);
                bd_tensor_release(&s->e2[e]);
        }
        for (int l = 0; l < SSD_LEVELS; l++) {
                bd_tensor_release(&s->hloc[l]);
                bd_tensor_release(&s->hconf[l]);
        }
        bd_tensor_release(&s->ploc);
        bd_tensor_release(&s->plabel);
        bd_scratch_release(&s->scratch);
        ssd_dboxes_release(&s->dboxes);
        memset(s, 0, sizeof(*s));
}

int ssd_net_fwd(struct bd_model *m, struct ssd_net *s, const struct bd_tensor *x)
{
        struct bd_backend *be = m->be;
        int r;
        if (x->ndim != 4 || BD_H(x) != s->cfg.image_size || BD_W(x) != s->cfg.image_size) {
                char b[128];
                return bd_err_set(&be->err, -EINVAL, "ssd: input %s, expected (N, 3, %d, %d)",
                                  bd_tensor_str(x, b, sizeof(b)), s->cfg.image_size, s->cfg.image_size);
        }
        if ((r = bd_resnet_fwd(m, &s->backbone, x)) < 0)
                return r;
        s->feat[0] = bd_resnet_stage(&s->backbone, 3);
        for (int e = 0; e < SSD_EXTRA; e++) {
                if ((r = bd_conv_fwd(m, &s->ex1[e], s->feat[e], &s->e1[e])) < 0 ||
                    (r = bd_op_relu(be, &s->e1[e], &s->e1[e])) < 0 ||
                    (r = bd_conv_fwd(m, &s->ex2[e], &s->e1[e], &s->e2[e])) < 0 ||
                    (r = bd_op_relu(be, &s->e2[e], &s->e2[e])) < 0)
                        return r;
                s->feat[e + 1] = &s->e2[e];
        }
        int64_t N = BD_N(x), K = s->cfg.num_classes;
        int64_t dl[2] = { N * s->nboxes, 4 }, dc[2] = { N * s->nboxes, K };
        if ((r = bd_tensor_resize(be, &s->ploc, x->dtype, BD_NCHW, 2, dl)) < 0 ||
            (r = bd_tensor_resize(be, &s->plabel, x->dtype, BD_NCHW, 2, dc)) < 0)
                return r;
        for (int l = 0; l < SSD_LEVELS; l++) {
                int64_t A = s->dboxes.per_cell[l], off = s->dboxes.offset[l];
                if ((r = bd_conv_fwd(m, &s->loc[l], s->feat[l], &s->hloc[l])) < 0 ||
                    (r = bd_conv_fwd(m, &s->conf[l], s->feat[l], &s->hconf[l])) < 0 ||
                    (r = ssd_head_gather(be, &s->hloc[l], A, off, &s->ploc, 0)) < 0 ||
                    (r = ssd_head_gather(be, &s->hconf[l], A, off, &s->plabel, 0)) < 0)
                        return r;
        }
        return 0;
}

/* Gradient of level l's feature map from its two heads into df (overwritten). */
static int heads_bwd(struct bd_model *m, struct ssd_net *s, int l, const struct bd_tensor *dploc,
                     const struct bd_tensor *dplabel, struct bd_tensor *df, int acc)
{
        struct bd_backend *be = m->be;
        int64_t A = s->dboxes.per_cell[l], off = s->dboxes.offset[l];
        struct bd_tensor *dh = bd_scratch_get_like(&s->scratch, &s->hloc[l]);
        int r;
        if (!dh)
                return -ENOMEM;
        /* gather's backward reads the rows, so a const view is enough */
        struct bd_tensor rows = *dploc;
        if ((r = ssd_head_gather(be, dh, A, off, &rows, 1)) < 0 ||
            (r = bd_conv_bwd(m, &s->loc[l], s->feat[l], dh, df, acc)) < 0)
                return r;
        bd_scratch_put(&s->scratch, dh);
        if (!(dh = bd_scratch_get_like(&s->scratch, &s->hconf[l])))
                return -ENOMEM;
        rows = *dplabel;
        if ((r = ssd_head_gather(be, dh, A, off, &rows, 1)) < 0 ||
            (r = bd_conv_bwd(m, &s->conf[l], s->feat[l], dh, df, 1)) < 0)
                return r;
        bd_scratch_put(&s->scratch, dh);
        return 0;
}

int ssd_net_bwd(struct bd_model *m, struct ssd_net *s, const struct bd_tensor *dploc, const struct bd_tensor *dplabel)
{
        struct bd_backend *be = m->be;
        struct bd_scratch *sp = &s->scratch;
        int r;
        if (!bd_tensor_same_shape(dploc, &s->ploc) || !bd_tensor_same_shape(dplabel, &s->plabel)) {
                char a[128], b[128];
                return bd_err_set(&be->err, -EINVAL, "ssd backward: gradients %s and %s do not match the outputs",
                                  bd_tensor_str(dploc, a, sizeof(a)), bd_tensor_str(dplabel, b, sizeof(b)));
        }
        /* df: gradient of feature map l, complete once its heads and the
         * extra block above it have added theirs */
        struct bd_tensor *df = bd_scratch_get_like(sp, s->feat[SSD_LEVELS - 1]);
        if (!df)
                return -ENOMEM;
        if ((r = heads_bwd(m, s, SSD_LEVELS - 1, dploc, dplabel, df, 0)) < 0)
                return r;
        for (int e = SSD_EXTRA - 1; e >= 0; e--) {
                /* extra block e: feat[e] -> e1 -> e2 = feat[e + 1] */
                struct bd_tensor *d1 = bd_scratch_get_like(sp, &s->e1[e]);
                struct bd_tensor *din = bd_scratch_get_like(sp, s->feat[e]);
                if (!d1 || !din)
                        return -ENOMEM;
                if ((r = bd_op_relu_bwd(be, &s->e2[e], df, df, 0)) < 0 ||
                    (r = bd_conv_bwd(m, &s->ex2[e], &s->e1[e], df, d1, 0)) < 0 ||
                    (r = bd_op_relu_bwd(be, &s->e1[e], d1, d1, 0)) < 0 ||
                    (r = bd_conv_bwd(m, &s->ex1[e], s->feat[e], d1, din, 0)) < 0)
                        return r;
                bd_scratch_put(sp, d1);
                bd_scratch_put(sp, df);
                df = din;
                if ((r = heads_bwd(m, s, e, dploc, dplabel, df, 1)) < 0)
                        return r;
        }
        const struct bd_tensor *dstage[3] = { NULL, NULL, df };
        r = bd_resnet_bwd(m, &s->backbone, dstage, NULL);
        bd_scratch_put(sp, df);
        return r;
}

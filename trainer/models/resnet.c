/* resnet.c: ResNet backbones, forward and backward. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "resnet.h"

static const int blocks_18[4] = { 2, 2, 2, 2 };
static const int blocks_34_50[4] = { 3, 4, 6, 3 };

static int conv(struct bd_conv *c, struct bd_model *m, const char *name, int64_t cin, int64_t cout, int k,
                int stride, int frozen)
{
        struct bd_conv_cfg cfg = { .cin = cin, .cout = cout, .k = k, .stride = stride, .pad = k / 2,
                                   .pflags = frozen ? BD_P_FROZEN : 0, .winit = BD_INIT_KAIMING_NORMAL_OUT };
        return bd_conv_init(c, m, name, &cfg);
}

static int bn(struct bd_bn *b, struct bd_model *m, const char *name, int64_t C, enum bd_bn_mode mode, int frozen,
              int relu)
{
        return bd_bn_init(b, m, name, C, frozen ? BD_BN_FROZEN : mode, relu);
}

int bd_resnet_init(struct bd_resnet *r, struct bd_model *m, const char *prefix, const struct bd_resnet_cfg *cfg)
{
        memset(r, 0, sizeof(*r));
        r->cfg = *cfg;
        struct bd_resnet_cfg *c = &r->cfg;
        struct bd_err *err = &m->be->err;
        if (c->depth != 18 && c->depth != 34 && c->depth != 50)
                return bd_err_set(err, -EINVAL, "resnet: depth %d (expected 18, 34 or 50)", c->depth);
        if (c->stages == 0)
                c->stages = 4;
        if (c->stages < 1 || c->stages > 4)
                return bd_err_set(err, -EINVAL, "resnet: %d stages (expected 1 to 4)", c->stages);
        if (c->freeze_at < 0 || c->freeze_at > c->stages + 1)
                return bd_err_set(err, -EINVAL, "resnet: freeze_at %d out of range", c->freeze_at);
        for (int s = 0; s < 4; s++)
                if (c->strides[s] == 0)
                        c->strides[s] = s == 0 ? 1 : 2;
        if (c->width == 0)
                c->width = 64;
        if (c->width < 8 || c->width % 8)
                return bd_err_set(err, -EINVAL, "resnet: width %d (expected a multiple of 8)", c->width);
        int bottleneck = c->depth == 50, exp = bottleneck ? 4 : 1;
        const int *nb = c->depth == 18 ? blocks_18 : blocks_34_50;
        char name[BD_NAME_MAX];
        int rc;

        bd_scratch_init(&r->scratch, m->be);
        r->stem_trained = c->freeze_at == 0;
        snprintf(name, sizeof(name), "%sconv1", prefix);
        if ((rc = conv(&r->conv1, m, name, 3, c->width, 7, 2, !r->stem_trained)) < 0)
                return rc;
        snprintf(name, sizeof(name), "%sbn1", prefix);
        if ((rc = bn(&r->bn1, m, name, c->width, c->bn, !r->stem_trained, 1)) < 0)
                return rc;
        bd_pool_init(&r->pool, m, 3, 2, 1);

        for (int s = 0; s < c->stages; s++)
                r->nblocks += nb[s];
        r->blocks = xcalloc((size_t)r->nblocks, sizeof(*r->blocks));
        int64_t cin = c->width;
        int bi = 0;
        for (int s = 0; s < c->stages; s++) {
                int64_t planes = (int64_t)c->width << s, cout = planes * exp;
                int frozen = c->freeze_at >= s + 2;
                for (int j = 0; j < nb[s]; j++, bi++) {
                        struct bd_block *b = &r->blocks[bi];
                        int stride = j == 0 ? c->strides[s] : 1;
                        b->trained = !frozen;
                        b->nconv = bottleneck ? 3 : 2;
                        for (int k = 0; k < b->nconv; k++) {
                                int64_t ci = k == 0 ? cin : planes, co = k == b->nconv - 1 ? cout : planes;
                                int ks = bottleneck && k != 1 ? 1 : 3;
                                int st = (bottleneck ? (c->stride_in_1x1 ? k == 0 : k == 1) : k == 0) ? stride : 1;
                                snprintf(name, sizeof(name), "%slayer%d.%d.conv%d", prefix, s + 1, j, k + 1);
                                if ((rc = conv(&b->conv[k], m, name, ci, co, ks, st, frozen)) < 0)
                                        return rc;
                                snprintf(name, sizeof(name), "%slayer%d.%d.bn%d", prefix, s + 1, j, k + 1);
                                if ((rc = bn(&b->bn[k], m, name, co, c->bn, frozen, k != b->nconv - 1)) < 0)
                                        return rc;
                        }
                        if (stride != 1 || cin != cout) {
                                b->has_ds = 1;
                                snprintf(name, sizeof(name), "%slayer%d.%d.downsample.0", prefix, s + 1, j);
                                if ((rc = conv(&b->ds, m, name, cin, cout, 1, stride, frozen)) < 0)
                                        return rc;
                                snprintf(name, sizeof(name), "%slayer%d.%d.downsample.1", prefix, s + 1, j);
                                if ((rc = bn(&b->ds_bn, m, name, cout, c->bn, frozen, 0)) < 0)
                                        return rc;
                        }
                        cin = cout;
                }
                r->stage_end[s] = bi - 1;
                r->channels[s] = (int)cout;
        }
        if (c->num_classes > 0) {
                snprintf(name, sizeof(name), "%sfc", prefix);
                if ((rc = bd_fc_init(&r->fc, m, name, cin, c->num_classes, 1, 0)) < 0)
                        return rc;
        }
        return 0;
}

void bd_resnet_release(struct bd_resnet *r)
{
        for (int i = 0; i < r->nblocks; i++) {
                struct bd_block *b = &r->blocks[i];
                for (int k = 0; k < 3; k++) {
                        bd_bn_release(&b->bn[k]);
                        bd_tensor_release(&b->c[k]);
                        bd_tensor_release(&b->b[k]);
                }
                bd_bn_release(&b->ds_bn);
                bd_tensor_release(&b->dsc);
                bd_tensor_release(&b->dsb);
                bd_tensor_release(&b->out);
        }
        free(r->blocks);
        bd_bn_release(&r->bn1);
        bd_pool_release(&r->pool);
        bd_tensor_release(&r->c1);
        bd_tensor_release(&r->b1);
        bd_tensor_release(&r->p1);
        bd_tensor_release(&r->pooled);
        bd_tensor_release(&r->logits);
        bd_scratch_release(&r->scratch);
        memset(r, 0, sizeof(*r));
}

static int block_fwd(struct bd_model *m, struct bd_block *b, const struct bd_tensor *x)
{
        int rc;
        const struct bd_tensor *in = x;
        b->x = x;
        for (int k = 0; k < b->nconv; k++) {
                if ((rc = bd_conv_fwd(m, &b->conv[k], in, &b->c[k])) < 0 ||
                    (rc = bd_bn_fwd(m, &b->bn[k], &b->c[k], &b->b[k])) < 0)
                        return rc;
                in = &b->b[k];
        }
        const struct bd_tensor *sc = x;
        if (b->has_ds) {
                if ((rc = bd_conv_fwd(m, &b->ds, x, &b->dsc)) < 0 || (rc = bd_bn_fwd(m, &b->ds_bn, &b->dsc, &b->dsb)) < 0)
                        return rc;
                sc = &b->dsb;
        }
        return bd_op_add(m->be, in, sc, &b->out, 1);
}

int bd_resnet_fwd(struct bd_model *m, struct bd_resnet *r, const struct bd_tensor *x)
{
        int rc;
        if (x->ndim != 4 || BD_C(x) != 3) {
                char s[128];
                return bd_err_set(&m->be->err, -EINVAL, "resnet: input %s, expected (N, 3, H, W)",
                                  bd_tensor_str(x, s, sizeof(s)));
        }
        r->x = x;
        if ((rc = bd_conv_fwd(m, &r->conv1, x, &r->c1)) < 0 || (rc = bd_bn_fwd(m, &r->bn1, &r->c1, &r->b1)) < 0 ||
            (rc = bd_pool_fwd(m, &r->pool, &r->b1, &r->p1)) < 0)
                return rc;
        const struct bd_tensor *in = &r->p1;
        for (int i = 0; i < r->nblocks; i++) {
                if ((rc = block_fwd(m, &r->blocks[i], in)) < 0)
                        return rc;
                in = &r->blocks[i].out;
        }
        if (r->cfg.num_classes > 0 &&
            ((rc = bd_op_global_avgpool(m->be, in, &r->pooled)) < 0 || (rc = bd_fc_fwd(m, &r->fc, &r->pooled, &r->logits)) < 0))
                return rc;
        return 0;
}

const struct bd_tensor *bd_resnet_stage(const struct bd_resnet *r, int k)
{
        if (k < 1 || k > r->cfg.stages)
                return NULL;
        return &r->blocks[r->stage_end[k - 1]].out;
}

/* dout: gradient of the block's output (given back to the pool here);
 * returns the input gradient from the pool, or NULL when not wanted */
static int block_bwd(struct bd_model *m, struct bd_resnet *r, struct bd_block *b, struct bd_tensor *dout,
                     int want_dx, struct bd_tensor **ret_dx)
{
        struct bd_scratch *sp = &r->scratch;
        struct bd_backend *be = m->be;
        int rc;
        *ret_dx = NULL;
        struct bd_tensor *dz = bd_scratch_get_like(sp, &b->out);
        if (!dz)
                return -ENOMEM;
        if ((rc = bd_op_relu_bwd(be, &b->out, dout, dz, 0)) < 0)
                return rc;
        bd_scratch_put(sp, dout);
        struct bd_tensor *dx = NULL;
        if (want_dx && !(dx = bd_scratch_get_like(sp, b->x)))
                return -ENOMEM;

        /* main branch, top to bottom */
        struct bd_tensor *g = dz;
        for (int k = b->nconv - 1; k >= 0; k--) {
                struct bd_tensor *gc = bd_scratch_get_like(sp, &b->c[k]);
                if (!gc)
                        return -ENOMEM;
                if ((rc = bd_bn_bwd(m, &b->bn[k], &b->c[k], &b->b[k], g, gc)) < 0)
                        return rc;
                if (g != dz)
                        bd_scratch_put(sp, g);
                const struct bd_tensor *in = k == 0 ? b->x : &b->b[k - 1];
                struct bd_tensor *gin = NULL;
                if (k > 0 && !(gin = bd_scratch_get_like(sp, in)))
                        return -ENOMEM;
                if (k == 0)
                        gin = dx;
                if ((rc = bd_conv_bwd(m, &b->conv[k], in, gc, gin, 0)) < 0)
                        return rc;
                bd_scratch_put(sp, gc);
                g = gin;
        }
        /* shortcut */
        if (b->has_ds) {
                struct bd_tensor *gds = bd_scratch_get_like(sp, &b->dsc);
                if (!gds)
                        return -ENOMEM;
                if ((rc = bd_bn_bwd(m, &b->ds_bn, &b->dsc, &b->dsb, dz, gds)) < 0 ||
                    (rc = bd_conv_bwd(m, &b->ds, b->x, gds, dx, 1)) < 0)
                        return rc;
                bd_scratch_put(sp, gds);
        } else if (dx && (rc = bd_op_add(be, dx, dz, dx, 0)) < 0) {
                return rc;
        }
        bd_scratch_put(sp, dz);
        *ret_dx = dx;
        return 0;
}

int bd_resnet_bwd(struct bd_model *m, struct bd_resnet *r, const struct bd_tensor *const *dstage,
                  const struct bd_tensor *dlogits)
{
        struct bd_scratch *sp = &r->scratch;
        struct bd_backend *be = m->be;
        int rc;
        struct bd_tensor *g = NULL;     /* gradient of the current block's output */
        int last = r->nblocks - 1;

        if (r->cfg.num_classes > 0 && dlogits) {
                struct bd_tensor *gp = bd_scratch_get_like(sp, &r->pooled);
                if (!gp || (g = bd_scratch_get_like(sp, &r->blocks[last].out)) == NULL)
                        return -ENOMEM;
                if ((rc = bd_fc_bwd(m, &r->fc, &r->pooled, dlogits, gp)) < 0 ||
                    (rc = bd_op_global_avgpool_bwd(be, gp, &r->blocks[last].out, g)) < 0)
                        return rc;
                bd_scratch_put(sp, gp);
        }
        /* the lowest block whose input needs a gradient */
        int first_trained = r->nblocks;
        for (int i = 0; i < r->nblocks; i++)
                if (r->blocks[i].trained) {
                        first_trained = i;
                        break;
                }
        for (int i = last; i >= 0 && i >= first_trained; i--) {
                struct bd_block *b = &r->blocks[i];
                /* the stage's own output gradient joins at its last block */
                for (int s = 0; s < r->cfg.stages; s++) {
                        if (r->stage_end[s] != i || !dstage || !dstage[s])
                                continue;
                        if (!g) {
                                if (!(g = bd_scratch_get_like(sp, &b->out)))
                                        return -ENOMEM;
                                if ((rc = bd_op_axpby(be, 1, dstage[s], 0, g)) < 0)
                                        return rc;
                        } else if ((rc = bd_op_add(be, g, dstage[s], g, 0)) < 0) {
                                return rc;
                        }
                }
                if (!g)
                        continue;       /* nothing above this block was used */
                int want_dx = i > first_trained || r->stem_trained;
                struct bd_tensor *dx;
                if ((rc = block_bwd(m, r, b, g, want_dx, &dx)) < 0)
                        return rc;
                g = dx;
        }
        if (g && r->stem_trained) {
                struct bd_tensor *gb = bd_scratch_get_like(sp, &r->b1), *gc = bd_scratch_get_like(sp, &r->c1);
                if (!gb || !gc)
                        return -ENOMEM;
                if ((rc = bd_pool_bwd(m, &r->pool, &r->b1, &r->p1, g, gb)) < 0 ||
                    (rc = bd_bn_bwd(m, &r->bn1, &r->c1, &r->b1, gb, gc)) < 0 ||
                    (rc = bd_conv_bwd(m, &r->conv1, r->x, gc, NULL, 0)) < 0)
                        return rc;
                bd_scratch_put(sp, gb);
                bd_scratch_put(sp, gc);
        }
        if (g)
                bd_scratch_put(sp, g);
        return 0;
}

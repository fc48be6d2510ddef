/* test-trainer-resnet.c: ResNet backbone options the detectors use.
 *
 * Output shapes of each stage (SSD's ResNet-34 to layer3 with layer3 at
 * stride 1: 38 x 38 x 256 at 300 x 300; Mask R-CNN's ResNet-50 C2..C5),
 * parameter counts against torchvision's, frozen stages (no gradient, no
 * change after a step, nothing computed below them), per-stage gradients
 * joining the backward, and bad configurations as one-line errors.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "optim.h"
#include "resnet.h"
#include "tap.h"

static struct bd_backend *be;

static int64_t trained_values(struct bd_model *m)
{
        int64_t n = 0;
        for (int i = 0; i < m->np; i++)
                if (bd_model_trained(m, i))
                        n += m->p[i].numel;
        return n;
}

static int64_t param_values(struct bd_model *m)
{
        int64_t n = 0;
        for (int i = 0; i < m->np; i++)
                if (!(m->p[i].flags & BD_P_BUFFER))
                        n += m->p[i].numel;
        return n;
}

static int build(struct bd_model *m, struct bd_resnet *r, struct bd_resnet_cfg cfg)
{
        struct bd_err err;
        bd_model_init(m, be, BD_F32);
        if (bd_resnet_init(r, m, "backbone.", &cfg) < 0 || bd_model_finalize(m, &err) < 0 ||
            bd_model_init_params(m, 3, &err) < 0)
                return -1;
        return 0;
}

static void input(struct bd_tensor *x, int64_t N, int64_t S)
{
        int64_t d[4] = { N, 3, S, S };
        bd_tensor_resize(be, x, BD_F32, BD_NCHW, 4, d);
        for (int64_t i = 0; i < bd_tensor_numel(x); i++)
                ((float *)x->data)[i] = (float)sin(0.37 * (double)i);
}

static int shape_is(const struct bd_tensor *t, int64_t n, int64_t c, int64_t h, int64_t w)
{
        return t && t->ndim == 4 && t->dims[0] == n && t->dims[1] == c && t->dims[2] == h && t->dims[3] == w;
}

int main(void)
{
        struct bd_err err;
        if (bd_backend_cpu_new(0, &be, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                return 1;
        }
        struct bd_model m;
        struct bd_resnet r;
        struct bd_tensor x = { 0 };

        /* parameter counts: torchvision resnet18/34/50 have 11689512, 21797672, 25557032 */
        struct { int depth; int64_t n; } counts[] = { { 18, 11689512 }, { 34, 21797672 }, { 50, 25557032 } };
        for (size_t i = 0; i < ARRAY_SIZE(counts); i++) {
                struct bd_resnet_cfg cfg = { .depth = counts[i].depth, .num_classes = 1000 };
                char d[128];
                snprintf(d, sizeof(d), "resnet%d: %lld parameters, as torchvision's", counts[i].depth, (long long)counts[i].n);
                ok(build(&m, &r, cfg) == 0 && param_values(&m) == counts[i].n, d);
                bd_resnet_release(&r);
                bd_model_release(&m);
        }

        /* SSD: ResNet-34 to layer3, layer3 at stride 1 */
        struct bd_resnet_cfg ssd = { .depth = 34, .stages = 3, .strides = { 1, 2, 1 } };
        ok(build(&m, &r, ssd) == 0, "SSD backbone builds");
        input(&x, 1, 300);
        bd_model_begin_step(&m);
        ok(bd_resnet_fwd(&m, &r, &x) == 0, "SSD backbone forward at 300 x 300");
        ok(shape_is(bd_resnet_stage(&r, 3), 1, 256, 38, 38), "  layer3 output is 38 x 38 x 256");
        ok(bd_resnet_stage(&r, 4) == NULL, "  no layer4");
        ok(bd_model_find(&m, "backbone.layer4.0.conv1.weight") < 0 && bd_model_find(&m, "backbone.fc.weight") < 0,
           "  no layer4 or fc parameters");
        ok(bd_model_find(&m, "backbone.layer3.0.downsample.0.weight") >= 0,
           "  layer3's first block keeps its 1x1 downsample (channels change)");
        bd_resnet_release(&r);
        bd_model_release(&m);

        /* Mask R-CNN: ResNet-50, frozen batch norm, stem and layer1 frozen, C2..C5 */
        struct bd_resnet_cfg mrcnn = { .depth = 50, .bn = BD_BN_FROZEN, .freeze_at = 2 };
        ok(build(&m, &r, mrcnn) == 0, "Mask R-CNN backbone builds");
        input(&x, 2, 64);
        struct bd_tensor before = { 0 };
        bd_tensor_resize(be, &before, BD_F32, BD_NCHW, 1, (int64_t[]){ (int64_t)m.n_all });
        bd_model_get_params(&m, before.data);
        bd_model_begin_step(&m);
        ok(bd_resnet_fwd(&m, &r, &x) == 0, "forward at 64 x 64");
        ok(shape_is(bd_resnet_stage(&r, 1), 2, 256, 16, 16) && shape_is(bd_resnet_stage(&r, 2), 2, 512, 8, 8) &&
           shape_is(bd_resnet_stage(&r, 3), 2, 1024, 4, 4) && shape_is(bd_resnet_stage(&r, 4), 2, 2048, 2, 2),
           "  C2..C5: 256, 512, 1024, 2048 channels at strides 4, 8, 16, 32");
        int stem_frozen = !bd_model_trained(&m, bd_model_find(&m, "backbone.conv1.weight")) &&
                          !bd_model_trained(&m, bd_model_find(&m, "backbone.layer1.2.conv3.weight"));
        int bn_frozen = !bd_model_trained(&m, bd_model_find(&m, "backbone.layer4.0.bn1.weight"));
        ok(stem_frozen && bd_model_trained(&m, bd_model_find(&m, "backbone.layer2.0.conv1.weight")),
           "  stem and layer1 frozen, layer2 trained");
        ok(bn_frozen, "  batch norm frozen everywhere");
        ok(trained_values(&m) == 23232512, "  trained values: the convolutions of layer2..4 (23232512)");
        /* gradients of all four stages join the backward */
        struct bd_tensor dst[4] = { { 0 } };
        const struct bd_tensor *dp[4];
        for (int k = 0; k < 4; k++) {
                bd_tensor_resize_like(be, &dst[k], bd_resnet_stage(&r, k + 1));
                bd_op_fill(be, &dst[k], 0.01 * (k + 1));
                dp[k] = &dst[k];
        }
        struct bd_sgd o;
        struct bd_sgd_cfg sc = { .lr = 0.1, .momentum = 0.9 };
        bd_sgd_init(&o, &m, &sc, &err);
        ok(bd_model_begin_backward(&m) == 0 && bd_resnet_bwd(&m, &r, dp, NULL) == 0, "backward with gradients for C2..C5");
        ok(bd_scratch_busy(&r.scratch) == 0, "  every scratch tensor given back");
        double g2;
        struct bd_tensor gl2 = bd_model_grad(&m, bd_model_find(&m, "backbone.layer2.0.conv1.weight"));
        bd_op_sumsq(be, &gl2, &g2);
        ok(g2 > 0, "  layer2 receives a gradient");
        ok(bd_sgd_step(&o, &m, 1.0, NULL) == 0, "an SGD step");
        struct bd_tensor after = { 0 };
        bd_tensor_resize_like(be, &after, &before);
        bd_model_get_params(&m, after.data);
        const struct bd_param *p1 = &m.p[bd_model_find(&m, "backbone.layer1.0.conv1.weight")];
        const struct bd_param *p2 = &m.p[bd_model_find(&m, "backbone.layer2.0.conv1.weight")];
        ok(memcmp((float *)before.data + p1->offset, (float *)after.data + p1->offset, (size_t)p1->numel * 4) == 0,
           "  frozen layer1 unchanged");
        ok(memcmp((float *)before.data + p2->offset, (float *)after.data + p2->offset, (size_t)p2->numel * 4) != 0,
           "  layer2 changed");
        for (int k = 0; k < 4; k++)
                bd_tensor_release(&dst[k]);
        bd_tensor_release(&before);
        bd_tensor_release(&after);
        bd_sgd_release(&o, &m);
        bd_resnet_release(&r);
        bd_model_release(&m);

        /* bad configurations and inputs */
        struct bd_resnet_cfg bad = { .depth = 20 };
        bd_model_init(&m, be, BD_F32);
        ok(bd_resnet_init(&r, &m, "", &bad) == -EINVAL, "depth 20 is an error");
        like(be->err.msg, "resnet: depth 20 (expected 18, 34 or 50)", "  saying which depths exist");
        bd_resnet_release(&r);
        bd_model_release(&m);
        struct bd_resnet_cfg small = { .depth = 18, .width = 16 };
        build(&m, &r, small);
        struct bd_tensor gray = { 0 };
        bd_tensor_resize(be, &gray, BD_F32, BD_NCHW, 4, (int64_t[]){ 1, 1, 32, 32 });
        ok(bd_resnet_fwd(&m, &r, &gray) == -EINVAL, "a one-channel image is an error");
        like(be->err.msg, "resnet: input (1, 1, 32, 32) f32 nchw, expected (N, 3, H, W)", "  naming its shape");
        bd_tensor_release(&gray);
        bd_resnet_release(&r);
        bd_model_release(&m);

        bd_tensor_release(&x);
        bd_backend_free(be);
        return done_testing();
}

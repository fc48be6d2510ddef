/* test-mrcnn-net.c: the Mask R-CNN network (trainer/maskrcnn/mrcnn-net.h) on
 * its own; the comparison with torchvision is tests/t0770-maskrcnn-golden.t.
 *
 *   - configuration checks (one-line errors naming the field);
 *   - the losses at initialisation: classifier ln K and objectness ln 2
 *     within 0.1 (the reference's initialisation makes the heads start
 *     there; the box head's random features move the classifier by a few
 *     hundredths, and builds with other flags sample other RoIs), mask loss
 *     near ln 2, all five finite, in both conventions;
 *   - determinism: two models from the same seed give identical losses and
 *     gradients, bit for bit;
 *   - gradients by central differences in float64 (step 1e-5) for weights of
 *     the box head, the box predictor and the mask head, whose values do not
 *     move the proposals: relative error < 1e-5 where the derivative is not
 *     tiny (|g| > 1e-7, else absolute < 1e-9), for at least 5 of the 6
 *     weights of each tensor: a ReLU whose input is within the step of zero
 *     (a kink) spoils one difference now and then, a wrong gradient all;
 *   - twenty SGD steps on one batch lower the total loss by at least 30 %;
 *   - inference: every detection's box inside the original image, labels
 *     in 1..K-1, scores in (0.05, 1], masks of the original size;
 *   - bad input: an empty batch, a padded size that is not a multiple of 32.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mask.h"
#include "mrcnn-net.h"
#include "mrcnn-test-batch.h"
#include "optim.h"
#include "tap.h"

/* ok() with a printf format (the values in the test's name) */
#undef ok
static int okf(int cond, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int okf(int cond, const char *file, int line, const char *fmt, ...)
{
        char b[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(b, sizeof(b), fmt, ap);
        va_end(ap);
        return tap_ok(cond, file, line, b);
}
#define ok(cond, ...) okf(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define fail(...) ok(0, __VA_ARGS__)
#define diag(...) (printf("# "), printf(__VA_ARGS__), printf("\n"))

struct fixture {
        struct bd_backend *be;
        struct bd_model m;
        struct mrcnn_net *net;
        struct det_batch b;
};

static void tiny_cfg(struct mrcnn_cfg *c, enum det_conv_kind mode)
{
        mrcnn_cfg_small(c, mode, 4);
        c->width_mult = 0.25;
        c->fpn_channels = 16;
        c->box_rep = 32;
        c->mask_dim = 16;
        c->rpn_pre_nms_top_n_train = 100;
        c->rpn_post_nms_top_n_train = 60;
        c->roi_batch = 32;
        c->rpn_batch = 64;
}

/* The fixture; on failure a failed test "WHAT: setup" and -1. */
static int setup(struct fixture *f, const struct mrcnn_cfg *c, enum bd_dtype dt, uint64_t seed, const char *what)
{
        struct bd_err err;
        memset(f, 0, sizeof(*f));
        if (bd_backend_new("cpu", 0, 2, &f->be, &err) < 0) {
                diag("backend: %s", err.msg);
                fail("%s: setup", what);
                return -1;
        }
        bd_model_init(&f->m, f->be, dt);
        f->m.training = 1;
        if (mrcnn_net_new(&f->m, c, &f->net, &err) < 0 || bd_model_finalize(&f->m, &err) < 0 ||
            bd_model_init_params(&f->m, seed, &err) < 0) {
                diag("model: %s", err.msg);
                fail("%s: setup", what);
                return -1;
        }
        make_batch(&f->b, 64, 64, c->mode);
        return 0;
}

static void teardown(struct fixture *f)
{
        mrcnn_net_free(f->net);
        bd_model_release(&f->m);
        f->be->ops->destroy(f->be);
        free_batch(&f->b);
}

static int step(struct fixture *f, uint64_t stepno, struct mrcnn_losses *L, int backward)
{
        struct bd_err err;
        struct mrcnn_step st = { .seed = 7, .step = stepno, .gscale = 1 };
        if (mrcnn_fwd_train(f->net, &f->m, &f->b, &st, L, &err) < 0) {
                diag("forward: %s", err.msg);
                return -1;
        }
        if (backward && (bd_model_begin_backward(&f->m) < 0 || mrcnn_bwd(f->net, &f->m, &err) < 0)) {
                diag("backward: %s", err.msg);
                return -1;
        }
        return 0;
}

static void test_cfg(void)
{
        struct mrcnn_cfg c;
        struct bd_err err;
        mrcnn_cfg_defaults(&c, DET_CONV_MLPERF);
        ok(mrcnn_cfg_check(&c, &err) == 0, "reference configuration is valid");
        is_int(c.depth, 50, "reference: ResNet-50");
        is_int(c.num_classes, 81, "reference: 81 classes");
        ok(c.conv.plus_one && c.rpn_per_batch && c.frozen_bn_eps == 0 && c.box_beta == 1.0 &&
                   c.mask_rule == MRCNN_MASK_POLYGON && c.bias_lr_factor == 2,
           "mlperf switch set");
        mrcnn_cfg_defaults(&c, DET_CONV_TORCHVISION);
        ok(!c.conv.plus_one && !c.rpn_per_batch && c.frozen_bn_eps == 1e-5 && fabs(c.box_beta - 1.0 / 9) < 1e-12 &&
                   c.mask_rule == MRCNN_MASK_ROIALIGN && c.bias_lr_factor == 1,
           "torchvision switch set");
        c.depth = 101;
        ok(mrcnn_cfg_check(&c, &err) == -EINVAL && strstr(err.msg, "resnet101"), "resnet101 refused: %s", err.msg);
        mrcnn_cfg_small(&c, DET_CONV_MLPERF, 5);
        c.mask_convs = 99;
        ok(mrcnn_cfg_check(&c, &err) == -EINVAL && strstr(err.msg, "mask convolutions"), "99 mask convs refused");
        c.mask_convs = 2;
        c.num_classes = 1;
        ok(mrcnn_cfg_check(&c, &err) == -EINVAL && strstr(err.msg, "classes"), "1 class refused");
}

static void test_init_losses(enum det_conv_kind mode)
{
        const char *mn = mode == DET_CONV_MLPERF ? "mlperf" : "torchvision";
        struct mrcnn_cfg c;
        tiny_cfg(&c, mode);
        struct fixture f;
        if (setup(&f, &c, BD_F32, 1, mn) < 0)
                return;
        struct mrcnn_losses L;
        if (step(&f, 1, &L, 1) < 0) {
                fail("%s: step", mn);
                teardown(&f);
                return;
        }
        ok(isfinite(L.total) && isfinite(L.rpn_box) && isfinite(L.box_reg), "%s: losses finite (total %.4f)", mn,
           L.total);
        if (mode == DET_CONV_MLPERF)    /* N(0, 0.01) logits: ln K */
                ok(fabs(L.classifier - log(4.0)) < 0.1, "%s: classifier %.4f ~ ln 4", mn, L.classifier);
        else                            /* nn.Linear's default: logits of a few tenths */
                ok(L.classifier > 0.5 && L.classifier < 2.5, "%s: classifier %.4f near ln 4", mn, L.classifier);
        ok(fabs(L.objectness - log(2.0)) < 0.1, "%s: objectness %.4f ~ ln 2", mn, L.objectness);
        ok(L.mask > 0.3 && L.mask < 1.5, "%s: mask loss %.4f near ln 2", mn, L.mask);
        ok(L.roi_pos >= 5, "%s: the ground truth boxes are among the positives (%lld)", mn, (long long)L.roi_pos);
        ok(L.rpn_pos > 0 && L.rpn_pos + L.rpn_neg <= 2 * c.rpn_batch, "%s: RPN sample %lld + %lld", mn,
           (long long)L.rpn_pos, (long long)L.rpn_neg);
        struct mrcnn_debug d;
        mrcnn_debug_get(f.net, &d);
        ok(d.nrois == L.roi_pos + L.roi_neg, "%s: debug RoIs (%lld) = sampled", mn, (long long)d.nrois);
        teardown(&f);
}

/* mean of |x| and the largest |x| of one float32 parameter */
static void param_stats(struct fixture *f, const char *name, double *mean_abs, double *max_abs, int64_t *fan_in)
{
        int id = bd_model_find(&f->m, name);
        *mean_abs = *max_abs = -1;
        *fan_in = 0;
        if (id < 0)
                return;
        struct bd_tensor p = bd_model_param(&f->m, id);
        const float *v = p.data;
        int64_t n = bd_tensor_numel(&p);
        double s = 0, mx = 0;
        for (int64_t i = 0; i < n; i++) {
                s += fabs(v[i]);
                mx = fmax(mx, fabs(v[i]));
        }
        *mean_abs = s / (double)n;
        *max_abs = mx;
        *fan_in = p.ndim == 2 ? p.dims[1] : 0;
}

/* The fully connected layers' initialisation rules per mode: mlperf the
 * reference's (fc6/fc7 kaiming_uniform(a=1), cls_score N(0, 0.01),
 * bbox_pred N(0, 0.001), biases 0), torchvision nn.Linear's default
 * (U(-b, b), b = 1/sqrt(in), for weights and biases). */
static void test_init_rules(enum det_conv_kind mode)
{
        const char *mn = mode == DET_CONV_MLPERF ? "mlperf" : "torchvision";
        struct mrcnn_cfg c;
        tiny_cfg(&c, mode);
        struct fixture f;
        if (setup(&f, &c, BD_F32, 1, mn) < 0)
                return;
        static const struct {
                const char *layer;
                double mlperf_mean_abs_x_sqrt_in;       /* E|w| * sqrt(in), 0: by std below */
                double mlperf_std;
        } L[] = {
                { "roi_heads.box_head.fc6", 0.5 * 1.7320508, 0 },       /* U(+-sqrt(3/in)) */
                { "roi_heads.box_head.fc7", 0.5 * 1.7320508, 0 },
                { "roi_heads.box_predictor.cls_score", 0, 0.01 },
                { "roi_heads.box_predictor.bbox_pred", 0, 0.001 },
        };
        for (size_t i = 0; i < sizeof(L) / sizeof(L[0]); i++) {
                char wn[128], bn[128];
                snprintf(wn, sizeof(wn), "%s.weight", L[i].layer);
                snprintf(bn, sizeof(bn), "%s.bias", L[i].layer);
                double wm, wx, bm, bx;
                int64_t in, bin;
                param_stats(&f, wn, &wm, &wx, &in);
                param_stats(&f, bn, &bm, &bx, &bin);
                if (wm < 0 || bm < 0 || in <= 0) {
                        fail("%s: %s: no such weight and bias", mn, L[i].layer);
                        continue;
                }
                double b = 1 / sqrt((double)in), want;
                if (mode == DET_CONV_TORCHVISION) {
                        want = 0.5 * b; /* E|U(-b, b)| */
                        ok(fabs(wm / want - 1) < 0.25 && wx <= b * (1 + 1e-6) && bm > 0 && bx <= b * (1 + 1e-6),
                           "%s: %s: weights and bias U(+-1/sqrt(%lld)) (mean |w| %.4g, want %.4g; largest |b| %.4g)",
                           mn, L[i].layer, (long long)in, wm, want, bx);
                } else {
                        want = L[i].mlperf_std ? L[i].mlperf_std * sqrt(2 / M_PI) : L[i].mlperf_mean_abs_x_sqrt_in * b;
                        ok(fabs(wm / want - 1) < 0.25 && bx == 0,
                           "%s: %s: the reference's rule (mean |w| %.4g, want %.4g), bias 0", mn, L[i].layer, wm, want);
                }
        }
        teardown(&f);
}

static void test_determinism(void)
{
        struct mrcnn_cfg c;
        tiny_cfg(&c, DET_CONV_MLPERF);
        struct fixture a, b;
        if (setup(&a, &c, BD_F32, 3, "determinism") < 0 || setup(&b, &c, BD_F32, 3, "determinism") < 0)
                return;
        struct mrcnn_losses la, lb;
        int ra = step(&a, 5, &la, 1), rb = step(&b, 5, &lb, 1);
        ok(ra == 0 && rb == 0 && memcmp(&la, &lb, sizeof(la)) == 0, "same seed: identical losses (%.6f, %.6f)", la.total,
           lb.total);
        struct bd_tensor ga = bd_model_all_grads(&a.m), gb = bd_model_all_grads(&b.m);
        ok(memcmp(ga.data, gb.data, bd_tensor_bytes(&ga)) == 0, "same seed: identical gradients");
        struct mrcnn_losses l6;
        step(&a, 6, &l6, 0);
        ok(l6.rpn_pos + l6.rpn_neg > 0, "another step draws another sample (total %.6f)", l6.total);
        teardown(&a);
        teardown(&b);
}

/* central differences of the total loss over a few weights of a parameter */
static void check_param(struct fixture *f, const char *name)
{
        int id = bd_model_find(&f->m, name);
        if (id < 0) {
                fail("gradient check: no parameter %s", name);
                return;
        }
        struct mrcnn_losses L;
        if (step(f, 1, &L, 1) < 0) {
                fail("gradient check %s: step", name);
                return;
        }
        struct bd_tensor p = bd_model_param(&f->m, id), g = bd_model_grad(&f->m, id);
        double *pv = p.data, *gv = g.data;
        int64_t n = p.ndim ? bd_tensor_numel(&p) : 0;
        double worst = 0, second = 0;
        int checked = 0;
        for (int k = 0; k < 6 && n > 0; k++) {
                int64_t j = (int64_t)((k * 7919 + 13) % n);
                double g0 = gv[j], v = pv[j], h = 1e-5, lp, lm;
                pv[j] = v + h;
                f->m.version++;
                step(f, 1, &L, 0);
                lp = L.total;
                pv[j] = v - h;
                f->m.version++;
                step(f, 1, &L, 0);
                lm = L.total;
                pv[j] = v;
                f->m.version++;
                double fd = (lp - lm) / (2 * h);
                double e = fabs(g0) > 1e-7 ? fabs(fd - g0) / fabs(g0) : fabs(fd - g0) * 1e-2;
                if (e > worst) {
                        second = worst;
                        worst = e;
                } else if (e > second) {
                        second = e;
                }
                checked++;
        }
        ok(checked > 1 && second < 1e-5, "float64 gradient of %s by central differences: errors %.2e and below %.2e",
           name, worst, second);
}

static void test_gradients(enum det_conv_kind mode)
{
        struct mrcnn_cfg c;
        tiny_cfg(&c, mode);
        struct fixture f;
        if (setup(&f, &c, BD_F64, 11, "gradient check") < 0)
                return;
        static const char *const names[] = {
                "roi_heads.box_head.fc6.weight", "roi_heads.box_head.fc7.bias",
                "roi_heads.box_predictor.cls_score.weight", "roi_heads.box_predictor.bbox_pred.weight",
                "roi_heads.mask_head.0.0.weight", "roi_heads.mask_predictor.conv5_mask.weight",
                "roi_heads.mask_predictor.mask_fcn_logits.bias",
        };
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                check_param(&f, names[i]);
        teardown(&f);
}

/* 20 SGD steps on the fixture's one batch: the first and the last losses;
 * -1 (a failed test named WHAT) when a step fails. */
static int train20(struct fixture *f, const char *what, struct mrcnn_losses *first, struct mrcnn_losses *last)
{
        struct bd_err err;
        struct bd_sgd sgd;
        struct bd_sgd_cfg sc = { .lr = 0.02, .momentum = 0.9, .weight_decay = 1e-4, .gamma = 0.1 };
        if (bd_sgd_init(&sgd, &f->m, &sc, &err) < 0) {
                fail("%s: sgd: %s", what, err.msg);
                return -1;
        }
        int r = 0;
        for (int s = 1; s <= 20 && r == 0; s++) {
                if (step(f, (uint64_t)s, last, 1) < 0 || bd_sgd_step(&sgd, &f->m, 1.0, NULL) < 0)
                        r = -1;
                if (s == 1)
                        *first = *last;
        }
        bd_sgd_release(&sgd, &f->m);
        if (r < 0)
                fail("%s: a training step failed", what);
        return r;
}

static void test_learns_and_detects(void)
{
        struct mrcnn_cfg c;
        tiny_cfg(&c, DET_CONV_TORCHVISION);
        struct fixture f;
        struct bd_err err;
        if (setup(&f, &c, BD_F32, 5, "learning") < 0)
                return;
        struct mrcnn_losses L = { 0 }, first = { 0 };
        int bad = train20(&f, "learning", &first, &L) < 0;
        ok(!bad && L.total < 0.7 * first.total, "20 steps on one batch: total loss %.4f -> %.4f", first.total, L.total);
        struct mrcnn_dets d[NIMG];
        int r = mrcnn_detect(f.net, &f.m, &f.b, d, &err);
        ok(r == 0, "inference runs%s%s", r ? ": " : "", r ? err.msg : "");
        int inside = 1, labels = 1, scores = 1, masks = 1;
        int64_t total = 0;
        for (int i = 0; r == 0 && i < NIMG; i++) {
                const struct det_sample *s = &f.b.samples[i];
                ok(d[i].image_id == s->image_id, "image %d: its id", i);
                total += d[i].n;
                for (int64_t j = 0; j < d[i].n; j++) {
                        const float *bx = d[i].boxes + 4 * j;
                        inside &= bx[0] >= 0 && bx[1] >= 0 && bx[2] <= s->orig_width && bx[3] <= s->orig_height &&
                                  bx[0] <= bx[2] && bx[1] <= bx[3];
                        labels &= d[i].labels[j] >= 1 && d[i].labels[j] < c.num_classes;
                        scores &= d[i].scores[j] > 0.05f && d[i].scores[j] <= 1;
                        masks &= d[i].masks[j].h == (uint32_t)s->orig_height && d[i].masks[j].w == (uint32_t)s->orig_width;
                }
                mrcnn_dets_release(&d[i]);
        }
        ok(total > 0 && total <= NIMG * c.detections, "%lld detections, at most %d per image", (long long)total,
           c.detections);
        ok(inside, "boxes inside the original images");
        ok(labels, "labels in 1..K-1");
        ok(scores, "scores in (0.05, 1]");
        ok(masks, "masks at the original size");
        teardown(&f);
}

/* Faster R-CNN (masks 0): no mask parameters, no mask loss, it learns, and
 * its detections have boxes and no masks */
static void test_faster_rcnn(void)
{
        struct mrcnn_cfg c, cm;
        tiny_cfg(&c, DET_CONV_TORCHVISION);
        cm = c;
        c.masks = 0;
        struct fixture f, fm;
        struct bd_err err;
        if (setup(&f, &c, BD_F32, 5, "faster r-cnn") < 0)
                return;
        if (setup(&fm, &cm, BD_F32, 5, "faster r-cnn: its mask r-cnn") < 0) {
                teardown(&f);
                return;
        }
        ok(bd_model_find(&f.m, "roi_heads.mask_predictor.mask_fcn_logits.weight") < 0 &&
           bd_model_find(&f.m, "roi_heads.box_predictor.cls_score.weight") >= 0 && f.m.n_train < fm.m.n_train,
           "faster r-cnn: the box head and no mask head (%zu of Mask R-CNN's %zu trained parameters)", f.m.n_train,
           fm.m.n_train);
        teardown(&fm);
        struct mrcnn_losses L = { 0 }, first = { 0 };
        int bad = train20(&f, "faster r-cnn", &first, &L) < 0;
        ok(!bad && first.mask == 0 && L.mask == 0 &&
           fabs(L.total - (L.objectness + L.rpn_box + L.classifier + L.box_reg)) < 1e-9,
           "faster r-cnn: four losses, no mask loss (total %.4f)", L.total);
        ok(!bad && L.total < 0.7 * first.total, "faster r-cnn: 20 steps on one batch: total loss %.4f -> %.4f",
           first.total, L.total);
        struct mrcnn_dets d[NIMG];
        int r = mrcnn_detect(f.net, &f.m, &f.b, d, &err);
        ok(r == 0, "faster r-cnn: inference runs%s%s", r ? ": " : "", r ? err.msg : "");
        int64_t total = 0, with_masks = 0;
        for (int i = 0; r == 0 && i < NIMG; i++) {
                total += d[i].n;
                for (int64_t j = 0; j < d[i].n; j++)
                        with_masks += d[i].masks && d[i].masks[j].h > 0;
                mrcnn_dets_release(&d[i]);
        }
        ok(r == 0 && total > 0 && with_masks == 0, "faster r-cnn: %lld detections, boxes without masks",
           (long long)total);
        teardown(&f);
}

static void test_bad_input(void)
{
        struct mrcnn_cfg c;
        tiny_cfg(&c, DET_CONV_MLPERF);
        struct fixture f;
        struct bd_err err;
        if (setup(&f, &c, BD_F32, 1, "bad input") < 0)
                return;
        struct mrcnn_losses L;
        struct mrcnn_step st = { .seed = 1, .step = 1, .gscale = 1 };
        int n = f.b.n;
        f.b.n = 0;
        ok(mrcnn_fwd_train(f.net, &f.m, &f.b, &st, &L, &err) == -EINVAL, "an empty batch: %s", err.msg);
        f.b.n = n;
        f.b.width = 48;         /* a view of the first 48 columns' worth of memory: never read past it */
        ok(mrcnn_fwd_train(f.net, &f.m, &f.b, &st, &L, &err) < 0 && strstr(err.msg, "multiple of 32"),
           "a padded width of 48: %s", err.msg);
        f.b.width = 64;
        ok(mrcnn_bwd(f.net, &f.m, &err) == -EINVAL, "a backward without a forward: %s", err.msg);
        teardown(&f);
}

int main(void)
{
        test_cfg();
        test_init_losses(DET_CONV_MLPERF);
        test_init_losses(DET_CONV_TORCHVISION);
        test_init_rules(DET_CONV_MLPERF);
        test_init_rules(DET_CONV_TORCHVISION);
        test_determinism();
        test_gradients(DET_CONV_MLPERF);
        test_gradients(DET_CONV_TORCHVISION);
        test_learns_and_detects();
        test_faster_rcnn();
        test_bad_input();
        return done_testing();
}

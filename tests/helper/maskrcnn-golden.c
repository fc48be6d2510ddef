/* maskrcnn-golden.c: a whole Mask R-CNN training step of our network
 * (trainer/maskrcnn/mrcnn-net.h) against torchvision's MaskRCNN with the same
 * weights, inputs and injected sampler choices (tests/maskrcnn-golden.py gen
 * DIR), as TAP; driven by t0800-maskrcnn-golden.t.
 *
 *     maskrcnn-golden DIR [--threads N] [--f32] [--verbose]
 *
 * Builds the model the generator describes (DIR/golden.bin "config": the
 * convention, then mrcnn_cfg_small's fields set to the generator's sizes,
 * frozen batch norm), loads DIR/weights.bdw by name (strict, complete), gives
 * it the generator's padded batch and polygon targets as det-loader would,
 * runs mrcnn_fwd_train with the recorded torch.randperm heads (struct
 * mrcnn_inject) and mrcnn_bwd, and compares with the float64 reference:
 *
 *   sampled counts         RPN and RoI positives and negatives: equal
 *   proposals              per image (with the GT appended): the same count,
 *                          every coordinate within 1e-4 (1 + |v|) in order
 *   sampled RoIs           the same count, rows within 1e-4 (1 + |v|), the
 *                          same labels, image by image in proposal order (the
 *                          references' torch.where(pos | neg))
 *   losses                 each of the five and their sum: relative 1e-6
 *   gradients              every trained parameter (exactly the reference's
 *                          trained set): relative L2 error < 1e-4, and the
 *                          whole gradient's < 1e-5
 *
 * With --f32 the model is float32 (the default is float64: the reference's
 * arithmetic, where only summation order differs).  The discrete decisions
 * (proposals, samples) are compared first; where they differ from the
 * float64 reference the numeric comparisons are skipped (a rounding moved a
 * decision: not an error).  Tolerances then: losses relative 1e-4, each
 * gradient tensor's relative L2 < 1e-2, the whole gradient's < 5e-3
 * (torchvision's own float32 errors, printed alongside, are ~1e-7 for the
 * losses and <= 1e-5 for the gradients of the generator's model).  The
 * gradient bounds are loose because of ReLU flips: a pre-activation within
 * float32 rounding of zero (the mask head's deconvolution sums 256 products
 * of values of size ~1: an absolute error ~1e-5) is positive on one side and
 * zero on the other, and that one element's gradient moves every weight
 * gradient upstream of it.  Seen here: 1 of 400k deconvolution outputs
 * flipped (206,374 positives against 206,373 in float64) gave 1.2e-3 at
 * conv5_mask and everything before it, with the float32 losses within 9e-7.
 * float64 is the strict check.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "mrcnn-net.h"
#include "strutil.h"
#include "golden-bin.h"
#include "../unit/tap.h"

/* golden.bin "config": the order of CONFIG_KEYS in tests/maskrcnn-golden.py */
enum {
        C_MODE, C_DEPTH, C_WIDTH_MULT, C_FPN, C_CLASSES, C_FREEZE_AT, C_ANCHOR, C_PRE, C_POST, C_LEVEL_CAP,
        C_RPN_BATCH, C_RPN_FRAC, C_ROI_BATCH, C_ROI_FRAC, C_BOX_REP, C_MASK_CONVS, C_MASK_DIM, C_BN_EPS,
        C_BOX_BETA, C_SEED, C_DTYPE_BITS, C_BATCH, C_HEIGHT, C_WIDTH, C_COUNT
};

#define MAXN 8

static int f32;                 /* --f32: a float32 model */
static int verbose;             /* --verbose: every gradient tensor's error */

static const void *arr(const char *name, int type)
{
        return gb_get(name, type)->data;
}

/* the array "prefix:i" (one per image) */
static const struct garr *arrf(int type, const char *prefix, int i)
{
        char name[64];
        snprintf(name, sizeof(name), "%s:%d", prefix, i);
        return gb_get(name, type);
}

static int64_t *i64_of(const struct garr *a)
{
        int64_t *v = xmalloc((size_t)(a->n + 1) * sizeof(*v));
        for (int64_t k = 0; k < a->n; k++)
                v[k] = ((const int32_t *)a->data)[k];
        return v;
}

/* every coordinate of (n, w) rows within tol (1 + |want|); the first row that
 * is not is printed; returns the number of such rows */
static int64_t rows_differ(const char *what, const float *got, const float *want, int64_t n, int w, double tol)
{
        int64_t bad = 0;
        for (int64_t r = 0; r < n; r++) {
                int same = 1;
                for (int k = 0; k < w; k++)
                        same &= fabs((double)got[r * w + k] - want[r * w + k]) <= tol * (1 + fabs(want[r * w + k]));
                if (!same && bad++ == 0) {
                        printf("#   %s: first differing row %lld: ours", what, (long long)r);
                        for (int k = 0; k < w; k++)
                                printf(" %.9g", got[r * w + k]);
                        printf(", reference");
                        for (int k = 0; k < w; k++)
                                printf(" %.9g", want[r * w + k]);
                        printf("\n");
                }
        }
        return bad;
}

/* the generator's padded batch and polygon targets as det-loader gives them */
static void make_batch(struct det_batch *b, int N, int H, int W)
{
        const int32_t *hw = arr("image_hw", GB_I32);
        b->n = N;
        b->height = H;
        b->width = W;
        b->images = (float *)arr("image", GB_F32);
        b->samples = xcalloc((size_t)N, sizeof(*b->samples));
        for (int i = 0; i < N; i++) {
                struct det_sample *s = &b->samples[i];
                s->image_id = i;
                s->height = s->orig_height = hw[2 * i];
                s->width = s->orig_width = hw[2 * i + 1];
                s->scale_x = s->scale_y = 1.0;
                const struct garr *boxes = arrf(GB_F32, "gt_boxes", i);
                const int32_t *labels = arrf(GB_I32, "gt_labels", i)->data;
                const struct garr *nparts = arrf(GB_I32, "gt_nparts", i);
                const struct garr *plen = arrf(GB_I32, "gt_plen", i);
                const struct garr *xy = arrf(GB_F64, "gt_xy", i);
                struct det_target *t = &s->target;
                t->n = (int)boxes->dims[0];
                t->objects = xcalloc((size_t)t->n + 1, sizeof(*t->objects));
                t->poly_len = xcalloc((size_t)plen->n + 1, sizeof(*t->poly_len));
                t->xy = xcalloc((size_t)xy->n + 1, sizeof(*t->xy));
                t->n_poly = (size_t)plen->n;
                t->n_xy = (size_t)xy->n;
                t->cap_obj = (size_t)t->n;
                t->cap_poly = t->n_poly;
                t->cap_xy = t->n_xy;
                for (int64_t k = 0; k < plen->n; k++)
                        t->poly_len[k] = (uint32_t)((const int32_t *)plen->data)[k];
                memcpy(t->xy, xy->data, t->n_xy * sizeof(double));
                uint32_t part = 0;
                size_t at = 0;
                for (int j = 0; j < t->n; j++) {
                        struct det_object *o = &t->objects[j];
                        for (int k = 0; k < 4; k++)
                                o->box[k] = ((const float *)boxes->data)[4 * j + k];
                        o->label = labels[j];
                        o->mask = DET_MASK_POLYGONS;
                        o->first = part;
                        o->n = (uint32_t)((const int32_t *)nparts->data)[j];
                        o->xy_first = at;
                        o->ann_id = j + 1;
                        for (uint32_t q = 0; q < o->n; q++)
                                at += t->poly_len[part + q];
                        part += o->n;
                }
        }
}

static void free_batch(struct det_batch *b)
{
        for (int i = 0; i < b->n; i++) {
                free(b->samples[i].target.objects);
                free(b->samples[i].target.poly_len);
                free(b->samples[i].target.xy);
        }
        free(b->samples);
}

int main(int argc, char **argv)
{
        static const struct option lo[] = { { "threads", 1, NULL, 't' }, { "f32", 0, NULL, 'F' },
                                            { "verbose", 0, NULL, 'v' },
                                            { NULL, 0, NULL, 0 } };
        int c, threads = 0;
        long v;
        while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
                switch (c) {
                case 't':
                        if (str_parse_long(optarg, &v) < 0 || v < 0) {
                                fprintf(stderr, "maskrcnn-golden: bad --threads '%s'\n", optarg);
                                return 2;
                        }
                        threads = (int)v;
                        break;
                case 'F': f32 = 1; break;
                case 'v': verbose = 1; break;
                default: return 2;
                }
        }
        if (optind + 1 != argc) {
                fprintf(stderr, "usage: maskrcnn-golden DIR [--threads N] [--f32] [--verbose]\n");
                return 2;
        }
        const char *dir = argv[optind];
        char path[4096];
        gb_open_dir(dir);
        const struct garr *ca = gb_get("config", GB_F64);
        if (ca->n != C_COUNT) {
                printf("Bail out! config has %lld values, this helper knows %d\n", (long long)ca->n, C_COUNT);
                return 1;
        }
        const double *cf = ca->data;
        int N = (int)cf[C_BATCH], H = (int)cf[C_HEIGHT], W = (int)cf[C_WIDTH];
        if (N < 1 || N > MAXN) {
                printf("Bail out! batch of %d images\n", N);
                return 1;
        }
        struct bd_err err;
        struct bd_backend *be;
        if (bd_backend_cpu_new(threads, &be, &err) < 0) {
                printf("1..0 # SKIP %s\n", err.msg);
                return 0;
        }

        /* the model: the small configuration in the convention, the generator's sizes */
        enum det_conv_kind mode = cf[C_MODE] == 0 ? DET_CONV_MLPERF : DET_CONV_TORCHVISION;
        struct mrcnn_cfg cfg;
        mrcnn_cfg_small(&cfg, mode, (int)cf[C_CLASSES]);
        cfg.depth = (int)cf[C_DEPTH];
        cfg.width_mult = cf[C_WIDTH_MULT];
        cfg.fpn_channels = (int)cf[C_FPN];
        cfg.freeze_at = (int)cf[C_FREEZE_AT];
        cfg.frozen_bn = 1;
        cfg.anchor_size = (float)cf[C_ANCHOR];
        cfg.rpn_pre_nms_top_n_train = (int)cf[C_PRE];
        cfg.rpn_post_nms_top_n_train = (int)cf[C_POST];
        cfg.rpn_batch = (int)cf[C_RPN_BATCH];
        cfg.rpn_positive_fraction = cf[C_RPN_FRAC];
        cfg.roi_batch = (int)cf[C_ROI_BATCH];
        cfg.roi_positive_fraction = cf[C_ROI_FRAC];
        cfg.box_rep = (int)cf[C_BOX_REP];
        cfg.mask_convs = (int)cf[C_MASK_CONVS];
        cfg.mask_dim = (int)cf[C_MASK_DIM];
        printf("# %s convention, ResNet-%d x %g (freeze_at %d), FPN %d, %d classes, %d images %dx%d, %s model; "
               "the reference's per-level cap after NMS: %d\n", mode == DET_CONV_MLPERF ? "mlperf" : "torchvision",
               cfg.depth, cfg.width_mult, cfg.freeze_at, cfg.fpn_channels, cfg.num_classes, N, H, W,
               f32 ? "float32" : "float64", (int)cf[C_LEVEL_CAP]);
        if (!ok(mrcnn_cfg_check(&cfg, &err) == 0, "the generator's configuration is valid"))
                printf("#   %s\n", err.msg);
        ok(cfg.frozen_bn_eps == cf[C_BN_EPS] && fabs(cfg.box_beta - cf[C_BOX_BETA]) < 1e-12,
           "the convention's frozen-BN eps and box smooth-L1 beta are the generator's");
        if (cfg.frozen_bn_eps != cf[C_BN_EPS] || fabs(cfg.box_beta - cf[C_BOX_BETA]) >= 1e-12)
                printf("#   ours eps %g beta %g, generator %g %g\n", cfg.frozen_bn_eps, cfg.box_beta, cf[C_BN_EPS],
                       cf[C_BOX_BETA]);

        struct bd_model m;
        struct mrcnn_net *net = NULL;
        bd_model_init(&m, be, f32 ? BD_F32 : BD_F64);
        m.training = 1;
        if (!ok(mrcnn_net_new(&m, &cfg, &net, &err) == 0 && bd_model_finalize(&m, &err) == 0, "network built")) {
                printf("#   %s\n", err.msg);
                goto out;
        }
        snprintf(path, sizeof(path), "%s/weights.bdw", dir);
        struct bd_weights_report rep = { 0 };
        if (!ok(bd_weights_load(path, &m, "", NULL, BD_WEIGHTS_STRICT | BD_WEIGHTS_COMPLETE, &rep, &err) == 0,
                "weights loaded by name, strictly and completely"))
                printf("#   %s\n", err.msg);
        is_int(rep.loaded, m.np, "every tensor of the model loaded");

        /* the trained set: exactly the reference's parameters with a gradient */
        int ngrad = 0, missing = 0, ntrained = 0;
        for (int i = 0; i < gb_narrs; i++)
                ngrad += !strncmp(gb_arrs[i].name, "grad:", 5);
        for (int id = 0; id < m.np; id++) {
                if (!bd_model_trained(&m, id))
                        continue;
                ntrained++;
                char name[200];
                snprintf(name, sizeof(name), "grad:%s", m.p[id].name);
                if (!gb_find(name) && missing++ < 5)
                        printf("#   trained here, not in the reference: %s\n", m.p[id].name);
        }
        ok(missing == 0 && ntrained == ngrad, "the trained parameters are the reference's");
        printf("# %d trained parameter tensors (reference %d)\n", ntrained, ngrad);

        /* the step with the recorded samples */
        struct det_batch b = { 0 };
        make_batch(&b, N, H, W);
        struct det_perm rpn[MAXN], roi[MAXN];
        int64_t *keep[4 * MAXN];
        int nkeep = 0;
        const int32_t *rc = arr("rpn_count", GB_I32), *qc = arr("roi_count", GB_I32);
        for (int i = 0; i < N; i++) {
                keep[nkeep++] = i64_of(arrf(GB_I32, "rpn_perm_pos", i));
                keep[nkeep++] = i64_of(arrf(GB_I32, "rpn_perm_neg", i));
                keep[nkeep++] = i64_of(arrf(GB_I32, "roi_perm_pos", i));
                keep[nkeep++] = i64_of(arrf(GB_I32, "roi_perm_neg", i));
                rpn[i] = (struct det_perm){ keep[nkeep - 4], rc[2 * i], keep[nkeep - 3], rc[2 * i + 1] };
                roi[i] = (struct det_perm){ keep[nkeep - 2], qc[2 * i], keep[nkeep - 1], qc[2 * i + 1] };
        }
        struct mrcnn_inject inj = { rpn, roi };
        struct mrcnn_step st = { .seed = (uint64_t)cf[C_SEED], .step = 1, .image_base = 0, .inj = &inj,
                                 .gscale = 1.0, .dp = NULL };
        struct mrcnn_losses L = { 0 };
        if (!ok(mrcnn_fwd_train(net, &m, &b, &st, &L, &err) == 0, "training forward with the injected samples")) {
                printf("#   %s\n", err.msg);
                goto out_batch;
        }

        /* discrete decisions */
        const int32_t *sampled = arr("sampled", GB_I32);
        int64_t ours_s[4] = { L.rpn_pos, L.rpn_neg, L.roi_pos, L.roi_neg };
        int same_s = 1;
        for (int k = 0; k < 4; k++)
                same_s &= ours_s[k] == sampled[k];
        ok(same_s, "sampled anchors and RoIs: the reference's counts");
        printf("# sampled RPN %lld + %lld, RoI %lld + %lld; reference %d + %d, %d + %d\n", (long long)L.rpn_pos,
               (long long)L.rpn_neg, (long long)L.roi_pos, (long long)L.roi_neg, sampled[0], sampled[1], sampled[2],
               sampled[3]);
        struct mrcnn_debug dbg;
        mrcnn_debug_get(net, &dbg);
        int same_p = 1;
        const float *pp = dbg.props;
        for (int i = 0; i < N; i++) {
                const struct garr *rp = arrf(GB_F32, "props", i);
                char what[64];
                snprintf(what, sizeof(what), "image %d proposals", i);
                if (dbg.nprops[i] != rp->dims[0]) {
                        printf("#   %s: %lld, reference %lld\n", what, (long long)dbg.nprops[i],
                               (long long)rp->dims[0]);
                        same_p = 0;
                }
                int64_t n = dbg.nprops[i] < rp->dims[0] ? dbg.nprops[i] : rp->dims[0];
                if (pp && rows_differ(what, pp, rp->data, n, 4, 1e-4) > 0)
                        same_p = 0;
                if (pp)
                        pp += 4 * dbg.nprops[i];
        }
        ok(same_p, "proposals per image (GT appended): the reference's, in its order");
        const struct garr *rr = gb_get("rois", GB_F32);
        const int32_t *rl = arr("roi_labels", GB_I32);
        int same_r = dbg.nrois == rr->dims[0];
        if (!same_r)
                printf("#   %lld sampled RoIs, reference %lld\n", (long long)dbg.nrois, (long long)rr->dims[0]);
        int64_t nr = dbg.nrois < rr->dims[0] ? dbg.nrois : rr->dims[0];
        if (dbg.rois && rows_differ("sampled RoIs", dbg.rois, rr->data, nr, 5, 1e-4) > 0)
                same_r = 0;
        for (int64_t r = 0; r < nr && dbg.roi_labels; r++)
                if (dbg.roi_labels[r] != rl[r]) {
                        printf("#   sampled RoI %lld: label %d, reference %d\n", (long long)r, dbg.roi_labels[r],
                               rl[r]);
                        same_r = 0;
                        break;
                }
        ok(same_r, "sampled RoIs and their labels: the reference's, in proposal order");
        int decisions = same_s && same_p && same_r;
        if (f32 && !decisions) {
                printf("# SKIP the float32 model's decisions differ from the float64 reference's: "
                       "no numeric comparison\n");
                goto out_batch;
        }

        /* losses */
        const double *wl = arr("losses", GB_F64);
        const double *e32 = arr("err32_losses", GB_F64);
        double ours_l[6] = { L.objectness, L.rpn_box, L.classifier, L.box_reg, L.mask, L.total };
        static const char *const lname[6] = { "objectness", "rpn_box", "classifier", "box_reg", "mask", "total" };
        double ltol = f32 ? 1e-4 : 1e-6;
        for (int k = 0; k < 6; k++) {
                double rel = fabs(ours_l[k] - wl[k]) / fmax(fabs(wl[k]), 1e-30);
                char what[96];
                snprintf(what, sizeof(what), "loss %s within %g of the reference (relative)", lname[k], ltol);
                if (!ok(rel <= ltol, what) || f32)
                        printf("#   %s: ours %.12g, reference %.12g, relative %.3g (torchvision float32 %.2g)\n",
                               lname[k], ours_l[k], wl[k], rel, k < 5 ? e32[k] : 0.0);
        }

        /* gradients */
        if (!ok(mrcnn_bwd(net, &m, &err) == 0, "backward")) {
                printf("#   %s\n", err.msg);
                goto out_batch;
        }
        double gtol = f32 ? 1e-2 : 1e-4, wtol = f32 ? 5e-3 : 1e-5;
        double worst = 0, d2 = 0, n2 = 0;
        const char *worst_name = "";
        int gbad = 0, gn = 0;
        for (int id = 0; id < m.np; id++) {
                if (!bd_model_trained(&m, id))
                        continue;
                char name[200];
                snprintf(name, sizeof(name), "grad:%s", m.p[id].name);
                const struct garr *ga = gb_find(name);
                if (!ga || ga->type != GB_F32 || ga->n != m.p[id].numel)
                        continue;
                struct bd_tensor g = bd_model_grad(&m, id);
                const float *t = ga->data;
                double d = 0, n = 0;
                for (int64_t j = 0; j < ga->n; j++) {
                        double o = f32 ? ((const float *)g.data)[j] : ((const double *)g.data)[j];
                        d += (o - t[j]) * (o - t[j]);
                        n += (double)t[j] * t[j];
                }
                d2 += d;
                n2 += n;
                double rel = n > 0 ? sqrt(d / n) : sqrt(d);
                gn++;
                snprintf(name, sizeof(name), "err32:%s", m.p[id].name);
                double tv32 = ((const double *)gb_get(name, GB_F64)->data)[0];
                if ((!(rel < gtol) && gbad++ < 10) || verbose)
                        printf("#   %s: relative L2 %.3g (|g| %.3g; torchvision float32 %.2g)\n", m.p[id].name, rel,
                               sqrt(n), tv32);
                if (!(rel <= worst))
                        worst = rel, worst_name = m.p[id].name;
        }
        double whole = n2 > 0 ? sqrt(d2 / n2) : sqrt(d2);
        printf("# %d gradient tensors compared, largest relative L2 error %.3g (%s), whole gradient %.3g\n", gn, worst,
               worst_name, whole);
        char what[96];
        snprintf(what, sizeof(what), "every gradient tensor within relative L2 %g of the reference", gtol);
        ok(gbad == 0 && gn == ngrad, what);
        snprintf(what, sizeof(what), "the whole gradient within relative L2 %g", wtol);
        ok(whole < wtol, what);

out_batch:
        for (int k = 0; k < nkeep; k++)
                free(keep[k]);
        free_batch(&b);
out:
        mrcnn_net_free(net);
        bd_model_release(&m);
        bd_backend_free(be);
        gb_free();
        return done_testing();
}

/* test-det-roi.c: RoIAlign, multi-scale RoIAlign and mask targets of
 * trainer/det/roi-align.[ch] on the CPU backend.
 *
 * Against torchvision 0.14's answers recorded by tests/det-roi-golden.py in
 * det-roi-golden.h (maps, gradients and masks from integer formulas that
 * both sides compute):
 *   roi_align forward, six configurations, NCHW and NHWC maps:
 *     |got - want| <= 1e-5 max(|want|, 1e-6) (the arithmetic is
 *     torchvision's: in practice bit-equal; the diagnostics say how many differ);
 *   roi_align backward (autograd), three configurations: the same tolerance;
 *   MultiScaleRoIAlign: inferred scales and the mapper's levels exact, 7x7
 *     output as above (and bit-identical with the maps in mixed layouts), 14x14 output and map gradients by digests
 *     (sum v[i] (1 + i % 7) in double): rel 1e-6;
 *   project_masks_on_boxes: M = 14 as the forward, M = 28 digests rel 1e-6.
 * The MLPerf mapper (+1 areas, eps inside log2) against the formula in
 * double on 2000 random boxes (those within 1e-4 of a level boundary
 * skipped), and one box where the two conventions differ.
 * Backward against central differences in float64: RoIAlign is linear in
 * the map, so the differences are exact up to rounding: |num - ana| <= 1e-8
 * (the kinks of bilinear sampling are in the RoI coordinates, which get no
 * gradient).  NCHW, NCHW8C and NHWC give bit-identical forward and backward
 * results, one and two threads too; BD_ACC_DX adds (|error| <= 1e-5 max |dx|).  Bad input: NaN,
 * infinite and huge coordinates, batch index out of range or fractional,
 * R == 0, caller-given levels out of range, wrong shapes and types.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "elem.h"
#include "roi-align.h"
#include "tap.h"
#include "det-roi-golden.h"

static struct bd_backend *be;
static const struct det_conv *MP = &det_conv_mlperf, *TV = &det_conv_torchvision;

/* ---- the formulas of det-roi-golden.py ---- */

static double fmap_v(int64_t i, int salt)
{
        return (double)((i * 7919 + salt * 104729) % 1009) / 1009.0 - 0.5;
}

static double fgrad_v(int64_t i, int salt)
{
        return (double)((i * 37 + salt) % 17 - 8) / 8.0;
}

static double digest(const float *v, int64_t n)
{
        double s = 0;
        for (int64_t i = 0; i < n; i++)
                s += (double)v[i] * (double)(1 + i % 7);
        return s;
}

/* an owned (N, C, H, W) map in a layout with logical NCHW values f(i) */
static void make_map(struct bd_tensor *t, enum bd_dtype dt, enum bd_layout l, const int64_t dims[4], int salt,
                     double (*f)(int64_t, int))
{
        memset(t, 0, sizeof(*t));
        if (bd_tensor_resize(be, t, dt, l, 4, dims) < 0)
                abort();
        struct bd_shape4 s = { dims[0], dims[1], dims[2], dims[3], l };
        int64_t i = 0;
        for (int64_t n = 0; n < dims[0]; n++)
                for (int64_t c = 0; c < dims[1]; c++)
                        for (int64_t h = 0; h < dims[2]; h++)
                                for (int64_t w = 0; w < dims[3]; w++, i++) {
                                        int64_t o = bd_off4(&s, n, c, h, w);
                                        if (dt == BD_F64)
                                                ((double *)t->data)[o] = f(i, salt);
                                        else
                                                ((float *)t->data)[o] = (float)f(i, salt);
                                }
}

/* logical NCHW copy of a map's values as float (or double) */
static void *to_nchw(const struct bd_tensor *t)
{
        struct bd_shape4 s = { BD_N(t), BD_C(t), BD_H(t), BD_W(t), t->layout };
        size_t es = bd_dtype_size(t->dtype);
        char *out = xmalloc((size_t)bd_tensor_numel(t) * es);
        int64_t i = 0;
        for (int64_t n = 0; n < s.N; n++)
                for (int64_t c = 0; c < s.C; c++)
                        for (int64_t h = 0; h < s.H; h++)
                                for (int64_t w = 0; w < s.W; w++, i++)
                                        memcpy(out + i * es, (char *)t->data + bd_off4(&s, n, c, h, w) * es, es);
        return out;
}

static struct bd_tensor view2(const void *p, enum bd_dtype dt, int64_t r, int64_t k)
{
        int64_t d[2] = { r, k };
        return bd_tensor_view((void *)p, BD_CPU, dt, BD_NCHW, 2, d);
}

static int close_to(double got, double want, double rel, double floor_)
{
        double scale = fabs(want) > floor_ ? fabs(want) : floor_;
        return fabs(got - want) <= rel * scale;
}

static void check_floats(const float *got, const float *want, int64_t n, double rel, double floor_,
                         const char *what)
{
        int64_t bad = -1, differ = 0;
        for (int64_t i = 0; i < n; i++) {
                if (got[i] != want[i])
                        differ++;
                if (bad < 0 && !close_to(got[i], want[i], rel, floor_))
                        bad = i;
        }
        if (!ok(bad < 0, what))
                printf("#   element %lld: got %.9g, want %.9g\n", (long long)bad, got[bad], want[bad]);
        if (differ)
                printf("#   %lld of %lld values not bit-equal\n", (long long)differ, (long long)n);
}

static void check_doubles(const double *got, const double *want, int64_t n, double rel, const char *what)
{
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++)
                if (!close_to(got[i], want[i], rel, 1e-6))
                        bad = i;
        if (!ok(bad < 0, what))
                printf("#   element %lld: got %.17g, want %.17g\n", (long long)bad, got[bad], want[bad]);
}

static int all_zero(const float *v, int64_t n)
{
        for (int64_t i = 0; i < n; i++)
                if (v[i] != 0)
                        return 0;
        return 1;
}

/* ---- roi_align against torchvision ---- */

static void test_golden_single(void)
{
        int64_t dims[4] = { G_N, G_C, G_H, G_W };
        enum bd_layout layouts[2] = { BD_NCHW, BD_NHWC };
        char what[160];
        for (size_t ci = 0; ci < sizeof(g_roi_cases) / sizeof(g_roi_cases[0]); ci++) {
                const struct g_roi_case *g = &g_roi_cases[ci];
                struct det_roi_align p = { g->ph, g->pw, g->sampling, g->aligned, g->scale };
                struct bd_tensor rois = view2(g->rois, BD_F32, g->R, 5);
                for (int li = 0; li < 2; li++) {
                        struct bd_tensor x, y = { 0 }, dx;
                        const char *ln = bd_layout_name(layouts[li]);
                        make_map(&x, BD_F32, layouts[li], dims, 1, fmap_v);
                        int r = det_roi_align_fwd(be, &p, &x, &rois, &y);
                        snprintf(what, sizeof(what), "roi_align case %zu (scale %g, %dx%d, sampling %d, aligned %d) %s",
                                 ci, g->scale, g->ph, g->pw, g->sampling, g->aligned, ln);
                        if (r < 0 && !ok(0, what))
                                printf("#   %s\n", be->err.msg);
                        else
                                check_floats(y.data, g->y, g->R * G_C * g->ph * g->pw, 1e-5, 1e-6, what);
                        if (g->bwd) {
                                int64_t yd[4] = { g->R, G_C, g->ph, g->pw };
                                struct bd_tensor dy;
                                make_map(&dy, BD_F32, BD_NCHW, yd, (int)ci, fgrad_v);
                                make_map(&dx, BD_F32, layouts[li], dims, 0, fmap_v); /* garbage: overwritten */
                                r = det_roi_align_bwd(be, &p, &dy, &rois, &dx, 0);
                                snprintf(what, sizeof(what), "roi_align backward case %zu %s", ci, ln);
                                float *got = to_nchw(&dx);
                                if (ok(r == 0, what))
                                        check_floats(got, g->dx, G_N * G_C * G_H * G_W, 1e-5, 1e-6, what);
                                free(got);
                                bd_tensor_release(&dy);
                                bd_tensor_release(&dx);
                        }
                        bd_tensor_release(&x);
                        bd_tensor_release(&y);
                }
        }
}

/* ---- multi-scale ---- */

static void ms_setup(struct bd_tensor maps[4], enum bd_layout l, int64_t C)
{
        for (int k = 0; k < 4; k++) {
                int64_t d[4] = { 2, C, g_ms_sizes[2 * k], g_ms_sizes[2 * k + 1] };
                make_map(&maps[k], BD_F32, l, d, 10 + k, fmap_v);
        }
}

static void ms_rois(float *rois)
{
        for (int r = 0; r < G_MS_R; r++) {
                rois[5 * r] = (float)(r / (G_MS_R / 2));
                memcpy(rois + 5 * r + 1, g_ms_boxes + 4 * r, 4 * sizeof(float));
        }
}

static void test_golden_multiscale(void)
{
        struct bd_tensor maps[4], dmaps[4], y = { 0 };
        const struct bd_tensor *fm[4];
        struct bd_tensor *dm[4];
        float rois_v[5 * G_MS_R];
        int32_t lev[G_MS_R], lev_bad[G_MS_R];
        double scales[4], dig[G_MS_R];
        int64_t img_h = g_ms_img[0] > g_ms_img[2] ? g_ms_img[0] : g_ms_img[2];
        struct det_msroi m;
        struct bd_err err = { 0 };

        for (int k = 0; k < 4; k++)
                scales[k] = det_roi_infer_scale(g_ms_sizes[2 * k], img_h);
        ok(memcmp(scales, g_ms_scales, sizeof(scales)) == 0, "multiscale: inferred scales = torchvision's");
        ms_setup(maps, BD_NCHW, G_MS_C);
        ms_rois(rois_v);
        struct bd_tensor rois = view2(rois_v, BD_F32, G_MS_R, 5);
        for (int out = 7; out <= 14; out += 7) {
                char what[96];
                is_int(det_msroi_init(&m, TV, 4, scales, out, 2, &err), 0, "multiscale: init");
                if (out == 7) {
                        det_msroi_levels(&m, rois_v, G_MS_R, lev);
                        int same = 1;
                        for (int r = 0; r < G_MS_R; r++)
                                same &= lev[r] == g_ms_levels[r];
                        ok(same, "multiscale: LevelMapper's levels exactly");
                }
                for (int k = 0; k < 4; k++) {
                        fm[k] = &maps[k];
                        dm[k] = &dmaps[k];
                }
                int r = det_msroi_fwd(be, &m, fm, &rois, NULL, &y);
                snprintf(what, sizeof(what), "multiscale %dx%d forward", out, out);
                if (!ok(r == 0, what))
                        printf("#   %s\n", be->err.msg);
                else if (out == 7)
                        check_floats(y.data, g_ms_y7, G_MS_R * G_MS_C * 49, 1e-5, 1e-6, what);
                else {
                        for (int i = 0; i < G_MS_R; i++)
                                dig[i] = digest((float *)y.data + i * G_MS_C * 196, G_MS_C * 196);
                        check_doubles(dig, g_ms_y14_digest, G_MS_R, 1e-6, "multiscale 14x14 forward digests");
                }
                /* the maps in NHWC, and P3 and P5 in NCHW: the same bits */
                struct bd_tensor alt[4], y3 = { 0 };
                const struct bd_tensor *am[4];
                ms_setup(alt, BD_NHWC, G_MS_C);
                for (int k = 0; k < 4; k++)
                        am[k] = k % 2 ? &maps[k] : &alt[k];
                r = det_msroi_fwd(be, &m, am, &rois, NULL, &y3);
                ok(r == 0 && memcmp(y.data, y3.data, bd_tensor_bytes(&y)) == 0,
                   "multiscale: maps in nhwc and nchw mixed, same output");
                for (int k = 0; k < 4; k++)
                        bd_tensor_release(&alt[k]);
                bd_tensor_release(&y3);
                /* caller-given levels: the same answer */
                struct bd_tensor y2 = { 0 };
                r = det_msroi_fwd(be, &m, fm, &rois, lev, &y2);
                ok(r == 0 && memcmp(y.data, y2.data, bd_tensor_bytes(&y)) == 0,
                   "multiscale: caller-given levels = the mapper's, same output");
                bd_tensor_release(&y2);

                int64_t yd[4] = { G_MS_R, G_MS_C, out, out };
                struct bd_tensor dy;
                make_map(&dy, BD_F32, BD_NCHW, yd, out, fgrad_v);
                for (int k = 0; k < 4; k++)
                        make_map(&dmaps[k], BD_F32, BD_NCHW, maps[k].dims, 3, fmap_v);
                r = det_msroi_bwd(be, &m, &dy, &rois, NULL, dm, 0);
                snprintf(what, sizeof(what), "multiscale %dx%d backward: digests of the maps' gradients", out, out);
                double dd[4];
                for (int k = 0; k < 4; k++)
                        dd[k] = digest(dmaps[k].data, bd_tensor_numel(&dmaps[k]));
                if (ok(r == 0, what))
                        check_doubles(dd, out == 7 ? g_ms_dx7_digest : g_ms_dx14_digest, 4, 1e-6, what);
                bd_tensor_release(&dy);
                for (int k = 0; k < 4; k++)
                        bd_tensor_release(&dmaps[k]);
        }
        /* a caller-given level out of range */
        memcpy(lev_bad, lev, sizeof(lev));
        lev_bad[3] = 4;
        int r = det_msroi_fwd(be, &m, fm, &rois, lev_bad, &y);
        ok(r == -EINVAL, "multiscale: caller-given level 4 of 4 maps is -EINVAL");
        printf("#   %s\n", be->err.msg);
        lev_bad[3] = -1;
        ok(det_msroi_bwd(be, &m, &y, &rois, lev_bad, dm, 0) == -EINVAL, "multiscale backward: level -1 is -EINVAL");
        double bad_scales[4] = { 0.25, 0.125, 0.0625, 0.0625 };
        ok(det_msroi_init(&m, TV, 4, bad_scales, 7, 2, &err) == -EINVAL, "multiscale: scales spanning 3 levels for 4 maps");
        bad_scales[1] = NAN;
        ok(det_msroi_init(&m, TV, 4, bad_scales, 7, 2, &err) == -EINVAL, "multiscale: a NaN scale");
        for (int k = 0; k < 4; k++)
                bd_tensor_release(&maps[k]);
        bd_tensor_release(&y);
}

/* ---- the level mapper ---- */

static uint32_t lcg_state = 12345;
static double lcg_u(void)
{
        lcg_state = lcg_state * 1103515245u + 12345u;
        return (double)((lcg_state >> 8) & 0xffffff) / 16777216.0;
}

static void test_mapper(void)
{
        struct det_msroi m;
        struct bd_err err = { 0 };
        double scales[4] = { 0.25, 0.125, 0.0625, 0.03125 };
        is_int(det_msroi_init(&m, MP, 4, scales, 7, 2, &err), 0, "mlperf mapper: init");
        ok(m.kmin == 2 && m.kmax == 5, "mapper: levels 2..5 from scales 1/4..1/32");
        int checked = 0, bad = 0;
        for (int i = 0; i < 2000; i++) {
                float roi[5] = { 0 };
                double s = 8 * pow(100, lcg_u()), ar = 0.3 + 3 * lcg_u();
                roi[1] = (float)(1000 * lcg_u());
                roi[2] = (float)(800 * lcg_u());
                roi[3] = roi[1] + (float)(s * sqrt(ar));
                roi[4] = roi[2] + (float)(s / sqrt(ar));
                double w = (double)roi[3] - roi[1] + 1, h = (double)roi[4] - roi[2] + 1;
                double k = 4 + log2(sqrt(w * h) / 224 + 1e-6);
                if (fabs(k - round(k)) < 1e-4)
                        continue;
                int want = (int)floor(k);
                want = want < 2 ? 2 : want > 5 ? 5 : want;
                int32_t got;
                det_msroi_levels(&m, roi, 1, &got);
                checked++;
                if (got != want - 2 && !bad++)
                        printf("#   box (%g %g %g %g): level index %d, want %d\n", roi[1], roi[2], roi[3], roi[4],
                               got, want - 2);
        }
        ok(bad == 0 && checked > 1900, "mlperf mapper: floor(4 + log2(sqrt((w+1)(h+1))/224 + 1e-6)) on random boxes");
        /* a 112 x 112 box with +1 widths: sqrt(area) 112 is level 3; torchvision's 111 is level 2 */
        float box[5] = { 0, 0, 0, 111, 111 };
        int32_t l_mp, l_tv;
        det_msroi_levels(&m, box, 1, &l_mp);
        is_int(det_msroi_init(&m, TV, 4, scales, 7, 2, &err), 0, "torchvision mapper: init");
        det_msroi_levels(&m, box, 1, &l_tv);
        ok(l_mp == 1 && l_tv == 0, "box (0, 0, 111, 111): level 3 under +1 widths, level 2 under torchvision's");
        float nanbox[5] = { 0, NAN, 0, 10, 10 }, negbox[5] = { 0, 10, 10, 0, 20 };
        det_msroi_levels(&m, nanbox, 1, &l_tv);
        is_int(l_tv, -1, "mapper: a NaN box has level -1 (zeros)");
        det_msroi_levels(&m, negbox, 1, &l_tv);
        is_int(l_tv, -1, "mapper: a negative area has level -1 (torchvision's NaN level: zeros)");
}

/* ---- mask targets ---- */

static void test_mask_targets(void)
{
        uint8_t *masks = xmalloc(G_MK_G * G_MK_H * G_MK_W);
        for (int k = 0; k < G_MK_G; k++) {
                int cx = 5 + 9 * k, cy = 6 + 5 * k, a = 4 + 2 * k, b = 3 + k;
                for (int y = 0; y < G_MK_H; y++)
                        for (int x = 0; x < G_MK_W; x++)
                                masks[(k * G_MK_H + y) * G_MK_W + x] =
                                        (x - cx) * (x - cx) * b * b + (y - cy) * (y - cy) * a * a <= a * a * b * b;
        }
        int32_t matched[G_MK_P];
        for (int i = 0; i < G_MK_P; i++)
                matched[i] = g_mk_matched[i];
        struct bd_tensor boxes = view2(g_mk_boxes, BD_F32, G_MK_P, 4), out = { 0 };
        int64_t pd[1] = { G_MK_P };
        struct bd_tensor mt = bd_tensor_view(matched, BD_CPU, BD_I32, BD_NCHW, 1, pd);
        int r = det_roi_mask_targets(be, 14, masks, G_MK_G, G_MK_H, G_MK_W, &boxes, &mt, &out);
        if (ok(r == 0, "mask targets 14x14 = project_masks_on_boxes"))
                check_floats(out.data, g_mk_14, G_MK_P * 196, 1e-5, 1e-6, "mask targets 14x14 = project_masks_on_boxes");
        r = det_roi_mask_targets(be, 28, masks, G_MK_G, G_MK_H, G_MK_W, &boxes, &mt, &out);
        double dig[G_MK_P];
        for (int i = 0; i < G_MK_P; i++)
                dig[i] = digest((float *)out.data + i * 784, 784);
        if (ok(r == 0, "mask targets 28x28"))
                check_doubles(dig, g_mk_28_digest, G_MK_P, 1e-6, "mask targets 28x28: digests");
        /* bad input: matched out of range, a NaN box */
        float bb[8] = { 1, 1, 10, 10, NAN, 1, 10, 10 };
        int32_t mm[2] = { G_MK_G, 0 };
        struct bd_tensor b2 = view2(bb, BD_F32, 2, 4);
        int64_t d2[1] = { 2 };
        struct bd_tensor m2 = bd_tensor_view(mm, BD_CPU, BD_I32, BD_NCHW, 1, d2);
        r = det_roi_mask_targets(be, 28, masks, G_MK_G, G_MK_H, G_MK_W, &b2, &m2, &out);
        ok(r == 0 && all_zero(out.data, 2 * 784), "mask targets: matched index out of range, NaN box: zeros");
        ok(det_roi_mask_targets(be, 0, masks, G_MK_G, G_MK_H, G_MK_W, &b2, &m2, &out) == -EINVAL, "mask targets: M 0");
        struct bd_tensor b0 = view2(bb, BD_F32, 0, 4), m0 = bd_tensor_view(mm, BD_CPU, BD_I32, BD_NCHW, 1, (int64_t[1]){ 0 });
        r = det_roi_mask_targets(be, 28, masks, G_MK_G, G_MK_H, G_MK_W, &b0, &m0, &out);
        ok(r == 0 && out.dims[0] == 0, "mask targets: no proposals");
        bd_tensor_release(&out);
        free(masks);
}

/* ---- float64 central differences ---- */

static double loss(const struct bd_tensor *y, const double *gw)
{
        double s = 0;
        for (int64_t i = 0; i < bd_tensor_numel(y); i++)
                s += ((double *)y->data)[i] * gw[i];
        return s;
}

static void test_gradcheck(void)
{
        int64_t dims[4] = { 2, 3, 6, 7 };
        double rois_v[4 * 5] = {
                0, 3.3, 5.1, 17.9, 19.7,        /* inside */
                1, -6.2, -4.9, 9.4, 12.3,       /* partly outside */
                1, 20.7, 2.2, 31.1, 30.9,       /* past the right and bottom */
                0, 10.2, 10.6, 10.9, 11.1,      /* tiny */
        };
        struct det_roi_align cfg[3] = {
                { 3, 3, 2, 0, 0.25 }, { 2, 3, -1, 1, 0.25 }, { 4, 2, 3, 0, 0.5 },
        };
        struct bd_tensor rois = view2(rois_v, BD_F64, 4, 5);
        for (int ci = 0; ci < 3; ci++) {
                struct bd_tensor x, dx, dy, y = { 0 };
                make_map(&x, BD_F64, BD_NCHW, dims, 5, fmap_v);
                make_map(&dx, BD_F64, BD_NCHW, dims, 5, fmap_v);
                int64_t yd[4] = { 4, 3, cfg[ci].pooled_h, cfg[ci].pooled_w };
                make_map(&dy, BD_F64, BD_NCHW, yd, 7, fgrad_v);
                int r = det_roi_align_bwd(be, &cfg[ci], &dy, &rois, &dx, 0);
                double worst = 0, eps = 1e-3;
                double *xv = x.data, *g = dx.data;
                for (int64_t i = 0; i < bd_tensor_numel(&x) && r == 0; i++) {
                        double v = xv[i];
                        xv[i] = v + eps;
                        r |= det_roi_align_fwd(be, &cfg[ci], &x, &rois, &y);
                        double lp = loss(&y, dy.data);
                        xv[i] = v - eps;
                        r |= det_roi_align_fwd(be, &cfg[ci], &x, &rois, &y);
                        double lm = loss(&y, dy.data);
                        xv[i] = v;
                        double num = (lp - lm) / (2 * eps);
                        if (fabs(num - g[i]) > worst)
                                worst = fabs(num - g[i]);
                }
                char what[96];
                snprintf(what, sizeof(what), "float64 central differences = backward, config %d", ci);
                if (!ok(r == 0 && worst <= 1e-8, what))
                        printf("#   worst |num - ana| %.3g\n", worst);
                bd_tensor_release(&x);
                bd_tensor_release(&dx);
                bd_tensor_release(&dy);
                bd_tensor_release(&y);
        }
}

/* ---- layouts, threads, accumulation ---- */

static void test_layouts(void)
{
        int64_t dims[4] = { 2, 16, 9, 11 };
        float rois_v[6 * 5];
        for (int r = 0; r < 6; r++) {
                rois_v[5 * r] = (float)(r % 2);
                rois_v[5 * r + 1] = (float)(-10 + 60 * lcg_u());
                rois_v[5 * r + 2] = (float)(-10 + 50 * lcg_u());
                rois_v[5 * r + 3] = rois_v[5 * r + 1] + (float)(2 + 30 * lcg_u());
                rois_v[5 * r + 4] = rois_v[5 * r + 2] + (float)(2 + 30 * lcg_u());
        }
        struct bd_tensor rois = view2(rois_v, BD_F32, 6, 5);
        enum bd_layout ls[3] = { BD_NCHW, BD_NCHW8C, BD_NHWC };
        struct det_roi_align p = { 7, 7, 2, 0, 0.25 }, pa = { 5, 6, -1, 1, 0.25 };
        for (int pi = 0; pi < 2; pi++) {
                const struct det_roi_align *pp = pi ? &pa : &p;
                struct bd_tensor y[3], dx[3], dy;
                float *g[3];
                int64_t yd[4] = { 6, 16, pp->pooled_h, pp->pooled_w };
                make_map(&dy, BD_F32, BD_NCHW, yd, 2, fgrad_v);
                int r = 0;
                for (int li = 0; li < 3; li++) {
                        struct bd_tensor x;
                        memset(&y[li], 0, sizeof(y[li]));
                        make_map(&x, BD_F32, ls[li], dims, 4, fmap_v);
                        make_map(&dx[li], BD_F32, ls[li], dims, 4, fmap_v);
                        r |= det_roi_align_fwd(be, pp, &x, &rois, &y[li]);
                        r |= det_roi_align_bwd(be, pp, &dy, &rois, &dx[li], 0);
                        g[li] = to_nchw(&dx[li]);
                        bd_tensor_release(&x);
                }
                size_t yb = bd_tensor_bytes(&y[0]), xb = (size_t)bd_tensor_numel(&dx[0]) * sizeof(float);
                ok(r == 0 && !memcmp(y[0].data, y[1].data, yb) && !memcmp(y[0].data, y[2].data, yb),
                   pi ? "adaptive aligned: nchw, nchw8c, nhwc forward bit-identical"
                      : "7x7 sampling 2: nchw, nchw8c, nhwc forward bit-identical");
                ok(!memcmp(g[0], g[1], xb) && !memcmp(g[0], g[2], xb),
                   pi ? "adaptive aligned: nchw, nchw8c, nhwc backward bit-identical"
                      : "7x7 sampling 2: nchw, nchw8c, nhwc backward bit-identical");

                /* one thread: the same bits (the backward owns channels per thread) */
                struct bd_backend *be1;
                struct bd_err err = { 0 };
                if (bd_backend_cpu_new(1, &be1, &err) == 0) {
                        struct bd_tensor x1, y1 = { 0 }, dx1;
                        make_map(&x1, BD_F32, BD_NCHW8C, dims, 4, fmap_v);
                        make_map(&dx1, BD_F32, BD_NCHW8C, dims, 0, fmap_v);
                        r = det_roi_align_fwd(be1, pp, &x1, &rois, &y1) | det_roi_align_bwd(be1, pp, &dy, &rois, &dx1, 0);
                        float *g1 = to_nchw(&dx1);
                        ok(r == 0 && !memcmp(y1.data, y[0].data, yb) && !memcmp(g1, g[0], xb),
                           "one thread and two: bit-identical forward and backward");
                        free(g1);
                        /* BD_ACC_DX adds to what is there */
                        r = det_roi_align_bwd(be1, pp, &dy, &rois, &dx1, BD_ACC_DX);
                        g1 = to_nchw(&dx1);
                        double worst = 0, big = 0;
                        for (int64_t i = 0; i < bd_tensor_numel(&dx1); i++) {
                                worst = fmax(worst, fabs(g1[i] - 2 * g[0][i]));
                                big = fmax(big, fabs(g[0][i]));
                        }
                        if (!ok(r == 0 && worst <= 1e-5 * big, "BD_ACC_DX: the gradient added to the previous one"))
                                printf("#   worst %.3g of %.3g\n", worst, big);
                        free(g1);
                        bd_tensor_release(&x1);
                        bd_tensor_release(&y1);
                        bd_tensor_release(&dx1);
                        bd_backend_free(be1);
                }
                for (int li = 0; li < 3; li++) {
                        bd_tensor_release(&y[li]);
                        bd_tensor_release(&dx[li]);
                        free(g[li]);
                }
                bd_tensor_release(&dy);
        }
}

/* ---- bad input ---- */

static void test_bad_input(void)
{
        int64_t dims[4] = { 2, 8, 6, 7 };
        struct bd_tensor x, dx, y = { 0 };
        make_map(&x, BD_F32, BD_NCHW8C, dims, 6, fmap_v);
        make_map(&dx, BD_F32, BD_NCHW8C, dims, 6, fmap_v);
        float rois_v[8 * 5] = {
                0, NAN, 1, 10, 10,      /* NaN */
                1, 1, 1, INFINITY, 10,  /* infinite */
                2, 1, 1, 10, 10,        /* batch index 2 of 2 */
                -1, 1, 1, 10, 10,       /* batch index -1 */
                NAN, 1, 1, 10, 10,      /* NaN batch index */
                0, 1e30f, 1e30f, 2e30f, 2e30f, /* huge: outside */
                1.75f, 2, 3, 15, 19,    /* fractional batch index: 1 as torchvision's cast */
                1, 2, 3, 15, 19,
        };
        struct bd_tensor rois = view2(rois_v, BD_F32, 8, 5);
        struct det_roi_align p = { 3, 3, -1, 0, 0.5 };
        int r = det_roi_align_fwd(be, &p, &x, &rois, &y);
        const float *yv = y.data;
        ok(r == 0 && all_zero(yv, 6 * 8 * 9), "NaN, infinite, huge coordinates, batch index out of range: zeros");
        ok(!memcmp(yv + 6 * 72, yv + 7 * 72, 72 * sizeof(float)), "batch index 1.75 is 1 (truncated)");
        int64_t yd[4] = { 6, 8, 3, 3 };
        struct bd_tensor dy, r6 = view2(rois_v, BD_F32, 6, 5);
        make_map(&dy, BD_F32, BD_NCHW, yd, 1, fgrad_v);
        r = det_roi_align_bwd(be, &p, &dy, &r6, &dx, 0);
        ok(r == 0 && all_zero(dx.data, bd_tensor_numel(&dx)), "bad RoIs give no gradient");
        float wide[5] = { 0, -1e30f, -1e30f, 1e30f, 1e30f };
        struct bd_tensor rw = view2(wide, BD_F32, 1, 5);
        r = det_roi_align_fwd(be, &p, &x, &rw, &y);
        int fin = r == 0;
        for (int i = 0; i < 72 && fin; i++)
                fin = isfinite(((float *)y.data)[i]);
        ok(fin, "a RoI of +-1e30 (adaptive grid capped): finite output");

        struct bd_tensor r0 = view2(rois_v, BD_F32, 0, 5);
        r = det_roi_align_fwd(be, &p, &x, &r0, &y);
        ok(r == 0 && y.dims[0] == 0 && y.dims[1] == 8, "R == 0: an empty output");
        struct bd_tensor dy0 = y;
        ok(det_roi_align_bwd(be, &p, &dy0, &r0, &dx, 0) == 0 && all_zero(dx.data, bd_tensor_numel(&dx)),
           "R == 0 backward: zero gradient");
        struct det_roi_align p0 = { 0, 3, 2, 0, 0.5 };
        ok(det_roi_align_fwd(be, &p0, &x, &rois, &y) == -EINVAL, "output 0 x 3: -EINVAL");
        struct bd_tensor r4 = view2(rois_v, BD_F32, 8, 4);
        ok(det_roi_align_fwd(be, &p, &x, &r4, &y) == -EINVAL, "rois (R, 4): -EINVAL");
        printf("#   %s\n", be->err.msg);
        struct bd_tensor rd = view2(rois_v, BD_F64, 4, 5);
        ok(det_roi_align_fwd(be, &p, &x, &rd, &y) == -EINVAL, "rois f64 with an f32 map: -EINVAL");
        ok(det_roi_align_bwd(be, &p, &dy, &rois, &dx, 0) == -EINVAL, "dy with the wrong RoI count: -EINVAL");
        bd_tensor_release(&x);
        bd_tensor_release(&dx);
        bd_tensor_release(&dy);
        bd_tensor_release(&y);
}

int main(void)
{
        struct bd_err err = { 0 };
        if (bd_backend_cpu_new(2, &be, &err) < 0) {
                printf("Bail out! cpu backend: %s\n", err.msg);
                return 1;
        }
        test_golden_single();
        test_golden_multiscale();
        test_mapper();
        test_mask_targets();
        test_gradcheck();
        test_layouts();
        test_bad_input();
        bd_backend_free(be);
        return done_testing();
}

/* test-det-roi-gpu.c: the CUDA kernels of trainer/det/roi-align.cu against
 * the CPU loops (make check-gpu-det-roi).
 *
 * Random maps (NCHW, NCHW8C, NHWC), random RoIs (inside, across the border,
 * outside, tiny, with bad ones: NaN, batch index out of range) and random
 * output gradients go through both backends.  Tolerances, relative to the
 * largest CPU value:
 *   forward (RoIAlign, multi-scale, mask targets): 1e-6 (the kernels share
 *     the CPU's arithmetic, roi-align-impl.h, without FMAs: expected 0);
 *   backward: 1e-5 (atomicAdd sums in another order).
 * The multi-scale boxes keep clear of level boundaries (the device's log2f
 * may differ from glibc's by an ulp).  Without a visible GPU the test is
 * skipped, saying why.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "ops.h"
#include "rng.h"
#include "roi-align.h"
#include "../unit/tap.h"

static struct bd_backend *cpu, *gpu;
static struct bd_rng rng;

static double U(double lo, double hi)
{
        return lo + (hi - lo) * bd_rng_uniform(&rng);
}

static struct bd_tensor hrand(enum bd_layout l, int nd, const int64_t *dims, double lo, double hi)
{
        struct bd_tensor t = { 0 };
        if (bd_tensor_resize(cpu, &t, BD_F32, l, nd, dims) < 0)
                abort();
        for (int64_t i = 0; i < bd_tensor_numel(&t); i++)
                ((float *)t.data)[i] = (float)U(lo, hi);
        return t;
}

static struct bd_tensor up(const struct bd_tensor *h)
{
        struct bd_tensor g = { 0 };
        if (bd_op_copy(gpu, h, &g) < 0)
                abort();
        return g;
}

/* max |cpu - gpu| / max |cpu|; both in the same layout */
static double diff(const struct bd_tensor *c, const struct bd_tensor *g)
{
        /* a host view as the destination: an owned tensor would be
         * reallocated on the GPU by bd_op_copy(gpu, ...) */
        float *hv = xmalloc((size_t)bd_tensor_bytes(g) + 1);
        struct bd_tensor h = bd_tensor_view(hv, BD_CPU, g->dtype, g->layout, g->ndim, g->dims);
        double mx = 1e-20, d = 0;
        if (g->dtype != BD_F32 || bd_op_copy(gpu, g, &h) < 0 || gpu->ops->sync(gpu) < 0 ||
            !bd_tensor_same_shape(c, &h) || c->layout != h.layout)
                d = INFINITY;
        for (int64_t i = 0; d < INFINITY && i < bd_tensor_numel(c); i++) {
                double a = ((float *)c->data)[i], b = hv[i];
                mx = fmax(mx, fabs(a));
                d = b == b ? fmax(d, fabs(a - b)) : INFINITY;
        }
        free(hv);
        return d / mx;
}

static void same(const char *what, const struct bd_tensor *c, const struct bd_tensor *g, double tol)
{
        double e = diff(c, g);
        if (!ok(e <= tol, what))
                printf("#   relative difference %.3g > %.0e\n", e, tol);
}

static void rand_rois(float *r, int64_t R, int64_t N, double img_h, double img_w)
{
        for (int64_t i = 0; i < R; i++) {
                float *q = r + 5 * i;
                double s = U(4, 0.8 * (img_h < img_w ? img_h : img_w)), ar = U(0.4, 2.5);
                double cx = U(-0.1, 1.1) * img_w, cy = U(-0.1, 1.1) * img_h;
                q[0] = (float)(i % N);
                q[1] = (float)(cx - s * sqrt(ar) / 2);
                q[2] = (float)(cy - s / sqrt(ar) / 2);
                q[3] = (float)(cx + s * sqrt(ar) / 2);
                q[4] = (float)(cy + s / sqrt(ar) / 2);
        }
        if (R > 4) {
                r[5 * 1 + 1] = NAN;             /* NaN */
                r[5 * 2] = (float)N;            /* batch index out of range */
                r[5 * 3 + 3] = r[5 * 3 + 1] + 0.3f; /* tiny */
        }
}

static void single_level(enum bd_layout l, const struct det_roi_align *p, const char *name)
{
        int64_t xd[4] = { 2, 16, 20, 24 }, R = 64, rd[2] = { R, 5 };
        struct bd_tensor x = hrand(l, 4, xd, -1, 1), rois = hrand(BD_NCHW, 2, rd, 0, 1);
        rand_rois(rois.data, R, 2, 20 / p->spatial_scale, 24 / p->spatial_scale);
        struct bd_tensor gx = up(&x), grois = up(&rois), y = { 0 }, gy = { 0 };
        char what[128];
        int r = det_roi_align_fwd(cpu, p, &x, &rois, &y);
        int rg = det_roi_align_fwd(gpu, p, &gx, &grois, &gy);
        snprintf(what, sizeof(what), "roi_align forward %s %s", name, bd_layout_name(l));
        if (r < 0 || rg < 0)
                printf("#   %s / %s\n", cpu->err.msg, gpu->err.msg);
        same(what, &y, &gy, 1e-6);
        int64_t yd[4] = { R, 16, p->pooled_h, p->pooled_w };
        struct bd_tensor dy = hrand(BD_NCHW, 4, yd, -1, 1), gdy = up(&dy);
        struct bd_tensor dx = hrand(l, 4, xd, -1, 1), gdx = up(&dx);
        r = det_roi_align_bwd(cpu, p, &dy, &rois, &dx, BD_ACC_DX);
        rg = det_roi_align_bwd(gpu, p, &gdy, &grois, &gdx, BD_ACC_DX);
        snprintf(what, sizeof(what), "roi_align backward (accumulating) %s %s", name, bd_layout_name(l));
        ok(r == 0 && rg == 0, what);
        same(what, &dx, &gdx, 1e-5);
        r = det_roi_align_bwd(cpu, p, &dy, &rois, &dx, 0);
        rg = det_roi_align_bwd(gpu, p, &gdy, &grois, &gdx, 0);
        snprintf(what, sizeof(what), "roi_align backward %s %s", name, bd_layout_name(l));
        ok(r == 0 && rg == 0, what);
        same(what, &dx, &gdx, 1e-5);
        struct bd_tensor *all[] = { &x, &rois, &gx, &grois, &y, &gy, &dy, &gdy, &dx, &gdx };
        for (size_t i = 0; i < ARRAY_SIZE(all); i++)
                bd_tensor_release(all[i]);
}

static void multiscale(int given_levels)
{
        int64_t sizes[4][2] = { { 32, 40 }, { 16, 20 }, { 8, 10 }, { 4, 5 } }, R = 96, rd[2] = { R, 5 };
        double scales[4];
        struct bd_tensor maps[4], gmaps[4], dmaps[4], gdmaps[4];
        const struct bd_tensor *fm[4], *gfm[4];
        struct bd_tensor *dm[4], *gdm[4];
        struct det_msroi m;
        struct bd_err err = { 0 };
        for (int k = 0; k < 4; k++) {
                int64_t d[4] = { 2, 8, sizes[k][0], sizes[k][1] };
                maps[k] = hrand(k % 2 ? BD_NCHW8C : BD_NCHW, 4, d, -1, 1);
                gmaps[k] = up(&maps[k]);
                dmaps[k] = hrand(maps[k].layout, 4, d, -1, 1);
                gdmaps[k] = up(&dmaps[k]);
                fm[k] = &maps[k];
                gfm[k] = &gmaps[k];
                dm[k] = &dmaps[k];
                gdm[k] = &gdmaps[k];
                scales[k] = det_roi_infer_scale(sizes[k][0], 128);
        }
        det_msroi_init(&m, &det_conv_mlperf, 4, scales, 7, 2, &err);
        struct bd_tensor rois = hrand(BD_NCHW, 2, rd, 0, 1);
        float *rv = rois.data;
        for (int64_t i = 0; i < R; i++) {
                /* sqrt(area) from 16 to 640, clear of level boundaries */
                double s, k;
                do {
                        s = 16 * pow(40, U(0, 1));
                        k = 4 + log2(s / 224);
                } while (fabs(k - round(k)) < 1e-3);
                double cx = U(0, 160), cy = U(0, 128);
                rv[5 * i] = (float)(i % 2);
                rv[5 * i + 1] = (float)(cx - s / 2);
                rv[5 * i + 2] = (float)(cy - s / 2);
                rv[5 * i + 3] = (float)(cx + s / 2 - 1);
                rv[5 * i + 4] = (float)(cy + s / 2 - 1);
        }
        int32_t *lev = NULL;
        if (given_levels) {
                lev = xmalloc((size_t)R * sizeof(int32_t));
                for (int64_t i = 0; i < R; i++)
                        lev[i] = (int32_t)(i % 4);
        }
        struct bd_tensor grois = up(&rois), y = { 0 }, gy = { 0 };
        int r = det_msroi_fwd(cpu, &m, fm, &rois, lev, &y), rg = det_msroi_fwd(gpu, &m, gfm, &grois, lev, &gy);
        if (r < 0 || rg < 0)
                printf("#   %s / %s\n", cpu->err.msg, gpu->err.msg);
        same(given_levels ? "multiscale forward, given levels" : "multiscale forward, mlperf mapper", &y, &gy, 1e-6);
        int64_t yd[4] = { R, 8, 7, 7 };
        struct bd_tensor dy = hrand(BD_NCHW, 4, yd, -1, 1), gdy = up(&dy);
        r = det_msroi_bwd(cpu, &m, &dy, &rois, lev, dm, 0);
        rg = det_msroi_bwd(gpu, &m, &gdy, &grois, lev, gdm, 0);
        ok(r == 0 && rg == 0, "multiscale backward runs");
        for (int k = 0; k < 4; k++) {
                char what[64];
                snprintf(what, sizeof(what), "multiscale backward, level %d%s", k, given_levels ? ", given levels" : "");
                same(what, &dmaps[k], &gdmaps[k], 1e-5);
                bd_tensor_release(&maps[k]);
                bd_tensor_release(&gmaps[k]);
                bd_tensor_release(&dmaps[k]);
                bd_tensor_release(&gdmaps[k]);
        }
        free(lev);
        struct bd_tensor *all[] = { &rois, &grois, &y, &gy, &dy, &gdy };
        for (size_t i = 0; i < ARRAY_SIZE(all); i++)
                bd_tensor_release(all[i]);
}

static void mask_targets(void)
{
        int64_t G = 5, H = 60, W = 80, P = 40;
        uint8_t *mk = xmalloc((size_t)(G * H * W));
        for (int64_t i = 0; i < G * H * W; i++)
                mk[i] = U(0, 1) < 0.4;
        uint8_t *gmk = gpu->ops->alloc(gpu, (size_t)(G * H * W));
        gpu->ops->copy(gpu, gmk, BD_CUDA, mk, BD_CPU, (size_t)(G * H * W));
        int64_t bd[2] = { P, 4 }, md[1] = { P };
        struct bd_tensor boxes = hrand(BD_NCHW, 2, bd, 0, 1), matched = { 0 };
        bd_tensor_resize(cpu, &matched, BD_I32, BD_NCHW, 1, md);
        float *b = boxes.data;
        for (int64_t i = 0; i < P; i++) {
                b[4 * i] = (float)U(-10, 70);
                b[4 * i + 1] = (float)U(-10, 50);
                b[4 * i + 2] = b[4 * i] + (float)U(0.5, 60);
                b[4 * i + 3] = b[4 * i + 1] + (float)U(0.5, 50);
                ((int32_t *)matched.data)[i] = i == 7 ? -1 : (int32_t)(i % (G + 1)); /* G and -1: out of range */
        }
        struct bd_tensor gb = up(&boxes), gm = up(&matched), t = { 0 }, gt = { 0 };
        for (int M = 14; M <= 28; M += 14) {
                int r = det_roi_mask_targets(cpu, M, mk, G, H, W, &boxes, &matched, &t);
                int rg = det_roi_mask_targets(gpu, M, gmk, G, H, W, &gb, &gm, &gt);
                ok(r == 0 && rg == 0, "mask targets run");
                same(M == 14 ? "mask targets 14x14" : "mask targets 28x28", &t, &gt, 1e-6);
        }
        gpu->ops->sync(gpu);
        gpu->ops->free(gpu, gmk);
        free(mk);
        struct bd_tensor *all[] = { &boxes, &matched, &gb, &gm, &t, &gt };
        for (size_t i = 0; i < ARRAY_SIZE(all); i++)
                bd_tensor_release(all[i]);
}

int main(void)
{
        struct bd_err err = { 0 };
        /* the brief: skip (not fail) where no GPU can be opened */
        if (bd_backend_cuda_new(0, &gpu, &err) < 0) {
                printf("1..0 # SKIP no GPU: %s\n", err.msg);
                return 0;
        }
        if (bd_backend_cpu_new(0, &cpu, &err) < 0) {
                printf("Bail out! cpu backend: %s\n", err.msg);
                return 1;
        }
        bd_rng_seed(&rng, 22, 0);
        struct det_roi_align p7 = { 7, 7, 2, 0, 0.25 }, pa = { 5, 6, -1, 1, 0.5 };
        enum bd_layout ls[3] = { BD_NCHW, BD_NCHW8C, BD_NHWC };
        for (int li = 0; li < 3; li++) {
                single_level(ls[li], &p7, "7x7 sampling 2");
                single_level(ls[li], &pa, "5x6 adaptive aligned");
        }
        multiscale(0);
        multiscale(1);
        mask_targets();
        bd_backend_free(gpu);
        bd_backend_free(cpu);
        return done_testing();
}

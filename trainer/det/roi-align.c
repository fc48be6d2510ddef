/* roi-align.c: RoIAlign, multi-scale RoIAlign and mask targets (roi-align.h):
 * operand checks, the level mapper and the CPU loops (roi-align-cpu.h); the
 * CUDA kernels are in roi-align.cu. */
#include "config.h"

/* torchvision's kernel has no fused multiply-adds, whatever the target:
 * neither may ours (float32 results are to be torchvision's bits) */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "macro.h"
#include "roi-align.h"

/* one feature map (or its gradient) as the CPU loops see it */
struct ra_cmap {
        void *data;
        int64_t H, W, sP;       /* sP: distance between pixels of a channel */
        double scale;
        int64_t *coff;          /* C channel offsets within an image */
        int vec8;               /* channels in contiguous runs of 8 */
};

struct ra_job {
        int64_t R, N, C, PH, PW;
        int sampling, aligned, nthreads;
        const void *rois;
        const int32_t *levels;  /* level per RoI, NULL: all 0 */
        struct ra_cmap map[DET_ROI_MAX_LEVELS];
};

/* a thread's scratch, grown as needed */
struct ra_buf {
        void *p;
        size_t cap;
};

static void ra_buf_reserve(struct ra_buf *b, size_t bytes)
{
        if (bytes <= b->cap)
                return;
        free(b->p);
        b->p = xmalloc(bytes);
        b->cap = bytes;
}

#define RA_EXTRA "roi-align-cpu.h"
#include "roi-align-types.h"

/* ---- operand checks ---- */

static int check_params(struct bd_backend *be, const char *op, const struct det_roi_align *p)
{
        if (p->pooled_h < 1 || p->pooled_w < 1 || p->pooled_h > 4096 || p->pooled_w > 4096)
                return bd_err_set(&be->err, -EINVAL, "%s: output %lld x %lld not in [1, 4096]", op,
                                  (long long)p->pooled_h, (long long)p->pooled_w);
        return 0;
}

/* a feature map (or gradient map) of the backend's device */
static int check_map(struct bd_backend *be, const char *op, const char *what, const struct bd_tensor *x)
{
        char s[96];
        if (x->ndim != 4 || x->dev != be->dev || (x->dtype != BD_F32 && x->dtype != BD_F64) ||
            (x->dtype == BD_F64 && be->dev != BD_CPU) || x->layout >= _BD_LAYOUT_MAX ||
            (x->layout == BD_NCHW8C && BD_C(x) % 8) || BD_H(x) < 1 || BD_W(x) < 1 || BD_H(x) > INT32_MAX / 2 ||
            BD_W(x) > INT32_MAX / 2)
                return bd_err_set(&be->err, -EINVAL, "%s: %s %s: want (N, C, H, W) f32 (f64 on the cpu) on %s", op,
                                  what, bd_tensor_str(x, s, sizeof(s)), be->ops->name);
        return 0;
}

static int check_rois(struct bd_backend *be, const char *op, const struct bd_tensor *rois, enum bd_dtype dt)
{
        char s[96];
        if (rois->ndim != 2 || rois->dims[1] != 5 || rois->dtype != dt || rois->layout != BD_NCHW ||
            rois->dev != be->dev)
                return bd_err_set(&be->err, -EINVAL, "%s: rois %s: want (R, 5) %s on %s", op,
                                  bd_tensor_str(rois, s, sizeof(s)), bd_dtype_name(dt), be->ops->name);
        return 0;
}

static int check_out(struct bd_backend *be, const char *op, const struct bd_tensor *dy, const struct bd_tensor *rois,
                     int64_t C, const struct det_roi_align *p, enum bd_dtype dt)
{
        char s[96];
        if (dy->ndim != 4 || dy->dims[0] != rois->dims[0] || dy->dims[1] != C || dy->dims[2] != p->pooled_h ||
            dy->dims[3] != p->pooled_w || dy->dtype != dt || dy->layout != BD_NCHW || dy->dev != be->dev)
                return bd_err_set(&be->err, -EINVAL, "%s: dy %s: want (%lld, %lld, %lld, %lld) %s", op,
                                  bd_tensor_str(dy, s, sizeof(s)), (long long)rois->dims[0], (long long)C,
                                  (long long)p->pooled_h, (long long)p->pooled_w, bd_dtype_name(dt));
        return 0;
}

/* ---- the job: maps, levels, dispatch ---- */

static void job_init(struct ra_job *j, struct bd_backend *be, const struct det_roi_align *p,
                     const struct bd_tensor *rois, int64_t N, int64_t C)
{
        memset(j, 0, sizeof(*j));
        j->R = rois->dims[0];
        j->N = N;
        j->C = C;
        j->PH = p->pooled_h;
        j->PW = p->pooled_w;
        j->sampling = p->sampling_ratio;
        j->aligned = p->aligned;
        j->nthreads = be->nthreads > 0 ? be->nthreads : 1;
        j->rois = rois->data;
}

static void job_map(struct ra_job *j, int l, const struct bd_tensor *x, double scale)
{
        struct ra_cmap *m = &j->map[l];
        m->data = x->data;
        m->H = BD_H(x);
        m->W = BD_W(x);
        m->sP = ra_pstride(x->layout, j->C);
        m->scale = scale;
        m->coff = xmalloc((size_t)(j->C > 0 ? j->C : 1) * sizeof(int64_t));
        for (int64_t c = 0; c < j->C; c++)
                m->coff[c] = ra_coff(x->layout, j->C, m->H * m->W, c);
        m->vec8 = j->C % 8 == 0 && (x->layout == BD_NCHW8C || x->layout == BD_NHWC);
}

static void job_release(struct ra_job *j)
{
        for (int l = 0; l < DET_ROI_MAX_LEVELS; l++)
                free(j->map[l].coff);
}

/* zeroes a gradient map in parallel (it can be 100+ MB) */
static void zero_map(const struct bd_tensor *t, int nthreads)
{
        char *p = t->data;
        size_t n = bd_tensor_bytes(t), chunk = 1 << 20;
        int64_t nchunks = (int64_t)((n + chunk - 1) / chunk);
#pragma omp parallel for num_threads(nthreads) schedule(static) if (nchunks > 1)
        for (int64_t i = 0; i < nchunks; i++) {
                size_t o = (size_t)i * chunk;
                memset(p + o, 0, n - o < chunk ? n - o : chunk);
        }
}

#if HAVE_CUDA
static void cuda_job(struct det_roi_job *cj, const struct ra_job *j, const struct bd_tensor *const *maps, int nlev,
                     enum bd_dtype dt)
{
        memset(cj, 0, sizeof(*cj));
        cj->R = j->R;
        cj->N = j->N;
        cj->C = j->C;
        cj->ph = j->PH;
        cj->pw = j->PW;
        cj->sampling = j->sampling;
        cj->aligned = j->aligned;
        cj->nlevels = nlev;
        cj->dtype = dt;
        for (int l = 0; l < nlev; l++) {
                cj->map[l].data = maps[l]->data;
                cj->map[l].H = BD_H(maps[l]);
                cj->map[l].W = BD_W(maps[l]);
                cj->map[l].layout = maps[l]->layout;
                cj->map[l].scale = j->map[l].scale;
        }
}
#endif

/* runs the forward (dy == NULL) or the backward of a job over nlev maps */
static int run(struct bd_backend *be, struct ra_job *j, const struct bd_tensor *const *maps, int nlev,
               enum bd_dtype dt, const struct det_msroi *ms, void *y, const void *dy, unsigned flags)
{
        if (be->dev == BD_CPU) {
                if (!dy) {
                        if (dt == BD_F64)
                                ra_fwd_f64(j, y);
                        else
                                ra_fwd_f32(j, y);
                } else {
                        for (int l = 0; l < nlev && !(flags & BD_ACC_DX); l++)
                                zero_map(maps[l], j->nthreads);
                        if (dt == BD_F64)
                                ra_bwd_f64(j, dy);
                        else
                                ra_bwd_f32(j, dy);
                }
                return 0;
        }
#if HAVE_CUDA
        if (be->dev == BD_CUDA) {
                struct det_roi_job cj;
                int32_t *dlev = NULL;
                int r = 0;
                cuda_job(&cj, j, maps, nlev, dt);
                cj.acc = !!(flags & BD_ACC_DX);
                if (ms && !j->levels) {
                        cj.mapper = 1;
                        cj.plus_one = ms->plus_one;
                        cj.kmin = ms->kmin;
                        cj.kmax = ms->kmax;
                        cj.canonical_scale = ms->canonical_scale;
                        cj.canonical_level = ms->canonical_level;
                } else if (j->levels && j->R > 0) {
                        size_t bytes = (size_t)j->R * sizeof(int32_t);
                        dlev = be->ops->alloc(be, bytes);
                        if (!dlev)
                                return bd_err_set(&be->err, -ENOMEM, "roi_align: no device memory for levels");
                        r = be->ops->copy(be, dlev, BD_CUDA, j->levels, BD_CPU, bytes);
                }
                if (r >= 0)
                        r = dy ? det_roi_cuda_bwd(be, &cj, j->rois, dlev, dy) : det_roi_cuda_fwd(be, &cj, j->rois, dlev, y);
                if (dlev) {
                        int r2 = be->ops->sync(be);
                        be->ops->free(be, dlev);
                        if (r >= 0)
                                r = r2;
                }
                return r;
        }
#else
        (void)ms;
        (void)flags;
#endif
        return bd_err_set(&be->err, -EOPNOTSUPP, "roi_align: not on the %s backend", be->ops->name);
}

/* ---- RoIAlign ---- */

int det_roi_align_fwd(struct bd_backend *be, const struct det_roi_align *p, const struct bd_tensor *x,
                      const struct bd_tensor *rois, struct bd_tensor *y)
{
        const char *op = "roi_align";
        int r;
        if ((r = check_params(be, op, p)) < 0 || (r = check_map(be, op, "x", x)) < 0 ||
            (r = check_rois(be, op, rois, x->dtype)) < 0)
                return r;
        int64_t dims[4] = { rois->dims[0], BD_C(x), p->pooled_h, p->pooled_w };
        if ((r = bd_tensor_resize(be, y, x->dtype, BD_NCHW, 4, dims)) < 0)
                return bd_err_set(&be->err, r, "%s: cannot allocate the output", op);
        if (dims[0] == 0 || dims[1] == 0)
                return 0;
        struct ra_job j;
        job_init(&j, be, p, rois, BD_N(x), BD_C(x));
        job_map(&j, 0, x, p->spatial_scale);
        r = run(be, &j, &x, 1, x->dtype, NULL, y->data, NULL, 0);
        job_release(&j);
        return r;
}

int det_roi_align_bwd(struct bd_backend *be, const struct det_roi_align *p, const struct bd_tensor *dy,
                      const struct bd_tensor *rois, struct bd_tensor *dx, unsigned flags)
{
        const char *op = "roi_align_bwd";
        int r;
        if ((r = check_params(be, op, p)) < 0 || (r = check_map(be, op, "dx", dx)) < 0 ||
            (r = check_rois(be, op, rois, dx->dtype)) < 0 || (r = check_out(be, op, dy, rois, BD_C(dx), p, dx->dtype)) < 0)
                return r;
        struct ra_job j;
        job_init(&j, be, p, rois, BD_N(dx), BD_C(dx));
        job_map(&j, 0, dx, p->spatial_scale);
        const struct bd_tensor *maps[1] = { dx };
        r = run(be, &j, maps, 1, dx->dtype, NULL, NULL, dy->data, flags);
        job_release(&j);
        return r;
}

/* ---- multi-scale ---- */

double det_roi_infer_scale(int64_t feat_h, int64_t img_h)
{
        float approx = (float)((double)feat_h / (double)img_h);
        return pow(2.0, (double)rintf(log2f(approx)));
}

int det_msroi_init(struct det_msroi *m, const struct det_conv *c, int nlevels, const double *scales, int64_t out,
                   int sampling, struct bd_err *err)
{
        memset(m, 0, sizeof(*m));
        if (nlevels < 1 || nlevels > DET_ROI_MAX_LEVELS)
                return bd_err_set(err, -EINVAL, "multiscale roi_align: %d levels not in [1, %d]", nlevels,
                                  DET_ROI_MAX_LEVELS);
        for (int l = 0; l < nlevels; l++)
                if (!(scales[l] > 0) || !isfinite(scales[l]))
                        return bd_err_set(err, -EINVAL, "multiscale roi_align: scale %d is %g", l, scales[l]);
        m->nlevels = nlevels;
        memcpy(m->scales, scales, (size_t)nlevels * sizeof(double));
        /* torchvision: int(-log2(float32 scale)), truncated */
        m->kmin = (int)-log2f((float)scales[0]);
        m->kmax = (int)-log2f((float)scales[nlevels - 1]);
        if (m->kmax - m->kmin + 1 != nlevels)
                return bd_err_set(err, -EINVAL, "multiscale roi_align: scales give levels %d..%d for %d maps", m->kmin,
                                  m->kmax, nlevels);
        m->canonical_scale = 224;
        m->canonical_level = 4;
        m->plus_one = c->plus_one;
        m->ra.pooled_h = m->ra.pooled_w = out;
        m->ra.sampling_ratio = sampling;
        m->ra.aligned = 0;
        m->ra.spatial_scale = 1.0;
        return 0;
}

void det_msroi_levels(const struct det_msroi *m, const float *rois, int64_t R, int32_t *levels)
{
        for (int64_t r = 0; r < R; r++)
                levels[r] = ra_level_f32(rois + 5 * r + 1, m->plus_one, m->kmin, m->kmax, m->canonical_scale,
                                         m->canonical_level);
}

static void msroi_levels_f64(const struct det_msroi *m, const double *rois, int64_t R, int32_t *levels)
{
        for (int64_t r = 0; r < R; r++)
                levels[r] = ra_level_f64(rois + 5 * r + 1, m->plus_one, m->kmin, m->kmax, m->canonical_scale,
                                         m->canonical_level);
}

static int msroi_run(struct bd_backend *be, const struct det_msroi *m, const struct bd_tensor *const *maps,
                     const struct bd_tensor *rois, const int32_t *levels, void *y, const void *dy, unsigned flags)
{
        struct ra_job j;
        int32_t *lv = NULL;
        int64_t R = rois->dims[0];
        int r;
        if (levels)
                for (int64_t i = 0; i < R; i++)
                        if (levels[i] < 0 || levels[i] >= m->nlevels)
                                return bd_err_set(&be->err, -EINVAL,
                                                  "multiscale roi_align: roi %lld: level %d not in [0, %d)",
                                                  (long long)i, levels[i], m->nlevels);
        job_init(&j, be, &m->ra, rois, BD_N(maps[0]), BD_C(maps[0]));
        for (int l = 0; l < m->nlevels; l++)
                job_map(&j, l, maps[l], m->scales[l]);
        j.levels = levels;
        if (!levels && be->dev == BD_CPU && R > 0) {
                lv = xmalloc((size_t)R * sizeof(int32_t));
                if (rois->dtype == BD_F64)
                        msroi_levels_f64(m, rois->data, R, lv);
                else
                        det_msroi_levels(m, rois->data, R, lv);
                j.levels = lv;
        }
        r = run(be, &j, maps, m->nlevels, maps[0]->dtype, m, y, dy, flags);
        free(lv);
        job_release(&j);
        return r;
}

static int check_levels(struct bd_backend *be, const char *op, const struct det_msroi *m,
                        const struct bd_tensor *const *maps)
{
        int r;
        if (m->nlevels < 1 || m->nlevels > DET_ROI_MAX_LEVELS)
                return bd_err_set(&be->err, -EINVAL, "%s: %d levels", op, m->nlevels);
        for (int l = 0; l < m->nlevels; l++) {
                if ((r = check_map(be, op, "map", maps[l])) < 0)
                        return r;
                if (BD_N(maps[l]) != BD_N(maps[0]) || BD_C(maps[l]) != BD_C(maps[0]) ||
                    maps[l]->dtype != maps[0]->dtype)
                        return bd_err_set(&be->err, -EINVAL, "%s: map %d: batch, channels or type differ from map 0",
                                          op, l);
        }
        return check_params(be, op, &m->ra);
}

int det_msroi_fwd(struct bd_backend *be, const struct det_msroi *m, const struct bd_tensor *const *feats,
                  const struct bd_tensor *rois, const int32_t *levels, struct bd_tensor *y)
{
        const char *op = "multiscale roi_align";
        int r;
        if ((r = check_levels(be, op, m, feats)) < 0 || (r = check_rois(be, op, rois, feats[0]->dtype)) < 0)
                return r;
        int64_t dims[4] = { rois->dims[0], BD_C(feats[0]), m->ra.pooled_h, m->ra.pooled_w };
        if ((r = bd_tensor_resize(be, y, feats[0]->dtype, BD_NCHW, 4, dims)) < 0)
                return bd_err_set(&be->err, r, "%s: cannot allocate the output", op);
        if (dims[0] == 0 || dims[1] == 0)
                return 0;
        return msroi_run(be, m, feats, rois, levels, y->data, NULL, 0);
}

int det_msroi_bwd(struct bd_backend *be, const struct det_msroi *m, const struct bd_tensor *dy,
                  const struct bd_tensor *rois, const int32_t *levels, struct bd_tensor *const *dfeats,
                  unsigned flags)
{
        const char *op = "multiscale roi_align_bwd";
        const struct bd_tensor *const *maps = (const struct bd_tensor *const *)dfeats;
        int r;
        if ((r = check_levels(be, op, m, maps)) < 0 || (r = check_rois(be, op, rois, maps[0]->dtype)) < 0 ||
            (r = check_out(be, op, dy, rois, BD_C(maps[0]), &m->ra, maps[0]->dtype)) < 0)
                return r;
        return msroi_run(be, m, maps, rois, levels, NULL, dy->data, flags);
}

/* ---- mask targets ---- */

static void mask_target(int64_t M, const uint8_t *masks, int64_t ngt, int64_t H, int64_t W, const float *box,
                        int32_t idx, float *out, struct ra_buf *buf)
{
        float roi[5] = { (float)idx, box[0], box[1], box[2], box[3] };
        struct ra_geom_f32 g;
        if (idx < 0 || idx >= ngt)
                roi[0] = -1;    /* zeros */
        ra_geom_f32(roi, 1.0f, 0, M, M, -1, ngt, &g);
        if (g.n < 0) {
                memset(out, 0, (size_t)(M * M) * sizeof(float));
                return;
        }
        size_t ny = (size_t)(M * g.gh), nx = (size_t)(M * g.gw);
        ra_buf_reserve(buf, (ny + nx) * sizeof(struct ra_axis_f32));
        struct ra_axis_f32 *ys = buf->p, *xs = ys + ny;
        for (int64_t ph = 0; ph < M; ph++)
                for (int iy = 0; iy < g.gh; iy++)
                        ys[ph * g.gh + iy] = ra_axis_f32(ra_coord_f32(g.start_h, g.bin_h, ph, iy, g.gh), H);
        for (int64_t pw = 0; pw < M; pw++)
                for (int ix = 0; ix < g.gw; ix++)
                        xs[pw * g.gw + ix] = ra_axis_f32(ra_coord_f32(g.start_w, g.bin_w, pw, ix, g.gw), W);
        const uint8_t *mk = masks + g.n * H * W;
        for (int64_t ph = 0; ph < M; ph++) {
                for (int64_t pw = 0; pw < M; pw++) {
                        float acc = 0;
                        for (int iy = 0; iy < g.gh; iy++) {
                                struct ra_axis_f32 ya = ys[ph * g.gh + iy];
                                if (ya.lo < 0)
                                        continue;
                                for (int ix = 0; ix < g.gw; ix++) {
                                        struct ra_axis_f32 xa = xs[pw * g.gw + ix];
                                        if (xa.lo < 0)
                                                continue;
                                        struct ra_taps_f32 t = ra_taps_f32(ya, xa, W, 1);
                                        acc += t.w1 * (float)mk[t.p1] + t.w2 * (float)mk[t.p2] +
                                               t.w3 * (float)mk[t.p3] + t.w4 * (float)mk[t.p4];
                                }
                        }
                        out[ph * M + pw] = acc / g.count;
                }
        }
}

int det_roi_mask_targets(struct bd_backend *be, int64_t M, const uint8_t *masks, int64_t ngt, int64_t H, int64_t W,
                     const struct bd_tensor *boxes, const struct bd_tensor *matched, struct bd_tensor *out)
{
        char s[96], t[96];
        int r;
        if (M < 1 || M > 4096 || ngt < 0 || H < 1 || W < 1 || H > INT32_MAX / 2 || W > INT32_MAX / 2 ||
            (ngt > 0 && !masks))
                return bd_err_set(&be->err, -EINVAL, "mask_targets: M %lld, %lld masks of %lld x %lld", (long long)M,
                                  (long long)ngt, (long long)H, (long long)W);
        if (boxes->ndim != 2 || boxes->dims[1] != 4 || boxes->dtype != BD_F32 || boxes->dev != be->dev ||
            matched->ndim != 1 || matched->dims[0] != boxes->dims[0] || matched->dtype != BD_I32 ||
            matched->dev != be->dev)
                return bd_err_set(&be->err, -EINVAL, "mask_targets: boxes %s, matched %s: want (P, 4) f32, (P) i32",
                                  bd_tensor_str(boxes, s, sizeof(s)), bd_tensor_str(matched, t, sizeof(t)));
        int64_t P = boxes->dims[0], dims[3] = { P, M, M };
        if ((r = bd_tensor_resize(be, out, BD_F32, BD_NCHW, 3, dims)) < 0)
                return bd_err_set(&be->err, r, "mask_targets: cannot allocate the output");
        if (P == 0)
                return 0;
        if (be->dev == BD_CPU) {
                const float *b = boxes->data;
                const int32_t *mi = matched->data;
                float *o = out->data;
#pragma omp parallel num_threads(be->nthreads > 0 ? be->nthreads : 1) if (P * M * M >= 4096)
                {
                        struct ra_buf buf = { NULL, 0 };
#pragma omp for schedule(dynamic, 1)
                        for (int64_t i = 0; i < P; i++)
                                mask_target(M, masks, ngt, H, W, b + 4 * i, mi[i], o + i * M * M, &buf);
                        free(buf.p);
                }
                return 0;
        }
#if HAVE_CUDA
        if (be->dev == BD_CUDA)
                return det_mask_targets_cuda(be, M, masks, ngt, H, W, P, boxes->data, matched->data, out->data);
#endif
        return bd_err_set(&be->err, -EOPNOTSUPP, "mask_targets: not on the %s backend", be->ops->name);
}

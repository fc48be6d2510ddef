/* roi-align-cpu.h: the CPU loops of RoIAlign, included by roi-align.c once
 * per element type after roi-align-impl.h (same RA_T, RA_SFX).
 *
 * The bilinear weights of a RoI are computed once per sample and applied to
 * all channels: accumulators for a bin's C channels, channels innermost (8
 * contiguous lanes in NCHW8C and NHWC, one channel's plane in NCHW).  Each
 * lane adds its samples in torchvision's order, so float32 results are
 * torchvision's.  Forward: parallel over RoIs.  Backward: parallel over
 * channel ranges, every thread walking all RoIs in order, so each gradient
 * element receives its contributions in one fixed order (no atomics).
 */

/* per-RoI axes of the sample grid, in the thread's scratch */
static int RA_FN(ra_axes)(const struct ra_job *j, const struct ra_cmap *m, const RA_T *roi,
                          struct RA_FN(ra_geom) *g, struct ra_buf *buf, struct RA_FN(ra_axis) **ys,
                          struct RA_FN(ra_axis) **xs)
{
        RA_FN(ra_geom)(roi, (RA_T)m->scale, j->aligned, j->PH, j->PW, j->sampling, j->N, g);
        if (g->n < 0)
                return 0;
        size_t ny = (size_t)(j->PH * g->gh), nx = (size_t)(j->PW * g->gw);
        size_t bytes = (ny + nx) * sizeof(struct RA_FN(ra_axis)) + (size_t)j->C * sizeof(RA_T);
        ra_buf_reserve(buf, bytes);
        *ys = buf->p;
        *xs = *ys + ny;
        for (int64_t ph = 0; ph < j->PH; ph++)
                for (int iy = 0; iy < g->gh; iy++)
                        (*ys)[ph * g->gh + iy] = RA_FN(ra_axis)(RA_FN(ra_coord)(g->start_h, g->bin_h, ph, iy, g->gh),
                                                                m->H);
        for (int64_t pw = 0; pw < j->PW; pw++)
                for (int ix = 0; ix < g->gw; ix++)
                        (*xs)[pw * g->gw + ix] = RA_FN(ra_axis)(RA_FN(ra_coord)(g->start_w, g->bin_w, pw, ix, g->gw),
                                                                m->W);
        return 1;
}

/* channel accumulators follow the axes in the scratch */
static RA_T *RA_FN(ra_acc)(const struct RA_FN(ra_geom) *g, const struct ra_job *j, struct ra_buf *buf)
{
        return (RA_T *)((struct RA_FN(ra_axis) *)buf->p + j->PH * g->gh + j->PW * g->gw);
}

static void RA_FN(ra_fwd_roi)(const struct ra_job *j, int64_t r, RA_T *y, struct ra_buf *buf)
{
        const RA_T *roi = (const RA_T *)j->rois + 5 * r;
        int64_t C = j->C, PHW = j->PH * j->PW;
        RA_T *yr = y + r * C * PHW;
        int lev = j->levels ? j->levels[r] : 0;
        struct RA_FN(ra_geom) g;
        struct RA_FN(ra_axis) *ys, *xs;
        if (lev < 0 || !RA_FN(ra_axes)(j, &j->map[lev], roi, &g, buf, &ys, &xs)) {
                memset(yr, 0, (size_t)(C * PHW) * sizeof(RA_T));
                return;
        }
        const struct ra_cmap *m = &j->map[lev];
        const RA_T *xn = (const RA_T *)m->data + g.n * C * m->H * m->W;
        const int64_t *coff = m->coff;
        RA_T *acc = RA_FN(ra_acc)(&g, j, buf);
        for (int64_t ph = 0; ph < j->PH; ph++) {
                for (int64_t pw = 0; pw < j->PW; pw++) {
                        memset(acc, 0, (size_t)C * sizeof(RA_T));
                        for (int iy = 0; iy < g.gh; iy++) {
                                struct RA_FN(ra_axis) ya = ys[ph * g.gh + iy];
                                if (ya.lo < 0)
                                        continue;
                                for (int ix = 0; ix < g.gw; ix++) {
                                        struct RA_FN(ra_axis) xa = xs[pw * g.gw + ix];
                                        if (xa.lo < 0)
                                                continue;
                                        RA_T w1 = ya.h * xa.h, w2 = ya.h * xa.l, w3 = ya.l * xa.h, w4 = ya.l * xa.l;
                                        int64_t p1 = (ya.lo * m->W + xa.lo) * m->sP, p2 = (ya.lo * m->W + xa.hi) * m->sP;
                                        int64_t p3 = (ya.hi * m->W + xa.lo) * m->sP, p4 = (ya.hi * m->W + xa.hi) * m->sP;
                                        if (m->vec8) {
                                                for (int64_t k = 0; k < C; k += 8) {
                                                        const RA_T *b = xn + coff[k];
                                                        RA_T *a = acc + k;
#pragma omp simd
                                                        for (int l = 0; l < 8; l++)
                                                                a[l] += w1 * b[p1 + l] + w2 * b[p2 + l] + w3 * b[p3 + l] +
                                                                        w4 * b[p4 + l];
                                                }
                                        } else {
                                                for (int64_t c = 0; c < C; c++) {
                                                        const RA_T *b = xn + coff[c];
                                                        acc[c] += w1 * b[p1] + w2 * b[p2] + w3 * b[p3] + w4 * b[p4];
                                                }
                                        }
                                }
                        }
                        for (int64_t c = 0; c < C; c++)
                                yr[c * PHW + ph * j->PW + pw] = acc[c] / g.count;
                }
        }
}

static void RA_FN(ra_fwd)(const struct ra_job *j, RA_T *y)
{
#pragma omp parallel num_threads(j->nthreads) if (j->R * j->C >= 2048)
        {
                struct ra_buf buf = { NULL, 0 };
#pragma omp for schedule(dynamic, 1)
                for (int64_t r = 0; r < j->R; r++)
                        RA_FN(ra_fwd_roi)(j, r, y, &buf);
                free(buf.p);
        }
}

/* the gradient of RoI r into channels [c0, c1) */
static void RA_FN(ra_bwd_roi)(const struct ra_job *j, int64_t r, const RA_T *dy, int64_t c0, int64_t c1,
                              struct ra_buf *buf)
{
        const RA_T *roi = (const RA_T *)j->rois + 5 * r;
        int64_t C = j->C, PHW = j->PH * j->PW;
        int lev = j->levels ? j->levels[r] : 0;
        struct RA_FN(ra_geom) g;
        struct RA_FN(ra_axis) *ys, *xs;
        if (lev < 0 || !RA_FN(ra_axes)(j, &j->map[lev], roi, &g, buf, &ys, &xs))
                return;
        const struct ra_cmap *m = &j->map[lev];
        RA_T *dxn = (RA_T *)m->data + g.n * C * m->H * m->W;
        const int64_t *coff = m->coff;
        const RA_T *dyr = dy + r * C * PHW;
        RA_T *d = RA_FN(ra_acc)(&g, j, buf);   /* dy of the bin, per channel */
        /* torchvision: count = grid_h grid_w, no samples when 0 */
        RA_T count = (RA_T)(g.gh * g.gw);
        for (int64_t ph = 0; ph < j->PH; ph++) {
                for (int64_t pw = 0; pw < j->PW; pw++) {
                        for (int64_t c = c0; c < c1; c++)
                                d[c] = dyr[c * PHW + ph * j->PW + pw];
                        for (int iy = 0; iy < g.gh; iy++) {
                                struct RA_FN(ra_axis) ya = ys[ph * g.gh + iy];
                                if (ya.lo < 0)
                                        continue;
                                for (int ix = 0; ix < g.gw; ix++) {
                                        struct RA_FN(ra_axis) xa = xs[pw * g.gw + ix];
                                        if (xa.lo < 0)
                                                continue;
                                        RA_T w1 = ya.h * xa.h, w2 = ya.h * xa.l, w3 = ya.l * xa.h, w4 = ya.l * xa.l;
                                        int64_t p1 = (ya.lo * m->W + xa.lo) * m->sP, p2 = (ya.lo * m->W + xa.hi) * m->sP;
                                        int64_t p3 = (ya.hi * m->W + xa.lo) * m->sP, p4 = (ya.hi * m->W + xa.hi) * m->sP;
                                        if (m->vec8) {
                                                for (int64_t k = c0; k < c1; k += 8) {
                                                        RA_T *b = dxn + coff[k];
                                                        const RA_T *dk = d + k;
#pragma omp simd
                                                        for (int l = 0; l < 8; l++) {
                                                                /* in torchvision's order: p1 may equal p3 */
                                                                b[p1 + l] += dk[l] * w1 / count;
                                                                b[p2 + l] += dk[l] * w2 / count;
                                                                b[p3 + l] += dk[l] * w3 / count;
                                                                b[p4 + l] += dk[l] * w4 / count;
                                                        }
                                                }
                                        } else {
                                                for (int64_t c = c0; c < c1; c++) {
                                                        RA_T *b = dxn + coff[c];
                                                        b[p1] += d[c] * w1 / count;
                                                        b[p2] += d[c] * w2 / count;
                                                        b[p3] += d[c] * w3 / count;
                                                        b[p4] += d[c] * w4 / count;
                                                }
                                        }
                                }
                        }
                }
        }
}

static void RA_FN(ra_bwd)(const struct ra_job *j, const RA_T *dy)
{
        /* channel ranges in units of 8 when every map's lanes come in 8s */
        int64_t unit = j->C % 8 == 0 ? 8 : 1, units = j->C / unit;
#pragma omp parallel num_threads(j->nthreads) if (j->R * j->C >= 2048)
        {
                int t = 0, nt = 1;
#ifdef _OPENMP
                t = omp_get_thread_num();
                nt = omp_get_num_threads();
#endif
                int64_t c0 = units * t / nt * unit, c1 = units * (t + 1) / nt * unit;
                struct ra_buf buf = { NULL, 0 };
                for (int64_t r = 0; c0 < c1 && r < j->R; r++)
                        RA_FN(ra_bwd_roi)(j, r, dy, c0, c1, &buf);
                free(buf.p);
        }
}

/* roi-align-cpu.h: the CPU loops of RoIAlign, included by roi-align.c
 * through roi-align-types.h once per element type after roi-align-impl.h.
 *
 * The bilinear weights of a RoI are computed once per sample and applied to
 * all channels: accumulators for a bin's C channels, channels innermost (8
 * contiguous lanes in NCHW8C and NHWC, one channel's plane in NCHW).  Each
 * lane adds its samples in torchvision's order, so float32 results are
 * torchvision's.  Forward: parallel over RoIs.  Backward: parallel over
 * channel ranges, every thread walking all RoIs in order, so each gradient
 * element receives its contributions in one fixed order (no atomics).
 */

/* A RoI on its map, in the thread's scratch: the axes of its sample grid,
 * room for one bin's taps and C per-channel values. */
struct RA_FN(ra_roi) {
        struct RA_FN(ra_geom) g;
        const struct ra_cmap *m;
        struct RA_FN(ra_axis) *ys, *xs;
        struct RA_FN(ra_taps) *taps;
        RA_T *chan;
};

/* 0 when the RoI gives zeros (bad RoI or level) */
static int RA_FN(ra_setup)(const struct ra_job *j, int64_t r, struct ra_buf *buf, struct RA_FN(ra_roi) *s)
{
        const RA_T *roi = (const RA_T *)j->rois + 5 * r;
        int lev = j->levels ? j->levels[r] : 0;
        if (lev < 0)
                return 0;
        s->m = &j->map[lev];
        RA_FN(ra_geom)(roi, (RA_T)s->m->scale, j->aligned, j->PH, j->PW, j->sampling, j->N, &s->g);
        if (s->g.n < 0)
                return 0;
        size_t ny = (size_t)(j->PH * s->g.gh), nx = (size_t)(j->PW * s->g.gw), nt = (size_t)(s->g.gh * s->g.gw);
        ra_buf_reserve(buf, (ny + nx) * sizeof(struct RA_FN(ra_axis)) + nt * sizeof(struct RA_FN(ra_taps)) +
                                    (size_t)j->C * sizeof(RA_T));
        s->ys = buf->p;
        s->xs = s->ys + ny;
        s->taps = (struct RA_FN(ra_taps) *)(s->xs + nx);
        s->chan = (RA_T *)(s->taps + nt);
        for (int64_t ph = 0; ph < j->PH; ph++)
                for (int iy = 0; iy < s->g.gh; iy++)
                        s->ys[ph * s->g.gh + iy] =
                                RA_FN(ra_axis)(RA_FN(ra_coord)(s->g.start_h, s->g.bin_h, ph, iy, s->g.gh), s->m->H);
        for (int64_t pw = 0; pw < j->PW; pw++)
                for (int ix = 0; ix < s->g.gw; ix++)
                        s->xs[pw * s->g.gw + ix] =
                                RA_FN(ra_axis)(RA_FN(ra_coord)(s->g.start_w, s->g.bin_w, pw, ix, s->g.gw), s->m->W);
        return 1;
}

/* the taps of bin (ph, pw)'s samples inside the map, in torchvision's order
 * (rows outer); returns their count */
static int RA_FN(ra_bin)(struct RA_FN(ra_roi) *s, int64_t ph, int64_t pw)
{
        int n = 0;
        for (int iy = 0; iy < s->g.gh; iy++) {
                struct RA_FN(ra_axis) ya = s->ys[ph * s->g.gh + iy];
                if (ya.lo < 0)
                        continue;
                for (int ix = 0; ix < s->g.gw; ix++) {
                        struct RA_FN(ra_axis) xa = s->xs[pw * s->g.gw + ix];
                        if (xa.lo >= 0)
                                s->taps[n++] = RA_FN(ra_taps)(ya, xa, s->m->W, s->m->sP);
                }
        }
        return n;
}

static void RA_FN(ra_fwd_roi)(const struct ra_job *j, int64_t r, RA_T *y, struct ra_buf *buf)
{
        int64_t C = j->C, PHW = j->PH * j->PW;
        RA_T *yr = y + r * C * PHW;
        struct RA_FN(ra_roi) s;
        if (!RA_FN(ra_setup)(j, r, buf, &s)) {
                memset(yr, 0, (size_t)(C * PHW) * sizeof(RA_T));
                return;
        }
        const RA_T *xn = (const RA_T *)s.m->data + s.g.n * C * s.m->H * s.m->W;
        const int64_t *coff = s.m->coff;
        RA_T *acc = s.chan;
        for (int64_t ph = 0; ph < j->PH; ph++) {
                for (int64_t pw = 0; pw < j->PW; pw++) {
                        int nt = RA_FN(ra_bin)(&s, ph, pw);
                        memset(acc, 0, (size_t)C * sizeof(RA_T));
                        for (int k = 0; k < nt; k++) {
                                RA_T w1 = s.taps[k].w1, w2 = s.taps[k].w2, w3 = s.taps[k].w3, w4 = s.taps[k].w4;
                                int64_t p1 = s.taps[k].p1, p2 = s.taps[k].p2, p3 = s.taps[k].p3, p4 = s.taps[k].p4;
                                if (s.m->vec8) {
                                        for (int64_t c = 0; c < C; c += 8) {
                                                const RA_T *b = xn + coff[c];
                                                RA_T *a = acc + c;
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
                        for (int64_t c = 0; c < C; c++)
                                yr[c * PHW + ph * j->PW + pw] = acc[c] / s.g.count;
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
        int64_t C = j->C, PHW = j->PH * j->PW;
        struct RA_FN(ra_roi) s;
        if (!RA_FN(ra_setup)(j, r, buf, &s))
                return;
        RA_T *dxn = (RA_T *)s.m->data + s.g.n * C * s.m->H * s.m->W;
        const int64_t *coff = s.m->coff;
        const RA_T *dyr = dy + r * C * PHW;
        RA_T *d = s.chan;       /* dy of the bin, per channel */
        /* torchvision: count = grid_h grid_w, no samples when 0 */
        RA_T count = (RA_T)(s.g.gh * s.g.gw);
        for (int64_t ph = 0; ph < j->PH; ph++) {
                for (int64_t pw = 0; pw < j->PW; pw++) {
                        int nt = RA_FN(ra_bin)(&s, ph, pw);
                        for (int64_t c = c0; c < c1; c++)
                                d[c] = dyr[c * PHW + ph * j->PW + pw];
                        for (int k = 0; k < nt; k++) {
                                RA_T w1 = s.taps[k].w1, w2 = s.taps[k].w2, w3 = s.taps[k].w3, w4 = s.taps[k].w4;
                                int64_t p1 = s.taps[k].p1, p2 = s.taps[k].p2, p3 = s.taps[k].p3, p4 = s.taps[k].p4;
                                if (s.m->vec8) {
                                        for (int64_t c = c0; c < c1; c += 8) {
                                                RA_T *b = dxn + coff[c];
                                                const RA_T *dk = d + c;
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

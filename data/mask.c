/* mask.c: COCO run-length encoded masks (see mask.h for the semantics kept
 * from pycocotools). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mask.h"

void rle_free(struct rle *r)
{
        free(r->cnts);
        *r = (struct rle)RLE_INIT;
}

/* Takes ownership of cnts (r's previous counts are freed). */
static void rle_take(struct rle *r, uint32_t h, uint32_t w, uint32_t *cnts, uint32_t m)
{
        free(r->cnts);
        r->h = h;
        r->w = w;
        r->m = m;
        r->cnts = m ? cnts : NULL;
        if (!m)
                free(cnts);
}

void rle_set(struct rle *r, uint32_t h, uint32_t w, const uint32_t *cnts, uint32_t m)
{
        uint32_t *c = NULL;
        if (m) {
                c = xmalloc((size_t)m * sizeof(*c));
                memcpy(c, cnts, (size_t)m * sizeof(*c));
        }
        rle_take(r, h, w, c, m);
}

/* ---- encode, decode -------------------------------------------------------------- */

void rle_encode(struct rle *r, const uint8_t *mask, uint32_t h, uint32_t w)
{
        size_t a = (size_t)h * w;
        /* at most a + 1 runs; grown as needed so a sparse mask costs little */
        size_t cap = 64, k = 0;
        uint32_t *cnts = xmalloc(cap * sizeof(*cnts));
        uint8_t p = 0;
        size_t j = 0;
        while (j < a) {
                size_t s = j;
                if (p) {
                        while (j < a && mask[j])
                                j++;
                } else {
                        /* runs of zeros are most of a mask: skip them a word at a time */
                        while (j < a && ((uintptr_t)(mask + j) & 7))
                                if (mask[j])
                                        break;
                                else
                                        j++;
                        if (j < a && !mask[j]) {
                                uint64_t v;
                                while (j + 8 <= a && (memcpy(&v, mask + j, 8), v == 0))
                                        j += 8;
                                while (j < a && !mask[j])
                                        j++;
                        }
                }
                if (k + 2 > cap) {
                        cap *= 2;
                        cnts = xrealloc(cnts, cap * sizeof(*cnts));
                }
                cnts[k++] = (uint32_t)(j - s);
                p = !p;
        }
        if (k == 0)             /* a mask of no pixels: one run of 0 zeros, as pycocotools */
                cnts[k++] = 0;
        rle_take(r, h, w, cnts, (uint32_t)k);
}

/* The first and last nonzero byte of n, -1 when there is none. */
static long first_set(const uint8_t *p, size_t n)
{
        size_t i = 0;
        uint64_t v;
        while (i + 8 <= n && (memcpy(&v, p + i, 8), v == 0))
                i += 8;
        for (; i < n; i++)
                if (p[i])
                        return (long)i;
        return -1;
}

static long last_set(const uint8_t *p, size_t n)
{
        size_t i = n;
        uint64_t v;
        while (i >= 8 && (memcpy(&v, p + i - 8, 8), v == 0))
                i -= 8;
        while (i > 0)
                if (p[--i])
                        return (long)i;
        return -1;
}

void rle_encode_rows(struct rle *r, const uint8_t *mask, uint32_t h, uint32_t w, size_t stride)
{
        /* the box of the set pixels first (a pasted mask is mostly zeros):
         * outside it the runs are of zeros and need no reading */
        long x0 = (long)w, x1 = -1, y0 = -1, y1 = -1;
        for (uint32_t y = 0; y < h; y++) {
                const uint8_t *row = mask + (size_t)y * stride;
                long f = first_set(row, w);
                if (f < 0)
                        continue;
                long l = last_set(row, w);
                if (y0 < 0)
                        y0 = y;
                y1 = y;
                if (f < x0)
                        x0 = f;
                if (l > x1)
                        x1 = l;
        }
        size_t a = (size_t)h * w, cap = 64, k = 0;
        uint32_t *cnts = xmalloc(cap * sizeof(*cnts));
        if (y0 < 0) {
                cnts[k++] = (uint32_t)a;
                rle_take(r, h, w, cnts, (uint32_t)k);
                return;
        }
        size_t bw = (size_t)(x1 - x0 + 1), bh = (size_t)(y1 - y0 + 1);
        /* the box, column-major, transposed in tiles so that both sides stay in the cache */
        _cleanup_free_ uint8_t *t = xmalloc(bw * bh + 1);
        enum { TILE = 32 };
        for (size_t ty = 0; ty < bh; ty += TILE)
                for (size_t tx = 0; tx < bw; tx += TILE) {
                        size_t ey = ty + TILE < bh ? ty + TILE : bh, ex = tx + TILE < bw ? tx + TILE : bw;
                        for (size_t x = tx; x < ex; x++) {
                                uint8_t *col = t + x * bh;
                                const uint8_t *src = mask + (size_t)(y0 + (long)ty) * stride + (size_t)x0 + x;
                                for (size_t y = ty; y < ey; y++, src += stride)
                                        col[y] = *src;
                        }
                }
        size_t last = 0;        /* where the current run started */
        uint8_t v = 0;
        for (size_t x = 0; x < bw; x++) {
                const uint8_t *col = t + x * bh;
                size_t base = ((size_t)x0 + x) * h + (size_t)y0;
                for (size_t y = 0; y < bh; y++) {
                        if ((col[y] != 0) == v)
                                continue;
                        if (k + 2 > cap) {
                                cap *= 2;
                                cnts = xrealloc(cnts, cap * sizeof(*cnts));
                        }
                        cnts[k++] = (uint32_t)(base + y - last);
                        last = base + y;
                        v = !v;
                }
                /* a run of 1 ends with the box's column where zeros follow outside it */
                size_t end = base + bh;
                if (v && end < a && (bh < h || x + 1 == bw)) {
                        if (k + 2 > cap) {
                                cap *= 2;
                                cnts = xrealloc(cnts, cap * sizeof(*cnts));
                        }
                        cnts[k++] = (uint32_t)(end - last);
                        last = end;
                        v = 0;
                }
        }
        if (k + 1 > cap)
                cnts = xrealloc(cnts, (cap + 1) * sizeof(*cnts));
        cnts[k++] = (uint32_t)(a - last);
        rle_take(r, h, w, cnts, (uint32_t)k);
}

void rle_decode(const struct rle *r, uint8_t *mask)
{
        size_t a = (size_t)r->h * r->w, j = 0;
        uint8_t v = 0;
        for (uint32_t i = 0; i < r->m && j < a; i++) {
                size_t n = r->cnts[i];
                if (n > a - j)
                        n = a - j;
                memset(mask + j, v, n);
                j += n;
                v = !v;
        }
        /* pycocotools leaves what the counts do not cover as it was: here, zeros */
        if (j < a)
                memset(mask + j, 0, a - j);
}

void rle_decode_rows(const struct rle *r, uint8_t *mask, size_t stride)
{
        for (uint32_t y = 0; y < r->h; y++)
                memset(mask + (size_t)y * stride, 0, r->w);
        size_t a = (size_t)r->h * r->w, j = 0;
        uint32_t h = r->h;
        for (uint32_t i = 0; i < r->m && j < a; i++) {
                size_t n = r->cnts[i];
                if (n > a - j)
                        n = a - j;
                if (i % 2)
                        for (size_t q = j; q < j + n; q++)
                                mask[(q % h) * stride + q / h] = 1;
                j += n;
        }
}

/* ---- merge, area, box -------------------------------------------------------------- */

/* Counts that do not add up to the same total: maskApi.c then loops forever
 * on the side that has run out.  Here that side reads as zeros to the end of
 * the other (valid masks never get here: both run out together). */
static inline void exhausted_as_zeros(uint32_t *ca, size_t a, size_t ma, int *va, uint32_t *cb, size_t b, size_t mb,
                                      int *vb)
{
        if (!*ca && a >= ma && *cb) {
                *ca = *cb;
                *va = 0;
        } else if (!*cb && b >= mb && *ca) {
                *cb = *ca;
                *vb = 0;
        }
}

void rle_merge(const struct rle *R, size_t n, bool intersect, struct rle *out)
{
        if (n == 0) {
                rle_take(out, 0, 0, NULL, 0);
                return;
        }
        uint32_t h = R[0].h, w = R[0].w;
        if (n == 1) {
                rle_set(out, h, w, R[0].cnts, R[0].m);
                return;
        }
        /* the result has at most as many runs as its inputs together */
        size_t cap = 1;
        for (size_t i = 0; i < n; i++)
                cap += R[i].m;
        _cleanup_free_ uint32_t *acc = xmalloc(cap * sizeof(uint32_t));
        uint32_t *res = xmalloc(cap * sizeof(uint32_t));
        size_t m = R[0].m;
        if (m)
                memcpy(acc, R[0].cnts, m * sizeof(uint32_t));
        for (size_t i = 1; i < n; i++) {
                const struct rle *B = &R[i];
                if (B->h != h || B->w != w) {
                        h = w = 0;
                        m = 0;
                        break;
                }
                /* maskApi.c reads cnts[0] of both without checking m: an empty
                 * input reads as a first run of 0 */
                uint32_t ca = m ? acc[0] : 0, cb = B->m ? B->cnts[0] : 0;
                size_t a = 1, b = 1, k = 0;
                int v = 0, va = 0, vb = 0;
                uint32_t cc = 0, ct = 1;
                while (ct > 0) {
                        uint32_t c = ca < cb ? ca : cb;
                        cc += c;
                        ct = 0;
                        ca -= c;
                        if (!ca && a < m) {
                                ca = acc[a++];
                                va = !va;
                        }
                        ct += ca;
                        cb -= c;
                        if (!cb && b < B->m) {
                                cb = B->cnts[b++];
                                vb = !vb;
                        }
                        ct += cb;
                        exhausted_as_zeros(&ca, a, m, &va, &cb, b, B->m, &vb);
                        int vp = v;
                        v = intersect ? (va && vb) : (va || vb);
                        if (v != vp || ct == 0) {
                                res[k++] = cc;
                                cc = 0;
                        }
                }
                m = k;
                uint32_t *t = acc;
                acc = res;
                res = t;
        }
        free(res);
        uint32_t *c = NULL;
        if (m) {
                c = xmalloc(m * sizeof(uint32_t));
                memcpy(c, acc, m * sizeof(uint32_t));
        }
        rle_take(out, h, w, c, (uint32_t)m);
}

uint32_t rle_area(const struct rle *r)
{
        uint32_t a = 0;
        for (uint32_t j = 1; j < r->m; j += 2)
                a += r->cnts[j];
        return a;
}

void rle_to_bbox(const struct rle *r, double bb[4])
{
        uint32_t h = r->h, w = r->w, m = r->m / 2 * 2;
        if (m == 0 || h == 0) {
                bb[0] = bb[1] = bb[2] = bb[3] = 0;
                return;
        }
        /* pycocotools 2.x: each non-empty run of 1 from its first to its last
         * pixel; one that crosses a column spans every row.  Without any, the
         * box is [w, h, 1 - w, 1 - h] in 32-bit arithmetic, as there. */
        uint32_t xs = w, ys = h, xe = 0, ye = 0, cc = 0;
        for (uint32_t j = 0; j < m; j++) {
                uint32_t start = cc;
                cc += r->cnts[j];
                if (j % 2 == 0 || r->cnts[j] == 0)
                        continue;
                uint32_t y0 = start % h, x0 = (start - y0) / h;
                uint32_t y1 = (cc - 1) % h, x1 = (cc - 1 - y1) / h;
                if (x0 < xs)
                        xs = x0;
                if (x1 > xe)
                        xe = x1;
                if (x0 < x1) {
                        ys = 0;
                        ye = h - 1;
                } else {
                        if (y0 < ys)
                                ys = y0;
                        if (y1 > ye)
                                ye = y1;
                }
        }
        bb[0] = xs;
        bb[2] = (double)(uint32_t)(xe - xs + 1);
        bb[1] = ys;
        bb[3] = (double)(uint32_t)(ye - ys + 1);
}

/* ---- IoU ---------------------------------------------------------------------------- */

static inline double box_pair_iou(const double *D, const double *G, int crowd)
{
        double w = fmin(D[2] + D[0], G[2] + G[0]) - fmax(D[0], G[0]);
        if (w <= 0)
                return 0;
        double h = fmin(D[3] + D[1], G[3] + G[1]) - fmax(D[1], G[1]);
        if (h <= 0)
                return 0;
        double i = w * h, da = D[2] * D[3], ga = G[2] * G[3];
        double u = crowd ? da : da + ga - i;
        return i / u;
}

void bbox_iou(const double *dt, size_t m, const double *gt, size_t n, const uint8_t *iscrowd, double *o)
{
        for (size_t d = 0; d < m; d++)
                for (size_t g = 0; g < n; g++)
                        o[d * n + g] = box_pair_iou(dt + 4 * d, gt + 4 * g, iscrowd && iscrowd[g]);
}

/* Intersection and union of two masks of the same size, walking both runs. */
static double pair_iou(const struct rle *dt, const struct rle *gt, int crowd)
{
        uint32_t ca = dt->m ? dt->cnts[0] : 0, cb = gt->m ? gt->cnts[0] : 0;
        size_t a = 1, b = 1;
        int va = 0, vb = 0;
        uint32_t i = 0, u = 0, ct = 1;
        while (ct > 0) {
                uint32_t c = ca < cb ? ca : cb;
                if (va || vb) {
                        u += c;
                        if (va && vb)
                                i += c;
                }
                ct = 0;
                ca -= c;
                if (!ca && a < dt->m) {
                        ca = dt->cnts[a++];
                        va = !va;
                }
                ct += ca;
                cb -= c;
                if (!cb && b < gt->m) {
                        cb = gt->cnts[b++];
                        vb = !vb;
                }
                ct += cb;
                exhausted_as_zeros(&ca, a, dt->m, &va, &cb, b, gt->m, &vb);
        }
        if (i == 0)
                u = 1;
        else if (crowd)
                u = rle_area(dt);
        return (double)i / (double)u;
}

void rle_iou_boxes(const struct rle *dt, const double *db, size_t m, const struct rle *gt, const double *gb, size_t n,
                   const uint8_t *iscrowd, double *o)
{
        _cleanup_free_ double *dbox = NULL, *gbox = NULL;
        if (!db) {
                db = dbox = xmalloc((m * 4 + 1) * sizeof(double));
                for (size_t d = 0; d < m; d++)
                        rle_to_bbox(&dt[d], dbox + 4 * d);
        }
        if (!gb) {
                gb = gbox = xmalloc((n * 4 + 1) * sizeof(double));
                for (size_t g = 0; g < n; g++)
                        rle_to_bbox(&gt[g], gbox + 4 * g);
        }
        for (size_t d = 0; d < m; d++)
                for (size_t g = 0; g < n; g++) {
                        int crowd = iscrowd && iscrowd[g];
                        double v = box_pair_iou(db + 4 * d, gb + 4 * g, crowd);
                        if (v > 0) {
                                if (dt[d].h != gt[g].h || dt[d].w != gt[g].w)
                                        v = -1;
                                else
                                        v = pair_iou(&dt[d], &gt[g], crowd);
                        }
                        o[d * n + g] = v;
                }
}

void rle_iou(const struct rle *dt, size_t m, const struct rle *gt, size_t n, const uint8_t *iscrowd, double *o)
{
        rle_iou_boxes(dt, NULL, m, gt, NULL, n, iscrowd, o);
}

/* ---- polygons and boxes --------------------------------------------------------------- */

static int cmp_u32(const void *x, const void *y)
{
        uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
        return (a > b) - (a < b);
}

static inline int iabs(int v)
{
        return v < 0 ? -v : v;
}

void rle_from_poly(struct rle *r, const double *xy, size_t k, uint32_t h, uint32_t w)
{
        const double scale = 5;
        /* vertices at 5x, rounded as (int)(v + .5) */
        _cleanup_free_ int *x = xmalloc((k + 1) * sizeof(int));
        _cleanup_free_ int *y = xmalloc((k + 1) * sizeof(int));
        for (size_t j = 0; j < k; j++) {
                x[j] = (int)(scale * xy[2 * j] + .5);
                y[j] = (int)(scale * xy[2 * j + 1] + .5);
        }
        if (k) {
                x[k] = x[0];
                y[k] = y[0];
        }
        /* every point of every edge, walked along its longer axis */
        size_t n = 0;
        for (size_t j = 0; j < k; j++) {
                int dx = iabs(x[j] - x[j + 1]), dy = iabs(y[j] - y[j + 1]);
                n += (size_t)(dx > dy ? dx : dy) + 1;
        }
        _cleanup_free_ int *u = xmalloc((n + 1) * sizeof(int));
        _cleanup_free_ int *v = xmalloc((n + 1) * sizeof(int));
        n = 0;
        for (size_t j = 0; j < k; j++) {
                int xs = x[j], xe = x[j + 1], ys = y[j], ye = y[j + 1];
                int dx = iabs(xe - xs), dy = iabs(ys - ye);
                bool flip = (dx >= dy && xs > xe) || (dx < dy && ys > ye);
                if (flip) {
                        int t = xs;
                        xs = xe;
                        xe = t;
                        t = ys;
                        ys = ye;
                        ye = t;
                }
                if (dx >= dy) {
                        /* an edge of no length: maskApi.c divides 0 by 0 here; that point's y
                         * is never read (its neighbours share its x), so 0 will do */
                        double s = dx ? (double)(ye - ys) / dx : 0;
                        for (int d = 0; d <= dx; d++) {
                                int t = flip ? dx - d : d;
                                u[n] = t + xs;
                                v[n] = (int)(ys + s * t + .5);
                                n++;
                        }
                } else {
                        double s = (double)(xe - xs) / dy;
                        for (int d = 0; d <= dy; d++) {
                                int t = flip ? dy - d : d;
                                v[n] = t + ys;
                                u[n] = (int)(xs + s * t + .5);
                                n++;
                        }
                }
        }
        /* where x changes: a boundary crossing of a pixel column centre, downsampled */
        _cleanup_free_ uint32_t *a = xmalloc((n + 1) * sizeof(uint32_t));
        size_t na = 0;
        for (size_t j = 1; j < n; j++) {
                if (u[j] == u[j - 1])
                        continue;
                double xd = (double)(u[j] < u[j - 1] ? u[j] : u[j] - 1);
                xd = (xd + .5) / scale - .5;
                /* maskApi.c's w - 1 is unsigned: a mask of no columns took every
                 * crossing, and its counts covered more than its 0 pixels */
                if (floor(xd) != xd || xd < 0 || xd > (double)w - 1)
                        continue;
                double yd = (double)(v[j] < v[j - 1] ? v[j] : v[j - 1]);
                yd = (yd + .5) / scale - .5;
                if (yd < 0)
                        yd = 0;
                else if (yd > h)
                        yd = h;
                yd = ceil(yd);
                /* maskApi.c's int product wraps past 2^31 pixels (an image of
                 * 2^20 x 2^20 is allowed); in 32 unsigned bits it is the same
                 * number, without the overflow */
                a[na++] = (uint32_t)xd * h + (uint32_t)yd;
        }
        a[na++] = (uint32_t)((size_t)h * w);
        qsort(a, na, sizeof(uint32_t), cmp_u32);
        uint32_t p = 0;
        for (size_t j = 0; j < na; j++) {
                uint32_t t = a[j];
                a[j] -= p;
                p = t;
        }
        /* crossings at the same pixel cancel: their zero-length run joins its neighbours */
        uint32_t *b = xmalloc((na + 1) * sizeof(uint32_t));
        size_t m = 0, j = 0;
        b[m++] = a[j++];
        while (j < na) {
                if (a[j] > 0)
                        b[m++] = a[j++];
                else {
                        j++;
                        if (j < na)
                                b[m - 1] += a[j++];
                }
        }
        rle_take(r, h, w, b, (uint32_t)m);
}

void rle_from_bbox(struct rle *r, const double bb[4], uint32_t h, uint32_t w)
{
        double xs = bb[0], xe = xs + bb[2], ys = bb[1], ye = ys + bb[3];
        double xy[8] = { xs, ys, xs, ye, xe, ye, xe, ys };
        rle_from_poly(r, xy, 4, h, w);
}

void rle_from_polygons(struct rle *r, const struct coco_polygons *p, uint32_t h, uint32_t w)
{
        if (p->n == 0) {
                rle_merge(NULL, 0, false, r);
                return;
        }
        struct rle *parts = xcalloc(p->n, sizeof(*parts));
        bool boxes = p->len[0] == 4;
        size_t off = 0;
        for (uint32_t i = 0; i < p->n; i++) {
                if (boxes && p->len[i] == 4)
                        rle_from_bbox(&parts[i], p->xy + off, h, w);
                else
                        rle_from_poly(&parts[i], p->xy + off, p->len[i] / 2, h, w);
                off += p->len[i];
        }
        rle_merge(parts, p->n, false, r);
        for (uint32_t i = 0; i < p->n; i++)
                rle_free(&parts[i]);
        free(parts);
}

/* ---- strings ---------------------------------------------------------------------------- */

char *rle_to_string(const struct rle *r)
{
        /* at most 7 characters for a 32-bit count or a delta of two of them */
        char *s = xmalloc((size_t)r->m * 7 + 1);
        size_t p = 0;
        for (uint32_t i = 0; i < r->m; i++) {
                int64_t x = r->cnts[i];
                if (i > 2)
                        x -= r->cnts[i - 2];
                bool more = true;
                while (more) {
                        int c = (int)(x & 0x1f);
                        x >>= 5;        /* arithmetic: gcc and clang define it */
                        more = (c & 0x10) ? x != -1 : x != 0;
                        if (more)
                                c |= 0x20;
                        s[p++] = (char)(c + 48);
                }
        }
        s[p] = '\0';
        return s;
}

int rle_from_string(struct rle *r, const char *s, uint32_t h, uint32_t w)
{
        uint32_t *cnts = NULL;
        long m = coco_rle_from_string(s, &cnts);
        if (m < 0)
                return (int)m;
        rle_take(r, h, w, cnts, (uint32_t)m);
        return 0;
}

int rle_check(const struct rle *r)
{
        uint64_t sum = 0;
        for (uint32_t i = 0; i < r->m; i++)
                sum += r->cnts[i];
        return sum == (uint64_t)r->h * r->w ? 0 : -EINVAL;
}

/* ---- annotations ------------------------------------------------------------------------ */

int coco_ann_mask(const struct coco_index *idx, const struct coco_ann *a, struct rle *r)
{
        const struct coco_image *im = &idx->images[a->image];
        switch (a->seg_kind) {
        case COCO_SEG_POLYGONS: {
                struct coco_polygons p;
                int e = coco_ann_polygons(idx, a, &p);
                if (e < 0)
                        return e;
                rle_from_polygons(r, &p, im->height, im->width);
                return 0;
        }
        case COCO_SEG_RLE: {
                struct coco_rle c;
                int e = coco_ann_rle(idx, a, &c);
                if (e < 0)
                        return e;
                rle_set(r, c.height, c.width, c.counts, c.n);
                return 0;
        }
        default: {
                uint32_t n = im->height * im->width;
                rle_set(r, im->height, im->width, &n, 1);
                return 0;
        }
        }
}

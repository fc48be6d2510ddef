/* masks-impl.h: pycocotools' polygon rasterisation (rleFrPoly, as
 * data/mask.c's rle_from_poly) one column at a time, for masks.cu's kernel
 * (one thread per proposal and column) and for masks.c, which checks it
 * against rle_from_poly (det_mask_target_columns, test-det-masks).
 *
 * rleFrPoly walks every edge of the polygon (vertices at 5x, rounded) point
 * by point along its longer axis; where x changes between two consecutive
 * points at a pixel column's centre it records a crossing at (column, row
 * = ceil of the lower point, clamped to [0, h]); the sorted crossings,
 * as indices column * h + row, are where the runs change.  So pixel (x, y)
 * is set when the number of crossings at or before its index x h + y is odd:
 * every crossing of a column left of x, and those of column x with row <= y
 * (a crossing at row h counts for the next column, as its index says).
 * Zero-length runs cancel in pycocotools as two toggles do here.
 *
 * Included with DET_HD defined as the qualifiers; the double arithmetic of
 * the walk is rounded operation by operation on the device (no fused
 * multiply-add), and the host includer turns contraction off.
 */
#ifndef BD_DET_MASKS_IMPL_H
#define BD_DET_MASKS_IMPL_H

#ifdef __CUDA_ARCH__
#define DET_DMUL(a, b) __dmul_rn((a), (b))
#define DET_DADD(a, b) __dadd_rn((a), (b))
#else
#define DET_DMUL(a, b) ((a) * (b))
#define DET_DADD(a, b) ((a) + (b))
#endif

/* words of 32 rows a column needs */
#define DET_COL_WORDS(h) (((h) + 31) / 32)

/* rows >= y0 of a column flipped */
DET_HD void det_col_flip_from(uint32_t *col, int h, int y0)
{
        for (int q = y0 / 32; q < DET_COL_WORDS(h); q++)
                col[q] ^= q == y0 / 32 ? ~0u << (y0 % 32) : ~0u;
}

/* The crossing between walk points (pu, pv) and (u, v), applied to column x. */
DET_HD void det_col_step(int pu, int pv, int u, int v, int h, int w, int x, uint32_t *col)
{
        if (u == pu)
                return;
        double xd = (double)(u < pu ? u : u - 1);
        xd = (xd + .5) / 5 - .5;
        if (floor(xd) != xd || xd < 0 || xd > (double)(w - 1) || xd > x)
                return;
        if (xd < x) {
                det_col_flip_from(col, h, 0);
                return;
        }
        double yd = (double)(v < pv ? v : pv);
        yd = (yd + .5) / 5 - .5;
        yd = yd < 0 ? 0 : yd > h ? h : yd;
        int y0 = (int)ceil(yd);
        if (y0 < h)
                det_col_flip_from(col, h, y0);
}

/* Column x (h rows, bits in col: row y is bit y % 32 of word y / 32, all
 * set to the result) of one polygon of k integer vertices (vx, vy: the
 * coordinates x 5, rounded as (int)(5 v + .5)) on an h x w grid. */
DET_HD void det_poly_column(const int *vx, const int *vy, int k, int h, int w, int x, uint32_t *col)
{
        for (int q = 0; q < DET_COL_WORDS(h); q++)
                col[q] = 0;
        int pu = 0, pv = 0, first = 1;
        for (int j = 0; j < k; j++) {
                int xs = vx[j], ys = vy[j], xe = vx[(j + 1) % k], ye = vy[(j + 1) % k];
                int dx = xe > xs ? xe - xs : xs - xe, dy = ye > ys ? ye - ys : ys - ye;
                /* rleFrPoly steps along the longer axis from its lower end (ax, ay) to
                 * (cx, cy), emitting the points in the edge's own direction */
                int flip = (dx >= dy && xs > xe) || (dx < dy && ys > ye);
                int ax = flip ? xe : xs, ay = flip ? ye : ys, cx = flip ? xs : xe, cy = flip ? ys : ye;
                int n = dx >= dy ? dx : dy;
                double s = dx >= dy ? (dx ? (double)(cy - ay) / dx : 0) : (double)(cx - ax) / dy;
                for (int d = 0; d <= n; d++) {
                        int t = flip ? n - d : d, u, v;
                        if (dx >= dy) {
                                u = t + ax;
                                v = (int)DET_DADD(DET_DADD((double)ay, DET_DMUL(s, (double)t)), .5);
                        } else {
                                v = t + ay;
                                u = (int)DET_DADD(DET_DADD((double)ax, DET_DMUL(s, (double)t)), .5);
                        }
                        if (!first)
                                det_col_step(pu, pv, u, v, h, w, x, col);
                        first = 0;
                        pu = u;
                        pv = v;
                }
        }
        int r = h % 32;
        if (r)
                col[DET_COL_WORDS(h) - 1] &= ~(~0u << r);
}

#endif

/* svg.h: plots drawn by the program as inline SVG for HTML reports (html.h):
 * line and scatter plots (training curves, scaling), bar charts with
 * intervals, and heat maps of tables.
 *
 * Each writer appends one complete <svg> element (its own xmlns, a <title>,
 * a white background, no ids, no scripts, nothing fetched) to out, so
 * several can share a page.  Every text is escaped (html_escape()).
 *
 * Non-finite values are never written as coordinates: a non-finite point is
 * skipped (a line breaks there), a non-finite bar is left out with "n/a",
 * a non-finite heat-map cell is grey with its text.  A plot with no finite
 * point still draws its axes, with "no data".  Axes go through 1, 2, 5 x 10^k
 * ticks, labelled compactly ("0.25", "12000", "1.5e-7").  Series take the
 * colours of a fixed colour-blind-safe palette (Okabe-Ito), in order; past
 * seven, dash patterns tell them apart.  A legend (rows under the plot)
 * names the series and reference lines once there are two series or any
 * reference line.  Labels longer than 40 characters (categories: 28) are
 * cut with an ellipsis.
 */
#ifndef BD_SVG_H
#define BD_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

struct svg_series {
        const char *label;              /* legend text */
        const double *x, *y;            /* n points */
        size_t n;
        const double *ylo, *yhi;        /* optional interval per point (NULL: none): a band, or whiskers with points */
        bool points;                    /* markers, no line */
};

/* The line y = a + b x across the plot, labelled: "target mAP 0.30",
 * "ideal scaling" (a = 0, b = the throughput of one node), "no change" (0). */
struct svg_refline {
        const char *label;
        double a, b;
};

/* The axes cover every finite point, interval, and reference line between
 * the ends of the x axis (which widens to its outer ticks). */
struct svg_plot {
        const char *title;
        const char *xlabel, *ylabel;    /* with units: "epoch", "images/s" */
        const struct svg_series *series;
        size_t nseries;
        const struct svg_refline *refs;
        size_t nrefs;
        bool xlog2;                     /* x on a log2 axis (nodes, GPUs: 1, 2, 4, 8); x <= 0 is skipped */
        bool y_from_zero;               /* the y axis includes 0 */
        int width, height;              /* of the drawing, 0: 640 x 360; a legend adds rows below */
};

/* One category per bar, from 0; lo/hi (NULL: none) an interval drawn as a
 * whisker; each bar's value printed above it (below when negative), where
 * it fits.  Long or many category names are slanted, then thinned out. */
struct svg_bars {
        const char *title;
        const char *ylabel;
        size_t n;
        const char *const *labels;      /* n category names */
        const double *values, *lo, *hi;
        const struct svg_refline *refs; /* horizontal lines at a (b unused), named in a legend */
        size_t nrefs;
        int width, height;              /* 0: 640 x 360 */
};

/* A table as coloured cells (rows x cols, row-major), every cell's text
 * printed: cell_text[i] when given (NULL array or entry: the value), so a
 * failed cell can say "OOM" or "failed".  Finite values are coloured on a
 * sequential scale (viridis) from the smallest to the largest, shown under
 * the grid; non-finite ones are grey.  The size follows the content. */
struct svg_heatmap {
        const char *title;
        const char *rowlabel, *collabel;        /* what the rows and the columns are: "batch size", "precision" */
        const char *valuelabel;                 /* what the colours are, with its unit: "images/s" */
        size_t nrows, ncols;
        const char *const *rowlabels, *const *collabels;
        const double *values;                   /* nrows * ncols */
        const char *const *cell_text;           /* nrows * ncols, or NULL */
};

void svg_line_plot(struct bd_buf *out, const struct svg_plot *p);
void svg_bar_chart(struct bd_buf *out, const struct svg_bars *p);
void svg_heatmap(struct bd_buf *out, const struct svg_heatmap *p);

/* Tick values for an axis over [lo, hi]: the multiples of one step (1, 2 or
 * 5 x 10^k, the smallest that gives at most max ticks) inside the interval,
 * ascending, into ticks[max].  Returns how many; lo == hi gives that one
 * value; 0 when lo or hi is not finite, lo > hi or max < 2. */
size_t svg_ticks(double lo, double hi, size_t max, double *ticks);
/* v in at most sig significant digits, compactly: "0.3", "12000", "1.5e-7",
 * "2e12" (no "+", no leading zeros in exponents), "NaN", "inf", "-inf".
 * Returns dst. */
char *svg_format(char *dst, size_t n, double v, int sig);

#endif

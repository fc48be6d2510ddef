/* svg.c: see svg.h.  Layout works without font metrics: a character of the
 * 12px sans-serif text is taken as CHAR_W wide, generously, and margins
 * follow from the longest label.  Data are drawn in a nested <svg> over the
 * plot area, which clips what falls outside it without needing an id (ids
 * would have to be unique across a page of plots).  Every coordinate goes
 * through coord(), the one place that keeps non-finite numbers out. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "html.h"
#include "macro.h"
#include "strutil.h"
#include "svg.h"

#define CHAR_W 7.0
#define MAX_TICKS 10
#define TITLE_W 8.5             /* the same for the 14px bold title */
#define LABEL_CHARS 40          /* longer labels are cut, with an ellipsis */
#define CATEGORY_CHARS 28       /* the same for bar and heat-map categories */
#define BLEED 6                 /* how far markers may reach past the plot area */

/* Okabe and Ito's palette (yellow left out: too light on white) */
static const char *const palette[] = { "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000" };
static const char *const series_dash[] = { NULL, "7 3", "2 2", "7 2 2 2" };
static const char *const ref_dash[] = { "6 4", "2 3", "10 3 2 3" };
#define REF_COLOR "#555"
#define NAN_FILL "#c4c4c4"

/* ---- numbers ---- */

char *svg_format(char *dst, size_t n, double v, int sig)
{
        char tmp[64];
        if (isnan(v)) {
                STR_COPY(tmp, "NaN");
        } else if (isinf(v)) {
                STR_COPY(tmp, v > 0 ? "inf" : "-inf");
        } else {
                sig = sig < 1 ? 1 : sig > 17 ? 17 : sig;
                snprintf(tmp, sizeof(tmp), "%.*g", sig, v == 0 ? 0.0 : v);     /* no "-0" */
                /* "1.5e+07" -> "1.5e7", "1e-05" -> "1e-5" */
                char *e = strchr(tmp, 'e');
                if (e) {
                        char *d = e + 1;
                        if (*d == '-')
                                d++;
                        char *p = e + 1;
                        if (*p == '+' || *p == '-')
                                p++;
                        while (*p == '0' && p[1])
                                p++;
                        memmove(d, p, strlen(p) + 1);
                }
        }
        str_copy(dst, n, tmp);
        return dst;
}

/* A value shown as text (bar labels, heat-map cells): four significant
 * digits, but whole numbers below 1e9 in full ("12346", not "1.235e4"). */
static char *format_value(char *dst, size_t n, double v)
{
        int sig = 4;
        if (isfinite(v) && fabs(v) >= 1e4 && fabs(v) < 1e9)
                sig = (int)floor(log10(fabs(v))) + 1;
        return svg_format(dst, n, v, sig);
}

/* The last line of defence: a coordinate is finite and bounded, whatever
 * the data did to the arithmetic before. */
static double coord(double v)
{
        return isfinite(v) ? fmin(fmax(v, -1e6), 1e6) : 0;
}

static void put_xy(struct bd_buf *out, double x, double y)
{
        buf_printf(out, "%.1f,%.1f ", coord(x), coord(y));
}

/* ---- text ---- */

static size_t utf8_chars(const char *s)
{
        size_t n = 0;
        for (; s && *s; n++) {
                size_t len = str_utf8_char_len(s);
                s += len ? len : 1;
        }
        return n;
}

/* s escaped, cut to max characters (the last one an ellipsis) */
static void put_text(struct bd_buf *out, const char *s, size_t max)
{
        if (!s || utf8_chars(s) <= max) {
                html_escape(out, s);
                return;
        }
        const char *p = s;
        for (size_t i = 0; i + 1 < max && *p; i++) {
                size_t len = str_utf8_char_len(p);
                p += len ? len : 1;
        }
        _cleanup_free_ char *cut = xasprintf("%.*s\xe2\x80\xa6", (int)(p - s), s);
        html_escape(out, cut);
}

static size_t text_chars(const char *s, size_t max)
{
        size_t n = utf8_chars(s);
        return n < max ? n : max;
}

/* <text x y attrs>s</text>; attrs: extra attributes, may be "" */
static void text_at(struct bd_buf *out, double x, double y, const char *attrs, const char *s, size_t max)
{
        buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\"%s%s>", coord(x), coord(y), *attrs ? " " : "", attrs);
        put_text(out, s, max);
        buf_puts(out, "</text>\n");
}

/* ---- ticks and axes ---- */

/* ticks k x step, step = mult x 10^e, for k in [k0, k1] */
struct ticking {
        int mult, e;
        double k0, k1;
};

static double tick_value(const struct ticking *t, double k)
{
        /* dividing by an exact power of ten keeps 0.3 from being 0.30000000000000004 */
        return t->e >= 0 ? k * t->mult * pow(10, t->e) : k * t->mult / pow(10, -t->e);
}

static bool nice_ticks(double lo, double hi, size_t max, struct ticking *t)
{
        static const int mults[] = { 1, 2, 5 };
        if (!isfinite(lo) || !isfinite(hi) || !(lo < hi) || max < 2)
                return false;
        /* halved first: hi - lo may overflow */
        double raw = hi / (double)(max - 1) - lo / (double)(max - 1);
        if (!(raw > 0) || !isfinite(raw))
                return false;
        int e = (int)floor(log10(raw));
        for (int i = 0; i < 12; i++) {
                t->e = e + i / 3;
                t->mult = mults[i % 3];
                double step = tick_value(t, 1);
                if (!(step > 0) || !isfinite(step))
                        continue;
                t->k0 = ceil(lo / step - 1e-9);
                t->k1 = floor(hi / step + 1e-9);
                if (t->k1 - t->k0 + 1 <= (double)max)
                        return t->k1 >= t->k0;
        }
        return false;
}

size_t svg_ticks(double lo, double hi, size_t max, double *ticks)
{
        struct ticking t;
        if (max < 2 || !isfinite(lo) || !isfinite(hi) || lo > hi)
                return 0;
        if (lo == hi) {
                ticks[0] = lo;
                return 1;
        }
        if (!nice_ticks(lo, hi, max, &t))
                return 0;
        size_t n = 0;
        for (double k = t.k0; k <= t.k1 && n < max; k++)
                ticks[n++] = tick_value(&t, k);
        return n;
}

struct axis {
        double lo, hi;                  /* the values at the two ends */
        bool log2;
        double ticks[MAX_TICKS + 2];
        size_t nticks;
        int sig;                        /* significant digits of the tick labels */
};

/* A linear axis over at least [lo, hi], widened to the ticks around it. */
static void axis_linear(struct axis *a, double lo, double hi, size_t max)
{
        struct ticking t;
        memset(a, 0, sizeof(*a));
        /* beyond a quarter of DBL_MAX, hi - lo and the widening overflow */
        lo = fmax(lo, -DBL_MAX / 4);
        hi = fmin(hi, DBL_MAX / 4);
        if (lo == hi) {
                double d = fabs(lo) * 0.1;
                if (!(d > DBL_MIN))
                        d = 1;
                lo -= d;
                hi += d;
        }
        if (max > MAX_TICKS)
                max = MAX_TICKS;
        if (!nice_ticks(lo, hi, max, &t)) {
                /* nothing nice at this scale (subnormals): the ends alone */
                a->lo = a->ticks[0] = lo;
                a->hi = a->ticks[1] = hi;
                a->nticks = 2;
                a->sig = 6;
                return;
        }
        double step = tick_value(&t, 1);
        double k0 = floor(lo / step + 1e-9), k1 = ceil(hi / step - 1e-9);
        for (double k = k0; k <= k1 && a->nticks < ARRAY_SIZE(a->ticks); k++)
                a->ticks[a->nticks++] = tick_value(&t, k);
        a->lo = a->ticks[0];
        a->hi = a->ticks[a->nticks - 1];
        /* enough digits to tell ticks apart, and for %g to keep integers plain */
        double m = fmax(fabs(a->lo), fabs(a->hi));
        int mag = m > 0 ? (int)floor(log10(m)) : 0;
        a->sig = mag - t.e + 1;
        if (m >= 1e-4 && m < 1e7 && a->sig < mag + 1)
                a->sig = mag + 1;
        a->sig = a->sig < 1 ? 1 : a->sig > 15 ? 15 : a->sig;
}

/* A log2 axis from the power of two at or below lo to the one at or above hi
 * (lo > 0), ticks at powers of two, every one while they fit. */
static void axis_log2(struct axis *a, double lo, double hi, size_t max)
{
        memset(a, 0, sizeof(*a));
        a->log2 = true;
        int e0 = (int)floor(log2(lo)), e1 = (int)ceil(log2(hi));
        if (e0 == e1) {
                e0--;
                e1++;
        }
        e0 = e0 < -1070 ? -1070 : e0;
        e1 = e1 > 1020 ? 1020 : e1;
        if (max > MAX_TICKS)
                max = MAX_TICKS;
        int stride = (e1 - e0 + (int)max - 2) / ((int)max - 1);
        stride = stride < 1 ? 1 : stride;
        for (int e = e0; e <= e1 && a->nticks < ARRAY_SIZE(a->ticks); e += stride)
                a->ticks[a->nticks++] = ldexp(1, e);
        a->lo = ldexp(1, e0);
        a->hi = ldexp(1, e1);
        a->sig = 10;                    /* 2^-10 to 2^33 exactly */
}

/* where v falls on the axis, 0 at lo and 1 at hi */
static double axis_frac(const struct axis *a, double v)
{
        double lo = a->lo, hi = a->hi;
        if (a->log2) {
                v = log2(v);
                lo = log2(lo);
                hi = log2(hi);
        }
        double d = hi - lo;
        return d > 0 && isfinite(d) ? (v - lo) / d : 0.5;
}

static size_t tick_label_chars(const struct axis *a)
{
        char s[64];
        size_t m = 0;
        for (size_t i = 0; i < a->nticks; i++) {
                size_t n = strlen(svg_format(s, sizeof(s), a->ticks[i], a->sig));
                m = n > m ? n : m;
        }
        return m;
}

/* An x axis whose tick labels do not run into each other: fewer ticks
 * until they fit. */
static void axis_x(struct axis *a, double lo, double hi, bool log2_axis, double pw)
{
        for (size_t max = MAX_TICKS; max >= 2; max--) {
                if (log2_axis)
                        axis_log2(a, lo, hi, max);
                else
                        axis_linear(a, lo, hi, max);
                if (a->nticks < 2 || (double)tick_label_chars(a) * CHAR_W + 8 <= pw / (double)(a->nticks - 1))
                        return;
        }
}

/* ---- the frame common to plots and bar charts ---- */

struct frame {
        int width, height;              /* of the whole drawing */
        double left, top, pw, ph;       /* the plot area */
};

static void svg_open(struct bd_buf *out, int width, int height, const char *title)
{
        buf_printf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                        "font-family=\"sans-serif\" font-size=\"12\" role=\"img\">\n<title>",
                   width, height, width, height);
        html_escape(out, title ? title : "plot");
        buf_printf(out, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", width, height);
        if (title && *title)
                text_at(out, width / 2.0, 20, "text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\"", title,
                        (size_t)((width - 8) / TITLE_W));
}

static double frame_y(const struct frame *f, const struct axis *a, double v)
{
        return f->ph * (1 - axis_frac(a, v));
}

/* grid lines, tick labels and the y axis title */
static void draw_y_axis(struct bd_buf *out, const struct frame *f, const struct axis *a, const char *label)
{
        char s[64];
        for (size_t i = 0; i < a->nticks; i++) {
                double y = f->top + frame_y(f, a, a->ticks[i]);
                buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e2e2e2\"/>\n",
                           coord(f->left), coord(y), coord(f->left + f->pw), coord(y));
                text_at(out, f->left - 6, y + 4, "text-anchor=\"end\"", svg_format(s, sizeof(s), a->ticks[i], a->sig),
                        64);
        }
        if (label && *label) {
                buf_printf(out, "<text transform=\"translate(15 %.1f) rotate(-90)\" text-anchor=\"middle\">",
                           coord(f->top + f->ph / 2));
                put_text(out, label, (size_t)(f->ph / CHAR_W));
                buf_puts(out, "</text>\n");
        }
}

static void draw_x_axis(struct bd_buf *out, const struct frame *f, const struct axis *a, const char *label)
{
        char s[64];
        for (size_t i = 0; i < a->nticks; i++) {
                double x = f->left + f->pw * axis_frac(a, a->ticks[i]);
                buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eeeeee\"/>\n",
                           coord(x), coord(f->top), coord(x), coord(f->top + f->ph));
                text_at(out, x, f->top + f->ph + 16, "text-anchor=\"middle\"",
                        svg_format(s, sizeof(s), a->ticks[i], a->sig), 64);
        }
        if (label && *label)
                text_at(out, f->left + f->pw / 2, f->top + f->ph + 34, "text-anchor=\"middle\"", label,
                        (size_t)(f->pw / CHAR_W));
}

static void draw_box(struct bd_buf *out, const struct frame *f)
{
        buf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
                   coord(f->left), coord(f->top), coord(f->pw), coord(f->ph));
}

static void no_data(struct bd_buf *out, const struct frame *f)
{
        text_at(out, f->left + f->pw / 2, f->top + f->ph / 2, "text-anchor=\"middle\" fill=\"#777\" font-size=\"14\"",
                "no data", 16);
}

/* the plot area as its own viewport, what is drawn inside clipped to it but
 * for a margin that keeps markers on the edges whole; coordinates inside are
 * from the plot area's top left corner */
static void plot_area_open(struct bd_buf *out, const struct frame *f)
{
        buf_printf(out, "<svg x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" overflow=\"hidden\">"
                        "<g transform=\"translate(%d %d)\">\n",
                   coord(f->left - BLEED), coord(f->top - BLEED), coord(f->pw + 2 * BLEED), coord(f->ph + 2 * BLEED),
                   BLEED, BLEED);
}

static void plot_area_close(struct bd_buf *out)
{
        buf_puts(out, "</g></svg>\n");
}

/* ---- legend: rows under the plot ---- */

struct legend_item {
        const char *label;
        char fallback[32];
        const char *color, *dash;
        bool marker;
};

static double legend_item_width(const struct legend_item *it)
{
        return 26 + (double)text_chars(it->label, LABEL_CHARS) * CHAR_W + 16;
}

static int legend_rows(const struct legend_item *items, size_t n, double avail)
{
        int rows = n ? 1 : 0;
        double x = 0;
        for (size_t i = 0; i < n; i++) {
                double w = legend_item_width(&items[i]);
                if (x > 0 && x + w > avail) {
                        rows++;
                        x = 0;
                }
                x += w;
        }
        return rows;
}

static void draw_legend(struct bd_buf *out, const struct legend_item *items, size_t n, double x0, double y0,
                        double avail)
{
        double x = 0, y = y0;
        for (size_t i = 0; i < n; i++) {
                const struct legend_item *it = &items[i];
                double w = legend_item_width(it);
                if (x > 0 && x + w > avail) {
                        x = 0;
                        y += 18;
                }
                if (it->marker) {
                        buf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", coord(x0 + x + 10),
                                   coord(y - 4), it->color);
                } else {
                        buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                                        "stroke-width=\"2\"%s%s%s/>\n",
                                   coord(x0 + x), coord(y - 4), coord(x0 + x + 20), coord(y - 4), it->color,
                                   it->dash ? " stroke-dasharray=\"" : "", it->dash ? it->dash : "",
                                   it->dash ? "\"" : "");
                }
                text_at(out, x0 + x + 26, y, "", it->label, LABEL_CHARS);
                x += w;
        }
}

static void ref_items(struct legend_item *items, const struct svg_refline *refs, size_t nrefs)
{
        for (size_t j = 0; j < nrefs; j++) {
                struct legend_item *it = &items[j];
                snprintf(it->fallback, sizeof(it->fallback), "reference %zu", j + 1);
                it->label = refs[j].label && *refs[j].label ? refs[j].label : it->fallback;
                it->color = REF_COLOR;
                it->dash = ref_dash[j % ARRAY_SIZE(ref_dash)];
        }
}

static void draw_ref_label(struct bd_buf *out, const struct frame *f, const char *label, double y)
{
        if (!label || !*label)
                return;
        y = fmax(y - 4, 12);
        text_at(out, f->left + f->pw - 4, f->top + y, "text-anchor=\"end\" fill=\"#444\" font-size=\"11\"", label,
                LABEL_CHARS);
}

/* ---- line and scatter plots ---- */

static bool point_ok(const struct svg_plot *p, const struct svg_series *s, size_t i)
{
        return isfinite(s->x[i]) && isfinite(s->y[i]) && (!p->xlog2 || s->x[i] > 0);
}

static bool interval_ok(const struct svg_plot *p, const struct svg_series *s, size_t i)
{
        return s->ylo && s->yhi && point_ok(p, s, i) && isfinite(s->ylo[i]) && isfinite(s->yhi[i]);
}

static size_t series_len(const struct svg_series *s)
{
        return s->x && s->y ? s->n : 0;
}

/* y of a reference line at x, NaN where it is not finite */
static double ref_y(const struct svg_refline *r, double x)
{
        double y = r->a + r->b * x;
        return isfinite(y) ? y : NAN;
}

static void draw_band(struct bd_buf *out, const struct svg_plot *p, const struct svg_series *s, const char *color,
                      const struct frame *f, const struct axis *ax, const struct axis *ay)
{
        size_t n = series_len(s);
        for (size_t i = 0; i < n;) {
                if (!interval_ok(p, s, i)) {
                        i++;
                        continue;
                }
                size_t j = i;
                while (j < n && interval_ok(p, s, j))
                        j++;
                buf_printf(out, "<polygon fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\" points=\"", color);
                for (size_t k = i; k < j; k++)
                        put_xy(out, f->pw * axis_frac(ax, s->x[k]), frame_y(f, ay, s->yhi[k]));
                for (size_t k = j; k-- > i;)
                        put_xy(out, f->pw * axis_frac(ax, s->x[k]), frame_y(f, ay, s->ylo[k]));
                buf_puts(out, "\"/>\n");
                i = j;
        }
}

static void draw_series(struct bd_buf *out, const struct svg_plot *p, const struct svg_series *s, const char *color,
                        const char *dash, const struct frame *f, const struct axis *ax, const struct axis *ay)
{
        size_t n = series_len(s);
        if (s->points) {
                for (size_t i = 0; i < n; i++) {
                        if (!point_ok(p, s, i))
                                continue;
                        double x = f->pw * axis_frac(ax, s->x[i]), y = frame_y(f, ay, s->y[i]);
                        if (interval_ok(p, s, i)) {
                                double y0 = frame_y(f, ay, s->ylo[i]), y1 = frame_y(f, ay, s->yhi[i]);
                                buf_printf(out, "<path stroke=\"%s\" fill=\"none\" d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1f"
                                                "M%.1f %.1fH%.1f\"/>\n",
                                           color, coord(x), coord(y0), coord(y1), coord(x - 4), coord(y0),
                                           coord(x + 4), coord(x - 4), coord(y1), coord(x + 4));
                        }
                        buf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", coord(x), coord(y),
                                   color);
                }
                return;
        }
        /* a line breaks where points are missing; a point alone between
         * gaps is still shown */
        for (size_t i = 0; i < n;) {
                if (!point_ok(p, s, i)) {
                        i++;
                        continue;
                }
                size_t j = i;
                while (j < n && point_ok(p, s, j))
                        j++;
                if (j - i == 1) {
                        buf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n",
                                   coord(f->pw * axis_frac(ax, s->x[i])), coord(frame_y(f, ay, s->y[i])), color);
                } else {
                        buf_printf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                                        "stroke-linejoin=\"round\"%s%s%s points=\"",
                                   color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
                        /* points within a quarter pixel of the last one drawn add
                         * nothing but bytes (long runs, many steps) */
                        double lx = NAN, ly = NAN;
                        for (size_t k = i; k < j; k++) {
                                double x = f->pw * axis_frac(ax, s->x[k]), y = frame_y(f, ay, s->y[k]);
                                if (k + 1 < j && fabs(x - lx) < 0.25 && fabs(y - ly) < 0.25)
                                        continue;
                                put_xy(out, x, y);
                                lx = x;
                                ly = y;
                        }
                        buf_puts(out, "\"/>\n");
                }
                i = j;
        }
}

void svg_line_plot(struct bd_buf *out, const struct svg_plot *p)
{
        struct frame f = { .width = p->width > 0 ? p->width : 640, .height = p->height > 0 ? p->height : 360 };
        f.width = f.width < 200 ? 200 : f.width;
        f.height = f.height < 150 ? 150 : f.height;

        double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
        for (size_t si = 0; si < p->nseries; si++) {
                const struct svg_series *s = &p->series[si];
                for (size_t i = 0; i < series_len(s); i++) {
                        if (!point_ok(p, s, i))
                                continue;
                        xlo = fmin(xlo, s->x[i]);
                        xhi = fmax(xhi, s->x[i]);
                        ylo = fmin(ylo, s->y[i]);
                        yhi = fmax(yhi, s->y[i]);
                        if (interval_ok(p, s, i)) {
                                ylo = fmin(ylo, fmin(s->ylo[i], s->yhi[i]));
                                yhi = fmax(yhi, fmax(s->ylo[i], s->yhi[i]));
                        }
                }
        }
        bool empty = !(xlo <= xhi);

        /* margins: the y labels' width is known once the y axis is, which
         * needs the x axis first (reference lines are evaluated at its ends),
         * whose tick spacing needs the plot width: guess the left margin,
         * then redo the x axis with the real one */
        struct axis ax, ay;
        double guess_pw = f.width - 80.0 - 16;
        if (empty) {
                axis_linear(&ax, 0, 1, 6);
        } else {
                axis_x(&ax, xlo, xhi, p->xlog2, guess_pw);
                for (size_t j = 0; j < p->nrefs; j++) {
                        double y0 = ref_y(&p->refs[j], ax.lo), y1 = ref_y(&p->refs[j], ax.hi);
                        if (isfinite(y0) && isfinite(y1)) {
                                ylo = fmin(ylo, fmin(y0, y1));
                                yhi = fmax(yhi, fmax(y0, y1));
                        }
                }
        }
        if (p->y_from_zero) {
                ylo = fmin(ylo, 0);
                yhi = fmax(yhi, 0);
        }
        double top = p->title && *p->title ? 34 : 12, bottom = p->xlabel && *p->xlabel ? 44 : 26;
        double ph = f.height - top - bottom;
        size_t ymax = (size_t)(ph / 40);
        ymax = ymax < 3 ? 3 : ymax > 8 ? 8 : ymax;
        axis_linear(&ay, empty ? 0 : ylo, empty ? 1 : yhi, ymax);
        f.left = (p->ylabel && *p->ylabel ? 24 : 6) + (double)tick_label_chars(&ay) * CHAR_W + 8;
        f.top = top;
        f.pw = f.width - f.left - 16;
        f.ph = ph;
        if (!empty && fabs(f.pw - guess_pw) > 1)
                axis_x(&ax, xlo, xhi, p->xlog2, f.pw);
        /* the last x label is centred on the right edge */
        char last[64];
        svg_format(last, sizeof(last), ax.ticks[ax.nticks - 1], ax.sig);
        f.pw -= fmax((double)strlen(last) * CHAR_W / 2 + 4 - 16, 0);

        /* the legend: series and reference lines, once there is something to tell apart */
        size_t nitems = 0;
        _cleanup_free_ struct legend_item *items = NULL;
        if (!empty && (p->nseries >= 2 || p->nrefs >= 1)) {
                nitems = p->nseries + p->nrefs;
                items = xcalloc(nitems, sizeof(*items));
                for (size_t si = 0; si < p->nseries; si++) {
                        struct legend_item *it = &items[si];
                        snprintf(it->fallback, sizeof(it->fallback), "series %zu", si + 1);
                        it->label = p->series[si].label && *p->series[si].label ? p->series[si].label : it->fallback;
                        it->color = palette[si % ARRAY_SIZE(palette)];
                        it->dash = series_dash[si / ARRAY_SIZE(palette) % ARRAY_SIZE(series_dash)];
                        it->marker = p->series[si].points;
                }
                ref_items(items + p->nseries, p->refs, p->nrefs);
        }
        int rows = legend_rows(items, nitems, f.pw);
        int height = f.height + rows * 18 + (rows ? 8 : 0);

        svg_open(out, f.width, height, p->title);
        draw_y_axis(out, &f, &ay, p->ylabel);
        draw_x_axis(out, &f, &ax, p->xlabel);
        if (empty) {
                no_data(out, &f);
        } else {
                plot_area_open(out, &f);
                for (size_t si = 0; si < p->nseries; si++)
                        if (!p->series[si].points)
                                draw_band(out, p, &p->series[si], palette[si % ARRAY_SIZE(palette)], &f, &ax, &ay);
                for (size_t j = 0; j < p->nrefs; j++) {
                        const struct svg_refline *r = &p->refs[j];
                        if (!isfinite(ref_y(r, ax.lo)) || !isfinite(ref_y(r, ax.hi)))
                                continue;
                        /* straight on a linear axis, a curve on a log2 one */
                        int steps = ax.log2 ? 64 : 1;
                        buf_printf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                                        "stroke-dasharray=\"%s\" points=\"",
                                   REF_COLOR, ref_dash[j % ARRAY_SIZE(ref_dash)]);
                        for (int k = 0; k <= steps; k++) {
                                double u = (double)k / steps;
                                double x = ax.log2 ? exp2(log2(ax.lo) + u * (log2(ax.hi) - log2(ax.lo)))
                                                   : ax.lo + u * (ax.hi - ax.lo);
                                put_xy(out, f.pw * u, frame_y(&f, &ay, ref_y(r, x)));
                        }
                        buf_puts(out, "\"/>\n");
                }
                for (size_t si = 0; si < p->nseries; si++)
                        draw_series(out, p, &p->series[si], palette[si % ARRAY_SIZE(palette)],
                                    series_dash[si / ARRAY_SIZE(palette) % ARRAY_SIZE(series_dash)], &f, &ax, &ay);
                plot_area_close(out);
                for (size_t j = 0; j < p->nrefs; j++)
                        if (isfinite(ref_y(&p->refs[j], ax.hi)))
                                draw_ref_label(out, &f, p->refs[j].label, frame_y(&f, &ay, ref_y(&p->refs[j], ax.hi)));
        }
        draw_box(out, &f);
        draw_legend(out, items, nitems, f.left, f.height + 12, f.pw);
        buf_puts(out, "</svg>\n");
}

/* ---- bar charts ---- */

/* Where a bar chart's bars and labels go. */
struct bar_layout {
        struct frame f;
        struct axis ay;
        double slot;                    /* the width of a category */
        double base;                    /* y of 0 in the plot */
        double bw;                      /* a bar's width */
        bool slant;                     /* category labels at 35 degrees */
        size_t every;                   /* a label every this many categories */
};

/* The values' range, from 0 and with the intervals and reference lines;
 * false when no value is a number. */
static bool bars_range(const struct svg_bars *p, size_t n, double *ret_lo, double *ret_hi)
{
        /* bars stand on 0 */
        double lo = 0, hi = 0;
        bool empty = true;
        for (size_t i = 0; i < n; i++) {
                if (!isfinite(p->values[i]))
                        continue;
                empty = false;
                lo = fmin(lo, p->values[i]);
                hi = fmax(hi, p->values[i]);
                if (p->lo && p->hi && isfinite(p->lo[i]) && isfinite(p->hi[i])) {
                        lo = fmin(lo, fmin(p->lo[i], p->hi[i]));
                        hi = fmax(hi, fmax(p->lo[i], p->hi[i]));
                }
        }
        for (size_t j = 0; j < p->nrefs && !empty; j++) {
                if (isfinite(p->refs[j].a)) {
                        lo = fmin(lo, p->refs[j].a);
                        hi = fmax(hi, p->refs[j].a);
                }
        }
        /* room for the value printed above (or below) the bar */
        double pad = (fmin(hi, DBL_MAX / 8) - fmax(lo, -DBL_MAX / 8)) * 0.08;
        if (hi > 0)
                hi += pad;
        if (lo < 0)
                lo -= pad;
        *ret_lo = lo;
        *ret_hi = hi;
        return !empty;
}

static void bars_layout(const struct svg_bars *p, size_t n, bool empty, double lo, double hi, struct bar_layout *l)
{
        struct frame *f = &l->f;
        *f = (struct frame){ .width = p->width > 0 ? p->width : 640, .height = p->height > 0 ? p->height : 360 };
        f->width = f->width < 200 ? 200 : f->width;
        f->height = f->height < 150 ? 150 : f->height;
        double top = p->title && *p->title ? 34 : 12;
        size_t maxlab = 0;
        for (size_t i = 0; i < n; i++) {
                size_t c = text_chars(p->labels ? p->labels[i] : NULL, CATEGORY_CHARS);
                maxlab = c > maxlab ? c : maxlab;
        }
        /* category labels: level when they fit under their bar, else slanted
         * at 35 degrees, every k-th one when even that is too tight */
        double guess_slot = n ? (f->width - 90.0) / (double)n : 1;
        l->slant = (double)maxlab * 6.5 + 6 > guess_slot;
        double bottom = l->slant ? 18 + (double)maxlab * CHAR_W * 0.574 : 26;
        f->ph = f->height - top - bottom;
        if (f->ph < 60) {
                f->ph = 60;
                f->height = (int)(top + bottom + 60);
        }
        size_t ymax = (size_t)(f->ph / 40);
        axis_linear(&l->ay, empty ? 0 : lo, empty ? 1 : hi, ymax < 3 ? 3 : ymax > 8 ? 8 : ymax);
        f->left = (p->ylabel && *p->ylabel ? 24 : 6) + (double)tick_label_chars(&l->ay) * CHAR_W + 8;
        f->top = top;
        f->pw = f->width - f->left - 16;
        l->slot = n ? f->pw / (double)n : f->pw;
        if (l->slant && f->left < (double)maxlab * CHAR_W * 0.82 - l->slot / 2) {
                /* the first slanted label reaches left of the plot */
                f->left = (double)maxlab * CHAR_W * 0.82 - l->slot / 2;
                f->pw = f->width - f->left - 16;
                l->slot = n ? f->pw / (double)n : f->pw;
        }
        l->every = l->slot >= 14 ? 1 : (size_t)ceil(14 / l->slot);
        l->base = frame_y(f, &l->ay, 0);
        l->bw = fmin(l->slot * 0.7, 90);
}

static void draw_category_label(struct bd_buf *out, const struct bar_layout *l, double cx, const char *label)
{
        if (l->slant) {
                buf_printf(out, "<text transform=\"translate(%.1f %.1f) rotate(-35)\" text-anchor=\"end\">",
                           coord(cx + 4), coord(l->f.top + l->f.ph + 14));
                put_text(out, label, CATEGORY_CHARS);
                buf_puts(out, "</text>\n");
        } else {
                text_at(out, cx, l->f.top + l->f.ph + 16, "text-anchor=\"middle\"", label, CATEGORY_CHARS);
        }
}

/* Bar i with its interval and its value above it (below, when negative). */
static void draw_bar(struct bd_buf *out, const struct svg_bars *p, size_t i, const struct bar_layout *l, double cx)
{
        const struct frame *f = &l->f;
        double v = p->values[i], bw = l->bw;
        if (!isfinite(v)) {
                text_at(out, cx, f->top + l->base - 4, "text-anchor=\"middle\" fill=\"#888\" font-size=\"11\"", "n/a",
                        8);
                return;
        }
        double y = frame_y(f, &l->ay, v);
        buf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
                   coord(cx - bw / 2), coord(f->top + fmin(y, l->base)), coord(bw),
                   coord(fmax(fabs(l->base - y), 0.5)), palette[0]);
        double tip = v;
        if (p->lo && p->hi && isfinite(p->lo[i]) && isfinite(p->hi[i])) {
                double y0 = frame_y(f, &l->ay, p->lo[i]), y1 = frame_y(f, &l->ay, p->hi[i]);
                double cap = fmin(bw * 0.2, 6);
                buf_printf(out, "<path stroke=\"#222\" stroke-width=\"1.2\" fill=\"none\" "
                                "d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\"/>\n",
                           coord(cx), coord(f->top + y0), coord(f->top + y1), coord(cx - cap), coord(f->top + y0),
                           coord(cx + cap), coord(cx - cap), coord(f->top + y1), coord(cx + cap));
                tip = v >= 0 ? fmax(v, fmax(p->lo[i], p->hi[i])) : fmin(v, fmin(p->lo[i], p->hi[i]));
        }
        char s[64];
        format_value(s, sizeof(s), v);
        if ((double)strlen(s) * 6.2 <= l->slot) {
                double ty = frame_y(f, &l->ay, tip);
                text_at(out, cx, f->top + (v >= 0 ? ty - 4 : ty + 13),
                        "text-anchor=\"middle\" font-size=\"11\" fill=\"#222\"", s, 32);
        }
}

/* The zero line and the reference lines across the plot. */
static void draw_bar_lines(struct bd_buf *out, const struct svg_bars *p, const struct bar_layout *l)
{
        const struct frame *f = &l->f;
        buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n", coord(f->left),
                   coord(f->top + l->base), coord(f->left + f->pw), coord(f->top + l->base));
        for (size_t j = 0; j < p->nrefs; j++) {
                if (!isfinite(p->refs[j].a))
                        continue;
                double y = frame_y(f, &l->ay, p->refs[j].a);
                buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                                "stroke-width=\"1.5\" stroke-dasharray=\"%s\"/>\n",
                           coord(f->left), coord(f->top + y), coord(f->left + f->pw), coord(f->top + y), REF_COLOR,
                           ref_dash[j % ARRAY_SIZE(ref_dash)]);
        }
}

void svg_bar_chart(struct bd_buf *out, const struct svg_bars *p)
{
        size_t n = p->values ? p->n : 0;
        double lo, hi;
        bool empty = !bars_range(p, n, &lo, &hi);
        struct bar_layout l;
        bars_layout(p, n, empty, lo, hi, &l);

        size_t nitems = p->nrefs && !empty ? p->nrefs : 0;
        _cleanup_free_ struct legend_item *items = nitems ? xcalloc(nitems, sizeof(*items)) : NULL;
        if (nitems)
                ref_items(items, p->refs, nitems);
        int rows = legend_rows(items, nitems, l.f.pw);
        int height = l.f.height + rows * 18 + (rows ? 8 : 0);

        svg_open(out, l.f.width, height, p->title);
        draw_y_axis(out, &l.f, &l.ay, p->ylabel);
        for (size_t i = 0; i < n; i++) {
                double cx = l.f.left + l.slot * ((double)i + 0.5);
                const char *label = p->labels ? p->labels[i] : NULL;
                if (i % l.every == 0 && label)
                        draw_category_label(out, &l, cx, label);
                if (!empty)
                        draw_bar(out, p, i, &l, cx);
        }
        if (empty)
                no_data(out, &l.f);
        else
                draw_bar_lines(out, p, &l);
        draw_box(out, &l.f);
        draw_legend(out, items, nitems, l.f.left, l.f.height + 12, l.f.pw);
        buf_puts(out, "</svg>\n");
}

/* ---- heat maps ---- */

/* viridis at nine stops: perceptually even, readable in grey and by the
 * colour-blind */
static const unsigned char viridis[9][3] = {
        { 0x44, 0x01, 0x54 }, { 0x47, 0x2d, 0x7b }, { 0x3b, 0x52, 0x8b }, { 0x2c, 0x72, 0x8e }, { 0x21, 0x91, 0x8c },
        { 0x28, 0xae, 0x80 }, { 0x5e, 0xc9, 0x62 }, { 0xad, 0xdc, 0x30 }, { 0xfd, 0xe7, 0x25 },
};

/* the colour at t in [0, 1] as "#rrggbb"; returns whether text on it should be dark */
static bool heat_color(double t, char *dst, size_t n)
{
        t = isfinite(t) ? fmin(fmax(t, 0), 1) : 0.5;
        double pos = t * 8;
        int i = (int)pos < 8 ? (int)pos : 7;
        double u = pos - i, c[3];
        for (int k = 0; k < 3; k++)
                c[k] = viridis[i][k] + u * (viridis[i + 1][k] - viridis[i][k]);
        snprintf(dst, n, "#%02x%02x%02x", (unsigned)lround(c[0]), (unsigned)lround(c[1]), (unsigned)lround(c[2]));
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2] > 120;
}

void svg_heatmap(struct bd_buf *out, const struct svg_heatmap *p)
{
        size_t nr = p->values ? p->nrows : 0, nc = p->values ? p->ncols : 0, ncells = nr * nc;
        char s[64], color[16];
        if (!ncells) {
                struct frame f = { .width = 320, .height = 120, .left = 10, .top = 34, .pw = 300, .ph = 76 };
                svg_open(out, f.width, f.height, p->title);
                no_data(out, &f);
                buf_puts(out, "</svg>\n");
                return;
        }
        double vmin = INFINITY, vmax = -INFINITY;
        size_t maxcell = 0, maxrow = 0, maxcol = 0;
        bool any_bad = false;
        for (size_t i = 0; i < ncells; i++) {
                double v = p->values[i];
                if (isfinite(v)) {
                        vmin = fmin(vmin, v);
                        vmax = fmax(vmax, v);
                } else {
                        any_bad = true;
                }
                const char *t = p->cell_text && p->cell_text[i] ? p->cell_text[i] : format_value(s, sizeof(s), v);
                size_t c = text_chars(t, 20);
                maxcell = c > maxcell ? c : maxcell;
        }
        for (size_t r = 0; r < nr; r++) {
                size_t c = text_chars(p->rowlabels ? p->rowlabels[r] : NULL, CATEGORY_CHARS);
                maxrow = c > maxrow ? c : maxrow;
        }
        for (size_t c = 0; c < nc; c++) {
                size_t k = text_chars(p->collabels ? p->collabels[c] : NULL, CATEGORY_CHARS);
                maxcol = k > maxcol ? k : maxcol;
        }
        /* cells as wide as their text, or as their column's label when that
         * is not much wider, so that it can stay level */
        double cw = fmin(fmax((double)maxcell * 6.5 + 12, 44), 142), ch = 24;
        if ((double)maxcol * 6.5 + 8 > cw && (double)maxcol * 6.5 + 8 <= 110)
                cw = (double)maxcol * 6.5 + 8;
        bool slant = (double)maxcol * 6.5 + 6 > cw;
        double colh = slant ? (double)maxcol * CHAR_W * 0.643 + 10 : 20;
        double left = (p->rowlabel && *p->rowlabel ? 24 : 6) + (double)maxrow * CHAR_W + 8;
        double top = (p->title && *p->title ? 34 : 8) + (p->collabel && *p->collabel ? 18 : 0) + colh;
        double gw = cw * (double)nc, gh = ch * (double)nr;
        /* slanted column labels run right, past the last column */
        double right = slant ? fmax(16, (double)maxcol * CHAR_W * 0.766 - cw / 2 + 4) : 16;
        double legend_w = 120 + 8 + (double)text_chars(p->valuelabel, LABEL_CHARS) * CHAR_W + (any_bad ? 110 : 0);
        double title_w = p->title && *p->title ? (double)text_chars(p->title, 120) * TITLE_W + 20 : 0;
        double width = fmax(fmax(left + gw + right, left + legend_w + 16), fmax(title_w, 240));
        double height = top + gh + 52;
        if (width > 1e5 || height > 1e5) {
                /* past any screen: the drawing would only stall the browser */
                width = fmin(width, 1e5);
                height = fmin(height, 1e5);
        }
        int w = (int)ceil(width), h = (int)ceil(height);

        svg_open(out, w, h, p->title);
        if (p->collabel && *p->collabel)
                text_at(out, left + gw / 2, (p->title && *p->title ? 34 : 8) + 12,
                        "text-anchor=\"middle\" font-weight=\"bold\"", p->collabel, (size_t)(fmax(gw, 100) / CHAR_W));
        if (p->rowlabel && *p->rowlabel) {
                buf_printf(out, "<text transform=\"translate(15 %.1f) rotate(-90)\" text-anchor=\"middle\" "
                                "font-weight=\"bold\">",
                           coord(top + gh / 2));
                put_text(out, p->rowlabel, (size_t)(fmax(gh, 100) / CHAR_W));
                buf_puts(out, "</text>\n");
        }
        for (size_t c = 0; c < nc && p->collabels; c++) {
                double cx = left + cw * ((double)c + 0.5);
                if (slant) {
                        buf_printf(out, "<text transform=\"translate(%.1f %.1f) rotate(-40)\">", coord(cx - 4),
                                   coord(top - 6));
                        put_text(out, p->collabels[c], CATEGORY_CHARS);
                        buf_puts(out, "</text>\n");
                } else {
                        text_at(out, cx, top - 6, "text-anchor=\"middle\"", p->collabels[c], CATEGORY_CHARS);
                }
        }
        for (size_t r = 0; r < nr; r++) {
                double y = top + ch * (double)r;
                if (p->rowlabels)
                        text_at(out, left - 6, y + ch / 2 + 4, "text-anchor=\"end\"", p->rowlabels[r], CATEGORY_CHARS);
                for (size_t c = 0; c < nc; c++) {
                        size_t i = r * nc + c;
                        double v = p->values[i];
                        double x = left + cw * (double)c;
                        bool dark_text = true;
                        if (isfinite(v))
                                dark_text = heat_color(vmax > vmin ? (v - vmin) / (vmax - vmin) : 0.5, color,
                                                       sizeof(color));
                        else
                                STR_COPY(color, NAN_FILL);
                        buf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                                        "stroke=\"#fff\"/>\n",
                                   coord(x), coord(y), coord(cw), coord(ch), color);
                        const char *t = p->cell_text && p->cell_text[i] ? p->cell_text[i]
                                                                        : format_value(s, sizeof(s), v);
                        text_at(out, x + cw / 2, y + ch / 2 + 4,
                                dark_text ? "text-anchor=\"middle\" font-size=\"11\" fill=\"#111\""
                                          : "text-anchor=\"middle\" font-size=\"11\" fill=\"#fff\"",
                                t, (size_t)((cw - 6) / 6.5));
                }
        }

        /* the colour scale, and the grey of cells without a value */
        double ly = top + gh + 16, lx = left;
        if (vmin <= vmax) {
                for (int k = 0; k < 24; k++) {
                        heat_color(k / 23.0, color, sizeof(color));
                        buf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"5.2\" height=\"12\" fill=\"%s\"/>\n",
                                   coord(lx + 5 * k), coord(ly), color);
                }
                text_at(out, lx, ly + 26, "font-size=\"11\"", format_value(s, sizeof(s), vmin), 24);
                text_at(out, lx + 120, ly + 26, "font-size=\"11\" text-anchor=\"end\"",
                        format_value(s, sizeof(s), vmax), 24);
                if (p->valuelabel && *p->valuelabel)
                        text_at(out, lx + 128, ly + 10, "", p->valuelabel, LABEL_CHARS);
                lx += 128 + (double)text_chars(p->valuelabel, LABEL_CHARS) * CHAR_W + 16;
        }
        if (any_bad) {
                buf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"12\" fill=\"%s\"/>\n", coord(lx),
                           coord(ly), NAN_FILL);
                text_at(out, lx + 20, ly + 10, "", "no value", 16);
        }
        buf_puts(out, "</svg>\n");
}

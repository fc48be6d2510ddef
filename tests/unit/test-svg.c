/* test-svg.c: client/report/html.h and client/report/svg.h: escaping (markup characters,
 * invalid UTF-8, control characters), numeric cells, tick values, compact
 * numbers, and plots that stay well-formed XML with no "nan" or "inf"
 * anywhere whatever the data (NaN, infinities, nothing at all, one point,
 * equal values, extreme magnitudes), heat maps that print every cell. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "buf.h"
#include "html.h"
#include "strutil.h"
#include "svg.h"
#include "tap.h"

static char *escaped(const char *s, size_t *ret_bad)
{
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        size_t bad = html_escape(&b, s);
        if (ret_bad)
                *ret_bad = bad;
        return buf_detach(&b);
}

static size_t count(const char *s, const char *needle)
{
        size_t n = 0;
        for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* Well-formed enough for a browser's XML parser: valid UTF-8, tags nest
 * and close, attribute values quoted, no raw '<' or stray '&' in text.
 * Returns NULL or what is wrong. */
static const char *xml_problem(const char *s)
{
        static char why[160];
        const char *stack[64];
        size_t depth = 0, nlen[64];
        for (const char *p = s; *p;) {
                size_t len = str_utf8_char_len(p);
                if (!len || (len == 1 && (unsigned char)*p < 0x20 && !strchr("\t\n\r", *p)))
                        return "invalid UTF-8 or a control character";
                if (*p == '&') {
                        size_t n = strspn(p + 1, "abcdefghijklmnopqrstuvwxyz#0123456789");
                        if (!n || p[1 + n] != ';')
                                return "a '&' that starts no entity";
                        p += n + 2;
                        continue;
                }
                if (*p == '>')
                        return "a raw '>' in text";
                if (*p != '<') {
                        p += len;
                        continue;
                }
                bool closing = p[1] == '/';
                const char *name = p + 1 + closing;
                size_t nl = strcspn(name, " \t\n/>");
                if (!nl)
                        return "a '<' that starts no tag";
                const char *end = name + nl;
                bool quoted = false;
                for (; *end && (quoted || *end != '>'); end++) {
                        if (*end == '"')
                                quoted = !quoted;
                        else if (*end == '<')
                                return "a '<' inside a tag";
                }
                if (!*end)
                        return "an unterminated tag";
                if (closing) {
                        if (!depth || nlen[depth - 1] != nl || strncmp(stack[depth - 1], name, nl)) {
                                snprintf(why, sizeof(why), "</%.*s> closes nothing open", (int)nl, name);
                                return why;
                        }
                        depth--;
                } else if (end[-1] != '/') {
                        if (depth == ARRAY_SIZE(stack))
                                return "nested too deep";
                        stack[depth] = name;
                        nlen[depth++] = nl;
                }
                p = end + 1;
        }
        if (depth) {
                snprintf(why, sizeof(why), "<%.*s> never closed", (int)nlen[depth - 1], stack[depth - 1]);
                return why;
        }
        return NULL;
}

/* the checks every drawing passes */
static void check_drawing(const char *svg, const char *what)
{
        char name[160];
        const char *why = xml_problem(svg);
        snprintf(name, sizeof(name), "%s: well-formed", what);
        if (!ok(!why, name))
                printf("#   %s\n", why);
        snprintf(name, sizeof(name), "%s: one <svg> element, closed", what);
        ok(strncmp(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0 &&
           count(svg, "<svg") == count(svg, "</svg>"), name);
        snprintf(name, sizeof(name), "%s: no nan or inf anywhere", what);
        if (!ok(!strcasestr(svg, "nan") && !strcasestr(svg, "inf"), name))
                printf("#   near: %.80s\n", strcasestr(svg, "nan") ? strcasestr(svg, "nan") : strcasestr(svg, "inf"));
        snprintf(name, sizeof(name), "%s: no script, nothing fetched", what);
        ok(!strstr(svg, "<script") && !strstr(svg, "href") && !strstr(svg, "url("), name);
}

static char *line_plot(const struct svg_plot *p)
{
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        svg_line_plot(&b, p);
        return buf_detach(&b);
}

static void test_escape(void)
{
        size_t bad;
        _cleanup_free_ char *a = escaped("<a href=\"x\">Tom & Jerry's</a>", &bad);
        is_str(a, "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;", "escape: < & > \" '");
        is_int(bad, 0, "escape: nothing replaced in valid text");
        _cleanup_free_ char *u = escaped("caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x9a\x80\ttab\nline", &bad);
        is_str(u, "caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x9a\x80\ttab\nline", "escape: valid UTF-8, tab and newline kept");
        _cleanup_free_ char *v = escaped("a\xff" "b\xc3(c\xc0\xaf" "d\xed\xa0\x80" "e\xf4\x90\x80\x80" "f\xe2\x82",
                                         &bad);
        is_str(v, "a\xef\xbf\xbd" "b\xef\xbf\xbd(c\xef\xbf\xbd\xef\xbf\xbd" "d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                  "e\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "f\xef\xbf\xbd\xef\xbf\xbd",
               "escape: stray, cut, overlong, surrogate and out-of-range bytes become U+FFFD, byte by byte");
        is_int(bad, 13, "escape: counts the replacements");
        _cleanup_free_ char *c = escaped("x\x01y\x1b[31mz\x7f\xc2\x85w\xef\xbf\xbe", &bad);
        is_str(c, "x\xef\xbf\xbdy\xef\xbf\xbd[31mz\xef\xbf\xbd\xef\xbf\xbdw\xef\xbf\xbd",
               "escape: C0, ESC, DEL, C1 and U+FFFE replaced");
        _cleanup_free_ char *n = escaped(NULL, &bad);
        ok(streq(n, "") && bad == 0, "escape: NULL is empty");
        ok(!xml_problem(v) && !xml_problem(c), "escape: the results are valid XML text");
}

static void test_html(void)
{
        ok(html_is_numeric("12") && html_is_numeric("-3.5e4") && html_is_numeric("95%") &&
           html_is_numeric("1.9x") && html_is_numeric("812 images/s") && html_is_numeric("3.1\xc2\xb1" "0.2") &&
           html_is_numeric("NaN") && html_is_numeric(".5"), "numeric cells: numbers, with units, NaN");
        ok(!html_is_numeric("2024-05-01") && !html_is_numeric("4xC4140") && !html_is_numeric("1.2.3") &&
           !html_is_numeric("v1") && !html_is_numeric("OOM") && !html_is_numeric("") && !html_is_numeric(NULL) &&
           !html_is_numeric(" 1") && !html_is_numeric("information") && !html_is_numeric("nano"),
           "numeric cells: dates, versions, words, blanks are text");

        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        const char *const header[] = { "system", "images/s" };
        const char *const row[] = { "4xC4140 <fast>", "812.5" };
        const char *const row2[] = { NULL, "OOM" };
        html_begin(&b, "Report <1> & \"2\"");
        html_h(&b, 9, "Results");
        html_p(&b, "a < b");
        html_table_begin(&b, header, 2);
        html_row(&b, row, 2);
        html_row(&b, row2, 2);
        html_table_end(&b);
        html_end(&b);
        like(b.s, "<!DOCTYPE html>", "page: doctype");
        like(b.s, "<meta charset=\"utf-8\">", "page: charset");
        like(b.s, "<meta name=\"viewport\"", "page: viewport");
        like(b.s, "<title>Report &lt;1&gt; &amp; &quot;2&quot;</title>", "page: title escaped");
        like(b.s, "@media print", "page: a print rule");
        like(b.s, "<h6>Results</h6>", "page: heading level clamped to 6");
        like(b.s, "<p>a &lt; b</p>", "page: paragraph escaped");
        like(b.s, "<tr><td>4xC4140 &lt;fast&gt;</td><td class=\"num\">812.5</td></tr>", "table: numbers right-aligned");
        like(b.s, "<tr><td></td><td>OOM</td></tr>", "table: NULL is an empty cell, words are text");
        ok(!strstr(b.s, "<script") && !strstr(b.s, "http") && !strstr(b.s, "url("), "page: no script, no fetch");
        ok(str_has_suffix(b.s, "</html>\n"), "page: closed");
}

static bool is_nice(double step)
{
        double m = step / pow(10, floor(log10(step)));
        return fabs(m - 1) < 1e-6 || fabs(m - 2) < 1e-6 || fabs(m - 5) < 1e-6 || fabs(m - 10) < 1e-6;
}

static void test_ticks(void)
{
        double t[16];
        char s[64];
        size_t n = svg_ticks(0, 1, 6, t);
        is_int(n, 6, "ticks 0..1, at most 6: six");
        ok(n == 6 && t[0] == 0 && t[1] == 0.2 && t[3] == 0.6 && t[5] == 1, "ticks 0..1: 0, 0.2, .., 1 exactly");
        is_str(svg_format(s, sizeof(s), t[3], 6), "0.6", "tick 0.6 prints as 0.6");
        n = svg_ticks(0, 100, 5, t);
        ok(n == 3 && t[0] == 0 && t[1] == 50 && t[2] == 100, "ticks 0..100, at most 5: 0, 50, 100");
        n = svg_ticks(-3.7, 12.2, 8, t);
        ok(n == 8 && t[0] == -2 && t[7] == 12, "ticks -3.7..12.2, at most 8: -2 to 12 by 2");
        n = svg_ticks(0.0012, 0.0047, 5, t);
        ok(n == 3 && t[0] == 0.002 && t[1] == 0.003 && t[2] == 0.004,
           "ticks 0.0012..0.0047, at most 5: 0.002, 0.003, 0.004");
        n = svg_ticks(1e6, 1e6 + 1, 6, t);
        ok(n == 6 && t[1] == 1e6 + 0.2, "ticks on a large offset: 1000000.2");
        is_str(svg_format(s, sizeof(s), t[1], 8), "1000000.2", "and it prints whole");
        is_int(svg_ticks(5, 5, 6, t), 1, "ticks of one value: that value");
        ok(svg_ticks(NAN, 1, 6, t) == 0 && svg_ticks(0, INFINITY, 6, t) == 0 && svg_ticks(2, 1, 6, t) == 0 &&
           svg_ticks(0, 1, 1, t) == 0, "ticks: none for NaN, infinity, lo > hi, max < 2");

        /* properties over many ranges: at most max, inside, evenly spaced by 1, 2 or 5 x 10^k */
        unsigned long long r = 88172645463325252ULL;
        bool good = true;
        for (int i = 0; i < 2000 && good; i++) {
                r ^= r << 13, r ^= r >> 7, r ^= r << 17;
                double lo = ((double)(r % 20001) - 10000) * pow(10, (double)(r % 31) - 15);
                double hi = lo + (double)(r % 997 + 1) * pow(10, (double)((r >> 20) % 31) - 15);
                size_t max = 2 + (r >> 40) % 9;
                if (hi - lo < 1e-7 * fmax(fabs(lo), fabs(hi)))
                        continue;       /* spacing below what doubles resolve there */
                n = svg_ticks(lo, hi, max, t);
                good = n >= 1 && n <= max;
                for (size_t k = 0; k < n && good; k++)
                        good = t[k] >= lo - 1e-9 * fabs(hi - lo) && t[k] <= hi + 1e-9 * fabs(hi - lo);
                if (good && n >= 2)
                        good = is_nice(t[1] - t[0]) && fabs((t[n - 1] - t[0]) / (double)(n - 1) - (t[1] - t[0])) <=
                                                               1e-6 * (t[1] - t[0]);
                if (!good)
                        printf("#   lo %.17g hi %.17g max %zu: %zu ticks\n", lo, hi, max, n);
        }
        ok(good, "ticks over 2000 random ranges: 1..max, inside, evenly spaced by a nice step");

        is_str(svg_format(s, sizeof(s), 1.5e7, 6), "1.5e7", "format: no '+' in exponents");
        is_str(svg_format(s, sizeof(s), 1e-5, 6), "1e-5", "format: no leading zeros in exponents");
        is_str(svg_format(s, sizeof(s), 2e12, 3), "2e12", "format: 2e12");
        is_str(svg_format(s, sizeof(s), -0.0, 6), "0", "format: no negative zero");
        is_str(svg_format(s, sizeof(s), 0.1 + 0.2, 6), "0.3", "format: 0.1 + 0.2 is 0.3");
        is_str(svg_format(s, sizeof(s), 12000, 6), "12000", "format: 12000");
        ok(streq(svg_format(s, sizeof(s), NAN, 6), "NaN") && streq(svg_format(s, sizeof(s), -INFINITY, 6), "-inf"),
           "format: NaN, -inf");
}

static void test_line_plots(void)
{
        const double x[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
        const double y[] = { 0.05, 0.12, NAN, 0.22, INFINITY, 0.29, -INFINITY, 0.31 };
        const double y2[] = { 0.04, 0.1, 0.15, 0.2, 0.24, 0.27, 0.28, 0.3 };
        const double lo[] = { 0.03, 0.09, 0.13, NAN, 0.22, 0.25, 0.27, 0.29 };
        const double hi[] = { 0.05, 0.11, 0.17, 0.21, 0.26, 0.29, 0.29, 0.31 };
        const struct svg_series two[] = {
                { .label = "run <1>", .x = x, .y = y, .n = 8 },
                { .label = "run 2", .x = x, .y = y2, .n = 8, .ylo = lo, .yhi = hi },
        };
        const struct svg_refline target = { .label = "target 0.30", .a = 0.3 };
        struct svg_plot p = { .title = "bbox mAP & <friends>", .xlabel = "epoch", .ylabel = "mAP", .series = two,
                              .nseries = 2, .refs = &target, .nrefs = 1 };
        _cleanup_free_ char *a = line_plot(&p);
        check_drawing(a, "two series with gaps, a band and a target");
        like(a, "bbox mAP &amp; &lt;friends&gt;", "line plot: title escaped");
        like(a, ">run &lt;1&gt;</text>", "line plot: legend with the first series");
        like(a, ">run 2</text>", "line plot: legend with the second series");
        like(a, ">target 0.30</text>", "line plot: the target labelled");
        like(a, ">epoch</text>", "line plot: x axis title");
        like(a, "rotate(-90)\" text-anchor=\"middle\">mAP</text>", "line plot: y axis title");
        like(a, "<polygon fill=\"#E69F00\" fill-opacity", "line plot: the interval as a band");
        is_int(count(a, "<polyline fill=\"none\" stroke=\"#0072B2\""), 1,
               "line plot: the broken series: one line (1-2), lone points elsewhere");
        is_int(count(a, "<circle") - count(a, "r=\"3.5\""), 3, "line plot: its three lone points as dots");
        ok(strstr(a, ">0.3</text>") && strstr(a, ">0.1</text>"), "line plot: y ticks labelled compactly");

        const double ax[] = { 0, 1, 2, 4, 8, 16, -2 };
        const double ay[] = { 5, 100, 190, 370, 700, 1300, 7 };
        const double alo[] = { 5, 95, 180, 350, 690, NAN, 7 };
        const double ahi[] = { 5, 105, 200, 390, 710, 1350, 7 };
        const struct svg_series sc = { .label = "measured", .x = ax, .y = ay, .n = 7, .ylo = alo, .yhi = ahi,
                                       .points = true };
        const struct svg_refline ideal = { .label = "ideal", .b = 100 };
        struct svg_plot q = { .title = "scaling", .xlabel = "nodes", .ylabel = "images/s", .series = &sc,
                              .nseries = 1, .refs = &ideal, .nrefs = 1, .xlog2 = true, .y_from_zero = true };
        _cleanup_free_ char *b = line_plot(&q);
        check_drawing(b, "log2 scaling with whiskers and an ideal line");
        is_int(count(b, "r=\"3.5\""), 5 + 1, "log2 plot: x <= 0 skipped, five points (and the legend's)");
        is_int(count(b, "<path stroke"), 4, "log2 plot: whiskers where the interval is finite");
        ok(strstr(b, ">1</text>") && strstr(b, ">16</text>") && strstr(b, ">4</text>"), "log2 plot: ticks 1 .. 16");
        like(b, "stroke-dasharray=\"6 4\" points=\"", "log2 plot: the ideal line drawn");

        /* nothing to draw, in every way */
        const double nan8[] = { NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN };
        const struct svg_series none = { .label = "none", .x = x, .y = nan8, .n = 8 };
        struct svg_plot e = { .title = "all missing", .xlabel = "step", .ylabel = "loss", .series = &none, .nseries = 1,
                              .refs = &target, .nrefs = 1 };
        _cleanup_free_ char *c = line_plot(&e);
        check_drawing(c, "all NaN");
        like(c, ">no data</text>", "all NaN: says no data");
        like(c, ">loss</text>", "all NaN: axes still labelled");
        struct svg_plot z = { .title = "no series", .xlabel = "step", .ylabel = "loss" };
        _cleanup_free_ char *d = line_plot(&z);
        check_drawing(d, "no series");
        like(d, ">no data</text>", "no series: says no data");

        const double one_x[] = { 3 }, one_y[] = { 7 };
        const struct svg_series one = { .label = "one", .x = one_x, .y = one_y, .n = 1 };
        struct svg_plot o = { .xlabel = "x", .ylabel = "y", .series = &one, .nseries = 1 };
        _cleanup_free_ char *f = line_plot(&o);
        check_drawing(f, "one point");
        is_int(count(f, "<circle"), 1, "one point: drawn as a dot");
        ok(!strstr(f, "no data"), "one point: is data");

        const double same[] = { 42, 42, 42, 42, 42, 42, 42, 42 };
        const struct svg_series flat = { .label = "flat", .x = same, .y = same, .n = 8 };
        o.series = &flat;
        _cleanup_free_ char *g = line_plot(&o);
        check_drawing(g, "all values equal");
        like(g, ">42</text>", "all values equal: an axis around the value");

        const double hx[] = { 1, 2, 3 }, hy[] = { 1e308, -1e308, DBL_MAX }, ty[] = { 1e-300, 2e-300, 4e-320 };
        const struct svg_series huge[] = { { .label = "huge", .x = hx, .y = hy, .n = 3 },
                                           { .label = "tiny", .x = hx, .y = ty, .n = 3 } };
        const struct svg_refline wild = { .label = "wild", .a = 1e308, .b = 1e308 };
        struct svg_plot m = { .title = "extremes", .series = huge, .nseries = 2, .refs = &wild, .nrefs = 1 };
        _cleanup_free_ char *h = line_plot(&m);
        check_drawing(h, "huge and tiny magnitudes");
        m.series = &huge[1];
        m.nseries = 1;
        m.nrefs = 0;
        _cleanup_free_ char *i = line_plot(&m);
        check_drawing(i, "subnormal values");
        const double sy[] = { 1.2e-12, 3.4e-12, 2.2e-12 };
        const struct svg_series small = { .label = "small", .x = hx, .y = sy, .n = 3 };
        m.series = &small;
        _cleanup_free_ char *j = line_plot(&m);
        check_drawing(j, "picoseconds");
        like(j, ">1e-12</text>", "small magnitudes: ticks such as 1e-12");

        /* many series: colours cycle, dashes tell them apart */
        struct svg_series many[9];
        char labels[9][16];
        for (int k = 0; k < 9; k++) {
                snprintf(labels[k], sizeof(labels[k]), "gpu%d", k);
                many[k] = (struct svg_series){ .label = labels[k], .x = x, .y = y2, .n = 8 };
        }
        struct svg_plot mp = { .title = "nine", .xlabel = "step", .ylabel = "s", .series = many, .nseries = 9 };
        _cleanup_free_ char *k = line_plot(&mp);
        check_drawing(k, "nine series");
        is_int(count(k, "<polyline"), 9, "nine series: nine lines");
        ok(strstr(k, ">gpu8</text>") && count(k, "stroke-dasharray=\"7 3\"") == 4,
           "nine series: the eighth and ninth dashed, in the plot and the legend");

        const char *long_label = "a label that goes on and on and on and on and on and on and on";
        const struct svg_series ls = { .label = long_label, .x = x, .y = y2, .n = 8 };
        const struct svg_series pair[] = { ls, flat };
        struct svg_plot lp = { .series = pair, .nseries = 2, .xlabel = "\xff\x01" "bad", .ylabel = "y" };
        _cleanup_free_ char *l = line_plot(&lp);
        check_drawing(l, "long and invalid labels");
        like(l, "a label that goes on and on and on and \xe2\x80\xa6<", "long labels cut with an ellipsis");
        like(l, ">\xef\xbf\xbd\xef\xbf\xbd" "bad</text>", "invalid bytes in labels replaced");

}

/* a long smooth run: points closer than a pixel are left out */
static void test_long_run(void)
{
        enum { N = 100000 };
        static double sx[N], sy[N];
        for (int k = 0; k < N; k++) {
                sx[k] = k;
                sy[k] = exp(-k / 20000.0);
        }
        const struct svg_series run = { .label = "loss", .x = sx, .y = sy, .n = N };
        struct svg_plot rp = { .xlabel = "step", .ylabel = "loss", .series = &run, .nseries = 1 };
        _cleanup_free_ char *r = line_plot(&rp);
        check_drawing(r, "100000 points");
        ok(strlen(r) < 40000, "100000 points: a drawing of a few kilobytes, not megabytes");
}

static void test_bars(void)
{
        const char *const names[] = { "4xC4140", "p3dn <24xl>", "local", "dgx" };
        const double v[] = { 812.5, 1630, NAN, -40 };
        const double lo[] = { 800, 1600, NAN, -55 };
        const double hi[] = { 825, 1660, NAN, -20 };
        const struct svg_refline refs[] = { { .label = "reference 1500", .a = 1500 } };
        struct svg_bars p = { .title = "throughput", .ylabel = "images/s", .n = 4, .labels = names, .values = v,
                              .lo = lo, .hi = hi, .refs = refs, .nrefs = 1 };
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        svg_bar_chart(&b, &p);
        check_drawing(b.s, "bar chart");
        is_int(count(b.s, "fill=\"#0072B2\""), 3, "bars: three finite bars");
        like(b.s, ">n/a</text>", "bars: the NaN one says n/a");
        like(b.s, ">p3dn &lt;24xl&gt;</text>", "bars: category names escaped");
        ok(strstr(b.s, ">812.5</text>") && strstr(b.s, ">1630</text>") && strstr(b.s, ">-40</text>"),
           "bars: values printed");
        like(b.s, ">reference 1500</text>", "bars: reference line labelled");
        is_int(count(b.s, "<path stroke"), 3, "bars: intervals as whiskers");

        buf_reset(&b);
        const double nan2[] = { NAN, NAN };
        struct svg_bars e = { .title = "none", .ylabel = "s", .n = 2, .labels = names, .values = nan2 };
        svg_bar_chart(&b, &e);
        check_drawing(b.s, "bar chart of NaN");
        like(b.s, ">no data</text>", "bars of NaN: no data");

        /* many long categories: slanted, some left out */
        const char *many[60];
        double mv[60];
        for (int i = 0; i < 60; i++) {
                many[i] = "a rather long category name";
                mv[i] = i * 1e9;
        }
        struct svg_bars m = { .title = "sixty", .ylabel = "items", .n = 60, .labels = many, .values = mv };
        buf_reset(&b);
        svg_bar_chart(&b, &m);
        check_drawing(b.s, "sixty bars");
        like(b.s, "rotate(-35)", "sixty bars: labels slanted");
        ok(count(b.s, "a rather long") < 60, "sixty bars: not every label, they would overlap");
}

static void test_heatmap(void)
{
        const char *const rows[] = { "32", "64", "128" };
        const char *const cols[] = { "fp32", "tf32", "amp <bf16>" };
        const double v[] = { 410, 690, 905, 450, 760, NAN, 470, NAN, INFINITY };
        const char *const text[] = { NULL, NULL, "905 \xc2\xb1 3", NULL, NULL, "OOM", NULL, "failed", NULL };
        struct svg_heatmap h = { .title = "images/s by batch and precision", .rowlabel = "batch size",
                                 .collabel = "precision", .valuelabel = "images/s", .nrows = 3, .ncols = 3,
                                 .rowlabels = rows, .collabels = cols, .values = v, .cell_text = text };
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        svg_heatmap(&b, &h);
        const char *why = xml_problem(b.s);
        if (!ok(!why, "heat map: well-formed"))
                printf("#   %s\n", why);
        const char *want[] = { ">410<", ">690<", ">905 \xc2\xb1 3<", ">450<", ">760<", ">OOM<", ">470<", ">failed<",
                               ">inf<" };
        bool all = true;
        for (size_t i = 0; i < ARRAY_SIZE(want); i++)
                if (!strstr(b.s, want[i])) {
                        printf("#   no cell %s\n", want[i]);
                        all = false;
                }
        ok(all, "heat map: every cell's text printed (given, formatted, inf)");
        is_int(count(b.s, "fill=\"#c4c4c4\""), 3 + 1, "heat map: three grey cells and the legend's swatch");
        like(b.s, ">amp &lt;bf16&gt;<", "heat map: column labels escaped");
        like(b.s, ">batch size</text>", "heat map: row title");
        like(b.s, ">no value</text>", "heat map: grey explained");
        like(b.s, ">images/s</text>", "heat map: the colour scale labelled");
        ok(strstr(b.s, "fill=\"#440154\"") && strstr(b.s, "fill=\"#fde725\""),
           "heat map: smallest and largest at the ends of the scale");

        buf_reset(&b);
        const double nv[] = { NAN, NAN };
        struct svg_heatmap n = { .title = "nothing", .nrows = 1, .ncols = 2, .rowlabels = rows, .collabels = cols,
                                 .values = nv };
        svg_heatmap(&b, &n);
        ok(!xml_problem(b.s) && count(b.s, ">NaN<") == 2, "heat map of NaN: each cell says NaN");
        buf_reset(&b);
        struct svg_heatmap z = { .title = "empty" };
        svg_heatmap(&b, &z);
        check_drawing(b.s, "empty heat map");
        like(b.s, ">no data</text>", "empty heat map: no data");
}

int main(void)
{
        test_escape();
        test_html();
        test_ticks();
        test_line_plots();
        test_long_run();
        test_bars();
        test_heatmap();
        return done_testing();
}

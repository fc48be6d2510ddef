/* svg-demo.c: one HTML page with every kind of plot of client/report/svg.h and the
 * page and table helpers of client/report/html.h, on made-up benchmark results with
 * the awkward cases in them (gaps, NaN, OOM, one point, no data, markup and
 * invalid UTF-8 in labels).  t0930 checks it parses and renders; a person
 * can open it to judge the drawings.
 *
 *     svg-demo FILE        (FILE "-": standard output)
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "fs.h"
#include "html.h"
#include "svg.h"

static void training_curves(struct bd_buf *b)
{
        /* two SSD runs: mAP per epoch, the second with a failed evaluation */
        static const double epoch[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
        static const double map1[] = { 0.08, 0.15, 0.19, 0.23, 0.25, 0.27, 0.285, 0.293, 0.298, 0.302 };
        static const double map2[] = { 0.07, 0.13, NAN, 0.21, 0.24, 0.26, 0.28, 0.291, 0.301, NAN };
        const struct svg_series s[] = {
                { .label = "run 1 (seed 3)", .x = epoch, .y = map1, .n = 10 },
                { .label = "run 2 (seed 7, eval 3 failed)", .x = epoch, .y = map2, .n = 10 },
        };
        const struct svg_refline target = { .label = "target 0.23", .a = 0.23 };
        const struct svg_plot p = { .title = "SSD: bbox mAP per epoch", .xlabel = "epoch", .ylabel = "bbox mAP",
                                    .series = s, .nseries = 2, .refs = &target, .nrefs = 1, .y_from_zero = true };
        html_h(b, 2, "Training curves");
        svg_line_plot(b, &p);

        /* loss with its spread over ranks as a band */
        static double step[200], loss[200], lo[200], hi[200];
        for (int i = 0; i < 200; i++) {
                step[i] = i * 50;
                loss[i] = 6 * exp(-i / 40.0) + 1.1 + 0.15 * sin(i / 3.0);
                lo[i] = loss[i] - 0.2 - 0.1 * exp(-i / 60.0);
                hi[i] = loss[i] + 0.2 + 0.1 * exp(-i / 60.0);
        }
        loss[120] = NAN;        /* a NaN loss: the line breaks */
        const struct svg_series ls = { .label = "loss (min..max over 8 ranks)", .x = step, .y = loss, .n = 200,
                                       .ylo = lo, .yhi = hi };
        const struct svg_plot lp = { .title = "Mask R-CNN: training loss", .xlabel = "step",
                                     .ylabel = "loss", .series = &ls, .nseries = 1 };
        svg_line_plot(b, &lp);
}

static void scaling(struct bd_buf *b)
{
        static const double nodes[] = { 1, 2, 4, 8, 16, 32 };
        static const double ssd[] = { 1630, 3180, 6120, 11600, 21400, NAN };
        static const double ssd_lo[] = { 1610, 3120, 6010, 11300, 20700, NAN };
        static const double ssd_hi[] = { 1650, 3230, 6200, 11800, 22000, NAN };
        static const double mr[] = { 410, 800, 1540, 2900, 5300, 9100 };
        const struct svg_series s[] = {
                { .label = "SSD", .x = nodes, .y = ssd, .n = 6, .ylo = ssd_lo, .yhi = ssd_hi, .points = true },
                { .label = "Mask R-CNN", .x = nodes, .y = mr, .n = 6, .points = true },
        };
        const struct svg_refline ideal[] = { { .label = "SSD ideal", .b = 1630 },
                                             { .label = "Mask R-CNN ideal", .b = 410 } };
        const struct svg_plot p = { .title = "Throughput against nodes (8 GPUs each)", .xlabel = "nodes",
                                    .ylabel = "images/s", .series = s, .nseries = 2, .refs = ideal, .nrefs = 2,
                                    .xlog2 = true, .y_from_zero = true };
        html_h(b, 2, "Scaling");
        svg_line_plot(b, &p);
}

static void systems(struct bd_buf *b)
{
        static const char *const names[] = { "4xC4140", "p3dn.24xlarge", "DGX H100", "local", "H200 <tf32>" };
        static const double v[] = { 1630, 2410, 9820, NAN, 7310 };
        static const double lo[] = { 1605, 2380, 9700, NAN, 7100 };
        static const double hi[] = { 1655, 2440, 9940, NAN, 7520 };
        const struct svg_refline ref = { .label = "published 8000", .a = 8000 };
        const struct svg_bars p = { .title = "SSD throughput by system (95% interval)", .ylabel = "images/s",
                                    .n = 5, .labels = names, .values = v, .lo = lo, .hi = hi, .refs = &ref,
                                    .nrefs = 1 };
        html_h(b, 2, "Systems");
        svg_bar_chart(b, &p);

        static const char *const changes[] = { "bind NICs", "drop caches", "tf32", "larger batch", "fused Adam",
                                               "channels last" };
        static const double d[] = { 4.2, -1.1, 18.5, 7.9, 2.5, -6.3 };
        static const double dlo[] = { 2.0, -3.0, 15.1, 4.0, -0.4, -9.8 };
        static const double dhi[] = { 6.4, 0.8, 21.9, 11.8, 5.4, -2.8 };
        const struct svg_refline zero = { .label = "no change", .a = 0 };
        const struct svg_bars q = { .title = "Change in throughput against the baseline", .ylabel = "%",
                                    .n = 6, .labels = changes, .values = d, .lo = dlo, .hi = dhi, .refs = &zero,
                                    .nrefs = 1 };
        svg_bar_chart(b, &q);

        static const char *const header[] = { "system", "images/s", "95% interval", "runs", "time to train",
                                              "note" };
        static const char *const rows[][6] = {
                { "4xC4140", "1630", "1605 \xe2\x80\x93 1655", "5", "41.2 min", "" },
                { "p3dn.24xlarge", "2410", "2380 \xe2\x80\x93 2440", "5", "28.0 min", "EFA" },
                { "DGX H100", "9820", "9700 \xe2\x80\x93 9940", "3", "7.1 min", "" },
                { "local", "NaN", "", "1", "", "evaluation failed: <NaN loss> & stopped" },
                { "H200 <tf32>", "7310", "7100 \xe2\x80\x93 7520", "3", "9.4 min", "\xff invalid byte" },
        };
        html_table_begin(b, header, 6);
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                html_row(b, rows[i], 6);
        html_table_end(b);
}

static void sweep(struct bd_buf *b)
{
        static const char *const batch[] = { "16", "32", "64", "128", "256" };
        static const char *const prec[] = { "fp32", "tf32", "amp (bf16)", "amp (fp16)" };
        static const double v[] = {
                620, 1480, 2010, 2090, 660, 1650, 2390, 2460, 690, 1720, 2650, 2710,
                700, 1750, NAN, 2890, NAN, NAN, NAN, NAN,
        };
        static const char *const text[] = {
                NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                NULL, NULL, "failed", NULL, "OOM", "OOM", "OOM", NULL,
        };
        const struct svg_heatmap h = { .title = "SSD images/s by batch size and precision (one H200)",
                                       .rowlabel = "batch size", .collabel = "precision", .valuelabel = "images/s",
                                       .nrows = 5, .ncols = 4, .rowlabels = batch, .collabels = prec, .values = v,
                                       .cell_text = text };
        html_h(b, 2, "Sweep");
        svg_heatmap(b, &h);
}

static void degenerate(struct bd_buf *b)
{
        html_h(b, 2, "Edge cases");
        html_p(b, "Plots of nothing, one point, equal values and extreme magnitudes.");
        static const double nan3[] = { NAN, NAN, NAN }, x3[] = { 1, 2, 3 };
        const struct svg_series none = { .label = "nothing", .x = x3, .y = nan3, .n = 3 };
        const struct svg_plot a = { .title = "Every value NaN", .xlabel = "step", .ylabel = "loss", .series = &none,
                                    .nseries = 1, .width = 400, .height = 240 };
        svg_line_plot(b, &a);
        static const double one_x[] = { 8 }, one_y[] = { 11250 };
        const struct svg_series one = { .label = "one", .x = one_x, .y = one_y, .n = 1, .points = true };
        const struct svg_plot o = { .title = "One point", .xlabel = "GPUs", .ylabel = "images/s", .series = &one,
                                    .nseries = 1, .xlog2 = true, .width = 400, .height = 240 };
        svg_line_plot(b, &o);
        static const double flat[] = { 0.25, 0.25, 0.25 };
        const struct svg_series f = { .label = "flat", .x = x3, .y = flat, .n = 3 };
        const struct svg_plot e = { .title = "Equal values", .xlabel = "epoch", .ylabel = "mAP", .series = &f,
                                    .nseries = 1, .width = 400, .height = 240 };
        svg_line_plot(b, &e);
        static const double tiny[] = { 1.2e-9, 3.5e-9, 2.1e-9 }, huge[] = { 2.5e15, 1e16, 4e15 };
        const struct svg_series t = { .label = "latency", .x = x3, .y = tiny, .n = 3, .points = true };
        const struct svg_plot tp = { .title = "Nanoseconds", .xlabel = "trial", .ylabel = "s", .series = &t,
                                     .nseries = 1, .width = 400, .height = 240 };
        svg_line_plot(b, &tp);
        const struct svg_series h = { .label = "FLOP", .x = x3, .y = huge, .n = 3 };
        const struct svg_plot hp = { .title = "Petascale", .xlabel = "trial", .ylabel = "FLOP", .series = &h,
                                     .nseries = 1, .width = 400, .height = 240 };
        svg_line_plot(b, &hp);
        const struct svg_bars nb = { .title = "No bars", .ylabel = "images/s" };
        svg_bar_chart(b, &nb);
}

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: svg-demo FILE\n");
                return 2;
        }
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        html_begin(&b, "benchd report: plots & tables <demo>");
        html_h(&b, 1, "benchd report: plots & tables <demo>");
        html_p(&b, "Made-up results drawing every plot kind; labels carry markup (<b>, &amp;, \"quotes\") and an "
                   "invalid byte (\xff) that must come out as text.");
        training_curves(&b);
        scaling(&b);
        systems(&b);
        sweep(&b);
        degenerate(&b);
        html_end(&b);

        if (streq(argv[1], "-")) {
                if (fwrite(b.s, 1, b.len, stdout) != b.len || fflush(stdout) != 0) {
                        perror("svg-demo: write");
                        return 1;
                }
                return 0;
        }
        struct bd_err err;
        if (fs_write_replace(argv[1], b.s, b.len, 0644, &err) < 0) {
                fprintf(stderr, "svg-demo: %s\n", err.msg);
                return 1;
        }
        return 0;
}

/* test-stats.c: lib/stats.h against textbook values: Student's t quantiles
 * (tables to 9 digits), a CDF and Welch's example 1 (t, df and p checked
 * with numpy and a Simpson integration of the t density). */
#include "config.h"

#include <math.h>

#include "stats.h"
#include "tap.h"

static void near(double got, double want, double tol, const char *what)
{
        if (!ok(fabs(got - want) <= tol, what))
                printf("#   got %.10g, want %.10g (tolerance %g)\n", got, want, tol);
}

int main(void)
{
        static const struct { double df, t; } q975[] = {
                { 1, 12.7062047362 }, { 2, 4.30265272975 }, { 4, 2.7764451052 }, { 9, 2.26215716280 },
                { 30, 2.04227245630 }, { 1000, 1.96233908082 },
        };
        char what[96];
        for (size_t i = 0; i < sizeof(q975) / sizeof(q975[0]); i++) {
                snprintf(what, sizeof(what), "t quantile 0.975, %g degrees of freedom", q975[i].df);
                near(stats_t_quantile(0.975, q975[i].df), q975[i].t, 1e-8 * q975[i].t, what);
        }
        near(stats_t_quantile(0.025, 9), -2.26215716280, 1e-8, "t quantile 0.025 is the negative of 0.975");
        near(stats_t_cdf(2.0, 5), 0.94903026056, 1e-9, "t CDF at 2 with 5 degrees of freedom");
        near(stats_t_cdf(0, 3), 0.5, 1e-15, "t CDF at 0");
        ok(isnan(stats_t_quantile(1.5, 3)) && isnan(stats_t_cdf(1, 0)), "out of range: NaN");

        const double v[] = { 10, 12, 11, 13, 9, 30 };
        struct stats s;
        stats_summary(v, 6, &s);
        is_int(s.n, 6, "summary: count");
        near(s.mean, 85.0 / 6, 1e-12, "summary: mean");
        near(s.sd, 7.884584115, 1e-9, "summary: sample standard deviation");
        ok(s.min == 9 && s.max == 30, "summary: min and max");
        near(s.ci_hi - s.mean, 2.57058183661 * s.sd / sqrt(6.0), 1e-8, "summary: 95% interval is t(0.975, 5) sd / sqrt(n)");
        near(s.mean - s.ci_lo, s.ci_hi - s.mean, 1e-12, "summary: the interval is symmetric");
        stats_summary(v, 1, &s);
        ok(s.sd == 0 && s.ci_lo == 10 && s.ci_hi == 10, "summary of one value: no spread");
        stats_summary(v, 0, &s);
        ok(s.n == 0 && s.mean == 0, "summary of none: zeros");
        near(stats_olympic_mean(v, 6), (10 + 12 + 11 + 13) / 4.0, 1e-12, "olympic mean drops the highest and lowest");
        near(stats_olympic_mean(v, 2), 11, 1e-12, "olympic mean of two: the mean");
        near(stats_quantile(v, 6, 0.8), 13, 1e-12, "quantile 0.8 (linear interpolation, as numpy)");
        near(stats_quantile(v, 6, 0.5), 11.5, 1e-12, "median");
        ok(isnan(stats_quantile(v, 0, 0.5)), "quantile of none: NaN");

        const double a[] = { 27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4 };
        const double b[] = { 27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4 };
        struct welch w;
        ok(stats_welch(a, 15, b, 15, &w) == 0, "Welch: runs");
        near(w.t, -2.455356398286, 1e-9, "Welch: t");
        near(w.df, 24.988529290231, 1e-8, "Welch: degrees of freedom");
        near(w.p, 0.021378001463, 1e-7, "Welch: two-sided p");
        ok(stats_welch(a, 1, b, 15, &w) < 0, "Welch: a sample of one is refused");
        const double c[] = { 5, 5, 5 };
        ok(stats_welch(c, 3, c, 3, &w) < 0, "Welch: no variance anywhere is refused");
        return done_testing();
}

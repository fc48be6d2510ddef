/* stats.h: the statistics of repeated measurements that throughput runs,
 * suites and reports share: summaries with a confidence interval, the
 * olympic mean, quantiles, Student's t distribution and Welch's t-test.
 */
#ifndef BD_STATS_H
#define BD_STATS_H

#include <stddef.h>

struct stats {
        size_t n;
        double mean, sd;                /* sd: the sample standard deviation (n - 1); 0 when n < 2 */
        double min, max;
        double ci_lo, ci_hi;            /* 95% confidence interval of the mean (Student's t); the mean when n < 2 */
};

/* The summary of v[0 .. n-1] (n may be 0: all zeros). */
void stats_summary(const double *v, size_t n, struct stats *s);
/* The mean without the highest and the lowest value (MLPerf's and the mila
 * suite's olympic mean); the plain mean when n < 3. */
double stats_olympic_mean(const double *v, size_t n);
/* The q-quantile (0..1) with linear interpolation between order statistics
 * (numpy's default); NAN when n is 0. */
double stats_quantile(const double *v, size_t n, double q);
/* Student's t distribution with df degrees of freedom: P(T <= t), and the t
 * with P(T <= t) = p. */
double stats_t_cdf(double t, double df);
double stats_t_quantile(double p, double df);

/* Welch's t-test of two samples' means (unequal variances). */
struct welch {
        double t, df;
        double p;                       /* two-sided */
};
/* -1 when either sample has fewer than 2 values or both have no variance. */
int stats_welch(const double *a, size_t na, const double *b, size_t nb, struct welch *w);

#endif

/* stats.c: see stats.h.  The t distribution goes through the regularised
 * incomplete beta function (a continued fraction evaluated by the modified
 * Lentz method), its quantile through bisection on the CDF. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "macro.h"

void stats_summary(const double *v, size_t n, struct stats *s)
{
        memset(s, 0, sizeof(*s));
        s->n = n;
        if (!n)
                return;
        double sum = 0;
        s->min = s->max = v[0];
        for (size_t i = 0; i < n; i++) {
                sum += v[i];
                s->min = fmin(s->min, v[i]);
                s->max = fmax(s->max, v[i]);
        }
        s->mean = sum / (double)n;
        double ss = 0;
        for (size_t i = 0; i < n; i++)
                ss += (v[i] - s->mean) * (v[i] - s->mean);
        s->sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
        double h = n > 1 ? stats_t_quantile(0.975, (double)(n - 1)) * s->sd / sqrt((double)n) : 0;
        s->ci_lo = s->mean - h;
        s->ci_hi = s->mean + h;
}

double stats_olympic_mean(const double *v, size_t n)
{
        if (!n)
                return NAN;
        double sum = 0, lo = v[0], hi = v[0];
        for (size_t i = 0; i < n; i++) {
                sum += v[i];
                lo = fmin(lo, v[i]);
                hi = fmax(hi, v[i]);
        }
        if (n < 3)
                return sum / (double)n;
        return (sum - lo - hi) / (double)(n - 2);
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

double stats_quantile(const double *v, size_t n, double q)
{
        if (!n)
                return NAN;
        double *s = xmalloc(n * sizeof(double));
        memcpy(s, v, n * sizeof(double));
        qsort(s, n, sizeof(double), cmp_double);
        double pos = fmin(fmax(q, 0), 1) * (double)(n - 1);
        size_t i = (size_t)pos;
        double r = i + 1 < n ? s[i] + (pos - (double)i) * (s[i + 1] - s[i]) : s[n - 1];
        free(s);
        return r;
}

/* the continued fraction of the incomplete beta function */
static double beta_cf(double a, double b, double x)
{
        const double tiny = 1e-300, eps = 1e-15;
        double c = 1, d = 1 - (a + b) * x / (a + 1);
        d = 1 / (fabs(d) < tiny ? tiny : d);
        double h = d;
        for (int m = 1; m <= 300; m++) {
                double aa = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
                d = 1 + aa * d;
                c = 1 + aa / c;
                d = 1 / (fabs(d) < tiny ? tiny : d);
                c = fabs(c) < tiny ? tiny : c;
                h *= d * c;
                aa = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
                d = 1 + aa * d;
                c = 1 + aa / c;
                d = 1 / (fabs(d) < tiny ? tiny : d);
                c = fabs(c) < tiny ? tiny : c;
                double del = d * c;
                h *= del;
                if (fabs(del - 1) < eps)
                        break;
        }
        return h;
}

/* I_x(a, b) */
static double beta_inc(double a, double b, double x)
{
        if (x <= 0)
                return 0;
        if (x >= 1)
                return 1;
        double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
        if (x < (a + 1) / (a + b + 2))
                return exp(lbt) * beta_cf(a, b, x) / a;
        return 1 - exp(lbt) * beta_cf(b, a, 1 - x) / b;
}

double stats_t_cdf(double t, double df)
{
        if (isnan(t) || !(df > 0))
                return NAN;
        if (isinf(t))
                return t > 0 ? 1 : 0;
        double tail = 0.5 * beta_inc(df / 2, 0.5, df / (df + t * t));
        return t > 0 ? 1 - tail : tail;
}

double stats_t_quantile(double p, double df)
{
        if (!(p > 0 && p < 1) || !(df > 0))
                return NAN;
        double lo = -1, hi = 1;
        while (stats_t_cdf(lo, df) > p)
                lo *= 2;
        while (stats_t_cdf(hi, df) < p)
                hi *= 2;
        for (int i = 0; i < 200 && hi - lo > 1e-12 * fmax(1, fabs(lo)); i++) {
                double mid = (lo + hi) / 2;
                if (stats_t_cdf(mid, df) < p)
                        lo = mid;
                else
                        hi = mid;
        }
        return (lo + hi) / 2;
}

int stats_welch(const double *a, size_t na, const double *b, size_t nb, struct welch *w)
{
        struct stats sa, sb;
        if (na < 2 || nb < 2)
                return -1;
        stats_summary(a, na, &sa);
        stats_summary(b, nb, &sb);
        double va = sa.sd * sa.sd / (double)na, vb = sb.sd * sb.sd / (double)nb;
        if (va + vb <= 0)
                return -1;
        w->t = (sa.mean - sb.mean) / sqrt(va + vb);
        w->df = (va + vb) * (va + vb) / (va * va / (double)(na - 1) + vb * vb / (double)(nb - 1));
        w->p = 2 * stats_t_cdf(-fabs(w->t), w->df);
        return 0;
}

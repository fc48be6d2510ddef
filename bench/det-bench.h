/* det-bench.h: what the detection benchmarks' C sides (bench/nms.c,
 * bench/rpn-proposals.c) share: reading their inputs and the median. */
#ifndef BD_DET_BENCH_H
#define BD_DET_BENCH_H

#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "fs.h"

/* DIR/NAME whole (at most 1 GiB), or exit(1) saying why */
static void *bench_read(const char *dir, const char *name, size_t *len)
{
        char path[4096];
        char *data;
        struct bd_err err;
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (fs_read_file(path, (size_t)1 << 30, &data, len, &err) < 0) {
                fprintf(stderr, "%s\n", err.msg);
                exit(1);
        }
        return data;
}

static int bench_cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/* the median of t (n > 0; sorts t) */
static double bench_median(double *t, int n)
{
        qsort(t, (size_t)n, sizeof(double), bench_cmp_double);
        return t[n / 2];
}

#endif

/* ops-cpu.c: the CPU backend.
 *
 * Element functions of elem.h run as OpenMP loops: flat ones over [0, n),
 * 4-D ones as nested loops in the tensor's memory order so that no index is
 * divided.  Reductions sum fixed chunks and then the chunk sums in order:
 * the same result for any number of threads.  The library operations
 * (convolution, batch norm, max pooling, fully connected) are those of
 * ops-dnnl.h: oneDNN's primitives, or the reference loops in builds without
 * oneDNN.
 *
 * Activations prefer nChw8c when the channels allow it: oneDNN's AVX2 kernels
 * are fastest there, and consecutive layers then need no reorders.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpuset.h"
#include "ops-dnnl.h"

/* ---- element functions, instantiated for f32 and f64 ---------------------------- */

#define BD_S float
#define BD_T float
#define BD_SFX f32
#define BD_T_DOUBLE 0
#include "elem-impl.h"
#undef BD_S
#undef BD_T
#undef BD_SFX
#undef BD_T_DOUBLE

#define BD_S double
#define BD_T double
#define BD_SFX f64
#define BD_T_DOUBLE 1
#include "elem-impl.h"
#undef BD_S
#undef BD_T
#undef BD_SFX
#undef BD_T_DOUBLE

/* below this many indices a loop runs on one thread */
#define PAR_MIN 16384

#define FLAT_LOOP(name, args, sfx)                                                     \
        static void run_##name##_##sfx(int64_t n, const void *vp)                      \
        {                                                                              \
                const struct args a = *(const struct args *)vp;                        \
                _Pragma("omp parallel for schedule(static) if (n >= PAR_MIN)")         \
                for (int64_t i = 0; i < n; i++)                                        \
                        bd_k_##name##_##sfx(i, &a);                                    \
        }

/* 4-D: nested loops in memory order of the layout of a.s */
#define LOOP_4D(name, args, sfx)                                                                   \
        static void run_##name##_##sfx(int64_t n_unused, const void *vp)                           \
        {                                                                                          \
                const struct args a = *(const struct args *)vp;                                    \
                const int64_t N = a.s.N, C = a.s.C, H = a.s.H, W = a.s.W;                          \
                int par = N * C * H * W >= PAR_MIN;                                                \
                if (a.s.layout == BD_NHWC) {                                                       \
                        _Pragma("omp parallel for schedule(static) if (par)")                      \
                        for (int64_t nh = 0; nh < N * H; nh++) {                                   \
                                int64_t n = nh / H, h = nh % H, i = nh * W * C;                    \
                                for (int64_t w = 0; w < W; w++)                                    \
                                        for (int64_t c = 0; c < C; c++, i++)                       \
                                                bd_k_##name##_##sfx(i, n, c, h, w, &a);            \
                        }                                                                          \
                } else if (a.s.layout == BD_NCHW8C) {                                              \
                        const int64_t CB = C / 8;                                                  \
                        _Pragma("omp parallel for schedule(static) if (par)")                      \
                        for (int64_t nb = 0; nb < N * CB; nb++) {                                  \
                                int64_t n = nb / CB, c0 = (nb % CB) * 8, i = nb * H * W * 8;       \
                                for (int64_t h = 0; h < H; h++)                                    \
                                        for (int64_t w = 0; w < W; w++)                            \
                                                for (int64_t j = 0; j < 8; j++, i++)               \
                                                        bd_k_##name##_##sfx(i, n, c0 + j, h, w, &a); \
                        }                                                                          \
                } else {                                                                           \
                        _Pragma("omp parallel for schedule(static) if (par)")                      \
                        for (int64_t nc = 0; nc < N * C; nc++) {                                   \
                                int64_t n = nc / C, c = nc % C, i = nc * H * W;                    \
                                for (int64_t h = 0; h < H; h++)                                    \
                                        for (int64_t w = 0; w < W; w++, i++)                       \
                                                bd_k_##name##_##sfx(i, n, c, h, w, &a);            \
                        }                                                                          \
                }                                                                                  \
        }

/* offset of element k = h W + w of channel c of image n (bd_off4 without
 * its divisions) */
static inline int64_t chan_off(const struct bd_shape4 *s, int64_t n, int64_t c, int64_t k)
{
        int64_t HW = s->H * s->W;
        switch (s->layout) {
        case BD_NHWC:
                return (n * HW + k) * s->C + c;
        case BD_NCHW8C:
                return ((n * (s->C >> 3) + (c >> 3)) * HW + k) * 8 + (c & 7);
        default:
                return (n * s->C + c) * HW + k;
        }
}

/* channel sums: a channel (nChw8c: a block of 8) per iteration, its
 * elements in memory order, summed in double */
#define CHAN_LOOP(name, args, sfx)                                                                 \
        static void run_##name##_##sfx(int64_t n_unused, const void *vp)                           \
        {                                                                                          \
                const struct args a = *(const struct args *)vp;                                    \
                const int64_t N = a.s.N, C = a.s.C, HW = a.s.H * a.s.W;                            \
                const int64_t cw = a.s.layout == BD_NCHW8C ? 8 : 1;                                \
                int par = N * C * HW >= PAR_MIN;                                                   \
                _Pragma("omp parallel for schedule(static) if (par)")                              \
                for (int64_t cb = 0; cb < C / cw; cb++) {                                          \
                        double s0[8] = { 0 }, s1[8] = { 0 };                                       \
                        for (int64_t n = 0; n < N; n++)                                            \
                                for (int64_t k = 0; k < HW; k++)                                   \
                                        for (int64_t j = 0; j < cw; j++) {                         \
                                                int64_t c = cb * cw + j;                           \
                                                double v0, v1;                                     \
                                                bd_k_c_##name##_##sfx(chan_off(&a.s, n, c, k), c, &a, &v0, &v1); \
                                                s0[j] += v0;                                       \
                                                s1[j] += v1;                                       \
                                        }                                                          \
                        for (int64_t j = 0; j < cw; j++) {                                         \
                                a.sums[cb * cw + j] = s0[j];                                       \
                                a.sums[C + cb * cw + j] = s1[j];                                   \
                        }                                                                          \
                }                                                                                  \
                a.sums[2 * C] = (double)(N * HW);                                                  \
        }

#define BD_X(name, args) FLAT_LOOP(name, args, f32) FLAT_LOOP(name, args, f64)
BD_FLAT_KERNELS(BD_X)
#undef BD_X
#define BD_X(name, args) LOOP_4D(name, args, f32) LOOP_4D(name, args, f64)
BD_4D_KERNELS(BD_X)
#undef BD_X
#define BD_X(name, args) CHAN_LOOP(name, args, f32) CHAN_LOOP(name, args, f64)
BD_CHAN_KERNELS(BD_X)
#undef BD_X

static void run_cast(int64_t n, const void *vp)
{
        const struct bd_cast_args a = *(const struct bd_cast_args *)vp;
#pragma omp parallel for schedule(static) if (n >= PAR_MIN)
        for (int64_t i = 0; i < n; i++)
                bd_k_cast(i, &a);
}

typedef void (*run_fn)(int64_t n, const void *args);

static const run_fn runs_f32[_BD_K_MAX] = {
#define BD_X(name, args) [BD_K_##name] = run_##name##_f32,
        BD_FLAT_KERNELS(BD_X) BD_4D_KERNELS(BD_X) BD_CHAN_KERNELS(BD_X)
#undef BD_X
        [BD_K_cast] = run_cast,
};

static const run_fn runs_f64[_BD_K_MAX] = {
#define BD_X(name, args) [BD_K_##name] = run_##name##_f64,
        BD_FLAT_KERNELS(BD_X) BD_4D_KERNELS(BD_X) BD_CHAN_KERNELS(BD_X)
#undef BD_X
        [BD_K_cast] = run_cast,
};

static int cpu_elem(struct bd_backend *be, enum bd_kernel k, enum bd_dtype dt, int64_t n, const void *args)
{
        const run_fn *tab = dt == BD_F64 ? runs_f64 : dt == BD_F32 || dt == BD_I32 ? runs_f32 : NULL;
        if (!tab || (unsigned)k >= _BD_K_MAX || !tab[k])
                return bd_err_set(&be->err, -EINVAL, "cpu: no element function %d for %s", (int)k, bd_dtype_name(dt));
        tab[k](n, args);
        return 0;
}

/* ---- reductions ---------------------------------------------------------------- */

#define RCHUNK 8192

#define REDUCE_LOOP(name, args, sfx)                                                        \
        static void red_##name##_##sfx(int64_t n, const void *vp, double *part)            \
        {                                                                                   \
                const struct args a = *(const struct args *)vp;                             \
                int64_t nchunks = (n + RCHUNK - 1) / RCHUNK;                                \
                _Pragma("omp parallel for schedule(static) if (n >= PAR_MIN)")              \
                for (int64_t ch = 0; ch < nchunks; ch++) {                                  \
                        int64_t lo = ch * RCHUNK, hi = lo + RCHUNK < n ? lo + RCHUNK : n;   \
                        double acc[8] = { 0 };                                              \
                        int64_t i = lo;                                                     \
                        for (; i + 8 <= hi; i += 8)                                         \
                                for (int j = 0; j < 8; j++)                                 \
                                        acc[j] += (double)bd_k_r_##name##_##sfx(i + j, &a); \
                        for (; i < hi; i++)                                                 \
                                acc[0] += (double)bd_k_r_##name##_##sfx(i, &a);             \
                        part[ch] = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +                \
                                   ((acc[4] + acc[5]) + (acc[6] + acc[7]));                 \
                }                                                                           \
        }

#define BD_X(name, args) REDUCE_LOOP(name, args, f32) REDUCE_LOOP(name, args, f64)
BD_REDUCERS(BD_X)
#undef BD_X

typedef void (*red_fn)(int64_t n, const void *args, double *part);

static const red_fn reds_f32[_BD_R_MAX] = {
#define BD_X(name, args) [BD_R_##name] = red_##name##_f32,
        BD_REDUCERS(BD_X)
#undef BD_X
};

static const red_fn reds_f64[_BD_R_MAX] = {
#define BD_X(name, args) [BD_R_##name] = red_##name##_f64,
        BD_REDUCERS(BD_X)
#undef BD_X
};

static int cpu_reduce(struct bd_backend *be, enum bd_reducer k, enum bd_dtype dt, int64_t n, const void *args,
                      double *ret)
{
        struct bd_cpu_impl *im = be->impl;
        if ((unsigned)k >= _BD_R_MAX || (dt != BD_F32 && dt != BD_F64))
                return bd_err_set(&be->err, -EINVAL, "cpu: no reducer %d for %s", (int)k, bd_dtype_name(dt));
        size_t nchunks = (size_t)((n + RCHUNK - 1) / RCHUNK);
        if (nchunks > im->part_cap) {
                free(im->part);
                im->part = xmalloc(nchunks * sizeof(double));
                im->part_cap = nchunks;
        }
        (dt == BD_F64 ? reds_f64 : reds_f32)[k](n, args, im->part);
        double s = 0;
        for (size_t i = 0; i < nchunks; i++)
                s += im->part[i];
        *ret = s;
        return 0;
}

static int cpu_reduce_to(struct bd_backend *be, enum bd_reducer k, enum bd_dtype dt, int64_t n, const void *args,
                         double *dst)
{
        return cpu_reduce(be, k, dt, n, args, dst);
}

/* ---- memory -------------------------------------------------------------------- */

static void *cpu_alloc(struct bd_backend *be, size_t bytes)
{
        size_t n = (bytes + 63) & ~(size_t)63;
        return aligned_alloc(64, n ? n : 64);
}

static void cpu_free(struct bd_backend *be, void *p)
{
        free(p);
}

static int cpu_copy(struct bd_backend *be, void *dst, enum bd_device ddev, const void *src, enum bd_device sdev,
                    size_t bytes)
{
        if (ddev != BD_CPU || sdev != BD_CPU)
                return bd_err_set(&be->err, -EINVAL, "cpu: copy to or from GPU memory");
        if (dst != src && bytes)
                memmove(dst, src, bytes);
        return 0;
}

static int cpu_sync(struct bd_backend *be)
{
        return 0;
}

static enum bd_layout cpu_pref_layout(struct bd_backend *be, int64_t C, enum bd_dtype dt)
{
        return C % 8 == 0 ? BD_NCHW8C : BD_NHWC;
}

/* ---- the backend ---------------------------------------------------------------- */

static void cpu_destroy(struct bd_backend *be)
{
        struct bd_cpu_impl *im = be->impl;
        if (im) {
                bd_dnnl_free(im->dnnl);
                free(im->part);
                free(im);
        }
        free(be);
}

static const struct bd_backend_ops cpu_ops = {
        .name = "cpu",
        .destroy = cpu_destroy,
        .alloc = cpu_alloc,
        .free = cpu_free,
        .copy = cpu_copy,
        .sync = cpu_sync,
        .pref_layout = cpu_pref_layout,
        .elem = cpu_elem,
        .reduce = cpu_reduce,
        .reduce_to = cpu_reduce_to,
        .conv_fwd = bd_dnnl_conv_fwd,
        .conv_bwd = bd_dnnl_conv_bwd,
        .bn_fwd = bd_dnnl_bn_fwd,
        .bn_bwd = bd_dnnl_bn_bwd,
        .pool_fwd = bd_dnnl_pool_fwd,
        .pool_bwd = bd_dnnl_pool_bwd,
        .fc_fwd = bd_dnnl_fc_fwd,
        .fc_bwd = bd_dnnl_fc_bwd,
        .plan_free = bd_dnnl_plan_free,
};

int bd_backend_cpu_new(int nthreads, struct bd_backend **ret, struct bd_err *err)
{
        struct bd_backend *be = xcalloc(1, sizeof(*be));
        struct bd_cpu_impl *im = xcalloc(1, sizeof(*im));
        be->ops = &cpu_ops;
        be->dev = BD_CPU;
        be->impl = im;
        if (cpuinfo_model_name("/proc/cpuinfo", be->device_name, sizeof(be->device_name)) != 1)
                snprintf(be->device_name, sizeof(be->device_name), "cpu");
#ifdef _OPENMP
        if (nthreads > 0)
                omp_set_num_threads(nthreads);
        be->nthreads = omp_get_max_threads();
#else
        be->nthreads = 1;
#endif
        int r = bd_dnnl_new(&im->dnnl, err);
        if (r < 0) {
                cpu_destroy(be);
                return r;
        }
        *ret = be;
        return 0;
}

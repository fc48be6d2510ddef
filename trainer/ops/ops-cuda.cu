/* ops-cuda.cu: the CUDA backend.
 *
 * Library operations go to cuDNN (convolution, batch norm, max pooling) and
 * cuBLAS (fully connected); the element functions of elem.h become kernels,
 * one per function and element type (f32, and f16 / bf16 for mixed
 * precision), run on the backend's single stream.  The code that is not
 * library calls or launches lives in ops.c and elem-impl.h, shared with the
 * CPU backend.
 *
 * Layouts: activations are NCHW in float32 and NHWC in float16/bfloat16 (the
 * layout tensor cores want).  Parameters stay float32 in the model (the
 * master copy); in mixed precision each layer's plan keeps a float16 copy of
 * its weights (NHWC filters for convolutions), refreshed when the model's
 * version changes, and weight gradients are converted back into the float32
 * gradient buffer.  Float32 convolutions run without TF32 unless
 * BD_CUDA_TF32=1, so results compare with the CPU backend.
 *
 * Reductions use a fixed grid and sum the per-block results on the host in
 * order: the same result run to run.
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BD_ELEM_HALF 1

extern "C" {
#include "config.h"
#include "algo-cache.h"
#include "fs.h"
#include "ops.h"
}

#include <dlfcn.h>
#include <errno.h>
#include <time.h>

/* ---- element functions: f32, f16, bf16 ------------------------------------------- */

#define BD_S float
#define BD_T float
#define BD_SFX f32
#define BD_T_DOUBLE 0
#include "elem-impl.h"
#undef BD_S
#undef BD_T
#undef BD_SFX
#undef BD_T_DOUBLE

#define BD_S __half
#define BD_T float
#define BD_SFX f16
#define BD_T_DOUBLE 0
#include "elem-impl.h"
#undef BD_S
#undef BD_T
#undef BD_SFX
#undef BD_T_DOUBLE

#define BD_S __nv_bfloat16
#define BD_T float
#define BD_SFX bf16
#define BD_T_DOUBLE 0
#include "elem-impl.h"
#undef BD_S
#undef BD_T
#undef BD_SFX
#undef BD_T_DOUBLE

#define THREADS 256
#define MAX_BLOCKS 8192
#define RBLOCKS 512

#define FLAT_KERNEL(name, args, sfx)                                                               \
        __global__ void kf_##name##_##sfx(int64_t n, struct args a)                                 \
        {                                                                                           \
                for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;             \
                     i += (int64_t)gridDim.x * blockDim.x)                                          \
                        bd_k_##name##_##sfx(i, &a);                                                 \
        }

#define KERNEL_4D(name, args, sfx)                                                                 \
        __global__ void kf_##name##_##sfx(int64_t n, struct args a)                                 \
        {                                                                                           \
                for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;             \
                     i += (int64_t)gridDim.x * blockDim.x) {                                        \
                        int64_t nn, c, h, w;                                                        \
                        bd_coord4(&a.s, i, &nn, &c, &h, &w);                                        \
                        bd_k_##name##_##sfx(i, nn, c, h, w, &a);                                    \
                }                                                                                   \
        }

#define REDUCE_KERNEL(name, args, sfx)                                                             \
        __global__ void kr_##name##_##sfx(int64_t n, struct args a, double *part)                   \
        {                                                                                           \
                __shared__ double sh[THREADS];                                                      \
                double acc = 0;                                                                     \
                for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;             \
                     i += (int64_t)gridDim.x * blockDim.x)                                          \
                        acc += (double)bd_k_r_##name##_##sfx(i, &a);                                \
                sh[threadIdx.x] = acc;                                                              \
                __syncthreads();                                                                    \
                for (int s = THREADS / 2; s > 0; s >>= 1) {                                         \
                        if ((int)threadIdx.x < s)                                                   \
                                sh[threadIdx.x] += sh[threadIdx.x + s];                             \
                        __syncthreads();                                                            \
                }                                                                                   \
                if (threadIdx.x == 0)                                                               \
                        part[blockIdx.x] = sh[0];                                                   \
        }

/* channel sums: a block per channel, its threads striding over (N, H, W),
 * summed in double in a fixed tree: the same result run to run */
#define CHAN_KERNEL(name, args, sfx)                                                               \
        __global__ void kc_##name##_##sfx(struct args a)                                            \
        {                                                                                           \
                __shared__ double s0[THREADS], s1[THREADS];                                         \
                const int64_t c = blockIdx.x, HW = a.s.H * a.s.W, M = a.s.N * HW;                   \
                double v0 = 0, v1 = 0;                                                              \
                for (int64_t j = threadIdx.x; j < M; j += blockDim.x) {                             \
                        int64_t k = j % HW;                                                         \
                        double p0, p1;                                                              \
                        bd_k_c_##name##_##sfx(bd_off4(&a.s, j / HW, c, k / a.s.W, k % a.s.W), c, &a, &p0, &p1); \
                        v0 += p0;                                                                   \
                        v1 += p1;                                                                   \
                }                                                                                   \
                s0[threadIdx.x] = v0;                                                               \
                s1[threadIdx.x] = v1;                                                               \
                __syncthreads();                                                                    \
                for (int t = THREADS / 2; t > 0; t >>= 1) {                                         \
                        if ((int)threadIdx.x < t) {                                                 \
                                s0[threadIdx.x] += s0[threadIdx.x + t];                             \
                                s1[threadIdx.x] += s1[threadIdx.x + t];                             \
                        }                                                                           \
                        __syncthreads();                                                            \
                }                                                                                   \
                if (threadIdx.x == 0) {                                                             \
                        a.sums[c] = s0[0];                                                          \
                        a.sums[a.s.C + c] = s1[0];                                                  \
                        if (c == 0)                                                                 \
                                a.sums[2 * a.s.C] = (double)M;                                      \
                }                                                                                   \
        }

#define ALL_TYPES(M, name, args) M(name, args, f32) M(name, args, f16) M(name, args, bf16)
#define BD_X(name, args) ALL_TYPES(FLAT_KERNEL, name, args)
BD_FLAT_KERNELS(BD_X)
#undef BD_X
#define BD_X(name, args) ALL_TYPES(KERNEL_4D, name, args)
BD_4D_KERNELS(BD_X)
#undef BD_X
#define BD_X(name, args) ALL_TYPES(CHAN_KERNEL, name, args)
BD_CHAN_KERNELS(BD_X)
#undef BD_X
#define BD_X(name, args) ALL_TYPES(REDUCE_KERNEL, name, args)
BD_REDUCERS(BD_X)
#undef BD_X

__global__ void kf_cast(int64_t n, struct bd_cast_args a)
{
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
                bd_k_cast(i, &a);
}

/* ---- the backend's state ------------------------------------------------------- */

struct cuda_impl {
        int device;
        cudaStream_t stream;
        cudnnHandle_t dnn;
        cublasHandle_t blas;
        void *ws;                       /* cuDNN workspace */
        size_t ws_cap;
        double *part;                   /* reduction partials, device */
        double *hpart;                  /* and their host copy */
        void *ones;                     /* a vector of ones (f32 and f16 halves) for bias gradients */
        int64_t nones;
        int tf32;
        int find;                       /* convolution algorithms by timing (cuDNN's find), else heuristics */
        int bn_mode;                    /* half-precision NHWC batch norm: BN_EX, BN_PERSISTENT or BN_SPATIAL */
        size_t ws_limit;                /* the largest workspace an algorithm may ask for */
        struct algo_choice *algos;      /* chosen algorithms by shape, for the run */
        size_t nalgos, algos_cap;
        struct bd_algo_cache disk;      /* BD_CUDA_ALGO_CACHE: earlier runs' measurements, and ours */
        char *disk_path;                /* its file, NULL when not kept on disk */
        void *scr;                      /* scratch() */
        size_t scr_cap;
};

/* How half-precision NHWC batch norm runs (BD_CUDA_BN): the Ex functions
 * with workspace and reserve space in CUDNN_BATCHNORM_SPATIAL_PERSISTENT
 * (what PyTorch does for channels-last), the plain functions in that mode, or
 * the plain functions in CUDNN_BATCHNORM_SPATIAL (float32 and NCHW always). */
enum { BN_EX, BN_PERSISTENT, BN_SPATIAL };

/* the algorithms of one convolution shape (the plan's key), chosen once */
struct algo_choice {
        uint64_t key;
        cudnnConvolutionFwdAlgo_t fa;
        cudnnConvolutionBwdDataAlgo_t da;
        cudnnConvolutionBwdFilterAlgo_t wa;
        size_t fws, dws, wws;
        int seen;                       /* times a plan asked for this shape */
        int measured;                   /* final: measured, or not to be */
};

/* ---- profile (BD_CUDA_PROFILE=FILE) ---------------------------------------------------
 * Wall time of each kind of operation with the stream drained before and
 * after it (so the times are the GPU's plus the launch, serialised), nested
 * operations counted apart from the one around them; the table is written to
 * FILE when the backend is freed.  A diagnostic: it slows the run down. */
enum {
        PR_CONV_PLAN, PR_CONV_FWD, PR_CONV_BWD_FILTER, PR_CONV_BWD_DATA, PR_CONV_BIAS, PR_BN_FWD, PR_BN_BWD,
        PR_POOL_FWD, PR_POOL_BWD, PR_FC_FWD, PR_FC_BWD, PR_REDUCE, PR_COPY, PR_ELEM /* + bd_kernel */
};
static const char *const prof_names[] = {
        "conv plan", "conv forward", "conv backward filter", "conv backward data", "conv bias gradient",
        "batch norm forward", "batch norm backward", "pool forward", "pool backward", "fc forward", "fc backward",
        "reduction", "copy",
};
#define PR_SLOTS (PR_ELEM + _BD_K_MAX)
static struct {
        int on;
        char path[4096];
        double sec[PR_SLOTS];
        long n[PR_SLOTS];
        int stack[16];
        double start[16];
        int depth;
} prof;

static double prof_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct prof_scope {
        cudaStream_t s;
        int live;
        prof_scope(cudaStream_t stream, int slot) : s(stream), live(prof.on && prof.depth < 16)
        {
                if (!live)
                        return;
                cudaStreamSynchronize(s);
                double t = prof_now();
                if (prof.depth > 0)
                        prof.sec[prof.stack[prof.depth - 1]] += t - prof.start[prof.depth - 1];
                prof.stack[prof.depth] = slot;
                prof.start[prof.depth++] = t;
        }
        ~prof_scope()
        {
                if (!live)
                        return;
                cudaStreamSynchronize(s);
                double t = prof_now();
                int i = --prof.depth;
                prof.sec[prof.stack[i]] += t - prof.start[i];
                prof.n[prof.stack[i]]++;
                if (i > 0)
                        prof.start[i - 1] = t;
        }
};

/* convolutions by shape and direction (forward, backward data, backward
 * filter): the profile's second table */
#define PR_SHAPES 512
static struct {
        uint64_t key;
        char desc[112];
        double sec[3];
        long n[3];
} prof_shape[PR_SHAPES];
static int prof_nshapes;

struct prof_conv {
        cudaStream_t s;
        int slot, dir;
        double t0;
        prof_conv(cudaStream_t stream, const struct bd_conv_desc *d, const struct bd_tensor *x,
                  const struct bd_tensor *w, int direction)
                : s(stream), slot(-1), dir(direction), t0(0)
        {
                if (!prof.on)
                        return;
                uint64_t key = bd_hash_tensor(w, bd_hash_tensor(x, bd_hash(d, sizeof(*d), BD_HASH_INIT)));
                for (int i = 0; i < prof_nshapes && slot < 0; i++)
                        if (prof_shape[i].key == key)
                                slot = i;
                if (slot < 0 && prof_nshapes < PR_SHAPES) {
                        slot = prof_nshapes++;
                        prof_shape[slot].key = key;
                        snprintf(prof_shape[slot].desc, sizeof(prof_shape[slot].desc),
                                 "%s x %lldx%lldx%lldx%lld w %lldx%lldx%lldx%lld s%lld%s", bd_dtype_name(x->dtype),
                                 (long long)x->dims[0], (long long)x->dims[1], (long long)x->dims[2],
                                 (long long)x->dims[3], (long long)w->dims[0], (long long)w->dims[1],
                                 (long long)w->dims[2], (long long)w->dims[3], (long long)d->sh,
                                 d->transposed ? " transposed" : "");
                }
                if (slot < 0)
                        return;
                cudaStreamSynchronize(s);
                t0 = prof_now();
        }
        ~prof_conv()
        {
                if (slot < 0)
                        return;
                cudaStreamSynchronize(s);
                prof_shape[slot].sec[dir] += prof_now() - t0;
                prof_shape[slot].n[dir]++;
        }
};

static const char *kernel_name(int k)
{
        static const char *const names[] = {
#define BD_X(name, args) #name,
                BD_FLAT_KERNELS(BD_X) "", BD_4D_KERNELS(BD_X) BD_CHAN_KERNELS(BD_X)
#undef BD_X
                "cast",
        };
        return k >= 0 && k < (int)(sizeof(names) / sizeof(names[0])) ? names[k] : "?";
}

static void prof_write(void)
{
        if (!prof.on)
                return;
        FILE *f = fopen(prof.path, "a");
        if (!f)
                return;
        double total = 0;
        for (int i = 0; i < PR_SLOTS; i++)
                total += prof.sec[i];
        fprintf(f, "# cuda profile: %.3f s in backend operations (stream drained around each)\n", total);
        for (;;) {      /* largest first */
                int best = -1;
                for (int i = 0; i < PR_SLOTS; i++)
                        if (prof.n[i] > 0 && (best < 0 || prof.sec[i] > prof.sec[best]))
                                best = i;
                if (best < 0)
                        break;
                char name[64];
                if (best < PR_ELEM)
                        snprintf(name, sizeof(name), "%s", prof_names[best]);
                else
                        snprintf(name, sizeof(name), "elem %s", kernel_name(best - PR_ELEM));
                fprintf(f, "%-28s %8ld calls %10.3f ms %6.1f%%\n", name, prof.n[best], prof.sec[best] * 1e3,
                        total > 0 ? 100 * prof.sec[best] / total : 0.0);
                prof.n[best] = 0;
        }
        fprintf(f, "# convolutions by shape, the slowest first: forward, backward data, backward filter\n");
        for (int shown = 0; shown < 25; shown++) {
                int best = -1;
                double bt = 0;
                for (int i = 0; i < prof_nshapes; i++) {
                        double t = prof_shape[i].sec[0] + prof_shape[i].sec[1] + prof_shape[i].sec[2];
                        if (prof_shape[i].key && (best < 0 || t > bt))
                                best = i, bt = t;
                }
                if (best < 0)
                        break;
                fprintf(f, "%-64s %5ld x %8.3f %8.3f %8.3f ms\n", prof_shape[best].desc, prof_shape[best].n[0],
                        prof_shape[best].sec[0] * 1e3, prof_shape[best].sec[1] * 1e3, prof_shape[best].sec[2] * 1e3);
                prof_shape[best].key = 0;
        }
        prof_nshapes = 0;
        fclose(f);
        memset(prof.sec, 0, sizeof(prof.sec));
}


static const char *dnn_str(cudnnStatus_t s)
{
        return cudnnGetErrorString(s);
}

#define CU(call)                                                                                         \
        do {                                                                                             \
                cudaError_t _e = (call);                                                                 \
                if (_e != cudaSuccess) {                                                                 \
                        (void)cudaGetLastError(); /* not left for the next call to report */            \
                        return bd_err_set(&be->err, -EIO, "cuda: %s:%d: %s: %s", __FILE__, __LINE__, #call, \
                                          cudaGetErrorString(_e));                                       \
                }                                                                                        \
        } while (0)
#define DNN(call)                                                                                        \
        do {                                                                                             \
                cudnnStatus_t _s = (call);                                                               \
                if (_s != CUDNN_STATUS_SUCCESS)                                                          \
                        return bd_err_set(&be->err, -EIO, "cudnn: %s:%d: %s: %s", __FILE__, __LINE__, #call, \
                                          dnn_str(_s));                                                  \
        } while (0)
#define BLAS(call)                                                                                       \
        do {                                                                                             \
                cublasStatus_t _b = (call);                                                              \
                if (_b != CUBLAS_STATUS_SUCCESS)                                                         \
                        return bd_err_set(&be->err, -EIO, "cublas: %s:%d: %s: status %d", __FILE__, __LINE__, \
                                          #call, (int)_b);                                               \
        } while (0)

static struct cuda_impl *IM(struct bd_backend *be)
{
        return (struct cuda_impl *)be->impl;
}

static int grid_for(int64_t n)
{
        int64_t b = (n + THREADS - 1) / THREADS;
        return (int)(b < 1 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : b);
}

/* ---- element launches -------------------------------------------------------- */

static int cuda_elem(struct bd_backend *be, enum bd_kernel k, enum bd_dtype dt, int64_t n, const void *vargs)
{
        prof_scope ps_(IM(be)->stream, PR_ELEM + (int)k);
        cudaStream_t s = IM(be)->stream;
        int g = grid_for(n);
        if (k == BD_K_cast) {
                kf_cast<<<g, THREADS, 0, s>>>(n, *(const struct bd_cast_args *)vargs);
                CU(cudaGetLastError());
                return 0;
        }
        int t = dt == BD_F16 ? 1 : dt == BD_BF16 ? 2 : dt == BD_F32 || dt == BD_I32 ? 0 : -1;
        if (t < 0)
                return bd_err_set(&be->err, -EINVAL, "cuda: no element functions for %s", bd_dtype_name(dt));
        switch (k) {
#define BD_X(name, args)                                                                          \
        case BD_K_##name:                                                                         \
                if (t == 0)                                                                       \
                        kf_##name##_f32<<<g, THREADS, 0, s>>>(n, *(const struct args *)vargs);     \
                else if (t == 1)                                                                  \
                        kf_##name##_f16<<<g, THREADS, 0, s>>>(n, *(const struct args *)vargs);     \
                else                                                                              \
                        kf_##name##_bf16<<<g, THREADS, 0, s>>>(n, *(const struct args *)vargs);    \
                break;
                BD_FLAT_KERNELS(BD_X)
                BD_4D_KERNELS(BD_X)
#undef BD_X
#define BD_X(name, args)                                                                          \
        case BD_K_##name:                                                                         \
                if (n < 1 || n > INT32_MAX)                                                       \
                        return bd_err_set(&be->err, -EINVAL, "cuda: %lld channels", (long long)n); \
                if (t == 0)                                                                       \
                        kc_##name##_f32<<<(int)n, THREADS, 0, s>>>(*(const struct args *)vargs);   \
                else if (t == 1)                                                                  \
                        kc_##name##_f16<<<(int)n, THREADS, 0, s>>>(*(const struct args *)vargs);   \
                else                                                                              \
                        kc_##name##_bf16<<<(int)n, THREADS, 0, s>>>(*(const struct args *)vargs);  \
                break;
                BD_CHAN_KERNELS(BD_X)
#undef BD_X
        default:
                return bd_err_set(&be->err, -EINVAL, "cuda: unknown element function %d", (int)k);
        }
        CU(cudaGetLastError());
        return 0;
}

/* the reducer's per-block partial sums into im->part */
static int reduce_parts(struct bd_backend *be, enum bd_reducer k, enum bd_dtype dt, int64_t n, const void *vargs)
{
        struct cuda_impl *im = IM(be);
        int t = dt == BD_F16 ? 1 : dt == BD_BF16 ? 2 : dt == BD_F32 ? 0 : -1;
        if (t < 0)
                return bd_err_set(&be->err, -EINVAL, "cuda: no reductions for %s", bd_dtype_name(dt));
        switch (k) {
#define BD_X(name, args)                                                                                  \
        case BD_R_##name:                                                                                 \
                if (t == 0)                                                                               \
                        kr_##name##_f32<<<RBLOCKS, THREADS, 0, im->stream>>>(n, *(const struct args *)vargs, im->part); \
                else if (t == 1)                                                                          \
                        kr_##name##_f16<<<RBLOCKS, THREADS, 0, im->stream>>>(n, *(const struct args *)vargs, im->part); \
                else                                                                                      \
                        kr_##name##_bf16<<<RBLOCKS, THREADS, 0, im->stream>>>(n, *(const struct args *)vargs, im->part); \
                break;
                BD_REDUCERS(BD_X)
#undef BD_X
        default:
                return bd_err_set(&be->err, -EINVAL, "cuda: unknown reduction %d", (int)k);
        }
        CU(cudaGetLastError());
        return 0;
}

/* the partials' sum, in one order on the host and on the device: the read
 * back and the accumulated value agree bit for bit */
__host__ __device__ static double sum_parts(const double *part)
{
        double s = 0;
        for (int i = 0; i < RBLOCKS; i++)
                s += part[i];
        return s;
}

__global__ void k_reduce_finish(const double *part, double *dst)
{
        *dst = sum_parts(part);
}

/* the sum read back into *ret (waiting), or into *dst on the device (not) */
static int reduce_to(struct bd_backend *be, enum bd_reducer k, enum bd_dtype dt, int64_t n, const void *vargs,
                     double *ret, double *dst)
{
        prof_scope ps_(IM(be)->stream, PR_REDUCE);
        struct cuda_impl *im = IM(be);
        int r = reduce_parts(be, k, dt, n, vargs);
        if (r < 0)
                return r;
        if (dst) {
                k_reduce_finish<<<1, 1, 0, im->stream>>>(im->part, dst);
                CU(cudaGetLastError());
                return 0;
        }
        CU(cudaMemcpyAsync(im->hpart, im->part, RBLOCKS * sizeof(double), cudaMemcpyDeviceToHost, im->stream));
        CU(cudaStreamSynchronize(im->stream));
        *ret = sum_parts(im->hpart);
        return 0;
}

static int cuda_reduce(struct bd_backend *be, enum bd_reducer k, enum bd_dtype dt, int64_t n, const void *vargs,
                       double *ret)
{
        return reduce_to(be, k, dt, n, vargs, ret, NULL);
}

static int cuda_reduce_to(struct bd_backend *be, enum bd_reducer k, enum bd_dtype dt, int64_t n, const void *vargs,
                          double *dst)
{
        return reduce_to(be, k, dt, n, vargs, NULL, dst);
}

/* ---- memory ------------------------------------------------------------------- */

static void *cuda_alloc(struct bd_backend *be, size_t bytes)
{
        void *p = NULL;
        if (cudaMalloc(&p, bytes ? bytes : 256) != cudaSuccess)
                return NULL;
        return p;
}

static void cuda_free(struct bd_backend *be, void *p)
{
        cudaFree(p);
}

static int cuda_copy(struct bd_backend *be, void *dst, enum bd_device ddev, const void *src, enum bd_device sdev,
                     size_t bytes)
{
        prof_scope ps_(IM(be)->stream, PR_COPY);
        if (!bytes || dst == src)
                return 0;
        CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, IM(be)->stream));
        if (ddev == BD_CPU || sdev == BD_CPU)
                CU(cudaStreamSynchronize(IM(be)->stream));
        return 0;
}

static int cuda_sync(struct bd_backend *be)
{
        CU(cudaStreamSynchronize(IM(be)->stream));
        return 0;
}

static enum bd_layout cuda_pref_layout(struct bd_backend *be, int64_t C, enum bd_dtype dt)
{
        return dt == BD_F16 || dt == BD_BF16 ? BD_NHWC : BD_NCHW;
}

static int workspace(struct bd_backend *be, size_t bytes)
{
        struct cuda_impl *im = IM(be);
        if (bytes <= im->ws_cap)
                return 0;
        CU(cudaStreamSynchronize(im->stream));
        if (im->ws)
                cudaFree(im->ws);
        im->ws = NULL;
        im->ws_cap = 0;
        CU(cudaMalloc(&im->ws, bytes));
        im->ws_cap = bytes;
        return 0;
}

/* a device vector of n ones in float32 followed by n in float16 */
static int ones(struct bd_backend *be, int64_t n, const void **f32, const void **f16)
{
        struct cuda_impl *im = IM(be);
        if (n > im->nones) {
                CU(cudaStreamSynchronize(im->stream));
                if (im->ones)
                        cudaFree(im->ones);
                im->ones = NULL;
                CU(cudaMalloc(&im->ones, (size_t)n * 6));
                struct bd_fill_args a1 = { im->ones, 1.0 };
                struct bd_fill_args a2 = { (char *)im->ones + (size_t)n * 4, 1.0 };
                int r;
                if ((r = cuda_elem(be, BD_K_fill, BD_F32, n, &a1)) < 0 || (r = cuda_elem(be, BD_K_fill, BD_F16, n, &a2)) < 0)
                        return r;
                im->nones = n;
        }
        *f32 = im->ones;
        *f16 = (const char *)im->ones + (size_t)im->nones * 4;
        return 0;
}

/* ---- descriptors ------------------------------------------------------------ */

static int dnn_type(struct bd_backend *be, enum bd_dtype dt, cudnnDataType_t *ret)
{
        switch (dt) {
        case BD_F32: *ret = CUDNN_DATA_FLOAT; return 0;
        case BD_F16: *ret = CUDNN_DATA_HALF; return 0;
        case BD_BF16: *ret = CUDNN_DATA_BFLOAT16; return 0;
        default: return bd_err_set(&be->err, -EINVAL, "cuda: %s tensors are not supported", bd_dtype_name(dt));
        }
}

static int tensor_desc(struct bd_backend *be, const struct bd_tensor *t, cudnnTensorDescriptor_t *ret)
{
        cudnnDataType_t ty = CUDNN_DATA_FLOAT;
        int r;
        if ((r = dnn_type(be, t->dtype, &ty)) < 0)
                return r;
        if (t->ndim != 4 || (t->layout != BD_NCHW && t->layout != BD_NHWC))
                return bd_err_set(&be->err, -EINVAL, "cuda: feature maps must be nchw or nhwc (nchw8c is CPU-only)");
        DNN(cudnnCreateTensorDescriptor(ret));
        DNN(cudnnSetTensor4dDescriptor(*ret, t->layout == BD_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, ty,
                                       (int)t->dims[0], (int)t->dims[1], (int)t->dims[2], (int)t->dims[3]));
        return 0;
}

/* ---- convolution ------------------------------------------------------------------ */

enum { P_CONV, P_BN, P_POOL, P_FC };

struct cplan {
        int kind;
        /* convolution: "big" is a normal convolution's input (a transposed one's
         * output), "small" the other side; weights (small C, big C / g, kh, kw) */
        cudnnTensorDescriptor_t big, small, bias;
        cudnnFilterDescriptor_t filt;
        cudnnConvolutionDescriptor_t conv;
        cudnnConvolutionFwdAlgo_t fa;
        cudnnConvolutionBwdDataAlgo_t da;
        cudnnConvolutionBwdFilterAlgo_t wa;
        size_t fws, dws, wws;
        int algos_final;                /* conv_algos() has nothing better to offer */
        int transposed;
        enum bd_dtype dt;               /* activations */
        /* mixed precision: half weights (NHWC filter for convolutions) */
        void *wh, *dwh;
        size_t wn;
        uint64_t wver;
        int wvalid;
        /* batch norm, pooling */
        cudnnTensorDescriptor_t x, y, sb;
        cudnnPoolingDescriptor_t pool;
        cudnnBatchNormMode_t bnmode;
        int bnex;                       /* the Ex functions, with these sizes: */
        size_t bn_fws, bn_bws, bn_rs;   /* forward and backward workspace, reserve space */
};

/* The backend's scratch of at least bytes, for values one operation makes
 * and the next library call on the stream consumes (batch norm backward: the
 * gradient through the fused ReLU); kept, so no allocation or wait once the
 * shapes are seen. */
static int scratch(struct bd_backend *be, size_t bytes, void **ret)
{
        struct cuda_impl *im = IM(be);
        if (bytes > im->scr_cap) {
                CU(cudaStreamSynchronize(im->stream));
                if (im->scr)
                        cudaFree(im->scr);
                im->scr = NULL;
                im->scr_cap = 0;
                CU(cudaMalloc(&im->scr, bytes));
                im->scr_cap = bytes;
        }
        *ret = im->scr;
        return 0;
}

static void cuda_plan_free(struct bd_backend *be, void *vp)
{
        struct cplan *p = (struct cplan *)vp;
        if (!p)
                return;
        cudaStreamSynchronize(IM(be)->stream);
        cudnnTensorDescriptor_t ts[] = { p->big, p->small, p->bias, p->x, p->y, p->sb };
        for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
                if (ts[i])
                        cudnnDestroyTensorDescriptor(ts[i]);
        if (p->filt)
                cudnnDestroyFilterDescriptor(p->filt);
        if (p->conv)
                cudnnDestroyConvolutionDescriptor(p->conv);
        if (p->pool)
                cudnnDestroyPoolingDescriptor(p->pool);
        if (p->wh)
                cudaFree(p->wh);
        if (p->dwh)
                cudaFree(p->dwh);
        free(p);
}

static int is_half(enum bd_dtype dt)
{
        return dt == BD_F16 || dt == BD_BF16;
}

/* The heuristics' choice: for each direction the first algorithm that
 * supports this convolution (a heuristic's list can start with one that does
 * not, as for 3 input channels in half precision), says its workspace and
 * fits the limit. */
static int algos_heuristic(struct bd_backend *be, struct cplan *p, struct algo_choice *c)
{
        struct cuda_impl *im = IM(be);
        int nf = 0, nd = 0, nw = 0, i;
        cudnnConvolutionFwdAlgoPerf_t fp[8];
        cudnnConvolutionBwdDataAlgoPerf_t dp[8];
        cudnnConvolutionBwdFilterAlgoPerf_t wp[8];
        cudnnStatus_t s;
        if ((s = cudnnGetConvolutionForwardAlgorithm_v7(im->dnn, p->big, p->filt, p->conv, p->small, 8, &nf, fp)) !=
                    CUDNN_STATUS_SUCCESS ||
            (s = cudnnGetConvolutionBackwardDataAlgorithm_v7(im->dnn, p->filt, p->small, p->conv, p->big, 8, &nd, dp)) !=
                    CUDNN_STATUS_SUCCESS ||
            (s = cudnnGetConvolutionBackwardFilterAlgorithm_v7(im->dnn, p->big, p->small, p->conv, p->filt, 8, &nw,
                                                               wp)) != CUDNN_STATUS_SUCCESS)
                return bd_err_set(&be->err, -EIO, "cudnn: convolution heuristics: %s", dnn_str(s));
        for (i = 0; i < nf; i++)
                if (fp[i].status == CUDNN_STATUS_SUCCESS &&
                    cudnnGetConvolutionForwardWorkspaceSize(im->dnn, p->big, p->filt, p->conv, p->small, fp[i].algo,
                                                            &c->fws) == CUDNN_STATUS_SUCCESS &&
                    c->fws <= im->ws_limit)
                        break;
        if (i == nf)
                return bd_err_set(&be->err, -EIO, "cudnn: no forward convolution algorithm of %d within %zu MiB", nf,
                                  im->ws_limit >> 20);
        c->fa = fp[i].algo;
        for (i = 0; i < nd; i++)
                if (dp[i].status == CUDNN_STATUS_SUCCESS &&
                    cudnnGetConvolutionBackwardDataWorkspaceSize(im->dnn, p->filt, p->small, p->conv, p->big, dp[i].algo,
                                                                 &c->dws) == CUDNN_STATUS_SUCCESS &&
                    c->dws <= im->ws_limit)
                        break;
        if (i == nd)
                return bd_err_set(&be->err, -EIO, "cudnn: no backward data convolution algorithm of %d within %zu MiB",
                                  nd, im->ws_limit >> 20);
        c->da = dp[i].algo;
        for (i = 0; i < nw; i++)
                if (wp[i].status == CUDNN_STATUS_SUCCESS &&
                    cudnnGetConvolutionBackwardFilterWorkspaceSize(im->dnn, p->big, p->small, p->conv, p->filt, wp[i].algo,
                                                                   &c->wws) == CUDNN_STATUS_SUCCESS &&
                    c->wws <= im->ws_limit)
                        break;
        if (i == nw)
                return bd_err_set(&be->err, -EIO,
                                  "cudnn: no backward filter convolution algorithm of %d within %zu MiB", nw,
                                  im->ws_limit >> 20);
        c->wa = wp[i].algo;
        return 0;
}

/* Float32 without TF32 takes no tensor-op timing (the results must compare
 * with the CPU's, and the descriptor's FMA math is what runs); otherwise any
 * math the descriptor allows. */
static int math_ok(const struct cuda_impl *im, const struct cplan *p, cudnnMathType_t m)
{
        return is_half(p->dt) || im->tf32 || (m != CUDNN_TENSOR_OP_MATH && m != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
}

/* The measured choice (what cudnn.benchmark does): cuDNN times every
 * algorithm on buffers of its own, the fastest that succeeded within the
 * workspace limit is taken.  0 when each direction found one. */
static int algos_find(struct bd_backend *be, struct cplan *p, struct algo_choice *c)
{
        struct cuda_impl *im = IM(be);
        int n = 0, i;
        cudnnConvolutionFwdAlgoPerf_t fp[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        cudnnConvolutionBwdDataAlgoPerf_t dp[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        cudnnConvolutionBwdFilterAlgoPerf_t wp[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        if (cudnnFindConvolutionForwardAlgorithm(im->dnn, p->big, p->filt, p->conv, p->small,
                                                 CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, fp) != CUDNN_STATUS_SUCCESS)
                return -1;
        for (i = 0; i < n; i++)
                if (fp[i].status == CUDNN_STATUS_SUCCESS && fp[i].memory <= im->ws_limit && math_ok(im, p, fp[i].mathType))
                        break;
        if (i == n)
                return -1;
        c->fa = fp[i].algo;
        c->fws = fp[i].memory;
        if (cudnnFindConvolutionBackwardDataAlgorithm(im->dnn, p->filt, p->small, p->conv, p->big,
                                                      CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, dp) !=
            CUDNN_STATUS_SUCCESS)
                return -1;
        for (i = 0; i < n; i++)
                if (dp[i].status == CUDNN_STATUS_SUCCESS && dp[i].memory <= im->ws_limit && math_ok(im, p, dp[i].mathType))
                        break;
        if (i == n)
                return -1;
        c->da = dp[i].algo;
        c->dws = dp[i].memory;
        if (cudnnFindConvolutionBackwardFilterAlgorithm(im->dnn, p->big, p->small, p->conv, p->filt,
                                                        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, wp) !=
            CUDNN_STATUS_SUCCESS)
                return -1;
        for (i = 0; i < n; i++)
                if (wp[i].status == CUDNN_STATUS_SUCCESS && wp[i].memory <= im->ws_limit && math_ok(im, p, wp[i].mathType))
                        break;
        if (i == n)
                return -1;
        c->wa = wp[i].algo;
        c->wws = wp[i].memory;
        return 0;
}

/* A convolution's shape without its batch size, its types and the math
 * allowed: layers and batches of one such shape share their algorithms (a
 * head applied to a varying number of regions is measured once, not once per
 * count).  The fields are hashed one by one (no struct padding), so the key
 * is the same in every run and names the shape in BD_CUDA_ALGO_CACHE's file. */
static uint64_t shape_key(const struct cuda_impl *im, const struct bd_conv_desc *d, const struct bd_tensor *x,
                          const struct bd_tensor *w, const struct bd_tensor *y)
{
        int64_t v[16 + 3 * (3 + BD_MAX_DIMS)];
        size_t n = 0;
        int64_t f[] = { d->kh, d->kw, d->sh, d->sw, d->ph, d->pw, d->dh, d->dw, d->groups, d->transposed, im->tf32 };
        for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
                v[n++] = f[i];
        const struct bd_tensor *t[3] = { x, w, y };
        for (int i = 0; i < 3; i++) {
                v[n++] = t[i]->ndim, v[n++] = (int64_t)t[i]->dtype, v[n++] = (int64_t)t[i]->layout;
                for (int k = i != 1; k < t[i]->ndim; k++)
                        v[n++] = t[i]->dims[k];
        }
        return bd_hash(v, n * sizeof(v[0]), BD_HASH_INIT ^ 0xd15c);
}

/* c's algorithms for p's shape when each supports it within the limit */
static void plan_take(struct cplan *p, const struct algo_choice *c)
{
        p->fa = c->fa, p->da = c->da, p->wa = c->wa;
        p->fws = c->fws, p->dws = c->dws, p->wws = c->wws;
}

static int algos_fit(struct bd_backend *be, struct cplan *p, const struct algo_choice *c)
{
        struct cuda_impl *im = IM(be);
        struct algo_choice here = *c;   /* this batch size's workspaces */
        if (cudnnGetConvolutionForwardWorkspaceSize(im->dnn, p->big, p->filt, p->conv, p->small, c->fa, &here.fws) !=
                    CUDNN_STATUS_SUCCESS ||
            cudnnGetConvolutionBackwardDataWorkspaceSize(im->dnn, p->filt, p->small, p->conv, p->big, c->da,
                                                         &here.dws) != CUDNN_STATUS_SUCCESS ||
            cudnnGetConvolutionBackwardFilterWorkspaceSize(im->dnn, p->big, p->small, p->conv, p->filt, c->wa,
                                                           &here.wws) != CUDNN_STATUS_SUCCESS ||
            here.fws > im->ws_limit || here.dws > im->ws_limit || here.wws > im->ws_limit)
                return 0;
        plan_take(p, &here);
        return 1;
}

/* A convolution's algorithms.  By default measured (BD_CUDA_CONV_ALGO=find):
 * a shape seen for the first time runs with the heuristics' choice, and when
 * it comes again (another layer, the next step) cuDNN times the candidates
 * once and the fastest is kept for the run, for every batch size of the
 * shape; a shape seen once (a region count that never repeats) is not worth
 * the timing.  BD_CUDA_CONV_ALGO=heuristic: the heuristics' choice only.
 * The heuristics also take over wherever measuring fails or a measured
 * choice does not fit another batch size. */
static int conv_algos(struct bd_backend *be, uint64_t skey, struct cplan *p, int count)
{
        struct cuda_impl *im = IM(be);
        struct algo_choice *e = NULL;
        for (size_t i = 0; i < im->nalgos && !e; i++)
                if (im->algos[i].key == skey)
                        e = &im->algos[i];
        if (!e) {
                struct algo_choice c;
                memset(&c, 0, sizeof(c));
                c.key = skey;
                const struct bd_algo_entry *de = im->find && im->disk_path ? bd_algo_cache_get(&im->disk, skey) : NULL;
                c.fa = de ? (cudnnConvolutionFwdAlgo_t)de->fwd : c.fa;
                c.da = de ? (cudnnConvolutionBwdDataAlgo_t)de->bwd_data : c.da;
                c.wa = de ? (cudnnConvolutionBwdFilterAlgo_t)de->bwd_filter : c.wa;
                if (de && algos_fit(be, p, &c)) {
                        /* an earlier run's measurement that cuDNN supports here */
                        c.fws = p->fws, c.dws = p->dws, c.wws = p->wws;
                        c.measured = 1;
                } else {
                        int r = algos_heuristic(be, p, &c);
                        if (r < 0)
                                return r;
                        c.measured = !im->find;
                }
                c.seen = count ? 1 : 0;
                if (im->nalgos == im->algos_cap) {
                        im->algos_cap = im->algos_cap ? 2 * im->algos_cap : 64;
                        im->algos = (struct algo_choice *)xrealloc(im->algos, im->algos_cap * sizeof(*im->algos));
                }
                im->algos[im->nalgos++] = c;
                plan_take(p, &c);
                p->algos_final = c.measured;
                return 0;
        }
        if (!e->measured && count && ++e->seen >= 2) {
                prof_scope ps(im->stream, PR_CONV_PLAN);
                /* the timing runs on cuDNN's handle stream: nothing of ours
                 * may be pending (an error of earlier work is reported here,
                 * not taken for a failed measurement) */
                CU(cudaStreamSynchronize(im->stream));
                struct algo_choice c = *e;
                if (algos_find(be, p, &c) == 0) {
                        *e = c;
                        if (im->disk_path)
                                (void)bd_algo_cache_set(&im->disk, skey, (int)c.fa, (int)c.da, (int)c.wa);
                }
                (void)cudaGetLastError();       /* a failed find's own: the heuristics stay */
                e->measured = 1;        /* a failed measurement is not repeated */
        }
        p->algos_final = e->measured;
        if (algos_fit(be, p, e))
                return 0;
        struct algo_choice c;
        memset(&c, 0, sizeof(c));
        int r = algos_heuristic(be, p, &c);
        if (r < 0)
                return r;
        plan_take(p, &c);
        return 0;
}

/* fwd: called by a forward, which is what counts as meeting the shape again
 * (a layer's own backward is not another sighting) */
static int conv_plan(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *y, int fwd,
                     struct cplan **ret)
{
        uint64_t key = bd_hash(d, sizeof(*d), BD_HASH_INIT);
        key = bd_hash_tensor(y, bd_hash_tensor(w, bd_hash_tensor(x, key)));
        struct cplan *p = (struct cplan *)bd_plan_find(pc, key);
        int r;
        if (p) {
                if (!p->algos_final && (r = conv_algos(be, shape_key(IM(be), d, x, w, y), p, fwd)) < 0)
                        return r;
                *ret = p;
                return 0;
        }
        struct cuda_impl *im = IM(be);
        p = (struct cplan *)xcalloc(1, sizeof(*p));
        p->kind = P_CONV;
        p->transposed = d->transposed;
        p->dt = x->dtype;
        const struct bd_tensor *bigt = d->transposed ? y : x, *smallt = d->transposed ? x : y;
        cudnnDataType_t ty = CUDNN_DATA_FLOAT, cty = CUDNN_DATA_FLOAT;
        if ((r = dnn_type(be, x->dtype, &ty)) < 0 || (r = tensor_desc(be, bigt, &p->big)) < 0 ||
            (r = tensor_desc(be, smallt, &p->small)) < 0)
                goto fail;
        {
                int G = (int)d->groups;
                int K = (int)w->dims[0], C = (int)w->dims[1];  /* (small C, big C / g) for both directions */
                cudnnTensorFormat_t ff = is_half(x->dtype) ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
                cudnnStatus_t s;
                if ((s = cudnnCreateFilterDescriptor(&p->filt)) != CUDNN_STATUS_SUCCESS ||
                    (s = cudnnSetFilter4dDescriptor(p->filt, ty, ff, K, C, (int)d->kh, (int)d->kw)) != CUDNN_STATUS_SUCCESS ||
                    (s = cudnnCreateConvolutionDescriptor(&p->conv)) != CUDNN_STATUS_SUCCESS ||
                    (s = cudnnSetConvolution2dDescriptor(p->conv, (int)d->ph, (int)d->pw, (int)d->sh, (int)d->sw,
                                                         (int)d->dh, (int)d->dw, CUDNN_CROSS_CORRELATION, cty)) !=
                            CUDNN_STATUS_SUCCESS ||
                    (s = cudnnSetConvolutionGroupCount(p->conv, G)) != CUDNN_STATUS_SUCCESS ||
                    (s = cudnnSetConvolutionMathType(p->conv, is_half(x->dtype) ? CUDNN_TENSOR_OP_MATH
                                                              : im->tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH)) !=
                            CUDNN_STATUS_SUCCESS) {
                        r = bd_err_set(&be->err, -EIO, "cudnn: convolution descriptor: %s", dnn_str(s));
                        goto fail;
                }
                if ((r = conv_algos(be, shape_key(im, d, x, w, y), p, fwd)) < 0)
                        goto fail;
                p->wn = (size_t)K * C * d->kh * d->kw;
        }
        bd_plan_put(be, pc, key, p);
        *ret = p;
        return 0;
fail:
        cuda_plan_free(be, p);
        return r;
}

/* the weights in the plan's element type and filter layout */
static int conv_weights(struct bd_backend *be, struct cplan *p, const struct bd_tensor *w, uint64_t ver,
                        const void **ret)
{
        if (!is_half(p->dt)) {
                *ret = w->data;
                return 0;
        }
        size_t es = bd_dtype_size(p->dt);
        if (!p->wh) {
                CU(cudaMalloc(&p->wh, p->wn * es));
                CU(cudaMalloc(&p->dwh, 2 * p->wn * es));
        }
        if (!p->wvalid || p->wver != ver) {
                /* f32 (K, C, kh, kw) -> half, then -> (K, kh, kw, C) */
                struct bd_cast_args c = { w->data, p->dwh, BD_F32, (int)p->dt, 1.0, 0 };
                int r = cuda_elem(be, BD_K_cast, BD_F32, (int64_t)p->wn, &c);
                if (r < 0)
                        return r;
                struct bd_relayout_args a;
                a.s.N = w->dims[0];
                a.s.C = w->dims[1];
                a.s.H = w->dims[2];
                a.s.W = w->dims[3];
                a.s.layout = BD_NCHW;
                a.o = a.s;
                a.o.layout = BD_NHWC;
                a.x = p->dwh;
                a.y = p->wh;
                if ((r = cuda_elem(be, BD_K_relayout, p->dt, (int64_t)p->wn, &a)) < 0)
                        return r;
                p->wver = ver;
                p->wvalid = 1;
        }
        *ret = p->wh;
        return 0;
}

/* half weight gradient (K, kh, kw, C) in p->dwh -> (+)= float32 (K, C, kh, kw) */
static int conv_wgrad_back(struct bd_backend *be, struct cplan *p, const struct bd_tensor *w, struct bd_tensor *dw,
                           int acc)
{
        struct bd_relayout_args a;
        a.s.N = w->dims[0];
        a.s.C = w->dims[1];
        a.s.H = w->dims[2];
        a.s.W = w->dims[3];
        a.s.layout = BD_NHWC;
        a.o = a.s;
        a.o.layout = BD_NCHW;
        a.x = p->dwh;
        a.y = (char *)p->dwh + p->wn * bd_dtype_size(p->dt);
        int r = cuda_elem(be, BD_K_relayout, p->dt, (int64_t)p->wn, &a);
        if (r < 0)
                return r;
        struct bd_cast_args c = { a.y, dw->data, (int)p->dt, BD_F32, 1.0, acc };
        return cuda_elem(be, BD_K_cast, BD_F32, (int64_t)p->wn, &c);
}

static int add_bias(struct bd_backend *be, const struct bd_tensor *b, struct bd_tensor *y)
{
        struct bd_affine_args a;
        memset(&a, 0, sizeof(a));
        a.s.N = y->dims[0];
        a.s.C = y->dims[1];
        a.s.H = y->dims[2];
        a.s.W = y->dims[3];
        a.s.layout = y->layout;
        a.x = y->data;
        a.y = y->data;
        a.shift = b->data;
        return cuda_elem(be, BD_K_affine, y->dtype, bd_tensor_numel(y), &a);
}

static int cuda_conv_fwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                         const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *b,
                         struct bd_tensor *y, uint64_t wver)
{
        prof_scope ps_(IM(be)->stream, PR_CONV_FWD);
        struct cuda_impl *im = IM(be);
        struct cplan *p = NULL;
        const void *wp = NULL;
        int r;
        if ((r = conv_plan(be, d, pc, x, w, y, 1, &p)) < 0 || (r = conv_weights(be, p, w, wver, &wp)) < 0)
                return r;
        float one = 1.0f, zero = 0.0f;
        prof_conv pc_(im->stream, d, x, w, d->transposed ? 1 : 0);
        if (!d->transposed) {
                if ((r = workspace(be, p->fws)) < 0)
                        return r;
                DNN(cudnnConvolutionForward(im->dnn, &one, p->big, x->data, p->filt, wp, p->conv, p->fa, im->ws, p->fws,
                                            &zero, p->small, y->data));
        } else {
                if ((r = workspace(be, p->dws)) < 0)
                        return r;
                DNN(cudnnConvolutionBackwardData(im->dnn, &one, p->filt, wp, p->small, x->data, p->conv, p->da, im->ws,
                                                 p->dws, &zero, p->big, y->data));
        }
        return b ? add_bias(be, b, y) : 0;
}

/* bias gradient: per-channel sum of dy, into db (f32) */
static int bias_grad(struct bd_backend *be, struct cplan *p, const struct bd_tensor *dy, struct bd_tensor *db, int acc)
{
        prof_scope ps_(IM(be)->stream, PR_CONV_BIAS);
        struct cuda_impl *im = IM(be);
        cudnnTensorDescriptor_t bd;
        float one = 1.0f, beta = acc ? 1.0f : 0.0f;
        cudnnDataType_t ty = CUDNN_DATA_FLOAT;
        int r;
        if ((r = dnn_type(be, dy->dtype, &ty)) < 0)
                return r;
        const cudnnTensorDescriptor_t dyd = p->transposed ? p->big : p->small;
        DNN(cudnnCreateTensorDescriptor(&bd));
        if (!is_half(dy->dtype)) {
                cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, (int)dy->dims[1], 1, 1);
                cudnnStatus_t s = cudnnConvolutionBackwardBias(im->dnn, &one, dyd, dy->data, &beta, bd, db->data);
                cudnnDestroyTensorDescriptor(bd);
                DNN(s);
                return 0;
        }
        /* half: a half result, converted into the float32 gradient */
        void *tmp = (char *)p->dwh;     /* at least C halves: weights hold K C kh kw >= C values */
        cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NHWC, ty, 1, (int)dy->dims[1], 1, 1);
        float zero = 0.0f;
        cudnnStatus_t s = cudnnConvolutionBackwardBias(im->dnn, &one, dyd, dy->data, &zero, bd, tmp);
        cudnnDestroyTensorDescriptor(bd);
        DNN(s);
        struct bd_cast_args c = { tmp, db->data, (int)dy->dtype, BD_F32, 1.0, acc };
        return cuda_elem(be, BD_K_cast, BD_F32, dy->dims[1], &c);
}

static int cuda_conv_bwd(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                         const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *dy,
                         struct bd_tensor *dx, struct bd_tensor *dw, struct bd_tensor *db, unsigned flags,
                         uint64_t wver)
{
        struct cuda_impl *im = IM(be);
        struct cplan *p = NULL;
        const void *wp = NULL;
        int r, accw = (flags & BD_ACC_DW) != 0;
        if ((r = conv_plan(be, d, pc, x, w, dy, 0, &p)) < 0 || (r = conv_weights(be, p, w, wver, &wp)) < 0)
                return r;
        float one = 1.0f, zero = 0.0f, bx = (flags & BD_ACC_DX) ? 1.0f : 0.0f, bw = accw ? 1.0f : 0.0f;
        /* weights: (big, dsmall) */
        if (dw) {
                prof_scope ps_(im->stream, PR_CONV_BWD_FILTER);
                prof_conv pc_(im->stream, d, x, w, 2);
                const void *bigp = d->transposed ? dy->data : x->data, *smallp = d->transposed ? x->data : dy->data;
                if ((r = workspace(be, p->wws)) < 0)
                        return r;
                if (!is_half(p->dt)) {
                        DNN(cudnnConvolutionBackwardFilter(im->dnn, &one, p->big, bigp, p->small, smallp, p->conv, p->wa,
                                                           im->ws, p->wws, &bw, p->filt, dw->data));
                } else {
                        DNN(cudnnConvolutionBackwardFilter(im->dnn, &one, p->big, bigp, p->small, smallp, p->conv, p->wa,
                                                           im->ws, p->wws, &zero, p->filt, p->dwh));
                        if ((r = conv_wgrad_back(be, p, w, dw, accw)) < 0)
                                return r;
                }
        }
        if (db && (r = bias_grad(be, p, dy, db, accw)) < 0)
                return r;
        if (dx) {
                prof_scope ps_(im->stream, PR_CONV_BWD_DATA);
                prof_conv pc_(im->stream, d, x, w, d->transposed ? 0 : 1);
                if (!d->transposed) {
                        if ((r = workspace(be, p->dws)) < 0)
                                return r;
                        DNN(cudnnConvolutionBackwardData(im->dnn, &one, p->filt, wp, p->small, dy->data, p->conv, p->da,
                                                         im->ws, p->dws, &bx, p->big, dx->data));
                } else {
                        if ((r = workspace(be, p->fws)) < 0)
                                return r;
                        DNN(cudnnConvolutionForward(im->dnn, &one, p->big, dy->data, p->filt, wp, p->conv, p->fa, im->ws,
                                                    p->fws, &bx, p->small, dx->data));
                }
        }
        return 0;
}

/* ---- batch norm (training) ---------------------------------------------------------- */

static int64_t bn_reserve_offset(int64_t C)
{
        return (C * 4 + 255) / 256 * 256;
}

static int bn_plan(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x, struct cplan **ret)
{
        uint64_t key = bd_hash_tensor(x, BD_HASH_INIT ^ 0xb);
        struct cplan *p = (struct cplan *)bd_plan_find(pc, key);
        if (p) {
                *ret = p;
                return 0;
        }
        p = (struct cplan *)xcalloc(1, sizeof(*p));
        p->kind = P_BN;
        p->dt = x->dtype;
        /* half precision in NHWC has cuDNN's persistent kernels (what
         * PyTorch takes for channels-last); BD_CUDA_BN=spatial turns them off */
        int nhwc_half = is_half(x->dtype) && x->layout == BD_NHWC;
        p->bnmode = nhwc_half && IM(be)->bn_mode != BN_SPATIAL ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT
                                                              : CUDNN_BATCHNORM_SPATIAL;
        p->bnex = nhwc_half && IM(be)->bn_mode == BN_EX;
        int r;
        if ((r = tensor_desc(be, x, &p->x)) < 0) {
                cuda_plan_free(be, p);
                return r;
        }
        cudnnStatus_t s;
        if ((s = cudnnCreateTensorDescriptor(&p->sb)) != CUDNN_STATUS_SUCCESS ||
            (s = cudnnDeriveBNTensorDescriptor(p->sb, p->x, p->bnmode)) != CUDNN_STATUS_SUCCESS) {
                cuda_plan_free(be, p);
                return bd_err_set(&be->err, -EIO, "cudnn: batch norm descriptor: %s", dnn_str(s));
        }
        if (p->bnex) {
                cudnnHandle_t h = IM(be)->dnn;
                if ((s = cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
                             h, p->bnmode, CUDNN_BATCHNORM_OPS_BN, p->x, NULL, p->x, p->sb, NULL, &p->bn_fws)) !=
                            CUDNN_STATUS_SUCCESS ||
                    (s = cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, p->bnmode, CUDNN_BATCHNORM_OPS_BN, p->x,
                                                                           p->x, p->x, NULL, p->x, p->sb, NULL,
                                                                           &p->bn_bws)) != CUDNN_STATUS_SUCCESS ||
                    (s = cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, p->bnmode, CUDNN_BATCHNORM_OPS_BN,
                                                                              NULL, p->x, &p->bn_rs)) !=
                            CUDNN_STATUS_SUCCESS) {
                        cuda_plan_free(be, p);
                        return bd_err_set(&be->err, -EIO, "cudnn: batch norm sizes: %s", dnn_str(s));
                }
        }
        bd_plan_put(be, pc, key, p);
        *ret = p;
        return 0;
}

static int relu_inplace(struct bd_backend *be, struct bd_tensor *y)
{
        struct bd_relu_args a = { y->data, y->data };
        return cuda_elem(be, BD_K_relu_fwd, y->dtype, bd_tensor_numel(y), &a);
}

static int cuda_bn_fwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                       const struct bd_tensor *gamma, const struct bd_tensor *beta, struct bd_tensor *y,
                       struct bd_tensor *mean, struct bd_tensor *var, struct bd_tensor *ws)
{
        prof_scope ps_(IM(be)->stream, PR_BN_FWD);
        struct cuda_impl *im = IM(be);
        struct cplan *p = NULL;
        int r;
        if ((r = bn_plan(be, pc, x, &p)) < 0)
                return r;
        /* ws: the saved 1/std (C floats), then from a 256-byte boundary the
         * Ex functions' reserve space */
        int64_t C = gamma->dims[0], off = bn_reserve_offset(C), nws = off / 4 + (int64_t)(p->bn_rs + 3) / 4;
        if ((r = bd_tensor_resize(be, ws, BD_F32, BD_NCHW, 1, &nws)) < 0)
                return r;
        float one = 1.0f, zero = 0.0f;
        double e = eps < CUDNN_BN_MIN_EPSILON ? CUDNN_BN_MIN_EPSILON : eps;
        /* no running averages here (ops.c updates them); saved mean and 1/std */
        if (p->bnex) {
                if ((r = workspace(be, p->bn_fws)) < 0)
                        return r;
                DNN(cudnnBatchNormalizationForwardTrainingEx(im->dnn, p->bnmode, CUDNN_BATCHNORM_OPS_BN, &one, &zero,
                                                             p->x, x->data, NULL, NULL, p->x, y->data, p->sb,
                                                             gamma->data, beta->data, 0.0, NULL, NULL, e, mean->data,
                                                             ws->data, NULL, im->ws, p->bn_fws,
                                                             p->bn_rs ? (char *)ws->data + off : NULL, p->bn_rs));
        } else {
                DNN(cudnnBatchNormalizationForwardTraining(im->dnn, p->bnmode, &one, &zero, p->x, x->data, p->x,
                                                           y->data, p->sb, gamma->data, beta->data, 0.0, NULL, NULL, e,
                                                           mean->data, ws->data));
        }
        struct bd_bn_invstd_args a = { ws->data, var->data, e };
        if ((r = cuda_elem(be, BD_K_bn_invstd, BD_F32, gamma->dims[0], &a)) < 0)
                return r;
        return relu ? relu_inplace(be, y) : 0;
}

static int cuda_bn_bwd(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                       const struct bd_tensor *y, const struct bd_tensor *dy, const struct bd_tensor *gamma,
                       const struct bd_tensor *mean, const struct bd_tensor *var, const struct bd_tensor *ws,
                       struct bd_tensor *dx, struct bd_tensor *dgamma, struct bd_tensor *dbeta, unsigned flags)
{
        prof_scope ps_(IM(be)->stream, PR_BN_BWD);
        struct cuda_impl *im = IM(be);
        struct cplan *p = NULL;
        int r;
        if ((r = bn_plan(be, pc, x, &p)) < 0)
                return r;
        if (!ws || !ws->data)
                return bd_err_set(&be->err, -EINVAL, "batch norm backward: no saved state from the forward");
        size_t C = (size_t)gamma->dims[0], gbytes = relu ? (size_t)bd_tensor_numel(dy) * bd_dtype_size(dy->dtype) : 0;
        gbytes = (gbytes + 255) & ~(size_t)255;
        void *scr = NULL;
        if ((r = scratch(be, gbytes + 2 * C * sizeof(float), &scr)) < 0)
                return r;
        const void *g = dy->data;
        if (relu) {
                struct bd_relu_bwd_args a;
                a.y = y->data;
                a.dy = dy->data;
                a.dx = scr;
                a.accumulate = 0;
                if ((r = cuda_elem(be, BD_K_relu_bwd, dy->dtype, bd_tensor_numel(dy), &a)) < 0)
                        return r;
                g = scr;
        }
        float one = 1.0f, bx = (flags & BD_ACC_DX) ? 1.0f : 0.0f, bw = (flags & BD_ACC_DW) ? 1.0f : 0.0f;
        double e = eps < CUDNN_BN_MIN_EPSILON ? CUDNN_BN_MIN_EPSILON : eps;
        /* without dgamma/dbeta cuDNN still writes them: into scratch */
        float *tmp = (float *)((char *)scr + gbytes);
        void *dg = dgamma ? dgamma->data : (void *)tmp, *dbt = dbeta ? dbeta->data : (void *)(tmp + C);
        if (p->bnex) {
                int64_t off = bn_reserve_offset(gamma->dims[0]);
                if (bd_tensor_numel(ws) * 4 < off + (int64_t)p->bn_rs)
                        return bd_err_set(&be->err, -EINVAL, "batch norm backward: the forward's state is too small");
                /* the workspace may move: the relu'd gradient is in scratch, not there */
                if ((r = workspace(be, p->bn_bws)) < 0)
                        return r;
                DNN(cudnnBatchNormalizationBackwardEx(im->dnn, p->bnmode, CUDNN_BATCHNORM_OPS_BN, &one, &bx, &one, &bw,
                                                      p->x, x->data, NULL, NULL, p->x, g, NULL, NULL, p->x, dx->data,
                                                      p->sb, gamma->data, NULL, dg, dbt, e, mean->data, ws->data, NULL,
                                                      im->ws, p->bn_bws,
                                                      p->bn_rs ? (char *)ws->data + off : NULL, p->bn_rs));
                return 0;
        }
        DNN(cudnnBatchNormalizationBackward(im->dnn, p->bnmode, &one, &bx, &one, &bw, p->x, x->data, p->x, g, p->x,
                                            dx->data, p->sb, gamma->data, dg, dbt, e, mean->data, ws->data));
        return 0;
}

/* ---- max pooling ------------------------------------------------------------------ */

static int pool_plan(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *y, struct cplan **ret)
{
        uint64_t key = bd_hash_tensor(x, bd_hash_tensor(y, bd_hash(d, sizeof(*d), BD_HASH_INIT ^ 0x9)));
        struct cplan *p = (struct cplan *)bd_plan_find(pc, key);
        if (p) {
                *ret = p;
                return 0;
        }
        p = (struct cplan *)xcalloc(1, sizeof(*p));
        p->kind = P_POOL;
        int r;
        if ((r = tensor_desc(be, x, &p->x)) < 0 || (r = tensor_desc(be, y, &p->y)) < 0) {
                cuda_plan_free(be, p);
                return r;
        }
        cudnnStatus_t s;
        if ((s = cudnnCreatePoolingDescriptor(&p->pool)) != CUDNN_STATUS_SUCCESS ||
            (s = cudnnSetPooling2dDescriptor(p->pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, (int)d->kh, (int)d->kw,
                                             (int)d->ph, (int)d->pw, (int)d->sh, (int)d->sw)) != CUDNN_STATUS_SUCCESS) {
                cuda_plan_free(be, p);
                return bd_err_set(&be->err, -EIO, "cudnn: pooling descriptor: %s", dnn_str(s));
        }
        bd_plan_put(be, pc, key, p);
        *ret = p;
        return 0;
}

static int cuda_pool_fwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                         const struct bd_tensor *x, struct bd_tensor *y, struct bd_tensor *ws)
{
        prof_scope ps_(IM(be)->stream, PR_POOL_FWD);
        struct cplan *p = NULL;
        int r;
        if ((r = pool_plan(be, d, pc, x, y, &p)) < 0)
                return r;
        float one = 1.0f, zero = 0.0f;
        DNN(cudnnPoolingForward(IM(be)->dnn, p->pool, &one, p->x, x->data, &zero, p->y, y->data));
        return 0;
}

static int cuda_pool_bwd(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                         const struct bd_tensor *x, const struct bd_tensor *y, const struct bd_tensor *dy,
                         const struct bd_tensor *ws, struct bd_tensor *dx)
{
        prof_scope ps_(IM(be)->stream, PR_POOL_BWD);
        struct cplan *p = NULL;
        int r;
        if ((r = pool_plan(be, d, pc, x, y, &p)) < 0)
                return r;
        float one = 1.0f, zero = 0.0f;
        DNN(cudnnPoolingBackward(IM(be)->dnn, p->pool, &one, p->y, y->data, p->y, dy->data, p->x, x->data, &zero, p->x,
                                 dx->data));
        return 0;
}

/* ---- fully connected (row-major data, column-major cuBLAS) ------------------------- */

static cudaDataType_t blas_type(enum bd_dtype dt)
{
        return dt == BD_F16 ? CUDA_R_16F : dt == BD_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* half copy of w kept in the plan, refreshed on a new version */
static int fc_weights(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                      const struct bd_tensor *w, uint64_t ver, const void **ret)
{
        if (!is_half(x->dtype)) {
                *ret = w->data;
                return 0;
        }
        uint64_t key = bd_hash_tensor(w, bd_hash_tensor(x, BD_HASH_INIT ^ 0xfc));
        struct cplan *p = (struct cplan *)bd_plan_find(pc, key);
        if (!p) {
                p = (struct cplan *)xcalloc(1, sizeof(*p));
                p->kind = P_FC;
                p->dt = x->dtype;
                p->wn = (size_t)bd_tensor_numel(w);
                if (cudaMalloc(&p->wh, p->wn * 2) != cudaSuccess) {
                        free(p);
                        return bd_err_set(&be->err, -ENOMEM, "cuda: out of memory for half weights");
                }
                bd_plan_put(be, pc, key, p);
        }
        if (!p->wvalid || p->wver != ver) {
                struct bd_cast_args c = { w->data, p->wh, BD_F32, (int)x->dtype, 1.0, 0 };
                int r = cuda_elem(be, BD_K_cast, BD_F32, (int64_t)p->wn, &c);
                if (r < 0)
                        return r;
                p->wver = ver;
                p->wvalid = 1;
        }
        *ret = p->wh;
        return 0;
}

static int cuda_fc_fwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                       const struct bd_tensor *w, const struct bd_tensor *b, struct bd_tensor *y, uint64_t wver)
{
        prof_scope ps_(IM(be)->stream, PR_FC_FWD);
        struct cuda_impl *im = IM(be);
        int N = (int)x->dims[0], K = (int)x->dims[1], O = (int)w->dims[0];
        const void *wp = NULL;
        int r;
        if ((r = fc_weights(be, pc, x, w, wver, &wp)) < 0)
                return r;
        float one = 1.0f, zero = 0.0f;
        cudaDataType_t t = blas_type(x->dtype);
        /* y^T (O x N) = W (O x K) x^T */
        BLAS(cublasGemmEx(im->blas, CUBLAS_OP_T, CUBLAS_OP_N, O, N, K, &one, wp, t, K, x->data, t, K, &zero, y->data, t, O,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        if (b) {
                struct bd_bias_rows_args a = { y->data, b->data, O };
                return cuda_elem(be, BD_K_bias_rows, y->dtype, (int64_t)N * O, &a);
        }
        return 0;
}

static int cuda_fc_bwd(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                       const struct bd_tensor *w, const struct bd_tensor *dy, struct bd_tensor *dx,
                       struct bd_tensor *dw, struct bd_tensor *db, unsigned flags, uint64_t wver)
{
        prof_scope ps_(IM(be)->stream, PR_FC_BWD);
        struct cuda_impl *im = IM(be);
        int N = (int)x->dims[0], K = (int)x->dims[1], O = (int)w->dims[0];
        float one = 1.0f, bw = (flags & BD_ACC_DW) ? 1.0f : 0.0f, bx = (flags & BD_ACC_DX) ? 1.0f : 0.0f;
        cudaDataType_t t = blas_type(x->dtype);
        int r;
        if (dw) /* dW^T (K x O) = x^T (K x N) dy (N x O), straight into the float32 gradient */
                BLAS(cublasGemmEx(im->blas, CUBLAS_OP_N, CUBLAS_OP_T, K, O, N, &one, x->data, t, K, dy->data, t, O, &bw,
                                  dw->data, CUDA_R_32F, K, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        if (db) {       /* db (O) = dy^T (O x N) ones (N) */
                const void *o32 = NULL, *o16 = NULL;
                if ((r = ones(be, N, &o32, &o16)) < 0)
                        return r;
                if (x->dtype == BD_BF16)
                        return bd_err_set(&be->err, -EINVAL, "cuda: bf16 fully connected bias gradients");
                BLAS(cublasGemmEx(im->blas, CUBLAS_OP_N, CUBLAS_OP_N, O, 1, N, &one, dy->data, t, O,
                                  is_half(x->dtype) ? o16 : o32, t, N, &bw, db->data, CUDA_R_32F, O, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
        }
        if (dx) {       /* dx^T (K x N) = W^T (K x O) dy^T (O x N) */
                const void *wp = NULL;
                if ((r = fc_weights(be, pc, x, w, wver, &wp)) < 0)
                        return r;
                BLAS(cublasGemmEx(im->blas, CUBLAS_OP_N, CUBLAS_OP_N, K, N, O, &one, wp, t, K, dy->data, t, O, &bx, dx->data,
                                  t, K, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        }
        return 0;
}

/* ---- the backend ------------------------------------------------------------------ */

static void cuda_destroy(struct bd_backend *be)
{
        struct cuda_impl *im = IM(be);
        if (im) {
                if (im->stream)
                        cudaStreamSynchronize(im->stream);
                if (im->ws)
                        cudaFree(im->ws);
                if (im->part)
                        cudaFree(im->part);
                if (im->hpart)
                        cudaFreeHost(im->hpart);
                if (im->ones)
                        cudaFree(im->ones);
                if (im->scr)
                        cudaFree(im->scr);
                free(im->algos);
                /* this run's measurements for the next (a write that fails
                 * loses them, nothing else: the directory was checked at the start) */
                if (im->disk_path) {
                        struct bd_err ignored;
                        (void)bd_algo_cache_save(&im->disk, im->disk_path, &ignored);
                        free(im->disk_path);
                }
                bd_algo_cache_free(&im->disk);
                prof_write();
                if (im->blas)
                        cublasDestroy(im->blas);
                if (im->dnn)
                        cudnnDestroy(im->dnn);
                if (im->stream)
                        cudaStreamDestroy(im->stream);
                free(im);
        }
        free(be);
}

static struct bd_backend_ops make_ops(void)
{
        struct bd_backend_ops o;
        memset(&o, 0, sizeof(o));
        o.name = "cuda";
        o.destroy = cuda_destroy;
        o.alloc = cuda_alloc;
        o.free = cuda_free;
        o.copy = cuda_copy;
        o.sync = cuda_sync;
        o.pref_layout = cuda_pref_layout;
        o.elem = cuda_elem;
        o.reduce = cuda_reduce;
        o.reduce_to = cuda_reduce_to;
        o.conv_fwd = cuda_conv_fwd;
        o.conv_bwd = cuda_conv_bwd;
        o.bn_fwd = cuda_bn_fwd;
        o.bn_bwd = cuda_bn_bwd;
        o.pool_fwd = cuda_pool_fwd;
        o.pool_bwd = cuda_pool_bwd;
        o.fc_fwd = cuda_fc_fwd;
        o.fc_bwd = cuda_fc_bwd;
        o.plan_free = cuda_plan_free;
        return o;
}

static const struct bd_backend_ops cuda_ops = make_ops();

int bd_cuda_device_count(const char **why)
{
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess) {
                if (!why)
                        return 0;
                *why = cudaGetErrorString(e);
                /* the runtime says "driver version is insufficient" also
                 * where there is no driver at all: say which */
                void *drv = e == cudaErrorInsufficientDriver ? dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) : NULL;
                if (e == cudaErrorInsufficientDriver && !drv && !(drv = dlopen("libcuda.so.1", RTLD_LAZY)))
                        *why = "no GPU driver: libcuda.so.1 is not on this host (in a container, the runtime brings "
                               "the host's: apptainer --nv, podman --device nvidia.com/gpu=all, docker --gpus all, "
                               "ch-fromhost --nvidia)";
                if (drv)
                        dlclose(drv);
                return 0;
        }
        if (why)
                *why = n ? "" : "no CUDA device visible";
        return n;
}

void *bd_backend_cuda_stream(struct bd_backend *be)
{
        return be && be->dev == BD_CUDA ? (void *)IM(be)->stream : NULL;
}

int bd_backend_cuda_new(int device, struct bd_backend **ret, struct bd_err *err)
{
        const char *why = "";
        int n = bd_cuda_device_count(&why);
        if (n == 0)
                return bd_err_set(err, -ENODEV, "backend cuda: %s", why);
        if (device < 0 || device >= n)
                return bd_err_set(err, -ENODEV, "backend cuda: device %d of %d", device, n);
        struct bd_backend *be = (struct bd_backend *)xcalloc(1, sizeof(*be));
        struct cuda_impl *im = (struct cuda_impl *)xcalloc(1, sizeof(*im));
        be->ops = &cuda_ops;
        be->dev = BD_CUDA;
        be->impl = im;
        be->device_id = device;
        be->nthreads = 1;
        im->device = device;
        const char *tf = getenv("BD_CUDA_TF32");
        im->tf32 = tf && *tf && strcmp(tf, "0") != 0;
        const char *algo = getenv("BD_CUDA_CONV_ALGO"), *bn = getenv("BD_CUDA_BN"), *wsl = getenv("BD_CUDA_WORKSPACE_MB");
        char *end = NULL;
        long mb = wsl && *wsl ? strtol(wsl, &end, 10) : 1024;
        if ((algo && *algo && strcmp(algo, "find") != 0 && strcmp(algo, "heuristic") != 0) ||
            (bn && *bn && strcmp(bn, "ex") != 0 && strcmp(bn, "persistent") != 0 && strcmp(bn, "spatial") != 0) ||
            (end && *end) || mb < 1 || mb > (1L << 30)) {
                free(im);
                free(be);
                return bd_err_set(err, -EINVAL,
                                  "backend cuda: BD_CUDA_CONV_ALGO is find or heuristic, BD_CUDA_BN ex, persistent "
                                  "or spatial, BD_CUDA_WORKSPACE_MB a number of MiB (%s, %s, %s)",
                                  algo ? algo : "-", bn ? bn : "-", wsl ? wsl : "-");
        }
        im->find = !(algo && strcmp(algo, "heuristic") == 0);
        im->bn_mode = !bn || !*bn || strcmp(bn, "ex") == 0 ? BN_EX : strcmp(bn, "persistent") == 0 ? BN_PERSISTENT
                                                                                              : BN_SPATIAL;
        im->ws_limit = (size_t)mb << 20;
        const char *pf = getenv("BD_CUDA_PROFILE");
        if (pf && *pf && !prof.on) {
                prof.on = 1;
                snprintf(prof.path, sizeof(prof.path), "%s", pf);
        }
        const char *fail = NULL;
        if (cudaSetDevice(device) != cudaSuccess)
                fail = "cudaSetDevice";
        else if (cudaStreamCreateWithFlags(&im->stream, cudaStreamNonBlocking) != cudaSuccess)
                fail = "cudaStreamCreate";
        else if (cudnnCreate(&im->dnn) != CUDNN_STATUS_SUCCESS || cudnnSetStream(im->dnn, im->stream) != CUDNN_STATUS_SUCCESS)
                fail = "cudnnCreate";
        else if (cublasCreate(&im->blas) != CUBLAS_STATUS_SUCCESS || cublasSetStream(im->blas, im->stream) != CUBLAS_STATUS_SUCCESS)
                fail = "cublasCreate";
        else if (cudaMalloc((void **)&im->part, RBLOCKS * sizeof(double)) != cudaSuccess ||
                 cudaMallocHost((void **)&im->hpart, RBLOCKS * sizeof(double)) != cudaSuccess)
                fail = "cudaMalloc";
        if (fail) {
                cuda_destroy(be);
                return bd_err_set(err, -EIO, "backend cuda: %s failed on device %d", fail, device);
        }
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, device) == cudaSuccess)
                snprintf(be->device_name, sizeof(be->device_name), "%.95s", prop.name);
        const char *dir = getenv("BD_CUDA_ALGO_CACHE");
        if (dir && *dir && im->find) {
                bd_algo_cache_init(&im->disk, be->device_name, (long)cudnnGetVersion());
                im->disk_path = bd_algo_cache_file(&im->disk, dir);
                int r = fs_mkdir_p(dir, 0755);
                if (r < 0)
                        r = bd_err_set(err, r, "BD_CUDA_ALGO_CACHE: %s: %s", dir, strerror(-r));
                else
                        r = bd_algo_cache_load(&im->disk, im->disk_path, err);
                if (r < 0) {
                        cuda_destroy(be);
                        return r;
                }
        }
        *ret = be;
        return 0;
}

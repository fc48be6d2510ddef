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
#include "ops.h"
}

#include <errno.h>

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
};

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

static int cuda_reduce(struct bd_backend *be, enum bd_reducer k, enum bd_dtype dt, int64_t n, const void *vargs,
                       double *ret)
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
        CU(cudaMemcpyAsync(im->hpart, im->part, RBLOCKS * sizeof(double), cudaMemcpyDeviceToHost, im->stream));
        CU(cudaStreamSynchronize(im->stream));
        double s = 0;
        for (int i = 0; i < RBLOCKS; i++)
                s += im->hpart[i];
        *ret = s;
        return 0;
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
};

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

static int conv_plan(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                     const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *y,
                     struct cplan **ret)
{
        uint64_t key = bd_hash(d, sizeof(*d), BD_HASH_INIT);
        key = bd_hash_tensor(y, bd_hash_tensor(w, bd_hash_tensor(x, key)));
        struct cplan *p = (struct cplan *)bd_plan_find(pc, key);
        if (p) {
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
        int r;
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
                /* algorithms from cuDNN's heuristics: the first that supports this
                 * convolution (a heuristic's list can start with one that does not,
                 * as for 3 input channels in half precision) and says its workspace */
                int nf = 0, nd = 0, nw = 0, i;
                cudnnConvolutionFwdAlgoPerf_t fp[8];
                cudnnConvolutionBwdDataAlgoPerf_t dp[8];
                cudnnConvolutionBwdFilterAlgoPerf_t wp[8];
                if ((s = cudnnGetConvolutionForwardAlgorithm_v7(im->dnn, p->big, p->filt, p->conv, p->small, 8, &nf,
                                                                fp)) != CUDNN_STATUS_SUCCESS ||
                    (s = cudnnGetConvolutionBackwardDataAlgorithm_v7(im->dnn, p->filt, p->small, p->conv, p->big, 8, &nd,
                                                                     dp)) != CUDNN_STATUS_SUCCESS ||
                    (s = cudnnGetConvolutionBackwardFilterAlgorithm_v7(im->dnn, p->big, p->small, p->conv, p->filt, 8,
                                                                       &nw, wp)) != CUDNN_STATUS_SUCCESS) {
                        r = bd_err_set(&be->err, -EIO, "cudnn: convolution heuristics: %s", dnn_str(s));
                        goto fail;
                }
                for (i = 0; i < nf; i++)
                        if (fp[i].status == CUDNN_STATUS_SUCCESS &&
                            cudnnGetConvolutionForwardWorkspaceSize(im->dnn, p->big, p->filt, p->conv, p->small,
                                                                    fp[i].algo, &p->fws) == CUDNN_STATUS_SUCCESS)
                                break;
                if (i == nf) {
                        r = bd_err_set(&be->err, -EIO, "cudnn: no forward convolution algorithm of %d", nf);
                        goto fail;
                }
                p->fa = fp[i].algo;
                for (i = 0; i < nd; i++)
                        if (dp[i].status == CUDNN_STATUS_SUCCESS &&
                            cudnnGetConvolutionBackwardDataWorkspaceSize(im->dnn, p->filt, p->small, p->conv, p->big,
                                                                         dp[i].algo, &p->dws) == CUDNN_STATUS_SUCCESS)
                                break;
                if (i == nd) {
                        r = bd_err_set(&be->err, -EIO, "cudnn: no backward data convolution algorithm of %d", nd);
                        goto fail;
                }
                p->da = dp[i].algo;
                for (i = 0; i < nw; i++)
                        if (wp[i].status == CUDNN_STATUS_SUCCESS &&
                            cudnnGetConvolutionBackwardFilterWorkspaceSize(im->dnn, p->big, p->small, p->conv, p->filt,
                                                                           wp[i].algo, &p->wws) == CUDNN_STATUS_SUCCESS)
                                break;
                if (i == nw) {
                        r = bd_err_set(&be->err, -EIO, "cudnn: no backward filter convolution algorithm of %d", nw);
                        goto fail;
                }
                p->wa = wp[i].algo;
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
        struct cuda_impl *im = IM(be);
        struct cplan *p = NULL;
        const void *wp = NULL;
        int r;
        if ((r = conv_plan(be, d, pc, x, w, y, &p)) < 0 || (r = conv_weights(be, p, w, wver, &wp)) < 0)
                return r;
        float one = 1.0f, zero = 0.0f;
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
        if ((r = conv_plan(be, d, pc, x, w, dy, &p)) < 0 || (r = conv_weights(be, p, w, wver, &wp)) < 0)
                return r;
        float one = 1.0f, zero = 0.0f, bx = (flags & BD_ACC_DX) ? 1.0f : 0.0f, bw = accw ? 1.0f : 0.0f;
        /* weights: (big, dsmall) */
        if (dw) {
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
        int r;
        if ((r = tensor_desc(be, x, &p->x)) < 0) {
                cuda_plan_free(be, p);
                return r;
        }
        cudnnStatus_t s;
        if ((s = cudnnCreateTensorDescriptor(&p->sb)) != CUDNN_STATUS_SUCCESS ||
            (s = cudnnDeriveBNTensorDescriptor(p->sb, p->x, CUDNN_BATCHNORM_SPATIAL)) != CUDNN_STATUS_SUCCESS) {
                cuda_plan_free(be, p);
                return bd_err_set(&be->err, -EIO, "cudnn: batch norm descriptor: %s", dnn_str(s));
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
        struct cuda_impl *im = IM(be);
        struct cplan *p = NULL;
        int r;
        if ((r = bn_plan(be, pc, x, &p)) < 0 || (r = bd_tensor_resize(be, ws, BD_F32, BD_NCHW, 1, gamma->dims)) < 0)
                return r;
        float one = 1.0f, zero = 0.0f;
        double e = eps < CUDNN_BN_MIN_EPSILON ? CUDNN_BN_MIN_EPSILON : eps;
        /* no running averages here (ops.c updates them); saved mean and 1/std */
        DNN(cudnnBatchNormalizationForwardTraining(im->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, p->x, x->data, p->x,
                                                   y->data, p->sb, gamma->data, beta->data, 0.0, NULL, NULL, e,
                                                   mean->data, ws->data));
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
        struct cuda_impl *im = IM(be);
        struct cplan *p = NULL;
        int r;
        if ((r = bn_plan(be, pc, x, &p)) < 0)
                return r;
        if (!ws || !ws->data)
                return bd_err_set(&be->err, -EINVAL, "batch norm backward: no saved state from the forward");
        const void *g = dy->data;
        struct bd_tensor masked = { 0 };
        if (relu) {
                struct bd_relu_bwd_args a;
                if ((r = bd_tensor_resize_like(be, &masked, dy)) < 0)
                        return r;
                a.y = y->data;
                a.dy = dy->data;
                a.dx = masked.data;
                a.accumulate = 0;
                if ((r = cuda_elem(be, BD_K_relu_bwd, dy->dtype, bd_tensor_numel(dy), &a)) < 0) {
                        bd_tensor_release(&masked);
                        return r;
                }
                g = masked.data;
        }
        float one = 1.0f, bx = (flags & BD_ACC_DX) ? 1.0f : 0.0f, bw = (flags & BD_ACC_DW) ? 1.0f : 0.0f;
        double e = eps < CUDNN_BN_MIN_EPSILON ? CUDNN_BN_MIN_EPSILON : eps;
        /* without dgamma/dbeta cuDNN still writes them: into scratch */
        void *dg = dgamma ? dgamma->data : NULL, *dbt = dbeta ? dbeta->data : NULL;
        struct bd_tensor tmp = { 0 };
        if (!dg || !dbt) {
                int64_t n2 = 2 * gamma->dims[0];
                if ((r = bd_tensor_resize(be, &tmp, BD_F32, BD_NCHW, 1, &n2)) < 0)
                        return r;
                if (!dg)
                        dg = tmp.data;
                if (!dbt)
                        dbt = (float *)tmp.data + gamma->dims[0];
        }
        cudnnStatus_t s = cudnnBatchNormalizationBackward(im->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &bx, &one, &bw, p->x,
                                                          x->data, p->x, g, p->x, dx->data, p->sb, gamma->data, dg, dbt,
                                                          e, mean->data, ws->data);
        if (masked.data || tmp.data)
                cudaStreamSynchronize(im->stream);
        bd_tensor_release(&masked);
        bd_tensor_release(&tmp);
        DNN(s);
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
                if (why)
                        *why = cudaGetErrorString(e);
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
        *ret = be;
        return 0;
}

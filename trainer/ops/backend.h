/* backend.h: the interface a backend implements (CPU: ops-cpu.c, CUDA:
 * ops-cuda.cu).
 *
 * A backend provides memory, the library operations (convolution, batch norm
 * in training mode, max pooling, fully connected) and launch code for the
 * element functions of elem.h.  Everything else (shape checks, output
 * allocation, inference-mode batch norm, losses, optimiser) is common code in
 * ops.c and trainer/core that calls through this table, so the two backends
 * differ only in library calls and launches.
 *
 * Calls are asynchronous on CUDA (one stream); sync() waits.  Failures return
 * a negative errno and describe themselves in be->err.
 */
#ifndef BD_BACKEND_H
#define BD_BACKEND_H

#include <stdint.h>

#include "elem.h"
#include "err.h"
#include "tensor.h"

/* Convolution: weights (O, I/groups, kh, kw) as in PyTorch; transposed:
 * weights (I, O/groups, kh, kw) and output (H - 1) s - 2 p + d (k - 1) + 1. */
struct bd_conv_desc {
        int64_t kh, kw, sh, sw, ph, pw, dh, dw, groups;
        int transposed;
};

struct bd_pool_desc {
        int64_t kh, kw, sh, sw, ph, pw;
};

/* A few cached plans per layer (primitives, descriptors, reordered weights),
 * keyed by everything that shapes them, so a layer applied to several input
 * sizes (one head over all pyramid levels) builds each plan once. */
#define BD_PLAN_SLOTS 8
struct bd_plan_cache {
        struct {
                uint64_t key;
                void *plan;
        } slot[BD_PLAN_SLOTS];
        unsigned next;
};

/* gradient flags of backward calls */
enum {
        BD_ACC_DW = 1 << 0,     /* add into dw (and db) instead of overwriting */
        BD_ACC_DX = 1 << 1,     /* add into dx */
};

struct bd_backend;

struct bd_backend_ops {
        const char *name;
        void (*destroy)(struct bd_backend *be);

        void *(*alloc)(struct bd_backend *be, size_t bytes);
        void (*free)(struct bd_backend *be, void *p);
        /* dst and src may each be on the host or the device (dev says which) */
        int (*copy)(struct bd_backend *be, void *dst, enum bd_device ddev, const void *src, enum bd_device sdev,
                    size_t bytes);
        int (*sync)(struct bd_backend *be);
        /* Layout convolutions on this backend prefer for C channels. */
        enum bd_layout (*pref_layout)(struct bd_backend *be, int64_t C, enum bd_dtype dt);

        /* element functions: n indices (flat) or the args' shape (4-D) */
        int (*elem)(struct bd_backend *be, enum bd_kernel k, enum bd_dtype dt, int64_t n, const void *args);
        /* deterministic sum of a reducer over [0, n) */
        int (*reduce)(struct bd_backend *be, enum bd_reducer r, enum bd_dtype dt, int64_t n, const void *args,
                      double *ret);
        /* the same sum (bit for bit) written to *dst, a double in this
         * backend's memory, without waiting for it */
        int (*reduce_to)(struct bd_backend *be, enum bd_reducer r, enum bd_dtype dt, int64_t n, const void *args,
                         double *dst);

        /* y = conv(x, w) + b; wver changes whenever w's values change (cached
         * copies of w in another layout are refreshed then). */
        int (*conv_fwd)(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                        const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *b,
                        struct bd_tensor *y, uint64_t wver);
        /* dx (NULL: not wanted), dw and db (NULL: frozen or no bias) */
        int (*conv_bwd)(struct bd_backend *be, const struct bd_conv_desc *d, struct bd_plan_cache *pc,
                        const struct bd_tensor *x, const struct bd_tensor *w, const struct bd_tensor *dy,
                        struct bd_tensor *dx, struct bd_tensor *dw, struct bd_tensor *db, unsigned flags,
                        uint64_t wver);
        /* training-mode batch norm: batch statistics into mean and var (biased),
         * y = gamma (x - mean) / sqrt(var + eps) + beta, ReLU fused when relu;
         * ws is backend state kept for the backward (resized by the backend) */
        int (*bn_fwd)(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                      const struct bd_tensor *gamma, const struct bd_tensor *beta, struct bd_tensor *y,
                      struct bd_tensor *mean, struct bd_tensor *var, struct bd_tensor *ws);
        int (*bn_bwd)(struct bd_backend *be, struct bd_plan_cache *pc, double eps, int relu, const struct bd_tensor *x,
                      const struct bd_tensor *y, const struct bd_tensor *dy, const struct bd_tensor *gamma,
                      const struct bd_tensor *mean, const struct bd_tensor *var, const struct bd_tensor *ws,
                      struct bd_tensor *dx, struct bd_tensor *dgamma, struct bd_tensor *dbeta, unsigned flags);
        /* max pooling; ws: backend state for the backward (resized by the backend) */
        int (*pool_fwd)(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                        const struct bd_tensor *x, struct bd_tensor *y, struct bd_tensor *ws);
        int (*pool_bwd)(struct bd_backend *be, const struct bd_pool_desc *d, struct bd_plan_cache *pc,
                        const struct bd_tensor *x, const struct bd_tensor *y, const struct bd_tensor *dy,
                        const struct bd_tensor *ws, struct bd_tensor *dx);
        /* y (N, O) = x (N, K) w^T (w: (O, K)) + b */
        int (*fc_fwd)(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                      const struct bd_tensor *w, const struct bd_tensor *b, struct bd_tensor *y, uint64_t wver);
        int (*fc_bwd)(struct bd_backend *be, struct bd_plan_cache *pc, const struct bd_tensor *x,
                      const struct bd_tensor *w, const struct bd_tensor *dy, struct bd_tensor *dx,
                      struct bd_tensor *dw, struct bd_tensor *db, unsigned flags, uint64_t wver);
        void (*plan_free)(struct bd_backend *be, void *plan);
};

/* What the common code (ops.c) has asked of a backend since it started: the
 * same on every backend for the same op graph. */
struct bd_op_counts {
        uint64_t elementwise;           /* element function launches, casts included */
        uint64_t casts;                 /* bd_op_cast */
        uint64_t convolutions;          /* forward and backward calls */
        uint64_t sums_read;             /* reductions read back by the host (a wait on CUDA) */
};

struct bd_backend {
        const struct bd_backend_ops *ops;
        enum bd_device dev;
        int nthreads;
        int device_id;                  /* CUDA device */
        char device_name[96];           /* the GPU's name, or the CPU's model name */
        struct bd_err err;
        struct bd_op_counts count;
        void *impl;
};

/* Backends.  The CUDA one fails with -EOPNOTSUPP ("built without CUDA") in
 * builds without it, or -ENODEV when no GPU is visible. */
int bd_backend_cpu_new(int nthreads, struct bd_backend **ret, struct bd_err *err);
int bd_backend_cuda_new(int device, struct bd_backend **ret, struct bd_err *err);
/* The plan backend: the op graph without its arithmetic.  Host memory
 * (zeroed, device BD_PLAN), every dtype the GPU takes, layouts as CUDA
 * prefers them, and no computation: element functions, library calls and
 * reductions (0) return at once.  A trainer step on it runs the common code
 * of every op (shapes, allocation, the casts and launches the model asks
 * for), so its bd_op_counts are those of the same step on CUDA. */
int bd_backend_plan_new(struct bd_backend **ret, struct bd_err *err);
/* "cpu", "cuda" or "plan" (backends.c) */
int bd_backend_new(const char *name, int device, int nthreads, struct bd_backend **ret, struct bd_err *err);
void bd_backend_free(struct bd_backend *be);
/* Whether the CUDA backend was compiled in, and how many GPUs are visible
 * (0 when none or not compiled in; *why says which). */
int bd_cuda_device_count(const char **why);
/* The CUDA backend's stream (a cudaStream_t), NULL on the CPU. */
void *bd_backend_cuda_stream(struct bd_backend *be);

/* plan cache helpers for backends (backend.c) */
void *bd_plan_find(struct bd_plan_cache *pc, uint64_t key);
void bd_plan_put(struct bd_backend *be, struct bd_plan_cache *pc, uint64_t key, void *plan);
void bd_plan_cache_clear(struct bd_backend *be, struct bd_plan_cache *pc);
/* FNV-1a over a key description */
uint64_t bd_hash(const void *p, size_t n, uint64_t h);
uint64_t bd_hash_tensor(const struct bd_tensor *t, uint64_t h);
#define BD_HASH_INIT 0xcbf29ce484222325ULL

#endif

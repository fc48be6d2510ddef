/* dp.c: data-parallel gradient reduction in buckets, overlapping the backward. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_MPI
#include <mpi.h>
#endif
#ifdef HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

#include "checkpoint.h"
#include "dp.h"
#include "ops.h"

struct dp_impl {
#ifdef HAVE_MPI
        MPI_Request *req;               /* per bucket */
        MPI_Comm bn_mpi;                /* synchronised batch norm's (MPI_COMM_NULL: none) */
#endif
#ifdef HAVE_NCCL
        int nccl;
        ncclComm_t comm;
        ncclComm_t bn_nccl;             /* synchronised batch norm's, on the compute stream (NULL: none) */
        cudaStream_t comm_stream;
        cudaEvent_t *ready;             /* per bucket, recorded on the compute stream */
        cudaEvent_t done;
        /* ranks sharing a GPU, which NCCL refuses: MPI on host copies */
        int staged;
        void *host;                     /* pinned, the size of the parameters */
#endif
        int dummy;
};

int bd_dp_init(struct bd_dp *dp, int *argc, char ***argv, struct bd_err *err)
{
        memset(dp, 0, sizeof(*dp));
        dp->size = dp->local_size = 1;
        dp->overlap = 1;
        struct dp_impl *im = xcalloc(1, sizeof(struct dp_impl));
        dp->impl = im;
#ifdef HAVE_MPI
        im->bn_mpi = MPI_COMM_NULL;
        int inited = 0;
        MPI_Initialized(&inited);
        if (!inited) {
                int provided;
                if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
                        return bd_err_set(err, -EIO, "MPI_Init failed");
                dp->own_mpi = 1;
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &dp->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &dp->size);
        MPI_Comm local;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, dp->rank, MPI_INFO_NULL, &local);
        MPI_Comm_rank(local, &dp->local_rank);
        MPI_Comm_size(local, &dp->local_size);
        MPI_Comm_free(&local);
#endif
        return 0;
}

#ifdef HAVE_MPI
static MPI_Datatype mpi_type(const struct bd_model *m)
{
        return m->dtype == BD_F64 ? MPI_DOUBLE : MPI_FLOAT;
}
#endif

#ifdef HAVE_NCCL
#define NCCL_TRY(call, what)                                                                         \
        do {                                                                                         \
                ncclResult_t _n = (call);                                                            \
                if (_n != ncclSuccess)                                                               \
                        return bd_err_set(err, -EIO, "%s: %s", what, ncclGetErrorString(_n));        \
        } while (0)
#define CUDA_TRY(call, what)                                                                         \
        do {                                                                                         \
                cudaError_t _c = (call);                                                             \
                if (_c != cudaSuccess)                                                               \
                        return bd_err_set(err, -EIO, "%s: %s", what, cudaGetErrorString(_c));        \
        } while (0)
#endif

static void on_ready(void *ctx, struct bd_model *m, int id);

#ifdef HAVE_NCCL
/* a communicator over all ranks (collective: every rank calls it) */
static int nccl_comm_new(struct bd_dp *dp, ncclComm_t *ret, const char *what, struct bd_err *err)
{
        ncclUniqueId id;
        if (dp->rank == 0)
                NCCL_TRY(ncclGetUniqueId(&id), "ncclGetUniqueId");
#ifdef HAVE_MPI
        MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
        NCCL_TRY(ncclCommInitRank(ret, dp->size, id, dp->rank), what);
        return 0;
}
#endif

#if defined(HAVE_NCCL) && defined(HAVE_MPI)
/* Whether two ranks run on one GPU (the same host and PCI address): NCCL
 * refuses such a communicator.  Collective. */
static int ranks_share_gpu(const struct bd_dp *dp, int device)
{
        char host[256] = "", bus[64] = "";
        gethostname(host, sizeof(host) - 1);
        if (cudaDeviceGetPCIBusId(bus, sizeof(bus), device) != cudaSuccess) {
                (void)cudaGetLastError();
                snprintf(bus, sizeof(bus), "device %d", device);
        }
        uint64_t key = 0xcbf29ce484222325ULL;
        for (const char *p = host; *p; p++)
                key = (key ^ (unsigned char)*p) * 0x100000001b3ULL;
        key = (key ^ '/') * 0x100000001b3ULL;
        for (const char *p = bus; *p; p++)
                key = (key ^ (unsigned char)*p) * 0x100000001b3ULL;
        uint64_t *all = xcalloc((size_t)dp->size, sizeof(*all));
        int shared = 0;
        if (MPI_Allgather(&key, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD) == MPI_SUCCESS)
                for (int i = 0; i < dp->size && !shared; i++)
                        for (int j = i + 1; j < dp->size && !shared; j++)
                                shared = all[i] == all[j];
        free(all);
        return shared;
}

/* device memory -> the host copy, waiting for the compute stream's work
 * before it and for the copy */
static int stage_down(struct bd_model *m, void *host, const void *dev, size_t bytes)
{
        cudaStream_t s = (cudaStream_t)bd_backend_cuda_stream(m->be);
        if (cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s) != cudaSuccess ||
            cudaStreamSynchronize(s) != cudaSuccess) {
                (void)cudaGetLastError();
                return -EIO;
        }
        return 0;
}

/* the host copy -> device memory, in order on the compute stream; wait: also
 * wait for it (before the host copy changes) */
static int stage_up(struct bd_model *m, void *dev, const void *host, size_t bytes, int wait)
{
        cudaStream_t s = (cudaStream_t)bd_backend_cuda_stream(m->be);
        if (cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s) != cudaSuccess ||
            (wait && cudaStreamSynchronize(s) != cudaSuccess)) {
                (void)cudaGetLastError();
                return -EIO;
        }
        return 0;
}
#endif

static double wall_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int bd_dp_attach(struct bd_dp *dp, struct bd_model *m, size_t bucket_bytes, struct bd_err *err)
{
        struct dp_impl *im = dp->impl;
        dp->m = m;
        size_t per = bucket_bytes / bd_dtype_size(m->dtype);
        if (per < 1)
                per = 1;
        dp->param_bucket = xmalloc((size_t)(m->np ? m->np : 1) * sizeof(int));
        /* trained parameters by gradient offset, highest first */
        int *order = xmalloc((size_t)(m->np ? m->np : 1) * sizeof(int));
        int n = 0;
        for (int i = 0; i < m->np; i++) {
                dp->param_bucket[i] = -1;
                if (bd_model_trained(m, i))
                        order[n++] = i;
        }
        for (int i = 1; i < n; i++)
                for (int j = i; j > 0 && m->p[order[j]].goffset > m->p[order[j - 1]].goffset; j--) {
                        int t = order[j];
                        order[j] = order[j - 1];
                        order[j - 1] = t;
                }
        dp->b = xcalloc((size_t)(n ? n : 1), sizeof(*dp->b));
        dp->nb = 0;
        for (int i = 0; i < n; i++) {
                const struct bd_param *p = &m->p[order[i]];
                struct bd_dp_bucket *b = dp->nb ? &dp->b[dp->nb - 1] : NULL;
                if (!b || b->n >= per) {
                        b = &dp->b[dp->nb++];
                        b->off = p->goffset + (size_t)p->numel;
                        b->n = 0;
                }
                b->off -= (size_t)p->numel;
                b->n += (size_t)p->numel;
                b->nparams++;
                dp->param_bucket[order[i]] = dp->nb - 1;
        }
        free(order);
        m->on_ready = on_ready;
        m->on_ready_ctx = dp;
#ifdef HAVE_MPI
        im->req = xcalloc((size_t)(dp->nb ? dp->nb : 1), sizeof(MPI_Request));
        for (int i = 0; i < dp->nb; i++)
                im->req[i] = MPI_REQUEST_NULL;
#endif
#if defined(HAVE_NCCL) && defined(HAVE_MPI)
        if (m->be->dev == BD_CUDA && dp->size > 1 && ranks_share_gpu(dp, m->be->device_id)) {
                im->staged = 1;
                dp->shared_gpu = 1;
                CUDA_TRY(cudaMallocHost(&im->host, (m->n_all ? m->n_all : 1) * bd_dtype_size(m->dtype)),
                         "cudaMallocHost");
        }
#endif
#ifdef HAVE_NCCL
        if (m->be->dev == BD_CUDA && !im->staged) {
                int r = nccl_comm_new(dp, &im->comm, "ncclCommInitRank", err);
                if (r < 0)
                        return r;
                CUDA_TRY(cudaStreamCreateWithFlags(&im->comm_stream, cudaStreamNonBlocking), "cudaStreamCreate");
                im->ready = xcalloc((size_t)(dp->nb ? dp->nb : 1), sizeof(cudaEvent_t));
                for (int i = 0; i < dp->nb; i++)
                        CUDA_TRY(cudaEventCreateWithFlags(&im->ready[i], cudaEventDisableTiming), "cudaEventCreate");
                CUDA_TRY(cudaEventCreateWithFlags(&im->done, cudaEventDisableTiming), "cudaEventCreate");
                im->nccl = 1;
        }
#endif
        (void)im;
        return 0;
}

int bd_dp_broadcast_params(struct bd_dp *dp, struct bd_err *err)
{
        struct bd_model *m = dp->m;
        if (dp->size == 1)
                return 0;
#ifdef HAVE_NCCL
        struct dp_impl *im = dp->impl;
        if (im->nccl) {
                cudaStream_t s = (cudaStream_t)bd_backend_cuda_stream(m->be);
                NCCL_TRY(ncclBroadcast(m->params, m->params, m->n_all, m->dtype == BD_F64 ? ncclDouble : ncclFloat, 0,
                                       im->comm, s),
                         "ncclBroadcast");
                CUDA_TRY(cudaStreamSynchronize(s), "broadcast");
                m->version++;
                return 0;
        }
#endif
#ifdef HAVE_MPI
        size_t ds = bd_dtype_size(m->dtype);
        void *base = m->params;
#ifdef HAVE_NCCL
        if (im->staged) {
                base = im->host;
                if (stage_down(m, base, m->params, m->n_all * ds) < 0)
                        return bd_err_set(err, -EIO, "the parameters to the host for MPI_Bcast: a CUDA copy failed");
        }
#endif
        for (size_t off = 0; off < m->n_all; off += INT_MAX / 2) {
                size_t n = m->n_all - off < INT_MAX / 2 ? m->n_all - off : INT_MAX / 2;
                if (MPI_Bcast((char *)base + off * ds, (int)n, mpi_type(m), 0, MPI_COMM_WORLD) != MPI_SUCCESS)
                        return bd_err_set(err, -EIO, "MPI_Bcast of the parameters failed");
        }
#ifdef HAVE_NCCL
        if (im->staged && stage_up(m, m->params, base, m->n_all * ds, 1) < 0)
                return bd_err_set(err, -EIO, "the parameters back from MPI_Bcast: a CUDA copy failed");
#endif
        m->version++;
#endif
        (void)err;
        return 0;
}

/* the model's sync_bn hook: v in host memory (MPI) or the GPU's (NCCL, on
 * the compute stream) */
static int sum_bn(void *ctx, struct bd_model *m, double *v, int64_t n)
{
        struct bd_dp *dp = ctx;
        struct dp_impl *im = dp->impl;
#ifdef HAVE_NCCL
        if (im->nccl) {
                ncclResult_t e = ncclAllReduce(v, v, (size_t)n, ncclDouble, ncclSum, im->bn_nccl,
                                               (cudaStream_t)bd_backend_cuda_stream(m->be));
                if (e != ncclSuccess)
                        return bd_err_set(&m->be->err, -EIO, "batch norm statistics: ncclAllReduce: %s",
                                          ncclGetErrorString(e));
                return 0;
        }
#endif
#ifdef HAVE_MPI
        if (n > INT_MAX)
                return bd_err_set(&m->be->err, -E2BIG, "batch norm statistics: %lld values", (long long)n);
        double *h = v;
#ifdef HAVE_NCCL
        if (im->staged) {       /* v on the GPU: through a host copy */
                h = xmalloc((size_t)n * sizeof(double));
                if (stage_down(m, h, v, (size_t)n * sizeof(double)) < 0) {
                        free(h);
                        return bd_err_set(&m->be->err, -EIO, "batch norm statistics: a CUDA copy failed");
                }
        }
#endif
        int ok = MPI_Allreduce(MPI_IN_PLACE, h, (int)n, MPI_DOUBLE, MPI_SUM, im->bn_mpi) == MPI_SUCCESS;
#ifdef HAVE_NCCL
        if (im->staged) {
                ok = ok && stage_up(m, v, h, (size_t)n * sizeof(double), 1) == 0;
                free(h);
        }
#endif
        if (!ok)
                return bd_err_set(&m->be->err, -EIO, "batch norm statistics: MPI_Allreduce failed");
#endif
        (void)im;
        return 0;
}

int bd_dp_sync_bn(struct bd_dp *dp, struct bd_err *err)
{
        struct dp_impl *im = dp->impl;
        if (dp->size == 1 || dp->sync_bn)
                return 0;
#ifdef HAVE_NCCL
        if (im->nccl) {
                int r = nccl_comm_new(dp, &im->bn_nccl, "batch norm: ncclCommInitRank", err);
                if (r < 0)
                        return r;
        }
#endif
#ifdef HAVE_MPI
        /* with NCCL too (unused there): one release path */
        if (MPI_Comm_dup(MPI_COMM_WORLD, &im->bn_mpi) != MPI_SUCCESS)
                return bd_err_set(err, -EIO, "batch norm: MPI_Comm_dup failed");
#endif
        (void)im;
        (void)err;
        dp->m->sync_bn = sum_bn;
        dp->m->sync_bn_ctx = dp;
        dp->sync_bn = 1;
        return 0;
}

/* starts buckets that are ready, in order; err may be NULL (from the ready
 * hook, inside the backward: bd_dp_finish tries the bucket again) */
static int launch_ready(struct bd_dp *dp, struct bd_err *err)
{
        struct bd_model *m = dp->m;
        struct dp_impl *im = dp->impl;
        size_t ds = bd_dtype_size(m->dtype);
        while (dp->next < dp->nb && dp->b[dp->next].pending == 0) {
                struct bd_dp_bucket *b = &dp->b[dp->next];
                void *p = (char *)m->grads + b->off * ds;
                if (dp->timing)
                        b->t_launch = wall_now();
                (void)p;
                (void)im;
#ifdef HAVE_NCCL
                if (im->nccl) {
                        cudaStream_t s = (cudaStream_t)bd_backend_cuda_stream(m->be);
                        if (cudaEventRecord(im->ready[dp->next], s) != cudaSuccess ||
                            cudaStreamWaitEvent(im->comm_stream, im->ready[dp->next], 0) != cudaSuccess ||
                            ncclAllReduce(p, p, b->n, m->dtype == BD_F64 ? ncclDouble : ncclFloat, ncclSum, im->comm,
                                          im->comm_stream) != ncclSuccess)
                                return bd_err_set(err, -EIO, "gradient allreduce failed to start: bucket %d: "
                                                  "ncclAllReduce failed", dp->next);
                        b->launched = 1;
                        dp->next++;
                        continue;
                }
#endif
#ifdef HAVE_MPI
                if (b->n > INT_MAX)
                        return bd_err_set(err, -E2BIG, "gradient allreduce failed to start: bucket %d has %zu "
                                          "elements, MPI counts at most INT_MAX", dp->next, b->n);
#ifdef HAVE_NCCL
                if (im->staged) {       /* the bucket's gradients to the host copy, summed there */
                        void *h = (char *)im->host + b->off * ds;
                        if (stage_down(m, h, p, b->n * ds) < 0)
                                return bd_err_set(err, -EIO, "gradient allreduce failed to start: bucket %d: a CUDA "
                                                  "copy to the host failed", dp->next);
                        p = h;
                }
#endif
                if (MPI_Iallreduce(MPI_IN_PLACE, p, (int)b->n, mpi_type(m), MPI_SUM, MPI_COMM_WORLD,
                                   &im->req[dp->next]) != MPI_SUCCESS)
                        return bd_err_set(err, -EIO, "gradient allreduce failed to start: bucket %d: "
                                          "MPI_Iallreduce failed", dp->next);
                /* let MPI move the earlier ones along */
                int flag;
                MPI_Testall(dp->next + 1, im->req, &flag, MPI_STATUSES_IGNORE);
#endif
                b->launched = 1;
                dp->next++;
        }
        return 0;
}

static void on_ready(void *ctx, struct bd_model *m, int id)
{
        struct bd_dp *dp = ctx;
        int k = dp->param_bucket[id];
        if (k < 0 || dp->size == 1 || !dp->overlap)
                return;
        if (dp->b[k].pending > 0)
                dp->b[k].pending--;
        (void)launch_ready(dp, NULL);
}

int bd_dp_begin_backward(struct bd_dp *dp, struct bd_err *err)
{
        for (int i = 0; i < dp->nb; i++) {
                dp->b[i].pending = dp->b[i].nparams;
                dp->b[i].launched = 0;
        }
        dp->next = 0;
        int r = bd_model_begin_backward(dp->m);
        if (r < 0)
                return bd_err_set(err, r, "%s", dp->m->be->err.msg);
        return 0;
}

int bd_dp_finish(struct bd_dp *dp, struct bd_err *err)
{
        struct bd_model *m = dp->m;
        struct dp_impl *im = dp->impl;
        if (dp->size == 1)
                return 0;
        if (!dp->overlap) {
                for (int i = 0; i < dp->nb; i++)
                        dp->b[i].pending = 0;
        }
        int r = launch_ready(dp, err);
        if (r < 0)
                return r;
        if (dp->next < dp->nb) {
                /* name a parameter whose gradient never became final */
                for (int i = 0; i < m->np; i++)
                        if (dp->param_bucket[i] == dp->next && (m->p[i].step != m->step || m->p[i].done < m->p[i].uses))
                                return bd_err_set(err, -EINVAL,
                                                  "gradient of '%s' incomplete at the end of the backward (%d of %d uses)",
                                                  m->p[i].name, m->p[i].step == m->step ? m->p[i].done : 0,
                                                  m->p[i].step == m->step ? m->p[i].uses : 0);
                return bd_err_set(err, -EINVAL, "gradient bucket %d incomplete at the end of the backward", dp->next);
        }
        size_t nbuf = m->n_all - m->buf_off, ds = bd_dtype_size(m->dtype);
        void *bufs = (char *)m->params + m->buf_off * ds;
#ifdef HAVE_NCCL
        if (im->nccl) {
                cudaStream_t s = (cudaStream_t)bd_backend_cuda_stream(m->be);
                CUDA_TRY(cudaEventRecord(im->done, im->comm_stream), "cudaEventRecord");
                CUDA_TRY(cudaStreamWaitEvent(s, im->done, 0), "cudaStreamWaitEvent");
                if (nbuf)
                        NCCL_TRY(ncclAllReduce(bufs, bufs, nbuf, ncclFloat, ncclSum, im->comm, s), "ncclAllReduce");
                if (dp->timing) {       /* the buckets' ends: when the device has them (a trace syncs) */
                        CUDA_TRY(cudaStreamSynchronize(im->comm_stream), "cudaStreamSynchronize");
                        for (int i = 0; i < dp->nb; i++)
                                dp->b[i].t_done = wall_now();
                }
        }
#endif
#ifdef HAVE_MPI
        if (!
#ifdef HAVE_NCCL
            im->nccl
#else
            0
#endif
        ) {
                if (dp->timing) {
                        /* each bucket's end as it is seen, for the trace */
                        for (int done = 0; done < dp->nb; done++) {
                                int k;
                                if (MPI_Waitany(dp->nb, im->req, &k, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                                        return bd_err_set(err, -EIO, "gradient allreduce failed");
                                if (k != MPI_UNDEFINED)
                                        dp->b[k].t_done = wall_now();
                        }
                } else if (MPI_Waitall(dp->nb, im->req, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
                        return bd_err_set(err, -EIO, "gradient allreduce failed");
                void *hbufs = bufs;
#ifdef HAVE_NCCL
                if (im->staged) {       /* the sums back on the GPU, the buffers through the host copy */
                        for (int i = 0; i < dp->nb; i++)
                                if (stage_up(m, (char *)m->grads + dp->b[i].off * ds,
                                             (char *)im->host + dp->b[i].off * ds, dp->b[i].n * ds, 0) < 0)
                                        return bd_err_set(err, -EIO, "gradient allreduce: a CUDA copy back failed");
                        hbufs = (char *)im->host + m->buf_off * ds;
                        if (nbuf && stage_down(m, hbufs, bufs, nbuf * ds) < 0)
                                return bd_err_set(err, -EIO, "buffer allreduce: a CUDA copy to the host failed");
                }
#endif
                if (nbuf && MPI_Allreduce(MPI_IN_PLACE, hbufs, (int)nbuf, mpi_type(m), MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
                        return bd_err_set(err, -EIO, "buffer allreduce failed");
#ifdef HAVE_NCCL
                /* waited for: the next step's copies to the host reuse these */
                if (im->staged && nbuf && stage_up(m, bufs, hbufs, nbuf * ds, 1) < 0)
                        return bd_err_set(err, -EIO, "buffer allreduce: a CUDA copy back failed");
                if (im->staged && !nbuf && cudaStreamSynchronize((cudaStream_t)bd_backend_cuda_stream(m->be)) != cudaSuccess)
                        return bd_err_set(err, -EIO, "gradient allreduce: %s", cudaGetErrorString(cudaGetLastError()));
#endif
        }
#endif
        if (nbuf) {
                int64_t n = (int64_t)nbuf;
                struct bd_tensor b = bd_tensor_view(bufs, m->be->dev, m->dtype, BD_NCHW, 1, &n);
                r = bd_op_axpby(m->be, 1.0 / dp->size, &b, 0, &b);
                if (r < 0)
                        return bd_err_set(err, r, "%s", m->be->err.msg);
        }
        (void)im;
        return 0;
}

int bd_dp_sum(struct bd_dp *dp, double *v, int n, struct bd_err *err)
{
#ifdef HAVE_MPI
        if (dp->size > 1 && MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
                return bd_err_set(err, -EIO, "MPI_Allreduce of %d values failed", n);
#endif
        (void)err;
        return 0;
}

void bd_dp_barrier(struct bd_dp *dp)
{
#ifdef HAVE_MPI
        if (dp->size > 1)
                MPI_Barrier(MPI_COMM_WORLD);
#endif
}

int bd_dp_params_identical(struct bd_dp *dp, int *ret_same, struct bd_err *err)
{
        struct bd_model *m = dp->m;
        size_t bytes = m->n_all * bd_dtype_size(m->dtype);
        _cleanup_free_ void *host = xmalloc(bytes + 1);
        if (bd_model_get_params(m, host) < 0 || m->be->ops->sync(m->be) < 0)
                return bd_err_set(err, -EIO, "%s", m->be->err.msg);
        unsigned crc = bd_crc32(0, host, bytes);
        *ret_same = 1;
#ifdef HAVE_MPI
        if (dp->size > 1) {
                _cleanup_free_ unsigned *all = xcalloc((size_t)dp->size, sizeof(unsigned));
                if (MPI_Allgather(&crc, 1, MPI_UNSIGNED, all, 1, MPI_UNSIGNED, MPI_COMM_WORLD) != MPI_SUCCESS)
                        return bd_err_set(err, -EIO, "MPI_Allgather of the parameter checksums failed");
                for (int i = 0; i < dp->size; i++)
                        if (all[i] != crc)
                                *ret_same = 0;
        }
#endif
        (void)crc;
        return 0;
}

void bd_dp_release(struct bd_dp *dp)
{
        struct dp_impl *im = dp->impl;
        if (dp->m && dp->m->on_ready_ctx == dp) {
                dp->m->on_ready = NULL;
                dp->m->on_ready_ctx = NULL;
        }
        if (dp->m && dp->m->sync_bn_ctx == dp) {
                dp->m->sync_bn = NULL;
                dp->m->sync_bn_ctx = NULL;
        }
        if (im) {
#ifdef HAVE_NCCL
                if (im->nccl) {
                        for (int i = 0; i < dp->nb; i++)
                                cudaEventDestroy(im->ready[i]);
                        cudaEventDestroy(im->done);
                        cudaStreamDestroy(im->comm_stream);
                        ncclCommDestroy(im->comm);
                        if (im->bn_nccl)
                                ncclCommDestroy(im->bn_nccl);
                        free(im->ready);
                }
                if (im->host)
                        cudaFreeHost(im->host);
#endif
#ifdef HAVE_MPI
                free(im->req);
                if (im->bn_mpi != MPI_COMM_NULL)
                        MPI_Comm_free(&im->bn_mpi);
#endif
                free(im);
        }
        free(dp->b);
        free(dp->param_bucket);
#ifdef HAVE_MPI
        if (dp->own_mpi)
                MPI_Finalize();
#endif
        memset(dp, 0, sizeof(*dp));
}

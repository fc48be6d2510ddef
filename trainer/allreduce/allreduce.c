/* allreduce.c: benchd-allreduce, the pre-flight allreduce benchmark.
 *
 * Ranks started by mpirun or srun all-reduce float32 buffers of growing size
 * and print, per size, the time, algorithm bandwidth (bytes / time) and bus
 * bandwidth (algbw * 2(n-1)/n, what each link carries in a ring), like
 * nccl-tests.  Every element of the result is checked; any wrong element makes
 * the run fail.  CPU path: MPI_Allreduce on host memory.  CUDA path (built with
 * NCCL): ncclAllReduce on device memory, one GPU per local rank, the NCCL
 * unique id broadcast over MPI.  Rank 0 writes MLPerf log lines.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

#include "err.h"
#include "macro.h"
#include "mllog.h"

/* Checked library calls, in functions that have a struct bd_err *err: a
 * failure returns -EIO from the function, the message naming the call and
 * where it is ("FILE:LINE: MPI_Barrier(MPI_COMM_WORLD) failed (16)").
 * main() prints it and ends every rank: the others may be waiting in a
 * collective. */
#define MPI_TRY(call)                                                                            \
        do {                                                                                     \
                int _e = (call);                                                                 \
                if (_e != MPI_SUCCESS)                                                           \
                        return bd_err_set(err, -EIO, "%s:%d: %s failed (%d)", __FILE__, __LINE__, \
                                          #call, _e);                                            \
        } while (0)

#ifdef HAVE_NCCL
#define CUDA_TRY(call)                                                                           \
        do {                                                                                     \
                cudaError_t _e = (call);                                                         \
                if (_e != cudaSuccess)                                                           \
                        return bd_err_set(err, -EIO, "%s:%d: %s: %s", __FILE__, __LINE__, #call,  \
                                          cudaGetErrorString(_e));                               \
        } while (0)
#define NCCL_TRY(call)                                                                           \
        do {                                                                                     \
                ncclResult_t _e = (call);                                                        \
                if (_e != ncclSuccess)                                                           \
                        return bd_err_set(err, -EIO, "%s:%d: %s: %s", __FILE__, __LINE__, #call,  \
                                          ncclGetErrorString(_e));                               \
        } while (0)
#endif

struct opts {
        size_t min_bytes, max_bytes;
        long factor, iters, warmup;
        int cuda;
        const char *platform;
        const char *json;
        int inject;     /* rank that corrupts one element, -1: none */
};

static int rank, nranks;

static int mpi_start(int *argc, char ***argv, struct bd_err *err)
{
        MPI_TRY(MPI_Init(argc, argv));
        MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
        MPI_TRY(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
        return 0;
}

/* "64M" -> 67108864; K, M, G are powers of 1024 */
static int parse_size(const char *s, size_t *ret)
{
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s || *s == '-')
                return -EINVAL;
        unsigned long long mul = 1;
        switch (*end) {
        case 'K': case 'k': mul = 1ULL << 10; end++; break;
        case 'M': case 'm': mul = 1ULL << 20; end++; break;
        case 'G': case 'g': mul = 1ULL << 30; end++; break;
        default: break;
        }
        if (*end == 'B' || *end == 'b')
                end++;
        if (*end || v > ULLONG_MAX / mul)
                return -EINVAL;
        *ret = (size_t)(v * mul);
        return 0;
}

static int parse_num(const char *s, long min, long *ret)
{
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < min)
                return -EINVAL;
        *ret = v;
        return 0;
}

static void usage(FILE *f)
{
        fprintf(f, "usage: benchd-allreduce [OPTIONS]\n\n"
                   "All-reduce float32 buffers of growing size across the ranks started by\n"
                   "mpirun or srun; print time, algbw and busbw per size and check every element.\n\n"
                   "  -b, --min-bytes SIZE    smallest buffer (default 8; K, M, G suffixes)\n"
                   "  -e, --max-bytes SIZE    largest buffer (default 256M)\n"
                   "  -f, --factor N          size multiplier between steps (default 2)\n"
                   "  -n, --iters N           timed iterations per size (default 20)\n"
                   "  -w, --warmup N          untimed iterations per size (default 5)\n"
                   "      --backend cpu|cuda  MPI on host memory, or NCCL on GPUs (default cpu)\n"
                   "      --platform NAME     MLPerf submission_platform (default: host name)\n"
                   "      --json FILE         also write the results as JSON\n"
                   "      --inject-error RANK corrupt one element on RANK, 0 to ranks-1 (tests the check)\n"
                   "  -h, --help              show this help\n"
                   "      --version           show the version\n");
}

/* 0 to run, 1 to exit 0 (help or version, printed to out unless NULL),
 * -EINVAL on a usage error (in err, the same on every rank).  Before MPI_Init:
 * what needs the rank count is checked in main. */
static int parse_args(int argc, char **argv, struct opts *o, FILE *out, struct bd_err *err)
{
        static const struct option longopts[] = {
                { "min-bytes", required_argument, NULL, 'b' }, { "max-bytes", required_argument, NULL, 'e' },
                { "factor", required_argument, NULL, 'f' },    { "iters", required_argument, NULL, 'n' },
                { "warmup", required_argument, NULL, 'w' },    { "backend", required_argument, NULL, 'B' },
                { "platform", required_argument, NULL, 'P' },  { "json", required_argument, NULL, 'J' },
                { "inject-error", required_argument, NULL, 'I' }, { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },         { NULL, 0, NULL, 0 },
        };
        *o = (struct opts){ .min_bytes = 8, .max_bytes = 256u << 20, .factor = 2, .iters = 20, .warmup = 5,
                            .inject = -1 };
        opterr = 0;
        int c;
        long v;
        while ((c = getopt_long(argc, argv, ":b:e:f:n:w:h", longopts, NULL)) != -1) {
                const char *bad = NULL;
                switch (c) {
                case 'b': if (parse_size(optarg, &o->min_bytes) < 0 || o->min_bytes < 4) bad = "--min-bytes: expected a size >= 4 bytes (e.g. 8, 64K, 1M)"; break;
                case 'e': if (parse_size(optarg, &o->max_bytes) < 0 || o->max_bytes < 4) bad = "--max-bytes: expected a size >= 4 bytes (e.g. 256M)"; break;
                case 'f': if (parse_num(optarg, 2, &o->factor) < 0) bad = "--factor: expected a number >= 2"; break;
                case 'n': if (parse_num(optarg, 1, &o->iters) < 0) bad = "--iters: expected a number >= 1"; break;
                case 'w': if (parse_num(optarg, 0, &o->warmup) < 0) bad = "--warmup: expected a number >= 0"; break;
                case 'B':
                        if (!strcmp(optarg, "cpu"))
                                o->cuda = 0;
                        else if (!strcmp(optarg, "cuda"))
                                o->cuda = 1;
                        else
                                bad = "--backend: expected cpu or cuda";
                        break;
                case 'P': o->platform = optarg; break;
                case 'J': o->json = optarg; break;
                case 'I': if (parse_num(optarg, 0, &v) < 0) bad = "--inject-error: expected a rank"; else o->inject = v > INT_MAX ? INT_MAX : (int)v; break;
                case 'h': if (out) usage(out); return 1;
                case 'V': if (out) fprintf(out, "benchd-allreduce %s\n", PACKAGE_VERSION); return 1;
                case ':': return bd_err_set(err, -EINVAL, "option '%s' needs an argument", argv[optind - 1]);
                default: return bd_err_set(err, -EINVAL, "unknown option '%s' (see --help)", argv[optind - 1]);
                }
                if (bad)
                        return bd_err_set(err, -EINVAL, "%s, got '%s'", bad, optarg);
        }
        if (optind < argc)
                return bd_err_set(err, -EINVAL, "unexpected argument '%s'", argv[optind]);
        if (o->min_bytes > o->max_bytes)
                return bd_err_set(err, -EINVAL, "--min-bytes (%zu) is larger than --max-bytes (%zu)", o->min_bytes,
                                  o->max_bytes);
        /* MPI_Allreduce counts elements in an int (NCCL in a size_t) */
        if (!o->cuda && o->max_bytes / sizeof(float) > INT_MAX)
                return bd_err_set(err, -EINVAL, "--max-bytes: at most %zu bytes with --backend cpu "
                                  "(MPI_Allreduce takes at most INT_MAX floats), got %zu",
                                  (size_t)INT_MAX * sizeof(float), o->max_bytes);
#ifndef HAVE_NCCL
        if (o->cuda)
                return bd_err_set(err, -EINVAL, "--backend cuda: built without CUDA/NCCL");
#endif
        return 0;
}

/* Rank r contributes (r + 1) * (i % 7 + 1): every sum stays a small integer,
 * exact in float32 for any realistic number of ranks. */
static void fill(float *buf, size_t count)
{
        for (size_t i = 0; i < count; i++)
                buf[i] = (float)((rank + 1) * (int)(i % 7 + 1));
}

static long long count_wrong(const float *buf, size_t count)
{
        double tri = (double)nranks * (nranks + 1) / 2;
        long long wrong = 0;
        for (size_t i = 0; i < count; i++)
                if ((double)buf[i] != tri * (double)(i % 7 + 1))
                        wrong++;
        return wrong;
}

struct result {
        size_t bytes;
        double time_us, algbw, busbw;
        long long wrong;
};

/* The buffers of --max-bytes: send and receive (on the GPU with NCCL) and a
 * host copy of the result. */
struct bufs {
        float *send, *recv, *host;
#ifdef HAVE_NCCL
        ncclComm_t comm;
#endif
};

#ifdef HAVE_NCCL
/* One GPU per local rank, the NCCL communicator over all ranks (the unique id
 * broadcast over MPI) and the device buffers. */
static int nccl_setup(size_t max_count, struct bufs *b, struct bd_err *err)
{
        MPI_Comm local;
        int lrank, ndev;
        MPI_TRY(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local));
        MPI_TRY(MPI_Comm_rank(local, &lrank));
        MPI_Comm_free(&local);
        CUDA_TRY(cudaGetDeviceCount(&ndev));
        CUDA_TRY(cudaSetDevice(lrank % ndev));
        ncclUniqueId id;
        if (rank == 0)
                NCCL_TRY(ncclGetUniqueId(&id));
        MPI_TRY(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD));
        NCCL_TRY(ncclCommInitRank(&b->comm, nranks, id, rank));
        CUDA_TRY(cudaMalloc((void **)&b->send, max_count * sizeof(float)));
        CUDA_TRY(cudaMalloc((void **)&b->recv, max_count * sizeof(float)));
        return 0;
}
#endif

/* The buffers for --max-bytes (-ENOMEM names the rank). */
static int bufs_alloc(const struct opts *o, struct bufs *b, struct bd_err *err)
{
        size_t max_count = o->max_bytes / sizeof(float);
        b->host = malloc(max_count * sizeof(float));
#ifdef HAVE_NCCL
        if (o->cuda) {
                int r = nccl_setup(max_count, b, err);
                if (r < 0)
                        return r;
        } else
#endif
        {
                b->send = malloc(max_count * sizeof(float));
                b->recv = malloc(max_count * sizeof(float));
        }
        if (!b->send || !b->recv || !b->host)
                return bd_err_set(err, -ENOMEM, "rank %d: out of memory for %zu-byte buffers", rank, o->max_bytes);
        return 0;
}

static void bufs_free(const struct opts *o, struct bufs *b)
{
        free(b->host);
#ifdef HAVE_NCCL
        if (o->cuda) {
                cudaFree(b->send);
                cudaFree(b->recv);
                ncclCommDestroy(b->comm);
        } else
#endif
        {
                free(b->send);
                free(b->recv);
        }
        (void)o;
}

/* One size: warm up, time iters, check the last result.  *ret: the result
 * as seen by rank 0 (time: the slowest rank's). */
static int run_size(const struct opts *o, size_t count, struct bufs *b, struct result *ret, struct bd_err *err)
{
        struct result res = { .bytes = count * sizeof(float) };
        float *send = b->send, *recv = b->recv, *host = b->host;
        double t0 = 0, t1 = 0;
        /* o->cuda only when built with NCCL: parse_args refuses it otherwise */
        if (!o->cuda) {
                fill(send, count);
                for (long i = 0; i < o->warmup; i++)
                        MPI_TRY(MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
                MPI_TRY(MPI_Barrier(MPI_COMM_WORLD));
                t0 = MPI_Wtime();
                for (long i = 0; i < o->iters; i++)
                        MPI_TRY(MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
                t1 = MPI_Wtime();
                memcpy(host, recv, count * sizeof(float));
        }
#ifdef HAVE_NCCL
        else {
                ncclComm_t comm = b->comm;
                cudaStream_t stream;
                CUDA_TRY(cudaStreamCreate(&stream));
                fill(host, count);
                CUDA_TRY(cudaMemcpy(send, host, count * sizeof(float), cudaMemcpyHostToDevice));
                for (long i = 0; i < o->warmup; i++)
                        NCCL_TRY(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
                CUDA_TRY(cudaStreamSynchronize(stream));
                MPI_TRY(MPI_Barrier(MPI_COMM_WORLD));
                t0 = MPI_Wtime();
                for (long i = 0; i < o->iters; i++)
                        NCCL_TRY(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
                CUDA_TRY(cudaStreamSynchronize(stream));
                t1 = MPI_Wtime();
                CUDA_TRY(cudaMemcpy(host, recv, count * sizeof(float), cudaMemcpyDeviceToHost));
                CUDA_TRY(cudaStreamDestroy(stream));
        }
#endif
        if (o->inject == rank)
                host[count / 2] += 1.0f;
        long long wrong = count_wrong(host, count);
        double t = (t1 - t0) / (double)o->iters, tmax;
        MPI_TRY(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
        MPI_TRY(MPI_Reduce(&wrong, &res.wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
        res.time_us = tmax * 1e6;
        res.algbw = tmax > 0 ? (double)res.bytes / tmax / 1e9 : 0;
        res.busbw = res.algbw * 2.0 * (nranks - 1) / nranks;
        *ret = res;
        return 0;
}

/* Every size from --min-bytes to --max-bytes: a line and an MLPerf event per
 * size from rank 0, which keeps the results (*ret, *ret_n; the caller frees
 * *ret, after an error too); *ret_wrong: the wrong elements of all sizes, on
 * every rank. */
static int run_sizes(const struct opts *o, struct bufs *b, struct result **ret, int *ret_n, long long *ret_wrong,
                     struct bd_err *err)
{
        int cap = 64, n = 0, r;
        struct result *res = xcalloc((size_t)cap, sizeof(*res));
        long long wrong_total = 0;
        *ret = res;
        *ret_n = 0;
        for (size_t bytes = o->min_bytes; bytes <= o->max_bytes;) {
                size_t count = bytes / sizeof(float);
                if (count == 0)
                        count = 1;
                struct result rs;
                if ((r = run_size(o, count, b, &rs, err)) < 0)
                        return r;
                if (rank == 0) {
                        /* one rank moves nothing between ranks: no bus bandwidth ("-", null) */
                        char bw[32];
                        if (nranks > 1)
                                snprintf(bw, sizeof(bw), "%10.3f", rs.busbw);
                        else
                                snprintf(bw, sizeof(bw), "%10s", "-");
                        printf("  %12zu %12zu %6s %12.2f %10.3f %s %8lld\n", rs.bytes, count, "float", rs.time_us,
                               rs.algbw, bw, rs.wrong);
                        fflush(stdout);
                        char meta[512], value[512];
                        snprintf(value, sizeof(value),
                                 "{\"bytes\": %zu, \"time_us\": %s, \"algbw_gbps\": %s, \"busbw_gbps\": %s, \"wrong\": %lld}",
                                 rs.bytes, mllog_num(rs.time_us), mllog_num(rs.algbw),
                                 nranks > 1 ? mllog_num(rs.busbw) : "null", rs.wrong);
                        snprintf(meta, sizeof(meta), "\"ranks\": %d", nranks);
                        MLLOG_EVENT("allreduce_result", value, meta);
                        if (n == cap)
                                *ret = res = xrealloc(res, (size_t)(cap *= 2) * sizeof(*res));
                        res[n++] = rs;
                        *ret_n = n;
                        wrong_total += rs.wrong;
                }
                if (bytes > SIZE_MAX / (size_t)o->factor)
                        break;
                bytes *= (size_t)o->factor;
        }
        MPI_TRY(MPI_Bcast(&wrong_total, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
        *ret_wrong = wrong_total;
        return 0;
}

/* The process's umask, read without changing it (umask(2) can only set it,
 * and MPI's threads may create files meanwhile); 022 when it cannot be read. */
static mode_t current_umask(void)
{
        FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        unsigned um = 022;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "Umask: %o", &um) == 1)
                        break;
        if (f)
                fclose(f);
        return (mode_t)(um & 0777);
}

/* --json: written atomically at the end (a temporary file beside the target,
 * fsync, rename).  At start one such temporary file is created and removed
 * again, so that a path that cannot be written fails before the benchmark
 * runs, and nothing is left behind however the run ends. *
 * json_temp: a new temporary file for path, open (ret), or created and
 * removed again (ret NULL). */
static int json_temp(const char *path, char tmp[PATH_MAX], FILE **ret, struct bd_err *err)
{
        struct stat st;
        int e;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
                e = EISDIR;
                goto fail;
        }
        int n = snprintf(tmp, PATH_MAX, "%s.tmp.XXXXXX", path);
        if (n < 0 || n >= PATH_MAX) {
                e = ENAMETOOLONG;
                goto fail;
        }
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                e = errno;
                goto fail;
        }
        if (!ret) {
                close(fd);
                unlink(tmp);
                return 0;
        }
        /* mkostemp makes it 0600: as open(O_CREAT, 0666) would have */
        FILE *f = fchmod(fd, 0666 & ~current_umask()) == 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
                e = errno;
                close(fd);
                unlink(tmp);
                goto fail;
        }
        *ret = f;
        return 0;
fail:
        return bd_err_set(err, -e, "cannot write '%s': %s", path, strerror(e));
}

/* Whether rank 0 can write --json's file, before the benchmark: *ret_writable
 * is 0 or rank 0's negative errno (its message in err on rank 0), the same on
 * every rank. */
static int json_probe(const char *path, int *ret_writable, struct bd_err *err)
{
        char tmp[PATH_MAX];
        int r = rank == 0 ? json_temp(path, tmp, NULL, err) : 0;
        MPI_TRY(MPI_Bcast(&r, 1, MPI_INT, 0, MPI_COMM_WORLD));
        *ret_writable = r;
        return 0;
}

static int json_write(const char *path, const struct result *r, int n, struct bd_err *err)
{
        char tmp[PATH_MAX];
        FILE *f;
        int e = json_temp(path, tmp, &f, err);
        if (e < 0)
                return e;
        fprintf(f, "[\n");
        for (int i = 0; i < n; i++)
                fprintf(f, "  {\"bytes\": %zu, \"count\": %zu, \"type\": \"float\", \"ranks\": %d, \"time_us\": %s, "
                           "\"algbw_gbps\": %s, \"busbw_gbps\": %s, \"wrong\": %lld}%s\n",
                        r[i].bytes, r[i].bytes / sizeof(float), nranks, mllog_num(r[i].time_us),
                        mllog_num(r[i].algbw), nranks > 1 ? mllog_num(r[i].busbw) : "null", r[i].wrong, i + 1 < n ? "," : "");
        fprintf(f, "]\n");
        errno = 0;
        int failed = ferror(f);
        if (fflush(f) != 0 || fsync(fileno(f)) != 0)
                failed = 1;
        if (fclose(f) != 0 || failed || rename(tmp, path) != 0) {
                e = errno ? errno : EIO;
                unlink(tmp);
                return bd_err_set(err, -e, "cannot write '%s': %s", path, strerror(e));
        }
        return 0;
}

int main(int argc, char **argv)
{
        struct bd_err err;
        struct opts o;
        struct bufs b = { 0 };
        struct result *res = NULL;
        long long wrong_total = 0;
        int n = 0, r;
        /* options first: --help and usage errors do not start MPI */
        int rank0 = mllog_launch_rank() == 0;
        r = parse_args(argc, argv, &o, rank0 ? stdout : NULL, &err);
        if (r != 0) {
                if (r < 0 && rank0)
                        fprintf(stderr, "benchd-allreduce: %s\n", err.msg);
                return r > 0 ? 0 : 2;
        }
        if ((r = mpi_start(&argc, &argv, &err)) < 0)
                goto fatal;
        /* every rank sees the same argv and rank count: all refuse together */
        if (o.inject >= nranks) {
                if (rank == 0)
                        fprintf(stderr, "benchd-allreduce: --inject-error: rank %d does not exist (%d rank%s: 0 to %d)\n",
                                o.inject, nranks, nranks == 1 ? "" : "s", nranks - 1);
                MPI_Finalize();
                return 2;
        }
        /* --json: a path that cannot be written fails now, on every rank */
        if (o.json) {
                int writable = 0;
                if ((r = json_probe(o.json, &writable, &err)) < 0)
                        goto fatal;
                if (writable < 0) {
                        if (rank == 0)
                                fprintf(stderr, "benchd-allreduce: %s\n", err.msg);
                        MPI_Finalize();
                        return 1;
                }
        }
        char host[256] = "unknown";
        gethostname(host, sizeof(host) - 1);
        mllog_init(stdout, rank);
        MLLOG_START("init_start", NULL, NULL);
        MLLOG_EVENT("submission_benchmark", mllog_str("allreduce"), NULL);
        MLLOG_EVENT("submission_org", mllog_str("benchd"), NULL);
        MLLOG_EVENT("submission_division", mllog_str("open"), NULL);
        MLLOG_EVENT("submission_status", mllog_str("onprem"), NULL);
        MLLOG_EVENT("submission_platform", mllog_str(o.platform ? o.platform : host), NULL);

        if ((r = bufs_alloc(&o, &b, &err)) < 0)
                goto fatal;
        MLLOG_END("init_stop", NULL, NULL);
        MLLOG_START("run_start", NULL, NULL);

        if (rank == 0) {
                printf("# benchd-allreduce %s: %d ranks, backend %s, %ld iterations (%ld warmup) per size\n",
                       PACKAGE_VERSION, nranks, o.cuda ? "cuda (NCCL)" : "cpu (MPI)", o.iters, o.warmup);
                printf("# %12s %12s %6s %12s %10s %10s %8s\n", "size(B)", "count", "type", "time(us)", "algbw(GB/s)",
                       "busbw(GB/s)", "#wrong");
        }
        if ((r = run_sizes(&o, &b, &res, &n, &wrong_total, &err)) < 0)
                goto fatal;
        int status = wrong_total ? 1 : 0;
        if (rank == 0) {
                double busbw_sum = 0;
                for (int i = 0; i < n; i++)
                        busbw_sum += res[i].busbw;
                printf("# Out of bounds values : %lld %s\n", wrong_total, wrong_total ? "FAILED" : "OK");
                if (nranks > 1)
                        printf("# Avg bus bandwidth    : %.3f GB/s\n", n ? busbw_sum / n : 0);
                else
                        printf("# Avg bus bandwidth    : none (one rank moves nothing between ranks)\n");
                if (wrong_total)
                        fprintf(stderr, "benchd-allreduce: %lld wrong elements in the allreduce results\n", wrong_total);
                if (o.json && json_write(o.json, res, n, &err) < 0) {
                        fprintf(stderr, "benchd-allreduce: %s\n", err.msg);
                        status = 1;
                }
        }
        MLLOG_END("run_stop", NULL, wrong_total ? "\"status\": \"aborted\"" : "\"status\": \"success\"");
        free(res);
        bufs_free(&o, &b);
        MPI_Finalize();
        return status;

fatal:
        /* this rank failed: the others may be waiting in a collective */
        fprintf(stderr, "benchd-allreduce: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
}

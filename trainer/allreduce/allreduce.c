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

#include "mllog.h"

#define MPI_CHECK(call)                                                                          \
        do {                                                                                     \
                int _e = (call);                                                                 \
                if (_e != MPI_SUCCESS) {                                                         \
                        fprintf(stderr, "benchd-allreduce: %s:%d: %s failed (%d)\n", __FILE__,    \
                                __LINE__, #call, _e);                                            \
                        MPI_Abort(MPI_COMM_WORLD, 1);                                            \
                }                                                                                \
        } while (0)

#ifdef HAVE_NCCL
#define CUDA_CHECK(call)                                                                         \
        do {                                                                                     \
                cudaError_t _e = (call);                                                         \
                if (_e != cudaSuccess) {                                                         \
                        fprintf(stderr, "benchd-allreduce: %s:%d: %s: %s\n", __FILE__, __LINE__,  \
                                #call, cudaGetErrorString(_e));                                  \
                        MPI_Abort(MPI_COMM_WORLD, 1);                                            \
                }                                                                                \
        } while (0)
#define NCCL_CHECK(call)                                                                         \
        do {                                                                                     \
                ncclResult_t _e = (call);                                                        \
                if (_e != ncclSuccess) {                                                         \
                        fprintf(stderr, "benchd-allreduce: %s:%d: %s: %s\n", __FILE__, __LINE__,  \
                                #call, ncclGetErrorString(_e));                                  \
                        MPI_Abort(MPI_COMM_WORLD, 1);                                            \
                }                                                                                \
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

/* 0 to run, 1 to exit 0 (help/version), 2 on a usage error (message printed by rank 0) */
static int parse_args(int argc, char **argv, struct opts *o)
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
                case 'h': if (rank == 0) usage(stdout); return 1;
                case 'V': if (rank == 0) printf("benchd-allreduce %s\n", PACKAGE_VERSION); return 1;
                case ':':
                        if (rank == 0)
                                fprintf(stderr, "benchd-allreduce: option '%s' needs an argument\n", argv[optind - 1]);
                        return 2;
                default:
                        if (rank == 0)
                                fprintf(stderr, "benchd-allreduce: unknown option '%s' (see --help)\n", argv[optind - 1]);
                        return 2;
                }
                if (bad) {
                        if (rank == 0)
                                fprintf(stderr, "benchd-allreduce: %s, got '%s'\n", bad, optarg);
                        return 2;
                }
        }
        if (optind < argc) {
                if (rank == 0)
                        fprintf(stderr, "benchd-allreduce: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        /* every rank sees the same argv and rank count: all refuse together */
        if (o->inject >= nranks) {
                if (rank == 0)
                        fprintf(stderr, "benchd-allreduce: --inject-error: rank %d does not exist (%d rank%s: 0 to %d)\n",
                                o->inject, nranks, nranks == 1 ? "" : "s", nranks - 1);
                return 2;
        }
        if (o->min_bytes > o->max_bytes) {
                if (rank == 0)
                        fprintf(stderr, "benchd-allreduce: --min-bytes (%zu) is larger than --max-bytes (%zu)\n",
                                o->min_bytes, o->max_bytes);
                return 2;
        }
        /* MPI_Allreduce counts elements in an int (NCCL in a size_t) */
        if (!o->cuda && o->max_bytes / sizeof(float) > INT_MAX) {
                if (rank == 0)
                        fprintf(stderr, "benchd-allreduce: --max-bytes: at most %zu bytes with --backend cpu "
                                "(MPI_Allreduce takes at most INT_MAX floats), got %zu\n",
                                (size_t)INT_MAX * sizeof(float), o->max_bytes);
                return 2;
        }
#ifndef HAVE_NCCL
        if (o->cuda) {
                if (rank == 0)
                        fprintf(stderr, "benchd-allreduce: --backend cuda: built without CUDA/NCCL\n");
                return 2;
        }
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

/* One size: warm up, time iters, check the last result.  Returns the result
 * as seen by rank 0 (time: the slowest rank's). */
static struct result run_size(const struct opts *o, size_t count, float *send, float *recv, float *host,
                              void *comm_ctx)
{
        struct result res = { .bytes = count * sizeof(float) };
        (void) comm_ctx;
        double t0, t1;
        if (!o->cuda) {
                fill(send, count);
                for (long i = 0; i < o->warmup; i++)
                        MPI_CHECK(MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
                MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                t0 = MPI_Wtime();
                for (long i = 0; i < o->iters; i++)
                        MPI_CHECK(MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
                t1 = MPI_Wtime();
                memcpy(host, recv, count * sizeof(float));
        }
#ifdef HAVE_NCCL
        else {
                ncclComm_t comm = *(ncclComm_t *)comm_ctx;
                cudaStream_t stream;
                CUDA_CHECK(cudaStreamCreate(&stream));
                fill(host, count);
                CUDA_CHECK(cudaMemcpy(send, host, count * sizeof(float), cudaMemcpyHostToDevice));
                for (long i = 0; i < o->warmup; i++)
                        NCCL_CHECK(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
                CUDA_CHECK(cudaStreamSynchronize(stream));
                MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                t0 = MPI_Wtime();
                for (long i = 0; i < o->iters; i++)
                        NCCL_CHECK(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
                CUDA_CHECK(cudaStreamSynchronize(stream));
                t1 = MPI_Wtime();
                CUDA_CHECK(cudaMemcpy(host, recv, count * sizeof(float), cudaMemcpyDeviceToHost));
                CUDA_CHECK(cudaStreamDestroy(stream));
        }
#else
        else
                abort(); /* refused in parse_args */
#endif
        if (o->inject == rank)
                host[count / 2] += 1.0f;
        long long wrong = count_wrong(host, count);
        double t = (t1 - t0) / (double)o->iters, tmax;
        MPI_CHECK(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Reduce(&wrong, &res.wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
        res.time_us = tmax * 1e6;
        res.algbw = tmax > 0 ? (double)res.bytes / tmax / 1e9 : 0;
        res.busbw = res.algbw * 2.0 * (nranks - 1) / nranks;
        return res;
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
static int json_temp(const char *path, char tmp[PATH_MAX], FILE **ret)
{
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
                return -EISDIR;
        int n = snprintf(tmp, PATH_MAX, "%s.tmp.XXXXXX", path);
        if (n < 0 || n >= PATH_MAX)
                return -ENAMETOOLONG;
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (!ret) {
                close(fd);
                unlink(tmp);
                return 0;
        }
        /* mkostemp makes it 0600: as open(O_CREAT, 0666) would have */
        FILE *f = fchmod(fd, 0666 & ~current_umask()) == 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
                int e = errno;
                close(fd);
                unlink(tmp);
                return -e;
        }
        *ret = f;
        return 0;
}

static int json_write(const char *path, const struct result *r, int n)
{
        char tmp[PATH_MAX];
        FILE *f;
        int e = json_temp(path, tmp, &f);
        if (e < 0)
                return e;
        fprintf(f, "[\n");
        for (int i = 0; i < n; i++)
                fprintf(f, "  {\"bytes\": %zu, \"count\": %zu, \"type\": \"float\", \"ranks\": %d, \"time_us\": %s, "
                           "\"algbw_gbps\": %s, \"busbw_gbps\": %s, \"wrong\": %lld}%s\n",
                        r[i].bytes, r[i].bytes / sizeof(float), nranks, mllog_num(r[i].time_us),
                        mllog_num(r[i].algbw), mllog_num(r[i].busbw), r[i].wrong, i + 1 < n ? "," : "");
        fprintf(f, "]\n");
        errno = 0;
        int err = ferror(f);
        if (fflush(f) != 0 || fsync(fileno(f)) != 0)
                err = 1;
        if (fclose(f) != 0 || err || rename(tmp, path) != 0) {
                e = errno ? errno : EIO;
                unlink(tmp);
                return -e;
        }
        return 0;
}

int main(int argc, char **argv)
{
        MPI_CHECK(MPI_Init(&argc, &argv));
        MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
        MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
        struct opts o;
        int pr = parse_args(argc, argv, &o);
        if (pr) {
                MPI_Finalize();
                return pr == 1 ? 0 : 2;
        }
        /* --json: a path that cannot be written fails now, on every rank */
        if (o.json) {
                char probe[PATH_MAX];
                int r = rank == 0 ? json_temp(o.json, probe, NULL) : 0;
                if (r < 0)
                        fprintf(stderr, "benchd-allreduce: cannot write '%s': %s\n", o.json, strerror(-r));
                MPI_CHECK(MPI_Bcast(&r, 1, MPI_INT, 0, MPI_COMM_WORLD));
                if (r < 0) {
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

        size_t max_count = o.max_bytes / sizeof(float);
        float *send = NULL, *recv = NULL;
        float *hbuf = malloc(max_count * sizeof(float));
        void *comm_ctx = NULL;
#ifdef HAVE_NCCL
        ncclComm_t comm;
        if (o.cuda) {
                MPI_Comm local;
                int lrank, ndev;
                MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local));
                MPI_CHECK(MPI_Comm_rank(local, &lrank));
                MPI_Comm_free(&local);
                CUDA_CHECK(cudaGetDeviceCount(&ndev));
                CUDA_CHECK(cudaSetDevice(lrank % ndev));
                ncclUniqueId id;
                if (rank == 0)
                        NCCL_CHECK(ncclGetUniqueId(&id));
                MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD));
                NCCL_CHECK(ncclCommInitRank(&comm, nranks, id, rank));
                CUDA_CHECK(cudaMalloc((void **)&send, max_count * sizeof(float)));
                CUDA_CHECK(cudaMalloc((void **)&recv, max_count * sizeof(float)));
                comm_ctx = &comm;
        } else
#endif
        {
                send = malloc(max_count * sizeof(float));
                recv = malloc(max_count * sizeof(float));
        }
        if (!send || !recv || !hbuf) {
                fprintf(stderr, "benchd-allreduce: rank %d: out of memory for %zu-byte buffers\n", rank, o.max_bytes);
                MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MLLOG_END("init_stop", NULL, NULL);
        MLLOG_START("run_start", NULL, NULL);

        if (rank == 0) {
                printf("# benchd-allreduce %s: %d ranks, backend %s, %ld iterations (%ld warmup) per size\n",
                       PACKAGE_VERSION, nranks, o.cuda ? "cuda (NCCL)" : "cpu (MPI)", o.iters, o.warmup);
                printf("# %12s %12s %6s %12s %10s %10s %8s\n", "size(B)", "count", "type", "time(us)", "algbw(GB/s)",
                       "busbw(GB/s)", "#wrong");
        }
        int cap = 64, n = 0;
        struct result *res = calloc((size_t)cap, sizeof(*res));
        long long wrong_total = 0;
        double busbw_sum = 0;
        for (size_t bytes = o.min_bytes; bytes <= o.max_bytes;) {
                size_t count = bytes / sizeof(float);
                if (count == 0)
                        count = 1;
                struct result r = run_size(&o, count, send, recv, hbuf, comm_ctx);
                if (rank == 0) {
                        printf("  %12zu %12zu %6s %12.2f %10.3f %10.3f %8lld\n", r.bytes, count, "float", r.time_us,
                               r.algbw, r.busbw, r.wrong);
                        fflush(stdout);
                        char meta[512], value[512];
                        snprintf(value, sizeof(value),
                                 "{\"bytes\": %zu, \"time_us\": %s, \"algbw_gbps\": %s, \"busbw_gbps\": %s, \"wrong\": %lld}",
                                 r.bytes, mllog_num(r.time_us), mllog_num(r.algbw), mllog_num(r.busbw), r.wrong);
                        snprintf(meta, sizeof(meta), "\"ranks\": %d", nranks);
                        MLLOG_EVENT("allreduce_result", value, meta);
                        if (n == cap)
                                res = realloc(res, (size_t)(cap *= 2) * sizeof(*res));
                        res[n++] = r;
                        wrong_total += r.wrong;
                        busbw_sum += r.busbw;
                }
                if (bytes > SIZE_MAX / (size_t)o.factor)
                        break;
                bytes *= (size_t)o.factor;
        }
        MPI_CHECK(MPI_Bcast(&wrong_total, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
        int status = wrong_total ? 1 : 0;
        if (rank == 0) {
                printf("# Out of bounds values : %lld %s\n", wrong_total, wrong_total ? "FAILED" : "OK");
                printf("# Avg bus bandwidth    : %.3f GB/s\n", n ? busbw_sum / n : 0);
                if (wrong_total)
                        fprintf(stderr, "benchd-allreduce: %lld wrong elements in the allreduce results\n", wrong_total);
                if (o.json) {
                        int r = json_write(o.json, res, n);
                        if (r < 0) {
                                fprintf(stderr, "benchd-allreduce: cannot write '%s': %s\n", o.json, strerror(-r));
                                status = 1;
                        }
                }
        }
        MLLOG_END("run_stop", NULL, wrong_total ? "\"status\": \"aborted\"" : "\"status\": \"success\"");
        free(res);
        free(hbuf);
#ifdef HAVE_NCCL
        if (o.cuda) {
                cudaFree(send);
                cudaFree(recv);
                ncclCommDestroy(comm);
        } else
#endif
        {
                free(send);
                free(recv);
        }
        MPI_Finalize();
        return status;
}

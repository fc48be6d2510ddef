/* trun.c: the trainers' shared run helpers (trun.h). */
#include "config.h"

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mllog.h"
#include "parallel.h"
#include "trun.h"

double trun_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int trun_rate_decimals(double v)
{
        return v < 10 ? 3 : v < 100 ? 2 : 1;
}

int trun_agree(int r)
{
        int all = r;
        MPI_Allreduce(&r, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        return all;
}

const char *trun_epoch_meta(long epoch)
{
        static char b[4][64];
        static int next;
        char *s = b[next++ % 4];
        snprintf(s, 64, "\"epoch_num\": %ld", epoch);
        return s;
}

void trun_print_err(const char *prog, const struct bd_dp *dp, const struct bd_err *err)
{
        if (dp->size > 1)
                fprintf(stderr, "%s: rank %d: %s\n", prog, dp->rank, err->msg);
        else
                fprintf(stderr, "%s: %s\n", prog, err->msg);
}

static void default_seed(uint64_t *seed, int given)
{
        if (given)
                return;
        uint64_t s = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
        MPI_Bcast(&s, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        *seed = s & 0xffffffffu;
}

static int default_threads(int threads, const struct bd_dp *dp)
{
        if (threads > 0)
                return threads;
        int per = parallel_cpus() / (dp->local_size > 0 ? dp->local_size : 1);
        return per > 0 ? per : 1;
}

static void log_start(const char *benchmark, const char *platform)
{
        char host[256] = "unknown";
        gethostname(host, sizeof(host) - 1);
        const char *cleared = getenv("BENCHD_CACHE_CLEARED");
        MLLOG_EVENT("cache_clear", cleared && !strcmp(cleared, "1") ? "true" : "false", NULL);
        MLLOG_START("init_start", NULL, NULL);
        MLLOG_EVENT("submission_benchmark", mllog_str(benchmark), NULL);
        MLLOG_EVENT("submission_org", mllog_str("benchd"), NULL);
        MLLOG_EVENT("submission_division", mllog_str("closed"), NULL);
        MLLOG_EVENT("submission_status", mllog_str("onprem"), NULL);
        MLLOG_EVENT("submission_platform", mllog_str(platform ? platform : host), NULL);
}

void trun_start(struct topt_common *c, const char *benchmark, const struct bd_dp *dp)
{
        default_seed(&c->seed, c->seed_given);
        log_start(benchmark, c->platform);
        c->threads = default_threads(c->threads, dp);
        if (c->benchmark_steps > 0)
                c->max_steps = c->warmup_steps + c->benchmark_steps;
}

int trun_resume(const char *dir, const char *file, const char *model, struct bd_model *m, struct bd_sgd *sgd,
                char *path, size_t pathlen, struct bd_ckpt_meta *meta, struct bd_err *err)
{
        if (!dir)
                return 0;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return bd_err_set(err, -errno, "checkpoint directory '%s': %m", dir);
        snprintf(path, pathlen, "%s/%s", dir, file);
        if (access(path, F_OK) < 0)
                return 0;
        *meta = (struct bd_ckpt_meta){ 0 };
        snprintf(meta->model, sizeof(meta->model), "%s", model);
        int r = bd_ckpt_load(path, m, sgd, meta, err);
        if (r < 0)
                return r;
        if (strcmp(meta->model, model) != 0)
                return bd_err_set(err, -EINVAL, "checkpoint '%s' holds %s, this run trains %s", path, meta->model,
                                  model);
        return 1;
}

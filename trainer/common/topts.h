/* topts.h: a trainer's command line: one table of long options (name, id,
 * argument, help) that drives both getopt_long and --help, the options every
 * trainer has, and one parser (topt_parse) that starts each option from the
 * built-in value of its key in the trainer's workload file (workloads/),
 * then reads argv.  The parsers of bounded numbers and lists return 0 or
 * -EINVAL (the caller says what the option expects).
 */
#ifndef BD_TOPTS_H
#define BD_TOPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

struct topt {
        const char *name;               /* without the dashes; a workload key's with '_' as '-' */
        int id;                         /* getopt_long's return value */
        const char *arg;                /* NULL: a switch */
        const char *help;               /* '\n' continues on the next line, indented */
};

/* An integer (or number, finite) in [lo, hi]. */
int topt_int(const char *s, long lo, long hi, long *ret);
int topt_num(const char *s, double lo, double hi, double *ret);
/* "a,b,c": at most max increasing numbers in [lo, hi]; "" is none. */
int topt_num_list(const char *s, double lo, double hi, double *ret, int max, int *ret_n);

/* ---- the options every trainer has (--data, --threads .. --version) ---- */

struct topt_common {
        const char *data;               /* the COCO 2017 tree */
        int threads;                    /* 0: CPUs / ranks on the node */
        int loader_workers;             /* 0: 1 */
        int cuda, amp;                  /* --backend cuda, --precision amp */
        int plan;                       /* --backend plan: the op graph without arithmetic (ops-plan.c) */
        int64_t max_steps;              /* 0: no limit */
        const char *pretrained;
        const char *platform;           /* NULL: the host name */
        uint64_t seed;
        int seed_given;
        const char *checkpoint;         /* directory */
        int synthetic;
        int log_interval;               /* steps between progress lines */
        int64_t inject_nan;             /* testing: the step (1-based) before which rank 0's weights go NaN */
        int64_t benchmark_steps;        /* throughput mode (tbench.h): steps timed; 0: off */
        int64_t warmup_steps;           /* steps before them, not timed (default 5) */
        const char *result;             /* the JSON result (tbench.h) */
        int fixed;                      /* --schedule fixed: the whole schedule, never stopped at the target */
        double bucket_mb;               /* gradient allreduce buckets of about this many MiB (default 16) */
        int overlap;                    /* 1: each bucket's allreduce starts in the backward (default); 0: after */
        int sync_bn;                    /* 1: trained batch norm's statistics over all ranks (dp.h); 0: each rank's (default) */
        const char *trace;              /* --trace FILE: FILE.rankR.json (ttrace.h); NULL: none */
        int64_t trace_steps;            /* the last steps the trace keeps (default 100) */
};

/* Ids: a trainer's own from TOPT_OWN, the common ones from TOPT_DATA. */
enum {
        TOPT_OWN = 256,
        TOPT_DATA = 512, TOPT_THREADS, TOPT_WORKERS, TOPT_BACKEND, TOPT_PRECISION, TOPT_MAX_STEPS, TOPT_PRETRAINED,
        TOPT_PLATFORM, TOPT_SEED, TOPT_CHECKPOINT, TOPT_SYNTHETIC, TOPT_LOG, TOPT_INJECT_NAN, TOPT_BENCH_STEPS,
        TOPT_WARMUP_STEPS, TOPT_RESULT, TOPT_SCHEDULE, TOPT_BUCKET, TOPT_OVERLAP, TOPT_SYNC_BN, TOPT_TRACE,
        TOPT_TRACE_STEPS,
        TOPT_HELP, TOPT_VERSION,
};

/* Their rows of a trainer's table: --data first, the others last in
 * --help (CKPT is the checkpoint file's name, SYNTH what --synthetic
 * draws). */
#define TOPT_DATA_ROW { "data", TOPT_DATA, "DIR", "COCO 2017 tree: train2017/, val2017/, annotations/" }
#define TOPT_COMMON_ROWS(CKPT, SYNTH)                                                                               \
        { "threads", TOPT_THREADS, "N", "compute threads per rank (default: CPUs / ranks on the node)" },           \
        { "loader-workers", TOPT_WORKERS, "N", "data loader threads per rank (default 1)" },                       \
        { "backend", TOPT_BACKEND, "NAME", "cpu (default), cuda, or plan (the step's operations without their\n"   \
          "arithmetic: counts what the model asks of a GPU, on any host)" },                                    \
        { "precision", TOPT_PRECISION, "P", "fp32 (default) or amp (cuda or plan)" },                              \
        { "max-steps", TOPT_MAX_STEPS, "N", "stop after N steps (0: no limit)" },                                  \
        { "schedule", TOPT_SCHEDULE, "S", "time-to-train (default: stop at the target) or fixed (train the whole\n"  \
          "schedule, evaluate as configured and at its end; success when the target was met)" },                 \
        { "pretrained", TOPT_PRETRAINED, "FILE", "backbone weights (benchd weights file, torchvision names)" },     \
        { "platform", TOPT_PLATFORM, "NAME", "MLPerf submission_platform (default: the host name)" },              \
        { "seed", TOPT_SEED, "N", "random seed (default: from the clock)" },                                       \
        { "checkpoint", TOPT_CHECKPOINT, "DIR", "save DIR/" CKPT " after every epoch and resume from it" },        \
        { "trace", TOPT_TRACE, "FILE", "each rank writes FILE.rankR.json: its last steps' phases (data, forward,\n" \
          "backward, each bucket's allreduce, the wait for them, optimizer, evaluation) as Chrome trace events" }, \
        { "trace-steps", TOPT_TRACE_STEPS, "N", "the steps a trace keeps, the last ones (default 100)" },           \
        { "bucket-mb", TOPT_BUCKET, "MB", "gradient allreduce in buckets of about MB MiB (default 16)" },         \
        { "overlap", TOPT_OVERLAP, "0|1", "1: each bucket's allreduce starts during the backward (default);\n"      \
          "0: all of them after it" },                                                                             \
        { "sync-bn", TOPT_SYNC_BN, "0|1", "1: synchronised batch norm: trained batch norm's statistics over\n"      \
          "all ranks' images, as one rank with the whole batch would have them;\n"                               \
          "0: each rank's own images' (default)" },                                                               \
        { "synthetic", TOPT_SYNTHETIC, NULL, SYNTH ", no data, no evaluation" },                                   \
        { "log-interval", TOPT_LOG, "N", "steps between progress lines (default 20)" },                            \
        { "inject-nan", TOPT_INJECT_NAN, "STEP", "testing: NaN weights at step STEP on rank 0 (a diverged model)" }, \
        { "benchmark-steps", TOPT_BENCH_STEPS, "N", "throughput mode: time N steps (after --warmup-steps), each\n"     \
          "synchronised with the device; no evaluation; images/s with count, mean, sd, min,\n"                     \
          "max and 95% interval" },                                                                                \
        { "warmup-steps", TOPT_WARMUP_STEPS, "W", "throughput mode: steps before the timed ones (default 5)" },    \
        { "result", TOPT_RESULT, "FILE", "write the run's result as JSON to FILE (throughput mode)" },              \
        { "help", TOPT_HELP, NULL, "show this help" },                                                             \
        { "version", TOPT_VERSION, NULL, "show the version" }

/* ---- the parser ---- */

/* A trainer's command line. */
struct topt_prog {
        const char *workload;           /* its workload (workloads/NAME.json): the program's name, the built-in values */
        const char *intro;              /* --help's text before the options */
        const struct topt *opts;
        size_t nopts;
        /* Sets the trainer's own option id from arg (for the built-in values:
         * a string that lives only during the call); NULL, or what arg
         * should have been ("an integer from 1 to 65536"). */
        const char *(*set)(void *o, int id, const char *arg);
};

/* Which of a trainer's own options the command line gave (a built-in value
 * is not given). */
struct topt_given {
        bool id[TOPT_DATA - TOPT_OWN];
};
static inline bool topt_given(const struct topt_given *g, int id)
{
        return id >= TOPT_OWN && id < TOPT_DATA && g->id[id - TOPT_OWN];
}

/* Reads a command line into o (through p->set) and c: first c's defaults
 * (log_interval 20, warmup_steps 5, everything else 0 or NULL), then each
 * built-in value of the workload's section as its option would (key k is
 * --k with '-' for '_', a list its items joined by commas: what benchctl
 * render passes), then argv; given: what argv gave.  0: run;
 * 1: --help or --version, printed to out unless it is NULL (exit 0);
 * -EINVAL: a usage error, in err (one line without the program's name). */
int topt_parse(const struct topt_prog *p, int argc, char **argv, void *o, struct topt_common *c,
               struct topt_given *given, FILE *out, struct bd_err *err);
/* The checks of the common options once the trainer's own are done:
 * --data or --synthetic, amp only on CUDA. */
int topt_check(const struct topt_common *c, struct bd_err *err);

#endif

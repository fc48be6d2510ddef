/* topts.h: the pieces of a trainer's command line that every trainer shares:
 * one table of long options (name, id, argument, help) that drives both
 * getopt_long and --help, and the parsers of bounded numbers and lists the
 * option switch calls.  Each parser returns 0 or -EINVAL (the caller names
 * the option and what it expects in its one-line error).
 */
#ifndef BD_TOPTS_H
#define BD_TOPTS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

struct topt {
        const char *name;               /* without the dashes */
        int id;                         /* getopt_long's return value */
        const char *arg;                /* NULL: a switch */
        const char *help;               /* '\n' continues on the next line, indented */
};

/* Prints intro, then one aligned line (or more) per option. */
void topt_usage(FILE *f, const char *intro, const struct topt *opts, size_t n);
/* Fills lo (n + 1 entries, the last one zero) for getopt_long. */
void topt_long(const struct topt *opts, size_t n, struct option *lo);
/* The name of the option with this id ("?" when none). */
const char *topt_name(const struct topt *opts, size_t n, int id);

/* An integer (or number, finite) in [lo, hi]. */
int topt_int(const char *s, long lo, long hi, long *ret);
int topt_num(const char *s, double lo, double hi, double *ret);
/* "a,b,c": at most max increasing numbers in [lo, hi]; "" is none. */
int topt_num_list(const char *s, double lo, double hi, double *ret, int max, int *ret_n);

/* ---- the options every trainer has (--threads .. --version) ---- */

struct topt_common {
        int threads;                    /* 0: CPUs / ranks on the node */
        int loader_workers;             /* 0: 1 */
        int cuda, amp;                  /* --backend cuda, --precision amp */
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
};

/* Their ids (a trainer's own ids stay below 512). */
enum {
        TOPT_THREADS = 512, TOPT_WORKERS, TOPT_BACKEND, TOPT_PRECISION, TOPT_MAX_STEPS, TOPT_PRETRAINED,
        TOPT_PLATFORM, TOPT_SEED, TOPT_CHECKPOINT, TOPT_SYNTHETIC, TOPT_LOG, TOPT_INJECT_NAN, TOPT_BENCH_STEPS, TOPT_WARMUP_STEPS,
        TOPT_RESULT, TOPT_HELP, TOPT_VERSION,
};

/* Their rows of a trainer's table, last in --help: CKPT is the checkpoint
 * file's name, SYNTH what --synthetic draws. */
#define TOPT_COMMON_ROWS(CKPT, SYNTH)                                                                               \
        { "threads", TOPT_THREADS, "N", "compute threads per rank (default: CPUs / ranks on the node)" },           \
        { "loader-workers", TOPT_WORKERS, "N", "data loader threads per rank (default 1)" },                       \
        { "backend", TOPT_BACKEND, "NAME", "cpu (default) or cuda" },                                              \
        { "precision", TOPT_PRECISION, "P", "fp32 (default) or amp (cuda only)" },                                 \
        { "max-steps", TOPT_MAX_STEPS, "N", "stop after N steps (0: no limit)" },                                  \
        { "pretrained", TOPT_PRETRAINED, "FILE", "backbone weights (benchd weights file, torchvision names)" },     \
        { "platform", TOPT_PLATFORM, "NAME", "MLPerf submission_platform (default: the host name)" },              \
        { "seed", TOPT_SEED, "N", "random seed (default: from the clock)" },                                       \
        { "checkpoint", TOPT_CHECKPOINT, "DIR", "save DIR/" CKPT " after every epoch and resume from it" },        \
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

/* The defaults (log_interval 20, warmup_steps 5, everything else 0). */
void topt_common_defaults(struct topt_common *c);
/* The program behind --help and --version. */
struct topt_prog {
        const char *name;               /* "benchd-ssd" */
        void (*usage)(FILE *f);
};
/* For the default case of a trainer's getopt_long switch: the common option
 * id, and what getopt_long returns for a missing argument (':') or an
 * unknown option.  0: a common option, with *bad set to what it expects when
 * arg is not valid; 1: --help or --version, printed to out unless it is NULL
 * (exit 0); -EINVAL: a missing argument or an unknown option, in err. */
int topt_common(int id, const char *arg, struct topt_common *c, const char **bad, const struct topt_prog *p,
                FILE *out, char **argv, struct bd_err *err);

#endif

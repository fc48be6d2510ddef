/* opts.h: one table per command drives its option parsing and its --help.
 *
 * Each command declares
 *     static const struct bd_option options[] = {
 *             { "system", 's', "SYSTEM", "system to use" }, ...
 *             COMMON_SYSTEM_OPTIONS,  (where it reads systems)
 *             { NULL }
 *     };
 * and parses its command line with
 *     _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
 *     const char *arg;
 *     int c;
 *     while ((c = opts_next(&o, &arg)) > 0)
 *             ...its own options...
 *     int next = opts_finish(&o, 1, 1, "RUN");
 *     if (next < 0)
 *             return opts_exit(next);
 * opts_next() prints --help and usage errors itself and ends the loop on
 * them (so does opts_number() on a bad number); opts_exit() then gives
 * BD_EXIT_OK after --help, BD_EXIT_USAGE after an error.  opts_next() also
 * takes the common system options itself: --systems-dir goes to
 * ctx->systems_dir, each --set to o.sets, which the command passes to
 * ctx_load_system().  _cleanup_opts_ frees what o holds at every return.
 */
#ifndef BD_OPTS_H
#define BD_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "macro.h"

/* benchctl's exit status, one value per kind of failure, so that scripts
 * and CI pipelines can tell them apart (man benchctl(1), EXIT STATUS). */
enum bd_exit {
        BD_EXIT_OK = 0,
        BD_EXIT_FAIL = 1,               /* failed otherwise: a file, the results store, an unknown run, a refusal */
        BD_EXIT_USAGE = 2,              /* bad command line */
        BD_EXIT_CONFIG = 3,             /* bad configuration: unknown system or workload, a system file or
                                         * --set that does not hold, a trainer this build lacks */
        BD_EXIT_UNREACHABLE = 4,        /* the scheduler (the Slurm controller) or a node's benchd did not answer */
        BD_EXIT_RUN = 5,                /* the run ended and not every trial completed: failed, cancelled, did
                                         * not converge */
        BD_EXIT_DEGRADED = 6,           /* health: a node is degraded, none failed */
        BD_EXIT_UNHEALTHY = 7,          /* health: a node failed (or did not answer) */
        BD_EXIT_SIGNAL = 128,           /* + the signal's number: interrupted (SIGINT 130, SIGTERM 143) */
};

struct bd_option {
        const char *name;       /* long name */
        int key;                /* short letter, or a value >= 256 for long-only options */
        const char *arg;        /* argument name, NULL for a flag */
        const char *help;
};

struct bd_command;
struct bd_ctx;

/* The options of every command that reads systems, which opts_next() takes
 * itself. */
#define OPT_SYSTEMS_DIR 300
#define OPT_SET 301
#define OPT_WORKLOADS_DIR 302
#define SYSTEMS_DIR_OPTION { "systems-dir", OPT_SYSTEMS_DIR, "DIR", "look for system files in DIR first" }
#define WORKLOADS_DIR_OPTION { "workloads-dir", OPT_WORKLOADS_DIR, "DIR", "look for workload files in DIR first" }
#define COMMON_SYSTEM_OPTIONS \
        SYSTEMS_DIR_OPTION, \
        WORKLOADS_DIR_OPTION, \
        { "set", OPT_SET, "KEY=VALUE", "override a configuration value (dotted key; repeatable)" }

struct bd_opts {
        int argc;
        char **argv;
        const struct bd_option *options;
        const struct bd_command *cmd;
        struct bd_ctx *ctx;     /* where --systems-dir goes; NULL where the table has no SYSTEMS_DIR_OPTION */
        char **sets;            /* the --set values in order, NULL-terminated (NULL when none); the array is
                                 * o's, the strings are not */
        size_t nsets;
        int end;                /* how the option loop ended: 0, OPTS_HELP or OPTS_USAGE */
        void *getopt_state;
};
#define OPTS_INIT(ac, av, table, command, context) \
        { .argc = (ac), .argv = (av), .options = (table), .cmd = (command), .ctx = (context) }

/* opts_next() and opts_finish() below 0 */
enum {
        OPTS_USAGE = -1,        /* a usage error, printed */
        OPTS_HELP = -2,         /* --help, printed */
};

/* Returns the next option's key (> 0), or ends the loop: 0 at the end of
 * the options, OPTS_HELP after printing --help, OPTS_USAGE after printing a
 * usage error.  *ret_arg is the option's argument.  --systems-dir and --set
 * are taken here (see struct bd_opts), not returned. */
int opts_next(struct bd_opts *o, const char **ret_arg);
/* Appends a KEY=VALUE override to o->sets; v must outlive o. */
void opts_add_set(struct bd_opts *o, const char *v);
/* Frees what o holds (the getopt state, the array of o->sets). */
void opts_release(struct bd_opts *o);
#define _cleanup_opts_ _cleanup_(opts_release)
/* After the option loop: frees the getopt state and checks that min..max
 * positional arguments follow (what names the first missing one).  Returns
 * the index of the first one; below 0 where the loop ended on --help
 * (OPTS_HELP) or an error (OPTS_USAGE), or after printing a usage error
 * (OPTS_USAGE). */
int opts_finish(struct bd_opts *o, int min, int max, const char *what);
/* what for a workload operand: "WORKLOAD (ssd, maskrcnn or ...)", the
 * workloads listed (every file read) only when it is missing. */
extern const char opts_workload[];
/* The exit status of a command whose options ended in r < 0: BD_EXIT_OK
 * after --help, BD_EXIT_USAGE after a usage error. */
int opts_exit(int r);
/* In the option loop: parses an option's number in [min, max] into *ret;
 * otherwise prints a usage error, returns -1 and ends the loop (the next
 * opts_next() returns OPTS_USAGE). */
int opts_number(struct bd_opts *o, const char *opt, const char *arg, long min, long max, long *ret);
void opts_help(const struct bd_command *cmd, const struct bd_option *options, FILE *f);
/* The exit status of an error (negative errno) from the scheduler or a
 * node: BD_EXIT_UNREACHABLE where nobody answered (-EHOSTUNREACH,
 * -ECONNREFUSED, -ETIMEDOUT...), else BD_EXIT_FAIL. */
int exit_for_error(int r);
/* Prints "benchctl: MESSAGE" to stderr. */
void bd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "benchctl: warning: ..." on stderr */
void bd_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Each line of lines as a warning. */
struct bd_buf;
void print_warnings(const struct bd_buf *lines);
/* At the end of a command: flushes stdout; a write error turns ret into a failure. */
int finish_output(int ret);
/* Prints "benchctl CMD: MESSAGE" plus a hint to --help, returns BD_EXIT_USAGE. */
int usage_error(const struct bd_command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

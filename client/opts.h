/* opts.h: one table per command drives its option parsing and its --help.
 *
 * Each command declares
 *     static const struct bd_option options[] = {
 *             { "system", 's', "SYSTEM", "system to use" }, ...
 *             { NULL }
 *     };
 * and loops over opts_next().  Errors print one line and return -1; the
 * caller exits with BD_EXIT_USAGE.
 */
#ifndef BD_OPTS_H
#define BD_OPTS_H

#include <stdio.h>

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
        BD_EXIT_SIGNAL = 128,           /* + the signal's number: interrupted (SIGINT 130, SIGTERM 143) */
};

struct bd_option {
        const char *name;       /* long name */
        int key;                /* short letter, or a value >= 256 for long-only options */
        const char *arg;        /* argument name, NULL for a flag */
        const char *help;
};

struct bd_command;

struct bd_opts {
        int argc;
        char **argv;
        const struct bd_option *options;
        const struct bd_command *cmd;
        void *getopt_state;
};

/* Returns the next option's key, 0 at the end of the options, -1 on an error
 * (already printed), 'h' for --help (after printing it).  *ret_arg is the
 * option's argument. */
int opts_next(struct bd_opts *o, const char **ret_arg);
void opts_release(struct bd_opts *o);
/* After the option loop (c is its last opts_next() value): releases o and
 * checks that min..max positional arguments follow (what names the first
 * missing one).  Returns the index of the first one, or -1 after printing a
 * usage error. */
int opts_finish(struct bd_opts *o, int c, int min, int max, const char *what);
/* Parses an option's number in [min, max]; prints a usage error and returns -1 otherwise. */
int opts_number(const struct bd_command *cmd, const char *opt, const char *arg, long min, long max, long *ret);
void opts_help(const struct bd_command *cmd, const struct bd_option *options, FILE *f);
/* The exit status of an error (negative errno) from the scheduler or a
 * node: BD_EXIT_UNREACHABLE where nobody answered (-EHOSTUNREACH,
 * -ECONNREFUSED, -ETIMEDOUT...), else BD_EXIT_FAIL. */
int exit_for_error(int r);
/* Prints "benchctl: MESSAGE" to stderr. */
void bd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "benchctl: warning: ..." on stderr */
void bd_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* At the end of a command: flushes stdout; a write error turns ret into a failure. */
int finish_output(int ret);
/* Prints "benchctl CMD: MESSAGE" plus a hint to --help, returns BD_EXIT_USAGE. */
int usage_error(const struct bd_command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

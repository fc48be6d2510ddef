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
#include <stdio.h>

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

#endif

/* opts.c: getopt_long driven by a table of options that also writes --help. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "benchctl.h"
#include "macro.h"
#include "opts.h"
#include "strutil.h"

struct state {
        struct option *longopts;
        char *shortopts;
};

static struct state *state_new(const struct bd_option *options)
{
        struct state *s = xcalloc(1, sizeof(*s));
        size_t n = 0;
        while (options[n].name)
                n++;
        s->longopts = xcalloc(n + 2, sizeof(struct option));
        s->shortopts = xcalloc(2 * n + 3, 1);
        char *p = s->shortopts;
        *p++ = ':';
        for (size_t i = 0; i < n; i++) {
                s->longopts[i].name = options[i].name;
                s->longopts[i].has_arg = options[i].arg ? required_argument : no_argument;
                s->longopts[i].val = options[i].key;
                if (options[i].key < 256) {
                        *p++ = (char)options[i].key;
                        if (options[i].arg)
                                *p++ = ':';
                }
        }
        s->longopts[n].name = "help";
        s->longopts[n].val = 'h';
        *p++ = 'h';
        return s;
}

static void state_free(struct bd_opts *o)
{
        struct state *s = o->getopt_state;
        if (s) {
                free(s->longopts);
                free(s->shortopts);
                free(s);
                o->getopt_state = NULL;
        }
}

void opts_release(struct bd_opts *o)
{
        state_free(o);
        free(o->sets);
        o->sets = NULL;
        o->nsets = 0;
}

void opts_add_set(struct bd_opts *o, const char *v)
{
        o->sets = xrealloc(o->sets, (o->nsets + 2) * sizeof(char *));
        o->sets[o->nsets++] = (char *)v;
        o->sets[o->nsets] = NULL;
}

static void say(const char *prefix, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void say(const char *prefix, const char *fmt, va_list ap)
{
        fputs(prefix, stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
}

void bd_error(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        say("benchctl: ", fmt, ap);
        va_end(ap);
}

void bd_warning(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        say("benchctl: warning: ", fmt, ap);
        va_end(ap);
}

void print_warnings(const struct bd_buf *lines)
{
        for (const char *p = lines->s; p && *p;) {
                const char *nl = strchr(p, '\n');
                int n = nl ? (int)(nl - p) : (int)strlen(p);
                bd_warning("%.*s", n, p);
                p = nl ? nl + 1 : p + n;
        }
}

int finish_output(int ret)
{
        /* output that did not reach its destination is a failure */
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "benchctl: cannot write to standard output: %s\n", strerror(errno));
                return BD_EXIT_FAIL;
        }
        return ret;
}

int usage_error(const struct bd_command *cmd, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "benchctl%s%s: ", cmd ? " " : "", cmd ? cmd->name : "");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, " (see 'benchctl %s%s--help')\n", cmd ? cmd->name : "", cmd ? " " : "");
        va_end(ap);
        return BD_EXIT_USAGE;
}

int opts_next(struct bd_opts *o, const char **ret_arg)
{
        if (o->end < 0)
                return o->end;  /* opts_number() found an error */
        if (!o->getopt_state) {
                o->getopt_state = state_new(o->options);
                optind = 1;
                opterr = 0;
        }
        struct state *s = o->getopt_state;
        for (;;) {
                int prev = optind;
                int c = getopt_long(o->argc, o->argv, s->shortopts, s->longopts, NULL);
                *ret_arg = optarg;
                if (c == -1)
                        return 0;
                if (c == 'h') {
                        opts_help(o->cmd, o->options, stdout);
                        return o->end = OPTS_HELP;
                }
                if (c == '?' || c == ':') {
                        /* getopt has moved past the bad option (operands before it are
                         * permuted behind: argv[prev] may be one of them) */
                        int at = optind > prev ? optind - 1 : prev;
                        const char *bad = at < o->argc ? o->argv[at] : "?";
                        if (bad[0] != '-' && prev < o->argc)
                                bad = o->argv[prev];
                        if (c == ':')
                                usage_error(o->cmd, "option '%s' needs an argument", bad);
                        else if (optopt && optopt < 256 && bad[0] == '-' && bad[1] != '-')
                                usage_error(o->cmd, "unknown option '-%c'", optopt);
                        else
                                usage_error(o->cmd, "unknown option '%s'", bad);
                        return o->end = OPTS_USAGE;
                }
                if (c == OPT_SYSTEMS_DIR)
                        o->ctx->systems_dir = optarg;
                else if (c == OPT_WORKLOADS_DIR) {
                        o->ctx->workloads_dir = optarg;
                        ctx_workload_path(o->ctx);
                }
                else if (c == OPT_SET)
                        opts_add_set(o, optarg);
                else
                        return c;
        }
}

void opts_help(const struct bd_command *cmd, const struct bd_option *options, FILE *f)
{
        fprintf(f, "usage: benchctl %s %s\n\n%s\n\noptions:\n", cmd->name, cmd->usage, cmd->summary);
        for (const struct bd_option *o = options; o->name; o++) {
                char left[64];
                if (o->key < 256)
                        snprintf(left, sizeof(left), "-%c, --%s%s%s", o->key, o->name, o->arg ? " " : "",
                                 o->arg ? o->arg : "");
                else
                        snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
                fprintf(f, "  %-28s %s\n", left, o->help);
        }
        fprintf(f, "  %-28s %s\n", "-h, --help", "show this help");
}

const char opts_workload[] = "WORKLOAD";

int opts_finish(struct bd_opts *o, int min, int max, const char *what)
{
        int next = optind;
        state_free(o);
        if (o->end < 0)
                return o->end;
        int n = o->argc - next;
        if (n < min) {
                usage_error(o->cmd, "missing %s", what == opts_workload ? workload_operand() : what);
                return OPTS_USAGE;
        }
        if (n > max) {
                usage_error(o->cmd, "unexpected argument '%s'", o->argv[next + max]);
                return OPTS_USAGE;
        }
        return next;
}

int opts_exit(int r)
{
        return r == OPTS_HELP ? BD_EXIT_OK : BD_EXIT_USAGE;
}

int opts_number(struct bd_opts *o, const char *opt, const char *arg, long min, long max, long *ret)
{
        long v;
        if (str_parse_long(arg, &v) < 0 || v < min || v > max) {
                if (max == LONG_MAX)
                        usage_error(o->cmd, "--%s: expected a number >= %ld, got '%s'", opt, min, arg);
                else
                        usage_error(o->cmd, "--%s: expected a number from %ld to %ld, got '%s'", opt, min, max, arg);
                return o->end = OPTS_USAGE;
        }
        *ret = v;
        return 0;
}

int exit_for_error(int r)
{
        switch (-r) {
        case EHOSTUNREACH:
        case EHOSTDOWN:
        case ENETUNREACH:
        case ECONNREFUSED:
        case ECONNRESET:
        case ETIMEDOUT:
                return BD_EXIT_UNREACHABLE;
        default:
                return BD_EXIT_FAIL;
        }
}

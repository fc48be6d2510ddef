/* topts.c: shared pieces of the trainers' command lines. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "strutil.h"
#include "topts.h"

void topt_usage(FILE *f, const char *intro, const struct topt *opts, size_t n)
{
        fputs(intro, f);
        for (size_t i = 0; i < n; i++) {
                char lhs[64];
                snprintf(lhs, sizeof(lhs), "--%s%s%s", opts[i].name, opts[i].arg ? " " : "",
                         opts[i].arg ? opts[i].arg : "");
                /* a long left side pushes its help to the next line */
                if (strlen(lhs) > 24)
                        fprintf(f, "  %s\n  %-24s", lhs, "");
                else
                        fprintf(f, "  %-24s", lhs);
                for (const char *p = opts[i].help; *p; p++) {
                        fputc(*p, f);
                        if (*p == '\n')
                                fprintf(f, "  %-24s", "");
                }
                fputc('\n', f);
        }
}

void topt_long(const struct topt *opts, size_t n, struct option *lo)
{
        for (size_t i = 0; i < n; i++)
                lo[i] = (struct option){ opts[i].name, opts[i].arg ? required_argument : no_argument, NULL, opts[i].id };
        lo[n] = (struct option){ NULL, 0, NULL, 0 };
}

const char *topt_name(const struct topt *opts, size_t n, int id)
{
        for (size_t i = 0; i < n; i++)
                if (opts[i].id == id)
                        return opts[i].name;
        return "?";
}

int topt_int(const char *s, long lo, long hi, long *ret)
{
        long v;
        if (str_parse_long(s, &v) < 0 || v < lo || v > hi)
                return -EINVAL;
        *ret = v;
        return 0;
}

int topt_num(const char *s, double lo, double hi, double *ret)
{
        double v;
        if (str_parse_double(s, &v) < 0 || !isfinite(v) || v < lo || v > hi)
                return -EINVAL;
        *ret = v;
        return 0;
}

int topt_num_list(const char *s, double lo, double hi, double *ret, int max, int *ret_n)
{
        char buf[1024];
        int n = 0;
        size_t len = strlen(s);
        if (len >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, s, len + 1);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                double v;
                if (n == max || topt_num(t, lo, hi, &v) < 0 || (n > 0 && v <= ret[n - 1]))
                        return -EINVAL;
                ret[n++] = v;
        }
        *ret_n = n;
        return 0;
}

void topt_common_defaults(struct topt_common *c)
{
        *c = (struct topt_common){ .log_interval = 20, .warmup_steps = 5 };
}

int topt_common(int id, const char *arg, struct topt_common *c, const char **bad, const struct topt_prog *p,
                FILE *out, char **argv, struct bd_err *err)
{
        long v;
        switch (id) {
        case TOPT_HELP:
                if (out)
                        p->usage(out);
                return 1;
        case TOPT_VERSION:
                if (out)
                        fprintf(out, "%s %s\n", p->name, PACKAGE_VERSION);
                return 1;
        case ':': return bd_err_set(err, -EINVAL, "option '%s' needs an argument", argv[optind - 1]);
        case TOPT_THREADS: if (topt_int(arg, 1, 1024, &v) < 0) *bad = "an integer from 1 to 1024"; else c->threads = (int)v; break;
        case TOPT_WORKERS: if (topt_int(arg, 0, 256, &v) < 0) *bad = "an integer from 0 to 256"; else c->loader_workers = (int)v; break;
        case TOPT_BACKEND:
                if (!strcmp(arg, "cpu") || !strcmp(arg, "cuda"))
                        c->cuda = !strcmp(arg, "cuda");
                else
                        *bad = "cpu or cuda";
                break;
        case TOPT_PRECISION:
                if (!strcmp(arg, "fp32") || !strcmp(arg, "amp"))
                        c->amp = !strcmp(arg, "amp");
                else
                        *bad = "fp32 or amp";
                break;
        case TOPT_MAX_STEPS: if (topt_int(arg, 0, 1000000000000L, &v) < 0) *bad = "an integer >= 0"; else c->max_steps = v; break;
        case TOPT_PRETRAINED: c->pretrained = arg; break;
        case TOPT_PLATFORM: if (!*arg) *bad = "a name"; else c->platform = arg; break;
        case TOPT_SEED:
                if (topt_int(arg, 0, 4294967295L, &v) < 0)
                        *bad = "an integer from 0 to 4294967295";
                else
                        c->seed = (uint64_t)v, c->seed_given = 1;
                break;
        case TOPT_CHECKPOINT: c->checkpoint = arg; break;
        case TOPT_SYNTHETIC: c->synthetic = 1; break;
        case TOPT_LOG: if (topt_int(arg, 1, 1000000, &v) < 0) *bad = "an integer >= 1"; else c->log_interval = (int)v; break;
        case TOPT_INJECT_NAN: if (topt_int(arg, 1, 1000000000000L, &v) < 0) *bad = "a step >= 1"; else c->inject_nan = v; break;
        case TOPT_BENCH_STEPS: if (topt_int(arg, 1, 1000000000L, &v) < 0) *bad = "an integer >= 1"; else c->benchmark_steps = v; break;
        case TOPT_WARMUP_STEPS: if (topt_int(arg, 0, 1000000000L, &v) < 0) *bad = "an integer >= 0"; else c->warmup_steps = v; break;
        case TOPT_RESULT: if (!*arg) *bad = "a file name"; else c->result = arg; break;
        default: return bd_err_set(err, -EINVAL, "unknown option '%s' (see --help)", argv[optind - 1]);
        }
        return 0;
}

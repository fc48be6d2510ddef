/* topts.c: the trainers' command lines (topts.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "strutil.h"
#include "topts.h"
#include "workload.h"

static void usage(FILE *f, const char *intro, const struct topt *opts, size_t n)
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

static void long_options(const struct topt *opts, size_t n, struct option *lo)
{
        for (size_t i = 0; i < n; i++)
                lo[i] = (struct option){ opts[i].name, opts[i].arg ? required_argument : no_argument, NULL, opts[i].id };
        lo[n] = (struct option){ NULL, 0, NULL, 0 };
}

static const char *opt_name(const struct topt *opts, size_t n, int id)
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

/* A common option: 0 (*bad set when arg is not what it expects), 1 for
 * --help and --version, -EINVAL for a missing argument or an unknown option. */
static int common(int id, const char *arg, struct topt_common *c, const char **bad, const struct topt_prog *p,
                  const char *name, FILE *out, char **argv, struct bd_err *err)
{
        long v;
        switch (id) {
        case TOPT_HELP:
                if (out)
                        usage(out, p->intro, p->opts, p->nopts);
                return 1;
        case TOPT_VERSION:
                if (out)
                        fprintf(out, "%s %s\n", name, PACKAGE_VERSION);
                return 1;
        case ':': return bd_err_set(err, -EINVAL, "option '%s' needs an argument", argv[optind - 1]);
        case TOPT_DATA: c->data = arg; break;
        case TOPT_THREADS: if (topt_int(arg, 1, 1024, &v) < 0) *bad = "an integer from 1 to 1024"; else c->threads = (int)v; break;
        case TOPT_WORKERS: if (topt_int(arg, 0, 256, &v) < 0) *bad = "an integer from 0 to 256"; else c->loader_workers = (int)v; break;
        case TOPT_BACKEND:
                if (!strcmp(arg, "cpu") || !strcmp(arg, "cuda") || !strcmp(arg, "plan")) {
                        c->cuda = !strcmp(arg, "cuda");
                        c->plan = !strcmp(arg, "plan");
                } else {
                        *bad = "cpu, cuda or plan";
                }
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
        case TOPT_TRACE: if (!*arg) *bad = "a file name"; else c->trace = arg; break;
        case TOPT_TRACE_STEPS:
                if (topt_int(arg, 1, 1000000, &v) < 0)
                        *bad = "an integer from 1 to 1000000";
                else
                        c->trace_steps = v;
                break;
        case TOPT_BUCKET:
                if (topt_num(arg, 1.0 / 16, 1024, &c->bucket_mb) < 0)
                        *bad = "a number of MiB from 0.0625 to 1024";
                break;
        case TOPT_OVERLAP:
        case TOPT_SYNC_BN:
                if (strcmp(arg, "0") && strcmp(arg, "1"))
                        *bad = "0 or 1";
                else
                        *(id == TOPT_OVERLAP ? &c->overlap : &c->sync_bn) = arg[0] == '1';
                break;
        case TOPT_SCHEDULE:
                if (strcmp(arg, "fixed") && strcmp(arg, "time-to-train"))
                        *bad = "time-to-train or fixed";
                else
                        c->fixed = !strcmp(arg, "fixed");
                break;
        default: return bd_err_set(err, -EINVAL, "unknown option '%s' (see --help)", argv[optind - 1]);
        }
        return 0;
}

/* The option of a workload key: its name with '-' for '_'; -1 when none. */
static int key_option(const struct topt_prog *p, const char *key)
{
        for (size_t i = 0; i < p->nopts; i++) {
                const char *a = p->opts[i].name, *k = key;
                for (; *a && *k && (*a == *k || (*a == '-' && *k == '_')); a++, k++)
                        ;
                if (!*a && !*k)
                        return p->opts[i].id;
        }
        return -1;
}

/* A value of a section as its option's argument: numbers in their shortest
 * form, a list's items joined by commas. */
static void value_arg(const cJSON *v, struct bd_buf *out)
{
        if (cJSON_IsArray(v)) {
                const cJSON *e;
                cJSON_ArrayForEach(e, v) {
                        if (e != v->child)
                                buf_putc(out, ',');
                        value_arg(e, out);
                }
        } else if (cJSON_IsString(v))
                buf_puts(out, v->valuestring);
        else if (cJSON_IsBool(v))
                buf_puts(out, cJSON_IsTrue(v) ? "1" : "0");
        else if (cJSON_IsNumber(v))
                json_number(out, v->valuedouble);
}

/* The built-in values of the workload's section, each through its option
 * (the trainer's own only: the rows hold no common one). */
static int builtin_values(const struct topt_prog *p, const struct workload *w, void *o, struct bd_err *err)
{
        _cleanup_json_ cJSON *sec = cJSON_Parse(w->defaults);
        if (!sec)
                return bd_err_set(err, -EINVAL, "the built-in values of '%s' are not JSON", w->name);
        const cJSON *v;
        cJSON_ArrayForEach(v, sec) {
                _cleanup_buf_ struct bd_buf arg = BD_BUF_INIT;
                value_arg(v, &arg);
                int id = key_option(p, v->string);
                if (id < TOPT_OWN || id >= TOPT_DATA)
                        return bd_err_set(err, -EINVAL, "built-in value '%s.%s': %s has no option of its own for it",
                                          w->name, v->string, w->program);
                const char *bad = p->set(o, id, arg.s ? arg.s : "");
                if (bad)
                        return bd_err_set(err, -EINVAL, "built-in value '%s.%s': expected %s, got '%s'", w->name,
                                          v->string, bad, arg.s ? arg.s : "");
        }
        return 0;
}

int topt_parse(const struct topt_prog *p, int argc, char **argv, void *o, struct topt_common *c,
               struct topt_given *given, FILE *out, struct bd_err *err)
{
        const struct workload *w = workload_find(p->workload);
        if (!w)
                return bd_err_set(err, -EINVAL, "no workload '%s'", p->workload);
        *c = (struct topt_common){ .log_interval = 20, .warmup_steps = 5, .bucket_mb = 16, .overlap = 1,
                                   .trace_steps = 100 };
        *given = (struct topt_given){ 0 };
        int r = builtin_values(p, w, o, err);
        if (r < 0)
                return r;
        struct option lo[p->nopts + 1];
        long_options(p->opts, p->nopts, lo);
        opterr = 0;
        optind = 1;
        int id;
        while ((id = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
                const char *bad = NULL;
                if (id >= TOPT_OWN && id < TOPT_DATA) {
                        bad = p->set(o, id, optarg);
                        given->id[id - TOPT_OWN] = true;
                } else if ((r = common(id, optarg, c, &bad, p, w->program, out, argv, err)) != 0)
                        return r;
                if (bad)
                        return bd_err_set(err, -EINVAL, "--%s: expected %s, got '%s'", opt_name(p->opts, p->nopts, id),
                                          bad, optarg);
        }
        if (optind < argc)
                return bd_err_set(err, -EINVAL, "unexpected argument '%s'", argv[optind]);
        return 0;
}

int topt_check(const struct topt_common *c, struct bd_err *err)
{
        if (!c->data && !c->synthetic)
                return bd_err_set(err, -EINVAL, "--data DIR is required (or --synthetic)");
        if (c->amp && !c->cuda && !c->plan)
                return bd_err_set(err, -EINVAL, "--precision amp needs --backend cuda (or plan)");
        if (c->plan && c->benchmark_steps == 0)
                return bd_err_set(err, -EINVAL, "--backend plan counts the operations of timed steps: give "
                                  "--benchmark-steps N");
        return 0;
}

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

/* cpuset.c: CPU list parsing and formatting. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"

void cpuset_clear(struct bd_cpuset *s)
{
        memset(s, 0, sizeof(*s));
}

int cpuset_add(struct bd_cpuset *s, int cpu)
{
        if (cpu < 0 || cpu >= BD_CPUSET_MAX)
                return -ERANGE;
        s->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
        return 0;
}

bool cpuset_has(const struct bd_cpuset *s, int cpu)
{
        return cpu >= 0 && cpu < BD_CPUSET_MAX && (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

int cpuset_count(const struct bd_cpuset *s)
{
        int n = 0;
        for (size_t i = 0; i < ARRAY_SIZE(s->bits); i++)
                n += __builtin_popcountll(s->bits[i]);
        return n;
}

static int parse_num(const char **p, int *ret)
{
        if (!isdigit((unsigned char)**p))
                return -EINVAL;
        long v = 0;
        while (isdigit((unsigned char)**p)) {
                v = v * 10 + (**p - '0');
                if (v >= BD_CPUSET_MAX)
                        return -ERANGE;
                (*p)++;
        }
        *ret = (int)v;
        return 0;
}

int cpuset_parse(struct bd_cpuset *s, const char *list)
{
        cpuset_clear(s);
        const char *p = list;
        while (*p && !isspace((unsigned char)*p)) {
                int a, b, r;
                if ((r = parse_num(&p, &a)) < 0)
                        return r;
                b = a;
                if (*p == '-') {
                        p++;
                        if ((r = parse_num(&p, &b)) < 0)
                                return r;
                        if (b < a)
                                return -EINVAL;
                }
                for (int c = a; c <= b; c++)
                        cpuset_add(s, c);
                if (*p == ',')
                        p++;
                else if (*p && !isspace((unsigned char)*p))
                        return -EINVAL;
        }
        while (isspace((unsigned char)*p))
                p++;
        return *p ? -EINVAL : 0;
}

void cpuset_format(const struct bd_cpuset *s, struct bd_buf *out)
{
        bool first = true;
        for (int c = 0; c < BD_CPUSET_MAX; c++) {
                if (!cpuset_has(s, c))
                        continue;
                int e = c;
                while (e + 1 < BD_CPUSET_MAX && cpuset_has(s, e + 1))
                        e++;
                buf_printf(out, first ? "%d" : ",%d", c);
                if (e > c)
                        buf_printf(out, "-%d", e);
                first = false;
                c = e;
        }
}

int cpuinfo_model_name(const char *path, char *buf, size_t len)
{
        FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        char line[1024];
        int found = 0;
        while (!found && fgets(line, sizeof(line), f)) {
                char *v = strchr(line, ':');
                if (strncmp(line, "model name", 10) || !v)
                        continue;
                v += 1 + strspn(v + 1, " \t");
                v[strcspn(v, "\n")] = '\0';
                snprintf(buf, len, "%s", v);
                found = 1;
        }
        fclose(f);
        return found;
}

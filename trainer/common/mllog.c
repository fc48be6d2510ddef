/* mllog.c: MLPerf-format log lines. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mllog.h"

static FILE *mlout;
static int mlrank = -1;

void mllog_init(FILE *out, int rank)
{
        mlout = out;
        mlrank = rank;
}

int mllog_launch_rank(void)
{
        static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID" };
        for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
                const char *v = getenv(vars[i]);
                char *end;
                if (!v || !*v)
                        continue;
                long r = strtol(v, &end, 10);
                if (!*end && r >= 0 && r <= 1 << 30)
                        return (int)r;
        }
        return 0;
}

static char *slot(void)
{
        static char bufs[8][512];
        static int next;
        return bufs[next++ % 8];
}

const char *mllog_str(const char *s)
{
        char *b = slot(), *p = b, *end = b + 500;
        *p++ = '"';
        for (; *s && p < end; s++) {
                unsigned char c = (unsigned char)*s;
                if (c == '"' || c == '\\') {
                        *p++ = '\\';
                        *p++ = (char)c;
                } else if (c < 0x20) {
                        p += snprintf(p, 8, "\\u%04x", c);
                } else
                        *p++ = (char)c;
        }
        *p++ = '"';
        *p = '\0';
        return b;
}

const char *mllog_int(long long v)
{
        char *b = slot();
        snprintf(b, 512, "%lld", v);
        return b;
}

const char *mllog_num(double v)
{
        char *b = slot();
        if (!isfinite(v))
                return "null";
        for (int prec = 6; prec <= 17; prec++) { /* shortest text that reads back the same */
                snprintf(b, 512, "%.*g", prec, v);
                if (strtod(b, NULL) == v)
                        break;
        }
        return b;
}

void mllog_write(const char *event, const char *key, const char *value_json, const char *metadata_extra,
                 const char *file, int line)
{
        if (mlrank != 0 || !mlout)
                return;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long long ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        const char *base = strrchr(file, '/');
        char buf[4096];
        int n = snprintf(buf, sizeof(buf),
                         ":::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": \"%s\", \"key\": \"%s\", "
                         "\"value\": %s, \"metadata\": {\"file\": \"%s\", \"lineno\": %d%s%s}}\n",
                         ms, event, key, value_json ? value_json : "null", base ? base + 1 : file, line,
                         metadata_extra ? ", " : "", metadata_extra ? metadata_extra : "");
        if (n <= 0 || (size_t)n >= sizeof(buf))
                return;
        fflush(mlout);
        ssize_t w = write(fileno(mlout), buf, (size_t)n);
        (void) w;
}

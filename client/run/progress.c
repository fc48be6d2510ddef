/* progress.c: where a running trial is, from its log (progress.h). */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "macro.h"
#include "mlperf.h"
#include "progress.h"
#include "reader.h"
#include "workload.h"

#define TAIL (64 * 1024)

/* The last TAIL bytes of a file, from a line's start; NULL when unreadable. */
static char *read_tail(const char *path, size_t *ret_len)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
                return NULL;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return NULL;
        }
        off_t from = st.st_size > TAIL ? st.st_size - TAIL : 0;
        char *buf = xmalloc(TAIL + 1);
        ssize_t n = pread(fd, buf, TAIL, from);
        close(fd);
        if (n < 0) {
                free(buf);
                return NULL;
        }
        buf[n] = '\0';
        size_t skip = 0;
        if (from > 0) {         /* a line cut at its start is not read */
                char *nl = memchr(buf, '\n', (size_t)n);
                skip = nl ? (size_t)(nl + 1 - buf) : (size_t)n;
        }
        memmove(buf, buf + skip, (size_t)n - skip + 1);
        *ret_len = (size_t)n - skip;
        return buf;
}

/* The number before " images/s" in s, NAN when none. */
static double rate_in(const char *s)
{
        const char *u = strstr(s, " images/s");
        if (!u)
                return NAN;
        const char *b = u;
        while (b > s && (b[-1] == '.' || (b[-1] >= '0' && b[-1] <= '9')))
                b--;
        return b < u ? strtod(b, NULL) : NAN;
}

/* "epoch E[/T] step S/N...: loss L ..., R images/s" */
static void trainer_line(const char *s, struct progress *p)
{
        int e = 0, t = 0;
        long st = 0, sn = 0;
        int used = 0;
        if (sscanf(s, "epoch %d/%d%n", &e, &t, &used) == 2 || sscanf(s, "epoch %d%n", &e, &used) == 1) {
                const char *step = strstr(s, " step ");
                if (step && sscanf(step, " step %ld/%ld", &st, &sn) == 2 && sn > 0) {
                        p->epoch = e;
                        p->epochs = t;
                        p->step = st;
                        p->steps = sn;
                }
                const char *loss = strstr(s, ": loss ");
                if (loss)
                        p->loss = strtod(loss + 7, NULL);
                double r = rate_in(s);
                if (isfinite(r))
                        p->rate = r;
        }
}

static void eval_line(const char *ml, struct progress *p)
{
        if (!strstr(ml, "\"eval_accuracy\""))
                return;
        _cleanup_json_ cJSON *j = cJSON_Parse(ml + strlen(":::MLLOG "));
        const cJSON *v = json_get(j, "value");
        if (cJSON_IsNumber(v))
                p->eval = v->valuedouble;
        else if (cJSON_IsNumber(json_get(v, "BBOX")))
                p->eval = json_get(v, "BBOX")->valuedouble;
}

bool progress_read(const char *log, const struct workload *w, struct progress *p)
{
        *p = (struct progress){ .rate = NAN, .loss = NAN, .eval = NAN };
        size_t len;
        _cleanup_free_ char *text = log ? read_tail(log, &len) : NULL;
        if (!text)
                return false;
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                long rank;
                const char *body = mlperf_line_body(line, line + strlen(line), &rank);
                if (rank > 0)
                        continue;
                const char *ml = strstr(body, ":::MLLOG ");
                if (ml)
                        eval_line(ml, p);
                else
                        trainer_line(body, p);
                if (next)
                        next[-1] = '\n';
        }
        if (w && (w->reader.read == READ_REGEX || w->reader.read == READ_DLLOGGER)) {
                /* another trainer's own words, by its rules */
                struct reader *r = reader_new(&w->reader, NULL);
                struct reader_values v;
                reader_values_init(&v);
                if (r)
                        reader_scan_log(r, text, len, &v);
                if (v.step >= 0)
                        p->step = (long)v.step;
                if (v.nloss)
                        p->loss = v.loss[v.nloss - 1].y;
                if (v.tp_seen)
                        p->rate = v.tp_count ? v.tp_sum / v.tp_count : p->rate;
                if (v.has_accuracy)
                        p->eval = v.accuracy;
                reader_values_release(&v);
                reader_free(r);
        }
        return p->steps > 0 || p->step > 0 || isfinite(p->rate) || isfinite(p->loss) || isfinite(p->eval);
}

void progress_format(const struct progress *p, double elapsed, char *buf, size_t n)
{
        size_t len = 0;
        buf[0] = '\0';
#define ADD(...)                                                                                  \
        do {                                                                                      \
                if (len < n)                                                                      \
                        len += (size_t)snprintf(buf + len, n - len, "%s", len ? ", " : "");       \
                if (len < n)                                                                      \
                        len += (size_t)snprintf(buf + len, n - len, __VA_ARGS__);                 \
        } while (0)
        double done = NAN;
        if (p->epochs > 0 && p->epoch > 0) {
                ADD("epoch %d/%d", p->epoch, p->epochs);
                if (p->steps > 0)
                        done = ((p->epoch - 1) + (double)p->step / (double)p->steps) / p->epochs;
        } else if (p->epoch > 0)
                ADD("epoch %d", p->epoch);
        if (p->steps > 0) {
                ADD("step %ld/%ld", p->step, p->steps);
                if (p->epochs <= 0)
                        done = (double)p->step / (double)p->steps;
        } else if (p->step > 0)
                ADD("step %ld", p->step);
        if (isfinite(p->rate))
                ADD("%.1f images/s", p->rate);
        if (isfinite(p->loss))
                ADD("loss %.3g", p->loss);
        if (isfinite(p->eval))
                ADD("eval %.3f", p->eval);
        if (isfinite(done) && done >= 0.01 && done < 1 && elapsed > 0) {
                long left = lround(elapsed * (1 - done) / done);
                ADD("about %ld:%02ld:%02ld left", left / 3600, left / 60 % 60, left % 60);
        }
#undef ADD
}

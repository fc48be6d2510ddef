/* ttrace.c: the bounded Chrome trace of a trainer's steps (ttrace.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fs.h"
#include "macro.h"
#include "ttrace.h"

double ttrace_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int ttrace_init(struct ttrace *t, const char *file, int rank, size_t keep_steps, struct bd_err *err)
{
        memset(t, 0, sizeof(*t));
        if (!file)
                return 0;
        t->rank = rank;
        t->keep = (int64_t)keep_steps;
        t->path = xasprintf("%s.rank%d.json", file, rank);
        /* a path that cannot be written fails now, not after the run */
        _cleanup_free_ char *probe = xasprintf("%s.tmp-probe-%d", t->path, (int)getpid());
        int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
                int e = errno;
                bd_err_set(err, -e, "--trace: cannot write '%s': %s", t->path, strerror(e));
                free(t->path);
                t->path = NULL;
                return -e;
        }
        close(fd);
        unlink(probe);
        return 0;
}

void ttrace_reserve(struct ttrace *t, size_t events_per_step)
{
        if (!t->path || t->n)
                return;
        size_t cap = (size_t)t->keep * (events_per_step ? events_per_step : 1);
        if (cap < 64)
                cap = 64;
        free(t->ev);
        t->ev = xcalloc(cap, sizeof(*t->ev));
        t->cap = cap;
        t->head = 0;
}

void ttrace_add(struct ttrace *t, const char *name, int64_t step, int bucket, double t0, double t1)
{
        if (!t->ev)
                return;
        t->ev[t->head] = (struct ttrace_event){ name, t0, t1, step, bucket };
        t->head = (t->head + 1) % t->cap;
        if (t->n < t->cap)
                t->n++;
        if (streq(name, "step"))
                t->steps++;
        if (bucket + 1 > t->buckets)
                t->buckets = bucket + 1;
}

int ttrace_write(const struct ttrace *t, struct bd_err *err)
{
        if (!t->path)
                return 0;
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        buf_puts(&b, "{\"traceEvents\": [\n");
        /* no ring before ttrace_reserve: nothing held */
        size_t first = t->cap ? (t->head + t->cap - t->n) % t->cap : 0, written = 0;
        int64_t last = 0;
        for (size_t i = 0; i < t->n; i++)
                if (t->ev[(first + i) % t->cap].step > last)
                        last = t->ev[(first + i) % t->cap].step;
        for (size_t i = 0; i < t->n; i++) {
                const struct ttrace_event *e = &t->ev[(first + i) % t->cap];
                if (e->step <= last - t->keep)
                        continue;       /* the ring's room is approximate: the last keep steps exactly */
                size_t k = written++;
                long long ts = (long long)(e->t0 * 1e6), dur = (long long)((e->t1 - e->t0) * 1e6);
                if (e->bucket >= 0)
                        buf_printf(&b, "%s{\"name\": \"allreduce bucket %d\", \"cat\": \"allreduce\", \"ph\": \"X\", "
                                       "\"ts\": %lld, \"dur\": %lld, \"pid\": %d, \"tid\": 1, \"args\": {\"step\": %lld, "
                                       "\"bucket\": %d}}", k ? ",\n" : "", e->bucket, ts, dur < 0 ? 0 : dur, t->rank,
                                   (long long)e->step, e->bucket);
                else
                        buf_printf(&b, "%s{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %lld, \"dur\": %lld, "
                                       "\"pid\": %d, \"tid\": 0, \"args\": {\"step\": %lld}}", k ? ",\n" : "", e->name,
                                   streq(e->name, "eval") ? "eval" : "step", ts, dur < 0 ? 0 : dur, t->rank,
                                   (long long)e->step);
        }
        buf_printf(&b, "\n], \"displayTimeUnit\": \"ms\", \"otherData\": {\"rank\": %d, \"steps\": %lld, \"buckets\": "
                       "%d, \"kept_events\": %zu}}\n", t->rank, (long long)t->steps, t->buckets, written);
        return fs_write_atomic(t->path, b.s, b.len, 0644, err);
}

void ttrace_release(struct ttrace *t)
{
        free(t->path);
        free(t->ev);
        memset(t, 0, sizeof(*t));
}

/* ttrace.h: where a trainer's steps spend their time, as Chrome trace
 * events (the trace-event format chrome://tracing and Perfetto open).
 *
 * With --trace FILE every rank keeps the phases of its last steps in a ring
 * (a bounded trace: Horovod's timeline grows to gigabytes): the step, the
 * data wait, the forward, the backward, each gradient bucket's allreduce
 * from its start to when it was seen done, the exposed wait for them after
 * the backward, the optimizer, and the evaluations.  At the end rank R
 * writes FILE.rankR.json atomically:
 *
 *     {"traceEvents": [{"name": "forward", "cat": "step", "ph": "X",
 *       "ts": 1700000000123456, "dur": 41234, "pid": R, "tid": 0,
 *       "args": {"step": 12}}, ...], "displayTimeUnit": "ms",
 *      "otherData": {"rank": R, "steps": N, "buckets": B}}
 *
 * ts and dur in microseconds of the wall clock (CLOCK_REALTIME, so that the
 * ranks of several nodes line up as well as their clocks do); buckets on
 * tid 1.  benchctl merges a trial's ranks into one file and prints the
 * breakdown (benchctl(1), report). */
#ifndef BD_TTRACE_H
#define BD_TTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct ttrace_event {
        const char *name;               /* a static string */
        double t0, t1;                  /* wall clock seconds */
        int64_t step;
        int bucket;                     /* -1: not a bucket */
};

struct ttrace {
        char *path;                     /* FILE.rankR.json; NULL: off */
        int rank;
        struct ttrace_event *ev;        /* the ring */
        size_t cap, n, head;            /* capacity, held, next slot */
        int64_t steps;                  /* steps seen */
        int64_t keep;                   /* the last steps written */
        int buckets;
};

/* Off unless file; writes the last keep_steps steps.  -errno (err: the
 * file, why) when FILE.rankR.json cannot be written: checked here, before
 * anything runs. */
int ttrace_init(struct ttrace *t, const char *file, int rank, size_t keep_steps, struct bd_err *err);
static inline bool ttrace_on(const struct ttrace *t)
{
        return t->path != NULL;
}
/* The wall clock, seconds. */
double ttrace_now(void);
/* The ring: room for the steps kept, of events_per_step each (once the
 * buckets are known), before the first event; none before it. */
void ttrace_reserve(struct ttrace *t, size_t events_per_step);
void ttrace_add(struct ttrace *t, const char *name, int64_t step, int bucket, double t0, double t1);
/* Writes the events held (oldest first), atomically. */
int ttrace_write(const struct ttrace *t, struct bd_err *err);
void ttrace_release(struct ttrace *t);

#endif

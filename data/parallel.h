/* parallel.h: run a function over an index range on a few threads.
 *
 *     parallel_for(n, threads, fn, ctx);
 *
 * calls fn(ctx, i, thread) once for every i in [0, n), handing indices out
 * one at a time from a shared counter (work items here are whole images or
 * categories, so the counter is not contended).  thread is in
 * [0, threads) and lets fn use per-thread scratch space.  threads <= 1 runs
 * everything on the calling thread, in order.
 */
#ifndef BD_DATA_PARALLEL_H
#define BD_DATA_PARALLEL_H

#include <stddef.h>

typedef void parallel_fn(void *ctx, size_t i, int thread);

void parallel_for(size_t n, int threads, parallel_fn *fn, void *ctx);
/* The number of CPUs this process may run on (sched_getaffinity), at least 1. */
int parallel_cpus(void);

#endif

/* pool.h: a fixed set of worker threads and one queue of tasks.
 *
 * Tasks may submit further tasks (a directory scan submits its
 * subdirectories).  pool_wait() returns when the queue is empty and no task
 * is running, so one pool serves several phases in turn.  Each task learns
 * the index of the worker running it (0 .. nthreads-1), for per-worker
 * buffers.  The pool neither prints nor cancels: tasks check their own
 * cancellation flag and return early.
 */
#ifndef BD_POOL_H
#define BD_POOL_H

#include <stddef.h>

#include "macro.h"

struct bd_pool;

typedef void (*bd_task_fn)(void *arg, unsigned worker);

/* Starts nthreads (>= 1) workers; NULL (with errno) when a thread cannot start. */
struct bd_pool *pool_new(unsigned nthreads);
unsigned pool_size(const struct bd_pool *p);
void pool_submit(struct bd_pool *p, bd_task_fn fn, void *arg);
/* Calls fn(arg, i, worker) for i = 0..n-1, spread over every worker, in
 * increasing order of i as workers become free, and returns when all calls
 * have returned.  Not to be called from a task of the same pool. */
void pool_for(struct bd_pool *p, size_t n, void (*fn)(void *arg, size_t i, unsigned worker), void *arg);
/* Blocks until the queue is empty and every worker is idle. */
void pool_wait(struct bd_pool *p);
/* Waits for the queued tasks, stops the workers and frees the pool; NULL is allowed. */
void pool_free(struct bd_pool *p);
DEFINE_CLEANUP(struct bd_pool *, pool_free)

#endif

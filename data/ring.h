/* ring.h: the worker threads and the ring of batches of the data loaders
 * (loader.c for SSD, det-loader.c for Mask R-CNN).  Threads fill the
 * samples of the next batches ahead of one consumer, into a fixed number
 * of slots; the loader owns the slots' memory and says what a batch is:
 *
 *   start(ctx, slot, epoch, index, &nb)   lock held: the slot now holds
 *       batch `index` of `epoch`; returns its samples (at least 1) and
 *       sets nb to the batches of that epoch (epochs may differ);
 *   fill(ctx, worker, slot, j, err)       lock not held: fills sample j of
 *       the slot's batch with the scratch of worker `worker` (0 .. the
 *       threads started - 1); a negative errno (and err) stops the stream;
 *   reset(ctx)                            optional, lock held, nothing in
 *       flight: ring_seek restarts the stream (drop cached epochs).
 *
 *     struct ring_config rc = { .name = "loader", .slots = 3, .ops = &ops, .ctx = l };
 *     l->ring = ring_new(&rc);
 *     ring_start(l->ring, threads, err);
 *     int slot = ring_next(l->ring, err);     // the slot's batch is valid until the next call
 *
 * Order: the stream is batch after batch, epoch after epoch, from epoch 0
 * or the epoch of the last ring_seek; samples are handed out one at a time
 * in that order to whichever thread is free, so a loader whose samples
 * depend only on (epoch, index, j) delivers the same batches whatever the
 * number of threads and the timing.  Batches are started only while a slot
 * is free: the one ring_next returned stays the consumer's until its next
 * call.  With one_epoch, no batch of a later epoch than the one the
 * consumer last asked for is started (evaluation: no work on the next pass
 * before it is asked for).
 *
 * The lock is the loader's too: what its callbacks and its own functions
 * share (statistics, warnings, caches) lives under ring_lock().  The
 * loader's warnings over their limits are summed up (loader_warn_summary)
 * each time ring_next has waited.
 *
 * Errors: the first failing sample stops the claiming of work; that
 * ring_next and every later one return its error.
 */
#ifndef BD_DATA_RING_H
#define BD_DATA_RING_H

#include <stdbool.h>

#include "err.h"
#include "loader-util.h"

struct ring_ops {
        int (*start)(void *ctx, int slot, long epoch, long index, long *nb);
        int (*fill)(void *ctx, int worker, int slot, int j, struct bd_err *err);
        void (*reset)(void *ctx);       /* NULL: nothing to drop */
};

struct ring_config {
        const char *name;               /* in messages: "loader" */
        int slots;                      /* batches filled ahead, >= 1 */
        bool one_epoch;                 /* an epoch's batches only once one of them is asked for */
        const struct ring_ops *ops;
        void *ctx;
        struct loader_warnings *warnings;       /* summed up at each ring_next (lock held), NULL: none */
};

struct ring;

/* The ring and its lock, no thread yet (the loader may use the lock). */
struct ring *ring_new(const struct ring_config *c);
/* Starts up to n threads; fewer when the system refuses more, an error
 * when it refuses the first.  Returns how many run. */
int ring_start(struct ring *r, int n, struct bd_err *err);
/* Stops the threads (the samples in progress finish) and frees the ring. */
struct ring *ring_free(struct ring *r);
DEFINE_CLEANUP(struct ring *, ring_free)

void ring_lock(struct ring *r);
void ring_unlock(struct ring *r);

/* Frees the slot returned last time and waits for the next batch of the
 * stream; returns its slot, or the stream's error. */
int ring_next(struct ring *r, struct bd_err *err);
/* Restarts the stream at the first batch of an epoch, once the samples in
 * progress have finished. */
void ring_seek(struct ring *r, long epoch);

#endif

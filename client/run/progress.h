/* progress.h: where a running trial is, from its own log as it is written,
 * for the line a waiting user sees (submit --wait, status --watch, sweeps,
 * suites).
 *
 * Read from the end of the trial log (its last 64 KiB):
 *   - benchd's trainers' progress lines, "epoch 3/24 step 20/75 (...): loss
 *     2.5 (...), lr ..., 41.2 images/s" (SSD) and "epoch 1 step 20/1500:
 *     loss 1.7 (...), lr ..., 4.6 images/s" (Mask R-CNN, whose steps count
 *     the whole run);
 *   - their MLPerf lines: the last eval_accuracy (BBOX for Mask R-CNN);
 *   - a workload read by regular expressions or DLLogger records: its own
 *     step, loss and throughput rules (reader.h).
 * Nothing here prints.
 */
#ifndef BD_PROGRESS_H
#define BD_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

struct workload;

struct progress {
        int epoch, epochs;              /* 0: unknown */
        long step, steps;               /* step of steps (in the epoch when epochs are known); 0: unknown */
        double rate;                    /* images/s of the last line that said; NAN: unknown */
        double loss;                    /* NAN: unknown */
        double eval;                    /* the last evaluation's accuracy; NAN: none yet */
};

/* Reads the end of log (as its workload w reads it; NULL: benchd's lines
 * only).  False when nothing of the above was found. */
bool progress_read(const char *log, const struct workload *w, struct progress *p);

/* "epoch 3/24, step 20/75, 41.2 images/s, loss 2.50, eval 0.213, about 0:12:00 left":
 * what is known; the time left from the fraction done over elapsed seconds
 * (a time-to-train run may end sooner). */
void progress_format(const struct progress *p, double elapsed, char *buf, size_t n);

#endif

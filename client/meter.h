/* meter.h: the progress of a long local step on standard error (dataset
 * synth and check, image build): on a terminal one line redrawn in place,
 * at most five times a second; elsewhere a plain line at most once a
 * minute; nothing when quiet.  The steps of the work are lines of their
 * own above it (meter_line).
 *
 *     struct meter m;
 *     meter_start(&m, "dataset synth", quiet);
 *     meter_count(&m, "images", done, total);   (repeatedly)
 *     meter_end(&m);
 *
 * Calls may come from several threads: the meter takes a lock. */
#ifndef BD_METER_H
#define BD_METER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct meter {
        pthread_mutex_t lock;
        const char *what;
        bool tty, quiet, drawn;
        double start, drawn_at, printed_at;
        double every;           /* seconds between plain lines (default 60) */
        char line[256];         /* the latest state, drawn or not */
};

void meter_start(struct meter *m, const char *what, bool quiet);
/* DONE of TOTAL UNIT (images, batches, packages): the share, the rate and
 * the time left. */
void meter_count(struct meter *m, const char *unit, uint64_t done, uint64_t total);
/* DONE of TOTAL bytes VERB ("fetched"), with a bar, the rate of what
 * this run did (BASE: bytes there before it started) and the time left. */
void meter_bytes(struct meter *m, const char *verb, uint64_t done, uint64_t total, uint64_t base);
/* "1.25 GB", "730.2 MB" */
void meter_bytes_text(uint64_t n, char *buf, size_t len);
/* A state without a count (a tool's last words): shown as the counts are,
 * with the time elapsed. */
void meter_status(struct meter *m, const char *text);
/* A line of its own that stays (a step of the work), above the live one;
 * printed even when quiet. */
void meter_line(struct meter *m, const char *text);
/* Ends the redrawn line (a terminal keeps its last state). */
void meter_end(struct meter *m);

#endif

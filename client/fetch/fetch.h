/* fetch.h: download files over HTTP(S) in parallel byte ranges, resumable,
 * each verified against its published size and digests.
 *
 * A file is cut into chunks (8 MiB by default); up to `connections`
 * transfers run at once on one libcurl multi handle, each asking for one
 * chunk (Range: bytes=A-B), so one slow or dropped connection costs only
 * its chunk.  The bytes go to DEST.part at their offsets; each chunk
 * received whole is recorded in DEST.part.journal (an append-only text
 * log: the chunk, its XXH3-64, the boot it was written in), so a fetch
 * killed at any moment resumes with every recorded chunk kept and only
 * the chunks that were in flight asked for again.  A transfer that fails
 * half way is retried from the byte it had reached, with a back-off, up
 * to `retries` times.  After a reboot (another boot id in the journal)
 * each kept chunk is read back and checked against its XXH3 first: the
 * journal may be on disk while the page cache held the data.
 *
 * A second thread hashes the file in order as its chunks arrive (reading
 * them back, mostly from the page cache), so verification overlaps the
 * download; the digests are compared when the last chunk is in.  A
 * mismatch refuses the file, naming it, and removes the part and the
 * journal (the bytes are not what was published: fetching them again is
 * the only way on).  A file verified is renamed to DEST.
 *
 * A server that ignores ranges (200 to a ranged request) is read in one
 * stream; the journal records its chunks all the same, but a resume asks
 * the server from the start.
 *
 * The library never prints: progress goes to a callback.
 */
#ifndef BD_FETCH_H
#define BD_FETCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "err.h"

struct fetch_file {
        const char *name;               /* for messages: "train2017.zip" */
        const char *url;
        const char *dest;               /* the final path; DEST.part and DEST.part.journal beside it */
        int64_t size;                   /* published size, or -1: the server's */
        const char *sha256;             /* expected hex digest, or a prefix of it (>= 8 digits), or NULL */
        const char *sha1;               /* expected hex digest or NULL */
        /* out */
        int64_t resumed;                /* bytes kept from an earlier fetch */
        int64_t fetched;                /* bytes received this time (retries and all) */
        bool done;                      /* verified and in place */
};

struct fetch_progress {
        int file;                       /* index of the file most recently advanced */
        int64_t done, total;            /* bytes of all files: in place (received or kept) */
        int64_t resumed;                /* of done: kept from an earlier fetch */
        int64_t hashed;                 /* bytes verified so far */
        int active;                     /* transfers running */
        int retries;                    /* transfers retried so far */
        const char *event;              /* a line worth keeping ("train2017.zip: bytes ...: retrying"), or NULL */
};

struct fetch_opts {
        int connections;                /* transfers at once (default 4) */
        int64_t chunk;                  /* bytes per range (default 8 MiB) */
        int retries;                    /* per chunk (0: the default, 5; negative: none) */
        double retry_delay;             /* seconds before the first retry, doubled each time (default 1) */
        long connect_timeout;           /* seconds (default 30) */
        long low_speed_time;            /* a transfer under 1 kB/s this long is dropped and retried (default 60) */
        const char *user_agent;
        void (*progress)(void *arg, const struct fetch_progress *p);
        void *arg;
        volatile sig_atomic_t *stop;    /* set (by a signal handler): end at the next chance, journal kept */
};

/* Fetches the files (each skipped where DEST exists already and its size
 * is the published one: checking it is the caller's).  Returns 0, or -1
 * with err naming the file and what went wrong; what was received and
 * recorded stays for the next call. */
int fetch_files(struct fetch_file *files, int n, const struct fetch_opts *o, struct bd_err *err);

/* A file already on disk checked against its published size (size > 0)
 * and digest (sha256, or a prefix of it, else sha1), read once with
 * progress (optional).  Errors name name and the path, with both digests. */
int fetch_verify(const char *path, const char *name, int64_t size, const char *sha256, const char *sha1,
                 void (*progress)(void *arg, uint64_t done, uint64_t total), void *arg, volatile sig_atomic_t *stop,
                 struct bd_err *err);

/* The journal, for the fuzz harness and the tests: parses text into the
 * chunks recorded (done[i] set, sum[i] their XXH3) for a file of size
 * bytes in chunks of chunk bytes.  Returns the number of chunks recorded
 * or -1 where the header does not match (another file: start again).
 * *boot receives the header's boot id (33 bytes). */
struct fetch_journal {
        int64_t size, chunk;
        int64_t nchunks;
        uint8_t *done;
        uint64_t *sum;
        char boot[40];
        char digest[80];                /* the expected digest the journal was written for */
};
int fetch_journal_parse(const char *text, size_t len, struct fetch_journal *j, struct bd_err *err);
void fetch_journal_release(struct fetch_journal *j);

#endif

/* fetch.c: parallel, resumable, verified HTTP downloads (fetch.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "buf.h"
#include "clock.h"
#include "curl-dl.h"
#include "digest.h"
#include "fetch.h"
#include "fs.h"
#include "macro.h"
#include "strutil.h"

#define JOURNAL_MAGIC "benchd-fetch-journal 1"
#define READ_PIECE (1 << 20)

enum { C_MISSING, C_ACTIVE, C_DONE };

struct ffile {
        struct fetch_file *f;
        char *part, *journal;
        int fd, jfd;
        int64_t size, chunk, nchunks;
        uint8_t *state;                 /* C_* per chunk; guarded by the hasher lock once it runs */
        int *tries;
        int64_t next;                   /* the first chunk perhaps missing */
        int64_t ndone;
        bool single;                    /* the server ignores ranges: one stream from 0 */
        bool single_running;
        int single_tries;               /* streams restarted */
        double single_not_before;       /* the next stream waits until then */
        bool hashed_all;
        int read_errno;                 /* the hasher could not read the part back */
        char want_kind[8];
        char got[DIGEST_HEX_MAX];
};

/* one transfer: a chunk (or, single, the whole file) from pos to end */
struct xfer {
        struct fetch *F;
        CURL *h;
        int file;
        int64_t chunk;                  /* the chunk pos is in */
        int64_t pos, end;               /* next byte, end exclusive */
        XXH3_state_t *xs;               /* the digest of the chunk so far */
        long status;
        bool ranged, checked, abort_single;
        char range[64];
        char errbuf[CURL_ERROR_SIZE];
        double not_before;              /* a retry waits until then */
        struct xfer *next;              /* the retry list */
};

struct fetch {
        const struct curl_fns *C;
        const struct fetch_opts *o;
        struct ffile *ff;
        int n;
        CURLM *multi;
        struct xfer **active;
        int nactive;
        struct xfer *retry;             /* waiting to be retried */
        struct fetch_progress p;
        double shown_at;
        char event[512];
        struct bd_err *err;
        bool failed;
        char boot[40];
        /* the hasher */
        pthread_t hasher;
        bool hasher_running, hasher_quit;
        pthread_mutex_t lock;
        pthread_cond_t cond;
};

static void fail(struct fetch *F, int code, const char *fmt, ...) _printf_(3, 4);
static void fail(struct fetch *F, int code, const char *fmt, ...)
{
        if (F->failed)
                return;
        F->failed = true;
        va_list ap;
        va_start(ap, fmt);
        char msg[sizeof(F->err->msg)];
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        bd_err_set(F->err, code, "%s", msg);
}

static void read_boot_id(char out[40])
{
        out[0] = '\0';
        FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
        if (!f)
                return;
        if (fgets(out, 40, f))
                out[strcspn(out, "\n")] = '\0';
        fclose(f);
        for (char *p = out; *p; p++)
                if (!(isxdigit((unsigned char)*p) || *p == '-'))
                        *p = '_';
}

static void fsync_dir_of(const char *path)
{
        _cleanup_free_ char *dir = xstrdup(path);
        char *slash = strrchr(dir, '/');
        if (slash)
                *(slash == dir ? slash + 1 : slash) = '\0';
        int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
                fsync(fd);
                close(fd);
        }
}

/* every change of a chunk's state under the lock: the hasher reads them */
static void set_state(struct fetch *F, struct ffile *x, int64_t c, uint8_t v)
{
        pthread_mutex_lock(&F->lock);
        x->state[c] = v;
        pthread_mutex_unlock(&F->lock);
}

static int64_t chunk_len(const struct ffile *x, int64_t c)
{
        int64_t start = c * x->chunk;
        return x->size - start < x->chunk ? x->size - start : x->chunk;
}

/* ---- the journal ---- */

void fetch_journal_release(struct fetch_journal *j)
{
        free(j->done);
        free(j->sum);
        j->done = NULL;
        j->sum = NULL;
}

static bool parse_i64(const char *s, const char *e, int64_t *v)
{
        if (s == e || e - s > 18)       /* 18 digits: no overflow */
                return false;
        int64_t x = 0;
        for (const char *p = s; p < e; p++) {
                if (*p < '0' || *p > '9')
                        return false;
                x = x * 10 + (*p - '0');
        }
        *v = x;
        return true;
}

int fetch_journal_parse(const char *text, size_t len, struct fetch_journal *j, struct bd_err *err)
{
        memset(j, 0, sizeof(*j));
        const char *p = text, *end = text + len;
        int line = 0, header = 0;
        int64_t count = 0;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                if (!nl)
                        break;          /* a line cut short by a kill: not written */
                line++;
                const char *s = p;
                p = nl + 1;
                if (line == 1) {
                        if ((size_t)(nl - s) != strlen(JOURNAL_MAGIC) || memcmp(s, JOURNAL_MAGIC, (size_t)(nl - s)))
                                goto bad_header;
                        continue;
                }
                const char *sp = memchr(s, ' ', (size_t)(nl - s));
                if (!sp) {
                        if (header < 4)
                                goto bad_header;
                        continue;
                }
                size_t kl = (size_t)(sp - s);
                const char *v = sp + 1;
                if (header < 4) {
                        int64_t x;
                        if (kl == 4 && !memcmp(s, "size", 4) && header == 0 && parse_i64(v, nl, &x) && x > 0)
                                j->size = x;
                        else if (kl == 5 && !memcmp(s, "chunk", 5) && header == 1 && parse_i64(v, nl, &x) &&
                                 x >= 4096 && x <= (1LL << 34))
                                j->chunk = x;
                        else if (kl == 6 && !memcmp(s, "digest", 6) && header == 2 && nl - v < (long)sizeof(j->digest))
                                memcpy(j->digest, v, (size_t)(nl - v));
                        else if (kl == 4 && !memcmp(s, "boot", 4) && header == 3 && nl - v < (long)sizeof(j->boot))
                                memcpy(j->boot, v, (size_t)(nl - v));
                        else
                                goto bad_header;
                        if (++header == 4) {
                                j->nchunks = (j->size + j->chunk - 1) / j->chunk;
                                if (j->nchunks > (1 << 24))
                                        goto bad_header;
                                j->done = xcalloc((size_t)j->nchunks, 1);
                                j->sum = xcalloc((size_t)j->nchunks, sizeof(uint64_t));
                        }
                        continue;
                }
                /* c INDEX XXH3 */
                int64_t idx;
                const char *sp2 = memchr(v, ' ', (size_t)(nl - v));
                if (kl != 1 || s[0] != 'c' || !sp2 || !parse_i64(v, sp2, &idx) || idx >= j->nchunks ||
                    nl - (sp2 + 1) != 16)
                        continue;       /* a record torn by a full disk, then appended to: that chunk again */
                uint64_t sum = 0;
                bool hex = true;
                for (const char *q = sp2 + 1; q < nl && hex; q++) {
                        int d = str_hex_digit(*q);
                        hex = d >= 0;
                        sum = sum << 4 | (uint64_t)(d < 0 ? 0 : d);
                }
                if (!hex)
                        continue;
                if (!j->done[idx])
                        count++;
                j->done[idx] = 1;
                j->sum[idx] = sum;
        }
        if (header < 4)
                goto bad_header;
        return (int)(count > INT32_MAX ? INT32_MAX : count);
bad_header:
        fetch_journal_release(j);
        return bd_err_set(err, -EINVAL, "line %d: not the journal's header", line ? line : 1);
}

static char *journal_header(const struct ffile *x, const char *boot)
{
        return xasprintf("%s\nsize %" PRId64 "\nchunk %" PRId64 "\ndigest %s:%s\nboot %s\n", JOURNAL_MAGIC, x->size,
                         x->chunk, x->want_kind, x->f->sha256 ? x->f->sha256 : x->f->sha1 ? x->f->sha1 : "none",
                         boot);
}

/* Writes the journal anew, atomically: the header under this boot and the
 * chunks kept (sum: their XXH3; NULL: none), then opens it to append. */
static int journal_start(struct fetch *F, struct ffile *x, const uint64_t *sum)
{
        struct bd_err jerr;
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        _cleanup_free_ char *h = journal_header(x, F->boot);
        buf_puts(&b, h);
        for (int64_t c = 0; sum && c < x->nchunks; c++)
                if (x->state[c] == C_DONE)
                        buf_printf(&b, "c %" PRId64 " %016" PRIx64 "\n", c, sum[c]);
        if (fs_write_atomic(x->journal, b.s, b.len, 0644, &jerr) < 0)
                return bd_err_set(F->err, -EIO, "%s: %s", x->f->name, jerr.msg);
        x->jfd = open(x->journal, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (x->jfd < 0)
                return bd_err_set(F->err, -errno, "%s: cannot open '%s': %s", x->f->name, x->journal, strerror(errno));
        return 0;
}

/* Reads the chunk back and compares its XXH3 with the journal's. */
static bool chunk_intact(struct ffile *x, int64_t c, uint64_t sum, uint8_t *buf)
{
        XXH3_state_t *s = XXH3_createState();
        XXH3_64bits_reset(s);
        int64_t off = c * x->chunk, left = chunk_len(x, c);
        bool ok = true;
        while (left > 0) {
                size_t n = left < READ_PIECE ? (size_t)left : READ_PIECE;
                ssize_t r = pread(x->fd, buf, n, off);
                if (r <= 0) {
                        ok = false;
                        break;
                }
                XXH3_64bits_update(s, buf, (size_t)r);
                off += r;
                left -= r;
        }
        ok = ok && XXH3_64bits_digest(s) == sum;
        XXH3_freeState(s);
        return ok;
}

static void report(struct fetch *F, bool force);

/* Opens DEST.part and its journal, keeping what an earlier fetch recorded. */
static int open_file(struct fetch *F, struct ffile *x)
{
        struct fetch_file *f = x->f;
        x->part = xasprintf("%s.part", f->dest);
        x->journal = xasprintf("%s.part.journal", f->dest);
        x->fd = open(x->part, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (x->fd < 0)
                return bd_err_set(F->err, -errno, "%s: cannot open '%s': %s", f->name, x->part, strerror(errno));
        /* one fetch at a time writes a file */
        if (flock(x->fd, LOCK_EX | LOCK_NB) < 0)
                return bd_err_set(F->err, -EBUSY, "%s: another fetch is writing '%s'%s", f->name, x->part,
                                  errno == EWOULDBLOCK ? " (wait for it, or stop it)" : "");
        x->nchunks = (x->size + x->chunk - 1) / x->chunk;
        x->state = xcalloc((size_t)x->nchunks + 1, 1);
        x->tries = xcalloc((size_t)x->nchunks + 1, sizeof(int));
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        struct bd_err jerr;
        if (fs_read_file(x->journal, 1 << 28, &text, &len, &jerr) == 0) {
                struct fetch_journal j;
                char want[80];
                snprintf(want, sizeof(want), "%s:%s", x->want_kind,
                         f->sha256 ? f->sha256 : f->sha1 ? f->sha1 : "none");
                struct stat st;
                if (fetch_journal_parse(text, len, &j, &jerr) >= 0 && j.size == x->size && j.chunk == x->chunk &&
                    streq(j.digest, want) && fstat(x->fd, &st) == 0 && st.st_size == x->size) {
                        bool same_boot = F->boot[0] && streq(j.boot, F->boot);
                        _cleanup_free_ uint8_t *buf = same_boot ? NULL : xmalloc(READ_PIECE);
                        _cleanup_free_ char *said = NULL;
                        struct fetch_progress before = F->p;    /* the bar shows the check meanwhile */
                        if (!same_boot) {
                                /* the page cache may not have reached the disk
                                 * before the restart: each kept range read again,
                                 * said, shown and stoppable (the journal stays) */
                                int64_t kept = 0;
                                for (int64_t c = 0; c < x->nchunks; c++)
                                        kept += j.done[c] ? chunk_len(x, c) : 0;
                                said = xasprintf("%s: the machine restarted since %" PRId64 " of its bytes were "
                                                 "fetched: reading them again to check them", f->name, kept);
                                F->p.event = said;
                                F->p.total = kept;
                                F->p.done = F->p.resumed = 0;
                                report(F, true);
                        }
                        for (int64_t c = 0; c < x->nchunks; c++) {
                                if (!same_boot && F->o->stop && *F->o->stop) {
                                        F->p = before;
                                        fetch_journal_release(&j);
                                        return bd_err_set(F->err, -EINTR, "%s: stopped while checking the ranges "
                                                          "kept from before the restart (they are kept)", f->name);
                                }
                                if (j.done[c] && (same_boot || chunk_intact(x, c, j.sum[c], buf))) {
                                        x->state[c] = C_DONE;
                                        x->ndone++;
                                        f->resumed += chunk_len(x, c);
                                        if (!same_boot) {
                                                F->p.done += chunk_len(x, c);
                                                F->p.resumed += chunk_len(x, c);
                                                report(F, false);
                                        }
                                }
                        }
                        if (!same_boot) {
                                report(F, true);
                                F->p = before;
                        }
                        /* the chunks kept (after a reboot: those that survived it),
                         * under this boot, no torn line left to append after */
                        int r = journal_start(F, x, j.sum);
                        fetch_journal_release(&j);
                        return r;
                }
                fetch_journal_release(&j);
        }
        /* a fresh start: the old journal away first (a kill before the new
         * one is written must not leave it beside a zeroed part), then room
         * for the whole file, so a full disk says so now, not half way */
        if (unlink(x->journal) < 0 && errno != ENOENT)
                return bd_err_set(F->err, -errno, "%s: cannot remove '%s': %s", f->name, x->journal, strerror(errno));
        if (ftruncate(x->fd, 0) < 0)
                return bd_err_set(F->err, -errno, "%s: '%s': %s", f->name, x->part, strerror(errno));
        if (fallocate(x->fd, 0, 0, x->size) < 0) {
                if (errno == ENOSPC)
                        return bd_err_set(F->err, -ENOSPC, "%s: no room for %" PRId64 " bytes in '%s'", f->name,
                                          x->size, x->part);
                if (ftruncate(x->fd, x->size) < 0)
                        return bd_err_set(F->err, -errno, "%s: '%s': %s", f->name, x->part, strerror(errno));
        }
        return journal_start(F, x, NULL);
}

/* ---- the hasher: each file in order, chunk after chunk as they arrive ---- */

static void *hasher_main(void *arg)
{
        struct fetch *F = arg;
        uint8_t *buf = xmalloc(READ_PIECE);
        for (int i = 0; i < F->n; i++) {
                struct ffile *x = &F->ff[i];
                if (x->f->done)
                        continue;
                bool want = x->f->sha256 || x->f->sha1;
                struct digest d;
                if (want)
                        digest_init(&d, x->f->sha256 ? DIGEST_SHA256 : DIGEST_SHA1);
                for (int64_t c = 0; c < x->nchunks; c++) {
                        pthread_mutex_lock(&F->lock);
                        while (x->state[c] != C_DONE && !F->hasher_quit)
                                pthread_cond_wait(&F->cond, &F->lock);
                        bool quit = F->hasher_quit;
                        pthread_mutex_unlock(&F->lock);
                        if (quit) {
                                if (want)
                                        digest_release(&d);
                                goto out;
                        }
                        int64_t off = c * x->chunk, left = chunk_len(x, c);
                        while (want && left > 0) {
                                size_t n = left < READ_PIECE ? (size_t)left : READ_PIECE;
                                ssize_t r = pread(x->fd, buf, n, off);
                                if (r <= 0) {
                                        /* said, the part kept: not a wrong digest */
                                        pthread_mutex_lock(&F->lock);
                                        x->read_errno = r < 0 ? errno : EIO;
                                        pthread_mutex_unlock(&F->lock);
                                        memset(buf, 0, n);
                                        r = (ssize_t)n;
                                }
                                digest_update(&d, buf, (size_t)r);
                                off += r;
                                left -= r;
                        }
                        pthread_mutex_lock(&F->lock);
                        F->p.hashed += chunk_len(x, c);
                        pthread_mutex_unlock(&F->lock);
                }
                pthread_mutex_lock(&F->lock);
                if (want)
                        digest_final_hex(&d, x->got);
                x->hashed_all = true;
                pthread_cond_broadcast(&F->cond);
                pthread_mutex_unlock(&F->lock);
        }
out:
        free(buf);
        return NULL;
}

/* ---- transfers ---- */

static void chunk_done(struct fetch *F, struct xfer *t)
{
        struct ffile *x = &F->ff[t->file];
        uint64_t sum = XXH3_64bits_digest(t->xs);
        char line[64];
        int n = snprintf(line, sizeof(line), "c %" PRId64 " %016" PRIx64 "\n", t->chunk, sum);
        int r = fs_write_all(x->jfd, line, (size_t)n);
        if (r < 0)
                fail(F, r, "%s: cannot write '%s': %s", x->f->name, x->journal, strerror(-r));
        /* its writeback started now, so that the fsync before the rename
         * finds little left to write (the disk works while the rest comes) */
        int64_t off = t->chunk * x->chunk;
        sync_file_range(x->fd, off, chunk_len(x, t->chunk), SYNC_FILE_RANGE_WRITE);
        pthread_mutex_lock(&F->lock);
        x->state[t->chunk] = C_DONE;
        x->ndone++;
        pthread_cond_broadcast(&F->cond);
        pthread_mutex_unlock(&F->lock);
        XXH3_64bits_reset(t->xs);
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
        struct xfer *t = arg;
        size_t len = size * n;
        if (len > 5 && !strncmp(data, "HTTP/", 5)) {
                /* a status line: 206 for a range, 200 for the whole */
                const char *sp = memchr(data, ' ', len);
                t->status = sp ? strtol(sp + 1, NULL, 10) : 0;
                t->checked = false;
                return len;
        }
        if (len > 14 && !strncasecmp(data, "Content-Range:", 14) && t->status == 206) {
                struct ffile *x = &t->F->ff[t->file];
                long long a, b, total;
                if (sscanf(data + 14, " bytes %lld-%lld/%lld", &a, &b, &total) != 3 || a != t->pos ||
                    b != t->end - 1) {
                        fail(t->F, -EPROTO, "%s: the server answered %.*s for bytes %" PRId64 "-%" PRId64,
                             x->f->name, (int)strcspn(data, "\r\n"), data, t->pos, t->end - 1);
                        return 0;
                }
                if (total != x->size) {
                        fail(t->F, -EPROTO, "%s: the server's file is %lld bytes, the published %" PRId64, x->f->name,
                             total, x->size);
                        return 0;
                }
        }
        return len;
}

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
        struct xfer *t = arg;
        struct fetch *F = t->F;
        struct ffile *x = &F->ff[t->file];
        size_t len = size * n;
        if (F->failed || (F->o->stop && *F->o->stop))
                return 0;
        if (!t->checked) {
                t->checked = true;
                if (t->status == 200 && t->ranged && !x->single) {
                        /* ranges ignored: the file comes whole, from its start */
                        x->single = true;
                        if (t->pos != 0 || t->chunk != 0) {
                                t->abort_single = true;
                                return 0;
                        }
                        t->end = x->size;
                        x->single_running = true;
                } else if (t->status == 200 && t->ranged && !(t->pos == 0 && t->end == x->size)) {
                        t->abort_single = true;
                        return 0;
                } else if (t->status != 200 && t->status != 206)
                        return 0;       /* an error page: the status says why */
        }
        const char *p = data;
        size_t left = len;
        while (left) {
                if (t->pos >= t->end) {
                        fail(F, -EPROTO, "%s: the server sent more than asked for (bytes %s)", x->f->name, t->range);
                        return 0;
                }
                int64_t cend = (t->chunk + 1) * x->chunk;
                if (cend > x->size)
                        cend = x->size;
                size_t m = (size_t)(cend - t->pos) < left ? (size_t)(cend - t->pos) : left;
                bool have = x->state[t->chunk] == C_DONE;      /* the stream passes a chunk it has */
                size_t w = have ? m : 0;
                while (w < m) {
                        ssize_t r = pwrite(x->fd, p + w, m - w, t->pos + (int64_t)w);
                        if (r < 0) {
                                if (errno == EINTR)
                                        continue;
                                fail(F, -errno, "%s: cannot write '%s' at byte %" PRId64 ": %s", x->f->name, x->part,
                                     t->pos + (int64_t)w, strerror(errno));
                                return 0;
                        }
                        w += (size_t)r;
                }
                if (!have)
                        XXH3_64bits_update(t->xs, p, m);
                t->pos += (int64_t)m;
                p += m;
                left -= m;
                x->f->fetched += (int64_t)m;
                if (!have)
                        F->p.done += (int64_t)m;
                if (t->pos == cend) {
                        if (x->state[t->chunk] != C_DONE)
                                chunk_done(F, t);
                        else
                                XXH3_64bits_reset(t->xs);
                        t->chunk++;
                        /* the whole stream goes on into the next chunk */
                        if (t->pos < t->end && t->chunk < x->nchunks && x->state[t->chunk] == C_MISSING)
                                set_state(F, x, t->chunk, C_ACTIVE);
                }
        }
        return len;
}

static struct xfer *xfer_new(struct fetch *F, int file, int64_t chunk, int64_t pos, int64_t end)
{
        struct xfer *t = xcalloc(1, sizeof(*t));
        t->F = F;
        t->file = file;
        t->chunk = chunk;
        t->pos = pos;
        t->end = end;
        t->xs = XXH3_createState();
        XXH3_64bits_reset(t->xs);
        return t;
}

static void xfer_free(struct fetch *F, struct xfer *t)
{
        if (!t)
                return;
        if (t->h) {
                F->C->multi_remove_handle(F->multi, t->h);
                F->C->easy_cleanup(t->h);
        }
        XXH3_freeState(t->xs);
        free(t);
}

static int xfer_start(struct fetch *F, struct xfer *t)
{
        const struct curl_fns *C = F->C;
        struct ffile *x = &F->ff[t->file];
        if (!(t->h = C->easy_init()))
                return bd_err_set(F->err, -ENOMEM, "curl_easy_init failed");
        t->ranged = !x->single;
        C->easy_setopt(t->h, CURLOPT_URL, x->f->url);
        C->easy_setopt(t->h, CURLOPT_PRIVATE, t);
        C->easy_setopt(t->h, CURLOPT_WRITEFUNCTION, on_data);
        C->easy_setopt(t->h, CURLOPT_WRITEDATA, t);
        C->easy_setopt(t->h, CURLOPT_HEADERFUNCTION, on_header);
        C->easy_setopt(t->h, CURLOPT_HEADERDATA, t);
        C->easy_setopt(t->h, CURLOPT_ERRORBUFFER, t->errbuf);
        C->easy_setopt(t->h, CURLOPT_FOLLOWLOCATION, 1L);
        C->easy_setopt(t->h, CURLOPT_MAXREDIRS, 10L);
        C->easy_setopt(t->h, CURLOPT_NOSIGNAL, 1L);
        C->easy_setopt(t->h, CURLOPT_CONNECTTIMEOUT, F->o->connect_timeout > 0 ? F->o->connect_timeout : 30L);
        C->easy_setopt(t->h, CURLOPT_LOW_SPEED_LIMIT, 1024L);
        C->easy_setopt(t->h, CURLOPT_LOW_SPEED_TIME, F->o->low_speed_time > 0 ? F->o->low_speed_time : 60L);
        C->easy_setopt(t->h, CURLOPT_USERAGENT, F->o->user_agent ? F->o->user_agent : "benchd/" PACKAGE_VERSION);
        C->easy_setopt(t->h, CURLOPT_BUFFERSIZE, 512L * 1024);
        if (t->ranged) {
                snprintf(t->range, sizeof(t->range), "%" PRId64 "-%" PRId64, t->pos, t->end - 1);
                C->easy_setopt(t->h, CURLOPT_RANGE, t->range);
        } else
                snprintf(t->range, sizeof(t->range), "0-%" PRId64 " (whole)", x->size - 1);
        if (C->multi_add_handle(F->multi, t->h) != CURLM_OK)
                return bd_err_set(F->err, -EIO, "curl_multi_add_handle failed");
        F->active[F->nactive++] = t;
        return 0;
}

static double now(void)
{
        return clock_monotonic();
}

/* The next piece of work: a retry whose time has come, else the next
 * missing chunk of the first file that has one. */
static struct xfer *next_work(struct fetch *F, double t, double *wait)
{
        for (struct xfer **pp = &F->retry; *pp;) {
                struct xfer *r = *pp;
                struct ffile *rx = &F->ff[r->file];
                if (rx->single) {
                        /* its file comes in one stream now: the range with it */
                        *pp = r->next;
                        if (rx->state[r->chunk] == C_ACTIVE)
                                set_state(F, rx, r->chunk, C_MISSING);
                        xfer_free(F, r);
                        continue;
                }
                if (r->not_before <= t) {
                        *pp = r->next;
                        r->next = NULL;
                        return r;
                }
                if (r->not_before - t < *wait)
                        *wait = r->not_before - t;
                pp = &r->next;
        }
        for (int i = 0; i < F->n; i++) {
                struct ffile *x = &F->ff[i];
                if (x->f->done)
                        continue;
                if (x->single) {
                        if (x->single_running)
                                continue;
                        /* the whole file again from its start, once every transfer of it ended */
                        bool busy = false;
                        for (int k = 0; k < F->nactive; k++)
                                busy = busy || F->active[k]->file == i;
                        for (struct xfer *r = F->retry; r; r = r->next)
                                busy = busy || r->file == i;
                        if (busy || x->ndone == x->nchunks)
                                continue;
                        if (x->single_not_before > t) {
                                if (x->single_not_before - t < *wait)
                                        *wait = x->single_not_before - t;
                                continue;
                        }
                        x->single_running = true;
                        struct xfer *w = xfer_new(F, i, 0, 0, x->size);
                        if (x->state[0] == C_MISSING)
                                set_state(F, x, 0, C_ACTIVE);
                        return w;
                }
                while (x->next < x->nchunks && x->state[x->next] != C_MISSING)
                        x->next++;
                if (x->next < x->nchunks) {
                        int64_t c = x->next++;
                        set_state(F, x, c, C_ACTIVE);
                        return xfer_new(F, i, c, c * x->chunk, c * x->chunk + chunk_len(x, c));
                }
        }
        return NULL;
}

static void report(struct fetch *F, bool force)
{
        double t = now();
        if (!F->o->progress || (!force && t - F->shown_at < 0.1 && !F->p.event))
                return;
        F->shown_at = t;
        F->p.active = F->nactive;
        pthread_mutex_lock(&F->lock);
        struct fetch_progress p = F->p;
        pthread_mutex_unlock(&F->lock);
        F->o->progress(F->o->arg, &p);
        F->p.event = NULL;
}

/* A transfer ended: its chunk done, retried from where it stopped, or the
 * fetch failed. */
static void xfer_ended(struct fetch *F, struct xfer *t, CURLcode rc)
{
        struct ffile *x = &F->ff[t->file];
        long status = 0;
        F->C->easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, &status);
        F->C->multi_remove_handle(F->multi, t->h);
        F->C->easy_cleanup(t->h);
        t->h = NULL;
        if (x->single && t->abort_single) {
                /* a range ignored: this chunk comes with the whole stream */
                if (x->state[t->chunk] == C_ACTIVE)
                        set_state(F, x, t->chunk, C_MISSING);
                xfer_free(F, t);
                return;
        }
        if (t->pos == t->end && (status == 200 || status == 206)) {
                /* every byte in and journalled: an error after them (a
                 * connection reset at the end) costs nothing */
                if (x->single)
                        x->single_running = false;
                xfer_free(F, t);
                return;
        }
        if (F->failed || (F->o->stop && *F->o->stop)) {
                xfer_free(F, t);
                return;
        }
        char why[CURL_ERROR_SIZE + 64];
        if (rc == CURLE_OK)
                snprintf(why, sizeof(why), t->pos < t->end ? "the connection ended at byte %" PRId64 : "HTTP %ld",
                         t->pos < t->end ? t->pos : (int64_t)status);
        if (status >= 400 || (rc == CURLE_WRITE_ERROR && status && status != 200 && status != 206))
                snprintf(why, sizeof(why), "HTTP %ld", status);
        else if (rc != CURLE_OK)
                snprintf(why, sizeof(why), "%s", t->errbuf[0] ? t->errbuf : F->C->easy_strerror(rc));
        bool permanent = (status >= 400 && status < 500 && status != 408 && status != 429) || status == 416;
        int tries = x->single ? ++x->single_tries : ++x->tries[t->chunk < x->nchunks ? t->chunk : x->nchunks - 1];
        if (permanent || tries > (F->o->retries < 0 ? 0 : F->o->retries > 0 ? F->o->retries : 5)) {
                char n[32] = "";
                if (!permanent)
                        snprintf(n, sizeof(n), " (%d tries)", tries);
                fail(F, -EIO, "%s: %s: bytes %s: %s%s", x->f->name, x->f->url, t->range, why, n);
                xfer_free(F, t);
                return;
        }
        double delay = (F->o->retry_delay > 0 ? F->o->retry_delay : 1.0) * pow(2, tries - 1);
        if (x->single)
                snprintf(F->event, sizeof(F->event), "%s: %s at byte %" PRId64 " (the server sends no ranges); "
                         "again from byte 0 in %.1f s", x->f->name, why, t->pos, delay);
        else
                snprintf(F->event, sizeof(F->event), "%s: bytes %s: %s; retrying from byte %" PRId64 " in %.1f s",
                         x->f->name, t->range, why, t->pos, delay);
        F->p.event = F->event;
        F->p.retries++;
        if (x->single) {
                /* no ranges: from the start again, after the delay */
                x->single_running = false;
                x->single_not_before = now() + delay;
                xfer_free(F, t);
                report(F, true);
                return;
        }
        struct xfer *r = xfer_new(F, t->file, t->chunk, t->pos, t->end);
        XXH3_copyState(r->xs, t->xs);
        r->not_before = now() + delay;
        r->next = F->retry;
        F->retry = r;
        xfer_free(F, t);
        report(F, true);
}

/* A file all in: once its digest is ready, compared and renamed into
 * place.  Returns 1 while the hasher is still at it. */
static int finish_file(struct fetch *F, int i)
{
        struct ffile *x = &F->ff[i];
        pthread_mutex_lock(&F->lock);
        bool ready = x->hashed_all;
        int read_errno = x->read_errno;
        pthread_mutex_unlock(&F->lock);
        if (!ready)
                return 1;
        if (read_errno)
                return bd_err_set(F->err, -read_errno, "%s: cannot read '%s' back to check it: %s (kept: run again)",
                                  x->f->name, x->part, strerror(read_errno));
        const char *want = x->f->sha256 ? x->f->sha256 : x->f->sha1;
        if (want && strncasecmp(x->got, want, strlen(want))) {
                unlink(x->part);
                unlink(x->journal);
                return bd_err_set(F->err, -EBADMSG,
                                  "%s: %s is %s, the published %s: not the published file (removed; fetch it again)",
                                  x->f->name, x->want_kind, x->got, want);
        }
        if (fsync(x->fd) < 0)
                return bd_err_set(F->err, -errno, "%s: '%s': %s", x->f->name, x->part, strerror(errno));
        if (rename(x->part, x->f->dest) < 0)
                return bd_err_set(F->err, -errno, "%s: cannot rename '%s': %s", x->f->name, x->part, strerror(errno));
        unlink(x->journal);
        fsync_dir_of(x->f->dest);
        x->f->done = true;
        return 0;
}

/* Asks the server how long the file is (HEAD), where the table does not say. */
static int probe_size(struct fetch *F, struct fetch_file *f)
{
        const struct curl_fns *C = F->C;
        CURL *h = C->easy_init();
        if (!h)
                return bd_err_set(F->err, -ENOMEM, "curl_easy_init failed");
        char eb[CURL_ERROR_SIZE] = "";
        C->easy_setopt(h, CURLOPT_URL, f->url);
        C->easy_setopt(h, CURLOPT_NOBODY, 1L);
        C->easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
        C->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        C->easy_setopt(h, CURLOPT_ERRORBUFFER, eb);
        C->easy_setopt(h, CURLOPT_CONNECTTIMEOUT, F->o->connect_timeout > 0 ? F->o->connect_timeout : 30L);
        C->easy_setopt(h, CURLOPT_USERAGENT, F->o->user_agent ? F->o->user_agent : "benchd/" PACKAGE_VERSION);
        CURLcode rc = C->easy_perform(h);
        long status = 0;
        curl_off_t len = -1;
        C->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        C->easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
        C->easy_cleanup(h);
        if (rc != CURLE_OK)
                return bd_err_set(F->err, -EIO, "%s: %s: %s", f->name, f->url, eb[0] ? eb : C->easy_strerror(rc));
        if (status != 200)
                return bd_err_set(F->err, -EIO, "%s: %s: HTTP %ld", f->name, f->url, status);
        if (len <= 0)
                return bd_err_set(F->err, -EPROTO, "%s: %s: the server does not say how long the file is", f->name,
                                  f->url);
        if (len > (curl_off_t)9000000000000000LL)
                return bd_err_set(F->err, -EFBIG, "%s: %s: the server says %" CURL_FORMAT_CURL_OFF_T " bytes", f->name,
                                  f->url, len);
        f->size = len;
        return 0;
}

int fetch_files(struct fetch_file *files, int n, const struct fetch_opts *o, struct bd_err *err)
{
        struct fetch F = { .o = o, .n = n, .err = err };
        if (!(F.C = curl_fns(err)))
                return -1;
        read_boot_id(F.boot);
        pthread_mutex_init(&F.lock, NULL);
        pthread_cond_init(&F.cond, NULL);
        int conns = o->connections > 0 ? o->connections : 4;
        int64_t chunk = o->chunk >= 4096 ? o->chunk : 8 << 20;
        F.ff = xcalloc((size_t)n + 1, sizeof(*F.ff));
        F.active = xcalloc((size_t)conns + 1, sizeof(*F.active));
        int r = 0;
        for (int i = 0; i < n; i++) {
                struct ffile *x = &F.ff[i];
                x->f = &files[i];
                x->fd = x->jfd = -1;
                files[i].resumed = files[i].fetched = 0;
                files[i].done = false;
                snprintf(x->want_kind, sizeof(x->want_kind), "%s", files[i].sha256 ? "sha256" : files[i].sha1 ? "sha1" : "none");
                struct stat st;
                if (stat(files[i].dest, &st) == 0 && S_ISREG(st.st_mode) &&
                    (files[i].size < 0 || st.st_size == files[i].size)) {
                        /* there already (an earlier fetch, or put there by
                         * hand): taken once it is checked */
                        snprintf(F.event, sizeof(F.event), "%s: checking the copy at %s", files[i].name,
                                 files[i].dest);
                        F.p.event = F.event;
                        report(&F, true);
                        struct bd_err verr;
                        if (fetch_verify(files[i].dest, files[i].name, files[i].size, files[i].sha256, files[i].sha1,
                                         NULL, NULL, o->stop, &verr) < 0) {
                                r = bd_err_set(err, -EBADMSG, "%s%s", verr.msg,
                                               strstr(verr.msg, "not the published file") ? " (remove it to fetch it again)"
                                                                                           : "");
                                goto out;
                        }
                        files[i].done = true;
                        files[i].size = st.st_size;
                        continue;
                }
                if (files[i].size < 0 && (r = probe_size(&F, &files[i])) < 0)
                        goto out;
                x->size = files[i].size;
                x->chunk = chunk;
                if (x->size == 0) {
                        fail(&F, -EPROTO, "%s: an empty file", files[i].name);
                        r = -1;
                        goto out;
                }
                if ((r = open_file(&F, x)) < 0)
                        goto out;
        }
        for (int i = 0; i < n; i++) {
                F.p.total += files[i].size;
                F.p.done += files[i].done ? files[i].size : files[i].resumed;
                F.p.resumed += files[i].resumed;
                if (files[i].done)
                        F.p.hashed += files[i].size;
        }
        if (!(F.multi = F.C->multi_init())) {
                r = bd_err_set(err, -ENOMEM, "curl_multi_init failed");
                goto out;
        }
        if (pthread_create(&F.hasher, NULL, hasher_main, &F) != 0) {
                r = bd_err_set(err, -EAGAIN, "cannot start the hashing thread");
                goto out;
        }
        F.hasher_running = true;
        report(&F, true);
        int finished = 0;
        for (int i = 0; i < n; i++)
                finished += files[i].done;
        while (!F.failed && finished < n) {
                if (o->stop && *o->stop) {
                        fail(&F, -EINTR, "interrupted: what was received is kept; run again to resume");
                        break;
                }
                double t = now(), wait = 1.0;
                while (F.nactive < conns) {
                        struct xfer *w = next_work(&F, t, &wait);
                        if (!w)
                                break;
                        if ((r = xfer_start(&F, w)) < 0) {
                                xfer_free(&F, w);
                                F.failed = true;
                                break;
                        }
                }
                if (F.failed)
                        break;
                int running = 0;
                F.C->multi_perform(F.multi, &running);
                CURLMsg *m;
                int left;
                bool ended = false;
                while ((m = F.C->multi_info_read(F.multi, &left))) {
                        if (m->msg != CURLMSG_DONE)
                                continue;
                        struct xfer *done = NULL;
                        F.C->easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&done);
                        CURLcode rc = m->data.result;
                        for (int k = 0; k < F.nactive; k++)
                                if (F.active[k] == done) {
                                        F.active[k] = F.active[--F.nactive];
                                        break;
                                }
                        xfer_ended(&F, done, rc);
                        ended = true;
                }
                /* the files whose every chunk is in */
                for (int i = 0; i < n && !F.failed; i++) {
                        struct ffile *x = &F.ff[i];
                        if (files[i].done || x->ndone < x->nchunks)
                                continue;
                        bool busy = false;
                        for (int k = 0; k < F.nactive; k++)
                                busy = busy || F.active[k]->file == i;
                        if (busy)
                                continue;
                        int f = finish_file(&F, i);
                        if (f < 0) {
                                F.failed = true;
                                break;
                        }
                        if (f > 0) {
                                wait = 0.05;    /* the digest is near */
                                continue;
                        }
                        finished++;
                        report(&F, true);
                }
                report(&F, false);
                if (F.failed || finished == n)
                        break;
                if (ended && F.nactive < conns)
                        continue;       /* a connection free: its next range now, not after a poll */
                int ms = (int)(wait * 1000);
                F.C->multi_poll(F.multi, NULL, 0, ms < 1 ? 1 : ms > 200 ? 200 : ms, NULL);
        }
        r = F.failed ? -1 : 0;
out:
        if (F.hasher_running) {
                pthread_mutex_lock(&F.lock);
                F.hasher_quit = true;
                pthread_cond_broadcast(&F.cond);
                pthread_mutex_unlock(&F.lock);
                pthread_join(F.hasher, NULL);
        }
        for (int k = 0; k < F.nactive; k++)
                xfer_free(&F, F.active[k]);
        while (F.retry) {
                struct xfer *t = F.retry;
                F.retry = t->next;
                xfer_free(&F, t);
        }
        if (F.multi)
                F.C->multi_cleanup(F.multi);
        for (int i = 0; i < n; i++) {
                struct ffile *x = &F.ff[i];
                if (x->fd >= 0)
                        close(x->fd);
                if (x->jfd >= 0)
                        close(x->jfd);
                free(x->part);
                free(x->journal);
                free(x->state);
                free(x->tries);
        }
        free(F.ff);
        free(F.active);
        pthread_mutex_destroy(&F.lock);
        pthread_cond_destroy(&F.cond);
        return r < 0 ? -1 : 0;
}

int fetch_verify(const char *path, const char *name, int64_t size, const char *sha256, const char *sha1,
                 void (*progress)(void *arg, uint64_t done, uint64_t total), void *arg, volatile sig_atomic_t *stop,
                 struct bd_err *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return bd_err_set(err, -errno, "%s: cannot open '%s': %s", name, path, strerror(errno));
        struct stat st;
        if (fstat(fd, &st) < 0)
                return bd_err_set(err, -errno, "%s: '%s': %s", name, path, strerror(errno));
        if (size > 0 && st.st_size != size)
                return bd_err_set(err, -EINVAL, "%s: '%s' is %jd bytes, the published %" PRId64, name, path,
                                  (intmax_t)st.st_size, size);
        if (!sha256 && !sha1)
                return bd_err_set(err, -EINVAL, "%s: no digest to check '%s' against", name, path);
        struct digest d;
        digest_init(&d, sha256 ? DIGEST_SHA256 : DIGEST_SHA1);
        _cleanup_free_ uint8_t *buf = xmalloc(READ_PIECE);
        uint64_t done = 0;
        ssize_t r;
        while ((r = read(fd, buf, READ_PIECE)) > 0) {
                digest_update(&d, buf, (size_t)r);
                done += (uint64_t)r;
                if (progress)
                        progress(arg, done, (uint64_t)st.st_size);
                if (stop && *stop) {
                        digest_release(&d);
                        return bd_err_set(err, -EINTR, "interrupted");
                }
        }
        if (r < 0) {
                int e = errno;
                digest_release(&d);
                return bd_err_set(err, -e, "%s: cannot read '%s': %s", name, path, strerror(e));
        }
        char hex[DIGEST_HEX_MAX];
        digest_final_hex(&d, hex);
        const char *want = sha256 ? sha256 : sha1;
        if (strncasecmp(hex, want, strlen(want)))
                return bd_err_set(err, -EBADMSG, "%s: %s of '%s' is %s, the published %s: not the published file", name,
                                  sha256 ? "SHA-256" : "SHA-1", path, hex, want);
        return 0;
}

/* filecopy.c: copy_file_range, sendfile and read/write, checksums, pacing. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/sendfile.h>
#include <time.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "filecopy.h"
#include "macro.h"

/* the copy is read back in pieces that stay in the CPU's L2 cache while they
 * are hashed (cheaper than mapping the file: no page tables, no TLB flush) */
#define READBACK_CHUNK ((size_t)256 << 10)

static const char *const method_names[] = {
        [COPY_FILE_RANGE] = "copy_file_range",
        [COPY_SENDFILE] = "sendfile",
        [COPY_READWRITE] = "readwrite",
};

const char *copy_method_name(enum bd_copy_method m)
{
        return m < _COPY_METHOD_MAX ? method_names[m] : "auto";
}

int copy_method_parse(const char *name, enum bd_copy_method *ret)
{
        if (streq(name, "auto")) {
                *ret = COPY_AUTO;
                return 0;
        }
        for (int m = 0; m < _COPY_METHOD_MAX; m++)
                if (streq(name, method_names[m])) {
                        *ret = (enum bd_copy_method)m;
                        return 0;
                }
        return -EINVAL;
}

/* ---- pacing ---------------------------------------------------------------- */

static double now_mono(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct bd_bwlimit {
        pthread_mutex_t lock;
        double rate;            /* bytes per second */
        double next;            /* monotonic time at which the budget is free again */
};

struct bd_bwlimit *bwlimit_new(double rate)
{
        if (!(rate > 0))
                return NULL;
        struct bd_bwlimit *b = xcalloc(1, sizeof(*b));
        pthread_mutex_init(&b->lock, NULL);
        b->rate = rate;
        return b;
}

void bwlimit_free(struct bd_bwlimit *b)
{
        if (!b)
                return;
        pthread_mutex_destroy(&b->lock);
        free(b);
}

uint64_t bwlimit_chunk(const struct bd_bwlimit *b)
{
        if (!b || b->rate <= 0)
                return (uint64_t)1 << 62;
        /* about ten reservations a second, between 64 KiB and 4 MiB */
        uint64_t c = (uint64_t)(b->rate / 10);
        if (c < 65536)
                c = 65536;
        if (c > ((uint64_t)4 << 20))
                c = (uint64_t)4 << 20;
        return c;
}

void bwlimit_take(struct bd_bwlimit *b, uint64_t n, const atomic_bool *cancel)
{
        if (!b || b->rate <= 0 || n == 0)
                return;
        pthread_mutex_lock(&b->lock);
        double now = now_mono();
        if (b->next < now)
                b->next = now;
        b->next += (double)n / b->rate;
        double until = b->next;
        pthread_mutex_unlock(&b->lock);
        /* the reservation is paid for by waiting until the budget covers it */
        for (;;) {
                if (cancel && atomic_load_explicit(cancel, memory_order_relaxed))
                        return;
                double left = until - now_mono();
                if (left <= 0)
                        return;
                if (left > 0.1)
                        left = 0.1;
                struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
                nanosleep(&ts, NULL);
        }
}

/* ---- copying ---------------------------------------------------------------- */

void copier_init(struct bd_copier *c, enum bd_copy_method first, struct bd_bwlimit *bw, const atomic_bool *cancel,
                 atomic_uint_fast64_t *progress)
{
        atomic_init(&c->method, first == COPY_AUTO ? COPY_FILE_RANGE : (int)first);
        c->bw = bw;
        c->cancel = cancel;
        c->progress = progress;
        for (int i = 0; i < _COPY_METHOD_MAX; i++)
                atomic_init(&c->used[i], 0);
}

/* errors meaning "this method does not work for these files": try the next one */
static bool unsupported(int e)
{
        return e == EXDEV || e == EINVAL || e == ENOSYS || e == EOPNOTSUPP || e == EBADF || e == ETXTBSY ||
               e == EPERM;
}

static int write_all(int fd, const char *p, size_t n, uint64_t off)
{
        while (n > 0) {
                ssize_t w = pwrite(fd, p, n, (off_t)off);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (w == 0)
                        return -EIO;
                p += w;
                n -= (size_t)w;
                off += (uint64_t)w;
        }
        return 0;
}

int hash_fd(int fd, void *buf, size_t bufsize, const atomic_bool *cancel, atomic_uint_fast64_t *progress,
            uint8_t ret_sum[16], uint64_t *ret_len)
{
        XXH3_state_t st;
        XXH3_128bits_reset(&st);
        uint64_t off = 0;
        *ret_len = 0;
        for (;;) {
                if (cancel && atomic_load_explicit(cancel, memory_order_relaxed))
                        return -ECANCELED;
                ssize_t n = pread(fd, buf, bufsize, (off_t)off);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                XXH3_128bits_update(&st, buf, (size_t)n);
                off += (uint64_t)n;
                *ret_len = off;
                if (progress)
                        atomic_fetch_add_explicit(progress, (uint64_t)n, memory_order_relaxed);
        }
        XXH128_canonical_t c;
        XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&st));
        memcpy(ret_sum, c.digest, 16);
        *ret_len = off;
        return 0;
}

/* One step of at most n bytes from offset off with method m: bytes moved
 * (0 at the end of the source) or -errno.  *dest_side tells which file failed. */
static ssize_t step(int m, int sfd, int dfd, uint64_t off, size_t n, void *buf, size_t bufsize, XXH3_state_t *st,
                    bool *dest_side)
{
        *dest_side = false;
        if (m == COPY_FILE_RANGE) {
                loff_t in = (loff_t)off, out = (loff_t)off;
                ssize_t r = copy_file_range(sfd, &in, dfd, &out, n, 0);
                if (r < 0) {
                        /* ENOSPC, EDQUOT, EFBIG can only be the destination's */
                        *dest_side = errno == ENOSPC || errno == EDQUOT || errno == EFBIG;
                        return -errno;
                }
                return r;
        }
        if (m == COPY_SENDFILE) {
                if (lseek(dfd, (off_t)off, SEEK_SET) < 0) {
                        *dest_side = true;
                        return -errno;
                }
                off_t in = (off_t)off;
                ssize_t r = sendfile(dfd, sfd, &in, n);
                if (r < 0) {
                        *dest_side = errno == ENOSPC || errno == EDQUOT || errno == EFBIG;
                        return -errno;
                }
                return r;
        }
        size_t want = n < bufsize ? n : bufsize;
        ssize_t r = pread(sfd, buf, want, (off_t)off);
        if (r <= 0)
                return r < 0 ? -errno : 0;
        int w = write_all(dfd, buf, (size_t)r, off);
        if (w < 0) {
                *dest_side = true;
                return w;
        }
        XXH3_128bits_update(st, buf, (size_t)r);
        return r;
}

int copy_fd(struct bd_copier *c, int sfd, int dfd, uint64_t size, bool through_buf, void *buf, size_t bufsize,
            uint8_t ret_sum[16], uint64_t *ret_copied, bool *ret_dest_side)
{
        XXH3_state_t st;
        XXH3_128bits_reset(&st);
        int m = through_buf ? COPY_READWRITE : atomic_load_explicit(&c->method, memory_order_relaxed);
        bool in_kernel = false;         /* some bytes did not pass through buf */
        uint64_t off = 0, chunk = bwlimit_chunk(c->bw);
        /* in-kernel copies report progress and check cancellation every 16 MiB */
        if (chunk > ((uint64_t)16 << 20))
                chunk = (uint64_t)16 << 20;
        *ret_dest_side = false;
        *ret_copied = 0;
        while (off < size) {
                if (c->cancel && atomic_load_explicit(c->cancel, memory_order_relaxed))
                        return -ECANCELED;
                uint64_t n = size - off < chunk ? size - off : chunk;
                bwlimit_take(c->bw, n, c->cancel);
                uint64_t done = 0;
                while (done < n) {
                        bool dest;
                        ssize_t r = step(m, sfd, dfd, off + done, (size_t)(n - done), buf, bufsize, &st, &dest);
                        if (r == -EINTR)
                                continue;
                        if (r < 0 && m != COPY_READWRITE && !dest && unsupported((int)-r)) {
                                /* drop this method for the rest of the job */
                                int expect = m;
                                atomic_compare_exchange_strong(&c->method, &expect, m + 1);
                                m++;
                                continue;
                        }
                        if (r < 0) {
                                *ret_dest_side = dest;
                                return (int)r;  /* *ret_copied: what progress was told */
                        }
                        if (r == 0 && m != COPY_READWRITE) {
                                /* some filesystems copy nothing in-kernel without an
                                 * error: let read() say whether this is the end */
                                m = COPY_READWRITE;
                                continue;
                        }
                        if (r == 0)
                                break;
                        if (m != COPY_READWRITE)
                                in_kernel = true;
                        done += (uint64_t)r;
                }
                off += done;
                *ret_copied = off;
                if (c->progress)
                        atomic_fetch_add_explicit(c->progress, done, memory_order_relaxed);
                if (done < n)
                        break;  /* the source ended early */
        }
        atomic_fetch_add_explicit(&c->used[m], 1, memory_order_relaxed);
        if (!in_kernel) {
                XXH128_canonical_t cs;
                XXH128_canonicalFromHash(&cs, XXH3_128bits_digest(&st));
                memcpy(ret_sum, cs.digest, 16);
                return 0;
        }
        /* what the destination holds, read back while it is in the page cache */
        uint64_t len;
        int r = hash_fd(dfd, buf, bufsize < READBACK_CHUNK ? bufsize : READBACK_CHUNK, c->cancel, NULL, ret_sum, &len);
        if (r < 0) {
                *ret_dest_side = true;
                return r;
        }
        return 0;
}

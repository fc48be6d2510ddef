/* filecopy.c: copy_file_range, sendfile and read/write, checksums, pacing. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "clock.h"
#include "filecopy.h"
#include "macro.h"


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

struct bd_bwlimit {
        pthread_mutex_t lock;
        double rate;            /* bytes per second */
        double next;            /* monotonic time at which the budget is free again */
};

struct bd_bwlimit *copy_bwlimit_new(double rate)
{
        if (!(rate > 0))
                return NULL;
        struct bd_bwlimit *b = xcalloc(1, sizeof(*b));
        pthread_mutex_init(&b->lock, NULL);
        b->rate = rate;
        return b;
}

void copy_bwlimit_free(struct bd_bwlimit *b)
{
        if (!b)
                return;
        pthread_mutex_destroy(&b->lock);
        free(b);
}

uint64_t copy_bwlimit_chunk(const struct bd_bwlimit *b)
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

void copy_bwlimit_take(struct bd_bwlimit *b, uint64_t n, const atomic_bool *cancel)
{
        if (!b || b->rate <= 0 || n == 0)
                return;
        pthread_mutex_lock(&b->lock);
        double now = clock_monotonic();
        if (b->next < now)
                b->next = now;
        b->next += (double)n / b->rate;
        double until = b->next;
        pthread_mutex_unlock(&b->lock);
        /* the reservation is paid for by waiting until the budget covers it */
        for (;;) {
                if (cancel && atomic_load_explicit(cancel, memory_order_relaxed))
                        return;
                double left = until - clock_monotonic();
                if (left <= 0)
                        return;
                if (left > 0.1)
                        left = 0.1;
                struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
                nanosleep(&ts, NULL);
        }
}

/* ---- copying ---------------------------------------------------------------- */

void copy_copier_init(struct bd_copier *c, enum bd_copy_method first, struct bd_bwlimit *bw, const atomic_bool *cancel,
                      atomic_uint_fast64_t *progress)
{
        atomic_init(&c->method, first == COPY_AUTO ? COPY_READWRITE : (int)first);
        atomic_init(&c->direct_read, false);
        c->bw = bw;
        c->cancel = cancel;
        c->progress = progress;
        for (int i = 0; i < _COPY_METHOD_MAX; i++)
                atomic_init(&c->used[i], 0);
}

bool copy_direct_read_auto(int srcfd)
{
        struct statfs a;
        if (fstatfs(srcfd, &a) < 0)
                return false;
        switch ((unsigned long)a.f_type) {
        case EXT4_SUPER_MAGIC:  /* ext2, ext3 too */
        case XFS_SUPER_MAGIC:
        case BTRFS_SUPER_MAGIC:
                return true;
        default:
                return false;
        }
}

/* What COPY_AUTO means for these two directories.  The checksum needs every
 * byte read into our buffer anyway, so writing that buffer out is the
 * cheapest copy, unless the filesystem can copy without moving data: a
 * reflink (Btrfs, XFS, OCFS2, bcachefs, ZFS) or a server-side copy (NFS,
 * SMB) within one filesystem, which copy_file_range does. */
enum bd_copy_method copy_method_auto(int srcfd, int dstfd)
{
        struct statfs a, b;
        struct stat sa, sb;
        if (fstatfs(srcfd, &a) < 0 || fstatfs(dstfd, &b) < 0 || fstat(srcfd, &sa) < 0 || fstat(dstfd, &sb) < 0 ||
            a.f_type != b.f_type)
                return COPY_READWRITE;
        switch ((unsigned long)a.f_type) {
        case NFS_SUPER_MAGIC:
        case CIFS_SUPER_MAGIC:
        case 0xfe534d42:        /* SMB2 */
                /* server-side copies, also between two mounts of one server */
                return COPY_FILE_RANGE;
        case BTRFS_SUPER_MAGIC:
        case XFS_SUPER_MAGIC:
        case OCFS2_SUPER_MAGIC:
        case 0xca451a4e:        /* bcachefs */
        case 0x2fc12fc1:        /* ZFS */
                /* reflinks, within one filesystem */
                return sa.st_dev == sb.st_dev ? COPY_FILE_RANGE : COPY_READWRITE;
        default:
                return COPY_READWRITE;
        }
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

int copy_hash_fd(int fd, void *buf, size_t bufsize, const atomic_bool *cancel, atomic_uint_fast64_t *progress,
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

/* Reads up to n bytes at off, as many as the file holds: bytes read or
 * -errno.  With O_DIRECT (align > 1) a read that ends off the alignment is
 * the end of the file: the next one could not start there. */
static ssize_t read_full(int fd, char *buf, size_t n, uint64_t off, size_t align)
{
        size_t got = 0;
        while (got < n) {
                ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + got));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        break;
                got += (size_t)r;
                if (got % align)
                        break;
        }
        return (ssize_t)got;
}

/* Moves n bytes at off in the kernel with method m: bytes moved (0 when the
 * method moved nothing) or -errno; *dest_side tells which file failed. */
static ssize_t kernel_step(int m, int sfd, int dfd, uint64_t off, size_t n, bool *dest_side)
{
        ssize_t r;
        if (m == COPY_FILE_RANGE) {
                loff_t in = (loff_t)off, out = (loff_t)off;
                r = copy_file_range(sfd, &in, dfd, &out, n, 0);
        } else {
                if (lseek(dfd, (off_t)off, SEEK_SET) < 0) {
                        *dest_side = true;
                        return -errno;
                }
                off_t in = (off_t)off;
                r = sendfile(dfd, sfd, &in, n);
        }
        /* ENOSPC, EDQUOT, EFBIG can only be the destination's */
        *dest_side = r < 0 && (errno == ENOSPC || errno == EDQUOT || errno == EFBIG);
        return r < 0 ? -errno : r;
}

/* Turns O_DIRECT on for reading sfd into buf when the job reads that way and
 * the buffer allows it; returns the file's flags before, or -1 (not direct). */
static int direct_begin(struct bd_copier *c, int m, int sfd, const void *buf, size_t bufsize)
{
        if (m != COPY_READWRITE || !atomic_load_explicit(&c->direct_read, memory_order_relaxed) ||
            (uintptr_t)buf % COPY_BUF_ALIGN || bufsize % COPY_BUF_ALIGN || bufsize < COPY_BUF_ALIGN)
                return -1;
        int fl = fcntl(sfd, F_GETFL);
        if (fl < 0 || fcntl(sfd, F_SETFL, fl | O_DIRECT) < 0)
                return -1;
        return fl;
}

/* The length of the hole at off in sfd, up to size (0: data there, or the
 * filesystem cannot tell); its ends on multiples of align (a power of two),
 * which direct reads need.  When there is data at off, *data_end is where
 * the next hole begins (size when none, or when it cannot tell). */
static uint64_t hole_at(int sfd, uint64_t off, uint64_t size, uint64_t align, uint64_t *data_end)
{
        *data_end = size;
        off_t d = lseek(sfd, (off_t)off, SEEK_DATA);
        if (d < 0 && errno == ENXIO)    /* a hole up to the end of the file */
                d = lseek(sfd, 0, SEEK_END);
        if (d < 0)
                return 0;
        uint64_t end = (uint64_t)d < size ? (uint64_t)d : size;
        if (end < size)
                end &= ~(align - 1);
        if (end > off)
                return end - off;
        off_t h = lseek(sfd, (off_t)off, SEEK_HOLE);
        uint64_t next = h < 0 ? size : ((uint64_t)h + align - 1) & ~(align - 1);
        if (next > off && next < size)
                *data_end = next;
        return 0;
}

/* Hashes len zero bytes (a hole reads as zeros) from buf, cleared. */
static void hash_zeros(XXH3_state_t *st, void *buf, size_t bufsize, uint64_t len)
{
        size_t z = (size_t)(len < bufsize ? len : bufsize);
        memset(buf, 0, z);
        for (uint64_t left = len; left > 0;) {
                size_t k = (size_t)(left < z ? left : z);
                XXH3_128bits_update(st, buf, k);
                left -= k;
        }
}

static int copy_pieces(struct bd_copier *c, int sfd, int dfd, uint64_t size, void *buf, size_t bufsize,
                       XXH3_state_t *st, int *dflags, uint64_t *ret_copied, bool *ret_dest_side)
{
        /* a sparse source keeps its holes: they are hashed, not written */
        struct stat sst;
        bool sparse = fstat(sfd, &sst) == 0 && (uint64_t)sst.st_blocks * 512 < (uint64_t)sst.st_size;
        int m = atomic_load_explicit(&c->method, memory_order_relaxed);
        uint64_t off = 0, chunk = copy_bwlimit_chunk(c->bw);
        if (chunk > bufsize)
                chunk = bufsize;
        if ((*dflags = direct_begin(c, m, sfd, buf, bufsize)) >= 0)
                chunk = chunk < COPY_BUF_ALIGN ? COPY_BUF_ALIGN : chunk & ~(uint64_t)(COPY_BUF_ALIGN - 1);
        while (off < size) {
                if (c->cancel && atomic_load_explicit(c->cancel, memory_order_relaxed))
                        return -ECANCELED;
                size_t n = (size_t)(size - off < chunk ? size - off : chunk);
                bool direct = *dflags >= 0;
                if (sparse) {
                        uint64_t data_end, hole = hole_at(sfd, off, size, direct ? COPY_BUF_ALIGN : 1, &data_end);
                        if (hole > 0) {
                                hash_zeros(st, buf, bufsize, hole);
                                off += hole;
                                *ret_copied = off;
                                if (c->progress)
                                        atomic_fetch_add_explicit(c->progress, hole, memory_order_relaxed);
                                continue;
                        }
                        if (data_end - off < n)
                                n = (size_t)(data_end - off);
                }
                copy_bwlimit_take(c->bw, n, c->cancel);
                /* the checksum is of the bytes read here, the very bytes written next */
                ssize_t got = read_full(sfd, buf, direct ? (n + COPY_BUF_ALIGN - 1) & ~(size_t)(COPY_BUF_ALIGN - 1) : n,
                                        off, direct ? COPY_BUF_ALIGN : 1);
                if (got == -EINVAL && direct) {
                        /* no direct reads here after all (a filesystem or a file
                         * that refuses them): read through the page cache, from
                         * now on for the whole job */
                        atomic_store_explicit(&c->direct_read, false, memory_order_relaxed);
                        (void) fcntl(sfd, F_SETFL, *dflags);
                        *dflags = -1;
                        got = read_full(sfd, buf, n, off, 1);
                }
                if (got < 0)
                        return (int)got;
                if ((size_t)got > n)
                        got = (ssize_t)n; /* it grew meanwhile: its ctime tells the caller */
                XXH3_128bits_update(st, buf, (size_t)got);
                size_t done = 0;
                while (done < (size_t)got) {
                        if (m == COPY_READWRITE) {
                                int w = write_all(dfd, (char *)buf + done, (size_t)got - done, off + done);
                                if (w < 0) {
                                        *ret_dest_side = true;
                                        return w;
                                }
                                done = (size_t)got;
                                break;
                        }
                        bool dest;
                        ssize_t r = kernel_step(m, sfd, dfd, off + done, (size_t)got - done, &dest);
                        if (r == -EINTR)
                                continue;
                        if (r < 0 && !dest && unsupported((int)-r)) {
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
                        if (r == 0) {
                                /* the kernel moved nothing (some filesystems do that
                                 * without an error): write the rest from the buffer */
                                m = COPY_READWRITE;
                                continue;
                        }
                        done += (size_t)r;
                }
                off += done;
                *ret_copied = off;
                if (c->progress)
                        atomic_fetch_add_explicit(c->progress, done, memory_order_relaxed);
                if ((size_t)got < n)
                        break;  /* the source ended early */
        }
        /* a hole at the end is the file's length, not a write */
        if (sparse && ftruncate(dfd, (off_t)off) < 0) {
                *ret_dest_side = true;
                return -errno;
        }
        atomic_fetch_add_explicit(&c->used[m], 1, memory_order_relaxed);
        return 0;
}

int copy_fd(struct bd_copier *c, int sfd, int dfd, uint64_t size, void *buf, size_t bufsize, uint8_t ret_sum[16],
            uint64_t *ret_copied, bool *ret_dest_side)
{
        XXH3_state_t st;
        XXH3_128bits_reset(&st);
        *ret_dest_side = false;
        *ret_copied = 0;
        int dflags = -1;
        int r = copy_pieces(c, sfd, dfd, size, buf, bufsize, &st, &dflags, ret_copied, ret_dest_side);
        if (dflags >= 0)
                (void) fcntl(sfd, F_SETFL, dflags);
        if (r < 0)
                return r;
        XXH128_canonical_t cs;
        XXH128_canonicalFromHash(&cs, XXH3_128bits_digest(&st));
        memcpy(ret_sum, cs.digest, 16);
        return 0;
}

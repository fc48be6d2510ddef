/* test-filecopy.c: copy_fd() with direct (O_DIRECT) and page-cache reads:
 * the same bytes and checksum for sizes around the alignment, under a
 * bandwidth limit, from an unaligned buffer; and direct reads really leave
 * the source out of the page cache (where the filesystem takes them). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stage/filecopy.h"
#include "macro.h"
#include "randfile.h"
#include "tap.h"

/* a directory on disk: /tmp may be a tmpfs, which takes no direct reads */
static char root[] = "/var/tmp/test-filecopy.XXXXXX";

static char *put(const char *name, size_t size, unsigned seed)
{
        char *path = xasprintf("%s/%s", root, name);
        write_random_file(path, size, seed);
        return path;
}

/* b holds the first n bytes of a, and nothing else */
static bool same_start(const char *a, const char *b, uint64_t n)
{
        struct stat st;
        if (stat(b, &st) < 0 || (uint64_t)st.st_size != n)
                return false;
        char *cmd = xasprintf("cmp -s -n %llu '%s' '%s'", (unsigned long long)n, a, b);
        bool same = system(cmd) == 0;
        free(cmd);
        return same;
}

/* Copies the first size bytes of src to a new file with the copier: the
 * same bytes, and the checksum copy_fd returns is that of the copy (copy_hash_fd). */
static void check_copy(struct bd_copier *c, const char *src, uint64_t size, char *buf, size_t bufsize,
                       const char *what)
{
        char *dst = xasprintf("%s.copy", src);
        int sfd = open(src, O_RDONLY | O_CLOEXEC);
        int dfd = open(dst, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        uint8_t sum[16], want[16];
        uint64_t copied = 0, len = 0;
        bool dest_side = true;
        int r = copy_fd(c, sfd, dfd, size, buf, bufsize, sum, &copied, &dest_side);
        char *msg = xasprintf("%s: copied", what);
        is_int(r, 0, msg);
        free(msg);
        msg = xasprintf("%s: every byte", what);
        is_int((long long)copied, (long long)size, msg);
        free(msg);
        ok(!dest_side, "  no destination error");
        int flags = fcntl(sfd, F_GETFL);
        ok(flags >= 0 && !(flags & O_DIRECT), "  the source's flags as they were");
        ok(same_start(src, dst, size), "  the same bytes");
        char *hb = xmalloc(1 << 16);
        ok(copy_hash_fd(dfd, hb, 1 << 16, NULL, NULL, want, &len) == 0 && len == size && memcmp(sum, want, 16) == 0,
           "  the checksum of what was written");
        free(hb);
        close(dfd);
        close(sfd);
        unlink(dst);
        free(dst);
}

/* Pages of path in the page cache, after copying it with c (its cache dropped first). */
static size_t resident_after_copy(struct bd_copier *c, const char *path, uint64_t size, char *buf, size_t bufsize)
{
        int sfd = open(path, O_RDONLY | O_CLOEXEC);
        /* written back first: only clean pages leave the cache */
        if (fsync(sfd) < 0)
                abort();
        (void) posix_fadvise(sfd, 0, 0, POSIX_FADV_DONTNEED);
        char *dst = xasprintf("%s.copy", path);
        int dfd = open(dst, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        uint8_t sum[16];
        uint64_t copied;
        bool dest_side;
        if (copy_fd(c, sfd, dfd, size, buf, bufsize, sum, &copied, &dest_side) != 0)
                abort();
        close(dfd);
        unlink(dst);
        free(dst);
        size_t pages = (size + 4095) / 4096, n = 0;
        void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, sfd, 0);
        unsigned char *vec = xmalloc(pages);
        if (map != MAP_FAILED && mincore(map, size, vec) == 0)
                for (size_t i = 0; i < pages; i++)
                        n += vec[i] & 1;
        if (map != MAP_FAILED)
                munmap(map, size);
        free(vec);
        close(sfd);
        return n;
}

int main(void)
{
        if (!mkdtemp(root)) {
                printf("1..0 # SKIP cannot create %s: %s\n", root, strerror(errno));
                return 0;
        }
        const size_t bufsize = (size_t)1 << 20;
        char *buf = xaligned_alloc(COPY_BUF_ALIGN, bufsize + COPY_BUF_ALIGN);
        static const size_t sizes[] = { 0, 1, 4095, 4096, 4097, 65536 + 17, ((size_t)1 << 20) + 123, 3u << 20 };
        int dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        bool direct_fs = copy_direct_read_auto(dirfd);
        close(dirfd);

        for (int direct = 0; direct < 2; direct++)
                for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                        char name[32];
                        snprintf(name, sizeof(name), "f%zu", sizes[i]);
                        char *src = put(name, sizes[i], (unsigned)i + 1);
                        struct bd_copier c;
                        copy_copier_init(&c, COPY_READWRITE, NULL, NULL, NULL);
                        atomic_store(&c.direct_read, direct);
                        char *what = xasprintf("%zu bytes, %s reads", sizes[i], direct ? "direct" : "page-cache");
                        check_copy(&c, src, sizes[i], buf, bufsize, what);
                        free(what);
                        unlink(src);
                        free(src);
                }

        /* pieces of a bandwidth limit (100,000 bytes at 1 MB/s: rounded to
         * whole blocks for direct reads) and a buffer that is not aligned
         * (page-cache reads then) */
        char *src = put("paced", 200000, 7);
        struct bd_bwlimit *bw = copy_bwlimit_new(1000000);
        struct bd_copier c;
        copy_copier_init(&c, COPY_READWRITE, bw, NULL, NULL);
        atomic_store(&c.direct_read, true);
        check_copy(&c, src, 200000, buf, bufsize, "under --bwlimit, direct reads");
        ok(!direct_fs || atomic_load(&c.direct_read), "  still direct (the pieces were whole blocks)");
        copy_bwlimit_free(bw);
        copy_copier_init(&c, COPY_READWRITE, NULL, NULL, NULL);
        atomic_store(&c.direct_read, true);
        check_copy(&c, src, 200000, buf + 8, bufsize, "an unaligned buffer");
        ok(atomic_load(&c.direct_read), "  leaves direct reads on for aligned buffers");
        /* a size that says less than the file holds: only that much */
        check_copy(&c, src, 100001, buf, bufsize, "the first 100001 bytes, direct reads");
        ok(!direct_fs || atomic_load(&c.direct_read), "  still direct");

        if (!direct_fs)
                printf("ok %d # SKIP %s is not on ext4, XFS or Btrfs: no direct reads there\n", ++tap_n, root);
        else {
                copy_copier_init(&c, COPY_READWRITE, NULL, NULL, NULL);
                atomic_store(&c.direct_read, true);
                size_t n = resident_after_copy(&c, src, 200000, buf, bufsize);
                ok(n == 0, "direct reads leave the source out of the page cache");
                if (n)
                        printf("#   %zu pages resident\n", n);
                ok(atomic_load(&c.direct_read), "  and stay on for the job");
                atomic_store(&c.direct_read, false);
                ok(resident_after_copy(&c, src, 200000, buf, bufsize) > 0, "page-cache reads fill it");
        }
        unlink(src);
        free(src);
        free(buf);
        rmdir(root);
        return done_testing();
}

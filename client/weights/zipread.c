/* zipread.c: a zip archive's central directory, checked (zipread.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "crc32.h"
#include "zipread.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_LOCATOR64 0x07064b50u
#define END_SIZE 22
#define LOCATOR_SIZE 20
#define END64_SIZE 56
#define CENTRAL_SIZE 46
#define LOCAL_SIZE 30

void zip_release(struct zip_archive *z)
{
        for (size_t i = 0; i < z->n; i++)
                free(z->e[i].name);
        free(z->e);
        z->e = NULL;
        z->n = 0;
}

/* The end of central directory record: the last signature whose comment
 * reaches the end of the archive exactly. */
static int find_end(const unsigned char *data, size_t size, size_t *ret)
{
        size_t lo = size - END_SIZE > 0xffff ? size - END_SIZE - 0xffff : 0;
        for (size_t pos = size - END_SIZE + 1; pos-- > lo;)
                if (zip_le(data + pos, 4) == SIG_END && pos + END_SIZE + zip_le(data + pos + 20, 2) == size) {
                        *ret = pos;
                        return 0;
                }
        return -EBADMSG;
}

struct dir {
        uint64_t entries, offset, size;
        size_t end;             /* where the directory must end: the first end record */
};

static int read_end(const unsigned char *data, size_t size, struct dir *d, struct bd_err *err)
{
        size_t pos;
        if (size < END_SIZE || find_end(data, size, &pos) < 0)
                return bd_err_set(err, -EBADMSG, "zip: no end of central directory record (not a zip archive, "
                                  "or truncated)");
        const unsigned char *e = data + pos;
        uint64_t disk = zip_le(e + 4, 2), cd_disk = zip_le(e + 6, 2), on_disk = zip_le(e + 8, 2);
        d->entries = zip_le(e + 10, 2);
        d->size = zip_le(e + 12, 4);
        d->offset = zip_le(e + 16, 4);
        d->end = pos;
        /* zip64: the locator right before the end record points to the real numbers */
        if (pos >= LOCATOR_SIZE && zip_le(e - LOCATOR_SIZE, 4) == SIG_LOCATOR64) {
                const unsigned char *loc = e - LOCATOR_SIZE;
                uint64_t at = zip_le(loc + 8, 8);
                if (zip_le(loc + 4, 4) != 0 || zip_le(loc + 16, 4) > 1)
                        return bd_err_set(err, -EBADMSG, "zip: an archive on several disks");
                if (at > pos - LOCATOR_SIZE || pos - LOCATOR_SIZE - at < END64_SIZE ||
                    zip_le(data + at, 4) != SIG_END64)
                        return bd_err_set(err, -EBADMSG, "zip: byte %zu: the zip64 locator points to no zip64 end "
                                          "record (byte %llu)", pos - LOCATOR_SIZE, (unsigned long long)at);
                const unsigned char *e64 = data + at;
                disk = zip_le(e64 + 16, 4);
                cd_disk = zip_le(e64 + 20, 4);
                on_disk = zip_le(e64 + 24, 8);
                d->entries = zip_le(e64 + 32, 8);
                d->size = zip_le(e64 + 40, 8);
                d->offset = zip_le(e64 + 48, 8);
                d->end = (size_t)at;
        }
        if (disk != 0 || cd_disk != 0 || on_disk != d->entries)
                return bd_err_set(err, -EBADMSG, "zip: an archive on several disks");
        if (d->offset > d->end || d->size > d->end - d->offset)
                return bd_err_set(err, -EBADMSG, "zip: the central directory (byte %llu, %llu bytes) is not "
                                  "within the archive's %zu bytes before its end record",
                                  (unsigned long long)d->offset, (unsigned long long)d->size, d->end);
        if (d->entries > ZIP_MAX_ENTRIES || d->entries > d->size / CENTRAL_SIZE)
                return bd_err_set(err, -EBADMSG, "zip: %llu entries in a central directory of %llu bytes",
                                  (unsigned long long)d->entries, (unsigned long long)d->size);
        return 0;
}

/* The zip64 extended information of an entry: the 8-byte values of the
 * fields that are 0xffffffff in the directory, in this order. */
static int zip64_extra(const unsigned char *x, size_t xlen, uint64_t *usize, uint64_t *csize, uint64_t *offset)
{
        uint64_t *fields[] = { usize, csize, offset };
        for (size_t at = 0; at + 4 <= xlen;) {
                size_t id = zip_le(x + at, 2), len = zip_le(x + at + 2, 2);
                if (len > xlen - at - 4)
                        return -EBADMSG;
                if (id == 0x0001) {
                        size_t k = 0;
                        for (size_t f = 0; f < ARRAY_SIZE(fields); f++) {
                                if (*fields[f] != 0xffffffffu)
                                        continue;
                                if (k + 8 > len)
                                        return -EBADMSG;
                                *fields[f] = zip_le(x + at + 4 + k, 8);
                                k += 8;
                        }
                        return 0;
                }
                at += 4 + len;
        }
        return *usize == 0xffffffffu || *csize == 0xffffffffu || *offset == 0xffffffffu ? -EBADMSG : 0;
}

static int read_entry(const unsigned char *data, const struct dir *d, size_t *at, size_t i, struct zip_entry *ret,
                      struct bd_err *err)
{
        size_t end = (size_t)(d->offset + d->size), p = *at;
        if (end - p < CENTRAL_SIZE || zip_le(data + p, 4) != SIG_CENTRAL)
                return bd_err_set(err, -EBADMSG, "zip: byte %zu: no central directory entry %zu of %llu", p, i,
                                  (unsigned long long)d->entries);
        const unsigned char *c = data + p;
        uint64_t flags = zip_le(c + 8, 2), method = zip_le(c + 10, 2);
        uint64_t csize = zip_le(c + 20, 4), usize = zip_le(c + 24, 4), offset = zip_le(c + 42, 4);
        size_t nlen = zip_le(c + 28, 2), xlen = zip_le(c + 30, 2), clen = zip_le(c + 32, 2);
        if (end - p - CENTRAL_SIZE < nlen + xlen + clen)
                return bd_err_set(err, -EBADMSG, "zip: byte %zu: central directory entry %zu runs past the "
                                  "directory's end", p, i);
        const char *name = (const char *)c + CENTRAL_SIZE;
        if (nlen == 0 || nlen > ZIP_NAME_MAX || memchr(name, 0, nlen))
                return bd_err_set(err, -EBADMSG, "zip: byte %zu: entry %zu has a name of %zu bytes%s", p, i, nlen,
                                  nlen && nlen <= ZIP_NAME_MAX ? " holding a NUL" : "");
        ret->name = xstrndup(name, nlen);
        *at = p + CENTRAL_SIZE + nlen + xlen + clen;
        if (zip64_extra(c + CENTRAL_SIZE + nlen, xlen, &usize, &csize, &offset) < 0)
                return bd_err_set(err, -EBADMSG, "zip: entry '%s': a bad zip64 extra field", ret->name);
        if (flags & 1)
                return bd_err_set(err, -EBADMSG, "zip: entry '%s' is encrypted", ret->name);
        if (method != 0 || csize != usize)
                return bd_err_set(err, -EBADMSG, "zip: entry '%s' is compressed (method %llu): torch.save stores "
                                  "its entries", ret->name, (unsigned long long)method);
        /* the local header and the data: before the central directory */
        if (offset > d->offset || d->offset - offset < LOCAL_SIZE || zip_le(data + offset, 4) != SIG_LOCAL)
                return bd_err_set(err, -EBADMSG, "zip: entry '%s': no local header at byte %llu", ret->name,
                                  (unsigned long long)offset);
        const unsigned char *l = data + offset;
        uint64_t lnlen = zip_le(l + 26, 2), lxlen = zip_le(l + 28, 2);
        uint64_t start = offset + LOCAL_SIZE + lnlen + lxlen;
        if (start > d->offset || usize > d->offset - start)
                return bd_err_set(err, -EBADMSG, "zip: entry '%s': its %llu bytes at byte %llu run past the start of "
                                  "the central directory (byte %llu)", ret->name, (unsigned long long)usize,
                                  (unsigned long long)start, (unsigned long long)d->offset);
        if (lnlen != nlen || memcmp(l + LOCAL_SIZE, name, nlen) != 0)
                return bd_err_set(err, -EBADMSG, "zip: entry '%s': its local header (byte %llu) names another",
                                  ret->name, (unsigned long long)offset);
        ret->offset = start;
        ret->size = usize;
        ret->crc = (uint32_t)zip_le(c + 16, 4);
        return 0;
}

static int cmp_entry(const void *a, const void *b)
{
        return strcmp(((const struct zip_entry *)a)->name, ((const struct zip_entry *)b)->name);
}

int zip_read(const unsigned char *data, size_t size, struct zip_archive *ret, struct bd_err *err)
{
        struct dir d = { 0 };
        int r = read_end(data, size, &d, err);
        if (r < 0)
                return r;
        struct zip_archive z = { .e = xcalloc(d.entries + 1, sizeof(*z.e)) };
        size_t at = (size_t)d.offset;
        for (size_t i = 0; i < d.entries && r == 0; i++, z.n++)
                r = read_entry(data, &d, &at, i, &z.e[i], err);
        if (r == 0) {
                /* sorted by name for zip_find; a name twice is an error */
                qsort(z.e, z.n, sizeof(*z.e), cmp_entry);
                for (size_t i = 1; i < z.n && r == 0; i++)
                        if (streq(z.e[i - 1].name, z.e[i].name))
                                r = bd_err_set(err, -EBADMSG, "zip: two entries named '%s'", z.e[i].name);
        }
        if (r < 0) {
                zip_release(&z);
                return r;
        }
        *ret = z;
        return 0;
}

const struct zip_entry *zip_find(const struct zip_archive *z, const char *name)
{
        struct zip_entry key = { .name = (char *)name };
        return z->n ? bsearch(&key, z->e, z->n, sizeof(*z->e), cmp_entry) : NULL;
}

int zip_check_crc(const unsigned char *data, const struct zip_entry *e, struct bd_err *err)
{
        uint32_t crc = bd_crc32(0, data + e->offset, (size_t)e->size);
        if (crc != e->crc)
                return bd_err_set(err, -EBADMSG, "zip: entry '%s': CRC-32 %08x, the directory says %08x (damaged)",
                                  e->name, crc, e->crc);
        return 0;
}

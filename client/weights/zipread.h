/* zipread.h: the entries of a zip archive held in memory, as torch.save
 * writes them (torch >= 1.6): stored, not compressed; a local header whose
 * extra field pads the data to 64 bytes; sizes in the central directory
 * (the local header may leave them to a data descriptor); zip64 records
 * and extra fields where an archive or an entry passes 4 GiB.
 *
 * Only the central directory is trusted for sizes and offsets, and every
 * one is checked against the archive: an entry's data lies between its
 * local header and the central directory, entries do not overlap the
 * directory, names are 1 to ZIP_NAME_MAX bytes without NUL.  Compressed or
 * encrypted entries, and archives on several disks, are errors.  Errors
 * read "zip: ..." and name the entry or the byte offset.
 */
#ifndef BD_ZIPREAD_H
#define BD_ZIPREAD_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define ZIP_MAX_ENTRIES (1 << 20)
#define ZIP_NAME_MAX 4096

struct zip_entry {
        char *name;             /* NUL-terminated */
        uint64_t offset;        /* of its data in the archive */
        uint64_t size;
        uint32_t crc;           /* CRC-32 the directory gives */
};

struct zip_archive {
        struct zip_entry *e;    /* sorted by name */
        size_t n;
};

/* Reads the central directory of the archive data[size]. */
int zip_read(const unsigned char *data, size_t size, struct zip_archive *ret, struct bd_err *err);
void zip_release(struct zip_archive *z);
/* The entry of that name, NULL when there is none. */
const struct zip_entry *zip_find(const struct zip_archive *z, const char *name);
/* Checks an entry's data against its CRC-32: 0 or -EBADMSG. */
int zip_check_crc(const unsigned char *data, const struct zip_entry *e, struct bd_err *err);

/* The n-byte little-endian number at p (zip's fields, and benchd's) */
static inline uint64_t zip_le(const unsigned char *p, int n)
{
        uint64_t v = 0;
        for (int i = n - 1; i >= 0; i--)
                v = v << 8 | p[i];
        return v;
}

#endif

/* manifest.h: what a dataset tree holds, with a checksum of every file.
 *
 * A manifest lists every directory, regular file and symbolic link under a
 * root (the root itself excluded), sorted by path in byte order (strcmp), so
 * that a directory always comes before what it contains.  Paths are relative,
 * never empty, never hold "." or ".." components, and are raw bytes: any byte
 * but NUL and '/' may appear in a name.
 *
 * File format, version 1 (text, one entry per line, '\n' terminated):
 *
 *     benchd-manifest 1
 *     d 0755 1700000000.123456789 0 - annotations
 *     f 0644 1700000000.000000000 5242880 8c2f...(32 hex) annotations/val.json
 *     l 0777 1700000000.000000000 11 - latest ../v2017%20b
 *     end 1c9e...(32 hex) 3
 *
 *   - line 1 is the magic and the version; a reader refuses other versions;
 *   - entry lines: KIND MODE MTIME SIZE SUM PATH [TARGET], one space apart:
 *       KIND   d (directory), f (regular file) or l (symbolic link)
 *       MODE   permission bits, four octal digits (0644, 2775)
 *       MTIME  modification time, seconds '.' nine digits of nanoseconds
 *       SIZE   bytes (for a link, the length of its target; 0 for a directory)
 *       SUM    XXH3-128 of the file's content, 32 lowercase hex digits in the
 *              canonical (big-endian) order that xxhsum -H2 prints; '-' for
 *              directories and links
 *       PATH   the relative path, escaped (below)
 *       TARGET links only: the link's target, escaped
 *   - escaping: bytes 0x00-0x20, '%', 0x7f-0xff are written %XX (two
 *     uppercase hex digits), so names with spaces, newlines or bytes that are
 *     not UTF-8 stay on one line and in one field;
 *   - last line: "end", the XXH3-128 of every byte before this line, and the
 *     number of entry lines.  A manifest without it is truncated; one whose
 *     checksum differs was damaged or edited.
 *
 * Reserved names, never listed: ".benchd-manifest" at the root (the manifest
 * stored with a tree; a stage refuses a source where it is anything else) and
 * ".benchd-manifest.tmp.*" at the root (the temporary files of its atomic
 * write).  Nothing else: staging's temporary files (".benchd-tmp.*") are made
 * only in a destination, so in a source that name is a file like any other.
 */
#ifndef BD_MANIFEST_H
#define BD_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

#define MANIFEST_NAME ".benchd-manifest"
#define MANIFEST_MAGIC "benchd-manifest"
#define MANIFEST_VERSION 1
#define STAGE_TMP_PREFIX ".benchd-tmp."

enum bd_mkind {
        BD_M_DIR,
        BD_M_FILE,
        BD_M_LINK,
};

struct bd_mentry {
        char *path;             /* relative path, raw bytes */
        char *target;           /* links: the target, raw bytes; NULL otherwise */
        uint64_t size;
        int64_t mtime_sec;
        uint32_t mtime_nsec;
        uint32_t mode;          /* permission bits, & 07777 */
        enum bd_mkind kind;
        bool have_sum;          /* files: sum is set */
        uint8_t sum[16];        /* files: XXH3-128, canonical byte order */
};

struct bd_manifest {
        struct bd_mentry *e;    /* sorted by path (strcmp) */
        size_t n, cap;
        uint8_t sum[16];        /* of the text, set by manifest_parse/manifest_format */
        uint64_t files, bytes, links, dirs;
};

void manifest_init(struct bd_manifest *m);
void manifest_release(struct bd_manifest *m);
static inline void manifest_releasep(struct bd_manifest *m) { manifest_release(m); }
#define _cleanup_manifest_ _cleanup_(manifest_releasep)

/* Appends an entry (taking the strings); the caller sorts with manifest_sort()
 * before formatting. */
struct bd_mentry *manifest_add(struct bd_manifest *m, enum bd_mkind kind, char *path);
void manifest_sort(struct bd_manifest *m);
/* Recounts files/bytes/links/dirs. */
void manifest_count(struct bd_manifest *m);
/* Binary search; NULL when absent. */
const struct bd_mentry *manifest_find(const struct bd_manifest *m, const char *path);

/* Parses manifest text; name (a file name) is used in error messages
 * ("NAME:LINE: ..."). On success *ret holds the entries and the checksum. */
int manifest_parse(const char *data, size_t len, const char *name, struct bd_manifest *ret, struct bd_err *err);
int manifest_load(const char *path, struct bd_manifest *ret, struct bd_err *err);
/* Writes the text (every file must have its sum) into out and sets m->sum.
 * -EINVAL (with the path in err) when a file has no sum. */
int manifest_format(struct bd_manifest *m, struct bd_buf *out, struct bd_err *err);

/* Escapes raw bytes as in the manifest (%XX); used for every path shown to users. */
void manifest_escape(struct bd_buf *b, const char *s);
/* A path escaped into a new string (caller frees). */
char *manifest_escaped(const char *s);
/* Decodes %XX; -EINVAL on a bad escape or an escaped NUL. */
int manifest_unescape(const char *s, size_t len, char **ret);
/* Checksum as 32 lowercase hex digits plus NUL. */
void manifest_sum_hex(const uint8_t sum[16], char out[33]);
int manifest_sum_parse(const char *s, uint8_t sum[16]);

/* True when the relative path is acceptable: not empty, no leading or
 * trailing '/', no empty, "." or ".." component. */
bool manifest_path_valid(const char *path);
/* True when a name is reserved (see above); top tells whether it lies in the root. */
bool manifest_name_reserved(const char *name, bool top);
/* True when a link at path with this target resolves, by its text alone,
 * outside the tree (absolute, or climbing above the root with ".."). */
bool manifest_link_escapes(const char *path, const char *target);

#endif

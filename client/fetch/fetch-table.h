/* fetch-table.h: what a download is (fetch/README.md): a dataset's
 * archives or a set of weights, each file with its address, published
 * size and digests and where they come from.  The bundled tables are
 * built into the programs (the JSON files of fetch/); --table reads another. */
#ifndef BD_FETCH_TABLE_H
#define BD_FETCH_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

struct fetch_entry {
        char *name, *url, *sha256, *sha1, *source, *split;
        char *unpacks_to;               /* the one top-level name the archive unpacks into, or NULL */
        int64_t bytes;                  /* -1: the server's */
        int64_t unpacked_bytes;         /* -1: not said */
};

struct fetch_table {
        char *name, *kind, *description, *home, *output;
        struct fetch_entry *files;
        int nfiles;
};

/* Parses a table; label names it in errors ("fetch/coco2017.json").
 * Errors name the field ("files[1].sha1: ..."). */
int fetch_table_parse(const char *text, const char *label, struct fetch_table *ret, struct bd_err *err);
int fetch_table_load(const char *path, struct fetch_table *ret, struct bd_err *err);
/* A table by name, of the kind given ("dataset", "weights"): DIR/NAME.json
 * of the first of dirs (NULL-terminated, may be NULL) that has one, else
 * the bundled one.  The user's directories come from sysdirs_user(...,
 * "BENCHD_FETCH", "fetch"): a site's own tables (its mirror's addresses)
 * replace the bundled ones of the same name. */
int fetch_table_find(char *const *dirs, const char *name, const char *kind, struct fetch_table *ret,
                     struct bd_err *err);
/* The table a command names: --table FILE (table_file, which must be of
 * that kind; its name is its own), else fetch_table_find() on the user's directories.
 * Returns 0, FETCH_TABLE_UNKNOWN where no table has the name (a usage
 * error), or -1 for a table that does not hold. */
#define FETCH_TABLE_UNKNOWN (-2)
int fetch_table_open(const char *table_file, const char *name, const char *kind, struct fetch_table *ret,
                     struct bd_err *err);
/* A checksum file (sha256sum or sha1sum output, or BSD "SHA256 (NAME) =
 * HEX" lines; '#' comments) gives the digests of the table's files it
 * names (by their last path component), each then fetched at the
 * server's size: the files a site or a test made itself.  Names the table
 * lacks are passed over.  Returns the files given, or -1 with err naming
 * label and the line (none of the table's files named is an error). */
int fetch_table_checksums(struct fetch_table *t, const char *text, size_t len, const char *label, struct bd_err *err);
/* What is wrong with a command's --mirror and --from, or NULL. */
const char *fetch_source_problem(const char *mirror, const char *from);
/* Where a file comes from: its address, or MIRROR/NAME. */
char *fetch_url(const struct fetch_entry *e, const char *mirror);
/* The bundled names of a kind, "a, b or c". */
void fetch_table_names(const char *kind, struct bd_buf *out);
void fetch_table_release(struct fetch_table *t);

struct fetch_table_text {
        const char *name, *file, *text;
};
extern const struct fetch_table_text fetch_bundled[];

#endif

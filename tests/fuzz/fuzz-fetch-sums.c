/* fuzz-fetch-sums.c: a checksum file as `benchctl dataset fetch
 * --checksums` reads it (sha256sum or sha1sum output, BSD "SHA256 (NAME) =
 * HEX" lines), applied to a table of three files.
 *
 * Promises checked: never a crash; refused with one line naming the file
 * and its line, or as many files given as returned, each then with one
 * digest of 40 or 64 hex digits and no published size. */
#include "config.h"

#include <string.h>

#include "fetch-table.h"
#include "fuzz.h"
#include "macro.h"

static const char table[] =
        "{ \"name\": \"t\", \"kind\": \"dataset\", \"files\": ["
        "{ \"name\": \"a.zip\", \"url\": \"http://h/a.zip\", \"bytes\": 10, "
        "\"sha1\": \"0123456789012345678901234567890123456789\", \"source\": \"s\" },"
        "{ \"name\": \"b.zip\", \"url\": \"http://h/b.zip\", \"sha256\": \"01234567\", \"source\": \"s\" },"
        "{ \"name\": \"c.tar\", \"url\": \"https://h/c.tar\", \"sha256\": \"89abcdef\", \"source\": \"s\" } ] }";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct fetch_table t;
        struct bd_err err;
        FUZZ_CHECK(fetch_table_parse(table, "t.json", &t, &err) == 0, "the table: %s", err.msg);
        int n = fetch_table_checksums(&t, (const char *)data, size, "SUMS", &err);
        if (n < 0) {
                FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n') && !strncmp(err.msg, "SUMS", 4),
                           "a refusal is one line naming the file: '%s'", err.msg);
                fetch_table_release(&t);
                return 0;
        }
        for (int i = 0; i < t.nfiles; i++) {
                const struct fetch_entry *e = &t.files[i];
                if (strncmp(e->source, "SUMS, line ", 11))
                        continue;       /* not given by the file */
                size_t hl = strlen(e->sha256 ? e->sha256 : e->sha1);
                FUZZ_CHECK((e->sha1 && !e->sha256 && hl == 40) || (e->sha256 && !e->sha1 && hl == 64),
                           "file %d: a digest of %zu digits", i, hl);
                FUZZ_CHECK(e->bytes == -1, "file %d keeps the published size", i);
        }
        FUZZ_CHECK(n >= 1, "%d files given", n);
        fetch_table_release(&t);
        return 0;
}

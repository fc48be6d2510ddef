/* fuzz-fetch-table.c: a download table (fetch/README.md), as --table
 * reads it from a user's file.
 *
 * Promises checked: a text that is not a table is refused with one
 * printable line, never a crash; a table taken has a kind of two, one to
 * 256 files, each with a plain name (no '/'), an http(s) address, at least
 * one digest of hex digits of the stated lengths, and sizes that are
 * positive or -1. */
#include "config.h"

#include <string.h>

#include "fetch-table.h"
#include "fuzz.h"
#include "macro.h"

static bool hex_only(const char *s)
{
        for (; *s; s++)
                if (!strchr("0123456789abcdefABCDEF", *s))
                        return false;
        return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = xmalloc(size + 1);
        memcpy(text, data, size);
        text[size] = '\0';
        struct fetch_table t;
        struct bd_err err;
        if (fetch_table_parse(text, "table.json", &t, &err) < 0) {
                FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n'), "a refusal is one line: '%s'", err.msg);
                free(text);
                return 0;
        }
        free(text);
        FUZZ_CHECK(streq(t.kind, "dataset") || streq(t.kind, "weights"), "kind '%s'", t.kind);
        FUZZ_CHECK(t.nfiles >= 1 && t.nfiles <= 256, "%d files", t.nfiles);
        for (int i = 0; i < t.nfiles; i++) {
                const struct fetch_entry *e = &t.files[i];
                FUZZ_CHECK(e->name[0] && !strchr(e->name, '/'), "file name '%s'", e->name);
                FUZZ_CHECK(!strncmp(e->url, "http://", 7) || !strncmp(e->url, "https://", 8), "url '%s'", e->url);
                FUZZ_CHECK(e->sha256 || e->sha1, "file %d without a digest", i);
                FUZZ_CHECK(!e->sha256 || (strlen(e->sha256) >= 8 && strlen(e->sha256) <= 64 && hex_only(e->sha256)),
                           "sha256 '%s'", e->sha256);
                FUZZ_CHECK(!e->sha1 || (strlen(e->sha1) == 40 && hex_only(e->sha1)), "sha1 '%s'", e->sha1);
                FUZZ_CHECK(e->bytes == -1 || e->bytes > 0, "bytes %lld", (long long)e->bytes);
        }
        fetch_table_release(&t);
        return 0;
}

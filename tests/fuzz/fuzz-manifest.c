/* fuzz-manifest.c: dataset manifests (lib/stage/manifest.h).
 *
 * The input is a manifest's text, parsed as it is and, so that the fuzzer
 * gets past the checksum, with its end line made right: the lines before
 * the last "end " line (or all of them) and "end SUM COUNT" computed here.
 * Promises checked:
 *   - manifest_parse() gives an error naming the manifest, or entries,
 *     never both;
 *   - entries are sorted by path (strcmp, no duplicates), every path is a
 *     valid relative path whose directory is listed before it as a
 *     directory, files have a checksum, links a target as long as their
 *     size, directories size 0; the counts add up; manifest_find() finds
 *     each entry;
 *   - manifest_format() of the entries parses to the same entries and
 *     formats to the same text (with the same checksum);
 *   - escaping and unescaping each path gives it back.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <xxhash.h>

#include "fuzz.h"
#include "stage/manifest.h"

static void check_entries(const struct bd_manifest *m)
{
        uint64_t files = 0, bytes = 0, links = 0, dirs = 0;
        for (size_t i = 0; i < m->n; i++) {
                const struct bd_mentry *e = &m->e[i];
                FUZZ_CHECK(manifest_path_valid(e->path), "entry %zu: invalid path", i);
                FUZZ_CHECK(i == 0 || strcmp(m->e[i - 1].path, e->path) < 0, "entry %zu is out of order", i);
                FUZZ_CHECK(manifest_find(m, e->path) == e, "manifest_find misses entry %zu", i);
                const char *slash = strrchr(e->path, '/');
                if (slash) {
                        _cleanup_free_ char *parent = xstrndup(e->path, (size_t)(slash - e->path));
                        const struct bd_mentry *p = manifest_find(m, parent);
                        FUZZ_CHECK(p && p->kind == BD_M_DIR && p < e, "entry %zu: its directory is not listed before it",
                                   i);
                }
                FUZZ_CHECK(e->mode <= 07777 && e->mtime_nsec < 1000000000, "entry %zu: mode %o, nsec %" PRIu32, i,
                           e->mode, e->mtime_nsec);
                switch (e->kind) {
                case BD_M_FILE:
                        FUZZ_CHECK(e->have_sum && !e->target, "file entry %zu without a sum or with a target", i);
                        files++;
                        bytes += e->size;
                        break;
                case BD_M_LINK:
                        FUZZ_CHECK(e->target && strlen(e->target) == e->size, "link entry %zu: target and size differ",
                                   i);
                        links++;
                        break;
                case BD_M_DIR:
                        FUZZ_CHECK(e->size == 0 && !e->target, "directory entry %zu: size %" PRIu64, i, e->size);
                        dirs++;
                        break;
                default:
                        FUZZ_CHECK(false, "entry %zu: kind %d", i, (int)e->kind);
                }
                _cleanup_free_ char *esc = manifest_escaped(e->path), *back = NULL;
                FUZZ_CHECK(manifest_unescape(esc, strlen(esc), &back) == 0 && streq(back, e->path),
                           "entry %zu: its path does not unescape to itself", i);
        }
        FUZZ_CHECK(m->files == files && m->bytes == bytes && m->links == links && m->dirs == dirs,
                   "the counts do not add up");
}

static bool same_entry(const struct bd_mentry *a, const struct bd_mentry *b)
{
        return a->kind == b->kind && streq(a->path, b->path) && (a->target ? streq(a->target, b->target) : !b->target) &&
               a->size == b->size && a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec &&
               a->mode == b->mode && a->have_sum == b->have_sum && !memcmp(a->sum, b->sum, sizeof(a->sum));
}

/* Formatted and parsed again, the entries are the same; formatted again, so is the text. */
static void check_round_trip(struct bd_manifest *m)
{
        _cleanup_buf_ struct bd_buf text = BD_BUF_INIT, again = BD_BUF_INIT;
        _cleanup_manifest_ struct bd_manifest m2;
        struct bd_err err = { "" };
        manifest_init(&m2);
        buf_init(&text);
        buf_init(&again);
        FUZZ_CHECK(manifest_format(m, &text, &err) == 0, "a parsed manifest does not format: %s", err.msg);
        FUZZ_CHECK(manifest_parse(text.s, text.len, "formatted", &m2, &err) == 0,
                   "a formatted manifest does not parse: %s", err.msg);
        FUZZ_CHECK(m2.n == m->n, "%zu entries formatted, %zu parsed back", m->n, m2.n);
        for (size_t i = 0; i < m->n; i++)
                FUZZ_CHECK(same_entry(&m->e[i], &m2.e[i]), "entry %zu changed through format and parse", i);
        FUZZ_CHECK(!memcmp(m->sum, m2.sum, sizeof(m->sum)), "the checksum changed through format and parse");
        FUZZ_CHECK(manifest_format(&m2, &again, &err) == 0 && again.len == text.len &&
                   !memcmp(again.s, text.s, text.len), "formatting twice gives two texts");
}

static void parse(const char *data, size_t size)
{
        struct bd_manifest m;
        struct bd_err err = { "" };
        manifest_init(&m);
        int r = manifest_parse(data, size, "fuzz", &m, &err);
        if (r < 0) {
                FUZZ_CHECK(r == -EINVAL || r == -EBADMSG || r == -EPROTONOSUPPORT, "manifest_parse returned %d", r);
                FUZZ_CHECK(m.n == 0 && !m.e, "manifest_parse failed and gave entries");
                FUZZ_CHECK(strncmp(err.msg, "fuzz", 4) == 0, "an error without the manifest's name: '%s'", err.msg);
                return;
        }
        FUZZ_CHECK(r == 0, "manifest_parse returned %d", r);
        check_entries(&m);
        check_round_trip(&m);
        manifest_release(&m);
}

/* The input with a right end line: what precedes its last "end " line (or
 * all of it, with a final newline), its checksum and its number of entry lines. */
static char *fix_end(const char *data, size_t size, size_t *ret_len)
{
        size_t body = size;
        for (size_t i = size; i-- > 0;)
                if ((i == 0 || data[i - 1] == '\n') && size - i >= 4 && !memcmp(data + i, "end ", 4)) {
                        body = i;
                        break;
                }
        struct bd_buf b = BD_BUF_INIT;
        buf_init(&b);
        buf_add(&b, data, body);
        if (b.len && b.s[b.len - 1] != '\n')
                buf_putc(&b, '\n');
        size_t lines = 0;
        for (size_t i = 0; i < b.len; i++)
                lines += b.s[i] == '\n';
        XXH128_canonical_t c;
        XXH128_canonicalFromHash(&c, XXH3_128bits(b.s, b.len));
        char hex[33];
        manifest_sum_hex(c.digest, hex);
        buf_printf(&b, "end %s %zu\n", hex, lines ? lines - 1 : 0);
        *ret_len = b.len;
        return buf_detach(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        size_t len;
        parse((const char *)data, size);
        _cleanup_free_ char *fixed = fix_end((const char *)data, size, &len);
        parse(fixed, len);
        return 0;
}

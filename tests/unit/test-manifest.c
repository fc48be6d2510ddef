/* test-manifest.c: the manifest format: round trip of awkward names, and one
 * located error for each way a manifest can be wrong. */
#include "config.h"

#include <string.h>
#include <xxhash.h>

#include "buf.h"
#include "stage/manifest.h"
#include "tap.h"

/* "benchd-manifest 1\n" + body + a correct end line, so that errors past the
 * checksum can be reached */
static char *with_end(const char *body, long count)
{
        struct bd_buf b = BD_BUF_INIT;
        buf_init(&b);
        buf_printf(&b, "benchd-manifest 1\n%s", body);
        XXH128_canonical_t c;
        XXH128_canonicalFromHash(&c, XXH3_128bits(b.s, b.len));
        char hex[33];
        manifest_sum_hex(c.digest, hex);
        if (count < 0) {
                count = 0;
                for (const char *p = body; *p; p++)
                        count += *p == '\n';
        }
        buf_printf(&b, "end %s %ld\n", hex, count);
        return buf_detach(&b);
}

static void parse_fails(const char *text, const char *want, const char *what)
{
        struct bd_manifest m;
        struct bd_err err = { "" };
        int r = manifest_parse(text, strlen(text), "t.manifest", &m, &err);
        ok(r < 0, what);
        like(err.msg, want, what);
        if (r == 0)
                manifest_release(&m);
}

static void body_fails(const char *body, const char *want, const char *what)
{
        char *t = with_end(body, -1);
        parse_fails(t, want, what);
        free(t);
}

#define SUM "6bba86c7e069f56d5a10b435f1c8e49c"
#define DIR_A "d 0755 1.000000000 0 - a\n"

static void test_round_trip(void)
{
        struct bd_manifest m;
        manifest_init(&m);
        const char *names[] = { "a", "a/with space", "a/new\nline", "a/\xff\xfe", "a/100%", "a/tab\there" };
        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                struct bd_mentry *e = manifest_add(&m, i == 0 ? BD_M_DIR : BD_M_FILE, xstrdup(names[i]));
                /* setgid, sticky and setuid bits: no leading 0 in the text */
                e->mode = i == 0 ? 02775 : i == 1 ? 01777 : i == 2 ? 04755 : 0640;
                e->mtime_sec = 1700000000 + (int64_t)i;
                e->mtime_nsec = 123456789;
                e->size = i == 0 ? 0 : 1000 * i;
                e->have_sum = i != 0;
                memset(e->sum, (int)i, 16);
        }
        struct bd_mentry *l = manifest_add(&m, BD_M_LINK, xstrdup("a/link"));
        l->target = xstrdup("../x y");
        l->size = strlen(l->target);
        l->mode = 0777;
        struct bd_mentry *neg = manifest_add(&m, BD_M_FILE, xstrdup("old"));
        neg->mtime_sec = -5;
        neg->mtime_nsec = 1;
        neg->have_sum = true;
        manifest_sort(&m);
        manifest_count(&m);
        struct bd_buf b = BD_BUF_INIT;
        buf_init(&b);
        struct bd_err err;
        is_int(manifest_format(&m, &b, &err), 0, "format");
        like(b.s, "a/with%20space", "spaces are escaped");
        like(b.s, "a/new%0Aline", "newlines are escaped");
        like(b.s, "a/%FF%FE", "bytes that are not ASCII are escaped");
        like(b.s, "a/100%25", "'%' is escaped");
        like(b.s, "a/tab%09here", "tabs are escaped");
        like(b.s, "l 0777 0.000000000 6 - a/link ../x%20y", "a link line: size is the target's length");
        like(b.s, "f 0000 -5.000000001 0 ", "times before 1970");
        like(b.s, "d 2775 1700000000.123456789 0 - a\n", "a setgid directory's mode");
        struct bd_manifest back;
        is_int(manifest_parse(b.s, b.len, "t", &back, &err), 0, "the formatted text parses");
        is_int(back.n, m.n, "same number of entries");
        is_int(memcmp(back.sum, m.sum, 16), 0, "same checksum");
        int same = back.n == m.n;
        for (size_t i = 0; same && i < m.n; i++)
                same = !strcmp(back.e[i].path, m.e[i].path) && back.e[i].kind == m.e[i].kind &&
                       back.e[i].size == m.e[i].size && back.e[i].mode == m.e[i].mode &&
                       back.e[i].mtime_sec == m.e[i].mtime_sec && back.e[i].mtime_nsec == m.e[i].mtime_nsec &&
                       !memcmp(back.e[i].sum, m.e[i].sum, 16) &&
                       (!m.e[i].target || !strcmp(back.e[i].target, m.e[i].target));
        ok(same, "every field survives the round trip");
        is_int(back.files, 6, "files counted");
        is_int(back.dirs, 1, "directories counted");
        is_int(back.links, 1, "links counted");
        ok(manifest_find(&back, "a/new\nline") != NULL, "find a name with a newline");
        ok(manifest_find(&back, "a/nope") == NULL, "find: absent");
        manifest_release(&back);

        /* a file without a checksum cannot be written */
        m.e[1].have_sum = false;
        ok(manifest_format(&m, &b, &err) < 0, "format refuses a file without checksum");
        like(err.msg, "has no checksum", "and says which");
        buf_release(&b);
        manifest_release(&m);
}

static void test_sums(void)
{
        XXH128_canonical_t c;
        XXH128_canonicalFromHash(&c, XXH3_128bits("", 0));
        char hex[33];
        manifest_sum_hex(c.digest, hex);
        /* what `xxhsum -H2 /dev/null` prints */
        is_str(hex, "99aa06d3014798d86001c324468d497f", "XXH3-128 of nothing, in xxhsum's byte order");
        uint8_t s[16];
        is_int(manifest_sum_parse(hex, s), 0, "parse a checksum");
        ok(!memcmp(s, c.digest, 16), "and get the same bytes");
        ok(manifest_sum_parse("99AA06D3014798D86001C324468D497F", s) < 0, "uppercase checksums are refused");
        ok(manifest_sum_parse("99aa06d3", s) < 0, "short checksums are refused");
}

static void test_paths(void)
{
        ok(manifest_path_valid("a/b c/d"), "a plain relative path");
        ok(!manifest_path_valid(""), "empty");
        ok(!manifest_path_valid("/etc"), "absolute");
        ok(!manifest_path_valid("a//b"), "empty component");
        ok(!manifest_path_valid("a/../b"), "'..' component");
        ok(!manifest_path_valid("./a"), "'.' component");
        ok(!manifest_path_valid("a/"), "trailing slash");
        ok(manifest_path_valid("..a/b.."), "dots inside names are fine");

        ok(!manifest_link_escapes("a/l", "x"), "link to a sibling");
        ok(!manifest_link_escapes("a/b/l", "../../x"), "link climbing to the root");
        ok(manifest_link_escapes("a/b/l", "../../../x"), "link climbing above the root");
        ok(manifest_link_escapes("l", "/etc/passwd"), "absolute link");
        ok(manifest_link_escapes("a/l", "b/../../.."), "'..' after a name is refused");
        ok(manifest_link_escapes("a/l", "x/../y"), "even when it would stay inside");
        ok(!manifest_link_escapes("a/l", "./x/./y"), "'.' components are harmless");
        ok(manifest_link_escapes("l", ""), "empty target");

        ok(!manifest_name_reserved(".benchd-tmp.1.2.3", false), "staging's temporary names are a source's data");
        ok(!manifest_name_reserved(".benchd-tmp.1.2.3", true), "at the root too");
        ok(manifest_name_reserved(".benchd-manifest", true), "the manifest name is reserved at the root");
        ok(manifest_name_reserved(".benchd-manifest.tmp.a1B2c3", true), "so are its atomic write's temporaries");
        ok(!manifest_name_reserved(".benchd-manifest", false), "but not below it");
        ok(!manifest_name_reserved(".benchd-manifest.txt", true), "nor other names that start alike");

        char *out;
        is_int(manifest_unescape("a%20b", 5, &out), 0, "unescape");
        is_str(out, "a b", "unescaped value");
        free(out);
        ok(manifest_unescape("a%2", 3, &out) < 0, "cut escape");
        ok(manifest_unescape("a%zz", 4, &out) < 0, "bad hex digits");
        ok(manifest_unescape("a%00", 4, &out) < 0, "escaped NUL");
        ok(manifest_unescape("a\tb", 3, &out) < 0, "raw byte that must be escaped");
}

static void test_errors(void)
{
        parse_fails("hello\n", "t.manifest:1: not a benchd manifest", "not a manifest");
        parse_fails("", "t.manifest:1: not a benchd manifest", "empty file");
        parse_fails("benchd-manifest 2\nend 0 0\n", "t.manifest:1: manifest version 2 is not supported",
                    "a newer version");
        parse_fails("benchd-manifest x\n", "t.manifest:1: bad manifest version", "a bad version");
        parse_fails("benchd-manifest 1\n" DIR_A, "t.manifest: truncated manifest (no end line)", "no end line");
        char *t = with_end(DIR_A "f 0644 1.000000000 6 " SUM " a/x\n", -1);
        char *cut = xstrndup(t, strlen(t) - 1);
        parse_fails(cut, "truncated manifest", "the end line without its newline");
        free(cut);
        char *flip = xstrdup(t);
        flip[strlen("benchd-manifest 1\nd 0")] ^= 1;       /* 0755 -> 0655 */
        parse_fails(flip, "t.manifest: checksum mismatch: the manifest was damaged or edited", "an edited byte");
        free(flip);
        char *bad_end = xstrdup(t);
        memcpy(strstr(bad_end, "end ") + 4, "xyz 2\n", 7);
        parse_fails(bad_end, "t.manifest:4: bad end line", "a bad end line");
        free(bad_end);
        free(t);

        body_fails("x 0755 1.000000000 0 - a\n", "t.manifest:2: unknown entry kind 'x'", "unknown kind");
        body_fails("d 0755 1.000000000 0 a\n", "t.manifest:2: expected 6 fields for a 'd' entry, found 5",
                   "missing field");
        body_fails("l 0777 1.000000000 1 - a\n", "t.manifest:2: expected 7 fields for a 'l' entry, found 6",
                   "link without target");
        body_fails("d 0755 1.000000000 0 - a b c\n", "expected 6 fields for a 'd' entry, found more than 7",
                   "too many fields");
        body_fails("d 0855 1.000000000 0 - a\n", "t.manifest:2: field 'mode': expected four octal digits",
                   "mode not octal");
        body_fails("d 755 1.000000000 0 - a\n", "field 'mode': expected four octal digits, got '755'",
                   "mode of three digits");
        body_fails("d 017777 1.000000000 0 - a\n", "field 'mode'", "mode too big");
        body_fails("d 0755 1.5 0 - a\n", "t.manifest:2: field 'mtime': expected SECONDS.NANOSECONDS", "short ns");
        body_fails("d 0755 1 0 - a\n", "field 'mtime'", "mtime without nanoseconds");
        body_fails(DIR_A "f 0644 1.000000000 -6 " SUM " a/x\n", "t.manifest:3: field 'size'", "negative size");
        body_fails(DIR_A "f 0644 1.000000000 99999999999999999999 " SUM " a/x\n", "field 'size'", "size overflow");
        body_fails(DIR_A "f 0644 1.000000000 6 6BBA86C7E069F56D5A10B435F1C8E49C a/x\n",
                   "t.manifest:3: field 'checksum': expected 32 lowercase hex digits", "uppercase checksum");
        body_fails(DIR_A "f 0644 1.000000000 6 - a/x\n", "field 'checksum'", "file without checksum");
        body_fails("d 0755 1.000000000 0 " SUM " a\n", "field 'checksum': expected '-' for a directory",
                   "directory with checksum");
        body_fails("d 0755 1.000000000 4 - a\n", "a directory has size 0", "directory with size");
        body_fails(DIR_A "f 0644 1.000000000 6 " SUM " a/x%G1\n", "t.manifest:3: field 'path': bad escape",
                   "bad escape in a path");
        body_fails(DIR_A "f 0644 1.000000000 6 " SUM " a/x%00\n", "field 'path': bad escape", "escaped NUL");
        body_fails("d 0755 1.000000000 0 - ..\n", "field 'path': '..' is not a relative path inside the tree",
                   "'..' path");
        body_fails("d 0755 1.000000000 0 - /abs\n", "is not a relative path inside the tree", "absolute path");
        body_fails("d 0755 1.000000000 0 - a%2F%2Fb\n", "is not a relative path inside the tree",
                   "an escaped '//'");
        body_fails(DIR_A DIR_A, "t.manifest:3: 'a' is listed twice", "duplicate");
        body_fails("d 0755 1.000000000 0 - b\n" DIR_A, "t.manifest:3: 'a' is out of order", "unsorted");
        body_fails("f 0644 1.000000000 6 " SUM " a/x\n", "t.manifest:2: the directory of 'a/x' is not listed",
                   "missing parent directory");
        body_fails(DIR_A "f 0644 1.000000000 6 " SUM " a\n", "'a' is listed twice", "a file named like a directory");
        body_fails("f 0644 1.000000000 6 " SUM " a\nf 0644 1.000000000 6 " SUM " a/x\n",
                   "the directory of 'a/x' is not listed", "a file as a parent");
        body_fails(DIR_A "l 0777 1.000000000 3 - a/l xy\n",
                   "t.manifest:3: field 'size': 3 is not the length of the link target", "link size");
        body_fails(DIR_A "l 0777 1.000000000 3 - a/l %ZZy\n", "field 'target': bad escape", "bad link target");

        char *wrong_count = with_end(DIR_A, 5);
        parse_fails(wrong_count, "t.manifest:3: the end line counts 5 entries, the manifest has 1", "count");
        free(wrong_count);
        char *good = with_end(DIR_A "f 0644 1.000000000 6 " SUM " a/x\n", -1);
        struct bd_manifest m;
        struct bd_err err;
        is_int(manifest_parse(good, strlen(good), "t", &m, &err), 0, "a valid hand-written manifest parses");
        is_int(m.n, 2, "with its two entries");
        manifest_release(&m);
        free(good);
}

int main(void)
{
        test_round_trip();
        test_sums();
        test_paths();
        test_errors();
        return done_testing();
}

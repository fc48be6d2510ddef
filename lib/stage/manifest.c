/* manifest.c: the manifest format: escaping, parsing with located errors,
 * formatting with a checksum of its own text. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <xxhash.h>

#include "fs.h"
#include "manifest.h"
#include "strutil.h"

#define MANIFEST_MAX_BYTES ((size_t)4 << 30)

void manifest_init(struct bd_manifest *m)
{
        memset(m, 0, sizeof(*m));
}

void manifest_release(struct bd_manifest *m)
{
        for (size_t i = 0; i < m->n; i++) {
                free(m->e[i].path);
                free(m->e[i].target);
        }
        free(m->e);
        manifest_init(m);
}

struct bd_mentry *manifest_add(struct bd_manifest *m, enum bd_mkind kind, char *path)
{
        if (m->n == m->cap) {
                m->cap = m->cap ? 2 * m->cap : 256;
                m->e = xrealloc(m->e, m->cap * sizeof(*m->e));
        }
        struct bd_mentry *e = &m->e[m->n++];
        memset(e, 0, sizeof(*e));
        e->kind = kind;
        e->path = path;
        return e;
}

static int entry_cmp(const void *a, const void *b)
{
        return strcmp(((const struct bd_mentry *)a)->path, ((const struct bd_mentry *)b)->path);
}

void manifest_sort(struct bd_manifest *m)
{
        if (m->n > 1)
                qsort(m->e, m->n, sizeof(*m->e), entry_cmp);
}

void manifest_count(struct bd_manifest *m)
{
        m->files = m->bytes = m->links = m->dirs = 0;
        for (size_t i = 0; i < m->n; i++) {
                const struct bd_mentry *e = &m->e[i];
                if (e->kind == BD_M_FILE) {
                        m->files++;
                        m->bytes += e->size;
                } else if (e->kind == BD_M_LINK)
                        m->links++;
                else
                        m->dirs++;
        }
}

static ssize_t find_in(const struct bd_mentry *e, size_t n, const char *path)
{
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(e[mid].path, path);
                if (c == 0)
                        return (ssize_t)mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

const struct bd_mentry *manifest_find(const struct bd_manifest *m, const char *path)
{
        ssize_t i = find_in(m->e, m->n, path);
        return i < 0 ? NULL : &m->e[i];
}

/* ---- escaping ------------------------------------------------------------ */

static bool must_escape(unsigned char c)
{
        return c <= 0x20 || c == '%' || c >= 0x7f;
}

void manifest_escape(struct bd_buf *b, const char *s)
{
        static const char hex[] = "0123456789ABCDEF";
        const unsigned char *p = (const unsigned char *)s;
        while (*p) {
                const unsigned char *q = p;
                while (*q && !must_escape(*q))
                        q++;
                if (q > p)
                        buf_add(b, p, (size_t)(q - p));
                if (!*q)
                        break;
                char e[3] = { '%', hex[*q >> 4], hex[*q & 15] };
                buf_add(b, e, 3);
                p = q + 1;
        }
}

char *manifest_escaped(const char *s)
{
        struct bd_buf b = BD_BUF_INIT;
        buf_init(&b);
        manifest_escape(&b, s);
        return buf_detach(&b);
}

int manifest_unescape(const char *s, size_t len, char **ret)
{
        _cleanup_free_ char *out = xmalloc(len + 1);
        size_t o = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] != '%') {
                        if (must_escape((unsigned char)s[i]))
                                return -EINVAL;
                        out[o++] = s[i];
                        continue;
                }
                if (i + 2 >= len)
                        return -EINVAL;
                int h = str_hex_digit(s[i + 1]), l = str_hex_digit(s[i + 2]);
                if (h < 0 || l < 0 || (h == 0 && l == 0))
                        return -EINVAL;
                out[o++] = (char)(h * 16 + l);
                i += 2;
        }
        out[o] = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}

void manifest_sum_hex(const uint8_t sum[16], char out[33])
{
        static const char hex[] = "0123456789abcdef";
        for (int i = 0; i < 16; i++) {
                out[2 * i] = hex[sum[i] >> 4];
                out[2 * i + 1] = hex[sum[i] & 15];
        }
        out[32] = '\0';
}

int manifest_sum_parse(const char *s, uint8_t sum[16])
{
        for (int i = 0; i < 16; i++) {
                int h = str_hex_digit(s[2 * i]), l = h < 0 ? -1 : str_hex_digit(s[2 * i + 1]);
                if (h < 0 || l < 0 || (s[2 * i] >= 'A' && s[2 * i] <= 'F') ||
                    (s[2 * i + 1] >= 'A' && s[2 * i + 1] <= 'F'))
                        return -EINVAL;
                sum[i] = (uint8_t)(h * 16 + l);
        }
        return s[32] == '\0' ? 0 : -EINVAL;
}

/* ---- paths ----------------------------------------------------------------- */

bool manifest_path_valid(const char *path)
{
        if (!*path || *path == '/')
                return false;
        const char *p = path;
        for (;;) {
                const char *slash = strchr(p, '/');
                size_t n = slash ? (size_t)(slash - p) : strlen(p);
                if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                if (!slash)
                        return true;
                p = slash + 1;
        }
}

bool manifest_name_reserved(const char *name, bool top)
{
        return top && (streq(name, MANIFEST_NAME) ||
                       !strncmp(name, MANIFEST_NAME ".tmp.", strlen(MANIFEST_NAME ".tmp.")));
}

bool manifest_link_escapes(const char *path, const char *target)
{
        if (!*target || *target == '/')
                return true;
        long depth = 0;
        for (const char *p = path; *p; p++)
                if (*p == '/')
                        depth++;
        /* leading ".." climb from the link's directory; once a name has been
         * entered, a ".." could climb out through a link, so it is refused */
        bool descended = false;
        const char *p = target;
        for (;;) {
                const char *slash = strchr(p, '/');
                size_t n = slash ? (size_t)(slash - p) : strlen(p);
                if (n == 2 && p[0] == '.' && p[1] == '.') {
                        if (descended || --depth < 0)
                                return true;
                } else if (n > 0 && !(n == 1 && p[0] == '.'))
                        descended = true;
                if (!slash)
                        return false;
                p = slash + 1;
        }
}

/* ---- formatting ------------------------------------------------------------ */

static void sum_text(const void *data, size_t len, uint8_t sum[16])
{
        XXH128_canonical_t c;
        XXH128_canonicalFromHash(&c, XXH3_128bits(data, len));
        memcpy(sum, c.digest, 16);
}

static const char kind_char[] = { [BD_M_DIR] = 'd', [BD_M_FILE] = 'f', [BD_M_LINK] = 'l' };

int manifest_format(struct bd_manifest *m, struct bd_buf *out, struct bd_err *err)
{
        buf_reset(out);
        buf_grow(out, 64 + m->n * 100);
        buf_printf(out, "%s %d\n", MANIFEST_MAGIC, MANIFEST_VERSION);
        for (size_t i = 0; i < m->n; i++) {
                const struct bd_mentry *e = &m->e[i];
                char hex[33] = "-";
                if (e->kind == BD_M_FILE) {
                        if (!e->have_sum) {
                                _cleanup_free_ char *p = manifest_escaped(e->path);
                                return bd_err_set(err, -EINVAL, "'%s' has no checksum", p);
                        }
                        manifest_sum_hex(e->sum, hex);
                }
                buf_printf(out, "%c %04o %" PRId64 ".%09" PRIu32 " %" PRIu64 " %s ", kind_char[e->kind],
                           (unsigned)(e->mode & 07777), e->mtime_sec, e->mtime_nsec, e->size, hex);
                manifest_escape(out, e->path);
                if (e->kind == BD_M_LINK) {
                        buf_putc(out, ' ');
                        manifest_escape(out, e->target);
                }
                buf_putc(out, '\n');
        }
        sum_text(out->s, out->len, m->sum);
        char hex[33];
        manifest_sum_hex(m->sum, hex);
        buf_printf(out, "end %s %zu\n", hex, m->n);
        return 0;
}

/* ---- parsing ---------------------------------------------------------------- */

static int parse_u64_strict(const char *s, size_t n, uint64_t *ret)
{
        if (n == 0 || n > 20)
                return -EINVAL;
        uint64_t v = 0;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                unsigned d = (unsigned)(s[i] - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

static int parse_mtime(const char *s, size_t n, int64_t *sec, uint32_t *nsec)
{
        bool neg = n > 0 && s[0] == '-';
        const char *dot = memchr(s, '.', n);
        if (!dot || (size_t)(s + n - dot - 1) != 9)
                return -EINVAL;
        uint64_t a, b;
        if (parse_u64_strict(s + neg, (size_t)(dot - s) - neg, &a) < 0 || a > INT64_MAX ||
            parse_u64_strict(dot + 1, 9, &b) < 0)
                return -EINVAL;
        *sec = neg ? -(int64_t)a : (int64_t)a;
        *nsec = (uint32_t)b;
        return 0;
}

struct field {
        const char *s;
        size_t n;
};

static int split(const char *line, size_t len, struct field *f, int max)
{
        int k = 0;
        size_t start = 0;
        for (size_t i = 0; i <= len; i++) {
                if (i == len || line[i] == ' ') {
                        if (k == max)
                                return max + 1;
                        f[k].s = line + start;
                        f[k].n = i - start;
                        k++;
                        start = i + 1;
                }
        }
        return k;
}

#define FAIL(r, ...) bd_err_set(err, r, __VA_ARGS__)

static int parse_entry(struct bd_manifest *m, const char *line, size_t len, const char *name, size_t lineno,
                       struct bd_err *err)
{
        struct field f[8];
        int k = split(line, len, f, 7);
        if (k < 1 || f[0].n != 1 || !strchr("dfl", f[0].s[0]))
                return FAIL(-EINVAL, "%s:%zu: unknown entry kind '%.*s' (expected d, f or l)", name, lineno,
                            k >= 1 ? (int)(f[0].n > 20 ? 20 : f[0].n) : 0, k >= 1 ? f[0].s : "");
        char kc = f[0].s[0];
        enum bd_mkind kind = kc == 'd' ? BD_M_DIR : kc == 'f' ? BD_M_FILE : BD_M_LINK;
        int want = kind == BD_M_LINK ? 7 : 6;
        if (k != want)
                return FAIL(-EINVAL, "%s:%zu: expected %d fields for a '%c' entry, found %s%d", name, lineno, want,
                            kc, k > 7 ? "more than " : "", k > 7 ? 7 : k);
        uint64_t mode;
        /* four octal digits, as %04o writes them: 0644, and 2775 for a
         * setgid directory */
        bool octal = f[1].n == 4;
        mode = 0;
        for (size_t i = 0; octal && i < 4; i++) {
                octal = f[1].s[i] >= '0' && f[1].s[i] <= '7';
                mode = mode * 8 + (uint64_t)(f[1].s[i] - '0');
        }
        if (!octal)
                return FAIL(-EINVAL, "%s:%zu: field 'mode': expected four octal digits, got '%.*s'", name, lineno,
                            (int)(f[1].n > 20 ? 20 : f[1].n), f[1].s);
        int64_t sec;
        uint32_t nsec;
        if (parse_mtime(f[2].s, f[2].n, &sec, &nsec) < 0)
                return FAIL(-EINVAL, "%s:%zu: field 'mtime': expected SECONDS.NANOSECONDS (9 digits), got '%.*s'", name,
                            lineno, (int)(f[2].n > 40 ? 40 : f[2].n), f[2].s);
        uint64_t size;
        if (parse_u64_strict(f[3].s, f[3].n, &size) < 0)
                return FAIL(-EINVAL, "%s:%zu: field 'size': expected a number of bytes, got '%.*s'", name, lineno,
                            (int)(f[3].n > 40 ? 40 : f[3].n), f[3].s);
        uint8_t sum[16];
        if (kind == BD_M_FILE) {
                char hex[33] = "";
                if (f[4].n == 32)
                        memcpy(hex, f[4].s, 32);
                if (f[4].n != 32 || manifest_sum_parse(hex, sum) < 0)
                        return FAIL(-EINVAL, "%s:%zu: field 'checksum': expected 32 lowercase hex digits, got '%.*s'",
                                    name, lineno, (int)(f[4].n > 40 ? 40 : f[4].n), f[4].s);
        } else if (f[4].n != 1 || f[4].s[0] != '-')
                return FAIL(-EINVAL, "%s:%zu: field 'checksum': expected '-' for a %s", name, lineno,
                            kind == BD_M_DIR ? "directory" : "link");
        if (kind == BD_M_DIR && size != 0)
                return FAIL(-EINVAL, "%s:%zu: field 'size': a directory has size 0", name, lineno);
        _cleanup_free_ char *path = NULL;
        if (manifest_unescape(f[5].s, f[5].n, &path) < 0)
                return FAIL(-EINVAL, "%s:%zu: field 'path': bad escape in '%.*s'", name, lineno,
                            (int)(f[5].n > 200 ? 200 : f[5].n), f[5].s);
        if (!manifest_path_valid(path))
                return FAIL(-EINVAL, "%s:%zu: field 'path': '%.*s' is not a relative path inside the tree", name,
                            lineno, (int)(f[5].n > 200 ? 200 : f[5].n), f[5].s);
        _cleanup_free_ char *target = NULL;
        if (kind == BD_M_LINK) {
                if (f[6].n == 0 || manifest_unescape(f[6].s, f[6].n, &target) < 0)
                        return FAIL(-EINVAL, "%s:%zu: field 'target': bad escape in '%.*s'", name, lineno,
                                    (int)(f[6].n > 200 ? 200 : f[6].n), f[6].s);
                if (strlen(target) != size)
                        return FAIL(-EINVAL, "%s:%zu: field 'size': %" PRIu64 " is not the length of the link target",
                                    name, lineno, size);
        }
        if (m->n > 0 && strcmp(m->e[m->n - 1].path, path) >= 0)
                return FAIL(-EINVAL, "%s:%zu: '%.*s' %s", name, lineno, (int)(f[5].n > 200 ? 200 : f[5].n), f[5].s,
                            strcmp(m->e[m->n - 1].path, path) == 0 ? "is listed twice"
                                                                   : "is out of order (entries are sorted by path)");
        char *slash = strrchr(path, '/');
        if (slash) {
                *slash = '\0';
                ssize_t p = find_in(m->e, m->n, path);
                *slash = '/';
                if (p < 0 || m->e[p].kind != BD_M_DIR)
                        return FAIL(-EINVAL, "%s:%zu: the directory of '%.*s' is not listed before it", name, lineno,
                                    (int)(f[5].n > 200 ? 200 : f[5].n), f[5].s);
        }
        struct bd_mentry *e = manifest_add(m, kind, TAKE_PTR(path));
        e->target = TAKE_PTR(target);
        e->mode = (uint32_t)mode;
        e->mtime_sec = sec;
        e->mtime_nsec = nsec;
        e->size = size;
        if (kind == BD_M_FILE) {
                e->have_sum = true;
                memcpy(e->sum, sum, 16);
        }
        return 0;
}

int manifest_parse(const char *data, size_t len, const char *name, struct bd_manifest *ret, struct bd_err *err)
{
        _cleanup_manifest_ struct bd_manifest m;
        manifest_init(&m);
        const char *nl = memchr(data, '\n', len);
        size_t magic_len = strlen(MANIFEST_MAGIC);
        if (!nl || (size_t)(nl - data) < magic_len + 1 || memcmp(data, MANIFEST_MAGIC " ", magic_len + 1) != 0)
                return FAIL(-EINVAL, "%s:1: not a benchd manifest (it starts with '%s %d')", name, MANIFEST_MAGIC,
                            MANIFEST_VERSION);
        uint64_t version;
        const char *v = data + magic_len + 1;
        if (parse_u64_strict(v, (size_t)(nl - v), &version) < 0)
                return FAIL(-EINVAL, "%s:1: bad manifest version '%.*s'", name, (int)((nl - v) > 20 ? 20 : nl - v), v);
        if (version != MANIFEST_VERSION)
                return FAIL(-EPROTONOSUPPORT, "%s:1: manifest version %" PRIu64 " is not supported (this benchd reads version %d)",
                            name, version, MANIFEST_VERSION);
        /* the end line: the last line, which the checksum does not cover */
        if (len < 2 || data[len - 1] != '\n')
                return FAIL(-EINVAL, "%s: truncated manifest (no end line)", name);
        const char *last = data + len - 1;
        while (last > data && last[-1] != '\n')
                last--;
        if (last == data || strncmp(last, "end ", 4) != 0)
                return FAIL(-EINVAL, "%s: truncated manifest (no end line)", name);
        size_t body = (size_t)(last - data);
        size_t nlines = 1;
        for (const char *p = data; p < last; p++)
                nlines += *p == '\n';
        struct field f[4];
        int k = split(last, (size_t)(data + len - 1 - last), f, 3);
        uint8_t want[16], got[16];
        uint64_t count;
        char hex[33] = "";
        if (k == 3 && f[1].n == 32)
                memcpy(hex, f[1].s, 32);
        if (k != 3 || f[1].n != 32 || manifest_sum_parse(hex, want) < 0 || parse_u64_strict(f[2].s, f[2].n, &count) < 0)
                return FAIL(-EINVAL, "%s:%zu: bad end line (expected 'end CHECKSUM COUNT')", name, nlines);
        sum_text(data, body, got);
        if (memcmp(want, got, 16) != 0)
                return FAIL(-EBADMSG, "%s: checksum mismatch: the manifest was damaged or edited", name);
        size_t lineno = 1;
        for (const char *p = nl + 1; p < last;) {
                lineno++;
                const char *e = memchr(p, '\n', (size_t)(last - p));
                int r = parse_entry(&m, p, (size_t)(e - p), name, lineno, err);
                if (r < 0)
                        return r;
                p = e + 1;
        }
        if (count != m.n)
                return FAIL(-EINVAL, "%s:%zu: the end line counts %" PRIu64 " entries, the manifest has %zu", name, nlines,
                            count, m.n);
        memcpy(m.sum, got, 16);
        manifest_count(&m);
        *ret = m;
        manifest_init(&m);
        return 0;
}

int manifest_load(const char *path, struct bd_manifest *ret, struct bd_err *err)
{
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r = fs_read_file(path, MANIFEST_MAX_BYTES, &data, &len, err);
        if (r < 0)
                return r;
        return manifest_parse(data, len, path, ret, err);
}

/* fetch-table.c: the download tables (fetch-table.h). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fetch-table.h"
#include "fs.h"
#include "json.h"
#include "macro.h"
#include "strutil.h"
#include "system.h"

static bool hex_ok(const char *s, size_t min, size_t max)
{
        size_t n = strlen(s);
        if (n < min || n > max)
                return false;
        for (const char *p = s; *p; p++)
                if (str_hex_digit(*p) < 0)
                        return false;
        return true;
}

static bool plain_name(const char *s)
{
        if (!*s || streq(s, ".") || streq(s, "..") || strlen(s) > 200)
                return false;
        for (const char *p = s; *p; p++)
                if (*p == '/' || (unsigned char)*p < 0x20 || *p == 0x7f)
                        return false;
        return true;
}

static bool text_ok(const char *s)
{
        for (const char *p = s; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        return false;
        return true;
}

/* A string field: NULL where absent (and not required). */
static int get_str(const cJSON *o, const char *key, const char *where, bool required, char **ret, struct bd_err *err)
{
        *ret = NULL;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        if (!v) {
                if (required)
                        return bd_err_set(err, -EINVAL, "%s%s: missing", where, key);
                return 0;
        }
        if (!cJSON_IsString(v))
                return bd_err_set(err, -EINVAL, "%s%s: expected a string, got %s", where, key, json_type_name(v));
        if (strlen(v->valuestring) > 4096 || !text_ok(v->valuestring))
                return bd_err_set(err, -EINVAL, "%s%s: control characters or longer than 4096 bytes", where, key);
        *ret = xstrdup(v->valuestring);
        return 0;
}

static int get_size(const cJSON *o, const char *key, const char *where, int64_t *ret, struct bd_err *err)
{
        *ret = -1;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        if (!v || cJSON_IsNull(v))
                return 0;
        if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 9.0e15 ||
            v->valuedouble != (double)(int64_t)v->valuedouble)
                return bd_err_set(err, -EINVAL, "%s%s: expected a whole number of bytes", where, key);
        *ret = (int64_t)v->valuedouble;
        return 0;
}

static int check_keys(const cJSON *o, const char *const *known, const char *where, struct bd_err *err)
{
        const cJSON *k;
        cJSON_ArrayForEach(k, o) {
                bool ok = false;
                for (const char *const *p = known; *p && !ok; p++)
                        ok = streq(k->string, *p);
                if (!ok) {
                        /* the key as it may be shown: one line, printable */
                        char name[64];
                        size_t n = 0;
                        for (const char *p = k->string ? k->string : "?"; *p && n + 1 < sizeof(name); p++)
                                name[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
                        name[n] = '\0';
                        return bd_err_set(err, -EINVAL, "%s%s: unknown key", where, name);
                }
        }
        return 0;
}

void fetch_table_release(struct fetch_table *t)
{
        free(t->name);
        free(t->kind);
        free(t->description);
        free(t->home);
        free(t->output);
        for (int i = 0; i < t->nfiles; i++) {
                struct fetch_entry *e = &t->files[i];
                free(e->name);
                free(e->url);
                free(e->sha256);
                free(e->sha1);
                free(e->source);
                free(e->split);
                free(e->unpacks_to);
        }
        free(t->files);
        memset(t, 0, sizeof(*t));
}

static int parse(const cJSON *root, struct fetch_table *t, struct bd_err *err)
{
        static const char *const top_keys[] = { "name", "kind", "description", "home", "output", "files", NULL };
        static const char *const file_keys[] = { "name", "url", "bytes", "sha256", "sha1", "source", "split",
                                                  "unpacked_bytes", "unpacks_to", NULL };
        if (!cJSON_IsObject(root))
                return bd_err_set(err, -EINVAL, "expected an object");
        if (check_keys(root, top_keys, "", err) < 0 || get_str(root, "name", "", true, &t->name, err) < 0 ||
            get_str(root, "kind", "", true, &t->kind, err) < 0 ||
            get_str(root, "description", "", false, &t->description, err) < 0 ||
            get_str(root, "home", "", false, &t->home, err) < 0 || get_str(root, "output", "", false, &t->output, err) < 0)
                return -1;
        if (!plain_name(t->name) || strlen(t->name) > 64)
                return bd_err_set(err, -EINVAL, "name: '%s' is not a plain name", t->name);
        if (!streq(t->kind, "dataset") && !streq(t->kind, "weights"))
                return bd_err_set(err, -EINVAL, "kind: expected dataset or weights, got '%s'", t->kind);
        if (streq(t->kind, "weights") && (!t->output || !plain_name(t->output)))
                return bd_err_set(err, -EINVAL, "output: a weights table names the file it writes (a plain name)");
        const cJSON *files = cJSON_GetObjectItemCaseSensitive(root, "files");
        if (!cJSON_IsArray(files) || !cJSON_GetArraySize(files))
                return bd_err_set(err, -EINVAL, "files: expected a list of at least one file");
        int n = cJSON_GetArraySize(files);
        if (n > 256)
                return bd_err_set(err, -EINVAL, "files: %d files, at most 256", n);
        if (streq(t->kind, "weights") && n != 1)
                return bd_err_set(err, -EINVAL, "files: a weights table has one file");
        t->files = xcalloc((size_t)n, sizeof(*t->files));
        const cJSON *f;
        cJSON_ArrayForEach(f, files) {
                char where[32];
                snprintf(where, sizeof(where), "files[%d].", t->nfiles);
                struct fetch_entry *e = &t->files[t->nfiles++];
                if (!cJSON_IsObject(f))
                        return bd_err_set(err, -EINVAL, "files[%d]: expected an object", t->nfiles - 1);
                if (check_keys(f, file_keys, where, err) < 0 || get_str(f, "name", where, true, &e->name, err) < 0 ||
                    get_str(f, "url", where, true, &e->url, err) < 0 ||
                    get_str(f, "sha256", where, false, &e->sha256, err) < 0 ||
                    get_str(f, "sha1", where, false, &e->sha1, err) < 0 ||
                    get_str(f, "source", where, true, &e->source, err) < 0 ||
                    get_str(f, "split", where, false, &e->split, err) < 0 ||
                    get_str(f, "unpacks_to", where, false, &e->unpacks_to, err) < 0 ||
                    get_size(f, "bytes", where, &e->bytes, err) < 0 ||
                    get_size(f, "unpacked_bytes", where, &e->unpacked_bytes, err) < 0)
                        return -1;
                if (!plain_name(e->name))
                        return bd_err_set(err, -EINVAL, "%sname: '%s' is not a plain file name", where, e->name);
                for (int k = 0; k < t->nfiles - 1; k++)
                        if (streq(t->files[k].name, e->name))
                                return bd_err_set(err, -EINVAL, "%sname: '%s' twice", where, e->name);
                if (strncmp(e->url, "http://", 7) && strncmp(e->url, "https://", 8))
                        return bd_err_set(err, -EINVAL, "%surl: expected http:// or https://", where);
                if (strchr(e->url, ' '))
                        return bd_err_set(err, -EINVAL, "%surl: a space in an address", where);
                if (e->sha256 && !hex_ok(e->sha256, 8, 64))
                        return bd_err_set(err, -EINVAL, "%ssha256: expected 8 to 64 hex digits", where);
                if (e->sha1 && !hex_ok(e->sha1, 40, 40))
                        return bd_err_set(err, -EINVAL, "%ssha1: expected 40 hex digits", where);
                if (!e->sha256 && !e->sha1)
                        return bd_err_set(err, -EINVAL, "%s: no digest (sha256 or sha1): a file is never taken unchecked",
                                          where);
                if (e->split && (!plain_name(e->split) || strchr(e->split, ',')))
                        return bd_err_set(err, -EINVAL, "%ssplit: '%s' is not a plain name", where, e->split);
                if (e->unpacks_to && !plain_name(e->unpacks_to))
                        return bd_err_set(err, -EINVAL, "%sunpacks_to: '%s' is not a plain name", where, e->unpacks_to);
        }
        return 0;
}

int fetch_table_parse(const char *text, const char *label, struct fetch_table *ret, struct bd_err *err)
{
        memset(ret, 0, sizeof(*ret));
        cJSON *root = NULL;
        if (json_parse(text, label, &root, err) < 0)
                return -1;
        struct bd_err e;
        int r = parse(root, ret, &e);
        cJSON_Delete(root);
        if (r < 0) {
                fetch_table_release(ret);
                return bd_err_set(err, -EINVAL, "%s: %s", label, e.msg);
        }
        return 0;
}

int fetch_table_load(const char *path, struct fetch_table *ret, struct bd_err *err)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        if (fs_read_file(path, 1 << 20, &text, &len, err) < 0)
                return -1;
        if (strlen(text) != len)
                return bd_err_set(err, -EINVAL, "%s: a NUL byte in the file", path);
        return fetch_table_parse(text, path, ret, err);
}

int fetch_table_find(char *const *dirs, const char *name, const char *kind, struct fetch_table *ret,
                     struct bd_err *err)
{
        if (!plain_name(name) || strlen(name) > 64)
                return bd_err_set(err, -EINVAL, "'%s' is not a plain name", name);
        for (char *const *d = dirs; d && *d; d++) {
                _cleanup_free_ char *path = xasprintf("%s/%s.json", *d, name);
                if (access(path, F_OK) < 0)
                        continue;
                if (fetch_table_load(path, ret, err) < 0)
                        return -1;
                if (!streq(ret->kind, kind) || !streq(ret->name, name)) {
                        bd_err_set(err, -EINVAL, "%s: a table of %s '%s', not of %s '%s'", path, ret->kind, ret->name,
                                   kind, name);
                        fetch_table_release(ret);
                        return -1;
                }
                return 0;
        }
        for (const struct fetch_table_text *t = fetch_bundled; t->name; t++) {
                if (!streq(t->name, name))
                        continue;
                if (fetch_table_parse(t->text, t->file, ret, err) < 0)
                        return -1;
                if (streq(ret->kind, kind))
                        return 0;
                fetch_table_release(ret);
                break;
        }
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        fetch_table_names(kind, &b);
        return bd_err_set(err, -ENOENT, "no %s '%s' (known: %s)", kind, name, b.len ? b.s : "none");
}

void fetch_table_names(const char *kind, struct bd_buf *out)
{
        int n = 0;
        for (const struct fetch_table_text *t = fetch_bundled; t->name; t++) {
                struct fetch_table tb;
                struct bd_err e;
                if (fetch_table_parse(t->text, t->file, &tb, &e) < 0)
                        continue;
                if (streq(tb.kind, kind))
                        buf_printf(out, "%s%s", n++ ? ", " : "", tb.name);
                fetch_table_release(&tb);
        }
}

int fetch_table_open(const char *table_file, const char *name, const char *kind, struct fetch_table *ret,
                     struct bd_err *err)
{
        if (!table_file) {
                struct bd_sysdirs dirs;
                sysdirs_user(&dirs, NULL, "BENCHD_FETCH", "fetch");
                int r = fetch_table_find(dirs.dirs, name, kind, ret, err);
                sysdirs_release(&dirs);
                return r < 0 ? FETCH_TABLE_UNKNOWN : 0;
        }
        if (fetch_table_load(table_file, ret, err) < 0)
                return -1;
        if (!streq(ret->kind, kind)) {
                bd_err_set(err, -EINVAL, "%s is a table of %s '%s', not of %s", table_file, ret->kind, ret->name, kind);
                fetch_table_release(ret);
                return -1;
        }
        return 0;
}

char *fetch_url(const struct fetch_entry *e, const char *mirror)
{
        if (!mirror)
                return xstrdup(e->url);
        size_t n = strlen(mirror);
        return xasprintf("%s%s%s", mirror, n && mirror[n - 1] == '/' ? "" : "/", e->name);
}

const char *fetch_source_problem(const char *mirror, const char *from)
{
        if (mirror && from)
                return "--mirror and --from: one or the other";
        if (mirror && strncmp(mirror, "http://", 7) && strncmp(mirror, "https://", 8))
                return "--mirror: expected an http:// or https:// address";
        return NULL;
}

/* one line of a checksum file: "HEX  NAME", "HEX *NAME" (sha1sum,
 * sha256sum) or "SHA256 (NAME) = HEX" (BSD, --tag); 0, 1 for a line to
 * skip, -1 for one that is neither */
static int sums_line(const char *s, size_t n, char *hex, size_t hexsz, char *name, size_t namesz)
{
        while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
                n--;
        size_t i = 0;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
                i++;
        if (i == n || s[i] == '#')
                return 1;
        const char *p = s + i, *e = s + n;
        size_t h = 0;
        if ((e - p > 8 && !memcmp(p, "SHA256 (", 8)) || (e - p > 6 && !memcmp(p, "SHA1 (", 6))) {
                size_t want = p[3] == '2' ? 64 : 40;    /* the tag names the digest */
                p = strchr(p, '(') + 1;
                const char *close = NULL;
                for (const char *q = e - 1; q > p; q--)
                        if (*q == ')' && q + 3 < e && !memcmp(q, ") = ", 4)) {
                                close = q;
                                break;
                        }
                if (!close || (size_t)(close - p) >= namesz || (size_t)(e - (close + 4)) >= hexsz)
                        return -1;
                memcpy(name, p, (size_t)(close - p));
                name[close - p] = '\0';
                memcpy(hex, close + 4, (size_t)(e - (close + 4)));
                hex[e - (close + 4)] = '\0';
                if (strlen(hex) != want)
                        return -1;
        } else {
                while (p + h < e && str_hex_digit(p[h]) >= 0)
                        h++;
                if (!h || h >= hexsz || p + h + 2 > e || p[h] != ' ' || (p[h + 1] != ' ' && p[h + 1] != '*'))
                        return -1;
                memcpy(hex, p, h);
                hex[h] = '\0';
                p += h + 2;
                if ((size_t)(e - p) >= namesz || p == e)
                        return -1;
                memcpy(name, p, (size_t)(e - p));
                name[e - p] = '\0';
        }
        for (const char *q = hex; *q; q++)
                if (str_hex_digit(*q) < 0)
                        return -1;
        return 0;
}

int fetch_table_checksums(struct fetch_table *t, const char *text, size_t len, const char *label, struct bd_err *err)
{
        int line = 0, used = 0;
        for (const char *p = text, *end = text + len; p < end;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
                line++;
                char hex[80], name[256];
                int r = sums_line(p, n, hex, sizeof(hex), name, sizeof(name));
                p += n + 1;
                if (r > 0)
                        continue;
                if (r < 0)
                        return bd_err_set(err, -EINVAL, "%s:%d: expected 'HEX  NAME' (sha256sum, sha1sum) or "
                                          "'SHA256 (NAME) = HEX'", label, line);
                size_t hl = strlen(hex);
                if (hl != 40 && hl != 64)
                        return bd_err_set(err, -EINVAL, "%s:%d: a digest of %zu hex digits: SHA-1 (40) and SHA-256 (64) "
                                          "are checked", label, line, hl);
                /* a path names the file by its last part */
                const char *base = strrchr(name, '/');
                base = base ? base + 1 : name;
                for (int i = 0; i < t->nfiles; i++) {
                        struct fetch_entry *e = &t->files[i];
                        if (!streq(e->name, base))
                                continue;
                        free(e->sha1);
                        free(e->sha256);
                        e->sha1 = hl == 40 ? xstrdup(hex) : NULL;
                        e->sha256 = hl == 64 ? xstrdup(hex) : NULL;
                        e->bytes = -1;  /* another file than the table's: its size is the server's */
                        free(e->source);
                        e->source = xasprintf("%s, line %d", label, line);
                        used++;
                }
        }
        if (!used)
                return bd_err_set(err, -EINVAL, "%s: no line names a file of %s", label, t->name);
        return used;
}

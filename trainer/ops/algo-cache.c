/* algo-cache.c: measured convolution algorithms on disk (algo-cache.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo-cache.h"
#include "buf.h"
#include "fs.h"
#include "strutil.h"

#define FILE_MAX (16 << 20)     /* a file larger than this is not a cache's */

void bd_algo_cache_init(struct bd_algo_cache *c, const char *device, long library)
{
        memset(c, 0, sizeof(*c));
        STR_COPY(c->device, device ? device : "");
        c->library = library;
}

void bd_algo_cache_free(struct bd_algo_cache *c)
{
        free(c->e);
        c->e = NULL;
        c->n = c->cap = c->added = 0;
}

static struct bd_algo_entry *find(const struct bd_algo_cache *c, uint64_t key)
{
        for (size_t i = 0; i < c->n; i++)
                if (c->e[i].key == key)
                        return &c->e[i];
        return NULL;
}

const struct bd_algo_entry *bd_algo_cache_get(const struct bd_algo_cache *c, uint64_t key)
{
        return find(c, key);
}

static void put(struct bd_algo_cache *c, const struct bd_algo_entry *v)
{
        struct bd_algo_entry *e = find(c, v->key);
        if (!e) {
                if (c->n == c->cap) {
                        c->cap = c->cap ? 2 * c->cap : 64;
                        c->e = xrealloc(c->e, c->cap * sizeof(*c->e));
                }
                e = &c->e[c->n++];
        }
        *e = *v;
}

static bool algo_ok(int a)
{
        return a >= 0 && a <= BD_ALGO_MAX;
}

int bd_algo_cache_set(struct bd_algo_cache *c, uint64_t key, int fwd, int bwd_data, int bwd_filter)
{
        if (!algo_ok(fwd) || !algo_ok(bwd_data) || !algo_ok(bwd_filter))
                return -EINVAL;
        struct bd_algo_entry v = { key, fwd, bwd_data, bwd_filter };
        put(c, &v);
        c->added++;
        return 0;
}

/* A whole decimal number of 0..max ending at a blank or the line's end; the
 * text after it in *end. */
static bool number(const char *s, long max, long *ret, const char **end)
{
        if (!isdigit((unsigned char)*s))
                return false;
        long v = 0;
        while (isdigit((unsigned char)*s)) {
                v = v * 10 + (*s++ - '0');
                if (v > max)
                        return false;
        }
        if (*s && *s != ' ' && *s != '\t')
                return false;
        *ret = v;
        *end = s;
        return true;
}

static const char *blanks(const char *s)
{
        while (*s == ' ' || *s == '\t')
                s++;
        return s;
}

/* "KEY FWD DATA FILTER": 16 hex digits and three algorithm numbers */
static bool entry(const char *s, struct bd_algo_entry *v)
{
        uint64_t key = 0;
        for (int i = 0; i < 16; i++, s++) {
                int d = str_hex_digit(*s);
                if (d < 0 || isupper((unsigned char)*s))  /* lower case, as format writes */
                        return false;
                key = key << 4 | (uint64_t)d;
        }
        long a[3];
        for (int i = 0; i < 3; i++) {
                if (*s != ' ' && *s != '\t')
                        return false;
                if (!number(blanks(s), BD_ALGO_MAX, &a[i], &s))
                        return false;
        }
        if (*blanks(s))
                return false;
        *v = (struct bd_algo_entry){ key, (int)a[0], (int)a[1], (int)a[2] };
        return true;
}

int bd_algo_cache_parse(struct bd_algo_cache *c, const char *text, size_t len, const char *name, bool *ret_other,
                        struct bd_err *err)
{
        if (ret_other)
                *ret_other = false;
        if (memchr(text, '\0', len))
                return bd_err_set(err, -EINVAL, "%s: not a text file (a NUL byte)", name);
        _cleanup_free_ char *copy = xstrndup(text, len);
        struct bd_algo_cache got;
        bd_algo_cache_init(&got, c->device, c->library);
        char device[sizeof(c->device)] = "";
        long library = -1;
        int lineno = 0, r = 0;
        bool magic = false, other = false;
        for (char *l = copy, *next; l && !r; l = next) {
                next = strchr(l, '\n');
                if (next)
                        *next++ = '\0';
                lineno++;
                size_t ll = strlen(l);
                if (ll && l[ll - 1] == '\r')
                        l[--ll] = '\0';
                const char *s = blanks(l);
                if (!magic) {
                        if (strcmp(l, BD_ALGO_CACHE_MAGIC) != 0)
                                r = bd_err_set(err, -EINVAL, "%s:%d: not a convolution algorithm cache (no '%s' line)",
                                               name, lineno, BD_ALGO_CACHE_MAGIC);
                        magic = true;
                        continue;
                }
                if (!*s || *s == '#')
                        continue;
                if (!strncmp(s, "device ", 7)) {
                        const char *d = blanks(s + 7);
                        if (*device || !*d || strlen(d) >= sizeof(device))
                                r = bd_err_set(err, -EINVAL, "%s:%d: %s", name, lineno,
                                               *device ? "a second device line" : "a device name of 1 to 127 characters");
                        else
                                STR_COPY(device, d);
                        continue;
                }
                if (!strncmp(s, "library ", 8)) {
                        const char *e;
                        long v;
                        if (library >= 0 || !number(blanks(s + 8), 999999999L, &v, &e) || *blanks(e))
                                r = bd_err_set(err, -EINVAL, "%s:%d: %s", name, lineno,
                                               library >= 0 ? "a second library line" : "library: a version number");
                        else
                                library = v;
                        continue;
                }
                struct bd_algo_entry v;
                if (!*device || library < 0)
                        r = bd_err_set(err, -EINVAL, "%s:%d: an entry before the device and library lines", name, lineno);
                else if (!entry(s, &v))
                        r = bd_err_set(err, -EINVAL,
                                       "%s:%d: an entry is 16 hex digits and three algorithm numbers of 0 to %d",
                                       name, lineno, BD_ALGO_MAX);
                else
                        put(&got, &v);
        }
        if (!r && (!*device || library < 0))
                r = bd_err_set(err, -EINVAL, "%s: no %s line", name, !*device ? "device" : "library");
        if (r < 0) {
                bd_algo_cache_free(&got);
                return r;
        }
        other = strcmp(device, c->device) != 0 || library != c->library;
        if (ret_other)
                *ret_other = other;
        if (!other)
                for (size_t i = 0; i < got.n; i++)
                        if (!find(c, got.e[i].key))
                                put(c, &got.e[i]);
        bd_algo_cache_free(&got);
        return 0;
}

char *bd_algo_cache_file(const struct bd_algo_cache *c, const char *dir)
{
        char dev[sizeof(c->device)];
        size_t i = 0;
        for (; c->device[i]; i++) {
                char ch = c->device[i];
                dev[i] = isalnum((unsigned char)ch) || ch == '.' || ch == '-' ? ch : '_';
        }
        dev[i] = '\0';
        return xasprintf("%s/conv-algos-%s-%ld.txt", dir, *dev ? dev : "unknown", c->library);
}

int bd_algo_cache_load(struct bd_algo_cache *c, const char *path, struct bd_err *err)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = fs_read_file(path, FILE_MAX, &text, &len, err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return bd_algo_cache_parse(c, text, len, path, NULL, err);
}

static int by_key(const void *a, const void *b)
{
        uint64_t x = ((const struct bd_algo_entry *)a)->key, y = ((const struct bd_algo_entry *)b)->key;
        return x < y ? -1 : x > y;
}

char *bd_algo_cache_format(const struct bd_algo_cache *c)
{
        struct bd_algo_entry *e = xmalloc((c->n ? c->n : 1) * sizeof(*e));
        if (c->n)
                memcpy(e, c->e, c->n * sizeof(*e));
        qsort(e, c->n, sizeof(*e), by_key);
        struct bd_buf b = BD_BUF_INIT;
        buf_printf(&b, "%s\ndevice %s\nlibrary %ld\n", BD_ALGO_CACHE_MAGIC, c->device, c->library);
        buf_puts(&b, "# key (a shape, its types and the math allowed)  forward  backward-data  backward-filter\n");
        for (size_t i = 0; i < c->n; i++)
                buf_printf(&b, "%016llx %d %d %d\n", (unsigned long long)e[i].key, e[i].fwd, e[i].bwd_data,
                           e[i].bwd_filter);
        free(e);
        return b.s ? b.s : xstrdup("");
}

int bd_algo_cache_save(const struct bd_algo_cache *c, const char *path, struct bd_err *err)
{
        if (!c->added)
                return 0;
        struct bd_algo_cache all;
        bd_algo_cache_init(&all, c->device, c->library);
        for (size_t i = 0; i < c->n; i++)
                put(&all, &c->e[i]);
        /* what other ranks or runs wrote since this one loaded; a file that
         * is not a cache's is written over */
        struct bd_err ignored;
        (void)bd_algo_cache_load(&all, path, &ignored);
        _cleanup_free_ char *dir = xstrdup(path);
        int r = fs_mkdir_p(dirname(dir), 0755);
        if (r < 0) {
                bd_algo_cache_free(&all);
                return bd_err_set(err, r, "%s: cannot create its directory: %s", path, strerror(-r));
        }
        _cleanup_free_ char *text = bd_algo_cache_format(&all);
        bd_algo_cache_free(&all);
        return fs_write_atomic(path, text, strlen(text), 0644, err);
}

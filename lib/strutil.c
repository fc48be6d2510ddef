/* strutil.c: strict number parsing and typo suggestions. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "macro.h"
#include "strutil.h"

int str_parse_long(const char *s, long *ret)
{
        if (!s || !*s || isspace((unsigned char)*s))
                return -EINVAL;
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int str_parse_double(const char *s, double *ret)
{
        if (!s || !*s || isspace((unsigned char)*s))
                return -EINVAL;
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end || !isfinite(v))
                return -EINVAL;
        *ret = v;
        return 0;
}

int str_edit_distance(const char *a, const char *b)
{
        size_t n = strlen(a), m = strlen(b);
        _cleanup_free_ int *d = xcalloc((n + 1) * (m + 1), sizeof(int));
#define D(i, j) d[(i) * (m + 1) + (j)]
        for (size_t i = 0; i <= n; i++)
                D(i, 0) = (int)i;
        for (size_t j = 0; j <= m; j++)
                D(0, j) = (int)j;
        for (size_t i = 1; i <= n; i++)
                for (size_t j = 1; j <= m; j++) {
                        int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
                        int v = D(i - 1, j) + 1;
                        if (D(i, j - 1) + 1 < v)
                                v = D(i, j - 1) + 1;
                        if (D(i - 1, j - 1) + cost < v)
                                v = D(i - 1, j - 1) + cost;
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                            D(i - 2, j - 2) + 1 < v)
                                v = D(i - 2, j - 2) + 1;
                        D(i, j) = v;
                }
        int r = D(n, m);
#undef D
        return r;
}

/* The length of the dotted prefix ("maskrcnn.") a and b share. */
static size_t shared_section(const char *a, const char *b)
{
        const char *dot = strrchr(a, '.');
        size_t n = dot ? (size_t)(dot - a) + 1 : 0;
        return n && strncasecmp(a, b, n) == 0 ? n : 0;
}

const char *str_closest_word(const char *word, const char *const *candidates)
{
        const char *best = NULL;
        int best_d = 0;
        for (const char *const *c = candidates; c && *c; c++) {
                /* a key of a section: its own name against theirs, not the
                 * section's name counted in its length */
                size_t skip = shared_section(word, *c);
                const char *w = word + skip, *k = *c + skip;
                int d = str_edit_distance(w, k);
                /* a plausible typo: at most a third of the name, at least one edit */
                int limit = ((int)strlen(w) + 1) / 3;
                if (limit < 1)
                        limit = 1;
                if (d <= limit && (!best || d < best_d)) {
                        best = *c;
                        best_d = d;
                }
        }
        if (best)
                return best;
        /* else the one the word begins ("gpus" for gpus_per_node), the shortest */
        size_t n = strlen(word);
        for (const char *const *c = candidates; c && *c; c++)
                if (n >= 3 && strncasecmp(*c, word, n) == 0 && ((*c)[n] == '_' || (*c)[n] == '.') &&
                    (!best || strlen(*c) < strlen(best)))
                        best = *c;
        return best;
}

bool str_has_suffix(const char *s, const char *suffix)
{
        size_t n = strlen(s), m = strlen(suffix);
        return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

bool str_has_prefix(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

void str_copy(char *dst, size_t n, const char *src)
{
        if (!n)
                return;
        size_t l = strnlen(src, n - 1);
        memmove(dst, src, l);
        dst[l] = '\0';
}

int str_hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

size_t str_utf8_char_len(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t len;
        uint32_t c;
        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                len = 2, c = p[0] & 0x1f;
        else if (p[0] >= 0xe0 && p[0] <= 0xef)
                len = 3, c = p[0] & 0x0f;
        else if (p[0] >= 0xf0 && p[0] <= 0xf4)
                len = 4, c = p[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                c = c << 6 | (p[i] & 0x3f);
        }
        static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
        if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
                return 0;
        return len;
}

/* C0, DEL, and C1 (U+0080 to U+009F, two bytes: c2 80 to c2 9f) */
static bool is_control(const char *s, size_t len)
{
        const unsigned char *p = (const unsigned char *)s;
        return (len == 1 && (p[0] < 0x20 || p[0] == 0x7f)) || (len == 2 && p[0] == 0xc2 && p[1] < 0xa0);
}

size_t str_sanitize(char *dst, size_t n, const char *src, const char *repl)
{
        if (!n)
                return 0;
        _cleanup_free_ char *copy = xstrdup(src);
        size_t w = 0, bad = 0, rl = strlen(repl);
        for (const char *p = copy; *p;) {
                size_t len = str_utf8_char_len(p);
                const char *c = p;
                size_t cl = len;
                bool replace = !len || is_control(p, len);
                if (replace) {
                        c = repl;
                        cl = rl;
                }
                p += len ? len : 1;
                if (w + cl >= n)
                        break;
                memcpy(dst + w, c, cl);
                w += cl;
                bad += replace;
        }
        dst[w] = '\0';
        return bad;
}

#define VERSION_PARTS 8

/* s split as "FAMILY VERSION": the family (trimmed, may be empty) in fam,
 * the version's numeric parts in v (*n of them, at most VERSION_PARTS); *ge
 * for a leading ">=".  strict: the version is all digits and dots (a
 * requirement); else numbers up to the first other character ("4.1.4a1"). */
static bool version_split(const char *s, char *fam, size_t famsize, long *v, int *n, bool *ge, bool strict)
{
        size_t len = strlen(s);
        while (len && isspace((unsigned char)s[len - 1]))
                len--;
        size_t start = len;
        while (start && !isspace((unsigned char)s[start - 1]))
                start--;
        const char *p = s + start;
        *ge = false;
        if (!strncmp(p, ">=", 2)) {
                *ge = true;
                p += 2;
        }
        *n = 0;
        const char *end = s + len;
        while (p < end && isdigit((unsigned char)*p) && *n < VERSION_PARTS) {
                long x = 0;
                while (p < end && isdigit((unsigned char)*p) && x < 100000000)
                        x = x * 10 + (*p++ - '0');
                if (p < end && isdigit((unsigned char)*p))
                        return false;   /* too long a number */
                v[(*n)++] = x;
                if (p < end && *p == '.' && p + 1 < end && isdigit((unsigned char)p[1]))
                        p++;
                else
                        break;
        }
        if (!*n || (strict && p != end))
                return false;
        size_t fl = start;
        while (fl && isspace((unsigned char)s[fl - 1]))
                fl--;
        /* ">= 12.2": the sign a word of its own */
        if (!*ge && fl >= 2 && !strncmp(s + fl - 2, ">=", 2) && (fl == 2 || isspace((unsigned char)s[fl - 3]))) {
                *ge = true;
                fl -= 2;
                while (fl && isspace((unsigned char)s[fl - 1]))
                        fl--;
        }
        size_t fs = 0;
        while (fs < fl && isspace((unsigned char)s[fs]))
                fs++;
        if (fl - fs >= famsize || memchr(s + fs, '<', fl - fs) || memchr(s + fs, '>', fl - fs) ||
            memchr(s + fs, '=', fl - fs))
                return false;   /* a product's name holds no comparison */
        memcpy(fam, s + fs, fl - fs);
        fam[fl - fs] = '\0';
        return true;
}

bool str_version_minimum(const char *req)
{
        char fam[64];
        long v[VERSION_PARTS];
        int n;
        bool ge;
        return req && version_split(req, fam, sizeof(fam), v, &n, &ge, true) && ge;
}

bool str_version_valid(const char *req)
{
        char fam[64];
        long v[VERSION_PARTS];
        int n;
        bool ge;
        return req && version_split(req, fam, sizeof(fam), v, &n, &ge, true);
}

bool str_version_satisfies(const char *have, const char *req)
{
        char hf[64], rf[64];
        long hv[VERSION_PARTS], rv[VERSION_PARTS];
        int hn, rn;
        bool hge, rge;
        if (!have || !req || !version_split(req, rf, sizeof(rf), rv, &rn, &rge, true) ||
            !version_split(have, hf, sizeof(hf), hv, &hn, &hge, false) || hge)
                return false;
        /* a product named where the node's version names one (MPI's) */
        if (rf[0] && hf[0] && strcasecmp(rf, hf))
                return false;
        if (!rge) {
                if (hn < rn)
                        return false;
                for (int i = 0; i < rn; i++)
                        if (hv[i] != rv[i])
                                return false;
                return true;
        }
        for (int i = 0; i < (hn > rn ? hn : rn); i++) {
                long a = i < hn ? hv[i] : 0, b = i < rn ? rv[i] : 0;
                if (a != b)
                        return a > b;
        }
        return true;
}

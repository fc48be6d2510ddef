/* strutil.c: strict number parsing and typo suggestions. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "strutil.h"

int parse_long(const char *s, long *ret)
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

int parse_double(const char *s, double *ret)
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

int edit_distance(const char *a, const char *b)
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

const char *closest_word(const char *word, const char *const *candidates)
{
        const char *best = NULL;
        int best_d = 0;
        for (const char *const *c = candidates; c && *c; c++) {
                int d = edit_distance(word, *c);
                if (!best || d < best_d) {
                        best = *c;
                        best_d = d;
                }
        }
        /* a plausible typo: at most a third of the word, and at least one edit allowed */
        int limit = (int)strlen(word) / 3;
        if (limit < 2)
                limit = 2;
        return best && best_d <= limit ? best : NULL;
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

int hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

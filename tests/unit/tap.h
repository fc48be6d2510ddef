/* tap.h: a minimal TAP producer for C unit tests.
 *
 *     ok(cond, "what");  is_int(got, want, "what");  is_str(got, want, "what");
 *     return done_testing();
 *
 * Failures print file:line and the values; the exit status is non-zero when
 * any test failed, so automake's TAP driver counts every assertion.
 */
#ifndef BD_TAP_H
#define BD_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *file, int line, const char *what)
{
        tap_n++;
        printf("%s %d - %s\n", cond ? "ok" : "not ok", tap_n, what);
        if (!cond) {
                printf("#   failed at %s:%d\n", file, line);
                tap_failed++;
        }
        fflush(stdout);
        return cond;
}

#define ok(cond, what) tap_ok(!!(cond), __FILE__, __LINE__, what)
#define is_int(got, want, what)                                                          \
        do {                                                                             \
                long long _g = (long long)(got), _w = (long long)(want);                 \
                if (!tap_ok(_g == _w, __FILE__, __LINE__, what))                         \
                        printf("#   got %lld, want %lld\n", _g, _w);                      \
        } while (0)
#define is_str(got, want, what)                                                          \
        do {                                                                             \
                const char *_g = (got), *_w = (want);                                    \
                if (!tap_ok(_g && _w && strcmp(_g, _w) == 0, __FILE__, __LINE__, what))  \
                        printf("#   got  '%s'\n#   want '%s'\n", _g ? _g : "(null)",      \
                               _w ? _w : "(null)");                                       \
        } while (0)
#define like(got, needle, what)                                                          \
        do {                                                                             \
                const char *_g = (got), *_n = (needle);                                  \
                if (!tap_ok(_g && strstr(_g, _n) != NULL, __FILE__, __LINE__, what))     \
                        printf("#   '%.300s...'\n#   does not contain '%s'\n", _g ? _g : "(null)", _n); \
        } while (0)

static inline int done_testing(void)
{
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}

#endif

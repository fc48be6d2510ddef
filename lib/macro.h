/* macro.h: small helpers shared by every benchd program.
 *
 * Cleanup attributes (gcc and clang): a variable declared
 *     _cleanup_free_ char *p = NULL;
 * is freed when it goes out of scope; TAKE_PTR(p) hands ownership out and leaves
 * NULL behind.  x*alloc never return NULL: they print and abort on exhaustion.
 */
#ifndef BD_MACRO_H
#define BD_MACRO_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* The struct type whose member (a.b for a nested one) is at ptr. */
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))
#define _noreturn_ __attribute__((noreturn))

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* DEFINE_CLEANUP(struct foo *, foo_free) defines foo_freep() for _cleanup_(foo_freep). */
#define DEFINE_CLEANUP(type, fn)                                        \
        static inline void fn##p(type *p) { if (*p) fn(*p); }

#define TAKE_PTR(p) ({ __typeof__(p) _tp = (p); (p) = NULL; _tp; })
#define TAKE_FD(fd) ({ int _tf = (fd); (fd) = -1; _tf; })

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* align: a power of two, a multiple of sizeof(void *); free() releases it */
void *xaligned_alloc(size_t align, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) _printf_(1, 2);
char *xvasprintf(const char *fmt, va_list ap) _printf_(1, 0);

static inline int streq(const char *a, const char *b) { return a && b && __builtin_strcmp(a, b) == 0; }

#endif

/* xalloc.c: allocation that never returns NULL (out of memory aborts). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

_noreturn_ static void oom(size_t n)
{
        fprintf(stderr, "out of memory allocating %zu bytes\n", n);
        abort();
}

void *xmalloc(size_t n)
{
        void *p = malloc(n ? n : 1);
        if (!p)
                oom(n);
        return p;
}

void *xcalloc(size_t n, size_t size)
{
        void *p = calloc(n ? n : 1, size ? size : 1);
        if (!p)
                oom(n * size);
        return p;
}

void *xaligned_alloc(size_t align, size_t n)
{
        void *p;
        if (posix_memalign(&p, align, n ? n : 1) != 0)
                oom(n);
        return p;
}

void *xrealloc(void *p, size_t n)
{
        void *q = realloc(p, n ? n : 1);
        if (!q)
                oom(n);
        return q;
}

char *xstrdup(const char *s)
{
        return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
        size_t len = strnlen(s, n);
        char *p = xmalloc(len + 1);
        memcpy(p, s, len);
        p[len] = '\0';
        return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
        char *p;
        if (vasprintf(&p, fmt, ap) < 0)
                oom(strlen(fmt));
        return p;
}

char *xasprintf(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *p = xvasprintf(fmt, ap);
        va_end(ap);
        return p;
}

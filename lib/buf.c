/* buf.c: growable string buffer. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "buf.h"

static char empty[1];

void buf_init(struct bd_buf *b)
{
        b->s = empty;
        b->len = 0;
        b->cap = 0;
}

void buf_release(struct bd_buf *b)
{
        if (b->cap)
                free(b->s);
        buf_init(b);
}

char *buf_detach(struct bd_buf *b)
{
        char *s = b->cap ? b->s : xstrdup("");
        buf_init(b);
        return s;
}

void buf_reset(struct bd_buf *b)
{
        if (!b->s)
                buf_init(b);
        b->len = 0;
        if (b->cap)
                b->s[0] = '\0';
}

void buf_grow(struct bd_buf *b, size_t extra)
{
        if (!b->s)
                buf_init(b);
        if (b->len + extra + 1 <= b->cap)
                return;
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + extra + 1)
                cap *= 2;
        if (b->cap)
                b->s = xrealloc(b->s, cap);
        else {
                b->s = xmalloc(cap);
                b->s[0] = '\0';
        }
        b->cap = cap;
}

void buf_add(struct bd_buf *b, const void *data, size_t len)
{
        buf_grow(b, len);
        memcpy(b->s + b->len, data, len);
        b->len += len;
        b->s[b->len] = '\0';
}

void buf_puts(struct bd_buf *b, const char *s)
{
        buf_add(b, s, strlen(s));
}

void buf_putc(struct bd_buf *b, char c)
{
        buf_add(b, &c, 1);
}

void buf_vprintf(struct bd_buf *b, const char *fmt, va_list ap)
{
        va_list cp;
        va_copy(cp, ap);
        int n = vsnprintf(NULL, 0, fmt, cp);
        va_end(cp);
        if (n <= 0)
                return;
        buf_grow(b, (size_t)n);
        vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
        b->len += (size_t)n;
}

void buf_printf(struct bd_buf *b, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        buf_vprintf(b, fmt, ap);
        va_end(ap);
}

void buf_shell_quote(struct bd_buf *b, const char *s)
{
        static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789@%_-+=:,./";
        if (*s && strspn(s, safe) == strlen(s)) {
                buf_puts(b, s);
                return;
        }
        buf_putc(b, '\'');
        for (; *s; s++) {
                if (*s == '\'')
                        buf_puts(b, "'\\''");
                else
                        buf_putc(b, *s);
        }
        buf_putc(b, '\'');
}

/* buf.h: a growable, always NUL-terminated string buffer.
 *
 * Invariants: b->s is never NULL after buf_init(); b->s[b->len] == '\0'.
 * buf_release() frees the storage and re-initialises the buffer;
 * buf_detach() hands the string to the caller.
 */
#ifndef BD_BUF_H
#define BD_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "macro.h"

struct bd_buf {
        char *s;
        size_t len;
        size_t cap;
};

#define BD_BUF_INIT { NULL, 0, 0 }

void buf_init(struct bd_buf *b);
void buf_release(struct bd_buf *b);
char *buf_detach(struct bd_buf *b);
void buf_reset(struct bd_buf *b);
void buf_grow(struct bd_buf *b, size_t extra);
void buf_add(struct bd_buf *b, const void *data, size_t len);
void buf_puts(struct bd_buf *b, const char *s);
void buf_putc(struct bd_buf *b, char c);
void buf_printf(struct bd_buf *b, const char *fmt, ...) _printf_(2, 3);
void buf_vprintf(struct bd_buf *b, const char *fmt, va_list ap) _printf_(2, 0);
/* Appends s quoted for a POSIX shell: bare when it holds only safe characters,
 * in single quotes otherwise. */
void buf_shell_quote(struct bd_buf *b, const char *s);

static inline void buf_releasep(struct bd_buf *b) { buf_release(b); }
#define _cleanup_buf_ _cleanup_(buf_releasep)

#endif

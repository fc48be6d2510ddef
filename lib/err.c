/* err.c: one-line error messages. */
#include "config.h"

#include <stdio.h>

#include "err.h"
#include "strutil.h"

int bd_err_set(struct bd_err *err, int r, const char *fmt, ...)
{
        if (err) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
                va_end(ap);
        }
        return r;
}

int bd_err_printable(struct bd_err *err, int r)
{
        if (r < 0 && err)
                (void) str_sanitize(err->msg, sizeof(err->msg), err->msg, "\xef\xbf\xbd");
        return r;
}

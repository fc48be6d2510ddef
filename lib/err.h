/* err.h: one-line error messages filled in by library code.
 *
 * Library functions never print: when they fail they return a negative errno
 * and, given a struct bd_err, describe the failure in one line that names the
 * file, line or field ("systems/C4140.json:12: ...").  The program prints it.
 */
#ifndef BD_ERR_H
#define BD_ERR_H

#include "macro.h"

struct bd_err {
        char msg[1024];
};

/* Formats the message (when err is non-NULL) and returns r, which should be a
 * negative errno, so that callers can write: return bd_err_set(err, -EINVAL, ...). */
int bd_err_set(struct bd_err *err, int r, const char *fmt, ...) _printf_(3, 4);

/* For a message that quotes what a file held (keys, names): each control
 * character and each byte that is not UTF-8 becomes U+FFFD, so that it stays
 * one line and reaches no terminal raw.  Returns r, for
 * return bd_err_printable(err, f(...)).  err may be NULL. */
int bd_err_printable(struct bd_err *err, int r);

#endif

/* strutil.h: parsing numbers strictly and suggesting the closest known word. */
#ifndef BD_STRUTIL_H
#define BD_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whole-string integer parse: no trailing junk, no overflow.  0 or -EINVAL/-ERANGE. */
int str_parse_long(const char *s, long *ret);
int str_parse_double(const char *s, double *ret);
/* Edit distance (Damerau: transpositions count as one edit). */
int str_edit_distance(const char *a, const char *b);
/* The candidate closest to word, or NULL when none is close enough to be a
 * plausible typo.  candidates is NULL-terminated. */
const char *str_closest_word(const char *word, const char *const *candidates);
bool str_has_suffix(const char *s, const char *suffix);
bool str_has_prefix(const char *s, const char *prefix);
/* Copies src into dst[n], cut to fit, always terminated. */
void str_copy(char *dst, size_t n, const char *src);
#define STR_COPY(dst, src) str_copy((dst), sizeof(dst), (src))

/* The value of a hexadecimal digit, -1 for any other character. */
int str_hex_digit(char c);

/* The length (1 to 4) of the valid UTF-8 character s starts with; 0 for a
 * byte that starts none (stray continuation, overlong form, surrogate, past
 * U+10FFFF, cut short). */
size_t str_utf8_char_len(const char *s);
/* Copies src into dst[n] as printable UTF-8: each byte that starts no valid
 * character and each control character (C0, DEL, C1) becomes repl; cut to
 * fit at a character boundary, always terminated.  dst may be src.  Returns
 * how many were replaced. */
size_t str_sanitize(char *dst, size_t n, const char *src, const char *repl);

/* Software versions as a system names them: "[FAMILY ][>=[ ]]N[.N]...",
 * where FAMILY names the product ("Open MPI", "MPICH"; any case; no <, >
 * or =).  "12.2" is that version at that precision (12.2.140 is one);
 * ">=535.104" or ">= 535.104" at least that.  str_version_valid: req is
 * one; str_version_minimum: a valid one with ">="; str_version_satisfies:
 * have (a version as benchd's inventory gives it, "535.104.05", "Open MPI
 * 4.1.4") meets req (the products compared where both name one). */
bool str_version_valid(const char *req);
bool str_version_minimum(const char *req);
bool str_version_satisfies(const char *have, const char *req);

#endif

/* strutil.h: parsing numbers strictly and suggesting the closest known word. */
#ifndef BD_STRUTIL_H
#define BD_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whole-string integer parse: no trailing junk, no overflow.  0 or -EINVAL/-ERANGE. */
int parse_long(const char *s, long *ret);
int parse_double(const char *s, double *ret);
/* Edit distance (Damerau: transpositions count as one edit). */
int edit_distance(const char *a, const char *b);
/* The candidate closest to word, or NULL when none is close enough to be a
 * plausible typo.  candidates is NULL-terminated. */
const char *closest_word(const char *word, const char *const *candidates);
bool str_has_suffix(const char *s, const char *suffix);
bool str_has_prefix(const char *s, const char *prefix);
/* Copies src into dst[n], cut to fit, always terminated. */
void str_copy(char *dst, size_t n, const char *src);
#define STR_COPY(dst, src) str_copy((dst), sizeof(dst), (src))

/* The value of a hexadecimal digit, -1 for any other character. */
int hex_digit(char c);

#endif

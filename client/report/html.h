/* html.h: a self-contained HTML page written into a struct bd_buf, for
 * reports that must read offline and print: inline CSS (with a print rule),
 * no scripts, nothing fetched.  Plots go in as inline <svg> (svg.h).
 *
 *     html_begin(&b, "SSD on 4xC4140");
 *     html_h(&b, 1, "SSD on 4xC4140");
 *     html_table_begin(&b, header, 3);
 *     html_row(&b, cells, 3);             (cells that read as numbers align right)
 *     html_table_end(&b);
 *     svg_line_plot(&b, &plot);
 *     html_end(&b);
 *
 * Every text argument is escaped here (callers pass plain UTF-8, NULL reads
 * as empty); only html_begin/html_end and the svg_* writers add markup.
 */
#ifndef BD_HTML_H
#define BD_HTML_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* Appends s as text that is valid in HTML and XML, in content and in quoted
 * attributes: & < > " ' become entities; bytes that start no valid UTF-8
 * character and control characters other than tab, newline and carriage
 * return (C0, DEL, C1, and the non-characters U+FFFE/U+FFFF, which XML
 * forbids) become U+FFFD.  Returns how many were replaced. */
size_t html_escape(struct bd_buf *out, const char *s);

/* The doctype, head (charset, viewport, title, the style sheet) and <body>. */
void html_begin(struct bd_buf *out, const char *title);
void html_end(struct bd_buf *out);
/* <hN> (level clamped to 1..6) and <p> around escaped text. */
void html_h(struct bd_buf *out, int level, const char *text);
void html_p(struct bd_buf *out, const char *text);

/* A table: header cells, then rows of n cells each (NULL: empty).  A cell
 * that reads as a number ("12.5", "-3e4", "95%", "1.9x", "812 images/s",
 * "NaN") gets class "num": right-aligned, tabular figures. */
void html_table_begin(struct bd_buf *out, const char *const *header, size_t n);
void html_row(struct bd_buf *out, const char *const *cells, size_t n);
void html_table_end(struct bd_buf *out);
bool html_is_numeric(const char *s);

#endif

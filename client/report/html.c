/* html.c: see html.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "strutil.h"

static const char replacement[] = "\xef\xbf\xbd";      /* U+FFFD */

/* the entity for a markup character, NULL for any other */
static const char *entity(char c)
{
        switch (c) {
        case '&':
                return "&amp;";
        case '<':
                return "&lt;";
        case '>':
                return "&gt;";
        case '"':
                return "&quot;";
        case '\'':
                return "&#39;";         /* &apos; is XML only; the number works in both */
        default:
                return NULL;
        }
}

/* what XML 1.0 forbids or what would garble a page: C0 but for tab, newline
 * and carriage return, DEL, C1 (c2 80 to c2 9f) and U+FFFE/U+FFFF */
static bool forbidden(const unsigned char *u, size_t len)
{
        return (len == 1 && ((u[0] < 0x20 && !strchr("\t\n\r", u[0])) || u[0] == 0x7f)) ||
               (len == 2 && u[0] == 0xc2 && u[1] < 0xa0) || (len == 3 && u[0] == 0xef && u[1] == 0xbf && u[2] >= 0xbe);
}

size_t html_escape(struct bd_buf *out, const char *s)
{
        size_t bad = 0;
        if (!s)
                return 0;
        buf_grow(out, strlen(s));
        while (*s) {
                size_t len = str_utf8_char_len(s);
                const char *e = len == 1 ? entity(*s) : NULL;
                if (!len || forbidden((const unsigned char *)s, len)) {
                        buf_puts(out, replacement);
                        bad++;
                } else if (e) {
                        buf_puts(out, e);
                } else {
                        buf_add(out, s, len);
                }
                s += len ? len : 1;
        }
        return bad;
}

/* Tables read well on screen and on paper; numbers line up by their digits;
 * colours (zebra rows, heat maps) survive printing; plots scale down to the
 * page instead of overflowing it. */
static const char style[] =
        "body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif;"
        "max-width:72rem;margin:1rem auto;padding:0 1rem;color:#222;background:#fff;line-height:1.4;"
        "-webkit-print-color-adjust:exact;print-color-adjust:exact}\n"
        "h1,h2,h3{line-height:1.2;margin:1.2em 0 .4em}\n"
        "table{border-collapse:collapse;margin:.6rem 0 1rem;font-size:.9rem}\n"
        "th,td{border:1px solid #bbb;padding:.2rem .5rem;text-align:left;vertical-align:top}\n"
        "th{background:#e9e9e9}\n"
        "tbody tr:nth-child(even){background:#f5f5f5}\n"
        "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
        "svg{display:block;max-width:100%;height:auto;margin:.6rem 0 1rem}\n"
        "@media print{body{max-width:none;margin:0;padding:0;font-size:10pt}"
        "svg,table,tr{break-inside:avoid;page-break-inside:avoid}"
        "h1,h2,h3{break-after:avoid;page-break-after:avoid}"
        "thead{display:table-header-group}}\n";

void html_begin(struct bd_buf *out, const char *title)
{
        buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
        html_escape(out, title);
        buf_puts(out, "</title>\n<style>\n");
        buf_puts(out, style);
        buf_puts(out, "</style>\n</head>\n<body>\n");
}

void html_end(struct bd_buf *out)
{
        buf_puts(out, "</body>\n</html>\n");
}

void html_h(struct bd_buf *out, int level, const char *text)
{
        level = level < 1 ? 1 : level > 6 ? 6 : level;
        buf_printf(out, "<h%d>", level);
        html_escape(out, text);
        buf_printf(out, "</h%d>\n", level);
}

void html_p(struct bd_buf *out, const char *text)
{
        buf_puts(out, "<p>");
        html_escape(out, text);
        buf_puts(out, "</p>\n");
}

/* A number at the start, then nothing or a unit: "12", "95%", "1.9x",
 * "812 images/s", "3.1 ± 0.2".  Dates ("2024-05-01"), versions ("1.2.3")
 * and names ("4xC4140") are text. */
bool html_is_numeric(const char *s)
{
        if (!s || !*s || strchr(" \t\n\r\f\v", *s))
                return false;
        char *end;
        (void)strtod(s, &end);
        if (end == s)
                return false;
        if (*end == '%' || *end == 'x')
                end++;
        else if (str_has_prefix(end, "\xc3\x97"))    /* × */
                end += 2;
        return !*end || *end == ' ' || str_has_prefix(end, "\xc2\xb1") /* ± */;
}

void html_table_begin(struct bd_buf *out, const char *const *header, size_t n)
{
        buf_puts(out, "<table>\n<thead><tr>");
        for (size_t i = 0; i < n; i++) {
                buf_puts(out, "<th>");
                html_escape(out, header[i]);
                buf_puts(out, "</th>");
        }
        buf_puts(out, "</tr></thead>\n<tbody>\n");
}

void html_row(struct bd_buf *out, const char *const *cells, size_t n)
{
        buf_puts(out, "<tr>");
        for (size_t i = 0; i < n; i++) {
                buf_puts(out, html_is_numeric(cells[i]) ? "<td class=\"num\">" : "<td>");
                html_escape(out, cells[i]);
                buf_puts(out, "</td>");
        }
        buf_puts(out, "</tr>\n");
}

void html_table_end(struct bd_buf *out)
{
        buf_puts(out, "</tbody>\n</table>\n");
}

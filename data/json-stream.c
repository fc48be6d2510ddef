/* json-stream.c: element extents by a byte scanner, element contents by cJSON. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json-stream.h"
#include "strutil.h"
#include "macro.h"

void json_stream_init(struct json_stream *s, const char *text, size_t len, const char *label)
{
        *s = (struct json_stream){ .text = text, .len = len, .line = 1, .label = label };
}

static int col_of(const struct json_stream *s, size_t pos)
{
        /* pos is on line s->line when called right after skip_ws */
        return (int)(pos - s->line_start) + 1;
}

static void skip_ws(struct json_stream *s)
{
        while (s->pos < s->len) {
                char c = s->text[s->pos];
                if (c == '\n') {
                        s->line++;
                        s->line_start = s->pos + 1;
                } else if (c != ' ' && c != '\t' && c != '\r')
                        break;
                s->pos++;
        }
}

static int error_at(struct json_stream *s, struct bd_err *err, const char *what)
{
        if (s->pos >= s->len)
                return bd_err_set(err, -EINVAL, "%s:%ld:%d: malformed JSON: unexpected end of file (%s)",
                                  s->label, s->line, col_of(s, s->pos), what);
        char near[16];
        size_t n = 0;
        for (size_t p = s->pos; p < s->len && s->text[p] != '\n' && n < sizeof(near) - 1; p++)
                near[n++] = (s->text[p] == '\t' || s->text[p] == '\r') ? ' ' : s->text[p];
        near[n] = '\0';
        return bd_err_set(err, -EINVAL, "%s:%ld:%d: malformed JSON near '%s' (%s)", s->label, s->line,
                          col_of(s, s->pos), near, what);
}

static int expect_open(struct json_stream *s, char c, struct bd_err *err)
{
        skip_ws(s);
        if (s->pos >= s->len || s->text[s->pos] != c)
                return error_at(s, err, c == '{' ? "expected an object" : "expected an array");
        s->pos++;
        s->first = true;
        return 0;
}

int json_stream_object_begin(struct json_stream *s, struct bd_err *err)
{
        return expect_open(s, '{', err);
}

int json_stream_array_begin(struct json_stream *s, struct bd_err *err)
{
        return expect_open(s, '[', err);
}

/* Before a member or element: the container's end (returns 0), or a comma
 * unless this is the first one (returns 1). */
static int before_item(struct json_stream *s, char close, struct bd_err *err)
{
        skip_ws(s);
        if (s->pos < s->len && s->text[s->pos] == close) {
                s->pos++;
                s->first = false;
                return 0;
        }
        if (!s->first) {
                if (s->pos >= s->len || s->text[s->pos] != ',')
                        return error_at(s, err, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
                s->pos++;
                skip_ws(s);
        }
        s->first = false;
        return 1;
}

int json_stream_next_key(struct json_stream *s, char *key, size_t keysz, struct bd_err *err)
{
        int r = before_item(s, '}', err);
        if (r <= 0)
                return r;
        if (s->pos >= s->len || s->text[s->pos] != '"')
                return error_at(s, err, "expected a member name");
        size_t start = ++s->pos, n = 0;
        /* checked as JSON has it (the values are cJSON's to check): no
         * control character, only JSON's escapes */
        while (s->pos < s->len && s->text[s->pos] != '"') {
                unsigned char c = (unsigned char)s->text[s->pos];
                if (c == '\n')
                        return error_at(s, err, "newline in a string");
                if (c < 0x20)
                        return error_at(s, err, "control character in a string");
                if (c == '\\') {
                        s->pos++;
                        if (s->pos >= s->len || !strchr("\"\\/bfnrtu", s->text[s->pos]) || !s->text[s->pos])
                                return error_at(s, err, "bad escape in a string");
                        if (s->text[s->pos] == 'u')
                                for (int k = 1; k <= 4; k++)
                                        if (s->pos + k >= s->len || str_hex_digit(s->text[s->pos + k]) < 0)
                                                return error_at(s, err, "bad escape in a string");
                }
                s->pos++;
        }
        if (s->pos >= s->len)
                return error_at(s, err, "unterminated string");
        /* member names of interest have no escapes; copy raw */
        n = s->pos - start;
        if (keysz) {
                size_t m = n < keysz - 1 ? n : keysz - 1;
                memcpy(key, s->text + start, m);
                key[m] = '\0';
        }
        s->pos++;
        skip_ws(s);
        if (s->pos >= s->len || s->text[s->pos] != ':')
                return error_at(s, err, "expected ':'");
        s->pos++;
        return 1;
}

/* The extent of the value starting at s->pos: scalars up to the next
 * delimiter, containers up to their matching bracket.  Advances s->pos and
 * the line count past it. */
static int value_extent(struct json_stream *s, size_t *ret_start, size_t *ret_len, struct bd_err *err)
{
        skip_ws(s);
        size_t start = s->pos;
        const char *t = s->text;
        size_t p = start, end = s->len;
        if (p >= end)
                return error_at(s, err, "expected a value");
        long lines = 0;
        size_t last_nl = s->line_start;
        if (t[p] == '{' || t[p] == '[') {
                size_t depth = 0;
                for (; p < end; p++) {
                        char c = t[p];
                        if (c == '"') {
                                for (p++; p < end && t[p] != '"'; p++)
                                        if (t[p] == '\\')
                                                p++;
                                        else if (t[p] == '\n') {
                                                lines++;
                                                last_nl = p + 1;
                                        }
                        } else if (c == '{' || c == '[')
                                depth++;
                        else if (c == '}' || c == ']') {
                                if (--depth == 0) {
                                        p++;
                                        break;
                                }
                        } else if (c == '\n') {
                                lines++;
                                last_nl = p + 1;
                        }
                }
                if (depth != 0 || p > end) {
                        s->pos = end;
                        s->line += lines;
                        s->line_start = last_nl;
                        return error_at(s, err, "unterminated object or array");
                }
        } else if (t[p] == '"') {
                for (p++; p < end && t[p] != '"'; p++)
                        if (t[p] == '\\')
                                p++;
                if (p >= end) {
                        s->pos = end;
                        return error_at(s, err, "unterminated string");
                }
                p++;
        } else {
                while (p < end && !strchr(",]} \t\r\n", t[p]))
                        p++;
        }
        s->pos = p;
        s->line += lines;
        s->line_start = last_nl;
        *ret_start = start;
        *ret_len = p - start;
        return 0;
}

/* Parses text[start, start+len) with cJSON; errors located in the file. */
static int parse_span(struct json_stream *s, size_t start, size_t len, long line, size_t line_start,
                      cJSON **ret, struct bd_err *err)
{
        const char *end = NULL;
        cJSON *v = cJSON_ParseWithLengthOpts(s->text + start, len, &end, false);
        if (v && end == s->text + start + len) {
                *ret = v;
                return 0;
        }
        cJSON_Delete(v);
        /* locate the error: cJSON points at (or near) the offending byte */
        size_t off = end ? (size_t)(end - s->text) : start;
        if (off > start + len)
                off = start + len;
        for (size_t p = start; p < off; p++)
                if (s->text[p] == '\n') {
                        line++;
                        line_start = p + 1;
                }
        char near[16];
        size_t n = 0;
        for (size_t p = off; p < start + len && s->text[p] != '\n' && n < sizeof(near) - 1; p++)
                near[n++] = (s->text[p] == '\t' || s->text[p] == '\r') ? ' ' : s->text[p];
        near[n] = '\0';
        return bd_err_set(err, -EINVAL, "%s:%ld:%d: malformed JSON near '%s'", s->label, line,
                          (int)(off - line_start) + 1, near);
}

int json_stream_next_item(struct json_stream *s, cJSON **ret, long *ret_line, struct bd_err *err)
{
        int r = before_item(s, ']', err);
        if (r <= 0)
                return r;
        long line = s->line;
        size_t line_start = s->line_start, start, len;
        r = value_extent(s, &start, &len, err);
        if (r < 0)
                return r;
        r = parse_span(s, start, len, line, line_start, ret, err);
        if (r < 0)
                return r;
        if (ret_line)
                *ret_line = line;
        return 1;
}

int json_stream_skip_value(struct json_stream *s, struct bd_err *err)
{
        skip_ws(s);
        long line = s->line;
        size_t line_start = s->line_start, start, len;
        int r = value_extent(s, &start, &len, err);
        if (r < 0)
                return r;
        cJSON *v = NULL;
        r = parse_span(s, start, len, line, line_start, &v, err);
        cJSON_Delete(v);
        return r;
}

int json_stream_end(struct json_stream *s, struct bd_err *err)
{
        skip_ws(s);
        if (s->pos < s->len)
                return error_at(s, err, "unexpected data after the end");
        return 0;
}

size_t json_stream_consumed(struct json_stream *s)
{
        size_t n = s->pos - s->done_mark;
        s->done_mark = s->pos;
        return n;
}

int json_map_file(const char *path, struct json_map *m, struct bd_err *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return bd_err_set(err, -errno, "cannot open '%s': %s", path, strerror(errno));
        struct stat st;
        if (fstat(fd, &st) < 0)
                return bd_err_set(err, -errno, "cannot stat '%s': %s", path, strerror(errno));
        if (!S_ISREG(st.st_mode))
                return bd_err_set(err, -EINVAL, "'%s' is not a regular file", path);
        if (st.st_size == 0)
                return bd_err_set(err, -EINVAL, "'%s' is empty", path);
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED)
                return bd_err_set(err, -errno, "cannot map '%s': %s", path, strerror(errno));
        m->p = p;
        m->size = (size_t)st.st_size;
        return 0;
}

void json_unmap(struct json_map *m)
{
        if (m->p && m->size)
                munmap(m->p, m->size);
        m->p = NULL;
}

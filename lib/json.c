/* json.c: comment stripping, located parse errors, merging. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "fs.h"
#include "json.h"

#define JSON_FILE_MAX (16u << 20)

int json_strip_comments(char *t)
{
        bool in_str = false;
        for (char *p = t; *p; p++) {
                if (in_str) {
                        if (*p == '\\' && p[1])
                                p++;
                        else if (*p == '"')
                                in_str = false;
                        continue;
                }
                if (*p == '"') {
                        in_str = true;
                } else if (p[0] == '/' && p[1] == '/') {
                        while (*p && *p != '\n')
                                *p++ = ' ';
                        if (!*p)
                                break;
                } else if (p[0] == '/' && p[1] == '*') {
                        *p++ = ' ';
                        *p++ = ' ';
                        while (*p && !(p[0] == '*' && p[1] == '/')) {
                                if (*p != '\n')
                                        *p = ' ';
                                p++;
                        }
                        if (!*p)
                                return -EINVAL;
                        p[0] = ' ';
                        p[1] = ' ';
                        p++;
                }
        }
        return 0;
}

static void offset_to_line(const char *text, size_t off, int *line, int *col)
{
        *line = 1;
        *col = 1;
        for (size_t i = 0; i < off && text[i]; i++) {
                if (text[i] == '\n') {
                        (*line)++;
                        *col = 1;
                } else
                        (*col)++;
        }
}

int json_parse(const char *text, const char *label, cJSON **ret, struct bd_err *err)
{
        const char *end = NULL;
        cJSON *root = cJSON_ParseWithOpts(text, &end, true);
        if (!root) {
                size_t off = end ? (size_t)(end - text) : 0;
                int line, col;
                offset_to_line(text, off, &line, &col);
                if (!end || !*end)
                        return bd_err_set(err, -EINVAL, "%s:%d:%d: malformed JSON: unexpected end of file",
                                          label, line, col);
                char near[16];
                size_t n = 0;
                for (const char *p = end; *p && *p != '\n' && n < sizeof(near) - 1; p++)
                        near[n++] = (*p == '\t' || *p == '\r') ? ' ' : *p;
                near[n] = '\0';
                return bd_err_set(err, -EINVAL, "%s:%d:%d: malformed JSON near '%s'", label, line, col, near);
        }
        *ret = root;
        return 0;
}

int json_load_file(const char *path, cJSON **ret, char **ret_text, struct bd_err *err)
{
        _cleanup_free_ char *text = NULL;
        int r = read_file(path, JSON_FILE_MAX, &text, NULL, err);
        if (r < 0)
                return r;
        if (json_strip_comments(text) < 0)
                return bd_err_set(err, -EINVAL, "%s: unterminated /* comment", path);
        r = json_parse(text, path, ret, err);
        if (r < 0)
                return r;
        if (ret_text)
                *ret_text = TAKE_PTR(text);
        return 0;
}

int json_key_line(const char *text, const char *dotted)
{
        const char *pos = text;
        _cleanup_free_ char *copy = xstrdup(dotted);
        char *save = NULL;
        for (char *k = strtok_r(copy, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
                _cleanup_free_ char *needle = xasprintf("\"%s\"", k);
                const char *hit = strstr(pos, needle);
                if (!hit)
                        return 0;
                pos = hit + 1;
        }
        int line, col;
        offset_to_line(text, (size_t)(pos - 1 - text), &line, &col);
        return line;
}

void json_merge(cJSON *dst, const cJSON *src)
{
        for (const cJSON *s = src->child; s; s = s->next) {
                cJSON *d = cJSON_GetObjectItemCaseSensitive(dst, s->string);
                if (cJSON_IsNull(s)) {
                        cJSON_DeleteItemFromObjectCaseSensitive(dst, s->string);
                } else if (d && cJSON_IsObject(d) && cJSON_IsObject(s)) {
                        json_merge(d, s);
                } else {
                        cJSON *copy = cJSON_Duplicate(s, true);
                        if (d)
                                cJSON_ReplaceItemInObjectCaseSensitive(dst, s->string, copy);
                        else
                                cJSON_AddItemToObject(dst, s->string, copy);
                }
        }
}

void json_quote(struct bd_buf *out, const char *s)
{
        buf_putc(out, '"');
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                switch (*p) {
                case '"': buf_puts(out, "\\\""); break;
                case '\\': buf_puts(out, "\\\\"); break;
                case '\n': buf_puts(out, "\\n"); break;
                case '\r': buf_puts(out, "\\r"); break;
                case '\t': buf_puts(out, "\\t"); break;
                default:
                        if (*p < 0x20)
                                buf_printf(out, "\\u%04x", *p);
                        else
                                buf_putc(out, (char)*p);
                }
        }
        buf_putc(out, '"');
}

void json_number(struct bd_buf *out, double v)
{
        if (!isfinite(v))
                buf_puts(out, "null");
        else if (v == floor(v) && fabs(v) < 1e15)
                buf_printf(out, "%.0f", v);
        else {
                char tmp[64];
                /* shortest representation that reads back to the same double */
                for (int prec = 6; prec <= 17; prec++) {
                        snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
                        if (strtod(tmp, NULL) == v)
                                break;
                }
                buf_puts(out, tmp);
        }
}

const char *json_type_name(const cJSON *v)
{
        if (!v || cJSON_IsNull(v)) return "null";
        if (cJSON_IsBool(v)) return "a boolean";
        if (cJSON_IsNumber(v)) return "a number";
        if (cJSON_IsString(v)) return "a string";
        if (cJSON_IsArray(v)) return "a list";
        if (cJSON_IsObject(v)) return "an object";
        return "unknown";
}

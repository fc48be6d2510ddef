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

/* 1-based line and column of a byte offset; columns count characters (UTF-8
 * continuation bytes do not start one), a tab counts as one. */
static void offset_to_line(const char *text, size_t off, int *line, int *col)
{
        *line = 1;
        *col = 1;
        for (size_t i = 0; i < off && text[i]; i++) {
                if (text[i] == '\n') {
                        (*line)++;
                        *col = 1;
                } else if (((unsigned char)text[i] & 0xc0) != 0x80)
                        (*col)++;
        }
}

#define JSON_DEPTH_MAX 1024 /* above cJSON's nesting limit (1000) */

/* cJSON places the error of a string it cannot parse one byte past where the
 * string starts: past the opening quote of an unterminated string, past the
 * character found where an object key should start ("{ bad" at 'a', "{"a": 1,}"
 * past the '}').  Returns the offset of the offending token's first character:
 * off - 1 in those two cases (found by scanning the text before it), off
 * otherwise. */
static size_t error_token_start(const char *text, size_t off)
{
        if (off == 0)
                return off;
        size_t q = off - 1;
        bool in_str = false, is_object[JSON_DEPTH_MAX];
        size_t depth = 0;
        char last = 0; /* the last character before q outside strings and whitespace */
        for (size_t i = 0; i < q; i++) {
                char c = text[i];
                if (in_str) {
                        if (c == '\\') {
                                if (++i == q)
                                        return off; /* q is escaped: inside a string */
                        } else if (c == '"')
                                in_str = false;
                        continue;
                }
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
                        continue;
                if (c == '"') {
                        in_str = true;
                } else if (c == '{' || c == '[') {
                        if (depth == JSON_DEPTH_MAX)
                                return off;
                        is_object[depth++] = c == '{';
                } else if ((c == '}' || c == ']') && depth > 0) {
                        depth--;
                }
                last = c;
        }
        char c = text[q];
        if (in_str || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0')
                return off;
        if (c == '"')
                return q; /* an opening quote: the string failed */
        bool key_expected = depth > 0 && is_object[depth - 1] && (last == ',' || (last == '{' && c != '}'));
        return key_expected ? q : off;
}

int json_parse(const char *text, const char *label, cJSON **ret, struct bd_err *err)
{
        const char *end = NULL;
        cJSON *root = cJSON_ParseWithOpts(text, &end, true);
        if (!root) {
                size_t off = end ? error_token_start(text, (size_t)(end - text)) : 0;
                int line, col;
                offset_to_line(text, off, &line, &col);
                end = text + off;
                if (!*end)
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
        int r = fs_read_file(path, JSON_FILE_MAX, &text, NULL, err);
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

/* Removes the null members of an object, recursively. */
static void strip_nulls(cJSON *o)
{
        cJSON *e = o->child;
        while (e) {
                cJSON *next = e->next;
                if (cJSON_IsNull(e))
                        cJSON_Delete(cJSON_DetachItemViaPointer(o, e));
                else if (cJSON_IsObject(e))
                        strip_nulls(e);
                e = next;
        }
}

static void merge(cJSON *dst, const cJSON *src, bool keep_nulls)
{
        for (const cJSON *s = src->child; s; s = s->next) {
                cJSON *d = cJSON_GetObjectItemCaseSensitive(dst, s->string);
                if (cJSON_IsNull(s) && !keep_nulls) {
                        cJSON_DeleteItemFromObjectCaseSensitive(dst, s->string);
                } else if (d && cJSON_IsObject(d) && cJSON_IsObject(s)) {
                        merge(d, s, keep_nulls);
                } else {
                        cJSON *copy = cJSON_Duplicate(s, true);
                        if (!keep_nulls && cJSON_IsObject(copy))
                                strip_nulls(copy); /* nothing there for them to remove */
                        if (d)
                                cJSON_ReplaceItemInObjectCaseSensitive(dst, s->string, copy);
                        else
                                cJSON_AddItemToObject(dst, s->string, copy);
                }
        }
}

void json_merge(cJSON *dst, const cJSON *src)
{
        merge(dst, src, false);
}

void json_overlay(cJSON *dst, const cJSON *src)
{
        merge(dst, src, true);
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

const cJSON *json_get(const cJSON *root, const char *dotted)
{
        const char *p = dotted;
        const cJSON *v = root;
        while (v && *p) {
                const char *dot = strchr(p, '.');
                size_t n = dot ? (size_t)(dot - p) : strlen(p);
                char key[128];
                if (n >= sizeof(key))
                        return NULL;
                memcpy(key, p, n);
                key[n] = '\0';
                v = cJSON_GetObjectItemCaseSensitive(v, key);
                p = dot ? dot + 1 : p + n;
        }
        return v;
}

const char *json_str(const cJSON *root, const char *dotted, const char *fallback)
{
        const cJSON *v = json_get(root, dotted);
        return cJSON_IsString(v) ? v->valuestring : fallback;
}

long json_int(const cJSON *root, const char *dotted, long fallback)
{
        const cJSON *v = json_get(root, dotted);
        return cJSON_IsNumber(v) ? (long)v->valuedouble : fallback;
}

double json_num(const cJSON *root, const char *dotted, double fallback)
{
        const cJSON *v = json_get(root, dotted);
        return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

bool json_bool(const cJSON *root, const char *dotted, bool fallback)
{
        const cJSON *v = json_get(root, dotted);
        return cJSON_IsBool(v) ? cJSON_IsTrue(v) : fallback;
}

void json_fill(cJSON *dst, const cJSON *defaults)
{
        const cJSON *d;
        cJSON_ArrayForEach(d, defaults) {
                cJSON *have = cJSON_GetObjectItemCaseSensitive(dst, d->string);
                if (!have)
                        cJSON_AddItemToObject(dst, d->string, cJSON_Duplicate(d, true));
                else if (cJSON_IsObject(have) && cJSON_IsObject(d))
                        json_fill(have, d);
        }
}

void json_add_number(cJSON *o, const char *key, double v)
{
        if (isfinite(v))
                cJSON_AddNumberToObject(o, key, v);
        else
                cJSON_AddNullToObject(o, key);
}

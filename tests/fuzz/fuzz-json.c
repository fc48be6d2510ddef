/* fuzz-json.c: JSON with comments (lib/json.h).
 *
 * The input is a configuration file's text.  Promises checked:
 *   - json_strip_comments() only blanks bytes: same length, newlines kept,
 *     everything else unchanged or a space; an unclosed block comment is
 *     -EINVAL;
 *   - json_parse() gives an error naming "fuzz:LINE:COLUMN" inside the text,
 *     or a value, never both;
 *   - a value prints and parses back to an equal value (member by member,
 *     numbers to 1e-15 as cJSON prints them), unless a number overflowed to
 *     an infinity (cJSON prints null);
 *   - json_overlay() into an empty object copies an object without
 *     duplicate keys exactly; json_merge() leaves no null member in any
 *     object it made; json_fill() from the value adds back what is missing;
 *   - json_get() and json_key_line() find the keys the value has, on a line
 *     of the text.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "json.h"

static int count_lines(const char *s)
{
        int n = 1;
        for (; *s; s++)
                n += *s == '\n';
        return n;
}

static bool has_duplicate_keys(const cJSON *v)
{
        for (const cJSON *a = v->child; a; a = a->next) {
                if (cJSON_IsObject(v))
                        for (const cJSON *b = a->next; b; b = b->next)
                                if (streq(a->string, b->string))
                                        return true;
                if (has_duplicate_keys(a))
                        return true;
        }
        return false;
}

/* No object reachable through objects holds a null member. */
static bool no_null_members(const cJSON *o)
{
        for (const cJSON *e = o->child; e; e = e->next)
                if (cJSON_IsNull(e) || (cJSON_IsObject(e) && !no_null_members(e)))
                        return false;
        return true;
}

static void check_strip(const char *orig, const char *text, int r)
{
        FUZZ_CHECK(r == 0 || r == -EINVAL, "json_strip_comments returned %d", r);
        FUZZ_CHECK(strlen(text) == strlen(orig), "stripping changed the length");
        for (size_t i = 0; orig[i]; i++) {
                if (orig[i] == '\n')
                        FUZZ_CHECK(text[i] == '\n', "a newline at %zu was removed", i);
                else
                        FUZZ_CHECK(text[i] == orig[i] || text[i] == ' ', "byte %zu became '%c'", i, text[i]);
        }
}

static void check_error(const struct bd_err *err, const char *text)
{
        int line = 0, col = 0;
        FUZZ_CHECK(strncmp(err->msg, "fuzz:", 5) == 0, "error without the label: '%s'", err->msg);
        FUZZ_CHECK(sscanf(err->msg, "fuzz:%d:%d:", &line, &col) == 2, "error without line and column: '%s'",
                   err->msg);
        FUZZ_CHECK(line >= 1 && line <= count_lines(text) && col >= 1, "error at %d:%d outside the text", line,
                   col);
}

/* Equal values, members in order and names compared too (cJSON_Compare
 * looks members up by name: a repeated key finds the first).  Numbers to
 * 1e-15: cJSON prints 15 digits when they read back within DBL_EPSILON. */
static bool json_equal(const cJSON *a, const cJSON *b)
{
        if ((a->type & 0xff) != (b->type & 0xff) || !streq(a->string ? a->string : "", b->string ? b->string : ""))
                return false;
        if (cJSON_IsNumber(a))
                return a->valuedouble == b->valuedouble ||
                       fabs(a->valuedouble - b->valuedouble) <= 1e-15 * fabs(a->valuedouble);
        if (cJSON_IsString(a))
                return streq(a->valuestring, b->valuestring);
        const cJSON *x = a->child, *y = b->child;
        for (; x && y; x = x->next, y = y->next)
                if (!json_equal(x, y))
                        return false;
        return !x && !y;
}

/* Numbers past the range of a double parse as infinities, which cJSON prints as null. */
static bool all_finite(const cJSON *v)
{
        if (cJSON_IsNumber(v) && !isfinite(v->valuedouble))
                return false;
        for (const cJSON *e = v->child; e; e = e->next)
                if (!all_finite(e))
                        return false;
        return true;
}

/* Printed and parsed again, the value is the same. */
static void check_round_trip(const cJSON *root)
{
        if (!all_finite(root))
                return;
        _cleanup_free_ char *printed = cJSON_PrintUnformatted(root);
        _cleanup_json_ cJSON *again = NULL;
        struct bd_err err = { "" };
        FUZZ_CHECK(printed, "a parsed value does not print");
        int r = json_parse(printed, "printed", &again, &err);
        FUZZ_CHECK(r == 0 && again, "printed JSON does not parse: %s", err.msg);
        FUZZ_CHECK(json_equal(root, again), "printed and parsed again, the value changed: %s", printed);
}

static void check_merges(const cJSON *root)
{
        if (!cJSON_IsObject(root))
                return;
        _cleanup_json_ cJSON *over = cJSON_CreateObject();
        json_overlay(over, root);
        if (!has_duplicate_keys(root))
                FUZZ_CHECK(json_equal(over, root), "json_overlay into {} is not a copy");
        _cleanup_json_ cJSON *merged = cJSON_CreateObject();
        json_merge(merged, root);
        FUZZ_CHECK(no_null_members(merged), "json_merge left a null member");
        /* what a null removed comes back from the defaults */
        _cleanup_json_ cJSON *filled = cJSON_Duplicate(merged, true);
        json_fill(filled, root);
        for (const cJSON *e = root->child; e; e = e->next)
                FUZZ_CHECK(cJSON_GetObjectItemCaseSensitive(filled, e->string), "json_fill lost key '%s'",
                           e->string);
}

/* Every top-level key (that names no path of its own) is found by json_get
 * and on a line of the text by json_key_line. */
static void check_lookup(const cJSON *root, const char *text)
{
        if (!cJSON_IsObject(root) || has_duplicate_keys(root))
                return;
        int lines = count_lines(text);
        for (const cJSON *e = root->child; e; e = e->next) {
                if (!*e->string || strchr(e->string, '.') || strchr(e->string, '"') || strchr(e->string, '\\') ||
                    strlen(e->string) >= 128)
                        continue;
                FUZZ_CHECK(json_get(root, e->string) == e, "json_get('%s') is not the member", e->string);
                int line = json_key_line(text, e->string);
                FUZZ_CHECK(line >= 0 && line <= lines, "json_key_line('%s') = %d, the text has %d lines",
                           e->string, line, lines);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *orig = fuzz_str(data, size);
        _cleanup_free_ char *text = xstrdup(orig);
        int r = json_strip_comments(text);
        check_strip(orig, text, r);
        if (r < 0)
                return 0;

        cJSON *root = NULL;
        struct bd_err err = { "" };
        r = json_parse(text, "fuzz", &root, &err);
        if (r < 0) {
                FUZZ_CHECK(r == -EINVAL, "json_parse returned %d", r);
                FUZZ_CHECK(!root, "json_parse failed and gave a value");
                check_error(&err, text);
                return 0;
        }
        FUZZ_CHECK(r == 0 && root, "json_parse returned %d without a value", r);
        check_round_trip(root);
        check_merges(root);
        check_lookup(root, text);
        cJSON_Delete(root);
        return 0;
}

/* json.h: JSON files with comments, on top of cJSON.
 *
 * Configuration files may hold // and / * * / comments; they are replaced by
 * spaces (newlines kept) before parsing so that line numbers in errors still
 * point into the original file.
 */
#ifndef BD_JSON_H
#define BD_JSON_H

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

/* Replaces comments in text (in place) with spaces, keeping newlines.
 * Returns -EINVAL when a block comment is not closed. */
int json_strip_comments(char *text);
/* Parses text (comments already stripped); errors name "label:line:column". */
int json_parse(const char *text, const char *label, cJSON **ret, struct bd_err *err);
/* Reads, strips and parses a file.  *ret_text (optional) receives the stripped
 * text, for json_key_line(). */
int json_load_file(const char *path, cJSON **ret, char **ret_text, struct bd_err *err);
/* Best-effort line (1-based) of a dotted key path ("slurm.partition") in a
 * stripped JSON text, 0 when not found. */
int json_key_line(const char *text, const char *dotted);
/* Merges src into dst key by key: objects recursively, src winning; a null
 * value in src removes the key.  src is not modified. */
void json_merge(cJSON *dst, const cJSON *src);
/* The same, but a null in src replaces dst's value and stays, to remove the
 * key from whatever the result is merged into later (a child system's null
 * reaches the built-in values through its parents). */
void json_overlay(cJSON *dst, const cJSON *src);
/* Adds every key of defaults that dst lacks (a copy), objects recursively:
 * what a null in a merged file removed comes back from defaults. */
void json_fill(cJSON *dst, const cJSON *defaults);
/* Typed access by dotted path ("slurm.partition") to any JSON, with the
 * caller's fallback where the key is absent or of another type.  A system's
 * resolved configuration has sys_*() (system.h) instead, whose keys come with
 * their built-in values. */
const cJSON *json_get(const cJSON *root, const char *dotted);
const char *json_str(const cJSON *root, const char *dotted, const char *fallback);
long json_int(const cJSON *root, const char *dotted, long fallback);
double json_num(const cJSON *root, const char *dotted, double fallback);
bool json_bool(const cJSON *root, const char *dotted, bool fallback);
/* Adds KEY: v to an object, or KEY: null where v is not a finite number
 * (JSON has no NaN). */
void json_add_number(cJSON *o, const char *key, double v);
/* Appends v as a JSON string literal. */
void json_quote(struct bd_buf *out, const char *s);
/* Number formatting that keeps integers integral ("56", "0.0032"). */
void json_number(struct bd_buf *out, double v);
const char *json_type_name(const cJSON *v);

DEFINE_CLEANUP(cJSON *, cJSON_Delete)
#define _cleanup_json_ _cleanup_(cJSON_Deletep)

#endif

/* json-stream.h: walking a large JSON document one array element at a time.
 *
 * A COCO annotation file is one object whose "images", "annotations" and
 * "categories" arrays hold hundreds of thousands of small objects (448 MB for
 * train2017).  Parsing it whole with cJSON costs several gigabytes; instead
 * the scanner finds each element's extent (strings and nesting respected) and
 * hands the element alone to cJSON, so memory stays proportional to one
 * element.  Structure outside the elements is checked by the scanner, the
 * elements themselves by cJSON; both report "LABEL:LINE:COLUMN: ...".
 *
 *     struct json_stream s;
 *     json_stream_init(&s, text, len, "instances.json");
 *     r = json_stream_object_begin(&s, err);
 *     while ((r = json_stream_next_key(&s, key, sizeof(key), err)) > 0) {
 *             if (streq(key, "images")) {
 *                     r = json_stream_array_begin(&s, err);
 *                     while ((r = json_stream_next_item(&s, &item, err)) > 0) ... cJSON_Delete(item)
 *             } else
 *                     r = json_stream_skip_value(&s, err);
 *     }
 *     r = json_stream_end(&s, err);
 *
 * Functions return 1 (an item), 0 (end of the object/array) or a negative
 * errno with err filled in.  The text need not be NUL-terminated.
 */
#ifndef BD_DATA_JSON_STREAM_H
#define BD_DATA_JSON_STREAM_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct json_stream {
        const char *text;
        size_t len;
        size_t pos;             /* next byte to read */
        long line;              /* line of text[pos], 1-based */
        size_t line_start;      /* offset of the first byte of that line */
        const char *label;      /* file name for messages */
        bool first;             /* no member/element read yet in the current container */
        size_t done_mark;       /* for json_stream_consumed() */
};

void json_stream_init(struct json_stream *s, const char *text, size_t len, const char *label);
/* Expects '{' (or '[' for the array variant) as the next token. */
int json_stream_object_begin(struct json_stream *s, struct bd_err *err);
int json_stream_array_begin(struct json_stream *s, struct bd_err *err);
/* Reads the next member name of the current object into key (cut to keysz)
 * and the ':' after it; returns 0 after the closing '}'. */
int json_stream_next_key(struct json_stream *s, char *key, size_t keysz, struct bd_err *err);
/* Parses the next element of the current array with cJSON; *ret_line is its
 * first line.  Returns 0 after the closing ']'. */
int json_stream_next_item(struct json_stream *s, cJSON **ret, long *ret_line, struct bd_err *err);
/* Parses (and so validates) the next value and throws it away. */
int json_stream_skip_value(struct json_stream *s, struct bd_err *err);
/* Only whitespace may follow the top-level value. */
int json_stream_end(struct json_stream *s, struct bd_err *err);
/* Bytes consumed since the last call (for releasing pages of a mapping). */
size_t json_stream_consumed(struct json_stream *s);

/* A JSON file mapped read-only: not a regular file, or an empty one, is an
 * error naming it. */
struct json_map {
        void *p;
        size_t size;
};
int json_map_file(const char *path, struct json_map *m, struct bd_err *err);
void json_unmap(struct json_map *m);

#endif

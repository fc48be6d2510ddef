/* fuzz-coco-json.c: COCO annotation files through the streaming parser into
 * the binary index (data/json-stream.h, data/coco-index.h).
 *
 * The input is an instances JSON file.  Promises checked:
 *   - coco_index_build() gives an error, or an index file; an index it
 *     built loads (coco_index_load()), and walks as fuzz-coco.h checks, with
 *     every label naming its category;
 *   - what it accepted is JSON (cJSON parses the whole input), and the index
 *     holds what the JSON lists: as many images and categories, and every
 *     annotation either kept or counted as an orphan.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "fuzz-coco.h"
#include "json.h"

static int list_size(const cJSON *root, const char *key)
{
        return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, key));
}

/* Whether a key is given more than once (the stream reads each, cJSON finds the first). */
static bool repeated(const cJSON *root, const char *key)
{
        int n = 0;
        for (const cJSON *e = root->child; e; e = e->next)
                n += streq(e->string, key);
        return n > 1;
}

static void check_counts(const struct coco_index *x, const uint8_t *data, size_t size)
{
        _cleanup_json_ cJSON *root = cJSON_ParseWithLength((const char *)data, size);
        FUZZ_CHECK(cJSON_IsObject(root), "coco_index_build accepted what cJSON does not parse as an object");
        if (repeated(root, "images") || repeated(root, "annotations") || repeated(root, "categories"))
                return;
        FUZZ_CHECK(x->n_images == (size_t)list_size(root, "images"), "%zu images indexed, the JSON lists %d",
                   x->n_images, list_size(root, "images"));
        FUZZ_CHECK(x->n_cats == (size_t)list_size(root, "categories"), "%zu categories indexed, the JSON lists %d",
                   x->n_cats, list_size(root, "categories"));
        FUZZ_CHECK(x->n_anns + x->header->orphan_anns == (size_t)list_size(root, "annotations"),
                   "%zu annotations and %llu orphans indexed, the JSON lists %d", x->n_anns,
                   (unsigned long long)x->header->orphan_anns, list_size(root, "annotations"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char *json, *index;
        struct bd_err err = { "" };
        _cleanup_(coco_index_freep) struct coco_index *x = NULL;
        if (!json) {
                json = fuzz_path("instances.json");
                index = fuzz_path("instances.bdidx");
        }
        fuzz_write(json, data, size);
        unlink(index);
        int r = coco_index_build(json, index, &err);
        if (r < 0) {
                FUZZ_CHECK(err.msg[0] && access(index, F_OK) < 0, "coco_index_build failed (%d) and left an index", r);
                return 0;
        }
        FUZZ_CHECK(r == 0, "coco_index_build returned %d", r);
        r = coco_index_load(index, &x, &err);
        FUZZ_CHECK(r == 0 && x, "an index just built does not load: %s", err.msg);
        FUZZ_CHECK(x->header->json_size == size, "the index says the JSON has %llu bytes, not %zu",
                   (unsigned long long)x->header->json_size, size);
        fuzz_coco_walk(x, true);
        check_counts(x, data, size);
        return 0;
}

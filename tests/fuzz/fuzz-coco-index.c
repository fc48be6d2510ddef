/* fuzz-coco-index.c: the binary COCO index loader (data/coco-index.h).
 *
 * The input is an index file (the seeds were built from small instances
 * files).  Every rank maps a cached index without rebuilding it, so a
 * damaged or planted one must be refused, never read out of bounds.
 * Promises checked: coco_index_load() gives an error, or an index that walks
 * as fuzz-coco.h checks (every count and offset inside the file).
 */
#include "config.h"

#include <errno.h>

#include "fuzz-coco.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char *path;
        struct bd_err err = { "" };
        _cleanup_(coco_index_freep) struct coco_index *x = NULL;
        if (!path)
                path = fuzz_path("instances.bdidx");
        fuzz_write(path, data, size);
        int r = coco_index_load(path, &x, &err);
        if (r < 0) {
                FUZZ_CHECK(!x && err.msg[0], "coco_index_load failed (%d) and gave an index", r);
                FUZZ_CHECK(r == -EBADMSG || r == -EPROTO || r == -EINVAL, "coco_index_load returned %d: %s", r,
                           err.msg);
                return 0;
        }
        FUZZ_CHECK(r == 0 && x, "coco_index_load returned %d without an index", r);
        fuzz_coco_walk(x, false);
        return 0;
}

/* fuzz-weights.c: pretrained weight files (trainer/core/checkpoint.h).
 *
 * The input is a weights file for fuzz-model.h's model, loaded as it is and
 * with its trailer made right (CRC and end marker), each time three ways:
 * leniently, strictly and completely, and under the prefix "bn1." (a
 * backbone's way).  Promises checked:
 *   - bd_weights_load() gives a one-line error and leaves the model
 *     untouched, or loads (all or nothing);
 *   - a complete load loaded at least every parameter;
 *   - what it loaded, saved and loaded strictly and completely into
 *     another model, gives the same parameters, bit for bit.
 * FUZZ_MODEL_SEEDS=DIR: the seeds are written there first.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-model.h"

static struct fuzz_model a, b;          /* a loads the input, b what a saved */
static char *path, *saved;

static void write_seeds(const char *dir)
{
        struct bd_err err = { "" };
        _cleanup_free_ char *all = xasprintf("%s/all.bdw", dir);
        _cleanup_free_ char *bn = xasprintf("%s/bn1-prefix.bdw", dir);
        FUZZ_CHECK(bd_weights_save(all, &a.m, NULL, "fuzz seed", &err) == 0 &&
                   bd_weights_save(bn, &a.m, "bn1.", "fuzz seed, bn1. only", &err) == 0, "seeds: %s", err.msg);
}

static void setup(void)
{
        if (path)
                return;
        fuzz_model_init(&a, 1);
        fuzz_model_init(&b, 2);
        path = fuzz_path("input.bdw");
        saved = fuzz_path("saved.bdw");
        const char *seeds = getenv("FUZZ_MODEL_SEEDS");
        if (seeds && *seeds)
                write_seeds(seeds);
}

static void load(const char *prefix, unsigned flags)
{
        static const char *const ignore[] = { "fc.", NULL };
        struct bd_weights_report rep = { 0 };
        struct bd_err err = { "" };
        fuzz_model_reset(&a);
        int r = bd_weights_load(path, &a.m, prefix, ignore, flags, &rep, &err);
        if (r < 0) {
                _cleanup_free_ void *p = fuzz_model_params(&a);
                FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n'), "bd_weights_load failed (%d): '%s'", r, err.msg);
                FUZZ_CHECK(!memcmp(p, a.params0, a.bytes), "weights that did not load changed the model");
                return;
        }
        FUZZ_CHECK(r == 0 && rep.loaded >= 0 && rep.skipped >= 0, "bd_weights_load returned %d", r);
        if ((flags & BD_WEIGHTS_COMPLETE) && !prefix)
                FUZZ_CHECK(rep.loaded >= a.m.np, "a complete load loaded %d tensors of %d", rep.loaded, a.m.np);
        _cleanup_free_ void *pa = fuzz_model_params(&a);
        FUZZ_CHECK(bd_weights_save(saved, &a.m, NULL, rep.source, &err) == 0, "loaded weights do not save: %s",
                   err.msg);
        fuzz_model_reset(&b);
        FUZZ_CHECK(bd_weights_load(saved, &b.m, NULL, NULL, BD_WEIGHTS_STRICT | BD_WEIGHTS_COMPLETE, &rep, &err) == 0,
                   "saved weights do not load: %s", err.msg);
        _cleanup_free_ void *pb = fuzz_model_params(&b);
        FUZZ_CHECK(!memcmp(pa, pb, a.bytes), "saved and loaded again, the parameters changed");
}

static void load_all_ways(const uint8_t *data, size_t size)
{
        fuzz_write(path, data, size);
        load(NULL, 0);
        load(NULL, BD_WEIGHTS_STRICT | BD_WEIGHTS_COMPLETE);
        load("bn1.", BD_WEIGHTS_STRICT | BD_WEIGHTS_COMPLETE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        setup();
        load_all_ways(data, size);
        _cleanup_free_ uint8_t *fixed = fuzz_fix_trailer(data, size, "BDWTEND");
        load_all_ways(fixed, size);
        unlink(path);
        unlink(saved);
        return 0;
}

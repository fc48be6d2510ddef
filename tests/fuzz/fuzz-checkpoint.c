/* fuzz-checkpoint.c: training checkpoints (trainer/core/checkpoint.h).
 *
 * The input is a checkpoint of fuzz-model.h's model, loaded as it is and
 * with its trailer made right (CRC and end marker), so that the fuzzer gets
 * past the checksum.  Promises checked:
 *   - bd_ckpt_load() gives a one-line error and leaves the model and the
 *     optimiser untouched, or loads;
 *   - what it loaded, saved and loaded into another model, gives the same
 *     parameters, momentum, optimiser state and metadata, bit for bit;
 *   - a checkpoint that loads with its momentum loads without it too, to
 *     the same parameters.
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
        struct bd_ckpt_meta meta = { .model = FUZZ_MODEL_NAME, .iter = 1234, .epoch = 5, .rng = { { 1, 2, 3, 4 } } };
        struct bd_err err = { "" };
        _cleanup_free_ char *with = xasprintf("%s/with-momentum.ckpt", dir);
        _cleanup_free_ char *without = xasprintf("%s/parameters-only.ckpt", dir);
        _cleanup_free_ void *mom = xmalloc(a.m.n_train * sizeof(float) + 1);
        for (size_t i = 0; i < a.m.n_train; i++)
                ((float *)mom)[i] = (float)i / 8;
        FUZZ_CHECK(a.m.be->ops->copy(a.m.be, a.sgd.mom, a.m.be->dev, mom, BD_CPU, a.m.n_train * sizeof(float)) == 0,
                   "momentum");
        a.sgd.iter = 1234;
        a.sgd.good_steps = 17;
        FUZZ_CHECK(bd_ckpt_save(with, &a.m, &a.sgd, &meta, &err) == 0 &&
                   bd_ckpt_save(without, &a.m, NULL, &meta, &err) == 0, "seeds: %s", err.msg);
        fuzz_model_reset(&a);
}

static void setup(void)
{
        if (path)
                return;
        fuzz_model_init(&a, 1);
        fuzz_model_init(&b, 2);
        path = fuzz_path("input.ckpt");
        saved = fuzz_path("saved.ckpt");
        const char *seeds = getenv("FUZZ_MODEL_SEEDS");
        if (seeds && *seeds)
                write_seeds(seeds);
}

static void check_untouched(struct fuzz_model *f, const char *what)
{
        _cleanup_free_ void *p = fuzz_model_params(f);
        _cleanup_free_ float *mom = fuzz_model_momentum(f);
        FUZZ_CHECK(!memcmp(p, f->params0, f->bytes), "%s: the parameters changed", what);
        for (size_t i = 0; i < f->m.n_train; i++)
                FUZZ_CHECK(mom[i] == 0, "%s: the momentum changed", what);
        FUZZ_CHECK(f->sgd.iter == 0 && f->sgd.good_steps == 0, "%s: the optimiser state changed", what);
}

static void load(const uint8_t *data, size_t size)
{
        struct bd_ckpt_meta meta = { .model = "" }, meta2 = { .model = "" };
        struct bd_err err = { "" };
        fuzz_model_reset(&a);
        fuzz_write(path, data, size);
        int r = bd_ckpt_load(path, &a.m, &a.sgd, &meta, &err);
        if (r < 0) {
                FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n'), "bd_ckpt_load failed (%d): '%s'", r, err.msg);
                check_untouched(&a, "a checkpoint that did not load");
                return;
        }
        _cleanup_free_ void *pa = fuzz_model_params(&a);
        _cleanup_free_ void *ma = fuzz_model_momentum(&a);
        FUZZ_CHECK(bd_ckpt_save(saved, &a.m, &a.sgd, &meta, &err) == 0, "a loaded checkpoint does not save: %s",
                   err.msg);
        fuzz_model_reset(&b);
        FUZZ_CHECK(bd_ckpt_load(saved, &b.m, &b.sgd, &meta2, &err) == 0, "a saved checkpoint does not load: %s",
                   err.msg);
        _cleanup_free_ void *pb = fuzz_model_params(&b);
        _cleanup_free_ void *mb = fuzz_model_momentum(&b);
        FUZZ_CHECK(!memcmp(pa, pb, a.bytes), "saved and loaded again, the parameters changed");
        FUZZ_CHECK(!memcmp(ma, mb, a.m.n_train * sizeof(float)), "saved and loaded again, the momentum changed");
        FUZZ_CHECK(a.sgd.iter == b.sgd.iter && a.sgd.good_steps == b.sgd.good_steps &&
                   !memcmp(&a.sgd.loss_scale, &b.sgd.loss_scale, sizeof(double)),
                   "saved and loaded again, the optimiser state changed");
        FUZZ_CHECK(streq(meta.model, meta2.model) && meta.iter == meta2.iter && meta.epoch == meta2.epoch &&
                   !memcmp(&meta.rng, &meta2.rng, sizeof(meta.rng)), "saved and loaded again, the metadata changed");

        /* the parameters alone */
        fuzz_model_reset(&a);
        FUZZ_CHECK(bd_ckpt_load(path, &a.m, NULL, &meta2, &err) == 0, "loads with momentum, not without: %s",
                   err.msg);
        _cleanup_free_ void *pn = fuzz_model_params(&a);
        FUZZ_CHECK(!memcmp(pa, pn, a.bytes), "loaded without momentum, the parameters differ");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        setup();
        load(data, size);
        _cleanup_free_ uint8_t *fixed = fuzz_fix_trailer(data, size, "BDCKEND");
        load(fixed, size);
        unlink(path);
        unlink(saved);
        return 0;
}

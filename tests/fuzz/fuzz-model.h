/* fuzz-model.h: a small model on the CPU backend for the checkpoint and
 * weights harnesses, with a parameter of every kind: trained with and
 * without weight decay, frozen, a buffer; 1 to 4 dimensions.  The seeds of
 * corpus/checkpoint and corpus/weights are its files, written by the
 * harnesses themselves when FUZZ_MODEL_SEEDS names a directory
 * (tests/fuzz/README.md).
 */
#ifndef BD_FUZZ_MODEL_H
#define BD_FUZZ_MODEL_H

#include <string.h>

#include "backend.h"
#include "checkpoint.h"
#include "fuzz.h"
#include "model.h"
#include "optim.h"

#define FUZZ_MODEL_NAME "fuzznet"

struct fuzz_model {
        struct bd_model m;
        struct bd_sgd sgd;
        void *params0;                  /* the values after initialisation, host */
        size_t bytes;
};

static inline struct bd_backend *fuzz_backend(void)
{
        static struct bd_backend *be;
        struct bd_err err = { "" };
        if (!be)
                FUZZ_CHECK(bd_backend_cpu_new(1, &be, &err) == 0, "no CPU backend: %s", err.msg);
        return be;
}

static inline void fuzz_model_init(struct fuzz_model *f, uint64_t seed)
{
        static const int64_t conv[4] = { 4, 3, 3, 3 }, c4[1] = { 4 }, fc[2] = { 2, 4 }, frozen[3] = { 2, 2, 2 };
        const struct bd_param_init kaiming = { BD_INIT_KAIMING_UNIFORM, 27, 36, 0 };
        const struct bd_param_init one = { BD_INIT_ONE, 0, 0, 0 }, zero = { BD_INIT_ZERO, 0, 0, 0 };
        const struct bd_sgd_cfg cfg = { .lr = 0.1, .momentum = 0.9, .loss_scaling = 1 };
        struct bd_err err = { "" };
        memset(f, 0, sizeof(*f));
        bd_model_init(&f->m, fuzz_backend(), BD_F32);
        bd_model_add(&f->m, "conv1.weight", 4, conv, 0, &kaiming);
        bd_model_add(&f->m, "bn1.weight", 1, c4, BD_P_NO_DECAY, &one);
        bd_model_add(&f->m, "bn1.bias", 1, c4, BD_P_NO_DECAY, &zero);
        bd_model_add(&f->m, "bn1.running_mean", 1, c4, BD_P_BUFFER, &zero);
        bd_model_add(&f->m, "layer1.0.frozen", 3, frozen, BD_P_FROZEN, &kaiming);
        bd_model_add(&f->m, "fc.weight", 2, fc, 0, &kaiming);
        FUZZ_CHECK(bd_model_finalize(&f->m, &err) == 0 && bd_model_init_params(&f->m, seed, &err) == 0 &&
                   bd_sgd_init(&f->sgd, &f->m, &cfg, &err) == 0, "the model: %s", err.msg);
        f->bytes = f->m.n_all * bd_dtype_size(f->m.dtype);
        f->params0 = xmalloc(f->bytes);
        FUZZ_CHECK(bd_model_get_params(&f->m, f->params0) == 0, "the model's parameters do not read");
}

/* The parameters (host copy, caller frees). */
static inline void *fuzz_model_params(struct fuzz_model *f)
{
        void *p = xmalloc(f->bytes);
        FUZZ_CHECK(bd_model_get_params(&f->m, p) == 0, "the model's parameters do not read");
        return p;
}

/* The momentum buffer (host copy, caller frees). */
static inline void *fuzz_model_momentum(struct fuzz_model *f)
{
        size_t n = f->m.n_train * bd_dtype_size(f->m.dtype);
        struct bd_backend *be = f->m.be;
        void *p = xmalloc(n + 1);
        FUZZ_CHECK(be->ops->copy(be, p, BD_CPU, f->sgd.mom, be->dev, n) == 0 && be->ops->sync(be) == 0,
                   "the momentum does not read");
        return p;
}

/* Back to the values after initialisation, momentum zero. */
static inline void fuzz_model_reset(struct fuzz_model *f)
{
        size_t n = f->m.n_train * bd_dtype_size(f->m.dtype);
        _cleanup_free_ void *zeros = xcalloc(1, n + 1);
        struct bd_backend *be = f->m.be;
        FUZZ_CHECK(bd_model_set_params(&f->m, f->params0) == 0 &&
                   be->ops->copy(be, f->sgd.mom, be->dev, zeros, BD_CPU, n) == 0 && be->ops->sync(be) == 0,
                   "the model does not reset");
        f->sgd.iter = 0;
        f->sgd.loss_scale = 65536;
        f->sgd.good_steps = 0;
}

/* The input with its trailer made right: the CRC-32 of what precedes it and
 * the end marker, so that the fuzzer gets past the checksum. */
static inline uint8_t *fuzz_fix_trailer(const uint8_t *data, size_t size, const char *end_magic)
{
        uint8_t *p = xmalloc(size + 1);
        memcpy(p, data, size);
        if (size >= 16) {
                uint32_t crc = bd_crc32(0, p, size - 16);
                memcpy(p + size - 16, &crc, 4);
                memset(p + size - 12, 0, 4);
                memset(p + size - 8, 0, 8);
                memcpy(p + size - 8, end_magic, strlen(end_magic));
        }
        return p;
}

#endif

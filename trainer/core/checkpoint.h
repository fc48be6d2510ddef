/* checkpoint.h: training checkpoints and pretrained weight files.
 *
 * Checkpoint (format version 1, little-endian), everything a resumed run
 * needs to continue as if never stopped:
 *
 *   header   "BDTRCKPT", u32 version, u32 element type (0 f32, 1 f64),
 *            char model[64], i64 iteration, i64 epoch, u64 rng[4],
 *            f64 loss scale, i64 good steps, u32 tensors, u32 has momentum,
 *            u64 values, u64 trained values                     (168 bytes)
 *   table    per tensor: char name[96], u32 flags, u32 ndim, i64 dims[4],
 *            u64 offset                                         (144 bytes)
 *   data     all parameter values (the model's buffer), then the momentum
 *            of the trained ones
 *   trailer  u32 CRC-32 of everything before, u32 0, "BDCKEND\0"
 *
 * Written to a temporary file in the same directory, fsync'ed and renamed,
 * so a run killed while saving leaves the previous checkpoint intact.  Loading
 * reads and checks the whole file (magic, version, model name, every tensor's
 * name and shape against the model, size, CRC) before changing anything: a
 * bad file is a one-line error and the model is untouched.
 *
 * Pretrained weights (format version 1), written by
 * trainer/tools/convert-torchvision.py from a PyTorch state dict:
 *
 *   header   "BDWEIGHT", u32 version, u32 tensors, char source[64]
 *   tensors  u16 name length, name (UTF-8, no NUL), u8 type (0 = f32),
 *            u8 ndim, i64 dims[ndim], values (f32)
 *   trailer  u32 CRC-32 of everything before, u32 0, "BDWTEND\0"
 *
 * Names are the PyTorch names; loading matches them after a prefix
 * ("backbone.") and checks shapes.
 */
#ifndef BD_CHECKPOINT_H
#define BD_CHECKPOINT_H

#include <stdint.h>

#include "crc32.h"
#include "model.h"
#include "optim.h"
#include "rng.h"

#define BD_CKPT_VERSION 1
#define BD_WEIGHTS_VERSION 1

struct bd_ckpt_meta {
        char model[64];                 /* what the parameters belong to: "resnet34" */
        int64_t iter, epoch;
        struct bd_rng rng;
};

int bd_ckpt_save(const char *path, struct bd_model *m, const struct bd_sgd *o, const struct bd_ckpt_meta *meta,
                 struct bd_err *err);
/* meta->model must name the expected model; the rest is filled in.  o may be
 * NULL (parameters only). */
int bd_ckpt_load(const char *path, struct bd_model *m, struct bd_sgd *o, struct bd_ckpt_meta *meta,
                 struct bd_err *err);

enum bd_weights_flags {
        /* every tensor of the file must be in the model, except those whose
         * names start with one of the ignore prefixes ("fc." for a backbone) */
        BD_WEIGHTS_STRICT = 1 << 0,
        /* every model parameter under the prefix must be in the file (a
         * backbone loads completely or not at all) */
        BD_WEIGHTS_COMPLETE = 1 << 1,
};

struct bd_weights_report {
        int loaded;                     /* tensors copied into the model */
        int skipped;                    /* tensors of the file the model does not have */
        char source[64];
};

/* Loads the tensors of a weights file whose prefix + name is a model
 * parameter; shapes must match.  All or nothing. */
int bd_weights_load(const char *path, struct bd_model *m, const char *prefix, const char *const *ignore,
                    unsigned flags, struct bd_weights_report *rep, struct bd_err *err);
/* Writes the model's parameters whose names start with prefix (without it). */
int bd_weights_save(const char *path, struct bd_model *m, const char *prefix, const char *source,
                    struct bd_err *err);

#endif

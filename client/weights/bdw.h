/* bdw.h: benchd's weights files, and what a weights file holds.
 *
 * The format (version 1, trainer/core/checkpoint.h), little-endian:
 *   header   "BDWEIGHT", u32 version, u32 tensors, char source[64]
 *   tensors  u16 name length, name (UTF-8, no NUL), u8 type (0 = f32),
 *            u8 ndim, i64 dims[ndim], values (f32)
 *   trailer  u32 CRC-32 of everything before, u32 0, "BDWTEND\0"
 *
 * bdw_write() writes the file trainer/tools/convert-torchvision.py writes
 * from the same state dict, byte for byte: each floating-point tensor in
 * the dict's order, converted to float32 and laid out row-major; integer
 * ones left out; --strip's prefix taken off the names that start with it;
 * the source cut to 63 bytes.  The file is written next to its place,
 * fsync'ed and renamed (a target that is no regular file, /dev/null, is
 * written where it is), values streamed: memory does not grow with it.
 *
 * bdw_describe() says what a state dict or weights file (ptload.h) holds:
 * its tensors and parameters, the torchvision ResNet its names and shapes
 * make (BasicBlock or Bottleneck, blocks per stage, width, classes; every
 * tensor of it checked), and the benchd trainers whose --pretrained takes
 * it (their backbones, trainer/ssd/ssd-train.c and
 * trainer/maskrcnn/mrcnn-train.c).
 */
#ifndef BD_BDW_H
#define BD_BDW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "ptload.h"

#define BDW_MAGIC "BDWEIGHT"
#define BDW_VERSION 1
#define BDW_NAME_MAX 255        /* bytes of a tensor's name (the trainers' limit) */

/* Reads a weights file held in memory into f (f->format set by the
 * caller): pt_load() calls it for files that start with BDW_MAGIC.
 * Errors name the tensor or byte offset, without the file. */
int bdw_parse(const unsigned char *data, size_t size, struct pt_file *f, struct bd_err *err);

/* Writes f's floating-point tensors to path; strip: a prefix taken off the
 * names that start with it (NULL or "": none); *ret_count (optional): the
 * tensors written.  Errors name path, or the tensor whose name is too long. */
int bdw_write(const char *path, const struct pt_file *f, const char *strip, const char *source, size_t *ret_count,
              struct bd_err *err);

struct bdw_trainer {
        const char *program;            /* "benchd-ssd" */
        const char *workloads[3];       /* the workloads it runs: "ssd" */
        const char *prefix;             /* where its backbone's names start in its model: "backbone." */
        const char *unused[3];          /* the prefixes of the file's tensors it leaves out: "layer4.", "fc." */
        const char *backbones[4];       /* its --backbone values, the default first */
};

struct bdw_desc {
        size_t dtypes[_PK_DT_MAX];      /* tensors of each storage type */
        size_t floats;                  /* floating-point tensors: those converted */
        int64_t values;                 /* their elements */
        int64_t parameters;             /* the same less batch norm's running statistics */
        /* the ResNet the names and shapes make */
        bool resnet;                    /* a stem and four stages of blocks were found */
        char arch[16];                  /* "resnet34"; "" for other block counts */
        char prefix[64];                /* before each of its names ("module."), "" for none */
        bool bottleneck;
        int blocks[4];
        int64_t width;                  /* conv1's channels (64) */
        int64_t classes;                /* fc's outputs, 0 without fc */
        size_t extra;                   /* tensors that are no part of it */
        char problem[512];              /* where it is not the ResNet its blocks say: a tensor missing, a shape;
                                         * "" when every tensor is there as torchvision makes it */
        const struct bdw_trainer *trainers[4];  /* the trainers that take it as it is */
        size_t ntrainers;
};

void bdw_describe(const struct pt_file *f, struct bdw_desc *ret);
/* "(64, 3, 7, 7)", "()" for a scalar */
void bdw_shape(char *buf, size_t n, int ndim, const int64_t *dims);

#endif

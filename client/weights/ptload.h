/* ptload.h: the tensors of a PyTorch state dict file, without Python or
 * torch.
 *
 * The files torch.save(state_dict) writes:
 *   zip (torch >= 1.6): ARCHIVE/data.pkl, the pickle (pickle.h);
 *       ARCHIVE/data/KEY, each storage's bytes; ARCHIVE/byteorder
 *       ("little", where there) and ARCHIVE/version (zipread.h);
 *   legacy (torch < 1.6, or _use_new_zipfile_serialization=False): five
 *       pickles one after the other (the magic number 0x1950a86a20f9469cfc6c,
 *       the protocol version 1001, the system's description, the object, the
 *       list of storage keys), then each storage in that list's order: its
 *       element count (u64) and its bytes;
 * and benchd's weights files (bdw.h), so that one call reads either.
 *
 * The state dict is the file's object, or its "state_dict" entry and then
 * its "model" entry where those are dicts (as
 * trainer/tools/convert-torchvision.py takes it).  Every tensor of it comes
 * out in the dict's order (a name set twice keeps its first place and its
 * last value, as a Python dict does), integer ones too
 * (num_batches_tracked); entries that are no tensor are counted.
 *
 * Checked before anything is returned: each storage's bytes are in the
 * file (in a zip, against their CRC-32), each tensor's elements (storage
 * offset, sizes, strides) within its storage, a storage has one type.  A
 * state dict has at most PT_MAX_TENSORS entries (a file PT_MAX_TENSORS
 * tensors), of at most PK_MAX_DIMS dimensions.  An
 * expanded tensor (more elements than its storage: strides of 0) may add
 * PT_MAX_EXPANDED elements in all, and a file's tensors PT_MAX_ELEMENTS: a
 * file of a few bytes cannot become terabytes of float32.  Errors name the
 * file (the label), the entry or byte offset, and the tensor; they are one
 * printable line.
 */
#ifndef BD_PTLOAD_H
#define BD_PTLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "pickle.h"

#define PT_MAX_TENSORS (1 << 20)
#define PT_MAX_EXPANDED ((int64_t)1 << 26)
#define PT_MAX_ELEMENTS ((int64_t)1 << 36)

enum pt_format {
        PT_FORMAT_ZIP,
        PT_FORMAT_LEGACY,
        PT_FORMAT_BDW,
};

struct pt_tensor {
        char *name;
        enum pk_dtype dtype;            /* its storage's */
        int ndim;
        int64_t dims[PK_MAX_DIMS];
        int64_t strides[PK_MAX_DIMS];   /* in elements */
        int64_t numel;
        bool contiguous;                /* row-major without gaps (sizes of 1 aside), as torch says */
        const unsigned char *data;      /* its element 0, in the file */
};

struct pt_file {
        enum pt_format format;
        int protocol;                   /* the pickle's protocol (zip, legacy) */
        int version;                    /* zip: ARCHIVE/version (0 where none); bdw: the format's version */
        const char *wrapper;            /* "state_dict" or "model": the entry that held the state dict, or NULL */
        char source[64];                /* bdw: the source its header names */
        struct pt_tensor *t;            /* the state dict's tensors, in its order */
        size_t n;
        size_t others;                  /* its entries that are no tensor */
        /* private */
        void *map;
        size_t map_size;
};

/* Reads the file at path (mapped, not copied: f holds the mapping). */
int pt_load(const char *path, struct pt_file *ret, struct bd_err *err);
/* The same from memory, which must outlive *ret; label names it in errors. */
int pt_load_mem(const void *data, size_t size, const char *label, struct pt_file *ret, struct bd_err *err);
void pt_file_release(struct pt_file *f);

/* "zip", "legacy", "bdw" */
const char *pt_format_name(enum pt_format f);

/* Elements [start, start + count) of a floating-point tensor in row-major
 * order (by its strides), converted as torch's .to(torch.float32) does, as
 * little-endian float32 at out (4 * count bytes, any alignment). */
void pt_tensor_f32(const struct pt_tensor *t, int64_t start, int64_t count, void *out);

/* IEEE half and bfloat16 to float (a NaN stays NaN, quieted) */
float pt_half_to_float(uint16_t h);
float pt_bf16_to_float(uint16_t h);

#endif

/* pickle.h: the part of Python's pickle that torch.save(state_dict) writes,
 * read without Python and without running anything.
 *
 * The opcodes of protocol 2 that state dicts use (and the few of protocol 4
 * a later torch may write: FRAME, STACK_GLOBAL, MEMOIZE, SHORT_BINUNICODE);
 * globals only from a fixed list: collections.OrderedDict, torch._utils'
 * _rebuild_tensor_v2, _rebuild_tensor (torch < 0.4) and _rebuild_parameter,
 * and the typed storages (torch.FloatStorage, torch.cuda.HalfStorage...),
 * which appear only inside persistent ids.  Any other opcode or global is
 * an error that names it and its byte offset; calling a global builds its
 * value here (an OrderedDict, a tensor), it never runs code.
 *
 * Persistent ids are torch's storage references:
 *     ('storage', STORAGE_TYPE, KEY, LOCATION, NUMEL[, VIEW])
 * VIEW (legacy files only) is None or (VIEW_KEY, OFFSET, SIZE) in elements.
 * A tensor holds its storage (type, key, element count) and its storage
 * offset, sizes and strides as the file gives them; whether they fit the
 * storage's data is the container's business (ptload.c), which has the data.
 *
 * Values live in a struct pk_arena that owns them all and frees them
 * together: the memo shares values between places, lists and dicts may
 * hold themselves, and nothing here walks values recursively.
 *
 * Limits, for files that are damaged or made to harm: PK_MAX_MARKS open
 * marks, PK_MAX_STACK values on the stack, memo indices below PK_MAX_MEMO,
 * PK_MAX_CELLS values and items of lists, tuples and dicts per arena (a
 * copy of a list costs its length: a few bytes cannot make gigabytes),
 * PK_MAX_DIMS tensor dimensions; every length is checked against the bytes
 * left.
 */
#ifndef BD_PICKLE_H
#define BD_PICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define PK_MAX_MARKS 256
#define PK_MAX_STACK (1 << 20)
#define PK_MAX_MEMO (1 << 20)
#define PK_MAX_CELLS (1 << 22)
#define PK_MAX_DIMS 8            /* as the trainers' weights files */

/* the element types of torch's typed storages */
enum pk_dtype {
        PK_DT_F32,
        PK_DT_F64,
        PK_DT_F16,
        PK_DT_BF16,
        PK_DT_I64,
        PK_DT_I32,
        PK_DT_I16,
        PK_DT_I8,
        PK_DT_U8,
        PK_DT_BOOL,
        _PK_DT_MAX,
};

enum pk_kind {
        PK_NONE,
        PK_BOOL,
        PK_INT,         /* fits 64 bits */
        PK_BIGINT,      /* LONG1 beyond 64 bits: u.str holds its little-endian two's complement bytes */
        PK_FLOAT,
        PK_STR,         /* BINUNICODE, BINSTRING...: valid UTF-8, no NUL byte */
        PK_TUPLE,
        PK_LIST,
        PK_DICT,        /* dict and OrderedDict: keys and values alternate in u.seq, in insertion order;
                         * a key set twice is there twice (the later value wins: pk_dict_get) */
        PK_GLOBAL,
        PK_STORAGE,     /* a persistent id */
        PK_TENSOR,
};

enum pk_global {
        PKG_ORDERED_DICT,
        PKG_REBUILD_TENSOR_V2,
        PKG_REBUILD_TENSOR,
        PKG_REBUILD_PARAMETER,
        PKG_STORAGE,    /* a typed storage class: u.global.dtype */
};

struct pk_value;

struct pk_storage {
        enum pk_dtype dtype;
        const char *key;        /* the root storage's key (its data: ARCHIVE/data/KEY, or the legacy list) */
        int64_t numel;          /* the root storage's elements */
        int64_t view_offset;    /* a legacy view: its first element in the root, its elements; */
        int64_t view_numel;     /* otherwise 0 and numel */
};

struct pk_tensor {
        struct pk_storage storage;
        int64_t offset;         /* in elements, from the view's first */
        int ndim;
        int64_t size[PK_MAX_DIMS];
        int64_t stride[PK_MAX_DIMS];
        bool requires_grad;
        bool parameter;         /* through _rebuild_parameter (an nn.Parameter) */
};

struct pk_value {
        enum pk_kind kind;
        size_t at;              /* byte offset of the opcode that made it */
        union {
                bool b;
                int64_t i;
                double f;
                struct {
                        char *s;        /* NUL-terminated */
                        size_t len;
                } str;
                struct {
                        struct pk_value **v;
                        size_t n, cap;
                } seq;
                struct {
                        enum pk_global g;
                        enum pk_dtype dtype;
                } global;
                struct pk_storage storage;
                struct pk_tensor *tensor;
        } u;
};

struct pk_block;
struct pk_arena {
        struct pk_block *blocks;
        size_t cells;
        /* every persistent id read, in order: the storages a file must hold */
        const struct pk_storage **storages;
        size_t nstorages;
};
#define PK_ARENA_INIT { NULL, 0, NULL, 0 }

/* Frees every value of the arena. */
void pk_arena_release(struct pk_arena *a);

/* Runs the pickle that starts at data[start] up to its STOP: *ret is the
 * value it returns (the arena's), *ret_end the offset after STOP.  Errors
 * (-EBADMSG, -E2BIG for a limit) read "byte N: ...", N from the start of
 * data. */
int pk_load(struct pk_arena *a, const unsigned char *data, size_t size, size_t start, struct pk_value **ret,
            size_t *ret_end, int *ret_protocol, struct bd_err *err);

/* The value of a dict's key (the last one set), NULL when it has none. */
struct pk_value *pk_dict_get(const struct pk_value *dict, const char *key);
bool pk_is_str(const struct pk_value *v, const char *s);

/* "float32", "float16", "int64"... (torch's names) */
const char *pk_dtype_name(enum pk_dtype t);
size_t pk_dtype_size(enum pk_dtype t);
bool pk_dtype_is_float(enum pk_dtype t);
/* "NONE", "dict", "tensor"...: what a value is, for messages */
const char *pk_kind_name(enum pk_kind k);

#endif

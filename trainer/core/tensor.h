/* tensor.h: tensors of the trainer core.
 *
 * A tensor is a view of memory on one device with a logical shape, an element
 * type and a physical layout.  Logical shapes of feature maps are always
 * (N, C, H, W); the layout says in which order the elements sit in memory:
 *
 *   BD_NCHW    row-major in logical order (also every tensor that is not 4-D)
 *   BD_NHWC    channels last
 *   BD_NCHW8C  channels in blocks of 8: (N, C/8, H, W, 8), only when C % 8 == 0
 *              (oneDNN's nChw8c, the fastest for convolutions on AVX2)
 *
 * Element-wise operations accept any layout as long as all operands share it;
 * the backend picks the layout of what convolutions produce.
 *
 * A tensor either owns its memory (cap > 0, freed by bd_tensor_release) or is
 * a view (cap == 0) into memory owned elsewhere, such as the model's parameter
 * buffer.  bd_tensor_resize() reuses the memory when it is large enough, so
 * activations are allocated once and reused every step.
 */
#ifndef BD_TENSOR_H
#define BD_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#define BD_MAX_DIMS 6

enum bd_dtype {
        BD_F32,
        BD_F64,         /* CPU only: gradient checks in double precision */
        BD_F16,         /* CUDA only: mixed precision */
        BD_BF16,        /* CUDA only: mixed precision */
        BD_I32,
        _BD_DTYPE_MAX,
};

enum bd_layout {
        BD_NCHW,
        BD_NHWC,
        BD_NCHW8C,
        _BD_LAYOUT_MAX,
};

enum bd_device {
        BD_CPU,
        BD_CUDA,
        BD_PLAN,        /* the plan backend's host memory (ops-plan.c) */
};

struct bd_backend;

struct bd_tensor {
        void *data;
        int ndim;
        int64_t dims[BD_MAX_DIMS];
        enum bd_dtype dtype;
        enum bd_layout layout;
        enum bd_device dev;
        size_t cap;                     /* bytes owned, 0 for a view */
        struct bd_backend *be;          /* allocator of owned memory */
};

size_t bd_dtype_size(enum bd_dtype dt);
const char *bd_dtype_name(enum bd_dtype dt);
const char *bd_layout_name(enum bd_layout l);

int64_t bd_tensor_numel(const struct bd_tensor *t);
static inline size_t bd_tensor_bytes(const struct bd_tensor *t)
{
        return (size_t)bd_tensor_numel(t) * bd_dtype_size(t->dtype);
}
/* "(8, 64, 75, 75) f32 nchw8c" into buf; returns buf. */
const char *bd_tensor_str(const struct bd_tensor *t, char *buf, size_t len);
int bd_tensor_same_shape(const struct bd_tensor *a, const struct bd_tensor *b);

/* The same memory with another shape (same number of elements): *ret is a
 * view.  Only for plain (nchw or not 4-D) tensors: -EINVAL otherwise. */
int bd_tensor_reshape(const struct bd_tensor *t, int ndim, const int64_t *dims, struct bd_tensor *ret);
/* A view of existing memory. */
struct bd_tensor bd_tensor_view(void *data, enum bd_device dev, enum bd_dtype dt, enum bd_layout layout,
                                int ndim, const int64_t *dims);
/* Shape the tensor (ndim, dims) with dtype and layout on the backend's device,
 * reallocating only when the owned memory is too small.  New memory is not
 * cleared.  A view cannot be resized (-EINVAL).  Returns 0 or -ENOMEM. */
int bd_tensor_resize(struct bd_backend *be, struct bd_tensor *t, enum bd_dtype dt, enum bd_layout layout,
                     int ndim, const int64_t *dims);
/* Same as bd_tensor_resize with the shape, dtype and layout of another tensor. */
int bd_tensor_resize_like(struct bd_backend *be, struct bd_tensor *t, const struct bd_tensor *like);
void bd_tensor_release(struct bd_tensor *t);

/* 4-D helpers: logical dims of a feature map. */
#define BD_N(t) ((t)->dims[0])
#define BD_C(t) ((t)->dims[1])
#define BD_H(t) ((t)->dims[2])
#define BD_W(t) ((t)->dims[3])

#endif

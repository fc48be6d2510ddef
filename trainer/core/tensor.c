/* tensor.c: tensor shapes, views and owned memory. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "tensor.h"

size_t bd_dtype_size(enum bd_dtype dt)
{
        switch (dt) {
        case BD_F64: return 8;
        case BD_F16:
        case BD_BF16: return 2;
        default: return 4;
        }
}

const char *bd_dtype_name(enum bd_dtype dt)
{
        static const char *const names[] = { "f32", "f64", "f16", "bf16", "i32" };
        return (unsigned)dt < _BD_DTYPE_MAX ? names[dt] : "?";
}

const char *bd_layout_name(enum bd_layout l)
{
        static const char *const names[] = { "nchw", "nhwc", "nchw8c" };
        return (unsigned)l < _BD_LAYOUT_MAX ? names[l] : "?";
}

int64_t bd_tensor_numel(const struct bd_tensor *t)
{
        int64_t n = 1;
        for (int i = 0; i < t->ndim; i++)
                n *= t->dims[i];
        return n;
}

const char *bd_tensor_str(const struct bd_tensor *t, char *buf, size_t len)
{
        size_t o = 0;
        o += (size_t)snprintf(buf + o, len - o, "(");
        for (int i = 0; i < t->ndim && o < len; i++)
                o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
        if (o < len)
                snprintf(buf + o, len - o, ") %s%s%s", bd_dtype_name(t->dtype), t->ndim == 4 ? " " : "",
                         t->ndim == 4 ? bd_layout_name(t->layout) : "");
        return buf;
}

int bd_tensor_same_shape(const struct bd_tensor *a, const struct bd_tensor *b)
{
        if (a->ndim != b->ndim)
                return 0;
        for (int i = 0; i < a->ndim; i++)
                if (a->dims[i] != b->dims[i])
                        return 0;
        return 1;
}

struct bd_tensor bd_tensor_view(void *data, enum bd_device dev, enum bd_dtype dt, enum bd_layout layout, int ndim,
                                const int64_t *dims)
{
        struct bd_tensor t;
        memset(&t, 0, sizeof(t));
        t.data = data;
        t.dev = dev;
        t.dtype = dt;
        t.layout = ndim == 4 ? layout : BD_NCHW;
        t.ndim = ndim;
        for (int i = 0; i < ndim && i < BD_MAX_DIMS; i++)
                t.dims[i] = dims[i];
        return t;
}

int bd_tensor_reshape(const struct bd_tensor *t, int ndim, const int64_t *dims, struct bd_tensor *ret)
{
        if (ndim < 1 || ndim > BD_MAX_DIMS || (t->ndim == 4 && t->layout != BD_NCHW))
                return -EINVAL;
        int64_t n = 1;
        for (int i = 0; i < ndim; i++) {
                if (dims[i] < 0)
                        return -EINVAL;
                n *= dims[i];
        }
        if (n != bd_tensor_numel(t))
                return -EINVAL;
        *ret = bd_tensor_view(t->data, t->dev, t->dtype, BD_NCHW, ndim, dims);
        return 0;
}

int bd_tensor_resize(struct bd_backend *be, struct bd_tensor *t, enum bd_dtype dt, enum bd_layout layout, int ndim,
                     const int64_t *dims)
{
        if (ndim < 0 || ndim > BD_MAX_DIMS)
                return bd_err_set(&be->err, -EINVAL, "tensor with %d dimensions (at most %d)", ndim, BD_MAX_DIMS);
        int64_t n = 1;
        for (int i = 0; i < ndim; i++) {
                if (dims[i] < 0)
                        return bd_err_set(&be->err, -EINVAL, "tensor dimension %d is negative", i);
                n *= dims[i];
        }
        if (ndim == 4 && layout == BD_NCHW8C && dims[1] % 8)
                return bd_err_set(&be->err, -EINVAL, "nchw8c layout needs channels divisible by 8, got %lld",
                                  (long long)dims[1]);
        size_t bytes = (size_t)n * bd_dtype_size(dt);
        if (t->data && t->cap == 0) {
                /* a view: only allowed when nothing changes size */
                if (bytes > bd_tensor_bytes(t) || t->dev != be->dev)
                        return bd_err_set(&be->err, -EINVAL, "cannot resize a view");
        } else if (!t->data || t->cap < bytes || t->be != be) {
                if (t->data && t->cap)
                        bd_tensor_release(t);
                size_t cap = bytes ? bytes : 64;
                void *p = be->ops->alloc(be, cap);
                if (!p)
                        return bd_err_set(&be->err, -ENOMEM, "out of %s memory allocating %zu bytes",
                                          be->dev == BD_CUDA ? "GPU" : "host", cap);
                t->data = p;
                t->cap = cap;
                t->be = be;
                t->dev = be->dev;
        }
        t->dtype = dt;
        t->ndim = ndim;
        t->layout = ndim == 4 ? layout : BD_NCHW;
        for (int i = 0; i < BD_MAX_DIMS; i++)
                t->dims[i] = i < ndim ? dims[i] : 0;
        return 0;
}

int bd_tensor_resize_like(struct bd_backend *be, struct bd_tensor *t, const struct bd_tensor *like)
{
        return bd_tensor_resize(be, t, like->dtype, like->layout, like->ndim, like->dims);
}

void bd_tensor_release(struct bd_tensor *t)
{
        if (t->data && t->cap && t->be)
                t->be->ops->free(t->be, t->data);
        memset(t, 0, sizeof(*t));
}

/* fuzz-ptload.c: PyTorch state dicts and weights files, read without
 * Python (client/weights/ptload.h: the zip reader, the pickle
 * interpreter, the legacy format, bdw.h's reader and description).
 *
 * The input is read as it is and, where it is a zip archive, with each
 * entry's CRC-32 made right (so that mutations of the pickle inside are
 * read on).  Promises checked:
 *   - pt_load_mem() gives a one-line printable error, or tensors whose
 *     every element lies inside the input, whose element count is the
 *     product of their sizes, and whose contiguous flag matches their
 *     strides; the same input read twice gives the same tensors;
 *   - pt_tensor_f32() of a whole tensor gives what it gives element by
 *     element;
 *   - what bdw_write() writes (for inputs of at most 2^16 float values)
 *     reads back as the same floating-point tensors, names, shapes and
 *     values bit for bit;
 *   - bdw_describe() names a trainer only for a complete ResNet with
 *     nothing else in the file.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "bdw.h"
#include "fuzz.h"
#include "ptload.h"
#include "crc32.h"
#include "zipread.h"

#define MAX_CONVERTED (1 << 16)

static void check_tensor(const struct pt_tensor *t, const uint8_t *data, size_t size)
{
        FUZZ_CHECK(t->name && (unsigned)t->dtype < _PK_DT_MAX && t->ndim >= 0 && t->ndim <= PK_MAX_DIMS,
                   "tensor: name %p, dtype %d, %d dimensions", (void *)t->name, t->dtype, t->ndim);
        int64_t numel = 1, reach = 0, expect = 1;
        bool contiguous = true;
        for (int d = t->ndim - 1; d >= 0; d--) {
                FUZZ_CHECK(t->dims[d] >= 0 && t->strides[d] >= 0, "'%s': size %lld, stride %lld", t->name,
                           (long long)t->dims[d], (long long)t->strides[d]);
                numel *= t->dims[d];
                if (t->dims[d])
                        reach += (t->dims[d] - 1) * t->strides[d];
                if (t->dims[d] != 1 && t->strides[d] != expect)
                        contiguous = false;
                expect *= t->dims[d];
        }
        FUZZ_CHECK(numel == t->numel, "'%s': %lld elements, its sizes make %lld", t->name, (long long)t->numel,
                   (long long)numel);
        FUZZ_CHECK(!numel || contiguous == t->contiguous, "'%s': contiguous %d, its strides say %d", t->name,
                   t->contiguous, contiguous);
        if (!numel)
                return;
        size_t es = pk_dtype_size(t->dtype);
        FUZZ_CHECK(t->data >= data && t->data + (size_t)(reach + 1) * es <= data + size,
                   "'%s': elements at [%td, %td) of an input of %zu bytes", t->name, t->data - data,
                   t->data + (size_t)(reach + 1) * es - data, size);
}

static void check_same(const struct pt_file *a, const struct pt_file *b)
{
        FUZZ_CHECK(a->n == b->n && a->others == b->others && a->format == b->format, "read twice: %zu then %zu",
                   a->n, b->n);
        for (size_t i = 0; i < a->n; i++)
                FUZZ_CHECK(streq(a->t[i].name, b->t[i].name) && a->t[i].numel == b->t[i].numel &&
                           a->t[i].data == b->t[i].data, "read twice: tensor %zu differs", i);
}

/* every float tensor's values, in the dict's order, at out; their count */
static size_t convert(const struct pt_file *f, float *out)
{
        size_t n = 0;
        for (size_t i = 0; i < f->n; i++) {
                const struct pt_tensor *t = &f->t[i];
                if (!pk_dtype_is_float(t->dtype))
                        continue;
                pt_tensor_f32(t, 0, t->numel, out + n);
                for (int64_t k = 0; k < t->numel; k++) {
                        float one;
                        pt_tensor_f32(t, k, 1, &one);
                        FUZZ_CHECK(!memcmp(&one, out + n + k, 4), "'%s': element %lld alone differs", t->name,
                                   (long long)k);
                }
                n += (size_t)t->numel;
        }
        return n;
}

static void round_trip(const struct pt_file *f, const float *values, size_t nvalues)
{
        static char *path;
        if (!path)
                path = fuzz_path("w.bdw");
        struct bd_err err = { "" };
        size_t count = 0;
        int r = bdw_write(path, f, NULL, "fuzz", &count, &err);
        if (r < 0) {
                /* only a name too long for the format */
                FUZZ_CHECK(r == -ENAMETOOLONG && !strchr(err.msg, '\n'), "bdw_write: %s", err.msg);
                return;
        }
        struct pt_file w;
        r = pt_load(path, &w, &err);
        FUZZ_CHECK(r == 0, "what bdw_write wrote does not load: %s", err.msg);
        FUZZ_CHECK(w.n == count && w.format == PT_FORMAT_BDW && streq(w.source, "fuzz"), "read back %zu of %zu",
                   w.n, count);
        _cleanup_free_ float *back = xmalloc((nvalues + 1) * sizeof(float));
        FUZZ_CHECK(convert(&w, back) == nvalues && !memcmp(back, values, nvalues * sizeof(float)),
                   "values read back differ");
        for (size_t i = 0, k = 0; i < f->n; i++) {
                const struct pt_tensor *t = &f->t[i];
                if (!pk_dtype_is_float(t->dtype))
                        continue;
                const struct pt_tensor *u = &w.t[k++];
                FUZZ_CHECK(streq(t->name, u->name) && t->ndim == u->ndim &&
                           !memcmp(t->dims, u->dims, sizeof(t->dims[0]) * (size_t)t->ndim) && u->contiguous,
                           "tensor '%s' read back as '%s'", t->name, u->name);
        }
        pt_file_release(&w);
}

static void check_input(const uint8_t *data, size_t size)
{
        struct pt_file a, b;
        struct bd_err err = { "" };
        int r = pt_load_mem(data, size, "fuzz.pth", &a, &err);
        if (r < 0) {
                FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n') && fuzz_utf8_valid(err.msg),
                           "error (%d) not one printable line: '%s'", r, err.msg);
                FUZZ_CHECK(!strncmp(err.msg, "fuzz.pth: ", 10), "error not naming the file: '%s'", err.msg);
                FUZZ_CHECK(pt_load_mem(data, size, "fuzz.pth", &b, &err) == r, "read twice: another error");
                return;
        }
        int64_t floats = 0;
        for (size_t i = 0; i < a.n; i++) {
                check_tensor(&a.t[i], data, size);
                if (pk_dtype_is_float(a.t[i].dtype))
                        floats += a.t[i].numel;
        }
        FUZZ_CHECK(pt_load_mem(data, size, "fuzz.pth", &b, &err) == 0, "read twice: %s", err.msg);
        check_same(&a, &b);
        pt_file_release(&b);

        struct bdw_desc d;
        bdw_describe(&a, &d);
        FUZZ_CHECK(d.ntrainers <= 2 && (!d.ntrainers || (d.resnet && !d.problem[0] && !d.extra && !d.prefix[0])),
                   "%zu trainers for a file that is no complete ResNet", d.ntrainers);
        FUZZ_CHECK(d.parameters <= d.values && d.values == floats, "values %lld, parameters %lld, floats %lld",
                   (long long)d.values, (long long)d.parameters, (long long)floats);
        if (floats <= MAX_CONVERTED) {
                _cleanup_free_ float *values = xmalloc((size_t)(floats + 1) * sizeof(float));
                size_t n = convert(&a, values);
                FUZZ_CHECK(n == (size_t)floats, "%zu values converted of %lld", n, (long long)floats);
                round_trip(&a, values, n);
        }
        pt_file_release(&a);
}

/* The input with each central directory entry's CRC-32 made right, so
 * that what a mutation changed inside an entry (the pickle) is read on */
static uint8_t *crc_made_right(const uint8_t *data, size_t size)
{
        struct zip_archive z;
        struct bd_err err;
        if (size < 4 || memcmp(data, "PK\x03\x04", 4) != 0 || zip_read(data, size, &z, &err) < 0)
                return NULL;
        uint8_t *copy = xmalloc(size);
        memcpy(copy, data, size);
        for (size_t i = 0; i + 46 <= size; i++) {
                if (memcmp(copy + i, "PK\x01\x02", 4) != 0)
                        continue;
                size_t nl = (size_t)copy[i + 28] | (size_t)copy[i + 29] << 8;
                if (i + 46 + nl > size)
                        continue;
                _cleanup_free_ char *name = xstrndup((const char *)copy + i + 46, nl);
                const struct zip_entry *e = zip_find(&z, name);
                if (!e)
                        continue;
                uint32_t crc = bd_crc32(0, data + e->offset, (size_t)e->size);
                for (int k = 0; k < 4; k++)
                        copy[i + 16 + (size_t)k] = (uint8_t)(crc >> (8 * k));
        }
        zip_release(&z);
        return copy;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        check_input(data, size);
        _cleanup_free_ uint8_t *fixed = crc_made_right(data, size);
        if (fixed)
                check_input(fixed, size);
        return 0;
}

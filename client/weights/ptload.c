/* ptload.c: PyTorch state dict files, zip and legacy (ptload.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bdw.h"
#include "ptload.h"
#include "zipread.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ptload.c reads little-endian storages in place: a big-endian host would need byte swaps"
#endif

const char *pt_format_name(enum pt_format f)
{
        return f == PT_FORMAT_ZIP ? "zip" : f == PT_FORMAT_LEGACY ? "legacy" : "bdw";
}

void pt_file_release(struct pt_file *f)
{
        for (size_t i = 0; i < f->n; i++)
                free(f->t[i].name);
        free(f->t);
        if (f->map)
                munmap(f->map, f->map_size);
        memset(f, 0, sizeof(*f));
}

/* ---- storages ------------------------------------------------------------------------------ */

/* A storage by key: its type and size as the persistent ids give them,
 * its bytes as the file holds them. */
struct store {
        const char *key;
        enum pk_dtype dtype;
        int64_t numel;
        const unsigned char *data;      /* NULL until found */
};

struct load {
        const unsigned char *p;
        size_t size;
        const char *label;
        struct bd_err *err;
        struct pk_arena arena;
        struct store *stores;           /* sorted by key */
        size_t nstores;
};

static int fail(struct load *l, int r, const char *fmt, ...) _printf_(3, 4);
static int fail(struct load *l, int r, const char *fmt, ...)
{
        char msg[900];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        return bd_err_set(l->err, r, "%s: %s", l->label, msg);
}

static int cmp_store(const void *a, const void *b)
{
        return strcmp(((const struct store *)a)->key, ((const struct store *)b)->key);
}

static struct store *find_store(struct load *l, const char *key)
{
        struct store k = { .key = key };
        return l->nstores ? bsearch(&k, l->stores, l->nstores, sizeof(k), cmp_store) : NULL;
}

/* The storages of every persistent id, one per key: a key is one type and
 * one size wherever it appears. */
static int collect_stores(struct load *l)
{
        size_t n = l->arena.nstorages;
        l->stores = xcalloc(n + 1, sizeof(*l->stores));
        for (size_t i = 0; i < n; i++) {
                const struct pk_storage *s = l->arena.storages[i];
                l->stores[i] = (struct store){ .key = s->key, .dtype = s->dtype, .numel = s->numel };
        }
        qsort(l->stores, n, sizeof(*l->stores), cmp_store);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                if (k && streq(l->stores[k - 1].key, l->stores[i].key)) {
                        const struct store *a = &l->stores[k - 1], *b = &l->stores[i];
                        if (a->dtype != b->dtype || a->numel != b->numel)
                                return fail(l, -EBADMSG, "storage '%s' is both %lld %s and %lld %s elements", a->key,
                                            (long long)a->numel, pk_dtype_name(a->dtype), (long long)b->numel,
                                            pk_dtype_name(b->dtype));
                        continue;
                }
                l->stores[k++] = l->stores[i];
        }
        l->nstores = k;
        return 0;
}

/* ---- the zip format -------------------------------------------------------------------------- */

static const struct zip_entry *zip_record(const struct zip_archive *z, const char *archive, const char *name)
{
        _cleanup_free_ char *full = xasprintf("%s/%s", archive, name);
        return zip_find(z, full);
}

static int load_zip(struct load *l, struct pt_file *f, struct pk_value **ret)
{
        struct zip_archive z;
        int r = zip_read(l->p, l->size, &z, l->err);
        if (r < 0)
                return fail(l, r, "%s", l->err->msg);
        /* the archive's one directory: where its data.pkl is */
        _cleanup_free_ char *archive = NULL;
        for (size_t i = 0; i < z.n && r == 0; i++) {
                const char *name = z.e[i].name, *slash = strchr(name, '/');
                if (!slash || slash == name || !streq(slash, "/data.pkl"))
                        continue;
                if (archive)
                        r = fail(l, -EBADMSG, "zip: two pickles, '%s/data.pkl' and '%s'", archive, name);
                else
                        archive = xstrndup(name, (size_t)(slash - name));
        }
        if (r == 0 && !archive)
                r = fail(l, -EBADMSG, "zip: no ARCHIVE/data.pkl entry (not a file of torch.save)");
        const struct zip_entry *e = r == 0 ? zip_record(&z, archive, "byteorder") : NULL;
        if (e && !(e->size == 6 && !memcmp(l->p + e->offset, "little", 6)))
                r = fail(l, -EPROTONOSUPPORT, "zip: '%s': storages of another byte order than little-endian",
                         e->name);
        if (r == 0 && (e = zip_record(&z, archive, "version"))) {
                for (size_t i = 0; i < e->size && i < 9 && l->p[e->offset + i] >= '0' && l->p[e->offset + i] <= '9';
                     i++)
                        f->version = f->version * 10 + (l->p[e->offset + i] - '0');
        }
        if (r == 0) {
                e = zip_record(&z, archive, "data.pkl");
                if ((r = zip_check_crc(l->p, e, l->err)) < 0)
                        r = fail(l, r, "%s", l->err->msg);
        }
        if (r == 0) {
                r = pk_load(&l->arena, l->p + e->offset, (size_t)e->size, 0, ret, NULL, &f->protocol, l->err);
                if (r < 0)
                        r = fail(l, r, "%s: %s", e->name, l->err->msg);
        }
        if (r == 0)
                r = collect_stores(l);
        /* each storage's entry: its bytes, their CRC */
        for (size_t i = 0; i < l->nstores && r == 0; i++) {
                struct store *s = &l->stores[i];
                _cleanup_free_ char *name = xasprintf("data/%s", s->key);
                e = zip_record(&z, archive, name);
                if (!e) {
                        r = fail(l, -EBADMSG, "zip: no entry '%s/%s' for storage '%s'", archive, name, s->key);
                        break;
                }
                if (e->size / pk_dtype_size(s->dtype) < (uint64_t)s->numel)
                        r = fail(l, -EBADMSG, "zip: entry '%s': %llu bytes, storage '%s' is %lld %s elements",
                                 e->name, (unsigned long long)e->size, s->key, (long long)s->numel,
                                 pk_dtype_name(s->dtype));
                else if ((r = zip_check_crc(l->p, e, l->err)) < 0)
                        r = fail(l, r, "%s", l->err->msg);
                s->data = l->p + e->offset;
        }
        zip_release(&z);
        return r;
}

/* ---- the legacy format ------------------------------------------------------------------------ */

static int legacy_pickle(struct load *l, size_t *at, const char *what, struct pk_value **ret)
{
        int r = pk_load(&l->arena, l->p, l->size, *at, ret, at, NULL, l->err);
        if (r < 0)
                return fail(l, r, "legacy format: %s: %s", what, l->err->msg);
        return 0;
}

static int load_legacy(struct load *l, struct pt_file *f, struct pk_value **ret)
{
        /* 0x1950a86a20f9469cfc6c as LONG1 writes it */
        static const unsigned char magic[] = { 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19 };
        struct pk_value *v, *keys;
        size_t at = 0;
        int r = pk_load(&l->arena, l->p, l->size, 0, &v, &at, &f->protocol, l->err);
        if (r < 0 || v->kind != PK_BIGINT || v->u.str.len != sizeof(magic) ||
            memcmp(v->u.str.s, magic, sizeof(magic)) != 0)
                return fail(l, -EBADMSG, "not a torch file: a pickle without torch's magic number first%s%s",
                            r < 0 ? ": " : "", r < 0 ? l->err->msg : "");
        if ((r = legacy_pickle(l, &at, "the protocol version", &v)) < 0)
                return r;
        if (v->kind != PK_INT || v->u.i != 1001)
                return fail(l, -EPROTONOSUPPORT, "legacy format: protocol version %lld, not 1001",
                            v->kind == PK_INT ? (long long)v->u.i : -1LL);
        if ((r = legacy_pickle(l, &at, "the system's description", &v)) < 0)
                return r;
        struct pk_value *little = pk_dict_get(v, "little_endian");
        if (v->kind != PK_DICT || (little && !(little->kind == PK_BOOL && little->u.b)))
                return fail(l, -EPROTONOSUPPORT, "legacy format: written by a big-endian machine, or no system's "
                            "description");
        if ((r = legacy_pickle(l, &at, "the object", ret)) < 0 || (r = legacy_pickle(l, &at, "the storage keys",
                                                                                     &keys)) < 0)
                return r;
        if (keys->kind != PK_LIST)
                return fail(l, -EBADMSG, "legacy format: the storage keys are a %s, not a list",
                            pk_kind_name(keys->kind));
        if ((r = collect_stores(l)) < 0)
                return r;
        /* the storages, in the list's order, each its element count and its bytes */
        for (size_t i = 0; i < keys->u.seq.n; i++) {
                struct pk_value *k = keys->u.seq.v[i];
                if (k->kind != PK_STR)
                        return fail(l, -EBADMSG, "legacy format: storage key %zu is a %s, not a string", i,
                                    pk_kind_name(k->kind));
                struct store *s = find_store(l, k->u.str.s);
                if (!s)
                        return fail(l, -EBADMSG, "legacy format: storage key '%s' is in the list, not in the object",
                                    k->u.str.s);
                if (l->size - at < 8)
                        return fail(l, -EBADMSG, "legacy format: byte %zu: the file ends before storage '%s' (%zu of "
                                    "%zu)", at, s->key, i + 1, keys->u.seq.n);
                uint64_t count = 0;
                for (int b = 7; b >= 0; b--)
                        count = count << 8 | l->p[at + (size_t)b];
                if (count != (uint64_t)s->numel)
                        return fail(l, -EBADMSG, "legacy format: byte %zu: storage '%s' has %llu elements, its "
                                    "tensors say %lld", at, s->key, (unsigned long long)count, (long long)s->numel);
                at += 8;
                /* numel * 8 fits 63 bits (pickle.h) */
                size_t bytes = (size_t)s->numel * pk_dtype_size(s->dtype);
                if (bytes > l->size - at)
                        return fail(l, -EBADMSG, "legacy format: byte %zu: storage '%s' (%zu bytes) runs past the end "
                                    "of the file (truncated)", at, s->key, bytes);
                s->data = l->p + at;
                at += bytes;
        }
        return 0;
}

/* ---- the state dict ----------------------------------------------------------------------------- */

static int tensor_of(struct load *l, const char *name, const struct pk_tensor *pt, struct pt_tensor *t,
                     int64_t *expanded, int64_t *elements)
{
        const struct store *s = find_store(l, pt->storage.key);
        if (!s || !s->data)
                return fail(l, -EBADMSG, "tensor '%s': its storage '%s' has no data in the file", name,
                            pt->storage.key);
        *t = (struct pt_tensor){ .dtype = s->dtype, .ndim = pt->ndim, .numel = 1, .contiguous = true };
        int64_t last = pt->offset, expect = 1;
        bool overflow = false;
        for (int d = pt->ndim - 1; d >= 0; d--) {
                int64_t size = pt->size[d], stride = pt->stride[d], reach;
                t->dims[d] = size;
                t->strides[d] = stride;
                overflow |= __builtin_mul_overflow(t->numel, size, &t->numel);
                overflow |= __builtin_mul_overflow(size ? size - 1 : 0, stride, &reach);
                overflow |= __builtin_add_overflow(last, reach, &last);
                if (size != 1 && stride != expect)
                        t->contiguous = false;
                if (!overflow)
                        overflow |= __builtin_mul_overflow(expect, size, &expect);
        }
        if (t->numel == 0)
                t->contiguous = true;   /* as torch says of an empty tensor */
        int64_t room = pt->storage.view_numel;
        if (overflow || (t->numel > 0 && last >= room))
                return fail(l, -EBADMSG, "tensor '%s': its elements (offset %lld, %d dimensions) lie beyond its "
                            "storage '%s' of %lld elements", name, (long long)pt->offset, pt->ndim, s->key,
                            (long long)room);
        if (t->numel > room) {
                *expanded += t->numel - room;
                if (*expanded > PT_MAX_EXPANDED)
                        return fail(l, -E2BIG, "tensor '%s': %lld elements in a storage of %lld: expanded tensors "
                                    "add more than %lld elements", name, (long long)t->numel, (long long)room,
                                    (long long)PT_MAX_EXPANDED);
        }
        *elements += t->numel;
        if (*elements > PT_MAX_ELEMENTS)
                return fail(l, -E2BIG, "tensor '%s': the tensors have more than %lld elements", name,
                            (long long)PT_MAX_ELEMENTS);
        t->data = s->data + (size_t)(pt->storage.view_offset + (t->numel ? pt->offset : 0)) *
                  pk_dtype_size(s->dtype);
        t->name = xstrdup(name);
        return 0;
}

struct slot {
        const char *key;
        size_t at;
};

static int cmp_slot(const void *a, const void *b)
{
        const struct slot *x = a, *y = b;
        int c = strcmp(x->key, y->key);
        return c ? c : x->at < y->at ? -1 : x->at > y->at;
}

static int state_dict(struct load *l, struct pk_value *obj, struct pt_file *f)
{
        if (obj->kind != PK_DICT)
                return fail(l, -EBADMSG, "holds a %s, not a state dict", pk_kind_name(obj->kind));
        struct pk_value *inner = pk_dict_get(obj, "state_dict");
        if (inner && inner->kind == PK_DICT) {
                obj = inner;
                f->wrapper = "state_dict";
        }
        inner = pk_dict_get(obj, "model");
        if (inner && inner->kind == PK_DICT) {
                obj = inner;
                f->wrapper = "model";
        }
        /* the entries once each: the first place, the last value */
        size_t n = obj->u.seq.n / 2;
        if (n > PT_MAX_TENSORS)
                return fail(l, -E2BIG, "a state dict of %zu entries (at most %d)", n, PT_MAX_TENSORS);
        _cleanup_free_ struct slot *slots = xcalloc(n + 1, sizeof(*slots));
        _cleanup_free_ size_t *value_of = xcalloc(n + 1, sizeof(*value_of));
        for (size_t i = 0; i < n; i++) {
                const struct pk_value *k = obj->u.seq.v[2 * i];
                if (k->kind != PK_STR)
                        return fail(l, -EBADMSG, "%s entry %zu: its key is a %s, not a name",
                                    f->wrapper ? f->wrapper : "state dict", i, pk_kind_name(k->kind));
                slots[i] = (struct slot){ k->u.str.s, i };
                value_of[i] = SIZE_MAX;
        }
        qsort(slots, n, sizeof(*slots), cmp_slot);
        for (size_t i = 0, j; i < n; i = j) {
                for (j = i + 1; j < n && streq(slots[j].key, slots[i].key); j++)
                        ;
                value_of[slots[i].at] = slots[j - 1].at;
        }
        f->t = xcalloc(n + 1, sizeof(*f->t));
        int64_t expanded = 0, elements = 0;
        for (size_t i = 0; i < n; i++) {
                if (value_of[i] == SIZE_MAX)
                        continue;
                const struct pk_value *v = obj->u.seq.v[2 * value_of[i] + 1];
                if (v->kind != PK_TENSOR) {
                        f->others++;
                        continue;
                }
                int r = tensor_of(l, obj->u.seq.v[2 * i]->u.str.s, v->u.tensor, &f->t[f->n], &expanded, &elements);
                if (r < 0)
                        return r;
                f->n++;
        }
        return 0;
}

int pt_load_mem(const void *data, size_t size, const char *label, struct pt_file *ret, struct bd_err *err)
{
        struct bd_err perr;
        struct load l = { .p = data, .size = size, .label = label, .err = &perr };
        struct pt_file f = { 0 };
        struct pk_value *obj = NULL;
        int r;
        if (size >= 8 && !memcmp(data, BDW_MAGIC, 8)) {
                f.format = PT_FORMAT_BDW;
                r = bdw_parse(data, size, &f, &perr);
                if (r < 0)
                        r = fail(&l, r, "%s", perr.msg);
        } else if (size >= 4 && !memcmp(data, "PK\x03\x04", 4)) {
                f.format = PT_FORMAT_ZIP;
                r = load_zip(&l, &f, &obj);
        } else if (size >= 2 && l.p[0] == 0x80 && l.p[1] <= 5) {
                f.format = PT_FORMAT_LEGACY;
                r = load_legacy(&l, &f, &obj);
        } else
                r = fail(&l, -EBADMSG, "neither a PyTorch file (a zip archive or a legacy pickle) nor a benchd "
                         "weights file");
        if (r == 0 && obj)
                r = state_dict(&l, obj, &f);
        pk_arena_release(&l.arena);
        free(l.stores);
        if (r < 0) {
                pt_file_release(&f);
                if (err)
                        *err = perr;
                return bd_err_printable(err, r);
        }
        *ret = f;
        return 0;
}

int pt_load(const char *path, struct pt_file *ret, struct bd_err *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return bd_err_printable(err, bd_err_set(err, -errno, "cannot open '%s': %s", path, strerror(errno)));
        if (!S_ISREG(st.st_mode))
                return bd_err_printable(err, bd_err_set(err, -EINVAL, "%s: not a regular file", path));
        if (st.st_size == 0)
                return bd_err_printable(err, bd_err_set(err, -EBADMSG, "%s: an empty file", path));
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
                return bd_err_printable(err, bd_err_set(err, -errno, "cannot map '%s': %s", path, strerror(errno)));
        int r = pt_load_mem(map, (size_t)st.st_size, path, ret, err);
        if (r < 0) {
                munmap(map, (size_t)st.st_size);
                return r;
        }
        ret->map = map;
        ret->map_size = (size_t)st.st_size;
        return 0;
}

/* ---- values ---------------------------------------------------------------------------------- */

float pt_half_to_float(uint16_t h)
{
        uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
        if (exp == 0x1f)
                bits = sign | 0x7f800000u | man << 13 | (man ? 0x400000u : 0);
        else if (exp)
                bits = sign | (exp + 112) << 23 | man << 13;
        else if (man) {
                /* subnormal: shift the leading 1 into the implicit bit */
                uint32_t e = 113;
                while (!(man & 0x400)) {
                        man <<= 1;
                        e--;
                }
                bits = sign | e << 23 | (man & 0x3ff) << 13;
        } else
                bits = sign;
        float f;
        memcpy(&f, &bits, 4);
        return f;
}

float pt_bf16_to_float(uint16_t h)
{
        uint32_t bits = (uint32_t)h << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
}

static float element(enum pk_dtype t, const unsigned char *p)
{
        float f;
        double d;
        uint16_t h;
        switch (t) {
        case PK_DT_F32:
                memcpy(&f, p, 4);
                return f;
        case PK_DT_F64:
                memcpy(&d, p, 8);
                return (float)d;
        case PK_DT_F16:
                memcpy(&h, p, 2);
                return pt_half_to_float(h);
        case PK_DT_BF16:
                memcpy(&h, p, 2);
                return pt_bf16_to_float(h);
        default:
                return 0;
        }
}

void pt_tensor_f32(const struct pt_tensor *t, int64_t start, int64_t count, void *out)
{
        size_t es = pk_dtype_size(t->dtype);
        unsigned char *o = out;
        if (count <= 0)
                return;         /* an empty tensor's sizes may hold a 0 */
        if (t->contiguous) {
                const unsigned char *p = t->data + (size_t)start * es;
                for (int64_t i = 0; i < count; i++, p += es, o += 4) {
                        float f = element(t->dtype, p);
                        memcpy(o, &f, 4);
                }
                return;
        }
        /* by the strides: the index of start, then one step at a time */
        int64_t idx[PK_MAX_DIMS], off = 0, rem = start;
        for (int d = t->ndim - 1; d >= 0; d--) {
                idx[d] = rem % t->dims[d];
                rem /= t->dims[d];
                off += idx[d] * t->strides[d];
        }
        for (int64_t i = 0; i < count; i++, o += 4) {
                float f = element(t->dtype, t->data + (size_t)off * es);
                memcpy(o, &f, 4);
                for (int d = t->ndim - 1; d >= 0; d--) {
                        off += t->strides[d];
                        if (++idx[d] < t->dims[d])
                                break;
                        off -= t->strides[d] * t->dims[d];
                        idx[d] = 0;
                }
        }
}

/* bdw.c: benchd weights files, written and read; what a weights file
 * holds (bdw.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bdw.h"
#include "crc32.h"
#include "fs.h"
#include "strutil.h"
#include "zipread.h"

#define HEADER 80
#define TRAILER 16
#define END_MAGIC "BDWTEND"     /* and its NUL: 8 bytes */

static void put_le(unsigned char *p, uint64_t v, int n)
{
        for (int i = 0; i < n; i++, v >>= 8)
                p[i] = (unsigned char)v;
}

/* ---- reading --------------------------------------------------------------------------------- */

int bdw_parse(const unsigned char *data, size_t size, struct pt_file *f, struct bd_err *err)
{
        if (size < HEADER + TRAILER || memcmp(data, BDW_MAGIC, 8) != 0)
                return bd_err_set(err, -EBADMSG, "not a benchd weights file, or truncated in its header");
        uint32_t version = (uint32_t)zip_le(data + 8, 4), count = (uint32_t)zip_le(data + 12, 4);
        if (version != BDW_VERSION)
                return bd_err_set(err, -EPROTONOSUPPORT, "format version %u, this build reads version %d", version,
                                  BDW_VERSION);
        if (!memchr(data + 16, 0, 64))
                return bd_err_set(err, -EBADMSG, "the source name is not NUL-terminated in its 64 bytes");
        memcpy(f->source, data + 16, 64);
        f->version = (int)version;
        size_t end = size - TRAILER, at = HEADER;
        /* a tensor takes 8 bytes at the least */
        if (count > (end - at) / 8 || count > PT_MAX_TENSORS)
                return bd_err_set(err, -EBADMSG, "%u tensors in %zu bytes%s", count, size,
                                  count > PT_MAX_TENSORS ? " (at most 1048576 read)" : "");
        f->t = xcalloc((size_t)count + 1, sizeof(*f->t));
        for (uint32_t i = 0; i < count; i++) {
                struct pt_tensor *t = &f->t[i];
                if (end - at < 2 || end - at - 2 < zip_le(data + at, 2) + 2)
                        return bd_err_set(err, -EBADMSG, "byte %zu: truncated in tensor %u", at, i);
                size_t nl = zip_le(data + at, 2);
                const char *name = (const char *)data + at + 2;
                if (nl > BDW_NAME_MAX || memchr(name, 0, nl))
                        return bd_err_set(err, -EBADMSG, "byte %zu: tensor %u: a name of %zu bytes%s", at, i, nl,
                                          nl > BDW_NAME_MAX ? "" : " holding a NUL");
                t->name = xstrndup(name, nl);
                f->n++;
                at += 2 + nl;
                unsigned type = data[at], ndim = data[at + 1];
                at += 2;
                if (type != 0 || ndim > PK_MAX_DIMS)
                        return bd_err_set(err, -EBADMSG, "tensor '%s': type %u (0, float32, expected) or %u "
                                          "dimensions", t->name, type, ndim);
                if (end - at < 8 * ndim)
                        return bd_err_set(err, -EBADMSG, "byte %zu: truncated in tensor '%s'", at, t->name);
                /* each dimension checked against what is left: their product fits */
                uint64_t left = (end - at - 8 * ndim) / 4, numel = 1;
                t->dtype = PK_DT_F32;
                t->ndim = (int)ndim;
                t->contiguous = true;
                for (int d = t->ndim - 1; d >= 0; d--) {
                        uint64_t dim = zip_le(data + at + 8 * (size_t)d, 8);
                        if (dim > left || (dim && numel > left / dim))
                                return bd_err_set(err, -EBADMSG, "tensor '%s': dimension %d of %lld: truncated, or "
                                                  "beyond the file", t->name, d, (long long)dim);
                        t->dims[d] = (int64_t)dim;
                        t->strides[d] = (int64_t)numel;
                        numel *= dim;
                }
                at += 8 * ndim;
                t->numel = (int64_t)numel;
                t->data = data + at;
                at += 4 * numel;
        }
        if (at != end)
                return bd_err_set(err, -EBADMSG, "%zu unexpected bytes before the end", end - at);
        const unsigned char *tr = data + end;
        uint32_t crc = bd_crc32(0, data, end);
        if (zip_le(tr, 4) != crc || zip_le(tr + 4, 4) != 0 || memcmp(tr + 8, END_MAGIC, 8) != 0)
                return bd_err_set(err, -EBADMSG, "checksum mismatch or bad trailer (damaged or truncated)");
        return 0;
}

/* ---- writing --------------------------------------------------------------------------------- */

struct out {
        int fd;
        int r;
        uint32_t crc;
        size_t n;
        unsigned char buf[1 << 16];
};

static void out_flush(struct out *o)
{
        o->crc = bd_crc32(o->crc, o->buf, o->n);
        if (o->r == 0)
                o->r = fs_write_all(o->fd, o->buf, o->n);
        o->n = 0;
}

static void out_put(struct out *o, const void *data, size_t len)
{
        const unsigned char *p = data;
        while (len > 0) {
                size_t k = sizeof(o->buf) - o->n < len ? sizeof(o->buf) - o->n : len;
                memcpy(o->buf + o->n, p, k);
                o->n += k;
                p += k;
                len -= k;
                if (o->n == sizeof(o->buf))
                        out_flush(o);
        }
}

static void out_u(struct out *o, uint64_t v, int n)
{
        unsigned char b[8];
        put_le(b, v, n);
        out_put(o, b, (size_t)n);
}

static const char *stripped(const char *name, const char *strip)
{
        return strip && *strip && str_has_prefix(name, strip) ? name + strlen(strip) : name;
}

static void write_body(struct out *o, const struct pt_file *f, const char *strip, const char *source, uint32_t count)
{
        unsigned char head[HEADER] = { 0 };
        memcpy(head, BDW_MAGIC, 8);
        put_le(head + 8, BDW_VERSION, 4);
        put_le(head + 12, count, 4);
        size_t sl = strlen(source);
        memcpy(head + 16, source, sl > 63 ? 63 : sl);
        out_put(o, head, sizeof(head));
        float chunk[4096];
        for (size_t i = 0; i < f->n && o->r == 0; i++) {
                const struct pt_tensor *t = &f->t[i];
                if (!pk_dtype_is_float(t->dtype))
                        continue;
                const char *name = stripped(t->name, strip);
                out_u(o, strlen(name), 2);
                out_put(o, name, strlen(name));
                out_u(o, 0, 1);
                out_u(o, (uint64_t)t->ndim, 1);
                for (int d = 0; d < t->ndim; d++)
                        out_u(o, (uint64_t)t->dims[d], 8);
                const int64_t step = (int64_t)ARRAY_SIZE(chunk);
                for (int64_t at = 0; at < t->numel && o->r == 0; at += step) {
                        int64_t k = t->numel - at < step ? t->numel - at : step;
                        pt_tensor_f32(t, at, k, chunk);
                        out_put(o, chunk, (size_t)k * 4);
                }
        }
        out_flush(o);
        unsigned char tr[TRAILER] = { 0 };
        put_le(tr, o->crc, 4);
        memcpy(tr + 8, END_MAGIC, 8);
        if (o->r == 0)
                o->r = fs_write_all(o->fd, tr, sizeof(tr));
}

int bdw_write(const char *path, const struct pt_file *f, const char *strip, const char *source, size_t *ret_count,
              struct bd_err *err)
{
        uint32_t count = 0;
        for (size_t i = 0; i < f->n; i++) {
                if (!pk_dtype_is_float(f->t[i].dtype))
                        continue;
                const char *name = stripped(f->t[i].name, strip);
                if (strlen(name) > BDW_NAME_MAX)
                        return bd_err_printable(err, bd_err_set(err, -ENAMETOOLONG, "tensor name too long (%zu bytes, "
                                                                "at most %d): %.80s...", strlen(name), BDW_NAME_MAX,
                                                                name));
                if (count == UINT32_MAX)
                        return bd_err_set(err, -E2BIG, "more than %u tensors", UINT32_MAX);
                count++;
        }
        /* a device or a FIFO takes the bytes where it is; a file is replaced */
        struct stat st;
        _cleanup_free_ char *tmp = NULL;
        _cleanup_free_ struct out *o = xcalloc(1, sizeof(*o));
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
                return bd_err_set(err, -EISDIR, "cannot write '%s': it is a directory", path);
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
                o->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        else {
                tmp = xasprintf("%s.tmp.XXXXXX", path);
                o->fd = mkostemp(tmp, O_CLOEXEC);
        }
        if (o->fd < 0)
                return bd_err_set(err, -errno, "cannot %s '%s': %s", tmp ? "create a file next to" : "open", path,
                                  strerror(errno));
        write_body(o, f, strip, source ? source : "", count);
        int r = o->r;
        if (r == 0 && tmp && fchmod(o->fd, 0644) < 0)
                r = -errno;
        if (r == 0 && tmp && fsync(o->fd) < 0)
                r = -errno;
        if (close(o->fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && tmp && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                if (tmp)
                        (void) unlink(tmp);
                return bd_err_set(err, r, "cannot write '%s': %s", path, strerror(-r));
        }
        if (tmp) {
                /* the rename itself, on disk */
                _cleanup_free_ char *dir = xstrdup(path);
                _cleanup_close_ int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd >= 0)
                        (void) fsync(dfd);
        }
        if (ret_count)
                *ret_count = count;
        return 0;
}

/* ---- what it holds ----------------------------------------------------------------------------- */

void bdw_shape(char *buf, size_t n, int ndim, const int64_t *dims)
{
        size_t at = 0;
        buf[0] = '\0';
        at += (size_t)snprintf(buf, n, "(");
        for (int d = 0; d < ndim && at < n; d++)
                at += (size_t)snprintf(buf + at, n - at, "%s%lld", d ? ", " : "", (long long)dims[d]);
        if (at < n)
                snprintf(buf + at, n - at, ")");
}

/* The trainers whose --pretrained takes a ResNet: their pretrained_prefix
 * and pretrained_unused (trainer/ssd/ssd-train.c,
 * trainer/maskrcnn/mrcnn-train.c) and --backbone values */
static const struct bdw_trainer trainers[] = {
        { "benchd-ssd", { "ssd" }, "backbone.", { "layer4.", "fc." }, { "resnet34", "resnet18" } },
        { "benchd-maskrcnn", { "maskrcnn", "fasterrcnn" }, "backbone.body.", { "fc." },
          { "resnet50", "resnet34", "resnet18" } },
};

static const struct {
        const char *name;
        bool bottleneck;
        int blocks[4];
} depths[] = {
        { "resnet18", false, { 2, 2, 2, 2 } },  { "resnet34", false, { 3, 4, 6, 3 } },
        { "resnet50", true, { 3, 4, 6, 3 } },   { "resnet101", true, { 3, 4, 23, 3 } },
        { "resnet152", true, { 3, 8, 36, 3 } },
};

struct names {
        const struct pt_file *f;
        size_t *by_name;        /* tensor indices sorted by name */
        bool *used;             /* the tensors the ResNet has */
        struct bdw_desc *d;
};

static int cmp_index(const void *a, const void *b, void *file)
{
        const struct pt_file *f = file;
        return strcmp(f->t[*(const size_t *)a].name, f->t[*(const size_t *)b].name);
}

/* the tensor of prefix + name, or NULL */
static const struct pt_tensor *lookup(const struct names *nm, const char *prefix, const char *name)
{
        char full[BDW_NAME_MAX + 128];
        snprintf(full, sizeof(full), "%s%s", prefix, name);
        size_t lo = 0, hi = nm->f->n;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(nm->f->t[nm->by_name[mid]].name, full);
                if (c == 0) {
                        /* the first of equal names (bdw files may hold one twice) */
                        while (mid > lo && streq(nm->f->t[nm->by_name[mid - 1]].name, full))
                                mid--;
                        return &nm->f->t[nm->by_name[mid]];
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

/* A tensor the ResNet has, of this shape: marked used; the first missing
 * or other one is the problem.  ndim < 0: optional (num_batches_tracked). */
static void expect(struct names *nm, const char *name, int ndim, int64_t a, int64_t b, int64_t c, int64_t e)
{
        const struct pt_tensor *t = lookup(nm, nm->d->prefix, name);
        int64_t want[4] = { a, b, c, e };
        if (t)
                nm->used[t - nm->f->t] = true;
        if (ndim < 0 || nm->d->problem[0])
                return;
        if (!t) {
                snprintf(nm->d->problem, sizeof(nm->d->problem), "no tensor '%s%s'", nm->d->prefix, name);
                return;
        }
        bool same = t->ndim == ndim && pk_dtype_is_float(t->dtype);
        for (int k = 0; k < ndim && same; k++)
                same = t->dims[k] == want[k];
        if (!same) {
                char got[128], exp[128];
                bdw_shape(got, sizeof(got), t->ndim, t->dims);
                bdw_shape(exp, sizeof(exp), ndim, want);
                snprintf(nm->d->problem, sizeof(nm->d->problem), "'%s%s' is %s %s, not float %s", nm->d->prefix,
                         name, pk_dtype_name(t->dtype), got, exp);
        }
}

static void expect_bn(struct names *nm, const char *bn, int64_t ch)
{
        static const char *const parts[] = { "weight", "bias", "running_mean", "running_var" };
        char name[96];
        for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
                snprintf(name, sizeof(name), "%s.%s", bn, parts[i]);
                expect(nm, name, 1, ch, 0, 0, 0);
        }
        snprintf(name, sizeof(name), "%s.num_batches_tracked", bn);
        expect(nm, name, -1, 0, 0, 0, 0);
}

/* every tensor of torchvision's ResNet of these blocks, width and classes */
static void expect_resnet(struct names *nm)
{
        struct bdw_desc *d = nm->d;
        int64_t w = d->width, exp = d->bottleneck ? 4 : 1, in = w;
        char name[96], bn[96];
        expect(nm, "conv1.weight", 4, w, 3, 7, 7);
        expect_bn(nm, "bn1", w);
        for (int s = 0; s < 4; s++) {
                int64_t planes = w << s, out = planes * exp;
                for (int j = 0; j < d->blocks[s]; j++) {
                        int64_t cin = j ? out : in;
                        int nconv = d->bottleneck ? 3 : 2;
                        for (int k = 1; k <= nconv; k++) {
                                int64_t ci = k == 1 ? cin : planes, co = k == nconv ? out : planes;
                                int ks = d->bottleneck && k != 2 ? 1 : 3;
                                snprintf(name, sizeof(name), "layer%d.%d.conv%d.weight", s + 1, j, k);
                                expect(nm, name, 4, co, ci, ks, ks);
                                snprintf(bn, sizeof(bn), "layer%d.%d.bn%d", s + 1, j, k);
                                expect_bn(nm, bn, co);
                        }
                        if (j == 0 && (s > 0 || cin != out)) {
                                snprintf(name, sizeof(name), "layer%d.0.downsample.0.weight", s + 1);
                                expect(nm, name, 4, out, cin, 1, 1);
                                snprintf(bn, sizeof(bn), "layer%d.0.downsample.1", s + 1);
                                expect_bn(nm, bn, out);
                        }
                }
                in = out;
        }
        const struct pt_tensor *fc = lookup(nm, d->prefix, "fc.weight");
        if (fc && fc->ndim == 2) {
                d->classes = fc->dims[0];
                expect(nm, "fc.weight", 2, d->classes, in, 0, 0);
                expect(nm, "fc.bias", 1, d->classes, 0, 0, 0);
        }
}

/* The prefix of the ResNet's names: the shortest P with P + "conv1.weight"
 * and P + "layer1.0.conv1.weight". */
static bool find_prefix(struct names *nm)
{
        static const char stem[] = "conv1.weight";
        bool found = false;
        for (size_t i = 0; i < nm->f->n; i++) {
                const char *name = nm->f->t[i].name;
                size_t l = strlen(name);
                if (l < sizeof(stem) - 1 || !streq(name + l - (sizeof(stem) - 1), stem))
                        continue;
                size_t pl = l - (sizeof(stem) - 1);
                if (pl >= sizeof(nm->d->prefix) || (found && pl >= strlen(nm->d->prefix)))
                        continue;
                char prefix[sizeof(nm->d->prefix)];
                memcpy(prefix, name, pl);
                prefix[pl] = '\0';
                if (lookup(nm, prefix, "layer1.0.conv1.weight")) {
                        STR_COPY(nm->d->prefix, prefix);
                        found = true;
                }
        }
        return found;
}

static void describe_resnet(struct names *nm)
{
        struct bdw_desc *d = nm->d;
        if (!find_prefix(nm))
                return;
        const struct pt_tensor *c1 = lookup(nm, d->prefix, "conv1.weight");
        if (c1->ndim != 4 || c1->dims[0] <= 0 || c1->dims[0] > (1 << 20))
                return;
        d->width = c1->dims[0];
        d->bottleneck = lookup(nm, d->prefix, "layer1.0.conv3.weight") != NULL;
        char name[64];
        for (int s = 0; s < 4; s++)
                for (d->blocks[s] = 0; d->blocks[s] < 1000; d->blocks[s]++) {
                        snprintf(name, sizeof(name), "layer%d.%d.conv1.weight", s + 1, d->blocks[s]);
                        if (!lookup(nm, d->prefix, name))
                                break;
                }
        if (!d->blocks[0] || !d->blocks[1] || !d->blocks[2] || !d->blocks[3])
                return;
        d->resnet = true;
        for (size_t i = 0; i < ARRAY_SIZE(depths); i++)
                if (depths[i].bottleneck == d->bottleneck && !memcmp(depths[i].blocks, d->blocks, sizeof(d->blocks)))
                        STR_COPY(d->arch, depths[i].name);
        expect_resnet(nm);
        for (size_t i = 0; i < nm->f->n; i++)
                d->extra += !nm->used[i];
        /* what the trainers load: torchvision's names, width 64, nothing else */
        if (!d->arch[0] || d->problem[0] || d->extra || d->prefix[0] || d->width != 64)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(trainers); i++)
                for (size_t k = 0; k < ARRAY_SIZE(trainers[i].backbones) && trainers[i].backbones[k]; k++)
                        if (streq(trainers[i].backbones[k], d->arch))
                                d->trainers[d->ntrainers++] = &trainers[i];
}

void bdw_describe(const struct pt_file *f, struct bdw_desc *ret)
{
        struct bdw_desc d = { 0 };
        for (size_t i = 0; i < f->n; i++) {
                const struct pt_tensor *t = &f->t[i];
                d.dtypes[t->dtype]++;
                if (!pk_dtype_is_float(t->dtype))
                        continue;
                d.floats++;
                d.values += t->numel;
                if (!str_has_suffix(t->name, ".running_mean") && !str_has_suffix(t->name, ".running_var"))
                        d.parameters += t->numel;
        }
        _cleanup_free_ size_t *by_name = xcalloc(f->n + 1, sizeof(*by_name));
        _cleanup_free_ bool *used = xcalloc(f->n + 1, sizeof(*used));
        for (size_t i = 0; i < f->n; i++)
                by_name[i] = i;
        qsort_r(by_name, f->n, sizeof(*by_name), cmp_index, (void *)f);
        struct names nm = { f, by_name, used, &d };
        describe_resnet(&nm);
        *ret = d;
}

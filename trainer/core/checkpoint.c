/* checkpoint.c: checkpoints and pretrained weights (formats in checkpoint.h).
 * Files are little-endian; fields are written one by one, never as structs. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "fs.h"

#define CKPT_MAGIC "BDTRCKPT"
#define CKPT_END "BDCKEND"
#define WT_MAGIC "BDWEIGHT"
#define WT_END "BDWTEND"
#define CKPT_HEADER 168
#define CKPT_ENTRY 144
#define TRAILER 16

/* ---- byte buffers ------------------------------------------------------------------ */

struct wb {
        unsigned char *p;
        size_t n, cap;
};

static void wb_put(struct wb *b, const void *v, size_t n)
{
        if (b->n + n > b->cap) {
                b->cap = (b->n + n) * 2 + 256;
                b->p = xrealloc(b->p, b->cap);
        }
        memcpy(b->p + b->n, v, n);
        b->n += n;
}

static void wb_u32(struct wb *b, uint32_t v) { wb_put(b, &v, 4); }
static void wb_u64(struct wb *b, uint64_t v) { wb_put(b, &v, 8); }
static void wb_f64(struct wb *b, double v) { wb_put(b, &v, 8); }

/* a string in a field of its own size, NUL-padded: at most field - 1 bytes of it */
static void wb_str(struct wb *b, const char *s, size_t field)
{
        char f[128] = { 0 };
        snprintf(f, field < sizeof(f) ? field : sizeof(f), "%s", s);
        wb_put(b, f, field);
}

struct rb {
        const unsigned char *p;
        size_t n, at;
};

static int rb_get(struct rb *b, void *v, size_t n)
{
        if (b->at + n > b->n)
                return -1;
        memcpy(v, b->p + b->at, n);
        b->at += n;
        return 0;
}

static uint32_t rb_u32(struct rb *b) { uint32_t v = 0; rb_get(b, &v, 4); return v; }
static uint64_t rb_u64(struct rb *b) { uint64_t v = 0; rb_get(b, &v, 8); return v; }
static double rb_f64(struct rb *b) { double v = 0; rb_get(b, &v, 8); return v; }

/* ---- files --------------------------------------------------------------------------- */

static int write_all(int fd, const void *p, size_t n)
{
        const char *c = p;
        while (n) {
                ssize_t w = write(fd, c, n > (1u << 30) ? (1u << 30) : n);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                c += w;
                n -= (size_t)w;
        }
        return 0;
}

static int read_all(int fd, void *p, size_t n)
{
        char *c = p;
        while (n) {
                ssize_t r = read(fd, c, n > (1u << 30) ? (1u << 30) : n);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (r == 0)
                        return -EIO;
                c += r;
                n -= (size_t)r;
        }
        return 0;
}

/* pieces written in order to a temporary file, then renamed over path */
struct piece {
        const void *p;
        size_t n;
};

static int write_atomic(const char *path, const struct piece *pcs, int npieces, const char *end_magic, struct bd_err *err)
{
        _cleanup_free_ char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return bd_err_set(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
        uint32_t crc = 0;
        int r = 0;
        for (int i = 0; i < npieces && r == 0; i++) {
                crc = bd_crc32(crc, pcs[i].p, pcs[i].n);
                r = write_all(fd, pcs[i].p, pcs[i].n);
        }
        if (r == 0) {
                unsigned char tr[TRAILER] = { 0 };
                memcpy(tr, &crc, 4);
                memcpy(tr + 8, end_magic, strlen(end_magic));
                r = write_all(fd, tr, sizeof(tr));
        }
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                unlink(tmp);
                return bd_err_set(err, r, "cannot write '%s': %s", path, strerror(-r));
        }
        _cleanup_free_ char *dcopy = xstrdup(path);
        int dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
                (void)fsync(dfd);
                close(dfd);
        }
        return 0;
}

static int check_trailer(const char *what, const char *path, const unsigned char *tr, uint32_t crc,
                         const char *end_magic, struct bd_err *err)
{
        uint32_t want;
        memcpy(&want, tr, 4);
        if (memcmp(tr + 8, end_magic, strlen(end_magic) + 1) != 0)
                return bd_err_set(err, -EBADMSG, "%s '%s': no end marker (truncated or not one)", what, path);
        if (want != crc)
                return bd_err_set(err, -EBADMSG, "%s '%s': checksum mismatch (the file is corrupted)", what, path);
        return 0;
}

/* ---- checkpoints ----------------------------------------------------------------------- */

static const char *dtype_word(uint32_t t)
{
        return t == 0 ? "f32" : t == 1 ? "f64" : "unknown";
}

static uint32_t dtype_code(enum bd_dtype dt)
{
        return dt == BD_F64 ? 1 : 0;
}

static void shape_str(char *b, size_t n, uint32_t ndim, const int64_t *dims)
{
        size_t o = (size_t)snprintf(b, n, "(");
        for (uint32_t i = 0; i < ndim && o < n; i++)
                o += (size_t)snprintf(b + o, n - o, "%s%lld", i ? ", " : "", (long long)dims[i]);
        if (o < n)
                snprintf(b + o, n - o, ")");
}

int bd_ckpt_save(const char *path, struct bd_model *m, const struct bd_sgd *o, const struct bd_ckpt_meta *meta,
                 struct bd_err *err)
{
        size_t ds = bd_dtype_size(m->dtype);
        _cleanup_free_ void *params = xmalloc(m->n_all * ds + 1);
        _cleanup_free_ void *mom = o ? xmalloc(m->n_train * ds + 1) : NULL;
        struct bd_backend *be = m->be;
        if (bd_model_get_params(m, params) < 0 ||
            (o && be->ops->copy(be, mom, BD_CPU, o->mom, be->dev, m->n_train * ds) < 0) || be->ops->sync(be) < 0)
                return bd_err_set(err, -EIO, "checkpoint '%s': %s", path, be->err.msg);
        struct wb h = { 0 };
        wb_put(&h, CKPT_MAGIC, 8);
        wb_u32(&h, BD_CKPT_VERSION);
        wb_u32(&h, dtype_code(m->dtype));
        wb_str(&h, meta->model, 64);
        wb_u64(&h, (uint64_t)meta->iter);
        wb_u64(&h, (uint64_t)meta->epoch);
        for (int i = 0; i < 4; i++)
                wb_u64(&h, meta->rng.s[i]);
        wb_f64(&h, o ? o->loss_scale : 1.0);
        wb_u64(&h, o ? (uint64_t)o->good_steps : 0);
        wb_u32(&h, (uint32_t)m->np);
        wb_u32(&h, o != NULL);
        wb_u64(&h, m->n_all);
        wb_u64(&h, m->n_train);
        for (int i = 0; i < m->np; i++) {
                const struct bd_param *p = &m->p[i];
                wb_str(&h, p->name, 96);
                wb_u32(&h, p->flags);
                wb_u32(&h, (uint32_t)p->ndim);
                for (int k = 0; k < 4; k++)
                        wb_u64(&h, (uint64_t)(k < p->ndim ? p->dims[k] : 0));
                wb_u64(&h, p->offset);
        }
        struct piece pcs[3] = { { h.p, h.n }, { params, m->n_all * ds }, { mom, o ? m->n_train * ds : 0 } };
        int r = write_atomic(path, pcs, 3, CKPT_END, err);
        free(h.p);
        return r;
}

static int ckpt_load(const char *path, struct bd_model *m, struct bd_sgd *o, struct bd_ckpt_meta *meta,
                     struct bd_err *err)
{
        const char *W = "checkpoint";
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return bd_err_set(err, -errno, "%s '%s': %s", W, path, strerror(errno));
        struct stat st;
        if (fstat(fd, &st) < 0)
                return bd_err_set(err, -errno, "%s '%s': %s", W, path, strerror(errno));
        size_t size = (size_t)st.st_size;
        unsigned char hb[CKPT_HEADER];
        if (size < CKPT_HEADER || read_all(fd, hb, sizeof(hb)) < 0)
                return bd_err_set(err, -EBADMSG, "%s '%s': truncated (%zu bytes)", W, path, size);
        if (memcmp(hb, CKPT_MAGIC, 8) != 0)
                return bd_err_set(err, -EBADMSG, "%s '%s': not a benchd checkpoint", W, path);
        struct rb h = { hb, sizeof(hb), 8 };
        uint32_t version = rb_u32(&h), dt = rb_u32(&h);
        if (version != BD_CKPT_VERSION)
                return bd_err_set(err, -EPROTO, "%s '%s': format version %u, this build reads version %d", W, path,
                                  version, BD_CKPT_VERSION);
        if (dt != dtype_code(m->dtype))
                return bd_err_set(err, -EBADMSG, "%s '%s': values are %s, the model's %s", W, path, dtype_word(dt),
                                  bd_dtype_name(m->dtype));
        char model[64];
        rb_get(&h, model, 64);
        if (!memchr(model, 0, sizeof(model)))
                return bd_err_set(err, -EBADMSG, "%s '%s': the model name is not NUL-terminated in its 64 bytes", W,
                                  path);
        if (meta->model[0] && strcmp(model, meta->model) != 0)
                return bd_err_set(err, -EBADMSG, "%s '%s': holds model '%s', expected '%s'", W, path, model,
                                  meta->model);
        int64_t iter = (int64_t)rb_u64(&h), epoch = (int64_t)rb_u64(&h);
        struct bd_rng rng;
        for (int i = 0; i < 4; i++)
                rng.s[i] = rb_u64(&h);
        double loss_scale = rb_f64(&h);
        int64_t good = (int64_t)rb_u64(&h);
        uint32_t nt = rb_u32(&h), has_mom = rb_u32(&h);
        uint64_t n_all = rb_u64(&h), n_train = rb_u64(&h);
        size_t ds = bd_dtype_size(m->dtype);
        if (nt > 1000000 || n_all > ((uint64_t)1 << 40) || n_train > n_all)
                return bd_err_set(err, -EBADMSG, "%s '%s': implausible header", W, path);
        uint64_t want = CKPT_HEADER + (uint64_t)nt * CKPT_ENTRY + n_all * ds + (has_mom ? n_train * ds : 0) + TRAILER;
        if (size < want)
                return bd_err_set(err, -EBADMSG, "%s '%s': truncated (%zu bytes, expected %llu)", W, path, size,
                                  (unsigned long long)want);
        if (size > want)
                return bd_err_set(err, -EBADMSG, "%s '%s': %llu unexpected bytes at the end", W, path,
                                  (unsigned long long)(size - want));
        if (o && !has_mom)
                return bd_err_set(err, -EBADMSG, "%s '%s': holds no optimiser state", W, path);

        if (nt != (uint32_t)m->np)
                return bd_err_set(err, -EBADMSG, "%s '%s': %u tensors, the model has %d", W, path, nt, m->np);
        /* the table must describe this model exactly */
        _cleanup_free_ unsigned char *tb = xmalloc((size_t)nt * CKPT_ENTRY + 1);
        if (read_all(fd, tb, (size_t)nt * CKPT_ENTRY) < 0)
                return bd_err_set(err, -EIO, "%s '%s': read error", W, path);
        struct rb t = { tb, (size_t)nt * CKPT_ENTRY, 0 };
        for (uint32_t i = 0; i < nt; i++) {
                char name[97] = { 0 };
                rb_get(&t, name, 96);
                uint32_t flags = rb_u32(&t), ndim = rb_u32(&t);
                int64_t dims[4];
                for (int k = 0; k < 4; k++)
                        dims[k] = (int64_t)rb_u64(&t);
                uint64_t off = rb_u64(&t);
                int id = bd_model_find(m, name);
                if (id < 0)
                        return bd_err_set(err, -EBADMSG, "%s '%s': tensor '%s' is not in the model", W, path, name);
                const struct bd_param *p = &m->p[id];
                int same = ndim == (uint32_t)p->ndim && off == p->offset &&
                           (flags & ~BD_P_FROZEN) == (p->flags & ~BD_P_FROZEN);
                for (int k = 0; k < p->ndim && same; k++)
                        same = dims[k] == p->dims[k];
                if (!same) {
                        char a[96], b[96];
                        shape_str(a, sizeof(a), ndim > 4 ? 4 : ndim, dims);
                        shape_str(b, sizeof(b), (uint32_t)p->ndim, p->dims);
                        return bd_err_set(err, -EBADMSG, "%s '%s': tensor '%s' is %s in the checkpoint, %s in the model%s",
                                          W, path, name, a, b, strcmp(a, b) == 0 ? " (other position or kind)" : "");
                }
        }

        if (n_all != m->n_all || n_train != m->n_train)
                return bd_err_set(err, -EBADMSG, "%s '%s': %llu values, the model has %zu", W, path,
                                  (unsigned long long)n_all, m->n_all);
        _cleanup_free_ void *params = xmalloc(n_all * ds + 1);
        _cleanup_free_ void *mom = has_mom ? xmalloc(n_train * ds + 1) : NULL;
        unsigned char tr[TRAILER];
        if (read_all(fd, params, n_all * ds) < 0 || (has_mom && read_all(fd, mom, n_train * ds) < 0) ||
            read_all(fd, tr, sizeof(tr)) < 0)
                return bd_err_set(err, -EIO, "%s '%s': read error", W, path);
        uint32_t crc = bd_crc32(0, hb, sizeof(hb));
        crc = bd_crc32(crc, tb, (size_t)nt * CKPT_ENTRY);
        crc = bd_crc32(crc, params, n_all * ds);
        if (has_mom)
                crc = bd_crc32(crc, mom, n_train * ds);
        int r = check_trailer(W, path, tr, crc, CKPT_END, err);
        if (r < 0)
                return r;

        /* all checked: apply */
        struct bd_backend *be = m->be;
        if (bd_model_set_params(m, params) < 0 ||
            (o && be->ops->copy(be, o->mom, be->dev, mom, BD_CPU, n_train * ds) < 0) || be->ops->sync(be) < 0)
                return bd_err_set(err, -EIO, "%s '%s': %s", W, path, be->err.msg);
        if (o) {
                o->iter = iter;
                o->loss_scale = loss_scale;
                o->good_steps = good;
        }
        snprintf(meta->model, sizeof(meta->model), "%s", model);
        meta->iter = iter;
        meta->epoch = epoch;
        meta->rng = rng;
        return 0;
}

/* ---- pretrained weights ------------------------------------------------------------------ */

struct wentry {
        char name[256];
        uint32_t ndim;
        int64_t dims[8];
        int64_t numel;
        const float *data;
};

static int ignored(const char *name, const char *const *ignore)
{
        for (; ignore && *ignore; ignore++)
                if (strncmp(name, *ignore, strlen(*ignore)) == 0)
                        return 1;
        return 0;
}

static int weights_load(const char *path, struct bd_model *m, const char *prefix, const char *const *ignore,
                        unsigned flags, struct bd_weights_report *rep, struct bd_err *err)
{
        const char *W = "weights";
        _cleanup_free_ char *buf = NULL;
        size_t len;
        struct bd_err rerr;
        int r = fs_read_file(path, (size_t)4 << 30, &buf, &len, &rerr);
        if (r < 0)
                return bd_err_set(err, r, "%s", rerr.msg);
        if (len < 80 + TRAILER || memcmp(buf, WT_MAGIC, 8) != 0)
                return bd_err_set(err, -EBADMSG, "%s '%s': not a benchd weights file", W, path);
        struct rb b = { (const unsigned char *)buf, len - TRAILER, 8 };
        uint32_t version = rb_u32(&b), nt = rb_u32(&b);
        if (version != BD_WEIGHTS_VERSION)
                return bd_err_set(err, -EPROTO, "%s '%s': format version %u, this build reads version %d", W, path,
                                  version, BD_WEIGHTS_VERSION);
        struct bd_weights_report rp = { 0 };
        rb_get(&b, rp.source, 64);
        if (!memchr(rp.source, 0, sizeof(rp.source)))
                return bd_err_set(err, -EBADMSG, "%s '%s': the source name is not NUL-terminated in its 64 bytes", W,
                                  path);
        if (nt > 100000)
                return bd_err_set(err, -EBADMSG, "%s '%s': implausible header", W, path);
        _cleanup_free_ struct wentry *e = xcalloc(nt + 1, sizeof(*e));
        for (uint32_t i = 0; i < nt; i++) {
                uint16_t nl = 0;
                unsigned char ty = 0, nd = 0;
                if (rb_get(&b, &nl, 2) < 0 || nl >= sizeof(e[i].name) || rb_get(&b, e[i].name, nl) < 0 ||
                    rb_get(&b, &ty, 1) < 0 || rb_get(&b, &nd, 1) < 0)
                        return bd_err_set(err, -EBADMSG, "%s '%s': truncated in tensor %u", W, path, i);
                if (ty != 0 || nd > 8)
                        return bd_err_set(err, -EBADMSG, "%s '%s': tensor '%s': unsupported type %u or %u dimensions",
                                          W, path, e[i].name, ty, nd);
                e[i].ndim = nd;
                for (unsigned k = 0; k < nd; k++) {
                        e[i].dims[k] = (int64_t)rb_u64(&b);
                        if (e[i].dims[k] < 0 || e[i].dims[k] > (1 << 30))
                                return bd_err_set(err, -EBADMSG, "%s '%s': tensor '%s': bad dimension", W, path,
                                                  e[i].name);
                }
                /* the element count, each product checked against what the
                 * file has left: 8 dimensions of 2^30 overflow 64 bits */
                int64_t left = (int64_t)((b.n - b.at) / 4);
                e[i].numel = 1;
                for (unsigned k = 0; k < nd; k++) {
                        if (e[i].dims[k] != 0 && e[i].numel > left / e[i].dims[k])
                                return bd_err_set(err, -EBADMSG, "%s '%s': truncated in tensor '%s'", W, path,
                                                  e[i].name);
                        e[i].numel *= e[i].dims[k];
                }
                size_t bytes = (size_t)e[i].numel * 4;
                if (bytes > b.n - b.at)
                        return bd_err_set(err, -EBADMSG, "%s '%s': truncated in tensor '%s'", W, path, e[i].name);
                e[i].data = (const float *)(b.p + b.at);
                b.at += bytes;
        }
        if (b.at != b.n)
                return bd_err_set(err, -EBADMSG, "%s '%s': %zu unexpected bytes before the end", W, path, b.n - b.at);
        if ((r = check_trailer(W, path, (const unsigned char *)buf + len - TRAILER,
                               bd_crc32(0, buf, len - TRAILER), WT_END, err)) < 0)
                return r;

        /* match against the model, then copy */
        size_t ds = bd_dtype_size(m->dtype);
        _cleanup_free_ void *host = xmalloc(m->n_all * ds + 1);
        if (bd_model_get_params(m, host) < 0 || m->be->ops->sync(m->be) < 0)
                return bd_err_set(err, -EIO, "%s '%s': %s", W, path, m->be->err.msg);
        for (uint32_t i = 0; i < nt; i++) {
                char full[BD_NAME_MAX + 256];
                snprintf(full, sizeof(full), "%s%s", prefix ? prefix : "", e[i].name);
                int id = bd_model_find(m, full);
                if (id < 0) {
                        if ((flags & BD_WEIGHTS_STRICT) && !ignored(e[i].name, ignore))
                                return bd_err_set(err, -EBADMSG, "%s '%s': tensor '%s' is not in the model", W, path,
                                                  e[i].name);
                        rp.skipped++;
                        continue;
                }
                const struct bd_param *p = &m->p[id];
                int same = e[i].ndim == (uint32_t)p->ndim;
                for (int k = 0; k < p->ndim && same; k++)
                        same = e[i].dims[k] == p->dims[k];
                if (!same) {
                        char a[96], c[96];
                        shape_str(a, sizeof(a), e[i].ndim > 4 ? 4 : e[i].ndim, e[i].dims);
                        shape_str(c, sizeof(c), (uint32_t)p->ndim, p->dims);
                        return bd_err_set(err, -EBADMSG, "%s '%s': tensor '%s' is %s, the model's '%s' is %s", W, path,
                                          e[i].name, a, full, c);
                }
                for (int64_t j = 0; j < p->numel; j++) {
                        float v;
                        memcpy(&v, e[i].data + j, 4);
                        if (m->dtype == BD_F64)
                                ((double *)host)[p->offset + (size_t)j] = v;
                        else
                                ((float *)host)[p->offset + (size_t)j] = v;
                }
                rp.loaded++;
        }
        if (flags & BD_WEIGHTS_COMPLETE) {
                size_t pl = prefix ? strlen(prefix) : 0;
                for (int i = 0; i < m->np; i++) {
                        const char *name = m->p[i].name;
                        if (pl && strncmp(name, prefix, pl) != 0)
                                continue;
                        int found = 0;
                        for (uint32_t k = 0; k < nt && !found; k++)
                                found = strcmp(e[k].name, name + pl) == 0;
                        if (!found)
                                return bd_err_set(err, -EBADMSG, "%s '%s': has no tensor '%s' for the model's '%s'", W,
                                                  path, name + pl, name);
                }
        }
        if (bd_model_set_params(m, host) < 0 || m->be->ops->sync(m->be) < 0)
                return bd_err_set(err, -EIO, "%s '%s': %s", W, path, m->be->err.msg);
        if (rep)
                *rep = rp;
        return 0;
}

/* The messages quote tensor names read from the file. */
int bd_ckpt_load(const char *path, struct bd_model *m, struct bd_sgd *o, struct bd_ckpt_meta *meta,
                 struct bd_err *err)
{
        return bd_err_printable(err, ckpt_load(path, m, o, meta, err));
}

int bd_weights_load(const char *path, struct bd_model *m, const char *prefix, const char *const *ignore,
                    unsigned flags, struct bd_weights_report *rep, struct bd_err *err)
{
        return bd_err_printable(err, weights_load(path, m, prefix, ignore, flags, rep, err));
}

int bd_weights_save(const char *path, struct bd_model *m, const char *prefix, const char *source, struct bd_err *err)
{
        size_t ds = bd_dtype_size(m->dtype), pl = prefix ? strlen(prefix) : 0;
        _cleanup_free_ void *host = xmalloc(m->n_all * ds + 1);
        if (bd_model_get_params(m, host) < 0 || m->be->ops->sync(m->be) < 0)
                return bd_err_set(err, -EIO, "weights '%s': %s", path, m->be->err.msg);
        struct wb b = { 0 };
        wb_put(&b, WT_MAGIC, 8);
        wb_u32(&b, BD_WEIGHTS_VERSION);
        size_t count_at = b.n;
        wb_u32(&b, 0);
        wb_str(&b, source ? source : "", 64);
        uint32_t n = 0;
        for (int i = 0; i < m->np; i++) {
                const struct bd_param *p = &m->p[i];
                if (pl && strncmp(p->name, prefix, pl) != 0)
                        continue;
                uint16_t nl = (uint16_t)strlen(p->name + pl);
                wb_put(&b, &nl, 2);
                wb_put(&b, p->name + pl, nl);
                unsigned char ty = 0, nd = (unsigned char)p->ndim;
                wb_put(&b, &ty, 1);
                wb_put(&b, &nd, 1);
                for (int k = 0; k < p->ndim; k++)
                        wb_u64(&b, (uint64_t)p->dims[k]);
                for (int64_t j = 0; j < p->numel; j++) {
                        float v = m->dtype == BD_F64 ? (float)((double *)host)[p->offset + (size_t)j]
                                                     : ((float *)host)[p->offset + (size_t)j];
                        wb_put(&b, &v, 4);
                }
                n++;
        }
        memcpy(b.p + count_at, &n, 4);
        struct piece pc = { b.p, b.n };
        int r = write_atomic(path, &pc, 1, WT_END, err);
        free(b.p);
        return r;
}

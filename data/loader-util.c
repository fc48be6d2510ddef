/* loader-util.c: the pieces both data loaders use (see loader-util.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader-util.h"
#include "macro.h"
#include "parallel.h"
#include "rng.h"

struct file_check {
        const struct coco_index *x;
        const char *dir;
        uint8_t *missing;
};

static void check_file(void *ctx, size_t i, int thread)
{
        struct file_check *fc = ctx;
        _cleanup_free_ char *p = xasprintf("%s/%s", fc->dir, coco_index_str(fc->x, fc->x->images[i].file_name));
        struct stat st;
        fc->missing[i] = stat(p, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0;
}

void loader_check_files(const struct coco_index *x, const char *images_dir, int threads, uint8_t *missing)
{
        struct file_check fc = { x, images_dir, missing };
        parallel_for(x->n_images, threads > 0 ? threads : 1, check_file, &fc);
}

int loader_read_file(const char *path, uint8_t **buf, size_t *cap, size_t *ret_len, struct bd_err *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return bd_err_set(err, -errno, "cannot open: %s", strerror(errno));
        struct stat st;
        if (fstat(fd, &st) < 0)
                return bd_err_set(err, -errno, "cannot stat: %s", strerror(errno));
        if (st.st_size <= 0 || st.st_size > (1 << 30))
                return bd_err_set(err, -EBADMSG, "file of %lld bytes", (long long)st.st_size);
        size_t n = (size_t)st.st_size;
        if (n > *cap) {
                free(*buf);
                *cap = n + n / 4;
                *buf = xmalloc(*cap);
        }
        size_t got = 0;
        while (got < n) {
                ssize_t r = read(fd, *buf + got, n - got);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return bd_err_set(err, -errno, "cannot read: %s", strerror(errno));
                if (r == 0)
                        break;
                got += (size_t)r;
        }
        *ret_len = got;
        return 0;
}

int loader_read_jpeg(struct loader_reader *rd, const char *images_dir, const char *name, struct jpeg_info *info,
                     struct bd_err *err)
{
        size_t need = strlen(images_dir) + strlen(name) + 2;
        if (need > rd->path_cap) {
                free(rd->path);
                rd->path_cap = need + 64;
                rd->path = xmalloc(rd->path_cap);
        }
        snprintf(rd->path, rd->path_cap, "%s/%s", images_dir, name);
        rd->len = 0;
        int r = loader_read_file(rd->path, &rd->file, &rd->file_cap, &rd->len, err);
        if (r < 0)
                return r;
        return jpeg_read_info(rd->dec, rd->file, rd->len, info, err);
}

void loader_reader_release(struct loader_reader *rd)
{
        rd->dec = jpeg_decoder_free(rd->dec);
        free(rd->file);
        free(rd->path);
        *rd = (struct loader_reader){ 0 };
}

void loader_permutation(uint32_t *p, size_t n, uint64_t seed, long epoch, bool shuffle)
{
        for (size_t i = 0; i < n; i++)
                p[i] = (uint32_t)i;
        if (!shuffle)
                return;
        struct bd_rng r;
        bd_rng_seed_key(&r, bd_rng_mix3(seed, (uint64_t)epoch, 0x7065726d75746531ull));    /* "permute1" */
        for (size_t i = n - 1; i > 0; i--) {
                size_t k = (size_t)bd_rng_pick(&r, i + 1);
                uint32_t t = p[i];
                p[i] = p[k];
                p[k] = t;
        }
}

int loader_no_image(struct bd_err *err, const char *images_dir, long corrupt)
{
        return bd_err_set(err, -ENODATA, "%s: no image of the dataset can be decoded (%ld corrupt)", images_dir,
                          corrupt);
}

void *loader_image_alloc(void *(*alloc)(size_t size, void *ctx), void *ctx, size_t n)
{
        if (alloc)
                return alloc(n, ctx);
        size_t rounded = (n + 63) / 64 * 64;
        void *p = aligned_alloc(64, rounded ? rounded : 64);
        if (!p) {
                fprintf(stderr, "out of memory allocating %zu bytes\n", n);
                abort();
        }
        return p;
}

void loader_image_free(void *(*alloc)(size_t size, void *ctx), void (*dealloc)(void *p, void *ctx), void *ctx,
                       void *p)
{
        if (alloc && dealloc)
                dealloc(p, ctx);
        else if (!alloc)
                free(p);
}

void loader_vwarn(struct loader_warnings *w, int kind, const char *fmt, va_list ap)
{
        int max = w->max > 0 ? w->max : 5;
        if (!w->warn || w->warned[kind]++ >= max)
                return;
        _cleanup_free_ char *msg = xvasprintf(fmt, ap);
        w->warn(w->ctx, msg);
}

void loader_warn(struct loader_warnings *w, int kind, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        loader_vwarn(w, kind, fmt, ap);
        va_end(ap);
}

void loader_warn_summary(struct loader_warnings *w)
{
        int max = w->max > 0 ? w->max : 5;
        for (int k = 0; k < LOADER_WARN_KINDS && w->what && w->what[k]; k++)
                if (w->warn && w->warned[k] > max) {
                        _cleanup_free_ char *msg = xasprintf("... %d more %s not shown", w->warned[k] - max, w->what[k]);
                        w->warn(w->ctx, msg);
                        w->warned[k] = max;     /* the next summary counts new ones only */
                }
}

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

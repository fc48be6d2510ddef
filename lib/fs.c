/* fs.c: reading files, atomic writes, mkdir -p. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"

int fs_read_file(const char *path, size_t max, char **ret_data, size_t *ret_len, struct bd_err *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return bd_err_set(err, -errno, "cannot open '%s': %s", path, strerror(errno));
        size_t cap = 4096, len = 0;
        _cleanup_free_ char *data = xmalloc(cap);
        for (;;) {
                if (len + 1 >= cap) {
                        cap *= 2;
                        data = xrealloc(data, cap);
                }
                ssize_t n = read(fd, data + len, cap - len - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return bd_err_set(err, -errno, "cannot read '%s': %s", path, strerror(errno));
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len > max)
                        return bd_err_set(err, -EFBIG, "'%s': larger than %zu bytes", path, max);
        }
        data[len] = '\0';
        *ret_data = TAKE_PTR(data);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int fs_write_all(int fd, const void *data, size_t len)
{
        const char *p = data;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

int fs_pread_all(int fd, void *buf, size_t len, off_t off)
{
        char *p = buf;
        while (len > 0) {
                ssize_t n = pread(fd, p, len, off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EIO;
                p += n;
                off += n;
                len -= (size_t)n;
        }
        return 0;
}

/* What is at path when it is there but no regular file (or a link to
 * one): a device, a FIFO or a socket takes the bytes where it is (rename
 * would put a regular file in its place: /dev/null, for one); a directory is
 * an error.  1: written, 0: a regular file or nothing there, to be replaced. */
static int write_in_place(const char *path, const void *data, size_t len, struct bd_err *err)
{
        struct stat st;
        if (stat(path, &st) < 0 || S_ISREG(st.st_mode))
                return 0;
        if (S_ISDIR(st.st_mode))
                return bd_err_set(err, -EISDIR, "cannot write '%s': it is a directory", path);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        int r = fd < 0 ? -errno : fs_write_all(fd, data, len);
        if (r == 0 && close(TAKE_FD(fd)) < 0)
                r = -errno;
        if (r < 0)
                return bd_err_set(err, r, "cannot write '%s': %s", path, strerror(-r));
        return 1;
}

static int write_tmp_rename(const char *path, const void *data, size_t len, mode_t mode, bool sync,
                            struct bd_err *err)
{
        int w = write_in_place(path, data, len, err);
        if (w != 0)
                return w < 0 ? w : 0;
        _cleanup_free_ char *tmp = xasprintf("%s.tmp.XXXXXX", path);
        _cleanup_close_ int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return bd_err_set(err, -errno, "cannot create a file next to '%s': %s", path, strerror(errno));
        int r = fs_write_all(fd, data, len);
        if (r == 0 && fchmod(fd, mode) < 0)
                r = -errno;
        if (r == 0 && sync && fsync(fd) < 0)
                r = -errno;
        if (r == 0 && close(TAKE_FD(fd)) < 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                return bd_err_set(err, r, "cannot write '%s': %s", path, strerror(-r));
        }
        return 0;
}

int fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode, struct bd_err *err)
{
        return write_tmp_rename(path, data, len, mode, true, err);
}

int fs_write_replace(const char *path, const void *data, size_t len, mode_t mode, struct bd_err *err)
{
        return write_tmp_rename(path, data, len, mode, false, err);
}

int fs_mkdir_p(const char *path, mode_t mode)
{
        struct stat st;
        /* the common case: it is there already (one syscall, not one per component) */
        if (stat(path, &st) == 0)
                return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
        _cleanup_free_ char *p = xstrdup(path);
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

char *fs_exe_dir(void)
{
        char buf[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
        if (n <= 0)
                return NULL;
        buf[n] = '\0';
        return xstrdup(dirname(buf));
}

char *fs_path_clean(const char *path)
{
        char cwd[4096];
        _cleanup_free_ char *abs = NULL;
        if (path[0] != '/') {
                if (!getcwd(cwd, sizeof(cwd)))
                        return xstrdup(path); /* left relative: never made absolute under '/' */
                abs = xasprintf("%s/%s", cwd, path);
        }
        const char *p = abs ? abs : path;
        char *out = xmalloc(strlen(p) + 2), *o = out;
        while (*p) {
                while (*p == '/')
                        p++;
                size_t n = strcspn(p, "/");
                if (n == 0 || (n == 1 && p[0] == '.')) {
                        p += n;
                        continue;
                }
                *o++ = '/';
                memcpy(o, p, n);
                o += n;
                p += n;
        }
        if (o == out)
                *o++ = '/';
        *o = '\0';
        return out;
}

int fs_write_new(const char *path, const void *data, size_t len, mode_t mode, struct bd_err *err)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd < 0)
                return bd_err_set(err, -errno, "cannot create '%s': %s", path, strerror(errno));
        int r = fs_write_all(fd, data, len);
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(path);
                return bd_err_set(err, r, "cannot write '%s': %s", path, strerror(-r));
        }
        return 0;
}

/* fuzz.c: the harnesses' shared helpers (fuzz.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "strutil.h"

static char *dir;

static void dir_remove(void);

void fuzz_fail(const char *file, int line, const char *fmt, ...)
{
        va_list ap;
        fprintf(stderr, "%s:%d: broken promise: ", file, line);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        dir_remove();           /* abort() runs no atexit() handler */
        abort();
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) flag;
        (void) ftw;
        (void) remove(path);
        return 0;
}

static void dir_remove(void)
{
        if (dir)
                (void) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_dir(void)
{
        if (dir)
                return dir;
        /* tmpfs first: some parsers write and fsync files every execution */
        const char *base = getenv("FUZZ_TMPDIR");
        if (!base || !*base)
                base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
        if (!base || !*base)
                base = "/tmp";
        char *t = xasprintf("%s/benchd-fuzz.XXXXXX", base);
        if (!mkdtemp(t))
                fuzz_fail(__FILE__, __LINE__, "cannot create a directory in '%s': %s", base, strerror(errno));
        dir = t;
        atexit(dir_remove);
        return dir;
}

char *fuzz_path(const char *name)
{
        return xasprintf("%s/%s", fuzz_dir(), name);
}

void fuzz_write(const char *path, const void *data, size_t size)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        const char *p = data;
        if (fd < 0)
                fuzz_fail(__FILE__, __LINE__, "cannot write '%s': %s", path, strerror(errno));
        while (size) {
                ssize_t n = write(fd, p, size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        fuzz_fail(__FILE__, __LINE__, "cannot write '%s': %s", path, strerror(errno));
                p += n;
                size -= (size_t)n;
        }
}

char *fuzz_str(const uint8_t *data, size_t size)
{
        char *s = xmalloc(size + 1);
        if (size)
                memcpy(s, data, size);
        s[size] = '\0';
        return s;
}

bool fuzz_utf8_valid(const char *s)
{
        while (*s) {
                size_t n = str_utf8_char_len(s);
                if (n == 0)
                        return false;
                s += n;
        }
        return true;
}

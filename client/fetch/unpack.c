/* unpack.c: archives unpacked in parallel with libarchive (unpack.h). */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "buf.h"
#include "macro.h"
#include "unpack.h"

#define BLOCK (1 << 20)
#define MAX_THREADS 64

struct shared {
        const char *archive, *stage;
        const struct unpack_opts *o;
        bool zip;
        int nthreads;
        pthread_mutex_t lock;
        bool failed;
        struct bd_err err;
        uint64_t done, total, reported;
        uint64_t files, dirs;
};

struct worker {
        struct shared *sh;
        int index;
        pthread_t tid;
};

static void sh_fail(struct shared *sh, int code, const char *fmt, ...) _printf_(3, 4);
static void sh_fail(struct shared *sh, int code, const char *fmt, ...)
{
        pthread_mutex_lock(&sh->lock);
        if (!sh->failed) {
                __atomic_store_n(&sh->failed, true, __ATOMIC_RELAXED);
                char msg[sizeof(sh->err.msg)];
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(msg, sizeof(msg), fmt, ap);
                va_end(ap);
                bd_err_set(&sh->err, code, "%s", msg);
        }
        pthread_mutex_unlock(&sh->lock);
}

/* a member's name as messages may show it: one line, printable */
static const char *shown(const char *name, char buf[160])
{
        size_t n = 0;
        for (const char *p = name ? name : ""; *p && n + 4 < 160; p++)
                buf[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
        buf[n] = '\0';
        return buf;
}

static bool is_zip(const char *path)
{
        unsigned char m[4] = { 0 };
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        ssize_t r = read(fd, m, 4);
        close(fd);
        return r == 4 && m[0] == 'P' && m[1] == 'K' && m[2] == 3 && m[3] == 4;
}

static struct archive *reader(const char *path, bool zip, struct bd_err *err)
{
        struct archive *a = archive_read_new();
        if (!a) {
                bd_err_set(err, -ENOMEM, "archive_read_new failed");
                return NULL;
        }
        if (zip)
                archive_read_support_format_zip_seekable(a);
        else {
                archive_read_support_format_all(a);
                archive_read_support_filter_all(a);
        }
        if (archive_read_open_filename(a, path, BLOCK) != ARCHIVE_OK) {
                bd_err_set(err, -EINVAL, "%s: %s", path, archive_error_string(a) ? archive_error_string(a) : "unreadable");
                archive_read_free(a);
                return NULL;
        }
        return a;
}

/* A member's path, made safe: relative, no "..", no empty components. */
static bool path_ok(const char *p)
{
        if (!p || !*p || *p == '/' || strlen(p) > 4000)
                return false;
        const char *s = p;
        while (*s) {
                const char *e = strchr(s, '/');
                size_t n = e ? (size_t)(e - s) : strlen(s);
                if ((n == 2 && s[0] == '.' && s[1] == '.') || (n == 0 && e && e[1]))
                        return false;
                if (!e)
                        break;
                s = e + 1;
        }
        return true;
}

static int mkdir_parents(char *path)
{
        for (char *p = path + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                int r = mkdir(path, 0755);
                *p = '/';
                if (r < 0 && errno != EEXIST)
                        return -errno;
        }
        return 0;
}

static int extract_file(struct shared *sh, struct archive *a, struct archive_entry *e, const char *name)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", sh->stage, name);
        char nb[160];
        name = shown(name, nb);         /* for the messages below; path holds the real one */
        int r = mkdir_parents(path);
        if (r < 0) {
                sh_fail(sh, r, "%s: member %s: cannot create its directory: %s", sh->archive, name, strerror(-r));
                return -1;
        }
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0) {
                sh_fail(sh, -errno, "%s: member %s: cannot create it: %s", sh->archive, name, strerror(errno));
                return -1;
        }
        const void *blk;
        size_t len;
        la_int64_t off;
        uint64_t written = 0;
        for (;;) {
                if (sh->o->stop && *sh->o->stop) {
                        close(fd);
                        sh_fail(sh, -EINTR, "interrupted");
                        return -1;
                }
                int ar = archive_read_data_block(a, &blk, &len, &off);
                if (ar == ARCHIVE_EOF)
                        break;
                if (ar != ARCHIVE_OK) {
                        close(fd);
                        sh_fail(sh, -EIO, "%s: member %s: %s", sh->archive, name,
                                archive_error_string(a) ? archive_error_string(a) : "damaged");
                        return -1;
                }
                const char *p = blk;
                size_t left = len;
                while (left) {
                        ssize_t w = pwrite(fd, p, left, off);
                        if (w < 0) {
                                if (errno == EINTR)
                                        continue;
                                int er = errno;
                                close(fd);
                                sh_fail(sh, -er, "%s: member %s: cannot write it: %s", sh->archive, name, strerror(er));
                                return -1;
                        }
                        p += w;
                        off += w;
                        left -= (size_t)w;
                }
                written += len;
                uint64_t d = __atomic_add_fetch(&sh->done, len, __ATOMIC_RELAXED);
                if (sh->o->progress && d - __atomic_load_n(&sh->reported, __ATOMIC_RELAXED) >= (4u << 20)) {
                        __atomic_store_n(&sh->reported, d, __ATOMIC_RELAXED);
                        sh->o->progress(sh->o->arg, d, sh->total);
                }
        }
        /* a member that ends in a hole */
        if (archive_entry_size_is_set(e) && (uint64_t)archive_entry_size(e) > written &&
            ftruncate(fd, archive_entry_size(e)) < 0) {
                int er = errno;
                close(fd);
                sh_fail(sh, -er, "%s: member %s: %s", sh->archive, name, strerror(er));
                return -1;
        }
        if (archive_entry_mtime_is_set(e)) {
                struct timespec ts[2] = { { archive_entry_mtime(e), archive_entry_mtime_nsec(e) },
                                          { archive_entry_mtime(e), archive_entry_mtime_nsec(e) } };
                futimens(fd, ts);
        }
        if (close(fd) < 0) {
                sh_fail(sh, -errno, "%s: member %s: cannot write it: %s", sh->archive, name, strerror(errno));
                return -1;
        }
        return 0;
}

static void *work(void *arg)
{
        struct worker *w = arg;
        struct shared *sh = w->sh;
        struct bd_err err;
        struct archive *a = reader(sh->archive, sh->zip, &err);
        if (!a) {
                sh_fail(sh, -EINVAL, "%s", err.msg);
                return NULL;
        }
        struct archive_entry *e;
        uint64_t files = 0, dirs = 0;
        for (long i = 0; !__atomic_load_n(&sh->failed, __ATOMIC_RELAXED); i++) {
                int r = archive_read_next_header(a, &e);
                if (r == ARCHIVE_EOF)
                        break;
                if (r != ARCHIVE_OK) {
                        sh_fail(sh, -EIO, "%s: %s", sh->archive,
                                archive_error_string(a) ? archive_error_string(a) : "damaged");
                        break;
                }
                if (i % sh->nthreads != w->index)
                        continue;       /* another thread's: skipped by seeking */
                const char *name = archive_entry_pathname(e);
                char nb[160];
                if (!path_ok(name)) {
                        sh_fail(sh, -EINVAL, "%s: member '%s': not a relative path inside the archive", sh->archive,
                                shown(name, nb));
                        break;
                }
                if (archive_entry_hardlink(e)) {
                        sh_fail(sh, -EINVAL, "%s: member '%s': a hard link, refused (files and directories only)",
                                sh->archive, shown(name, nb));
                        break;
                }
                mode_t type = archive_entry_filetype(e);
                if (type == AE_IFDIR) {
                        _cleanup_free_ char *path = xasprintf("%s/%s/", sh->stage, name);
                        int mr = mkdir_parents(path);
                        if (mr < 0) {
                                sh_fail(sh, mr, "%s: member %s: %s", sh->archive, shown(name, nb), strerror(-mr));
                                break;
                        }
                        dirs++;
                } else if (type == AE_IFREG) {
                        if (name[strlen(name) - 1] == '/') {
                                sh_fail(sh, -EINVAL, "%s: member '%s': a file named as a directory", sh->archive,
                                        shown(name, nb));
                                break;
                        }
                        if (extract_file(sh, a, e, name) < 0)
                                break;
                        files++;
                } else {
                        sh_fail(sh, -EINVAL, "%s: member '%s': a %s, refused (files and directories only)", sh->archive,
                                shown(name, nb), type == AE_IFLNK ? "symbolic link" : "special file");
                        break;
                }
        }
        archive_read_free(a);
        pthread_mutex_lock(&sh->lock);
        sh->files += files;
        sh->dirs += dirs;
        pthread_mutex_unlock(&sh->lock);
        return NULL;
}

/* A member's path as it lands: "./" and empty components dropped ("a//./b"
 * is "a/b"), so two spellings of one file compare equal. */
static char *normal_path(const char *path)
{
        char *out = xmalloc(strlen(path) + 1), *o = out;
        for (const char *s = path; *s;) {
                size_t n = strcspn(s, "/");
                if (n > 0 && !(n == 1 && s[0] == '.')) {
                        if (o > out)
                                *o++ = '/';
                        memcpy(o, s, n);
                        o += n;
                }
                s += n;
                while (*s == '/')
                        s++;
        }
        *o = '\0';
        return out;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

struct strs {
        char **v;
        size_t n, cap;
};

static void strs_add(struct strs *a, char *s)
{
        if (a->n == a->cap) {
                a->cap = a->cap ? 2 * a->cap : 1024;
                a->v = xrealloc(a->v, a->cap * sizeof(*a->v));
        }
        a->v[a->n++] = s;
}

static void strs_free(struct strs *a)
{
        for (size_t i = 0; i < a->n; i++)
                free(a->v[i]);
        free(a->v);
}

/* Members, bytes, and with tops the top-level names ("NAME\n" each, ".."
 * and the like left to the member check that names them); and (tops given)
 * no file twice: threads taking every Nth member would write one file at
 * once. */
static int measure(const char *archive, uint64_t *files, uint64_t *bytes, struct bd_buf *tops, struct bd_err *err)
{
        *files = *bytes = 0;
        struct archive *a = reader(archive, is_zip(archive), err);
        if (!a)
                return -1;
        struct archive_entry *e;
        int r;
        struct strs names = { 0 }, top = { 0 };
        while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
                const char *name = archive_entry_pathname(e);
                if (archive_entry_filetype(e) == AE_IFREG) {
                        (*files)++;
                        if (archive_entry_size_is_set(e))
                                *bytes += (uint64_t)archive_entry_size(e);
                }
                if (!tops || !name || !path_ok(name))
                        continue;       /* the member check names what is not a path inside */
                char *norm = normal_path(name);
                size_t n = strcspn(norm, "/");
                if (n > 0 && n <= 255 && !(n == 2 && norm[0] == '.' && norm[1] == '.') && !memchr(norm, '\n', n))
                        strs_add(&top, xstrndup(norm, n));
                if (archive_entry_filetype(e) == AE_IFREG)
                        strs_add(&names, norm);
                else
                        free(norm);
        }
        if (r != ARCHIVE_EOF)
                bd_err_set(err, -EIO, "%s: %s", archive, archive_error_string(a) ? archive_error_string(a) : "damaged");
        archive_read_free(a);
        if (r == ARCHIVE_EOF && names.n > 1) {
                qsort(names.v, names.n, sizeof(*names.v), cmp_str);
                for (size_t i = 1; i < names.n && r == ARCHIVE_EOF; i++)
                        if (streq(names.v[i - 1], names.v[i])) {
                                char nb[160];
                                bd_err_set(err, -EINVAL, "%s: member '%s' is in it twice: refused (which one is meant?)",
                                           archive, shown(names.v[i], nb));
                                r = ARCHIVE_FATAL;
                        }
        }
        if (r == ARCHIVE_EOF && top.n > 0) {
                qsort(top.v, top.n, sizeof(*top.v), cmp_str);
                for (size_t i = 0; i < top.n; i++)
                        if (i == 0 || !streq(top.v[i - 1], top.v[i]))
                                buf_printf(tops, "%s\n", top.v[i]);
        }
        strs_free(&names);
        strs_free(&top);
        return r == ARCHIVE_EOF ? 0 : -1;
}

int unpack_measure(const char *archive, uint64_t *files, uint64_t *bytes, struct bd_err *err)
{
        return measure(archive, files, bytes, NULL, err);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        remove(path);
        return 0;
}

static void rm_tree(const char *path)
{
        nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
}

static int cpus(void)
{
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof(set), &set) == 0)
                return CPU_COUNT(&set);
        return 1;
}

int unpack_archive(const char *archive, const char *dest, const struct unpack_opts *o, struct unpack_stats *st,
                   struct bd_err *err)
{
        memset(st, 0, sizeof(*st));
        const char *base = strrchr(archive, '/');
        base = base ? base + 1 : archive;
        struct shared sh = { .archive = archive, .o = o, .zip = is_zip(archive) };
        _cleanup_free_ char *stage = xasprintf("%s/.unpack-%s", dest, base);
        sh.stage = stage;
        rm_tree(stage);                 /* an earlier call's, killed */
        if (mkdir(stage, 0755) < 0)
                return bd_err_set(err, -errno, "cannot create '%s': %s", stage, strerror(errno));
        uint64_t nfiles = 0;
        _cleanup_buf_ struct bd_buf tops = BD_BUF_INIT;
        if (measure(archive, &nfiles, &sh.total, &tops, err) < 0) {
                rmdir(stage);
                return -1;
        }
        /* what it would put in DEST must not be there yet: said before a
         * member is out, not at the end (nothing is replaced) */
        for (const char *t = tops.s; t && *t;) {
                const char *nl = strchr(t, '\n');
                _cleanup_free_ char *there = xasprintf("%s/%.*s", dest, (int)(nl - t), t);
                struct stat sb;
                if (lstat(there, &sb) == 0) {
                        rmdir(stage);
                        return bd_err_set(err, -EEXIST, "%s: '%s' is already there (not replaced): nothing unpacked",
                                          archive, there);
                }
                t = nl + 1;
        }
        /* the room its members take, as its directory says, before any is out */
        struct statvfs sv;
        if (statvfs(dest, &sv) == 0 && (uint64_t)sv.f_bavail * sv.f_frsize < sh.total) {
                rmdir(stage);
                return bd_err_set(err, -ENOSPC, "%s: its %" PRIu64 " files take %" PRIu64 " bytes, %s has %" PRIu64
                                  " free: nothing unpacked", archive, nfiles, sh.total, dest,
                                  (uint64_t)sv.f_bavail * sv.f_frsize);
        }
        int n = o->threads > 0 ? o->threads : cpus();
        if (!sh.zip || n < 1)
                n = 1;
        if (n > MAX_THREADS)
                n = MAX_THREADS;
        if ((uint64_t)n > nfiles && nfiles > 0)
                n = (int)nfiles;
        sh.nthreads = n;
        pthread_mutex_init(&sh.lock, NULL);
        struct worker w[MAX_THREADS];
        int started = 1;
        for (int i = 0; i < n; i++) {
                w[i] = (struct worker){ .sh = &sh, .index = i };
                if (i > 0 && pthread_create(&w[i].tid, NULL, work, &w[i]) == 0)
                        started++;
                else if (i > 0) {
                        sh_fail(&sh, -EAGAIN, "cannot start unpacking threads");
                        break;
                }
        }
        /* thread 0's share on this thread */
        work(&w[0]);
        for (int i = 1; i < started; i++)
                pthread_join(w[i].tid, NULL);
        pthread_mutex_destroy(&sh.lock);
        if (sh.failed) {
                rm_tree(stage);
                *err = sh.err;
                return -1;
        }
        if (o->progress)
                o->progress(o->arg, sh.done, sh.total);
        /* every member out: the top-level entries into place */
        DIR *d = opendir(stage);
        if (!d) {
                int er = errno;
                rm_tree(stage);
                return bd_err_set(err, -er, "cannot read '%s': %s", stage, strerror(er));
        }
        struct dirent *de;
        int r = 0;
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                _cleanup_free_ char *from = xasprintf("%s/%s", stage, de->d_name);
                _cleanup_free_ char *to = xasprintf("%s/%s", dest, de->d_name);
                if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) < 0) {
                        r = bd_err_set(err, -errno, "%s: cannot move '%s' into place: %s%s", archive, to,
                                       strerror(errno), errno == EEXIST ? " (already there: not replaced)" : "");
                        break;
                }
        }
        closedir(d);
        rm_tree(stage);
        if (r < 0)
                return -1;
        st->files = sh.files;
        st->tops = buf_detach(&tops);
        st->dirs = sh.dirs;
        st->bytes = sh.done;
        st->threads = sh.nthreads;
        return 0;
}

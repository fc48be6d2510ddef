/* tree.c: parallel directory tree scan and symlink-free opens. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "manifest.h"
#include "tree.h"

#define STAT_BATCH 256

/* ---- opening without following symlinks ------------------------------------ */

static atomic_int have_openat2 = 1;

static int open_walk(int rootfd, const char *rel, int flags, mode_t mode)
{
        /* the fallback: one component at a time, O_NOFOLLOW, no ".." */
        _cleanup_free_ char *copy = xstrdup(rel);
        _cleanup_close_ int dir = -1;
        int at = rootfd;
        char *p = copy;
        for (;;) {
                char *slash = strchr(p, '/');
                if (slash)
                        *slash = '\0';
                if (!strcmp(p, "..") || !*p)
                        return -EXDEV;
                int fd;
                if (slash)
                        fd = openat(at, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                else
                        fd = openat(at, p, flags | O_NOFOLLOW | O_CLOEXEC, mode);
                if (fd < 0)
                        return -errno;
                if (dir >= 0)
                        close(dir);
                dir = fd;
                at = fd;
                if (!slash)
                        return TAKE_FD(dir);
                p = slash + 1;
        }
}

int tree_open_beneath(int rootfd, const char *rel, int flags, mode_t mode)
{
        if (!*rel)
                rel = ".";
        if (atomic_load_explicit(&have_openat2, memory_order_relaxed)) {
                struct open_how how = {
                        .flags = (uint64_t)(flags | O_CLOEXEC),
                        .mode = (flags & O_CREAT) ? mode : 0,
                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
                };
                long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
                if (fd >= 0)
                        return (int)fd;
                if (errno != ENOSYS)
                        return -errno;
                atomic_store(&have_openat2, 0);
        }
        if (!strcmp(rel, ".")) {
                int fd = openat(rootfd, ".", flags | O_CLOEXEC, mode);
                return fd < 0 ? -errno : fd;
        }
        return open_walk(rootfd, rel, flags, mode);
}

/* ---- the scan ------------------------------------------------------------------ */

struct vec {
        struct bd_tentry *e;
        size_t n, cap;
};

struct scan {
        struct bd_pool *pool;
        int rootfd;
        unsigned flags;
        const atomic_bool *cancel;
        bd_tree_problem_fn problem;
        void *problem_data;
        pthread_mutex_t lock;           /* serialises problem() */
        struct vec *per_worker;
};

struct dir {
        atomic_int refs;
        int fd;
        char *rel;                      /* "" for the root */
};

struct batch {
        struct scan *scan;
        struct dir *dir;
        size_t n;
        char *names[STAT_BATCH];
};

struct dirtask {
        struct scan *scan;
        char *rel;
};

static void dir_unref(struct dir *d)
{
        if (atomic_fetch_sub(&d->refs, 1) == 1) {
                close(d->fd);
                free(d->rel);
                free(d);
        }
}

static bool cancelled(const struct scan *s)
{
        return s->cancel && atomic_load_explicit(s->cancel, memory_order_relaxed);
}

static void report(struct scan *s, const char *path, int err)
{
        if (!s->problem)
                return;
        pthread_mutex_lock(&s->lock);
        s->problem(s->problem_data, path, err);
        pthread_mutex_unlock(&s->lock);
}

static char *join(const char *dir, const char *name)
{
        return *dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
}

static void scan_dir(void *arg, unsigned worker);

static void stat_batch(void *arg, unsigned worker)
{
        struct batch *b = arg;
        struct scan *s = b->scan;
        struct vec *v = &s->per_worker[worker];
        for (size_t i = 0; i < b->n; i++) {
                _cleanup_free_ char *name = b->names[i];
                if (cancelled(s))
                        continue;
                struct stat st;
                _cleanup_free_ char *path = join(b->dir->rel, name);
                if (fstatat(b->dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT)    /* vanished since listed: as if never there */
                                report(s, path, -errno);
                        continue;
                }
                char *target = NULL;
                if (S_ISLNK(st.st_mode)) {
                        size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 256;
                        for (;;) {
                                target = xrealloc(target, cap);
                                ssize_t n = readlinkat(b->dir->fd, name, target, cap);
                                if (n < 0) {
                                        report(s, path, -errno);
                                        free(target);
                                        target = NULL;
                                        break;
                                }
                                if ((size_t)n < cap) {
                                        target[n] = '\0';
                                        break;
                                }
                                cap *= 2;
                        }
                        if (!target)
                                continue;
                }
                if (v->n == v->cap) {
                        v->cap = v->cap ? 2 * v->cap : 1024;
                        v->e = xrealloc(v->e, v->cap * sizeof(*v->e));
                }
                struct bd_tentry *e = &v->e[v->n++];
                e->path = TAKE_PTR(path);
                e->target = target;
                e->size = (uint64_t)st.st_size;
                e->mtime_sec = st.st_mtim.tv_sec;
                e->mtime_nsec = (uint32_t)st.st_mtim.tv_nsec;
                e->mode = st.st_mode;
                if (S_ISDIR(st.st_mode)) {
                        struct dirtask *t = xmalloc(sizeof(*t));
                        t->scan = s;
                        t->rel = xstrdup(e->path);
                        pool_submit(s->pool, scan_dir, t);
                }
        }
        dir_unref(b->dir);
        free(b);
}

static void scan_dir(void *arg, unsigned worker)
{
        struct dirtask *t = arg;
        struct scan *s = t->scan;
        _cleanup_free_ char *rel = t->rel;
        free(t);
        if (cancelled(s))
                return;
        int fd = tree_open_beneath(s->rootfd, rel, O_RDONLY | O_DIRECTORY, 0);
        if (fd < 0) {
                report(s, *rel ? rel : ".", fd);
                return;
        }
        struct dir *d = xmalloc(sizeof(*d));
        atomic_init(&d->refs, 1);
        d->fd = fd;
        d->rel = TAKE_PTR(rel);
        int lfd = dup(fd);
        DIR *dh = lfd >= 0 ? fdopendir(lfd) : NULL;
        if (!dh) {
                report(s, *d->rel ? d->rel : ".", -errno);
                if (lfd >= 0)
                        close(lfd);
                dir_unref(d);
                return;
        }
        struct batch *b = NULL;
        bool top = !*d->rel;
        for (;;) {
                errno = 0;
                struct dirent *de = readdir(dh);
                if (!de) {
                        if (errno)
                                report(s, *d->rel ? d->rel : ".", -errno);
                        break;
                }
                const char *n = de->d_name;
                if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
                        continue;
                if ((s->flags & TREE_SKIP_RESERVED) && manifest_name_reserved(n, top))
                        continue;
                if (!b) {
                        b = xmalloc(sizeof(*b));
                        b->scan = s;
                        b->dir = d;
                        b->n = 0;
                        atomic_fetch_add(&d->refs, 1);
                }
                b->names[b->n++] = xstrdup(n);
                if (b->n == STAT_BATCH) {
                        pool_submit(s->pool, stat_batch, b);
                        b = NULL;
                }
        }
        closedir(dh);
        if (b) /* the last, partial batch: stat it here rather than queue it */
                stat_batch(b, worker);
        dir_unref(d);
}

static int tentry_cmp(const void *a, const void *b)
{
        return strcmp(((const struct bd_tentry *)a)->path, ((const struct bd_tentry *)b)->path);
}

struct bd_tree_scan *tree_scan_begin(struct bd_pool *pool, int rootfd, unsigned flags, const atomic_bool *cancel,
                                     bd_tree_problem_fn problem, void *problem_data)
{
        struct scan *s = xcalloc(1, sizeof(*s));
        s->pool = pool;
        s->rootfd = rootfd;
        s->flags = flags;
        s->cancel = cancel;
        s->problem = problem;
        s->problem_data = problem_data;
        s->per_worker = xcalloc(pool_size(pool), sizeof(struct vec));
        pthread_mutex_init(&s->lock, NULL);
        struct dirtask *t = xmalloc(sizeof(*t));
        t->scan = s;
        t->rel = xstrdup("");
        pool_submit(pool, scan_dir, t);
        return (struct bd_tree_scan *)s;
}

int tree_scan_end(struct bd_tree_scan *scan, struct bd_tree *ret)
{
        struct scan *s = (struct scan *)scan;
        unsigned nw = pool_size(s->pool);
        pool_wait(s->pool);
        pthread_mutex_destroy(&s->lock);
        size_t total = 0;
        for (unsigned i = 0; i < nw; i++)
                total += s->per_worker[i].n;
        struct bd_tree tr = { xmalloc((total ? total : 1) * sizeof(struct bd_tentry)), 0 };
        for (unsigned i = 0; i < nw; i++) {
                if (s->per_worker[i].n)
                        memcpy(tr.e + tr.n, s->per_worker[i].e, s->per_worker[i].n * sizeof(struct bd_tentry));
                tr.n += s->per_worker[i].n;
                free(s->per_worker[i].e);
        }
        free(s->per_worker);
        bool was_cancelled = cancelled(s);
        free(s);
        if (tr.n > 1)
                qsort(tr.e, tr.n, sizeof(*tr.e), tentry_cmp);
        if (was_cancelled) {
                tree_release(&tr);
                return -ECANCELED;
        }
        *ret = tr;
        return 0;
}

int tree_scan(struct bd_pool *pool, int rootfd, unsigned flags, const atomic_bool *cancel, bd_tree_problem_fn problem,
              void *problem_data, struct bd_tree *ret)
{
        return tree_scan_end(tree_scan_begin(pool, rootfd, flags, cancel, problem, problem_data), ret);
}

void tree_release(struct bd_tree *t)
{
        for (size_t i = 0; i < t->n; i++) {
                free(t->e[i].path);
                free(t->e[i].target);
        }
        free(t->e);
        t->e = NULL;
        t->n = 0;
}

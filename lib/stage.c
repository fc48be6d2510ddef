/* stage.c: the stage job: scan, manifest, plan, transfer, finish. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fs.h"
#include "pool.h"
#include "stage-int.h"
#include "tree.h"

#define BUF_SIZE ((size_t)1 << 20)
#define MAX_PROBLEMS 100000
#define BIG_FILE ((uint64_t)4 << 20)

/* what DST holds at a manifest entry's path */
enum dst_status {
        DST_ABSENT,
        DST_OK,                 /* same type; files: same size and mtime; links: same target */
        DST_DIFFERS,            /* same type, different size, mtime or target */
        DST_WRONG_TYPE,
};

/* what the transfer does for an entry */
enum action {
        ACT_NONE,               /* present and trusted */
        ACT_COPY,
        ACT_VERIFY,             /* checksum DST; recopy when it differs (verify-only: report) */
        ACT_VERIFY_OR_COPY,     /* same size, other mtime: checksum, fix the mtime or recopy */
        ACT_LINK,
        ACT_SKIP,               /* not staged (a link leading out of the tree) */
};

struct item {
        uint8_t dst;            /* enum dst_status */
        uint8_t act;            /* enum action */
        bool need_hash;         /* the source checksum is to be computed */
        bool mode_differs;
        bool dst_is_dir;        /* DST_WRONG_TYPE: what is in the way is a directory */
        bool same_size;         /* DST_DIFFERS files: only the mtime differs */
        bool failed;
};

struct worker {
        void *buf;
        char *ddir;             /* relative path of the cached destination directory */
        int ddir_fd;
        uint64_t seq;           /* temporary names */
};

struct bd_stage {
        struct bd_stage_opts o;
        char *name, *src, *dst, *state_dir;

        atomic_bool stop;       /* workers return early: cancel or fatal error */
        atomic_bool cancelled;
        atomic_int state, phase;
        double t0;              /* monotonic */
        double started;         /* epoch */
        _Atomic double phase_t0;
        atomic_uint_fast64_t phase_bytes0;
        atomic_uint_fast64_t files_total, bytes_total, files_done, bytes_done, files_copied, bytes_copied,
                files_present, files_repaired, files_hashed, bytes_hashed, files_verified, errors, warnings;

        pthread_mutex_t lock;   /* problems, error */
        struct bd_stage_problem *problems;
        size_t nproblems, capproblems;
        char *error;

        int srcfd, dstfd;
        struct bd_pool *pool;
        struct worker *w;
        struct bd_bwlimit *bw;
        struct bd_copier copier;

        struct bd_manifest m;
        char *manifest_path;
        bool manifest_changed;
        bool src_incomplete;    /* a source directory or entry could not be read */
        struct bd_tree stree, dtree;
        struct item *items;
        size_t *order, norder;
        char **suspects;
        size_t nsuspects;
        struct bd_stage_record rec;
        bool have_rec;

        pthread_t thread;
        bool thread_started;
        int result;
        double t_end;           /* monotonic, when the job ended */
        pthread_cond_t ended;   /* with lock; done set */
        bool done;
};

static double now_mono(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_wall(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define ADD(counter, v) atomic_fetch_add_explicit(&s->counter, (v), memory_order_relaxed)
#define GET(counter) atomic_load_explicit(&s->counter, memory_order_relaxed)

static bool stopping(struct bd_stage *s)
{
        return atomic_load_explicit(&s->stop, memory_order_relaxed);
}

/* ---- problems and fatal errors ---------------------------------------------------- */

static enum bd_severity severity_of(struct bd_stage *s, enum bd_problem_kind k)
{
        switch (k) {
        case PROB_SKIPPED:
        case PROB_ATTR:
                return SEV_WARNING;
        case PROB_EXTRA:
                return s->o.mode == STAGE_VERIFY_ONLY ? SEV_ERROR : SEV_WARNING;
        case PROB_REPAIRED:
        case PROB_REMOVED:
                return SEV_NOTE;
        default:
                return SEV_ERROR;
        }
}

_printf_(4, 5) static void problem(struct bd_stage *s, enum bd_problem_kind kind, const char *path, const char *fmt,
                                   ...)
{
        enum bd_severity sev = severity_of(s, kind);
        if (sev == SEV_ERROR)
                ADD(errors, 1);
        else if (sev == SEV_WARNING)
                ADD(warnings, 1);
        va_list ap;
        va_start(ap, fmt);
        char *msg = xvasprintf(fmt, ap);
        va_end(ap);
        pthread_mutex_lock(&s->lock);
        if (s->nproblems < MAX_PROBLEMS) {
                if (s->nproblems == s->capproblems) {
                        s->capproblems = s->capproblems ? 2 * s->capproblems : 64;
                        s->problems = xrealloc(s->problems, s->capproblems * sizeof(*s->problems));
                }
                s->problems[s->nproblems++] = (struct bd_stage_problem){ kind, sev, xstrdup(path), msg };
                msg = NULL;
        }
        pthread_mutex_unlock(&s->lock);
        free(msg);
}

/* A failure of the whole job: the first one is kept, every worker stops. */
_printf_(2, 3) static int fatal(struct bd_stage *s, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *msg = xvasprintf(fmt, ap);
        va_end(ap);
        pthread_mutex_lock(&s->lock);
        if (!s->error)
                s->error = TAKE_PTR(msg);
        pthread_mutex_unlock(&s->lock);
        free(msg);
        atomic_store(&s->stop, true);
        return -1;
}

static bool dest_fatal_errno(int e)
{
        return e == ENOSPC || e == EDQUOT || e == EROFS || e == EIO;
}

/* ---- options --------------------------------------------------------------------- */

/* Absolute (the state file outlives the working directory), without trailing '/'. */
static char *clean_path(const char *p)
{
        if (!p)
                return NULL;
        char *c;
        char cwd[4096];
        if (p[0] != '/' && getcwd(cwd, sizeof(cwd)))
                c = xasprintf("%s/%s", streq(cwd, "/") ? "" : cwd, p);
        else
                c = xstrdup(p);
        size_t n = strlen(c);
        while (n > 1 && c[n - 1] == '/')
                c[--n] = '\0';
        return c;
}

struct bd_stage *stage_new(const struct bd_stage_opts *o, struct bd_err *err)
{
        if (o->mode != STAGE_VERIFY_ONLY && (!o->src || !*o->src)) {
                bd_err_set(err, -EINVAL, "no source directory");
                return NULL;
        }
        if (o->mode != STAGE_MANIFEST_ONLY && (!o->dst || !*o->dst)) {
                bd_err_set(err, -EINVAL, "no destination directory");
                return NULL;
        }
        if (o->name && !stage_name_valid(o->name)) {
                bd_err_set(err, -EINVAL,
                           "invalid dataset name '%s' (1 to 64 letters, digits, '.', '_' or '-', starting with a letter "
                           "or digit)", o->name);
                return NULL;
        }
        if (o->bwlimit < 0 || o->fsync >= _FSYNC_MAX || o->copy_method > COPY_AUTO) {
                bd_err_set(err, -EINVAL, "invalid staging options");
                return NULL;
        }
        struct bd_stage *s = xcalloc(1, sizeof(*s));
        s->o = *o;
        s->name = o->name ? xstrdup(o->name) : NULL;
        s->src = clean_path(o->src);
        s->dst = clean_path(o->dst);
        s->state_dir = o->state_dir ? xstrdup(o->state_dir) : NULL;
        s->o.name = s->name;
        s->o.src = s->src;
        s->o.dst = s->dst;
        s->o.state_dir = s->state_dir;
        if (!s->o.workers)
                s->o.workers = stage_default_workers();
        if (s->o.workers > 256)
                s->o.workers = 256;
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->ended, NULL);
        s->srcfd = s->dstfd = -1;
        manifest_init(&s->m);
        atomic_init(&s->state, STAGE_IDLE);
        atomic_init(&s->phase, PHASE_START);
        s->bw = bwlimit_new(s->o.bwlimit);
        copier_init(&s->copier, s->o.copy_method, s->bw, &s->stop, &s->bytes_done);
        return s;
}

/* ---- small file-system helpers ------------------------------------------------------ */

static const char *base_name(const char *path)
{
        const char *slash = strrchr(path, '/');
        return slash ? slash + 1 : path;
}

/* The destination directory holding path, cached per worker; -errno on failure. */
static int dst_parent(struct bd_stage *s, struct worker *w, const char *path)
{
        const char *slash = strrchr(path, '/');
        size_t n = slash ? (size_t)(slash - path) : 0;
        if (w->ddir && strlen(w->ddir) == n && !memcmp(w->ddir, path, n))
                return w->ddir_fd;
        if (w->ddir_fd >= 0)
                close(w->ddir_fd);
        free(w->ddir);
        w->ddir = NULL;
        w->ddir_fd = -1;
        _cleanup_free_ char *dir = xstrndup(path, n);
        int fd = open_beneath(s->dstfd, dir, O_PATH | O_DIRECTORY, 0);
        if (fd < 0)
                return fd;
        w->ddir = TAKE_PTR(dir);
        w->ddir_fd = fd;
        return fd;
}

static void drop_parent_cache(struct worker *w)
{
        if (w->ddir_fd >= 0)
                close(w->ddir_fd);
        free(w->ddir);
        w->ddir = NULL;
        w->ddir_fd = -1;
}

static bool same_mtime(const struct stat *st, const struct bd_mentry *e)
{
        return st->st_mtim.tv_sec == e->mtime_sec && (uint32_t)st->st_mtim.tv_nsec == e->mtime_nsec;
}

static bool same_change(const struct stat *a, const struct stat *b)
{
        return a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
               a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
               a->st_ctim.tv_nsec == b->st_ctim.tv_nsec && a->st_ino == b->st_ino;
}

static const char *type_name(mode_t m)
{
        switch (m & S_IFMT) {
        case S_IFREG: return "a file";
        case S_IFDIR: return "a directory";
        case S_IFLNK: return "a symlink";
        case S_IFIFO: return "a FIFO";
        case S_IFSOCK: return "a socket";
        case S_IFCHR: return "a character device";
        case S_IFBLK: return "a block device";
        default: return "of an unknown type";
        }
}

static const char *kind_name(enum bd_mkind k)
{
        return k == BD_M_DIR ? "a directory" : k == BD_M_FILE ? "a file" : "a symlink";
}

/* ---- the manifest ------------------------------------------------------------------------ */

static void scan_problem(void *data, const char *path, int err)
{
        struct bd_stage *s = data;
        _cleanup_free_ char *p = manifest_escaped(path);
        s->src_incomplete = true;
        problem(s, PROB_SOURCE, path, "cannot read '%s' in the source: %s", p, strerror(-err));
}

static void dscan_problem(void *data, const char *path, int err)
{
        struct bd_stage *s = data;
        _cleanup_free_ char *p = manifest_escaped(path);
        problem(s, PROB_DEST, path, "cannot read '%s' in the destination: %s", p, strerror(-err));
}

static char *state_manifest_path(struct bd_stage *s)
{
        if (!s->state_dir || !s->name)
                return NULL;
        return xasprintf("%s/manifests/%s.manifest", s->state_dir, s->name);
}

/* The stored manifest of SRC, if any can be read (a damaged one is reported and ignored). */
static bool load_stored_manifest(struct bd_stage *s, struct bd_manifest *old)
{
        _cleanup_free_ char *in_src = xasprintf("%s/%s", s->src, MANIFEST_NAME);
        _cleanup_free_ char *in_state = state_manifest_path(s);
        const char *paths[] = { in_src, in_state };
        /* both there: SRC was read-only when the state directory's was
         * written; the newer one knows more checksums */
        struct stat a, b;
        if (in_state && stat(in_src, &a) == 0 && stat(in_state, &b) == 0 &&
            (b.st_mtim.tv_sec > a.st_mtim.tv_sec ||
             (b.st_mtim.tv_sec == a.st_mtim.tv_sec && b.st_mtim.tv_nsec > a.st_mtim.tv_nsec))) {
                paths[0] = in_state;
                paths[1] = in_src;
        }
        for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
                if (!paths[i] || access(paths[i], F_OK) < 0)
                        continue;
                struct bd_err err;
                if (manifest_load(paths[i], old, &err) == 0) {
                        free(s->manifest_path);
                        s->manifest_path = xstrdup(paths[i]);
                        return true;
                }
                problem(s, PROB_SKIPPED, MANIFEST_NAME, "ignoring stored manifest: %s", err.msg);
        }
        return false;
}

/* s->m from the source scan, with the checksums of old where size and mtime match. */
static void build_manifest(struct bd_stage *s, const struct bd_manifest *old)
{
        size_t j = 0;
        for (size_t i = 0; i < s->stree.n; i++) {
                struct bd_tentry *t = &s->stree.e[i];
                enum bd_mkind kind;
                if (S_ISDIR(t->mode))
                        kind = BD_M_DIR;
                else if (S_ISREG(t->mode))
                        kind = BD_M_FILE;
                else if (S_ISLNK(t->mode))
                        kind = BD_M_LINK;
                else {
                        _cleanup_free_ char *p = manifest_escaped(t->path);
                        problem(s, PROB_SKIPPED, t->path, "'%s' is %s: not staged", p, type_name(t->mode));
                        continue;
                }
                struct bd_mentry *e = manifest_add(&s->m, kind, TAKE_PTR(t->path));
                e->target = TAKE_PTR(t->target);
                e->mode = t->mode & 07777;
                e->mtime_sec = t->mtime_sec;
                e->mtime_nsec = t->mtime_nsec;
                e->size = kind == BD_M_DIR ? 0 : kind == BD_M_LINK ? strlen(e->target) : t->size;
                if (kind != BD_M_FILE || !old)
                        continue;
                while (j < old->n && strcmp(old->e[j].path, e->path) < 0)
                        j++;
                const struct bd_mentry *o = j < old->n && !strcmp(old->e[j].path, e->path) ? &old->e[j] : NULL;
                if (o && o->kind == BD_M_FILE && o->size == e->size && o->mtime_sec == e->mtime_sec &&
                    o->mtime_nsec == e->mtime_nsec) {
                        memcpy(e->sum, o->sum, 16);
                        e->have_sum = true;
                }
        }
        manifest_count(&s->m);
        /* changed: anything a stored copy would not say */
        s->manifest_changed = !old || old->n != s->m.n;
        for (size_t i = 0; !s->manifest_changed && i < s->m.n; i++) {
                const struct bd_mentry *a = &s->m.e[i], *b = &old->e[i];
                s->manifest_changed = a->kind != b->kind || strcmp(a->path, b->path) || a->mode != b->mode ||
                                      a->mtime_sec != b->mtime_sec || a->mtime_nsec != b->mtime_nsec ||
                                      a->size != b->size || (a->kind == BD_M_FILE && !a->have_sum) ||
                                      (a->kind == BD_M_LINK && strcmp(a->target, b->target));
        }
        if (!s->manifest_changed)
                memcpy(s->m.sum, old->sum, 16);
}

/* Stores the refreshed manifest with SRC, or in the state directory. */
static void store_manifest(struct bd_stage *s)
{
        for (size_t i = 0; i < s->m.n; i++)
                if (s->m.e[i].kind == BD_M_FILE && !s->m.e[i].have_sum)
                        return; /* incomplete: reported already, never stored */
        if (!s->manifest_changed)
                return;
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        buf_init(&b);
        struct bd_err err;
        if (manifest_format(&s->m, &b, &err) < 0)      /* sets s->m.sum */
                return;
        if (s->o.mode == STAGE_MANIFEST_ONLY && s->o.no_store)
                return;
        _cleanup_free_ char *in_src = xasprintf("%s/%s", s->src, MANIFEST_NAME);
        int r = write_file_atomic(in_src, b.s, b.len, 0644, &err);
        if (r == 0) {
                free(s->manifest_path);
                s->manifest_path = TAKE_PTR(in_src);
                return;
        }
        _cleanup_free_ char *in_state = state_manifest_path(s);
        if (in_state && (r == -EACCES || r == -EROFS || r == -EPERM)) {
                _cleanup_free_ char *dir = xasprintf("%s/manifests", s->state_dir);
                int x = mkdir_p(dir, 0700);
                if (x == 0 && write_file_atomic(in_state, b.s, b.len, 0644, &err) == 0) {
                        free(s->manifest_path);
                        s->manifest_path = TAKE_PTR(in_state);
                        return;
                }
        }
        problem(s, PROB_SKIPPED, MANIFEST_NAME, "the manifest could not be stored: %s", err.msg);
}

/* ---- planning: DST against the manifest ------------------------------------------------ */

static bool root_manifest_name(const char *path)
{
        return !strchr(path, '/') && !strncmp(path, MANIFEST_NAME, strlen(MANIFEST_NAME));
}

static bool tmp_name(const char *path)
{
        return !strncmp(base_name(path), STAGE_TMP_PREFIX, strlen(STAGE_TMP_PREFIX));
}

/* DST entries that the manifest does not list: leftovers, extras */
struct extras {
        size_t *tmp, ntmp;
        size_t *extra, nextra;
};

static void push(size_t **v, size_t *n, size_t x)
{
        if ((*n & (*n - 1)) == 0 || *n == 0)
                *v = xrealloc(*v, (*n ? 2 * *n : 16) * sizeof(size_t));
        (*v)[(*n)++] = x;
}

static void unmatched(struct bd_stage *s, size_t j, struct extras *x)
{
        const struct bd_tentry *d = &s->dtree.e[j];
        bool atomic_tmp = root_manifest_name(d->path) && !strncmp(d->path, MANIFEST_NAME ".tmp.",
                                                                  strlen(MANIFEST_NAME ".tmp."));
        if (root_manifest_name(d->path) && !atomic_tmp)
                return;
        if ((tmp_name(d->path) || atomic_tmp) && !S_ISDIR(d->mode))
                push(&x->tmp, &x->ntmp, j);
        else
                push(&x->extra, &x->nextra, j);
}

static void match(struct bd_stage *s, size_t i, const struct bd_tentry *d)
{
        const struct bd_mentry *e = &s->m.e[i];
        struct item *it = &s->items[i];
        it->mode_differs = (d->mode & 07777) != e->mode;
        switch (e->kind) {
        case BD_M_DIR:
                it->dst = S_ISDIR(d->mode) ? DST_OK : DST_WRONG_TYPE;
                break;
        case BD_M_FILE:
                if (!S_ISREG(d->mode))
                        it->dst = DST_WRONG_TYPE;
                else if (d->size == e->size && d->mtime_sec == e->mtime_sec && d->mtime_nsec == e->mtime_nsec)
                        it->dst = DST_OK;
                else
                        it->dst = DST_DIFFERS;
                it->same_size = d->size == e->size;
                break;
        case BD_M_LINK:
                if (!S_ISLNK(d->mode))
                        it->dst = DST_WRONG_TYPE;
                else
                        it->dst = streq(d->target, e->target) ? DST_OK : DST_DIFFERS;
                it->mode_differs = false;
                break;
        }
        it->dst_is_dir = it->dst == DST_WRONG_TYPE && S_ISDIR(d->mode);
}

static bool is_suspect(struct bd_stage *s, const char *path)
{
        for (size_t i = 0; i < s->nsuspects; i++)
                if (streq(s->suspects[i], path))
                        return true;
        return false;
}

static void account_done(struct bd_stage *s, const struct bd_mentry *e)
{
        ADD(files_done, 1);
        ADD(bytes_done, e->size);
}

/* Decides each entry's action; reports what verify-only finds without reading. */
static void plan(struct bd_stage *s, struct extras *x)
{
        bool verify_only = s->o.mode == STAGE_VERIFY_ONLY;
        s->items = xcalloc(s->m.n ? s->m.n : 1, sizeof(*s->items));
        size_t j = 0;
        for (size_t i = 0; i < s->m.n; i++) {
                const struct bd_mentry *e = &s->m.e[i];
                struct item *it = &s->items[i];
                it->need_hash = e->kind == BD_M_FILE && !e->have_sum;
                if (!s->dst)
                        continue;
                while (j < s->dtree.n && strcmp(s->dtree.e[j].path, e->path) < 0)
                        unmatched(s, j++, x);
                bool escapes = e->kind == BD_M_LINK && manifest_link_escapes(e->path, e->target);
                if (j < s->dtree.n && streq(s->dtree.e[j].path, e->path)) {
                        if (escapes)
                                push(&x->extra, &x->nextra, j);
                        else
                                match(s, i, &s->dtree.e[j]);
                        j++;
                }
        }
        while (s->dst && j < s->dtree.n)
                unmatched(s, j++, x);

        for (size_t i = 0; i < s->m.n; i++) {
                const struct bd_mentry *e = &s->m.e[i];
                struct item *it = &s->items[i];
                _cleanup_free_ char *p = NULL;
                if (s->o.mode == STAGE_MANIFEST_ONLY) {
                        if (it->need_hash)
                                it->act = ACT_NONE;
                        continue;
                }
                if (e->kind == BD_M_LINK && manifest_link_escapes(e->path, e->target)) {
                        it->act = ACT_SKIP;
                        continue;
                }
                if (!verify_only) {
                        if (e->kind == BD_M_DIR)
                                continue;
                        if (e->kind == BD_M_LINK) {
                                it->act = it->dst == DST_OK ? ACT_NONE : ACT_LINK;
                                continue;
                        }
                        bool check = s->o.verify || is_suspect(s, e->path);
                        if (it->dst == DST_OK)
                                it->act = check ? ACT_VERIFY : ACT_NONE;
                        else if (it->dst == DST_DIFFERS && it->same_size && s->o.verify)
                                it->act = ACT_VERIFY_OR_COPY;
                        else
                                it->act = ACT_COPY;
                        continue;
                }
                /* verify-only */
                p = manifest_escaped(e->path);
                if (it->dst == DST_ABSENT) {
                        problem(s, PROB_MISSING, e->path, "missing: '%s' (%s in the manifest)", p, kind_name(e->kind));
                } else if (it->dst == DST_WRONG_TYPE) {
                        problem(s, PROB_TYPE, e->path, "wrong type: '%s' should be %s", p, kind_name(e->kind));
                } else if (e->kind == BD_M_LINK && it->dst == DST_DIFFERS) {
                        _cleanup_free_ char *t = manifest_escaped(e->target);
                        problem(s, PROB_TYPE, e->path, "wrong link: '%s' should point to '%s'", p, t);
                } else if (e->kind == BD_M_FILE && it->dst == DST_DIFFERS && !it->same_size) {
                        problem(s, PROB_SIZE, e->path, "wrong size: '%s' is not %" PRIu64 " bytes long", p, e->size);
                } else if (e->kind == BD_M_FILE) {
                        it->act = ACT_VERIFY;
                        continue;
                } else if (it->mode_differs) {
                        problem(s, PROB_ATTR, e->path, "attributes: '%s' has not the manifest's permissions %04o", p,
                                e->mode);
                }
                if (e->kind == BD_M_FILE && !it->need_hash)
                        account_done(s, e);
        }
}

static int cmp_order(const void *a, const void *b, void *data)
{
        const struct bd_manifest *m = data;
        const struct bd_mentry *x = &m->e[*(const size_t *)a], *y = &m->e[*(const size_t *)b];
        /* big files first, so that none is left alone at the end; then path order */
        bool bx = x->kind == BD_M_FILE && x->size >= BIG_FILE, by = y->kind == BD_M_FILE && y->size >= BIG_FILE;
        if (bx != by)
                return bx ? -1 : 1;
        if (bx && x->size != y->size)
                return x->size > y->size ? -1 : 1;
        return *(const size_t *)a < *(const size_t *)b ? -1 : *(const size_t *)a > *(const size_t *)b;
}

static void make_order(struct bd_stage *s)
{
        s->order = xmalloc((s->m.n ? s->m.n : 1) * sizeof(size_t));
        s->norder = 0;
        for (size_t i = 0; i < s->m.n; i++) {
                const struct item *it = &s->items[i];
                const struct bd_mentry *e = &s->m.e[i];
                if (it->need_hash || it->act != ACT_NONE ||
                    (s->o.mode == STAGE_COPY && it->mode_differs && it->dst == DST_OK && e->kind == BD_M_FILE))
                        s->order[s->norder++] = i;
                else if (s->o.mode == STAGE_COPY && e->kind == BD_M_FILE && !it->failed) {
                        ADD(files_present, 1);
                        account_done(s, e);
                }
        }
        qsort_r(s->order, s->norder, sizeof(size_t), cmp_order, &s->m);
}

/* ---- preparing DST ----------------------------------------------------------------------- */

static int remove_at(struct bd_stage *s, const char *path, bool dir)
{
        _cleanup_free_ char *parent = xstrndup(path, (size_t)(base_name(path) - path) - (strchr(path, '/') ? 1 : 0));
        _cleanup_close_ int pfd = open_beneath(s->dstfd, parent, O_PATH | O_DIRECTORY, 0);
        if (pfd < 0)
                return pfd;
        return unlinkat(pfd, base_name(path), dir ? AT_REMOVEDIR : 0) < 0 ? -errno : 0;
}

static void format_size(uint64_t n, char *buf, size_t len)
{
        static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB" };
        double v = (double)n;
        size_t u = 0;
        while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
                v /= 1024;
                u++;
        }
        if (u == 0)
                snprintf(buf, len, "%" PRIu64 " bytes", n);
        else
                snprintf(buf, len, "%.1f %s", v, units[u]);
}

static int check_space(struct bd_stage *s)
{
        struct statvfs vfs;
        if (fstatvfs(s->dstfd, &vfs) < 0)
                return 0;       /* cannot tell: the copy will say */
        uint64_t bs = vfs.f_frsize ? vfs.f_frsize : vfs.f_bsize;
        if (!bs)
                bs = 4096;
        uint64_t need = 0, nodes = 0, files = 0;
        for (size_t i = 0; i < s->m.n; i++) {
                const struct bd_mentry *e = &s->m.e[i];
                const struct item *it = &s->items[i];
                if (e->kind == BD_M_FILE && (it->act == ACT_COPY || it->act == ACT_VERIFY_OR_COPY)) {
                        need += (e->size + bs - 1) / bs * bs;
                        nodes++;
                        files++;
                } else if (e->kind == BD_M_DIR && it->dst != DST_OK) {
                        need += bs;
                        nodes++;
                } else if (it->act == ACT_LINK)
                        nodes++;
        }
        uint64_t avail = (uint64_t)vfs.f_bavail * bs;
        if (need > avail) {
                char a[32], b[32];
                format_size(need, a, sizeof(a));
                format_size(avail, b, sizeof(b));
                return fatal(s,
                             "not enough space in the destination '%s': %" PRIu64 " files to copy need %s (%" PRIu64
                             " bytes), %s (%" PRIu64 " bytes) available",
                             s->dst, files, a, need, b, avail);
        }
        if (vfs.f_files > 0 && nodes > vfs.f_favail)
                return fatal(s, "not enough inodes in the destination '%s': %" PRIu64 " needed, %" PRIu64 " available",
                             s->dst, nodes, (uint64_t)vfs.f_favail);
        return 0;
}

static int prepare(struct bd_stage *s, struct extras *x)
{
        /* what an interrupted stage left behind */
        uint64_t removed = 0;
        for (size_t k = 0; k < x->ntmp; k++) {
                const char *path = s->dtree.e[x->tmp[k]].path;
                int r = remove_at(s, path, false);
                if (r < 0 && r != -ENOENT) {
                        _cleanup_free_ char *p = manifest_escaped(path);
                        problem(s, PROB_DEST, path, "cannot remove leftover temporary file '%s': %s", p, strerror(-r));
                } else
                        removed++;
        }
        if (removed) {
                problem(s, PROB_REMOVED, ".", "removed %" PRIu64 " temporary file%s left by an interrupted stage",
                        removed, removed == 1 ? "" : "s");
        }

        /* entries in the way: a file where a directory goes is replaced; a
         * directory where a file goes only with --delete */
        for (size_t i = 0; i < s->m.n; i++) {
                const struct bd_mentry *e = &s->m.e[i];
                struct item *it = &s->items[i];
                if (it->dst != DST_WRONG_TYPE || it->act == ACT_SKIP)
                        continue;
                _cleanup_free_ char *p = manifest_escaped(e->path);
                if (it->dst_is_dir && !s->o.delete_extra) {
                        problem(s, PROB_DEST, e->path,
                                "'%s' is a directory in the destination, %s in the source: not replaced (--delete "
                                "replaces it)", p, kind_name(e->kind));
                        it->failed = true;
                        it->act = ACT_NONE;
                        if (e->kind == BD_M_FILE && !it->need_hash)
                                account_done(s, e);
                        continue;
                }
                if (!it->dst_is_dir) {
                        int r = remove_at(s, e->path, false);
                        if (r < 0 && r != -ENOENT)
                                return fatal(s, "cannot remove '%s' from the destination: %s", p, strerror(-r));
                        if (e->kind == BD_M_DIR)
                                it->dst = DST_ABSENT;
                }
        }

        /* extras, children before their directory (reverse path order) */
        if (s->o.delete_extra) {
                /* directories in the way of files go with them */
                size_t n = x->nextra;
                for (size_t i = 0; i < s->m.n; i++)
                        if (s->items[i].dst_is_dir && s->items[i].act != ACT_NONE) {
                                for (size_t j = 0; j < s->dtree.n; j++)
                                        if (streq(s->dtree.e[j].path, s->m.e[i].path))
                                                push(&x->extra, &x->nextra, j);
                        }
                if (x->nextra > n) {
                        /* keep the path order */
                        for (size_t a = 1; a < x->nextra; a++)
                                for (size_t b = a; b > 0 && x->extra[b - 1] > x->extra[b]; b--) {
                                        size_t t = x->extra[b];
                                        x->extra[b] = x->extra[b - 1];
                                        x->extra[b - 1] = t;
                                }
                }
                for (size_t k = x->nextra; k-- > 0;) {
                        const struct bd_tentry *d = &s->dtree.e[x->extra[k]];
                        _cleanup_free_ char *p = manifest_escaped(d->path);
                        int r = remove_at(s, d->path, S_ISDIR(d->mode));
                        if (r < 0 && r != -ENOENT)
                                problem(s, PROB_DEST, d->path, "cannot remove '%s' from the destination: %s", p,
                                        strerror(-r));
                        else
                                problem(s, PROB_REMOVED, d->path, "removed '%s': not in the manifest", p);
                }
                for (size_t i = 0; i < s->m.n; i++)
                        if (s->items[i].dst_is_dir && s->items[i].act != ACT_NONE)
                                s->items[i].dst = DST_ABSENT;
        } else {
                for (size_t k = 0; k < x->nextra; k++) {
                        const struct bd_tentry *d = &s->dtree.e[x->extra[k]];
                        _cleanup_free_ char *p = manifest_escaped(d->path);
                        problem(s, PROB_EXTRA, d->path, "not in the manifest: '%s' kept (--delete removes it)", p);
                }
        }

        if (check_space(s) < 0)
                return -1;

        /* directories, parents first; writable by us until the end */
        bool root = geteuid() == 0;
        for (size_t i = 0; i < s->m.n; i++) {
                const struct bd_mentry *e = &s->m.e[i];
                struct item *it = &s->items[i];
                if (e->kind != BD_M_DIR || it->failed)
                        continue;
                _cleanup_free_ char *p = manifest_escaped(e->path);
                if (it->dst == DST_ABSENT) {
                        _cleanup_free_ char *parent =
                                xstrndup(e->path, (size_t)(base_name(e->path) - e->path) - (strchr(e->path, '/') ? 1 : 0));
                        _cleanup_close_ int pfd = open_beneath(s->dstfd, parent, O_PATH | O_DIRECTORY, 0);
                        if (pfd < 0 || (mkdirat(pfd, base_name(e->path), 0700) < 0 && errno != EEXIST))
                                return fatal(s, "cannot create directory '%s' in the destination: %s", p,
                                             strerror(pfd < 0 ? -pfd : errno));
                        it->dst = DST_OK;
                        it->mode_differs = true;
                } else if (!root && (e->mode & 0300) != 0300) {
                        _cleanup_close_ int fd = open_beneath(s->dstfd, e->path, O_RDONLY | O_DIRECTORY, 0);
                        if (fd >= 0)
                                (void)fchmod(fd, e->mode | 0700);
                }
        }
        return 0;
}

/* ---- the transfer ------------------------------------------------------------------------ */

static int open_src(struct bd_stage *s, const struct bd_mentry *e, struct stat *st)
{
        int fd = open_beneath(s->srcfd, e->path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
        _cleanup_free_ char *p = NULL;
        if (fd < 0) {
                p = manifest_escaped(e->path);
                if (fd == -ENOENT || fd == -ELOOP || fd == -EXDEV)
                        problem(s, PROB_SOURCE, e->path, "'%s' vanished from the source or was replaced while staged",
                                p);
                else
                        problem(s, PROB_SOURCE, e->path, "cannot open '%s' in the source: %s", p, strerror(-fd));
                return -1;
        }
        if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || (uint64_t)st->st_size != e->size || !same_mtime(st, e)) {
                p = manifest_escaped(e->path);
                problem(s, PROB_SOURCE, e->path, "'%s' changed in the source while staged (size or mtime differs)", p);
                close(fd);
                return -1;
        }
        return fd;
}

/* The source checksum of an entry that has none yet. */
static int hash_source(struct bd_stage *s, struct worker *w, struct bd_mentry *e, int sfd, const struct stat *before)
{
        uint8_t sum[16];
        uint64_t len;
        atomic_uint_fast64_t *progress = s->o.mode == STAGE_MANIFEST_ONLY ? &s->bytes_done : NULL;
        int r = hash_fd(sfd, w->buf, BUF_SIZE, &s->stop, progress, sum, &len);
        if (r == -ECANCELED)
                return r;
        _cleanup_free_ char *p = manifest_escaped(e->path);
        if (r < 0) {
                problem(s, PROB_SOURCE, e->path, "cannot read '%s' in the source: %s", p, strerror(-r));
                return r;
        }
        struct stat after;
        if (fstat(sfd, &after) < 0 || !same_change(before, &after) || len != e->size) {
                problem(s, PROB_SOURCE, e->path, "'%s' changed in the source while it was checksummed", p);
                return -ESTALE;
        }
        memcpy(e->sum, sum, 16);
        e->have_sum = true;
        ADD(files_hashed, 1);
        ADD(bytes_hashed, len);
        return 0;
}

/* Checksums the file at DST: 1 when it matches, 0 when not, -errno. */
static int verify_dst(struct bd_stage *s, struct worker *w, const struct bd_mentry *e, uint64_t *credited)
{
        int pfd = dst_parent(s, w, e->path);
        if (pfd < 0)
                return pfd;
        _cleanup_close_ int fd = openat(pfd, base_name(e->path), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != e->size)
                return 0;
        uint8_t sum[16];
        uint64_t len;
        int r = hash_fd(fd, w->buf, BUF_SIZE, &s->stop, &s->bytes_done, sum, &len);
        *credited += r == 0 ? len : 0;
        if (r < 0)
                return r;
        ADD(files_verified, 1);
        return len == e->size && !memcmp(sum, e->sum, 16);
}

/* Copies one file to a temporary name beside its destination, checks it
 * against the manifest, and renames it into place. */
static int copy_file(struct bd_stage *s, struct worker *w, unsigned wi, struct bd_mentry *e, int *sfdp,
                     struct stat *sst, uint64_t *credited)
{
        _cleanup_free_ char *p = manifest_escaped(e->path);
        if (*sfdp < 0) {
                *sfdp = open_src(s, e, sst);
                if (*sfdp < 0)
                        return -1;
        }
        int pfd = dst_parent(s, w, e->path);
        if (pfd < 0) {
                problem(s, PROB_DEST, e->path, "cannot open the directory of '%s' in the destination: %s", p,
                        strerror(-pfd));
                return -1;
        }
        char tmp[64];
        int tfd = -1;
        for (int tries = 0; tfd < 0 && tries < 100; tries++) {
                snprintf(tmp, sizeof(tmp), STAGE_TMP_PREFIX "%lx.%u.%" PRIu64, (long)getpid(), wi, w->seq++);
                tfd = openat(pfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (tfd < 0 && errno != EEXIST)
                        break;
        }
        if (tfd < 0) {
                int r = -errno;
                if (dest_fatal_errno(-r))
                        return fatal(s, "cannot create a file in the destination '%s': %s", s->dst, strerror(-r));
                problem(s, PROB_DEST, e->path, "cannot create '%s' in the destination: %s", p, strerror(-r));
                return -1;
        }
        uint8_t sum[16];
        uint64_t copied = 0;
        bool dest_side = false;
        /* no checksum yet: one read/write pass gives the source's checksum and the copy's */
        bool first_sum = !e->have_sum;
        int r = copy_fd(&s->copier, *sfdp, tfd, e->size, first_sum, w->buf, BUF_SIZE, sum, &copied, &dest_side);
        *credited += copied;
        const char *why = NULL;
        struct stat after;
        if (r == 0 && copied != e->size)
                why = "is shorter than the manifest says: it was truncated while staged";
        else if (r == 0 && (fstat(*sfdp, &after) < 0 || !same_change(sst, &after)))
                why = "changed in the source while it was copied";
        else if (r == 0 && first_sum) {
                memcpy(e->sum, sum, 16);
                e->have_sum = true;
                ADD(files_hashed, 1);
                ADD(bytes_hashed, e->size);
        } else if (r == 0 && memcmp(sum, e->sum, 16) != 0)
                why = "does not match its manifest checksum: the source changed since it was checksummed "
                      "(--rehash rebuilds the manifest)";
        if (r == 0 && !why) {
                struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { e->mtime_sec, e->mtime_nsec } };
                if (fchmod(tfd, e->mode) < 0 || futimens(tfd, ts) < 0 ||
                    (s->o.fsync == FSYNC_FILE && fsync(tfd) < 0)) {
                        r = -errno;
                        dest_side = true;
                }
        }
        if (close(tfd) < 0 && r == 0 && !why) {
                r = -errno;
                dest_side = true;
        }
        if (r == 0 && !why && renameat(pfd, tmp, pfd, base_name(e->path)) < 0) {
                r = -errno;
                dest_side = true;
        }
        if (r == 0 && !why)
                return 0;
        (void)unlinkat(pfd, tmp, 0);
        if (r == -ECANCELED)
                return r;
        if (why) {
                problem(s, PROB_SOURCE, e->path, "'%s' %s", p, why);
                return -1;
        }
        if (dest_side && dest_fatal_errno(-r))
                return fatal(s, "cannot write '%s' in the destination '%s': %s", p, s->dst, strerror(-r));
        if (dest_side)
                problem(s, PROB_DEST, e->path, "cannot write '%s' in the destination: %s", p, strerror(-r));
        else
                problem(s, PROB_SOURCE, e->path, "cannot read '%s' in the source: %s", p, strerror(-r));
        return -1;
}

static void make_link(struct bd_stage *s, struct worker *w, unsigned wi, const struct bd_mentry *e)
{
        _cleanup_free_ char *p = manifest_escaped(e->path);
        int pfd = dst_parent(s, w, e->path);
        char tmp[64];
        int r = pfd;
        if (pfd >= 0) {
                for (int tries = 0; tries < 100; tries++) {
                        snprintf(tmp, sizeof(tmp), STAGE_TMP_PREFIX "%lx.%u.%" PRIu64, (long)getpid(), wi, w->seq++);
                        r = symlinkat(e->target, pfd, tmp) < 0 ? -errno : 0;
                        if (r != -EEXIST)
                                break;
                }
        }
        if (r == 0) {
                struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { e->mtime_sec, e->mtime_nsec } };
                (void)utimensat(pfd, tmp, ts, AT_SYMLINK_NOFOLLOW);
                if (renameat(pfd, tmp, pfd, base_name(e->path)) < 0) {
                        r = -errno;
                        (void)unlinkat(pfd, tmp, 0);
                }
        }
        if (r < 0) {
                if (dest_fatal_errno(-r))
                        fatal(s, "cannot write '%s' in the destination '%s': %s", p, s->dst, strerror(-r));
                else
                        problem(s, PROB_DEST, e->path, "cannot create symlink '%s' in the destination: %s", p,
                                strerror(-r));
        }
}

static void transfer_one(void *data, size_t k, unsigned wi)
{
        struct bd_stage *s = data;
        if (stopping(s))
                return;
        size_t i = s->order[k];
        struct bd_mentry *e = &s->m.e[i];
        struct item *it = &s->items[i];
        struct worker *w = &s->w[wi];
        if (e->kind == BD_M_LINK) {
                if (it->act == ACT_SKIP && s->o.mode == STAGE_COPY) {
                        _cleanup_free_ char *p = manifest_escaped(e->path);
                        _cleanup_free_ char *t = manifest_escaped(e->target);
                        problem(s, PROB_SKIPPED, e->path, "symlink '%s' points out of the source tree ('%s'): not staged",
                                p, t);
                } else if (it->act == ACT_LINK)
                        make_link(s, w, wi, e);
                return;
        }
        _cleanup_free_ char *p = manifest_escaped(e->path);
        _cleanup_close_ int sfd = -1;
        struct stat sst;
        uint64_t credited = 0;  /* bytes of this file already counted in bytes_done */
        bool ok = !it->failed;  /* failed already: in the way, reported by prepare() */
        int act = it->act;
        if (it->need_hash && act == ACT_COPY && ok) {
                /* copy_file() checksums it while it copies it */
        } else if (it->need_hash) {
                sfd = open_src(s, e, &sst);
                ok = sfd >= 0 && hash_source(s, w, e, sfd, &sst) == 0 && ok;
                if (s->o.mode == STAGE_MANIFEST_ONLY)
                        credited = ok ? e->size : 0;
        }
        if (ok && (act == ACT_VERIFY || act == ACT_VERIFY_OR_COPY)) {
                int r = verify_dst(s, w, e, &credited);
                if (r == -ECANCELED) {
                        ok = false;
                } else if (r == 1) {
                        if (act == ACT_VERIFY_OR_COPY && s->o.mode == STAGE_COPY) {
                                /* the right bytes with another mtime: fix the mtime, copy nothing */
                                int pfd = dst_parent(s, w, e->path);
                                struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { e->mtime_sec, e->mtime_nsec } };
                                act = pfd >= 0 && utimensat(pfd, base_name(e->path), ts, AT_SYMLINK_NOFOLLOW) == 0
                                              ? ACT_NONE : ACT_COPY;
                        } else
                                act = ACT_NONE;
                        if (s->o.mode == STAGE_VERIFY_ONLY && it->dst == DST_DIFFERS)
                                problem(s, PROB_ATTR, e->path,
                                        "attributes: '%s' has the right content but not the manifest's mtime", p);
                        else if (s->o.mode == STAGE_VERIFY_ONLY && it->mode_differs)
                                problem(s, PROB_ATTR, e->path,
                                        "attributes: '%s' has not the manifest's permissions %04o", p, e->mode);
                } else if (s->o.mode == STAGE_VERIFY_ONLY) {
                        if (r == 0)
                                problem(s, PROB_CORRUPT, e->path, "corrupt: '%s' does not match its manifest checksum",
                                        p);
                        else
                                problem(s, PROB_DEST, e->path, "cannot read '%s' in the destination: %s", p,
                                        strerror(-r));
                        ok = false;
                } else {
                        /* damaged, or unreadable: copy it again */
                        if (act == ACT_VERIFY)
                                it->failed = true;      /* marks it repaired once copied */
                        act = ACT_COPY;
                        atomic_fetch_sub_explicit(&s->bytes_done, credited, memory_order_relaxed);
                        credited = 0;
                }
        }
        if (ok && act == ACT_COPY) {
                bool repair = it->failed;
                it->failed = false;
                ok = copy_file(s, w, wi, e, &sfd, &sst, &credited) == 0;
                if (ok) {
                        ADD(files_copied, 1);
                        ADD(bytes_copied, e->size);
                        if (repair) {
                                ADD(files_repaired, 1);
                                problem(s, PROB_REPAIRED, e->path, "repaired '%s': it did not match its checksum", p);
                        }
                }
        } else if (ok && act == ACT_NONE && s->o.mode == STAGE_COPY) {
                ADD(files_present, 1);
                if (it->mode_differs && it->dst == DST_OK) {
                        int pfd = dst_parent(s, w, e->path);
                        if (pfd < 0 || fchmodat(pfd, base_name(e->path), e->mode, 0) < 0)
                                problem(s, PROB_DEST, e->path,
                                        "cannot set the permissions of '%s' in the destination: %s", p,
                                        strerror(pfd < 0 ? -pfd : errno));
                }
        }
        it->act = (uint8_t)act;
        if (!ok)
                it->failed = true;
        if (!ok && stopping(s))
                return;
        ADD(files_done, 1);
        if (credited < e->size)
                ADD(bytes_done, e->size - credited);
}

/* ---- finishing ----------------------------------------------------------------------------- */

/* Directory permissions and mtimes, deepest first (entries written into a
 * directory change its mtime). */
static void fix_dirs(struct bd_stage *s)
{
        for (size_t i = s->m.n; i-- > 0;) {
                const struct bd_mentry *e = &s->m.e[i];
                if (e->kind != BD_M_DIR || s->items[i].failed)
                        continue;
                _cleanup_close_ int fd = open_beneath(s->dstfd, e->path, O_RDONLY | O_DIRECTORY, 0);
                struct stat st;
                int r = fd < 0 ? fd : fstat(fd, &st) < 0 ? -errno : 0;
                if (r == 0 && (st.st_mode & 07777) != e->mode && fchmod(fd, e->mode) < 0)
                        r = -errno;
                struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { e->mtime_sec, e->mtime_nsec } };
                if (r == 0 && !same_mtime(&st, e) && futimens(fd, ts) < 0)
                        r = -errno;
                if (r < 0) {
                        _cleanup_free_ char *p = manifest_escaped(e->path);
                        problem(s, PROB_DEST, e->path, "cannot set the attributes of directory '%s': %s", p,
                                strerror(-r));
                }
        }
}

/* The checksum on the end line of DST's copy of the manifest, if it has one. */
static bool dst_manifest_sum(struct bd_stage *s, uint8_t sum[16])
{
        _cleanup_close_ int fd = openat(s->dstfd, MANIFEST_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 40)
                return false;
        char tail[128];
        size_t n = st.st_size < (off_t)sizeof(tail) - 1 ? (size_t)st.st_size : sizeof(tail) - 1;
        ssize_t r = pread(fd, tail, n, st.st_size - (off_t)n);
        if (r != (ssize_t)n)
                return false;
        tail[n] = '\0';
        char *end = strstr(tail, "\nend ");
        char hex[33];
        if (!end || strlen(end + 5) < 33)
                return false;
        memcpy(hex, end + 5, 32);
        hex[32] = '\0';
        return manifest_sum_parse(hex, sum) == 0;
}

static void write_dst_manifest(struct bd_stage *s)
{
        uint8_t have[16];
        if (dst_manifest_sum(s, have) && !memcmp(have, s->m.sum, 16))
                return;
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        buf_init(&b);
        struct bd_err err;
        _cleanup_free_ char *path = xasprintf("%s/%s", s->dst, MANIFEST_NAME);
        if (manifest_format(&s->m, &b, &err) < 0 || write_file_atomic(path, b.s, b.len, 0644, &err) < 0)
                problem(s, PROB_DEST, MANIFEST_NAME, "cannot store the manifest in the destination: %s", err.msg);
}

static void save_record(struct bd_stage *s, enum bd_stage_state state, bool final)
{
        if (!s->name || !s->state_dir || s->o.mode == STAGE_MANIFEST_ONLY)
                return;
        struct bd_stage_record *r = &s->rec;
        if (!s->have_rec) {
                memset(r, 0, sizeof(*r));
                r->name = xstrdup(s->name);
                r->state = STAGE_IDLE;
                s->have_rec = true;
        }
        if (s->o.mode == STAGE_COPY) {
                free(r->src);
                free(r->dst);
                r->src = xstrdup(s->src);
                r->dst = xstrdup(s->dst);
                r->mode = STAGE_COPY;
                r->state = state;
                r->pid = (long)getpid();
                r->started = s->started;
                r->finished = final ? now_wall() : 0;
                r->workers = s->o.workers;
                r->bwlimit = s->o.bwlimit;
                r->verify = s->o.verify;
                r->delete_extra = s->o.delete_extra;
                r->fsync = s->o.fsync;
                r->files = GET(files_total);
                r->bytes = GET(bytes_total);
                r->files_copied = GET(files_copied);
                r->bytes_copied = GET(bytes_copied);
                r->files_present = GET(files_present);
                r->files_repaired = GET(files_repaired);
                r->errors = GET(errors);
                free(r->error);
                r->error = NULL;
                if (final && state == STAGE_COMPLETE) {
                        if (s->o.verify)
                                r->verified = now_wall();
                        for (size_t i = 0; i < r->nsuspects; i++)
                                free(r->suspects[i]);
                        r->nsuspects = 0;
                }
        } else if (final) {
                /* verify-only: the verdict, and what the next stage must recopy */
                for (size_t i = 0; i < r->nsuspects; i++)
                        free(r->suspects[i]);
                r->nsuspects = 0;
                pthread_mutex_lock(&s->lock);
                for (size_t i = 0; i < s->nproblems; i++)
                        if (s->problems[i].kind == PROB_CORRUPT) {
                                r->suspects = xrealloc(r->suspects, (r->nsuspects + 1) * sizeof(char *));
                                r->suspects[r->nsuspects++] = xstrdup(s->problems[i].path);
                        }
                pthread_mutex_unlock(&s->lock);
                if (state == STAGE_COMPLETE)
                        r->verified = now_wall();
                if (!r->dst)
                        r->dst = xstrdup(s->dst);
        } else
                return;
        if (final && s->m.n) {
                r->have_manifest = true;
                memcpy(r->manifest_sum, s->m.sum, 16);
        }
        pthread_mutex_lock(&s->lock);
        if (s->error)
                r->error = xstrdup(s->error);
        else
                for (size_t i = 0; i < s->nproblems && !r->error; i++)
                        if (s->problems[i].severity == SEV_ERROR)
                                r->error = xstrdup(s->problems[i].msg);
        pthread_mutex_unlock(&s->lock);
        struct bd_err err;
        if (record_save(s->state_dir, r, &err) < 0 && !final)
                fatal(s, "%s", err.msg);
}

/* ---- the job ------------------------------------------------------------------------------------ */

static void set_phase(struct bd_stage *s, enum bd_stage_phase p)
{
        if (p == PHASE_TRANSFER) {
                atomic_store(&s->phase_bytes0, GET(bytes_done));
                atomic_store(&s->phase_t0, now_mono());
        }
        atomic_store(&s->phase, p);
}

static int open_roots(struct bd_stage *s)
{
        if (s->src) {
                s->srcfd = open(s->src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (s->srcfd < 0)
                        return fatal(s, "cannot open source directory '%s': %s", s->src, strerror(errno));
        }
        if (!s->dst)
                return 0;
        if (s->o.mode == STAGE_COPY) {
                int r = mkdir_p(s->dst, 0755);
                if (r < 0)
                        return fatal(s, "cannot create destination directory '%s': %s", s->dst, strerror(-r));
        }
        s->dstfd = open(s->dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s->dstfd < 0)
                return fatal(s, "cannot open destination directory '%s': %s", s->dst, strerror(errno));
        if (flock(s->dstfd, (s->o.mode == STAGE_COPY ? LOCK_EX : LOCK_SH) | LOCK_NB) < 0)
                return fatal(s, "destination '%s' is being staged by another process", s->dst);
        if (s->o.mode == STAGE_COPY) {
                /* refuse early, and once, when nothing can be written there */
                char probe[64];
                snprintf(probe, sizeof(probe), STAGE_TMP_PREFIX "probe.%lx", (long)getpid());
                int fd = openat(s->dstfd, probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                if (fd < 0 && errno != EEXIST)
                        return fatal(s, "cannot write in destination directory '%s': %s", s->dst, strerror(errno));
                if (fd >= 0)
                        close(fd);
                (void)unlinkat(s->dstfd, probe, 0);
        }
        return 0;
}

static int run(struct bd_stage *s)
{
        s->t0 = now_mono();
        s->started = now_wall();
        atomic_store(&s->state, STAGE_RUNNING);
        if (open_roots(s) < 0)
                return -1;
        if (s->name && s->state_dir) {
                struct bd_err err;
                int r = stage_record_load(s->state_dir, s->name, &s->rec, &err);
                if (r == 0) {
                        s->have_rec = true;
                        /* suspects are about this destination only */
                        if (s->rec.dst && s->dst && !streq(s->rec.dst, s->dst)) {
                                for (size_t i = 0; i < s->rec.nsuspects; i++)
                                        free(s->rec.suspects[i]);
                                s->rec.nsuspects = 0;
                        }
                        s->suspects = s->rec.suspects;
                        s->nsuspects = s->rec.nsuspects;
                } else if (r != -ENOENT)
                        problem(s, PROB_SKIPPED, ".", "ignoring state file: %s", err.msg);
        }
        save_record(s, STAGE_RUNNING, false);
        if (stopping(s))
                return -1;

        s->pool = pool_new(s->o.workers);
        if (!s->pool)
                return fatal(s, "cannot start %u worker threads: %s", s->o.workers, strerror(errno));
        s->w = xcalloc(s->o.workers, sizeof(*s->w));
        for (unsigned i = 0; i < s->o.workers; i++) {
                s->w[i].buf = xmalloc(BUF_SIZE);
                s->w[i].ddir_fd = -1;
        }

        /* scan SRC and DST at once */
        set_phase(s, PHASE_SCAN);
        _cleanup_manifest_ struct bd_manifest old;
        manifest_init(&old);
        bool have_old = false;
        if (s->src && !s->o.rehash)
                have_old = load_stored_manifest(s, &old);
        struct bd_tree_scan *ss = s->src ? tree_scan_begin(s->pool, s->srcfd, TREE_SKIP_RESERVED, &s->stop,
                                                           scan_problem, s) : NULL;
        struct bd_tree_scan *ds = s->dst ? tree_scan_begin(s->pool, s->dstfd, 0, &s->stop, dscan_problem, s) : NULL;
        int r1 = ss ? tree_scan_end(ss, &s->stree) : 0;
        int r2 = ds ? tree_scan_end(ds, &s->dtree) : 0;
        if (r1 < 0 || r2 < 0 || stopping(s))
                return -1;
        if (s->src) {
                build_manifest(s, have_old ? &old : NULL);
        } else {
                _cleanup_free_ char *path = xasprintf("%s/%s", s->dst, MANIFEST_NAME);
                struct bd_err err;
                if (access(path, F_OK) < 0)
                        return fatal(s, "no manifest in '%s' (it is written when a stage completes): give the source "
                                     "with --src", s->dst);
                if (manifest_load(path, &s->m, &err) < 0)
                        return fatal(s, "%s", err.msg);
                s->manifest_path = TAKE_PTR(path);
        }
        atomic_store(&s->files_total, s->m.files);
        atomic_store(&s->bytes_total, s->m.bytes);

        struct extras x = { 0 };
        plan(s, &x);
        int r = 0;
        if (s->o.mode == STAGE_COPY)
                r = prepare(s, &x);
        else if (s->o.mode == STAGE_VERIFY_ONLY) {
                for (size_t k = 0; k < x.ntmp; k++) {
                        _cleanup_free_ char *p = manifest_escaped(s->dtree.e[x.tmp[k]].path);
                        problem(s, PROB_SKIPPED, s->dtree.e[x.tmp[k]].path,
                                "leftover temporary file '%s' (the next stage removes it)", p);
                }
                for (size_t k = 0; k < x.nextra; k++) {
                        _cleanup_free_ char *p = manifest_escaped(s->dtree.e[x.extra[k]].path);
                        problem(s, PROB_EXTRA, s->dtree.e[x.extra[k]].path, "extra: '%s' is not in the manifest", p);
                }
        }
        free(x.tmp);
        free(x.extra);
        if (r < 0 || stopping(s))
                return -1;

        set_phase(s, PHASE_TRANSFER);
        make_order(s);
        pool_for(s->pool, s->norder, transfer_one, s);
        for (unsigned i = 0; i < s->o.workers; i++)
                drop_parent_cache(&s->w[i]);
        if (s->src && !s->src_incomplete && !atomic_load(&s->cancelled))
                store_manifest(s);
        if (stopping(s))
                return -1;

        set_phase(s, PHASE_FINISH);
        if (s->o.mode == STAGE_COPY) {
                fix_dirs(s);
                if (s->o.fsync != FSYNC_NONE && syncfs(s->dstfd) < 0)
                        return fatal(s, "cannot sync the destination '%s': %s", s->dst, strerror(errno));
                if (GET(errors) == 0)
                        write_dst_manifest(s);
        }
        return GET(errors) == 0 && !s->src_incomplete ? 0 : -1;
}

int stage_run(struct bd_stage *s)
{
        int r = run(s);
        enum bd_stage_state st = atomic_load(&s->cancelled) ? STAGE_CANCELLED : r == 0 ? STAGE_COMPLETE : STAGE_FAILED;
        save_record(s, st, true);
        if (s->pool) {
                pool_free(s->pool);
                s->pool = NULL;
        }
        if (s->w) {
                for (unsigned i = 0; i < s->o.workers; i++) {
                        free(s->w[i].buf);
                        drop_parent_cache(&s->w[i]);
                }
                free(s->w);
                s->w = NULL;
        }
        if (s->srcfd >= 0)
                close(s->srcfd);
        if (s->dstfd >= 0)
                close(s->dstfd);    /* releases the lock */
        s->srcfd = s->dstfd = -1;
        s->result = st == STAGE_COMPLETE ? 0 : st == STAGE_CANCELLED ? -ECANCELED : -EIO;
        pthread_mutex_lock(&s->lock);
        s->t_end = now_mono();
        set_phase(s, PHASE_DONE);
        atomic_store(&s->state, st);
        s->done = true;
        pthread_cond_broadcast(&s->ended);
        pthread_mutex_unlock(&s->lock);
        return s->result;
}

static void *thread_main(void *data)
{
        stage_run(data);
        return NULL;
}

int stage_start(struct bd_stage *s, struct bd_err *err)
{
        int r = pthread_create(&s->thread, NULL, thread_main, s);
        if (r != 0)
                return bd_err_set(err, -r, "cannot start the stage thread: %s", strerror(r));
        s->thread_started = true;
        return 0;
}

int stage_wait(struct bd_stage *s)
{
        if (s->thread_started) {
                pthread_join(s->thread, NULL);
                s->thread_started = false;
        }
        return s->result;
}

bool stage_wait_for(struct bd_stage *s, double seconds)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double t = (double)ts.tv_nsec * 1e-9 + seconds;
        ts.tv_sec += (time_t)t;
        ts.tv_nsec = (long)((t - (double)(time_t)t) * 1e9);
        pthread_mutex_lock(&s->lock);
        while (!s->done && pthread_cond_timedwait(&s->ended, &s->lock, &ts) == 0)
                ;
        bool done = s->done;
        pthread_mutex_unlock(&s->lock);
        return done;
}

void stage_cancel(struct bd_stage *s)
{
        atomic_store(&s->cancelled, true);
        atomic_store(&s->stop, true);
}

void stage_progress(struct bd_stage *s, struct bd_stage_progress *p)
{
        memset(p, 0, sizeof(*p));
        p->state = (enum bd_stage_state)atomic_load(&s->state);
        p->phase = (enum bd_stage_phase)atomic_load(&s->phase);
        double now = now_mono();
        pthread_mutex_lock(&s->lock);
        double end = s->done ? s->t_end : now;
        pthread_mutex_unlock(&s->lock);
        p->elapsed = p->state == STAGE_IDLE ? 0 : end - s->t0;
        p->files_total = GET(files_total);
        p->bytes_total = GET(bytes_total);
        p->files_done = GET(files_done);
        p->bytes_done = GET(bytes_done);
        p->files_copied = GET(files_copied);
        p->bytes_copied = GET(bytes_copied);
        p->files_present = GET(files_present);
        p->files_repaired = GET(files_repaired);
        p->files_hashed = GET(files_hashed);
        p->bytes_hashed = GET(bytes_hashed);
        p->files_verified = GET(files_verified);
        p->errors = GET(errors);
        p->warnings = GET(warnings);
        for (int i = 0; i < _COPY_METHOD_MAX; i++)
                p->method_files[i] = atomic_load(&s->copier.used[i]);
        p->rate = 0;
        p->eta = -1;
        if (p->phase >= PHASE_TRANSFER) {
                double dt = now - atomic_load(&s->phase_t0);
                uint64_t b0 = atomic_load(&s->phase_bytes0);
                if (dt > 0.2 && p->bytes_done > b0) {
                        p->rate = (double)(p->bytes_done - b0) / dt;
                        p->eta = p->bytes_total > p->bytes_done ? (double)(p->bytes_total - p->bytes_done) / p->rate : 0;
                }
        }
        if (p->phase == PHASE_DONE)
                p->eta = 0;
}

static int problem_cmp(const void *a, const void *b)
{
        const struct bd_stage_problem *x = a, *y = b;
        int c = strcmp(x->path, y->path);
        return c ? c : (int)x->kind - (int)y->kind;
}

size_t stage_problems(struct bd_stage *s, const struct bd_stage_problem **ret)
{
        pthread_mutex_lock(&s->lock);
        if (s->nproblems > 1)
                qsort(s->problems, s->nproblems, sizeof(*s->problems), problem_cmp);
        *ret = s->problems;
        size_t n = s->nproblems;
        pthread_mutex_unlock(&s->lock);
        return n;
}

const char *stage_error(struct bd_stage *s)
{
        return s->error;
}

struct bd_manifest *stage_manifest(struct bd_stage *s)
{
        return s->m.n || s->manifest_path ? &s->m : NULL;
}

const char *stage_manifest_path(struct bd_stage *s)
{
        return s->manifest_path;
}

void stage_free(struct bd_stage *s)
{
        if (!s)
                return;
        if (s->thread_started) {
                stage_cancel(s);
                stage_wait(s);
        }
        for (size_t i = 0; i < s->nproblems; i++) {
                free(s->problems[i].path);
                free(s->problems[i].msg);
        }
        free(s->problems);
        free(s->error);
        manifest_release(&s->m);
        free(s->manifest_path);
        tree_release(&s->stree);
        tree_release(&s->dtree);
        free(s->items);
        free(s->order);
        if (s->have_rec)
                stage_record_release(&s->rec);
        bwlimit_free(s->bw);
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->ended);
        free(s->name);
        free(s->src);
        free(s->dst);
        free(s->state_dir);
        free(s);
}

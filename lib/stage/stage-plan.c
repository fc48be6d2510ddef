/* stage-plan.c: the manifest of SRC, what each entry needs, preparing and
 * finishing DST. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "buf.h"
#include "fs.h"
#include "stage-int.h"

/* A file counted done without being read (present, failed, or its problem found from the scan). */
static void account_done(struct bd_stage *s, const struct bd_mentry *e)
{
        ADD(files_done, 1);
        ADD(bytes_done, e->size);
}

/* What messages call a scanned entry's file type, and a manifest entry's kind. */
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

void stage_scan_problem(void *data, const char *path, int err)
{
        struct bd_stage *s = data;
        _cleanup_free_ char *p = manifest_escaped(path);
        s->src_incomplete = true;
        stage_problem(s, PROB_SOURCE, path, "cannot read '%s' in the source: %s", p, strerror(-err));
}

void stage_dscan_problem(void *data, const char *path, int err)
{
        struct bd_stage *s = data;
        _cleanup_free_ char *p = manifest_escaped(path);
        stage_problem(s, PROB_DEST, path, "cannot read '%s' in the destination: %s", p, strerror(-err));
}

static char *state_manifest_path(struct bd_stage *s)
{
        if (!s->state_dir || !s->name)
                return NULL;
        return xasprintf("%s/manifests/%s.manifest", s->state_dir, s->name);
}

/* The stored manifest of SRC, if any can be read (a damaged one is reported and ignored). */
bool stage_load_stored_manifest(struct bd_stage *s, struct bd_manifest *old)
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
                stage_problem(s, PROB_SKIPPED, MANIFEST_NAME, "ignoring stored manifest: %s", err.msg);
        }
        return false;
}

/* s->m from the source scan, with the checksums of old where size and mtime match. */
void stage_build_manifest(struct bd_stage *s, const struct bd_manifest *old)
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
                        stage_problem(s, PROB_SKIPPED, t->path, "'%s' is %s: not staged", p, type_name(t->mode));
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
void stage_store_manifest(struct bd_stage *s)
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
        int r = fs_write_atomic(in_src, b.s, b.len, 0644, &err);
        if (r == 0) {
                free(s->manifest_path);
                s->manifest_path = TAKE_PTR(in_src);
                return;
        }
        _cleanup_free_ char *in_state = state_manifest_path(s);
        if (in_state && (r == -EACCES || r == -EROFS || r == -EPERM)) {
                _cleanup_free_ char *dir = xasprintf("%s/manifests", s->state_dir);
                int x = fs_mkdir_p(dir, 0700);
                if (x == 0 && fs_write_atomic(in_state, b.s, b.len, 0644, &err) == 0) {
                        free(s->manifest_path);
                        s->manifest_path = TAKE_PTR(in_state);
                        return;
                }
        }
        stage_problem(s, PROB_SKIPPED, MANIFEST_NAME, "the manifest could not be stored: %s", err.msg);
}

/* ---- planning: DST against the manifest ------------------------------------------------ */

static bool tmp_name(const char *path)
{
        return !strncmp(base_name(path), STAGE_TMP_PREFIX, strlen(STAGE_TMP_PREFIX));
}

static void push(size_t **v, size_t *n, size_t x)
{
        if ((*n & (*n - 1)) == 0 || *n == 0)
                *v = xrealloc(*v, (*n ? 2 * *n : 16) * sizeof(size_t));
        (*v)[(*n)++] = x;
}

static void unmatched(struct bd_stage *s, size_t j, struct extras *x)
{
        const struct bd_tentry *d = &s->dtree.e[j];
        bool top = !strchr(d->path, '/');
        if (top && streq(d->path, MANIFEST_NAME))
                return;         /* the copy of the manifest a completed stage leaves */
        /* not in the manifest: a stage's temporary file (or the manifest's), or an extra */
        if ((tmp_name(d->path) || manifest_name_reserved(d->path, top)) && !S_ISDIR(d->mode))
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

/* Decides each entry's action; reports what verify-only finds without reading. */
void stage_plan(struct bd_stage *s, struct extras *x)
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
                        if (it->dst_is_dir)
                                push(&x->inway, &x->ninway, j);
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
                        stage_problem(s, PROB_MISSING, e->path, "missing: '%s' (%s in the manifest)", p,
                                      kind_name(e->kind));
                } else if (it->dst == DST_WRONG_TYPE) {
                        stage_problem(s, PROB_TYPE, e->path, "wrong type: '%s' should be %s", p, kind_name(e->kind));
                } else if (e->kind == BD_M_LINK && it->dst == DST_DIFFERS) {
                        _cleanup_free_ char *t = manifest_escaped(e->target);
                        stage_problem(s, PROB_TYPE, e->path, "wrong link: '%s' should point to '%s'", p, t);
                } else if (e->kind == BD_M_FILE && it->dst == DST_DIFFERS && !it->same_size) {
                        stage_problem(s, PROB_SIZE, e->path, "wrong size: '%s' is not %" PRIu64 " bytes long", p,
                                      e->size);
                } else if (e->kind == BD_M_FILE) {
                        it->act = ACT_VERIFY;
                        continue;
                } else if (it->mode_differs) {
                        stage_problem(s, PROB_ATTR, e->path, "attributes: '%s' has not the manifest's permissions %04o",
                                      p, e->mode);
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

void stage_make_order(struct bd_stage *s)
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
        _cleanup_close_ int pfd = tree_open_beneath(s->dstfd, parent, O_PATH | O_DIRECTORY, 0);
        if (pfd < 0)
                return pfd;
        touched(s);
        return unlinkat(pfd, base_name(path), dir ? AT_REMOVEDIR : 0) < 0 ? -errno : 0;
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
                stage_format_size(need, a, sizeof(a));
                stage_format_size(avail, b, sizeof(b));
                return stage_fatal(s,
                                   "not enough space in the destination '%s': %" PRIu64 " file%s to copy need%s %s "
                                   "(%" PRIu64 " bytes), %s (%" PRIu64 " bytes) available",
                                   s->dst, files, files == 1 ? "" : "s", files == 1 ? "s" : "", a, need, b, avail);
        }
        if (vfs.f_files > 0 && nodes > vfs.f_favail)
                return stage_fatal(s,
                                   "not enough inodes in the destination '%s': %" PRIu64 " needed, %" PRIu64
                                   " available", s->dst, nodes, (uint64_t)vfs.f_favail);
        return 0;
}

const char *stage_extra_why(struct bd_stage *s, const struct bd_tentry *d, char *buf, size_t len)
{
        const struct bd_mentry *e = manifest_find(&s->m, d->path);
        if (!e)
                return "not in the manifest";
        if (e->kind == BD_M_LINK && manifest_link_escapes(e->path, e->target))
                return "the manifest's symlink there points out of the source tree (not staged)";
        snprintf(buf, len, "%s where the manifest has %s", type_name(d->mode), kind_name(e->kind));
        return buf;
}

int stage_prepare(struct bd_stage *s, struct extras *x)
{
        /* what an interrupted stage left behind */
        uint64_t removed = 0;
        for (size_t k = 0; k < x->ntmp; k++) {
                const char *path = s->dtree.e[x->tmp[k]].path;
                int r = remove_at(s, path, false);
                if (r < 0 && r != -ENOENT) {
                        _cleanup_free_ char *p = manifest_escaped(path);
                        stage_problem(s, PROB_DEST, path, "cannot remove leftover temporary file '%s': %s", p,
                                      strerror(-r));
                } else
                        removed++;
        }
        if (removed) {
                stage_problem(s, PROB_REMOVED, ".", "removed %" PRIu64 " temporary file%s left by an interrupted stage",
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
                        stage_problem(s, PROB_DEST, e->path,
                                      "'%s' is a directory in the destination, %s in the source: not replaced "
                                      "(--delete replaces it)", p, kind_name(e->kind));
                        it->failed = true;
                        it->act = ACT_NONE;
                        if (e->kind == BD_M_FILE && !it->need_hash)
                                account_done(s, e);
                        continue;
                }
                if (!it->dst_is_dir) {
                        int r = remove_at(s, e->path, false);
                        if (r < 0 && r != -ENOENT)
                                return stage_fatal(s, "cannot remove '%s' from the destination: %s", p, strerror(-r));
                        if (e->kind == BD_M_DIR)
                                it->dst = DST_ABSENT;
                }
        }

        /* extras, children before their directory (reverse path order) */
        if (s->o.delete_extra) {
                /* directories in the way of files go with them (what they
                 * hold is among the extras): merge, keeping the path order */
                size_t *all = xmalloc((x->nextra + x->ninway + 1) * sizeof(size_t));
                size_t a = 0, b = 0, n = 0;
                while (a < x->nextra || b < x->ninway)
                        all[n++] = b == x->ninway || (a < x->nextra && x->extra[a] < x->inway[b]) ? x->extra[a++]
                                                                                                 : x->inway[b++];
                free(x->extra);
                x->extra = all;
                x->nextra = n;
                for (size_t k = x->nextra; k-- > 0;) {
                        const struct bd_tentry *d = &s->dtree.e[x->extra[k]];
                        _cleanup_free_ char *p = manifest_escaped(d->path);
                        char why[128];
                        int r = remove_at(s, d->path, S_ISDIR(d->mode));
                        if (r < 0 && r != -ENOENT)
                                stage_problem(s, PROB_DEST, d->path, "cannot remove '%s' from the destination: %s", p,
                                              strerror(-r));
                        else
                                stage_problem(s, PROB_REMOVED, d->path, "removed '%s': %s", p,
                                              stage_extra_why(s, d, why, sizeof(why)));
                }
                for (size_t i = 0; i < s->m.n; i++)
                        if (s->items[i].dst_is_dir && s->items[i].act != ACT_NONE)
                                s->items[i].dst = DST_ABSENT;
        } else {
                for (size_t k = 0; k < x->nextra; k++) {
                        const struct bd_tentry *d = &s->dtree.e[x->extra[k]];
                        _cleanup_free_ char *p = manifest_escaped(d->path);
                        char why[128];
                        stage_problem(s, PROB_EXTRA, d->path, "%s: '%s' kept (--delete removes it)",
                                      stage_extra_why(s, d, why, sizeof(why)), p);
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
                        _cleanup_close_ int pfd = tree_open_beneath(s->dstfd, parent, O_PATH | O_DIRECTORY, 0);
                        if (pfd < 0 || (mkdirat(pfd, base_name(e->path), 0700) < 0 && errno != EEXIST))
                                return stage_fatal(s, "cannot create directory '%s' in the destination: %s", p,
                                                   strerror(pfd < 0 ? -pfd : errno));
                        touched(s);
                        it->dst = DST_OK;
                        it->mode_differs = true;
                } else if (!root && (e->mode & 0300) != 0300) {
                        _cleanup_close_ int fd = tree_open_beneath(s->dstfd, e->path, O_RDONLY | O_DIRECTORY, 0);
                        if (fd >= 0)
                                (void)fchmod(fd, e->mode | 0700);
                }
        }
        return 0;
}

/* ---- finishing ----------------------------------------------------------------------------- */

/* Directory permissions and mtimes, deepest first (entries written into a
 * directory change its mtime). */
void stage_fix_dirs(struct bd_stage *s)
{
        for (size_t i = s->m.n; i-- > 0;) {
                const struct bd_mentry *e = &s->m.e[i];
                if (e->kind != BD_M_DIR || s->items[i].failed)
                        continue;
                _cleanup_close_ int fd = tree_open_beneath(s->dstfd, e->path, O_RDONLY | O_DIRECTORY, 0);
                struct stat st;
                int r = fd < 0 ? fd : fstat(fd, &st) < 0 ? -errno : 0;
                if (r == 0 && (st.st_mode & 07777) != e->mode && (touched(s), fchmod(fd, e->mode) < 0))
                        r = -errno;
                struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { e->mtime_sec, e->mtime_nsec } };
                if (r == 0 && !same_mtime(&st, e) && (touched(s), futimens(fd, ts) < 0))
                        r = -errno;
                if (r < 0) {
                        _cleanup_free_ char *p = manifest_escaped(e->path);
                        stage_problem(s, PROB_DEST, e->path, "cannot set the attributes of directory '%s': %s", p,
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

void stage_write_dst_manifest(struct bd_stage *s)
{
        uint8_t have[16];
        if (dst_manifest_sum(s, have) && !memcmp(have, s->m.sum, 16))
                return;
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        buf_init(&b);
        struct bd_err err;
        _cleanup_free_ char *path = xasprintf("%s/%s", s->dst, MANIFEST_NAME);
        if (manifest_format(&s->m, &b, &err) < 0 || fs_write_atomic(path, b.s, b.len, 0644, &err) < 0)
                stage_problem(s, PROB_DEST, MANIFEST_NAME, "cannot store the manifest in the destination: %s", err.msg);
}


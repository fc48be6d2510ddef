/* stage.c: the stage job: options, the run from scan to finish, the API. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fs.h"
#include "stage-int.h"

/* ---- options --------------------------------------------------------------------- */

/* Absolute (the state file outlives the working directory), one spelling. */
static char *clean_path(const char *p)
{
        return p ? fs_path_clean(p) : NULL;
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
        s->srcfd = s->dstfd = s->namefd = -1;
        manifest_init(&s->m);
        atomic_init(&s->state, STAGE_IDLE);
        atomic_init(&s->phase, PHASE_START);
        s->bw = copy_bwlimit_new(s->o.bwlimit);
        copy_copier_init(&s->copier, s->o.copy_method, s->bw, &s->stop, &s->bytes_done);
        return s;
}

static void save_record(struct bd_stage *s, enum bd_stage_state state, bool final)
{
        /* without the destination's lock, the state file may be another job's */
        if (!s->name || !s->state_dir || s->o.mode == STAGE_MANIFEST_ONLY || !s->locked)
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
                r->finished = final ? clock_wall() : 0;
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
                if (final && state == STAGE_COMPLETE) {
                        if (s->o.verify)
                                r->verified = clock_wall();
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
                        r->verified = clock_wall();
                if (!r->dst)
                        r->dst = xstrdup(s->dst);
        } else
                return;
        if (final && s->m.n) {
                r->have_manifest = true;
                memcpy(r->manifest_sum, s->m.sum, 16);
        }
        free(r->error);
        const char *e = stage_failure(s);
        r->error = e ? xstrdup(e) : NULL;
        struct bd_err err;
        if (stage_record_save(s->state_dir, r, &err) < 0 && !final)
                stage_fatal(s, "%s", err.msg);
}

/* ---- the job ------------------------------------------------------------------------------------ */

static void set_phase(struct bd_stage *s, enum bd_stage_phase p)
{
        if (p == PHASE_TRANSFER) {
                atomic_store(&s->phase_bytes0, GET(bytes_done));
                atomic_store(&s->phase_t0, clock_monotonic());
        }
        atomic_store(&s->phase, p);
}

/* True when the directory fd is, or lies under, the directory st names. */
static bool within(int fd, const struct stat *st)
{
        _cleanup_close_ int cur = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        for (int depth = 0; cur >= 0 && depth < 4096; depth++) {
                struct stat a;
                if (fstat(cur, &a) < 0)
                        return false;
                if (a.st_dev == st->st_dev && a.st_ino == st->st_ino)
                        return true;
                int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                struct stat b;
                bool top = up < 0 || fstat(up, &b) < 0 || (b.st_dev == a.st_dev && b.st_ino == a.st_ino);
                close(cur);
                cur = up;
                if (top)
                        return false;
        }
        return false;
}

/* SRC/.benchd-manifest is where the manifest is stored and is never staged:
 * true unless something else has that name (it would be left out, and
 * overwritten). */
static bool src_manifest_name_ours(int srcfd)
{
        struct stat st;
        if (fstatat(srcfd, MANIFEST_NAME, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return true;
        char head[sizeof(MANIFEST_MAGIC)];
        _cleanup_close_ int fd = S_ISREG(st.st_mode) ? openat(srcfd, MANIFEST_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                                                     : -1;
        return fd >= 0 && read(fd, head, sizeof(head)) == (ssize_t)sizeof(head) &&
               !memcmp(head, MANIFEST_MAGIC " ", sizeof(head));
}

static int open_roots(struct bd_stage *s)
{
        if (s->src) {
                s->srcfd = open(s->src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (s->srcfd < 0)
                        return stage_fatal(s, "cannot open source directory '%s': %s", s->src, strerror(errno));
                if (!src_manifest_name_ours(s->srcfd))
                        return stage_fatal(s, "the source '%s' holds '%s', which is not a benchd manifest: the name is "
                                           "reserved for the manifest stored with a dataset; rename it", s->src,
                                           MANIFEST_NAME);
        }
        if (!s->dst)
                return 0;
        struct stat sst;
        if (s->o.mode == STAGE_COPY && s->srcfd >= 0 && fstat(s->srcfd, &sst) == 0) {
                /* a destination inside the source: refuse before creating it there */
                _cleanup_free_ char *p = xstrdup(s->dst);
                for (;;) {
                        _cleanup_close_ int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (fd >= 0) {
                                if (within(fd, &sst))
                                        return stage_fatal(s, "the source '%s' and the destination '%s' overlap",
                                                           s->src, s->dst);
                                break;
                        }
                        char *slash = strrchr(p, '/');
                        if (!slash || slash == p)
                                break;
                        *slash = '\0';
                }
        }
        if (s->o.mode == STAGE_COPY) {
                int r = fs_mkdir_p(s->dst, 0755);
                if (r < 0)
                        return stage_fatal(s, "cannot create destination directory '%s': %s", s->dst, strerror(-r));
        }
        s->dstfd = open(s->dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s->dstfd < 0)
                return stage_fatal(s, "cannot open destination directory '%s': %s", s->dst, strerror(errno));
        if (flock(s->dstfd, (s->o.mode == STAGE_COPY ? LOCK_EX : LOCK_SH) | LOCK_NB) < 0)
                return stage_fatal(s, "destination '%s' is being staged by another process", s->dst);
        if (s->name && s->state_dir && s->o.mode != STAGE_MANIFEST_ONLY) {
                /* the state file is the name's: two stages of one name to two
                 * destinations would overwrite each other's */
                int r = fs_mkdir_p(s->state_dir, 0700);
                _cleanup_free_ char *path = xasprintf("%s/%s.lock", s->state_dir, s->name);
                s->namefd = r < 0 ? r : open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
                if (s->namefd < 0)
                        return stage_fatal(s, "cannot open '%s': %s", path, strerror(r < 0 ? -r : errno));
                if (flock(s->namefd, LOCK_EX | LOCK_NB) < 0)
                        return stage_fatal(s, "dataset '%s' is being staged by another process (give this one another "
                                           "--name)", s->name);
                stage_record_clean(s->state_dir, s->name);
        }
        s->locked = true;
        if (s->o.copy_method == COPY_AUTO && s->srcfd >= 0)
                atomic_store(&s->copier.method, (int)copy_method_auto(s->srcfd, s->dstfd));
        if (s->srcfd >= 0)
                atomic_store(&s->copier.direct_read, copy_direct_read_auto(s->srcfd));
        struct stat dst;
        if (s->srcfd >= 0 && fstat(s->srcfd, &sst) == 0 && fstat(s->dstfd, &dst) == 0 &&
            (within(s->dstfd, &sst) || within(s->srcfd, &dst)))
                return stage_fatal(s, "the source '%s' and the destination '%s' overlap", s->src, s->dst);
        if (s->o.mode == STAGE_COPY) {
                /* refuse early, and once, when nothing can be written there */
                char probe[64];
                snprintf(probe, sizeof(probe), STAGE_TMP_PREFIX "probe.%lx", (long)getpid());
                int fd = openat(s->dstfd, probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                if (fd < 0 && errno != EEXIST)
                        return stage_fatal(s, "cannot write in destination directory '%s': %s", s->dst,
                                           strerror(errno));
                if (fd >= 0)
                        close(fd);
                (void)unlinkat(s->dstfd, probe, 0);
        }
        return 0;
}

static int run(struct bd_stage *s)
{
        s->t0 = clock_monotonic();
        s->started = clock_wall();
        atomic_store(&s->state, STAGE_RUNNING);
        if (s->name && s->state_dir) {
                struct bd_err err;
                int r = stage_record_load(s->state_dir, s->name, &s->rec, &err);
                if (r == 0) {
                        s->have_rec = true;
                        s->prev_unsynced = s->rec.state != STAGE_COMPLETE;
                        /* suspects are about this destination only */
                        if (s->rec.dst && s->dst && !streq(s->rec.dst, s->dst)) {
                                for (size_t i = 0; i < s->rec.nsuspects; i++)
                                        free(s->rec.suspects[i]);
                                s->rec.nsuspects = 0;
                        }
                        s->suspects = s->rec.suspects;
                        s->nsuspects = s->rec.nsuspects;
                } else if (r != -ENOENT)
                        stage_problem(s, PROB_SKIPPED, ".", "ignoring state file: %s", err.msg);
        }
        if (open_roots(s) < 0)
                return -1;
        save_record(s, STAGE_RUNNING, false);
        if (stopping(s))
                return -1;

        s->pool = pool_new(s->o.workers);
        if (!s->pool)
                return stage_fatal(s, "cannot start %u worker threads: %s", s->o.workers, strerror(errno));
        s->w = xcalloc(s->o.workers, sizeof(*s->w));
        for (unsigned i = 0; i < s->o.workers; i++) {
                s->w[i].buf = xaligned_alloc(COPY_BUF_ALIGN, BUF_SIZE);
                s->w[i].ddir_fd = -1;
        }

        /* scan SRC and DST at once */
        set_phase(s, PHASE_SCAN);
        _cleanup_manifest_ struct bd_manifest old;
        manifest_init(&old);
        bool have_old = false;
        if (s->src && !s->o.rehash)
                have_old = stage_load_stored_manifest(s, &old);
        struct bd_tree_scan *ss = s->src ? tree_scan_begin(s->pool, s->srcfd, TREE_SKIP_RESERVED, &s->stop,
                                                           stage_scan_problem, s) : NULL;
        struct bd_tree_scan *ds = s->dst ? tree_scan_begin(s->pool, s->dstfd, 0, &s->stop, stage_dscan_problem, s)
                                         : NULL;
        int r1 = ss ? tree_scan_end(ss, &s->stree) : 0;
        int r2 = ds ? tree_scan_end(ds, &s->dtree) : 0;
        if (r1 < 0 || r2 < 0 || stopping(s))
                return -1;
        if (s->src) {
                stage_build_manifest(s, have_old ? &old : NULL);
        } else {
                _cleanup_free_ char *path = xasprintf("%s/%s", s->dst, MANIFEST_NAME);
                struct bd_err err;
                if (access(path, F_OK) < 0)
                        return stage_fatal(s, "no manifest in '%s' (it is written when a stage completes): give the "
                                           "source with --src", s->dst);
                if (manifest_load(path, &s->m, &err) < 0)
                        return stage_fatal(s, "%s", err.msg);
                s->manifest_path = TAKE_PTR(path);
        }
        atomic_store(&s->files_total, s->m.files);
        atomic_store(&s->bytes_total, s->m.bytes);

        struct extras x = { 0 };
        stage_plan(s, &x);
        int r = 0;
        if (s->o.mode == STAGE_COPY)
                r = stage_prepare(s, &x);
        else if (s->o.mode == STAGE_VERIFY_ONLY) {
                for (size_t k = 0; k < x.ntmp; k++) {
                        _cleanup_free_ char *p = manifest_escaped(s->dtree.e[x.tmp[k]].path);
                        stage_problem(s, PROB_SKIPPED, s->dtree.e[x.tmp[k]].path,
                                      "leftover temporary file '%s' (the next stage removes it)", p);
                }
                for (size_t k = 0; k < x.nextra; k++) {
                        const struct bd_tentry *d = &s->dtree.e[x.extra[k]];
                        _cleanup_free_ char *p = manifest_escaped(d->path);
                        char why[128];
                        const char *w = stage_extra_why(s, d, why, sizeof(why));
                        if (manifest_find(&s->m, d->path))
                                stage_problem(s, PROB_EXTRA, d->path, "extra: '%s': %s", p, w);
                        else
                                stage_problem(s, PROB_EXTRA, d->path, "extra: '%s' is not in the manifest", p);
                }
        }
        free(x.tmp);
        free(x.extra);
        free(x.inway);
        if (r < 0 || stopping(s))
                return -1;

        set_phase(s, PHASE_TRANSFER);
        stage_make_order(s);
        pool_for(s->pool, s->norder, stage_transfer_one, s);
        for (unsigned i = 0; i < s->o.workers; i++)
                stage_drop_parent_cache(&s->w[i]);
        if (s->src && !s->src_incomplete && !atomic_load(&s->cancelled))
                stage_store_manifest(s);
        if (stopping(s))
                return -1;

        set_phase(s, PHASE_FINISH);
        if (s->o.mode == STAGE_COPY) {
                stage_fix_dirs(s);
                /* nothing written, nothing to sync (syncfs would flush others' data too) */
                if (s->o.fsync != FSYNC_NONE && (atomic_load(&s->wrote) || s->prev_unsynced) && syncfs(s->dstfd) < 0)
                        return stage_fatal(s, "cannot sync the destination '%s': %s", s->dst, strerror(errno));
                if (GET(errors) == 0)
                        stage_write_dst_manifest(s);
        }
        return GET(errors) == 0 && !s->src_incomplete ? 0 : -1;
}

int stage_run(struct bd_stage *s)
{
        int r = run(s);
        enum bd_stage_state st = atomic_load(&s->cancelled) ? STAGE_CANCELLED : r == 0 ? STAGE_COMPLETE : STAGE_FAILED;
        /* suspended (its daemon stops): recorded as still running, so that the
         * next daemon resumes it */
        save_record(s, atomic_load(&s->suspended) ? STAGE_RUNNING : st, true);
        if (s->pool) {
                pool_free(s->pool);
                s->pool = NULL;
        }
        if (s->w) {
                for (unsigned i = 0; i < s->o.workers; i++) {
                        free(s->w[i].buf);
                        stage_drop_parent_cache(&s->w[i]);
                }
                free(s->w);
                s->w = NULL;
        }
        if (s->srcfd >= 0)
                close(s->srcfd);
        if (s->dstfd >= 0)
                close(s->dstfd);    /* releases the locks */
        if (s->namefd >= 0)
                close(s->namefd);
        s->srcfd = s->dstfd = s->namefd = -1;
        s->result = st == STAGE_COMPLETE ? 0 : st == STAGE_CANCELLED ? -ECANCELED : -EIO;
        pthread_mutex_lock(&s->lock);
        s->t_end = clock_monotonic();
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

void stage_suspend(struct bd_stage *s)
{
        atomic_store(&s->suspended, true);
        stage_cancel(s);
}

void stage_progress(struct bd_stage *s, struct bd_stage_progress *p)
{
        memset(p, 0, sizeof(*p));
        p->state = (enum bd_stage_state)atomic_load(&s->state);
        p->phase = (enum bd_stage_phase)atomic_load(&s->phase);
        double now = clock_monotonic();
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
        copy_bwlimit_free(s->bw);
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->ended);
        free(s->name);
        free(s->src);
        free(s->dst);
        free(s->state_dir);
        free(s);
}

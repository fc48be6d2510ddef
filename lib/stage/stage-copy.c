/* stage-copy.c: the work on one entry: checksum the source, check the
 * destination, copy to a temporary name, check, rename into place. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stage-int.h"

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
        int fd = tree_open_beneath(s->dstfd, dir, O_PATH | O_DIRECTORY, 0);
        if (fd < 0)
                return fd;
        w->ddir = TAKE_PTR(dir);
        w->ddir_fd = fd;
        return fd;
}

void stage_drop_parent_cache(struct worker *w)
{
        if (w->ddir_fd >= 0)
                close(w->ddir_fd);
        free(w->ddir);
        w->ddir = NULL;
        w->ddir_fd = -1;
}

/* ---- the transfer ------------------------------------------------------------------------ */

static int open_src(struct bd_stage *s, const struct bd_mentry *e, struct stat *st)
{
        int fd = tree_open_beneath(s->srcfd, e->path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
        _cleanup_free_ char *p = NULL;
        if (fd < 0) {
                p = manifest_escaped(e->path);
                if (fd == -ENOENT || fd == -ELOOP || fd == -EXDEV)
                        stage_problem(s, PROB_SOURCE, e->path,
                                      "'%s' vanished from the source or was replaced while staged", p);
                else
                        stage_problem(s, PROB_SOURCE, e->path, "cannot open '%s' in the source: %s", p, strerror(-fd));
                return -1;
        }
        if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || (uint64_t)st->st_size != e->size || !same_mtime(st, e)) {
                p = manifest_escaped(e->path);
                stage_problem(s, PROB_SOURCE, e->path,
                              "'%s' changed in the source while staged (size or mtime differs)", p);
                close(fd);
                return -1;
        }
        return fd;
}

/* The source checksum of an entry that has none yet. */
static int hash_source(struct bd_stage *s, struct worker *w, struct bd_mentry *e, int sfd, const struct stat *before,
                       uint64_t *credited)
{
        uint8_t sum[16];
        uint64_t len;
        bool counted = s->o.mode == STAGE_MANIFEST_ONLY;       /* the job's work is this checksum */
        int r = copy_hash_fd(sfd, w->buf, BUF_SIZE, &s->stop, counted ? &s->bytes_done : NULL, sum, &len);
        if (counted)
                *credited += len;
        if (r == -ECANCELED)
                return r;
        _cleanup_free_ char *p = manifest_escaped(e->path);
        if (r < 0) {
                stage_problem(s, PROB_SOURCE, e->path, "cannot read '%s' in the source: %s", p, strerror(-r));
                return r;
        }
        struct stat after;
        if (fstat(sfd, &after) < 0 || !same_change(before, &after) || len != e->size) {
                stage_problem(s, PROB_SOURCE, e->path, "'%s' changed in the source while it was checksummed", p);
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
        int r = copy_hash_fd(fd, w->buf, BUF_SIZE, &s->stop, &s->bytes_done, sum, &len);
        *credited += len;
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
                stage_problem(s, PROB_DEST, e->path, "cannot open the directory of '%s' in the destination: %s", p,
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
                        return stage_fatal(s, "cannot create a file in the destination '%s': %s", s->dst, strerror(-r));
                stage_problem(s, PROB_DEST, e->path, "cannot create '%s' in the destination: %s", p, strerror(-r));
                return -1;
        }
        uint8_t sum[16];
        uint64_t copied = 0;
        bool dest_side = false;
        /* no checksum yet: the copy's is the source's (the manifest's from now on) */
        bool first_sum = !e->have_sum;
        int r = copy_fd(&s->copier, *sfdp, tfd, e->size, w->buf, BUF_SIZE, sum, &copied, &dest_side);
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
        touched(s);
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
                stage_problem(s, PROB_SOURCE, e->path, "'%s' %s", p, why);
                return -1;
        }
        if (dest_side && dest_fatal_errno(-r))
                return stage_fatal(s, "cannot write '%s' in the destination '%s': %s", p, s->dst, strerror(-r));
        if (dest_side)
                stage_problem(s, PROB_DEST, e->path, "cannot write '%s' in the destination: %s", p, strerror(-r));
        else
                stage_problem(s, PROB_SOURCE, e->path, "cannot read '%s' in the source: %s", p, strerror(-r));
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
                touched(s);
                struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { e->mtime_sec, e->mtime_nsec } };
                (void)utimensat(pfd, tmp, ts, AT_SYMLINK_NOFOLLOW);
                if (renameat(pfd, tmp, pfd, base_name(e->path)) < 0) {
                        r = -errno;
                        (void)unlinkat(pfd, tmp, 0);
                }
        }
        if (r < 0) {
                if (dest_fatal_errno(-r))
                        stage_fatal(s, "cannot write '%s' in the destination '%s': %s", p, s->dst, strerror(-r));
                else
                        stage_problem(s, PROB_DEST, e->path, "cannot create symlink '%s' in the destination: %s", p,
                                      strerror(-r));
        }
}

void stage_transfer_one(void *data, size_t k, unsigned wi)
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
                        stage_problem(s, PROB_SKIPPED, e->path,
                                      "symlink '%s' points out of the source tree ('%s'): not staged", p, t);
                } else if (it->act == ACT_LINK && !it->failed)
                        make_link(s, w, wi, e);
                return;
        }
        _cleanup_free_ char *p = manifest_escaped(e->path);
        _cleanup_close_ int sfd = -1;
        struct stat sst;
        uint64_t credited = 0;  /* bytes of this file already counted in bytes_done */
        bool ok = !it->failed;  /* failed already: in the way, reported by stage_prepare() */
        bool repair = false;    /* found damaged at DST: recopied */
        int act = it->act;
        if (it->need_hash && act == ACT_COPY && ok) {
                /* copy_file() checksums it while it copies it */
        } else if (it->need_hash) {
                sfd = open_src(s, e, &sst);
                ok = sfd >= 0 && hash_source(s, w, e, sfd, &sst, &credited) == 0 && ok;
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
                                touched(s);
                                act = pfd >= 0 && utimensat(pfd, base_name(e->path), ts, AT_SYMLINK_NOFOLLOW) == 0
                                              ? ACT_NONE : ACT_COPY;
                        } else
                                act = ACT_NONE;
                        if (s->o.mode == STAGE_VERIFY_ONLY && it->dst == DST_DIFFERS)
                                stage_problem(s, PROB_ATTR, e->path,
                                              "attributes: '%s' has the right content but not the manifest's mtime", p);
                        else if (s->o.mode == STAGE_VERIFY_ONLY && it->mode_differs)
                                stage_problem(s, PROB_ATTR, e->path,
                                              "attributes: '%s' has not the manifest's permissions %04o", p, e->mode);
                } else if (s->o.mode == STAGE_VERIFY_ONLY) {
                        if (r == 0)
                                stage_problem(s, PROB_CORRUPT, e->path,
                                              "corrupt: '%s' does not match its manifest checksum", p);
                        else
                                stage_problem(s, PROB_DEST, e->path, "cannot read '%s' in the destination: %s", p,
                                              strerror(-r));
                        ok = false;
                } else {
                        /* damaged, or unreadable: copy it again */
                        repair = act == ACT_VERIFY;
                        act = ACT_COPY;
                        atomic_fetch_sub_explicit(&s->bytes_done, credited, memory_order_relaxed);
                        credited = 0;
                }
        }
        if (ok && act == ACT_COPY) {
                ok = copy_file(s, w, wi, e, &sfd, &sst, &credited) == 0;
                if (ok) {
                        ADD(files_copied, 1);
                        ADD(bytes_copied, e->size);
                        if (repair) {
                                ADD(files_repaired, 1);
                                stage_problem(s, PROB_REPAIRED, e->path, "repaired '%s': it did not match its checksum",
                                              p);
                        }
                }
        } else if (ok && act == ACT_NONE && s->o.mode == STAGE_COPY) {
                ADD(files_present, 1);
                if (it->mode_differs) {
                        touched(s);
                        int pfd = dst_parent(s, w, e->path);
                        if (pfd < 0 || fchmodat(pfd, base_name(e->path), e->mode, 0) < 0)
                                stage_problem(s, PROB_DEST, e->path,
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


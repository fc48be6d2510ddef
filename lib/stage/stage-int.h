/* stage-int.h: the stage job's insides, shared by stage.c (the job and its
 * API), stage-problem.c (problems and the fatal error), stage-plan.c (manifest, what to do with each entry, preparing and
 * finishing DST), stage-copy.c (the per-file work) and stage-record.c (state
 * files).  Not for other users. */
#ifndef BD_STAGE_INT_H
#define BD_STAGE_INT_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>

#include "filecopy.h"
#include "pool.h"
#include "clock.h"
#include "stage.h"
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
        atomic_bool suspended;  /* cancelled, but the state file stays "running" to be resumed */
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
        int namefd;             /* STATE_DIR/NAME.lock, flocked: one stage of a name at a time */
        bool locked;            /* holds DST's and the name's flocks: may write the state file */
        atomic_bool wrote;      /* something in DST was changed: sync it at the end */
        bool prev_unsynced;     /* the last run did not complete: what it wrote may not be synced */
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

#define ADD(counter, v) atomic_fetch_add_explicit(&s->counter, (v), memory_order_relaxed)
#define GET(counter) atomic_load_explicit(&s->counter, memory_order_relaxed)


/* DST entries that the manifest does not list: leftovers, extras; and
 * directories standing where the manifest has a file or link.  Indices into
 * dtree, in path order. */
struct extras {
        size_t *tmp, ntmp;
        size_t *extra, nextra;
        size_t *inway, ninway;
};

/* ---- stage-problem.c ---- */
/* Records a problem with an entry (severity from its kind; counted). */
void stage_problem(struct bd_stage *s, enum bd_problem_kind kind, const char *path, const char *fmt, ...)
        _printf_(4, 5);
/* A failure of the whole job: the first message is kept, every worker stops; returns -1. */
int stage_fatal(struct bd_stage *s, const char *fmt, ...) _printf_(2, 3);

static inline bool stopping(struct bd_stage *s)
{
        return atomic_load_explicit(&s->stop, memory_order_relaxed);
}

static inline void touched(struct bd_stage *s)
{
        atomic_store_explicit(&s->wrote, true, memory_order_relaxed);
}

static inline bool dest_fatal_errno(int e)
{
        return e == ENOSPC || e == EDQUOT || e == EROFS || e == EIO;
}

static inline const char *base_name(const char *path)
{
        const char *slash = strrchr(path, '/');
        return slash ? slash + 1 : path;
}

static inline bool same_mtime(const struct stat *st, const struct bd_mentry *e)
{
        return st->st_mtim.tv_sec == e->mtime_sec && (uint32_t)st->st_mtim.tv_nsec == e->mtime_nsec;
}

static inline bool same_change(const struct stat *a, const struct stat *b)
{
        return a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
               a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
               a->st_ctim.tv_nsec == b->st_ctim.tv_nsec && a->st_ino == b->st_ino;
}


/* ---- stage-plan.c ---- */
void stage_scan_problem(void *data, const char *path, int err);
void stage_dscan_problem(void *data, const char *path, int err);
bool stage_load_stored_manifest(struct bd_stage *s, struct bd_manifest *old);
void stage_build_manifest(struct bd_stage *s, const struct bd_manifest *old);
void stage_store_manifest(struct bd_stage *s);
void stage_plan(struct bd_stage *s, struct extras *x);
void stage_make_order(struct bd_stage *s);
int stage_prepare(struct bd_stage *s, struct extras *x);
/* Why a destination entry among the extras is not kept: "not in the manifest",
 * or what the manifest has at its path instead (in buf, or a constant). */
const char *stage_extra_why(struct bd_stage *s, const struct bd_tentry *d, char *buf, size_t len);
void stage_fix_dirs(struct bd_stage *s);
void stage_write_dst_manifest(struct bd_stage *s);

/* ---- stage-copy.c ---- */
/* pool_for() body: the work on entry s->order[k] */
void stage_transfer_one(void *data, size_t k, unsigned wi);
void stage_drop_parent_cache(struct worker *w);

#endif

/* tree.h: a parallel scan of a directory tree that never follows symlinks.
 *
 * tree_scan() lists everything under a root directory (the root excluded):
 * directories are read by one task each, and their entries are lstat'ed in
 * batches by the pool's workers, so a directory of 100,000 files is still
 * scanned in parallel.  Entries come back sorted by path (strcmp), the order
 * of a manifest.
 *
 * Every path is opened relative to the root's descriptor with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS (openat2, Linux 5.6; a component by
 * component O_NOFOLLOW walk on older kernels): a symlink anywhere in the tree,
 * or a directory replaced by one while we work, is never followed.
 */
#ifndef BD_TREE_H
#define BD_TREE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool.h"

struct bd_tentry {
        char *path;             /* relative to the root, raw bytes */
        char *target;           /* symlinks: the target */
        uint64_t size;
        int64_t mtime_sec;
        uint32_t mtime_nsec;
        uint32_t mode;          /* st_mode, file type included */
};

struct bd_tree {
        struct bd_tentry *e;    /* sorted by path */
        size_t n;
};

enum bd_tree_flags {
        TREE_SKIP_RESERVED = 1 << 0,    /* leave out the names manifest_name_reserved() lists */
};

/* Called (from any worker, serialised by the scan) for what cannot be read:
 * a directory that cannot be opened or listed, an entry that cannot be
 * lstat'ed or a link that cannot be read.  err is a negative errno. */
typedef void (*bd_tree_problem_fn)(void *data, const char *path, int err);

/* Scans the tree under rootfd.  Returns 0, or -ECANCELED when *cancel was set. */
int tree_scan(struct bd_pool *pool, int rootfd, unsigned flags, const atomic_bool *cancel, bd_tree_problem_fn problem,
              void *problem_data, struct bd_tree *ret);
/* The same in two steps, so that two trees are scanned at once by one pool:
 * begin queues the scan, end waits for every task of the pool and collects. */
struct bd_tree_scan;
struct bd_tree_scan *tree_scan_begin(struct bd_pool *pool, int rootfd, unsigned flags, const atomic_bool *cancel,
                                     bd_tree_problem_fn problem, void *problem_data);
int tree_scan_end(struct bd_tree_scan *scan, struct bd_tree *ret);
void tree_release(struct bd_tree *t);

/* Opens rel ("" for the root itself) beneath rootfd without following any
 * symlink; flags as for openat (O_CLOEXEC is added).  -errno on failure
 * (-ELOOP or -EXDEV: a symlink or an escape on the way). */
int tree_open_beneath(int rootfd, const char *rel, int flags, mode_t mode);

#endif

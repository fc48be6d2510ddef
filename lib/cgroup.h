/* cgroup.h: a cgroup of its own for one process (a tenant): the CPUs it may
 * use and the memory it may take, in the cgroup tree the machine has.
 *
 * Where: under this process's own cgroup (so a machine's or a job's limits
 * still hold above it), read from /proc/self/cgroup:
 *   - cgroup v2 (one hierarchy, ROOT/cgroup.controllers): ROOT/OWN/NAME with
 *     cpuset.cpus and memory.max, the controllers enabled in OWN's
 *     cgroup.subtree_control; where OWN holds processes and so cannot have
 *     controllers for children (v2's rule), or is the root, NAME goes beside
 *     OWN instead (its parent's child);
 *   - cgroup v1 (ROOT/cpuset and ROOT/memory hierarchies): ROOT/cpuset/OWN/NAME
 *     (cpuset.cpus, and cpuset.mems copied from its parent) and
 *     ROOT/memory/OWN/NAME (memory.limit_in_bytes).
 * ROOT is /sys/fs/cgroup; a test gives a tree of its own.  Nothing is
 * printed; failures come back in err with the file named. */
#ifndef BD_CGROUP_H
#define BD_CGROUP_H

#include <stdbool.h>
#include <sys/types.h>

#include "buf.h"
#include "cpuset.h"
#include "err.h"

struct bd_cgroup {
        int version;            /* 1 or 2 */
        char *dirs[2];          /* the cgroup's directories (v1: cpuset, memory; v2: one) */
        int ndirs;
        char *procs[2];         /* the file a process joins by (v1: tasks, v2: cgroup.procs) */
};

/* Makes cgroup NAME under ROOT (NULL: /sys/fs/cgroup) for the process of
 * /proc/self/cgroup (self_file NULL: that one) with CPUs cpus and at most
 * mem_max bytes (0: no limit).  0, or -errno with why in err. */
int cgroup_make(const char *root, const char *self_file, const char *name, const struct bd_cpuset *cpus,
                long long mem_max, struct bd_cgroup *cg, struct bd_err *err);
/* Moves process pid (0: this one) into it. */
int cgroup_join(const struct bd_cgroup *cg, pid_t pid, struct bd_err *err);
/* Where it is, for people: "cgroup v1 cpuset:/a/NAME memory:/b/NAME" */
void cgroup_describe(const struct bd_cgroup *cg, const char *root, struct bd_buf *out);
/* Removes its directories (empty once its processes ended; retried a while
 * for the kernel to let go of them) and frees it. */
int cgroup_remove(struct bd_cgroup *cg, struct bd_err *err);
void cgroup_release(struct bd_cgroup *cg);

/* MemTotal of a meminfo file (NULL: /proc/meminfo) in bytes, -errno. */
long long meminfo_total(const char *path);
/* A size: bytes, or with K, M, G or T (powers of 1024); -EINVAL. */
long long size_parse(const char *s);

#endif

/* cgroup.c: a cgroup of its own for one process (cgroup.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "fs.h"
#include "strutil.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

/* Writes text to a cgroup file (no temporary: cgroup files take writes in
 * place, one write each). */
static int put(const char *path, const char *text, struct bd_err *err)
{
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return bd_err_set(err, -errno, "%s: %s", path, strerror(errno));
        size_t n = strlen(text);
        ssize_t w = write(fd, text, n);
        int e = w < 0 ? errno : 0;
        close(fd);
        if (w < 0)
                return bd_err_set(err, -e, "cannot write '%s' to %s: %s", text, path, strerror(e));
        if ((size_t)w != n)
                return bd_err_set(err, -EIO, "cannot write '%s' to %s: short write", text, path);
        return 0;
}

static bool exists(const char *path)
{
        return access(path, F_OK) == 0;
}

/* The path of this process's cgroup in a hierarchy of /proc/self/cgroup:
 * controller "" for v2's line (0::PATH), else v1's line naming it. */
static char *own_path(const char *self_file, const char *controller, struct bd_err *err)
{
        _cleanup_free_ char *data = NULL;
        int r = fs_read_file(self_file, 1 << 16, &data, NULL, err);
        if (r < 0)
                return NULL;
        for (char *line = data, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2)
                        continue;
                *c2 = '\0';
                const char *ctrls = c1 + 1, *path = c2 + 1;
                if (!*controller) {
                        if (!*ctrls)
                                return xstrdup(path);
                        continue;
                }
                /* "cpu,cpuacct": a list of controllers */
                _cleanup_free_ char *list = xstrdup(ctrls);
                char *save = NULL;
                for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
                        if (streq(t, controller))
                                return xstrdup(path);
        }
        bd_err_set(err, -ENOENT, "%s: no %s%s cgroup", self_file, *controller ? controller : "v2",
                   *controller ? "" : " (0::)");
        return NULL;
}

/* dir/rel (rel starting with '/', "/" alone: dir) */
static char *join(const char *dir, const char *rel)
{
        return xasprintf("%s%s", dir, streq(rel, "/") ? "" : rel);
}

static void add_dir(struct bd_cgroup *cg, char *dir, const char *procs)
{
        cg->dirs[cg->ndirs] = dir;
        cg->procs[cg->ndirs] = xasprintf("%s/%s", dir, procs);
        cg->ndirs++;
}

static int make_dir(const char *dir, struct bd_err *err)
{
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return bd_err_set(err, -errno, "cannot make cgroup %s: %s", dir, strerror(errno));
        return 0;
}

static int make_v1(const char *root, const char *self_file, const char *name, const struct bd_cpuset *cpus,
                   long long mem_max, struct bd_cgroup *cg, struct bd_err *err)
{
        cg->version = 1;
        _cleanup_buf_ struct bd_buf list = BD_BUF_INIT;
        cpuset_format(cpus, &list);
        static const char *const ctrls[] = { "cpuset", "memory" };
        for (size_t i = 0; i < 2; i++) {
                _cleanup_free_ char *own = own_path(self_file, ctrls[i], err);
                if (!own)
                        return -ENOENT;
                _cleanup_free_ char *top = xasprintf("%s/%s", root, ctrls[i]);
                char *home_dir = join(top, own);
                char *dir = xasprintf("%s/%s", home_dir, name);
                int r = make_dir(dir, err);
                add_dir(cg, dir, "tasks");
                if (r < 0) {
                        free(home_dir);
                        return r;
                }
                if (i == 0) {
                        /* a v1 cpuset takes no process before it has CPUs and
                         * memory nodes: its parent's nodes */
                        _cleanup_free_ char *pm = xasprintf("%s/cpuset.mems", home_dir), *mems = NULL;
                        _cleanup_free_ char *cf = xasprintf("%s/cpuset.cpus", dir), *mf = xasprintf("%s/cpuset.mems", dir);
                        r = fs_read_file(pm, 4096, &mems, NULL, err);
                        if (r >= 0) {
                                mems[strcspn(mems, "\n")] = '\0';
                                r = put(cf, list.s ? list.s : "", err);
                        }
                        if (r >= 0)
                                r = put(mf, mems, err);
                } else if (mem_max > 0) {
                        _cleanup_free_ char *f = xasprintf("%s/memory.limit_in_bytes", dir);
                        char v[32];
                        snprintf(v, sizeof(v), "%lld", mem_max);
                        r = put(f, v, err);
                }
                free(home_dir);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* v2: NAME under own, its controllers enabled there; where own cannot
 * have them (it holds processes: EBUSY) or is the root, beside own. */
static int make_v2(const char *root, const char *self_file, const char *name, const struct bd_cpuset *cpus,
                   long long mem_max, struct bd_cgroup *cg, struct bd_err *err)
{
        cg->version = 2;
        _cleanup_free_ char *own = own_path(self_file, "", err);
        if (!own)
                return -ENOENT;
        _cleanup_free_ char *home_dir = join(root, own);
        _cleanup_free_ char *parent = NULL;
        _cleanup_free_ char *ctl = xasprintf("%s/cgroup.subtree_control", home_dir);
        struct bd_err e;
        if (!streq(own, "/") && put(ctl, "+cpuset +memory", &e) == 0)
                parent = xstrdup(home_dir);
        else if (streq(own, "/")) {
                /* the root may hold processes and have controllers for children */
                int r = put(ctl, "+cpuset +memory", err);
                if (r < 0)
                        return r;
                parent = xstrdup(root);
        } else {
                parent = xstrdup(home_dir);
                *strrchr(parent, '/') = '\0';
                if (strlen(parent) < strlen(root))
                        parent = (free(parent), xstrdup(root));
                _cleanup_free_ char *pctl = xasprintf("%s/cgroup.subtree_control", parent);
                int r = put(pctl, "+cpuset +memory", err);
                if (r < 0)
                        return r;
        }
        char *dir = xasprintf("%s/%s", parent, name);
        int r = make_dir(dir, err);
        add_dir(cg, dir, "cgroup.procs");
        if (r < 0)
                return r;
        _cleanup_buf_ struct bd_buf list = BD_BUF_INIT;
        cpuset_format(cpus, &list);
        _cleanup_free_ char *cf = xasprintf("%s/cpuset.cpus", dir), *mf = xasprintf("%s/memory.max", dir);
        r = put(cf, list.s ? list.s : "", err);
        if (r >= 0 && mem_max > 0) {
                char v[32];
                snprintf(v, sizeof(v), "%lld", mem_max);
                r = put(mf, v, err);
        }
        return r;
}

int cgroup_make(const char *root, const char *self_file, const char *name, const struct bd_cpuset *cpus,
                long long mem_max, struct bd_cgroup *cg, struct bd_err *err)
{
        *cg = (struct bd_cgroup){ 0 };
        root = root ? root : CGROUP_ROOT;
        self_file = self_file ? self_file : "/proc/self/cgroup";
        if (!*name || strchr(name, '/') || streq(name, ".") || streq(name, ".."))
                return bd_err_set(err, -EINVAL, "cgroup name '%s': one path component", name);
        _cleanup_free_ char *v2 = xasprintf("%s/cgroup.controllers", root);
        _cleanup_free_ char *v1 = xasprintf("%s/cpuset", root), *v1m = xasprintf("%s/memory", root);
        int r;
        if (exists(v2))
                r = make_v2(root, self_file, name, cpus, mem_max, cg, err);
        else if (exists(v1) && exists(v1m))
                r = make_v1(root, self_file, name, cpus, mem_max, cg, err);
        else
                r = bd_err_set(err, -ENOENT, "%s: neither cgroup v2 (cgroup.controllers) nor v1's cpuset and "
                               "memory hierarchies", root);
        if (r < 0) {
                struct bd_err e;
                cgroup_remove(cg, &e);
        }
        return r;
}

int cgroup_join(const struct bd_cgroup *cg, pid_t pid, struct bd_err *err)
{
        char v[32];
        snprintf(v, sizeof(v), "%ld", (long)(pid ? pid : getpid()));
        for (int i = 0; i < cg->ndirs; i++) {
                int r = put(cg->procs[i], v, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

void cgroup_describe(const struct bd_cgroup *cg, const char *root, struct bd_buf *out)
{
        root = root ? root : CGROUP_ROOT;
        size_t n = strlen(root);
        buf_printf(out, "cgroup v%d", cg->version);
        for (int i = 0; i < cg->ndirs; i++) {
                const char *d = cg->dirs[i];
                const char *rel = strncmp(d, root, n) == 0 ? d + n : d;
                if (cg->version == 1) {
                        const char *slash = strchr(rel + 1, '/');
                        buf_printf(out, " %.*s:%s", slash ? (int)(slash - rel - 1) : 0, rel + 1, slash ? slash : rel);
                } else
                        buf_printf(out, " %s", rel);
        }
}

int cgroup_remove(struct bd_cgroup *cg, struct bd_err *err)
{
        int ret = 0;
        for (int i = 0; i < cg->ndirs; i++) {
                /* the kernel lets go of a cgroup a moment after its last
                 * process was reaped */
                int r = -1;
                for (int tries = 0; tries < 50; tries++) {
                        r = rmdir(cg->dirs[i]);
                        if (r == 0 || errno == ENOENT || errno != EBUSY)
                                break;
                        nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
                }
                if (r < 0 && errno != ENOENT && ret == 0)
                        ret = bd_err_set(err, -errno, "cannot remove cgroup %s: %s", cg->dirs[i], strerror(errno));
        }
        cgroup_release(cg);
        return ret;
}

void cgroup_release(struct bd_cgroup *cg)
{
        for (int i = 0; i < cg->ndirs; i++) {
                free(cg->dirs[i]);
                free(cg->procs[i]);
        }
        cg->ndirs = 0;
}

long long meminfo_total(const char *path)
{
        _cleanup_free_ char *data = NULL;
        int r = fs_read_file(path ? path : "/proc/meminfo", 1 << 20, &data, NULL, NULL);
        if (r < 0)
                return r;
        const char *p = strstr(data, "MemTotal:");
        if (!p)
                return -ENOENT;
        long long kb = 0;
        if (sscanf(p, "MemTotal: %lld kB", &kb) != 1 || kb <= 0)
                return -EINVAL;
        return kb * 1024;
}

long long size_parse(const char *s)
{
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno || v < 0 || *s == '-' || *s == '+' || *s == ' ')
                return -EINVAL;
        static const char units[] = "KMGT";
        if (*end) {
                const char *u = strchr(units, *end);
                if (!u || end[1])
                        return -EINVAL;
                for (long i = 0; i <= u - units; i++) {
                        if (v > (1LL << 52))
                                return -EINVAL;
                        v *= 1024;
                }
        }
        return v;
}

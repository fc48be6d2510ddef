/* test-tenants: a tenant's own cgroup in recorded cgroup trees (v1's cpuset
 * and memory hierarchies, v2 with and without room under the process's own
 * cgroup) and the tenants' round summary (median, sum, spread, the tenants
 * flagged at the tolerance, rates and times). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "fs.h"
#include "tap.h"
#include "tenants.h"

static char root[256];

/* DIR/NAME holding TEXT (the directory made) */
static void put_file(const char *dir, const char *name, const char *text)
{
        fs_mkdir_p(dir, 0755);
        char *p = xasprintf("%s/%s", dir, name);
        FILE *f = fopen(p, "w");
        if (f) {
                fputs(text, f);
                fclose(f);
        }
        free(p);
}

/* the file ROOT + DIR + "/" + NAME */
static char *slurp(const char *dir, const char *name)
{
        char *p = xasprintf("%s%s/%s", root, dir, name), *data = NULL;
        if (fs_read_file(p, 4096, &data, NULL, NULL) < 0)
                data = xstrdup("(none)");
        free(p);
        data[strcspn(data, "\n")] = 0;
        return data;
}

#define IS_FILE(dir, name, want, what)                   \
        do {                                             \
                char *_s = slurp(dir, name);             \
                is_str(_s, want, what);                  \
                free(_s);                                \
        } while (0)

static void rm_tree(void)
{
        char *cmd = xasprintf("rm -rf '%s'", root);
        if (system(cmd) != 0)
                fprintf(stderr, "# cannot remove %s\n", root);
        free(cmd);
}

static void test_v1(void)
{
        char d[512];
        snprintf(root, sizeof(root), "/tmp/bd-cg-XXXXXX");
        if (!mkdtemp(root))
                return (void)ok(0, "mkdtemp");
        snprintf(d, sizeof(d), "%s/cpuset", root);
        put_file(d, "cpuset.mems", "0-1\n");
        /* the process's memory cgroup is a job's (a sandbox's): the tenant's goes under it */
        snprintf(d, sizeof(d), "%s/memory/job/7", root);
        put_file(d, "memory.limit_in_bytes", "9223372036854771712\n");
        snprintf(d, sizeof(d), "%s/cpuset/t1", root);
        put_file(d, "cpuset.cpus", "");
        put_file(d, "cpuset.mems", "");
        put_file(d, "tasks", "");
        snprintf(d, sizeof(d), "%s/memory/job/7/t1", root);
        put_file(d, "memory.limit_in_bytes", "");
        put_file(d, "tasks", "");
        put_file(root, "self", "9:name=systemd:/\n4:memory:/job/7\n3:cpuset:/\n2:cpu,cpuacct:/\n");
        char self[512];
        snprintf(self, sizeof(self), "%s/self", root);
        struct bd_cpuset cpus;
        cpuset_parse(&cpus, "2-3,6");
        struct bd_cgroup cg;
        struct bd_err err = { "" };
        int r = cgroup_make(root, self, "t1", &cpus, 1LL << 30, &cg, &err);
        is_int(r, 0, "v1: made");
        if (r < 0)
                printf("# %s\n", err.msg);
        is_int(cg.version, 1, "v1: found as v1");
        IS_FILE("/cpuset/t1", "cpuset.cpus", "2-3,6", "v1: its CPUs");
        IS_FILE("/cpuset/t1", "cpuset.mems", "0-1", "v1: its parent's memory nodes");
        IS_FILE("/memory/job/7/t1", "memory.limit_in_bytes", "1073741824",
                "v1: its memory limit, under the process's own memory cgroup");
        is_int(cgroup_join(&cg, 4242, &err), 0, "v1: a process joins");
        IS_FILE("/cpuset/t1", "tasks", "4242", "v1: in the cpuset's tasks");
        IS_FILE("/memory/job/7/t1", "tasks", "4242", "v1: and the memory cgroup's");
        struct bd_buf b = BD_BUF_INIT;
        cgroup_describe(&cg, root, &b);
        is_str(b.s, "cgroup v1 cpuset:/t1 memory:/job/7/t1", "v1: described");
        buf_release(&b);
        cgroup_release(&cg);
        rm_tree();
}

static void test_v2(const char *own, bool room, const char *want_dir, const char *ctl_dir, const char *what)
{
        char d[512], self[512];
        snprintf(root, sizeof(root), "/tmp/bd-cg-XXXXXX");
        if (!mkdtemp(root))
                return (void)ok(0, "mkdtemp");
        put_file(root, "cgroup.controllers", "cpuset cpu io memory pids\n");
        put_file(root, "cgroup.subtree_control", "");
        snprintf(d, sizeof(d), "%s%s", root, streq(own, "/") ? "" : own);
        if (room)
                put_file(d, "cgroup.subtree_control", "");
        else
                fs_mkdir_p(d, 0755);    /* no subtree_control to write: as if it held processes (EBUSY) */
        if (!streq(own, "/")) {
                /* its parent's */
                char *parent = xstrdup(d);
                *strrchr(parent, '/') = 0;
                put_file(parent, "cgroup.subtree_control", "");
                free(parent);
        }
        snprintf(d, sizeof(d), "%s%s/t0", root, want_dir);
        put_file(d, "cpuset.cpus", "");
        put_file(d, "memory.max", "");
        put_file(d, "cgroup.procs", "");
        char *line = xasprintf("0::%s\n", own);
        put_file(root, "self", line);
        free(line);
        snprintf(self, sizeof(self), "%s/self", root);
        struct bd_cpuset cpus;
        cpuset_parse(&cpus, "0");
        struct bd_cgroup cg;
        struct bd_err err = { "" };
        int r = cgroup_make(root, self, "t0", &cpus, 123456789, &cg, &err);
        char *msg = xasprintf("v2, %s: made", what);
        is_int(r, 0, msg);
        free(msg);
        if (r < 0)
                printf("# %s\n", err.msg);
        is_int(cg.version, 2, "v2: found as v2");
        char *dir = xasprintf("%s/t0", want_dir);
        msg = xasprintf("v2, %s: its CPUs in %s", what, dir);
        IS_FILE(dir, "cpuset.cpus", "0", msg);
        free(msg);
        IS_FILE(dir, "memory.max", "123456789", "v2: its memory.max");
        free(dir);
        msg = xasprintf("v2, %s: the controllers enabled for it in %s", what, ctl_dir);
        IS_FILE(ctl_dir, "cgroup.subtree_control", "+cpuset +memory", msg);
        free(msg);
        cgroup_release(&cg);
        rm_tree();
}

static void test_errors(void)
{
        struct bd_cpuset cpus;
        cpuset_parse(&cpus, "0");
        struct bd_cgroup cg;
        struct bd_err err = { "" };
        is_int(cgroup_make("/nonexistent/cg", "/proc/self/cgroup", "t", &cpus, 0, &cg, &err), -ENOENT,
               "no cgroup tree: -ENOENT");
        like(err.msg, "/nonexistent/cg: neither cgroup v2", "  named");
        is_int(cgroup_make(NULL, NULL, "a/b", &cpus, 0, &cg, &err), -EINVAL, "a name of two components: -EINVAL");
        ok(size_parse("4G") == 4LL << 30, "size_parse: 4G");
        ok(size_parse("1048576") == 1048576, "size_parse: bytes");
        ok(size_parse("12X") < 0 && size_parse("") < 0 && size_parse("-1") < 0, "size_parse: refuses 12X, '', -1");
        char *p = xasprintf("/tmp/bd-meminfo-%d", (int)getpid());
        FILE *f = fopen(p, "w");
        if (f) {
                fputs("MemTotal:       24684084 kB\nMemFree: 1 kB\n", f);
                fclose(f);
        }
        ok(meminfo_total(p) == 24684084LL * 1024, "meminfo_total: MemTotal in bytes");
        unlink(p);
        free(p);
}

static struct tenant_row row(int round, int tenant, bool has, double v)
{
        return (struct tenant_row){ .round = round, .tenant = tenant, .trial = (round - 1) * 4 + tenant + 1,
                                    .has_value = has, .value = v, .outcome = has ? "value" : "failed" };
}

static void test_summary(void)
{
        struct tenant_row rows[8] = {
                row(1, 0, true, 100), row(1, 1, true, 102), row(1, 2, true, 80), row(1, 3, true, 98),
                row(2, 0, true, 100), row(2, 1, false, 0), row(2, 2, true, 91), row(2, 3, true, 100),
        };
        struct tenant_round rounds[2];
        struct tenants_model m = { .n = 4, .rounds = 2, .unit = "images/s", .higher_better = true,
                                   .tolerance = 0.1, .rows = rows, .round = rounds };
        tenants_compute(&m);
        ok(fabs(rounds[0].median - 99) < 1e-9, "round 1: the median of 80, 98, 100, 102 is 99");
        ok(fabs(rounds[0].sum - 380) < 1e-9, "  the sum");
        ok(fabs(rounds[0].spread - 80.0 / 102) < 1e-9, "  slowest / fastest");
        ok(rows[2].flagged && !rows[0].flagged && !rows[1].flagged && !rows[3].flagged && rounds[0].flagged == 1,
           "  the tenant 19% below the median alone is flagged");
        ok(fabs(rows[2].vs_median - (80.0 - 99) / 99) < 1e-12, "  its distance from the median");
        ok(rows[5].flagged && isnan(rows[5].vs_median), "round 2: a tenant without a result is flagged");
        ok(fabs(rounds[1].median - 100) < 1e-9 && rounds[1].values == 3, "  the median of those with one");
        ok(!rows[6].flagged, "  9% below the median is within the tolerance of 10%");
        is_int(rounds[1].flagged, 1, "  one flagged");
        /* times to train: lower is better, a slow tenant is above the median */
        struct tenant_row t[3] = { row(1, 0, true, 10), row(1, 1, true, 12), row(1, 2, true, 10.5) };
        struct tenant_round tr[1];
        struct tenants_model mt = { .n = 3, .rounds = 1, .time = true, .unit = "min", .higher_better = false,
                                    .tolerance = 0.1, .rows = t, .round = tr };
        tenants_compute(&mt);
        ok(t[1].flagged && !t[0].flagged && !t[2].flagged, "times: the tenant 14% over the median is flagged");
        ok(fabs(tr[0].spread - 10.0 / 12) < 1e-12, "  fastest / slowest time");
        struct bd_buf b = BD_BUF_INIT;
        tenants_text(&m, &b);
        like(b.s, "round 1: sum 380.0 images/s, median 99.0, slowest/fastest 0.784; 1 tenant flagged",
             "text: the round's line");
        like(b.s, "  1     2      3             80.0     -19.2%  -  <- SLOW", "text: the slow tenant's row");
        like(b.s, "  2     1      6           failed          -  -  <- NO RESULT", "text: the one without a result");
        buf_release(&b);
}

int main(void)
{
        test_v1();
        test_v2("/user.slice/x.scope", true, "/user.slice/x.scope", "/user.slice/x.scope",
                "room under its own");
        test_v2("/user.slice/x.scope", false, "/user.slice", "/user.slice", "its own holds processes");
        test_v2("/", true, "", "", "at the root");
        test_errors();
        test_summary();
        return done_testing();
}

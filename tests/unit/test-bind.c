/* test-bind.c: binding plans derived from the declared topology reproduce the
 * reference tables (p3dn, DSS8440, C4140), and CPU list syntax round-trips. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "cpuset.h"
#include "system.h"
#include "tap.h"

static struct bd_sysdirs dirs;

static void check_system(const char *name, const char *const *want, const char *const *nics, int n)
{
        struct bd_system s;
        struct bd_err err;
        char what[1400];
        if (system_load(&dirs, name, NULL, &s, &err) < 0) {
                snprintf(what, sizeof(what), "%s loads: %s", name, err.msg);
                ok(0, what);
                return;
        }
        struct bd_topo t;
        struct bd_rank_bind *plan = NULL;
        ok(topo_from_system(s.json, &t, &err) == 0 && bind_plan(&t, n, &plan, &err) == 0, name);
        for (int r = 0; plan && r < n; r++) {
                struct bd_buf b = BD_BUF_INIT;
                bind_format_numactl(&plan[r], &b);
                snprintf(what, sizeof(what), "%s local rank %d", name, r);
                is_str(b.s, want[r], what);
                buf_release(&b);
                if (nics) {
                        snprintf(what, sizeof(what), "%s local rank %d NIC", name, r);
                        is_str(plan[r].nic >= 0 ? t.nics[plan[r].nic].name : "", nics[r], what);
                }
        }
        free(plan);
        system_release(&s);
}

static void test_cpuset(void)
{
        struct bd_cpuset s;
        struct bd_buf b = BD_BUF_INIT;
        ok(cpuset_parse(&s, "0-5,48-53\n") == 0, "parse a sysfs cpulist");
        is_int(cpuset_count(&s), 12, "12 CPUs");
        cpuset_format(&s, &b);
        is_str(b.s, "0-5,48-53", "format round-trips");
        buf_reset(&b);
        ok(cpuset_parse(&s, "3,1,2,7") == 0, "unordered list");
        cpuset_format(&s, &b);
        is_str(b.s, "1-3,7", "formatted compactly");
        ok(cpuset_parse(&s, "5-2") < 0, "reversed range rejected");
        ok(cpuset_parse(&s, "1,,2") < 0, "empty element rejected");
        ok(cpuset_parse(&s, "a") < 0, "junk rejected");
        ok(cpuset_parse(&s, "99999") < 0, "CPU beyond the limit rejected");
        ok(cpuset_parse(&s, "") == 0 && cpuset_count(&s) == 0, "empty list is the empty set");
        buf_release(&b);
}

static void test_generic(void)
{
        /* GPUs declared on unexpected NUMA nodes: the plan follows the topology */
        struct bd_topo t = { .sockets = 2, .cores_per_socket = 8, .threads_per_core = 1, .ngpus = 4,
                             .gpu_numa = { 1, 1, 0, 0 }, .nnics = 2 };
        snprintf(t.nics[0].name, sizeof(t.nics[0].name), "mlx5_0");
        t.nics[0].kind = NIC_INFINIBAND;
        t.nics[0].numa = 1;
        snprintf(t.nics[1].name, sizeof(t.nics[1].name), "eth0");
        t.nics[1].kind = NIC_ETHERNET;
        t.nics[1].numa = 0;
        struct bd_rank_bind *plan = NULL;
        struct bd_err err;
        ok(bind_plan(&t, 4, &plan, &err) == 0, "plan for GPUs 0,1 on NUMA 1");
        struct bd_buf b = BD_BUF_INIT;
        bind_format_numactl(&plan[0], &b);
        is_str(b.s, "--physcpubind=8-11 --membind=1", "rank 0 follows GPU 0 to NUMA node 1");
        buf_reset(&b);
        bind_format_numactl(&plan[2], &b);
        is_str(b.s, "--physcpubind=0-3 --membind=0", "rank 2 on NUMA node 0");
        is_int(plan[2].nic, 0, "RDMA NIC preferred over a closer Ethernet one");
        free(plan);
        buf_release(&b);

        struct bd_topo small = { .sockets = 1, .cores_per_socket = 2, .threads_per_core = 1 };
        ok(bind_plan(&small, 3, &plan, &err) < 0, "more ranks than cores on a node is an error");
        like(err.msg, "more ranks on NUMA node 0 (3) than cores (2)", "and says so");
}

int main(void)
{
        const char *src = getenv("srcdir");
        static char path[1024];
        snprintf(path, sizeof(path), "%s/systems", src ? src : ".");
        char *d[] = { path };
        dirs.dirs = d;
        dirs.n = 1;

        test_cpuset();
        static const char *const p3dn[] = {
                "--physcpubind=0-5,48-53 --membind=0",   "--physcpubind=6-11,54-59 --membind=0",
                "--physcpubind=12-17,60-65 --membind=0", "--physcpubind=18-23,66-71 --membind=0",
                "--physcpubind=24-29,72-77 --membind=1", "--physcpubind=30-35,78-83 --membind=1",
                "--physcpubind=36-41,84-89 --membind=1", "--physcpubind=42-47,90-95 --membind=1",
        };
        check_system("p3dn", p3dn, NULL, 8);
        check_system("24xp3dn", p3dn, NULL, 8);
        static const char *const dss[] = {
                "--physcpubind=0-4,40-44 --membind=0",   "--physcpubind=5-9,45-49 --membind=0",
                "--physcpubind=10-14,50-54 --membind=0", "--physcpubind=15-19,55-59 --membind=0",
                "--physcpubind=20-24,60-64 --membind=1", "--physcpubind=25-29,65-69 --membind=1",
                "--physcpubind=30-34,70-74 --membind=1", "--physcpubind=35-39,75-79 --membind=1",
        };
        check_system("DSS8440", dss, NULL, 8);
        static const char *const c4140[] = {
                "--physcpubind=0-9 --membind=0", "--physcpubind=10-19 --membind=0",
                "--physcpubind=20-29 --membind=1", "--physcpubind=30-39 --membind=1",
        };
        static const char *const c4140_nics[] = { "mlx5_0", "mlx5_0", "mlx5_0", "mlx5_0" };
        check_system("C4140", c4140, c4140_nics, 4);
        check_system("4xC4140", c4140, c4140_nics, 4);
        test_generic();
        return done_testing();
}

/* test-bind.c: binding plans derived from the declared topology reproduce the
 * reference tables (p3dn, DSS8440, C4140), plans from a measured layout follow
 * the real CPU numbering (interleaved, sub-NUMA clusters, offline CPUs, sparse
 * node numbers), ranks without a GPU are spread, and CPU list syntax
 * round-trips. */
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
        ok(system_topo(s.json, &t, &err) == 0 && bind_plan(&t, n, &plan, &err) == 0, name);
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


/* Adds a core of a measured layout: NUMA node, first CPU, its sibling (-1: none online). */
static void add_core(struct bd_topo *t, struct bd_core *cores, int node, int cpu, int sibling)
{
        struct bd_core *c = &cores[t->ncores++];
        *c = (struct bd_core) { .node = node, .ncpus = sibling >= 0 ? 2 : 1, .cpus = { cpu, sibling } };
        t->cores = cores;
}

/* The measured layout of 2 sockets x 8 cores x 2 threads: core k of socket s
 * is CPU 8s + k (x86) or 2k + s (interleaved), its sibling that + 16, on NUMA
 * node s * nodes_per_socket + k * nodes_per_socket / 8; CPU `offline` is not
 * online (its sibling is).  GPU i on node gpu_numa[i]. */
static void layout_2x8(struct bd_topo *t, struct bd_core *cores, bool interleaved, int nodes_per_socket,
                       int offline, int ngpus, const int *gpu_numa)
{
        *t = (struct bd_topo) { .sockets = 2, .cores_per_socket = 8, .threads_per_core = 2, .hyperthreads = true,
                                .ngpus = ngpus };
        for (int i = 0; i < ngpus; i++)
                t->gpu_numa[i] = gpu_numa[i];
        for (int s = 0; s < 2; s++)
                for (int k = 0; k < 8; k++) {
                        int cpu = interleaved ? 2 * k + s : 8 * s + k;
                        int node = s * nodes_per_socket + k * nodes_per_socket / 8;
                        if (cpu == offline)
                                add_core(t, cores, node, cpu + 16, -1);
                        else
                                add_core(t, cores, node, cpu, cpu + 16);
                }
}

/* Each rank's "--physcpubind=... --membind=N" against want[]. */
static void check_plan(const struct bd_topo *t, int ranks, const char *const *want, const char *name)
{
        struct bd_rank_bind *plan = NULL;
        struct bd_err err;
        char what[1400];
        int r = bind_plan(t, ranks, &plan, &err);
        snprintf(what, sizeof(what), "%s: a plan for %d ranks%s%s", name, ranks, r < 0 ? ": " : "",
                 r < 0 ? err.msg : "");
        ok(r == 0, what);
        for (int i = 0; r == 0 && i < ranks; i++) {
                struct bd_buf b = BD_BUF_INIT;
                bind_format_numactl(&plan[i], &b);
                snprintf(what, sizeof(what), "%s: local rank %d", name, i);
                is_str(b.s, want[i], what);
                buf_release(&b);
        }
        free(plan);
}

static void test_measured(void)
{
        struct bd_core cores[16];
        struct bd_topo t;

        /* interleaved: node 0 has the even CPUs, node 1 the odd ones */
        layout_2x8(&t, cores, true, 1, -1, 4, (const int[]) { 0, 0, 1, 1 });
        static const char *const ilv_want[] = {
                "--physcpubind=0,2,4,6,16,18,20,22 --membind=0", "--physcpubind=8,10,12,14,24,26,28,30 --membind=0",
                "--physcpubind=1,3,5,7,17,19,21,23 --membind=1", "--physcpubind=9,11,13,15,25,27,29,31 --membind=1",
        };
        check_plan(&t, 4, ilv_want, "interleaved numbering");
        t.hyperthreads = false;
        static const char *const ilv_noht[] = {
                "--physcpubind=0,2,4,6 --membind=0", "--physcpubind=8,10,12,14 --membind=0",
                "--physcpubind=1,3,5,7 --membind=1", "--physcpubind=9,11,13,15 --membind=1",
        };
        check_plan(&t, 4, ilv_noht, "interleaved numbering, hyperthreads off");

        /* SNC2 / NPS2: node n has cores 4n..4n+3 (CPUs 4n..4n+3 and 16+4n..19+4n); GPU i on node i */
        layout_2x8(&t, cores, false, 2, -1, 4, (const int[]) { 0, 1, 2, 3 });
        static const char *const snc_want[] = {
                "--physcpubind=0-3,16-19 --membind=0", "--physcpubind=4-7,20-23 --membind=1",
                "--physcpubind=8-11,24-27 --membind=2", "--physcpubind=12-15,28-31 --membind=3",
        };
        check_plan(&t, 4, snc_want, "4 NUMA nodes on 2 sockets");
        /* no GPUs: 8 ranks, two per node */
        t.ngpus = 0;
        static const char *const snc_spread[] = {
                "--physcpubind=0-1,16-17 --membind=0",   "--physcpubind=2-3,18-19 --membind=0",
                "--physcpubind=4-5,20-21 --membind=1",   "--physcpubind=6-7,22-23 --membind=1",
                "--physcpubind=8-9,24-25 --membind=2",   "--physcpubind=10-11,26-27 --membind=2",
                "--physcpubind=12-13,28-29 --membind=3", "--physcpubind=14-15,30-31 --membind=3",
        };
        check_plan(&t, 8, snc_spread, "4 NUMA nodes, no GPUs");

        /* CPU 2 offline: core 2 of socket 0 is CPU 18 alone; GPU0 on node 0,
         * GPU1 on node 1, ranks 2 and 3 without a GPU take the second half of
         * node 0 and of node 1 */
        layout_2x8(&t, cores, false, 1, 2, 2, (const int[]) { 0, 1 });
        static const char *const off_want[] = {
                "--physcpubind=0-1,3,16-19 --membind=0", "--physcpubind=8-11,24-27 --membind=1",
                "--physcpubind=4-7,20-23 --membind=0",   "--physcpubind=12-15,28-31 --membind=1",
        };
        check_plan(&t, 4, off_want, "CPU 2 offline");

        /* sparse node numbers: nodes 0 and 2 have 4 cores each (node 1 is
         * memory only); a GPU on node 1 gives its rank no node: ranks 1 and 2
         * share node 0 (4 cores for one rank on either node, then a tie: the
         * lower node) */
        struct bd_core sp_cores[8];
        struct bd_topo sp = { .sockets = 2, .cores_per_socket = 4, .threads_per_core = 1, .hyperthreads = true,
                              .ngpus = 2, .gpu_numa = { 2, 1 } };
        for (int c = 0; c < 8; c++)
                add_core(&sp, sp_cores, c < 4 ? 0 : 2, c, -1);
        static const char *const sp_want[] = {
                "--physcpubind=4-7 --membind=2", "--physcpubind=0-1 --membind=0", "--physcpubind=2-3 --membind=0",
        };
        check_plan(&sp, 3, sp_want, "NUMA nodes 0 and 2");

        struct bd_rank_bind *plan = NULL;
        struct bd_err err;
        sp.ngpus = 5;
        for (int i = 0; i < 5; i++)
                sp.gpu_numa[i] = 2;
        ok(bind_plan(&sp, 5, &plan, &err) < 0, "five GPUs' ranks on a node of four cores: an error");
        is_str(err.msg, "more ranks on NUMA node 2 (5) than cores (4)", "  naming the node and the counts");
        sp.ngpus = 0;
        ok(bind_plan(&sp, 9, &plan, &err) < 0, "nine ranks on eight cores: an error");
        is_str(err.msg, "more ranks on NUMA node 0 (5) than cores (4)", "  naming the node and the counts");
        static const char *const sp_eight[] = {
                "--physcpubind=0 --membind=0", "--physcpubind=1 --membind=0", "--physcpubind=2 --membind=0",
                "--physcpubind=3 --membind=0", "--physcpubind=4 --membind=2", "--physcpubind=5 --membind=2",
                "--physcpubind=6 --membind=2", "--physcpubind=7 --membind=2",
        };
        check_plan(&sp, 8, sp_eight, "eight ranks on nodes 0 and 2");
        sp_cores[0].node = 3;
        ok(bind_plan(&sp, 1, &plan, &err) < 0, "a layout out of node order is refused");
        is_str(err.msg, "the cores of NUMA node 0 come after node 3's", "  saying so");
}

static void test_spread(void)
{
        /* more ranks than GPUs: the ranks without one go where a rank gets the
         * most cores, node 0 on a tie (declared 2 x 8 cores, one GPU per socket) */
        struct bd_topo t = { .sockets = 2, .cores_per_socket = 8, .threads_per_core = 1, .ngpus = 2,
                             .gpu_numa = { 0, 1 } };
        static const char *const want[] = {
                "--physcpubind=0-3 --membind=0", "--physcpubind=8-11 --membind=1",
                "--physcpubind=4-7 --membind=0", "--physcpubind=12-15 --membind=1",
        };
        check_plan(&t, 4, want, "4 ranks, 2 GPUs on 2 sockets");
        /* both GPUs on node 1: the other two ranks fill node 0 */
        t.gpu_numa[0] = 1;
        static const char *const want2[] = {
                "--physcpubind=8-11 --membind=1", "--physcpubind=12-15 --membind=1",
                "--physcpubind=0-3 --membind=0", "--physcpubind=4-7 --membind=0",
        };
        check_plan(&t, 4, want2, "4 ranks, 2 GPUs on node 1");
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
        test_measured();
        test_spread();
        return done_testing();
}

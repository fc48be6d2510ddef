/* inventory-cpu.c: host, CPU and NUMA layout from procfs and sysfs. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_NUMA
#include <numa.h>
#endif

#include "fs.h"
#include "inventory.h"
#include "strutil.h"

#define NO_KEY LONG_MIN

char *inv_path(const struct inventory *inv, const char *path)
{
        return xasprintf("%s%s", streq(inv->root, "/") ? "" : inv->root, path);
}

int inv_read(const struct inventory *inv, const char *path, char *buf, size_t n)
{
        _cleanup_free_ char *p = inv_path(inv, path);
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r = fs_read_file(p, 1u << 20, &text, &len, NULL);
        if (r < 0)
                return r;
        while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
                text[--len] = '\0';
        snprintf(buf, n, "%s", text);
        return 0;
}

void inv_warn(struct inventory *inv, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *s = xvasprintf(fmt, ap);
        va_end(ap);
        cJSON_AddItemToArray(inv->warnings, cJSON_CreateString(s));
        free(s);
}

/* An os-release value as the shell reads it (os-release(5)), unquoted in
 * place: in double quotes a backslash escapes $ " ` and itself (before any
 * other character it stays); in single quotes nothing is escaped; unquoted,
 * a backslash escapes any character. */
static void os_release_value(char *v)
{
        char *out = v, quote = 0;
        for (const char *in = v; *in; in++) {
                if (quote && *in == quote)
                        quote = 0;
                else if (!quote && (*in == '"' || *in == '\''))
                        quote = *in;
                else if (*in == '\\' && in[1] && (!quote || (quote == '"' && strchr("$\"\\`", in[1]))))
                        *out++ = *++in;
                else
                        *out++ = *in;
        }
        *out = '\0';
}

static void scan_host(struct inventory *inv)
{
        char buf[4096];
        if (inv_read(inv, "/proc/sys/kernel/hostname", inv->hostname, sizeof(inv->hostname)) < 0)
                inv_warn(inv, "cannot read the host name from /proc/sys/kernel/hostname");
        if (inv_read(inv, "/proc/sys/kernel/osrelease", inv->kernel, sizeof(inv->kernel)) < 0)
                inv_warn(inv, "cannot read the kernel release");
        inv->uptime = -1;
        if (inv_read(inv, "/proc/uptime", buf, sizeof(buf)) == 0) {
                char *end;
                errno = 0;
                double up = strtod(buf, &end);
                if (end == buf || errno || !isfinite(up) || up < 0 || (*end && !isspace((unsigned char)*end)))
                        inv_warn(inv, "/proc/uptime: '%.40s' does not start with seconds; uptime unknown", buf);
                else
                        inv->uptime = up;
        } else
                inv_warn(inv, "cannot read /proc/uptime; uptime unknown");
        _cleanup_free_ char *osr = inv_path(inv, "/etc/os-release");
        FILE *f = fopen(osr, "re");
        if (f) {
                char line[512];
                while (fgets(line, sizeof(line), f))
                        if (!strncmp(line, "PRETTY_NAME=", 12)) {
                                char *v = line + 12;
                                v[strcspn(v, "\n")] = '\0';
                                os_release_value(v);
                                snprintf(inv->os, sizeof(inv->os), "%.200s", v);
                        }
                fclose(f);
        }
}

/* keys[c]: the (package, core) of online CPU c, NO_KEY when its topology is unreadable */
static void scan_cpus(struct inventory *inv, long *keys)
{
        char buf[4096];
        if (inv_read(inv, "/sys/devices/system/cpu/online", buf, sizeof(buf)) < 0 ||
            cpuset_parse(&inv->online, buf) < 0) {
                inv_warn(inv, "cannot read /sys/devices/system/cpu/online");
                return;
        }
        inv->online_cpus = cpuset_count(&inv->online);
        /* sockets and cores from each CPU's topology */
        int pkgs[256], npkgs = 0;
        long *cores = xcalloc(BD_CPUSET_MAX, sizeof(long));
        int *threads = xcalloc(BD_CPUSET_MAX, sizeof(int));
        int ncores = 0, most = 0;
        for (int c = 0; c < BD_CPUSET_MAX; c++) {
                if (!cpuset_has(&inv->online, c))
                        continue;
                char p[128], v[64];
                long pkg, core;
                snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
                if (inv_read(inv, p, v, sizeof(v)) < 0 || str_parse_long(v, &pkg) < 0) {
                        inv_warn(inv, "cpu%d: no physical_package_id, skipped", c);
                        continue;
                }
                snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
                if (inv_read(inv, p, v, sizeof(v)) < 0 || str_parse_long(v, &core) < 0) {
                        inv_warn(inv, "cpu%d: no core_id, skipped", c);
                        continue;
                }
                bool seen = false;
                for (int i = 0; i < npkgs; i++)
                        seen |= pkgs[i] == pkg;
                if (!seen && npkgs < (int)ARRAY_SIZE(pkgs))
                        pkgs[npkgs++] = (int)pkg;
                long key = pkg * 1000000 + core;
                keys[c] = key;
                int i = 0;
                while (i < ncores && cores[i] != key)
                        i++;
                if (i == ncores)
                        cores[ncores++] = key;
                /* threads: the most online CPUs of one core, so that a
                 * sibling taken offline does not halve the count */
                if (++threads[i] > most)
                        most = threads[i];
        }
        free(cores);
        free(threads);
        inv->sockets = npkgs ? npkgs : 1;
        inv->cores_per_socket = ncores ? ncores / inv->sockets : inv->online_cpus;
        inv->threads_per_core = most ? most : 1;

        _cleanup_free_ char *ci = inv_path(inv, "/proc/cpuinfo");
        if (cpuinfo_model_name(ci, inv->cpu_model, sizeof(inv->cpu_model)) < 0)
                inv_warn(inv, "cannot read /proc/cpuinfo");
}

#ifdef HAVE_NUMA
/* The live machine through libnuma: nodes, their CPUs, memory and distances.
 * False when libnuma has no NUMA support to offer (then sysfs decides). */
static bool scan_numa_libnuma(struct inventory *inv)
{
        if (!streq(inv->root, "/") || numa_available() < 0)
                return false;
        struct bitmask *cpus = numa_allocate_cpumask();
        int max = numa_max_node();
        for (int n = 0; n <= max && inv->nnodes < INV_MAX_NODES; n++) {
                if (!numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)n))
                        continue;
                typeof(inv->nodes[0]) *node = &inv->nodes[inv->nnodes];
                long long free_bytes;
                memset(node, 0, sizeof(*node));
                node->id = n;
                if (numa_node_to_cpus(n, cpus) < 0) {
                        inv_warn(inv, "node%d: libnuma gives no CPU list, skipped", n);
                        continue;
                }
                for (unsigned c = 0; c < cpus->size && c < BD_CPUSET_MAX; c++)
                        if (numa_bitmask_isbitset(cpus, c))
                                cpuset_add(&node->cpus, (int)c);
                long long size = numa_node_size64(n, &free_bytes);
                node->mem_kb = size < 0 ? -1 : size / 1024;
                inv->nnodes++;
        }
        for (int i = 0; i < inv->nnodes; i++)
                for (int k = 0; k < inv->nnodes; k++)
                        /* 0: libnuma could not tell */
                        inv->nodes[i].distance[k] = numa_distance(inv->nodes[i].id, inv->nodes[k].id) ?: -1;
        numa_free_cpumask(cpus);
        inv->numa_source = "libnuma";
        return inv->nnodes > 0;
}
#else
static bool scan_numa_libnuma(struct inventory *inv)
{
        return false;
}
#endif

/* MemTotal in kB from a meminfo file ("MemTotal:  65536 kB", a node's with
 * "Node 0 " before it); -1, with a warning, when it has none. */
static long long mem_total(struct inventory *inv, const char *path)
{
        char buf[8192];
        if (inv_read(inv, path, buf, sizeof(buf)) < 0) {
                inv_warn(inv, "cannot read %s; memory unknown", path);
                return -1;
        }
        const char *m = strstr(buf, "MemTotal:");
        char *end = NULL;
        errno = 0;
        long long kb = m ? strtoll(m + 9, &end, 10) : -1;
        if (!m || end == m + 9 || errno || kb < 0 || strncmp(end + strspn(end, " \t"), "kB", 2)) {
                inv_warn(inv, "%s: no 'MemTotal: N kB' line; memory unknown", path);
                return -1;
        }
        return kb;
}

static void scan_numa(struct inventory *inv)
{
        if (scan_numa_libnuma(inv))
                return;
        inv->numa_source = "sysfs";
        char buf[4096];
        struct bd_cpuset online;
        if (inv_read(inv, "/sys/devices/system/node/online", buf, sizeof(buf)) < 0 || cpuset_parse(&online, buf) < 0) {
                /* no NUMA support: one node with every CPU */
                inv->nnodes = 1;
                inv->nodes[0].id = 0;
                inv->nodes[0].cpus = inv->online;
                inv->nodes[0].distance[0] = 10;
                inv->nodes[0].mem_kb = mem_total(inv, "/proc/meminfo");
                return;
        }
        for (int n = 0; n < BD_CPUSET_MAX && inv->nnodes < INV_MAX_NODES; n++) {
                if (!cpuset_has(&online, n))
                        continue;
                typeof(inv->nodes[0]) *node = &inv->nodes[inv->nnodes];
                char p[128];
                node->id = n;
                snprintf(p, sizeof(p), "/sys/devices/system/node/node%d/cpulist", n);
                if (inv_read(inv, p, buf, sizeof(buf)) < 0 || cpuset_parse(&node->cpus, buf) < 0) {
                        inv_warn(inv, "node%d: unreadable cpulist, skipped", n);
                        continue;
                }
                snprintf(p, sizeof(p), "/sys/devices/system/node/node%d/meminfo", n);
                node->mem_kb = mem_total(inv, p);
                snprintf(p, sizeof(p), "/sys/devices/system/node/node%d/distance", n);
                for (int k = 0; k < INV_MAX_NODES; k++)
                        node->distance[k] = -1;
                if (inv_read(inv, p, buf, sizeof(buf)) == 0) {
                        /* one distance per node, from 10 (itself) to 255 */
                        char *s = buf;
                        for (int k = 0; k < INV_MAX_NODES && *(s += strspn(s, " \t\n")); k++) {
                                char *end;
                                long d = strtol(s, &end, 10);
                                if (end == s || d < 10 || d > 255 || (*end && !isspace((unsigned char)*end))) {
                                        inv_warn(inv, "%s: '%.40s' is not a list of distances from 10 to 255; "
                                                 "those from the odd one on are unknown", p, buf);
                                        break;
                                }
                                node->distance[k] = (int)d;
                                s = end;
                        }
                } else
                        inv_warn(inv, "node%d: unreadable distance; its distances are unknown", n);
                inv->nnodes++;
        }
}

/* The first CPU of c's core that is in the layout (c when none comes before
 * it): the core's CPUs are core_cpus_list (Linux 5.7) or thread_siblings_list. */
static int core_leader(struct inventory *inv, int c, const int *node_of)
{
        char p[128], buf[4096];
        struct bd_cpuset sib;
        snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/topology/core_cpus_list", c);
        if (inv_read(inv, p, buf, sizeof(buf)) < 0) {
                snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
                if (inv_read(inv, p, buf, sizeof(buf)) < 0) {
                        inv_warn(inv, "cpu%d: no thread_siblings_list, taken as a core of its own", c);
                        return c;
                }
        }
        if (cpuset_parse(&sib, buf) < 0) {
                inv_warn(inv, "cpu%d: malformed %s, taken as a core of its own", c, p);
                return c;
        }
        for (int s = 0; s < c; s++)
                if (cpuset_has(&sib, s) && node_of[s] >= 0)
                        return s;
        return c;
}

struct core_entry {
        long key;               /* package and core_id */
        struct bd_core core;
};

static int core_entry_cmp(const void *a, const void *b)
{
        const struct core_entry *x = a, *y = b;
        if (x->core.node != y->core.node)
                return x->core.node < y->core.node ? -1 : 1;
        if (x->key != y->key)
                return x->key < y->key ? -1 : 1;
        return x->core.cpus[0] < y->core.cpus[0] ? -1 : x->core.cpus[0] > y->core.cpus[0];
}

/* The layout bind_plan() binds by: each NUMA node's physical cores in
 * (package, core_id) order, each with its online hyperthread siblings.  A CPU
 * without topology or outside every node's cpulist is left out. */
static void scan_layout(struct inventory *inv, const long *keys)
{
        _cleanup_free_ int *node_of = xmalloc(BD_CPUSET_MAX * sizeof(int));
        _cleanup_free_ int *core_of = xmalloc(BD_CPUSET_MAX * sizeof(int));
        for (int c = 0; c < BD_CPUSET_MAX; c++)
                node_of[c] = core_of[c] = -1;
        for (int i = inv->nnodes - 1; i >= 0; i--)
                for (int c = 0; c < BD_CPUSET_MAX; c++)
                        if (cpuset_has(&inv->nodes[i].cpus, c) && keys[c] != NO_KEY)
                                node_of[c] = inv->nodes[i].id;
        _cleanup_free_ struct core_entry *e = xcalloc(BD_CPUSET_MAX, sizeof(*e));
        int n = 0;
        for (int c = 0; c < BD_CPUSET_MAX; c++) {
                if (node_of[c] < 0)
                        continue;
                int leader = core_leader(inv, c, node_of);
                int k = leader < c ? core_of[leader] : -1;
                if (k >= 0 && e[k].core.ncpus < BD_MAX_THREADS) {
                        e[k].core.cpus[e[k].core.ncpus++] = c;
                        core_of[c] = k;
                        continue;
                }
                if (k >= 0)
                        inv_warn(inv, "cpu%d: more than %d threads in the core of cpu%d, taken as a core of its own", c,
                                 BD_MAX_THREADS, leader);
                core_of[c] = n;
                e[n++] = (struct core_entry) {
                        .key = keys[c], .core = { .node = node_of[c], .ncpus = 1, .cpus = { c } },
                };
        }
        qsort(e, (size_t)n, sizeof(*e), core_entry_cmp);
        inv->cores = xcalloc((size_t)n + 1, sizeof(*inv->cores));
        for (int i = 0; i < n; i++)
                inv->cores[i] = e[i].core;
        inv->ncores = n;
}

void inventory_scan_cpu(struct inventory *inv)
{
        _cleanup_free_ long *keys = xmalloc(BD_CPUSET_MAX * sizeof(long));
        for (int c = 0; c < BD_CPUSET_MAX; c++)
                keys[c] = NO_KEY;
        scan_host(inv);
        scan_cpus(inv, keys);
        scan_numa(inv);
        scan_layout(inv, keys);
}

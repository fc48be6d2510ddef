/* benchd-bind.c: binds one rank to its cores, memory node and NIC, then
 * becomes the rank's program.
 *
 *     benchd-bind -r 0-5,48-53:0 -r 6-11,54-59:0 ... -- PROGRAM ARGS...
 *
 * The i-th -r is the plan of local rank i, as computed by benchctl (the same
 * code as 'benchctl bind') from the system's declared topology.  With
 * --benchd URL, the node's own benchd is asked first for its measured plan
 * of as many ranks (GET URL/v1/binding?ranks=N, one second at most); when it
 * answers, that plan is used, else the declared one.  The local rank comes from the launcher:
 * OMPI_COMM_WORLD_LOCAL_RANK (Open MPI), SLURM_LOCALID (srun),
 * MPI_LOCALRANKID / PMI_LOCAL_RANK (MPICH, Intel MPI).  CPU affinity is set
 * with sched_setaffinity, memory with set_mempolicy(MPOL_BIND); a NIC sets
 * BENCHD_NIC and the variable its transport reads: UCX_NET_DEVICES=<nic>:1
 * for InfiniBand and RoCE (UCX, Open MPI's pml ucx), FI_EFA_IFACE=<nic> for
 * an EFA device (libfabric's efa provider, under aws-ofi-nccl).  Nothing is
 * half-applied: any failure is reported and the program is not started.
 *
 * A tenant (benchctl submit --tenants): one of N independent single-rank
 * runs started together on a node, each confined as one of N users would be.
 *
 *     benchd-bind --tenant K/N [--confine NAME] [--mem-max SIZE] [-r ...] -- PROGRAM
 *
 * With -r plans (a GPU system's N tenants, each beside its GPU), tenant K
 * takes the K-th (or benchd's measured plan's K-th of N); without, it takes
 * the K-th of N equal shares of the CPUs this process may use (they share
 * CPUs when there are more tenants than CPUs).  --confine NAME puts the
 * program in a cgroup of its own holding those CPUs and at most --mem-max
 * bytes (default: the node's MemTotal / N): a systemd scope where systemd
 * runs the machine (systemd-run --scope -p AllowedCPUs= -p MemoryMax=), else
 * the cgroup tree directly (lib/cgroup.h), which is removed when the program
 * ends (benchd-bind waits for it, passing on the signals it gets).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "cgroup.h"
#include "cpuset.h"
#include "curl-dl.h"
#include "fs.h"
#include "macro.h"
#include "strutil.h"

#define MPOL_BIND 2
#define MAX_RANKS 1024
#define MAX_NUMA_NODES 1024      /* the node numbers -r and a plan may name: 0 to 1023 */

struct plan {
        char *spec;
        struct bd_cpuset cpus;
        int mem;
        const char *nic;
        bool efa;               /* nic is an EFA device: libfabric, not UCX */
        char nic_buf[64];
};

/* The same directory, however spelled ("/a/./b/" is "/a/b"). */
static bool same_path(const char *a, const char *b)
{
        _cleanup_free_ char *x = fs_path_clean(a), *y = fs_path_clean(b);
        return streq(x, y);
}

static const char *const rank_vars[] = {
        "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
        "MV2_COMM_WORLD_LOCAL_RANK", NULL,
};

static void usage(FILE *f)
{
        fprintf(f, "usage: benchd-bind [-v] [-n] [--benchd URL] -r CPUS:MEMNODE[:NIC[/efa]]... -- PROGRAM [ARGS...]\n"
                   "       benchd-bind --tenant K/N [--confine NAME] [--mem-max SIZE] [-r ...] -- PROGRAM [ARGS...]\n\n"
                   "Bind this local rank to the CPUs, memory node and NIC of its -r entry\n"
                   "(the i-th -r for local rank i) and execute PROGRAM.\n\n"
                   "  -r, --rank SPEC   plan of the next local rank: CPU list, NUMA node, optional NIC\n"
                   "                    (InfiniBand or RoCE: UCX_NET_DEVICES; NIC/efa: FI_EFA_IFACE)\n"
                   "  -b, --benchd URL  use the plan measured by the node's benchd when it answers\n"
                   "                    (e.g. http://127.0.0.1:9410), the -r plan otherwise\n"
                   "      --check-dataset NAME --dataset-dir DIR --benchd URL\n"
                   "                    only check that benchd has dataset NAME staged in DIR,\n"
                   "                    complete and without errors (exit 0), else say why (exit 1)\n"
                   "      --tenant K/N  this process is tenant K (from 0) of N on the node: the K-th\n"
                   "                    -r plan, or without -r the K-th of N shares of its CPUs\n"
                   "      --confine NAME  with --tenant: run PROGRAM in a cgroup NAME of its own with\n"
                   "                    those CPUs and at most --mem-max bytes (a systemd scope where\n"
                   "                    systemd runs the machine, else the cgroup tree, v2 or v1)\n"
                   "      --mem-max SIZE  the tenant's memory (bytes, or K, M, G, T; default: the\n"
                   "                    node's MemTotal / N)\n"
                   "      --cgroup-root DIR  the cgroup tree (default /sys/fs/cgroup; for tests)\n"
                   "  -v, --verbose     print the binding to standard error\n"
                   "  -n, --dry-run     print the binding and run PROGRAM without binding\n"
                   "  -h, --help        show this help\n"
                   "      --version     show the version\n");
}

static int parse_spec(char *spec, struct plan *p)
{
        p->spec = spec;
        char *mem = strchr(spec, ':');
        if (!mem)
                return -EINVAL;
        *mem++ = '\0';
        char *nic = strchr(mem, ':');
        if (nic) {
                *nic++ = '\0';
                if (!*nic)
                        return -EINVAL;
        }
        p->nic = nic;
        p->efa = false;
        char *kind = nic ? strchr(nic, '/') : NULL;
        if (kind) {
                *kind++ = '\0';
                if (!*nic || !streq(kind, "efa"))
                        return -EINVAL;
                p->efa = true;
        }
        long m;
        if (str_parse_long(mem, &m) < 0 || m < 0 || m >= MAX_NUMA_NODES)
                return -EINVAL;
        p->mem = (int)m;
        if (cpuset_parse(&p->cpus, spec) < 0 || cpuset_count(&p->cpus) == 0)
                return -EINVAL;
        return 0;
}

static int local_rank(const char **ret_var)
{
        for (const char *const *v = rank_vars; *v; v++) {
                const char *s = getenv(*v);
                long r;
                if (s && str_parse_long(s, &r) == 0 && r >= 0 && r < MAX_RANKS) {
                        *ret_var = *v;
                        return (int)r;
                }
        }
        return -1;
}

static size_t collect(char *data, size_t size, size_t n, void *user)
{
        struct bd_buf *b = user;
        if (b->len + size * n > (1u << 20))
                return 0;
        buf_add(b, data, size * n);
        return size * n;
}

/* GET url (timeout in ms): the status and the parsed JSON body (NULL when
 * it is not JSON); false with the reason when no answer came. */
static bool http_get_json(const char *url, long timeout_ms, long *ret_status, cJSON **ret_json, char *reason, size_t n)
{
        _cleanup_buf_ struct bd_buf body = BD_BUF_INIT;
        struct bd_err err;
        const struct curl_fns *C = curl_fns(&err);
        if (!C) {
                str_copy(reason, n, err.msg);
                return false;
        }
        CURL *h = C->easy_init();
        if (!h) {
                snprintf(reason, n, "libcurl failed to start");
                return false;
        }
        *ret_status = 0;
        C->easy_setopt(h, CURLOPT_URL, url);
        C->easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
        C->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        C->easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
        C->easy_setopt(h, CURLOPT_WRITEDATA, &body);
        CURLcode rc = C->easy_perform(h);
        C->easy_getinfo(h, CURLINFO_RESPONSE_CODE, ret_status);
        C->easy_cleanup(h);
        if (rc != CURLE_OK) {
                snprintf(reason, n, "%s", C->easy_strerror(rc));
                return false;
        }
        *ret_json = cJSON_Parse(body.s ? body.s : "");
        return true;
}

/* The measured plan of `ranks` local ranks from benchd, entry `rank` of it;
 * false (and why, in reason) when benchd does not give one. */
static bool measured_plan(const char *url, int ranks, int rank, struct plan *p, char *reason, size_t n)
{
        _cleanup_free_ char *full = xasprintf("%s/v1/binding?ranks=%d", url, ranks);
        long status = 0;
        bool ok = false;
        cJSON *j = NULL;
        char why[256];
        if (!http_get_json(full, 1000, &status, &j, why, sizeof(why))) {
                _cleanup_free_ char *msg = xasprintf("benchd at %s: %s", url, why);
                str_copy(reason, n, msg);
                return false;
        }
        const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "ranks"), rank);
        const cJSON *cpus = cJSON_GetObjectItemCaseSensitive(r, "physcpubind");
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(r, "membind");
        const cJSON *nic = cJSON_GetObjectItemCaseSensitive(r, "nic");
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(r, "nic_kind");
        if (status != 200) {
                const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
                snprintf(reason, n, "benchd at %s answered %ld%s%s", url, status, cJSON_IsString(e) ? ": " : "",
                         cJSON_IsString(e) ? e->valuestring : "");
        } else if (!cJSON_IsString(cpus) || !cJSON_IsNumber(mem) || mem->valuedouble < 0 ||
                   mem->valuedouble >= MAX_NUMA_NODES || mem->valuedouble != (int)mem->valuedouble ||
                   cpuset_parse(&p->cpus, cpus->valuestring) < 0 || cpuset_count(&p->cpus) == 0)
                snprintf(reason, n, "benchd at %s: no usable plan for local rank %d", url, rank);
        else {
                p->mem = mem->valueint;
                p->nic = NULL;
                p->efa = false;
                /* UCX takes InfiniBand and RoCE devices; EFA goes through libfabric */
                if (cJSON_IsString(nic) && cJSON_IsString(kind) && nic->valuestring[0] &&
                    strlen(nic->valuestring) < sizeof(p->nic_buf) &&
                    (streq(kind->valuestring, "infiniband") || streq(kind->valuestring, "roce") ||
                     streq(kind->valuestring, "efa"))) {
                        snprintf(p->nic_buf, sizeof(p->nic_buf), "%s", nic->valuestring);
                        p->nic = p->nic_buf;
                        p->efa = streq(kind->valuestring, "efa");
                }
                ok = true;
        }
        cJSON_Delete(j);
        return ok;
}

/* --check-dataset: benchd must have the dataset staged in dir, complete,
 * without errors. */
static int check_dataset(const char *url, const char *name, const char *dir, const char *host)
{
        _cleanup_free_ char *full = xasprintf("%s/v1/datasets/%s", url, name);
        long status = 0;
        int ret = 1;
        cJSON *j = NULL;
        char why[256];
        if (!http_get_json(full, 5000, &status, &j, why, sizeof(why))) {
                fprintf(stderr, "benchd-bind: %s: cannot ask benchd at %s about dataset '%s': %s\n", host, url, name,
                        why);
                return 1;
        }
        const char *state = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "state"));
        const char *dst = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "destination"));
        const char *job = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "job"));
        const char *sum = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "manifest_checksum"));
        const char *error = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "error"));
        const cJSON *errors = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "progress"), "errors");
        if (status == 404)
                fprintf(stderr, "benchd-bind: %s: dataset '%s' was never staged on this node (benchctl stage)\n", host,
                        name);
        else if (status != 200 || !state)
                fprintf(stderr, "benchd-bind: %s: benchd at %s answered %ld about dataset '%s'\n", host, url, status,
                        name);
        else if (!dst || !same_path(dst, dir))
                fprintf(stderr, "benchd-bind: %s: dataset '%s' is staged in '%s', not in '%s'\n", host, name,
                        dst ? dst : "?", dir);
        else if (!streq(state, "complete") || (cJSON_IsNumber(errors) && errors->valuedouble > 0))
                fprintf(stderr, "benchd-bind: %s: dataset '%s' in '%s' is not ready: its last %s is %s%s%s\n", host,
                        name, dir, job ? job : "job", state, error ? ": " : "", error ? error : "");
        else {
                printf("benchd: %s: dataset '%s' staged in %s (manifest %s)\n", host, name, dir, sum ? sum : "?");
                ret = 0;
        }
        cJSON_Delete(j);
        return ret;
}

static int apply(const struct plan *p, const char *host, int rank)
{
        cpu_set_t allowed, want;
        CPU_ZERO(&want);
        if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
                return fprintf(stderr, "benchd-bind: sched_getaffinity: %s\n", strerror(errno)), -1;
        _cleanup_buf_ struct bd_buf missing = BD_BUF_INIT;
        struct bd_cpuset miss;
        cpuset_clear(&miss);
        for (int c = 0; c < BD_CPUSET_MAX; c++) {
                if (!cpuset_has(&p->cpus, c))
                        continue;
                if (c >= CPU_SETSIZE || !CPU_ISSET(c, &allowed))
                        cpuset_add(&miss, c);
                else
                        CPU_SET(c, &want);
        }
        if (cpuset_count(&miss) > 0) {
                cpuset_format(&miss, &missing);
                fprintf(stderr, "benchd-bind: local rank %d on %s: CPUs %s are not available to this process "
                                "(the system's declared topology does not match this node)\n",
                        rank, host, missing.s);
                return -1;
        }
        if (sched_setaffinity(0, sizeof(want), &want) < 0)
                return fprintf(stderr, "benchd-bind: sched_setaffinity: %s\n", strerror(errno)), -1;
        if (p->mem < 0)
                return 0;       /* a share of this process's CPUs: memory where the kernel puts it */
        unsigned long mask[MAX_NUMA_NODES / (8 * sizeof(unsigned long))] = { 0 };
        mask[p->mem / (8 * sizeof(unsigned long))] |= 1UL << (p->mem % (8 * sizeof(unsigned long)));
        if (syscall(SYS_set_mempolicy, MPOL_BIND, mask, (unsigned long)MAX_NUMA_NODES) < 0) {
                /* ENOSYS: kernel without NUMA support, one node: nothing to bind */
                if (!(errno == ENOSYS && p->mem == 0)) {
                        fprintf(stderr, "benchd-bind: local rank %d on %s: cannot bind memory to NUMA node %d: %s\n",
                                rank, host, p->mem, strerror(errno));
                        return -1;
                }
        }
        return 0;
}

/* --tenant K/N */
static int parse_tenant(const char *s, int *k, int *n)
{
        const char *slash = strchr(s, '/');
        if (!slash)
                return -EINVAL;
        _cleanup_free_ char *a = xstrndup(s, (size_t)(slash - s));
        long kk, nn;
        if (str_parse_long(a, &kk) < 0 || str_parse_long(slash + 1, &nn) < 0 || nn < 1 || nn > MAX_RANKS || kk < 0 ||
            kk >= nn)
                return -EINVAL;
        *k = (int)kk;
        *n = (int)nn;
        return 0;
}

/* Tenant k's share of the n: the k-th of n equal parts of the CPUs this
 * process may use, or one CPU of them when there are fewer CPUs than
 * tenants (note says so).  In a Slurm step that has fewer CPUs than the
 * node (task/affinity or task/cgroup gave it its own), all of them. */
static int share_plan(int k, int n, struct plan *p, char *note, size_t nn)
{
        cpu_set_t allowed;
        if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
                return -errno;
        static int cpus[CPU_SETSIZE];
        int m = 0;
        for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &allowed))
                        cpus[m++] = c;
        *p = (struct plan){ .mem = -1 };
        cpuset_clear(&p->cpus);
        note[0] = '\0';
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        if (m == 0)
                return -ENOENT;
        if (getenv("SLURM_STEP_ID") && online > 0 && m < online) {
                for (int i = 0; i < m; i++)
                        cpuset_add(&p->cpus, cpus[i]);
                snprintf(note, nn, ", its Slurm step's");
        } else if (m >= n) {
                for (int i = k * m / n; i < (k + 1) * m / n; i++)
                        cpuset_add(&p->cpus, cpus[i]);
        } else {
                cpuset_add(&p->cpus, cpus[k % m]);
                snprintf(note, nn, ", shared: %d tenants on %d CPUs", n, m);
        }
        return 0;
}

static void size_format(long long bytes, struct bd_buf *out)
{
        if (bytes >= (1LL << 30))
                buf_printf(out, "%.1f GiB", (double)bytes / (double)(1LL << 30));
        else
                buf_printf(out, "%.1f MiB", (double)bytes / (double)(1LL << 20));
}

/* Whether systemd runs the machine (and so owns the cgroup tree) */
static bool under_systemd(void)
{
        return access("/run/systemd/system", F_OK) == 0;
}

static volatile sig_atomic_t child_pid;

static void pass_signal(int sig)
{
        if (child_pid > 0)
                kill((pid_t)child_pid, sig);
}

/* PROGRAM in cgroup NAME under root (NULL: the machine's) with the plan's
 * CPUs and at most mem bytes; returns only on failure, with the exit status
 * to give (or, having run it, its status). */
static int run_confined(const char *name, const char *root, const struct plan *p, long long mem, char **argv,
                        const char *who, const char *what)
{
        _cleanup_buf_ struct bd_buf cpus = BD_BUF_INIT;
        cpuset_format(&p->cpus, &cpus);
        if (!root && under_systemd()) {
                /* systemd owns the tree: a transient scope of its own */
                _cleanup_free_ char *unit = xasprintf("--unit=%s", name);
                _cleanup_free_ char *ac = xasprintf("AllowedCPUs=%s", cpus.s);
                _cleanup_free_ char *mm = xasprintf("MemoryMax=%lld", mem);
                size_t n = 0;
                while (argv[n])
                        n++;
                char **av = xcalloc(n + 11, sizeof(char *));
                size_t i = 0;
                av[i++] = "systemd-run";
                av[i++] = "--scope";
                av[i++] = "--quiet";
                av[i++] = "--collect";
                av[i++] = unit;
                av[i++] = "-p";
                av[i++] = ac;
                av[i++] = "-p";
                av[i++] = mm;
                av[i++] = "--";
                for (size_t j = 0; j < n; j++)
                        av[i++] = argv[j];
                fprintf(stderr, "%s%s (systemd scope %s.scope)\n", who, what, name);
                execvp(av[0], av);
                fprintf(stderr, "benchd-bind: cannot run systemd-run: %s\n", strerror(errno));
                free(av);
                return 127;
        }
        struct bd_cgroup cg;
        struct bd_err err;
        if (cgroup_make(root, NULL, name, &p->cpus, mem, &cg, &err) < 0) {
                fprintf(stderr, "%scannot be confined: %s\n", who, err.msg);
                return 1;
        }
        _cleanup_buf_ struct bd_buf where = BD_BUF_INIT;
        cgroup_describe(&cg, root, &where);
        fprintf(stderr, "%s%s (%s)\n", who, what, where.s);
        fflush(NULL);
        static const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 };
        struct sigaction sa = { .sa_handler = pass_signal };
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
                sigaction(sigs[i], &sa, NULL);
        pid_t pid = fork();
        if (pid < 0) {
                fprintf(stderr, "benchd-bind: fork: %s\n", strerror(errno));
                cgroup_remove(&cg, &err);
                return 1;
        }
        if (pid == 0) {
                struct sigaction dfl = { .sa_handler = SIG_DFL };
                for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
                        sigaction(sigs[i], &dfl, NULL);
                if (cgroup_join(&cg, 0, &err) < 0) {
                        fprintf(stderr, "%scannot join its cgroup: %s\n", who, err.msg);
                        _exit(126);
                }
                execvp(argv[0], argv);
                fprintf(stderr, "benchd-bind: cannot run '%s': %s\n", argv[0], strerror(errno));
                _exit(127);
        }
        child_pid = pid;
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        child_pid = 0;
        if (cgroup_remove(&cg, &err) < 0)
                fprintf(stderr, "benchd-bind: %s\n", err.msg);
        if (WIFSIGNALED(status)) {
                /* die as it did, for the launcher */
                struct sigaction dfl = { .sa_handler = SIG_DFL };
                sigaction(WTERMSIG(status), &dfl, NULL);
                raise(WTERMSIG(status));
                return 128 + WTERMSIG(status);
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* The variables that point the rank's transport at its NIC */
static void nic_env(const struct plan *p)
{
        if (p->nic && p->efa)
                setenv("FI_EFA_IFACE", p->nic, 1);
        else if (p->nic) {
                _cleanup_free_ char *ucx = xasprintf("%s:1", p->nic);
                setenv("UCX_NET_DEVICES", ucx, 1);
        }
        if (p->nic)
                setenv("BENCHD_NIC", p->nic, 1);
}

/* --tenant K/N: the plan (the K-th -r, benchd's measured K-th of N, or a
 * share of this process's CPUs), bound, said on standard error, then the
 * program, confined with --confine. */
static int run_tenant(int k, int n, struct plan *plans, int nplans, const char *benchd_url, const char *confine,
                      const char *cgroup_root, long long mem_max, bool dry, char **argv, const char *host)
{
        struct plan share = { 0 }, measured = { 0 };
        const struct plan *p = &share;
        char note[128] = "", reason[256] = "";
        if (nplans > 0 && nplans != n) {
                fprintf(stderr, "benchd-bind: tenant %d of %d on %s but %d -r plans (one per tenant)\n", k, n, host,
                        nplans);
                return 2;
        }
        if (nplans > 0) {
                p = &plans[k];
                if (benchd_url && measured_plan(benchd_url, n, k, &measured, reason, sizeof(reason)))
                        p = &measured, snprintf(note, sizeof(note), ", measured by benchd");
        } else {
                int r = share_plan(k, n, &share, note, sizeof(note));
                if (r < 0) {
                        fprintf(stderr, "benchd-bind: tenant %d of %d on %s: its CPUs: %s\n", k, n, host, strerror(-r));
                        return 1;
                }
        }
        if (confine && !mem_max) {
                long long total = meminfo_total(NULL);
                if (total < 0) {
                        fprintf(stderr, "benchd-bind: tenant %d of %d on %s: /proc/meminfo: no MemTotal\n", k, n, host);
                        return 1;
                }
                mem_max = total / n;
        }
        _cleanup_buf_ struct bd_buf what = BD_BUF_INIT, who = BD_BUF_INIT;
        buf_printf(&who, "benchd-bind: tenant %d of %d on %s: ", k, n, host);
        buf_puts(&what, "CPUs ");
        cpuset_format(&p->cpus, &what);
        buf_puts(&what, note);
        if (p->mem >= 0)
                buf_printf(&what, ", memory node %d", p->mem);
        if (mem_max) {
                buf_puts(&what, ", memory at most ");
                size_format(mem_max, &what);
        }
        if (dry) {
                fprintf(stderr, "%s%s (dry run)\n", who.s, what.s);
                execvp(argv[0], argv);
                fprintf(stderr, "benchd-bind: cannot run '%s': %s\n", argv[0], strerror(errno));
                return 127;
        }
        if (apply(p, host, k) < 0)
                return 1;
        nic_env(p);
        if (confine)
                return run_confined(confine, cgroup_root, p, mem_max, argv, who.s, what.s);
        fprintf(stderr, "%s%s (not confined: no --confine)\n", who.s, what.s);
        execvp(argv[0], argv);
        fprintf(stderr, "benchd-bind: cannot run '%s': %s\n", argv[0], strerror(errno));
        return 127;
}

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
                { "rank", required_argument, NULL, 'r' },
                { "verbose", no_argument, NULL, 'v' },
                { "dry-run", no_argument, NULL, 'n' },
                { "benchd", required_argument, NULL, 'b' },
                { "check-dataset", required_argument, NULL, 'C' },
                { "dataset-dir", required_argument, NULL, 'D' },
                { "tenant", required_argument, NULL, 'T' },
                { "confine", required_argument, NULL, 'G' },
                { "mem-max", required_argument, NULL, 'M' },
                { "cgroup-root", required_argument, NULL, 'R' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { NULL, 0, NULL, 0 },
        };
        struct plan plans[MAX_RANKS];
        int nplans = 0;
        bool verbose = false, dry = false;
        const char *benchd_url = NULL, *check_name = NULL, *check_dir = NULL;
        const char *confine = NULL, *cgroup_root = NULL;
        int tenant = -1, tenants = 0;
        long long mem_max = 0;
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+r:b:vnh", longopts, NULL)) != -1) {
                switch (c) {
                case 'r':
                        if (nplans >= MAX_RANKS) {
                                fprintf(stderr, "benchd-bind: more than %d ranks\n", MAX_RANKS);
                                return 2;
                        }
                        if (parse_spec(optarg, &plans[nplans]) < 0) {
                                fprintf(stderr, "benchd-bind: -r '%s': expected CPUS:MEMNODE[:NIC], e.g. 0-5,48-53:0\n",
                                        optarg);
                                return 2;
                        }
                        nplans++;
                        break;
                case 'b': benchd_url = optarg; break;
                case 'C': check_name = optarg; break;
                case 'D': check_dir = optarg; break;
                case 'T':
                        if (parse_tenant(optarg, &tenant, &tenants) < 0) {
                                fprintf(stderr, "benchd-bind: --tenant '%s': expected K/N, 0 <= K < N, e.g. 1/4\n",
                                        optarg);
                                return 2;
                        }
                        break;
                case 'G':
                        if (!*optarg || strchr(optarg, '/') || streq(optarg, ".") || streq(optarg, "..")) {
                                fprintf(stderr, "benchd-bind: --confine '%s': a cgroup's name, one path component\n",
                                        optarg);
                                return 2;
                        }
                        confine = optarg;
                        break;
                case 'M':
                        if ((mem_max = size_parse(optarg)) <= 0) {
                                fprintf(stderr, "benchd-bind: --mem-max '%s': a size like 4G or 1048576\n", optarg);
                                return 2;
                        }
                        break;
                case 'R': cgroup_root = optarg; break;
                case 'v': verbose = true; break;
                case 'n': dry = verbose = true; break;
                case 'h': usage(stdout); return 0;
                case 'V': printf("benchd-bind %s\n", PACKAGE_VERSION); return 0;
                default:
                        fprintf(stderr, "benchd-bind: unknown option '%s' (see --help)\n", argv[optind - 1]);
                        return 2;
                }
        }
        if (check_name || check_dir) {
                char node[256] = "?";
                gethostname(node, sizeof(node) - 1);
                if (!check_name || !check_dir || !benchd_url || optind < argc || nplans) {
                        fprintf(stderr, "benchd-bind: --check-dataset NAME goes with --dataset-dir DIR and --benchd URL, "
                                        "and nothing else\n");
                        return 2;
                }
                const char *slurm_node = getenv("SLURMD_NODENAME");
                return check_dataset(benchd_url, check_name, check_dir, slurm_node ? slurm_node : node);
        }
        if (optind >= argc) {
                fprintf(stderr, "benchd-bind: missing PROGRAM (see --help)\n");
                return 2;
        }
        if ((confine || mem_max) && tenant < 0) {
                fprintf(stderr, "benchd-bind: --confine and --mem-max go with --tenant K/N\n");
                return 2;
        }
        if (nplans == 0 && tenant < 0) {
                fprintf(stderr, "benchd-bind: no -r plans given (see --help)\n");
                return 2;
        }
        char host[256] = "?";
        gethostname(host, sizeof(host) - 1);
        const char *slurm_node = getenv("SLURMD_NODENAME");
        if (tenant >= 0)    /* the node as Slurm names it, where it does */
                return run_tenant(tenant, tenants, plans, nplans, benchd_url, confine, cgroup_root, mem_max, dry,
                                  argv + optind, slurm_node ? slurm_node : host);
        const char *var = NULL;
        int rank = local_rank(&var);
        if (rank < 0) {
                fprintf(stderr, "benchd-bind: cannot tell the local rank: none of OMPI_COMM_WORLD_LOCAL_RANK, "
                                "SLURM_LOCALID, MPI_LOCALRANKID, PMI_LOCAL_RANK is set\n");
                return 1;
        }
        if (rank >= nplans) {
                fprintf(stderr, "benchd-bind: local rank %d (%s) on %s but the plan has %d ranks per node\n", rank,
                        var, host, nplans);
                return 1;
        }
        struct plan measured = { 0 };
        const struct plan *p = &plans[rank];
        const char *source = "declared";
        char reason[256] = "";
        if (benchd_url) {
                if (measured_plan(benchd_url, nplans, rank, &measured, reason, sizeof(reason))) {
                        p = &measured;
                        source = "measured by benchd";
                } else if (verbose)
                        fprintf(stderr, "benchd-bind: %s; using the declared plan\n", reason);
        }
        if (verbose) {
                _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
                cpuset_format(&p->cpus, &b);
                fprintf(stderr, "benchd-bind: %s local rank %d: --physcpubind=%s --membind=%d%s%s%s (%s)%s\n", host,
                        rank, b.s, p->mem, p->nic ? " nic " : "", p->nic ? p->nic : "", p->efa ? "/efa" : "", source,
                        dry ? " (dry run)" : "");
        }
        if (!dry && apply(p, host, rank) < 0)
                return 1;
        nic_env(p);
        execvp(argv[optind], argv + optind);
        fprintf(stderr, "benchd-bind: cannot run '%s': %s\n", argv[optind], strerror(errno));
        return 127;
}

/* bind.c: per-rank CPU/memory/NIC binding from a node's topology. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "bind.h"
#include "strutil.h"

static const char *const kind_names[] = {
        [NIC_ETHERNET] = "ethernet", [NIC_INFINIBAND] = "infiniband", [NIC_ROCE] = "roce", [NIC_EFA] = "efa",
};

int bd_nic_kind_parse(const char *s, enum bd_nic_kind *ret)
{
        for (size_t i = 0; i < ARRAY_SIZE(kind_names); i++)
                if (streq(s, kind_names[i])) {
                        *ret = (enum bd_nic_kind)i;
                        return 0;
                }
        return -EINVAL;
}

const char *bd_nic_kind_name(enum bd_nic_kind k)
{
        return (size_t)k < ARRAY_SIZE(kind_names) ? kind_names[k] : "unknown";
}

bool bd_nic_kind_rdma(enum bd_nic_kind k)
{
        return k == NIC_INFINIBAND || k == NIC_ROCE || k == NIC_EFA;
}

static int cpu_id(const struct bd_topo *t, int socket, int core, int thread)
{
        return thread * t->sockets * t->cores_per_socket + socket * t->cores_per_socket + core;
}

/* A NUMA node with CPUs, as the plan sees it. */
struct plan_node {
        int id;                         /* NUMA node number */
        int ncores;
        const struct bd_core *cores;    /* its measured cores; NULL: declared, CPU numbers by cpu_id() */
        int ranks;
};

/* The NUMA nodes with CPUs, ascending: the measured layout's, else socket n
 * as node n.  Returns how many. */
static int plan_nodes(const struct bd_topo *t, struct plan_node **ret, struct bd_err *err)
{
        if (!t->cores) {
                if (t->sockets < 1 || t->cores_per_socket < 1 || t->threads_per_core < 1)
                        return bd_err_set(err, -EINVAL, "topology without CPUs");
                struct plan_node *nodes = xcalloc((size_t)t->sockets, sizeof(*nodes));
                for (int s = 0; s < t->sockets; s++)
                        nodes[s] = (struct plan_node) { .id = s, .ncores = t->cores_per_socket };
                *ret = nodes;
                return t->sockets;
        }
        if (t->ncores < 1)
                return bd_err_set(err, -EINVAL, "topology without CPUs");
        _cleanup_free_ struct plan_node *nodes = xcalloc((size_t)t->ncores, sizeof(*nodes));
        int n = 0;
        for (int i = 0; i < t->ncores; i++) {
                const struct bd_core *c = &t->cores[i];
                if (c->ncpus < 1 || c->ncpus > BD_MAX_THREADS)
                        return bd_err_set(err, -EINVAL, "a core of NUMA node %d with %d CPUs", c->node, c->ncpus);
                if (n > 0 && nodes[n - 1].id == c->node) {
                        nodes[n - 1].ncores++;
                        continue;
                }
                if (n > 0 && c->node < nodes[n - 1].id)
                        return bd_err_set(err, -EINVAL, "the cores of NUMA node %d come after node %d's", c->node,
                                          nodes[n - 1].id);
                nodes[n++] = (struct plan_node) { .id = c->node, .ncores = 1, .cores = c };
        }
        *ret = TAKE_PTR(nodes);
        return n;
}

/* The node of each rank (an index into nodes), counted in nodes[].ranks. */
static void place_ranks(const struct bd_topo *t, int ranks, struct plan_node *nodes, int nnodes, int *node_of)
{
        int spread = 0;
        for (int r = 0; r < ranks; r++) {
                node_of[r] = -1;
                for (int i = 0; i < nnodes && r < t->ngpus; i++)
                        if (nodes[i].id == t->gpu_numa[r])
                                node_of[r] = i;
                if (node_of[r] >= 0)
                        nodes[node_of[r]].ranks++;
                else
                        spread++;
        }
        /* each of the others where a rank gets the most cores, the lowest such node */
        _cleanup_free_ int *extra = xcalloc((size_t)nnodes, sizeof(int));
        for (int k = 0; k < spread; k++) {
                int best = 0;
                for (int i = 1; i < nnodes; i++)
                        if ((long)nodes[i].ncores * (nodes[best].ranks + extra[best] + 1) >
                            (long)nodes[best].ncores * (nodes[i].ranks + extra[i] + 1))
                                best = i;
                extra[best]++;
        }
        /* handed out in rank order, node by node */
        for (int r = 0, i = 0; r < ranks; r++) {
                if (node_of[r] >= 0)
                        continue;
                while (extra[i] == 0)
                        i++;
                extra[i]--;
                node_of[r] = i;
                nodes[i].ranks++;
        }
}

/* Adds core k of a node: its first CPU, and its siblings with hyperthreads. */
static int add_core(const struct bd_topo *t, const struct plan_node *n, int k, struct bd_cpuset *cpus)
{
        if (n->cores) {
                const struct bd_core *c = &n->cores[k];
                for (int th = 0; th < (t->hyperthreads ? c->ncpus : 1); th++)
                        if (cpuset_add(cpus, c->cpus[th]) < 0)
                                return -ERANGE;
                return 0;
        }
        for (int th = 0; th < (t->hyperthreads ? t->threads_per_core : 1); th++)
                if (cpuset_add(cpus, cpu_id(t, n->id, k, th)) < 0)
                        return -ERANGE;
        return 0;
}

int bind_plan(const struct bd_topo *t, int ranks, struct bd_rank_bind **ret_plan, struct bd_err *err)
{
        if (ranks < 1)
                return bd_err_set(err, -EINVAL, "no ranks to bind");
        _cleanup_free_ struct plan_node *nodes = NULL;
        int nnodes = plan_nodes(t, &nodes, err);
        if (nnodes < 0)
                return nnodes;
        _cleanup_free_ struct bd_rank_bind *plan = xcalloc((size_t)ranks, sizeof(*plan));
        _cleanup_free_ int *node_of = xcalloc((size_t)ranks, sizeof(int));
        _cleanup_free_ int *index = xcalloc((size_t)ranks, sizeof(int));
        _cleanup_free_ int *count = xcalloc((size_t)nnodes, sizeof(int));
        place_ranks(t, ranks, nodes, nnodes, node_of);
        for (int r = 0; r < ranks; r++)
                index[r] = count[node_of[r]]++;

        /* RDMA NICs when there are any, else every NIC */
        int cand[BD_MAX_NICS], ncand = 0;
        for (int i = 0; i < t->nnics; i++)
                if (bd_nic_kind_rdma(t->nics[i].kind))
                        cand[ncand++] = i;
        if (ncand == 0)
                for (int i = 0; i < t->nnics; i++)
                        cand[ncand++] = i;

        for (int r = 0; r < ranks; r++) {
                const struct plan_node *n = &nodes[node_of[r]];
                int i = index[r], per = n->ncores / n->ranks;
                if (per < 1)
                        return bd_err_set(err, -EINVAL, "more ranks on NUMA node %d (%d) than cores (%d)", n->id,
                                          n->ranks, n->ncores);
                plan[r].numa = n->id;
                cpuset_clear(&plan[r].cpus);
                for (int c = i * per; c < (i + 1) * per; c++)
                        if (add_core(t, n, c, &plan[r].cpus) < 0)
                                return bd_err_set(err, -ERANGE, "CPU number beyond %d", BD_CPUSET_MAX);

                int local[BD_MAX_NICS], nlocal = 0;
                for (int k = 0; k < ncand; k++)
                        if (t->nics[cand[k]].numa == n->id)
                                local[nlocal++] = cand[k];
                if (nlocal > 0)
                        plan[r].nic = local[i * nlocal / n->ranks];
                else if (ncand > 0)
                        plan[r].nic = cand[r * ncand / ranks];
                else
                        plan[r].nic = -1;
        }
        *ret_plan = TAKE_PTR(plan);
        return 0;
}

void bind_format_numactl(const struct bd_rank_bind *b, struct bd_buf *out)
{
        buf_puts(out, "--physcpubind=");
        cpuset_format(&b->cpus, out);
        buf_printf(out, " --membind=%d", b->numa);
}

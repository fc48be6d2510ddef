/* bind.c: per-rank CPU/memory/NIC binding from a node's topology. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "bind.h"
#include "system.h"

static const char *const kind_names[] = {
        [NIC_ETHERNET] = "ethernet", [NIC_INFINIBAND] = "infiniband", [NIC_ROCE] = "roce", [NIC_EFA] = "efa",
};

int nic_kind_parse(const char *s, enum bd_nic_kind *ret)
{
        for (size_t i = 0; i < ARRAY_SIZE(kind_names); i++)
                if (streq(s, kind_names[i])) {
                        *ret = (enum bd_nic_kind)i;
                        return 0;
                }
        return -EINVAL;
}

const char *nic_kind_name(enum bd_nic_kind k)
{
        return (size_t)k < ARRAY_SIZE(kind_names) ? kind_names[k] : "unknown";
}

bool nic_kind_rdma(enum bd_nic_kind k)
{
        return k == NIC_INFINIBAND || k == NIC_ROCE || k == NIC_EFA;
}

int topo_from_system(const cJSON *sys, struct bd_topo *t, struct bd_err *err)
{
        memset(t, 0, sizeof(*t));
        t->sockets = (int)sys_int(sys, "cpu.sockets", 1);
        t->cores_per_socket = (int)sys_int(sys, "cpu.cores_per_socket", 1);
        t->threads_per_core = (int)sys_int(sys, "cpu.threads_per_core", 1);
        t->hyperthreads = sys_bool(sys, "binding.hyperthreads", true);
        t->ngpus = (int)sys_int(sys, "gpus_per_node", 0);
        if (t->ngpus > BD_MAX_GPUS)
                return bd_err_set(err, -E2BIG, "more than %d GPUs per node", BD_MAX_GPUS);
        const cJSON *gn = sys_get(sys, "topology.gpu_numa");
        for (int i = 0; i < t->ngpus; i++) {
                const cJSON *e = cJSON_GetArrayItem(gn, i);
                t->gpu_numa[i] = cJSON_IsNumber(e) ? (int)e->valuedouble : -1;
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, sys_get(sys, "topology.nics")) {
                if (t->nnics >= BD_MAX_NICS)
                        return bd_err_set(err, -E2BIG, "more than %d NICs per node", BD_MAX_NICS);
                struct bd_nic *n = &t->nics[t->nnics++];
                snprintf(n->name, sizeof(n->name), "%s", sys_str(e, "name", "?"));
                if (nic_kind_parse(sys_str(e, "kind", ""), &n->kind) < 0)
                        n->kind = NIC_ETHERNET;
                n->numa = (int)sys_int(e, "numa", -1);
        }
        return 0;
}

static int cpu_id(const struct bd_topo *t, int socket, int core, int thread)
{
        return thread * t->sockets * t->cores_per_socket + socket * t->cores_per_socket + core;
}

int bind_plan(const struct bd_topo *t, int ranks, struct bd_rank_bind **ret_plan, struct bd_err *err)
{
        if (ranks < 1)
                return bd_err_set(err, -EINVAL, "no ranks to bind");
        if (t->sockets < 1 || t->cores_per_socket < 1 || t->threads_per_core < 1)
                return bd_err_set(err, -EINVAL, "topology without CPUs");
        _cleanup_free_ struct bd_rank_bind *plan = xcalloc((size_t)ranks, sizeof(*plan));
        _cleanup_free_ int *count = xcalloc((size_t)t->sockets, sizeof(int));
        _cleanup_free_ int *index = xcalloc((size_t)ranks, sizeof(int));

        for (int r = 0; r < ranks; r++) {
                int n = r < t->ngpus ? t->gpu_numa[r] : -1;
                if (n < 0 || n >= t->sockets)
                        n = (int)((long)r * t->sockets / ranks);
                plan[r].numa = n;
                index[r] = count[n]++;
        }
        /* RDMA NICs when there are any, else every NIC */
        int cand[BD_MAX_NICS], ncand = 0;
        for (int i = 0; i < t->nnics; i++)
                if (nic_kind_rdma(t->nics[i].kind))
                        cand[ncand++] = i;
        if (ncand == 0)
                for (int i = 0; i < t->nnics; i++)
                        cand[ncand++] = i;

        int threads = t->hyperthreads ? t->threads_per_core : 1;
        for (int r = 0; r < ranks; r++) {
                int n = plan[r].numa, i = index[r];
                int per = t->cores_per_socket / count[n];
                if (per < 1)
                        return bd_err_set(err, -EINVAL, "more ranks on NUMA node %d (%d) than cores (%d)", n,
                                          count[n], t->cores_per_socket);
                cpuset_clear(&plan[r].cpus);
                for (int th = 0; th < threads; th++)
                        for (int c = i * per; c < (i + 1) * per; c++)
                                if (cpuset_add(&plan[r].cpus, cpu_id(t, n, c, th)) < 0)
                                        return bd_err_set(err, -ERANGE, "CPU number beyond %d", BD_CPUSET_MAX);

                int local[BD_MAX_NICS], nlocal = 0;
                for (int k = 0; k < ncand; k++)
                        if (t->nics[cand[k]].numa == n)
                                local[nlocal++] = cand[k];
                if (nlocal > 0)
                        plan[r].nic = local[i * nlocal / count[n]];
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

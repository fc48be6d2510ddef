/* inventory.c: the inventory as a whole: scanning, JSON, measured topology. */
#include "config.h"

#include <string.h>

#include "buf.h"
#include "inventory.h"

void inventory_scan(struct inventory *inv, const char *root)
{
        memset(inv, 0, sizeof(*inv));
        snprintf(inv->root, sizeof(inv->root), "%s", root && *root ? root : "/");
        size_t n = strlen(inv->root);
        while (n > 1 && inv->root[n - 1] == '/')
                inv->root[--n] = '\0';
        inv->warnings = cJSON_CreateArray();
        inventory_scan_cpu(inv);
        inventory_scan_pci(inv);
}

void inventory_release(struct inventory *inv)
{
        cJSON_Delete(inv->warnings);
        inv->warnings = NULL;
}

void inventory_topo(const struct inventory *inv, struct bd_topo *t)
{
        memset(t, 0, sizeof(*t));
        t->sockets = inv->sockets > 0 ? inv->sockets : 1;
        t->cores_per_socket = inv->cores_per_socket > 0 ? inv->cores_per_socket : 1;
        t->threads_per_core = inv->threads_per_core > 0 ? inv->threads_per_core : 1;
        t->hyperthreads = true;
        t->ngpus = inv->ngpus;
        for (int i = 0; i < inv->ngpus; i++)
                t->gpu_numa[i] = inv->gpus[i].pci.numa;
        for (int i = 0; i < inv->nnics && t->nnics < BD_MAX_NICS; i++) {
                const struct inv_nic *n = &inv->nics[i];
                if (!n->is_rdma && n->rdma[0])
                        continue; /* the RDMA device stands for it */
                struct bd_nic *b = &t->nics[t->nnics++];
                snprintf(b->name, sizeof(b->name), "%s", n->name);
                b->kind = n->kind;
                b->numa = n->pci.numa;
        }
}

static cJSON *cpus_json(const struct bd_cpuset *s)
{
        struct bd_buf b = BD_BUF_INIT;
        cpuset_format(s, &b);
        cJSON *j = cJSON_CreateString(b.s);
        buf_release(&b);
        return j;
}

static cJSON *str_or_null(const char *s)
{
        return s && *s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *pci_json(const struct inv_pci *p)
{
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "address", p->bdf);
        cJSON_AddItemToObject(o, "numa_node", p->numa >= 0 ? cJSON_CreateNumber(p->numa) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "local_cpus", cpus_json(&p->local_cpus));
        cJSON_AddItemToObject(o, "link_speed", str_or_null(p->link_speed));
        cJSON_AddItemToObject(o, "link_width", p->link_width ? cJSON_CreateNumber(p->link_width) : cJSON_CreateNull());
        char id[16];
        snprintf(id, sizeof(id), "%04x:%04x", p->vendor, p->device);
        cJSON_AddStringToObject(o, "id", id);
        return o;
}

cJSON *inventory_json(const struct inventory *inv)
{
        cJSON *o = cJSON_CreateObject();
        cJSON *host = cJSON_AddObjectToObject(o, "host");
        cJSON_AddStringToObject(host, "hostname", inv->hostname);
        cJSON_AddStringToObject(host, "os", inv->os);
        cJSON_AddStringToObject(host, "kernel", inv->kernel);
        cJSON_AddNumberToObject(host, "uptime_seconds", inv->uptime);

        cJSON *cpu = cJSON_AddObjectToObject(o, "cpu");
        cJSON_AddStringToObject(cpu, "model", inv->cpu_model);
        cJSON_AddNumberToObject(cpu, "sockets", inv->sockets);
        cJSON_AddNumberToObject(cpu, "cores_per_socket", inv->cores_per_socket);
        cJSON_AddNumberToObject(cpu, "threads_per_core", inv->threads_per_core);
        cJSON_AddNumberToObject(cpu, "online_cpus", inv->online_cpus);
        cJSON_AddItemToObject(cpu, "online", cpus_json(&inv->online));

        cJSON *numa = cJSON_AddArrayToObject(o, "numa_nodes");
        for (int i = 0; i < inv->nnodes; i++) {
                cJSON *n = cJSON_CreateObject();
                cJSON_AddNumberToObject(n, "id", inv->nodes[i].id);
                cJSON_AddItemToObject(n, "cpus", cpus_json(&inv->nodes[i].cpus));
                cJSON_AddNumberToObject(n, "mem_total_kb", (double)inv->nodes[i].mem_kb);
                cJSON *d = cJSON_AddArrayToObject(n, "distances");
                for (int k = 0; k < inv->nnodes; k++)
                        cJSON_AddItemToArray(d, cJSON_CreateNumber(inv->nodes[i].distance[k]));
                cJSON_AddItemToArray(numa, n);
        }

        cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
        for (int i = 0; i < inv->ngpus; i++) {
                const struct inv_gpu *g = &inv->gpus[i];
                cJSON *e = cJSON_CreateObject();
                cJSON_AddNumberToObject(e, "index", i);
                cJSON_AddStringToObject(e, "name", g->name);
                cJSON_AddItemToObject(e, "uuid", str_or_null(g->uuid));
                cJSON_AddItemToObject(e, "minor", g->minor >= 0 ? cJSON_CreateNumber(g->minor) : cJSON_CreateNull());
                cJSON_AddItemToObject(e, "pci", pci_json(&g->pci));
                cJSON_AddItemToObject(e, "host_bridge", str_or_null(g->pci.host));
                cJSON_AddItemToObject(e, "root_port", str_or_null(g->pci.depth > 0 ? g->pci.path[0] : NULL));
                /* the upstream port of the switch right above: root port, upstream, downstream, device */
                cJSON_AddItemToObject(e, "pcie_switch",
                                      str_or_null(g->pci.depth >= 3 ? g->pci.path[g->pci.depth - 2] : NULL));
                cJSON_AddItemToObject(e, "memory_bytes", cJSON_CreateNull()); /* NVML only */
                cJSON_AddItemToArray(gpus, e);
        }
        cJSON_AddItemToObject(o, "gpu_reason", str_or_null(inv->gpu_reason));
        cJSON_AddItemToObject(o, "driver_version", str_or_null(inv->driver_version));

        cJSON *nics = cJSON_AddArrayToObject(o, "nics");
        for (int i = 0; i < inv->nnics; i++) {
                const struct inv_nic *n = &inv->nics[i];
                cJSON *e = cJSON_CreateObject();
                cJSON_AddStringToObject(e, "name", n->name);
                cJSON_AddStringToObject(e, "kind", nic_kind_name(n->kind));
                cJSON_AddBoolToObject(e, "rdma", n->is_rdma);
                cJSON_AddItemToObject(e, "pci", n->has_pci ? pci_json(&n->pci) : cJSON_CreateNull());
                cJSON_AddItemToObject(e, "state", str_or_null(n->state));
                cJSON_AddItemToObject(e, "rate", str_or_null(n->rate));
                cJSON_AddItemToObject(e, "mtu", n->mtu ? cJSON_CreateNumber(n->mtu) : cJSON_CreateNull());
                cJSON_AddItemToObject(e, n->is_rdma ? "guid" : "mac", str_or_null(n->addr));
                cJSON_AddItemToObject(e, n->is_rdma ? "netdev" : "rdma_device", str_or_null(n->is_rdma ? n->netdev : n->rdma));
                cJSON_AddItemToArray(nics, e);
        }

        /* GPU x GPU and GPU x NIC, in nvidia-smi topo -m's words (NVLink needs NVML) */
        cJSON *topo = cJSON_AddObjectToObject(o, "topology");
        cJSON *gg = cJSON_AddArrayToObject(topo, "gpu_gpu");
        cJSON *gn = cJSON_AddArrayToObject(topo, "gpu_nic");
        for (int i = 0; i < inv->ngpus; i++) {
                cJSON *row = cJSON_CreateArray(), *nrow = cJSON_CreateArray();
                for (int k = 0; k < inv->ngpus; k++)
                        cJSON_AddItemToArray(row, cJSON_CreateString(inventory_relation(&inv->gpus[i].pci, &inv->gpus[k].pci)));
                for (int k = 0; k < inv->nnics; k++)
                        if (inv->nics[k].has_pci)
                                cJSON_AddItemToArray(nrow, cJSON_CreateString(inventory_relation(&inv->gpus[i].pci,
                                                                                                 &inv->nics[k].pci)));
                cJSON_AddItemToArray(gg, row);
                cJSON_AddItemToArray(gn, nrow);
        }

        struct bd_topo t;
        inventory_topo(inv, &t);
        int ranks = inv->ngpus > 0 ? inv->ngpus : 1;
        struct bd_rank_bind *plan = NULL;
        struct bd_err err;
        if (bind_plan(&t, ranks, &plan, &err) == 0) {
                cJSON *b = cJSON_AddArrayToObject(o, "binding");
                for (int r = 0; r < ranks; r++) {
                        cJSON *e = cJSON_CreateObject();
                        cJSON_AddNumberToObject(e, "local_rank", r);
                        cJSON_AddItemToObject(e, "physcpubind", cpus_json(&plan[r].cpus));
                        cJSON_AddNumberToObject(e, "membind", plan[r].numa);
                        cJSON_AddItemToObject(e, "nic", plan[r].nic >= 0 ? cJSON_CreateString(t.nics[plan[r].nic].name)
                                                                         : cJSON_CreateNull());
                        struct bd_buf nb = BD_BUF_INIT;
                        bind_format_numactl(&plan[r], &nb);
                        cJSON_AddStringToObject(e, "numactl", nb.s ? nb.s : "");
                        buf_release(&nb);
                        cJSON_AddItemToArray(b, e);
                }
                free(plan);
        } else
                cJSON_AddStringToObject(o, "binding_error", err.msg);
        cJSON_AddItemToObject(o, "warnings", cJSON_Duplicate(inv->warnings, true));
        return o;
}

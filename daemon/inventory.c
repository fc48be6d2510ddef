/* inventory.c: the inventory as a whole: scanning, JSON, measured topology. */
#include "config.h"

#include <string.h>

#include "buf.h"
#include "inventory.h"
#include "nvml.h"
#include "strutil.h"

/* What NVML adds on a live node: memory sizes and NVLinks. */
static void scan_nvml(struct inventory *inv)
{
        for (int i = 0; i < inv->ngpus; i++)
                inv->gpus[i].nvml_index = -1;
        if (!streq(inv->root, "/") && !nvml_library_named()) {
                snprintf(inv->nvml_reason, sizeof(inv->nvml_reason), "not used for a recorded tree");
                return;
        }
        if (nvml_open(inv->nvml_reason, sizeof(inv->nvml_reason)) < 0)
                return;
        for (int k = 0; k < nvml_count(); k++) {
                struct nvml_gpu n;
                if (nvml_describe(k, &n) < 0) {
                        inv_warn(inv, "NVML GPU %d: cannot read its identity", k);
                        continue;
                }
                for (int i = 0; i < inv->ngpus; i++) {
                        struct inv_gpu *g = &inv->gpus[i];
                        if (!streq(g->pci.bdf, n.bus_id))
                                continue;
                        g->nvml_index = k;
                        g->mem_total = n.mem_total;
                        if (n.name[0])
                                STR_COPY(g->name, n.name);
                        if (n.uuid[0])
                                STR_COPY(g->uuid, n.uuid);
                        g->nvlinks = n.nvlinks;
                        memcpy(g->nvlink_peer, n.nvlink_peer, sizeof(g->nvlink_peer));
                }
        }
        if (!inv->driver_version[0])
                (void) nvml_driver_version(inv->driver_version, sizeof(inv->driver_version));
}

void inventory_gpu_relation(const struct inventory *inv, int a, int b, char *buf, size_t n)
{
        const struct inv_gpu *ga = &inv->gpus[a], *gb = &inv->gpus[b];
        int links = 0;
        if (a != b)
                for (int l = 0; l < ga->nvlinks; l++)
                        links += streq(ga->nvlink_peer[l], gb->pci.bdf);
        if (links)
                snprintf(buf, n, "NV%d", links);
        else
                snprintf(buf, n, "%s", inventory_relation(&ga->pci, &gb->pci));
}

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* A string read from the tree as printable UTF-8, as JSON and Prometheus
 * labels need it: what is not (a stray byte, a control character) becomes
 * U+FFFD, with a warning naming the field. */
static void sanitize(struct inventory *inv, const char *what, int i, char *s, size_t n)
{
        if (!str_sanitize(s, n, s, REPLACEMENT))
                return;
        if (i >= 0)
                inv_warn(inv, "%s %d: not printable UTF-8, odd characters replaced by U+FFFD", what, i);
        else
                inv_warn(inv, "%s: not printable UTF-8, odd characters replaced by U+FFFD", what);
}

#define SANITIZE(what, i, field) sanitize(inv, what, i, field, sizeof(field))

static void sanitize_pci(struct inventory *inv, const char *what, int i, struct inv_pci *p)
{
        SANITIZE(what, i, p->bdf);
        SANITIZE(what, i, p->host);
        for (int k = 0; k < p->depth; k++)
                SANITIZE(what, i, p->path[k]);
        SANITIZE(what, i, p->link_speed);
}

static void sanitize_strings(struct inventory *inv)
{
        SANITIZE("host name", -1, inv->hostname);
        SANITIZE("OS name (/etc/os-release)", -1, inv->os);
        SANITIZE("kernel release", -1, inv->kernel);
        SANITIZE("CPU model", -1, inv->cpu_model);
        for (int i = 0; i < inv->ngpus; i++) {
                struct inv_gpu *g = &inv->gpus[i];
                sanitize_pci(inv, "GPU", i, &g->pci);
                SANITIZE("GPU", i, g->name);
                SANITIZE("GPU", i, g->uuid);
                for (int l = 0; l < g->nvlinks && l < (int)ARRAY_SIZE(g->nvlink_peer); l++)
                        SANITIZE("GPU", i, g->nvlink_peer[l]);
        }
        SANITIZE("NVIDIA driver version", -1, inv->driver_version);
        for (int i = 0; i < inv->nnics; i++) {
                struct inv_nic *n = &inv->nics[i];
                sanitize_pci(inv, "NIC", i, &n->pci);
                SANITIZE("NIC", i, n->name);
                SANITIZE("NIC", i, n->netdev);
                SANITIZE("NIC", i, n->rdma);
                SANITIZE("NIC", i, n->state);
                SANITIZE("NIC", i, n->rate);
                SANITIZE("NIC", i, n->addr);
        }
        for (int i = 0; i < inv->nmounts; i++) {
                SANITIZE("mount", i, inv->mounts[i].mnt);
                SANITIZE("mount", i, inv->mounts[i].fs);
                SANITIZE("mount", i, inv->mounts[i].dev);
        }
        SANITIZE("CUDA version", -1, inv->sw.cuda);
        SANITIZE("NCCL version", -1, inv->sw.nccl);
        SANITIZE("MPI version", -1, inv->sw.mpi);
        STR_COPY(inv->sw.driver, inv->driver_version); /* a copy, cleaned above */
        /* warnings quote names read from the tree; the ones added above are clean */
        cJSON *w;
        cJSON_ArrayForEach(w, inv->warnings) {
                size_t n = strlen(w->valuestring) * 3 + 1;
                _cleanup_free_ char *clean = xmalloc(n);
                if (str_sanitize(clean, n, w->valuestring, REPLACEMENT))
                        cJSON_SetValuestring(w, clean);
        }
}

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
        scan_nvml(inv);
        inventory_scan_software(inv);
        sanitize_strings(inv);
}

void inventory_release(struct inventory *inv)
{
        cJSON_Delete(inv->warnings);
        inv->warnings = NULL;
        free(inv->cores);
        inv->cores = NULL;
        inv->ncores = 0;
}

void inventory_topo(const struct inventory *inv, struct bd_topo *t)
{
        memset(t, 0, sizeof(*t));
        t->sockets = inv->sockets > 0 ? inv->sockets : 1;
        t->cores_per_socket = inv->cores_per_socket > 0 ? inv->cores_per_socket : 1;
        t->threads_per_core = inv->threads_per_core > 0 ? inv->threads_per_core : 1;
        t->hyperthreads = true;
        if (inv->ncores > 0) {
                t->cores = inv->cores;
                t->ncores = inv->ncores;
        }
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

/* v, or null where it is unknown (negative) */
static cJSON *known_or_null(double v)
{
        return v >= 0 ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *pci_json(const struct inv_pci *p)
{
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "address", p->bdf);
        cJSON_AddItemToObject(o, "numa_node", known_or_null(p->numa));
        cJSON_AddItemToObject(o, "local_cpus", cpus_json(&p->local_cpus));
        cJSON_AddItemToObject(o, "link_speed", str_or_null(p->link_speed));
        cJSON_AddItemToObject(o, "link_width", p->link_width ? cJSON_CreateNumber(p->link_width) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "max_link_speed", str_or_null(p->max_link_speed));
        cJSON_AddItemToObject(o, "max_link_width",
                              p->max_link_width ? cJSON_CreateNumber(p->max_link_width) : cJSON_CreateNull());
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
        cJSON_AddItemToObject(host, "uptime_seconds", known_or_null(inv->uptime));

        cJSON *cpu = cJSON_AddObjectToObject(o, "cpu");
        cJSON_AddStringToObject(cpu, "model", inv->cpu_model);
        cJSON_AddNumberToObject(cpu, "sockets", inv->sockets);
        cJSON_AddNumberToObject(cpu, "cores_per_socket", inv->cores_per_socket);
        cJSON_AddNumberToObject(cpu, "threads_per_core", inv->threads_per_core);
        cJSON_AddNumberToObject(cpu, "online_cpus", inv->online_cpus);
        cJSON_AddItemToObject(cpu, "online", cpus_json(&inv->online));

        cJSON_AddStringToObject(o, "numa_source", inv->numa_source ? inv->numa_source : "sysfs");
        cJSON *numa = cJSON_AddArrayToObject(o, "numa_nodes");
        for (int i = 0; i < inv->nnodes; i++) {
                cJSON *n = cJSON_CreateObject();
                cJSON_AddNumberToObject(n, "id", inv->nodes[i].id);
                cJSON_AddItemToObject(n, "cpus", cpus_json(&inv->nodes[i].cpus));
                cJSON_AddItemToObject(n, "mem_total_kb", known_or_null((double)inv->nodes[i].mem_kb));
                cJSON *d = cJSON_AddArrayToObject(n, "distances");
                for (int k = 0; k < inv->nnodes; k++)
                        cJSON_AddItemToArray(d, known_or_null(inv->nodes[i].distance[k]));
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
                cJSON_AddItemToObject(e, "memory_bytes",
                                      g->mem_total ? cJSON_CreateNumber((double)g->mem_total) : cJSON_CreateNull());
                cJSON *peers = cJSON_AddArrayToObject(e, "nvlink_peers");
                for (int l = 0; l < g->nvlinks; l++)
                        cJSON_AddItemToArray(peers, cJSON_CreateString(g->nvlink_peer[l]));
                cJSON_AddItemToArray(gpus, e);
        }
        cJSON_AddItemToObject(o, "gpu_reason", str_or_null(inv->gpu_reason));
        cJSON_AddItemToObject(o, "driver_version", str_or_null(inv->driver_version));

        cJSON *nics = cJSON_AddArrayToObject(o, "nics");
        for (int i = 0; i < inv->nnics; i++) {
                const struct inv_nic *n = &inv->nics[i];
                cJSON *e = cJSON_CreateObject();
                cJSON_AddStringToObject(e, "name", n->name);
                cJSON_AddStringToObject(e, "kind", bd_nic_kind_name(n->kind));
                cJSON_AddBoolToObject(e, "rdma", n->is_rdma);
                cJSON_AddItemToObject(e, "pci", n->has_pci ? pci_json(&n->pci) : cJSON_CreateNull());
                cJSON_AddItemToObject(e, "state", str_or_null(n->state));
                cJSON_AddItemToObject(e, "rate", str_or_null(n->rate));
                cJSON_AddItemToObject(e, "mtu", n->mtu ? cJSON_CreateNumber(n->mtu) : cJSON_CreateNull());
                cJSON_AddItemToObject(e, n->is_rdma ? "guid" : "mac", str_or_null(n->addr));
                cJSON_AddItemToObject(e, n->is_rdma ? "netdev" : "rdma_device", str_or_null(n->is_rdma ? n->netdev : n->rdma));
                cJSON_AddItemToArray(nics, e);
        }

        cJSON *mounts = cJSON_AddArrayToObject(o, "storage");
        for (int i = 0; i < inv->nmounts; i++) {
                const struct inv_mount *m = &inv->mounts[i];
                cJSON *e = cJSON_CreateObject();
                cJSON_AddStringToObject(e, "mount", m->mnt);
                cJSON_AddStringToObject(e, "filesystem", m->fs);
                cJSON_AddStringToObject(e, "device", m->dev);
                cJSON_AddItemToObject(e, "size_bytes", m->has_space ? cJSON_CreateNumber((double)m->size) : cJSON_CreateNull());
                cJSON_AddItemToObject(e, "free_bytes", m->has_space ? cJSON_CreateNumber((double)m->avail) : cJSON_CreateNull());
                cJSON_AddItemToArray(mounts, e);
        }
        cJSON *sw = cJSON_AddObjectToObject(o, "software");
        cJSON_AddItemToObject(sw, "nvidia_driver", str_or_null(inv->sw.driver));
        cJSON_AddItemToObject(sw, "cuda", str_or_null(inv->sw.cuda));
        cJSON_AddItemToObject(sw, "nccl", str_or_null(inv->sw.nccl));
        cJSON_AddItemToObject(sw, "mpi", str_or_null(inv->sw.mpi));
        cJSON *rt = cJSON_AddArrayToObject(sw, "container_runtimes");
        for (int i = 0; i < inv->sw.nruntimes; i++)
                cJSON_AddItemToArray(rt, cJSON_CreateString(inv->sw.runtimes[i]));
        cJSON_AddItemToObject(o, "nvml", inv->nvml_reason[0] ? cJSON_CreateString(inv->nvml_reason)
                                                            : cJSON_CreateString("used"));

        cJSON_AddItemToObject(o, "topology", inventory_topology_json(inv));
        struct bd_err err;
        cJSON *b = inventory_binding_json(inv, 0, &err);
        if (b)
                cJSON_AddItemToObject(o, "binding", b);
        else
                cJSON_AddStringToObject(o, "binding_error", err.msg);
        cJSON_AddItemToObject(o, "warnings", cJSON_Duplicate(inv->warnings, true));
        return o;
}

/* GPU x GPU and GPU x NIC in nvidia-smi topo -m's words, with the CPU and
 * NUMA affinity of each GPU. */
cJSON *inventory_topology_json(const struct inventory *inv)
{
        cJSON *topo = cJSON_CreateObject();
        cJSON *gl = cJSON_AddArrayToObject(topo, "gpus");
        cJSON *nl = cJSON_AddArrayToObject(topo, "nics");
        cJSON *gg = cJSON_AddArrayToObject(topo, "gpu_gpu");
        cJSON *gn = cJSON_AddArrayToObject(topo, "gpu_nic");
        cJSON *ca = cJSON_AddArrayToObject(topo, "cpu_affinity");
        cJSON *na = cJSON_AddArrayToObject(topo, "numa_affinity");
        char rel[16];
        for (int k = 0; k < inv->nnics; k++)
                if (inv->nics[k].has_pci)
                        cJSON_AddItemToArray(nl, cJSON_CreateString(inv->nics[k].name));
        for (int i = 0; i < inv->ngpus; i++) {
                cJSON *row = cJSON_CreateArray(), *nrow = cJSON_CreateArray();
                char name[16];
                snprintf(name, sizeof(name), "GPU%d", i);
                cJSON_AddItemToArray(gl, cJSON_CreateString(name));
                for (int k = 0; k < inv->ngpus; k++) {
                        inventory_gpu_relation(inv, i, k, rel, sizeof(rel));
                        cJSON_AddItemToArray(row, cJSON_CreateString(rel));
                }
                for (int k = 0; k < inv->nnics; k++)
                        if (inv->nics[k].has_pci)
                                cJSON_AddItemToArray(nrow, cJSON_CreateString(inventory_relation(&inv->gpus[i].pci,
                                                                                                 &inv->nics[k].pci)));
                cJSON_AddItemToArray(gg, row);
                cJSON_AddItemToArray(gn, nrow);
                cJSON_AddItemToArray(ca, cpus_json(&inv->gpus[i].pci.local_cpus));
                cJSON_AddItemToArray(na, inv->gpus[i].pci.numa >= 0 ? cJSON_CreateNumber(inv->gpus[i].pci.numa)
                                                                     : cJSON_CreateNull());
        }
        return topo;
}

cJSON *inventory_binding_json(const struct inventory *inv, int ranks, struct bd_err *err)
{
        struct bd_topo t;
        struct bd_rank_bind *plan = NULL;
        inventory_topo(inv, &t);
        if (ranks <= 0)
                ranks = inv->ngpus > 0 ? inv->ngpus : 1;
        if (bind_plan(&t, ranks, &plan, err) < 0)
                return NULL;
        cJSON *b = cJSON_CreateArray();
        for (int r = 0; r < ranks; r++) {
                cJSON *e = cJSON_CreateObject();
                struct bd_buf nb = BD_BUF_INIT;
                cJSON_AddNumberToObject(e, "local_rank", r);
                cJSON_AddItemToObject(e, "physcpubind", cpus_json(&plan[r].cpus));
                cJSON_AddNumberToObject(e, "membind", plan[r].numa);
                cJSON_AddItemToObject(e, "nic", plan[r].nic >= 0 ? cJSON_CreateString(t.nics[plan[r].nic].name)
                                                                 : cJSON_CreateNull());
                cJSON_AddItemToObject(e, "nic_kind", plan[r].nic >= 0 ? cJSON_CreateString(bd_nic_kind_name(t.nics[plan[r].nic].kind))
                                                                      : cJSON_CreateNull());
                bind_format_numactl(&plan[r], &nb);
                cJSON_AddStringToObject(e, "numactl", nb.s ? nb.s : "");
                buf_release(&nb);
                cJSON_AddItemToArray(b, e);
        }
        free(plan);
        return b;
}

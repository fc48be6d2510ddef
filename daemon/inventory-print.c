/* inventory-print.c: the inventory as text, for people (benchd --inventory). */
#include "config.h"

#include <stdio.h>

#include "buf.h"
#include "inventory.h"

static void human_bytes(char *buf, size_t n, unsigned long long v)
{
        static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
        double x = (double)v;
        int u = 0;
        while (x >= 1024 && u < 5)
                x /= 1024, u++;
        snprintf(buf, n, "%.1f %s", x, unit[u]);
}

/* GPU x GPU and GPU x NIC in nvidia-smi topo -m's layout. */
static void print_matrix(const struct inventory *inv, FILE *f)
{
        struct bd_buf b = BD_BUF_INIT;
        char rel[16];
        fprintf(f, "\n       ");
        for (int k = 0; k < inv->ngpus; k++)
                fprintf(f, " GPU%-3d", k);
        for (int k = 0; k < inv->nnics; k++)
                if (inv->nics[k].has_pci)
                        fprintf(f, " %-10.10s", inv->nics[k].name);
        fprintf(f, " CPU affinity     NUMA\n");
        for (int i = 0; i < inv->ngpus; i++) {
                fprintf(f, "GPU%-4d", i);
                for (int k = 0; k < inv->ngpus; k++) {
                        inventory_gpu_relation(inv, i, k, rel, sizeof(rel));
                        fprintf(f, " %-6s", rel);
                }
                for (int k = 0; k < inv->nnics; k++)
                        if (inv->nics[k].has_pci)
                                fprintf(f, " %-10s", inventory_relation(&inv->gpus[i].pci, &inv->nics[k].pci));
                buf_reset(&b);
                cpuset_format(&inv->gpus[i].pci.local_cpus, &b);
                fprintf(f, " %-16s %d\n", b.s ? b.s : "", inv->gpus[i].pci.numa);
        }
        buf_release(&b);
}

void inventory_print(const struct inventory *inv, FILE *f)
{
        struct bd_buf b = BD_BUF_INIT;
        char sz[32], av[32];
        char up[32] = "?";
        if (inv->uptime >= 0)
                snprintf(up, sizeof(up), "%.0f", inv->uptime);
        fprintf(f, "host      %s, %s, kernel %s, up %s s\n", inv->hostname, inv->os[0] ? inv->os : "?", inv->kernel, up);
        cpuset_format(&inv->online, &b);
        fprintf(f, "cpu       %s: %d socket%s x %d cores x %d threads, online %s\n",
                inv->cpu_model[0] ? inv->cpu_model : "?", inv->sockets, inv->sockets == 1 ? "" : "s",
                inv->cores_per_socket, inv->threads_per_core, b.s ? b.s : "");
        for (int i = 0; i < inv->nnodes; i++) {
                buf_reset(&b);
                cpuset_format(&inv->nodes[i].cpus, &b);
                if (inv->nodes[i].mem_kb >= 0)
                        snprintf(sz, sizeof(sz), "%.1f GiB", inv->nodes[i].mem_kb / 1048576.0);
                else
                        snprintf(sz, sizeof(sz), "memory unknown");
                fprintf(f, "numa %-4d cpus %s, %s\n", inv->nodes[i].id, b.s ? b.s : "", sz);
        }
        if (!inv->ngpus)
                fprintf(f, "gpus      none: %s\n", inv->gpu_reason);
        for (int i = 0; i < inv->ngpus; i++) {
                const struct inv_gpu *g = &inv->gpus[i];
                fprintf(f, "gpu %-5d %s %s numa %d %s", i, g->pci.bdf, g->name, g->pci.numa, g->uuid);
                if (g->mem_total) {
                        human_bytes(sz, sizeof(sz), g->mem_total);
                        fprintf(f, " %s", sz);
                }
                fputc('\n', f);
        }
        for (int i = 0; i < inv->nnics; i++) {
                const struct inv_nic *n = &inv->nics[i];
                fprintf(f, "nic       %-12s %-10s %s numa %d %s %s%s%s\n", n->name, bd_nic_kind_name(n->kind),
                        n->has_pci ? n->pci.bdf : "-", n->pci.numa, n->state, n->rate,
                        (n->netdev[0] || n->rdma[0]) ? " paired with " : "", n->is_rdma ? n->netdev : n->rdma);
        }
        for (int i = 0; i < inv->nmounts; i++) {
                const struct inv_mount *m = &inv->mounts[i];
                if (m->has_space) {
                        human_bytes(sz, sizeof(sz), m->size);
                        human_bytes(av, sizeof(av), m->avail);
                        fprintf(f, "storage   %-20s %-6s %s free of %s\n", m->mnt, m->fs, av, sz);
                } else
                        fprintf(f, "storage   %-20s %-6s\n", m->mnt, m->fs);
        }
        fprintf(f, "software  driver %s, CUDA %s, NCCL %s, MPI %s\n", inv->sw.driver[0] ? inv->sw.driver : "-",
                inv->sw.cuda[0] ? inv->sw.cuda : "-", inv->sw.nccl[0] ? inv->sw.nccl : "-",
                inv->sw.mpi[0] ? inv->sw.mpi : "-");
        fprintf(f, "runtimes ");
        for (int i = 0; i < inv->sw.nruntimes; i++)
                fprintf(f, " %s", inv->sw.runtimes[i]);
        fprintf(f, "%s\n", inv->sw.nruntimes ? "" : " -");
        if (inv->ngpus)
                print_matrix(inv, f);
        buf_release(&b);
}

/* benchd.c: the node daemon.  This version answers --inventory: what the
 * node has (CPU, NUMA, GPUs, NICs), how it is wired and the binding plan of
 * one rank per GPU, read from sysfs and procfs (or a recorded tree with
 * --sysfs-root).  The HTTP API, metrics and staging are not built yet. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "inventory.h"

static void usage(FILE *f)
{
        fprintf(f, "usage: benchd --inventory [--json] [--sysfs-root DIR]\n\n"
                   "Inventory this node: host, CPUs, NUMA nodes, GPUs, NICs, the PCI topology\n"
                   "between GPUs and NICs (nvidia-smi topo -m terms) and the binding plan of one\n"
                   "rank per GPU.\n\n"
                   "  -i, --inventory        print the inventory and exit\n"
                   "  -j, --json             as JSON\n"
                   "      --sysfs-root DIR   read DIR/sys, DIR/proc and DIR/etc instead of the live ones\n"
                   "  -h, --help             show this help\n"
                   "      --version          show the version\n\n"
                   "Serving the HTTP API (benchd as a daemon) is not built yet.\n");
}

static void print_text(const struct inventory *inv)
{
        printf("host      %s, %s, kernel %s, up %.0f s\n", inv->hostname, inv->os[0] ? inv->os : "?", inv->kernel,
               inv->uptime);
        struct bd_buf b = BD_BUF_INIT;
        cpuset_format(&inv->online, &b);
        printf("cpu       %s: %d socket%s x %d cores x %d threads, online %s\n", inv->cpu_model[0] ? inv->cpu_model : "?",
               inv->sockets, inv->sockets == 1 ? "" : "s", inv->cores_per_socket, inv->threads_per_core, b.s);
        for (int i = 0; i < inv->nnodes; i++) {
                buf_reset(&b);
                cpuset_format(&inv->nodes[i].cpus, &b);
                printf("numa %-4d cpus %s, %.1f GiB\n", inv->nodes[i].id, b.s, inv->nodes[i].mem_kb / 1048576.0);
        }
        if (!inv->ngpus)
                printf("gpus      none: %s\n", inv->gpu_reason);
        for (int i = 0; i < inv->ngpus; i++)
                printf("gpu %-5d %s %s numa %d %s\n", i, inv->gpus[i].pci.bdf, inv->gpus[i].name, inv->gpus[i].pci.numa,
                       inv->gpus[i].uuid);
        for (int i = 0; i < inv->nnics; i++) {
                const struct inv_nic *n = &inv->nics[i];
                printf("nic       %-12s %-10s %s numa %d %s %s%s%s\n", n->name, nic_kind_name(n->kind),
                       n->has_pci ? n->pci.bdf : "-", n->pci.numa, n->state, n->rate,
                       (n->netdev[0] || n->rdma[0]) ? " paired with " : "", n->is_rdma ? n->netdev : n->rdma);
        }
        if (inv->ngpus) {
                printf("\n       ");
                for (int k = 0; k < inv->ngpus; k++)
                        printf(" GPU%-3d", k);
                for (int k = 0; k < inv->nnics; k++)
                        if (inv->nics[k].has_pci)
                                printf(" %-10.10s", inv->nics[k].name);
                printf(" CPU affinity     NUMA\n");
                for (int i = 0; i < inv->ngpus; i++) {
                        printf("GPU%-4d", i);
                        for (int k = 0; k < inv->ngpus; k++)
                                printf(" %-6s", inventory_relation(&inv->gpus[i].pci, &inv->gpus[k].pci));
                        for (int k = 0; k < inv->nnics; k++)
                                if (inv->nics[k].has_pci)
                                        printf(" %-10s", inventory_relation(&inv->gpus[i].pci, &inv->nics[k].pci));
                        buf_reset(&b);
                        cpuset_format(&inv->gpus[i].pci.local_cpus, &b);
                        printf(" %-16s %d\n", b.s, inv->gpus[i].pci.numa);
                }
        }
        const cJSON *w;
        cJSON_ArrayForEach(w, inv->warnings)
                fprintf(stderr, "benchd: warning: %s\n", w->valuestring);
        buf_release(&b);
}

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
                { "inventory", no_argument, NULL, 'i' }, { "json", no_argument, NULL, 'j' },
                { "sysfs-root", required_argument, NULL, 'R' }, { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' }, { NULL, 0, NULL, 0 },
        };
        bool inventory = false, json = false;
        const char *root = "/";
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "ijh", longopts, NULL)) != -1) {
                switch (c) {
                case 'i': inventory = true; break;
                case 'j': json = true; break;
                case 'R': root = optarg; break;
                case 'h': usage(stdout); return 0;
                case 'V': printf("benchd %s\n", PACKAGE_VERSION); return 0;
                default:
                        fprintf(stderr, "benchd: unknown option '%s' (see --help)\n", argv[optind - 1]);
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "benchd: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        if (!inventory) {
                fprintf(stderr, "benchd: only --inventory is built so far; the HTTP API is not\n");
                return 2;
        }
        struct inventory *inv = xcalloc(1, sizeof(*inv));
        inventory_scan(inv, root);
        if (json) {
                cJSON *j = inventory_json(inv);
                char *text = cJSON_Print(j);
                puts(text);
                free(text);
                cJSON_Delete(j);
        } else
                print_text(inv);
        inventory_release(inv);
        free(inv);
        if (fflush(stdout) != 0)
                return 1;
        return 0;
}

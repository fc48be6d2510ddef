/* bind.h: the CPU, memory and NIC binding of each local rank.
 *
 * Rule (NVIDIA's launchers, generalised to the real topology): each rank
 * belongs to a NUMA node, its GPU's when that node has CPUs.  The other ranks
 * (no GPU, or a GPU on an unknown node) are spread over the NUMA nodes: each
 * goes where a rank would get the most cores (the lowest such node), counting
 * the GPUs' ranks, and they are handed out in rank order, node by node.  The
 * physical cores of a NUMA node are split evenly among the node's ranks, in
 * rank order; each rank also gets its cores' online hyperthread siblings
 * unless hyperthreads are off.  Memory is bound to the rank's NUMA node.  The
 * NIC is the rank's share of the RDMA NICs on its NUMA node, else of all of
 * them.
 *
 * Where the cores are: a measured topology (benchd's inventory) carries its
 * layout, every physical core with its NUMA node and online CPUs, as sysfs
 * gives them: any numbering (interleaved, several nodes per socket, sparse
 * node numbers, offline CPUs).  A declared topology (a system configuration)
 * has none and follows Linux on x86 servers: socket s, core c, thread t is CPU
 * t * sockets * cores_per_socket + s * cores_per_socket + c, and NUMA node n is
 * socket n.
 */
#ifndef BD_BIND_H
#define BD_BIND_H

#include <stdbool.h>

#include "buf.h"
#include "cpuset.h"
#include "err.h"

#define BD_MAX_GPUS 64
#define BD_MAX_NICS 32
#define BD_MAX_THREADS 8        /* hardware threads of one core (POWER: SMT8) */

enum bd_nic_kind { NIC_ETHERNET, NIC_INFINIBAND, NIC_ROCE, NIC_EFA };

struct bd_nic {
        char name[64];
        enum bd_nic_kind kind;
        int numa;       /* -1: unknown */
};

/* A physical core of a measured layout: its NUMA node and its online CPUs,
 * ascending (cpus[0] is the one bound when hyperthreads are off). */
struct bd_core {
        int node;
        int ncpus;
        int cpus[BD_MAX_THREADS];
};

struct bd_topo {
        int sockets;
        int cores_per_socket;
        int threads_per_core;
        bool hyperthreads;      /* use siblings when threads_per_core > 1 */
        int ngpus;
        int gpu_numa[BD_MAX_GPUS];      /* -1: unknown */
        int nnics;
        struct bd_nic nics[BD_MAX_NICS];
        /* The measured layout, not owned: every physical core, grouped by NUMA
         * node in ascending node order, in order within its node.  NULL: the
         * declared topology (sockets, cores_per_socket, threads_per_core). */
        const struct bd_core *cores;
        int ncores;
};

struct bd_rank_bind {
        int numa;       /* NUMA node number */
        struct bd_cpuset cpus;
        int nic;        /* index into topo->nics, -1: none */
};

int bd_nic_kind_parse(const char *s, enum bd_nic_kind *ret);
const char *bd_nic_kind_name(enum bd_nic_kind k);
bool bd_nic_kind_rdma(enum bd_nic_kind k);

/* A plan for `ranks` local ranks; *ret_plan (ranks entries) belongs to the caller. */
int bind_plan(const struct bd_topo *t, int ranks, struct bd_rank_bind **ret_plan, struct bd_err *err);
/* "--physcpubind=0-5,48-53 --membind=0" */
void bind_format_numactl(const struct bd_rank_bind *b, struct bd_buf *out);

#endif

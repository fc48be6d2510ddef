/* inventory.h: what a node has and how it is wired, read from sysfs and
 * procfs under a root directory ("/" on a live machine, a recorded tree in
 * tests: every path read is ROOT/sys/..., ROOT/proc/..., ROOT/etc/...).
 *
 * Reading never fails as a whole: an unreadable or odd file skips that item
 * and adds one warning to inv->warnings; the rest of the inventory stands.
 */
#ifndef BD_INVENTORY_H
#define BD_INVENTORY_H

#include <stdbool.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "bind.h"
#include "cpuset.h"

#define INV_MAX_NODES 64
#define INV_MAX_PATH 16

struct inv_pci {
        char bdf[16];           /* 0000:06:00.0 */
        char host[32];          /* host bridge: "pci0000:00" */
        int depth;              /* bridges between the host bridge and the device */
        char path[INV_MAX_PATH][16];    /* those bridges, from the root port down */
        int numa;               /* -1: unknown */
        struct bd_cpuset local_cpus;
        unsigned vendor, device, class;
        char link_speed[32];
        int link_width;
        char max_link_speed[32];        /* what the link can train to: a link below it */
        int max_link_width;             /* was trained down (or, for the speed, is idle) */
};

struct inv_gpu {
        struct inv_pci pci;
        char name[96];
        char uuid[96];
        int minor;
        unsigned long long mem_total;   /* bytes, 0 when unknown (NVML only) */
        int nvml_index;                 /* -1: not seen by NVML */
        int nvlinks;                    /* active NVLinks (NVML only) */
        char nvlink_peer[18][32];       /* PCI address at the other end of each */
};

#define INV_MAX_MOUNTS 32

/* A local filesystem a dataset can be staged to. */
struct inv_mount {
        char mnt[256];
        char fs[32];
        char dev[128];
        bool has_space;
        unsigned long long size, avail;         /* bytes */
};

struct inv_nic {
        struct inv_pci pci;
        bool has_pci;
        char name[64];          /* netdev (ib0, ens5) or RDMA device (mlx5_0, rdmap16s27) */
        char netdev[64];        /* paired network interface of an RDMA device */
        char rdma[64];          /* paired RDMA device of a network interface */
        enum bd_nic_kind kind;
        char state[32];
        char rate[64];          /* speed ("100000 Mb/s") or IB rate */
        int mtu;
        char addr[64];          /* MAC or GUID */
        bool is_rdma;
};

struct inventory {
        char root[512];
        char hostname[256], os[256], kernel[128];
        double uptime;                  /* seconds; -1: unknown */
        char cpu_model[128];
        int sockets, cores_per_socket, threads_per_core, online_cpus;
        struct bd_cpuset online;
        int nnodes;
        const char *numa_source;        /* "libnuma" or "sysfs" */
        struct {
                int id;
                struct bd_cpuset cpus;
                long long mem_kb;               /* -1: unknown */
                int distance[INV_MAX_NODES];    /* -1: unknown */
        } nodes[INV_MAX_NODES];
        /* the physical cores, node by node, for bind_plan() (struct bd_topo) */
        struct bd_core *cores;
        int ncores;
        int ngpus;
        struct inv_gpu gpus[BD_MAX_GPUS];
        char gpu_reason[160];   /* why the GPU list is empty */
        char driver_version[64];
        int nnics;
        struct inv_nic nics[BD_MAX_NICS];
        int nmounts;
        struct inv_mount mounts[INV_MAX_MOUNTS];
        struct {
                char driver[64], cuda[32], nccl[32], mpi[64];   /* "" when not found */
                char runtimes[8][16];   /* container runtimes found: docker, podman, ch-run, ... */
                int nruntimes;
        } sw;
        char nvml_reason[160];  /* why NVML was not used, "" when it was */
        cJSON *warnings;        /* array of strings */
};

/* Reads everything under root. */
void inventory_scan(struct inventory *inv, const char *root);
void inventory_release(struct inventory *inv);
cJSON *inventory_json(const struct inventory *inv);
/* The inventory as text for people, with the topology matrix. */
void inventory_print(const struct inventory *inv, FILE *f);
/* {gpus, nics, gpu_gpu, gpu_nic, cpu_affinity, numa_affinity} */
cJSON *inventory_topology_json(const struct inventory *inv);
/* The binding plan of `ranks` local ranks (0: one per GPU, at least one);
 * NULL with err when the node cannot hold them. */
cJSON *inventory_binding_json(const struct inventory *inv, int ranks, struct bd_err *err);
/* nvidia-smi topo -m relation between two PCI devices: X, PIX, PXB, PHB, NODE, SYS */
const char *inventory_relation(const struct inv_pci *a, const struct inv_pci *b);
/* The measured topology, for bind_plan(). */
void inventory_topo(const struct inventory *inv, struct bd_topo *t);

/* helpers shared by the inventory files */
void inv_warn(struct inventory *inv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reads ROOT/path into buf (trailing newline removed); -errno on failure. */
int inv_read(const struct inventory *inv, const char *path, char *buf, size_t n);
char *inv_path(const struct inventory *inv, const char *path);
void inventory_scan_cpu(struct inventory *inv);
void inventory_scan_pci(struct inventory *inv);
void inventory_scan_software(struct inventory *inv);
/* NV# (active NVLinks between two GPUs, by NVML) or the PCI relation */
void inventory_gpu_relation(const struct inventory *inv, int a, int b, char *buf, size_t n);

#endif

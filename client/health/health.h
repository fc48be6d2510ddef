/* health.h: is each node what its system says it is?  Each node's inventory
 * (benchd's GET /v1/inventory) held against the resolved system
 * configuration: its GPUs (count, model, NUMA node), its NICs (present, kind,
 * link up, the netdev paired with an RDMA device, NUMA node), its CPUs and
 * NUMA nodes, and the PCIe link of every GPU and NIC against the width it
 * can train to; its signals: GPU ECC errors, retired pages and remapped
 * rows, throttling, temperature and power limit, NIC error counters per
 * day up.  Each finding has a level, its evidence and what to do;
 * a node's verdict is its worst finding's level.  Nothing is printed here.
 */
#ifndef BD_HEALTH_H
#define BD_HEALTH_H

#include <cjson/cJSON.h>

#include "buf.h"

enum health_level { HEALTH_OK, HEALTH_DEGRADED, HEALTH_FAILED };

struct health_finding {
        enum health_level level;
        char check[24];         /* gpu.count, nic.link, pcie.width, ... */
        char evidence[256];     /* what was found against what the system says */
        const char *action;     /* what to do (static): drain, reseat, reset, watch */
};

struct health_node {
        char *node;             /* as named */
        char *host;             /* its hostname, NULL when it did not answer */
        char *node_name;        /* the scheduler's name for it (benchd's node_name, else its hostname), NULL: none */
        enum health_level verdict;
        struct health_finding *findings;
        int nfindings;
        int checks;             /* how many checks ran (passed or not) */
        char *note;             /* what could not be checked and why (no GPU signals), NULL */
};

const char *health_level_name(enum health_level l);
/* Holds node's inventory (NULL: its benchd did not answer, error says why)
 * and its signals (benchd's /v1/signals; NULL: not served, error says why)
 * against the system sys and the thresholds of health.c. */
void health_check_node(const cJSON *sys, const char *node, const cJSON *inventory, const cJSON *signals,
                       const char *error, struct health_node *ret);
void health_node_release(struct health_node *n);
/* Adds a finding to n (its verdict the worst finding's); the evidence is
 * made one printable line. */
void health_add(struct health_node *n, enum health_level level, const char *check, const char *action,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The worst verdict of n nodes */
enum health_level health_worst(const struct health_node *nodes, int n);
/* A line per node (its verdict and findings below it), then the cluster's verdict */
void health_text(const char *system, const struct health_node *nodes, int n, struct bd_buf *out);
cJSON *health_json(const char *system, const struct health_node *nodes, int n);

#endif

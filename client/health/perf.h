/* perf.h: benchctl health's allreduce checks, judged: each node's
 * allreduce inside itself, and between nodes in pairs arranged in rounds
 * (every node in one pair a round, the round's pairs at once), so that one
 * slow node or link is named rather than averaged away.  A node is slow
 * when its own allreduce is, or when the allreduce with each of its (two or
 * more) partners is while theirs with others are not; a pair slow with
 * neither node to blame is the link between them.  The reference is the
 * system's expected figure (health.node_gbps, health.pair_gbps) or the
 * median of the nodes' or pairs'.  With them, the trainer check: a
 * suite's benchmark on each node alone.  Nothing is printed here. */
#ifndef BD_HEALTH_PERF_H
#define BD_HEALTH_PERF_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "health.h"

struct health_perf_node {
        char *name;             /* the node's name where it ran (Slurm's, or its host) */
        double alone;           /* bus bandwidth GB/s of its allreduce inside itself, NAN: none */
        bool alone_ran;         /* it ran (alone is NAN when it failed) */
        char why[160];          /* why it failed */
};

struct health_perf_pair {
        int a, b;               /* the nodes (indices) */
        int round;              /* 1-based */
        double bw;              /* GB/s, NAN: failed */
        char why[160];
        bool slow;              /* judged */
};

struct health_perf {
        int nnodes, npairs;
        struct health_perf_node *nodes;
        struct health_perf_pair *pairs;
        double bytes;                   /* the size reduced */
        double tolerance;
        double node_expect, pair_expect;        /* the system's, 0: none */
        double node_ref, pair_ref;      /* judged against: expected, else the median (NAN: no reference) */
        char *run_id;
};

/* The node groups (groups.h) of the checks for n nodes: a round of each
 * node alone (with alone: nodes of more than one rank), then pair_rounds
 * rounds of pairs by the circle method (at most every pair: n - 1 rounds,
 * n when n is odd, one node out each); "" when there is nothing to run. */
void health_schedule(int n, bool alone, int pair_rounds, struct bd_buf *out);
/* The node of that name (added when new); its index */
int health_perf_node(struct health_perf *p, const char *name);
void health_perf_add_pair(struct health_perf *p, int a, int b, int round, double bw, const char *why);
/* Judges p and adds the findings to rows[i], the row of node i */
void health_perf_judge(struct health_perf *p, struct health_node *const *rows);
void health_perf_text(const struct health_perf *p, struct bd_buf *out);
cJSON *health_perf_json(const struct health_perf *p);
void health_perf_release(struct health_perf *p);

/* The trainer check (--level full): one short throughput run of a suite's
 * benchmark on each node alone, each node's rate against the benchmark's
 * target for the system shared by its nodes (a node alone does no
 * reduction between nodes: a healthy one meets its share), else the nodes'
 * median; slow this fraction (tolerance) or more below it. */
struct health_tput_node {
        char *name;
        double rate;            /* items/s, NAN: failed */
        char why[160];
};

struct health_tput {
        char *benchmark, *workload, *unit;
        int nnodes;
        struct health_tput_node *nodes;
        double target;          /* a node's share of the system's target, NAN: none */
        char *target_src;       /* where the target came from, NULL: none */
        double tolerance;
        double ref;             /* judged against: the target, else the median (NAN: none) */
        char *device;           /* the trainer's device, NULL when unknown */
        char *run_id;
};

void health_tput_add(struct health_tput *t, const char *name, double rate, const char *why);
/* Judges t and adds a perf.trainer finding to the row of each node
 * (row_of(name) gives it) that is slow or failed */
void health_tput_judge(struct health_tput *t, struct health_node *const *rows);
void health_tput_text(const struct health_tput *t, struct bd_buf *out);
cJSON *health_tput_json(const struct health_tput *t);
void health_tput_release(struct health_tput *t);

#endif

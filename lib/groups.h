/* groups.h: a run's node groups (the system key "node_groups"): rounds of
 * groups of nodes, each group a trial of its own on those nodes, the groups
 * of a round at once.  Written "1+2,3+4;1+3,2+4": rounds separated by ';',
 * a round's groups by ',', a group's nodes by '+', each node its 1-based
 * place among the run's nodes (Slurm's allocation in order, or
 * mpirun.hosts).  "off" (or "") is none.  benchctl health's allreduce rounds
 * are such a run. */
#ifndef BD_GROUPS_H
#define BD_GROUPS_H

#include <stdbool.h>

#include "buf.h"
#include "err.h"

#define NODE_GROUPS_MAX 100000  /* nodes named in all groups together */

struct node_groups {
        int nrounds, ngroups, nnodes;   /* rounds, groups in all, nodes named in all groups */
        int *round_start;               /* [nrounds + 1]: each round's first group */
        int *group_start;               /* [ngroups + 1]: each group's first node in node[] */
        int *node;                      /* [nnodes]: 1-based node places */
        int largest;                    /* the highest place named */
};

/* Parses s; 0 (g empty for "off" or ""), or -EINVAL with err naming what
 * is wrong (a place that is not a number from 1, a node twice in a round, an
 * empty group or round).  nodes > 0: places above it are refused too. */
int node_groups_parse(const char *s, long nodes, struct node_groups *g, struct bd_err *err);
void node_groups_release(struct node_groups *g);
/* The groups of round r (0-based): [*first, *end) */
void node_groups_round(const struct node_groups *g, int r, int *first, int *end);
/* Group k's nodes: *n of them at the returned pointer */
const int *node_groups_members(const struct node_groups *g, int k, int *n);
/* Appends group k as "1+2" */
void node_groups_format_group(const struct node_groups *g, int k, struct bd_buf *out);

#endif

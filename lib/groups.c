/* groups.c: a run's node groups (groups.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "macro.h"
#include "strutil.h"

void node_groups_release(struct node_groups *g)
{
        free(g->round_start);
        free(g->group_start);
        free(g->node);
        *g = (struct node_groups){ 0 };
}

static int fail(struct node_groups *g, struct bd_err *err, int r)
{
        node_groups_release(g);
        return r;
}

int node_groups_parse(const char *s, long nodes, struct node_groups *g, struct bd_err *err)
{
        *g = (struct node_groups){ 0 };
        if (!s || !*s || streq(s, "off"))
                return 0;
        size_t len = strlen(s);
        /* at most one group or node per byte */
        g->round_start = xcalloc(len + 2, sizeof(int));
        g->group_start = xcalloc(len + 2, sizeof(int));
        g->node = xcalloc(len + 1, sizeof(int));
        const char *p = s;
        int round_first_node = 0;
        for (;;) {
                /* a node */
                if (!isdigit((unsigned char)*p))
                        return fail(g, err, bd_err_set(err, -EINVAL, "'%s': expected a node's place (1, 2, ...) at "
                                                       "'%.20s'", s, p));
                long v = 0;
                while (isdigit((unsigned char)*p) && v <= NODE_GROUPS_MAX)
                        v = v * 10 + (*p++ - '0');
                if (v < 1 || v > NODE_GROUPS_MAX || (nodes > 0 && v > nodes))
                        return fail(g, err, bd_err_set(err, -EINVAL, "'%s': node %ld: the run has %ld node%s", s, v,
                                                       nodes > 0 ? nodes : (long)NODE_GROUPS_MAX, nodes == 1 ? "" : "s"));
                for (int k = round_first_node; k < g->nnodes; k++)
                        if (g->node[k] == v)
                                return fail(g, err, bd_err_set(err, -EINVAL, "'%s': node %ld twice in round %d", s, v,
                                                               g->nrounds + 1));
                if (g->nnodes >= NODE_GROUPS_MAX)
                        return fail(g, err, bd_err_set(err, -EINVAL, "'%s': more than %d nodes in all", s,
                                                       NODE_GROUPS_MAX));
                g->node[g->nnodes++] = (int)v;
                if (v > g->largest)
                        g->largest = (int)v;
                if (*p == '+') {
                        p++;
                        continue;
                }
                /* the group ends */
                g->group_start[++g->ngroups] = g->nnodes;
                if (*p == ',') {
                        p++;
                        continue;
                }
                /* the round ends */
                g->round_start[++g->nrounds] = g->ngroups;
                round_first_node = g->nnodes;
                if (*p == ';') {
                        p++;
                        continue;
                }
                if (*p)
                        return fail(g, err, bd_err_set(err, -EINVAL, "'%s': unexpected '%c' (groups: 1+2,3+4;1+3,2+4)",
                                                       s, *p));
                return 0;
        }
}

void node_groups_round(const struct node_groups *g, int r, int *first, int *end)
{
        *first = g->round_start[r];
        *end = g->round_start[r + 1];
}

const int *node_groups_members(const struct node_groups *g, int k, int *n)
{
        *n = g->group_start[k + 1] - g->group_start[k];
        return g->node + g->group_start[k];
}

void node_groups_format_group(const struct node_groups *g, int k, struct bd_buf *out)
{
        int n;
        const int *m = node_groups_members(g, k, &n);
        for (int i = 0; i < n; i++)
                buf_printf(out, "%s%d", i ? "+" : "", m[i]);
}

/* test-health-perf: benchctl health's allreduce rounds (client/health/
 * perf.h): the circle method's rounds for 1 to 25 nodes (each node once a
 * round, no pair twice, every pair when all rounds are asked for), and the
 * judging: one slow node named by its pairs while its partners pass, a slow
 * link named on both ends, a node whose own allreduce is slow or failed,
 * the system's expectation against the median, no reference from one
 * figure. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "health.h"
#include "perf.h"
#include "tap.h"

static void check_schedule(int n, int rounds)
{
        struct bd_buf b = BD_BUF_INIT;
        struct node_groups g;
        struct bd_err err;
        health_schedule(n, true, rounds, &b);
        char what[128];
        snprintf(what, sizeof(what), "%d nodes, %d pair rounds: '%.60s' parses", n, rounds, b.s);
        if (!ok(node_groups_parse(b.s, n, &g, &err) == 0, what)) {
                printf("# %s\n", err.msg);
                buf_release(&b);
                return;
        }
        int want_rounds = n < 2 ? 0 : rounds < n - 1 + (n & 1) ? rounds : n - 1 + (n & 1);
        snprintf(what, sizeof(what), "  %d rounds: the nodes alone, then %d of pairs", 1 + want_rounds, want_rounds);
        is_int(g.nrounds, 1 + want_rounds, what);
        /* round 1: each node alone, in order */
        int first, end, bad = 0;
        node_groups_round(&g, 0, &first, &end);
        for (int k = first; k < end; k++) {
                int m;
                const int *p = node_groups_members(&g, k, &m);
                bad += m != 1 || p[0] != k + 1;
        }
        ok(end - first == n && !bad, "  the first round: every node alone");
        /* pairs: n/2 a round, none twice */
        char *seen = calloc((size_t)(n + 1) * (size_t)(n + 1), 1);
        int twice = 0, size = 0, pairs = 0;
        for (int r = 1; r < g.nrounds; r++) {
                node_groups_round(&g, r, &first, &end);
                size += end - first != n / 2;
                for (int k = first; k < end; k++) {
                        int m;
                        const int *p = node_groups_members(&g, k, &m);
                        if (m != 2) {
                                twice++;
                                continue;
                        }
                        twice += seen[p[0] * (n + 1) + p[1]]++ > 0;
                        seen[p[1] * (n + 1) + p[0]]++;
                        pairs++;
                }
        }
        ok(!size && !twice, "  each pair round has n/2 pairs, no pair twice");
        if (rounds >= n)
                is_int(pairs, n * (n - 1) / 2, "  all rounds: every pair");
        free(seen);
        node_groups_release(&g);
        buf_release(&b);
}

struct fixture {
        struct health_perf p;
        struct health_node rows[8];
        struct health_node *rowp[8];
};

static void fixture_init(struct fixture *f, int n)
{
        memset(f, 0, sizeof(*f));
        f->p.tolerance = 0.2;
        f->p.bytes = 1 << 20;
        for (int i = 0; i < n; i++) {
                char name[8];
                snprintf(name, sizeof(name), "n%d", i + 1);
                health_perf_node(&f->p, name);
                f->p.nodes[i].alone = 10;
                f->p.nodes[i].alone_ran = true;
                f->rows[i].node = strdup(name);
                f->rowp[i] = &f->rows[i];
        }
}

static void fixture_release(struct fixture *f)
{
        for (int i = 0; i < f->p.nnodes; i++)
                health_node_release(&f->rows[i]);
        health_perf_release(&f->p);
}

/* "check,check" of row i's findings */
static const char *checks(struct fixture *f, int i)
{
        static char s[256];
        s[0] = '\0';
        for (int k = 0; k < f->rows[i].nfindings; k++)
                snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%s", k ? "," : "", f->rows[i].findings[k].check);
        return s;
}

/* pairs of the 4-node schedule's first two rounds (1+4,2+3; 1+2,3+4),
 * node `slow` (1-based, 0: none) halving its pairs */
static void four_nodes(struct fixture *f, int slow)
{
        static const int pr[4][2] = { { 0, 3 }, { 1, 2 }, { 0, 1 }, { 2, 3 } };
        for (int q = 0; q < 4; q++) {
                bool s = pr[q][0] + 1 == slow || pr[q][1] + 1 == slow;
                health_perf_add_pair(&f->p, pr[q][0], pr[q][1], q / 2 + 1, s ? 4.0 : 8.0 + 0.1 * q, NULL);
        }
}

int main(void)
{
        for (int n = 1; n <= 25; n++)
                check_schedule(n, 3);
        check_schedule(4, 100);
        check_schedule(7, 100);
        check_schedule(24, 100);

        struct fixture f;
        fixture_init(&f, 4);
        four_nodes(&f, 3);
        health_perf_judge(&f.p, f.rowp);
        is_str(checks(&f, 2), "perf.pairs", "node 3 slow with both its partners: named");
        is_str(checks(&f, 0), "", "  node 1 (one slow pair, with node 3) passes");
        is_str(checks(&f, 1), "", "  node 2 passes");
        is_str(checks(&f, 3), "", "  node 4 (one slow pair, with node 3) passes");
        is_int(f.rows[2].verdict, HEALTH_DEGRADED, "  degraded");
        like(f.rows[2].findings[0].evidence, "slow with each of its 2 partners: n2 4 GB/s, n4 4 GB/s", "  with its partners");
        fixture_release(&f);

        /* a slow link: only the pair 1+2 (round 2) */
        fixture_init(&f, 4);
        health_perf_add_pair(&f.p, 0, 3, 1, 8, NULL);
        health_perf_add_pair(&f.p, 1, 2, 1, 8.2, NULL);
        health_perf_add_pair(&f.p, 0, 1, 2, 3, NULL);
        health_perf_add_pair(&f.p, 2, 3, 2, 8.1, NULL);
        health_perf_judge(&f.p, f.rowp);
        is_str(checks(&f, 0), "perf.link", "a slow pair whose nodes are fine with others: the link, on node 1");
        is_str(checks(&f, 1), "perf.link", "  and node 2");
        is_str(checks(&f, 2), "", "  not node 3");
        like(f.rows[0].findings[0].evidence, "allreduce with n2 3 GB/s, 63% below 8.05 GB/s (the pairs' median)",
             "  with the figures");
        fixture_release(&f);

        /* a node's own allreduce slow, another's failed */
        fixture_init(&f, 4);
        f.p.nodes[1].alone = 5;
        f.p.nodes[3].alone = NAN;
        strcpy(f.p.nodes[3].why, "exit status 1");
        four_nodes(&f, 0);
        health_perf_judge(&f.p, f.rowp);
        is_str(checks(&f, 1), "perf.node", "a node slow inside itself: named");
        like(f.rows[1].findings[0].evidence, "inside the node 5 GB/s, 50% below 10 GB/s (the nodes' median)",
             "  against the median");
        is_int(f.rows[3].verdict, HEALTH_FAILED, "a node whose own allreduce failed: failed");
        is_str(checks(&f, 0), "", "  the others pass");
        fixture_release(&f);

        /* the system's expectation: every pair below it, every node named */
        fixture_init(&f, 4);
        f.p.pair_expect = 20;
        four_nodes(&f, 0);
        health_perf_judge(&f.p, f.rowp);
        int named = 0;
        for (int i = 0; i < 4; i++)
                named += !strcmp(checks(&f, i), "perf.pairs");
        is_int(named, 4, "all pairs below the expected 20 GB/s: every node named");
        like(f.rows[0].findings[0].evidence, "against 20 GB/s (expected)", "  against the expectation");
        fixture_release(&f);

        /* two nodes, no expectation: one figure each, no reference */
        fixture_init(&f, 2);
        f.p.nodes[0].alone = 1;
        health_perf_add_pair(&f.p, 0, 1, 1, 0.5, NULL);
        health_perf_judge(&f.p, f.rowp);
        ok(!isfinite(f.p.pair_ref), "one pair, no expectation: no pair reference");
        is_str(checks(&f, 0), "perf.node", "  the nodes' own figures still judged against their median");
        struct bd_buf b = BD_BUF_INIT;
        health_perf_text(&f.p, &b);
        like(b.s, "between two: no expectation", "  the text says so");
        buf_release(&b);
        fixture_release(&f);

        /* the trainer check: against the nodes' median, a target, a failure */
        fixture_init(&f, 4);
        struct health_tput t = { .benchmark = strdup("ssd-b4"), .workload = strdup("ssd"),
                                 .unit = strdup("images/s"), .tolerance = 0.2, .target = NAN };
        static const double rates[4] = { 100, 96, 40, 104 };
        for (int i = 0; i < 4; i++)
                health_tput_add(&t, f.p.nodes[i].name, rates[i], NULL);
        health_tput_judge(&t, f.rowp);
        is_str(checks(&f, 2), "perf.trainer", "trainer: a node 60% below the nodes' median named");
        like(f.rows[2].findings[0].evidence, "ssd-b4 (ssd) 40 images/s, 59% below 98 images/s (the nodes' median)",
             "  with its rate, the median and how far below");
        ok(!strcmp(checks(&f, 0), "") && !strcmp(checks(&f, 1), "") && !strcmp(checks(&f, 3), ""), "  the others pass");
        health_tput_release(&t);
        fixture_release(&f);

        fixture_init(&f, 2);
        t = (struct health_tput){ .benchmark = strdup("b"), .workload = strdup("ssd"), .unit = strdup("images/s"),
                                  .tolerance = 0.2, .target = 50, .target_src = strdup("the target for X") };
        health_tput_add(&t, "n1", 45, NULL);
        health_tput_add(&t, "n2", NAN, "failed: exit code 1");
        health_tput_judge(&t, f.rowp);
        is_str(checks(&f, 0), "", "trainer: 10% under the target, within the tolerance: ok");
        is_int(f.rows[1].verdict, HEALTH_FAILED, "  a node whose run failed: failed");
        like(f.rows[1].findings[0].evidence, "failed: exit code 1", "  with the reason");
        b = (struct bd_buf)BD_BUF_INIT;
        health_tput_text(&t, &b);
        like(b.s, "reference 50 (the target for X)", "  the text names the reference");
        buf_release(&b);
        health_tput_release(&t);
        fixture_release(&f);

        fixture_init(&f, 1);
        t = (struct health_tput){ .benchmark = strdup("b"), .workload = strdup("ssd"), .unit = strdup("images/s"),
                                  .tolerance = 0.2, .target = NAN };
        health_tput_add(&t, "n1", 10, NULL);
        health_tput_judge(&t, f.rowp);
        ok(!isfinite(t.ref) && !strcmp(checks(&f, 0), ""), "trainer: one node, no target: no expectation, not judged");
        health_tput_release(&t);
        fixture_release(&f);
        return done_testing();
}

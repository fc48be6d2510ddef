/* perf.c: benchctl health's allreduce checks, judged (perf.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "perf.h"
#include "strutil.h"

static const char A_SLOW_NODE[] = "drain it; check its GPUs' and NICs' links, clocks and throttling (health's signals), "
                                  "then run it alone";
static const char A_SLOW_LINK[] = "watch: check the cables and switch ports between the two; run the pair again";
static const char A_SLOW_TRAINER[] = "drain it; check its GPUs (health's signals: clocks, throttling, links), its CPUs "
                                     "and its local storage; run the check again";
static const char A_FAILED_TRAINER[] = "drain it; the trainer did not complete there: read the trial's log";
static const char A_FAILED_RUN[] = "drain it; the allreduce did not complete there: read the trial's log";

void health_schedule(int n, bool alone, int pair_rounds, struct bd_buf *out)
{
        bool any = alone;
        for (int i = 1; i <= n && alone; i++)
                buf_printf(out, "%s%d", i > 1 ? "," : "", i);
        if (n < 2)
                return;
        /* the circle method: m places (a bye when n is odd), place 0 fixed,
         * the others turning; round r pairs place k with place m-1-k */
        int m = n + (n & 1), rounds = m - 1;
        if (pair_rounds < rounds)
                rounds = pair_rounds;
        int *ring = xcalloc((size_t)m, sizeof(int));
        for (int r = 0; r < rounds; r++) {
                ring[0] = 1;
                for (int k = 1; k < m; k++)
                        ring[k] = (k - 1 + r) % (m - 1) + 2;   /* 2..m, turned by r */
                if (any)
                        buf_putc(out, ';');
                any = true;
                bool first = true;
                for (int k = 0; k < m / 2; k++) {
                        int a = ring[k], b = ring[m - 1 - k];
                        if (a > n || b > n)
                                continue;       /* the bye */
                        buf_printf(out, "%s%d+%d", first ? "" : ",", a < b ? a : b, a < b ? b : a);
                        first = false;
                }
        }
        free(ring);
}

int health_perf_node(struct health_perf *p, const char *name)
{
        for (int i = 0; i < p->nnodes; i++)
                if (streq(p->nodes[i].name, name))
                        return i;
        p->nodes = xrealloc(p->nodes, (size_t)(p->nnodes + 1) * sizeof(*p->nodes));
        p->nodes[p->nnodes] = (struct health_perf_node){ .name = xstrdup(name), .alone = NAN };
        return p->nnodes++;
}

void health_perf_add_pair(struct health_perf *p, int a, int b, int round, double bw, const char *why)
{
        p->pairs = xrealloc(p->pairs, (size_t)(p->npairs + 1) * sizeof(*p->pairs));
        struct health_perf_pair *q = &p->pairs[p->npairs++];
        *q = (struct health_perf_pair){ .a = a, .b = b, .round = round, .bw = bw };
        str_copy(q->why, sizeof(q->why), why ? why : "");
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median_of(double *v, int n)
{
        if (n < 2)
                return NAN;     /* one figure is its own median: no reference */
        qsort(v, (size_t)n, sizeof(double), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* a bus bandwidth for people: GB/s, MB/s or kB/s, three digits */
static const char *rate(double gbps, char *buf, size_t n)
{
        if (!isfinite(gbps))
                snprintf(buf, n, "failed");
        else if (gbps >= 100)
                snprintf(buf, n, "%.0f GB/s", gbps);
        else if (gbps >= 1)
                snprintf(buf, n, "%.3g GB/s", gbps);
        else if (gbps >= 0.1)
                snprintf(buf, n, "%.0f MB/s", gbps * 1e3);
        else if (gbps >= 1e-3)
                snprintf(buf, n, "%.3g MB/s", gbps * 1e3);
        else if (gbps >= 1e-4)
                snprintf(buf, n, "%.0f kB/s", gbps * 1e6);
        else
                snprintf(buf, n, "%.3g kB/s", gbps * 1e6);
        return buf;
}

static bool below(double v, double ref, double tol)
{
        return isfinite(ref) && isfinite(v) && v < (1 - tol) * ref;
}

void health_perf_judge(struct health_perf *p, struct health_node *const *rows)
{
        double *v = xcalloc((size_t)(p->nnodes + p->npairs + 1), sizeof(double));
        int k = 0;
        for (int i = 0; i < p->nnodes; i++)
                if (isfinite(p->nodes[i].alone))
                        v[k++] = p->nodes[i].alone;
        p->node_ref = p->node_expect > 0 ? p->node_expect : median_of(v, k);
        k = 0;
        for (int i = 0; i < p->npairs; i++)
                if (isfinite(p->pairs[i].bw))
                        v[k++] = p->pairs[i].bw;
        p->pair_ref = p->pair_expect > 0 ? p->pair_expect : median_of(v, k);
        free(v);
        const char *node_src = p->node_expect > 0 ? "expected" : "the nodes' median";
        const char *pair_src = p->pair_expect > 0 ? "expected" : "the pairs' median";
        for (int i = 0; i < p->npairs; i++)
                p->pairs[i].slow = !isfinite(p->pairs[i].bw) || below(p->pairs[i].bw, p->pair_ref, p->tolerance);
        /* the nodes slow (or failed) with each of their partners */
        bool *blamed = xcalloc((size_t)p->nnodes + 1, sizeof(bool));
        for (int i = 0; i < p->nnodes; i++) {
                const struct health_perf_node *nd = &p->nodes[i];
                struct health_node *row = rows[i];
                if (nd->alone_ran) {
                        row->checks++;
                        if (!isfinite(nd->alone))
                                health_add(row, HEALTH_FAILED, "perf.node", A_FAILED_RUN,
                                           "the allreduce inside the node failed: %s", nd->why[0] ? nd->why : "no result");
                        else if (below(nd->alone, p->node_ref, p->tolerance)) {
                                char a[32], b[32];
                                health_add(row, HEALTH_DEGRADED, "perf.node", A_SLOW_NODE,
                                           "allreduce inside the node %s, %.0f%% below %s (%s)", rate(nd->alone, a, sizeof(a)),
                                           100 * (1 - nd->alone / p->node_ref), rate(p->node_ref, b, sizeof(b)), node_src);
                        }
                }
                int npairs = 0, slow = 0, failed = 0;
                char ref[32];
                rate(p->pair_ref, ref, sizeof(ref));
                _cleanup_buf_ struct bd_buf with = BD_BUF_INIT;
                for (int q = 0; q < p->npairs; q++) {
                        const struct health_perf_pair *pr = &p->pairs[q];
                        if (pr->a != i && pr->b != i)
                                continue;
                        npairs++;
                        slow += pr->slow;
                        failed += !isfinite(pr->bw);
                        char b[32];
                        if (pr->slow)
                                buf_printf(&with, "%s%s %s", with.len ? ", " : "", p->nodes[pr->a == i ? pr->b : pr->a].name,
                                           rate(pr->bw, b, sizeof(b)));
                }
                if (!npairs)
                        continue;
                row->checks++;
                blamed[i] = npairs >= 2 && slow == npairs;
                if (npairs >= 2 && failed == npairs)
                        health_add(row, HEALTH_FAILED, "perf.pairs", A_FAILED_RUN,
                                   "the allreduce failed with each of its %d partners", npairs);
                else if (blamed[i])
                        health_add(row, HEALTH_DEGRADED, "perf.pairs", A_SLOW_NODE,
                                   "slow with each of its %d partners: %s, against %s (%s)", npairs, with.s, ref, pair_src);
        }
        /* slow pairs that neither node explains: the link (or one of the two,
         * where a node has had one partner only) */
        for (int q = 0; q < p->npairs; q++) {
                const struct health_perf_pair *pr = &p->pairs[q];
                if (!pr->slow)
                        continue;
                for (int side = 0; side < 2; side++) {
                        int i = side ? pr->b : pr->a, o = side ? pr->a : pr->b;
                        struct health_node *row = rows[i];
                        if (blamed[i] || blamed[o])
                                continue;
                        char a[32], b[32];
                        if (isfinite(pr->bw))
                                health_add(row, HEALTH_DEGRADED, "perf.link", A_SLOW_LINK,
                                           "allreduce with %s %s, %.0f%% below %s (%s); its other pairs are not slow",
                                           p->nodes[o].name, rate(pr->bw, a, sizeof(a)), 100 * (1 - pr->bw / p->pair_ref),
                                           rate(p->pair_ref, b, sizeof(b)), pair_src);
                        else
                                health_add(row, HEALTH_DEGRADED, "perf.link", A_SLOW_LINK,
                                           "the allreduce with %s failed: %s", p->nodes[o].name,
                                           pr->why[0] ? pr->why : "no result");
                }
        }
        free(blamed);
}

static void fmt_bw(double v, struct bd_buf *out)
{
        char b[32];
        buf_puts(out, rate(v, b, sizeof(b)));
}

void health_perf_text(const struct health_perf *p, struct bd_buf *out)
{
        char a[32];
        buf_printf(out, "allreduce of %.0f bytes (run %s), bus bandwidth; inside a node: ", p->bytes,
                   p->run_id ? p->run_id : "-");
        if (isfinite(p->node_ref))
                buf_printf(out, "reference %s (%s)", rate(p->node_ref, a, sizeof(a)),
                           p->node_expect > 0 ? "expected" : "median");
        else
                buf_puts(out, "no expectation");
        buf_puts(out, "; between two: ");
        if (isfinite(p->pair_ref))
                buf_printf(out, "reference %s (%s)", rate(p->pair_ref, a, sizeof(a)),
                           p->pair_expect > 0 ? "expected" : "median");
        else
                buf_puts(out, p->npairs ? "no expectation" : "none run");
        buf_printf(out, "; slow: %.0f%% or more below\n", 100 * p->tolerance);
        size_t w = 4;
        for (int i = 0; i < p->nnodes; i++)
                w = strlen(p->nodes[i].name) > w ? strlen(p->nodes[i].name) : w;
        for (int i = 0; i < p->nnodes; i++) {
                buf_printf(out, "  %-*s  inside ", (int)w, p->nodes[i].name);
                if (p->nodes[i].alone_ran)
                        fmt_bw(p->nodes[i].alone, out);
                else
                        buf_puts(out, "-");
                bool first = true;
                for (int q = 0; q < p->npairs; q++) {
                        const struct health_perf_pair *pr = &p->pairs[q];
                        if (pr->a != i && pr->b != i)
                                continue;
                        buf_printf(out, "%s %s ", first ? "  with" : ",", p->nodes[pr->a == i ? pr->b : pr->a].name);
                        fmt_bw(pr->bw, out);
                        if (pr->slow && isfinite(pr->bw))
                                buf_puts(out, " slow");
                        first = false;
                }
                buf_putc(out, '\n');
        }
}

static void json_bw(cJSON *o, const char *key, double v)
{
        if (isfinite(v))
                cJSON_AddNumberToObject(o, key, v);
        else
                cJSON_AddNullToObject(o, key);
}

cJSON *health_perf_json(const struct health_perf *p)
{
        cJSON *o = cJSON_CreateObject();
        if (p->run_id)
                cJSON_AddStringToObject(o, "run", p->run_id);
        cJSON_AddNumberToObject(o, "bytes", p->bytes);
        cJSON_AddNumberToObject(o, "tolerance", p->tolerance);
        json_bw(o, "node_reference_gbps", p->node_ref);
        json_bw(o, "pair_reference_gbps", p->pair_ref);
        cJSON_AddStringToObject(o, "node_reference", p->node_expect > 0 ? "expected" : isfinite(p->node_ref) ? "median"
                                                                                                         : "none");
        cJSON_AddStringToObject(o, "pair_reference", p->pair_expect > 0 ? "expected" : isfinite(p->pair_ref) ? "median"
                                                                                                         : "none");
        cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
        for (int i = 0; i < p->nnodes; i++) {
                cJSON *n = cJSON_CreateObject();
                cJSON_AddStringToObject(n, "name", p->nodes[i].name);
                if (p->nodes[i].alone_ran)
                        json_bw(n, "inside_gbps", p->nodes[i].alone);
                cJSON_AddItemToArray(nodes, n);
        }
        cJSON *pairs = cJSON_AddArrayToObject(o, "pairs");
        for (int q = 0; q < p->npairs; q++) {
                const struct health_perf_pair *pr = &p->pairs[q];
                cJSON *j = cJSON_CreateObject();
                cJSON_AddNumberToObject(j, "round", pr->round);
                cJSON_AddStringToObject(j, "a", p->nodes[pr->a].name);
                cJSON_AddStringToObject(j, "b", p->nodes[pr->b].name);
                json_bw(j, "gbps", pr->bw);
                cJSON_AddBoolToObject(j, "slow", pr->slow);
                if (pr->why[0])
                        cJSON_AddStringToObject(j, "why", pr->why);
                cJSON_AddItemToArray(pairs, j);
        }
        return o;
}

void health_perf_release(struct health_perf *p)
{
        for (int i = 0; i < p->nnodes; i++)
                free(p->nodes[i].name);
        free(p->nodes);
        free(p->pairs);
        free(p->run_id);
        *p = (struct health_perf){ 0 };
}

/* ---- the trainer check ---- */

void health_tput_add(struct health_tput *t, const char *name, double rate, const char *why)
{
        t->nodes = xrealloc(t->nodes, (size_t)(t->nnodes + 1) * sizeof(*t->nodes));
        struct health_tput_node *nd = &t->nodes[t->nnodes++];
        *nd = (struct health_tput_node){ .name = xstrdup(name), .rate = rate };
        str_copy(nd->why, sizeof(nd->why), why ? why : "");
}

void health_tput_judge(struct health_tput *t, struct health_node *const *rows)
{
        double *v = xcalloc((size_t)t->nnodes + 1, sizeof(double));
        int k = 0;
        for (int i = 0; i < t->nnodes; i++)
                if (isfinite(t->nodes[i].rate))
                        v[k++] = t->nodes[i].rate;
        t->ref = isfinite(t->target) ? t->target : median_of(v, k);
        free(v);
        for (int i = 0; i < t->nnodes; i++) {
                const struct health_tput_node *nd = &t->nodes[i];
                struct health_node *row = rows[i];
                row->checks++;
                if (!isfinite(nd->rate))
                        health_add(row, HEALTH_FAILED, "perf.trainer", A_FAILED_TRAINER, "%s (%s) failed: %s",
                                   t->benchmark, t->workload, nd->why[0] ? nd->why : "no result");
                else if (below(nd->rate, t->ref, t->tolerance))
                        health_add(row, HEALTH_DEGRADED, "perf.trainer", A_SLOW_TRAINER,
                                   "%s (%s) %.4g %s, %.0f%% below %.4g %s (%s)", t->benchmark, t->workload, nd->rate,
                                   t->unit, 100 * (1 - nd->rate / t->ref), t->ref, t->unit,
                                   isfinite(t->target) ? t->target_src : "the nodes' median");
        }
}

void health_tput_text(const struct health_tput *t, struct bd_buf *out)
{
        buf_printf(out, "trainer: %s (%s, run %s%s%s) on each node alone, %s; ", t->benchmark, t->workload,
                   t->run_id ? t->run_id : "-", t->device ? ", " : "", t->device ? t->device : "", t->unit);
        if (isfinite(t->target))
                buf_printf(out, "reference %.4g (%s)", t->ref, t->target_src);
        else if (isfinite(t->ref))
                buf_printf(out, "reference %.4g (median; no target for the system)", t->ref);
        else
                buf_puts(out, "no expectation");
        buf_printf(out, "; slow: %.0f%% or more below\n", 100 * t->tolerance);
        size_t w = 4;
        for (int i = 0; i < t->nnodes; i++)
                w = strlen(t->nodes[i].name) > w ? strlen(t->nodes[i].name) : w;
        for (int i = 0; i < t->nnodes; i++) {
                if (isfinite(t->nodes[i].rate))
                        buf_printf(out, "  %-*s  %.4g%s\n", (int)w, t->nodes[i].name, t->nodes[i].rate,
                                   below(t->nodes[i].rate, t->ref, t->tolerance) ? " slow" : "");
                else
                        buf_printf(out, "  %-*s  failed\n", (int)w, t->nodes[i].name);
        }
}

cJSON *health_tput_json(const struct health_tput *t)
{
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "benchmark", t->benchmark);
        cJSON_AddStringToObject(o, "workload", t->workload);
        cJSON_AddStringToObject(o, "unit", t->unit);
        if (t->run_id)
                cJSON_AddStringToObject(o, "run", t->run_id);
        if (t->device)
                cJSON_AddStringToObject(o, "device", t->device);
        cJSON_AddNumberToObject(o, "tolerance", t->tolerance);
        json_bw(o, "reference", t->ref);
        cJSON_AddStringToObject(o, "reference_from", isfinite(t->target) ? t->target_src : isfinite(t->ref) ? "median"
                                                                                                            : "none");
        cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
        for (int i = 0; i < t->nnodes; i++) {
                cJSON *n = cJSON_CreateObject();
                cJSON_AddStringToObject(n, "name", t->nodes[i].name);
                json_bw(n, "rate", t->nodes[i].rate);
                cJSON_AddBoolToObject(n, "slow", !isfinite(t->nodes[i].rate) ||
                                                 below(t->nodes[i].rate, t->ref, t->tolerance));
                if (t->nodes[i].why[0])
                        cJSON_AddStringToObject(n, "why", t->nodes[i].why);
                cJSON_AddItemToArray(nodes, n);
        }
        return o;
}

void health_tput_release(struct health_tput *t)
{
        for (int i = 0; i < t->nnodes; i++)
                free(t->nodes[i].name);
        free(t->nodes);
        free(t->benchmark);
        free(t->workload);
        free(t->unit);
        free(t->target_src);
        free(t->device);
        free(t->run_id);
        *t = (struct health_tput){ 0 };
}

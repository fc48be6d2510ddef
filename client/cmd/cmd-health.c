/* cmd-health.c: benchctl health: every node of a system held against what
 * the system says it is and against the signals' thresholds
 * (health/health.h), a verdict per node and one for the cluster, the exit
 * status by the worst.  The nodes are asked through their benchd (GET
 * /v1/inventory and /v1/signals), or this node is read in-process
 * (--node-local, a Slurm prolog's seconds) or a recorded tree is
 * (--sysfs-root), with the code benchd uses (libbdnode). */
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "benchctl.h"
#include "benchd-defaults.h"
#include "fs.h"
#include "health.h"
#include "inventory.h"
#include "groups.h"
#include "json.h"
#include "launch.h"
#include "perf.h"
#include "results.h"
#include "run.h"
#include "nodes.h"
#include "nvml.h"
#include "pages.h"
#include "scheduler.h"
#include "signals.h"
#include "stage-remote.h"
#include "strutil.h"
#include "suite.h"
#include "workload.h"

#define OPT_NODES 380
#define OPT_PORT 381
#define OPT_TIMEOUT 382
#define OPT_SYSFS_ROOT 383
#define OPT_NODE_LOCAL 384
#define OPT_NVML 385
#define OPT_DRAIN 386
#define OPT_LEVEL 387
#define OPT_START_TIMEOUT 388
#define OPT_HTML 389
#define OPT_BASELINES 390
#define OPT_TOKEN_FILE 391
#define OPT_NO_REPORT 392

static const struct bd_option options[] = {
        { "system", 's', "SYSTEM", "the system the nodes should be" },
        { "nodes", OPT_NODES, "N1,N2", "these nodes' benchd (HOST[:PORT], comma-separated) instead of the system's" },
        { "node-local", OPT_NODE_LOCAL, NULL, "check this node in-process, without benchd (a Slurm prolog)" },
        { "sysfs-root", OPT_SYSFS_ROOT, "DIR", "check the recorded node under DIR (DIR/sys, DIR/proc) in-process" },
        { "nvml-library", OPT_NVML, "LIB", "with --node-local or --sysfs-root: the NVML library to load" },
        { "level", OPT_LEVEL, "LEVEL", "shape (inventories and signals), quick (and the allreduce inside each node "
          "and in health.pair_rounds rounds of pairs: the default), full (every pair, and a trainer's throughput "
          "on each node)" },
        { "baselines", OPT_BASELINES, "FILE", "with --level full: the suite baselines whose first trainer benchmark "
          "runs on each node (default: baselines/SYSTEM.json beside the system's file, else ssd's throughput "
          "against the nodes' median)" },
        { "start-timeout", OPT_START_TIMEOUT, "S", "the allreduce job not started after S seconds (nodes down or "
          "busy) is cancelled and said (default 300)" },
        { "drain", OPT_DRAIN, NULL, "ask Slurm to drain the failed nodes (without it: say which it would)" },
        { "token-file", OPT_TOKEN_FILE, "FILE", "benchd's token, to give each node its verdict (default: $BENCHD_TOKEN, "
          "the system's benchd.token_file)" },
        { "no-report", OPT_NO_REPORT, NULL, "do not give each node's benchd its verdict and figures (its metrics)" },
        { "json", 'j', NULL, "print JSON" },
        { "html", OPT_HTML, "FILE", "also write the verdict as a page: a row per node, the findings, the allreduce pairs" },
        { "port", OPT_PORT, "PORT", "benchd's port where a node gives none (default: the system's)" },
        { "timeout", OPT_TIMEOUT, "MS", "a node that has not answered after MS milliseconds is failed (default 3000)" },
        COMMON_SYSTEM_OPTIONS,
        { 0 }
};

/* this node (root "/") or a recorded one, read as benchd reads it */
static void check_in_process(const cJSON *sys, const char *root, const char *name, struct health_node *ret)
{
        struct inventory *inv = xcalloc(1, sizeof(*inv));
        struct signals *sig = xmalloc(sizeof(*sig));
        inventory_scan(inv, root);
        signals_read(inv, sig);
        cJSON *ij = inventory_json(inv), *sj = signals_json(inv, sig);
        health_check_node(sys, name, ij, sj, NULL, ret);
        cJSON_Delete(ij);
        cJSON_Delete(sj);
        inventory_release(inv);
        free(inv);
        free(sig);
}

/* every node through its benchd: the inventories at once, then the signals
 * of those that answered (a node that is down costs one timeout) */
static void check_remote(const cJSON *sys, char **names, int n, long port, long timeout, struct health_node *nodes)
{
        _cleanup_free_ struct node_call *calls = xcalloc((size_t)n, sizeof(*calls));
        _cleanup_free_ struct node_call *sig = xcalloc((size_t)n, sizeof(*sig));
        _cleanup_free_ char **up = xcalloc((size_t)n + 1, sizeof(*up));
        _cleanup_free_ int *where = xcalloc((size_t)n, sizeof(*where));
        nodes_init(calls, names, n, (int)port);
        nodes_request(calls, n, "GET", "/v1/inventory", NULL, NULL, timeout);
        int m = 0;
        for (int i = 0; i < n; i++)
                if (node_ok(&calls[i]))
                        up[m] = names[i], where[m++] = i;
        nodes_init(sig, up, m, (int)port);
        nodes_request(sig, m, "GET", "/v1/signals", NULL, NULL, timeout);
        for (int i = 0, k = 0; i < n; i++) {
                const cJSON *signals = NULL;
                char why[300];
                snprintf(why, sizeof(why), "%s", calls[i].error[0] ? calls[i].error : "no answer");
                if (k < m && where[k] == i) {
                        if (node_ok(&sig[k]))
                                signals = sig[k].json;
                        else
                                snprintf(why, sizeof(why), "GET /v1/signals: %s",
                                         sig[k].error[0] ? sig[k].error : "no answer");
                        k++;
                }
                health_check_node(sys, calls[i].node, node_ok(&calls[i]) ? calls[i].json : NULL, signals, why,
                                  &nodes[i]);
        }
        nodes_release(sig, m);
        nodes_release(calls, n);
}

/* The node names of a group's trial, from the first line of its log
 * ("benchd: run ..., nodes 1+2 (n1,n2), seed ..."): *n of them, NULL when
 * the log is not there or says none */
static char **trial_names(const struct bd_run *r, const struct bd_trial *t, int *n)
{
        bool copy;
        _cleanup_free_ char *path = trial_log_best(r, t, &copy);
        *n = 0;
        if (!path)
                return NULL;
        FILE *f = fopen(path, "r");
        char line[1024];
        bool got = f && fgets(line, sizeof(line), f);
        if (f)
                fclose(f);
        const char *p = got ? strstr(line, ", nodes ") : NULL;
        const char *open = p ? strchr(p, '(') : NULL, *close = open ? strchr(open, ')') : NULL;
        if (!close)
                return NULL;
        _cleanup_free_ char *list = xstrndup(open + 1, (size_t)(close - open - 1));
        char **v = NULL;
        for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                v = xrealloc(v, (size_t)(*n + 2) * sizeof(char *));
                v[(*n)++] = xstrdup(tok);
                v[*n] = NULL;
        }
        return v;
}

/* A run of workload with sets (node_groups among them) submitted as a run
 * would be, its lines on standard error (standard output is the verdict's),
 * waited for; loaded into *run and *trials with the store open in *st.
 * BD_EXIT_OK, or an exit status with nothing loaded (*id set when it was
 * submitted: BD_EXIT_RUN when it never started). */
static int run_groups(struct bd_ctx *ctx, const char *system, const char *workload, char **sets,
                      double start_timeout, char **id, struct bd_store *st, struct bd_run *run,
                      struct bd_trial **trials, char *why, size_t whysize)
{
        why[0] = '\0';
        fflush(stdout);
        int saved = dup(STDOUT_FILENO);
        if (saved >= 0)
                dup2(STDERR_FILENO, STDOUT_FILENO);
        *id = NULL;
        int ret = submit_run(ctx, system, workload, sets, 0, false, FOLLOW_NONE, id);
        if (*id && !(ret = open_store(st))) {
                ret = wait_for_run_within(st, *id, FOLLOW_QUIET, start_timeout);
                store_close(st);
        }
        fflush(stdout);
        if (saved >= 0) {
                dup2(saved, STDOUT_FILENO);
                close(saved);
        }
        if (!*id)
                return ret ? ret : BD_EXIT_FAIL;
        if (ret != BD_EXIT_OK && ret != BD_EXIT_RUN)
                return ret;
        if (open_store(st))
                return BD_EXIT_FAIL;
        if (load_run(st, *id, run, trials)) {
                store_close(st);
                return BD_EXIT_FAIL;
        }
        bool started = false;
        for (int i = 0; i < run->ntrials; i++)
                started |= (*trials)[i].start_time > 0;
        if (!started) {
                /* cancelled before its nodes came, or a pre-flight check
                 * failed (said): nothing ran */
                str_copy(why, whysize, run->reason ? run->reason : "");
                /* a pre-flight check's failure is the trials' reason (the
                 * job's may be Slurm's own) */
                for (int i = 0; i < run->ntrials; i++)
                        if ((*trials)[i].reason && strstr((*trials)[i].reason, " check failed on ")) {
                                str_copy(why, whysize, (*trials)[i].reason);
                                break;
                        }
                bd_trials_free(*trials, run->ntrials);
                bd_run_release(run);
                store_close(st);
                return BD_EXIT_RUN;
        }
        return BD_EXIT_OK;
}

/* Why a trial has no figure: "failed: exit code 1" */
static void outcome_why(const struct trial_value *v, char *buf, size_t size)
{
        snprintf(buf, size, "%s%s%s", tv_outcome_name(v->outcome), v->why[0] ? ": " : "", v->why);
}

/* sets, then more (NULL-terminated, taken) */
static char **sets_plus(char *const *sets, char **more)
{
        size_t k = 0, m = 0;
        while (sets && sets[k])
                k++;
        while (more && more[m])
                m++;
        char **all = xcalloc(k + m + 1, sizeof(char *));
        for (size_t i = 0; i < k; i++)
                all[i] = xstrdup(sets[i]);
        for (size_t i = 0; i < m; i++)
                all[k + i] = more[i];
        free(more);
        return all;
}

/* The allreduce checks: one run of the allreduce workload on the system's
 * nodes, a trial per group of health_schedule()'s rounds (node_groups);
 * each trial's bus bandwidth read back as the reports read it.  An exit
 * status. */
static int allreduce_checks(struct bd_ctx *ctx, const char *system, char **sets, const struct bd_system *sys, bool full,
                            double start_timeout, struct health_perf *p, char *preflight, size_t size)
{
        const cJSON *j = sys->json;
        long n = sys_int(j, "nodes"), bytes = sys_int(j, "health.allreduce_bytes");
        _cleanup_buf_ struct bd_buf g = BD_BUF_INIT;
        /* a node of one rank has nothing to reduce inside itself */
        bool alone = sys_int(j, "ranks_per_node") > 1;
        health_schedule((int)n, alone, full ? (int)n : (int)sys_int(j, "health.pair_rounds"), &g);
        preflight[0] = '\0';
        if (!g.len)
                return BD_EXIT_OK;      /* nothing to run: p->run_id stays NULL */
        char **more = xcalloc(5, sizeof(char *));
        more[0] = xasprintf("node_groups=%s", g.s);
        more[1] = xasprintf("allreduce.min_bytes=%ld", bytes);
        more[2] = xasprintf("allreduce.max_bytes=%ld", bytes);
        more[3] = xstrdup("clear_caches=false");
        char **all = sets_plus(sets, more);
        char *id;
        struct bd_store st;
        struct bd_run run;
        struct bd_trial *trials = NULL;
        int ret = run_groups(ctx, system, "allreduce", all, start_timeout, &id, &st, &run, &trials, preflight, size);
        strv_free(all);
        if (ret != BD_EXIT_OK) {
                free(id);
                return ret;
        }
        *p = (struct health_perf){ .bytes = (double)bytes, .tolerance = sys_num(j, "health.tolerance"),
                                   .node_expect = sys_num(j, "health.node_gbps"),
                                   .pair_expect = sys_num(j, "health.pair_gbps"), .run_id = id };
        struct node_groups groups;
        struct bd_err err;
        if (node_groups_parse(g.s, n, &groups, &err) < 0)
                abort(); /* health_schedule() wrote it */
        for (int r = 0; r < groups.nrounds; r++) {
                int first, end;
                node_groups_round(&groups, r, &first, &end);
                for (int q = first; q < end && q < run.ntrials; q++) {
                        int m, nn;
                        const int *places = node_groups_members(&groups, q, &m);
                        char **names = trial_names(&run, &trials[q], &nn);
                        int idx[2] = { 0 };
                        for (int i = 0; i < m && i < 2; i++) {
                                _cleanup_free_ char *fallback = xasprintf("node %d", places[i]);
                                idx[i] = health_perf_node(p, nn == m ? names[i] : fallback);
                        }
                        strv_free(names);
                        struct trial_value v;
                        trial_value_load(&st, &run, &trials[q], TV_BUSBW, &v);
                        double bw = v.outcome == TV_VALUE ? v.value : NAN;
                        char why[200];
                        outcome_why(&v, why, sizeof(why));
                        if (m == 1) {
                                struct health_perf_node *nd = &p->nodes[idx[0]];
                                nd->alone = bw;
                                nd->alone_ran = true;
                                str_copy(nd->why, sizeof(nd->why), isfinite(bw) ? "" : why);
                        } else if (m == 2)
                                /* the pairs' rounds from 1 */
                                health_perf_add_pair(p, idx[0], idx[1], alone ? r : r + 1, bw, isfinite(bw) ? NULL : why);
                        trial_value_release(&v);
                }
        }
        node_groups_release(&groups);
        bd_trials_free(trials, run.ntrials);
        bd_run_release(&run);
        store_close(&st);
        return BD_EXIT_OK;
}

/* The trainer check (--level full): benchmark b of the baselines, one
 * short throughput run of it on each node alone (node_groups 1,2,...,N: one
 * round, each node a trial), each node's rate against the benchmark's
 * target for the system shared by its nodes, else the nodes' median.  An
 * exit status. */
static int trainer_checks(struct bd_ctx *ctx, const char *system, char **sets, const struct bd_system *sys,
                          const struct baseline *b, double start_timeout, struct health_tput *t)
{
        long n = sys_int(sys->json, "nodes");
        _cleanup_buf_ struct bd_buf g = BD_BUF_INIT;
        for (long i = 1; i <= n; i++)
                buf_printf(&g, "%s%ld", i > 1 ? "," : "", i);
        /* a node's ranks with the benchmark's settings: the batch a rank
         * takes, as a suite runs it */
        long ranks = sys_int(sys->json, "ranks_per_node");
        {
                char **probe = sets_plus(sets, baseline_run_sets(b, 0));
                struct bd_system with = { 0 };
                if (ctx_load_system(ctx, system, probe, &with) == 0)
                        ranks = sys_int(with.json, "ranks_per_node");
                system_release(&with);
                strv_free(probe);
        }
        char **own = baseline_run_sets(b, ranks);
        size_t k = 0;
        while (own[k])
                k++;
        own = xrealloc(own, (k + 4) * sizeof(char *));
        /* every node of the system, each alone, whatever the benchmark sets */
        own[k++] = xasprintf("nodes=%ld", n);
        own[k++] = xasprintf("node_groups=%s", g.s);
        own[k++] = xstrdup("clear_caches=false");
        own[k] = NULL;
        char **all = sets_plus(sets, own);
        char *id;
        struct bd_store st;
        struct bd_run run;
        struct bd_trial *trials = NULL;
        char preflight[256];
        int ret = run_groups(ctx, system, b->workload, all, start_timeout, &id, &st, &run, &trials, preflight,
                             sizeof(preflight));
        strv_free(all);
        if (ret != BD_EXIT_OK) {
                free(id);
                return ret;
        }
        *t = (struct health_tput){ .benchmark = xstrdup(b->name), .workload = xstrdup(b->workload),
                                   .unit = xstrdup(baseline_unit(b)), .tolerance = sys_num(sys->json, "health.tolerance"),
                                   .target = NAN, .run_id = id };
        for (int q = 0; q < run.ntrials && q < n; q++) {
                int nn;
                char **names = trial_names(&run, &trials[q], &nn);
                _cleanup_free_ char *fallback = xasprintf("node %d", q + 1);
                struct trial_value v;
                trial_value_load(&st, &run, &trials[q], TV_THROUGHPUT, &v);
                if (v.device && !t->device)
                        t->device = xstrdup(v.device);
                char why[200];
                outcome_why(&v, why, sizeof(why));
                health_tput_add(t, nn == 1 ? names[0] : fallback, v.outcome == TV_VALUE ? v.value : NAN,
                                v.outcome == TV_VALUE ? NULL : why);
                strv_free(names);
                trial_value_release(&v);
        }
        const char *key = NULL;
        double target = baseline_target(b, sys->name, t->device, &key);
        if (isfinite(target) && target > 0) {
                t->target = target / (double)n;
                /* the key is the system's name, or a device's ("AMD EPYC", "H200") */
                t->target_src = n > 1 ? xasprintf("the target for %s shared by %s's %ld nodes", key, sys->name, n)
                                      : xasprintf("the target for %s", key);
        }
        bd_trials_free(trials, run.ntrials);
        bd_run_release(&run);
        store_close(&st);
        return BD_EXIT_OK;
}

/* The row of the node that ran as name: the one whose benchd gave that
 * node name (its node_name, else its host name), that host name, or is at
 * that host, else a new row */
static int row_of(struct health_node **nodes, int *n, const char *name, const char *note)
{
        char host[256];
        for (int i = 0; i < *n; i++)
                if ((*nodes)[i].node_name && streq((*nodes)[i].node_name, name))
                        return i;
        for (int i = 0; i < *n; i++)
                if ((*nodes)[i].host && streq((*nodes)[i].host, name))
                        return i;
        for (int i = 0; i < *n; i++)
                if (node_host((*nodes)[i].node, host, sizeof(host)) && streq(host, name))
                        return i;
        *nodes = xrealloc(*nodes, (size_t)(*n + 1) * sizeof(**nodes));
        (*nodes)[*n] = (struct health_node){ .node = xstrdup(name), .note = xstrdup(note) };
        return (*n)++;
}

/* The nodes Slurm holds down, failed or not responding, each a failed row
 * (the allreduce job waited for them) */
static void slurm_down_rows(const char *launcher, struct health_node **nodes, int *n)
{
        struct slurm_down *down;
        int k;
        struct bd_err err;
        if (!streq(launcher, "slurm") || slurm_down_nodes(NULL, &down, &k, &err) < 0)
                return;
        for (int i = 0; i < k; i++) {
                /* the controller's reasons are an administrator's words: no escape sequences */
                char why[sizeof(down[i].reason)];
                (void) str_sanitize(why, sizeof(why), down[i].reason, "?");
                int at = row_of(nodes, n, down[i].name, "no benchd checked: Slurm's word only");
                struct health_node *row = &(*nodes)[at];
                row->checks++;
                health_add(row, HEALTH_FAILED, "slurm.state", "resume it in Slurm once it is fixed (scontrol update "
                           "NodeName=... State=RESUME)", "Slurm holds it down%s%s%s: the allreduce checks could not "
                           "run on it", why[0] ? " (" : "", why, why[0] ? ")" : "");
        }
        free(down);
}

/* A run's pre-flight check that failed on a node ("image check failed on
 * n3: cannot start a container of image ...", "node check failed on n3: no
 * /data/coco (dataset)"): that node's failed row */
static void preflight_row(const char *why, struct health_node **nodes, int *n)
{
        static const struct {
                const char *kind, *check, *action;
        } kinds[] = {
                { "image", "sw.image", "drain it; put the system's image where it names it (container.image) and check "
                                       "the runtime there" },
                { "node", "node.preflight", "drain it; give the node what the run needs (its GPUs, the dataset, the "
                                            "weights), or correct the system file" },
                { "program", "sw.program", "drain it; install the program the workload runs" },
                { "driver", "sw.image", "drain it; make the GPU driver reachable to the container runtime (Charliecloud: "
                                        "ch-fromhost --nvidia, a directory image)" },
        };
        for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
                _cleanup_free_ char *on = xasprintf("%s check failed on ", kinds[k].kind);
                if (!str_has_prefix(why, on))
                        continue;
                const char *node = why + strlen(on), *colon = strchr(node, ':');
                if (!colon || colon == node)
                        return;
                _cleanup_free_ char *name = xstrndup(node, (size_t)(colon - node));
                char clean[256];
                str_sanitize(clean, sizeof(clean), colon + 1 + (colon[1] == ' '), "?");
                int at = row_of(nodes, n, name, "no benchd checked: the run's pre-flight only");
                (*nodes)[at].checks++;
                health_add(&(*nodes)[at], HEALTH_FAILED, kinds[k].check, kinds[k].action, "the run's %s check: %s",
                           kinds[k].kind, clean);
                return;
        }
}

/* What --drain does for one failed node */
struct drain {
        char slurm[256];        /* the Slurm node, "" when not found */
        char reason[200];
        char error[256];        /* why it was not drained, "" when it was (or would be) */
        bool done;
};

/* The reason a failed node is drained with: its first failed finding */
static void drain_reason(const struct health_node *h, char *buf, size_t size)
{
        for (int k = 0; k < h->nfindings; k++)
                if (h->findings[k].level == HEALTH_FAILED) {
                        _cleanup_free_ char *r = xasprintf("benchd health: %s: %s", h->findings[k].check,
                                                           h->findings[k].evidence);
                        str_copy(buf, size, r);
                        return;
                }
        snprintf(buf, size, "benchd health: failed");
}

/* The Slurm node a checked node is: in a prolog Slurm's own name for this
 * one ($SLURMD_NODENAME); else the node name its benchd gave (node_name),
 * its host name, or the host of its address, whichever Slurm knows */
static void drain_one(const struct health_node *h, bool local, struct drain *d)
{
        struct bd_err err = { 0 };
        char host[256];
        const char *env = local ? getenv("SLURMD_NODENAME") : NULL;
        drain_reason(h, d->reason, sizeof(d->reason));
        int r = -ENOENT;
        if (env && *env)
                r = slurm_node_of_host(env, d->slurm, sizeof(d->slurm), &err);
        if (r < 0 && h->node_name && (!h->host || !streq(h->node_name, h->host)))
                r = slurm_node_of_host(h->node_name, d->slurm, sizeof(d->slurm), &err);
        if (r < 0 && h->host)
                r = slurm_node_of_host(h->host, d->slurm, sizeof(d->slurm), &err);
        if (r < 0 && !local && node_host(h->node, host, sizeof(host)) && (!h->host || !streq(host, h->host))) {
                struct bd_err e2;
                if (slurm_node_of_host(host, d->slurm, sizeof(d->slurm), &e2) == 0)
                        r = 0;
                else if (r == -ENOENT)
                        err = e2;
        }
        if (r < 0) {
                d->slurm[0] = '\0';
                str_copy(d->error, sizeof(d->error), err.msg);
                return;
        }
        if (slurm_drain(d->slurm, d->reason, &err) < 0)
                str_copy(d->error, sizeof(d->error), err.msg);
        else
                d->done = true;
}

/* Row i's verdict and figures as its benchd takes them (POST
 * /v1/health/report: daemon/health-report.h) */
static char *report_body(const char *system, const struct health_node *h, int i, const struct health_perf *pf,
                         const int *perf_at, const struct health_tput *tp, const int *tput_at)
{
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "system", system);
        cJSON_AddStringToObject(o, "verdict", health_level_name(h->verdict));
        cJSON_AddNumberToObject(o, "checks", h->checks);
        cJSON *fs = cJSON_AddArrayToObject(o, "findings");
        for (int k = 0; k < h->nfindings && k < 256; k++) {
                cJSON *f = cJSON_CreateObject();
                cJSON_AddStringToObject(f, "level", health_level_name(h->findings[k].level));
                cJSON_AddStringToObject(f, "check", h->findings[k].check);
                cJSON_AddItemToArray(fs, f);
        }
        for (int k = 0; perf_at && k < pf->nnodes; k++) {
                if (perf_at[k] != i)
                        continue;
                cJSON *a = cJSON_AddObjectToObject(o, "allreduce");
                if (pf->nodes[k].alone_ran)
                        cJSON_AddItemToObject(a, "inside_gbps", isfinite(pf->nodes[k].alone)
                                                                        ? cJSON_CreateNumber(pf->nodes[k].alone)
                                                                        : cJSON_CreateNull());
                cJSON *ps = cJSON_AddArrayToObject(a, "pairs");
                /* benchd takes 256 partners a node: every pair of 257 nodes */
                for (int q = 0, m = 0; q < pf->npairs && m < 256; q++) {
                        const struct health_perf_pair *pr = &pf->pairs[q];
                        if (pr->a != k && pr->b != k)
                                continue;
                        m++;
                        cJSON *p = cJSON_CreateObject();
                        cJSON_AddStringToObject(p, "with", pf->nodes[pr->a == k ? pr->b : pr->a].name);
                        cJSON_AddItemToObject(p, "gbps", isfinite(pr->bw) ? cJSON_CreateNumber(pr->bw) : cJSON_CreateNull());
                        cJSON_AddItemToArray(ps, p);
                }
        }
        for (int k = 0; tput_at && k < tp->nnodes; k++)
                if (tput_at[k] == i) {
                        cJSON *t = cJSON_AddObjectToObject(o, "trainer");
                        cJSON_AddStringToObject(t, "benchmark", tp->benchmark);
                        cJSON_AddStringToObject(t, "unit", tp->unit);
                        cJSON_AddItemToObject(t, "rate", isfinite(tp->nodes[k].rate)
                                                                 ? cJSON_CreateNumber(tp->nodes[k].rate)
                                                                 : cJSON_CreateNull());
                }
        char *text = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        return text;
}

/* Each node whose benchd answered is given its verdict and figures, which
 * it serves as metrics (Prometheus keeps the history); a node that does
 * not take it is said on standard error, the verdict stands */
static void report_to_nodes(const char *system, const struct health_node *nodes, int n, const struct health_perf *pf,
                            const int *perf_at, const struct health_tput *tp, const int *tput_at, const char *token,
                            long port, long timeout)
{
        int refused = 0;
        for (int i = 0; i < n; i++) {
                if (!nodes[i].host)
                        continue;       /* no benchd answered for it */
                _cleanup_free_ char *body = report_body(system, &nodes[i], i, pf, perf_at, tp, tput_at);
                struct node_call call;
                char *names[] = { nodes[i].node, NULL };
                nodes_init(&call, names, 1, (int)port);
                nodes_request(&call, 1, "POST", "/v1/health/report", body, token, timeout);
                if (!node_ok(&call) && refused++ < 3)
                        bd_warning("health: %s did not take its verdict: %s", nodes[i].node,
                                   call.error[0] ? call.error : "no answer");
                nodes_release(&call, 1);
        }
        if (refused > 3)
                bd_warning("health: %d nodes did not take their verdict", refused);
}

int cmd_health(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        const char *system = NULL, *list = NULL, *root = NULL, *nvml = NULL, *html = NULL, *baselines = NULL, *arg;
        const char *token_file = NULL;
        bool report = true;
        bool json = false, local = false, drain = false;
        const char *level = "quick";
        long port = 0, timeout = 3000, start_timeout = 300;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 's': system = arg; break;
                case 'j': json = true; break;
                case OPT_HTML: html = arg; break;
                case OPT_BASELINES: baselines = arg; break;
                case OPT_TOKEN_FILE: token_file = arg; break;
                case OPT_NO_REPORT: report = false; break;
                case OPT_NODES: list = arg; break;
                case OPT_NODE_LOCAL: local = true; break;
                case OPT_SYSFS_ROOT: root = arg; break;
                case OPT_NVML: nvml = arg; break;
                case OPT_DRAIN: drain = true; break;
                case OPT_LEVEL: level = arg; break;
                case OPT_START_TIMEOUT: opts_number(&o, "start-timeout", arg, 1, 86400 * 7, &start_timeout); break;
                case OPT_PORT: opts_number(&o, "port", arg, 1, 65535, &port); break;
                case OPT_TIMEOUT: opts_number(&o, "timeout", arg, 1, 600000, &timeout); break;
                }
        }
        int next = opts_finish(&o, 0, 0, NULL);
        if (next < 0)
                return opts_exit(next);
        if (!system)
                return usage_error(cmd, "missing --system SYSTEM: what the nodes should be");
        if ((local || root) && list)
                return usage_error(cmd, "--nodes asks benchd on each node; --%s reads one node here", local ? "node-local" : "sysfs-root");
        if (local && root)
                return usage_error(cmd, "--node-local reads this node, --sysfs-root a recorded one: give one");
        if (!streq(level, "shape") && !streq(level, "quick") && !streq(level, "full"))
                return usage_error(cmd, "--level %s: shape, quick or full", level);
        if (baselines && !streq(level, "full"))
                return usage_error(cmd, "--baselines goes with --level full (a trainer's throughput on each node)");
        if (drain && root)
                return usage_error(cmd, "--drain drains Slurm nodes; --sysfs-root reads a recorded one");
        if (nvml && !local && !root)
                return usage_error(cmd, "--nvml-library goes with --node-local or --sysfs-root (benchd loads NVML on the nodes)");
        struct stat st;
        if (html) {
                _cleanup_free_ char *copy = xstrdup(html);
                const char *dir = dirname(copy);
                if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                        bd_error("health: --html %s: no directory %s", html, dir);
                        return BD_EXIT_USAGE;
                }
        }
        if (root && (stat(root, &st) < 0 || !S_ISDIR(st.st_mode))) {
                bd_error("health: --sysfs-root %s: not a directory", root);
                return BD_EXIT_USAGE;
        }
        struct bd_system sys;
        int ret = ctx_load_system(ctx, system, o.sets, &sys);
        if (ret)
                return ret;
        struct bd_err err;
        int n = 0;
        _cleanup_free_ struct health_node *nodes = NULL;
        char *shape_note = NULL;
        /* the allreduce runs on the system's own nodes, as a run would */
        const char *launcher = sys_str(sys.json, "launcher");
        bool perf = !streq(level, "shape") && !list && !local && !root &&
                    (streq(launcher, "slurm") || streq(launcher, "mpirun") || sys_int(sys.json, "nodes") == 1);
        if (local || root) {
                n = 1;
                nodes = xcalloc(1, sizeof(*nodes));
                nvml_set_library(nvml);
                _cleanup_free_ char *abs = root ? fs_path_clean(root) : NULL;
                check_in_process(sys.json, root ? abs : "/", root ? root : "localhost", &nodes[0]);
        } else {
                char **names = NULL;
                size_t k = 0;
                int r = list ? nodes_add_list(&names, &k, list, "--nodes", &err) : nodes_of_system(sys.json, &names, &err);
                if (r < 0 && !list && perf) {
                        /* no benchd to ask: the allreduce checks alone */
                        _cleanup_free_ char *why = xasprintf("inventories and signals not checked: %s", err.msg);
                        shape_note = xstrdup(why);
                        names = xcalloc(1, sizeof(char *));
                        r = 0;
                }
                if (r < 0) {
                        if (list)
                                bd_error("health: %s", err.msg);
                        else
                                bd_error("health: system '%s': %s", system, err.msg);
                        strv_free(names);
                        system_release(&sys);
                        return list ? BD_EXIT_USAGE : BD_EXIT_CONFIG;
                }
                if (!port)
                        port = sys_int(sys.json, "benchd.port");
                if (nodes_check(names, (int)port, list ? NULL : system, &err) < 0) {
                        bd_error("health: %s", err.msg);
                        strv_free(names);
                        system_release(&sys);
                        return list ? BD_EXIT_USAGE : BD_EXIT_CONFIG;
                }
                while (names[n])
                        n++;
                nodes = xcalloc((size_t)n + 1, sizeof(*nodes));
                if (n)
                        check_remote(sys.json, names, n, port, timeout, nodes);
                strv_free(names);
        }
        /* --level full: the trainer benchmark, read before anything runs */
        struct baselines bl = { 0 };
        struct baseline dflt = { 0 };
        const struct baseline *bench = NULL;
        char *tput_note = NULL;
        if (perf && streq(level, "full")) {
                _cleanup_free_ char *beside = NULL;
                if (!baselines && sys.path) {
                        _cleanup_free_ char *copy = xstrdup(sys.path);
                        beside = xasprintf("%s/baselines/%s.json", dirname(copy), sys.name);
                        if (access(beside, R_OK) == 0)
                                baselines = beside;
                }
                if (baselines) {
                        if (baselines_load(baselines, &bl, &err) < 0) {
                                bd_error("health: %s", err.msg);
                                for (int i = 0; i < n; i++)
                                        health_node_release(&nodes[i]);
                                free(shape_note);
                                system_release(&sys);
                                return BD_EXIT_CONFIG;
                        }
                        for (size_t i = 0; i < bl.n && !bench; i++) {
                                const struct workload *w = workload_find(bl.b[i].workload);
                                if (w && workload_has_key(w, "benchmark_steps"))
                                        bench = &bl.b[i];
                        }
                        if (!bench)
                                tput_note = xasprintf("the trainer check did not run: no trainer benchmark in %s",
                                                      baselines);
                        baselines = NULL;       /* beside is gone below */
                } else {
                        /* no baselines: SSD's throughput with the system's settings, against the nodes' median */
                        dflt = (struct baseline){ .name = xstrdup("ssd"), .workload = xstrdup("ssd"),
                                                  .set = cJSON_CreateObject(), .targets = cJSON_CreateObject(),
                                                  .benchmark_steps = BASELINE_BENCHMARK_STEPS,
                                                  .warmup_steps = BASELINE_WARMUP_STEPS };
                        bench = &dflt;
                }
        }
        /* the allreduce checks, held against each node's row */
        struct health_perf pf = { 0 };
        bool have_perf = false, perf_failed = false;
        if (perf) {
                char why[256];
                int r = allreduce_checks(ctx, system, o.sets, &sys, streq(level, "full"), (double)start_timeout, &pf,
                                         why, sizeof(why));
                if (r == BD_EXIT_OK && !pf.run_id) {
                        /* nothing to run: said with the shape's note */
                        char *note = xasprintf("%s%sno allreduce checks: %s", shape_note ? shape_note : "",
                                               shape_note ? "; " : "",
                                               sys_int(sys.json, "nodes") == 1 ? "one node of one rank"
                                               : "nodes of one rank and no rounds of pairs (health.pair_rounds 0)");
                        free(shape_note);
                        shape_note = note;
                } else if (r != BD_EXIT_OK && !pf.run_id) {
                        perf_failed = true;     /* submit said why, on standard error */
                        slurm_down_rows(launcher, &nodes, &n);
                        preflight_row(why, &nodes, &n);
                } else
                        have_perf = true;
        }
        _cleanup_free_ int *perf_at = NULL, *tput_at = NULL;     /* the row of each node of pf, tp */
        if (have_perf) {
                _cleanup_free_ struct health_node **rows = xcalloc((size_t)pf.nnodes + 1, sizeof(*rows));
                perf_at = xcalloc((size_t)pf.nnodes + 1, sizeof(int));
                for (int i = 0; i < pf.nnodes; i++)
                        perf_at[i] = row_of(&nodes, &n, pf.nodes[i].name, "no benchd checked: only the allreduce ran here");
                for (int i = 0; i < pf.nnodes; i++)
                        rows[i] = &nodes[perf_at[i]];
                health_perf_judge(&pf, rows);
        }
        /* the trainer on each node alone (--level full) */
        struct health_tput tp = { 0 };
        bool have_tput = false, tput_failed = false;
        if (bench && perf_failed)
                tput_note = xstrdup("the trainer check did not run: the allreduce checks did not");
        if (bench && !perf_failed) {
                if (trainer_checks(ctx, system, o.sets, &sys, bench, (double)start_timeout, &tp) == BD_EXIT_OK)
                        have_tput = true;
                else {
                        tput_failed = true;     /* submit said why, on standard error */
                        tput_note = xstrdup("the trainer check did not run: it could not be submitted, or did not "
                                            "start (said on standard error)");
                }
        }
        if (have_tput) {
                _cleanup_free_ struct health_node **rows = xcalloc((size_t)tp.nnodes + 1, sizeof(*rows));
                tput_at = xcalloc((size_t)tp.nnodes + 1, sizeof(int));
                for (int i = 0; i < tp.nnodes; i++)
                        tput_at[i] = row_of(&nodes, &n, tp.nodes[i].name, "no benchd checked: only the checks' runs ran here");
                for (int i = 0; i < tp.nnodes; i++)
                        rows[i] = &nodes[tput_at[i]];
                health_tput_judge(&tp, rows);
        }
        /* the failed nodes: drained with --drain, else named */
        _cleanup_free_ struct drain *drains = xcalloc((size_t)n + 1, sizeof(*drains));
        int ndrain = 0, drain_failed = 0;
        for (int i = 0; i < n; i++) {
                if (nodes[i].verdict != HEALTH_FAILED)
                        continue;
                ndrain++;
                if (drain) {
                        drain_one(&nodes[i], local, &drains[i]);
                        drain_failed += !drains[i].done;
                } else
                        drain_reason(&nodes[i], drains[i].reason, sizeof(drains[i].reason));
        }
        /* each node's benchd keeps its verdict (its metrics) */
        if (report && !local && !root && n) {
                bool any = false;
                for (int i = 0; i < n; i++)
                        any |= nodes[i].host != NULL;
                _cleanup_free_ char *token = NULL, *sys_token = NULL;
                const char *env = getenv("BENCHD_TOKEN");
                if (!token_file && !(env && *env))
                        sys_token = xstrdup(sys_str(sys.json, "benchd.token_file"));
                if (!any)
                        ;
                else if (stage_remote_token(token_file ? token_file : sys_token, &token, &err) < 0)
                        bd_warning("health: the nodes not given their verdicts: %s", err.msg);
                else
                        report_to_nodes(sys.name, nodes, n, &pf, perf_at, &tp, tput_at, token, port, timeout);
        }
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        if (json) {
                cJSON *j = health_json(sys.name, nodes, n);
                cJSON *arr = cJSON_GetObjectItem(j, "nodes"), *e;
                int i = 0;
                cJSON_ArrayForEach(e, arr) {
                        if (nodes[i].verdict == HEALTH_FAILED) {
                                cJSON *d = cJSON_AddObjectToObject(e, "drain");
                                cJSON_AddStringToObject(d, "reason", drains[i].reason);
                                cJSON_AddBoolToObject(d, "drained", drains[i].done);
                                if (drains[i].slurm[0])
                                        cJSON_AddStringToObject(d, "slurm_node", drains[i].slurm);
                                if (drains[i].error[0])
                                        cJSON_AddStringToObject(d, "error", drains[i].error);
                        }
                        i++;
                }
                if (have_perf)
                        cJSON_AddItemToObject(j, "allreduce", health_perf_json(&pf));
                else if (perf_failed)
                        cJSON_AddStringToObject(j, "allreduce", "not run: it could not be submitted, or did not start");
                if (have_tput)
                        cJSON_AddItemToObject(j, "trainer", health_tput_json(&tp));
                else if (tput_note)
                        cJSON_AddStringToObject(j, "trainer", tput_note);
                if (shape_note)
                        cJSON_AddStringToObject(j, "note", shape_note);
                char *text = cJSON_Print(j);
                buf_printf(&out, "%s\n", text);
                free(text);
                cJSON_Delete(j);
        } else {
                health_text(sys.name, nodes, n, &out);
                if (shape_note)
                        buf_printf(&out, "note: %s\n", shape_note);
                if (have_perf)
                        health_perf_text(&pf, &out);
                if (perf_failed)
                        buf_puts(&out, "allreduce checks: not run (see above)\n");
                if (have_tput)
                        health_tput_text(&tp, &out);
                else if (tput_note)
                        buf_printf(&out, "note: %s\n", tput_note);
                for (int i = 0; i < n; i++) {
                        const struct drain *d = &drains[i];
                        if (nodes[i].verdict != HEALTH_FAILED)
                                continue;
                        if (d->done)
                                buf_printf(&out, "drained %s (Slurm node %s): %s\n", nodes[i].node, d->slurm, d->reason);
                        else if (!drain)
                                buf_printf(&out, "would drain %s: %s\n", nodes[i].node, d->reason);
                }
                if (ndrain && !drain)
                        buf_printf(&out, "(--drain asks Slurm to drain %s)\n", ndrain == 1 ? "it" : "them");
        }
        int page_failed = 0;
        if (html) {
                char **cells = xcalloc((size_t)n + 1, sizeof(char *));
                for (int i = 0; i < n; i++) {
                        const struct drain *d = &drains[i];
                        if (nodes[i].verdict != HEALTH_FAILED)
                                cells[i] = xstrdup("");
                        else if (d->done)
                                cells[i] = xasprintf("drained (Slurm node %s)", d->slurm);
                        else if (d->error[0])
                                cells[i] = xasprintf("not drained: %s", d->error);
                        else
                                cells[i] = xstrdup("would drain (--drain)");
                }
                _cleanup_buf_ struct bd_buf page = BD_BUF_INIT;
                _cleanup_buf_ struct bd_buf note = BD_BUF_INIT;
                if (shape_note)
                        buf_printf(&note, "%s. ", shape_note);
                if (perf_failed)
                        buf_puts(&note, "The allreduce checks did not run: the job could not be submitted, or did not "
                                        "start. ");
                if (!have_tput && tput_note)
                        buf_printf(&note, "%s.", tput_note);
                health_html(sys.name, nodes, n, (const char *const *)cells, have_perf ? &pf : NULL,
                            have_tput ? &tp : NULL, note.len ? note.s : NULL, &page);
                page_failed = write_page(html, &page) < 0;
                strv_free(cells);
        }
        fwrite(out.s, 1, out.len, stdout);
        for (int i = 0; i < n; i++)
                if (drains[i].error[0])
                        bd_error("health: cannot drain %s: %s", nodes[i].node, drains[i].error);
        enum health_level worst = health_worst(nodes, n);
        for (int i = 0; i < n; i++)
                health_node_release(&nodes[i]);
        health_perf_release(&pf);
        health_tput_release(&tp);
        free(tput_note);
        if (bl.n)
                baselines_release(&bl);
        if (dflt.name) {
                free(dflt.name);
                free(dflt.workload);
                cJSON_Delete(dflt.set);
                cJSON_Delete(dflt.targets);
        }
        free(shape_note);
        system_release(&sys);
        if (drain_failed || ((perf_failed || tput_failed || page_failed) && worst == HEALTH_OK))
                return BD_EXIT_FAIL;
        return worst == HEALTH_FAILED ? BD_EXIT_UNHEALTHY : worst == HEALTH_DEGRADED ? BD_EXIT_DEGRADED : BD_EXIT_OK;
}

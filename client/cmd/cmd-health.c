/* cmd-health.c: benchctl health: every node of a system held against what
 * the system says it is and against the signals' thresholds
 * (health/health.h), a verdict per node and one for the cluster, the exit
 * status by the worst.  The nodes are asked through their benchd (GET
 * /v1/inventory and /v1/signals), or this node is read in-process
 * (--node-local, a Slurm prolog's seconds) or a recorded tree is
 * (--sysfs-root), with the code benchd uses (libbdnode). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "benchctl.h"
#include "benchd-defaults.h"
#include "fs.h"
#include "health.h"
#include "inventory.h"
#include "json.h"
#include "nodes.h"
#include "nvml.h"
#include "scheduler.h"
#include "signals.h"
#include "strutil.h"

#define OPT_NODES 380
#define OPT_PORT 381
#define OPT_TIMEOUT 382
#define OPT_SYSFS_ROOT 383
#define OPT_NODE_LOCAL 384
#define OPT_NVML 385
#define OPT_DRAIN 386

static const struct bd_option options[] = {
        { "system", 's', "SYSTEM", "the system the nodes should be" },
        { "nodes", OPT_NODES, "N1,N2", "these nodes' benchd (HOST[:PORT], comma-separated) instead of the system's" },
        { "node-local", OPT_NODE_LOCAL, NULL, "check this node in-process, without benchd (a Slurm prolog)" },
        { "sysfs-root", OPT_SYSFS_ROOT, "DIR", "check the recorded node under DIR (DIR/sys, DIR/proc) in-process" },
        { "nvml-library", OPT_NVML, "LIB", "with --node-local or --sysfs-root: the NVML library to load" },
        { "drain", OPT_DRAIN, NULL, "ask Slurm to drain the failed nodes (without it: say which it would)" },
        { "json", 'j', NULL, "print JSON" },
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
 * one ($SLURMD_NODENAME); else the host name its benchd gave, or the host
 * of its address, whichever Slurm knows */
static void drain_one(const struct health_node *h, bool local, bool really, struct drain *d)
{
        struct bd_err err = { 0 };
        char host[256];
        const char *env = local ? getenv("SLURMD_NODENAME") : NULL;
        drain_reason(h, d->reason, sizeof(d->reason));
        int r = -ENOENT;
        if (env && *env)
                r = slurm_node_of_host(env, d->slurm, sizeof(d->slurm), &err);
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
        if (really && slurm_drain(d->slurm, d->reason, &err) < 0)
                str_copy(d->error, sizeof(d->error), err.msg);
        else
                d->done = really;
}

int cmd_health(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        const char *system = NULL, *list = NULL, *root = NULL, *nvml = NULL, *arg;
        bool json = false, local = false, drain = false;
        long port = 0, timeout = 3000;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 's': system = arg; break;
                case 'j': json = true; break;
                case OPT_NODES: list = arg; break;
                case OPT_NODE_LOCAL: local = true; break;
                case OPT_SYSFS_ROOT: root = arg; break;
                case OPT_NVML: nvml = arg; break;
                case OPT_DRAIN: drain = true; break;
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
        if (drain && root)
                return usage_error(cmd, "--drain drains Slurm nodes; --sysfs-root reads a recorded one");
        if (nvml && !local && !root)
                return usage_error(cmd, "--nvml-library goes with --node-local or --sysfs-root (benchd loads NVML on the nodes)");
        struct stat st;
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
                nodes = xcalloc((size_t)n, sizeof(*nodes));
                check_remote(sys.json, names, n, port, timeout, nodes);
                strv_free(names);
        }
        /* the failed nodes: drained with --drain, else named */
        _cleanup_free_ struct drain *drains = xcalloc((size_t)n, sizeof(*drains));
        int ndrain = 0, drain_failed = 0;
        for (int i = 0; i < n; i++) {
                if (nodes[i].verdict != HEALTH_FAILED)
                        continue;
                ndrain++;
                if (drain) {
                        drain_one(&nodes[i], local, true, &drains[i]);
                        drain_failed += !drains[i].done;
                } else
                        drain_reason(&nodes[i], drains[i].reason, sizeof(drains[i].reason));
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
                char *text = cJSON_Print(j);
                buf_printf(&out, "%s\n", text);
                free(text);
                cJSON_Delete(j);
        } else {
                health_text(sys.name, nodes, n, &out);
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
        fwrite(out.s, 1, out.len, stdout);
        for (int i = 0; i < n; i++)
                if (drains[i].error[0])
                        bd_error("health: cannot drain %s: %s", nodes[i].node, drains[i].error);
        enum health_level worst = health_worst(nodes, n);
        for (int i = 0; i < n; i++)
                health_node_release(&nodes[i]);
        system_release(&sys);
        if (drain_failed)
                return BD_EXIT_FAIL;
        return worst == HEALTH_FAILED ? BD_EXIT_UNHEALTHY : worst == HEALTH_DEGRADED ? BD_EXIT_DEGRADED : BD_EXIT_OK;
}

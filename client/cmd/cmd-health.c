/* cmd-health.c: benchctl health: every node of a system held against what
 * the system says it is (health/health.h), a verdict per node and one for
 * the cluster, the exit status by the worst. */
#include "config.h"

#include <string.h>

#include "benchctl.h"
#include "benchd-defaults.h"
#include "health.h"
#include "json.h"
#include "nodes.h"

#define OPT_NODES 380
#define OPT_PORT 381
#define OPT_TIMEOUT 382

static const struct bd_option options[] = {
        { "system", 's', "SYSTEM", "the system the nodes should be" },
        { "nodes", OPT_NODES, "N1,N2", "these nodes' benchd (HOST[:PORT], comma-separated) instead of the system's" },
        { "json", 'j', NULL, "print JSON" },
        { "port", OPT_PORT, "PORT", "benchd's port where a node gives none (default: the system's)" },
        { "timeout", OPT_TIMEOUT, "MS", "a node that has not answered after MS milliseconds is failed (default 3000)" },
        COMMON_SYSTEM_OPTIONS,
        { 0 }
};

int cmd_health(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        const char *system = NULL, *list = NULL, *arg;
        bool json = false;
        long port = 0, timeout = 3000;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 's': system = arg; break;
                case 'j': json = true; break;
                case OPT_NODES: list = arg; break;
                case OPT_PORT: opts_number(&o, "port", arg, 1, 65535, &port); break;
                case OPT_TIMEOUT: opts_number(&o, "timeout", arg, 1, 600000, &timeout); break;
                }
        }
        int next = opts_finish(&o, 0, 0, NULL);
        if (next < 0)
                return opts_exit(next);
        if (!system)
                return usage_error(cmd, "missing --system SYSTEM: what the nodes should be");
        struct bd_system sys;
        int ret = ctx_load_system(ctx, system, o.sets, &sys);
        if (ret)
                return ret;
        struct bd_err err;
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
        int n = 0;
        while (names[n])
                n++;
        _cleanup_free_ struct node_call *calls = xcalloc((size_t)n, sizeof(*calls));
        _cleanup_free_ struct health_node *nodes = xcalloc((size_t)n, sizeof(*nodes));
        nodes_init(calls, names, n, (int)port);
        strv_free(names);
        nodes_request(calls, n, "GET", "/v1/inventory", NULL, NULL, timeout);
        for (int i = 0; i < n; i++)
                health_check_node(sys.json, calls[i].node, node_ok(&calls[i]) ? calls[i].json : NULL,
                                  calls[i].error[0] ? calls[i].error : "no answer", &nodes[i]);
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        if (json) {
                cJSON *j = health_json(sys.name, nodes, n);
                char *text = cJSON_Print(j);
                buf_printf(&out, "%s\n", text);
                free(text);
                cJSON_Delete(j);
        } else
                health_text(sys.name, nodes, n, &out);
        fwrite(out.s, 1, out.len, stdout);
        enum health_level worst = health_worst(nodes, n);
        for (int i = 0; i < n; i++)
                health_node_release(&nodes[i]);
        nodes_release(calls, n);
        system_release(&sys);
        return worst == HEALTH_FAILED ? BD_EXIT_UNHEALTHY : worst == HEALTH_DEGRADED ? BD_EXIT_DEGRADED : BD_EXIT_OK;
}

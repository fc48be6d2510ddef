/* cmd-nodes.c: benchctl nodes: what the benchd of each node reports, in one
 * table (or JSON), with the GPU/NIC topology matrix on request. */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "benchctl.h"
#include "nodes.h"
#include "strutil.h"

#define OPT_TOPO 370
#define OPT_PORT 371
#define OPT_TIMEOUT 372

static const struct bd_option options[] = {
        { "system", 's', "SYSTEM", "the nodes of SYSTEM (its benchd.hosts, else mpirun.hosts)" },
        { "topo", OPT_TOPO, NULL, "also print each node's GPU/NIC topology matrix" },
        { "json", 'j', NULL, "print JSON" },
        { "port", OPT_PORT, "PORT", "benchd's port where a node gives none (default: the system's, 9410)" },
        { "timeout", OPT_TIMEOUT, "MS", "give up on a node after MS milliseconds (default 3000)" },
        COMMON_SYSTEM_OPTIONS,
        { 0 }
};

static const cJSON *get(const cJSON *o, const char *dotted)
{
        return sys_get(o, dotted);
}

static void summary_gpus(const cJSON *inv, char *buf, size_t n)
{
        const cJSON *g = get(inv, "gpus");
        int count = cJSON_GetArraySize(g);
        const cJSON *first = cJSON_GetArrayItem(g, 0);
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, "name"));
        if (!count)
                snprintf(buf, n, "none");
        else
                snprintf(buf, n, "%d x %s", count, name ? name : "?");
}

static void summary_nics(const cJSON *inv, char *buf, size_t n)
{
        const cJSON *e;
        size_t len = 0;
        buf[0] = '\0';
        cJSON_ArrayForEach(e, get(inv, "nics")) {
                const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
                const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "kind"));
                if (len < n)
                        len += (size_t)snprintf(buf + len, n - len, "%s%s(%s)", len ? " " : "", name ? name : "?",
                                                kind ? kind : "?");
        }
        if (!buf[0])
                snprintf(buf, n, "none");
}

static void uptime(double s, char *buf, size_t n)
{
        long t = (long)s;
        if (t >= 86400)
                snprintf(buf, n, "%ldd %02ld:%02ld", t / 86400, t % 86400 / 3600, t % 3600 / 60);
        else
                snprintf(buf, n, "%02ld:%02ld:%02ld", t / 3600, t % 3600 / 60, t % 60);
}

static void print_table(const struct node_call *calls, int n)
{
        int w = 4;
        for (int i = 0; i < n; i++)
                if ((int)strlen(calls[i].node) > w)
                        w = (int)strlen(calls[i].node);
        printf("%-*s  %-6s %-16s %-12s %-4s %-28s %-28s %s\n", w, "NODE", "STATUS", "HOST", "CPUS", "NUMA", "GPUS",
               "NICS", "UPTIME");
        for (int i = 0; i < n; i++) {
                const struct node_call *c = &calls[i];
                if (!node_ok(c)) {
                        printf("%-*s  %-6s %s\n", w, c->node, "error", c->error);
                        continue;
                }
                const cJSON *inv = c->json;
                char cpus[48], gpus[96], nics[256], up[32];
                snprintf(cpus, sizeof(cpus), "%dx%dx%d", (int)sys_num(inv, "cpu.sockets", 0),
                         (int)sys_num(inv, "cpu.cores_per_socket", 0), (int)sys_num(inv, "cpu.threads_per_core", 0));
                summary_gpus(inv, gpus, sizeof(gpus));
                summary_nics(inv, nics, sizeof(nics));
                uptime(sys_num(inv, "host.uptime_seconds", 0), up, sizeof(up));
                printf("%-*s  %-6s %-16s %-12s %-4d %-28s %-28s %s\n", w, c->node, "ok",
                       sys_str(inv, "host.hostname", "?"), cpus, cJSON_GetArraySize(get(inv, "numa_nodes")), gpus, nics,
                       up);
        }
}

/* The matrix as nvidia-smi topo -m lays it out. */
static void print_topology(const struct node_call *c)
{
        const cJSON *t = c->json, *e;
        const cJSON *gpus = get(t, "gpus"), *nics = get(t, "nics");
        int ng = cJSON_GetArraySize(gpus);
        printf("\n%s (%s)\n", c->node, sys_str(t, "hostname", "?"));
        if (!ng) {
                printf("  no GPU\n");
                return;
        }
        printf("%-8s", "");
        cJSON_ArrayForEach(e, gpus)
                printf(" %-6s", e->valuestring);
        cJSON_ArrayForEach(e, nics)
                printf(" %-11.11s", e->valuestring);
        printf(" %-18s %s\n", "CPU Affinity", "NUMA Affinity");
        for (int i = 0; i < ng; i++) {
                const cJSON *row = cJSON_GetArrayItem(get(t, "gpu_gpu"), i);
                const cJSON *nrow = cJSON_GetArrayItem(get(t, "gpu_nic"), i);
                const cJSON *numa = cJSON_GetArrayItem(get(t, "numa_affinity"), i);
                printf("%-8s", cJSON_GetArrayItem(gpus, i)->valuestring);
                cJSON_ArrayForEach(e, row)
                        printf(" %-6s", e->valuestring);
                cJSON_ArrayForEach(e, nrow)
                        printf(" %-11s", e->valuestring);
                const char *aff = cJSON_GetStringValue(cJSON_GetArrayItem(get(t, "cpu_affinity"), i));
                printf(" %-18s ", aff ? aff : "");
                if (cJSON_IsNumber(numa))
                        printf("%d\n", numa->valueint);
                else
                        printf("N/A\n");
        }
        printf("\nLegend: %s\n", sys_str(t, "legend", ""));
}

int cmd_nodes(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        struct bd_opts o = { argc, argv, options, cmd, NULL };
        const char *system = NULL, *arg;
        bool json = false, topo = false;
        long port = 0, timeout = 3000;
        char **sets = NULL, **names = NULL;
        size_t nsets = 0;
        int c, next, n, ret = BD_EXIT_OK;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 'h': opts_release(&o); free(sets); return BD_EXIT_OK;
                case 's': system = arg; break;
                case 'j': json = true; break;
                case OPT_TOPO: topo = true; break;
                case OPT_SET: sets_add(&sets, &nsets, arg); break;
                case OPT_SYSTEMS_DIR: ctx->systems_dir = arg; break;
                case OPT_PORT:
                        if (opts_number(cmd, "port", arg, 1, 65535, &port) < 0)
                                return opts_release(&o), free(sets), BD_EXIT_USAGE;
                        break;
                case OPT_TIMEOUT:
                        if (opts_number(cmd, "timeout", arg, 1, 600000, &timeout) < 0)
                                return opts_release(&o), free(sets), BD_EXIT_USAGE;
                        break;
                }
        }
        next = opts_finish(&o, c, 0, INT_MAX, NULL);
        if (next < 0) {
                free(sets);
                return BD_EXIT_USAGE;
        }
        if (system && next < argc) {
                free(sets);
                return usage_error(cmd, "give either --system or node names, not both");
        }
        if (system) {
                struct bd_system sys;
                if (ctx_load_system(ctx, system, sets, &sys)) {
                        free(sets);
                        return BD_EXIT_FAIL;
                }
                struct bd_err err;
                int r = nodes_of_system(sys.json, &names, &err);
                if (r < 0)
                        bd_error("nodes: system '%s': %s", system, err.msg);
                if (!port)
                        port = sys_int(sys.json, "benchd.port", 9410);
                system_release(&sys);
                if (r < 0) {
                        free(sets);
                        return BD_EXIT_FAIL;
                }
        } else {
                size_t k = 0;
                struct bd_err err;
                for (int i = next; i < argc; i++)
                        if (nodes_add(&names, &k, argv[i], "nodes", &err) < 0) {
                                bd_error("%s", err.msg);
                                strv_free(names);
                                free(sets);
                                return BD_EXIT_USAGE;
                        }
                if (!names)
                        (void) nodes_add(&names, &k, "localhost", "nodes", &err);
        }
        free(sets);
        struct bd_err err;
        if (nodes_check(names, port ? (int)port : 9410, system, &err) < 0) {
                bd_error("nodes: %s", err.msg);
                strv_free(names);
                return system ? BD_EXIT_FAIL : BD_EXIT_USAGE;
        }
        for (n = 0; names[n]; n++)
                ;
        _cleanup_free_ struct node_call *calls = xcalloc((size_t)n, sizeof(*calls));
        nodes_init(calls, names, n, port ? (int)port : 9410);
        strv_free(names);
        nodes_request(calls, n, "GET", "/v1/inventory", NULL, NULL, timeout);
        if (json) {
                cJSON *arr = cJSON_CreateArray();
                for (int i = 0; i < n; i++) {
                        cJSON *e = cJSON_CreateObject();
                        cJSON_AddStringToObject(e, "node", calls[i].node);
                        cJSON_AddStringToObject(e, "url", calls[i].base);
                        cJSON_AddBoolToObject(e, "ok", node_ok(&calls[i]));
                        cJSON_AddItemToObject(e, "error", node_ok(&calls[i]) ? cJSON_CreateNull()
                                                                            : cJSON_CreateString(calls[i].error));
                        cJSON_AddItemToObject(e, "inventory", node_ok(&calls[i]) ? cJSON_Duplicate(calls[i].json, true)
                                                                                : cJSON_CreateNull());
                        cJSON_AddItemToArray(arr, e);
                }
                if (topo) {
                        nodes_request(calls, n, "GET", "/v1/topology", NULL, NULL, timeout);
                        for (int i = 0; i < n; i++)
                                cJSON_AddItemToObject(cJSON_GetArrayItem(arr, i), "topology",
                                                      node_ok(&calls[i]) ? cJSON_Duplicate(calls[i].json, true)
                                                                         : cJSON_CreateNull());
                }
                _cleanup_free_ char *text = cJSON_Print(arr);
                puts(text);
                cJSON_Delete(arr);
        } else {
                print_table(calls, n);
                if (topo) {
                        nodes_request(calls, n, "GET", "/v1/topology", NULL, NULL, timeout);
                        for (int i = 0; i < n; i++)
                                if (node_ok(&calls[i]))
                                        print_topology(&calls[i]);
                }
        }
        for (int i = 0; i < n; i++)
                if (!node_ok(&calls[i])) {
                        bd_error("node %s: %s", calls[i].node, calls[i].error);
                        ret = BD_EXIT_FAIL;
                }
        nodes_release(calls, n);
        return ret;
}

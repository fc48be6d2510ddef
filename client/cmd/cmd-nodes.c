/* cmd-nodes.c: benchctl nodes: what the benchd of each node reports, in one
 * table (or JSON), with the GPU/NIC topology matrix on request. */
#include "config.h"

#include <limits.h>
#include <locale.h>
#include <math.h>
#include <string.h>
#include <wchar.h>

#include "benchctl.h"
#include "benchd-defaults.h"
#include "json.h"
#include "nodes.h"
#include "strutil.h"

#define OPT_TOPO 370
#define OPT_PORT 371
#define OPT_TIMEOUT 372

static const struct bd_option options[] = {
        { "system", 's', "SYSTEM", "the nodes of SYSTEM (its benchd.hosts, else mpirun.hosts)" },
        { "topo", OPT_TOPO, NULL, "also print each node's GPU/NIC topology matrix" },
        { "json", 'j', NULL, "print JSON" },
        { "port", OPT_PORT, "PORT", "benchd's port where a node gives none (default: the system's, " BD_PORT_STR ")" },
        { "timeout", OPT_TIMEOUT, "MS", "give up on a node after MS milliseconds (default 3000)" },
        COMMON_SYSTEM_OPTIONS,
        { 0 }
};

static void summary_gpus(const cJSON *inv, char *buf, size_t n)
{
        const cJSON *g = json_get(inv, "gpus");
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
        cJSON_ArrayForEach(e, json_get(inv, "nics")) {
                const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
                const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "kind"));
                if (len < n)
                        len += (size_t)snprintf(buf + len, n - len, "%s%s(%s)", len ? " " : "", name ? name : "?",
                                                kind ? kind : "?");
        }
        if (!buf[0])
                snprintf(buf, n, "none");
}

/* What a node sent, fit for a terminal: control characters (escape
 * sequences) and bytes that are not UTF-8 become '?'. */
static const char *clean(const char *s, char *buf, size_t n)
{
        (void) str_sanitize(buf, n, s ? s : "?", "?");
        return buf;
}

/* The terminal columns of the clean UTF-8 character at s (its length in
 * *len): 2 for wide (East Asian) ones, 0 for combining ones, as wcwidth(3)
 * says in a UTF-8 locale; 1 where no such locale is to be had. */
static int char_columns(const char *s, int *len)
{
        static locale_t utf8;
        static bool tried;
        *len = (int)str_utf8_char_len(s) ?: 1;
        if (!tried) {
                tried = true;
                utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
        }
        if (!utf8 || *len == 1)
                return 1;
        locale_t old = uselocale(utf8);
        wchar_t wc;
        mbstate_t st = { 0 };
        int w = mbrtowc(&wc, s, (size_t)*len, &st) == (size_t)*len ? wcwidth(wc) : 1;
        uselocale(old);
        return w < 0 ? 1 : w;
}

/* Terminal columns of clean UTF-8. */
static int columns(const char *s)
{
        int w = 0, len;
        for (; *s; s += len)
                w += char_columns(s, &len);
        return w;
}

/* Cuts s to w columns, the last one an ellipsis when something was cut. */
static void fit(char *s, size_t size, int w)
{
        if (columns(s) <= w)
                return;
        char *p = s;
        int used = 0, len, cw;
        while (*p && used + (cw = char_columns(p, &len)) <= w - 1) {
                used += cw;
                p += len;
        }
        *p = '\0';
        if ((size_t)(p - s) + 4 <= size)
                strcat(p, "\xe2\x80\xa6");     /* U+2026 */
}

/* s in a column w wide */
static void cell(const char *s, int w)
{
        fputs(s, stdout);
        for (int k = columns(s); k < w; k++)
                putchar(' ');
}

static void uptime(double s, char *buf, size_t n)
{
        /* a node that sends a negative, huge or no number: not a time */
        if (!isfinite(s) || s < 0 || s > 1e10) {
                snprintf(buf, n, "?");
                return;
        }
        long t = (long)s;
        if (t >= 86400)
                snprintf(buf, n, "%ldd %02ld:%02ld", t / 86400, t % 86400 / 3600, t % 3600 / 60);
        else
                snprintf(buf, n, "%02ld:%02ld:%02ld", t / 3600, t % 3600 / 60, t % 60);
}

/* A count a node sent, "?" when it is not a plausible one. */
static void count(const cJSON *inv, const char *key, char *buf, size_t n)
{
        double v = json_num(inv, key, -1);
        if (v >= 0 && v <= 1e6)
                snprintf(buf, n, "%d", (int)v);
        else
                snprintf(buf, n, "?");
}

enum { C_NODE, C_STATUS, C_HOST, C_CPUS, C_NUMA, C_GPUS, C_NICS, C_UPTIME, N_COLUMNS };

/* Each column as wide as its widest value, from min_w to max_w (longer
 * values are cut with an ellipsis). */
static void print_table(const struct node_call *calls, int n)
{
        static const char *const head[N_COLUMNS] = { "NODE", "STATUS", "HOST", "CPUS", "NUMA", "GPUS", "NICS", "UPTIME" };
        static const int min_w[N_COLUMNS] = { 4, 6, 16, 12, 4, 28, 28, 6 };
        static const int max_w[N_COLUMNS] = { 48, 6, 40, 20, 4, 48, 64, 16 };
        static const char *const sep[N_COLUMNS] = { "  ", " ", " ", " ", " ", " ", " ", "" };
        _cleanup_free_ char (*t)[N_COLUMNS][256] = xcalloc((size_t)n, sizeof(*t));
        int w[N_COLUMNS];
        for (int k = 0; k < N_COLUMNS; k++)
                w[k] = min_w[k];
        for (int i = 0; i < n; i++) {
                const struct node_call *c = &calls[i];
                const cJSON *inv = c->json;
                char (*r)[256] = t[i];
                char tmp[256], a[16], b[16], d[16];
                /* three spare bytes for the ellipsis */
                clean(c->node, r[C_NODE], sizeof(r[C_NODE]) - 3);
                if (!node_ok(c)) {
                        snprintf(r[C_STATUS], sizeof(r[C_STATUS]), "error");
                        clean(c->error, r[C_HOST], sizeof(r[C_HOST]));
                } else {
                        snprintf(r[C_STATUS], sizeof(r[C_STATUS]), "ok");
                        clean(json_str(inv, "host.hostname", "?"), r[C_HOST], sizeof(r[C_HOST]) - 3);
                        count(inv, "cpu.sockets", a, sizeof(a));
                        count(inv, "cpu.cores_per_socket", b, sizeof(b));
                        count(inv, "cpu.threads_per_core", d, sizeof(d));
                        snprintf(r[C_CPUS], sizeof(r[C_CPUS]), "%sx%sx%s", a, b, d);
                        snprintf(r[C_NUMA], sizeof(r[C_NUMA]), "%d", cJSON_GetArraySize(json_get(inv, "numa_nodes")));
                        summary_gpus(inv, tmp, sizeof(tmp));
                        clean(tmp, r[C_GPUS], sizeof(r[C_GPUS]) - 3);
                        summary_nics(inv, tmp, sizeof(tmp));
                        clean(tmp, r[C_NICS], sizeof(r[C_NICS]) - 3);
                        uptime(json_num(inv, "host.uptime_seconds", -1), r[C_UPTIME], sizeof(r[C_UPTIME]));
                }
                for (int k = 0; k < N_COLUMNS; k++) {
                        if (!node_ok(c) && k > C_STATUS)
                                break;  /* the error takes the rest of the line */
                        fit(r[k], sizeof(r[k]), max_w[k]);
                        if (columns(r[k]) > w[k])
                                w[k] = columns(r[k]);
                }
        }
        for (int k = 0; k < N_COLUMNS; k++) {
                cell(head[k], k < N_COLUMNS - 1 ? w[k] : 0);
                fputs(sep[k], stdout);
        }
        putchar('\n');
        for (int i = 0; i < n; i++) {
                int last = node_ok(&calls[i]) ? N_COLUMNS - 1 : C_HOST;
                for (int k = 0; k <= last; k++) {
                        cell(t[i][k], k < last ? w[k] : 0);
                        fputs(k < last ? sep[k] : "", stdout);
                }
                putchar('\n');
        }
}

/* " VALUE" in a column w wide, cleaned and cut to fit */
static void topo_cell(const char *s, int w)
{
        char buf[256];
        clean(s, buf, sizeof(buf) - 3);
        fit(buf, sizeof(buf), w);
        putchar(' ');
        cell(buf, w);
}

/* The matrix as nvidia-smi topo -m lays it out. */
static void print_topology(const struct node_call *c)
{
        const cJSON *t = c->json, *e;
        const cJSON *gpus = json_get(t, "gpus"), *nics = json_get(t, "nics");
        int ng = cJSON_GetArraySize(gpus);
        char a[512], b[512];
        printf("\n%s (%s)\n", clean(c->node, a, sizeof(a)), clean(json_str(t, "hostname", "?"), b, sizeof(b)));
        if (!ng) {
                printf("  no GPU\n");
                return;
        }
        printf("%-8s", "");
        cJSON_ArrayForEach(e, gpus)
                topo_cell(e->valuestring, 6);
        cJSON_ArrayForEach(e, nics)
                topo_cell(e->valuestring, 11);
        printf(" %-18s %s\n", "CPU Affinity", "NUMA Affinity");
        for (int i = 0; i < ng; i++) {
                const cJSON *row = cJSON_GetArrayItem(json_get(t, "gpu_gpu"), i);
                const cJSON *nrow = cJSON_GetArrayItem(json_get(t, "gpu_nic"), i);
                const cJSON *numa = cJSON_GetArrayItem(json_get(t, "numa_affinity"), i);
                clean(cJSON_GetStringValue(cJSON_GetArrayItem(gpus, i)), a, sizeof(a) - 3);
                fit(a, sizeof(a), 8);
                cell(a, 8);
                cJSON_ArrayForEach(e, row)
                        topo_cell(e->valuestring, 6);
                cJSON_ArrayForEach(e, nrow)
                        topo_cell(e->valuestring, 11);
                const char *aff = cJSON_GetStringValue(cJSON_GetArrayItem(json_get(t, "cpu_affinity"), i));
                printf(" %-18s ", clean(aff ? aff : "", a, sizeof(a)));
                if (cJSON_IsNumber(numa))
                        printf("%d\n", numa->valueint);
                else
                        printf("N/A\n");
        }
        printf("\nLegend: %s\n", clean(json_str(t, "legend", ""), a, sizeof(a)));
}

int cmd_nodes(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        const char *system = NULL, *arg;
        bool json = false, topo = false;
        long port = 0, timeout = 3000;
        char **names = NULL;
        int c, next, n, ret = BD_EXIT_OK;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 's': system = arg; break;
                case 'j': json = true; break;
                case OPT_TOPO: topo = true; break;
                case OPT_PORT: opts_number(&o, "port", arg, 1, 65535, &port); break;
                case OPT_TIMEOUT: opts_number(&o, "timeout", arg, 1, 600000, &timeout); break;
                }
        }
        next = opts_finish(&o, 0, INT_MAX, NULL);
        if (next < 0)
                return opts_exit(next);
        if (system && next < argc)
                return usage_error(cmd, "give either --system or node names, not both");
        if (system) {
                struct bd_system sys;
                int bad = ctx_load_system(ctx, system, o.sets, &sys);
                if (bad)
                        return bad;
                struct bd_err err;
                int r = nodes_of_system(sys.json, &names, &err);
                if (r < 0)
                        bd_error("nodes: system '%s': %s", system, err.msg);
                if (!port)
                        port = sys_int(sys.json, "benchd.port");
                system_release(&sys);
                if (r < 0)
                        return BD_EXIT_CONFIG;
        } else {
                size_t k = 0;
                struct bd_err err;
                for (int i = next; i < argc; i++)
                        if (nodes_add(&names, &k, argv[i], "nodes", &err) < 0) {
                                bd_error("%s", err.msg);
                                strv_free(names);
                                return BD_EXIT_USAGE;
                        }
                if (!names)
                        (void) nodes_add(&names, &k, "localhost", "nodes", &err);
        }
        struct bd_err err;
        if (nodes_check(names, port ? (int)port : BD_PORT, system, &err) < 0) {
                bd_error("nodes: %s", err.msg);
                strv_free(names);
                return system ? BD_EXIT_CONFIG : BD_EXIT_USAGE;
        }
        for (n = 0; names[n]; n++)
                ;
        _cleanup_free_ struct node_call *calls = xcalloc((size_t)n, sizeof(*calls));
        nodes_init(calls, names, n, port ? (int)port : BD_PORT);
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
                        ret = nodes_exit(&calls[i], ret);
                }
        nodes_release(calls, n);
        return ret;
}

/* cmd-bind.c: benchctl bind: the numactl options of one local rank. */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "benchctl.h"
#include "bind.h"
#include "json.h"
#include "strutil.h"

#define OPT_ALL 320

static const struct bd_option options[] = {
        { "system", 's', "SYSTEM", "system whose declared topology to use" },
        { "local-rank", 'r', "R", "local rank (0 .. ranks per node - 1)" },
        { "all", OPT_ALL, NULL, "print the plan of every local rank" },
        { "json", 'j', NULL, "print JSON (cpus, membind, NUMA node, NIC)" },
        COMMON_SYSTEM_OPTIONS,
        { 0 }
};

int cmd_bind(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        const char *system = NULL;
        long rank = -1;
        bool all = false, json = false;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 's': system = arg; break;
                case 'j': json = true; break;
                case OPT_ALL: all = true; break;
                case 'r': opts_number(&o, "local-rank", arg, 0, LONG_MAX, &rank); break;
                }
        }
        int next = opts_finish(&o, 0, 0, NULL);
        if (next < 0)
                return opts_exit(next);
        if (!system)
                return usage_error(cmd, "missing --system SYSTEM");
        if (rank < 0 && !all)
                return usage_error(cmd, "missing --local-rank R (or --all)");

        struct bd_system s;
        int ret = ctx_load_system(ctx, system, o.sets, &s);
        if (ret)
                return ret;
        long ranks = sys_int(s.json, "ranks_per_node");
        struct bd_topo topo;
        struct bd_err err;
        _cleanup_free_ struct bd_rank_bind *plan = NULL;
        if (rank >= ranks) {
                bd_error("--local-rank %ld: %s has %ld ranks per node (0..%ld)", rank, s.name, ranks, ranks - 1);
                ret = BD_EXIT_USAGE;
        } else if (system_topo(s.json, &topo, &err) < 0 || bind_plan(&topo, (int)ranks, &plan, &err) < 0) {
                bd_error("%s: %s", s.name, err.msg);
                ret = BD_EXIT_CONFIG;
        } else {
                if (!streq(sys_str(s.json, "binding.policy"), "auto"))
                        fprintf(stderr, "benchctl: note: %s has binding policy '%s'; its launches do not bind ranks\n",
                                s.name, sys_str(s.json, "binding.policy"));
                long first = all ? 0 : rank, last = all ? ranks - 1 : rank;
                cJSON *arr = cJSON_CreateArray();
                for (long r = first; r <= last; r++) {
                        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
                        const struct bd_rank_bind *p = &plan[r];
                        if (json) {
                                cJSON *e = cJSON_CreateObject();
                                cpuset_format(&p->cpus, &b);
                                cJSON_AddNumberToObject(e, "local_rank", (double)r);
                                cJSON_AddStringToObject(e, "physcpubind", b.s);
                                cJSON_AddNumberToObject(e, "membind", p->numa);
                                cJSON_AddStringToObject(e, "nic", p->nic >= 0 ? topo.nics[p->nic].name : "");
                                buf_reset(&b);
                                bind_format_numactl(p, &b);
                                cJSON_AddStringToObject(e, "numactl", b.s);
                                cJSON_AddItemToArray(arr, e);
                        } else {
                                bind_format_numactl(p, &b);
                                if (all)
                                        printf("%ld: ", r);
                                printf("%s", b.s);
                                if (all && p->nic >= 0)
                                        printf(" (nic %s)", topo.nics[p->nic].name);
                                printf("\n");
                        }
                }
                if (json) {
                        _cleanup_free_ char *text = cJSON_Print(all ? arr : cJSON_GetArrayItem(arr, 0));
                        puts(text);
                }
                cJSON_Delete(arr);
        }
        system_release(&s);
        return ret;
}

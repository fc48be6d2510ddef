/* group.c: the engine of groups of runs (sweeps and suites): their cells
 * run one after another, each an ordinary run, resumable and cancelable as
 * a whole (group.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "benchctl.h"
#include "group.h"
#include "json.h"
#include "launch.h"
#include "run.h"
#include "strutil.h"

int group_run(struct bd_ctx *ctx, struct bd_store *s, const char *id, const char *kind, struct group_end *ret_ended)
{
        struct bd_err err;
        struct bd_group g;
        struct bd_cell *cells;
        if (store_get_group(s, id, kind, &g, &cells, &err) < 0)
                return bd_error("%s", err.msg), BD_EXIT_FAIL;
        _cleanup_json_ cJSON *spec = cJSON_Parse(g.spec ? g.spec : "{}");
        int runs = (int)json_int(spec, "runs", 0);
        int ret = BD_EXIT_OK, done = 0, ncells = g.ncells;
        int incomplete = 0;     /* cells whose run did not complete every trial */
        _cleanup_free_ char *gid = xstrdup(g.id), *system = xstrdup(g.system);
        _cleanup_free_ char *workload = g.workload ? xstrdup(g.workload) : NULL;
        bd_group_release(&g);
        /* running again (a resumed group was stopped or cancelled): a cancel from now on stops it */
        if (store_set_group_state(s, gid, "running", &err) < 0) {
                bd_cells_free(cells, ncells);
                return bd_error("%s", err.msg), BD_EXIT_FAIL;
        }
        for (int i = 0; i < ncells && ret == BD_EXIT_OK; i++) {
                struct bd_group now;
                struct bd_cell *nc;
                if (store_get_group(s, gid, kind, &now, &nc, &err) < 0) {
                        bd_error("%s", err.msg);
                        ret = BD_EXIT_FAIL;
                        break;
                }
                bool cancelled = streq(now.state, "cancelled");
                char *run_id = nc[i].run_id ? xstrdup(nc[i].run_id) : NULL;
                bd_cells_free(nc, now.ncells);
                bd_group_release(&now);
                if (cancelled) {
                        printf("%s %s was cancelled: %d of %d cells ran\n", kind, gid, done, ncells);
                        free(run_id);
                        ret = BD_EXIT_RUN;
                        break;
                }
                if (run_id) {
                        struct bd_run r;
                        struct bd_trial *t;
                        if (load_run(s, run_id, &r, &t) == 0) {
                                bool again = r.state == ST_CANCELLED || r.state == ST_INCOMPLETE;
                                bool final = bd_state_final(r.state);
                                if (final && !again && r.state != ST_COMPLETED)
                                        incomplete++;
                                bd_trials_free(t, r.ntrials);
                                bd_run_release(&r);
                                if (final && !again) {
                                        printf("cell %d/%d (%s): done by run %s\n", i + 1, ncells, cells[i].label,
                                               run_id);
                                        free(run_id);
                                        done++;
                                        continue;
                                }
                                if (!final) {
                                        printf("cell %d/%d (%s): run %s still running; following it\n", i + 1,
                                               ncells, cells[i].label, run_id);
                                        int x = wait_for_run(s, run_id, false);
                                        free(run_id);
                                        if (x >= BD_EXIT_SIGNAL)
                                                ret = x;
                                        else if (x == BD_EXIT_RUN)
                                                incomplete++;
                                        done++;
                                        continue;
                                }
                        }
                        free(run_id);
                }
                _cleanup_json_ cJSON *params = cJSON_Parse(cells[i].params ? cells[i].params : "{}");
                const cJSON *sets = json_get(params, "sets"), *e;
                int n = cJSON_GetArraySize(sets), k = 0;
                _cleanup_free_ char **argv = xcalloc((size_t)n + 1, sizeof(char *));
                cJSON_ArrayForEach(e, sets)
                        if (cJSON_IsString(e))
                                argv[k++] = e->valuestring;
                printf("cell %d/%d (%s)\n", i + 1, ncells, cells[i].label);
                fflush(stdout);
                _cleanup_free_ char *new_id = NULL;
                int x = submit_run(ctx, system, json_str(params, "workload", workload), argv, runs, false, false,
                                   &new_id);
                if (x != BD_EXIT_OK || !new_id) {
                        ret = x ? x : BD_EXIT_FAIL;
                        break;
                }
                if (store_set_cell_run(s, gid, i, new_id, &err) < 0) {
                        bd_error("%s; cancelling run %s", err.msg, new_id);
                        (void) cancel_run(s, new_id, false);
                        ret = BD_EXIT_FAIL;
                        break;
                }
                x = wait_for_run(s, new_id, false);
                done++;
                if (x == BD_EXIT_RUN)
                        incomplete++;
                if (x >= BD_EXIT_SIGNAL) {
                        printf("%s %s: stopped following (run %s goes on); resume with 'benchctl %s --resume %s'\n",
                               kind, gid, new_id, streq(kind, "suite") ? "suite run" : "sweep", gid);
                        ret = x;
                }
        }
        bd_cells_free(cells, ncells);
        if (ret == BD_EXIT_OK) {
                if (store_set_group_state(s, gid, "completed", &err) < 0)
                        return bd_error("%s", err.msg), BD_EXIT_FAIL;
                if (ret_ended) {
                        ret_ended->ncells = ncells;
                        ret_ended->incomplete = incomplete;
                }
                return ret;
        }
        if (ret < BD_EXIT_SIGNAL && ret != BD_EXIT_RUN)
                (void) store_set_group_state(s, gid, "stopped", NULL);
        return ret;
}

int group_cancel(struct bd_store *s, const char *id, const char *kind)
{
        struct bd_err err;
        struct bd_group g;
        struct bd_cell *cells;
        if (store_get_group(s, id, kind, &g, &cells, &err) < 0)
                return bd_error("%s", err.msg), BD_EXIT_FAIL;
        int ret = BD_EXIT_OK;
        if (store_set_group_state(s, g.id, "cancelled", &err) < 0) {
                bd_error("%s", err.msg);
                ret = BD_EXIT_FAIL;
        }
        int stopped = 0;
        for (int i = 0; i < g.ncells && ret == BD_EXIT_OK; i++) {
                if (!cells[i].run_id)
                        continue;
                struct bd_run r;
                struct bd_trial *t;
                if (load_run(s, cells[i].run_id, &r, &t) != 0)
                        continue;
                bool final = bd_state_final(r.state);
                bd_trials_free(t, r.ntrials);
                bd_run_release(&r);
                if (!final) {
                        int x = cancel_run(s, cells[i].run_id, false);
                        if (x != BD_EXIT_OK)
                                ret = x;
                        stopped++;
                }
        }
        if (ret == BD_EXIT_OK)
                printf("%s %s cancelled (%d running cell%s stopped)\n", kind, g.id, stopped, stopped == 1 ? "" : "s");
        bd_cells_free(cells, g.ncells);
        bd_group_release(&g);
        return ret;
}

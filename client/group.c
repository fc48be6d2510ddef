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

/* A group as its engine goes through it. */
struct progress {
        struct bd_ctx *ctx;
        struct bd_store *s;
        const char *kind;
        char *gid, *system, *workload;
        int runs;                       /* trials per cell: 0, the system's */
        int ncells, done;
        int incomplete;                 /* cells whose run did not complete every trial */
};

/* The recorded run of cell i, if it has one: done (ended, not cancelled or
 * incomplete), or still running (followed to its end).  1 when the cell
 * needs nothing more, 0 when it needs a new run, or an exit status >=
 * BD_EXIT_SIGNAL when following it was stopped. */
static int settle_recorded(struct progress *p, int i, const char *label, const char *run_id)
{
        struct bd_run r;
        struct bd_trial *t;
        if (load_run(p->s, run_id, &r, &t) != 0)
                return 0;
        bool again = r.state == ST_CANCELLED || r.state == ST_INCOMPLETE;
        bool final = bd_state_final(r.state);
        if (final && !again && r.state != ST_COMPLETED)
                p->incomplete++;
        bd_trials_free(t, r.ntrials);
        bd_run_release(&r);
        if (final && !again) {
                printf("cell %d/%d (%s): done by run %s\n", i + 1, p->ncells, label, run_id);
                p->done++;
                return 1;
        }
        if (final)
                return 0;
        printf("cell %d/%d (%s): run %s still running; following it\n", i + 1, p->ncells, label, run_id);
        int x = wait_for_run(p->s, run_id, FOLLOW_TEXT);
        p->done++;
        if (x >= BD_EXIT_SIGNAL)
                return x;
        if (x == BD_EXIT_RUN)
                p->incomplete++;
        return 1;
}

/* Submits cell i's run, records it with the cell and follows it to its
 * end.  An exit status. */
static int run_cell(struct progress *p, int i, const struct bd_cell *cell)
{
        struct bd_err err;
        _cleanup_json_ cJSON *params = cJSON_Parse(cell->params ? cell->params : "{}");
        const cJSON *sets = json_get(params, "sets"), *e;
        int n = cJSON_GetArraySize(sets), k = 0;
        _cleanup_free_ char **argv = xcalloc((size_t)n + 1, sizeof(char *));
        cJSON_ArrayForEach(e, sets)
                if (cJSON_IsString(e))
                        argv[k++] = e->valuestring;
        printf("cell %d/%d (%s)\n", i + 1, p->ncells, cell->label);
        fflush(stdout);
        _cleanup_free_ char *new_id = NULL;
        int x = submit_run(p->ctx, p->system, json_str(params, "workload", p->workload), argv, p->runs, false, FOLLOW_NONE,
                           &new_id);
        if (x != BD_EXIT_OK || !new_id)
                return x ? x : BD_EXIT_FAIL;
        if (store_set_cell_run(p->s, p->gid, i, new_id, &err) < 0) {
                bd_error("%s; cancelling run %s", err.msg, new_id);
                (void) cancel_run(p->s, new_id, false);
                return BD_EXIT_FAIL;
        }
        x = wait_for_run(p->s, new_id, FOLLOW_TEXT);
        p->done++;
        if (x == BD_EXIT_RUN)
                p->incomplete++;
        if (x >= BD_EXIT_SIGNAL) {
                printf("%s %s: stopped following (run %s goes on); resume with 'benchctl %s --resume %s'\n", p->kind,
                       p->gid, new_id, streq(p->kind, "suite") ? "suite run" : "sweep", p->gid);
                return x;
        }
        return BD_EXIT_OK;
}

/* Cell i as the store has it now: a cancel from elsewhere stops the group
 * (BD_EXIT_RUN), a recorded run is settled, else a new run. */
static int step(struct progress *p, int i, const struct bd_cell *cell)
{
        struct bd_err err;
        struct bd_group now;
        struct bd_cell *nc;
        if (store_get_group(p->s, p->gid, p->kind, &now, &nc, &err) < 0)
                return bd_error("%s", err.msg), BD_EXIT_FAIL;
        bool cancelled = streq(now.state, "cancelled");
        _cleanup_free_ char *run_id = nc[i].run_id ? xstrdup(nc[i].run_id) : NULL;
        bd_cells_free(nc, now.ncells);
        bd_group_release(&now);
        if (cancelled) {
                printf("%s %s was cancelled: %d of %d cells ran\n", p->kind, p->gid, p->done, p->ncells);
                return BD_EXIT_RUN;
        }
        if (run_id) {
                int x = settle_recorded(p, i, cell->label, run_id);
                if (x != 0)
                        return x == 1 ? BD_EXIT_OK : x;
        }
        return run_cell(p, i, cell);
}

int group_run(struct bd_ctx *ctx, struct bd_store *s, const char *id, const char *kind, struct group_end *ret_ended)
{
        struct bd_err err;
        struct bd_group g;
        struct bd_cell *cells;
        if (store_get_group(s, id, kind, &g, &cells, &err) < 0)
                return bd_error("%s", err.msg), BD_EXIT_FAIL;
        _cleanup_json_ cJSON *spec = cJSON_Parse(g.spec ? g.spec : "{}");
        struct progress p = { .ctx = ctx, .s = s, .kind = kind, .gid = xstrdup(g.id), .system = xstrdup(g.system),
                              .workload = g.workload ? xstrdup(g.workload) : NULL,
                              .runs = (int)json_int(spec, "runs", 0), .ncells = g.ncells };
        bd_group_release(&g);
        int ret = BD_EXIT_OK;
        /* running again (a resumed group was stopped or cancelled): a cancel from now on stops it */
        if (store_set_group_state(s, p.gid, "running", &err) < 0) {
                bd_error("%s", err.msg);
                ret = BD_EXIT_FAIL;
                goto out;
        }
        for (int i = 0; i < p.ncells && ret == BD_EXIT_OK; i++)
                ret = step(&p, i, &cells[i]);
        if (ret == BD_EXIT_OK) {
                if (store_set_group_state(s, p.gid, "completed", &err) < 0) {
                        bd_error("%s", err.msg);
                        ret = BD_EXIT_FAIL;
                } else if (ret_ended) {
                        ret_ended->ncells = p.ncells;
                        ret_ended->incomplete = p.incomplete;
                }
        } else if (ret < BD_EXIT_SIGNAL && ret != BD_EXIT_RUN)
                (void) store_set_group_state(s, p.gid, "stopped", NULL);
out:
        bd_cells_free(cells, p.ncells);
        free(p.gid);
        free(p.system);
        free(p.workload);
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

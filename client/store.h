/* store.h: the results store, an SQLite database in $BENCHD_HOME
 * (default ~/.local/share/benchd/benchd.db).
 *
 * One row per run and one per trial.  The database runs in WAL mode with a
 * busy timeout and every write is a transaction, so several benchctl
 * processes may use it at once.  A run's files (rendered script, resolved
 * configuration, job output, collected logs) live in RUNDIR = $BENCHD_HOME/runs/ID.
 */
#ifndef BD_STORE_H
#define BD_STORE_H

#include <stdbool.h>

#include "err.h"

struct sqlite3;

/* States shared by runs and trials.  Final states never change again. */
enum bd_state {
        ST_PENDING,
        ST_RUNNING,
        ST_COMPLETED,
        ST_FAILED,
        ST_CANCELLED,
        ST_TIMEOUT,
        ST_NODE_FAIL,
        ST_OOM,
        ST_INCOMPLETE,  /* the job is gone and the trial never ended */
        _ST_MAX,
};

const char *bd_state_name(enum bd_state s);
int bd_state_parse(const char *s, enum bd_state *ret);
bool bd_state_final(enum bd_state s);

struct bd_run {
        char *id;
        char *system;
        char *workload;
        char *launcher;         /* slurm, mpirun, local */
        char *config;           /* resolved configuration, JSON */
        char *script;           /* rendered script */
        char *job_id;           /* Slurm job id, or NULL */
        long pid;               /* local launches: process group leader, 0 if none */
        char *user;
        char *host;
        char *version;
        char *logdir;
        char *rundir;
        double submit_time, start_time, end_time;       /* Unix seconds, 0 = unknown */
        enum bd_state state;
        int exit_code;          /* -1 = unknown */
        char *reason;
        int ntrials;
};

struct bd_trial {
        int trial;              /* 1-based */
        enum bd_state state;
        char *reason;
        char *nodes;
        double start_time, end_time;
        int exit_code;          /* -1 = unknown */
        char *log_path;
};

struct bd_store {
        struct sqlite3 *db;
        char *home;
        int wal_frames;         /* in the WAL after this connection's last commit */
};

/* The directory of the store: $BENCHD_HOME or ~/.local/share/benchd (caller frees). */
char *store_home(void);
int store_open(struct bd_store *s, const char *home, struct bd_err *err);
void store_close(struct bd_store *s);

/* Inserts a run and its trials in one transaction. */
int store_add_run(struct bd_store *s, const struct bd_run *r, const struct bd_trial *trials, struct bd_err *err);
/* Updates a run's scheduling fields and all its trials in one transaction. */
int store_update(struct bd_store *s, const struct bd_run *r, const struct bd_trial *trials, struct bd_err *err);
/* Loads a run by id (or unique id prefix; "last" for the newest) with its
 * trials (*ret_trials has r->ntrials entries).  -ENOENT when unknown. */
int store_get(struct bd_store *s, const char *id, struct bd_run *ret, struct bd_trial **ret_trials, struct bd_err *err);
/* Runs newest first, filtered by system/workload when non-NULL; calls fn per run. */
int store_list(struct bd_store *s, const char *system, const char *workload, int limit,
               int (*fn)(const struct bd_run *r, void *data), void *data, struct bd_err *err);

/* A group of runs recorded as one: a sweep (one cell per point of its
 * cartesian product) or a suite (one cell per benchmark).  spec: what made
 * it, JSON (the axes, the mode, the baselines file's text...); a cell's
 * params: its settings, JSON; run_id: the run that made it, NULL before. */
struct bd_group {
        char *id;
        char *kind;                     /* "sweep" or "suite" */
        char *system;
        char *workload;                 /* NULL for a suite */
        char *spec;
        double created;
        char *state;                    /* running, stopped, completed, cancelled */
        int ncells;
};

struct bd_cell {
        int idx;                        /* 0-based */
        char *label;
        char *params;
        char *run_id;
};

int store_add_group(struct bd_store *s, const struct bd_group *g, const struct bd_cell *cells, struct bd_err *err);
/* By id or unique prefix ("last": the newest of kind); kind NULL: either.
 * *ret_cells has g->ncells entries.  -ENOENT when unknown. */
int store_get_group(struct bd_store *s, const char *id, const char *kind, struct bd_group *ret,
                    struct bd_cell **ret_cells, struct bd_err *err);
/* The group (sweep or suite) whose cell run_id made: 1 with its id and kind
 * (caller frees), the cell's 0-based index and the group's cells; 0 when
 * none. */
int store_group_of_run(struct bd_store *s, const char *run_id, char **ret_group, char **ret_kind, int *ret_idx,
                       int *ret_ncells, struct bd_err *err);
int store_set_cell_run(struct bd_store *s, const char *group_id, int idx, const char *run_id, struct bd_err *err);
int store_set_group_state(struct bd_store *s, const char *id, const char *state, struct bd_err *err);
/* A trial's JSON result (throughput mode), kept so that reports can be
 * recomputed after the log directory is purged.  get: -ENOENT when none. */
int store_put_result(struct bd_store *s, const char *run_id, int trial, const char *json, struct bd_err *err);
int store_get_result(struct bd_store *s, const char *run_id, int trial, char **ret, struct bd_err *err);
void bd_group_release(struct bd_group *g);
void bd_cells_free(struct bd_cell *c, int n);

void bd_run_release(struct bd_run *r);
void bd_trials_free(struct bd_trial *t, int n);

#endif

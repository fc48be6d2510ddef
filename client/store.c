/* store.c: runs and trials in SQLite (WAL, busy timeout, transactions). */
#include "config.h"

#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>

#include "fs.h"
#include "store.h"

/* 2: groups, group_cells and results (sweeps, suites, raw observations);
 * every statement is IF NOT EXISTS, so a version-1 store gains them. */
#define SCHEMA_VERSION 2
#define BUSY_TIMEOUT_MS 10000
/* The WAL's size policy.  Every process that opens the store first rebuilds
 * the WAL index by reading the whole WAL (its shared-memory index does not
 * survive the last connection), so a WAL left to grow to SQLite's default
 * 1000 pages makes each benchctl command read and checksum up to 4 MB; a
 * checkpoint at every close costs its fsyncs every time (and the next commit
 * one more, to sync the new WAL header).  In between: a process that wrote
 * leaves the WAL as it is unless it holds more than CLOSE_CKPT_FRAMES pages,
 * then checkpoints and truncates it (without waiting for readers); a
 * long-running writer checkpoints at RUN_CKPT_FRAMES.  A submission writes 7
 * pages; measured over 300 submissions, each a new process, the mean cost of
 * open + record + close was 1.22 ms with 32 pages, 0.93-0.99 ms with 96 or
 * 128, 1.03 ms with 256 (the larger WAL slows every open). */
#define CLOSE_CKPT_FRAMES 96
#define RUN_CKPT_FRAMES 1000

static const char *const state_names[_ST_MAX] = {
        [ST_PENDING] = "pending",     [ST_RUNNING] = "running",   [ST_COMPLETED] = "completed",
        [ST_FAILED] = "failed",       [ST_CANCELLED] = "cancelled", [ST_TIMEOUT] = "timeout",
        [ST_NODE_FAIL] = "node_fail", [ST_OOM] = "out_of_memory", [ST_INCOMPLETE] = "incomplete",
};

const char *bd_state_name(enum bd_state s)
{
        return (unsigned)s < _ST_MAX ? state_names[s] : "unknown";
}

int bd_state_parse(const char *s, enum bd_state *ret)
{
        for (int i = 0; i < _ST_MAX; i++)
                if (streq(state_names[i], s)) {
                        *ret = (enum bd_state)i;
                        return 0;
                }
        return -EINVAL;
}

bool bd_state_final(enum bd_state s)
{
        return s != ST_PENDING && s != ST_RUNNING;
}

char *store_home(void)
{
        const char *h = getenv("BENCHD_HOME");
        if (h && *h)
                return xstrdup(h);
        const char *data = getenv("XDG_DATA_HOME");
        if (data && *data)
                return xasprintf("%s/benchd", data);
        const char *home = getenv("HOME");
        return xasprintf("%s/.local/share/benchd", home && *home ? home : "/tmp");
}

static const char schema[] =
        "CREATE TABLE IF NOT EXISTS runs ("
        " id TEXT PRIMARY KEY, system TEXT NOT NULL, workload TEXT NOT NULL, launcher TEXT NOT NULL,"
        " config TEXT, script TEXT, job_id TEXT, pid INTEGER, user TEXT, host TEXT, version TEXT,"
        " logdir TEXT, rundir TEXT, submit_time REAL, start_time REAL, end_time REAL,"
        " state TEXT NOT NULL, exit_code INTEGER, reason TEXT, ntrials INTEGER NOT NULL);"
        "CREATE TABLE IF NOT EXISTS trials ("
        " run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, trial INTEGER NOT NULL,"
        " state TEXT NOT NULL, reason TEXT, nodes TEXT, start_time REAL, end_time REAL,"
        " exit_code INTEGER, log_path TEXT, PRIMARY KEY (run_id, trial));"
        "CREATE INDEX IF NOT EXISTS runs_submit ON runs(submit_time);"
        "CREATE TABLE IF NOT EXISTS groups ("
        " id TEXT PRIMARY KEY, kind TEXT NOT NULL, system TEXT NOT NULL, workload TEXT, spec TEXT,"
        " created REAL, state TEXT NOT NULL, ncells INTEGER NOT NULL);"
        "CREATE TABLE IF NOT EXISTS group_cells ("
        " group_id TEXT NOT NULL REFERENCES groups(id) ON DELETE CASCADE, idx INTEGER NOT NULL,"
        " label TEXT, params TEXT, run_id TEXT, PRIMARY KEY (group_id, idx));"
        "CREATE TABLE IF NOT EXISTS results ("
        " run_id TEXT NOT NULL, trial INTEGER NOT NULL, json TEXT NOT NULL, PRIMARY KEY (run_id, trial));";

static int sql_err(struct bd_store *s, int rc, const char *what, struct bd_err *err)
{
        int r = rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? -EBUSY : -EIO;
        return bd_err_set(err, r, "results store %s/benchd.db: %s: %s", s->home, what, sqlite3_errmsg(s->db));
}

/* what: what failed, in the error (not the SQL) */
static int exec(struct bd_store *s, const char *sql, const char *what, struct bd_err *err)
{
        int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
        return rc == SQLITE_OK ? 0 : sql_err(s, rc, what, err);
}

static int user_version(struct bd_store *s)
{
        sqlite3_stmt *st;
        int v = -1;
        if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
                return -1;
        if (sqlite3_step(st) == SQLITE_ROW)
                v = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        return v;
}

static int init_schema(struct bd_store *s, struct bd_err *err)
{
        /* NORMAL: a commit is durable once the WAL is checkpointed, which is
         * what SQLite recommends with WAL; both settings last as long as the
         * connection */
#define CONN_PRAGMAS "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
        /* a store at this version was made a WAL store with its schema (the
         * journal mode is kept in the file): no more to do */
        if (user_version(s) == SCHEMA_VERSION)
                return exec(s, CONN_PRAGMAS, "open", err);
        /* WAL: readers never block the writer */
        int r = exec(s, "PRAGMA journal_mode=WAL; " CONN_PRAGMAS, "open", err);
        if (r < 0 || user_version(s) == SCHEMA_VERSION)
                return r;
        if ((r = exec(s, "BEGIN IMMEDIATE;", "begin a transaction", err)) < 0)
                return r;
        _cleanup_free_ char *rest = xasprintf("%s PRAGMA user_version=%d; COMMIT;", schema, SCHEMA_VERSION);
        if ((r = exec(s, rest, "create the tables", err)) < 0)
                (void) exec(s, "ROLLBACK;", "roll back", NULL);
        return r;
}

static int wal_hook(void *p, sqlite3 *db, const char *name, int frames)
{
        struct bd_store *s = p;
        s->wal_frames = frames;
        if (frames >= RUN_CKPT_FRAMES && sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) ==
                                                  SQLITE_OK)
                s->wal_frames = 0;
        return SQLITE_OK;
}

int store_open(struct bd_store *s, const char *home, struct bd_err *err)
{
        memset(s, 0, sizeof(*s));
        s->home = xstrdup(home);
        int r = fs_mkdir_p(home, 0700);
        if (r < 0) {
                store_close(s);
                return bd_err_set(err, r, "cannot create '%s': %s", home, strerror(-r));
        }
        _cleanup_free_ char *path = xasprintf("%s/benchd.db", home);
        int rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                                 NULL);
        if (rc != SQLITE_OK)
                r = bd_err_set(err, -EIO, "cannot open results store '%s': %s", path,
                               s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        else {
                sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
                /* store_close decides about checkpoints, not SQLite's close */
                sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
                sqlite3_wal_hook(s->db, wal_hook, s);
                r = init_schema(s, err);
        }
        if (r < 0)
                store_close(s);
        return r;
}

void store_close(struct bd_store *s)
{
        if (s->db && s->wal_frames > CLOSE_CKPT_FRAMES) {
                /* a reader elsewhere: leave it to a later process */
                sqlite3_busy_timeout(s->db, 0);
                (void) sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
        }
        if (s->db)
                sqlite3_close(s->db);
        s->db = NULL;
        free(s->home);
        s->home = NULL;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
        if (v)
                sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
        else
                sqlite3_bind_null(st, i);
}

static void bind_time(sqlite3_stmt *st, int i, double t)
{
        if (t > 0)
                sqlite3_bind_double(st, i, t);
        else
                sqlite3_bind_null(st, i);
}

static void bind_code(sqlite3_stmt *st, int i, int code)
{
        if (code >= 0)
                sqlite3_bind_int(st, i, code);
        else
                sqlite3_bind_null(st, i);
}

static int step_done(struct bd_store *s, sqlite3_stmt *st, const char *what, struct bd_err *err)
{
        int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        return rc == SQLITE_DONE ? 0 : sql_err(s, rc, what, err);
}

static int prepare(struct bd_store *s, const char *sql, sqlite3_stmt **st, struct bd_err *err)
{
        int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
        return rc == SQLITE_OK ? 0 : sql_err(s, rc, "prepare", err);
}

static int put_trials(struct bd_store *s, const char *run_id, const struct bd_trial *t, int n, struct bd_err *err)
{
        for (int i = 0; i < n; i++) {
                sqlite3_stmt *st;
                int r = prepare(s,
                                "INSERT OR REPLACE INTO trials (run_id, trial, state, reason, nodes, start_time,"
                                " end_time, exit_code, log_path) VALUES (?,?,?,?,?,?,?,?,?)",
                                &st, err);
                if (r < 0)
                        return r;
                bind_text(st, 1, run_id);
                sqlite3_bind_int(st, 2, t[i].trial);
                bind_text(st, 3, bd_state_name(t[i].state));
                bind_text(st, 4, t[i].reason);
                bind_text(st, 5, t[i].nodes);
                bind_time(st, 6, t[i].start_time);
                bind_time(st, 7, t[i].end_time);
                bind_code(st, 8, t[i].exit_code);
                bind_text(st, 9, t[i].log_path);
                if ((r = step_done(s, st, "write trial", err)) < 0)
                        return r;
        }
        return 0;
}

static int put_run(struct bd_store *s, const struct bd_run *r, bool insert, struct bd_err *err)
{
        sqlite3_stmt *st;
        int ret = prepare(s,
                          insert ? "INSERT INTO runs (system, workload, launcher, config, script, job_id, pid, user,"
                                   " host, version, logdir, rundir, submit_time, start_time, end_time, state,"
                                   " exit_code, reason, ntrials, id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
                                 : "UPDATE runs SET system=?, workload=?, launcher=?, config=?, script=?, job_id=?,"
                                   " pid=?, user=?, host=?, version=?, logdir=?, rundir=?, submit_time=?,"
                                   " start_time=?, end_time=?, state=?, exit_code=?, reason=?, ntrials=? WHERE id=?",
                          &st, err);
        if (ret < 0)
                return ret;
        bind_text(st, 1, r->system);
        bind_text(st, 2, r->workload);
        bind_text(st, 3, r->launcher);
        bind_text(st, 4, r->config);
        bind_text(st, 5, r->script);
        bind_text(st, 6, r->job_id);
        if (r->pid > 0)
                sqlite3_bind_int64(st, 7, r->pid);
        else
                sqlite3_bind_null(st, 7);
        bind_text(st, 8, r->user);
        bind_text(st, 9, r->host);
        bind_text(st, 10, r->version);
        bind_text(st, 11, r->logdir);
        bind_text(st, 12, r->rundir);
        bind_time(st, 13, r->submit_time);
        bind_time(st, 14, r->start_time);
        bind_time(st, 15, r->end_time);
        bind_text(st, 16, bd_state_name(r->state));
        bind_code(st, 17, r->exit_code);
        bind_text(st, 18, r->reason);
        sqlite3_bind_int(st, 19, r->ntrials);
        bind_text(st, 20, r->id);
        return step_done(s, st, insert ? "add run" : "update run", err);
}

static int transaction(struct bd_store *s, const struct bd_run *r, const struct bd_trial *t, bool insert,
                       struct bd_err *err)
{
        int ret = exec(s, "BEGIN IMMEDIATE;", "begin a transaction", err);
        if (ret < 0)
                return ret;
        if ((ret = put_run(s, r, insert, err)) < 0 || (ret = put_trials(s, r->id, t, r->ntrials, err)) < 0 ||
            (ret = exec(s, "COMMIT;", "commit", err)) < 0) {
                (void) exec(s, "ROLLBACK;", "roll back", NULL);
                return ret;
        }
        return 0;
}

int store_add_run(struct bd_store *s, const struct bd_run *r, const struct bd_trial *t, struct bd_err *err)
{
        return transaction(s, r, t, true, err);
}

int store_update(struct bd_store *s, const struct bd_run *r, const struct bd_trial *t, struct bd_err *err)
{
        return transaction(s, r, t, false, err);
}

static char *col_text(sqlite3_stmt *st, int i)
{
        const unsigned char *v = sqlite3_column_text(st, i);
        return v ? xstrdup((const char *)v) : NULL;
}

static double col_time(sqlite3_stmt *st, int i)
{
        return sqlite3_column_type(st, i) == SQLITE_NULL ? 0 : sqlite3_column_double(st, i);
}

static int col_code(sqlite3_stmt *st, int i)
{
        return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int(st, i);
}

#define RUN_COLUMNS                                                                                  \
        "id, system, workload, launcher, config, script, job_id, pid, user, host, version, logdir,"  \
        " rundir, submit_time, start_time, end_time, state, exit_code, reason, ntrials"

static void row_to_run(sqlite3_stmt *st, struct bd_run *r)
{
        memset(r, 0, sizeof(*r));
        r->id = col_text(st, 0);
        r->system = col_text(st, 1);
        r->workload = col_text(st, 2);
        r->launcher = col_text(st, 3);
        r->config = col_text(st, 4);
        r->script = col_text(st, 5);
        r->job_id = col_text(st, 6);
        r->pid = sqlite3_column_int64(st, 7);
        r->user = col_text(st, 8);
        r->host = col_text(st, 9);
        r->version = col_text(st, 10);
        r->logdir = col_text(st, 11);
        r->rundir = col_text(st, 12);
        r->submit_time = col_time(st, 13);
        r->start_time = col_time(st, 14);
        r->end_time = col_time(st, 15);
        _cleanup_free_ char *state = col_text(st, 16);
        if (!state || bd_state_parse(state, &r->state) < 0)
                r->state = ST_INCOMPLETE;
        r->exit_code = col_code(st, 17);
        r->reason = col_text(st, 18);
        r->ntrials = sqlite3_column_int(st, 19);
}

int store_get(struct bd_store *s, const char *id, struct bd_run *ret, struct bd_trial **ret_trials, struct bd_err *err)
{
        sqlite3_stmt *st;
        int r;
        if (streq(id, "last"))
                r = prepare(s, "SELECT " RUN_COLUMNS " FROM runs ORDER BY submit_time DESC, rowid DESC LIMIT 2", &st,
                            err);
        else
                /* an exact prefix: LIKE would take '%' and '_' in it as wildcards */
                r = prepare(s, "SELECT " RUN_COLUMNS " FROM runs WHERE id = ?1 OR substr(id, 1, length(?1)) = ?1"
                               " ORDER BY id = ?1 DESC LIMIT 2", &st, err);
        if (r < 0)
                return r;
        if (!streq(id, "last"))
                bind_text(st, 1, id);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) {
                sqlite3_finalize(st);
                if (streq(id, "last"))
                        return bd_err_set(err, -ENOENT, "no runs recorded yet in %s/benchd.db", s->home);
                return bd_err_set(err, -ENOENT, "unknown run '%s' (see 'benchctl runs')", id);
        }
        if (rc != SQLITE_ROW) {
                sqlite3_finalize(st);
                return sql_err(s, rc, "read run", err);
        }
        struct bd_run run;
        row_to_run(st, &run);
        if (!streq(id, "last") && !streq(run.id, id) && sqlite3_step(st) == SQLITE_ROW) {
                sqlite3_finalize(st);
                bd_run_release(&run);
                return bd_err_set(err, -EINVAL, "run id '%s' is ambiguous: give more characters", id);
        }
        sqlite3_finalize(st);

        struct bd_trial *t = xcalloc((size_t)(run.ntrials > 0 ? run.ntrials : 1), sizeof(*t));
        for (int i = 0; i < run.ntrials; i++) {
                t[i].trial = i + 1;
                t[i].state = ST_PENDING;
                t[i].exit_code = -1;
        }
        r = prepare(s, "SELECT trial, state, reason, nodes, start_time, end_time, exit_code, log_path"
                       " FROM trials WHERE run_id = ? ORDER BY trial", &st, err);
        if (r < 0) {
                bd_run_release(&run);
                free(t);
                return r;
        }
        bind_text(st, 1, run.id);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                int n = sqlite3_column_int(st, 0);
                if (n < 1 || n > run.ntrials)
                        continue;
                struct bd_trial *x = &t[n - 1];
                _cleanup_free_ char *state = col_text(st, 1);
                if (!state || bd_state_parse(state, &x->state) < 0)
                        x->state = ST_INCOMPLETE;
                x->reason = col_text(st, 2);
                x->nodes = col_text(st, 3);
                x->start_time = col_time(st, 4);
                x->end_time = col_time(st, 5);
                x->exit_code = col_code(st, 6);
                x->log_path = col_text(st, 7);
        }
        sqlite3_finalize(st);
        *ret = run;
        *ret_trials = t;
        return 0;
}

int store_list(struct bd_store *s, const char *system, const char *workload, int limit,
               int (*fn)(const struct bd_run *r, void *data), void *data, struct bd_err *err)
{
        sqlite3_stmt *st;
        int r = prepare(s, "SELECT " RUN_COLUMNS " FROM runs WHERE (?1 IS NULL OR system = ?1)"
                           " AND (?2 IS NULL OR workload = ?2) ORDER BY submit_time DESC, rowid DESC LIMIT ?3",
                        &st, err);
        if (r < 0)
                return r;
        bind_text(st, 1, system);
        bind_text(st, 2, workload);
        sqlite3_bind_int(st, 3, limit > 0 ? limit : -1);
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                struct bd_run run;
                row_to_run(st, &run);
                r = fn(&run, data);
                bd_run_release(&run);
                if (r < 0)
                        break;
        }
        sqlite3_finalize(st);
        if (r >= 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
                return sql_err(s, rc, "list runs", err);
        return r < 0 ? r : 0;
}

void bd_run_release(struct bd_run *r)
{
        free(r->id);
        free(r->system);
        free(r->workload);
        free(r->launcher);
        free(r->config);
        free(r->script);
        free(r->job_id);
        free(r->user);
        free(r->host);
        free(r->version);
        free(r->logdir);
        free(r->rundir);
        free(r->reason);
        memset(r, 0, sizeof(*r));
}

void bd_trials_free(struct bd_trial *t, int n)
{
        for (int i = 0; t && i < n; i++) {
                free(t[i].reason);
                free(t[i].nodes);
                free(t[i].log_path);
        }
        free(t);
}

/* ---- groups of runs (sweeps, suites) and trial results ---- */

int store_add_group(struct bd_store *s, const struct bd_group *g, const struct bd_cell *cells, struct bd_err *err)
{
        int ret = exec(s, "BEGIN IMMEDIATE;", "begin a transaction", err);
        if (ret < 0)
                return ret;
        sqlite3_stmt *st;
        if ((ret = prepare(s, "INSERT INTO groups (id, kind, system, workload, spec, created, state, ncells)"
                              " VALUES (?,?,?,?,?,?,?,?)", &st, err)) < 0)
                goto fail;
        bind_text(st, 1, g->id);
        bind_text(st, 2, g->kind);
        bind_text(st, 3, g->system);
        bind_text(st, 4, g->workload);
        bind_text(st, 5, g->spec);
        bind_time(st, 6, g->created);
        bind_text(st, 7, g->state);
        sqlite3_bind_int(st, 8, g->ncells);
        if ((ret = step_done(s, st, "add group", err)) < 0)
                goto fail;
        for (int i = 0; i < g->ncells; i++) {
                if ((ret = prepare(s, "INSERT INTO group_cells (group_id, idx, label, params, run_id)"
                                      " VALUES (?,?,?,?,?)", &st, err)) < 0)
                        goto fail;
                bind_text(st, 1, g->id);
                sqlite3_bind_int(st, 2, cells[i].idx);
                bind_text(st, 3, cells[i].label);
                bind_text(st, 4, cells[i].params);
                bind_text(st, 5, cells[i].run_id);
                if ((ret = step_done(s, st, "add group cell", err)) < 0)
                        goto fail;
        }
        if ((ret = exec(s, "COMMIT;", "commit", err)) < 0)
                goto fail;
        return 0;
fail:
        (void) exec(s, "ROLLBACK;", "roll back", NULL);
        return ret;
}

int store_group_of_run(struct bd_store *s, const char *run_id, char **ret_group, char **ret_kind, int *ret_idx,
                       int *ret_ncells, struct bd_err *err)
{
        sqlite3_stmt *st;
        int r = prepare(s, "SELECT g.id, g.kind, c.idx, g.ncells FROM group_cells c JOIN groups g ON g.id = c.group_id"
                           " WHERE c.run_id = ?1 ORDER BY g.created DESC LIMIT 1", &st, err);
        if (r < 0)
                return r;
        bind_text(st, 1, run_id);
        int rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
                sqlite3_finalize(st);
                return rc == SQLITE_DONE ? 0 : sql_err(s, rc, "read group cells", err);
        }
        *ret_group = col_text(st, 0);
        *ret_kind = col_text(st, 1);
        *ret_idx = sqlite3_column_int(st, 2);
        *ret_ncells = sqlite3_column_int(st, 3);
        sqlite3_finalize(st);
        return 1;
}

int store_get_group(struct bd_store *s, const char *id, const char *kind, struct bd_group *ret,
                    struct bd_cell **ret_cells, struct bd_err *err)
{
        sqlite3_stmt *st;
        bool last = streq(id, "last");
        int r = prepare(s, last ? "SELECT id, kind, system, workload, spec, created, state, ncells FROM groups"
                                  " WHERE kind = ?2 ORDER BY created DESC, rowid DESC LIMIT 2"
                                : "SELECT id, kind, system, workload, spec, created, state, ncells FROM groups"
                                  " WHERE (id = ?1 OR substr(id, 1, length(?1)) = ?1) AND (?2 IS NULL OR kind = ?2)"
                                  " ORDER BY id = ?1 DESC LIMIT 2", &st, err);
        if (r < 0)
                return r;
        if (!last)
                bind_text(st, 1, id);
        bind_text(st, 2, kind);
        int rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
                sqlite3_finalize(st);
                if (rc != SQLITE_DONE)
                        return sql_err(s, rc, "read group", err);
                if (last)
                        return bd_err_set(err, -ENOENT, "no %s recorded yet in %s/benchd.db", kind ? kind : "group",
                                          s->home);
                return bd_err_set(err, -ENOENT, "unknown %s '%s'", kind ? kind : "sweep or suite", id);
        }
        struct bd_group g = { 0 };
        g.id = col_text(st, 0);
        g.kind = col_text(st, 1);
        g.system = col_text(st, 2);
        g.workload = col_text(st, 3);
        g.spec = col_text(st, 4);
        g.created = col_time(st, 5);
        g.state = col_text(st, 6);
        g.ncells = sqlite3_column_int(st, 7);
        if (!last && !streq(g.id, id) && sqlite3_step(st) == SQLITE_ROW) {
                sqlite3_finalize(st);
                bd_group_release(&g);
                return bd_err_set(err, -EINVAL, "id '%s' is ambiguous: give more characters", id);
        }
        sqlite3_finalize(st);
        struct bd_cell *c = xcalloc((size_t)(g.ncells > 0 ? g.ncells : 1), sizeof(*c));
        for (int i = 0; i < g.ncells; i++)
                c[i].idx = i;
        if ((r = prepare(s, "SELECT idx, label, params, run_id FROM group_cells WHERE group_id = ? ORDER BY idx", &st,
                         err)) < 0) {
                bd_group_release(&g);
                free(c);
                return r;
        }
        bind_text(st, 1, g.id);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                int i = sqlite3_column_int(st, 0);
                if (i < 0 || i >= g.ncells)
                        continue;
                c[i].label = col_text(st, 1);
                c[i].params = col_text(st, 2);
                c[i].run_id = col_text(st, 3);
        }
        sqlite3_finalize(st);
        *ret = g;
        *ret_cells = c;
        return 0;
}

int store_set_cell_run(struct bd_store *s, const char *group_id, int idx, const char *run_id, struct bd_err *err)
{
        sqlite3_stmt *st;
        int r = prepare(s, "UPDATE group_cells SET run_id = ? WHERE group_id = ? AND idx = ?", &st, err);
        if (r < 0)
                return r;
        bind_text(st, 1, run_id);
        bind_text(st, 2, group_id);
        sqlite3_bind_int(st, 3, idx);
        return step_done(s, st, "record a cell's run", err);
}

int store_set_group_state(struct bd_store *s, const char *id, const char *state, struct bd_err *err)
{
        sqlite3_stmt *st;
        int r = prepare(s, "UPDATE groups SET state = ? WHERE id = ?", &st, err);
        if (r < 0)
                return r;
        bind_text(st, 1, state);
        bind_text(st, 2, id);
        return step_done(s, st, "update group", err);
}

int store_put_result(struct bd_store *s, const char *run_id, int trial, const char *json, struct bd_err *err)
{
        sqlite3_stmt *st;
        int r = prepare(s, "INSERT OR REPLACE INTO results (run_id, trial, json) VALUES (?,?,?)", &st, err);
        if (r < 0)
                return r;
        bind_text(st, 1, run_id);
        sqlite3_bind_int(st, 2, trial);
        bind_text(st, 3, json);
        return step_done(s, st, "record a result", err);
}

int store_get_result(struct bd_store *s, const char *run_id, int trial, char **ret, struct bd_err *err)
{
        sqlite3_stmt *st;
        int r = prepare(s, "SELECT json FROM results WHERE run_id = ? AND trial = ?", &st, err);
        if (r < 0)
                return r;
        bind_text(st, 1, run_id);
        sqlite3_bind_int(st, 2, trial);
        int rc = sqlite3_step(st);
        *ret = rc == SQLITE_ROW ? col_text(st, 0) : NULL;
        sqlite3_finalize(st);
        if (rc == SQLITE_ROW)
                return 0;
        if (rc == SQLITE_DONE)
                return -ENOENT;
        return sql_err(s, rc, "read a result", err);
}

void bd_group_release(struct bd_group *g)
{
        free(g->id);
        free(g->kind);
        free(g->system);
        free(g->workload);
        free(g->spec);
        free(g->state);
        memset(g, 0, sizeof(*g));
}

void bd_cells_free(struct bd_cell *c, int n)
{
        for (int i = 0; c && i < n; i++) {
                free(c[i].label);
                free(c[i].params);
                free(c[i].run_id);
        }
        free(c);
}

/* run.h: a submitted run as benchctl follows it.
 *
 * The store holds what was last seen; run_refresh() asks the scheduler (or
 * the local process) and reads the trial markers the script writes to the job
 * output ("benchd: trial I/N started at T, log PATH", "... ended at T with
 * exit status RC"), then records what changed.  Once a run is final it is
 * never asked about again, so answers survive Slurm forgetting the job.
 */
#ifndef BD_RUN_H
#define BD_RUN_H

#include "store.h"

struct workload;

/* Job output file of a run (caller frees). */
char *run_output_path(const struct bd_run *r);
/* Where `benchctl logs` keeps its copy of a trial log: RUNDIR/logs/NAME
 * (caller frees); NULL when the trial has no log recorded. */
char *trial_log_copy(const struct bd_run *r, const struct bd_trial *t);
/* The log to read for a trial (caller frees; NULL when none is recorded): the
 * one in the log directory, or the copy collected into the run directory when
 * that one is gone or shorter than the copy (logs only grow: it was truncated
 * or purged since); *ret_copy says which. */
char *trial_log_best(const struct bd_run *r, const struct bd_trial *t, bool *ret_copy);
/* The workload a run ran: the file it recorded (RUNDIR/workload.json, for
 * one of the search path), else the one of its name now; NULL when neither
 * (the run's workload is no longer known). */
const struct workload *run_workload(const struct bd_run *r);
/* Updates r and trials from the scheduler and the job output; writes the store
 * when something changed.  A scheduler that cannot be reached leaves the
 * recorded state and sets *ret_warning (static text) when given. */
int run_refresh(struct bd_store *s, struct bd_run *r, struct bd_trial *trials, const char **ret_warning,
                struct bd_err *err);
/* This host's name, as runs record it (caller frees). */
char *host_name(void);
/* Whether a local (mpirun/local launcher) run was started on this host: its
 * process id means something only there. */
bool run_started_here(const struct bd_run *r);
/* Opens the store of $BENCHD_HOME; prints the error and returns non-zero on failure. */
int open_store(struct bd_store *s);
/* Loads one run (id, prefix or "last") as recorded, without its trials and
 * without asking the scheduler; prints the error and returns non-zero on failure. */
int load_recorded_run(const char *id, struct bd_run *r);
/* Loads one run (id, prefix or "last") and refreshes it. */
int load_run(struct bd_store *s, const char *id, struct bd_run *r, struct bd_trial **trials);
#endif

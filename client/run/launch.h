/* launch.h: a run's life as benchctl drives it: submitted (submit.c),
 * followed (follow.c), cancelled (cancel.c).  The commands submit, status
 * and cancel call these, and so do groups of runs (group.h).  Each prints
 * what it does and returns an exit status (enum bd_exit). */
#ifndef BD_LAUNCH_H
#define BD_LAUNCH_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "benchctl.h"
#include "store.h"

/* How a run is followed to its end (wait_for_run). */
enum follow_mode {
        FOLLOW_NONE,            /* not followed (submit without --wait) */
        FOLLOW_TEXT,            /* a live line: state, trial, and where the running trial is (its log) */
        FOLLOW_QUIET,           /* the live line without the trial's progress */
        FOLLOW_JSON,            /* a JSON line per change */
};

/* Renders, starts and records a run of workload on system with the
 * overrides sets (NULL-terminated, may be NULL); runs 0: the system's
 * trials.  dry: render and check where it would run, record nothing; wait:
 * how to follow it to its end (FOLLOW_NONE: not).  *ret_id (optional): the new run's id (caller
 * frees).  An exit status. */
int submit_run(struct bd_ctx *ctx, const char *system, const char *workload, char **sets, int runs, bool dry,
               enum follow_mode wait, char **ret_id);
/* "KEY=DIR" for a directory given on the command line, made absolute
 * (caller frees). */
char *path_set(const char *key, const char *dir);

/* A run and its trials as JSON (status --json; caller deletes). */
cJSON *run_json(const struct bd_run *r, const struct bd_trial *t);
/* A run and its trials as a table, with the last lines of a failed trial's
 * log (status). */
void run_print_status(const struct bd_run *r, const struct bd_trial *t);
/* Follows a run until it ends: BD_EXIT_OK when every trial completed,
 * BD_EXIT_RUN otherwise (BD_EXIT_FAIL when the run cannot be loaded); on
 * SIGINT or SIGTERM stops following (the run goes on) and says so, with
 * BD_EXIT_SIGNAL + the signal's number.  FOLLOW_JSON: a JSON line per
 * change instead of the live line and the final table; FOLLOW_TEXT: the live
 * line says where the running trial is (progress.h): one line redrawn on a
 * terminal, else a line per change of state and at most one a minute of
 * progress. */
int wait_for_run(struct bd_store *store, const char *id, enum follow_mode mode);
/* The same, but a run still pending after pending_limit seconds (0: no
 * limit) is cancelled, said with the scheduler's reason, and BD_EXIT_RUN
 * returned: a job whose nodes are down is not waited for for ever. */
int wait_for_run_within(struct bd_store *store, const char *id, enum follow_mode mode, double pending_limit);

/* Cancels a run and records it; prints what happened.  force: record it
 * cancelled even where its job cannot be stopped.  An exit status
 * (BD_EXIT_OK when cancelled or already ended). */
int cancel_run(struct bd_store *store, const char *id, bool force);

#endif

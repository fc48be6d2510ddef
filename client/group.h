/* group.h: groups of runs, the engine of sweeps and suites.
 *
 * A group is recorded in the results store (store.h: struct bd_group and its
 * cells): its kind ("sweep" or "suite"), system, workload, spec (JSON: "runs",
 * the trials of each cell, and what its command put there) and one cell per
 * run to make, whose params give the cell's "sets" (--set overrides) and,
 * for suites, its "workload".  The engine runs the cells that have no result
 * yet one after another (two throughput measurements sharing a machine
 * measure each other), each an ordinary run (launch.h), and follows each to
 * its end.  It prints a line per cell and prints no report: the command that
 * started the group prints it when the group ends.
 */
#ifndef BD_GROUP_H
#define BD_GROUP_H

#include "benchctl.h"
#include "store.h"

/* How a group that ran to its end went. */
struct group_end {
        int ncells;
        int incomplete;         /* cells whose run did not complete every trial */
};

/* Runs the cells of the recorded group id (of kind "sweep" or "suite") that
 * have no result yet, one after another; a cell whose run is still going is
 * followed.  The group's state is read again before each cell: a cancel
 * from elsewhere stops it.  BD_EXIT_OK when every cell ran (the group is
 * then recorded completed and *ret_ended, when given, says how its cells
 * went); otherwise an exit status: BD_EXIT_RUN when the group was
 * cancelled, BD_EXIT_SIGNAL + N when signal N stopped following a cell (the
 * cell's run goes on; the group can be resumed), and after any other
 * failure the group is recorded stopped. */
int group_run(struct bd_ctx *ctx, struct bd_store *s, const char *id, const char *kind, struct group_end *ret_ended);
/* Records the group cancelled and cancels its running cell's run. */
int group_cancel(struct bd_store *s, const char *id, const char *kind);

#endif

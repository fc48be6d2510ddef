/* scheduler.h: starting, watching and cancelling the job of a run.
 *
 * Two kinds of launch: Slurm batch jobs (sched-slurm.c through libslurm, or
 * sched-slurm-cli.c through sbatch/scontrol/scancel when built without it) and
 * local processes (sched-local.c: mpirun and local systems, started detached
 * in their own session with their exit status written to a file).
 */
#ifndef BD_SCHEDULER_H
#define BD_SCHEDULER_H

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "err.h"
#include "store.h"

struct sched_job {
        enum bd_state state;
        char reason[256];
        char nodes[256];
        double start_time, end_time;
        int exit_code;          /* -1 unknown */
};

/* What the submission needs from the system, besides the script. */
struct sched_request {
        const cJSON *sys;       /* resolved system configuration */
        const char *name;       /* job name */
        const char *comment;    /* job comment ("benchd run ID"), or NULL */
        const char *script;     /* script text */
        const char *script_path;
        const char *work_dir;
        const char *output;     /* job output file */
        long tenants;           /* a run of tenants: one node, a task of tenant_cpus CPUs (and a GPU) each */
        long tenant_cpus;
};

/* Slurm */
int slurm_submit(const struct sched_request *req, char **ret_job_id, struct bd_err *err);
/* The sbatch --test-only check: where and when the job would start. */
int slurm_will_run(const struct sched_request *req, char **ret_where, struct bd_err *err);
/* -ENOENT when the controller no longer knows the job (MinJobAge). */
int slurm_query(const char *job_id, struct sched_job *ret, struct bd_err *err);
int slurm_cancel(const char *job_id, struct bd_err *err);
/* A node the controller holds down, failed or not responding */
struct slurm_down {
        char name[128];
        char reason[256];       /* "" when Slurm gives none */
};
/* Of NODES (a host list, "n[1-24]"; NULL: every node), those the controller
 * holds down, failed or not responding: *ret (free()) holds *n of them.
 * Returns 0, or a negative errno with err set. */
int slurm_down_nodes(const char *nodes, struct slurm_down **ret, int *n, struct bd_err *err);
/* The same as text: "n7 (Not responding), n8" in ret ("" when none).
 * Returns how many, or a negative errno with err set.  For a job a node
 * failure ended: the job's own node list drops the failed node while the
 * job completes. */
int slurm_failed_nodes(const char *nodes, char *ret, size_t size, struct bd_err *err);
/* The Slurm node that is host: the one whose NodeName or NodeHostname is
 * host, else the only one whose NodeAddr is; its name in ret.  -ENOENT with
 * err when none is (or several share the address). */
int slurm_node_of_host(const char *host, char *ret, size_t size, struct bd_err *err);
/* Drains node (no new jobs; the running ones finish) with reason, as
 * scontrol update NodeName=NODE State=DRAIN Reason=REASON does. */
int slurm_drain(const char *node, const char *reason, struct bd_err *err);
/* "libslurm" or "sbatch" */
const char *slurm_backend(void);

/* Local processes */
int local_start(const char *script_path, const char *rundir, const char *output, long *ret_pid, struct bd_err *err);
/* Whether the process group still runs; once it ended, exit status from
 * RUNDIR/exit_status.  Where the process runs comes from RUNDIR/process
 * (local_start records the host, boot, PID namespace and start time), for
 * older runs from here (the run was started on this host name).  A run
 * started on another host or in another container (the run directory on a
 * shared $BENCHD_HOME) has only its exit status: -EREMOTE while it has
 * none; one started here before the host restarted is incomplete. */
int local_query(const char *rundir, long pid, bool here, struct sched_job *ret);
/* Stops the process group (SIGTERM, then SIGKILL after 5 s); -EREMOTE for
 * another host's run, 0 when it is gone already. */
int local_cancel(const char *rundir, long pid, bool here, struct bd_err *err);

/* A controller that did not answer (each try waits MessageTimeout, 10 s by
 * default) is not asked again for SCHED_UNREACHABLE_S seconds in this
 * process: the later calls fail at once with the same reason, so that a
 * command making several calls (status, cancel, runs) says so in one wait.
 * sched_note_unreachable records the reason ("cannot reach the Slurm
 * controller HOST: why"); sched_unreachable returns -EHOSTUNREACH with err
 * set to "WHAT: reason" while it holds, else 0. */
#define SCHED_UNREACHABLE_S 30
void sched_note_unreachable(const char *reason);
int sched_unreachable(const char *what, struct bd_err *err);

/* The controller named in the Slurm configuration, for error messages (caller frees). */
char *slurm_controller_name(void);
/* Parses a Slurm time limit into minutes; -1 for unlimited. */
long slurm_time_minutes(const char *s);

#endif

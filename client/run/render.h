/* render.h: the launch script of a benchmark run on a system.
 *
 * slurm systems get an sbatch script, mpirun systems a script around mpirun
 * with a hostfile, local systems mpirun on localhost.  The workload's
 * command line is its file's "command" (workload.h), filled from its
 * section of the system.  Every script runs the
 * trials one after another; each trial drops the page cache (when configured),
 * starts all ranks once through the container runtime and the per-rank
 * binding wrapper, writes its output to LOGDIR/RUNID_TRIAL.log and ends with
 * exactly one RESULT line.
 *
 * With tenants (the system's "tenants": per-gpu or N), each trial is a round
 * of N independent single-rank runs on one node started together, each its
 * own trial (the round's k-th tenant is trial (round - 1) x N + k + 1),
 * confined by benchd-bind --tenant K/N --confine: its GPU alone, its share of
 * the cores (of its GPU's NUMA node), the node's memory / N; under Slurm,
 * each a job step (srun --exact -c C --mem M --gres=gpu:1).
 */
#ifndef BD_RENDER_H
#define BD_RENDER_H

#include "buf.h"
#include "err.h"
#include "system.h"

struct render_opts {
        const char *workload;
        int trials;             /* 0: the system's */
        const char *run_id;
        const char *bin_dir;    /* benchd's programs on the nodes (no container) */
        const char *version;
        struct bd_buf *warnings;        /* when given: what holds but does nothing, a line each */
};

int render_script(const struct bd_system *sys, const struct render_opts *o, struct bd_buf *out,
                  struct bd_err *err);
/* Where the script will run benchd's own program of the workload on this
 * machine's view of the file system (paths.bin, else o->bin_dir): caller
 * frees; NULL when it runs in a container (the image holds it) or the
 * workload runs another program. */
char *render_trainer_path(const struct bd_system *sys, const struct render_opts *o);
/* The run's tenants: 0 when "tenants" is off, else how many (per-gpu: the
 * node's GPUs); -errno with why in err when the system cannot have them
 * (per-gpu without GPUs, more than its GPUs or its cores, a workload that
 * starts its ranks per node, a runtime of one container for every rank). */
long render_tenants(const struct bd_system *sys, const char *workload, long *ret_cpus, struct bd_err *err);
/* The run's node groups (node_groups, groups.h): g empty when off; with
 * the hosts of the nodes by place in *ret_hosts outside Slurm (caller frees
 * with strv_free; NULL with Slurm); -errno with why in err when the system
 * cannot have them (places beyond its nodes or mpirun.hosts, tenants, a
 * workload that starts its ranks per node, docker or podman). */
struct node_groups;
int render_groups(const struct bd_system *sys, const char *workload, struct node_groups *g, char ***ret_hosts,
                  struct bd_err *err);
/* A new run id: YYYYMMDD-HHMMSS-XXXX (UTC, random suffix). */
char *run_id_new(void);
/* Expands a leading ~/ with $HOME. */
char *expand_home(const char *path);

#endif

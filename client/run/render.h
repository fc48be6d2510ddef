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
/* A new run id: YYYYMMDD-HHMMSS-XXXX (UTC, random suffix). */
char *run_id_new(void);
/* Expands a leading ~/ with $HOME. */
char *expand_home(const char *path);

#endif

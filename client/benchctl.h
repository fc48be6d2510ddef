/* benchctl.h: the commands of benchctl and what they share. */
#ifndef BD_BENCHCTL_H
#define BD_BENCHCTL_H

#include "opts.h"
#include "system.h"

struct workload;

struct bd_ctx {
        const char *systems_dir;        /* --systems-dir, or NULL */
        const char *workloads_dir;      /* --workloads-dir, or NULL */
        struct bd_sysdirs dirs;
};

struct bd_command {
        const char *name;
        int (*fn)(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
        const char *usage;
        const char *summary;
};

/* The search path, built on first use from --systems-dir and the environment. */
const struct bd_sysdirs *ctx_dirs(struct bd_ctx *ctx);
/* Tells the workloads where to look: --workloads-dir, $BENCHD_WORKLOADS,
 * ~/.config/benchd/workloads (before the bundled ones).  Before the
 * workloads are first used: main() and the option parser call it. */
void ctx_workload_path(struct bd_ctx *ctx);
/* Every workload file read (for the lists): prints the first error and
 * returns BD_EXIT_CONFIG when one does not hold. */
int ctx_workloads(struct bd_ctx *ctx);
/* The workload of a name, its file (and those it extends) read: prints its
 * file's error or that it is unknown and returns BD_EXIT_CONFIG.  A command
 * that runs one asks for it before loading the system, whose configuration
 * then holds its section. */
int ctx_workload(const char *name, const struct workload **ret);
/* Loads a system with overrides (a command's --set values: o.sets, opts.h);
 * prints the error and returns BD_EXIT_CONFIG on failure. */
int ctx_load_system(struct bd_ctx *ctx, const char *name, char *const *sets, struct bd_system *ret);

/* "WORKLOAD (ssd, maskrcnn or allreduce)": the operand of render and submit. */
const char *workload_operand(void);

int cmd_systems(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_workloads(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_show(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_render(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_bind(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_submit(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_sweep(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_suite(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_image(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_status(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_cancel(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_logs(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_report(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_nodes(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_health(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_runs(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
/* COCO data pipeline (data/).  'dataset' runs in a program of its own,
 * benchd-dataset (benchd-dataset.c), so that benchctl does not load the JPEG
 * libraries at every start; benchctl's cmd_dataset (cmd-dataset.c) executes it. */
#define DATASET_USAGE "synth|index|check|fetch [OPTIONS]"
#define DATASET_SUMMARY "Fetch COCO 2017 (or generate a COCO-format dataset), build its annotation index, or check it."
int cmd_dataset(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_coco_eval(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_stage(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
int cmd_manifest(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
/* pretrained weights from PyTorch state dicts (weights/) */
int cmd_weights(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);

#endif

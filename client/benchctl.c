/* benchctl.c: the benchd client: one table of commands, the options before
 * the command, and a checked flush of stdout so that a full disk is a failure, not a
 * truncated output. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "benchctl.h"
#include "workload.h"
#include "macro.h"

static const struct bd_command commands[] = {
        { "systems", cmd_systems, "[--systems-dir DIR]", "List the systems benchctl knows." },
        { "workloads", cmd_workloads, "[--workloads-dir DIR] [--json]",
          "List the workloads benchctl knows: their result, program, and whether it runs here." },
        { "show", cmd_show, "SYSTEM [--json] [--set KEY=VALUE]... | --run RUN [--json] | --workload NAME [--json]",
          "Print a system's configuration after inheritance and overrides, the one a run recorded, or a "
          "workload's file." },
        { "render", cmd_render, "--system SYSTEM WORKLOAD [--runs N] [--set KEY=VALUE]... [-o FILE] | --run RUN [-o FILE]",
          "Print the launch script of a benchmark run without submitting it, or the one a run recorded." },
        { "bind", cmd_bind, "--system SYSTEM --local-rank R [--json] [--set KEY=VALUE]...",
          "Print the numactl options that bind a local rank to its cores and memory." },
        { "submit", cmd_submit,
          "--system SYSTEM WORKLOAD [--runs N] [--set KEY=VALUE]... [--data DIR] [--logdir DIR] [--wait] [--dry-run]",
          "Submit a benchmark run (Slurm) or start it (mpirun, local) and record it." },
        { "sweep", cmd_sweep,
          "--system SYSTEM WORKLOAD --set KEY=V1[,V2...]... [--mode throughput|time-to-train] [--runs N] "
          "[--steps N] [--warmup W] [--dry-run] | --resume SWEEP | --cancel SWEEP",
          "Run the cartesian product of settings as one recorded sweep of runs, one cell at a time." },
        { "suite", cmd_suite,
          "run BASELINES --system SYSTEM [--repeat N] | report [SUITE] [--baselines FILE] [--compare SUITE] [--json]",
          "Run a baselines file's benchmarks repeatedly and judge them against their targets (pass/fail)." },
        { "status", cmd_status, "[RUN] [--json] [--watch]", "Show the state of a run and its trials (default: the last run)." },
        { "cancel", cmd_cancel, "[--force] RUN", "Cancel a run's job or processes." },
        { "logs", cmd_logs, "RUN [--follow] [--trial N]", "Collect a run's trial logs and print or follow them." },
        { "report", cmd_report, "RUN... [--json|--csv] [--reference] [--scaling] [--html FILE] | SWEEP [--json] [--scaling] [--html FILE]",
          "Time to train, accuracy, throughput and the MLPerf score of runs." },
        { "runs", cmd_runs, "[--system S] [--workload W] [--limit N] [--json]", "List recorded runs, newest first." },
        { "nodes", cmd_nodes, "[--system S | NODE...] [--json] [--topo]",
          "Ask the benchd of each node what it has and how it is wired." },
        { "health", cmd_health, "--system SYSTEM [--nodes N1,N2] [--json] [--timeout MS]",
          "Hold every node against its system (GPUs, NICs, links, CPUs, NUMA): a verdict per node and for all." },
        { "dataset", cmd_dataset, DATASET_USAGE, DATASET_SUMMARY },
        { "coco-eval", cmd_coco_eval, "ANNOTATIONS.json RESULTS.json [--type bbox|segm|both] [--json] [--threads N]",
          "COCO bbox or segm mAP of detections, the 12 numbers of pycocotools' COCOeval." },
        { "stage", cmd_stage,
          "{--local | --system SYSTEM | --nodes N1,N2} --src DIR --dst DIR [--name NAME] [--verify] "
          "[--verify-only] [--delete] [--bwlimit MB/s] [--workers N]",
          "Copy a dataset to local disk, verified against its manifest and resumable: in this process, or on "
          "many nodes at once through their benchd." },
        { "manifest", cmd_manifest, "DIR [-o FILE]", "Build a dataset's manifest (checksums) and print or write it." },
        { "image", cmd_image, "build -o OUT [--runtime R] [--format squashfs|dir|oci] [--debs DIR] | info IMAGE [--json]",
          "Build a container image of the trainers from Debian's packages, or print what an image holds." },
        { "weights", cmd_weights,
          "check FILE [--json] [--tensors] | convert IN.pth OUT.bdw [--strip PREFIX] [--source TEXT]",
          "What a PyTorch state dict or weights file holds, or convert one for the trainers' --pretrained." },
        { 0 }
};

static void print_version(void)
{
        printf("benchctl %s\nfeatures:", PACKAGE_VERSION);
#ifdef HAVE_SLURM
        printf(" libslurm");
#endif
#ifdef HAVE_SQLITE3
        printf(" sqlite");
#endif
#ifdef HAVE_XXHASH
        printf(" xxhash");
#endif
#ifdef HAVE_MPI
        printf(" mpi");
#endif
#ifdef HAVE_CUDA
        printf(" cuda");
#endif
#ifdef HAVE_NCCL
        printf(" nccl");
#endif
#ifdef HAVE_DATA
        printf(" coco-data");
#endif
        printf("\ntrainers:");
        for (const struct workload *const *w = workload_all(); *w; w++)
                if ((*w)->own && (*w)->built)
                        printf(" %s", (*w)->name);
        printf("\n");
}

static void print_help(FILE *f)
{
        fprintf(f, "usage: benchctl [--systems-dir DIR] [--workloads-dir DIR] COMMAND [ARGS]\n\n"
                   "Run MLPerf-style training benchmarks on GPU clusters.\n\ncommands:\n");
        for (const struct bd_command *c = commands; c->name; c++)
                fprintf(f, "  %-10s %s\n", c->name, c->summary);
        fprintf(f, "\n'benchctl COMMAND --help' or 'benchctl help COMMAND' describes a command.\n"
                   "Systems are searched in --systems-dir, $BENCHD_SYSTEMS, ~/.config/benchd/systems\n"
                   "and the bundled directory, in that order; workload files in --workloads-dir,\n"
                   "$BENCHD_WORKLOADS, ~/.config/benchd/workloads, then the bundled workloads.\n"
                   "\nexit status:\n"
                   "  %5d  success\n"
                   "  %5d  failed otherwise (a file, the results store, an unknown run, a refusal)\n"
                   "  %5d  usage error on the command line\n"
                   "  %5d  bad configuration: unknown system or workload, a system file or --set that\n"
                   "         does not hold, a trainer this build lacks\n"
                   "  %5d  the scheduler (Slurm controller) or a node's benchd did not answer\n"
                   "  %5d  the run ended and not every trial completed (failed, cancelled, did not converge)\n"
                   "  %5d  health: a node is degraded, none failed\n"
                   "  %5d  health: a node failed or did not answer\n"
                   "  128+N  interrupted by signal N (130: SIGINT, 143: SIGTERM)\n",
                BD_EXIT_OK, BD_EXIT_FAIL, BD_EXIT_USAGE, BD_EXIT_CONFIG, BD_EXIT_UNREACHABLE, BD_EXIT_RUN,
                BD_EXIT_DEGRADED, BD_EXIT_UNHEALTHY);
}

static const struct bd_command *find_command(const char *name)
{
        for (const struct bd_command *c = commands; c->name; c++)
                if (streq(c->name, name))
                        return c;
        return NULL;
}

int main(int argc, char **argv)
{
        struct bd_ctx ctx = { 0 };
        int i = 1;
        while (i < argc && argv[i][0] == '-') {
                const char *a = argv[i];
                if (streq(a, "--version") || streq(a, "-V")) {
                        print_version();
                        return finish_output(BD_EXIT_OK);
                } else if (streq(a, "--help") || streq(a, "-h")) {
                        print_help(stdout);
                        return finish_output(BD_EXIT_OK);
                } else if (streq(a, "--systems-dir") && i + 1 < argc) {
                        ctx.systems_dir = argv[i + 1];
                        i += 2;
                } else if (!strncmp(a, "--systems-dir=", 14)) {
                        ctx.systems_dir = a + 14;
                        i++;
                } else if (streq(a, "--workloads-dir") && i + 1 < argc) {
                        ctx.workloads_dir = argv[i + 1];
                        i += 2;
                } else if (!strncmp(a, "--workloads-dir=", 16)) {
                        ctx.workloads_dir = a + 16;
                        i++;
                } else
                        return usage_error(NULL, "unknown option '%s'", a);
        }
        ctx_workload_path(&ctx);
        if (i >= argc) {
                print_help(stderr);
                return BD_EXIT_USAGE;
        }
        const char *name = argv[i];
        char *help_argv[] = { NULL, "--help", NULL };
        if (streq(name, "help")) {
                if (i + 1 >= argc) {
                        print_help(stdout);
                        return finish_output(BD_EXIT_OK);
                }
                name = argv[i + 1];
                help_argv[0] = argv[i + 1];
        }
        const struct bd_command *cmd = find_command(name);
        if (!cmd) {
                fprintf(stderr, "benchctl: unknown command '%s'; commands:", name);
                for (const struct bd_command *c = commands; c->name; c++)
                        fprintf(stderr, " %s", c->name);
                fprintf(stderr, "\n");
                return BD_EXIT_USAGE;
        }
        int ret = help_argv[0] ? cmd->fn(2, help_argv, &ctx, cmd) : cmd->fn(argc - i, argv + i, &ctx, cmd);
        sysdirs_release(&ctx.dirs);
        return finish_output(ret);
}

/* workload.h: the workloads benchd runs, each a file (workloads/README.md).
 *
 * A workload file says what a workload is and how to run it: its title, the
 * keys of its section of a system file (type, default, range, help: the
 * schema system files are checked against), its program and the command
 * line each key reaches it through, its names in MLPerf logs and RESULT
 * lines, what its result is and its accuracy targets.  The bundled files
 * (workloads/ in the source tree) are built into every program; benchctl
 * adds the files it finds on the search path (workload_path_set()), which
 * may add workloads or refine bundled ones (a file's "extends" names
 * another, as a system file's does).  The schema and the defaults of system
 * files, the launch renderer, submit, sweeps, suites, the MLPerf scorer and
 * the reports read the workloads here; the trainers read their own's
 * defaults.  Adding a workload is a file.
 */
#ifndef BD_WORKLOAD_H
#define BD_WORKLOAD_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

struct schema_key;

/* What a trial's result is and how MLPerf scores a run of them. */
enum workload_result {
        /* minutes to the accuracy target: the olympic mean of exactly 5
         * trials, lower is better */
        RESULT_TIME_TO_TRAIN,
        /* bus bandwidth at the largest size (GB/s): the mean of the trials
         * that converged, higher is better */
        RESULT_BUS_BANDWIDTH,
        /* a rate (result.unit, images/s unless said): the mean of the trials
         * that gave one; higher is better unless result.higher_is_better is
         * false */
        RESULT_THROUGHPUT,
};

/* How a trial's result is read (result.read). */
enum workload_read {
        READ_MLLOG,             /* its :::MLLOG lines (client/report/mlperf.h) */
        READ_REGEX,             /* regular expressions over its output, the number in the first group */
        READ_JSON,              /* a JSON file (result.file) and a path in it ("train_item.avg") */
        READ_DLLOGGER,          /* NVIDIA DLLogger's "DLLL {...}" records, by their data's names */
};

/* What a reader takes (result.match, result.scale): the name in the file. */
enum workload_value {
        WV_STEP,
        WV_LOSS,
        WV_THROUGHPUT,
        WV_ACCURACY,
        WV_ACCURACY_SEGM,
        _WV_MAX,
};
/* "step", "loss", "throughput", "accuracy", "accuracy_segm" */
extern const char *const workload_value_names[_WV_MAX];

/* How its processes are started ("launch" of its file). */
enum workload_shape {
        SHAPE_PER_RANK,                 /* one process per rank, by mpirun or srun */
        SHAPE_PER_NODE_LAUNCH,          /* one per node, python -m torch.distributed.launch starting its ranks */
        SHAPE_PER_NODE_TORCHRUN,        /* one per node, torchrun starting its ranks */
};

/* The container runtimes a workload may name an image for (image.NAME). */
enum workload_image {
        WI_DOCKER,
        WI_PODMAN,
        WI_SINGULARITY,
        WI_APPTAINER,
        WI_CHARLIECLOUD,
        _WI_MAX,
};
/* "docker", "podman", "singularity", "apptainer", "charliecloud" */
extern const char *const workload_image_names[_WI_MAX];

/* How one workload's result is read. */
struct workload_reader {
        enum workload_read read;
        const char *match[_WV_MAX];     /* regex: an extended regular expression whose first group is the
                                         * number; json: a dotted path ("train_item.avg", a number for an
                                         * array's item, -1 the last); dllogger: a name of a record's data;
                                         * NULL: not read */
        double scale[_WV_MAX];          /* what a number read is multiplied by (1: as read; 0.01: a percent) */
        int skip;                       /* the first throughput values left out (warmup) */
        const char *file;               /* json (and dllogger): the result file, a template of {result}
                                         * (LOGDIR/RUN_TRIAL.json), {logdir}, {run}, {trial}; its file name
                                         * may hold '*'; NULL: the log only */
};

struct workload {
        const char *name;               /* the word on the command line: "ssd" */
        const char *section;            /* its section of a system file: its name, or the workload whose
                                         * settings it shares ("section" in its file) */
        const char *file;               /* where it comes from: a path, or "workloads/ssd.json (bundled)" */
        const char *title;              /* for people: "SSD (ResNet-34)" */
        const char *mlperf_name;        /* submission_benchmark in its MLPerf log lines */
        const char *result_name;        /* the benchmark of its RESULT lines */
        const char *program;            /* what the command runs: benchd-NAME, or a path */
        bool own;                       /* benchd's own program: in benchd's bin directory (or the image's) */
        enum workload_result result;
        struct workload_reader reader;  /* how a trial's result is read */
        const char *unit;               /* of the result: "min", "GB/s", "images/s", or result.unit */
        bool higher_is_better;          /* of the result */
        const char *target_key;         /* its section's accuracy target (bbox for detectors); NULL: none */
        const char *target_segm_key;    /* a second target, met with the first: Mask R-CNN's segm; NULL: none */
        bool dataset;                   /* reads the dataset (its command names {data}) */
        bool rendezvous;                /* its ranks meet at MASTER_ADDR:MASTER_PORT (torch.distributed) */
        enum workload_shape shape;      /* how its processes are started (launch.shape) */
        const char *image[_WI_MAX];     /* its own image per container runtime (image.RUNTIME); NULL: the
                                         * system's */
        bool built;                     /* this build makes the program (configure's BUILD_*); true when not own */
        const struct schema_key *keys;  /* its section's keys, NULL-name terminated */
        const char *defaults;           /* its section's built-in values, a JSON object */
        const char *help;               /* the section, for the schema */
        /* Checks of its section that need the whole of it, once merged
         * (name: the section's, label: the system file), named by the file's "checks"; NULL: none. */
        int (*check)(const cJSON *section, const char *name, const char *label, struct bd_err *err);
        const cJSON *command;           /* its command line: words and {"if": KEY, "then": [words]} */
        const cJSON *spec;              /* the whole file, resolved (extends merged) */
};

/* A bundled file, as the build embeds it (lib/bd-workloads.c). */
struct workload_text {
        const char *name;
        const char *file;               /* workloads/NAME.json */
        const char *text;
};
extern const struct workload_text workload_bundled[];

/* Where benchctl looks for workload files beside the bundled ones, first
 * first (dirs: NULL-terminated, copied).  Call before the first use of the
 * workloads.  A file is read when it is first needed: NAME.json of the
 * first directory that has it (and the files it extends) when workload
 * NAME is; every file when all are listed. */
void workload_path_set(char *const *dirs);
/* The first error of a workload file ("FILE:LINE: ..."), NULL when every
 * file read (every file of the path is read): a workload whose file (or a
 * file it extends) does not read is left out, the others stay. */
const char *workload_path_error(void);
/* Every workload (not the abstract ones, bases that files extend), the
 * bundled first in their order, then those of the path by name;
 * NULL-terminated.  Reads every file of the path. */
const struct workload *const *workload_all(void);
/* The workloads read so far, in the same order: the bundled ones (or the
 * path's files of their names) and those asked for by name since; what a
 * system's configuration holds a section of.  Valid until the next lookup
 * of a name not yet read. */
const struct workload *const *workload_known(void);

/* The workload of a name, its file read the first time: 0 with *ret NULL
 * when there is none; a negative errno with "FILE:LINE: ..." in err when
 * its file, or one it extends, does not read. */
int workload_get(const char *name, const struct workload **ret, struct bd_err *err);
/* The workload of a name; NULL when there is none (or its file is bad). */
const struct workload *workload_find(const char *name);
/* The same; NULL, with its file's error or "unknown workload 'x'; known
 * workloads: ..." (every file read) in err, when there is none. */
const struct workload *workload_lookup(const char *name, struct bd_err *err);
/* Appends "ssd, maskrcnn or allreduce" (last: "or", or ", " for a list);
 * every file read. */
void workload_names(struct bd_buf *out, const char *last);
/* Whether its section has KEY (seed, precision...). */
bool workload_has_key(const struct workload *w, const char *key);
/* Whether its command names {NAME} (a fill or a key placed there, not
 * among {args}). */
bool workload_command_names(const struct workload *w, const char *name);
/* KEY's definition in the file ({"type": ..., "arg": ...}); NULL when none. */
const cJSON *workload_key_spec(const struct workload *w, const char *key);

/* The workload a run recorded (its file, resolved: workload->spec printed),
 * rebuilt and checked as a file would be; label names it in errors ("run
 * 20261128-1"). NULL, with err set, when it is not a workload.  Kept until
 * the program ends. */
const struct workload *workload_recorded(const char *name, const char *label, const char *spec_text,
                                         struct bd_err *err);

/* Its own image for a runtime (a system's container.runtime); NULL: none
 * (the system's image then). */
const char *workload_image_for(const struct workload *w, const char *runtime);

/* Reads one workload file's text (comments allowed) as the search path
 * would, with the bundled workloads as its possible bases, and checks it:
 * for the fuzz harness and the tests.  0, or a negative errno with
 * "label:LINE: ..." in err. */
int workload_check_text(const char *text, const char *name, const char *label, struct bd_err *err);

#endif

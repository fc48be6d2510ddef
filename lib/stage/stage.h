/* stage.h: staging a dataset tree onto node-local disk, verified and resumable.
 *
 * A stage job copies the tree under SRC to DST so that DST ends as a copy of
 * SRC's manifest (manifest.h): every file checksummed as it is written and
 * renamed into place only when it matches, directories, permission bits and
 * modification times reproduced, symlinks recreated as links (never
 * followed; links that lead out of the tree are reported and not staged).
 *
 * The destination is its own journal: a file under its final name was
 * verified when it was renamed there, and carries the manifest's size and
 * mtime.  A stage that was killed at any point is resumed by running it
 * again: files present with the manifest's size and mtime are kept (with
 * verify, they are checksummed too and recopied when they differ), leftover
 * temporary files (".benchd-tmp.*" not in the manifest: a source's files of
 * that name are staged like any other) are removed, the rest is copied.
 *
 * The manifest of SRC is reused while every file's size and mtime match it;
 * new or changed files are checksummed (in parallel, while they are copied).
 * It is stored as SRC/.benchd-manifest, or as STATE_DIR/manifests/NAME.manifest
 * when SRC is not writable; a source whose .benchd-manifest is not a manifest
 * is refused (it would not be staged, and would be overwritten).  A completed stage leaves a copy as
 * DST/.benchd-manifest, which verify-only uses when no SRC is given.
 *
 * A job runs in the thread that calls stage_run(), or in its own with
 * stage_start(); stage_progress() and stage_cancel() may be called from any
 * thread meanwhile.  stage_problems(), stage_error() and stage_manifest() are
 * for after the end.
 *
 * State file (when a name and a state directory are given):
 * STATE_DIR/NAME.state, written atomically when the job starts and ends:
 *
 *     benchd-stage 1
 *     name=coco
 *     state=complete           (running, complete, failed, cancelled)
 *     ...                      (key=value, values escaped as in manifests)
 *
 * It holds the options (so that a daemon restarted after a crash can resume
 * a job still "running"), the counters of the last run, the manifest
 * checksum, the time of the last full verification, and "suspect=PATH" lines
 * for files that a verify-only run found damaged: the next stage recopies them.
 */
#ifndef BD_STAGE_H
#define BD_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "filecopy.h"
#include "manifest.h"

enum bd_stage_mode {
        STAGE_COPY,             /* stage SRC to DST */
        STAGE_VERIFY_ONLY,      /* check DST against the manifest, change nothing */
        STAGE_MANIFEST_ONLY,    /* build (or refresh) SRC's manifest */
};

enum bd_fsync_policy {
        FSYNC_NONE,             /* leave write-back to the kernel */
        FSYNC_END,              /* one syncfs() of DST before the stage is called complete */
        FSYNC_FILE,             /* fsync every file before its rename */
        _FSYNC_MAX,
};

enum bd_stage_state {
        STAGE_IDLE,
        STAGE_RUNNING,
        STAGE_COMPLETE,
        STAGE_FAILED,
        STAGE_CANCELLED,
        _STAGE_STATE_MAX,
};

enum bd_stage_phase {
        PHASE_START,
        PHASE_SCAN,             /* listing SRC and DST */
        PHASE_TRANSFER,         /* checksumming, copying, verifying files */
        PHASE_FINISH,           /* removals, directory attributes, sync, manifest */
        PHASE_DONE,
        _PHASE_MAX,
};

struct bd_stage_opts {
        enum bd_stage_mode mode;
        const char *name;       /* dataset name (stage_name_valid); NULL: no state file */
        const char *src;        /* NULL only for STAGE_VERIFY_ONLY */
        const char *dst;        /* NULL for STAGE_MANIFEST_ONLY */
        const char *state_dir;  /* NULL: no state file, no manifest outside SRC */
        unsigned workers;       /* 0: stage_default_workers() */
        double bwlimit;         /* bytes per second, 0: unlimited */
        bool verify;            /* checksum files already at DST (resume, repair) */
        bool delete_extra;      /* remove from DST what the manifest does not list */
        bool rehash;            /* ignore stored manifests: checksum every source file */
        bool no_store;          /* MANIFEST_ONLY: do not store the manifest with SRC */
        enum bd_fsync_policy fsync;
        enum bd_copy_method copy_method;
};

enum bd_severity {
        SEV_ERROR,              /* the stage is not complete, or verification failed */
        SEV_WARNING,            /* reported, the stage still completes */
        SEV_NOTE,               /* what was repaired or removed */
        _SEV_MAX,
};

enum bd_problem_kind {
        PROB_MISSING,           /* in the manifest, not at DST */
        PROB_EXTRA,             /* at DST, not in the manifest */
        PROB_CORRUPT,           /* checksum differs from the manifest */
        PROB_SIZE,              /* size differs from the manifest */
        PROB_TYPE,              /* a file where a directory should be, a wrong link... */
        PROB_ATTR,              /* content intact, mtime or permissions differ */
        PROB_SOURCE,            /* cannot read SRC, or SRC changed while staged */
        PROB_DEST,              /* cannot write DST */
        PROB_SKIPPED,           /* not staged on purpose (special file, link leading out) */
        PROB_REPAIRED,          /* a damaged file recopied */
        PROB_REMOVED,           /* an extra or leftover removed */
        _PROB_MAX,
};

struct bd_stage_problem {
        enum bd_problem_kind kind;
        enum bd_severity severity;
        char *path;             /* raw bytes, relative to the tree ("." for the root) */
        char *msg;              /* one line, paths escaped (manifest_escape) */
};

struct bd_stage_progress {
        enum bd_stage_state state;
        enum bd_stage_phase phase;
        double elapsed;                         /* seconds since the job started */
        uint64_t files_total, bytes_total;      /* regular files in the manifest */
        uint64_t files_done, bytes_done;        /* accounted for (present, copied, verified or failed) */
        uint64_t files_copied, bytes_copied;    /* written by this run */
        uint64_t files_present;                 /* kept: already at DST */
        uint64_t files_repaired;                /* recopied after a failed check */
        uint64_t files_hashed, bytes_hashed;    /* source checksums computed */
        uint64_t files_verified;                /* DST files checksummed */
        uint64_t errors, warnings;
        double rate;                            /* bytes/s in PHASE_TRANSFER */
        double eta;                             /* seconds left, -1 when unknown */
        uint64_t method_files[_COPY_METHOD_MAX];/* files copied by each method */
        bool from_record;                       /* stage_record_progress(): only what a state record keeps */
};

struct bd_stage;

/* Checks and copies the options; NULL with err filled on a bad option. */
struct bd_stage *stage_new(const struct bd_stage_opts *o, struct bd_err *err);
/* Runs the job here; 0 when complete (or, verify-only, when nothing is wrong). */
int stage_run(struct bd_stage *s);
/* Runs the job in a new thread; stage_wait() joins it and returns its result. */
int stage_start(struct bd_stage *s, struct bd_err *err);
int stage_wait(struct bd_stage *s);
/* Waits at most seconds for the job (started either way) to end; true when it has. */
bool stage_wait_for(struct bd_stage *s, double seconds);
/* Asks the job to stop: workers finish or abandon their file (temporary
 * files are removed) and the job ends as cancelled.  Any thread. */
void stage_cancel(struct bd_stage *s);
/* The same, but the state file keeps saying "running" so that the job is
 * resumed by the next process that reads it (a daemon that stops). */
void stage_suspend(struct bd_stage *s);
void stage_progress(struct bd_stage *s, struct bd_stage_progress *ret);
/* After the end: the problems found (at most 100,000 kept; the counters in
 * the progress count all), sorted by path. */
size_t stage_problems(struct bd_stage *s, const struct bd_stage_problem **ret);
/* After the end: why the job failed as a whole (no space, cannot open the
 * destination...), or NULL when it failed only through per-file problems. */
const char *stage_error(struct bd_stage *s);
/* Why the job did not complete: stage_error(), else its first per-file
 * error (what the state file records); NULL when nothing failed. */
const char *stage_failure(struct bd_stage *s);
/* After the end: the manifest used (NULL if none could be had; owned by the
 * job, complete when the job completed), and where it is stored. */
struct bd_manifest *stage_manifest(struct bd_stage *s);
const char *stage_manifest_path(struct bd_stage *s);
void stage_free(struct bd_stage *s);
DEFINE_CLEANUP(struct bd_stage *, stage_free)

unsigned stage_default_workers(void);
/* "512 bytes", "1.2 GiB" */
void stage_format_size(uint64_t n, char *buf, size_t len);
/* Dataset names: 1 to 64 of [A-Za-z0-9._-], starting with a letter or digit. */
bool stage_name_valid(const char *name);
const char *stage_state_name(enum bd_stage_state s);
const char *stage_phase_name(enum bd_stage_phase p);
const char *stage_problem_name(enum bd_problem_kind k);
/* "error", "warning", "note" */
const char *stage_severity_name(enum bd_severity s);
const char *stage_fsync_policy_name(enum bd_fsync_policy p);
int stage_fsync_policy_parse(const char *name, enum bd_fsync_policy *ret);

/* ---- state files, for a daemon that lists and resumes jobs -------------------- */

struct bd_stage_record {
        char *name, *src, *dst;
        enum bd_stage_mode mode;
        enum bd_stage_state state;
        double started, finished;       /* epoch seconds; 0 when not yet */
        double verified;                /* last run that checksummed all of DST, 0 if none */
        bool have_manifest;
        uint8_t manifest_sum[16];
        uint64_t files, bytes, files_copied, bytes_copied, files_present, files_repaired, errors;
        char *error;                    /* first error of the last run, or NULL */
        long pid;                       /* of the process that ran it last */
        /* the options, to resume */
        unsigned workers;
        double bwlimit;
        bool verify, delete_extra;
        enum bd_fsync_policy fsync;
        char **suspects;                /* paths found damaged by verify-only */
        size_t nsuspects;
};

/* Reads STATE_DIR/NAME.state; -ENOENT when there is none. */
int stage_record_load(const char *state_dir, const char *name, struct bd_stage_record *ret, struct bd_err *err);
/* Writes STATE_DIR/NAME.state atomically (creating STATE_DIR). */
int stage_record_save(const char *state_dir, const struct bd_stage_record *r, struct bd_err *err);
void stage_record_release(struct bd_stage_record *r);
/* The names of the datasets with a state file in state_dir, sorted (the
 * caller frees each and the array); none when the directory does not exist. */
int stage_records(const char *state_dir, char ***ret, size_t *ret_n);
/* Removes what a writer of NAME's state file that was killed mid-write
 * left (NAME.state.tmp.*); call with the name's lock held, so that no
 * writer is alive. */
void stage_record_clean(const char *state_dir, const char *name);
/* Options that resume the recorded job (pointing into r). */
void stage_record_opts(const struct bd_stage_record *r, const char *state_dir, struct bd_stage_opts *ret);
/* The progress of the recorded job's last run, as far as the record keeps it:
 * state, files_total, bytes_total, files_copied, bytes_copied, files_present,
 * files_repaired, errors; from_record set, eta -1, the rest 0. */
void stage_record_progress(const struct bd_stage_record *r, struct bd_stage_progress *ret);

/* ---- JSON, one spelling for benchctl stage --json and benchd's /v1/datasets ---- */

struct cJSON;

/* The progress as a JSON object: phase, elapsed_seconds, files_total,
 * files_done, bytes_total, bytes_done, files_copied, bytes_copied,
 * files_present, files_repaired, files_verified, files_hashed, errors,
 * warnings, rate_bytes_per_second, eta_seconds (null when unknown) and
 * copy_methods (files copied by each method, by name).  From a state record
 * (from_record), only the fields it keeps. */
struct cJSON *stage_progress_json(const struct bd_stage_progress *p);
/* One problem: {"kind", "severity", "path", "message"} (stage_problem_name(),
 * stage_severity_name(), the path escaped as in manifests, the message). */
struct cJSON *stage_problem_json(const struct bd_stage_problem *p);
/* After the end: the first max (0: all) of stage_problems(), as an array of those. */
struct cJSON *stage_problems_json(struct bd_stage *s, size_t max);

#endif

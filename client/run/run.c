/* run.c: following runs through the scheduler and their job output. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "benchctl.h"
#include "fs.h"
#include "run.h"
#include "scheduler.h"
#include "strutil.h"
#include "workload.h"

char *run_output_path(const struct bd_run *r)
{
        if (r->launcher && streq(r->launcher, "slurm"))
                return xasprintf("%s/%s_slurm-%s.out", r->logdir, r->id, r->job_id ? r->job_id : "0");
        return xasprintf("%s/job.out", r->rundir);
}

const struct workload *run_workload(const struct bd_run *r)
{
        _cleanup_free_ char *path = r->rundir ? xasprintf("%s/workload.json", r->rundir) : NULL, *text = NULL;
        if (path && fs_read_file(path, 4u << 20, &text, NULL, NULL) == 0) {
                const struct workload *w = workload_recorded(r->workload, path, text, NULL);
                if (w)
                        return w;
        }
        return workload_find(r->workload);
}

char *trial_log_copy(const struct bd_run *r, const struct bd_trial *t)
{
        if (!t->log_path || !r->rundir)
                return NULL;
        const char *slash = strrchr(t->log_path, '/');
        return xasprintf("%s/logs/%s", r->rundir, slash ? slash + 1 : t->log_path);
}

char *trial_log_best(const struct bd_run *r, const struct bd_trial *t, bool *ret_copy)
{
        *ret_copy = false;
        if (!t->log_path)
                return NULL;
        char *copy = trial_log_copy(r, t);
        struct stat orig, kept;
        if (copy && stat(copy, &kept) == 0 && S_ISREG(kept.st_mode) &&
            (stat(t->log_path, &orig) < 0 || orig.st_size < kept.st_size)) {
                *ret_copy = true;
                return copy;
        }
        free(copy);
        return xstrdup(t->log_path);
}

int open_store(struct bd_store *s)
{
        _cleanup_free_ char *home = store_home();
        struct bd_err err;
        if (store_open(s, home, &err) < 0) {
                bd_error("%s", err.msg);
                return BD_EXIT_FAIL;
        }
        return 0;
}

struct marks {
        bool started, ended;
        double start, end;
        int rc;
        char log[512];
};

/* What slurmstepd wrote into the job output when it ended the job itself:
 * "slurmstepd: error: *** JOB 12 ON n1 CANCELLED AT 2026-11-24T01:02:03 DUE TO
 * TIME LIMIT ***", "... DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS
 * ***", "Detected 1 oom-kill event(s) in StepId=12.batch ...".  Decides a job
 * Slurm has forgotten; the last such line counts. */
struct fate {
        enum bd_state state; /* ST_PENDING: none seen */
        char line[200];
        char image[300];     /* the launch script's pre-flight checks (image, program): the first node that failed */
};

static void read_fate(const char *line, struct fate *f)
{
        const char *job = strstr(line, "*** JOB "), *at = job ? strstr(job, " CANCELLED AT ") : NULL;
        enum bd_state st;
        if (at) {
                const char *due = strstr(at, " DUE TO ");
                st = !due                                   ? ST_CANCELLED
                     : str_has_prefix(due + 8, "TIME LIMIT")   ? ST_TIMEOUT
                     : str_has_prefix(due + 8, "NODE FAILURE") ? ST_NODE_FAIL
                                                               : ST_CANCELLED;
        } else if (strstr(line, "oom-kill event") || strstr(line, "oom_kill event")) {
                st = ST_OOM;
        } else {
                return;
        }
        f->state = st;
        const char *from = job ? job : line;
        size_t l = strlen(from);
        while (l > 0 && (from[l - 1] == '\r' || from[l - 1] == ' '))
                l--;
        snprintf(f->line, sizeof(f->line), "%.*s", (int)l, from);
}

/* The launch script's pre-flight checks before the first trial (the node's
 * GPUs, dataset and weights, the GPU driver into the image, the image, another's program): "benchd: KIND
 * check failed on NODE: WHY", then
 * "benchd: KIND check failed: no trial started"; the first failure counts. */
static bool preflight_line(const char *line, struct fate *f)
{
        static const char *const kinds[] = { "node", "driver", "image", "program" };
        for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
                _cleanup_free_ char *on = xasprintf("benchd: %s check failed on ", kinds[k]);
                _cleanup_free_ char *none = xasprintf("benchd: %s check failed:", kinds[k]);
                if (str_has_prefix(line, on)) {
                        if (!f->image[0])
                                snprintf(f->image, sizeof(f->image), "%s", line + strlen("benchd: "));
                        return true;
                }
                if (str_has_prefix(line, none)) {
                        if (!f->image[0])
                                snprintf(f->image, sizeof(f->image), "%s check failed", kinds[k]);
                        return true;
                }
        }
        return false;
}

/* Reads the trial markers of the job output. Returns the number of trials
 * that succeeded when the script printed its closing line, -1 otherwise. */
static int read_marks(const char *path, struct marks *m, int n, struct fate *f)
{
        _cleanup_free_ char *text = NULL;
        if (fs_read_file(path, 64u << 20, &text, NULL, NULL) < 0)
                return -1;
        int closing = -1;
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                int i, tot, rc, ok;
                double t;
                char log[512];
                if (sscanf(line, "benchd: trial %d/%d started at %lf, log %511[^\n]", &i, &tot, &t, log) == 4 &&
                    i >= 1 && i <= n) {
                        m[i - 1].started = true;
                        m[i - 1].start = t;
                        snprintf(m[i - 1].log, sizeof(m[i - 1].log), "%s", log);
                } else if (sscanf(line, "benchd: trial %d/%d ended at %lf with exit status %d", &i, &tot, &t, &rc) ==
                                   4 && i >= 1 && i <= n) {
                        m[i - 1].ended = true;
                        m[i - 1].end = t;
                        m[i - 1].rc = rc;
                } else if (sscanf(line, "benchd: %d of %d trials succeeded", &ok, &tot) == 2) {
                        closing = ok;
                } else if (preflight_line(line, f)) {
                        ;
                } else {
                        read_fate(line, f);
                }
        }
        return closing;
}

/* Whether a log line says nothing of why a trainer failed: the script's
 * own lines, MLPerf lines, a rank's tag alone, blank. */
static bool noise_line(const char *s)
{
        static const char *const prefixes[] = { "ENDING TIMING RUN", "STARTING TIMING RUN", "RESULT,", ":::MLLOG",
                                                "benchd: ", NULL };
        while (*s == ' ' || *s == '\t')
                s++;
        if (!*s)
                return true;
        for (const char *const *p = prefixes; *p; p++)
                if (str_has_prefix(s, *p))
                        return true;
        return false;
}

/* Whether a line reads as an error message (a rank's standard output and
 * error reach the log in no certain order: of the last lines, the one that
 * says what went wrong). */
static bool says_error(const char *s)
{
        static const char *const words[] = { "error", "exception", "traceback", "fatal", "abort", "killed",
                                             "failed", "cannot", "can't", "not found", "no such", "denied",
                                             "refused", "invalid", "out of memory", NULL };
        for (const char *const *w = words; *w; w++)
                if (strcasestr(s, *w))
                        return true;
        return false;
}

/* The last line a failed trainer printed (caller's buf), read from its
 * log's last trial: of the lines before the first box of dashes Open MPI
 * prints when a rank fails (what the other ranks print after it is not
 * why), else of all, the last that reads as an error, else the last;
 * past the script's lines, without a rank's --tag-output prefix
 * ("[1,0]<stderr>:"); "" when there is none. */
static void last_words(const char *path, char *buf, size_t n)
{
        buf[0] = 0;
        FILE *f = path ? fopen(path, "re") : NULL;
        if (!f)
                return;
        char tail[16384];
        if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > (long)sizeof(tail) - 1)
                fseek(f, -(long)(sizeof(tail) - 1), SEEK_END);
        else
                rewind(f);
        size_t len = fread(tail, 1, sizeof(tail) - 1, f);
        fclose(f);
        tail[len] = 0;
        char *p = tail, *start, *from = tail;
        /* the line after the last trial's start (a log of several attempts
         * holds all) */
        while ((start = strstr(p, "STARTING TIMING RUN"))) {
                p = start + 1;
                char *nl = strchr(start, '\n');
                from = nl ? nl + 1 : start + strlen(start);
        }
        p = from;
        const char *last = NULL, *last_err = NULL;
        bool boxed = false;
        for (char *line = p, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl = 0;
                if (line[0] == '[' && strchr(line, ']') && strstr(line, ">:"))
                        line = strstr(line, ">:") + 2;
                if (strlen(line) >= 8 && strspn(line, "-") == strlen(line)) {
                        if (!boxed && last)
                                break; /* a box after the trainer's words: its failure */
                        boxed = !boxed;
                        continue;
                }
                if (!boxed && !noise_line(line)) {
                        last = line;
                        if (says_error(line))
                                last_err = line;
                }
        }
        if (last_err)
                last = last_err;
        if (!last)
                return;
        while (*last == ' ' || *last == '\t')
                last++;
        str_sanitize(buf, n, last, "?");
}

static void set_reason(struct bd_trial *t, const char *reason)
{
        if (t->reason && streq(t->reason, reason ? reason : ""))
                return;
        free(t->reason);
        t->reason = reason && *reason ? xstrdup(reason) : NULL;
}

/* A job a node failure ended: the reason names the nodes the controller
 * holds down among those the job ran on ("NodeDown: node n7 (Not
 * responding)").  Those are the trials' nodes, recorded while it ran: the
 * job's own list drops the failed node while the job completes. */
static void name_failed_nodes(struct sched_job *job, const struct bd_trial *trials, int n)
{
        const char *nodes = job->nodes;
        char failed[200];
        struct bd_err err;
        for (int i = 0; i < n; i++)
                if (trials[i].nodes && trials[i].nodes[0])
                        nodes = trials[i].nodes;
        int k = nodes[0] ? slurm_failed_nodes(nodes, failed, sizeof(failed), &err) : 0;
        if (k <= 0)
                return;
        /* the controller's reasons are an administrator's words: no escape sequences */
        (void) str_sanitize(failed, sizeof(failed), failed, "?");
        size_t l = strlen(job->reason);
        snprintf(job->reason + l, sizeof(job->reason) - l, "%snode%s %s", l ? ": " : "", k == 1 ? "" : "s", failed);
}

static bool same_trials(const struct bd_trial *a, const struct bd_trial *b, int n)
{
        for (int i = 0; i < n; i++)
                if (a[i].state != b[i].state || a[i].exit_code != b[i].exit_code ||
                    a[i].start_time != b[i].start_time || a[i].end_time != b[i].end_time ||
                    !streq(a[i].nodes ? a[i].nodes : "", b[i].nodes ? b[i].nodes : "") ||
                    !streq(a[i].reason ? a[i].reason : "", b[i].reason ? b[i].reason : ""))
                        return false;
        return true;
}

char *host_name(void)
{
        char h[256] = "";
        if (gethostname(h, sizeof(h) - 1) < 0 || !h[0])
                return xstrdup("?");
        return xstrdup(h);
}

bool run_started_here(const struct bd_run *r)
{
        _cleanup_free_ char *h = host_name();
        /* runs recorded without a host (none should be) count as this host's */
        return !r->host || !r->host[0] || streq(r->host, h);
}

/* A job the controller no longer knows: its output decides. */
static void job_from_output(const struct bd_run *r, int closing, const struct fate *fate, struct sched_job *job)
{
        memset(job, 0, sizeof(*job));
        job->exit_code = -1;
        if (closing >= 0) {
                job->state = closing == r->ntrials ? ST_COMPLETED : ST_FAILED;
                job->exit_code = closing == r->ntrials ? 0 : 1;
        } else if (fate->state != ST_PENDING) {
                job->state = fate->state;
                snprintf(job->reason, sizeof(job->reason), "the job output says: %s", fate->line);
        } else {
                job->state = ST_INCOMPLETE;
                snprintf(job->reason, sizeof(job->reason), "the controller forgot job %s before it was seen ending",
                         r->job_id);
        }
}

/* What the scheduler said, corrected by what only the job output and the
 * controller's node states tell; a final job gets an end time. */
static void settle_job(const struct bd_run *r, const struct bd_trial *trials, bool known, int closing,
                       const char *out, struct sched_job *job)
{
        /* Slurm reports 0 for a job its node failure ended: no exit status */
        if (job->state == ST_NODE_FAIL && job->exit_code == 0)
                job->exit_code = -1;
        if (job->state == ST_NODE_FAIL && known && streq(r->launcher, "slurm"))
                name_failed_nodes(job, trials, r->ntrials);
        if (job->state == ST_COMPLETED && closing >= 0 && closing < r->ntrials)
                job->state = ST_FAILED;
        /* a local run whose exit status went unrecorded (its wrapper was
         * killed, the file is damaged) but whose script printed its closing
         * line: that line decides */
        if (known && job->state == ST_INCOMPLETE && closing >= 0 && !streq(r->launcher, "slurm")) {
                job->state = closing == r->ntrials ? ST_COMPLETED : ST_FAILED;
                job->exit_code = closing == r->ntrials ? 0 : 1;
                size_t l = strlen(job->reason);
                snprintf(job->reason + l, sizeof(job->reason) - l, "%sthe job output says %d of %d trials succeeded",
                         l ? "; " : "", closing, r->ntrials);
        }
        if (bd_state_final(job->state) && job->end_time <= 0) {
                /* when it was last seen: its output's last change */
                struct stat st;
                job->end_time = stat(out, &st) == 0 ? (double)st.st_mtime : (double)time(NULL);
        }
}

/* Each trial from its markers, or from the job's fate where it has none. */
static void update_trials(struct bd_trial *trials, int n, const struct marks *m, const struct sched_job *job,
                          const struct fate *fate)
{
        bool final = bd_state_final(job->state);
        for (int i = 0; i < n; i++) {
                struct bd_trial *t = &trials[i];
                /* the nodes a trial ran on; a failed node later drops out of the
                 * job's list; a trial that never started ran nowhere */
                if (job->nodes[0] && !t->nodes && m[i].started)
                        t->nodes = xstrdup(job->nodes);
                if (m[i].started) {
                        t->start_time = m[i].start;
                        if (m[i].log[0] && !t->log_path)
                                t->log_path = xstrdup(m[i].log);
                }
                if (m[i].ended) {
                        t->end_time = m[i].end;
                        t->exit_code = m[i].rc;
                        t->state = m[i].rc == 0 ? ST_COMPLETED : ST_FAILED;
                        if (m[i].rc == 0)
                                set_reason(t, NULL);
                        else if (!t->reason || !str_has_prefix(t->reason, "the trainer exited with an error")) {
                                /* once, when it is seen ending: its last words */
                                char words[200], why[256];
                                last_words(t->log_path, words, sizeof(words));
                                snprintf(why, sizeof(why), "the trainer exited with an error%s%s", words[0] ? ": " : "",
                                         words);
                                set_reason(t, why);
                        }
                } else if (m[i].started) {
                        if (!final) {
                                t->state = ST_RUNNING;
                        } else {
                                /* the job ended during this trial: its fate is the trial's */
                                t->state = job->state == ST_COMPLETED || job->state == ST_FAILED ? ST_INCOMPLETE
                                                                                                 : job->state;
                                t->end_time = job->end_time;
                                set_reason(t, job->reason[0] ? job->reason : "the job ended during this trial");
                        }
                } else if (final) {
                        t->state = job->state == ST_CANCELLED || job->state == ST_TIMEOUT ||
                                                   job->state == ST_NODE_FAIL
                                           ? job->state
                                           : ST_INCOMPLETE;
                        set_reason(t, fate->image[0] ? fate->image : "never started");
                } else {
                        t->state = ST_PENDING;
                        set_reason(t, job->state == ST_PENDING ? job->reason : NULL);
                }
        }
}

/* The run from its job and trials. */
static void update_run(struct bd_run *r, const struct bd_trial *trials, struct sched_job *job,
                       const struct fate *fate)
{
        bool final = bd_state_final(job->state);
        r->state = job->state;
        if (job->start_time > 0)
                r->start_time = job->start_time;
        for (int i = 0; i < r->ntrials; i++) /* local runs: the first trial's start */
                if (trials[i].start_time > 0 && (r->start_time <= 0 || trials[i].start_time < r->start_time))
                        r->start_time = trials[i].start_time;
        if (final) {
                r->end_time = job->end_time > 0 ? job->end_time : (double)time(NULL);
                r->exit_code = job->exit_code;
        }
        if (final && fate->image[0] && !job->reason[0])
                snprintf(job->reason, sizeof(job->reason), "%.200s: no trial started", fate->image);
        free(r->reason);
        r->reason = job->reason[0] ? xstrdup(job->reason) : NULL;
}

/* Copies of the trials as they were, to see what a refresh changed. */
static void snapshot_trials(const struct bd_trial *trials, int n, struct bd_trial *ret)
{
        memcpy(ret, trials, sizeof(*trials) * (size_t)n);
        for (int i = 0; i < n; i++) { /* only what same_trials() compares is owned here */
                ret[i].reason = trials[i].reason ? xstrdup(trials[i].reason) : NULL;
                ret[i].nodes = trials[i].nodes ? xstrdup(trials[i].nodes) : NULL;
        }
}

static void snapshot_release(struct bd_trial *snap, int n)
{
        for (int i = 0; i < n; i++) {
                free(snap[i].reason);
                free(snap[i].nodes);
        }
}

int run_refresh(struct bd_store *s, struct bd_run *r, struct bd_trial *trials, const char **ret_warning,
                struct bd_err *err)
{
        if (ret_warning)
                *ret_warning = NULL;
        if (bd_state_final(r->state))
                return 0;

        struct sched_job job;
        struct bd_err qerr;
        bool known = true;
        int q;
        if (streq(r->launcher, "slurm"))
                q = slurm_query(r->job_id, &job, &qerr);
        else
                q = local_query(r->rundir, r->pid, run_started_here(r), &job);
        if (q == -ENOENT) {
                known = false; /* Slurm forgot the job: its output decides */
        } else if (q < 0) {
                if (ret_warning)
                        *ret_warning = q == -EREMOTE ? "it runs on another host (see 'host'), where its processes can be "
                                                       "asked; showing the last recorded state"
                                                     : "the scheduler could not be asked; showing the last recorded state";
                return 0;
        }

        struct bd_trial before[r->ntrials > 0 ? r->ntrials : 1];
        snapshot_trials(trials, r->ntrials, before);
        enum bd_state old_state = r->state;
        _cleanup_free_ char *out = run_output_path(r);
        struct marks m[r->ntrials > 0 ? r->ntrials : 1];
        memset(m, 0, sizeof(m));
        struct fate fate = { .state = ST_PENDING };
        int closing = read_marks(out, m, r->ntrials, &fate);
        if (!known)
                job_from_output(r, closing, &fate, &job);
        settle_job(r, trials, known, closing, out, &job);
        update_trials(trials, r->ntrials, m, &job, &fate);
        update_run(r, trials, &job, &fate);

        int ret = 0;
        if (r->state != old_state || !same_trials(before, trials, r->ntrials))
                ret = store_update(s, r, trials, err);
        snapshot_release(before, r->ntrials);
        return ret;
}

int load_recorded_run(const char *id, struct bd_run *r)
{
        struct bd_store s;
        if (open_store(&s))
                return BD_EXIT_FAIL;
        struct bd_trial *t;
        struct bd_err err;
        int ret = store_get(&s, id, r, &t, &err);
        store_close(&s);
        if (ret < 0) {
                bd_error("%s", err.msg);
                return BD_EXIT_FAIL;
        }
        bd_trials_free(t, r->ntrials);
        return 0;
}

int load_run(struct bd_store *s, const char *id, struct bd_run *r, struct bd_trial **trials)
{
        struct bd_err err;
        if (store_get(s, id, r, trials, &err) < 0) {
                bd_error("%s", err.msg);
                return BD_EXIT_FAIL;
        }
        const char *warning = NULL;
        if (run_refresh(s, r, *trials, &warning, &err) < 0) {
                bd_error("%s", err.msg);
                bd_run_release(r);
                bd_trials_free(*trials, r->ntrials);
                return BD_EXIT_FAIL;
        }
        if (warning)
                bd_warning("run %s: %s", r->id, warning);
        return 0;
}

/* datasets.c: staging jobs behind the HTTP API.
 *
 * One entry per dataset name that has had a job in this daemon's lifetime:
 * the job itself (running in its own thread, lib/stage/stage.h), kept after it
 * ends so that its problems can be read, until the next job of the same name
 * replaces it.  Everything else (what a previous daemon did, the last
 * verification, the manifest checksum) comes from the state files.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets.h"
#include "fs.h"
#include "log.h"
#include "stage/stage.h"
#include "strutil.h"

#define MAX_JOBS 64
#define PROBLEMS_SHOWN 100

struct ds_job {
        char name[72];
        struct bd_stage *job;
        enum bd_stage_mode mode;
        char *src, *dst;
        double started;                 /* epoch seconds */
        bool joined;                    /* stage_wait() done: the job's thread is gone */
        int result;
};

/* A dataset known at start from its state file (a job of an earlier benchd),
 * for /metrics until a job of this benchd takes its place there. */
struct ds_known {
        char name[72];
        uint64_t files, bytes, files_done, bytes_done, errors;
};

struct datasets {
        pthread_mutex_t lock;
        char *state_dir;                /* STATE_DIR/stage */
        struct ds_job jobs[MAX_JOBS];
        int njobs;
        struct ds_known *known;
        size_t nknown;
};

static const char *mode_name(enum bd_stage_mode m)
{
        return m == STAGE_VERIFY_ONLY ? "verify" : m == STAGE_MANIFEST_ONLY ? "manifest" : "stage";
}

/* Joins jobs whose thread has ended; logs how they ended.  Lock held. */
static void reap(struct datasets *ds)
{
        for (int i = 0; i < ds->njobs; i++) {
                struct ds_job *j = &ds->jobs[i];
                struct bd_stage_progress p;
                if (j->joined || !stage_wait_for(j->job, 0))
                        continue;
                j->result = stage_wait(j->job);
                j->joined = true;
                stage_progress(j->job, &p);
                if (p.state == STAGE_COMPLETE)
                        log_notice("dataset '%s': %s complete: %" PRIu64 " files, %" PRIu64 " copied, %" PRIu64
                                   " repaired", j->name, mode_name(j->mode), p.files_total, p.files_copied,
                                   p.files_repaired);
                else
                        log_warning("dataset '%s': %s %s: %s (%" PRIu64 " errors)", j->name, mode_name(j->mode),
                                    stage_state_name(p.state), stage_error(j->job) ? stage_error(j->job) : "see the problems",
                                    p.errors);
        }
}

static struct ds_job *find(struct datasets *ds, const char *name)
{
        for (int i = 0; i < ds->njobs; i++)
                if (streq(ds->jobs[i].name, name))
                        return &ds->jobs[i];
        return NULL;
}

/* Takes an entry out of the table (it must hold no job). */
static void slot_drop(struct datasets *ds, struct ds_job *j)
{
        struct ds_job *last = &ds->jobs[ds->njobs - 1];
        if (j != last)
                *j = *last;
        memset(last, 0, sizeof(*last));
        ds->njobs--;
}

static void job_release(struct ds_job *j)
{
        stage_free(j->job);
        j->job = NULL;
        free(j->src);
        free(j->dst);
        memset(j, 0, sizeof(*j));
}

/* The known entry of a name, added when there is none (NULL: name too long). */
static struct ds_known *known_for(struct datasets *ds, const char *name)
{
        if (strlen(name) >= sizeof(ds->known[0].name))
                return NULL;
        for (size_t i = 0; i < ds->nknown; i++)
                if (streq(ds->known[i].name, name))
                        return &ds->known[i];
        ds->known = xrealloc(ds->known, (ds->nknown + 1) * sizeof(*ds->known));
        struct ds_known *k = &ds->known[ds->nknown++];
        memset(k, 0, sizeof(*k));
        STR_COPY(k->name, name);
        return k;
}

/* Where a new job of that name goes: its old entry (finished), or a free
 * one, or the oldest finished one.  NULL when the name's job still runs
 * (ret_busy) or every entry runs.  Lock held, after reap(). */
static struct ds_job *slot_for(struct datasets *ds, const char *name, bool *ret_busy)
{
        struct ds_job *j = find(ds, name), *old = NULL;
        *ret_busy = false;
        if (j) {
                if (!j->joined) {
                        *ret_busy = true;
                        return NULL;
                }
                job_release(j);
                return j;
        }
        if (ds->njobs < MAX_JOBS)
                return &ds->jobs[ds->njobs++];
        for (int i = 0; i < ds->njobs; i++)
                if (ds->jobs[i].joined && (!old || ds->jobs[i].started < old->started))
                        old = &ds->jobs[i];
        if (old) {
                /* its numbers stay in /metrics */
                struct ds_known *k = known_for(ds, old->name);
                struct bd_stage_progress p;
                stage_progress(old->job, &p);
                if (k) {
                        k->files = p.files_total, k->bytes = p.bytes_total;
                        k->files_done = p.files_done, k->bytes_done = p.bytes_done;
                        k->errors = p.errors;
                }
                job_release(old);
        }
        return old;
}

/* Starts a job in slot j (lock held).  0, or a negative errno with err. */
static int job_start(struct datasets *ds, struct ds_job *j, const char *name, const struct bd_stage_opts *o,
                     struct bd_err *err)
{
        struct bd_stage *s = stage_new(o, err);
        if (!s)
                return -EINVAL;
        if (stage_start(s, err) < 0) {
                stage_free(s);
                return -EIO;
        }
        STR_COPY(j->name, name);
        j->job = s;
        j->mode = o->mode;
        j->src = o->src ? xstrdup(o->src) : NULL;
        j->dst = o->dst ? xstrdup(o->dst) : NULL;
        j->started = clock_wall();
        j->joined = false;
        log_notice("dataset '%s': %s started: %s -> %s", name, mode_name(o->mode), o->src ? o->src : "-",
                   o->dst ? o->dst : "-");
        return 0;
}

/* ---- where a destination may be ---- */

/* realpath() of the longest existing prefix of path, with the rest appended;
 * NULL when path is not absolute or climbs with "..". */
static char *resolve_dest(const char *path)
{
        if (path[0] != '/')
                return NULL;
        for (const char *p = path; *p; p++)
                if (p[0] == '/' && p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
                        return NULL;
        _cleanup_free_ char *prefix = xstrdup(path);
        size_t len = strlen(prefix);
        while (len > 1 && prefix[len - 1] == '/')
                prefix[--len] = '\0';
        for (;;) {
                char resolved[PATH_MAX];
                if (realpath(prefix, resolved)) {
                        const char *rest = path + strlen(prefix);
                        while (*rest == '/')
                                rest++;
                        if (!*rest)
                                return xstrdup(resolved);
                        return xasprintf("%s%s%s", resolved, streq(resolved, "/") ? "" : "/", rest);
                }
                char *slash = strrchr(prefix, '/');
                if (!slash || slash == prefix)
                        return xstrdup(path);   /* nothing exists but "/" */
                *slash = '\0';
        }
}

/* 0 when dst lies strictly under a directory of the allow list (space
 * separated); else -EPERM with the reason. */
static int dest_allowed(const char *allow, const char *dst, struct bd_err *err)
{
        _cleanup_free_ char *d = resolve_dest(dst);
        _cleanup_free_ char *list = xstrdup(allow ? allow : "");
        char *save = NULL;
        if (!d)
                return bd_err_set(err, -EINVAL, "destination '%s' must be an absolute path without '..'", dst);
        for (char *a = strtok_r(list, " \t", &save); a; a = strtok_r(NULL, " \t", &save)) {
                char ra[PATH_MAX];
                if (!realpath(a, ra))
                        continue;
                size_t n = strlen(ra);
                if (!strncmp(d, ra, n) && d[n] == '/' && d[n + 1])
                        return 0;
        }
        return bd_err_set(err, -EPERM, "destination '%s' is not under a directory of stage_allow (%s)", dst,
                          allow && *allow ? allow : "none");
}

/* ---- JSON of a dataset ---- */

static cJSON *time_or_null(double t)
{
        return t > 0 ? cJSON_CreateNumber(t) : cJSON_CreateNull();
}

/* What is known of a dataset: the job of this daemon when there is one, and
 * the state file.  NULL when neither exists.  Lock held. */
static cJSON *dataset_json(struct datasets *ds, const char *name, bool detail)
{
        struct ds_job *j = find(ds, name);
        struct bd_stage_record rec;
        bool have_rec = stage_record_load(ds->state_dir, name, &rec, NULL) == 0;
        cJSON *o;
        if (!j && !have_rec)
                return NULL;
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", name);
        struct bd_stage_progress p;
        if (j) {
                stage_progress(j->job, &p);
                /* a job whose thread has not set its state yet is running all the same */
                cJSON_AddStringToObject(o, "state", !j->joined && p.state == STAGE_IDLE ? "running"
                                                                                          : stage_state_name(p.state));
                cJSON_AddStringToObject(o, "job", mode_name(j->mode));
                cJSON_AddItemToObject(o, "source", j->src ? cJSON_CreateString(j->src) : cJSON_CreateNull());
                cJSON_AddItemToObject(o, "destination", j->dst ? cJSON_CreateString(j->dst) : cJSON_CreateNull());
                cJSON_AddNumberToObject(o, "started", j->started);
        } else {
                stage_record_progress(&rec, &p);
                cJSON_AddStringToObject(o, "state", stage_state_name(rec.state));
                cJSON_AddStringToObject(o, "job", mode_name(rec.mode));
                cJSON_AddItemToObject(o, "source", rec.src ? cJSON_CreateString(rec.src) : cJSON_CreateNull());
                cJSON_AddItemToObject(o, "destination", rec.dst ? cJSON_CreateString(rec.dst) : cJSON_CreateNull());
                cJSON_AddItemToObject(o, "started", time_or_null(rec.started));
        }
        cJSON_AddItemToObject(o, "progress", stage_progress_json(&p));
        if (!j || j->joined) {
                /* a running job's error is not known yet */
                const char *e = j ? stage_failure(j->job) : rec.error;
                cJSON_AddItemToObject(o, "error", e ? cJSON_CreateString(e) : cJSON_CreateNull());
        }
        if (have_rec) {
                char hex[33];
                cJSON_AddItemToObject(o, "finished", time_or_null(rec.finished));
                cJSON_AddItemToObject(o, "last_verified", time_or_null(rec.verified));
                if (rec.have_manifest) {
                        manifest_sum_hex(rec.manifest_sum, hex);
                        cJSON_AddStringToObject(o, "manifest_checksum", hex);
                } else
                        cJSON_AddNullToObject(o, "manifest_checksum");
                cJSON_AddNumberToObject(o, "suspect_files", (double)rec.nsuspects);
                stage_record_release(&rec);
        }
        if (detail && j && j->joined) {
                const struct bd_stage_problem *pr;
                cJSON_AddItemToObject(o, "problems", stage_problems_json(j->job, PROBLEMS_SHOWN));
                cJSON_AddNumberToObject(o, "problems_total", (double)stage_problems(j->job, &pr));
        }
        return o;
}

/* ---- the routes ---- */

static struct datasets *get_ds(struct daemon *d, struct http_response *rs)
{
        if (!d->datasets)
                http_error(rs, 503, "dataset staging is not available (state directory unusable)");
        return d->datasets;
}

static bool name_ok(struct http_request *rq, struct http_response *rs)
{
        if (!stage_name_valid(rq->params[0])) {
                http_error(rs, 400, "invalid dataset name '%s': 1 to 64 of A-Z a-z 0-9 . _ -, starting with a "
                                    "letter or digit", rq->params[0]);
                return false;
        }
        return true;
}

void api_datasets_list(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        struct datasets *ds = get_ds(d, rs);
        char **names = NULL;
        size_t n = 0;
        if (!ds)
                return;
        cJSON *a = cJSON_CreateArray();
        pthread_mutex_lock(&ds->lock);
        reap(ds);
        (void) stage_records(ds->state_dir, &names, &n);
        for (int i = 0; i < ds->njobs; i++) {
                bool listed = false;
                for (size_t k = 0; k < n; k++)
                        listed |= streq(names[k], ds->jobs[i].name);
                if (!listed) {
                        names = xrealloc(names, (n + 1) * sizeof(char *));
                        names[n++] = xstrdup(ds->jobs[i].name);
                }
        }
        for (size_t k = 0; k < n; k++) {
                cJSON *o = dataset_json(ds, names[k], false);
                if (o)
                        cJSON_AddItemToArray(a, o);
                free(names[k]);
        }
        pthread_mutex_unlock(&ds->lock);
        free(names);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddItemToObject(j, "datasets", a);
        http_json(rs, 200, j);
}

void api_dataset_get(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        struct datasets *ds = get_ds(d, rs);
        if (!ds || !name_ok(rq, rs))
                return;
        pthread_mutex_lock(&ds->lock);
        reap(ds);
        cJSON *o = dataset_json(ds, rq->params[0], true);
        pthread_mutex_unlock(&ds->lock);
        if (!o)
                http_error(rs, 404, "no dataset '%s' on this node", rq->params[0]);
        else
                http_json(rs, 200, o);
}


static const char *const stage_fields[] = { "source", "destination", "verify", "delete", "workers",
                                            "bwlimit_mbps", "fsync", "rehash", NULL };

/* Reads the options of a stage request into o; false after answering 400. */
static bool parse_stage(const cJSON *j, struct bd_stage_opts *o, struct http_response *rs)
{
        const cJSON *e;
        cJSON_ArrayForEach(e, j) {
                bool known = false;
                for (const char *const *f = stage_fields; *f; f++)
                        known |= streq(e->string, *f);
                if (!known) {
                        const char *near = str_closest_word(e->string, stage_fields);
                        http_error(rs, 400, "unknown field '%s'%s%s%s", e->string, near ? " (did you mean '" : "",
                                   near ? near : "", near ? "'?)" : "");
                        return false;
                }
        }
#define STR_FIELD(key, dst)                                                                             \
        do {                                                                                            \
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);                              \
                if (v && !cJSON_IsString(v)) {                                                          \
                        http_error(rs, 400, "'%s' must be a string", key);                              \
                        return false;                                                                   \
                }                                                                                       \
                if (v)                                                                                  \
                        dst = v->valuestring;                                                           \
        } while (0)
#define BOOL_FIELD(key, dst)                                                                            \
        do {                                                                                            \
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);                              \
                if (v && !cJSON_IsBool(v)) {                                                            \
                        http_error(rs, 400, "'%s' must be true or false", key);                         \
                        return false;                                                                   \
                }                                                                                       \
                if (v)                                                                                  \
                        dst = cJSON_IsTrue(v);                                                          \
        } while (0)
        STR_FIELD("source", o->src);
        STR_FIELD("destination", o->dst);
        BOOL_FIELD("verify", o->verify);
        BOOL_FIELD("delete", o->delete_extra);
        BOOL_FIELD("rehash", o->rehash);
        const char *fs = NULL;
        STR_FIELD("fsync", fs);
        if (fs && stage_fsync_policy_parse(fs, &o->fsync) < 0) {
                http_error(rs, 400, "'fsync' must be none, end or file, not '%s'", fs);
                return false;
        }
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "workers");
        if (w && (!cJSON_IsNumber(w) || w->valuedouble < 1 || w->valuedouble > 256 ||
                  w->valuedouble != floor(w->valuedouble))) {
                http_error(rs, 400, "'workers' must be an integer from 1 to 256");
                return false;
        }
        if (w)
                o->workers = (unsigned)w->valuedouble;
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "bwlimit_mbps");
        if (b && (!cJSON_IsNumber(b) || !(b->valuedouble >= 0) || b->valuedouble > 1e6)) {
                http_error(rs, 400, "'bwlimit_mbps' must be a number of MB/s from 0 (no limit) to 1000000");
                return false;
        }
        if (b)
                o->bwlimit = b->valuedouble * 1e6;
        return true;
#undef STR_FIELD
#undef BOOL_FIELD
}

/* Starts a job of the request's dataset; answers 202 with its state. */
static void start(struct daemon *d, struct datasets *ds, struct http_request *rq, struct http_response *rs,
                  struct bd_stage_opts *o)
{
        const char *name = rq->params[0];
        struct bd_err err;
        bool busy;
        pthread_mutex_lock(&d->lock);
        _cleanup_free_ char *allow = xstrdup(d->conf.stage_allow ? d->conf.stage_allow : "");
        pthread_mutex_unlock(&d->lock);
        if (o->dst[0] != '/') {
                http_error(rs, 400, "destination '%s' must be an absolute path", o->dst);
                return;
        }
        /* one spelling of each path, as the job records it ("/a/./b/" is "/a/b") */
        _cleanup_free_ char *dst = fs_path_clean(o->dst);
        _cleanup_free_ char *src = o->src ? fs_path_clean(o->src) : NULL;
        o->dst = dst;
        if (src && o->src[0] == '/')
                o->src = src;
        if (dest_allowed(allow, o->dst, &err) < 0) {
                http_error(rs, 403, "%s", err.msg);
                return;
        }
        if (o->src && o->src[0] != '/') {
                http_error(rs, 400, "source '%s' must be an absolute path", o->src);
                return;
        }
        struct stat st;
        if (o->src && o->mode == STAGE_COPY && stat(o->src, &st) < 0) {
                http_error(rs, 400, "source '%s': %s", o->src, strerror(errno));
                return;
        }
        if (o->src && o->mode == STAGE_COPY && !S_ISDIR(st.st_mode)) {
                http_error(rs, 400, "source '%s' is not a directory", o->src);
                return;
        }
        o->name = name;
        o->state_dir = ds->state_dir;
        pthread_mutex_lock(&ds->lock);
        reap(ds);
        struct ds_job *j = slot_for(ds, name, &busy);
        if (!j) {
                pthread_mutex_unlock(&ds->lock);
                if (busy)
                        http_error(rs, 409, "dataset '%s' has a job running; DELETE it to cancel", name);
                else
                        http_error(rs, 503, "%d staging jobs are running; try again later", MAX_JOBS);
                return;
        }
        if (job_start(ds, j, name, o, &err) < 0) {
                slot_drop(ds, j);
                pthread_mutex_unlock(&ds->lock);
                http_error(rs, 400, "%s", err.msg);
                return;
        }
        cJSON *out = dataset_json(ds, name, false);
        pthread_mutex_unlock(&ds->lock);
        http_json(rs, 202, out);
}

void api_dataset_stage(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        struct datasets *ds = get_ds(d, rs);
        struct bd_stage_opts o = { .mode = STAGE_COPY, .fsync = FSYNC_END };
        if (!ds || !name_ok(rq, rs))
                return;
        cJSON *j = http_body_json(rq, rs, true);
        if (!j)
                return;
        if (parse_stage(j, &o, rs)) {
                if (!o.src || !o.dst)
                        http_error(rs, 400, "a stage needs 'source' and 'destination'");
                else
                        start(d, ds, rq, rs, &o);
        }
        cJSON_Delete(j);
}

void api_dataset_verify(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        struct datasets *ds = get_ds(d, rs);
        struct bd_stage_opts o = { .mode = STAGE_VERIFY_ONLY };
        struct bd_stage_record rec;
        if (!ds || !name_ok(rq, rs))
                return;
        cJSON *j = http_body_json(rq, rs, false);
        if (!j)
                return;
        bool have_rec = stage_record_load(ds->state_dir, rq->params[0], &rec, NULL) == 0;
        if (parse_stage(j, &o, rs)) {
                _cleanup_free_ char *want = o.dst && o.dst[0] == '/' ? fs_path_clean(o.dst) : NULL;
                _cleanup_free_ char *have = have_rec && rec.dst ? fs_path_clean(rec.dst) : NULL;
                _cleanup_free_ char *want_src = o.src && o.src[0] == '/' ? fs_path_clean(o.src) : NULL;
                _cleanup_free_ char *have_src = have_rec && rec.mode == STAGE_COPY && rec.src ? fs_path_clean(rec.src)
                                                                                                : NULL;
                if (want && have && !streq(want, have))
                        /* a verify elsewhere would make the dataset's record point there */
                        http_error(rs, 409, "dataset '%s' is staged in '%s': verify checks that copy (leave out "
                                   "'destination'), or stage it to '%s' first", rq->params[0], rec.dst, o.dst);
                else if (want_src && have_src && !streq(want_src, have_src))
                        /* nor may it swap the manifest the copy is recorded against */
                        http_error(rs, 409, "dataset '%s' was staged from '%s': verify checks against that source "
                                   "(leave out 'source'), or stage it from '%s' first", rq->params[0], rec.src,
                                   o.src);
                else {
                        /* by default what the last stage staged, against its manifest */
                        if (!o.dst && have_rec)
                                o.dst = rec.dst;
                        if (!o.src && have_rec && rec.mode == STAGE_COPY)
                                o.src = rec.src;
                        if (!o.dst)
                                http_error(rs, 400, "nothing staged as '%s' here: give 'destination'",
                                           rq->params[0]);
                        else {
                                o.verify = true;
                                start(d, ds, rq, rs, &o);
                        }
                }
        }
        if (have_rec)
                stage_record_release(&rec);
        cJSON_Delete(j);
}

void api_dataset_cancel(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        struct datasets *ds = get_ds(d, rs);
        if (!ds || !name_ok(rq, rs))
                return;
        pthread_mutex_lock(&ds->lock);
        reap(ds);
        struct ds_job *j = find(ds, rq->params[0]);
        if (!j || j->joined) {
                pthread_mutex_unlock(&ds->lock);
                struct bd_stage_record rec;
                if (!j && stage_record_load(ds->state_dir, rq->params[0], &rec, NULL) < 0)
                        http_error(rs, 404, "no dataset '%s' here", rq->params[0]);
                else {
                        if (!j)
                                stage_record_release(&rec);
                        http_error(rs, 409, "dataset '%s' has no job running", rq->params[0]);
                }
                return;
        }
        stage_cancel(j->job);
        log_notice("dataset '%s': cancelling the %s", j->name, mode_name(j->mode));
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", j->name);
        cJSON_AddStringToObject(o, "state", "cancelling");
        pthread_mutex_unlock(&ds->lock);
        http_json(rs, 200, o);
}

/* ---- start and stop ---- */

/* Whether a process is staging or verifying into dst now: every job holds a
 * lock on its destination while it runs (a process that died, even one not
 * yet reaped, holds none; its process id may be anyone's by now). */
static bool dst_busy(const char *dst)
{
        _cleanup_close_ int fd = open(dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0)
                return false;
        return errno == EWOULDBLOCK;
}

/* A job left "running" that will not run again: failed, with the reason. */
static void not_resumed(struct datasets *ds, struct bd_stage_record *rec, const char *why)
{
        struct bd_err err;
        log_error("dataset '%s': not resumed: %s", rec->name, why);
        rec->state = STAGE_FAILED;
        rec->finished = clock_wall();
        free(rec->error);
        rec->error = xasprintf("not resumed: %s", why);
        if (stage_record_save(ds->state_dir, rec, &err) < 0)
                log_error("dataset '%s': %s", rec->name, err.msg);
}

static void remember(struct datasets *ds, const struct bd_stage_record *r)
{
        struct ds_known *k = known_for(ds, r->name);
        if (!k)
                return;
        k->files = r->files;
        k->bytes = r->bytes;
        /* what its last job accounted for: all of it once complete */
        bool complete = r->state == STAGE_COMPLETE;
        k->files_done = complete ? r->files : r->files_copied + r->files_present + r->files_repaired;
        k->bytes_done = complete ? r->bytes : r->bytes_copied;
        /* a verify-only job's findings are its suspects (it keeps the counts) */
        k->errors = r->errors > r->nsuspects ? r->errors : (uint64_t)r->nsuspects;
}

/* Jobs a previous benchd left "running" start again where they stopped; every
 * dataset with a state file is remembered for /metrics. */
static void resume(struct daemon *d, struct datasets *ds)
{
        char **names = NULL;
        size_t n = 0;
        pthread_mutex_lock(&d->lock);
        _cleanup_free_ char *allow = xstrdup(d->conf.stage_allow ? d->conf.stage_allow : "");
        pthread_mutex_unlock(&d->lock);
        (void) stage_records(ds->state_dir, &names, &n);
        for (size_t k = 0; k < n; k++) {
                struct bd_stage_record rec;
                struct bd_stage_opts o;
                struct bd_err err;
                bool busy;
                if (stage_record_load(ds->state_dir, names[k], &rec, &err) < 0) {
                        log_warning("dataset '%s': %s", names[k], err.msg);
                        free(names[k]);
                        continue;
                }
                if (rec.state != STAGE_RUNNING || rec.mode == STAGE_MANIFEST_ONLY)
                        ;
                else if (rec.dst && dst_busy(rec.dst))
                        log_notice("dataset '%s': '%s' is being staged by another process (%ld): left to it",
                                   names[k], rec.dst, rec.pid);
                else if (rec.dst && dest_allowed(allow, rec.dst, &err) < 0)
                        not_resumed(ds, &rec, err.msg);
                else {
                        stage_record_opts(&rec, ds->state_dir, &o);
                        struct ds_job *j = slot_for(ds, names[k], &busy);
                        log_notice("dataset '%s': resuming the %s that was running", names[k], mode_name(rec.mode));
                        if (!j)
                                not_resumed(ds, &rec, "too many jobs");
                        else if (job_start(ds, j, names[k], &o, &err) < 0) {
                                slot_drop(ds, j);
                                not_resumed(ds, &rec, err.msg);
                        }
                }
                /* for /metrics (hidden while a job of the name runs here) */
                remember(ds, &rec);
                stage_record_release(&rec);
                free(names[k]);
        }
        free(names);
}

struct datasets *datasets_new(struct daemon *d)
{
        struct datasets *ds = xcalloc(1, sizeof(*ds));
        pthread_mutex_init(&ds->lock, NULL);
        pthread_mutex_lock(&d->lock);
        ds->state_dir = xasprintf("%s/stage", d->conf.state_dir);
        pthread_mutex_unlock(&d->lock);
        int r = fs_mkdir_p(ds->state_dir, 0700);
        if (r < 0) {
                log_warning("cannot create '%s': %s: dataset staging is off", ds->state_dir, strerror(-r));
                free(ds->state_dir);
                free(ds);
                return NULL;
        }
        pthread_mutex_lock(&ds->lock);
        resume(d, ds);
        pthread_mutex_unlock(&ds->lock);
        return ds;
}

struct datasets *datasets_free(struct datasets *ds)
{
        if (!ds)
                return NULL;
        pthread_mutex_lock(&ds->lock);
        for (int i = 0; i < ds->njobs; i++)
                if (!ds->jobs[i].joined) {
                        log_notice("dataset '%s': %s suspended, to be resumed at the next start", ds->jobs[i].name,
                                   mode_name(ds->jobs[i].mode));
                        stage_suspend(ds->jobs[i].job);
                }
        for (int i = 0; i < ds->njobs; i++) {
                if (!ds->jobs[i].joined)
                        (void) stage_wait(ds->jobs[i].job);
                job_release(&ds->jobs[i]);
        }
        pthread_mutex_unlock(&ds->lock);
        pthread_mutex_destroy(&ds->lock);
        free(ds->known);
        free(ds->state_dir);
        free(ds);
        return NULL;
}

void datasets_metrics(struct daemon *d, struct bd_buf *out)
{
        struct datasets *ds = d->datasets;
        if (!ds)
                return;
        static const char *const names[] = { "dataset_running", "dataset_files_total", "dataset_files_done",
                                             "dataset_bytes_total", "dataset_bytes_done", "dataset_errors" };
        static const char *const helps[] = {
                "1 while a staging job of the dataset runs.", "Files the dataset's manifest lists.",
                "Files the current or last job accounted for.", "Bytes the dataset's manifest lists.",
                "Bytes the current or last job accounted for.", "Errors of the current or last job.",
        };
        pthread_mutex_lock(&ds->lock);
        reap(ds);
        for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
                metrics_family(out, names[k], "gauge", helps[k]);
                for (int i = 0; i < ds->njobs; i++) {
                        struct bd_stage_progress p;
                        double v[] = { 0, 0, 0, 0, 0, 0 };
                        stage_progress(ds->jobs[i].job, &p);
                        v[0] = !ds->jobs[i].joined;
                        v[1] = (double)p.files_total, v[2] = (double)p.files_done;
                        v[3] = (double)p.bytes_total, v[4] = (double)p.bytes_done, v[5] = (double)p.errors;
                        metrics_sample(out, names[k], v[k], 1, "name", ds->jobs[i].name);
                }
                /* datasets of earlier benchd runs, unless a job here took over */
                for (size_t i = 0; i < ds->nknown; i++) {
                        const struct ds_known *kn = &ds->known[i];
                        if (find(ds, kn->name))
                                continue;
                        double v[] = { 0, (double)kn->files, (double)kn->files_done, (double)kn->bytes,
                                       (double)kn->bytes_done, (double)kn->errors };
                        metrics_sample(out, names[k], v[k], 1, "name", kn->name);
                }
        }
        pthread_mutex_unlock(&ds->lock);
}

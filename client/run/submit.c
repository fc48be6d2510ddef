/* submit.c: submitting a run: resolve the system, check what can be checked
 * from here, render the script, claim a run directory, start it through the
 * scheduler (or as local processes), record it, and optionally follow it
 * (benchctl submit, sweeps and suites). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <pwd.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "benchctl.h"
#include "fs.h"
#include "json.h"
#include "launch.h"
#include "bd-paths.h"
#include "groups.h"
#include "render.h"
#include "run.h"
#include "scheduler.h"
#include "strutil.h"
#include "workload.h"

/* getpwuid_r: this runs beside libslurm, which looks users up too */
static char *user_name(void)
{
        struct passwd pw, *found = NULL;
        char buf[4096];
        if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &found) != 0 || !found)
                return xstrdup("?");
        return xstrdup(found->pw_name);
}

/* A kernel file system (sysfs, proc, cgroup...) takes no log files, though
 * access() lets root write there. */
static int check_not_pseudo(const char *dir, const char *d, struct bd_err *err)
{
        static const struct {
                long magic;
                const char *name;
        } pseudo[] = {
                { SYSFS_MAGIC, "sysfs" },         { PROC_SUPER_MAGIC, "proc" },  { CGROUP_SUPER_MAGIC, "cgroup" },
                { CGROUP2_SUPER_MAGIC, "cgroup2" }, { DEBUGFS_MAGIC, "debugfs" }, { SECURITYFS_MAGIC, "securityfs" },
                { TRACEFS_MAGIC, "tracefs" },     { BPF_FS_MAGIC, "bpf" },       { DEVPTS_SUPER_MAGIC, "devpts" },
        };
        struct statfs sf;
        if (statfs(d, &sf) < 0)
                return 0;
        for (size_t i = 0; i < ARRAY_SIZE(pseudo); i++)
                if ((long)sf.f_type == pseudo[i].magic)
                        return bd_err_set(err, -EROFS, "log directory '%s' is on %s, a kernel file system: no log "
                                          "files can be written there", dir, pseudo[i].name);
        return 0;
}

/* A writable log directory, created when missing; a dry run creates nothing
 * and checks the nearest directory that exists instead. */
static int check_logdir(const char *dir, bool create, struct bd_err *err)
{
        if (!create) {
                _cleanup_free_ char *d = xstrdup(dir);
                struct stat st;
                while (stat(d, &st) < 0 && (errno == ENOENT || errno == ENOTDIR) && strrchr(d, '/') &&
                       strcmp(d, "/")) {
                        char *slash = strrchr(d, '/');
                        if (slash == d)
                                slash[1] = '\0';
                        else
                                *slash = '\0';
                }
                if (stat(d, &st) < 0 && errno == ENOENT && !strchr(d, '/')) {
                        free(d); /* a relative name: created in the working directory */
                        d = xstrdup(".");
                }
                if (stat(d, &st) < 0)
                        return bd_err_set(err, -errno, "log directory '%s': %s", dir, strerror(errno));
                if (!S_ISDIR(st.st_mode))
                        return bd_err_set(err, -ENOTDIR, "log directory '%s': '%s' is not a directory", dir, d);
                if (access(d, W_OK | X_OK) == 0)
                        return check_not_pseudo(dir, d, err);
                if (streq(d, dir))
                        return bd_err_set(err, -errno, "log directory '%s' is not writable: %s", dir, strerror(errno));
                return bd_err_set(err, -errno, "log directory '%s' cannot be created: '%s' is not writable: %s", dir, d,
                                  strerror(errno));
        }
        int r = fs_mkdir_p(dir, 0755);
        if (r < 0)
                return bd_err_set(err, r, "log directory '%s': %s", dir, strerror(-r));
        if (access(dir, W_OK | X_OK) < 0)
                return bd_err_set(err, -errno, "log directory '%s' is not writable: %s", dir, strerror(errno));
        return check_not_pseudo(dir, dir, err);
}

/* Whether the system's trials may run on other hosts: Slurm, or mpirun with a
 * hostfile or a host other than this one. */
static bool runs_elsewhere(const struct bd_system *s)
{
        const char *launcher = sys_str(s->json, "launcher");
        if (!streq(launcher, "mpirun"))
                return streq(launcher, "slurm");
        if (sys_str(s->json, "mpirun.hostfile"))
                return true;
        const cJSON *h, *hosts = sys_get(s->json, "mpirun.hosts");
        const cJSON *list = cJSON_IsArray(hosts) ? hosts : NULL;
        cJSON_ArrayForEach(h, list)
                if (cJSON_IsString(h) && !streq(h->valuestring, "localhost") &&
                    strncmp(h->valuestring, "localhost:", 10) && strncmp(h->valuestring, "127.", 4))
                        return true;
        return false;
}

/* The trainer the script will run (outside a container).  Programs from
 * this build (no paths.bin) must include the workload's: a workload whose
 * trainer this build does not make is refused.  Otherwise the program must be
 * here for runs started here (the local launcher, mpirun on this host only);
 * under Slurm or on other hosts it may be a node-local path that this host
 * lacks: a warning then. */
static int check_trainer(const struct bd_system *s, const struct render_opts *ro, struct bd_err *err)
{
        const struct workload *w = workload_find(ro->workload);
        _cleanup_free_ char *prog = render_trainer_path(s, ro);
        if (!prog)
                return 0;
        if (!w->built && !sys_str(s->json, "paths.bin"))
                return bd_err_set(err, -ENOENT, "%s: the %s trainer is not built: this build of benchd has no %s "
                                  "(a container image or a paths.bin that has it can run it)", w->name, w->title,
                                  w->program);
        if (access(prog, X_OK) == 0)
                return 0;
        int e = errno;
        if (runs_elsewhere(s)) {
                bd_warning("%s: no trainer '%s' on this host (%s): the nodes must have it (paths.bin)", ro->workload,
                           prog, strerror(e));
                return 0;
        }
        return bd_err_set(err, -e, "%s: no trainer '%s' (%s); set paths.bin to where benchd's programs are installed",
                          ro->workload, prog, strerror(e));
}

/* A file or directory the run needs (what: "dataset", "pretrained
 * weights"): here, or refused for a run started here, a warning for nodes
 * that may have their own. */
static int check_input(const struct bd_system *s, const char *workload, const char *what, const char *path,
                       const char *hint, struct bd_err *err)
{
        if (access(path, F_OK) == 0)
                return 0;
        int e = errno;
        if (runs_elsewhere(s)) {
                bd_warning("%s: no %s '%s' on this host (%s): the nodes must have it", workload, what, path,
                           strerror(e));
                return 0;
        }
        return bd_err_set(err, -e, "%s: no %s '%s' (%s)%s", workload, what, path, strerror(e), hint);
}

/* What can be checked from here before a run starts: its dataset's tree
 * (the workload file's data_layout; a dataset staged on the nodes is the
 * stage's to check) and the files its keys name in paths.pretrained. */
static int check_inputs(const struct bd_system *s, const struct render_opts *ro, struct bd_err *err)
{
        const struct workload *w = workload_find(ro->workload);
        const cJSON *j = s->json, *sec = sys_get(j, w->section), *k, *f;
        if (w->dataset && !sys_bool(j, "staging.require")) {
                _cleanup_free_ char *data = expand_home(sys_str(j, "paths.data"));
                int r = check_input(s, w->name, "dataset directory", data, ": give it with --data or paths.data",
                                    err);
                if (r < 0 || access(data, F_OK) < 0)
                        return r;
                cJSON_ArrayForEach(f, json_get(w->spec, "data_layout")) {
                        _cleanup_free_ char *p = xasprintf("%s/%s", data, f->valuestring);
                        r = check_input(s, w->name, "dataset file", p, ": not the dataset's layout (benchctl "
                                        "dataset check)", err);
                        if (r < 0)
                                return r;
                }
        }
        cJSON_ArrayForEach(k, json_get(w->spec, "keys")) {
                const cJSON *v = json_get(sec, k->string);
                if (!streq(json_str(k, "path", ""), "pretrained") || !cJSON_IsString(v) || !*v->valuestring)
                        continue;
                _cleanup_free_ char *dir = expand_home(sys_str(j, "paths.pretrained"));
                _cleanup_free_ char *p = v->valuestring[0] == '/' ? xstrdup(v->valuestring)
                                                                  : xasprintf("%s/%s", dir, v->valuestring);
                _cleanup_free_ char *hint = xasprintf(": '%s.%s' names it in paths.pretrained", w->section,
                                                      k->string);
                int r = check_input(s, w->name, "pretrained weights", p, hint, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A new run's directory, claimed with mkdir(2): an id that another
 * submission drew in the same second (the ids have 16 random bits) is drawn
 * again, so that two runs never share an id or a directory. */
static int claim_run_dir(const char *home, char **ret_id, char **ret_dir, struct bd_err *err)
{
        _cleanup_free_ char *runs = xasprintf("%s/runs", home);
        int r = fs_mkdir_p(runs, 0755);
        if (r < 0)
                return bd_err_set(err, r, "cannot create '%s': %s", runs, strerror(-r));
        for (int i = 0; i < 64; i++) {
                char *id = run_id_new(), *dir = xasprintf("%s/%s", runs, id);
                if (mkdir(dir, 0755) == 0) {
                        *ret_id = id;
                        *ret_dir = dir;
                        return 0;
                }
                r = -errno;
                free(id);
                if (r != -EEXIST) {
                        bd_err_set(err, r, "cannot create '%s': %s", dir, strerror(-r));
                        free(dir);
                        return r;
                }
                free(dir);
        }
        return bd_err_set(err, -EEXIST, "no free run id in '%s' after 64 tries", runs);
}

/* One submission, from its claimed run directory to its recorded run.  The
 * steps below fill it in order, each returning 0 or the exit status of its
 * failure (after printing it); submission_release(), its cleanup, frees it
 * and removes what a submission that failed before its job started leaves:
 * its run directory. */
struct submission {
        struct bd_system sys;
        const char *workload;
        int trials;
        long tenants, tenant_cpus;      /* render_tenants() */
        bool dry, slurm;
        const char *launcher;
        char *home;                     /* $BENCHD_HOME */
        char *id, *rundir;              /* claimed: the run's id and directory */
        char *logdir;
        char *name;                     /* the job's: benchd-WORKLOAD-SYSTEM */
        char *bin;                      /* this program's directory */
        struct render_opts ro;
        struct bd_buf script;
        char *script_path, *config_path;
        char *workload_path;            /* RUNDIR/workload.json: a workload file not bundled, as resolved */
        char *job_id, *output;          /* launched */
        long pid;
        double submitted;
        bool started;                   /* a job runs: its run directory stays */
        /* prepared by keep_run(), beside the launch on Slurm */
        char *config, *user, *host;
        bool script_written;
        struct bd_store store;
        struct bd_err keep_err;
        int keep_r;
};

static void submission_release(struct submission *sub)
{
        if (sub->rundir && !sub->started) {
                if (sub->script_path)
                        (void) unlink(sub->script_path);
                if (sub->config_path)
                        (void) unlink(sub->config_path);
                if (sub->workload_path)
                        (void) unlink(sub->workload_path);
                (void) rmdir(sub->rundir);
        }
        if (sub->store.db)
                store_close(&sub->store);
        buf_release(&sub->script);
        free(sub->home);
        free(sub->id);
        free(sub->rundir);
        free(sub->logdir);
        free(sub->name);
        free(sub->bin);
        free(sub->script_path);
        free(sub->config_path);
        free(sub->workload_path);
        free(sub->job_id);
        free(sub->output);
        free(sub->config);
        free(sub->user);
        free(sub->host);
        system_release(&sub->sys);
}

/* Step 1: the run's id and directory, claimed before rendering (the id is in
 * the script); a dry run draws an id and claims nothing. */
static int claim(struct submission *sub)
{
        struct bd_err err;
        if (sub->dry) {
                sub->id = run_id_new();
                return 0;
        }
        if (claim_run_dir(sub->home, &sub->id, &sub->rundir, &err) < 0)
                return bd_error("%s", err.msg), BD_EXIT_FAIL;
        return 0;
}

/* Step 2: the launch script, and what must hold for it to run: the trainer
 * and a writable log directory. */
static int render(struct submission *sub)
{
        struct bd_err err;
        sub->ro = (struct render_opts){
                .workload = sub->workload, .trials = sub->trials, .run_id = sub->id,
                .bin_dir = sub->bin ? sub->bin : BD_BINDIR, .version = PACKAGE_VERSION,
        };
        _cleanup_buf_ struct bd_buf warnings = BD_BUF_INIT;
        sub->ro.warnings = &warnings;
        int r = render_script(&sub->sys, &sub->ro, &sub->script, &err);
        sub->ro.warnings = NULL;
        print_warnings(&warnings);
        if (r < 0 || check_trainer(&sub->sys, &sub->ro, &err) < 0 || check_inputs(&sub->sys, &sub->ro, &err) < 0)
                return bd_error("%s", err.msg), BD_EXIT_CONFIG;
        /* tenants: each round's tenants are trials of their own */
        sub->tenants = render_tenants(&sub->sys, sub->workload, &sub->tenant_cpus, &err);
        sub->trials *= (int)(sub->tenants ? sub->tenants : 1);
        /* node groups: each group is a trial */
        struct node_groups groups;
        if (render_groups(&sub->sys, sub->workload, &groups, NULL, &err) == 0 && groups.ngroups) {
                sub->trials = groups.ngroups;
                sub->ro.trials = groups.ngroups;
        }
        node_groups_release(&groups);
        if (check_logdir(sub->logdir, !sub->dry, &err) < 0)
                return bd_error("%s", err.msg), BD_EXIT_FAIL;
        return 0;
}

/* --dry-run: where the job would run (Slurm: the controller's answer to an
 * sbatch --test-only), from a script written to a temporary file. */
static int dry_run(struct submission *sub)
{
        struct bd_err err;
        int r = 0;
        char tmpl[] = "/tmp/benchd-dry-run.XXXXXX";
        int fd = mkstemp(tmpl);
        if (fd >= 0)
                close(fd);
        fs_write_atomic(tmpl, sub->script.s, sub->script.len, 0755, NULL);
        const cJSON *j = sub->sys.json;
        if (sub->slurm) {
                struct sched_request req = { j, sub->name, NULL, sub->script.s, tmpl, sub->logdir, NULL,
                                             sub->tenants, sub->tenant_cpus };
                _cleanup_free_ char *where = NULL;
                if ((r = slurm_will_run(&req, &where, &err)) < 0)
                        bd_error("%s", err.msg);
                else
                        printf("dry run: %s on %s: %s (nothing submitted)\n", sub->workload, sub->sys.name, where);
        } else {
                long ranks = sys_int(j, "nodes") * sys_int(j, "ranks_per_node");
                printf("dry run: %s on %s would start %ld rank%s with %s on %s (nothing started)\n", sub->workload,
                       sub->sys.name, ranks, ranks == 1 ? "" : "s", sys_str(j, "mpirun.command"),
                       streq(sub->launcher, "local") ? "this machine" : "the configured hosts");
        }
        (void) unlink(tmpl);
        return r < 0 ? exit_for_error(r) : 0;
}

/* What a submission keeps besides its job: the config as text, copies of
 * the script and config in the run's directory (no fsync, no temporary
 * names: nothing reads the directory before the store names it, after these
 * are complete), who submitted it from where, and the results store, open.
 * On Slurm this runs in a thread while the main thread submits (libslurm's
 * work, then the controller's reply): it takes no time of its own there.  A
 * failure here then cancels the job. */
static void *keep_run(void *p)
{
        struct submission *sub = p;
        sub->config = cJSON_Print(sub->sys.json);
        sub->user = user_name();
        sub->host = host_name();
        /* a workload file of the search path: the run keeps it, so that its
         * result is read by the rules it ran with, wherever reports run */
        const struct workload *w = workload_find(sub->workload);
        _cleanup_free_ char *wtext = w && !str_has_suffix(w->file, "(bundled)") ? cJSON_Print(w->spec) : NULL;
        if (wtext)
                sub->workload_path = xasprintf("%s/workload.json", sub->rundir);
        if ((!sub->script_written &&
             fs_write_new(sub->script_path, sub->script.s, sub->script.len, 0755, &sub->keep_err) < 0) ||
            fs_write_new(sub->config_path, sub->config, strlen(sub->config), 0644, &sub->keep_err) < 0 ||
            (wtext && fs_write_new(sub->workload_path, wtext, strlen(wtext), 0644, &sub->keep_err) < 0) ||
            store_open(&sub->store, sub->home, &sub->keep_err) < 0)
                sub->keep_r = -1;
        return NULL;
}

/* Starts fn(arg) in a thread that runs on another CPU than the caller's: a
 * new thread starts on its parent's CPU, where the two take turns while
 * another CPU idles until the scheduler balances them (measured on
 * submission: no gain at all unplaced; 0.5 ms, all of the thread's work,
 * kept off the caller's CPU).  False where there is no other CPU to run on,
 * or no thread. */
static bool start_elsewhere(pthread_t *ret, void *(*fn)(void *), void *arg)
{
        cpu_set_t cpus;
        int here = sched_getcpu();
        if (here < 0 || sched_getaffinity(0, sizeof(cpus), &cpus) < 0)
                return false;
        CPU_CLR(here, &cpus);
        pthread_attr_t a;
        if (CPU_COUNT(&cpus) == 0 || pthread_attr_init(&a) != 0)
                return false;
        bool ok = pthread_attr_setaffinity_np(&a, sizeof(cpus), &cpus) == 0 && pthread_create(ret, &a, fn, arg) == 0;
        pthread_attr_destroy(&a);
        return ok;
}

/* A job that nothing records would run unseen: it is stopped, and the error
 * says whether it was; one that could not be stopped keeps its run
 * directory. */
static void stop_unrecorded(struct submission *sub, const char *why)
{
        struct bd_err cerr;
        _cleanup_free_ char *what = sub->slurm ? xasprintf("Slurm job %s", sub->job_id)
                                               : xasprintf("process %ld", sub->pid);
        if ((sub->slurm ? slurm_cancel(sub->job_id, &cerr) : local_cancel(sub->rundir, sub->pid, true, &cerr)) < 0) {
                bd_error("%s; the run could not be recorded and its %s could not be cancelled (%s): cancel it by "
                         "hand", why, what, cerr.msg);
                return;
        }
        bd_error("%s; the run could not be recorded: its %s was cancelled", why, what);
        sub->started = false;
}

/* Steps 3 and 4: write the run directory and start the job.  Where the
 * launcher reads the script from its file (local, mpirun, the sbatch
 * command) the script is written first; on Slurm the rest of the run
 * directory is written while libslurm submits. */
static int launch(struct submission *sub)
{
        struct bd_err err;
        sub->script_path = xasprintf("%s/script.sh", sub->rundir);
        sub->config_path = xasprintf("%s/config.json", sub->rundir);
        if (!sub->slurm || streq(slurm_backend(), "sbatch")) {
                if (fs_write_new(sub->script_path, sub->script.s, sub->script.len, 0755, &err) < 0)
                        return bd_error("%s", err.msg), BD_EXIT_FAIL;
                sub->script_written = true;
        }
        pthread_t keeper;
        bool threaded = sub->slurm && start_elsewhere(&keeper, keep_run, sub);
        if (!threaded && (keep_run(sub), sub->keep_r < 0))
                return bd_error("%s", sub->keep_err.msg), BD_EXIT_FAIL;
        sub->submitted = (double)time(NULL);
        int r;
        if (sub->slurm) {
                sub->output = xasprintf("%s/%s_slurm-%%j.out", sub->logdir, sub->id);
                /* the comment names the run in squeue -o %k and sacct */
                _cleanup_free_ char *comment = xasprintf("benchd run %s", sub->id);
                struct sched_request req = { sub->sys.json, sub->name, comment, sub->script.s, sub->script_path,
                                             sub->logdir, sub->output, sub->tenants, sub->tenant_cpus };
                r = slurm_submit(&req, &sub->job_id, &err);
        } else {
                sub->output = xasprintf("%s/job.out", sub->rundir);
                r = local_start(sub->script_path, sub->rundir, sub->output, &sub->pid, &err);
        }
        if (threaded)
                pthread_join(keeper, NULL);
        if (r < 0)
                return bd_error("%s", err.msg), exit_for_error(r);
        sub->started = true;
        if (sub->keep_r < 0)
                return stop_unrecorded(sub, sub->keep_err.msg), BD_EXIT_FAIL;
        return 0;
}

/* Step 5: the run and its trials in the results store, committed before
 * benchctl says the run started. */
static int record(struct submission *sub)
{
        struct bd_err err;
        struct bd_run run = {
                .id = sub->id, .system = sub->sys.name, .workload = (char *)sub->workload,
                .launcher = (char *)sub->launcher, .config = sub->config, .script = sub->script.s,
                .job_id = sub->job_id, .pid = sub->pid, .user = sub->user, .host = sub->host,
                .version = PACKAGE_VERSION, .logdir = sub->logdir, .rundir = sub->rundir,
                .submit_time = sub->submitted, .state = sub->slurm ? ST_PENDING : ST_RUNNING, .exit_code = -1,
                .ntrials = sub->trials,
        };
        struct bd_trial *t = xcalloc((size_t)sub->trials, sizeof(*t));
        for (int i = 0; i < sub->trials; i++) {
                t[i].trial = i + 1;
                t[i].state = ST_PENDING;
                t[i].exit_code = -1;
                t[i].log_path = xasprintf("%s/%s_%d.log", sub->logdir, sub->id, i + 1);
        }
        int r = store_add_run(&sub->store, &run, t, &err);
        bd_trials_free(t, sub->trials);
        if (r < 0)
                return stop_unrecorded(sub, err.msg), BD_EXIT_FAIL;
        if (sub->slurm)
                printf("run %s submitted: Slurm job %s (%s), %d trial%s\n", sub->id, sub->job_id, slurm_backend(),
                       sub->trials, sub->trials == 1 ? "" : "s");
        else
                printf("run %s started: process %ld, %d trial%s\n", sub->id, sub->pid, sub->trials,
                       sub->trials == 1 ? "" : "s");
        fflush(stdout);
        return 0;
}

/* KEY=DIR for a directory given on the command line: a relative one is
 * made absolute here (the job runs elsewhere: Slurm starts it in the log
 * directory, and later commands run from anywhere) */
char *path_set(const char *key, const char *dir)
{
        if (dir[0] == '~' || !dir[0])
                return xasprintf("%s=%s", key, dir);
        _cleanup_free_ char *abs = fs_path_clean(dir);
        return xasprintf("%s=%s", key, abs);
}

int submit_run(struct bd_ctx *ctx, const char *system, const char *workload, char **sets, int runs, bool dry,
               enum follow_mode wait, char **ret_id)
{
        _cleanup_(submission_release) struct submission sub = { .workload = workload, .dry = dry,
                                                                .script = BD_BUF_INIT };
        const struct workload *w;
        int ret = ctx_workload(workload, &w);
        if (ret)
                return ret;
        ret = ctx_load_system(ctx, system, sets, &sub.sys);
        if (ret)
                return ret;
        const cJSON *j = sub.sys.json;
        sub.launcher = sys_str(j, "launcher");
        sub.slurm = streq(sub.launcher, "slurm");
        sub.trials = runs > 0 ? runs : (int)sys_int(j, "trials");
        sub.home = store_home();
        sub.bin = fs_exe_dir();
        sub.logdir = expand_home(sys_str(j, "paths.logs"));
        sub.name = xasprintf("benchd-%s-%s", sub.workload, sub.sys.name);
        if (!sub.slurm && !dry && !wait && getpid() == 1) {
                /* the kernel ends every process of the namespace with it */
                bd_error("running as process 1 of a PID namespace (a container without an init): a run left in "
                         "the background would be killed when benchctl exits; use --wait, or give the container "
                         "an init (docker run --init)");
                ret = BD_EXIT_FAIL;
        } else if (!(ret = claim(&sub)) && !(ret = render(&sub))) {
                if (dry)
                        ret = dry_run(&sub);
                else if (!(ret = launch(&sub)) && !(ret = record(&sub))) {
                        if (ret_id)
                                *ret_id = xstrdup(sub.id);
                        if (wait)
                                ret = wait_for_run(&sub.store, sub.id, wait);
                }
        }
        return ret;
}

/* cmd-submit.c: benchctl submit: render, start, record, and optionally wait. */
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
#include "paths.h"
#include "render.h"
#include "run.h"
#include "scheduler.h"
#include "strutil.h"
#include "workload.h"

#define OPT_DATA 330
#define OPT_LOGDIR 331
#define OPT_WAIT 332
#define OPT_DRY 333

static const struct bd_option options[] = {
        { "system", 's', "SYSTEM", "system to run on" },
        { "runs", 'n', "N", "number of trials (default: the system's 'trials')" },
        { "data", OPT_DATA, "DIR", "dataset directory (sets paths.data)" },
        { "logdir", OPT_LOGDIR, "DIR", "log directory on shared storage (sets paths.logs)" },
        { "wait", OPT_WAIT, NULL, "follow the run until it ends; exit with its outcome" },
        { "dry-run", OPT_DRY, NULL, "render and check where it would run; record nothing" },
        COMMON_SYSTEM_OPTIONS,
        { 0 }
};

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
        int r = mkdir_p(dir, 0755);
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

/* A new run's directory, claimed with mkdir(2): an id that another
 * submission drew in the same second (the ids have 16 random bits) is drawn
 * again, so that two runs never share an id or a directory. */
static int claim_run_dir(const char *home, char **ret_id, char **ret_dir, struct bd_err *err)
{
        _cleanup_free_ char *runs = xasprintf("%s/runs", home);
        int r = mkdir_p(runs, 0755);
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

/* What a submission keeps besides its job: the config as text, copies of
 * the script and config in the run's directory (no fsync, no temporary
 * names: nothing reads the directory before the store names it, after these
 * are complete), who submitted it from where, and the results store, open.
 * On Slurm this runs in a thread while the main thread submits (libslurm's
 * work, then the controller's reply): it takes no time of its own there.  A
 * failure here then cancels the job.  The script is written first where the
 * launcher reads it from the file. */
struct keep {
        const cJSON *json;
        const char *home, *script_path, *script, *config_path;
        size_t script_len;
        char *config, *user, *host; /* set here */
        bool script_written;
        struct bd_store *store;
        struct bd_err err;
        int r;
};

static void *keep_run(void *p)
{
        struct keep *k = p;
        k->config = cJSON_Print(k->json);
        k->user = user_name();
        k->host = host_name();
        if ((!k->script_written &&
             write_file_new(k->script_path, k->script, k->script_len, 0755, &k->err) < 0) ||
            write_file_new(k->config_path, k->config, strlen(k->config), 0644, &k->err) < 0 ||
            store_open(k->store, k->home, &k->err) < 0)
                k->r = -1;
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
 * says whether it was. */
static void stop_unrecorded(bool slurm, const char *job_id, const char *rundir, long pid, const char *why,
                            bool *keep_dir)
{
        struct bd_err cerr;
        _cleanup_free_ char *what = slurm ? xasprintf("Slurm job %s", job_id) : xasprintf("process %ld", pid);
        if ((slurm ? slurm_cancel(job_id, &cerr) : local_cancel(rundir, pid, true, &cerr)) < 0) {
                bd_error("%s; the run could not be recorded and its %s could not be cancelled (%s): cancel it by "
                         "hand", why, what, cerr.msg);
                *keep_dir = true;
        } else {
                bd_error("%s; the run could not be recorded: its %s was cancelled", why, what);
        }
}

/* What a submission that failed leaves of its run directory: nothing. */
static void discard_run_dir(const char *dir, const char *script_path, const char *config_path)
{
        if (script_path)
                (void) unlink(script_path);
        if (config_path)
                (void) unlink(config_path);
        (void) rmdir(dir);
}

int wait_for_run(struct bd_store *store, const char *id, bool json);

/* KEY=DIR for a directory given on the command line: a relative one is
 * made absolute here (the job runs elsewhere: Slurm starts it in the log
 * directory, and later commands run from anywhere) */
static char *path_set(const char *key, const char *dir)
{
        if (dir[0] == '~' || !dir[0])
                return xasprintf("%s=%s", key, dir);
        _cleanup_free_ char *abs = path_clean(dir);
        return xasprintf("%s=%s", key, abs);
}

int cmd_submit(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        struct bd_opts o = { argc, argv, options, cmd, NULL };
        const char *system = NULL;
        long runs = 0;
        bool wait = false, dry = false;
        _cleanup_free_ char **sets = NULL;
        _cleanup_free_ char *data_set = NULL, *log_set = NULL;
        size_t nsets = 0;
        const char *arg;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 'h':
                        opts_release(&o);
                        return BD_EXIT_OK;
                case 's': system = arg; break;
                case OPT_WAIT: wait = true; break;
                case OPT_DRY: dry = true; break;
                case OPT_SYSTEMS_DIR: ctx->systems_dir = arg; break;
                case OPT_SET: sets_add(&sets, &nsets, arg); break;
                case OPT_DATA:
                        free(data_set);
                        data_set = path_set("paths.data", arg);
                        break;
                case OPT_LOGDIR:
                        free(log_set);
                        log_set = path_set("paths.logs", arg);
                        break;
                case 'n':
                        if (opts_number(cmd, "runs", arg, 1, 100, &runs) < 0)
                                return opts_release(&o), BD_EXIT_USAGE;
                        break;
                }
        }
        int next = opts_finish(&o, c, 1, 1, workload_operand());
        if (next < 0)
                return BD_EXIT_USAGE;
        if (!system)
                return usage_error(cmd, "missing --system SYSTEM");
        if (data_set)
                sets_add(&sets, &nsets, data_set);
        if (log_set)
                sets_add(&sets, &nsets, log_set);

        struct bd_system s;
        int ret = ctx_load_system(ctx, system, sets, &s);
        if (ret)
                return ret;
        struct bd_err err;
        const char *launcher = sys_str(s.json, "launcher");
        bool slurm = streq(launcher, "slurm");
        _cleanup_free_ char *bin = exe_dir();
        _cleanup_buf_ struct bd_buf script = BD_BUF_INIT;
        _cleanup_free_ char *home = store_home();
        _cleanup_free_ char *id = NULL, *rundir = NULL;
        _cleanup_free_ char *logdir = expand_home(sys_str(s.json, "paths.logs"));
        _cleanup_free_ char *script_path = NULL, *job_id = NULL, *output = NULL;
        _cleanup_free_ char *config_path = NULL;
        _cleanup_free_ char *name = xasprintf("benchd-%s-%s", argv[next], s.name);
        struct bd_store store = { 0 };
        struct keep k = { .json = s.json, .home = home, .store = &store };
        long pid = 0;
        if (!slurm && !dry && !wait && getpid() == 1) {
                /* the kernel ends every process of the namespace with it */
                bd_error("running as process 1 of a PID namespace (a container without an init): a run left in "
                         "the background would be killed when benchctl exits; use --wait, or give the container "
                         "an init (docker run --init)");
                system_release(&s);
                return BD_EXIT_FAIL;
        }
        int trials = runs > 0 ? (int)runs : (int)sys_int(s.json, "trials");
        bool keep = false; /* the run directory, once the job started */

        /* a submission claims its run directory (and so its id) before
         * rendering: the id is in the script */
        if (dry)
                id = run_id_new();
        else if (claim_run_dir(home, &id, &rundir, &err) < 0) {
                bd_error("%s", err.msg);
                ret = BD_EXIT_FAIL;
                goto out;
        }
        struct render_opts ro = {
                .workload = argv[next], .trials = (int)runs, .run_id = id,
                .bin_dir = bin ? bin : BD_BINDIR, .version = PACKAGE_VERSION,
        };
        if (render_script(&s, &ro, &script, &err) < 0 || check_trainer(&s, &ro, &err) < 0 ||
            check_logdir(logdir, !dry, &err) < 0) {
                bd_error("%s", err.msg);
                ret = BD_EXIT_FAIL;
                goto out;
        }
        if (dry) {
                char tmpl[] = "/tmp/benchd-dry-run.XXXXXX";
                int fd = mkstemp(tmpl);
                if (fd >= 0)
                        close(fd);
                write_file_atomic(tmpl, script.s, script.len, 0755, NULL);
                if (slurm) {
                        struct sched_request req = { s.json, name, NULL, script.s, tmpl, logdir, NULL };
                        _cleanup_free_ char *where = NULL;
                        if (slurm_will_run(&req, &where, &err) < 0) {
                                bd_error("%s", err.msg);
                                ret = BD_EXIT_FAIL;
                        } else
                                printf("dry run: %s on %s: %s (nothing submitted)\n", argv[next], s.name, where);
                } else {
                        printf("dry run: %s on %s would start %ld rank%s with %s on %s (nothing started)\n", argv[next],
                               s.name, sys_int(s.json, "nodes") * sys_int(s.json, "ranks_per_node"),
                               sys_int(s.json, "nodes") * sys_int(s.json, "ranks_per_node") == 1 ? "" : "s",
                               sys_str(s.json, "mpirun.command"),
                               streq(launcher, "local") ? "this machine" : "the configured hosts");
                }
                (void) unlink(tmpl);
                goto out;
        }

        script_path = xasprintf("%s/script.sh", rundir);
        config_path = xasprintf("%s/config.json", rundir);
        k.script_path = script_path, k.config_path = config_path;
        k.script = script.s, k.script_len = script.len;
        pthread_t keeper;
        bool threaded = false;
        if (!slurm || streq(slurm_backend(), "sbatch")) {
                /* the launcher reads the script from its file */
                if (write_file_new(script_path, script.s, script.len, 0755, &err) < 0) {
                        bd_error("%s", err.msg);
                        ret = BD_EXIT_FAIL;
                        goto out;
                }
                k.script_written = true;
        }
        if (slurm)
                threaded = start_elsewhere(&keeper, keep_run, &k);
        if (!threaded && (keep_run(&k), k.r < 0)) {
                bd_error("%s", k.err.msg);
                ret = BD_EXIT_FAIL;
                goto out;
        }
        double submitted = (double)time(NULL);
        int r;
        if (slurm) {
                output = xasprintf("%s/%s_slurm-%%j.out", logdir, id);
                /* the comment names the run in squeue -o %k and sacct */
                _cleanup_free_ char *comment = xasprintf("benchd run %s", id);
                struct sched_request req = { s.json, name, comment, script.s, script_path, logdir, output };
                r = slurm_submit(&req, &job_id, &err);
        } else {
                output = xasprintf("%s/job.out", rundir);
                r = local_start(script_path, rundir, output, &pid, &err);
        }
        if (threaded)
                pthread_join(keeper, NULL);
        if (r < 0) {
                bd_error("%s", err.msg);
                ret = BD_EXIT_FAIL;
                goto out;
        }
        if (k.r < 0) {
                stop_unrecorded(slurm, job_id, rundir, pid, k.err.msg, &keep);
                ret = BD_EXIT_FAIL;
                goto out;
        }
        keep = true;

        struct bd_run run = {
                .id = id, .system = s.name, .workload = argv[next], .launcher = (char *)launcher,
                .config = k.config, .script = script.s, .job_id = job_id, .pid = pid,
                .user = k.user, .host = k.host, .version = PACKAGE_VERSION,
                .logdir = logdir, .rundir = rundir, .submit_time = submitted,
                .state = slurm ? ST_PENDING : ST_RUNNING, .exit_code = -1, .ntrials = trials,
        };
        struct bd_trial *t = xcalloc((size_t)trials, sizeof(*t));
        for (int i = 0; i < trials; i++) {
                t[i].trial = i + 1;
                t[i].state = ST_PENDING;
                t[i].exit_code = -1;
                t[i].log_path = xasprintf("%s/%s_%d.log", logdir, id, i + 1);
        }
        r = store_add_run(&store, &run, t, &err);
        trials_free(t, trials);
        if (r < 0) {
                stop_unrecorded(slurm, job_id, rundir, pid, err.msg, &keep);
                ret = BD_EXIT_FAIL;
                goto out;
        }
        if (slurm)
                printf("run %s submitted: Slurm job %s (%s), %d trial%s\n", id, job_id, slurm_backend(), trials,
                       trials == 1 ? "" : "s");
        else
                printf("run %s started: process %ld, %d trial%s\n", id, pid, trials, trials == 1 ? "" : "s");
        fflush(stdout);
        if (wait)
                ret = wait_for_run(&store, id, false);
out:
        if (rundir && !keep)
                discard_run_dir(rundir, script_path, config_path);
        if (store.db)
                store_close(&store);
        free(k.config);
        free(k.user);
        free(k.host);
        system_release(&s);
        return ret;
}

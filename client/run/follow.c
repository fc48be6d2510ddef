/* follow.c: a run's status as text and JSON, and following a run until it
 * ends (status --watch, submit --wait, sweeps and suites). */
#include "config.h"

#include <math.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "benchctl.h"
#include "json.h"
#include "clock.h"
#include "launch.h"
#include "progress.h"
#include "run.h"
#include "workload.h"

static void fmt_elapsed(double start, double end, char *buf, size_t n)
{
        if (start <= 0) {
                snprintf(buf, n, "-");
                return;
        }
        long s = (long)((end > 0 ? end : (double)time(NULL)) - start);
        if (s < 0)
                s = 0;
        snprintf(buf, n, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

static cJSON *time_json(double t)
{
        return t > 0 ? cJSON_CreateNumber(t) : cJSON_CreateNull();
}

cJSON *run_json(const struct bd_run *r, const struct bd_trial *t)
{
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "run", r->id);
        cJSON_AddStringToObject(o, "system", r->system);
        cJSON_AddStringToObject(o, "workload", r->workload);
        cJSON_AddStringToObject(o, "launcher", r->launcher);
        cJSON_AddItemToObject(o, "job_id", r->job_id ? cJSON_CreateString(r->job_id) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "pid", r->pid > 0 ? cJSON_CreateNumber((double)r->pid) : cJSON_CreateNull());
        cJSON_AddStringToObject(o, "state", bd_state_name(r->state));
        cJSON_AddItemToObject(o, "reason", r->reason ? cJSON_CreateString(r->reason) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "exit_code", r->exit_code >= 0 ? cJSON_CreateNumber(r->exit_code) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "submit_time", time_json(r->submit_time));
        cJSON_AddItemToObject(o, "start_time", time_json(r->start_time));
        cJSON_AddItemToObject(o, "end_time", time_json(r->end_time));
        cJSON_AddStringToObject(o, "user", r->user ? r->user : "");
        cJSON_AddStringToObject(o, "host", r->host ? r->host : "");
        cJSON_AddStringToObject(o, "version", r->version ? r->version : "");
        cJSON_AddStringToObject(o, "logdir", r->logdir ? r->logdir : "");
        cJSON_AddStringToObject(o, "rundir", r->rundir ? r->rundir : "");
        cJSON *arr = cJSON_AddArrayToObject(o, "trials");
        for (int i = 0; t && i < r->ntrials; i++) {
                cJSON *e = cJSON_CreateObject();
                cJSON_AddNumberToObject(e, "trial", t[i].trial);
                cJSON_AddStringToObject(e, "state", bd_state_name(t[i].state));
                cJSON_AddItemToObject(e, "reason", t[i].reason ? cJSON_CreateString(t[i].reason) : cJSON_CreateNull());
                cJSON_AddItemToObject(e, "nodes", t[i].nodes ? cJSON_CreateString(t[i].nodes) : cJSON_CreateNull());
                cJSON_AddItemToObject(e, "start_time", time_json(t[i].start_time));
                cJSON_AddItemToObject(e, "end_time", time_json(t[i].end_time));
                cJSON_AddItemToObject(e, "elapsed", t[i].start_time > 0 && t[i].end_time > 0
                                                            ? cJSON_CreateNumber(t[i].end_time - t[i].start_time)
                                                            : cJSON_CreateNull());
                cJSON_AddItemToObject(e, "exit_code",
                                      t[i].exit_code >= 0 ? cJSON_CreateNumber(t[i].exit_code) : cJSON_CreateNull());
                cJSON_AddItemToObject(e, "log", t[i].log_path ? cJSON_CreateString(t[i].log_path) : cJSON_CreateNull());
                cJSON_AddItemToArray(arr, e);
        }
        return o;
}

/* Last lines of a file, for failed trials. */
static void tail_lines(const char *path, int n, FILE *out)
{
        FILE *f = path ? fopen(path, "re") : NULL;
        if (!f)
                return;
        char *lines[16] = { 0 };
        char buf[1024];
        int k = 0;
        while (fgets(buf, sizeof(buf), f)) {
                /* the script's own closing lines say nothing about the failure */
                if (!strncmp(buf, "ENDING TIMING RUN", 17) || !strncmp(buf, "RESULT,", 7))
                        continue;
                free(lines[k % n]);
                lines[k % n] = xstrdup(buf);
                k++;
        }
        fclose(f);
        for (int i = k > n ? k - n : 0; i < k; i++) {
                fprintf(out, "      | %s", lines[i % n]);
                if (!strchr(lines[i % n], '\n'))
                        fputc('\n', out);
        }
        for (int i = 0; i < n; i++)
                free(lines[i]);
}

void run_print_status(const struct bd_run *r, const struct bd_trial *t)
{
        char el[32];
        fmt_elapsed(r->start_time, r->end_time, el, sizeof(el));
        printf("run %s: %s on %s, %s", r->id, r->workload, r->system, bd_state_name(r->state));
        if (r->reason)
                printf(" (%s)", r->reason);
        if (r->exit_code >= 0 && bd_state_final(r->state))
                printf(", exit code %d", r->exit_code);
        if (streq(r->launcher, "slurm"))
                printf("\n  Slurm job %s, elapsed %s, logs in %s\n", r->job_id ? r->job_id : "-", el, r->logdir);
        else
                printf("\n  process %ld, elapsed %s, logs in %s\n", r->pid, el, r->logdir);
        printf("  %-6s %-14s %-12s %-10s %-5s %s\n", "TRIAL", "STATE", "NODES", "ELAPSED", "EXIT", "REASON");
        for (int i = 0; i < r->ntrials; i++) {
                fmt_elapsed(t[i].start_time, t[i].end_time, el, sizeof(el));
                char code[16] = "-";
                if (t[i].exit_code >= 0)
                        snprintf(code, sizeof(code), "%d", t[i].exit_code);
                printf("  %-6d %-14s %-12s %-10s %-5s %s\n", t[i].trial, bd_state_name(t[i].state),
                       t[i].nodes ? t[i].nodes : "-", el, code, t[i].reason ? t[i].reason : "");
                if (t[i].state == ST_FAILED || t[i].state == ST_INCOMPLETE)
                        tail_lines(t[i].log_path, 12, stdout);
        }
}

/* state, trial i/N, elapsed: one line, rewritten in place on a terminal */
/* What the live line last said, and when the progress was last printed. */
struct live {
        char key[300];                  /* state, trial, outcomes */
        char progress[256];
        double printed;                 /* when a progress line was last printed (not a terminal) */
};

/* Where the running trial is, from its log: "" when it says nothing yet. */
static void trial_progress(const struct bd_run *r, const struct bd_trial *t, char *buf, size_t n)
{
        struct progress p;
        buf[0] = '\0';
        if (!t->log_path || !progress_read(t->log_path, run_workload(r), &p))
                return;
        double now = (double)time(NULL);
        progress_format(&p, t->start_time > 0 ? now - t->start_time : 0, buf, n);
}

static void live_line(const struct bd_run *r, const struct bd_trial *t, bool tty, bool progress, struct live *lv)
{
        int cur = 0, ended[_ST_MAX] = { 0 }, never = 0;
        for (int i = 0; i < r->ntrials; i++) {
                if (t[i].state == ST_RUNNING)
                        cur = i + 1;
                /* a trial the run ended before did not end: it never started */
                if (bd_state_final(t[i].state) && t[i].start_time <= 0)
                        never++;
                else if (bd_state_final(t[i].state) && (unsigned)t[i].state < _ST_MAX)
                        ended[t[i].state]++;
        }
        /* "2 completed, 1 failed": how the trials that ran ended */
        char el[32], line[512], outcomes[256];
        int len = snprintf(outcomes, sizeof(outcomes), "%d completed", ended[ST_COMPLETED]);
        for (int st = 0; st < _ST_MAX; st++)
                if (st != ST_COMPLETED && ended[st] && len < (int)sizeof(outcomes))
                        len += snprintf(outcomes + len, sizeof(outcomes) - (size_t)len, ", %d %s", ended[st],
                                        bd_state_name((enum bd_state)st));
        if (never && len < (int)sizeof(outcomes))
                snprintf(outcomes + len, sizeof(outcomes) - (size_t)len, ", %d never started", never);
        fmt_elapsed(r->start_time > 0 ? r->start_time : r->submit_time, r->end_time, el, sizeof(el));
        char prog[256] = "";
        if (cur && progress)
                trial_progress(r, &t[cur - 1], prog, sizeof(prog));
        if (cur)
                snprintf(line, sizeof(line), "run %s: %s, trial %d/%d%s%s, %s, elapsed %s", r->id,
                         bd_state_name(r->state), cur, r->ntrials, prog[0] ? ": " : "", prog, outcomes, el);
        else
                snprintf(line, sizeof(line), "run %s: %s, %d trial%s: %s, elapsed %s", r->id, bd_state_name(r->state),
                         r->ntrials, r->ntrials == 1 ? "" : "s", outcomes, el);
        if (tty) {
                /* one line: cut to the terminal's width, or the rewrite leaves the wrapped rest */
                struct winsize ws;
                if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10 && strlen(line) >= ws.ws_col)
                        line[ws.ws_col - 1] = '\0';
                printf("\r\033[K%s", line);
                fflush(stdout);
        } else {
                /* one line per change, without the ticking clock; the
                 * trial's progress at most once a minute */
                char key[300];
                double now = (double)time(NULL);
                snprintf(key, sizeof(key), "%s %d %s", bd_state_name(r->state), cur, outcomes);
                bool changed = strcmp(key, lv->key) != 0;
                bool moved = prog[0] && strcmp(prog, lv->progress) != 0 && now - lv->printed >= 60;
                if (changed || moved) {
                        printf("%s\n", line);
                        fflush(stdout);
                        snprintf(lv->key, sizeof(lv->key), "%s", key);
                        snprintf(lv->progress, sizeof(lv->progress), "%s", prog);
                        if (moved || prog[0])
                                lv->printed = now;
                }
        }
}

static volatile sig_atomic_t stop_following;

static void on_stop(int sig)
{
        stop_following = sig;
        /* the next SIGINT or SIGTERM, whichever, ends benchctl at once, also
         * while a query to an unresponsive controller holds this one back
         * (the store's writes are transactions: nothing is left half-written) */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
}

/* JSON lines: the run's status, compact, each time it changes */
static void json_line(const struct bd_run *r, const struct bd_trial *t, char **last)
{
        cJSON *j = run_json(r, t);
        char *text = cJSON_PrintUnformatted(j);
        cJSON_Delete(j);
        if (*last && streq(*last, text)) {
                free(text);
                return;
        }
        puts(text);
        fflush(stdout);
        free(*last);
        *last = text;
}

/* A second between looks at the run, less when a file of its directory is
 * written: a run started here (local, mpirun) ends with its exit_status
 * moved in, which is seen at once instead of up to a second later. */
static int watch_rundir(const struct bd_run *r)
{
        if (!r->rundir || streq(r->launcher ? r->launcher : "", "slurm"))
                return -1;
        int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (fd >= 0 && inotify_add_watch(fd, r->rundir, IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
                close(fd);
                fd = -1;
        }
        return fd;
}

/* true when a file woke it before the second was up */
static bool wait_a_second(int fd)
{
        if (fd < 0) {
                sleep(1);
                return false;
        }
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, 1000) <= 0)
                return false;
        char buf[4096];
        while (read(fd, buf, sizeof(buf)) > 0)
                ;
        return true;
}

int wait_for_run(struct bd_store *store, const char *id, enum follow_mode mode)
{
        return wait_for_run_within(store, id, mode, 0);
}

int wait_for_run_within(struct bd_store *store, const char *id, enum follow_mode mode, double pending_limit)
{
        double since = clock_monotonic();
        bool json = mode == FOLLOW_JSON;
        bool tty = !json && isatty(STDOUT_FILENO);
        struct live lv = { .printed = 0 };
        _cleanup_free_ char *last_json = NULL;
        struct sigaction sa = { .sa_handler = on_stop, .sa_flags = SA_RESTART }, old_int, old_term;
        sigemptyset(&sa.sa_mask);
        stop_following = 0;
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        int ret, watch = -1;
        bool watching = false, woken = false;
        for (;;) {
                struct bd_run r;
                struct bd_trial *t;
                if (load_run(store, id, &r, &t)) {
                        ret = BD_EXIT_FAIL;
                        break;
                }
                if (!watching) {
                        watch = watch_rundir(&r);
                        watching = true;
                }
                bool final = bd_state_final(r.state);
                if (final && woken && r.state != ST_COMPLETED) {
                        /* ended early, not completed: 'benchctl cancel' records
                         * why only once the processes are gone; look again
                         * after the second, as before */
                        bd_trials_free(t, r.ntrials);
                        bd_run_release(&r);
                        woken = false;
                        sleep(1);
                        continue;
                }
                if (json)
                        json_line(&r, t, &last_json);
                else
                        live_line(&r, t, tty, mode == FOLLOW_TEXT, &lv);
                if (final && !json) {
                        if (tty)
                                printf("\n");
                        run_print_status(&r, t);
                }
                enum bd_state st = r.state;
                _cleanup_free_ char *rid = xstrdup(r.id);
                _cleanup_free_ char *reason = r.reason ? xstrdup(r.reason) : NULL;
                bd_trials_free(t, r.ntrials);
                bd_run_release(&r);
                if (final) {
                        ret = st == ST_COMPLETED ? BD_EXIT_OK : BD_EXIT_RUN;
                        break;
                }
                if (st == ST_PENDING && pending_limit > 0 && clock_monotonic() - since > pending_limit) {
                        if (tty)
                                printf("\n");
                        fflush(stdout);
                        bd_error("run %s waited %.0f s for its nodes and did not start%s%s%s: cancelling it", rid,
                                 pending_limit, reason ? " (" : "", reason ? reason : "", reason ? ")" : "");
                        (void) cancel_run(store, rid, false);
                        ret = BD_EXIT_RUN;
                        break;
                }
                if (!stop_following)
                        woken = wait_a_second(watch);
                if (stop_following) {
                        if (tty)
                                printf("\n");
                        fflush(stdout);
                        bd_error("no longer following run %s; it goes on ('benchctl status %s' to look again, "
                                 "'benchctl cancel %s' to stop it)", rid, rid, rid);
                        ret = BD_EXIT_SIGNAL + stop_following;
                        break;
                }
        }
        if (watch >= 0)
                close(watch);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        return ret;
}

/* sched-local.c: runs started on this machine, detached from the terminal.
 *
 * The script runs in a new session (its process group id is its pid), with
 * standard input from /dev/null and output to the run's output file; a small
 * shell wrapper writes the script's exit status to RUNDIR/exit_status when it
 * ends, atomically.  The launching benchctl may exit at once.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"
#include "scheduler.h"
#include "strutil.h"

/* What makes a run's process id mean something, recorded in RUNDIR/process
 * when it starts: the host's name and machine id, the boot (after a restart
 * the id is another process's), the PID namespace (another container on the
 * same kernel counts ids apart) and the process's start time since boot
 * (the id may have been given to another process since it ended). */
struct proc_rec {
        char host[256], machine[64], boot[64];
        unsigned long long pidns, start;
        long pid;
};

enum proc_where { PROC_HERE, PROC_RESTARTED, PROC_ELSEWHERE };

static void first_line(const char *path, char *buf, size_t size)
{
        _cleanup_free_ char *t = NULL;
        buf[0] = '\0';
        if (fs_read_file(path, 4096, &t, NULL, NULL) == 0) {
                t[strcspn(t, "\n")] = '\0';
                str_copy(buf, size, t);
        }
}

/* This process's host, machine, boot and PID namespace (read once: runs
 * and status --watch ask for every live run). */
static void proc_here(struct proc_rec *p)
{
        static struct proc_rec here;
        static bool known;
        if (!known) {
                struct stat st;
                if (gethostname(here.host, sizeof(here.host) - 1) < 0 || !here.host[0])
                        STR_COPY(here.host, "?");
                first_line("/etc/machine-id", here.machine, sizeof(here.machine));
                first_line("/proc/sys/kernel/random/boot_id", here.boot, sizeof(here.boot));
                if (stat("/proc/self/ns/pid", &st) == 0)
                        here.pidns = (unsigned long long)st.st_ino;
                known = true;
        }
        *p = here;
}

/* A process's state, session and start time from /proc/PID/stat. */
static int proc_stat(long pid, char *state, long *sid, unsigned long long *start)
{
        _cleanup_free_ char *path = xasprintf("/proc/%ld/stat", pid);
        _cleanup_free_ char *stat = NULL;
        if (fs_read_file(path, 4096, &stat, NULL, NULL) < 0)
                return -ESRCH;
        const char *p = strrchr(stat, ')');
        long ppid, pgrp;
        /* fields 3 to 6, then 22 (starttime) after fifteen more */
        if (!p || sscanf(p + 1, " %c %ld %ld %ld %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                         state, &ppid, &pgrp, sid, start) != 5)
                return -EIO;
        return 0;
}

static int proc_write(const char *rundir, long pid, unsigned long long start)
{
        struct proc_rec p;
        proc_here(&p);
        _cleanup_free_ char *path = xasprintf("%s/process", rundir);
        _cleanup_free_ char *text = xasprintf("host=%s\nmachine=%s\nboot=%s\npidns=%llu\npid=%ld\nstart=%llu\n", p.host,
                                              p.machine, p.boot, p.pidns, pid, start);
        return fs_write_replace(path, text, strlen(text), 0644, NULL);
}

static bool all_of(const char *v, const char *set)
{
        return v[strspn(v, set)] == '\0';
}

static bool printable(const char *v)
{
        for (; *v; v++)
                if (*v <= ' ' || *v == 0x7f)
                        return false;
        return true;
}

/* The record of RUNDIR/process of process pid: 0; -ENOENT for runs started
 * before there was one; -EINVAL, with why (the file and the field), for one
 * that cannot be trusted. */
static int proc_read(const char *rundir, long pid, struct proc_rec *p, char *why, size_t whysize)
{
        static const char *const keys[] = { "host", "machine", "boot", "pidns", "pid", "start" };
        _cleanup_free_ char *path = xasprintf("%s/process", rundir);
        _cleanup_free_ char *text = NULL;
        memset(p, 0, sizeof(*p));
        int r = fs_read_file(path, 4096, &text, NULL, NULL);
        if (r == -ENOENT)
                return r;
        if (r < 0) {
                snprintf(why, whysize, "%s: %s", path, strerror(-r));
                return -EINVAL;
        }
        unsigned seen = 0;
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *v = strchr(line, '=');
                size_t k = 0;
                if (v) {
                        *v++ = '\0';
                        while (k < ARRAY_SIZE(keys) && !streq(keys[k], line))
                                k++;
                }
                if (!v || k == ARRAY_SIZE(keys))
                        continue;       /* what a later version may add */
                bool ok;
                if (k >= 3)     /* numbers */
                        ok = *v && all_of(v, "0123456789") && strlen(v) <= 19;
                else if (k == 0)
                        ok = *v && printable(v);
                else if (k == 1)        /* 32 hex digits, or none (no /etc/machine-id) */
                        ok = !*v || (strlen(v) == 32 && all_of(v, "0123456789abcdef"));
                else                    /* a UUID, or none */
                        ok = !*v || (strlen(v) == 36 && all_of(v, "0123456789abcdef-"));
                unsigned long long n = ok && k >= 3 ? strtoull(v, NULL, 10) : 0;
                if (ok && k == 4 && (long)n != pid)
                        ok = false;
                if (!ok || (seen & (1u << k))) {
                        snprintf(why, whysize, "%s: field '%s': %s", path, keys[k],
                                 !ok ? (k == 4 ? "not the run's process id" : "not valid") : "given twice");
                        return -EINVAL;
                }
                seen |= 1u << k;
                switch (k) {
                case 0: STR_COPY(p->host, v); break;
                case 1: STR_COPY(p->machine, v); break;
                case 2: STR_COPY(p->boot, v); break;
                case 3: p->pidns = n; break;
                case 4: p->pid = (long)n; break;
                default: p->start = n; break;
                }
        }
        for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
                if (!(seen & (1u << k))) {
                        snprintf(why, whysize, "%s: no field '%s'", path, keys[k]);
                        return -EINVAL;
                }
        return 0;
}

/* Whether the recorded process is one of this boot and PID namespace, was
 * one of this host before it restarted, or is another host's (or another
 * container's). */
static enum proc_where proc_where(const struct proc_rec *r)
{
        struct proc_rec c;
        proc_here(&c);
        if (!r->boot[0] || !c.boot[0]) /* no boot id to compare: by host name, as before the record */
                return streq(r->host, c.host) && r->pidns == c.pidns ? PROC_HERE : PROC_ELSEWHERE;
        if (streq(r->boot, c.boot))
                return r->pidns == c.pidns ? PROC_HERE : PROC_ELSEWHERE;
        if (r->machine[0] && streq(r->machine, c.machine) && streq(r->host, c.host))
                return PROC_RESTARTED;
        return PROC_ELSEWHERE;
}

int local_start(const char *script_path, const char *rundir, const char *output, long *ret_pid, struct bd_err *err)
{
        int pfd[2];
        if (pipe2(pfd, O_CLOEXEC) < 0)
                return bd_err_set(err, -errno, "pipe: %s", strerror(errno));
        _cleanup_free_ char *status = xasprintf("%s/exit_status", rundir);
        (void) unlink(status);
        pid_t child = fork();
        if (child < 0) {
                close(pfd[0]);
                close(pfd[1]);
                return bd_err_set(err, -errno, "fork: %s", strerror(errno));
        }
        if (child == 0) {
                /* first child: start the session leader and exit; the leader
                 * itself reports its pid once it leads its session */
                pid_t gc = fork();
                if (gc == 0) {
                        setsid();
                        /* its id and start time: the id alone may name
                         * another process once this one ended */
                        long v[2] = { getpid(), 0 };
                        char state;
                        long sid;
                        unsigned long long start = 0;
                        if (proc_stat(v[0], &state, &sid, &start) == 0)
                                v[1] = (long)start;
                        if (write(pfd[1], v, sizeof(v)) != sizeof(v))
                                _exit(126);
                        int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
                        int out = open(output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                        if (in < 0 || out < 0)
                                _exit(126);
                        dup2(in, 0);
                        dup2(out, 1);
                        dup2(out, 2);
                        execl("/bin/bash", "bash", "-c",
                              "bash \"$1\"; rc=$?; echo \"$rc\" > \"$2.tmp\" && mv -f \"$2.tmp\" \"$2\"; exit \"$rc\"",
                              "benchd-run", script_path, status, (char *)NULL);
                        _exit(127);
                }
                _exit(gc > 0 ? 0 : 1);
        }
        close(pfd[1]);
        long v[2] = { 0, 0 };
        ssize_t n = read(pfd[0], v, sizeof(v));
        close(pfd[0]);
        int ws;
        waitpid(child, &ws, 0);
        if (n != sizeof(v) || v[0] <= 0)
                return bd_err_set(err, -ECHILD, "cannot start '%s'", script_path);
        /* without it the run is judged by its host name, as runs started
         * before there was a record */
        (void) proc_write(rundir, v[0], (unsigned long long)v[1]);
        *ret_pid = v[0];
        return 0;
}

/* The processes left of the run's session (its id is the leader's, pid),
 * at most max of them in members; how many there are.  The kernel gives no
 * new process that id while a member is left, so a leader of another start
 * time than the recorded one (when known) means the session ended. */
static size_t session_members(long pid, unsigned long long start, long *members, size_t max)
{
        char state;
        long sid;
        unsigned long long t;
        if (pid <= 0)
                return 0;
        if (proc_stat(pid, &state, &sid, &t) == 0 && start != 0 && t != start)
                return 0;
        DIR *d = opendir("/proc");
        if (!d)
                return 0;
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
                long p;
                if (str_parse_long(e->d_name, &p) < 0 || p <= 0)
                        continue;
                if (proc_stat(p, &state, &sid, &t) == 0 && sid == pid && state != 'Z') {
                        if (n < max)
                                members[n] = p;
                        n++;
                }
        }
        closedir(d);
        return n;
}

/* Where the run's process is, by its record, else by the host name the
 * caller compared (here); *start its start time when recorded; why says
 * what was wrong with a record that was not used. */
static enum proc_where run_where(const char *rundir, long pid, bool here, unsigned long long *start, char *why,
                                 size_t whysize)
{
        struct proc_rec r;
        *start = 0;
        why[0] = '\0';
        if (proc_read(rundir, pid, &r, why, whysize) < 0)
                return here ? PROC_HERE : PROC_ELSEWHERE;
        *start = r.start;
        return proc_where(&r);
}

/* An exit status as the wrapper writes it: 0 to 255 and a newline. */
static int parse_exit_status(const char *text, int *ret)
{
        size_t n = strcspn(text, "\n");
        if (n == 0 || n > 3 || (text[n] == '\n' && text[n + 1]) || !all_of(text, "0123456789\n"))
                return -EINVAL;
        long v = strtol(text, NULL, 10);        /* up to three digits */
        if (v > 255)
                return -EINVAL;
        *ret = (int)v;
        return 0;
}

/* RUNDIR/cancelled: written by local_cancel() before it signals the run, so
 * that whoever looks while the processes die sees a cancelled run, not one
 * that ended without an exit status. */
static bool cancelled_here(const char *rundir)
{
        _cleanup_free_ char *mark = xasprintf("%s/cancelled", rundir);
        return access(mark, F_OK) == 0;
}

int local_query(const char *rundir, long pid, bool here, struct sched_job *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->exit_code = -1;
        _cleanup_free_ char *status = xasprintf("%s/exit_status", rundir);
        _cleanup_free_ char *text = NULL;
        if (fs_read_file(status, 64, &text, NULL, NULL) == 0) {
                struct stat st;
                if (stat(status, &st) == 0)
                        ret->end_time = (double)st.st_mtime;
                if (parse_exit_status(text, &ret->exit_code) < 0) {
                        ret->state = ST_INCOMPLETE;
                        text[strcspn(text, "\n")] = '\0';
                        snprintf(ret->reason, sizeof(ret->reason), "%s: '%.32s' is not an exit status", status, text);
                        return 0;
                }
                ret->state = ret->exit_code == 0 ? ST_COMPLETED : ST_FAILED;
                if (ret->exit_code != 0 && cancelled_here(rundir)) {
                        ret->state = ST_CANCELLED;
                        snprintf(ret->reason, sizeof(ret->reason), "cancelled by benchctl");
                }
                return 0;
        }
        unsigned long long start;
        char why[256];
        enum proc_where w = run_where(rundir, pid, here, &start, why, sizeof(why));
        if (w == PROC_ELSEWHERE)
                return -EREMOTE;        /* its process id means nothing here */
        if (w == PROC_HERE && session_members(pid, start, NULL, 0) > 0) {
                ret->state = ST_RUNNING;
                if (why[0])
                        snprintf(ret->reason, sizeof(ret->reason), "%s; judged by host name", why);
                return 0;
        }
        /* it may have ended between the two looks */
        if (fs_read_file(status, 64, &text, NULL, NULL) == 0)
                return local_query(rundir, pid, here, ret);
        if (cancelled_here(rundir)) {
                /* stopped by a cancel that has not recorded it yet */
                ret->state = ST_CANCELLED;
                snprintf(ret->reason, sizeof(ret->reason), "cancelled by benchctl");
                return 0;
        }
        ret->state = ST_INCOMPLETE;
        snprintf(ret->reason, sizeof(ret->reason), "%sprocess %ld ended without an exit status%s%s",
                 w == PROC_RESTARTED ? "the host restarted since it started; " : "", pid, why[0] ? "; " : "", why);
        return 0;
}

int local_cancel(const char *rundir, long pid, bool here, struct bd_err *err)
{
        unsigned long long start;
        char why[256];
        long m[256];
        enum proc_where w = run_where(rundir, pid, here, &start, why, sizeof(why));
        if (w == PROC_ELSEWHERE)
                return bd_err_set(err, -EREMOTE, "its process %ld is another host's%s%s", pid, why[0] ? ": " : "",
                                  why);
        if (w == PROC_RESTARTED)
                return 0;
        _cleanup_free_ char *mark = xasprintf("%s/cancelled", rundir);
        _cleanup_free_ char *when = xasprintf("%lld\n", (long long)time(NULL));
        int r = fs_write_atomic(mark, when, strlen(when), 0644, err);
        if (r < 0)
                return r;
        /* every process of the session: launchers put their ranks in
         * process groups of their own, and the wrapper (the leader) may
         * be gone first */
        size_t n;
        for (int i = 0; (n = session_members(pid, start, m, ARRAY_SIZE(m))) > 0; i++) {
                int sig = i < 50 ? SIGTERM : SIGKILL;
                if (i == 0 || i == 50) {
                        (void) kill(-(pid_t)pid, sig);
                        for (size_t k = 0; k < n && k < ARRAY_SIZE(m); k++)
                                (void) kill((pid_t)m[k], sig);
                }
                if (i == 60)
                        return bd_err_set(err, -EBUSY, "%zu process%s of session %ld still there after SIGKILL", n,
                                          n == 1 ? "" : "es", pid);
                struct timespec ts = { 0, 100 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        return 0;
}

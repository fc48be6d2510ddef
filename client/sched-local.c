/* sched-local.c: runs started on this machine, detached from the terminal.
 *
 * The script runs in a new session (its process group id is its pid), with
 * standard input from /dev/null and output to the run's output file; a small
 * shell wrapper writes the script's exit status to RUNDIR/exit_status when it
 * ends, atomically.  The launching benchctl may exit at once.
 */
#include "config.h"

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
        if (read_file(path, 4096, &t, NULL, NULL) == 0) {
                t[strcspn(t, "\n")] = '\0';
                str_copy(buf, size, t);
        }
}

/* This process's host, machine, boot and PID namespace. */
static void proc_here(struct proc_rec *p)
{
        struct stat st;
        memset(p, 0, sizeof(*p));
        if (gethostname(p->host, sizeof(p->host) - 1) < 0 || !p->host[0])
                STR_COPY(p->host, "?");
        first_line("/etc/machine-id", p->machine, sizeof(p->machine));
        first_line("/proc/sys/kernel/random/boot_id", p->boot, sizeof(p->boot));
        if (stat("/proc/self/ns/pid", &st) == 0)
                p->pidns = (unsigned long long)st.st_ino;
}

/* A process's state, session and start time from /proc/PID/stat. */
static int proc_stat(long pid, char *state, long *sid, unsigned long long *start)
{
        _cleanup_free_ char *path = xasprintf("/proc/%ld/stat", pid);
        _cleanup_free_ char *stat = NULL;
        if (read_file(path, 4096, &stat, NULL, NULL) < 0)
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
        return write_file_replace(path, text, strlen(text), 0644, NULL);
}

/* The record of RUNDIR/process; -ENOENT for runs started before there was one. */
static int proc_read(const char *rundir, struct proc_rec *p)
{
        _cleanup_free_ char *path = xasprintf("%s/process", rundir);
        _cleanup_free_ char *text = NULL;
        memset(p, 0, sizeof(*p));
        int r = read_file(path, 4096, &text, NULL, NULL);
        if (r < 0)
                return r;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                char *v = strchr(line, '=');
                if (!v)
                        continue;
                *v++ = '\0';
                if (streq(line, "host"))
                        STR_COPY(p->host, v);
                else if (streq(line, "machine"))
                        STR_COPY(p->machine, v);
                else if (streq(line, "boot"))
                        STR_COPY(p->boot, v);
                else if (streq(line, "pidns"))
                        p->pidns = strtoull(v, NULL, 10);
                else if (streq(line, "pid"))
                        p->pid = strtol(v, NULL, 10);
                else if (streq(line, "start"))
                        p->start = strtoull(v, NULL, 10);
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

/* Is pid still the session leader we started (started at start, when
 * known)? */
static bool alive(long pid, unsigned long long start)
{
        char state;
        long sid;
        unsigned long long t;
        if (pid <= 0 || kill((pid_t)pid, 0) < 0 || proc_stat(pid, &state, &sid, &t) < 0)
                return false;
        return state != 'Z' && sid == pid && (start == 0 || t == start);
}

/* Where the run's process is, by its record, else by the host name the
 * caller compared (here); *start its start time when recorded. */
static enum proc_where run_where(const char *rundir, long pid, bool here, unsigned long long *start)
{
        struct proc_rec r;
        *start = 0;
        if (proc_read(rundir, &r) < 0 || r.pid != pid)
                return here ? PROC_HERE : PROC_ELSEWHERE;
        *start = r.start;
        return proc_where(&r);
}

int local_query(const char *rundir, long pid, bool here, struct sched_job *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->exit_code = -1;
        _cleanup_free_ char *status = xasprintf("%s/exit_status", rundir);
        _cleanup_free_ char *text = NULL;
        if (read_file(status, 64, &text, NULL, NULL) == 0) {
                struct stat st;
                long code = -1;
                text[strcspn(text, "\n")] = '\0';
                if (parse_long(text, &code) < 0)
                        code = 255;
                ret->exit_code = (int)code;
                ret->state = ret->exit_code == 0 ? ST_COMPLETED : ST_FAILED;
                if (stat(status, &st) == 0)
                        ret->end_time = (double)st.st_mtime;
                return 0;
        }
        unsigned long long start;
        enum proc_where w = run_where(rundir, pid, here, &start);
        if (w == PROC_ELSEWHERE)
                return -EREMOTE;        /* its process id means nothing here */
        if (w == PROC_HERE && alive(pid, start)) {
                ret->state = ST_RUNNING;
                return 0;
        }
        /* it may have ended between the two looks */
        if (read_file(status, 64, &text, NULL, NULL) == 0)
                return local_query(rundir, pid, here, ret);
        ret->state = ST_INCOMPLETE;
        snprintf(ret->reason, sizeof(ret->reason), "process %ld ended without an exit status%s", pid,
                 w == PROC_RESTARTED ? " (the host restarted since it started)" : "");
        return 0;
}

int local_cancel(const char *rundir, long pid, bool here, struct bd_err *err)
{
        unsigned long long start;
        enum proc_where w = run_where(rundir, pid, here, &start);
        if (w == PROC_ELSEWHERE)
                return bd_err_set(err, -EREMOTE, "its process %ld is another host's", pid);
        if (w == PROC_RESTARTED || !alive(pid, start))
                return 0;
        if (kill(-(pid_t)pid, SIGTERM) < 0 && errno != ESRCH)
                return bd_err_set(err, -errno, "cannot stop process group %ld: %s", pid, strerror(errno));
        for (int i = 0; i < 50 && alive(pid, start); i++) {
                struct timespec ts = { 0, 100 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        if (alive(pid, start))
                (void) kill(-(pid_t)pid, SIGKILL);
        return 0;
}

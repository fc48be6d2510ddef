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
                        long v = getpid();
                        if (write(pfd[1], &v, sizeof(v)) != sizeof(v))
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
        long pid = 0;
        ssize_t n = read(pfd[0], &pid, sizeof(pid));
        close(pfd[0]);
        int ws;
        waitpid(child, &ws, 0);
        if (n != sizeof(pid) || pid <= 0)
                return bd_err_set(err, -ECHILD, "cannot start '%s'", script_path);
        *ret_pid = pid;
        return 0;
}

/* Is pid still the session leader we started? */
static bool alive(long pid)
{
        if (pid <= 0 || kill((pid_t)pid, 0) < 0)
                return false;
        _cleanup_free_ char *path = xasprintf("/proc/%ld/stat", pid);
        _cleanup_free_ char *stat = NULL;
        if (read_file(path, 4096, &stat, NULL, NULL) < 0)
                return false;
        const char *p = strrchr(stat, ')');
        char state;
        long ppid, pgrp, sid;
        if (!p || sscanf(p + 1, " %c %ld %ld %ld", &state, &ppid, &pgrp, &sid) != 4)
                return false;
        return state != 'Z' && sid == pid;
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
        if (!here)
                return -EREMOTE;        /* its process id means nothing on this host */
        if (alive(pid)) {
                ret->state = ST_RUNNING;
                return 0;
        }
        /* it may have ended between the two looks */
        if (read_file(status, 64, &text, NULL, NULL) == 0)
                return local_query(rundir, pid, here, ret);
        ret->state = ST_INCOMPLETE;
        snprintf(ret->reason, sizeof(ret->reason), "process %ld ended without an exit status", pid);
        return 0;
}

int local_cancel(long pid, struct bd_err *err)
{
        if (!alive(pid))
                return 0;
        if (kill(-(pid_t)pid, SIGTERM) < 0 && errno != ESRCH)
                return bd_err_set(err, -errno, "cannot stop process group %ld: %s", pid, strerror(errno));
        for (int i = 0; i < 50 && alive(pid); i++) {
                struct timespec ts = { 0, 100 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        if (alive(pid))
                (void) kill(-(pid_t)pid, SIGKILL);
        return 0;
}

/* proc.c: run another program and wait for it (proc.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"
#include "proc.h"

static volatile sig_atomic_t caught;    /* the signal, 0 */
static volatile sig_atomic_t ncaught;   /* how many */
static volatile sig_atomic_t child;     /* the program proc_run() waits for, 0 */

static void on_signal(int sig, siginfo_t *si, void *uc)
{
        (void)uc;
        caught = sig;
        ncaught++;
        /* a terminal's signal went to the whole process group already */
        if (child > 0 && si && (si->si_code == SI_USER || si->si_code == SI_QUEUE))
                kill((pid_t)child, sig);
}

void proc_catch_signals(void)
{
        struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
}

int proc_interrupted(void)
{
        return caught;
}

int proc_run(char *const argv[], const struct proc_opts *o)
{
        static const struct proc_opts none;
        if (!o)
                o = &none;
        int logfd = -1, pfd[2] = { -1, -1 }, efd[2];
        if (o->log && (logfd = open(o->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
                return -errno;
        if (o->out && pipe2(pfd, O_CLOEXEC) < 0) {
                int e = -errno;
                if (logfd >= 0)
                        close(logfd);
                return e;
        }
        /* exec's failure travels back on a close-on-exec pipe */
        if (pipe2(efd, O_CLOEXEC) < 0)
                return -errno;
        int ncaught0 = ncaught;
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                if (o->out)
                        dup2(pfd[1], 1);
                else if (logfd >= 0)
                        dup2(logfd, 1);
                if (logfd >= 0)
                        dup2(logfd, 2);
                if (o->dir && chdir(o->dir) < 0) {
                        int e = errno;
                        (void)!write(efd[1], &e, sizeof(e));
                        _exit(127);
                }
                execvp(argv[0], argv);
                int e = errno;
                (void)!write(efd[1], &e, sizeof(e));
                _exit(127);
        }
        child = pid;
        if (ncaught != ncaught0)        /* one came before the child was known */
                kill(pid, caught);
        close(efd[1]);
        if (logfd >= 0)
                close(logfd);
        if (o->out) {
                close(pfd[1]);
                char buf[8192];
                ssize_t n;
                while ((n = read(pfd[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
                        if (n > 0)
                                buf_add(o->out, buf, (size_t)n);
                close(pfd[0]);
        }
        int e = 0;
        ssize_t n = read(efd[0], &e, sizeof(e));
        close(efd[0]);
        int ws;
        bool tick = o->tick && !o->out;
        for (;;) {
                pid_t w = waitpid(pid, &ws, tick ? WNOHANG : 0);
                if (w == pid)
                        break;
                if (w < 0 && errno != EINTR) {
                        child = 0;
                        return -errno;
                }
                if (w == 0) {
                        o->tick(o->tick_ctx);
                        struct timespec ts = { 0, 200 * 1000 * 1000 };
                        nanosleep(&ts, NULL);
                }
        }
        child = 0;
        if (n == (ssize_t)sizeof(e) && e)
                return -e;
        return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

char *proc_log_tail(const char *path)
{
        _cleanup_free_ char *data = NULL;
        size_t len;
        struct bd_err err;
        if (fs_read_file(path, 64 << 20, &data, &len, &err) < 0 || len == 0)
                return NULL;
        while (len && (data[len - 1] == '\n' || data[len - 1] == ' ' || data[len - 1] == '\r'))
                data[--len] = '\0';
        if (!len)
                return NULL;
        char *nl = strrchr(data, '\n');
        return xstrdup(nl ? nl + 1 : data);
}

bool proc_have(const char *prog)
{
        const char *path = getenv("PATH");
        if (strchr(prog, '/'))
                return access(prog, X_OK) == 0;
        if (!path)
                path = "/usr/bin:/bin";
        _cleanup_free_ char *copy = xstrdup(path);
        char *save = NULL;
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                _cleanup_free_ char *p = xasprintf("%s/%s", d, prog);
                if (access(p, X_OK) == 0)
                        return true;
        }
        return false;
}

/* sched-slurm-cli.c: Slurm batch jobs through the sbatch, scontrol and
 * scancel commands, for builds without libslurm. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "scheduler.h"
#include "strutil.h"

const char *slurm_backend(void)
{
        return "sbatch";
}

/* Runs argv, collecting stdout and stderr; returns the exit status or -errno. */
static int run(char *const argv[], struct bd_buf *out)
{
        int pfd[2];
        if (pipe(pfd) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                dup2(pfd[1], 1);
                dup2(pfd[1], 2);
                close(pfd[0]);
                close(pfd[1]);
                execvp(argv[0], argv);
                _exit(127);
        }
        close(pfd[1]);
        char buf[4096];
        ssize_t n;
        while ((n = read(pfd[0], buf, sizeof(buf))) > 0)
                buf_add(out, buf, (size_t)n);
        close(pfd[0]);
        int ws;
        if (waitpid(pid, &ws, 0) < 0)
                return -errno;
        return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128;
}

static int fail(const char *what, struct bd_buf *out, struct bd_err *err)
{
        while (out->len && (out->s[out->len - 1] == '\n'))
                out->s[--out->len] = '\0';
        char *nl = strchr(out->s, '\n');
        if (nl)
                *nl = '\0';
        if (strstr(out->s, "Unable to contact slurm controller") || strstr(out->s, "Connection refused")) {
                _cleanup_free_ char *ctl = slurm_controller_name();
                _cleanup_free_ char *reason = xasprintf("cannot reach the Slurm controller %s: %s",
                                                        ctl ? ctl : "(unknown)", out->s);
                sched_note_unreachable(reason);
                return bd_err_set(err, -EHOSTUNREACH, "%s: %s", what, reason);
        }
        if (strstr(out->s, "Invalid job id"))
                return bd_err_set(err, -ENOENT, "%s: %s", what, out->s);
        return bd_err_set(err, -EIO, "%s: %s", what, out->s);
}

int slurm_submit(const struct sched_request *req, char **ret_job_id, struct bd_err *err)
{
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        _cleanup_free_ char *comment = xasprintf("--comment=%s", req->comment ? req->comment : "");
        char *argv[] = { "sbatch",    "--parsable", "--no-requeue", "--chdir", (char *)req->work_dir, comment,
                         (char *)req->script_path, NULL };
        int u = sched_unreachable("cannot submit the job", err);
        if (u < 0)
                return u;
        int r = run(argv, &out);
        if (r != 0)
                return r < 0 ? bd_err_set(err, r, "cannot run sbatch: %s", strerror(-r))
                             : fail("cannot submit the job", &out, err);
        out.s[strcspn(out.s, ";\n")] = '\0';
        *ret_job_id = xstrdup(out.s);
        return 0;
}

int slurm_will_run(const struct sched_request *req, char **ret_where, struct bd_err *err)
{
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        char *argv[] = { "sbatch", "--test-only", (char *)req->script_path, NULL };
        int u = sched_unreachable("the job would not run", err);
        if (u < 0)
                return u;
        int r = run(argv, &out);
        if (r != 0)
                return r < 0 ? bd_err_set(err, r, "cannot run sbatch: %s", strerror(-r))
                             : fail("the job would not run", &out, err);
        const char *p = strstr(out.s, "to start at");
        out.s[strcspn(out.s, "\n")] = '\0';
        *ret_where = xasprintf("would start%s", p ? p + strlen("to start") : out.s);
        return 0;
}

static const char *field(const char *text, const char *key, char *val, size_t n)
{
        _cleanup_free_ char *k = xasprintf(" %s=", key);
        const char *p = strstr(text, k);
        if (!p && !strncmp(text, k + 1, strlen(k + 1)))
                p = text - 1;
        if (!p)
                return NULL;
        p += strlen(k);
        size_t len = strcspn(p, " \n");
        snprintf(val, n, "%.*s", (int)(len < n ? len : n - 1), p);
        return val;
}

static double parse_time(const char *s)
{
        struct tm tm = { 0 };
        if (!strptime(s, "%Y-%m-%dT%H:%M:%S", &tm))
                return 0;
        tm.tm_isdst = -1;
        return (double)mktime(&tm);
}

int slurm_query(const char *job_id, struct sched_job *ret, struct bd_err *err)
{
        memset(ret, 0, sizeof(*ret));
        ret->exit_code = -1;
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        char *argv[] = { "scontrol", "show", "job", "-o", (char *)job_id, NULL };
        int u = sched_unreachable("cannot query the job", err);
        if (u < 0)
                return u;
        int r = run(argv, &out);
        if (r != 0)
                return r < 0 ? bd_err_set(err, r, "cannot run scontrol: %s", strerror(-r))
                             : fail("cannot query the job", &out, err);
        char v[256];
        static const struct { const char *name; enum bd_state st; } map[] = {
                { "PENDING", ST_PENDING }, { "RUNNING", ST_RUNNING }, { "SUSPENDED", ST_RUNNING },
                { "COMPLETING", ST_RUNNING }, { "COMPLETED", ST_COMPLETED }, { "CANCELLED", ST_CANCELLED },
                { "TIMEOUT", ST_TIMEOUT }, { "DEADLINE", ST_TIMEOUT }, { "NODE_FAIL", ST_NODE_FAIL },
                { "BOOT_FAIL", ST_NODE_FAIL }, { "OUT_OF_MEMORY", ST_OOM }, { "FAILED", ST_FAILED },
        };
        ret->state = ST_FAILED;
        if (field(out.s, "JobState", v, sizeof(v)))
                for (size_t i = 0; i < ARRAY_SIZE(map); i++)
                        if (streq(map[i].name, v))
                                ret->state = map[i].st;
        if (field(out.s, "Reason", v, sizeof(v)) && !streq(v, "None"))
                snprintf(ret->reason, sizeof(ret->reason), "%s", v);
        if (field(out.s, "NodeList", v, sizeof(v)) && !streq(v, "(null)"))
                snprintf(ret->nodes, sizeof(ret->nodes), "%s", v);
        if (ret->state != ST_PENDING && field(out.s, "StartTime", v, sizeof(v)))
                ret->start_time = parse_time(v);
        if (bd_state_final(ret->state)) {
                if (field(out.s, "EndTime", v, sizeof(v)))
                        ret->end_time = parse_time(v);
                long code, sig;
                if (field(out.s, "ExitCode", v, sizeof(v)) && sscanf(v, "%ld:%ld", &code, &sig) == 2)
                        ret->exit_code = sig ? (int)(128 + sig) : (int)code;
        }
        return 0;
}

int slurm_down_nodes(const char *nodes, struct slurm_down **ret, int *n, struct bd_err *err)
{
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        /* one "NAME|STATE|REASON" line a node; a state such as down*, idle*
         * (not responding), down, fail or failing */
        char *argv[] = { "sinfo", "-h", "-N", "-n", (char *)nodes, "-o", "%N|%t|%E", NULL };
        char *all[] = { "sinfo", "-h", "-N", "-o", "%N|%t|%E", NULL };
        *ret = NULL;
        *n = 0;
        int u = sched_unreachable("cannot query the nodes", err);
        if (u < 0)
                return u;
        int r = run(nodes ? argv : all, &out);
        if (r != 0)
                return r < 0 ? bd_err_set(err, r, "cannot run sinfo: %s", strerror(-r))
                             : fail("cannot query the nodes", &out, err);
        char *save = NULL;
        for (char *l = strtok_r(out.s ? out.s : (char[]){ "" }, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                char *st = strchr(l, '|'), *why = st ? strchr(st + 1, '|') : NULL;
                if (!why)
                        continue;
                *st++ = '\0';
                *why++ = '\0';
                size_t sl = strlen(st);
                bool bad = str_has_prefix(st, "down") || str_has_prefix(st, "fail") || (sl && st[sl - 1] == '*');
                if (!bad)
                        continue;
                /* sinfo lists a node once per partition */
                bool seen = false;
                for (int i = 0; i < *n; i++)
                        seen |= streq((*ret)[i].name, l);
                if (seen)
                        continue;
                *ret = xrealloc(*ret, (size_t)(*n + 1) * sizeof(**ret));
                struct slurm_down *d = &(*ret)[(*n)++];
                str_copy(d->name, sizeof(d->name), l);
                str_copy(d->reason, sizeof(d->reason), streq(why, "none") ? "" : why);
        }
        return 0;
}

int slurm_node_of_host(const char *host, char *ret, size_t size, struct bd_err *err)
{
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        /* one line a node: NodeName=n1 ... NodeAddr=... NodeHostName=... */
        char *argv[] = { "scontrol", "-o", "show", "node", NULL };
        int u = sched_unreachable("cannot query the nodes", err);
        if (u < 0)
                return u;
        int r = run(argv, &out);
        if (r != 0)
                return r < 0 ? bd_err_set(err, r, "cannot run scontrol: %s", strerror(-r))
                             : fail("cannot query the nodes", &out, err);
        char name[256] = "", by_host[256] = "", by_addr[256] = "", v[256], n[256];
        int hosts = 0, addrs = 0;
        char *save = NULL;
        for (char *l = strtok_r(out.s ? out.s : (char[]){ "" }, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                if (!field(l, "NodeName", n, sizeof(n)))
                        continue;
                if (streq(n, host))
                        STR_COPY(name, n);
                if (field(l, "NodeHostName", v, sizeof(v)) && streq(v, host))
                        STR_COPY(by_host, n), hosts++;
                if (field(l, "NodeAddr", v, sizeof(v)) && streq(v, host))
                        STR_COPY(by_addr, n), addrs++;
        }
        const char *found = name[0] ? name : hosts == 1 ? by_host : !hosts && addrs == 1 ? by_addr : NULL;
        if (found) {
                snprintf(ret, size, "%s", found);
                return 0;
        }
        if (hosts + addrs > 1)
                return bd_err_set(err, -ENOENT, "%d Slurm nodes have the host name or address %s", hosts ? hosts : addrs,
                                  host);
        return bd_err_set(err, -ENOENT, "no Slurm node is %s", host);
}

int slurm_drain(const char *node, const char *reason, struct bd_err *err)
{
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        _cleanup_free_ char *n = xasprintf("NodeName=%s", node), *why = xasprintf("Reason=%s", reason);
        char *argv[] = { "scontrol", "update", n, "State=DRAIN", why, NULL };
        int u = sched_unreachable("cannot drain the node", err);
        if (u < 0)
                return u;
        int r = run(argv, &out);
        if (r != 0)
                return r < 0 ? bd_err_set(err, r, "cannot run scontrol: %s", strerror(-r))
                             : fail("cannot drain the node", &out, err);
        return 0;
}

int slurm_cancel(const char *job_id, struct bd_err *err)
{
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        char *argv[] = { "scancel", (char *)job_id, NULL };
        int u = sched_unreachable("cannot cancel the job", err);
        if (u < 0)
                return u;
        int r = run(argv, &out);
        if (r != 0)
                return r < 0 ? bd_err_set(err, r, "cannot run scancel: %s", strerror(-r))
                             : fail("cannot cancel the job", &out, err);
        return 0;
}

/* sched-slurm.c: Slurm batch jobs through libslurm. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "scheduler.h"
#include "strutil.h"
#include "system.h"

#define SUBMIT_TRIES 10

/* Exported by libslurm 22.05 but missing from <slurm/slurm.h>. */
extern void slurm_free_will_run_response_msg(will_run_response_msg_t *msg);
extern const char *slurm_job_reason_string(enum job_state_reason inx);

extern char **environ;

static bool initialised;

/* libslurm ends the process (fatal(), exit 1) when it finds no configuration.
 * A $SLURM_CONF that cannot be read is an error here; without one, when no
 * usual file exists (/etc/slurm/slurm.conf, a configless node's cached
 * /run/slurm/conf/slurm.conf), libslurm is tried in a child first (it may
 * have another compiled-in path, or find a configless cluster through DNS),
 * so that its fatal() is an error naming what is missing. */
static int init(struct bd_err *err)
{
        if (initialised)
                return 0;
        const char *env = getenv("SLURM_CONF");
        if (env && *env) {
                if (access(env, R_OK) < 0)
                        return bd_err_set(err, -errno, "no Slurm configuration: SLURM_CONF='%s': %s", env,
                                          strerror(errno));
        } else if (access("/etc/slurm/slurm.conf", R_OK) < 0 && access("/run/slurm/conf/slurm.conf", R_OK) < 0) {
                fflush(NULL);
                pid_t pid = fork();
                if (pid == 0) {
                        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
                        if (null >= 0)
                                dup2(null, STDERR_FILENO);
                        slurm_init(NULL);
                        _exit(0);
                }
                int ws = 0;
                if (pid < 0 || waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
                        return bd_err_set(err, -ENOENT, "no Slurm configuration: no SLURM_CONF, no "
                                          "/etc/slurm/slurm.conf, and libslurm found none (its built-in path, a "
                                          "configless cluster's DNS SRV record)");
        }
        slurm_init(NULL);
        initialised = true;
        return 0;
}

/* Before a call to the controller: libslurm set up, and the controller not
 * found unreachable in the last SCHED_UNREACHABLE_S seconds. */
static int begin(const char *what, struct bd_err *err)
{
        if (init(err) < 0)
                return -EHOSTUNREACH;
        return sched_unreachable(what, err);
}

/* libslurm prints some of the controller's messages itself, on stderr as
 * "benchctl: error: ...", ahead of the error that names what failed.  While
 * a call runs they are kept aside: a failure quotes them in its one line, a
 * success passes them on as they were. */
struct held_stderr {
        int saved, fd;
};

static void hold_stderr(struct held_stderr *h)
{
        fflush(stderr);
        h->fd = memfd_create("libslurm-messages", MFD_CLOEXEC);
        h->saved = h->fd >= 0 ? fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3) : -1;
        if (h->saved < 0 || dup2(h->fd, STDERR_FILENO) < 0) {
                if (h->saved >= 0)
                        close(h->saved);
                if (h->fd >= 0)
                        close(h->fd);
                h->fd = h->saved = -1;
        }
}

/* Restores stderr; returns what was written meanwhile, NULL when nothing was. */
static char *release_stderr(struct held_stderr *h)
{
        if (h->fd < 0)
                return NULL;
        fflush(stderr);
        dup2(h->saved, STDERR_FILENO);
        close(h->saved);
        off_t len = lseek(h->fd, 0, SEEK_END);
        char *text = NULL;
        if (len > 0 && len < 65536) {
                text = xmalloc((size_t)len + 1);
                ssize_t n = pread(h->fd, text, (size_t)len, 0);
                text[n > 0 ? n : 0] = '\0';
                if (n <= 0)
                        text = (free(text), NULL);
        }
        close(h->fd);
        return text;
}

/* The held messages as a suffix for an error: " (libslurm: a; b)" */
static char *held_suffix(const char *text)
{
        if (!text)
                return xstrdup("");
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        _cleanup_free_ char *copy = xstrdup(text);
        char *save = NULL;
        const char *prefix = program_invocation_short_name;
        for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                size_t pl = strlen(prefix);
                if (!strncmp(l, prefix, pl) && l[pl] == ':')
                        l += pl + 1 + strspn(l + pl + 1, " ");
                if (str_has_prefix(l, "error: "))
                        l += strlen("error: ");
                if (*l)
                        buf_printf(&b, "%s%s", b.len ? "; " : " (libslurm: ", l);
        }
        if (b.len)
                buf_puts(&b, ")");
        return xstrdup(b.s ? b.s : "");
}

const char *slurm_backend(void)
{
        return "libslurm";
}

static int slurm_fail(const char *what, struct bd_err *err)
{
        int e = slurm_get_errno();
        if (e == SLURM_COMMUNICATIONS_CONNECTION_ERROR || e == ECONNREFUSED || e == SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT ||
            e == SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR || e == SLURM_COMMUNICATIONS_SEND_ERROR ||
            e == SLURM_COMMUNICATIONS_RECEIVE_ERROR) {
                _cleanup_free_ char *ctl = slurm_controller_name();
                _cleanup_free_ char *reason = xasprintf("cannot reach the Slurm controller %s: %s",
                                                        ctl ? ctl : "(unknown)", slurm_strerror(e));
                sched_note_unreachable(reason);
                return bd_err_set(err, -EHOSTUNREACH, "%s: %s", what, reason);
        }
        if (e == ESLURM_INVALID_JOB_ID)
                return bd_err_set(err, -ENOENT, "%s: %s", what, slurm_strerror(e));
        return bd_err_set(err, -EIO, "%s: %s", what, slurm_strerror(e));
}

/* Ends holding stderr around a libslurm call that returned r: its failure as
 * slurm_fail() says it, with the held messages ending the line, or 0 with the
 * messages passed on as they were. */
static int release_held(struct held_stderr *h, int r, const char *what, struct bd_err *err)
{
        int e = slurm_get_errno(); /* restoring stderr may change it */
        _cleanup_free_ char *held = release_stderr(h);
        if (r == 0) {
                if (held)
                        fputs(held, stderr);
                return 0;
        }
        slurm_seterrno(e);
        _cleanup_free_ char *suffix = held_suffix(held);
        int ret = slurm_fail(what, err);
        if (err) {
                size_t l = strlen(err->msg);
                snprintf(err->msg + l, sizeof(err->msg) - l, "%s", suffix);
        }
        return ret;
}

/* Fills a job description with the same request as the script's #SBATCH lines. */
static void describe(const struct sched_request *req, job_desc_msg_t *d)
{
        const cJSON *sys = req->sys;
        slurm_init_job_desc_msg(d);
        long nodes = sys_int(sys, "nodes"), ranks = sys_int(sys, "ranks_per_node");
        long gpus = sys_int(sys, "gpus_per_node");
        d->name = (char *)req->name;
        d->comment = (char *)req->comment;
        d->script = (char *)req->script;
        if (req->tenants) {
                /* render.c's tenants: one node, a task of their CPUs each */
                nodes = 1;
                gpus = gpus > 0 ? req->tenants : 0;
                d->num_tasks = (uint32_t)req->tenants;
                d->cpus_per_task = (uint16_t)req->tenant_cpus;
        } else {
                d->num_tasks = (uint32_t)(nodes * ranks);
                d->ntasks_per_node = (uint16_t)ranks;
        }
        d->min_nodes = (uint32_t)nodes;
        d->max_nodes = (uint32_t)nodes;
        d->requeue = 0; /* a node failure ends the run; it must not restart its trials silently */
        d->user_id = getuid();
        d->group_id = getgid();
        d->work_dir = (char *)req->work_dir;
        d->std_out = (char *)req->output;
        d->partition = (char *)sys_str(sys, "slurm.partition");
        d->account = (char *)sys_str(sys, "slurm.account");
        d->qos = (char *)sys_str(sys, "slurm.qos");
        const char *tl = sys_str(sys, "slurm.time_limit");
        if (tl) {
                long m = slurm_time_minutes(tl);
                d->time_limit = m < 0 ? INFINITE : (uint32_t)m;
        }
        if (sys_bool(sys, "slurm.exclusive"))
                d->shared = JOB_SHARED_NONE;
        const char *mem = sys_str(sys, "slurm.mem");
        if (mem) {
                char *end;
                unsigned long long v = strtoull(mem, &end, 10);
                switch (*end) {
                case 'K': case 'k': v /= 1024; break;
                case 'G': case 'g': v *= 1024; break;
                case 'T': case 't': v *= 1024 * 1024; break;
                default: break;
                }
                d->pn_min_memory = v; /* MiB; 0 = all of it */
        }
        static char tres[64];
        if (gpus > 0) {
                snprintf(tres, sizeof(tres), "gres:gpu:%ld", gpus);
                d->tres_per_node = tres;
        }
        size_t n = 0;
        while (environ[n])
                n++;
        d->environment = environ;
        d->env_size = (uint32_t)n;
}

int slurm_submit(const struct sched_request *req, char **ret_job_id, struct bd_err *err)
{
        int b = begin("cannot submit the job", err);
        if (b < 0)
                return b;
        if (cJSON_GetArraySize(sys_get(req->sys, "slurm.extra_options")) > 0)
                return bd_err_set(err, -EOPNOTSUPP, "slurm.extra_options need the sbatch command");
        job_desc_msg_t d;
        describe(req, &d);
        submit_response_msg_t *resp = NULL;
        int r = -1;
        struct held_stderr h;
        hold_stderr(&h);
        for (int i = 0; i < SUBMIT_TRIES; i++) {
                r = slurm_submit_batch_job(&d, &resp);
                if (r == 0)
                        break;
                int e = slurm_get_errno();
                if (e != EAGAIN && e != ESLURM_NODES_BUSY && e != ESLURM_ERROR_ON_DESC_TO_RECORD_COPY)
                        break;
                sleep((unsigned)(1 + i)); /* the controller is busy: back off and retry, as sbatch does */
        }
        if ((r = release_held(&h, r, "cannot submit the job", err)) < 0)
                return r;
        *ret_job_id = xasprintf("%u", resp->job_id);
        slurm_free_submit_response_response_msg(resp);
        return 0;
}

int slurm_will_run(const struct sched_request *req, char **ret_where, struct bd_err *err)
{
        int b = begin("the job would not run", err);
        if (b < 0)
                return b;
        job_desc_msg_t d;
        describe(req, &d);
        will_run_response_msg_t *resp = NULL;
        struct held_stderr h;
        hold_stderr(&h);
        int r = release_held(&h, slurm_job_will_run2(&d, &resp), "the job would not run", err);
        if (r < 0)
                return r;
        char when[64] = "now";
        struct tm tm;
        if (resp->start_time > 0 && localtime_r(&resp->start_time, &tm))
                strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
        *ret_where = xasprintf("would start at %s using %u processors on nodes %s in partition %s", when,
                               resp->proc_cnt, resp->node_list ? resp->node_list : "?",
                               resp->part_name ? resp->part_name : "?");
        slurm_free_will_run_response_msg(resp);
        return 0;
}

static enum bd_state map_state(uint32_t s)
{
        switch (s & JOB_STATE_BASE) {
        case JOB_PENDING: return ST_PENDING;
        case JOB_RUNNING:
        case JOB_SUSPENDED: return ST_RUNNING;
        case JOB_COMPLETE: return ST_COMPLETED;
        case JOB_CANCELLED: return ST_CANCELLED;
        case JOB_TIMEOUT:
        case JOB_DEADLINE: return ST_TIMEOUT;
        case JOB_NODE_FAIL:
        case JOB_BOOT_FAIL: return ST_NODE_FAIL;
        case JOB_OOM: return ST_OOM;
        default: return ST_FAILED;
        }
}

int slurm_down_nodes(const char *nodes, struct slurm_down **ret, int *n, struct bd_err *err)
{
        *ret = NULL;
        *n = 0;
        int b = begin("cannot query the nodes", err);
        if (b < 0)
                return b;
        hostlist_t hl = nodes ? slurm_hostlist_create(nodes) : NULL;
        if (nodes && !hl)
                return bd_err_set(err, -EINVAL, "bad node list '%s'", nodes);
        node_info_msg_t *msg = NULL;
        if (slurm_load_node((time_t)0, &msg, SHOW_ALL) != 0) {
                if (hl)
                        slurm_hostlist_destroy(hl);
                return slurm_fail("cannot query the nodes", err);
        }
        for (uint32_t i = 0; msg && i < msg->record_count; i++) {
                const node_info_t *nd = &msg->node_array[i];
                uint32_t st = nd->node_state;
                if (!nd->name || (hl && slurm_hostlist_find(hl, nd->name) < 0))
                        continue;
                if ((st & NODE_STATE_BASE) != NODE_STATE_DOWN && !(st & NODE_STATE_NO_RESPOND) &&
                    !(st & NODE_STATE_FAIL))
                        continue;
                *ret = xrealloc(*ret, (size_t)(*n + 1) * sizeof(**ret));
                struct slurm_down *d = &(*ret)[(*n)++];
                str_copy(d->name, sizeof(d->name), nd->name);
                str_copy(d->reason, sizeof(d->reason), nd->reason ? nd->reason : "");
        }
        slurm_free_node_info_msg(msg);
        if (hl)
                slurm_hostlist_destroy(hl);
        return 0;
}

int slurm_node_of_host(const char *host, char *ret, size_t size, struct bd_err *err)
{
        int b = begin("cannot query the nodes", err);
        if (b < 0)
                return b;
        node_info_msg_t *msg = NULL;
        if (slurm_load_node((time_t)0, &msg, SHOW_ALL) != 0)
                return slurm_fail("cannot query the nodes", err);
        /* by name; else the one by host name; else the one by address */
        const char *name = NULL, *by_host = NULL, *by_addr = NULL;
        int hosts = 0, addrs = 0;
        for (uint32_t i = 0; msg && i < msg->record_count; i++) {
                const node_info_t *nd = &msg->node_array[i];
                if (!nd->name)
                        continue;
                if (streq(nd->name, host))
                        name = nd->name;
                if (nd->node_hostname && streq(nd->node_hostname, host))
                        by_host = nd->name, hosts++;
                if (nd->node_addr && streq(nd->node_addr, host))
                        by_addr = nd->name, addrs++;
        }
        const char *found = name ? name : hosts == 1 ? by_host : !hosts && addrs == 1 ? by_addr : NULL;
        int r = 0;
        if (found)
                snprintf(ret, size, "%s", found);
        else if (hosts + addrs > 1)
                r = bd_err_set(err, -ENOENT, "%d Slurm nodes have the host name or address %s", hosts ? hosts : addrs,
                               host);
        else
                r = bd_err_set(err, -ENOENT, "no Slurm node is %s", host);
        slurm_free_node_info_msg(msg);
        return r;
}

int slurm_drain(const char *node, const char *reason, struct bd_err *err)
{
        int b = begin("cannot drain the node", err);
        if (b < 0)
                return b;
        update_node_msg_t msg;
        slurm_init_update_node_msg(&msg);
        msg.node_names = (char *)node;
        msg.node_state = NODE_STATE_DRAIN;
        msg.reason = (char *)reason;
        if (slurm_update_node(&msg) != 0)
                return slurm_fail("cannot drain the node", err);
        return 0;
}

int slurm_query(const char *job_id, struct sched_job *ret, struct bd_err *err)
{
        int b = begin("cannot query the job", err);
        if (b < 0)
                return b;
        memset(ret, 0, sizeof(*ret));
        ret->exit_code = -1;
        char *end;
        unsigned long id = strtoul(job_id, &end, 10);
        if (*end || !id)
                return bd_err_set(err, -EINVAL, "bad job id '%s'", job_id);
        job_info_msg_t *msg = NULL;
        if (slurm_load_job(&msg, (uint32_t)id, SHOW_DETAIL) != 0)
                return slurm_fail("cannot query the job", err);
        if (!msg || msg->record_count == 0) {
                slurm_free_job_info_msg(msg);
                return bd_err_set(err, -ENOENT, "job %s is unknown to the controller", job_id);
        }
        slurm_job_info_t *j = &msg->job_array[0];
        ret->state = map_state(j->job_state);
        if (j->state_reason != WAIT_NO_REASON)
                snprintf(ret->reason, sizeof(ret->reason), "%s", slurm_job_reason_string(j->state_reason));
        if (j->nodes)
                snprintf(ret->nodes, sizeof(ret->nodes), "%s", j->nodes);
        ret->start_time = j->start_time > 0 && ret->state != ST_PENDING ? (double)j->start_time : 0;
        ret->end_time = bd_state_final(ret->state) && j->end_time > 0 ? (double)j->end_time : 0;
        if (bd_state_final(ret->state)) {
                /* exit_code holds a wait status: exit code or terminating signal */
                if (WIFSIGNALED(j->exit_code))
                        ret->exit_code = 128 + WTERMSIG(j->exit_code);
                else
                        ret->exit_code = WEXITSTATUS(j->exit_code);
        }
        slurm_free_job_info_msg(msg);
        return 0;
}

int slurm_cancel(const char *job_id, struct bd_err *err)
{
        int b = begin("cannot cancel the job", err);
        if (b < 0)
                return b;
        unsigned long id = strtoul(job_id, NULL, 10);
        if (slurm_kill_job((uint32_t)id, SIGKILL, 0) != 0) {
                if (slurm_get_errno() == ESLURM_ALREADY_DONE)
                        return 0;
                return slurm_fail("cannot cancel the job", err);
        }
        return 0;
}

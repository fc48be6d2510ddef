/* stage-remote.c: benchctl stage --system/--nodes: the same stage on many
 * nodes at once through their benchd.
 *
 * One POST /v1/datasets/NAME/stage (or /verify) to every node in parallel,
 * then GET /v1/datasets/NAME of the nodes still running, twice a second,
 * until every node has ended.  On a terminal each node has a progress bar,
 * redrawn in place; otherwise a line per node when its state changes and
 * every 10 seconds.  SIGINT and SIGTERM cancel the jobs (DELETE, sent again
 * to a node until it answers) and wait for the nodes to say so; a second
 * one ends benchctl at once.  The exit status is 0 only when every node
 * completed; every failed node is named with its reason.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "benchctl.h"
#include "clock.h"
#include "fs.h"
#include "nodes.h"
#include "stage-remote.h"
#include "stage/stage.h"
#include "strutil.h"

#define POLL_MS 500
#define PLAIN_EVERY 10.0
/* a node that does not answer (benchd restarting: its job resumes) is given
 * this many seconds before it counts as failed */
#define SILENT_S 30.0

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
        interrupted = sig;
        /* the next SIGINT or SIGTERM, whichever, is not waited for */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
}

struct node_state {
        bool ended;
        bool ok;                /* ended complete */
        char state[32];
        char last_state[32];
        double last_print;
        char why[512];
        double silent_since;    /* monotonic time of the first poll in a row without an answer, or 0 */
        bool cancel_heard;      /* a node that answered our DELETE */
};

static double num(const cJSON *o, const char *k)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
        return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *k)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
        return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The token: --token-file, $BENCHD_TOKEN, then the system's benchd.token_file. */
int stage_remote_token(const char *file, char **ret, struct bd_err *err)
{
        const char *env = getenv("BENCHD_TOKEN");
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;
        if (!file && env && *env) {
                *ret = xstrdup(env);
                return 0;
        }
        if (!file)
                return bd_err_set(err, -ENOENT, "no token: give --token-file or set BENCHD_TOKEN");
        r = fs_read_file(file, 4096, &text, &len, NULL);
        if (r < 0)
                return bd_err_set(err, r, "cannot read the token file '%s': %s (benchd creates it; it is readable "
                                          "by benchd's user only)", file, strerror(-r));
        text[strcspn(text, " \t\r\n")] = '\0';
        if (!*text)
                return bd_err_set(err, -EINVAL, "the token file '%s' is empty", file);
        *ret = TAKE_PTR(text);
        return 0;
}

static void human(double bytes, char *buf, size_t n)
{
        stage_format_size((uint64_t)(bytes > 0 ? bytes : 0), buf, n);
}

/* "n1   [########..........]  42%  1.2 GiB of 2.8 GiB  96 MB/s  ETA 0:17" */
static void describe(const struct node_call *c, const struct node_state *ns, bool bar, char *out, size_t n)
{
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(c->json, "progress");
        double done = num(p, "bytes_done"), total = num(p, "bytes_total"), rate = num(p, "rate_bytes_per_second");
        double eta = num(p, "eta_seconds");
        double frac = total > 0 ? done / total : 0;
        char d[32], t[32], r[32], barbuf[32] = "";
        if (ns->ended && !ns->ok) {
                snprintf(out, n, "%s: %s", ns->state, ns->why);
                return;
        }
        human(done, d, sizeof(d));
        human(total, t, sizeof(t));
        human(rate, r, sizeof(r));
        if (bar) {
                int w = 20, full = (int)lround(frac * w);
                barbuf[0] = '[';
                for (int i = 0; i < w; i++)
                        barbuf[1 + i] = i < full ? '#' : '.';
                barbuf[w + 1] = ']';
                barbuf[w + 2] = ' ';
                barbuf[w + 3] = '\0';
        }
        double files = num(p, "files_total");
        if (ns->ended && streq(str(c->json, "job"), "verify"))
                snprintf(out, n, "%s%s: %.0f file%s, %s; %.0f checksummed against the manifest", barbuf, ns->state,
                         files, files == 1 ? "" : "s", t, num(p, "files_verified"));
        else if (ns->ended)
                snprintf(out, n, "%s%s: %.0f file%s, %s; %.0f copied, %.0f already there, %.0f repaired", barbuf,
                         ns->state, files, files == 1 ? "" : "s", t, num(p, "files_copied"), num(p, "files_present"),
                         num(p, "files_repaired"));
        else
                snprintf(out, n, "%s%3.0f%%  %s of %s  %s/s  %s  ETA %s%.0f:%02.0f  %s", barbuf, frac * 100, d, t, r,
                         str(p, "phase") ? str(p, "phase") : "", eta < 0 ? "?" : "", eta < 0 ? 0 : floor(eta / 60),
                         eta < 0 ? 0 : fmod(eta, 60), num(p, "errors") > 0 ? "(errors)" : "");
}

/* Reads a node's answer into its state. */
static void update(const struct node_call *c, struct node_state *ns);

/* The same for a poll sent at time sent: no answer at all is waited out for
 * a while, counted from the first request that got none. */
static void poll_update(struct node_call *c, struct node_state *ns, double sent)
{
        if (c->status == 0) {
                double now = clock_monotonic();
                if (ns->silent_since == 0)
                        ns->silent_since = sent;
                if (now - ns->silent_since < SILENT_S)
                        return;
                size_t len = strlen(c->error);
                snprintf(c->error + len, sizeof(c->error) - len, " (no answer for %.0f s)", now - ns->silent_since);
        }
        ns->silent_since = 0;
        update(c, ns);
}

static void update(const struct node_call *c, struct node_state *ns)
{
        if (!node_ok(c)) {
                ns->ended = true;
                ns->ok = false;
                STR_COPY(ns->state, "failed");
                STR_COPY(ns->why, c->error);
                return;
        }
        const char *st = str(c->json, "state");
        STR_COPY(ns->state, st ? st : "?");
        if (st && !streq(st, "running") && !streq(st, "idle")) {
                ns->ended = true;
                ns->ok = streq(st, "complete");
                const char *e = str(c->json, "error");
                const cJSON *p = cJSON_GetObjectItemCaseSensitive(c->json, "progress");
                if (e)
                        STR_COPY(ns->why, e);
                else if (num(p, "errors") > 0)
                        snprintf(ns->why, sizeof(ns->why), "%.0f error%s (listed above)", num(p, "errors"),
                                 num(p, "errors") == 1 ? "" : "s");
                else
                        snprintf(ns->why, sizeof(ns->why), "%s", st);
        }
}

/* What a node reported about single entries, as --local prints them: the
 * errors and warnings (the notes, too, unless quiet), the first of each node's
 * (benchd keeps 100). */
static void node_problems(const struct node_call *c, bool quiet)
{
        const cJSON *e, *a = c->json ? cJSON_GetObjectItemCaseSensitive(c->json, "problems") : NULL;
        cJSON_ArrayForEach(e, a) {
                const char *sev = str(e, "severity"), *msg = str(e, "message");
                if (!msg || (quiet && sev && streq(sev, "note")))
                        continue;
                fprintf(stderr, "benchctl: stage: %s: %s%s\n", c->node,
                        sev && streq(sev, "warning") ? "warning: " : "", msg);
        }
        double total = num(c->json, "problems_total");
        if (total > cJSON_GetArraySize(a))
                fprintf(stderr, "benchctl: stage: %s: ... and %.0f more (--json, or GET /v1/datasets/NAME there)\n",
                        c->node, total - cJSON_GetArraySize(a));
}

static void draw(struct node_call *calls, struct node_state *st, int n, int w, bool tty, bool first)
{
        char line[768];
        if (tty) {
                if (!first)
                        fprintf(stderr, "\033[%dA", n);
                for (int i = 0; i < n; i++) {
                        describe(&calls[i], &st[i], true, line, sizeof(line));
                        fprintf(stderr, "\r\033[K%-*s  %s\n", w, calls[i].node, line);
                }
                fflush(stderr);
                return;
        }
        double now = (double)time(NULL);
        for (int i = 0; i < n; i++) {
                bool changed = !streq(st[i].state, st[i].last_state);
                if (!changed && now - st[i].last_print < PLAIN_EVERY)
                        continue;
                describe(&calls[i], &st[i], false, line, sizeof(line));
                fprintf(stderr, "%-*s  %s\n", w, calls[i].node, line);
                STR_COPY(st[i].last_state, st[i].state);
                st[i].last_print = now;
        }
}

/* The request body, the same for every node (caller frees). */
static char *request_body(const struct stage_remote_req *q)
{
        cJSON *body = cJSON_CreateObject();
        if (q->src)
                cJSON_AddStringToObject(body, "source", q->src);
        if (q->dst)
                cJSON_AddStringToObject(body, "destination", q->dst);
        if (!q->verify_only) {
                cJSON_AddBoolToObject(body, "verify", q->verify);
                cJSON_AddBoolToObject(body, "delete", q->delete_extra);
                cJSON_AddBoolToObject(body, "rehash", q->rehash);
                cJSON_AddStringToObject(body, "fsync", stage_fsync_policy_name(q->fsync));
        }
        if (q->workers)
                cJSON_AddNumberToObject(body, "workers", q->workers);
        if (q->bwlimit_mbps > 0)
                cJSON_AddNumberToObject(body, "bwlimit_mbps", q->bwlimit_mbps);
        char *text = cJSON_PrintUnformatted(body);
        cJSON_Delete(body);
        return text;
}

/* After SIGINT or SIGTERM: a DELETE to every node still running that has
 * not answered one yet; says so once. */
static void cancel_nodes(const struct stage_remote_req *q, const char *path, struct node_call *calls,
                         struct node_state *st, int n, bool *cancelled)
{
        struct node_call *del = xcalloc((size_t)n + 1, sizeof(*del));
        char **names = xcalloc((size_t)n + 1, sizeof(char *));
        int *which = xcalloc((size_t)n + 1, sizeof(int));
        int k = 0;
        for (int i = 0; i < n; i++)
                if (!st[i].ended && !st[i].cancel_heard) {
                        which[k] = i;
                        names[k++] = calls[i].node;
                }
        if (k > 0) {
                nodes_init(del, names, k, q->port);
                nodes_request(del, k, "DELETE", path, NULL, q->token, q->timeout_ms);
                for (int j = 0; j < k; j++)
                        /* cancelled, or no job to cancel any more */
                        st[which[j]].cancel_heard = (del[j].status >= 200 && del[j].status < 300) ||
                                                    del[j].status == 404 || del[j].status == 409;
                nodes_release(del, k);
        }
        if (!*cancelled)
                fprintf(stderr, "benchctl: stage: cancelling on %d node%s\n", k, k == 1 ? "" : "s");
        *cancelled = true;
        free(which);
        free(del);
        free(names);
}

/* The nodes still running, polled together (their calls moved into one
 * array, live, and back). */
static void poll_running(const struct stage_remote_req *q, const char *path, struct node_call *calls,
                         struct node_call *live, struct node_state *st, int n)
{
        int k = 0;
        for (int i = 0; i < n; i++)
                if (!st[i].ended)
                        live[k++] = calls[i];
        double sent = clock_monotonic();
        nodes_request(live, k, "GET", path, NULL, NULL, q->timeout_ms);
        k = 0;
        for (int i = 0; i < n; i++)
                if (!st[i].ended) {
                        calls[i] = live[k++];
                        poll_update(&calls[i], &st[i], sent);
                }
}

/* Every node's outcome, as JSON or a line each, then their problems. */
static void print_outcome(const struct stage_remote_req *q, const struct node_call *calls,
                          const struct node_state *st, int n, int w)
{
        if (q->json) {
                cJSON *arr = cJSON_CreateArray();
                for (int i = 0; i < n; i++) {
                        cJSON *e = cJSON_CreateObject();
                        cJSON_AddStringToObject(e, "node", calls[i].node);
                        cJSON_AddBoolToObject(e, "ok", st[i].ok);
                        cJSON_AddItemToObject(e, "error", st[i].ok ? cJSON_CreateNull() : cJSON_CreateString(st[i].why));
                        cJSON_AddItemToObject(e, "dataset", calls[i].json ? cJSON_Duplicate(calls[i].json, true)
                                                                          : cJSON_CreateNull());
                        cJSON_AddItemToArray(arr, e);
                }
                _cleanup_free_ char *out = cJSON_Print(arr);
                puts(out);
                cJSON_Delete(arr);
                return;
        }
        char line[768];
        for (int i = 0; i < n; i++) {
                describe(&calls[i], &st[i], false, line, sizeof(line));
                printf("%-*s  %s\n", w, calls[i].node, line);
        }
        for (int i = 0; i < n; i++)
                node_problems(&calls[i], q->quiet);
}

int stage_remote(const struct stage_remote_req *q)
{
        int n = 0, ret = BD_EXIT_OK, w = 4;
        bool tty = isatty(STDERR_FILENO) && !q->quiet && !q->json;
        while (q->nodes[n])
                n++;
        _cleanup_free_ struct node_call *calls = xcalloc((size_t)n + 1, sizeof(*calls));
        _cleanup_free_ struct node_state *st = xcalloc((size_t)n + 1, sizeof(*st));
        _cleanup_free_ struct node_call *live = xcalloc((size_t)n + 1, sizeof(*live));
        nodes_init(calls, q->nodes, n, q->port);
        for (int i = 0; i < n; i++)
                if ((int)strlen(calls[i].node) > w)
                        w = (int)strlen(calls[i].node);
        _cleanup_free_ char *text = request_body(q);
        _cleanup_free_ char *post = xasprintf("/v1/datasets/%s/%s", q->name, q->verify_only ? "verify" : "stage");
        _cleanup_free_ char *get = xasprintf("/v1/datasets/%s", q->name);

        struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        interrupted = 0;

        nodes_request(calls, n, "POST", post, text, q->token, q->timeout_ms);
        for (int i = 0; i < n; i++)
                if (!node_ok(&calls[i]))
                        update(&calls[i], &st[i]);
        bool first = true, cancelled = false;
        for (;;) {
                int running = 0;
                for (int i = 0; i < n; i++)
                        running += !st[i].ended;
                if (interrupted)
                        cancel_nodes(q, get, calls, st, n, &cancelled);
                if (running == 0)
                        break;
                poll_running(q, get, calls, live, st, n);
                if (!q->quiet && !q->json)
                        draw(calls, st, n, w, tty, first);
                first = false;
                usleep(POLL_MS * 1000);
        }
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);

        print_outcome(q, calls, st, n, w);
        for (int i = 0; i < n; i++)
                if (!st[i].ok) {
                        bd_error("stage: node %s: %s", calls[i].node, st[i].why);
                        ret = nodes_exit(&calls[i], ret);
                }
        if (interrupted)
                ret = BD_EXIT_SIGNAL + interrupted;
        nodes_release(calls, n);
        return ret;
}

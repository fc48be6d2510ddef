/* api.c: the HTTP/JSON API, one table of routes.
 *
 *   GET  /v1/health                 alive, version, uptime, inventory age
 *   GET  /v1/inventory              the node inventory (benchd --inventory --json)
 *   POST /v1/inventory/refresh      read the node again now (token)
 *   GET  /v1/topology               GPU x GPU and GPU x NIC matrix, CPU and NUMA affinity
 *   GET  /v1/binding?ranks=N        the binding plan of N local ranks (default: one per GPU)
 *   GET  /v1/signals                GPU ECC, retired pages and rows, throttling, heat and power; NIC error counters
 *   POST /v1/health/report          benchctl health's verdict on this node (token)
 *   GET  /v1/health/report          the last one (health-report.h)
 *   GET  /metrics                   Prometheus text format
 *   GET, POST, DELETE /v1/datasets...  dataset staging (datasets.h)
 *
 * Reads are open to local clients (loopback, the Unix socket), or to anyone
 * with read_access = any; requests that change something need the bearer
 * token.  Every error is JSON: {"error": "...", "status": N}.
 */
#include "config.h"

#include <string.h>
#include <sys/stat.h>

#include "api.h"
#include "buf.h"
#include "datasets.h"
#include "fs.h"
#include "health-report.h"
#include "log.h"
#include "signals.h"
#include "strutil.h"

enum route_flags {
        ROUTE_MUTATES = 1 << 0,         /* needs the bearer token */
};

struct route {
        const char *method;
        const char *path;               /* '*' matches one segment */
        void (*fn)(struct daemon *d, struct http_request *rq, struct http_response *rs);
        unsigned flags;
};

static void api_index(struct daemon *d, struct http_request *rq, struct http_response *rs);

static void api_health(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        struct inv_snapshot *s = daemon_inventory_get(d, -1);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "status", "ok");
        cJSON_AddStringToObject(j, "version", PACKAGE_VERSION);
        cJSON_AddStringToObject(j, "hostname", s->inv.hostname);
        cJSON_AddNumberToObject(j, "uptime_seconds", clock_monotonic() - d->start_time);
        cJSON_AddNumberToObject(j, "inventory_age_seconds", clock_monotonic() - s->taken);
        cJSON_AddNumberToObject(j, "inventory_warnings", cJSON_GetArraySize(s->inv.warnings));
        daemon_inventory_put(s);
        http_json(rs, 200, j);
}

static void api_inventory(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        struct inv_snapshot *s = daemon_inventory_get(d, -1);
        rs->status = 200;
        rs->body = xmalloc(s->json_len + 1);
        memcpy(rs->body, s->json, s->json_len + 1);
        rs->len = s->json_len;
        rs->content_type = "application/json";
        daemon_inventory_put(s);
}

static void api_refresh(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        struct inv_snapshot *s = daemon_inventory_get(d, 0);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "status", "refreshed");
        cJSON_AddNumberToObject(j, "warnings", cJSON_GetArraySize(s->inv.warnings));
        daemon_inventory_put(s);
        http_json(rs, 200, j);
}

static void api_topology(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        struct inv_snapshot *s = daemon_inventory_get(d, -1);
        cJSON *j = inventory_topology_json(&s->inv);
        cJSON_AddStringToObject(j, "hostname", s->inv.hostname);
        cJSON_AddStringToObject(j, "legend",
                                "X self, NV# that many NVLinks, PIX one PCIe switch, PXB several switches, "
                                "PHB one host bridge, NODE one NUMA node across host bridges, SYS across sockets");
        daemon_inventory_put(s);
        http_json(rs, 200, j);
}

/* what can be wrong now: read on each request (signals.h) */
static void api_signals(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        (void) rq;
        struct inv_snapshot *s = daemon_inventory_get(d, -1);
        struct signals *sig = xmalloc(sizeof(*sig));
        signals_read(&s->inv, sig);
        cJSON *j = signals_json(&s->inv, sig);
        cJSON_AddStringToObject(j, "hostname", s->inv.hostname);
        free(sig);
        daemon_inventory_put(s);
        http_json(rs, 200, j);
}

static void api_binding(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        const char *v = http_arg(rq, "ranks");
        long ranks = 0;
        struct bd_err err;
        if (v && (str_parse_long(v, &ranks) < 0 || ranks < 1 || ranks > BD_MAX_GPUS)) {
                http_error(rs, 400, "ranks: expected an integer from 1 to %d, not '%s'", BD_MAX_GPUS, v);
                return;
        }
        struct inv_snapshot *s = daemon_inventory_get(d, -1);
        cJSON *plan = inventory_binding_json(&s->inv, (int)ranks, &err);
        if (!plan) {
                daemon_inventory_put(s);
                http_error(rs, 409, "%s", err.msg);
                return;
        }
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "hostname", s->inv.hostname);
        cJSON_AddStringToObject(j, "source", "measured");
        cJSON_AddItemToObject(j, "ranks", plan);
        daemon_inventory_put(s);
        http_json(rs, 200, j);
}

static void api_metrics(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        struct bd_buf b = BD_BUF_INIT;
        metrics_write(d, &b);
        rs->status = 200;
        rs->len = b.len;
        rs->body = buf_detach(&b);
        rs->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

/* ---- benchctl health's verdict on this node ---- */

#define REPORT_FILE "health-report.json"

/* Kept in the state directory where there is one (benchd.service makes it),
 * so that a restarted benchd serves it again */
static void report_save(const char *state_dir, const char *text)
{
        struct stat st;
        if (!state_dir || !text || stat(state_dir, &st) < 0 || !S_ISDIR(st.st_mode))
                return;
        _cleanup_free_ char *path = xasprintf("%s/" REPORT_FILE, state_dir);
        struct bd_err err;
        if (fs_write_atomic(path, text, strlen(text), 0644, &err) < 0)
                log_warning("health report: %s", err.msg);
}

void daemon_health_report_load(struct daemon *d)
{
        _cleanup_free_ char *path = xasprintf("%s/" REPORT_FILE, d->conf.state_dir);
        _cleanup_free_ char *text = NULL;
        size_t len;
        struct bd_err err;
        if (fs_read_file(path, 1 << 20, &text, &len, &err) < 0)
                return;
        cJSON *j = cJSON_ParseWithLength(text, len);
        struct health_report *r = xcalloc(1, sizeof(*r));
        if (!j || health_report_parse(j, r, &err) < 0) {
                log_warning("%s: not a health report (%s): ignored", path, j ? err.msg : "malformed JSON");
                free(r);
                r = NULL;
        }
        cJSON_Delete(j);
        pthread_mutex_lock(&d->lock);
        struct health_report *old = d->report;
        d->report = r;
        pthread_mutex_unlock(&d->lock);
        if (old)
                health_report_release(old);
        free(old);
}

static void api_health_report_post(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        cJSON *j = http_body_json(rq, rs, true);
        if (!j)
                return;
        struct health_report *r = xcalloc(1, sizeof(*r));
        struct bd_err err;
        if (cJSON_GetObjectItemCaseSensitive(j, "received"))
                http_error(rs, 400, "'received' is benchd's to set");
        else if (health_report_parse(j, r, &err) < 0)
                http_error(rs, 400, "%s", err.msg);
        else {
                r->received = clock_wall();
                cJSON *answer = health_report_json(r);
                _cleanup_free_ char *text = cJSON_PrintUnformatted(answer);
                pthread_mutex_lock(&d->lock);
                struct health_report *old = d->report;
                d->report = r;
                unsigned long gen = ++d->report_gen;
                _cleanup_free_ char *state_dir = xstrdup(d->conf.state_dir);
                pthread_mutex_unlock(&d->lock);
                if (old)
                        health_report_release(old);
                free(old);
                /* saved unless a later report was taken meanwhile (that
                 * one's save writes it), one save at a time */
                pthread_mutex_lock(&d->report_save);
                pthread_mutex_lock(&d->lock);
                bool current = d->report_gen == gen;
                pthread_mutex_unlock(&d->lock);
                if (current)
                        report_save(state_dir, text);
                pthread_mutex_unlock(&d->report_save);
                http_json(rs, 200, answer);
                r = NULL;
        }
        cJSON_Delete(j);
        free(r);
}

static void api_health_report_get(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        (void) rq;
        pthread_mutex_lock(&d->lock);
        cJSON *j = d->report ? health_report_json(d->report) : NULL;
        pthread_mutex_unlock(&d->lock);
        if (j)
                http_json(rs, 200, j);
        else
                http_error(rs, 404, "no health report yet (benchctl health posts one)");
}

static const struct route routes[] = {
        { "GET", "/", api_index, 0 },
        { "GET", "/v1/health", api_health, 0 },
        { "GET", "/v1/inventory", api_inventory, 0 },
        { "POST", "/v1/inventory/refresh", api_refresh, ROUTE_MUTATES },
        { "GET", "/v1/topology", api_topology, 0 },
        { "GET", "/v1/signals", api_signals, 0 },
        { "GET", "/v1/binding", api_binding, 0 },
        { "POST", "/v1/health/report", api_health_report_post, ROUTE_MUTATES },
        { "GET", "/v1/health/report", api_health_report_get, 0 },
        { "GET", "/metrics", api_metrics, 0 },
        { "GET", "/v1/datasets", api_datasets_list, 0 },
        { "GET", "/v1/datasets/*", api_dataset_get, 0 },
        { "DELETE", "/v1/datasets/*", api_dataset_cancel, ROUTE_MUTATES },
        { "POST", "/v1/datasets/*/stage", api_dataset_stage, ROUTE_MUTATES },
        { "POST", "/v1/datasets/*/verify", api_dataset_verify, ROUTE_MUTATES },
};

static void api_index(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        cJSON *j = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(j, "endpoints");
        for (size_t i = 1; i < ARRAY_SIZE(routes); i++) {
                _cleanup_free_ char *e = xasprintf("%s %s", routes[i].method, routes[i].path);
                cJSON_AddItemToArray(a, cJSON_CreateString(e));
        }
        cJSON_AddStringToObject(j, "version", PACKAGE_VERSION);
        http_json(rs, 200, j);
}

/* Matches path against a pattern segment by segment; '*' takes one
 * non-empty segment into params. */
static bool path_match(const char *pattern, const char *path, const char **params, char segs[][256])
{
        int np = 0;
        while (*pattern && *path) {
                if (*pattern == '*') {
                        size_t n = strcspn(path, "/");
                        if (n == 0 || n >= 256 || np >= HTTP_MAX_PARAMS)
                                return false;
                        memcpy(segs[np], path, n);
                        segs[np][n] = '\0';
                        params[np] = segs[np];
                        np++;
                        path += n;
                        pattern++;
                        continue;
                }
                if (*pattern++ != *path++)
                        return false;
        }
        return !*pattern && !*path;
}

/* A path that tries to climb: "..", "." or an empty segment. */
static bool path_suspicious(const char *p)
{
        if (p[0] != '/')
                return true;
        for (const char *s = p; *s; s++) {
                if (s[0] != '/')
                        continue;
                const char *seg = s + 1;
                size_t n = strcspn(seg, "/");
                if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.') ||
                    (n == 0 && seg[0] == '/'))
                        return true;
        }
        return false;
}

void api_handle(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        char segs[HTTP_MAX_PARAMS][256];
        const struct route *found = NULL;
        struct bd_buf allow = BD_BUF_INIT;
        if (path_suspicious(rq->path)) {
                http_error(rs, 400, "bad path");
                return;
        }
        for (size_t i = 0; i < ARRAY_SIZE(routes); i++) {
                const char *params[HTTP_MAX_PARAMS] = { NULL };
                if (!path_match(routes[i].path, rq->path, params, segs))
                        continue;
                if (!streq(routes[i].method, rq->method)) {
                        buf_printf(&allow, "%s%s", allow.len ? ", " : "", routes[i].method);
                        if (streq(routes[i].method, "GET"))
                                buf_puts(&allow, ", HEAD");
                        continue;
                }
                memcpy(rq->params, params, sizeof(params));
                found = &routes[i];
                break;
        }
        if (!found) {
                if (allow.len) {
                        static __thread char allow_hdr[128];
                        snprintf(allow_hdr, sizeof(allow_hdr), "%s", allow.s);
                        http_error(rs, 405, "%s is not allowed on %s", rq->method, rq->path);
                        rs->allow = allow_hdr;
                } else
                        http_error(rs, 404, "no such endpoint: %s", rq->path);
                buf_release(&allow);
                return;
        }
        buf_release(&allow);
        if (found->flags & ROUTE_MUTATES) {
                if (!daemon_token_ok(d, http_header(rq, "Authorization"))) {
                        http_error(rs, 401, "this request needs 'Authorization: Bearer <token>' with the token of "
                                            "the node's token_file");
                        rs->auth_challenge = true;
                        return;
                }
        } else if (!rq->local) {
                pthread_mutex_lock(&d->lock);
                bool any = d->conf.read_access == READ_ANY;
                pthread_mutex_unlock(&d->lock);
                if (!any) {
                        http_error(rs, 403, "reads are limited to local clients (read_access = local)");
                        return;
                }
        }
        found->fn(d, rq, rs);
}

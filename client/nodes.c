/* nodes.c: parallel requests to the benchd of many nodes (libcurl multi). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "curl-dl.h"
#include "nodes.h"
#include "strutil.h"

#define MAX_BODY (16u << 20)

bool node_name_valid(const char *s)
{
        if (!strncmp(s, "unix:", 5))
                return s[5] != '\0';
        if (!strncmp(s, "http://", 7) || !strncmp(s, "https://", 8)) {
                const char *host = strstr(s, "://") + 3;
                return *host && *host != '/';
        }
        const char *port = NULL;
        if (s[0] == '[') {
                const char *close = strchr(s, ']');
                if (!close || close == s + 1 || strspn(s + 1, "0123456789abcdefABCDEF:.%") != (size_t)(close - s - 1))
                        return false;
                if (close[1] && close[1] != ':')
                        return false;
                port = close[1] ? close + 2 : NULL;
        } else {
                size_t host = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._");
                if (host == 0 || (s[host] && s[host] != ':'))
                        return false;
                port = s[host] ? s + host + 1 : NULL;
        }
        if (!port)
                return true;
        char *end;
        errno = 0;
        long p = strtol(port, &end, 10);
        return *port >= '0' && *port <= '9' && !*end && errno == 0 && p >= 1 && p <= 65535;
}

void nodes_init(struct node_call *calls, char *const *names, int n, int default_port)
{
        for (int i = 0; i < n; i++) {
                struct node_call *c = &calls[i];
                const char *s = names[i];
                memset(c, 0, sizeof(*c));
                c->node = xstrdup(s);
                if (!strncmp(s, "unix:", 5)) {
                        c->socket = xstrdup(s + 5);
                        c->base = xstrdup("http://localhost");
                } else if (!strncmp(s, "http://", 7) || !strncmp(s, "https://", 8)) {
                        c->base = xstrdup(s);
                        size_t l = strlen(c->base);
                        while (l > 8 && c->base[l - 1] == '/')
                                c->base[--l] = '\0';
                } else if (s[0] == '[' ? strstr(s, "]:") != NULL : strchr(s, ':') != NULL)
                        c->base = xasprintf("http://%s", s);
                else
                        c->base = xasprintf("http://%s:%d", s, default_port);
        }
}

void nodes_release(struct node_call *calls, int n)
{
        for (int i = 0; i < n; i++) {
                free(calls[i].node);
                free(calls[i].base);
                free(calls[i].socket);
                buf_release(&calls[i].body);
                cJSON_Delete(calls[i].json);
        }
}

char **nodes_of_system(const cJSON *sys)
{
        const cJSON *hosts = sys_get(sys, "benchd.hosts");
        const cJSON *e;
        char **v;
        int n = 0;
        if (!cJSON_IsArray(hosts) || cJSON_GetArraySize(hosts) == 0)
                hosts = sys_get(sys, "mpirun.hosts");
        if (!cJSON_IsArray(hosts) || cJSON_GetArraySize(hosts) == 0) {
                v = xcalloc(2, sizeof(char *));
                v[0] = xstrdup("localhost");
                return v;
        }
        v = xcalloc((size_t)cJSON_GetArraySize(hosts) + 1, sizeof(char *));
        cJSON_ArrayForEach(e, hosts)
                if (cJSON_IsString(e))
                        v[n++] = xstrdup(e->valuestring);
        return v;
}

static size_t collect(char *data, size_t size, size_t nmemb, void *user)
{
        struct node_call *c = user;
        if (c->body.len + size * nmemb > MAX_BODY)
                return 0;       /* aborts the transfer: CURLE_WRITE_ERROR */
        buf_add(&c->body, data, size * nmemb);
        return size * nmemb;
}

bool node_ok(const struct node_call *c)
{
        return c->status >= 200 && c->status < 300 && c->json;
}

int nodes_request(struct node_call *calls, int n, const char *method, const char *path, const char *body,
                  const char *token, long timeout_ms)
{
        struct bd_err err;
        const struct curl_fns *C = curl_fns(&err);
        if (!C) {
                for (int i = 0; i < n; i++) {
                        calls[i].status = 0;
                        STR_COPY(calls[i].error, err.msg);
                }
                return 0;
        }
        CURLM *m = C->multi_init();
        CURL **h = xcalloc((size_t)n + 1, sizeof(CURL *));
        struct curl_slist **hdrs = xcalloc((size_t)n + 1, sizeof(struct curl_slist *));
        char (*errbuf)[CURL_ERROR_SIZE] = xcalloc((size_t)n + 1, CURL_ERROR_SIZE);
        int running = 0, ok = 0;
        _cleanup_free_ char *auth = token ? xasprintf("Authorization: Bearer %s", token) : NULL;
        for (int i = 0; i < n; i++) {
                struct node_call *c = &calls[i];
                _cleanup_free_ char *url = xasprintf("%s%s", c->base, path);
                buf_reset(&c->body);
                cJSON_Delete(c->json);
                c->json = NULL;
                c->status = 0;
                c->error[0] = '\0';
                h[i] = C->easy_init();
                C->easy_setopt(h[i], CURLOPT_URL, url);
                C->easy_setopt(h[i], CURLOPT_CUSTOMREQUEST, method);
                C->easy_setopt(h[i], CURLOPT_NOSIGNAL, 1L);
                C->easy_setopt(h[i], CURLOPT_TIMEOUT_MS, timeout_ms);
                C->easy_setopt(h[i], CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
                C->easy_setopt(h[i], CURLOPT_WRITEFUNCTION, collect);
                C->easy_setopt(h[i], CURLOPT_WRITEDATA, c);
                C->easy_setopt(h[i], CURLOPT_ERRORBUFFER, errbuf[i]);
                C->easy_setopt(h[i], CURLOPT_PRIVATE, c);
                if (c->socket)
                        C->easy_setopt(h[i], CURLOPT_UNIX_SOCKET_PATH, c->socket);
                hdrs[i] = C->slist_append(hdrs[i], "Accept: application/json");
                if (auth)
                        hdrs[i] = C->slist_append(hdrs[i], auth);
                if (body) {
                        hdrs[i] = C->slist_append(hdrs[i], "Content-Type: application/json");
                        C->easy_setopt(h[i], CURLOPT_POSTFIELDS, body);
                }
                C->easy_setopt(h[i], CURLOPT_HTTPHEADER, hdrs[i]);
                C->multi_add_handle(m, h[i]);
        }
        do {
                CURLMcode mc = C->multi_perform(m, &running);
                if (mc == CURLM_OK && running)
                        mc = C->multi_poll(m, NULL, 0, 200, NULL);
                if (mc != CURLM_OK)
                        break;
        } while (running);
        CURLMsg *msg;
        int left;
        while ((msg = C->multi_info_read(m, &left))) {
                struct node_call *c = NULL;
                if (msg->msg != CURLMSG_DONE)
                        continue;
                C->easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&c);
                C->easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &c->status);
                if (msg->data.result != CURLE_OK) {
                        int i = (int)(c - calls);
                        snprintf(c->error, sizeof(c->error), "%s",
                                 errbuf[i][0] ? errbuf[i] : C->easy_strerror(msg->data.result));
                        c->status = 0;
                }
        }
        for (int i = 0; i < n; i++) {
                struct node_call *c = &calls[i];
                C->multi_remove_handle(m, h[i]);
                C->easy_cleanup(h[i]);
                C->slist_free_all(hdrs[i]);
                if (c->status)
                        c->json = cJSON_ParseWithLength(c->body.s ? c->body.s : "", c->body.len);
                if (c->status && !(c->status >= 200 && c->status < 300)) {
                        const cJSON *e = cJSON_GetObjectItemCaseSensitive(c->json, "error");
                        snprintf(c->error, sizeof(c->error), "HTTP %ld%s%s", c->status, cJSON_IsString(e) ? ": " : "",
                                 cJSON_IsString(e) ? e->valuestring : "");
                } else if (c->status && !c->json)
                        snprintf(c->error, sizeof(c->error), "the answer is not JSON");
                else if (!c->status && !c->error[0])
                        snprintf(c->error, sizeof(c->error), "no answer");
                ok += node_ok(c);
        }
        C->multi_cleanup(m);
        free(h);
        free(hdrs);
        free(errbuf);
        return ok;
}

/* nodes.c: parallel requests to the benchd of many nodes (libcurl multi). */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "curl-dl.h"
#include "hostfile.h"
#include "nodes.h"
#include "opts.h"
#include "strutil.h"

#define MAX_BODY (16u << 20)

#define HOST_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._"

/* The length of "[IPv6]" or "[IPv6%zone]" at s (zone written with % or %25),
 * 0 when there is none. */
static size_t bracketed(const char *s)
{
        if (s[0] != '[')
                return 0;
        size_t a = strspn(s + 1, "0123456789abcdefABCDEF:.");
        char addr[INET6_ADDRSTRLEN];
        struct in6_addr in6;
        if (a == 0 || a >= sizeof(addr))
                return 0;
        memcpy(addr, s + 1, a);
        addr[a] = '\0';
        if (inet_pton(AF_INET6, addr, &in6) != 1)
                return 0;
        size_t i = 1 + a;
        if (s[i] == '%') {
                i += strncmp(s + i, "%25", 3) ? 1 : 3;
                size_t z = strspn(s + i, HOST_CHARS "~");
                if (z == 0)
                        return 0;
                i += z;
        }
        return s[i] == ']' ? i + 1 : 0;
}

/* HOST, HOST:PORT, [IPv6] or [IPv6]:PORT, exactly the n bytes at s. */
static bool host_port_valid(const char *s, size_t n)
{
        size_t host = s[0] == '[' ? bracketed(s) : strspn(s, HOST_CHARS);
        if (host == 0 || host > n)
                return false;
        if (host == n)
                return true;
        if (s[host] != ':' || host + 1 == n || n - host - 1 > 5)
                return false;
        long p = 0;
        for (size_t i = host + 1; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                p = p * 10 + (s[i] - '0');
        }
        return p >= 1 && p <= 65535;
}

bool node_name_valid(const char *s)
{
        if (!strncmp(s, "unix:", 5))
                return s[5] != '\0';
        if (!strncmp(s, "http://", 7) || !strncmp(s, "https://", 8)) {
                /* a base the API's paths are appended to: authority and an
                 * optional path, no user, query or fragment, no blanks */
                const char *host = strstr(s, "://") + 3;
                size_t n = strcspn(host, "/");
                for (const char *p = host + n; *p; p++)
                        if (*p <= ' ' || *p == 0x7f || *p == '?' || *p == '#')
                                return false;
                return host_port_valid(host, n);
        }
        return host_port_valid(s, strlen(s));
}

bool node_host(const char *name, char *ret, size_t size)
{
        if (!node_name_valid(name) || !strncmp(name, "unix:", 5))
                return false;
        const char *h = strstr(name, "://") ? strstr(name, "://") + 3 : name;
        size_t n = h[0] == '[' ? bracketed(h) : strspn(h, HOST_CHARS);
        if (h[0] == '[')        /* the address inside the brackets */
                h++, n -= 2;
        snprintf(ret, size, "%.*s", (int)n, h);
        return n > 0 && n < size;
}

int nodes_add(char ***names, size_t *n, const char *name, const char *where, struct bd_err *err)
{
        if (!*name)
                return bd_err_set(err, -EINVAL, "%s: an empty node name", where);
        if (!node_name_valid(name))
                return bd_err_set(err, -EINVAL, "%s: '%s' is not a node name (HOST, HOST:PORT, [IPv6]:PORT, "
                                  "http://HOST:PORT or unix:PATH)", where, name);
        for (size_t k = 0; k < *n; k++)
                if (streq((*names)[k], name))
                        return bd_err_set(err, -EINVAL, "%s: node '%s' is named twice", where, name);
        *names = xrealloc(*names, (*n + 2) * sizeof(char *));
        (*names)[(*n)++] = xstrdup(name);
        (*names)[*n] = NULL;
        return 0;
}

int nodes_add_list(char ***names, size_t *n, const char *list, const char *where, struct bd_err *err)
{
        _cleanup_free_ char *copy = xstrdup(list);
        for (char *t = copy, *next; t; t = next) {
                next = strchr(t, ',');
                if (next)
                        *next++ = '\0';
                int r = nodes_add(names, n, t, where, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The endpoint a node call reaches, spelled one way: "unix:PATH", or
 * scheme://host:port/path with the host in lower case, an IPv6 address as
 * inet_ntop writes it, the port always given. */
static char *endpoint(const struct node_call *c)
{
        if (c->socket) {
                /* a//b, a/./b and a/b/ are a/b (.. is left alone: a link may make it another place) */
                char *k = xasprintf("unix:%s", c->socket), *w = k + 5;
                for (const char *p = k + 5; *p; p++) {
                        if (*p == '/' && w > k + 5 && w[-1] == '/')
                                continue;
                        if (*p == '.' && p[1] == '/' && (p == k + 5 || p[-1] == '/')) {
                                p++;
                                continue;
                        }
                        *w++ = *p;
                }
                if (w > k + 6 && w[-1] == '/')
                        w--;
                *w = '\0';
                return k;
        }
        const char *sep = strstr(c->base, "://");
        bool https = !strncmp(c->base, "https", 5);
        const char *auth = sep + 3;
        size_t alen = strcspn(auth, "/");
        const char *path = auth + alen, *port = NULL;
        _cleanup_free_ char *host = NULL;
        size_t b = bracketed(auth);
        if (b > 0) {
                size_t a = strspn(auth + 1, "0123456789abcdefABCDEF:.");
                char addr[INET6_ADDRSTRLEN], canon[INET6_ADDRSTRLEN];
                struct in6_addr in6;
                memcpy(addr, auth + 1, a);
                addr[a] = '\0';
                if (inet_pton(AF_INET6, addr, &in6) != 1 || !inet_ntop(AF_INET6, &in6, canon, sizeof(canon)))
                        STR_COPY(canon, addr);
                const char *zone = auth + 1 + a, *end = auth + b - 1;
                if (*zone == '%')
                        zone += strncmp(zone, "%25", 3) ? 1 : 3;
                host = zone < end ? xasprintf("[%s%%25%.*s]", canon, (int)(end - zone), zone)
                                  : xasprintf("[%s]", canon);
                if (auth[b] == ':')
                        port = auth + b + 1;
        } else {
                size_t h = strcspn(auth, ":/");
                struct in_addr in4;
                host = xstrndup(auth, h);
                for (char *p = host; *p; p++)
                        *p = (char)tolower((unsigned char)*p);
                if (inet_aton(host, &in4)) {    /* 127.1 is 127.0.0.1, as curl takes it */
                        free(host);
                        host = xstrdup(inet_ntoa(in4));
                } else if (h > 1 && host[h - 1] == '.') {       /* n1. is n1 */
                        host[h - 1] = '\0';
                }
                if (auth[h] == ':')
                        port = auth + h + 1;
        }
        long pn = port ? strtol(port, NULL, 10) : (https ? 443 : 80);
        return xasprintf("%s://%s:%ld%s", https ? "https" : "http", host, pn, path);
}

/* Why a Unix socket took no connection: curl says "localhost port 80". */
static void socket_error(const char *path, char *buf, size_t size)
{
        struct stat st;
        if (stat(path, &st) < 0)
                snprintf(buf, size, "cannot connect to the Unix socket %s: %s", path, strerror(errno));
        else if (!S_ISSOCK(st.st_mode))
                snprintf(buf, size, "cannot connect to %s: not a Unix socket", path);
        else if (access(path, W_OK) < 0)
                snprintf(buf, size, "cannot connect to the Unix socket %s: %s", path, strerror(errno));
        else
                snprintf(buf, size, "cannot connect to the Unix socket %s: nothing listens there", path);
}

static int nodes_distinct(const struct node_call *calls, int n, struct bd_err *err)
{
        char **keys = xcalloc((size_t)n + 1, sizeof(char *));
        int r = 0;
        for (int i = 0; i < n && r == 0; i++) {
                keys[i] = endpoint(&calls[i]);
                for (int j = 0; j < i && r == 0; j++)
                        if (streq(keys[i], keys[j]))
                                r = bd_err_set(err, -EINVAL, "node '%s' is the same as node '%s' (%s)",
                                               calls[i].node, calls[j].node, keys[i]);
        }
        strv_free(keys);
        return r;
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
                } else {
                        /* an IPv6 zone id is written %25 in a URL (RFC 6874) */
                        const char *zone = s[0] == '[' ? strchr(s, '%') : NULL;
                        _cleanup_free_ char *host = zone && strncmp(zone, "%25", 3)
                                                            ? xasprintf("%.*s%%25%s", (int)(zone - s), s, zone + 1)
                                                            : xstrdup(s);
                        if (s[0] == '[' ? strstr(s, "]:") != NULL : strchr(s, ':') != NULL)
                                c->base = xasprintf("http://%s", host);
                        else
                                c->base = xasprintf("http://%s:%d", host, default_port);
                }
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

int nodes_check(char *const *names, int default_port, const char *system, struct bd_err *err)
{
        int n = 0;
        while (names[n])
                n++;
        struct node_call *calls = xcalloc((size_t)n + 1, sizeof(*calls));
        nodes_init(calls, names, n, default_port);
        int r = nodes_distinct(calls, n, err);
        nodes_release(calls, n);
        free(calls);
        if (r < 0 && system) {
                _cleanup_free_ char *m = xstrdup(err->msg);
                bd_err_set(err, r, "system '%s': %s", system, m);
        }
        return r;
}

int nodes_of_system(const cJSON *sys, char ***ret, struct bd_err *err)
{
        const char *key = "benchd.hosts";
        const cJSON *hosts = sys_get(sys, key);
        const cJSON *e;
        char **v = NULL;
        size_t n = 0;
        if (!cJSON_IsArray(hosts) || cJSON_GetArraySize(hosts) == 0) {
                key = "mpirun.hosts";
                hosts = sys_get(sys, key);
        }
        const char *hostfile = sys_str(sys, "mpirun.hostfile");
        if ((!cJSON_IsArray(hosts) || cJSON_GetArraySize(hosts) == 0) && hostfile) {
                /* mpirun's hostfile names the nodes */
                char **file_hosts;
                int r = hostfile_read(hostfile, &file_hosts, err);
                if (r < 0)
                        return r;
                for (char **h = file_hosts; *h && r == 0; h++) {
                        _cleanup_free_ char *where = xasprintf("mpirun.hostfile %s", hostfile);
                        r = nodes_add(&v, &n, *h, where, err);
                }
                strv_free(file_hosts);
                if (r < 0) {
                        strv_free(v);
                        return r;
                }
                *ret = v;
                return 0;
        }
        if (!cJSON_IsArray(hosts) || cJSON_GetArraySize(hosts) == 0) {
                /* one node: this one; more: which they are is not known
                 * here, and this one alone would pass for all of them */
                long n_nodes = sys_int(sys, "nodes");
                if (n_nodes > 1)
                        return bd_err_set(err, -EINVAL, "%ld nodes, and no benchd.hosts, mpirun.hosts or "
                                          "mpirun.hostfile names them", n_nodes);
                v = xcalloc(2, sizeof(char *));
                v[0] = xstrdup("localhost");
                *ret = v;
                return 0;
        }
        int i = 0;
        cJSON_ArrayForEach(e, hosts) {
                _cleanup_free_ char *where = xasprintf("%s[%d]", key, i++);
                int r = cJSON_IsString(e) ? nodes_add(&v, &n, e->valuestring, where, err)
                                          : bd_err_set(err, -EINVAL, "%s: not a string", where);
                if (r < 0) {
                        strv_free(v);
                        return r;
                }
        }
        *ret = v;
        return 0;
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
                        if (c->socket && msg->data.result == CURLE_COULDNT_CONNECT)
                                socket_error(c->socket, c->error, sizeof(c->error));
                        else
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
                        /* the node's words go to a terminal: no escape sequences */
                        (void) str_sanitize(c->error, sizeof(c->error), c->error, "?");
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

int nodes_exit(const struct node_call *c, int ret)
{
        if (ret == BD_EXIT_UNREACHABLE || c->status == 0)
                return BD_EXIT_UNREACHABLE;
        return BD_EXIT_FAIL;
}

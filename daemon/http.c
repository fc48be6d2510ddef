/* http.c: libmicrohttpd glue: listening sockets, reading requests, limits,
 * sending responses.  What a request means is api.c's business. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <microhttpd.h>

#include "buf.h"
#include "clock.h"
#include "http.h"
#include "log.h"
#include "notify.h"
#include "strutil.h"

#define MAX_LISTENERS 8
/* More query arguments than any endpoint takes: the request gets 414.
 * libmicrohttpd keeps each argument in the connection's memory pool, and
 * when that runs out (about 700 arguments) it neither answers nor frees the
 * request. */
#define MAX_ARGS 64

/* A connection, from accept to close, for the request-head deadline. */
struct conn_track {
        struct conn_track *prev, *next;
        int fd;
        double since;           /* connected, or the previous answer was sent */
        bool reading_body;      /* the head of the current request is in */
        bool cut;
};

struct http_server {
        struct daemon *d;
        http_handler *handle;
        struct MHD_Daemon *mhd[MAX_LISTENERS];
        int n;
        int max_body;
        int max_header;
        char *unix_path;        /* the socket file we created, removed at stop */
        char desc[512];
        /* the request_timeout watchdog: every connection, and a thread that
         * shuts down those whose request head is late */
        double request_timeout;
        pthread_mutex_t track_lock;
        pthread_cond_t track_cond;
        struct conn_track *tracks;
        pthread_t watchdog;
        bool watchdog_running, stopping;
};

/* One request being read. */
struct request_ctx {
        struct bd_buf body;
        bool too_large;
        bool local;
        bool started;           /* its headers have been seen */
        bool too_many_args;
        size_t uri_len;         /* as sent, with the query */
};

const char *http_arg(const struct http_request *rq, const char *key)
{
        return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *http_header(const struct http_request *rq, const char *name)
{
        return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

void http_json(struct http_response *rs, int status, cJSON *j)
{
        char *text = j ? cJSON_PrintUnformatted(j) : NULL;
        cJSON_Delete(j);
        free(rs->body);
        if (!text) {
                rs->status = 500;
                rs->body = xstrdup("{\"error\":\"out of memory\",\"status\":500}\n");
        } else {
                rs->status = status;
                rs->body = xasprintf("%s\n", text);
                free(text);
        }
        rs->len = strlen(rs->body);
        rs->content_type = "application/json";
}

void http_error(struct http_response *rs, int status, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *raw = xvasprintf(fmt, ap);
        va_end(ap);
        /* messages quote the request's path, fields and arguments: bytes
         * that are not UTF-8 become U+FFFD, so that the answer is JSON */
        size_t n = strlen(raw) * 3 + 1;
        _cleanup_free_ char *msg = xmalloc(n);
        (void) str_sanitize(msg, n, raw, "\xef\xbf\xbd");
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "error", msg);
        cJSON_AddNumberToObject(j, "status", status);
        http_json(rs, status, j);
}

static bool addr_is_local(const struct sockaddr *sa)
{
        if (!sa)
                return false;
        switch (sa->sa_family) {
        case AF_UNIX:
                return true;
        case AF_INET:
                return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
        case AF_INET6: {
                const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
                if (IN6_IS_ADDR_LOOPBACK(a))
                        return true;
                return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
        }
        }
        return false;
}

static enum MHD_Result send_response(struct http_server *s, struct MHD_Connection *c, struct http_response *rs)
{
        struct MHD_Response *resp;
        enum MHD_Result ret;
        if (!rs->body)
                http_error(rs, 500, "no response");
        resp = MHD_create_response_from_buffer(rs->len, rs->body, MHD_RESPMEM_MUST_FREE);
        if (!resp) {
                free(rs->body);
                return MHD_NO;
        }
        rs->body = NULL;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                rs->content_type ? rs->content_type : "application/json");
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
        if (rs->allow)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, rs->allow);
        if (rs->auth_challenge)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"benchd\"");
        ret = MHD_queue_response(c, (unsigned)rs->status, resp);
        MHD_destroy_response(resp);
        int cls = rs->status / 100;
        if (cls >= 1 && cls <= 5)
                atomic_fetch_add(&s->d->requests[cls], 1);
        return ret;
}

/* Called by libmicrohttpd with the URI as sent, before the headers are read:
 * the request's context starts here. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
        (void) cls;
        (void) c;
        struct request_ctx *ctx = xcalloc(1, sizeof(*ctx));
        ctx->uri_len = strlen(uri);
        char *query = strchr(uri, '?');
        size_t args = 0;
        for (const char *p = query; p && *p; p++)
                args += *p == '?' || *p == '&';
        if (args > MAX_ARGS) {
                /* libmicrohttpd splits the arguments after this callback,
                 * from the byte after the '?' of this very buffer: none are
                 * split, and the request is answered 414 */
                ctx->too_many_args = true;
                query[1] = '\0';
        }
        return ctx;
}

static enum MHD_Result add_header_len(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
        (void) kind;
        *(size_t *)cls += strlen(key) + 2 + (value ? strlen(value) : 0) + 2;   /* "key: value\r\n" */
        return MHD_YES;
}

/* The request line and headers against max_header_bytes: 414 or 431 as
 * JSON, 0 when they fit.  libmicrohttpd's own limit (its memory pool) lies
 * above, so that these answers are ours. */
static int check_header_size(struct http_server *s, struct MHD_Connection *c, const char *method,
                             const char *version, const struct request_ctx *ctx, struct http_response *rs)
{
        size_t line = strlen(method) + 1 + ctx->uri_len + 1 + strlen(version) + 2, headers = 0;
        (void) MHD_get_connection_values(c, MHD_HEADER_KIND, add_header_len, &headers);
        if (line > (size_t)s->max_header) {
                http_error(rs, 414, "request line longer than %d bytes", s->max_header);
                return -E2BIG;
        }
        if (line + headers + 2 > (size_t)s->max_header) {
                http_error(rs, 431, "request line and headers larger than %d bytes", s->max_header);
                return -E2BIG;
        }
        return 0;
}

/* Content-Length given twice with two values: which one frames the body is
 * a guess, and guesses are how requests get smuggled. */
struct length_headers {
        const char *first;
        bool conflict;
};

static enum MHD_Result check_length(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
        struct length_headers *l = cls;
        (void) kind;
        if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) != 0)
                return MHD_YES;
        if (!l->first)
                l->first = value ? value : "";
        else if (!streq(l->first, value ? value : ""))
                l->conflict = true;
        return MHD_YES;
}

static struct conn_track *track_of(struct MHD_Connection *c)
{
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        return ci ? ci->socket_context : NULL;
}

/* The head of the connection's request is in (true), or the answer is sent
 * and the next head's time starts (false). */
static void track_head(struct http_server *s, struct MHD_Connection *c, bool in)
{
        struct conn_track *t = track_of(c);
        if (!t)
                return;
        pthread_mutex_lock(&s->track_lock);
        t->reading_body = in;
        if (!in)
                t->since = clock_monotonic();
        pthread_mutex_unlock(&s->track_lock);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_size, void **req_cls)
{
        struct http_server *s = cls;
        struct request_ctx *ctx = *req_cls;
        struct http_response rs = { 0 };
        if (!ctx)       /* on_uri() starts it */
                *req_cls = ctx = xcalloc(1, sizeof(*ctx));
        if (!ctx->started) {
                const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
                const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
                long n;
                struct length_headers lengths = { 0 };
                ctx->started = true;
                ctx->local = addr_is_local(ci ? ci->client_addr : NULL);
                track_head(s, c, true);
                if (check_header_size(s, c, method, version, ctx, &rs) < 0)
                        return send_response(s, c, &rs);
                if (ctx->too_many_args) {
                        http_error(&rs, 414, "more than %d query arguments", MAX_ARGS);
                        return send_response(s, c, &rs);
                }
                (void) MHD_get_connection_values(c, MHD_HEADER_KIND, check_length, &lengths);
                if (lengths.conflict) {
                        http_error(&rs, 400, "Content-Length given twice with different values");
                        return send_response(s, c, &rs);
                }
                if (cl && (str_parse_long(cl, &n) < 0 || n > s->max_body)) {
                        http_error(&rs, 413, "request body larger than %d bytes", s->max_body);
                        return send_response(s, c, &rs);
                }
                return MHD_YES;
        }
        if (*upload_size) {
                if (ctx->body.len + *upload_size > (size_t)s->max_body)
                        ctx->too_large = true;
                else
                        buf_add(&ctx->body, upload_data, *upload_size);
                *upload_size = 0;
                return MHD_YES;
        }
        if (ctx->too_large) {
                http_error(&rs, 413, "request body larger than %d bytes", s->max_body);
                return send_response(s, c, &rs);
        }
        struct http_request rq = {
                .method = streq(method, "HEAD") ? "GET" : method,
                .path = url,
                .body = ctx->body.s ? ctx->body.s : "",
                .body_len = ctx->body.len,
                .local = ctx->local,
                .conn = c,
        };
        s->handle(s->d, &rq, &rs);
        log_debug("%s %s -> %d", method, url, rs.status);
        return send_response(s, c, &rs);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode toe)
{
        struct request_ctx *ctx = *req_cls;
        (void) toe;
        track_head(cls, c, false);
        if (ctx) {
                buf_release(&ctx->body);
                free(ctx);
                *req_cls = NULL;
        }
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code)
{
        struct http_server *s = cls;
        struct conn_track *t = *socket_ctx;
        pthread_mutex_lock(&s->track_lock);
        if (code == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
                t = xcalloc(1, sizeof(*t));
                t->fd = ci ? ci->connect_fd : -1;
                t->since = clock_monotonic();
                t->next = s->tracks;
                if (s->tracks)
                        s->tracks->prev = t;
                s->tracks = t;
                *socket_ctx = t;
        } else if (t) {
                /* before libmicrohttpd closes the socket: the watchdog,
                 * which shuts sockets down under this lock, never touches
                 * a descriptor number that is being reused */
                if (t->prev)
                        t->prev->next = t->next;
                else
                        s->tracks = t->next;
                if (t->next)
                        t->next->prev = t->prev;
                free(t);
                *socket_ctx = NULL;
        }
        pthread_mutex_unlock(&s->track_lock);
}

/* The request_timeout watchdog: once a second, each connection whose
 * request head has been on its way for longer is shut down (libmicrohttpd
 * then reads the end and closes it).  libmicrohttpd's own timeout restarts
 * with every byte, so a client sending a byte a second would hold its
 * connection for ever. */
static void *watchdog(void *arg)
{
        struct http_server *s = arg;
        pthread_mutex_lock(&s->track_lock);
        while (!s->stopping) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_sec += 1;
                (void) pthread_cond_timedwait(&s->track_cond, &s->track_lock, &ts);
                double now = clock_monotonic();
                for (struct conn_track *t = s->tracks; t && !s->stopping; t = t->next)
                        if (!t->reading_body && !t->cut && t->fd >= 0 && now - t->since > s->request_timeout) {
                                t->cut = true;
                                (void) shutdown(t->fd, SHUT_RDWR);
                                atomic_fetch_add(&s->d->request_timeouts, 1);
                                log_debug("a connection sent no request head in %.0f s: closed", s->request_timeout);
                        }
        }
        pthread_mutex_unlock(&s->track_lock);
        return NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap) _printf_(2, 0);
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
        char msg[512];
        vsnprintf(msg, sizeof(msg), fmt, ap);
        msg[strcspn(msg, "\n")] = '\0';
        log_debug("libmicrohttpd: %s", msg);
}

size_t http_unescape(char *s)
{
        char *w = s;
        for (const char *r = s; *r;) {
                int hi, lo;
                if (r[0] == '%' && (hi = str_hex_digit(r[1])) >= 0 && (lo = str_hex_digit(r[2])) >= 0 && (hi | lo)) {
                        *w++ = (char)(hi << 4 | lo);
                        r += 3;
                } else
                        *w++ = *r++;
        }
        *w = '\0';
        return (size_t)(w - s);
}

static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
        (void) cls;
        (void) c;
        return http_unescape(s);
}

static int listen_tcp(const char *spec, struct bd_err *err)
{
        struct sockaddr_storage ss;
        socklen_t len = 0;
        int one = 1, r = conf_parse_listen(spec, &ss, &len, err);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return bd_err_set(err, -errno, "socket: %s", strerror(errno));
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *)&ss, len) < 0)
                return bd_err_set(err, -errno, "cannot listen on %s: %s", spec, strerror(errno));
        if (listen(fd, 1024) < 0)
                return bd_err_set(err, -errno, "listen on %s: %s", spec, strerror(errno));
        return TAKE_FD(fd);
}

static int listen_unix(const char *path, struct bd_err *err)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct stat st;
        if (strlen(path) >= sizeof(sa.sun_path))
                return bd_err_set(err, -ENAMETOOLONG, "socket path '%s' is too long", path);
        memcpy(sa.sun_path, path, strlen(path));
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return bd_err_set(err, -errno, "socket: %s", strerror(errno));
        /* a socket file left by an earlier run; anything else is not ours to remove */
        if (lstat(path, &st) == 0) {
                if (!S_ISSOCK(st.st_mode))
                        return bd_err_set(err, -EEXIST, "'%s' exists and is not a socket", path);
                (void) unlink(path);
        }
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return bd_err_set(err, -errno, "cannot listen on '%s': %s", path, strerror(errno));
        (void) chmod(path, 0666);       /* reads are harmless; mutations need the token */
        if (listen(fd, 1024) < 0)
                return bd_err_set(err, -errno, "listen on '%s': %s", path, strerror(errno));
        return TAKE_FD(fd);
}

/* libmicrohttpd's memory for a connection: it answers requests that overflow
 * it itself, in HTML (414, 431) or by closing the connection, so it holds
 * twice max_header_bytes and 32 KiB more: a request over max_header_bytes
 * reaches check_header_size() and gets JSON, unless it is larger still. */
static size_t mhd_pool_size(int max_header)
{
        return (size_t)max_header * 2 + 32768;
}

static int add_daemon(struct http_server *s, int fd, const struct conf *c, struct bd_err *err)
{
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        if (s->n >= MAX_LISTENERS)
                return bd_err_set(err, -E2BIG, "more than %d listening sockets", MAX_LISTENERS);
        if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_INET6)
                flags |= MHD_USE_IPv6;
        s->mhd[s->n] = MHD_start_daemon(
                flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                MHD_OPTION_THREAD_POOL_SIZE, (unsigned)c->threads, MHD_OPTION_CONNECTION_LIMIT,
                (unsigned)c->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)c->per_ip_connections,
                MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)c->connection_timeout, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                mhd_pool_size(c->max_header_bytes), MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
                MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                MHD_OPTION_END);
        if (!s->mhd[s->n]) {
                close(fd);
                return bd_err_set(err, -EIO, "libmicrohttpd could not start on socket %d", fd);
        }
        s->n++;
        return 0;
}

static void describe_fd(struct http_server *s, int fd)
{
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        char addr[INET6_ADDRSTRLEN] = "?", item[160];
        if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
                snprintf(item, sizeof(item), "fd %d", fd);
        else if (ss.ss_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
                inet_ntop(AF_INET, &in->sin_addr, addr, sizeof(addr));
                snprintf(item, sizeof(item), "%s:%u", addr, ntohs(in->sin_port));
        } else if (ss.ss_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
                inet_ntop(AF_INET6, &in6->sin6_addr, addr, sizeof(addr));
                snprintf(item, sizeof(item), "[%s]:%u", addr, ntohs(in6->sin6_port));
        } else if (ss.ss_family == AF_UNIX)
                snprintf(item, sizeof(item), "%s", ((const struct sockaddr_un *)&ss)->sun_path);
        else
                snprintf(item, sizeof(item), "fd %d", fd);
        size_t l = strlen(s->desc);
        snprintf(s->desc + l, sizeof(s->desc) - l, "%s%s", l ? ", " : "", item);
}

int http_start(struct daemon *d, http_handler *handle, struct http_server **ret, struct bd_err *err)
{
        struct http_server *s = xcalloc(1, sizeof(*s));
        struct conf c;
        int n, r = 0;
        s->d = d;
        s->handle = handle;
        pthread_mutex_lock(&d->lock);
        c = d->conf;    /* the ints; strings are read before the lock is released */
        _cleanup_free_ char *listen_spec = xstrdup(c.listen ? c.listen : "");
        _cleanup_free_ char *sock = xstrdup(c.socket ? c.socket : "");
        pthread_mutex_unlock(&d->lock);
        s->max_body = c.max_body_bytes;
        s->max_header = c.max_header_bytes;
        s->request_timeout = c.request_timeout;
        pthread_mutex_init(&s->track_lock, NULL);
        pthread_cond_init(&s->track_cond, NULL);
        if ((r = -pthread_create(&s->watchdog, NULL, watchdog, s)) < 0) {
                r = bd_err_set(err, r, "cannot start a thread: %s", strerror(-r));
                goto fail;
        }
        s->watchdog_running = true;
        n = notify_listen_fds();
        if (n < 0) {
                r = bd_err_set(err, n, "bad socket activation variables (LISTEN_FDS)");
                goto fail;
        }
        if (n > 0) {
                for (int fd = NOTIFY_LISTEN_FDS_START; fd < NOTIFY_LISTEN_FDS_START + n && r == 0; fd++) {
                        describe_fd(s, fd);
                        r = add_daemon(s, fd, &c, err);
                }
                if (r < 0)
                        goto fail;
                size_t l = strlen(s->desc);
                snprintf(s->desc + l, sizeof(s->desc) - l, " (socket activation)");
        } else {
                if (*listen_spec) {
                        int fd = listen_tcp(listen_spec, err);
                        if (fd < 0 || (describe_fd(s, fd), (r = add_daemon(s, fd, &c, err))) < 0) {
                                r = fd < 0 ? fd : r;
                                goto fail;
                        }
                }
                if (*sock) {
                        int fd = listen_unix(sock, err);
                        if (fd < 0) {
                                r = fd;
                                goto fail;
                        }
                        s->unix_path = xstrdup(sock);
                        describe_fd(s, fd);
                        if ((r = add_daemon(s, fd, &c, err)) < 0)
                                goto fail;
                }
                if (s->n == 0) {
                        r = bd_err_set(err, -EINVAL, "nothing to listen on: 'listen' and 'socket' are both empty");
                        goto fail;
                }
        }
        *ret = s;
        return 0;
fail:
        http_stop(s);
        return r;
}

struct http_server *http_stop(struct http_server *s)
{
        if (!s)
                return NULL;
        for (int i = 0; i < s->n; i++)
                MHD_stop_daemon(s->mhd[i]);     /* closes its listening socket */
        if (s->watchdog_running) {
                pthread_mutex_lock(&s->track_lock);
                s->stopping = true;
                pthread_cond_signal(&s->track_cond);
                pthread_mutex_unlock(&s->track_lock);
                pthread_join(s->watchdog, NULL);
        }
        pthread_mutex_destroy(&s->track_lock);
        pthread_cond_destroy(&s->track_cond);
        if (s->unix_path)
                (void) unlink(s->unix_path);
        free(s->unix_path);
        free(s);
        return NULL;
}

const char *http_describe(const struct http_server *s)
{
        return s->desc;
}

/* ---- request bodies ---- */

/* Whether a JSON text has a \u0000 escape in a string: cJSON would cut the
 * string there, and a request must not mean another path than it says. */
static bool has_nul_escape(const char *p, size_t n)
{
        bool in_string = false;
        for (size_t i = 0; i < n; i++) {
                if (!in_string) {
                        in_string = p[i] == '"';
                        continue;
                }
                if (p[i] == '"')
                        in_string = false;
                else if (p[i] == '\\' && i + 1 < n) {
                        if (p[i + 1] == 'u' && i + 5 < n && !memcmp(p + i + 2, "0000", 4))
                                return true;
                        i++;
                }
        }
        return false;
}

static int cmp_str_ptr(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether two fields of object j have one name: sorted, so that a body of
 * thousands of fields costs n log n, not every pair. */
static bool has_duplicate_field(const cJSON *j)
{
        size_t n = 0, i = 0;
        bool dup = false;
        for (const cJSON *e = j->child; e; e = e->next)
                n++;
        if (n < 2)
                return false;
        _cleanup_free_ const char **names = xcalloc(n, sizeof(*names));
        for (const cJSON *e = j->child; e; e = e->next)
                names[i++] = e->string;
        qsort(names, n, sizeof(*names), cmp_str_ptr);
        for (i = 1; i < n && !dup; i++)
                dup = streq(names[i - 1], names[i]);
        return dup;
}

cJSON *http_body_json(struct http_request *rq, struct http_response *rs, bool required)
{
        const char *end = NULL;
        if (rq->body_len == 0 && !required)
                return cJSON_CreateObject();
        cJSON *j = cJSON_ParseWithLengthOpts(rq->body, rq->body_len, &end, false);
        if (!j || !cJSON_IsObject(j)) {
                http_error(rs, 400, "the body must be a JSON object%s", j ? "" : " (malformed JSON)");
                cJSON_Delete(j);
                return NULL;
        }
        while (end && end < rq->body + rq->body_len && strchr(" \t\r\n", *end) && *end)
                end++;
        const char *bad = NULL;
        if (end && end < rq->body + rq->body_len)
                bad = "malformed JSON: more after the object";
        else if (has_nul_escape(rq->body, rq->body_len) || memchr(rq->body, '\0', rq->body_len))
                bad = "a string holds \\u0000";
        if (!bad && has_duplicate_field(j))
                bad = "a field is given twice";
        if (bad) {
                http_error(rs, 400, "%s", bad);
                cJSON_Delete(j);
                return NULL;
        }
        return j;
}

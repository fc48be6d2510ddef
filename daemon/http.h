/* http.h: benchd's HTTP server (libmicrohttpd, epoll, a thread pool).
 *
 * The server listens on the sockets systemd passed (socket activation), or
 * else on conf.listen (TCP) and conf.socket (a Unix socket).  Each request is
 * read whole (the body up to conf.max_body_bytes, else 413) and handed to
 * the handler given to http_start() (benchd's is api_handle(), api.h), which
 * fills a struct http_response; the server sends it.
 * A request line longer than conf.max_header_bytes gets 414, request line
 * and headers larger than it 431 (as JSON: libmicrohttpd's own HTML answers
 * are left to requests over twice that); more than 64 query arguments get
 * 414, two different Content-Length headers 400; more connections than
 * conf.max_connections, or than conf.per_ip_connections from one address,
 * are refused; a connection whose request line and headers take longer than
 * conf.request_timeout is closed (a watchdog thread: libmicrohttpd's own
 * timeout restarts with every byte).  Error messages are made valid UTF-8.
 * Built without libmicrohttpd, http_start() fails with -EOPNOTSUPP.
 */
#ifndef BD_HTTP_H
#define BD_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <cjson/cJSON.h>

#include "daemon.h"
#include "err.h"

#define HTTP_MAX_PARAMS 2

struct http_request {
        const char *method;             /* HEAD is served as GET */
        const char *path;               /* decoded, without the query */
        const char *body;
        size_t body_len;
        bool local;                     /* from loopback or the Unix socket */
        const char *params[HTTP_MAX_PARAMS];    /* the '*' segments of the matched route */
        void *conn;
};

struct http_response {
        int status;
        char *body;                     /* malloc'd, owned by the response */
        size_t len;
        const char *content_type;
        const char *allow;              /* 405: the methods the path takes */
        bool auth_challenge;            /* 401: send WWW-Authenticate */
};

/* A query argument or header of the request, NULL when absent. */
const char *http_arg(const struct http_request *rq, const char *key);
const char *http_header(const struct http_request *rq, const char *name);

/* Decodes %XX in a request's path or argument in place, as libmicrohttpd
 * does, except %00: a NUL would cut the string where every handler reads it
 * (/v1/datasets/a%00b reached the handler of /v1/datasets/a); it stays
 * "%00", which no name or path check accepts.  Returns the new length. */
size_t http_unescape(char *s);

/* Sets a JSON body (takes ownership of j) and the status. */
void http_json(struct http_response *rs, int status, cJSON *j);
/* The request's body as a JSON object (required: an empty body is refused;
 * else it reads as {}), or NULL after answering 400: not an object,
 * malformed, more after it, a \u0000 in a string (cJSON would cut the
 * string there), a field given twice. */
cJSON *http_body_json(struct http_request *rq, struct http_response *rs, bool required);
/* {"error": MESSAGE, "status": STATUS} */
void http_error(struct http_response *rs, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* What answers a request: fills rs from rq; called from the server's
 * threads, several at a time. */
typedef void http_handler(struct daemon *d, struct http_request *rq, struct http_response *rs);

struct http_server;
/* Listens as the daemon's configuration says; every request goes to handle. */
int http_start(struct daemon *d, http_handler *handle, struct http_server **ret, struct bd_err *err);
struct http_server *http_stop(struct http_server *s);
/* How many sockets the server listens on, and a description ("127.0.0.1:9410, /run/benchd.sock"). */
const char *http_describe(const struct http_server *s);

#endif

/* fuzz-http.c: benchd's HTTP API as it serves a request (daemon/api.h),
 * without a socket (fuzz-daemon.h).
 *
 * The input is a request as it goes over the wire:
 *
 *     METHOD TARGET [VERSION]
 *     Name: value            (headers, up to an empty line)
 *
 *     BODY
 *
 * (lines may end in CRLF).  It is taken apart as libmicrohttpd does for
 * http.c: the path and the query arguments decoded by http.c's rule (%XX
 * but %00, '+' a space in arguments), HEAD served as GET; a header line
 * without ':' is a request libmicrohttpd refuses itself.  The client is
 * local unless a header X-Fuzz-Remote is given.  Then api_handle() answers
 * it.  Promises checked, besides fuzz_check_response():
 *   - nothing is changed (a 2xx answer to POST or DELETE) without the
 *     token;
 *   - nothing is read (a 2xx answer to another method) by a client that
 *     is not local (changes need the token, from anywhere);
 *   - no staging job starts (202): stage_allow is empty.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "api.h"
#include "fuzz-daemon.h"
#include "fuzz.h"
#include "http.h"
#include "strutil.h"

/* key=value&key... into f->args, each decoded ('+' first, as libmicrohttpd). */
static void split_query(char *q, struct fuzz_request *f)
{
        char *save = NULL;
        for (char *a = strtok_r(q, "&", &save); a && f->nargs < FUZZ_MAX_FIELDS; a = strtok_r(NULL, "&", &save)) {
                char *eq = strchr(a, '=');
                if (eq)
                        *eq++ = '\0';
                for (char *p = a; *p; p++)
                        if (*p == '+')
                                *p = ' ';
                (void) http_unescape(a);
                if (eq) {
                        for (char *p = eq; *p; p++)
                                if (*p == '+')
                                        *p = ' ';
                        (void) http_unescape(eq);
                }
                f->args[f->nargs][0] = a;
                f->args[f->nargs][1] = eq;
                f->nargs++;
        }
}

static char *chomp(char *line)
{
        size_t n = strlen(line);
        if (n && line[n - 1] == '\r')
                line[n - 1] = '\0';
        return line;
}

/* Header lines into f->headers; false for one libmicrohttpd refuses. */
static bool split_headers(char *lines, struct fuzz_request *f)
{
        char *save = NULL;
        for (char *l = strtok_r(lines, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                char *colon = strchr(chomp(l), ':');
                if (!colon || colon == l)
                        return false;
                *colon++ = '\0';
                while (*colon == ' ' || *colon == '\t')
                        colon++;
                if (f->nheaders < FUZZ_MAX_FIELDS) {
                        f->headers[f->nheaders][0] = l;
                        f->headers[f->nheaders][1] = colon;
                        f->nheaders++;
                }
        }
        return true;
}

static const char *header(const struct fuzz_request *f, const char *name)
{
        for (size_t i = 0; i < f->nheaders; i++)
                if (!strcasecmp(f->headers[i][0], name))
                        return f->headers[i][1];
        return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct daemon *d = fuzz_daemon();
        struct fuzz_request f = { .nargs = 0 };
        struct http_response rs = { 0 };
        /* the head ends at the first empty line; the body is what follows, bytes */
        const char *end = memmem(data, size, "\n\n", 2), *end_crlf = memmem(data, size, "\r\n\r\n", 4);
        size_t skip = 2;
        if (end_crlf && (!end || end_crlf < end)) {
                end = end_crlf;
                skip = 4;
        }
        size_t head_len = end ? (size_t)(end - (const char *)data) : size;
        _cleanup_free_ char *head = fuzz_str(data, head_len);
        const char *body = end ? end + skip : "";
        size_t body_len = end ? size - head_len - skip : 0;

        char *save = NULL, *headers = strchr(head, '\n');
        if (headers)
                *headers++ = '\0';
        char *method = strtok_r(chomp(head), " ", &save), *target = strtok_r(NULL, " ", &save);
        if (!method || !target || (headers && !split_headers(headers, &f)))
                return 0;
        char *query = strchr(target, '?');
        if (query) {
                *query++ = '\0';
                split_query(query, &f);
        }
        (void) http_unescape(target);
        bool local = !header(&f, "X-Fuzz-Remote");
        struct http_request rq = {
                .method = streq(method, "HEAD") ? "GET" : method,
                .path = target,
                .body = body,
                .body_len = body_len,
                .local = local,
                .conn = &f,
        };
        api_handle(d, &rq, &rs);
        fuzz_check_response(&rs);
        bool ok = rs.status < 300, change = streq(rq.method, "POST") || streq(rq.method, "DELETE");
        if (ok && change)
                FUZZ_CHECK(daemon_token_ok(d, header(&f, "Authorization")), "%s %s answered %d without the token",
                           rq.method, rq.path, rs.status);
        FUZZ_CHECK(!ok || local || change, "%s %s answered %d to a client that is not local", rq.method, rq.path,
                   rs.status);
        FUZZ_CHECK(rs.status != 202, "%s %s started a job", rq.method, rq.path);
        free(rs.body);
        return 0;
}

/* fuzz-daemon.h: benchd without a socket, for the API harnesses
 * (fuzz-http.c, fuzz-datasets.c).
 *
 * fuzz_daemon() sets up, once, the state benchd's main() would: the
 * configuration's defaults, the recorded p3dn machine of
 * tests/fixtures/sysfs as the node (inventoried once: inventory_ttl is a
 * day), a bearer token, a state directory holding the state files of two
 * datasets ('coco' complete, 'old' failed), and an empty stage_allow, so
 * that no request can start a job: the harnesses would stage whatever
 * directory an input names.
 *
 * Requests are answered by api.c as http.c has it call them, with a
 * struct http_request whose conn points to a struct fuzz_request instead of
 * a libmicrohttpd connection: the harness defines
 * MHD_lookup_connection_value(), the one libmicrohttpd function the
 * handlers reach (through http_arg() and http_header()), to read the
 * request's arguments and headers from there.  Nothing in daemon/ changes.
 */
#ifndef BD_FUZZ_DAEMON_H
#define BD_FUZZ_DAEMON_H

#include "daemon.h"
#include "http.h"

#define FUZZ_TOKEN "fuzz-token-0123456789abcdef"
#define FUZZ_MAX_FIELDS 64

/* The arguments and headers of a request, as libmicrohttpd would hand them
 * to the handler: decoded, NUL-terminated; an argument without '=' has a
 * NULL value. */
struct fuzz_request {
        const char *args[FUZZ_MAX_FIELDS][2];
        size_t nargs;
        const char *headers[FUZZ_MAX_FIELDS][2];
        size_t nheaders;
};

struct daemon *fuzz_daemon(void);

/* Checks what every client may rely on: a status from 200 to 599, a body
 * of len bytes with a content type; JSON bodies parse and are UTF-8;
 * errors are {"error": MESSAGE, "status": STATUS}; a 405 says which methods
 * are allowed and a 401 asks for the token. */
void fuzz_check_response(const struct http_response *rs);

#endif

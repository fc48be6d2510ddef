/* nodes.h: talking to the benchd of many nodes at once.
 *
 * A node is "HOST", "HOST:PORT", "[IPv6]:PORT", a URL "http://..." or
 * "unix:/path/to/socket".  nodes_request() sends one request to each node in
 * parallel through libcurl's multi interface and waits for all of them (or
 * their timeout); each node's outcome is in its struct node_call: the HTTP
 * status and body, or the transport error.  A node that does not answer
 * never delays the others beyond the timeout.
 */
#ifndef BD_NODES_H
#define BD_NODES_H

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"
#include "system.h"

struct node_call {
        char *node;             /* as the user named it */
        char *base;             /* http://host:port, or http://localhost for a Unix socket */
        char *socket;           /* Unix socket path, or NULL */
        long status;            /* HTTP status, 0 when none came */
        struct bd_buf body;
        char error[256];        /* transport error or the API's "error", "" when fine */
        cJSON *json;            /* parsed body when it is JSON, else NULL */
};

/* Whether a node is named as HOST, HOST:PORT, [IPv6]:PORT (a zone id as
 * [fe80::1%eth0]), a URL http(s)://HOST[:PORT][/PATH] (no query, fragment
 * or blanks: the API's paths are appended) or unix:PATH (PORT 1 to 65535). */
bool node_name_valid(const char *s);
/* The host of a valid node name (HOST of HOST:PORT or a URL, the address of
 * [IPv6]:PORT) in ret; false for unix:PATH or one that does not fit. */
bool node_host(const char *name, char *ret, size_t size);
/* Appends name to the NULL-terminated list *names of *n names when it is a
 * valid node name not yet in it; else an error naming where it came from. */
int nodes_add(char ***names, size_t *n, const char *name, const char *where, struct bd_err *err);
/* The same for each name of a comma-separated list (--nodes N1,N2). */
int nodes_add_list(char ***names, size_t *n, const char *list, const char *where, struct bd_err *err);
/* Fills calls[i] for each node name (default port when none is given). */
void nodes_init(struct node_call *calls, char *const *names, int n, int default_port);
void nodes_release(struct node_call *calls, int n);
/* An error when two of the NULL-terminated names reach the same benchd
 * however they are spelled ("n1" and "n1:9410" with the default port 9410,
 * "[::1]" and "[0::1]", "127.1" and "127.0.0.1", "n1." and "n1", a host
 * name in upper and lower case, an http URL with and without :80, a Unix
 * socket path with doubled slashes or ./), naming both (and the system,
 * when not NULL, they come from). */
int nodes_check(char *const *names, int default_port, const char *system, struct bd_err *err);
/* The nodes of a system: benchd.hosts, else mpirun.hosts, else the hosts of
 * mpirun.hostfile (hostfile.h), else "localhost" for a system of one node
 * (NULL-terminated, caller frees with strv_free); an error names the entry
 * that is not a node name or is there twice, or says that a system of more
 * nodes names none. */
int nodes_of_system(const cJSON *sys, char ***ret, struct bd_err *err);

/* Sends METHOD path (with body when non-NULL, and "Authorization: Bearer
 * token" when token is non-NULL) to every node; returns how many got a 2xx. */
int nodes_request(struct node_call *calls, int n, const char *method, const char *path, const char *body,
                  const char *token, long timeout_ms);

/* True when the call got a 2xx JSON answer. */
bool node_ok(const struct node_call *c);
/* The exit status of a command after a node that failed, given the status
 * so far: BD_EXIT_UNREACHABLE once any node gave no answer at all, else
 * BD_EXIT_FAIL. */
int nodes_exit(const struct node_call *c, int ret);

#endif

/* conf.h: benchd's configuration, one table for the defaults, the file and
 * the documentation (as Redis's config.c).
 *
 * The file holds "key = value" lines; '#' starts a comment; blank lines are
 * ignored.  Unknown keys, bad values and repeated keys are errors naming the
 * file and line ("/etc/benchd/benchd.conf:7: 'threads': expected an integer
 * from 1 to 64").  Command-line options override the file.  On SIGHUP the
 * file is read again into a new struct conf; the settings marked
 * CONF_RESTART keep their old value until a restart (and say so).
 */
#ifndef BD_CONF_H
#define BD_CONF_H

#include <stdbool.h>
#include <sys/socket.h>

#include "err.h"

enum read_access { READ_LOCAL, READ_ANY };

struct conf {
        char *listen;                   /* ADDR:PORT, "" for none */
        char *socket;                   /* path of a Unix socket, "" for none */
        int threads;                    /* HTTP thread pool */
        int max_connections;
        int per_ip_connections;         /* 0: no limit per address */
        int connection_timeout;         /* seconds */
        int request_timeout;            /* seconds for a request's head */
        int max_header_bytes;           /* request line + headers */
        int max_body_bytes;
        enum read_access read_access;   /* who may GET: loopback and the socket, or anyone */
        char *token_file;               /* bearer token for mutating requests */
        char *state_dir;
        char *sysfs_root;
        char *nvml_library;             /* "": libnvidia-ml.so.1 */
        int inventory_ttl;              /* seconds an inventory is served before a rescan */
        int log_level;
        char *stage_allow;              /* space-separated directories staging may write under */
        char *node_name;                /* the node's name in the scheduler, "": its host name */
};

/* Fills in the defaults. */
void conf_init(struct conf *c);
void conf_release(struct conf *c);
/* Reads a file over the current values; -ENOENT when it does not exist. */
int conf_load(struct conf *c, const char *path, struct bd_err *err);
/* Sets one key from its text form (the command line): 0 or -EINVAL with err. */
int conf_set(struct conf *c, const char *key, const char *value, struct bd_err *err);
/* True when a change from old to new needs a restart; names the first key. */
bool conf_needs_restart(const struct conf *old, const struct conf *new, const char **ret_key);
/* A listen address: "127.0.0.1:9410", "[::1]:9410", "*:9410" (every IPv4
 * address).  0, or -EINVAL with err (which does not name the key). */
int conf_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len, struct bd_err *err);
/* Writes the table as a commented default configuration file. */
void conf_write_defaults(FILE *f);

#endif

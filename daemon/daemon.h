/* daemon.h: the state benchd's parts share.
 *
 * The inventory is scanned at start, on SIGHUP and when a request finds it
 * older than conf.inventory_ttl; readers take a reference to an immutable
 * snapshot (daemon_inventory_get/put) so a rescan never changes what a
 * request is looking at.  One request scans, without the lock; the others
 * are served the snapshot it replaces meanwhile.  The configuration is replaced as a whole on
 * SIGHUP under the same lock; request handlers read the settings they need
 * through daemon_conf_*() accessors or copy them under the lock.
 */
#ifndef BD_DAEMON_H
#define BD_DAEMON_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "buf.h"
#include "clock.h"
#include "conf.h"
#include "inventory.h"

struct inv_snapshot {
        atomic_int ref;
        struct inventory inv;
        char *json;             /* inventory_json(), unformatted, with a final newline */
        size_t json_len;
        double started;         /* monotonic seconds: the scan began */
        double taken;           /* and ended */
};

struct daemon {
        pthread_mutex_t lock;
        struct conf conf;               /* guarded by lock */
        const char *conf_path;          /* NULL: defaults and options only */
        char *token;                    /* guarded by lock; NULL: mutating requests are refused */
        struct inv_snapshot *snap;      /* guarded by lock */
        bool scanning;                  /* guarded by lock: a request is scanning, without it */
        pthread_cond_t scanned;         /* with lock: a scan ended */
        double start_time;              /* monotonic, and wall clock below */
        double start_wall;
        atomic_ulong requests[6];       /* by status class: [1] 1xx ... [5] 5xx */
        atomic_ulong request_timeouts;  /* connections cut for a late request head */
        atomic_ulong scrapes;
        struct datasets *datasets;      /* NULL: staging unavailable */
        struct health_report *report;   /* guarded by lock: benchctl health's last verdict, NULL: none */
        unsigned long report_gen;       /* guarded by lock: reports taken */
        pthread_mutex_t report_save;    /* one save of the report at a time */
};


/* The current inventory, rescanned first when older than max_age seconds
 * (< 0: the configured ttl).  Never NULL; release with daemon_inventory_put. */
struct inv_snapshot *daemon_inventory_get(struct daemon *d, double max_age);
void daemon_inventory_put(struct inv_snapshot *s);
/* Scans now and makes it current. */
void daemon_inventory_rescan(struct daemon *d);

/* Loads the token from conf.token_file, creating it (0600, random) when
 * missing and create is set.  0 or a negative errno with err. */
int daemon_load_token(struct daemon *d, bool create, struct bd_err *err);

/* The health report kept in the state directory, made current (api.c) */
void daemon_health_report_load(struct daemon *d);

/* True when the bearer token matches (constant time). */
bool daemon_token_ok(struct daemon *d, const char *authorization);

/* Prometheus text exposition of the node, appended to out. */
void metrics_write(struct daemon *d, struct bd_buf *out);
/* "# HELP benchd_NAME HELP" and "# TYPE benchd_NAME TYPE" */
void metrics_family(struct bd_buf *b, const char *name, const char *type, const char *help);
/* "benchd_NAME{L1="V1",...} VALUE" with nlabels name, value pairs, values escaped */
void metrics_sample(struct bd_buf *b, const char *name, double v, int nlabels, ...);

#endif

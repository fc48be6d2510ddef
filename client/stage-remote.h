/* stage-remote.h: benchctl stage on many nodes through their benchd. */
#ifndef BD_STAGE_REMOTE_H
#define BD_STAGE_REMOTE_H

#include <stdbool.h>

#include "err.h"
#include "stage/stage.h"

struct stage_remote_req {
        char *const *nodes;             /* NULL-terminated HOST[:PORT] or URLs */
        int port;                       /* where a node gives none */
        const char *token;
        const char *name;
        const char *src, *dst;          /* src NULL for verify-only (benchd knows it) */
        bool verify_only, verify, delete_extra, rehash;
        unsigned workers;               /* 0: benchd's default */
        double bwlimit_mbps;            /* 0: none */
        enum bd_fsync_policy fsync;
        bool quiet, json;
        long timeout_ms;                /* per request */
};

/* Stages (or verifies) on every node and follows the jobs to their end;
 * BD_EXIT_OK when every node completed, BD_EXIT_FAIL otherwise (each failed
 * node named on stderr). */
int stage_remote(const struct stage_remote_req *q);
/* The bearer token from a file, or $BENCHD_TOKEN when file is NULL. */
int stage_remote_token(const char *file, char **ret, struct bd_err *err);

#endif

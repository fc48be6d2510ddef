/* benchd-defaults.h: where a node's benchd is found when nothing says
 * otherwise, for the daemon's own defaults (daemon/conf.c) and for those who
 * talk to it (system files' benchd section, benchctl nodes and stage). */
#ifndef BD_BENCHD_DEFAULTS_H
#define BD_BENCHD_DEFAULTS_H

#define BD_PORT 9410
#define BD_PORT_STR "9410"
/* the bearer token of requests that change something */
#define BD_TOKEN_FILE "/var/lib/benchd/token"

#endif

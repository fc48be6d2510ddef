/* system.h: per-system configurations (systems/NAME.json).
 *
 * A system file is JSON with comments.  "extends": "PARENT" makes it inherit
 * from another system: values merge key by key, objects recursively, the
 * child winning, null removing an inherited or built-in key (through any
 * number of parents): a system key with a built-in value gets that back, a
 * workload's key is left out (its trainer's own default applies).  Under everything lie the built-in values.  Files
 * are found in a search path: --systems-dir, then $BENCHD_SYSTEMS
 * (colon-separated), then ~/.config/benchd/systems, then the bundled
 * directory; the first file of a name wins, and a file may extend the system
 * of its own name further down the path.
 *
 * A loaded system is a cJSON object that has been validated file by file,
 * merged, overridden with --set, refilled with the built-in values of the
 * system keys a null removed, completed (derived values filled in) and checked as a whole: the
 * one place where a key's default is written is the built-in values
 * (system.c for the system, each workload's file for its section).
 */
#ifndef BD_SYSTEM_H
#define BD_SYSTEM_H

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "bind.h"
#include "err.h"

struct bd_sysdirs {
        char **dirs;
        size_t n;
};

/* Builds the search path; cli_dir may be NULL. */
void sysdirs_init(struct bd_sysdirs *d, const char *cli_dir);
/* The user's part of a search path of files of a kind ("systems",
 * "workloads"): cli_dir (may be NULL), the colon-separated directories of
 * the environment variable env_name, then $XDG_CONFIG_HOME/benchd/KIND or
 * ~/.config/benchd/KIND; dirs is NULL-terminated. */
void sysdirs_user(struct bd_sysdirs *d, const char *cli_dir, const char *env_name, const char *kind);
void sysdirs_release(struct bd_sysdirs *d);
/* Sorted, unique names of every system on the path (NULL-terminated). */
char **system_list(const struct bd_sysdirs *d);
void strv_free(char **v);

struct bd_system {
        char *name;
        char *path;     /* file of the system itself */
        cJSON *json;    /* resolved configuration */
};

/* Loads, merges and validates.  sets: NULL-terminated "KEY=VALUE" overrides. */
int system_load(const struct bd_sysdirs *d, const char *name, char *const *sets,
                struct bd_system *ret, struct bd_err *err);
void system_release(struct bd_system *s);

/* Typed access to a resolved configuration (ret->json) by dotted path
 * ("slurm.partition", or a key of a section given as cfg).  Every system key
 * with a built-in value is there (a null in a file resets it), so callers
 * write no default of their own; an optional key that is absent gives NULL, 0
 * or false.  Workload keys a null removed, optional keys where those are
 * values too (a seed of 0) and JSON that is not a resolved configuration:
 * json_get() and friends (json.h), with the caller's meaning of absent. */
const cJSON *sys_get(const cJSON *cfg, const char *dotted);
const char *sys_str(const cJSON *cfg, const char *dotted);
long sys_int(const cJSON *cfg, const char *dotted);
double sys_num(const cJSON *cfg, const char *dotted);
bool sys_bool(const cJSON *cfg, const char *dotted);

/* The declared topology of a (validated) configuration: cpu, gpus_per_node,
 * topology and binding.hyperthreads (bind.h has the rule it plans by). */
int system_topo(const cJSON *cfg, struct bd_topo *ret, struct bd_err *err);

#endif

/* system.h: per-system configurations (systems/NAME.json).
 *
 * A system file is JSON with comments.  "extends": "PARENT" makes it inherit
 * from another system: values merge key by key, objects recursively, the
 * child winning, null removing an inherited key.  Under everything lie the
 * built-in defaults.  Files are found in a search path: --systems-dir, then
 * $BENCHD_SYSTEMS (colon-separated), then ~/.config/benchd/systems, then the
 * bundled directory; the first file of a name wins, and a file may extend the
 * system of its own name further down the path.
 *
 * A loaded system is a cJSON object that has been validated file by file,
 * merged, overridden with --set, completed (derived values filled in) and
 * checked as a whole.
 */
#ifndef BD_SYSTEM_H
#define BD_SYSTEM_H

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "err.h"

struct bd_sysdirs {
        char **dirs;
        size_t n;
};

/* Builds the search path; cli_dir may be NULL. */
void sysdirs_init(struct bd_sysdirs *d, const char *cli_dir);
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

/* Typed access by dotted path; the defaults guarantee most keys exist. */
const cJSON *sys_get(const cJSON *root, const char *dotted);
const char *sys_str(const cJSON *root, const char *dotted, const char *dflt);
long sys_int(const cJSON *root, const char *dotted, long dflt);
double sys_num(const cJSON *root, const char *dotted, double dflt);
bool sys_bool(const cJSON *root, const char *dotted, bool dflt);

#endif

/* schema.h: what a system configuration may contain.
 *
 * One table describes every key of a system file: its type, range, allowed
 * values and help; the workload sections come from the workload files
 * (workload.h).  It drives validation of each file, of --set overrides and
 * of the merged result, and the typo suggestions for unknown keys.
 */
#ifndef BD_SCHEMA_H
#define BD_SCHEMA_H

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "err.h"

enum schema_type {
        S_STRING,
        S_INT,
        S_NUMBER,
        S_BOOL,
        S_OBJECT,       /* children */
        S_STRING_LIST,
        S_INT_LIST,
        S_NUMBER_LIST,
        S_MAP,          /* free keys (checked by a word rule) to string/number/bool */
        S_OBJECT_LIST,  /* list of objects with children */
};

enum schema_word {
        W_ANY,          /* free text (no newlines) */
        W_TOKEN,        /* [A-Za-z0-9_.,:@+/%^=-], safe in #SBATCH lines */
        W_IDENT,        /* [A-Za-z_][A-Za-z0-9_]*: environment variable names */
        W_TIME,         /* Slurm time limit */
        W_MEM,          /* Slurm memory size: 0, 64G, 4000 */
        W_OPTION,       /* a command-line option: starts with '-' */
        W_TENANTS,      /* off, per-gpu or a number of tenants, 1 to 4096 */
        W_NODE_GROUPS,  /* off, or rounds of node groups: 1+2,3+4;1+3,2+4 (groups.h) */
        W_VERSION,      /* a software version: [FAMILY ][>=]N[.N]... (strutil.h) */
};

struct schema_key {
        const char *name;
        enum schema_type type;
        const struct schema_key *children;
        double min, max;                /* numbers and list elements; min > max: unbounded */
        const char *const *choices;     /* strings: allowed values (NULL-terminated) */
        enum schema_word word;          /* strings and S_MAP keys */
        const char *help;
};

/* What workload sections share (workload.c): the backends, the precisions
 * and the keys of a published result. */
extern const char *const schema_backends[];
extern const char *const schema_precisions[];
extern const struct schema_key schema_published_keys[];

/* Checks types, ranges and known keys of a system object.  where(line) names
 * the location of an error: label is "file" or "--set", text (optional) is the
 * stripped file text used to find a key's line. */
int schema_validate(const cJSON *root, const char *label, const char *text, struct bd_err *err);
/* Checks one value against one key (a workload file's default); key names
 * it in the error, label and text (optional) locate it. */
int schema_check_value(const cJSON *v, const struct schema_key *k, const char *key, const char *label,
                       const char *text, struct bd_err *err);
/* Finds the schema entry of a dotted key ("ssd.batch_size"); NULL when unknown.
 * *ret_map_value is set when the key is a free key inside an S_MAP. */
const struct schema_key *schema_lookup(const char *dotted, bool *ret_map_value);
/* The closest known dotted key for a typo, or NULL. */
const char *schema_suggest(const char *dotted);

#endif

/* fuzz-system.c: system files with inheritance and schema (lib/system.h).
 *
 * The input is a system file.  It is loaded twice from a search path of a
 * scratch directory before the bundled systems/:
 *   - as fuzz.json, on its own (or extending a bundled system, as the seeds
 *     do with "extends");
 *   - as C4140.json, in the middle of a real chain: the bundled 4xC4140
 *     extends it, and it may extend the bundled C4140 (a file refining the
 *     system of its own name).
 * Promises checked, each time:
 *   - system_load() gives a one-line UTF-8 error message or a configuration,
 *     never both;
 *   - a configuration passes the schema as a file would, its declared
 *     topology gives a binding plan for its ranks (system_topo()), and every
 *     key the built-in values have is there;
 *   - written out as a file of its own and loaded again, it gives the same
 *     configuration (plus the workload keys a null had removed, which come
 *     back from their built-in values).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "fuzz.h"
#include "json.h"
#include "bd-paths.h"
#include "schema.h"
#include "system.h"

static char *dir;                       /* the scratch systems directory */
static struct bd_sysdirs dirs;

static void setup(void)
{
        static char *list[2];
        if (dir)
                return;
        dir = fuzz_path("systems");
        FUZZ_CHECK(fs_mkdir_p(dir, 0755) == 0, "cannot create '%s'", dir);
        list[0] = dir;
        list[1] = BD_SRCDIR "/systems";
        dirs.dirs = list;
        dirs.n = 2;
}

/* Every member of a (recursively, through objects) has the same value in b. */
static bool json_within(const cJSON *a, const cJSON *b)
{
        if (!cJSON_IsObject(a) || !cJSON_IsObject(b))
                return cJSON_Compare(a, b, true);
        for (const cJSON *e = a->child; e; e = e->next) {
                const cJSON *o = cJSON_GetObjectItemCaseSensitive(b, e->string);
                if (!o || !json_within(e, o))
                        return false;
        }
        return true;
}

/* Loads name; returns the configuration, or NULL after checking the error. */
static cJSON *load(const char *name, struct bd_err *err)
{
        struct bd_system sys = { 0 };
        int r = system_load(&dirs, name, NULL, &sys, err);
        if (r < 0) {
                FUZZ_CHECK(!sys.json && !sys.name && !sys.path, "system_load failed (%d) and gave a system", r);
                FUZZ_CHECK(err->msg[0], "system_load failed (%d) without a message", r);
                FUZZ_CHECK(!strpbrk(err->msg, "\n\r") && fuzz_utf8_valid(err->msg),
                           "a message of more than one line, or not UTF-8: '%s'", err->msg);
                return NULL;
        }
        FUZZ_CHECK(r == 0 && cJSON_IsObject(sys.json), "system_load returned %d without a configuration", r);
        FUZZ_CHECK(streq(sys.name, name) && sys.path, "system_load gave name '%s' for '%s'", sys.name, name);
        cJSON *cfg = TAKE_PTR(sys.json);
        system_release(&sys);
        return cfg;
}

static void check_config(const cJSON *cfg, const char *name)
{
        struct bd_err err = { "" };
        struct bd_topo topo;
        FUZZ_CHECK(schema_validate(cfg, "resolved", NULL, &err) == 0, "'%s' resolves to what the schema refuses: %s",
                   name, err.msg);
        FUZZ_CHECK(!cJSON_GetObjectItemCaseSensitive(cfg, "extends"), "'%s' resolved keeps 'extends'", name);
        FUZZ_CHECK(system_topo(cfg, &topo, &err) == 0, "'%s': system_topo: %s", name, err.msg);
        static const char *const keys[] = { "nodes", "gpus_per_node", "ranks_per_node", "cpu.sockets",
                                            "launcher", "trials", "paths.logs", "benchd.port", NULL };
        for (const char *const *k = keys; *k; k++)
                FUZZ_CHECK(sys_get(cfg, *k), "'%s' resolved has no '%s'", name, *k);
}

/* The resolved configuration, as a file of its own, loads to itself. */
static void check_reload(const cJSON *cfg, const char *name)
{
        _cleanup_free_ char *text = cJSON_Print(cfg);
        _cleanup_free_ char *path = xasprintf("%s/resolved.json", dir);
        FUZZ_CHECK(text, "a configuration does not print");
        struct bd_err err = { "" };
        fuzz_write(path, text, strlen(text));
        _cleanup_json_ cJSON *again = load("resolved", &err);
        FUZZ_CHECK(again, "'%s' resolved does not load as a file: %s", name, err.msg);
        FUZZ_CHECK(json_within(cfg, again), "'%s' resolved, written and loaded again, changed", name);
        unlink(path);
}

static void try(const char *name)
{
        struct bd_err err = { "" };
        _cleanup_json_ cJSON *cfg = load(name, &err);
        if (!cfg)
                return;
        check_config(cfg, name);
        check_reload(cfg, name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        setup();
        _cleanup_free_ char *alone = xasprintf("%s/fuzz.json", dir);
        _cleanup_free_ char *parent = xasprintf("%s/C4140.json", dir);
        fuzz_write(alone, data, size);
        try("fuzz");
        unlink(alone);
        fuzz_write(parent, data, size);
        try("4xC4140");
        unlink(parent);
        return 0;
}

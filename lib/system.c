/* system.c: finding, merging and checking system configurations. */
#include "config.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "benchd-defaults.h"
#include "bind.h"
#include "buf.h"
#include "fs.h"
#include "json.h"
#include "bd-paths.h"
#include "schema.h"
#include "strutil.h"
#include "system.h"
#include "workload.h"

#define MAX_DEPTH 16

/* Values every system starts from; each workload's section starts from its
 * row's defaults (workload.c). */
static const char defaults_json[] =
        "{"
        " \"description\": \"\","
        " \"nodes\": 1, \"gpus_per_node\": 0,"
        " \"cpu\": { \"sockets\": 1, \"cores_per_socket\": 1, \"threads_per_core\": 1 },"
        " \"launcher\": \"local\","
        " \"slurm\": { \"exclusive\": true, \"launch\": \"mpirun\", \"time_limit\": \"04:00:00\" },"
        " \"mpirun\": { \"command\": \"mpirun\", \"bind_to\": \"none\", \"map_by\": \"slot\","
        "               \"tag_output\": false },"
        " \"container\": { \"runtime\": \"none\", \"bin_dir\": \"/opt/benchd/bin\","
        "                \"ulimits\": { \"memlock\": \"-1\", \"stack\": \"67108864\" } },"
        " \"env\": {},"
        " \"binding\": { \"policy\": \"auto\", \"hyperthreads\": true, \"source\": \"auto\" },"
        " \"benchd\": { \"port\": " BD_PORT_STR ", \"token_file\": \"" BD_TOKEN_FILE "\" },"
        " \"staging\": { \"require\": false, \"name\": \"coco\" },"
        " \"health\": { \"allreduce_bytes\": 67108864, \"pair_rounds\": 2, \"tolerance\": 0.2,"
        "              \"node_gbps\": 0, \"pair_gbps\": 0 },"
        " \"paths\": { \"data\": \"~/.local/share/benchd/data/coco\","
        "              \"logs\": \"~/.local/share/benchd/logs\","
        "              \"pretrained\": \"~/.local/share/benchd/pretrained\" },"
        " \"trials\": 5, \"clear_caches\": true, \"organization\": \"benchd\","
        " \"tenants\": \"off\", \"tenant_tolerance\": 0.1, \"node_groups\": \"off\","
        " \"cost_per_node_hour\": 0"
        "}";

/* The built-in values of the system's keys. */
static cJSON *system_values(void)
{
        cJSON *root = cJSON_Parse(defaults_json);
        if (!root)
                abort(); /* the built-in defaults are valid JSON */
        return root;
}

/* Those and the section of each workload read so far (the bundled ones,
 * those the files and --set name, the one asked for): what a configuration
 * starts from. */
static cJSON *all_values(const cJSON *system)
{
        cJSON *root = cJSON_Duplicate(system, true);
        for (const struct workload *const *w = workload_known(); *w; w++) {
                if (!streq((*w)->section, (*w)->name))
                        continue; /* another workload's section */
                cJSON *sec = cJSON_Parse((*w)->defaults);
                if (!sec)
                        abort(); /* so are the workloads' (printed by cJSON) */
                cJSON_AddItemToObject(root, (*w)->name, sec);
        }
        return root;
}

void strv_free(char **v)
{
        for (char **p = v; p && *p; p++)
                free(*p);
        free(v);
}

static void dirs_add(struct bd_sysdirs *d, const char *dir)
{
        for (size_t i = 0; i < d->n; i++)
                if (streq(d->dirs[i], dir))
                        return;
        d->dirs = xrealloc(d->dirs, (d->n + 2) * sizeof(char *));
        d->dirs[d->n++] = xstrdup(dir);
        d->dirs[d->n] = NULL;
}

void sysdirs_user(struct bd_sysdirs *d, const char *cli_dir, const char *env_name, const char *kind)
{
        d->dirs = NULL;
        d->n = 0;
        if (cli_dir)
                dirs_add(d, cli_dir);
        const char *env = getenv(env_name);
        if (env && *env) {
                _cleanup_free_ char *copy = xstrdup(env);
                char *save = NULL;
                for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save))
                        dirs_add(d, p);
        }
        const char *home = getenv("HOME");
        const char *xdg = getenv("XDG_CONFIG_HOME");
        if (xdg && *xdg) {
                _cleanup_free_ char *p = xasprintf("%s/benchd/%s", xdg, kind);
                dirs_add(d, p);
        } else if (home && *home) {
                _cleanup_free_ char *p = xasprintf("%s/.config/benchd/%s", home, kind);
                dirs_add(d, p);
        }
}

void sysdirs_init(struct bd_sysdirs *d, const char *cli_dir)
{
        sysdirs_user(d, cli_dir, "BENCHD_SYSTEMS", "systems");
        /* Run from the build tree: the source tree's systems; installed: the bundled ones. */
        _cleanup_free_ char *exe = fs_exe_dir();
        _cleanup_free_ char *build = realpath(BD_BUILDDIR, NULL);
        if (exe && build && streq(exe, build))
                dirs_add(d, BD_SRCDIR "/systems");
        dirs_add(d, BD_SYSTEMSDIR);
}

void sysdirs_release(struct bd_sysdirs *d)
{
        for (size_t i = 0; i < d->n; i++)
                free(d->dirs[i]);
        free(d->dirs);
        d->dirs = NULL;
        d->n = 0;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

char **system_list(const struct bd_sysdirs *d)
{
        char **names = NULL;
        size_t n = 0;
        for (size_t i = 0; i < d->n; i++) {
                DIR *dir = opendir(d->dirs[i]);
                if (!dir)
                        continue;
                struct dirent *e;
                while ((e = readdir(dir))) {
                        if (e->d_name[0] == '.' || !str_has_suffix(e->d_name, ".json"))
                                continue;
                        _cleanup_free_ char *name = xstrndup(e->d_name, strlen(e->d_name) - 5);
                        bool dup = false;
                        for (size_t j = 0; j < n && !dup; j++)
                                dup = streq(names[j], name);
                        if (dup)
                                continue;
                        names = xrealloc(names, (n + 2) * sizeof(char *));
                        names[n++] = TAKE_PTR(name);
                        names[n] = NULL;
                }
                closedir(dir);
        }
        if (!names)
                return xcalloc(1, sizeof(char *));
        qsort(names, n, sizeof(char *), cmp_str);
        return names;
}

static bool name_ok(const char *name)
{
        return *name && name[0] != '.' && strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                       "0123456789_.-") == strlen(name);
}

/* Finds NAME.json in the search path, from directory index `from` on. */
static char *find_file(const struct bd_sysdirs *d, const char *name, size_t from, size_t *ret_index)
{
        for (size_t i = from; i < d->n; i++) {
                _cleanup_free_ char *p = xasprintf("%s/%s.json", d->dirs[i], name);
                if (access(p, F_OK) == 0) {
                        *ret_index = i;
                        return TAKE_PTR(p);
                }
        }
        return NULL;
}

static int unknown_system(const struct bd_sysdirs *d, const char *name, const char *what, struct bd_err *err)
{
        char **names = system_list(d);
        _cleanup_buf_ struct bd_buf list = BD_BUF_INIT;
        for (char **p = names; *p; p++)
                buf_printf(&list, "%s%s", p == names ? "" : ", ", *p);
        const char *close = str_closest_word(name, (const char *const *)names);
        int r;
        if (close)
                r = bd_err_set(err, -ENOENT, "%s'%s' (did you mean '%s'?); known systems: %s", what, name,
                               close, list.s);
        else
                r = bd_err_set(err, -ENOENT, "%s'%s'; known systems: %s", what, name,
                               list.len ? list.s : "none (is the systems directory installed?)");
        strv_free(names);
        return r;
}

/* Loads one file and its ancestors, merged, into *ret. chain holds the files
 * being loaded, to detect cycles. */
static int load_chain(const struct bd_sysdirs *d, const char *name, size_t from, const char *child,
                      char **chain, int depth, cJSON **ret, char **ret_path, struct bd_err *err)
{
        size_t idx;
        _cleanup_free_ char *path = find_file(d, name, from, &idx);
        if (!path) {
                if (child) {
                        _cleanup_free_ char *what = xasprintf("%s: missing parent system ", child);
                        return unknown_system(d, name, what, err);
                }
                return unknown_system(d, name, "unknown system ", err);
        }
        for (int i = 0; i < depth; i++)
                if (streq(chain[i], path)) {
                        _cleanup_buf_ struct bd_buf cyc = BD_BUF_INIT;
                        for (int j = i; j < depth; j++)
                                buf_printf(&cyc, "%s -> ", chain[j]);
                        buf_puts(&cyc, path);
                        return bd_err_set(err, -ELOOP, "%s: 'extends' cycle: %s", child, cyc.s);
                }
        if (depth >= MAX_DEPTH)
                return bd_err_set(err, -ELOOP, "%s: 'extends' nested deeper than %d", path, MAX_DEPTH);
        chain[depth] = path;

        _cleanup_json_ cJSON *self = NULL;
        _cleanup_free_ char *text = NULL;
        int r = json_load_file(path, &self, &text, err);
        if (r < 0)
                return r;
        r = schema_validate(self, path, text, err);
        if (r < 0)
                return r;

        cJSON *base = NULL;
        const cJSON *ext = cJSON_GetObjectItemCaseSensitive(self, "extends");
        if (cJSON_IsString(ext)) {
                if (!name_ok(ext->valuestring))
                        return bd_err_set(err, -EINVAL, "%s:%d: 'extends': '%s' is not a system name", path,
                                          json_key_line(text, "extends"), ext->valuestring);
                /* a file may refine the system of its own name found further down the path */
                size_t next = streq(ext->valuestring, name) ? idx + 1 : 0;
                r = load_chain(d, ext->valuestring, next, path, chain, depth + 1, &base, NULL, err);
                if (r < 0)
                        return r;
        } else {
                base = cJSON_CreateObject();
        }
        json_overlay(base, self);
        cJSON_DeleteItemFromObjectCaseSensitive(base, "extends");
        *ret = base;
        if (ret_path)
                *ret_path = TAKE_PTR(path);
        return 0;
}

const cJSON *sys_get(const cJSON *cfg, const char *dotted)
{
        return json_get(cfg, dotted);
}

const char *sys_str(const cJSON *cfg, const char *dotted)
{
        return json_str(cfg, dotted, NULL);
}

long sys_int(const cJSON *cfg, const char *dotted)
{
        return json_int(cfg, dotted, 0);
}

double sys_num(const cJSON *cfg, const char *dotted)
{
        return json_num(cfg, dotted, 0);
}

bool sys_bool(const cJSON *cfg, const char *dotted)
{
        return json_bool(cfg, dotted, false);
}

int system_topo(const cJSON *sys, struct bd_topo *t, struct bd_err *err)
{
        memset(t, 0, sizeof(*t));
        t->sockets = (int)sys_int(sys, "cpu.sockets");
        t->cores_per_socket = (int)sys_int(sys, "cpu.cores_per_socket");
        t->threads_per_core = (int)sys_int(sys, "cpu.threads_per_core");
        t->hyperthreads = sys_bool(sys, "binding.hyperthreads");
        t->ngpus = (int)sys_int(sys, "gpus_per_node");
        if (t->ngpus > BD_MAX_GPUS)
                return bd_err_set(err, -E2BIG, "more than %d GPUs per node", BD_MAX_GPUS);
        const cJSON *gn = sys_get(sys, "topology.gpu_numa");
        for (int i = 0; i < t->ngpus; i++) {
                const cJSON *e = cJSON_GetArrayItem(gn, i);
                t->gpu_numa[i] = cJSON_IsNumber(e) ? (int)e->valuedouble : -1;
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, sys_get(sys, "topology.nics")) {
                if (t->nnics >= BD_MAX_NICS)
                        return bd_err_set(err, -E2BIG, "more than %d NICs per node", BD_MAX_NICS);
                struct bd_nic *n = &t->nics[t->nnics++];
                snprintf(n->name, sizeof(n->name), "%s", json_str(e, "name", "?"));
                if (bd_nic_kind_parse(json_str(e, "kind", ""), &n->kind) < 0)
                        n->kind = NIC_ETHERNET;
                n->numa = (int)json_int(e, "numa", -1);
        }
        return 0;
}

/* Turns "KEY=VALUE" into {"a": {"b": VALUE}} typed by the schema. */
static int parse_set(const char *assign, cJSON **ret, struct bd_err *err)
{
        const char *eq = strchr(assign, '=');
        if (!eq || eq == assign)
                return bd_err_set(err, -EINVAL, "--set '%s': expected KEY=VALUE", assign);
        _cleanup_free_ char *key = xstrndup(assign, (size_t)(eq - assign));
        const char *val = eq + 1;
        if (key[0] == '.' || str_has_suffix(key, ".") || strstr(key, ".."))
                return bd_err_set(err, -EINVAL, "--set '%s': malformed key '%s'", assign, key);
        bool map_value;
        const struct schema_key *k = schema_lookup(key, &map_value);
        if (!k) {
                /* a section of a workload whose file does not read: its error */
                _cleanup_free_ char *top = xstrndup(key, strcspn(key, "."));
                const struct workload *w;
                int r = workload_get(top, &w, err);
                if (r < 0)
                        return r;
                const char *s = schema_suggest(key);
                if (s)
                        return bd_err_set(err, -EINVAL, "--set: unknown key '%s' (did you mean '%s'?)", key, s);
                return bd_err_set(err, -EINVAL, "--set: unknown key '%s'", key);
        }
        if (streq(key, "extends"))
                return bd_err_set(err, -EINVAL, "--set: 'extends' cannot be overridden");
        if (k->type == S_OBJECT || (k->type == S_MAP && !map_value) || k->type == S_OBJECT_LIST)
                return bd_err_set(err, -EINVAL, "--set: '%s' is a section; set one of its keys", key);

        cJSON *value = NULL;
        bool as_string = map_value || k->type == S_STRING;
        if (!as_string) {
                const char *end = NULL;
                _cleanup_free_ char *text = xstrdup(val);
                value = cJSON_ParseWithOpts(text, &end, true);
                bool list = k->type == S_STRING_LIST || k->type == S_INT_LIST || k->type == S_NUMBER_LIST;
                if ((!value || !cJSON_IsArray(value)) && list) {
                        /* comma-separated list: 44,55 or a,b */
                        cJSON_Delete(value);
                        value = cJSON_CreateArray();
                        _cleanup_free_ char *copy = xstrdup(val);
                        char *save = NULL;
                        for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
                                double d;
                                if (k->type != S_STRING_LIST && str_parse_double(p, &d) == 0)
                                        cJSON_AddItemToArray(value, cJSON_CreateNumber(d));
                                else
                                        cJSON_AddItemToArray(value, cJSON_CreateString(p));
                        }
                } else if (!value)
                        value = cJSON_CreateString(val);
        } else {
                value = cJSON_CreateString(val);
        }

        /* build the nested object */
        cJSON *root = cJSON_CreateObject(), *cur = root;
        _cleanup_free_ char *copy = xstrdup(key);
        char *save = NULL, *part = strtok_r(copy, ".", &save);
        while (part) {
                char *next = strtok_r(NULL, ".", &save);
                if (!next) {
                        cJSON_AddItemToObject(cur, part, value);
                        break;
                }
                cJSON *o = cJSON_CreateObject();
                cJSON_AddItemToObject(cur, part, o);
                cur = o;
                part = next;
        }
        _cleanup_free_ char *label = xasprintf("--set %s", key);
        int r = schema_validate(root, label, NULL, err);
        if (r < 0) {
                cJSON_Delete(root);
                return r;
        }
        *ret = root;
        return 0;
}

static void set_default(cJSON *obj, const char *key, cJSON *v)
{
        if (cJSON_GetObjectItemCaseSensitive(obj, key))
                cJSON_Delete(v);
        else
                cJSON_AddItemToObject(obj, key, v);
}

static cJSON *section(cJSON *root, const char *key)
{
        cJSON *s = cJSON_GetObjectItemCaseSensitive(root, key);
        if (!s) {
                s = cJSON_CreateObject();
                cJSON_AddItemToObject(root, key, s);
        }
        return s;
}

/* Fills in values derived from others, so that 'show' prints what is used. */
static void complete(cJSON *root)
{
        long gpus = sys_int(root, "gpus_per_node");
        set_default(root, "ranks_per_node", cJSON_CreateNumber(gpus > 0 ? (double)gpus : 1));
        for (const struct workload *const *wp = workload_known(); *wp; wp++) {
                const struct workload *w = *wp;
                /* benchd's own trainers' conventions; another's program
                 * has its own words for them */
                if (!streq(w->section, w->name) || !w->own)
                        continue;
                if (workload_has_key(w, "backend"))
                        set_default(section(root, w->name), "backend", cJSON_CreateString(gpus > 0 ? "cuda" : "cpu"));
                if (workload_has_key(w, "precision"))
                        set_default(section(root, w->name), "precision", cJSON_CreateString(gpus > 0 ? "amp" : "fp32"));
        }
}

/* Checks that need the whole, merged configuration. */
static int check_whole(const cJSON *root, const char *label, struct bd_err *err)
{
        long nodes = sys_int(root, "nodes");
        long gpus = sys_int(root, "gpus_per_node");
        long ranks = sys_int(root, "ranks_per_node");
        long sockets = sys_int(root, "cpu.sockets");
        long cores = sys_int(root, "cpu.cores_per_socket");

        /* one rank per GPU: all of a node's, or its first ranks_per_node (the
         * one-GPU row of a table, a sweep below a node's GPU count) */
        if (gpus > 0 && ranks > gpus)
                return bd_err_set(err, -EINVAL, "%s: 'ranks_per_node' (%ld) is more than 'gpus_per_node' (%ld): one "
                                  "rank per GPU", label, ranks, gpus);
        if (ranks > sockets * cores)
                return bd_err_set(err, -EINVAL, "%s: more ranks per node (%ld) than cores (%ld sockets x %ld cores)",
                                  label, ranks, sockets, cores);
        const cJSON *gn = sys_get(root, "topology.gpu_numa");
        if (gn && cJSON_GetArraySize(gn) != gpus)
                return bd_err_set(err, -EINVAL, "%s: 'topology.gpu_numa' lists %d GPUs, 'gpus_per_node' is %ld",
                                  label, cJSON_GetArraySize(gn), gpus);
        const cJSON *e;
        cJSON_ArrayForEach(e, gn)
                if (e->valuedouble >= (double)sockets)
                        return bd_err_set(err, -EINVAL, "%s: 'topology.gpu_numa': NUMA node %g but only %ld sockets",
                                          label, e->valuedouble, sockets);
        cJSON_ArrayForEach(e, sys_get(root, "topology.nics")) {
                if (!json_str(e, "name", NULL) || !json_str(e, "kind", NULL))
                        return bd_err_set(err, -EINVAL, "%s: 'topology.nics': every NIC needs a 'name' and a 'kind'",
                                          label);
                if (json_int(e, "numa", -1) >= sockets)
                        return bd_err_set(err, -EINVAL, "%s: 'topology.nics': NIC '%s' on NUMA node %ld but only %ld sockets",
                                          label, json_str(e, "name", ""), json_int(e, "numa", -1), sockets);
        }
        const char *launcher = sys_str(root, "launcher");
        const char *runtime = sys_str(root, "container.runtime");
        if (!streq(runtime, "none") && !sys_str(root, "container.image"))
                return bd_err_set(err, -EINVAL, "%s: container runtime '%s' needs 'container.image'", label, runtime);
        if ((streq(runtime, "docker") || streq(runtime, "podman")) && nodes > 1)
                return bd_err_set(err, -EINVAL, "%s: container runtime '%s' runs single-node systems only (nodes is %ld)",
                                  label, runtime, nodes);
        if (streq(launcher, "local") && nodes > 1)
                return bd_err_set(err, -EINVAL, "%s: launcher 'local' runs one node; nodes is %ld", label, nodes);
        if (streq(launcher, "mpirun") && nodes > 1 && !sys_str(root, "mpirun.hostfile")) {
                const cJSON *hosts = sys_get(root, "mpirun.hosts");
                if (cJSON_GetArraySize(hosts) < nodes)
                        return bd_err_set(err, -EINVAL, "%s: launcher 'mpirun' with %ld nodes needs 'mpirun.hostfile' or %ld 'mpirun.hosts'",
                                          label, nodes, nodes);
        }
        for (const struct workload *const *wp = workload_known(); *wp; wp++) {
                const struct workload *w = *wp;
                if (!streq(w->section, w->name))
                        continue;
                const cJSON *sec = sys_get(root, w->name);
                if (streq(sys_str(sec, "backend"), "cuda") && gpus == 0)
                        return bd_err_set(err, -EINVAL, "%s: '%s.backend' is cuda but the system has no GPUs", label,
                                          w->name);
                if (w->check && w->check(sec, w->name, label, err) < 0)
                        return -EINVAL;
                /* lists in ascending order ("ascending": a schedule's epochs) */
                const cJSON *spec, *item;
                cJSON_ArrayForEach(spec, json_get(w->spec, "keys")) {
                        double prev = -INFINITY;
                        if (!json_bool(spec, "ascending", false))
                                continue;
                        cJSON_ArrayForEach(item, json_get(sec, spec->string)) {
                                if (cJSON_IsNumber(item) && item->valuedouble <= prev)
                                        return bd_err_set(err, -EINVAL, "%s: '%s.%s': %g after %g: in ascending "
                                                          "order", label, w->name, spec->string, item->valuedouble,
                                                          prev);
                                if (cJSON_IsNumber(item))
                                        prev = item->valuedouble;
                        }
                }
        }
        if (sys_bool(root, "staging.require")) {
                const char *dst = sys_str(root, "staging.destination");
                if (!dst || !*dst)
                        return bd_err_set(err, -EINVAL, "%s: 'staging.require' needs 'staging.destination', where the "
                                                        "dataset is staged on every node", label);
                if (dst[0] != '/')
                        return bd_err_set(err, -EINVAL, "%s: 'staging.destination' must be an absolute path, not '%s'",
                                          label, dst);
        }

        struct bd_topo topo;
        int r = system_topo(root, &topo, err);
        if (r < 0)
                return r;
        _cleanup_free_ struct bd_rank_bind *plan = NULL;
        r = bind_plan(&topo, (int)ranks, &plan, err);
        if (r < 0) {
                /* the message is formatted into err->msg: not from it */
                _cleanup_free_ char *why = xstrdup(err->msg);
                return bd_err_set(err, r, "%s: %s", label, why);
        }
        return 0;
}

static int load(const struct bd_sysdirs *d, const char *name, char *const *sets, struct bd_system *ret,
                struct bd_err *err)
{
        if (!name_ok(name))
                return unknown_system(d, name, "invalid system name ", err);
        char *chain[MAX_DEPTH + 1];
        _cleanup_json_ cJSON *merged = NULL;
        _cleanup_free_ char *path = NULL;
        int r = load_chain(d, name, 0, NULL, chain, 0, &merged, &path, err);
        if (r < 0)
                return r;
        /* the sets first: a section they name is read before the values
         * are made */
        size_t nsets = 0;
        while (sets && sets[nsets])
                nsets++;
        cJSON **set = xcalloc(nsets + 1, sizeof(*set));
        for (size_t i = 0; i < nsets && r == 0; i++)
                r = parse_set(sets[i], &set[i], err);
        _cleanup_json_ cJSON *builtin = system_values();
        cJSON *root = r == 0 ? all_values(builtin) : NULL;
        if (root)
                json_merge(root, merged);
        for (size_t i = 0; i < nsets; i++) {
                if (root && set[i])
                        json_merge(root, set[i]);
                cJSON_Delete(set[i]);
        }
        free(set);
        if (r < 0)
                return r;
        json_fill(root, builtin);
        complete(root);
        /* with --set's values, not the file's alone: said so */
        _cleanup_free_ char *label = sets && sets[0] ? xasprintf("%s with --set", path) : NULL;
        r = check_whole(root, label ? label : path, err);
        if (r < 0) {
                cJSON_Delete(root);
                return r;
        }
        ret->name = xstrdup(name);
        char *real = realpath(path, NULL);
        ret->path = real ? real : TAKE_PTR(path);
        ret->json = root;
        return 0;
}

int system_load(const struct bd_sysdirs *d, const char *name, char *const *sets,
                struct bd_system *ret, struct bd_err *err)
{
        /* messages quote the files' keys and values */
        return bd_err_printable(err, load(d, name, sets, ret, err));
}

void system_release(struct bd_system *s)
{
        free(s->name);
        free(s->path);
        cJSON_Delete(s->json);
        s->name = s->path = NULL;
        s->json = NULL;
}

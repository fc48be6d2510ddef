/* schema.c: the system configuration schema and its validator. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "groups.h"
#include "schema.h"
#include "strutil.h"
#include "workload.h"

#define ANY 1, 0          /* unbounded */
#define RANGE(a, b) a, b

static const char *const launchers[] = { "slurm", "mpirun", "local", NULL };
static const char *const runtimes[] = { "apptainer", "singularity", "docker", "podman", "charliecloud", "none", NULL };
static const char *const policies[] = { "auto", "none", NULL };
static const char *const plan_sources[] = { "auto", "declared", NULL };
static const char *const nic_kinds[] = { "ethernet", "infiniband", "roce", "efa", NULL };
static const char *const slurm_launch[] = { "mpirun", "srun", NULL };
const char *const schema_backends[] = { "cpu", "cuda", NULL };
const char *const schema_precisions[] = { "fp32", "amp", NULL };

static const struct schema_key cpu_keys[] = {
        { "model", S_STRING, NULL, ANY, NULL, W_ANY, "CPU model name" },
        { "sockets", S_INT, NULL, RANGE(1, 64), NULL, W_ANY, "CPU sockets (one NUMA node each)" },
        { "cores_per_socket", S_INT, NULL, RANGE(1, 1024), NULL, W_ANY, "physical cores per socket" },
        { "threads_per_core", S_INT, NULL, RANGE(1, 8), NULL, W_ANY, "hardware threads per core (1: HT off)" },
        { 0 }
};

static const struct schema_key nic_keys[] = {
        { "name", S_STRING, NULL, ANY, NULL, W_TOKEN, "device name (mlx5_0, rdmap16s27, ens5)" },
        { "kind", S_STRING, NULL, ANY, nic_kinds, W_ANY, "ethernet, infiniband, roce or efa" },
        { "numa", S_INT, NULL, RANGE(-1, 63), NULL, W_ANY, "NUMA node the NIC hangs off (-1: unknown)" },
        { "netdev", S_STRING, NULL, ANY, NULL, W_TOKEN, "network interface paired with an RDMA device" },
        { 0 }
};

static const struct schema_key topology_keys[] = {
        { "gpu_numa", S_INT_LIST, NULL, RANGE(0, 63), NULL, W_ANY, "NUMA node of each GPU, in GPU order" },
        { "nics", S_OBJECT_LIST, nic_keys, ANY, NULL, W_ANY, "network adapters" },
        { 0 }
};

static const struct schema_key slurm_keys[] = {
        { "partition", S_STRING, NULL, ANY, NULL, W_TOKEN, "partition (default: the cluster's default)" },
        { "account", S_STRING, NULL, ANY, NULL, W_TOKEN, "account to charge" },
        { "qos", S_STRING, NULL, ANY, NULL, W_TOKEN, "quality of service" },
        { "time_limit", S_STRING, NULL, ANY, NULL, W_TIME, "wall time limit (minutes, HH:MM:SS, D-HH:MM:SS)" },
        { "exclusive", S_BOOL, NULL, ANY, NULL, W_ANY, "whole nodes (--exclusive)" },
        { "mem", S_STRING, NULL, ANY, NULL, W_MEM, "memory per node (0: all of it)" },
        { "launch", S_STRING, NULL, ANY, slurm_launch, W_ANY, "how ranks start inside the job: mpirun or srun" },
        { "mpi", S_STRING, NULL, ANY, NULL, W_TOKEN, "srun --mpi plugin (pmix, pmi2)" },
        { "job_name", S_STRING, NULL, ANY, NULL, W_TOKEN, "job name (default: benchd-WORKLOAD-SYSTEM)" },
        { "extra_options", S_STRING_LIST, NULL, ANY, NULL, W_OPTION, "more #SBATCH options" },
        { 0 }
};

static const struct schema_key mpirun_keys[] = {
        { "command", S_STRING, NULL, ANY, NULL, W_ANY, "mpirun executable" },
        { "hostfile", S_STRING, NULL, ANY, NULL, W_ANY, "hostfile (lines '<host> slots=N')" },
        { "hosts", S_STRING_LIST, NULL, ANY, NULL, W_TOKEN, "hosts, when there is no hostfile" },
        { "interface", S_STRING, NULL, ANY, NULL, W_TOKEN, "network interface for MPI and NCCL sockets" },
        { "bind_to", S_STRING, NULL, ANY, NULL, W_TOKEN, "mpirun --bind-to (benchd binds ranks itself)" },
        { "map_by", S_STRING, NULL, ANY, NULL, W_TOKEN, "mpirun --map-by" },
        { "tag_output", S_BOOL, NULL, ANY, NULL, W_ANY, "prefix rank output with its rank" },
        { "mca", S_MAP, NULL, ANY, NULL, W_TOKEN, "MCA parameters" },
        { "extra_options", S_STRING_LIST, NULL, ANY, NULL, W_OPTION, "more mpirun options" },
        { 0 }
};

static const struct schema_key container_keys[] = {
        { "runtime", S_STRING, NULL, ANY, runtimes, W_ANY, "apptainer, singularity, docker, podman, charliecloud or none" },
        { "image", S_STRING, NULL, ANY, NULL, W_ANY, "image file, directory or name" },
        { "binds", S_STRING_LIST, NULL, ANY, NULL, W_ANY, "extra bind mounts 'SRC:DST'" },
        { "options", S_STRING_LIST, NULL, ANY, NULL, W_OPTION, "more options for the runtime" },
        { "bin_dir", S_STRING, NULL, ANY, NULL, W_ANY, "where benchd's programs are inside the image" },
        { "ulimits", S_MAP, NULL, ANY, NULL, W_TOKEN,
          "docker and podman: --ulimit NAME=VALUE of the container (\"\": the runtime's own)" },
        { 0 }
};

static const struct schema_key binding_keys[] = {
        { "policy", S_STRING, NULL, ANY, policies, W_ANY, "auto: bind each rank to its GPU's cores and memory; none" },
        { "hyperthreads", S_BOOL, NULL, ANY, NULL, W_ANY, "include hyperthread siblings" },
        { "source", S_STRING, NULL, ANY, plan_sources, W_ANY,
          "auto: the plan benchd measured on the node when it answers, else the declared topology's; declared" },
        { 0 }
};

static const struct schema_key staging_keys[] = {
        { "require", S_BOOL, NULL, ANY, NULL, W_ANY,
          "each trial first checks that every node's benchd has the dataset staged and verified" },
        { "name", S_STRING, NULL, ANY, NULL, W_TOKEN, "the staged dataset's name (benchctl stage --name)" },
        { "destination", S_STRING, NULL, ANY, NULL, W_ANY,
          "where it is staged on every node; the trainers read it there instead of paths.data" },
        { 0 }
};

static const struct schema_key health_keys[] = {
        { "allreduce_bytes", S_INT, NULL, RANGE(4, 1e12), NULL, W_ANY,
          "the size benchctl health's allreduce checks reduce" },
        { "pair_rounds", S_INT, NULL, RANGE(0, 100000), NULL, W_ANY,
          "rounds of node pairs at the quick level (full: every pair)" },
        { "tolerance", S_NUMBER, NULL, RANGE(0, 1), NULL, W_ANY,
          "a node or pair this fraction or more below its reference is slow" },
        { "node_gbps", S_NUMBER, NULL, RANGE(0, 1e6), NULL, W_ANY,
          "expected bus bandwidth of the allreduce inside one node, GB/s (0: none; the nodes' median)" },
        { "pair_gbps", S_NUMBER, NULL, RANGE(0, 1e6), NULL, W_ANY,
          "expected bus bandwidth of the allreduce between two nodes, GB/s (0: none; the pairs' median)" },
        { 0 }
};

static const struct schema_key software_keys[] = {
        { "nvidia_driver", S_STRING, NULL, ANY, NULL, W_VERSION,
          "the NVIDIA driver every node has: 535.104.05, 535 (any 535.x) or >=535.104 (at least)" },
        { "cuda", S_STRING, NULL, ANY, NULL, W_VERSION, "the CUDA toolkit every node has: 12.2 or >=12.0" },
        { "nccl", S_STRING, NULL, ANY, NULL, W_VERSION, "the NCCL every node has: 2.18.3 or >=2.18" },
        { "mpi", S_STRING, NULL, ANY, NULL, W_VERSION, "the MPI every node has: Open MPI 4.1, MPICH >=4.0, >=4.1" },
        { 0 }
};

static const struct schema_key benchd_keys[] = {
        { "hosts", S_STRING_LIST, NULL, ANY, NULL, W_TOKEN, "nodes running benchd (HOST or HOST:PORT)" },
        { "port", S_INT, NULL, RANGE(1, 65535), NULL, W_ANY, "benchd's port on the nodes" },
        { "token_file", S_STRING, NULL, ANY, NULL, W_ANY, "bearer token for requests that change something" },
        { 0 }
};

static const struct schema_key path_keys[] = {
        { "data", S_STRING, NULL, ANY, NULL, W_ANY, "dataset directory (COCO 2017 tree)" },
        { "logs", S_STRING, NULL, ANY, NULL, W_ANY, "log directory on shared storage" },
        { "pretrained", S_STRING, NULL, ANY, NULL, W_ANY, "pretrained weights directory" },
        { "bin", S_STRING, NULL, ANY, NULL, W_ANY, "benchd's programs on the nodes (default: next to benchctl)" },
        { 0 }
};

const struct schema_key schema_published_keys[] = {
        { "minutes", S_NUMBER, NULL, RANGE(0, 1e9), NULL, W_ANY, "published time to train" },
        { "images_per_second", S_NUMBER, NULL, RANGE(0, 1e12), NULL, W_ANY, "published throughput" },
        { "source", S_STRING, NULL, ANY, NULL, W_ANY, "where the number comes from" },
        { 0 }
};

static const struct schema_key base_keys[] = {
        { "description", S_STRING, NULL, ANY, NULL, W_ANY, "one line shown by 'benchctl systems'" },
        { "extends", S_STRING, NULL, ANY, NULL, W_TOKEN, "parent system" },
        { "nodes", S_INT, NULL, RANGE(1, 100000), NULL, W_ANY, "nodes" },
        { "gpus_per_node", S_INT, NULL, RANGE(0, 64), NULL, W_ANY, "GPUs per node" },
        { "ranks_per_node", S_INT, NULL, RANGE(1, 4096), NULL, W_ANY, "ranks per node (default: one per GPU)" },
        { "gpu_model", S_STRING, NULL, ANY, NULL, W_ANY, "GPU model" },
        { "cpu", S_OBJECT, cpu_keys, ANY, NULL, W_ANY, "processors of one node" },
        { "topology", S_OBJECT, topology_keys, ANY, NULL, W_ANY, "where GPUs and NICs sit" },
        { "launcher", S_STRING, NULL, ANY, launchers, W_ANY, "slurm, mpirun or local" },
        { "slurm", S_OBJECT, slurm_keys, ANY, NULL, W_ANY, "Slurm settings" },
        { "mpirun", S_OBJECT, mpirun_keys, ANY, NULL, W_ANY, "mpirun settings" },
        { "container", S_OBJECT, container_keys, ANY, NULL, W_ANY, "container runtime" },
        { "env", S_MAP, NULL, ANY, NULL, W_IDENT, "environment exported to every rank" },
        { "binding", S_OBJECT, binding_keys, ANY, NULL, W_ANY, "CPU and memory binding of ranks" },
        { "benchd", S_OBJECT, benchd_keys, ANY, NULL, W_ANY, "the node daemons of the system" },
        { "health", S_OBJECT, health_keys, ANY, NULL, W_ANY, "benchctl health's allreduce checks" },
        { "software", S_OBJECT, software_keys, ANY, NULL, W_ANY,
          "the versions every node must have (benchctl health; a key not given is not checked)" },
        { "staging", S_OBJECT, staging_keys, ANY, NULL, W_ANY, "node-local copies of the dataset" },
        { "paths", S_OBJECT, path_keys, ANY, NULL, W_ANY, "data, log and weights directories" },
        { "trials", S_INT, NULL, RANGE(1, 100), NULL, W_ANY, "trials per run" },
        { "clear_caches", S_BOOL, NULL, ANY, NULL, W_ANY, "drop the page cache before each trial" },
        { "tenants", S_STRING, NULL, ANY, NULL, W_TENANTS,
          "independent single-rank runs at once on one node, each confined to its share: off, per-gpu or N" },
        { "node_groups", S_STRING, NULL, ANY, NULL, W_NODE_GROUPS,
          "rounds of node groups, each group a trial on those nodes, a round's groups at once: 1+2,3+4;1+3,2+4 "
          "(nodes by their places; off: none)" },
        { "tenant_tolerance", S_NUMBER, NULL, RANGE(0, 1), NULL, W_ANY,
          "a tenant this fraction or more below the tenants' median is flagged" },
        { "organization", S_STRING, NULL, ANY, NULL, W_TOKEN, "organisation in RESULT lines" },
        { "cost_per_node_hour", S_NUMBER, NULL, RANGE(0, 1e9), NULL, W_ANY,
          "price of one node for an hour, for the cost columns of scaling reports (0: unknown)" },
        { 0 }
};

/* The top level: the keys above, then one section per workload, made when
 * a system file, a --set or a lookup first names it (the workload's file
 * is read then: workload_get()). */
struct section {
        struct schema_key key;
        struct section *next;
};
static struct section *sections;
static pthread_mutex_t sections_lock = PTHREAD_MUTEX_INITIALIZER;

/* A top-level key: a base key, or the section of the workload of that
 * name; NULL when neither, or (with its file's error in err, r set) when
 * the workload's file does not read. */
static const struct schema_key *top_key(const char *name, struct bd_err *err, int *r)
{
        for (const struct schema_key *k = base_keys; k->name; k++)
                if (streq(k->name, name))
                        return k;
        const struct workload *w;
        struct bd_err e;
        int rr = workload_get(name, &w, err ? err : &e);
        if (r)
                *r = rr < 0 ? rr : 0;
        if (!w || !streq(w->section, w->name))
                return NULL;
        pthread_mutex_lock(&sections_lock);
        struct section *s = sections;
        while (s && !streq(s->key.name, name))
                s = s->next;
        if (!s) {
                s = xcalloc(1, sizeof(*s));
                s->key = (struct schema_key){ w->name, S_OBJECT, w->keys, ANY, NULL, W_ANY, w->help };
                s->next = sections;
                sections = s;
        }
        pthread_mutex_unlock(&sections_lock);
        return &s->key;
}

static bool word_ok(enum schema_word w, const char *s)
{
        static const char token[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                    "_.,:@+/%^=-";
        if (strpbrk(s, "\n\r"))
                return false;
        switch (w) {
        case W_ANY:
                return true;
        case W_TOKEN:
                return *s && strspn(s, token) == strlen(s);
        case W_IDENT:
                if (!(isalpha((unsigned char)*s) || *s == '_'))
                        return false;
                for (const char *p = s; *p; p++)
                        if (!(isalnum((unsigned char)*p) || *p == '_'))
                                return false;
                return true;
        case W_TIME: {
                /* minutes | MM:SS | HH:MM:SS | D-HH | D-HH:MM | D-HH:MM:SS | UNLIMITED */
                if (streq(s, "UNLIMITED") || streq(s, "INFINITE"))
                        return true;
                const char *p = s;
                int fields = 0, days = 0;
                if (strchr(p, '-')) {
                        if (!isdigit((unsigned char)*p))
                                return false;
                        while (isdigit((unsigned char)*p))
                                p++;
                        if (*p++ != '-')
                                return false;
                        days = 1;
                }
                for (;;) {
                        if (!isdigit((unsigned char)*p))
                                return false;
                        while (isdigit((unsigned char)*p))
                                p++;
                        fields++;
                        if (!*p)
                                break;
                        if (*p++ != ':')
                                return false;
                }
                return fields <= 3 && (days || fields != 0);
        }
        case W_MEM: {
                const char *p = s;
                if (!isdigit((unsigned char)*p))
                        return false;
                while (isdigit((unsigned char)*p))
                        p++;
                return !*p || (strchr("KMGTkmgt", *p) && !p[1]);
        }
        case W_OPTION:
                return *s == '-';
        case W_TENANTS: {
                if (streq(s, "off") || streq(s, "per-gpu"))
                        return true;
                long n;
                return isdigit((unsigned char)*s) && str_parse_long(s, &n) == 0 && n >= 1 && n <= 4096;
        }
        case W_VERSION:
                return str_version_valid(s);
        case W_NODE_GROUPS: {
                struct node_groups g;
                struct bd_err err;
                if (node_groups_parse(s, 0, &g, &err) < 0)
                        return false;
                node_groups_release(&g);
                return true;
        }
        }
        return false;
}

static const char *word_rule(enum schema_word w)
{
        switch (w) {
        case W_TOKEN: return "letters, digits and _.,:@+/%^=- only";
        case W_IDENT: return "a valid environment variable name";
        case W_TIME: return "a Slurm time limit (minutes, HH:MM:SS or D-HH:MM:SS)";
        case W_MEM: return "a size like 0, 4000 or 64G";
        case W_OPTION: return "an option starting with '-'";
        case W_TENANTS: return "off, per-gpu or a number of tenants from 1 to 4096";
        case W_NODE_GROUPS: return "off, or rounds of node groups by their places: 1+2,3+4;1+3,2+4";
        case W_VERSION: return "a version: 12.2 (that version), >=12.2 (at least), with a product name first where "
                               "it matters (Open MPI 4.1)";
        default: return "one line of text";
        }
}

struct where {
        const char *label;
        const char *text;
};

_printf_(4, 5)
static int fail(struct bd_err *err, const struct where *w, const char *key, const char *fmt, ...)
{
        char msg[768];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        int line = w->text ? json_key_line(w->text, key) : 0;
        if (line > 0)
                return bd_err_set(err, -EINVAL, "%s:%d: '%s': %s", w->label, line, key, msg);
        return bd_err_set(err, -EINVAL, "%s: '%s': %s", w->label, key, msg);
}

static void put_bound(struct bd_buf *b, double v, bool integer)
{
        if (integer)
                buf_printf(b, "%.0f", v);
        else
                buf_printf(b, "%.15g", v);
}

/* "an integer in [1, 64]"; "an integer >= 4" where the upper bound is too
 * large to matter, unless the value is above it (above): then both bounds.
 * Integer bounds in full (4294967295, not 4.29497e+09). */
static void describe_range(struct bd_buf *b, const struct schema_key *k, bool integer, bool above)
{
        buf_puts(b, integer ? "an integer" : "a number");
        if (k->min > k->max)
                return;
        if (k->max >= 1e9 && !above) {
                buf_puts(b, " >= ");
                put_bound(b, k->min, integer);
                return;
        }
        buf_puts(b, " in [");
        put_bound(b, k->min, integer);
        buf_puts(b, ", ");
        put_bound(b, k->max, integer);
        buf_puts(b, "]");
}

static int check_number(const cJSON *v, const struct schema_key *k, bool integer, const char *key,
                        const struct where *w, struct bd_err *err)
{
        double d = cJSON_IsNumber(v) ? v->valuedouble : 0;
        bool bounded = k->min <= k->max;
        if (cJSON_IsNumber(v) && (!integer || d == floor(d)) && (!bounded || (d >= k->min && d <= k->max)))
                return 0;
        /* described for the error only: a submission checks dozens of numbers */
        _cleanup_buf_ struct bd_buf want = BD_BUF_INIT;
        describe_range(&want, k, integer, bounded && d > k->max);
        if (cJSON_IsString(v))
                return fail(err, w, key, "expected %s, got '%s'", want.s, v->valuestring);
        if (!cJSON_IsNumber(v))
                return fail(err, w, key, "expected %s, got %s", want.s, json_type_name(v));
        return fail(err, w, key, "expected %s, got %.15g", want.s, d);
}

static int check_string(const cJSON *v, const struct schema_key *k, const char *key,
                        const struct where *w, struct bd_err *err)
{
        if (!cJSON_IsString(v))
                return fail(err, w, key, "expected a string, got %s", json_type_name(v));
        if (k->choices) {
                for (const char *const *c = k->choices; *c; c++)
                        if (streq(*c, v->valuestring))
                                return 0;
                _cleanup_buf_ struct bd_buf list = BD_BUF_INIT;
                for (const char *const *c = k->choices; *c; c++)
                        buf_printf(&list, "%s%s", c == k->choices ? "" : ", ", *c);
                return fail(err, w, key, "'%s' is not one of: %s", v->valuestring, list.s);
        }
        if (!word_ok(k->word, v->valuestring))
                return fail(err, w, key, "'%s' is not %s", v->valuestring, word_rule(k->word));
        return 0;
}

static int validate_object(const cJSON *obj, const struct schema_key *keys, const char *prefix,
                           const struct where *w, struct bd_err *err);

static int validate_value(const cJSON *v, const struct schema_key *k, const char *key,
                          const struct where *w, struct bd_err *err)
{
        int r;
        if (cJSON_IsNull(v))
                return 0; /* null unsets an inherited value */
        switch (k->type) {
        case S_STRING:
                return check_string(v, k, key, w, err);
        case S_INT:
        case S_NUMBER:
                return check_number(v, k, k->type == S_INT, key, w, err);
        case S_BOOL:
                if (!cJSON_IsBool(v))
                        return fail(err, w, key, "expected true or false, got %s", json_type_name(v));
                return 0;
        case S_OBJECT:
                if (!cJSON_IsObject(v))
                        return fail(err, w, key, "expected an object, got %s", json_type_name(v));
                return validate_object(v, k->children, key, w, err);
        case S_STRING_LIST:
        case S_INT_LIST:
        case S_NUMBER_LIST:
        case S_OBJECT_LIST: {
                if (!cJSON_IsArray(v))
                        return fail(err, w, key, "expected a list, got %s", json_type_name(v));
                int i = 0;
                for (const cJSON *e = v->child; e; e = e->next, i++) {
                        _cleanup_free_ char *ekey = xasprintf("%s[%d]", key, i);
                        if (k->type == S_STRING_LIST)
                                r = check_string(e, k, ekey, w, err);
                        else if (k->type == S_OBJECT_LIST)
                                r = cJSON_IsObject(e) ? validate_object(e, k->children, key, w, err)
                                                      : fail(err, w, ekey, "expected an object, got %s",
                                                             json_type_name(e));
                        else
                                r = check_number(e, k, k->type == S_INT_LIST, ekey, w, err);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        case S_MAP:
                if (!cJSON_IsObject(v))
                        return fail(err, w, key, "expected an object, got %s", json_type_name(v));
                for (const cJSON *e = v->child; e; e = e->next) {
                        _cleanup_free_ char *ekey = xasprintf("%s.%s", key, e->string);
                        if (!word_ok(k->word, e->string))
                                return fail(err, w, ekey, "name is not %s", word_rule(k->word));
                        if (cJSON_IsString(e)) {
                                if (strpbrk(e->valuestring, "\n\r"))
                                        return fail(err, w, ekey, "value holds a newline");
                        } else if (!cJSON_IsNumber(e) && !cJSON_IsBool(e) && !cJSON_IsNull(e))
                                return fail(err, w, ekey, "expected a string, number or boolean, got %s",
                                            json_type_name(e));
                }
                return 0;
        }
        return 0;
}

static void key_names(const struct schema_key *keys, const char *prefix, const char ***names, size_t *n)
{
        for (const struct schema_key *k = keys; k->name; k++) {
                *names = xrealloc(*names, (*n + 2) * sizeof(**names));
                (*names)[(*n)++] = prefix ? xasprintf("%s.%s", prefix, k->name) : xstrdup(k->name);
                (*names)[*n] = NULL;
                if (k->type == S_OBJECT) {
                        _cleanup_free_ char *p = prefix ? xasprintf("%s.%s", prefix, k->name) : xstrdup(k->name);
                        key_names(k->children, p, names, n);
                }
        }
}

static void free_names(const char **names)
{
        for (const char **p = names; p && *p; p++)
                free((char *)*p);
        free(names);
}

const char *schema_suggest(const char *dotted)
{
        static char best[256];
        const char **names = NULL;
        size_t n = 0;
        key_names(base_keys, NULL, &names, &n);
        /* the sections of every workload (each file read: an error's path) */
        for (const struct workload *const *w = workload_all(); *w; w++)
                if (streq((*w)->section, (*w)->name)) {
                        const struct schema_key sec[] = {
                                { (*w)->name, S_OBJECT, (*w)->keys, ANY, NULL, W_ANY, (*w)->help }, { 0 } };
                        key_names(sec, NULL, &names, &n);
                }
        const char *b = str_closest_word(dotted, names);
        /* a misspelt last component: compare with the siblings' full names */
        if (b)
                snprintf(best, sizeof(best), "%s", b);
        free_names(names);
        return b ? best : NULL;
}

static int validate_object(const cJSON *obj, const struct schema_key *keys, const char *prefix,
                           const struct where *w, struct bd_err *err)
{
        for (const cJSON *v = obj->child; v; v = v->next) {
                _cleanup_free_ char *key = prefix ? xasprintf("%s.%s", prefix, v->string) : xstrdup(v->string);
                const struct schema_key *k = NULL;
                if (!prefix) {
                        int r = 0;
                        k = top_key(v->string, err, &r);
                        if (r < 0)
                                return r;
                } else
                        for (const struct schema_key *c = keys; c->name && !k; c++)
                                if (streq(c->name, v->string))
                                        k = c;
                if (!k) {
                        const char *s = schema_suggest(key);
                        if (s)
                                return fail(err, w, key, "unknown key (did you mean '%s'?)", s);
                        return fail(err, w, key, "unknown key");
                }
                int r = validate_value(v, k, key, w, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int schema_check_value(const cJSON *v, const struct schema_key *k, const char *key, const char *label,
                       const char *text, struct bd_err *err)
{
        struct where w = { label, text };
        if (cJSON_IsNull(v))
                return fail(err, &w, key, "expected a value, got null");
        return validate_value(v, k, key, &w, err);
}

int schema_validate(const cJSON *root, const char *label, const char *text, struct bd_err *err)
{
        struct where w = { label, text };
        if (!cJSON_IsObject(root))
                return bd_err_set(err, -EINVAL, "%s: expected a JSON object at the top, got %s", label,
                                  json_type_name(root));
        return validate_object(root, base_keys, NULL, &w, err);
}

const struct schema_key *schema_lookup(const char *dotted, bool *ret_map_value)
{
        _cleanup_free_ char *copy = xstrdup(dotted);
        const struct schema_key *keys = NULL, *found = NULL;
        char *save = NULL;
        *ret_map_value = false;
        for (char *part = strtok_r(copy, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
                if (part == copy) {
                        found = top_key(part, NULL, NULL);
                        if (!found)
                                return NULL;
                        keys = found->type == S_OBJECT ? found->children : NULL;
                        continue;
                }
                if (found && found->type == S_MAP) {
                        if (*ret_map_value)
                                return NULL;
                        *ret_map_value = true;
                        continue;
                }
                if (!keys)
                        return NULL;
                found = NULL;
                for (const struct schema_key *k = keys; k->name; k++)
                        if (streq(k->name, part))
                                found = k;
                if (!found)
                        return NULL;
                keys = found->type == S_OBJECT ? found->children : NULL;
        }
        return found;
}

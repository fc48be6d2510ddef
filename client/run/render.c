/* render.c: sbatch, mpirun and local launch scripts. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "bind.h"
#include "json.h"
#include "groups.h"
#include "hostfile.h"
#include "render.h"
#include "strutil.h"
#include "image.h"
#include "workload.h"

/* A word of a command line: literal text is quoted for the shell, a RAW word
 * (starting with \001) is shell syntax already ("$seed"). */
#define RAW "\001"

struct words {
        char **v;
        size_t n;
};

static void words_add(struct words *w, const char *s)
{
        w->v = xrealloc(w->v, (w->n + 1) * sizeof(char *));
        w->v[w->n++] = xstrdup(s);
}

_printf_(2, 3) static void words_addf(struct words *w, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *s = xvasprintf(fmt, ap);
        va_end(ap);
        w->v = xrealloc(w->v, (w->n + 1) * sizeof(char *));
        w->v[w->n++] = s;
}

static void words_release(struct words *w)
{
        for (size_t i = 0; i < w->n; i++)
                free(w->v[i]);
        free(w->v);
        w->v = NULL;
        w->n = 0;
}

/* PROGRAM in DIR; a DIR naming a shell variable stays live ("$BENCHD_BIN"/prog) */
static void words_add_prog(struct words *w, const char *dir, const char *prog)
{
        if (dir[0] == '$')
                words_addf(w, RAW "\"%s\"/%s", dir, prog);
        else
                words_addf(w, "%s/%s", dir, prog);
}

static void words_add_list(struct words *w, const cJSON *list)
{
        const cJSON *e;
        cJSON_ArrayForEach(e, list)
                if (cJSON_IsString(e))
                        words_add(w, e->valuestring);
}

static void word_quoted(struct bd_buf *q, const char *s)
{
        if (s[0] == RAW[0])
                buf_puts(q, s + 1);
        else
                buf_shell_quote(q, s);
}

/* Emits the words as one command, continued over lines so long command lines
 * stay readable: a line ends before an option past column 72, or before any
 * word past column 100, and an option stays on the line of its value. */
static void emit_command(struct bd_buf *out, const char *indent, const struct words *w)
{
        size_t col = strlen(indent);
        buf_puts(out, indent);
        for (size_t i = 0; i < w->n; i++) {
                const char *s = w->v[i];
                _cleanup_buf_ struct bd_buf q = BD_BUF_INIT;
                word_quoted(&q, s);
                bool option = s[0] == '-';
                size_t with_value = q.len;
                if (option && i + 1 < w->n && w->v[i + 1][0] != '-') {
                        _cleanup_buf_ struct bd_buf v = BD_BUF_INIT;
                        word_quoted(&v, w->v[i + 1]);
                        with_value += 1 + v.len;
                }
                if (i > 0 && ((option && (col + q.len > 72 || col + with_value > 100)) || col + q.len > 100)) {
                        buf_printf(out, " \\\n%s    ", indent);
                        col = strlen(indent) + 4;
                } else if (i > 0) {
                        buf_putc(out, ' ');
                        col++;
                }
                buf_add(out, q.s, q.len);
                col += q.len;
        }
        buf_putc(out, '\n');
}

/* An environment value in double quotes: $NAME and ${NAME} references stay
 * live (rendered ${NAME:-} so that set -u accepts unset ones); every other
 * special character is escaped. */
static void env_value(struct bd_buf *out, const char *s)
{
        buf_putc(out, '"');
        for (const char *p = s; *p; p++) {
                if (*p == '$') {
                        const char *name = p + 1;
                        bool braced = *name == '{';
                        if (braced)
                                name++;
                        size_t n = 0;
                        if ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z') || name[0] == '_')
                                while ((name[n] >= 'A' && name[n] <= 'Z') || (name[n] >= 'a' && name[n] <= 'z') ||
                                       (name[n] >= '0' && name[n] <= '9') || name[n] == '_')
                                        n++;
                        if (n > 0 && (!braced || name[n] == '}')) {
                                buf_printf(out, "${%.*s:-}", (int)n, name);
                                p = name + n + (braced ? 1 : 0) - 1;
                                continue;
                        }
                        buf_puts(out, "\\$");
                } else if (*p == '"' || *p == '\\' || *p == '`') {
                        buf_putc(out, '\\');
                        buf_putc(out, *p);
                } else
                        buf_putc(out, *p);
        }
        buf_putc(out, '"');
}

/* NAME='value', always quoted so no value reads as a command to shellcheck */
static void shell_assign(struct bd_buf *out, const char *name, const char *value)
{
        buf_printf(out, "%s='", name);
        for (const char *p = value; *p; p++)
                buf_puts(out, *p == '\'' ? "'\\''" : (char[]){ *p, 0 });
        buf_puts(out, "'\n");
}

static void env_scalar(const cJSON *v, struct bd_buf *out)
{
        if (cJSON_IsString(v))
                buf_puts(out, v->valuestring);
        else if (cJSON_IsBool(v))
                buf_puts(out, cJSON_IsTrue(v) ? "1" : "0");
        else if (cJSON_IsNumber(v))
                json_number(out, v->valuedouble);
}

char *expand_home(const char *path)
{
        const char *home = getenv("HOME");
        if (path[0] == '~' && (path[1] == '/' || !path[1]) && home)
                return xasprintf("%s%s", home, path + 1);
        return xstrdup(path);
}

char *run_id_new(void)
{
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        uint16_t rnd = 0;
        if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
                /* no getrandom (a seccomp filter, no entropy yet): the clock's
                 * nanoseconds, which differ from one draw to the next */
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                rnd = (uint16_t)((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_nsec >> 16) ^ (uint64_t)getpid());
        }
        char stamp[32];
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
        return xasprintf("%s-%04x", stamp, rnd);
}

/* Everything a launch script says, read once from the system, its workload
 * section and the render options (plan_fill()); the emitters below read
 * only this. */
struct plan {
        const char *name;               /* the system's */
        const char *path;               /* its file */
        const struct workload *w;
        const cJSON *section;           /* the workload's section of the system */
        const char *run_id, *version;
        int trials;
        const char *launcher;           /* local, mpirun or slurm */
        const char *organization;
        long nodes, ranks, gpus;        /* ranks and GPUs per node */
        long tenants;                   /* 0, or single-rank runs at once on one node (ranks and nodes 1) */
        long tenant_cpus;               /* each tenant's CPUs (Slurm's --cpus-per-task) */
        struct node_groups groups;      /* node_groups: groups.ngroups trials, a round's at once */
        char **group_hosts;             /* with groups outside Slurm: the nodes' hosts, by place */
        bool bench;                     /* throughput mode: the section's benchmark_steps > 0 */
        bool writes_logs;               /* the program writes into the log directory (bench, {result} of
                                         * another's program, {logdir}, a key's "path": "logs") */
        bool per_node;                  /* one process per node starts the node's ranks (launch.shape) */
        bool workload_image;            /* the container runs the workload's own image (no benchd there) */
        const char *pretrained_file;    /* the section's file in paths.pretrained (a key's "path"), NULL: none */
        long seed;                      /* the section's first seed, -1: drawn per trial */
        char *data, *logs, *pretrained; /* ~/ expanded; data: the staged copy when staging is required */
        char *bin_dir;                  /* BENCHD_BIN: benchd's programs outside a container */
        const char *bin;                /* where the rank-side programs are, as the launch sees them */
        const cJSON *env;               /* the workload's env under the system's: NAME -> value, null: not set */
        cJSON *env_owned;               /* that merge, where the workload has an env */
        bool env_nccl_ifname;           /* env names NCCL_SOCKET_IFNAME */
        bool clear_caches;
        int benchd_port;
        struct {
                const char *runtime;    /* none, docker, podman, apptainer, singularity, charliecloud */
                bool on;                /* not none */
                char *image;            /* ~/ expanded */
                const char *bin_dir;    /* the programs in the image */
                const cJSON *options, *binds, *ulimits;
        } container;
        struct {
                const char *command, *bind_to, *map_by;
                const char *interface;  /* NULL: none */
                char *hostfile;         /* ~/ expanded, NULL: none */
                const cJSON *hosts, *mca, *extra_options;
                bool tag_output;
                bool mca_single_copy;   /* mca sets btl_vader_single_copy_mechanism */
                bool mca_tcp_if;        /* mca sets btl_tcp_if_include */
        } mpirun;
        struct {
                bool srun;              /* slurm.launch: srun (else mpirun) */
                bool exclusive;
                const char *mpi, *job_name, *mem, *time_limit, *partition, *account, *qos;
                const cJSON *extra_options;
        } slurm;
        struct {
                bool on;                /* binding.policy auto: benchd-bind before each rank */
                bool ask_benchd;        /* binding.source auto: the node's benchd knows better */
                char **specs;           /* per local rank (or tenant): CPUS:MEM[:NIC] */
                long nspecs;
        } bind;
        struct {
                bool require;
                const char *name, *destination;
        } staging;
};

/* BENCHD_BIN: where the programs are outside a container */
static char *host_bin_dir(const struct bd_system *s, const struct render_opts *o)
{
        const char *bin_cfg = sys_str(s->json, "paths.bin");
        return expand_home(bin_cfg ? bin_cfg : o->bin_dir);
}

char *render_trainer_path(const struct bd_system *s, const struct render_opts *o)
{
        if (!streq(sys_str(s->json, "container.runtime"), "none"))
                return NULL;
        const struct workload *w = workload_find(o->workload);
        if (!w || !w->own)
                return NULL;
        _cleanup_free_ char *bin = host_bin_dir(s, o);
        return xasprintf("%s/%s", bin, w->program);
}

static void flag_name(const char *key, struct bd_buf *out)
{
        buf_puts(out, "--");
        for (const char *p = key; *p; p++)
                buf_putc(out, *p == '_' ? '-' : *p);
}

/* Whether a section value counts as given for "if" and "when": present,
 * not null, false, 0, "" or an empty list. */
static bool truthy(const cJSON *v)
{
        if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v))
                return false;
        if (cJSON_IsNumber(v))
                return v->valuedouble != 0;
        if (cJSON_IsString(v))
                return v->valuestring[0] != 0;
        if (cJSON_IsArray(v))
                return cJSON_GetArraySize(v) > 0;
        return true;
}

/* A value as one word: a list's items joined by commas, booleans 1 and 0. */
static void value_word(const cJSON *v, struct bd_buf *out)
{
        if (cJSON_IsArray(v)) {
                const cJSON *e;
                bool first = true;
                cJSON_ArrayForEach(e, v) {
                        if (!first)
                                buf_putc(out, ',');
                        first = false;
                        env_scalar(e, out);
                }
        } else
                env_scalar(v, out);
}

/* A key's value with its "path": its own (~/ expanded), or a file name in
 * one of the system's directories (the container's, in one); false when it
 * has none. */
static bool path_word(const struct plan *c, const char *path, const cJSON *v, struct bd_buf *out)
{
        if (!path || !cJSON_IsString(v))
                return false;
        if (streq(path, "file")) {
                /* a path of its own: ~/ is this user's home */
                _cleanup_free_ char *p = expand_home(v->valuestring);
                buf_puts(out, p);
                return true;
        }
        if (v->valuestring[0] == '/')
                return false;
        const char *dir = streq(path, "pretrained") ? (c->container.on ? "/pretrained" : c->pretrained)
                        : streq(path, "logs") ? (c->container.on ? "/logs" : c->logs)
                                              : (c->container.on ? "/data" : c->data);
        buf_printf(out, "%s/%s", dir, v->valuestring);
        return true;
}

/* A value as a KEY VALUE override of a Python program's configuration
 * (yacs's literal_eval): a list as a tuple, booleans True and False. */
static void override_word(const cJSON *v, struct bd_buf *out)
{
        if (cJSON_IsArray(v)) {
                buf_putc(out, '(');
                value_word(v, out);
                buf_puts(out, cJSON_GetArraySize(v) == 1 ? ",)" : ")");
        } else if (cJSON_IsBool(v))
                buf_puts(out, cJSON_IsTrue(v) ? "True" : "False");
        else
                env_scalar(v, out);
}

/* {args}: each key of the section, in its order, that the command does not
 * place itself, whose "arg" is not null and whose "when" holds: --KEY VALUE
 * ('-' for '_'), the key's own option, or its "override" KEY VALUE. */
static void args_words(const struct plan *c, struct words *w)
{
        const cJSON *v;
        cJSON_ArrayForEach(v, c->section) {
                const cJSON *spec = workload_key_spec(c->w, v->string);
                const cJSON *arg = json_get(spec, "arg");
                const char *when = json_str(spec, "when", NULL);
                if (!spec || cJSON_IsNull(arg) || json_get(spec, "env") || workload_command_names(c->w, v->string) ||
                    (when && !truthy(json_get(c->section, when))))
                        continue;
                _cleanup_buf_ struct bd_buf flag = BD_BUF_INIT, val = BD_BUF_INIT;
                const char *ov = json_str(spec, "override", NULL);
                if (!path_word(c, json_str(spec, "path", NULL), v, &val) && ov)
                        override_word(v, &val);
                else if (!val.len)
                        value_word(v, &val);
                if (ov) {
                        words_add(w, ov);
                        words_add(w, val.s ? val.s : "");
                        continue;
                }
                if (cJSON_IsString(arg))
                        buf_puts(&flag, arg->valuestring);
                else
                        flag_name(v->string, &flag);
                if (json_bool(spec, "flag", false)) {
                        /* the option alone when true, nothing when false */
                        if (cJSON_IsTrue(v))
                                words_add(w, flag.s);
                        continue;
                }
                if (flag.s[flag.len - 1] == '=') {
                        /* --option=VALUE, one word */
                        words_addf(w, "%s%s", flag.s, val.s ? val.s : "");
                        continue;
                }
                words_add(w, flag.s);
                words_add(w, val.s ? val.s : "");       /* an empty list: none */
        }
}

/* One placeholder's value: literal text into lit, or shell syntax into raw
 * (the word then becomes shell syntax); a string-list key alone in its word
 * is spliced as words instead (*spliced set). */
static void fill(const struct plan *c, const char *name, bool alone, struct words *w, struct bd_buf *lit,
                 struct bd_buf *raw, bool *spliced)
{
        if (streq(name, "program")) {
                if (c->w->own && c->bin[0] == '$')
                        buf_printf(raw, "\"%s\"/%s", c->bin, c->w->program);
                else if (c->w->own)
                        buf_printf(lit, "%s/%s", c->bin, c->w->program);
                else
                        buf_puts(lit, c->w->program);
        } else if (streq(name, "data")) {
                buf_puts(lit, c->container.on ? "/data" : c->data);
        } else if (streq(name, "result")) {
                buf_puts(raw, c->container.on ? "\"/logs/${RUN_ID}_${trial}.json\"" : "\"$LOGDIR/${RUN_ID}_${trial}.json\"");
        } else if (streq(name, "system")) {
                buf_puts(lit, c->name);
        } else if (streq(name, "trial_seed")) {
                buf_puts(raw, "\"$seed\"");
        } else if (streq(name, "logdir")) {
                if (c->container.on)
                        buf_puts(lit, "/logs");
                else
                        buf_puts(raw, "\"$LOGDIR\"");
        } else if (streq(name, "run")) {
                buf_puts(raw, "\"$RUN_ID\"");
        } else if (streq(name, "trial")) {
                buf_puts(raw, "\"$trial\"");
        } else if (streq(name, "nodes")) {
                buf_printf(lit, "%ld", c->nodes);
        } else if (streq(name, "ranks")) {
                buf_printf(lit, "%ld", c->nodes * c->ranks);
        } else if (streq(name, "ranks_per_node")) {
                buf_printf(lit, "%ld", c->ranks);
        } else if (streq(name, "rank") || streq(name, "local_rank")) {
                /* a rank's own: left as it is, replaced on the rank (rank_words) */
                buf_printf(lit, "{%s}", name);
        } else {
                const cJSON *v = json_get(c->section, name), *spec = workload_key_spec(c->w, name);
                const char *path = json_str(spec, "path", NULL);
                const char *type = json_str(spec, "type", "");
                if (alone && streq(type, "string-list")) {
                        words_add_list(w, v);
                        *spliced = true;
                } else if (alone && (streq(type, "int-list") || streq(type, "number-list"))) {
                        /* a list alone in its word: its items as words (nargs) */
                        const cJSON *e;
                        cJSON_ArrayForEach(e, v) {
                                _cleanup_buf_ struct bd_buf item = BD_BUF_INIT;
                                env_scalar(e, &item);
                                words_add(w, item.s ? item.s : "");
                        }
                        *spliced = true;
                } else if (!path_word(c, path, v, lit) && v)
                        value_word(v, lit);
        }
}

/* A word of the workload's command with its placeholders filled. */
static void command_word(const struct plan *c, const char *word, struct words *w)
{
        if (streq(word, "{args}")) {
                args_words(c, w);
                return;
        }
        _cleanup_buf_ struct bd_buf lit = BD_BUF_INIT, out = BD_BUF_INIT;
        bool raw_word = false, spliced = false;
        for (const char *p = word; *p;) {
                const char *open = strchr(p, '{'), *close = open ? strchr(open, '}') : NULL;
                if (!open || !close) {
                        buf_puts(&lit, p);
                        break;
                }
                buf_add(&lit, p, (size_t)(open - p));
                _cleanup_free_ char *name = xstrndup(open + 1, (size_t)(close - open - 1));
                _cleanup_buf_ struct bd_buf raw = BD_BUF_INIT;
                fill(c, name, open == word && !close[1], w, &lit, &raw, &spliced);
                if (raw.len) {
                        /* shell syntax: what came before it, quoted, then it */
                        if (lit.len)
                                buf_shell_quote(&out, lit.s);
                        buf_reset(&lit);
                        buf_add(&out, raw.s, raw.len);
                        raw_word = true;
                }
                p = close + 1;
        }
        if (spliced)
                return;
        if (!raw_word) {
                words_add(w, lit.s ? lit.s : "");
                return;
        }
        if (lit.len)
                buf_shell_quote(&out, lit.s);
        words_addf(w, RAW "%s", out.s);
}

/* Whether the command this run renders names {fill}: its words and the
 * "then" of each "if" whose key the section gives. */
static bool renders_fill(const struct plan *c, const char *fill)
{
        _cleanup_free_ char *needle = xasprintf("{%s}", fill);
        const cJSON *e, *t;
        cJSON_ArrayForEach(e, c->w->command) {
                if (cJSON_IsString(e) && strstr(e->valuestring, needle))
                        return true;
                if (cJSON_IsString(e) || !truthy(json_get(c->section, json_str(e, "if", ""))))
                        continue;
                cJSON_ArrayForEach(t, json_get(e, "then"))
                        if (cJSON_IsString(t) && strstr(t->valuestring, needle))
                                return true;
        }
        return false;
}

/* The workload's command line, from its file and its section of the system. */
static void trainer_args(const struct plan *c, struct words *w)
{
        const cJSON *e, *t;
        cJSON_ArrayForEach(e, c->w->command) {
                if (cJSON_IsString(e)) {
                        command_word(c, e->valuestring, w);
                        continue;
                }
                if (!truthy(json_get(c->section, json_str(e, "if", ""))))
                        continue;
                cJSON_ArrayForEach(t, json_get(e, "then"))
                        command_word(c, t->valuestring, w);
        }
}

/* benchd-bind -r CPUS:MEM[:NIC]... -- */
static void binding_args(const struct plan *c, const char *bind_bin, struct words *w)
{
        if (!c->bind.on)
                return;
        words_add_prog(w, bind_bin, "benchd-bind");
        if (c->tenants) {
                /* its share (of its GPU's plan, or of the node's CPUs), in a
                 * cgroup of its own */
                words_add(w, "--tenant");
                words_addf(w, RAW "\"$tenant\"/%ld", c->tenants);
                words_add(w, "--confine");
                words_add(w, RAW "\"benchd-$RUN_ID-t$tenant\"");
        }
        for (long i = 0; i < c->bind.nspecs; i++) {
                words_add(w, "-r");
                words_add(w, c->bind.specs[i]);
        }
        if (c->bind.ask_benchd && c->bind.nspecs) {
                /* the node's own benchd, when it runs there, knows the real wiring */
                words_add(w, "--benchd");
                words_addf(w, "http://127.0.0.1:%d", c->benchd_port);
        }
        words_add(w, "--");
}

static void container_binds(const struct plan *c, const char *flag, struct words *w)
{
        /* only what the trainer reads or writes: a bind of a directory
         * the node lacks fails the container's start */
        if (c->w->dataset) {
                words_add(w, flag);
                words_addf(w, "%s:/data", c->data);
        }
        const char *pre = c->pretrained_file;
        if (pre && pre[0] != '/') {
                words_add(w, flag);
                words_addf(w, "%s:/pretrained", c->pretrained);
        }
        if (c->bench || c->writes_logs) {
                /* the trainer writes its JSON result there */
                words_add(w, flag);
                words_addf(w, "%s:/logs", c->logs);
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, c->container.binds) {
                words_add(w, flag);
                words_add(w, e->valuestring);
        }
}

/* docker and podman: one long-lived container per run, commands run in it
 * with 'exec' */
static bool runtime_is_daemon(const char *runtime)
{
        return streq(runtime, "docker") || streq(runtime, "podman");
}

/* apptainer/singularity/charliecloud: the prefix that runs a command in the
 * image; for every rank of a launch (ranks), or once */
static void container_exec(const struct plan *c, bool ranks, struct words *w)
{
        const char *image = c->container.image;
        if (streq(c->container.runtime, "apptainer") || streq(c->container.runtime, "singularity")) {
                words_add(w, c->container.runtime);
                words_add(w, "exec");
                if (c->gpus > 0)
                        words_add(w, "--nv");
                container_binds(c, "-B", w);
                words_add_list(w, c->container.options);
                words_add(w, image);
        } else if (streq(c->container.runtime, "charliecloud")) {
                words_add(w, "ch-run");
                if (ranks && c->nodes == 1)
                        words_add(w, "--join");  /* one container: see mpirun_common() */
                container_binds(c, "-b", w);
                words_add_list(w, c->container.options);
                words_add(w, image);
                words_add(w, "--");
        }
}

/* mpirun's options after its hosts; map_by: the system's, or one process
 * per node's */
static void mpirun_common(const struct plan *c, const char *map_by, struct words *w)
{
        words_add(w, "--bind-to");
        words_add(w, c->mpirun.bind_to);
        words_add(w, "--map-by");
        words_add(w, map_by);
        const cJSON *e;
        cJSON_ArrayForEach(e, c->mpirun.mca) {
                _cleanup_buf_ struct bd_buf v = BD_BUF_INIT;
                env_scalar(e, &v);
                words_add(w, "--mca");
                words_add(w, e->string);
                words_add(w, v.s);
        }
        /* ranks in ch-run containers of their own are in user namespaces of
         * their own, where the shared memory transport's single copy (CMA,
         * process_vm_readv) is refused, and its large messages hung (a 64
         * MiB allreduce, SSD's broadcast of the weights between two ranks).
         * On one node the ranks join one container (ch-run --join, below);
         * across nodes (the test cluster's emulated ones share a host, where
         * --join's peer groups are not the nodes) the single copy is off. */
        if (streq(c->container.runtime, "charliecloud") && c->nodes > 1 && !c->mpirun.mca_single_copy) {
                words_add(w, "--mca");
                words_add(w, "btl_vader_single_copy_mechanism");
                words_add(w, "none");
        }
        const char *iface = c->mpirun.interface;
        if (iface && !c->mpirun.mca_tcp_if) {
                words_add(w, "--mca");
                words_add(w, "btl_tcp_if_include");
                words_add(w, iface);
        }
        cJSON_ArrayForEach(e, c->env) {
                if (cJSON_IsNull(e))
                        continue;
                words_add(w, "-x");
                words_add(w, e->string);
        }
        if (iface && !c->env_nccl_ifname) {
                words_add(w, "-x");
                words_add(w, "NCCL_SOCKET_IFNAME");
        }
        if (c->w->rendezvous || c->per_node) {
                words_add(w, "-x");
                words_add(w, "MASTER_ADDR");
                words_add(w, "-x");
                words_add(w, "MASTER_PORT");
        }
        if (c->mpirun.tag_output)
                words_add(w, "--tag-output");
        words_add_list(w, c->mpirun.extra_options);
}

/* mpirun's hosts: the hostfile, or -H with the hosts and their slots */
static void mpirun_hosts(const struct plan *c, long slots, struct words *w)
{
        if (c->mpirun.hostfile && !streq(c->launcher, "local")) {
                words_add(w, "--hostfile");
                words_add(w, c->mpirun.hostfile);
                return;
        }
        _cleanup_buf_ struct bd_buf h = BD_BUF_INIT;
        const cJSON *e;
        if (cJSON_GetArraySize(c->mpirun.hosts) > 0 && !streq(c->launcher, "local"))
                cJSON_ArrayForEach(e, c->mpirun.hosts)
                        buf_printf(&h, "%s%s:%ld", h.len ? "," : "", e->valuestring, slots);
        else
                buf_printf(&h, "localhost:%ld", slots);
        words_add(w, "-H");
        words_add(w, h.s);
}

/* What starts the ranks of one node (launch.launcher), for node NODE_RANK
 * (a number, or shell syntax of the node's own process), at the first
 * node's MASTER_ADDR and the trial's MASTER_PORT: torch.distributed.launch
 * after the Python of the command's {program} (it adds --local_rank=N to
 * each rank's arguments), or torchrun in its place. */
static void node_launcher(const struct plan *c, const char *node_rank, struct words *w)
{
        bool torchrun = c->w->shape == SHAPE_PER_NODE_TORCHRUN;
        if (torchrun) {
                words_add(w, "torchrun");
                words_addf(w, "--nproc-per-node=%ld", c->ranks);
                words_addf(w, "--nnodes=%ld", c->nodes);
                words_addf(w, "%s--node-rank=%s", node_rank[0] == RAW[0] ? RAW : "",
                           node_rank + (node_rank[0] == RAW[0]));
                words_add(w, "--rdzv-backend=c10d");
                words_add(w, RAW "--rdzv-endpoint=\"$MASTER_ADDR:$MASTER_PORT\"");
                return;
        }
        words_add(w, c->w->program);
        words_add(w, "-m");
        words_add(w, "torch.distributed.launch");
        words_addf(w, "--nproc_per_node=%ld", c->ranks);
        words_addf(w, "--nnodes=%ld", c->nodes);
        words_addf(w, "%s--node_rank=%s", node_rank[0] == RAW[0] ? RAW : "", node_rank + (node_rank[0] == RAW[0]));
        words_add(w, RAW "--master_addr=\"$MASTER_ADDR\"");
        words_add(w, RAW "--master_port=\"$MASTER_PORT\"");
}

/* launch.shape per-node: one process per node (srun one task per node, or
 * mpirun one per node; the process itself on one node) that starts the
 * node's ranks.  Each node's rank is its own process's ($SLURM_NODEID under
 * srun, $OMPI_COMM_WORLD_RANK under mpirun), read on the node by bash -c,
 * which runs the launcher with the command's words as its arguments.  No
 * benchd-bind: the launcher's ranks are its children, not the launch's. */
static void launch_per_node(const struct plan *c, struct words *w)
{
        bool docker = runtime_is_daemon(c->container.runtime);
        bool srun = streq(c->launcher, "slurm") && c->slurm.srun;
        const char *node_rank = "0";
        if (docker) {
                words_add(w, c->container.runtime);
                words_add(w, "exec");
                words_add(w, RAW "\"$CONTAINER\"");
        }
        if (c->nodes > 1 && srun) {
                words_add(w, "srun");
                words_add(w, RAW "--nodes=\"$SLURM_JOB_NUM_NODES\"");
                words_add(w, RAW "--ntasks=\"$SLURM_JOB_NUM_NODES\"");
                words_add(w, "--ntasks-per-node=1");
                words_add(w, "--cpu-bind=none");
                words_add(w, "--export=ALL");
                if (c->slurm.mpi)
                        words_addf(w, "--mpi=%s", c->slurm.mpi);
                node_rank = RAW "\"$SLURM_NODEID\"";
        } else if (c->nodes > 1) {
                words_add(w, c->mpirun.command);
                words_add(w, "-np");
                if (streq(c->launcher, "slurm"))
                        words_add(w, RAW "\"$SLURM_JOB_NUM_NODES\"");
                else {
                        words_addf(w, "%ld", c->nodes);
                        mpirun_hosts(c, 1, w);
                }
                mpirun_common(c, "ppr:1:node", w);
                node_rank = RAW "\"$OMPI_COMM_WORLD_RANK\"";
        }
        if (!docker)
                container_exec(c, false, w);
        struct words cmd = { 0 };
        trainer_args(c, &cmd);
        if (c->nodes > 1) {
                /* the launcher, its node rank read on the node */
                struct words inner = { 0 };
                _cleanup_buf_ struct bd_buf line = BD_BUF_INIT;
                words_add(&inner, "exec");
                node_launcher(c, node_rank, &inner);
                words_add(&inner, RAW "\"$@\"");
                for (size_t i = 0; i < inner.n; i++) {
                        _cleanup_buf_ struct bd_buf q = BD_BUF_INIT;
                        if (inner.v[i][0] == RAW[0])
                                buf_puts(&q, inner.v[i] + 1);
                        else
                                buf_shell_quote(&q, inner.v[i]);
                        buf_printf(&line, "%s%s", i ? " " : "", q.s);
                }
                words_release(&inner);
                words_add(w, "bash");
                words_add(w, "-c");
                words_add(w, line.s);
                words_add(w, "benchd-node");       /* its $0 */
        } else
                node_launcher(c, node_rank, w);
        for (size_t i = 1; i < cmd.n; i++)      /* after {program}: the launcher runs it */
                words_add(w, cmd.v[i]);
        words_release(&cmd);
}

/* Each rank's own, from Open MPI's OMPI_COMM_WORLD_RANK, _LOCAL_RANK and
 * _SIZE, else srun's SLURM_PROCID, SLURM_LOCALID and SLURM_NTASKS, read on
 * the rank by bash: torch.distributed's RANK, LOCAL_RANK and WORLD_SIZE
 * exported (with MASTER_ADDR and MASTER_PORT, the rendezvous's), and
 * {rank} and {local_rank} replaced in the words the launch hands it, which
 * the script has filled with its own values already. */
static void rank_words(const struct plan *c, struct words *w)
{
        words_add(w, "bash");
        words_add(w, "-c");
        words_add(w, "r=${OMPI_COMM_WORLD_RANK:-${SLURM_PROCID:-0}} l=${OMPI_COMM_WORLD_LOCAL_RANK:-${SLURM_LOCALID:-0}}; "
                     "export RANK=$r LOCAL_RANK=$l WORLD_SIZE=${OMPI_COMM_WORLD_SIZE:-${SLURM_NTASKS:-1}}; "
                     "a=(); for x in \"$@\"; do x=${x//\\{rank\\}/$r}; a+=(\"${x//\\{local_rank\\}/$l}\"); done; "
                     "exec \"${a[@]}\"");
        words_add(w, "benchd-rank");   /* its $0 */
        trainer_args(c, w);
}

/* The rest of a rank's command: the rank's own values (in its command, or
 * its rendezvous's variables), then the workload's. */
static void rank_command(const struct plan *c, struct words *w)
{
        if (!c->w->rendezvous && !workload_command_names(c->w, "rank") &&
            !workload_command_names(c->w, "local_rank")) {
                trainer_args(c, w);
                return;
        }
        rank_words(c, w);
}

/* One tenant's run: a job step of its own under Slurm (its CPUs, memory and
 * GPU, so that Slurm's cgroups confine it where the site has them), the
 * rank started by srun or by an mpirun of one rank on this node, inside
 * benchd-bind --tenant, which confines it itself too. */
static void tenant_launch(const struct plan *c, struct words *w)
{
        bool slurm = streq(c->launcher, "slurm");
        if (slurm) {
                words_add(w, "srun");
                words_add(w, "--exact");
                words_add(w, "--nodes=1");
                words_add(w, "--ntasks=1");
                words_addf(w, "--cpus-per-task=%ld", c->tenant_cpus);
                words_add(w, RAW "--mem=\"$TENANT_MEM\"M");
                if (c->gpus > 0)
                        words_add(w, "--gres=gpu:1");
                /* Slurm's binding (task/affinity, task/cgroup) gives the step
                 * its CPUs: benchd-bind then keeps to them */
                words_add(w, "--export=ALL");
                if (c->slurm.srun && c->slurm.mpi)
                        words_addf(w, "--mpi=%s", c->slurm.mpi);
        }
        if (!(slurm && c->slurm.srun)) {
                words_add(w, c->mpirun.command);
                words_add(w, "-np");
                words_add(w, "1");
                if (slurm) {
                        /* this step's one rank, here: Open MPI is told to leave
                         * Slurm's allocation alone (it would count the job's
                         * tasks as taken and start nothing) */
                        words_add(w, "-H");
                        words_add(w, "localhost:1");
                        words_add(w, "--mca");
                        words_add(w, "ras");
                        words_add(w, "^slurm");
                        words_add(w, "--mca");
                        words_add(w, "plm");
                        words_add(w, "^slurm");
                } else
                        mpirun_hosts(c, 1, w);
                mpirun_common(c, "slot", w);
                if (c->gpus > 0 && !slurm) {
                        words_add(w, "-x");
                        words_add(w, "CUDA_VISIBLE_DEVICES");
                }
        }
        binding_args(c, "$BENCHD_BIN", w);
        container_exec(c, true, w);
        rank_command(c, w);
}

/* The command that starts all ranks of one trial. */
static void launch_command(const struct plan *c, struct words *w)
{
        if (c->per_node) {
                launch_per_node(c, w);
                return;
        }
        bool docker = runtime_is_daemon(c->container.runtime);
        if (docker) {
                words_add(w, c->container.runtime);
                words_add(w, "exec");
                words_add(w, RAW "\"$CONTAINER\"");
        }
        if (c->tenants) {
                tenant_launch(c, w);
                return;
        }
        /* a node group's trial (node_groups): the ranks of its nodes only,
         * from the variables run_trial set, beside the round's other groups */
        bool group = c->groups.ngroups > 0;
        if (streq(c->launcher, "slurm") && c->slurm.srun) {
                words_add(w, "srun");
                if (group)
                        words_add(w, RAW "--nodes=\"$GROUP_NODES\"");
                words_add(w, group ? RAW "--ntasks=\"$GROUP_RANKS\"" : RAW "--ntasks=\"$SLURM_NTASKS\"");
                words_addf(w, "--ntasks-per-node=%ld", c->ranks);
                if (group) {
                        words_add(w, RAW "--nodelist=\"$GROUP_LIST\"");
                        words_add(w, "--exact");
                }
                words_add(w, "--cpu-bind=none");
                words_add(w, "--export=ALL");
                if (c->slurm.mpi)
                        words_addf(w, "--mpi=%s", c->slurm.mpi);
        } else {
                words_add(w, c->mpirun.command);
                words_add(w, "-np");
                if (group) {
                        words_add(w, RAW "\"$GROUP_RANKS\"");
                        words_add(w, "-H");
                        words_add(w, RAW "\"$GROUP_HOSTS\"");
                } else if (streq(c->launcher, "slurm")) {
                        words_add(w, RAW "\"$SLURM_NTASKS\"");
                } else {
                        words_addf(w, "%ld", c->nodes * c->ranks);
                        mpirun_hosts(c, c->ranks, w);
                }
                mpirun_common(c, c->mpirun.map_by, w);
        }
        /* benchd-bind inside docker's container: not in the workload's own image */
        if (!(docker && c->workload_image))
                binding_args(c, docker ? c->container.bin_dir : "$BENCHD_BIN", w);
        if (!docker)
                container_exec(c, true, w);
        rank_command(c, w);
}

static void emit_sbatch(const struct plan *c, struct bd_buf *out)
{
        if (c->slurm.job_name)
                buf_printf(out, "#SBATCH --job-name=%s\n", c->slurm.job_name);
        else
                buf_printf(out, "#SBATCH --job-name=benchd-%s-%s\n", c->w->name, c->name);
        buf_printf(out, "#SBATCH --nodes=%ld\n", c->nodes);
        if (c->tenants) {
                /* a task of its own CPUs per tenant, for their job steps */
                buf_printf(out, "#SBATCH --ntasks=%ld\n", c->tenants);
                buf_printf(out, "#SBATCH --cpus-per-task=%ld\n", c->tenant_cpus);
                if (c->gpus > 0)
                        buf_printf(out, "#SBATCH --gres=gpu:%ld\n", c->tenants);
        } else {
                buf_printf(out, "#SBATCH --ntasks-per-node=%ld\n", c->ranks);
                buf_printf(out, "#SBATCH --ntasks=%ld\n", c->nodes * c->ranks);
                if (c->gpus > 0) /* its first ranks_per_node */
                        buf_printf(out, "#SBATCH --gres=gpu:%ld\n", c->ranks < c->gpus ? c->ranks : c->gpus);
        }
        if (c->slurm.exclusive)
                buf_puts(out, "#SBATCH --exclusive\n");
        if (c->slurm.mem)
                buf_printf(out, "#SBATCH --mem=%s\n", c->slurm.mem);
        if (c->slurm.time_limit)
                buf_printf(out, "#SBATCH --time=%s\n", c->slurm.time_limit);
        if (c->slurm.partition)
                buf_printf(out, "#SBATCH --partition=%s\n", c->slurm.partition);
        if (c->slurm.account)
                buf_printf(out, "#SBATCH --account=%s\n", c->slurm.account);
        if (c->slurm.qos)
                buf_printf(out, "#SBATCH --qos=%s\n", c->slurm.qos);
        buf_printf(out, "#SBATCH --output=%s/%s_slurm-%%j.out\n", c->logs, c->run_id);
        buf_puts(out, "#SBATCH --no-requeue\n");
        const cJSON *e;
        cJSON_ArrayForEach(e, c->slurm.extra_options)
                buf_printf(out, "#SBATCH %s\n", e->valuestring);
}

/* The body of a shell function that runs function FN once on every node of
 * the job (srun, mpirun with one process per node, or here), and says
 * "benchd: could not reach the nodes to WHAT (...)" when the launch fails.
 * With fail set, that failure is the function's status; else it is only
 * said. */
static void emit_on_every_node(const struct plan *c, const char *fn, const char *what, bool fail, struct bd_buf *out)
{
        const char *tail = fail ? " >&2; return 1; }" : "";
        if (streq(c->launcher, "slurm")) {
                buf_printf(out,
                           "    srun --nodes=\"$SLURM_JOB_NUM_NODES\" --ntasks=\"$SLURM_JOB_NUM_NODES\" --ntasks-per-node=1 \\\n"
                           "        bash -c \"$(declare -f %s); %s\" ||\n"
                           "        %secho \"benchd: %s %s (srun failed)\"%s\n",
                           fn, fn, fail ? "{ " : "", fail ? "could not" : "could not reach the nodes to", what, tail);
        } else if (c->nodes > 1) {
                struct words w = { 0 };
                _cleanup_free_ char *call = xasprintf(RAW "\"$(declare -f %s); %s\"", fn, fn);
                _cleanup_free_ char *msg = xasprintf("benchd: %s %s (mpirun failed)",
                                                     fail ? "could not" : "could not reach the nodes to", what);
                words_add(&w, c->mpirun.command);
                if (c->mpirun.hostfile) {
                        words_add(&w, "--hostfile");
                        words_add(&w, c->mpirun.hostfile);
                } else {
                        _cleanup_buf_ struct bd_buf h = BD_BUF_INIT;
                        const cJSON *e;
                        cJSON_ArrayForEach(e, c->mpirun.hosts)
                                buf_printf(&h, "%s%s", h.len ? "," : "", e->valuestring);
                        words_add(&w, "-H");
                        words_add(&w, h.s);
                }
                words_add(&w, "--map-by");
                words_add(&w, "ppr:1:node");
                words_add(&w, "-np");
                words_addf(&w, "%ld", c->nodes);
                words_add(&w, "bash");
                words_add(&w, "-c");
                words_add(&w, call);
                words_add(&w, RAW "||");
                if (fail)
                        words_add(&w, RAW "{");
                words_add(&w, "echo");
                words_add(&w, msg);
                if (fail) {
                        words_add(&w, RAW ">&2;");
                        words_add(&w, RAW "return");
                        words_add(&w, RAW "1;");
                        words_add(&w, RAW "}");
                }
                emit_command(out, "    ", &w);
                words_release(&w);
        } else
                buf_printf(out, "    %s\n", fn);
}

static void emit_cache_drop(const struct plan *c, struct bd_buf *out)
{
        buf_puts(out,
                 "# Drop the page cache on every node so each trial reads its data cold.\n"
                 "drop_page_cache() {\n"
                 "    local node=${SLURMD_NODENAME:-$(hostname)}\n"
                 "    sync\n"
                 "    if { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then\n"
                 "        echo \"benchd: $node: page cache dropped\"\n"
                 "    elif sudo -n /sbin/sysctl -q vm.drop_caches=3 2>/dev/null; then\n"
                 "        echo \"benchd: $node: page cache dropped (sudo sysctl)\"\n"
                 "    else\n"
                 "        echo \"benchd: $node: could not drop the page cache: /proc/sys/vm/drop_caches\" \\\n"
                 "             \"is not writable by $(id -un) and sudo is not allowed\"\n"
                 "    fi\n"
                 "}\n"
                 "clear_caches() {\n");
        emit_on_every_node(c, "drop_page_cache", "drop the page cache", false, out);
        buf_puts(out, "}\n\n");
}

/* staging.require: before each trial, every node's benchd must have the
 * dataset staged where the trainers will read it, complete and without
 * errors (benchd-bind --check-dataset asks it). */
static void emit_staging_check(const struct plan *c, struct bd_buf *out)
{
        struct words w = { 0 };
        words_add_prog(&w, c->bin_dir, "benchd-bind");
        words_add(&w, "--check-dataset");
        words_add(&w, c->staging.name);
        words_add(&w, "--dataset-dir");
        words_add(&w, c->staging.destination);
        words_add(&w, "--benchd");
        words_addf(&w, "http://127.0.0.1:%d", c->benchd_port);
        buf_puts(out, "# The dataset must be staged and verified on every node (benchctl stage --system ...).\n"
                      "check_staged() {\n");
        emit_command(out, "    ", &w);
        buf_puts(out, "}\n"
                      "require_staged() {\n");
        emit_on_every_node(c, "check_staged", "find the dataset staged on every node", true, out);
        buf_puts(out, "}\n\n");
        words_release(&w);
}

/* A command as part of a line (inside $(...)): emit_command without its newline */
static void emit_inline(struct bd_buf *out, const struct words *w)
{
        emit_command(out, "", w);
        out->len--;
}

/* The prefix that runs a command in the image, once (none without one). */
static void image_prefix(const struct plan *c, struct words *w)
{
        if (runtime_is_daemon(c->container.runtime)) {
                words_add(w, c->container.runtime);
                words_add(w, "exec");
                words_add(w, RAW "\"$CONTAINER\"");
        } else
                container_exec(c, false, w);
}

/* A pre-flight check of every node: KIND_check() runs cmd, and says
 * "benchd: KIND check failed on NODE: SUBJECT<its last line>" when it
 * fails; require_KIND() runs it on every node (docker's and podman's one
 * container: here), with WHAT in the message when the nodes cannot be
 * reached. */
static void emit_node_check(const struct plan *c, const char *kind, const char *subject, const char *what,
                            const struct words *cmd, struct bd_buf *out)
{
        buf_printf(out, "%s_check() {\n"
                        "    local node=${SLURMD_NODENAME:-$(hostname)} out\n"
                        "    if ! out=$(", kind);
        emit_inline(out, cmd);
        buf_printf(out, " 2>&1); then\n"
                        "        echo \"benchd: %s check failed on $node: %s$(printf '%%s' \"$out\" | tail -n 1)\"\n"
                        "        return 1\n"
                        "    fi\n"
                        "}\n"
                        "require_%s() {\n", kind, subject, kind);
        _cleanup_free_ char *fn = xasprintf("%s_check", kind);
        if (runtime_is_daemon(c->container.runtime))
                buf_printf(out, "    %s\n", fn);
        else
                emit_on_every_node(c, fn, what, true, out);
        buf_puts(out, "}\n");
}

/* Before the first trial: the image must run the trainer on every node
 * (which node cannot, and why, instead of N failed trials), and what it
 * holds is compared with the host (benchd's version, Open MPI's major
 * version); both go into the job output and every trial's log. */
static void emit_image_check(const struct plan *c, struct bd_buf *out)
{
        struct words ex = { 0 };        /* the prefix that runs a command in the image */
        image_prefix(c, &ex);
        struct words prog = { 0 }, mpi = { 0 }, info = { 0 };
        for (size_t i = 0; i < ex.n; i++) /* each starts with the prefix */
                words_add(&prog, ex.v[i]), words_add(&mpi, ex.v[i]), words_add(&info, ex.v[i]);
        /* without the launcher's environment: the trainer's MPI_Init would
         * take srun's variables for a direct launch of one rank */
        words_add(&prog, "env");
        words_add(&prog, "-i");
        words_add(&prog, "PATH=/usr/local/bin:/usr/bin:/bin");
        words_add_prog(&prog, c->bin, c->w->program);
        words_add(&prog, "--version");
        words_add(&mpi, "mpirun");
        words_add(&mpi, "--version");
        words_add(&info, "cat");
        words_add(&info, IMAGE_INFO_PATH);

        if (streq(c->container.runtime, "charliecloud") && c->gpus > 0) {
                /* Charliecloud's way to the host's GPU driver: ch-fromhost
                 * copies its libraries into a directory image (a SquashFS
                 * image cannot take them: it says so, and no trial starts) */
                struct words fh = { 0 };
                words_add(&fh, "ch-fromhost");
                words_add(&fh, "--nvidia");
                words_add(&fh, RAW "\"$IMAGE\"");
                buf_puts(out, "# The host's GPU driver into the image on every node (ch-fromhost --nvidia: a\n"
                              "# directory image; the driver's libraries must match the node's kernel module).\n");
                emit_node_check(c, "driver", "ch-fromhost --nvidia: ", "bring the GPU driver into the image on "
                                "every node", &fh, out);
                buf_puts(out, "if ! require_driver; then\n"
                              "    echo \"benchd: image check failed: no trial started\"\n"
                              "    exit 1\n"
                              "fi\n");
                words_release(&fh);
        }
        buf_puts(out, "# The image must run the trainer on every node before the first trial.\n");
        emit_node_check(c, "image", "", "run the image on every node", &prog, out);
        buf_puts(out, "# What the image holds, against the host\n"
                      "image_info() {\n"
                      "    local version mpi host_mpi built\n"
                      "    version=$(");
        emit_inline(out, &prog);
        buf_puts(out, " 2>/dev/null | head -n 1 | awk '{ print $NF }')\n"
                      "    mpi=$(");
        emit_inline(out, &mpi);
        buf_puts(out, " 2>/dev/null | sed -n 's/.*(Open MPI) //p' | head -n 1)\n"
                      "    built=$(");
        emit_inline(out, &info);
        buf_puts(out, " 2>/dev/null | sed -n 's/.*\"build_date\":[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p')\n");
        buf_printf(out, "    host_mpi=$(%s --version 2>/dev/null | sed -n 's/.*(Open MPI) //p' | head -n 1)\n",
                   c->mpirun.command);
        buf_printf(out, "    echo \"benchd: image $IMAGE (%s): benchd ${version:-unknown}, Open MPI ${mpi:-none}, "
                        "built ${built:-unknown}\"\n", c->container.runtime);
        buf_printf(out, "    echo \"benchd: host $(hostname): benchctl %s, Open MPI ${host_mpi:-none}\"\n", c->version);
        buf_printf(out, "    if [ -n \"$version\" ] && [ \"$version\" != %s ]; then\n"
                        "        echo \"benchd: warning: the image's benchd $version is not the host's benchctl %s "
                        "(rebuild the image: benchctl image build)\"\n"
                        "    fi\n", c->version, c->version);
        buf_puts(out, "    if [ -n \"$mpi\" ] && [ -n \"$host_mpi\" ] && [ \"${mpi%%.*}\" != \"${host_mpi%%.*}\" ]; then\n"
                      "        echo \"benchd: warning: the image's Open MPI $mpi is another major version than the "
                      "host's $host_mpi\"\n"
                      "    fi\n"
                      "}\n"
                      "if ! require_image; then\n"
                      "    echo \"benchd: image check failed: no trial started\"\n"
                      "    exit 1\n"
                      "fi\n"
                      "IMAGE_INFO=$(image_info)\n"
                      "echo \"$IMAGE_INFO\"\n\n");
        words_release(&ex);
        words_release(&prog);
        words_release(&mpi);
        words_release(&info);
}

/* Another's program (not "own"): before the first trial, every node must
 * have it, in the image where there is one (which node does not, and why,
 * instead of N failed trials). */
static void emit_program_check(const struct plan *c, struct bd_buf *out)
{
        const char *prog = c->w->shape == SHAPE_PER_NODE_TORCHRUN ? "torchrun" : c->w->program;
        struct words chk = { 0 };
        image_prefix(c, &chk);
        words_add(&chk, "sh");
        words_add(&chk, "-c");
        words_add(&chk, "command -v \"$0\" || { echo \"no $0 in PATH ($PATH)\"; exit 127; }");
        words_add(&chk, prog);
        buf_printf(out, "# %s must be there%s on every node before the first trial.\n", prog,
                   c->container.on ? ", in the image," : "");
        _cleanup_free_ char *subject = xasprintf("%s%s: ", prog, c->container.on ? " in image $IMAGE" : "");
        emit_node_check(c, "program", subject, "check the program on every node", &chk, out);
        buf_puts(out, "if ! require_program; then\n"
                      "    echo \"benchd: program check failed: no trial started\"\n"
                      "    exit 1\n"
                      "fi\n");
        if (c->container.on)
                buf_printf(out, "IMAGE_INFO=\"benchd: image $IMAGE (%s), %s image, for %s\"\n"
                                "echo \"$IMAGE_INFO\"\n", c->container.runtime,
                           workload_image_for(c->w, c->container.runtime) ? "the workload's" : "the system's", prog);
        buf_putc(out, '\n');
        words_release(&chk);
}

/* Does the run use the node's GPUs?  A GPU system's, unless the workload's
 * backend key says cpu. */
static bool uses_gpus(const struct plan *c)
{
        const char *backend = json_str(c->section, "backend", NULL);
        return c->gpus > 0 && !(backend && streq(backend, "cpu"));
}

/* A line of node_check(): PATH passes test(1)'s TEST or the node fails. */
static void node_requires(struct bd_buf *out, const char *test, const char *path, const char *what)
{
        _cleanup_buf_ struct bd_buf q = BD_BUF_INIT;
        buf_shell_quote(&q, path);
        buf_printf(out, "    f=%s\n"
                        "    [ %s \"$f\" ] || { echo \"benchd: node check failed on $node: no $f (%s)\"; return 1; }\n",
                   q.s, test, what);
}

/* Before the first trial, what only the node knows: the GPUs it sees
 * against those the run uses (nvidia-smi -L, inside the job's allocation),
 * the dataset's tree (the workload's data_layout; a dataset staged on the
 * nodes is the staging check's) and the pretrained weights.  Which node
 * lacks what, instead of N failed trials. */
static void emit_node_inputs_check(const struct plan *c, struct bd_buf *out)
{
        bool gpus = uses_gpus(c), data = c->w->dataset && !c->staging.require;
        struct words files = { 0 };
        const cJSON *v;
        cJSON_ArrayForEach(v, c->section) {
                const char *path = json_str(workload_key_spec(c->w, v->string), "path", "");
                if (cJSON_IsString(v) && *v->valuestring && streq(path, "pretrained")) {
                        if (v->valuestring[0] == '/')
                                words_add(&files, v->valuestring);
                        else
                                words_addf(&files, "%s/%s", c->pretrained, v->valuestring);
                }
        }
        if (!gpus && !data && files.n == 0)
                return;
        long used = c->tenants ? c->tenants : c->ranks < c->gpus ? c->ranks : c->gpus;
        const char *what[3] = { gpus ? "its GPUs" : NULL, data ? "the dataset" : NULL,
                                files.n ? "the pretrained weights" : NULL };
        buf_puts(out, "# What only the node knows, on every node before the first trial:");
        for (size_t i = 0, k = 0; i < ARRAY_SIZE(what); i++)
                if (what[i])
                        buf_printf(out, "%s %s", k++ ? "," : "", what[i]);
        buf_printf(out, "\nnode_check() {\n"
                        "    local node=${SLURMD_NODENAME:-$(hostname)}%s%s\n", gpus ? " n" : "",
                   data || files.n ? " f" : "");
        if (gpus) {
                buf_puts(out, "    if ! command -v nvidia-smi >/dev/null; then\n"
                              "        echo \"benchd: node check failed on $node: no nvidia-smi: no GPU driver\"\n"
                              "        return 1\n"
                              "    fi\n"
                              "    n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')\n");
                buf_printf(out, "    if [ \"$n\" -lt %ld ]; then\n"
                                "        echo \"benchd: node check failed on $node: it sees $n GPU(s) (nvidia-smi -L), "
                                "the run uses %ld (%s: %ld per node)\"\n"
                                "        return 1\n"
                                "    fi\n", used, used, c->name, c->gpus);
        }
        if (data) {
                node_requires(out, "-e", c->data, "the dataset, paths.data");
                cJSON_ArrayForEach(v, json_get(c->w->spec, "data_layout")) {
                        _cleanup_free_ char *f = xasprintf("%s/%s", c->data, v->valuestring);
                        node_requires(out, "-e", f, "the dataset, paths.data");
                }
        }
        for (size_t i = 0; i < files.n; i++)
                node_requires(out, "-r", files.v[i], "the pretrained weights, paths.pretrained");
        buf_puts(out, "}\n"
                      "require_node() {\n");
        emit_on_every_node(c, "node_check", "check the nodes' GPUs and files", true, out);
        buf_puts(out, "}\n"
                      "if ! require_node; then\n"
                      "    echo \"benchd: node check failed: no trial started\"\n"
                      "    exit 1\n"
                      "fi\n\n");
        words_release(&files);
}

/* The script's opening: what it is, the sbatch header, the shell options. */
static void emit_header(const struct plan *c, struct bd_buf *out)
{
        buf_puts(out, "#!/bin/bash\n");
        if (c->tenants)
                buf_printf(out, "# benchd launch script: %s on %s, %ld tenants of one rank at once on one node, "
                                "%d round%s\n", c->w->name, c->name, c->tenants, c->trials, c->trials == 1 ? "" : "s");
        else if (c->groups.ngroups)
                buf_printf(out, "# benchd launch script: %s on %s (%ld nodes x %ld rank%s), %d group%s of nodes in %d "
                                "round%s, a round's groups at once\n", c->w->name, c->name, c->nodes, c->ranks,
                           c->ranks == 1 ? "" : "s", c->groups.ngroups, c->groups.ngroups == 1 ? "" : "s",
                           c->groups.nrounds, c->groups.nrounds == 1 ? "" : "s");
        else
                buf_printf(out, "# benchd launch script: %s on %s (%ld node%s x %ld rank%s), %d trial%s\n", c->w->name,
                           c->name, c->nodes, c->nodes == 1 ? "" : "s", c->ranks, c->ranks == 1 ? "" : "s",
                           c->trials, c->trials == 1 ? "" : "s");
        buf_printf(out, "# Rendered by benchctl %s for run %s from %s.\n", c->version, c->run_id, c->path);
        buf_printf(out, "# The resolved configuration: benchctl show %s\n", c->name);
        if (streq(c->launcher, "slurm"))
                emit_sbatch(c, out);
        buf_puts(out, "set -uo pipefail\n\n");
}

/* The run's shell variables: its id, trials, log directory, the trainers'
 * directory where the launch uses it, the image. */
static void emit_variables(const struct plan *c, const struct words *launch, struct bd_buf *out)
{
        shell_assign(out, "RUN_ID", c->run_id);
        if (c->tenants) {
                buf_printf(out, "NTENANTS=%ld\n", c->tenants);
                buf_printf(out, "NROUNDS=%d\n", c->trials);
                buf_printf(out, "NTRIALS=%ld\n", c->trials * c->tenants);
                if (streq(c->launcher, "slurm"))
                        buf_puts(out, "# each tenant's memory (MiB): the node's / NTENANTS\n"
                                      "TENANT_MEM=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) / 1024 / NTENANTS ))\n");
        } else if (c->groups.ngroups) {
                buf_printf(out, "NTRIALS=%d\n", c->groups.ngroups);
                buf_puts(out, "# each round's groups of nodes (by their places among the run's nodes), a trial each\n"
                              "ROUNDS=(");
                for (int r = 0; r < c->groups.nrounds; r++) {
                        int first, end;
                        node_groups_round(&c->groups, r, &first, &end);
                        buf_puts(out, r ? " \"" : "\"");
                        for (int k = first; k < end; k++) {
                                if (k > first)
                                        buf_putc(out, ' ');
                                node_groups_format_group(&c->groups, k, out);
                        }
                        buf_putc(out, '"');
                }
                buf_puts(out, ")\n");
                if (streq(c->launcher, "slurm"))
                        buf_puts(out, "# the nodes by their places: Slurm's allocation in order\n"
                                      "mapfile -t NODE_NAMES < <(scontrol show hostnames \"$SLURM_JOB_NODELIST\")\n");
                else {
                        buf_puts(out, "NODE_NAMES=(");
                        for (int i = 0; c->group_hosts[i]; i++) {
                                _cleanup_buf_ struct bd_buf q = BD_BUF_INIT;
                                buf_shell_quote(&q, c->group_hosts[i]);
                                buf_printf(out, "%s%s", i ? " " : "", q.s);
                        }
                        buf_puts(out, ")\n");
                }
        } else
                buf_printf(out, "NTRIALS=%d\n", c->trials);
        shell_assign(out, "LOGDIR", c->logs);
        bool uses_bin = false;
        for (size_t i = 0; i < launch->n; i++)
                uses_bin |= strstr(launch->v[i], "$BENCHD_BIN") != NULL;
        if (uses_bin)
                shell_assign(out, "BENCHD_BIN", c->bin_dir);
        if (c->container.on)
                shell_assign(out, "IMAGE", c->container.image);
        buf_putc(out, '\n');
}

/* The system's "env" for every rank, and NCCL's interface from mpirun's. */
static void emit_environment(const struct plan *c, struct bd_buf *out)
{
        const cJSON *e;
        bool any_env = false;
        cJSON_ArrayForEach(e, c->env) {
                if (cJSON_IsNull(e))
                        continue;
                if (!any_env)
                        buf_puts(out, "# Environment of every rank\n");
                any_env = true;
                _cleanup_buf_ struct bd_buf v = BD_BUF_INIT;
                env_scalar(e, &v);
                buf_printf(out, "export %s=", e->string);
                env_value(out, v.s);
                buf_putc(out, '\n');
        }
        const char *iface = c->mpirun.interface;
        if (iface && !c->env_nccl_ifname) {
                buf_puts(out, "export NCCL_SOCKET_IFNAME=");
                buf_shell_quote(out, iface);
                buf_putc(out, '\n');
                any_env = true;
        }
        if (any_env)
                buf_putc(out, '\n');
        buf_puts(out, "# Open MPI refuses to run as root unless told\n"
                      "if [ \"$(id -u)\" -eq 0 ]; then\n"
                      "    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
                      "fi\n\n");
}

/* Docker and podman: one long-lived container for all trials, started
 * here (its failure is the image check's) and removed on exit. */
static void emit_daemon_container(const struct plan *c, struct bd_buf *out)
{
        const cJSON *e;
        struct words d = { 0 };
        words_add(&d, c->container.runtime);
        words_add(&d, "run");
        words_add(&d, "-d");
        words_add(&d, "--rm");
        words_add(&d, "--name");
        words_add(&d, RAW "\"$CONTAINER\"");
        if (c->gpus > 0)
                words_add(&d, streq(c->container.runtime, "podman") ? "--device=nvidia.com/gpu=all" : "--gpus=all");
        words_add(&d, "--net=host");
        words_add(&d, "--ipc=host");
        cJSON_ArrayForEach(e, c->container.ulimits) {
                _cleanup_buf_ struct bd_buf v = BD_BUF_INIT;
                env_scalar(e, &v);
                if (!v.s || !v.s[0])
                        continue;       /* "": the runtime's own */
                words_add(&d, "--ulimit");
                words_addf(&d, "%s=%s", e->string, v.s ? v.s : "");
        }
        container_binds(c, "-v", &d);
        cJSON_ArrayForEach(e, c->env)
                if (!cJSON_IsNull(e))
                        words_add(&d, "-e"), words_add(&d, e->string);
        /* as root, the container's mpirun must be told too (passed only
         * where the script set them) */
        words_add(&d, "-e");
        words_add(&d, "OMPI_ALLOW_RUN_AS_ROOT");
        words_add(&d, "-e");
        words_add(&d, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM");
        words_add_list(&d, c->container.options);
        words_add(&d, c->container.image);
        words_add(&d, "sleep");
        words_add(&d, "infinity");
        buf_printf(out, "# One long-lived container for all trials, removed on exit\n"
                        "CONTAINER=benchd-$RUN_ID\n"
                        "trap '%s rm -f \"$CONTAINER\" >/dev/null 2>&1' EXIT\n", c->container.runtime);
        buf_puts(out, "if ! out=$(");
        emit_inline(out, &d);
        buf_puts(out, " 2>&1); then\n"
                      "    echo \"benchd: image check failed on $(hostname): cannot start a container of "
                      "image $IMAGE: $(printf '%s' \"$out\" | tail -n 1)\"\n"
                      "    echo \"benchd: image check failed: no trial started\"\n"
                      "    exit 1\n"
                      "fi\n\n");
        words_release(&d);
}

/* torch.distributed's rendezvous: rank 0's node and a port of this trial,
 * in the environment every rank gets. */
static void emit_rendezvous(const struct plan *c, struct bd_buf *out)
{
        buf_puts(out, "    export MASTER_ADDR MASTER_PORT\n");
        if (streq(c->launcher, "slurm"))
                buf_puts(out, "    MASTER_ADDR=$(scontrol show node \"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | "
                              "head -n 1)\" | sed -n 's/.*NodeAddr=\\([^ ]*\\).*/\\1/p')\n");
        else if (streq(c->launcher, "local") || (!c->mpirun.hostfile && cJSON_GetArraySize(c->mpirun.hosts) == 0))
                buf_puts(out, "    MASTER_ADDR=127.0.0.1\n");
        else if (c->mpirun.hostfile) {
                buf_puts(out, "    MASTER_ADDR=$(awk 'NF && $1 !~ /^#/ { print $1; exit }' ");
                buf_shell_quote(out, c->mpirun.hostfile);
                buf_puts(out, ")\n");
        } else {
                buf_puts(out, "    MASTER_ADDR=");
                buf_shell_quote(out, cJSON_GetArrayItem(c->mpirun.hosts, 0)->valuestring);
                buf_putc(out, '\n');
        }
        buf_puts(out, "    MASTER_PORT=$((20000 + RANDOM % 40000))\n");
}

/* run_trial TRIAL SEED: the pre-trial checks, the timed launch and the
 * MLPerf RESULT line. */
static void emit_run_trial(const struct plan *c, const struct words *launch, struct bd_buf *out)
{
        buf_printf(out, "run_trial() {\n"
                        "    local trial=$1 seed=$2%s start end rc\n",
                   c->tenants ? " tenant=$3" : c->groups.ngroups ? " group=$3 GROUP_NODES=0 GROUP_LIST= GROUP_HOSTS= k" : "");
        if (c->groups.ngroups)
                buf_printf(out, "    for k in ${group//+/ }; do\n"
                                "        GROUP_NODES=$((GROUP_NODES + 1))\n"
                                "        GROUP_LIST+=${GROUP_LIST:+,}${NODE_NAMES[k - 1]}\n"
                                "        GROUP_HOSTS+=${GROUP_HOSTS:+,}${NODE_NAMES[k - 1]}:%ld\n"
                                "    done\n"
                                "    local GROUP_RANKS=$((GROUP_NODES * %ld))\n", c->ranks, c->ranks);
        buf_printf(out, "    echo \"benchd: run $RUN_ID, system %s, workload %s, trial $trial of $NTRIALS, %sseed $seed\"\n",
                   c->name, c->w->name, c->tenants ? "tenant $tenant of $NTENANTS, " : c->groups.ngroups ? "nodes $group ($GROUP_LIST), " : "");
        if (c->container.on)
                buf_puts(out, "    echo \"$IMAGE_INFO\"\n");
        if (c->tenants && c->gpus > 0 && !streq(c->launcher, "slurm"))
                buf_puts(out, "    export CUDA_VISIBLE_DEVICES=$tenant   # its GPU alone\n");
        /* with tenants, the staging check and the cache drop are the round's
         * (emit_tenant_loop()), not each tenant's */
        if (c->staging.require && !c->tenants && !c->groups.ngroups)
                buf_puts(out, "    require_staged || { echo \"benchd: the dataset is not staged and verified on every "
                              "node: trial $trial not started\" >&2; return 1; }\n");
        if (c->clear_caches && !c->tenants && !c->groups.ngroups)
                buf_puts(out, "    clear_caches\n");
        if (c->w->rendezvous || c->per_node)
                emit_rendezvous(c, out);
        buf_puts(out, "    start=$(date +%s)\n"
                      "    echo \"STARTING TIMING RUN AT $(date -d \"@$start\" '+%Y-%m-%d %r')\"\n");
        emit_command(out, "    ", launch);
        buf_puts(out, "    rc=$?\n"
                      "    end=$(date +%s)\n"
                      "    echo \"ENDING TIMING RUN AT $(date -d \"@$end\" '+%Y-%m-%d %r')\"\n");
        buf_printf(out, "    echo \"RESULT,%s,,$((end - start)),%s,$(date -d \"@$start\" '+%%Y-%%m-%%d %%r')\"\n",
                   c->w->result_name, c->organization);
        buf_puts(out, "    return \"$rc\"\n"
                      "}\n\n");
}

/* A trial's seed and log, and the marker of its start benchctl follows
 * (run.h), at the indent of its loop. */
static void emit_trial_start(const struct plan *c, const char *indent, struct bd_buf *out)
{
        if (c->seed >= 0)
                buf_printf(out, "%sseed=$((%ld + trial))\n", indent, c->seed);
        else
                buf_printf(out, "%sseed=$(( (RANDOM << 15) | RANDOM ))\n", indent);
        buf_printf(out, "%slog=\"$LOGDIR/${RUN_ID}_${trial}.log\"\n"
                        "%secho \"benchd: trial $trial/$NTRIALS started at $(date +%%s), log $log\"\n", indent, indent);
}

/* The trials, one after another, each with its seed and log, and the
 * markers benchctl follows (run.h). */
static void emit_trial_loop(const struct plan *c, struct bd_buf *out)
{
        buf_puts(out, "failed=0\n"
                      "for trial in $(seq 1 \"$NTRIALS\"); do\n");
        emit_trial_start(c, "    ", out);
        buf_puts(out, "    run_trial \"$trial\" \"$seed\" > \"$log\" 2>&1\n"
                      "    rc=$?\n"
                      "    echo \"benchd: trial $trial/$NTRIALS ended at $(date +%s) with exit status $rc\"\n"
                      "    [ \"$rc\" -eq 0 ] || failed=$((failed + 1))\n"
                      "done\n"
                      "echo \"benchd: $((NTRIALS - failed)) of $NTRIALS trials succeeded\"\n"
                      "[ \"$failed\" -eq 0 ]\n");
}

/* Tenants or node groups: round after round, the round's tenants (or
 * groups) started together, each a trial with its seed, log and markers,
 * the round over when all ended. */
static void emit_round_loop(const struct plan *c, struct bd_buf *out)
{
        bool groups = c->groups.ngroups > 0;
        /* what a round holds, its member's name, and its trial's number */
        const char *members = groups ? "${ROUNDS[round - 1]}" : "$(seq 0 $((NTENANTS - 1)))";
        const char *member = groups ? "group" : "tenant";
        const char *trial = groups ? "$((trial + 1))" : "$(( (round - 1) * NTENANTS + tenant + 1 ))";
        buf_printf(out, "failed=0\n"
                        "trial=0\n"
                        "for round in $(seq 1 %s); do\n", groups ? "\"${#ROUNDS[@]}\"" : "\"$NROUNDS\"");
        if (c->staging.require)
                buf_printf(out, "    require_staged || {\n"
                                "        echo \"benchd: the dataset is not staged and verified on every node: round $round "
                                "not started\" >&2\n"
                                "        for %s in %s; do trial=%s; failed=$((failed + 1)); done\n"
                                "        continue\n"
                                "    }\n", member, members, trial);
        if (c->clear_caches)
                buf_puts(out, "    clear_caches\n");
        buf_printf(out, "    pids=()\n"
                        "    for %s in %s; do\n"
                        "        trial=%s\n", member, members, trial);
        emit_trial_start(c, "        ", out);
        buf_printf(out, "        {\n"
                        "            run_trial \"$trial\" \"$seed\" \"$%s\" > \"$log\" 2>&1\n"
                        "            rc=$?\n"
                        "            echo \"benchd: trial $trial/$NTRIALS ended at $(date +%%s) with exit status $rc\"\n"
                        "            exit \"$rc\"\n"
                        "        } &\n"
                        "        pids+=(\"$!\")\n"
                        "    done\n"
                        "    for pid in \"${pids[@]}\"; do\n"
                        "        wait \"$pid\" || failed=$((failed + 1))\n"
                        "    done\n"
                        "done\n"
                        "echo \"benchd: $((NTRIALS - failed)) of $NTRIALS trials succeeded\"\n"
                        "[ \"$failed\" -eq 0 ]\n", member);
}

static void emit_script(const struct plan *c, const struct words *launch, struct bd_buf *out)
{
        emit_header(c, out);
        emit_variables(c, launch, out);
        emit_environment(c, out);
        buf_puts(out, "mkdir -p \"$LOGDIR\" || { echo \"benchd: cannot create log directory $LOGDIR\" >&2; exit 1; }\n\n");
        if (c->clear_caches)
                emit_cache_drop(c, out);
        if (c->staging.require)
                emit_staging_check(c, out);
        emit_node_inputs_check(c, out);
        if (runtime_is_daemon(c->container.runtime))
                emit_daemon_container(c, out);
        if (!c->w->own)
                emit_program_check(c, out);
        else if (c->container.on)
                emit_image_check(c, out);
        emit_run_trial(c, launch, out);
        if (c->tenants || c->groups.ngroups)
                emit_round_loop(c, out);
        else
                emit_trial_loop(c, out);
}

/* benchd-bind's -r of each local rank, from the system's declared topology */
static int plan_binding(struct plan *c, const cJSON *sys, long n, struct bd_err *err)
{
        struct bd_topo topo;
        int r = system_topo(sys, &topo, err);
        if (r < 0)
                return r;
        _cleanup_free_ struct bd_rank_bind *ranks = NULL;
        r = bind_plan(&topo, (int)n, &ranks, err);
        if (r < 0)
                return r;
        c->bind.specs = xcalloc((size_t)n + 1, sizeof(char *));
        c->bind.nspecs = n;
        for (long i = 0; i < n; i++) {
                _cleanup_buf_ struct bd_buf spec = BD_BUF_INIT;
                cpuset_format(&ranks[i].cpus, &spec);
                buf_printf(&spec, ":%d", ranks[i].numa);
                /* benchd-bind points UCX at an InfiniBand or RoCE device,
                 * libfabric (FI_EFA_IFACE) at an EFA one */
                if (ranks[i].nic >= 0 && bd_nic_kind_rdma(topo.nics[ranks[i].nic].kind))
                        buf_printf(&spec, ":%s%s", topo.nics[ranks[i].nic].name,
                                   topo.nics[ranks[i].nic].kind == NIC_EFA ? "/efa" : "");
                c->bind.specs[i] = TAKE_PTR(spec.s);
        }
        return 0;
}

static void plan_release(struct plan *c)
{
        free(c->data);
        free(c->logs);
        free(c->pretrained);
        free(c->bin_dir);
        free(c->container.image);
        free(c->mpirun.hostfile);
        node_groups_release(&c->groups);
        strv_free(c->group_hosts);
        cJSON_Delete(c->env_owned);
        for (long i = 0; c->bind.specs && i < c->bind.nspecs; i++)
                free(c->bind.specs[i]);
        free(c->bind.specs);
}

/* Reads everything the script needs from the system and the options, once. */
/* The keys that reach the program in an environment variable ("env": NAME),
 * with their values, under the system's own env (which wins), as the
 * workload's env is. */
static void key_env(struct plan *c)
{
        const cJSON *k;
        cJSON *add = NULL;
        cJSON_ArrayForEach(k, json_get(c->w->spec, "keys")) {
                const char *name = json_str(k, "env", NULL);
                const cJSON *v = json_get(c->section, k->string);
                if (!name || !v || cJSON_IsNull(v))
                        continue;
                _cleanup_buf_ struct bd_buf val = BD_BUF_INIT;
                if (cJSON_IsArray(v)) {
                        const cJSON *e;
                        cJSON_ArrayForEach(e, v) {
                                if (val.len)
                                        buf_putc(&val, ',');
                                env_scalar(e, &val);
                        }
                } else
                        env_scalar(v, &val);
                if (!add)
                        add = cJSON_CreateObject();
                cJSON_AddStringToObject(add, name, val.s ? val.s : "");
        }
        if (!add)
                return;
        if (c->env)
                json_overlay(add, c->env);
        cJSON_Delete(c->env_owned);
        c->env_owned = add;
        c->env = add;
}

static int plan_fill(const struct bd_system *s, const struct render_opts *o, struct plan *c, struct bd_err *err)
{
        const cJSON *j = s->json;
        *c = (struct plan){ .name = s->name, .path = s->path, .run_id = o->run_id, .version = o->version };
        if (!(c->w = workload_lookup(o->workload, err)))
                return -ENOENT;
        c->section = sys_get(j, c->w->section);
        c->trials = o->trials > 0 ? o->trials : (int)sys_int(j, "trials");
        c->launcher = sys_str(j, "launcher");
        c->organization = sys_str(j, "organization");
        c->nodes = sys_int(j, "nodes");
        c->ranks = sys_int(j, "ranks_per_node");
        c->gpus = sys_int(j, "gpus_per_node");
        c->tenants = render_tenants(s, o->workload, &c->tenant_cpus, err);
        if (c->tenants < 0)
                return (int)c->tenants;
        if (c->tenants)
                c->nodes = c->ranks = 1;
        int r = render_groups(s, o->workload, &c->groups, &c->group_hosts, err);
        if (r < 0)
                return r;
        if (c->groups.ngroups)
                c->trials = c->groups.ngroups;
        c->bench = json_int(c->section, "benchmark_steps", 0) > 0;
        c->per_node = c->w->shape != SHAPE_PER_RANK;
        /* a schedule's step past the end ("within"): it never applies (a
         * document's own schedule may hold one: said, not refused) */
        const cJSON *wspec;
        cJSON_ArrayForEach(wspec, json_get(c->w->spec, "keys")) {
                const char *within = json_str(wspec, "within", NULL);
                const cJSON *end = within ? json_get(c->section, within) : NULL, *e;
                if (!o->warnings || !cJSON_IsNumber(end))
                        continue;
                cJSON_ArrayForEach(e, json_get(c->section, wspec->string))
                        if (cJSON_IsNumber(e) && e->valuedouble > end->valuedouble)
                                buf_printf(o->warnings, "%s: '%s.%s': %g is after the last ('%s.%s' %g): it never "
                                           "applies\n", s->name, c->w->section, wspec->string, e->valuedouble,
                                           c->w->section, within, end->valuedouble);
        }
        /* a batch of all ranks ("multiple_of": "ranks"): each rank its share */
        const cJSON *spec;
        cJSON_ArrayForEach(spec, json_get(c->w->spec, "keys")) {
                const cJSON *v = json_get(c->section, spec->string);
                long n = c->nodes * c->ranks;
                if (streq(json_str(spec, "multiple_of", ""), "ranks") && cJSON_IsNumber(v) && n > 0 &&
                    (long)v->valuedouble % n != 0)
                        return bd_err_set(err, -EINVAL, "%s: '%s.%s' (%ld) is not a multiple of the %ld ranks "
                                          "(nodes x ranks_per_node): each rank takes an equal share", s->path,
                                          c->w->section, spec->string, (long)v->valuedouble, n);
        }
        c->writes_logs = renders_fill(c, "logdir") ||
                         (!c->w->own && workload_command_names(c->w, "result"));
        const cJSON *v;
        cJSON_ArrayForEach(v, c->section) {
                const char *path = json_str(workload_key_spec(c->w, v->string), "path", "");
                if (!c->pretrained_file && cJSON_IsString(v) && streq(path, "pretrained"))
                        c->pretrained_file = v->valuestring;
                if (cJSON_IsString(v) && streq(path, "logs"))
                        c->writes_logs = true;
        }
        c->seed = json_int(c->section, "seed", -1);
        c->staging.require = sys_bool(j, "staging.require");
        c->staging.name = sys_str(j, "staging.name");
        c->staging.destination = sys_str(j, "staging.destination");
        c->data = expand_home(c->staging.require ? c->staging.destination : sys_str(j, "paths.data"));
        c->logs = expand_home(sys_str(j, "paths.logs"));
        c->pretrained = expand_home(sys_str(j, "paths.pretrained"));
        c->bin_dir = host_bin_dir(s, o);
        c->env = sys_get(j, "env");
        if (cJSON_GetArraySize(json_get(c->w->spec, "env")) > 0) {
                /* what the workload's program wants, the system's own winning */
                c->env_owned = cJSON_Duplicate(json_get(c->w->spec, "env"), true);
                if (c->env)
                        json_overlay(c->env_owned, c->env);
                c->env = c->env_owned;
        }
        key_env(c);
        c->env_nccl_ifname = json_get(c->env, "NCCL_SOCKET_IFNAME") != NULL;
        c->clear_caches = sys_bool(j, "clear_caches");
        c->benchd_port = (int)sys_num(j, "benchd.port");
        c->container.runtime = sys_str(j, "container.runtime");
        c->container.on = !streq(c->container.runtime, "none");
        /* the workload's own image for this runtime, else the system's */
        const char *image = c->container.on ? workload_image_for(c->w, c->container.runtime) : NULL;
        c->container.image = c->container.on ? expand_home(image ? image : sys_str(j, "container.image")) : NULL;
        c->workload_image = image != NULL;
        c->container.bin_dir = sys_str(j, "container.bin_dir");
        c->container.options = sys_get(j, "container.options");
        c->container.binds = sys_get(j, "container.binds");
        c->container.ulimits = sys_get(j, "container.ulimits");
        c->bin = c->container.on ? c->container.bin_dir : "$BENCHD_BIN";
        c->mpirun.command = sys_str(j, "mpirun.command");
        c->mpirun.bind_to = sys_str(j, "mpirun.bind_to");
        c->mpirun.map_by = sys_str(j, "mpirun.map_by");
        c->mpirun.interface = sys_str(j, "mpirun.interface");
        const char *hostfile = sys_str(j, "mpirun.hostfile");
        c->mpirun.hostfile = hostfile ? expand_home(hostfile) : NULL;
        c->mpirun.hosts = sys_get(j, "mpirun.hosts");
        c->mpirun.mca = sys_get(j, "mpirun.mca");
        c->mpirun.extra_options = sys_get(j, "mpirun.extra_options");
        c->mpirun.tag_output = sys_bool(j, "mpirun.tag_output");
        c->mpirun.mca_single_copy = sys_get(j, "mpirun.mca.btl_vader_single_copy_mechanism") != NULL;
        c->mpirun.mca_tcp_if = sys_get(j, "mpirun.mca.btl_tcp_if_include") != NULL;
        c->slurm.srun = streq(sys_str(j, "slurm.launch"), "srun");
        c->slurm.exclusive = sys_bool(j, "slurm.exclusive");
        c->slurm.mpi = sys_str(j, "slurm.mpi");
        c->slurm.job_name = sys_str(j, "slurm.job_name");
        c->slurm.mem = sys_str(j, "slurm.mem");
        c->slurm.time_limit = sys_str(j, "slurm.time_limit");
        c->slurm.partition = sys_str(j, "slurm.partition");
        c->slurm.account = sys_str(j, "slurm.account");
        c->slurm.qos = sys_str(j, "slurm.qos");
        c->slurm.extra_options = sys_get(j, "slurm.extra_options");
        c->bind.on = streq(sys_str(j, "binding.policy"), "auto");
        c->bind.ask_benchd = streq(sys_str(j, "binding.source"), "auto");
        if (c->tenants) {
                /* always confined: beside its GPU (the plan of as many ranks),
                 * or a share of the node's CPUs, measured where it runs */
                c->bind.on = true;
                return c->gpus > 0 ? plan_binding(c, j, c->tenants, err) : 0;
        }
        return c->bind.on ? plan_binding(c, j, c->ranks, err) : 0;
}

long render_tenants(const struct bd_system *s, const char *workload, long *ret_cpus, struct bd_err *err)
{
        const cJSON *j = s->json;
        const char *t = sys_str(j, "tenants");
        if (!t || streq(t, "off"))
                return 0;
        long gpus = sys_int(j, "gpus_per_node"), n = 0;
        long cpus = sys_int(j, "cpu.sockets") * sys_int(j, "cpu.cores_per_socket") * sys_int(j, "cpu.threads_per_core");
        const struct workload *w = workload_lookup(workload, err);
        if (!w)
                return -ENOENT;
        if (streq(t, "per-gpu")) {
                if (gpus == 0)
                        return bd_err_set(err, -EINVAL, "%s: 'tenants' per-gpu: the system has no GPUs "
                                          "(gpus_per_node 0): give a number of tenants", s->path);
                n = gpus;
        } else if (str_parse_long(t, &n) < 0 || n < 1)
                return bd_err_set(err, -EINVAL, "%s: 'tenants' '%s': off, per-gpu or a number", s->path, t);
        if (gpus > 0 && n > gpus)
                return bd_err_set(err, -EINVAL, "%s: 'tenants' %ld: more tenants than the node's %ld GPUs (one GPU "
                                  "each)", s->path, n, gpus);
        if (gpus == 0 && n > cpus)
                return bd_err_set(err, -EINVAL, "%s: 'tenants' %ld: more tenants than the node's %ld CPUs (cpu: "
                                  "sockets x cores_per_socket x threads_per_core)", s->path, n, cpus);
        if (w->shape != SHAPE_PER_RANK)
                return bd_err_set(err, -EINVAL, "%s: 'tenants' %ld: workload %s starts its ranks itself, one "
                                  "process per node (launch.shape): tenants are single-rank runs", s->path, n,
                                  w->name);
        if (runtime_is_daemon(sys_str(j, "container.runtime")))
                return bd_err_set(err, -EINVAL, "%s: 'tenants' %ld: container runtime %s runs every rank in one "
                                  "container: tenants need their own (apptainer, singularity, charliecloud) or "
                                  "none", s->path, n, sys_str(j, "container.runtime"));
        if (ret_cpus)
                *ret_cpus = cpus / n > 0 ? cpus / n : 1;
        return n;
}

static void hosts_push(char ***v, size_t *n, const char *s)
{
        *v = xrealloc(*v, (*n + 2) * sizeof(char *));
        (*v)[(*n)++] = xstrdup(s);
        (*v)[*n] = NULL;
}

int render_groups(const struct bd_system *s, const char *workload, struct node_groups *g, char ***ret_hosts,
                  struct bd_err *err)
{
        const cJSON *j = s->json;
        const char *spec = sys_str(j, "node_groups");
        long nodes = sys_int(j, "nodes");
        struct bd_err e;
        if (ret_hosts)
                *ret_hosts = NULL;
        if (node_groups_parse(spec, nodes, g, &e) < 0)
                return bd_err_set(err, -EINVAL, "%s: 'node_groups' %s (nodes: %ld)", s->path, e.msg, nodes);
        if (!g->ngroups)
                return 0;
        const struct workload *w = workload_lookup(workload, err);
        const char *t = sys_str(j, "tenants");
        int r = 0;
        if (!w)
                r = -ENOENT;
        else if (t && !streq(t, "off"))
                r = bd_err_set(err, -EINVAL, "%s: 'node_groups' with 'tenants' %s: a trial is a group of nodes or a "
                               "tenant, not both", s->path, t);
        else if (w->shape != SHAPE_PER_RANK)
                r = bd_err_set(err, -EINVAL, "%s: 'node_groups': workload %s starts its ranks itself, one process per "
                               "node (launch.shape): groups launch ranks", s->path, w->name);
        else if (runtime_is_daemon(sys_str(j, "container.runtime")))
                r = bd_err_set(err, -EINVAL, "%s: 'node_groups': container runtime %s runs every rank in one container "
                               "for the whole job: groups need their own (apptainer, singularity, charliecloud) or none",
                               s->path, sys_str(j, "container.runtime"));
        else if (!streq(sys_str(j, "launcher"), "slurm")) {
                /* mpirun's -H: the nodes by their places */
                char **hosts = NULL;
                size_t n = 0;
                const cJSON *e2;
                const char *hostfile = sys_str(j, "mpirun.hostfile");
                if (cJSON_GetArraySize(sys_get(j, "mpirun.hosts")) > 0)
                        cJSON_ArrayForEach(e2, sys_get(j, "mpirun.hosts"))
                                hosts_push(&hosts, &n, e2->valuestring);
                else if (hostfile && !streq(sys_str(j, "launcher"), "local")) {
                        _cleanup_free_ char *path = expand_home(hostfile);
                        if ((r = hostfile_read(path, &hosts, err)) == 0)
                                while (hosts[n])
                                        n++;
                } else
                        hosts_push(&hosts, &n, "localhost");
                if (r == 0 && (long)n < g->largest)
                        r = bd_err_set(err, -EINVAL, "%s: 'node_groups' names node %d, and %s names %zu", s->path,
                                       g->largest, hostfile && !cJSON_GetArraySize(sys_get(j, "mpirun.hosts")) ?
                                       "mpirun.hostfile" : "mpirun.hosts", n);
                if (r == 0 && ret_hosts)
                        *ret_hosts = hosts;
                else
                        strv_free(hosts);
        }
        if (r < 0)
                node_groups_release(g);
        return r;
}

int render_script(const struct bd_system *s, const struct render_opts *o, struct bd_buf *out, struct bd_err *err)
{
        _cleanup_(plan_release) struct plan c = { 0 };
        int r = plan_fill(s, o, &c, err);
        if (r < 0)
                return r;
        struct words launch = { 0 };
        launch_command(&c, &launch);
        emit_script(&c, &launch, out);
        words_release(&launch);
        return 0;
}

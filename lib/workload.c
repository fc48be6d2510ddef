/* workload.c: the workloads: their files read, resolved, checked, and the
 * checks of a section that only C can make. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "json.h"
#include "macro.h"
#include "schema.h"
#include "strutil.h"
#include "workload.h"

#define MAX_DEPTH 8
/* the layer of the bundled files: below every directory of the path */
#define BUNDLED ((size_t)1 << 30)

/* ---- what only C checks, named by a file's "checks" ---- */

/* An evaluation after the last epoch would never run (the run would end
 * aborted).  Keys a null removed are the trainer's to choose. */
static int ssd_check(const cJSON *sec, const char *name, const char *label, struct bd_err *err)
{
        const cJSON *ep = json_get(sec, "epochs");
        if (!cJSON_IsNumber(ep))
                return 0;
        long epochs = (long)ep->valuedouble;
        const cJSON *e;
        cJSON_ArrayForEach(e, json_get(sec, "eval_epochs"))
                if (e->valuedouble > (double)epochs)
                        return bd_err_set(err, -EINVAL, "%s: '%s.eval_epochs': epoch %g is beyond '%s.epochs' (%ld)",
                                          label, name, e->valuedouble, name, epochs);
        return 0;
}

/* The absolute warmup must not start below zero; evaluations after the
 * last iteration would never run. */
static int maskrcnn_check(const cJSON *sec, const char *name, const char *label, struct bd_err *err)
{
        const cJSON *m = json_get(sec, "warmup_method"), *lr = json_get(sec, "lr");
        const cJSON *f = json_get(sec, "warmup_factor"), *wi = json_get(sec, "warmup_iters");
        if (cJSON_IsString(m) && streq(m->valuestring, "mlperf_linear") && cJSON_IsNumber(lr) && cJSON_IsNumber(f) &&
            cJSON_IsNumber(wi) && wi->valuedouble * f->valuedouble > lr->valuedouble * (1 + 1e-9))
                return bd_err_set(err, -EINVAL,
                                  "%s: '%s.warmup_method' mlperf_linear: '%s.warmup_iters' x '%s.warmup_factor' (%g) "
                                  "exceeds '%s.lr' (%g): the learning rate would start negative", label, name, name,
                                  name, wi->valuedouble * f->valuedouble, name, lr->valuedouble);
        const cJSON *mi = json_get(sec, "max_iter"), *e;
        if (cJSON_IsNumber(mi))
                cJSON_ArrayForEach(e, json_get(sec, "eval_iters"))
                        if (e->valuedouble > mi->valuedouble)
                                return bd_err_set(err, -EINVAL,
                                                  "%s: '%s.eval_iters': iteration %g is beyond '%s.max_iter' (%g)",
                                                  label, name, e->valuedouble, name, mi->valuedouble);
        return 0;
}

static int allreduce_check(const cJSON *sec, const char *name, const char *label, struct bd_err *err)
{
        if (json_int(sec, "min_bytes", 0) > json_int(sec, "max_bytes", LONG_MAX))
                return bd_err_set(err, -EINVAL, "%s: '%s.min_bytes' is larger than '%s.max_bytes'", label, name, name);
        return 0;
}

static const struct {
        const char *name;
        int (*fn)(const cJSON *section, const char *name, const char *label, struct bd_err *err);
} c_checks[] = {
        { "ssd", ssd_check },
        { "maskrcnn", maskrcnn_check },
        { "allreduce", allreduce_check },
        { NULL, NULL },
};

/* benchd's own programs, and whether configure built them */
#ifdef BUILD_SSD
#define SSD_BUILT true
#else
#define SSD_BUILT false
#endif
#ifdef BUILD_MASKRCNN
#define MASKRCNN_BUILT true
#else
#define MASKRCNN_BUILT false
#endif
#ifdef BUILD_ALLREDUCE
#define ALLREDUCE_BUILT true
#else
#define ALLREDUCE_BUILT false
#endif

static const struct {
        const char *program;
        bool built;
} own_programs[] = {
        { "benchd-ssd", SSD_BUILT },
        { "benchd-maskrcnn", MASKRCNN_BUILT },
        { "benchd-allreduce", ALLREDUCE_BUILT },
        { "benchd-tv-maskrcnn", true },         /* a Python script: nothing to build */
        { NULL, false },
};

/* ---- the fields of a file ---- */

enum field_type { F_STRING, F_PATTERN, F_BOOL, F_NUMBER, F_OBJECT, F_STRING_LIST, F_ANY, F_COMMAND, F_KEYS, F_STRING_OR_NULL,
                  F_ENV };

struct field {
        const char *name;
        enum field_type type;
        const struct field *children;   /* F_OBJECT */
        const char *const *choices;     /* F_STRING */
};

static const char *const result_kinds[] = { "time-to-train", "bus-bandwidth", "throughput", NULL };
static const char *const result_reads[] = { "mllog", "regex", "json", "dllogger", NULL };
static const char *const key_types[] = { "string", "int", "number", "bool", "string-list", "int-list", "number-list",
                                         "object", NULL };
static const enum schema_type key_schema_types[] = { S_STRING, S_INT, S_NUMBER, S_BOOL, S_STRING_LIST, S_INT_LIST,
                                                     S_NUMBER_LIST, S_OBJECT };
static const char *const key_paths[] = { "data", "logs", "pretrained", "file", NULL };

static const struct field mlperf_fields[] = {
        { "benchmark", F_STRING, NULL, NULL },
        { "result", F_STRING, NULL, NULL },
        { NULL, 0, NULL, NULL },
};

/* What a reader takes from a log or a result file (workload.h: WV_*). */
static const struct field match_fields[] = {
        { "step", F_PATTERN, NULL, NULL },
        { "loss", F_PATTERN, NULL, NULL },
        { "throughput", F_PATTERN, NULL, NULL },
        { "accuracy", F_PATTERN, NULL, NULL },
        { "accuracy_segm", F_PATTERN, NULL, NULL },
        { NULL, 0, NULL, NULL },
};

static const struct field scale_fields[] = {
        { "throughput", F_NUMBER, NULL, NULL },
        { "accuracy", F_NUMBER, NULL, NULL },
        { "accuracy_segm", F_NUMBER, NULL, NULL },
        { NULL, 0, NULL, NULL },
};

static const struct field result_fields[] = {
        { "kind", F_STRING, NULL, result_kinds },
        { "read", F_STRING, NULL, result_reads },
        { "targets", F_STRING_LIST, NULL, NULL },
        { "unit", F_STRING, NULL, NULL },
        { "higher_is_better", F_BOOL, NULL, NULL },
        { "match", F_OBJECT, match_fields, NULL },
        { "scale", F_OBJECT, scale_fields, NULL },
        { "skip", F_NUMBER, NULL, NULL },
        { "file", F_STRING, NULL, NULL },
        { NULL, 0, NULL, NULL },
};

static const char *const launch_shapes[] = { "per-rank", "per-node", NULL };
static const char *const launch_launchers[] = { "torch.distributed.launch", "torchrun", NULL };
static const struct field launch_fields[] = {
        { "shape", F_STRING, NULL, launch_shapes },
        { "rendezvous", F_BOOL, NULL, NULL },
        { "launcher", F_STRING, NULL, launch_launchers },
        { NULL, 0, NULL, NULL },
};

const char *const workload_image_names[_WI_MAX] = { "docker", "podman", "singularity", "apptainer", "charliecloud" };

/* "image": its own image per container runtime (workload_image_names) */
static const struct field image_fields[] = {
        { "docker", F_STRING, NULL, NULL },
        { "podman", F_STRING, NULL, NULL },
        { "singularity", F_STRING, NULL, NULL },
        { "apptainer", F_STRING, NULL, NULL },
        { "charliecloud", F_STRING, NULL, NULL },
        { NULL, 0, NULL, NULL },
};

/* How a sweep moves the learning rate and the schedule with the global
 * batch (cmd-sweep.c reads them; checked here). */
static const char *const lr_rules[] = { "linear", "sqrt", "trainer", "none", NULL };
static const char *const warmup_rules[] = { "inverse", "none", NULL };
static const struct field scaling_lr_fields[] = {
        { "key", F_STRING, NULL, NULL },
        { "rule", F_STRING, NULL, lr_rules },
        { "base_batch", F_NUMBER, NULL, NULL },
        { "help", F_STRING, NULL, NULL },
        { NULL, 0, NULL, NULL },
};
static const struct field scaling_increment_fields[] = {
        { "key", F_STRING, NULL, NULL },
        { "when", F_STRING, NULL, NULL },
        { "is", F_STRING, NULL, NULL },
        { NULL, 0, NULL, NULL },
};
static const struct field scaling_warmup_fields[] = {
        { "key", F_STRING, NULL, NULL },
        { "rule", F_STRING, NULL, warmup_rules },
        { "increment", F_OBJECT, scaling_increment_fields, NULL },
        { NULL, 0, NULL, NULL },
};
static const struct field scaling_fields[] = {
        { "lr", F_OBJECT, scaling_lr_fields, NULL },
        { "warmup", F_OBJECT, scaling_warmup_fields, NULL },
        { "schedule", F_STRING_LIST, NULL, NULL },
        { NULL, 0, NULL, NULL },
};

/* what a key's value must be a multiple of: the run's ranks (a batch of
 * all ranks that each takes its share of) */
static const char *const multiples[] = { "ranks", NULL };

static const struct field key_fields[] = {
        { "type", F_STRING, NULL, key_types },
        { "default", F_ANY, NULL, NULL },
        { "min", F_NUMBER, NULL, NULL },
        { "max", F_NUMBER, NULL, NULL },
        { "choices", F_STRING_LIST, NULL, NULL },
        { "help", F_STRING, NULL, NULL },
        { "arg", F_STRING_OR_NULL, NULL, NULL },
        { "flag", F_BOOL, NULL, NULL },
        { "when", F_STRING, NULL, NULL },
        { "path", F_STRING, NULL, key_paths },
        { "override", F_STRING, NULL, NULL },
        { "env", F_STRING, NULL, NULL },
        { "multiple_of", F_STRING, NULL, multiples },
        { "ascending", F_BOOL, NULL, NULL },
        { "within", F_STRING, NULL, NULL },
        { "keys", F_KEYS, NULL, NULL },
        { NULL, 0, NULL, NULL },
};

static const struct field top_fields[] = {
        { "extends", F_STRING, NULL, NULL },
        { "abstract", F_BOOL, NULL, NULL },
        { "title", F_STRING, NULL, NULL },
        { "description", F_STRING, NULL, NULL },
        { "help", F_STRING, NULL, NULL },
        { "program", F_STRING, NULL, NULL },
        { "own", F_BOOL, NULL, NULL },
        { "checks", F_STRING, NULL, NULL },
        { "section", F_STRING, NULL, NULL },
        { "mlperf", F_OBJECT, mlperf_fields, NULL },
        { "result", F_OBJECT, result_fields, NULL },
        { "command", F_COMMAND, NULL, NULL },
        { "launch", F_OBJECT, launch_fields, NULL },
        { "image", F_OBJECT, image_fields, NULL },
        { "scaling", F_OBJECT, scaling_fields, NULL },
        { "data_layout", F_STRING_LIST, NULL, NULL },
        { "env", F_ENV, NULL, NULL },
        { "keys", F_KEYS, NULL, NULL },
        { NULL, 0, NULL, NULL },
};

/* A file being checked: its label and its stripped text, for lines. */
struct src {
        const char *label;
        const char *text;
};

_printf_(4, 5)
static int fail(struct bd_err *err, const struct src *s, const char *key, const char *fmt, ...)
{
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        /* the line of the key, else of the nearest of its parents there */
        int line = 0;
        _cleanup_free_ char *k = key ? xstrdup(key) : NULL;
        while (s->text && k && (line = json_key_line(s->text, k)) == 0 && strrchr(k, '.'))
                *strrchr(k, '.') = '\0';
        if (line > 0)
                return bd_err_set(err, -EINVAL, "%s:%d: '%s': %s", s->label, line, key, msg);
        if (key)
                return bd_err_set(err, -EINVAL, "%s: '%s': %s", s->label, key, msg);
        return bd_err_set(err, -EINVAL, "%s: %s", s->label, msg);
}

static bool in_list(const char *const *list, const char *s)
{
        for (; *list; list++)
                if (streq(*list, s))
                        return true;
        return false;
}

static void list_words(struct bd_buf *b, const char *const *list)
{
        for (const char *const *p = list; *p; p++)
                buf_printf(b, "%s%s", p == list ? "" : ", ", *p);
}

static bool key_name_ok(const char *s)
{
        if (!*s || !((*s >= 'a' && *s <= 'z') || *s == '_'))
                return false;
        return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(s);
}

static int check_fields(const cJSON *obj, const struct field *fields, const char *prefix, const struct src *s,
                        struct bd_err *err);

/* A section's key definitions: {NAME: {type, default, ...}} */
static int check_keys(const cJSON *keys, const char *prefix, const struct src *s, struct bd_err *err)
{
        const cJSON *k;
        cJSON_ArrayForEach(k, keys) {
                _cleanup_free_ char *at = xasprintf("%s.%s", prefix, k->string);
                if (!key_name_ok(k->string))
                        return fail(err, s, at, "a key is lowercase letters, digits and '_'");
                if (cJSON_IsNull(k))
                        continue; /* removes an inherited key */
                if (!cJSON_IsObject(k))
                        return fail(err, s, at, "expected an object ({\"type\": ..., \"help\": ...}), got %s",
                                    json_type_name(k));
                int r = check_fields(k, key_fields, at, s, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* "command": words, and {"if": KEY, "then": [words]} */
static int check_command(const cJSON *cmd, const char *at, const struct src *s, struct bd_err *err)
{
        if (!cJSON_IsArray(cmd))
                return fail(err, s, at, "expected a list of words, got %s", json_type_name(cmd));
        const cJSON *e;
        cJSON_ArrayForEach(e, cmd) {
                if (cJSON_IsString(e))
                        continue;
                if (!cJSON_IsObject(e))
                        return fail(err, s, at, "a word is a string or {\"if\": KEY, \"then\": [words]}, got %s",
                                    json_type_name(e));
                const cJSON *c;
                cJSON_ArrayForEach(c, e)
                        if (!streq(c->string, "if") && !streq(c->string, "then"))
                                return fail(err, s, at, "unknown field '%s' in a conditional word (if, then)",
                                            c->string);
                const cJSON *cond = cJSON_GetObjectItemCaseSensitive(e, "if");
                const cJSON *then = cJSON_GetObjectItemCaseSensitive(e, "then");
                if (!cJSON_IsString(cond) || !cJSON_IsArray(then))
                        return fail(err, s, at, "a conditional word needs \"if\": KEY and \"then\": [words]");
                cJSON_ArrayForEach(c, then)
                        if (!cJSON_IsString(c))
                                return fail(err, s, at, "\"then\" holds strings, got %s", json_type_name(c));
        }
        return 0;
}

static int check_fields(const cJSON *obj, const struct field *fields, const char *prefix, const struct src *s,
                        struct bd_err *err)
{
        const cJSON *v;
        cJSON_ArrayForEach(v, obj) {
                _cleanup_free_ char *at = prefix ? xasprintf("%s.%s", prefix, v->string) : xstrdup(v->string);
                const struct field *f = fields;
                while (f->name && !streq(f->name, v->string))
                        f++;
                if (!f->name) {
                        const char *names[32];
                        size_t n = 0;
                        for (const struct field *g = fields; g->name && n + 1 < ARRAY_SIZE(names); g++)
                                names[n++] = g->name;
                        names[n] = NULL;
                        const char *close = str_closest_word(v->string, names);
                        if (close)
                                return fail(err, s, at, "unknown field (did you mean '%s'?)", close);
                        _cleanup_buf_ struct bd_buf list = BD_BUF_INIT;
                        list_words(&list, names);
                        return fail(err, s, at, "unknown field (known: %s)", list.s);
                }
                int r = 0;
                switch (f->type) {
                case F_STRING:
                        if (!cJSON_IsString(v))
                                return fail(err, s, at, "expected a string, got %s", json_type_name(v));
                        if (strpbrk(v->valuestring, "\n\r"))
                                return fail(err, s, at, "holds a newline");
                        if (f->choices && !in_list(f->choices, v->valuestring)) {
                                _cleanup_buf_ struct bd_buf list = BD_BUF_INIT;
                                list_words(&list, f->choices);
                                return fail(err, s, at, "'%s' is not one of: %s", v->valuestring, list.s);
                        }
                        break;
                case F_PATTERN: /* a regular expression may span lines ("...~~~~\\n=([0-9.]+)") */
                        if (!cJSON_IsString(v))
                                return fail(err, s, at, "expected a string, got %s", json_type_name(v));
                        break;
                case F_STRING_OR_NULL:
                        if (!cJSON_IsString(v) && !cJSON_IsNull(v))
                                return fail(err, s, at, "expected a string or null, got %s", json_type_name(v));
                        break;
                case F_BOOL:
                        if (!cJSON_IsBool(v))
                                return fail(err, s, at, "expected true or false, got %s", json_type_name(v));
                        break;
                case F_NUMBER:
                        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
                                return fail(err, s, at, "expected a number, got %s", json_type_name(v));
                        break;
                case F_STRING_LIST: {
                        if (!cJSON_IsArray(v))
                                return fail(err, s, at, "expected a list of strings, got %s", json_type_name(v));
                        const cJSON *e;
                        cJSON_ArrayForEach(e, v)
                                if (!cJSON_IsString(e))
                                        return fail(err, s, at, "expected a list of strings, it holds %s",
                                                    json_type_name(e));
                        break;
                }
                case F_OBJECT:
                        if (!cJSON_IsObject(v))
                                return fail(err, s, at, "expected an object, got %s", json_type_name(v));
                        r = check_fields(v, f->children, at, s, err);
                        break;
                case F_KEYS:
                        if (!cJSON_IsObject(v))
                                return fail(err, s, at, "expected an object of key definitions, got %s",
                                            json_type_name(v));
                        r = check_keys(v, at, s, err);
                        break;
                case F_COMMAND:
                        r = check_command(v, at, s, err);
                        break;
                case F_ENV: {
                        if (!cJSON_IsObject(v))
                                return fail(err, s, at, "expected an object of NAME: value, got %s", json_type_name(v));
                        const cJSON *e;
                        cJSON_ArrayForEach(e, v) {
                                _cleanup_free_ char *eat = xasprintf("%s.%s", at, e->string);
                                size_t n = strlen(e->string);
                                if (!n || strspn(e->string, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != n ||
                                    (e->string[0] >= '0' && e->string[0] <= '9'))
                                        return fail(err, s, eat, "not an environment variable name");
                                if (!cJSON_IsString(e) || strpbrk(e->valuestring, "\n\r"))
                                        return fail(err, s, eat, "expected one line of text, got %s", json_type_name(e));
                        }
                        break;
                }
                case F_ANY:
                        break;
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- the files: bundled, then on the path ---- */

/* One file of a name in one layer: read, absent, or bad.  Each is looked
 * at once, when a workload of its name (or a file extending it) is first
 * needed. */
struct wfile {
        char *name;
        char *label;            /* its path, or "workloads/NAME.json (bundled)" */
        char *text;             /* comments stripped; NULL: absent or bad */
        cJSON *json;
        size_t layer;           /* 0 .. ndirs-1: the path's directories; BUNDLED */
        char *error;            /* there, but it does not read: "FILE:LINE: ..." */
};

/* A name resolved once: its workload, none (abstract, or no file), or the
 * error of its file or of one it extends. */
struct made {
        char *name;
        struct workload *w;
        char *error;
        bool busy;              /* being made: a section shared in a cycle */
};

static struct {
        pthread_mutex_t lock;
        bool bundled;           /* the bundled files read and their workloads made */
        bool listed;            /* every file of the path read (workload_all) */
        char **dirs;
        size_t ndirs;
        struct wfile **files;
        size_t nfiles;
        struct made *made;
        size_t nmade;
        struct workload **known;        /* the workloads made, NULL-terminated: the bundled first in their
                                         * order, then the others by name */
        size_t nknown;
        char *error;            /* the first bad file: of the bundled ones, or of the path when listed */
} reg = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool file_name_ok(const char *name)
{
        return *name && name[0] != '.' && strlen(name) <= 64 &&
               strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == strlen(name);
}

/* Parses and checks the fields of one file's text. */
static int read_text(const char *text_in, const char *name, const char *label, size_t layer, struct wfile *ret,
                     struct bd_err *err)
{
        _cleanup_free_ char *text = xstrdup(text_in);
        if (json_strip_comments(text) < 0)
                return bd_err_set(err, -EINVAL, "%s: a /* comment is not closed", label);
        _cleanup_json_ cJSON *json = NULL;
        int r = json_parse(text, label, &json, err);
        if (r < 0)
                return r;
        struct src s = { label, text };
        if (!cJSON_IsObject(json))
                return fail(err, &s, NULL, "expected a JSON object at the top, got %s", json_type_name(json));
        r = check_fields(json, top_fields, NULL, &s, err);
        if (r < 0)
                return r;
        *ret = (struct wfile){ .name = xstrdup(name), .label = xstrdup(label), .text = TAKE_PTR(text),
                               .json = TAKE_PTR(json), .layer = layer };
        return 0;
}

static void wfile_release(struct wfile *f)
{
        free(f->name);
        free(f->label);
        free(f->text);
        free(f->error);
        cJSON_Delete(f->json);
}

static struct wfile *add_file(const struct wfile *f)
{
        struct wfile *copy = xmalloc(sizeof(*copy));
        *copy = *f;
        reg.files = xrealloc(reg.files, (reg.nfiles + 1) * sizeof(*reg.files));
        reg.files[reg.nfiles++] = copy;
        return copy;
}

/* NAME.json of one directory of the path, read the first time it is asked
 * for: *ret NULL when there is none; an error of the file each time. */
static int file_at(const char *name, size_t layer, const struct wfile **ret, struct bd_err *err)
{
        const struct wfile *f = NULL;
        for (size_t i = 0; i < reg.nfiles && !f; i++)
                if (reg.files[i]->layer == layer && streq(reg.files[i]->name, name))
                        f = reg.files[i];
        if (!f) {
                struct wfile nf = { 0 };
                _cleanup_free_ char *path = xasprintf("%s/%s.json", reg.dirs[layer], name);
                _cleanup_free_ char *text = NULL;
                size_t len;
                int r = fs_read_file(path, 1 << 20, &text, &len, err);
                if (r == -ENOENT || r == -ENOTDIR)
                        r = 0;
                else if (r == 0 && strlen(text) != len)
                        r = bd_err_set(err, -EINVAL, "%s: holds a NUL byte", path);
                else if (r == 0)
                        r = read_text(text, name, path, layer, &nf, err);
                if (r < 0 || !text) {
                        nf = (struct wfile){ .name = xstrdup(name), .layer = layer };
                        if (r < 0)
                                nf.error = xstrdup(err->msg);
                }
                f = add_file(&nf);
        }
        *ret = f->text ? f : NULL;
        if (f->error)
                return bd_err_set(err, -EINVAL, "%s", f->error);
        return 0;
}

/* The file of a name: the first directory of the path from from_layer that
 * has one, else the bundled one; *ret NULL when there is none. */
static int find_file(const char *name, size_t from_layer, const struct wfile **ret, struct bd_err *err)
{
        *ret = NULL;
        if (!file_name_ok(name))
                return 0;
        for (size_t l = from_layer; l < reg.ndirs; l++) {
                int r = file_at(name, l, ret, err);
                if (r < 0 || *ret)
                        return r;
        }
        for (size_t i = 0; i < reg.nfiles; i++)
                if (reg.files[i]->layer == BUNDLED && reg.files[i]->text && streq(reg.files[i]->name, name) &&
                    from_layer <= BUNDLED) {
                        *ret = reg.files[i];
                        break;
                }
        return 0;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the *.json files of one directory of the path, sorted
 * (appended to *names). */
static int list_dir(size_t layer, char ***names, size_t *n, struct bd_err *err)
{
        DIR *dir = opendir(reg.dirs[layer]);
        if (!dir)
                return 0; /* a directory of the path that is not there */
        size_t first = *n;
        struct dirent *e;
        int r = 0;
        while ((e = readdir(dir)))
                if (e->d_name[0] != '.' && str_has_suffix(e->d_name, ".json")) {
                        _cleanup_free_ char *name = xstrndup(e->d_name, strlen(e->d_name) - 5);
                        if (!file_name_ok(name)) {
                                if (r == 0)
                                        r = bd_err_set(err, -EINVAL, "%s/%s: not a workload name (letters, digits, "
                                                       "'_', '.' and '-', at most 64)", reg.dirs[layer], e->d_name);
                                continue;
                        }
                        *names = xrealloc(*names, (*n + 1) * sizeof(char *));
                        (*names)[(*n)++] = TAKE_PTR(name);
                }
        closedir(dir);
        if (*n > first)
                qsort(*names + first, *n - first, sizeof(char *), cmp_str);
        return r;
}

/* One file and its bases, merged (a base's fields first, the file's
 * winning; "abstract" and "extends" are the file's own). */
static int resolve(const struct wfile *f, int depth, const struct wfile **chain, cJSON **ret, struct bd_err *err)
{
        for (int i = 0; i < depth; i++)
                if (chain[i] == f) {
                        _cleanup_buf_ struct bd_buf cyc = BD_BUF_INIT;
                        for (int j = i; j < depth; j++)
                                buf_printf(&cyc, "%s -> ", chain[j]->label);
                        buf_puts(&cyc, f->label);
                        return bd_err_set(err, -ELOOP, "%s: 'extends' cycle: %s", chain[0]->label, cyc.s);
                }
        if (depth >= MAX_DEPTH)
                return bd_err_set(err, -ELOOP, "%s: 'extends' nested deeper than %d", f->label, MAX_DEPTH);
        chain[depth] = f;
        cJSON *base = NULL;
        const char *ext = json_str(f->json, "extends", NULL);
        if (ext) {
                struct src s = { f->label, f->text };
                if (!file_name_ok(ext))
                        return fail(err, &s, "extends", "'%s' is not a workload name", ext);
                /* a file may refine the workload of its own name further down the path */
                const struct wfile *b;
                int r = find_file(ext, streq(ext, f->name) ? f->layer + 1 : 0, &b, err);
                if (r < 0)
                        return r;
                if (!b)
                        return fail(err, &s, "extends", "no workload '%s' to extend", ext);
                r = resolve(b, depth + 1, chain, &base, err);
                if (r < 0)
                        return r;
                cJSON_DeleteItemFromObjectCaseSensitive(base, "abstract");
        } else
                base = cJSON_CreateObject();
        /* command lines replace each other whole: a merge of two lists
         * would be neither */
        if (cJSON_GetObjectItemCaseSensitive(f->json, "command"))
                cJSON_DeleteItemFromObjectCaseSensitive(base, "command");
        json_overlay(base, f->json);
        cJSON_DeleteItemFromObjectCaseSensitive(base, "extends");
        *ret = base;
        return 0;
}

/* ---- a resolved file into a workload ---- */

static enum schema_type schema_type_of(const char *t)
{
        for (size_t i = 0; key_types[i]; i++)
                if (streq(key_types[i], t))
                        return key_schema_types[i];
        return S_STRING;
}

static int build_keys(const cJSON *keys, const char *prefix, const struct src *s, struct schema_key **ret,
                      struct bd_err *err);

/* One key's definition into the schema's form, checked as a whole. */
static int build_key(const cJSON *spec, const char *at, const struct src *s, struct schema_key *k, struct bd_err *err)
{
        const char *type = json_str(spec, "type", NULL);
        if (!type)
                return fail(err, s, at, "no 'type' (%s)", "string, int, number, bool, string-list, int-list, "
                                                          "number-list or object");
        *k = (struct schema_key){ .name = xstrdup(strrchr(at, '.') + 1), .type = schema_type_of(type),
                                  .min = 1, .max = 0, .word = W_ANY,
                                  .help = xstrdup(json_str(spec, "help", "")) };
        bool numeric = k->type == S_INT || k->type == S_NUMBER || k->type == S_INT_LIST || k->type == S_NUMBER_LIST;
        const cJSON *mn = json_get(spec, "min"), *mx = json_get(spec, "max");
        if ((mn || mx) && !numeric)
                return fail(err, s, at, "'min' and 'max' are for numbers, not %s", type);
        if (mn || mx) {
                k->min = mn ? mn->valuedouble : -HUGE_VAL;
                k->max = mx ? mx->valuedouble : HUGE_VAL;
                if (k->min > k->max)
                        return fail(err, s, at, "'min' %g is above 'max' %g", k->min, k->max);
        }
        const cJSON *ch = json_get(spec, "choices");
        if (ch) {
                if (k->type != S_STRING && k->type != S_STRING_LIST)
                        return fail(err, s, at, "'choices' are for strings, not %s", type);
                int n = cJSON_GetArraySize(ch);
                if (n == 0)
                        return fail(err, s, at, "'choices' is empty");
                char **c = xcalloc((size_t)n + 1, sizeof(char *));
                int i = 0;
                const cJSON *e;
                cJSON_ArrayForEach(e, ch)
                        c[i++] = xstrdup(e->valuestring);
                k->choices = (const char *const *)c;
        }
        const cJSON *sub = json_get(spec, "keys");
        if (sub && k->type != S_OBJECT)
                return fail(err, s, at, "'keys' are for objects, not %s", type);
        if (k->type == S_OBJECT) {
                struct schema_key *children = NULL;
                int r = build_keys(sub, at, s, &children, err);
                k->children = children;
                if (r < 0)
                        return r;
        }
        if (json_get(spec, "path") && k->type != S_STRING)
                return fail(err, s, at, "'path' is for a string (a file name in that directory), not %s", type);
        if (json_get(spec, "flag") && k->type != S_BOOL)
                return fail(err, s, at, "'flag' is for a bool (the option alone when true), not %s", type);
        const cJSON *def = json_get(spec, "default");
        if (def) {
                _cleanup_free_ char *dat = xasprintf("%s.default", at);
                int r = schema_check_value(def, k, dat, s->label, s->text, err);
                if (r < 0)
                        return r;
        }
        const char *arg = json_str(spec, "arg", NULL);
        if (arg && arg[0] != '-')
                return fail(err, s, at, "'arg' is an option starting with '-' (or null: not passed), got '%s'%s", arg,
                            strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") == strlen(arg)
                                    ? " (a KEY VALUE override of the program's configuration is \"override\")" : "");
        const char *ov = json_str(spec, "override", NULL);
        if (ov) {
                size_t n = strlen(ov);
                if (!n || ov[0] == '.' || ov[n - 1] == '.' || strstr(ov, "..") ||
                    strspn(ov, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.") != n)
                        return fail(err, s, at, "'override' is a configuration key of the program (letters, digits, "
                                    "'_' and '.': \"SOLVER.BASE_LR\"), got '%s'", ov);
                if (json_get(spec, "arg") || json_get(spec, "flag"))
                        return fail(err, s, at, "'override' (KEY VALUE) goes with neither 'arg' nor 'flag'");
                if (k->type == S_OBJECT)
                        return fail(err, s, at, "'override' is for a value, not an object");
        }
        bool list = k->type == S_INT_LIST || k->type == S_NUMBER_LIST;
        if ((json_get(spec, "ascending") || json_get(spec, "within")) && !list)
                return fail(err, s, at, "'ascending' and 'within' are for a list of numbers, not %s",
                            json_str(spec, "type", "?"));
        if (json_get(spec, "multiple_of") && k->type != S_INT)
                return fail(err, s, at, "'multiple_of' is for an int, not %s", json_str(spec, "type", "?"));
        const char *env = json_str(spec, "env", NULL);
        if (env) {
                size_t n = strlen(env);
                if (!n || strspn(env, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != n ||
                    (env[0] >= '0' && env[0] <= '9'))
                        return fail(err, s, at, "'env' is an environment variable's name (\"BATCHSIZE\"), got '%s'",
                                    env);
                if (json_get(spec, "arg") || json_get(spec, "flag") || ov)
                        return fail(err, s, at, "'env' (the value in an environment variable) goes with none of "
                                    "'arg', 'flag', 'override'");
                if (k->type == S_OBJECT)
                        return fail(err, s, at, "'env' is for a value, not an object");
        }
        return 0;
}

static void free_keys(struct schema_key *keys)
{
        for (struct schema_key *k = keys; k && k->name; k++) {
                free((char *)k->name);
                free((char *)k->help);
                for (char **c = (char **)k->choices; c && *c; c++)
                        free(*c);
                free((char **)k->choices);
                free_keys((struct schema_key *)k->children);
        }
        free(keys);
}

static int build_keys(const cJSON *keys, const char *prefix, const struct src *s, struct schema_key **ret,
                      struct bd_err *err)
{
        int n = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, keys)
                n += !cJSON_IsNull(e);
        struct schema_key *k = xcalloc((size_t)n + 1, sizeof(*k));
        *ret = k;
        int i = 0;
        cJSON_ArrayForEach(e, keys) {
                if (cJSON_IsNull(e))
                        continue;
                _cleanup_free_ char *at = xasprintf("%s.%s", prefix, e->string);
                int r = build_key(e, at, s, &k[i++], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The placeholders of a word ("{data}", "--x={lr}"): each must be one the
 * renderer fills or a key of the section. */
static const char *const fills[] = { "program", "data", "args", "result", "system", "trial_seed", "logdir", "run",
                                     "nodes", "ranks", "ranks_per_node", "rank", "local_rank",
                                     "trial", NULL };

static int check_word(const char *word, const cJSON *keys, const struct src *s, bool whole_only, struct bd_err *err)
{
        for (const char *p = strchr(word, '{'); p; p = strchr(p + 1, '{')) {
                const char *end = strchr(p, '}');
                if (!end)
                        return fail(err, s, "command", "'%s': a '{' without its '}'", word);
                _cleanup_free_ char *name = xstrndup(p + 1, (size_t)(end - p - 1));
                if (!in_list(fills, name) && !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(keys, name))) {
                        const char *close = str_closest_word(name, fills);
                        return fail(err, s, "command", "'%s': {%s} is neither a key of the section nor one of "
                                    "{program}, {data}, {args}, {result}, {system}, {trial_seed}, {logdir}, {run}, {trial}, "
                                    "{nodes}, {ranks}, {ranks_per_node}, {rank}, {local_rank}%s%s%s", word, name,
                                    close ? " (did you mean {" : "", close ? close : "", close ? "}?)" : "");
                }
                if ((streq(name, "args") || whole_only) && (p != word || end[1]))
                        return fail(err, s, "command", "'%s': {%s} is a word of its own", word, name);
        }
        return 0;
}

static int check_command_words(const cJSON *cmd, const cJSON *keys, const struct src *s, struct bd_err *err)
{
        if (cJSON_GetArraySize(cmd) == 0)
                return fail(err, s, "command", "no command");
        const cJSON *e, *w;
        cJSON_ArrayForEach(e, cmd) {
                if (cJSON_IsString(e)) {
                        int r = check_word(e->valuestring, keys, s, false, err);
                        if (r < 0)
                                return r;
                        continue;
                }
                const char *cond = json_str(e, "if", "");
                if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(keys, cond)))
                        return fail(err, s, "command", "\"if\": '%s' is not a key of the section", cond);
                cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(e, "then")) {
                        int r = check_word(w->valuestring, keys, s, false, err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static bool command_names(const cJSON *cmd, const char *fill)
{
        _cleanup_free_ char *needle = xasprintf("{%s}", fill);
        const cJSON *e, *w;
        cJSON_ArrayForEach(e, cmd) {
                if (cJSON_IsString(e) && strstr(e->valuestring, needle))
                        return true;
                cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(e, "then"))
                        if (cJSON_IsString(w) && strstr(w->valuestring, needle))
                                return true;
        }
        return false;
}

static void workload_free(struct workload *w)
{
        if (!w)
                return;
        free((char *)w->name);
        free((char *)w->section);
        free((char *)w->file);
        free((char *)w->title);
        free((char *)w->mlperf_name);
        free((char *)w->result_name);
        free((char *)w->program);
        free((char *)w->target_key);
        free((char *)w->target_segm_key);
        free((char *)w->defaults);
        free((char *)w->help);
        free((char *)w->unit);
        for (int i = 0; i < _WV_MAX; i++)
                free((char *)w->reader.match[i]);
        free((char *)w->reader.file);
        for (int i = 0; i < _WI_MAX; i++)
                free((char *)w->image[i]);
        free_keys((struct schema_key *)w->keys);
        cJSON_Delete((cJSON *)w->spec);
        free(w);
}

const char *const workload_value_names[_WV_MAX] = { "step", "loss", "throughput", "accuracy", "accuracy_segm" };

/* A JSON path: names (letters, digits, '_', '-') and array indices
 * (-1: the last item) separated by dots. */
static bool json_path_ok(const char *p)
{
        size_t n = strlen(p);
        if (!n || p[0] == '.' || p[n - 1] == '.' || strstr(p, ".."))
                return false;
        return strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == n;
}

/* result.file: {result}, {logdir}, {run}, {trial}; '*' only in the file's name */
static int check_result_file(const char *file, const struct src *s, struct bd_err *err)
{
        static const char *const names[] = { "result", "logdir", "run", "trial", NULL };
        for (const char *p = strchr(file, '{'); p; p = strchr(p + 1, '{')) {
                const char *end = strchr(p, '}');
                if (!end)
                        return fail(err, s, "result.file", "'%s': a '{' without its '}'", file);
                _cleanup_free_ char *name = xstrndup(p + 1, (size_t)(end - p - 1));
                if (!in_list(names, name))
                        return fail(err, s, "result.file", "'%s': {%s} is not one of {result}, {logdir}, {run}, "
                                    "{trial}", file, name);
        }
        const char *star = strchr(file, '*'), *slash = strrchr(file, '/');
        if (star && slash && star < slash)
                return fail(err, s, "result.file", "'%s': '*' only in the file's name, not in a directory", file);
        return 0;
}

/* One result.match: what it means depends on the reader. */
static int check_match(enum workload_read read, const char *name, const char *v, const struct src *s,
                       struct bd_err *err)
{
        _cleanup_free_ char *at = xasprintf("result.match.%s", name);
        if (!*v)
                return fail(err, s, at, "empty");
        if (read == READ_REGEX) {
                regex_t re;
                int rc = regcomp(&re, v, REG_EXTENDED);
                if (rc != 0) {
                        char msg[128];
                        regerror(rc, &re, msg, sizeof(msg));
                        return fail(err, s, at, "'%s' is not an extended regular expression: %s", v, msg);
                }
                size_t groups = re.re_nsub;
                bool empty = regexec(&re, "", 0, NULL, 0) == 0;
                regfree(&re);
                if (groups < 1)
                        return fail(err, s, at, "'%s' has no group: the number read is its first (...)", v);
                if (empty)
                        return fail(err, s, at, "'%s' matches an empty line: it would match every line", v);
        } else if (strpbrk(v, "\n\r"))
                return fail(err, s, at, "holds a newline (only a regular expression may span lines)");
        else if (read == READ_JSON && !json_path_ok(v))
                return fail(err, s, at, "'%s' is not a path (names and indices separated by '.': "
                            "\"train_item.avg\")", v);
        return 0;
}

/* How its result is read: "result" of the file. */
static int build_reader(const cJSON *spec, const struct src *s, struct workload *w, struct bd_err *err)
{
        const char *kind = json_str(spec, "result.kind", "time-to-train");
        const char *read = json_str(spec, "result.read", "mllog");
        w->result = streq(kind, "bus-bandwidth") ? RESULT_BUS_BANDWIDTH
                    : streq(kind, "throughput")  ? RESULT_THROUGHPUT
                                                 : RESULT_TIME_TO_TRAIN;
        struct workload_reader *rd = &w->reader;
        rd->read = streq(read, "regex") ? READ_REGEX : streq(read, "json") ? READ_JSON
                   : streq(read, "dllogger") ? READ_DLLOGGER : READ_MLLOG;
        w->higher_is_better = json_bool(spec, "result.higher_is_better", w->result != RESULT_TIME_TO_TRAIN);
        const char *unit = json_str(spec, "result.unit", NULL);
        w->unit = xstrdup(unit ? unit : w->result == RESULT_TIME_TO_TRAIN ? "min"
                                      : w->result == RESULT_BUS_BANDWIDTH ? "GB/s" : "images/s");
        const cJSON *match = json_get(spec, "result.match");
        if (rd->read == READ_MLLOG) {
                static const char *const only[] = { "match", "scale", "skip", "file" };
                for (size_t i = 0; i < ARRAY_SIZE(only); i++) {
                        _cleanup_free_ char *at = xasprintf("result.%s", only[i]);
                        if (json_get(spec, at))
                                return fail(err, s, at, "for the regex, json and dllogger readers; the mllog "
                                            "reader reads MLPerf's own keys");
                }
        } else if (w->result == RESULT_BUS_BANDWIDTH)
                return fail(err, s, "result.read", "a bus-bandwidth result is read from MLLOG lines only");
        for (int i = 0; i < _WV_MAX; i++) {
                const char *v = json_str(match, workload_value_names[i], NULL);
                _cleanup_free_ char *sat = xasprintf("result.scale.%s", workload_value_names[i]);
                rd->scale[i] = json_num(spec, sat, 1);
                if (!v)
                        continue;
                int r = check_match(rd->read, workload_value_names[i], v, s, err);
                if (r < 0)
                        return r;
                rd->match[i] = xstrdup(v);
        }
        double skip = json_num(spec, "result.skip", 0);
        if (skip < 0 || skip > 1000000 || skip != floor(skip))
                return fail(err, s, "result.skip", "expected a whole number from 0, got %g", skip);
        rd->skip = (int)skip;
        const char *file = json_str(spec, "result.file", NULL);
        if (file) {
                int r = check_result_file(file, s, err);
                if (r < 0)
                        return r;
                rd->file = xstrdup(file);
        } else if (rd->read == READ_JSON)
                rd->file = xstrdup("{result}");
        if (rd->read == READ_MLLOG)
                return 0;
        if (w->result == RESULT_THROUGHPUT && !rd->match[WV_THROUGHPUT])
                return fail(err, s, "result.match", "a throughput result needs 'throughput': how to read it");
        if (w->result == RESULT_TIME_TO_TRAIN && json_get(spec, "result.targets") && !rd->match[WV_ACCURACY])
                return fail(err, s, "result.match", "a time to a target needs 'accuracy': how to read it");
        if (!rd->match[WV_THROUGHPUT] && !rd->match[WV_ACCURACY])
                return fail(err, s, "result.match", "reads neither 'throughput' nor 'accuracy'");
        return 0;
}

/* How its processes start ("launch") and its own images ("image"). */
static int build_launch(const cJSON *spec, const struct src *s, struct workload *w, struct bd_err *err)
{
        const char *shape = json_str(spec, "launch.shape", "per-rank");
        const char *launcher = json_str(spec, "launch.launcher", NULL);
        if (streq(shape, "per-rank")) {
                if (launcher)
                        return fail(err, s, "launch.launcher", "for \"shape\": \"per-node\" (one process per node "
                                    "that starts the node's ranks); per-rank, mpirun or srun start every rank");
                w->shape = SHAPE_PER_RANK;
        } else {
                if (!launcher)
                        return fail(err, s, "launch.shape", "per-node needs \"launcher\": what starts the node's "
                                    "ranks (torch.distributed.launch or torchrun)");
                const cJSON *cmd = json_get(spec, "command"), *first = cJSON_GetArrayItem(cmd, 0);
                if (!cJSON_IsString(first) || !streq(first->valuestring, "{program}"))
                        return fail(err, s, "command", "per-node: the command starts with {program} (the Python "
                                    "that runs its script), where the launcher goes");
                if (json_get(spec, "launch.rendezvous"))
                        return fail(err, s, "launch.rendezvous", "per-node: the launcher meets at the first node "
                                    "itself (MASTER_ADDR and MASTER_PORT are its options)");
                w->shape = streq(launcher, "torchrun") ? SHAPE_PER_NODE_TORCHRUN : SHAPE_PER_NODE_LAUNCH;
        }
        for (int i = 0; i < _WI_MAX; i++) {
                _cleanup_free_ char *at = xasprintf("image.%s", workload_image_names[i]);
                const char *img = json_str(spec, at, NULL);
                if (!img)
                        continue;
                if (!*img || strpbrk(img, " \t"))
                        return fail(err, s, at, "an image is one word, got '%s'", img);
                if (w->own)
                        return fail(err, s, at, "benchd's own programs run in the system's image "
                                    "(container.image)");
                w->image[i] = xstrdup(img);
        }
        return 0;
}

static int make_named(const char *name, struct workload **ret, struct bd_err *err);

/* A key "scaling" names: one of the section's, of one of the types. */
static int check_scaled_key(const cJSON *keys, const char *at, const char *name, const char *const *types,
                            const struct src *s, struct bd_err *err)
{
        const cJSON *ks = cJSON_GetObjectItemCaseSensitive(keys, name);
        if (!cJSON_IsObject(ks))
                return fail(err, s, at, "'%s' is not a key of the section", name);
        if (!in_list(types, json_str(ks, "type", ""))) {
                _cleanup_buf_ struct bd_buf list = BD_BUF_INIT;
                list_words(&list, types);
                return fail(err, s, at, "'%s' is a key of type %s, not %s", name, json_str(ks, "type", ""), list.s);
        }
        return 0;
}

/* "scaling": the keys it names are keys of the section of the right type;
 * a rule that scales needs its key. */
static int check_scaling(const cJSON *spec, const cJSON *keys, const struct src *s, struct bd_err *err)
{
        static const char *const lr_types[] = { "number", NULL }, *const warmup_types[] = { "int", "number", NULL },
                                 *const schedule_types[] = { "int", "int-list", NULL };
        const char *k = json_str(spec, "scaling.lr.key", NULL);
        int r = k ? check_scaled_key(keys, "scaling.lr.key", k, lr_types, s, err) : 0;
        if (r == 0 && (k = json_str(spec, "scaling.warmup.key", NULL)))
                r = check_scaled_key(keys, "scaling.warmup.key", k, warmup_types, s, err);
        const cJSON *e;
        cJSON_ArrayForEach(e, json_get(spec, "scaling.schedule"))
                if (r == 0)
                        r = check_scaled_key(keys, "scaling.schedule", e->valuestring, schedule_types, s, err);
        if (r < 0)
                return r;
        const char *lr = json_str(spec, "scaling.lr.rule", NULL), *wu = json_str(spec, "scaling.warmup.rule", NULL);
        if (json_get(spec, "scaling.lr") && !lr)
                return fail(err, s, "scaling.lr", "no 'rule' (linear, sqrt, trainer or none)");
        if (lr && (streq(lr, "linear") || streq(lr, "sqrt")) && !json_get(spec, "scaling.lr.key"))
                return fail(err, s, "scaling.lr", "rule '%s' needs the 'key' it scales", lr);
        if (json_get(spec, "scaling.warmup") && !wu)
                return fail(err, s, "scaling.warmup", "no 'rule' (inverse or none)");
        if (wu && streq(wu, "inverse") && !json_get(spec, "scaling.warmup.key"))
                return fail(err, s, "scaling.warmup", "rule 'inverse' needs the 'key' it scales");
        if (json_get(spec, "scaling.warmup.increment")) {
                /* a warmup given as the rate's increment per iteration (when KEY is VALUE) */
                static const char *const inc_types[] = { "number", NULL }, *const when_types[] = { "string", NULL };
                const char *ik = json_str(spec, "scaling.warmup.increment.key", NULL);
                const char *when = json_str(spec, "scaling.warmup.increment.when", NULL);
                if (!ik)
                        return fail(err, s, "scaling.warmup.increment", "no 'key': the increment per iteration");
                if (!wu || !streq(wu, "inverse"))
                        return fail(err, s, "scaling.warmup.increment", "goes with the warmup's rule 'inverse'");
                if (when && !json_get(spec, "scaling.warmup.increment.is"))
                        return fail(err, s, "scaling.warmup.increment", "'when' KEY needs 'is': the value that makes "
                                    "the warmup an increment");
                r = check_scaled_key(keys, "scaling.warmup.increment.key", ik, inc_types, s, err);
                if (r == 0 && when)
                        r = check_scaled_key(keys, "scaling.warmup.increment.when", when, when_types, s, err);
                if (r < 0)
                        return r;
        }
        const cJSON *bb = json_get(spec, "scaling.lr.base_batch");
        if (bb && (bb->valuedouble < 1 || bb->valuedouble > 1e9 || bb->valuedouble != floor(bb->valuedouble)))
                return fail(err, s, "scaling.lr.base_batch", "expected a whole number of images from 1, got %g",
                            bb->valuedouble);
        return 0;
}

/* The workload of a resolved file (spec: taken). */
static int build(const struct wfile *f, cJSON *spec, struct workload **ret, struct bd_err *err)
{
        struct src s = { f->label, f->text };
        struct workload *w = xcalloc(1, sizeof(*w));
        w->spec = spec;
        w->name = xstrdup(f->name);
        w->section = xstrdup(json_str(spec, "section", f->name));
        w->file = xstrdup(f->label);
        int r = 0;
        const char *title = json_str(spec, "title", NULL), *program = json_str(spec, "program", NULL);
        const cJSON *cmd = json_get(spec, "command"), *keys = json_get(spec, "keys");
        if (!title)
                r = fail(err, &s, NULL, "no 'title'");
        else if (!program)
                r = fail(err, &s, NULL, "no 'program'");
        else if (!cmd)
                r = fail(err, &s, NULL, "no 'command'");
        if (r < 0)
                goto out;
        w->title = xstrdup(title);
        w->program = xstrdup(program);
        w->own = json_bool(spec, "own", false);
        w->help = xstrdup(json_str(spec, "help", title));
        w->command = cmd;
        if (w->own && strchr(program, '/')) {
                r = fail(err, &s, "program", "benchd's own program is a name in its bin directory, not a path");
                goto out;
        }
        w->built = true;
        if (w->own) {
                size_t i = 0;
                while (own_programs[i].program && !streq(own_programs[i].program, program))
                        i++;
                if (!own_programs[i].program) {
                        r = fail(err, &s, "program", "'%s' is not one of benchd's programs ('own' is for those)",
                                 program);
                        goto out;
                }
                w->built = own_programs[i].built;
        }
        w->mlperf_name = xstrdup(json_str(spec, "mlperf.benchmark", f->name));
        const char *rn = json_str(spec, "mlperf.result", NULL);
        if (rn)
                w->result_name = xstrdup(rn);
        else {
                char *u = xstrdup(f->name);
                for (char *p = u; *p; p++)
                        *p = *p == '-' || *p == '.' ? '_' : (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
                w->result_name = u;
        }
        r = build_reader(spec, &s, w, err);
        if (r < 0)
                goto out;
        const char *checks = json_str(spec, "checks", NULL);
        if (checks) {
                size_t i = 0;
                while (c_checks[i].name && !streq(c_checks[i].name, checks))
                        i++;
                if (!c_checks[i].name) {
                        r = fail(err, &s, "checks", "no checks named '%s' (ssd, maskrcnn, allreduce)", checks);
                        goto out;
                }
                w->check = c_checks[i].fn;
        }
        struct schema_key *k = NULL;
        r = build_keys(keys, "keys", &s, &k, err);
        w->keys = k;
        if (r < 0)
                goto out;
        /* the targets: keys with a number */
        const cJSON *t;
        int nt = 0;
        cJSON_ArrayForEach(t, json_get(spec, "result.targets")) {
                const cJSON *ks = cJSON_GetObjectItemCaseSensitive(keys, t->valuestring);
                if (!cJSON_IsObject(ks) || !streq(json_str(ks, "type", ""), "number")) {
                        r = fail(err, &s, "targets", "target '%s' is not a key of type number", t->valuestring);
                        goto out;
                }
                if (nt >= 2) {
                        r = fail(err, &s, "targets", "at most two targets (bbox, then segm)");
                        goto out;
                }
                if (nt++ == 0)
                        w->target_key = xstrdup(t->valuestring);
                else
                        w->target_segm_key = xstrdup(t->valuestring);
        }
        if (w->target_segm_key && w->reader.read != READ_MLLOG && !w->reader.match[WV_ACCURACY_SEGM]) {
                r = fail(err, &s, "result.match", "a second target ('%s') needs 'accuracy_segm': how to read it",
                         w->target_segm_key);
                goto out;
        }
        cJSON *ks;
        cJSON_ArrayForEach(ks, (cJSON *)keys) {
                const char *within = json_str(ks, "within", NULL);
                const cJSON *wk = within ? cJSON_GetObjectItemCaseSensitive(keys, within) : NULL;
                if (within && (!cJSON_IsObject(wk) || (!streq(json_str(wk, "type", ""), "int") &&
                                                       !streq(json_str(wk, "type", ""), "number")))) {
                        _cleanup_free_ char *at = xasprintf("keys.%s.within", ks->string);
                        r = fail(err, &s, at, "'%s' is not a number key of the section", within);
                        goto out;
                }
        }
        cJSON_ArrayForEach(ks, (cJSON *)keys) {
                const char *when = json_str(ks, "when", NULL);
                if (when && !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(keys, when))) {
                        _cleanup_free_ char *at = xasprintf("keys.%s.when", ks->string);
                        r = fail(err, &s, at, "'%s' is not a key of the section", when);
                        goto out;
                }
        }
        r = check_command_words(cmd, keys, &s, err);
        if (r < 0)
                goto out;
        r = check_scaling(spec, keys, &s, err);
        if (r < 0)
                goto out;
        if (!streq(w->section, w->name)) {
                /* the settings of another workload: its keys are the section's */
                struct workload *owner = NULL;
                struct bd_err oerr;
                make_named(w->section, &owner, &oerr);
                if (!owner || !streq(owner->section, owner->name)) {
                        r = fail(err, &s, "section", "'%s' is not a workload with a section of its own", w->section);
                        goto out;
                }
                for (const struct schema_key *key = w->keys; key->name; key++)
                        if (!workload_has_key(owner, key->name)) {
                                _cleanup_free_ char *at = xasprintf("keys.%s", key->name);
                                r = fail(err, &s, at, "not a key of section '%s', whose settings it shares",
                                         w->section);
                                goto out;
                        }
        }
        w->dataset = command_names(cmd, "data");
        const cJSON *dl;
        cJSON_ArrayForEach(dl, json_get(spec, "data_layout"))
                if (!*dl->valuestring || dl->valuestring[0] == '/' || strstr(dl->valuestring, "..")) {
                        r = fail(err, &s, "data_layout", "'%s' is not a path inside the dataset's directory",
                                 dl->valuestring);
                        goto out;
                }
        w->rendezvous = json_bool(spec, "launch.rendezvous", false);
        r = build_launch(spec, &s, w, err);
        if (r < 0)
                goto out;
        if (w->shape != SHAPE_PER_RANK && (command_names(cmd, "rank") || command_names(cmd, "local_rank"))) {
                r = fail(err, &s, "command", "{rank} and {local_rank} are a rank's own: per-node, the launcher "
                         "gives each rank its own (LOCAL_RANK, --local_rank)");
                goto out;
        }
        /* the built-in values, in the keys' order */
        cJSON *defs = cJSON_CreateObject();
        cJSON_ArrayForEach(ks, (cJSON *)keys) {
                const cJSON *d = cJSON_GetObjectItemCaseSensitive(ks, "default");
                if (d)
                        cJSON_AddItemToObject(defs, ks->string, cJSON_Duplicate(d, true));
        }
        w->defaults = cJSON_PrintUnformatted(defs);
        cJSON_Delete(defs);
        *ret = w;
        return 0;
out:
        workload_free(w);
        return r;
}

/* Resolves and builds one non-abstract workload: NULL-name means abstract. */
static int make(const struct wfile *f, struct workload **ret, struct bd_err *err)
{
        const struct wfile *chain[MAX_DEPTH + 1];
        cJSON *spec = NULL;
        *ret = NULL;
        int r = resolve(f, 0, chain, &spec, err);
        if (r < 0)
                return r;
        if (json_bool(spec, "abstract", false)) {
                cJSON_Delete(spec);
                return 0;
        }
        return build(f, spec, ret, err);
}

/* Where a workload goes among the known: the bundled in their order, then
 * the others by name. */
static size_t bundled_rank(const char *name)
{
        size_t i = 0;
        while (workload_bundled[i].name && !streq(workload_bundled[i].name, name))
                i++;
        return i;
}

static void add_known(struct workload *w)
{
        size_t rw = bundled_rank(w->name), at = reg.nknown;
        while (at > 0) {
                const struct workload *p = reg.known[at - 1];
                size_t rp = bundled_rank(p->name);
                if (rp < rw || (rp == rw && strcmp(p->name, w->name) < 0))
                        break;
                at--;
        }
        reg.known = xrealloc(reg.known, (reg.nknown + 2) * sizeof(*reg.known));
        memmove(reg.known + at + 1, reg.known + at, (reg.nknown - at) * sizeof(*reg.known));
        reg.known[at] = w;
        reg.known[++reg.nknown] = NULL;
}

/* The workload of a name, made the first time: its file (the first of the
 * path, else the bundled one) and the files it extends are read then.
 * *ret NULL: none (no file, or an abstract one); an error of its files each
 * time it is asked for. */
static int make_named(const char *name, struct workload **ret, struct bd_err *err)
{
        *ret = NULL;
        for (size_t i = 0; i < reg.nmade; i++)
                if (streq(reg.made[i].name, name)) {
                        *ret = reg.made[i].w;
                        return reg.made[i].error ? bd_err_set(err, -EINVAL, "%s", reg.made[i].error) : 0;
                }
        size_t at = reg.nmade;
        reg.made = xrealloc(reg.made, (reg.nmade + 1) * sizeof(*reg.made));
        reg.made[reg.nmade++] = (struct made){ .name = xstrdup(name), .busy = true };
        const struct wfile *f;
        struct workload *w = NULL;
        int r = find_file(name, 0, &f, err);
        if (r == 0 && f)
                r = make(f, &w, err);
        reg.made[at].busy = false;
        if (r < 0) {
                reg.made[at].error = xstrdup(err->msg);
                return r;
        }
        reg.made[at].w = w;
        if (w)
                add_known(w);
        *ret = w;
        return 0;
}

/* The bundled files, and their workloads (or the path's files of their
 * names).  An error of a bundled file is the build's (test-config reads
 * them all): the workload is left out and workload_path_error() says so. */
static void load_bundled(void)
{
        if (reg.bundled)
                return;
        reg.bundled = true;
        reg.known = xcalloc(1, sizeof(*reg.known));
        struct bd_err err;
        for (const struct workload_text *b = workload_bundled; b->name; b++) {
                struct wfile f;
                _cleanup_free_ char *label = xasprintf("%s (bundled)", b->file);
                if (read_text(b->text, b->name, label, BUNDLED, &f, &err) == 0)
                        add_file(&f);
                else if (!reg.error)
                        reg.error = xstrdup(err.msg);
        }
        for (const struct workload_text *b = workload_bundled; b->name; b++) {
                struct workload *w;
                if (make_named(b->name, &w, &err) < 0 && !reg.error)
                        reg.error = xstrdup(err.msg);
        }
}

/* Every file of the path, for the lists: the first error is kept. */
static void load_all(void)
{
        load_bundled();
        if (reg.listed)
                return;
        reg.listed = true;
        char **names = NULL;
        size_t n = 0;
        struct bd_err err;
        for (size_t i = 0; i < reg.ndirs; i++)
                if (list_dir(i, &names, &n, &err) < 0 && !reg.error)
                        reg.error = xstrdup(err.msg);
        if (n)
                qsort(names, n, sizeof(char *), cmp_str);
        for (size_t i = 0; i < n; i++) {
                struct workload *w;
                if ((i == 0 || !streq(names[i], names[i - 1])) && make_named(names[i], &w, &err) < 0 &&
                    !reg.error)
                        reg.error = xstrdup(err.msg);
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

void workload_path_set(char *const *dirs)
{
        pthread_mutex_lock(&reg.lock);
        for (size_t i = 0; i < reg.ndirs; i++)
                free(reg.dirs[i]);
        free(reg.dirs);
        reg.dirs = NULL;
        reg.ndirs = 0;
        for (size_t i = 0; dirs && dirs[i]; i++) {
                reg.dirs = xrealloc(reg.dirs, (reg.ndirs + 1) * sizeof(char *));
                reg.dirs[reg.ndirs++] = xstrdup(dirs[i]);
        }
        pthread_mutex_unlock(&reg.lock);
}

const struct workload *const *workload_all(void)
{
        pthread_mutex_lock(&reg.lock);
        load_all();
        pthread_mutex_unlock(&reg.lock);
        return (const struct workload *const *)reg.known;
}

const struct workload *const *workload_known(void)
{
        pthread_mutex_lock(&reg.lock);
        load_bundled();
        pthread_mutex_unlock(&reg.lock);
        return (const struct workload *const *)reg.known;
}

const char *workload_path_error(void)
{
        workload_all();
        return reg.error;
}

int workload_get(const char *name, const struct workload **ret, struct bd_err *err)
{
        struct workload *w;
        pthread_mutex_lock(&reg.lock);
        load_bundled();
        int r = make_named(name, &w, err);
        pthread_mutex_unlock(&reg.lock);
        *ret = w;
        return bd_err_printable(err, r);
}

const struct workload *workload_find(const char *name)
{
        const struct workload *w;
        struct bd_err err;
        workload_get(name, &w, &err);
        return w;
}

const struct workload *workload_lookup(const char *name, struct bd_err *err)
{
        const struct workload *w;
        if (workload_get(name, &w, err) < 0)
                return NULL;
        if (!w) {
                _cleanup_buf_ struct bd_buf list = BD_BUF_INIT;
                workload_names(&list, ", ");
                const struct workload *const *all = workload_all();
                size_t n = 0;
                while (all[n])
                        n++;
                _cleanup_free_ const char **names = xcalloc(n + 1, sizeof(*names));
                for (size_t i = 0; i < n; i++)
                        names[i] = all[i]->name;
                const char *close = str_closest_word(name, names);
                bd_err_set(err, -ENOENT, "unknown workload '%s'%s%s%s; known workloads: %s", name,
                           close ? " (did you mean '" : "", close ? close : "", close ? "'?)" : "", list.s);
        }
        return w;
}

void workload_names(struct bd_buf *out, const char *last)
{
        const struct workload *const *all = workload_all();
        for (const struct workload *const *w = all; *w; w++)
                buf_printf(out, "%s%s", w == all ? "" : w[1] ? ", " : last, (*w)->name);
}

bool workload_has_key(const struct workload *w, const char *key)
{
        for (const struct schema_key *k = w->keys; k->name; k++)
                if (streq(k->name, key))
                        return true;
        return false;
}

bool workload_command_names(const struct workload *w, const char *name)
{
        return command_names(w->command, name);
}

const char *workload_image_for(const struct workload *w, const char *runtime)
{
        for (int i = 0; i < _WI_MAX; i++)
                if (streq(workload_image_names[i], runtime))
                        return w->image[i];
        return NULL;
}

const cJSON *workload_key_spec(const struct workload *w, const char *key)
{
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(json_get(w->spec, "keys"), key);
        return cJSON_IsObject(k) ? k : NULL;
}

/* Workloads rebuilt from what runs recorded, kept for the life of the
 * program (a report reads a few). */
static struct recorded {
        struct recorded *next;
        char *text;
        struct workload *w;
} *recorded;

const struct workload *workload_recorded(const char *name, const char *label, const char *spec_text,
                                         struct bd_err *err)
{
        pthread_mutex_lock(&reg.lock);
        load_bundled(); /* a section it shares is one of theirs */
        for (struct recorded *r = recorded; r; r = r->next)
                if (streq(r->w->name, name) && streq(r->text, spec_text)) {
                        pthread_mutex_unlock(&reg.lock);
                        return r->w;
                }
        int rc;
        struct workload *w = NULL;
        cJSON *spec = cJSON_Parse(spec_text);
        if (!cJSON_IsObject(spec)) {
                cJSON_Delete(spec);
                rc = bd_err_set(err, -EINVAL, "%s: the recorded workload is not a JSON object", label);
        } else {
                cJSON_DeleteItemFromObjectCaseSensitive(spec, "extends");
                cJSON_DeleteItemFromObjectCaseSensitive(spec, "abstract");
                struct src s = { label, spec_text };
                rc = check_fields(spec, top_fields, NULL, &s, err);
                struct wfile f = { .name = (char *)name, .label = (char *)label, .text = (char *)spec_text };
                if (rc >= 0)
                        rc = build(&f, spec, &w, err);  /* takes spec */
                else
                        cJSON_Delete(spec);
        }
        if (rc >= 0) {
                struct recorded *r = xcalloc(1, sizeof(*r));
                *r = (struct recorded){ recorded, xstrdup(spec_text), w };
                recorded = r;
        }
        pthread_mutex_unlock(&reg.lock);
        return rc < 0 ? NULL : w;
}

int workload_check_text(const char *text, const char *name, const char *label, struct bd_err *err)
{
        struct wfile f;
        int r = read_text(text, name, label, 0, &f, err);
        if (r < 0)
                return bd_err_printable(err, r);
        pthread_mutex_lock(&reg.lock);
        load_bundled(); /* its possible bases */
        /* resolved as a file of the path would be, then forgotten */
        struct workload *w = NULL;
        r = make(&f, &w, err);
        workload_free(w);
        wfile_release(&f);
        pthread_mutex_unlock(&reg.lock);
        return bd_err_printable(err, r);
}

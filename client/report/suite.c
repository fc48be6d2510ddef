/* suite.c: see suite.h.  cJSON keeps no positions, so the lines in errors
 * come from a small scanner of the comment-stripped text that finds a key
 * among the members of one object (json_key_line() searches the whole text,
 * which finds a benchmark's "workload" in the next one when its own is
 * missing). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "suite.h"
#include "fs.h"
#include "json.h"
#include "macro.h"
#include "schema.h"
#include "stats.h"
#include "strutil.h"
#include "system.h"
#include "workload.h"

#define BASELINES_FILE_MAX (4u << 20)
#define BENCHMARK_NAME_MAX 64
#define STEPS_MAX 1000000000L

/* ---- positions in the stripped text ---- */

struct ctx {
        const char *label;
        const char *text;               /* comments stripped: offsets match the file's */
};

static const char *skip_ws(const char *p)
{
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
                p++;
        return p;
}

/* p at an opening quote: the character after the closing one */
static const char *skip_string(const char *p)
{
        for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1])
                        p++;
        return *p ? p + 1 : p;
}

/* The opening quote of the nth (0-based) member named key of the object
 * that starts at obj ('{'); NULL when there is none. */
static const char *member_pos(const char *obj, const char *key, int nth)
{
        if (!obj || *obj != '{')
                return NULL;
        size_t klen = strlen(key);
        int depth = 0;
        for (const char *p = obj; *p;) {
                if (*p == '"') {
                        const char *end = skip_string(p);
                        if (depth == 1 && *skip_ws(end) == ':' && (size_t)(end - p) == klen + 2 &&
                            memcmp(p + 1, key, klen) == 0 && nth-- == 0)
                                return p;
                        p = end;
                        continue;
                }
                if (*p == '{' || *p == '[')
                        depth++;
                else if ((*p == '}' || *p == ']') && --depth == 0)
                        return NULL;
                p++;
        }
        return NULL;
}

/* The value of the member whose key starts at p. */
static const char *member_value(const char *p)
{
        if (!p)
                return NULL;
        p = skip_ws(skip_string(p));
        return *p == ':' ? skip_ws(p + 1) : NULL;
}

static int line_at(const struct ctx *c, const char *p)
{
        int line = 1;
        if (!p)
                return 1;
        for (const char *q = c->text; q < p && *q; q++)
                line += *q == '\n';
        return line;
}

_printf_(4, 5)
static int fail(struct bd_err *err, const struct ctx *c, const char *at, const char *fmt, ...)
{
        char msg[768];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        /* keys and values may hold escaped newlines: the error stays one line */
        str_sanitize(msg, sizeof(msg), msg, "?");
        return bd_err_set(err, -EINVAL, "%s:%d: %s", c->label, line_at(c, at), msg);
}

/* The key's position in the object at obj, or the object's own when the
 * scanner cannot find it (a key written with escapes). */
static const char *key_at(const char *obj, const char *key)
{
        const char *p = member_pos(obj, key, 0);
        return p ? p : obj;
}

/* The value of a key of the object at obj, or where key_at() points. */
static const char *value_at(const char *obj, const char *key)
{
        const char *v = member_value(member_pos(obj, key, 0));
        return v ? v : key_at(obj, key);
}

/* A file that names a benchmark twice would lose one silently. */
static int check_duplicates(const struct ctx *c, const cJSON *obj, const char *pos, struct bd_err *err)
{
        if (!cJSON_IsObject(obj))
                return 0;
        for (const cJSON *e = obj->child; e; e = e->next) {
                int nth = 0;
                for (const cJSON *p = obj->child; p != e; p = p->next)
                        nth += streq(p->string, e->string);
                const char *kp = member_pos(pos, e->string, nth);
                if (nth)
                        return fail(err, c, kp ? kp : pos, "duplicate key '%s'", e->string);
                int r = check_duplicates(c, e, kp ? member_value(kp) : NULL, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* An unclosed block comment's start, for its line. */
static const char *unclosed_comment(const char *t)
{
        bool in_str = false;
        for (const char *p = t; *p; p++) {
                if (in_str) {
                        if (*p == '\\' && p[1])
                                p++;
                        else if (*p == '"')
                                in_str = false;
                } else if (*p == '"') {
                        in_str = true;
                } else if (p[0] == '/' && p[1] == '/') {
                        p = strchr(p, '\n');
                        if (!p)
                                break;
                } else if (p[0] == '/' && p[1] == '*') {
                        const char *e = strstr(p + 2, "*/");
                        if (!e)
                                return p;
                        p = e + 1;
                }
        }
        return NULL;
}

/* ---- checks ---- */

static int unknown_key(struct bd_err *err, const struct ctx *c, const char *at, const char *prefix,
                       const char *key, const char *const *known)
{
        const char *s = str_closest_word(key, known);
        if (s)
                return fail(err, c, at, "%sunknown key '%s' (did you mean '%s'?)", prefix, key, s);
        return fail(err, c, at, "%sunknown key '%s'", prefix, key);
}

static int get_number(struct bd_err *err, const struct ctx *c, const cJSON *obj, const char *pos,
                      const char *prefix, const char *key, double lo, double hi, double *ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
        if (!v)
                return 0;
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi))
                return fail(err, c, key_at(pos, key), "%s'%s' must be a number in [%g, %g]", prefix, key, lo, hi);
        *ret = v->valuedouble;
        return 0;
}

static int get_steps(struct bd_err *err, const struct ctx *c, const cJSON *obj, const char *pos,
                     const char *prefix, const char *key, long lo, long *ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
        if (!v)
                return 0;
        double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        if (!(d >= (double)lo && d <= (double)STEPS_MAX && d == floor(d)))
                return fail(err, c, key_at(pos, key), "%s'%s' must be an integer in [%ld, %ld]", prefix, key, lo,
                            STEPS_MAX);
        *ret = (long)d;
        return 0;
}

static bool valid_name(const char *s)
{
        size_t n = strlen(s);
        /* a letter or digit first: names become file names and arguments */
        if (!n || n > BENCHMARK_NAME_MAX || !isalnum((unsigned char)s[0]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
                        return false;
        return true;
}

/* A "set" key as a system key: the workload's own keys get its section. */
static char *set_full_key(const char *workload, const char *key)
{
        const struct workload *w = workload_find(workload);
        if (w && workload_has_key(w, key))
                return xasprintf("%s.%s", w->section, key);
        return xstrdup(key);
}

/* {"a": {"b": value}} for "a.b" */
static cJSON *nest(const char *dotted, const cJSON *value)
{
        cJSON *root = cJSON_CreateObject(), *cur = root;
        _cleanup_free_ char *copy = xstrdup(dotted);
        char *save = NULL, *part = strtok_r(copy, ".", &save);
        while (part) {
                char *next = strtok_r(NULL, ".", &save);
                if (!next) {
                        cJSON_AddItemToObject(cur, part, cJSON_Duplicate(value, true));
                        break;
                }
                cur = cJSON_AddObjectToObject(cur, part);
                part = next;
        }
        return root;
}

static int check_set(struct bd_err *err, const struct ctx *c, const char *prefix, const char *name,
                     const struct workload *w, const cJSON *set, const char *pos)
{
        for (const cJSON *e = set->child; e; e = e->next) {
                const char *at = key_at(pos, e->string);
                const char *key = e->string;
                if (cJSON_IsObject(e) || cJSON_IsNull(e))
                        return fail(err, c, at, "%s'set': '%s' must be a number, string, boolean or list", prefix,
                                    key);
                if (!*key || key[0] == '.' || str_has_suffix(key, ".") || strstr(key, ".."))
                        return fail(err, c, at, "%s'set': malformed key '%s'", prefix, key);
                if (streq(key, "batch_size") && !workload_has_key(w, "batch_size") &&
                    workload_has_key(w, "ims_per_batch")) {
                        /* images per rank, as a sweep's batch_size: the run's ims_per_batch is
                         * this times its ranks (cmd-suite.c, once the system is known) */
                        if (!cJSON_IsNumber(e) || e->valuedouble < 1 || e->valuedouble > 65536 ||
                            e->valuedouble != floor(e->valuedouble))
                                return fail(err, c, at, "%s'set': 'batch_size' is a whole number of images per "
                                            "rank, 1 to 65536", prefix);
                        continue;
                }
                _cleanup_free_ char *full = set_full_key(w->section, key);
                /* the steps are the benchmark's own keys: one place to say them */
                size_t wl = strlen(w->section);
                const char *own = strncmp(full, w->section, wl) == 0 && full[wl] == '.' ? full + wl + 1 : NULL;
                if (own && (streq(own, "benchmark_steps") || streq(own, "warmup_steps")))
                        return fail(err, c, at, "%s'set': give '%s' beside 'set', not in it", prefix, own);
                bool map_value;
                const struct schema_key *k = schema_lookup(full, &map_value);
                if (!k) {
                        const char *names[128];
                        size_t n = 0;
                        for (const struct schema_key *s = w->keys; s->name && n + 1 < ARRAY_SIZE(names); s++)
                                names[n++] = s->name;
                        names[n] = NULL;
                        const char *s = str_closest_word(key, names);
                        if (!s)
                                s = schema_suggest(full);
                        if (s)
                                return fail(err, c, at, "%s'set': unknown key '%s' (did you mean '%s'?)", prefix,
                                            key, s);
                        return fail(err, c, at, "%s'set': unknown key '%s': neither a key of '%s' nor a system key",
                                    prefix, key, w->name);
                }
                if (streq(full, "extends"))
                        return fail(err, c, at, "%s'set': 'extends' cannot be overridden", prefix);
                if (k->type == S_OBJECT || (k->type == S_MAP && !map_value) || k->type == S_OBJECT_LIST)
                        return fail(err, c, at, "%s'set': '%s' is a section; set one of its keys", prefix, key);
                /* the schema's own check, as for --set; its message names the key */
                _cleanup_json_ cJSON *root = nest(full, e);
                _cleanup_free_ char *label = xasprintf("%s:%d: benchmark '%s'", c->label, line_at(c, at), name);
                int r = schema_validate(root, label, NULL, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const char *const top_keys[] = {
        "description", "performance_tolerance", "deviation_tolerance", "benchmarks", NULL,
};
static const char *const bench_keys[] = {
        "workload", "set", "benchmark_steps", "warmup_steps", "targets",
        "performance_tolerance", "deviation_tolerance", NULL,
};

static bool known(const char *const *keys, const char *key)
{
        for (; *keys; keys++)
                if (streq(*keys, key))
                        return true;
        return false;
}

static int parse_benchmark(struct bd_err *err, const struct ctx *c, const struct baselines *file,
                           const cJSON *j, const char *keypos, struct baseline *ret)
{
        const char *name = j->string;
        const char *pos = member_value(keypos);
        if (!pos)
                pos = keypos;   /* key_at() on it: the benchmark's own line */
        if (!valid_name(name))
                return fail(err, c, keypos,
                            "benchmark '%s': a name is 1 to %d of A-Z a-z 0-9 . _ -, starting with a letter or digit",
                            name, BENCHMARK_NAME_MAX);
        _cleanup_free_ char *prefix = xasprintf("benchmark '%s': ", name);
        if (!cJSON_IsObject(j))
                return fail(err, c, keypos, "%sexpected an object, got %s", prefix, json_type_name(j));
        for (const cJSON *e = j->child; e; e = e->next)
                if (!known(bench_keys, e->string))
                        return unknown_key(err, c, key_at(pos, e->string), prefix, e->string, bench_keys);

        const cJSON *wj = cJSON_GetObjectItemCaseSensitive(j, "workload");
        if (!wj)
                return fail(err, c, keypos, "%sno 'workload'", prefix);
        if (!cJSON_IsString(wj))
                return fail(err, c, key_at(pos, "workload"), "%s'workload' must be a string", prefix);
        struct bd_err werr;
        const struct workload *w = workload_lookup(wj->valuestring, &werr);
        if (!w)
                return fail(err, c, key_at(pos, "workload"), "%s%s", prefix, werr.msg);

        ret->name = xstrdup(name);
        ret->workload = xstrdup(w->name);
        ret->line = line_at(c, keypos);
        ret->benchmark_steps = BASELINE_BENCHMARK_STEPS;
        ret->warmup_steps = BASELINE_WARMUP_STEPS;
        ret->perf_tol = file->perf_tol;
        ret->dev_tol = file->dev_tol;

        const cJSON *set = cJSON_GetObjectItemCaseSensitive(j, "set");
        if (set && !cJSON_IsObject(set))
                return fail(err, c, key_at(pos, "set"), "%s'set' must be an object of KEY: VALUE", prefix);
        if (set) {
                int r = check_set(err, c, prefix, name, w, set, value_at(pos, "set"));
                if (r < 0)
                        return r;
        }
        ret->set = set ? cJSON_Duplicate(set, true) : cJSON_CreateObject();

        int r = get_steps(err, c, j, pos, prefix, "benchmark_steps", 1, &ret->benchmark_steps);
        if (r >= 0)
                r = get_steps(err, c, j, pos, prefix, "warmup_steps", 0, &ret->warmup_steps);
        if (r >= 0)
                r = get_number(err, c, j, pos, prefix, "performance_tolerance", -1, 1, &ret->perf_tol);
        if (r >= 0)
                r = get_number(err, c, j, pos, prefix, "deviation_tolerance", 0, 1, &ret->dev_tol);
        if (r < 0)
                return r;

        const cJSON *targets = cJSON_GetObjectItemCaseSensitive(j, "targets");
        if (targets && !cJSON_IsObject(targets))
                return fail(err, c, key_at(pos, "targets"),
                            "%s'targets' must be an object of system or device name: rate", prefix);
        const char *tpos = value_at(pos, "targets");
        for (const cJSON *t = targets ? targets->child : NULL; t; t = t->next) {
                const char *at = key_at(tpos, t->string);
                /* an empty key would be part of every device name */
                if (!*t->string)
                        return fail(err, c, at, "%starget '': the key must name a system or part of a device",
                                    prefix);
                if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || !(t->valuedouble > 0))
                        return fail(err, c, at, "%starget '%s' must be a positive number (%s)", prefix, t->string,
                                    w->result == RESULT_TIME_TO_TRAIN ? "images/s" : w->unit);
        }
        ret->targets = targets ? cJSON_Duplicate(targets, true) : cJSON_CreateObject();
        return 0;
}

static void baselines_releasep(struct baselines *b)
{
        baselines_release(b);
}

int baselines_parse(const char *text, const char *label, struct baselines *ret, struct bd_err *err)
{
        _cleanup_free_ char *stripped = xstrdup(text);
        struct ctx c = { label, stripped };
        if (json_strip_comments(stripped) < 0) {
                c.text = text;
                return fail(err, &c, unclosed_comment(text), "unterminated /* comment");
        }
        _cleanup_json_ cJSON *root = NULL;
        int r = json_parse(stripped, label, &root, err);
        if (r < 0)
                return r;
        const char *pos = skip_ws(stripped);
        if (!cJSON_IsObject(root))
                return fail(err, &c, pos, "expected a JSON object at the top, got %s", json_type_name(root));
        r = check_duplicates(&c, root, pos, err);
        if (r < 0)
                return r;

        _cleanup_(baselines_releasep) struct baselines b = {
                .path = xstrdup(label),
                .perf_tol = BASELINES_PERF_TOL,
                .dev_tol = BASELINES_DEV_TOL,
        };
        for (const cJSON *e = root->child; e; e = e->next)
                if (!known(top_keys, e->string))
                        return unknown_key(err, &c, key_at(pos, e->string), "", e->string, top_keys);
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "description");
        if (d && !cJSON_IsString(d))
                return fail(err, &c, key_at(pos, "description"), "'description' must be a string");
        if (d)
                b.description = xstrdup(d->valuestring);
        r = get_number(err, &c, root, pos, "", "performance_tolerance", -1, 1, &b.perf_tol);
        if (r >= 0)
                r = get_number(err, &c, root, pos, "", "deviation_tolerance", 0, 1, &b.dev_tol);
        if (r < 0)
                return r;

        const cJSON *benchmarks = cJSON_GetObjectItemCaseSensitive(root, "benchmarks");
        const char *bkey = key_at(pos, "benchmarks");
        if (!benchmarks)
                return fail(err, &c, pos, "no 'benchmarks': an object of name: benchmark");
        if (!cJSON_IsObject(benchmarks))
                return fail(err, &c, bkey, "'benchmarks' must be an object of name: benchmark, got %s",
                            json_type_name(benchmarks));
        size_t n = (size_t)cJSON_GetArraySize(benchmarks);
        if (!n)
                return fail(err, &c, bkey, "'benchmarks' is empty: a suite needs at least one");
        b.b = xcalloc(n, sizeof(*b.b));
        const char *bpos = value_at(pos, "benchmarks");
        for (const cJSON *j = benchmarks->child; j; j = j->next) {
                const char *kp = key_at(bpos, j->string);
                r = parse_benchmark(err, &c, &b, j, kp, &b.b[b.n++]);
                if (r < 0)
                        return r;
        }
        *ret = b;
        memset(&b, 0, sizeof(b));
        return 0;
}

int baselines_load(const char *path, struct baselines *ret, struct bd_err *err)
{
        _cleanup_free_ char *text = NULL;
        int r = fs_read_file(path, BASELINES_FILE_MAX, &text, NULL, err);
        if (r < 0)
                return r;
        return baselines_parse(text, path, ret, err);
}

void baselines_release(struct baselines *b)
{
        if (!b)
                return;
        for (size_t i = 0; i < b->n; i++) {
                free(b->b[i].name);
                free(b->b[i].workload);
                cJSON_Delete(b->b[i].set);
                cJSON_Delete(b->b[i].targets);
        }
        free(b->b);
        free(b->path);
        free(b->description);
        memset(b, 0, sizeof(*b));
}

double baseline_target(const struct baseline *b, const char *system, const char *device, const char **ret_key)
{
        const cJSON *t, *best = NULL;
        size_t best_len = 0;
        cJSON_ArrayForEach(t, b->targets)
                if (system && streq(t->string, system)) {
                        best = t;
                        break;
                }
        if (!best && device)
                cJSON_ArrayForEach(t, b->targets) {
                        size_t len = strlen(t->string);
                        if (len > best_len && strcasestr(device, t->string)) {
                                best = t;
                                best_len = len;
                        }
                }
        if (ret_key)
                *ret_key = best ? best->string : NULL;
        return best ? best->valuedouble : NAN;
}

char **baseline_sets(const struct baseline *b)
{
        size_t n = (size_t)cJSON_GetArraySize(b->set), i = 0;
        char **v = xcalloc(n + 1, sizeof(*v));
        const cJSON *e;
        cJSON_ArrayForEach(e, b->set) {
                _cleanup_free_ char *key = set_full_key(b->workload, e->string);
                _cleanup_free_ char *val = cJSON_IsString(e) ? xstrdup(e->valuestring) : cJSON_PrintUnformatted(e);
                v[i++] = xasprintf("%s=%s", key, val ? val : "");
        }
        return v;
}

char **baseline_run_sets(const struct baseline *b, long ranks)
{
        const struct workload *w = workload_find(b->workload);
        char **own = baseline_sets(b);
        size_t n = 0, k = 0;
        while (own[n])
                n++;
        char **v = xcalloc(n + 5, sizeof(*v));
        bool test = w && workload_has_key(w, "test_ims_per_batch");
        for (size_t i = 0; i < n; i++) {
                if (!w || !str_has_prefix(own[i], "batch_size=")) {
                        v[k++] = own[i];
                        continue;
                }
                /* a batch of all ranks' (ims_per_batch): images per rank,
                 * as a sweep's batch_size is, in its place */
                if (ranks > 0) {
                        long batch = strtol(own[i] + strlen("batch_size="), NULL, 10);
                        v[k++] = xasprintf("%s.ims_per_batch=%ld", w->section, batch * ranks);
                        if (test)
                                v[k++] = xasprintf("%s.test_ims_per_batch=%ld", w->section, batch * ranks);
                }
                free(own[i]);
        }
        free(own);
        if (w && workload_has_key(w, "benchmark_steps")) {
                v[k++] = xasprintf("%s.benchmark_steps=%ld", w->section, b->benchmark_steps);
                v[k++] = xasprintf("%s.warmup_steps=%ld", w->section, b->warmup_steps);
        }
        v[k] = NULL;
        return v;
}

const char *baseline_unit(const struct baseline *b)
{
        const struct workload *w = workload_find(b->workload);
        return w && w->result != RESULT_TIME_TO_TRAIN ? w->unit : "images/s";
}

/* ---- the arithmetic ---- */

/* The rates that are rates: a NaN or a zero is a run that failed. */
static size_t good_rates(const struct suite_input *in, double *out)
{
        size_t n = 0;
        for (size_t i = 0; i < in->n; i++)
                if (isfinite(in->rates[i]) && in->rates[i] > 0)
                        out[n++] = in->rates[i];
        return n;
}

void suite_compute(const struct baselines *b, const char *system, const char *device,
                   const struct suite_input *in, struct suite_row *rows, struct suite_verdict *v)
{
        _cleanup_free_ double *sdpct = xcalloc(b->n + 1, sizeof(double));
        size_t nsd = 0, ndiff = 0;
        double sum_diff = 0;
        v->all_results = true;
        for (size_t i = 0; i < b->n; i++) {
                const struct baseline *bl = &b->b[i];
                struct suite_row *row = &rows[i];
                _cleanup_free_ double *rates = xcalloc(in[i].n + 1, sizeof(double));
                size_t n = good_rates(&in[i], rates);
                *row = (struct suite_row){
                        .name = bl->name,
                        .n = n,
                        .failed = in[i].failed + (in[i].n - n),
                        .target = NAN, .result = NAN, .sd = NAN, .sdpct = NAN, .diff = NAN,
                };
                if (n) {
                        row->has_result = true;
                        row->result = stats_olympic_mean(rates, n);
                }
                /* one run says nothing of the spread: no sd rather than 0 */
                if (n >= 2) {
                        struct stats s;
                        stats_summary(rates, n, &s);
                        row->has_sd = true;
                        row->sd = s.sd;
                        row->sdpct = s.sd / row->result;
                        sdpct[nsd++] = row->sdpct;
                }
                row->target = baseline_target(bl, system, device, &row->target_key);
                row->has_target = !isnan(row->target);
                if (row->has_result && row->has_target) {
                        row->diff = (row->result - row->target) / row->target;
                        sum_diff += row->diff;
                        ndiff++;
                }
                row->pass = row->has_result && row->has_target && row->has_sd && row->diff >= bl->perf_tol &&
                            row->sdpct <= bl->dev_tol && row->failed == 0;
                if (!row->has_result)
                        v->all_results = false;
        }
        v->q80_sdpct = nsd ? stats_quantile(sdpct, nsd, 0.8) : NAN;
        v->dev_ok = nsd && v->q80_sdpct < b->dev_tol;
        v->mean_diff = ndiff ? sum_diff / (double)ndiff : NAN;
        v->perf_ok = ndiff && v->mean_diff >= b->perf_tol;
        v->pass = v->all_results && v->dev_ok && v->perf_ok;
}

/* ---- printing ---- */

/* A rate: 4 significant digits, whole numbers from 10000 on; "-" when absent. */
static const char *fmt_num(char *buf, size_t n, double v)
{
        if (!isfinite(v))
                snprintf(buf, n, "-");
        else if (fabs(v) >= 1e4)
                snprintf(buf, n, "%.0f", v);
        else
                snprintf(buf, n, "%.4g", v);
        return buf;
}

/* A fraction as a percent with one decimal ("+21.3%", "2.1%"); never "-0.0". */
static const char *fmt_pct(char *buf, size_t n, double frac, bool sign)
{
        if (!isfinite(frac)) {
                snprintf(buf, n, "-");
                return buf;
        }
        double p = round(frac * 1000) / 10;
        if (p == 0)
                p = 0;
        snprintf(buf, n, sign ? "%+.1f%%" : "%.1f%%", p);
        return buf;
}

static const char *yes_no(bool b)
{
        return b ? "yes" : "no";
}

/* Why a row does not pass, "yes" when it does. */
static void pass_text(struct bd_buf *out, const struct baseline *bl, const struct suite_row *r)
{
        char a[32], t[32];
        if (r->pass) {
                buf_puts(out, "yes");
                return;
        }
        buf_puts(out, "no:");
        const char *sep = " ";
        if (!r->has_result) {
                buf_printf(out, "%sno result", sep);
                sep = "; ";
        }
        if (r->failed) {
                buf_printf(out, "%s%zu failed run%s", sep, r->failed, r->failed == 1 ? "" : "s");
                sep = "; ";
        }
        if (!r->has_target) {
                buf_printf(out, "%sno target", sep);
                sep = "; ";
        } else if (r->has_result && !(r->diff >= bl->perf_tol)) {
                buf_printf(out, "%sdiff %s < %s", sep, fmt_pct(a, sizeof(a), r->diff, true),
                           fmt_pct(t, sizeof(t), bl->perf_tol, true));
                sep = "; ";
        }
        if (r->has_result && !r->has_sd) {
                buf_printf(out, "%sone run: no sd", sep);
        } else if (r->has_sd && !(r->sdpct <= bl->dev_tol)) {
                buf_printf(out, "%ssd%% %s > %s", sep, fmt_pct(a, sizeof(a), r->sdpct, false),
                           fmt_pct(t, sizeof(t), bl->dev_tol, false));
        }
}

static int name_width(const struct baselines *b)
{
        int w = (int)strlen("BENCHMARK");
        for (size_t i = 0; i < b->n; i++)
                if ((int)strlen(b->b[i].name) > w)
                        w = (int)strlen(b->b[i].name);
        return w;
}

void suite_print(FILE *f, const struct baselines *b, const struct suite_row *rows, const struct suite_verdict *v)
{
        int w = name_width(b);
        char tg[32], res[32], sd[32], sdp[32], diff[32];
        fprintf(f, "%-*s  %4s  %6s  %9s  %9s  %9s  %6s  %8s  %-8s  %s\n", w, "BENCHMARK", "RUNS", "FAILED", "TARGET",
                "RESULT", "SD", "SD%", "DIFF", "UNIT", "PASS");
        for (size_t i = 0; i < b->n; i++) {
                const struct suite_row *r = &rows[i];
                _cleanup_buf_ struct bd_buf pass = BD_BUF_INIT;
                pass_text(&pass, &b->b[i], r);
                fprintf(f, "%-*s  %4zu  %6zu  %9s  %9s  %9s  %6s  %8s  %-8s  %s\n", w, r->name, r->n, r->failed,
                        fmt_num(tg, sizeof(tg), r->target), fmt_num(res, sizeof(res), r->result),
                        fmt_num(sd, sizeof(sd), r->sd), fmt_pct(sdp, sizeof(sdp), r->sdpct, false),
                        fmt_pct(diff, sizeof(diff), r->diff, true), baseline_unit(&b->b[i]), pass.s);
        }

        /* where each target came from, and what has none */
        _cleanup_buf_ struct bd_buf from = BD_BUF_INIT, none = BD_BUF_INIT;
        for (size_t i = 0; i < b->n; i++) {
                if (rows[i].has_target)
                        buf_printf(&from, "%s%s from '%s'", from.len ? ", " : "", rows[i].name, rows[i].target_key);
                else
                        buf_printf(&none, "%s%s", none.len ? ", " : "", rows[i].name);
        }
        if (from.len)
                fprintf(f, "targets: %s\n", from.s);
        if (none.len)
                fprintf(f, "no target: %s (a benchmark without one does not pass; add one to its \"targets\" in %s, "
                        "keyed by the system name or a part of the device name)\n", none.s, b->path);

        char q[32], tol[32], md[32], ptol[32];
        _cleanup_buf_ struct bd_buf missing = BD_BUF_INIT;
        for (size_t i = 0; i < b->n; i++)
                if (!rows[i].has_result)
                        buf_printf(&missing, "%s%s", missing.len ? ", " : "", rows[i].name);
        fprintf(f, "verdict: %s (every benchmark produced a result: %s", v->pass ? "PASS" : "FAIL",
                yes_no(v->all_results));
        if (!v->all_results)
                fprintf(f, ", none from %s", missing.s);
        fmt_pct(tol, sizeof(tol), b->dev_tol, false);
        if (isnan(v->q80_sdpct))
                fprintf(f, "; 80th percentile of sd%% unknown (no benchmark has 2 runs) < %s: no", tol);
        else
                fprintf(f, "; 80th percentile of sd%% %s < %s: %s", fmt_pct(q, sizeof(q), v->q80_sdpct, false), tol,
                        yes_no(v->dev_ok));
        fmt_pct(ptol, sizeof(ptol), b->perf_tol, true);
        if (isnan(v->mean_diff))
                fprintf(f, "; mean diff unknown (no benchmark has a result and a target) >= %s: no)\n", ptol);
        else
                fprintf(f, "; mean diff %s >= %s: %s)\n", fmt_pct(md, sizeof(md), v->mean_diff, true), ptol,
                        yes_no(v->perf_ok));
}

/* JSON numbers: null where absent */
/* Percents rounded to 1e-6 so that 0.021 * 100 prints as 2.1. */
static void add_pct(cJSON *o, const char *key, double frac)
{
        json_add_number(o, key, isfinite(frac) ? round(frac * 1e8) / 1e6 : NAN);
}

void suite_json(struct bd_buf *out, const struct baselines *b, const struct suite_row *rows,
                const struct suite_verdict *v)
{
        _cleanup_json_ cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "baselines", b->path);
        if (b->description)
                cJSON_AddStringToObject(root, "description", b->description);
        else
                cJSON_AddNullToObject(root, "description");
        cJSON *arr = cJSON_AddArrayToObject(root, "benchmarks");
        for (size_t i = 0; i < b->n; i++) {
                const struct suite_row *r = &rows[i];
                const struct baseline *bl = &b->b[i];
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "name", r->name);
                cJSON_AddStringToObject(o, "workload", bl->workload);
                cJSON_AddStringToObject(o, "unit", baseline_unit(bl));
                cJSON_AddNumberToObject(o, "runs", (double)r->n);
                cJSON_AddNumberToObject(o, "failed", (double)r->failed);
                json_add_number(o, "target", r->target);
                if (r->target_key)
                        cJSON_AddStringToObject(o, "target_key", r->target_key);
                else
                        cJSON_AddNullToObject(o, "target_key");
                json_add_number(o, "result", r->result);
                json_add_number(o, "sd", r->sd);
                add_pct(o, "sd_pct", r->sdpct);
                add_pct(o, "diff_pct", r->diff);
                add_pct(o, "performance_tolerance_pct", bl->perf_tol);
                add_pct(o, "deviation_tolerance_pct", bl->dev_tol);
                cJSON_AddBoolToObject(o, "pass", r->pass);
                cJSON_AddItemToArray(arr, o);
        }
        cJSON *vo = cJSON_AddObjectToObject(root, "verdict");
        cJSON_AddBoolToObject(vo, "pass", v->pass);
        cJSON_AddBoolToObject(vo, "all_results", v->all_results);
        add_pct(vo, "sd_pct_q80", v->q80_sdpct);
        add_pct(vo, "deviation_tolerance_pct", b->dev_tol);
        cJSON_AddBoolToObject(vo, "deviation_ok", v->dev_ok);
        add_pct(vo, "mean_diff_pct", v->mean_diff);
        add_pct(vo, "performance_tolerance_pct", b->perf_tol);
        cJSON_AddBoolToObject(vo, "performance_ok", v->perf_ok);
        _cleanup_free_ char *text = cJSON_Print(root);
        buf_puts(out, text);
        buf_putc(out, '\n');
}

void suite_print_compare(FILE *f, const struct baselines *b, const struct suite_input *before,
                         const struct suite_input *after)
{
        int w = name_width(b);
        fprintf(f, "%-*s  %9s  %9s  %8s  %8s  %6s  %8s  %-8s  %s\n", w, "BENCHMARK", "BEFORE", "AFTER", "CHANGE", "T",
                "DF", "P", "UNIT", "SIGNIFICANCE");
        for (size_t i = 0; i < b->n; i++) {
                _cleanup_free_ double *x = xcalloc(before[i].n + 1, sizeof(double));
                _cleanup_free_ double *y = xcalloc(after[i].n + 1, sizeof(double));
                size_t nx = good_rates(&before[i], x), ny = good_rates(&after[i], y);
                double rx = stats_olympic_mean(x, nx), ry = stats_olympic_mean(y, ny);
                char sx[32], sy[32], ch[32], st[32] = "-", sdf[32] = "-", sp[32] = "-";
                const char *what;
                struct welch wt;
                if (nx < 2 || ny < 2) {
                        what = "too few runs";
                } else if (stats_welch(y, ny, x, nx, &wt) < 0) {
                        what = "no variance";
                } else {
                        snprintf(st, sizeof(st), "%.2f", wt.t);
                        snprintf(sdf, sizeof(sdf), "%.1f", wt.df);
                        snprintf(sp, sizeof(sp), "%.3g", wt.p);
                        what = !(wt.p < 0.05) ? "not significant" : wt.t > 0 ? "significant: faster"
                                                                            : "significant: slower";
                }
                fprintf(f, "%-*s  %9s  %9s  %8s  %8s  %6s  %8s  %-8s  %s\n", w, b->b[i].name,
                        fmt_num(sx, sizeof(sx), rx), fmt_num(sy, sizeof(sy), ry),
                        fmt_pct(ch, sizeof(ch), nx && ny ? (ry - rx) / rx : NAN, true), st, sdf, sp,
                        baseline_unit(&b->b[i]), what);
        }
}

/* cmd-sweep.c: benchctl sweep: the cartesian product of settings as one
 * recorded group of runs, run one cell after another, resumable and
 * cancelable as a whole.
 *
 * Every cell is an ordinary run (submit_run: Slurm or mpirun like any
 * other), with the cell's settings as --set overrides.  Cells run one at a
 * time: two throughput measurements sharing a machine measure each other.
 * The sweep's own keys: ranks (nodes from the system's GPUs, or ranks, per
 * node), nodes, batch_size (per rank), precision; any other key is the
 * workload section's or a dotted system key.  The learning rate follows the
 * global batch by a stated rule unless the sweep sets it (sweep.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "benchctl.h"
#include "fs.h"
#include "group.h"
#include "json.h"
#include "render.h"
#include "run.h"
#include "strutil.h"
#include "sweep.h"
#include "workload.h"

#define OPT_MODE 370
#define OPT_STEPS 371
#define OPT_WARMUP 372
#define OPT_RESUME 373
#define OPT_CANCEL 374
#define OPT_DRY 375
#define OPT_DATA 376
#define OPT_LOGDIR 377

static const struct bd_option options[] = {
        { "system", 's', "SYSTEM", "system to run on" },
        { "mode", OPT_MODE, "MODE", "throughput (default) or time-to-train" },
        { "runs", 'n', "N", "trials per cell (default: 1 for throughput, else the system's 'trials')" },
        { "steps", OPT_STEPS, "N", "throughput: timed steps per trial (default 20)" },
        { "warmup", OPT_WARMUP, "W", "throughput: untimed steps before them (default 5)" },
        { "resume", OPT_RESUME, "SWEEP", "run the cells of SWEEP that have not run (no WORKLOAD)" },
        { "cancel", OPT_CANCEL, "SWEEP", "cancel SWEEP: its running cell and every cell after it" },
        { "dry-run", OPT_DRY, NULL, "print the cells and their settings; run and record nothing" },
        { "data", OPT_DATA, "DIR", "dataset directory of every cell (sets paths.data)" },
        { "logdir", OPT_LOGDIR, "DIR", "log directory of every cell (sets paths.logs)" },
        COMMON_SYSTEM_OPTIONS,
        { 0 }
};

struct axis {
        char *key;
        char **values;
        int n;
};

struct cellspec {
        char **sets;            /* NULL-terminated */
        int nsets;
        cJSON *values;          /* KEY -> VALUE */
        long ranks, nodes, global_batch;
        char *label;
};

static void cellspec_release(struct cellspec *c)
{
        for (int i = 0; i < c->nsets; i++)
                free(c->sets[i]);
        free(c->sets);
        cJSON_Delete(c->values);
        free(c->label);
}

static void add_set(struct cellspec *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_set(struct cellspec *c, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *s = xvasprintf(fmt, ap);
        va_end(ap);
        c->sets = xrealloc(c->sets, (size_t)(c->nsets + 2) * sizeof(char *));
        c->sets[c->nsets++] = s;
        c->sets[c->nsets] = NULL;
}

static bool is_special(const char *k)
{
        return streq(k, "ranks") || streq(k, "nodes") || streq(k, "batch_size") || streq(k, "precision");
}

/* KEY as the sweep takes it: its own, WORKLOAD.KEY or a dotted system key;
 * the error names what it could have been. */
static int check_axis_key(const struct workload *w, const struct bd_system *base, const char *k, struct bd_err *err)
{
        if (is_special(k) || strchr(k, '.') || workload_has_key(w, k) || json_get(base->json, k))
                return 0;
        return bd_err_set(err, -EINVAL, "unknown sweep key '%s': not ranks, nodes, batch_size, precision, a key of "
                          "the %s section nor of system %s (other keys: SECTION.KEY)", k, w->section, base->name);
}

/* "ranks=2,4" -> axis; values are kept as text (they become --set values).
 * "\," is a comma inside a value: a list value of one cell
 * ("extra_args=--inject-nan\,3"). */
static int parse_axis(const char *s, struct axis *a, struct bd_err *err)
{
        const char *eq = strchr(s, '=');
        if (!eq || eq == s)
                return bd_err_set(err, -EINVAL, "--set '%s': expected KEY=VALUE[,VALUE...]", s);
        a->key = xstrndup(s, (size_t)(eq - s));
        _cleanup_buf_ struct bd_buf v = BD_BUF_INIT;
        for (const char *p = eq + 1;; p++) {
                if (*p == '\\' && p[1] == ',') {
                        buf_putc(&v, ',');
                        p++;
                        continue;
                }
                if (*p && *p != ',') {
                        buf_putc(&v, *p);
                        continue;
                }
                if (v.len == 0)
                        return bd_err_set(err, -EINVAL, "--set '%s': an empty value", s);
                a->values = xrealloc(a->values, (size_t)(a->n + 1) * sizeof(char *));
                a->values[a->n++] = xstrdup(v.s);
                buf_reset(&v);
                if (!*p)
                        break;
        }
        return 0;
}

static bool axis_pinned(const struct axis *ax, int nax, const struct workload *w, const char *key)
{
        _cleanup_free_ char *dotted = xasprintf("%s.%s", w->section, key);
        for (int i = 0; i < nax; i++)
                if (streq(ax[i].key, key) || streq(ax[i].key, dotted))
                        return true;
        return false;
}

static long num_value(const char *key, const char *v, long min, struct bd_err *err, int *r)
{
        long x;
        if (str_parse_long(v, &x) < 0 || x < min) {
                *r = bd_err_set(err, -EINVAL, "sweep key '%s': '%s' is not an integer >= %ld", key, v, min);
                return 0;
        }
        return x;
}

/* The system's own global batch: its section's global batch key, or its
 * per-rank batch x its ranks; 0 when the workload has no batch. */
static long system_global_batch(const struct workload *w, const struct bd_system *base)
{
        const cJSON *j = base->json, *sec = sys_get(j, w->section);
        if (workload_has_key(w, "batch_size"))
                return json_int(sec, "batch_size", 0) * sys_int(j, "nodes") * sys_int(j, "ranks_per_node");
        return json_int(sec, "ims_per_batch", 0);
}

/* The global batch the workload file's learning rate is for
 * (scaling.lr.base_batch), else the system's own. */
static long scaling_base(const struct workload *w, const struct bd_system *base)
{
        return json_int(w->spec, "scaling.lr.base_batch", system_global_batch(w, base));
}

/* The learning-rate rule of a sweep, in words (for the table): the
 * workload file's "scaling". */
static char *lr_rule(const struct workload *w, const struct bd_system *base, const struct axis *ax, int nax)
{
        const cJSON *sec = sys_get(base->json, w->section);
        const char *rule = json_str(w->spec, "scaling.lr.rule", "none");
        const char *key = json_str(w->spec, "scaling.lr.key", "lr");
        const char *wkey = json_str(w->spec, "scaling.warmup.key", NULL);
        long b = scaling_base(w, base);
        _cleanup_buf_ struct bd_buf warm = BD_BUF_INIT;
        if (wkey && streq(json_str(w->spec, "scaling.warmup.rule", "none"), "inverse"))
                buf_printf(&warm, "; %s%s x %ld / batch", wkey, axis_pinned(ax, nax, w, wkey) ? " (pinned)" : "", b);
        else if (wkey)
                buf_printf(&warm, "; %s unchanged", wkey);
        _cleanup_free_ char *from = json_get(w->spec, "scaling.lr.base_batch")
                                            ? xasprintf("global batch %ld", b)
                                            : xasprintf("the system's global batch %ld", b);
        if (streq(rule, "trainer"))
                return xasprintf("%s with %s %s%g%s", json_str(w->spec, "scaling.lr.help", "in the trainer"), key,
                                 axis_pinned(ax, nax, w, key) ? "set by the sweep, " : "", json_num(sec, key, 0),
                                 warm.len ? warm.s : "");
        if (streq(rule, "none"))
                return xstrdup("none (the workload file states no rule)");
        if (axis_pinned(ax, nax, w, key))
                return xasprintf("pinned: the sweep sets %s", key);
        if (streq(rule, "sqrt"))
                return xasprintf("square-root scaling from %s at %s %g: %s x sqrt(batch / %ld)%s", from, key,
                                 json_num(sec, key, 0), key, b, warm.s ? warm.s : "");
        return xasprintf("linear scaling (Goyal et al.) from %s at %s %g: %s x batch / %ld%s", from, key,
                         json_num(sec, key, 0), key, b, warm.s ? warm.s : "");
}

/* A warmup given as the rate's increment per iteration (scaling.warmup.
 * increment, when its condition holds: Mask R-CNN's mlperf_linear, which
 * starts at lr - iterations x increment): scaled so that the warmup starts
 * at the same fraction of the rate with the cell's rate and iterations. */
static void warmup_increment(const struct workload *w, const cJSON *sec, double lr0, double lr1, long w0, long w1,
                             const struct axis *ax, int nax, struct cellspec *c)
{
        const char *ik = json_str(w->spec, "scaling.warmup.increment.key", NULL);
        const char *when = json_str(w->spec, "scaling.warmup.increment.when", NULL);
        if (!ik || axis_pinned(ax, nax, w, ik) || lr0 <= 0 || w1 <= 0)
                return;
        if (when && !streq(json_str(sec, when, ""), json_str(w->spec, "scaling.warmup.increment.is", "")))
                return;
        add_set(c, "%s.%s=%.12g", w->section, ik, json_num(sec, ik, 0) * (lr1 / lr0) * ((double)w0 / (double)w1));
}

/* The learning rate and schedule of a cell of global batch g, as the
 * workload file's "scaling" says: the rate by its rule from base_batch
 * (linear: x g / base, sqrt: x sqrt(g / base)), an inverse warmup's
 * iterations / (g / base), and in time-to-train sweeps the schedule's
 * iterations as much fewer (a count rounded up, a list's items rounded);
 * nothing a sweep's own axis sets. */
static void scale_lr(const struct workload *w, const cJSON *sec, long g, long base, bool ttt, const struct axis *ax,
                     int nax, struct cellspec *c)
{
        const char *rule = json_str(w->spec, "scaling.lr.rule", "none");
        const char *key = json_str(w->spec, "scaling.lr.key", NULL);
        if (g == base || base <= 0 || !key || axis_pinned(ax, nax, w, key) ||
            (!streq(rule, "linear") && !streq(rule, "sqrt")))
                return;
        double f = (double)g / (double)base;
        /* the rate as the cell sets it (6 digits): what its warmup follows */
        double lr0 = json_num(sec, key, 0);
        char lr_text[32];
        snprintf(lr_text, sizeof(lr_text), "%.6g", lr0 * (streq(rule, "sqrt") ? sqrt(f) : f));
        double lr1 = strtod(lr_text, NULL);
        add_set(c, "%s.%s=%s", w->section, key, lr_text);
        const char *wkey = json_str(w->spec, "scaling.warmup.key", NULL);
        if (wkey && streq(json_str(w->spec, "scaling.warmup.rule", "none"), "inverse") &&
            !axis_pinned(ax, nax, w, wkey)) {
                long w0 = lround(json_num(sec, wkey, 0)), w1 = lround(json_num(sec, wkey, 0) / f);
                add_set(c, "%s.%s=%ld", w->section, wkey, w1);
                warmup_increment(w, sec, lr0, lr1, w0, w1, ax, nax, c);
        }
        const cJSON *k, *e;
        if (!ttt)
                return;
        cJSON_ArrayForEach(k, json_get(w->spec, "scaling.schedule")) {
                const cJSON *v = json_get(sec, k->valuestring);
                if (!v || axis_pinned(ax, nax, w, k->valuestring))
                        continue;
                if (cJSON_IsNumber(v)) {
                        add_set(c, "%s.%s=%ld", w->section, k->valuestring, (long)ceil(v->valuedouble / f));
                        continue;
                }
                if (cJSON_GetArraySize(v) == 0)
                        continue;
                _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
                cJSON_ArrayForEach(e, v)
                        buf_printf(&b, "%s%ld", b.len ? "," : "", lround(e->valuedouble / f));
                add_set(c, "%s.%s=%s", w->section, k->valuestring, b.s);
        }
}

/* The overrides of one cell: its values (idx: one per axis), throughput
 * mode's steps, and the learning rate and schedule that follow its global
 * batch. */
static int make_cell(const struct workload *w, const struct bd_system *base, const struct axis *ax, int nax,
                     const int *idx, bool ttt, long steps, long warmup, struct cellspec *c, struct bd_err *err)
{
        const cJSON *j = base->json, *sec = sys_get(j, w->section);
        long per = sys_int(j, "gpus_per_node") > 0 ? sys_int(j, "gpus_per_node") : sys_int(j, "ranks_per_node");
        long rpn = sys_int(j, "ranks_per_node");
        c->nodes = sys_int(j, "nodes");
        c->ranks = c->nodes * rpn;
        c->values = cJSON_CreateObject();
        long batch = -1;
        int r = 0;
        _cleanup_buf_ struct bd_buf label = BD_BUF_INIT;
        for (int i = 0; i < nax && r == 0; i++) {
                const char *k = ax[i].key, *v = ax[i].values[idx[i]];
                cJSON_AddStringToObject(c->values, k, v);
                if (ax[i].n > 1)
                        buf_printf(&label, "%s%s=%s", label.len ? " " : "", k, v);
                if (streq(k, "ranks")) {
                        long R = num_value(k, v, 1, err, &r);
                        if (r < 0)
                                break;
                        long n = (R + per - 1) / per;
                        if (n > sys_int(j, "nodes"))
                                return bd_err_set(err, -EINVAL, "ranks=%ld needs %ld nodes of %ld; system %s has %ld",
                                                  R, n, per, base->name, sys_int(j, "nodes"));
                        if (R % n)
                                return bd_err_set(err, -EINVAL, "ranks=%ld cannot be spread evenly over %ld nodes "
                                                  "of %ld", R, n, per);
                        c->ranks = R;
                        c->nodes = n;
                        rpn = R / n;
                        add_set(c, "nodes=%ld", n);
                        add_set(c, "ranks_per_node=%ld", rpn);
                } else if (streq(k, "nodes")) {
                        long n = num_value(k, v, 1, err, &r);
                        if (r < 0)
                                break;
                        c->nodes = n;
                        add_set(c, "nodes=%ld", n);
                } else if (streq(k, "batch_size")) {
                        batch = num_value(k, v, 1, err, &r);
                        if (r == 0 && !workload_has_key(w, "batch_size") && !workload_has_key(w, "ims_per_batch"))
                                return bd_err_set(err, -EINVAL, "sweep key 'batch_size': %s has no batch", w->name);
                } else if (streq(k, "precision")) {
                        if (!workload_has_key(w, "precision"))
                                return bd_err_set(err, -EINVAL, "sweep key 'precision': %s has no precision", w->name);
                        add_set(c, "%s.precision=%s", w->section, v);
                } else if (strchr(k, '.') || !workload_has_key(w, k))
                        add_set(c, "%s=%s", k, v);
                else
                        add_set(c, "%s.%s=%s", w->section, k, v);
        }
        if (r < 0)
                return r;
        /* nodes given and ranks not: ranks follow the nodes */
        c->ranks = c->nodes * rpn;
        c->label = label.len ? xstrdup(label.s) : xstrdup("(one cell)");
        if (workload_has_key(w, "batch_size")) {
                if (batch > 0)
                        add_set(c, "%s.batch_size=%ld", w->section, batch);
                c->global_batch = (batch > 0 ? batch : json_int(sec, "batch_size", 0)) * c->ranks;
        } else if (workload_has_key(w, "ims_per_batch")) {
                long g0 = json_int(sec, "ims_per_batch", 0), g = batch > 0 ? batch * c->ranks : g0;
                if (axis_pinned(ax, nax, w, "ims_per_batch"))
                        g = g0; /* the --set above already set it */
                c->global_batch = g;
                if (batch > 0)
                        add_set(c, "%s.ims_per_batch=%ld", w->section, g);
                if (batch > 0 && workload_has_key(w, "test_ims_per_batch") && !axis_pinned(ax, nax, w, "test_ims_per_batch"))
                        add_set(c, "%s.test_ims_per_batch=%ld", w->section, g);
        }
        if (c->global_batch > 0)
                scale_lr(w, sec, c->global_batch, scaling_base(w, base), ttt, ax, nax, c);
        if (!ttt && workload_has_key(w, "benchmark_steps")) {
                add_set(c, "%s.benchmark_steps=%ld", w->section, steps);
                add_set(c, "%s.warmup_steps=%ld", w->section, warmup);
        }
        return 0;
}

static char *sweep_id_new(void)
{
        _cleanup_free_ char *id = run_id_new();
        return xasprintf("sw-%s", id);
}

/* Runs the sweep's cells that have not run and, when every cell has, prints
 * its table: BD_EXIT_RUN when a cell's run did not complete every trial. */
static int run_sweep(struct bd_ctx *ctx, struct bd_store *s, const char *id)
{
        struct group_end end;
        int ret = group_run(ctx, s, id, "sweep", &end);
        if (ret != BD_EXIT_OK)
                return ret;
        printf("\n");
        fflush(stdout);
        struct sweep_data d;
        if ((ret = sweep_data_load(s, id, &d)) != BD_EXIT_OK)
                return ret;
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        sweep_text(&d, &out);
        fwrite(out.s, 1, out.len, stdout);
        sweep_data_release(&d);
        if (end.incomplete) {
                printf("%d of %d cells did not complete every trial\n", end.incomplete, end.ncells);
                ret = BD_EXIT_RUN;
        }
        return ret;
}

/* A sweep as the command line asks for it, resolved before anything runs. */
struct plan {
        const struct workload *w;
        struct bd_system base;
        const char *mode;
        bool ttt;                       /* time-to-train mode */
        long runs, steps, warmup;
        struct axis *ax;
        int nax;
        struct cellspec *cs;
        long ncells;
        char *rule;                     /* the learning-rate rule, in words */
};

static void plan_release(struct plan *p)
{
        for (int i = 0; i < p->nax; i++) {
                free(p->ax[i].key);
                for (int k = 0; k < p->ax[i].n; k++)
                        free(p->ax[i].values[k]);
                free(p->ax[i].values);
        }
        free(p->ax);
        for (long i = 0; p->cs && i < p->ncells; i++)
                cellspec_release(&p->cs[i]);
        free(p->cs);
        free(p->rule);
        system_release(&p->base);
}

/* An axis of one value: --data and --logdir, made absolute (the cells run
 * elsewhere, later). */
static void add_dir_axis(struct plan *p, const char *key, const char *dir)
{
        struct axis *a = &p->ax[p->nax++];
        a->key = xstrdup(key);
        a->values = xcalloc(1, sizeof(char *));
        a->values[0] = dir[0] == '~' ? xstrdup(dir) : fs_path_clean(dir);
        a->n = 1;
}

/* The axes: each --set, then --data and --logdir; no key twice, at most
 * 1000 cells.  An exit status (errors printed). */
static int plan_axes(struct plan *p, const struct bd_opts *o, const char *data, const char *logdir)
{
        struct bd_err err;
        p->ax = xcalloc(o->nsets + 3, sizeof(*p->ax));
        for (size_t i = 0; i < o->nsets; i++, p->nax++)
                if (parse_axis(o->sets[i], &p->ax[p->nax], &err) < 0 ||
                    check_axis_key(p->w, &p->base, p->ax[p->nax].key, &err) < 0) {
                        p->nax++;
                        return bd_error("%s", err.msg), BD_EXIT_CONFIG;
                }
        if (data)
                add_dir_axis(p, "paths.data", data);
        if (logdir)
                add_dir_axis(p, "paths.logs", logdir);
        for (int i = 0; i < p->nax; i++)
                for (int k = 0; k < i; k++)
                        if (streq(p->ax[i].key, p->ax[k].key))
                                return bd_error("--set %s given twice", p->ax[i].key), BD_EXIT_CONFIG;
        p->ncells = 1;
        for (int i = 0; i < p->nax; i++)
                p->ncells *= p->ax[i].n;
        if (p->ncells > 1000)
                return bd_error("%ld cells: a sweep has at most 1000", p->ncells), BD_EXIT_CONFIG;
        return BD_EXIT_OK;
}

/* Every cell's overrides, and the system each gives checked.  An exit
 * status (errors printed). */
static int plan_cells(struct plan *p, struct bd_ctx *ctx, const char *system)
{
        struct bd_err err;
        int ret = BD_EXIT_OK;
        p->cs = xcalloc((size_t)p->ncells, sizeof(*p->cs));
        _cleanup_free_ int *idx = xcalloc((size_t)p->nax + 1, sizeof(int));
        for (long i = 0; i < p->ncells && ret == BD_EXIT_OK; i++) {
                long rest = i;
                for (int a = p->nax - 1; a >= 0; a--) {
                        idx[a] = (int)(rest % p->ax[a].n);
                        rest /= p->ax[a].n;
                }
                struct bd_system check = { 0 };
                if (make_cell(p->w, &p->base, p->ax, p->nax, idx, p->ttt, p->steps, p->warmup, &p->cs[i], &err) < 0)
                        bd_error("%s", err.msg), ret = BD_EXIT_CONFIG;
                else if ((ret = ctx_load_system(ctx, system, p->cs[i].sets, &check)) != 0)
                        bd_error("(in cell %ld: %s)", i + 1, p->cs[i].label);
                system_release(&check);
        }
        p->rule = lr_rule(p->w, &p->base, p->ax, p->nax);
        return ret;
}

/* The sweep's spec as the store keeps it (sweep.h; caller frees). */
static char *plan_spec(const struct plan *p)
{
        _cleanup_json_ cJSON *spec = cJSON_CreateObject();
        cJSON_AddStringToObject(spec, "mode", p->mode);
        cJSON_AddNumberToObject(spec, "runs", (double)p->runs);
        cJSON_AddNumberToObject(spec, "steps", p->ttt ? 0 : (double)p->steps);
        cJSON_AddNumberToObject(spec, "warmup", p->ttt ? 0 : (double)p->warmup);
        cJSON *jax = cJSON_AddArrayToObject(spec, "axes");
        for (int i = 0; i < p->nax; i++) {
                cJSON *a = cJSON_CreateObject();
                cJSON_AddStringToObject(a, "key", p->ax[i].key);
                cJSON_AddItemToObject(a, "values",
                                      cJSON_CreateStringArray((const char *const *)p->ax[i].values, p->ax[i].n));
                cJSON_AddItemToArray(jax, a);
        }
        cJSON_AddStringToObject(spec, "rule", p->rule);
        return cJSON_PrintUnformatted(spec);
}

/* A cell's params as the store keeps them (sweep.h; caller frees). */
static char *cell_params(const struct cellspec *c)
{
        cJSON *p = cJSON_CreateObject();
        cJSON_AddItemToObject(p, "values", cJSON_Duplicate(c->values, true));
        cJSON_AddItemToObject(p, "sets", cJSON_CreateStringArray((const char *const *)c->sets, c->nsets));
        cJSON_AddNumberToObject(p, "ranks", (double)c->ranks);
        cJSON_AddNumberToObject(p, "nodes", (double)c->nodes);
        cJSON_AddNumberToObject(p, "global_batch", (double)c->global_batch);
        char *text = cJSON_PrintUnformatted(p);
        cJSON_Delete(p);
        return text;
}

static void print_dry(const struct plan *p)
{
        printf("sweep of %s on %s, %s, %ld cell%s; learning rate: %s\n", p->w->name, p->base.name, p->mode,
               p->ncells, p->ncells == 1 ? "" : "s", p->rule);
        for (long i = 0; i < p->ncells; i++) {
                printf("cell %ld: %s:", i + 1, p->cs[i].label);
                for (int k = 0; k < p->cs[i].nsets; k++)
                        printf(" --set %s", p->cs[i].sets[k]);
                printf("\n");
        }
}

/* Records the sweep as a group of runs, then runs it. */
static int record_and_run(const struct plan *p, struct bd_ctx *ctx)
{
        struct bd_err err;
        struct bd_store store;
        if (open_store(&store))
                return BD_EXIT_FAIL;
        _cleanup_free_ char *id = sweep_id_new(), *spec = plan_spec(p);
        struct bd_cell *cells = xcalloc((size_t)p->ncells, sizeof(*cells));
        for (long i = 0; i < p->ncells; i++)
                cells[i] = (struct bd_cell){ .idx = (int)i, .label = p->cs[i].label,
                                             .params = cell_params(&p->cs[i]) };
        struct bd_group g = { .id = id, .kind = (char *)"sweep", .system = p->base.name,
                              .workload = (char *)p->w->name, .spec = spec, .created = (double)time(NULL),
                              .state = (char *)"running", .ncells = (int)p->ncells };
        int ret;
        if (store_add_group(&store, &g, cells, &err) < 0) {
                bd_error("%s", err.msg);
                ret = BD_EXIT_FAIL;
        } else {
                printf("sweep %s: %s on %s, %s, %ld cell%s\nlearning rate: %s\n", id, p->w->name, p->base.name,
                       p->mode, p->ncells, p->ncells == 1 ? "" : "s", p->rule);
                fflush(stdout);
                ret = run_sweep(ctx, &store, id);
        }
        for (long i = 0; i < p->ncells; i++)
                free(cells[i].params);
        free(cells);
        store_close(&store);
        return ret;
}

/* --resume SWEEP or --cancel SWEEP */
static int by_id(struct bd_ctx *ctx, const char *resume, const char *cancel)
{
        struct bd_store store;
        if (open_store(&store))
                return BD_EXIT_FAIL;
        int ret = resume ? run_sweep(ctx, &store, resume) : group_cancel(&store, cancel, "sweep");
        store_close(&store);
        return ret;
}

int cmd_sweep(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, options, cmd, ctx);
        const char *system = NULL, *resume = NULL, *cancel = NULL, *arg;
        const char *data = NULL, *logdir = NULL;
        _cleanup_(plan_release) struct plan p = { .mode = "throughput", .steps = 20, .warmup = 5 };
        bool dry = false;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 's': system = arg; break;
                case OPT_MODE: p.mode = arg; break;
                case OPT_RESUME: resume = arg; break;
                case OPT_CANCEL: cancel = arg; break;
                case OPT_DRY: dry = true; break;
                case OPT_DATA: data = arg; break;
                case OPT_LOGDIR: logdir = arg; break;
                case 'n': opts_number(&o, "runs", arg, 1, 100, &p.runs); break;
                case OPT_STEPS: opts_number(&o, "steps", arg, 1, 1000000000L, &p.steps); break;
                case OPT_WARMUP: opts_number(&o, "warmup", arg, 0, 1000000000L, &p.warmup); break;
                }
        }
        bool recorded = resume || cancel;
        int next = opts_finish(&o, recorded ? 0 : 1, recorded ? 0 : 1, opts_workload);
        if (next < 0)
                return opts_exit(next);
        if (resume && cancel)
                return usage_error(cmd, "--resume and --cancel exclude each other");
        if (recorded && (system || o.sets || dry || data || logdir))
                return usage_error(cmd, "--%s takes a recorded sweep: no --system, --set or --dry-run",
                                   resume ? "resume" : "cancel");
        if (recorded)
                return by_id(ctx, resume, cancel);
        if (!system)
                return usage_error(cmd, "missing --system SYSTEM");
        if (!streq(p.mode, "throughput") && !streq(p.mode, "time-to-train"))
                return usage_error(cmd, "--mode '%s': throughput or time-to-train", p.mode);
        p.ttt = streq(p.mode, "time-to-train");
        struct bd_err err;
        if (!(p.w = workload_lookup(argv[next], &err)))
                return bd_error("%s", err.msg), BD_EXIT_CONFIG;
        int ret = ctx_load_system(ctx, system, NULL, &p.base);
        if (!ret)
                ret = plan_axes(&p, &o, data, logdir);
        if (!ret)
                ret = plan_cells(&p, ctx, system);
        if (ret)
                return ret;
        if (dry) {
                print_dry(&p);
                return BD_EXIT_OK;
        }
        return record_and_run(&p, ctx);
}

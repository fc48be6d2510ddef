/* cmd-weights.c: benchctl weights ACTION: pretrained weights for the
 * trainers' --pretrained, from PyTorch state dicts (torchvision's ImageNet
 * ResNets), without Python or torch (client/weights/).
 *
 * check: what a state dict (.pth, zip or legacy) or weights file (.bdw)
 * holds: its format, tensors and their types, parameters, the ResNet it
 * is, the trainers that take it.
 *
 * convert: the state dict as a weights file, the one
 * trainer/tools/convert-torchvision.py writes from it, byte for byte.
 *
 * fetch: torchvision's file from its download table (fetch/, or the
 * user's), downloaded through client/fetch (resumable, its SHA-256 prefix
 * checked), found to be the ResNet the table names, converted to the
 * table's output in the system's paths.pretrained.
 *
 * Each action is a row of actions[] below: its name, its function, and
 * the usage and summary its --help prints. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "bdw.h"
#include "benchctl.h"
#include "fetch.h"
#include "fetch-table.h"
#include "fs.h"
#include "json.h"
#include "meter.h"
#include "ptload.h"
#include "render.h"
#include "strutil.h"

/* A name from the file, printable: one line, UTF-8 (caller frees) */
static char *printable(const char *s)
{
        size_t n = 3 * strlen(s) + 1;
        char *out = xmalloc(n);
        str_sanitize(out, n, s, "\xef\xbf\xbd");
        return out;
}

static const char *format_text(const struct pt_file *f)
{
        switch (f->format) {
        case PT_FORMAT_ZIP:
                return "PyTorch zip archive (torch >= 1.6)";
        case PT_FORMAT_LEGACY:
                return "PyTorch legacy file (torch < 1.6)";
        case PT_FORMAT_BDW:
                break;
        }
        return "benchd weights file";
}

static const char *blocks_text(const struct bdw_desc *d, char *buf, size_t n)
{
        snprintf(buf, n, "%s, %d-%d-%d-%d blocks, width %lld", d->bottleneck ? "Bottleneck" : "BasicBlock",
                 d->blocks[0], d->blocks[1], d->blocks[2], d->blocks[3], (long long)d->width);
        return buf;
}

/* ---- check ---------------------------------------------------------------------------------- */

static cJSON *str_array(const char *const *v, size_t n)
{
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 0; i < n && v[i]; i++)
                cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
        return a;
}

static void check_json(const char *path, const struct pt_file *f, const struct bdw_desc *d)
{
        _cleanup_json_ cJSON *o = cJSON_CreateObject();
        _cleanup_free_ char *file = printable(path);
        cJSON_AddStringToObject(o, "file", file);
        cJSON_AddStringToObject(o, "format", pt_format_name(f->format));
        if (f->format == PT_FORMAT_BDW) {
                _cleanup_free_ char *source = printable(f->source);
                cJSON_AddNumberToObject(o, "version", f->version);
                cJSON_AddStringToObject(o, "source", source);
        } else {
                cJSON_AddNumberToObject(o, "pickle_protocol", f->protocol);
                if (f->format == PT_FORMAT_ZIP)
                        cJSON_AddNumberToObject(o, "version", f->version);
                cJSON_AddStringToObject(o, "state_dict", f->wrapper ? f->wrapper : "object");
        }
        cJSON_AddNumberToObject(o, "tensors", (double)f->n);
        cJSON_AddNumberToObject(o, "converted", (double)d->floats);
        cJSON_AddNumberToObject(o, "other_entries", (double)f->others);
        cJSON *types = cJSON_AddObjectToObject(o, "dtypes");
        for (int t = 0; t < _PK_DT_MAX; t++)
                if (d->dtypes[t])
                        cJSON_AddNumberToObject(types, pk_dtype_name((enum pk_dtype)t), (double)d->dtypes[t]);
        cJSON_AddNumberToObject(o, "values", (double)d->values);
        cJSON_AddNumberToObject(o, "parameters", (double)d->parameters);
        if (d->resnet) {
                cJSON *a = cJSON_AddObjectToObject(o, "architecture");
                if (d->arch[0])
                        cJSON_AddStringToObject(a, "name", d->arch);
                else
                        cJSON_AddNullToObject(a, "name");
                cJSON_AddStringToObject(a, "block", d->bottleneck ? "Bottleneck" : "BasicBlock");
                cJSON_AddItemToObject(a, "blocks", cJSON_CreateIntArray(d->blocks, 4));
                cJSON_AddNumberToObject(a, "width", (double)d->width);
                if (d->classes)
                        cJSON_AddNumberToObject(a, "classes", (double)d->classes);
                else
                        cJSON_AddNullToObject(a, "classes");
                _cleanup_free_ char *prefix = printable(d->prefix), *problem = printable(d->problem);
                cJSON_AddStringToObject(a, "prefix", prefix);
                cJSON_AddBoolToObject(a, "complete", !d->problem[0]);
                if (d->problem[0])
                        cJSON_AddStringToObject(a, "problem", problem);
                cJSON_AddNumberToObject(a, "extra_tensors", (double)d->extra);
        } else
                cJSON_AddNullToObject(o, "architecture");
        cJSON *tr = cJSON_AddArrayToObject(o, "trainers");
        for (size_t i = 0; i < d->ntrainers; i++) {
                const struct bdw_trainer *t = d->trainers[i];
                cJSON *e = cJSON_CreateObject();
                cJSON_AddStringToObject(e, "program", t->program);
                cJSON_AddItemToObject(e, "workloads", str_array(t->workloads, ARRAY_SIZE(t->workloads)));
                cJSON_AddStringToObject(e, "backbone", d->arch);
                cJSON_AddBoolToObject(e, "default_backbone", streq(t->backbones[0], d->arch));
                cJSON_AddStringToObject(e, "prefix", t->prefix);
                cJSON_AddItemToObject(e, "unused", str_array(t->unused, ARRAY_SIZE(t->unused)));
                cJSON_AddItemToArray(tr, e);
        }
        cJSON *list = cJSON_AddArrayToObject(o, "tensor_list");
        for (size_t i = 0; i < f->n; i++) {
                const struct pt_tensor *t = &f->t[i];
                _cleanup_free_ char *name = printable(t->name);
                cJSON *e = cJSON_CreateObject();
                cJSON_AddStringToObject(e, "name", name);
                cJSON_AddStringToObject(e, "dtype", pk_dtype_name(t->dtype));
                cJSON *shape = cJSON_AddArrayToObject(e, "shape");
                for (int k = 0; k < t->ndim; k++)
                        cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->dims[k]));
                cJSON_AddBoolToObject(e, "contiguous", t->contiguous);
                cJSON_AddItemToArray(list, e);
        }
        _cleanup_free_ char *text = cJSON_Print(o);
        printf("%s\n", text);
}

static void print_trainers(const struct pt_file *f, const struct bdw_desc *d)
{
        for (size_t i = 0; i < d->ntrainers; i++) {
                const struct bdw_trainer *t = d->trainers[i];
                bool dflt = streq(t->backbones[0], d->arch);
                printf("%-13s %s%s%s --pretrained (", i ? "" : "trainers", t->program, dflt ? "" : " --backbone ",
                       dflt ? "" : d->arch);
                for (size_t k = 0; k < ARRAY_SIZE(t->workloads) && t->workloads[k]; k++)
                        printf("%s%s", k ? ", " : "", t->workloads[k]);
                if (dflt)
                        fputs(": its default backbone", stdout);
                for (size_t k = 0; k < ARRAY_SIZE(t->unused) && t->unused[k]; k++)
                        printf("%s%s*", k ? ", " : "; not used: ", t->unused[k]);
                printf(")\n");
        }
        if (d->ntrainers && f->format != PT_FORMAT_BDW)
                printf("%-13s (they read weights files: benchctl weights convert)\n", "");
        if (d->ntrainers)
                return;
        printf("%-13s none: ", "trainers");
        if (d->prefix[0]) {
                _cleanup_free_ char *prefix = printable(d->prefix);
                printf("its names are under '%s' (convert with --strip '%s')\n", prefix, prefix);
        } else
                printf("%s\n", !d->resnet ? "no ResNet"
                                : d->problem[0] ? "not a ResNet as torchvision makes it"
                                : d->extra ? "it holds tensors that are no part of the ResNet"
                                : !d->arch[0] ? "blocks of no torchvision depth"
                                : d->width != 64 ? "they take a width of 64" : "none has this backbone");
}

static void check_text(const char *path, const struct pt_file *f, const struct bdw_desc *d, bool tensors)
{
        _cleanup_free_ char *file = printable(path);
        printf("%-13s %s\n", "file", file);
        printf("%-13s %s", "format", format_text(f));
        if (f->format == PT_FORMAT_BDW) {
                _cleanup_free_ char *source = printable(f->source);
                printf(", version %d, source '%s'\n", f->version, source);
        } else {
                printf(", pickle protocol %d", f->protocol);
                if (f->format == PT_FORMAT_ZIP && f->version)
                        printf(", archive version %d", f->version);
                printf("\n%-13s %s%s%s\n", "state dict", f->wrapper ? "its '" : "the file's object",
                       f->wrapper ? f->wrapper : "", f->wrapper ? "' entry" : "");
        }
        printf("%-13s %zu", "tensors", f->n);
        const char *sep = ": ";
        for (int t = 0; t < _PK_DT_MAX; t++)
                if (d->dtypes[t]) {
                        printf("%s%zu %s", sep, d->dtypes[t], pk_dtype_name((enum pk_dtype)t));
                        sep = ", ";
                }
        if (f->n > d->floats)
                printf(" (integer tensors are not converted)");
        if (f->others)
                printf("; %zu other entries", f->others);
        printf("\n%-13s %lld", "parameters", (long long)d->parameters);
        if (d->values != d->parameters)
                printf(" (%lld values with batch norm's running statistics)", (long long)d->values);
        printf("\n");
        char blocks[96];
        _cleanup_free_ char *prefix = printable(d->prefix), *problem = printable(d->problem);
        if (!d->resnet)
                printf("%-13s no ResNet (no conv1.weight with layer1.0.conv1.weight)\n", "architecture");
        else {
                printf("%-13s %s%s%s", "architecture", d->arch[0] ? d->arch : "a ResNet", d->arch[0] ? ": " : " of ",
                       blocks_text(d, blocks, sizeof(blocks)));
                if (d->classes)
                        printf(", fc %lld classes", (long long)d->classes);
                else
                        printf(", no fc");
                if (d->prefix[0])
                        printf(", names under '%s'", prefix);
                printf("\n");
                if (d->problem[0])
                        printf("%-13s not as torchvision makes it: %s\n", "", problem);
                if (d->extra)
                        printf("%-13s and %zu tensors that are no part of it\n", "", d->extra);
        }
        print_trainers(f, d);
        if (!tensors)
                return;
        for (size_t i = 0; i < f->n; i++) {
                const struct pt_tensor *t = &f->t[i];
                _cleanup_free_ char *name = printable(t->name);
                char shape[PK_MAX_DIMS * 22 + 4];
                bdw_shape(shape, sizeof(shape), t->ndim, t->dims);
                printf("  %-44s %-8s %s%s\n", name, pk_dtype_name(t->dtype), shape,
                       t->contiguous ? "" : " (strided)");
        }
}

#define OPT_TENSORS 400
static const struct bd_option check_options[] = {
        { "json", 'j', NULL, "print it as JSON, each tensor with its name, type and shape" },
        { "tensors", OPT_TENSORS, NULL, "list each tensor: name, type, shape" },
        { 0 }
};

static int weights_check(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, check_options, cmd, ctx);
        const char *arg;
        bool json = false, tensors = false;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                if (c == 'j')
                        json = true;
                else if (c == OPT_TENSORS)
                        tensors = true;
        }
        int next = opts_finish(&o, 1, 1, "FILE");
        if (next < 0)
                return opts_exit(next);
        const char *path = argv[next];
        struct pt_file f;
        struct bd_err err;
        if (pt_load(path, &f, &err) < 0) {
                bd_error("weights check: %s", err.msg);
                return BD_EXIT_FAIL;
        }
        struct bdw_desc d;
        bdw_describe(&f, &d);
        if (json)
                check_json(path, &f, &d);
        else
                check_text(path, &f, &d, tensors);
        pt_file_release(&f);
        return finish_output(BD_EXIT_OK);
}

/* ---- convert -------------------------------------------------------------------------------- */

#define OPT_STRIP 410
#define OPT_SOURCE 411
static const struct bd_option convert_options[] = {
        { "strip", OPT_STRIP, "PREFIX", "take PREFIX off the names that start with it ('module.')" },
        { "source", OPT_SOURCE, "TEXT", "the source the file names (63 bytes; default: IN's file name)" },
        { 0 }
};

static int weights_convert(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, convert_options, cmd, ctx);
        const char *arg, *strip = NULL, *source = NULL;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                if (c == OPT_STRIP)
                        strip = arg;
                else if (c == OPT_SOURCE)
                        source = arg;
        }
        int next = opts_finish(&o, 2, 2, "IN.pth and OUT.bdw");
        if (next < 0)
                return opts_exit(next);
        const char *in = argv[next], *out = argv[next + 1];
        if (!source) {
                /* as the Python converter: the part after the last '/' */
                const char *slash = strrchr(in, '/');
                source = slash ? slash + 1 : in;
        }
        struct pt_file f;
        struct bd_err err;
        if (pt_load(in, &f, &err) < 0) {
                bd_error("weights convert: %s", err.msg);
                return BD_EXIT_FAIL;
        }
        size_t written = 0;
        int r = bdw_write(out, &f, strip, source, &written, &err);
        if (r < 0)
                bd_error("weights convert: %s", err.msg);
        else {
                _cleanup_free_ char *name = printable(out);
                printf("weights convert: %zu tensors written to %s", written, name);
                if (f.n > written)
                        printf(" (%zu integer tensors left out)", f.n - written);
                printf("\n");
        }
        pt_file_release(&f);
        return finish_output(r < 0 ? BD_EXIT_FAIL : BD_EXIT_OK);
}

/* ---- fetch ------------------------------------------------------------------------------------ */

#define OPT_SYSTEM 420
#define OPT_MIRROR 421
#define OPT_FROM 422
#define OPT_TABLE 423
#define OPT_QUIET 424
static const struct bd_option fetch_options[] = {
        { "output", 'o', "DIR", "where the weights go (default: the system's paths.pretrained)" },
        { "system", OPT_SYSTEM, "NAME", "the system whose paths.pretrained is meant (default local)" },
        { "mirror", OPT_MIRROR, "URL", "fetch from a site's copy: URL/FILE" },
        { "from", OPT_FROM, "FILE", "the state dict is on disk already: verify and convert it" },
        { "table", OPT_TABLE, "FILE", "a download table of one's own (fetch/README.md)" },
        { "quiet", OPT_QUIET, NULL, "no progress on standard error" },
        { 0 }
};

static volatile sig_atomic_t fetch_stop;

static void on_fetch_signal(int sig)
{
        fetch_stop = sig;
}

static void fetch_meter(void *arg, const struct fetch_progress *p)
{
        struct meter *m = arg;
        if (p->event)
                meter_line(m, p->event);
        meter_bytes(m, "fetched", (uint64_t)p->done, (uint64_t)p->total, (uint64_t)p->resumed);
}

static void verify_meter(void *arg, uint64_t done, uint64_t total)
{
        meter_bytes(arg, "verified", done, total, 0);
}

static int weights_fetch(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, fetch_options, cmd, ctx);
        const char *arg, *out = NULL, *system = "local", *mirror = NULL, *from = NULL, *table_file = NULL;
        bool quiet = false;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 'o': out = arg; break;
                case OPT_SYSTEM: system = arg; break;
                case OPT_MIRROR: mirror = arg; break;
                case OPT_FROM: from = arg; break;
                case OPT_TABLE: table_file = arg; break;
                case OPT_QUIET: quiet = true; break;
                }
        }
        int next = opts_finish(&o, 1, 1, "NAME");
        if (next < 0)
                return opts_exit(next);
        const char *problem = fetch_source_problem(mirror, from);
        if (problem)
                return usage_error(cmd, "%s", problem);
        const char *name = argv[next];
        struct bd_err err;
        struct fetch_table t;
        int tr = fetch_table_open(table_file, name, "weights", &t, &err);
        if (tr < 0) {
                bd_error("weights fetch: %s", err.msg);
                return tr == FETCH_TABLE_UNKNOWN ? BD_EXIT_USAGE : BD_EXIT_CONFIG;
        }
        int rc = BD_EXIT_FAIL;
        _cleanup_free_ char *dir = NULL, *pth = NULL, *url = NULL, *bdw = NULL;
        struct pt_file f = { 0 };
        bool loaded = false;
        const struct fetch_entry *e = &t.files[0];
        if (out)
                dir = xstrdup(out);
        else {
                struct bd_system sys;
                int r = ctx_load_system(ctx, system, NULL, &sys);
                if (r != BD_EXIT_OK) {
                        rc = r;
                        goto out;
                }
                const char *p = sys_str(sys.json, "paths.pretrained");
                dir = p ? expand_home(p) : NULL;
                system_release(&sys);
                if (!dir) {
                        bd_error("weights fetch: system %s names no paths.pretrained: give -o DIR", system);
                        rc = BD_EXIT_CONFIG;
                        goto out;
                }
        }
        int mr = fs_mkdir_p(dir, 0755);
        if (mr < 0) {
                bd_error("weights fetch: cannot create '%s': %s", dir, strerror(-mr));
                goto out;
        }
        pth = from ? xstrdup(from) : xasprintf("%s/%s", dir, e->name);
        bdw = xasprintf("%s/%s", dir, t.output);
        struct sigaction sa = { .sa_handler = on_fetch_signal }, old_int, old_term;
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        struct meter m;
        meter_start(&m, from ? "weights fetch: verifying" : "weights fetch", quiet);
        m.every = 10;
        int r;
        if (from)
                r = fetch_verify(pth, e->name, e->bytes, e->sha256, e->sha1, verify_meter, &m, &fetch_stop, &err);
        else {
                url = fetch_url(e, mirror);
                struct fetch_file ff = { .name = e->name, .url = url, .dest = pth, .size = e->bytes,
                                         .sha256 = e->sha256, .sha1 = e->sha1 };
                struct fetch_opts fo = { .progress = fetch_meter, .arg = &m, .stop = &fetch_stop };
                r = fetch_files(&ff, 1, &fo, &err);
        }
        meter_end(&m);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        if (r < 0) {
                bd_error("weights fetch: %s", err.msg);
                rc = fetch_stop ? BD_EXIT_SIGNAL + fetch_stop : BD_EXIT_FAIL;
                goto out;
        }
        /* what it holds must be what the table names: then it is converted */
        if (pt_load(pth, &f, &err) < 0) {
                bd_error("weights fetch: %s", err.msg);
                goto out;
        }
        loaded = true;
        struct bdw_desc d;
        bdw_describe(&f, &d);
        if (!streq(d.arch, t.name) || d.problem[0]) {
                _cleanup_free_ char *what = printable(d.problem);
                bd_error("weights fetch: %s holds %s%s%s, not torchvision's %s", pth, d.arch[0] ? d.arch : "no ResNet",
                         d.problem[0] ? ": " : "", what, t.name);
                goto out;
        }
        size_t written = 0;
        const char *slash = strrchr(pth, '/');
        if (bdw_write(bdw, &f, d.prefix[0] ? d.prefix : NULL, slash ? slash + 1 : pth, &written, &err) < 0) {
                bd_error("weights fetch: %s", err.msg);
                goto out;
        }
        printf("%s: %s verified (%s %s), converted to %s: %zu tensors, %.1fM parameters", t.name, pth,
               e->sha256 ? "SHA-256" : "SHA-1", e->sha256 ? e->sha256 : e->sha1, bdw, written, d.parameters / 1e6);
        for (size_t i = 0; i < d.ntrainers; i++)
                printf("%s%s", i ? ", " : "; for ", d.trainers[i]->program);
        printf("\n");
        rc = BD_EXIT_OK;
out:
        if (loaded)
                pt_file_release(&f);
        fetch_table_release(&t);
        return finish_output(rc);
}

/* ---- the actions ------------------------------------------------------------------------------ */

static const struct action {
        const char *name;
        int (*fn)(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd);
        struct bd_command help;         /* what its --help and usage errors name */
} actions[] = {
        { "check", weights_check,
          { "weights check", NULL, "FILE [--json] [--tensors]",
            "What a PyTorch state dict (.pth: zip or legacy) or benchd weights file (.bdw) holds: tensors, "
            "parameters, the ResNet it is, the trainers whose --pretrained takes it." } },
        { "convert", weights_convert,
          { "weights convert", NULL, "IN.pth OUT.bdw [--strip PREFIX] [--source TEXT]",
            "Write a state dict's floating-point tensors as a weights file for the trainers' --pretrained (the "
            "file trainer/tools/convert-torchvision.py writes), without Python or torch." } },
        { "fetch", weights_fetch,
          { "weights fetch", NULL, "resnet34|resnet50 [-o DIR] [--system NAME] [--mirror URL | --from FILE]",
            "Download torchvision's ImageNet weights (resumable), check the SHA-256 their file name carries, and "
            "convert them to DIR/NAME.bdw, where the system's paths.pretrained expects them." } },
};

int cmd_weights(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        for (size_t i = 0; argc >= 2 && i < ARRAY_SIZE(actions); i++)
                if (streq(argv[1], actions[i].name))
                        return actions[i].fn(argc - 1, argv + 1, ctx, &actions[i].help);
        if (argc >= 2 && (streq(argv[1], "--help") || streq(argv[1], "-h"))) {
                printf("usage: benchctl weights %s\n\n%s\n\nactions:\n", cmd->usage, cmd->summary);
                for (size_t i = 0; i < ARRAY_SIZE(actions); i++)
                        printf("  %s %s\n        %s\n", actions[i].name, actions[i].help.usage,
                               actions[i].help.summary);
                printf("\n'benchctl weights ACTION --help' lists its options; see benchctl-weights(1).\n");
                return BD_EXIT_OK;
        }
        _cleanup_free_ char *names = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(actions); i++) {
                char *prev = names;
                names = xasprintf("%s%s%s", prev ? prev : "", prev ? (i + 1 == ARRAY_SIZE(actions) ? " or " : ", ")
                                  : "", actions[i].name);
                free(prev);
        }
        if (argc < 2)
                return usage_error(cmd, "missing action: %s", names);
        return usage_error(cmd, "unknown action '%s': %s", argv[1], names);
}

/* test-config.c: system files: comments, merging, inheritance, --set, and
 * every error a user can make in them. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs.h"
#include "json.h"
#include "mlperf.h"
#include "schema.h"
#include "strutil.h"
#include "system.h"
#include "tap.h"
#include "workload.h"

static char tmp[] = "/tmp/bd-test-config.XXXXXX";
static char dir_a[512], dir_b[512];

static void put(const char *dir, const char *name, const char *text)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s.json", dir, name);
        if (fs_write_atomic(path, text, strlen(text), 0644, NULL) < 0) {
                perror(path);
                exit(99);
        }
}

/* Loads NAME from dirs a then b; returns 0 or negative, err filled. */
static int load(const char *name, char **sets, struct bd_system *s, struct bd_err *err)
{
        struct bd_sysdirs d = { 0 };
        char *dirs[] = { dir_a, dir_b };
        d.dirs = dirs;
        d.n = 2;
        memset(err, 0, sizeof(*err));
        return system_load(&d, name, sets, s, err);
}

static void expect_error(const char *name, char **sets, const char *needle, const char *what)
{
        struct bd_system s;
        struct bd_err err;
        int r = load(name, sets, &s, &err);
        ok(r < 0, what);
        like(err.msg, needle, what);
        if (r == 0)
                system_release(&s);
}

static void test_comments(void)
{
        char text[] = "{ // line comment\n \"a\": \"http://x/*y*/\", /* block\n over lines */ \"b\": 1 }\n";
        ok(json_strip_comments(text) == 0, "comments strip");
        like(text, "\"http://x/*y*/\"", "comment markers inside strings survive");
        ok(strstr(text, "line comment") == NULL && strstr(text, "block") == NULL, "comments removed");
        int lines = 0;
        for (char *p = text; *p; p++)
                lines += *p == '\n';
        is_int(lines, 3, "newlines kept so line numbers hold");
        char bad[] = "{ /* never closed ";
        ok(json_strip_comments(bad) < 0, "unterminated block comment is an error");
}

static void test_merge(void)
{
        cJSON *a = cJSON_Parse("{\"x\":1,\"o\":{\"p\":1,\"q\":2},\"l\":[1,2,3],\"gone\":true}");
        cJSON *b = cJSON_Parse("{\"x\":2,\"o\":{\"q\":3,\"r\":4},\"l\":[9],\"gone\":null}");
        json_merge(a, b);
        char *t = cJSON_PrintUnformatted(a);
        is_str(t, "{\"x\":2,\"o\":{\"p\":1,\"q\":3,\"r\":4},\"l\":[9]}",
               "merge: child wins, objects merge recursively, lists replace, null removes");
        free(t);
        cJSON_Delete(a);
        cJSON_Delete(b);
}

static void test_inheritance(void)
{
        put(dir_b, "base", "{ \"description\": \"base\", \"nodes\": 1, \"launcher\": \"slurm\", \"gpus_per_node\": 4, \"gpu_model\": \"V100\",\n"
                           "  \"cpu\": {\"sockets\": 2, \"cores_per_socket\": 20, \"threads_per_core\": 2},\n"
                           "  \"ssd\": {\"batch_size\": 128, \"lr\": 0.001}, \"env\": {\"A\": \"1\", \"B\": \"2\"} }");
        put(dir_b, "mid", "{ \"extends\": \"base\", \"nodes\": 2, \"ssd\": {\"lr\": 0.002}, \"env\": {\"B\": null} }");
        put(dir_a, "leaf", "// a comment\n{ \"extends\": \"mid\", \"ssd\": {\"batch_size\": 56} }");
        struct bd_system s = { 0 };
        struct bd_err err;
        ok(load("leaf", NULL, &s, &err) == 0, "three-level inheritance loads");
        if (!s.json)
                printf("# %s\n", err.msg);
        if (!s.json)
                return;
        is_int(json_int(s.json, "nodes", 0), 2, "nodes from the middle");
        is_int(json_int(s.json, "gpus_per_node", 0), 4, "GPUs from the root");
        is_int(json_int(s.json, "ssd.batch_size", 0), 56, "leaf overrides batch size");
        ok(json_num(s.json, "ssd.lr", 0) == 0.002, "middle overrides lr");
        is_str(json_str(s.json, "env.A", NULL), "1", "env A inherited");
        ok(sys_get(s.json, "env.B") == NULL, "null removes an inherited env variable");
        ok(sys_get(s.json, "extends") == NULL, "extends does not leak into the result");
        is_int(json_int(s.json, "ranks_per_node", 0), 4, "ranks default to one per GPU");
        is_str(json_str(s.json, "ssd.backend", NULL), "cuda", "backend defaults to cuda with GPUs");
        is_int(json_int(s.json, "trials", 0), 5, "trials default to 5");
        system_release(&s);

        /* a null removes an inherited key; a system key with a built-in value
         * gets that back, a workload's key stays out */
        put(dir_a, "nulls", "{ \"extends\": \"base\", \"trials\": null, \"slurm\": null, \"maskrcnn\": {\"max_iter\": null},"
                            "  \"cpu\": {\"model\": \"x\"}, \"env\": {\"A\": null} }");
        ok(load("nulls", NULL, &s, &err) == 0, "nulls load");
        if (s.json) {
                is_int(json_int(s.json, "trials", 0), 5, "trials: null is the built-in 5 again");
                is_str(json_str(s.json, "slurm.time_limit", NULL), "04:00:00", "a whole section: null is its built-in values");
                ok(json_get(s.json, "maskrcnn.max_iter") == NULL, "maskrcnn.max_iter: a workload's key is left out");
                ok(json_get(s.json, "env.A") == NULL, "a key without a built-in value is removed");
                ok(json_get(s.json, "cpu.model") && json_get(s.json, "cpu.sockets"), "  filled beside what is set");
                system_release(&s);
        }
        /* through a parent that sets the key, and one that names a section
         * without built-in values */
        put(dir_a, "nulls2", "{ \"extends\": \"mid\", \"ssd\": {\"lr\": null},"
                             "  \"topology\": {\"gpu_numa\": null} }");
        put(dir_a, "nulls3", "{ \"extends\": \"nulls2\" }");
        ok(load("nulls3", NULL, &s, &err) == 0, "nulls through two levels load");
        if (s.json) {
                ok(json_get(s.json, "ssd.lr") == NULL, "ssd.lr: null removes the parent's value and the built-in one");
                ok(json_get(s.json, "ssd.batch_size") != NULL, "  and nothing else of the section");
                ok(json_get(s.json, "topology.gpu_numa") == NULL, "no null is left in the result");
                system_release(&s);
        }

        /* a user's file refines the bundled system of the same name */
        put(dir_b, "same", "{ \"description\": \"bundled\", \"nodes\": 3, \"launcher\": \"slurm\" }");
        put(dir_a, "same", "{ \"extends\": \"same\", \"description\": \"mine\" }");
        ok(load("same", NULL, &s, &err) == 0, "a file may extend the system of its own name further down the path");
        if (s.json) {
                is_int(json_int(s.json, "nodes", 0), 3, "value from the shadowed file");
                is_str(json_str(s.json, "description", NULL), "mine", "value from the user's file");
                system_release(&s);
        }
}

static void test_sets(void)
{
        char *sets[] = { "ssd.batch_size=64", "slurm.partition=gpu", "env.FOO=bar baz", "ssd.decay_epochs=40,50",
                         "binding.hyperthreads=false", "description=123", NULL };
        struct bd_system s = { 0 };
        struct bd_err err;
        ok(load("leaf", sets, &s, &err) == 0, "--set overrides load");
        if (!s.json)
                return;
        is_int(json_int(s.json, "ssd.batch_size", 0), 64, "--set integer");
        is_str(json_str(s.json, "slurm.partition", NULL), "gpu", "--set string");
        is_str(json_str(s.json, "env.FOO", NULL), "bar baz", "--set env variable");
        is_int(cJSON_GetArraySize(sys_get(s.json, "ssd.decay_epochs")), 2, "--set comma list");
        ok(!json_bool(s.json, "binding.hyperthreads", true), "--set boolean");
        is_str(json_str(s.json, "description", NULL), "123", "--set of a string key keeps digits as text");
        system_release(&s);

        char *bad1[] = { "ssd.batch_size=abc", NULL };
        expect_error("leaf", bad1, "expected an integer", "--set wrong type");
        char *bad2[] = { "ssd.batchsize=3", NULL };
        expect_error("leaf", bad2, "did you mean 'ssd.batch_size'", "--set unknown key suggests");
        char *bad3[] = { "ssd.batch_size", NULL };
        expect_error("leaf", bad3, "expected KEY=VALUE", "--set without =");
        char *bad4[] = { "ssd=1", NULL };
        expect_error("leaf", bad4, "is a section", "--set of a whole section");
        char *bad5[] = { "gpus_per_node=-1", NULL };
        expect_error("leaf", bad5, "got -1", "--set negative GPUs");
        char *bad6[] = { "launcher=pbs", NULL };
        expect_error("leaf", bad6, "not one of: slurm, mpirun, local", "--set unknown launcher lists the choices");
        /* above a large upper bound: the message states it */
        char *big1[] = { "allreduce.max_bytes=1e20", NULL };
        expect_error("leaf", big1,
                     "--set allreduce.max_bytes: 'allreduce.max_bytes': expected an integer in [4, 1000000000000], "
                     "got 1e+20", "--set above a large bound names both bounds");
        char *big2[] = { "allreduce.max_bytes=1e400", NULL };
        expect_error("leaf", big2, "expected an integer in [4, 1000000000000], got ",
                     "--set of a number beyond a double names both bounds");
        char *big3[] = { "ssd.seed=4294967296", NULL };
        expect_error("leaf", big3, "'ssd.seed': expected an integer in [0, 4294967295], got 4294967296",
                     "--set above the seed's bound, written in full");
        char *big4[] = { "maskrcnn.clip_gradient=1e10", NULL };
        expect_error("leaf", big4, "expected a number in [0, 1000000000], got 10000000000", "a number above its large bound");
        char *low[] = { "allreduce.max_bytes=3", NULL };
        expect_error("leaf", low, "'allreduce.max_bytes': expected an integer >= 4, got 3",
                     "below the lower bound: only that bound");
}

static void test_errors(void)
{
        expect_error("nosuch", NULL, "unknown system 'nosuch'", "unknown system");
        expect_error("nosuch", NULL, "known systems: base", "unknown system lists the known ones");
        expect_error("lef", NULL, "did you mean 'leaf'", "unknown system suggests a close name");
        expect_error("../etc/passwd", NULL, "invalid system name", "path tricks in system names");

        put(dir_a, "orphan", "{ \"extends\": \"nope\" }");
        expect_error("orphan", NULL, "missing parent system 'nope'", "missing parent");

        put(dir_a, "cyc1", "{ \"extends\": \"cyc2\" }");
        put(dir_a, "cyc2", "{ \"extends\": \"cyc1\" }");
        expect_error("cyc1", NULL, "'extends' cycle", "extends cycle");
        put(dir_a, "self", "{ \"extends\": \"self\" }");
        expect_error("self", NULL, "missing parent system 'self'", "self-extension without a shadowed file");

        put(dir_a, "typo", "{\n  \"nodes\": 1,\n  \"ssd\": {\n    \"batchsize\": 3\n  }\n}");
        expect_error("typo", NULL, "typo.json:4: 'ssd.batchsize': unknown key (did you mean 'ssd.batch_size'?)",
                     "unknown key named with file, line and suggestion");
        put(dir_a, "wrongtype", "{\n  \"gpus_per_node\": \"four\"\n}");
        expect_error("wrongtype", NULL, "wrongtype.json:2: 'gpus_per_node': expected an integer in [0, 64], got 'four'",
                     "wrong type named with file and line");
        put(dir_a, "neg", "{ \"gpus_per_node\": -2 }");
        expect_error("neg", NULL, "got -2", "negative GPUs");
        put(dir_a, "frac", "{ \"nodes\": 1.5 }");
        expect_error("frac", NULL, "expected an integer", "fractional node count");
        put(dir_a, "ranks", "{ \"ranks_per_node\": 9, \"cpu\": {\"sockets\": 1, \"cores_per_socket\": 8} }");
        expect_error("ranks", NULL, "more ranks per node (9) than cores", "more ranks than cores");
        put(dir_a, "numa", "{ \"gpus_per_node\": 2, \"cpu\": {\"sockets\": 2, \"cores_per_socket\": 4},"
                           " \"topology\": {\"gpu_numa\": [0]} }");
        expect_error("numa", NULL, "lists 1 GPUs", "gpu_numa of the wrong length");
        put(dir_a, "bad", "{\n  \"nodes\": 1,\n  \"gpus_per_node\": 4\n  \"launcher\": \"slurm\"\n}");
        expect_error("bad", NULL, "bad.json:4:", "malformed JSON names file and line");
        put(dir_a, "trunc", "{\n  \"nodes\": 1,\n");
        expect_error("trunc", NULL, "unexpected end of file", "truncated JSON");
        put(dir_a, "top", "[1, 2]");
        expect_error("top", NULL, "expected a JSON object", "top-level list");
        put(dir_a, "envname", "{ \"env\": { \"BAD-NAME\": \"x\" } }");
        expect_error("envname", NULL, "not a valid environment variable name", "bad environment variable name");
        put(dir_a, "docker", "{ \"nodes\": 2, \"launcher\": \"slurm\", \"container\": {\"runtime\": \"docker\", \"image\": \"x\"} }");
        expect_error("docker", NULL, "single-node", "docker on several nodes");
        put(dir_a, "noimage", "{ \"container\": {\"runtime\": \"apptainer\"} }");
        expect_error("noimage", NULL, "needs 'container.image'", "container without image");
        put(dir_a, "cudacpu", "{ \"ssd\": {\"backend\": \"cuda\"} }");
        expect_error("cudacpu", NULL, "no GPUs", "cuda backend without GPUs");
        put(dir_a, "time", "{ \"slurm\": {\"time_limit\": \"4 hours\"} }");
        expect_error("time", NULL, "Slurm time limit", "bad time limit");
        put(dir_a, "part", "{ \"slurm\": {\"partition\": \"gpu queue\"} }");
        expect_error("part", NULL, "letters, digits", "partition with a space");
}

/* line:column of a malformed file: the first character of the offending token, 1-based */
static void expect_position(const char *text, const char *want, const char *what)
{
        struct bd_err err = { 0 };
        cJSON *j = NULL;
        ok(json_parse(text, "t.json", &j, &err) < 0, what);
        is_str(err.msg, want, what);
        cJSON_Delete(j);
}

static void test_positions(void)
{
        expect_position("{ bad json", "t.json:1:3: malformed JSON near 'bad json'", "a bare word where a key goes");
        expect_position("{\n  \"nodes\": 2,\n  \"gpus_per_node\": 4,,\n}",
                        "t.json:3:22: malformed JSON near ','", "a second comma");
        expect_position("{\"a\": 1,}", "t.json:1:9: malformed JSON near '}'", "a trailing comma in an object");
        expect_position("{\"a\": \"x,{\", }", "t.json:1:14: malformed JSON near '}'",
                        "  after a string holding a comma and a brace");
        expect_position("{\"a\": [1, {\"b\": 2,]}", "t.json:1:19: malformed JSON near ']}'",
                        "  in an object in a list");
        expect_position("{ ,}", "t.json:1:3: malformed JSON near ',}'", "a comma where the first key goes");
        expect_position("{\"a\": \"abc", "t.json:1:7: malformed JSON near '\"abc'", "an unterminated string");
        expect_position("{\"a\": 1, x", "t.json:1:10: malformed JSON near 'x'", "a bare word at the end of the file");
        expect_position("{\"a\"1}", "t.json:1:5: malformed JSON near '1}'", "no colon after a key");
        expect_position("{\"a\\\"b\" 1}", "t.json:1:9: malformed JSON near '1}'", "  after a key with an escaped quote");
        expect_position("[1,,2]", "t.json:1:4: malformed JSON near ',2]'", "a second comma in a list");
        expect_position("{ }x", "t.json:1:4: malformed JSON near 'x'", "junk after an empty object");
        expect_position("{\"a\": tru}", "t.json:1:7: malformed JSON near 'tru}'", "a misspelt literal");
        expect_position("{\"\xc3\xa9\": 1 2}", "t.json:1:9: malformed JSON near '2}'",
                        "columns count characters, not bytes");
        expect_position("{\"a\": 1,", "t.json:1:9: malformed JSON: unexpected end of file", "the end of the file");
}

static void test_bundled(void)
{
        const char *src = getenv("srcdir");
        char path[1024];
        snprintf(path, sizeof(path), "%s/systems", src ? src : ".");
        struct bd_sysdirs d = { 0 };
        char *dirs[] = { path };
        d.dirs = dirs;
        d.n = 1;
        char **names = system_list(&d);
        int n = 0;
        for (char **p = names; *p; p++, n++) {
                struct bd_system s;
                struct bd_err err = { { 0 } };
                int r = system_load(&d, *p, NULL, &s, &err);
                char what[1400];
                snprintf(what, sizeof(what), "bundled system %s loads%s%s", *p, r < 0 ? ": " : "", r < 0 ? err.msg : "");
                ok(r == 0, what);
                if (r == 0)
                        system_release(&s);
        }
        is_int(n, 12, "twelve bundled systems");
        strv_free(names);

        struct bd_system s;
        struct bd_err err;
        if (system_load(&d, "4xC4140", NULL, &s, &err) == 0) {
                is_int(json_int(s.json, "nodes", 0), 4, "4xC4140: 4 nodes");
                is_int(json_int(s.json, "gpus_per_node", 0), 4, "4xC4140: 4 GPUs per node (from C4140)");
                is_int(json_int(s.json, "ssd.batch_size", 0), 56, "4xC4140: ssd batch 56 overrides C4140's 128");
                ok(json_num(s.json, "ssd.lr", 0) == 3.2e-3, "4xC4140: lr 3.2e-3");
                is_str(json_str(s.json, "gpu_model", ""), "V100-SXM2-32GB", "4xC4140: GPU model inherited");
                is_int(json_int(s.json, "maskrcnn.ims_per_batch", 0), 96, "4xC4140: Mask R-CNN 96 images per batch");
                system_release(&s);
        }
        if (system_load(&d, "2xC4140", NULL, &s, &err) == 0) {
                is_int(json_int(s.json, "nodes", 0), 2, "2xC4140 has two nodes (the original said 1)");
                system_release(&s);
        }
        if (system_load(&d, "24xlocal", NULL, &s, &err) == 0) {
                const cJSON *hosts = sys_get(s.json, "benchd.hosts");
                is_int(json_int(s.json, "nodes", 0), 24, "24xlocal: 24 nodes, as 24xp3dn");
                is_int(json_int(s.json, "ranks_per_node", 0), 1, "24xlocal: one rank per node");
                is_str(json_str(s.json, "launcher", ""), "slurm", "24xlocal: Slurm, from 4xlocal");
                is_str(json_str(s.json, "mpirun.mca.btl", ""), "self,tcp", "24xlocal: TCP between ranks, from 4xlocal");
                is_int(cJSON_GetArraySize(hosts), 24, "24xlocal: a benchd per node");
                is_str(cJSON_GetStringValue(cJSON_GetArrayItem(hosts, 0)), "127.0.0.2", "24xlocal: n1's on 127.0.0.2");
                is_str(cJSON_GetStringValue(cJSON_GetArrayItem(hosts, 23)), "127.0.0.25", "24xlocal: n24's on 127.0.0.25");
                is_int(json_int(s.json, "maskrcnn.ims_per_batch", 0) % 24, 0, "24xlocal: Mask R-CNN batch a multiple of 24 ranks");
                is_int(json_int(s.json, "maskrcnn.test_ims_per_batch", 0) % 24, 0, "24xlocal: and its evaluation batch");
                system_release(&s);
        }
        if (system_load(&d, "24xp3dn", NULL, &s, &err) == 0) {
                ok(sys_get(s.json, "mpirun.hosts") == NULL, "24xp3dn uses its hostfile, not p3dn's hosts");
                is_int(json_int(s.json, "maskrcnn.ims_per_batch", 0), 192, "24xp3dn: batch 192");
                ok(json_num(s.json, "maskrcnn.clip_gradient", 0) == 1.5, "24xp3dn: gradient clipping inherited");
                system_release(&s);
        }
}

/* The bundled workloads: each complete and consistent with the schema,
 * and what system files get from it. */
static char wbuf[2048];
#define W(...) (snprintf(wbuf, sizeof(wbuf), __VA_ARGS__), wbuf)

static void test_workloads(void)
{
        int n = 0;
        const struct workload *const *all = workload_all();
        for (const struct workload *const *wp = all; *wp; wp++, n++) {
                const struct workload *w = *wp;
                for (const struct workload *const *v = all; v != wp; v++)
                        ok(strcmp((*v)->name, w->name) != 0, W("workload %s: one of its name", w->name));
                char want[64];
                /* benchd's: benchd-NAME; Faster R-CNN is Mask R-CNN's without its mask branch */
                snprintf(want, sizeof(want), "benchd-%s", streq(w->name, "torchvision-maskrcnn") ? "tv-maskrcnn"
                                                          : streq(w->name, "fasterrcnn")       ? "maskrcnn"
                                                                                               : w->name);
                if (w->own)
                        is_str(w->program, want, W("workload %s: its program is %s", w->name, want));
                /* the bundled file holds, checked as one of the path would be */
                for (const struct workload_text *b = workload_bundled; b->name; b++)
                        if (streq(b->name, w->name)) {
                                struct bd_err e = { 0 };
                                ok(workload_check_text(b->text, b->name, b->file, &e) == 0,
                                   W("workload %s: its file checks: %s", w->name, e.msg));
                        }
                ok(w->title && w->mlperf_name && w->result_name && w->help, W("workload %s: every name given", w->name));
                cJSON *sec = cJSON_Parse(w->defaults);
                ok(cJSON_IsObject(sec), W("workload %s: its defaults are a JSON object", w->name));
                cJSON *root = cJSON_CreateObject();
                cJSON_AddItemToObject(root, w->section, sec);
                struct bd_err err = { 0 };
                ok(schema_validate(root, "defaults", NULL, &err) == 0, W("workload %s: its defaults fit its keys %s",
                                                                    w->name, err.msg));
                if (w->target_key) {
                        ok(workload_has_key(w, w->target_key), W("workload %s: its target %s is one of its keys",
                                                                   w->name, w->target_key));
                        ok(cJSON_IsNumber(cJSON_GetObjectItem(sec, w->target_key)), "  and has a default");
                }
                ok(!w->own || workload_has_key(w, "backend"), W("workload %s: benchd's has a backend", w->name));
                cJSON_Delete(root);
                ok(workload_find(w->name) == w, W("workload_find(%s)", w->name));
        }
        ok(n == 11, W("%d bundled workloads", n));
        struct bd_err err = { 0 };
        ok(workload_lookup("ssdd", &err) == NULL, "an unknown workload");
        is_str(err.msg, "unknown workload 'ssdd' (did you mean 'ssd'?); known workloads: ssd, maskrcnn, allreduce, fasterrcnn, "
               "torchvision-maskrcnn, "
               "gluoncv-maskrcnn, ngc-maskrcnn, mxnet-ssd, gluoncv-fasterrcnn, mila-convnet, mila-ssd",
               "  names them all");
        struct bd_buf b = BD_BUF_INIT;
        workload_names(&b, " or ");
        is_str(b.s, "ssd, maskrcnn, allreduce, fasterrcnn, torchvision-maskrcnn, gluoncv-maskrcnn, ngc-maskrcnn, mxnet-ssd, "
               "gluoncv-fasterrcnn, mila-convnet or mila-ssd", "workload_names");
        buf_release(&b);
        ok(mlperf_is_bandwidth("allreduce") && !mlperf_is_bandwidth("ssd") && !mlperf_is_bandwidth("maskrcnn") &&
           !mlperf_is_bandwidth("resnet"), "only allreduce is scored by bandwidth");

        /* every workload section of a loaded system has its defaults, a
         * backend, and a precision where it has one (benchd's own: another
         * trainer's precision is its own words, float16 or amp) */
        put(dir_a, "wl", "{ \"gpus_per_node\": 2, \"cpu\": { \"cores_per_socket\": 8 } }");
        struct bd_system s;
        if (load("wl", NULL, &s, &err) == 0) {
                for (const struct workload *const *wp = workload_all(); *wp; wp++) {
                        const struct workload *w = *wp;
                        const cJSON *sec = sys_get(s.json, w->section);
                        if (workload_has_key(w, "backend"))
                                is_str(json_str(sec, "backend", "?"), "cuda", W("%s.backend follows the GPUs", w->name));
                        ok(!w->own || !workload_has_key(w, "precision") ||
                           streq(json_str(sec, "precision", "?"), "amp"),
                           W("%s.precision where it has one", w->name));
                        cJSON *def = cJSON_Parse(w->defaults);
                        const cJSON *e;
                        cJSON_ArrayForEach(e, def)
                                ok(cJSON_Compare(e, cJSON_GetObjectItem(sec, e->string), true),
                                   W("%s.%s: built-in", w->name, e->string));
                        cJSON_Delete(def);
                }
                system_release(&s);
        } else
                ok(0, W("wl: %s", err.msg));
}

/* software.* versions (strutil.h): the forms a system names them in */
static void test_versions(void)
{
        ok(str_version_valid("12.2") && str_version_valid(">=535.104") && str_version_valid("Open MPI 4.1") &&
           str_version_valid("MPICH >=4.0") && str_version_valid("535"), "versions: the forms a system names");
        ok(!str_version_valid("") && !str_version_valid("twelve") && !str_version_valid("12.") &&
           !str_version_valid("12.2a") && !str_version_valid(">=") && !str_version_valid("1.2.3.4.5.6.7.8.9") &&
           !str_version_valid("123456789012345"), "versions: not one");
        ok(str_version_satisfies("12.2", "12.2") && str_version_satisfies("12.2.140", "12.2") &&
           str_version_satisfies("535.104.05", "535"), "a version at the precision named");
        ok(!str_version_satisfies("12.20", "12.2") && !str_version_satisfies("12", "12.2") &&
           !str_version_satisfies("12.3", "12.2"), "another version is not");
        ok(str_version_satisfies("535.104.05", ">=535.104") && str_version_satisfies("550.1", ">=535.104") &&
           str_version_satisfies("535.104", ">=535.104.0") && !str_version_satisfies("535.86.10", ">=535.104") &&
           !str_version_satisfies("470.199.02", ">=535"), "at least: component by component");
        ok(str_version_satisfies("Open MPI 4.1.4", "Open MPI 4.1") && str_version_satisfies("Open MPI 4.1.4", "open mpi >=4") &&
           str_version_satisfies("Open MPI 4.1.4", "4.1") && !str_version_satisfies("MPICH 4.1", "Open MPI 4.1") &&
           !str_version_satisfies("Open MPI 4.1.4", "MPICH >=4"), "a product named: it must be that one");
        ok(str_version_valid(">= 12.2") && str_version_minimum(">= 12.2") && str_version_minimum("Open MPI >= 4.1") &&
           !str_version_minimum("12.2") && !str_version_valid("CUDA>= 12") && !str_version_valid("= 12") &&
           !str_version_valid("< 12"), "versions: '>= 12.2' is a minimum; no comparison in a product's name");
        ok(str_version_satisfies("12.2.140", ">= 12.2") && !str_version_satisfies("12.1", ">= 12.2") &&
           str_version_satisfies("Open MPI 4.1.4", "Open MPI >= 4.1") && str_version_satisfies("12.2.140", "CUDA 12.2"),
           "  and met as such; a product named where the node's version names none: the version decides");
        ok(str_version_satisfies("Open MPI 4.1.4a1", "4.1.4") && !str_version_satisfies("", "4") &&
           !str_version_satisfies("none", "4") && !str_version_satisfies("4.1", "bad"), "what the inventory gives");
}

int main(void)
{
        if (!mkdtemp(tmp))
                return perror("mkdtemp"), 99;
        snprintf(dir_a, sizeof(dir_a), "%s/a", tmp);
        snprintf(dir_b, sizeof(dir_b), "%s/b", tmp);
        fs_mkdir_p(dir_a, 0755);
        fs_mkdir_p(dir_b, 0755);
        test_comments();
        test_merge();
        test_inheritance();
        test_sets();
        test_errors();
        test_positions();
        test_bundled();
        test_workloads();
        test_versions();
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", tmp);
        return done_testing();
}

/* test-suite.c: client/report/suite.h: baselines files good and bad (each error's
 * text and line), target matching, the report's arithmetic on numbers
 * checked by hand and with numpy, what it prints, and the Welch comparison
 * (test-stats.c's example: t 2.455, df 24.99, p 0.0214). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "suite.h"
#include "system.h"
#include "tap.h"

static void near(double got, double want, double tol, const char *what)
{
        if (!ok(fabs(got - want) <= tol, what))
                printf("#   got %.10g, want %.10g (tolerance %g)\n", got, want, tol);
}

static const char good[] =
        "// a suite\n"                                                                          /* 1 */
        "{\n"                                                                                   /* 2 */
        "  \"description\": \"test suite\",\n"                                                  /* 3 */
        "  \"performance_tolerance\": -0.05,\n"                                                 /* 4 */
        "  /* block\n"                                                                          /* 5 */
        "     comment with \"benchmarks\" */\n"                                                 /* 6 */
        "  \"benchmarks\": {\n"                                                                 /* 7 */
        "    \"allreduce\": { \"workload\": \"allreduce\", \"set\": { \"max_bytes\": 4194304 },\n" /* 8 */
        "                   \"targets\": { \"local\": 1.0 } },\n"                               /* 9 */
        "    \"ssd-b4\": {\n"                                                                   /* 10 */
        "      \"workload\": \"ssd\",   // the detector\n"                                     /* 11 */
        "      \"set\": { \"batch_size\": 4, \"precision\": \"fp32\", \"nodes\": 1,\n"          /* 12 */
        "               \"ssd.decay_epochs\": [16, 20] },\n"                                    /* 13 */
        "      \"benchmark_steps\": 30, \"warmup_steps\": 0,\n"                                 /* 14 */
        "      \"targets\": { \"local\": 40, \"AMD EPYC\": 35.5, \"EPYC\": 30, \"H200\": 900,\n" /* 15 */
        "                   \"NVIDIA H200\": 950 },\n"                                          /* 16 */
        "      \"performance_tolerance\": -0.1, \"deviation_tolerance\": 0.1\n"                 /* 17 */
        "    }\n"
        "  }\n"
        "}\n";

static void test_good(void)
{
        struct baselines b;
        struct bd_err err = { "" };
        if (!ok(baselines_parse(good, "good.json", &b, &err) == 0, "a good file parses")) {
                printf("#   %s\n", err.msg);
                return;
        }
        is_int(b.n, 2, "two benchmarks");
        is_str(b.path, "good.json", "the label is the path");
        is_str(b.description, "test suite", "description");
        near(b.perf_tol, -0.05, 0, "file's performance tolerance");
        near(b.dev_tol, 0.05, 0, "file's deviation tolerance: the default 5%");
        is_str(b.b[0].name, "allreduce", "file order: allreduce first");
        is_str(b.b[1].name, "ssd-b4", "file order: ssd-b4 second");
        is_int(b.b[0].line, 8, "allreduce's line");
        is_int(b.b[1].line, 10, "ssd-b4's line");
        is_str(b.b[1].workload, "ssd", "workload");
        ok(b.b[0].benchmark_steps == 20 && b.b[0].warmup_steps == 5, "steps default to 20 and 5");
        ok(b.b[1].benchmark_steps == 30 && b.b[1].warmup_steps == 0, "steps as given (0 warmup allowed)");
        ok(b.b[0].perf_tol == -0.05 && b.b[0].dev_tol == 0.05, "tolerances default to the file's");
        ok(b.b[1].perf_tol == -0.1 && b.b[1].dev_tol == 0.1, "a benchmark's own tolerances win");
        is_int(cJSON_GetArraySize(b.b[1].set), 4, "set kept as given");
        is_str(baseline_unit(&b.b[0]), "GB/s", "allreduce's unit");
        is_str(baseline_unit(&b.b[1]), "images/s", "ssd's unit");

        char **sets = baseline_sets(&b.b[1]);
        is_str(sets[0], "ssd.batch_size=4", "set: a workload key goes into its section");
        is_str(sets[1], "ssd.precision=fp32", "set: a string as it is");
        is_str(sets[2], "nodes=1", "set: a system key stays");
        is_str(sets[3], "ssd.decay_epochs=[16,20]", "set: a list as JSON");
        ok(sets[4] == NULL, "set: NULL-terminated");
        strv_free(sets);

        const struct baseline *s = &b.b[1];
        const char *key = "x";
        near(baseline_target(s, "local", "NVIDIA H200", &key), 40, 0, "the system's name wins over the device");
        is_str(key, "local", "  key: the system");
        near(baseline_target(s, "other", "AMD EPYC 9R14 96-Core Processor", &key), 35.5, 0,
             "the longest key in the device name wins");
        is_str(key, "AMD EPYC", "  key: the longest");
        near(baseline_target(s, NULL, "amd epyc 7763", &key), 35.5, 0, "device names match ignoring case");
        near(baseline_target(s, "other", "NVIDIA H200", &key), 950, 0, "'NVIDIA H200' over 'H200'");
        near(baseline_target(s, NULL, "NVIDIA H200 NVL", &key), 950, 0, "a key anywhere in the device name");
        ok(isnan(baseline_target(s, "other", "Intel Xeon", &key)) && key == NULL, "no match: NaN, no key");
        ok(isnan(baseline_target(s, "Local", NULL, &key)), "the system's name matches exactly");
        ok(isnan(baseline_target(s, NULL, NULL, NULL)), "neither given: NaN");
        baselines_release(&b);
        baselines_release(&b);  /* released twice: nothing left to free */

        static const char tie[] = "{ \"benchmarks\": { \"t\": { \"workload\": \"ssd\",\n"
                                  "  \"targets\": { \"EPYC\": 1, \"9R14\": 2 } } } }";
        ok(baselines_parse(tie, "tie.json", &b, &err) == 0, "no targets, no set: parses");
        near(baseline_target(&b.b[0], "local", "AMD EPYC 9R14", &key), 1, 0, "equally long: the first in the file");
        ok(b.description == NULL && b.perf_tol == 0 && b.dev_tol == 0.05, "file defaults: no description, 0, 0.05");
        baselines_release(&b);

        static const char bare[] = "{ \"benchmarks\": { \"t\": { \"workload\": \"maskrcnn\" } } }";
        ok(baselines_parse(bare, "bare.json", &b, &err) == 0, "a benchmark without targets parses");
        ok(cJSON_IsObject(b.b[0].set) && cJSON_IsObject(b.b[0].targets), "  with empty set and targets");
        ok(isnan(baseline_target(&b.b[0], "local", "AMD EPYC", NULL)), "  and no target anywhere");
        baselines_release(&b);
}

static void bad(const char *text, const char *want, const char *what)
{
        struct baselines b;
        struct bd_err err = { "" };
        int r = baselines_parse(text, "t.json", &b, &err);
        if (!ok(r < 0 && strncmp(err.msg, want, strlen(want)) == 0, what)) {
                printf("#   got  '%s' (%d)\n#   want '%s...'\n", err.msg, r, want);
                if (r == 0)
                        baselines_release(&b);
        } else if (strchr(err.msg, '\n')) {
                ok(0, "the error is one line");
        }
}

#define B(body) "{\n  \"benchmarks\": {\n    \"x\": {\n" body "\n    }\n  }\n}\n"

static void test_bad(void)
{
        bad(B("      \"workload\": \"foo\""),
            "t.json:4: benchmark 'x': unknown workload 'foo'; known workloads: ssd, maskrcnn", "unknown workload");
        bad("{\n  \"deviation_tolerance\": 1.5,\n  \"benchmarks\": {}\n}",
            "t.json:2: 'deviation_tolerance' must be a number in [0, 1]", "deviation tolerance out of range");
        bad("{\n  \"performance_tolerance\": \"5%\",\n  \"benchmarks\": {}\n}",
            "t.json:2: 'performance_tolerance' must be a number in [-1, 1]", "performance tolerance not a number");
        bad(B("      \"workload\": \"ssd\",\n      \"tragets\": { \"local\": 1 }"),
            "t.json:5: benchmark 'x': unknown key 'tragets' (did you mean 'targets'?)", "misspelt benchmark key");
        bad("{\n  \"benchmark\": {}\n}", "t.json:2: unknown key 'benchmark' (did you mean 'benchmarks'?)",
            "misspelt top-level key");
        /* a key written with escapes is not found in the text: the line of its object */
        bad("{\n  \"col\\nour\": 1, \"benchmarks\": {}\n}", "t.json:1: unknown key 'col?our'",
            "a newline in a key: still one line");
        bad("{\n  \"colour\": 1, \"benchmarks\": {}\n}", "t.json:2: unknown key 'colour'", "unknown top-level key");
        /* the next benchmark's workload must not lend its line */
        bad("{ \"benchmarks\": {\n  \"x\": { \"set\": {} },\n  \"y\": { \"workload\": \"ssd\" } } }",
            "t.json:2: benchmark 'x': no 'workload'", "missing workload: the benchmark's line");
        bad(B("      \"workload\": 3"), "t.json:4: benchmark 'x': 'workload' must be a string", "workload not a string");
        bad("{\n  \"description\": \"d\",\n  \"benchmarks\": {}\n}",
            "t.json:3: 'benchmarks' is empty: a suite needs at least one", "empty benchmarks");
        bad("// nothing\n{\n  \"description\": \"d\"\n}", "t.json:2: no 'benchmarks'", "no benchmarks");
        bad("{\n  \"benchmarks\": [1]\n}", "t.json:2: 'benchmarks' must be an object", "benchmarks a list");
        bad("[1, 2]", "t.json:1: expected a JSON object at the top, got a list", "not an object");
        bad(B("      \"workload\": \"ssd\",\n      \"targets\": { \"local\": 0 }"),
            "t.json:5: benchmark 'x': target 'local' must be a positive number (images/s)", "target 0");
        bad(B("      \"workload\": \"allreduce\",\n      \"targets\": {\n        \"a\": 1,\n        \"b\": -2 }"),
            "t.json:7: benchmark 'x': target 'b' must be a positive number (GB/s)", "negative target, its line");
        bad(B("      \"workload\": \"ssd\",\n      \"targets\": { \"local\": \"40\" }"),
            "t.json:5: benchmark 'x': target 'local' must be a positive number", "target a string");
        bad(B("      \"workload\": \"ssd\",\n      \"targets\": { \"\": 40 }"),
            "t.json:5: benchmark 'x': target '': the key must name", "empty target key");
        bad(B("      \"workload\": \"ssd\",\n      \"targets\": [40]"),
            "t.json:5: benchmark 'x': 'targets' must be an object", "targets a list");
        bad("{\n  \"benchmarks\": {\n    \"x\": { \"workload\": \"ssd\", }\n  }\n}", "t.json:3:",
            "JSON syntax: json_parse's label:line:column");
        bad("{\n  \"benchmarks\": {\n  /* no end\n }\n}", "t.json:3: unterminated /* comment", "unclosed comment");
        bad("{ \"benchmarks\": {\n  \"ssd b4\": { \"workload\": \"ssd\" } } }",
            "t.json:2: benchmark 'ssd b4': a name is 1 to 64 of A-Z a-z 0-9 . _ -", "a space in the name");
        bad("{ \"benchmarks\": {\n  \"-x\": { \"workload\": \"ssd\" } } }", "t.json:2: benchmark '-x': a name",
            "a name starting with '-'");
        bad("{ \"benchmarks\": {\n  \"x\": { \"workload\": \"ssd\" },\n  \"x\": { \"workload\": \"ssd\" } } }",
            "t.json:3: duplicate key 'x'", "a benchmark named twice: the second's line");
        bad(B("      \"workload\": \"ssd\",\n      \"targets\": { \"local\": 1,\n        \"local\": 2 }"),
            "t.json:6: duplicate key 'local'", "a target named twice");
        bad("{ \"benchmarks\": {\n  \"x\": 3 } }", "t.json:2: benchmark 'x': expected an object, got a number",
            "benchmark not an object");
        bad(B("      \"workload\": \"ssd\",\n      \"set\": {\n        \"batch_sise\": 4 }"),
            "t.json:6: benchmark 'x': 'set': unknown key 'batch_sise' (did you mean 'batch_size'?)",
            "misspelt set key");
        bad(B("      \"workload\": \"ssd\",\n      \"set\": { \"colour\": 4 }"),
            "t.json:5: benchmark 'x': 'set': unknown key 'colour': neither a key of 'ssd' nor a system key",
            "unknown set key");
        bad(B("      \"workload\": \"ssd\",\n      \"set\": { \"batch_size\": \"four\" }"),
            "t.json:5: benchmark 'x': 'ssd.batch_size': expected an integer", "set value of the wrong type");
        bad(B("      \"workload\": \"ssd\",\n      \"set\": { \"batch_size\": 0 }"),
            "t.json:5: benchmark 'x': 'ssd.batch_size': expected an integer in [1, 65536]", "set value out of range");
        bad(B("      \"workload\": \"ssd\",\n      \"set\": { \"precision\": \"fp64\" }"),
            "t.json:5: benchmark 'x': 'ssd.precision':", "set value not a choice");
        bad(B("      \"workload\": \"ssd\",\n      \"set\": { \"ssd\": { \"lr\": 1 } }"),
            "t.json:5: benchmark 'x': 'set': 'ssd' must be a number, string, boolean or list", "set value an object");
        bad(B("      \"workload\": \"ssd\",\n      \"set\": { \"slurm\": [1] }"),
            "t.json:5: benchmark 'x': 'set': 'slurm' is a section", "set a whole section");
        bad(B("      \"workload\": \"ssd\",\n      \"set\": { \"extends\": \"C4140\" }"),
            "t.json:5: benchmark 'x': 'set': 'extends' cannot be overridden", "set extends");
        bad(B("      \"workload\": \"ssd\",\n      \"set\": { \"ssd.warmup_steps\": 2 }"),
            "t.json:5: benchmark 'x': 'set': give 'warmup_steps' beside 'set', not in it", "steps in set");
        bad(B("      \"workload\": \"ssd\",\n      \"set\": [1]"), "t.json:5: benchmark 'x': 'set' must be an object",
            "set a list");
        bad(B("      \"workload\": \"ssd\",\n      \"benchmark_steps\": 0"),
            "t.json:5: benchmark 'x': 'benchmark_steps' must be an integer in [1, 1000000000]", "no benchmark steps");
        bad(B("      \"workload\": \"ssd\",\n      \"warmup_steps\": 2.5"),
            "t.json:5: benchmark 'x': 'warmup_steps' must be an integer in [0, 1000000000]", "fractional warmup");
        bad(B("      \"workload\": \"ssd\",\n      \"deviation_tolerance\": -0.1"),
            "t.json:5: benchmark 'x': 'deviation_tolerance' must be a number in [0, 1]",
            "a benchmark's deviation tolerance");

        struct baselines b;
        struct bd_err err = { "" };
        ok(baselines_load("/nonexistent/suite.json", &b, &err) < 0 && strstr(err.msg, "/nonexistent/suite.json"),
           "a missing file: an error naming it");
}

/* three benchmarks: targets 100 and 50 for system 'local', 10 for an EPYC */
static const char three[] =
        "{ \"benchmarks\": {\n"
        "  \"a\": { \"workload\": \"ssd\", \"targets\": { \"local\": 100 } },\n"
        "  \"b\": { \"workload\": \"ssd\", \"targets\": { \"local\": 50 } },\n"
        "  \"c\": { \"workload\": \"allreduce\", \"targets\": { \"EPYC\": 10 } } } }";

static char *print(const struct baselines *b, const struct suite_row *rows, const struct suite_verdict *v)
{
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);
        suite_print(f, b, rows, v);
        fclose(f);
        return s;
}

static bool has_nan(const char *s)
{
        return strcasestr(s, "nan") || strcasestr(s, "inf");
}

static void test_compute(void)
{
        struct baselines b;
        struct bd_err err = { "" };
        if (!ok(baselines_parse(three, "three.json", &b, &err) == 0, "three benchmarks parse")) {
                printf("#   %s\n", err.msg);
                return;
        }
        const double ra[] = { 100, 104, 96, 102, 98 };  /* olympic 100, sd sqrt(10) */
        const double rb[] = { 54, 56, 55, 55 };         /* olympic 55, sd sqrt(2/3) */
        const double rc[] = { 8, 12, 10 };              /* olympic 10, sd 2: 20% */
        struct suite_input in[3] = { { ra, 5, 0 }, { rb, 4, 0 }, { rc, 3, 0 } };
        struct suite_row rows[3];
        struct suite_verdict v;
        const char *dev = "AMD EPYC 9R14 96-Core Processor";

        suite_compute(&b, "local", dev, in, rows, &v);
        near(rows[0].result, 100, 1e-12, "olympic mean drops the highest and lowest");
        near(rows[0].sd, sqrt(10), 1e-12, "sd: sample sd of all runs");
        near(rows[0].sdpct, sqrt(10) / 100, 1e-12, "sd% = sd / result");
        near(rows[0].diff, 0, 1e-12, "diff = 0 at the target");
        ok(rows[0].pass, "a passes: diff 0 >= 0, sd% 3.2% <= 5%");
        near(rows[1].result, 55, 1e-12, "b: olympic mean 55");
        near(rows[1].diff, 0.1, 1e-12, "b: diff +10%");
        ok(rows[1].pass && rows[1].has_sd && rows[1].n == 4, "b passes");
        near(rows[2].sdpct, 0.2, 1e-12, "c: sd% 20%");
        is_str(rows[2].target_key, "EPYC", "c: target from the device");
        ok(!rows[2].pass, "c fails on its deviation");
        ok(v.all_results, "every benchmark has a result");
        near(v.q80_sdpct, 0.13264911064067353, 1e-12, "80th percentile of sd% (numpy)");
        ok(!v.dev_ok, "13.3% is not under 5%");
        near(v.mean_diff, 0.1 / 3, 1e-12, "mean diff");
        ok(v.perf_ok && !v.pass, "performance holds, the suite fails");

        char *out = print(&b, rows, &v);
        like(out, "BENCHMARK  RUNS  FAILED     TARGET     RESULT         SD     SD%      DIFF  UNIT      PASS\n",
             "table header");
        like(out, "a             5       0        100        100      3.162    3.2%     +0.0%  images/s  yes\n",
             "row a: percents are percents");
        like(out, "b             4       0         50         55     0.8165    1.5%    +10.0%  images/s  yes\n",
             "row b: +10.0%");
        like(out, "c             3       0         10         10          2   20.0%     +0.0%  GB/s      no: sd% 20.0% > 5.0%\n",
             "row c: the reason it fails");
        like(out, "targets: a from 'local', b from 'local', c from 'EPYC'\n", "where the targets came from");
        like(out, "verdict: FAIL (every benchmark produced a result: yes; 80th percentile of sd% 13.3% < 5.0%: no; "
                  "mean diff +3.3% >= +0.0%: yes)\n", "verdict line with its criteria");
        ok(!strstr(out, "no target"), "no 'no target' line when every benchmark has one");
        free(out);

        struct bd_buf j = BD_BUF_INIT;
        suite_json(&j, &b, rows, &v);
        cJSON *root = cJSON_Parse(j.s);
        ok(root != NULL, "JSON parses");
        const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "benchmarks"), 0);
        near(cJSON_GetObjectItem(r0, "result")->valuedouble, 100, 0, "JSON: result");
        near(cJSON_GetObjectItem(r0, "sd_pct")->valuedouble, 3.162278, 0, "JSON: sd% in percent, rounded to 1e-6");
        is_str(cJSON_GetObjectItem(r0, "target_key")->valuestring, "local", "JSON: target key");
        ok(cJSON_IsTrue(cJSON_GetObjectItem(r0, "pass")), "JSON: pass");
        const cJSON *jv = cJSON_GetObjectItem(root, "verdict");
        ok(cJSON_IsFalse(cJSON_GetObjectItem(jv, "pass")), "JSON: verdict");
        near(cJSON_GetObjectItem(jv, "sd_pct_q80")->valuedouble, 13.264911, 0, "JSON: q80 in percent");
        near(cJSON_GetObjectItem(jv, "deviation_tolerance_pct")->valuedouble, 5, 0, "JSON: tolerance in percent");
        cJSON_Delete(root);
        buf_release(&j);

        /* c steady: everything passes */
        const double rc2[] = { 9.9, 10.1, 10 };
        in[2] = (struct suite_input){ rc2, 3, 0 };
        suite_compute(&b, "local", dev, in, rows, &v);
        near(v.q80_sdpct, 0.024911822913211923, 1e-12, "q80 again (numpy)");
        ok(v.pass && rows[2].pass, "steady c: the suite passes");
        out = print(&b, rows, &v);
        like(out, "verdict: PASS (every benchmark produced a result: yes; 80th percentile of sd% 2.5% < 5.0%: yes; "
                  "mean diff +3.3% >= +0.0%: yes)\n", "PASS verdict");
        free(out);

        /* a failed run fails its benchmark, not the suite's criteria */
        in[1].failed = 1;
        suite_compute(&b, "local", dev, in, rows, &v);
        ok(!rows[1].pass && v.pass, "a failed run: the row fails");
        out = print(&b, rows, &v);
        like(out, "no: 1 failed run\n", "  and says so");
        free(out);
        in[1].failed = 0;

        /* c produced nothing */
        in[2] = (struct suite_input){ NULL, 0, 3 };
        suite_compute(&b, "local", dev, in, rows, &v);
        ok(!v.all_results && !v.pass && !rows[2].has_result, "no result from c: FAIL");
        ok(isnan(rows[2].result) && isnan(rows[2].sd) && isnan(rows[2].diff), "absent values are NaN");
        near(v.mean_diff, 0.05, 1e-12, "mean diff over the benchmarks with a result");
        out = print(&b, rows, &v);
        like(out, "c             0       3         10          -          -       -         -  GB/s      "
                  "no: no result; 3 failed runs\n", "row without a result: dashes");
        like(out, "every benchmark produced a result: no, none from c;", "verdict names it");
        ok(!has_nan(out), "NaN is never printed");
        free(out);

        /* a NaN or a zero among the rates is a failed run */
        const double rn[] = { 10, NAN, 10.1, 0, 9.9 };
        in[2] = (struct suite_input){ rn, 5, 1 };
        suite_compute(&b, "local", dev, in, rows, &v);
        ok(rows[2].n == 3 && rows[2].failed == 3, "NaN and 0 rates count as failed runs");
        near(rows[2].result, 10, 1e-12, "  the rest make the result");

        /* performance: a runs 10% slow, the mean diff goes under 0 */
        const double slow[] = { 80, 85, 80, 80, 75 };
        in[0] = (struct suite_input){ slow, 5, 0 };
        in[2] = (struct suite_input){ rc2, 3, 0 };
        suite_compute(&b, "local", dev, in, rows, &v);
        near(rows[0].diff, -0.2, 1e-12, "a: diff -20%");
        near(v.mean_diff, (-0.2 + 0.1 + 0) / 3, 1e-12, "mean diff -3.3%");
        ok(!v.perf_ok && v.dev_ok && !v.pass, "FAIL on performance alone");
        out = print(&b, rows, &v);
        like(out, "no: diff -20.0% < +0.0%\n", "the row's reason");
        like(out, "mean diff -3.3% >= +0.0%: no)\n", "the criterion that fails");
        free(out);

        /* no target on another machine: reported, never passes */
        in[0] = (struct suite_input){ ra, 5, 0 };
        suite_compute(&b, "local", "Intel Xeon", in, rows, &v);
        ok(!rows[2].has_target && !rows[2].pass && rows[2].target_key == NULL, "no target: the row fails");
        near(rows[2].result, 10, 1e-12, "  but has its result");
        near(v.mean_diff, 0.05, 1e-12, "  and stays out of the mean diff");
        out = print(&b, rows, &v);
        like(out, "no: no target\n", "the row says no target");
        like(out, "no target: c (a benchmark without one does not pass; add one to its \"targets\" in three.json",
             "and a line says what to do");
        ok(!has_nan(out), "no NaN printed");
        free(out);

        /* one run each, no targets: nothing to judge by */
        const double one[] = { 10 };
        struct suite_input ones[3] = { { one, 1, 0 }, { one, 1, 0 }, { one, 1, 0 } };
        suite_compute(&b, "nowhere", "Intel Xeon", ones, rows, &v);
        ok(!rows[0].has_sd && isnan(rows[0].sdpct), "one run: no sd");
        ok(isnan(v.q80_sdpct) && isnan(v.mean_diff) && !v.dev_ok && !v.perf_ok && !v.pass, "nothing to judge: FAIL");
        out = print(&b, rows, &v);
        like(out, "80th percentile of sd% unknown (no benchmark has 2 runs) < 5.0%: no", "q80 unknown");
        like(out, "mean diff unknown (no benchmark has a result and a target) >= +0.0%: no)", "mean diff unknown");
        like(out, "no: no target; one run: no sd\n", "the row's reasons");
        ok(!has_nan(out), "no NaN printed");
        free(out);
        j = (struct bd_buf)BD_BUF_INIT;
        suite_json(&j, &b, rows, &v);
        root = cJSON_Parse(j.s);
        r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "benchmarks"), 0);
        ok(cJSON_IsNull(cJSON_GetObjectItem(r0, "target")) && cJSON_IsNull(cJSON_GetObjectItem(r0, "sd_pct")) &&
           cJSON_IsNull(cJSON_GetObjectItem(r0, "target_key")), "JSON: null where absent");
        ok(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "verdict"), "mean_diff_pct")),
           "JSON: verdict nulls");
        ok(!has_nan(j.s), "JSON: no NaN");
        cJSON_Delete(root);
        buf_release(&j);
        baselines_release(&b);

        /* a benchmark's own tolerances judge its row, the file's the suite */
        static const char tol[] =
                "{ \"performance_tolerance\": -0.25, \"deviation_tolerance\": 0.3, \"benchmarks\": {\n"
                "  \"a\": { \"workload\": \"ssd\", \"targets\": { \"local\": 100 }, \"performance_tolerance\": 0 } } }";
        ok(baselines_parse(tol, "tol.json", &b, &err) == 0, "tolerances file parses");
        in[0] = (struct suite_input){ slow, 5, 0 };
        suite_compute(&b, "local", NULL, in, rows, &v);
        ok(!rows[0].pass && v.pass, "row judged by its own 0, the suite by the file's -25%");
        out = print(&b, rows, &v);
        like(out, "80th percentile of sd% 4.4% < 30.0%: yes; mean diff -20.0% >= -25.0%: yes)", "the file's tolerances");
        free(out);
        baselines_release(&b);
}

static void test_compare(void)
{
        static const char two[] =
                "{ \"benchmarks\": {\n"
                "  \"welch\": { \"workload\": \"ssd\" },\n"
                "  \"same\": { \"workload\": \"ssd\" },\n"
                "  \"few\": { \"workload\": \"allreduce\" },\n"
                "  \"flat\": { \"workload\": \"ssd\" } } }";
        struct baselines b;
        struct bd_err err = { "" };
        ok(baselines_parse(two, "two.json", &b, &err) == 0, "compare file parses");
        const double a[] = { 27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4 };
        const double c[] = { 27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4 };
        const double x[] = { 100, 104, 96, 102, 98 }, y[] = { 101, 99, 103, 97, 100 };
        const double one[] = { 5 }, flat[] = { 7, 7, 7 };
        struct suite_input before[4] = { { a, 15, 0 }, { x, 5, 0 }, { one, 1, 0 }, { flat, 3, 0 } };
        struct suite_input after[4] = { { c, 15, 0 }, { y, 5, 0 }, { x, 5, 0 }, { flat, 3, 0 } };
        char *out = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);
        suite_print_compare(f, &b, before, after);
        fclose(f);
        like(out, "BENCHMARK     BEFORE      AFTER    CHANGE         T      DF         P  UNIT      SIGNIFICANCE\n", "header");
        /* olympic means 20.6077 and 22.8846 (numpy): +11.0% */
        like(out, "welch          20.61      22.88    +11.0%      2.46    25.0    0.0214  images/s  significant: faster\n",
             "Welch's example: t 2.455, df 24.99, p 0.0214");
        like(out, "same             100        100     +0.0%      0.00     7.2         1  images/s  not significant\n",
             "no difference: t 0, df 7.2 (numpy)");
        like(out, "few                5        100  +1900.0%         -       -         -  GB/s      too few runs\n",
             "one run before: too few runs");
        like(out, "flat               7          7     +0.0%         -       -         -  images/s  no variance\n",
             "identical runs: no variance");
        free(out);

        /* the other way round: slower */
        before[0] = (struct suite_input){ c, 15, 0 };
        after[0] = (struct suite_input){ a, 15, 0 };
        out = NULL;
        f = open_memstream(&out, &n);
        suite_print_compare(f, &b, before, after);
        fclose(f);
        like(out, "-9.9%     -2.46    25.0    0.0214  images/s  significant: slower\n", "slower");
        free(out);
        baselines_release(&b);
}

int main(void)
{
        test_good();
        test_bad();
        test_compute();
        test_compare();
        return done_testing();
}

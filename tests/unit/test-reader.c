/* test-reader.c: the bundled workloads' result rules (reader.h) on recorded
 * excerpts of their trainers' own logs, tests/fixtures/logs/NAME.log (and
 * NAME.result, the result file, for the json and dllogger readers), each
 * against NAME.expect: lines "throughput=X", "accuracy=X", "accuracy_segm=X",
 * "seconds=X" (6 digits), "converged=yes|no", and optionally "target=X" /
 * "target_segm=X" (else the workload's own default targets).  A value not
 * named is not checked; every bundled workload read by rules of its own
 * (not MLLOG) must have an excerpt. */
#include "config.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "json.h"
#include "reader.h"
#include "strutil.h"
#include "tap.h"
#include "workload.h"

static double default_target(const struct workload *w, const char *key)
{
        _cleanup_json_ cJSON *d = key ? cJSON_Parse(w->defaults) : NULL;
        return key ? json_num(d, key, -1) : -1;
}

static void check_value(const char *name, const char *what, bool has, double got, double want)
{
        char msg[400];
        snprintf(msg, sizeof(msg), "%s: %s %g (read %g)", name, what, want, has ? got : NAN);
        /* the excerpts' figures are written to 6 digits */
        ok(has && fabs(got - want) <= 1e-5 * fmax(1, fabs(want)), msg);
}

static void one(const char *dir, const char *name)
{
        _cleanup_free_ char *ep = xasprintf("%s/%s.expect", dir, name), *lp = xasprintf("%s/%s.log", dir, name);
        _cleanup_free_ char *rp = xasprintf("%s/%s.result", dir, name);
        _cleanup_free_ char *expect = NULL, *log = NULL, *result = NULL;
        size_t llen = 0, rlen = 0;
        const struct workload *w = workload_find(name);
        char msg[400];
        snprintf(msg, sizeof(msg), "%s: a bundled workload with its excerpt", name);
        if (!ok(w && fs_read_file(ep, 1 << 20, &expect, NULL, NULL) == 0 &&
                fs_read_file(lp, 16 << 20, &log, &llen, NULL) == 0, msg))
                return;
        bool has_result = fs_read_file(rp, 16 << 20, &result, &rlen, NULL) == 0;
        double target = default_target(w, w->target_key), target_segm = default_target(w, w->target_segm_key);
        for (char *save = NULL, *line = strtok_r(expect, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                if (str_has_prefix(line, "target="))
                        target = strtod(line + 7, NULL);
                else if (str_has_prefix(line, "target_segm="))
                        target_segm = strtod(line + 12, NULL);
        struct bd_err err;
        struct reader *r = reader_new(&w->reader, &err);
        struct mlperf_trial t;
        struct reader_values v;
        reader_values_init(&v);
        reader_read_text(w, r, log, llen, has_result ? result : NULL, rlen, target, target_segm, &t, &v);
        free(expect);
        expect = NULL;
        (void) fs_read_file(ep, 1 << 20, &expect, NULL, NULL);
        for (char *save = NULL, *line = strtok_r(expect, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *eq = strchr(line, '=');
                if (!eq || line[0] == '#')
                        continue;
                *eq = '\0';
                const char *k = line, *val = eq + 1;
                double x = strtod(val, NULL);
                if (streq(k, "throughput"))
                        check_value(name, k, t.throughput_logged > 0 || t.throughput > 0, t.throughput, x);
                else if (streq(k, "accuracy"))
                        check_value(name, k, t.has_accuracy, t.accuracy, x);
                else if (streq(k, "accuracy_segm"))
                        check_value(name, k, t.has_accuracy_segm, t.accuracy_segm, x);
                else if (streq(k, "seconds"))
                        check_value(name, k, t.timed, t.time_to_train, x);
                else if (streq(k, "converged")) {
                        snprintf(msg, sizeof(msg), "%s: converged %s (%s)", name, val, t.reason[0] ? t.reason : "-");
                        ok(t.converged == streq(val, "yes"), msg);
                } else if (!streq(k, "target") && !streq(k, "target_segm")) {
                        snprintf(msg, sizeof(msg), "%s.expect: unknown line '%s'", name, k);
                        ok(false, msg);
                }
        }
        reader_values_release(&v);
        reader_free(r);
}

int main(void)
{
        const char *src = getenv("srcdir");
        _cleanup_free_ char *dir = xasprintf("%s/tests/fixtures/logs", src ? src : ".");
        /* every bundled workload with rules of its own has an excerpt */
        for (const struct workload *const *w = workload_all(); *w; w++) {
                if ((*w)->reader.read == READ_MLLOG || !str_has_suffix((*w)->file, "(bundled)"))
                        continue;
                _cleanup_free_ char *ep = xasprintf("%s/%s.expect", dir, (*w)->name);
                char msg[400];
                snprintf(msg, sizeof(msg), "%s reads its own lines: it has an excerpt to read", (*w)->name);
                ok(access(ep, R_OK) == 0, msg);
        }
        DIR *d = opendir(dir);
        int n = 0;
        for (struct dirent *e; d && (e = readdir(d));)
                if (str_has_suffix(e->d_name, ".expect")) {
                        _cleanup_free_ char *name = xstrndup(e->d_name, strlen(e->d_name) - strlen(".expect"));
                        one(dir, name);
                        n++;
                }
        if (d)
                closedir(d);
        ok(n > 0, "excerpts read");
        return done_testing();
}

/* test-stage.c: the stage job through its library API, the way benchd is to
 * drive it: a job in its own thread, progress read from another, cancel,
 * state files listed, loaded and resumed, verify-only problems. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "randfile.h"
#include "stage/stage.h"
#include "tap.h"

static char root[] = "/tmp/test-stage.XXXXXX";

static void put(const char *rel, size_t size, unsigned seed)
{
        char *path = xasprintf("%s/%s", root, rel);
        char *dir = xstrdup(path);
        *strrchr(dir, '/') = '\0';
        char *cmd = xasprintf("mkdir -p '%s'", dir);
        if (system(cmd) != 0)
                abort();
        write_random_file(path, size, seed);
        free(cmd);
        free(dir);
        free(path);
}

static struct bd_stage_opts opts(enum bd_stage_mode mode, const char *name, const char *dst)
{
        static char src[256], d[256], state[256];
        snprintf(src, sizeof(src), "%s/src", root);
        snprintf(d, sizeof(d), "%s/%s", root, dst);
        snprintf(state, sizeof(state), "%s/state", root);
        return (struct bd_stage_opts){ .mode = mode, .name = name, .src = src, .dst = d, .state_dir = state,
                                       .workers = 4, .fsync = FSYNC_NONE, .copy_method = COPY_AUTO };
}

static void sleep_ms(long ms)
{
        struct timespec ts = { 0, ms * 1000000 };
        nanosleep(&ts, NULL);
}

static void test_threaded_stage(void)
{
        struct bd_stage_opts o = opts(STAGE_COPY, "ds", "dst");
        struct bd_err err;
        struct bd_stage *s = stage_new(&o, &err);
        ok(s != NULL, "stage_new");
        is_int(stage_start(s, &err), 0, "stage_start runs the job in a thread");
        /* read progress from this thread while the job runs */
        struct bd_stage_progress p, last = { 0 };
        bool monotonic = true;
        while (!stage_wait_for(s, 0.001)) {
                stage_progress(s, &p);
                monotonic &= p.files_done >= last.files_done && p.bytes_done >= last.bytes_done &&
                             (p.files_total == 0 || p.files_done <= p.files_total);
                last = p;
        }
        ok(monotonic, "progress only grows, never past the total");
        is_int(stage_wait(s), 0, "the job completes");
        if (stage_error(s))
                printf("# %s\n", stage_error(s));
        stage_progress(s, &p);
        is_int(p.state, STAGE_COMPLETE, "state complete");
        is_int(p.phase, PHASE_DONE, "phase done");
        is_int(p.files_total, 21, "21 files");
        is_int(p.files_done, p.files_total, "files done = total");
        is_int(p.bytes_done, p.bytes_total, "bytes done = total");
        is_int(p.files_copied, 21, "all copied");
        is_int(p.files_hashed, 21, "all checksummed on the way (no manifest before)");
        ok(p.eta == 0, "nothing left");
        cJSON *j = stage_progress_json(&p);
        const cJSON *methods = cJSON_GetObjectItemCaseSensitive(j, "copy_methods");
        double by_method = 0;
        for (const cJSON *x = methods ? methods->child : NULL; x; x = x->next)
                by_method += x->valuedouble;
        ok(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "files_total")) == 21 &&
                   cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "files_hashed")) == 21 &&
                   cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "eta_seconds")) == 0 &&
                   by_method == 21,
           "stage_progress_json: the counters, copy_methods");
        is_str(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "phase")), "done", "  the phase");
        cJSON_Delete(j);
        const struct bd_manifest *m = stage_manifest(s);
        ok(m && m->files == 21, "the manifest is there");
        char want[33];
        manifest_sum_hex(m->sum, want);
        like(stage_manifest_path(s), "/src/.benchd-manifest", "stored with the source");

        struct bd_stage_record r;
        is_int(stage_record_load(o.state_dir, "ds", &r, &err), 0, "the state file loads");
        is_int(r.state, STAGE_COMPLETE, "  state complete");
        is_int(r.files, 21, "  21 files");
        is_int(r.files_copied, 21, "  21 copied");
        char got[33];
        manifest_sum_hex(r.manifest_sum, got);
        is_str(got, want, "  the manifest checksum");
        is_str(r.dst, o.dst, "  the destination");
        is_int(r.workers, 4, "  the options");
        stage_record_progress(&r, &p);
        j = stage_progress_json(&p);
        ok(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "files_total")) == 21 &&
                   cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "files_copied")) == 21,
           "stage_progress_json of the record: the same names");
        ok(!cJSON_GetObjectItemCaseSensitive(j, "files_done") && !cJSON_GetObjectItemCaseSensitive(j, "phase") &&
                   !cJSON_GetObjectItemCaseSensitive(j, "eta_seconds"),
           "  and only what the record keeps");
        cJSON_Delete(j);
        stage_free(s);

        /* a daemon restarted: resume from the record */
        struct bd_stage_opts ro;
        stage_record_opts(&r, o.state_dir, &ro);
        s = stage_new(&ro, &err);
        is_int(stage_run(s), 0, "the recorded job runs again");
        stage_progress(s, &p);
        is_int(p.files_present, 21, "  finding every file in place");
        is_int(p.files_copied, 0, "  copying none");
        stage_free(s);
        stage_record_release(&r);
}

static void test_cancel(void)
{
        struct bd_stage_opts o = opts(STAGE_COPY, "slow", "slow");
        o.bwlimit = 200000;     /* about 4 s for the tree */
        struct bd_err err;
        struct bd_stage *s = stage_new(&o, &err);
        is_int(stage_start(s, &err), 0, "a slow job starts");
        struct bd_stage_progress p;
        do {
                sleep_ms(20);
                stage_progress(s, &p);
        } while (p.bytes_done == 0 && p.state == STAGE_RUNNING);
        ok(p.rate >= 0, "rate is known or zero while running");
        stage_cancel(s);
        is_int(stage_wait(s), -ECANCELED, "stage_cancel ends it as cancelled");
        stage_progress(s, &p);
        is_int(p.state, STAGE_CANCELLED, "  state cancelled");
        ok(p.files_done < p.files_total, "  before the end");
        stage_free(s);
        struct bd_stage_record r;
        is_int(stage_record_load(o.state_dir, "slow", &r, &err), 0, "its state file loads");
        is_int(r.state, STAGE_CANCELLED, "  cancelled");
        ok(r.bwlimit == 200000, "  with its bandwidth limit");
        stage_record_release(&r);
        o.bwlimit = 0;
        s = stage_new(&o, &err);
        is_int(stage_run(s), 0, "running it again completes it");
        stage_progress(s, &p);
        ok(p.files_present > 0 && p.files_present + p.files_copied == 21, "  keeping what was done");
        stage_free(s);
}

static void test_verify_problems(void)
{
        char *victim = xasprintf("%s/dst/a/f03", root);
        struct stat st;
        stat(victim, &st);
        int fd = open(victim, O_WRONLY | O_CLOEXEC);
        ok(fd >= 0 && pwrite(fd, "X", 1, 10) == 1, "damage a staged file");
        close(fd);
        struct timespec ts[2] = { st.st_atim, st.st_mtim };
        utimensat(AT_FDCWD, victim, ts, 0);
        free(victim);
        struct bd_stage_opts o = opts(STAGE_VERIFY_ONLY, "ds", "dst");
        o.src = NULL;   /* the destination's own manifest */
        struct bd_err err;
        struct bd_stage *s = stage_new(&o, &err);
        ok(stage_run(s) < 0, "verify-only fails");
        const struct bd_stage_problem *pr;
        size_t n = stage_problems(s, &pr);
        is_int(n, 1, "one problem");
        if (n == 1) {
                is_int(pr[0].kind, PROB_CORRUPT, "  corrupt");
                is_int(pr[0].severity, SEV_ERROR, "  an error");
                is_str(pr[0].path, "a/f03", "  which file");
        }
        cJSON *j = stage_problems_json(s, 0);
        cJSON *j0 = cJSON_GetArrayItem(j, 0);
        is_int(cJSON_GetArraySize(j), 1, "stage_problems_json: the problem");
        is_str(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j0, "kind")), "corrupt", "  its kind");
        is_str(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j0, "severity")), "error", "  its severity");
        is_str(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j0, "path")), "a/f03", "  its path");
        like(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j0, "message")), "corrupt: 'a/f03'", "  message");
        cJSON_Delete(j);
        stage_free(s);
        struct bd_stage_record r;
        stage_record_load(o.state_dir, "ds", &r, &err);
        is_int(r.nsuspects, 1, "the state file remembers the damaged file");
        stage_record_release(&r);
        o = opts(STAGE_COPY, "ds", "dst");
        s = stage_new(&o, &err);
        is_int(stage_run(s), 0, "the next stage");
        struct bd_stage_progress p;
        stage_progress(s, &p);
        is_int(p.files_repaired, 1, "  repairs it");
        stage_free(s);
}

static void test_misc(void)
{
        struct bd_err err;
        struct bd_stage_opts o = opts(STAGE_COPY, "../evil", "x");
        ok(stage_new(&o, &err) == NULL, "a name with a path in it is refused");
        like(err.msg, "invalid dataset name '../evil'", "  saying why");
        o = opts(STAGE_COPY, "x", "x");
        o.src = NULL;
        ok(stage_new(&o, &err) == NULL, "no source");
        ok(stage_name_valid("coco-2017_v1.0"), "a good name");
        ok(!stage_name_valid(".hidden"), "a hidden name");
        ok(!stage_name_valid(""), "an empty name");
        ok(!stage_name_valid("a/b"), "a slash");
        enum bd_fsync_policy f;
        ok(stage_fsync_policy_parse("file", &f) == 0 && f == FSYNC_FILE, "fsync policy names");
        ok(stage_fsync_policy_parse("sometimes", &f) < 0, "  unknown");
        is_str(stage_severity_name(SEV_WARNING), "warning", "severity names");
        is_str(stage_severity_name(SEV_NOTE), "note", "  the last one");
        char **names;
        size_t n;
        char *dir = xasprintf("%s/state", root);
        is_int(stage_records(dir, &names, &n), 0, "list the state files");
        is_int(n, 2, "  two datasets");
        if (n == 2) {
                is_str(names[0], "ds", "  sorted");
                is_str(names[1], "slow", "  sorted");
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        free(dir);
        struct bd_stage_record r;
        is_int(stage_record_load(o.state_dir, "nothing", &r, &err), -ENOENT, "no state file: -ENOENT");
        ok(stage_default_workers() >= 16 && stage_default_workers() <= 64, "default workers");
}

int main(void)
{
        if (!mkdtemp(root))
                return 1;
        for (unsigned i = 0; i < 20; i++) {
                char rel[32];
                snprintf(rel, sizeof(rel), "src/a/f%02u", i);
                put(rel, 20000 + 3000 * i, i + 1);
        }
        put("src/b/big", 600000, 99);
        test_threaded_stage();
        test_cancel();
        test_verify_problems();
        test_misc();
        char *cmd = xasprintf("rm -rf '%s'", root);
        if (system(cmd) != 0)
                return 1;
        free(cmd);
        return done_testing();
}

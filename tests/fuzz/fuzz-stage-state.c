/* fuzz-stage-state.c: a dataset's stage state file (lib/stage/stage.h),
 * which benchd reads at start to resume the jobs it left running.
 *
 * The input is STATE_DIR/coco.state.  Promises checked:
 *   - stage_record_load() gives an error naming the file, or a record of
 *     dataset 'coco', never both;
 *   - the record's enums are in range, and its JSON (stage_progress_json())
 *     and resumed options (stage_record_opts(), stage_new()) are made
 *     without trouble;
 *   - saved and loaded again it is the same record (times are saved to the
 *     millisecond and the bandwidth limit to the byte: those are compared
 *     from the second load on, everything else from the first).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "fs.h"
#include "fuzz.h"
#include "json.h"
#include "stage/stage.h"

static char *state_dir, *copy_dir;

static void setup(void)
{
        if (state_dir)
                return;
        state_dir = fuzz_path("state");
        copy_dir = fuzz_path("state-copy");
        FUZZ_CHECK(fs_mkdir_p(state_dir, 0700) == 0, "cannot create '%s'", state_dir);
}

static bool same_str(const char *a, const char *b)
{
        return a ? b && streq(a, b) : !b;
}

static bool same_double(double a, double b)
{
        return a == b || (isnan(a) && isnan(b));
}

/* Whether two records are the same, times and bandwidth compared when exact. */
static bool same_record(const struct bd_stage_record *a, const struct bd_stage_record *b, bool exact)
{
        if (!same_str(a->name, b->name) || !same_str(a->src, b->src) || !same_str(a->dst, b->dst) ||
            !same_str(a->error, b->error) || a->mode != b->mode || a->state != b->state ||
            a->have_manifest != b->have_manifest ||
            (a->have_manifest && memcmp(a->manifest_sum, b->manifest_sum, 16)) || a->files != b->files ||
            a->bytes != b->bytes || a->files_copied != b->files_copied || a->bytes_copied != b->bytes_copied ||
            a->files_present != b->files_present || a->files_repaired != b->files_repaired ||
            a->errors != b->errors || a->pid != b->pid || a->workers != b->workers || a->verify != b->verify ||
            a->delete_extra != b->delete_extra || a->fsync != b->fsync || a->nsuspects != b->nsuspects)
                return false;
        for (size_t i = 0; i < a->nsuspects; i++)
                if (!streq(a->suspects[i], b->suspects[i]))
                        return false;
        return !exact || (same_double(a->started, b->started) && same_double(a->finished, b->finished) &&
                          same_double(a->verified, b->verified) && same_double(a->bwlimit, b->bwlimit));
}

/* Saves r into copy_dir and loads it back into ret. */
static void save_load(const struct bd_stage_record *r, struct bd_stage_record *ret)
{
        struct bd_err err = { "" };
        FUZZ_CHECK(stage_record_save(copy_dir, r, &err) == 0, "a loaded record does not save: %s", err.msg);
        FUZZ_CHECK(stage_record_load(copy_dir, "coco", ret, &err) == 0, "a saved record does not load: %s",
                   err.msg);
}

static void check_record(const struct bd_stage_record *r)
{
        struct bd_stage_progress p;
        struct bd_stage_opts o;
        struct bd_err err = { "" };
        FUZZ_CHECK(streq(r->name, "coco"), "the record of 'coco' names '%s'", r->name);
        FUZZ_CHECK((unsigned)r->mode <= STAGE_MANIFEST_ONLY && (unsigned)r->state < _STAGE_STATE_MAX &&
                   (unsigned)r->fsync < _FSYNC_MAX, "an enum out of range");
        for (size_t i = 0; i < r->nsuspects; i++)
                FUZZ_CHECK(r->suspects[i], "suspect %zu is NULL", i);
        stage_record_progress(r, &p);
        _cleanup_json_ cJSON *j = stage_progress_json(&p);
        _cleanup_free_ char *text = cJSON_PrintUnformatted(j);
        FUZZ_CHECK(text && fuzz_utf8_valid(text), "the record's progress is no JSON");
        stage_record_opts(r, state_dir, &o);
        struct bd_stage *s = stage_new(&o, &err);
        FUZZ_CHECK(s || err.msg[0], "stage_new refused the resumed options without a message");
        stage_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        setup();
        _cleanup_free_ char *path = xasprintf("%s/coco.state", state_dir);
        struct bd_stage_record rec, again, third;
        struct bd_err err = { "" };
        fuzz_write(path, data, size);
        memset(&rec, 0, sizeof(rec));
        int r = stage_record_load(state_dir, "coco", &rec, &err);
        if (r < 0) {
                FUZZ_CHECK(r == -EINVAL || r == -EFBIG, "stage_record_load returned %d", r);
                FUZZ_CHECK(!rec.name && !rec.suspects, "stage_record_load failed and gave a record");
                FUZZ_CHECK(strstr(err.msg, "coco.state"), "an error without the file's name: '%s'", err.msg);
                return 0;
        }
        FUZZ_CHECK(r == 0, "stage_record_load returned %d", r);
        check_record(&rec);
        save_load(&rec, &again);
        FUZZ_CHECK(same_record(&rec, &again, false), "a record changed through save and load");
        save_load(&again, &third);
        FUZZ_CHECK(same_record(&again, &third, true), "a record changed through a second save and load");
        stage_record_release(&rec);
        stage_record_release(&again);
        stage_record_release(&third);
        return 0;
}

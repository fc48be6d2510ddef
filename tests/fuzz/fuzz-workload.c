/* fuzz-workload.c: workload files (lib/workload.h).
 *
 * The input is a workload file.  It is checked as a file of the search path
 * would be, against the bundled workloads as its possible bases, twice:
 *   - as fuzz.json, a workload of its own (or extending a bundled one, as
 *     the seeds do with "extends");
 *   - as ssd.json, the name of a bundled workload, which it may extend
 *     (a file refining the workload of its own name).
 * Promises checked, each time:
 *   - workload_check_text() returns 0, or a negative errno with a message of
 *     one line of valid UTF-8 that starts with the file's name;
 *   - the same text gives the same answer a second time (nothing of one
 *     check stays behind for the next).
 */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "workload.h"

static void check_as(const char *text, const char *name, const char *label)
{
        struct bd_err err = { 0 }, again = { 0 };
        int r = workload_check_text(text, name, label, &err);
        FUZZ_CHECK(r <= 0, "%s: returned %d", label, r);
        if (r < 0) {
                FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n'), "%s: the message is not one line: '%s'", label,
                           err.msg);
                FUZZ_CHECK(fuzz_utf8_valid(err.msg), "%s: the message is not UTF-8", label);
                FUZZ_CHECK(!strncmp(err.msg, label, strlen(label)), "%s: the message does not name the file: '%s'",
                           label, err.msg);
        }
        int r2 = workload_check_text(text, name, label, &again);
        FUZZ_CHECK(r2 == r, "%s: %d the first time, %d the second", label, r, r2);
        FUZZ_CHECK(r == 0 || streq(err.msg, again.msg), "%s: two messages for one text: '%s', '%s'", label, err.msg,
                   again.msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > 65536)
                return 0;
        _cleanup_free_ char *text = fuzz_str(data, size);
        if (strlen(text) != size)
                return 0; /* a NUL byte: the reader refuses such files before parsing */
        check_as(text, "fuzz", "fuzz.json");
        check_as(text, "ssd", "ssd.json");
        return 0;
}

/* fuzz-hostfile.c: Open MPI hostfiles (lib/hostfile.h).
 *
 * Promises checked: an error ("fuzz:LINE: ..." or "fuzz: no host") or a
 * non-empty list of hosts, never both; every host is a word of the text
 * that holds no blank, no '#' and no '=', and none is named twice; the
 * same text read again gives the same answer; a comment line added at the
 * end changes nothing. */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "hostfile.h"
#include "strutil.h"
#include "system.h"

static void same(char **a, char **b, int ra, int rb, const char *what)
{
        FUZZ_CHECK(ra == rb, "%s: %d then %d", what, ra, rb);
        for (size_t i = 0; ra == 0 && (a[i] || b[i]); i++)
                FUZZ_CHECK(a[i] && b[i] && streq(a[i], b[i]), "%s: host %zu differs", what, i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *text = fuzz_str(data, size);
        struct bd_err err = { { 0 } };
        char **hosts = NULL, **again = NULL;
        int r = hostfile_parse(text, "fuzz", &hosts, &err);
        if (r < 0) {
                FUZZ_CHECK(str_has_prefix(err.msg, "fuzz:") && !strchr(err.msg, '\n'), "error '%s'", err.msg);
        } else {
                FUZZ_CHECK(hosts && hosts[0], "no error and no host");
                for (size_t i = 0; hosts[i]; i++) {
                        FUZZ_CHECK(*hosts[i] && !strpbrk(hosts[i], " \t\r\n#="), "host '%s'", hosts[i]);
                        FUZZ_CHECK(strstr(text, hosts[i]), "host '%s' is not in the text", hosts[i]);
                        for (size_t k = 0; k < i; k++)
                                FUZZ_CHECK(!streq(hosts[k], hosts[i]), "host '%s' twice", hosts[i]);
                }
        }
        struct bd_err err2;
        int r2 = hostfile_parse(text, "fuzz", &again, &err2);
        same(hosts, again, r, r2, "read twice");
        if (r2 == 0)
                strv_free(again);
        _cleanup_free_ char *more = xasprintf("%s\n# a comment\n", text);
        r2 = hostfile_parse(more, "fuzz", &again, &err2);
        same(hosts, again, r, r2, "a comment line added");
        if (r2 == 0)
                strv_free(again);
        if (r == 0)
                strv_free(hosts);
        return 0;
}

/* fuzz-fetch-journal.c: a download's journal (DEST.part.journal,
 * client/fetch/fetch.h), as a resumed fetch reads it: the file may be cut
 * anywhere by a kill, or damaged.
 *
 * Promises checked: never a crash; refused with one line, or taken with a
 * positive size, a chunk size in bounds, a chunk count that covers the
 * size, and as many chunks marked done as the count returned. */
#include "config.h"

#include <string.h>

#include "fetch.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct fetch_journal j;
        struct bd_err err;
        int n = fetch_journal_parse((const char *)data, size, &j, &err);
        if (n < 0) {
                FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n'), "a refusal is one line: '%s'", err.msg);
                return 0;
        }
        FUZZ_CHECK(j.size > 0 && j.chunk >= 4096, "size %lld chunk %lld", (long long)j.size, (long long)j.chunk);
        FUZZ_CHECK(j.nchunks * j.chunk >= j.size && (j.nchunks - 1) * j.chunk < j.size, "%lld chunks",
                   (long long)j.nchunks);
        int64_t done = 0;
        for (int64_t i = 0; i < j.nchunks; i++)
                done += j.done[i] != 0;
        FUZZ_CHECK(done == n, "%lld chunks done, %d said", (long long)done, n);
        fetch_journal_release(&j);
        return 0;
}

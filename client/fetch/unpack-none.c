/* unpack-none.c: unpack.h where the build found no libarchive. */
#include "config.h"

#include <errno.h>

#include "unpack.h"

int unpack_measure(const char *archive, uint64_t *files, uint64_t *bytes, struct bd_err *err)
{
        *files = *bytes = 0;
        return bd_err_set(err, -ENOTSUP, "%s: cannot unpack: built without libarchive (install libarchive-dev and "
                          "build again, or unpack it by hand)", archive);
}

int unpack_archive(const char *archive, const char *dest, const struct unpack_opts *o, struct unpack_stats *st,
                   struct bd_err *err)
{
        uint64_t f, b;
        (void)dest;
        (void)o;
        *st = (struct unpack_stats){ 0 };
        return unpack_measure(archive, &f, &b, err);
}

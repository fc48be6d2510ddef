/* mpi-sanitizer.c: what LeakSanitizer should not blame on us in MPI programs.
 *
 * Open MPI and the libraries it loads (PMIx, hwloc, libevent and its
 * dlopen'ed components) keep allocations past MPI_Finalize by design.  In a
 * --enable-sanitizers build these hooks make LeakSanitizer skip them, with
 * full stack unwinding so that frames in those libraries are seen; leaks in
 * our own code are still reported.  In other builds nothing calls them.
 */
#include "config.h"

const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void);
const char *__lsan_default_options(void);

const char *__lsan_default_options(void)
{
        return "print_suppressions=0";
}

const char *__lsan_default_suppressions(void)
{
        return "leak:libmpi.so\n"
               "leak:libopen-pal.so\n"
               "leak:libopen-rte.so\n"
               "leak:libpmix.so\n"
               "leak:libhwloc.so\n"
               "leak:libevent\n"
               "leak:libucs.so\n"
               "leak:libucp.so\n"
               "leak:libfabric.so\n";
}

const char *__asan_default_options(void)
{
        return "fast_unwind_on_malloc=0";
}

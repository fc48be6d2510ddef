/* parallel.c: a shared counter and a handful of pthreads. */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "macro.h"
#include "parallel.h"

struct pf {
        parallel_fn *fn;
        void *ctx;
        size_t n;
        atomic_size_t next;
};

struct pf_thread {
        struct pf *pf;
        int id;
};

static void *pf_main(void *arg)
{
        struct pf_thread *t = arg;
        struct pf *pf = t->pf;
        for (;;) {
                size_t i = atomic_fetch_add(&pf->next, 1);
                if (i >= pf->n)
                        break;
                pf->fn(pf->ctx, i, t->id);
        }
        return NULL;
}

void parallel_for(size_t n, int threads, parallel_fn *fn, void *ctx)
{
        if (threads > (int)n)
                threads = (int)n;
        if (threads <= 1) {
                for (size_t i = 0; i < n; i++)
                        fn(ctx, i, 0);
                return;
        }
        struct pf pf = { .fn = fn, .ctx = ctx, .n = n };
        atomic_init(&pf.next, 0);
        _cleanup_free_ pthread_t *tids = xcalloc((size_t)threads, sizeof(*tids));
        _cleanup_free_ struct pf_thread *ts = xcalloc((size_t)threads, sizeof(*ts));
        int started = 0;
        for (int i = 1; i < threads; i++) {
                ts[i] = (struct pf_thread){ &pf, i };
                if (pthread_create(&tids[i], NULL, pf_main, &ts[i]) != 0)
                        break;  /* fewer threads: the others take up the work */
                started = i;
        }
        ts[0] = (struct pf_thread){ &pf, 0 };
        pf_main(&ts[0]);
        for (int i = 1; i <= started; i++)
                pthread_join(tids[i], NULL);
}

int parallel_cpus(void)
{
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof(set), &set) == 0) {
                int n = CPU_COUNT(&set);
                if (n > 0)
                        return n;
        }
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n > 0 ? (int)n : 1;
}

/* scratch.c: a pool of reusable tensors. */
#include "config.h"

#include <string.h>

#include "macro.h"
#include "scratch.h"

void bd_scratch_init(struct bd_scratch *s, struct bd_backend *be)
{
        memset(s, 0, sizeof(*s));
        s->be = be;
}

struct bd_tensor *bd_scratch_get(struct bd_scratch *s, enum bd_dtype dt, enum bd_layout l, int ndim,
                                 const int64_t *dims)
{
        size_t bytes = bd_dtype_size(dt);
        for (int i = 0; i < ndim; i++)
                bytes *= (size_t)dims[i];
        struct bd_scratch_entry *best = NULL, *largest = NULL;
        for (int i = 0; i < s->n; i++) {
                struct bd_scratch_entry *e = s->e[i];
                if (e->busy)
                        continue;
                if (e->t.cap >= bytes && (!best || e->t.cap < best->t.cap))
                        best = e;
                if (!largest || e->t.cap > largest->t.cap)
                        largest = e;
        }
        if (!best)
                best = largest;
        if (!best) {
                s->e = xrealloc(s->e, (size_t)(s->n + 1) * sizeof(*s->e));
                best = s->e[s->n++] = xcalloc(1, sizeof(**s->e));
        }
        if (bd_tensor_resize(s->be, &best->t, dt, l, ndim, dims) < 0)
                return NULL;
        best->busy = 1;
        return &best->t;
}

struct bd_tensor *bd_scratch_get_like(struct bd_scratch *s, const struct bd_tensor *like)
{
        return bd_scratch_get(s, like->dtype, like->layout, like->ndim, like->dims);
}

void bd_scratch_put(struct bd_scratch *s, struct bd_tensor *t)
{
        for (int i = 0; i < s->n; i++)
                if (&s->e[i]->t == t)
                        s->e[i]->busy = 0;
}

int bd_scratch_busy(const struct bd_scratch *s)
{
        int n = 0;
        for (int i = 0; i < s->n; i++)
                n += s->e[i]->busy;
        return n;
}

void bd_scratch_release(struct bd_scratch *s)
{
        for (int i = 0; i < s->n; i++) {
                bd_tensor_release(&s->e[i]->t);
                free(s->e[i]);
        }
        free(s->e);
        s->e = NULL;
        s->n = 0;
}

/* scratch.h: reusable tensors for short-lived values (gradients in a backward).
 *
 * get() hands out a free tensor at least as large as asked for (the smallest
 * such, else it grows one), shaped as asked; put() gives it back.  Steps make
 * the same requests in the same order, so after the first step no memory is
 * allocated.  Returned pointers stay valid until bd_scratch_release().
 */
#ifndef BD_SCRATCH_H
#define BD_SCRATCH_H

#include "tensor.h"

struct bd_scratch_entry {
        struct bd_tensor t;
        int busy;
};

struct bd_scratch {
        struct bd_backend *be;
        struct bd_scratch_entry **e;
        int n;
};

void bd_scratch_init(struct bd_scratch *s, struct bd_backend *be);
/* NULL when out of memory (the reason in be->err) */
struct bd_tensor *bd_scratch_get(struct bd_scratch *s, enum bd_dtype dt, enum bd_layout l, int ndim,
                                 const int64_t *dims);
struct bd_tensor *bd_scratch_get_like(struct bd_scratch *s, const struct bd_tensor *like);
void bd_scratch_put(struct bd_scratch *s, struct bd_tensor *t);
void bd_scratch_release(struct bd_scratch *s);
/* tensors handed out and not given back (0 after a balanced step) */
int bd_scratch_busy(const struct bd_scratch *s);

#endif

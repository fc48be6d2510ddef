/* ssd-elem.h: SSD's element function, written once for the CPU (ssd-head.c) and
 * CUDA (ssd-head-cuda.cu) launchers, in the style of trainer/ops/elem.h.
 *
 * Head gather: a head's output (N, A R, H, W) in any layout of tensor.h, A
 * boxes per cell with R values each (4 offsets, or K class logits), viewed
 * as the reference does, out.view(N, R, A H W): channel c holds value
 * r = c / A of box a = c % A.  Box (a, h, w) of the level is row
 * off + a H W + h W + w of the image's (n_boxes, R) matrix in rows (N, B, R).
 * Forward copies head -> rows; backward (to_head) copies the rows' gradient
 * back into a head-shaped tensor.  The function runs over the head's
 * elements, i being the element's offset in its layout.
 *
 * C and C++ (nvcc): no designated initializers, no restrict.
 */
#ifndef BD_SSD_ELEM_H
#define BD_SSD_ELEM_H

#include <stdint.h>

#include "elem.h"

struct ssd_head_args {
        struct bd_shape4 s;             /* the head's output (N, A R, H, W) */
        void *head;
        void *rows;                     /* (N, B, R) */
        int64_t A, R, B, off;
        int esize;                      /* bytes per element: 2, 4 or 8 */
        int to_head;
};

BD_HD static inline void ssd_k_head(int64_t i, int64_t n, int64_t c, int64_t h, int64_t w,
                                    const struct ssd_head_args *a)
{
        int64_t r = c / a->A, box = a->off + ((c % a->A) * a->s.H + h) * a->s.W + w;
        int64_t j = (n * a->B + box) * a->R + r;
        switch (a->esize) {
        case 2:
                if (a->to_head)
                        ((uint16_t *)a->head)[i] = ((const uint16_t *)a->rows)[j];
                else
                        ((uint16_t *)a->rows)[j] = ((const uint16_t *)a->head)[i];
                break;
        case 8:
                if (a->to_head)
                        ((uint64_t *)a->head)[i] = ((const uint64_t *)a->rows)[j];
                else
                        ((uint64_t *)a->rows)[j] = ((const uint64_t *)a->head)[i];
                break;
        default:
                if (a->to_head)
                        ((uint32_t *)a->head)[i] = ((const uint32_t *)a->rows)[j];
                else
                        ((uint32_t *)a->rows)[j] = ((const uint32_t *)a->head)[i];
                break;
        }
}

#endif

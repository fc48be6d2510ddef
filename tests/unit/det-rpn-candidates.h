/* det-rpn-candidates.h: image i's RPN sampling candidates before the draw,
 * from match.h's and boxes.h's host steps (visibility, matcher, labels): the
 * counts injected permutations must have (test-det-match, test-det-boxes-gpu). */
#ifndef BD_TEST_DET_RPN_CANDIDATES_H
#define BD_TEST_DET_RPN_CANDIDATES_H

#include <stdint.h>
#include <stdlib.h>

#include "macro.h"
#include "boxes.h"
#include "match.h"

static inline void rpn_candidates(const struct det_conv *c, const struct det_rpn_batch *b, const float *an,
                                  const float *gt, int i, int64_t *np, int64_t *nn)
{
        const int64_t A = b->off[b->L];
        int32_t *m = xmalloc((size_t)A * sizeof(int32_t)), *lab = xmalloc((size_t)A * sizeof(int32_t));
        uint8_t *vis = xmalloc((size_t)A);
        det_anchor_visibility(c, an, A, (float)b->image_hw[2 * i + 1], (float)b->image_hw[2 * i], vis);
        det_match_boxes(c, b->m, gt + 4 * b->gt_off[i], b->gt_off[i + 1] - b->gt_off[i], an, A, m);
        det_rpn_labels(m, vis, A, lab);
        *np = *nn = 0;
        for (int64_t a = 0; a < A; a++) {
                *np += lab[a] == 1;
                *nn += lab[a] == 0;
        }
        free(m);
        free(lab);
        free(vis);
}

#endif

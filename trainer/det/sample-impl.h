/* sample-impl.h: the balanced sampler's draws, shared by det_sample
 * (match.c) and the device sampler (rpn-targets.cu), so both choose the same
 * candidates.  Internal header: include boxes-impl.h (DET_HD) first. */
#ifndef BD_DET_SAMPLE_IMPL_H
#define BD_DET_SAMPLE_IMPL_H

#include <stdint.h>

#include "rng.h"

/* the first k entries of a permutation of idx (cnt entries, shuffled in
 * place): Fisher-Yates from the front, drawing from the generator keyed by
 * (seed, stream, which): no shared state, the same on any thread */
DET_HD void det_partial_shuffle(int64_t *idx, int64_t cnt, int64_t k, uint64_t seed, uint64_t stream, uint64_t which)
{
        struct bd_rng r;
        bd_rng_seed_key(&r, bd_rng_mix3(seed, stream, which));
        for (int64_t t = 0; t < k && t < cnt - 1; t++) {
                int64_t j = t + (int64_t)bd_rng_below(&r, (uint64_t)(cnt - t));
                int64_t x = idx[t];
                idx[t] = idx[j];
                idx[j] = x;
        }
}

#endif

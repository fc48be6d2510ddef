/* rng.h: small deterministic random numbers for the data pipeline.
 *
 * Every random decision in the data pipeline (crop, flip, jitter, synthetic
 * images) draws from a bd_rng seeded from the experiment seed and the
 * position of the sample, never from a shared stream, so results do not
 * depend on which thread did the work or in what order.
 *
 *     struct bd_rng r;
 *     rng_seed(&r, rng_mix3(seed, epoch, position));
 *     double u = bd_rng_uniform(&r);     // [0, 1)
 *
 * The generator is xoshiro256** seeded through splitmix64.
 */
#ifndef BD_DATA_RNG_H
#define BD_DATA_RNG_H

#include <stdint.h>

#include "xoshiro.h"    /* struct bd_rng, bd_splitmix64(), bd_rng_u64(), bd_rng_uniform() */

/* A well-mixed 64-bit key from three values (seed, epoch, position...). */
static inline uint64_t rng_mix3(uint64_t a, uint64_t b, uint64_t c)
{
        uint64_t x = a;
        uint64_t h = bd_splitmix64(&x);
        x = h ^ b;
        h = bd_splitmix64(&x);
        x = h ^ c;
        return bd_splitmix64(&x);
}

static inline void rng_seed(struct bd_rng *r, uint64_t seed)
{
        uint64_t x = seed;
        for (int i = 0; i < 4; i++)
                r->s[i] = bd_splitmix64(&x);
}

/* Uniform in [lo, hi). */
static inline double rng_range(struct bd_rng *r, double lo, double hi)
{
        return lo + (hi - lo) * bd_rng_uniform(r);
}

/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift, unbiased enough
 * for n far below 2^64). */
static inline uint64_t rng_below(struct bd_rng *r, uint64_t n)
{
        return (uint64_t)(((unsigned __int128)bd_rng_u64(r) * n) >> 64);
}

#endif

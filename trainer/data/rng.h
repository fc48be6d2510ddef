/* rng.h: small deterministic random numbers for the data pipeline.
 *
 * Every random decision in the data pipeline (crop, flip, jitter, synthetic
 * images) draws from a bd_rng seeded from the experiment seed and the
 * position of the sample, never from a shared stream, so results do not
 * depend on which thread did the work or in what order.
 *
 *     struct bd_rng r;
 *     rng_seed(&r, rng_mix3(seed, epoch, position));
 *     double u = rng_uniform(&r);     // [0, 1)
 *
 * The generator is xoshiro256** seeded through splitmix64.
 */
#ifndef BD_DATA_RNG_H
#define BD_DATA_RNG_H

#include <stdint.h>

struct bd_rng {
        uint64_t s[4];
};

static inline uint64_t rng_splitmix64(uint64_t *x)
{
        uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

/* A well-mixed 64-bit key from three values (seed, epoch, position...). */
static inline uint64_t rng_mix3(uint64_t a, uint64_t b, uint64_t c)
{
        uint64_t x = a;
        uint64_t h = rng_splitmix64(&x);
        x = h ^ b;
        h = rng_splitmix64(&x);
        x = h ^ c;
        return rng_splitmix64(&x);
}

static inline void rng_seed(struct bd_rng *r, uint64_t seed)
{
        uint64_t x = seed;
        for (int i = 0; i < 4; i++)
                r->s[i] = rng_splitmix64(&x);
}

static inline uint64_t rng_rotl(uint64_t x, int k)
{
        return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(struct bd_rng *r)
{
        uint64_t *s = r->s;
        uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
        uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rng_rotl(s[3], 45);
        return result;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double rng_uniform(struct bd_rng *r)
{
        return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform in [lo, hi). */
static inline double rng_range(struct bd_rng *r, double lo, double hi)
{
        return lo + (hi - lo) * rng_uniform(r);
}

/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift, unbiased enough
 * for n far below 2^64). */
static inline uint64_t rng_below(struct bd_rng *r, uint64_t n)
{
        return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

#endif

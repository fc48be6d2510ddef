/* xoshiro.h: the generator behind every random number of the trainers and the
 * data pipeline: xoshiro256** (Blackman and Vigna), seeded through splitmix64.
 * trainer/core/rng.h adds streams, normals and bounded integers for training;
 * data/rng.h keyed streams for the data pipeline. */
#ifndef BD_XOSHIRO_H
#define BD_XOSHIRO_H

#include <stdint.h>

struct bd_rng {
        uint64_t s[4];
};

static inline uint64_t bd_splitmix64(uint64_t *x)
{
        uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

static inline uint64_t bd_rotl64(uint64_t x, int k)
{
        return (x << k) | (x >> (64 - k));
}

static inline uint64_t bd_rng_u64(struct bd_rng *r)
{
        uint64_t *s = r->s;
        uint64_t result = bd_rotl64(s[1] * 5, 7) * 9;
        uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = bd_rotl64(s[3], 45);
        return result;
}

/* uniform in [0, 1) with 53 random bits */
static inline double bd_rng_uniform(struct bd_rng *r)
{
        return (double)(bd_rng_u64(r) >> 11) * 0x1.0p-53;
}

#endif

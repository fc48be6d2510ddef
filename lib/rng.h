/* rng.h: the random numbers of the trainers and the data pipeline.
 *
 * One generator, xoshiro256** (Blackman and Vigna), seeded through
 * splitmix64.  Its whole state is four 64-bit words, saved in checkpoints,
 * so a resumed run draws the same numbers as one that was never stopped.
 *
 * Two ways to seed it, for two kinds of use:
 *
 * - streams (training): bd_rng_seed(seed, stream) gives independent streams
 *   for one parameter, one rank, one epoch from one experiment seed;
 * - keys (data pipeline): every random decision of the pipeline (crop, flip,
 *   jitter, synthetic images) draws from a generator seeded with a key mixed
 *   from the seed and the sample's position, never from a shared stream, so
 *   the results do not depend on which thread did the work or in what order:
 *
 *       struct bd_rng r;
 *       bd_rng_seed_key(&r, bd_rng_mix3(seed, epoch, position));
 *       double u = bd_rng_uniform(&r);     // [0, 1)
 */
#ifndef BD_RNG_H
#define BD_RNG_H

#include <stdint.h>

/* The generator and the keyed seeding also run in CUDA kernels (the
 * detection sampler on the device draws what det_sample draws on the host) */
#ifdef __CUDACC__
#define BD_RNG_HD __host__ __device__ static inline
#else
#define BD_RNG_HD static inline
#endif

struct bd_rng {
        uint64_t s[4];
};

BD_RNG_HD uint64_t bd_splitmix64(uint64_t *x)
{
        uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

BD_RNG_HD uint64_t bd_rotl64(uint64_t x, int k)
{
        return (x << k) | (x >> (64 - k));
}

BD_RNG_HD uint64_t bd_rng_u64(struct bd_rng *r)
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
BD_RNG_HD double bd_rng_uniform(struct bd_rng *r)
{
        return (double)(bd_rng_u64(r) >> 11) * 0x1.0p-53;
}

/* ---- streams (training) ---- */

/* Stream `stream` of an experiment seed. */
void bd_rng_seed(struct bd_rng *r, uint64_t seed, uint64_t stream);
/* standard normal (Box-Muller, one value per call) */
double bd_rng_normal(struct bd_rng *r);

/* ---- keys (data pipeline) ---- */

/* A well-mixed 64-bit key from three values (seed, epoch, position...). */
BD_RNG_HD uint64_t bd_rng_mix3(uint64_t a, uint64_t b, uint64_t c)
{
        uint64_t x = a;
        uint64_t h = bd_splitmix64(&x);
        x = h ^ b;
        h = bd_splitmix64(&x);
        x = h ^ c;
        return bd_splitmix64(&x);
}

BD_RNG_HD void bd_rng_seed_key(struct bd_rng *r, uint64_t key)
{
        uint64_t x = key;
        for (int i = 0; i < 4; i++)
                r->s[i] = bd_splitmix64(&x);
}

/* uniform integer in [0, n), exactly (rejection) */
BD_RNG_HD uint64_t bd_rng_below(struct bd_rng *r, uint64_t n)
{
        if (n <= 1)
                return 0;
        /* rejection keeps it unbiased */
        uint64_t lim = UINT64_MAX - UINT64_MAX % n;
        uint64_t v;
        do
                v = bd_rng_u64(r);
        while (v >= lim);
        return v % n;
}

/* Uniform in [lo, hi). */
static inline double bd_rng_range(struct bd_rng *r, double lo, double hi)
{
        return lo + (hi - lo) * bd_rng_uniform(r);
}

/* Uniform integer in [0, n), n > 0, from one draw (Lemire's multiply-shift:
 * biased by at most n / 2^64, nothing for n far below 2^64). */
static inline uint64_t bd_rng_pick(struct bd_rng *r, uint64_t n)
{
        return (uint64_t)(((unsigned __int128)bd_rng_u64(r) * n) >> 64);
}

#endif

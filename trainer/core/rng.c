/* rng.c: xoshiro256** seeded through splitmix64. */
#include "config.h"

#include <math.h>

#include "rng.h"

static uint64_t splitmix64(uint64_t *x)
{
        uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

void bd_rng_seed(struct bd_rng *r, uint64_t seed, uint64_t stream)
{
        uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL + 0x632be59bd9b4e019ULL);
        for (int i = 0; i < 4; i++)
                r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
        return (x << k) | (x >> (64 - k));
}

uint64_t bd_rng_u64(struct bd_rng *r)
{
        uint64_t *s = r->s;
        uint64_t res = rotl(s[1] * 5, 7) * 9;
        uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return res;
}

double bd_rng_uniform(struct bd_rng *r)
{
        return (double)(bd_rng_u64(r) >> 11) * 0x1.0p-53;
}

double bd_rng_normal(struct bd_rng *r)
{
        double u1 = bd_rng_uniform(r), u2 = bd_rng_uniform(r);
        if (u1 < 1e-300)
                u1 = 1e-300;
        return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

uint64_t bd_rng_below(struct bd_rng *r, uint64_t n)
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

/* rng.c: the stream side of rng.h (training). */
#include "config.h"

#include <math.h>

#include "rng.h"

void bd_rng_seed(struct bd_rng *r, uint64_t seed, uint64_t stream)
{
        uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL + 0x632be59bd9b4e019ULL);
        for (int i = 0; i < 4; i++)
                r->s[i] = bd_splitmix64(&x);
}

double bd_rng_normal(struct bd_rng *r)
{
        double u1 = bd_rng_uniform(r), u2 = bd_rng_uniform(r);
        if (u1 < 1e-300)
                u1 = 1e-300;
        return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}


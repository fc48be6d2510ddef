/* rng.h: a small deterministic random number generator (xoshiro256**).
 *
 * The whole state is four 64-bit words, saved in checkpoints, so a resumed
 * run draws the same numbers as one that was never stopped.  Streams for
 * independent uses (one per parameter, per rank, per epoch) come from
 * bd_rng_seed() with a mixed-in stream id.
 */
#ifndef BD_RNG_H
#define BD_RNG_H

#include <stdint.h>

#include "xoshiro.h"    /* struct bd_rng, bd_rng_u64(), bd_rng_uniform() */

void bd_rng_seed(struct bd_rng *r, uint64_t seed, uint64_t stream);
/* standard normal (Box-Muller, one value per call) */
double bd_rng_normal(struct bd_rng *r);
/* uniform integer in [0, n) */
uint64_t bd_rng_below(struct bd_rng *r, uint64_t n);

#endif

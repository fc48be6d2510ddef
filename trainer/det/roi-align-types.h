/* roi-align-types.h: roi-align-impl.h for float and double, each followed
 * by the includer's own per-type code: the file named by RA_EXTRA when
 * defined (roi-align.c: the CPU loops, roi-align-cpu.h). */
#define RA_T float
#define RA_SFX f32
#define RA_F64 0
#include "roi-align-impl.h"
#ifdef RA_EXTRA
#include RA_EXTRA
#endif
#undef RA_T
#undef RA_SFX
#undef RA_F64

#define RA_T double
#define RA_SFX f64
#define RA_F64 1
#include "roi-align-impl.h"
#ifdef RA_EXTRA
#include RA_EXTRA
#endif
#undef RA_T
#undef RA_SFX
#undef RA_F64

/* det-fp.h: included first (after config.h) by the detection operators
 * whose float results must be torch's or pycocotools' exactly: every
 * operation rounded on its own, no fused multiply-adds, whatever the target
 * and flags (for the rest of the file that includes it).
 */
#ifndef BD_DET_FP_H
#define BD_DET_FP_H

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#endif

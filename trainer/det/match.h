/* match.h: the proposal matcher and the balanced positive/negative sampler
 * of Mask R-CNN's RPN and RoI heads (issue #22), on the host.
 *
 * det_match is torchvision's det_utils.Matcher (0.14) and maskrcnn_benchmark's
 * Matcher: both have the same rules, so there is no convention switch:
 *   RPN        high 0.7, low 0.3, allow_low_quality 1
 *   RoI heads  high 0.5, low 0.5, allow_low_quality 0
 *
 * det_sample is BalancedPositiveNegativeSampler(batch_size_per_image,
 * positive_fraction), with either keyed random permutations (lib/rng.h;
 * deterministic for a seed and a stream, say the image index) or injected
 * permutations (torch.randperm's, recorded with torch.manual_seed) so a test
 * reproduces torchvision's choice exactly.
 *
 * Bad input: NaN IoU is read as 0; counts < 0 and low > high are -EINVAL.
 */
#ifndef BD_DET_MATCH_H
#define BD_DET_MATCH_H

#include <stdint.h>

#include "boxes.h"

#define DET_MATCH_BELOW_LOW (-1)   /* Matcher.BELOW_LOW_THRESHOLD: background */
#define DET_MATCH_BETWEEN (-2)     /* Matcher.BETWEEN_THRESHOLDS: ignored */

struct det_matcher {
        float high;              /* IoU >= high: matched (torchvision's fg_iou_thresh) */
        float low;               /* IoU < low: background; in between: -2 (only when low < high) */
        int allow_low_quality;   /* give every GT its best anchors (all ties) back */
};

extern const struct det_matcher det_matcher_rpn;   /* 0.7, 0.3, 1 */
extern const struct det_matcher det_matcher_roi;   /* 0.5, 0.5, 0 */

/* matches (n) from the match quality matrix iou (g, n), row-major (one row
 * per ground-truth box, as box_iou(gt, anchors)):
 *   matches[j] = argmax_i iou[i][j] (the first maximum), then -1 where that
 *   maximum < low, -2 where low <= maximum < high;
 *   allow_low_quality: for each GT i, every j with iou[i][j] equal to the
 *   row's maximum (ties included, even 0) gets its argmax back.
 * A NaN IoU counts as 0 (torch.max would propagate it).  g == 0: every
 * match is -1 (torchvision raises during training; its RPN treats such an
 * image as background).  Returns 0, -EINVAL for g < 0, n < 0 or low > high. */
int det_match(const struct det_matcher *m, const float *iou, int64_t g, int64_t n, int32_t *matches);

/* The same without the matrix: IoU of gt (g, 4) against boxes (n, 4) under
 * c (det_box_iou's arithmetic), computed on the fly in two passes (memory
 * O(g + n) instead of g x n: 268,569 anchors x 100 GT would be 107 MB).
 * Identical results to det_box_iou + det_match. */
int det_match_boxes(const struct det_conv *c, const struct det_matcher *m, const float *gt, int64_t g,
                    const float *boxes, int64_t n, int32_t *matches);

/* RPN labels from matches (as RegionProposalNetwork.assign_targets_to_anchors):
 * 1 where matched (>= 0), 0 for -1, -1 for -2 (ignored), and -1 where vis
 * (det_anchor_visibility's, may be NULL) is 0: maskrcnn_benchmark's
 * straddle rule.  Returns the number of positives. */
int64_t det_rpn_labels(const int32_t *matches, const uint8_t *vis, int64_t n, int32_t *labels);

/* ---- sampler ---- */

struct det_sampler {
        int batch_size_per_image;   /* 256 RPN, 512 RoI heads */
        double positive_fraction;   /* 0.5 RPN, 0.25 RoI heads */
};

/* Permutations to use instead of the generator's: perm_pos is the head of
 * torch.randperm(npos) and perm_neg of torch.randperm(nneg) (as the sampler
 * draws them, positives first), npos and nneg the image's counts of
 * positives and negatives.  Each holds at least num_pos (num_neg) entries,
 * which must be distinct and in range, and npos (nneg) must be the image's
 * count, else -EINVAL. */
struct det_perm {
        const int64_t *perm_pos;
        int64_t npos;
        const int64_t *perm_neg;
        int64_t nneg;
};

/* One image's sample from labels (n): positives are labels >= 1, negatives
 * labels == 0, the rest ignored.  num_pos = min(int(bs * fraction), npos),
 * num_neg = min(bs - num_pos, nneg); the first num_pos (num_neg) entries of a
 * random permutation of the positives (negatives) are chosen, as
 * positive[randperm(npos)[:num_pos]].  The permutation is perm's when perm
 * is not NULL, else a Fisher-Yates shuffle drawing (bd_rng_below, exact)
 * from lib/rng.h's generator keyed by bd_rng_mix3(seed, stream, 0 for the
 * positives, 1 for the negatives): no shared state, so the same arguments
 * give the same sample on any machine, thread or call order.  pos_mask and neg_mask (n, may be NULL)
 * get 1 for the chosen, 0 elsewhere; pos_idx and neg_idx (may be NULL; room
 * for num_pos and num_neg: bs entries each suffice) the chosen indices in
 * the permutation's order.  *num_pos and *num_neg (may be NULL) the counts.
 * Returns 0 or -EINVAL (n < 0, bs < 0, fraction outside [0, 1], bad perm). */
int det_sample(const struct det_sampler *s, const int32_t *labels, int64_t n, uint64_t seed, uint64_t stream,
               const struct det_perm *perm, uint8_t *pos_mask, uint8_t *neg_mask, int64_t *pos_idx,
               int64_t *neg_idx, int64_t *num_pos, int64_t *num_neg);

/* ---- the RPN's targets ---- */

/* A batch's RPN targets: what RegionProposalNetwork.assign_targets_to_anchors,
 * the sampler and the box coder make of N images sharing the anchors (A,
 * the feature maps' anchors level after level: level l holds anchors
 * off[l] .. off[l+1], off[0] = 0, off[L] = A). */
struct det_rpn_batch {
        const struct det_matcher *m;    /* det_matcher_rpn */
        const struct det_sampler *s;    /* 256, 0.5 */
        const struct det_coder *k;      /* weights 1, 1, 1, 1 */
        const int64_t *off;             /* L + 1 level offsets */
        int L;
        int N;                          /* images */
        const int64_t *gt_off;          /* N + 1: image i's boxes are rows gt_off[i] .. gt_off[i+1] of gt */
        const int *image_hw;            /* (N, 2): height, width, for the straddle rule */
        uint64_t seed;                  /* the sampler's keys: det_sample(seed, streams[i]) */
        const uint64_t *streams;        /* N */
        const struct det_perm *perms;   /* NULL, or N injected permutations */
        struct det_rpn_work *work;      /* the host function's scratch, kept between calls; NULL: its own */
};

/* per-anchor scratch of det_rpn_targets, grown as needed (a step with the
 * same anchors allocates nothing); zero-initialise, det_rpn_work_free */
struct det_rpn_work {
        int32_t *matches, *lab;
        uint8_t *vis, *pos, *neg;
        size_t cap;
};
void det_rpn_work_free(struct det_rpn_work *w);

/* For each image i: the anchors visible under c's straddle rule
 * (det_anchor_visibility), matched to its boxes with b->m
 * (det_match_boxes), labelled (det_rpn_labels), sampled with b->s
 * (det_sample), then, at o = N off[l] + i (off[l+1] - off[l]) + a - off[l]
 * for anchor a of level l (the heads' level, image, location order):
 *   labels[o]  1 sampled positive, 0 sampled negative, -1 neither
 *   tgt[4 o]   a positive's box code (det_encode with b->k) of its box, else 0
 * labels (N A), tgt (N A, 4); npos[i] and nneg[i] the image's sampled counts.
 * Returns 0, -EINVAL (bad sizes, offsets or permutation), -ENOMEM. */
int det_rpn_targets(const struct det_conv *c, const struct det_rpn_batch *b, const float *anchors, const float *gt,
                    int32_t *labels, float *tgt, int64_t *npos, int64_t *nneg);

/* 0 when b's sizes and offsets are consistent with A anchors, else -EINVAL */
int det_rpn_batch_check(const struct det_rpn_batch *b, int64_t A);

#endif

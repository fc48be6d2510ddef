/* proposals.h: the RPN's proposal selection (issue #22), on the host:
 * torchvision 0.14's RegionProposalNetwork.filter_proposals (after
 * box_coder.decode) and maskrcnn_benchmark's RPNPostProcessor with FPN, the
 * MLPerf reference (../shared/reference/maskrcnn.md section 1 "Proposals").
 *
 * Per image, per level: the pre_nms_top_n anchors of highest objectness
 * logit (torch.topk order: descending, NaN first; ties by anchor index,
 * which torch leaves unspecified), their sigmoid, decode with weights
 * (1,1,1,1) and the log(1000/16) clamp, clip to the unpadded image, drop
 * small boxes and low scores; then NMS per level, a per-level cap, and the
 * post-NMS top-n per image or over the batch.  The convention (struct
 * det_conv) switches:
 *
 *   plus_one  [R]: decode x2 = cx + w/2 - 1, clip x to [0, W-1] (y to
 *             [0, H-1]), sizes x2 - x1 + 1 for min_size, NMS areas +1, and
 *             NMS per level with the levels concatenated in order (the
 *             boxlist_nms of each level, then cat_boxlist).
 *             [TV]: no +-1, clip to [0, W], batched_nms over the levels
 *             (torchvision.ops.batched_nms, exactly: its order).
 *   nms_ge    NMS suppresses IoU >= thr ([R]) or IoU > thr ([TV]).
 *
 * and the parameters (struct det_rpn_params) hold the rest: top-n, the
 * threshold, min size, score threshold and the post-NMS scope.  Scope per
 * image: the proposals in descending score order (stable), the first
 * post_nms_top_n ([TV] keep[:post_nms_top_n]; [R] test, topk sorted).  Per
 * batch ([R] training, fpn_post_nms_per_batch): the post_nms_top_n highest
 * scores over all images' proposals are kept, each image's in its own order
 * (the per-level concatenation for [R]).
 *
 * Equal scores keep their candidate order (level, then rank) in every sort;
 * torch's sorts are not stable and may order them otherwise (the same set).
 * [R] selects the top-n on sigmoid(logit), torchvision on the logit: the
 * same set except where float sigmoids tie (logits above ~16); both use the
 * logit here.  Appending the ground-truth boxes in training is the RoI
 * sampler's business, not done here.
 *
 * Bad input: a NaN logit or a NaN box drops that proposal (torchvision's
 * score test and size test do; [R] would keep a NaN score); levels with no
 * anchors and images whose proposals are all removed give 0 proposals.
 * Negative counts, image sizes or top-n are -EINVAL.
 */
#ifndef BD_DET_PROPOSALS_H
#define BD_DET_PROPOSALS_H

#include <stdint.h>

#include "boxes.h"

struct det_rpn_params {
        int64_t pre_nms_top_n;          /* per level per image: 2000 training, 1000 test */
        int64_t post_nms_top_n;         /* per image or per batch: 2000 training, 1000 test */
        int64_t level_post_nms_top_n;   /* [R] boxlist_nms' max_proposals per level (POST_NMS_TOP_N_*);
                                         * <= 0 none ([TV]); 2000 or 1000 cut nothing after the pre top-n */
        double nms_thresh;              /* 0.7 */
        float min_size;                 /* [TV] 1e-3, [R] 0 */
        float score_thresh;             /* sigmoid >= it: [TV] 0.0; [R] none (-INFINITY) */
        int per_batch;                  /* post-NMS top-n over the batch: [R] training */
};

/* the presets: training (1) or test (0) */
struct det_rpn_params det_rpn_params_torchvision(int training);
struct det_rpn_params det_rpn_params_mlperf(int training);

/* One pyramid level's inputs (host arrays). */
struct det_rpn_level {
        const float *objectness;        /* (N, A) logits */
        const float *deltas;            /* (N, A, 4) box codes */
        const float *anchors;           /* (A, 4), the same for every image */
        int64_t A;
};

/* Proposals of N images from L levels; image_hw (N, 2) the unpadded (height,
 * width).  boxes (N, post_nms_top_n, 4), scores (N, post_nms_top_n) and
 * count (N): image n's count[n] proposals first in its rows.  Images are
 * processed in parallel (OpenMP); the result does not depend on threads.
 * Returns 0 or -EINVAL. */
int det_rpn_proposals(const struct det_conv *c, const struct det_rpn_params *p, const struct det_rpn_level *lv,
                      int L, int N, const int *image_hw, float *boxes, float *scores, int64_t *count);

/* ---- steps shared with the CUDA twin (proposals.cu) ---- */

/* -EINVAL for negative counts, level sizes A (L), image sizes or top-n; else 0 */
int det_rpn_check(const struct det_rpn_params *p, const int64_t *A, int L, int N, const int *image_hw);

/* One image's candidates (clipped, filtered, in level then top-n order) and
 * their NMS keep list (det_batched_nms over the levels). */
struct det_rpn_kept {
        const float *boxes;     /* (m, 4) */
        const float *scores;    /* (m) */
        const int32_t *levels;  /* (m) */
        const int64_t *keep;    /* (nkeep) indices into the candidates, NMS order */
        int64_t nkeep;
};

/* The last steps of det_rpn_proposals: the per-level cap, then the post-NMS
 * top-n per image or over the batch, into boxes, scores and count as there.
 * Returns 0. */
int det_rpn_select(const struct det_rpn_params *p, int L, int N, const struct det_rpn_kept *kept, float *boxes,
                   float *scores, int64_t *count);

#endif

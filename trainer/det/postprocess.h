/* postprocess.h: Mask R-CNN's inference outputs (issue #22): detections
 * from the box head, boxes back to the original image, masks pasted into
 * the image and run-length encoded for COCO results.
 *
 * Detections (per image), torchvision 0.14 RoIHeads.postprocess_detections
 * and the reference's PostProcessor (maskrcnn_benchmark roi_box_head
 * inference.py) under the convention c and the config pc:
 *   1. scores = softmax of the class logits (N, K): max, exp(x - max), sum,
 *      times 1 / sum (torch's order; its vectorised exp and sum differ by an
 *      ulp or two);
 *   2. boxes (N, K, 4) = det_decode of the deltas (N, 4K) on the proposals
 *      (weights pc->coder: 10, 10, 5, 5; +1 under c->plus_one), clipped to
 *      [0, W] x [0, H] (torchvision) or [0, W - 1] x [0, H - 1] (plus_one);
 *      NaN stays NaN (torch.clamp);
 *   3. candidates: classes 1..K-1 with score > pc->score_thresh (a NaN score
 *      never is), in (proposal, class) order;
 *   4. torchvision (pc->kthvalue_cut 0): boxes with a side < pc->min_size
 *      (1e-2; NaN sides too) dropped, det_batched_nms(pc->nms_thresh), the
 *      first pc->detections_per_img of its keep list (descending score);
 *      reference (kthvalue_cut 1, min_size < 0: no rule): NMS per class in
 *      ascending class order (det_batched_nms with nms_ge and +1 areas), then
 *      when more than detections_per_img > 0 remain, those with a score >=
 *      the detections_per_img-th largest (torch.kthvalue: ties may keep
 *      more), in class order.
 * det_conv_torchvision with det_post_torchvision, det_conv_mlperf with
 * det_post_mlperf are the two settings.
 *
 * Boxes to the original size (det_resize_boxes): x * (orig_w / w), y * (orig_h
 * / h) in float; the ratio is a float division (torchvision resize_boxes)
 * or a double one rounded to float (plus_one: BoxList.resize's Python
 * float, which torch casts to the tensor's float).
 *
 * Masks (torchvision paste_masks_in_image / the reference's Masker, the
 * same arithmetic): the predicted class's M x M logits through a sigmoid
 * (det_mask_probs), padded with a ring of zeros to M + 2, the box scaled by
 * (M + 2) / M about its centre in float (expand_boxes) and truncated to
 * integers, resized to (y2 - y1 + 1, x2 - x1 + 1) (each at least 1) by
 * bilinear interpolation with align_corners False (torch's upsample
 * arithmetic in float: scale = in / out, src = scale (i + .5) - .5 clamped at
 * 0, the two taps of each axis, rows of taps weighted last) and pasted into
 * the H x W image with clipping.  The reference thresholds after resizing,
 * torchvision after pasting: the same pixels.  det_mask_rle thresholds (>
 * 0.5) and encodes column-major (pycocotools' Fortran order), and
 * rle_to_string gives the counts string of a COCO result.
 *
 * Bad input is defined: NaN logits give NaN scores (never candidates); NaN
 * boxes follow boxes.h (never suppress; torchvision drops them by size, the
 * reference keeps them); zero or negative boxes decode as torch does; an
 * empty image (N = 0, or no candidate) gives no detection.  A mask whose
 * expanded box has a coordinate that is not finite or beyond +-2^30, or
 * that lies entirely outside the image, pastes nothing (zeros: torchvision
 * would fail or allocate the whole box); a label outside [0, K) gives a mask
 * of zeros.  Counts < 0, K < 2, M < 1, sizes < 0 are -EINVAL.
 */
#ifndef BD_DET_POSTPROCESS_H
#define BD_DET_POSTPROCESS_H

#include <stdint.h>

#include "boxes.h"

struct bd_backend;
struct bd_tensor;
struct rle;

struct det_post_config {
        struct det_coder coder;         /* (10, 10, 5, 5), clip DET_BBOX_XFORM_CLIP */
        float score_thresh;             /* 0.05: candidates have score > this */
        double nms_thresh;              /* 0.5 */
        int detections_per_img;         /* 100 */
        float min_size;                 /* 1e-2 torchvision; < 0: no size rule (reference) */
        int kthvalue_cut;               /* 1: the reference's cut, 0: torchvision's top-k */
};

extern const struct det_post_config det_post_mlperf;      /* min_size -1, kthvalue_cut 1 */
extern const struct det_post_config det_post_torchvision; /* min_size 1e-2, kthvalue_cut 0 */

/* An image's detections; arrays malloc'ed (det_dets_release frees them). */
struct det_dets {
        int64_t n;
        float *boxes;                   /* (n, 4) */
        float *scores;                  /* (n) */
        int32_t *labels;                /* (n) 1..K-1 */
        int64_t *proposal;              /* (n) the proposal each came from */
};

void det_dets_release(struct det_dets *d);

/* Candidates (steps 1 to 3) of N proposals and K classes into cand (arrays
 * of N (K - 1) entries each, allocated here; n set to their count). */
int det_post_candidates(const struct det_conv *c, const struct det_post_config *pc, const float *logits,
                        const float *deltas, const float *props, int64_t N, int K, int img_h, int img_w,
                        struct det_dets *cand);

/* Step 4 on candidates (boxes, scores, labels, proposal in (proposal, class)
 * order): the detections into out (allocated here). */
int det_post_select(const struct det_conv *c, const struct det_post_config *pc, const struct det_dets *cand,
                    struct det_dets *out);

/* Steps 1 to 4: logits (N, K), deltas (N, 4K), props (N, 4) of one image of
 * img_h x img_w (the resized, unpadded size). */
int det_postprocess(const struct det_conv *c, const struct det_post_config *pc, const float *logits,
                    const float *deltas, const float *props, int64_t N, int K, int img_h, int img_w,
                    struct det_dets *out);

/* boxes (n, 4) of an image of h x w to one of orig_h x orig_w, in place. */
void det_resize_boxes(const struct det_conv *c, float *boxes, int64_t n, int h, int w, int orig_h, int orig_w);

/* probs (n, M, M) = sigmoid of logits (n, K, M, M) at each detection's label. */
int det_mask_probs(const float *logits, const int32_t *labels, int64_t n, int K, int M, float *probs);

/* out (n, H, W): masks (n, M, M) (probabilities) pasted at boxes (n, 4),
 * zeros elsewhere.  Detections in parallel (OpenMP). */
int det_paste_masks(const float *masks, const float *boxes, int64_t n, int M, int H, int W, float *out);

/* r = the column-major RLE of (img > thr) of an H x W image (row-major). */
int det_mask_rle(const float *img, int H, int W, float thr, struct rle *r);

/* ---- backend-level ---- */

/* Detections of one image from logits (N, K), deltas (N, 4K) and props
 * (N, 4) float32 tensors on be's device, into out on the host.  CUDA: the
 * softmax, decode, clip and score threshold run on the GPU (one thread per
 * proposal and class; candidates appended with an atomic counter and put back
 * in (proposal, class) order on the host), the candidates are copied to the
 * host and step 4 (NMS and the cut) runs there. */
int det_op_postprocess(struct bd_backend *be, const struct det_conv *c, const struct det_post_config *pc,
                       const struct bd_tensor *logits, const struct bd_tensor *deltas, const struct bd_tensor *props,
                       int img_h, int img_w, struct det_dets *out);

/* out (n, H, W) float32 on be's device: masks (n, M, M) probabilities pasted
 * at boxes (n, 4) (both on be's device).  CUDA: one thread per pixel of each
 * detection's clipped box, after zeroing out. */
int det_op_paste_masks(struct bd_backend *be, const struct bd_tensor *masks, const struct bd_tensor *boxes, int H,
                       int W, struct bd_tensor *out);

/* 0 when t is a float32 tensor on be's device of ndim dims with dims[0] ==
 * d0 and dims[ndim - 1] == dl (-1: any); else -EINVAL with "op: name ..." in
 * be->err.  A tensor of no elements may have no data. */
int det_check_tensor(struct bd_backend *be, const char *op, const char *name, const struct bd_tensor *t, int ndim,
                     int64_t d0, int64_t dl);

#if HAVE_CUDA
/* postprocess.cu's launchers (on the backend's stream; 0 or a negative errno).
 * Candidates: cnt (one int on the device) counts them; idx, scores, boxes hold
 * N (K - 1) entries: index i K + j, score, box. */
int det_cuda_candidates(void *stream, int plus_one, const struct det_coder *k, float score_thresh, const float *logits,
                        const float *deltas, const float *props, int64_t N, int K, int img_h, int img_w, int *cnt,
                        int64_t *idx, float *scores, float *boxes);
int det_cuda_paste_masks(void *stream, const float *masks, const float *boxes, int64_t n, int M, int H, int W,
                         float *out);
#endif

#endif

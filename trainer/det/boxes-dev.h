/* boxes-dev.h: the detection operators on a backend (issue #22): boxes.h's
 * anchors, coder, IoU and NMS, match.h's matcher and proposals.h's RPN
 * proposal selection, on bd_tensors of the backend's device.
 *
 * Each function checks its operands (float32 or int32 as stated, plain
 * row-major, on be's device, the shapes below), resizes its outputs, and
 * returns 0 or a negative errno with a one-line message in be->err.  On the
 * CPU it runs the host functions of boxes.h, match.h and proposals.h; on CUDA
 * the kernels of boxes-cuda.cu and proposals.cu (built with CUDA only: else
 * -EOPNOTSUPP), which do the same float operations in the same order (no
 * fused multiply-adds), so results agree with the CPU's exactly except
 * where exp and log round differently (an ulp) and what follows from that.
 * The conventions, the bad-input behaviour and the tie rules are the host
 * functions'.
 *
 * The CUDA NMS is torchvision's: scores sorted on the device (a stable
 * radix sort on det_desc_key, the host's order), a 64-bit suppression mask per
 * box pair block on the device, the greedy scan on the host; its keep list
 * is read back.  The balanced sampler (det_sample) runs on the device in
 * det_dev_rpn_targets: the candidates compacted in index order by a scan, the
 * keyed Fisher-Yates draws (a few hundred per image) by one thread per image,
 * the same generator as the host's, so the same anchors are chosen.
 */
#ifndef BD_DET_BOXES_DEV_H
#define BD_DET_BOXES_DEV_H

#include <stdint.h>

#include "backend.h"
#include "boxes.h"
#include "match.h"
#include "proposals.h"

/* out (H W ncell, 4) f32: det_grid_anchors of the host cell anchors cell
 * (ncell <= 64 rows of 4). */
int det_dev_grid_anchors(struct bd_backend *be, const float *cell, int ncell, int H, int W, int stride_y, int stride_x,
                         struct bd_tensor *out);

/* codes (n, 4) f32 of gt (n, 4) relative to props (n, 4): det_encode. */
int det_dev_encode(struct bd_backend *be, const struct det_conv *c, const struct det_coder *k,
                   const struct bd_tensor *gt, const struct bd_tensor *props, struct bd_tensor *codes);

/* out (n, 4 ncls) f32 from codes (n, 4 ncls) and boxes (n, 4): det_decode. */
int det_dev_decode(struct bd_backend *be, const struct det_conv *c, const struct det_coder *k,
                   const struct bd_tensor *codes, const struct bd_tensor *boxes, struct bd_tensor *out);

/* iou (n, m) f32 of a (n, 4) and b (m, 4): det_box_iou. */
int det_dev_box_iou(struct bd_backend *be, const struct det_conv *c, const struct bd_tensor *a,
                    const struct bd_tensor *b, struct bd_tensor *iou);

/* keep (nkeep) i32: det_nms of boxes (n, 4) and scores (n); *nkeep on the host. */
int det_dev_nms(struct bd_backend *be, const struct det_conv *c, const struct bd_tensor *boxes,
                const struct bd_tensor *scores, double thr, struct bd_tensor *keep, int64_t *nkeep);

/* keep (nkeep) i32: det_batched_nms with classes idx (n) i32. */
int det_dev_batched_nms(struct bd_backend *be, const struct det_conv *c, const struct bd_tensor *boxes,
                        const struct bd_tensor *scores, const struct bd_tensor *idx, double thr, struct bd_tensor *keep,
                        int64_t *nkeep);

/* matches (n) i32 from the match quality matrix iou (g, n) f32: det_match
 * (g == 0: a (0, n) tensor gives all -1). */
int det_dev_match(struct bd_backend *be, const struct det_matcher *m, const struct bd_tensor *iou,
                  struct bd_tensor *matches);

/* det_rpn_proposals: objectness[l] (N, A_l) and deltas[l] (N, A_l, 4) and
 * anchors[l] (A_l, 4) f32 for L levels, image_hw (N, 2) on the host; boxes
 * (N, post_nms_top_n, 4) and scores (N, post_nms_top_n) f32, count (N) on
 * the host. */
int det_dev_rpn_proposals(struct bd_backend *be, const struct det_conv *c, const struct det_rpn_params *p,
                          const struct bd_tensor *objectness, const struct bd_tensor *deltas,
                          const struct bd_tensor *anchors, int L, const int *image_hw, struct bd_tensor *boxes,
                          struct bd_tensor *scores, int64_t *count);

/* det_rpn_targets on the device: anchors (A, 4) and gt (gt_off[N], 4) f32;
 * labels (N A) i32 and tgt (N A, 4) f32 resized; npos, nneg (N) on the host:
 * the one copy back, after every image (on CUDA: at most 64 images and 16
 * levels).  On CUDA injected permutations (b->perms) run the host function
 * on copies. */
int det_dev_rpn_targets(struct bd_backend *be, const struct det_conv *c, const struct det_rpn_batch *b,
                        const struct bd_tensor *anchors, const struct bd_tensor *gt, struct bd_tensor *labels,
                        struct bd_tensor *tgt, int64_t *npos, int64_t *nneg);

#if HAVE_CUDA
/* The CUDA launchers behind them: device pointers, the backend's stream,
 * errors in err.  Keep lists and counts come back to the host. */
#ifdef __cplusplus
extern "C" {
#endif
int det_cuda_grid_anchors(void *stream, const float *cell, int ncell, int H, int W, int stride_y, int stride_x,
                          float *out, struct bd_err *err);
int det_cuda_encode(void *stream, int plus_one, const struct det_coder *k, const float *gt, const float *props,
                    int64_t n, float *codes, struct bd_err *err);
int det_cuda_decode(void *stream, int plus_one, const struct det_coder *k, const float *codes, const float *boxes,
                    int64_t n, int ncls, float *out, struct bd_err *err);
int det_cuda_box_iou(void *stream, int plus_one, const float *a, int64_t n, const float *b, int64_t m, float *iou,
                     struct bd_err *err);
/* idx NULL: det_nms; else det_batched_nms.  keep: n entries on the host. */
int det_cuda_nms(void *stream, const struct det_conv *c, const float *boxes, const float *scores, const int32_t *idx,
                 int64_t n, double thr, int64_t *keep, int64_t *nkeep, struct bd_err *err);
/* N sets of det_nms / det_batched_nms with [R]'s per-class order (by class
 * ascending, then descending score): set i the n[i] boxes from i x stride
 * (boxes, scores, idx on the device; idx may be NULL), queued back to back
 * and read back in one copy: keep (N x stride, host) from i x stride,
 * nkeep (N, host).  (torchvision's batched order is det_cuda_nms's.) */
int det_cuda_nms_batch(void *stream, const struct det_conv *c, const float *boxes, const float *scores,
                       const int32_t *idx, const int64_t *n, int N, int64_t stride, double thr, int64_t *keep,
                       int64_t *nkeep, struct bd_err *err);
int det_cuda_match(void *stream, const struct det_matcher *m, const float *iou, int64_t g, int64_t n,
                   int32_t *matches, struct bd_err *err);
/* obj, deltas, anchors: L device pointers each (host arrays of them), A the
 * level sizes; boxes, scores on the device, count on the host */
int det_cuda_rpn_proposals(void *stream, const struct det_conv *c, const struct det_rpn_params *p,
                           const float *const *obj, const float *const *deltas, const float *const *anchors,
                           const int64_t *A, int L, int N, const int *image_hw, float *boxes, float *scores,
                           int64_t *count, struct bd_err *err);
/* anchors, gt, labels, tgt on the device (b checked, N <= 64, L <= 16, N A
 * and the boxes below 2^31) */
int det_cuda_rpn_targets(void *stream, const struct det_conv *c, const struct det_rpn_batch *b, const float *anchors,
                         const float *gt, int32_t *labels, float *tgt, int64_t *npos, int64_t *nneg,
                         struct bd_err *err);
#ifdef __cplusplus
}
#endif
#endif

#endif

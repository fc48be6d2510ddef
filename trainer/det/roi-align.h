/* roi-align.h: RoIAlign, multi-scale RoIAlign over the FPN levels and mask
 * targets by RoIAlign of the bitmask, on either backend (issue #22).
 *
 * RoIAlign is torchvision.ops.roi_align (0.14) with its CPU kernel's
 * arithmetic, which maskrcnn_benchmark's kernel shares: for RoI
 * (b, x1, y1, x2, y2) in image coordinates and spatial scale s,
 *
 *   start = x1 s - o, end = x2 s - o        o = 0.5 when aligned, else 0
 *   roi_w = end - start                     clamped >= 1 unless aligned
 *   bin_w = roi_w / pw, grid_w = sampling_ratio > 0 ? sampling_ratio
 *                                                   : ceil(roi_w / pw)
 *   sample x = start + j bin_w + (ix + .5) bin_w / grid_w   (likewise y)
 *
 * each bin the mean of grid_h * grid_w bilinear samples (count =
 * max(grid_h grid_w, 1)); a sample outside y in [-1, H], x in [-1, W] is 0,
 * otherwise coordinates <= 0 become 0 and those at or past H - 1 read row
 * H - 1.  Sums run in the element type, in torchvision's order, without
 * fused multiply-adds: float32 results equal torchvision's CPU ones bit for
 * bit (the CUDA kernels use the same arithmetic, the backward with atomics).
 *
 * Feature maps x (N, C, H, W): float32, or float64 on the CPU (gradient
 * checks), in any layout of tensor.h (NCHW8C and NHWC are what convolutions
 * produce on the CPU).  rois (R, 5) plain, of x's type, on x's device.
 * Outputs (R, C, ph, pw) plain.
 *
 * Bad input, defined and the same on both backends: a RoI whose batch index
 * (truncated like torchvision's int cast) is not in [0, N), or with a
 * non-finite coordinate, gives zeros and no gradient; RoIs outside the map
 * give torchvision's answer (zeros where all samples fall outside);
 * adaptive grids are capped at DET_ROI_GRID_MAX samples per side (torchvision
 * has no cap: only RoIs larger than 512 bins' worth of map pixels differ);
 * R == 0 is fine.  Non-finite feature values propagate into the bins whose
 * samples read them (samples outside the map read nothing).  Wrong shapes,
 * types or devices: -EINVAL with a one-line message in be->err.
 */
#ifndef BD_DET_ROI_ALIGN_H
#define BD_DET_ROI_ALIGN_H

#include <stdint.h>

#include "backend.h"
#include "boxes.h"

#define DET_ROI_GRID_MAX 512
#define DET_ROI_MAX_LEVELS 8

struct det_roi_align {
        int64_t pooled_h, pooled_w;     /* output bins */
        int sampling_ratio;             /* > 0: fixed grid; <= 0: adaptive */
        int aligned;                    /* -0.5 pixel shift, no clamp of small RoIs */
        double spatial_scale;           /* map / image, used as the element type */
};

/* y (R, C, ph, pw) = roi_align(x, rois); y is resized (plain). */
int det_roi_align_fwd(struct bd_backend *be, const struct det_roi_align *p, const struct bd_tensor *x,
                      const struct bd_tensor *rois, struct bd_tensor *y);
/* dx (N, C, H, W), shape, type and layout set by the caller, receives the
 * gradient of dy (R, C, ph, pw) plain: overwritten, or added into with
 * flags BD_ACC_DX.  The CPU is deterministic (parallel over channels, RoIs
 * in order): float32 results equal torchvision's autograd backward. */
int det_roi_align_bwd(struct bd_backend *be, const struct det_roi_align *p, const struct bd_tensor *dy,
                      const struct bd_tensor *rois, struct bd_tensor *dx, unsigned flags);

/* ---- multi-scale RoIAlign (torchvision.ops.MultiScaleRoIAlign) ---- */

/* Levels and the level mapper.  Level k of a RoI (image coordinates):
 *   torchvision:  k = floor(k0 + log2(sqrt(area) / s0) + eps)
 *   MLPerf [R]:   k = floor(k0 + log2(sqrt(area) / s0 + eps)), area with
 *                 +1 widths (maskrcnn_benchmark's LevelMapper)
 * computed in float (the RoIs' type), eps 1e-6, clamped to [kmin, kmax],
 * minus kmin: an index into the maps.  kmin = int(-log2(scales[0])), kmax
 * = int(-log2(scales[nlevels - 1])) in float32, as torchvision; they must
 * span exactly nlevels levels.  A RoI with a non-finite coordinate maps to
 * level -1: zeros and no gradient (torchvision leaves it zero too). */
struct det_msroi {
        int nlevels;
        double scales[DET_ROI_MAX_LEVELS];      /* finest first: 1/4, 1/8, ... */
        int kmin, kmax;
        int canonical_scale, canonical_level;   /* 224, 4 */
        int plus_one;                           /* the [R] mapper */
        struct det_roi_align ra;                /* spatial_scale unused */
};

/* torchvision's _infer_scale: 2 ** round(log2(feat_h / img_h)) in float32
 * (round half to even), img_h the largest image height of the batch. */
double det_roi_infer_scale(int64_t feat_h, int64_t img_h);

/* m for nlevels maps with the given scales, output out x out, sampling
 * ratio, aligned false, canonical 224 / 4, mapper by c->plus_one.  -EINVAL
 * (message in err) when nlevels is not in [1, DET_ROI_MAX_LEVELS], a scale
 * is not a positive finite number, or kmin..kmax does not span nlevels. */
int det_msroi_init(struct det_msroi *m, const struct det_conv *c, int nlevels, const double *scales, int64_t out,
                   int sampling, struct bd_err *err);

/* The level index of each RoI (R, 5) float on the host (see above). */
void det_msroi_levels(const struct det_msroi *m, const float *rois, int64_t R, int32_t *levels);

/* y (R, C, ph, pw) plain: each RoI pooled from its level's map feats[l]
 * (nlevels maps of one batch size, channel count and type) with scale
 * scales[l], in the input RoI order.  levels: caller-given level indices
 * on the host (R), or NULL for the mapper; an index outside [0, nlevels) is
 * -EINVAL. */
int det_msroi_fwd(struct bd_backend *be, const struct det_msroi *m, const struct bd_tensor *const *feats,
                  const struct bd_tensor *rois, const int32_t *levels, struct bd_tensor *y);
/* Gradient of dy into each level's dfeats[l] (shapes set by the caller, as
 * the maps), overwritten or added into with BD_ACC_DX. */
int det_msroi_bwd(struct bd_backend *be, const struct det_msroi *m, const struct bd_tensor *dy,
                  const struct bd_tensor *rois, const int32_t *levels, struct bd_tensor *const *dfeats,
                  unsigned flags);

/* ---- mask targets ([TV]: roi_heads.project_masks_on_boxes) ---- */

/* out (P, M, M) float32 plain = roi_align(float(masks)[:, None], (matched,
 * boxes), M, spatial scale 1, sampling -1 (adaptive), aligned false) for
 * one image: masks ngt x H x W uint8 (0/1, or any value: read as float) on
 * be's device, boxes (P, 4) float32, matched (P) int32 indices into the
 * masks.  A matched index outside [0, ngt) or a non-finite box gives a
 * zero target.  ([R] instead crops the GT polygons to the box and rasterises
 * them at M x M: maskrcnn.md section 1; not this function.) */
int det_roi_mask_targets(struct bd_backend *be, int64_t M, const uint8_t *masks, int64_t ngt, int64_t H, int64_t W,
                     const struct bd_tensor *boxes, const struct bd_tensor *matched, struct bd_tensor *out);

#if HAVE_CUDA
/* CUDA launchers (roi-align.cu) on the backend's stream; operands checked
 * by the callers above.  The map descriptors hold device pointers. */
struct det_roi_map {
        void *data;
        int64_t H, W;
        int layout;             /* enum bd_layout */
        double scale;
};
struct det_roi_job {
        int64_t R, N, C, ph, pw;
        int sampling, aligned, nlevels;
        int mapper;             /* 1: levels from the mapper, 0: from levels (or all 0) */
        int plus_one, kmin, kmax, canonical_scale, canonical_level;
        int dtype;              /* enum bd_dtype: f32 or f64 */
        int acc;                /* backward: add into the maps instead of overwriting */
        struct det_roi_map map[DET_ROI_MAX_LEVELS];
};
#ifdef __cplusplus
extern "C" {
#endif
int det_roi_cuda_fwd(struct bd_backend *be, const struct det_roi_job *j, const void *rois, const int32_t *levels,
                     void *y);
int det_roi_cuda_bwd(struct bd_backend *be, const struct det_roi_job *j, const void *rois, const int32_t *levels,
                     const void *dy);
int det_mask_targets_cuda(struct bd_backend *be, int64_t M, const uint8_t *masks, int64_t ngt, int64_t H, int64_t W,
                          int64_t P, const float *boxes, const int32_t *matched, float *out);
#ifdef __cplusplus
}
#endif
#endif

#endif

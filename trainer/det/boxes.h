/* boxes.h: Mask R-CNN's box operators on the host (issue #22): anchors,
 * the box coder, pairwise IoU, NMS and batched NMS.  No backend, float32
 * boxes (x1, y1, x2, y2) as torchvision's.
 *
 * Every operator takes the convention (struct det_conv), which holds the
 * switches where the MLPerf reference (maskrcnn_benchmark) and torchvision
 * differ (../shared/reference/maskrcnn.md section 2):
 *
 *   plus_one          legacy +1: widths are x2 - x1 + 1, areas and
 *                     intersections likewise, decode x2 = cx + w/2 - 1
 *   anchor_detectron  cell anchors from Detectron's generate_anchors (centre
 *                     (s-1)/2, np.round half to even) instead of torchvision's
 *                     round(+-w/2, +-h/2) about 0
 *   nms_ge            NMS suppresses IoU >= thr (threshold in float) instead
 *                     of IoU > thr (threshold in double)
 *   straddle          anchor visibility: < 0 off (all visible); >= 0 an anchor
 *                     is visible when x1 >= -t, y1 >= -t, x2 < W + t, y2 < H + t
 *
 * det_conv_mlperf and det_conv_torchvision are the two presets.
 *
 * Bad input is defined, never read out of bounds: NaN boxes give NaN codes
 * and never suppress anything (a NaN comparison is false); an IoU whose union
 * is not > 0 (zero or negative boxes) or is NaN is 0; NaN scores sort first,
 * as torch.sort(descending=True) puts them.  Counts < 0 are -EINVAL.
 */
#ifndef BD_DET_BOXES_H
#define BD_DET_BOXES_H

#include <stdint.h>

#define DET_BBOX_XFORM_CLIP 4.135166556742356  /* log(1000 / 16) */

struct det_conv {
        int plus_one;
        int anchor_detectron;
        int nms_ge;
        float straddle;
};

enum det_conv_kind { DET_CONV_MLPERF, DET_CONV_TORCHVISION };

extern const struct det_conv det_conv_mlperf;      /* 1, 1, 1, 0 */
extern const struct det_conv det_conv_torchvision; /* 0, 0, 0, -1 */

const struct det_conv *det_conv_get(enum det_conv_kind kind);

/* ---- anchors ---- */

/* The cell anchors of one level: for each ratio (h/w) and, inside, each size,
 * one box (nratios * nsizes rows of 4), as torchvision's
 * AnchorGenerator.generate_anchors (ratio outer, size inner) or Detectron's
 * generate_anchors(stride, sizes, ratios) (_ratio_enum then _scale_enum, in
 * double, stored as float).  stride is only used by the Detectron layout.
 * Returns the number of anchors, -EINVAL for counts < 1 or stride < 1. */
int det_cell_anchors(const struct det_conv *c, int stride, const float *sizes, int nsizes, const float *ratios,
                     int nratios, float *cell);

/* The anchors of a feature map of H x W: cell anchors shifted by
 * (x * stride_x, y * stride_y), location row-major, then cell anchor:
 * anchor (y * W + x) * ncell + a.  out holds H * W * ncell rows of 4.
 * Returns the number of anchors, -EINVAL for negative sizes. */
int64_t det_grid_anchors(const float *cell, int ncell, int H, int W, int stride_y, int stride_x, float *out);

/* vis[i] = 1 where anchor i is inside an image of img_w x img_h (the
 * unpadded size) under c->straddle, else 0.  Returns the number visible. */
int64_t det_anchor_visibility(const struct det_conv *c, const float *anchors, int64_t n, float img_w, float img_h,
                              uint8_t *vis);

/* ---- box coder ---- */

struct det_coder {
        float wx, wy, ww, wh;   /* (1,1,1,1) RPN, (10,10,5,5) RoI heads */
        float clip;             /* bound on decoded dw, dh: DET_BBOX_XFORM_CLIP */
};

/* codes (n, 4) of gt relative to props (n, 4), as BoxCoder.encode_single:
 *   dx = wx (gcx - pcx) / pw, dw = ww log(gw / pw)
 * with w = x2 - x1 (+1), cx = x1 + 0.5 w. */
void det_encode(const struct det_conv *c, const struct det_coder *k, const float *gt, const float *props, int64_t n,
                float *codes);

/* out (n, 4 ncls) from codes (n, 4 ncls) applied to boxes (n, 4), as
 * BoxCoder.decode_single: d/weights, dw and dh clamped above at k->clip,
 * cx' = dx w + cx, w' = exp(dw) w, x1 = cx' - 0.5 w', x2 = cx' + 0.5 w' (- 1). */
void det_decode(const struct det_conv *c, const struct det_coder *k, const float *codes, const float *boxes,
                int64_t n, int ncls, float *out);

/* ---- IoU ---- */

/* iou (n, m), row-major, as torchvision.ops.box_iou or boxlist_iou (+1). */
void det_box_iou(const struct det_conv *c, const float *a, int64_t n, const float *b, int64_t m, float *iou);

/* ---- sorting ---- */

/* order (n) gets the indices sel[0..n) (or 0..n when sel is NULL) sorted by
 * descending scores[i], every NaN first, ties (and -0 against +0) in the
 * order given: torch.sort(descending=True, stable=True).  A radix sort. */
void det_argsort_desc(const float *scores, const int64_t *sel, int64_t n, int64_t *order);

/* idx (k) gets the indices of the min(k, n) largest scores in that order
 * (torch.topk(sorted=True), ties by index where torch leaves them
 * unspecified).  Returns min(k, n), -EINVAL for n < 0 or k < 0. */
int64_t det_topk(const float *scores, int64_t n, int64_t k, int64_t *idx);

/* ---- NMS ---- */

/* Greedy NMS over boxes (n, 4) by descending score (stable: ties keep index
 * order), as torchvision.ops.nms or maskrcnn_benchmark's nms_cpu.  keep gets
 * the kept indices in descending score order (keep holds n entries).
 * Returns their count
 * (-EINVAL for n < 0). */
int64_t det_nms(const struct det_conv *c, const float *boxes, const float *scores, int64_t n, double thr,
                int64_t *keep);

/* NMS within each class idx[i] (any int32 values).  torchvision: exactly
 * torchvision.ops.batched_nms (0.14): up to 1000 boxes the coordinate trick
 * (boxes + idx * (max coordinate + 1)), beyond that per class, then the kept
 * boxes by descending score (stable); keep in descending score order.
 * MLPerf: per class in ascending class order, each class's kept boxes by
 * descending score, concatenated (as the reference's post-processor).
 * keep holds n entries.  Returns the count (-EINVAL for n < 0). */
int64_t det_batched_nms(const struct det_conv *c, const float *boxes, const float *scores, const int32_t *idx,
                        int64_t n, double thr, int64_t *keep);

/* torchvision's _batched_nms_coordinate_trick offsets: out (n, 4) = boxes
 * + idx * (max coordinate + 1), in float (NaN max if any coordinate is NaN);
 * out may be boxes. */
void det_shift_by_class(const float *boxes, const int32_t *idx, int64_t n, float *out);

#endif

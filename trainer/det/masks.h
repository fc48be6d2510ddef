/* masks.h: Mask R-CNN's mask targets by polygon rasterisation, the MLPerf
 * reference's rule [R] (issue #22; shared/reference/maskrcnn.md sections 1
 * and 6).  torchvision's rule (RoIAlign of the bitmask) is roi-align.h's.
 *
 * For each positive proposal (x1, y1, x2, y2) and its matched ground-truth
 * object, the M x M binary target is maskrcnn_benchmark's
 * SegmentationMask.crop(box).resize((M, M)).convert("mask") on polygons
 * (PolygonInstance), with the reference's float32 arithmetic:
 *
 *   xmin, ymin, xmax, ymax = the box's floats (as doubles)
 *   w = max(xmax - xmin, 1), h = max(ymax - ymin, 1)     (doubles)
 *   rw = (float)(M / w), rh = (float)(M / h)
 *   x' = ((float)x - (float)xmin) * rw, y' likewise      (float32)
 *
 * (the reference's tensors are float32 and torch casts a Python scalar to the
 * tensor's type); coordinates are not clipped to the box, and the box is not
 * clipped to the image (proposals already are; the latest maskrcnn-benchmark
 * clamps the box into the image and keeps xmax >= xmin + 1: the same
 * targets for boxes inside the image).  Every part of 3 points or
 * more is rasterised at M x M by pycocotools' rule (rle_from_poly: frPyObjects
 * on each part), the parts are merged (union) and decoded: target[y][x] is 0
 * or 1.  Parts of fewer than 6 coordinates are dropped, as PolygonInstance
 * drops them (so a 2-point part is never read as a box, as frPyObjects would).
 *
 * Objects given as RLE (the rare non-crowd COCO masks; det-loader gives them
 * at the resized image's size): not a reference rule (its COCO dataset has
 * polygons only); here the mask is sampled by nearest neighbour at the bin
 * centres: target[i][j] = mask[floor(y1 + (i + .5) h / M)][floor(x1 + (j + .5)
 * w / M)] in doubles with w, h as above, 0 outside the image.
 *
 * Link: masks.c (and postprocess.c, for the RLE of results) use data/mask.h
 * (libbddata.a's RLE library, bit-exact with pycocotools 2.0.11) rather
 * than a second copy of pycocotools' rasteriser; so a program that uses
 * these functions links libbddata.a after libbdtrain.a (the Mask R-CNN
 * trainer links both anyway), and libbdtrain.a and nvcc compile with
 * DATA_CPPFLAGS (the header); programs that do not call them link as before
 * (static archives pull only what is used).
 *
 * Bad input is defined: a box with a NaN or infinite coordinate gives an
 * all-zero target; a polygon part with a coordinate that is not finite or
 * whose scaled value exceeds 2^18 in magnitude (never in real data: a COCO
 * image at 1333 px in a 1 px box scales to 4e4) is dropped, as is a part of
 * fewer than 3 points; an object with no part left, DET_GT_MASK_NONE, or an
 * RLE whose counts do not cover exactly its size gives zeros.  A matched index
 * outside [0, ngt) or M < 1 is -EINVAL (nothing written).
 */
#ifndef BD_DET_MASKS_H
#define BD_DET_MASKS_H

#include <stdint.h>

#include "boxes.h"
#include "mask.h"       /* data/: struct coco_polygons, struct coco_rle, rle_* */

struct bd_backend;
struct bd_tensor;

enum det_gt_mask_kind { DET_GT_MASK_NONE, DET_GT_MASK_POLYGONS, DET_GT_MASK_RLE };

/* One ground-truth object's mask, in the (resized) image's pixels. */
struct det_gt_mask {
        int kind;                       /* enum det_gt_mask_kind */
        struct coco_polygons poly;      /* DET_GT_MASK_POLYGONS: parts of x y x y ... (doubles) */
        struct coco_rle rle;            /* DET_GT_MASK_RLE: column-major counts, height x width */
};

/* The M x M target (row-major: out[y * M + x], 0 or 1) of one object in one
 * box.  -EINVAL for M < 1. */
int det_mask_target(const struct det_gt_mask *gt, const float box[4], int M, float *out);

/* targets (P, M, M) of proposals (P, 4) matched to gts[matched[p]].
 * Proposals run in parallel (OpenMP); results do not depend on threads. */
int det_mask_targets(const struct det_gt_mask *gts, int64_t ngt, const float *props, const int64_t *matched, int64_t P,
                     int M, float *out);

/* Backend-level: props a (P, 4) float32 tensor on be's device, out resized to
 * (P, M, M) float32 there.  CUDA: the proposals are copied to the host
 * (det_op_mask_targets_h takes them there, as the trainer has them); the
 * host crops and scales each matched object's parts (float arithmetic, a
 * few numbers per vertex) and packs their vertices (det_poly_pack), which go
 * up in one copy; a kernel with one thread per proposal and column
 * rasterises them by the column rule of masks-impl.h (pycocotools' bits:
 * checked against rle_from_poly on the host by test-det-masks) for M <=
 * DET_MASK_COLUMN_MAX; RLE objects' targets (rare) are sampled on the host
 * and copied.  Larger M: all on the host.  A whole batch is one call when
 * the images' objects are one array (matched indices into it).  Errors in
 * be->err. */
int det_op_mask_targets(struct bd_backend *be, const struct det_gt_mask *gts, int64_t ngt, const struct bd_tensor *props,
                        const int64_t *matched, int M, struct bd_tensor *out);
int det_op_mask_targets_h(struct bd_backend *be, const struct det_gt_mask *gts, int64_t ngt, const float *props,
                          const int64_t *matched, int64_t P, int M, struct bd_tensor *out);

/* ---- the column rule (masks-impl.h), for the GPU ---- */

#define DET_MASK_COLUMN_MAX 256

/* The parts of the proposals' objects, cropped and scaled as above, as
 * integer vertices at 5x (rleFrPoly's rounding): part q has part_k[q]
 * vertices from vx[part_v[q]], vy[part_v[q]]; proposal p has the parts
 * [prop_part[p], prop_part[p + 1]) (none for RLE objects, NaN boxes). */
struct det_poly_pack {
        int *vx, *vy;
        int *part_k;
        int64_t *part_v;
        int64_t *prop_part;             /* (P + 1) */
        int64_t nv, np;
        size_t cap_v, cap_vy, cap_p, cap_pv;
};

int det_poly_pack(const struct det_gt_mask *gts, int64_t ngt, const float *props, const int64_t *matched, int64_t P,
                  int M, struct det_poly_pack *pk);
void det_poly_pack_release(struct det_poly_pack *pk);

/* det_mask_target by the column rule on the host (polygons; zeros for other
 * objects): the GPU's arithmetic, the same bits as det_mask_target.
 * -EINVAL for M outside [1, DET_MASK_COLUMN_MAX]. */
int det_mask_target_columns(const struct det_gt_mask *gt, const float box[4], int M, float *out);

#if HAVE_CUDA
/* masks.cu's launcher: targets of the proposals with parts written into out
 * (P, M, M) on the device (others left as they are); the pack's arrays are
 * device copies.  0 or a negative errno. */
int det_cuda_poly_targets(void *stream, const int *vx, const int *vy, const int *part_k, const int64_t *part_v,
                          const int64_t *prop_part, int64_t P, int M, float *out);
#endif

#endif

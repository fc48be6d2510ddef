/* mask.h: instance masks as COCO run-length encodings, with the semantics of
 * pycocotools (cocoapi common/maskApi.c and _mask.pyx), bit for bit.
 *
 * A mask of h x w pixels is walked column-major (pixel (x, y) is number
 * x * h + y) and stored as the lengths of alternating runs of 0 and 1,
 * starting with a run of 0 (of length 0 when the first pixel is set).  The
 * compressed string form of `counts` (rle_to_string) is what COCO results
 * files and pycocotools' encode() carry; the uncompressed form is a JSON list
 * of the counts (crowd annotations).
 *
 * Where pycocotools has a quirk, it is kept, because evaluation numbers
 * depend on it:
 *   - polygons are rasterised as rleFrPoly does (vertices scaled by 5 and
 *     rounded, edges walked, x crossings kept and downsampled): not a
 *     scan fill, and not the same pixels;
 *   - a box converts through its polygon (rle_from_bbox);
 *   - merging masks of different sizes gives an empty 0 x 0 mask;
 *   - the IoU of a pair is computed only where their boxes (rle_to_bbox)
 *     overlap; no intersection gives 0; against a crowd ground truth the
 *     union is the detection's area; masks of different sizes give -1;
 *   - the box of a mask spans all rows when a run of 1 crosses into the
 *     next column, and skips runs of 1 of no length (pycocotools 2.x; the
 *     older maskApi.c counted their position);
 *   - areas and intersections are counted in 32 bits, as maskApi.c does.
 */
#ifndef BD_DATA_MASK_H
#define BD_DATA_MASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coco-index.h"
#include "macro.h"

struct rle {
        uint32_t h, w;
        uint32_t m;             /* number of counts */
        uint32_t *cnts;         /* malloc'ed; NULL when m is 0 */
};

/* An empty rle: h, w, m zero, no counts. */
#define RLE_INIT { 0, 0, 0, NULL }

/* Frees the counts and resets r to RLE_INIT. */
void rle_free(struct rle *r);
static inline void rle_freep(struct rle *r)
{
        rle_free(r);
}
#define _cleanup_rle_ _cleanup_(rle_freep)
/* r = a copy of m counts (r's previous counts are freed). */
void rle_set(struct rle *r, uint32_t h, uint32_t w, const uint32_t *cnts, uint32_t m);

/* Encodes a binary mask; any nonzero byte is set.  rle_encode reads it
 * column-major (mask[x * h + y], pycocotools' Fortran order);
 * rle_encode_rows reads rows (mask[y * stride + x]), as images and model
 * outputs are laid out, and encodes the same column-major runs. */
void rle_encode(struct rle *r, const uint8_t *mask, uint32_t h, uint32_t w);
void rle_encode_rows(struct rle *r, const uint8_t *mask, uint32_t h, uint32_t w, size_t stride);
/* Decodes into h * w bytes of 0 and 1: column-major, or rows of stride
 * bytes.  Counts beyond h * w are ignored (never written past the mask). */
void rle_decode(const struct rle *r, uint8_t *mask);
void rle_decode_rows(const struct rle *r, uint8_t *mask, size_t stride);

/* The union (intersect false) or intersection of n masks, into out (which
 * may not be one of R).  n == 0 gives an empty 0 x 0 mask. */
void rle_merge(const struct rle *R, size_t n, bool intersect, struct rle *out);
/* Pixels set (the sum of the odd-indexed counts, in 32 bits). */
uint32_t rle_area(const struct rle *r);
/* The mask's box [x, y, width, height] (zeros when empty). */
void rle_to_bbox(const struct rle *r, double bb[4]);

/* IoU of m detections against n ground truths: o[d * n + g], the (m, n)
 * matrix of pycocotools' iou(dt, gt, iscrowd).  iscrowd may be NULL. */
void rle_iou(const struct rle *dt, size_t m, const struct rle *gt, size_t n, const uint8_t *iscrowd, double *o);
/* The same with the masks' boxes (rle_to_bbox) given, where the caller has
 * them already; NULL: computed here. */
void rle_iou_boxes(const struct rle *dt, const double *db, size_t m, const struct rle *gt, const double *gb, size_t n,
                   const uint8_t *iscrowd, double *o);
/* The same for boxes [x, y, width, height] (maskApi.c's bbIou). */
void bbox_iou(const double *dt, size_t m, const double *gt, size_t n, const uint8_t *iscrowd, double *o);

/* One polygon of k (x, y) points, as rleFrPoly. */
void rle_from_poly(struct rle *r, const double *xy, size_t k, uint32_t h, uint32_t w);
/* A box [x, y, width, height], as rleFrBbox. */
void rle_from_bbox(struct rle *r, const double bb[4], uint32_t h, uint32_t w);
/* An object's polygons, each rasterised and then merged (union), as
 * pycocotools' annToRLE does (frPyObjects + merge; when the first polygon
 * has exactly 4 coordinates, frPyObjects reads every part as a box). */
void rle_from_polygons(struct rle *r, const struct coco_polygons *p, uint32_t h, uint32_t w);

/* The compressed string of counts (malloc'ed, NUL-terminated). */
char *rle_to_string(const struct rle *r);
/* Parses a compressed string into r (h x w); -EINVAL when it is malformed
 * (a character outside '0'..'o', a truncated or over-long number, a count
 * that is negative or over 2^32 - 1).  The counts are not checked against
 * h * w: rle_check does that. */
int rle_from_string(struct rle *r, const char *s, uint32_t h, uint32_t w);
/* 0 when the counts cover exactly h * w pixels, -EINVAL otherwise. */
int rle_check(const struct rle *r);

/* A ground-truth annotation's mask, as pycocotools' annToRLE: polygons
 * rasterised at the image's height and width, RLE (crowd regions) as stored
 * with its own size.  An annotation without segmentation gives an empty
 * mask of the image's size.  -EBADMSG when the index's data is damaged. */
int coco_ann_mask(const struct coco_index *idx, const struct coco_ann *a, struct rle *r);

#endif

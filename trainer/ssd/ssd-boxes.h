/* ssd-boxes.h: SSD's default boxes, matching and encoding of the ground truth,
 * decoding and non-maximum suppression.  Host code, no backend.
 *
 * Everything follows the MLPerf reference (mlcommons/training
 * single_stage_detector, utils.py), computed in float32 in the reference's
 * order of operations so that the numbers are the same bit for bit where the
 * reference's are well defined:
 *
 * Default boxes, for feature maps f_k (k = 0..5) of an image of size S:
 *   s_k = scales[k] / 300 with scales 21, 45, 99, 153, 207, 261, 315; the
 *   sizes of a cell are (s_k, s_k), (s'_k, s'_k) with s'_k = sqrt(s_k s_k+1),
 *   then for each aspect ratio a of the level (2 | 2, 3) the pair
 *   (s_k sqrt(a), s_k / sqrt(a)) and its transpose: 4, 6, 6, 6, 4, 4 boxes.
 *   Centres ((j + 0.5) / g_k, (i + 0.5) / g_k) for row i and column j, with
 *   g_k = 300 / steps[k] (steps 8, 16, 32, 64, 100, 300) when the maps are
 *   the reference's 38, 19, 10, 5, 3, 1, and g_k = f_k for other image sizes.
 *   cx, cy, w, h are each clamped to [0, 1].
 *   Order: level, then box size, then row, then column -- the order of the
 *   reference's DefaultBoxes loops, which is also the order of its heads'
 *   outputs viewed as (N, 4, -1): box b of level k at cell (i, j) is output
 *   index offset_k + b f_k^2 + i f_k + j.  (8732 boxes at 300x300.)
 *
 * Matching (Encoder.encode): IoU of every ground-truth box with every default
 * box; each default box takes its best ground truth (the first on ties); each
 * ground truth's best default box (first on ties) is forced to it (IoU 2,
 * later ground truth winning a default box claimed twice); default boxes with
 * IoU > 0.5 are positive with that box's label, the others background (0).
 * Encoding with variances 0.1 and 0.2 (Loss._loc_vec):
 *   t_xy = 10 (g_xy - d_xy) / d_wh,  t_wh = 5 log(g_wh / d_wh)
 * on the matched box in centre form; background rows get the encoding of the
 * default box itself (zeros).
 *
 * Decoding (scale_back_batch, decode_single): xy = 0.1 t_xy d_wh + d_xy,
 * wh = exp(0.2 t_wh) d_wh, to corners; softmax over the classes; per class
 * but background: scores > 0.05, the best 200, greedy NMS keeping boxes of
 * IoU < 0.5 with every better kept box; then the best 200 over all classes.
 */
#ifndef BD_SSD_BOXES_H
#define BD_SSD_BOXES_H

#include <stdint.h>

#include "err.h"

#define SSD_LEVELS 6
#define SSD_MAX_PER_CELL 6
#define SSD_LOG_SIZE_CLIP 4.13516656f  /* log(1000 / 16): torchvision's bound on decoded sizes */
#define SSD_MAX_GT 1024               /* ground-truth boxes per image */

struct ssd_dboxes {
        int image_size;
        int fsize[SSD_LEVELS];          /* feature map sizes */
        int per_cell[SSD_LEVELS];       /* 4, 6, 6, 6, 4, 4 */
        int64_t offset[SSD_LEVELS];     /* first box of each level */
        int64_t n;                      /* boxes in all */
        float *xywh;                    /* (n, 4) centre x, centre y, width, height */
        float *ltrb;                    /* (n, 4) left, top, right, bottom */
};

/* The default boxes for square images of image_size with these feature map
 * sizes (all >= 1). */
int ssd_dboxes_init(struct ssd_dboxes *d, int image_size, const int fsize[SSD_LEVELS], struct bd_err *err);
void ssd_dboxes_release(struct ssd_dboxes *d);

/* IoU of two corner boxes, in float32 as the reference computes it. */
float ssd_iou(const float *a, const float *b);

/* Matching and encoding of one image: gt (G <= SSD_MAX_GT, 4) corners in
 * [0, 1], labels (G) 1..K-1 -> label (n) 0 for background, loc (n, 4)
 * encoded targets.  best: scratch of n floats (NULL: allocated here).
 * Returns the number of positive default boxes (-EINVAL for a bad G). */
int64_t ssd_encode(const struct ssd_dboxes *d, const float *gt, const int32_t *labels, int G, float *best,
                   int32_t *label, float *loc);

/* Decoding parameters (the reference's). */
struct ssd_nms_cfg {
        float score_min;                /* 0.05 */
        float iou_max;                  /* 0.5 */
        int per_class;                  /* 200 */
        int max_out;                    /* 200 */
};
void ssd_nms_cfg_init(struct ssd_nms_cfg *c);

struct ssd_det {
        float box[4];                   /* corners, fractions of the image */
        float score;
        int32_t label;                  /* 1..K-1 */
};

/* Scratch for decoding one image at a time (one per thread). */
struct ssd_decoder {
        int64_t n, K;
        float *boxes;                   /* (n, 4) */
        float *prob;                    /* (n, K) */
        int32_t *cand;                  /* (n) */
        float *cscore;                  /* (n) */
        struct ssd_det *all;            /* (K * per_class) */
};

void ssd_decoder_init(struct ssd_decoder *dec, int64_t n, int64_t K, const struct ssd_nms_cfg *c);
void ssd_decoder_release(struct ssd_decoder *dec);

/* loc (n, 4) and logits (n, K) of one image -> at most max_out detections in
 * out, best first; returns their number. */
int ssd_decode(struct ssd_decoder *dec, const struct ssd_dboxes *d, const struct ssd_nms_cfg *c, const float *loc,
               const float *logits, struct ssd_det *out);

#endif

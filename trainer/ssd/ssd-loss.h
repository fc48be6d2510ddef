/* ssd-loss.h: the SSD loss with hard negative mining (the reference's Loss).
 *
 * Per image i with P_i > 0 positive default boxes (ssd_encode):
 *
 *   L_i = ( sum over positives of smooth L1 (beta 1) summed over the 4 offsets
 *         + sum over positives and selected negatives of softmax cross-entropy ) / P_i
 *
 * where the selected negatives are the min(3 P_i, n) background boxes of
 * largest cross-entropy (the reference ranks every box with positives counted
 * as 0, so when 3 P_i exceeds the negatives the rest of the quota falls on
 * positives, which then count twice; equal values are taken in index order).
 * Images without positives give 0.  The loss is the mean of L_i over the N
 * images of the batch; the selection carries no gradient.
 *
 * Work split: the targets are encoded on the host (ssd_loss_encode, images
 * in parallel); the cross-entropy of every row, the smooth L1 with weights
 * 1 / (P_i N) and both gradients run on the backend (ops.h); the per-row
 * cross-entropies come back to the host for the mining (a selection, linear
 * in the number of boxes), whose weights go back to the backend.
 *
 *   N = images, n = default boxes per image, K = classes with background
 */
#ifndef BD_SSD_LOSS_H
#define BD_SSD_LOSS_H

#include "ssd-boxes.h"
#include "ops.h"

struct ssd_loss {
        struct bd_backend *be;
        int64_t N, n, K;
        /* targets on the host, filled by ssd_loss_encode() */
        int32_t *glabel;                /* (N, n) 0 background, 1..K-1 */
        float *gloc;                    /* (N, n, 4) encoded offsets */
        int64_t *npos;                  /* (N) positives per image */
        /* host scratch */
        float *ce, *wc, *wl, *sel, *best;
        double *img_conf;               /* (N) */
        /* on the backend */
        struct bd_tensor t_label, t_loc, t_wc, t_wl, t_ce, t_sl1;
};

struct ssd_loss_parts {
        double loc, conf;               /* the two terms of the mean loss */
        int64_t positives;              /* over the batch */
};

int ssd_loss_init(struct ssd_loss *L, struct bd_backend *be, int64_t N, int64_t n, int64_t K);
void ssd_loss_release(struct ssd_loss *L);

/* Targets of the N images: boxes (N, maxb, 4) corners in [0, 1], labels
 * (N, maxb), counts (N); -EINVAL when an image has more than SSD_MAX_GT. */
int ssd_loss_encode(struct ssd_loss *L, const struct ssd_dboxes *d, const float *boxes, const int32_t *labels,
                    const int32_t *counts, int maxb);

/* ploc (N n, 4) and plabel (N n, K) in f32 -> *ret_loss; with dploc and
 * dplabel (resized like ploc and plabel) also the gradients times
 * grad_scale.  A non-finite output gives a non-finite loss (no mining). */
int ssd_loss_run(struct ssd_loss *L, const struct bd_tensor *ploc, const struct bd_tensor *plabel, double grad_scale,
                 struct bd_tensor *dploc, struct bd_tensor *dplabel, double *ret_loss, struct ssd_loss_parts *parts);

/* The k largest of v[0..m) moved to its front (in no order); a quickselect. */
void ssd_select_largest(float *v, int64_t m, int64_t k);

#endif

/* losses.h: the losses of Mask R-CNN's heads on either backend, as
 * torchvision 0.14's rpn compute_loss, fastrcnn_loss and maskrcnn_loss (the
 * MLPerf reference computes the same ones; smooth L1's beta is the only
 * switch: RPN 1/9 in both, box head 1.0 in the reference and 1/9 in
 * torchvision, maskrcnn.md section 1).
 *
 * Each takes the sampled rows as labels (i32 tensors on the backend) and
 * returns the loss values (host doubles, normalised as the reference does,
 * at once or through a struct det_loss_acc) and, where the gradient tensors
 * are given, d loss / d input times gscale.
 * They are compositions of ops.h (label masks, the weighted element losses,
 * the one-channel-per-row selection), so the CUDA backend runs the same
 * element functions as the CPU.  The scratch tensors live in a struct
 * det_loss_ws reused from step to step.
 *
 * Bad input: shapes that do not fit are -EINVAL with a message in be->err;
 * regression targets must be finite on every row (unused rows are multiplied
 * by a weight of 0, and 0 * NaN is NaN); nothing sampled gives losses of 0
 * and zero gradients (torchvision's maskrcnn_loss returns logits.sum() * 0
 * then; its other losses divide by zero).
 */
#ifndef BD_DET_LOSSES_H
#define BD_DET_LOSSES_H

#include "ops.h"

#define DET_BETA_RPN (1.0 / 9)
#define DET_BETA_BOX_MLPERF 1.0
#define DET_BETA_BOX_TORCHVISION (1.0 / 9)

struct det_loss_ws {
        struct bd_tensor t, w, wb, l, sel, dsel;
};

void det_loss_ws_release(struct det_loss_ws *ws);

/* A step's loss values kept on the backend and read back in one copy: each
 * loss call writes its sums into slots, det_loss_acc_read waits once and
 * fills the callers' doubles.  (On CUDA a read back waits for everything
 * queued; seven of them per Mask R-CNN step were seven pipeline drains.) */
#define DET_LOSS_SLOTS 8
struct det_loss_acc {
        struct bd_tensor sums;          /* f64 (DET_LOSS_SLOTS) on the backend */
        double *dst[DET_LOSS_SLOTS];    /* where each value goes: */
        double div[DET_LOSS_SLOTS];     /* sum / div * scale */
        double scale[DET_LOSS_SLOTS];
        int used;
};

/* Empties the accumulator (the values not read are dropped). */
int det_loss_acc_begin(struct bd_backend *be, struct det_loss_acc *acc);
/* One copy back: *dst[i] = sum[i] / div[i] * scale[i] for each slot used;
 * empties it. */
int det_loss_acc_read(struct bd_backend *be, struct det_loss_acc *acc);
void det_loss_acc_release(struct det_loss_acc *acc);

/* How a loss call is normalised and where its values go. */
struct det_loss_opts {
        /* What the loss is averaged over: the sampled rows (RPN: label >= 0,
         * box head: label >= 0).  < 0: counted from the labels, a read back
         * (the caller usually knows it: it sampled them).  The mask loss
         * averages over its P x M x M elements and ignores it. */
        double n;
        double gscale;                  /* factor on the gradients */
        double vscale;                  /* factor on the values (0 taken as 1) */
        struct det_loss_acc *acc;       /* NULL: values read back at once */
};

/* RPN over M anchors of the batch: obj (M) objectness logits, deltas (M, 4),
 * label (M) i32: 1 sampled positive, 0 sampled negative, -1 not sampled (any
 * other negative value likewise); tgt (M, 4) regression targets.
 *   loss_obj = mean over sampled anchors of BCE-with-logits(obj, label)
 *   loss_box = sum over positives of smooth L1 (beta) / number sampled
 * d_obj (M) and d_deltas (M, 4): gradients times gscale (NULL: not wanted). */
int det_rpn_loss(struct bd_backend *be, struct det_loss_ws *ws, const struct det_loss_opts *o,
                 const struct bd_tensor *obj, const struct bd_tensor *deltas, const struct bd_tensor *label,
                 const struct bd_tensor *tgt, double beta, double *loss_obj, double *loss_box,
                 struct bd_tensor *d_obj, struct bd_tensor *d_deltas);

/* Box head over R sampled RoIs: cls (R, K) logits, box (R, 4K) class-specific
 * deltas, label (R) i32 class (0 background; < 0 not counted), tgt (R, 4).
 *   loss_cls = mean over counted rows of softmax cross-entropy
 *   loss_box = sum over rows with label > 0 of smooth L1 (beta) of the label's
 *              4 deltas / number of counted rows */
int det_fastrcnn_loss(struct bd_backend *be, struct det_loss_ws *ws, const struct det_loss_opts *o,
                      const struct bd_tensor *cls, const struct bd_tensor *box, const struct bd_tensor *label,
                      const struct bd_tensor *tgt, double beta, double *loss_cls, double *loss_box,
                      struct bd_tensor *d_cls, struct bd_tensor *d_box);

/* Mask head over P positive RoIs: logits (P, K, M, M) in any layout, label
 * (P) i32 class of each RoI's ground truth, tgt (P, M, M) or (P, 1, M, M)
 * targets in [0, 1].
 *   loss = mean over P x M x M of BCE-with-logits(logits[p, label[p]], tgt)
 * d_logits: shaped like logits, zero outside the selected channels. */
int det_mask_loss(struct bd_backend *be, struct det_loss_ws *ws, const struct det_loss_opts *o,
                  const struct bd_tensor *logits, const struct bd_tensor *label, const struct bd_tensor *tgt,
                  double *loss, struct bd_tensor *d_logits);

#endif

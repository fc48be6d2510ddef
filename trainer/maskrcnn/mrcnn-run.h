/* mrcnn-run.h: the state of one benchd-maskrcnn process, shared by the
 * training loop (mrcnn-train.c) and the evaluation (mrcnn-eval.c).
 */
#ifndef BD_MRCNN_RUN_H
#define BD_MRCNN_RUN_H

#include "det-loader.h"
#include "mrcnn-net.h"
#include "mrcnn-opts.h"
#include "trainer.h"

struct mrcnn_run {
        struct trainer tr;              /* ranks, backend, model, optimiser (trainer.h) */
        struct mrcnn_opts o;
        struct mrcnn_cfg cfg;
        struct mrcnn_net *net;
        int K;                          /* classes with the background */
        int min_size, max_size;         /* the loaders' */
        enum det_convention conv;       /* the loaders' convention (from --mode) */
};

/* A det-loader of the split ("train2017" or "val2017") of --data, or of
 * synthetic images (mode DET_LOADER_SYNTHETIC); batch images per rank. */
int mrcnn_run_loader(struct mrcnn_run *run, enum det_loader_mode mode, int batch, unsigned flags,
                     struct det_loader **ret, struct bd_err *err);

/* Evaluation, bbox and segm, on val2017: every rank runs inference on its
 * share of the images, the per-image results are gathered over MPI. */
struct mrcnn_eval;
int mrcnn_eval_open(struct mrcnn_run *run, struct mrcnn_eval **ret, struct bd_err *err);
struct mrcnn_eval *mrcnn_eval_free(struct mrcnn_eval *ev);
/* Images in the validation set (all ranks). */
long mrcnn_eval_samples(const struct mrcnn_eval *ev);
const struct det_loader *mrcnn_eval_loader(const struct mrcnn_eval *ev);
/* Collective: inference on this rank's images, then both evaluations; the
 * 12 COCO numbers of bbox and of segm on every rank.  Images that cannot be
 * decoded are left out (each was reported); none decoded is an error. */
int mrcnn_eval_run(struct mrcnn_eval *ev, struct mrcnn_run *run, double bbox[12], double segm[12],
                   struct bd_err *err);

/* COCO's x, y, width, height of a box x1 y1 x2 y2 in original pixels: the
 * width is x2 - x1 + 1 in the +1 convention (--mode mlperf: the
 * reference's BoxList.convert("xywh")), x2 - x1 in torchvision's. */
void mrcnn_box_xywh(const float box[4], int plus_one, double ret[4]);

#endif

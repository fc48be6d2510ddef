/* ssd-run.h: the state of one benchd-ssd process, shared by the training
 * loop (ssd-train.c) and the evaluation (ssd-eval.c); its functions are in
 * ssd-run.c.
 *
 * On the CPU the network reads the loader's batch memory directly; on CUDA
 * the batch is copied to the device (and cast to half precision with amp,
 * the outputs cast back to float32 for the loss and the decoder).
 */
#ifndef BD_SSD_RUN_H
#define BD_SSD_RUN_H

#include "ssd-net.h"
#include "ssd-opts.h"
#include "trainer.h"

struct ssd_run {
        struct trainer tr;              /* ranks, backend, model, optimiser (trainer.h) */
        struct ssd_opts o;
        struct ssd_net net;
        int K;                          /* classes with background */
        struct bd_tensor xhost;         /* view of the loader's batch (kept: the backward reads it) */
        struct bd_tensor xdev;          /* input on the device (CUDA) */
        struct bd_tensor xhalf;         /* half-precision input (amp), NHWC */
        struct bd_tensor xcast;         /* its cast before the relayout */
        struct bd_tensor loc32, conf32; /* float32 outputs (amp) */
        const struct bd_tensor *ploc, *plabel;  /* float32 outputs of the last forward: (n B, 4), (n B, K) */
};

/* Forward of n images (n, 3, S, S) in host memory; sets run->ploc and
 * run->plabel. */
int ssd_run_forward(struct ssd_run *run, float *images, int n);

/* Frees the run's tensors and network (the skeleton releases the rest). */
void ssd_run_release(struct ssd_run *run);

/* Evaluation of the bbox mAP on val2017, each rank on its share. */
struct ssd_eval;
int ssd_eval_open(struct ssd_run *run, struct ssd_eval **ret, struct bd_err *err);
struct ssd_eval *ssd_eval_free(struct ssd_eval *ev);
/* Images in the validation set (all ranks). */
long ssd_eval_samples(const struct ssd_eval *ev);
/* The category ids of labels 1..K-1, for checking them against training's. */
int32_t ssd_eval_category(const struct ssd_eval *ev, int label);
int ssd_eval_labels(const struct ssd_eval *ev);
/* Collective: runs inference on this rank's images, gathers the evaluation;
 * the 12 COCO numbers on every rank.  Images that cannot be decoded are
 * left out, as missing ones are (each reported); none decoded is an error. */
int ssd_eval_run(struct ssd_eval *ev, struct ssd_run *run, double stats[12], struct bd_err *err);

#endif

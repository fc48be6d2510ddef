/* mrcnn-stages.h: what the stage files of the Mask R-CNN network share
 * (inside libbdmrcnn.a; programs use mrcnn-net.h).
 *
 * The network is a sequence of stages, each in its own file with its layers,
 * its forward and its backward side by side:
 *
 *   mrcnn-fpn.c     backbone and FPN: the input, C2..C5, P2..P6, and the
 *                   gradients of P2..P6 the heads write
 *   mrcnn-rpn.c     RPN head, anchors, proposals, RPN targets and loss
 *   mrcnn-box.c     RoI sampling and targets, box head and its loss
 *   mrcnn-mask.c    mask head: targets, loss, the masks of detections
 *   mrcnn-detect.c  inference: detections and pasted masks
 *   mrcnn-net.c     configuration, construction, and the training step
 *                   (forward, losses, backward) as the stages in order
 *   mrcnn-common.c  what several stages use: layer construction, host work
 *                   arrays, host <-> device copies, one image's ground truth
 *
 * A stage's init registers its parameters (the order of the calls in
 * mrcnn_net_new is the order of the parameter buffer); its release frees
 * what it holds.  Functions return a negative errno; those without an err
 * argument describe the failure in n->be->err (BE_FAIL copies it).
 */
#ifndef BD_MRCNN_STAGES_H
#define BD_MRCNN_STAGES_H

#include <stddef.h>
#include <stdint.h>

#include "mrcnn-net.h"
#include "scratch.h"

/* ---- the network ---- */

/* backbone and FPN (mrcnn-fpn.c) */
struct mrcnn_fpn {
        struct bd_resnet body;
        int need_c[4];                  /* the gradient of C2..C5 is wanted */
        struct bd_conv inner[4], outer[4];
        struct bd_pool p6;
        struct bd_tensor x;                             /* the input in the model's type */
        struct bd_tensor lat[4], up[3], inner_t[4];
        struct bd_tensor P[MRCNN_LEVELS];
        struct bd_tensor P32[MRCNN_ROI_LEVELS];         /* amp: P2..P5 in the heads' type */
        const struct bd_tensor *roi_maps[MRCNN_ROI_LEVELS];     /* what RoIAlign reads: P or P32 */
};

struct mrcnn_anchors {
        int H[MRCNN_LEVELS], W[MRCNN_LEVELS], pad_h, pad_w;
        float *a;                       /* all levels, concatenated */
        int64_t off[MRCNN_LEVELS + 1];  /* anchors before level l */
};

/* RPN head, anchors and proposals (mrcnn-rpn.c) */
struct mrcnn_rpn {
        struct bd_conv conv, cls, box;
        struct mrcnn_anchors ac;        /* cached per map size */
        struct bd_tensor rh[MRCNN_LEVELS], ro[MRCNN_LEVELS], rd[MRCNN_LEVELS];  /* conv (ReLU'd), outputs */
        struct bd_tensor obj, dlt;      /* outputs, all levels, NHWC, (M), (M, 4) */
        struct bd_tensor lab;           /* (M) i32: 1 sampled positive, 0 sampled negative, -1 */
        struct bd_tensor d_obj, d_dlt;  /* the loss's gradients, kept for the backward */
        struct bd_tensor an_dev;        /* the anchors (A, 4) on the device */
        int an_dev_ok;                  /* an_dev holds ac's anchors */
        struct bd_tensor props_d, scores_d;     /* the proposals on the device, (N, post, 4) and (N, post) */
        /* host work space, grown as needed and kept: a step allocates
         * nothing once the sizes repeat (large blocks would otherwise go
         * back to the kernel and fault in again, zeroed, every step) */
        float *props, *scores;          /* proposals (N, post, 4) of the last mrcnn_proposals, on the host */
        size_t props_cap, scores_cap;
        int64_t post;                   /* their post-NMS top-n */
        int64_t count[64];              /* proposals per image */
        /* the targets (det_dev_rpn_targets, on the backend's device): the
         * batch's boxes gathered, uploaded once per step; labels in lab,
         * box codes (M, 4) in float32 */
        float *gt_h;
        size_t gt_h_cap;
        struct bd_tensor gt_d, tgt32;
        struct det_rpn_work work;       /* the host function's scratch (CPU) */
};

/* box head (mrcnn-box.c) */
struct mrcnn_box {
        struct det_msroi roi;
        struct bd_fc fc6, fc7, cls, bbox;
        struct bd_tensor rois, feat, h6, h7, cls_out, box_out;
        struct bd_tensor lab, tgt;
        struct bd_tensor d_cls, d_box;  /* the loss's gradients */
        int32_t *levels;                /* the RoIs' pyramid levels */
        size_t levels_cap;
};

/* mask head (mrcnn-mask.c) */
struct mrcnn_mask {
        struct det_msroi roi;
        struct bd_conv conv[MRCNN_MAX_MASK_CONVS], deconv, logits;
        struct bd_tensor rois, feat, h[MRCNN_MAX_MASK_CONVS], dc, log;
        struct bd_tensor lab, tgt, tgt_f32, matched;
        struct bd_tensor d_log;         /* the loss's gradient */
        int have;                       /* the last training forward had positives */
        int32_t *levels;
        size_t levels_cap;
        uint8_t *bits;                  /* ground-truth bitmasks ([TV] targets) */
        size_t bits_cap;
};

struct mrcnn_net {
        struct mrcnn_cfg cfg;
        struct bd_backend *be;
        enum bd_dtype dt;               /* the heads' activations and the losses: the model's */
        enum bd_dtype adt;              /* backbone, FPN and RPN head: dt, or f16 with amp */
        int K;
        struct det_loss_ws lws;
        struct det_loss_acc lacc;       /* the step's loss values, read once */
        struct bd_scratch scratch;
        struct mrcnn_fpn fpn;
        struct mrcnn_rpn rpn;
        struct mrcnn_box box;
        struct mrcnn_mask mask;
        struct bd_tensor props_dev;     /* float32 boxes on the device (mask targets, postprocess) */
        int have_grads;
        struct {
                float *props;           /* proposals with the GT appended, all images */
                float *rois;            /* sampled (R, 5) */
                int32_t *roi_labels;
                int64_t nprops[64];
                int64_t nrois;
        } dbg;
        size_t dbg_props_cap, dbg_rois_cap, dbg_lab_cap;
};

/* ---- a training step's host side ---- */

/* one image's ground truth as float boxes, labels and masks */
struct mrcnn_gt {
        int64_t g;
        float *boxes;
        int32_t *labels;
        struct det_gt_mask *masks;
};

/* The sampled RoIs of the batch (each image's proposals with its ground
 * truth appended, in proposal order): rois (+5 each: image, box), labels,
 * regression targets, and for positives the matched GT index. */
struct mrcnn_rois {
        float *rois, *tgt;
        int32_t *labels;
        int64_t *matched;               /* GT index of each RoI (-1 for negatives) */
        int64_t n, npos;
        size_t cap;
};

/* What the stages of mrcnn_fwd_train fill and read in turn. */
struct mrcnn_targets {
        struct mrcnn_gt gt[64];
        int64_t rpn_pos, rpn_neg;               /* sampled anchors of this rank */
        struct mrcnn_rois rs;
        int64_t img_first[65], img_pos[64];     /* per image: its first RoI in rs, its positives */
        double cnt[3];                          /* sampled anchors, RoIs, positive RoIs over all ranks */
        double world;                           /* the number of ranks */
};

/* A loss's factor: this rank's count times the ranks over the count of all
 * ranks (0 when that is 0). */
static inline double mrcnn_loss_factor(int64_t local, double world, double total)
{
        return total > 0 ? (double)local * world / total : 0;
}

#define BE_FAIL(n, err, r, what) bd_err_set(err, r, "%s: %s", what, (n)->be->err.msg)

/* ---- mrcnn-common.c ---- */

int mrcnn_conv_layer(struct bd_model *m, struct bd_conv *l, const char *name, int64_t cin, int64_t cout, int k,
                     int stride, int pad, int transposed, enum bd_init init, double std);
/* dy = ReLU's backward of dy at the output y */
int mrcnn_relu_bwd_inplace(struct bd_backend *be, const struct bd_tensor *y, struct bd_tensor *dy);
/* grows a malloc'ed array to n elements of size sz */
int mrcnn_grow(void *pp, size_t *cap, size_t n, size_t sz);
#define GROW(p, cap, n) mrcnn_grow(&(p), &(cap), (size_t)(n), sizeof(*(p)))
/* A float32 host copy of a plain tensor (any float type, any device) into
 * *buf; on the CPU a float32 tensor is read in place (*out points at it). */
int mrcnn_to_host(struct mrcnn_net *n, const struct bd_tensor *t, float **buf, size_t *cap, const float **out);
/* t (ndim, dims) of type dt on the device from host float32 values */
int mrcnn_from_host(struct mrcnn_net *n, const float *v, enum bd_dtype dt, int ndim, const int64_t *dims,
                    struct bd_tensor *t);
int mrcnn_i32_from_host(struct mrcnn_net *n, const int32_t *v, int64_t cnt, struct bd_tensor *t);
/* the RoIs' pyramid levels on the host */
int mrcnn_roi_levels(struct mrcnn_net *n, const struct det_msroi *ms, const float *rois, int64_t R, int32_t **lv,
                     size_t *cap);
int mrcnn_gt_of(const struct det_sample *s, struct mrcnn_gt *g);
void mrcnn_gt_free(struct mrcnn_gt *g);
/* the sampler's stream of image i: which 0 for anchors, 1 for RoIs */
uint64_t mrcnn_image_stream(const struct mrcnn_step *st, int i, int which);

/* ---- mrcnn-fpn.c ---- */

int mrcnn_fpn_init(struct bd_model *m, struct mrcnn_net *n, struct bd_err *err);
void mrcnn_fpn_release(struct mrcnn_fpn *f);
/* the batch's images, the backbone and the FPN: P2..P6 */
int mrcnn_fpn_fwd(struct bd_model *m, struct mrcnn_net *n, const struct det_batch *b);
/* amp: P2..P5 cast to the heads' type for RoIAlign */
int mrcnn_fpn_roi_maps(struct mrcnn_net *n);
/* zeroed gradients of P2..P6 (dP), and those the heads write (dH: dP's
 * first four, or with amp tensors of the heads' type) */
int mrcnn_fpn_grads(struct mrcnn_net *n, struct bd_tensor *dP[MRCNN_LEVELS],
                    struct bd_tensor *dH[MRCNN_ROI_LEVELS]);
/* amp: dH cast into dP (and given back) */
int mrcnn_fpn_heads_grads(struct mrcnn_net *n, struct bd_tensor *dH[MRCNN_ROI_LEVELS],
                          struct bd_tensor *dP[MRCNN_LEVELS]);
/* the FPN's and the backbone's backward from dP */
int mrcnn_fpn_bwd(struct bd_model *m, struct mrcnn_net *n, struct bd_tensor *dP[MRCNN_LEVELS]);

/* ---- mrcnn-rpn.c ---- */

int mrcnn_rpn_init(struct bd_model *m, struct mrcnn_net *n, struct bd_err *err);
void mrcnn_rpn_release(struct mrcnn_rpn *p);
/* anchors of every level for the maps of this forward (cached per size) */
int mrcnn_rpn_anchors(struct mrcnn_net *n, int pad_h, int pad_w);
int mrcnn_rpn_fwd(struct bd_model *m, struct mrcnn_net *n, int64_t N);
/* proposals of the batch into n->rpn.props (N, post, 4) and n->rpn.count */
int mrcnn_proposals(struct mrcnn_net *n, const struct det_batch *b, int training);
/* labels and regression targets of the anchors, image by image */
int mrcnn_rpn_targets(struct mrcnn_net *n, const struct det_batch *b, const struct mrcnn_step *st,
                      struct mrcnn_targets *t, struct bd_err *err);
int mrcnn_rpn_loss(struct mrcnn_net *n, const struct mrcnn_step *st, const struct mrcnn_targets *t,
                   struct mrcnn_losses *out, struct bd_err *err);
/* adds into dP */
int mrcnn_rpn_bwd(struct bd_model *m, struct mrcnn_net *n, struct bd_tensor *dP[MRCNN_LEVELS]);

/* ---- mrcnn-box.c ---- */

int mrcnn_box_init(struct bd_model *m, struct mrcnn_net *n, struct bd_err *err);
void mrcnn_box_release(struct mrcnn_box *h);
/* the proposals with the ground truth appended, RoI sampling and targets */
int mrcnn_roi_sample(struct mrcnn_net *n, const struct det_batch *b, const struct mrcnn_step *st,
                     struct mrcnn_targets *t, struct bd_err *err);
/* the box head on R RoIs (R, 5) given on the host */
int mrcnn_box_fwd(struct bd_model *m, struct mrcnn_net *n, const float *rois, int64_t R);
/* the box head on the sampled RoIs and its loss */
int mrcnn_box_train(struct bd_model *m, struct mrcnn_net *n, const struct mrcnn_step *st,
                    const struct mrcnn_targets *t, struct mrcnn_losses *out, struct bd_err *err);
/* adds into dH */
int mrcnn_box_bwd(struct bd_model *m, struct mrcnn_net *n, struct bd_tensor *dH[MRCNN_ROI_LEVELS]);

/* ---- mrcnn-mask.c ---- */

int mrcnn_mask_init(struct bd_model *m, struct mrcnn_net *n, struct bd_err *err);
void mrcnn_mask_release(struct mrcnn_mask *h);
/* the mask head on the positive RoIs, their targets and the loss */
int mrcnn_mask_train(struct bd_model *m, struct mrcnn_net *n, const struct det_batch *b,
                     const struct mrcnn_step *st, const struct mrcnn_targets *t, struct mrcnn_losses *out,
                     struct bd_err *err);
/* adds into dH (when the forward had positives) */
int mrcnn_mask_bwd(struct bd_model *m, struct mrcnn_net *n, struct bd_tensor *dH[MRCNN_ROI_LEVELS]);
/* inference: the mask head on the ndet > 0 detections of dets[0..N),
 * their class's probabilities into *ret_probs (ndet, M, M; malloc'ed) */
int mrcnn_mask_detect(struct bd_model *m, struct mrcnn_net *n, const struct det_dets *dets, int N, int64_t ndet,
                      float **ret_probs, struct bd_err *err);
/* mask q of probs pasted at the box (original pixels) into an image of
 * s's original size (img: its work buffer) and encoded as RLE */
int mrcnn_mask_paste(const float *probs, int64_t q, const float *box, const struct det_sample *s, float *img,
                     struct rle *ret);

/* ---- mrcnn-net.c ---- */

/* backbone, FPN, anchors and RPN head on the batch */
int mrcnn_features(struct bd_model *m, struct mrcnn_net *n, const struct det_batch *b);

#endif

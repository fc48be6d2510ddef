/* mrcnn-eval.c: bbox and segm mAP on val2017, every rank on its share,
 * gathered over MPI; and the loaders' setup shared with training.
 *
 * Inference as the reference's: the test preset of the proposals, the box
 * head's post-processing and the masks pasted at the original size
 * (mrcnn_detect); images in id order within each orientation group, the
 * batch test_ims_per_batch / ranks (at least 1).  The detections go to two
 * evaluations as the reference's two results lists: bbox results carry
 * boxes (areas w x h), segm results masks only (areas of the masks).
 * Images that could not be read are left out, as missing ones are.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coco-eval-mpi.h"
#include "mrcnn-run.h"

struct mrcnn_eval {
        struct det_loader *data;
        int64_t *ids;
        size_t nids, cap;
        long nfailed;                   /* images of this evaluation that could not be decoded */
        struct coco_det *det;
        size_t det_cap;
};

int mrcnn_run_loader(struct mrcnn_run *run, enum det_loader_mode mode, int batch, unsigned flags,
                     struct det_loader **ret, struct bd_err *err)
{
        const struct mrcnn_opts *o = &run->o;
        /* the loader keeps the paths: they live as long as the process */
        static char paths[2][2][4096];
        int k = mode == DET_LOADER_EVAL;
        const char *split = k ? "val2017" : "train2017";
        struct det_loader_config c = { .mode = mode, .convention = run->conv, .batch_size = batch,
                                       .min_size = run->min_size, .max_size = run->max_size,
                                       .rank = run->tr.dp.rank, .world = run->tr.dp.size, .seed = o->common.seed,
                                       .threads = o->common.loader_workers > 0 ? o->common.loader_workers : 1,
                                       .flags = flags,
                                       .synthetic_classes = 80, .warn = trainer_warn, .warn_ctx = &run->tr };
        if (mode != DET_LOADER_SYNTHETIC) {
                snprintf(paths[k][0], sizeof(paths[k][0]), "%s/%s", o->common.data, split);
                snprintf(paths[k][1], sizeof(paths[k][1]), "%s/annotations/instances_%s.json", o->common.data, split);
                c.images_dir = paths[k][0];
                c.annotations = paths[k][1];
        }
        return det_loader_open(&c, ret, err);
}

int mrcnn_eval_open(struct mrcnn_run *run, struct mrcnn_eval **ret, struct bd_err *err)
{
        int batch = run->o.test_ims_per_batch / run->tr.dp.size;
        struct det_loader *d;
        int r = mrcnn_run_loader(run, DET_LOADER_EVAL, batch > 0 ? batch : 1, 0, &d, err);
        if (r < 0)
                return r;
        struct mrcnn_eval *ev = xcalloc(1, sizeof(*ev));
        ev->data = d;
        *ret = ev;
        return 0;
}

struct mrcnn_eval *mrcnn_eval_free(struct mrcnn_eval *ev)
{
        if (!ev)
                return NULL;
        det_loader_free(ev->data);
        free(ev->ids);
        free(ev->det);
        free(ev);
        return NULL;
}

long mrcnn_eval_samples(const struct mrcnn_eval *ev)
{
        struct det_loader_stats st;
        det_loader_get_stats(ev->data, &st);
        return st.usable;
}

const struct det_loader *mrcnn_eval_loader(const struct mrcnn_eval *ev)
{
        return ev->data;
}

void mrcnn_box_xywh(const float box[4], int plus_one, double ret[4])
{
        double one = plus_one ? 1 : 0;
        ret[0] = box[0];
        ret[1] = box[1];
        ret[2] = (double)box[2] - box[0] + one;
        ret[3] = (double)box[3] - box[1] + one;
}

static void add_id(struct mrcnn_eval *ev, int64_t id)
{
        if (ev->nids == ev->cap) {
                ev->cap = ev->cap ? 2 * ev->cap : 1024;
                ev->ids = xrealloc(ev->ids, ev->cap * sizeof(*ev->ids));
        }
        ev->ids[ev->nids++] = id;
}

/* one image's detections into both evaluations */
static int add_image(struct mrcnn_eval *ev, struct mrcnn_run *run, const struct mrcnn_dets *d,
                     struct coco_eval *bbox, struct coco_eval *segm, struct bd_err *err)
{
        size_t n = (size_t)d->n;
        if (n > ev->det_cap) {
                ev->det_cap = n;
                ev->det = xrealloc(ev->det, n * sizeof(*ev->det));
        }
        for (size_t j = 0; j < n; j++) {
                struct coco_det *c = &ev->det[j];
                c->image_id = d->image_id;
                c->category_id = det_loader_label_category(ev->data, d->labels[j]);
                c->score = d->scores[j];
                mrcnn_box_xywh(d->boxes + 4 * j, run->cfg.conv.plus_one, c->bbox);
        }
        int r = coco_eval_add(bbox, ev->det, n, err);
        if (r == 0 && segm)
                r = coco_eval_add_masks(segm, ev->det, d->masks, n, err);
        return r;
}

/* inference on this rank's share */
static int infer(struct mrcnn_eval *ev, struct mrcnn_run *run, struct coco_eval *bbox, struct coco_eval *segm,
                 struct bd_err *err)
{
        int r = 0;
        det_loader_seek(ev->data, 0);
        long nb = det_loader_batches_in_epoch(ev->data, 0);
        for (long i = 0; i < nb && r == 0; i++) {
                const struct det_batch *b;
                if ((r = det_loader_next(ev->data, &b, err)) < 0)
                        break;
                struct mrcnn_dets *d = xcalloc((size_t)b->n, sizeof(*d));
                if ((r = mrcnn_detect(run->net, &run->tr.m, b, d, err)) == 0)
                        for (int j = 0; j < b->n; j++) {
                                if (b->samples[j].failed) {
                                        /* left out of the evaluation, as a missing file is */
                                        ev->nfailed++;
                                } else if (r == 0 && (r = add_image(ev, run, &d[j], bbox, segm, err)) == 0)
                                        add_id(ev, b->samples[j].image_id);
                                mrcnn_dets_release(&d[j]);
                        }
                free(d);
        }
        return r;
}

int mrcnn_eval_run(struct mrcnn_eval *ev, struct mrcnn_run *run, double bbox[12], double segm[12],
                   struct bd_err *err)
{
        const struct coco_index *idx = det_loader_index(ev->data);
        int threads = run->tr.be->nthreads > 0 ? run->tr.be->nthreads : 1;
        _cleanup_(coco_eval_freep) struct coco_eval *cb = coco_eval_new_type(idx, COCO_EVAL_BBOX, threads);
        /* without the mask head (Faster R-CNN) boxes only: segm is NaN */
        _cleanup_(coco_eval_freep) struct coco_eval *cs =
                run->cfg.masks ? coco_eval_new_type(idx, COCO_EVAL_SEGM, threads) : NULL;
        ev->nids = 0;
        ev->nfailed = 0;
        int r = infer(ev, run, cb, cs, err);
        /* collective too; each bad image was reported as the loader met it */
        long n[2] = { (long)ev->nids, ev->nfailed };
        MPI_Allreduce(MPI_IN_PLACE, n, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (r == 0 && n[0] == 0 && n[1] > 0)
                r = bd_err_set(err, -EINVAL, "evaluation: none of the %ld validation images in %s/val2017 could be "
                               "decoded", n[1], run->o.common.data);
        if (r == 0 && (r = coco_eval_images(cb, ev->ids, ev->nids, err)) == 0 && cs)
                r = coco_eval_images(cs, ev->ids, ev->nids, err);
        /* the gathers are collective: a rank that failed takes part with what it has */
        struct bd_err gerr;
        int rr = coco_eval_gather_stats(cb, MPI_COMM_WORLD, 0, bbox, &gerr);
        if (rr == 0 && cs)
                rr = coco_eval_gather_stats(cs, MPI_COMM_WORLD, 0, segm, &gerr);
        for (int i = 0; !cs && i < 12; i++)
                segm[i] = NAN;
        if (r == 0 && rr < 0) {
                *err = gerr;
                r = rr;
        }
        return r;
}

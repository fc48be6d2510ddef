/* ssd-eval.c: bbox mAP on val2017, every rank on its share, gathered over MPI.
 *
 * Inference as the reference's evaluation: resize to the model size (no
 * augmentation), batch norm with its running statistics (the same on every
 * rank: bd_dp_finish averages them each step), decoding and NMS per image
 * (ssd-boxes.h) on host threads, boxes scaled to the original image as
 * [l W, t H, (r - l) W, (b - t) H].  Images that could not be read count with
 * no detections.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "coco-eval-mpi.h"
#include "ssd-data.h"
#include "ssd-run.h"

struct ssd_eval {
        struct ssd_data *data;
        struct ssd_nms_cfg nms;
        struct ssd_decoder *dec;        /* one per thread */
        int ndec;
        float *hloc, *hconf;            /* host copies (CUDA) */
        struct ssd_det *det;            /* (batch, max_out) */
        int *ndet;
        int64_t *ids;
        size_t nids, cap;
        long nfailed;                   /* images of this evaluation that could not be decoded: left out */
        int batch;
};

int ssd_eval_open(struct ssd_run *run, struct ssd_eval **ret, struct bd_err *err)
{
        const struct ssd_opts *o = &run->o;
        struct ssd_data_cfg c = { .mode = SSD_DATA_EVAL, .dir = o->common.data, .batch_size = o->batch_size,
                                  .image_size = o->image_size, .rank = run->tr.dp.rank, .world = run->tr.dp.size,
                                  .seed = o->common.seed,
                                  .threads = o->common.loader_workers > 0 ? o->common.loader_workers : 1,
                                  .warn = trainer_warn, .warn_ctx = &run->tr };
        struct ssd_data *d;
        int r = ssd_data_open(&c, &d, err);
        if (r < 0)
                return r;
        struct ssd_eval *ev = xcalloc(1, sizeof(*ev));
        ev->data = d;
        ev->batch = o->batch_size;
        ssd_nms_cfg_init(&ev->nms);
        *ret = ev;
        return 0;
}

struct ssd_eval *ssd_eval_free(struct ssd_eval *ev)
{
        if (!ev)
                return NULL;
        ssd_data_free(ev->data);
        for (int i = 0; i < ev->ndec; i++)
                ssd_decoder_release(&ev->dec[i]);
        free(ev->dec);
        free(ev->hloc);
        free(ev->hconf);
        free(ev->det);
        free(ev->ndet);
        free(ev->ids);
        free(ev);
        return NULL;
}

long ssd_eval_samples(const struct ssd_eval *ev)
{
        return ssd_data_usable(ev->data);
}

int ssd_eval_labels(const struct ssd_eval *ev)
{
        return ssd_data_labels(ev->data);
}

int32_t ssd_eval_category(const struct ssd_eval *ev, int label)
{
        return ssd_data_category(ev->data, label);
}

static void add_id(struct ssd_eval *ev, int64_t id)
{
        if (ev->nids == ev->cap) {
                ev->cap = ev->cap ? 2 * ev->cap : 1024;
                ev->ids = xrealloc(ev->ids, ev->cap * sizeof(*ev->ids));
        }
        ev->ids[ev->nids++] = id;
}

/* detections of one batch into the evaluation */
static int add_batch(struct ssd_eval *ev, struct ssd_run *run, const struct ssd_batch *b,
                     struct coco_eval *ce, struct bd_err *err)
{
        struct bd_backend *be = run->tr.be;
        const int64_t B = run->net.nboxes, K = run->K;
        const float *loc = run->ploc->data, *conf = run->plabel->data;
        int r;
        if (be->dev != BD_CPU) {
                if ((r = be->ops->copy(be, ev->hloc, BD_CPU, run->ploc->data, be->dev,
                                       (size_t)b->n * (size_t)B * 4 * sizeof(float))) < 0 ||
                    (r = be->ops->copy(be, ev->hconf, BD_CPU, run->plabel->data, be->dev,
                                       (size_t)b->n * (size_t)(B * K) * sizeof(float))) < 0 ||
                    (r = be->ops->sync(be)) < 0)
                        return bd_err_set(err, r, "evaluation: %s", be->err.msg);
                loc = ev->hloc;
                conf = ev->hconf;
        }
#pragma omp parallel for schedule(dynamic, 1) num_threads(ev->ndec)
        for (int i = 0; i < b->n; i++) {
                int t = 0;
#ifdef _OPENMP
                t = omp_get_thread_num() % ev->ndec;
#endif
                ev->ndet[i] = b->failed[i] ? 0
                                                   : ssd_decode(&ev->dec[t], &run->net.dboxes, &ev->nms, loc + i * B * 4,
                                                                conf + i * B * K, ev->det + (size_t)i * ev->nms.max_out);
        }
        for (int i = 0; i < b->n; i++) {
                if (b->failed[i]) {
                        /* left out of the evaluation, as a missing file is */
                        ev->nfailed++;
                        continue;
                }
                double W = b->sizes[2 * i], H = b->sizes[2 * i + 1];
                struct coco_det d[256];
                int n = ev->ndet[i] < 256 ? ev->ndet[i] : 256;
                for (int j = 0; j < n; j++) {
                        const struct ssd_det *s = &ev->det[(size_t)i * ev->nms.max_out + j];
                        d[j] = (struct coco_det){ .image_id = b->image_ids[i],
                                                  .category_id = ssd_data_category(ev->data, s->label),
                                                  .bbox = { s->box[0] * W, s->box[1] * H, (s->box[2] - s->box[0]) * W,
                                                            (s->box[3] - s->box[1]) * H },
                                                  .score = s->score };
                }
                if ((r = coco_eval_add(ce, d, (size_t)n, err)) < 0)
                        return r;
                add_id(ev, b->image_ids[i]);
        }
        return 0;
}

/* scratch sized by the network, made at the first evaluation */
static void alloc_scratch(struct ssd_eval *ev, struct ssd_run *run)
{
        /* a decoder per thread of the loop that decodes, which on CUDA is
         * not the backend's one thread (all of them shared decoder 0) */
        ev->ndec = run->tr.be->nthreads > 0 ? run->tr.be->nthreads : 1;
#ifdef _OPENMP
        if (omp_get_max_threads() > ev->ndec)
                ev->ndec = omp_get_max_threads();
#endif
        ev->dec = xcalloc((size_t)ev->ndec, sizeof(*ev->dec));
        for (int i = 0; i < ev->ndec; i++)
                ssd_decoder_init(&ev->dec[i], run->net.nboxes, run->K, &ev->nms);
        ev->det = xmalloc((size_t)ev->batch * (size_t)ev->nms.max_out * sizeof(*ev->det));
        ev->ndet = xcalloc((size_t)ev->batch, sizeof(int));
        if (run->tr.be->dev != BD_CPU) {
                ev->hloc = xmalloc((size_t)ev->batch * (size_t)run->net.nboxes * 4 * sizeof(float));
                ev->hconf = xmalloc((size_t)ev->batch * (size_t)run->net.nboxes * (size_t)run->K * sizeof(float));
        }
}

int ssd_eval_run(struct ssd_eval *ev, struct ssd_run *run, double stats[12], struct bd_err *err)
{
        int r = 0, rr;
        if (!ev->dec)
                alloc_scratch(ev, run);
        _cleanup_(coco_eval_freep) struct coco_eval *ce = coco_eval_new(ssd_data_index(ev->data), run->tr.be->nthreads);
        ev->nids = 0;
        ev->nfailed = 0;
        run->tr.m.training = 0;
        long nb = ssd_data_batches(ev->data);
        for (long i = 0; i < nb && r == 0; i++) {
                struct ssd_batch b;
                if ((r = ssd_data_next(ev->data, &b, err)) < 0)
                        break;
                if ((r = ssd_run_forward(run, b.images, b.n)) < 0) {
                        bd_err_set(err, r, "evaluation: %s", run->tr.be->err.msg);
                        break;
                }
                r = add_batch(ev, run, &b, ce, err);
        }
        run->tr.m.training = 1;
        /* collective too; each bad image was reported as the loader met it */
        long n[2] = { (long)ev->nids, ev->nfailed };
        MPI_Allreduce(MPI_IN_PLACE, n, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (r == 0 && n[0] == 0 && n[1] > 0)
                r = bd_err_set(err, -EINVAL, "evaluation: none of the %ld validation images in %s/val2017 could be "
                               "decoded", n[1], run->o.common.data);
        if (r == 0)
                r = coco_eval_images(ce, ev->ids, ev->nids, err);
        /* the gather is collective: a rank that failed takes part with what it has */
        struct bd_err gerr;
        rr = coco_eval_gather_stats(ce, MPI_COMM_WORLD, 0, stats, &gerr);
        if (r == 0 && rr < 0) {
                *err = gerr;
                r = rr;
        }
        return r;
}

/* mrcnn-train.c: benchd-maskrcnn, the Mask R-CNN trainer: its parts of the
 * trainers' skeleton (trainer.h), which runs them in order.
 *
 *   init      MPI, backend, loaders (train2017 and val2017 shares of this
 *             rank), the network (mrcnn-net.h), rank 0's initial weights
 *             broadcast, optional pretrained backbone and checkpoint
 *   per step  training forward and the five losses, backward with the
 *             gradient allreduce in buckets, SGD (warmup, bias lr factor,
 *             decay, clipping by global norm)
 *   per epoch a checkpoint (--checkpoint; also every --checkpoint-interval
 *             steps), evaluation bbox + segm on all ranks (or at
 *             --eval-iters), stop when both targets are met
 *
 * Iterations, as the reference's (maskrcnn-benchmark with the MLPerf
 * changes): --max-iter, or --epochs x iters_per_epoch where
 * iters_per_epoch = len(train) // global batch + 1; an "epoch" of the log
 * and of the evaluations is iters_per_epoch steps.  The loaders' own
 * epochs (a permutation each, grouped by orientation, with a batch count
 * that varies between epochs and ranks) flow on underneath: every rank takes
 * its next batch each step, as the reference's IterationBasedBatchSampler.
 * The scheduler steps before each forward (first_iter 1).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mllog.h"
#include "mrcnn-run.h"
#include "workload.h"

struct train {
        struct mrcnn_run run;
        struct det_loader *loader;
        struct mrcnn_eval *eval;
        long local_batch;
        int64_t iters_per_epoch, max_iter;
        const struct det_batch *batch;  /* the step's */
        struct mrcnn_losses losses;     /* its losses averaged over the ranks */
};

static struct train *train_of(struct trainer *tr)
{
        return container_of(tr, struct train, run.tr);
}

static int mrcnn_parse(struct trainer *tr, int argc, char **argv, FILE *out, struct bd_err *err)
{
        const struct mrcnn_opts *o = &train_of(tr)->run.o;
        int r = mrcnn_opts_parse(argc, argv, &train_of(tr)->run.o, out, err);
        /* without the mask head it is Faster R-CNN: its MLPerf lines name
         * that workload's benchmark (workloads/fasterrcnn.json) */
        const struct workload *w = workload_find("fasterrcnn");
        if (r == 0 && o->ov_given[MRCNN_OV_MASKS] && o->ov[MRCNN_OV_MASKS] == 0 && w)
                tr->benchmark = w->mlperf_name;
        return r;
}

static int mrcnn_setup(struct trainer *tr, struct bd_err *err)
{
        struct train *t = train_of(tr);
        struct mrcnn_run *run = &t->run;
        const struct mrcnn_opts *o = &run->o;
        if (o->ims_per_batch % tr->dp.size != 0)
                return bd_err_set(err, -EINVAL, "--ims-per-batch %d is not a multiple of the %d ranks", o->ims_per_batch,
                                  tr->dp.size);
        tr->global_batch = o->ims_per_batch;
        t->local_batch = o->ims_per_batch / tr->dp.size;
        run->conv = o->mode == DET_CONV_MLPERF ? DET_MLPERF : DET_TORCHVISION;
        mrcnn_opts_sizes(o, &run->min_size, &run->max_size);
        return 0;
}

static int mrcnn_open_data(struct trainer *tr, struct bd_err *err)
{
        struct train *t = train_of(tr);
        struct mrcnn_run *run = &t->run;
        const struct mrcnn_opts *o = &run->o;
        int r = mrcnn_run_loader(run, o->common.synthetic ? DET_LOADER_SYNTHETIC : DET_LOADER_TRAIN,
                                 (int)t->local_batch, 0, &t->loader, err);
        if (r < 0)
                return r;
        struct det_loader_stats st;
        det_loader_get_stats(t->loader, &st);
        tr->train_size = st.usable;
        /* the reference's rule (len(dataset) // GBS + 1) */
        t->iters_per_epoch = tr->train_size / tr->global_batch + 1;
        t->max_iter = o->max_iter ? o->max_iter : (int64_t)o->epochs * t->iters_per_epoch;
        if (tbench_on(&tr->bench))      /* exactly the warmup and the timed steps */
                t->max_iter = tbench_total(&tr->bench);
        run->K = det_loader_num_labels(t->loader) + 1;
        if (o->common.synthetic || o->common.benchmark_steps)
                return 0;
        if ((r = mrcnn_eval_open(run, &t->eval, err)) < 0)
                return r;
        tr->eval_samples = mrcnn_eval_samples(t->eval);
        const struct det_loader *ev = mrcnn_eval_loader(t->eval);
        if (det_loader_num_labels(ev) != run->K - 1)
                return bd_err_set(err, -EINVAL, "%s: val2017 has %d categories, train2017 %d", o->common.data,
                                  det_loader_num_labels(ev), run->K - 1);
        for (int k = 1; k < run->K; k++)
                if (det_loader_label_category(ev, k) != det_loader_label_category(t->loader, k))
                        return bd_err_set(err, -EINVAL, "%s: the categories of val2017 and train2017 differ (label %d)",
                                          o->common.data, k);
        return 0;
}

static int mrcnn_build_model(struct trainer *tr, struct bd_err *err)
{
        struct mrcnn_run *run = &train_of(tr)->run;
        const struct mrcnn_opts *o = &run->o;
        struct mrcnn_cfg *c = &run->cfg;
        int r;
        if ((r = mrcnn_opts_model(o, run->K, c, err)) < 0)
                return r;
        c->amp = o->common.amp;        /* the backbone, FPN and RPN head in half precision (mrcnn-net.h) */
        if ((r = mrcnn_net_new(&tr->m, c, &run->net, err)) < 0)
                return r;
        snprintf(tr->model_name, sizeof(tr->model_name), "%s-%s-r%d-w%g-f%d-bn%d-k%d-d%d-%d",
                 c->masks ? "maskrcnn" : "fasterrcnn", c->mode == DET_CONV_MLPERF ? "mlperf" : "tv", c->depth,
                 c->width_mult, c->fpn_channels, c->frozen_bn, run->K, c->box_rep, c->masks ? c->mask_dim : 0);
        return 0;
}

static int mrcnn_optimizer(struct trainer *tr, struct bd_err *err)
{
        struct train *t = train_of(tr);
        struct mrcnn_run *run = &t->run;
        const struct mrcnn_opts *o = &run->o;
        struct bd_sgd_cfg c = { .lr = o->lr, .momentum = 0.9, .weight_decay = o->weight_decay,
                                .warmup = o->warmup_method, .warmup_factor = o->warmup_factor,
                                .warmup_iters = o->warmup_iters, .first_iter = 1,
                                .bias_lr_factor = run->cfg.bias_lr_factor, .gamma = 0.1,
                                .clip_norm = o->clip_gradient, .loss_scaling = o->common.amp };
        if (o->ndecay_epochs)
                for (int i = 0; i < o->ndecay_epochs; i++)
                        c.milestones[c.nmilestones++] = (int64_t)o->decay_epochs[i] * t->iters_per_epoch;
        else
                for (int i = 0; i < o->ndecay_steps; i++)
                        c.milestones[c.nmilestones++] = o->decay_steps[i];
        return bd_sgd_init(&tr->sgd, &tr->m, &c, err);
}

/* Puts this rank's loader where the stream stood after step batches: each
 * rank counts its own batches (they vary), seeks to the loader epoch and
 * skips what it had taken of it (decoded and dropped: a resumed run takes
 * the same batches as one never stopped). */
static int seek_loader(struct train *t, int64_t step, struct bd_err *err)
{
        long e = 0;
        int64_t left = step;
        for (long nb; left >= (nb = det_loader_batches_in_epoch(t->loader, e)); e++)
                left -= nb;
        det_loader_seek(t->loader, e);
        for (int64_t i = 0; i < left; i++) {
                const struct det_batch *b;
                int r = det_loader_next(t->loader, &b, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int mrcnn_resume(struct trainer *tr, const struct bd_ckpt_meta *meta, struct bd_err *err)
{
        struct train *t = train_of(tr);
        int r;
        if (meta->iter != tr->sgd.iter || meta->iter < 0 || meta->iter > t->max_iter)
                return bd_err_set(err, -EINVAL, "checkpoint '%s': step %lld, beyond this run's %lld steps",
                                  tr->ckpt_path, (long long)meta->iter, (long long)t->max_iter);
        if ((r = seek_loader(t, meta->iter, err)) < 0)
                return r;
        if (tr->dp.rank == 0)
                printf("# resumed from '%s' at step %lld (epoch %lld)\n", tr->ckpt_path, (long long)meta->iter,
                       (long long)(meta->iter / t->iters_per_epoch + 1));
        return 0;
}

static void mrcnn_header(struct trainer *tr)
{
        const struct train *t = train_of(tr);
        const struct mrcnn_run *run = &t->run;
        const struct mrcnn_opts *o = &run->o;
        const struct mrcnn_cfg *c = &run->cfg;
        printf("# %s %s: %d ranks x %ld images, %s backend (%d threads), %s, %s mode, resnet%d (width "
               "%g), FPN %d, %dx%d..%d, %d classes, %lld parameters%s\n", tr->prog, PACKAGE_VERSION, tr->dp.size,
               t->local_batch, tr->be->ops->name, tr->be->nthreads, o->common.amp ? "amp" : "fp32",
               c->mode == DET_CONV_MLPERF ? "mlperf" : "torchvision", c->depth, c->width_mult, c->fpn_channels,
               run->min_size, run->min_size, run->max_size, run->K, (long long)tr->m.n_train,
               c->masks ? "" : ", no mask head (Faster R-CNN)");
        printf("# %ld training images, %lld iterations per epoch (len // %ld + 1), %lld iterations, lr %g, "
               "%lld warmup iterations, seed %llu\n", tr->train_size, (long long)t->iters_per_epoch,
               tr->global_batch, (long long)t->max_iter, o->lr, (long long)o->warmup_iters,
               (unsigned long long)o->common.seed);
        if (o->common.amp)
                printf("# amp: backbone, FPN and RPN head in half precision, heads and losses in float32, "
                       "dynamic loss scaling\n");
        fflush(stdout);
}

static const char *int_list(const int64_t *v, int n)
{
        static char b[512];
        size_t at = (size_t)snprintf(b, sizeof(b), "[");
        for (int i = 0; i < n && at < sizeof(b) - 32; i++)
                at += (size_t)snprintf(b + at, sizeof(b) - at, "%s%lld", i ? ", " : "", (long long)v[i]);
        snprintf(b + at, sizeof(b) - at, "]");
        return b;
}

static void mrcnn_log_config(struct trainer *tr)
{
        const struct mrcnn_run *run = &train_of(tr)->run;
        const struct mrcnn_opts *o = &run->o;
        MLLOG_EVENT("gradient_accumulation_steps", mllog_int(1), NULL);
        /* FPN_POST_NMS_TOP_N_TRAIN, as the reference logs it */
        MLLOG_EVENT("num_image_candidates", mllog_int(run->cfg.rpn_post_nms_top_n_train), NULL);
        MLLOG_EVENT("min_image_size", mllog_int(run->min_size), NULL);
        MLLOG_EVENT("max_image_size", mllog_int(run->max_size), NULL);
        MLLOG_EVENT("opt_base_learning_rate", mllog_num(o->lr), NULL);
        MLLOG_EVENT("opt_weight_decay", mllog_num(o->weight_decay), NULL);
        MLLOG_EVENT("opt_learning_rate_warmup_steps", mllog_int(o->warmup_iters), NULL);
        MLLOG_EVENT("opt_learning_rate_warmup_factor", mllog_num(o->warmup_factor), NULL);
        MLLOG_EVENT("opt_learning_rate_decay_factor", mllog_num(0.1), NULL);
        MLLOG_EVENT("opt_learning_rate_decay_steps", int_list(tr->sgd.cfg.milestones, tr->sgd.cfg.nmilestones), NULL);
}

/* --inject-nan: a diverged model, NaN in the RPN's objectness bias */
static int poison(struct trainer *tr)
{
        int id = bd_model_find(&tr->m, "rpn.head.cls_logits.bias");
        if (id < 0)
                return -ENOENT;
        struct bd_tensor p = bd_model_param(&tr->m, id);
        size_t n = bd_tensor_bytes(&p) / sizeof(float);
        float *v = xmalloc(n * sizeof(float));
        for (size_t i = 0; i < n; i++)
                v[i] = NAN;
        tr->m.version++;
        int r = tr->be->ops->copy(tr->be, p.data, p.dev, v, BD_CPU, n * sizeof(float));
        free(v);
        return r;
}

static int mrcnn_next(struct trainer *tr, struct bd_err *err)
{
        struct train *t = train_of(tr);
        return det_loader_next(t->loader, &t->batch, err);
}

/* The forward and the losses; t->losses: the five losses and their total
 * averaged over the ranks (the loss of the global batch). */
static int mrcnn_forward(struct trainer *tr, int64_t step, bool nan, double *loss, long *images, struct bd_err *err)
{
        struct train *t = train_of(tr);
        struct mrcnn_run *run = &t->run;
        struct mrcnn_losses *L = &t->losses;
        const struct det_batch *b = t->batch;
        int r;
        if (nan && (r = poison(tr)) < 0)
                return bd_err_set(err, r, "--inject-nan: %s", tr->be->err.msg);
        struct mrcnn_step st = { .seed = run->o.common.seed, .step = (uint64_t)step,
                                 .image_base = (int64_t)tr->dp.rank * t->local_batch,
                                 .gscale = run->o.common.amp ? tr->sgd.loss_scale : 1.0, .dp = &tr->dp };
        if ((r = mrcnn_fwd_train(run->net, &tr->m, b, &st, L, err)) < 0)
                return r;
        /* with the images of every rank's batch (the last of a group may be short) */
        double v[7] = { L->objectness, L->rpn_box, L->classifier, L->box_reg, L->mask, L->total, b->n };
        if ((r = bd_dp_sum(&tr->dp, v, 7, err)) < 0)
                return r;
        *images = (long)v[6];
        *L = (struct mrcnn_losses){ .objectness = v[0] / tr->dp.size, .rpn_box = v[1] / tr->dp.size,
                                    .classifier = v[2] / tr->dp.size, .box_reg = v[3] / tr->dp.size,
                                    .mask = v[4] / tr->dp.size, .total = v[5] / tr->dp.size };
        *loss = L->total;
        return 0;
}

static int mrcnn_backward(struct trainer *tr, struct bd_err *err)
{
        return mrcnn_bwd(train_of(tr)->run.net, &tr->m, err);
}

static int mrcnn_evaluate(struct trainer *tr, int64_t step, long epoch, struct trainer_eval *ev, struct bd_err *err)
{
        struct train *t = train_of(tr);
        const struct mrcnn_opts *o = &t->run.o;
        double bbox[12], segm[12];
        int r = mrcnn_eval_run(t->eval, &t->run, bbox, segm, err);
        if (r < 0)
                return r;
        if (!t->run.cfg.masks) {
                /* Faster R-CNN: boxes, the bbox target alone */
                snprintf(ev->accuracy, sizeof(ev->accuracy), "{\"BBOX\": %s}", mllog_num(bbox[0]));
                snprintf(ev->line, sizeof(ev->line), "step %lld (epoch %ld): bbox mAP %.4f (AP50 %.4f, AP75 %.4f), "
                         "target %.4f", (long long)step, epoch, bbox[0], bbox[1], bbox[2], o->target_map_bbox);
                ev->reached = bbox[0] >= o->target_map_bbox;
                return 0;
        }
        snprintf(ev->accuracy, sizeof(ev->accuracy), "{\"BBOX\": %s, \"SEGM\": %s}", mllog_num(bbox[0]),
                 mllog_num(segm[0]));
        snprintf(ev->line, sizeof(ev->line), "step %lld (epoch %ld): bbox mAP %.4f (AP50 %.4f, AP75 %.4f), segm mAP "
                 "%.4f (AP50 %.4f, AP75 %.4f), targets %.4f and %.4f", (long long)step, epoch, bbox[0], bbox[1],
                 bbox[2], segm[0], segm[1], segm[2], o->target_map_bbox, o->target_map_segm);
        ev->reached = bbox[0] >= o->target_map_bbox && segm[0] >= o->target_map_segm;
        return 0;
}

static int contains(const int64_t *v, int n, int64_t x)
{
        for (int i = 0; i < n; i++)
                if (v[i] == x)
                        return 1;
        return 0;
}

/* The loop: steps sgd.iter + 1 .. max_iter in epochs of iters_per_epoch
 * steps, one block each; checkpoints at each epoch's end (and every
 * --checkpoint-interval steps), evaluations there too (or at --eval-iters). */
static enum run_end mrcnn_train(struct trainer *tr, struct bd_err *err)
{
        struct train *t = train_of(tr);
        const struct mrcnn_opts *o = &t->run.o;
        const int64_t ipe = t->iters_per_epoch;
        const int64_t first = tr->sgd.iter;    /* after a checkpoint: maybe within an epoch */
        enum run_end end;
        int64_t step = first;
        while (step < t->max_iter) {
                long epoch = (long)(step / ipe) + 1;
                int64_t epoch_last = (int64_t)epoch * ipe;
                char meta[96];
                if (step % ipe == 0 || step == first) {
                        snprintf(meta, sizeof(meta), "\"first_epoch_num\": %ld, \"epoch_count\": 1", epoch);
                        MLLOG_START("block_start", NULL, meta);
                        trainer_epoch_begin(tr, epoch);
                }
                if (!trainer_step(tr, ++step, epoch, &end, err))
                        return end;
                bool end_epoch = step == epoch_last || step == t->max_iter || trainer_max_steps(tr, step);
                if (trainer_progress_due(tr, step, end_epoch)) {
                        const struct mrcnn_losses *L = &t->losses;
                        char head[200], mask[32] = "";
                        if (t->run.cfg.masks)
                                snprintf(mask, sizeof(mask), ", mask %.5f", L->mask);
                        snprintf(head, sizeof(head), "epoch %ld step %lld/%lld: loss %.5f (objectness %.5f, rpn_box "
                                 "%.5f, classifier %.5f, box_reg %.5f%s)", epoch, (long long)step,
                                 (long long)t->max_iter, L->total, L->objectness, L->rpn_box, L->classifier,
                                 L->box_reg, mask);
                        trainer_progress(tr, head);
                }
                if (step == epoch_last || (o->checkpoint_interval && step % o->checkpoint_interval == 0))
                        trainer_checkpoint(tr, step, step / ipe);
                if (end_epoch) {
                        snprintf(meta, sizeof(meta), "\"first_epoch_num\": %ld", epoch);
                        trainer_epoch_end(tr, epoch, meta);
                }
                /* at each epoch's end and the last step, or at --eval-iters */
                bool eval_now = o->neval ? contains(o->eval_iters, o->neval, step)
                                         : step == epoch_last || step == t->max_iter;
                if (t->eval && eval_now && !trainer_evaluate(tr, step, epoch, &end, err))
                        return end;
                if (trainer_max_steps(tr, step))
                        break;
        }
        return trainer_schedule_end(tr, step, (long)((step + ipe - 1) / ipe), t->eval != NULL, err);
}

static void mrcnn_report(struct trainer *tr, bool reached)
{
        const struct mrcnn_run *run = &train_of(tr)->run;
        const struct mrcnn_opts *o = &run->o;
        if (!run->cfg.masks)
                printf("# target %s: bbox mAP >= %.4f\n", reached ? "reached" : "not reached", o->target_map_bbox);
        else
                printf("# targets %s: bbox mAP >= %.4f and segm mAP >= %.4f\n", reached ? "reached" : "not reached",
                       o->target_map_bbox, o->target_map_segm);
}

static void mrcnn_release(struct trainer *tr)
{
        struct train *t = train_of(tr);
        t->eval = mrcnn_eval_free(t->eval);
        t->loader = det_loader_free(t->loader);
        t->run.net = mrcnn_net_free(t->run.net);
}

/* an ImageNet ResNet: its classifier is not part of Mask R-CNN */
static const char *const pretrained_unused[] = { "fc.", NULL };

static const struct trainer_ops mrcnn_trainer = {
        .workload = "maskrcnn",
        .checkpoint = "maskrcnn.ckpt",
        .pretrained_prefix = "backbone.body.",
        .pretrained_unused = pretrained_unused,
        .parse = mrcnn_parse,
        .setup = mrcnn_setup,
        .open_data = mrcnn_open_data,
        .build_model = mrcnn_build_model,
        .optimizer = mrcnn_optimizer,
        .resume = mrcnn_resume,
        .header = mrcnn_header,
        .log_config = mrcnn_log_config,
        .train = mrcnn_train,
        .next = mrcnn_next,
        .forward = mrcnn_forward,
        .backward = mrcnn_backward,
        .evaluate = mrcnn_evaluate,
        .report = mrcnn_report,
        .release = mrcnn_release,
};

int main(int argc, char **argv)
{
        static struct train t;
        t.run.tr.opt = &t.run.o.common;
        return trainer_main(&t.run.tr, &mrcnn_trainer, argc, argv);
}

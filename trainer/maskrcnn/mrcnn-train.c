/* mrcnn-train.c: benchd-maskrcnn, the Mask R-CNN trainer.
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
 *
 * Rank 0 prints progress lines and the MLPerf log; a non-finite loss on any
 * rank stops every rank with run_stop status "aborted" and exit status 1.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "mllog.h"
#include "mrcnn-run.h"
#include "tbench.h"
#include "trun.h"





struct train {
        struct mrcnn_run run;
        struct det_loader *loader;
        struct mrcnn_eval *eval;
        struct bd_sgd sgd;
        long train_size, global_batch, local_batch;
        int64_t iters_per_epoch, max_iter;
        char ckpt_path[4096];
        char model_name[64];
        struct tbench bench;            /* throughput mode */
        int fail_r;                     /* the errno of a failed step */
        double last_loss;
};

static int open_data(struct train *t, struct bd_err *err)
{
        struct mrcnn_run *run = &t->run;
        const struct mrcnn_opts *o = &run->o;
        int r;
        t->global_batch = o->ims_per_batch;
        t->local_batch = o->ims_per_batch / run->dp.size;
        r = mrcnn_run_loader(run, o->common.synthetic ? DET_LOADER_SYNTHETIC : DET_LOADER_TRAIN, (int)t->local_batch, 0,
                             &t->loader, err);
        if (r < 0)
                return r;
        struct det_loader_stats st;
        det_loader_get_stats(t->loader, &st);
        t->train_size = st.usable;
        /* the reference's rule (len(dataset) // GBS + 1) */
        t->iters_per_epoch = t->train_size / t->global_batch + 1;
        t->max_iter = o->max_iter ? o->max_iter : (int64_t)o->epochs * t->iters_per_epoch;
        if (tbench_on(&t->bench))       /* exactly the warmup and the timed steps */
                t->max_iter = tbench_total(&t->bench);
        run->K = det_loader_num_labels(t->loader) + 1;
        if (o->common.synthetic || o->common.benchmark_steps)
                return 0;
        if ((r = mrcnn_eval_open(run, &t->eval, err)) < 0)
                return r;
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

static int build_model(struct train *t, struct bd_err *err)
{
        struct mrcnn_run *run = &t->run;
        const struct mrcnn_opts *o = &run->o;
        struct mrcnn_cfg *c = &run->cfg;
        int r;
        if ((r = mrcnn_opts_model(o, run->K, c, err)) < 0)
                return r;
        c->amp = o->common.amp;        /* the backbone, FPN and RPN head in half precision (mrcnn-net.h) */
        bd_model_init(&run->m, run->be, BD_F32);
        run->m.training = 1;
        if ((r = mrcnn_net_new(&run->m, c, &run->net, err)) < 0 || (r = bd_model_finalize(&run->m, err)) < 0 ||
            (r = bd_model_init_params(&run->m, o->common.seed, err)) < 0)
                return r;
        if (o->common.pretrained) {
                /* an ImageNet ResNet: its classifier is not part of Mask R-CNN */
                static const char *const unused[] = { "fc.", NULL };
                struct bd_weights_report rep;
                if ((r = bd_weights_load(o->common.pretrained, &run->m, "backbone.body.", unused,
                                         BD_WEIGHTS_STRICT | BD_WEIGHTS_COMPLETE, &rep, err)) < 0)
                        return r;
                if (rep.loaded == 0)
                        return bd_err_set(err, -EINVAL, "pretrained '%s': no tensor matches the backbone",
                                          o->common.pretrained);
                if (run->dp.rank == 0)
                        printf("# pretrained backbone: %d tensors from '%s' (%s), %d not used\n", rep.loaded,
                               o->common.pretrained, rep.source, rep.skipped);
        }
        snprintf(t->model_name, sizeof(t->model_name), "maskrcnn-%s-r%d-w%g-f%d-bn%d-k%d-d%d-%d",
                 c->mode == DET_CONV_MLPERF ? "mlperf" : "tv", c->depth, c->width_mult, c->fpn_channels,
                 c->frozen_bn, run->K, c->box_rep, c->mask_dim);
        return 0;
}

static int open_backend(struct train *t, struct bd_err *err)
{
        struct mrcnn_run *run = &t->run;
        return bd_backend_new(run->o.common.cuda ? "cuda" : "cpu", run->dp.local_rank, run->o.common.threads, &run->be,
                              err);
}

static int setup_optimizer(struct train *t, struct bd_err *err);

/* the model on every rank as rank 0's, the data-parallel hooks, the optimiser */
static int attach(struct train *t, struct bd_err *err)
{
        struct mrcnn_run *run = &t->run;
        int r = bd_dp_attach(&run->dp, &run->m, 16u << 20, err);
        if (r >= 0)
                r = bd_dp_broadcast_params(&run->dp, err);
        if (r >= 0)
                r = setup_optimizer(t, err);
        return r;
}

static int setup_optimizer(struct train *t, struct bd_err *err)
{
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
        return bd_sgd_init(&t->sgd, &run->m, &c, err);
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

static int resume(struct train *t, struct bd_err *err)
{
        struct mrcnn_run *run = &t->run;
        struct bd_ckpt_meta meta;
        int r = trun_resume(run->o.common.checkpoint, "maskrcnn.ckpt", t->model_name, &run->m, &t->sgd, t->ckpt_path,
                            sizeof(t->ckpt_path), &meta, err);
        if (r <= 0)
                return r;
        if (meta.iter != t->sgd.iter || meta.iter < 0 || meta.iter > t->max_iter)
                return bd_err_set(err, -EINVAL, "checkpoint '%s': step %lld, beyond this run's %lld steps",
                                  t->ckpt_path, (long long)meta.iter, (long long)t->max_iter);
        if ((r = seek_loader(t, meta.iter, err)) < 0)
                return r;
        if (run->dp.rank == 0)
                printf("# resumed from '%s' at step %lld (epoch %lld)\n", t->ckpt_path, (long long)meta.iter,
                       (long long)(meta.iter / t->iters_per_epoch + 1));
        return 0;
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

static void log_config(const struct train *t)
{
        const struct mrcnn_run *run = &t->run;
        const struct mrcnn_opts *o = &run->o;
        MLLOG_EVENT("seed", mllog_int((long long)o->common.seed), NULL);
        MLLOG_EVENT("global_batch_size", mllog_int(t->global_batch), NULL);
        MLLOG_EVENT("train_samples", mllog_int(t->train_size), NULL);
        MLLOG_EVENT("eval_samples", mllog_int(t->eval ? mrcnn_eval_samples(t->eval) : 0), NULL);
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
        MLLOG_EVENT("opt_learning_rate_decay_steps", int_list(t->sgd.cfg.milestones, t->sgd.cfg.nmilestones), NULL);
}

/* --inject-nan: a diverged model, NaN in the RPN's objectness bias */
static int poison(struct mrcnn_run *run)
{
        int id = bd_model_find(&run->m, "rpn.head.cls_logits.bias");
        if (id < 0)
                return -ENOENT;
        struct bd_tensor p = bd_model_param(&run->m, id);
        size_t n = bd_tensor_bytes(&p) / sizeof(float);
        float *v = xmalloc(n * sizeof(float));
        for (size_t i = 0; i < n; i++)
                v[i] = NAN;
        run->m.version++;
        int r = run->be->ops->copy(run->be, p.data, p.dev, v, BD_CPU, n * sizeof(float));
        free(v);
        return r;
}

/* One training step; L: the five losses and their total averaged over the
 * ranks (the loss of the global batch), total non-finite when any rank's
 * was or the gradients are (then nothing is updated). */
static int train_step(struct train *t, const struct det_batch *b, int64_t step, int nan, struct mrcnn_losses *L,
                      long *images, struct bd_step_info *info, struct bd_err *err)
{
        struct mrcnn_run *run = &t->run;
        struct bd_backend *be = run->be;
        int r;
        if (nan && (r = poison(run)) < 0)
                return bd_err_set(err, r, "--inject-nan: %s", be->err.msg);
        struct mrcnn_step st = { .seed = run->o.common.seed, .step = (uint64_t)step,
                                 .image_base = (int64_t)run->dp.rank * t->local_batch,
                                 .gscale = run->o.common.amp ? t->sgd.loss_scale : 1.0, .dp = &run->dp };
        if ((r = mrcnn_fwd_train(run->net, &run->m, b, &st, L, err)) < 0)
                return r;
        /* with the images of every rank's batch (the last of a group may be short) */
        double v[7] = { L->objectness, L->rpn_box, L->classifier, L->box_reg, L->mask, L->total, b->n };
        if ((r = bd_dp_sum(&run->dp, v, 7, err)) < 0)
                return r;
        *images = (long)v[6];
        *L = (struct mrcnn_losses){ .objectness = v[0] / run->dp.size, .rpn_box = v[1] / run->dp.size,
                                    .classifier = v[2] / run->dp.size, .box_reg = v[3] / run->dp.size,
                                    .mask = v[4] / run->dp.size, .total = v[5] / run->dp.size };
        if (!isfinite(v[5]))
                return 0;
        if ((r = bd_dp_begin_backward(&run->dp, err)) < 0)
                return r;
        if ((r = mrcnn_bwd(run->net, &run->m, err)) < 0)
                return r;
        if ((r = bd_dp_finish(&run->dp, err)) < 0)
                return r;
        if (!run->o.common.amp) {
                /* the summed gradients are the same on every rank: so is this decision */
                struct bd_tensor g = bd_model_all_grads(&run->m);
                double bad = 0;
                if ((r = bd_op_count_nonfinite(be, &g, &bad)) < 0)
                        return bd_err_set(err, r, "%s", be->err.msg);
                if (bad > 0) {
                        L->total = NAN;
                        return 0;
                }
        }
        if ((r = bd_sgd_step(&t->sgd, &run->m, 1.0 / run->dp.size, info)) < 0)
                return bd_err_set(err, r, "optimiser: %s", be->err.msg);
        return 0;
}

static int contains(const int64_t *v, int n, int64_t x)
{
        for (int i = 0; i < n; i++)
                if (v[i] == x)
                        return 1;
        return 0;
}

static void save_checkpoint(struct train *t, int64_t step)
{
        struct bd_ckpt_meta meta = { .iter = step, .epoch = step / t->iters_per_epoch };
        struct bd_err err;
        snprintf(meta.model, sizeof(meta.model), "%s", t->model_name);
        /* a warning: the run goes on */
        if (bd_ckpt_save(t->ckpt_path, &t->run.m, &t->sgd, &meta, &err) < 0)
                fprintf(stderr, PROG ": %s, continuing without it\n", err.msg);
}

/* Evaluation after step (of epoch); *reached: both targets met. */
static enum run_end evaluate(struct train *t, int64_t step, long epoch, int *reached, struct bd_err *err)
{
        struct mrcnn_run *run = &t->run;
        const struct mrcnn_opts *o = &run->o;
        double bbox[12], segm[12];
        MLLOG_START("eval_start", NULL, trun_epoch_meta(epoch));
        double te = trun_now();
        int r = mrcnn_eval_run(t->eval, run, bbox, segm, err);
        if (trun_agree(r) < 0)
                return r < 0 ? RUN_FAILED : RUN_FAILED_ELSEWHERE;
        char acc[96];
        snprintf(acc, sizeof(acc), "{\"BBOX\": %s, \"SEGM\": %s}", mllog_num(bbox[0]), mllog_num(segm[0]));
        MLLOG_EVENT("eval_accuracy", acc, trun_epoch_meta(epoch));
        MLLOG_END("eval_stop", NULL, trun_epoch_meta(epoch));
        if (run->dp.rank == 0) {
                printf("step %lld (epoch %ld): bbox mAP %.4f (AP50 %.4f, AP75 %.4f), segm mAP %.4f (AP50 %.4f, "
                       "AP75 %.4f), targets %.4f and %.4f, evaluation %.1f s\n", (long long)step, epoch, bbox[0],
                       bbox[1], bbox[2], segm[0], segm[1], segm[2], o->target_map_bbox, o->target_map_segm,
                       trun_now() - te);
                fflush(stdout);
        }
        *reached = bbox[0] >= o->target_map_bbox && segm[0] >= o->target_map_segm;
        return RUN_NOT_REACHED;
}

/* The run proper, between run_start and run_stop: steps sgd.iter + 1 ..
 * max_iter in epochs of iters_per_epoch steps, one block each. */
static enum run_end train_loop(struct train *t, struct bd_err *err)
{
        struct mrcnn_run *run = &t->run;
        const struct mrcnn_opts *o = &run->o;
        const int64_t ipe = t->iters_per_epoch;
        const int64_t first = t->sgd.iter;     /* after a checkpoint: maybe within an epoch */
        int64_t step = first;
        int reached = 0;
        double t0 = 0, tlog = trun_now();
        long imgs = 0, imgs_log = 0;
        while (step < t->max_iter && !reached) {
                long epoch = (long)(step / ipe) + 1;
                int64_t epoch_last = (int64_t)epoch * ipe;
                if (step % ipe == 0 || step == first) {
                        char meta[96];
                        snprintf(meta, sizeof(meta), "\"first_epoch_num\": %ld, \"epoch_count\": 1", epoch);
                        MLLOG_START("block_start", NULL, meta);
                        MLLOG_START("epoch_start", NULL, trun_epoch_meta(epoch));
                        t0 = trun_now();
                        imgs = 0;
                }
                const struct det_batch *b;
                struct mrcnn_losses L;
                struct bd_step_info info = { 0 };
                long n = 0;
                if (det_loader_next(t->loader, &b, err) < 0)
                        return RUN_FAILED;
                step++;
                int r = tbench_begin(&t->bench, run->be, step);
                if (r < 0)
                        bd_err_set(err, r, "%s", run->be->err.msg);
                else
                        r = train_step(t, b, step, o->common.inject_nan == step && run->dp.rank == 0, &L, &n, &info,
                                       err);
                if (r < 0) {
                        t->fail_r = r;
                        return RUN_FAILED;
                }
                t->last_loss = L.total;
                if (!isfinite(L.total)) {
                        bd_err_set(err, -EDOM, "the loss is %s at epoch %ld, step %lld: stopping (run_stop status "
                                   "aborted)", isnan(L.total) ? "NaN" : isinf(L.total) ? "infinite" :
                                   "finite but the gradients are not", epoch, (long long)step);
                        return RUN_DIVERGED;
                }
                /* a finite step: one that diverged is no observation */
                if ((r = tbench_end(&t->bench, run->be, step, (double)n)) < 0) {
                        t->fail_r = bd_err_set(err, r, "%s", run->be->err.msg);
                        return RUN_FAILED;
                }
                imgs += n;
                imgs_log += n;
                int end_epoch = step == epoch_last || step == t->max_iter ||
                                (o->common.max_steps && step >= o->common.max_steps);
                if (run->dp.rank == 0 && (step % o->common.log_interval == 0 || end_epoch)) {
                        double tn = trun_now();
                        printf("epoch %ld step %lld/%lld: loss %.5f (objectness %.5f, rpn_box %.5f, classifier %.5f, "
                               "box_reg %.5f, mask %.5f), lr %.6g, %.*f images/s\n", epoch, (long long)step,
                               (long long)t->max_iter, L.total, L.objectness, L.rpn_box, L.classifier, L.box_reg,
                               L.mask, info.lr, trun_rate_decimals(imgs_log / (tn - tlog)), imgs_log / (tn - tlog));
                        fflush(stdout);
                        tlog = tn;
                        imgs_log = 0;
                }
                if (t->ckpt_path[0] && run->dp.rank == 0 &&
                    (step == epoch_last || (o->checkpoint_interval && step % o->checkpoint_interval == 0)))
                        save_checkpoint(t, step);
                if (end_epoch) {
                        double dt = trun_now() - t0;
                        MLLOG_END("epoch_stop", NULL, trun_epoch_meta(epoch));
                        MLLOG_EVENT("throughput", mllog_num(imgs / dt), trun_epoch_meta(epoch));
                        char meta[64];
                        snprintf(meta, sizeof(meta), "\"first_epoch_num\": %ld", epoch);
                        MLLOG_END("block_stop", NULL, meta);
                        if (run->dp.rank == 0)
                                printf("epoch %ld: %.1f s, %.*f images/s\n", epoch, dt, trun_rate_decimals(imgs / dt),
                                       imgs / dt);
                }
                /* at each epoch's end and the last step, or at --eval-iters */
                int eval_now = o->neval ? contains(o->eval_iters, o->neval, step)
                                        : step == epoch_last || step == t->max_iter;
                if (t->eval && eval_now) {
                        double te = trun_now();
                        enum run_end e = evaluate(t, step, epoch, &reached, err);
                        if (e != RUN_NOT_REACHED)
                                return e;
                        /* training rates leave the evaluation out */
                        t0 += trun_now() - te;
                        tlog = trun_now();
                }
                if (o->common.max_steps && step >= o->common.max_steps)
                        break;
        }
        return reached ? RUN_REACHED : RUN_NOT_REACHED;
}

static void release(struct train *t)
{
        struct mrcnn_run *run = &t->run;
        if (t->sgd.mom)
                bd_sgd_release(&t->sgd, &run->m);
        t->eval = mrcnn_eval_free(t->eval);
        tbench_release(&t->bench);
        t->loader = det_loader_free(t->loader);
        run->net = mrcnn_net_free(run->net);
        if (run->be) {
                bd_model_release(&run->m);
                bd_backend_free(run->be);
        }
        bd_dp_release(&run->dp);
}


static void log_header(const struct train *t)
{
        const struct mrcnn_run *run = &t->run;
        const struct mrcnn_opts *o = &run->o;
        const struct mrcnn_cfg *c = &run->cfg;
        printf("# benchd-maskrcnn %s: %d ranks x %ld images, %s backend (%d threads), %s, %s mode, resnet%d (width "
               "%g), FPN %d, %dx%d..%d, %d classes, %lld parameters\n", PACKAGE_VERSION, run->dp.size,
               t->local_batch, run->be->ops->name, run->be->nthreads, o->common.amp ? "amp" : "fp32",
               c->mode == DET_CONV_MLPERF ? "mlperf" : "torchvision", c->depth, c->width_mult, c->fpn_channels,
               run->min_size, run->min_size, run->max_size, run->K, (long long)run->m.n_train);
        printf("# %ld training images, %lld iterations per epoch (len // %ld + 1), %lld iterations, lr %g, "
               "%lld warmup iterations, seed %llu\n", t->train_size, (long long)t->iters_per_epoch, t->global_batch,
               (long long)t->max_iter, o->lr, (long long)o->warmup_iters, (unsigned long long)o->common.seed);
        if (o->common.amp)
                printf("# amp: backbone, FPN and RPN head in half precision, heads and losses in float32, "
                       "dynamic loss scaling\n");
        fflush(stdout);
}

/* Throughput mode's result (tbench.h) of a run that ended with outcome. */
static void bench_result(struct train *t, int argc, char **argv, enum tbench_outcome outcome)
{
        struct mrcnn_run *run = &t->run;
        const struct mrcnn_opts *o = &run->o;
        if (!tbench_on(&t->bench))
                return;
        struct tbench_run tr = { .prog = PROG, .benchmark = "maskrcnn", .argc = argc, .argv = argv,
                                 .device = run->be ? run->be->device_name : "", .ranks = run->dp.size,
                                 .batch = o->ims_per_batch, .precision = o->common.amp ? "amp" : "fp32",
                                 .result = o->common.result };
        struct bd_err err;
        if (tbench_finish(&t->bench, &tr, run->dp.rank, outcome, t->last_loss, &err) < 0)
                fprintf(stderr, PROG ": --result: %s\n", err.msg);
}

int main(int argc, char **argv)
{
        static struct train t;
        struct mrcnn_run *run = &t.run;
        struct mrcnn_opts *o = &run->o;
        struct bd_err err;
        int r;

        /* options first: --help and usage errors do not start MPI */
        int rank0 = mllog_launch_rank() == 0;
        r = mrcnn_opts_parse(argc, argv, o, rank0 ? stdout : NULL, &err);
        if (r != 0) {
                if (r < 0 && rank0)
                        fprintf(stderr, PROG ": %s\n", err.msg);
                return r > 0 ? 0 : 2;
        }
        if ((r = bd_dp_init(&run->dp, &argc, &argv, &err)) < 0) {
                fprintf(stderr, PROG ": %s\n", err.msg);
                return 1;
        }
        mllog_init(stdout, run->dp.rank);
        if (o->ims_per_batch % run->dp.size != 0) {
                if (run->dp.rank == 0)
                        fprintf(stderr, PROG ": --ims-per-batch %d is not a multiple of the %d ranks\n",
                                o->ims_per_batch, run->dp.size);
                bd_dp_release(&run->dp);
                return 2;
        }
        trun_start(&o->common, "maskrcnn", &run->dp);
        tbench_init(&t.bench, &o->common);
        t.last_loss = NAN;
        run->conv = o->mode == DET_CONV_MLPERF ? DET_MLPERF : DET_TORCHVISION;
        mrcnn_opts_sizes(o, &run->min_size, &run->max_size);

        /* each step's failure on any rank stops all of them (r: this rank's) */
        static int (*const init[])(struct train *, struct bd_err *) = { open_backend, open_data, build_model,
                                                                        attach, resume };
        for (size_t i = 0; i < ARRAY_SIZE(init); i++) {
                r = init[i](&t, &err);
                if (trun_agree(r) < 0)
                        goto fail_init;
        }
        if (run->dp.rank == 0)
                log_header(&t);
        log_config(&t);
        MLLOG_END("init_stop", NULL, NULL);
        bd_dp_barrier(&run->dp);
        MLLOG_START("run_start", NULL, NULL);

        enum run_end end = train_loop(&t, &err);
        if (end == RUN_DIVERGED && run->dp.rank == 0)
                fprintf(stderr, PROG ": %s\n", err.msg);
        else if (end == RUN_FAILED)
                fprintf(stderr, PROG ": rank %d: %s\n", run->dp.rank, err.msg);
        enum tbench_outcome outcome = tbench_outcome_end(end, t.fail_r);
        bench_result(&t, argc, argv, outcome);
        int success = tbench_success(&t.bench, outcome, end);
        char meta[64];
        snprintf(meta, sizeof(meta), "\"status\": \"%s\"", success ? "success" : "aborted");
        MLLOG_END("run_stop", NULL, meta);
        if (run->dp.rank == 0 && !tbench_on(&t.bench)) {
                if (end == RUN_REACHED)
                        printf("# targets reached: bbox mAP >= %.4f and segm mAP >= %.4f\n", o->target_map_bbox,
                               o->target_map_segm);
                else if (end == RUN_NOT_REACHED)
                        printf("# targets not reached: bbox mAP >= %.4f and segm mAP >= %.4f\n", o->target_map_bbox,
                               o->target_map_segm);
                fflush(stdout);
        }
        if (end == RUN_FAILED || end == RUN_FAILED_ELSEWHERE) {
                /* an error on some rank: the others may be anywhere, end them all */
                fflush(NULL);
                MPI_Abort(MPI_COMM_WORLD, 1);
        }
        release(&t);
        return end == RUN_DIVERGED ? 1 : 0;

fail_init:
        /* the ranks where a step failed say why */
        if (r < 0)
                trun_print_err(PROG, &run->dp, &err);
        bench_result(&t, argc, argv, tbench_outcome_of(r));
        release(&t);
        return 1;
}

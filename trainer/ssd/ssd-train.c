/* ssd-train.c: benchd-ssd, the MLPerf single-stage detector trainer.
 *
 *   init      MPI, backend, loaders (train2017 and val2017 shares of this
 *             rank), the network, rank 0's initial weights broadcast,
 *             optional pretrained backbone and checkpoint
 *   per step  targets encoded on the host, forward, loss with hard negative
 *             mining, backward with the gradient allreduce in buckets, SGD
 *   per epoch a checkpoint (--checkpoint), evaluation at --eval-epochs on all
 *             ranks, stop at --target-map
 *
 * Learning rate (systems.md, the MLPerf SSD scripts):
 *   base_lr = 2.5e-3 max(1, round(lr / 2.5e-3 x global_batch / 32))
 *   warmup_iters = int(warmup_epochs x train_size / global_batch), ramp from 0
 *   x0.1 after each decay epoch E (from step E x steps per epoch on)
 * SGD momentum 0.9, weight decay on the weights.
 *
 * Rank 0 prints progress lines and the MLPerf log; a non-finite loss on any
 * rank stops every rank with run_stop status "aborted" and exit status 1.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
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
#include "tbench.h"
#include "trun.h"
#include "ssd-data.h"
#include "ssd-loss.h"
#include "ssd-run.h"

#define SSD_BASE_LR 2.5e-3





/* ---- MLPerf log helpers -------------------------------------------------------------- */


static const char *num_list(const double *v, int n, int as_int)
{
        static char b[1024];
        size_t at = 0;
        at += (size_t)snprintf(b + at, sizeof(b) - at, "[");
        for (int i = 0; i < n && at < sizeof(b) - 32; i++)
                at += (size_t)snprintf(b + at, sizeof(b) - at, "%s%s", i ? ", " : "",
                                       as_int ? mllog_int((long long)v[i]) : mllog_num(v[i]));
        snprintf(b + at, sizeof(b) - at, "]");
        return b;
}

/* ---- the run ------------------------------------------------------------------------- */

struct train {
        struct ssd_run run;
        struct ssd_data *loader;
        struct ssd_eval *eval;
        struct ssd_loss loss;
        struct bd_sgd sgd;
        struct bd_tensor dloc, dconf, dloc_h, dconf_h;
        long train_size, steps_per_epoch, global_batch;
        double base_lr;
        char ckpt_path[4096];
        char model_name[64];
        int start_epoch;
        struct tbench bench;            /* throughput mode */
        int fail_r;                     /* the errno of a failed step */
        double last_loss;
};

static int open_data(struct train *t, struct bd_err *err)
{
        struct ssd_run *run = &t->run;
        const struct ssd_opts *o = &run->o;
        struct ssd_data_cfg c = { .mode = o->common.synthetic ? SSD_DATA_SYNTHETIC : SSD_DATA_TRAIN, .dir = o->common.data,
                                  .batch_size = o->batch_size, .image_size = o->image_size, .rank = run->dp.rank,
                                  .world = run->dp.size, .seed = o->common.seed,
                                  .threads = o->common.loader_workers > 0 ? o->common.loader_workers : 1,
                                  .synthetic_images = 117266, .synthetic_classes = 80, .warn = ssd_run_warn,
                                  .warn_ctx = run };
        int r = ssd_data_open(&c, &t->loader, err);
        if (r < 0)
                return r;
        t->train_size = ssd_data_usable(t->loader);
        t->steps_per_epoch = ssd_data_batches(t->loader);
        if (t->steps_per_epoch < 1)
                return bd_err_set(err, -EINVAL, "%ld training images are not one batch of %d on each of %d ranks",
                                  t->train_size, o->batch_size, run->dp.size);
        run->K = ssd_data_labels(t->loader) + 1;
        if (o->common.synthetic || o->common.benchmark_steps)
                return 0;
        if ((r = ssd_eval_open(run, &t->eval, err)) < 0)
                return r;
        if (ssd_eval_labels(t->eval) != run->K - 1)
                return bd_err_set(err, -EINVAL, "%s: val2017 has %d categories, train2017 %d", o->common.data,
                                  ssd_eval_labels(t->eval), run->K - 1);
        for (int k = 1; k < run->K; k++)
                if (ssd_eval_category(t->eval, k) != ssd_data_category(t->loader, k))
                        return bd_err_set(err, -EINVAL, "%s: the categories of val2017 and train2017 differ (label %d)",
                                          o->common.data, k);
        return 0;
}

static int build_model(struct train *t, struct bd_err *err)
{
        struct ssd_run *run = &t->run;
        const struct ssd_opts *o = &run->o;
        int r;
        bd_model_init(&run->m, run->be, BD_F32);
        run->m.training = 1;
        struct ssd_cfg cfg = { .depth = o->depth, .image_size = o->image_size, .width_mult = o->width_mult,
                               .num_classes = run->K };
        if ((r = ssd_net_init(&run->net, &run->m, &cfg)) < 0)
                return bd_err_set(err, r, "%s", run->be->err.msg);
        if ((r = bd_model_finalize(&run->m, err)) < 0 || (r = bd_model_init_params(&run->m, o->common.seed, err)) < 0)
                return r;
        if (o->common.pretrained) {
                /* an ImageNet ResNet: everything up to layer3 must be there;
                 * layer4 and the classifier are not part of SSD */
                static const char *const unused[] = { "layer4.", "fc.", NULL };
                struct bd_weights_report rep;
                if ((r = bd_weights_load(o->common.pretrained, &run->m, "backbone.", unused,
                                         BD_WEIGHTS_STRICT | BD_WEIGHTS_COMPLETE, &rep, err)) < 0)
                        return r;
                if (rep.loaded == 0)
                        return bd_err_set(err, -EINVAL, "pretrained '%s': no tensor matches the backbone",
                                          o->common.pretrained);
                if (run->dp.rank == 0)
                        printf("# pretrained backbone: %d tensors from '%s' (%s), %d not used\n", rep.loaded,
                               o->common.pretrained, rep.source, rep.skipped);
        }
        snprintf(t->model_name, sizeof(t->model_name), "ssd-resnet%d-%d-w%g-k%d", o->depth, o->image_size,
                 o->width_mult, run->K);
        return 0;
}

static int setup_optimizer(struct train *t, struct bd_err *err)
{
        struct ssd_run *run = &t->run;
        const struct ssd_opts *o = &run->o;
        t->global_batch = (long)o->batch_size * run->dp.size;
        double mult = round(o->lr / SSD_BASE_LR * (double)t->global_batch / 32.0);
        t->base_lr = SSD_BASE_LR * (mult > 1 ? mult : 1);
        struct bd_sgd_cfg c = { .lr = t->base_lr, .momentum = 0.9, .weight_decay = o->weight_decay,
                                .warmup_factor = 0, .gamma = 0.1, .loss_scaling = o->common.amp, .init_scale = 128 };
        c.warmup_iters = (int64_t)(o->warmup_epochs * (double)t->train_size / (double)t->global_batch);
        for (int i = 0; i < o->ndecay; i++)
                c.milestones[c.nmilestones++] = (int64_t)llround(o->decay_epochs[i] * (double)t->steps_per_epoch);
        return bd_sgd_init(&t->sgd, &run->m, &c, err);
}

static int resume(struct train *t, struct bd_err *err)
{
        struct ssd_run *run = &t->run;
        struct bd_ckpt_meta meta;
        int r = trun_resume(run->o.common.checkpoint, "ssd.ckpt", t->model_name, &run->m, &t->sgd, t->ckpt_path,
                            sizeof(t->ckpt_path), &meta, err);
        if (r <= 0)
                return r;
        t->start_epoch = (int)meta.epoch;
        ssd_data_seek(t->loader, t->start_epoch);
        if (run->dp.rank == 0)
                printf("# resumed from '%s' after epoch %d (step %lld)\n", t->ckpt_path, t->start_epoch,
                       (long long)meta.iter);
        return 0;
}

static void log_config(const struct train *t)
{
        const struct ssd_run *run = &t->run;
        const struct ssd_opts *o = &run->o;
        double steps[SSD_MAX_DECAYS];
        for (int i = 0; i < t->sgd.cfg.nmilestones; i++)
                steps[i] = (double)t->sgd.cfg.milestones[i];
        MLLOG_EVENT("seed", mllog_int((long long)o->common.seed), NULL);
        MLLOG_EVENT("global_batch_size", mllog_int(t->global_batch), NULL);
        MLLOG_EVENT("train_samples", mllog_int(t->train_size), NULL);
        MLLOG_EVENT("eval_samples", mllog_int(t->eval ? ssd_eval_samples(t->eval) : 0), NULL);
        MLLOG_EVENT("model_bn_span", mllog_int(o->batch_size), NULL);
        MLLOG_EVENT("max_samples", mllog_int(50), NULL);   /* tries of the crop sampler (augment.h) */
        MLLOG_EVENT("gradient_accumulation_steps", mllog_int(1), NULL);
        MLLOG_EVENT("eval_target", mllog_num(o->target_map), NULL);
        MLLOG_EVENT("opt_base_learning_rate", mllog_num(t->base_lr), NULL);
        MLLOG_EVENT("opt_weight_decay", mllog_num(o->weight_decay), NULL);
        MLLOG_EVENT("opt_learning_rate_warmup_steps", mllog_int(t->sgd.cfg.warmup_iters), NULL);
        MLLOG_EVENT("opt_learning_rate_warmup_factor", mllog_int(0), NULL);
        MLLOG_EVENT("opt_learning_rate_decay_boundary_epochs", num_list(o->decay_epochs, o->ndecay, 0), NULL);
        MLLOG_EVENT("opt_learning_rate_decay_boundary_steps", num_list(steps, t->sgd.cfg.nmilestones, 1), NULL);
}

/* --inject-nan: a diverged model, NaN in the first box head's bias */
static int poison(struct ssd_run *run)
{
        int id = bd_model_find(&run->m, "loc.0.bias");
        struct bd_tensor p = bd_model_param(&run->m, id);
        float v[SSD_MAX_PER_CELL * 4];
        for (size_t i = 0; i < ARRAY_SIZE(v); i++)
                v[i] = NAN;
        run->m.version++;
        return run->be->ops->copy(run->be, p.data, p.dev, v, BD_CPU, bd_tensor_bytes(&p));
}

/* One training step; parts_out: loss, loc and conf terms averaged over the
 * ranks, non-finite when any rank's loss was (then nothing is updated). */
static int train_step(struct train *t, const struct ssd_batch *b, int nan, double parts_out[3],
                      struct bd_step_info *info, struct bd_err *err)
{
        struct ssd_run *run = &t->run;
        struct bd_backend *be = run->be;
        struct ssd_loss_parts parts;
        double loss;
        int r;
        if ((r = ssd_loss_encode(&t->loss, &run->net.dboxes, b->boxes, b->labels, b->nboxes, SSD_DATA_MAX_BOXES)) < 0)
                return bd_err_set(err, r, "%s", be->err.msg);
        if (nan && (r = poison(run)) < 0)
                return bd_err_set(err, r, "--inject-nan: %s", be->err.msg);
        bd_model_begin_step(&run->m);
        if ((r = ssd_run_forward(run, b->images, b->n)) < 0)
                return bd_err_set(err, r, "forward: %s", be->err.msg);
        double scale = run->o.common.amp ? t->sgd.loss_scale : 1.0;
        if ((r = ssd_loss_run(&t->loss, run->ploc, run->plabel, scale, &t->dloc, &t->dconf, &loss, &parts)) < 0)
                return bd_err_set(err, r, "%s", be->err.msg);
        double v[3] = { loss, parts.loc, parts.conf };
        if ((r = bd_dp_sum(&run->dp, v, 3, err)) < 0)
                return r;
        for (int i = 0; i < 3; i++)
                parts_out[i] = v[i] / run->dp.size;
        if (!isfinite(v[0]))
                return 0;
        const struct bd_tensor *gl = &t->dloc, *gc = &t->dconf;
        if (run->o.common.amp) {
                if ((r = bd_op_cast(be, &t->dloc, run->net.ploc.dtype, 1.0, &t->dloc_h)) < 0 ||
                    (r = bd_op_cast(be, &t->dconf, run->net.plabel.dtype, 1.0, &t->dconf_h)) < 0)
                        return bd_err_set(err, r, "%s", be->err.msg);
                gl = &t->dloc_h;
                gc = &t->dconf_h;
        }
        if ((r = bd_dp_begin_backward(&run->dp, err)) < 0)
                return r;
        if ((r = ssd_net_bwd(&run->m, &run->net, gl, gc)) < 0)
                return bd_err_set(err, r, "backward: %s", be->err.msg);
        if ((r = bd_dp_finish(&run->dp, err)) < 0)
                return r;
        if (!run->o.common.amp) {
                /* the summed gradients are the same on every rank: so is this decision
                 * (a NaN can hide from the loss: the core's ReLU maps it to 0) */
                struct bd_tensor g = bd_model_all_grads(&run->m);
                double bad = 0;
                if ((r = bd_op_count_nonfinite(be, &g, &bad)) < 0)
                        return bd_err_set(err, r, "%s", be->err.msg);
                if (bad > 0) {
                        parts_out[0] = NAN;
                        return 0;
                }
        }
        if ((r = bd_sgd_step(&t->sgd, &run->m, 1.0 / run->dp.size, info)) < 0)
                return bd_err_set(err, r, "optimiser: %s", be->err.msg);
        return 0;
}

/* The last epoch of the block (epochs up to the next evaluation) that epoch starts. */
static int block_end(const struct ssd_opts *o, int has_eval, int epoch)
{
        for (int i = 0; has_eval && i < o->neval; i++)
                if (o->eval_epochs[i] >= epoch && o->eval_epochs[i] <= o->epochs)
                        return o->eval_epochs[i];
        return o->epochs;
}

static const char *block_meta(int first, int count)
{
        static char b[2][96];
        static int next;
        char *m = b[next++ % 2];
        snprintf(m, 96, "\"first_epoch_num\": %d, \"epoch_count\": %d", first, count);
        return m;
}

static int contains(const int *v, int n, int x)
{
        for (int i = 0; i < n; i++)
                if (v[i] == x)
                        return 1;
        return 0;
}

/* The run proper, between run_start and run_stop. */
static enum run_end train_loop(struct train *t, struct bd_err *err)
{
        struct ssd_run *run = &t->run;
        const struct ssd_opts *o = &run->o;
        long long step = t->sgd.iter;
        int reached = 0, block_first = 0, block_count = 0;
        /* throughput mode runs its steps whatever the epochs (max_steps ends it) */
        int epochs = tbench_on(&t->bench) ? INT_MAX : o->epochs;
        for (int epoch = t->start_epoch + 1; epoch <= epochs && !reached; epoch++) {
                /* blocks of epochs between evaluations, as the reference logs them */
                if (!block_first) {
                        block_first = epoch;
                        block_count = block_end(o, t->eval != NULL, epoch) - epoch + 1;
                        MLLOG_START("block_start", NULL, block_meta(block_first, block_count));
                }
                MLLOG_START("epoch_start", NULL, trun_epoch_meta(epoch));
                double t0 = trun_now(), tlog = t0;
                long imgs_log = 0, imgs = 0;
                for (long s = 0; s < t->steps_per_epoch; s++) {
                        struct ssd_batch batch, *b = &batch;
                        double parts[3];
                        struct bd_step_info info = { 0 };
                        if (ssd_data_next(t->loader, b, err) < 0)
                                return RUN_FAILED;
                        step++;
                        int r = tbench_begin(&t->bench, run->be, step);
                        if (r < 0)
                                bd_err_set(err, r, "%s", run->be->err.msg);
                        else
                                r = train_step(t, b, o->common.inject_nan == step && run->dp.rank == 0, parts, &info,
                                               err);
                        if (r < 0) {
                                t->fail_r = r;
                                return RUN_FAILED;
                        }
                        t->last_loss = parts[0];
                        if (!isfinite(parts[0])) {
                                bd_err_set(err, -EDOM, "the loss is %s at epoch %d, step %lld: stopping (run_stop status "
                                           "aborted)", isnan(parts[0]) ? "NaN" : isinf(parts[0]) ? "infinite" :
                                           "finite but the gradients are not", epoch, step);
                                return RUN_DIVERGED;
                        }
                        /* a finite step: one that diverged is no observation */
                        if ((r = tbench_end(&t->bench, run->be, step, (double)b->n * run->dp.size)) < 0) {
                                t->fail_r = bd_err_set(err, r, "%s", run->be->err.msg);
                                return RUN_FAILED;
                        }
                        imgs_log += (long)b->n * run->dp.size;
                        imgs += (long)b->n * run->dp.size;
                        if (run->dp.rank == 0 && (step % o->common.log_interval == 0 || s + 1 == t->steps_per_epoch)) {
                                double tn = trun_now();
                                printf("epoch %d/%d step %ld/%ld (%lld): loss %.4f (loc %.4f, conf %.4f), lr %.6g, "
                                       "%.*f images/s\n", epoch, o->epochs, s + 1, t->steps_per_epoch, step, parts[0],
                                       parts[1], parts[2], info.lr, trun_rate_decimals(imgs_log / (tn - tlog)),
                                       imgs_log / (tn - tlog));
                                fflush(stdout);
                                tlog = tn;
                                imgs_log = 0;
                        }
                        if (o->common.max_steps && step >= o->common.max_steps)
                                break;
                }
                double dt = trun_now() - t0;
                MLLOG_END("epoch_stop", NULL, trun_epoch_meta(epoch));
                MLLOG_EVENT("throughput", mllog_num(imgs / dt), trun_epoch_meta(epoch));
                if (run->dp.rank == 0)
                        printf("epoch %d: %.1f s, %.*f images/s\n", epoch, dt, trun_rate_decimals(imgs / dt), imgs / dt);
                if (t->ckpt_path[0] && run->dp.rank == 0) {
                        struct bd_ckpt_meta meta = { .iter = step, .epoch = epoch };
                        snprintf(meta.model, sizeof(meta.model), "%s", t->model_name);
                        /* a warning: the run goes on */
                        if (bd_ckpt_save(t->ckpt_path, &run->m, &t->sgd, &meta, err) < 0)
                                fprintf(stderr, PROG ": %s, continuing without it\n", err->msg);
                }
                int last = (o->common.max_steps && step >= o->common.max_steps) || epoch == epochs;
                int evaluate = t->eval && contains(o->eval_epochs, o->neval, epoch);
                if (evaluate || last) {
                        MLLOG_END("block_stop", NULL, block_meta(block_first, block_count));
                        block_first = 0;
                }
                if (evaluate) {
                        double stats[12];
                        MLLOG_START("eval_start", NULL, trun_epoch_meta(epoch));
                        double te = trun_now();
                        int r = ssd_eval_run(t->eval, run, stats, err);
                        if (trun_agree(r) < 0)
                                return r < 0 ? RUN_FAILED : RUN_FAILED_ELSEWHERE;
                        MLLOG_EVENT("eval_accuracy", mllog_num(stats[0]), trun_epoch_meta(epoch));
                        MLLOG_END("eval_stop", NULL, trun_epoch_meta(epoch));
                        if (run->dp.rank == 0) {
                                printf("epoch %d: bbox mAP %.4f (AP50 %.4f, AP75 %.4f), target %.4f, evaluation %.1f s\n",
                                       epoch, stats[0], stats[1], stats[2], o->target_map, trun_now() - te);
                                fflush(stdout);
                        }
                        reached = stats[0] >= o->target_map;
                }
                if (o->common.max_steps && step >= o->common.max_steps)
                        break;
        }
        return reached ? RUN_REACHED : RUN_NOT_REACHED;
}

static void release(struct train *t)
{
        struct ssd_run *run = &t->run;
        ssd_loss_release(&t->loss);
        if (t->sgd.mom)
                bd_sgd_release(&t->sgd, &run->m);
        bd_tensor_release(&t->dloc);
        bd_tensor_release(&t->dconf);
        bd_tensor_release(&t->dloc_h);
        bd_tensor_release(&t->dconf_h);
        t->eval = ssd_eval_free(t->eval);
        t->loader = ssd_data_free(t->loader);
        tbench_release(&t->bench);
        ssd_run_release(run);
}

/* Throughput mode's result (tbench.h) of a run that ended with outcome. */
static void bench_result(struct train *t, int argc, char **argv, enum tbench_outcome outcome)
{
        struct ssd_run *run = &t->run;
        const struct ssd_opts *o = &run->o;
        if (!tbench_on(&t->bench))
                return;
        char dev[160];
        snprintf(dev, sizeof(dev), "%s", run->be ? run->be->device_name : "");
        struct tbench_run tr = { .prog = PROG, .benchmark = "ssd", .argc = argc, .argv = argv, .device = dev,
                                 .ranks = run->dp.size, .batch = o->batch_size * run->dp.size,
                                 .precision = o->common.amp ? "amp" : "fp32", .result = o->common.result };
        struct bd_err err;
        if (tbench_finish(&t->bench, &tr, run->dp.rank, outcome, t->last_loss, &err) < 0)
                fprintf(stderr, PROG ": --result: %s\n", err.msg);
}

int main(int argc, char **argv)
{
        static struct train t;
        struct ssd_run *run = &t.run;
        struct ssd_opts *o = &run->o;
        struct bd_err err;
        int r;

        /* options first: --help and usage errors do not start MPI */
        int rank0 = mllog_launch_rank() == 0;
        r = ssd_opts_parse(argc, argv, o, rank0 ? stdout : NULL, &err);
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
        trun_start(&o->common, "ssd", &run->dp);
        tbench_init(&t.bench, &o->common);
        t.last_loss = NAN;

        /* each step's failure on any rank stops all of them (r: this rank's) */
        r = bd_backend_new(o->common.cuda ? "cuda" : "cpu", run->dp.local_rank, o->common.threads, &run->be, &err);
        if (trun_agree(r) < 0)
                goto fail_init;
        r = open_data(&t, &err);
        if (trun_agree(r) < 0)
                goto fail_init;
        r = build_model(&t, &err);
        if (trun_agree(r) < 0)
                goto fail_init;
        r = bd_dp_attach(&run->dp, &run->m, 16u << 20, &err);
        if (r >= 0)
                r = bd_dp_broadcast_params(&run->dp, &err);
        if (r >= 0)
                r = setup_optimizer(&t, &err);
        if (r >= 0 && (r = ssd_loss_init(&t.loss, run->be, o->batch_size, run->net.nboxes, run->K)) < 0)
                r = bd_err_set(&err, r, "%s", run->be->err.msg);
        if (trun_agree(r) < 0)
                goto fail_init;
        r = resume(&t, &err);
        if (trun_agree(r) < 0)
                goto fail_init;
        if (run->dp.rank == 0) {
                printf("# benchd-ssd %s: %d ranks x %d images, %s backend (%d threads), %s, resnet%d, %dx%d, width %g, "
                       "%d classes, %lld default boxes, %lld parameters\n", PACKAGE_VERSION, run->dp.size,
                       o->batch_size, run->be->ops->name, run->be->nthreads, o->common.amp ? "amp" : "fp32", o->depth,
                       o->image_size, o->image_size, o->width_mult, run->K, (long long)run->net.nboxes,
                       (long long)run->m.n_train);
                printf("# %ld training images, %ld steps per epoch, base lr %g, %lld warmup steps, seed %llu\n",
                       t.train_size, t.steps_per_epoch, t.base_lr, (long long)t.sgd.cfg.warmup_iters,
                       (unsigned long long)o->common.seed);
                fflush(stdout);
                if (t.sgd.cfg.warmup_iters < 1)
                        fprintf(stderr, PROG ": warning: no warmup step (--warmup-epochs %g): the MLPerf compliance "
                                        "checker needs opt_learning_rate_warmup_steps >= 1\n", o->warmup_epochs);
        }
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
                        printf("# target mAP %.4f reached\n", o->target_map);
                else if (end == RUN_NOT_REACHED)
                        printf("# target mAP %.4f not reached\n", o->target_map);
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

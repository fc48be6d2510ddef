/* ssd-train.c: benchd-ssd, the MLPerf single-stage detector trainer: its
 * parts of the trainers' skeleton (trainer.h), which runs them in order.
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
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "mllog.h"
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
        struct bd_tensor dloc, dconf, dloc_h, dconf_h;
        long steps_per_epoch;
        double base_lr;
        int start_epoch;
        struct ssd_batch batch;         /* the step's */
        double parts[3];                /* its loss, loc and conf terms averaged over the ranks */
};

static struct train *train_of(struct trainer *tr)
{
        return container_of(tr, struct train, run.tr);
}

static int ssd_parse(struct trainer *tr, int argc, char **argv, FILE *out, struct bd_err *err)
{
        return ssd_opts_parse(argc, argv, &train_of(tr)->run.o, out, err);
}

static int ssd_setup(struct trainer *tr, struct bd_err *err)
{
        tr->global_batch = (long)train_of(tr)->run.o.batch_size * tr->dp.size;
        return 0;
}

static int ssd_open_data(struct trainer *tr, struct bd_err *err)
{
        struct train *t = train_of(tr);
        struct ssd_run *run = &t->run;
        const struct ssd_opts *o = &run->o;
        struct ssd_data_cfg c = { .mode = o->common.synthetic ? SSD_DATA_SYNTHETIC : SSD_DATA_TRAIN,
                                  .dir = o->common.data, .batch_size = o->batch_size, .image_size = o->image_size,
                                  .rank = tr->dp.rank, .world = tr->dp.size, .seed = o->common.seed,
                                  .threads = o->common.loader_workers > 0 ? o->common.loader_workers : 1,
                                  .synthetic_images = 117266, .synthetic_classes = 80, .warn = trainer_warn,
                                  .warn_ctx = tr };
        int r = ssd_data_open(&c, &t->loader, err);
        if (r < 0)
                return r;
        tr->train_size = ssd_data_usable(t->loader);
        t->steps_per_epoch = ssd_data_batches(t->loader);
        if (t->steps_per_epoch < 1)
                return bd_err_set(err, -EINVAL, "%ld training images are not one batch of %d on each of %d ranks",
                                  tr->train_size, o->batch_size, tr->dp.size);
        run->K = ssd_data_labels(t->loader) + 1;
        if (o->common.synthetic || o->common.benchmark_steps)
                return 0;
        if ((r = ssd_eval_open(run, &t->eval, err)) < 0)
                return r;
        tr->eval_samples = ssd_eval_samples(t->eval);
        if (ssd_eval_labels(t->eval) != run->K - 1)
                return bd_err_set(err, -EINVAL, "%s: val2017 has %d categories, train2017 %d", o->common.data,
                                  ssd_eval_labels(t->eval), run->K - 1);
        for (int k = 1; k < run->K; k++)
                if (ssd_eval_category(t->eval, k) != ssd_data_category(t->loader, k))
                        return bd_err_set(err, -EINVAL, "%s: the categories of val2017 and train2017 differ (label %d)",
                                          o->common.data, k);
        return 0;
}

static int ssd_build_model(struct trainer *tr, struct bd_err *err)
{
        struct ssd_run *run = &train_of(tr)->run;
        const struct ssd_opts *o = &run->o;
        struct ssd_cfg cfg = { .depth = o->depth, .image_size = o->image_size, .width_mult = o->width_mult,
                               .num_classes = run->K };
        int r = ssd_net_init(&run->net, &tr->m, &cfg);
        if (r < 0)
                return bd_err_set(err, r, "%s", tr->be->err.msg);
        snprintf(tr->model_name, sizeof(tr->model_name), "ssd-resnet%d-%d-w%g-k%d", o->depth, o->image_size,
                 o->width_mult, run->K);
        return 0;
}

/* SGD as the MLPerf scripts, and the loss */
static int ssd_optimizer(struct trainer *tr, struct bd_err *err)
{
        struct train *t = train_of(tr);
        struct ssd_run *run = &t->run;
        const struct ssd_opts *o = &run->o;
        double mult = round(o->lr / SSD_BASE_LR * (double)tr->global_batch / 32.0);
        t->base_lr = SSD_BASE_LR * (mult > 1 ? mult : 1);
        struct bd_sgd_cfg c = { .lr = t->base_lr, .momentum = 0.9, .weight_decay = o->weight_decay,
                                .warmup_factor = 0, .gamma = 0.1, .loss_scaling = o->common.amp, .init_scale = 128 };
        c.warmup_iters = (int64_t)(o->warmup_epochs * (double)tr->train_size / (double)tr->global_batch);
        for (int i = 0; i < o->ndecay; i++)
                c.milestones[c.nmilestones++] = (int64_t)llround(o->decay_epochs[i] * (double)t->steps_per_epoch);
        int r = bd_sgd_init(&tr->sgd, &tr->m, &c, err);
        if (r >= 0 && (r = ssd_loss_init(&t->loss, tr->be, o->batch_size, run->net.nboxes, run->K)) < 0)
                r = bd_err_set(err, r, "%s", tr->be->err.msg);
        return r;
}

static int ssd_resume(struct trainer *tr, const struct bd_ckpt_meta *meta, struct bd_err *err)
{
        struct train *t = train_of(tr);
        t->start_epoch = (int)meta->epoch;
        ssd_data_seek(t->loader, t->start_epoch);
        if (tr->dp.rank == 0)
                printf("# resumed from '%s' after epoch %d (step %lld)\n", tr->ckpt_path, t->start_epoch,
                       (long long)meta->iter);
        return 0;
}

static void ssd_header(struct trainer *tr)
{
        const struct train *t = train_of(tr);
        const struct ssd_run *run = &t->run;
        const struct ssd_opts *o = &run->o;
        printf("# %s %s: %d ranks x %d images, %s backend (%d threads), %s, resnet%d, %dx%d, width %g, %d classes, "
               "%lld default boxes, %lld parameters\n", tr->prog, PACKAGE_VERSION, tr->dp.size, o->batch_size,
               tr->be->ops->name, tr->be->nthreads, o->common.amp ? "amp" : "fp32", o->depth, o->image_size,
               o->image_size, o->width_mult, run->K, (long long)run->net.nboxes, (long long)tr->m.n_train);
        printf("# %ld training images, %ld steps per epoch, base lr %g, %lld warmup steps, seed %llu\n",
               tr->train_size, t->steps_per_epoch, t->base_lr, (long long)tr->sgd.cfg.warmup_iters,
               (unsigned long long)o->common.seed);
        fflush(stdout);
        if (tr->sgd.cfg.warmup_iters < 1)
                fprintf(stderr, "%s: warning: no warmup step (--warmup-epochs %g): the MLPerf compliance checker "
                                "needs opt_learning_rate_warmup_steps >= 1\n", tr->prog, o->warmup_epochs);
}

static void ssd_log_config(struct trainer *tr)
{
        const struct train *t = train_of(tr);
        const struct ssd_opts *o = &t->run.o;
        double steps[SSD_MAX_DECAYS];
        for (int i = 0; i < tr->sgd.cfg.nmilestones; i++)
                steps[i] = (double)tr->sgd.cfg.milestones[i];
        MLLOG_EVENT("model_bn_span", mllog_int(o->batch_size), NULL);
        MLLOG_EVENT("max_samples", mllog_int(50), NULL);   /* tries of the crop sampler (augment.h) */
        MLLOG_EVENT("gradient_accumulation_steps", mllog_int(1), NULL);
        MLLOG_EVENT("eval_target", mllog_num(o->target_map), NULL);
        MLLOG_EVENT("opt_base_learning_rate", mllog_num(t->base_lr), NULL);
        MLLOG_EVENT("opt_weight_decay", mllog_num(o->weight_decay), NULL);
        MLLOG_EVENT("opt_learning_rate_warmup_steps", mllog_int(tr->sgd.cfg.warmup_iters), NULL);
        MLLOG_EVENT("opt_learning_rate_warmup_factor", mllog_int(0), NULL);
        MLLOG_EVENT("opt_learning_rate_decay_boundary_epochs", num_list(o->decay_epochs, o->ndecay, 0), NULL);
        MLLOG_EVENT("opt_learning_rate_decay_boundary_steps", num_list(steps, tr->sgd.cfg.nmilestones, 1), NULL);
}

/* --inject-nan: a diverged model, NaN in the first box head's bias */
static int poison(struct trainer *tr)
{
        int id = bd_model_find(&tr->m, "loc.0.bias");
        struct bd_tensor p = bd_model_param(&tr->m, id);
        float v[SSD_MAX_PER_CELL * 4];
        for (size_t i = 0; i < ARRAY_SIZE(v); i++)
                v[i] = NAN;
        tr->m.version++;
        return tr->be->ops->copy(tr->be, p.data, p.dev, v, BD_CPU, bd_tensor_bytes(&p));
}

static int ssd_next(struct trainer *tr, struct bd_err *err)
{
        struct train *t = train_of(tr);
        return ssd_data_next(t->loader, &t->batch, err);
}

/* The forward and the loss; t->parts: loss, loc and conf terms averaged
 * over the ranks; with amp, the loss's gradients in the heads' precision. */
static int ssd_forward(struct trainer *tr, int64_t step, bool nan, double *loss, long *images, struct bd_err *err)
{
        struct train *t = train_of(tr);
        struct ssd_run *run = &t->run;
        struct bd_backend *be = tr->be;
        const struct ssd_batch *b = &t->batch;
        struct ssd_loss_parts parts;
        double l;
        int r;
        *images = (long)b->n * tr->dp.size;
        if ((r = ssd_loss_encode(&t->loss, &run->net.dboxes, b->boxes, b->labels, b->nboxes, SSD_DATA_MAX_BOXES)) < 0)
                return bd_err_set(err, r, "%s", be->err.msg);
        if (nan && (r = poison(tr)) < 0)
                return bd_err_set(err, r, "--inject-nan: %s", be->err.msg);
        bd_model_begin_step(&tr->m);
        if ((r = ssd_run_forward(run, b->images, b->n)) < 0)
                return bd_err_set(err, r, "forward: %s", be->err.msg);
        double scale = run->o.common.amp ? tr->sgd.loss_scale : 1.0;
        if ((r = ssd_loss_run(&t->loss, run->ploc, run->plabel, scale, &t->dloc, &t->dconf, &l, &parts)) < 0)
                return bd_err_set(err, r, "%s", be->err.msg);
        double v[3] = { l, parts.loc, parts.conf };
        if ((r = bd_dp_sum(&tr->dp, v, 3, err)) < 0)
                return r;
        for (int i = 0; i < 3; i++)
                t->parts[i] = v[i] / tr->dp.size;
        *loss = t->parts[0];
        if (isfinite(*loss) && run->o.common.amp &&
            ((r = bd_op_cast(be, &t->dloc, run->net.ploc.dtype, 1.0, &t->dloc_h)) < 0 ||
             (r = bd_op_cast(be, &t->dconf, run->net.plabel.dtype, 1.0, &t->dconf_h)) < 0))
                return bd_err_set(err, r, "%s", be->err.msg);
        return 0;
}

static int ssd_backward(struct trainer *tr, struct bd_err *err)
{
        struct train *t = train_of(tr);
        bool amp = t->run.o.common.amp;
        int r = ssd_net_bwd(&tr->m, &t->run.net, amp ? &t->dloc_h : &t->dloc, amp ? &t->dconf_h : &t->dconf);
        if (r < 0)
                return bd_err_set(err, r, "backward: %s", tr->be->err.msg);
        return 0;
}

static int ssd_evaluate(struct trainer *tr, int64_t step, long epoch, struct trainer_eval *ev, struct bd_err *err)
{
        struct train *t = train_of(tr);
        const struct ssd_opts *o = &t->run.o;
        double stats[12];
        int r = ssd_eval_run(t->eval, &t->run, stats, err);
        if (r < 0)
                return r;
        snprintf(ev->accuracy, sizeof(ev->accuracy), "%s", mllog_num(stats[0]));
        snprintf(ev->line, sizeof(ev->line), "epoch %ld: bbox mAP %.4f (AP50 %.4f, AP75 %.4f), target %.4f", epoch,
                 stats[0], stats[1], stats[2], o->target_map);
        ev->reached = stats[0] >= o->target_map;
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

/* The loop: epochs of steps_per_epoch steps, in blocks up to each
 * evaluation; a checkpoint after every epoch. */
static enum run_end ssd_train(struct trainer *tr, struct bd_err *err)
{
        struct train *t = train_of(tr);
        const struct ssd_opts *o = &t->run.o;
        enum run_end end;
        int64_t step = tr->sgd.iter;
        int block_first = 0, block_count = 0;
        /* throughput mode runs its steps whatever the epochs (max_steps ends it) */
        int epochs = tbench_on(&tr->bench) ? INT_MAX : o->epochs, epoch_done = t->start_epoch;
        for (int epoch = t->start_epoch + 1; epoch <= epochs; epoch++) {
                /* blocks of epochs between evaluations, as the reference logs them */
                if (!block_first) {
                        block_first = epoch;
                        block_count = block_end(o, t->eval != NULL, epoch) - epoch + 1;
                        MLLOG_START("block_start", NULL, block_meta(block_first, block_count));
                }
                trainer_epoch_begin(tr, epoch);
                trainer_progress_restart(tr);
                for (long s = 0; s < t->steps_per_epoch; s++) {
                        if (!trainer_step(tr, ++step, epoch, &end, err))
                                return end;
                        if (trainer_progress_due(tr, step, s + 1 == t->steps_per_epoch)) {
                                char head[160];
                                snprintf(head, sizeof(head), "epoch %d/%d step %ld/%ld (%lld): loss %.4f (loc %.4f, "
                                         "conf %.4f)", epoch, o->epochs, s + 1, t->steps_per_epoch, (long long)step,
                                         t->parts[0], t->parts[1], t->parts[2]);
                                trainer_progress(tr, head);
                        }
                        if (trainer_max_steps(tr, step))
                                break;
                }
                trainer_epoch_end(tr, epoch, NULL);
                epoch_done = epoch;
                trainer_checkpoint(tr, step, epoch);
                int last = trainer_max_steps(tr, step) || epoch == epochs;
                int eval_now = t->eval && contains(o->eval_epochs, o->neval, epoch);
                if (eval_now || last) {
                        MLLOG_END("block_stop", NULL, block_meta(block_first, block_count));
                        block_first = 0;
                }
                if (eval_now && !trainer_evaluate(tr, step, epoch, &end, err))
                        return end;
                if (trainer_max_steps(tr, step))
                        break;
        }
        return trainer_schedule_end(tr, step, epoch_done, t->eval != NULL, err);
}

static void ssd_report(struct trainer *tr, bool reached)
{
        printf("# target mAP %.4f %s\n", train_of(tr)->run.o.target_map, reached ? "reached" : "not reached");
}

static void ssd_release(struct trainer *tr)
{
        struct train *t = train_of(tr);
        ssd_loss_release(&t->loss);
        bd_tensor_release(&t->dloc);
        bd_tensor_release(&t->dconf);
        bd_tensor_release(&t->dloc_h);
        bd_tensor_release(&t->dconf_h);
        t->eval = ssd_eval_free(t->eval);
        t->loader = ssd_data_free(t->loader);
        ssd_run_release(&t->run);
}

/* an ImageNet ResNet: everything up to layer3 must be there; layer4 and the
 * classifier are not part of SSD */
static const char *const pretrained_unused[] = { "layer4.", "fc.", NULL };

static const struct trainer_ops ssd_trainer = {
        .workload = "ssd",
        .checkpoint = "ssd.ckpt",
        .pretrained_prefix = "backbone.",
        .pretrained_unused = pretrained_unused,
        .parse = ssd_parse,
        .setup = ssd_setup,
        .open_data = ssd_open_data,
        .build_model = ssd_build_model,
        .optimizer = ssd_optimizer,
        .resume = ssd_resume,
        .header = ssd_header,
        .log_config = ssd_log_config,
        .train = ssd_train,
        .next = ssd_next,
        .forward = ssd_forward,
        .backward = ssd_backward,
        .evaluate = ssd_evaluate,
        .report = ssd_report,
        .release = ssd_release,
};

int main(int argc, char **argv)
{
        static struct train t;
        t.run.tr.opt = &t.run.o.common;
        return trainer_main(&t.run.tr, &ssd_trainer, argc, argv);
}

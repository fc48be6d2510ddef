/* trainer.c: the trainers' main() and their loops' shared bookkeeping
 * (trainer.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mllog.h"
#include "ops.h"
#include "trainer.h"
#include "workload.h"

/* ---- init: each step agreed over the ranks ---- */

/* the local rank's GPU; more ranks on a node than GPUs share them in turn
 * (the gradients then go through MPI: dp.h) */
static int open_backend(struct trainer *t, struct bd_err *err)
{
        int ndev = t->opt->cuda ? bd_cuda_device_count(NULL) : 0;
        const char *name = t->opt->cuda ? "cuda" : t->opt->plan ? "plan" : "cpu";
        return bd_backend_new(name, ndev > 0 ? t->dp.local_rank % ndev : 0, t->opt->threads, &t->be, err);
}

static int open_data(struct trainer *t, struct bd_err *err)
{
        return t->ops->open_data(t, err);
}

static int load_pretrained(struct trainer *t, struct bd_err *err)
{
        const char *file = t->opt->pretrained;
        struct bd_weights_report rep;
        int r = bd_weights_load(file, &t->m, t->ops->pretrained_prefix, t->ops->pretrained_unused,
                                BD_WEIGHTS_STRICT | BD_WEIGHTS_COMPLETE, &rep, err);
        if (r < 0)
                return r;
        if (rep.loaded == 0)
                return bd_err_set(err, -EINVAL, "pretrained '%s': no tensor matches the backbone", file);
        if (t->dp.rank == 0)
                printf("# pretrained backbone: %d tensors from '%s' (%s), %d not used\n", rep.loaded, file, rep.source,
                       rep.skipped);
        return 0;
}

static int build_model(struct trainer *t, struct bd_err *err)
{
        int r;
        bd_model_init(&t->m, t->be, BD_F32);
        t->m.training = 1;
        if ((r = t->ops->build_model(t, err)) < 0 || (r = bd_model_finalize(&t->m, err)) < 0 ||
            (r = bd_model_init_params(&t->m, t->opt->seed, err)) < 0)
                return r;
        return t->opt->pretrained ? load_pretrained(t, err) : 0;
}

/* the model on every rank as rank 0's, the data-parallel hooks, the optimiser */
static int attach(struct trainer *t, struct bd_err *err)
{
        int r = bd_dp_attach(&t->dp, &t->m, (size_t)(t->opt->bucket_mb * (1 << 20)), err);
        t->dp.overlap = t->opt->overlap;
        t->dp.timing = ttrace_on(&t->trace);
        ttrace_reserve(&t->trace, 8 + (size_t)(t->dp.nb > 0 ? t->dp.nb : 0));
        if (r >= 0 && t->dp.size > 1 && t->dp.rank == 0)
                printf("# gradient allreduce: %d bucket%s of about %g MiB, %s\n", t->dp.nb, t->dp.nb == 1 ? "" : "s",
                       t->opt->bucket_mb, t->dp.overlap ? "each started during the backward" : "after the backward");
        if (r >= 0 && t->dp.shared_gpu && t->dp.rank == 0)
                printf("# ranks share a GPU, which NCCL refuses: gradients summed by MPI through host memory\n");
        if (r >= 0 && t->opt->sync_bn && (r = bd_dp_sync_bn(&t->dp, err)) >= 0 && t->dp.size > 1 && t->dp.rank == 0)
                printf("# batch norm: synchronised, statistics over the %d ranks' images\n", t->dp.size);
        if (r >= 0)
                r = bd_dp_broadcast_params(&t->dp, err);
        if (r >= 0)
                r = t->ops->optimizer(t, err);
        return r;
}

static int resume(struct trainer *t, struct bd_err *err)
{
        struct bd_ckpt_meta meta;
        int r = trun_resume(t->opt->checkpoint, t->ops->checkpoint, t->model_name, &t->m, &t->sgd, t->ckpt_path,
                            sizeof(t->ckpt_path), &meta, err);
        if (r <= 0)
                return r;
        return t->ops->resume(t, &meta, err);
}

/* ---- the end ---- */

/* Throughput mode's result (tbench.h) of a run that ended with outcome. */
static void bench_result(struct trainer *t, enum tbench_outcome outcome)
{
        if (!tbench_on(&t->bench))
                return;
        struct tbench_run tr = { .prog = t->prog, .benchmark = t->benchmark,
                                 .argc = t->argc, .argv = t->argv, .device = t->be ? t->be->device_name : "",
                                 .ranks = t->dp.size, .batch = (int)t->global_batch,
                                 .precision = t->opt->amp ? "amp" : "fp32", .result = t->opt->result,
                                 .plan = t->opt->plan };
        struct bd_err err;
        if (tbench_finish(&t->bench, &tr, t->dp.rank, outcome, t->last_loss, &err) < 0)
                fprintf(stderr, "%s: --result: %s\n", t->prog, err.msg);
}

static void release(struct trainer *t)
{
        struct bd_err err;
        if (ttrace_write(&t->trace, &err) < 0)
                fprintf(stderr, "%s: rank %d: --trace: %s\n", t->prog, t->dp.rank, err.msg);
        ttrace_release(&t->trace);
        t->ops->release(t);
        if (t->sgd.mom)
                bd_sgd_release(&t->sgd, &t->m);
        tbench_release(&t->bench);
        if (t->be) {
                bd_model_release(&t->m);
                bd_backend_free(t->be);
        }
        /* last: it may finalise MPI */
        bd_dp_release(&t->dp);
}

/* The run between run_start and run_stop, and what follows. */
static int run(struct trainer *t)
{
        struct bd_err err;
        t->log_t0 = trun_now();
        enum run_end end = t->ops->train(t, &err);
        if (end == RUN_DIVERGED && t->dp.rank == 0)
                fprintf(stderr, "%s: %s\n", t->prog, err.msg);
        else if (end == RUN_FAILED)
                fprintf(stderr, "%s: rank %d: %s\n", t->prog, t->dp.rank, err.msg);
        enum tbench_outcome outcome = tbench_outcome_end(end, t->fail_r);
        bench_result(t, outcome);
        char meta[64];
        snprintf(meta, sizeof(meta), "\"status\": \"%s\"",
                 tbench_success(&t->bench, outcome, end) ? "success" : "aborted");
        MLLOG_END("run_stop", NULL, meta);
        if (t->dp.rank == 0 && !tbench_on(&t->bench)) {
                if (end == RUN_REACHED || end == RUN_NOT_REACHED)
                        t->ops->report(t, end == RUN_REACHED);
                fflush(stdout);
        }
        if (end == RUN_FAILED || end == RUN_FAILED_ELSEWHERE) {
                /* an error on some rank: the others may be anywhere, end them all */
                fflush(NULL);
                MPI_Abort(MPI_COMM_WORLD, 1);
        }
        release(t);
        return end == RUN_DIVERGED ? 1 : 0;
}

int trainer_main(struct trainer *t, const struct trainer_ops *ops, int argc, char **argv)
{
        const struct workload *w = workload_find(ops->workload);
        struct bd_err err;
        int r;
        if (!w)
                abort(); /* a trainer has its row */
        t->ops = ops;
        t->prog = w->program;
        t->benchmark = w->mlperf_name;
        t->eval_step = -1;

        /* options first: --help and usage errors do not start MPI */
        int rank0 = mllog_launch_rank() == 0;
        r = ops->parse(t, argc, argv, rank0 ? stdout : NULL, &err);
        if (r != 0) {
                if (r < 0 && rank0)
                        fprintf(stderr, "%s: %s\n", t->prog, err.msg);
                return r > 0 ? 0 : 2;
        }
        if ((r = bd_dp_init(&t->dp, &argc, &argv, &err)) < 0) {
                fprintf(stderr, "%s: %s\n", t->prog, err.msg);
                return 1;
        }
        t->argc = argc;
        t->argv = argv;
        mllog_init(stdout, t->dp.rank);
        if (ops->setup(t, &err) < 0) {
                if (t->dp.rank == 0)
                        fprintf(stderr, "%s: %s\n", t->prog, err.msg);
                bd_dp_release(&t->dp);
                return 2;
        }
        /* a trace that cannot be written stops every rank before anything starts */
        r = ttrace_init(&t->trace, t->opt->trace, t->dp.rank, (size_t)t->opt->trace_steps, &err);
        if (trun_agree(r) < 0) {
                if (r < 0)
                        fprintf(stderr, "%s: rank %d: %s\n", t->prog, t->dp.rank, err.msg);
                ttrace_release(&t->trace);
                bd_dp_release(&t->dp);
                return 2;
        }
        trun_start(t->opt, t->benchmark, &t->dp);
        tbench_init(&t->bench, t->opt);
        t->last_loss = NAN;

        /* each step's failure on any rank stops all of them (r: this rank's) */
        static int (*const init[])(struct trainer *, struct bd_err *) = { open_backend, open_data, build_model,
                                                                          attach, resume };
        for (size_t i = 0; i < ARRAY_SIZE(init); i++) {
                r = init[i](t, &err);
                if (trun_agree(r) < 0) {
                        /* the ranks where a step failed say why */
                        if (r < 0)
                                trun_print_err(t->prog, &t->dp, &err);
                        bench_result(t, tbench_outcome_of(r));
                        release(t);
                        return 1;
                }
        }
        if (t->dp.rank == 0)
                ops->header(t);
        MLLOG_EVENT("seed", mllog_int((long long)t->opt->seed), NULL);
        MLLOG_EVENT("global_batch_size", mllog_int(t->global_batch), NULL);
        MLLOG_EVENT("train_samples", mllog_int(t->train_size), NULL);
        MLLOG_EVENT("eval_samples", mllog_int(t->eval_samples), NULL);
        ops->log_config(t);
        MLLOG_END("init_stop", NULL, NULL);
        bd_dp_barrier(&t->dp);
        MLLOG_START("run_start", NULL, NULL);
        return run(t);
}

/* ---- the loop ---- */

void trainer_epoch_begin(struct trainer *t, long epoch)
{
        MLLOG_START("epoch_start", NULL, trun_epoch_meta(epoch));
        t->epoch_t0 = trun_now();
        t->epoch_images = 0;
}

void trainer_progress_restart(struct trainer *t)
{
        t->log_t0 = trun_now();
        t->log_images = 0;
}

/* The training step proper; *loss non-finite when the gradients are (then
 * nothing is updated). */
/* With --trace: the phase that ended now (on the device too: a trace
 * synchronises after each phase), from *t0; *t0 moves to now. */
static int trace_phase(struct trainer *t, const char *name, int64_t step, double *t0)
{
        if (!ttrace_on(&t->trace))
                return 0;
        if (t->be && t->be->ops->sync(t->be) < 0)
                return -EIO;
        double now = ttrace_now();
        ttrace_add(&t->trace, name, step, -1, *t0, now);
        *t0 = now;
        return 0;
}

static int train_step(struct trainer *t, int64_t step, double *loss, long *images, struct bd_err *err)
{
        double tp = ttrace_now();
        int r = t->ops->forward(t, step, t->opt->inject_nan == step && t->dp.rank == 0, loss, images, err);
        if (r < 0 || !isfinite(*loss))
                return r;
        trace_phase(t, "forward", step, &tp);
        if ((r = bd_dp_begin_backward(&t->dp, err)) < 0 || (r = t->ops->backward(t, err)) < 0)
                return r;
        trace_phase(t, "backward", step, &tp);
        if ((r = bd_dp_finish(&t->dp, err)) < 0)
                return r;
        /* the wait for the buckets not done by the backward's end */
        trace_phase(t, "allreduce wait", step, &tp);
        for (int i = 0; ttrace_on(&t->trace) && t->dp.size > 1 && i < t->dp.nb; i++)
                if (t->dp.b[i].t_launch > 0 && t->dp.b[i].t_done >= t->dp.b[i].t_launch)
                        ttrace_add(&t->trace, "bucket", step, i, t->dp.b[i].t_launch, t->dp.b[i].t_done);
        if (!t->opt->amp) {
                /* the summed gradients are the same on every rank: so is this decision
                 * (a NaN can hide from the loss: the core's ReLU maps it to 0) */
                struct bd_tensor g = bd_model_all_grads(&t->m);
                double bad = 0;
                if ((r = bd_op_count_nonfinite(t->be, &g, &bad)) < 0)
                        return bd_err_set(err, r, "%s", t->be->err.msg);
                if (bad > 0) {
                        *loss = NAN;
                        return 0;
                }
        }
        if ((r = bd_sgd_step(&t->sgd, &t->m, 1.0 / t->dp.size, &t->info)) < 0)
                return bd_err_set(err, r, "optimiser: %s", t->be->err.msg);
        trace_phase(t, "optimizer", step, &tp);
        return 0;
}

bool trainer_step(struct trainer *t, int64_t step, long epoch, enum run_end *end, struct bd_err *err)
{
        double loss = NAN;
        long images = 0;
        double t0 = ttrace_on(&t->trace) ? ttrace_now() : 0, tp = t0;
        if (t->ops->next(t, err) < 0) {
                *end = RUN_FAILED;
                return false;
        }
        trace_phase(t, "data", step, &tp);
        t->info = (struct bd_step_info){ 0 };
        int r = tbench_begin(&t->bench, t->be, step);
        if (r < 0)
                bd_err_set(err, r, "%s", t->be->err.msg);
        else
                r = train_step(t, step, &loss, &images, err);
        if (r < 0) {
                t->fail_r = r;
                *end = RUN_FAILED;
                return false;
        }
        t->last_loss = loss;
        if (!isfinite(loss)) {
                bd_err_set(err, -EDOM, "the loss is %s at epoch %ld, step %lld: stopping (run_stop status aborted)",
                           isnan(loss) ? "NaN" : isinf(loss) ? "infinite" : "finite but the gradients are not", epoch,
                           (long long)step);
                *end = RUN_DIVERGED;
                return false;
        }
        /* a finite step: one that diverged is no observation */
        if ((r = tbench_end(&t->bench, t->be, step, (double)images)) < 0) {
                t->fail_r = bd_err_set(err, r, "%s", t->be->err.msg);
                *end = RUN_FAILED;
                return false;
        }
        t->epoch_images += images;
        t->log_images += images;
        if (ttrace_on(&t->trace))
                ttrace_add(&t->trace, "step", step, -1, t0, ttrace_now());
        return true;
}

bool trainer_max_steps(const struct trainer *t, int64_t step)
{
        return t->opt->max_steps && step >= t->opt->max_steps;
}

bool trainer_progress_due(const struct trainer *t, int64_t step, bool last)
{
        return t->dp.rank == 0 && (step % t->opt->log_interval == 0 || last);
}

void trainer_progress(struct trainer *t, const char *head)
{
        double now = trun_now(), rate = t->log_images / (now - t->log_t0);
        if (t->opt->plan)       /* no arithmetic: no rate */
                printf("%s, lr %.6g\n", head, t->info.lr);
        else
                printf("%s, lr %.6g, %.*f images/s\n", head, t->info.lr, trun_rate_decimals(rate), rate);
        fflush(stdout);
        t->log_t0 = now;
        t->log_images = 0;
}

void trainer_epoch_end(struct trainer *t, long epoch, const char *block_meta)
{
        double dt = trun_now() - t->epoch_t0, rate = t->epoch_images / dt;
        MLLOG_END("epoch_stop", NULL, trun_epoch_meta(epoch));
        if (!t->opt->plan)
                MLLOG_EVENT("throughput", mllog_num(rate), trun_epoch_meta(epoch));
        if (block_meta)
                MLLOG_END("block_stop", NULL, block_meta);
        if (t->dp.rank == 0 && t->opt->plan)
                printf("epoch %ld: %.1f s\n", epoch, dt);
        else if (t->dp.rank == 0)
                printf("epoch %ld: %.1f s, %.*f images/s\n", epoch, dt, trun_rate_decimals(rate), rate);
}

void trainer_checkpoint(struct trainer *t, int64_t step, long epoch)
{
        if (!t->ckpt_path[0] || t->dp.rank != 0)
                return;
        struct bd_ckpt_meta meta = { .iter = step, .epoch = epoch };
        struct bd_err err;
        snprintf(meta.model, sizeof(meta.model), "%s", t->model_name);
        /* a warning: the run goes on */
        if (bd_ckpt_save(t->ckpt_path, &t->m, &t->sgd, &meta, &err) < 0)
                fprintf(stderr, "%s: %s, continuing without it\n", t->prog, err.msg);
}

bool trainer_evaluate(struct trainer *t, int64_t step, long epoch, enum run_end *end, struct bd_err *err)
{
        struct trainer_eval ev = { .reached = false };
        double start = trun_now(), tw = ttrace_now();
        MLLOG_START("eval_start", NULL, trun_epoch_meta(epoch));
        double te = trun_now();
        int r = t->ops->evaluate(t, step, epoch, &ev, err);
        if (trun_agree(r) < 0) {
                *end = r < 0 ? RUN_FAILED : RUN_FAILED_ELSEWHERE;
                return false;
        }
        MLLOG_EVENT("eval_accuracy", ev.accuracy, trun_epoch_meta(epoch));
        MLLOG_END("eval_stop", NULL, trun_epoch_meta(epoch));
        if (t->dp.rank == 0) {
                printf("%s, evaluation %.1f s\n", ev.line, trun_now() - te);
                fflush(stdout);
        }
        if (ttrace_on(&t->trace))
                ttrace_add(&t->trace, "eval", step, -1, tw, ttrace_now());
        /* the training rates leave the evaluation out */
        t->epoch_t0 += trun_now() - start;
        t->log_t0 = trun_now();
        *end = RUN_REACHED;
        t->eval_step = step;
        if (ev.reached && !t->reached && t->opt->fixed && t->dp.rank == 0)
                printf("# target met at step %lld (epoch %ld); the fixed schedule goes on\n", (long long)step, epoch);
        t->reached |= ev.reached;
        return !ev.reached || t->opt->fixed;
}

enum run_end trainer_schedule_end(struct trainer *t, int64_t step, long epoch, bool can_eval, struct bd_err *err)
{
        if (!t->opt->fixed)
                return RUN_NOT_REACHED;
        enum run_end end;
        if (can_eval && t->eval_step != step && !trainer_evaluate(t, step, epoch, &end, err))
                return end;
        return t->reached ? RUN_REACHED : RUN_NOT_REACHED;
}

void trainer_warn(void *ctx, const char *msg)
{
        struct trainer *t = ctx;
        if (t->dp.rank == 0)
                fprintf(stderr, "%s: warning: %s\n", t->prog, msg);
}

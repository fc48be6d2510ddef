/* trainer-tool.c: the trainer core driven from shell tests.
 *
 *   trainer-tool train [options]      a small ResNet classifier on synthetic
 *                                     data, data-parallel under mpirun,
 *                                     checkpointing and resuming
 *   trainer-tool compare A B          largest difference of two raw f32 files
 *   trainer-tool load-weights FILE    load a weights file into a ResNet
 *   trainer-tool save-weights FILE    write a ResNet's initial weights
 *   trainer-tool load-checkpoint FILE load a checkpoint into a ResNet
 *
 * Synthetic data: sample i of step t is a deterministic function of (seed,
 * t, i), its label i % classes; each rank takes a contiguous share of the
 * global batch.  The loss is the mean over the global batch, so one rank on
 * the whole batch and N ranks on shares compute the same gradient.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "dp.h"
#include "fs.h"
#include "optim.h"
#include "resnet.h"
#include "strutil.h"

struct opts {
        int depth, width, classes, size, batch, steps, threads, save_every, kill_after, resume, frozen_bn, freeze_at;
        int no_overlap, sync_bn, stages, any_model, strict, amp;
        const char *ignore;
        long bucket_kb;
        double lr, momentum, wd, clip;
        unsigned long long seed;
        const char *backend, *checkpoint, *params_out, *prefix;
};

static void usage(FILE *f)
{
        fprintf(f, "usage: trainer-tool train [options]\n"
                   "       trainer-tool compare FILE_A FILE_B\n"
                   "       trainer-tool load-weights|save-weights|load-checkpoint FILE [options]\n\n"
                   "  --depth N          ResNet depth: 18, 34, 50 (default 18)\n"
                   "  --width N          channels of the first stage (default 16)\n"
                   "  --stages N         stages built (default 4)\n"
                   "  --classes N        classification head outputs (default 10)\n"
                   "  --size N           image height and width (default 32)\n"
                   "  --batch N          global batch, split over the ranks (default 8)\n"
                   "  --steps N          training steps in all (default 4)\n"
                   "  --lr X --momentum X --weight-decay X --clip X\n"
                   "  --seed N           data and initialisation seed (default 1)\n"
                   "  --frozen-bn        batch norm as frozen affine maps\n"
                   "  --freeze-at N      frozen stages as in maskrcnn-benchmark\n"
                   "  --backend cpu|cuda --threads N\n"
                   "  --precision fp32|amp  mixed precision (f16 activations) on CUDA\n"
                   "  --bucket-kb N      gradient allreduce bucket size (default 256)\n"
                   "  --no-overlap       one allreduce after the backward\n"
                   "  --sync-bn          synchronised batch norm (statistics over all ranks)\n"
                   "  --checkpoint FILE  --save-every N --resume\n"
                   "  --kill-after N     SIGKILL itself after N steps of this run\n"
                   "  --params-out FILE  rank 0 writes the final parameters (raw f32)\n"
                   "  --prefix P         parameter name prefix (default none)\n"
                   "  --any-model        load-checkpoint: do not check the model name\n"
                   "  --strict           load-weights: file and model tensors must match\n"
                   "  --ignore PREFIX    load-weights --strict: except those under PREFIX\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
        static const struct option lo[] = {
                { "depth", 1, 0, 'd' },       { "width", 1, 0, 'w' },      { "classes", 1, 0, 'k' },
                { "size", 1, 0, 'S' },        { "batch", 1, 0, 'b' },      { "steps", 1, 0, 'n' },
                { "lr", 1, 0, 'l' },          { "momentum", 1, 0, 'm' },   { "weight-decay", 1, 0, 'W' },
                { "clip", 1, 0, 'C' },        { "seed", 1, 0, 's' },       { "frozen-bn", 0, 0, 'F' },
                { "freeze-at", 1, 0, 'z' },   { "backend", 1, 0, 'B' },    { "threads", 1, 0, 't' },
                { "bucket-kb", 1, 0, 'K' },   { "no-overlap", 0, 0, 'O' }, { "checkpoint", 1, 0, 'c' },
                { "save-every", 1, 0, 'e' },  { "resume", 0, 0, 'r' },     { "kill-after", 1, 0, 'x' },
                { "params-out", 1, 0, 'p' },  { "prefix", 1, 0, 'P' },     { "stages", 1, 0, 'g' },
                { "precision", 1, 0, 'Q' },   { "any-model", 0, 0, 'A' },   { "strict", 0, 0, 'T' },     { "ignore", 1, 0, 'I' },
                { "sync-bn", 0, 0, 'Y' },     { "help", 0, 0, 'h' },       { 0, 0, 0, 0 },
        };
        *o = (struct opts){ .depth = 18, .width = 16, .classes = 10, .size = 32, .batch = 8, .steps = 4, .lr = 0.05,
                            .momentum = 0.9, .wd = 1e-4, .seed = 1, .backend = "cpu", .bucket_kb = 256, .prefix = "" };
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
                switch (c) {
                case 'd': o->depth = atoi(optarg); break;
                case 'w': o->width = atoi(optarg); break;
                case 'k': o->classes = atoi(optarg); break;
                case 'S': o->size = atoi(optarg); break;
                case 'b': o->batch = atoi(optarg); break;
                case 'n': o->steps = atoi(optarg); break;
                case 'l': o->lr = strtod(optarg, NULL); break;
                case 'm': o->momentum = strtod(optarg, NULL); break;
                case 'W': o->wd = strtod(optarg, NULL); break;
                case 'C': o->clip = strtod(optarg, NULL); break;
                case 's': o->seed = strtoull(optarg, NULL, 10); break;
                case 'F': o->frozen_bn = 1; break;
                case 'z': o->freeze_at = atoi(optarg); break;
                case 'B': o->backend = optarg; break;
                case 't': o->threads = atoi(optarg); break;
                case 'K': o->bucket_kb = atol(optarg); break;
                case 'O': o->no_overlap = 1; break;
                case 'Y': o->sync_bn = 1; break;
                case 'c': o->checkpoint = optarg; break;
                case 'e': o->save_every = atoi(optarg); break;
                case 'r': o->resume = 1; break;
                case 'x': o->kill_after = atoi(optarg); break;
                case 'p': o->params_out = optarg; break;
                case 'P': o->prefix = optarg; break;
                case 'g': o->stages = atoi(optarg); break;
                case 'A': o->any_model = 1; break;
                case 'Q':
                        if (streq(optarg, "amp"))
                                o->amp = 1;
                        else if (!streq(optarg, "fp32")) {
                                fprintf(stderr, "trainer-tool: --precision: expected fp32 or amp\n");
                                return -EINVAL;
                        }
                        break;
                case 'T': o->strict = 1; break;
                case 'I': o->ignore = optarg; break;
                case 'h': usage(stdout); exit(0);
                default: usage(stderr); return -EINVAL;
                }
        }
        return 0;
}

struct net {
        struct bd_backend *be;
        struct bd_model m;
        struct bd_resnet r;
        char name[64];
};

static int net_build(struct net *n, const struct opts *o, int local_rank, struct bd_err *err)
{
        int ndev = streq(o->backend, "cuda") ? bd_cuda_device_count(NULL) : 1;
        int r = bd_backend_new(o->backend, ndev > 0 ? local_rank % ndev : 0, o->threads, &n->be, err);
        if (r < 0)
                return r;
        bd_model_init(&n->m, n->be, BD_F32);
        struct bd_resnet_cfg cfg = { .depth = o->depth, .stages = o->stages, .num_classes = o->classes,
                                     .width = o->width, .freeze_at = o->freeze_at,
                                     .bn = o->frozen_bn ? BD_BN_FROZEN : BD_BN_TRAIN };
        if ((r = bd_resnet_init(&n->r, &n->m, o->prefix, &cfg)) < 0)
                return bd_err_set(err, r, "%s", n->be->err.msg);
        if ((r = bd_model_finalize(&n->m, err)) < 0 || (r = bd_model_init_params(&n->m, o->seed, err)) < 0)
                return r;
        snprintf(n->name, sizeof(n->name), "resnet%d-w%d-c%d", o->depth, o->width, o->classes);
        return 0;
}

static void net_free(struct net *n)
{
        bd_resnet_release(&n->r);
        bd_model_release(&n->m);
        bd_backend_free(n->be);
}

/* sample i of step t: noise plus a class-dependent ramp */
static void make_batch(const struct opts *o, int64_t step, int first, int count, float *x, int32_t *labels)
{
        int64_t per = 3LL * o->size * o->size;
        for (int j = 0; j < count; j++) {
                int64_t i = first + j;
                int label = (int)(i % o->classes);
                struct bd_rng rng;
                bd_rng_seed(&rng, o->seed, (uint64_t)step * 1000003ULL + (uint64_t)i);
                for (int64_t k = 0; k < per; k++) {
                        int64_t w = k % o->size;
                        x[j * per + k] = (float)(0.5 * bd_rng_normal(&rng) + 0.1 * label * ((double)w / o->size - 0.5));
                }
                labels[j] = label;
        }
}

static int cmd_train(int argc, char **argv)
{
        struct opts o;
        struct bd_err err;
        struct bd_dp dp;
        struct net n = { 0 };
        float *hx = NULL;
        int32_t *hl = NULL;
        struct bd_tensor x = { 0 }, lab = { 0 }, loss = { 0 }, dlogits = { 0 }, xs = { 0 }, xh = { 0 }, l32 = { 0 },
                         dl16 = { 0 };
        if (parse(argc, argv, &o) < 0)
                return 2;
        if (bd_dp_init(&dp, &argc, &argv, &err) < 0) {
                fprintf(stderr, "trainer-tool: %s\n", err.msg);
                return 1;
        }
        int rc = 1;
        if (o.batch % dp.size) {
                fprintf(stderr, "trainer-tool: --batch %d does not split over %d ranks\n", o.batch, dp.size);
                goto out;
        }
        if (net_build(&n, &o, dp.local_rank, &err) < 0 || bd_dp_attach(&dp, &n.m, (size_t)o.bucket_kb * 1024, &err) < 0 ||
            (o.sync_bn && bd_dp_sync_bn(&dp, &err) < 0)) {
                fprintf(stderr, "trainer-tool: %s\n", err.msg);
                goto out;
        }
        dp.overlap = !o.no_overlap;
        if (dp.shared_gpu && dp.rank == 0)
                printf("ranks share a GPU: gradients by MPI through host memory\n");
        struct bd_sgd sgd;
        struct bd_sgd_cfg sc = { .lr = o.lr, .momentum = o.momentum, .weight_decay = o.wd, .warmup_factor = 0.1,
                                 .warmup_iters = 2, .milestones = { 3 }, .nmilestones = 1, .gamma = 0.5,
                                 .clip_norm = o.clip, .loss_scaling = o.amp };
        if (o.amp && n.be->dev != BD_CUDA) {
                fprintf(stderr, "trainer-tool: --precision amp needs --backend cuda\n");
                goto out;
        }
        if (bd_sgd_init(&sgd, &n.m, &sc, &err) < 0) {
                fprintf(stderr, "trainer-tool: %s\n", err.msg);
                goto out;
        }
        struct bd_ckpt_meta meta = { 0 };
        snprintf(meta.model, sizeof(meta.model), "%s", n.name);
        int64_t start = 0;
        struct stat st;
        if (o.resume && o.checkpoint && stat(o.checkpoint, &st) == 0) {
                if (bd_ckpt_load(o.checkpoint, &n.m, &sgd, &meta, &err) < 0) {
                        fprintf(stderr, "trainer-tool: %s\n", err.msg);
                        goto out_sgd;
                }
                start = meta.iter;
                if (dp.rank == 0)
                        printf("resumed at step %lld\n", (long long)start);
        } else if (bd_dp_broadcast_params(&dp, &err) < 0) {
                fprintf(stderr, "trainer-tool: %s\n", err.msg);
                goto out_sgd;
        }
        int local = o.batch / dp.size;
        struct bd_backend *be = n.be;
        int64_t xd[4] = { local, 3, o.size, o.size }, ld = local;
        hx = xmalloc((size_t)local * 3 * (size_t)o.size * (size_t)o.size * sizeof(float));
        hl = xmalloc((size_t)local * sizeof(int32_t));
        struct bd_tensor hxt = bd_tensor_view(hx, BD_CPU, BD_F32, BD_NCHW, 4, xd);
        struct bd_tensor hlt = bd_tensor_view(hl, BD_CPU, BD_I32, BD_NCHW, 1, &ld);
        for (int64_t t = start; t < o.steps; t++) {
                make_batch(&o, t, dp.rank * local, local, hx, hl);
                double lsum = 0;
                int r;
                bd_model_begin_step(&n.m);
                const struct bd_tensor *in = &x, *logits = &n.r.logits, *dl = &dlogits;
                if ((r = bd_op_copy(be, &hxt, &x)) < 0 || (r = bd_op_copy(be, &hlt, &lab)) < 0)
                        goto step_failed;
                if (o.amp) {    /* half activations in NHWC; loss in float32, scaled */
                        if ((r = bd_op_cast(be, &x, BD_F16, 1.0, &xs)) < 0 || (r = bd_op_relayout(be, &xs, BD_NHWC, &xh)) < 0)
                                goto step_failed;
                        in = &xh;
                }
                if ((r = bd_resnet_fwd(&n.m, &n.r, in)) < 0)
                        goto step_failed;
                if (o.amp) {
                        if ((r = bd_op_cast(be, &n.r.logits, BD_F32, 1.0, &l32)) < 0)
                                goto step_failed;
                        logits = &l32;
                }
                if ((r = bd_op_softmax_ce(be, logits, &lab, NULL, sgd.loss_scale / o.batch, &loss, &dlogits)) < 0 ||
                    (r = bd_op_sum(be, &loss, &lsum)) < 0)
                        goto step_failed;
                if (o.amp) {
                        if ((r = bd_op_cast(be, &dlogits, BD_F16, 1.0, &dl16)) < 0)
                                goto step_failed;
                        dl = &dl16;
                }
                if ((r = bd_dp_begin_backward(&dp, &err)) < 0 || (r = bd_resnet_bwd(&n.m, &n.r, NULL, dl)) < 0) {
step_failed:
                        fprintf(stderr, "trainer-tool: step %lld: %s\n", (long long)t, r == -EIO ? err.msg : be->err.msg);
                        goto out_t;
                }
                if (bd_dp_finish(&dp, &err) < 0) {
                        fprintf(stderr, "trainer-tool: step %lld: %s\n", (long long)t, err.msg);
                        goto out_t;
                }
                struct bd_step_info info;
                if ((r = bd_sgd_step(&sgd, &n.m, 1.0, &info)) < 0) {
                        fprintf(stderr, "trainer-tool: step %lld: %s\n", (long long)t, be->err.msg);
                        goto out_t;
                }
                lsum /= o.batch;
                if (bd_dp_sum(&dp, &lsum, 1, &err) < 0) {
                        fprintf(stderr, "trainer-tool: step %lld: %s\n", (long long)t, err.msg);
                        goto out_t;
                }
                if (dp.rank == 0) {
                        printf("step %lld loss %.9g lr %.6g", (long long)t + 1, lsum, info.lr);
                        if (o.amp)
                                printf(" loss-scale %g%s", info.loss_scale, info.skipped ? " skipped" : "");
                        if (info.grad_norm >= 0)
                                printf(" grad-norm %.6g", info.grad_norm);
                        printf("\n");
                        fflush(stdout);
                }
                if (o.checkpoint && o.save_every > 0 && (t + 1) % o.save_every == 0 && dp.rank == 0) {
                        meta.iter = t + 1;
                        if (bd_ckpt_save(o.checkpoint, &n.m, &sgd, &meta, &err) < 0) {
                                fprintf(stderr, "trainer-tool: %s\n", err.msg);
                                goto out_t;
                        }
                }
                if (o.kill_after > 0 && t + 1 - start >= o.kill_after)
                        raise(SIGKILL);
        }
        int same = 0;
        if (bd_dp_params_identical(&dp, &same, &err) < 0) {
                fprintf(stderr, "trainer-tool: %s\n", err.msg);
                goto out_t;
        }
        if (dp.rank == 0) {
                printf("ranks %d identical %s\n", dp.size, same ? "yes" : "no");
                if (o.params_out) {
                        _cleanup_free_ float *p = xmalloc(n.m.n_all * sizeof(float) + 1);
                        bd_model_get_params(&n.m, p);
                        be->ops->sync(be);
                        if (fs_write_atomic(o.params_out, p, n.m.n_all * sizeof(float), 0644, &err) < 0) {
                                fprintf(stderr, "trainer-tool: %s\n", err.msg);
                                goto out_t;
                        }
                }
        }
        rc = 0;
out_t:
        bd_tensor_release(&xs);
        bd_tensor_release(&xh);
        bd_tensor_release(&l32);
        bd_tensor_release(&dl16);
        free(hx);
        free(hl);
        bd_tensor_release(&x);
        bd_tensor_release(&lab);
        bd_tensor_release(&loss);
        bd_tensor_release(&dlogits);
out_sgd:
        bd_sgd_release(&sgd, &n.m);
out:
        if (n.be) {
                bd_dp_release(&dp);
                net_free(&n);
        } else {
                bd_dp_release(&dp);
        }
        return rc;
}

static int cmd_compare(int argc, char **argv)
{
        if (argc != 3) {
                usage(stderr);
                return 2;
        }
        struct bd_err err;
        _cleanup_free_ char *a = NULL, *b = NULL;
        size_t la, lb;
        if (fs_read_file(argv[1], (size_t)1 << 32, &a, &la, &err) < 0 || fs_read_file(argv[2], (size_t)1 << 32, &b, &lb, &err) < 0) {
                fprintf(stderr, "trainer-tool: %s\n", err.msg);
                return 1;
        }
        if (la != lb || la % 4) {
                fprintf(stderr, "trainer-tool: sizes differ (%zu and %zu bytes)\n", la, lb);
                return 1;
        }
        double maxabs = 0, maxd = 0;
        size_t n = la / 4;
        for (size_t i = 0; i < n; i++) {
                float x, y;
                memcpy(&x, a + 4 * i, 4);
                memcpy(&y, b + 4 * i, 4);
                maxabs = fmax(maxabs, fabs((double)y));
                maxd = fmax(maxd, fabs((double)x - (double)y));
                if (x != x || y != y)
                        maxd = INFINITY;
        }
        printf("values %zu max-abs-diff %.3g max-abs %.3g relative %.3g\n", n, maxd, maxabs,
               maxd / (maxabs > 0 ? maxabs : 1));
        return 0;
}

/* "COMMAND FILE [options]": parses the options and builds the network;
 * returns the exit status to use on failure, 0 on success */
static int file_command(int argc, char **argv, struct opts *o, struct net *n)
{
        struct bd_err err;
        if (argc < 2) {
                usage(stderr);
                return 2;
        }
        if (parse(argc - 1, argv + 1, o) < 0)
                return 2;
        if (net_build(n, o, 0, &err) < 0) {
                fprintf(stderr, "trainer-tool: %s\n", err.msg);
                return 1;
        }
        return 0;
}

static int cmd_weights(int argc, char **argv, int save)
{
        struct opts o;
        struct bd_err err;
        struct net n = { 0 };
        int rc = file_command(argc, argv, &o, &n);
        if (rc)
                return rc;
        const char *file = argv[1];
        if (save) {
                if (bd_weights_save(file, &n.m, o.prefix, "trainer-tool", &err) < 0)
                        rc = 1;
        } else {
                struct bd_weights_report rep;
                _cleanup_free_ float *before = xmalloc(n.m.n_all * sizeof(float) + 1), *after = xmalloc(n.m.n_all * sizeof(float) + 1);
                bd_model_get_params(&n.m, before);
                const char *ign[2] = { o.ignore, NULL };
                unsigned fl = o.strict ? BD_WEIGHTS_STRICT | BD_WEIGHTS_COMPLETE : 0;
                if (bd_weights_load(file, &n.m, o.prefix, ign, fl, &rep, &err) < 0) {
                        bd_model_get_params(&n.m, after);
                        rc = 1;
                        if (memcmp(before, after, n.m.n_all * sizeof(float)) != 0)
                                fprintf(stderr, "trainer-tool: BUG: a failed load changed the model\n");
                } else {
                        printf("loaded %d skipped %d source '%s'\n", rep.loaded, rep.skipped, rep.source);
                }
        }
        if (rc)
                fprintf(stderr, "trainer-tool: %s\n", err.msg);
        net_free(&n);
        return rc;
}

static int cmd_load_ckpt(int argc, char **argv)
{
        struct opts o;
        struct bd_err err;
        struct net n = { 0 };
        int rc = file_command(argc, argv, &o, &n);
        if (rc)
                return rc;
        struct bd_sgd sgd;
        struct bd_sgd_cfg sc = { .lr = 0.1 };
        bd_sgd_init(&sgd, &n.m, &sc, &err);
        struct bd_ckpt_meta meta = { 0 };
        if (!o.any_model)
                snprintf(meta.model, sizeof(meta.model), "%s", n.name);
        _cleanup_free_ float *before = xmalloc(n.m.n_all * sizeof(float) + 1), *after = xmalloc(n.m.n_all * sizeof(float) + 1);
        bd_model_get_params(&n.m, before);
        if (bd_ckpt_load(argv[1], &n.m, &sgd, &meta, &err) < 0) {
                fprintf(stderr, "trainer-tool: %s\n", err.msg);
                bd_model_get_params(&n.m, after);
                if (memcmp(before, after, n.m.n_all * sizeof(float)) != 0)
                        fprintf(stderr, "trainer-tool: BUG: a failed load changed the model\n");
                rc = 1;
        } else {
                printf("loaded '%s' at step %lld\n", meta.model, (long long)meta.iter);
        }
        bd_sgd_release(&sgd, &n.m);
        net_free(&n);
        return rc;
}

int main(int argc, char **argv)
{
        if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h")) {
                usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? 2 : 0;
        }
        if (streq(argv[1], "train"))
                return cmd_train(argc - 1, argv + 1);
        if (streq(argv[1], "compare"))
                return cmd_compare(argc - 1, argv + 1);
        if (streq(argv[1], "load-weights"))
                return cmd_weights(argc - 1, argv + 1, 0);
        if (streq(argv[1], "save-weights"))
                return cmd_weights(argc - 1, argv + 1, 1);
        if (streq(argv[1], "load-checkpoint"))
                return cmd_load_ckpt(argc - 1, argv + 1);
        fprintf(stderr, "trainer-tool: unknown command '%s'\n", argv[1]);
        return 2;
}

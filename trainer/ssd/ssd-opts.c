/* ssd-opts.c: benchd-ssd's command line, from one table. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "ssd-opts.h"
#include "topts.h"

enum {
        O_DATA = 256, O_BATCH, O_LR, O_WARMUP, O_WD, O_EPOCHS, O_DECAY, O_EVAL, O_TARGET, O_SIZE, O_BACKBONE,
        O_WIDTH,
};

static const struct topt opts[] = {
        { "data", O_DATA, "DIR", "COCO 2017 tree: train2017/, val2017/, annotations/" },
        { "batch-size", O_BATCH, "N", "images per rank per step (default 32)" },
        { "lr", O_LR, "LR", "learning rate as in the MLPerf configs (default 2.5e-3); the base rate is\n"
                            "2.5e-3 max(1, round(LR / 2.5e-3 x global batch / 32))" },
        { "warmup-epochs", O_WARMUP, "E", "linear warmup from 0 over E epochs of samples (default 5); the MLPerf\n"
                                          "compliance checker needs at least 1 warmup step: 0 is not compliant" },
        { "weight-decay", O_WD, "WD", "weight decay of the weights (default 5e-4)" },
        { "epochs", O_EPOCHS, "N", "at most N epochs (default 80)" },
        { "decay-epochs", O_DECAY, "E,E", "learning rate x0.1 at these epochs (default 44,55; empty: never)" },
        { "eval-epochs", O_EVAL, "E,E,...", "evaluate after these epochs, none beyond --epochs (default those of\n"
                                            "40,50,55,60,65,70,75,80 up to --epochs; empty: never)" },
        { "target-map", O_TARGET, "MAP", "stop when the bbox mAP reaches this (default 0.23)" },
        { "image-size", O_SIZE, "S", "square input size (default 300)" },
        { "backbone", O_BACKBONE, "NAME", "resnet34 (default) or resnet18" },
        { "width-mult", O_WIDTH, "W", "channel width multiplier (default 1)" },
        TOPT_COMMON_ROWS("ssd.ckpt", "random images and boxes"),
};

static void usage(FILE *f)
{
        topt_usage(f, "usage: benchd-ssd --data DIR [OPTIONS]\n\n"
                      "Train the MLPerf single-stage detector (SSD300, ResNet-34 backbone) on COCO,\n"
                      "data-parallel over the MPI ranks, evaluating the bbox mAP at the given epochs\n"
                      "until it reaches the target; MLPerf log lines from rank 0.\n\n",
                   opts, sizeof(opts) / sizeof(opts[0]));
}

static const struct topt_prog prog = { "benchd-ssd", usage };

int ssd_opts_parse(int argc, char **argv, struct ssd_opts *o, FILE *out, struct bd_err *err)
{
        static const double def_decay[] = { 44, 55 };
        static const int def_eval[] = { 40, 50, 55, 60, 65, 70, 75, 80 };
        *o = (struct ssd_opts){ .batch_size = 32, .lr = 2.5e-3, .warmup_epochs = 5, .weight_decay = 5e-4,
                                .epochs = 80, .ndecay = 2, .neval = 8, .target_map = 0.23, .image_size = 300,
                                .depth = 34, .width_mult = 1 };
        topt_common_defaults(&o->common);
        memcpy(o->decay_epochs, def_decay, sizeof(def_decay));
        memcpy(o->eval_epochs, def_eval, sizeof(def_eval));
        struct option lo[sizeof(opts) / sizeof(opts[0]) + 1];
        size_t nopts = sizeof(opts) / sizeof(opts[0]);
        topt_long(opts, nopts, lo);
        opterr = 0;
        optind = 1;
        int c, r;
        long v;
        double list[SSD_MAX_EVALS];
        int n, eval_given = 0;
        while ((c = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
                const char *bad = NULL;
                switch (c) {
                case O_DATA: o->data = optarg; break;
                case O_BATCH: if (topt_int(optarg, 1, 65536, &v) < 0) bad = "an integer from 1 to 65536"; else o->batch_size = (int)v; break;
                case O_LR: if (topt_num(optarg, 1e-12, 100, &o->lr) < 0) bad = "a number in (0, 100]"; break;
                case O_WARMUP: if (topt_num(optarg, 0, 1000, &o->warmup_epochs) < 0) bad = "a number from 0 to 1000"; break;
                case O_WD: if (topt_num(optarg, 0, 1, &o->weight_decay) < 0) bad = "a number from 0 to 1"; break;
                case O_EPOCHS: if (topt_int(optarg, 1, 10000, &v) < 0) bad = "an integer from 1 to 10000"; else o->epochs = (int)v; break;
                case O_DECAY:
                        if (topt_num_list(optarg, 0, 10000, o->decay_epochs, SSD_MAX_DECAYS, &o->ndecay) < 0)
                                bad = "increasing epochs separated by commas (at most 8)";
                        break;
                case O_EVAL:
                        if (topt_num_list(optarg, 1, 10000, list, SSD_MAX_EVALS, &n) < 0) {
                                bad = "increasing epochs separated by commas (at most 64)";
                                break;
                        }
                        for (int i = 0; i < n; i++) {
                                if (list[i] != floor(list[i]))
                                        bad = "whole epochs separated by commas";
                                o->eval_epochs[i] = (int)list[i];
                        }
                        o->neval = n;
                        eval_given = 1;
                        break;
                case O_TARGET: if (topt_num(optarg, 0, 1, &o->target_map) < 0) bad = "a number from 0 to 1"; break;
                case O_SIZE: if (topt_int(optarg, 32, 2048, &v) < 0) bad = "an integer from 32 to 2048"; else o->image_size = (int)v; break;
                case O_BACKBONE:
                        if (!strcmp(optarg, "resnet34"))
                                o->depth = 34;
                        else if (!strcmp(optarg, "resnet18"))
                                o->depth = 18;
                        else
                                bad = "resnet34 or resnet18";
                        break;
                case O_WIDTH: if (topt_num(optarg, 0.01, 4, &o->width_mult) < 0) bad = "a number from 0.01 to 4"; break;
                default:
                        if ((r = topt_common(c, optarg, &o->common, &bad, &prog, out, argv, err)) != 0)
                                return r;
                        break;
                }
                if (bad) {
                        return bd_err_set(err, -EINVAL, "--%s: expected %s, got '%s'", topt_name(opts, nopts, c), bad,
                                          optarg);
                }
        }
        if (optind < argc)
                return bd_err_set(err, -EINVAL, "unexpected argument '%s'", argv[optind]);
        /* an evaluation after the last epoch never happens: the run would end
         * "aborted" without it; the default list is cut at --epochs */
        for (int i = 0; i < o->neval; i++)
                if (o->eval_epochs[i] > o->epochs) {
                        if (eval_given)
                                return bd_err_set(err, -EINVAL, "--eval-epochs: epoch %d is beyond --epochs %d",
                                                  o->eval_epochs[i], o->epochs);
                        o->neval = i;
                }
        if (!o->data && !o->common.synthetic)
                return bd_err_set(err, -EINVAL, "--data DIR is required (or --synthetic)");
        if (o->common.amp && !o->common.cuda)
                return bd_err_set(err, -EINVAL, "--precision amp needs --backend cuda");
        return 0;
}

/* ssd-opts.c: benchd-ssd's command line, from one table. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "macro.h"
#include "ssd-opts.h"
#include "topts.h"

enum {
        O_BATCH = TOPT_OWN, O_LR, O_WARMUP, O_WD, O_EPOCHS, O_DECAY, O_EVAL, O_TARGET, O_SIZE, O_BACKBONE, O_WIDTH,
};

static const struct topt opts[] = {
        TOPT_DATA_ROW,
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

/* One of benchd-ssd's own options (topts.h). */
static const char *set(void *ctx, int id, const char *arg)
{
        struct ssd_opts *o = ctx;
        double list[SSD_MAX_EVALS];
        long v;
        int n;
        switch (id) {
        case O_BATCH: if (topt_int(arg, 1, 65536, &v) < 0) return "an integer from 1 to 65536"; o->batch_size = (int)v; break;
        case O_LR: if (topt_num(arg, 1e-12, 100, &o->lr) < 0) return "a number in (0, 100]"; break;
        case O_WARMUP: if (topt_num(arg, 0, 1000, &o->warmup_epochs) < 0) return "a number from 0 to 1000"; break;
        case O_WD: if (topt_num(arg, 0, 1, &o->weight_decay) < 0) return "a number from 0 to 1"; break;
        case O_EPOCHS: if (topt_int(arg, 1, 10000, &v) < 0) return "an integer from 1 to 10000"; o->epochs = (int)v; break;
        case O_DECAY:
                if (topt_num_list(arg, 0, 10000, o->decay_epochs, SSD_MAX_DECAYS, &o->ndecay) < 0)
                        return "increasing epochs separated by commas (at most 8)";
                break;
        case O_EVAL:
                if (topt_num_list(arg, 1, 10000, list, SSD_MAX_EVALS, &n) < 0)
                        return "increasing epochs separated by commas (at most 64)";
                for (int i = 0; i < n; i++) {
                        if (list[i] != floor(list[i]))
                                return "whole epochs separated by commas";
                        o->eval_epochs[i] = (int)list[i];
                }
                o->neval = n;
                break;
        case O_TARGET: if (topt_num(arg, 0, 1, &o->target_map) < 0) return "a number from 0 to 1"; break;
        case O_SIZE: if (topt_int(arg, 32, 2048, &v) < 0) return "an integer from 32 to 2048"; o->image_size = (int)v; break;
        case O_BACKBONE:
                if (!strcmp(arg, "resnet34"))
                        o->depth = 34;
                else if (!strcmp(arg, "resnet18"))
                        o->depth = 18;
                else
                        return "resnet34 or resnet18";
                break;
        case O_WIDTH: if (topt_num(arg, 0.01, 4, &o->width_mult) < 0) return "a number from 0.01 to 4"; break;
        }
        return NULL;
}

static const struct topt_prog prog = {
        .workload = "ssd",
        .intro = "usage: benchd-ssd --data DIR [OPTIONS]\n\n"
                 "Train the MLPerf single-stage detector (SSD300, ResNet-34 backbone) on COCO,\n"
                 "data-parallel over the MPI ranks, evaluating the bbox mAP at the given epochs\n"
                 "until it reaches the target; MLPerf log lines from rank 0.\n\n",
        .opts = opts,
        .nopts = ARRAY_SIZE(opts),
        .set = set,
};

int ssd_opts_parse(int argc, char **argv, struct ssd_opts *o, FILE *out, struct bd_err *err)
{
        /* the rest from the workload's built-in values (workloads/ssd.json) */
        *o = (struct ssd_opts){ .width_mult = 1 };
        struct topt_given given;
        int r = topt_parse(&prog, argc, argv, o, &o->common, &given, out, err);
        if (r != 0)
                return r;
        /* an evaluation after the last epoch never happens: the run would end
         * "aborted" without it; the default list is cut at --epochs */
        for (int i = 0; i < o->neval; i++)
                if (o->eval_epochs[i] > o->epochs) {
                        if (topt_given(&given, O_EVAL))
                                return bd_err_set(err, -EINVAL, "--eval-epochs: epoch %d is beyond --epochs %d",
                                                  o->eval_epochs[i], o->epochs);
                        o->neval = i;
                }
        return topt_check(&o->common, err);
}

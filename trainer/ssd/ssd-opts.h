/* ssd-opts.h: benchd-ssd's command line.
 *
 * The flags are those of the rendered launch scripts (benchctl render
 * ... ssd): one per key of a system's "ssd" section, plus --data, --platform,
 * --seed and --pretrained.  The defaults are the built-in values of the
 * "ssd" row of lib/workload.c, the MLPerf reference's (SSD300, ResNet-34,
 * 80 epochs, decay at 44 and 55, evaluation at 40, 50, ..., 80, target mAP
 * 0.23), warmup 5 epochs as in the v0.7 submissions' configs (the reference
 * has no default; the compliance checker wants at least 1 step); width 1.
 */
#ifndef BD_SSD_OPTS_H
#define BD_SSD_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "err.h"
#include "topts.h"

#define SSD_MAX_EVALS 64
#define SSD_MAX_DECAYS 8

struct ssd_opts {
        int batch_size;                 /* per rank */
        double lr;                      /* as in the MLPerf configs, scaled by the global batch */
        double warmup_epochs;
        double weight_decay;
        int epochs;
        double decay_epochs[SSD_MAX_DECAYS];
        int ndecay;
        int eval_epochs[SSD_MAX_EVALS];
        int neval;
        double target_map;
        int image_size;
        int depth;                      /* 18 or 34 */
        double width_mult;
        struct topt_common common;      /* --data, --threads .. --version */
};

/* 0: run; 1: exit 0 (--help, --version, printed to out unless NULL);
 * -EINVAL: usage error, message in err (one line, without the program name). */
int ssd_opts_parse(int argc, char **argv, struct ssd_opts *o, FILE *out, struct bd_err *err);

#endif

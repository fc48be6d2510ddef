/* coco-eval-mpi.h: evaluation spread over MPI ranks.
 *
 * Each rank adds the detections of the images it ran inference on and
 * evaluates those images (coco_eval_images with their ids); then every rank
 * calls coco_eval_gather_stats(): the packed per-image results go to root,
 * which merges and accumulates them, and the 12 numbers come back to every
 * rank.  Images no rank evaluated count as having no detections.
 */
#ifndef BD_DATA_COCO_EVAL_MPI_H
#define BD_DATA_COCO_EVAL_MPI_H

#include <mpi.h>

#include "coco-eval.h"

/* Collective.  Returns the same value on every rank: 0 with stats filled,
 * or a negative errno (err filled on every rank). */
int coco_eval_gather_stats(struct coco_eval *ev, MPI_Comm comm, int root, double stats[COCO_EVAL_NSTATS],
                           struct bd_err *err);

#endif

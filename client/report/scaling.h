/* scaling.h: benchctl report --scaling RUN...: for each node count, time to
 * train, accuracy, throughput, speedup and efficiency against the smallest
 * count, and cost = nodes x the system's cost_per_node_hour x wall time,
 * with the cost of reaching the target (the SageMaker table, computed). */
#ifndef BD_SCALING_H
#define BD_SCALING_H

#include <stdbool.h>

#include "buf.h"
#include "results.h"
#include "store.h"

struct scaling_row {
        char *run_id, *system, *workload;
        long nodes, ranks;
        int trials, converged;          /* trials with a result */
        enum tv_kind kind;
        double ttt_min;                 /* mean time to train of the converged trials (NAN: none); a fixed
                                         * schedule's: the mean time of the whole schedule */
        bool fixed;                     /* its trials ran a fixed schedule */
        int met;                        /* fixed: trials that met the target on the way ... */
        double met_min;                 /* ... and the mean minutes it took them (NAN: none) */
        double accuracy;                /* mean accuracy reached (NAN: none) */
        double throughput;              /* mean images/s (GB/s for allreduce) */
        double wall_min;                /* mean wall time of a trial */
        double speedup, efficiency;     /* NAN where there is no base */
        double cost_per_node_hour;      /* 0: unknown */
        double cost, cost_to_target;    /* per trial; NAN when unknown */
        const char *outcome;            /* NULL when it has results, else why not */
        /* per trial, for the page: loss and learning-rate curves come from the logs */
        char **logs;
};

struct scaling_data {
        struct scaling_row *rows;
        int n;
        const char *basis;              /* "time to train" or "throughput" */
};

/* Loads the runs (ids: n of them), sorted by node count; an exit status. */
int scaling_load(struct bd_store *s, char **ids, int n, struct scaling_data *d);
void scaling_release(struct scaling_data *d);
void scaling_text(const struct scaling_data *d, struct bd_buf *out);
void scaling_json(const struct scaling_data *d, struct bd_buf *out);
#endif

/* tenants.h: a run of tenants (submit --tenants): N independent single-rank
 * runs at once on one node, round after round, the round's k-th tenant its
 * trial (round - 1) x N + k + 1.  Each tenant's result (its rate, or its
 * time to train), each round's sum, median and spread (slowest / fastest),
 * and the tenants a stated tolerance or more worse than the median flagged:
 * the GPU (or the cores) that is slow where the others are not. */
#ifndef BD_TENANTS_H
#define BD_TENANTS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "buf.h"

struct tenant_row {
        int round, tenant, trial;
        bool has_value;
        double value;
        const char *outcome;    /* "value", or why not: "failed", "NaN", ... (static) */
        double vs_median;       /* (value - median) / median; NAN when none */
        bool flagged;           /* tolerance or more worse than the median, or no value */
        char where[160];        /* its node and confinement, as benchd-bind said it */
        char why[160];          /* no value: why */
};

struct tenant_round {
        int values;             /* tenants with a value */
        double sum, median, best, worst;
        double spread;          /* worst / best rate, or best / worst time: <= 1; NAN: fewer than 2 values */
        int flagged;
};

struct tenants_model {
        int n, rounds;
        bool time;              /* time to train (minutes), not a rate */
        const char *unit;       /* the rate's unit (a workload's own, or images/s, GB/s) */
        bool higher_better;
        double tolerance;
        struct tenant_row *rows;        /* rounds x n */
        struct tenant_round *round;     /* rounds */
};

/* Each round's values, median, sum, spread and flagged tenants, from the
 * rows (rounds x n: round, tenant, has_value, value) and the model's kind
 * and tolerance.  (results.h loads a run's.) */
void tenants_compute(struct tenants_model *m);
void tenants_release(struct tenants_model *m);
void tenants_text(const struct tenants_model *m, struct bd_buf *out);
cJSON *tenants_json(const struct tenants_model *m);

#endif

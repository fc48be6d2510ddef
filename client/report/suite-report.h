/* suite-report.h: a recorded suite's report (suite-report.c): the rates of
 * its runs, in its baselines' order, its rows and verdict (suite.h's
 * arithmetic), and optionally an earlier suite's rates to compare with.
 * cmd-suite.c prints it as text or JSON and pages.h draws it. */
#ifndef BD_SUITE_REPORT_H
#define BD_SUITE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "store.h"
#include "suite.h"

/* The rates of one suite's benchmarks, in the baselines' order. */
struct suite_rates {
        struct suite_input *in;
        double **rates;
        size_t n;
        char *device;                   /* of the first result, for the targets */
        char **run_ids;
};

/* Loads the rate of every trial of the suite's runs (g and its cells),
 * matched to b's benchmarks by name; an exit status (errors printed). */
int suite_rates_load(struct bd_store *s, const struct bd_group *g, const struct bd_cell *cells,
                     const struct baselines *b, struct suite_rates *ret);
void suite_rates_release(struct suite_rates *r);

struct suite_report {
        struct bd_group g;
        struct bd_cell *cells;
        struct baselines b;             /* the copy kept with the suite, or another file's */
        struct suite_rates now;
        struct suite_row *rows;         /* b.n of them */
        struct suite_verdict v;
        bool compared;                  /* before_g and before hold the earlier suite */
        struct bd_group before_g;
        struct bd_cell *before_cells;
        struct suite_rates before;
};

/* Loads suite id (or "last") and computes its rows and verdict: against the
 * baselines kept with it, or those of baselines_path; compare (optional):
 * an earlier suite, the "before" of a Welch comparison.  An exit status
 * (errors printed); release *r whatever it returns. */
int suite_report_load(struct bd_store *s, const char *id, const char *baselines_path, const char *compare,
                      struct suite_report *r);
void suite_report_release(struct suite_report *r);
/* The header line, the table and verdict, and the comparison. */
void suite_report_text(const struct suite_report *r, FILE *f);
/* The report as JSON (suite_json()'s, with the suite, system, device, and
 * each benchmark's rates and run); NULL when out of memory. */
cJSON *suite_report_json(const struct suite_report *r);

#endif

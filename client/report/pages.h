/* pages.h: the reports as self-contained HTML pages (pages.c), each drawn
 * from its report's model: a run's trials (report.h), a sweep (sweep.h), a
 * suite (suite.h), a scaling report (scaling.h), a health check (health.h).  The commands choose text,
 * JSON or a page; the models know nothing of pages. */
#ifndef BD_PAGES_H
#define BD_PAGES_H

#include "buf.h"
#include "health.h"
#include "perf.h"
#include "report.h"
#include "scaling.h"
#include "store.h"
#include "suite.h"
#include "sweep.h"

/* The runs: per trial the loss and learning rate over steps, accuracy at
 * each evaluation with the target, throughput with its interval. */
void runs_html(const struct report_run *runs, int n, struct bd_buf *out);
/* A sweep: its table, a heat map, speedup and efficiency against the ideal. */
void sweep_html(const struct sweep_data *d, struct bd_buf *out);
/* A suite: its table and verdict, the diff per benchmark. */
void suite_html(const struct bd_group *g, const struct baselines *b, const struct suite_row *rows,
                const struct suite_verdict *v, const struct suite_input *in, struct bd_buf *out);
/* A scaling report: speedup, efficiency, time and cost per node count. */
void scaling_html(const struct scaling_data *d, struct bd_buf *out);
/* benchctl health: the cluster's verdict, a row per node (verdict, host,
 * checks, what --drain does or would do: drain[i], NULL or "" for none),
 * each finding with its evidence and action; with perf (NULL: not run) the
 * allreduce figures, each node's inside itself and a node-by-node map of the
 * pairs; with tput (NULL: not run) the trainer's rate on each node; note
 * (NULL: none) what was not checked. */
void health_html(const char *system, const struct health_node *nodes, int n, const char *const *drain,
                 const struct health_perf *perf, const struct health_tput *tput, const char *note, struct bd_buf *out);
/* Writes a page atomically; prints the error and returns -1 on failure. */
int write_page(const char *path, const struct bd_buf *page);

#endif

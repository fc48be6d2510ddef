/* stage-ui.h: what benchctl stage and benchctl manifest show while a stage
 * job runs (a progress bar on a terminal, plain lines otherwise) and after. */
#ifndef BD_STAGE_UI_H
#define BD_STAGE_UI_H

#include <stdbool.h>
#include <stdio.h>

#include "stage/stage.h"

/* Runs the job in its own thread and draws its progress on stderr until it
 * ends; SIGINT and SIGTERM cancel it (temporary files are removed).  quiet:
 * nothing drawn.  Returns stage_wait()'s result. */
int stage_ui_run(struct bd_stage *s, const char *what, bool quiet);
/* The exit status of a stage job that returned r: BD_EXIT_OK, BD_EXIT_SIGNAL
 * + the signal that cancelled it, else BD_EXIT_FAIL. */
int stage_ui_exit(int r);
/* Prints the job's problems of the given severities, one per line, at most
 * max (0: all), then "... and N more". */
void stage_ui_problems(struct bd_stage *s, FILE *f, const char *prefix, unsigned severities, size_t max);
#define SEVERITY_BIT(s) (1u << (s))

#endif

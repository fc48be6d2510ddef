/* dataset-fetch.h: what benchd-dataset's subcommands share: 'dataset fetch'
 * (dataset-fetch.c) ends with the check 'dataset check' runs
 * (benchd-dataset.c). */
#ifndef BD_DATASET_FETCH_H
#define BD_DATASET_FETCH_H

#include <stdbool.h>

#include "benchctl.h"
#include "buf.h"

extern const struct bd_command dataset_fetch_cmd;
int dataset_fetch(int argc, char **argv);
/* The index of each instances file in DIR, its manifest, its check. */
int dataset_fetch_finish(const char *dir, int threads, bool quiet);
/* One split of a COCO tree checked as the loader would read it (evaluation
 * mode; decode: every image decoded); the report appended to out. */
int dataset_check_split(const char *dir, const char *split, bool decode, int threads, const char *cache, bool json,
                        bool quiet, bool *usable, struct bd_buf *out);

#endif

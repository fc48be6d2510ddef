/* datasets.h: dataset staging driven through benchd's API.
 *
 *   POST   /v1/datasets/NAME/stage    {"source", "destination", "verify", "delete", "workers",
 *                                      "bwlimit_mbps", "fsync", "rehash"}      (token)
 *   POST   /v1/datasets/NAME/verify   {"destination"} (default: the last stage's)  (token)
 *   DELETE /v1/datasets/NAME          cancel the running job                     (token)
 *   GET    /v1/datasets               every dataset with a state file or a job
 *   GET    /v1/datasets/NAME          state, progress (stage_progress_json()), last verification,
 *                                     manifest checksum, the problems of the last job run by this
 *                                     daemon (stage_problems_json())
 *
 * Jobs run in their own threads (lib/stage/stage.h); their state files live in
 * STATE_DIR/stage, so a benchd killed mid-copy resumes the job when it
 * starts again.  Destinations must lie under one of the directories of
 * 'stage_allow' (after resolving symlinks); names are checked by
 * stage_name_valid().  Built without xxHash, every route answers 501.
 */
#ifndef BD_DATASETS_H
#define BD_DATASETS_H

#include "buf.h"
#include "http.h"

struct datasets;

/* Creates STATE_DIR/stage and resumes the jobs a previous benchd left running. */
struct datasets *datasets_new(struct daemon *d);
/* Cancels the running jobs and waits for them (their state files say
 * "running", so the next start resumes them). */
struct datasets *datasets_free(struct datasets *ds);

void api_datasets_list(struct daemon *d, struct http_request *rq, struct http_response *rs);
void api_dataset_get(struct daemon *d, struct http_request *rq, struct http_response *rs);
void api_dataset_stage(struct daemon *d, struct http_request *rq, struct http_response *rs);
void api_dataset_verify(struct daemon *d, struct http_request *rq, struct http_response *rs);
void api_dataset_cancel(struct daemon *d, struct http_request *rq, struct http_response *rs);

/* benchd_dataset_* families for /metrics. */
void datasets_metrics(struct daemon *d, struct bd_buf *out);

#endif

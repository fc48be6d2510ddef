/* datasets-none.c: benchd built without xxHash has no dataset staging. */
#include "config.h"

#include "datasets.h"

struct datasets *datasets_new(struct daemon *d)
{
        return NULL;
}

struct datasets *datasets_free(struct datasets *ds)
{
        return NULL;
}

static void unavailable(struct http_response *rs)
{
        http_error(rs, 501, "benchd was built without xxHash (libxxhash-dev): no dataset staging");
}

void api_datasets_list(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        unavailable(rs);
}

void api_dataset_get(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        unavailable(rs);
}

void api_dataset_stage(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        unavailable(rs);
}

void api_dataset_verify(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        unavailable(rs);
}

void api_dataset_cancel(struct daemon *d, struct http_request *rq, struct http_response *rs)
{
        unavailable(rs);
}

void datasets_metrics(struct daemon *d, struct bd_buf *out)
{
}

/* fuzz-datasets.c: the JSON bodies of benchd's /v1/datasets requests
 * (daemon/datasets.h), without a socket (fuzz-daemon.h).
 *
 * The input is a request body, posted to /v1/datasets/NAME/stage and
 * /v1/datasets/NAME/verify of a dataset with a state file ('coco') and of
 * one without ('fresh'), as api_handle() calls the handlers once the route
 * and the token are checked.  Promises checked, besides
 * fuzz_check_response():
 *   - a body that is not one JSON object of known fields with values of
 *     the right types is a 400 naming what is wrong;
 *   - nothing starts (stage_allow is empty: a 403 at most, never a 2xx),
 *     and afterwards the daemon knows the same two datasets it started
 *     with.
 */
#include "config.h"

#include <string.h>

#include "datasets.h"
#include "fuzz-daemon.h"
#include "fuzz.h"
#include "json.h"

typedef void handler(struct daemon *d, struct http_request *rq, struct http_response *rs);

static void post(struct daemon *d, handler *fn, const char *name, const uint8_t *data, size_t size)
{
        struct fuzz_request f = { .nargs = 0 };
        struct http_response rs = { 0 };
        struct http_request rq = {
                .method = "POST",
                .path = "/v1/datasets",
                .body = (const char *)data,
                .body_len = size,
                .local = true,
                .params = { name },
                .conn = &f,
        };
        fn(d, &rq, &rs);
        fuzz_check_response(&rs);
        FUZZ_CHECK(rs.status == 400 || rs.status == 403 || rs.status == 409, "a body answered %d: %s", rs.status,
                   rs.body);
        free(rs.body);
}

/* The daemon still knows 'coco' and 'old' only. */
static void check_list(struct daemon *d)
{
        struct fuzz_request f = { .nargs = 0 };
        struct http_response rs = { 0 };
        struct http_request rq = { .method = "GET", .path = "/v1/datasets", .body = "", .local = true, .conn = &f };
        api_datasets_list(d, &rq, &rs);
        fuzz_check_response(&rs);
        _cleanup_json_ cJSON *j = cJSON_ParseWithLength(rs.body, rs.len);
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(j, "datasets");
        FUZZ_CHECK(rs.status == 200 && cJSON_GetArraySize(list) == 2 &&
                   streq(json_str(cJSON_GetArrayItem(list, 0), "name", ""), "coco") &&
                   streq(json_str(cJSON_GetArrayItem(list, 1), "name", ""), "old"),
                   "the datasets changed: %s", rs.body);
        free(rs.body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct daemon *d = fuzz_daemon();
        post(d, api_dataset_stage, "coco", data, size);
        post(d, api_dataset_stage, "fresh", data, size);
        post(d, api_dataset_verify, "coco", data, size);
        post(d, api_dataset_verify, "fresh", data, size);
        check_list(d);
        return 0;
}

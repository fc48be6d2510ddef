/* health-report.h: the last verdict `benchctl health` gave this node, as it
 * posts it (POST /v1/health/report, with the token), kept by benchd in
 * memory and in STATE_DIR/health-report.json, served back (GET
 * /v1/health/report) and as metrics, so that Prometheus keeps the history
 * of every node's verdict and figures.
 *
 *     {
 *       "system": "4xC4140",
 *       "verdict": "degraded",                  ok, degraded or failed
 *       "checks": 17,
 *       "findings": [ { "level": "degraded", "check": "perf.pairs" } ],
 *       "allreduce": { "inside_gbps": 92.1,     null: failed; absent: not run
 *                      "pairs": [ { "with": "n2", "gbps": 10.2 } ] },
 *       "trainer": { "benchmark": "ssd-b4", "unit": "images/s", "rate": 812.5 }
 *     }
 *
 * Every field but "system", "verdict" and "checks" may be absent; unknown
 * fields are refused, as are strings too long, control characters in
 * names, numbers out of range, and more than HEALTH_REPORT_MAX findings or
 * pairs.  Nothing is printed here. */
#ifndef BD_HEALTH_REPORT_H
#define BD_HEALTH_REPORT_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

#define HEALTH_REPORT_MAX 256

struct health_report_finding {
        char level[16];
        char check[32];
};

struct health_report_pair {
        char with[128];
        double gbps;            /* NAN: failed */
};

struct health_report {
        char system[256];
        int verdict;            /* 0 ok, 1 degraded, 2 failed */
        long checks;
        struct health_report_finding *findings;
        int nfindings;
        bool has_inside;
        double inside_gbps;     /* NAN: failed */
        struct health_report_pair *pairs;
        int npairs;
        bool has_trainer;
        char benchmark[72], unit[32];   /* a baselines file's names: up to 64 bytes */
        double rate;            /* NAN: failed */
        double received;        /* when benchd took it, seconds since the epoch (not the sender's clock) */
};

/* Reads a report from j (a request's body, or the state file's object, which
 * also has "received").  On error *ret is untouched, err names the field. */
int health_report_parse(const cJSON *j, struct health_report *ret, struct bd_err *err);
cJSON *health_report_json(const struct health_report *r);
void health_report_release(struct health_report *r);
/* Its metrics (daemon.h's metrics_sample) */
void health_report_metrics(const struct health_report *r, struct bd_buf *out);

#endif

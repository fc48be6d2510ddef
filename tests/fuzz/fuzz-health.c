/* fuzz-health.c: a node's inventory and signals as its benchd's HTTP bodies
 * (GET /v1/inventory, GET /v1/signals), held against a system by benchctl
 * health (client/health/health.h).  The input is judged as both bodies at
 * once, or, when it is an object with "signals", that as the signals.
 *
 * Promises checked: a body that is not a JSON object is still judged (no
 * GPUs, no NICs: failed against a system that has them), never a crash; the
 * verdict is the worst finding's level; every finding names its check and
 * has an action, and its evidence is one printable line; the text and JSON
 * of the verdict are made; the same body judged twice gives the same. */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "health.h"
#include "json.h"

static const char system_json[] =
        "{ \"gpus_per_node\": 4, \"gpu_model\": \"V100-SXM2-32GB\","
        "  \"cpu\": { \"sockets\": 2, \"cores_per_socket\": 20, \"threads_per_core\": 1 },"
        "  \"topology\": { \"gpu_numa\": [0, 0, 1, 1],"
        "    \"nics\": [ { \"name\": \"mlx5_0\", \"kind\": \"infiniband\", \"numa\": 0, \"netdev\": \"ib0\" } ] },"
        "  \"software\": { \"nvidia_driver\": \">=470.57\", \"cuda\": \"12.2\", \"mpi\": \"Open MPI 4.1\" },"
        "  \"container\": { \"runtime\": \"singularity\" } }";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static cJSON *sys;
        if (!sys)
                sys = cJSON_Parse(system_json);
        _cleanup_free_ char *text = fuzz_str(data, size);
        cJSON *inv = cJSON_Parse(text);
        const cJSON *sig = json_get(inv, "signals") ? json_get(inv, "signals") : inv;
        struct health_node a, b;
        health_check_node(sys, "n1", inv, sig, "no answer", &a);
        health_check_node(sys, "n1", inv, sig, "no answer", &b);
        enum health_level worst = HEALTH_OK;
        for (int i = 0; i < a.nfindings; i++) {
                const struct health_finding *f = &a.findings[i];
                FUZZ_CHECK(f->check[0] && f->action && f->action[0], "finding %d: check '%s'", i, f->check);
                FUZZ_CHECK(strlen(f->evidence) < sizeof(f->evidence), "finding %d: evidence unterminated", i);
                for (const char *p = f->evidence; *p; p++)
                        FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f, "finding %d: evidence byte 0x%02x", i,
                                   (unsigned char)*p);
                if (f->level > worst)
                        worst = f->level;
        }
        FUZZ_CHECK(a.verdict == worst, "verdict %d, worst finding %d", a.verdict, worst);
        FUZZ_CHECK(a.nfindings == b.nfindings && a.verdict == b.verdict && a.checks == b.checks,
                   "judged twice: %d/%d findings", a.nfindings, b.nfindings);
        struct bd_buf out = BD_BUF_INIT;
        health_text("fuzz", &a, 1, &out);
        FUZZ_CHECK(out.s && strstr(out.s, "fuzz: "), "no verdict line");
        buf_release(&out);
        cJSON *j = health_json("fuzz", &a, 1);
        FUZZ_CHECK(j && cJSON_GetArraySize(json_get(j, "nodes")) == 1, "JSON");
        cJSON_Delete(j);
        health_node_release(&a);
        health_node_release(&b);
        cJSON_Delete(inv);
        return 0;
}

/* nvml-record: writes what this machine's NVML answers (through benchd's
 * own daemon/nvml.c) as the JSON that tests/helper/nvml-recorded.c answers
 * from, to record a real GPU's answers for the tests:
 *
 *     tests/helper/nvml-record > tests/fixtures/nvml/MACHINE.json
 *
 * Exit 1 with the reason when NVML cannot be loaded. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <cjson/cJSON.h>

#include "nvml.h"

static void add(cJSON *o, const char *key, double v)
{
        cJSON_AddNumberToObject(o, key, v);
}

int main(int argc, char **argv)
{
        char reason[160], version[96];
        if (argc > 1)
                nvml_set_library(argv[1]);
        if (nvml_open(reason, sizeof(reason)) < 0) {
                fprintf(stderr, "nvml-record: %s\n", reason);
                return 1;
        }
        cJSON *root = cJSON_CreateObject(), *gpus = cJSON_AddArrayToObject(root, "gpus");
        if (nvml_driver_version(version, sizeof(version)) == 0)
                cJSON_AddStringToObject(root, "driver_version", version);
        for (int i = 0; i < nvml_count(); i++) {
                struct nvml_gpu g;
                struct nvml_signals s;
                if (nvml_describe(i, &g) < 0 || nvml_sample(i, &g) < 0 || nvml_signals(i, &s) < 0) {
                        fprintf(stderr, "nvml-record: GPU %d: cannot be read\n", i);
                        return 1;
                }
                cJSON *o = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(o, "memory");
                cJSON_AddStringToObject(o, "bus_id", g.bus_id);
                cJSON_AddStringToObject(o, "name", g.name);
                cJSON_AddStringToObject(o, "uuid", g.uuid);
                add(m, "total", (double)g.mem_total);
                add(m, "used", (double)g.mem_used);
                if (g.has_util) {
                        cJSON *u = cJSON_AddObjectToObject(o, "utilization");
                        add(u, "gpu", g.util_gpu);
                        add(u, "memory", g.util_mem);
                }
                if (s.has_temp)
                        add(o, "temperature", s.temp_c);
                if (s.has_slowdown_temp)
                        add(o, "temperature_slowdown", s.slowdown_temp_c);
                if (s.has_power)
                        add(o, "power_usage", s.power_mw);
                if (s.has_power_limit) {
                        add(o, "power_limit", s.power_limit_mw);
                        add(o, "power_default_limit", s.power_default_limit_mw);
                }
                if (s.has_ecc) {
                        cJSON *e = cJSON_AddObjectToObject(o, "ecc");
                        cJSON *v = cJSON_AddObjectToObject(e, "volatile"), *a = cJSON_AddObjectToObject(e, "aggregate");
                        add(v, "corrected", (double)s.ecc_volatile_corrected);
                        add(v, "uncorrected", (double)s.ecc_volatile_uncorrected);
                        add(a, "corrected", (double)s.ecc_aggregate_corrected);
                        add(a, "uncorrected", (double)s.ecc_aggregate_uncorrected);
                }
                if (s.has_retired) {
                        cJSON *r = cJSON_AddObjectToObject(o, "retired_pages");
                        add(r, "single_bit", s.retired_sbe);
                        add(r, "double_bit", s.retired_dbe);
                        cJSON_AddBoolToObject(r, "pending", s.retired_pending);
                }
                if (s.has_remapped) {
                        cJSON *r = cJSON_AddObjectToObject(o, "remapped_rows");
                        add(r, "correctable", s.remapped_correctable);
                        add(r, "uncorrectable", s.remapped_uncorrectable);
                        cJSON_AddBoolToObject(r, "pending", s.remap_pending);
                        cJSON_AddBoolToObject(r, "failure", s.remap_failure);
                }
                if (s.has_throttle)
                        add(o, "clocks_event_reasons", (double)s.throttle);
                cJSON_AddItemToArray(gpus, o);
        }
        char *text = cJSON_Print(root);
        puts(text);
        free(text);
        cJSON_Delete(root);
        return fflush(stdout) == 0 ? 0 : 1;
}

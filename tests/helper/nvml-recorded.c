/* nvml-recorded.c: libnvidia-ml.so.1 answering from a recorded file, so that
 * benchd's NVML code (daemon/nvml.c: dlopen, the same entry points, the same
 * structures) runs on a machine without a GPU.  The file, named by
 * $NVML_RECORDED, is JSON as tests/helper/nvml-record.c writes it on a real
 * GPU (or, until one is recorded, values as NVML's reference documents them):
 *
 *   {"driver_version": "550.54.15",
 *    "gpus": [{"bus_id": "00000000:1A:00.0", "name": ..., "uuid": ...,
 *              "memory": {"total": B, "used": B}, "utilization": {"gpu": %, "memory": %},
 *              "temperature": C, "temperature_slowdown": C, "power_usage": mW,
 *              "power_limit": mW, "power_default_limit": mW,
 *              "ecc": {"volatile": {"corrected": N, "uncorrected": N}, "aggregate": {...}},
 *              "retired_pages": {"single_bit": N, "double_bit": N, "pending": bool},
 *              "remapped_rows": {"correctable": N, "uncorrectable": N, "pending": bool, "failure": bool},
 *              "clocks_event_reasons": BITS}]}
 *
 * A key that is absent answers NVML_ERROR_NOT_SUPPORTED, as NVML does for a
 * GPU without the feature.  A test helper: never installed. */
#include <stdio.h>
#include <stdlib.h>
/* the entry points are NVML's: nvml.h (not needed to build) declares them */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#include <string.h>
#include <cjson/cJSON.h>

#include "nvml-abi.h"

typedef cJSON *nvmlDevice_t;

static cJSON *answers;

/* exported: the NVML API */
#define API __attribute__((visibility("default")))

static cJSON *get(const cJSON *o, const char *path)
{
        char key[64];
        while (o && *path) {
                size_t n = strcspn(path, ".");
                snprintf(key, sizeof(key), "%.*s", (int)n, path);
                o = cJSON_GetObjectItemCaseSensitive(o, key);
                path += n + (path[n] == '.');
        }
        return (cJSON *)o;
}

static int number(nvmlDevice_t d, const char *path, unsigned long long *ret)
{
        if (!answers)
                return NVML_ERROR_UNINITIALIZED;
        const cJSON *v = get(d, path);
        if (!cJSON_IsNumber(v) && !cJSON_IsBool(v))
                return NVML_ERROR_NOT_SUPPORTED;
        *ret = cJSON_IsBool(v) ? (unsigned long long)cJSON_IsTrue(v) : (unsigned long long)v->valuedouble;
        return NVML_SUCCESS;
}

static int number32(nvmlDevice_t d, const char *path, unsigned *ret)
{
        unsigned long long v;
        int r = number(d, path, &v);
        if (r == NVML_SUCCESS)
                *ret = (unsigned)v;
        return r;
}

static int string(const cJSON *o, const char *path, char *buf, unsigned n)
{
        if (!answers)
                return NVML_ERROR_UNINITIALIZED;
        const cJSON *v = get(o, path);
        if (!cJSON_IsString(v))
                return NVML_ERROR_NOT_SUPPORTED;
        if (strlen(v->valuestring) >= n)
                return NVML_ERROR_INSUFFICIENT_SIZE;
        strcpy(buf, v->valuestring);
        return NVML_SUCCESS;
}

API int nvmlInit_v2(void)
{
        const char *path = getenv("NVML_RECORDED");
        if (!path)
                return NVML_ERROR_UNKNOWN;
        FILE *f = fopen(path, "r");
        if (!f)
                return NVML_ERROR_UNKNOWN;
        static char text[1 << 20];
        size_t n = fread(text, 1, sizeof(text) - 1, f);
        fclose(f);
        text[n] = '\0';
        answers = cJSON_Parse(text);
        return answers ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

API const char *nvmlErrorString(int r)
{
        switch (r) {
        case NVML_SUCCESS: return "Success";
        case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
        case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
        case NVML_ERROR_NOT_FOUND: return "Not Found";
        case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
        default: return "Unknown Error";
        }
}

API int nvmlSystemGetDriverVersion(char *buf, unsigned n)
{
        return string(answers, "driver_version", buf, n);
}

API int nvmlDeviceGetCount_v2(unsigned *count)
{
        if (!answers)
                return NVML_ERROR_UNINITIALIZED;
        *count = (unsigned)cJSON_GetArraySize(get(answers, "gpus"));
        return NVML_SUCCESS;
}

API int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d)
{
        if (!answers)
                return NVML_ERROR_UNINITIALIZED;
        *d = cJSON_GetArrayItem(get(answers, "gpus"), (int)i);
        return *d ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

API int nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
        memset(pci, 0, sizeof(*pci));
        return string(d, "bus_id", pci->busId, sizeof(pci->busId));
}

API int nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned n)
{
        return string(d, "name", buf, n);
}

API int nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned n)
{
        return string(d, "uuid", buf, n);
}

API int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
        int r = number(d, "memory.total", &m->total);
        if (r == NVML_SUCCESS && (r = number(d, "memory.used", &m->used)) == NVML_SUCCESS)
                m->free = m->total - m->used;
        return r;
}

API int nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
        int r = number32(d, "utilization.gpu", &u->gpu);
        return r == NVML_SUCCESS ? number32(d, "utilization.memory", &u->memory) : r;
}

API int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *t)
{
        return sensor == 0 ? number32(d, "temperature", t) : NVML_ERROR_INVALID_ARGUMENT;
}

API int nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, int which, unsigned *t)
{
        return which == 1 ? number32(d, "temperature_slowdown", t) : NVML_ERROR_NOT_SUPPORTED;
}

API int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw)
{
        return number32(d, "power_usage", mw);
}

API int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned *mw)
{
        return number32(d, "power_limit", mw);
}

API int nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned *mw)
{
        return number32(d, "power_default_limit", mw);
}

API int nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long *count)
{
        if ((type != 0 && type != 1) || (counter != 0 && counter != 1))
                return NVML_ERROR_INVALID_ARGUMENT;
        char path[64];
        snprintf(path, sizeof(path), "ecc.%s.%s", counter ? "aggregate" : "volatile", type ? "uncorrected" : "corrected");
        return number(d, path, count);
}

API int nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause, unsigned *count, unsigned long long *addresses)
{
        unsigned n;
        int r = number32(d, cause ? "retired_pages.double_bit" : "retired_pages.single_bit", &n);
        if (r != NVML_SUCCESS)
                return r;
        unsigned room = *count;
        *count = n;
        if (room < n)
                return NVML_ERROR_INSUFFICIENT_SIZE;
        for (unsigned k = 0; addresses && k < n; k++)
                addresses[k] = 0x1000ULL * (k + 1);
        return NVML_SUCCESS;
}

API int nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int *pending)
{
        unsigned v;
        int r = number32(d, "retired_pages.pending", &v);
        if (r == NVML_SUCCESS)
                *pending = v ? 1 : 0;
        return r;
}

API int nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failure)
{
        int r;
        if ((r = number32(d, "remapped_rows.correctable", corr)) != NVML_SUCCESS ||
            (r = number32(d, "remapped_rows.uncorrectable", unc)) != NVML_SUCCESS ||
            (r = number32(d, "remapped_rows.pending", pending)) != NVML_SUCCESS)
                return r;
        return number32(d, "remapped_rows.failure", failure);
}

API int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *bits)
{
        return number(d, "clocks_event_reasons", bits);
}

API int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *bits)
{
        return number(d, "clocks_event_reasons", bits);
}

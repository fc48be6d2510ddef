/* nvml.c: the few NVML entry points benchd uses, resolved with dlsym (their
 * types: nvml-abi.h). */
#include "config.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml-abi.h"
#include "nvml.h"

typedef struct nvmlDevice_st *nvmlDevice_t;

static struct {
        pthread_once_t once;
        int error;
        char reason[160];
        unsigned count;
        nvmlReturn_t (*init)(void);
        const char *(*error_string)(nvmlReturn_t);
        nvmlReturn_t (*get_count)(unsigned *);
        nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t *);
        nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t *);
        nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
        nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
        nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
        nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, int *);
        nvmlReturn_t (*nvlink_remote)(nvmlDevice_t, unsigned, nvmlPciInfo_t *);
        nvmlReturn_t (*driver_version)(char *, unsigned);
        nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t *);
        nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned *);
        nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
        nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long *);
        nvmlReturn_t (*retired)(nvmlDevice_t, int, unsigned *, unsigned long long *);
        nvmlReturn_t (*retired_pending)(nvmlDevice_t, int *);
        nvmlReturn_t (*remapped)(nvmlDevice_t, unsigned *, unsigned *, unsigned *, unsigned *);
        nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *);
        nvmlReturn_t (*temp_threshold)(nvmlDevice_t, int, unsigned *);
        nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned *);
        nvmlReturn_t (*power_default_limit)(nvmlDevice_t, unsigned *);
} nv = { .once = PTHREAD_ONCE_INIT };

static const char *library = "libnvidia-ml.so.1";
static bool library_named;

void nvml_set_library(const char *path)
{
        if (path && *path && !library_named) {
                library = strdup(path); /* for the process's life, as the library itself */
                if (!library) {
                        library = "libnvidia-ml.so.1";
                        return;
                }
                library_named = true;
        }
}

bool nvml_library_named(void)
{
        return library_named;
}

/* NVML's bus ids are "00000000:06:00.0"; sysfs names the function "0000:06:00.0". */
static void bus_id_normalise(const char *in, char *out, size_t n)
{
        const char *colon = strchr(in, ':');
        size_t dlen = colon ? (size_t)(colon - in) : 0;
        if (colon && dlen > 4)
                in += dlen - 4;
        snprintf(out, n, "%s", in);
        for (char *p = out; *p; p++)
                *p = (char)tolower((unsigned char)*p);
}

#define RESOLVE(field, symbol, required)                                                        \
        do {                                                                                    \
                *(void **)&nv.field = dlsym(lib, symbol);                                       \
                if (!nv.field && (required)) {                                                  \
                        snprintf(nv.reason, sizeof(nv.reason), "%s lacks %s", library, symbol); \
                        nv.error = -ENOSYS;                                                     \
                        return;                                                                 \
                }                                                                               \
        } while (0)

static void load(void)
{
        void *lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
        nvmlReturn_t r;
        if (!lib) {
                snprintf(nv.reason, sizeof(nv.reason), "NVML not available: %s not found", library);
                nv.error = -ENOENT;
                return;
        }
        RESOLVE(init, "nvmlInit_v2", true);
        RESOLVE(error_string, "nvmlErrorString", true);
        RESOLVE(get_count, "nvmlDeviceGetCount_v2", true);
        RESOLVE(by_index, "nvmlDeviceGetHandleByIndex_v2", true);
        RESOLVE(pci_info, "nvmlDeviceGetPciInfo_v3", true);
        RESOLVE(name, "nvmlDeviceGetName", true);
        RESOLVE(uuid, "nvmlDeviceGetUUID", true);
        RESOLVE(memory, "nvmlDeviceGetMemoryInfo", true);
        RESOLVE(driver_version, "nvmlSystemGetDriverVersion", true);
        RESOLVE(nvlink_state, "nvmlDeviceGetNvLinkState", false);
        RESOLVE(nvlink_remote, "nvmlDeviceGetNvLinkRemotePciInfo_v2", false);
        RESOLVE(utilization, "nvmlDeviceGetUtilizationRates", false);
        RESOLVE(temperature, "nvmlDeviceGetTemperature", false);
        RESOLVE(power, "nvmlDeviceGetPowerUsage", false);
        RESOLVE(ecc, "nvmlDeviceGetTotalEccErrors", false);
        RESOLVE(retired, "nvmlDeviceGetRetiredPages", false);
        RESOLVE(retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus", false);
        RESOLVE(remapped, "nvmlDeviceGetRemappedRows", false);
        /* renamed "clocks event reasons" in CUDA 12.2's NVML; the old name stays */
        RESOLVE(throttle, "nvmlDeviceGetCurrentClocksEventReasons", false);
        if (!nv.throttle)
                RESOLVE(throttle, "nvmlDeviceGetCurrentClocksThrottleReasons", false);
        RESOLVE(temp_threshold, "nvmlDeviceGetTemperatureThreshold", false);
        RESOLVE(power_limit, "nvmlDeviceGetEnforcedPowerLimit", false);
        RESOLVE(power_default_limit, "nvmlDeviceGetPowerManagementDefaultLimit", false);
        r = nv.init();
        if (r != 0) {
                snprintf(nv.reason, sizeof(nv.reason), "nvmlInit failed: %s", nv.error_string(r));
                nv.error = -EIO;
                return;
        }
        r = nv.get_count(&nv.count);
        if (r != 0) {
                snprintf(nv.reason, sizeof(nv.reason), "nvmlDeviceGetCount failed: %s", nv.error_string(r));
                nv.error = -EIO;
                nv.count = 0;
        }
}

int nvml_open(char *reason, size_t n)
{
        pthread_once(&nv.once, load);
        if (nv.error && reason)
                snprintf(reason, n, "%s", nv.reason);
        return nv.error;
}

int nvml_count(void)
{
        return nvml_open(NULL, 0) < 0 ? 0 : (int)nv.count;
}

int nvml_driver_version(char *buf, size_t n)
{
        if (nvml_open(NULL, 0) < 0)
                return -ENODEV;
        return nv.driver_version(buf, (unsigned)n) == 0 ? 0 : -EIO;
}

static int handle(int i, nvmlDevice_t *ret)
{
        if (i < 0 || i >= nvml_count())
                return -ENODEV;
        return nv.by_index((unsigned)i, ret) == 0 ? 0 : -EIO;
}

/* The GPU's memory, when NVML says. */
static void read_memory(nvmlDevice_t d, struct nvml_gpu *g)
{
        nvmlMemory_t mem;
        if (nv.memory(d, &mem) == 0)
                g->mem_total = mem.total, g->mem_used = mem.used;
}

int nvml_describe(int i, struct nvml_gpu *g)
{
        nvmlDevice_t d;
        nvmlPciInfo_t pci;
        int r = handle(i, &d);
        if (r < 0)
                return r;
        memset(g, 0, sizeof(*g));
        if (nv.pci_info(d, &pci) != 0)
                return -EIO;
        bus_id_normalise(pci.busId, g->bus_id, sizeof(g->bus_id));
        if (nv.name(d, g->name, sizeof(g->name)) != 0)
                g->name[0] = '\0';
        if (nv.uuid(d, g->uuid, sizeof(g->uuid)) != 0)
                g->uuid[0] = '\0';
        read_memory(d, g);
        for (unsigned l = 0; nv.nvlink_state && nv.nvlink_remote && l < NVML_MAX_LINKS; l++) {
                int active = 0;
                nvmlPciInfo_t remote;
                if (nv.nvlink_state(d, l, &active) != 0 || active != NVML_FEATURE_ENABLED)
                        continue;
                if (nv.nvlink_remote(d, l, &remote) != 0)
                        continue;
                bus_id_normalise(remote.busId, g->nvlink_peer[g->nvlinks], sizeof(g->nvlink_peer[0]));
                g->nvlinks++;
        }
        return 0;
}

int nvml_sample(int i, struct nvml_gpu *g)
{
        nvmlDevice_t d;
        nvmlUtilization_t u;
        int r = handle(i, &d);
        if (r < 0)
                return r;
        read_memory(d, g);
        g->has_util = nv.utilization && nv.utilization(d, &u) == 0;
        if (g->has_util)
                g->util_gpu = u.gpu, g->util_mem = u.memory;
        g->has_temp = nv.temperature && nv.temperature(d, NVML_TEMPERATURE_GPU, &g->temp_c) == 0;
        g->has_power = nv.power && nv.power(d, &g->power_mw) == 0;
        return 0;
}

/* a retired-page count: NVML answers the count with no buffer given */
static bool retired_count(nvmlDevice_t d, int cause, unsigned *ret)
{
        unsigned count = 0;
        nvmlReturn_t r = nv.retired(d, cause, &count, NULL);
        if (r != 0 && r != NVML_ERROR_INSUFFICIENT_SIZE)
                return false;
        *ret = count;
        return true;
}

int nvml_signals(int i, struct nvml_signals *s)
{
        nvmlDevice_t d;
        int r = handle(i, &d);
        if (r < 0)
                return r;
        memset(s, 0, sizeof(*s));
        s->has_ecc = nv.ecc &&
                     nv.ecc(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &s->ecc_volatile_uncorrected) == 0 &&
                     nv.ecc(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &s->ecc_volatile_corrected) == 0 &&
                     nv.ecc(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, &s->ecc_aggregate_uncorrected) == 0 &&
                     nv.ecc(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, &s->ecc_aggregate_corrected) == 0;
        s->has_retired = nv.retired && retired_count(d, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, &s->retired_sbe) &&
                         retired_count(d, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &s->retired_dbe);
        int pending = 0;
        if (s->has_retired && nv.retired_pending && nv.retired_pending(d, &pending) == 0)
                s->retired_pending = pending == NVML_FEATURE_ENABLED;
        unsigned corr, unc, rpending, failure;
        if (nv.remapped && nv.remapped(d, &corr, &unc, &rpending, &failure) == 0) {
                s->has_remapped = true;
                s->remapped_correctable = corr, s->remapped_uncorrectable = unc;
                s->remap_pending = rpending != 0, s->remap_failure = failure != 0;
        }
        s->has_throttle = nv.throttle && nv.throttle(d, &s->throttle) == 0;
        s->has_temp = nv.temperature && nv.temperature(d, NVML_TEMPERATURE_GPU, &s->temp_c) == 0;
        s->has_slowdown_temp = nv.temp_threshold &&
                               nv.temp_threshold(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &s->slowdown_temp_c) == 0;
        s->has_power = nv.power && nv.power(d, &s->power_mw) == 0;
        s->has_power_limit = nv.power_limit && nv.power_default_limit && nv.power_limit(d, &s->power_limit_mw) == 0 &&
                             nv.power_default_limit(d, &s->power_default_limit_mw) == 0;
        return 0;
}

void nvml_throttle_names(unsigned long long bits, char *buf, size_t n)
{
        static const struct {
                unsigned long long bit;
                const char *name;
        } names[] = {
                { NVML_THROTTLE_GPU_IDLE, "idle" },
                { NVML_THROTTLE_APP_CLOCKS, "application clocks" },
                { NVML_THROTTLE_SW_POWER_CAP, "power cap" },
                { NVML_THROTTLE_HW_SLOWDOWN, "hardware slowdown" },
                { NVML_THROTTLE_SYNC_BOOST, "sync boost" },
                { NVML_THROTTLE_SW_THERMAL, "software thermal slowdown" },
                { NVML_THROTTLE_HW_THERMAL, "hardware thermal slowdown" },
                { NVML_THROTTLE_HW_POWER_BRAKE, "power brake" },
                { NVML_THROTTLE_DISPLAY_CLOCKS, "display clocks" },
        };
        size_t len = 0;
        if (n)
                buf[0] = '\0';
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
                if ((bits & names[k].bit) && len < n) {
                        int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", names[k].name);
                        len += w > 0 ? (size_t)w : 0;
                }
        if (!len && n)
                snprintf(buf, n, "none");
}

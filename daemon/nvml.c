/* nvml.c: the few NVML entry points benchd uses, resolved with dlsym.
 *
 * The types below are those of nvml.h (NVML API reference, "Device
 * Structs"); nvml.h itself is not needed to build. */
#include "config.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "nvml.h"

typedef int nvmlReturn_t;               /* NVML_SUCCESS = 0 */
typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct {
        char busIdLegacy[16];
        unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
        char busId[32];
} nvmlPciInfo_t;

typedef struct {
        unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
        unsigned int gpu, memory;
} nvmlUtilization_t;

#define NVML_TEMPERATURE_GPU 0
#define NVML_FEATURE_ENABLED 1

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
} nv = { .once = PTHREAD_ONCE_INIT };

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
                        snprintf(nv.reason, sizeof(nv.reason), "libnvidia-ml.so.1 lacks %s", symbol); \
                        nv.error = -ENOSYS;                                                     \
                        return;                                                                 \
                }                                                                               \
        } while (0)

static void load(void)
{
        void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        nvmlReturn_t r;
        if (!lib) {
                snprintf(nv.reason, sizeof(nv.reason), "NVML not available: libnvidia-ml.so.1 not found");
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

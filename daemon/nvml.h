/* nvml.h: NVIDIA's management library, loaded with dlopen when present.
 *
 * No GPU, no driver or no libnvidia-ml.so.1 is a normal case: nvml_open()
 * returns a negative errno and a reason ("libnvidia-ml.so.1 not found"), and
 * the inventory falls back to /proc/driver/nvidia and PCI sysfs.  The library
 * is opened once per process and never closed; NVML itself is thread-safe.
 */
#ifndef BD_NVML_H
#define BD_NVML_H

#include <stdbool.h>
#include <stddef.h>

#define NVML_MAX_LINKS 18

struct nvml_gpu {
        char bus_id[32];                /* "0000:06:00.0" (lower case, 4-digit domain) */
        char name[96];
        char uuid[96];
        unsigned long long mem_total, mem_used;         /* bytes */
        int nvlinks;                                    /* active links */
        char nvlink_peer[NVML_MAX_LINKS][32];           /* bus id at the other end of each active link */
        /* samples (nvml_sample), has_* when the GPU reports them */
        bool has_util, has_temp, has_power;
        unsigned util_gpu, util_mem;                    /* percent */
        unsigned temp_c;
        unsigned power_mw;
};

/* What can be wrong with a GPU now (nvml_signals): each has_* when the GPU
 * answers (NVML_ERROR_NOT_SUPPORTED on GPUs without the feature). */
struct nvml_signals {
        bool has_ecc;           /* uncorrected and corrected ECC errors since the driver loaded (volatile) and ever (aggregate) */
        unsigned long long ecc_volatile_uncorrected, ecc_volatile_corrected;
        unsigned long long ecc_aggregate_uncorrected, ecc_aggregate_corrected;
        bool has_retired;       /* retired pages (Kepler to Turing): by single-bit and by double-bit errors */
        unsigned retired_sbe, retired_dbe;
        bool retired_pending;   /* a page waits for the next reset to be retired */
        bool has_remapped;      /* remapped rows (Ampere on) */
        unsigned remapped_correctable, remapped_uncorrectable;
        bool remap_pending, remap_failure;
        bool has_throttle;
        unsigned long long throttle;    /* nvmlClocksThrottleReason* bits */
        bool has_temp, has_slowdown_temp, has_power, has_power_limit;
        unsigned temp_c, slowdown_temp_c;
        unsigned power_mw, power_limit_mw, power_default_limit_mw;
};

/* nvmlClocksThrottleReason bits (nvml.h) */
#define NVML_THROTTLE_GPU_IDLE 0x1ULL
#define NVML_THROTTLE_APP_CLOCKS 0x2ULL
#define NVML_THROTTLE_SW_POWER_CAP 0x4ULL
#define NVML_THROTTLE_HW_SLOWDOWN 0x8ULL
#define NVML_THROTTLE_SYNC_BOOST 0x10ULL
#define NVML_THROTTLE_SW_THERMAL 0x20ULL
#define NVML_THROTTLE_HW_THERMAL 0x40ULL
#define NVML_THROTTLE_HW_POWER_BRAKE 0x80ULL
#define NVML_THROTTLE_DISPLAY_CLOCKS 0x100ULL

/* The library to load instead of libnvidia-ml.so.1 (before the first
 * nvml_open; a path, or a name the dynamic loader finds).  Naming one also
 * lets a recorded tree use NVML: its answers belong to that machine. */
void nvml_set_library(const char *path);
/* True when nvml_set_library named a library */
bool nvml_library_named(void);

/* Loads and initialises NVML once; 0, or a negative errno and the reason. */
int nvml_open(char *reason, size_t n);
/* Number of GPUs NVML sees (0 when it is not open). */
int nvml_count(void);
int nvml_driver_version(char *buf, size_t n);
/* Identity, memory size and NVLink peers of GPU i. */
int nvml_describe(int i, struct nvml_gpu *g);
/* Memory in use, utilisation, temperature and power of GPU i. */
int nvml_sample(int i, struct nvml_gpu *g);
/* ECC errors, retired pages, remapped rows, throttle reasons, temperature
 * against its slowdown threshold, power against its limits, of GPU i. */
int nvml_signals(int i, struct nvml_signals *s);
/* The names of the throttle reasons set in bits, comma-separated */
void nvml_throttle_names(unsigned long long bits, char *buf, size_t n);

#endif

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

/* Loads and initialises NVML once; 0, or a negative errno and the reason. */
int nvml_open(char *reason, size_t n);
/* Number of GPUs NVML sees (0 when it is not open). */
int nvml_count(void);
int nvml_driver_version(char *buf, size_t n);
/* Identity, memory size and NVLink peers of GPU i. */
int nvml_describe(int i, struct nvml_gpu *g);
/* Memory in use, utilisation, temperature and power of GPU i. */
int nvml_sample(int i, struct nvml_gpu *g);

#endif

/* signals.h: what can be wrong with a node now, read when asked (the
 * inventory says what the node has; this says how its parts are doing):
 * per GPU, from NVML, ECC errors, retired pages, remapped rows, throttle
 * reasons, temperature against its slowdown threshold and power against its
 * limits; per NIC, from sysfs, the error counters and physical port state.
 * Counters are since boot (the NICs) or since the driver loaded and ever
 * (ECC).  Judging them is the client's (client/health/). */
#ifndef BD_SIGNALS_H
#define BD_SIGNALS_H

#include <cjson/cJSON.h>

#include "inventory.h"
#include "nvml.h"

#define SIGNALS_MAX_COUNTERS 16

struct signals {
        int ngpus;
        struct {
                bool nvml;              /* NVML answered for this GPU */
                struct nvml_signals s;
        } gpus[BD_MAX_GPUS];
        char gpu_reason[160];           /* why there are no GPU signals, "" when there are */
        int nnics;
        struct {
                char name[64];
                char phys_state[32];    /* an RDMA port's physical state ("LinkUp"), "" for a netdev */
                int ncounters;
                struct {
                        const char *name;       /* static: the sysfs file's name */
                        unsigned long long value;
                } counters[SIGNALS_MAX_COUNTERS];
        } nics[BD_MAX_NICS];
        double uptime;                  /* seconds since boot, -1 unknown: the counters' period */
};

/* Reads the signals of inv's GPUs and NICs (under inv's root). */
void signals_read(const struct inventory *inv, struct signals *s);
cJSON *signals_json(const struct inventory *inv, const struct signals *s);

#endif

/* signals.c: what can be wrong with a node now (signals.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "signals.h"
#include "strutil.h"

/* An InfiniBand/RoCE port's error counters (IBA PortCounters, as the kernel
 * names them under ports/N/counters/) */
static const char *const rdma_counters[] = {
        "symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
        "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_discards",
        "port_xmit_constraint_errors", "port_rcv_constraint_errors", "local_link_integrity_errors",
        "excessive_buffer_overrun_errors", "VL15_dropped",
};
/* A network interface's (statistics/ and carrier_changes) */
static const char *const net_counters[] = {
        "rx_errors", "tx_errors", "rx_crc_errors", "rx_frame_errors", "rx_missed_errors", "tx_carrier_errors",
        "carrier_changes",
};

static bool read_counter(const struct inventory *inv, const char *path, unsigned long long *ret)
{
        char v[64], *end;
        if (inv_read(inv, path, v, sizeof(v)) < 0 || !*v)
                return false;
        unsigned long long x = strtoull(v, &end, 10);
        if (*end || v[0] == '-')
                return false;
        *ret = x;
        return true;
}

static void read_nic(const struct inventory *inv, const struct inv_nic *nic, struct signals *s)
{
        char p[512], v[64];
        typeof(s->nics[0]) *n = &s->nics[s->nnics++];
        STR_COPY(n->name, nic->name);
        if (nic->is_rdma) {
                snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/1/phys_state", nic->name);
                if (inv_read(inv, p, v, sizeof(v)) == 0) {
                        const char *c = strchr(v, ':');
                        STR_COPY(n->phys_state, c ? c + 1 + strspn(c + 1, " ") : v);
                }
        }
        const char *const *names = nic->is_rdma ? rdma_counters : net_counters;
        size_t count = nic->is_rdma ? ARRAY_SIZE(rdma_counters) : ARRAY_SIZE(net_counters);
        for (size_t k = 0; k < count && n->ncounters < SIGNALS_MAX_COUNTERS; k++) {
                if (nic->is_rdma)
                        snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/1/counters/%s", nic->name, names[k]);
                else if (streq(names[k], "carrier_changes"))
                        snprintf(p, sizeof(p), "/sys/class/net/%s/carrier_changes", nic->name);
                else
                        snprintf(p, sizeof(p), "/sys/class/net/%s/statistics/%s", nic->name, names[k]);
                unsigned long long x;
                if (read_counter(inv, p, &x)) {
                        n->counters[n->ncounters].name = names[k];
                        n->counters[n->ncounters++].value = x;
                }
        }
}

void signals_read(const struct inventory *inv, struct signals *s)
{
        memset(s, 0, sizeof(*s));
        s->uptime = inv->uptime;
        s->ngpus = inv->ngpus;
        STR_COPY(s->gpu_reason, inv->nvml_reason);
        for (int i = 0; i < inv->ngpus; i++)
                if (inv->gpus[i].nvml_index >= 0)
                        s->gpus[i].nvml = nvml_signals(inv->gpus[i].nvml_index, &s->gpus[i].s) == 0;
        for (int i = 0; i < inv->nnics && s->nnics < BD_MAX_NICS; i++)
                read_nic(inv, &inv->nics[i], s);
}

static void add_num(cJSON *o, const char *key, double v)
{
        cJSON_AddNumberToObject(o, key, v);
}

static cJSON *gpu_json(const struct inv_gpu *g, int index, const struct nvml_signals *s)
{
        cJSON *o = cJSON_CreateObject();
        add_num(o, "index", index);
        cJSON_AddStringToObject(o, "pci", g->pci.bdf);
        if (s->has_ecc) {
                cJSON *e = cJSON_AddObjectToObject(o, "ecc");
                cJSON *v = cJSON_AddObjectToObject(e, "volatile"), *a = cJSON_AddObjectToObject(e, "aggregate");
                add_num(v, "uncorrected", (double)s->ecc_volatile_uncorrected);
                add_num(v, "corrected", (double)s->ecc_volatile_corrected);
                add_num(a, "uncorrected", (double)s->ecc_aggregate_uncorrected);
                add_num(a, "corrected", (double)s->ecc_aggregate_corrected);
        }
        if (s->has_retired) {
                cJSON *r = cJSON_AddObjectToObject(o, "retired_pages");
                add_num(r, "single_bit", s->retired_sbe);
                add_num(r, "double_bit", s->retired_dbe);
                cJSON_AddBoolToObject(r, "pending", s->retired_pending);
        }
        if (s->has_remapped) {
                cJSON *r = cJSON_AddObjectToObject(o, "remapped_rows");
                add_num(r, "correctable", s->remapped_correctable);
                add_num(r, "uncorrectable", s->remapped_uncorrectable);
                cJSON_AddBoolToObject(r, "pending", s->remap_pending);
                cJSON_AddBoolToObject(r, "failure", s->remap_failure);
        }
        if (s->has_throttle) {
                char names[256];
                cJSON *t = cJSON_AddObjectToObject(o, "throttle");
                add_num(t, "bits", (double)s->throttle);
                nvml_throttle_names(s->throttle, names, sizeof(names));
                cJSON_AddStringToObject(t, "reasons", names);
        }
        if (s->has_temp)
                add_num(o, "temperature_c", s->temp_c);
        if (s->has_slowdown_temp)
                add_num(o, "slowdown_temperature_c", s->slowdown_temp_c);
        if (s->has_power)
                add_num(o, "power_w", s->power_mw / 1000.0);
        if (s->has_power_limit) {
                add_num(o, "power_limit_w", s->power_limit_mw / 1000.0);
                add_num(o, "power_default_limit_w", s->power_default_limit_mw / 1000.0);
        }
        return o;
}

cJSON *signals_json(const struct inventory *inv, const struct signals *s)
{
        cJSON *o = cJSON_CreateObject();
        if (s->uptime >= 0)
                add_num(o, "uptime_s", s->uptime);
        cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
        bool any = false;
        for (int i = 0; i < s->ngpus; i++)
                if (s->gpus[i].nvml) {
                        cJSON_AddItemToArray(gpus, gpu_json(&inv->gpus[i], i, &s->gpus[i].s));
                        any = true;
                }
        if (!any && s->ngpus)
                cJSON_AddStringToObject(o, "gpu_reason", s->gpu_reason[0] ? s->gpu_reason : "NVML did not answer");
        cJSON *nics = cJSON_AddArrayToObject(o, "nics");
        for (int i = 0; i < s->nnics; i++) {
                cJSON *n = cJSON_CreateObject(), *c;
                cJSON_AddStringToObject(n, "name", s->nics[i].name);
                if (s->nics[i].phys_state[0])
                        cJSON_AddStringToObject(n, "phys_state", s->nics[i].phys_state);
                c = cJSON_AddObjectToObject(n, "counters");
                for (int k = 0; k < s->nics[i].ncounters; k++)
                        add_num(c, s->nics[i].counters[k].name, (double)s->nics[i].counters[k].value);
                cJSON_AddItemToArray(nics, n);
        }
        return o;
}

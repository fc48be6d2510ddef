/* metrics.c: /metrics in Prometheus text format (version 0.0.4).
 *
 * One prefix (benchd_), base units (bytes, seconds, ratios), counters end in
 * _total, every family has HELP and TYPE.  Static facts come from the
 * inventory snapshot as info metrics; NIC counters and free space are read
 * at each scrape; GPU samples come from NVML when it is there.  A counter
 * file that cannot be read drops that one sample, never the scrape.
 * InfiniBand port_{xmit,rcv}_data count 4-byte words: they are exported in
 * bytes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "buf.h"
#include "daemon.h"
#include "datasets.h"
#include "health-report.h"
#include "nvml.h"
#include "signals.h"
#include "strutil.h"

/* Appends a label value with \, " and newline escaped, and a byte that
 * starts no valid UTF-8 character as U+FFFD: the format is UTF-8, and one
 * odd value would fail the whole scrape. */
static void label(struct bd_buf *b, const char *name, const char *value, bool first)
{
        buf_printf(b, "%s%s=\"", first ? "" : ",", name);
        for (const char *p = value ? value : ""; *p;) {
                size_t len = str_utf8_char_len(p);
                if (*p == '\\' || *p == '"')
                        buf_putc(b, '\\');
                if (*p == '\n')
                        buf_puts(b, "\\n");
                else if (!len)
                        buf_puts(b, "\xef\xbf\xbd");
                else
                        buf_add(b, p, len);
                p += len ? len : 1;
        }
        buf_putc(b, '"');
}

void metrics_family(struct bd_buf *b, const char *name, const char *type, const char *help)
{
        buf_printf(b, "# HELP benchd_%s %s\n# TYPE benchd_%s %s\n", name, help, name, type);
}

/* benchd_NAME{LABELS} VALUE with the labels given as name, value pairs. */
void metrics_sample(struct bd_buf *b, const char *name, double v, int nlabels, ...)
{
        va_list ap;
        buf_printf(b, "benchd_%s", name);
        if (nlabels) {
                buf_putc(b, '{');
                va_start(ap, nlabels);
                for (int i = 0; i < nlabels; i++) {
                        const char *k = va_arg(ap, const char *), *val = va_arg(ap, const char *);
                        label(b, k, val, i == 0);
                }
                va_end(ap);
                buf_putc(b, '}');
        }
        if (!isfinite(v))
                buf_puts(b, isnan(v) ? " NaN\n" : v > 0 ? " +Inf\n" : " -Inf\n");
        else if (v < 9e15 && v > -9e15 && v == (double)(long long)v)
                buf_printf(b, " %lld\n", (long long)v);
        else
                buf_printf(b, " %.15g\n", v);
}

/* A counter file: one unsigned decimal number. */
static bool read_u64(const char *root, const char *path, unsigned long long *ret)
{
        char p[1024], v[64];
        ssize_t n;
        snprintf(p, sizeof(p), "%s%s", streq(root, "/") ? "" : root, path);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, v, sizeof(v) - 1);
        close(fd);
        if (n <= 0)
                return false;
        v[n] = '\0';
        char *end;
        errno = 0;
        *ret = strtoull(v, &end, 10);
        return !errno && end != v && (*end == '\n' || *end == '\0');
}

/* "100 Gb/sec (4X EDR)" or "100000 Mb/s": bytes per second, 0 when unknown. */
static double rate_bytes(const char *rate)
{
        char *end;
        double v = strtod(rate, &end);
        if (end == rate || v <= 0)
                return 0;
        while (*end == ' ')
                end++;
        if (!strncmp(end, "Gb", 2))
                return v * 1e9 / 8;
        if (!strncmp(end, "Mb", 2))
                return v * 1e6 / 8;
        return 0;
}

struct nic_counters {
        const char *name;
        const char *port;       /* NULL for a network interface */
        unsigned long long v[4];        /* rx bytes, tx bytes, rx packets, tx packets */
        bool have[4];
};

static void read_nic(const char *root, const struct inv_nic *n, const char *port, struct nic_counters *c)
{
        char p[512];
        static const char *const net[4] = { "rx_bytes", "tx_bytes", "rx_packets", "tx_packets" };
        static const char *const ib[4] = { "port_rcv_data", "port_xmit_data", "port_rcv_packets", "port_xmit_packets" };
        static const char *const efa[4] = { "rx_bytes", "tx_bytes", "rx_pkts", "tx_pkts" };
        memset(c, 0, sizeof(*c));
        c->name = n->name;
        c->port = port;
        for (int i = 0; i < 4; i++) {
                if (!n->is_rdma)
                        snprintf(p, sizeof(p), "/sys/class/net/%s/statistics/%s", n->name, net[i]);
                else if (n->kind == NIC_EFA)
                        snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%s/hw_counters/%s", n->name, port, efa[i]);
                else
                        snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%s/counters/%s", n->name, port, ib[i]);
                c->have[i] = read_u64(root, p, &c->v[i]);
                if (c->have[i] && n->is_rdma && n->kind != NIC_EFA && i < 2)
                        c->v[i] *= 4;   /* 4-byte words */
        }
}

static void nic_metrics(struct bd_buf *b, const struct inventory *inv)
{
        static const char *const names[4] = { "nic_receive_bytes_total", "nic_transmit_bytes_total",
                                              "nic_receive_packets_total", "nic_transmit_packets_total" };
        static const char *const helps[4] = { "Bytes received by the NIC (RDMA devices: by their port).",
                                              "Bytes transmitted by the NIC (RDMA devices: by their port).",
                                              "Packets received by the NIC.", "Packets transmitted by the NIC." };
        struct nic_counters c[BD_MAX_NICS * 2];
        int nc = 0;
        metrics_family(b, "nic_info", "gauge", "A NIC of the node, labelled by its kind, PCI address and NUMA node.");
        for (int i = 0; i < inv->nnics; i++) {
                const struct inv_nic *n = &inv->nics[i];
                char numa[16];
                snprintf(numa, sizeof(numa), "%d", n->pci.numa);
                metrics_sample(b, "nic_info", 1, 5, "device", n->name, "kind", bd_nic_kind_name(n->kind), "pci_bus_id",
                       n->has_pci ? n->pci.bdf : "", "numa_node", numa, "paired_with", n->is_rdma ? n->netdev : n->rdma);
        }
        metrics_family(b, "nic_up", "gauge", "1 when the NIC's link is up (operstate up, or port state ACTIVE).");
        for (int i = 0; i < inv->nnics; i++) {
                const struct inv_nic *n = &inv->nics[i];
                char state[64], p[512];
                bool up;
                /* read now: the link may have changed since the inventory */
                if (n->is_rdma)
                        snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/1/state", n->name);
                else
                        snprintf(p, sizeof(p), "/sys/class/net/%s/operstate", n->name);
                if (inv_read(inv, p, state, sizeof(state)) < 0)
                        continue;
                up = n->is_rdma ? strstr(state, "ACTIVE") != NULL : streq(state, "up");
                metrics_sample(b, "nic_up", up, 1, "device", n->name);
        }
        metrics_family(b, "nic_speed_bytes", "gauge", "Link speed of the NIC in bytes per second.");
        for (int i = 0; i < inv->nnics; i++)
                if (rate_bytes(inv->nics[i].rate) > 0)
                        metrics_sample(b, "nic_speed_bytes", rate_bytes(inv->nics[i].rate), 1, "device", inv->nics[i].name);
        for (int i = 0; i < inv->nnics && nc < (int)ARRAY_SIZE(c); i++) {
                const struct inv_nic *n = &inv->nics[i];
                if (!n->is_rdma) {
                        read_nic(inv->root, n, NULL, &c[nc++]);
                        continue;
                }
                static const char *const ports[] = { "1", "2" };
                for (size_t p = 0; p < ARRAY_SIZE(ports) && nc < (int)ARRAY_SIZE(c); p++) {
                        char dir[1024];
                        snprintf(dir, sizeof(dir), "%s/sys/class/infiniband/%s/ports/%s",
                                 streq(inv->root, "/") ? "" : inv->root, n->name, ports[p]);
                        if (access(dir, F_OK) == 0)
                                read_nic(inv->root, n, ports[p], &c[nc++]);
                }
        }
        for (int k = 0; k < 4; k++) {
                metrics_family(b, names[k], "counter", helps[k]);
                for (int i = 0; i < nc; i++) {
                        if (!c[i].have[k])
                                continue;
                        if (c[i].port)
                                metrics_sample(b, names[k], (double)c[i].v[k], 2, "device", c[i].name, "port", c[i].port);
                        else
                                metrics_sample(b, names[k], (double)c[i].v[k], 1, "device", c[i].name);
                }
        }
}

static void gpu_metrics(struct bd_buf *b, const struct inventory *inv)
{
        char idx[16], numa[16];
        metrics_family(b, "gpus", "gauge", "GPUs found on the node.");
        metrics_sample(b, "gpus", inv->ngpus, 0);
        metrics_family(b, "gpu_info", "gauge", "A GPU of the node, labelled by name, UUID, PCI address and NUMA node.");
        for (int i = 0; i < inv->ngpus; i++) {
                const struct inv_gpu *g = &inv->gpus[i];
                snprintf(idx, sizeof(idx), "%d", i);
                snprintf(numa, sizeof(numa), "%d", g->pci.numa);
                metrics_sample(b, "gpu_info", 1, 6, "gpu", idx, "name", g->name, "uuid", g->uuid, "pci_bus_id", g->pci.bdf,
                       "numa_node", numa, "driver", inv->driver_version);
        }
        bool any = false;
        struct nvml_gpu s[BD_MAX_GPUS];
        for (int i = 0; i < inv->ngpus; i++) {
                memset(&s[i], 0, sizeof(s[i]));
                if (inv->gpus[i].nvml_index >= 0 && nvml_sample(inv->gpus[i].nvml_index, &s[i]) == 0)
                        any = true;
                else
                        s[i].mem_total = 0;
        }
        if (!any)
                return;
        metrics_family(b, "gpu_memory_total_bytes", "gauge", "GPU memory size (NVML).");
        for (int i = 0; i < inv->ngpus; i++)
                if (s[i].mem_total)
                        snprintf(idx, sizeof(idx), "%d", i), metrics_sample(b, "gpu_memory_total_bytes", (double)s[i].mem_total, 1, "gpu", idx);
        metrics_family(b, "gpu_memory_used_bytes", "gauge", "GPU memory in use (NVML).");
        for (int i = 0; i < inv->ngpus; i++)
                if (s[i].mem_total)
                        snprintf(idx, sizeof(idx), "%d", i), metrics_sample(b, "gpu_memory_used_bytes", (double)s[i].mem_used, 1, "gpu", idx);
        metrics_family(b, "gpu_utilization_ratio", "gauge", "Fraction of the last sample period the GPU was busy (NVML).");
        for (int i = 0; i < inv->ngpus; i++)
                if (s[i].has_util)
                        snprintf(idx, sizeof(idx), "%d", i), metrics_sample(b, "gpu_utilization_ratio", s[i].util_gpu / 100.0, 1, "gpu", idx);
        metrics_family(b, "gpu_temperature_celsius", "gauge", "GPU temperature (NVML).");
        for (int i = 0; i < inv->ngpus; i++)
                if (s[i].has_temp)
                        snprintf(idx, sizeof(idx), "%d", i), metrics_sample(b, "gpu_temperature_celsius", s[i].temp_c, 1, "gpu", idx);
        metrics_family(b, "gpu_power_watts", "gauge", "GPU power draw (NVML).");
        for (int i = 0; i < inv->ngpus; i++)
                if (s[i].has_power)
                        snprintf(idx, sizeof(idx), "%d", i), metrics_sample(b, "gpu_power_watts", s[i].power_mw / 1000.0, 1, "gpu", idx);
}

/* what can be wrong now (signals.h): GPU memory errors, throttling and
 * limits, NIC error counters; the figures benchctl health judges */
static void signal_metrics(struct bd_buf *b, const struct inventory *inv)
{
        struct signals *sg = xmalloc(sizeof(*sg));
        signals_read(inv, sg);
        char idx[16];
        bool any = false;
        for (int i = 0; i < sg->ngpus; i++)
                any |= sg->gpus[i].nvml;
#define EACH_GPU(cond, ...)                                                     \
        for (int i = 0; i < sg->ngpus; i++) {                                   \
                const struct nvml_signals *s = &sg->gpus[i].s;                  \
                if (!sg->gpus[i].nvml || !(cond))                               \
                        continue;                                               \
                snprintf(idx, sizeof(idx), "%d", i);                            \
                __VA_ARGS__;                                                    \
        }
        if (any) {
                metrics_family(b, "gpu_ecc_errors_total", "counter",
                               "GPU memory ECC errors (NVML): volatile since the driver loaded, aggregate ever.");
                EACH_GPU(s->has_ecc,
                         metrics_sample(b, "gpu_ecc_errors_total", (double)s->ecc_volatile_uncorrected, 3, "gpu", idx, "type",
                                        "uncorrected", "counter", "volatile");
                         metrics_sample(b, "gpu_ecc_errors_total", (double)s->ecc_volatile_corrected, 3, "gpu", idx, "type",
                                        "corrected", "counter", "volatile");
                         metrics_sample(b, "gpu_ecc_errors_total", (double)s->ecc_aggregate_uncorrected, 3, "gpu", idx,
                                        "type", "uncorrected", "counter", "aggregate");
                         metrics_sample(b, "gpu_ecc_errors_total", (double)s->ecc_aggregate_corrected, 3, "gpu", idx, "type",
                                        "corrected", "counter", "aggregate"));
                metrics_family(b, "gpu_retired_pages", "gauge", "GPU memory pages retired, by cause (NVML).");
                EACH_GPU(s->has_retired,
                         metrics_sample(b, "gpu_retired_pages", s->retired_sbe, 2, "gpu", idx, "cause", "single_bit");
                         metrics_sample(b, "gpu_retired_pages", s->retired_dbe, 2, "gpu", idx, "cause", "double_bit"));
                metrics_family(b, "gpu_retired_pages_pending", "gauge", "1 when a page waits for a reset to be retired.");
                EACH_GPU(s->has_retired, metrics_sample(b, "gpu_retired_pages_pending", s->retired_pending, 1, "gpu", idx));
                metrics_family(b, "gpu_remapped_rows", "gauge", "GPU memory rows remapped, by the error's kind (NVML).");
                EACH_GPU(s->has_remapped,
                         metrics_sample(b, "gpu_remapped_rows", s->remapped_correctable, 2, "gpu", idx, "kind", "correctable");
                         metrics_sample(b, "gpu_remapped_rows", s->remapped_uncorrectable, 2, "gpu", idx, "kind",
                                        "uncorrectable"));
                metrics_family(b, "gpu_remap_pending", "gauge", "1 when a row remapping waits for a reset.");
                EACH_GPU(s->has_remapped, metrics_sample(b, "gpu_remap_pending", s->remap_pending, 1, "gpu", idx));
                metrics_family(b, "gpu_remap_failure", "gauge", "1 when a row remapping failed.");
                EACH_GPU(s->has_remapped, metrics_sample(b, "gpu_remap_failure", s->remap_failure, 1, "gpu", idx));
                metrics_family(b, "gpu_throttle_reasons", "gauge",
                               "The GPU's clock throttle reasons now (NVML nvmlClocksThrottleReason bits).");
                EACH_GPU(s->has_throttle, metrics_sample(b, "gpu_throttle_reasons", (double)s->throttle, 1, "gpu", idx));
                metrics_family(b, "gpu_slowdown_temperature_celsius", "gauge", "Temperature at which the GPU slows down.");
                EACH_GPU(s->has_slowdown_temp,
                         metrics_sample(b, "gpu_slowdown_temperature_celsius", s->slowdown_temp_c, 1, "gpu", idx));
                metrics_family(b, "gpu_power_limit_watts", "gauge", "The GPU's enforced power limit and its default.");
                EACH_GPU(s->has_power_limit,
                         metrics_sample(b, "gpu_power_limit_watts", s->power_limit_mw / 1000.0, 2, "gpu", idx, "limit",
                                        "enforced");
                         metrics_sample(b, "gpu_power_limit_watts", s->power_default_limit_mw / 1000.0, 2, "gpu", idx,
                                        "limit", "default"));
        }
#undef EACH_GPU
        metrics_family(b, "nic_errors_total", "counter",
                       "A NIC's error counters since boot (RDMA port counters; a network interface's statistics).");
        for (int i = 0; i < sg->nnics; i++)
                for (int k = 0; k < sg->nics[i].ncounters; k++)
                        metrics_sample(b, "nic_errors_total", (double)sg->nics[i].counters[k].value, 2, "device",
                                       sg->nics[i].name, "counter", sg->nics[i].counters[k].name);
        free(sg);
}

static void node_metrics(struct bd_buf *b, const struct inventory *inv)
{
        char v[64];
        metrics_family(b, "node_info", "gauge", "The node, labelled by host name, OS and kernel.");
        metrics_sample(b, "node_info", 1, 3, "hostname", inv->hostname, "os", inv->os, "kernel", inv->kernel);
        metrics_family(b, "cpu_info", "gauge", "The node's CPUs, labelled by model and layout.");
        char s[16], c[16], t[16];
        snprintf(s, sizeof(s), "%d", inv->sockets);
        snprintf(c, sizeof(c), "%d", inv->cores_per_socket);
        snprintf(t, sizeof(t), "%d", inv->threads_per_core);
        metrics_sample(b, "cpu_info", 1, 4, "model", inv->cpu_model, "sockets", s, "cores_per_socket", c, "threads_per_core", t);
        metrics_family(b, "cpus_online", "gauge", "Online logical CPUs.");
        metrics_sample(b, "cpus_online", inv->online_cpus, 0);
        metrics_family(b, "numa_node_memory_total_bytes", "gauge", "Memory of each NUMA node.");
        for (int i = 0; i < inv->nnodes; i++) {
                if (inv->nodes[i].mem_kb < 0)
                        continue; /* unknown */
                snprintf(v, sizeof(v), "%d", inv->nodes[i].id);
                metrics_sample(b, "numa_node_memory_total_bytes", (double)inv->nodes[i].mem_kb * 1024, 1, "node", v);
        }
        metrics_family(b, "software_info", "gauge", "Versions of the software training depends on (empty when not found).");
        metrics_sample(b, "software_info", 1, 4, "nvidia_driver", inv->sw.driver, "cuda", inv->sw.cuda, "nccl", inv->sw.nccl,
               "mpi", inv->sw.mpi);
        metrics_family(b, "storage_free_bytes", "gauge", "Free space of local filesystems that can take a staged dataset.");
        for (int i = 0; i < inv->nmounts; i++) {
                struct statvfs sv;
                char p[512];
                snprintf(p, sizeof(p), "%s%s", streq(inv->root, "/") ? "" : inv->root, inv->mounts[i].mnt);
                if (statvfs(p, &sv) == 0)
                        metrics_sample(b, "storage_free_bytes", (double)sv.f_bavail * sv.f_frsize, 2, "mount", inv->mounts[i].mnt,
                               "filesystem", inv->mounts[i].fs);
        }
}

static const char *features(void)
{
        return ""
#ifdef HAVE_MICROHTTPD
               "http "
#endif
#ifdef HAVE_SYSTEMD
               "journal "
#endif
#ifdef HAVE_NUMA
               "numa "
#endif
#ifdef HAVE_XXHASH
               "staging "
#endif
               "nvml-dlopen";
}

void metrics_write(struct daemon *d, struct bd_buf *out)
{
        double t0 = clock_monotonic();
        struct inv_snapshot *s = daemon_inventory_get(d, -1);
        const struct inventory *inv = &s->inv;
        buf_grow(out, 16384);
        metrics_family(out, "build_info", "gauge", "A constant 1 labelled by the version and features of benchd.");
        metrics_sample(out, "build_info", 1, 2, "version", PACKAGE_VERSION, "features", features());
        metrics_family(out, "start_time_seconds", "gauge", "When benchd started, in seconds since the epoch.");
        metrics_sample(out, "start_time_seconds", d->start_wall, 0);
        node_metrics(out, inv);
        gpu_metrics(out, inv);
        nic_metrics(out, inv);
        signal_metrics(out, inv);
        metrics_family(out, "inventory_warnings", "gauge", "Items the last inventory skipped (unreadable or odd files).");
        metrics_sample(out, "inventory_warnings", cJSON_GetArraySize(inv->warnings), 0);
        metrics_family(out, "inventory_age_seconds", "gauge", "Age of the inventory these metrics describe.");
        metrics_sample(out, "inventory_age_seconds", clock_monotonic() - s->taken, 0);
        daemon_inventory_put(s);
        datasets_metrics(d, out);
        pthread_mutex_lock(&d->lock);
        if (d->report)
                health_report_metrics(d->report, out);
        pthread_mutex_unlock(&d->lock);
        metrics_family(out, "http_requests_total", "counter", "HTTP requests answered, by status class.");
        static const char *const classes[] = { "", "1xx", "2xx", "3xx", "4xx", "5xx" };
        for (int i = 1; i <= 5; i++)
                metrics_sample(out, "http_requests_total", (double)atomic_load(&d->requests[i]), 1, "code", classes[i]);
        metrics_family(out, "http_request_timeouts_total", "counter",
                       "Connections closed because a request's line and headers took longer than request_timeout.");
        metrics_sample(out, "http_request_timeouts_total", (double)atomic_load(&d->request_timeouts), 0);
        metrics_family(out, "scrapes_total", "counter", "Scrapes of /metrics served.");
        metrics_sample(out, "scrapes_total", (double)atomic_fetch_add(&d->scrapes, 1) + 1, 0);
        metrics_family(out, "scrape_duration_seconds", "gauge", "Time this scrape took to collect, in seconds.");
        metrics_sample(out, "scrape_duration_seconds", clock_monotonic() - t0, 0);
}

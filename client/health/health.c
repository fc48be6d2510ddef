/* health.c: each node held against its system (health.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "health.h"
#include "json.h"
#include "macro.h"
#include "strutil.h"

static const char A_NODE[] = "drain it; check the node (power, network) and its benchd";
static const char A_GPU[] = "drain it; reseat or replace the GPU (one that fell off the bus may come back after a reset)";
static const char A_NIC[] = "drain it; reseat or replace the adapter and check its cable";
static const char A_LINK[] = "drain it; check the cable and the switch port";
static const char A_RESEAT[] = "reseat the card at the next drain; watch it";
static const char A_NUMA[] = "drain it; check its memory and the BIOS settings (a NUMA node is missing)";
static const char A_FILE[] = "watch: correct the system file, or the node";
static const char A_CPUS[] = "watch: bring the CPUs online, or correct the system file";
static const char A_RESET[] = "drain it and reset the GPU (nvidia-smi -r); replace it if the errors come back";
static const char A_RESET_NEXT[] = "reset the GPU at the next drain (nvidia-smi -r) so the memory is retired or remapped";
static const char A_REPLACE[] = "drain it and replace the GPU";
static const char A_ECC_PAST[] = "watch: uncorrected ECC errors in the GPU's history; replace it at the next";
static const char A_COOL[] = "drain it; check the cooling (fans, airflow, inlet temperature) and the power supply";
static const char A_POWER_CAP[] = "watch: restore the default power limit (nvidia-smi -pl) unless the site set it";
static const char A_SOFTWARE[] = "drain it; install the version the system names (or correct the system file)";
static const char A_SOFTWARE_OTHER[] = "watch: install the version the system names, or correct the system file";
static const char A_RUNTIME[] = "install the container runtime the system runs its trials with, or check where it is";
static const char A_NIC_ERRORS[] = "watch: check the cable, the transceiver and the switch port; drain it if the count grows";

/* Thresholds, in one place (benchctl(1) HEALTH lists them) */
#define GPU_RETIRED_PAGES_MAX 60        /* NVIDIA: a GPU with 60 or more retired pages is to be replaced */
#define GPU_TEMP_MARGIN_C 5             /* degraded within this much of the slowdown temperature */
#define GPU_TEMP_MAX_C 85               /* when the GPU gives no slowdown temperature */
#define GPU_POWER_CAP_RATIO 0.95        /* an enforced limit under 95% of the default: capped */
/* the throttle reasons that mean heat or power trouble (not idle, not the power cap a busy GPU meets) */
#define GPU_THROTTLE_BAD (0x8ULL | 0x20ULL | 0x40ULL | 0x80ULL)

/* A NIC error counter at or over `limit` a day of uptime (counters run
 * from boot; an uptime under a day counts as a day), or since boot when
 * `since_boot` */
static const struct {
        const char *counter;
        double limit;
        bool since_boot;
        const char *what;
} nic_limits[] = {
        { "link_downed", 1, true, "link went down" },
        { "link_error_recovery", 10, false, "link error recoveries" },
        { "symbol_error", 10, false, "symbol errors (bad signal: cable or transceiver)" },
        { "port_rcv_errors", 10, false, "receive errors" },
        { "port_rcv_remote_physical_errors", 10, false, "packets received with remote physical errors" },
        { "local_link_integrity_errors", 1, false, "link integrity errors" },
        { "excessive_buffer_overrun_errors", 1, false, "buffer overruns" },
        { "rx_crc_errors", 10, false, "receive CRC errors" },
        { "rx_frame_errors", 10, false, "receive frame errors" },
        { "rx_errors", 100, false, "receive errors" },
        { "tx_errors", 100, false, "transmit errors" },
        { "tx_carrier_errors", 10, false, "transmit carrier errors" },
        { "carrier_changes", 10, false, "carrier changes (a flapping link)" },
};

#define add health_add

const char *health_level_name(enum health_level l)
{
        return l == HEALTH_FAILED ? "failed" : l == HEALTH_DEGRADED ? "degraded" : "ok";
}

void health_add(struct health_node *n, enum health_level level, const char *check, const char *action,
                const char *fmt, ...)
{
        n->findings = xrealloc(n->findings, (size_t)(n->nfindings + 1) * sizeof(*n->findings));
        struct health_finding *f = &n->findings[n->nfindings++];
        *f = (struct health_finding){ .level = level, .action = action };
        STR_COPY(f->check, check);
        char raw[sizeof(f->evidence)];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(raw, sizeof(raw), fmt, ap);
        va_end(ap);
        /* names a node sent: no escape sequence reaches a terminal */
        str_sanitize(f->evidence, sizeof(f->evidence), raw, "?");
        if (level > n->verdict)
                n->verdict = level;
}

/* a count or number a node sent, dflt when it is none (or no plausible one) */
static int num_or(const cJSON *o, const char *key, int dflt)
{
        const cJSON *v = json_get(o, key);
        return cJSON_IsNumber(v) && v->valuedouble >= -1 && v->valuedouble <= 1e6 ? (int)v->valuedouble : dflt;
}

/* the GPUs: how many, which model, on which NUMA node */
static void check_gpus(const cJSON *sys, const cJSON *inv, struct health_node *n)
{
        long want = json_int(sys, "gpus_per_node", 0);
        const cJSON *gpus = json_get(inv, "gpus");
        int have = cJSON_GetArraySize(gpus);
        n->checks++;
        if (have < want) {
                const char *why = json_str(inv, "gpu_reason", NULL);
                add(n, HEALTH_FAILED, "gpu.count", A_GPU, "%d GPU%s, the system has %ld%s%s", have, have == 1 ? "" : "s",
                    want, why && *why ? ": " : "", why && *why ? why : "");
        }
        const char *model = json_str(sys, "gpu_model", NULL);
        const cJSON *numa = json_get(sys, "topology.gpu_numa");
        const cJSON *g;
        int i = 0;
        cJSON_ArrayForEach(g, gpus) {
                const char *name = json_str(g, "name", "?");
                const char *addr = json_str(g, "pci.address", "?");
                if (model && *model) {
                        n->checks++;
                        if (!strcasestr(name, model))
                                add(n, HEALTH_DEGRADED, "gpu.model", A_FILE, "GPU %d (%s) is a %s, the system has %s", i,
                                    addr, name, model);
                }
                const cJSON *want_numa = cJSON_GetArrayItem(numa, i);
                int got = num_or(json_get(g, "pci"), "numa_node", -1);
                if (cJSON_IsNumber(want_numa) && got >= 0) {
                        n->checks++;
                        if (got != want_numa->valueint)
                                add(n, HEALTH_DEGRADED, "gpu.numa", A_FILE,
                                    "GPU %d (%s) is on NUMA node %d, the system says %d: its rank would be bound to "
                                    "the other socket", i, addr, got, want_numa->valueint);
                }
                i++;
        }
}

static bool link_up(const char *state)
{
        return state && (!strcasecmp(state, "up") || !strcasecmp(state, "active"));
}

/* the NICs the system names: there, of their kind, up, paired, near their NUMA node */
static void check_nics(const cJSON *sys, const cJSON *inv, struct health_node *n)
{
        const cJSON *want, *nics = json_get(inv, "nics");
        cJSON_ArrayForEach(want, json_get(sys, "topology.nics")) {
                const char *name = json_str(want, "name", "?"), *kind = json_str(want, "kind", NULL);
                const char *netdev = json_str(want, "netdev", NULL);
                const cJSON *have = NULL, *e;
                cJSON_ArrayForEach(e, nics)
                        if (streq(json_str(e, "name", ""), name))
                                have = e;
                n->checks++;
                if (!have) {
                        add(n, HEALTH_FAILED, "nic.present", A_NIC, "no %s (%s): the node does not see the adapter",
                            name, kind ? kind : "NIC");
                        continue;
                }
                const char *hk = json_str(have, "kind", "?"), *state = json_str(have, "state", NULL);
                n->checks++;
                if (kind && !streq(hk, kind))
                        add(n, HEALTH_DEGRADED, "nic.kind", A_FILE, "%s is %s, the system says %s", name, hk, kind);
                n->checks++;
                if (!link_up(state))
                        add(n, HEALTH_FAILED, "nic.link", A_LINK, "%s link %s%s%s", name, state ? state : "state unknown",
                            json_str(have, "rate", NULL) ? ", rate " : "", json_str(have, "rate", ""));
                if (netdev) {
                        const char *paired = json_str(have, "netdev", NULL);
                        n->checks++;
                        if (!paired || !streq(paired, netdev))
                                add(n, HEALTH_DEGRADED, "nic.netdev", A_FILE, "%s is paired with %s, the system says %s",
                                    name, paired ? paired : "no network interface", netdev);
                }
                const cJSON *wn = json_get(want, "numa");
                int got = num_or(json_get(have, "pci"), "numa_node", -1);
                if (cJSON_IsNumber(wn) && got >= 0) {
                        n->checks++;
                        if (got != wn->valueint)
                                add(n, HEALTH_DEGRADED, "nic.numa", A_FILE, "%s is on NUMA node %d, the system says %d",
                                    name, got, wn->valueint);
                }
        }
}

/* a device's PCIe link at the width it can train to (the speed is not
 * judged: GPUs lower it when idle) */
static void check_link(const char *what, const cJSON *pci, char (*seen)[16], int *nseen, struct health_node *n)
{
        const char *addr = json_str(pci, "address", NULL);
        int width = num_or(pci, "link_width", 0), max = num_or(pci, "max_link_width", 0);
        if (!addr || !width || !max)
                return;
        for (int i = 0; i < *nseen; i++)
                if (streq(seen[i], addr))
                        return; /* an RDMA device and its netdev: one card */
        if (*nseen < 128)
                str_copy(seen[(*nseen)++], 16, addr);
        n->checks++;
        if (width < max)
                add(n, HEALTH_DEGRADED, "pcie.width", A_RESEAT, "%s (%s) trained to x%d of x%d (%s, up to %s)", what, addr,
                    width, max, json_str(pci, "link_speed", "?"), json_str(pci, "max_link_speed", "?"));
}

static void check_links(const cJSON *inv, struct health_node *n)
{
        char seen[128][16];
        int nseen = 0;
        const cJSON *e;
        int i = 0;
        cJSON_ArrayForEach(e, json_get(inv, "gpus")) {
                char what[32];
                snprintf(what, sizeof(what), "GPU %d", i++);
                check_link(what, json_get(e, "pci"), seen, &nseen, n);
        }
        cJSON_ArrayForEach(e, json_get(inv, "nics"))
                check_link(json_str(e, "name", "NIC"), json_get(e, "pci"), seen, &nseen, n);
}

/* the CPUs and NUMA nodes the binding plan assumes */
static void check_cpus(const cJSON *sys, const cJSON *inv, struct health_node *n)
{
        const cJSON *cpu = json_get(inv, "cpu");
        static const char *const keys[] = { "sockets", "cores_per_socket", "threads_per_core" };
        int have[3];
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                _cleanup_free_ char *k = xasprintf("cpu.%s", keys[i]);
                long want = json_int(sys, k, 0);
                have[i] = num_or(cpu, keys[i], 0);
                if (!want || !have[i])
                        continue;
                n->checks++;
                if (have[i] != want)
                        add(n, HEALTH_DEGRADED, "cpu.layout", A_FILE, "%d %s, the system says %ld%s", have[i], keys[i],
                            want, streq(keys[i], "threads_per_core") ? " (hyperthreads on or off in the BIOS)" : "");
        }
        int online = num_or(cpu, "online_cpus", 0), all = have[0] * have[1] * have[2];
        if (online && all) {
                n->checks++;
                if (online < all)
                        add(n, HEALTH_DEGRADED, "cpu.online", A_CPUS, "%d of its %d CPUs online", online, all);
        }
        const cJSON *nodes = json_get(inv, "numa_nodes"), *e;
        long sockets = json_int(sys, "cpu.sockets", 0);
        int count = cJSON_GetArraySize(nodes);
        n->checks++;
        if (count && sockets && count < sockets)
                add(n, HEALTH_FAILED, "numa.nodes", A_NUMA, "%d NUMA node%s, the system has %ld sockets", count,
                    count == 1 ? "" : "s", sockets);
        /* the nodes the system's GPUs and NICs sit on */
        const cJSON *want;
        cJSON_ArrayForEach(want, json_get(sys, "topology.gpu_numa")) {
                bool found = false;
                cJSON_ArrayForEach(e, nodes)
                        found |= num_or(e, "id", -1) == want->valueint;
                if (!found && count) {
                        n->checks++;
                        add(n, HEALTH_FAILED, "numa.nodes", A_NUMA, "no NUMA node %d, where the system has GPUs",
                            want->valueint);
                        break;
                }
        }
}

static unsigned long long count_of(const cJSON *o, const char *key)
{
        const cJSON *v = json_get(o, key);
        if (!cJSON_IsNumber(v) || !(v->valuedouble > 0))
                return 0;
        return v->valuedouble < 1e18 ? (unsigned long long)v->valuedouble : 1000000000000000000ULL;
}

/* a GPU's signals (NVML): memory errors, heat, power */
static void check_gpu_signals(const cJSON *g, struct health_node *n)
{
        int i = num_or(g, "index", -1);
        const char *addr = json_str(g, "pci", "?");
        const cJSON *ecc = json_get(g, "ecc");
        if (ecc) {
                unsigned long long vol = count_of(ecc, "volatile.uncorrected"), agg = count_of(ecc, "aggregate.uncorrected");
                n->checks++;
                if (vol)
                        add(n, HEALTH_FAILED, "gpu.ecc", A_RESET,
                            "GPU %d (%s): %llu uncorrected ECC error%s since the driver loaded (%llu ever)", i, addr, vol,
                            vol == 1 ? "" : "s", agg);
                else if (agg)
                        add(n, HEALTH_DEGRADED, "gpu.ecc", A_ECC_PAST,
                            "GPU %d (%s): %llu uncorrected ECC error%s in its history, none since the driver loaded", i,
                            addr, agg, agg == 1 ? "" : "s");
        }
        const cJSON *ret = json_get(g, "retired_pages");
        if (ret) {
                unsigned long long sbe = count_of(ret, "single_bit"), dbe = count_of(ret, "double_bit");
                n->checks++;
                if (sbe + dbe >= GPU_RETIRED_PAGES_MAX)
                        add(n, HEALTH_FAILED, "gpu.retired", A_REPLACE,
                            "GPU %d (%s): %llu retired pages (%llu single-bit, %llu double-bit), %d or more", i, addr,
                            sbe + dbe, sbe, dbe, GPU_RETIRED_PAGES_MAX);
                else if (cJSON_IsTrue(json_get(ret, "pending")))
                        add(n, HEALTH_DEGRADED, "gpu.retired", A_RESET_NEXT,
                            "GPU %d (%s): a page waits to be retired (%llu retired)", i, addr, sbe + dbe);
        }
        const cJSON *rows = json_get(g, "remapped_rows");
        if (rows) {
                n->checks++;
                if (cJSON_IsTrue(json_get(rows, "failure")))
                        add(n, HEALTH_FAILED, "gpu.remap", A_REPLACE,
                            "GPU %d (%s): a row remapping failed (%llu uncorrectable, %llu correctable rows remapped)", i,
                            addr, count_of(rows, "uncorrectable"), count_of(rows, "correctable"));
                else if (cJSON_IsTrue(json_get(rows, "pending")))
                        add(n, HEALTH_DEGRADED, "gpu.remap", A_RESET_NEXT, "GPU %d (%s): a row remapping waits for a reset",
                            i, addr);
        }
        const cJSON *thr = json_get(g, "throttle");
        if (thr) {
                unsigned long long bits = count_of(thr, "bits");
                n->checks++;
                if (bits & GPU_THROTTLE_BAD)
                        add(n, HEALTH_DEGRADED, "gpu.throttle", A_COOL, "GPU %d (%s) slowed down: %s", i, addr,
                            json_str(thr, "reasons", "?"));
        }
        int temp = num_or(g, "temperature_c", -1), slow = num_or(g, "slowdown_temperature_c", -1);
        if (temp >= 0) {
                int limit = slow > 0 ? slow - GPU_TEMP_MARGIN_C : GPU_TEMP_MAX_C;
                n->checks++;
                if (temp >= limit)
                        add(n, HEALTH_DEGRADED, "gpu.temp", A_COOL, "GPU %d (%s) at %d C, %s %d C", i, addr, temp,
                            slow > 0 ? "its slowdown temperature is" : "over", slow > 0 ? slow : GPU_TEMP_MAX_C);
        }
        const cJSON *lim = json_get(g, "power_limit_w"), *dflt = json_get(g, "power_default_limit_w");
        if (cJSON_IsNumber(lim) && cJSON_IsNumber(dflt) && dflt->valuedouble > 0) {
                n->checks++;
                if (lim->valuedouble < GPU_POWER_CAP_RATIO * dflt->valuedouble)
                        add(n, HEALTH_DEGRADED, "gpu.power", A_POWER_CAP, "GPU %d (%s) power capped at %.0f W of its default %.0f W",
                            i, addr, lim->valuedouble, dflt->valuedouble);
        }
}

/* the NICs' error counters and physical state */
static void check_nic_signals(const cJSON *sys, const cJSON *signals, struct health_node *n)
{
        const cJSON *up = json_get(signals, "uptime_s");
        double days = cJSON_IsNumber(up) && up->valuedouble > 86400 ? up->valuedouble / 86400 : 1;
        const cJSON *nic;
        cJSON_ArrayForEach(nic, json_get(signals, "nics")) {
                const char *name = json_str(nic, "name", "?");
                /* the NICs the system names, or every one when it names none */
                const cJSON *want, *named = json_get(sys, "topology.nics");
                bool judged = cJSON_GetArraySize(named) == 0;
                cJSON_ArrayForEach(want, named) {
                        const char *w = json_str(want, "name", ""), *nd = json_str(want, "netdev", "");
                        judged |= streq(w, name) || streq(nd, name);
                }
                if (!judged)
                        continue;
                const cJSON *counters = json_get(nic, "counters");
                for (size_t k = 0; k < ARRAY_SIZE(nic_limits); k++) {
                        const cJSON *c = json_get(counters, nic_limits[k].counter);
                        if (!cJSON_IsNumber(c))
                                continue;
                        n->checks++;
                        double v = c->valuedouble;
                        if (nic_limits[k].since_boot ? v >= nic_limits[k].limit : v / days >= nic_limits[k].limit)
                                add(n, HEALTH_DEGRADED, "nic.errors", A_NIC_ERRORS, "%s: %s %.0f in %.1f days up (%s; %g%s)",
                                    name, nic_limits[k].counter, v, cJSON_IsNumber(up) ? up->valuedouble / 86400 : 0,
                                    nic_limits[k].what, nic_limits[k].limit,
                                    nic_limits[k].since_boot ? " since boot" : " a day or more");
                }
        }
}

/* The software the system names (its section "software"), each against the
 * version the node's inventory gives; the container runtime it launches
 * with against the programs the node has */
static void check_software(const cJSON *sys, const cJSON *inv, struct health_node *n)
{
        static const struct {
                const char *key, *what;
        } sw[] = {
                { "nvidia_driver", "NVIDIA driver" }, { "cuda", "CUDA" }, { "nccl", "NCCL" }, { "mpi", "MPI" },
        };
        for (size_t i = 0; i < ARRAY_SIZE(sw); i++) {
                const cJSON *r = cJSON_GetObjectItemCaseSensitive(json_get(sys, "software"), sw[i].key);
                if (!cJSON_IsString(r))
                        continue;
                n->checks++;
                const cJSON *h = cJSON_GetObjectItemCaseSensitive(json_get(inv, "software"), sw[i].key);
                char have[96] = "";
                if (cJSON_IsString(h))
                        str_sanitize(have, sizeof(have), h->valuestring, "?");
                char check[24];
                snprintf(check, sizeof(check), "sw.%s", sw[i].key);
                if (!have[0])
                        /* benchd looks where the packages install it, not
                         * in environment modules: not found is not absent */
                        add(n, HEALTH_DEGRADED, check, A_SOFTWARE_OTHER, "no %s found where benchd looks, the system "
                            "names %s", sw[i].what, r->valuestring);
                else if (!str_version_satisfies(have, r->valuestring)) {
                        /* under a minimum: what the runs need is not there;
                         * another version than the one named: they run, on
                         * other software than the system's results */
                        bool minimum = str_version_minimum(r->valuestring);
                        add(n, minimum ? HEALTH_FAILED : HEALTH_DEGRADED, check, minimum ? A_SOFTWARE : A_SOFTWARE_OTHER,
                            "%s %s, the system names %s", sw[i].what, have, r->valuestring);
                }
        }
        static const struct {
                const char *runtime, *prog, *alt;
        } progs[] = {
                { "docker", "docker", NULL }, { "podman", "podman", NULL }, { "charliecloud", "ch-run", NULL },
                { "apptainer", "apptainer", NULL }, { "singularity", "singularity", "apptainer" },
        };
        const char *runtime = json_str(sys, "container.runtime", "none");
        const cJSON *have = json_get(inv, "software.container_runtimes");
        if (!cJSON_IsArray(have))
                return; /* a benchd that does not say */
        for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
                if (!streq(runtime, progs[i].runtime))
                        continue;
                n->checks++;
                const cJSON *e;
                cJSON_ArrayForEach(e, have)
                        if (cJSON_IsString(e) && (streq(e->valuestring, progs[i].prog) ||
                                                  (progs[i].alt && streq(e->valuestring, progs[i].alt))))
                                return;
                /* benchd looks in the usual directories only */
                add(n, HEALTH_DEGRADED, "sw.container", A_RUNTIME, "no %s where benchd looks (/usr/bin, "
                    "/usr/local/bin, ...): the system runs its trials in %s containers", progs[i].prog, runtime);
        }
}

void health_check_node(const cJSON *sys, const char *node, const cJSON *inventory, const cJSON *signals,
                       const char *error, struct health_node *ret)
{
        *ret = (struct health_node){ .node = xstrdup(node) };
        ret->checks = 1;
        if (!inventory) {
                add(ret, HEALTH_FAILED, "node.reach", A_NODE, "its benchd did not answer: %s",
                    error && *error ? error : "no inventory");
                return;
        }
        const char *host = json_str(inventory, "host.hostname", NULL);
        if (host) {
                char clean[256];
                str_sanitize(clean, sizeof(clean), host, "?");
                ret->host = xstrdup(clean);
        }
        const char *name = json_str(inventory, "host.node_name", NULL);
        if (name && *name) {
                char clean[256];
                str_sanitize(clean, sizeof(clean), name, "?");
                ret->node_name = xstrdup(clean);
        }
        check_gpus(sys, inventory, ret);
        check_nics(sys, inventory, ret);
        check_links(inventory, ret);
        check_cpus(sys, inventory, ret);
        check_software(sys, inventory, ret);
        if (signals) {
                const cJSON *g;
                cJSON_ArrayForEach(g, json_get(signals, "gpus"))
                        check_gpu_signals(g, ret);
                check_nic_signals(sys, signals, ret);
                const char *why = json_str(signals, "gpu_reason", NULL);
                if (why && *why)
                        ret->note = xasprintf("no GPU signals: %s", why);
        } else if (error && *error)
                ret->note = xasprintf("no signals: %s", error);
}

void health_node_release(struct health_node *n)
{
        free(n->node);
        free(n->host);
        free(n->node_name);
        free(n->note);
        free(n->findings);
        *n = (struct health_node){ 0 };
}

enum health_level health_worst(const struct health_node *nodes, int n)
{
        enum health_level w = HEALTH_OK;
        for (int i = 0; i < n; i++)
                if (nodes[i].verdict > w)
                        w = nodes[i].verdict;
        return w;
}

void health_text(const char *system, const struct health_node *nodes, int n, struct bd_buf *out)
{
        int count[3] = { 0 };
        size_t w = 4;
        for (int i = 0; i < n; i++) {
                count[nodes[i].verdict]++;
                w = strlen(nodes[i].node) > w ? strlen(nodes[i].node) : w;
        }
        buf_printf(out, "%-*s  %-8s  %-20s  %6s  %s\n", (int)w, "NODE", "VERDICT", "HOST", "CHECKS", "FINDINGS");
        for (int i = 0; i < n; i++) {
                const struct health_node *h = &nodes[i];
                buf_printf(out, "%-*s  %-8s  %-20s  %6d  %d\n", (int)w, h->node, health_level_name(h->verdict),
                           h->host ? h->host : "-", h->checks, h->nfindings);
                if (h->note) {
                        char clean[256];
                        str_sanitize(clean, sizeof(clean), h->note, "?");
                        buf_printf(out, "  %-8s  %-11s  %s\n", "note", "", clean);
                }
                for (int k = 0; k < h->nfindings; k++) {
                        const struct health_finding *f = &h->findings[k];
                        buf_printf(out, "  %-8s  %-11s  %s\n  %-8s  %-11s  -> %s\n", health_level_name(f->level),
                                   f->check, f->evidence, "", "", f->action);
                }
        }
        buf_printf(out, "%s: %s (%d node%s: %d ok, %d degraded, %d failed)\n", system,
                   health_level_name(health_worst(nodes, n)), n, n == 1 ? "" : "s", count[HEALTH_OK],
                   count[HEALTH_DEGRADED], count[HEALTH_FAILED]);
}

cJSON *health_json(const char *system, const struct health_node *nodes, int n)
{
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "system", system);
        cJSON_AddStringToObject(o, "verdict", health_level_name(health_worst(nodes, n)));
        cJSON *arr = cJSON_AddArrayToObject(o, "nodes");
        for (int i = 0; i < n; i++) {
                const struct health_node *h = &nodes[i];
                cJSON *j = cJSON_CreateObject();
                cJSON_AddStringToObject(j, "node", h->node);
                if (h->host)
                        cJSON_AddStringToObject(j, "host", h->host);
                else
                        cJSON_AddNullToObject(j, "host");
                if (h->node_name && (!h->host || !streq(h->node_name, h->host)))
                        cJSON_AddStringToObject(j, "node_name", h->node_name);
                cJSON_AddStringToObject(j, "verdict", health_level_name(h->verdict));
                cJSON_AddNumberToObject(j, "checks", h->checks);
                if (h->note)
                        cJSON_AddStringToObject(j, "note", h->note);
                cJSON *fs = cJSON_AddArrayToObject(j, "findings");
                for (int k = 0; k < h->nfindings; k++) {
                        cJSON *f = cJSON_CreateObject();
                        cJSON_AddStringToObject(f, "level", health_level_name(h->findings[k].level));
                        cJSON_AddStringToObject(f, "check", h->findings[k].check);
                        cJSON_AddStringToObject(f, "evidence", h->findings[k].evidence);
                        cJSON_AddStringToObject(f, "action", h->findings[k].action);
                        cJSON_AddItemToArray(fs, f);
                }
                cJSON_AddItemToArray(arr, j);
        }
        return o;
}

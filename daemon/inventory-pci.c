/* inventory-pci.c: GPUs and NICs from the PCI tree, and how they are wired. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inventory.h"
#include "strutil.h"

static bool is_bdf(const char *s)
{
        unsigned d, b, dev, fn;
        char tail;
        return strlen(s) == 12 && sscanf(s, "%4x:%2x:%2x.%1x%c", &d, &b, &dev, &fn, &tail) == 4;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entries of ROOT/dir (caller frees with strv-style free). */
static char **list_dir(const struct inventory *inv, const char *dir, int *ret_n)
{
        _cleanup_free_ char *p = inv_path(inv, dir);
        DIR *d = opendir(p);
        char **v = NULL;
        int n = 0;
        if (d) {
                struct dirent *e;
                while ((e = readdir(d))) {
                        if (e->d_name[0] == '.')
                                continue;
                        v = xrealloc(v, (size_t)(n + 1) * sizeof(char *));
                        v[n++] = xstrdup(e->d_name);
                }
                closedir(d);
        }
        if (n)
                qsort(v, (size_t)n, sizeof(char *), cmp_str);
        *ret_n = n;
        return v;
}

static void free_list(char **v, int n)
{
        for (int i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

/* A file that reads but does not hold what it should: said once, naming the
 * file, and the value is taken as unknown.  Returns -EBADMSG. */
static int odd_value(struct inventory *inv, const char *path, const char *v, const char *want)
{
        inv_warn(inv, "%s: '%.40s' is not %s; taken as unknown", path, v, want);
        return -EBADMSG;
}

/* A decimal attribute from min to max: 0, -errno when unreadable (quietly:
 * not every device has every file), -EBADMSG when odd (with a warning). */
static int read_int(struct inventory *inv, const char *path, long min, long max, long *ret)
{
        char v[64], want[96];
        int r = inv_read(inv, path, v, sizeof(v));
        if (r < 0)
                return r;
        if (str_parse_long(v, ret) < 0 || *ret < min || *ret > max) {
                snprintf(want, sizeof(want), "an integer from %ld to %ld", min, max);
                return odd_value(inv, path, v, want);
        }
        return 0;
}

/* A hexadecimal attribute ("0x10de") into *ret (0 unless read): as read_int(),
 * odd values said only when warn. */
static int read_hex(struct inventory *inv, const char *dir, const char *file, bool warn, unsigned *ret)
{
        char p[PATH_MAX], v[64], *end;
        snprintf(p, sizeof(p), "%s/%s", dir, file);
        *ret = 0;
        int r = inv_read(inv, p, v, sizeof(v));
        if (r < 0)
                return r;
        errno = 0;
        unsigned long x = strtoul(v, &end, 16);
        if (!isxdigit((unsigned char)v[0]) || errno || *end || x > 0xffffff)
                return warn ? odd_value(inv, p, v, "a hexadecimal number") : -EBADMSG;
        *ret = (unsigned)x;
        return 0;
}

/* "8.0 GT/s PCIe", "100 Gb/sec (4X EDR)": a positive number, a blank, the unit */
static bool number_unit(const char *v, const char *unit)
{
        char *end;
        double x = strtod(v, &end);
        return isdigit((unsigned char)v[0]) && x > 0 && *end == ' ' && !strncmp(end + 1, unit, strlen(unit));
}

/* A rate or speed attribute into buf[n], "" when unknown or odd (with a
 * warning; the kernel's own "Unknown..." is no surprise). */
static void read_rate(struct inventory *inv, const char *path, const char *unit, const char *example, char *buf,
                      size_t n)
{
        char v[256], want[96];
        buf[0] = '\0';
        if (inv_read(inv, path, v, sizeof(v)) < 0 || !strncmp(v, "Unknown", 7))
                return;
        snprintf(want, sizeof(want), "a rate such as '%s'", example);
        if (number_unit(v, unit))
                str_copy(buf, n, v);
        else
                (void) odd_value(inv, path, v, want);
}

/* Fills a PCI device from sys/bus/pci/devices/BDF: its place in the tree and its attributes. */
static int read_pci(struct inventory *inv, const char *bdf, struct inv_pci *pci)
{
        memset(pci, 0, sizeof(*pci));
        STR_COPY(pci->bdf, bdf);
        char dev[128], link[PATH_MAX], v[4096];
        snprintf(dev, sizeof(dev), "/sys/bus/pci/devices/%s", bdf);
        _cleanup_free_ char *abs = inv_path(inv, dev);
        ssize_t n = readlink(abs, link, sizeof(link) - 1);
        if (n <= 0)
                return -errno;
        link[n] = '\0';
        const char *p = strstr(link, "devices/");
        if (!p)
                return -EINVAL;
        p += 8;
        _cleanup_free_ char *copy = xstrdup(p);
        char *save = NULL;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (!strncmp(c, "pci", 3) && !is_bdf(c))
                        STR_COPY(pci->host, c);
                else if (is_bdf(c) && strcmp(c, bdf) && pci->depth < INV_MAX_PATH)
                        snprintf(pci->path[pci->depth++], sizeof(pci->path[0]), "%s", c);
        }
        (void) read_hex(inv, dev, "vendor", true, &pci->vendor);
        (void) read_hex(inv, dev, "device", true, &pci->device);
        int r = read_hex(inv, dev, "class", true, &pci->class);
        if (r < 0 && r != -EBADMSG)
                inv_warn(inv, "%s: unreadable class", bdf);
        char path[PATH_MAX];
        long x;
        snprintf(path, sizeof(path), "%s/numa_node", dev);
        pci->numa = read_int(inv, path, -1, 1023, &x) == 0 ? (int)x : -1;     /* MAX_NUMNODES */
        snprintf(path, sizeof(path), "%s/local_cpulist", dev);
        if (inv_read(inv, path, v, sizeof(v)) < 0 || cpuset_parse(&pci->local_cpus, v) < 0)
                cpuset_clear(&pci->local_cpus);
        snprintf(path, sizeof(path), "%s/current_link_speed", dev);
        read_rate(inv, path, "GT/s", "8.0 GT/s PCIe", pci->link_speed, sizeof(pci->link_speed));
        snprintf(path, sizeof(path), "%s/current_link_width", dev);
        if (read_int(inv, path, 0, 32, &x) == 0)
                pci->link_width = (int)x;
        snprintf(path, sizeof(path), "%s/max_link_speed", dev);
        read_rate(inv, path, "GT/s", "8.0 GT/s PCIe", pci->max_link_speed, sizeof(pci->max_link_speed));
        snprintf(path, sizeof(path), "%s/max_link_width", dev);
        if (read_int(inv, path, 0, 32, &x) == 0)
                pci->max_link_width = (int)x;
        return 0;
}

const char *inventory_relation(const struct inv_pci *a, const struct inv_pci *b)
{
        if (streq(a->bdf, b->bdf))
                return "X";
        if (!a->host[0] || !b->host[0] || strcmp(a->host, b->host))
                return a->numa >= 0 && a->numa == b->numa ? "NODE" : "SYS";
        int common = 0;
        while (common < a->depth && common < b->depth && streq(a->path[common], b->path[common]))
                common++;
        if (common == 0)
                return "PHB";   /* different root ports of one host bridge */
        if (a->depth - common <= 1 && b->depth - common <= 1)
                return "PIX";   /* at most one switch between them */
        return "PXB";
}

static void gpu_info(struct inventory *inv, struct inv_gpu *g)
{
        char path[256], text[4096];
        snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", g->pci.bdf);
        g->minor = -1;
        if (inv_read(inv, path, text, sizeof(text)) < 0) {
                snprintf(g->name, sizeof(g->name), "NVIDIA device %04x", g->pci.device);
                return;
        }
        char *save = NULL;
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                char *colon = strchr(l, ':');
                if (!colon)
                        continue;
                *colon = '\0';
                char *v = colon + 1;
                while (isspace((unsigned char)*v))
                        v++;
                if (streq(l, "Model"))
                        STR_COPY(g->name, v);
                else if (streq(l, "GPU UUID"))
                        STR_COPY(g->uuid, v);
                else if (streq(l, "Device Minor")) {
                        long m;
                        if (str_parse_long(v, &m) == 0 && m >= 0 && m <= 255)
                                g->minor = (int)m;
                        else
                                (void) odd_value(inv, path, v, "a Device Minor from 0 to 255");
                }
        }
}

/* PCI address of a class device (sys/class/net/X, sys/class/infiniband/X); false when virtual. */
static bool class_bdf(struct inventory *inv, const char *cls, const char *name, char *bdf, size_t n)
{
        char p[PATH_MAX], link[PATH_MAX];
        snprintf(p, sizeof(p), "/sys/class/%s/%s", cls, name);
        _cleanup_free_ char *abs = inv_path(inv, p);
        ssize_t len = readlink(abs, link, sizeof(link) - 1);
        if (len <= 0)
                return false;
        link[len] = '\0';
        if (strstr(link, "/virtual/"))
                return false;
        bdf[0] = '\0';
        _cleanup_free_ char *copy = xstrdup(link);
        char *save = NULL;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save))
                if (is_bdf(c))
                        snprintf(bdf, n, "%s", c);
        return bdf[0] != '\0';
}

static void scan_net(struct inventory *inv)
{
        int n;
        char **names = list_dir(inv, "/sys/class/net", &n);
        for (int i = 0; i < n && inv->nnics < BD_MAX_NICS; i++) {
                char bdf[16], p[PATH_MAX], v[256];
                if (!class_bdf(inv, "net", names[i], bdf, sizeof(bdf)))
                        continue;
                struct inv_nic *nic = &inv->nics[inv->nnics];
                memset(nic, 0, sizeof(*nic));
                STR_COPY(nic->name, names[i]);
                if (read_pci(inv, bdf, &nic->pci) == 0)
                        nic->has_pci = true;
                else
                        inv_warn(inv, "%s: PCI device %s unreadable", names[i], bdf);
#define NETP(f) (snprintf(p, sizeof(p), "/sys/class/net/%s/" f, names[i]), p)
#define NETF(f) (inv_read(inv, NETP(f), v, sizeof(v)) == 0)
                long x;
                nic->kind = read_int(inv, NETP("type"), 0, 65535, &x) == 0 && x == 32 ? NIC_INFINIBAND : NIC_ETHERNET;
                if (NETF("address"))
                        STR_COPY(nic->addr, v);
                if (read_int(inv, NETP("mtu"), 0, 1 << 20, &x) == 0)
                        nic->mtu = (int)x;
                if (NETF("operstate"))
                        STR_COPY(nic->state, v);
                /* -1: no link */
                if (read_int(inv, NETP("speed"), -1, 100000000, &x) == 0 && x > 0)
                        snprintf(nic->rate, sizeof(nic->rate), "%ld Mb/s", x);
#undef NETF
#undef NETP
                inv->nnics++;
        }
        free_list(names, n);
}

static void scan_rdma(struct inventory *inv)
{
        int n;
        char **names = list_dir(inv, "/sys/class/infiniband", &n);
        for (int i = 0; i < n && inv->nnics < BD_MAX_NICS; i++) {
                char bdf[16], p[PATH_MAX], v[256];
                if (!class_bdf(inv, "infiniband", names[i], bdf, sizeof(bdf)))
                        continue;
                struct inv_nic *nic = &inv->nics[inv->nnics];
                memset(nic, 0, sizeof(*nic));
                nic->is_rdma = true;
                STR_COPY(nic->name, names[i]);
                if (read_pci(inv, bdf, &nic->pci) == 0)
                        nic->has_pci = true;
                else
                        inv_warn(inv, "%s: PCI device %s unreadable", names[i], bdf);
#define IBF(f) (snprintf(p, sizeof(p), "/sys/class/infiniband/%s/" f, names[i]), inv_read(inv, p, v, sizeof(v)) == 0)
                bool ib = IBF("ports/1/link_layer") && streq(v, "InfiniBand");
                bool eth = !ib && streq(v, "Ethernet");
                nic->kind = nic->pci.vendor == 0x1d0f ? NIC_EFA : ib ? NIC_INFINIBAND : eth ? NIC_ROCE : NIC_INFINIBAND;
                if (IBF("node_guid"))
                        STR_COPY(nic->addr, v);
                if (IBF("ports/1/state")) {
                        const char *s = strchr(v, ':');
                        STR_COPY(nic->state, s ? s + 2 : v);
                }
                snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/1/rate", names[i]);
                read_rate(inv, p, "Gb/sec", "100 Gb/sec (4X EDR)", nic->rate, sizeof(nic->rate));
#undef IBF
                /* the network interface of the same PCI function */
                for (int k = 0; k < inv->nnics; k++)
                        if (!inv->nics[k].is_rdma && streq(inv->nics[k].pci.bdf, bdf)) {
                                STR_COPY(nic->netdev, inv->nics[k].name);
                                STR_COPY(inv->nics[k].rdma, names[i]);
                                nic->mtu = inv->nics[k].mtu;
                                if (nic->kind == NIC_ROCE)
                                        inv->nics[k].kind = NIC_ETHERNET;
                        }
                /* EFA has no netdev of its own: it works with the instance's ENA interface */
                if (nic->kind == NIC_EFA && !nic->netdev[0])
                        for (int k = 0; k < inv->nnics; k++)
                                if (!inv->nics[k].is_rdma && inv->nics[k].pci.vendor == 0x1d0f && !inv->nics[k].rdma[0]) {
                                        STR_COPY(nic->netdev, inv->nics[k].name);
                                        STR_COPY(inv->nics[k].rdma, names[i]);
                                        break;
                                }
                inv->nnics++;
        }
        free_list(names, n);
}

static void scan_gpus(struct inventory *inv)
{
        int n;
        char **bdfs = list_dir(inv, "/sys/bus/pci/devices", &n);
        if (!n)
                inv_warn(inv, "no PCI devices under /sys/bus/pci/devices");
        for (int i = 0; i < n && inv->ngpus < BD_MAX_GPUS; i++) {
                char dev[128];
                unsigned vendor, cls;
                snprintf(dev, sizeof(dev), "/sys/bus/pci/devices/%s", bdfs[i]);
                (void) read_hex(inv, dev, "vendor", false, &vendor);
                (void) read_hex(inv, dev, "class", false, &cls);
                if (vendor != 0x10de || (cls >> 16) != 0x03)
                        continue;
                struct inv_gpu *g = &inv->gpus[inv->ngpus];
                if (read_pci(inv, bdfs[i], &g->pci) < 0) {
                        inv_warn(inv, "GPU %s: unreadable PCI device, skipped", bdfs[i]);
                        continue;
                }
                gpu_info(inv, g);
                inv->ngpus++;
        }
        free_list(bdfs, n);
        char v[512];
        if (inv_read(inv, "/proc/driver/nvidia/version", v, sizeof(v)) == 0) {
                const char *k = strstr(v, "Kernel Module");
                if (k) {
                        k += strlen("Kernel Module");
                        while (*k == ' ')
                                k++;
                        snprintf(inv->driver_version, sizeof(inv->driver_version), "%.*s", (int)strcspn(k, " \n"), k);
                }
        }
        if (!inv->ngpus)
                snprintf(inv->gpu_reason, sizeof(inv->gpu_reason), "no NVIDIA GPU on the PCI bus");
        else if (!inv->driver_version[0])
                snprintf(inv->gpu_reason, sizeof(inv->gpu_reason), "GPUs found on the PCI bus, but no NVIDIA driver loaded");
}

void inventory_scan_pci(struct inventory *inv)
{
        scan_gpus(inv);
        scan_net(inv);
        scan_rdma(inv);
}

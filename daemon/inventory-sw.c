/* inventory-sw.c: local storage that can take a staged dataset, and the
 * versions of the software a training run depends on (NVIDIA driver, CUDA,
 * NCCL, MPI), found in the files those packages install, and the container
 * runtimes installed. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "fs.h"
#include "inventory.h"
#include "strutil.h"

/* Filesystems that live on the node's own disks (or memory). */
static const char *const local_fs[] = { "ext4", "ext3", "xfs", "btrfs", "f2fs", "zfs", "tmpfs", NULL };
/* Mount points that are never a staging target. */
static const char *const skip_prefix[] = { "/boot", "/efi", "/dev", "/proc", "/sys", "/run", "/snap", "/var/lib/docker",
                                           "/var/lib/containers", NULL };

static bool in_list(const char *s, const char *const *list)
{
        for (; *list; list++)
                if (streq(s, *list))
                        return true;
        return false;
}

static bool skipped_mount(const char *mnt, const char *fs)
{
        for (const char *const *p = skip_prefix; *p; p++) {
                size_t n = strlen(*p);
                if (!strncmp(mnt, *p, n) && (mnt[n] == '/' || mnt[n] == '\0'))
                        return true;
        }
        /* tmpfs only where it is meant for data, not /tmp of every container */
        return streq(fs, "tmpfs") && !streq(mnt, "/dev/shm") && strncmp(mnt, "/scratch", 8) && strncmp(mnt, "/raid", 5);
}

/* /proc/self/mounts escapes blanks as \040 and so on. */
static void unescape_octal(char *s)
{
        char *w = s;
        for (char *r = s; *r; r++) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
                    r[3] <= '7') {
                        *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
                        r += 3;
                } else
                        *w++ = *r;
        }
        *w = '\0';
}

static void scan_storage(struct inventory *inv)
{
        _cleanup_free_ char *p = inv_path(inv, "/proc/self/mounts");
        _cleanup_fclose_ FILE *f = fopen(p, "re");
        char line[4096];
        if (!f) {
                _cleanup_free_ char *q = inv_path(inv, "/proc/mounts");
                f = fopen(q, "re");
        }
        if (!f)
                return;
        while (fgets(line, sizeof(line), f) && inv->nmounts < INV_MAX_MOUNTS) {
                char dev[512], mnt[1024], fs[64];
                if (sscanf(line, "%511s %1023s %63s", dev, mnt, fs) != 3)
                        continue;
                unescape_octal(mnt);
                if (!in_list(fs, local_fs) || skipped_mount(mnt, fs))
                        continue;
                bool dup = false;
                for (int i = 0; i < inv->nmounts; i++)
                        dup |= streq(inv->mounts[i].mnt, mnt);
                if (dup)
                        continue;
                struct inv_mount *m = &inv->mounts[inv->nmounts++];
                memset(m, 0, sizeof(*m));
                STR_COPY(m->mnt, mnt);
                STR_COPY(m->fs, fs);
                STR_COPY(m->dev, dev);
                struct statvfs sv;
                _cleanup_free_ char *abs = inv_path(inv, mnt);
                if (statvfs(abs, &sv) == 0) {
                        m->has_space = true;
                        m->size = (unsigned long long)sv.f_blocks * sv.f_frsize;
                        m->avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
                }
        }
}

/* The value of "#define NAME value" in a header, or -1. */
static long header_define(const char *text, const char *name)
{
        size_t n = strlen(name);
        for (const char *p = strstr(text, "#define "); p; p = strstr(p + 1, "#define ")) {
                const char *q = p + 8;
                while (*q == ' ' || *q == '\t')
                        q++;
                if (!strncmp(q, name, n) && (q[n] == ' ' || q[n] == '\t'))
                        return strtol(q + n, NULL, 10);
        }
        return -1;
}

static bool read_text(struct inventory *inv, const char *path, char **ret)
{
        _cleanup_free_ char *p = inv_path(inv, path);
        size_t len;
        return fs_read_file(p, 4u << 20, ret, &len, NULL) == 0;
}

static void cuda_version(struct inventory *inv)
{
        _cleanup_free_ char *text = NULL;
        if (read_text(inv, "/usr/local/cuda/version.json", &text)) {
                cJSON *j = cJSON_Parse(text);
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "cuda"), "version");
                if (cJSON_IsString(v))
                        STR_COPY(inv->sw.cuda, v->valuestring);
                cJSON_Delete(j);
                if (inv->sw.cuda[0])
                        return;
        }
        free(TAKE_PTR(text));
        if (read_text(inv, "/usr/local/cuda/version.txt", &text)) {
                const char *v = strstr(text, "CUDA Version ");
                if (v) {
                        v += 13;
                        snprintf(inv->sw.cuda, sizeof(inv->sw.cuda), "%.*s", (int)strcspn(v, " \n"), v);
                        return;
                }
        }
        free(TAKE_PTR(text));
        if (read_text(inv, "/usr/local/cuda/include/cuda_runtime_api.h", &text)) {
                long v = header_define(text, "CUDART_VERSION");
                if (v > 0)
                        snprintf(inv->sw.cuda, sizeof(inv->sw.cuda), "%ld.%ld", v / 1000, v % 1000 / 10);
        }
}

static void nccl_version(struct inventory *inv)
{
        static const char *const headers[] = { "/usr/local/cuda/include/nccl.h", "/usr/include/nccl.h", NULL };
        static const char *const libdirs[] = { "/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib64",
                                               "/usr/local/lib", NULL };
        for (const char *const *h = headers; *h; h++) {
                _cleanup_free_ char *text = NULL;
                if (!read_text(inv, *h, &text))
                        continue;
                long ma = header_define(text, "NCCL_MAJOR"), mi = header_define(text, "NCCL_MINOR"),
                     pa = header_define(text, "NCCL_PATCH");
                if (ma >= 0 && mi >= 0 && pa >= 0) {
                        snprintf(inv->sw.nccl, sizeof(inv->sw.nccl), "%ld.%ld.%ld", ma, mi, pa);
                        return;
                }
        }
        /* a runtime-only install: libnccl.so.2.18.3 */
        for (const char *const *d = libdirs; *d; d++) {
                _cleanup_free_ char *p = inv_path(inv, *d);
                DIR *dir = opendir(p);
                struct dirent *e;
                if (!dir)
                        continue;
                while ((e = readdir(dir)))
                        if (!strncmp(e->d_name, "libnccl.so.", 11) && strchr(e->d_name + 11, '.'))
                                STR_COPY(inv->sw.nccl, e->d_name + 11);
                closedir(dir);
                if (inv->sw.nccl[0])
                        return;
        }
}

static void mpi_version(struct inventory *inv)
{
        static const char *const pcs[] = { "/usr/lib/x86_64-linux-gnu/pkgconfig/ompi.pc", "/usr/lib64/pkgconfig/ompi.pc",
                                           "/opt/amazon/openmpi/lib/pkgconfig/ompi.pc",
                                           "/opt/amazon/openmpi/lib64/pkgconfig/ompi.pc",
                                           "/usr/local/lib/pkgconfig/ompi.pc", NULL };
        static const char *const mpich[] = { "/usr/lib/x86_64-linux-gnu/pkgconfig/mpich.pc",
                                             "/usr/lib64/pkgconfig/mpich.pc", NULL };
        for (int family = 0; family < 2; family++)
                for (const char *const *p = family ? mpich : pcs; *p; p++) {
                        _cleanup_free_ char *text = NULL;
                        const char *v;
                        if (!read_text(inv, *p, &text) || !(v = strstr(text, "\nVersion:")))
                                continue;
                        v += 9;
                        while (*v == ' ')
                                v++;
                        snprintf(inv->sw.mpi, sizeof(inv->sw.mpi), "%s %.*s", family ? "MPICH" : "Open MPI",
                                 (int)strcspn(v, " \n"), v);
                        return;
                }
}

/* The container runtimes' programs in the usual places (executable files) */
static void container_runtimes(struct inventory *inv)
{
        static const char *const progs[] = { "docker", "podman", "ch-run", "apptainer", "singularity", "enroot", NULL };
        static const char *const dirs[] = { "/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin", "/usr/local/sbin",
                                            "/opt/apptainer/bin", NULL };
        for (const char *const *p = progs; *p && inv->sw.nruntimes < (int)ARRAY_SIZE(inv->sw.runtimes); p++)
                for (const char *const *d = dirs; *d; d++) {
                        _cleanup_free_ char *rel = xasprintf("%s/%s", *d, *p);
                        _cleanup_free_ char *path = inv_path(inv, rel);
                        struct stat st;
                        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) {
                                STR_COPY(inv->sw.runtimes[inv->sw.nruntimes++], *p);
                                break;
                        }
                }
}

void inventory_scan_software(struct inventory *inv)
{
        scan_storage(inv);
        STR_COPY(inv->sw.driver, inv->driver_version);
        cuda_version(inv);
        nccl_version(inv);
        mpi_version(inv);
        container_runtimes(inv);
}

/* cmd-image.c: benchctl image build | info: container images of the
 * trainers made from Debian's packages, the way sites without a registry
 * build them.
 *
 * build: the runtime libraries and Open MPI that this build's packages
 * (make deb) depend on, as a root file system from mmdebstrap (cached by
 * the package list's checksum, so a rebuild with the same list takes
 * seconds), this build's packages installed into a copy of it with dpkg,
 * a record of what it holds in IMAGE_INFO_PATH, and then packed as a
 * SquashFS file (Charliecloud, Apptainer), a directory, or an OCI archive
 * (podman load, docker load).
 *
 * build --cuda: the same from make deb-cuda's packages, whose trainers have
 * the CUDA backend, and the CUDA libraries they need that Debian does not
 * have (cudalibs.h: the CUDA runtime, cuBLAS, cuDNN, NCCL of the CUDA
 * installation they were built against) copied in; the GPU driver's
 * libraries are the host's, brought in at run time by the container
 * runtime (apptainer --nv, podman's CDI device, docker --gpus,
 * Charliecloud's ch-fromhost --nvidia).
 *
 * info: prints that record from an image file, directory, archive, or an
 * image in podman's or Docker's store. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "benchctl.h"
#include "cudalibs.h"
#include "fs.h"
#include "image.h"
#include "json.h"
#include "meter.h"
#include "oci.h"
#include "proc.h"
#include "render.h"
#include "sha256.h"
#include "strutil.h"

enum fmt { FMT_SQUASHFS, FMT_DIR, FMT_OCI };
static const char *const fmt_names[] = { "squashfs", "dir", "oci", NULL };

/* Our own packages, installed from the .deb files, never from the archive */
static const char *const own_packages[] = { "benchd", "benchctl", "benchd-trainers", NULL };

struct strv {
        char **v;
        size_t n;
};

static void sv_add(struct strv *s, char *str)
{
        s->v = xrealloc(s->v, (s->n + 2) * sizeof(*s->v));
        s->v[s->n++] = str;
        s->v[s->n] = NULL;
}

static bool sv_has(const struct strv *s, const char *str)
{
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->v[i], str))
                        return true;
        return false;
}

static void sv_free(struct strv *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        s->v = NULL;
        s->n = 0;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_own(const char *name)
{
        for (const char *const *p = own_packages; *p; p++)
                if (streq(*p, name))
                        return true;
        return false;
}

/* ------------------------------------------------------------------ build */

struct build {
        enum fmt fmt;
        const char *runtime;
        const char *out;
        char *debs_dir;
        char *suite;
        struct strv sources;    /* mmdebstrap's mirror arguments: files or lines */
        struct strv include;    /* more packages */
        char *cache;
        bool no_cache, force, quiet;
        bool cuda;              /* the CUDA image */
        struct cuda_libs cuda_libs;
        double tail_read;       /* when tool_tick last read the log */
        const char *tag;
        char *log;              /* the tools' output */
        struct strv debs;       /* our .deb files */
        struct strv pkgs;       /* the package list of the base */
        char sum[65];           /* its checksum */
        char *tmp;              /* the root file system being made */
        char *tmp_out;          /* the packed image before its rename */
};

/* The live line under the steps while a tool runs (meter.h), NULL outside
 * a build */
static struct meter *live;

static void step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void step(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        _cleanup_free_ char *text = NULL;
        if (vasprintf(&text, fmt, ap) < 0)
                text = NULL;
        va_end(ap);
        _cleanup_free_ char *line = xasprintf("image: %s", text ? text : fmt);
        if (live)
                meter_line(live, line);
        else
                fprintf(stderr, "%s\n", line);
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs a tool with its output in the build log; on failure says which and
 * the log's last line. */
struct tick {
        struct build *b;
        const char *tool;
};

/* While a tool runs: its name and the last line of its log, once a second */
static void tool_tick(void *ctx)
{
        struct tick *t = ctx;
        double now = now_s();
        if (!live || now - t->b->tail_read < 1)
                return;
        t->b->tail_read = now;
        _cleanup_free_ char *tail = proc_log_tail(t->b->log);
        _cleanup_free_ char *text = xasprintf("%s: %.100s", t->tool, tail ? tail : "started");
        meter_status(live, text);
}

static int tool(struct build *b, const char *what, char *const argv[])
{
        if (proc_interrupted())         /* do_build says so */
                return -1;
        struct tick t = { b, argv[0] };
        int r = proc_run(argv, &(struct proc_opts){ .log = b->log, .tick = tool_tick, .tick_ctx = &t });
        if (r == 0)
                return 0;
        if (proc_interrupted())
                return -1;
        if (r == -ENOENT) {
                bd_error("image build: %s: '%s' is not installed", what, argv[0]);
                return -1;
        }
        _cleanup_free_ char *tail = proc_log_tail(b->log);
        if (r < 0)
                bd_error("image build: %s: cannot run %s: %s", what, argv[0], strerror(-r));
        else
                bd_error("image build: %s: %s failed (exit status %d): %s (log: %s)", what, argv[0], r,
                         tail ? tail : "no output", b->log);
        return -1;
}

/* A field of a .deb's control file, from dpkg-deb */
static char *deb_field(const char *deb, const char *field)
{
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        char *argv[] = { "dpkg-deb", "-f", (char *)deb, (char *)field, NULL };
        if (proc_run(argv, &(struct proc_opts){ .out = &out }) != 0 || !out.s)
                return NULL;
        while (out.len && (out.s[out.len - 1] == '\n' || out.s[out.len - 1] == ' '))
                out.s[--out.len] = '\0';
        /* continuation lines of a folded field */
        for (char *p = out.s; *p; p++)
                if (*p == '\n')
                        *p = ' ';
        return buf_detach(&out);
}

/* The upstream part of a Debian version: no epoch, no revision */
static char *upstream_version(const char *v)
{
        const char *c = strchr(v, ':');
        if (c)
                v = c + 1;
        char *s = xstrdup(v);
        char *dash = strrchr(s, '-');
        if (dash)
                *dash = '\0';
        return s;
}

static int find_debs(struct build *b)
{
        DIR *d = opendir(b->debs_dir);
        if (!d) {
                bd_error("image build: cannot read the packages directory '%s': %s (run 'make %s' in the build "
                         "tree, or pass --debs DIR)", b->debs_dir, strerror(errno), b->cuda ? "deb-cuda" : "deb");
                return -1;
        }
        struct dirent *e;
        bool have_trainers = false;
        while ((e = readdir(d))) {
                if (!str_has_suffix(e->d_name, ".deb") || strstr(e->d_name, "-dbgsym_"))
                        continue;
                _cleanup_free_ char *path = xasprintf("%s/%s", b->debs_dir, e->d_name);
                _cleanup_free_ char *name = deb_field(path, "Package");
                if (!name || !is_own(name))
                        continue;
                if (streq(name, "benchd-trainers")) {
                        have_trainers = true;
                        /* make deb-cuda's versions end in +cuda (debian/rules) */
                        _cleanup_free_ char *v = deb_field(path, "Version");
                        bool cuda_build = v && str_has_suffix(v, "+cuda");
                        if (cuda_build != b->cuda) {
                                bd_error("image build: %s is a %s build (version %s): %s", path,
                                         cuda_build ? "CUDA" : "CPU", v ? v : "unknown",
                                         b->cuda ? "the CUDA image takes make deb-cuda's packages (--debs DIR)"
                                                 : "add --cuda for the CUDA image, or take make deb's packages");
                                closedir(d);
                                return -1;
                        }
                }
                sv_add(&b->debs, xstrdup(path));
        }
        closedir(d);
        if (!have_trainers) {
                bd_error("image build: no benchd-trainers package in '%s' (run 'make %s' in the build tree, or "
                         "pass --debs DIR)", b->debs_dir, b->cuda ? "deb-cuda" : "deb");
                return -1;
        }
        qsort(b->debs.v, b->debs.n, sizeof(*b->debs.v), cmp_str);
        return 0;
}

/* The base's package list: what our packages depend on (the first of each
 * set of alternatives, without versions) and --include; sorted. */
static int package_list(struct build *b)
{
        for (size_t i = 0; i < b->debs.n; i++) {
                _cleanup_free_ char *deps = deb_field(b->debs.v[i], "Depends");
                if (!deps)
                        continue;
                char *save = NULL;
                for (char *dep = strtok_r(deps, ",", &save); dep; dep = strtok_r(NULL, ",", &save)) {
                        dep[strcspn(dep, "|")] = '\0';
                        while (*dep == ' ')
                                dep++;
                        dep[strcspn(dep, " (:")] = '\0';
                        if (*dep && !is_own(dep) && !sv_has(&b->pkgs, dep))
                                sv_add(&b->pkgs, xstrdup(dep));
                }
        }
        for (size_t i = 0; i < b->include.n; i++)
                if (!sv_has(&b->pkgs, b->include.v[i]))
                        sv_add(&b->pkgs, xstrdup(b->include.v[i]));
        qsort(b->pkgs.v, b->pkgs.n, sizeof(*b->pkgs.v), cmp_str);

        /* the checksum covers everything that makes the base what it is */
        _cleanup_buf_ struct bd_buf key = BD_BUF_INIT;
        buf_printf(&key, "benchd image base 1\nsuite %s\nvariant apt\n", b->suite);
        for (size_t i = 0; i < b->sources.n; i++) {
                buf_printf(&key, "source %s\n", b->sources.v[i]);
                _cleanup_free_ char *text = NULL;
                size_t len;
                struct bd_err err;
                if (b->sources.v[i][0] == '/' && fs_read_file(b->sources.v[i], 1 << 20, &text, &len, &err) == 0)
                        buf_add(&key, text, len);
        }
        for (size_t i = 0; i < b->pkgs.n; i++)
                buf_printf(&key, "package %s\n", b->pkgs.v[i]);
        sha256_hex_of(key.s, key.len, b->sum);
        return 0;
}

/* The host's codename (os-release), for the default suite */
static char *host_codename(void)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        struct bd_err err;
        if (fs_read_file("/etc/os-release", 1 << 16, &text, &len, &err) < 0)
                return NULL;
        char *p = strstr(text, "VERSION_CODENAME=");
        if (!p)
                return NULL;
        p += strlen("VERSION_CODENAME=");
        if (*p == '"')
                p++;
        return strndup(p, strcspn(p, "\"\n"));
}

/* Default sources: the host's apt sources when the suite is the host's (so
 * that the image gets the same library versions as the host, updates and
 * security included), else Debian's archive. */
static void default_sources(struct build *b)
{
        _cleanup_free_ char *host = host_codename();
        if (host && streq(host, b->suite)) {
                struct stat st;
                if (stat("/etc/apt/sources.list", &st) == 0 && st.st_size > 0)
                        sv_add(&b->sources, xstrdup("/etc/apt/sources.list"));
                struct dirent **names;
                int n = scandir("/etc/apt/sources.list.d", &names, NULL, alphasort);
                for (int i = 0; i < n; i++) {
                        if (str_has_suffix(names[i]->d_name, ".sources") || str_has_suffix(names[i]->d_name, ".list"))
                                sv_add(&b->sources, xasprintf("/etc/apt/sources.list.d/%s", names[i]->d_name));
                        free(names[i]);
                }
                if (n >= 0)
                        free(names);
        }
        if (!b->sources.n)
                sv_add(&b->sources, xasprintf("deb http://deb.debian.org/debian %s main", b->suite));
}

static bool dev_null_ok(void)
{
        struct stat st;
        return stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode);
}

/* Temporary files and directories are named NAME-HOST-PID so that the next
 * build on this host removes those of a build that was killed (SIGKILL, a
 * crash) once its process is gone; caller frees. */
static void host_name(char host[static 256])
{
        memset(host, 0, 256);
        if (gethostname(host, 255) < 0 || !host[0])
                strcpy(host, "localhost");
}

static char *tmp_tag(void)
{
        char host[256];
        host_name(host);
        return xasprintf("%s-%d", host, (int)getpid());
}

/* Whether what follows a temporary name's marker is "HOST-PID" (then the end,
 * '-' or '.') of this host and a process that is gone. */
static bool dead_tag(const char *after)
{
        char host[256];
        host_name(host);
        size_t hl = strlen(host);
        if (strncmp(after, host, hl) != 0 || after[hl] != '-')
                return false;
        char *end;
        errno = 0;
        long pid = strtol(after + hl + 1, &end, 10);
        if (errno || end == after + hl + 1 || pid <= 0 || pid > INT_MAX || (*end && *end != '-' && *end != '.'))
                return false;
        return pid != getpid() && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

static int rm_rf(struct build *b, const char *path);

/* Removes from dir what killed builds left: names that start with prefix,
 * or hold marker, followed by a dead HOST-PID. */
static void remove_leftovers(struct build *b, const char *dir, const char *prefix, const char *marker)
{
        DIR *d = opendir(dir);
        if (!d)
                return;
        struct dirent *e;
        while ((e = readdir(d))) {
                const char *after = NULL;
                if (prefix && str_has_prefix(e->d_name, prefix))
                        after = e->d_name + strlen(prefix);
                else if (marker && (after = strstr(e->d_name, marker)))
                        after += strlen(marker);
                if (!after || !dead_tag(after))
                        continue;
                _cleanup_free_ char *path = xasprintf("%s/%s", dir, e->d_name);
                step("removing what an interrupted build left: %s", path);
                (void)rm_rf(b, path);
        }
        closedir(d);
}

/* Cache files (base root file systems, their lists, build logs) unused for
 * IMAGE_CACHE_DAYS days are removed; a base is used when a build takes it. */
static void prune_cache(struct build *b)
{
        DIR *d = opendir(b->cache);
        if (!d)
                return;
        time_t old = time(NULL) - (time_t)IMAGE_CACHE_DAYS * 86400;
        struct dirent *e;
        while ((e = readdir(d))) {
                const char *n = e->d_name;
                if (!((str_has_prefix(n, "base-") && (str_has_suffix(n, ".tar") || str_has_suffix(n, ".list"))) ||
                      (str_has_prefix(n, "build-") && str_has_suffix(n, ".log"))))
                        continue;
                _cleanup_free_ char *path = xasprintf("%s/%s", b->cache, n);
                struct stat st;
                if (streq(path, b->log) || lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_mtime >= old)
                        continue;
                if (unlink(path) == 0)
                        step("removed from the cache, unused for %d days: %s", IMAGE_CACHE_DAYS, path);
        }
        closedir(d);
}

/* The base root file system as a tar file in the cache: from the cache when
 * it is there, else made by mmdebstrap. */
static int base_tar(struct build *b, char **ret)
{
        _cleanup_free_ char *tar = xasprintf("%s/base-%.16s.tar", b->cache, b->sum);
        _cleanup_free_ char *list = xasprintf("%s/base-%.16s.list", b->cache, b->sum);
        if (!b->no_cache && access(tar, R_OK) == 0) {
                step("base root file system from the cache: %s", tar);
                /* used now: prune_cache keeps it */
                (void)utimensat(AT_FDCWD, tar, NULL, 0);
                (void)utimensat(AT_FDCWD, list, NULL, 0);
                *ret = TAKE_PTR(tar);
                return 0;
        }
        _cleanup_buf_ struct bd_buf inc = BD_BUF_INIT;
        for (size_t i = 0; i < b->pkgs.n; i++)
                buf_printf(&inc, "%s%s", i ? "," : "", b->pkgs.v[i]);
        step("base root file system: mmdebstrap %s with %zu packages (a minute or more; log %s)", b->suite,
             b->pkgs.n, b->log);
        _cleanup_free_ char *tag = tmp_tag();
        _cleanup_free_ char *tmp = xasprintf("%s.tmp-%s", tar, tag);
        _cleanup_free_ char *include = xasprintf("--include=%s", inc.s ? inc.s : "");
        struct strv argv = { 0 };
        sv_add(&argv, xstrdup("mmdebstrap"));
        sv_add(&argv, xstrdup("--variant=apt"));
        sv_add(&argv, xstrdup("--format=tar"));
        sv_add(&argv, xstrdup(include));
        sv_add(&argv, xstrdup(b->suite));
        sv_add(&argv, xstrdup(tmp));
        for (size_t i = 0; i < b->sources.n; i++)
                sv_add(&argv, xstrdup(b->sources.v[i]));
        double t0 = now_s();
        int r = tool(b, "the base root file system", argv.v);
        sv_free(&argv);
        /* a failed mmdebstrap once left /dev/null a regular file here */
        if (!dev_null_ok()) {
                bd_error("image build: /dev/null is no longer a character device after mmdebstrap: recreate it "
                         "(rm -f /dev/null && mknod -m 666 /dev/null c 1 3)");
                r = -1;
        }
        if (r < 0) {
                unlink(tmp);
                return -1;
        }
        if (rename(tmp, tar) < 0) {
                bd_error("image build: cannot rename '%s' to '%s': %s", tmp, tar, strerror(errno));
                unlink(tmp);
                return -1;
        }
        _cleanup_buf_ struct bd_buf l = BD_BUF_INIT;
        for (size_t i = 0; i < b->pkgs.n; i++)
                buf_printf(&l, "%s\n", b->pkgs.v[i]);
        struct bd_err err;
        (void)fs_write_atomic(list, l.s ? l.s : "", l.len, 0644, &err);
        step("base root file system made in %.0f s: %s", now_s() - t0, tar);
        *ret = TAKE_PTR(tar);
        return 0;
}

/* name -> version of every package installed in root */
static cJSON *installed_packages(const char *root)
{
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        _cleanup_free_ char *admin = xasprintf("--admindir=%s/var/lib/dpkg", root);
        char *argv[] = { "dpkg-query", admin, "-W", "-f", "${Package}\t${Version}\n", NULL };
        if (proc_run(argv, &(struct proc_opts){ .out = &out }) != 0 || !out.s)
                return NULL;
        cJSON *o = cJSON_CreateObject();
        char *save = NULL;
        for (char *line = strtok_r(out.s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *tab = strchr(line, '\t');
                if (!tab)
                        continue;
                *tab = '\0';
                cJSON_AddStringToObject(o, line, tab + 1);
        }
        return o;
}

static char *utc_now(void)
{
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        char s[32];
        strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%SZ", &tm);
        return xstrdup(s);
}

/* The image's record of what it holds */
static cJSON *image_info(const struct build *b, const char *root, const char *created)
{
        cJSON *info = cJSON_CreateObject();
        cJSON *pk = installed_packages(root);
        const char *trainers = pk ? json_str(pk, "benchd-trainers", NULL) : NULL;
        _cleanup_free_ char *bv = trainers ? upstream_version(trainers) : xstrdup("unknown");
        cJSON_AddNumberToObject(info, "version", 1);
        cJSON_AddStringToObject(info, "benchd_version", bv);
        cJSON_AddStringToObject(info, "build_date", created);
        cJSON_AddStringToObject(info, "built_by", "benchctl " PACKAGE_VERSION);
        struct utsname u;
        if (uname(&u) == 0)
                cJSON_AddStringToObject(info, "build_host", u.nodename);
        cJSON_AddStringToObject(info, "runtime", b->runtime);
        /* where benchd's programs are (also as /opt/benchd/bin: make_root) */
        cJSON_AddStringToObject(info, "bin_dir", "/usr/bin");
        cJSON_AddStringToObject(info, "format", fmt_names[b->fmt]);
        cJSON_AddStringToObject(info, "backends", b->cuda ? "cpu cuda" : "cpu");
        if (b->cuda)
                cJSON_AddItemToObject(info, "cuda", cuda_libs_record(&b->cuda_libs));
        cJSON_AddStringToObject(info, "suite", b->suite);
        _cleanup_free_ char *dv_path = xasprintf("%s/etc/debian_version", root), *dv = NULL;
        size_t len;
        struct bd_err err;
        if (fs_read_file(dv_path, 256, &dv, &len, &err) == 0) {
                dv[strcspn(dv, "\n")] = '\0';
                cJSON_AddStringToObject(info, "debian_version", dv);
        }
        const char *ompi = pk ? json_str(pk, "openmpi-bin", NULL) : NULL;
        if (ompi) {
                cJSON *mpi = cJSON_AddObjectToObject(info, "mpi");
                _cleanup_free_ char *uv = upstream_version(ompi);
                cJSON_AddStringToObject(mpi, "implementation", "Open MPI");
                cJSON_AddStringToObject(mpi, "version", uv);
                cJSON_AddStringToObject(mpi, "package", ompi);
        }
        cJSON *own = cJSON_AddObjectToObject(info, "benchd_packages");
        for (const char *const *p = own_packages; *p; p++) {
                const char *v = pk ? json_str(pk, *p, NULL) : NULL;
                if (v)
                        cJSON_AddStringToObject(own, *p, v);
        }
        cJSON_AddStringToObject(info, "package_list_checksum", b->sum);
        cJSON *pl = cJSON_AddArrayToObject(info, "package_list");
        for (size_t i = 0; i < b->pkgs.n; i++)
                cJSON_AddItemToArray(pl, cJSON_CreateString(b->pkgs.v[i]));
        cJSON *src = cJSON_AddArrayToObject(info, "sources");
        for (size_t i = 0; i < b->sources.n; i++)
                cJSON_AddItemToArray(src, cJSON_CreateString(b->sources.v[i]));
        if (pk)
                cJSON_AddItemToObject(info, "packages", pk);
        return info;
}

/* also after an interruption: this is the cleaning up */
static int rm_rf(struct build *b, const char *path)
{
        char *argv[] = { "rm", "-rf", "--one-file-system", (char *)path, NULL };
        int r = proc_run(argv, &(struct proc_opts){ .log = b->log });
        if (r != 0)
                bd_error("image build: cannot remove '%s' (rm exit status %d; log: %s)", path, r, b->log);
        return r ? -1 : 0;
}

/* The files of our packages in the root (dpkg's lists), as paths in it */
static void own_files(const struct build *b, struct strv *files)
{
        for (const char *const *p = own_packages; *p; p++) {
                _cleanup_free_ char *list = xasprintf("%s/var/lib/dpkg/info/%s.list", b->tmp, *p), *text = NULL;
                size_t len;
                struct bd_err err;
                if (fs_read_file(list, 16 << 20, &text, &len, &err) < 0)
                        continue;
                char *save = NULL;
                for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                        _cleanup_free_ char *path = xasprintf("%s%s", b->tmp, line);
                        struct stat st;
                        if (line[0] == '/' && lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
                                sv_add(files, xstrdup(line));
                }
        }
}

/* The CUDA image: the libraries our programs need that the root does not
 * have, from the CUDA installation they were built against */
static int cuda_libraries(struct build *b)
{
        struct strv files = { 0 };
        own_files(b, &files);
        struct bd_err err;
        int r = cuda_libs_find(b->tmp, files.v, &b->cuda_libs, &err);
        sv_free(&files);
        if (r < 0) {
                bd_error("image build: %s", err.msg);
                return -1;
        }
        const struct cuda_libs *l = &b->cuda_libs;
        if (!l->n) {
                bd_error("image build --cuda: the programs of %s need no library that the image lacks: not a CUDA "
                         "build", b->debs_dir);
                return -1;
        }
        _cleanup_free_ char *dir = xstrdup(l->v[0].path);
        *strrchr(dir, '/') = '\0';
        step("CUDA: %zu libraries (%.0f MiB) from %s into " CUDA_IMAGE_LIB_DIR "; the driver's (%zu) from the host "
             "at run time", l->n, (double)cuda_libs_bytes(l) / (1 << 20), dir, l->ndriver);
        if (cuda_libs_install(b->tmp, l, &err) < 0) {
                bd_error("image build: %s", err.msg);
                return -1;
        }
        char *ldconfig[] = { "chroot", b->tmp, "ldconfig", NULL };
        return tool(b, "the CUDA libraries' loader cache", ldconfig);
}

static int make_root(struct build *b, const char *base, const char *created, char **ret_info)
{
        char *untar[] = { "tar", "--numeric-owner", "-xpf", (char *)base, "-C", b->tmp, NULL };
        if (tool(b, "unpacking the base", untar) < 0)
                return -1;
        /* this build's packages, installed by dpkg in the root (its
         * dependencies are all in the base) */
        _cleanup_free_ char *pkgdir = xasprintf("%s/tmp/benchd-debs", b->tmp);
        if (fs_mkdir_p(pkgdir, 0755) < 0) {
                bd_error("image build: cannot create '%s': %s", pkgdir, strerror(errno));
                return -1;
        }
        struct strv cp = { 0 }, dpkg = { 0 };
        sv_add(&cp, xstrdup("cp"));
        sv_add(&dpkg, xstrdup("chroot"));
        sv_add(&dpkg, xstrdup(b->tmp));
        sv_add(&dpkg, xstrdup("dpkg"));
        sv_add(&dpkg, xstrdup("-i"));
        for (size_t i = 0; i < b->debs.n; i++) {
                sv_add(&cp, xstrdup(b->debs.v[i]));
                const char *slash = strrchr(b->debs.v[i], '/');
                sv_add(&dpkg, xasprintf("/tmp/benchd-debs/%s", slash ? slash + 1 : b->debs.v[i]));
        }
        sv_add(&cp, xstrdup(pkgdir));
        step("installing %zu packages of this build", b->debs.n);
        int r = tool(b, "copying the packages", cp.v);
        if (r == 0)
                r = tool(b, "installing the packages", dpkg.v);
        sv_free(&cp);
        sv_free(&dpkg);
        if (r < 0)
                return -1;
        if (rm_rf(b, pkgdir) < 0)
                return -1;
        if (b->cuda && cuda_libraries(b) < 0)
                return -1;
        /* what the image need not carry: apt's lists and downloaded packages */
        const char *junk[] = { "var/lib/apt/lists", "var/cache/apt/archives", NULL };
        for (const char **j = junk; *j; j++) {
                _cleanup_free_ char *p = xasprintf("%s/%s", b->tmp, *j);
                DIR *d = opendir(p);
                struct dirent *e;
                while (d && (e = readdir(d)))
                        if (str_has_suffix(e->d_name, ".deb") || strstr(e->d_name, "_Packages") ||
                            strstr(e->d_name, "_InRelease") || strstr(e->d_name, "_Release")) {
                                _cleanup_free_ char *f = xasprintf("%s/%s", p, e->d_name);
                                unlink(f);
                        }
                if (d)
                        closedir(d);
        }
        /* mmdebstrap writes no /etc/hosts: without one, every lookup of
         * localhost (Open MPI's start among them) waits for DNS to time out */
        _cleanup_free_ char *hosts = xasprintf("%s/etc/hosts", b->tmp);
        struct bd_err herr;
        static const char hosts_text[] = "127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n";
        if (access(hosts, F_OK) != 0 && fs_write_atomic(hosts, hosts_text, strlen(hosts_text), 0644, &herr) < 0) {
                bd_error("image build: %s", herr.msg);
                return -1;
        }
        /* the packages put benchd's programs in /usr/bin; a system file that
         * names only the runtime and the image looks in container.bin_dir's
         * default, /opt/benchd/bin (as containers/Dockerfile lays them out):
         * that is a link to them */
        _cleanup_free_ char *opt = xasprintf("%s/opt/benchd", b->tmp), *link = xasprintf("%s/bin", opt);
        if (fs_mkdir_p(opt, 0755) < 0 || (symlink("../../usr/bin", link) < 0 && errno != EEXIST)) {
                bd_error("image build: cannot make '%s': %s", link, strerror(errno));
                return -1;
        }
        /* mount points of the binds the launch scripts make (a SquashFS
         * image cannot grow them at run time) */
        const char *mounts[] = { "data", "logs", "pretrained", NULL };
        for (const char **m = mounts; *m; m++) {
                _cleanup_free_ char *p = xasprintf("%s/%s", b->tmp, *m);
                if (fs_mkdir_p(p, 0755) < 0) {
                        bd_error("image build: cannot create '%s': %s", p, strerror(errno));
                        return -1;
                }
        }
        cJSON *info = image_info(b, b->tmp, created);
        _cleanup_free_ char *text = cJSON_Print(info);
        *ret_info = cJSON_PrintUnformatted(info);
        cJSON_Delete(info);
        _cleanup_free_ char *path = xasprintf("%s%s", b->tmp, IMAGE_INFO_PATH);
        struct bd_err err;
        _cleanup_free_ char *dir = xstrdup(path);
        *strrchr(dir, '/') = '\0';
        if (fs_mkdir_p(dir, 0755) < 0 || fs_write_atomic(path, text, strlen(text), 0644, &err) < 0) {
                bd_error("image build: cannot write '%s'", path);
                return -1;
        }
        return 0;
}

static int pack(struct build *b, const char *info, const char *created)
{
        if (b->fmt == FMT_DIR) {
                b->tmp_out = TAKE_PTR(b->tmp);
                return 0;
        }
        if (b->fmt == FMT_SQUASHFS) {
                step("packing the SquashFS image");
                long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
                _cleanup_free_ char *procs = xasprintf("%ld", ncpu > 0 ? ncpu : 1);
                char *argv[] = { "mksquashfs", b->tmp, b->tmp_out, "-noappend", "-no-progress", "-quiet",
                                 "-processors", procs, NULL };
                return tool(b, "packing the SquashFS image", argv);
        }
        step("packing the OCI archive");
        _cleanup_free_ char *layer = xasprintf("%s.layer.tar", b->tmp_out);
        char *argv[] = { "tar", "--numeric-owner", "--sort=name", "-C", b->tmp, "-cf", layer, ".", NULL };
        if (tool(b, "packing the layer", argv) < 0) {
                unlink(layer);
                return -1;
        }
        _cleanup_free_ char *ref = xstrdup(b->tag ? b->tag : IMAGE_DEFAULT_REPO ":latest");
        const char *env[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", NULL };
        const char *labels[] = { "org.opencontainers.image.version", PACKAGE_VERSION,
                                 "org.opencontainers.image.created", created,
                                 "org.opencontainers.image.title", "benchd trainers",
                                 IMAGE_INFO_LABEL, info,
                                 NULL };
        struct oci_image img = { .layer_tar = layer, .ref = ref, .created = created, .env = env,
                                 .labels = labels, .arch = "amd64" };
        struct bd_err err;
        int r = oci_archive_write(&img, b->tmp_out, &err);
        unlink(layer);
        if (r < 0) {
                bd_error("image build: %s", err.msg);
                return -1;
        }
        return 0;
}

static off_t du_bytes(const char *path)
{
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        char *argv[] = { "du", "-sb", (char *)path, NULL };
        if (proc_run(argv, &(struct proc_opts){ .out = &out }) != 0 || !out.s)
                return -1;
        return (off_t)strtoll(out.s, NULL, 10);
}

static int build_steps(struct build *b);

static int do_build(struct build *b)
{
        struct meter m;
        meter_start(&m, "image build", b->quiet);
        live = &m;
        int r = build_steps(b);
        live = NULL;
        meter_end(&m);
        return r;
}

static int build_steps(struct build *b)
{
        double t0 = now_s();
        if (geteuid() != 0) {
                bd_error("image build: must run as root (mmdebstrap makes the root file system and dpkg installs "
                         "into it with chroot)");
                return BD_EXIT_FAIL;
        }
        struct stat st;
        if (lstat(b->out, &st) == 0 && !b->force) {
                bd_error("image build: '%s' exists (--force replaces it)", b->out);
                return BD_EXIT_FAIL;
        }
        if (find_debs(b) < 0)
                return BD_EXIT_FAIL;
        package_list(b);
        step("%zu packages of this build from %s; base of %zu packages, checksum %.16s", b->debs.n, b->debs_dir,
             b->pkgs.n, b->sum);
        if (fs_mkdir_p(b->cache, 0755) < 0) {
                bd_error("image build: cannot create the cache directory '%s': %s", b->cache, strerror(errno));
                return BD_EXIT_FAIL;
        }
        b->log = xasprintf("%s/build-%d.log", b->cache, (int)getpid());
        /* an interruption (SIGINT, SIGTERM, SIGHUP) stops the build and
         * removes what it made; a killed build's leftovers go now */
        proc_catch_signals();
        _cleanup_free_ char *tag = tmp_tag();
        _cleanup_free_ char *outdir = xstrdup(b->out);
        char *slash = strrchr(outdir, '/');
        if (slash)
                slash == outdir ? (void)(slash[1] = '\0') : (void)(*slash = '\0');
        else
                strcpy(outdir, ".");
        _cleanup_free_ char *out_tmp = xasprintf("%s.tmp-", slash ? slash + 1 : b->out);
        remove_leftovers(b, outdir, ".image-root-", NULL);
        remove_leftovers(b, outdir, out_tmp, NULL);
        remove_leftovers(b, b->cache, NULL, ".tar.tmp-");
        prune_cache(b);

        _cleanup_free_ char *base = NULL, *tmpl = NULL, *created = NULL, *info = NULL;
        int ret = BD_EXIT_FAIL;
        if (base_tar(b, &base) < 0)
                goto out;
        /* everything is made beside OUT and renamed onto it at the end */
        tmpl = xasprintf("%s/.image-root-%s-XXXXXX", outdir, tag);
        if (!mkdtemp(tmpl)) {
                bd_error("image build: cannot create a directory in '%s': %s", outdir, strerror(errno));
                goto out;
        }
        b->tmp = xstrdup(tmpl);
        if (b->fmt != FMT_DIR)
                b->tmp_out = xasprintf("%s.tmp-%s", b->out, tag);
        created = utc_now();
        if (make_root(b, base, created, &info) < 0 || pack(b, info, created) < 0 || proc_interrupted())
                goto out;
        if (lstat(b->out, &st) == 0) {
                /* --force: the old image goes only once the new one is made */
                _cleanup_free_ char *old = xasprintf("%s.old-%d", b->out, (int)getpid());
                if (rename(b->out, old) < 0 || rename(b->tmp_out, b->out) < 0) {
                        bd_error("image build: cannot replace '%s': %s", b->out, strerror(errno));
                        goto out;
                }
                if (S_ISDIR(st.st_mode))
                        rm_rf(b, old);
                else
                        unlink(old);
        } else if (rename(b->tmp_out, b->out) < 0) {
                bd_error("image build: cannot rename '%s' to '%s': %s", b->tmp_out, b->out, strerror(errno));
                goto out;
        }
        free(b->tmp_out);
        b->tmp_out = NULL;
        off_t size = du_bytes(b->out);
        step("wrote %s (%s, %.1f MiB) in %.0f s", b->out, fmt_names[b->fmt], (double)size / (1 << 20), now_s() - t0);
        printf("%s\n", b->out);
        ret = BD_EXIT_OK;
        unlink(b->log);
out:
        if (b->tmp)
                rm_rf(b, b->tmp);
        if (b->tmp_out) {
                if (b->fmt == FMT_DIR)
                        rm_rf(b, b->tmp_out);
                else
                        unlink(b->tmp_out);
        }
        if (ret != BD_EXIT_OK && proc_interrupted()) {
                bd_error("image build: interrupted (%s): what it had made is removed, '%s' not written",
                         strsignal(proc_interrupted()), b->out);
                ret = BD_EXIT_SIGNAL + proc_interrupted();
        }
        return ret;
}

#define OPT_RUNTIME 600
#define OPT_FORMAT 601
#define OPT_DEBS 602
#define OPT_SUITE 603
#define OPT_MIRROR 604
#define OPT_INCLUDE 605
#define OPT_CACHE 606
#define OPT_NO_CACHE 607
#define OPT_CUDA 608
#define OPT_QUIET 612
#define OPT_FORCE 609
#define OPT_TAG 610
#define OPT_PACKAGES 611

static const struct bd_option build_options[] = {
        { "output", 'o', "OUT", "the image to write (required)" },
        { "runtime", OPT_RUNTIME, "RUNTIME",
          "charliecloud (default), apptainer or singularity: a SquashFS file; podman or docker: an OCI archive" },
        { "format", OPT_FORMAT, "FORMAT", "squashfs, dir (a directory) or oci, instead of the runtime's" },
        { "debs", OPT_DEBS, "DIR", "this build's packages (default: deb/ beside benchctl, from 'make deb')" },
        { "suite", OPT_SUITE, "SUITE", "Debian suite of the image (default: the host's)" },
        { "mirror", OPT_MIRROR, "SOURCE",
          "an apt source for mmdebstrap: a sources file or a 'deb URL SUITE COMPONENTS' line (repeatable; default: "
          "the host's sources for the host's suite, else deb.debian.org)" },
        { "include", OPT_INCLUDE, "PKG[,PKG...]", "more Debian packages in the image (repeatable)" },
        { "cache", OPT_CACHE, "DIR",
          "where base root file systems are kept by checksum (default: $BENCHD_IMAGE_CACHE, else "
          "~/.cache/benchd/images)" },
        { "no-cache", OPT_NO_CACHE, NULL, "make the base again even when the cache has it" },
        { "tag", OPT_TAG, "NAME:TAG", "the OCI image's name (default: " IMAGE_DEFAULT_REPO ":latest)" },
        { "force", OPT_FORCE, NULL, "replace OUT when it exists" },
        { "cuda", OPT_CUDA, NULL,
          "the CUDA image: make deb-cuda's packages (default --debs: deb-cuda beside benchctl) and the CUDA "
          "libraries they need" },
        { "quiet", OPT_QUIET, NULL, "no live line of the running tool on a terminal" },
        { 0 }
};

static int parse_enum(const char *const *names, const char *v)
{
        for (int i = 0; names[i]; i++)
                if (streq(names[i], v))
                        return i;
        return -1;
}

static int cmd_image_build(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, build_options, cmd, ctx);
        struct build b = { .runtime = "charliecloud" };
        const char *arg, *format = NULL;
        bool cuda = false;
        int c, ret = BD_EXIT_USAGE;
        while ((c = opts_next(&o, &arg)) > 0) {
                switch (c) {
                case 'o': b.out = arg; break;
                case OPT_RUNTIME: b.runtime = arg; break;
                case OPT_FORMAT: format = arg; break;
                case OPT_DEBS: free(b.debs_dir), b.debs_dir = xstrdup(arg); break;
                case OPT_SUITE: free(b.suite), b.suite = xstrdup(arg); break;
                case OPT_MIRROR: sv_add(&b.sources, xstrdup(arg)); break;
                case OPT_INCLUDE: {
                        _cleanup_free_ char *list = xstrdup(arg);
                        char *save = NULL;
                        for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save))
                                sv_add(&b.include, xstrdup(p));
                        break;
                }
                case OPT_CACHE: free(b.cache), b.cache = xstrdup(arg); break;
                case OPT_NO_CACHE: b.no_cache = true; break;
                case OPT_TAG: b.tag = arg; break;
                case OPT_FORCE: b.force = true; break;
                case OPT_CUDA: cuda = true; break;
                case OPT_QUIET: b.quiet = true; break;
                }
        }
        int next = opts_finish(&o, 0, 0, NULL);
        if (next < 0) {
                ret = opts_exit(next);
                goto out;
        }
        b.cuda = cuda;
        if (!b.out) {
                ret = usage_error(cmd, "image build: -o OUT is required");
                goto out;
        }
        static const char *const runtimes[] = { "charliecloud", "apptainer", "singularity", "podman", "docker", NULL };
        int rt = parse_enum(runtimes, b.runtime);
        if (rt < 0) {
                ret = usage_error(cmd, "--runtime: unknown runtime '%s' (charliecloud, apptainer, singularity, podman "
                                  "or docker)", b.runtime);
                goto out;
        }
        b.fmt = rt >= 3 ? FMT_OCI : FMT_SQUASHFS;
        if (format) {
                int f = parse_enum(fmt_names, format);
                if (f < 0) {
                        ret = usage_error(cmd, "--format: unknown format '%s' (squashfs, dir or oci)", format);
                        goto out;
                }
                b.fmt = (enum fmt)f;
        }
        if (!b.debs_dir) {
                _cleanup_free_ char *exe = fs_exe_dir();
                b.debs_dir = xasprintf("%s/%s", exe ? exe : ".", b.cuda ? "deb-cuda" : "deb");
        }
        if (!b.suite) {
                b.suite = host_codename();
                if (!b.suite)
                        b.suite = xstrdup("bookworm");
        }
        if (!b.sources.n)
                default_sources(&b);
        if (!b.cache) {
                const char *env = getenv("BENCHD_IMAGE_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
                b.cache = env && *env ? xstrdup(env)
                          : xdg && *xdg ? xasprintf("%s/benchd/images", xdg)
                                        : expand_home("~/.cache/benchd/images");
        }
        ret = do_build(&b);
out:
        free(b.debs_dir);
        free(b.suite);
        free(b.cache);
        free(b.log);
        free(b.tmp);
        free(b.tmp_out);
        sv_free(&b.sources);
        sv_free(&b.include);
        sv_free(&b.debs);
        sv_free(&b.pkgs);
        cuda_libs_free(&b.cuda_libs);
        return ret;
}

/* ------------------------------------------------------------------- info */

/* A member of a tar file, through tar */
static int tar_member(const char *tar, const char *member, struct bd_buf *out)
{
        char *argv[] = { "tar", "-xOf", (char *)tar, (char *)member, NULL };
        return proc_run(argv, &(struct proc_opts){ .out = out, .log = "/dev/null" });
}

/* The record of an OCI or docker archive: the label of its configuration */
static char *archive_info(const char *path)
{
        _cleanup_buf_ struct bd_buf m = BD_BUF_INIT, conf = BD_BUF_INIT;
        if (tar_member(path, "manifest.json", &m) != 0 || !m.s)
                return NULL;
        _cleanup_(cJSON_Deletep) cJSON *mj = cJSON_Parse(m.s);
        const char *config = json_str(cJSON_GetArrayItem(mj, 0), "Config", NULL);
        if (!config || tar_member(path, config, &conf) != 0 || !conf.s)
                return NULL;
        _cleanup_(cJSON_Deletep) cJSON *cj = cJSON_Parse(conf.s);
        /* not json_str: the label's name holds dots */
        const cJSON *labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cj, "config"),
                                                               "Labels");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, IMAGE_INFO_LABEL);
        return cJSON_IsString(v) ? xstrdup(v->valuestring) : NULL;
}

/* The record of an image: a directory, a SquashFS file, an OCI archive, or
 * an image name in podman's or Docker's store. */
static int read_info(const char *image, char **ret, const char **ret_kind)
{
        struct stat st;
        struct bd_err err;
        size_t len;
        if (stat(image, &st) == 0 && S_ISDIR(st.st_mode)) {
                _cleanup_free_ char *p = xasprintf("%s%s", image, IMAGE_INFO_PATH);
                *ret_kind = "directory";
                if (fs_read_file(p, 64 << 20, ret, &len, &err) < 0) {
                        bd_error("image info: %s: %s (not an image made by benchctl image build)", image, err.msg);
                        return -1;
                }
                return 0;
        }
        if (stat(image, &st) == 0) {
                char magic[512] = { 0 };
                int fd = open(image, O_RDONLY | O_CLOEXEC);
                ssize_t n = fd >= 0 ? read(fd, magic, sizeof(magic)) : -1;
                if (fd >= 0)
                        close(fd);
                if (n < 0) {
                        bd_error("image info: cannot read '%s': %s", image, strerror(errno));
                        return -1;
                }
                if (n >= 4 && !memcmp(magic, "hsqs", 4)) {
                        *ret_kind = "squashfs";
                        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
                        char *argv[] = { "unsquashfs", "-cat", (char *)image, (char *)&IMAGE_INFO_PATH[1], NULL };
                        int r = proc_run(argv, &(struct proc_opts){ .out = &out, .log = "/dev/null" });
                        if (r == -ENOENT) {
                                bd_error("image info: %s: unsquashfs is not installed (squashfs-tools)", image);
                                return -1;
                        }
                        if (r != 0 || !out.s) {
                                bd_error("image info: %s: no %s in the SquashFS image (not made by benchctl image "
                                         "build)", image, IMAGE_INFO_PATH);
                                return -1;
                        }
                        *ret = buf_detach(&out);
                        return 0;
                }
                if (n >= 262 && !memcmp(magic + 257, "ustar", 5)) {
                        *ret_kind = "oci archive";
                        *ret = archive_info(image);
                        if (!*ret) {
                                bd_error("image info: %s: no '%s' label in the archive's configuration (not made "
                                         "by benchctl image build)", image, IMAGE_INFO_LABEL);
                                return -1;
                        }
                        return 0;
                }
                bd_error("image info: %s: neither a SquashFS image, a directory nor an OCI archive", image);
                return -1;
        }
        if (strchr(image, '/') && (image[0] == '/' || image[0] == '.')) {
                bd_error("image info: %s: %s", image, strerror(errno));
                return -1;
        }
        /* an image name: podman's store, then Docker's */
        const char *tools[] = { "podman", "docker", NULL };
        for (const char **t = tools; *t; t++) {
                _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
                char *argv[] = { (char *)*t, "image", "inspect", "--format",
                                 "{{index .Config.Labels \"" IMAGE_INFO_LABEL "\"}}", (char *)image, NULL };
                if (proc_run(argv, &(struct proc_opts){ .out = &out, .log = "/dev/null" }) == 0 && out.s &&
                    out.s[0] == '{') {
                        *ret_kind = *t;
                        *ret = buf_detach(&out);
                        return 0;
                }
        }
        bd_error("image info: %s: no such file, and no such image in podman's or Docker's store", image);
        return -1;
}

static const struct bd_option info_options[] = {
        { "json", 'j', NULL, "print the image's record as JSON" },
        { "packages", OPT_PACKAGES, NULL, "list every package with its version" },
        { 0 }
};

static int cmd_image_info(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, info_options, cmd, ctx);
        const char *arg;
        bool json = false, packages = false;
        int c;
        while ((c = opts_next(&o, &arg)) > 0) {
                if (c == 'j')
                        json = true;
                else if (c == OPT_PACKAGES)
                        packages = true;
        }
        int next = opts_finish(&o, 1, 1, "IMAGE");
        if (next < 0)
                return opts_exit(next);
        const char *image = argv[next], *kind = NULL;
        _cleanup_free_ char *text = NULL;
        if (read_info(image, &text, &kind) < 0)
                return BD_EXIT_FAIL;
        _cleanup_(cJSON_Deletep) cJSON *info = cJSON_Parse(text);
        if (!cJSON_IsObject(info)) {
                bd_error("image info: %s: its record %s is not JSON", image, IMAGE_INFO_PATH);
                return BD_EXIT_FAIL;
        }
        if (json) {
                _cleanup_free_ char *s = cJSON_Print(info);
                printf("%s\n", s);
                return finish_output(BD_EXIT_OK);
        }
        const cJSON *pk = cJSON_GetObjectItemCaseSensitive(info, "packages");
        const cJSON *mpi = cJSON_GetObjectItemCaseSensitive(info, "mpi");
        printf("image          %s (%s)\n", image, kind);
        printf("benchd         %s\n", json_str(info, "benchd_version", "?"));
        printf("built          %s by %s on %s\n", json_str(info, "build_date", "?"), json_str(info, "built_by", "?"),
               json_str(info, "build_host", "?"));
        printf("runtime        %s (%s), backends %s\n", json_str(info, "runtime", "?"), json_str(info, "format", "?"),
               json_str(info, "backends", "cpu"));
        printf("debian         %s (%s), %d packages\n", json_str(info, "debian_version", "?"),
               json_str(info, "suite", "?"), cJSON_GetArraySize(pk));
        if (mpi)
                printf("mpi            %s %s (openmpi-bin %s)\n", json_str(mpi, "implementation", "?"),
                       json_str(mpi, "version", "?"), json_str(mpi, "package", "?"));
        const cJSON *cuda = cJSON_GetObjectItemCaseSensitive(info, "cuda");
        if (cuda) {
                printf("cuda           CUDA %s, cuDNN %s, NCCL %s: %d libraries, %.0f MiB, in %s (from %s)\n",
                       json_str(cuda, "cuda_version", "?"), json_str(cuda, "cudnn_version", "?"),
                       json_str(cuda, "nccl_version", "?"),
                       cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cuda, "libraries")),
                       json_num(cuda, "bytes", 0) / (1 << 20), json_str(cuda, "lib_dir", "?"),
                       json_str(cuda, "from", "?"));
                _cleanup_buf_ struct bd_buf drv = BD_BUF_INIT;
                const cJSON *d;
                cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(
                                              cJSON_GetObjectItemCaseSensitive(cuda, "driver"), "libraries"))
                        if (cJSON_IsString(d))
                                buf_printf(&drv, "%s%s", drv.len ? " " : "", d->valuestring);
                printf("gpu driver     the host's, at run time%s%s%s\n", drv.len ? " (" : "", drv.len ? drv.s : "",
                       drv.len ? ")" : "");
        }
        printf("package list   %d packages, checksum %.16s\n",
               cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(info, "package_list")),
               json_str(info, "package_list_checksum", "?"));
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(info, "benchd_packages"))
                printf("package        %s %s\n", e->string, cJSON_IsString(e) ? e->valuestring : "?");
        if (packages)
                cJSON_ArrayForEach(e, pk)
                        printf("  %-40s %s\n", e->string, cJSON_IsString(e) ? e->valuestring : "?");
        return finish_output(BD_EXIT_OK);
}

int cmd_image(int argc, char **argv, struct bd_ctx *ctx, const struct bd_command *cmd)
{
        if (argc >= 2 && streq(argv[1], "build"))
                return cmd_image_build(argc - 1, argv + 1, ctx, cmd);
        if (argc >= 2 && streq(argv[1], "info"))
                return cmd_image_info(argc - 1, argv + 1, ctx, cmd);
        if (argc >= 2 && (streq(argv[1], "--help") || streq(argv[1], "-h"))) {
                printf("Usage: benchctl image %s\n%s\n\n"
                       "  build -o OUT [--runtime charliecloud|apptainer|singularity|podman|docker] [--format "
                       "squashfs|dir|oci]\n"
                       "        [--debs DIR] [--suite SUITE] [--mirror SOURCE]... [--include PKG,...] [--cache DIR] "
                       "[--cuda]\n"
                       "        a root file system from Debian's packages with this build's packages, packed for "
                       "the runtime\n"
                       "        (--cuda: make deb-cuda's packages and the CUDA libraries they need)\n"
                       "  info IMAGE [--json] [--packages]\n"
                       "        what an image holds: benchd's version, Open MPI, the packages, when it was built\n"
                       "\nbenchctl image build --help and benchctl image info --help list the options; see "
                       "benchctl(1).\n", cmd->usage, cmd->summary);
                return BD_EXIT_OK;
        }
        return usage_error(cmd, argc >= 2 ? "unknown action '%s': build or info" : "missing action%s: build or info",
                           argc >= 2 ? argv[1] : "");
}

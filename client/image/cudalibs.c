/* cudalibs.c: the libraries the CUDA image carries (cudalibs.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cudalibs.h"
#include "elfdyn.h"
#include "fs.h"
#include "macro.h"
#include "strutil.h"

/* The GPU driver's libraries: the host's, never the image's */
static bool is_driver(const char *soname)
{
        static const char *const prefixes[] = { "libcuda.so", "libnvidia-", "libnvcuvid.so", "libcudadebugger.so",
                                                NULL };
        for (const char *const *p = prefixes; *p; p++)
                if (str_has_prefix(soname, *p))
                        return true;
        return false;
}

/* The multiarch triplet of this machine's Debian */
static const char *triplet(void)
{
        struct utsname u;
        if (uname(&u) == 0 && streq(u.machine, "aarch64"))
                return "aarch64-linux-gnu";
        return "x86_64-linux-gnu";
}

struct search {
        const char *root;
        char **dirs;            /* the image's library directories */
        size_t ndirs;
};

static void dirs_add(struct search *s, char *dir)
{
        s->dirs = xrealloc(s->dirs, (s->ndirs + 1) * sizeof(*s->dirs));
        s->dirs[s->ndirs++] = dir;
}

/* The loader's directories in root (this host's for ""): its ld.so.conf.d
 * entries and the defaults */
static void root_dirs(struct search *s)
{
        _cleanup_free_ char *pattern = xasprintf("%s/etc/ld.so.conf.d/*.conf", s->root);
        glob_t g;
        if (glob(pattern, 0, NULL, &g) == 0) {
                for (size_t i = 0; i < g.gl_pathc; i++) {
                        _cleanup_free_ char *text = NULL;
                        size_t len;
                        struct bd_err e;
                        if (fs_read_file(g.gl_pathv[i], 1 << 16, &text, &len, &e) < 0)
                                continue;
                        char *save = NULL;
                        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                                line[strcspn(line, " \t#")] = '\0';
                                if (line[0] == '/')
                                        dirs_add(s, xstrdup(line));
                        }
                }
                globfree(&g);
        }
        const char *t = triplet();
        dirs_add(s, xasprintf("/lib/%s", t));
        dirs_add(s, xasprintf("/usr/lib/%s", t));
        dirs_add(s, xstrdup("/lib64"));
        dirs_add(s, xstrdup("/usr/lib64"));
        dirs_add(s, xstrdup("/lib"));
        dirs_add(s, xstrdup("/usr/lib"));
}

/* The path of soname in one of s's directories, or NULL */
static char *search_find(const struct search *s, const char *soname)
{
        for (size_t i = 0; i < s->ndirs; i++) {
                char *p = xasprintf("%s%s/%s", s->root, s->dirs[i], soname);
                struct stat st;
                if (lstat(p, &st) == 0)
                        return p;
                free(p);
        }
        return NULL;
}

static bool in_root(const struct search *s, const char *soname)
{
        _cleanup_free_ char *p = search_find(s, soname);
        return p != NULL;
}

/* A file to read the needs of: a path on this host, and whether it is the
 * image's (then $ORIGIN in its run path is in the image) */
struct item {
        char *path;
        char *shown;            /* as messages name it */
        bool in_image;
};

struct find {
        struct search s;
        struct search host;     /* this host's loader directories (root "") */
        struct cuda_libs *l;
        struct item *q;
        size_t nq, head;
};

static void queue(struct find *f, char *path, char *shown, bool in_image)
{
        f->q = xrealloc(f->q, (f->nq + 1) * sizeof(*f->q));
        f->q[f->nq++] = (struct item){ path, shown, in_image };
}

static bool have(const struct cuda_libs *l, const char *soname)
{
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->v[i].soname, soname))
                        return true;
        return false;
}

static void add_driver(struct cuda_libs *l, const char *soname)
{
        for (size_t i = 0; i < l->ndriver; i++)
                if (streq(l->driver[i], soname))
                        return;
        l->driver = xrealloc(l->driver, (l->ndriver + 2) * sizeof(*l->driver));
        l->driver[l->ndriver++] = xstrdup(soname);
        l->driver[l->ndriver] = NULL;
}

/* Carries the host file path (links resolved) as soname */
static int carry(struct find *f, const char *soname, const char *path, const char *needed_by, struct bd_err *err)
{
        char real[PATH_MAX];
        struct stat st;
        if (!realpath(path, real) || stat(real, &st) < 0)
                return bd_err_set(err, -errno, "%s: %s", path, strerror(errno));
        struct cuda_libs *l = f->l;
        l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
        l->v[l->n++] = (struct cuda_lib){ xstrdup(soname), xstrdup(real), xstrdup(needed_by), (uint64_t)st.st_size };
        queue(f, xstrdup(real), xstrdup(soname), false);
        return 0;
}

/* The directories of a run path, $ORIGIN expanded to origin */
static char **runpath_dirs(const char *runpath, const char *origin)
{
        char **v = NULL;
        size_t n = 0;
        _cleanup_free_ char *rp = xstrdup(runpath ? runpath : "");
        char *save = NULL;
        for (char *d = strtok_r(rp, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                char *dir;
                if (str_has_prefix(d, "$ORIGIN"))
                        dir = xasprintf("%s%s", origin, d + strlen("$ORIGIN"));
                else if (str_has_prefix(d, "${ORIGIN}"))
                        dir = xasprintf("%s%s", origin, d + strlen("${ORIGIN}"));
                else
                        dir = xstrdup(d);
                v = xrealloc(v, (n + 2) * sizeof(*v));
                v[n++] = dir;
                v[n] = NULL;
        }
        return v;
}

static void dirs_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

/* Whether s is a library's file name: lib*.so, lib*.so.N[.N...] */
static bool so_name(const char *s, size_t n)
{
        if (n < 7 || n > 128 || strncmp(s, "lib", 3) != 0)
                return false;
        const char *so = NULL;
        for (const char *p = s; p + 3 <= s + n; p++)
                if (!strncmp(p, ".so", 3) && (p + 3 == s + n || p[3] == '.'))
                        so = p;
        if (!so || so == s + 3)
                return false;
        for (const char *p = s + 3; p < so; p++)
                if (!isalnum((unsigned char)*p) && !strchr("_-+.", *p))
                        return false;
        for (const char *p = so + 3; p < s + n; p++)
                if (!isdigit((unsigned char)*p) && *p != '.')
                        return false;
        return true;
}

/* The library names (lib*.so[.N]) among the NUL-terminated strings of a
 * file: those it loads itself (dlopen) are there */
static char **so_names_in(const char *path)
{
        char **v = NULL;
        size_t n = 0;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        enum { CHUNK = 4 << 20 };
        _cleanup_free_ char *buf = xmalloc(CHUNK);
        char run[132];
        size_t rl = 0;
        bool too_long = false;
        ssize_t got;
        while ((got = read(fd, buf, CHUNK)) > 0) {
                for (ssize_t i = 0; i < got; i++) {
                        char c = buf[i];
                        if (c && c >= 0x21 && c < 0x7f) {
                                if (rl < sizeof(run) - 1)
                                        run[rl++] = c;
                                else
                                        too_long = true;
                                continue;
                        }
                        if (!c && !too_long && so_name(run, rl)) {
                                run[rl] = '\0';
                                bool dup = false;
                                for (size_t k = 0; k < n && !dup; k++)
                                        dup = streq(v[k], run);
                                if (!dup) {
                                        v = xrealloc(v, (n + 2) * sizeof(*v));
                                        v[n++] = xstrdup(run);
                                        v[n] = NULL;
                                }
                        }
                        rl = 0;
                        too_long = false;
                }
        }
        close(fd);
        return v;
}

/* The libraries a carried library loads itself (cuDNN 9's libcudnn_*.so.9,
 * NVRTC for cuBLASLt and cuDNN's runtime-compiled kernels): the names in
 * its strings that are files beside it, carried under their sonames; the
 * driver's are noted */
static int loaded_by(struct find *f, const struct item *it, const char *dir, struct bd_err *err)
{
        char **names = so_names_in(it->path);
        int r = 0;
        for (size_t i = 0; names && names[i] && r == 0; i++) {
                const char *name = names[i];
                if (is_driver(name)) {
                        add_driver(f->l, name);
                        continue;
                }
                if (have(f->l, name) || in_root(&f->s, name))
                        continue;
                _cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
                if (access(p, R_OK) != 0)
                        continue;
                /* under its soname (libcudnn_adv.so names libcudnn_adv.so.9) */
                struct elf_dyn dyn;
                struct bd_err e;
                if (elf_dyn_file(p, &dyn, &e) < 0)
                        continue;
                const char *so = dyn.soname ? dyn.soname : name;
                if (!have(f->l, so) && !in_root(&f->s, so)) {
                        _cleanup_free_ char *sp = xasprintf("%s/%s", dir, so);
                        _cleanup_free_ char *by = xasprintf("%s (loads it)", it->shown);
                        r = carry(f, so, access(sp, R_OK) == 0 ? sp : p, by, err);
                }
                elf_dyn_free(&dyn);
        }
        dirs_free(names);
        return r;
}

static int needs_of(struct find *f, const struct item *it, struct bd_err *err)
{
        struct elf_dyn dyn;
        int r = elf_dyn_file(it->path, &dyn, err);
        if (r == -ENOEXEC)
                return 0;       /* not ELF: a script, a manual page */
        if (r < 0)
                return r;
        _cleanup_free_ char *dir = xstrdup(it->path);
        *strrchr(dir, '/') = '\0';
        char **rdirs = runpath_dirs(dyn.runpath, dir);
        for (size_t i = 0; dyn.needed[i] && r == 0; i++) {
                const char *so = dyn.needed[i];
                if (is_driver(so)) {
                        add_driver(f->l, so);
                        continue;
                }
                if (have(f->l, so) || in_root(&f->s, so))
                        continue;
                _cleanup_free_ char *found = NULL;
                for (size_t k = 0; rdirs && rdirs[k] && !found; k++) {
                        _cleanup_free_ char *p = xasprintf("%s/%s", rdirs[k], so);
                        if (access(p, R_OK) == 0)
                                found = TAKE_PTR(p);
                }
                if (!found && !it->in_image) {  /* a carried library's own directory */
                        _cleanup_free_ char *p = xasprintf("%s/%s", dir, so);
                        if (access(p, R_OK) == 0)
                                found = TAKE_PTR(p);
                }
                /* then where this host's loader looks (CUDA's libraries
                 * installed into /usr/lib: no Debian package declares them) */
                if (!found)
                        found = search_find(&f->host, so);
                if (!found) {
                        r = bd_err_set(err, -ENOENT, "%s needs %s, which neither the image, its run path (%s) nor "
                                       "this host's library directories have", it->shown, so,
                                       dyn.runpath ? dyn.runpath : "none");
                        break;
                }
                r = carry(f, so, found, it->shown, err);
        }
        if (r == 0 && !it->in_image)
                r = loaded_by(f, it, dir, err);
        dirs_free(rdirs);
        elf_dyn_free(&dyn);
        return r;
}

int cuda_libs_find(const char *root, char *const *files, struct cuda_libs *ret, struct bd_err *err)
{
        memset(ret, 0, sizeof(*ret));
        struct find f = { .s = { .root = root }, .host = { .root = "" }, .l = ret };
        root_dirs(&f.s);
        root_dirs(&f.host);
        for (size_t i = 0; files && files[i]; i++)
                queue(&f, xasprintf("%s%s", root, files[i]), xstrdup(files[i]), true);
        int r = 0;
        for (; f.head < f.nq && r == 0; f.head++) {
                struct item it = f.q[f.head];   /* needs_of queues more: f.q moves */
                r = needs_of(&f, &it, err);
        }
        for (size_t i = 0; i < f.nq; i++)
                free(f.q[i].path), free(f.q[i].shown);
        free(f.q);
        for (size_t i = 0; i < f.s.ndirs; i++)
                free(f.s.dirs[i]);
        free(f.s.dirs);
        for (size_t i = 0; i < f.host.ndirs; i++)
                free(f.host.dirs[i]);
        free(f.host.dirs);
        if (r < 0)
                cuda_libs_free(ret);
        return r < 0 ? r : 0;
}

static int copy_file(const char *src, const char *dst, struct bd_err *err)
{
        int in = open(src, O_RDONLY | O_CLOEXEC);
        if (in < 0)
                return bd_err_set(err, -errno, "%s: %s", src, strerror(errno));
        _cleanup_free_ char *tmp = xasprintf("%s.tmp-%d", dst, (int)getpid());
        int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (out < 0) {
                int e = errno;
                close(in);
                return bd_err_set(err, -e, "%s: %s", tmp, strerror(e));
        }
        int r = 0;
        static char buf[1 << 20];
        for (;;) {
                ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
                if (n == 0)
                        break;
                if (n > 0)
                        continue;
                if (errno == EINTR)
                        continue;
                if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP) {
                        r = bd_err_set(err, -errno, "copying %s to %s: %s", src, tmp, strerror(errno));
                        break;
                }
                /* across file systems that cannot: read and write */
                while ((n = read(in, buf, sizeof(buf))) > 0)
                        if (fs_write_all(out, buf, (size_t)n) < 0) {
                                n = -1;
                                break;
                        }
                if (n < 0)
                        r = bd_err_set(err, -errno, "copying %s to %s: %s", src, tmp, strerror(errno));
                break;
        }
        close(in);
        if (close(out) < 0 && r == 0)
                r = bd_err_set(err, -errno, "%s: %s", tmp, strerror(errno));
        if (r == 0 && rename(tmp, dst) < 0)
                r = bd_err_set(err, -errno, "cannot rename %s to %s: %s", tmp, dst, strerror(errno));
        if (r < 0)
                unlink(tmp);
        return r;
}

int cuda_libs_install(const char *root, const struct cuda_libs *l, struct bd_err *err)
{
        _cleanup_free_ char *dir = xasprintf("%s" CUDA_IMAGE_LIB_DIR, root);
        if (fs_mkdir_p(dir, 0755) < 0)
                return bd_err_set(err, -errno, "cannot create %s: %s", dir, strerror(errno));
        for (size_t i = 0; i < l->n; i++) {
                const char *base = strrchr(l->v[i].path, '/') + 1;
                _cleanup_free_ char *dst = xasprintf("%s/%s", dir, base);
                int r = copy_file(l->v[i].path, dst, err);
                if (r < 0)
                        return r;
                if (!streq(base, l->v[i].soname)) {
                        _cleanup_free_ char *link = xasprintf("%s/%s", dir, l->v[i].soname);
                        (void)unlink(link);
                        if (symlink(base, link) < 0)
                                return bd_err_set(err, -errno, "cannot make %s: %s", link, strerror(errno));
                }
        }
        _cleanup_free_ char *conf = xasprintf("%s/etc/ld.so.conf.d/benchd-cuda.conf", root);
        static const char text[] = "# CUDA's libraries, carried by benchctl image build --cuda\n" CUDA_IMAGE_LIB_DIR "\n";
        _cleanup_free_ char *confdir = xasprintf("%s/etc/ld.so.conf.d", root);
        if (fs_mkdir_p(confdir, 0755) < 0)
                return bd_err_set(err, -errno, "cannot create %s: %s", confdir, strerror(errno));
        return fs_write_atomic(conf, text, strlen(text), 0644, err);
}

/* The value of "#define NAME N" in a header, or -1 */
static long header_define(const char *path, const char *name)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        struct bd_err e;
        if (fs_read_file(path, 8 << 20, &text, &len, &e) < 0)
                return -1;
        size_t nl = strlen(name);
        for (char *p = text; (p = strstr(p, "#define ")); p++) {
                char *q = p + strlen("#define ");
                while (*q == ' ' || *q == '\t')
                        q++;
                if (strncmp(q, name, nl) != 0 || (q[nl] != ' ' && q[nl] != '\t'))
                        continue;
                char *end;
                long v = strtol(q + nl, &end, 10);
                if (end != q + nl && v >= 0)
                        return v;
        }
        return -1;
}

cJSON *cuda_libs_record(const struct cuda_libs *l)
{
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "lib_dir", CUDA_IMAGE_LIB_DIR);
        if (l->n) {
                /* the installation: the directory above the first library's */
                _cleanup_free_ char *home = xstrdup(l->v[0].path);
                for (int k = 0; k < 2; k++) {
                        char *s = strrchr(home, '/');
                        if (s && s != home)
                                *s = '\0';
                }
                cJSON_AddStringToObject(o, "from", home);
                _cleanup_free_ char *cuda_h = xasprintf("%s/include/cuda.h", home),
                                    *cudnn_h = xasprintf("%s/include/cudnn_version.h", home),
                                    *nccl_h = xasprintf("%s/include/nccl.h", home);
                long cv = header_define(cuda_h, "CUDA_VERSION");
                if (cv > 0) {
                        _cleanup_free_ char *s = xasprintf("%ld.%ld", cv / 1000, cv % 1000 / 10);
                        cJSON_AddStringToObject(o, "cuda_version", s);
                }
                long a = header_define(cudnn_h, "CUDNN_MAJOR"), b = header_define(cudnn_h, "CUDNN_MINOR"),
                     c = header_define(cudnn_h, "CUDNN_PATCHLEVEL");
                if (a >= 0 && b >= 0 && c >= 0) {
                        _cleanup_free_ char *s = xasprintf("%ld.%ld.%ld", a, b, c);
                        cJSON_AddStringToObject(o, "cudnn_version", s);
                }
                a = header_define(nccl_h, "NCCL_MAJOR"), b = header_define(nccl_h, "NCCL_MINOR"),
                c = header_define(nccl_h, "NCCL_PATCH");
                if (a >= 0 && b >= 0 && c >= 0) {
                        _cleanup_free_ char *s = xasprintf("%ld.%ld.%ld", a, b, c);
                        cJSON_AddStringToObject(o, "nccl_version", s);
                }
        }
        cJSON_AddNumberToObject(o, "bytes", (double)cuda_libs_bytes(l));
        cJSON *libs = cJSON_AddArrayToObject(o, "libraries");
        for (size_t i = 0; i < l->n; i++) {
                cJSON *e = cJSON_CreateObject();
                cJSON_AddStringToObject(e, "soname", l->v[i].soname);
                cJSON_AddStringToObject(e, "file", strrchr(l->v[i].path, '/') + 1);
                cJSON_AddNumberToObject(e, "bytes", (double)l->v[i].bytes);
                cJSON_AddStringToObject(e, "needed_by", l->v[i].needed_by);
                cJSON_AddItemToArray(libs, e);
        }
        cJSON *drv = cJSON_AddObjectToObject(o, "driver");
        cJSON_AddStringToObject(drv, "from", "the host, at run time");
        cJSON *dl = cJSON_AddArrayToObject(drv, "libraries");
        for (size_t i = 0; i < l->ndriver; i++)
                cJSON_AddItemToArray(dl, cJSON_CreateString(l->driver[i]));
        return o;
}

uint64_t cuda_libs_bytes(const struct cuda_libs *l)
{
        uint64_t b = 0;
        for (size_t i = 0; i < l->n; i++)
                b += l->v[i].bytes;
        return b;
}

void cuda_libs_free(struct cuda_libs *l)
{
        for (size_t i = 0; i < l->n; i++) {
                free(l->v[i].soname);
                free(l->v[i].path);
                free(l->v[i].needed_by);
        }
        free(l->v);
        for (size_t i = 0; i < l->ndriver; i++)
                free(l->driver[i]);
        free(l->driver);
        memset(l, 0, sizeof(*l));
}

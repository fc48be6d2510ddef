/* test-cudalibs.c: the CUDA image's libraries (client/image/cudalibs.h) and
 * the ELF reader under them (elfdyn.h), on libraries and a program built
 * here with the C compiler ($CC, else cc): a "CUDA installation" whose
 * libfakednn.so.2 needs libfakeblas.so.3 (a link to libfakeblas.so.3.1.0,
 * found through its run path $ORIGIN) and loads libfakednn_ops.so.2 and the
 * driver's libcuda.so.1 itself (names in its strings), and an image root
 * whose program needs libfakednn.so.2 (run path: the installation) and
 * libm.so.6 (in the root). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cudalibs.h"
#include "elfdyn.h"
#include "fs.h"
#include "strutil.h"
#include "tap.h"

static char dir[] = "/tmp/test-cudalibs-XXXXXX";

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *cmd = NULL;
        if (vasprintf(&cmd, fmt, ap) < 0)
                abort();
        va_end(ap);
        int r = system(cmd);
        if (r != 0)
                printf("# failed (%d): %s\n", r, cmd);
        free(cmd);
        return r;
}

static const struct cuda_lib *find(const struct cuda_libs *l, const char *soname)
{
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->v[i].soname, soname))
                        return &l->v[i];
        return NULL;
}

int main(void)
{
        if (!mkdtemp(dir))
                return 1;
        const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
        char *cuda = xasprintf("%s/cuda/lib64", dir), *root = xasprintf("%s/root", dir);
        int built = sh("mkdir -p %s %s/usr/bin %s/usr/lib/x86_64-linux-gnu %s/usr/lib/aarch64-linux-gnu %s/etc && "
                       "cd %s && "
                       "printf 'int blas(void) { return 3; }\\n' > blas.c && "
                       "%s -shared -fPIC -Wl,-soname,libfakeblas.so.3 -o %s/libfakeblas.so.3.1.0 blas.c && "
                       "ln -s libfakeblas.so.3.1.0 %s/libfakeblas.so.3 && "
                       "printf 'int ops(void) { return 2; }\\n' > ops.c && "
                       "%s -shared -fPIC -Wl,-soname,libfakednn_ops.so.2 -o %s/libfakednn_ops.so.2 ops.c && "
                       "ln -s libfakednn_ops.so.2 %s/libfakednn_ops.so && "
                       "printf 'const char *names[] = { \"libfakednn_ops.so\", \"libcuda.so.1\", \"libabsent.so.7\" };\\n"
                       "int blas(void); int dnn(void) { return blas() + (int)sizeof(names); }\\n' > dnn.c && "
                       "%s -shared -fPIC -Wl,-soname,libfakednn.so.2 -Wl,-rpath,'$ORIGIN' -Wl,--enable-new-dtags "
                       "-o %s/libfakednn.so.2 dnn.c -L%s -l:libfakeblas.so.3 && "
                       "printf 'int dnn(void); double cos(double); int main(void) { return dnn() + (int)cos(0); }\\n' "
                       "> prog.c && "
                       "%s -o %s/usr/bin/prog prog.c -L%s -l:libfakednn.so.2 -Wl,-rpath,%s -Wl,--no-as-needed -lm && "
                       "printf '#!/bin/sh\\n' > %s/usr/bin/script && chmod 755 %s/usr/bin/script && "
                       "touch %s/usr/lib/x86_64-linux-gnu/libm.so.6 %s/usr/lib/x86_64-linux-gnu/libc.so.6 "
                       "%s/usr/lib/aarch64-linux-gnu/libm.so.6 %s/usr/lib/aarch64-linux-gnu/libc.so.6",
                       cuda, root, root, root, root, dir, cc, cuda, cuda, cc, cuda, cuda, cc, cuda, cuda, cc, root, cuda,
                       cuda, root, root, root, root, root, root);
        if (built != 0) {
                printf("1..0 # SKIP cannot build the test libraries with %s\n", cc);
                sh("rm -rf %s", dir);
                return 0;
        }

        /* the ELF reader */
        struct elf_dyn d;
        struct bd_err err = { { 0 } };
        char *p = xasprintf("%s/libfakednn.so.2", cuda);
        is_int(elf_dyn_file(p, &d, &err), 0, "elfdyn: a shared library reads");
        is_str(d.soname, "libfakednn.so.2", "  its soname");
        is_str(d.runpath, "$ORIGIN", "  its run path (DT_RUNPATH)");
        bool blas = false;
        for (size_t i = 0; d.needed[i]; i++)
                blas |= streq(d.needed[i], "libfakeblas.so.3");
        ok(blas, "  it needs libfakeblas.so.3");
        elf_dyn_free(&d);
        free(p);
        p = xasprintf("%s/usr/bin/script", root);
        is_int(elf_dyn_file(p, &d, &err), -ENOEXEC, "elfdyn: a script is not ELF");
        ok(strstr(err.msg, "/usr/bin/script: not an ELF file") != NULL, "  said so, naming it");
        free(p);
        p = xasprintf("%s/cut.so", dir);
        sh("head -c 200 %s/libfakednn.so.2 > %s", cuda, p);
        is_int(elf_dyn_file(p, &d, &err), -EINVAL, "elfdyn: a library cut short is malformed");
        ok(strstr(err.msg, "cut.so: ") && strstr(err.msg, "outside the file"), "  said so, naming it");
        free(p);

        /* what the image lacks, found and carried */
        struct cuda_libs l;
        char *files[] = { "/usr/bin/prog", "/usr/bin/script", NULL };
        int r = cuda_libs_find(root, files, &l, &err);
        is_int(r, 0, "cuda_libs_find: the program's libraries are found");
        if (r < 0)
                printf("#   %s\n", err.msg);
        is_int(l.n, 3, "  three carried: the library, what it needs, what it loads");
        const struct cuda_lib *dnn = find(&l, "libfakednn.so.2"), *bl = find(&l, "libfakeblas.so.3"),
                              *ops = find(&l, "libfakednn_ops.so.2");
        ok(dnn && streq(dnn->needed_by, "/usr/bin/prog"), "  libfakednn.so.2, needed by the program");
        ok(bl && str_has_suffix(bl->path, "/libfakeblas.so.3.1.0") && streq(bl->needed_by, "libfakednn.so.2"),
           "  libfakeblas.so.3 from its real file, through the library's $ORIGIN");
        ok(ops && streq(ops->needed_by, "libfakednn.so.2 (loads it)"),
           "  libfakednn_ops.so.2 under its soname, named in the library's strings");
        ok(!find(&l, "libm.so.6") && !find(&l, "libabsent.so.7"), "  not libm (in the root), nor a name with no file");
        is_int(l.ndriver, 1, "  the driver's library noted, not carried");
        is_str(l.ndriver ? l.driver[0] : NULL, "libcuda.so.1", "  libcuda.so.1");
        ok(bl && bl->bytes > 0, "  sizes recorded");
        is_int(cuda_libs_install(root, &l, &err), 0, "cuda_libs_install: copied");
        char *link = xasprintf("%s" CUDA_IMAGE_LIB_DIR "/libfakeblas.so.3", root), target[256] = "";
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n > 0)
                target[n] = '\0';
        is_str(target, "libfakeblas.so.3.1.0", "  the soname a link to the real file's name");
        char *copy = xasprintf("%s" CUDA_IMAGE_LIB_DIR "/libfakeblas.so.3.1.0", root);
        struct stat st;
        ok(stat(copy, &st) == 0 && (uint64_t)st.st_size == bl->bytes && (st.st_mode & 0777) == 0644,
           "  the real file, whole, mode 0644");
        char *conf = xasprintf("%s/etc/ld.so.conf.d/benchd-cuda.conf", root), *text = NULL;
        size_t len;
        ok(fs_read_file(conf, 4096, &text, &len, &err) == 0 && strstr(text, "\n" CUDA_IMAGE_LIB_DIR "\n"),
           "  and the loader's configuration names the directory");
        cJSON *rec = cuda_libs_record(&l);
        ok(cJSON_GetArraySize(cJSON_GetObjectItem(rec, "libraries")) == 3 &&
           json_num(rec, "bytes", 0) == (double)cuda_libs_bytes(&l), "cuda_libs_record: the libraries and their total");
        cJSON_Delete(rec);
        cuda_libs_free(&l);

        /* the installed root has them: nothing more to carry */
        r = cuda_libs_find(root, files, &l, &err);
        ok(r == 0 && l.n == 0, "an image that has them (its ld.so.conf.d): nothing to carry");
        cuda_libs_free(&l);
        /* a library that is nowhere */
        sh("rm -r %s/usr/local %s/etc/ld.so.conf.d && rm %s/libfakeblas.so.3 %s/libfakeblas.so.3.1.0", root, root,
           cuda, cuda);
        r = cuda_libs_find(root, files, &l, &err);
        is_int(r, -ENOENT, "a library neither in the image nor in the run path: refused");
        ok(strstr(err.msg, "libfakednn.so.2 needs libfakeblas.so.3, which neither the image, its run path "
                           "($ORIGIN) nor this host's library directories have") != NULL,
           "  naming who needs what, and where it looked");
        printf("#   %s\n", err.msg);
        is_int(l.n, 0, "  nothing returned");

        free(text);
        free(conf);
        free(copy);
        free(link);
        free(cuda);
        free(root);
        sh("rm -rf %s", dir);
        return done_testing();
}

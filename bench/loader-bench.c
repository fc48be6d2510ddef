/* loader-bench.c: the data loader's images/s against plain TurboJPEG
 * decoding of the same files (read + tjDecompress2 to RGB at full size).
 *
 *   loader-bench DIR SPLIT [--threads N] [--images N] [--size S] [--mode train|eval|synthetic]
 *
 * Prints one line per measurement and the ratio; bench/loader.sh compiles
 * it against the build's libraries and drives it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <turbojpeg.h>
#include <unistd.h>

#include "coco-index.h"
#include "loader.h"
#include "macro.h"
#include "strutil.h"

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds used by the whole process (all threads): the per-core rate
 * does not depend on what else runs on the machine */
static double cpu(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int read_all(const char *path, uint8_t **buf, size_t *cap, size_t *len)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0) {
                close(fd);
                return -errno;
        }
        size_t n = (size_t)st.st_size;
        if (n > *cap) {
                free(*buf);
                *cap = n;
                *buf = xmalloc(n);
        }
        size_t got = 0;
        while (got < n) {
                ssize_t r = read(fd, *buf + got, n - got);
                if (r <= 0)
                        break;
                got += (size_t)r;
        }
        close(fd);
        *len = got;
        return 0;
}

/* decode-only: the same files, read and decoded to RGB at full size, one thread */
static double decode_only(const char *dir, const struct coco_index *x, long n_images, double *mpix)
{
        tjhandle tj = tjInitDecompress();
        uint8_t *file = NULL, *rgb = NULL;
        size_t cap = 0, rgb_cap = 0, len = 0;
        double pixels = 0;
        double t0 = cpu();
        for (long i = 0; i < n_images; i++) {
                const struct coco_image *im = &x->images[(size_t)i % x->n_images];
                char path[4096];
                snprintf(path, sizeof(path), "%s/%s", dir, coco_index_str(x, im->file_name));
                if (read_all(path, &file, &cap, &len) < 0)
                        continue;
                int w, h, ss, cs;
                if (tjDecompressHeader3(tj, file, (unsigned long)len, &w, &h, &ss, &cs) < 0)
                        continue;
                size_t need = (size_t)w * (size_t)h * 3;
                if (need > rgb_cap) {
                        free(rgb);
                        rgb_cap = need;
                        rgb = xmalloc(need);
                }
                tjDecompress2(tj, file, (unsigned long)len, rgb, w, 0, h, TJPF_RGB, 0);
                pixels += (double)w * h;
        }
        double dt = cpu() - t0;
        free(file);
        free(rgb);
        tjDestroy(tj);
        *mpix = pixels / 1e6;
        return n_images / dt;
}

int main(int argc, char **argv)
{
        if (argc < 3) {
                fprintf(stderr, "usage: loader-bench DIR SPLIT [--threads N] [--images N] [--size S] [--mode M] [--baseline 0|1]\n");
                return 2;
        }
        const char *root = argv[1], *split = argv[2], *mode = "train";
        long threads = 1, images = 2000, size = 300, baseline = 1;
        for (int i = 3; i + 1 < argc; i += 2) {
                long v = 0;
                if (streq(argv[i], "--mode")) {
                        mode = argv[i + 1];
                        continue;
                }
                if (str_parse_long(argv[i + 1], &v) < 0 || v < 0) {
                        fprintf(stderr, "loader-bench: bad value '%s'\n", argv[i + 1]);
                        return 2;
                }
                if (streq(argv[i], "--threads"))
                        threads = v;
                else if (streq(argv[i], "--images"))
                        images = v;
                else if (streq(argv[i], "--size"))
                        size = v;
                else if (streq(argv[i], "--baseline"))
                        baseline = v;
        }
        char dir[4096], ann[4096];
        snprintf(dir, sizeof(dir), "%s/%s", root, split);
        snprintf(ann, sizeof(ann), "%s/annotations/instances_%s.json", root, split);
        struct loader_config c = {
                .mode = streq(mode, "eval") ? LOADER_EVAL : streq(mode, "synthetic") ? LOADER_SYNTHETIC : LOADER_TRAIN,
                .images_dir = dir, .annotations = ann, .batch_size = 32, .width = (int)size, .height = (int)size,
                .threads = (int)threads, .prefetch = 4, .seed = 1,
        };
        struct bd_err err;
        struct loader *l;
        if (loader_open(&c, &l, &err) < 0) {
                fprintf(stderr, "loader-bench: %s\n", err.msg);
                return 1;
        }
        long nb = (images + c.batch_size - 1) / c.batch_size, seen = 0, whole = 0, scaled = 0;
        const struct loader_batch *b;
        /* warm-up: one batch (threads started, page cache, buffers grown) */
        if (loader_next(l, &b, &err) < 0) {
                fprintf(stderr, "loader-bench: %s\n", err.msg);
                return 1;
        }
        double t0 = now(), c0 = cpu();
        for (long i = 0; i < nb; i++) {
                if (loader_next(l, &b, &err) < 0) {
                        fprintf(stderr, "loader-bench: %s\n", err.msg);
                        return 1;
                }
                seen += b->n;
                for (int j = 0; j < b->n; j++) {
                        whole += b->samples[j].crop_mode == 0;
                        scaled += b->samples[j].scale_num < 8;
                }
        }
        double wall = seen / (now() - t0), rate = seen / (cpu() - c0);
        struct coco_index *x = NULL;
        if (baseline && c.mode != LOADER_SYNTHETIC && coco_index_open(ann, NULL, 0, &x, &err) < 0) {
                fprintf(stderr, "loader-bench: %s\n", err.msg);
                return 1;
        }
        loader_free(l);
        printf("loader (%s, %ldx%ld, %ld threads): %.1f images/s wall, %.1f images per CPU second\n", mode, size,
               size, threads, wall, rate);
        printf("  %.0f%% of the images not cropped (whole image decoded), %.0f%% decoded at a reduced scale\n",
               100.0 * whole / seen, 100.0 * scaled / seen);
        if (x) {
                double mpix;
                decode_only(dir, x, 200, &mpix);        /* warm */
                double d = decode_only(dir, x, images, &mpix);
                printf("TurboJPEG decode only: %.1f images per CPU second, %.1f Mpixel per CPU second\n", d,
                       mpix / (images / d));
                printf("ratio per core: %.3f\n", rate / d);
                coco_index_free(x);
        }
        return 0;
}

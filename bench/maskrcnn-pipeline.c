/* maskrcnn-pipeline.c: the Mask R-CNN input pipeline (data/det-loader.h)
 * against plain TurboJPEG decoding of the same files (read +
 * tjDecompress2 to RGB at full size), on the same number of threads.
 *
 *   maskrcnn-pipeline DIR SPLIT [--threads N] [--images N] [--batch B]
 *           [--convention mlperf|torchvision] [--mode train|eval|synthetic]
 *           [--min-size S] [--max-size S] [--baseline 0|1]
 *
 * Rates are images per CPU second of the whole process (all its threads),
 * so other load on the machine does not bias the ratio, and images per
 * wall second.  bench/maskrcnn-pipeline.sh drives it.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>

#include "coco-index.h"
#include "det-loader.h"
#include "loader-util.h"
#include "macro.h"
#include "strutil.h"

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* decode-only: every thread reads and decodes its share of the images */
struct decoder {
        pthread_t tid;
        const char *dir;
        const struct coco_index *x;
        long first, n;
        double pixels;
        long decoded;
};

static void *decode_main(void *arg)
{
        struct decoder *d = arg;
        tjhandle tj = tjInitDecompress();
        uint8_t *file = NULL, *rgb = NULL;
        size_t cap = 0, rgb_cap = 0, len = 0;
        for (long i = d->first; i < d->first + d->n; i++) {
                const struct coco_image *im = &d->x->images[(size_t)i % d->x->n_images];
                char path[4096];
                snprintf(path, sizeof(path), "%s/%s", d->dir, coco_index_str(d->x, im->file_name));
                if (loader_read_file(path, &file, &cap, &len, NULL) < 0)
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
                if (tjDecompress2(tj, file, (unsigned long)len, rgb, w, 0, h, TJPF_RGB, 0) == 0) {
                        d->pixels += (double)w * h;
                        d->decoded++;
                }
        }
        free(file);
        free(rgb);
        tjDestroy(tj);
        return NULL;
}

static double decode_only(const char *dir, const struct coco_index *x, long n_images, int threads, double *wall,
                          double *mpix)
{
        struct decoder d[64];
        double t0 = now(), c0 = cpu();
        long at = 0, decoded = 0;
        for (int i = 0; i < threads; i++) {
                long n = n_images / threads + (i < n_images % threads);
                d[i] = (struct decoder){ .dir = dir, .x = x, .first = at, .n = n };
                at += n;
                pthread_create(&d[i].tid, NULL, decode_main, &d[i]);
        }
        double pixels = 0;
        for (int i = 0; i < threads; i++) {
                pthread_join(d[i].tid, NULL);
                pixels += d[i].pixels;
                decoded += d[i].decoded;
        }
        *wall = decoded / (now() - t0);
        *mpix = pixels / 1e6 / (cpu() - c0);
        return decoded / (cpu() - c0);
}

int main(int argc, char **argv)
{
        if (argc < 3) {
                fprintf(stderr, "usage: maskrcnn-pipeline DIR SPLIT [--threads N] [--images N] [--batch B] "
                                "[--convention mlperf|torchvision] [--mode train|eval|synthetic] [--min-size S] "
                                "[--max-size S] [--baseline 0|1]\n");
                return 2;
        }
        const char *root = argv[1], *split = argv[2], *mode = "train", *conv = "mlperf";
        long threads = 1, images = 600, batch = 2, min_size = 800, max_size = 1333, baseline = 1;
        for (int i = 3; i + 1 < argc; i += 2) {
                long v = 0;
                if (streq(argv[i], "--mode")) {
                        mode = argv[i + 1];
                        continue;
                }
                if (streq(argv[i], "--convention")) {
                        conv = argv[i + 1];
                        continue;
                }
                if (str_parse_long(argv[i + 1], &v) < 0 || v < 0) {
                        fprintf(stderr, "maskrcnn-pipeline: bad value '%s'\n", argv[i + 1]);
                        return 2;
                }
                if (streq(argv[i], "--threads"))
                        threads = v < 1 ? 1 : v > 64 ? 64 : v;
                else if (streq(argv[i], "--images"))
                        images = v;
                else if (streq(argv[i], "--batch"))
                        batch = v;
                else if (streq(argv[i], "--min-size"))
                        min_size = v;
                else if (streq(argv[i], "--max-size"))
                        max_size = v;
                else if (streq(argv[i], "--baseline"))
                        baseline = v;
                else {
                        fprintf(stderr, "maskrcnn-pipeline: unknown option '%s'\n", argv[i]);
                        return 2;
                }
        }
        char dir[4096], ann[4096];
        snprintf(dir, sizeof(dir), "%s/%s", root, split);
        snprintf(ann, sizeof(ann), "%s/annotations/instances_%s.json", root, split);
        struct det_loader_config c = {
                .mode = streq(mode, "eval") ? DET_LOADER_EVAL
                      : streq(mode, "synthetic") ? DET_LOADER_SYNTHETIC : DET_LOADER_TRAIN,
                .convention = streq(conv, "torchvision") ? DET_TORCHVISION : DET_MLPERF,
                .images_dir = dir, .annotations = ann, .batch_size = (int)batch, .min_size = (int)min_size,
                .max_size = (int)max_size, .threads = (int)threads, .prefetch = 4, .seed = 1,
        };
        struct bd_err err;
        struct det_loader *l;
        if (det_loader_open(&c, &l, &err) < 0) {
                fprintf(stderr, "maskrcnn-pipeline: %s\n", err.msg);
                return 1;
        }
        const struct det_batch *b;
        /* warm-up: the ring's batches once (threads started, page cache, the
         * batches' memory faulted in, buffers grown) */
        for (int i = 0; i <= c.prefetch; i++)
                if (det_loader_next(l, &b, &err) < 0) {
                        fprintf(stderr, "maskrcnn-pipeline: %s\n", err.msg);
                        return 1;
                }
        long seen = 0, objects = 0, points = 0, flips = 0;
        double pixels = 0, padded = 0, t0 = now(), c0 = cpu();
        while (seen < images) {
                if (det_loader_next(l, &b, &err) < 0) {
                        fprintf(stderr, "maskrcnn-pipeline: %s\n", err.msg);
                        return 1;
                }
                seen += b->n;
                padded += (double)b->n * b->height * b->width;
                for (int j = 0; j < b->n; j++) {
                        const struct det_sample *s = &b->samples[j];
                        pixels += (double)s->height * s->width;
                        objects += s->target.n;
                        points += (long)s->target.n_xy / 2;
                        flips += s->flip;
                }
        }
        double wall = seen / (now() - t0), rate = seen / (cpu() - c0);
        struct coco_index *x = NULL;
        if (baseline && c.mode != DET_LOADER_SYNTHETIC && coco_index_open(ann, NULL, 0, &x, &err) < 0) {
                fprintf(stderr, "maskrcnn-pipeline: %s\n", err.msg);
                return 1;
        }
        det_loader_free(l);
        printf("pipeline (%s, %s, %ld-%ld, batch %ld, %ld threads): %.1f images/s wall, %.1f images per CPU second\n",
               conv, mode, min_size, max_size, batch, threads, wall, rate);
        printf("  %.2f Mpixel per image resized, %.2f padded; %.1f objects and %.0f polygon points per image, "
               "%.0f%% flipped\n", pixels / seen / 1e6, padded / seen / 1e6, (double)objects / seen,
               (double)points / seen, 100.0 * flips / seen);
        if (x) {
                double dwall, mpix;
                decode_only(dir, x, images / 4 + 1, (int)threads, &dwall, &mpix);     /* warm */
                double d = decode_only(dir, x, images, (int)threads, &dwall, &mpix);
                printf("TurboJPEG decode only: %.1f images per CPU second, %.1f images/s wall, %.1f Mpixel per CPU second\n",
                       d, dwall, mpix);
                printf("ratio per core: %.3f\n", rate / d);
                coco_index_free(x);
        }
        return 0;
}

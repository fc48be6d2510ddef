/* test-loader.c: the data loader on real JPEGs: determinism for a seed,
 * shards, augmentation invariants (boxes follow the pixels through crops and
 * flips), evaluation and synthetic modes, and bad data. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "buf.h"
#include "coco-index.h"
#include "fs.h"
#include "jpeg.h"
#include "loader.h"
#include "macro.h"
#include "rng.h"
#include "synth.h"
#include "tap.h"

static char tmpdir[] = "/tmp/test-loader.XXXXXX";
static char *shapes_dir;        /* synth: shapes */
static char *rects_dir;         /* one solid rectangle per image, and some bad data */

static void die(const char *what, const struct bd_err *err)
{
        printf("Bail out! %s: %s\n", what, err->msg);
        exit(1);
}

/* ---- datasets -------------------------------------------------------------------------- */

struct rect_image {
        int w, h;
        int x0, y0, x1, y1;     /* the rectangle, pixels */
};

static const uint8_t rect_bg[3] = { 60, 60, 60 }, rect_fg[3] = { 230, 200, 20 };

/* n images with one rectangle each, plus extras: an image without
 * annotation, an annotation of an unknown category, a box outside its image,
 * a box of no size, a missing file. */
static void make_rects(const char *dir, int n, bool extras)
{
        struct bd_err err;
        _cleanup_free_ char *imgs = xasprintf("%s/train2017", dir);
        _cleanup_free_ char *anns = xasprintf("%s/annotations", dir);
        fs_mkdir_p(imgs, 0755);
        fs_mkdir_p(anns, 0755);
        struct bd_buf j = BD_BUF_INIT, a = BD_BUF_INIT;
        buf_init(&j);
        buf_init(&a);
        buf_puts(&j, "{\"images\": [");
        struct bd_rng r;
        bd_rng_seed_key(&r, 42);
        int aid = 1;
        int total = n + (extras ? 2 : 0);
        for (int i = 0; i < total; i++) {
                struct rect_image im;
                im.w = 80 + (int)bd_rng_pick(&r, 80);
                im.h = 60 + (int)bd_rng_pick(&r, 80);
                im.x0 = (int)bd_rng_pick(&r, (uint64_t)im.w / 2);
                im.y0 = (int)bd_rng_pick(&r, (uint64_t)im.h / 2);
                im.x1 = im.x0 + 12 + (int)bd_rng_pick(&r, (uint64_t)(im.w - im.x0 - 12));
                im.y1 = im.y0 + 12 + (int)bd_rng_pick(&r, (uint64_t)(im.h - im.y0 - 12));
                uint8_t *rgb = xmalloc((size_t)im.w * im.h * 3);
                for (int y = 0; y < im.h; y++)
                        for (int x = 0; x < im.w; x++)
                                memcpy(rgb + ((size_t)y * im.w + x) * 3,
                                       x >= im.x0 && x < im.x1 && y >= im.y0 && y < im.y1 ? rect_fg : rect_bg, 3);
                uint8_t *jpg;
                size_t len;
                if (jpeg_encode_rgb(rgb, im.w, im.h, 95, &jpg, &len, &err) < 0)
                        die("encode", &err);
                _cleanup_free_ char *p = xasprintf("%s/%d.jpg", imgs, i + 1);
                if (!(extras && i == n + 1))    /* the last one's file is missing */
                        fs_write_atomic(p, jpg, len, 0644, &err);
                free(jpg);
                free(rgb);
                buf_printf(&j, "%s{\"id\": %d, \"file_name\": \"%d.jpg\", \"width\": %d, \"height\": %d}", i ? "," : "",
                           i + 1, i + 1, im.w, im.h);
                if (extras && i == n)
                        continue;       /* no annotation */
                buf_printf(&a, "%s{\"id\": %d, \"image_id\": %d, \"category_id\": %d, \"bbox\": [%d, %d, %d, %d], \"area\": %d, \"iscrowd\": 0}",
                           aid > 1 ? "," : "", aid, i + 1, 3 + i % 2, im.x0, im.y0, im.x1 - im.x0, im.y1 - im.y0,
                           (im.x1 - im.x0) * (im.y1 - im.y0));
                aid++;
                if (extras && i == 0) {
                        buf_printf(&a, ",{\"id\": %d, \"image_id\": 1, \"category_id\": 77, \"bbox\": [1, 1, 5, 5], \"area\": 25}", aid++);
                        buf_printf(&a, ",{\"id\": %d, \"image_id\": 1, \"category_id\": 3, \"bbox\": [%d, 1, 5, 5], \"area\": 25}",
                                   aid++, im.w + 3);
                        buf_printf(&a, ",{\"id\": %d, \"image_id\": 1, \"category_id\": 3, \"bbox\": [2, 2, 0, 5], \"area\": 0}", aid++);
                }
        }
        buf_printf(&j, "], \"categories\": [{\"id\": 4, \"name\": \"b\"}, {\"id\": 3, \"name\": \"a\"}], \"annotations\": [%s]}",
                   a.s);
        _cleanup_free_ char *jp = xasprintf("%s/instances_train2017.json", anns);
        if (fs_write_atomic(jp, j.s, j.len, 0644, &err) < 0)
                die("write", &err);
        buf_release(&j);
        buf_release(&a);
}

/* ---- helpers ------------------------------------------------------------------------------ */

static struct loader_config config(const char *dir, enum loader_mode mode, uint64_t seed, int threads)
{
        static char images[4096], ann[4096];
        snprintf(images, sizeof(images), "%s/train2017", dir);
        snprintf(ann, sizeof(ann), "%s/annotations/instances_train2017.json", dir);
        return (struct loader_config){
                .mode = mode, .images_dir = images, .annotations = ann, .batch_size = 4, .width = 64, .height = 48,
                .seed = seed, .threads = threads, .world = 1, .max_boxes = 16,
        };
}

static struct loader *open_or_die(const struct loader_config *c)
{
        struct loader *l = NULL;
        struct bd_err err;
        if (loader_open(c, &l, &err) < 0)
                die("loader_open", &err);
        return l;
}

/* A checksum of everything in a batch a trainer reads. */
static uint64_t batch_hash(const struct loader *l, const struct loader_batch *b, const struct loader_config *c)
{
        XXH3_state_t *s = XXH3_createState();
        XXH3_64bits_reset(s);
        size_t B = (size_t)c->batch_size, mb = (size_t)c->max_boxes;
        XXH3_64bits_update(s, &b->n, sizeof(b->n));
        XXH3_64bits_update(s, b->images, (size_t)b->n * 3 * c->width * c->height * sizeof(float));
        XXH3_64bits_update(s, b->boxes, B * mb * 4 * sizeof(float));
        XXH3_64bits_update(s, b->labels, B * mb * sizeof(int32_t));
        XXH3_64bits_update(s, b->nboxes, B * sizeof(int32_t));
        XXH3_64bits_update(s, b->image_ids, (size_t)b->n * sizeof(int64_t));
        uint64_t h = XXH3_64bits_digest(s);
        XXH3_freeState(s);
        return h;
}

static void run_hashes(struct loader_config c, long nbatches, uint64_t *out)
{
        _cleanup_(loader_freep) struct loader *l = open_or_die(&c);
        struct bd_err err;
        for (long i = 0; i < nbatches; i++) {
                const struct loader_batch *b;
                if (loader_next(l, &b, &err) < 0)
                        die("loader_next", &err);
                out[i] = batch_hash(l, b, &c);
        }
}

/* ---- tests ------------------------------------------------------------------------------------- */

static void test_determinism(void)
{
        struct loader_config c = config(shapes_dir, LOADER_TRAIN, 7, 1);
        _cleanup_(loader_freep) struct loader *l = open_or_die(&c);
        long nb = loader_batches_per_epoch(l);
        ok(nb >= 5, "training: batches per epoch");
        l = loader_free(l);
        long n = 2 * nb + 1;
        uint64_t a[64], b[64], d[64];
        run_hashes(c, n, a);
        c.threads = 3;
        c.prefetch = 5;
        run_hashes(c, n, b);
        ok(memcmp(a, b, (size_t)n * sizeof(uint64_t)) == 0, "1 thread and 3 threads deliver the same batches, 2 epochs");
        c.seed = 8;
        run_hashes(c, n, d);
        int same = 0;
        for (long i = 0; i < n; i++)
                same += a[i] == d[i];
        is_int(same, 0, "another seed: other batches");
        same = 0;
        for (long i = 0; i < nb; i++)
                same += a[i] == a[nb + i];
        is_int(same, 0, "the second epoch differs from the first (reshuffled, new augmentation)");

        /* seek: epoch 1 from a fresh loader equals epoch 1 of the stream */
        c.seed = 7;
        c.threads = 2;
        _cleanup_(loader_freep) struct loader *s = open_or_die(&c);
        struct bd_err err;
        const struct loader_batch *bt;
        loader_next(s, &bt, &err);                      /* some of epoch 0 in flight */
        loader_seek(s, 1);
        int seek_ok = 1;
        for (long i = 0; i < nb; i++) {
                if (loader_next(s, &bt, &err) < 0)
                        die("loader_next", &err);
                seek_ok &= bt->epoch == 1 && bt->index == i && batch_hash(s, bt, &c) == a[nb + i];
        }
        ok(seek_ok, "loader_seek(1) restarts at epoch 1, the same batches");
}

static int cmp_i64(const void *x, const void *y)
{
        int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
        return (a > b) - (a < b);
}

static void test_shards(void)
{
        const int world = 3;
        struct loader_config c = config(shapes_dir, LOADER_TRAIN, 11, 2);
        c.world = world;
        c.flags = LOADER_KEEP_LAST;
        int64_t ids[4096];
        size_t n = 0;
        long per_rank = -1, nb = -1, usable = 0;
        int equal = 1;
        for (int epoch = 0; epoch < 2; epoch++) {
                n = 0;
                for (int r = 0; r < world; r++) {
                        c.rank = r;
                        _cleanup_(loader_freep) struct loader *l = open_or_die(&c);
                        struct loader_stats st;
                        loader_get_stats(l, &st);
                        usable = st.usable;
                        if (per_rank < 0) {
                                per_rank = loader_images_per_epoch(l);
                                nb = loader_batches_per_epoch(l);
                        }
                        equal &= per_rank == loader_images_per_epoch(l) && nb == loader_batches_per_epoch(l);
                        loader_seek(l, epoch);
                        struct bd_err err;
                        for (long i = 0; i < nb; i++) {
                                const struct loader_batch *b;
                                if (loader_next(l, &b, &err) < 0)
                                        die("loader_next", &err);
                                for (int j = 0; j < b->n; j++)
                                        ids[n++] = b->image_ids[j];
                        }
                }
                qsort(ids, n, sizeof(int64_t), cmp_i64);
                size_t distinct = 0;
                for (size_t i = 0; i < n; i++)
                        distinct += i == 0 || ids[i] != ids[i - 1];
                _cleanup_free_ char *what = xasprintf("epoch %d: the ranks together see every usable image", epoch);
                is_int(distinct, usable, what);
                free(what);
                what = xasprintf("epoch %d: padded to %d x %ld, only the padding repeats", epoch, world, per_rank);
                ok(n == (size_t)(per_rank * world) && n - distinct == (size_t)(per_rank * world - usable), what);
        }
        ok(equal, "every rank has as many images and batches per epoch");
        ok(usable % world != 0, "  (with padding: the usable count is not a multiple of the world)");
}

static void test_invariants(void)
{
        struct loader_config c = config(shapes_dir, LOADER_TRAIN, 3, 2);
        _cleanup_(loader_freep) struct loader *l = open_or_die(&c);
        long nb = loader_batches_per_epoch(l);
        int K = loader_num_labels(l);
        int bad_boxes = 0, bad_labels = 0, bad_pad = 0, bad_n = 0, flips = 0, samples = 0, modes = 0, bad_values = 0;
        struct bd_err err;
        for (long i = 0; i < 3 * nb; i++) {
                const struct loader_batch *b;
                if (loader_next(l, &b, &err) < 0)
                        die("loader_next", &err);
                bad_n += b->n != c.batch_size || b->epoch != i / nb || b->index != i % nb;
                for (int j = 0; j < b->n; j++) {
                        samples++;
                        flips += b->samples[j].flip;
                        modes |= 1 << b->samples[j].crop_mode;
                        int nbx = b->nboxes[j];
                        bad_n += nbx < 1 || nbx > c.max_boxes;
                        for (int k = 0; k < c.max_boxes; k++) {
                                const float *q = b->boxes + ((size_t)j * c.max_boxes + k) * 4;
                                int32_t lab = b->labels[(size_t)j * c.max_boxes + k];
                                if (k < nbx) {
                                        bad_boxes += !(q[0] >= 0 && q[1] >= 0 && q[2] <= 1 && q[3] <= 1 && q[0] <= q[2] &&
                                                       q[1] <= q[3]);
                                        bad_labels += lab < 1 || lab > K;
                                } else
                                        bad_pad += lab != 0 || q[0] != 0 || q[3] != 0;
                        }
                        const float *img = b->images + (size_t)j * 3 * c.width * c.height;
                        for (int p = 0; p < 3 * c.width * c.height; p++)
                                bad_values += !(img[p] >= -2.2f && img[p] <= 2.7f);
                }
        }
        is_int(bad_n, 0, "every batch full, numbered, each image with 1..max boxes");
        is_int(bad_boxes, 0, "augmented boxes stay in [0, 1] with x0 <= x1 and y0 <= y1");
        is_int(bad_labels, 0, "labels in 1..K");
        is_int(bad_pad, 0, "zeros past each image's boxes");
        is_int(bad_values, 0, "pixels normalised: ([0, 1] - mean) / std");
        ok(flips > samples * 3 / 10 && flips < samples * 7 / 10, "about half the images flipped");
        ok(__builtin_popcount((unsigned)modes) >= 4, "several crop modes used");
        is_int(loader_label_category(l, 1), synth_class_id(0), "label 1 is the first category of the file");
}

/* The pixels under each box are the rectangle's, those just outside are not:
 * the boxes follow the image through crops and flips, to the pixel. */
static void test_boxes_follow_pixels(void)
{
        struct loader_config c = config(rects_dir, LOADER_TRAIN, 5, 2);
        c.flags = LOADER_NO_JITTER;
        c.width = 96;
        c.height = 72;
        _cleanup_(loader_freep) struct loader *l = open_or_die(&c);
        long nb = loader_batches_per_epoch(l);
        const struct ssd_norm *nm = &ssd_imagenet_norm;
        int inside_bad = 0, outside_bad = 0, checked_in = 0, checked_out = 0, flipped = 0, cropped = 0;
        struct bd_err err;
        for (long i = 0; i < 4 * nb; i++) {
                const struct loader_batch *b;
                if (loader_next(l, &b, &err) < 0)
                        die("loader_next", &err);
                for (int j = 0; j < b->n; j++) {
                        const float *img = b->images + (size_t)j * 3 * c.width * c.height;
                        flipped += b->samples[j].flip;
                        cropped += b->samples[j].crop_mode != 0;
                        for (int k = 0; k < b->nboxes[j]; k++) {
                                const float *q = b->boxes + ((size_t)j * c.max_boxes + k) * 4;
                                double x0 = q[0] * c.width, x1 = q[2] * c.width, y0 = q[1] * c.height, y1 = q[3] * c.height;
                                /* sample points 2.5 pixels inside and outside each edge */
                                for (int y = 0; y < c.height; y++)
                                        for (int x = 0; x < c.width; x++) {
                                                double xc = x + 0.5, yc = y + 0.5;
                                                bool in = xc > x0 + 2.5 && xc < x1 - 2.5 && yc > y0 + 2.5 && yc < y1 - 2.5;
                                                bool out = xc < x0 - 2.5 || xc > x1 + 2.5 || yc < y0 - 2.5 || yc > y1 + 2.5;
                                                if (!in && !out)
                                                        continue;
                                                float v[3];
                                                for (int ch = 0; ch < 3; ch++)
                                                        v[ch] = img[((size_t)ch * c.height + y) * c.width + x] * nm->std[ch] +
                                                                nm->mean[ch];
                                                /* the red channel tells them apart: 230 vs 60 */
                                                if (in) {
                                                        checked_in++;
                                                        inside_bad += fabsf(v[0] - rect_fg[0] / 255.f) > 0.08f;
                                                } else {
                                                        checked_out++;
                                                        outside_bad += fabsf(v[0] - rect_bg[0] / 255.f) > 0.08f;
                                                }
                                        }
                        }
                }
        }
        ok(checked_in > 1000 && checked_out > 1000, "rectangles: many pixels checked inside and outside the boxes");
        ok(flipped > 0 && cropped > 0, "  through flips and crops");
        is_int(inside_bad, 0, "  inside every box: the rectangle");
        is_int(outside_bad, 0, "  outside: the background");
}

static void test_eval_mode(void)
{
        struct loader_config c = config(shapes_dir, LOADER_EVAL, 1, 2);
        c.world = 2;
        struct bd_err err;
        _cleanup_(coco_index_freep) struct coco_index *x = NULL;
        if (coco_index_open(c.annotations, NULL, 0, &x, &err) < 0)
                die("index", &err);
        int64_t ids[4096];
        size_t n = 0;
        int bad_aug = 0, bad_size = 0, bad_boxes = 0;
        for (int r = 0; r < 2; r++) {
                c.rank = r;
                _cleanup_(loader_freep) struct loader *l = open_or_die(&c);
                for (int pass = 0; pass < 2; pass++)
                        for (long i = 0; i < loader_batches_per_epoch(l); i++) {
                                const struct loader_batch *b;
                                if (loader_next(l, &b, &err) < 0)
                                        die("loader_next", &err);
                                for (int j = 0; j < b->n; j++) {
                                        if (pass == 0)
                                                ids[n++] = b->image_ids[j];
                                        const struct loader_sample *s = &b->samples[j];
                                        bad_aug += s->flip || s->crop.x0 != 0 || s->crop.x1 != 1 || s->crop_mode;
                                        long im = coco_index_find_image(x, b->image_ids[j]);
                                        const struct coco_image *ci = &x->images[im];
                                        bad_size += b->sizes[2 * j] != (int)ci->width || b->sizes[2 * j + 1] != (int)ci->height;
                                        /* boxes: the annotations, normalised, in order */
                                        int k = 0;
                                        for (uint32_t a = 0; a < ci->ann_count && k < b->nboxes[j]; a++) {
                                                const struct coco_ann *an = &x->anns[ci->ann_first + a];
                                                const float *q = b->boxes + ((size_t)j * c.max_boxes + k) * 4;
                                                bad_boxes += fabsf(q[0] - (float)(an->bbox[0] / ci->width)) > 1e-6f ||
                                                             fabsf(q[3] - (float)((an->bbox[1] + an->bbox[3]) / ci->height)) > 1e-6f;
                                                k++;
                                        }
                                }
                        }
        }
        qsort(ids, n, sizeof(int64_t), cmp_i64);
        int dup = 0;
        for (size_t i = 1; i < n; i++)
                dup += ids[i] == ids[i - 1];
        is_int(n, x->n_images, "evaluation: the two ranks see every image, empty ones included");
        is_int(dup, 0, "  each once");
        is_int(bad_aug, 0, "  without crop or flip");
        is_int(bad_size, 0, "  with the original sizes");
        is_int(bad_boxes, 0, "  and the annotation boxes, normalised");
}

static void test_synthetic(void)
{
        struct loader_config c = { .mode = LOADER_SYNTHETIC, .batch_size = 3, .width = 32, .height = 32, .seed = 2,
                                   .threads = 1, .synthetic_images = 30, .synthetic_classes = 5, .max_boxes = 10 };
        uint64_t a[12], b[12];
        run_hashes(c, 12, a);
        c.threads = 3;
        run_hashes(c, 12, b);
        ok(memcmp(a, b, sizeof(a)) == 0, "synthetic: the same batches on 1 and 3 threads");
        _cleanup_(loader_freep) struct loader *l = open_or_die(&c);
        is_int(loader_batches_per_epoch(l), 10, "synthetic: 30 images, batches of 3: 10 per epoch");
        const struct loader_batch *bt;
        struct bd_err err;
        loader_next(l, &bt, &err);
        int bad = 0;
        for (int j = 0; j < bt->n; j++) {
                bad += bt->nboxes[j] < 1 || bt->nboxes[j] > 8;
                for (int k = 0; k < bt->nboxes[j]; k++) {
                        const float *q = bt->boxes + ((size_t)j * 10 + k) * 4;
                        int32_t lab = bt->labels[j * 10 + k];
                        bad += !(q[0] >= 0 && q[2] <= 1 && q[0] < q[2] && q[1] < q[3]) || lab < 1 || lab > 5;
                }
        }
        is_int(bad, 0, "synthetic: valid boxes and labels");
        ok(loader_index(l) == NULL, "synthetic: no annotation index, no disk");
}

static int warnings, open_warnings;
static char last_warning[1024];
static void count_warning(void *ctx, const char *msg)
{
        warnings++;
        /* the workers start decoding (and meeting corrupt JPEGs) as soon as the loader opens */
        open_warnings += !strstr(msg, "JPEG");
        snprintf(last_warning, sizeof(last_warning), "%s", msg);
        printf("#   warning: %s\n", msg);
}

static void test_bad_data(void)
{
        _cleanup_free_ char *dir = xasprintf("%s/bad", tmpdir);
        make_rects(dir, 10, true);
        /* one JPEG truncated, one garbage */
        _cleanup_free_ char *p3 = xasprintf("%s/train2017/3.jpg", dir);
        _cleanup_free_ char *p5 = xasprintf("%s/train2017/5.jpg", dir);
        struct stat st;
        stat(p3, &st);
        if (truncate(p3, st.st_size / 2) < 0)
                printf("# truncate: %s\n", strerror(errno));
        struct bd_err err;
        fs_write_atomic(p5, "\xff\xd8 this is not a JPEG \xff\xd9", 24, 0644, &err);
        struct loader_config c = config(dir, LOADER_TRAIN, 1, 2);
        c.warn = count_warning;
        c.max_warnings = 3;
        warnings = open_warnings = 0;
        _cleanup_(loader_freep) struct loader *l = open_or_die(&c);
        struct loader_stats s;
        loader_get_stats(l, &s);
        is_int(s.images, 12, "bad data: 12 images in the file");
        is_int(s.missing_files, 1, "  a missing file counted");
        is_int(s.empty_images, 1, "  an image without annotation counted");
        is_int(s.unknown_category, 1, "  an unknown category counted");
        is_int(s.boxes_outside, 1, "  a box outside its image counted");
        is_int(s.invalid_boxes, 1, "  a box of no size counted");
        is_int(s.usable, 10, "  10 usable images (the corrupt ones are found later)");
        is_int(open_warnings, 5, "  one warning each");
        long nb = loader_batches_per_epoch(l);
        int full = 1, substituted = 0, ids_ok = 1;
        for (long i = 0; i < 3 * nb; i++) {
                const struct loader_batch *b;
                if (loader_next(l, &b, &err) < 0)
                        die("loader_next", &err);
                full &= b->n == c.batch_size;
                for (int j = 0; j < b->n; j++) {
                        substituted += b->samples[j].substituted;
                        ids_ok &= b->image_ids[j] != 3 && b->image_ids[j] != 5;
                }
        }
        loader_get_stats(l, &s);
        ok(full, "  3 epochs of full batches, no crash");
        ok(ids_ok, "  the corrupt images never delivered");
        is_int(s.corrupt_images, 2, "  the truncated and the garbage JPEG counted once each");
        /* (the loader may have decoded ahead: its count can be larger) */
        ok(substituted > 0 && s.substitutions >= substituted, "  their places taken by other images");
        is_int(warnings, 7, "  with one warning each");
        like(last_warning, ".jpg", "  naming the file");
        l = loader_free(l);

        /* evaluation: the corrupt images come as blank, flagged samples */
        c.mode = LOADER_EVAL;
        l = open_or_die(&c);
        int failed = 0, seen = 0;
        for (long i = 0; i < loader_batches_per_epoch(l); i++) {
                const struct loader_batch *b;
                if (loader_next(l, &b, &err) < 0)
                        die("loader_next", &err);
                for (int j = 0; j < b->n; j++) {
                        seen++;
                        if (b->samples[j].failed)
                                failed += b->image_ids[j] == 3 || b->image_ids[j] == 5 ? 1 : 100;
                }
        }
        is_int(seen, 11, "evaluation over bad data: every present image once (the empty one too)");
        is_int(failed, 2, "  the two corrupt ones flagged failed");
        l = loader_free(l);

        /* nothing decodable: an error from loader_next, not a hang */
        _cleanup_free_ char *dir2 = xasprintf("%s/allbad", tmpdir);
        make_rects(dir2, 6, false);
        for (int i = 1; i <= 6; i++) {
                _cleanup_free_ char *p = xasprintf("%s/train2017/%d.jpg", dir2, i);
                fs_write_atomic(p, "garbage", 7, 0644, &err);
        }
        c = config(dir2, LOADER_TRAIN, 1, 2);
        l = open_or_die(&c);
        const struct loader_batch *b;
        int r = loader_next(l, &b, &err);
        is_int(r, -ENODATA, "all JPEGs corrupt: loader_next fails");
        like(err.msg, "no image of the dataset can be decoded", "  saying so");
        l = loader_free(l);

        /* nothing usable at all: an error when opening */
        for (int i = 1; i <= 6; i++) {
                _cleanup_free_ char *p = xasprintf("%s/train2017/%d.jpg", dir2, i);
                unlink(p);
        }
        r = loader_open(&c, &l, &err);
        is_int(r, -ENODATA, "all files missing: loader_open fails");
        like(err.msg, "nothing usable", "  saying so");
        like(err.msg, "6 missing files", "  with the counts");
}

int main(void)
{
        if (!mkdtemp(tmpdir))
                return 1;
        shapes_dir = xasprintf("%s/shapes", tmpdir);
        rects_dir = xasprintf("%s/rects", tmpdir);
        struct synth_config sc;
        synth_config_init(&sc);
        sc.train_images = 50;
        sc.val_images = 2;
        sc.size = 128;
        sc.classes = 4;
        sc.seed = 5;
        sc.threads = 2;
        sc.crowd_fraction = 0.1;
        struct bd_err err;
        if (synth_write(&sc, shapes_dir, NULL, &err) < 0)
                die("synth", &err);
        make_rects(rects_dir, 16, false);
        test_determinism();
        test_shards();
        test_invariants();
        test_boxes_follow_pixels();
        test_eval_mode();
        test_synthetic();
        test_bad_data();
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
                printf("# cannot remove %s\n", tmpdir);
        free(shapes_dir);
        free(rects_dir);
        return done_testing();
}

/* benchd-dataset.c: the program behind benchctl dataset synth|index|check:
 * generate a COCO-format dataset, build the annotation index of one, check
 * one for bad data.
 *
 * benchctl executes it for 'benchctl dataset' (cmd-dataset.c): it needs the JPEG libraries, which every benchctl command
 * would otherwise load at its start (a third of a millisecond here, on
 * each 'benchctl submit' too). */
#include "config.h"

#include <limits.h>
#include <string.h>
#include <sys/resource.h>

#include "benchctl.h"
#include "coco-index.h"
#include "dataset-fetch.h"
#include "json.h"
#include "loader.h"
#include "parallel.h"
#include "strutil.h"
#include "meter.h"
#include "synth.h"

#define OPT_IMAGES 370
#define OPT_VAL 371
#define OPT_SIZE 372
#define OPT_CLASSES 373
#define OPT_SEED 374
#define OPT_QUALITY 375
#define OPT_OBJECTS 376
#define OPT_THREADS 377
#define OPT_FORCE 378
#define OPT_CACHE 379
#define OPT_SPLIT 380
#define OPT_DECODE 381
#define OPT_NOISE 382
#define OPT_QUIET 383

static const struct bd_command sub_synth = {
        "dataset synth", NULL,
        "[--images N] [--val-images N] [--size S] [--classes K] [--seed N] [--force] [--quiet] -o DIR",
        "Write a COCO 2017-shaped dataset of coloured shapes: train2017/, val2017/ and "
        "annotations/instances_{train,val}2017.json,\nthe same for the same options.",
};
static const struct bd_option synth_options[] = {
        { "output", 'o', "DIR", "the dataset directory to create (must not exist)" },
        { "images", OPT_IMAGES, "N", "training images (default 1000)" },
        { "val-images", OPT_VAL, "N", "validation images (default: a fifth of --images)" },
        { "size", OPT_SIZE, "S", "longer side of the images in pixels (default 320)" },
        { "classes", OPT_CLASSES, "K", "categories, 1 to 80 (default 6)" },
        { "seed", OPT_SEED, "N", "random seed (default 1)" },
        { "quality", OPT_QUALITY, "Q", "JPEG quality (default 90)" },
        { "objects", OPT_OBJECTS, "N", "at most N objects per image (default 6)" },
        { "noise", OPT_NOISE, "A", "background noise amplitude, 0 to 127 (default 24)" },
        { "threads", OPT_THREADS, "N", "generate on N threads (default: the CPUs available)" },
        { "force", OPT_FORCE, NULL, "replace DIR if it exists" },
        { "quiet", OPT_QUIET, NULL, "no progress line on standard error" },
        { 0 }
};

static const struct bd_command sub_index = {
        "dataset index", NULL, "ANNOTATIONS.json [--cache-dir DIR] [--json]",
        "Build (or find) the binary index of a COCO annotation file and describe it.",
};
static const struct bd_option index_options[] = {
        { "cache-dir", OPT_CACHE, "DIR", "keep the index in DIR (default: next to the JSON, or ~/.cache/benchd/coco)" },
        { "json", 'j', NULL, "print JSON" },
        { 0 }
};

static const struct bd_command sub_check = {
        "dataset check", NULL, "DIR [--split NAME] [--decode] [--cache-dir DIR] [--json] [--quiet]",
        "Count what the data loader would skip in a COCO tree: missing files, images without a usable\n"
        "box, bad boxes, unknown categories and, with --decode, corrupt JPEGs (and CMYK ones, decoded to RGB as Pillow "
        "does).  Fails when nothing is usable.",
};
static const struct bd_option check_options[] = {
        { "split", OPT_SPLIT, "NAME", "train2017, val2017 or both (default both)" },
        { "decode", OPT_DECODE, NULL, "decode every image too" },
        { "threads", OPT_THREADS, "N", "check on N threads (default: the CPUs available)" },
        { "cache-dir", OPT_CACHE, "DIR", "where the annotation index lives" },
        { "json", 'j', NULL, "print JSON" },
        { "quiet", OPT_QUIET, NULL, "no progress line on standard error" },
        { 0 }
};

static void synth_progress(void *ctx, long done, long total)
{
        meter_count(ctx, "images", (uint64_t)done, (uint64_t)total);
}

static int dataset_synth(int argc, char **argv)
{
        const struct bd_command *cmd = &sub_synth;
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, synth_options, cmd, NULL);
        struct synth_config c;
        synth_config_init(&c);
        c.threads = parallel_cpus();
        const char *out = NULL;
        bool quiet = false;
        /* the numeric options: where each goes and its range */
        long val = -1, seed = 1, images = c.train_images, size = c.size, classes = c.classes, quality = c.quality,
             objects = c.max_objects, noise = c.noise, threads = c.threads;
        const struct {
                int key;
                const char *name;
                long min, max;
                long *v;
        } nums[] = {
                { OPT_IMAGES, "images", 1, 10000000, &images },     { OPT_VAL, "val-images", 0, 10000000, &val },
                { OPT_SIZE, "size", 32, 8192, &size },               { OPT_CLASSES, "classes", 1, SYNTH_MAX_CLASSES, &classes },
                { OPT_SEED, "seed", 0, LONG_MAX, &seed },            { OPT_QUALITY, "quality", 1, 100, &quality },
                { OPT_OBJECTS, "objects", 1, 100, &objects },        { OPT_NOISE, "noise", 0, 127, &noise },
                { OPT_THREADS, "threads", 1, 1024, &threads },
        };
        const char *arg;
        int opt;
        while ((opt = opts_next(&o, &arg)) > 0) {
                if (opt == 'o')
                        out = arg;
                else if (opt == OPT_FORCE)
                        c.force = true;
                else if (opt == OPT_QUIET)
                        quiet = true;
                for (size_t i = 0; i < ARRAY_SIZE(nums); i++)
                        if (nums[i].key == opt)
                                opts_number(&o, nums[i].name, arg, nums[i].min, nums[i].max, nums[i].v);
        }
        c.train_images = images;
        c.seed = (uint64_t)seed;
        c.size = (int)size;
        c.classes = (int)classes;
        c.quality = (int)quality;
        c.max_objects = (int)objects;
        c.noise = (int)noise;
        c.threads = (int)threads;
        int next = opts_finish(&o, 0, 0, NULL);
        if (next < 0)
                return opts_exit(next);
        if (!out)
                return usage_error(cmd, "missing -o DIR");
        c.val_images = val >= 0 ? val : (c.train_images + 4) / 5;
        struct synth_counts n;
        struct bd_err err;
        struct meter m;
        meter_start(&m, "dataset synth", quiet);
        c.progress = synth_progress;
        c.progress_ctx = &m;
        int r = synth_write(&c, out, &n, &err);
        meter_end(&m);
        if (r < 0) {
                bd_error("%s", err.msg);
                return BD_EXIT_FAIL;
        }
        printf("%s: %ld images (%ld train, %ld val), %ld annotations (%ld crowd), %ld empty images, %.1f MB of JPEG\n",
               out, n.images, c.train_images, c.val_images, n.annotations, n.crowd, n.empty, n.jpeg_bytes / 1e6);
        return BD_EXIT_OK;
}

static long peak_rss_kb(void)
{
        struct rusage ru;
        return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

static int dataset_index(int argc, char **argv)
{
        const struct bd_command *cmd = &sub_index;
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, index_options, cmd, NULL);
        const char *cache = NULL;
        bool json = false;
        const char *arg;
        int opt;
        while ((opt = opts_next(&o, &arg)) > 0) {
                switch (opt) {
                case OPT_CACHE: cache = arg; break;
                case 'j': json = true; break;
                }
        }
        int next = opts_finish(&o, 1, 1, "ANNOTATIONS.json");
        if (next < 0)
                return opts_exit(next);
        struct bd_err err;
        _cleanup_(coco_index_freep) struct coco_index *x = NULL;
        if (coco_index_open(argv[next], cache, 0, &x, &err) < 0) {
                bd_error("%s", err.msg);
                return BD_EXIT_FAIL;
        }
        size_t crowd = 0, poly = 0, rle = 0;
        for (size_t i = 0; i < x->n_anns; i++) {
                crowd += x->anns[i].iscrowd;
                poly += x->anns[i].seg_kind == COCO_SEG_POLYGONS;
                rle += x->anns[i].seg_kind == COCO_SEG_RLE;
        }
        _cleanup_buf_ struct bd_buf b = BD_BUF_INIT;
        buf_init(&b);
        if (json) {
                buf_puts(&b, "{\n  \"index\": ");
                json_quote(&b, x->info.path);
                buf_printf(&b, ",\n  \"built\": %s,\n  \"build_seconds\": ", x->info.built ? "true" : "false");
                json_number(&b, x->info.build_seconds);
                buf_printf(&b, ",\n  \"json_hash\": \"%016llx\",\n  \"images\": %zu,\n  \"annotations\": %zu,\n"
                               "  \"categories\": %zu,\n  \"crowd\": %zu,\n  \"polygons\": %zu,\n  \"rle\": %zu,\n"
                               "  \"orphan_annotations\": %llu,\n  \"unknown_category_annotations\": %llu,\n"
                               "  \"index_bytes\": %zu,\n  \"peak_rss_kb\": %ld\n}\n",
                           (unsigned long long)x->info.json_hash, x->n_images, x->n_anns, x->n_cats, crowd, poly, rle,
                           (unsigned long long)x->header->orphan_anns,
                           (unsigned long long)x->header->unknown_category_anns, x->map_size, peak_rss_kb());
        } else {
                buf_printf(&b, "%s: %s", x->info.path, x->info.built ? "built" : "up to date");
                if (x->info.built)
                        buf_printf(&b, " in %.2f s", x->info.build_seconds);
                buf_printf(&b, "\n  %zu images, %zu annotations (%zu crowd; %zu polygons, %zu RLE), %zu categories\n"
                               "  %llu annotations of unknown images dropped, %llu of unknown categories\n"
                               "  index %.1f MB, peak memory %.1f MB\n",
                           x->n_images, x->n_anns, crowd, poly, rle, x->n_cats,
                           (unsigned long long)x->header->orphan_anns,
                           (unsigned long long)x->header->unknown_category_anns, x->map_size / 1e6,
                           peak_rss_kb() / 1024.0);
        }
        fputs(b.s, stdout);
        return BD_EXIT_OK;
}

static void print_warning(void *ctx, const char *msg)
{
        bd_warning("%s", msg);
}

/* Opens a loader over one split (evaluation mode: every image, no
 * augmentation) and, with decode, runs one pass. */
int dataset_check_split(const char *dir, const char *split, bool decode, int threads, const char *cache, bool json,
                        bool quiet, bool *usable, struct bd_buf *out)
{
        _cleanup_free_ char *images = xasprintf("%s/%s", dir, split);
        _cleanup_free_ char *ann = xasprintf("%s/annotations/instances_%s.json", dir, split);
        struct loader_config c = {
                .mode = LOADER_EVAL, .images_dir = images, .annotations = ann, .cache_dir = cache,
                .batch_size = 16, .width = 32, .height = 32, .threads = threads, .warn = print_warning,
        };
        struct bd_err err;
        _cleanup_(loader_freep) struct loader *l = NULL;
        if (loader_open(&c, &l, &err) < 0) {
                bd_error("%s", err.msg);
                return BD_EXIT_FAIL;
        }
        if (decode) {
                _cleanup_free_ char *what = xasprintf("dataset check %s", split);
                struct meter m;
                meter_start(&m, what, quiet);
                long n = loader_batches_per_epoch(l);
                for (long i = 0; i < n; i++) {
                        const struct loader_batch *b;
                        if (loader_next(l, &b, &err) < 0) {
                                meter_end(&m);
                                bd_error("%s", err.msg);
                                return BD_EXIT_FAIL;
                        }
                        meter_count(&m, "batches decoded", (uint64_t)i + 1, (uint64_t)n);
                }
                meter_end(&m);
        }
        struct loader_stats s;
        loader_get_stats(l, &s);
        long train_usable = s.usable - s.empty_images - (decode ? s.corrupt_images : 0);
        *usable = *usable || train_usable > 0;
        const struct {
                const char *key;
                long v;
        } rows[] = {
                { "images", s.images },
                { "usable_for_training", train_usable },
                { "missing_files", s.missing_files },
                { "empty_images", s.empty_images },
                { "corrupt_images", decode ? s.corrupt_images : -1 },
                { "cmyk_images", decode ? s.cmyk_images : -1 },  /* decoded, as Pillow does: not corrupt */
                { "orphan_annotations", s.orphan_annotations },
                { "unknown_category_boxes", s.unknown_category },
                { "invalid_boxes", s.invalid_boxes },
                { "boxes_outside", s.boxes_outside },
                { "boxes_clipped", s.boxes_clipped },
                { "boxes_truncated", s.boxes_truncated },
        };
        if (json) {
                buf_printf(out, "%s\n  ", out->len > 2 ? "," : "");
                json_quote(out, split);
                buf_puts(out, ": {");
                for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
                        buf_printf(out, "%s\"%s\": ", i ? ", " : "", rows[i].key);
                        if (rows[i].v < 0)
                                buf_puts(out, "null");
                        else
                                buf_printf(out, "%ld", rows[i].v);
                }
                buf_puts(out, "}");
        } else {
                buf_printf(out, "%s:\n", split);
                for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
                        if (rows[i].v >= 0)
                                buf_printf(out, "  %-24s %ld\n", rows[i].key, rows[i].v);
                        else
                                buf_printf(out, "  %-24s %s\n", rows[i].key, "(not checked: --decode)");
        }
        return BD_EXIT_OK;
}

static int dataset_check(int argc, char **argv)
{
        const struct bd_command *cmd = &sub_check;
        _cleanup_opts_ struct bd_opts o = OPTS_INIT(argc, argv, check_options, cmd, NULL);
        const char *split = "both", *cache = NULL;
        bool decode = false, json = false, quiet = false;
        long threads = parallel_cpus();
        const char *arg;
        int opt;
        while ((opt = opts_next(&o, &arg)) > 0) {
                switch (opt) {
                case OPT_SPLIT: split = arg; break;
                case OPT_DECODE: decode = true; break;
                case OPT_CACHE: cache = arg; break;
                case 'j': json = true; break;
                case OPT_QUIET: quiet = true; break;
                case OPT_THREADS: opts_number(&o, "threads", arg, 1, 1024, &threads); break;
                }
        }
        int next = opts_finish(&o, 1, 1, "DIR");
        if (next < 0)
                return opts_exit(next);
        const char *splits[2] = { NULL, NULL };
        if (streq(split, "both")) {
                splits[0] = "train2017";
                splits[1] = "val2017";
        } else if (streq(split, "train2017") || streq(split, "val2017"))
                splits[0] = split;
        else
                return usage_error(cmd, "--split: expected train2017, val2017 or both, got '%s'", split);
        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        buf_init(&out);
        if (json)
                buf_puts(&out, "{");
        bool usable = false;
        for (int i = 0; i < 2 && splits[i]; i++) {
                int r = dataset_check_split(argv[next], splits[i], decode, (int)threads, cache, json, quiet, &usable, &out);
                if (r != BD_EXIT_OK)
                        return r;
        }
        if (json)
                buf_puts(&out, "\n}\n");
        fputs(out.s, stdout);
        if (!usable) {
                bd_error("%s: no image usable for training", argv[next]);
                return BD_EXIT_FAIL;
        }
        return BD_EXIT_OK;
}

static int dataset(int argc, char **argv, const struct bd_command *cmd)
{
        static const struct {
                const char *name;
                int (*fn)(int argc, char **argv);
        } subs[] = { { "synth", dataset_synth },
                     { "index", dataset_index },
                     { "check", dataset_check },
                     { "fetch", dataset_fetch } };
        if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h")) {
                FILE *f = argc < 2 ? stderr : stdout;
                fprintf(f, "usage: benchctl dataset %s\n\n%s\n\n", DATASET_USAGE, cmd->summary);
                fprintf(f, "  %-8s %s\n  %-8s %s\n  %-8s %s\n  %-8s %s\n", "synth", "write a synthetic COCO-format dataset",
                        "index", "build the annotation index of a COCO file",
                        "check", "count the bad data in a COCO tree",
                        "fetch", "download, verify and unpack a dataset (COCO 2017), then index and check it");
                fprintf(f, "\n'benchctl dataset SUBCOMMAND --help' describes each.\n");
                return argc < 2 ? BD_EXIT_USAGE : BD_EXIT_OK;
        }
        for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
                if (streq(argv[1], subs[i].name))
                        return subs[i].fn(argc - 1, argv + 1);
        return usage_error(cmd, "unknown subcommand '%s' (synth, index, check or fetch)", argv[1]);
}

int main(int argc, char **argv)
{
        static const struct bd_command cmd = { "dataset", NULL, DATASET_USAGE, DATASET_SUMMARY };
        return finish_output(dataset(argc, argv, &cmd));
}

/* loader.h: the SSD data loader: COCO images to float batches, on threads,
 * ahead of the training loop.
 *
 *     struct loader_config cfg = { .mode = LOADER_TRAIN, .images_dir = ".../train2017",
 *             .annotations = ".../instances_train2017.json", .batch_size = 32,
 *             .width = 300, .height = 300, .rank = r, .world = n, .seed = s, .threads = 4 };
 *     loader_open(&cfg, &l, err);
 *     for (epoch...) for (i < loader_batches_per_epoch(l); i++) {
 *             const struct loader_batch *b;
 *             loader_next(l, &b, err);        // valid until the next loader_next
 *     }
 *
 * Modes:
 *   LOADER_TRAIN  images with at least one usable box, reshuffled every epoch
 *                 from (seed, epoch); the reference SSD augmentation (random
 *                 IoU crop, flip, resize, colour jitter, normalisation).
 *   LOADER_EVAL   every readable image once per pass, in annotation order;
 *                 resize and normalisation only; a smaller last batch.
 *   LOADER_SYNTHETIC  random images, boxes and labels of the right shapes
 *                 without touching the disk (compute throughput alone).
 *
 * Sharding: every rank computes the same permutation; training pads it to a
 * multiple of the world size by wrapping around (DistributedSampler) and rank
 * r takes positions r, r + world, ...; evaluation takes images r, r + world,
 * ... without padding.  Training drops the last partial batch unless
 * LOADER_KEEP_LAST.
 *
 * Determinism: every random choice for the image at position p of epoch e
 * comes from a generator seeded with (seed, e, p), so batches do not depend
 * on the number of threads or on timing.  An image that cannot be read or
 * decoded is replaced by the next one of the permutation that can (training)
 * or delivered as a blank image flagged failed (evaluation); which images are
 * bad depends only on the files, so this is deterministic too.
 *
 * Bad data never stops the loader: missing files, empty images, boxes
 * outside the image or of no size, unknown categories are counted when the
 * loader opens and corrupt JPEGs when they are met; each kind is reported
 * through cfg->warn (the first few of each, then a count).  A dataset with
 * nothing usable is an error.
 */
#ifndef BD_DATA_LOADER_H
#define BD_DATA_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "augment.h"
#include "coco-index.h"
#include "err.h"

enum loader_mode {
        LOADER_TRAIN,
        LOADER_EVAL,
        LOADER_SYNTHETIC,
};

enum loader_flags {
        LOADER_NO_CROP = 1 << 0,
        LOADER_NO_FLIP = 1 << 1,
        LOADER_NO_JITTER = 1 << 2,
        LOADER_NO_SHUFFLE = 1 << 3,
        LOADER_KEEP_LAST = 1 << 4,      /* training: a smaller last batch rather than none */
        LOADER_SKIP_CROWD = 1 << 5,     /* no crowd boxes in the targets (the reference keeps them) */
        LOADER_NO_FILE_CHECK = 1 << 6,  /* do not stat every image when opening */
};

struct loader_config {
        enum loader_mode mode;
        const char *images_dir;         /* train2017/ */
        const char *annotations;        /* annotations/instances_train2017.json */
        const char *cache_dir;          /* for the index; NULL: see coco_index_open() */
        int batch_size;                 /* images per batch on this rank */
        int width, height;              /* model input (300 x 300) */
        int rank, world;                /* world 0 counts as 1 */
        uint64_t seed;
        int threads;                    /* decoding threads, 0: 1 */
        int prefetch;                   /* batches decoded ahead, 0: 3 */
        int max_boxes;                  /* per image, 0: 200 (more are dropped, counted) */
        unsigned flags;                 /* enum loader_flags */
        const struct ssd_norm *norm;    /* NULL: ImageNet mean and std */
        long synthetic_images;          /* synthetic: images per epoch, 0: 118287 */
        int synthetic_classes;          /* synthetic: labels 1..K, 0: 80 */
        /* warnings, called with the loader's lock held; NULL: dropped */
        void (*warn)(void *ctx, const char *msg);
        void *warn_ctx;
        int max_warnings;               /* shown per kind, 0: 5 */
        /* image memory (pinned host memory for a GPU), NULL: aligned_alloc */
        void *(*alloc)(size_t size, void *ctx);
        void (*dealloc)(void *p, void *ctx);
        void *alloc_ctx;
};

/* How one image of a batch was made. */
struct loader_sample {
        struct ssd_crop crop;           /* in [0, 1] of the original image */
        uint8_t crop_mode;              /* 0 none, 1..5 min IoU 0.1..0.9, 6 any */
        uint8_t flip;
        uint8_t failed;                 /* evaluation: unreadable, the image is blank */
        uint8_t substituted;            /* training: the image at this position was bad */
        uint32_t scale_num;             /* decoded at scale_num/8 */
};

struct loader_batch {
        long epoch;                     /* from 0 */
        long index;                     /* batch number within the epoch */
        int n;                          /* images in this batch, <= batch_size */
        float *images;                  /* (batch_size, 3, height, width), normalised */
        float *boxes;                   /* (batch_size, max_boxes, 4): x0 y0 x1 y1 in [0, 1] */
        int32_t *labels;                /* (batch_size, max_boxes): 1..K, 0 beyond nboxes */
        int32_t *nboxes;                /* (batch_size) */
        int64_t *image_ids;             /* (batch_size): COCO ids (synthetic: the position) */
        int32_t *sizes;                 /* (batch_size, 2): original width, height */
        struct loader_sample *samples;  /* (batch_size) */
};

struct loader_stats {
        long images;                    /* in the annotation file */
        long usable;                    /* images this mode uses, before sharding */
        long missing_files;             /* skipped: image file missing or not a file */
        long empty_images;              /* skipped (training): no usable box */
        long orphan_annotations;        /* dropped by the index: image_id names no image */
        long unknown_category;          /* boxes dropped: category not in the file's categories */
        long invalid_boxes;             /* boxes dropped: zero or negative size */
        long boxes_outside;             /* boxes dropped: entirely outside the image */
        long boxes_clipped;             /* boxes cut to the image */
        long crowd_skipped;             /* crowd boxes left out (LOADER_SKIP_CROWD) */
        long boxes_truncated;           /* beyond max_boxes */
        long corrupt_images;            /* distinct images found unreadable while loading */
        long cmyk_images;               /* CMYK JPEGs decoded (as RGB, as Pillow does; in one pass: images) */
        long substitutions;             /* samples that took another image (training) */
};

struct loader;

int loader_open(const struct loader_config *cfg, struct loader **ret, struct bd_err *err);
struct loader *loader_free(struct loader *l);
DEFINE_CLEANUP(struct loader *, loader_free)

long loader_batches_per_epoch(const struct loader *l);
/* Images this rank sees per epoch (training: padded share, batches included or not). */
long loader_images_per_epoch(const struct loader *l);
/* The next batch of the stream (epoch after epoch); valid until the next
 * call.  Fails only when no image at all can be decoded. */
int loader_next(struct loader *l, const struct loader_batch **ret, struct bd_err *err);
/* Restarts the stream at the first batch of an epoch (after a checkpoint). */
void loader_seek(struct loader *l, long epoch);
void loader_get_stats(struct loader *l, struct loader_stats *ret);
/* The annotation index (NULL in synthetic mode) and the label mapping:
 * label 1..K is categories[label - 1] of the index, in the file's order (as
 * the reference's label_map). */
const struct coco_index *loader_index(const struct loader *l);
int loader_num_labels(const struct loader *l);  /* K, background excluded */
int32_t loader_label_category(const struct loader *l, int label);

#endif

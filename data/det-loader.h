/* det-loader.h: the input pipeline of a two-stage detector (Mask R-CNN):
 * COCO images to padded float batches with their boxes, labels and masks,
 * on threads, ahead of the training loop.
 *
 *     struct det_loader_config cfg = { .mode = DET_LOADER_TRAIN, .convention = DET_MLPERF,
 *             .images_dir = ".../train2017", .annotations = ".../instances_train2017.json",
 *             .batch_size = 2, .rank = r, .world = n, .seed = s, .threads = 4 };
 *     det_loader_open(&cfg, &l, err);
 *     for (step...) {
 *             const struct det_batch *b;
 *             det_loader_next(l, &b, err);    // valid until the next det_loader_next
 *             b->images (b->n, 3, b->height, b->width); b->samples[i].target ...
 *     }
 *
 * Modes:
 *   DET_LOADER_TRAIN  images with a usable annotation (below), reshuffled
 *                 every epoch from (seed, epoch); resize, horizontal flip with
 *                 probability 0.5, normalisation, padding.
 *   DET_LOADER_EVAL   every image of the file once per pass (those with a
 *                 file and a size), in id order within each orientation
 *                 group (below); no flip.
 *   DET_LOADER_SYNTHETIC  random images of COCO's sizes with random boxes and
 *                 polygons: the shapes of training without touching the disk.
 *
 * The two conventions, DET_MLPERF (maskrcnn_benchmark as MLPerf runs it)
 * and DET_TORCHVISION (torchvision 0.14): sizes, boxes, flips and pixels
 * as det-render.h describes them.
 *
 * Dataset rules (both conventions, as maskrcnn_benchmark's COCODataset and
 * torchvision's references): training drops the images with no annotation
 * or whose boxes all have a width or height <= 1 (crowd annotations count
 * here); crowd objects are left out of the targets; boxes empty after
 * clipping are dropped with their masks; polygons of fewer than 3 points
 * are dropped (an object may so end with none).  Labels are 1..K in the
 * order of category ids (0 is the background), or the category ids
 * themselves with DET_LOADER_CATEGORY_LABELS (torchvision's 91 classes).
 *
 * Masks: polygons as the boxes, per object, copied from the mapped index
 * into the batch (never all decoded at once).  The rare non-crowd RLE mask
 * is decoded, resampled to the resized image by nearest neighbour
 * (F.interpolate's rule, source = floor(dst * in / out)), mirrored when
 * flipped and encoded again as column-major COCO RLE counts (zeros first).
 *
 * Batches: the images of a batch are padded with zeros (after the
 * normalisation) to the batch's largest height and width rounded up to a
 * multiple of 32; each sample carries its resized size, its original size,
 * the scale of each axis, the flip and the image id, so that outputs can be
 * mapped back.
 *
 * Sampling (training): every rank computes the same permutation of the
 * usable images for an epoch, pads it to a multiple of the world size by
 * repeating its start and takes the r-th contiguous share, as
 * maskrcnn_benchmark's DistributedSampler; its GroupedBatchSampler then
 * forms the batches: two groups (height / width < 1, and >= 1), a group's
 * images in sampler order filled into batches of batch_size, batches
 * ordered by their first image's place in the sampler's order, the last
 * batch of a group smaller (drop_uneven False).  So the number of batches
 * differs between epochs and ranks (det_loader_batches_in_epoch).
 * Evaluation: rank r takes the r-th contiguous share of the images (in id
 * order, as the reference sorts them) without padding, grouped the same
 * way (the reference groups its test batches too).
 *
 * Memory: each of the prefetch batches holds batch_size images of the
 * largest padded size of a group (3 x 800 x 1344 floats, 12.9 MB, at
 * 800/1333); objects are copied per batch from the mapped index.
 *
 * Determinism: every random choice for the image at position p of epoch e
 * (in the padded permutation) comes from a generator seeded with (seed, e,
 * p): batches do not depend on the number of threads or on timing.  A
 * training image that cannot be read or decoded (or whose size is not the
 * annotation's) is replaced by the next image of its batch that can, or if
 * none can, by the next one in id order of the same orientation that fits
 * the batch's padded size; in evaluation it comes as a blank image flagged
 * failed.  Which images are bad depends only on the files.
 *
 * Bad data never stops the loader: missing files, unusable sizes, images
 * without usable annotations, unknown categories and RLE masks of another
 * size are counted when the loader opens, corrupt JPEGs (and JPEGs of
 * another size than the annotation's) when they are met; each kind is
 * reported through cfg->warn (the first few, then a count).  Polygons of
 * fewer than 3 points are counted as they are met, without a warning.
 */
#ifndef BD_DATA_DET_LOADER_H
#define BD_DATA_DET_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coco-index.h"
#include "det-render.h"
#include "err.h"

enum det_loader_mode {
        DET_LOADER_TRAIN,
        DET_LOADER_EVAL,
        DET_LOADER_SYNTHETIC,
};

enum det_loader_flags {
        DET_LOADER_NO_FLIP = 1 << 0,
        DET_LOADER_FLIP_ALL = 1 << 1,           /* training: every image flipped */
        DET_LOADER_NO_SHUFFLE = 1 << 2,
        DET_LOADER_NO_GROUPING = 1 << 3,        /* batches in sampler order, orientations mixed */
        DET_LOADER_CATEGORY_LABELS = 1 << 4,    /* labels are the category ids */
        DET_LOADER_NO_FILE_CHECK = 1 << 5,      /* do not stat every image when opening */
};

struct det_loader_config {
        enum det_loader_mode mode;
        enum det_convention convention;
        const char *images_dir;         /* train2017/ */
        const char *annotations;        /* annotations/instances_train2017.json */
        const char *cache_dir;          /* for the index; NULL: see coco_index_open() */
        int batch_size;                 /* images per batch on this rank */
        int min_size, max_size;         /* 0: 800 and 1333 */
        int rank, world;                /* world 0 counts as 1 */
        uint64_t seed;
        int threads;                    /* decoding threads, 0: 1 */
        int prefetch;                   /* batches decoded ahead, 0: 3 */
        unsigned flags;                 /* enum det_loader_flags */
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

enum det_mask_kind {
        DET_MASK_NONE,                  /* the annotation has no segmentation */
        DET_MASK_POLYGONS,
        DET_MASK_RLE,
};

struct det_object {
        double box[4];                  /* x1 y1 x2 y2, pixels of the resized (flipped) image */
        int32_t label;                  /* 1..K (or the category id) */
        uint8_t mask;                   /* enum det_mask_kind */
        uint32_t first, n;              /* polygons: poly_len[first, first + n); RLE: rle[first, first + n) */
        size_t xy_first;                /* polygons: the first's coordinates start at xy[xy_first] */
        int64_t ann_id;
};

/* One image's objects, in the resized (and flipped) image's pixels. */
struct det_target {
        int n;
        struct det_object *objects;     /* (n) */
        uint32_t *poly_len;             /* coordinates (x and y) of each polygon */
        double *xy;                     /* x y x y ..., polygon after polygon */
        uint32_t *rle;                  /* counts, column-major at height x width of the sample */
        size_t n_poly, n_xy, n_rle;
        size_t cap_obj, cap_poly, cap_xy, cap_rle;
};

struct det_sample {
        int64_t image_id;               /* synthetic: the position */
        int32_t height, width;          /* resized, without the padding */
        int32_t orig_height, orig_width;
        double scale_x, scale_y;        /* the ratios the coordinates were scaled by (new / old) */
        uint8_t flip;
        uint8_t failed;                 /* evaluation: unreadable, the image is blank, no objects */
        uint8_t substituted;            /* training: the image planned here was bad */
        struct det_target target;
};

struct det_batch {
        long epoch;                     /* from 0 */
        long index;                     /* batch number within the epoch */
        long batches_in_epoch;          /* on this rank */
        int n;                          /* images, <= batch_size */
        int height, width;              /* padded: multiples of 32 */
        float *images;                  /* (n, 3, height, width), normalised, zeros beyond each image */
        struct det_sample *samples;     /* (n) */
};

struct det_loader_stats {
        long images;                    /* in the annotation file */
        long usable;                    /* images this mode uses, before sharding */
        long missing_files;             /* skipped: image file missing or not a file */
        long bad_sizes;                 /* skipped: no size, over 65535 pixels, or resized to nothing */
        long empty_images;              /* skipped (training): no usable annotation */
        long orphan_annotations;        /* dropped by the index: image_id names no image */
        long unknown_category;          /* objects dropped: category not in the file's categories */
        long crowd;                     /* objects left out of the targets: iscrowd */
        long small_boxes;               /* objects dropped: empty once converted and clipped */
        long short_polygons;            /* polygons dropped: fewer than 3 points (counted as met) */
        long rle_objects;               /* objects whose mask is an RLE */
        long bad_rle;                   /* RLE masks dropped: another size than their image */
        long corrupt_images;            /* distinct images found unreadable while loading */
        long cmyk_images;               /* CMYK JPEGs decoded (as RGB, as Pillow does; in one pass: images) */
        long substitutions;             /* samples that took another image (training) */
};

struct det_loader;

int det_loader_open(const struct det_loader_config *cfg, struct det_loader **ret, struct bd_err *err);
struct det_loader *det_loader_free(struct det_loader *l);
DEFINE_CLEANUP(struct det_loader *, det_loader_free)

/* Batches of an epoch on this rank (they vary in training: see above). */
long det_loader_batches_in_epoch(struct det_loader *l, long epoch);
/* Images of an epoch this rank sees (training: its padded share). */
long det_loader_images_per_epoch(const struct det_loader *l);
/* The next batch of the stream (epoch after epoch); valid until the next
 * call.  Fails only when no image at all can be decoded. */
int det_loader_next(struct det_loader *l, const struct det_batch **ret, struct bd_err *err);
/* Restarts the stream at the first batch of an epoch (after a checkpoint). */
void det_loader_seek(struct det_loader *l, long epoch);
void det_loader_get_stats(struct det_loader *l, struct det_loader_stats *ret);
/* The annotation index (NULL in synthetic mode). */
const struct coco_index *det_loader_index(const struct det_loader *l);
int det_loader_num_labels(const struct det_loader *l);  /* K, background excluded */
/* The category id of a label, -1 when there is none. */
int32_t det_loader_label_category(const struct det_loader *l, int label);

#endif

/* synth.h: a COCO 2017-shaped dataset of coloured shapes that a small
 * detector can learn.
 *
 *     DIR/train2017/000000000001.jpg ...
 *     DIR/val2017/...
 *     DIR/annotations/instances_train2017.json, instances_val2017.json
 *
 * Each class is a (shape, colour) pair: rectangle, ellipse, triangle,
 * diamond, hexagon, star, cross, trapezoid in red, green, blue, yellow,
 * magenta, cyan, orange, purple, white, black (up to 80 classes), with
 * COCO-like category ids that have gaps.  Images are noisy muted gradients
 * of varied size and orientation holding 1..max_objects objects of sizes
 * from small to large (COCO's area ranges), placed with little overlap, most
 * of them rotated.  Annotations carry the shape's polygon, its bbox and area
 * (of the polygon as written); a few images hold a crowd: a cluster of small
 * shapes of one class annotated as one iscrowd region with an uncompressed
 * RLE mask; a few images are empty.
 *
 * The output is a function of the configuration alone (every image has its
 * own generator seeded from (seed, split, index)), whatever the number of
 * threads, and appears atomically: it is written into DIR.tmp.XXXXXX and
 * renamed.
 */
#ifndef BD_DATA_SYNTH_H
#define BD_DATA_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

#define SYNTH_MAX_CLASSES 80

struct synth_config {
        long train_images;
        long val_images;
        int size;               /* the longer side of every image, pixels */
        int classes;            /* 1..SYNTH_MAX_CLASSES */
        uint64_t seed;
        int quality;            /* JPEG quality, 1..100 */
        int max_objects;        /* per image, >= 1 */
        int noise;              /* background noise amplitude, 0..127 */
        double crowd_fraction;  /* images with a crowd region */
        double empty_fraction;  /* images without objects */
        int threads;
        bool force;             /* replace an existing DIR */
        /* called as images are written (from any of the threads, at most
         * one call at a time) and once more with done == total; NULL: none */
        void (*progress)(void *ctx, long done, long total);
        void *progress_ctx;
};

/* Defaults: 1000 train and 200 val images of 320 pixels, 6 classes, seed 1,
 * quality 90, 6 objects, noise 24, 5% crowd, 2% empty, 1 thread. */
void synth_config_init(struct synth_config *c);
/* Writes the dataset; counts what was written. */
struct synth_counts {
        long images, annotations, crowd, empty;
        uint64_t jpeg_bytes;
};
int synth_write(const struct synth_config *c, const char *dir, struct synth_counts *ret, struct bd_err *err);
/* The name and COCO id of class k (0-based). */
void synth_class_name(int k, char *buf, size_t n);
int synth_class_id(int k);

#endif

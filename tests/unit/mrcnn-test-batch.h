/* mrcnn-test-batch.h: a small hand-made Mask R-CNN batch for the network's
 * tests (test-mrcnn-net.c, gpu/test-mrcnn-gpu.c): NIMG random images with a
 * few triangles each, boxes in the convention's coordinates. */
#ifndef BD_MRCNN_TEST_BATCH_H
#define BD_MRCNN_TEST_BATCH_H

#include <stdlib.h>
#include <string.h>

#include "mrcnn-net.h"

#define NIMG 2

/* Two images of 64x64 and 64x48 in a 64x64 batch with 2 and 3 objects. */
static inline void make_batch(struct det_batch *b, int H, int W, int mode)
{
        memset(b, 0, sizeof(*b));
        b->n = NIMG;
        b->height = H;
        b->width = W;
        b->images = malloc(sizeof(float) * NIMG * 3 * (size_t)H * (size_t)W);
        uint64_t s = 12345;
        for (size_t i = 0; i < (size_t)NIMG * 3 * (size_t)H * (size_t)W; i++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                b->images[i] = (float)((double)(s >> 40) / (1 << 24) - 0.5);
        }
        b->samples = calloc(NIMG, sizeof(struct det_sample));
        for (int i = 0; i < NIMG; i++) {
                struct det_sample *sm = &b->samples[i];
                sm->height = H;
                sm->width = i ? W - 16 : W;
                sm->orig_height = 2 * sm->height;
                sm->orig_width = 2 * sm->width;
                sm->scale_x = sm->scale_y = 0.5;
                sm->image_id = 100 + i;
                int G = 2 + i;
                struct det_target *t = &sm->target;
                t->n = G;
                t->objects = calloc((size_t)G, sizeof(struct det_object));
                t->poly_len = calloc((size_t)G, sizeof(uint32_t));
                t->xy = calloc((size_t)G * 6, sizeof(double));
                for (int g = 0; g < G; g++) {
                        struct det_object *o = &t->objects[g];
                        double x1 = 4 + 14 * g, y1 = 6 + 12 * g, w = 18 + 3 * g, h = 22 - 2 * g;
                        /* a triangle in its box */
                        double *xy = t->xy + 6 * g;
                        xy[0] = x1, xy[1] = y1 + h, xy[2] = x1 + w / 2, xy[3] = y1, xy[4] = x1 + w, xy[5] = y1 + h;
                        o->box[0] = x1;
                        o->box[1] = y1;
                        o->box[2] = x1 + w - (mode == DET_CONV_MLPERF);
                        o->box[3] = y1 + h - (mode == DET_CONV_MLPERF);
                        o->label = 1 + (g + i) % 3;
                        o->mask = DET_MASK_POLYGONS;
                        o->first = (uint32_t)g;
                        o->n = 1;
                        o->xy_first = (size_t)g * 6;
                        t->poly_len[g] = 6;
                }
        }
}

static inline void free_batch(struct det_batch *b)
{
        for (int i = 0; i < b->n; i++) {
                free(b->samples[i].target.objects);
                free(b->samples[i].target.poly_len);
                free(b->samples[i].target.xy);
        }
        free(b->samples);
        free(b->images);
}

#endif

/* ssd-data.h: the data loader as the SSD trainer sees it.
 *
 * A thin wrapper of data/loader.h: the training loop sees SSD's batches
 * (images, boxes in [0, 1], labels 1..K), not the loader's structures.
 */
#ifndef BD_SSD_DATA_H
#define BD_SSD_DATA_H

#include <stdint.h>

#include "err.h"

enum ssd_data_mode {
        SSD_DATA_TRAIN,
        SSD_DATA_EVAL,
        SSD_DATA_SYNTHETIC,
};

struct ssd_data_cfg {
        enum ssd_data_mode mode;
        const char *dir;                /* COCO tree: train2017/ or val2017/ and annotations/ */
        int batch_size, image_size;
        int rank, world;
        uint64_t seed;
        int threads;
        long synthetic_images;
        int synthetic_classes;
        void (*warn)(void *ctx, const char *msg);
        void *warn_ctx;
};

#define SSD_DATA_MAX_BOXES 200

struct ssd_batch {
        int n;                          /* images, <= batch_size */
        float *images;                  /* (batch_size, 3, S, S) normalised */
        const float *boxes;             /* (batch_size, SSD_DATA_MAX_BOXES, 4) corners in [0, 1] */
        const int32_t *labels;          /* (batch_size, SSD_DATA_MAX_BOXES) 1..K */
        const int32_t *nboxes;          /* (batch_size) */
        const int64_t *image_ids;       /* (batch_size) */
        const int32_t *sizes;           /* (batch_size, 2) original width, height */
        const uint8_t *failed;          /* (batch_size) evaluation: unreadable image */
};

struct ssd_data;
struct coco_index;

int ssd_data_open(const struct ssd_data_cfg *c, struct ssd_data **ret, struct bd_err *err);
struct ssd_data *ssd_data_free(struct ssd_data *d);
int ssd_data_next(struct ssd_data *d, struct ssd_batch *ret, struct bd_err *err);
void ssd_data_seek(struct ssd_data *d, long epoch);
long ssd_data_batches(const struct ssd_data *d);
long ssd_data_usable(struct ssd_data *d);      /* images this mode uses, all ranks */
int ssd_data_labels(const struct ssd_data *d);  /* K without background */
int32_t ssd_data_category(const struct ssd_data *d, int label);
const struct coco_index *ssd_data_index(const struct ssd_data *d);

#endif

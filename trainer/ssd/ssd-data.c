/* ssd-data.c: the data loader behind ssd-data.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "ssd-data.h"

struct ssd_data {
        struct loader *l;
        char *images, *ann;             /* the loader keeps pointers to them */
        uint8_t *failed;
        int batch;
};

int ssd_data_open(const struct ssd_data_cfg *c, struct ssd_data **ret, struct bd_err *err)
{
        static const enum loader_mode modes[] = { [SSD_DATA_TRAIN] = LOADER_TRAIN, [SSD_DATA_EVAL] = LOADER_EVAL,
                                                  [SSD_DATA_SYNTHETIC] = LOADER_SYNTHETIC };
        const char *split = c->mode == SSD_DATA_EVAL ? "val2017" : "train2017";
        char *images = c->dir ? xasprintf("%s/%s", c->dir, split) : NULL;
        char *ann = c->dir ? xasprintf("%s/annotations/instances_%s.json", c->dir, split) : NULL;
        struct loader_config lc = { .mode = modes[c->mode], .images_dir = images, .annotations = ann,
                                    .batch_size = c->batch_size, .width = c->image_size, .height = c->image_size,
                                    .rank = c->rank, .world = c->world, .seed = c->seed, .threads = c->threads,
                                    .prefetch = c->mode == SSD_DATA_EVAL ? 2 : 0, .max_boxes = SSD_DATA_MAX_BOXES,
                                    .synthetic_images = c->synthetic_images, .synthetic_classes = c->synthetic_classes,
                                    .warn = c->warn, .warn_ctx = c->warn_ctx };
        struct loader *l;
        int r = loader_open(&lc, &l, err);
        if (r < 0) {
                free(images);
                free(ann);
                return r;
        }
        struct ssd_data *d = xcalloc(1, sizeof(*d));
        d->l = l;
        d->images = images;
        d->ann = ann;
        d->batch = c->batch_size;
        d->failed = xcalloc((size_t)c->batch_size, 1);
        *ret = d;
        return 0;
}

struct ssd_data *ssd_data_free(struct ssd_data *d)
{
        if (d) {
                loader_free(d->l);
                free(d->images);
                free(d->ann);
                free(d->failed);
                free(d);
        }
        return NULL;
}

int ssd_data_next(struct ssd_data *d, struct ssd_batch *ret, struct bd_err *err)
{
        const struct loader_batch *b;
        int r = loader_next(d->l, &b, err);
        if (r < 0)
                return r;
        for (int i = 0; i < b->n; i++)
                d->failed[i] = b->samples[i].failed;
        *ret = (struct ssd_batch){ .n = b->n, .images = b->images, .boxes = b->boxes, .labels = b->labels,
                                   .nboxes = b->nboxes, .image_ids = b->image_ids, .sizes = b->sizes,
                                   .failed = d->failed };
        return 0;
}

void ssd_data_seek(struct ssd_data *d, long epoch)
{
        loader_seek(d->l, epoch);
}

long ssd_data_batches(const struct ssd_data *d)
{
        return loader_batches_per_epoch(d->l);
}

long ssd_data_usable(struct ssd_data *d)
{
        struct loader_stats st;
        loader_get_stats(d->l, &st);
        return st.usable;
}

int ssd_data_labels(const struct ssd_data *d)
{
        return loader_num_labels(d->l);
}

int32_t ssd_data_category(const struct ssd_data *d, int label)
{
        return loader_label_category(d->l, label);
}

const struct coco_index *ssd_data_index(const struct ssd_data *d)
{
        return loader_index(d->l);
}

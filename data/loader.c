/* loader.c: the image list, the sample order, one sample (decode, augment,
 * targets) and the batches' memory; ring.c runs the threads that fill them. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "jpeg.h"
#include "loader-util.h"
#include "loader.h"
#include "macro.h"
#include "ring.h"
#include "rng.h"

#define COCO_TRAIN_IMAGES 118287

/* An image this loader may use, with its boxes in [0, 1]. */
struct item {
        uint32_t image;         /* index in the annotation index */
        uint32_t box_first;
        uint32_t nbox;
};

struct worker {
        struct loader *l;
        struct loader_reader rd;
        struct ssd_scratch scratch;
};

struct perm {
        long epoch;             /* -1: empty */
        uint32_t *p;
};

enum warn_kind { W_MISSING, W_EMPTY, W_CATEGORY, W_INVALID, W_OUTSIDE, W_TRUNCATED, W_CORRUPT, _W_MAX };

struct loader {
        struct loader_config cfg;
        struct coco_index *idx;
        struct item *items;
        size_t n_items;
        float *boxes;           /* (total, 4) */
        int32_t *labels;
        long per_rank;          /* samples per epoch on this rank */
        long nb;                /* batches per epoch */
        int n_slots;
        struct loader_batch *slots;     /* the ring's batches */
        struct worker *workers; /* (cfg.threads) */
        struct ring *ring;
        /* all below under the ring's lock */
        struct perm *perms;     /* n_slots + 2 epochs: more than the ring can span */
        int n_perms;
        uint8_t *bad;           /* per item: found corrupt */
        struct loader_stats stats;
        struct loader_warnings warnings;
};

/* ---- warnings ----------------------------------------------------------------------- */

static const char *const warn_what[_W_MAX + 1] = {
        "images with a missing file", "images without a usable box", "boxes of an unknown category",
        "boxes of no size", "boxes outside their image", "images with more boxes than the maximum",
        "corrupt images", NULL,
};

_printf_(3, 4) static void warn(struct loader *l, enum warn_kind k, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        loader_vwarn(&l->warnings, k, fmt, ap);
        va_end(ap);
}

/* ---- opening: the usable images and their boxes ------------------------------------------------- */

static int build_items(struct loader *l, struct bd_err *err)
{
        const struct coco_index *x = l->idx;
        bool train = l->cfg.mode == LOADER_TRAIN;
        int maxb = l->cfg.max_boxes;
        _cleanup_free_ uint8_t *missing = xcalloc(x->n_images + 1, 1);
        if (!(l->cfg.flags & LOADER_NO_FILE_CHECK))
                loader_check_files(x, l->cfg.images_dir, l->cfg.threads, missing);
        l->items = xmalloc((x->n_images + 1) * sizeof(*l->items));
        size_t cap = x->n_anns + 1;
        l->boxes = xmalloc(cap * 4 * sizeof(float));
        l->labels = xmalloc(cap * sizeof(int32_t));
        uint32_t nbox_total = 0;
        struct loader_stats *st = &l->stats;
        st->images = (long)x->n_images;
        st->orphan_annotations = (long)x->header->orphan_anns;
        for (uint32_t i = 0; i < x->n_images; i++) {
                const struct coco_image *im = &x->images[i];
                const char *name = coco_index_str(x, im->file_name);
                if (missing[i]) {
                        st->missing_files++;
                        warn(l, W_MISSING, "image %lld: '%s/%s' is missing, skipped", (long long)im->id,
                             l->cfg.images_dir, name);
                        continue;
                }
                struct item *it = &l->items[l->n_items];
                it->image = i;
                it->box_first = nbox_total;
                it->nbox = 0;
                for (uint32_t k = 0; k < im->ann_count; k++) {
                        const struct coco_ann *a = &x->anns[im->ann_first + k];
                        if (a->label < 0) {
                                st->unknown_category++;
                                warn(l, W_CATEGORY, "annotation %lld: unknown category %d, skipped", (long long)a->id,
                                     a->category_id);
                                continue;
                        }
                        if (a->iscrowd && (l->cfg.flags & LOADER_SKIP_CROWD)) {
                                st->crowd_skipped++;
                                continue;
                        }
                        const double *bb = a->bbox;
                        double x0 = bb[0] / im->width, y0 = bb[1] / im->height;
                        double x1 = (bb[0] + bb[2]) / im->width, y1 = (bb[1] + bb[3]) / im->height;
                        if (!(bb[2] > 0 && bb[3] > 0) || !isfinite(x1) || !isfinite(y1)) {
                                st->invalid_boxes++;
                                warn(l, W_INVALID, "annotation %lld: box of size %gx%g, skipped", (long long)a->id,
                                     bb[2], bb[3]);
                                continue;
                        }
                        if (x0 >= 1 || y0 >= 1 || x1 <= 0 || y1 <= 0) {
                                st->boxes_outside++;
                                warn(l, W_OUTSIDE, "annotation %lld: box [%g, %g, %g, %g] outside its %ux%u image, skipped",
                                     (long long)a->id, bb[0], bb[1], bb[2], bb[3], im->width, im->height);
                                continue;
                        }
                        if (x0 < 0 || y0 < 0 || x1 > 1 || y1 > 1) {
                                st->boxes_clipped++;
                                x0 = fmax(x0, 0);
                                y0 = fmax(y0, 0);
                                x1 = fmin(x1, 1);
                                y1 = fmin(y1, 1);
                        }
                        if ((int)it->nbox >= maxb) {
                                if ((int)it->nbox == maxb) {
                                        st->boxes_truncated++;
                                        warn(l, W_TRUNCATED, "image %lld: more than %d boxes, the rest dropped",
                                             (long long)im->id, maxb);
                                }
                                it->nbox++;     /* counts past the limit once */
                                continue;
                        }
                        float *b = l->boxes + 4 * (size_t)nbox_total;
                        b[0] = (float)x0;
                        b[1] = (float)y0;
                        b[2] = (float)x1;
                        b[3] = (float)y1;
                        l->labels[nbox_total] = a->label + 1;
                        nbox_total++;
                        it->nbox++;
                }
                if ((int)it->nbox > maxb)
                        it->nbox = (uint32_t)maxb;
                if (it->nbox == 0) {
                        /* evaluation keeps them: their detections are all false positives */
                        st->empty_images++;
                        warn(l, W_EMPTY, "image %lld ('%s'): no usable box%s", (long long)im->id, name,
                             train ? ", skipped" : "");
                        if (train)
                                continue;
                }
                l->n_items++;
        }
        st->usable = (long)l->n_items;
        loader_warn_summary(&l->warnings);
        if (l->n_items == 0)
                return bd_err_set(err, -ENODATA,
                                  "%s: nothing usable: %ld images, %ld missing files, %ld without a usable box",
                                  l->cfg.annotations, st->images, st->missing_files, st->empty_images);
        return 0;
}

/* ---- order --------------------------------------------------------------------------------- */

static size_t n_source(const struct loader *l)
{
        return l->cfg.mode == LOADER_SYNTHETIC ? (size_t)l->cfg.synthetic_images : l->n_items;
}

/* The permutation of an epoch (lock held). */
static const uint32_t *perm_of(struct loader *l, long epoch)
{
        /* epochs only increase between seeks (which empty the cache), and the
         * ring spans fewer epochs than there are entries: the oldest entry is
         * never in use */
        struct perm *victim = &l->perms[0];
        for (int i = 0; i < l->n_perms; i++) {
                if (l->perms[i].epoch == epoch)
                        return l->perms[i].p;
                if (l->perms[i].epoch < victim->epoch)
                        victim = &l->perms[i];
        }
        size_t n = n_source(l);
        if (!victim->p)
                victim->p = xmalloc((n + 1) * sizeof(uint32_t));
        bool shuffle = l->cfg.mode == LOADER_TRAIN && !(l->cfg.flags & LOADER_NO_SHUFFLE);
        loader_permutation(victim->p, n, l->cfg.seed, epoch, shuffle);
        victim->epoch = epoch;
        return victim->p;
}

/* Samples in batch b of an epoch on this rank. */
static int batch_count(const struct loader *l, long b)
{
        long left = l->per_rank - b * l->cfg.batch_size;
        return (int)(left < l->cfg.batch_size ? left : l->cfg.batch_size);
}

/* ---- one sample ----------------------------------------------------------------------------------- */

static void clear_targets(const struct loader *l, struct loader_batch *b, int j)
{
        int mb = l->cfg.max_boxes;
        memset(b->boxes + (size_t)j * (size_t)mb * 4, 0, (size_t)mb * 4 * sizeof(float));
        memset(b->labels + (size_t)j * (size_t)mb, 0, (size_t)mb * sizeof(int32_t));
        b->nboxes[j] = 0;
}

/* Decodes and augments item it into sample j of b with generator r. */
static int make_sample(struct worker *w, const struct item *it, struct bd_rng *r, struct loader_batch *b, int j,
                       struct bd_err *err)
{
        struct loader *l = w->l;
        const struct loader_config *c = &l->cfg;
        const struct coco_image *im = &l->idx->images[it->image];
        struct loader_reader *rd = &w->rd;
        struct jpeg_info info;
        int ret = loader_read_jpeg(rd, c->images_dir, coco_index_str(l->idx, im->file_name), &info, err);
        if (ret < 0)
                return ret;
        struct loader_sample *s = &b->samples[j];
        memset(s, 0, sizeof(*s));
        struct ssd_crop crop = { 0, 0, 1, 1 };
        struct ssd_jitter jit = { 0 };
        bool train = c->mode == LOADER_TRAIN;
        const float *boxes = l->boxes + 4 * (size_t)it->box_first;
        if (train) {
                if (!(c->flags & LOADER_NO_CROP))
                        s->crop_mode = (uint8_t)ssd_random_crop(r, boxes, (int)it->nbox, &crop);
                if (!(c->flags & LOADER_NO_FLIP))
                        s->flip = bd_rng_uniform(r) < 0.5;
                if (!(c->flags & LOADER_NO_JITTER))
                        ssd_sample_jitter(r, &jit);
        }
        s->crop = crop;
        int W = info.width, H = info.height;
        int px0 = (int)floor(crop.x0 * W), py0 = (int)floor(crop.y0 * H);
        int px1 = (int)ceil(crop.x1 * W), py1 = (int)ceil(crop.y1 * H);
        struct jpeg_image img;
        ret = jpeg_decode(rd->dec, rd->file, rd->len, &info, px0, py0, px1 > W ? W : px1, py1 > H ? H : py1, c->width,
                          c->height, &img, err);
        if (ret < 0)
                return ret;
        s->scale_num = (uint32_t)img.scale_num;
        double f = img.scale_num / 8.0;
        size_t plane = (size_t)c->width * (size_t)c->height;
        ssd_render(&w->scratch, img.pixels, img.stride, img.width, img.height, crop.x0 * W * f - img.x0,
                   crop.y0 * H * f - img.y0, crop.x1 * W * f - img.x0, crop.y1 * H * f - img.y0, s->flip, &jit,
                   c->norm, c->width, c->height, b->images + (size_t)j * 3 * plane);
        int mb = c->max_boxes;
        clear_targets(l, b, j);
        b->nboxes[j] = ssd_transform_boxes(&crop, s->flip, boxes, l->labels + it->box_first, (int)it->nbox,
                                           b->boxes + (size_t)j * (size_t)mb * 4, b->labels + (size_t)j * (size_t)mb);
        b->image_ids[j] = im->id;
        b->sizes[2 * j] = (int32_t)im->width;
        b->sizes[2 * j + 1] = (int32_t)im->height;
        return 0;
}

static void synthetic_sample(struct loader *l, struct bd_rng *r, struct loader_batch *b, int j, long pos)
{
        const struct loader_config *c = &l->cfg;
        size_t n = 3 * (size_t)c->width * (size_t)c->height;
        float *img = b->images + (size_t)j * n;
        for (size_t i = 0; i + 1 < n; i += 2) {
                uint64_t v = bd_rng_u64(r);
                img[i] = (float)(v & 0xffffffff) * (4.0f / 4294967296.0f) - 2.0f;
                img[i + 1] = (float)(v >> 32) * (4.0f / 4294967296.0f) - 2.0f;
        }
        if (n % 2)
                img[n - 1] = 0;
        clear_targets(l, b, j);
        int mb = c->max_boxes, nbox = 1 + (int)bd_rng_pick(r, 8);
        if (nbox > mb)
                nbox = mb;
        for (int k = 0; k < nbox; k++) {
                float *q = b->boxes + ((size_t)j * (size_t)mb + (size_t)k) * 4;
                double w = bd_rng_range(r, 0.05, 0.8), h = bd_rng_range(r, 0.05, 0.8);
                double x = bd_rng_range(r, 0, 1 - w), y = bd_rng_range(r, 0, 1 - h);
                q[0] = (float)x;
                q[1] = (float)y;
                q[2] = (float)(x + w);
                q[3] = (float)(y + h);
                b->labels[(size_t)j * (size_t)mb + (size_t)k] = 1 + (int32_t)bd_rng_pick(r, (uint64_t)c->synthetic_classes);
        }
        b->nboxes[j] = nbox;
        b->image_ids[j] = pos;
        b->sizes[2 * j] = c->width;
        b->sizes[2 * j + 1] = c->height;
        memset(&b->samples[j], 0, sizeof(b->samples[j]));
}

/* Called with the lock held: records a bad image, warns once per image. */
static void note_bad(struct loader *l, size_t item, const char *why)
{
        if (l->bad[item])
                return;
        l->bad[item] = 1;
        l->stats.corrupt_images++;
        const struct coco_image *im = &l->idx->images[l->items[item].image];
        warn(l, W_CORRUPT, "image %lld ('%s/%s'): %s, skipped", (long long)im->id, l->cfg.images_dir,
             coco_index_str(l->idx, im->file_name), why);
}

/* The ring's fill: sample j of the batch in a slot; fails when no image can be decoded. */
static int fill_sample(void *ctx, int worker, int slot, int j, struct bd_err *err)
{
        struct loader *l = ctx;
        struct worker *w = &l->workers[worker];
        struct loader_batch *b = &l->slots[slot];
        long epoch = b->epoch, bi = b->index;
        long s = bi * l->cfg.batch_size + j;            /* sample on this rank */
        int world = l->cfg.world;
        size_t n = n_source(l);
        long pos = s * world + l->cfg.rank;            /* in the (padded) permutation */
        uint64_t key = bd_rng_mix3(l->cfg.seed, (uint64_t)epoch, (uint64_t)pos);
        struct bd_rng r;
        if (l->cfg.mode == LOADER_SYNTHETIC) {
                bd_rng_seed_key(&r, key);
                synthetic_sample(l, &r, b, j, pos);
                return 0;
        }
        ring_lock(l->ring);
        const uint32_t *perm = perm_of(l, epoch);
        ring_unlock(l->ring);
        struct bd_err why;
        size_t attempts = l->cfg.mode == LOADER_EVAL ? 1 : n;
        for (size_t a = 0; a < attempts; a++) {
                size_t item = perm[((size_t)pos + a) % n];
                bd_rng_seed_key(&r, key + a);
                if (make_sample(w, &l->items[item], &r, b, j, &why) == 0) {
                        b->samples[j].substituted = a > 0;
                        if (a > 0) {
                                ring_lock(l->ring);
                                l->stats.substitutions++;
                                ring_unlock(l->ring);
                        }
                        return 0;
                }
                ring_lock(l->ring);
                note_bad(l, item, why.msg);
                ring_unlock(l->ring);
                if (l->cfg.mode == LOADER_EVAL) {
                        const struct coco_image *im = &l->idx->images[l->items[item].image];
                        size_t plane = 3 * (size_t)l->cfg.width * (size_t)l->cfg.height;
                        memset(b->images + (size_t)j * plane, 0, plane * sizeof(float));
                        clear_targets(l, b, j);
                        memset(&b->samples[j], 0, sizeof(b->samples[j]));
                        b->samples[j].failed = 1;
                        b->image_ids[j] = im->id;
                        b->sizes[2 * j] = (int32_t)im->width;
                        b->sizes[2 * j + 1] = (int32_t)im->height;
                        return 0;
                }
        }
        ring_lock(l->ring);
        int ret = loader_no_image(err, l->cfg.images_dir, l->stats.corrupt_images);
        ring_unlock(l->ring);
        return ret;
}

/* ---- the ring's batches ------------------------------------------------------------------------ */

static int start_batch(void *ctx, int slot, long epoch, long index, long *nb)
{
        struct loader *l = ctx;
        struct loader_batch *b = &l->slots[slot];
        b->epoch = epoch;
        b->index = index;
        b->n = batch_count(l, index);
        for (int k = b->n; k < l->cfg.batch_size; k++) {
                clear_targets(l, b, k);
                b->image_ids[k] = -1;
        }
        *nb = l->nb;
        return b->n;
}

/* Seeking: epochs start again from another one. */
static void drop_perms(void *ctx)
{
        struct loader *l = ctx;
        for (int i = 0; i < l->n_perms; i++)
                l->perms[i].epoch = -1;
}

static const struct ring_ops ring_ops = { .start = start_batch, .fill = fill_sample, .reset = drop_perms };

int loader_open(const struct loader_config *cfg, struct loader **ret, struct bd_err *err)
{
        if (cfg->batch_size <= 0 || cfg->width <= 0 || cfg->height <= 0 || cfg->width > 8192 || cfg->height > 8192)
                return bd_err_set(err, -EINVAL, "loader: batch size and image size must be positive");
        int world = cfg->world > 0 ? cfg->world : 1;
        if (cfg->rank < 0 || cfg->rank >= world)
                return bd_err_set(err, -EINVAL, "loader: rank %d outside a world of %d", cfg->rank, world);
        _cleanup_(loader_freep) struct loader *l = xcalloc(1, sizeof(*l));
        l->cfg = *cfg;
        struct loader_config *c = &l->cfg;
        c->world = world;
        c->threads = c->threads > 0 ? c->threads : 1;
        c->max_boxes = c->max_boxes > 0 ? c->max_boxes : 200;
        c->norm = c->norm ? c->norm : &ssd_imagenet_norm;
        c->synthetic_images = c->synthetic_images > 0 ? c->synthetic_images : COCO_TRAIN_IMAGES;
        c->synthetic_classes = c->synthetic_classes > 0 ? c->synthetic_classes : 80;
        l->warnings = (struct loader_warnings){ .warn = c->warn, .ctx = c->warn_ctx, .max = c->max_warnings,
                                                .what = warn_what };
        l->n_slots = c->prefetch > 0 ? c->prefetch : 3;
        struct ring_config rc = { .name = "loader", .slots = l->n_slots, .one_epoch = c->mode == LOADER_EVAL,
                                  .ops = &ring_ops, .ctx = l, .warnings = &l->warnings };
        l->ring = ring_new(&rc);
        if (c->mode != LOADER_SYNTHETIC) {
                if (!c->images_dir || !c->annotations)
                        return bd_err_set(err, -EINVAL, "loader: images directory and annotations needed");
                int r = coco_index_open(c->annotations, c->cache_dir, 0, &l->idx, err);
                if (r < 0)
                        return r;
                if ((r = build_items(l, err)) < 0)
                        return r;
                l->bad = xcalloc(l->n_items + 1, 1);
        } else {
                l->stats.images = l->stats.usable = c->synthetic_images;
        }
        long n = (long)n_source(l);
        if (c->mode == LOADER_EVAL) {
                l->per_rank = n > c->rank ? (n - c->rank + world - 1) / world : 0;
                l->nb = (l->per_rank + c->batch_size - 1) / c->batch_size;
        } else {
                l->per_rank = (n + world - 1) / world;
                l->nb = (c->flags & LOADER_KEEP_LAST) ? (l->per_rank + c->batch_size - 1) / c->batch_size
                                                      : l->per_rank / c->batch_size;
        }
        if (l->nb == 0)
                return bd_err_set(err, -ENODATA, "loader: %ld images per rank, fewer than a batch of %d", l->per_rank,
                                  c->batch_size);
        l->n_perms = l->n_slots + 2;
        l->perms = xcalloc((size_t)l->n_perms, sizeof(*l->perms));
        for (int i = 0; i < l->n_perms; i++)
                l->perms[i].epoch = -1;
        l->slots = xcalloc((size_t)l->n_slots, sizeof(*l->slots));
        size_t B = (size_t)c->batch_size, mb = (size_t)c->max_boxes;
        for (int i = 0; i < l->n_slots; i++) {
                struct loader_batch *b = &l->slots[i];
                b->images = loader_image_alloc(c->alloc, c->alloc_ctx,
                                               B * 3 * (size_t)c->width * (size_t)c->height * sizeof(float));
                b->boxes = xcalloc(B * mb * 4, sizeof(float));
                b->labels = xcalloc(B * mb, sizeof(int32_t));
                b->nboxes = xcalloc(B, sizeof(int32_t));
                b->image_ids = xcalloc(B, sizeof(int64_t));
                b->sizes = xcalloc(2 * B, sizeof(int32_t));
                b->samples = xcalloc(B, sizeof(struct loader_sample));
        }
        l->workers = xcalloc((size_t)c->threads, sizeof(*l->workers));
        for (int i = 0; i < c->threads; i++) {
                l->workers[i].l = l;
                if (c->mode != LOADER_SYNTHETIC)
                        l->workers[i].rd.dec = jpeg_decoder_new();
        }
        int r = ring_start(l->ring, c->threads, err);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

struct loader *loader_free(struct loader *l)
{
        if (!l)
                return NULL;
        l->ring = ring_free(l->ring);
        if (l->workers)
                for (int i = 0; i < l->cfg.threads; i++) {
                        loader_reader_release(&l->workers[i].rd);
                        ssd_scratch_release(&l->workers[i].scratch);
                }
        free(l->workers);
        for (int i = 0; l->slots && i < l->n_slots; i++) {
                struct loader_batch *b = &l->slots[i];
                if (b->images)
                        loader_image_free(l->cfg.alloc, l->cfg.dealloc, l->cfg.alloc_ctx, b->images);
                free(b->boxes);
                free(b->labels);
                free(b->nboxes);
                free(b->image_ids);
                free(b->sizes);
                free(b->samples);
        }
        free(l->slots);
        for (int i = 0; l->perms && i < l->n_perms; i++)
                free(l->perms[i].p);
        free(l->perms);
        free(l->items);
        free(l->boxes);
        free(l->labels);
        free(l->bad);
        coco_index_free(l->idx);
        free(l);
        return NULL;
}

long loader_batches_per_epoch(const struct loader *l)
{
        return l->nb;
}

long loader_images_per_epoch(const struct loader *l)
{
        return l->per_rank;
}

int loader_next(struct loader *l, const struct loader_batch **ret, struct bd_err *err)
{
        int slot = ring_next(l->ring, err);
        if (slot < 0)
                return slot;
        *ret = &l->slots[slot];
        return 0;
}

void loader_seek(struct loader *l, long epoch)
{
        ring_seek(l->ring, epoch);
}

void loader_get_stats(struct loader *l, struct loader_stats *ret)
{
        ring_lock(l->ring);
        *ret = l->stats;
        for (int i = 0; l->workers && i < l->cfg.threads; i++)
                ret->cmyk_images += jpeg_cmyk_decoded(l->workers[i].rd.dec);
        ring_unlock(l->ring);
}

const struct coco_index *loader_index(const struct loader *l)
{
        return l->idx;
}

int loader_num_labels(const struct loader *l)
{
        return l->idx ? (int)l->idx->n_cats : l->cfg.synthetic_classes;
}

int32_t loader_label_category(const struct loader *l, int label)
{
        if (!l->idx)
                return label;
        if (label < 1 || (size_t)label > l->idx->n_cats)
                return -1;
        return l->idx->cats[label - 1].id;
}

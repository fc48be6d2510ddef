/* det-loader.c: the image list and its filtering, the plan of an epoch
 * (permutation, shares, aspect groups), one sample (decode, render,
 * targets) and the batches' memory.  The rendering and the geometry are in
 * det-render.c, the threads that fill the batches in ring.c. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "det-loader.h"
#include "det-render.h"
#include "jpeg.h"
#include "loader-util.h"
#include "macro.h"
#include "ring.h"
#include "rng.h"

#define COCO_TRAIN_IMAGES 118287
#define MAX_SIDE 65535
#define N_PLANS 3
#define SIZE_TAG 0x73796e7468737a31ull          /* synthetic sizes: "synthsz1" */
#define NOISE_TAG 0x6e6f697365303031ull         /* synthetic pixels: "noise001" */
#define NOISE_LEN 65536

/* An image this loader may use. */
struct item {
        uint32_t image;         /* in the annotation index (synthetic: unused) */
        uint32_t ann_first;     /* its objects: anns[ann_first, ann_first + nann) */
        uint32_t nann;
        int32_t w, h;           /* original */
        int32_t rw, rh;         /* resized */
        uint8_t group;          /* 0: wider than high, 1: the others (height / width >= 1) */
};

/* An image of a batch and its place in the epoch's padded permutation. */
struct member {
        uint32_t item;
        long pos;
};

/* The batches of one epoch on this rank. */
struct plan {
        long epoch;             /* -1: empty */
        long nb;
        struct member *m;       /* the rank's images, batch after batch */
        long *first;            /* (nb + 1): batch b is m[first[b], first[b + 1]) */
        size_t cap;             /* of m and first */
};

/* A batch of the ring. */
struct slot {
        struct det_batch b;
        struct member *m;       /* (batch_size) the images planned */
};

struct worker {
        struct det_loader *l;
        struct loader_reader rd;
        struct det_render_scratch rs;
};

enum warn_kind { W_MISSING, W_SIZE, W_EMPTY, W_CATEGORY, W_RLE, W_CORRUPT, _W_MAX };

struct det_loader {
        struct det_loader_config cfg;
        struct coco_index *idx;
        struct item *items;
        size_t n_items;
        uint32_t *anns;         /* the objects kept, image after image */
        int32_t *label_of;      /* per category of the index */
        int32_t *cat_of_label;  /* (n_labels + 1) */
        int n_labels;
        float *noise;           /* synthetic pixels: NOISE_LEN and a row more */
        size_t image_cap;       /* floats of a batch's images */
        long per_rank;          /* images per epoch on this rank */
        int n_slots;
        struct slot *slots;     /* the ring's batches */
        struct worker *workers; /* (cfg.threads) */
        struct ring *ring;
        uint8_t *bad;           /* per item: found unreadable (atomic) */
        long short_polygons;    /* atomic */
        /* all below under the ring's lock */
        struct plan plans[N_PLANS];
        struct det_loader_stats stats;
        struct loader_warnings warnings;
};

/* ---- warnings ----------------------------------------------------------------------- */

static const char *const warn_what[_W_MAX + 1] = {
        "images with a missing file", "images of an unusable size", "images without a usable annotation",
        "annotations of an unknown category", "RLE masks of another size than their image", "corrupt images", NULL,
};

_printf_(3, 4) static void warn(struct det_loader *l, enum warn_kind k, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        loader_vwarn(&l->warnings, k, fmt, ap);
        va_end(ap);
}

/* ---- opening: the usable images and their objects ------------------------------------------- */

struct cat_order {
        int32_t id;
        uint32_t index;
};

static int cmp_cat(const void *a, const void *b)
{
        const struct cat_order *x = a, *y = b;
        if (x->id != y->id)
                return (x->id > y->id) - (x->id < y->id);
        return (x->index > y->index) - (x->index < y->index);
}

/* Labels 1..K in the order of category ids (or the ids themselves). */
static void build_labels(struct det_loader *l)
{
        const struct coco_index *x = l->idx;
        size_t n = x->n_cats;
        _cleanup_free_ struct cat_order *order = xmalloc((n + 1) * sizeof(*order));
        for (size_t i = 0; i < n; i++)
                order[i] = (struct cat_order){ x->cats[i].id, (uint32_t)i };
        qsort(order, n, sizeof(*order), cmp_cat);
        l->label_of = xcalloc(n + 1, sizeof(int32_t));
        bool ids = l->cfg.flags & DET_LOADER_CATEGORY_LABELS;
        int32_t max_id = 0;
        for (size_t i = 0; i < n; i++) {
                l->label_of[order[i].index] = ids ? order[i].id : (int32_t)i + 1;
                max_id = order[i].id > max_id ? order[i].id : max_id;
        }
        l->n_labels = ids ? max_id : (int)n;
        l->cat_of_label = xcalloc((size_t)l->n_labels + 1, sizeof(int32_t));
        for (int i = 0; i <= l->n_labels; i++)
                l->cat_of_label[i] = -1;
        for (size_t i = 0; i < n; i++)
                if (l->label_of[i] >= 1)
                        l->cat_of_label[l->label_of[i]] = x->cats[i].id;
}

/* The resized size, false when the image cannot be used. */
static bool item_size(const struct det_loader *l, struct item *it, int w, int h)
{
        if (w < 1 || h < 1 || w > MAX_SIDE || h > MAX_SIDE)
                return false;
        det_resize_size(l->cfg.convention, w, h, l->cfg.min_size, l->cfg.max_size, &it->rw, &it->rh);
        it->w = w;
        it->h = h;
        it->group = h >= w;
        return it->rw >= 1 && it->rh >= 1 && it->rw <= MAX_SIDE && it->rh <= MAX_SIDE;
}

static int build_items(struct det_loader *l, struct bd_err *err)
{
        const struct coco_index *x = l->idx;
        const struct det_loader_config *c = &l->cfg;
        bool train = c->mode == DET_LOADER_TRAIN;
        _cleanup_free_ uint8_t *missing = xcalloc(x->n_images + 1, 1);
        if (!(c->flags & DET_LOADER_NO_FILE_CHECK))
                loader_check_files(x, c->images_dir, c->threads, missing);
        build_labels(l);
        l->items = xmalloc((x->n_images + 1) * sizeof(*l->items));
        l->anns = xmalloc((x->n_anns + 1) * sizeof(uint32_t));
        uint32_t kept = 0;
        struct det_loader_stats *st = &l->stats;
        st->images = (long)x->n_images;
        st->orphan_annotations = (long)x->header->orphan_anns;
        /* the reference's order: image ids sorted */
        for (size_t k = 0; k < x->n_images; k++) {
                uint32_t i = x->by_id[k];
                const struct coco_image *im = &x->images[i];
                const char *name = coco_index_str(x, im->file_name);
                if (missing[i]) {
                        st->missing_files++;
                        warn(l, W_MISSING, "image %lld: '%s/%s' is missing, skipped", (long long)im->id, c->images_dir,
                             name);
                        continue;
                }
                struct item *it = &l->items[l->n_items];
                if (!item_size(l, it, (int)im->width, (int)im->height)) {
                        st->bad_sizes++;
                        warn(l, W_SIZE, "image %lld ('%s'): size %ux%u cannot be used, skipped", (long long)im->id,
                             name, im->width, im->height);
                        continue;
                }
                it->image = i;
                it->ann_first = kept;
                bool valid = false;
                for (uint32_t a = 0; a < im->ann_count; a++) {
                        uint32_t ai = im->ann_first + a;
                        const struct coco_ann *an = &x->anns[ai];
                        if (an->label < 0) {
                                st->unknown_category++;
                                warn(l, W_CATEGORY, "annotation %lld: unknown category %d, dropped", (long long)an->id,
                                     an->category_id);
                                continue;
                        }
                        /* maskrcnn_benchmark's has_valid_annotation looks at every
                         * annotation, crowd ones included */
                        valid |= an->bbox[2] > 1 && an->bbox[3] > 1;
                        if (an->iscrowd) {
                                st->crowd++;
                                continue;
                        }
                        float box[4];
                        if (!det_convert_box(c->convention, an->bbox, it->w, it->h, box)) {
                                st->small_boxes++;
                                continue;
                        }
                        if (an->seg_kind == COCO_SEG_RLE) {
                                struct coco_rle r;
                                st->rle_objects++;
                                if (coco_ann_rle(x, an, &r) < 0 || (int)r.width != it->w || (int)r.height != it->h) {
                                        st->bad_rle++;
                                        warn(l, W_RLE, "annotation %lld: RLE mask of %ux%u in a %dx%d image, dropped",
                                             (long long)an->id, r.width, r.height, it->w, it->h);
                                }
                        }
                        l->anns[kept++] = ai;
                }
                it->nann = kept - it->ann_first;
                if (train && !valid) {
                        st->empty_images++;
                        warn(l, W_EMPTY, "image %lld ('%s'): no usable annotation, skipped", (long long)im->id, name);
                        kept = it->ann_first;
                        continue;
                }
                l->n_items++;
        }
        st->usable = (long)l->n_items;
        loader_warn_summary(&l->warnings);
        if (l->n_items == 0)
                return bd_err_set(err, -ENODATA,
                                  "%s: nothing usable: %ld images, %ld missing files, %ld without a usable annotation",
                                  c->annotations, st->images, st->missing_files, st->empty_images);
        return 0;
}

/* Synthetic: COCO's common sizes, one per item from the seed. */
static void build_synthetic(struct det_loader *l)
{
        static const int sizes[][2] = {
                { 640, 480 }, { 480, 640 }, { 640, 427 }, { 427, 640 }, { 640, 640 },
                { 500, 375 }, { 375, 500 }, { 640, 512 }, { 612, 612 }, { 640, 360 },
        };
        const struct det_loader_config *c = &l->cfg;
        l->n_items = (size_t)c->synthetic_images;
        l->items = xcalloc(l->n_items, sizeof(*l->items));
        for (size_t i = 0; i < l->n_items; i++) {
                struct bd_rng r;
                bd_rng_seed_key(&r, bd_rng_mix3(c->seed, i, SIZE_TAG));
                const int *s = sizes[bd_rng_pick(&r, ARRAY_SIZE(sizes))];
                item_size(l, &l->items[i], s[0], s[1]);
                l->items[i].image = (uint32_t)i;
        }
        l->n_labels = c->synthetic_classes;
        l->stats.images = l->stats.usable = (long)l->n_items;
        /* pixel rows are slices of a block of noise: random enough, memcpy's speed */
        int maxw = 0;
        for (size_t i = 0; i < l->n_items; i++)
                maxw = l->items[i].rw > maxw ? l->items[i].rw : maxw;
        l->noise = xmalloc((NOISE_LEN + (size_t)maxw) * sizeof(float));
        struct bd_rng r;
        bd_rng_seed_key(&r, bd_rng_mix3(c->seed, 0, NOISE_TAG));
        bool mlperf = c->convention == DET_MLPERF;
        for (size_t i = 0; i < NOISE_LEN + (size_t)maxw; i++)
                l->noise[i] = mlperf ? (float)bd_rng_range(&r, -123, 153) : (float)bd_rng_range(&r, -2.1, 2.7);
}

/* ---- the plan of an epoch --------------------------------------------------------------------------- */

static void plan_build(struct det_loader *l, long epoch, struct plan *pl)
{
        const struct det_loader_config *c = &l->cfg;
        size_t n = l->n_items;
        long world = c->world, B = c->batch_size;
        bool eval = c->mode == DET_LOADER_EVAL;
        _cleanup_free_ uint32_t *perm = xmalloc((n + 1) * sizeof(uint32_t));
        loader_permutation(perm, n, c->seed, epoch, !eval && !(c->flags & DET_LOADER_NO_SHUFFLE));
        /* DistributedSampler: padded to S * world by repeating the start, the
         * rank's contiguous share; evaluation: no padding */
        long S = ((long)n + world - 1) / world;
        long lo = c->rank * S, hi = lo + S;
        if (eval) {
                lo = lo < (long)n ? lo : (long)n;
                hi = hi < (long)n ? hi : (long)n;
        }
        size_t cap = (size_t)(hi - lo) + 1;
        if (cap > pl->cap) {
                free(pl->m);
                free(pl->first);
                pl->cap = cap;
                pl->m = xmalloc(cap * sizeof(*pl->m));
                pl->first = xmalloc((cap + 1) * sizeof(long));
        }
        /* GroupedBatchSampler: each image joins its group's open batch, a full
         * batch is closed; batches are numbered as they open, which is the
         * order of their first images */
        _cleanup_free_ long *bid = xmalloc(cap * sizeof(long));
        _cleanup_free_ long *cnt = xcalloc(cap, sizeof(long));
        _cleanup_free_ struct member *seq = xmalloc(cap * sizeof(*seq));
        long open[2] = { -1, -1 }, nb = 0, k = 0;
        bool grouping = !(c->flags & DET_LOADER_NO_GROUPING);
        /* a share is at most n long: no image comes twice in it */
        for (long p = lo; p < hi; p++) {
                uint32_t item = perm[(size_t)p % n];
                int g = grouping ? l->items[item].group : 0;
                if (open[g] < 0 || cnt[open[g]] == B)
                        open[g] = nb++;
                cnt[open[g]]++;
                bid[k] = open[g];
                seq[k].item = item;
                seq[k].pos = p;
                k++;
        }
        pl->first[0] = 0;
        for (long b = 0; b < nb; b++)
                pl->first[b + 1] = pl->first[b] + cnt[b];
        for (long b = 0; b < nb; b++)
                cnt[b] = pl->first[b];
        for (long i = 0; i < k; i++)
                pl->m[cnt[bid[i]]++] = seq[i];
        pl->nb = nb;
        pl->epoch = epoch;
}

/* The plan of an epoch (lock held); plans are used only with the lock held. */
static const struct plan *plan_of(struct det_loader *l, long epoch)
{
        struct plan *victim = &l->plans[0];
        for (int i = 0; i < N_PLANS; i++) {
                if (l->plans[i].epoch == epoch)
                        return &l->plans[i];
                if (l->plans[i].epoch < victim->epoch)
                        victim = &l->plans[i];
        }
        plan_build(l, epoch, victim);
        return victim;
}

/* ---- one sample -------------------------------------------------------------------------------------- */

static void target_reset(struct det_target *t)
{
        t->n = 0;
        t->n_poly = t->n_xy = t->n_rle = 0;
}

static void *grow_array(void *p, size_t *cap, size_t need, size_t size)
{
        if (need <= *cap)
                return p;
        size_t c = *cap ? *cap : 16;
        while (c < need)
                c *= 2;
        *cap = c;
        return xrealloc(p, c * size);
}

static struct det_object *target_add(struct det_target *t)
{
        t->objects = grow_array(t->objects, &t->cap_obj, (size_t)t->n + 1, sizeof(*t->objects));
        struct det_object *o = &t->objects[t->n++];
        memset(o, 0, sizeof(*o));
        return o;
}

static uint8_t flip_draw(const struct det_loader_config *c, struct bd_rng *r)
{
        double u = bd_rng_uniform(r);
        if (c->mode == DET_LOADER_EVAL || (c->flags & DET_LOADER_NO_FLIP))
                return 0;
        return (c->flags & DET_LOADER_FLIP_ALL) || u < 0.5;
}

static void sample_header(const struct det_loader *l, const struct item *it, struct det_sample *s, int64_t id)
{
        enum det_convention cv = l->cfg.convention;
        s->image_id = id;
        s->width = it->rw;
        s->height = it->rh;
        s->orig_width = it->w;
        s->orig_height = it->h;
        s->scale_x = det_resize_ratio(cv, it->w, it->rw);
        s->scale_y = det_resize_ratio(cv, it->h, it->rh);
        s->flip = s->failed = s->substituted = 0;
        target_reset(&s->target);
}

/* The objects of an item in its sample's image. */
static void make_target(struct det_loader *l, const struct item *it, struct det_sample *s)
{
        const struct coco_index *x = l->idx;
        enum det_convention cv = l->cfg.convention;
        struct det_target *t = &s->target;
        float rx = (float)s->scale_x, ry = (float)s->scale_y;
        long short_polys = 0;
        for (uint32_t k = 0; k < it->nann; k++) {
                const struct coco_ann *a = &x->anns[l->anns[it->ann_first + k]];
                float box[4];
                det_convert_box(cv, a->bbox, it->w, it->h, box);        /* checked when opening */
                struct det_object *o = target_add(t);
                o->box[0] = (double)(box[0] * rx);
                o->box[1] = (double)(box[1] * ry);
                o->box[2] = (double)(box[2] * rx);
                o->box[3] = (double)(box[3] * ry);
                o->label = l->label_of[a->label];
                o->ann_id = a->id;
                o->mask = DET_MASK_NONE;
                if (s->flip)
                        det_flip_boxes(cv, it->rw, o->box, 1);
                struct coco_polygons P;
                struct coco_rle R;
                if (coco_ann_polygons(x, a, &P) == 0) {
                        o->mask = DET_MASK_POLYGONS;
                        o->first = (uint32_t)t->n_poly;
                        o->xy_first = t->n_xy;
                        const double *xy = P.xy;
                        for (uint32_t p = 0; p < P.n; xy += P.len[p], p++) {
                                uint32_t len = P.len[p];
                                if (len < 6) {
                                        short_polys++;
                                        continue;
                                }
                                t->poly_len = grow_array(t->poly_len, &t->cap_poly, t->n_poly + 1, sizeof(uint32_t));
                                t->xy = grow_array(t->xy, &t->cap_xy, t->n_xy + len, sizeof(double));
                                t->poly_len[t->n_poly++] = len;
                                double *q = t->xy + t->n_xy;
                                for (uint32_t v = 0; v < len; v += 2) {
                                        q[v] = (double)((float)xy[v] * rx);
                                        q[v + 1] = (double)((float)xy[v + 1] * ry);
                                }
                                t->n_xy += len;
                                o->n++;
                        }
                        if (s->flip)
                                det_flip_xy(cv, it->rw, t->xy + o->xy_first, (t->n_xy - o->xy_first) / 2);
                } else if (coco_ann_rle(x, a, &R) == 0 && (int)R.width == it->w && (int)R.height == it->h) {
                        size_t at = t->n_rle;
                        long n = det_rle_resize(R.counts, R.n, it->w, it->h, it->rw, it->rh, s->flip, &t->rle, &t->n_rle,
                                                &t->cap_rle);
                        if (n >= 0) {
                                o->mask = DET_MASK_RLE;
                                o->first = (uint32_t)at;
                                o->n = (uint32_t)n;
                        } else
                                t->n_rle = at;
                }
        }
        if (short_polys)
                __atomic_fetch_add(&l->short_polygons, short_polys, __ATOMIC_RELAXED);
}

/* Decodes item `item` into sample j of batch b with generator r. */
static int make_sample(struct worker *w, struct det_batch *b, int j, uint32_t item, struct bd_rng *r,
                       struct bd_err *err)
{
        struct det_loader *l = w->l;
        const struct det_loader_config *c = &l->cfg;
        const struct item *it = &l->items[item];
        const struct coco_image *im = &l->idx->images[it->image];
        struct loader_reader *rd = &w->rd;
        struct jpeg_info info;
        int ret = loader_read_jpeg(rd, c->images_dir, coco_index_str(l->idx, im->file_name), &info, err);
        if (ret < 0)
                return ret;
        if (info.width != it->w || info.height != it->h)
                return bd_err_set(err, -EBADMSG, "a %dx%d image, the annotations say %dx%d", info.width, info.height,
                                  it->w, it->h);
        struct jpeg_image img;
        if ((ret = jpeg_decode(rd->dec, rd->file, rd->len, &info, 0, 0, 0, 0, 0, 0, &img, err)) < 0)
                return ret;
        struct det_sample *s = &b->samples[j];
        sample_header(l, it, s, im->id);
        s->flip = flip_draw(c, r);
        size_t plane = (size_t)b->width * (size_t)b->height;
        det_render(&w->rs, c->convention, img.pixels, img.stride, img.width, img.height, it->rw, it->rh, s->flip,
                   b->images + (size_t)j * 3 * plane, b->width, b->height);
        make_target(l, it, s);
        return 0;
}

static void synthetic_sample(struct det_loader *l, struct det_batch *b, int j, const struct member *m,
                             struct bd_rng *r)
{
        const struct det_loader_config *c = &l->cfg;
        const struct item *it = &l->items[m->item];
        struct det_sample *s = &b->samples[j];
        sample_header(l, it, s, m->pos);
        s->flip = flip_draw(c, r);
        size_t W = (size_t)b->width, H = (size_t)b->height;
        float *img = b->images + (size_t)j * 3 * W * H;
        for (size_t p = 0; p < 3; p++)
                for (size_t y = 0; y < H; y++) {
                        float *o = img + (p * H + y) * W;
                        size_t n = y < (size_t)it->rh ? (size_t)it->rw : 0;
                        if (n)
                                memcpy(o, l->noise + bd_rng_pick(r, NOISE_LEN), n * sizeof(float));
                        memset(o + n, 0, (W - n) * sizeof(float));
                }
        struct det_target *t = &s->target;
        int nobj = 1 + (int)bd_rng_pick(r, 8);
        for (int k = 0; k < nobj; k++) {
                struct det_object *o = target_add(t);
                double bw = bd_rng_range(r, 8, fmax(9, 0.6 * it->rw)), bh = bd_rng_range(r, 8, fmax(9, 0.6 * it->rh));
                double x0 = bd_rng_range(r, 0, fmax(1, it->rw - bw - 1)), y0 = bd_rng_range(r, 0, fmax(1, it->rh - bh - 1));
                o->box[0] = (float)x0;
                o->box[1] = (float)y0;
                o->box[2] = (float)(x0 + bw);
                o->box[3] = (float)(y0 + bh);
                o->label = 1 + (int32_t)bd_rng_pick(r, (uint64_t)c->synthetic_classes);
                o->ann_id = k;
                /* one polygon: 3 to 12 points on the ellipse in the box */
                uint32_t pts = 3 + (uint32_t)bd_rng_pick(r, 10);
                t->poly_len = grow_array(t->poly_len, &t->cap_poly, t->n_poly + 1, sizeof(uint32_t));
                t->xy = grow_array(t->xy, &t->cap_xy, t->n_xy + 2 * pts, sizeof(double));
                o->mask = DET_MASK_POLYGONS;
                o->first = (uint32_t)t->n_poly;
                o->n = 1;
                o->xy_first = t->n_xy;
                t->poly_len[t->n_poly++] = 2 * pts;
                double cx = x0 + bw / 2, cy = y0 + bh / 2;
                for (uint32_t v = 0; v < pts; v++) {
                        double a = 2 * M_PI * (v + bd_rng_range(r, 0, 0.5)) / pts;
                        t->xy[t->n_xy++] = (float)(cx + bw / 2 * cos(a));
                        t->xy[t->n_xy++] = (float)(cy + bh / 2 * sin(a));
                }
                if (s->flip) {
                        det_flip_boxes(c->convention, it->rw, o->box, 1);
                        det_flip_xy(c->convention, it->rw, t->xy + o->xy_first, pts);
                }
        }
}

/* Called with the lock held: records a bad image, warns once per image. */
static void note_bad(struct det_loader *l, uint32_t item, const char *why)
{
        if (__atomic_load_n(&l->bad[item], __ATOMIC_RELAXED))
                return;
        __atomic_store_n(&l->bad[item], 1, __ATOMIC_RELAXED);
        l->stats.corrupt_images++;
        const struct coco_image *im = &l->idx->images[l->items[item].image];
        warn(l, W_CORRUPT, "image %lld ('%s/%s'): %s, %s", (long long)im->id, l->cfg.images_dir,
             coco_index_str(l->idx, im->file_name), why, l->cfg.mode == DET_LOADER_EVAL ? "blank" : "skipped");
}

/* Tries item as sample j; false (the item marked bad) when it cannot be read. */
static bool try_item(struct worker *w, struct det_batch *b, int j, uint32_t item, uint64_t key)
{
        struct det_loader *l = w->l;
        if (__atomic_load_n(&l->bad[item], __ATOMIC_RELAXED))
                return false;
        struct bd_rng r;
        struct bd_err err;
        bd_rng_seed_key(&r, key);
        if (make_sample(w, b, j, item, &r, &err) == 0)
                return true;
        ring_lock(l->ring);
        note_bad(l, item, err.msg);
        ring_unlock(l->ring);
        return false;
}

/* The ring's fill: sample j of the batch in a slot; fails when no image can be decoded. */
static int fill_sample(void *ctx, int worker, int slot, int j, struct bd_err *err)
{
        struct det_loader *l = ctx;
        struct worker *w = &l->workers[worker];
        struct slot *sl = &l->slots[slot];
        struct det_batch *b = &sl->b;
        const struct member *m = &sl->m[j];
        uint64_t key = bd_rng_mix3(l->cfg.seed, (uint64_t)b->epoch, (uint64_t)m->pos);
        if (l->cfg.mode == DET_LOADER_SYNTHETIC) {
                struct bd_rng r;
                bd_rng_seed_key(&r, key);
                synthetic_sample(l, b, j, m, &r);
                return 0;
        }
        uint64_t a = 0;
        if (try_item(w, b, j, m->item, key))
                return 0;
        const struct item *it = &l->items[m->item];
        if (l->cfg.mode == DET_LOADER_EVAL) {
                struct det_sample *s = &b->samples[j];
                sample_header(l, it, s, l->idx->images[it->image].id);
                s->failed = 1;
                size_t plane = (size_t)b->width * (size_t)b->height;
                memset(b->images + (size_t)j * 3 * plane, 0, 3 * plane * sizeof(float));
                return 0;
        }
        /* training: the batch's other images first (they fit), then the next
         * ones in id order of the same orientation that fit the padded size */
        bool ok = false;
        for (int t = 1; t < b->n && !ok; t++)
                ok = try_item(w, b, j, sl->m[(j + t) % b->n].item, key + ++a);
        bool grouping = !(l->cfg.flags & DET_LOADER_NO_GROUPING);
        for (size_t t = 1; t < l->n_items && !ok; t++) {
                uint32_t cand = (uint32_t)((m->item + t) % l->n_items);
                const struct item *ci = &l->items[cand];
                if ((grouping && ci->group != it->group) || ci->rw > b->width || ci->rh > b->height)
                        continue;
                ok = try_item(w, b, j, cand, key + ++a);
        }
        if (!ok) {
                ring_lock(l->ring);
                int r = loader_no_image(err, l->cfg.images_dir, l->stats.corrupt_images);
                ring_unlock(l->ring);
                return r;
        }
        b->samples[j].substituted = 1;
        ring_lock(l->ring);
        l->stats.substitutions++;
        ring_unlock(l->ring);
        return 0;
}

/* ---- the ring's batches ------------------------------------------------------------------------- */

static long round_up(long v, long m)
{
        return (v + m - 1) / m * m;
}

/* Lock held: the slot takes batch `index` of `epoch`. */
static int start_batch(void *ctx, int slot, long epoch, long index, long *nb)
{
        struct det_loader *l = ctx;
        struct slot *sl = &l->slots[slot];
        const struct plan *pl = plan_of(l, epoch);
        struct det_batch *b = &sl->b;
        b->epoch = epoch;
        b->index = index;
        b->batches_in_epoch = pl->nb;
        long f = pl->first[index];
        b->n = (int)(pl->first[index + 1] - f);
        int H = 0, W = 0;
        for (int j = 0; j < b->n; j++) {
                sl->m[j] = pl->m[f + j];
                const struct item *it = &l->items[sl->m[j].item];
                H = it->rh > H ? it->rh : H;
                W = it->rw > W ? it->rw : W;
        }
        b->height = (int)round_up(H, 32);
        b->width = (int)round_up(W, 32);
        *nb = pl->nb;
        return b->n;
}

static const struct ring_ops ring_ops = { .start = start_batch, .fill = fill_sample };

/* Floats of a batch's images: batch_size of the largest padded image of a
 * group (of all images without grouping). */
static size_t image_capacity(const struct det_loader *l)
{
        long H[2] = { 0, 0 }, W[2] = { 0, 0 };
        bool grouping = !(l->cfg.flags & DET_LOADER_NO_GROUPING);
        for (size_t i = 0; i < l->n_items; i++) {
                const struct item *it = &l->items[i];
                int g = grouping ? it->group : 0;
                H[g] = it->rh > H[g] ? it->rh : H[g];
                W[g] = it->rw > W[g] ? it->rw : W[g];
        }
        size_t most = 0;
        for (int g = 0; g < 2; g++) {
                size_t a = (size_t)round_up(H[g], 32) * (size_t)round_up(W[g], 32);
                most = a > most ? a : most;
        }
        return (size_t)l->cfg.batch_size * 3 * most;
}

int det_loader_open(const struct det_loader_config *cfg, struct det_loader **ret, struct bd_err *err)
{
        if (cfg->batch_size <= 0)
                return bd_err_set(err, -EINVAL, "det loader: the batch size must be positive");
        if (cfg->min_size < 0 || cfg->max_size < 0 || cfg->min_size > 8192 || cfg->max_size > 8192)
                return bd_err_set(err, -EINVAL, "det loader: sizes must be in 1..8192");
        if (cfg->convention != DET_MLPERF && cfg->convention != DET_TORCHVISION)
                return bd_err_set(err, -EINVAL, "det loader: unknown convention %d", (int)cfg->convention);
        int world = cfg->world > 0 ? cfg->world : 1;
        if (cfg->rank < 0 || cfg->rank >= world)
                return bd_err_set(err, -EINVAL, "det loader: rank %d outside a world of %d", cfg->rank, world);
        _cleanup_(det_loader_freep) struct det_loader *l = xcalloc(1, sizeof(*l));
        l->cfg = *cfg;
        struct det_loader_config *c = &l->cfg;
        c->world = world;
        c->threads = c->threads > 0 ? c->threads : 1;
        c->min_size = c->min_size > 0 ? c->min_size : 800;
        c->max_size = c->max_size > 0 ? c->max_size : 1333;
        c->synthetic_images = c->synthetic_images > 0 ? c->synthetic_images : COCO_TRAIN_IMAGES;
        c->synthetic_classes = c->synthetic_classes > 0 ? c->synthetic_classes : 80;
        l->warnings = (struct loader_warnings){ .warn = c->warn, .ctx = c->warn_ctx, .max = c->max_warnings,
                                                .what = warn_what };
        l->n_slots = c->prefetch > 0 ? c->prefetch : 3;
        struct ring_config rc = { .name = "det loader", .slots = l->n_slots, .one_epoch = c->mode == DET_LOADER_EVAL,
                                  .ops = &ring_ops, .ctx = l, .warnings = &l->warnings };
        l->ring = ring_new(&rc);
        for (int i = 0; i < N_PLANS; i++)
                l->plans[i].epoch = -1;
        if (c->mode != DET_LOADER_SYNTHETIC) {
                if (!c->images_dir || !c->annotations)
                        return bd_err_set(err, -EINVAL, "det loader: images directory and annotations needed");
                int r = coco_index_open(c->annotations, c->cache_dir, 0, &l->idx, err);
                if (r < 0)
                        return r;
                if ((r = build_items(l, err)) < 0)
                        return r;
        } else
                build_synthetic(l);
        l->bad = xcalloc(l->n_items + 1, 1);
        long n = (long)l->n_items, S = (n + world - 1) / world;
        if (c->mode == DET_LOADER_EVAL)
                l->per_rank = n > (long)c->rank * S ? (n - c->rank * S < S ? n - c->rank * S : S) : 0;
        else
                l->per_rank = S;
        if (l->per_rank == 0)
                return bd_err_set(err, -ENODATA, "det loader: no image for rank %d of %d (%ld images)", c->rank, world,
                                  n);
        l->slots = xcalloc((size_t)l->n_slots, sizeof(*l->slots));
        l->image_cap = image_capacity(l);
        size_t B = (size_t)c->batch_size;
        for (int i = 0; i < l->n_slots; i++) {
                struct slot *sl = &l->slots[i];
                sl->b.images = loader_image_alloc(c->alloc, c->alloc_ctx, l->image_cap * sizeof(float));
                sl->b.samples = xcalloc(B, sizeof(struct det_sample));
                sl->m = xcalloc(B, sizeof(struct member));
        }
        l->workers = xcalloc((size_t)c->threads, sizeof(*l->workers));
        for (int i = 0; i < c->threads; i++) {
                l->workers[i].l = l;
                if (c->mode != DET_LOADER_SYNTHETIC)
                        l->workers[i].rd.dec = jpeg_decoder_new();
        }
        int r = ring_start(l->ring, c->threads, err);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

static void target_free(struct det_target *t)
{
        free(t->objects);
        free(t->poly_len);
        free(t->xy);
        free(t->rle);
}

struct det_loader *det_loader_free(struct det_loader *l)
{
        if (!l)
                return NULL;
        l->ring = ring_free(l->ring);
        if (l->workers)
                for (int i = 0; i < l->cfg.threads; i++) {
                        struct worker *w = &l->workers[i];
                        loader_reader_release(&w->rd);
                        det_render_scratch_release(&w->rs);
                }
        free(l->workers);
        for (int i = 0; l->slots && i < l->n_slots; i++) {
                struct slot *sl = &l->slots[i];
                if (sl->b.images)
                        loader_image_free(l->cfg.alloc, l->cfg.dealloc, l->cfg.alloc_ctx, sl->b.images);
                for (int j = 0; sl->b.samples && j < l->cfg.batch_size; j++)
                        target_free(&sl->b.samples[j].target);
                free(sl->b.samples);
                free(sl->m);
        }
        free(l->slots);
        for (int i = 0; i < N_PLANS; i++) {
                free(l->plans[i].m);
                free(l->plans[i].first);
        }
        free(l->items);
        free(l->anns);
        free(l->label_of);
        free(l->cat_of_label);
        free(l->noise);
        free(l->bad);
        coco_index_free(l->idx);
        free(l);
        return NULL;
}

long det_loader_batches_in_epoch(struct det_loader *l, long epoch)
{
        ring_lock(l->ring);
        long nb = plan_of(l, epoch)->nb;
        ring_unlock(l->ring);
        return nb;
}

long det_loader_images_per_epoch(const struct det_loader *l)
{
        return l->per_rank;
}

int det_loader_next(struct det_loader *l, const struct det_batch **ret, struct bd_err *err)
{
        int slot = ring_next(l->ring, err);
        if (slot < 0)
                return slot;
        *ret = &l->slots[slot].b;
        return 0;
}

void det_loader_seek(struct det_loader *l, long epoch)
{
        ring_seek(l->ring, epoch);
}

void det_loader_get_stats(struct det_loader *l, struct det_loader_stats *ret)
{
        ring_lock(l->ring);
        *ret = l->stats;
        for (int i = 0; l->workers && i < l->cfg.threads; i++)
                ret->cmyk_images += jpeg_cmyk_decoded(l->workers[i].rd.dec);
        ret->short_polygons = __atomic_load_n(&l->short_polygons, __ATOMIC_RELAXED);
        ring_unlock(l->ring);
}

const struct coco_index *det_loader_index(const struct det_loader *l)
{
        return l->idx;
}

int det_loader_num_labels(const struct det_loader *l)
{
        return l->n_labels;
}

int32_t det_loader_label_category(const struct det_loader *l, int label)
{
        if (!l->idx)
                return label >= 1 && label <= l->n_labels ? label : -1;
        if (label < 1 || label > l->n_labels)
                return -1;
        return l->cat_of_label[label];
}

/* fuzz-coco.h: a loaded COCO index walked as its users walk it, for the
 * harnesses of the JSON (fuzz-coco-json.c) and of the index file
 * (fuzz-coco-index.c).
 *
 * Checked (coco-index.h's invariants after a successful open): images'
 * annotation ranges partition the annotations and hold their own, labels
 * name a category or are -1, strings end inside the string table, the id
 * order finds every image, and the segmentation of every annotation is
 * returned inside the segmentation section or refused with -EBADMSG.  Each
 * mask is then made as the evaluation makes it (coco_ann_mask()); polygons
 * only where their vertices lie within FUZZ_COCO_COORD_MAX pixels of the
 * origin: rasterising follows every edge at a fifth of a pixel, so a vertex
 * far away costs memory and time in proportion (tests/fuzz/README.md).
 */
#ifndef BD_FUZZ_COCO_H
#define BD_FUZZ_COCO_H

#include <errno.h>
#include <math.h>
#include <string.h>

#include "coco-index.h"
#include "fuzz.h"
#include "mask.h"

#define FUZZ_COCO_COORD_MAX 4096.0
#define FUZZ_COCO_EDGES_MAX 4096

/* Whether rasterising the polygons stays cheap. */
static inline bool fuzz_coco_polygons_small(const struct coco_polygons *p)
{
        uint64_t total = 0;
        for (uint32_t i = 0; i < p->n; i++)
                total += p->len[i];
        if (total > 2 * FUZZ_COCO_EDGES_MAX)
                return false;
        for (uint64_t i = 0; i < total; i++)
                if (!(fabs(p->xy[i]) <= FUZZ_COCO_COORD_MAX))
                        return false;
        return true;
}

static inline void fuzz_coco_check_mask(const struct coco_index *x, const struct coco_ann *a, size_t i)
{
        const struct coco_image *im = &x->images[a->image];
        struct coco_polygons p = { 0 };
        struct rle r = RLE_INIT;
        if (a->seg_kind == COCO_SEG_POLYGONS && coco_ann_polygons(x, a, &p) == 0 && !fuzz_coco_polygons_small(&p))
                return;
        int e = coco_ann_mask(x, a, &r);
        FUZZ_CHECK(e == 0 || e == -EBADMSG, "annotation %zu: coco_ann_mask returned %d", i, e);
        /* no polygon at all merges nothing: a 0 x 0 mask, as pycocotools */
        if (e == 0 && a->seg_kind == COCO_SEG_POLYGONS && p.n && (uint64_t)im->height * im->width < UINT32_MAX)
                FUZZ_CHECK(r.h == im->height && r.w == im->width && rle_check(&r) == 0,
                           "annotation %zu: its polygons give a %ux%u mask that does not cover %ux%u", i, r.h, r.w,
                           im->height, im->width);
        rle_free(&r);
}

/* built: the index was made here from JSON, so labels are exact too. */
static inline void fuzz_coco_walk(const struct coco_index *x, bool built)
{
        const uint32_t *segs_end = x->segs + x->seg_words;
        uint64_t next = 0;
        for (size_t i = 0; i < x->n_images; i++) {
                const struct coco_image *im = &x->images[i];
                FUZZ_CHECK(im->ann_first == next && (uint64_t)im->ann_first + im->ann_count <= x->n_anns,
                           "image %zu: annotations %u+%u", i, im->ann_first, im->ann_count);
                next += im->ann_count;
                FUZZ_CHECK(im->file_name < x->strings_size &&
                           memchr(coco_index_str(x, im->file_name), '\0', x->strings_size - im->file_name),
                           "image %zu: its file name leaves the string table", i);
                FUZZ_CHECK(coco_index_find_image(x, im->id) == (long)i, "image %zu: not found by its id", i);
        }
        FUZZ_CHECK(next == x->n_anns, "the images hold %llu of %zu annotations", (unsigned long long)next,
                   x->n_anns);
        for (size_t i = 0; i < x->n_cats; i++)
                FUZZ_CHECK(x->cats[i].name < x->strings_size && x->cats[i].supercategory < x->strings_size,
                           "category %zu: a name leaves the string table", i);
        for (size_t i = 0; i < x->n_anns; i++) {
                const struct coco_ann *a = &x->anns[i];
                struct coco_polygons p;
                struct coco_rle rle;
                FUZZ_CHECK(a->image < x->n_images && i >= x->images[a->image].ann_first &&
                           i < (size_t)x->images[a->image].ann_first + x->images[a->image].ann_count,
                           "annotation %zu is not its image's", i);
                FUZZ_CHECK(a->label >= -1 && a->label < (int64_t)x->n_cats, "annotation %zu: label %d", i,
                           a->label);
                if (built)
                        FUZZ_CHECK(a->label == coco_index_find_category(x, a->category_id),
                                   "annotation %zu: label %d for category %d", i, a->label, a->category_id);
                int e = coco_ann_polygons(x, a, &p);
                FUZZ_CHECK(e == 0 || e == -ENOENT || (e == -EBADMSG && !built), "annotation %zu: polygons: %d", i,
                           e);
                FUZZ_CHECK((e == -ENOENT) == (a->seg_kind != COCO_SEG_POLYGONS), "annotation %zu: kind %d, polygons %d",
                           i, a->seg_kind, e);
                if (e == 0) {
                        uint64_t total = 0;
                        for (uint32_t k = 0; k < p.n; k++)
                                total += p.len[k];
                        FUZZ_CHECK(p.len >= x->segs && p.len + p.n <= segs_end &&
                                   (const uint32_t *)(const void *)p.xy >= p.len + p.n &&
                                   (uint64_t)(segs_end - (const uint32_t *)(const void *)p.xy) >= 2 * total,
                                   "annotation %zu: polygons outside the segmentation section", i);
                }
                e = coco_ann_rle(x, a, &rle);
                FUZZ_CHECK(e == 0 || e == -ENOENT || (e == -EBADMSG && !built), "annotation %zu: RLE: %d", i, e);
                if (e == 0) {
                        FUZZ_CHECK(rle.counts >= x->segs && rle.counts <= segs_end &&
                                   (uint64_t)(segs_end - rle.counts) >= rle.n,
                                   "annotation %zu: RLE counts outside the segmentation section", i);
                        if (built) {
                                struct rle r = RLE_INIT;
                                rle_set(&r, rle.height, rle.width, rle.counts, rle.n);
                                FUZZ_CHECK(rle_check(&r) == 0, "annotation %zu: RLE counts do not cover its size", i);
                                rle_free(&r);
                        }
                }
                fuzz_coco_check_mask(x, a, i);
        }
        for (size_t i = 0; i < x->n_images; i++)
                FUZZ_CHECK(x->by_id[i] < x->n_images, "by_id[%zu] = %u", i, x->by_id[i]);
}

#endif

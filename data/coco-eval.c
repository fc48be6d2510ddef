/* coco-eval.c: per-image matching, accumulation and the 12 summary numbers,
 * following pycocotools/cocoeval.py (evaluateImg, accumulate, summarize). */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "coco-eval.h"
#include "json-stream.h"
#include "macro.h"
#include "mask.h"
#include "parallel.h"

#define T_THRS 10               /* IoU thresholds */
#define R_PTS 101               /* recall points */
#define A_RNG 4                 /* area ranges: all, small, medium, large */
#define M_DETS 3                /* max detections: 1, 10, 100 */
#define MAX_DET 100

static const int max_dets[M_DETS] = { 1, 10, 100 };
static const double area_rng[A_RNG][2] = {
        { 0.0, 1e10 }, { 0.0, 1024.0 }, { 1024.0, 9216.0 }, { 9216.0, 1e10 },
};

const char *const coco_eval_stat_names[COCO_EVAL_NSTATS] = {
        "AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl",
};

double coco_eval_iou_threshold(int t)
{
        /* np.linspace(.5, 0.95, 10): arange * ((0.95 - 0.5) / 9) + 0.5, last = stop */
        if (t == T_THRS - 1)
                return 0.95;
        return (double)t * ((0.95 - 0.5) / 9) + 0.5;
}

double coco_eval_recall_point(int r)
{
        if (r == R_PTS - 1)
                return 1.0;
        return (double)r * ((1.0 - 0.0) / 100) + 0.0;
}

/* One (category, area range) of one image: what accumulate() needs of
 * evaluateImg()'s result.  In memory and on the wire:
 *     struct entry_head, double scores[d], uint8_t flags[T_THRS][d], padding to 8 */
struct entry_head {
        uint32_t k;             /* category index (increasing id order) */
        uint32_t a;             /* area range */
        uint32_t npig;          /* ground truth not ignored */
        uint32_t d;             /* detections, score order, at most MAX_DET */
};
enum { F_MATCHED = 1, F_IGNORED = 2 };

static size_t entry_size(uint32_t d)
{
        size_t n = sizeof(struct entry_head) + 8 * (size_t)d + T_THRS * (size_t)d;
        return (n + 7) & ~(size_t)7;
}

struct img_result {
        uint8_t done;
        uint32_t len;           /* bytes of entries */
        uint8_t *blob;          /* entries, increasing (k, a) */
};

#define NO_MASK UINT64_MAX

struct coco_eval {
        const struct coco_index *gt;
        enum coco_eval_type type;
        int threads;
        size_t n_img;           /* images, in increasing id order */
        size_t n_cat;
        int32_t *cat_k;         /* label (JSON order) -> k (increasing id order) */
        int32_t *k_cat_id;      /* k -> category id */
        struct coco_det *dets;
        uint32_t *det_img;      /* sorted-order image position of each detection */
        uint32_t *det_k;
        double *det_score;      /* the scores again, for sorting */
        double *det_area;       /* what the area ranges see: loadRes' 'area' */
        uint64_t *det_mask;     /* offset of the mask's compressed counts in masks, or NO_MASK */
        double *det_mbox;       /* the mask's box (rle_to_bbox), 4 per detection */
        struct bd_buf masks;    /* NUL-terminated compressed counts, one after the other */
        size_t n_dets, cap_dets;
        /* detections grouped by (image, category, order added): valid when grouped */
        uint32_t *group;
        size_t *img_first;      /* n_img + 1 */
        int grouped;
        struct img_result *res;
};

static int cmp_cat(const void *x, const void *y, void *ctx)
{
        const struct coco_index *gt = ctx;
        int32_t a = gt->cats[*(const uint32_t *)x].id, b = gt->cats[*(const uint32_t *)y].id;
        return (a > b) - (a < b);
}

struct coco_eval *coco_eval_new(const struct coco_index *gt, int threads)
{
        struct coco_eval *ev = xcalloc(1, sizeof(*ev));
        ev->gt = gt;
        ev->threads = threads > 0 ? threads : 1;
        ev->n_img = gt->n_images;
        ev->n_cat = gt->n_cats;
        ev->cat_k = xcalloc(ev->n_cat + 1, sizeof(int32_t));
        ev->k_cat_id = xcalloc(ev->n_cat + 1, sizeof(int32_t));
        _cleanup_free_ uint32_t *ord = xcalloc(ev->n_cat + 1, sizeof(uint32_t));
        for (size_t i = 0; i < ev->n_cat; i++)
                ord[i] = (uint32_t)i;
        qsort_r(ord, ev->n_cat, sizeof(*ord), cmp_cat, (void *)gt);
        for (size_t k = 0; k < ev->n_cat; k++) {
                ev->cat_k[ord[k]] = (int32_t)k;
                ev->k_cat_id[k] = gt->cats[ord[k]].id;
        }
        ev->res = xcalloc(ev->n_img + 1, sizeof(*ev->res));
        buf_init(&ev->masks);
        return ev;
}

struct coco_eval *coco_eval_new_type(const struct coco_index *gt, enum coco_eval_type type, int threads)
{
        struct coco_eval *ev = coco_eval_new(gt, threads);
        ev->type = type;
        return ev;
}

static void clear_results(struct coco_eval *ev)
{
        for (size_t i = 0; i < ev->n_img; i++) {
                free(ev->res[i].blob);
                ev->res[i] = (struct img_result){ 0 };
        }
}

void coco_eval_set_type(struct coco_eval *ev, enum coco_eval_type type)
{
        if (ev->type != type)
                clear_results(ev);
        ev->type = type;
}

enum coco_eval_type coco_eval_get_type(const struct coco_eval *ev)
{
        return ev->type;
}

const char *coco_eval_type_name(enum coco_eval_type type)
{
        return type == COCO_EVAL_SEGM ? "segm" : "bbox";
}

struct coco_eval *coco_eval_free(struct coco_eval *ev)
{
        if (!ev)
                return NULL;
        clear_results(ev);
        free(ev->res);
        free(ev->cat_k);
        free(ev->k_cat_id);
        free(ev->dets);
        free(ev->det_img);
        free(ev->det_k);
        free(ev->det_score);
        free(ev->det_area);
        free(ev->det_mask);
        free(ev->det_mbox);
        buf_release(&ev->masks);
        free(ev->group);
        free(ev->img_first);
        free(ev);
        return NULL;
}

size_t coco_eval_n_dets(const struct coco_eval *ev)
{
        return ev->n_dets;
}

/* Position of an image id in increasing id order, -1 when unknown. */
static long image_pos(const struct coco_index *gt, int64_t id)
{
        size_t lo = 0, hi = gt->n_images;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int64_t v = gt->images[gt->by_id[mid]].id;
                if (v == id)
                        return (long)mid;
                if (v < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

/* One detection: its mask (NULL: none; then segm evaluation rasterises its
 * box, as loadRes' bbox branch does), the mask's compressed string when the
 * caller has it (NULL: made here), and its area for the area ranges (< 0:
 * the mask's).  box_given false: the detection's box is the mask's. */
static int add_one(struct coco_eval *ev, const struct coco_det *d, bool box_given, const struct rle *mask,
                   const char *str, double area, const char *where, struct bd_err *err)
{
        size_t i = ev->n_dets;
        long p = image_pos(ev->gt, d->image_id);
        if (p < 0)
                return bd_err_set(err, -EINVAL, "%sdetection %zu: unknown image id %lld", where, i,
                                  (long long)d->image_id);
        int c = coco_index_find_category(ev->gt, d->category_id);
        if (c < 0)
                return bd_err_set(err, -EINVAL, "%sdetection %zu: unknown category id %d", where, i, d->category_id);
        for (int j = 0; j < 4; j++)
                if (!isfinite(d->bbox[j]))
                        return bd_err_set(err, -EINVAL, "%sdetection %zu: bbox is not finite", where, i);
        if (d->bbox[2] < 0 || d->bbox[3] < 0)
                return bd_err_set(err, -EINVAL, "%sdetection %zu: negative bbox size %gx%g", where, i, d->bbox[2],
                                  d->bbox[3]);
        if (!isfinite(d->score))
                return bd_err_set(err, -EINVAL, "%sdetection %zu: score is %s", where, i,
                                  isnan(d->score) ? "NaN" : "infinite");
        if (mask) {
                const struct coco_image *im = &ev->gt->images[ev->gt->by_id[p]];
                if (mask->h != im->height || mask->w != im->width)
                        return bd_err_set(err, -EINVAL,
                                          "%sdetection %zu: segmentation size %ux%u (height x width) differs from "
                                          "image %lld's %ux%u", where, i, mask->h, mask->w, (long long)d->image_id,
                                          im->height, im->width);
                if (rle_check(mask) < 0)
                        return bd_err_set(err, -EINVAL,
                                          "%sdetection %zu: segmentation counts do not cover its %ux%u pixels", where,
                                          i, mask->h, mask->w);
        }
        if (ev->n_dets == ev->cap_dets) {
                ev->cap_dets = ev->cap_dets ? 2 * ev->cap_dets : 4096;
                ev->dets = xrealloc(ev->dets, ev->cap_dets * sizeof(*ev->dets));
                ev->det_img = xrealloc(ev->det_img, ev->cap_dets * sizeof(*ev->det_img));
                ev->det_k = xrealloc(ev->det_k, ev->cap_dets * sizeof(*ev->det_k));
                ev->det_score = xrealloc(ev->det_score, ev->cap_dets * sizeof(*ev->det_score));
                ev->det_area = xrealloc(ev->det_area, ev->cap_dets * sizeof(*ev->det_area));
                ev->det_mask = xrealloc(ev->det_mask, ev->cap_dets * sizeof(*ev->det_mask));
                ev->det_mbox = xrealloc(ev->det_mbox, ev->cap_dets * 4 * sizeof(*ev->det_mbox));
        }
        ev->dets[i] = *d;
        ev->det_mask[i] = NO_MASK;
        if (mask) {
                _cleanup_free_ char *made = str ? NULL : rle_to_string(mask);
                const char *s = str ? str : made;
                ev->det_mask[i] = ev->masks.len;
                buf_add(&ev->masks, s, strlen(s) + 1);
                rle_to_bbox(mask, ev->det_mbox + 4 * i);
                if (!box_given)
                        memcpy(ev->dets[i].bbox, ev->det_mbox + 4 * i, 4 * sizeof(double));
        }
        ev->det_area[i] = area >= 0 ? area : (double)rle_area(mask);
        ev->det_img[i] = (uint32_t)p;
        ev->det_k[i] = (uint32_t)ev->cat_k[c];
        ev->det_score[i] = d->score;
        ev->n_dets++;
        ev->grouped = 0;
        return 0;
}

int coco_eval_add(struct coco_eval *ev, const struct coco_det *d, size_t n, struct bd_err *err)
{
        for (size_t i = 0; i < n; i++) {
                int r = add_one(ev, &d[i], true, NULL, NULL, d[i].bbox[2] * d[i].bbox[3], "", err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int coco_eval_add_masks(struct coco_eval *ev, const struct coco_det *d, const struct rle *masks, size_t n,
                        struct bd_err *err)
{
        for (size_t i = 0; i < n; i++) {
                int r = add_one(ev, &d[i], true, &masks[i], NULL, -1, "", err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* loadRes decides by the first result: with a non-empty 'bbox' every result
 * is a box (area w * h; a segmentation, when given, is kept for segm
 * evaluation; without one, segm evaluation uses the box's polygon), else
 * with a 'segmentation' every result is a mask (area of the mask; the box
 * is the given one or the mask's). */
enum res_kind { RES_UNKNOWN, RES_BBOX, RES_SEGM };

/* A result's segmentation: {"size": [h, w], "counts": "compressed" or [counts]}.
 * Returns NULL or what is wrong. */
static const char *mask_from_json(const cJSON *seg, struct rle *m, const char **str)
{
        const cJSON *size = cJSON_GetObjectItemCaseSensitive(seg, "size");
        const cJSON *counts = cJSON_GetObjectItemCaseSensitive(seg, "counts");
        if (!cJSON_IsObject(seg) || !size || !counts)
                return "'segmentation': expected RLE {\"size\": [height, width], \"counts\": ...}";
        const cJSON *h = cJSON_GetArrayItem(size, 0), *w = cJSON_GetArrayItem(size, 1);
        if (!cJSON_IsArray(size) || cJSON_GetArraySize(size) != 2 || !cJSON_IsNumber(h) || !cJSON_IsNumber(w) ||
            h->valuedouble < 0 || w->valuedouble < 0 || h->valuedouble > (1 << 20) || w->valuedouble > (1 << 20) ||
            h->valuedouble != floor(h->valuedouble) || w->valuedouble != floor(w->valuedouble))
                return "'segmentation.size': expected [height, width]";
        uint32_t hh = (uint32_t)h->valuedouble, ww = (uint32_t)w->valuedouble;
        if (cJSON_IsString(counts)) {
                if (rle_from_string(m, counts->valuestring, hh, ww) < 0)
                        return "'segmentation.counts': not a compressed RLE string";
                *str = counts->valuestring;
                return NULL;
        }
        if (!cJSON_IsArray(counts))
                return "'segmentation.counts': expected a compressed RLE string or a list of counts";
        int n = cJSON_GetArraySize(counts);
        _cleanup_free_ uint32_t *c = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
        int i = 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, counts) {
                if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > UINT32_MAX ||
                    v->valuedouble != floor(v->valuedouble))
                        return "'segmentation.counts': expected non-negative integers";
                c[i++] = (uint32_t)v->valuedouble;
        }
        rle_set(m, hh, ww, c, (uint32_t)n);
        return NULL;
}

/* One result; *kind is set by the first.  *str: the mask's compressed
 * counts when they came so (in o).  Returns NULL or what is wrong. */
static const char *det_from_json(const cJSON *o, enum res_kind *kind, struct coco_det *d, bool *box_given,
                                 struct rle *m, bool *has_mask, const char **str, double *area)
{
        if (!cJSON_IsObject(o))
                return "expected an object";
        const cJSON *img = cJSON_GetObjectItemCaseSensitive(o, "image_id");
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(o, "category_id");
        const cJSON *bbox = cJSON_GetObjectItemCaseSensitive(o, "bbox");
        const cJSON *seg = cJSON_GetObjectItemCaseSensitive(o, "segmentation");
        const cJSON *score = cJSON_GetObjectItemCaseSensitive(o, "score");
        if (!cJSON_IsNumber(img) || img->valuedouble != floor(img->valuedouble) || fabs(img->valuedouble) > 9e15)
                return "'image_id': expected an integer";
        if (!cJSON_IsNumber(cat) || cat->valuedouble != floor(cat->valuedouble) || fabs(cat->valuedouble) > 2e9)
                return "'category_id': expected an integer";
        if (!cJSON_IsNumber(score))
                return "'score': expected a number";
        bool box = cJSON_IsArray(bbox) && cJSON_GetArraySize(bbox) > 0;
        if (*kind == RES_UNKNOWN) {
                if (box)
                        *kind = RES_BBOX;
                else if (seg)
                        *kind = RES_SEGM;
                else
                        return "expected 'bbox' or 'segmentation'";
        }
        if (*kind == RES_BBOX && !box)
                return "'bbox': expected [x, y, width, height] (the first detection has a box, so every one must)";
        if (*kind == RES_SEGM && !seg)
                return "'segmentation': missing (the first detection is a mask, so every one must be)";
        if (box) {
                if (cJSON_GetArraySize(bbox) != 4)
                        return "'bbox': expected [x, y, width, height]";
                for (int j = 0; j < 4; j++) {
                        const cJSON *v = cJSON_GetArrayItem(bbox, j);
                        if (!cJSON_IsNumber(v))
                                return "'bbox': expected [x, y, width, height]";
                        d->bbox[j] = v->valuedouble;
                }
        }
        *box_given = box;
        *has_mask = false;
        *str = NULL;
        if (seg && !cJSON_IsNull(seg)) {
                const char *bad = mask_from_json(seg, m, str);
                if (bad)
                        return bad;
                *has_mask = true;
        }
        d->image_id = (int64_t)img->valuedouble;
        d->category_id = (int32_t)cat->valuedouble;
        d->score = score->valuedouble;
        *area = *kind == RES_BBOX ? d->bbox[2] * d->bbox[3] : -1;      /* -1: the mask's */
        return NULL;
}

int coco_eval_load_json(struct coco_eval *ev, const char *path, struct bd_err *err)
{
        struct json_map jm = { 0 };
        int r = json_map_file(path, &jm, err);
        if (r < 0)
                return r;
        struct json_stream s;
        json_stream_init(&s, jm.p, jm.size, path);
        r = json_stream_array_begin(&s, err);
        if (r < 0 && s.pos < s.len)
                r = bd_err_set(err, -EINVAL, "%s: results are not a JSON list of detections", path);
        enum res_kind kind = RES_UNKNOWN;
        _cleanup_rle_ struct rle m = RLE_INIT;
        while (r >= 0) {
                cJSON *item = NULL;
                long line;
                r = json_stream_next_item(&s, &item, &line, err);
                if (r <= 0)
                        break;
                struct coco_det d = { 0 };
                bool box_given, has_mask;
                const char *str;
                double area;
                const char *bad = det_from_json(item, &kind, &d, &box_given, &m, &has_mask, &str, &area);
                if (bad) {
                        cJSON_Delete(item);
                        r = bd_err_set(err, -EINVAL, "%s:%ld: detection %zu: %s", path, line, ev->n_dets, bad);
                        break;
                }
                char where[4200];
                snprintf(where, sizeof(where), "%s:%ld: ", path, line);
                r = add_one(ev, &d, box_given, has_mask ? &m : NULL, str, area, where, err);
                cJSON_Delete(item);
        }
        if (r >= 0)
                r = json_stream_end(&s, err);
        json_unmap(&jm);
        return r < 0 ? r : 0;
}

/* ---- grouping detections ---------------------------------------------------------- */

static int cmp_group(const void *x, const void *y, void *ctx)
{
        const struct coco_eval *ev = ctx;
        uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
        if (ev->det_img[a] != ev->det_img[b])
                return ev->det_img[a] < ev->det_img[b] ? -1 : 1;
        if (ev->det_k[a] != ev->det_k[b])
                return ev->det_k[a] < ev->det_k[b] ? -1 : 1;
        return (a > b) - (a < b);
}

static void group_dets(struct coco_eval *ev)
{
        if (ev->grouped)
                return;
        free(ev->group);
        free(ev->img_first);
        ev->group = xmalloc((ev->n_dets + 1) * sizeof(uint32_t));
        for (size_t i = 0; i < ev->n_dets; i++)
                ev->group[i] = (uint32_t)i;
        qsort_r(ev->group, ev->n_dets, sizeof(uint32_t), cmp_group, ev);
        ev->img_first = xcalloc(ev->n_img + 1, sizeof(size_t));
        size_t j = 0;
        for (size_t p = 0; p <= ev->n_img; p++) {
                while (j < ev->n_dets && ev->det_img[ev->group[j]] < p)
                        j++;
                ev->img_first[p] = j;
        }
        ev->grouped = 1;
}

/* ---- evaluateImg --------------------------------------------------------------------- */

struct gt_box {
        const struct coco_ann *ann;
        int64_t id;
        double bbox[4];
        double area;
        uint32_t k;
        uint8_t crowd;
};

/* Indices by score[index], highest first; ties keep their order, as numpy's
 * argsort(-score, kind='mergesort'). */
static int cmp_score_desc(const void *x, const void *y, void *ctx)
{
        const double *score = ctx;
        uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
        if (score[a] != score[b])
                return score[a] > score[b] ? -1 : 1;
        return (a > b) - (a < b);
}

struct blob {
        uint8_t *p;
        size_t len, cap;
};

static void *blob_grow(struct blob *b, size_t n)
{
        if (b->len + n > b->cap) {
                b->cap = (b->len + n) * 2;
                b->p = xrealloc(b->p, b->cap);
        }
        void *q = b->p + b->len;
        memset(q, 0, n);
        b->len += n;
        return q;
}

/* The IoU of D detections (score order) and G ground truth objects (JSON
 * order): iou[d * G + g], boxes or masks as computeIoU does. */
static void compute_iou(const struct coco_eval *ev, const struct gt_box *const *g, size_t G,
                        const uint32_t *dix, size_t D, double *iou)
{
        if (!D || !G)
                return;
        _cleanup_free_ uint8_t *crowd = xmalloc(G + 1);
        for (size_t j = 0; j < G; j++)
                crowd[j] = g[j]->crowd;
        if (ev->type == COCO_EVAL_BBOX) {
                _cleanup_free_ double *db = xmalloc((D * 4 + 1) * sizeof(double));
                _cleanup_free_ double *gb = xmalloc((G * 4 + 1) * sizeof(double));
                for (size_t i = 0; i < D; i++)
                        memcpy(db + 4 * i, ev->dets[dix[i]].bbox, 4 * sizeof(double));
                for (size_t j = 0; j < G; j++)
                        memcpy(gb + 4 * j, g[j]->bbox, 4 * sizeof(double));
                bbox_iou(db, D, gb, G, crowd, iou);
                return;
        }
        /* masks are decoded here, for this (image, category) only */
        struct rle *dm = xcalloc(D, sizeof(*dm)), *gm = xcalloc(G, sizeof(*gm));
        const struct coco_image *im = &ev->gt->images[g[0]->ann->image];
        _cleanup_free_ double *db = xmalloc((D * 4 + 1) * sizeof(double));
        for (size_t i = 0; i < D; i++) {
                uint32_t x = dix[i];
                if (ev->det_mask[x] == NO_MASK) {
                        rle_from_bbox(&dm[i], ev->dets[x].bbox, im->height, im->width);
                        rle_to_bbox(&dm[i], db + 4 * i);
                } else {
                        (void) rle_from_string(&dm[i], ev->masks.s + ev->det_mask[x], im->height, im->width);
                        memcpy(db + 4 * i, ev->det_mbox + 4 * (size_t)x, 4 * sizeof(double));
                }
        }
        for (size_t j = 0; j < G; j++)
                if (coco_ann_mask(ev->gt, g[j]->ann, &gm[j]) < 0)
                        rle_set(&gm[j], 0, 0, NULL, 0);        /* checked when the index was built */
        rle_iou_boxes(dm, db, D, gm, NULL, G, crowd, iou);
        for (size_t i = 0; i < D; i++)
                rle_free(&dm[i]);
        for (size_t j = 0; j < G; j++)
                rle_free(&gm[j]);
        free(dm);
        free(gm);
}

/* One category of one image: G ground truth objects (JSON order), D
 * detections (score order, cut to MAX_DET).  Appends the four area-range
 * entries. */
static void eval_category(const struct coco_eval *ev, struct blob *out, uint32_t k, const struct gt_box *const *g,
                          size_t G, const uint32_t *dix, size_t D)
{
        _cleanup_free_ double *iou = xmalloc((D * G + 1) * sizeof(double));     /* [d][g] in JSON order */
        compute_iou(ev, g, G, dix, D, iou);
        _cleanup_free_ uint32_t *gind = xmalloc((G + 1) * sizeof(uint32_t));
        _cleanup_free_ uint8_t *gig = xmalloc(G + 1);
        _cleanup_free_ uint32_t *gtm = xmalloc((G + 1) * sizeof(uint32_t));   /* matched detection id, 0 = none */
        for (uint32_t a = 0; a < A_RNG; a++) {
                double lo = area_rng[a][0], hi = area_rng[a][1];
                /* ignored ground truth last, stable */
                size_t n = 0;
                uint32_t npig = 0;
                for (int pass = 0; pass < 2; pass++)
                        for (size_t j = 0; j < G; j++) {
                                int ig = g[j]->crowd || g[j]->area < lo || g[j]->area > hi;
                                if (ig == pass) {
                                        gind[n] = (uint32_t)j;
                                        gig[n++] = (uint8_t)ig;
                                        npig += !ig;
                                }
                        }
                struct entry_head *h = blob_grow(out, entry_size((uint32_t)D));
                h->k = k;
                h->a = a;
                h->npig = npig;
                h->d = (uint32_t)D;
                double *scores = (double *)(h + 1);
                uint8_t *flags = (uint8_t *)(scores + D);
                for (size_t i = 0; i < D; i++)
                        scores[i] = ev->dets[dix[i]].score;
                for (int t = 0; t < T_THRS; t++) {
                        double thr = coco_eval_iou_threshold(t);
                        memset(gtm, 0, (G + 1) * sizeof(uint32_t));
                        for (size_t i = 0; i < D; i++) {
                                double best = fmin(thr, 1 - 1e-10);
                                long m = -1;
                                for (size_t j = 0; j < G; j++) {
                                        const struct gt_box *gj = g[gind[j]];
                                        if (gtm[j] > 0 && !gj->crowd)
                                                continue;
                                        if (m > -1 && gig[m] == 0 && gig[j] == 1)
                                                break;
                                        double v = iou[i * G + gind[j]];
                                        if (v < best)
                                                continue;
                                        best = v;
                                        m = (long)j;
                                }
                                uint8_t f = 0;
                                if (m >= 0) {
                                        /* dtm stores the ground truth's id: an id of 0 reads as "unmatched" */
                                        if (g[gind[m]]->id != 0)
                                                f |= F_MATCHED;
                                        if (gig[m])
                                                f |= F_IGNORED;
                                        gtm[m] = dix[i] + 1;    /* loadRes numbers results from 1 */
                                }
                                double da = ev->det_area[dix[i]];
                                if (!(f & F_MATCHED) && (da < lo || da > hi))
                                        f |= F_IGNORED;
                                flags[(size_t)t * D + i] = f;
                        }
                }
        }
}

static void eval_image(struct coco_eval *ev, size_t p)
{
        const struct coco_index *gt = ev->gt;
        const struct coco_image *im = &gt->images[gt->by_id[p]];
        size_t ng = 0;
        _cleanup_free_ struct gt_box *gts = xmalloc((im->ann_count + 1) * sizeof(*gts));
        for (uint32_t i = 0; i < im->ann_count; i++) {
                const struct coco_ann *a = &gt->anns[im->ann_first + i];
                if (a->label < 0)
                        continue;       /* not in catIds */
                struct gt_box *b = &gts[ng++];
                b->ann = a;
                b->id = a->id;
                memcpy(b->bbox, a->bbox, sizeof(b->bbox));
                b->area = a->area;
                b->k = (uint32_t)ev->cat_k[a->label];
                b->crowd = a->iscrowd;
        }
        size_t d0 = ev->img_first[p], d1 = ev->img_first[p + 1];
        struct blob out = { 0 };
        _cleanup_free_ const struct gt_box **g = xmalloc((ng + 1) * sizeof(*g));
        _cleanup_free_ uint32_t *ord = xmalloc((d1 - d0 + 1) * sizeof(uint32_t));
        /* categories present, in increasing k: merge of gts' and dets' k */
        size_t di = d0;
        for (;;) {
                uint32_t k = UINT32_MAX;
                for (size_t j = 0; j < ng; j++)
                        if (gts[j].k < k)
                                k = gts[j].k;
                if (di < d1 && ev->det_k[ev->group[di]] < k)
                        k = ev->det_k[ev->group[di]];
                if (k == UINT32_MAX)
                        break;
                size_t G = 0;
                for (size_t j = 0; j < ng; j++)
                        if (gts[j].k == k)
                                g[G++] = &gts[j];
                size_t nd = 0;
                while (di < d1 && ev->det_k[ev->group[di]] == k)
                        ord[nd++] = ev->group[di++];
                qsort_r(ord, nd, sizeof(uint32_t), cmp_score_desc, ev->det_score);
                size_t D = nd < MAX_DET ? nd : MAX_DET;
                eval_category(ev, &out, k, g, G, ord, D);
                /* done with k: drop those ground truth boxes */
                size_t w = 0;
                for (size_t j = 0; j < ng; j++)
                        if (gts[j].k != k)
                                gts[w++] = gts[j];
                ng = w;
        }
        free(ev->res[p].blob);
        ev->res[p].blob = out.p;
        ev->res[p].len = (uint32_t)out.len;
        ev->res[p].done = 1;
}

struct eval_job {
        struct coco_eval *ev;
        const size_t *pos;
};

static void eval_job_fn(void *ctx, size_t i, int thread)
{
        struct eval_job *j = ctx;
        eval_image(j->ev, j->pos[i]);
}

int coco_eval_images(struct coco_eval *ev, const int64_t *ids, size_t n, struct bd_err *err)
{
        group_dets(ev);
        _cleanup_free_ size_t *pos = xmalloc((ids ? n : ev->n_img) * sizeof(size_t) + 1);
        size_t m = 0;
        if (ids) {
                for (size_t i = 0; i < n; i++) {
                        long p = image_pos(ev->gt, ids[i]);
                        if (p < 0)
                                return bd_err_set(err, -EINVAL, "unknown image id %lld", (long long)ids[i]);
                        pos[m++] = (size_t)p;
                }
        } else {
                for (size_t p = 0; p < ev->n_img; p++)
                        if (!ev->res[p].done)
                                pos[m++] = p;
        }
        struct eval_job j = { ev, pos };
        parallel_for(m, ev->threads, eval_job_fn, &j);
        return 0;
}

/* ---- packing ------------------------------------------------------------------------------ */

#define PACK_MAGIC "BDCEVAL1"

void coco_eval_pack(const struct coco_eval *ev, void **ret_data, size_t *ret_len)
{
        struct blob b = { 0 };
        memcpy(blob_grow(&b, 8), PACK_MAGIC, 8);
        for (size_t p = 0; p < ev->n_img; p++) {
                const struct img_result *r = &ev->res[p];
                if (!r->done)
                        continue;
                uint8_t *q = blob_grow(&b, 16);
                int64_t id = ev->gt->images[ev->gt->by_id[p]].id;
                uint64_t len = r->len;
                memcpy(q, &id, 8);
                memcpy(q + 8, &len, 8);
                if (r->len)
                        memcpy(blob_grow(&b, r->len), r->blob, r->len);
        }
        *ret_data = b.p;
        *ret_len = b.len;
}

/* Checks that a blob is a sequence of well-formed entries in increasing k,
 * each k with its A_RNG area ranges in order, holding the same detections
 * (as eval_category writes them: accumulate relies on it). */
static int check_entries(const struct coco_eval *ev, const uint8_t *p, size_t len)
{
        size_t off = 0, prev_off = 0;
        struct entry_head prev = { 0 };
        bool have = false;
        while (off < len) {
                if (len - off < sizeof(struct entry_head))
                        return -EBADMSG;
                struct entry_head h;
                memcpy(&h, p + off, sizeof(h));
                if (h.k >= ev->n_cat || h.a >= A_RNG || h.d > MAX_DET || entry_size(h.d) > len - off)
                        return -EBADMSG;
                if (h.a != (have ? (prev.a + 1) % A_RNG : 0))
                        return -EBADMSG;
                if (h.a > 0 && (h.k != prev.k || h.d != prev.d ||
                                memcmp(p + off + sizeof(h), p + prev_off + sizeof(h), 8 * (size_t)h.d) != 0))
                        return -EBADMSG;
                if (h.a == 0 && have && h.k <= prev.k)
                        return -EBADMSG;
                prev = h;
                prev_off = off;
                have = true;
                off += entry_size(h.d);
        }
        return have && prev.a != A_RNG - 1 ? -EBADMSG : 0;
}

int coco_eval_merge(struct coco_eval *ev, const void *data, size_t len, struct bd_err *err)
{
        const uint8_t *p = data;
        if (len < 8 || memcmp(p, PACK_MAGIC, 8) != 0)
                return bd_err_set(err, -EBADMSG, "evaluation results: not packed by coco_eval_pack");
        size_t off = 8;
        while (off < len) {
                int64_t id;
                uint64_t n;
                if (len - off < 16)
                        return bd_err_set(err, -EBADMSG, "evaluation results: truncated");
                memcpy(&id, p + off, 8);
                memcpy(&n, p + off + 8, 8);
                off += 16;
                if (n > len - off || n % 8)
                        return bd_err_set(err, -EBADMSG, "evaluation results: truncated");
                long pos = image_pos(ev->gt, id);
                if (pos < 0)
                        return bd_err_set(err, -EINVAL, "evaluation results: unknown image id %lld", (long long)id);
                if (ev->res[pos].done)
                        return bd_err_set(err, -EEXIST, "evaluation results: image %lld evaluated twice",
                                          (long long)id);
                if (check_entries(ev, p + off, n) < 0)
                        return bd_err_set(err, -EBADMSG, "evaluation results: image %lld: malformed entries",
                                          (long long)id);
                struct img_result *r = &ev->res[pos];
                r->blob = n ? xmalloc(n) : NULL;
                if (n)
                        memcpy(r->blob, p + off, n);
                r->len = (uint32_t)n;
                r->done = 1;
                off += n;
        }
        return 0;
}

/* ---- accumulate ------------------------------------------------------------------------------- */

struct acc {
        struct coco_eval *ev;
        double *precision;      /* [T][R][K][A][M] */
        double *recall;         /* [T][K][A][M] */
        /* per image, the categories it has entries for and where their first
         * (area 0) entry starts: a binary search instead of a walk */
        uint32_t *first;        /* n_img + 1: range of each image in ks/offs */
        uint32_t *ks, *offs;
};

#define P_AT(acc, t, r, k, a, m) \
        (acc)->precision[((((size_t)(t) * R_PTS + (r)) * (acc)->ev->n_cat + (k)) * A_RNG + (a)) * M_DETS + (m)]
#define R_AT(acc, t, k, a, m) \
        (acc)->recall[(((size_t)(t) * (acc)->ev->n_cat + (k)) * A_RNG + (a)) * M_DETS + (m)]

/* Indexes the categories of every image's entries (blobs hold entries in
 * increasing (k, a)): the offset of the first entry of each k. */
static void index_entries(struct acc *acc)
{
        struct coco_eval *ev = acc->ev;
        acc->first = xmalloc((ev->n_img + 1) * sizeof(uint32_t));
        acc->ks = acc->offs = NULL;
        for (int pass = 0; pass < 2; pass++) {
                uint32_t n = 0;
                for (size_t p = 0; p < ev->n_img; p++) {
                        const struct img_result *r = &ev->res[p];
                        acc->first[p] = n;
                        uint32_t prev = UINT32_MAX;
                        for (size_t off = 0; off < r->len;) {
                                const struct entry_head *h = (const struct entry_head *)(r->blob + off);
                                if (h->k != prev) {
                                        if (pass) {
                                                acc->ks[n] = h->k;
                                                acc->offs[n] = (uint32_t)off;
                                        }
                                        n++;
                                        prev = h->k;
                                }
                                off += entry_size(h->d);
                        }
                }
                acc->first[ev->n_img] = n;
                if (!pass) {
                        acc->ks = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
                        acc->offs = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
                }
        }
}

/* The entry (k, a) of image p, or NULL. */
static const struct entry_head *find_entry(const struct acc *acc, size_t p, uint32_t k, uint32_t a)
{
        uint32_t lo = acc->first[p], hi = acc->first[p + 1];
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (acc->ks[mid] < k)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == acc->first[p + 1] || acc->ks[lo] != k)
                return NULL;
        const struct img_result *r = &acc->ev->res[p];
        for (size_t off = acc->offs[lo]; off < r->len;) {
                const struct entry_head *h = (const struct entry_head *)(r->blob + off);
                if (h->k != k || h->a > a)
                        return NULL;
                if (h->a == a)
                        return h;
                off += entry_size(h->d);
        }
        return NULL;
}

/* One category: the detections of every image (its first MAX_DET, score
 * order) sorted once by score, stably as numpy's mergesort; the lists of the
 * smaller maxDets and the other area ranges are subsequences of that order
 * (the same detections, in the same relative order), so each (a, m) walks
 * the one order and skips what it does not hold. */
static void acc_category(void *ctx, size_t k, int thread)
{
        struct acc *acc = ctx;
        struct coco_eval *ev = acc->ev;
        /* E[e * A_RNG + a]: the entries of the images that have this category */
        _cleanup_free_ const struct entry_head **E = xmalloc((ev->n_img * A_RNG + 1) * sizeof(*E));
        size_t ne = 0, total = 0;
        for (size_t p = 0; p < ev->n_img; p++) {
                const struct entry_head *h = find_entry(acc, p, (uint32_t)k, 0);
                if (!h)
                        continue;
                /* check_entries and eval_category: the A_RNG entries follow each other */
                const uint8_t *q = (const uint8_t *)h;
                for (uint32_t a = 0; a < A_RNG; a++) {
                        E[ne * A_RNG + a] = (const struct entry_head *)q;
                        q += entry_size(h->d);
                }
                total += h->d;
                ne++;
        }
        if (ne == 0)
                return;
        _cleanup_free_ uint32_t *de = xmalloc((total + 1) * sizeof(uint32_t));    /* image entry */
        _cleanup_free_ uint32_t *di = xmalloc((total + 1) * sizeof(uint32_t));    /* index in it */
        _cleanup_free_ double *sc = xmalloc((total + 1) * sizeof(double));
        _cleanup_free_ uint32_t *ord = xmalloc((total + 1) * sizeof(uint32_t));
        _cleanup_free_ double *pr = xmalloc((total + 1) * sizeof(double));
        _cleanup_free_ double *rc = xmalloc((total + 1) * sizeof(double));
        size_t n = 0;
        for (size_t e = 0; e < ne; e++) {
                const struct entry_head *h = E[e * A_RNG];
                const double *scores = (const double *)(h + 1);
                for (uint32_t i = 0; i < h->d; i++) {
                        de[n] = (uint32_t)e;
                        di[n] = i;
                        sc[n] = scores[i];
                        ord[n] = (uint32_t)n;
                        n++;
                }
        }
        qsort_r(ord, n, sizeof(uint32_t), cmp_score_desc, sc);
        _cleanup_free_ uint32_t *sub = xmalloc((total + 1) * sizeof(uint32_t));
        _cleanup_free_ const uint8_t **fl = xmalloc((total + 1) * sizeof(*fl));    /* flags of t = 0 */
        _cleanup_free_ uint32_t *stride = xmalloc((total + 1) * sizeof(uint32_t));
        for (int m = 0; m < M_DETS; m++) {
                /* this maxDets' detections, in the one score order */
                size_t nd = 0;
                for (size_t j = 0; j < n; j++)
                        if (di[ord[j]] < (uint32_t)max_dets[m])
                                sub[nd++] = ord[j];
                for (uint32_t a = 0; a < A_RNG; a++) {
                        uint64_t npig = 0;
                        for (size_t e = 0; e < ne; e++)
                                npig += E[e * A_RNG + a]->npig;
                        if (npig == 0)
                                continue;
                        for (size_t j = 0; j < nd; j++) {
                                const struct entry_head *h = E[de[sub[j]] * A_RNG + a];
                                fl[j] = (const uint8_t *)((const double *)(h + 1) + h->d) + di[sub[j]];
                                stride[j] = h->d;
                        }
                        for (int t = 0; t < T_THRS; t++) {
                                double tp = 0, fp = 0;
                                for (size_t j = 0; j < nd; j++) {
                                        uint8_t f = fl[j][(size_t)t * stride[j]];
                                        if (!(f & F_IGNORED)) {
                                                if (f & F_MATCHED)
                                                        tp += 1;
                                                else
                                                        fp += 1;
                                        }
                                        rc[j] = tp / (double)npig;
                                        pr[j] = tp / (fp + tp + DBL_EPSILON);
                                }
                                R_AT(acc, t, k, a, m) = nd ? rc[nd - 1] : 0;
                                for (size_t i = nd > 0 ? nd - 1 : 0; i > 0; i--)
                                        if (pr[i] > pr[i - 1])
                                                pr[i - 1] = pr[i];
                                size_t pi = 0;
                                for (int r = 0; r < R_PTS; r++) {
                                        double thr = coco_eval_recall_point(r);
                                        /* searchsorted(rc, thr, side='left') */
                                        while (pi < nd && rc[pi] < thr)
                                                pi++;
                                        P_AT(acc, t, r, k, a, m) = pi < nd ? pr[pi] : 0;
                                }
                        }
                }
        }
}

/* numpy's pairwise summation (what np.mean does on a contiguous array) */
static double pairwise_sum(const double *a, size_t n)
{
        if (n < 8) {
                double s = 0.;
                for (size_t i = 0; i < n; i++)
                        s += a[i];
                return s;
        }
        if (n <= 128) {
                double r[8];
                for (int j = 0; j < 8; j++)
                        r[j] = a[j];
                size_t i;
                for (i = 8; i < n - n % 8; i += 8)
                        for (int j = 0; j < 8; j++)
                                r[j] += a[i + j];
                double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
                for (; i < n; i++)
                        s += a[i];
                return s;
        }
        size_t n2 = n / 2;
        n2 -= n2 % 8;
        return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

static double mean_valid(const double *v, size_t n)
{
        _cleanup_free_ double *x = xmalloc((n + 1) * sizeof(double));
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
                if (v[i] > -1)
                        x[m++] = v[i];
        return m ? pairwise_sum(x, m) / (double)m : -1;
}

/* summarize(): ap or ar, one threshold (t >= 0) or all, area range, maxDets index */
static double summarize(const struct acc *acc, int ap, int t_only, int a, int m)
{
        size_t K = acc->ev->n_cat;
        int t0 = t_only >= 0 ? t_only : 0, t1 = t_only >= 0 ? t_only + 1 : T_THRS;
        _cleanup_free_ double *v = xmalloc(((size_t)T_THRS * R_PTS * K + 1) * sizeof(double));
        size_t n = 0;
        for (int t = t0; t < t1; t++) {
                if (ap) {
                        for (int r = 0; r < R_PTS; r++)
                                for (size_t k = 0; k < K; k++)
                                        v[n++] = P_AT(acc, t, r, k, a, m);
                } else {
                        for (size_t k = 0; k < K; k++)
                                v[n++] = R_AT(acc, t, k, a, m);
                }
        }
        return mean_valid(v, n);
}

static int threshold_index(double thr)
{
        for (int t = 0; t < T_THRS; t++)
                if (coco_eval_iou_threshold(t) == thr)
                        return t;
        return -2;      /* np.where finds nothing: an empty selection, mean -1 */
}

int coco_eval_accumulate(struct coco_eval *ev, double stats[COCO_EVAL_NSTATS], struct bd_err *err)
{
        int r = coco_eval_images(ev, NULL, 0, err);
        if (r < 0)
                return r;
        size_t K = ev->n_cat;
        struct acc acc = { .ev = ev };
        size_t np = (size_t)T_THRS * R_PTS * K * A_RNG * M_DETS, nr = (size_t)T_THRS * K * A_RNG * M_DETS;
        acc.precision = xmalloc((np + 1) * sizeof(double));
        acc.recall = xmalloc((nr + 1) * sizeof(double));
        for (size_t i = 0; i < np; i++)
                acc.precision[i] = -1;
        for (size_t i = 0; i < nr; i++)
                acc.recall[i] = -1;
        index_entries(&acc);
        parallel_for(K, ev->threads, acc_category, &acc);
        free(acc.first);
        free(acc.ks);
        free(acc.offs);
        int t50 = threshold_index(.5), t75 = threshold_index(.75);
        double *s = stats;
#define SUM(ap, t, a, m) ((t) == -2 ? -1 : summarize(&acc, ap, t, a, m))
        s[0] = SUM(1, -1, 0, 2);
        s[1] = SUM(1, t50, 0, 2);
        s[2] = SUM(1, t75, 0, 2);
        s[3] = SUM(1, -1, 1, 2);
        s[4] = SUM(1, -1, 2, 2);
        s[5] = SUM(1, -1, 3, 2);
        s[6] = SUM(0, -1, 0, 0);
        s[7] = SUM(0, -1, 0, 1);
        s[8] = SUM(0, -1, 0, 2);
        s[9] = SUM(0, -1, 1, 2);
        s[10] = SUM(0, -1, 2, 2);
        s[11] = SUM(0, -1, 3, 2);
#undef SUM
        free(acc.precision);
        free(acc.recall);
        return 0;
}

void coco_eval_summary(const double stats[COCO_EVAL_NSTATS], struct bd_buf *out)
{
        static const struct {
                int ap;
                const char *iou, *area;
                int max_det;
        } rows[COCO_EVAL_NSTATS] = {
                { 1, "0.50:0.95", "all", 100 }, { 1, "0.50", "all", 100 },   { 1, "0.75", "all", 100 },
                { 1, "0.50:0.95", "small", 100 }, { 1, "0.50:0.95", "medium", 100 }, { 1, "0.50:0.95", "large", 100 },
                { 0, "0.50:0.95", "all", 1 },   { 0, "0.50:0.95", "all", 10 }, { 0, "0.50:0.95", "all", 100 },
                { 0, "0.50:0.95", "small", 100 }, { 0, "0.50:0.95", "medium", 100 }, { 0, "0.50:0.95", "large", 100 },
        };
        for (int i = 0; i < COCO_EVAL_NSTATS; i++)
                buf_printf(out, " %-18s %s @[ IoU=%-9s | area=%6s | maxDets=%3d ] = %0.3f\n",
                           rows[i].ap ? "Average Precision" : "Average Recall", rows[i].ap ? "(AP)" : "(AR)",
                           rows[i].iou, rows[i].area, rows[i].max_det, stats[i]);
}

/* coco-eval.h: COCO evaluation, bbox and segm, with the numbers of
 * pycocotools' COCOeval.
 *
 * The evaluation follows cocoeval.py step by step: images in increasing id
 * order, categories in increasing id order, detections sorted by score
 * (stable) and cut to 100 per image and category, IoU against crowd regions
 * divided by the detection's area, ground truth outside an area range or
 * crowd marked "ignore", greedy matching at the 10 IoU thresholds
 * 0.50:0.05:0.95, precision interpolated at 101 recall points, and the 12
 * summary numbers averaged over the entries that are not -1.
 *
 * Work splits by image: every rank (or thread) evaluates its own images,
 * coco_eval_pack() serialises the per-image results, and one process
 * coco_eval_merge()s them and coco_eval_accumulate()s.  Images that nobody
 * evaluated are evaluated there with the detections it holds (none, when the
 * detections live on other ranks: their ground truth then counts as missed).
 *
 *     struct coco_eval *ev = coco_eval_new(gt_index, threads);
 *     coco_eval_load_json(ev, "dets.json", err);     or coco_eval_add()
 *     coco_eval_accumulate(ev, stats, err);
 *     coco_eval_summary(stats, &text);
 *
 * segm evaluation (coco_eval_new_type(..., COCO_EVAL_SEGM, ...)) is the same
 * with mask IoU (mask.h's rle_iou, crowd rule included): ground truth masks
 * are rasterised from the index per image as they are needed (annToRLE), the
 * detections' masks are kept as compressed strings (about 2 bytes a run) and
 * decoded per image, so memory follows the results file, not the images.
 * Area ranges use the ground truth's JSON area and the detection's loadRes
 * area: the mask's for mask results, width x height for box results.
 */
#ifndef BD_DATA_COCO_EVAL_H
#define BD_DATA_COCO_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "coco-index.h"
#include "err.h"
#include "mask.h"

#define COCO_EVAL_NSTATS 12

struct coco_det {
        int64_t image_id;
        int32_t category_id;
        double bbox[4];         /* x, y, width, height in pixels of the original image */
        double score;
};

struct coco_eval;

enum coco_eval_type {
        COCO_EVAL_BBOX,
        COCO_EVAL_SEGM,
};

/* A bbox evaluation. */
struct coco_eval *coco_eval_new(const struct coco_index *gt, int threads);
struct coco_eval *coco_eval_new_type(const struct coco_index *gt, enum coco_eval_type type, int threads);
/* Switches the type, keeping the detections and dropping the per-image
 * results evaluated so far: one results file, bbox then segm. */
void coco_eval_set_type(struct coco_eval *ev, enum coco_eval_type type);
enum coco_eval_type coco_eval_get_type(const struct coco_eval *ev);
const char *coco_eval_type_name(enum coco_eval_type type);
struct coco_eval *coco_eval_free(struct coco_eval *ev);
DEFINE_CLEANUP(struct coco_eval *, coco_eval_free)

/* Adds detections.  Unknown image or category ids, a negative width or
 * height, a non-finite box or score are errors naming the detection (its
 * index counted over all the detections added so far). */
int coco_eval_add(struct coco_eval *ev, const struct coco_det *d, size_t n, struct bd_err *err);
/* Adds detections with masks (of the image's size, counts covering it: an
 * error otherwise); d's boxes serve bbox evaluation, the masks segm, and the
 * masks' areas the area ranges of both (as loadRes does for mask results). */
int coco_eval_add_masks(struct coco_eval *ev, const struct coco_det *d, const struct rle *masks, size_t n,
                        struct bd_err *err);
/* Adds the detections of a results file in pycocotools' loadRes format: a
 * JSON list of {"image_id", "category_id", "bbox", "score"} or of
 * {"image_id", "category_id", "segmentation": {"size": [h, w], "counts":
 * "..."}, "score"} (counts compressed, or a list), chosen by the first as
 * loadRes does (see coco-eval.c).  Errors name the file, line and detection. */
int coco_eval_load_json(struct coco_eval *ev, const char *path, struct bd_err *err);
size_t coco_eval_n_dets(const struct coco_eval *ev);

/* Evaluates the images with these ids (all images not evaluated yet when
 * ids is NULL), using the detections added so far. */
int coco_eval_images(struct coco_eval *ev, const int64_t *ids, size_t n, struct bd_err *err);
/* The per-image results evaluated here, as bytes for another process
 * (*ret_data is malloc'ed). */
void coco_eval_pack(const struct coco_eval *ev, void **ret_data, size_t *ret_len);
/* Adds another process's packed results; an image evaluated twice is an error. */
int coco_eval_merge(struct coco_eval *ev, const void *data, size_t len, struct bd_err *err);
/* Evaluates what is left, accumulates and summarises into stats[12]. */
int coco_eval_accumulate(struct coco_eval *ev, double stats[COCO_EVAL_NSTATS], struct bd_err *err);

/* The 12 lines as pycocotools prints them. */
void coco_eval_summary(const double stats[COCO_EVAL_NSTATS], struct bd_buf *out);
/* Short names: AP, AP50, AP75, APs, APm, APl, AR1, AR10, AR100, ARs, ARm, ARl. */
extern const char *const coco_eval_stat_names[COCO_EVAL_NSTATS];

/* The IoU thresholds and recall points, computed as numpy.linspace does. */
double coco_eval_iou_threshold(int t);
double coco_eval_recall_point(int r);

#endif

/* test-coco-eval.c: the evaluation's constants, hand-checked cases, the
 * split-and-merge path against a single process, and bad input.  The
 * comparison with pycocotools itself is tests/t0510-coco-eval.t. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coco-eval.h"
#include "coco-index.h"
#include "fs.h"
#include "macro.h"
#include "rng.h"
#include "tap.h"

static char tmpdir[] = "/tmp/test-coco-eval.XXXXXX";

static char *write_tmp(const char *name, const char *text)
{
        char *p = xasprintf("%s/%s", tmpdir, name);
        struct bd_err err;
        if (fs_write_atomic(p, text, strlen(text), 0644, &err) < 0)
                abort();
        return p;
}

static struct coco_index *load_gt(const char *name, const char *text)
{
        _cleanup_free_ char *p = write_tmp(name, text);
        struct coco_index *x = NULL;
        struct bd_err err;
        if (coco_index_open(p, NULL, COCO_INDEX_NO_CACHE, &x, &err) < 0) {
                printf("# %s\n", err.msg);
                abort();
        }
        return x;
}

static void test_constants(void)
{
        /* numpy.linspace(.5, .95, 10) and (0, 1, 101), as pycocotools' Params */
        static const double thr[10] = {
                0x1.0000000000000p-1, 0x1.199999999999ap-1, 0x1.3333333333333p-1, 0x1.4cccccccccccdp-1,
                0x1.6666666666666p-1, 0x1.8000000000000p-1, 0x1.999999999999ap-1, 0x1.b333333333333p-1,
                0x1.cccccccccccccp-1, 0x1.e666666666666p-1,
        };
        int same = 1;
        for (int t = 0; t < 10; t++)
                same &= coco_eval_iou_threshold(t) == thr[t];
        ok(same, "IoU thresholds are numpy's linspace bit for bit");
        ok(coco_eval_iou_threshold(5) == 0.75, "  .75 is one of them (AP75 exists)");
        same = 1;
        for (int r = 0; r < 100; r++)
                same &= coco_eval_recall_point(r) == r * 0.01;
        ok(same && coco_eval_recall_point(100) == 1.0, "recall points are i * 0.01, then 1");
}

#define GT_ONE                                                                                           \
        "{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\", \"width\": 200, \"height\": 200},"           \
        " {\"id\": 2, \"file_name\": \"b.jpg\", \"width\": 200, \"height\": 200}],"                        \
        " \"categories\": [{\"id\": 5, \"name\": \"x\"}, {\"id\": 1, \"name\": \"y\"}],"                  \
        " \"annotations\": ["                                                                            \
        "  {\"id\": 1, \"image_id\": 1, \"category_id\": 5, \"bbox\": [10, 10, 40, 50], \"area\": 2000, \"iscrowd\": 0},"  \
        "  {\"id\": 2, \"image_id\": 2, \"category_id\": 5, \"bbox\": [100, 100, 90, 90], \"area\": 8000, \"iscrowd\": 1}" \
        "]}"

static void test_hand_checked(void)
{
        _cleanup_(coco_index_freep) struct coco_index *gt = load_gt("one.json", GT_ONE);
        struct bd_err err;
        double s[12];
        /* a perfect detection of the medium object, one on the crowd region */
        struct coco_det d[] = {
                { 1, 5, { 10, 10, 40, 50 }, 0.9 },
                { 2, 5, { 120, 120, 20, 20 }, 0.8 },    /* inside the crowd: ignored, not a false positive */
        };
        _cleanup_(coco_eval_freep) struct coco_eval *ev = coco_eval_new(gt, 2);
        ok(coco_eval_add(ev, d, 2, &err) == 0 && coco_eval_accumulate(ev, s, &err) == 0, "a perfect detection evaluates");
        static const double want[12] = { 1, 1, 1, -1, 1, -1, 1, 1, 1, -1, 1, -1 };
        int same = 1;
        for (int i = 0; i < 12; i++)
                same &= fabs(s[i] - want[i]) < 1e-12;
        ok(same, "  AP 1 everywhere it is defined, -1 for small and large (no ground truth there)");
        for (int i = 0; i < 12 && !same; i++)
                printf("#   stats[%d] = %g, want %g\n", i, s[i], want[i]);

        /* the same plus a false positive scoring higher: precision 1/2 at recall 1 */
        struct coco_det fp = { 1, 5, { 150, 150, 20, 20 }, 0.95 };
        _cleanup_(coco_eval_freep) struct coco_eval *ev2 = coco_eval_new(gt, 1);
        coco_eval_add(ev2, d, 2, &err);
        coco_eval_add(ev2, &fp, 1, &err);
        coco_eval_accumulate(ev2, s, &err);
        ok(fabs(s[0] - 0.5) < 1e-12, "a higher-scoring false positive halves AP (0.5)");
        ok(fabs(s[6] - 0.0) < 1e-12, "  and AR@1 is 0: the single detection kept is the false positive");
        ok(fabs(s[7] - 1.0) < 1e-12, "  AR@10 is 1");
        ok(fabs(s[3] + 1) < 1e-12, "  the small false positive alone does not define APs");

        /* a detection of IoU 0.58: matched at thresholds .5 and .55 only */
        struct coco_det half = { 1, 5, { 10, 10, 40, 29 }, 0.9 };  /* IoU = 1160 / 2000 */
        _cleanup_(coco_eval_freep) struct coco_eval *ev3 = coco_eval_new(gt, 1);
        coco_eval_add(ev3, &half, 1, &err);
        coco_eval_accumulate(ev3, s, &err);
        ok(fabs(s[0] - 0.2) < 1e-12, "IoU 0.58 counts at 2 of 10 thresholds: AP 0.2");
        ok(fabs(s[1] - 1.0) < 1e-12 && fabs(s[2]) < 1e-12, "  AP50 1, AP75 0");

        _cleanup_buf_ struct bd_buf out = BD_BUF_INIT;
        buf_init(&out);
        coco_eval_summary(s, &out);
        like(out.s, " Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.200\n",
             "summary line 1 as pycocotools prints it");
        like(out.s, " Average Precision  (AP) @[ IoU=0.50:0.95 | area= small | maxDets=100 ] = -1.000\n",
             "  an undefined number prints -1.000");
        like(out.s, " Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets=  1 ] = 0.200\n",
             "  AR@1 line");
}

/* A random ground truth with crowd regions and random detections. */
static char *random_gt(uint64_t seed, int *n_images)
{
        struct bd_rng r;
        bd_rng_seed_key(&r, seed);
        struct bd_buf b = BD_BUF_INIT;
        buf_init(&b);
        int ni = 30 + (int)bd_rng_pick(&r, 30);
        buf_puts(&b, "{\"images\": [");
        for (int i = 0; i < ni; i++)
                buf_printf(&b, "%s{\"id\": %d, \"file_name\": \"%d.jpg\", \"width\": 400, \"height\": 300}", i ? "," : "",
                           1000 - 7 * i, i);
        buf_puts(&b, "], \"categories\": [{\"id\": 9, \"name\": \"a\"}, {\"id\": 2, \"name\": \"b\"}, {\"id\": 4, \"name\": \"c\"}],"
                     " \"annotations\": [");
        int id = 1;
        for (int i = 0; i < ni; i++) {
                int n = (int)bd_rng_pick(&r, 7);
                for (int k = 0; k < n; k++) {
                        double w = bd_rng_range(&r, 4, 200), h = bd_rng_range(&r, 4, 150);
                        buf_printf(&b, "%s{\"id\": %d, \"image_id\": %d, \"category_id\": %d, \"bbox\": [%.2f, %.2f, %.2f, %.2f],"
                                       " \"area\": %.3f, \"iscrowd\": %d}",
                                   id > 1 ? "," : "", id, 1000 - 7 * i, (int[]){ 9, 2, 4 }[bd_rng_pick(&r, 3)],
                                   bd_rng_range(&r, 0, 400 - w), bd_rng_range(&r, 0, 300 - h), w, h, w * h * bd_rng_range(&r, 0.5, 1),
                                   bd_rng_uniform(&r) < 0.08);
                        id++;
                }
        }
        buf_puts(&b, "]}");
        *n_images = ni;
        return buf_detach(&b);
}

static size_t random_dets(const struct coco_index *gt, uint64_t seed, struct coco_det **ret)
{
        struct bd_rng r;
        bd_rng_seed_key(&r, seed);
        size_t n = 0, cap = 64;
        struct coco_det *d = xmalloc(cap * sizeof(*d));
        for (size_t i = 0; i < gt->n_images; i++) {
                const struct coco_image *im = &gt->images[i];
                int m = (int)bd_rng_pick(&r, 12) + (bd_rng_uniform(&r) < 0.1 ? 110 : 0);
                for (int k = 0; k < m + (int)im->ann_count; k++) {
                        if (n == cap)
                                d = xrealloc(d, (cap *= 2) * sizeof(*d));
                        struct coco_det *x = &d[n++];
                        x->image_id = im->id;
                        if (k < (int)im->ann_count) {     /* near a ground truth box */
                                const struct coco_ann *a = &gt->anns[im->ann_first + (uint32_t)k];
                                x->category_id = bd_rng_uniform(&r) < 0.8 ? a->category_id : 2;
                                for (int j = 0; j < 4; j++)
                                        x->bbox[j] = fmax(0, a->bbox[j] + bd_rng_range(&r, -6, 6));
                        } else {
                                x->category_id = (int[]){ 9, 2, 4 }[bd_rng_pick(&r, 3)];
                                x->bbox[0] = bd_rng_range(&r, 0, 300);
                                x->bbox[1] = bd_rng_range(&r, 0, 200);
                                x->bbox[2] = bd_rng_range(&r, 1, 100);
                                x->bbox[3] = bd_rng_range(&r, 1, 100);
                        }
                        x->score = round(bd_rng_uniform(&r) * 20) / 20;    /* many ties */
                }
        }
        *ret = d;
        return n;
}

static void test_merge(uint64_t seed)
{
        int ni;
        _cleanup_free_ char *text = random_gt(seed, &ni);
        _cleanup_free_ char *name = xasprintf("rand%llu.json", (unsigned long long)seed);
        _cleanup_(coco_index_freep) struct coco_index *gt = load_gt(name, text);
        _cleanup_free_ struct coco_det *d = NULL;
        size_t nd = random_dets(gt, seed * 31 + 7, &d);
        struct bd_err err;
        double whole[12], merged[12], threaded[12];
        _cleanup_(coco_eval_freep) struct coco_eval *ev = coco_eval_new(gt, 1);
        coco_eval_add(ev, d, nd, &err);
        ok(coco_eval_accumulate(ev, whole, &err) == 0, "seed: one process evaluates");
        _cleanup_(coco_eval_freep) struct coco_eval *evt = coco_eval_new(gt, 4);
        coco_eval_add(evt, d, nd, &err);
        coco_eval_accumulate(evt, threaded, &err);
        ok(memcmp(whole, threaded, sizeof(whole)) == 0, "  4 threads give the same numbers bit for bit");

        /* three "ranks": each holds the detections of its images and evaluates them */
        _cleanup_(coco_eval_freep) struct coco_eval *root = coco_eval_new(gt, 2);
        int ret = 0;
        for (int rank = 0; rank < 3; rank++) {
                _cleanup_(coco_eval_freep) struct coco_eval *e = coco_eval_new(gt, 1);
                int64_t ids[128];
                size_t n = 0;
                for (size_t i = 0; i < gt->n_images; i++)
                        if ((int)(i % 3) == rank && rank != 2)  /* rank 2 evaluates nothing: root does its images */
                                ids[n++] = gt->images[i].id;
                for (size_t k = 0; k < nd; k++) {
                        long pos = coco_index_find_image(gt, d[k].image_id);
                        if ((int)(pos % 3) == rank && rank != 2)
                                ret |= coco_eval_add(e, &d[k], 1, &err);
                }
                ret |= coco_eval_images(e, ids, n, &err);
                void *blob;
                size_t len;
                coco_eval_pack(e, &blob, &len);
                ret |= coco_eval_merge(root, blob, len, &err);
                if (rank == 0) {
                        ok(coco_eval_merge(root, blob, len, &err) == -EEXIST, "  merging an image twice is an error");
                        like(err.msg, "evaluated twice", "    that says so");
                        ((char *)blob)[0] = 'X';
                        ok(coco_eval_merge(root, blob, len, &err) == -EBADMSG, "  a damaged pack is refused");
                }
                free(blob);
        }
        /* the images of "rank 2" have their detections added at the root */
        for (size_t k = 0; k < nd; k++)
                if (coco_index_find_image(gt, d[k].image_id) % 3 == 2)
                        ret |= coco_eval_add(root, &d[k], 1, &err);
        ok(ret == 0, "  the ranks evaluate and merge");
        coco_eval_accumulate(root, merged, &err);
        ok(memcmp(whole, merged, sizeof(whole)) == 0, "  merged per-image results give the same numbers bit for bit");
        int sane = 1;
        for (int i = 0; i < 12; i++)
                sane &= (whole[i] >= 0 && whole[i] <= 1) || whole[i] == -1;
        ok(sane && whole[0] > 0.05, "  the numbers are in [0, 1] and not trivially 0");
}

static void expect_add_error(const struct coco_index *gt, struct coco_det d, const char *want, const char *what)
{
        _cleanup_(coco_eval_freep) struct coco_eval *ev = coco_eval_new(gt, 1);
        struct bd_err err = { "" };
        ok(coco_eval_add(ev, &d, 1, &err) == -EINVAL, what);
        like(err.msg, want, "  message");
}

static void expect_file_error(const struct coco_index *gt, const char *name, const char *text, const char *want)
{
        _cleanup_free_ char *p = write_tmp(name, text);
        _cleanup_(coco_eval_freep) struct coco_eval *ev = coco_eval_new(gt, 1);
        struct bd_err err = { "" };
        _cleanup_free_ char *what = xasprintf("%s: refused with '%s'", name, want);
        ok(coco_eval_load_json(ev, p, &err) < 0, what);
        like(err.msg, want, "  message");
}

static void test_errors(void)
{
        _cleanup_(coco_index_freep) struct coco_index *gt = load_gt("err.json", GT_ONE);
        expect_add_error(gt, (struct coco_det){ 3, 5, { 0, 0, 1, 1 }, 0.5 }, "unknown image id 3", "unknown image id");
        expect_add_error(gt, (struct coco_det){ 1, 6, { 0, 0, 1, 1 }, 0.5 }, "unknown category id 6", "unknown category");
        expect_add_error(gt, (struct coco_det){ 1, 5, { 0, 0, -1, 1 }, 0.5 }, "negative bbox size", "negative width");
        expect_add_error(gt, (struct coco_det){ 1, 5, { 0, 0, 1, 1 }, NAN }, "score is NaN", "NaN score");
        expect_add_error(gt, (struct coco_det){ 1, 5, { 0, INFINITY, 1, 1 }, 0.5 }, "bbox is not finite", "infinite box");
        expect_file_error(gt, "d1.json", "[\n{\"image_id\": 1, \"category_id\": 5, \"bbox\": [0, 0, 1, 1], \"score\": 0.5},\n"
                          "{\"image_id\": 1, \"category_id\": 5 \"bbox\": [0, 0, 1, 1], \"score\": 0.5}\n]",
                          "d1.json:3:");
        expect_file_error(gt, "d2.json", "{\"image_id\": 1}", "results are not a JSON list");
        expect_file_error(gt, "d3.json", "[\n\n{\"image_id\": 7, \"category_id\": 5, \"bbox\": [0, 0, 1, 1], \"score\": 0.5}]",
                          "d3.json:3: detection 0: unknown image id 7");
        expect_file_error(gt, "d4.json", "[{\"image_id\": 1, \"category_id\": 5, \"bbox\": [0, 0, 1, 1]}]",
                          "d4.json:1: detection 0: 'score'");
        expect_file_error(gt, "d5.json", "[{\"image_id\": \"1\", \"category_id\": 5, \"bbox\": [0, 0, 1, 1], \"score\": 1}]",
                          "'image_id': expected an integer");
        expect_file_error(gt, "d6.json", "[{\"image_id\": 1, \"category_id\": 5, \"bbox\": [0, 0, 1, 1], \"score\": NaN}]",
                          "d6.json:1:");
        expect_file_error(gt, "d7.json", "[{\"image_id\": 1, \"category_id\": 5, \"bbox\": [0, 0, 1, -2], \"score\": 1}]",
                          "negative bbox size");
        expect_file_error(gt, "d8.json", "", "d8.json' is empty");
        _cleanup_free_ char *ok_file = write_tmp("ok.json", "[]");
        _cleanup_(coco_eval_freep) struct coco_eval *ev = coco_eval_new(gt, 1);
        struct bd_err err;
        double s[12];
        ok(coco_eval_load_json(ev, ok_file, &err) == 0 && coco_eval_accumulate(ev, s, &err) == 0 && s[0] == 0,
           "an empty result list evaluates to AP 0");
}

int main(void)
{
        if (!mkdtemp(tmpdir))
                return 1;
        test_constants();
        test_hand_checked();
        for (uint64_t seed = 1; seed <= 4; seed++)
                test_merge(seed);
        test_errors();
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
                printf("# cannot remove %s\n", tmpdir);
        return done_testing();
}

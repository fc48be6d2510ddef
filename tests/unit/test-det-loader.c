/* test-det-loader.c: the Mask R-CNN input pipeline: sizes, boxes and pixels
 * against torchvision 0.14 and the MLPerf reference's arithmetic
 * (det-golden.h, from tests/det-golden.py), exact flips, determinism across
 * threads and seeds, shards, aspect groups, padding, targets against the
 * annotations, RLE masks, synthetic mode and bad data. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "buf.h"
#include "coco-index.h"
#include "det-golden.h"
#include "det-loader.h"
#include "fs.h"
#include "jpeg.h"
#include "macro.h"
#include "rng.h"
#include "synth.h"
#include "tap.h"

static char tmpdir[] = "/tmp/test-det-loader.XXXXXX";
static char *shapes_dir;        /* synth: shapes, polygons, crowds, empty images */
static char *rects_dir;         /* one rectangle per image, one of them an RLE mask */

static void die(const char *what, const struct bd_err *err)
{
        printf("Bail out! %s: %s\n", what, err->msg);
        exit(1);
}

static const char *conv_name(enum det_convention c)
{
        return c == DET_MLPERF ? "MLPerf" : "torchvision";
}

/* ---- sizes, boxes and pixels against the references ------------------------------------------ */

static void test_sizes(void)
{
        for (int ci = 0; ci < 2; ci++) {
                enum det_convention c = ci ? DET_TORCHVISION : DET_MLPERF;
                int bad_size = 0, bad_keep = 0, bad_box = 0, clamped = 0, n = (int)ARRAY_SIZE(golden_sizes);
                for (int i = 0; i < n; i++) {
                        const struct golden_size *g = &golden_sizes[i];
                        int w, h;
                        det_resize_size(c, g->w, g->h, g->min, g->max, &w, &h);
                        int ww = ci ? g->tv_w : g->mlperf_w, wh = ci ? g->tv_h : g->mlperf_h;
                        if (w != ww || h != wh) {
                                bad_size++;
                                printf("#   %s %dx%d (%d, %d): %dx%d, want %dx%d\n", conv_name(c), g->w, g->h, g->min,
                                       g->max, w, h, ww, wh);
                        }
                        int lng = w > h ? w : h, shrt = w > h ? h : w;
                        clamped += lng >= g->max - 1 && shrt < g->min;
                        /* a box converted, clipped and scaled: the reference's float32 values */
                        float b[4];
                        bool keep = det_convert_box(c, g->box, g->w, g->h, b);
                        bad_keep += keep != (ci ? g->tv_keep : g->mlperf_keep);
                        float rx = det_resize_ratio(c, g->w, ww), ry = det_resize_ratio(c, g->h, wh);
                        const float *want = ci ? g->tv_box : g->mlperf_box;
                        float got[4] = { b[0] * rx, b[1] * ry, b[2] * rx, b[3] * ry };
                        for (int k = 0; k < 4; k++)
                                if (got[k] != want[k]) {
                                        bad_box++;
                                        printf("#   %s %dx%d box[%d]: %.9g, want %.9g\n", conv_name(c), g->w, g->h, k,
                                               got[k], want[k]);
                                }
                }
                _cleanup_free_ char *what = xasprintf("%s: the resized sizes of %d images as the reference's", conv_name(c), n);
                is_int(bad_size, 0, what);
                ok(clamped >= 8, "  the table clamps the long side at max_size in several cases");
                free(what);
                what = xasprintf("%s: boxes kept or dropped as the reference does", conv_name(c));
                is_int(bad_keep, 0, what);
                free(what);
                what = xasprintf("%s: boxes converted, clipped and scaled bit for bit", conv_name(c));
                is_int(bad_box, 0, what);
        }
        int w, h;
        det_resize_size(DET_MLPERF, 1000, 800, 800, 1333, &w, &h);
        ok(w == 1000 && h == 800, "MLPerf: a short side at the size already: not resized");
        ok(det_resize_ratio(DET_MLPERF, 800, 800) == 1.0f, "  ratio 1");
}

static float max_abs(const float *a, const float *b, size_t n, size_t *n_diff)
{
        float m = 0;
        *n_diff = 0;
        for (size_t i = 0; i < n; i++) {
                float d = fabsf(a[i] - b[i]);
                m = d > m ? d : m;
                *n_diff += a[i] != b[i];
        }
        return m;
}

static void test_pixels(void)
{
        static const float mean_bgr[3] = { 102.9801f, 115.9465f, 122.7717f };
        struct det_render_scratch s = { 0 }, p = { 0 };
        p.portable = 1;
        for (size_t i = 0; i < ARRAY_SIZE(golden_images); i++) {
                const struct golden_image *g = &golden_images[i];
                /* torchvision: its GeneralizedRCNNTransform's output; it normalises
                 * first and torch sums the four taps in doubles with float
                 * products of the two axes' weights, here two float passes
                 * and the normalisation after: a few float ulps apart */
                int w, h;
                det_resize_size(DET_TORCHVISION, g->w, g->h, g->min, g->max, &w, &h);
                int pw = (w + 31) / 32 * 32, ph = (h + 31) / 32 * 32;
                ok(w == g->tv_w && h == g->tv_h && pw == g->tv_pw && ph == g->tv_ph,
                   "torchvision: the image's size and its padded size");
                size_t plane = (size_t)pw * ph;
                _cleanup_free_ float *out = xmalloc(3 * plane * sizeof(float));
                _cleanup_free_ float *out2 = xmalloc(3 * plane * sizeof(float));
                _cleanup_free_ float *want = xcalloc(3 * plane, sizeof(float));
                for (int c = 0; c < 3; c++)
                        for (int y = 0; y < h; y++)
                                memcpy(want + c * plane + (size_t)y * pw, g->tv + ((size_t)c * h + y) * w, w * sizeof(float));
                for (size_t k = 0; k < 3 * plane; k++)
                        out[k] = NAN;
                det_render(&s, DET_TORCHVISION, g->rgb, 3 * (size_t)g->w, g->w, g->h, w, h, false, out, pw, ph);
                size_t nd;
                float m = max_abs(out, want, 3 * plane, &nd);
                _cleanup_free_ char *what = xasprintf("torchvision: %dx%d to %dx%d: the pixels and zeros of the padding "
                                                      "(max difference %.2g, %zu of %zu values not identical)",
                                                      g->w, g->h, w, h, m, nd, 3 * plane);
                ok(m <= 1e-6f, what);
                det_render(&p, DET_TORCHVISION, g->rgb, 3 * (size_t)g->w, g->w, g->h, w, h, false, out2, pw, ph);
                ok(memcmp(out, out2, 3 * plane * sizeof(float)) == 0, "  the portable code gives the same floats");

                /* MLPerf: PIL's bilinear resize, BGR minus the mean; PIL rounds to
                 * 8 bits after each pass, so up to 1 apart */
                det_resize_size(DET_MLPERF, g->w, g->h, g->min, g->max, &w, &h);
                ok(w == g->pil_w && h == g->pil_h, "MLPerf: the size PIL was asked for");
                pw = (w + 31) / 32 * 32;
                ph = (h + 31) / 32 * 32;
                plane = (size_t)pw * ph;
                free(out);
                free(out2);
                out = xmalloc(3 * plane * sizeof(float));
                out2 = xmalloc(3 * plane * sizeof(float));
                det_render(&s, DET_MLPERF, g->rgb, 3 * (size_t)g->w, g->w, g->h, w, h, false, out, pw, ph);
                det_render(&p, DET_MLPERF, g->rgb, 3 * (size_t)g->w, g->w, g->h, w, h, false, out2, pw, ph);
                float worst = 0, pad = 0;
                double sum = 0;
                for (int c = 0; c < 3; c++)
                        for (int y = 0; y < ph; y++)
                                for (int x = 0; x < pw; x++) {
                                        float v = out[c * plane + (size_t)y * pw + x];
                                        if (x >= w || y >= h) {
                                                pad = fmaxf(pad, fabsf(v));
                                                continue;
                                        }
                                        float d = fabsf(v + mean_bgr[c] - g->pil[((size_t)y * w + x) * 3 + (2 - c)]);
                                        worst = fmaxf(worst, d);
                                        sum += d;
                                }
                free(what);
                what = xasprintf("MLPerf: %dx%d to %dx%d: PIL's pixels in B, G, R order less the mean, within 1 "
                                 "(largest %.3f, mean %.3f)", g->w, g->h, w, h, worst, sum / (3.0 * w * h));
                ok(worst <= 1.0f && sum / (3.0 * w * h) < 0.35, what);
                is_int(pad, 0, "  zeros in the padding");
                ok(memcmp(out, out2, 3 * plane * sizeof(float)) == 0, "  the portable code gives the same floats");
        }
        det_render_scratch_release(&s);
        det_render_scratch_release(&p);
}

/* A random image rendered flipped is the unflipped one mirrored, exactly,
 * enlarged and reduced, in both conventions, in both code paths. */
static void test_render_flip(void)
{
        struct bd_rng r;
        bd_rng_seed_key(&r, 99);
        int bad = 0, cases = 0;
        for (int portable = 0; portable < 2; portable++) {
                struct det_render_scratch s = { 0 };
                s.portable = portable;
                for (int t = 0; t < 12; t++) {
                        enum det_convention c = t % 2 ? DET_TORCHVISION : DET_MLPERF;
                        int w = 5 + (int)bd_rng_pick(&r, 120), h = 5 + (int)bd_rng_pick(&r, 90);
                        int ow = 3 + (int)bd_rng_pick(&r, 150), oh = 3 + (int)bd_rng_pick(&r, 110);
                        int pw = (ow + 31) / 32 * 32, ph = (oh + 31) / 32 * 32;
                        _cleanup_free_ uint8_t *rgb = xmalloc((size_t)w * h * 3);
                        for (size_t i = 0; i < (size_t)w * h * 3; i++)
                                rgb[i] = (uint8_t)bd_rng_pick(&r, 256);
                        size_t n = 3 * (size_t)pw * ph;
                        _cleanup_free_ float *a = xaligned_alloc(64, n * sizeof(float));
                        _cleanup_free_ float *b = xaligned_alloc(64, n * sizeof(float));
                        det_render(&s, c, rgb, 3 * (size_t)w, w, h, ow, oh, false, a, pw, ph);
                        det_render(&s, c, rgb, 3 * (size_t)w, w, h, ow, oh, true, b, pw, ph);
                        for (int p = 0; p < 3; p++)
                                for (int y = 0; y < ph; y++)
                                        for (int x = 0; x < pw; x++) {
                                                float va = a[((size_t)p * ph + y) * pw + x];
                                                float vb = x < ow && y < oh ? b[((size_t)p * ph + y) * pw + (ow - 1 - x)]
                                                                            : b[((size_t)p * ph + y) * pw + x];
                                                bad += va != vb || ((x >= ow || y >= oh) && va != 0);
                                        }
                        cases++;
                }
                det_render_scratch_release(&s);
        }
        ok(cases == 24, "render: 24 random images and sizes, up and down");
        is_int(bad, 0, "  flipped: the unflipped pixels mirrored, exactly; zeros beyond");
}

static void test_flip_geometry(void)
{
        struct bd_rng r;
        bd_rng_seed_key(&r, 7);
        int twice_bad = 0, formula_bad = 0;
        for (int t = 0; t < 20000; t++) {
                enum det_convention c = t % 2 ? DET_TORCHVISION : DET_MLPERF;
                int W = 1 + (int)bd_rng_pick(&r, 1400);
                double b[4], o[4];
                for (int k = 0; k < 4; k++)     /* float values, as the pipeline's */
                        b[k] = o[k] = (float)bd_rng_range(&r, -5, W + 5);
                if (t % 7 == 0)
                        b[0] = o[0] = (float)bd_rng_range(&r, 0, 0.01);
                det_flip_boxes(c, W, b, 1);
                double off = c == DET_MLPERF ? 1 : 0;
                formula_bad += b[0] != W - o[2] - off || b[2] != W - o[0] - off || b[1] != o[1] || b[3] != o[3];
                det_flip_boxes(c, W, b, 1);
                twice_bad += memcmp(b, o, sizeof(b)) != 0;
                double xy[6] = { o[0], o[1], o[2], o[3], 0, 0.5 }, xy0[6];
                memcpy(xy0, xy, sizeof(xy));
                det_flip_xy(c, W, xy, 3);
                formula_bad += xy[0] != W - off - xy0[0] || xy[1] != xy0[1] || xy[4] != W - off || xy[5] != 0.5;
                det_flip_xy(c, W, xy, 3);
                twice_bad += memcmp(xy, xy0, sizeof(xy)) != 0;
        }
        is_int(formula_bad, 0, "flip: boxes and polygons as the formulas, W - 1 - x (MLPerf) and W - x");
        is_int(twice_bad, 0, "flip: twice gives back the original exactly");
}

/* ---- RLE ------------------------------------------------------------------------------------------------ */

static void rle_decode(const uint32_t *c, size_t n, uint8_t *bits)
{
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
                memset(bits + at, (int)(i & 1), c[i]);
                at += c[i];
        }
}

static int nearest_ref(int dst, int in, int out)
{
        int s = (int)floorf((float)dst * ((float)in / (float)out));
        return s < in - 1 ? s : in - 1;
}

static void test_rle_resize(void)
{
        struct bd_rng r;
        bd_rng_seed_key(&r, 5);
        int bad = 0, bad_first = 0, bad_sum = 0;
        for (int t = 0; t < 200; t++) {
                int w = 1 + (int)bd_rng_pick(&r, 40), h = 1 + (int)bd_rng_pick(&r, 40);
                int ow = 1 + (int)bd_rng_pick(&r, 70), oh = 1 + (int)bd_rng_pick(&r, 70);
                if (t % 10 == 0) {
                        ow = w;
                        oh = 2 * h;
                }
                bool flip = t % 3 == 0;
                _cleanup_free_ uint8_t *src = xmalloc((size_t)w * h);
                for (size_t i = 0; i < (size_t)w * h; i++)
                        src[i] = bd_rng_uniform(&r) < 0.4;
                /* encode, starting with a run of zeros (0 when the first is a 1) */
                _cleanup_free_ uint32_t *cnt = xmalloc(((size_t)w * h + 2) * sizeof(uint32_t));
                size_t n = 0;
                uint8_t cur = 0;
                uint32_t run = 0;
                for (size_t i = 0; i < (size_t)w * h; i++) {
                        if (src[i] != cur) {
                                cnt[n++] = run;
                                run = 0;
                                cur = src[i];
                        }
                        run++;
                }
                cnt[n++] = run;
                uint32_t *out = NULL;
                size_t no = 0, cap = 0;
                long k = det_rle_resize(cnt, (uint32_t)n, w, h, ow, oh, flip, &out, &no, &cap);
                uint64_t sum = 0;
                for (long i = 0; i < k; i++)
                        sum += out[i];
                bad_sum += k < 1 || sum != (uint64_t)ow * oh;
                bad_first += src[0] && !flip && k > 0 && out[0] != 0;
                _cleanup_free_ uint8_t *got = xmalloc((size_t)ow * oh + 1);
                if (k > 0 && sum == (uint64_t)ow * oh) {
                        rle_decode(out, (size_t)k, got);
                        for (int x = 0; x < ow; x++)
                                for (int y = 0; y < oh; y++) {
                                        int sx = nearest_ref(flip ? ow - 1 - x : x, w, ow), sy = nearest_ref(y, h, oh);
                                        bad += got[(size_t)x * oh + y] != src[(size_t)sx * h + sy];
                                }
                }
                free(out);
        }
        is_int(bad_sum, 0, "RLE: the counts cover the resized mask");
        is_int(bad_first, 0, "  starting with a run of zeros");
        is_int(bad, 0, "  nearest-neighbour resampling (and mirroring) of 200 random masks, pixel for pixel");
        uint32_t c[] = { 3, 2 }, *o = NULL;
        size_t no = 0, cap = 0;
        is_int(det_rle_resize(c, 2, 2, 3, 4, 4, false, &o, &no, &cap), -EBADMSG, "  counts that do not cover the mask: an error");
        free(o);
}

/* ---- datasets -------------------------------------------------------------------------------------- */

struct rect_image {
        int w, h;
        int x0, y0, x1, y1;     /* the rectangle, [x0, x1) x [y0, y1) */
};

static const uint8_t rect_bg[3] = { 60, 60, 60 }, rect_fg[3] = { 230, 200, 20 };
static struct rect_image rects[64];
static int n_rects;

enum { EXTRAS = 1 << 0 };

/* n images with one rectangle each, annotated by its box and a polygon (an
 * RLE mask for the third one); categories listed out of id order.  With
 * EXTRAS: an image without annotation, an unknown category, a box of no
 * size, a crowd region, an image whose file is missing, an image whose
 * size is not the annotation's. */
static void make_rects(const char *dir, int n, unsigned flags)
{
        struct bd_err err;
        _cleanup_free_ char *imgs = xasprintf("%s/train2017", dir);
        _cleanup_free_ char *anns = xasprintf("%s/annotations", dir);
        fs_mkdir_p(imgs, 0755);
        fs_mkdir_p(anns, 0755);
        struct bd_buf j = BD_BUF_INIT, a = BD_BUF_INIT;
        buf_init(&j);
        buf_init(&a);
        buf_puts(&j, "{\"images\": [");
        struct bd_rng r;
        bd_rng_seed_key(&r, 42);
        int aid = 1, total = n + (flags & EXTRAS ? 3 : 0);
        for (int i = 0; i < total; i++) {
                struct rect_image im;
                bool wide = i % 3 != 1;
                im.w = wide ? 90 + (int)bd_rng_pick(&r, 60) : 60 + (int)bd_rng_pick(&r, 20);
                im.h = wide ? 50 + (int)bd_rng_pick(&r, 30) : 100 + (int)bd_rng_pick(&r, 40);
                im.x0 = 3 + (int)bd_rng_pick(&r, (uint64_t)im.w / 2);
                im.y0 = 3 + (int)bd_rng_pick(&r, (uint64_t)im.h / 2);
                im.x1 = im.x0 + 14 + (int)bd_rng_pick(&r, (uint64_t)(im.w - im.x0 - 16));
                im.y1 = im.y0 + 14 + (int)bd_rng_pick(&r, (uint64_t)(im.h - im.y0 - 16));
                if (i < (int)ARRAY_SIZE(rects))
                        rects[i] = im;
                uint8_t *rgb = xmalloc((size_t)im.w * im.h * 3);
                for (int y = 0; y < im.h; y++)
                        for (int x = 0; x < im.w; x++)
                                memcpy(rgb + ((size_t)y * im.w + x) * 3,
                                       x >= im.x0 && x < im.x1 && y >= im.y0 && y < im.y1 ? rect_fg : rect_bg, 3);
                uint8_t *jpg;
                size_t len;
                if (jpeg_encode_rgb(rgb, im.w, im.h, 95, &jpg, &len, &err) < 0)
                        die("encode", &err);
                _cleanup_free_ char *p = xasprintf("%s/%d.jpg", imgs, i + 1);
                bool extra = (flags & EXTRAS) && i >= n;
                if (!(extra && i == n + 1))     /* n + 2's file is missing */
                        fs_write_atomic(p, jpg, len, 0644, &err);
                free(jpg);
                free(rgb);
                /* ids in decreasing order: the loader goes by id */
                int id = 1000 - i;
                buf_printf(&j, "%s{\"id\": %d, \"file_name\": \"%d.jpg\", \"width\": %d, \"height\": %d}", i ? "," : "",
                           id, i + 1, extra && i == n + 2 ? im.w + 10 : im.w, im.h);
                if (extra && i == n)
                        continue;       /* no annotation */
                int bw = im.x1 - im.x0, bh = im.y1 - im.y0;
                buf_printf(&a, "%s{\"id\": %d, \"image_id\": %d, \"category_id\": %d, \"bbox\": [%d, %d, %d, %d], "
                           "\"area\": %d, \"iscrowd\": 0, \"segmentation\": ",
                           aid > 1 ? "," : "", aid, id, i % 2 ? 3 : 7, im.x0, im.y0, bw, bh, bw * bh);
                aid++;
                if (i == 2) {
                        /* an RLE mask of the rectangle, column-major, zeros first */
                        buf_printf(&a, "{\"size\": [%d, %d], \"counts\": [", im.h, im.w);
                        uint32_t run = 0;
                        int cur = 0, first = 1;
                        for (int x = 0; x < im.w; x++)
                                for (int y = 0; y < im.h; y++) {
                                        int v = x >= im.x0 && x < im.x1 && y >= im.y0 && y < im.y1;
                                        if (v != cur) {
                                                buf_printf(&a, "%s%u", first ? "" : ", ", run);
                                                first = 0;
                                                run = 0;
                                                cur = v;
                                        }
                                        run++;
                                }
                        buf_printf(&a, "%s%u]}}", first ? "" : ", ", run);
                } else
                        buf_printf(&a, "[[%d, %d, %d, %d, %d, %d, %d, %d], [1.5, 1.5, 2.5, 1.5]]}", im.x0, im.y0, im.x1,
                                   im.y0, im.x1, im.y1, im.x0, im.y1);
                if ((flags & EXTRAS) && i == 0) {
                        buf_printf(&a, ",{\"id\": %d, \"image_id\": %d, \"category_id\": 77, \"bbox\": [1, 1, 5, 5], \"area\": 25}",
                                   aid++, id);
                        buf_printf(&a, ",{\"id\": %d, \"image_id\": %d, \"category_id\": 3, \"bbox\": [2, 2, 0.5, 5], \"area\": 2}",
                                   aid++, id);
                        buf_printf(&a, ",{\"id\": %d, \"image_id\": %d, \"category_id\": 3, \"bbox\": [0, 0, 4, 4], \"area\": 16, "
                                   "\"iscrowd\": 1, \"segmentation\": {\"size\": [%d, %d], \"counts\": [0, %d]}}",
                                   aid++, id, im.h, im.w, im.h * im.w);
                }
        }
        n_rects = total;
        buf_printf(&j, "], \"categories\": [{\"id\": 7, \"name\": \"b\"}, {\"id\": 3, \"name\": \"a\"}], \"annotations\": [%s]}",
                   a.s);
        _cleanup_free_ char *jp = xasprintf("%s/instances_train2017.json", anns);
        if (fs_write_atomic(jp, j.s, j.len, 0644, &err) < 0)
                die("write", &err);
        buf_release(&j);
        buf_release(&a);
}

/* ---- loader helpers ----------------------------------------------------------------------------------- */

static struct det_loader_config config(const char *dir, enum det_loader_mode mode, enum det_convention conv,
                                       uint64_t seed, int threads)
{
        static char images[4096], ann[4096];
        snprintf(images, sizeof(images), "%s/train2017", dir);
        snprintf(ann, sizeof(ann), "%s/annotations/instances_train2017.json", dir);
        return (struct det_loader_config){
                .mode = mode, .convention = conv, .images_dir = images, .annotations = ann, .batch_size = 3,
                .min_size = 96, .max_size = 160, .seed = seed, .threads = threads, .world = 1,
        };
}

static struct det_loader *open_or_die(const struct det_loader_config *c)
{
        struct det_loader *l = NULL;
        struct bd_err err;
        if (det_loader_open(c, &l, &err) < 0)
                die("det_loader_open", &err);
        return l;
}

static const struct det_batch *next_or_die(struct det_loader *l)
{
        const struct det_batch *b;
        struct bd_err err;
        if (det_loader_next(l, &b, &err) < 0)
                die("det_loader_next", &err);
        return b;
}

/* A checksum of everything in a batch a trainer reads. */
static uint64_t batch_hash(const struct det_batch *b)
{
        XXH3_state_t *s = XXH3_createState();
        XXH3_64bits_reset(s);
        XXH3_64bits_update(s, &b->n, sizeof(b->n));
        XXH3_64bits_update(s, &b->height, sizeof(b->height));
        XXH3_64bits_update(s, &b->width, sizeof(b->width));
        XXH3_64bits_update(s, b->images, (size_t)b->n * 3 * b->height * b->width * sizeof(float));
        for (int j = 0; j < b->n; j++) {
                const struct det_sample *sm = &b->samples[j];
                const struct det_target *t = &sm->target;
                int64_t head[6] = { sm->image_id, sm->height, sm->width, sm->flip, sm->substituted, t->n };
                XXH3_64bits_update(s, head, sizeof(head));
                XXH3_64bits_update(s, t->objects, (size_t)t->n * sizeof(*t->objects));
                XXH3_64bits_update(s, t->poly_len, t->n_poly * sizeof(uint32_t));
                XXH3_64bits_update(s, t->xy, t->n_xy * sizeof(double));
                XXH3_64bits_update(s, t->rle, t->n_rle * sizeof(uint32_t));
        }
        uint64_t h = XXH3_64bits_digest(s);
        XXH3_freeState(s);
        return h;
}

static void run_hashes(struct det_loader_config c, long n, uint64_t *out, int64_t *first_ids)
{
        _cleanup_(det_loader_freep) struct det_loader *l = open_or_die(&c);
        for (long i = 0; i < n; i++) {
                const struct det_batch *b = next_or_die(l);
                out[i] = batch_hash(b);
                if (first_ids)
                        first_ids[i] = b->samples[0].image_id;
        }
}

static int cmp_i64(const void *x, const void *y)
{
        int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
        return (a > b) - (a < b);
}

/* ---- the loader --------------------------------------------------------------------------------------- */

static void test_determinism(void)
{
        for (int ci = 0; ci < 2; ci++) {
                enum det_convention conv = ci ? DET_TORCHVISION : DET_MLPERF;
                struct det_loader_config c = config(shapes_dir, DET_LOADER_TRAIN, conv, 7, 1);
                _cleanup_(det_loader_freep) struct det_loader *l = open_or_die(&c);
                long nb0 = det_loader_batches_in_epoch(l, 0), nb1 = det_loader_batches_in_epoch(l, 1);
                l = det_loader_free(l);
                long n = nb0 + nb1 + 1;
                uint64_t a[128], b[128], d[128];
                int64_t ia[128], id[128];
                run_hashes(c, n, a, ia);
                c.threads = 3;
                c.prefetch = 5;
                run_hashes(c, n, b, NULL);
                _cleanup_free_ char *what = xasprintf("%s: 1 thread and 3 threads deliver the same batches, 2 epochs "
                                                      "(%ld and %ld batches)", conv_name(conv), nb0, nb1);
                ok(memcmp(a, b, (size_t)n * sizeof(uint64_t)) == 0, what);
                c.seed = 8;
                run_hashes(c, n, d, id);
                int same = 0, same_ids = 0;
                for (long i = 0; i < n; i++) {
                        same += a[i] == d[i];
                        same_ids += ia[i] == id[i];
                }
                ok(same == 0 && same_ids < n / 2, "  another seed: another order, other batches");
                same = 0;
                for (long i = 0; i < nb0 && i < nb1; i++)
                        same += a[i] == a[nb0 + i];
                is_int(same, 0, "  the second epoch differs from the first (reshuffled, other flips)");

                /* seek: epoch 1 from a fresh loader equals epoch 1 of the stream */
                c.seed = 7;
                c.threads = 2;
                _cleanup_(det_loader_freep) struct det_loader *s = open_or_die(&c);
                next_or_die(s);
                det_loader_seek(s, 1);
                int seek_ok = 1;
                for (long i = 0; i < nb1; i++) {
                        const struct det_batch *bt = next_or_die(s);
                        seek_ok &= bt->epoch == 1 && bt->index == i && bt->batches_in_epoch == nb1 &&
                                   batch_hash(bt) == a[nb0 + i];
                }
                ok(seek_ok, "  det_loader_seek(1) restarts at epoch 1, the same batches");
        }
}

/* The ranks partition each epoch: 2 ranks (58 images, no padding), 3 (2 repeated). */
static void test_shards(void)
{
        for (int world = 2; world <= 3; world++) {
                struct det_loader_config c = config(shapes_dir, DET_LOADER_TRAIN, DET_MLPERF, 11, 2);
                c.world = world;
                for (int epoch = 0; epoch < 2; epoch++) {
                        int64_t ids[4096];
                        size_t n = 0;
                        long usable = 0, per_rank = 0;
                        int bad_index = 0;
                        for (int r = 0; r < world; r++) {
                                c.rank = r;
                                _cleanup_(det_loader_freep) struct det_loader *l = open_or_die(&c);
                                struct det_loader_stats st;
                                det_loader_get_stats(l, &st);
                                usable = st.usable;
                                per_rank = det_loader_images_per_epoch(l);
                                det_loader_seek(l, epoch);
                                long nb = det_loader_batches_in_epoch(l, epoch);
                                for (long i = 0; i < nb; i++) {
                                        const struct det_batch *b = next_or_die(l);
                                        bad_index += b->epoch != epoch || b->index != i;
                                        for (int j = 0; j < b->n; j++)
                                                ids[n++] = b->samples[j].image_id;
                                }
                        }
                        qsort(ids, n, sizeof(int64_t), cmp_i64);
                        size_t distinct = 0;
                        for (size_t i = 0; i < n; i++)
                                distinct += i == 0 || ids[i] != ids[i - 1];
                        _cleanup_free_ char *what = xasprintf("%d ranks, epoch %d: together they see every usable image "
                                                              "(%ld)", world, epoch, usable);
                        is_int(distinct, usable, what);
                        free(what);
                        what = xasprintf("  each its share of %ld: disjoint but for the padding (%ld repeated)", per_rank,
                                         per_rank * world - usable);
                        ok(n == (size_t)(per_rank * world) && n - distinct == (size_t)(per_rank * world - usable), what);
                        is_int(bad_index, 0, "  batches numbered within the epoch");
                }
        }
}

/* Every batch holds one orientation; padded sizes; true sizes; zeros. */
static void test_batches(void)
{
        for (int ci = 0; ci < 2; ci++) {
                enum det_convention conv = ci ? DET_TORCHVISION : DET_MLPERF;
                struct det_loader_config c = config(shapes_dir, DET_LOADER_TRAIN, conv, 3, 2);
                _cleanup_(det_loader_freep) struct det_loader *l = open_or_die(&c);
                long nb = det_loader_batches_in_epoch(l, 0) + det_loader_batches_in_epoch(l, 1);
                int mixed = 0, wide = 0, tall = 0, bad_pad = 0, bad_size = 0, nonzero = 0, partial = 0, flips = 0, n = 0;
                for (long i = 0; i < nb; i++) {
                        const struct det_batch *b = next_or_die(l);
                        int orient = -1, H = 0, W = 0;
                        partial += b->n < c.batch_size;
                        for (int j = 0; j < b->n; j++) {
                                const struct det_sample *s = &b->samples[j];
                                int o = s->orig_height >= s->orig_width;
                                mixed += orient >= 0 && o != orient;
                                orient = o;
                                int w, h;
                                det_resize_size(conv, s->orig_width, s->orig_height, c.min_size, c.max_size, &w, &h);
                                bad_size += s->width != w || s->height != h ||
                                            s->scale_x != det_resize_ratio(conv, s->orig_width, w) ||
                                            s->scale_y != det_resize_ratio(conv, s->orig_height, h);
                                H = s->height > H ? s->height : H;
                                W = s->width > W ? s->width : W;
                                const float *img = b->images + (size_t)j * 3 * b->height * b->width;
                                for (int p = 0; p < 3; p++)
                                        for (int y = 0; y < b->height; y++)
                                                for (int x = 0; x < b->width; x++) {
                                                        float v = img[((size_t)p * b->height + y) * b->width + x];
                                                        if (x >= s->width || y >= s->height)
                                                                bad_pad += v != 0;
                                                        else
                                                                nonzero += v != 0;
                                                }
                                flips += s->flip;
                                n++;
                        }
                        wide += orient == 0;
                        tall += orient == 1;
                        bad_pad += b->height % 32 || b->width % 32 || b->height < H || b->width < W || b->height >= H + 32 ||
                                   b->width >= W + 32;
                }
                _cleanup_free_ char *what = xasprintf("%s: every batch of one orientation (%d wide, %d tall batches)",
                                                      conv_name(conv), wide, tall);
                ok(mixed == 0 && wide > 2 && tall > 2, what);
                ok(partial >= 1, "  groups end with smaller batches");
                is_int(bad_pad, 0, "  padded to the batch's largest height and width rounded up to 32, with zeros");
                ok(nonzero > 0, "  (the images themselves are not zeros)");
                is_int(bad_size, 0, "  each sample's true size and scales are the resize's");
                ok(flips > n * 3 / 10 && flips < n * 7 / 10, "  about half the images flipped");
        }
        /* without grouping, batches follow the sampler: orientations mix */
        struct det_loader_config c = config(shapes_dir, DET_LOADER_TRAIN, DET_MLPERF, 3, 2);
        c.flags = DET_LOADER_NO_GROUPING;
        _cleanup_(det_loader_freep) struct det_loader *l = open_or_die(&c);
        int mixed = 0;
        for (long i = 0; i < det_loader_batches_in_epoch(l, 0); i++) {
                const struct det_batch *b = next_or_die(l);
                for (int j = 1; j < b->n; j++)
                        mixed += (b->samples[j].orig_height >= b->samples[j].orig_width) !=
                                 (b->samples[0].orig_height >= b->samples[0].orig_width);
        }
        ok(mixed > 0, "DET_LOADER_NO_GROUPING: orientations mix");
}

/* The same images flipped and not: pixels mirrored, coordinates by the formulas. */
static void test_flips(void)
{
        for (int ci = 0; ci < 2; ci++) {
                enum det_convention conv = ci ? DET_TORCHVISION : DET_MLPERF;
                double off = ci ? 0 : 1;
                struct det_loader_config c = config(shapes_dir, DET_LOADER_TRAIN, conv, 4, 2);
                c.flags = DET_LOADER_NO_FLIP;
                _cleanup_(det_loader_freep) struct det_loader *a = open_or_die(&c);
                c.flags = DET_LOADER_FLIP_ALL;
                _cleanup_(det_loader_freep) struct det_loader *f = open_or_die(&c);
                int pix_bad = 0, box_bad = 0, poly_bad = 0, twice_bad = 0, not_flipped = 0, objects = 0, points = 0;
                for (long i = 0; i < det_loader_batches_in_epoch(a, 0); i++) {
                        const struct det_batch *ba = next_or_die(a), *bf = next_or_die(f);
                        for (int j = 0; j < ba->n; j++) {
                                const struct det_sample *sa = &ba->samples[j], *sf = &bf->samples[j];
                                not_flipped += sa->flip || !sf->flip || sa->image_id != sf->image_id;
                                int W = sa->width;
                                size_t plane = (size_t)ba->height * ba->width;
                                for (int p = 0; p < 3; p++)
                                        for (int y = 0; y < sa->height; y++)
                                                for (int x = 0; x < W; x++)
                                                        pix_bad += ba->images[j * 3 * plane + p * plane + (size_t)y * ba->width + x] !=
                                                                   bf->images[j * 3 * plane + p * plane + (size_t)y * ba->width + W - 1 - x];
                                const struct det_target *ta = &sa->target, *tf = &sf->target;
                                box_bad += ta->n != tf->n;
                                for (int k = 0; k < ta->n && k < tf->n; k++) {
                                        const struct det_object *oa = &ta->objects[k], *of = &tf->objects[k];
                                        box_bad += of->box[0] != W - off - oa->box[2] || of->box[2] != W - off - oa->box[0] ||
                                                   of->box[1] != oa->box[1] || of->box[3] != oa->box[3] || of->label != oa->label;
                                        double back[4];
                                        memcpy(back, of->box, sizeof(back));
                                        det_flip_boxes(conv, W, back, 1);
                                        twice_bad += memcmp(back, oa->box, sizeof(back)) != 0;
                                        objects++;
                                        if (oa->mask != DET_MASK_POLYGONS || of->n != oa->n) {
                                                poly_bad += oa->mask != of->mask;
                                                continue;
                                        }
                                        size_t len = 0;
                                        for (uint32_t q = 0; q < oa->n; q++)
                                                len += ta->poly_len[oa->first + q];
                                        const double *xa = ta->xy + oa->xy_first, *xf = tf->xy + of->xy_first;
                                        for (size_t v = 0; v < len; v += 2) {
                                                poly_bad += xf[v] != W - off - xa[v] || xf[v + 1] != xa[v + 1];
                                                double bk[2] = { xf[v], xf[v + 1] };
                                                det_flip_xy(conv, W, bk, 1);
                                                twice_bad += bk[0] != xa[v] || bk[1] != xa[v + 1];
                                                points++;
                                        }
                                }
                        }
                }
                _cleanup_free_ char *what = xasprintf("%s: FLIP_ALL and NO_FLIP: the same images (%d objects, %d "
                                                      "polygon points)", conv_name(conv), objects, points);
                ok(not_flipped == 0 && objects > 50 && points > 500, what);
                is_int(pix_bad, 0, "  a flipped image's pixels are the unflipped ones mirrored");
                free(what);
                what = xasprintf("  boxes: x1' = W%s - x2, x2' = W%s - x1, exactly", off ? " - 1" : "", off ? " - 1" : "");
                is_int(box_bad, 0, what);
                free(what);
                what = xasprintf("  polygons: x' = W%s - x, exactly", off ? " - 1" : "");
                is_int(poly_bad, 0, what);
                is_int(twice_bad, 0, "  flipped twice: the unflipped values exactly");
        }
}

/* Targets against the annotation file (evaluation: no flip). */
static void test_targets(void)
{
        for (int ci = 0; ci < 2; ci++) {
                enum det_convention conv = ci ? DET_TORCHVISION : DET_MLPERF;
                struct det_loader_config c = config(shapes_dir, DET_LOADER_EVAL, conv, 1, 2);
                _cleanup_(det_loader_freep) struct det_loader *l = open_or_die(&c);
                const struct coco_index *x = det_loader_index(l);
                int bad_obj = 0, bad_poly = 0, bad_label = 0, wrong_ann = 0, flips = 0, polys = 0, n_img = 0, no_ann = 0;
                int64_t prev_id[2] = { -1, -1 };
                int order_bad = 0, crowds = 0;
                for (long i = 0; i < det_loader_batches_in_epoch(l, 0); i++) {
                        const struct det_batch *b = next_or_die(l);
                        for (int j = 0; j < b->n; j++) {
                                const struct det_sample *s = &b->samples[j];
                                n_img++;
                                flips += s->flip;
                                long ii = coco_index_find_image(x, s->image_id);
                                const struct coco_image *im = &x->images[ii];
                                no_ann += im->ann_count == 0;
                                /* the sampler's order is the ids', each group keeps it */
                                int g = s->orig_height >= s->orig_width;
                                order_bad += s->image_id < prev_id[g];
                                prev_id[g] = s->image_id;
                                float rx = (float)s->scale_x, ry = (float)s->scale_y;
                                int k = 0;
                                for (uint32_t a = 0; a < im->ann_count; a++) {
                                        const struct coco_ann *an = &x->anns[im->ann_first + a];
                                        float bx[4];
                                        if (an->iscrowd) {
                                                crowds++;
                                                continue;
                                        }
                                        if (!det_convert_box(conv, an->bbox, (int)im->width, (int)im->height, bx))
                                                continue;
                                        if (k >= s->target.n) {
                                                bad_obj++;
                                                break;
                                        }
                                        const struct det_object *o = &s->target.objects[k++];
                                        wrong_ann += o->ann_id != an->id;
                                        bad_obj += o->box[0] != (double)(bx[0] * rx) || o->box[1] != (double)(bx[1] * ry) ||
                                                   o->box[2] != (double)(bx[2] * rx) || o->box[3] != (double)(bx[3] * ry);
                                        bad_label += det_loader_label_category(l, o->label) != an->category_id;
                                        struct coco_polygons P;
                                        if (coco_ann_polygons(x, an, &P) < 0) {
                                                bad_poly += o->mask == DET_MASK_POLYGONS;
                                                continue;
                                        }
                                        bad_poly += o->mask != DET_MASK_POLYGONS || o->n != P.n;
                                        const double *got = s->target.xy + o->xy_first;
                                        size_t at = 0;
                                        for (uint32_t p = 0; p < P.n && p < o->n; p++) {
                                                bad_poly += s->target.poly_len[o->first + p] != P.len[p];
                                                for (uint32_t v = 0; v < P.len[p]; v += 2, at += 2)
                                                        bad_poly += got[at] != (double)((float)P.xy[at] * rx) ||
                                                                    got[at + 1] != (double)((float)P.xy[at + 1] * ry);
                                                polys++;
                                        }
                                }
                                bad_obj += k != s->target.n;
                        }
                }
                _cleanup_free_ char *what = xasprintf("%s evaluation: every image of the file once (%zu), empty ones too",
                                                      conv_name(conv), x->n_images);
                ok(n_img == (int)x->n_images && no_ann > 0 && flips == 0, what);
                is_int(bad_obj, 0, "  objects: the annotations less crowds and empty boxes, boxes as the reference's floats");
                ok(crowds > 0 && wrong_ann == 0, "  crowd regions left out, the others in the file's order");
                is_int(bad_label, 0, "  labels map back to their category ids");
                ok(polys > 100, "  many polygons checked");
                is_int(bad_poly, 0, "  polygons: the JSON's vertices as floats times the ratios");
                is_int(order_bad, 0, "  in id order within each orientation");
        }
        /* two ranks: each image once, none twice */
        struct det_loader_config e = config(shapes_dir, DET_LOADER_EVAL, DET_MLPERF, 1, 2);
        e.world = 2;
        int64_t ids[4096];
        size_t n = 0, total = 0;
        for (int r = 0; r < 2; r++) {
                e.rank = r;
                _cleanup_(det_loader_freep) struct det_loader *l = open_or_die(&e);
                total = det_loader_index(l)->n_images;
                for (int pass = 0; pass < 2; pass++)
                        for (long i = 0; i < det_loader_batches_in_epoch(l, pass); i++) {
                                const struct det_batch *b = next_or_die(l);
                                for (int j = 0; j < b->n && pass == 0; j++)
                                        ids[n++] = b->samples[j].image_id;
                        }
        }
        qsort(ids, n, sizeof(int64_t), cmp_i64);
        int dup = 0;
        for (size_t i = 1; i < n; i++)
                dup += ids[i] == ids[i - 1];
        ok(n == total && dup == 0, "evaluation on 2 ranks: every image once, two passes each");

        /* labels follow the category ids, not the file's order (rects: 7 then 3) */
        struct det_loader_config c = config(rects_dir, DET_LOADER_EVAL, DET_MLPERF, 1, 1);
        _cleanup_(det_loader_freep) struct det_loader *l = open_or_die(&c);
        ok(det_loader_num_labels(l) == 2 && det_loader_label_category(l, 1) == 3 && det_loader_label_category(l, 2) == 7 &&
           det_loader_label_category(l, 3) == -1, "labels 1..K in category id order, 0 the background");
        l = det_loader_free(l);
        c.flags = DET_LOADER_CATEGORY_LABELS;
        l = open_or_die(&c);
        ok(det_loader_num_labels(l) == 7 && det_loader_label_category(l, 7) == 7 && det_loader_label_category(l, 5) == -1,
           "DET_LOADER_CATEGORY_LABELS: labels are the category ids");
}

/* Training keeps the images the reference keeps. */
static void test_filter(void)
{
        struct det_loader_config c = config(shapes_dir, DET_LOADER_TRAIN, DET_MLPERF, 1, 2);
        _cleanup_(det_loader_freep) struct det_loader *l = open_or_die(&c);
        const struct coco_index *x = det_loader_index(l);
        long want = 0, empty = 0;
        for (size_t i = 0; i < x->n_images; i++) {
                const struct coco_image *im = &x->images[i];
                bool valid = false;
                for (uint32_t a = 0; a < im->ann_count; a++) {
                        const struct coco_ann *an = &x->anns[im->ann_first + a];
                        valid |= an->label >= 0 && an->bbox[2] > 1 && an->bbox[3] > 1;
                }
                want += valid;
                empty += !valid;
        }
        struct det_loader_stats st;
        det_loader_get_stats(l, &st);
        ok(st.usable == want && st.empty_images == empty && empty > 0,
           "training: the images with an annotation of width and height > 1 (crowds count), the others skipped");
        ok(st.crowd > 0, "  crowd objects counted");
        int bad = 0;
        for (long i = 0; i < det_loader_batches_in_epoch(l, 0); i++) {
                const struct det_batch *b = next_or_die(l);
                for (int j = 0; j < b->n; j++) {
                        const struct coco_image *im = &x->images[coco_index_find_image(x, b->samples[j].image_id)];
                        bad += im->ann_count == 0;
                }
        }
        is_int(bad, 0, "  no image without annotations delivered");
}

/* The rectangle's pixels lie inside its box, the background outside, through
 * resizes and flips; the RLE mask follows the pixels too. */
static void test_boxes_follow_pixels(void)
{
        for (int ci = 0; ci < 2; ci++) {
                enum det_convention conv = ci ? DET_TORCHVISION : DET_MLPERF;
                struct det_loader_config c = config(rects_dir, DET_LOADER_TRAIN, conv, 5, 2);
                c.min_size = 120;
                c.max_size = 200;
                _cleanup_(det_loader_freep) struct det_loader *l = open_or_die(&c);
                int in_bad = 0, out_bad = 0, n_in = 0, n_out = 0, flipped = 0, rle_seen = 0, rle_bad = 0, rle_px = 0;
                long nb = det_loader_batches_in_epoch(l, 0) + det_loader_batches_in_epoch(l, 1);
                for (long i = 0; i < nb; i++) {
                        const struct det_batch *b = next_or_die(l);
                        for (int j = 0; j < b->n; j++) {
                                const struct det_sample *s = &b->samples[j];
                                flipped += s->flip;
                                if (s->target.n != 1) {
                                        in_bad++;
                                        continue;
                                }
                                const struct det_object *o = &s->target.objects[0];
                                size_t plane = (size_t)b->height * b->width;
                                const float *red = b->images + j * 3 * plane + (ci ? 0 : 2) * plane;
                                double m = 2 + s->scale_x;
                                double my = 2 + s->scale_y;
                                _cleanup_free_ uint8_t *mask = NULL;
                                if (o->mask == DET_MASK_RLE) {
                                        rle_seen++;
                                        mask = xmalloc((size_t)s->width * s->height);
                                        rle_decode(s->target.rle + o->first, o->n, mask);
                                }
                                for (int y = 0; y < s->height; y++)
                                        for (int x = 0; x < s->width; x++) {
                                                double xc = x + 0.5, yc = y + 0.5;
                                                bool in = xc > o->box[0] + m && xc < o->box[2] - m && yc > o->box[1] + my &&
                                                          yc < o->box[3] - my;
                                                bool out = xc < o->box[0] - m || xc > o->box[2] + m || yc < o->box[1] - my ||
                                                           yc > o->box[3] + my;
                                                float v = red[(size_t)y * b->width + x];
                                                float r = ci ? v * 0.229f + 0.485f : (v + 122.7717f) / 255.f;
                                                if (in) {
                                                        n_in++;
                                                        in_bad += fabsf(r - rect_fg[0] / 255.f) > 0.08f;
                                                } else if (out) {
                                                        n_out++;
                                                        out_bad += fabsf(r - rect_bg[0] / 255.f) > 0.08f;
                                                }
                                                if (mask && (in || out)) {
                                                        rle_px++;
                                                        rle_bad += mask[(size_t)x * s->height + y] != in;
                                                }
                                        }
                        }
                }
                _cleanup_free_ char *what = xasprintf("%s: rectangles through resizes and %d flips: many pixels checked",
                                                      conv_name(conv), flipped);
                ok(n_in > 5000 && n_out > 5000 && flipped > 3, what);
                is_int(in_bad, 0, "  inside every box, the rectangle");
                is_int(out_bad, 0, "  outside, the background");
                ok(rle_seen > 0 && rle_px > 500, "  a non-crowd RLE mask resized with its image");
                is_int(rle_bad, 0, "  its ones inside the box, zeros outside");
        }
}

static void test_synthetic(void)
{
        struct det_loader_config c = { .mode = DET_LOADER_SYNTHETIC, .batch_size = 2, .min_size = 64, .max_size = 100,
                                       .seed = 2, .threads = 1, .synthetic_images = 30, .synthetic_classes = 5 };
        uint64_t a[40], b[40];
        run_hashes(c, 40, a, NULL);
        c.threads = 3;
        run_hashes(c, 40, b, NULL);
        ok(memcmp(a, b, sizeof(a)) == 0, "synthetic: the same batches on 1 and 3 threads");
        _cleanup_(det_loader_freep) struct det_loader *l = open_or_die(&c);
        ok(det_loader_index(l) == NULL, "synthetic: no annotation index, no disk");
        int bad = 0, objects = 0, flips = 0, seen = 0;
        for (int i = 0; i < 30; i++) {
                const struct det_batch *bt = next_or_die(l);
                bad += bt->height % 32 || bt->width % 32;
                for (int j = 0; j < bt->n; j++) {
                        const struct det_sample *s = &bt->samples[j];
                        int w, h;
                        det_resize_size(DET_MLPERF, s->orig_width, s->orig_height, 64, 100, &w, &h);
                        bad += s->width != w || s->height != h || s->width > bt->width || s->height > bt->height;
                        flips += s->flip;
                        seen++;
                        for (int k = 0; k < s->target.n; k++) {
                                const struct det_object *o = &s->target.objects[k];
                                objects++;
                                bad += !(o->box[0] >= -1 && o->box[2] <= s->width && o->box[0] < o->box[2] && o->box[1] < o->box[3]) ||
                                       o->label < 1 || o->label > 5 || o->mask != DET_MASK_POLYGONS || o->n != 1 ||
                                       s->target.poly_len[o->first] < 6;
                        }
                }
        }
        ok(objects > 50 && flips > 0 && flips < seen, "synthetic: objects with polygons, some flipped");
        is_int(bad, 0, "  sizes, padding, boxes, labels and polygons of the right shapes");
}

static int warnings, open_warnings;
static char last_warning[1024];
static void count_warning(void *ctx, const char *msg)
{
        warnings++;
        open_warnings += !strstr(msg, "JPEG") && !strstr(msg, "annotations say");
        snprintf(last_warning, sizeof(last_warning), "%s", msg);
        printf("#   warning: %s\n", msg);
}

static void test_bad_data(void)
{
        _cleanup_free_ char *dir = xasprintf("%s/bad", tmpdir);
        make_rects(dir, 10, EXTRAS);
        /* one JPEG truncated, one garbage (ids 997 and 995) */
        _cleanup_free_ char *p4 = xasprintf("%s/train2017/4.jpg", dir);
        _cleanup_free_ char *p6 = xasprintf("%s/train2017/6.jpg", dir);
        struct stat st;
        stat(p4, &st);
        if (truncate(p4, st.st_size / 2) < 0)
                printf("# truncate: %s\n", strerror(errno));
        struct bd_err err;
        fs_write_atomic(p6, "\xff\xd8 this is not a JPEG \xff\xd9", 24, 0644, &err);
        struct det_loader_config c = config(dir, DET_LOADER_TRAIN, DET_MLPERF, 1, 2);
        c.warn = count_warning;
        c.max_warnings = 3;
        warnings = open_warnings = 0;
        _cleanup_(det_loader_freep) struct det_loader *l = open_or_die(&c);
        struct det_loader_stats s;
        det_loader_get_stats(l, &s);
        is_int(s.images, 13, "bad data: 13 images in the file");
        is_int(s.missing_files, 1, "  a missing file counted");
        is_int(s.empty_images, 1, "  an image without annotation counted");
        is_int(s.unknown_category, 1, "  an unknown category counted");
        is_int(s.small_boxes, 1, "  a box of width 0.5 dropped");
        is_int(s.crowd, 1, "  a crowd region left out");
        is_int(s.rle_objects, 1, "  an RLE mask counted");
        is_int(s.usable, 11, "  11 usable images (the corrupt ones are found later)");
        is_int(open_warnings, 3, "  one warning each for the missing file, the empty image, the category");
        int substituted = 0, ids_ok = 1, full = 0, batches = 0;
        for (int e = 0; e < 3; e++)
                for (long i = 0; i < det_loader_batches_in_epoch(l, e); i++) {
                        const struct det_batch *b = next_or_die(l);
                        full += b->n;
                        batches++;
                        for (int j = 0; j < b->n; j++) {
                                substituted += b->samples[j].substituted;
                                int64_t id = b->samples[j].image_id;
                                ids_ok &= id != 997 && id != 995 && id != 1000 - 12;
                        }
                }
        det_loader_get_stats(l, &s);
        ok(batches > 6 && full == 3 * 11, "  3 epochs, every planned place filled, no crash");
        ok(ids_ok, "  the corrupt images and the one of another size never delivered");
        is_int(s.corrupt_images, 3, "  the truncated, the garbage and the mis-sized JPEG counted once each");
        ok(substituted > 0 && s.substitutions >= substituted, "  their places taken by other images");
        is_int(warnings, 6, "  with one warning each");
        like(last_warning, ".jpg", "  naming the file");
        l = det_loader_free(l);

        /* evaluation: the corrupt images come as blank, flagged samples */
        c.mode = DET_LOADER_EVAL;
        l = open_or_die(&c);
        int failed = 0, seen = 0, blank_bad = 0;
        for (long i = 0; i < det_loader_batches_in_epoch(l, 0); i++) {
                const struct det_batch *b = next_or_die(l);
                for (int j = 0; j < b->n; j++) {
                        const struct det_sample *sm = &b->samples[j];
                        seen++;
                        if (!sm->failed)
                                continue;
                        failed += sm->image_id == 997 || sm->image_id == 995 || sm->image_id == 988 ? 1 : 100;
                        size_t n = 3 * (size_t)b->height * b->width;
                        for (size_t k = 0; k < n; k++)
                                blank_bad += b->images[j * n + k] != 0;
                        blank_bad += sm->target.n != 0;
                }
        }
        is_int(seen, 12, "evaluation over bad data: every present image once (the empty one too)");
        is_int(failed, 3, "  the three bad ones flagged failed");
        is_int(blank_bad, 0, "  blank, without objects");
        l = det_loader_free(l);

        /* nothing decodable: an error from det_loader_next, not a hang */
        _cleanup_free_ char *dir2 = xasprintf("%s/allbad", tmpdir);
        make_rects(dir2, 6, 0);
        for (int i = 1; i <= 6; i++) {
                _cleanup_free_ char *p = xasprintf("%s/train2017/%d.jpg", dir2, i);
                fs_write_atomic(p, "garbage", 7, 0644, &err);
        }
        c = config(dir2, DET_LOADER_TRAIN, DET_MLPERF, 1, 2);
        l = open_or_die(&c);
        const struct det_batch *b;
        int r = det_loader_next(l, &b, &err);
        is_int(r, -ENODATA, "all JPEGs corrupt: det_loader_next fails");
        like(err.msg, "no image of the dataset can be decoded", "  saying so");
        l = det_loader_free(l);

        /* nothing usable at all: an error when opening */
        for (int i = 1; i <= 6; i++) {
                _cleanup_free_ char *p = xasprintf("%s/train2017/%d.jpg", dir2, i);
                unlink(p);
        }
        r = det_loader_open(&c, &l, &err);
        is_int(r, -ENODATA, "all files missing: det_loader_open fails");
        like(err.msg, "nothing usable", "  saying so");
        c.rank = 2;
        c.world = 2;
        is_int(det_loader_open(&c, &l, &err), -EINVAL, "a rank outside the world: an error");
}

int main(void)
{
        if (!mkdtemp(tmpdir))
                return 1;
        test_sizes();
        test_pixels();
        test_render_flip();
        test_flip_geometry();
        test_rle_resize();
        shapes_dir = xasprintf("%s/shapes", tmpdir);
        rects_dir = xasprintf("%s/rects", tmpdir);
        struct synth_config sc;
        synth_config_init(&sc);
        sc.train_images = 60;
        sc.val_images = 2;
        sc.size = 128;
        sc.classes = 4;
        sc.seed = 5;
        sc.threads = 2;
        sc.crowd_fraction = 0.15;
        sc.empty_fraction = 0.08;
        struct bd_err err;
        if (synth_write(&sc, shapes_dir, NULL, &err) < 0)
                die("synth", &err);
        make_rects(rects_dir, 16, 0);
        test_determinism();
        test_shards();
        test_batches();
        test_flips();
        test_targets();
        test_filter();
        test_boxes_follow_pixels();
        test_synthetic();
        test_bad_data();
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
                printf("# cannot remove %s\n", tmpdir);
        free(shapes_dir);
        free(rects_dir);
        return done_testing();
}

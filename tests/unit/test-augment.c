/* test-augment.c: the SSD crop sampler's constraints, exact box transforms
 * and flips, and the rendering (geometry, mirroring, colour operations). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "augment.h"
#include "macro.h"
#include "rng.h"
#include "tap.h"

static double iou(const float *b, const struct ssd_crop *c)
{
        double iw = fmin(b[2], c->x1) - fmax(b[0], c->x0), ih = fmin(b[3], c->y1) - fmax(b[1], c->y0);
        if (iw <= 0 || ih <= 0)
                return 0;
        double i = iw * ih, a = ((double)b[2] - b[0]) * ((double)b[3] - b[1]);
        return i / (a + (c->x1 - c->x0) * (c->y1 - c->y0) - i);
}

static int random_boxes(struct bd_rng *r, float *b)
{
        int n = 1 + (int)bd_rng_pick(r, 6);
        for (int i = 0; i < n; i++) {
                double w = bd_rng_range(r, 0.02, 0.9), h = bd_rng_range(r, 0.02, 0.9);
                double x = bd_rng_range(r, 0, 1 - w), y = bd_rng_range(r, 0, 1 - h);
                b[4 * i] = (float)x;
                b[4 * i + 1] = (float)y;
                b[4 * i + 2] = (float)(x + w);
                b[4 * i + 3] = (float)(y + h);
        }
        return n;
}

static void test_crop_sampler(void)
{
        static const double min_iou[] = { 0.1, 0.3, 0.5, 0.7, 0.9 };
        int bad_geometry = 0, bad_iou = 0, no_centre = 0, modes[7] = { 0 }, whole_ok = 1;
        for (uint64_t s = 0; s < 20000; s++) {
                struct bd_rng r;
                bd_rng_seed_key(&r, s);
                float b[24];
                int n = random_boxes(&r, b);
                struct ssd_crop c;
                int mode = ssd_random_crop(&r, b, n, &c);
                modes[mode]++;
                if (mode == 0) {
                        whole_ok &= c.x0 == 0 && c.y0 == 0 && c.x1 == 1 && c.y1 == 1;
                        continue;
                }
                double w = c.x1 - c.x0, h = c.y1 - c.y0;
                bad_geometry += !(w >= 0.3 && w <= 1 && h >= 0.3 && h <= 1 && w / h >= 0.5 && w / h <= 2 && c.x0 >= 0 &&
                                  c.y0 >= 0 && c.x1 <= 1 + 1e-12 && c.y1 <= 1 + 1e-12);
                int centre = 0;
                for (int i = 0; i < n; i++) {
                        if (mode <= 5 && !(iou(b + 4 * i, &c) > min_iou[mode - 1] - 1e-9))
                                bad_iou++;
                        double xc = 0.5 * ((double)b[4 * i] + b[4 * i + 2]), yc = 0.5 * ((double)b[4 * i + 1] + b[4 * i + 3]);
                        centre |= xc > c.x0 && xc < c.x1 && yc > c.y0 && yc < c.y1;
                }
                no_centre += !centre;
        }
        ok(whole_ok, "crop mode 0 is the whole image");
        is_int(bad_geometry, 0, "crops: width and height in [0.3, 1], aspect in [0.5, 2], inside the image");
        is_int(bad_iou, 0, "crops of the minimum-IoU modes: every box's IoU with the crop above the minimum");
        is_int(no_centre, 0, "crops hold at least one box centre");
        int all_modes = 1;
        for (int m = 0; m < 7; m++)
                all_modes &= modes[m] > 0;
        ok(all_modes, "every mode occurs (none, 0.1 ... 0.9, any)");
        for (int m = 0; m < 7 && !all_modes; m++)
                printf("#   mode %d: %d\n", m, modes[m]);
        ok(modes[0] > 20000 / 7 * 0.9, "no crop at least as often as one mode in seven");
        /* one large box: the 0.9 mode is feasible and often taken */
        int m5 = 0, m5_bad = 0;
        for (uint64_t s = 0; s < 3000; s++) {
                struct bd_rng r;
                bd_rng_seed_key(&r, s + 777);
                float big[4] = { 0.1f, 0.15f, 0.8f, 0.75f };
                struct ssd_crop c;
                if (ssd_random_crop(&r, big, 1, &c) == 5) {
                        m5++;
                        m5_bad += !(iou(big, &c) > 0.9);
                }
        }
        ok(m5 > 0 && m5_bad == 0, "one large box: IoU > 0.9 crops are found, and hold");
        printf("#   %d of 3000 crops in the 0.9 mode\n", m5);
        struct bd_rng r1, r2;
        bd_rng_seed_key(&r1, 99);
        bd_rng_seed_key(&r2, 99);
        float b[4] = { 0.2f, 0.2f, 0.6f, 0.7f };
        struct ssd_crop c1, c2;
        int m1 = ssd_random_crop(&r1, b, 1, &c1), m2 = ssd_random_crop(&r2, b, 1, &c2);
        ok(m1 == m2 && memcmp(&c1, &c2, sizeof(c1)) == 0, "the same generator state gives the same crop");
        struct ssd_crop c3;
        ok(ssd_random_crop(&r1, b, 0, &c3) == 0 && c3.x1 == 1, "no boxes: no crop");
}

static void test_box_transform(void)
{
        int mismatch = 0, outside = 0, flip_bad = 0, total = 0;
        for (uint64_t s = 0; s < 5000; s++) {
                struct bd_rng r;
                bd_rng_seed_key(&r, s + 100000);
                float b[24], o[24], of[24];
                int32_t lab[6], ol[6], olf[6];
                int n = random_boxes(&r, b);
                for (int i = 0; i < n; i++)
                        lab[i] = 10 + i;
                struct ssd_crop c;
                ssd_random_crop(&r, b, n, &c);
                int k = ssd_transform_boxes(&c, false, b, lab, n, o, ol);
                int kf = ssd_transform_boxes(&c, true, b, lab, n, of, olf);
                bool whole = c.x0 == 0 && c.y0 == 0 && c.x1 == 1 && c.y1 == 1;
                /* the expected result, written out */
                int e = 0;
                for (int i = 0; i < n; i++) {
                        const float *q = b + 4 * i;
                        double xc = (q[0] + (double)q[2]) / 2, yc = (q[1] + (double)q[3]) / 2;
                        if (!whole && !(xc > c.x0 && xc < c.x1 && yc > c.y0 && yc < c.y1))
                                continue;
                        double w = c.x1 - c.x0, h = c.y1 - c.y0;
                        double want[4] = { (fmax(q[0], c.x0) - c.x0) / w, (fmax(q[1], c.y0) - c.y0) / h,
                                           (fmin(q[2], c.x1) - c.x0) / w, (fmin(q[3], c.y1) - c.y0) / h };
                        if (e >= k || ol[e] != lab[i]) {
                                mismatch++;
                                break;
                        }
                        for (int j = 0; j < 4; j++)
                                mismatch += fabs(o[4 * e + j] - want[j]) > 1e-6;
                        e++;
                }
                mismatch += e != k;
                total += k;
                for (int i = 0; i < k; i++) {
                        outside += !(o[4 * i] >= 0 && o[4 * i + 2] <= 1 && o[4 * i + 1] >= 0 && o[4 * i + 3] <= 1 &&
                                     o[4 * i] <= o[4 * i + 2] && o[4 * i + 1] <= o[4 * i + 3]);
                        flip_bad += kf != k || olf[i] != ol[i] || fabsf(of[4 * i] - (1 - o[4 * i + 2])) > 1e-6f ||
                                    fabsf(of[4 * i + 2] - (1 - o[4 * i])) > 1e-6f || of[4 * i + 1] != o[4 * i + 1] ||
                                    of[4 * i + 3] != o[4 * i + 3];
                }
        }
        ok(total > 5000, "box transforms: many boxes kept");
        is_int(mismatch, 0, "box transforms: kept iff the centre is inside, clipped, in crop coordinates, labels follow");
        is_int(outside, 0, "transformed boxes lie in [0, 1] with x0 <= x1, y0 <= y1");
        is_int(flip_bad, 0, "a flip mirrors every box: x0' = 1 - x1, x1' = 1 - x0");
}

/* A grey image with an orange rectangle [60, 120) x [30, 90). */
#define SW 200
#define SH 150
static uint8_t src[SH][SW][3];
static const uint8_t bg[3] = { 40, 40, 40 }, fg[3] = { 200, 100, 50 };

static void make_source(void)
{
        for (int y = 0; y < SH; y++)
                for (int x = 0; x < SW; x++)
                        memcpy(src[y][x], x >= 60 && x < 120 && y >= 30 && y < 90 ? fg : bg, 3);
}

static float norm_of(int c, uint8_t v)
{
        return (v / 255.f - ssd_imagenet_norm.mean[c]) / ssd_imagenet_norm.std[c];
}

static float px(const float *o, int w, int h, int c, int x, int y)
{
        return o[((size_t)c * h + y) * w + x];
}

static void test_render_geometry(void)
{
        struct ssd_scratch s = { 0 };
        make_source();
        /* a crop with fractional bounds: the rectangle lands where the box transform says */
        double cx0 = 50.5, cy0 = 20, cx1 = 170.25, cy1 = 110;
        int W = 64, H = 48;
        float *o = xmalloc(3 * W * H * sizeof(float));
        ssd_render(&s, &src[0][0][0], SW * 3, SW, SH, cx0, cy0, cx1, cy1, false, NULL, &ssd_imagenet_norm, W, H, o);
        double bx0 = (60 - cx0) / (cx1 - cx0) * W, bx1 = (120 - cx0) / (cx1 - cx0) * W;
        double by0 = (30 - cy0) / (cy1 - cy0) * H, by1 = (90 - cy0) / (cy1 - cy0) * H;
        int inside_bad = 0, outside_bad = 0, checked = 0;
        for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++) {
                        double xc = x + 0.5, yc = y + 0.5;
                        bool in = xc > bx0 + 1.5 && xc < bx1 - 1.5 && yc > by0 + 1.5 && yc < by1 - 1.5;
                        bool out = xc < bx0 - 1.5 || xc > bx1 + 1.5 || yc < by0 - 1.5 || yc > by1 + 1.5;
                        for (int c = 0; c < 3; c++) {
                                float v = px(o, W, H, c, x, y);
                                if (in)
                                        inside_bad += fabsf(v - norm_of(c, fg[c])) > 1e-4f;
                                if (out)
                                        outside_bad += fabsf(v - norm_of(c, bg[c])) > 1e-4f;
                        }
                        checked += in || out;
                }
        ok(checked > W * H / 2, "render: most pixels away from the rectangle's edges");
        is_int(inside_bad, 0, "render: inside the transformed box, the rectangle's colour, normalised");
        is_int(outside_bad, 0, "render: outside it, the background");

        float *f = xmalloc(3 * W * H * sizeof(float));
        ssd_render(&s, &src[0][0][0], SW * 3, SW, SH, cx0, cy0, cx1, cy1, true, NULL, &ssd_imagenet_norm, W, H, f);
        int mirror_bad = 0;
        for (int c = 0; c < 3; c++)
                for (int y = 0; y < H; y++)
                        for (int x = 0; x < W; x++)
                                mirror_bad += px(f, W, H, c, x, y) != px(o, W, H, c, W - 1 - x, y);
        is_int(mirror_bad, 0, "render: a flip mirrors the output exactly");

        /* a 2x reduction: PIL's bilinear filter widened to 4 taps (1, 3, 3, 1) / 8; the
         * edge at x = 60 falls at output 30: pixel 29 takes 1/8 of the rectangle */
        int W2 = SW / 2, H2 = SH / 2;
        float *h = xmalloc(3 * W2 * H2 * sizeof(float));
        ssd_render(&s, &src[0][0][0], SW * 3, SW, SH, 0, 0, SW, SH, false, NULL, &ssd_imagenet_norm, W2, H2, h);
        ok(fabsf(px(h, W2, H2, 0, 31, 40) - norm_of(0, fg[0])) < 1e-4f &&
           fabsf(px(h, W2, H2, 0, 29, 40) - norm_of(0, (uint8_t)((fg[0] + 7 * bg[0]) / 8))) < 1e-4f &&
           fabsf(px(h, W2, H2, 0, 30, 40) - norm_of(0, (uint8_t)((7 * fg[0] + bg[0]) / 8))) < 1e-4f,
           "render: a 2x reduction averages as PIL's bilinear filter does");
        /* enlarging works too */
        float *u = xmalloc(3 * 80 * 80 * sizeof(float));
        ssd_render(&s, &src[0][0][0], SW * 3, SW, SH, 70, 40, 90, 60, false, NULL, &ssd_imagenet_norm, 80, 80, u);
        int up_bad = 0;
        for (int i = 0; i < 80 * 80; i++)
                up_bad += fabsf(u[i] - norm_of(0, fg[0])) > 1e-4f;
        is_int(up_bad, 0, "render: enlarging a part of the rectangle gives its colour");
        free(o);
        free(f);
        free(h);
        free(u);
        ssd_scratch_release(&s);
}

/* Renders a 4x1 image of the given colours with a jitter and returns the
 * pixels back in [0, 1], RGB. */
static void jitter_px(const uint8_t colours[4][3], const struct ssd_jitter *j, float out[4][3])
{
        static const struct ssd_norm unit = { { 0, 0, 0 }, { 1, 1, 1 } };
        uint8_t img[4][3];
        memcpy(img, colours, sizeof(img));
        struct ssd_scratch s = { 0 };
        float o[12];
        ssd_render(&s, &img[0][0], 12, 4, 1, 0, 0, 4, 1, false, j, &unit, 4, 1, o);
        for (int i = 0; i < 4; i++)
                for (int c = 0; c < 3; c++)
                        out[i][c] = o[c * 4 + i];
        ssd_scratch_release(&s);
}

static struct ssd_jitter only(enum ssd_jitter_op op, float f)
{
        struct ssd_jitter j = { .on = true, .brightness = 1, .contrast = 1, .saturation = 1, .hue = 0,
                                .order = { JIT_BRIGHTNESS, JIT_CONTRAST, JIT_SATURATION, JIT_HUE } };
        switch (op) {
        case JIT_BRIGHTNESS: j.brightness = f; break;
        case JIT_CONTRAST: j.contrast = f; break;
        case JIT_SATURATION: j.saturation = f; break;
        case JIT_HUE: j.hue = f; break;
        }
        return j;
}

static bool near(float a, float b)
{
        return fabsf(a - b) < 2e-5f;
}

static void test_jitter(void)
{
        static const uint8_t c[4][3] = { { 255, 0, 0 }, { 10, 200, 30 }, { 128, 128, 128 }, { 250, 250, 250 } };
        float o[4][3], plain[4][3];
        jitter_px(c, NULL, plain);
        struct ssd_jitter id = only(JIT_HUE, 0);
        jitter_px(c, &id, o);
        ok(memcmp(o, plain, sizeof(o)) == 0 || (near(o[1][1], plain[1][1]) && near(o[0][0], plain[0][0])),
           "jitter with neutral factors changes nothing");
        struct ssd_jitter b = only(JIT_BRIGHTNESS, 0.5f);
        jitter_px(c, &b, o);
        ok(near(o[1][1], 100 / 255.f) && near(o[2][0], 64 / 255.f), "brightness 0.5 halves the values");
        b = only(JIT_BRIGHTNESS, 1.125f);
        jitter_px(c, &b, o);
        ok(o[3][0] == 1.f, "brightness clamps at 1");
        struct ssd_jitter sat = only(JIT_SATURATION, 0);
        jitter_px(c, &sat, o);
        float l = 0.299f * 10 / 255 + 0.587f * 200 / 255 + 0.114f * 30 / 255;
        ok(near(o[1][0], l) && near(o[1][1], l) && near(o[1][2], l), "saturation 0 leaves the luma (ITU-R 601)");
        struct ssd_jitter con = only(JIT_CONTRAST, 0);
        jitter_px(c, &con, o);
        float mean = 0;
        for (int i = 0; i < 4; i++)
                mean += (0.299f * c[i][0] + 0.587f * c[i][1] + 0.114f * c[i][2]) / 255 / 4;
        ok(near(o[0][0], mean) && near(o[3][2], mean), "contrast 0 leaves the mean grey level everywhere");
        struct ssd_jitter hue = only(JIT_HUE, 1.f / 3);
        jitter_px(c, &hue, o);
        ok(near(o[0][0], 0) && near(o[0][1], 1) && near(o[0][2], 0), "a hue turn of 1/3: red becomes green");
        ok(near(o[2][0], plain[2][0]) && near(o[2][1], plain[2][1]), "  grey stays grey");
        hue = only(JIT_HUE, -1.f / 6);
        jitter_px(c, &hue, o);
        ok(near(o[0][0], 1) && near(o[0][1], 0) && near(o[0][2], 1), "a hue turn of -1/6: red becomes magenta");
        hue = only(JIT_HUE, 0.05f);
        jitter_px(c, &hue, o);
        float mx = fmaxf(o[1][0], fmaxf(o[1][1], o[1][2])), mn = fminf(o[1][0], fminf(o[1][1], o[1][2]));
        ok(near(mx, 200 / 255.f) && near(mn, 10 / 255.f), "a hue change keeps value and chroma");
        /* order matters: brightness then contrast differs from contrast then brightness at clamping */
        struct bd_rng r;
        bd_rng_seed_key(&r, 3);
        int perms_ok = 1, ranges_ok = 1;
        for (int i = 0; i < 1000; i++) {
                struct ssd_jitter j;
                ssd_sample_jitter(&r, &j);
                int seen = 0;
                for (int k = 0; k < 4; k++)
                        seen |= 1 << j.order[k];
                perms_ok &= seen == 15;
                ranges_ok &= j.brightness >= 0.875f && j.brightness <= 1.125f && j.contrast >= 0.5f &&
                             j.contrast <= 1.5f && j.saturation >= 0.5f && j.saturation <= 1.5f && j.hue >= -0.05f &&
                             j.hue <= 0.05f;
        }
        ok(perms_ok, "jitter orders are permutations of the four operations");
        ok(ranges_ok, "jitter factors in ColorJitter(0.125, 0.5, 0.5, 0.05)'s ranges");
}

int main(void)
{
        test_crop_sampler();
        test_box_transform();
        test_render_geometry();
        test_jitter();
        return done_testing();
}

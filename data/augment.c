/* augment.c: SSD random crop, box transforms, resampling, colour jitter,
 * normalisation. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "augment.h"
#include "macro.h"

const struct ssd_norm ssd_imagenet_norm = {
        { 0.485f, 0.456f, 0.406f },
        { 0.229f, 0.224f, 0.225f },
};

/* ---- crop ---------------------------------------------------------------------------- */

static double box_crop_iou(const float *b, double x0, double y0, double x1, double y1)
{
        double iw = fmin(b[2], x1) - fmax(b[0], x0);
        double ih = fmin(b[3], y1) - fmax(b[1], y0);
        if (iw < 0)
                iw = 0;
        if (ih < 0)
                ih = 0;
        double inter = iw * ih;
        double a1 = ((double)b[2] - b[0]) * ((double)b[3] - b[1]);
        double a2 = (x1 - x0) * (y1 - y0);
        double u = a1 + a2 - inter;
        return u > 0 ? inter / u : 0;
}

int ssd_random_crop(struct bd_rng *r, const float *boxes, int n, struct ssd_crop *ret)
{
        static const double min_iou[5] = { 0.1, 0.3, 0.5, 0.7, 0.9 };
        *ret = (struct ssd_crop){ 0, 0, 1, 1 };
        if (n <= 0)
                return 0;
        /* the reference loops until it succeeds; no crop is one mode in seven,
         * so 1000 rounds without one has probability (6/7)^1000 */
        for (int round = 0; round < 1000; round++) {
                int mode = (int)bd_rng_pick(r, 7);
                if (mode == 0)
                        return 0;
                double lo = mode <= 5 ? min_iou[mode - 1] : -INFINITY;
                for (int t = 0; t < SSD_CROP_TRIES; t++) {
                        double w = bd_rng_range(r, 0.3, 1.0), h = bd_rng_range(r, 0.3, 1.0);
                        if (w / h < 0.5 || w / h > 2)
                                continue;
                        double left = bd_rng_range(r, 0, 1.0 - w), top = bd_rng_range(r, 0, 1.0 - h);
                        double right = left + w, bottom = top + h;
                        bool ok = true, centre = false;
                        for (int i = 0; i < n && ok; i++) {
                                const float *b = boxes + 4 * i;
                                double iou = box_crop_iou(b, left, top, right, bottom);
                                ok = iou > lo;  /* the upper bound is +inf in every mode */
                                double xc = 0.5 * ((double)b[0] + b[2]), yc = 0.5 * ((double)b[1] + b[3]);
                                centre = centre || (xc > left && xc < right && yc > top && yc < bottom);
                        }
                        if (!ok || !centre)
                                continue;
                        *ret = (struct ssd_crop){ left, top, right, bottom };
                        return mode;
                }
        }
        return 0;
}

static float clamp01(double v)
{
        return v < 0 ? 0.f : v > 1 ? 1.f : (float)v;
}

int ssd_transform_boxes(const struct ssd_crop *c, bool flip, const float *boxes, const int32_t *labels, int n,
                        float *out, int32_t *out_labels)
{
        bool whole = c->x0 == 0 && c->y0 == 0 && c->x1 == 1 && c->y1 == 1;
        double w = c->x1 - c->x0, h = c->y1 - c->y0;
        int k = 0;
        for (int i = 0; i < n; i++) {
                const float *b = boxes + 4 * i;
                double xc = 0.5 * ((double)b[0] + b[2]), yc = 0.5 * ((double)b[1] + b[3]);
                if (!whole && !(xc > c->x0 && xc < c->x1 && yc > c->y0 && yc < c->y1))
                        continue;
                double x0 = (fmax(b[0], c->x0) - c->x0) / w;
                double y0 = (fmax(b[1], c->y0) - c->y0) / h;
                double x1 = (fmin(b[2], c->x1) - c->x0) / w;
                double y1 = (fmin(b[3], c->y1) - c->y0) / h;
                float *o = out + 4 * k;
                if (flip) {
                        o[0] = clamp01(1.0 - x1);
                        o[2] = clamp01(1.0 - x0);
                } else {
                        o[0] = clamp01(x0);
                        o[2] = clamp01(x1);
                }
                o[1] = clamp01(y0);
                o[3] = clamp01(y1);
                out_labels[k++] = labels[i];
        }
        return k;
}

void ssd_sample_jitter(struct bd_rng *r, struct ssd_jitter *j)
{
        /* torch.randperm(4), then the four factors, as ColorJitter.get_params */
        uint8_t p[4] = { 0, 1, 2, 3 };
        for (int i = 3; i > 0; i--) {
                int k = (int)bd_rng_pick(r, (uint64_t)i + 1);
                uint8_t t = p[i];
                p[i] = p[k];
                p[k] = t;
        }
        memcpy(j->order, p, 4);
        j->brightness = (float)bd_rng_range(r, 1 - 0.125, 1 + 0.125);
        j->contrast = (float)bd_rng_range(r, 0.5, 1.5);
        j->saturation = (float)bd_rng_range(r, 0.5, 1.5);
        j->hue = (float)bd_rng_range(r, -0.05, 0.05);
        j->on = true;
}

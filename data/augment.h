/* augment.h: the MLPerf SSD training augmentation, and the evaluation resize.
 *
 * Boxes are (x0, y0, x1, y1) in [0, 1] of the image they belong to.
 *
 * ssd_random_crop() is the reference's SSDCropping: choose among no crop,
 * minimum IoU 0.1/0.3/0.5/0.7/0.9 and no constraint; for a constrained mode,
 * up to 50 tries of a crop of width and height uniform in [0.3, 1] (aspect
 * w/h in [0.5, 2]) placed uniformly, accepted when every box's IoU with the
 * crop lies in the mode's open interval and at least one box centre lies
 * strictly inside; after 50 failures choose a mode again.  The crop is a
 * rectangle of real coordinates; the rendered pixels cover exactly that
 * rectangle (resampling from fractional source positions), so the box
 * transform below is exact, not off by the reference's truncation to whole
 * pixels.
 *
 * ssd_transform_boxes() keeps the boxes whose centre lies inside the crop,
 * clips them to it, expresses them in crop coordinates and mirrors them when
 * flip is set: x -> 1 - x.
 *
 * ssd_render() resamples the source rectangle to out_w x out_h (PIL's
 * bilinear filter, widened when shrinking, as torchvision's Resize), mirrors
 * it, applies the colour jitter (torchvision ColorJitter: brightness,
 * contrast, saturation, hue in a random order) and normalises with the
 * ImageNet mean and std into planar float (3, out_h, out_w).  Resampling is
 * vertical first on the 8-bit source, then horizontal with the jitter and
 * the contrast mean fused in, then one pass for the rest: three passes in all.
 */
#ifndef BD_DATA_AUGMENT_H
#define BD_DATA_AUGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rng.h"

struct ssd_crop {
        double x0, y0, x1, y1;  /* in [0, 1] of the image; the whole image is 0, 0, 1, 1 */
};

enum ssd_jitter_op { JIT_BRIGHTNESS, JIT_CONTRAST, JIT_SATURATION, JIT_HUE };

struct ssd_jitter {
        bool on;
        float brightness;       /* factor in [1 - 0.125, 1 + 0.125] */
        float contrast;         /* factor in [0.5, 1.5] */
        float saturation;       /* factor in [0.5, 1.5] */
        float hue;              /* turn fraction in [-0.05, 0.05] */
        uint8_t order[4];       /* a permutation of enum ssd_jitter_op */
};

#define SSD_CROP_TRIES 50

/* Picks a crop for n boxes (n >= 1; n == 0 gives the whole image).  Returns
 * the mode chosen: 0 no crop, 1..5 the minimum IoU 0.1..0.9, 6 unconstrained. */
int ssd_random_crop(struct bd_rng *r, const float *boxes, int n, struct ssd_crop *ret);
/* Transforms n boxes (and labels) into out/out_labels (room for n); returns the number kept. */
int ssd_transform_boxes(const struct ssd_crop *c, bool flip, const float *boxes, const int32_t *labels, int n,
                        float *out, int32_t *out_labels);
void ssd_sample_jitter(struct bd_rng *r, struct ssd_jitter *ret);

/* Per-thread scratch space for ssd_render(). */
struct ssd_scratch {
        float *tmp, *hwc;
        size_t tmp_cap, hwc_cap;
        int32_t *hx;            /* horizontal: first source column of each output column */
        int32_t *hn;            /* taps */
        float *hw;              /* weights, kmax per column */
        int32_t *vy, *vn;
        float *vw;
        size_t hcap, vcap;
};
void ssd_scratch_release(struct ssd_scratch *s);

struct ssd_norm {
        float mean[3], std[3];  /* of pixel values in [0, 1] */
};
extern const struct ssd_norm ssd_imagenet_norm;

/* PIL's bilinear filter (ssd_render's) from [in0, in1) of in_size samples to
 * out_size: for each output, the first input, the number of taps and kmax
 * weights (normalised, times gain), kmax returned (at most 64: shrinking by
 * more than 30x drops the outer taps).  The arrays are (re)allocated as
 * needed; *cap counts elements. */
int ssd_bilinear_coeffs(double in0, double in1, int in_size, int out_size, float gain, int32_t **first,
                        int32_t **count, float **w, size_t *cap);

/* src: RGB interleaved, src_w x src_h, stride bytes per row.  The source
 * rectangle [sx0, sx1) x [sy0, sy1) is in src pixel units (fractions
 * allowed).  jitter NULL or off: none.  out: (3, out_h, out_w). */
void ssd_render(struct ssd_scratch *s, const uint8_t *src, size_t stride, int src_w, int src_h, double sx0,
                double sy0, double sx1, double sy1, bool flip, const struct ssd_jitter *jitter,
                const struct ssd_norm *norm, int out_w, int out_h, float *out);

#endif

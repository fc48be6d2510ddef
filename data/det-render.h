/* det-render.h: the geometry and the pixels of the Mask R-CNN input
 * pipeline (det-loader.h), in either reference's convention: the resized
 * size, the ratio of each axis, COCO boxes as the reference's float32
 * corners, flips of boxes and polygons, rendering (resize, mirror,
 * normalise and pad an image in one go) and the resampling of RLE masks.
 *
 * The two conventions (shared/reference/maskrcnn.md, sections 1 and 2):
 *
 *   DET_MLPERF (maskrcnn_benchmark as MLPerf runs it)
 *     size: s = min_size; if max/min * s > max_size then s = round(max_size *
 *       min / max) (round half to even); the short side becomes s, the long
 *       side int(s * long / short) (truncated); an image whose short side is
 *       s already is not resized.  Pixels: PIL's bilinear filter (widened when
 *       shrinking), the one resample.c implements (in float: PIL rounds to
 *       8 bits after each pass, so the values differ from PIL's by up to 1).
 *     boxes: x2 = x + max(w - 1, 0), y2 likewise (the +1 convention), clipped
 *       to [0, W - 1] x [0, H - 1]; kept when x2 > x1 and y2 > y1.
 *     flip: x' = W - 1 - x (boxes: x1' = W - 1 - x2, x2' = W - 1 - x1), the
 *       same for polygon vertices.
 *     pixels: B, G, R planes in 0..255 minus 102.9801, 115.9465, 122.7717.
 *
 *   DET_TORCHVISION (torchvision 0.14: GeneralizedRCNNTransform and
 *                 references/detection)
 *     size: scale = min(min_size / short, max_size / long) in float32, each
 *       side floor(side * scale).  Pixels: F.interpolate(bilinear,
 *       align_corners=False) without antialiasing: two taps per axis
 *       whatever the scale.
 *     boxes: x2 = x + w, clipped to [0, W] x [0, H]; kept when x2 > x1 and
 *       y2 > y1.
 *     flip: x' = W - x (boxes: x1' = W - x2, x2' = W - x1).
 *     pixels: R, G, B planes of ((v / 255) - mean) / std, mean (0.485, 0.456,
 *       0.406), std (0.229, 0.224, 0.225).  torchvision normalises before
 *       interpolating and torch 1.13 sums the four taps in doubles (with
 *       float products of the two axes' weights); here two float passes
 *       with its weights, then v * (1 / (255 std)) - mean / std: the
 *       interpolation is linear, the values agree within a few float ulps
 *       (1e-6).
 *
 *   Both: coordinates scale by the ratio new / old of each axis; boxes and
 *   polygon vertices are the references' float32 values (their tensors are
 *   float32: the JSON's doubles rounded to float, converted, clipped and
 *   scaled in float arithmetic), held in doubles.  The flip comes after the
 *   resize, at the resized width (torchvision flips the original image
 *   first: the same mapping, W1 - x r = (W0 - x) r), and is exact: W - x
 *   of a float needs no rounding in a double (x = 0 or |x| >= 2^-16, in
 *   images narrower than 8192 pixels: every COCO coordinate), so flipping
 *   twice gives back the original, and a flipped image's pixels are the
 *   unflipped ones mirrored.  (The references round their flip to float.)
 */
#ifndef BD_DATA_DET_RENDER_H
#define BD_DATA_DET_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum det_convention {
        DET_MLPERF,
        DET_TORCHVISION,
};

/* The resized size of a w x h image. */
void det_resize_size(enum det_convention c, int w, int h, int min_size, int max_size, int *ret_w, int *ret_h);
/* The ratio new / old of an axis as the convention computes it (a float). */
float det_resize_ratio(enum det_convention c, int old_size, int new_size);
/* A COCO bbox (x, y, w, h) in the convention's x1 y1 x2 y2, clipped to a
 * w x h image, in float32 as the reference; false when the box is empty. */
bool det_convert_box(enum det_convention c, const double bbox[4], int w, int h, float ret[4]);
/* Mirrors boxes and polygon vertices in an image of the given width. */
void det_flip_boxes(enum det_convention c, int width, double *boxes, size_t n);
void det_flip_xy(enum det_convention c, int width, double *xy, size_t n_points);

/* Scratch space of det_render(), per thread: coefficient tables (kept
 * while the sizes repeat), one source row, a ring of filtered rows. */
struct det_render_scratch {
        float *row, *ring, *hw, *hw8, *vw;
        int32_t *hx, *hn, *vy, *vn;
        size_t row_cap, ring_cap, hcap, hw8_cap, vcap;
        int hk, vk, two_taps;
        int key[5];                     /* convention + 1, w, h, out_w, out_h of the tables */
        int portable;                   /* set: the portable code even where AVX2 is there (tests) */
};
void det_render_scratch_release(struct det_render_scratch *s);
/* Resizes an RGB image (interleaved, stride bytes per row) to out_w x
 * out_h as the convention does, mirrors it when flip and writes its three
 * normalised planes into out, (3, pad_h, pad_w) floats, zeros beyond out_w
 * and out_h (pad_w >= out_w, pad_h >= out_h).  With pad_w a multiple of 8
 * and out 32-byte aligned the rows are written with non-temporal stores. */
void det_render(struct det_render_scratch *s, enum det_convention c, const uint8_t *rgb, size_t stride, int w,
                int h, int out_w, int out_h, bool flip, float *out, int pad_w, int pad_h);
/* Resizes a column-major RLE mask of w x h (counts alternate zeros and
 * ones, zeros first) to out_w x out_h by nearest neighbour, mirrored when
 * flip; appends the counts to *counts (grown as needed) and returns how
 * many, or -EBADMSG when the counts do not cover w x h. */
long det_rle_resize(const uint32_t *counts, uint32_t n, int w, int h, int out_w, int out_h, bool flip,
                    uint32_t **counts_out, size_t *n_out, size_t *cap_out);

#endif

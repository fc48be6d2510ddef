/* jpeg.h: decoding JPEG files for the data loader, whole or a region, at a
 * reduced scale when the caller can afford it.
 *
 * A decoder belongs to one thread.  The whole-image path is TurboJPEG's
 * tjDecompress2(); a region is decoded through libjpeg-turbo's libjpeg API
 * (jpeg_crop_scanline + jpeg_skip_scanlines), so the rows below the region are
 * never decoded and the columns outside it skip the IDCT and colour
 * conversion.  Both pick the smallest DCT scaling factor of 1/8, 1/4, 1/2
 * (those with SIMD code) that leaves at least min_w x min_h pixels in the
 * region: decoding at 1/2 scale costs about a third of a full decode.
 *
 * A file is corrupt when either library reports an error or a warning
 * (libjpeg fills a truncated image with grey and only warns), or when the
 * data does not end with an EOI marker (truncated: a region decode might not
 * read far enough to notice).
 */
#ifndef BD_DATA_JPEG_H
#define BD_DATA_JPEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct jpeg_decoder;

struct jpeg_info {
        int width, height;
        bool cmyk;              /* a CMYK or YCCK file: decoded to RGB as Pillow does */
};

/* A decoded region, RGB interleaved.  Pixel (i, j) of the region is pixel
 * (x0 + i, y0 + j) of the image scaled by scale_num/8, i.e. covers the
 * full-resolution square [(x0+i)*8/num, (x0+i+1)*8/num).  The pixels belong
 * to the decoder and stay valid until its next decode. */
struct jpeg_image {
        const uint8_t *pixels;
        size_t stride;          /* bytes per row */
        int width, height;
        int x0, y0;
        int scale_num;          /* 1..8, denominator 8 */
};

struct jpeg_decoder *jpeg_decoder_new(void);
struct jpeg_decoder *jpeg_decoder_free(struct jpeg_decoder *d);
DEFINE_CLEANUP(struct jpeg_decoder *, jpeg_decoder_free)

/* Reads the dimensions and whether the file is CMYK (ImageNet-style data
 * holds some; Pillow and TurboJPEG decode them, and so does jpeg_decode). */
int jpeg_read_info(struct jpeg_decoder *d, const uint8_t *data, size_t len, struct jpeg_info *ret,
                   struct bd_err *err);
/* Decodes [x0, x1) x [y0, y1) of the full-resolution image (all of it when
 * x1 == 0), scaled down as far as min_w x min_h allows (min_w == 0: no
 * scaling).  The result may hold a few more columns than asked (iMCU
 * alignment): use x0/y0 to locate the region. */
int jpeg_decode(struct jpeg_decoder *d, const uint8_t *data, size_t len, const struct jpeg_info *info, int x0,
                int y0, int x1, int y1, int min_w, int min_h, struct jpeg_image *ret, struct bd_err *err);
/* How many CMYK images this decoder has decoded. */
long jpeg_cmyk_decoded(const struct jpeg_decoder *d);
/* The data ends with an EOI marker (trailing zero bytes allowed). */
int jpeg_complete(const uint8_t *data, size_t len);

/* Encodes RGB pixels (TurboJPEG, 4:2:0); *ret is malloc'ed. */
int jpeg_encode_rgb(const uint8_t *rgb, int width, int height, int quality, uint8_t **ret, size_t *ret_len,
                    struct bd_err *err);

#endif

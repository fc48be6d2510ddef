/* jpeg.c: TurboJPEG for headers, whole images and encoding; the libjpeg API
 * of the same library for regions. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>
#include <turbojpeg.h>

#include "jpeg.h"
#include "macro.h"

struct jerr {
        struct jpeg_error_mgr pub;
        jmp_buf jb;
        int warned;
        char msg[JMSG_LENGTH_MAX];
};

struct jpeg_decoder {
        tjhandle tj;
        struct jpeg_decompress_struct cinfo;
        struct jerr jerr;
        uint8_t *buf;
        size_t cap;
        JSAMPROW *rows;
        size_t rows_cap;
        uint8_t *cmyk;                  /* a row of CMYK pixels */
        size_t cmyk_cap;
        long cmyk_decoded;
};

static void on_error(j_common_ptr c)
{
        struct jerr *e = (struct jerr *)c->err;
        (*c->err->format_message)(c, e->msg);
        longjmp(e->jb, 1);
}

static void on_message(j_common_ptr c, int level)
{
        struct jerr *e = (struct jerr *)c->err;
        if (level < 0 && !e->warned) {  /* a warning: corrupt data */
                (*c->err->format_message)(c, e->msg);
                e->warned = 1;
        }
}

struct jpeg_decoder *jpeg_decoder_new(void)
{
        struct jpeg_decoder *d = xcalloc(1, sizeof(*d));
        d->tj = tjInitDecompress();
        if (!d->tj) {
                fprintf(stderr, "cannot initialise TurboJPEG: %s\n", tjGetErrorStr2(NULL));
                abort();
        }
        d->cinfo.err = jpeg_std_error(&d->jerr.pub);
        d->jerr.pub.error_exit = on_error;
        d->jerr.pub.emit_message = on_message;
        jpeg_create_decompress(&d->cinfo);
        return d;
}

struct jpeg_decoder *jpeg_decoder_free(struct jpeg_decoder *d)
{
        if (!d)
                return NULL;
        jpeg_destroy_decompress(&d->cinfo);
        tjDestroy(d->tj);
        free(d->buf);
        free(d->rows);
        free(d->cmyk);
        free(d);
        return NULL;
}

long jpeg_cmyk_decoded(const struct jpeg_decoder *d)
{
        return d ? __atomic_load_n(&d->cmyk_decoded, __ATOMIC_RELAXED) : 0;
}

int jpeg_complete(const uint8_t *data, size_t len)
{
        size_t n = len;
        while (n > 2 && len - n < 64 && data[n - 1] == 0)
                n--;
        return n >= 4 && data[0] == 0xff && data[1] == 0xd8 && data[n - 2] == 0xff && data[n - 1] == 0xd9;
}

int jpeg_read_info(struct jpeg_decoder *d, const uint8_t *data, size_t len, struct jpeg_info *ret,
                   struct bd_err *err)
{
        int w = 0, h = 0, subsamp = -1, cs = -1;
        if (len > (size_t)1 << 31)
                return bd_err_set(err, -EFBIG, "JPEG file too large");
        if (tjDecompressHeader3(d->tj, data, (unsigned long)len, &w, &h, &subsamp, &cs) < 0)
                return bd_err_set(err, -EBADMSG, "not a JPEG file: %s", tjGetErrorStr2(d->tj));
        if (w <= 0 || h <= 0)
                return bd_err_set(err, -EBADMSG, "not a JPEG image (no frame header)");
        ret->width = w;
        ret->height = h;
        ret->cmyk = cs == TJCS_CMYK || cs == TJCS_YCCK;
        return 0;
}

static void *grow(struct jpeg_decoder *d, size_t n)
{
        if (n > d->cap) {
                free(d->buf);
                d->cap = n + n / 4;
                d->buf = xmalloc(d->cap);
        }
        return d->buf;
}

/* 1/8, 1/4 and 1/2 only: libjpeg-turbo has SIMD inverse DCTs for those
 * (and 8/8); the other factors use C code slower than a full decode. */
static int pick_scale(int rw, int rh, int min_w, int min_h)
{
        if (min_w <= 0 || min_h <= 0)
                return 8;
        for (int num = 1; num < 8; num *= 2)
                if ((long)rw * num >= 8L * min_w && (long)rh * num >= 8L * min_h)
                        return num;
        return 8;
}

static int decode_whole(struct jpeg_decoder *d, const uint8_t *data, size_t len, int w, int h, int num,
                        struct jpeg_image *ret, struct bd_err *err)
{
        tjscalingfactor sf = { num, 8 };
        int sw = TJSCALED(w, sf), sh = TJSCALED(h, sf);
        size_t stride = (size_t)sw * 3;
        uint8_t *buf = grow(d, stride * (size_t)sh);
        if (tjDecompress2(d->tj, data, (unsigned long)len, buf, sw, (int)stride, sh, TJPF_RGB, 0) < 0)
                return bd_err_set(err, -EBADMSG, "corrupt JPEG: %s", tjGetErrorStr2(d->tj));
        *ret = (struct jpeg_image){ buf, stride, sw, sh, 0, 0, num };
        return 0;
}

/* A row of CMYK pixels as RGB, as Pillow converts them: R = 255 - C - K
 * (clipped), where an Adobe file stores every ink inverted (Pillow reads it
 * as "CMYK;I"): then R = C' + K' - 255. */
static void cmyk_row_to_rgb(const uint8_t *in, uint8_t *out, size_t n, bool inverted)
{
        for (size_t i = 0; i < n; i++, in += 4, out += 3)
                for (int k = 0; k < 3; k++) {
                        int v = inverted ? in[k] + in[3] - 255 : 255 - in[k] - in[3];
                        out[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
                }
}

static int decode_region(struct jpeg_decoder *d, const uint8_t *data, size_t len, int x0, int y0, int x1, int y1,
                         int num, bool cmyk, struct jpeg_image *ret, struct bd_err *err)
{
        struct jpeg_decompress_struct *c = &d->cinfo;
        d->jerr.warned = 0;
        if (setjmp(d->jerr.jb)) {
                jpeg_abort_decompress(c);
                return bd_err_set(err, -EBADMSG, "corrupt JPEG: %s", d->jerr.msg);
        }
        jpeg_mem_src(c, data, (unsigned long)len);
        jpeg_read_header(c, TRUE);
        /* CMYK (and YCCK) files come out as CMYK: made RGB row by row here */
        c->out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
        c->scale_num = (unsigned)num;
        c->scale_denom = 8;
        c->dct_method = JDCT_ISLOW;
        jpeg_start_decompress(c);
        int ow = (int)c->output_width, oh = (int)c->output_height;
        /* the region in scaled pixels, widened to whole pixels */
        int sx0 = (int)((long)x0 * num / 8), sy0 = (int)((long)y0 * num / 8);
        int sx1 = (int)(((long)x1 * num + 7) / 8), sy1 = (int)(((long)y1 * num + 7) / 8);
        if (sx1 > ow)
                sx1 = ow;
        if (sy1 > oh)
                sy1 = oh;
        if (sx0 >= sx1 || sy0 >= sy1) {
                jpeg_abort_decompress(c);
                return bd_err_set(err, -EINVAL, "empty JPEG region");
        }
        JDIMENSION xoff = (JDIMENSION)sx0, cw = (JDIMENSION)(sx1 - sx0);
        if ((int)cw < ow)
                jpeg_crop_scanline(c, &xoff, &cw);
        if (sy0 > 0)
                jpeg_skip_scanlines(c, (JDIMENSION)sy0);
        size_t stride = (size_t)c->output_width * 3;
        size_t nrows = (size_t)(sy1 - sy0);
        uint8_t *buf = grow(d, stride * nrows);
        if (nrows > d->rows_cap) {
                free(d->rows);
                d->rows_cap = nrows;
                d->rows = xmalloc(nrows * sizeof(JSAMPROW));
        }
        for (size_t i = 0; i < nrows; i++)
                d->rows[i] = buf + i * stride;
        if (cmyk && (size_t)c->output_width * 4 > d->cmyk_cap) {
                free(d->cmyk);
                d->cmyk_cap = (size_t)c->output_width * 4;
                d->cmyk = xmalloc(d->cmyk_cap);
        }
        while (c->output_scanline < (JDIMENSION)sy1) {
                size_t i = c->output_scanline - (JDIMENSION)sy0;
                if (cmyk) {
                        JSAMPROW row = d->cmyk;
                        if (jpeg_read_scanlines(c, &row, 1) == 0)
                                break;
                        cmyk_row_to_rgb(d->cmyk, d->rows[i], c->output_width, c->saw_Adobe_marker);
                        continue;
                }
                if (jpeg_read_scanlines(c, d->rows + i, (JDIMENSION)(nrows - i)) == 0)
                        break;
        }
        int got = (int)c->output_scanline;
        jpeg_abort_decompress(c);
        if (d->jerr.warned)
                return bd_err_set(err, -EBADMSG, "corrupt JPEG: %s", d->jerr.msg);
        if (got < sy1)
                return bd_err_set(err, -EBADMSG, "corrupt JPEG: %d of %d rows", got, sy1);
        *ret = (struct jpeg_image){ buf, stride, (int)cw, (int)nrows, (int)xoff, sy0, num };
        return 0;
}

int jpeg_decode(struct jpeg_decoder *d, const uint8_t *data, size_t len, const struct jpeg_info *info, int x0,
                int y0, int x1, int y1, int min_w, int min_h, struct jpeg_image *ret, struct bd_err *err)
{
        int w = info->width, h = info->height;
        if (x1 == 0) {
                x0 = y0 = 0;
                x1 = w;
                y1 = h;
        }
        if (x0 < 0)
                x0 = 0;
        if (y0 < 0)
                y0 = 0;
        if (x1 > w)
                x1 = w;
        if (y1 > h)
                y1 = h;
        if (x0 >= x1 || y0 >= y1)
                return bd_err_set(err, -EINVAL, "empty JPEG region");
        if (!jpeg_complete(data, len))
                return bd_err_set(err, -EBADMSG, "truncated JPEG (no end marker)");
        int num = pick_scale(x1 - x0, y1 - y0, min_w, min_h);
        if (info->cmyk) {
                int r = decode_region(d, data, len, x0, y0, x1, y1, num, true, ret, err);
                if (r == 0)
                        __atomic_add_fetch(&d->cmyk_decoded, 1, __ATOMIC_RELAXED);  /* read by other threads */
                return r;
        }
        if (x0 == 0 && y0 == 0 && x1 == w && y1 == h)
                return decode_whole(d, data, len, w, h, num, ret, err);
        return decode_region(d, data, len, x0, y0, x1, y1, num, false, ret, err);
}

int jpeg_encode_rgb(const uint8_t *rgb, int width, int height, int quality, uint8_t **ret, size_t *ret_len,
                    struct bd_err *err)
{
        tjhandle tj = tjInitCompress();
        if (!tj)
                return bd_err_set(err, -ENOMEM, "cannot initialise TurboJPEG: %s", tjGetErrorStr2(NULL));
        unsigned char *out = NULL;
        unsigned long size = 0;
        int r = tjCompress2(tj, rgb, width, 0, height, TJPF_RGB, &out, &size, TJSAMP_420, quality, 0);
        if (r < 0) {
                r = bd_err_set(err, -EIO, "cannot encode a JPEG: %s", tjGetErrorStr2(tj));
        } else {
                *ret = xmalloc(size);
                memcpy(*ret, out, size);
                *ret_len = size;
        }
        tjFree(out);
        tjDestroy(tj);
        return r < 0 ? r : 0;
}

/* jpeg-tool.c: decodes a JPEG file as the data loaders do (data/jpeg.h) and
 * writes it as a binary PPM to standard output, for the shell tests that
 * hold the decoder against Pillow (CMYK files: t0610).
 *
 *     jpeg-tool FILE > OUT.ppm     # the whole image, full scale
 *     jpeg-tool FILE X0 Y0 X1 Y1   # a region, as the loaders crop
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "fs.h"
#include "jpeg.h"
#include "macro.h"

int main(int argc, char **argv)
{
        if (argc != 2 && argc != 6) {
                fprintf(stderr, "usage: jpeg-tool FILE [X0 Y0 X1 Y1]\n");
                return 2;
        }
        _cleanup_free_ char *data = NULL;
        size_t len;
        struct bd_err err;
        if (fs_read_file(argv[1], 256u << 20, &data, &len, &err) < 0) {
                fprintf(stderr, "jpeg-tool: %s\n", err.msg);
                return 1;
        }
        _cleanup_(jpeg_decoder_freep) struct jpeg_decoder *d = jpeg_decoder_new();
        struct jpeg_info info;
        struct jpeg_image img;
        int x[4] = { 0 };
        for (int i = 0; argc == 6 && i < 4; i++)
                x[i] = atoi(argv[2 + i]);
        if (jpeg_read_info(d, (const uint8_t *)data, len, &info, &err) < 0 ||
            jpeg_decode(d, (const uint8_t *)data, len, &info, x[0], x[1], x[2], x[3], 0, 0, &img, &err) < 0) {
                fprintf(stderr, "jpeg-tool: %s: %s\n", argv[1], err.msg);
                return 1;
        }
        fprintf(stderr, "jpeg-tool: %dx%d%s, region at %d,%d\n", info.width, info.height, info.cmyk ? " CMYK" : "",
                img.x0, img.y0);
        printf("P6\n%d %d\n255\n", img.width, img.height);
        for (int y = 0; y < img.height; y++)
                fwrite(img.pixels + (size_t)y * img.stride, 3, (size_t)img.width, stdout);
        return fflush(stdout) == 0 ? 0 : 1;
}

/* fuzz-polygon.c: polygons and boxes rasterised as pycocotools' rleFrPoly
 * (data/mask.h).
 *
 * The input: a height and a width (three bytes each, little-endian, up to
 * 2^20 as the COCO index allows), the number of polygons (1 to 4), then per
 * polygon a point count (0 to 32) and its points as pairs of 16-bit
 * integers in eighths of a pixel (+-4096 pixels: vertices far away make the
 * rasteriser walk every fifth of a pixel of their edges, fuzz-coco.h).
 * Promises checked:
 *   - every polygon, box and set of polygons gives a mask of the image's
 *     size whose counts cover it exactly (where h x w fits the 32-bit
 *     counts);
 *   - rle_from_polygons() is the union of its parts, each a polygon or, when
 *     the first part has 4 coordinates, a box where it has 4;
 *   - a box of whole pixels inside a small image covers exactly those
 *     pixels.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "mask.h"

#define MAX_POLYS 4
#define MAX_POINTS 32

struct reader {
        const uint8_t *p;
        size_t n;
};

static uint32_t take(struct reader *r, int bytes)
{
        uint32_t v = 0;
        for (int i = 0; i < bytes; i++)
                if (r->n) {
                        v |= (uint32_t)*r->p++ << (8 * i);
                        r->n--;
                }
        return v;
}

static bool fits(uint32_t h, uint32_t w)
{
        return (uint64_t)h * w < UINT32_MAX;
}

static void check_mask(const struct rle *r, uint32_t h, uint32_t w, const char *what)
{
        FUZZ_CHECK(r->h == h && r->w == w, "%s: a %ux%u mask in a %ux%u image", what, r->h, r->w, h, w);
        if (fits(h, w))
                FUZZ_CHECK(rle_check(r) == 0, "%s: the counts do not cover %ux%u", what, h, w);
}

static bool same(const struct rle *a, const struct rle *b)
{
        return a->h == b->h && a->w == b->w && a->m == b->m &&
               (a->m == 0 || !memcmp(a->cnts, b->cnts, (size_t)a->m * sizeof(*a->cnts)));
}

/* A box of whole pixels: exactly its pixels are set. */
static void check_box(const struct rle *r, const double bb[4], uint32_t h, uint32_t w)
{
        size_t a = (size_t)h * w;
        _cleanup_free_ uint8_t *mask = xmalloc(a);
        rle_decode(r, mask);
        for (size_t j = 0; j < a; j++) {
                double x = (double)(j / h), y = (double)(j % h);
                bool in = x >= bb[0] && x < bb[0] + bb[2] && y >= bb[1] && y < bb[1] + bb[3];
                FUZZ_CHECK(mask[j] == in, "box [%g %g %g %g]: pixel (%g, %g) is %u", bb[0], bb[1], bb[2], bb[3], x, y,
                           mask[j]);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct reader in = { data, size };
        uint32_t h = take(&in, 3) % ((1u << 20) + 1), w = take(&in, 3) % ((1u << 20) + 1);
        uint32_t np = 1 + take(&in, 1) % MAX_POLYS, len[MAX_POLYS];
        double xy[MAX_POLYS * MAX_POINTS * 2];
        struct rle parts[MAX_POLYS], merged = RLE_INIT, all = RLE_INIT;
        size_t off = 0;
        for (uint32_t i = 0; i < np; i++) {
                uint32_t k = take(&in, 1) % (MAX_POINTS + 1);
                len[i] = 2 * k;
                for (uint32_t j = 0; j < 2 * k; j++)
                        xy[off + j] = (int16_t)take(&in, 2) / 8.0;
                off += 2 * k;
        }

        bool boxes = len[0] == 4;
        off = 0;
        for (uint32_t i = 0; i < np; i++) {
                parts[i] = (struct rle)RLE_INIT;
                if (boxes && len[i] == 4)
                        rle_from_bbox(&parts[i], xy + off, h, w);
                else
                        rle_from_poly(&parts[i], xy + off, len[i] / 2, h, w);
                check_mask(&parts[i], h, w, boxes && len[i] == 4 ? "a box" : "a polygon");
                off += len[i];
        }
        struct coco_polygons p = { .n = np, .len = len, .xy = xy };
        rle_from_polygons(&all, &p, h, w);
        check_mask(&all, h, w, "polygons");
        rle_merge(parts, np, false, &merged);
        FUZZ_CHECK(same(&all, &merged), "rle_from_polygons is not the union of its parts");

        /* the first box, moved to whole pixels inside the image */
        if (boxes && (uint64_t)h * w <= 4096 && h && w) {
                uint32_t v[4];
                for (int i = 0; i < 4; i++)
                        v[i] = (uint32_t)abs((int)xy[i]);
                double bb[4] = { v[0] % w, v[1] % h, 0, 0 };
                bb[2] = v[2] % (w - (uint32_t)bb[0] + 1);
                bb[3] = v[3] % (h - (uint32_t)bb[1] + 1);
                struct rle box = RLE_INIT;
                rle_from_bbox(&box, bb, h, w);
                check_mask(&box, h, w, "a box of whole pixels");
                check_box(&box, bb, h, w);
                rle_free(&box);
        }
        for (uint32_t i = 0; i < np; i++)
                rle_free(&parts[i]);
        rle_free(&merged);
        rle_free(&all);
        return 0;
}

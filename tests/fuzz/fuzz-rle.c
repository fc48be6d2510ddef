/* fuzz-rle.c: compressed COCO RLE strings and the mask operations on them
 * (data/mask.h, coco_rle_from_string() of data/coco-index.h).
 *
 * The input: a height and a width (the low six bits of its first two
 * bytes), then the counts string (up to a NUL).  Promises checked:
 *   - the index's decoder and rle_from_string() agree: both refuse, or
 *     both give the same counts;
 *   - rle_to_string() of the counts parses back to them, and is its own
 *     canonical form;
 *   - decoding never writes past h x w bytes, in either layout, and both
 *     layouts hold the same pixels;
 *   - a mask whose counts cover it exactly, encoded again, gives the same
 *     counts (where no run but the first is empty), in either layout; its
 *     area is its number of set pixels; its box lies inside the image and
 *     holds every set pixel; merged with itself it is itself; its IoU with
 *     itself is 1 (0 when empty).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "mask.h"

static bool same_counts(const struct rle *a, const uint32_t *cnts, uint32_t m)
{
        return a->m == m && (m == 0 || !memcmp(a->cnts, cnts, (size_t)m * sizeof(*cnts)));
}

/* The string of r parses back to r, and prints as itself. */
static void check_string(const struct rle *r)
{
        _cleanup_free_ char *s = rle_to_string(r);
        _cleanup_free_ char *s2 = NULL;
        struct rle back = RLE_INIT;
        FUZZ_CHECK(rle_from_string(&back, s, r->h, r->w) == 0, "rle_to_string wrote '%s', which does not parse", s);
        FUZZ_CHECK(same_counts(&back, r->cnts, r->m), "'%s' parses to other counts than it was made of", s);
        s2 = rle_to_string(&back);
        FUZZ_CHECK(streq(s, s2), "'%s' prints as '%s'", s, s2);
        rle_free(&back);
}

static void check_valid_mask(const struct rle *r, const uint8_t *mask, const uint8_t *rows, size_t stride)
{
        uint32_t h = r->h, w = r->w;
        size_t a = (size_t)h * w;
        bool canonical = r->m > 0;
        for (uint32_t i = 1; i < r->m; i++)
                canonical &= r->cnts[i] > 0;
        struct rle e = RLE_INIT, er = RLE_INIT, merged = RLE_INIT;
        rle_encode(&e, mask, h, w);
        rle_encode_rows(&er, rows, h, w, stride);
        FUZZ_CHECK(same_counts(&er, e.cnts, e.m), "rle_encode and rle_encode_rows give other counts");
        if (canonical)
                FUZZ_CHECK(same_counts(&e, r->cnts, r->m), "decoded and encoded again, the counts changed");
        check_string(&e);

        uint32_t area = 0;
        long x0 = w, x1 = -1, y0 = h, y1 = -1;
        for (size_t j = 0; j < a; j++)
                if (mask[j]) {
                        long x = (long)(j / h), y = (long)(j % h);
                        area++;
                        x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1;
                        y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1;
                }
        FUZZ_CHECK(rle_area(r) == area && rle_area(&e) == area, "area %u, %u pixels are set", rle_area(r), area);
        double bb[4];
        rle_to_bbox(&e, bb);
        if (area == 0)
                FUZZ_CHECK(bb[0] == 0 && bb[1] == 0 && bb[2] == 0 && bb[3] == 0, "an empty mask has a box");
        else
                FUZZ_CHECK(bb[0] >= 0 && bb[1] >= 0 && bb[0] + bb[2] <= w && bb[1] + bb[3] <= h && bb[0] <= x0 &&
                           bb[1] <= y0 && bb[0] + bb[2] >= x1 + 1 && bb[1] + bb[3] >= y1 + 1,
                           "box [%g %g %g %g] of pixels x %ld-%ld, y %ld-%ld in %ux%u", bb[0], bb[1], bb[2], bb[3], x0,
                           x1, y0, y1, w, h);

        struct rle two[2] = { e, e };
        rle_merge(two, 2, false, &merged);
        FUZZ_CHECK(merged.h == h && merged.w == w && same_counts(&merged, e.cnts, e.m), "a mask or itself is not itself");
        rle_merge(two, 2, true, &merged);
        FUZZ_CHECK(same_counts(&merged, e.cnts, e.m), "a mask and itself is not itself");
        double iou;
        uint8_t crowd = 1;
        rle_iou(&e, 1, &e, 1, NULL, &iou);
        FUZZ_CHECK(iou == (area ? 1 : 0), "the IoU of a mask with itself is %g", iou);
        rle_iou(&e, 1, &e, 1, &crowd, &iou);
        FUZZ_CHECK(iou == (area ? 1 : 0), "the crowd IoU of a mask with itself is %g", iou);
        rle_free(&e);
        rle_free(&er);
        rle_free(&merged);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 2)
                return 0;
        uint32_t h = data[0] & 63, w = data[1] & 63;
        _cleanup_free_ char *s = fuzz_str(data + 2, size - 2);
        _cleanup_free_ uint32_t *cnts = NULL;
        struct rle r = RLE_INIT;
        long m = coco_rle_from_string(s, &cnts);
        int e = rle_from_string(&r, s, h, w);
        FUZZ_CHECK(m == -EINVAL || m >= 0, "coco_rle_from_string returned %ld", m);
        FUZZ_CHECK((m < 0) == (e < 0), "the index's decoder says %ld, rle_from_string %d", m, e);
        if (e < 0)
                return 0;
        FUZZ_CHECK(r.h == h && r.w == w && same_counts(&r, cnts, (uint32_t)m), "the two decoders give other counts");
        check_string(&r);

        size_t a = (size_t)h * w, stride = (size_t)w + 3;
        _cleanup_free_ uint8_t *mask = xmalloc(a);
        _cleanup_free_ uint8_t *rows = xmalloc((size_t)h * stride);
        rle_decode(&r, mask);
        rle_decode_rows(&r, rows, stride);
        for (size_t j = 0; j < a; j++)
                FUZZ_CHECK(mask[j] <= 1 && mask[j] == rows[(j % h) * stride + j / h], "pixel %zu: %u and %u", j,
                           mask[j], rows[(j % h) * stride + j / h]);
        if (rle_check(&r) == 0)
                check_valid_mask(&r, mask, rows, stride);
        rle_free(&r);
        return 0;
}

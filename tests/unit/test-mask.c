/* test-mask.c: data/mask.h against pycocotools 2.0.11, bit for bit.  The
 * answers come from tests/fixtures/rle/, recorded by tests/rle-oracle.py
 * (no Python at test time); each operation is one assertion whose message
 * counts the cases that differ, and the first few differences are printed
 * as comments.  Then what needs no oracle: encode(decode(r)) == r, rows
 * against columns, merge areas, malformed strings, counts at 2^32 - 1,
 * decoding that would write past the mask. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "coco-index.h"
#include "json.h"
#include "macro.h"
#include "mask.h"
#include "bd-paths.h"
#include "rng.h"
#include "tap.h"

/* ---- fixtures and comparisons ---- */

static const char *srcdir(void)
{
        const char *s = getenv("srcdir");
        return s && *s ? s : BD_SRCDIR;
}

static char *fixture_path(const char *name)
{
        return xasprintf("%s/tests/fixtures/rle/%s", srcdir(), name);
}

static cJSON *load(const char *name)
{
        _cleanup_free_ char *p = fixture_path(name);
        struct bd_err err;
        cJSON *j = NULL;
        if (json_load_file(p, &j, NULL, &err) < 0 || !cJSON_IsArray(j)) {
                printf("Bail out! cannot read %s: %s\n", p, j ? "not a list" : err.msg);
                exit(1);
        }
        return j;
}

static double num(const cJSON *o, const char *key)
{
        const cJSON *v = cJSON_GetObjectItem(o, key);
        if (!cJSON_IsNumber(v)) {
                printf("Bail out! fixture: no number '%s'\n", key);
                exit(1);
        }
        return v->valuedouble;
}

static const char *str(const cJSON *o, const char *key)
{
        const cJSON *v = cJSON_GetObjectItem(o, key);
        if (!cJSON_IsString(v)) {
                printf("Bail out! fixture: no string '%s'\n", key);
                exit(1);
        }
        return v->valuestring;
}

static const cJSON *list(const cJSON *o, const char *key)
{
        const cJSON *v = cJSON_GetObjectItem(o, key);
        if (!cJSON_IsArray(v)) {
                printf("Bail out! fixture: no list '%s'\n", key);
                exit(1);
        }
        return v;
}

/* A JSON list of numbers as uint32 counts (malloc'ed; NULL when empty). */
static uint32_t *u32s(const cJSON *a, uint32_t *n)
{
        *n = (uint32_t)cJSON_GetArraySize(a);
        uint32_t *v = *n ? xmalloc(*n * sizeof(*v)) : NULL;
        uint32_t i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, a)
                v[i++] = (uint32_t)e->valuedouble;
        return v;
}

static double *doubles(const cJSON *a, size_t *n)
{
        *n = (size_t)cJSON_GetArraySize(a);
        double *v = xmalloc((*n ? *n : 1) * sizeof(*v));
        size_t i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, a)
                v[i++] = e->valuedouble;
        return v;
}

/* {"h", "w", "counts"} as an rle */
static void rle_json(struct rle *r, const cJSON *o)
{
        uint32_t m;
        _cleanup_free_ uint32_t *c = u32s(list(o, "counts"), &m);
        rle_set(r, (uint32_t)num(o, "h"), (uint32_t)num(o, "w"), c, m);
}

static bool same_rle(const struct rle *r, uint32_t h, uint32_t w, const uint32_t *c, uint32_t m)
{
        return r->h == h && r->w == w && r->m == m && (m == 0 || memcmp(r->cnts, c, m * sizeof(*c)) == 0);
}

static bool rle_eq(const struct rle *a, const struct rle *b)
{
        return same_rle(a, b->h, b->w, b->cnts, b->m);
}

/* the first counts of r, for messages */
static const char *show(const struct rle *r)
{
        static char buf[4][200];
        static int k;
        char *s = buf[k++ % 4];
        int p = snprintf(s, 200, "%ux%u m=%u [", r->h, r->w, r->m);
        for (uint32_t i = 0; i < r->m && p < 170; i++)
                p += snprintf(s + p, 200 - p, "%s%u", i ? " " : "", r->cnts[i]);
        snprintf(s + p, 200 - p, "%s]", p >= 170 ? " ..." : "");
        return s;
}

/* One operation's verdict: an assertion naming how many cases differ. */
static void verdict(int bad, int total, const char *fmt, ...) _printf_(3, 4);
static void verdict(int bad, int total, const char *fmt, ...)
{
        char what[300];
        va_list ap;
        va_start(ap, fmt);
        int p = vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        if (p >= 0 && (size_t)p < sizeof(what))
                snprintf(what + p, sizeof(what) - p, ": %d of %d differ", bad, total);
        ok(bad == 0 && total > 0, what);
}

/* The first few differences of an operation, as TAP comments. */
#define DIFF(bad, ...)                          \
        do {                                    \
                if ((bad) <= 3) {               \
                        printf("#   ");         \
                        printf(__VA_ARGS__);    \
                        printf("\n");           \
                }                               \
        } while (0)

static bool box_eq(const double *a, const double *b)
{
        return memcmp(a, b, 4 * sizeof(double)) == 0;
}

/* ---- masks: encode, decode, area, box, string ---- */

struct masks_bad {
        int encode, encode_rows, encode_stride, nonzero, decode, decode_rows, area, bbox, to_string, from_string,
                check;
};

static void test_masks(void)
{
        _cleanup_json_ cJSON *cases = load("masks.json");
        struct masks_bad bad = { 0 };
        int n = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cases) {
                const char *name = str(c, "name");
                uint32_t h = (uint32_t)num(c, "h"), w = (uint32_t)num(c, "w"), m;
                size_t a = (size_t)h * w, stride = w + 3;
                const char *hex = str(c, "bits");
                _cleanup_free_ uint32_t *want = u32s(list(c, "counts"), &m);
                _cleanup_free_ uint8_t *rows = xmalloc(a), *cols = xmalloc(a), *scaled = xmalloc(a);
                _cleanup_free_ uint8_t *padded = xmalloc(h * stride), *out = xmalloc(a);
                _cleanup_free_ uint8_t *out_rows = xmalloc(h * stride);
                for (size_t i = 0; i < a; i++) {
                        char d = hex[i / 4];
                        int v = d <= '9' ? d - '0' : d - 'a' + 10;
                        rows[i] = (uint8_t)((v >> (3 - i % 4)) & 1);
                }
                memset(padded, 0xa5, h * stride);       /* the padding is set: it must be skipped */
                for (uint32_t y = 0; y < h; y++)
                        for (uint32_t x = 0; x < w; x++) {
                                uint8_t v = rows[(size_t)y * w + x];
                                cols[(size_t)x * h + y] = v;
                                padded[y * stride + x] = v;
                                scaled[(size_t)y * w + x] = (uint8_t)(v * (1 + (x * 7 + y * 3) % 255));
                        }
                n++;

                _cleanup_rle_ struct rle r = RLE_INIT, rr = RLE_INIT, rs = RLE_INIT, rn = RLE_INIT,
                                         rp = RLE_INIT;
                rle_encode(&r, cols, h, w);
                if (!same_rle(&r, h, w, want, m) && ++bad.encode)
                        DIFF(bad.encode, "rle_encode %s: got %s", name, show(&r));
                rle_encode_rows(&rr, rows, h, w, w);
                if (!same_rle(&rr, h, w, want, m) && ++bad.encode_rows)
                        DIFF(bad.encode_rows, "rle_encode_rows %s: got %s", name, show(&rr));
                rle_encode_rows(&rs, padded, h, w, stride);
                if (!same_rle(&rs, h, w, want, m) && ++bad.encode_stride)
                        DIFF(bad.encode_stride, "rle_encode_rows stride %zu %s: got %s", stride, name, show(&rs));
                rle_encode_rows(&rn, scaled, h, w, w);
                if (!same_rle(&rn, h, w, want, m) && ++bad.nonzero)
                        DIFF(bad.nonzero, "rle_encode_rows of bytes 0..255 %s: got %s", name, show(&rn));

                struct rle ref = { h, w, m, want };
                memset(out, 0x77, a);
                rle_decode(&ref, out);
                if (memcmp(out, cols, a) != 0 && ++bad.decode)
                        DIFF(bad.decode, "rle_decode %s", name);
                memset(out_rows, 0x77, h * stride);
                rle_decode_rows(&ref, out_rows, stride);
                bool rows_ok = true;
                for (uint32_t y = 0; y < h; y++)
                        for (uint32_t x = 0; x < stride; x++)
                                rows_ok &= out_rows[y * stride + x] ==
                                           (x < w ? rows[(size_t)y * w + x] : 0x77);
                if (!rows_ok && ++bad.decode_rows)
                        DIFF(bad.decode_rows, "rle_decode_rows (stride %zu) %s, or the padding written", stride, name);

                if (rle_area(&ref) != (uint32_t)num(c, "area") && ++bad.area)
                        DIFF(bad.area, "rle_area %s: %u, want %u", name, rle_area(&ref), (uint32_t)num(c, "area"));
                size_t nb;
                _cleanup_free_ double *wbb = doubles(list(c, "bbox"), &nb);
                double bb[4];
                rle_to_bbox(&ref, bb);
                if (!box_eq(bb, wbb) && ++bad.bbox)
                        DIFF(bad.bbox, "rle_to_bbox %s: [%g %g %g %g], want [%g %g %g %g]", name, bb[0], bb[1],
                             bb[2], bb[3], wbb[0], wbb[1], wbb[2], wbb[3]);
                _cleanup_free_ char *s = rle_to_string(&ref);
                if (!streq(s, str(c, "string")) && ++bad.to_string)
                        DIFF(bad.to_string, "rle_to_string %s: '%s', want '%s'", name, s, str(c, "string"));
                int ret = rle_from_string(&rp, str(c, "string"), h, w);
                if ((ret != 0 || !same_rle(&rp, h, w, want, m)) && ++bad.from_string)
                        DIFF(bad.from_string, "rle_from_string %s: %d, %s", name, ret, show(&rp));
                if (rle_check(&ref) != 0 && ++bad.check)
                        DIFF(bad.check, "rle_check %s", name);
        }
        verdict(bad.encode, n, "rle_encode (column-major) of %d masks equals pycocotools' encode", n);
        verdict(bad.encode_rows, n, "rle_encode_rows (stride w) gives the same counts");
        verdict(bad.encode_stride, n, "rle_encode_rows with stride w + 3 skips the padding");
        verdict(bad.nonzero, n, "rle_encode_rows: any nonzero byte is set");
        verdict(bad.decode, n, "rle_decode gives the masks back, column-major");
        verdict(bad.decode_rows, n, "rle_decode_rows gives them back as rows, the padding left alone");
        verdict(bad.area, n, "rle_area equals pycocotools' area");
        verdict(bad.bbox, n, "rle_to_bbox equals pycocotools' toBbox (wrapping runs, trailing zeros, empty)");
        verdict(bad.to_string, n, "rle_to_string equals pycocotools' compressed counts");
        verdict(bad.from_string, n, "rle_from_string of pycocotools' strings gives the counts");
        verdict(bad.check, n, "rle_check accepts every encoded mask");
}

/* area and toBbox of counts that are not what encode makes */
static void test_odd_counts(void)
{
        _cleanup_json_ cJSON *cases = load("odd-counts.json");
        int n = 0, bad_area = 0, bad_bbox = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cases) {
                _cleanup_rle_ struct rle r = RLE_INIT;
                rle_json(&r, c);
                n++;
                if (rle_area(&r) != (uint32_t)num(c, "area") && ++bad_area)
                        DIFF(bad_area, "rle_area %s: %u", show(&r), rle_area(&r));
                size_t nb;
                _cleanup_free_ double *want = doubles(list(c, "bbox"), &nb);
                double bb[4];
                rle_to_bbox(&r, bb);
                if (!box_eq(bb, want) && ++bad_bbox)
                        DIFF(bad_bbox, "rle_to_bbox %s: [%g %g %g %g], want [%g %g %g %g]", show(&r), bb[0], bb[1],
                             bb[2], bb[3], want[0], want[1], want[2], want[3]);
        }
        verdict(bad_area, n, "rle_area of odd counts (zero-length runs, sums off h * w) as pycocotools");
        verdict(bad_bbox, n, "rle_to_bbox of odd counts as pycocotools 2.0.11 (empty runs of 1 skipped)");
}

/* ---- merge ---- */

static void test_merge(void)
{
        _cleanup_json_ cJSON *cases = load("merge.json");
        int n = 0, bad = 0, bad_area = 0, mismatched = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cases) {
                const cJSON *in = list(c, "in"), *e;
                size_t k = 0, nin = (size_t)cJSON_GetArraySize(in);
                struct rle *R = xcalloc(nin, sizeof(*R));
                cJSON_ArrayForEach(e, in)
                        rle_json(&R[k++], e);
                bool intersect = num(c, "intersect") != 0;
                _cleanup_rle_ struct rle out = RLE_INIT, want = RLE_INIT;
                rle_json(&want, cJSON_GetObjectItem(c, "out"));
                rle_merge(R, nin, intersect, &out);
                n++;
                mismatched += want.h == 0;
                if (!rle_eq(&out, &want) && ++bad)
                        DIFF(bad, "rle_merge case %d (%zu masks, %s): got %s, want %s", n - 1, nin,
                             intersect ? "intersection" : "union", show(&out), show(&want));
                if (rle_area(&out) != (uint32_t)num(cJSON_GetObjectItem(c, "out"), "area") && ++bad_area)
                        DIFF(bad_area, "rle_area of merge case %d: %u", n - 1, rle_area(&out));
                for (size_t i = 0; i < nin; i++)
                        rle_free(&R[i]);
                free(R);
        }
        verdict(bad, n, "rle_merge equals pycocotools' merge (union, intersection, %d of other sizes)", mismatched);
        verdict(bad_area, n, "rle_area of the merged masks");

        /* n == 0 and n == 1 */
        _cleanup_rle_ struct rle none = RLE_INIT, one = RLE_INIT, src = RLE_INIT;
        rle_merge(NULL, 0, false, &none);
        ok(none.h == 0 && none.w == 0 && none.m == 0, "rle_merge of no mask: an empty 0 x 0 mask");
        static const uint32_t cnt[] = { 0, 3, 4, 5 };
        rle_set(&src, 3, 4, cnt, 4);
        rle_merge(&src, 1, true, &one);
        ok(rle_eq(&one, &src) && one.cnts != src.cnts, "rle_merge of one mask: a copy of it");
}

/* ---- iou ---- */

static void test_iou(void)
{
        _cleanup_json_ cJSON *cases = load("iou.json");
        int n = 0, pairs = 0, bad = 0, bad_null = 0, crowd = 0, minus = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cases) {
                const cJSON *jd = list(c, "dt"), *jg = list(c, "gt"), *e;
                size_t m = (size_t)cJSON_GetArraySize(jd), ng = (size_t)cJSON_GetArraySize(jg), k, nw;
                struct rle *dt = xcalloc(m, sizeof(*dt)), *gt = xcalloc(ng, sizeof(*gt));
                k = 0;
                cJSON_ArrayForEach(e, jd)
                        rle_json(&dt[k++], e);
                k = 0;
                cJSON_ArrayForEach(e, jg)
                        rle_json(&gt[k++], e);
                uint8_t *iscrowd = xcalloc(ng, 1);
                bool any_crowd = false;
                k = 0;
                cJSON_ArrayForEach(e, list(c, "iscrowd")) {
                        any_crowd |= (iscrowd[k++] = (uint8_t)e->valuedouble) != 0;
                        crowd += e->valuedouble != 0;
                }
                _cleanup_free_ double *want = doubles(list(c, "iou"), &nw);
                _cleanup_free_ double *o = xmalloc(m * ng * sizeof(*o));
                rle_iou(dt, m, gt, ng, iscrowd, o);
                for (size_t i = 0; i < m * ng; i++) {
                        pairs++;
                        minus += want[i] == -1;
                        if (o[i] != want[i] && ++bad)
                                DIFF(bad, "rle_iou set %d dt %zu gt %zu: %.17g, want %.17g (%s vs %s)", n, i / ng,
                                     i % ng, o[i], want[i], show(&dt[i / ng]), show(&gt[i % ng]));
                }
                if (!any_crowd) {
                        rle_iou(dt, m, gt, ng, NULL, o);
                        for (size_t i = 0; i < m * ng; i++)
                                if (o[i] != want[i] && ++bad_null)
                                        DIFF(bad_null, "rle_iou set %d, iscrowd NULL: dt %zu gt %zu", n, i / ng, i % ng);
                }
                n++;
                for (size_t i = 0; i < m; i++)
                        rle_free(&dt[i]);
                for (size_t i = 0; i < ng; i++)
                        rle_free(&gt[i]);
                free(dt);
                free(gt);
                free(iscrowd);
        }
        verdict(bad, pairs, "rle_iou of %d sets equals pycocotools' iou exactly (%d crowd, %d pairs -1)", n, crowd,
                minus);
        verdict(bad_null, pairs, "rle_iou with iscrowd NULL reads no crowd");

        _cleanup_json_ cJSON *boxes = load("bbox-iou.json");
        n = pairs = bad = 0;
        cJSON_ArrayForEach(c, boxes) {
                const cJSON *jd = list(c, "dt"), *jg = list(c, "gt"), *e;
                size_t m = (size_t)cJSON_GetArraySize(jd), ng = (size_t)cJSON_GetArraySize(jg), k = 0, nw, t;
                _cleanup_free_ double *dt = xmalloc(m * 4 * sizeof(double)), *gt = xmalloc(ng * 4 * sizeof(double));
                cJSON_ArrayForEach(e, jd) {
                        _cleanup_free_ double *b = doubles(e, &t);
                        memcpy(dt + 4 * k++, b, 4 * sizeof(double));
                }
                k = 0;
                cJSON_ArrayForEach(e, jg) {
                        _cleanup_free_ double *b = doubles(e, &t);
                        memcpy(gt + 4 * k++, b, 4 * sizeof(double));
                }
                _cleanup_free_ uint8_t *iscrowd = xcalloc(ng, 1);
                k = 0;
                cJSON_ArrayForEach(e, list(c, "iscrowd"))
                        iscrowd[k++] = (uint8_t)e->valuedouble;
                _cleanup_free_ double *want = doubles(list(c, "iou"), &nw);
                _cleanup_free_ double *o = xmalloc(m * ng * sizeof(*o));
                bbox_iou(dt, m, gt, ng, iscrowd, o);
                for (size_t i = 0; i < m * ng; i++) {
                        pairs++;
                        if (o[i] != want[i] && ++bad)
                                DIFF(bad, "bbox_iou set %d dt %zu gt %zu: %.17g, want %.17g", n, i / ng, i % ng,
                                     o[i], want[i]);
                }
                n++;
        }
        verdict(bad, pairs, "bbox_iou of %d sets of boxes equals pycocotools' iou exactly", n);
}

/* ---- polygons and boxes ---- */

static void test_poly(void)
{
        _cleanup_json_ cJSON *cases = load("poly.json");
        int n = 0, parts = 0, bad_poly = 0, bad_obj = 0, bad_box = 0, boxes = 0, multi = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cases) {
                uint32_t h = (uint32_t)num(c, "h"), w = (uint32_t)num(c, "w");
                const cJSON *polys = list(c, "polys"), *strings = list(c, "strings"), *e;
                uint32_t np = (uint32_t)cJSON_GetArraySize(polys), total = 0, k = 0;
                cJSON_ArrayForEach(e, polys)
                        total += (uint32_t)cJSON_GetArraySize(e);
                _cleanup_free_ uint32_t *len = xmalloc(np * sizeof(*len));
                _cleanup_free_ double *xy = xmalloc((total ? total : 1) * sizeof(*xy));
                size_t at = 0;
                bool as_boxes = cJSON_GetArraySize(cJSON_GetArrayItem(polys, 0)) == 4;
                cJSON_ArrayForEach(e, polys) {
                        size_t t;
                        _cleanup_free_ double *v = doubles(e, &t);
                        len[k] = (uint32_t)t;
                        memcpy(xy + at, v, t * sizeof(double));
                        const char *want = cJSON_GetArrayItem(strings, (int)k)->valuestring;
                        _cleanup_rle_ struct rle r = RLE_INIT;
                        if (as_boxes)
                                rle_from_bbox(&r, v, h, w);
                        else
                                rle_from_poly(&r, v, t / 2, h, w);
                        _cleanup_free_ char *s = rle_to_string(&r);
                        parts++;
                        if (as_boxes) {
                                boxes++;
                                if (!streq(s, want) && ++bad_box)
                                        DIFF(bad_box, "rle_from_bbox case %d part %u: '%s', want '%s'", n, k, s, want);
                        } else if ((!streq(s, want) || r.h != h || r.w != w) && ++bad_poly) {
                                DIFF(bad_poly, "rle_from_poly case %d part %u (%ux%u, %zu coordinates): '%s', want '%s'",
                                     n, k, h, w, t, s, want);
                        }
                        at += t;
                        k++;
                }
                const cJSON *jm = cJSON_GetObjectItem(c, "merged");
                const char *want = jm ? jm->valuestring : cJSON_GetArrayItem(strings, 0)->valuestring;
                multi += np > 1;
                struct coco_polygons p = { np, len, xy };
                _cleanup_rle_ struct rle obj = RLE_INIT;
                rle_from_polygons(&obj, &p, h, w);
                _cleanup_free_ char *s = rle_to_string(&obj);
                if ((!streq(s, want) || obj.h != h || obj.w != w) && ++bad_obj)
                        DIFF(bad_obj, "rle_from_polygons case %d (%u parts%s): '%s', want '%s'", n, np,
                             as_boxes ? ", as boxes" : "", s, want);
                n++;
        }
        verdict(bad_poly, parts - boxes, "rle_from_poly of %d polygons equals pycocotools' frPoly", parts - boxes);
        verdict(bad_obj, n, "rle_from_polygons of %d objects (%d of several parts) equals frPyObjects + merge", n,
                multi);
        verdict(bad_box, boxes, "a first part of 4 coordinates: every part is a box (frBbox)");

        _cleanup_json_ cJSON *bbs = load("bbox.json");
        n = bad_box = 0;
        cJSON_ArrayForEach(c, bbs) {
                size_t t;
                _cleanup_free_ double *bb = doubles(list(c, "bbox"), &t);
                _cleanup_rle_ struct rle r = RLE_INIT;
                uint32_t h = (uint32_t)num(c, "h"), w = (uint32_t)num(c, "w");
                rle_from_bbox(&r, bb, h, w);
                _cleanup_free_ char *s = rle_to_string(&r);
                if ((!streq(s, str(c, "string")) || r.h != h || r.w != w) && ++bad_box)
                        DIFF(bad_box, "rle_from_bbox [%g %g %g %g] at %ux%u: '%s', want '%s'", bb[0], bb[1], bb[2],
                             bb[3], h, w, s, str(c, "string"));
                n++;
        }
        verdict(bad_box, n, "rle_from_bbox of %d boxes equals pycocotools' frBbox", n);
}

/* ---- strings ---- */

static void test_strings(void)
{
        _cleanup_json_ cJSON *cases = load("strings.json");
        int n = 0, bad_to = 0, bad_from = 0, bad_check = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cases) {
                _cleanup_rle_ struct rle r = RLE_INIT, back = RLE_INIT;
                rle_json(&r, c);
                const char *want = str(c, "string");
                _cleanup_free_ char *s = rle_to_string(&r);
                if (!streq(s, want) && ++bad_to)
                        DIFF(bad_to, "rle_to_string %s: '%s', want '%s'", show(&r), s, want);
                int ret = rle_from_string(&back, want, r.h, r.w);
                if ((ret != 0 || !rle_eq(&back, &r)) && ++bad_from)
                        DIFF(bad_from, "rle_from_string '%s': %d, %s, want %s", want, ret, show(&back), show(&r));
                bool covers = cJSON_IsTrue(cJSON_GetObjectItem(c, "covers"));
                if (rle_check(&r) != (covers ? 0 : -EINVAL) && ++bad_check)
                        DIFF(bad_check, "rle_check %s: %d", show(&r), rle_check(&r));
                n++;
        }
        verdict(bad_to, n, "rle_to_string of large counts and negative deltas as pycocotools");
        verdict(bad_from, n, "rle_from_string of them gives the counts back");
        verdict(bad_check, n, "rle_check: 0 where the counts cover h * w, -EINVAL elsewhere");

        /* counts up to 2^32 - 1 survive a round trip (pycocotools' own
         * buffer is too short for them) */
        static const uint32_t big[] = { 0xffffffffu, 0, 0xffffffffu, 1, 0x80000000u, 0xfffffffeu, 7, 0x40000000u };
        _cleanup_rle_ struct rle r = RLE_INIT, back = RLE_INIT;
        rle_set(&r, 1, 1, big, ARRAY_SIZE(big));
        _cleanup_free_ char *s = rle_to_string(&r);
        ok(rle_from_string(&back, s, 1, 1) == 0 && rle_eq(&back, &r), "counts up to 2^32 - 1 round-trip through a string");
        _cleanup_rle_ struct rle empty = RLE_INIT;
        ok(rle_from_string(&empty, "", 3, 4) == 0 && empty.m == 0 && empty.h == 3 && empty.w == 4,
           "an empty string: no counts");

        /* malformed strings */
        static const struct {
                const char *s, *why;
        } badstr[] = {
                { "1p", "a character above 'o'" },
                { "1/", "a character below '0'" },
                { "1 2", "a space" },
                { "12\x7f", "DEL" },
                { "1\xc3\xa9", "UTF-8" },
                { "1P", "the last number truncated (continuation bit)" },
                { "PPP", "only continuations" },
                { "PPPPPPPPPPPPP0", "a number of 14 characters" },
                { "O", "a first count of -1" },
                { "5J", "a second count of -6" },
                { "533L", "a count made negative by its delta (3 - 4)" },
        };
        int bad = 0;
        for (size_t i = 0; i < ARRAY_SIZE(badstr); i++) {
                _cleanup_rle_ struct rle x = RLE_INIT;
                int ret = rle_from_string(&x, badstr[i].s, 10, 10);
                if (ret != -EINVAL && ++bad)
                        DIFF(bad, "rle_from_string '%s' (%s): %d, %s", badstr[i].s, badstr[i].why, ret, show(&x));
        }
        verdict(bad, (int)ARRAY_SIZE(badstr), "malformed strings give -EINVAL");
}

/* a count over 2^32 - 1, encoded as pycocotools would if it could */
static char *encode_wide(const long long *v, size_t m)
{
        char *s = xmalloc(m * 10 + 1);
        size_t p = 0;
        for (size_t i = 0; i < m; i++) {
                long long x = v[i] - (i > 2 ? v[i - 2] : 0);
                bool more = true;
                while (more) {
                        long long ch = x & 0x1f;
                        x >>= 5;
                        more = (ch & 0x10) ? x != -1 : x != 0;
                        if (more)
                                ch |= 0x20;
                        s[p++] = (char)(ch + 48);
                }
        }
        s[p] = '\0';
        return s;
}

static void test_string_limits(void)
{
        static const long long over[][4] = {
                { 1LL << 32, 0, 0, 0 },
                { 5, (1LL << 32) + 7, 0, 0 },
                { 1, 0xffffffffLL, 2, 0x100000000LL },  /* the last through a delta of +1 */
                { 1, 2, 3, -1 },
        };
        static const size_t len[] = { 1, 2, 4, 4 };
        int bad = 0;
        for (size_t i = 0; i < ARRAY_SIZE(over); i++) {
                _cleanup_free_ char *s = encode_wide(over[i], len[i]);
                _cleanup_rle_ struct rle x = RLE_INIT;
                int ret = rle_from_string(&x, s, 10, 10);
                if (ret != -EINVAL && ++bad)
                        DIFF(bad, "rle_from_string '%s' (case %zu): %d, %s", s, i, ret, show(&x));
        }
        verdict(bad, (int)ARRAY_SIZE(over), "counts over 2^32 - 1 or negative, also through a delta: -EINVAL");
        static const long long fine[] = { 1, 0xffffffffLL, 2, 0xfffffffeLL, 0, 0xffffffffLL };
        _cleanup_free_ char *s = encode_wide(fine, ARRAY_SIZE(fine));
        _cleanup_rle_ struct rle x = RLE_INIT;
        int ret = rle_from_string(&x, s, 1, 1);
        ok(ret == 0 && x.m == 6 && x.cnts[1] == 0xffffffffu && x.cnts[3] == 0xfffffffeu && x.cnts[5] == 0xffffffffu,
           "counts of 2^32 - 1 through deltas parse");
}

/* ---- rle_check, rle_set, rle_free, 32-bit areas, decoding past the end ---- */

static void test_check_and_limits(void)
{
        static const uint32_t wrap[] = { 0xffffffffu, 2 };     /* sums to 1 in 32 bits */
        static const uint32_t fine[] = { 3, 4, 5 };
        _cleanup_rle_ struct rle r = RLE_INIT;
        rle_set(&r, 1, 1, wrap, 2);
        is_int(rle_check(&r), -EINVAL, "rle_check: counts whose 32-bit sum wraps to h * w are refused");
        rle_set(&r, 3, 4, fine, 3);
        is_int(rle_check(&r), 0, "rle_check: 3 + 4 + 5 covers 3 x 4");
        rle_set(&r, 3, 5, fine, 3);
        is_int(rle_check(&r), -EINVAL, "rle_check: too few pixels");
        rle_set(&r, 2, 5, fine, 3);
        is_int(rle_check(&r), -EINVAL, "rle_check: too many pixels");
        rle_set(&r, 3, 4, NULL, 0);
        is_int(rle_check(&r), -EINVAL, "rle_check: no counts for 12 pixels");
        rle_set(&r, 0, 0, NULL, 0);
        is_int(rle_check(&r), 0, "rle_check: an empty 0 x 0 mask");

        static const uint32_t big[] = { 0, 0xffffffffu, 0, 2 };
        rle_set(&r, 1, 1, big, 4);
        is_int(rle_area(&r), 1, "rle_area counts in 32 bits, as maskApi.c (2^32 - 1 + 2 = 1)");

        /* counts beyond h * w: nothing written past the mask */
        static const uint32_t over[] = { 2, 5, 100, 7 };
        rle_set(&r, 3, 2, over, 4);
        uint8_t buf[6 + 16], rows[2 * 5 + 16];
        memset(buf, 0x5a, sizeof(buf));
        rle_decode(&r, buf);
        bool untouched = true;
        for (size_t i = 6; i < sizeof(buf); i++)
                untouched &= buf[i] == 0x5a;
        static const uint8_t want[6] = { 0, 0, 1, 1, 1, 1 };
        ok(untouched && memcmp(buf, want, 6) == 0, "rle_decode: counts past h * w are not written");
        memset(rows, 0x5a, sizeof(rows));
        rle_decode_rows(&r, rows, 5);           /* rows of 2 pixels in 5 bytes */
        untouched = true;
        for (size_t i = 0; i < sizeof(rows); i++) {
                bool inside = i < 15 && i % 5 < 2;
                if (!inside)
                        untouched &= rows[i] == 0x5a;
        }
        /* column-major 0 0 1 | 1 1 1: rows (x0, x1) = (0, 1), (0, 1), (1, 1) */
        ok(untouched && rows[0] == 0 && rows[1] == 1 && rows[5] == 0 && rows[6] == 1 && rows[10] == 1 && rows[11] == 1,
           "rle_decode_rows: the same, rows of stride 5");

        /* rle_set copies, frees what was there; rle_free resets */
        uint32_t mine[] = { 1, 2, 3 };
        rle_set(&r, 2, 3, mine, 3);
        mine[0] = 99;
        ok(r.m == 3 && r.cnts[0] == 1 && r.cnts != mine, "rle_set copies the counts");
        rle_free(&r);
        ok(r.h == 0 && r.w == 0 && r.m == 0 && r.cnts == NULL, "rle_free resets to RLE_INIT");
        rle_free(&r);
        ok(true, "rle_free twice is harmless");
}

/* ---- properties on random masks ---- */

static void random_mask(struct bd_rng *g, uint8_t *rows, uint32_t h, uint32_t w)
{
        /* runs along rows of random length, or noise, or a few rectangles */
        double kind = bd_rng_uniform(g);
        size_t a = (size_t)h * w;
        if (kind < 0.3) {
                uint8_t v = bd_rng_uniform(g) < 0.5;
                for (size_t i = 0; i < a; i++) {
                        if (bd_rng_uniform(g) < 0.08)
                                v = !v;
                        rows[i] = v;
                }
        } else if (kind < 0.5) {
                for (size_t i = 0; i < a; i++)
                        rows[i] = bd_rng_uniform(g) < 0.5;
        } else {
                memset(rows, 0, a);
                int nr = 1 + (int)(bd_rng_uniform(g) * 4);
                for (int k = 0; k < nr; k++) {
                        uint32_t x0 = (uint32_t)(bd_rng_uniform(g) * w), y0 = (uint32_t)(bd_rng_uniform(g) * h);
                        uint32_t x1 = x0 + (uint32_t)(bd_rng_uniform(g) * (w - x0)) + 1;
                        uint32_t y1 = y0 + (uint32_t)(bd_rng_uniform(g) * (h - y0)) + 1;
                        for (uint32_t y = y0; y < y1 && y < h; y++)
                                for (uint32_t x = x0; x < x1 && x < w; x++)
                                        rows[(size_t)y * w + x] = 1;
                }
        }
}

static void test_properties(void)
{
        struct bd_rng g;
        bd_rng_seed_key(&g, 0x6d61736bULL);
        int n = 0, bad_rows = 0, bad_round = 0, bad_dec = 0, bad_str = 0, bad_merge = 0, bad_sym = 0, bad_self = 0,
            bad_canon = 0;
        for (int it = 0; it < 400; it++) {
                uint32_t h = 1 + (uint32_t)(bd_rng_uniform(&g) * (it < 200 ? 12 : 70));
                uint32_t w = 1 + (uint32_t)(bd_rng_uniform(&g) * (it < 200 ? 12 : 70));
                size_t a = (size_t)h * w;
                _cleanup_free_ uint8_t *ra = xmalloc(a), *rb = xmalloc(a), *ca = xmalloc(a), *out = xmalloc(a);
                random_mask(&g, ra, h, w);
                random_mask(&g, rb, h, w);
                for (uint32_t y = 0; y < h; y++)
                        for (uint32_t x = 0; x < w; x++)
                                ca[(size_t)x * h + y] = ra[(size_t)y * w + x];
                _cleanup_rle_ struct rle A = RLE_INIT, Ac = RLE_INIT, B = RLE_INIT, A2 = RLE_INIT, P = RLE_INIT;
                rle_encode_rows(&A, ra, h, w, w);
                rle_encode(&Ac, ca, h, w);
                rle_encode_rows(&B, rb, h, w, w);
                n++;
                bad_rows += !rle_eq(&A, &Ac);
                /* canonical: starts with a run of 0, no other zero-length run */
                bool canon = A.m >= 1 && rle_check(&A) == 0;
                for (uint32_t i = 1; i < A.m; i++)
                        canon &= A.cnts[i] > 0;
                bad_canon += !canon;
                rle_decode(&A, out);
                bad_dec += memcmp(out, ca, a) != 0;
                rle_encode(&A2, out, h, w);
                bad_round += !rle_eq(&A2, &A);
                _cleanup_free_ char *s = rle_to_string(&A);
                bad_str += rle_from_string(&P, s, h, w) != 0 || !rle_eq(&P, &A);

                /* area(a | b) + area(a & b) == area(a) + area(b), and
                 * against the pixels */
                struct rle both[2] = { A, B };
                _cleanup_rle_ struct rle U = RLE_INIT, I = RLE_INIT;
                rle_merge(both, 2, false, &U);
                rle_merge(both, 2, true, &I);
                uint32_t pu = 0, pi = 0;
                for (size_t i = 0; i < a; i++) {
                        pu += ra[i] | rb[i];
                        pi += ra[i] & rb[i];
                }
                bad_merge += rle_area(&U) != pu || rle_area(&I) != pi ||
                             rle_area(&U) + rle_area(&I) != rle_area(&A) + rle_area(&B) || rle_check(&U) != 0 ||
                             rle_check(&I) != 0;

                /* iou(a, b) == iou(b, a) without crowd; iou(a, a) is 1 */
                double ab, ba, aa;
                rle_iou(&A, 1, &B, 1, NULL, &ab);
                rle_iou(&B, 1, &A, 1, NULL, &ba);
                rle_iou(&A, 1, &A, 1, NULL, &aa);
                bad_sym += ab != ba || (pi > 0 && ab != (double)pi / (double)pu);
                bad_self += aa != (rle_area(&A) ? 1.0 : 0.0);
        }
        verdict(bad_rows, n, "random masks: rle_encode_rows and rle_encode agree");
        verdict(bad_canon, n, "random masks: counts start with 0s, no empty run inside, cover h * w");
        verdict(bad_dec, n, "random masks: decode(encode(m)) == m");
        verdict(bad_round, n, "random masks: encode(decode(r)) == r");
        verdict(bad_str, n, "random masks: rle_from_string(rle_to_string(r)) == r");
        verdict(bad_merge, n, "random pairs: merge areas against the pixels, |a u b| + |a n b| = |a| + |b|");
        verdict(bad_sym, n, "random pairs: rle_iou symmetric and |a n b| / |a u b|");
        verdict(bad_self, n, "random masks: rle_iou(a, a) is 1 (0 when empty)");
}

/* ---- ground-truth masks of a COCO file ---- */

static void test_coco(void)
{
        _cleanup_free_ char *path = fixture_path("coco.json");
        _cleanup_json_ cJSON *cases = load("coco-masks.json");
        _cleanup_(coco_index_freep) struct coco_index *x = NULL;
        struct bd_err err;
        if (coco_index_open(path, NULL, COCO_INDEX_NO_CACHE, &x, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                exit(1);
        }
        int n = 0, bad = 0, kinds[3] = { 0 }, multi = 0, other_size = 0;
        bool empty_ok = false;
        int empty_seen = 0;
        for (size_t i = 0; i < x->n_anns; i++) {
                const struct coco_ann *a = &x->anns[i];
                const struct coco_image *im = &x->images[a->image];
                _cleanup_rle_ struct rle r = RLE_INIT;
                int ret = coco_ann_mask(x, a, &r);
                if (a->seg_kind == COCO_SEG_NONE) {
                        empty_seen++;
                        empty_ok = ret == 0 && r.h == im->height && r.w == im->width && rle_area(&r) == 0 &&
                                   rle_check(&r) == 0;
                        continue;
                }
                const cJSON *c = NULL, *e;
                cJSON_ArrayForEach(e, cases)
                        if ((int64_t)num(e, "id") == a->id)
                                c = e;
                if (!c) {
                        printf("Bail out! no recorded mask for annotation %lld\n", (long long)a->id);
                        exit(1);
                }
                kinds[a->seg_kind]++;
                if (a->seg_kind == COCO_SEG_POLYGONS) {
                        struct coco_polygons p;
                        if (coco_ann_polygons(x, a, &p) == 0)
                                multi += p.n > 1;
                }
                other_size += num(c, "h") != im->height || num(c, "w") != im->width;
                _cleanup_free_ char *s = ret == 0 ? rle_to_string(&r) : NULL;
                if ((ret != 0 || !streq(s, str(c, "string")) || r.h != (uint32_t)num(c, "h") ||
                     r.w != (uint32_t)num(c, "w")) && ++bad)
                        DIFF(bad, "coco_ann_mask of annotation %lld: %d, %ux%u '%s', want %gx%g '%s'", (long long)a->id,
                             ret, r.h, r.w, s ? s : "", num(c, "h"), num(c, "w"), str(c, "string"));
                n++;
        }
        verdict(bad, n, "coco_ann_mask equals annToRLE (%d polygon objects, %d of several parts, %d RLE, %d not "
                "of the image's size)", kinds[COCO_SEG_POLYGONS], multi, kinds[COCO_SEG_RLE], other_size);
        ok(n == cJSON_GetArraySize(cases), "every recorded annotation was in the index");
        ok(empty_seen == 1 && empty_ok, "an annotation without segmentation: an empty mask of the image's size");
}

int main(void)
{
        test_masks();
        test_odd_counts();
        test_merge();
        test_iou();
        test_poly();
        test_strings();
        test_string_limits();
        test_check_and_limits();
        test_properties();
        test_coco();
        return done_testing();
}

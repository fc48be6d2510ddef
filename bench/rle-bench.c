/* rle-bench.c: data/mask.c on the inputs bench/rle-ops.py wrote, timed
 * the way that script times pycocotools, and checked against its answers.
 *
 *   rle-bench DIR [ROUNDS]
 *
 * Prints "ours OP SECONDS" (the median of ROUNDS rounds) for
 *   encode       rle_encode of the 100 column-major masks (pycocotools' encode)
 *   encode-rows  rle_encode_rows of the same masks as rows (no transpose needed)
 *   iou          rle_from_string of each image's detections and ground
 *                truths, then rle_iou: the work of pycocotools' iou()
 *   iou-parsed   rle_iou alone, the strings parsed beforehand
 *   poly         rle_from_polygons of each object (frPyObjects + merge)
 * then "mismatches N" (results that differ from pycocotools'; 0 expected).
 * bench/rle-ops.sh drives it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "coco-index.h"
#include "fs.h"
#include "json.h"
#include "macro.h"
#include "mask.h"
#include "strutil.h"

struct iou_image {
        size_t m, n;
        char **dt, **gt;        /* compressed strings */
        struct rle *dtr, *gtr;  /* parsed, for iou-parsed */
        uint8_t *iscrowd;
        double *want;           /* m * n */
};

struct object {
        struct coco_polygons p;
        uint32_t *len;
        double *xy;
        const char *want;
};

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
        qsort(t, (size_t)n, sizeof(*t), cmp_double);
        return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static _noreturn_ void die(const char *what)
{
        fprintf(stderr, "rle-bench: %s\n", what);
        exit(1);
}

static char **strings(const cJSON *a, size_t *n)
{
        *n = (size_t)cJSON_GetArraySize(a);
        char **s = xcalloc(*n ? *n : 1, sizeof(*s));
        size_t i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, a)
                s[i++] = e->valuestring;
        return s;
}

int main(int argc, char **argv)
{
        if (argc < 2)
                die("usage: rle-bench DIR [ROUNDS]");
        const char *dir = argv[1];
        long nr = 5;
        if (argc > 2 && (str_parse_long(argv[2], &nr) < 0 || nr < 1 || nr > 1000))
                die("ROUNDS: 1 to 1000");
        int rounds = (int)nr;
        _cleanup_free_ char *jpath = xasprintf("%s/inputs.json", dir);
        _cleanup_free_ char *mpath = xasprintf("%s/masks.bin", dir);
        _cleanup_json_ cJSON *in = NULL;
        struct bd_err err;
        if (json_load_file(jpath, &in, NULL, &err) < 0)
                die(err.msg);
        uint32_t h = (uint32_t)json_int(in, "h", 0), w = (uint32_t)json_int(in, "w", 0);
        size_t nm = (size_t)json_int(in, "n_masks", 0), a = (size_t)h * w, ns;
        char *data = NULL;
        size_t size = 0;
        if (fs_read_file(mpath, (size_t)1 << 32, &data, &size, &err) < 0)
                die(err.msg);
        _cleanup_free_ char *mask_data = data;
        if (size != nm * a || nm == 0)
                die("masks.bin does not hold n_masks masks of h x w");
        const uint8_t *cols = (const uint8_t *)mask_data;
        _cleanup_free_ uint8_t *rows = xmalloc(nm * a);
        for (size_t i = 0; i < nm; i++)
                for (uint32_t x = 0; x < w; x++)
                        for (uint32_t y = 0; y < h; y++)
                                rows[i * a + (size_t)y * w + x] = cols[i * a + (size_t)x * h + y];
        _cleanup_free_ char **enc_want = strings(json_get(in, "encode"), &ns);
        if (ns != nm)
                die("inputs.json: one string per mask expected");

        const cJSON *jiou = json_get(in, "iou"), *e;
        size_t nimg = (size_t)cJSON_GetArraySize(jiou), k = 0;
        struct iou_image *img = xcalloc(nimg, sizeof(*img));
        cJSON_ArrayForEach(e, jiou) {
                struct iou_image *im = &img[k++];
                im->dt = strings(json_get(e, "dt"), &im->m);
                im->gt = strings(json_get(e, "gt"), &im->n);
                im->dtr = xcalloc(im->m, sizeof(struct rle));
                im->gtr = xcalloc(im->n, sizeof(struct rle));
                im->iscrowd = xcalloc(im->n, 1);
                im->want = xcalloc(im->m * im->n, sizeof(double));
                size_t j = 0;
                const cJSON *v;
                cJSON_ArrayForEach(v, json_get(e, "iscrowd"))
                        im->iscrowd[j++] = (uint8_t)v->valuedouble;
                j = 0;
                cJSON_ArrayForEach(v, json_get(e, "iou"))
                        if (j < im->m * im->n)
                                im->want[j++] = v->valuedouble;
                if (j != im->m * im->n)
                        die("inputs.json: an iou matrix of the wrong size");
        }
        const cJSON *jpoly = json_get(in, "poly");
        size_t nobj = (size_t)cJSON_GetArraySize(jpoly);
        struct object *obj = xcalloc(nobj, sizeof(*obj));
        k = 0;
        cJSON_ArrayForEach(e, jpoly) {
                struct object *o = &obj[k++];
                const cJSON *polys = json_get(e, "polys"), *p, *v;
                uint32_t np = (uint32_t)cJSON_GetArraySize(polys), total = 0, j = 0;
                cJSON_ArrayForEach(p, polys)
                        total += (uint32_t)cJSON_GetArraySize(p);
                o->len = xmalloc(np * sizeof(uint32_t));
                o->xy = xmalloc(total * sizeof(double));
                size_t at = 0;
                cJSON_ArrayForEach(p, polys) {
                        o->len[j++] = (uint32_t)cJSON_GetArraySize(p);
                        cJSON_ArrayForEach(v, p)
                                o->xy[at++] = v->valuedouble;
                }
                o->p = (struct coco_polygons){ np, o->len, o->xy };
                o->want = json_str(e, "string", "");
        }

        long mismatches = 0;
        double *t = xmalloc((size_t)rounds * sizeof(double));
        struct rle *enc = xcalloc(nm, sizeof(*enc));

        /* encode, column-major */
        for (int r = 0; r < rounds; r++) {
                double t0 = clock_monotonic();
                for (size_t i = 0; i < nm; i++)
                        rle_encode(&enc[i], cols + i * a, h, w);
                t[r] = clock_monotonic() - t0;
                for (size_t i = 0; i < nm; i++) {
                        if (r == 0) {
                                _cleanup_free_ char *s = rle_to_string(&enc[i]);
                                mismatches += strcmp(s, enc_want[i]) != 0;
                        }
                        rle_free(&enc[i]);
                }
        }
        printf("ours encode %.6f\n", median(t, rounds));
        for (int r = 0; r < rounds; r++) {
                double t0 = clock_monotonic();
                for (size_t i = 0; i < nm; i++)
                        rle_encode_rows(&enc[i], rows + i * a, h, w, w);
                t[r] = clock_monotonic() - t0;
                for (size_t i = 0; i < nm; i++) {
                        if (r == 0) {
                                _cleanup_free_ char *s = rle_to_string(&enc[i]);
                                mismatches += strcmp(s, enc_want[i]) != 0;
                        }
                        rle_free(&enc[i]);
                }
        }
        printf("ours encode-rows %.6f\n", median(t, rounds));

        /* iou: parse the strings, then the matrix (what pycocotools' iou() does) */
        size_t maxmn = 0;
        for (size_t i = 0; i < nimg; i++)
                maxmn = img[i].m * img[i].n > maxmn ? img[i].m * img[i].n : maxmn;
        double *o = xmalloc((maxmn ? maxmn : 1) * sizeof(double));
        for (int r = 0; r < rounds; r++) {
                double t0 = clock_monotonic();
                for (size_t i = 0; i < nimg; i++) {
                        struct iou_image *im = &img[i];
                        for (size_t d = 0; d < im->m; d++)
                                if (rle_from_string(&im->dtr[d], im->dt[d], h, w) < 0)
                                        die("a detection's string does not parse");
                        for (size_t g = 0; g < im->n; g++)
                                if (rle_from_string(&im->gtr[g], im->gt[g], h, w) < 0)
                                        die("a ground truth's string does not parse");
                        rle_iou(im->dtr, im->m, im->gtr, im->n, im->iscrowd, o);
                        if (r == 0)
                                for (size_t j = 0; j < im->m * im->n; j++)
                                        mismatches += o[j] != im->want[j];
                        if (r + 1 < rounds) {
                                for (size_t d = 0; d < im->m; d++)
                                        rle_free(&im->dtr[d]);
                                for (size_t g = 0; g < im->n; g++)
                                        rle_free(&im->gtr[g]);
                        }
                }
                t[r] = clock_monotonic() - t0;
        }
        printf("ours iou %.6f\n", median(t, rounds));
        for (int r = 0; r < rounds; r++) {
                double t0 = clock_monotonic();
                for (size_t i = 0; i < nimg; i++)
                        rle_iou(img[i].dtr, img[i].m, img[i].gtr, img[i].n, img[i].iscrowd, o);
                t[r] = clock_monotonic() - t0;
        }
        printf("ours iou-parsed %.6f\n", median(t, rounds));

        /* polygons: an object's parts rasterised and merged */
        for (int r = 0; r < rounds; r++) {
                double t0 = clock_monotonic();
                for (size_t i = 0; i < nobj; i++) {
                        struct rle q = RLE_INIT;
                        rle_from_polygons(&q, &obj[i].p, h, w);
                        if (r == 0) {
                                _cleanup_free_ char *s = rle_to_string(&q);
                                mismatches += strcmp(s, obj[i].want) != 0;
                        }
                        rle_free(&q);
                }
                t[r] = clock_monotonic() - t0;
        }
        printf("ours poly %.6f\n", median(t, rounds));
        printf("mismatches %ld\n", mismatches);

        for (size_t i = 0; i < nimg; i++) {
                for (size_t d = 0; d < img[i].m; d++)
                        rle_free(&img[i].dtr[d]);
                for (size_t g = 0; g < img[i].n; g++)
                        rle_free(&img[i].gtr[g]);
                free(img[i].dt);
                free(img[i].gt);
                free(img[i].dtr);
                free(img[i].gtr);
                free(img[i].iscrowd);
                free(img[i].want);
        }
        for (size_t i = 0; i < nobj; i++) {
                free(obj[i].len);
                free(obj[i].xy);
        }
        free(img);
        free(obj);
        free(enc);
        free(o);
        free(t);
        return mismatches ? 1 : 0;
}

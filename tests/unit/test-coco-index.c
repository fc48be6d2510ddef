/* test-coco-index.c: the annotation index against the JSON it came from,
 * the cache (reuse, stale checksum, corrupt file, concurrent builders) and
 * malformed input. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coco-index.h"
#include "fs.h"
#include "json.h"
#include "macro.h"
#include "strutil.h"
#include "mask.h"
#include "tap.h"

static char tmpdir[] = "/tmp/test-coco-index.XXXXXX";

/* counts to the compressed string (mask.c, checked against pycocotools by test-mask) */
static char *rle_string(const uint32_t *cnts, size_t m)
{
        struct rle r = { 10, 8, (uint32_t)m, (uint32_t *)cnts };
        return rle_to_string(&r);
}

static const uint32_t crowd_counts[] = { 5, 3, 10, 2, 40, 1, 0, 19 };     /* 80 pixels: 10 x 8 */

static char *sample_json(double first_x)
{
        _cleanup_free_ char *rle = rle_string(crowd_counts, ARRAY_SIZE(crowd_counts));
        return xasprintf(
                "{\n"
                "  \"info\": {\"description\": \"test\", \"nested\": [1, {\"a\": \"]}\\\"\"}]},\n"
                "  \"licenses\": [],\n"
                "  \"annotations\": [\n"
                "    {\"id\": 11, \"image_id\": 30, \"category_id\": 7, \"bbox\": [%g, 2.5, 10, 20], \"area\": 150.25,\n"
                "     \"iscrowd\": 0, \"segmentation\": [[1, 2, 11, 2, 11, 22], [3, 4, 5, 6, 7, 8, 9, 10]]},\n"
                "    {\"id\": 12, \"image_id\": 10, \"category_id\": 3, \"bbox\": [0, 0, 5, 5], \"iscrowd\": 1,\n"
                "     \"segmentation\": {\"counts\": [2, 3, 35], \"size\": [4, 10]}, \"area\": 3},\n"
                "    {\"id\": 13, \"image_id\": 30, \"category_id\": 3, \"bbox\": [4, 4, 2, 3], \"area\": 5},\n"
                "    {\"id\": 14, \"image_id\": 999, \"category_id\": 3, \"bbox\": [4, 4, 2, 3], \"area\": 5},\n"
                "    {\"id\": 15, \"image_id\": 20, \"category_id\": 42, \"bbox\": [1, 1, 1, 1], \"area\": 1},\n"
                "    {\"id\": 16, \"image_id\": 30, \"category_id\": 7, \"bbox\": [1, 1, 3, 3], \"iscrowd\": true,\n"
                "     \"segmentation\": {\"counts\": \"%s\", \"size\": [10, 8]}, \"area\": 12}\n"
                "  ],\n"
                "  \"images\": [\n"
                "    {\"id\": 30, \"file_name\": \"c.jpg\", \"width\": 640, \"height\": 480},\n"
                "    {\"id\": 10, \"file_name\": \"a \\u00e9.jpg\", \"width\": 10, \"height\": 4, \"license\": 1},\n"
                "    {\"id\": 20, \"file_name\": \"b.jpg\", \"width\": 300, \"height\": 200}\n"
                "  ],\n"
                "  \"categories\": [{\"id\": 7, \"name\": \"seven\", \"supercategory\": \"odd\"},\n"
                "                 {\"id\": 3, \"name\": \"three\"}]\n"
                "}\n",
                first_x, rle);
}

static char *write_tmp(const char *name, const char *text)
{
        char *p = xasprintf("%s/%s", tmpdir, name);
        struct bd_err err;
        if (fs_write_atomic(p, text, strlen(text), 0644, &err) < 0) {
                printf("# %s\n", err.msg);
                abort();
        }
        return p;
}

static int count_index_files(const char *dir)
{
        DIR *d = opendir(dir);
        int n = 0;
        struct dirent *e;
        while (d && (e = readdir(d)))
                n += str_has_suffix(e->d_name, ".bdidx");
        if (d)
                closedir(d);
        return n;
}

/* Every field of the index against cJSON's reading of the same text. */
static void check_round_trip(const struct coco_index *x, const char *text)
{
        _cleanup_json_ cJSON *root = cJSON_Parse(text);
        const cJSON *images = cJSON_GetObjectItem(root, "images");
        const cJSON *anns = cJSON_GetObjectItem(root, "annotations");
        const cJSON *cats = cJSON_GetObjectItem(root, "categories");
        is_int(x->n_images, cJSON_GetArraySize(images), "round trip: image count");
        is_int(x->n_cats, cJSON_GetArraySize(cats), "round trip: category count");
        is_int(x->n_anns, cJSON_GetArraySize(anns) - 1, "round trip: annotations, the orphan dropped");
        is_int(x->header->orphan_anns, 1, "round trip: one orphan counted");
        is_int(x->header->unknown_category_anns, 1, "round trip: one unknown category counted");
        int bad = 0, nann = 0;
        for (int i = 0; i < cJSON_GetArraySize(images); i++) {
                const cJSON *im = cJSON_GetArrayItem(images, i);
                const struct coco_image *ix = &x->images[i];
                bad += ix->id != (int64_t)cJSON_GetObjectItem(im, "id")->valuedouble;
                bad += ix->width != (uint32_t)cJSON_GetObjectItem(im, "width")->valuedouble;
                bad += ix->height != (uint32_t)cJSON_GetObjectItem(im, "height")->valuedouble;
                bad += !streq(coco_index_str(x, ix->file_name), cJSON_GetObjectItem(im, "file_name")->valuestring);
                /* its annotations, in JSON order */
                uint32_t k = 0;
                const cJSON *a;
                cJSON_ArrayForEach(a, anns) {
                        if (cJSON_GetObjectItem(a, "image_id")->valuedouble != (double)ix->id)
                                continue;
                        if (k >= ix->ann_count) {
                                bad++;
                                break;
                        }
                        const struct coco_ann *ax = &x->anns[ix->ann_first + k++];
                        nann++;
                        bad += ax->id != (int64_t)cJSON_GetObjectItem(a, "id")->valuedouble;
                        bad += ax->image != (uint32_t)i;
                        bad += ax->category_id != (int32_t)cJSON_GetObjectItem(a, "category_id")->valuedouble;
                        for (int j = 0; j < 4; j++)
                                bad += ax->bbox[j] != cJSON_GetArrayItem(cJSON_GetObjectItem(a, "bbox"), j)->valuedouble;
                        const cJSON *area = cJSON_GetObjectItem(a, "area");
                        bad += ax->area != (area ? area->valuedouble : ax->bbox[2] * ax->bbox[3]);
                        const cJSON *crowd = cJSON_GetObjectItem(a, "iscrowd");
                        bad += ax->iscrowd != (crowd ? (cJSON_IsTrue(crowd) || crowd->valuedouble == 1) : 0);
                        int label = coco_index_find_category(x, ax->category_id);
                        bad += ax->label != label;
                        const cJSON *seg = cJSON_GetObjectItem(a, "segmentation");
                        if (cJSON_IsArray(seg)) {
                                struct coco_polygons p;
                                if (coco_ann_polygons(x, ax, &p) < 0 || p.n != (uint32_t)cJSON_GetArraySize(seg)) {
                                        bad++;
                                        continue;
                                }
                                size_t off = 0;
                                for (uint32_t q = 0; q < p.n; q++) {
                                        const cJSON *poly = cJSON_GetArrayItem(seg, (int)q);
                                        bad += p.len[q] != (uint32_t)cJSON_GetArraySize(poly);
                                        for (uint32_t v = 0; v < p.len[q]; v++)
                                                bad += p.xy[off + v] != cJSON_GetArrayItem(poly, (int)v)->valuedouble;
                                        off += p.len[q];
                                }
                        } else if (cJSON_IsObject(seg)) {
                                struct coco_rle r;
                                const cJSON *size = cJSON_GetObjectItem(seg, "size");
                                const cJSON *counts = cJSON_GetObjectItem(seg, "counts");
                                if (coco_ann_rle(x, ax, &r) < 0) {
                                        bad++;
                                        continue;
                                }
                                bad += r.height != (uint32_t)cJSON_GetArrayItem(size, 0)->valuedouble;
                                bad += r.width != (uint32_t)cJSON_GetArrayItem(size, 1)->valuedouble;
                                if (cJSON_IsString(counts)) {
                                        bad += r.n != ARRAY_SIZE(crowd_counts) ||
                                               memcmp(r.counts, crowd_counts, sizeof(crowd_counts)) != 0;
                                } else {
                                        bad += r.n != (uint32_t)cJSON_GetArraySize(counts);
                                        for (uint32_t v = 0; v < r.n && v < (uint32_t)cJSON_GetArraySize(counts); v++)
                                                bad += r.counts[v] != (uint32_t)cJSON_GetArrayItem(counts, (int)v)->valuedouble;
                                }
                        } else {
                                bad += ax->seg_kind != COCO_SEG_NONE;
                        }
                }
                bad += k != ix->ann_count;
        }
        is_int(bad, 0, "round trip: images, annotations (order, boxes, areas, crowd, labels, polygons, RLE) match");
        is_int(nann, 5, "round trip: every annotation of a known image seen");
        bad = 0;
        for (int i = 0; i < cJSON_GetArraySize(cats); i++) {
                const cJSON *c = cJSON_GetArrayItem(cats, i);
                const cJSON *sc = cJSON_GetObjectItem(c, "supercategory");
                bad += x->cats[i].id != (int32_t)cJSON_GetObjectItem(c, "id")->valuedouble;
                bad += !streq(coco_index_str(x, x->cats[i].name), cJSON_GetObjectItem(c, "name")->valuestring);
                bad += !streq(coco_index_str(x, x->cats[i].supercategory), sc ? sc->valuestring : "");
        }
        is_int(bad, 0, "round trip: categories in JSON order with names");
        int sorted = 1;
        for (size_t i = 1; i < x->n_images; i++)
                sorted &= x->images[x->by_id[i - 1]].id < x->images[x->by_id[i]].id;
        ok(sorted, "images by id are in increasing id order");
        is_int(coco_index_find_image(x, 20), 2, "find_image(20)");
        is_int(coco_index_find_image(x, 21), -1, "find_image of an unknown id");
        is_int(coco_index_find_category(x, 3), 1, "find_category(3)");
        is_str(coco_index_str(x, x->images[1].file_name), "a \xc3\xa9.jpg", "escaped file names are decoded");
}

static void test_cache(void)
{
        _cleanup_free_ char *text = sample_json(1.5);
        _cleanup_free_ char *json = write_tmp("instances_test.json", text);
        _cleanup_free_ char *cache = xasprintf("%s/cache", tmpdir);
        struct bd_err err;
        struct coco_index *x = NULL;
        int r = coco_index_open(json, cache, 0, &x, &err);
        is_int(r, 0, "open builds the index");
        if (r < 0) {
                printf("# %s\n", err.msg);
                return;
        }
        ok(x->info.built, "  and says it built it");
        like(x->info.path, "/cache/instances_test.", "  named after the JSON");
        like(x->info.path, ".bdidx", "  with the index extension");
        check_round_trip(x, text);
        _cleanup_free_ char *first_path = xstrdup(x->info.path);
        x = coco_index_free(x);

        r = coco_index_open(json, cache, 0, &x, &err);
        ok(r == 0 && !x->info.built, "a second open reuses the index");
        ok(r == 0 && streq(x->info.path, first_path), "  the same file");
        x = coco_index_free(x);

        /* the JSON changes: another checksum, a new index, the old one removed */
        _cleanup_free_ char *text2 = sample_json(7.25);
        _cleanup_free_ char *json2 = write_tmp("instances_test.json", text2);
        r = coco_index_open(json2, cache, 0, &x, &err);
        ok(r == 0 && x->info.built, "a changed JSON is indexed again");
        ok(r == 0 && !streq(x->info.path, first_path), "  under another name");
        ok(r == 0 && x->anns[x->images[0].ann_first].bbox[0] == 7.25, "  with the new values");
        ok(access(first_path, F_OK) < 0, "  and the stale index is removed");
        is_int(count_index_files(cache), 1, "  one index left in the cache");
        _cleanup_free_ char *second_path = xstrdup(r == 0 ? x->info.path : "");
        x = coco_index_free(x);

        /* a damaged index is detected, reported by load, rebuilt by open */
        struct stat st;
        stat(second_path, &st);
        if (truncate(second_path, st.st_size - 8) < 0)
                printf("# truncate: %s\n", strerror(errno));
        r = coco_index_load(second_path, &x, &err);
        is_int(r, -EBADMSG, "a truncated index does not load");
        like(err.msg, "corrupt index", "  with a message saying so");
        r = coco_index_open(json2, cache, 0, &x, &err);
        ok(r == 0 && x->info.built, "open rebuilds a truncated index");
        x = coco_index_free(x);
        FILE *f = fopen(second_path, "r+");
        fputs("XXXX", f);
        fclose(f);
        r = coco_index_open(json2, cache, 0, &x, &err);
        ok(r == 0 && x->info.built, "open rebuilds an index with a bad magic");
        x = coco_index_free(x);

        /* no cache: nothing written */
        _cleanup_free_ char *cache2 = xasprintf("%s/cache2", tmpdir);
        mkdir(cache2, 0755);
        r = coco_index_open(json2, cache2, COCO_INDEX_NO_CACHE, &x, &err);
        ok(r == 0 && x->info.built && x->n_images == 3, "COCO_INDEX_NO_CACHE builds in memory");
        is_int(count_index_files(cache2), 0, "  and leaves no file");
        x = coco_index_free(x);

        /* concurrent opens: all succeed, one build */
        _cleanup_free_ char *cache3 = xasprintf("%s/cache3", tmpdir);
        pid_t pids[4];
        for (int i = 0; i < 4; i++) {
                pids[i] = fork();
                if (pids[i] == 0) {
                        struct coco_index *y = NULL;
                        int rr = coco_index_open(json2, cache3, 0, &y, &err);
                        int good = rr == 0 && y->n_images == 3 && y->n_anns == 5;
                        _exit(good ? (y->info.built ? 10 : 11) : 1);
                }
        }
        int built = 0, reused = 0, failed = 0;
        for (int i = 0; i < 4; i++) {
                int status;
                waitpid(pids[i], &status, 0);
                int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
                built += code == 10;
                reused += code == 11;
                failed += code == 1;
        }
        is_int(failed, 0, "4 processes opening at once all succeed");
        is_int(built, 1, "  one of them builds");
        is_int(reused, 3, "  the others wait for it and reuse the index");
        is_int(count_index_files(cache3), 1, "  one index file");
}

static void expect_error(const char *name, const char *text, const char *want)
{
        _cleanup_free_ char *p = write_tmp(name, text);
        struct bd_err err = { "" };
        struct coco_index *x = NULL;
        int r = coco_index_open(p, tmpdir, COCO_INDEX_NO_CACHE, &x, &err);
        _cleanup_free_ char *what = xasprintf("%s: an error", name);
        ok(r < 0, what);
        free(what);
        what = xasprintf("%s: the message says '%s'", name, want);
        like(err.msg, want, what);
        coco_index_free(x);
}

static void test_errors(void)
{
        expect_error("comma.json", "{\"images\": [\n{\"id\": 1, \"file_name\": \"a\", \"width\": 1, \"height\": 1}\n"
                     "{\"id\": 2}],\n\"categories\": []}", "comma.json:3:1: malformed JSON");
        expect_error("inner.json", "{\"images\": [\n{\"id\": 1,\n \"file_name\": \"a\" \"width\": 1}],\n\"categories\": []}",
                     "inner.json:3:");
        expect_error("width.json", "{\"categories\": [],\n\"images\": [\n{\"id\": 1, \"file_name\": \"a\", \"width\": \"x\", \"height\": 1}]}",
                     "width.json:3: image: field 'width'");
        expect_error("noid.json", "{\"categories\": [], \"images\": [],\n\"annotations\": [{\"image_id\": 1, \"category_id\": 1, \"bbox\": [0,0,1,1]}]}",
                     "noid.json:2: annotation: field 'id': missing");
        expect_error("bbox.json", "{\"categories\": [], \"images\": [],\n\"annotations\": [\n{\"id\": 1, \"image_id\": 1, \"category_id\": 1, \"bbox\": [0,0,1]}]}",
                     "bbox.json:3: annotation: field 'bbox'");
        expect_error("dupimg.json", "{\"categories\": [], \"images\": [{\"id\": 4, \"file_name\": \"a\", \"width\": 1, \"height\": 1},"
                     "{\"id\": 4, \"file_name\": \"b\", \"width\": 1, \"height\": 1}]}", "duplicate image id 4");
        expect_error("dupann.json", "{\"categories\": [], \"images\": [], \"annotations\": ["
                     "{\"id\": 9, \"image_id\": 1, \"category_id\": 1, \"bbox\": [0,0,1,1]},"
                     "{\"id\": 9, \"image_id\": 1, \"category_id\": 1, \"bbox\": [0,0,1,1]}]}", "duplicate annotation id 9");
        expect_error("rle.json", "{\"categories\": [], \"images\": [], \"annotations\": [\n"
                     "{\"id\": 9, \"image_id\": 1, \"category_id\": 1, \"bbox\": [0,0,1,1], \"segmentation\": {\"counts\": [1, 2], \"size\": [2, 2]}}]}",
                     "rle.json:2: annotation: field 'segmentation': RLE counts cover 3 pixels, size is 2x2");
        /* polygons that would cost gigabytes to rasterise (every edge is
         * walked at a fifth of a pixel): a vertex at 1e8, or edges of 10^7
         * pixels around a 640x480 image; the second file is fine */
        expect_error("far.json", "{\"categories\": [], \"annotations\": [\n"
                     "{\"id\": 9, \"image_id\": 1, \"category_id\": 1, \"bbox\": [0,0,1,1], \"segmentation\": "
                     "[[0, 0, 10, 0, 10, 1e8]]}],\n\"images\": [{\"id\": 1, \"file_name\": \"a\", \"width\": 640, \"height\": 480}]}",
                     "far.json:2: annotation: field 'segmentation': a coordinate beyond 10^7 pixels");
        expect_error("long.json", "{\"categories\": [], \"annotations\": [\n"
                     "{\"id\": 9, \"image_id\": 1, \"category_id\": 1, \"bbox\": [0,0,1,1], \"segmentation\": "
                     "[[0, 0, 5e6, 0, 0, 1]]}],\n\"images\": [{\"id\": 1, \"file_name\": \"a\", \"width\": 640, \"height\": 480}]}",
                     "long.json:2: annotation 9: field 'segmentation': polygons 10000001 pixels around, more than 256 "
                     "times the width and height of its 640x480 image");
        {
                _cleanup_free_ char *p = write_tmp("near.json", "{\"categories\": [], \"annotations\": [\n"
                        "{\"id\": 9, \"image_id\": 1, \"category_id\": 1, \"bbox\": [0,0,1,1], \"segmentation\": "
                        "[[-640, -480, 1280, 0, 10, 960]]}],\n\"images\": [{\"id\": 1, \"file_name\": \"a\", \"width\": 640, "
                        "\"height\": 480}]}");
                struct bd_err err = { "" };
                struct coco_index *x = NULL;
                ok(coco_index_open(p, tmpdir, COCO_INDEX_NO_CACHE, &x, &err) == 0,
                   "near.json: vertices beyond the image's edges are fine");
                coco_index_free(x);
        }
        /* member names are checked as JSON has them (the fuzzer found a
         * NUL after a backslash accepted) */
        expect_error("ctl.json", "{\"ima\001ges\": [], \"categories\": []}", "control character in a string");
        expect_error("esc.json", "{\"ima\\qges\": [], \"categories\": []}", "bad escape in a string");
        expect_error("trunc.json", "{\"images\": [{\"id\": 1, \"file_name\": \"a\"", "unexpected end of file");
        expect_error("array.json", "[1, 2]", "array.json:1:1: malformed JSON near '[1, 2]' (expected an object)");
        expect_error("empty.json", "", "is empty");
        expect_error("noimages.json", "{\"categories\": []}", "no 'images' list");
        expect_error("trailing.json", "{\"images\": [], \"categories\": []}\n}", "trailing.json:2:1: malformed JSON near '}'");
        expect_error("badinfo.json", "{\"info\": {\"a\": tru},\n\"images\": [], \"categories\": []}", "badinfo.json:1:");

        struct bd_err err;
        struct coco_index *x = NULL;
        _cleanup_free_ char *missing = xasprintf("%s/nonexistent.json", tmpdir);
        ok(coco_index_open(missing, tmpdir, 0, &x, &err) == -ENOENT, "a missing file: -ENOENT");
        like(err.msg, "cannot open", "  cannot open");
}

static void test_rle_string(void)
{
        uint32_t c[] = { 0, 7, 1000000, 3, 3, 65, 2 };
        _cleanup_free_ char *s = rle_string(c, ARRAY_SIZE(c));
        _cleanup_free_ uint32_t *back = NULL;
        long n = coco_rle_from_string(s, &back);
        ok(n == (long)ARRAY_SIZE(c) && memcmp(back, c, sizeof(c)) == 0, "compressed RLE strings decode as pycocotools encodes");
        _cleanup_free_ uint32_t *bad = NULL;
        ok(coco_rle_from_string("\x7f", &bad) < 0, "a character outside the RLE alphabet is refused");
}

int main(void)
{
        if (!mkdtemp(tmpdir))
                return 1;
        test_rle_string();
        test_cache();
        test_errors();
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
                printf("# cannot remove %s\n", tmpdir);
        return done_testing();
}

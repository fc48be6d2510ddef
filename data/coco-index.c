/* coco-index.c: building, caching and mapping the COCO annotation index. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "buf.h"
#include "coco-index.h"
#include "fs.h"
#include "json-stream.h"
#include "macro.h"
#include "strutil.h"

_Static_assert(sizeof(struct coco_image) == 32, "coco_image layout");
_Static_assert(sizeof(struct coco_ann) == 80, "coco_ann layout");
_Static_assert(sizeof(struct coco_category) == 16, "coco_category layout");
_Static_assert(sizeof(struct coco_index_header) == 192, "coco_index_header layout");

#define ENDIAN_MARK 0x01020304u
#define MAX_ID 9007199254740992.0       /* 2^53: ids beyond this do not survive a double */
#define RELEASE_CHUNK (16u << 20)       /* drop parsed JSON pages from RSS this often */

int coco_file_hash(const char *path, uint64_t *ret_hash, uint64_t *ret_size, struct bd_err *err)
{
        /* read, not mapped: 448 MB of page cache need not count in this process's memory */
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return bd_err_set(err, -errno, "cannot open '%s': %s", path, strerror(errno));
        (void) posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        XXH3_state_t *st = XXH3_createState();
        XXH3_64bits_reset(st);
        const size_t chunk = 4u << 20;
        _cleanup_free_ char *buf = xmalloc(chunk);
        uint64_t size = 0;
        int r = 0;
        for (;;) {
                ssize_t n = read(fd, buf, chunk);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = bd_err_set(err, -errno, "cannot read '%s': %s", path, strerror(errno));
                        break;
                }
                if (n == 0)
                        break;
                XXH3_64bits_update(st, buf, (size_t)n);
                size += (uint64_t)n;
        }
        if (r == 0) {
                *ret_hash = XXH3_64bits_digest(st);
                if (ret_size)
                        *ret_size = size;
        }
        XXH3_freeState(st);
        return r;
}

/* XXH3 of a mapping, dropping the pages from this process's memory as it goes */
static uint64_t hash_mapped(const struct json_map *m)
{
        XXH3_state_t *st = XXH3_createState();
        XXH3_64bits_reset(st);
        for (size_t off = 0; off < m->size; off += RELEASE_CHUNK) {
                size_t n = m->size - off < RELEASE_CHUNK ? m->size - off : RELEASE_CHUNK;
                XXH3_64bits_update(st, (const char *)m->p + off, n);
                (void) madvise((char *)m->p + off, n, MADV_DONTNEED);
        }
        uint64_t h = XXH3_64bits_digest(st);
        XXH3_freeState(st);
        return h;
}

/* ---- RLE strings ----------------------------------------------------------- */

long coco_rle_from_string(const char *s, uint32_t **ret)
{
        size_t len = strlen(s);
        _cleanup_free_ uint32_t *cnts = xmalloc((len + 1) * sizeof(*cnts));
        size_t m = 0, p = 0;
        while (s[p]) {
                long long x = 0;
                int k = 0, more = 1;
                while (more) {
                        if (!s[p] || k >= 7)
                                return -EINVAL;
                        int c = s[p] - 48;
                        if (c < 0 || c > 63)
                                return -EINVAL;
                        x |= (long long)(c & 0x1f) << (5 * k);
                        more = c & 0x20;
                        p++;
                        k++;
                        if (!more && (c & 0x10))
                                x |= (long long)(~0ULL << (5 * k));
                }
                if (m > 2)
                        x += cnts[m - 2];
                if (x < 0 || x > UINT32_MAX)
                        return -EINVAL;
                cnts[m++] = (uint32_t)x;
        }
        *ret = TAKE_PTR(cnts);
        return (long)m;
}

/* ---- building -------------------------------------------------------------- */

#define MAX_COORD 1e7      /* x 5 stays an int */
#define MAX_WALK 256

struct raw_ann {
        struct coco_ann a;
        int64_t image_id;
        long line;
        double walk;            /* the polygons' edges, each as its longer axis */
};

struct builder {
        const char *label;
        FILE *out;
        uint64_t seg_words;
        struct coco_image *images;
        size_t n_images, cap_images;
        struct raw_ann *anns;
        size_t n_anns, cap_anns;
        struct coco_category *cats;
        size_t n_cats, cap_cats;
        struct bd_buf strings;
        struct bd_err *err;
        int write_errno;
};

#define GROW(arr, n, cap)                                                        \
        do {                                                                     \
                if ((n) == (cap)) {                                              \
                        (cap) = (cap) ? 2 * (cap) : 1024;                        \
                        (arr) = xrealloc((arr), (cap) * sizeof(*(arr)));          \
                }                                                                \
        } while (0)

static uint32_t add_string(struct builder *b, const char *s)
{
        if (!*s)
                return 0;       /* offset 0 holds "" */
        uint32_t off = (uint32_t)b->strings.len;
        buf_add(&b->strings, s, strlen(s) + 1);
        return off;
}

static void put_words(struct builder *b, const void *w, size_t n)
{
        if (n && fwrite(w, 4, n, b->out) != n && !b->write_errno)
                b->write_errno = errno ? errno : EIO;
        b->seg_words += n;
}

static int field_error(struct builder *b, long line, const char *what, const char *field, const char *expect)
{
        return bd_err_set(b->err, -EINVAL, "%s:%ld: %s: field '%s': %s", b->label, line, what, field, expect);
}

/* An integral number in [lo, hi]. */
static int get_int(struct builder *b, const cJSON *o, const char *field, long line, const char *what, double lo,
                   double hi, bool required, int64_t *ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
        if (!v) {
                if (!required)
                        return 0;
                return field_error(b, line, what, field, "missing");
        }
        if (cJSON_IsBool(v)) {
                *ret = cJSON_IsTrue(v);
        } else {
                double d = v->valuedouble;
                if (!cJSON_IsNumber(v) || d != floor(d) || d < lo || d > hi)
                        return field_error(b, line, what, field,
                                           lo >= 1 ? "expected a positive integer" : "expected an integer");
                *ret = (int64_t)d;
        }
        return 1;
}

static int get_number(struct builder *b, const cJSON *v, const char *field, long line, const char *what,
                      double *ret)
{
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
                return field_error(b, line, what, field, "expected a number");
        *ret = v->valuedouble;
        return 0;
}

static int add_image(struct builder *b, const cJSON *o, long line)
{
        if (!cJSON_IsObject(o))
                return bd_err_set(b->err, -EINVAL, "%s:%ld: images: expected objects", b->label, line);
        int64_t id, w, h;
        int r;
        if ((r = get_int(b, o, "id", line, "image", -MAX_ID, MAX_ID, true, &id)) < 0 ||
            (r = get_int(b, o, "width", line, "image", 1, 1 << 20, true, &w)) < 0 ||
            (r = get_int(b, o, "height", line, "image", 1, 1 << 20, true, &h)) < 0)
                return r;
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(o, "file_name");
        if (!cJSON_IsString(fn) || !fn->valuestring[0])
                return field_error(b, line, "image", "file_name", "expected a non-empty string");
        GROW(b->images, b->n_images, b->cap_images);
        b->images[b->n_images++] = (struct coco_image){
                .id = id, .width = (uint32_t)w, .height = (uint32_t)h,
                .file_name = add_string(b, fn->valuestring),
        };
        return 0;
}

static int add_polygons(struct builder *b, const cJSON *seg, long line, struct raw_ann *ra)
{
        uint32_t n = (uint32_t)cJSON_GetArraySize(seg);
        _cleanup_free_ uint32_t *lens = xcalloc(n + 1, sizeof(uint32_t));
        uint32_t i = 0;
        size_t total = 0;
        const cJSON *poly;
        cJSON_ArrayForEach(poly, seg) {
                if (!cJSON_IsArray(poly))
                        return field_error(b, line, "annotation", "segmentation", "expected polygons (lists of numbers)");
                int m = cJSON_GetArraySize(poly);
                if (m % 2)
                        return field_error(b, line, "annotation", "segmentation", "polygon with an odd number of coordinates");
                lens[i++] = (uint32_t)m;
                total += (size_t)m;
        }
        put_words(b, &n, 1);
        put_words(b, lens, n);
        if (b->seg_words % 2) {         /* the coordinates start on an 8-byte boundary */
                uint32_t pad = 0;
                put_words(b, &pad, 1);
        }
        _cleanup_free_ double *xy = xmalloc((total + 1) * sizeof(double));
        size_t k = 0;
        cJSON_ArrayForEach(poly, seg) {
                const cJSON *v;
                cJSON_ArrayForEach(v, poly) {
                        double d = 0;
                        if (get_number(b, v, "segmentation", line, "annotation", &d) < 0)
                                return -EINVAL;
                        if (!(fabs(d) <= MAX_COORD))
                                return field_error(b, line, "annotation", "segmentation",
                                                   "a coordinate beyond 10^7 pixels");
                        xy[k++] = d;
                }
        }
        /* what rasterising walks: each edge along its longer axis */
        size_t off = 0;
        for (uint32_t q = 0; q < n; off += lens[q++])
                for (uint32_t j = 0; j + 1 < lens[q]; j += 2) {
                        uint32_t nx = j + 2 < lens[q] ? j + 2 : 0;
                        double dx = fabs(xy[off + nx] - xy[off + j]), dy = fabs(xy[off + nx + 1] - xy[off + j + 1]);
                        ra->walk += dx > dy ? dx : dy;
                }
        put_words(b, xy, 2 * total);
        return 0;
}

static int add_rle(struct builder *b, const cJSON *seg, long line)
{
        const cJSON *size = cJSON_GetObjectItemCaseSensitive(seg, "size");
        const cJSON *counts = cJSON_GetObjectItemCaseSensitive(seg, "counts");
        if (!cJSON_IsArray(size) || cJSON_GetArraySize(size) != 2 ||
            !cJSON_IsNumber(cJSON_GetArrayItem(size, 0)) || !cJSON_IsNumber(cJSON_GetArrayItem(size, 1)))
                return field_error(b, line, "annotation", "segmentation.size", "expected [height, width]");
        double hd = cJSON_GetArrayItem(size, 0)->valuedouble, wd = cJSON_GetArrayItem(size, 1)->valuedouble;
        if (hd < 0 || wd < 0 || hd != floor(hd) || wd != floor(wd) || hd > (1 << 20) || wd > (1 << 20))
                return field_error(b, line, "annotation", "segmentation.size", "expected [height, width]");
        uint32_t hw[2] = { (uint32_t)hd, (uint32_t)wd };
        _cleanup_free_ uint32_t *cnts = NULL;
        long n;
        if (cJSON_IsString(counts)) {
                n = coco_rle_from_string(counts->valuestring, &cnts);
                if (n < 0)
                        return field_error(b, line, "annotation", "segmentation.counts", "malformed compressed RLE");
        } else if (cJSON_IsArray(counts)) {
                n = cJSON_GetArraySize(counts);
                cnts = xmalloc(((size_t)n + 1) * sizeof(*cnts));
                long i = 0;
                const cJSON *v;
                cJSON_ArrayForEach(v, counts) {
                        if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > UINT32_MAX ||
                            v->valuedouble != floor(v->valuedouble))
                                return field_error(b, line, "annotation", "segmentation.counts",
                                                   "expected non-negative integers");
                        cnts[i++] = (uint32_t)v->valuedouble;
                }
        } else
                return field_error(b, line, "annotation", "segmentation.counts", "expected a list or a string");
        uint64_t sum = 0;
        for (long i = 0; i < n; i++)
                sum += cnts[i];
        if (sum != (uint64_t)hw[0] * hw[1])
                return bd_err_set(b->err, -EINVAL, "%s:%ld: annotation: field 'segmentation': RLE counts cover %llu pixels, size is %ux%u",
                                  b->label, line, (unsigned long long)sum, hw[0], hw[1]);
        uint32_t un = (uint32_t)n;
        put_words(b, hw, 2);
        put_words(b, &un, 1);
        put_words(b, cnts, (size_t)n);
        return 0;
}

static int add_ann(struct builder *b, const cJSON *o, long line)
{
        if (!cJSON_IsObject(o))
                return bd_err_set(b->err, -EINVAL, "%s:%ld: annotations: expected objects", b->label, line);
        int64_t id, image_id, cat, crowd = 0;
        int r;
        if ((r = get_int(b, o, "id", line, "annotation", -MAX_ID, MAX_ID, true, &id)) < 0 ||
            (r = get_int(b, o, "image_id", line, "annotation", -MAX_ID, MAX_ID, true, &image_id)) < 0 ||
            (r = get_int(b, o, "category_id", line, "annotation", INT32_MIN, INT32_MAX, true, &cat)) < 0 ||
            (r = get_int(b, o, "iscrowd", line, "annotation", 0, 1, false, &crowd)) < 0)
                return r;
        const cJSON *bbox = cJSON_GetObjectItemCaseSensitive(o, "bbox");
        if (!cJSON_IsArray(bbox) || cJSON_GetArraySize(bbox) != 4)
                return field_error(b, line, "annotation", "bbox", "expected [x, y, width, height]");
        struct raw_ann ra = { .image_id = image_id, .line = line };
        struct coco_ann *a = &ra.a;
        a->id = id;
        a->category_id = (int32_t)cat;
        a->iscrowd = (uint8_t)crowd;
        for (int i = 0; i < 4; i++)
                if (get_number(b, cJSON_GetArrayItem(bbox, i), "bbox", line, "annotation", &a->bbox[i]) < 0)
                        return -EINVAL;
        const cJSON *area = cJSON_GetObjectItemCaseSensitive(o, "area");
        if (area) {
                if (get_number(b, area, "area", line, "annotation", &a->area) < 0)
                        return -EINVAL;
        } else
                a->area = a->bbox[2] * a->bbox[3];
        const cJSON *seg = cJSON_GetObjectItemCaseSensitive(o, "segmentation");
        a->seg = b->seg_words;
        if (!seg || cJSON_IsNull(seg) || (cJSON_IsArray(seg) && cJSON_GetArraySize(seg) == 0)) {
                a->seg_kind = COCO_SEG_NONE;
        } else if (cJSON_IsArray(seg)) {
                a->seg_kind = COCO_SEG_POLYGONS;
                if ((r = add_polygons(b, seg, line, &ra)) < 0)
                        return r;
        } else if (cJSON_IsObject(seg)) {
                a->seg_kind = COCO_SEG_RLE;
                if ((r = add_rle(b, seg, line)) < 0)
                        return r;
        } else
                return field_error(b, line, "annotation", "segmentation", "expected polygons or RLE");
        GROW(b->anns, b->n_anns, b->cap_anns);
        b->anns[b->n_anns++] = ra;
        return 0;
}

static int add_category(struct builder *b, const cJSON *o, long line)
{
        if (!cJSON_IsObject(o))
                return bd_err_set(b->err, -EINVAL, "%s:%ld: categories: expected objects", b->label, line);
        int64_t id;
        int r = get_int(b, o, "id", line, "category", INT32_MIN, INT32_MAX, true, &id);
        if (r < 0)
                return r;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
        const cJSON *super = cJSON_GetObjectItemCaseSensitive(o, "supercategory");
        if (name && !cJSON_IsString(name))
                return field_error(b, line, "category", "name", "expected a string");
        if (super && !cJSON_IsString(super) && !cJSON_IsNull(super))
                return field_error(b, line, "category", "supercategory", "expected a string");
        GROW(b->cats, b->n_cats, b->cap_cats);
        b->cats[b->n_cats++] = (struct coco_category){
                .id = (int32_t)id,
                .name = name ? add_string(b, name->valuestring) : 0,
                .supercategory = cJSON_IsString(super) ? add_string(b, super->valuestring) : 0,
        };
        return 0;
}

typedef int add_fn(struct builder *b, const cJSON *o, long line);

static int read_array(struct builder *b, struct json_stream *s, const struct json_map *m, add_fn *add)
{
        int r = json_stream_array_begin(s, b->err);
        if (r < 0)
                return r;
        size_t released = 0;
        for (;;) {
                cJSON *item = NULL;
                long line;
                r = json_stream_next_item(s, &item, &line, b->err);
                if (r <= 0)
                        return r;
                r = add(b, item, line);
                cJSON_Delete(item);
                if (r < 0)
                        return r;
                /* parsed pages of the mapping need not stay resident */
                size_t page = (size_t)sysconf(_SC_PAGESIZE);
                size_t done = s->pos / page * page;
                if (done - released >= RELEASE_CHUNK) {
                        (void) madvise((char *)m->p + released, done - released, MADV_DONTNEED);
                        released = done;
                }
        }
}

static int cmp_i64_idx(const void *x, const void *y, void *ctx)
{
        const int64_t *ids = ctx;
        int64_t a = ids[*(const uint32_t *)x], c = ids[*(const uint32_t *)y];
        if (a != c)
                return a < c ? -1 : 1;
        return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* The order of n ids (increasing, ties by position) into *ret; returns the
 * index into ids of a duplicated id, or -1. */
static long sort_ids(const int64_t *ids, size_t n, uint32_t **ret)
{
        uint32_t *ord = xmalloc((n + 1) * sizeof(*ord));
        for (size_t i = 0; i < n; i++)
                ord[i] = (uint32_t)i;
        qsort_r(ord, n, sizeof(*ord), cmp_i64_idx, (void *)ids);
        *ret = ord;
        for (size_t i = 1; i < n; i++)
                if (ids[ord[i]] == ids[ord[i - 1]])
                        return ord[i];
        return -1;
}

/* The image order by id, and no duplicate. */
static int order_images(struct builder *b, uint32_t **ret)
{
        size_t n = b->n_images;
        _cleanup_free_ int64_t *ids = xmalloc((n + 1) * sizeof(*ids));
        for (size_t i = 0; i < n; i++)
                ids[i] = b->images[i].id;
        _cleanup_free_ uint32_t *ord = NULL;
        long dup = sort_ids(ids, n, &ord);
        if (dup >= 0)
                return bd_err_set(b->err, -EINVAL, "%s: duplicate image id %lld", b->label, (long long)ids[dup]);
        *ret = TAKE_PTR(ord);
        return 0;
}

static long find_sorted(const struct coco_image *images, const uint32_t *ord, size_t n, int64_t id)
{
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int64_t v = images[ord[mid]].id;
                if (v == id)
                        return ord[mid];
                if (v < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

/* A mask is rasterised by walking every polygon edge at a fifth of a pixel
 * (as pycocotools does): edges longer in all than MAX_WALK times the image's
 * width and height would cost gigabytes (a vertex at 1e8 did). */
static int check_polygon_walk(struct builder *b)
{
        for (size_t i = 0; i < b->n_anns; i++) {
                const struct raw_ann *ra = &b->anns[i];
                if (ra->a.seg_kind != COCO_SEG_POLYGONS || ra->a.image == UINT32_MAX)
                        continue;
                double w = b->images[ra->a.image].width, h = b->images[ra->a.image].height;
                if (ra->walk > MAX_WALK * (w + h))
                        return bd_err_set(b->err, -EINVAL,
                                          "%s:%ld: annotation %lld: field 'segmentation': polygons %.0f pixels "
                                          "around, more than %d times the width and height of its %gx%g image",
                                          b->label, ra->line, (long long)ra->a.id, ra->walk, MAX_WALK, w, h);
        }
        return 0;
}

static int check_unique_ann_ids(struct builder *b)
{
        size_t n = b->n_anns;
        _cleanup_free_ int64_t *ids = xmalloc((n + 1) * sizeof(*ids));
        for (size_t i = 0; i < n; i++)
                ids[i] = b->anns[i].a.id;
        _cleanup_free_ uint32_t *ord = NULL;
        long dup = sort_ids(ids, n, &ord);
        if (dup >= 0)
                return bd_err_set(b->err, -EINVAL, "%s: duplicate annotation id %lld", b->label, (long long)ids[dup]);
        return 0;
}

static void pad8(struct builder *b, uint64_t *pos)
{
        static const char zero[8];
        size_t n = (size_t)((8 - *pos % 8) % 8);
        if (n && fwrite(zero, 1, n, b->out) != n && !b->write_errno)
                b->write_errno = errno ? errno : EIO;
        *pos += n;
}

static void put(struct builder *b, const void *p, size_t size, size_t n, uint64_t *pos)
{
        if (n && fwrite(p, size, n, b->out) != n && !b->write_errno)
                b->write_errno = errno ? errno : EIO;
        *pos += (uint64_t)size * n;
}

static void builder_release(struct builder *b)
{
        free(b->images);
        free(b->anns);
        free(b->cats);
        buf_release(&b->strings);
        if (b->out)
                fclose(b->out);
}

/* Parses the mapped JSON and writes the index to out (positioned at 0). */
static int build_into(const struct json_map *m, const char *label, uint64_t hash, FILE *out, struct bd_err *err)
{
        struct builder b = { .label = label, .out = out, .err = err };
        buf_init(&b.strings);
        buf_add(&b.strings, "", 1);
        struct coco_index_header h = { .version = COCO_INDEX_VERSION, .endian = ENDIAN_MARK,
                                       .json_size = m->size, .json_hash = hash };
        memcpy(h.magic, COCO_INDEX_MAGIC, 8);
        uint64_t pos = 0;
        put(&b, &h, sizeof(h), 1, &pos);        /* placeholder */
        h.off_segs = pos;

        struct json_stream s;
        json_stream_init(&s, m->p, m->size, label);
        int r = json_stream_object_begin(&s, err);
        bool seen_images = false, seen_anns = false, seen_cats = false;
        char key[64];
        while (r >= 0 && (r = json_stream_next_key(&s, key, sizeof(key), err)) > 0) {
                if (streq(key, "images")) {
                        r = read_array(&b, &s, m, add_image);
                        seen_images = true;
                } else if (streq(key, "annotations")) {
                        r = read_array(&b, &s, m, add_ann);
                        seen_anns = true;
                } else if (streq(key, "categories")) {
                        r = read_array(&b, &s, m, add_category);
                        seen_cats = true;
                } else
                        r = json_stream_skip_value(&s, err);
        }
        if (r >= 0)
                r = json_stream_end(&s, err);
        if (r >= 0 && !seen_images)
                r = bd_err_set(err, -EINVAL, "%s: no 'images' list: not a COCO instances file", label);
        if (r >= 0 && !seen_cats)
                r = bd_err_set(err, -EINVAL, "%s: no 'categories' list: not a COCO instances file", label);
        if (r >= 0 && (b.n_images >= UINT32_MAX || b.n_anns >= UINT32_MAX))
                r = bd_err_set(err, -EFBIG, "%s: too many images or annotations", label);
        (void) seen_anns;
        _cleanup_free_ uint32_t *by_id = NULL;
        if (r >= 0)
                r = order_images(&b, &by_id);
        if (r >= 0)
                r = check_unique_ann_ids(&b);
        /* each annotation's image: UINT32_MAX for one that names none */
        for (size_t i = 0; r >= 0 && i < b.n_anns; i++) {
                long img = find_sorted(b.images, by_id, b.n_images, b.anns[i].image_id);
                b.anns[i].a.image = img < 0 ? UINT32_MAX : (uint32_t)img;
        }
        if (r >= 0)
                r = check_polygon_walk(&b);
        for (size_t i = 1; r >= 0 && i < b.n_cats; i++)
                for (size_t j = 0; j < i; j++)
                        if (b.cats[i].id == b.cats[j].id) {
                                r = bd_err_set(err, -EINVAL, "%s: duplicate category id %d", label, b.cats[i].id);
                                break;
                        }
        if (r < 0) {
                b.out = NULL;
                builder_release(&b);
                return r;
        }
        h.seg_words = b.seg_words;
        pos += b.seg_words * 4;

        /* resolve categories; group annotations by image (stable) */
        _cleanup_free_ uint32_t *count = xcalloc(b.n_images + 1, sizeof(uint32_t));
        _cleanup_free_ uint32_t *order = xmalloc((b.n_anns + 1) * sizeof(uint32_t));
        size_t kept = 0;
        for (size_t i = 0; i < b.n_anns; i++) {
                struct raw_ann *ra = &b.anns[i];
                uint32_t img = ra->a.image;
                if (img == UINT32_MAX) {
                        h.orphan_anns++;
                        continue;
                }
                ra->a.label = -1;
                for (size_t k = 0; k < b.n_cats; k++)
                        if (b.cats[k].id == ra->a.category_id) {
                                ra->a.label = (int32_t)k;
                                break;
                        }
                if (ra->a.label < 0)
                        h.unknown_category_anns++;
                count[img]++;
                kept++;
        }
        uint32_t first = 0;
        for (size_t i = 0; i < b.n_images; i++) {
                b.images[i].ann_first = first;
                b.images[i].ann_count = count[i];
                first += count[i];
                count[i] = b.images[i].ann_first;       /* now the next free slot */
        }
        for (size_t i = 0; i < b.n_anns; i++)
                if (b.anns[i].a.image != UINT32_MAX)
                        order[count[b.anns[i].a.image]++] = (uint32_t)i;

        pad8(&b, &pos);
        h.off_images = pos;
        h.n_images = (uint32_t)b.n_images;
        put(&b, b.images, sizeof(*b.images), b.n_images, &pos);
        h.off_anns = pos;
        h.n_anns = (uint32_t)kept;
        for (size_t i = 0; i < kept; i++)
                put(&b, &b.anns[order[i]].a, sizeof(struct coco_ann), 1, &pos);
        h.off_cats = pos;
        h.n_cats = (uint32_t)b.n_cats;
        put(&b, b.cats, sizeof(*b.cats), b.n_cats, &pos);
        h.off_by_id = pos;
        put(&b, by_id, sizeof(*by_id), b.n_images, &pos);
        pad8(&b, &pos);
        h.off_strings = pos;
        h.strings_size = b.strings.len;
        put(&b, b.strings.s, 1, b.strings.len, &pos);
        pad8(&b, &pos);
        h.file_size = pos;
        if (!b.write_errno && (fflush(out) != 0 || fseek(out, 0, SEEK_SET) != 0))
                b.write_errno = errno ? errno : EIO;
        uint64_t pos0 = 0;
        put(&b, &h, sizeof(h), 1, &pos0);
        if (!b.write_errno && fflush(out) != 0)
                b.write_errno = errno ? errno : EIO;
        r = b.write_errno ? -b.write_errno : 0;
        b.out = NULL;
        builder_release(&b);
        if (r < 0)
                return bd_err_set(err, r, "cannot write the index of '%s': %s", label, strerror(-r));
        return 0;
}

static double now_seconds(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Builds from json_path into a temporary file in dir; returns its fd and name. */
static int build_tmp(const char *json_path, const struct json_map *m, uint64_t hash, const char *tmp_template,
                     char **ret_tmp, struct bd_err *err)
{
        _cleanup_free_ char *tmp = xstrdup(tmp_template);
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return bd_err_set(err, -errno, "cannot create '%s': %s", tmp, strerror(errno));
        FILE *f = fdopen(fd, "w+");
        if (!f) {
                int e = errno;
                close(fd);
                (void) unlink(tmp);
                return bd_err_set(err, -e, "cannot open '%s': %s", tmp, strerror(e));
        }
        int r = build_into(m, json_path, hash, f, err);
        if (r >= 0 && (fchmod(fileno(f), 0644) < 0 || fsync(fileno(f)) < 0))
                r = bd_err_set(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
        if (fclose(f) != 0 && r >= 0)
                r = bd_err_set(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        *ret_tmp = TAKE_PTR(tmp);
        return 0;
}

int coco_index_build(const char *json_path, const char *index_path, struct bd_err *err)
{
        struct json_map m = { 0 };
        int r = json_map_file(json_path, &m, err);
        if (r < 0)
                return r;
        uint64_t hash = hash_mapped(&m);
        _cleanup_free_ char *tmpl = xasprintf("%s.tmp.XXXXXX", index_path);
        _cleanup_free_ char *tmp = NULL;
        r = build_tmp(json_path, &m, hash, tmpl, &tmp, err);
        json_unmap(&m);
        if (r < 0)
                return r;
        if (rename(tmp, index_path) < 0) {
                r = bd_err_set(err, -errno, "cannot rename '%s' to '%s': %s", tmp, index_path, strerror(errno));
                (void) unlink(tmp);
        }
        return r;
}

/* ---- loading ----------------------------------------------------------------- */

static bool section_ok(uint64_t off, uint64_t n, uint64_t size, uint64_t file_size)
{
        if (off > file_size)
                return false;
        return n <= (file_size - off) / (size ? size : 1);
}

static int check_index(struct coco_index *x, const char *path, struct bd_err *err)
{
        const struct coco_index_header *h = x->map;
#define BAD(...) bd_err_set(err, -EBADMSG, "'%s': corrupt index: " __VA_ARGS__)
        if (x->map_size < sizeof(*h) || memcmp(h->magic, COCO_INDEX_MAGIC, 8) != 0)
                return BAD("not a COCO index", path);
        if (h->version != COCO_INDEX_VERSION)
                return bd_err_set(err, -EPROTO, "'%s': index version %u, this program reads %u", path, h->version,
                                  COCO_INDEX_VERSION);
        if (h->endian != ENDIAN_MARK)
                return BAD("written on a machine of another byte order", path);
        if (h->file_size != x->map_size)
                return BAD("%llu bytes, header says %llu", path, (unsigned long long)x->map_size,
                           (unsigned long long)h->file_size);
        uint64_t fs = h->file_size;
        if (!section_ok(h->off_segs, h->seg_words, 4, fs) ||
            !section_ok(h->off_images, h->n_images, sizeof(struct coco_image), fs) ||
            !section_ok(h->off_anns, h->n_anns, sizeof(struct coco_ann), fs) ||
            !section_ok(h->off_cats, h->n_cats, sizeof(struct coco_category), fs) ||
            !section_ok(h->off_by_id, h->n_images, 4, fs) ||
            !section_ok(h->off_strings, h->strings_size, 1, fs) || h->off_segs % 8 || h->off_by_id % 4 ||
            h->off_images % 8 || h->off_anns % 8 || h->off_cats % 8)
                return BAD("a section lies outside the file", path);
        const char *base = x->map;
        x->header = h;
        x->segs = (const uint32_t *)(base + h->off_segs);
        x->seg_words = h->seg_words;
        x->images = (const struct coco_image *)(base + h->off_images);
        x->n_images = h->n_images;
        x->anns = (const struct coco_ann *)(base + h->off_anns);
        x->n_anns = h->n_anns;
        x->cats = (const struct coco_category *)(base + h->off_cats);
        x->n_cats = h->n_cats;
        x->by_id = (const uint32_t *)(base + h->off_by_id);
        x->strings = base + h->off_strings;
        x->strings_size = h->strings_size;
        if (x->strings_size == 0 || x->strings[x->strings_size - 1] != '\0')
                return BAD("string table not terminated", path);
        uint64_t next = 0;
        for (size_t i = 0; i < x->n_images; i++) {
                const struct coco_image *im = &x->images[i];
                if (im->ann_first != next || (uint64_t)im->ann_first + im->ann_count > x->n_anns ||
                    im->file_name >= x->strings_size || !im->width || !im->height)
                        return BAD("image %zu", path, i);
                next += im->ann_count;
        }
        if (next != x->n_anns)
                return BAD("annotations not covered by images", path);
        for (size_t i = 0; i < x->n_anns; i++) {
                const struct coco_ann *a = &x->anns[i];
                if (a->image >= x->n_images || a->label < -1 || a->label >= (int32_t)x->n_cats ||
                    a->seg_kind > COCO_SEG_RLE || (a->seg_kind != COCO_SEG_NONE && a->seg >= x->seg_words) ||
                    i < x->images[a->image].ann_first || i >= x->images[a->image].ann_first + x->images[a->image].ann_count)
                        return BAD("annotation %zu", path, i);
        }
        for (size_t i = 0; i < x->n_cats; i++)
                if (x->cats[i].name >= x->strings_size || x->cats[i].supercategory >= x->strings_size)
                        return BAD("category %zu", path, i);
        for (size_t i = 0; i < x->n_images; i++)
                if (x->by_id[i] >= x->n_images ||
                    (i > 0 && x->images[x->by_id[i]].id <= x->images[x->by_id[i - 1]].id))
                        return BAD("image order", path);
#undef BAD
        return 0;
}

int coco_index_load(const char *index_path, struct coco_index **ret, struct bd_err *err)
{
        struct json_map m = { 0 };
        int r = json_map_file(index_path, &m, err);
        if (r < 0)
                return r;
        struct coco_index *x = xcalloc(1, sizeof(*x));
        x->map = m.p;
        x->map_size = m.size;
        r = check_index(x, index_path, err);
        if (r < 0) {
                coco_index_free(x);
                return r;
        }
        x->info.json_hash = x->header->json_hash;
        STR_COPY(x->info.path, index_path);
        *ret = x;
        return 0;
}

struct coco_index *coco_index_free(struct coco_index *x)
{
        if (!x)
                return NULL;
        if (x->map)
                munmap(x->map, x->map_size);
        free(x);
        return NULL;
}

/* ---- the cache ----------------------------------------------------------------- */

static char *default_cache_dir(const char *json_path)
{
        const char *slash = strrchr(json_path, '/');
        _cleanup_free_ char *dir = !slash ? xstrdup(".")
                                          : xstrndup(json_path, slash == json_path ? 1 : (size_t)(slash - json_path));
        if (access(dir, W_OK) == 0)
                return TAKE_PTR(dir);
        const char *xdg = getenv("XDG_CACHE_HOME");
        if (xdg && *xdg)
                return xasprintf("%s/benchd/coco", xdg);
        const char *home = getenv("HOME");
        return xasprintf("%s/.cache/benchd/coco", home && *home ? home : "/tmp");
}

/* "instances_train2017" from ".../instances_train2017.json" */
static char *index_stem(const char *json_path)
{
        const char *base = strrchr(json_path, '/');
        base = base ? base + 1 : json_path;
        size_t n = strlen(base);
        if (n > 5 && streq(base + n - 5, ".json"))
                n -= 5;
        return xstrndup(base, n);
}

/* Removes the indices of other versions of the same JSON. */
static void remove_stale(const char *dir, const char *stem, const char *keep)
{
        DIR *d = opendir(dir);
        if (!d)
                return;
        size_t sl = strlen(stem);
        struct dirent *e;
        while ((e = readdir(d))) {
                const char *n = e->d_name;
                size_t nl = strlen(n);
                /* STEM.<16 hex>.bdidx */
                if (nl != sl + 1 + 16 + 6 || strncmp(n, stem, sl) != 0 || n[sl] != '.' ||
                    strcmp(n + nl - 6, ".bdidx") != 0 || streq(n, keep))
                        continue;
                bool hex = true;
                for (size_t i = sl + 1; i < sl + 17; i++)
                        hex = hex && strchr("0123456789abcdef", n[i]) && n[i];
                if (!hex)
                        continue;
                _cleanup_free_ char *p = xasprintf("%s/%s", dir, n);
                (void) unlink(p);
        }
        closedir(d);
}

static bool index_matches(const struct coco_index *x, uint64_t hash, uint64_t size)
{
        return x->header->json_hash == hash && x->header->json_size == size;
}

static int open_no_cache(const char *json_path, const struct json_map *m, uint64_t hash, struct coco_index **ret,
                         struct bd_err *err)
{
        const char *tmpdir = getenv("TMPDIR");
        _cleanup_free_ char *tmpl = xasprintf("%s/bdidx.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
        _cleanup_free_ char *tmp = NULL;
        double t0 = now_seconds();
        int r = build_tmp(json_path, m, hash, tmpl, &tmp, err);
        if (r < 0)
                return r;
        struct coco_index *x = NULL;
        r = coco_index_load(tmp, &x, err);
        (void) unlink(tmp);
        if (r < 0)
                return r;
        x->info.built = true;
        x->info.build_seconds = now_seconds() - t0;
        x->info.path[0] = '\0';
        *ret = x;
        return 0;
}

int coco_index_open(const char *json_path, const char *cache_dir, unsigned flags, struct coco_index **ret,
                    struct bd_err *err)
{
        uint64_t hash, size;
        int r = coco_file_hash(json_path, &hash, &size, err);
        if (r < 0)
                return r;
        /* the JSON is mapped only to build from it */
        struct json_map m = { 0 };
        if (flags & COCO_INDEX_NO_CACHE) {
                if ((r = json_map_file(json_path, &m, err)) < 0)
                        return r;
                r = open_no_cache(json_path, &m, hash, ret, err);
                json_unmap(&m);
                return r;
        }
        _cleanup_free_ char *dir = cache_dir ? xstrdup(cache_dir) : default_cache_dir(json_path);
        _cleanup_free_ char *stem = index_stem(json_path);
        _cleanup_free_ char *name = xasprintf("%s.%016llx.bdidx", stem, (unsigned long long)hash);
        _cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
        struct coco_index *x = NULL;
        struct bd_err ignored;

        if (coco_index_load(path, &x, &ignored) == 0 && index_matches(x, hash, size)) {
                *ret = x;
                return 0;
        }
        x = coco_index_free(x);
        if ((r = fs_mkdir_p(dir, 0755)) < 0)
                return bd_err_set(err, r, "cannot create the index directory '%s': %s", dir, strerror(-r));
        _cleanup_free_ char *lock = xasprintf("%s/%s.bdidx.lock", dir, stem);
        _cleanup_close_ int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (lfd < 0)
                return bd_err_set(err, -errno, "cannot create '%s': %s", lock, strerror(errno));
        while (flock(lfd, LOCK_EX) < 0)
                if (errno != EINTR)
                        return bd_err_set(err, -errno, "cannot lock '%s': %s", lock, strerror(errno));
        /* another process may have built it while we waited */
        bool built = false;
        double t0 = now_seconds();
        if (coco_index_load(path, &x, &ignored) < 0 || !index_matches(x, hash, size)) {
                x = coco_index_free(x);
                _cleanup_free_ char *tmpl = xasprintf("%s.tmp.XXXXXX", path);
                _cleanup_free_ char *tmp = NULL;
                r = json_map_file(json_path, &m, err);
                /* the file changed since it was hashed: this index would be stale at once */
                if (r >= 0 && (m.size != size || hash_mapped(&m) != hash))
                        r = bd_err_set(err, -EAGAIN, "'%s' changed while being indexed", json_path);
                if (r >= 0)
                        r = build_tmp(json_path, &m, hash, tmpl, &tmp, err);
                if (r >= 0 && rename(tmp, path) < 0) {
                        r = bd_err_set(err, -errno, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
                        (void) unlink(tmp);
                }
                if (r >= 0)
                        r = coco_index_load(path, &x, err);
                if (r >= 0) {
                        built = true;
                        remove_stale(dir, stem, name);
                }
        }
        (void) flock(lfd, LOCK_UN);
        json_unmap(&m);
        if (r < 0)
                return r;
        x->info.built = built;
        x->info.build_seconds = built ? now_seconds() - t0 : 0;
        *ret = x;
        return 0;
}

/* ---- lookups ------------------------------------------------------------------ */

long coco_index_find_image(const struct coco_index *x, int64_t id)
{
        size_t lo = 0, hi = x->n_images;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int64_t v = x->images[x->by_id[mid]].id;
                if (v == id)
                        return x->by_id[mid];
                if (v < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

int coco_index_find_category(const struct coco_index *x, int32_t id)
{
        for (size_t i = 0; i < x->n_cats; i++)
                if (x->cats[i].id == id)
                        return (int)i;
        return -1;
}

int coco_ann_polygons(const struct coco_index *x, const struct coco_ann *a, struct coco_polygons *ret)
{
        if (a->seg_kind != COCO_SEG_POLYGONS)
                return -ENOENT;
        uint64_t w = a->seg, end = x->seg_words;
        if (w >= end)
                return -EBADMSG;
        uint32_t n = x->segs[w++];
        if (n > end - w)
                return -EBADMSG;
        const uint32_t *len = x->segs + w;
        uint64_t total = 0;
        for (uint32_t i = 0; i < n; i++)
                total += len[i];
        w += n + (w + n) % 2;
        if (w > end || 2 * total > end - w)
                return -EBADMSG;
        ret->n = n;
        ret->len = len;
        ret->xy = (const double *)(const void *)(x->segs + w);
        return 0;
}

int coco_ann_rle(const struct coco_index *x, const struct coco_ann *a, struct coco_rle *ret)
{
        if (a->seg_kind != COCO_SEG_RLE)
                return -ENOENT;
        uint64_t w = a->seg, end = x->seg_words;
        if (end < 3 || w > end - 3)
                return -EBADMSG;
        ret->height = x->segs[w];
        ret->width = x->segs[w + 1];
        ret->n = x->segs[w + 2];
        if (ret->n > end - w - 3)
                return -EBADMSG;
        ret->counts = x->segs + w + 3;
        return 0;
}

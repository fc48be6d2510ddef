/* synth.c: drawing the shapes, writing the JPEGs and the instances files. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "fs.h"
#include "jpeg.h"
#include "macro.h"
#include "mask.h"
#include "parallel.h"
#include "rng.h"
#include "strutil.h"
#include "synth.h"

#define NSHAPES 8
#define NCOLOURS 10
#define MAX_PTS 40

enum shape { S_RECT, S_ELLIPSE, S_TRIANGLE, S_DIAMOND, S_HEXAGON, S_STAR, S_CROSS, S_TRAPEZOID };

static const char *const shape_names[NSHAPES] = {
        "rectangle", "ellipse", "triangle", "diamond", "hexagon", "star", "cross", "trapezoid",
};
static const struct {
        const char *name;
        uint8_t rgb[3];
} colours[NCOLOURS] = {
        { "red", { 220, 30, 30 } },     { "green", { 30, 180, 40 } },   { "blue", { 30, 60, 220 } },
        { "yellow", { 240, 220, 30 } }, { "magenta", { 220, 40, 200 } }, { "cyan", { 30, 210, 220 } },
        { "orange", { 250, 140, 20 } }, { "purple", { 120, 40, 160 } }, { "white", { 245, 245, 245 } },
        { "black", { 15, 15, 15 } },
};

/* class k: shape k % 8, colour (k + k / 8) % 10: 80 distinct pairs */
static int class_shape(int k)
{
        return k % NSHAPES;
}

static int class_colour(int k)
{
        return (k + k / NSHAPES) % NCOLOURS;
}

void synth_class_name(int k, char *buf, size_t n)
{
        snprintf(buf, n, "%s %s", colours[class_colour(k)].name, shape_names[class_shape(k)]);
}

int synth_class_id(int k)
{
        return k + 1 + k / 10;  /* gaps, as COCO's 1..90 for 80 classes */
}

void synth_config_init(struct synth_config *c)
{
        *c = (struct synth_config){
                .train_images = 1000, .val_images = 200, .size = 320, .classes = 6, .seed = 1, .quality = 90,
                .max_objects = 6, .noise = 24, .crowd_fraction = 0.05, .empty_fraction = 0.02, .threads = 1,
        };
}

/* ---- geometry and drawing ----------------------------------------------------------- */

struct poly {
        int n;
        double xy[2 * MAX_PTS];
};

static void unit_shape(int s, struct poly *p)
{
        p->n = 0;
#define PT(x, y) (p->xy[2 * p->n] = (x), p->xy[2 * p->n + 1] = (y), p->n++)
        switch (s) {
        case S_RECT: PT(-.5, -.5); PT(.5, -.5); PT(.5, .5); PT(-.5, .5); break;
        case S_ELLIPSE:
                for (int i = 0; i < 32; i++)
                        PT(.5 * cos(2 * M_PI * i / 32), .5 * sin(2 * M_PI * i / 32));
                break;
        case S_TRIANGLE: PT(0, -.5); PT(.5, .5); PT(-.5, .5); break;
        case S_DIAMOND: PT(0, -.5); PT(.5, 0); PT(0, .5); PT(-.5, 0); break;
        case S_HEXAGON:
                for (int i = 0; i < 6; i++)
                        PT(.5 * cos(2 * M_PI * i / 6), .5 * sin(2 * M_PI * i / 6));
                break;
        case S_STAR:
                for (int i = 0; i < 10; i++) {
                        double r = i % 2 ? .2 : .5, a = -M_PI / 2 + M_PI * i / 5;
                        PT(r * cos(a), r * sin(a));
                }
                break;
        case S_CROSS: {
                const double a = 1.0 / 6;
                PT(-a, -.5); PT(a, -.5); PT(a, -a); PT(.5, -a); PT(.5, a); PT(a, a);
                PT(a, .5); PT(-a, .5); PT(-a, a); PT(-.5, a); PT(-.5, -a); PT(-a, -a);
                break;
        }
        case S_TRAPEZOID: PT(-.3, -.5); PT(.3, -.5); PT(.5, .5); PT(-.5, .5); break;
        }
#undef PT
}

/* The shape scaled to w x h, rotated by a, centred on (cx, cy), coordinates
 * rounded to hundredths as they are written. */
static void place(int s, double w, double h, double a, double cx, double cy, struct poly *p)
{
        unit_shape(s, p);
        double ca = cos(a), sa = sin(a);
        for (int i = 0; i < p->n; i++) {
                double x = p->xy[2 * i] * w, y = p->xy[2 * i + 1] * h;
                p->xy[2 * i] = round((cx + x * ca - y * sa) * 100) / 100;
                p->xy[2 * i + 1] = round((cy + x * sa + y * ca) * 100) / 100;
        }
}

static void poly_bbox(const struct poly *p, double *b)
{
        double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
        for (int i = 0; i < p->n; i++) {
                x0 = fmin(x0, p->xy[2 * i]);
                x1 = fmax(x1, p->xy[2 * i]);
                y0 = fmin(y0, p->xy[2 * i + 1]);
                y1 = fmax(y1, p->xy[2 * i + 1]);
        }
        b[0] = x0;
        b[1] = y0;
        b[2] = round((x1 - x0) * 100) / 100;
        b[3] = round((y1 - y0) * 100) / 100;
}

/* The polygon's pixels as COCO rasterises its annotation (pycocotools'
 * rleFrPoly, mask.h), as rows of 0/1 in m (W x H): what is painted is
 * exactly the ground truth mask.  Returns the number of pixels. */
static uint32_t raster_poly(const struct poly *p, int W, int H, uint8_t *m)
{
        _cleanup_rle_ struct rle r = RLE_INIT;
        rle_from_poly(&r, p->xy, (size_t)p->n, (uint32_t)H, (uint32_t)W);
        rle_decode_rows(&r, m, (size_t)W);
        return rle_area(&r);
}

typedef void span_fn(void *ctx, int y, int x0, int x1);

/* Calls fn for every run of set pixels of a row-major mask. */
static void mask_spans(const uint8_t *m, int W, int H, span_fn *fn, void *ctx)
{
        for (int y = 0; y < H; y++) {
                const uint8_t *row = m + (size_t)y * (size_t)W;
                for (int x = 0; x < W;) {
                        if (!row[x]) {
                                x++;
                                continue;
                        }
                        int x0 = x;
                        while (x < W && row[x])
                                x++;
                        fn(ctx, y, x0, x);
                }
        }
}

static bool masks_overlap(const uint8_t *a, const uint8_t *b, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (a[i] & b[i])
                        return true;
        return false;
}

static void mask_or(uint8_t *dst, const uint8_t *src, size_t n)
{
        for (size_t i = 0; i < n; i++)
                dst[i] |= src[i];
}

struct paint {
        uint8_t *img;
        int W;
        const uint8_t *rgb;
        struct bd_rng *r;
};

static uint8_t clamp_u8(int v)
{
        return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

static void paint_span(void *ctx, int y, int x0, int x1)
{
        struct paint *p = ctx;
        uint8_t *row = p->img + ((size_t)y * (size_t)p->W + (size_t)x0) * 3;
        for (int x = x0; x < x1; x++, row += 3) {
                uint64_t v = bd_rng_u64(p->r);
                for (int c = 0; c < 3; c++)
                        row[c] = clamp_u8(p->rgb[c] + (int)((v >> (8 * c)) & 15) - 8);
        }
}

/* ---- one image ------------------------------------------------------------------------ */

struct s_ann {
        int cls;
        int crowd;
        double bbox[4];
        double area;
        struct poly poly;
        uint32_t *counts;       /* crowd: column-major RLE */
        size_t ncounts;
};

struct s_image {
        int W, H;
        int nann;
        struct s_ann *anns;
        size_t jpeg_bytes;
        int error;
        char msg[256];
};

/* Intersection over the smaller box: a small shape on a large one counts
 * as overlapping even when their IoU is small. */
static double box_overlap(const double *a, const double *b)
{
        double iw = fmin(a[0] + a[2], b[0] + b[2]) - fmax(a[0], b[0]);
        double ih = fmin(a[1] + a[3], b[1] + b[3]) - fmax(a[1], b[1]);
        if (iw <= 0 || ih <= 0)
                return 0;
        return iw * ih / fmin(a[2] * a[3], b[2] * b[3]);
}

static bool overlaps(const struct s_image *im, const double *b)
{
        for (int i = 0; i < im->nann; i++)
                if (box_overlap(im->anns[i].bbox, b) > (im->anns[i].crowd ? 0.02 : 0.15))
                        return true;
        return false;
}

/* A shape of class k, about L pixels across, placed inside the image and
 * away from the others; false when no place was found. */
static bool place_object(struct bd_rng *r, const struct s_image *im, int k, double L, struct poly *p, double *bbox,
                         const double *region)
{
        int s = class_shape(k);
        for (int tries = 0; tries < 20; tries++) {
                double asp = exp(bd_rng_range(r, log(0.6), log(1.6)));
                double w = L * sqrt(asp), h = L / sqrt(asp);
                double a = s == S_RECT ? 0 : bd_rng_range(r, 0, 2 * M_PI);
                place(s, w, h, a, 0, 0, p);
                double b[4];
                poly_bbox(p, b);
                double rx0 = region ? region[0] : 0, ry0 = region ? region[1] : 0;
                double rx1 = region ? region[0] + region[2] : im->W, ry1 = region ? region[1] + region[3] : im->H;
                double spanx = (rx1 - rx0) - b[2] - 2, spany = (ry1 - ry0) - b[3] - 2;
                if (spanx <= 0 || spany <= 0) {
                        L *= 0.8;
                        continue;
                }
                double cx = rx0 + 1 - b[0] + bd_rng_range(r, 0, spanx), cy = ry0 + 1 - b[1] + bd_rng_range(r, 0, spany);
                place(s, w, h, a, cx, cy, p);
                poly_bbox(p, bbox);
                if (bbox[0] < 0 || bbox[1] < 0 || bbox[0] + bbox[2] > im->W || bbox[1] + bbox[3] > im->H)
                        continue;
                if (!region && overlaps(im, bbox))
                        continue;
                return true;
        }
        return false;
}

static struct s_ann *new_ann(struct s_image *im, int cap)
{
        if (!im->anns)
                im->anns = xcalloc((size_t)cap, sizeof(*im->anns));
        return &im->anns[im->nann++];
}

static void add_crowd(struct bd_rng *r, const struct synth_config *c, struct s_image *im, uint8_t *img, uint8_t *occ,
                      int cap)
{
        int k = (int)bd_rng_pick(r, (uint64_t)c->classes);
        int S = im->W > im->H ? im->W : im->H;
        double rw = S * bd_rng_range(r, 0.2, 0.35), rh = S * bd_rng_range(r, 0.2, 0.35);
        if (rw > im->W - 2)
                rw = im->W - 2;
        if (rh > im->H - 2)
                rh = im->H - 2;
        double region[4] = { bd_rng_range(r, 0, im->W - rw), bd_rng_range(r, 0, im->H - rh), rw, rh };
        size_t npix = (size_t)im->W * (size_t)im->H;
        _cleanup_free_ uint8_t *m = xcalloc(npix, 1);
        _cleanup_free_ uint8_t *one = xmalloc(npix);
        struct paint pt = { img, im->W, colours[class_colour(k)].rgb, r };
        int n = 8 + (int)bd_rng_pick(r, 9);
        for (int i = 0; i < n; i++) {
                struct poly p;
                double b[4];
                if (!place_object(r, im, k, S * bd_rng_range(r, 0.03, 0.06), &p, b, region))
                        continue;
                raster_poly(&p, im->W, im->H, one);
                mask_spans(one, im->W, im->H, paint_span, &pt);
                mask_or(m, one, npix);
        }
        mask_or(occ, m, npix);
        /* the region's mask: bbox, area, column-major runs starting with zeros */
        long area = 0;
        int x0 = im->W, y0 = im->H, x1 = -1, y1 = -1;
        size_t ncap = 64, nc = 0;
        uint32_t *counts = xmalloc(ncap * sizeof(uint32_t));
        uint8_t cur = 0;
        uint32_t run = 0;
        for (int x = 0; x < im->W; x++)
                for (int y = 0; y < im->H; y++) {
                        uint8_t v = m[(size_t)y * (size_t)im->W + (size_t)x];
                        if (v) {
                                area++;
                                x0 = x < x0 ? x : x0;
                                x1 = x > x1 ? x : x1;
                                y0 = y < y0 ? y : y0;
                                y1 = y > y1 ? y : y1;
                        }
                        if (v != cur) {
                                if (nc == ncap)
                                        counts = xrealloc(counts, (ncap *= 2) * sizeof(uint32_t));
                                counts[nc++] = run;
                                run = 0;
                                cur = v;
                        }
                        run++;
                }
        if (nc == ncap)
                counts = xrealloc(counts, (ncap + 1) * sizeof(uint32_t));
        counts[nc++] = run;
        if (area == 0) {
                free(counts);
                return;
        }
        struct s_ann *a = new_ann(im, cap);
        a->cls = k;
        a->crowd = 1;
        a->bbox[0] = x0;
        a->bbox[1] = y0;
        a->bbox[2] = x1 - x0 + 1;
        a->bbox[3] = y1 - y0 + 1;
        a->area = (double)area;
        a->counts = counts;
        a->ncounts = nc;
}

static void make_image(const struct synth_config *c, uint64_t key, struct s_image *im, uint8_t **ret_rgb)
{
        struct bd_rng r;
        bd_rng_seed_key(&r, key);
        int S = c->size;
        int s = (int)lround(S * bd_rng_range(&r, 0.62, 1.0));
        bool portrait = bd_rng_uniform(&r) < 0.25;
        im->W = portrait ? s : S;
        im->H = portrait ? S : s;
        size_t npix = (size_t)im->W * (size_t)im->H;
        uint8_t *img = xmalloc(npix * 3);
        /* background: a muted gradient with noise */
        double c1[3], c2[3];
        double g1 = bd_rng_range(&r, 50, 200), g2 = bd_rng_range(&r, 50, 200);
        for (int ch = 0; ch < 3; ch++) {
                c1[ch] = g1 + bd_rng_range(&r, -25, 25);
                c2[ch] = g2 + bd_rng_range(&r, -25, 25);
        }
        double dir = bd_rng_range(&r, 0, 2 * M_PI), dx = cos(dir), dy = sin(dir);
        double tmin = fmin(0, dx * im->W) + fmin(0, dy * im->H), tmax = fmax(0, dx * im->W) + fmax(0, dy * im->H);
        int amp = c->noise;
        for (int y = 0; y < im->H; y++) {
                uint8_t *row = img + (size_t)y * (size_t)im->W * 3;
                for (int x = 0; x < im->W; x++) {
                        double t = ((x * dx + y * dy) - tmin) / (tmax - tmin);
                        uint64_t v = bd_rng_u64(&r);
                        for (int ch = 0; ch < 3; ch++) {
                                int noise = amp ? (int)((v >> (16 * ch)) % (uint64_t)(2 * amp + 1)) - amp : 0;
                                row[3 * x + ch] = clamp_u8((int)lround(c1[ch] + (c2[ch] - c1[ch]) * t) + noise);
                        }
                }
        }
        int cap = c->max_objects + 1;
        if (bd_rng_uniform(&r) < c->empty_fraction) {
                *ret_rgb = img;
                return;
        }
        /* pixels taken: no object hides part of another, so every mask is
         * exactly what the image shows of its object */
        _cleanup_free_ uint8_t *occ = xcalloc(npix, 1);
        _cleanup_free_ uint8_t *one = xmalloc(npix);
        if (bd_rng_uniform(&r) < c->crowd_fraction)
                add_crowd(&r, c, im, img, occ, cap);
        int n = 1 + (int)bd_rng_pick(&r, (uint64_t)c->max_objects);
        for (int i = 0; i < n; i++) {
                int k = (int)bd_rng_pick(&r, (uint64_t)c->classes);
                /* sizes log-uniform from 5% to 55% of the longer side */
                double L = S * exp(bd_rng_range(&r, log(0.05), log(0.55)));
                struct poly p;
                double b[4];
                uint32_t area = 0;
                for (int tries = 0; tries < 3 && !area; tries++) {
                        if (!place_object(&r, im, k, L, &p, b, NULL))
                                break;
                        area = raster_poly(&p, im->W, im->H, one);
                        if (masks_overlap(one, occ, npix))
                                area = 0;
                }
                if (!area)
                        continue;
                struct paint pt = { img, im->W, colours[class_colour(k)].rgb, &r };
                mask_spans(one, im->W, im->H, paint_span, &pt);
                mask_or(occ, one, npix);
                struct s_ann *a = new_ann(im, cap);
                a->cls = k;
                a->poly = p;
                memcpy(a->bbox, b, sizeof(b));
                a->area = area;         /* COCO's area: the mask's pixels */
        }
        *ret_rgb = img;
}

/* ---- the dataset --------------------------------------------------------------------------- */

struct job {
        const struct synth_config *c;
        const char *dir;
        struct s_image *images;
        long n_train, n;
        long done;              /* images written, counted with atomics */
        pthread_mutex_t progress;
};

static int64_t image_id(long i)
{
        return (int64_t)i + 1;
}

static void job_fn(void *ctx, size_t i, int thread)
{
        struct job *j = ctx;
        bool val = (long)i >= j->n_train;
        struct s_image *im = &j->images[i];
        uint64_t key = bd_rng_mix3(j->c->seed, val ? 2 : 1, val ? i - (size_t)j->n_train : i);
        _cleanup_free_ uint8_t *rgb = NULL;
        make_image(j->c, key, im, &rgb);
        _cleanup_free_ uint8_t *jpg = NULL;
        size_t len = 0;
        struct bd_err err;
        if (jpeg_encode_rgb(rgb, im->W, im->H, j->c->quality, &jpg, &len, &err) < 0) {
                im->error = -EIO;
                STR_COPY(im->msg, err.msg);
                return;
        }
        _cleanup_free_ char *path = xasprintf("%s/%s/%012lld.jpg", j->dir, val ? "val2017" : "train2017",
                                              (long long)image_id((long)i));
        if (fs_write_replace(path, jpg, len, 0644, &err) < 0) {
                im->error = -EIO;
                STR_COPY(im->msg, err.msg);
                return;
        }
        im->jpeg_bytes = len;
        long done = __atomic_add_fetch(&j->done, 1, __ATOMIC_RELAXED);
        if (j->c->progress && pthread_mutex_trylock(&j->progress) == 0) {
                j->c->progress(j->c->progress_ctx, done, j->n);
                pthread_mutex_unlock(&j->progress);
        }
}

static int write_json(const struct synth_config *c, const char *path, const struct s_image *images, long first,
                      long n, int64_t *ann_id, struct synth_counts *counts, struct bd_err *err)
{
        _cleanup_buf_ struct bd_buf f = BD_BUF_INIT;
        buf_init(&f);
        buf_printf(&f, "{\"info\": {\"description\": \"benchd synthetic shapes\", \"version\": \"1.0\", "
                   "\"year\": 2017, \"seed\": %llu},\n\"licenses\": [],\n\"images\": [",
                (unsigned long long)c->seed);
        for (long i = 0; i < n; i++) {
                const struct s_image *im = &images[first + i];
                buf_printf(&f, "%s\n{\"id\": %lld, \"file_name\": \"%012lld.jpg\", \"width\": %d, \"height\": %d}",
                        i ? "," : "", (long long)image_id(first + i), (long long)image_id(first + i), im->W, im->H);
        }
        buf_printf(&f, "\n],\n\"annotations\": [");
        bool any = false;
        for (long i = 0; i < n; i++) {
                const struct s_image *im = &images[first + i];
                counts->images++;
                counts->empty += im->nann == 0;
                for (int k = 0; k < im->nann; k++) {
                        const struct s_ann *a = &im->anns[k];
                        buf_printf(&f, "%s\n{\"id\": %lld, \"image_id\": %lld, \"category_id\": %d, \"iscrowd\": %d, "
                                   "\"area\": %.5f, \"bbox\": [%.2f, %.2f, %.2f, %.2f], \"segmentation\": ",
                                any ? "," : "", (long long)(*ann_id)++, (long long)image_id(first + i),
                                synth_class_id(a->cls), a->crowd, a->area, a->bbox[0], a->bbox[1], a->bbox[2],
                                a->bbox[3]);
                        any = true;
                        counts->annotations++;
                        if (a->crowd) {
                                counts->crowd++;
                                buf_printf(&f, "{\"counts\": [");
                                for (size_t j = 0; j < a->ncounts; j++)
                                        buf_printf(&f, "%s%u", j ? ", " : "", a->counts[j]);
                                buf_printf(&f, "], \"size\": [%d, %d]}}", im->H, im->W);
                        } else {
                                buf_printf(&f, "[[");
                                for (int j = 0; j < 2 * a->poly.n; j++)
                                        buf_printf(&f, "%s%.2f", j ? ", " : "", a->poly.xy[j]);
                                buf_printf(&f, "]]}");
                        }
                }
        }
        buf_printf(&f, "\n],\n\"categories\": [");
        for (int k = 0; k < c->classes; k++) {
                char name[64];
                synth_class_name(k, name, sizeof(name));
                buf_printf(&f, "%s\n{\"id\": %d, \"name\": \"%s\", \"supercategory\": \"%s\"}", k ? "," : "",
                        synth_class_id(k), name, shape_names[class_shape(k)]);
        }
        buf_printf(&f, "\n]}\n");
        return fs_write_atomic(path, f.s, f.len, 0644, err);
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) ftw;
        return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static void rm_rf(const char *path)
{
        (void) nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* --force: the new tree at tmp takes the place of dir (a tree or a file, st
 * its lstat), in one step where the file system can exchange two names;
 * what was there is removed.  On failure dir is as it was. */
static int replace(const char *tmp, const char *dir, const struct stat *st, struct bd_err *err)
{
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
                rm_rf(tmp);
                return 0;
        }
        if (errno != EINVAL && errno != ENOSYS)
                return bd_err_set(err, -errno, "cannot replace '%s': %s", dir, strerror(errno));
        /* no exchange here: what was there moves aside first */
        _cleanup_free_ char *old = xasprintf("%s.old.XXXXXX", dir);
        if (!mkdtemp(old))
                return bd_err_set(err, -errno, "cannot create a name next to '%s': %s", dir, strerror(errno));
        if ((!S_ISDIR(st->st_mode) && rmdir(old) < 0) || rename(dir, old) < 0) {
                int r = bd_err_set(err, -errno, "cannot move '%s' aside: %s", dir, strerror(errno));
                (void) rmdir(old);
                return r;
        }
        if (rename(tmp, dir) < 0) {
                int r = bd_err_set(err, -errno, "cannot rename '%s' to '%s': %s", tmp, dir, strerror(errno));
                (void) rename(old, dir);
                return r;
        }
        rm_rf(old);
        return 0;
}

static int check_config(const struct synth_config *c, struct bd_err *err)
{
        if (c->train_images < 1 || c->val_images < 0 || c->train_images + c->val_images > 100000000)
                return bd_err_set(err, -EINVAL, "dataset synth: image counts out of range");
        if (c->size < 32 || c->size > 8192)
                return bd_err_set(err, -EINVAL, "dataset synth: size %d outside 32..8192", c->size);
        if (c->classes < 1 || c->classes > SYNTH_MAX_CLASSES)
                return bd_err_set(err, -EINVAL, "dataset synth: classes %d outside 1..%d", c->classes,
                                  SYNTH_MAX_CLASSES);
        if (c->quality < 1 || c->quality > 100 || c->max_objects < 1 || c->max_objects > 100 || c->noise < 0 ||
            c->noise > 127)
                return bd_err_set(err, -EINVAL, "dataset synth: quality, objects or noise out of range");
        return 0;
}

int synth_write(const struct synth_config *c, const char *dir, struct synth_counts *ret, struct bd_err *err)
{
        int r = check_config(c, err);
        if (r < 0)
                return r;
        struct stat st;
        bool exists = lstat(dir, &st) == 0;
        if (exists && !c->force)
                return bd_err_set(err, -EEXIST, "'%s' already exists (--force replaces it)", dir);
        if (exists && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
                return bd_err_set(err, -EEXIST, "'%s' is a device, FIFO or socket: --force replaces a directory "
                                  "or a file only", dir);
        /* the parent may not exist yet (~/.local/share/benchd/data on a new machine) */
        _cleanup_free_ char *parent = xstrdup(dir);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
                *slash = '\0';
                r = fs_mkdir_p(parent, 0755);
                if (r < 0)
                        return bd_err_set(err, r, "cannot create '%s': %s", parent, strerror(-r));
        }
        _cleanup_free_ char *tmp = xasprintf("%s.tmp.XXXXXX", dir);
        if (!mkdtemp(tmp))
                return bd_err_set(err, -errno, "cannot create a directory next to '%s': %s", dir, strerror(errno));
        (void) chmod(tmp, 0755);
        _cleanup_free_ char *d1 = xasprintf("%s/train2017", tmp);
        _cleanup_free_ char *d2 = xasprintf("%s/val2017", tmp);
        _cleanup_free_ char *d3 = xasprintf("%s/annotations", tmp);
        if (mkdir(d1, 0755) < 0 || mkdir(d2, 0755) < 0 || mkdir(d3, 0755) < 0) {
                r = bd_err_set(err, -errno, "cannot create directories in '%s': %s", tmp, strerror(errno));
                rm_rf(tmp);
                return r;
        }
        long n = c->train_images + c->val_images;
        struct s_image *images = xcalloc((size_t)n, sizeof(*images));
        struct job j = { c, tmp, images, c->train_images, n, 0, PTHREAD_MUTEX_INITIALIZER };
        parallel_for((size_t)n, c->threads, job_fn, &j);
        if (c->progress)
                c->progress(c->progress_ctx, j.done, n);
        struct synth_counts counts = { 0 };
        for (long i = 0; i < n && r == 0; i++) {
                if (images[i].error)
                        r = bd_err_set(err, images[i].error, "%s", images[i].msg);
                counts.jpeg_bytes += images[i].jpeg_bytes;
        }
        int64_t ann_id = 1;
        _cleanup_free_ char *j1 = xasprintf("%s/instances_train2017.json", d3);
        _cleanup_free_ char *j2 = xasprintf("%s/instances_val2017.json", d3);
        if (r == 0)
                r = write_json(c, j1, images, 0, c->train_images, &ann_id, &counts, err);
        if (r == 0)
                r = write_json(c, j2, images, c->train_images, c->val_images, &ann_id, &counts, err);
        for (long i = 0; i < n; i++) {
                for (int k = 0; k < images[i].nann; k++)
                        free(images[i].anns[k].counts);
                free(images[i].anns);
        }
        free(images);
        /* into place */
        if (r == 0 && exists)
                r = replace(tmp, dir, &st, err);
        else if (r == 0 && rename(tmp, dir) < 0)
                r = bd_err_set(err, -errno, "cannot rename '%s' to '%s': %s", tmp, dir, strerror(errno));
        if (r < 0) {
                rm_rf(tmp);
                return r;
        }
        if (ret)
                *ret = counts;
        return 0;
}

/* coco-index.h: COCO instance annotations as a compact, memory-mapped index.
 *
 * annotations/instances_train2017.json is 448 MB of JSON; eight ranks per node
 * must not each parse it.  coco_index_open() converts it once (streaming, see
 * json-stream.h) into a binary file named after the JSON and its checksum,
 *     CACHE_DIR/instances_train2017.<xxh3-64 in hex>.bdidx
 * and maps that file read-only; every later open (any rank, any process)
 * only hashes the JSON and maps the index.  A changed JSON has another
 * checksum, so a stale index is never used: it is rebuilt, and the indices
 * of older versions of the same file are removed.  Concurrent builders are
 * serialised by a lock file; the index appears atomically (rename).
 *
 * Layout (little-endian, every section 8-byte aligned):
 *     header | segmentation words | images | annotations | categories |
 *     image order by id | strings
 * Annotations are grouped by image, in the order of the JSON within an
 * image; images and categories keep the JSON order.  Annotations whose
 * image_id names no image are dropped (counted in the header); those whose
 * category is unknown are kept with label -1 (COCOeval ignores them too).
 *
 * Invariants after a successful open: every offset and count was checked
 * against the file, images[i].ann_first/ann_count partition anns[], strings
 * are NUL-terminated inside the string table.  Segmentation data is checked
 * when read (coco_ann_polygons / coco_ann_rle).  Building refuses polygons
 * whose masks would cost gigabytes to rasterise: a coordinate beyond 10^7,
 * or edges longer in all than 256 times the image's width and height.
 */
#ifndef BD_DATA_COCO_INDEX_H
#define BD_DATA_COCO_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define COCO_INDEX_MAGIC "BDCOCOIX"
#define COCO_INDEX_VERSION 2

enum coco_seg_kind {
        COCO_SEG_NONE = 0,
        COCO_SEG_POLYGONS = 1,  /* words: npoly, len[npoly] (coordinates each), a pad word to an
                                 * 8-byte boundary where needed, then the coordinates as doubles */
        COCO_SEG_RLE = 2,       /* words: height, width, ncounts, counts[ncounts] (column-major) */
};

struct coco_image {             /* 32 bytes */
        int64_t id;
        uint32_t width, height;
        uint32_t file_name;     /* offset in the string table */
        uint32_t ann_first;     /* its annotations: anns[ann_first, ann_first + ann_count) */
        uint32_t ann_count;
        uint32_t reserved;
};

struct coco_ann {               /* 80 bytes */
        int64_t id;
        double bbox[4];         /* x, y, width, height in pixels, as in the JSON */
        double area;            /* the JSON's area (width * height when absent) */
        int32_t category_id;
        int32_t label;          /* index into categories[], -1 for an unknown category */
        uint32_t image;         /* index into images[] */
        uint8_t iscrowd;
        uint8_t seg_kind;       /* enum coco_seg_kind */
        uint16_t reserved;
        uint64_t seg;           /* first word in the segmentation section */
        uint64_t reserved2;
};

struct coco_category {          /* 16 bytes */
        int32_t id;
        uint32_t name;          /* offsets in the string table */
        uint32_t supercategory;
        uint32_t reserved;
};

struct coco_index_header {      /* 192 bytes */
        char magic[8];
        uint32_t version;
        uint32_t endian;        /* 0x01020304 as written by the builder */
        uint64_t file_size;
        uint64_t json_size;
        uint64_t json_hash;     /* XXH3_64bits of the JSON file */
        uint32_t n_images, n_anns, n_cats, reserved;
        uint64_t off_segs, off_images, off_anns, off_cats, off_by_id, off_strings;
        uint64_t seg_words, strings_size;
        uint64_t orphan_anns;   /* dropped: image_id names no image */
        uint64_t unknown_category_anns;
        uint64_t reserved2[7];
};

struct coco_index_info {
        bool built;             /* this open (re)built the index */
        double build_seconds;   /* time to build, when built */
        uint64_t json_hash;
        char path[4096];        /* the index file ("" when not kept) */
};

/* A mapped index.  All pointers point into the read-only mapping. */
struct coco_index {
        const struct coco_image *images;
        size_t n_images;
        const struct coco_ann *anns;
        size_t n_anns;
        const struct coco_category *cats;
        size_t n_cats;
        const uint32_t *by_id;  /* image indices in increasing id order */
        const char *strings;
        size_t strings_size;
        const uint32_t *segs;
        size_t seg_words;
        const struct coco_index_header *header;
        struct coco_index_info info;
        void *map;
        size_t map_size;
};

enum coco_index_flags {
        COCO_INDEX_NO_CACHE = 1 << 0,   /* build into a temporary file that is removed once mapped */
};

/* Opens the index of json_path, building it when no index with the JSON's
 * checksum exists.  cache_dir NULL: the JSON's directory when writable,
 * $XDG_CACHE_HOME/benchd/coco (~/.cache/benchd/coco) otherwise. */
int coco_index_open(const char *json_path, const char *cache_dir, unsigned flags, struct coco_index **ret,
                    struct bd_err *err);
/* Converts json_path into index_path (atomically). */
int coco_index_build(const char *json_path, const char *index_path, struct bd_err *err);
/* Maps an index file and checks it. */
int coco_index_load(const char *index_path, struct coco_index **ret, struct bd_err *err);
struct coco_index *coco_index_free(struct coco_index *idx);
DEFINE_CLEANUP(struct coco_index *, coco_index_free)

/* The index of the image or category with this id, -1 when there is none. */
long coco_index_find_image(const struct coco_index *idx, int64_t id);
int coco_index_find_category(const struct coco_index *idx, int32_t id);
static inline const char *coco_index_str(const struct coco_index *idx, uint32_t off)
{
        return idx->strings + off;
}

struct coco_polygons {
        uint32_t n;             /* polygons */
        const uint32_t *len;    /* coordinates in each polygon (x, y pairs) */
        const double *xy;       /* all polygons' coordinates, one after the other, exactly as
                                 * in the JSON (pycocotools rasterises doubles) */
};
struct coco_rle {
        uint32_t height, width;
        uint32_t n;
        const uint32_t *counts; /* alternating runs of 0 and 1, column-major, starting with 0 */
};
/* -ENOENT when the annotation has no segmentation of that kind, -EBADMSG
 * when the data is out of bounds. */
int coco_ann_polygons(const struct coco_index *idx, const struct coco_ann *a, struct coco_polygons *ret);
int coco_ann_rle(const struct coco_index *idx, const struct coco_ann *a, struct coco_rle *ret);

/* Decodes a compressed COCO RLE string (pycocotools' rleFrString) into
 * counts; returns the number of counts or -EINVAL.  *ret is malloc'ed. */
long coco_rle_from_string(const char *s, uint32_t **ret);
/* XXH3-64 of a file (mapped), for cache keys. */
int coco_file_hash(const char *path, uint64_t *ret_hash, uint64_t *ret_size, struct bd_err *err);

#endif

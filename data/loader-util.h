/* loader-util.h: what the data loaders (loader.c for SSD, det-loader.c for
 * Mask R-CNN) share besides their threads and ring (ring.h): the check that
 * the images exist, reading a file into a buffer kept between reads (an
 * image and its JPEG header), the order of an epoch, the error when no
 * image can be decoded, the batches' image memory (the
 * caller's allocator, pinned memory for a GPU, or aligned_alloc) and
 * warnings limited per kind.
 */
#ifndef BD_DATA_LOADER_UTIL_H
#define BD_DATA_LOADER_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coco-index.h"
#include "err.h"
#include "jpeg.h"

/* missing[i] = 1 for each image of x whose file under images_dir is
 * missing, not a regular file or empty (stat on `threads` threads). */
void loader_check_files(const struct coco_index *x, const char *images_dir, int threads, uint8_t *missing);

/* Reads a whole file (at most 1 GiB) into *buf, grown as needed (*cap bytes). */
int loader_read_file(const char *path, uint8_t **buf, size_t *cap, size_t *ret_len, struct bd_err *err);

/* A worker's image reading: its JPEG decoder (the loader makes it) and the
 * buffers kept from one image to the next. */
struct loader_reader {
        struct jpeg_decoder *dec;
        uint8_t *file;                  /* the last file read: len bytes */
        size_t file_cap, len;
        char *path;
        size_t path_cap;
};
/* Reads images_dir/name into rd->file and its JPEG header into info. */
int loader_read_jpeg(struct loader_reader *rd, const char *images_dir, const char *name, struct jpeg_info *info,
                     struct bd_err *err);
void loader_reader_release(struct loader_reader *rd);

/* The order of an epoch: p[0..n) = 0..n-1, shuffled (Fisher-Yates) from
 * (seed, epoch) when shuffle is set. */
void loader_permutation(uint32_t *p, size_t n, uint64_t seed, long epoch, bool shuffle);

/* -ENODATA, and the message of a loader that found no image of images_dir
 * it can decode (corrupt: the images found bad so far). */
int loader_no_image(struct bd_err *err, const char *images_dir, long corrupt);

/* n bytes from alloc(n, ctx), or 64-byte aligned memory when alloc is NULL
 * (aborts when there is none); loader_image_free() gives them back. */
void *loader_image_alloc(void *(*alloc)(size_t size, void *ctx), void *ctx, size_t n);
void loader_image_free(void *(*alloc)(size_t size, void *ctx), void (*dealloc)(void *p, void *ctx), void *ctx,
                       void *p);

/* Warnings of a few kinds, the first `max` of each passed on, the rest
 * counted and summed up by loader_warn_summary(). */
#define LOADER_WARN_KINDS 16
struct loader_warnings {
        void (*warn)(void *ctx, const char *msg);       /* NULL: dropped */
        void *ctx;
        int max;                        /* per kind, 0: 5 */
        const char *const *what;        /* per kind, for the summary ("corrupt images"), NULL after the last */
        int warned[LOADER_WARN_KINDS];
};
void loader_warn(struct loader_warnings *w, int kind, const char *fmt, ...) _printf_(3, 4);
void loader_vwarn(struct loader_warnings *w, int kind, const char *fmt, va_list ap) _printf_(3, 0);
/* "... N more <what> not shown" for each kind over its limit since the last summary. */
void loader_warn_summary(struct loader_warnings *w);

#endif

/* loader-util.h: what the data loaders (loader.c for SSD, det-loader.c for
 * Mask R-CNN) share: the check that the images exist, reading a file into
 * a buffer kept between reads, the batches' image memory (the caller's
 * allocator, pinned memory for a GPU, or aligned_alloc) and warnings
 * limited per kind.
 */
#ifndef BD_DATA_LOADER_UTIL_H
#define BD_DATA_LOADER_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "coco-index.h"
#include "err.h"

/* missing[i] = 1 for each image of x whose file under images_dir is
 * missing, not a regular file or empty (stat on `threads` threads). */
void loader_check_files(const struct coco_index *x, const char *images_dir, int threads, uint8_t *missing);

/* Reads a whole file (at most 1 GiB) into *buf, grown as needed (*cap bytes). */
int loader_read_file(const char *path, uint8_t **buf, size_t *cap, size_t *ret_len, struct bd_err *err);

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

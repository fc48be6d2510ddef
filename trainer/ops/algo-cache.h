/* algo-cache.h: measured convolution algorithms kept on disk, per GPU model
 * and library version.
 *
 * The CUDA backend measures cuDNN's algorithms once per convolution shape
 * (cuDNN's find, as cudnn.benchmark does) and keeps the fastest for the run.
 * With BD_CUDA_ALGO_CACHE=DIR it also reads what earlier runs on the same GPU
 * model and cuDNN measured, from DIR/FILE (bd_algo_cache_file()), and adds
 * its own measurements there when it ends, so that the next run's first
 * steps take the measured algorithms without timing them again.
 *
 * The file is text, written atomically (a rank that ends later merges what
 * the file holds by then with its own):
 *
 *     benchd-conv-algos 1
 *     device NVIDIA H200
 *     library 91002
 *     # key (a shape, its types and the math allowed)  forward  backward-data  backward-filter
 *     3f2a9c0d11e4b5a7 1 1 0
 *
 * Keys are 16 hex digits, the algorithms cuDNN's enumeration values (0 to
 * 63).  A file of another device or library holds nothing for this run (it
 * is written over); a malformed one is an error naming the file and line.
 * An entry is a hint, never trusted blindly: the backend checks that cuDNN
 * supports each algorithm for the shape within its workspace limit, and
 * falls back to its heuristics where not.
 */
#ifndef BD_ALGO_CACHE_H
#define BD_ALGO_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define BD_ALGO_CACHE_MAGIC "benchd-conv-algos 1"
#define BD_ALGO_MAX 63          /* the largest algorithm number a file may hold */

struct bd_algo_entry {
        uint64_t key;
        int fwd, bwd_data, bwd_filter;
};

struct bd_algo_cache {
        char device[128];       /* the GPU model's name */
        long library;           /* cuDNN's version number */
        struct bd_algo_entry *e;
        size_t n, cap;
        size_t added;           /* entries set since the load: what a save adds */
};

/* An empty cache for device and library. */
void bd_algo_cache_init(struct bd_algo_cache *c, const char *device, long library);
void bd_algo_cache_free(struct bd_algo_cache *c);

/* Parses a file's text (len bytes, name for errors) into c, whose device and
 * library are set: the entries of a file of the same device and library;
 * none from another's (*ret_other set true, when given).  -EINVAL with err
 * "NAME:LINE: why" for a malformed file (c keeps none of its entries). */
int bd_algo_cache_parse(struct bd_algo_cache *c, const char *text, size_t len, const char *name, bool *ret_other,
                        struct bd_err *err);

/* The file of c's device and library in dir, caller frees:
 * DIR/conv-algos-DEVICE-LIBRARY.txt, the device's name with each character
 * other than a letter, digit, '.' or '-' as '_'. */
char *bd_algo_cache_file(const struct bd_algo_cache *c, const char *dir);

/* Reads path into c (a missing file: nothing, 0); errors as parse's, or
 * -errno with err naming the file. */
int bd_algo_cache_load(struct bd_algo_cache *c, const char *path, struct bd_err *err);

/* The entry of key, or NULL. */
const struct bd_algo_entry *bd_algo_cache_get(const struct bd_algo_cache *c, uint64_t key);

/* Sets key's algorithms (replacing an entry of the same key); -EINVAL for an
 * algorithm out of 0..BD_ALGO_MAX. */
int bd_algo_cache_set(struct bd_algo_cache *c, uint64_t key, int fwd, int bwd_data, int bwd_filter);

/* c as the file's text, entries sorted by key; caller frees. */
char *bd_algo_cache_format(const struct bd_algo_cache *c);

/* Writes c's entries to path atomically, merged with what the file holds by
 * now for the same device and library (c's own entries win); creates the
 * directory.  0 without writing when c added nothing. */
int bd_algo_cache_save(const struct bd_algo_cache *c, const char *path, struct bd_err *err);

#endif

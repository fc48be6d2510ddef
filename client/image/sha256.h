/* sha256.h: SHA-256 (FIPS 180-4), streaming, for content digests
 * ("sha256:<64 hex>", as OCI images name their blobs).
 *
 *     struct sha256_ctx c;
 *     sha256_init(&c);
 *     sha256_update(&c, data, len);     any number of times, any lengths
 *     sha256_final(&c, digest);         c must be initialised again for reuse
 */
#ifndef BD_SHA256_H
#define BD_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define SHA256_DIGEST_SIZE 32
#define SHA256_HEX_SIZE 65 /* 64 hex digits and the NUL */

struct sha256_ctx {
        uint32_t h[8];
        uint64_t len;           /* bytes hashed so far */
        uint8_t block[64];      /* a partial block: len % 64 bytes of it */
};

void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
void sha256_final(struct sha256_ctx *c, uint8_t out[SHA256_DIGEST_SIZE]);
/* Lowercase hex, NUL-terminated. */
void sha256_hex(const uint8_t d[SHA256_DIGEST_SIZE], char out[SHA256_HEX_SIZE]);
/* The lowercase hex digest of len bytes at data. */
void sha256_hex_of(const void *data, size_t len, char out[SHA256_HEX_SIZE]);
/* The digest of a whole file, read in 1 MiB chunks, in hex; *ret_size (optional)
 * receives its length.  Errors name the file. */
int sha256_file(const char *path, char hex[SHA256_HEX_SIZE], uint64_t *ret_size, struct bd_err *err);

#endif

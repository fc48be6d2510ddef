/* sha1.h: SHA-1 (FIPS 180-4), streaming: the digest GluonCV's download
 * script and many dataset pages publish for their archives.  Not for
 * anything an adversary chooses: a published file's identity only.
 *
 *     struct sha1_ctx c;
 *     sha1_init(&c);
 *     sha1_update(&c, data, len);       any number of times, any lengths
 *     sha1_final(&c, digest);
 */
#ifndef BD_SHA1_H
#define BD_SHA1_H

#include <stddef.h>
#include <stdint.h>

#define SHA1_DIGEST_SIZE 20
#define SHA1_HEX_SIZE 41

struct sha1_ctx {
        uint32_t h[5];
        uint64_t len;
        uint8_t block[64];
};

void sha1_init(struct sha1_ctx *c);
void sha1_update(struct sha1_ctx *c, const void *data, size_t len);
void sha1_final(struct sha1_ctx *c, uint8_t out[SHA1_DIGEST_SIZE]);
/* Lowercase hex of n bytes, NUL-terminated (out holds 2n + 1). */
void digest_hex(const uint8_t *d, size_t n, char *out);

#endif

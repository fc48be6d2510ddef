/* digest.h: the digests a download is verified with (SHA-1, SHA-256),
 * computed by OpenSSL's libcrypto where it can be loaded (its assembly
 * uses the CPU's SHA extensions: several times the portable C) and by the
 * portable C of sha1.c and sha256.c otherwise.  libcrypto is loaded with
 * dlopen the first time (libcurl brings it on every Debian system; no
 * program links it).  BENCHD_DIGEST=builtin forces the portable code.
 *
 *     struct digest d;
 *     digest_init(&d, DIGEST_SHA256);
 *     digest_update(&d, data, len);     any number of times
 *     digest_final_hex(&d, hex);        hex: DIGEST_HEX_MAX bytes
 */
#ifndef BD_DIGEST_H
#define BD_DIGEST_H

#include <stddef.h>

#include "sha1.h"
#include "sha256.h"

enum digest_kind { DIGEST_SHA1, DIGEST_SHA256 };

#define DIGEST_HEX_MAX SHA256_HEX_SIZE

struct digest {
        enum digest_kind kind;
        void *evp;                      /* libcrypto's EVP_MD_CTX, or NULL */
        union {
                struct sha1_ctx sha1;
                struct sha256_ctx sha256;
        } c;
};

void digest_init(struct digest *d, enum digest_kind kind);
void digest_update(struct digest *d, const void *data, size_t len);
/* Lowercase hex; the context is released. */
void digest_final_hex(struct digest *d, char hex[DIGEST_HEX_MAX]);
/* Releases a context not finalised. */
void digest_release(struct digest *d);
const char *digest_name(enum digest_kind kind);       /* "SHA-1", "SHA-256" */
/* "libcrypto" or "built-in": what digest_init uses. */
const char *digest_backend(void);

#endif

/* test-digest.c: client/image/sha1.h against the FIPS 180-4 vectors, and
 * client/fetch/digest.h: libcrypto's SHA-1 and SHA-256 (where it loads) and
 * the built-in code give the same digests for the same bytes, however the
 * bytes are cut into updates. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "sha1.h"
#include "tap.h"

static void sha1_vectors(void)
{
        static const struct {
                const char *msg, *want;
        } v[] = {
                { "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
                { "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
                { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                  "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
        };
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                struct sha1_ctx c;
                uint8_t d[SHA1_DIGEST_SIZE];
                char hex[SHA1_HEX_SIZE];
                sha1_init(&c);
                sha1_update(&c, v[i].msg, strlen(v[i].msg));
                sha1_final(&c, d);
                digest_hex(d, sizeof(d), hex);
                is_str(hex, v[i].want, "SHA-1 of a FIPS vector");
        }
        /* a million 'a', fed in pieces of 997 bytes */
        struct sha1_ctx c;
        char piece[997];
        memset(piece, 'a', sizeof(piece));
        sha1_init(&c);
        for (size_t left = 1000000; left;) {
                size_t n = left < sizeof(piece) ? left : sizeof(piece);
                sha1_update(&c, piece, n);
                left -= n;
        }
        uint8_t d[SHA1_DIGEST_SIZE];
        char hex[SHA1_HEX_SIZE];
        sha1_final(&c, d);
        digest_hex(d, sizeof(d), hex);
        is_str(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f", "SHA-1 of a million 'a' in pieces");
}

/* the digest of n bytes fed in updates of step bytes */
static void digest_of(enum digest_kind k, const uint8_t *p, size_t n, size_t step, char hex[DIGEST_HEX_MAX])
{
        struct digest d;
        digest_init(&d, k);
        for (size_t o = 0; o < n; o += step)
                digest_update(&d, p + o, n - o < step ? n - o : step);
        digest_final_hex(&d, hex);
}

int main(void)
{
        sha1_vectors();
        size_t n = 3 << 20;
        uint8_t *buf = malloc(n);
        uint32_t x = 12345;
        for (size_t i = 0; i < n; i++) {
                x = x * 1103515245 + 12345;
                buf[i] = (uint8_t)(x >> 16);
        }
        const char *backend = digest_backend();
        ok(!strcmp(backend, "libcrypto") || !strcmp(backend, "built-in"), "a backend");
        for (int k = 0; k < 2; k++) {
                char a[DIGEST_HEX_MAX], b[DIGEST_HEX_MAX], want[DIGEST_HEX_MAX];
                digest_of((enum digest_kind)k, buf, n, n, a);
                digest_of((enum digest_kind)k, buf, n, 4093, b);
                is_str(b, a, "the same digest in uneven pieces");
                /* the portable code's */
                uint8_t d[SHA256_DIGEST_SIZE];
                if (k == DIGEST_SHA1) {
                        struct sha1_ctx c;
                        sha1_init(&c);
                        sha1_update(&c, buf, n);
                        sha1_final(&c, d);
                        digest_hex(d, SHA1_DIGEST_SIZE, want);
                } else {
                        struct sha256_ctx c;
                        sha256_init(&c);
                        sha256_update(&c, buf, n);
                        sha256_final(&c, d);
                        sha256_hex(d, want);
                }
                is_str(a, want, k == DIGEST_SHA1 ? "SHA-1: the backend agrees with the portable code"
                                                 : "SHA-256: the backend agrees with the portable code");
        }
        free(buf);
        return done_testing();
}

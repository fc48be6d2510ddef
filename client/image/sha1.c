/* sha1.c: SHA-1 as FIPS 180-4 gives it, in portable C. */
#include "config.h"

#include <string.h>

#include "md.h"
#include "sha1.h"

static inline uint32_t rol(uint32_t x, unsigned n)
{
        return (x << n) | (x >> (32 - n));
}


/* One 64-byte block into the state (FIPS 180-4, 6.1.2), the schedule kept
 * in a ring of 16 words. */
static void compress(uint32_t h[5], const uint8_t *p)
{
        uint32_t w[16];
        for (int t = 0; t < 16; t++)
                w[t] = md_load_be32(p + 4 * t);
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
#define SHA1_ROUND(t, f, k)                                                                             \
        do {                                                                                            \
                if ((t) >= 16)                                                                          \
                        w[(t) & 15] = rol(w[((t) - 3) & 15] ^ w[((t) - 8) & 15] ^ w[((t) - 14) & 15] ^ \
                                          w[(t) & 15], 1);                                              \
                uint32_t tmp = rol(a, 5) + (f) + e + (k) + w[(t) & 15];                                 \
                e = d;                                                                                  \
                d = c;                                                                                  \
                c = rol(b, 30);                                                                         \
                b = a;                                                                                  \
                a = tmp;                                                                                \
        } while (0)
        for (int t = 0; t < 20; t++)
                SHA1_ROUND(t, d ^ (b & (c ^ d)), 0x5a827999u);
        for (int t = 20; t < 40; t++)
                SHA1_ROUND(t, b ^ c ^ d, 0x6ed9eba1u);
        for (int t = 40; t < 60; t++)
                SHA1_ROUND(t, (b & c) | (d & (b | c)), 0x8f1bbcdcu);
        for (int t = 60; t < 80; t++)
                SHA1_ROUND(t, b ^ c ^ d, 0xca62c1d6u);
#undef SHA1_ROUND
        h[0] += a;
        h[1] += b;
        h[2] += c;
        h[3] += d;
        h[4] += e;
}

void sha1_init(struct sha1_ctx *c)
{
        static const uint32_t h0[5] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0 };
        memcpy(c->h, h0, sizeof(h0));
        c->len = 0;
}

void sha1_update(struct sha1_ctx *c, const void *data, size_t len)
{
        md_update(c->h, &c->len, c->block, compress, data, len);
}

void sha1_final(struct sha1_ctx *c, uint8_t out[SHA1_DIGEST_SIZE])
{
        md_pad(c->h, c->len, c->block, compress);
        for (int i = 0; i < 5; i++)
                md_store_be32(out + 4 * i, c->h[i]);
        memset(c, 0, sizeof(*c));
}

void digest_hex(const uint8_t *d, size_t n, char *out)
{
        static const char digits[] = "0123456789abcdef";
        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[d[i] >> 4];
                out[2 * i + 1] = digits[d[i] & 15];
        }
        out[2 * n] = '\0';
}

/* md.h: what SHA-1 and SHA-256 share (FIPS 180-4, 5.1.1 and 6): big-endian
 * words, the 64-byte blocks filled from updates of any length, and the
 * padding with the message's length in bits.  Each gives its compression
 * function; inlined, the call is direct. */
#ifndef BD_MD_H
#define BD_MD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t md_load_be32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void md_store_be32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t)(v >> 24);
        p[1] = (uint8_t)(v >> 16);
        p[2] = (uint8_t)(v >> 8);
        p[3] = (uint8_t)v;
}

/* len: the bytes hashed so far (len % 64 of them wait in block) */
static inline void md_update(uint32_t *h, uint64_t *len, uint8_t block[64], void (*compress)(uint32_t *, const uint8_t *),
                             const void *data, size_t n)
{
        const uint8_t *p = data;
        size_t used = *len % 64;
        *len += n;
        if (used) {
                size_t k = 64 - used < n ? 64 - used : n;
                memcpy(block + used, p, k);
                p += k;
                n -= k;
                if (used + k < 64)
                        return;
                compress(h, block);
        }
        for (; n >= 64; p += 64, n -= 64)
                compress(h, p);
        if (n)
                memcpy(block, p, n);
}

/* the padding: 0x80, zeros, the length in bits (big-endian, 64 bits) */
static inline void md_pad(uint32_t *h, uint64_t len, uint8_t block[64], void (*compress)(uint32_t *, const uint8_t *))
{
        uint64_t bits = len * 8;
        size_t used = len % 64;
        block[used++] = 0x80;
        if (used > 56) {
                memset(block + used, 0, 64 - used);
                compress(h, block);
                used = 0;
        }
        memset(block + used, 0, 56 - used);
        md_store_be32(block + 56, (uint32_t)(bits >> 32));
        md_store_be32(block + 60, (uint32_t)bits);
        compress(h, block);
}

#endif

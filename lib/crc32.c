/* crc32.c: CRC-32 (IEEE 802.3, zlib's and zip's), slicing by 8. */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "crc32.h"

static uint32_t crc_tab[8][256];

static void crc_init(void)
{
        for (uint32_t i = 0; i < 256; i++) {
                uint32_t c = i;
                for (int k = 0; k < 8; k++)
                        c = c & 1 ? 0xedb88320U ^ (c >> 1) : c >> 1;
                crc_tab[0][i] = c;
        }
        for (uint32_t i = 0; i < 256; i++)
                for (int t = 1; t < 8; t++)
                        crc_tab[t][i] = (crc_tab[t - 1][i] >> 8) ^ crc_tab[0][crc_tab[t - 1][i] & 0xff];
}

uint32_t bd_crc32(uint32_t crc, const void *buf, size_t len)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, crc_init);
        const unsigned char *p = buf;
        uint32_t c = ~crc;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* eight bytes at a time: the words as loaded are little-endian */
        while (len >= 8) {
                uint32_t lo, hi;
                memcpy(&lo, p, 4);
                memcpy(&hi, p + 4, 4);
                lo ^= c;
                c = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^ crc_tab[5][(lo >> 16) & 0xff] ^
                    crc_tab[4][lo >> 24] ^ crc_tab[3][hi & 0xff] ^ crc_tab[2][(hi >> 8) & 0xff] ^
                    crc_tab[1][(hi >> 16) & 0xff] ^ crc_tab[0][hi >> 24];
                p += 8;
                len -= 8;
        }
#endif
        while (len--)
                c = crc_tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
        return ~c;
}

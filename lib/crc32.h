/* crc32.h: CRC-32 (IEEE 802.3: zlib's, zip's, PNG's), continued from crc
 * (0 to start): bd_crc32(bd_crc32(0, a, n), b, m) is the CRC of a then b. */
#ifndef BD_CRC32_H
#define BD_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t bd_crc32(uint32_t crc, const void *buf, size_t len);

#endif

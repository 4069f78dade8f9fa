/* le: little-endian encoding of on-disk integers, byte by byte, so the file
 * formats (filters, journals) read the same on any host. Pure; any thread. */
#ifndef BLOOMGATE_LE_H
#define BLOOMGATE_LE_H

#include <stdint.h>
#include <string.h>

static inline void le_put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void le_put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t le_get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le_get64(const unsigned char *p)
{
    return le_get32(p) | (uint64_t)le_get32(p + 4) << 32;
}

static inline double le_getf64(const unsigned char *p)
{
    uint64_t v = le_get64(p);
    double d;
    memcpy(&d, &v, sizeof(d));
    return d;
}

#endif

/* fp: the fingerprint every exact table and delta keys an item by. XXH3-64
 * under a 192-byte secret derived from a 64-bit seed the table's header keeps,
 * so it owes nothing to the filter's XXH3-128 and seed (docs/design.md, "The
 * exact phase"). Pure; any thread. */
#ifndef BLOOMGATE_EXACT_FP_H
#define BLOOMGATE_EXACT_FP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define EXACT_SECRET_BYTES 192u

/* The secret a fingerprint is computed under, derived once per table. */
struct exact_fp_secret {
    uint64_t seed;
    unsigned char b[EXACT_SECRET_BYTES];
};

/* XXH3_generateSecret scrambles the custom seed (a domain string and the
 * seed) into 192 pseudo-random bytes, where XXH3's own seeding only adds the
 * seed to its default secret: this is what keeps the table's hash apart from
 * the filter's, which is XXH3 seeded on that default secret. */
static inline void exact_fp_init(struct exact_fp_secret *s, uint64_t seed)
{
    unsigned char custom[24];
    memcpy(custom, "bloomgate exact ", 16);
    for (int i = 0; i < 8; i++) /* little-endian, so every host derives the same secret */
        custom[16 + i] = (unsigned char)(seed >> (8 * i));
    s->seed = seed;
    (void)XXH3_generateSecret(s->b, sizeof(s->b), custom, sizeof(custom));
}

static inline uint64_t exact_fp(const struct exact_fp_secret *s, const void *key, size_t len)
{
    return XXH3_64bits_withSecret(key, len, s->b, sizeof(s->b));
}

#endif

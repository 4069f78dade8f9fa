/* hash: the one hash computed per item. Every probe position of every layout is
 * derived from these 128 bits, so an item is read exactly once per lookup.
 * Pure functions; any thread. */
#ifndef BLOOMGATE_HASH_H
#define BLOOMGATE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Inline XXH3 so short keys (the common case: URLs under 64 bytes) are hashed
 * without a call through the shared library's dispatch. */
#define XXH_INLINE_ALL
#include <xxhash.h>

struct hash128 {
    uint64_t lo; /* selects the block (blocked) or is h1 of double hashing (classic) */
    uint64_t hi; /* top bits select the shard; mixed, it drives the probe sequence */
};

static inline struct hash128 hash_item(const void *item, size_t len, uint64_t seed)
{
    XXH128_hash_t h = XXH3_128bits_withSeed(item, len, seed);
    struct hash128 r = {h.low64, h.high64};
    return r;
}

/* XXH3-64 of a buffer: the checksum of file headers and shard payloads. */
static inline uint64_t hash_checksum(const void *buf, size_t len)
{
    return XXH3_64bits(buf, len);
}

#endif

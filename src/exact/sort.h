/* sort: the builder's parallel sorts (build.c), over buffers it owns. A
 * caller's thread; the work is spread over `threads` threads (util_parallel_for). */
#ifndef BLOOMGATE_EXACT_SORT_H
#define BLOOMGATE_EXACT_SORT_H

#include <stddef.h>
#include <stdint.h>

/* A keys table's buffered entry: the fingerprint and where the key is in the
 * builder's arena (offset << 16 | length). */
struct exact_kent {
    uint64_t fp;
    uint64_t ref;
};

/* Sort a[0, n) ascending; scratch holds n words. The result is in a. */
void exact_sort_u64(uint64_t *a, uint64_t *scratch, size_t n, unsigned threads);
/* Sort a[0, n) by fingerprint, then key bytes (in arena); scratch holds n
 * entries. The result is in a. */
void exact_sort_kent(struct exact_kent *a, struct exact_kent *scratch, size_t n,
                     const unsigned char *arena, unsigned threads);

#endif

/* allow: a filter version's exact exceptions and removals. A hash set of the
 * items' 128-bit hashes under the filter's own seed (the hash every check has
 * computed already), each with two flags: ALLOW_EXCEPT (an allow-list entry:
 * a YES it decides is answered NO) and ALLOW_REMOVED (the filter behaves as
 * if it did not hold the item). Readers (worker threads) never lock and never
 * write; writers serialise on the set's mutex. Tables outgrown by a writer are
 * kept until allow_take_retired hands them to the reload thread, which frees
 * them after a grace period of the registry. */
#ifndef BLOOMGATE_ALLOW_H
#define BLOOMGATE_ALLOW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloom/hash.h"

#define ALLOW_EXCEPT 1u  /* an exception (ALLOW, the `allow` file) */
#define ALLOW_REMOVED 2u /* removed (REMOVE), until an ADD of it or a rebuild */

/* One slot: lo holds the hash's low word with its 3 low bits replaced by
 * an occupied bit and the two flags (0 = empty, never reused for another
 * hash); hi the high word. So an entry is 125 bits of the hash: two items
 * share an entry with odds of 2^-125 per pair. */
struct allow_slot {
    _Atomic uint64_t lo;
    _Atomic uint64_t hi;
};

struct allow_table {
    struct allow_table *next_retired; /* writer: the list of outgrown tables */
    size_t mask;                      /* slots - 1; a power of two minus one */
    struct allow_slot slots[];
};

struct allow_set {
    _Atomic(struct allow_table *) t; /* the table readers probe */
    _Atomic uint64_t n_live;         /* entries with a flag: 0 lets a check skip the set */
    _Atomic uint64_t n_except;       /* entries flagged ALLOW_EXCEPT */
    _Atomic uint64_t n_removed;      /* entries flagged ALLOW_REMOVED */
    size_t used;                     /* slots not empty (live or cleared); under mu */
    struct allow_table *retired;     /* outgrown tables not yet freed; under mu */
    pthread_mutex_t mu;              /* orders writers */
};

/* An empty set; NULL when out of memory. Any thread. */
struct allow_set *allow_new(void);
/* Frees the set and every table it ever had; no reader may still use it. */
void allow_free(struct allow_set *s);

/* Whether any entry has a flag: what a check asks before it hashes or probes
 * anything (a relaxed load). Any thread. */
static inline bool allow_any(const struct allow_set *s)
{
    return s && atomic_load_explicit(&s->n_live, memory_order_relaxed) != 0;
}

/* The flags of h (0 if none). Lock-free; any thread, concurrently with writers. */
unsigned allow_get(const struct allow_set *s, struct hash128 h);

/* Set the flags `set` and clear the flags `clear` of h; *old (may be NULL)
 * gets the flags it had. An entry with no flag left stays as a cleared slot
 * (readers may be probing past it). Nothing is inserted when h has no entry
 * and `set` is 0. 0, or -1 when out of memory (nothing changed). Any thread;
 * writers are serialised by the set's mutex. */
int allow_update(struct allow_set *s, struct hash128 h, unsigned set, unsigned clear,
                 unsigned *old);

/* Entries with flag (ALLOW_EXCEPT or ALLOW_REMOVED), and the bytes of the
 * current table. Any thread. */
uint64_t allow_count(const struct allow_set *s, unsigned flag);
size_t allow_bytes(const struct allow_set *s);

/* Detach the outgrown tables (NULL if none): the caller frees them with
 * allow_free_tables once no reader can still hold one (a grace period).
 * The reload thread. */
struct allow_table *allow_take_retired(struct allow_set *s);
void allow_free_tables(struct allow_table *t);

#endif

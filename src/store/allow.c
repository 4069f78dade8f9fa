/* The allow set, see allow.h. Open addressing with linear probing over
 * 16-byte slots. A slot, once taken, keeps its hash for the table's life, so
 * a reader that loads a slot's lo word (acquire) and finds the hash it wants
 * reads the hi word the writer stored before it (release): no reader ever
 * sees half an entry. Only the flags of a taken slot change, in one store.
 * Growth copies the live entries to a new table and publishes it with one
 * release store; a reader still in the old table sees the set as it was just
 * before, which is what a lookup racing the write may see anyway. */
#include "config.h"

#include "store/allow.h"

#include <stdlib.h>

#define MIN_SLOTS 64u
#define OCCUPIED 1u
#define FP_MASK (~(uint64_t)7)

static inline uint64_t slot_word(struct hash128 h, unsigned flags)
{
    return (h.lo & FP_MASK) | OCCUPIED | ((uint64_t)flags << 1);
}

/* The first slot to probe: the high word (the filter draws its shard from
 * the top bits of hi and its probe positions from a mix of both words; any
 * bits of a good 128-bit hash do here), spread by a multiply. */
static inline size_t slot_of(struct hash128 h, size_t mask)
{
    return (size_t)((h.hi * 0x9E3779B97F4A7C15ull) >> 20) & mask;
}

static struct allow_table *table_new(size_t slots)
{
    struct allow_table *t = calloc(1, sizeof(*t) + slots * sizeof(struct allow_slot));
    if (t)
        t->mask = slots - 1;
    return t;
}

struct allow_set *allow_new(void)
{
    struct allow_set *s = calloc(1, sizeof(*s));
    struct allow_table *t = s ? table_new(MIN_SLOTS) : NULL;
    if (!t) {
        free(s);
        return NULL;
    }
    atomic_init(&s->t, t);
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

void allow_free_tables(struct allow_table *t)
{
    while (t) {
        struct allow_table *next = t->next_retired;
        free(t);
        t = next;
    }
}

void allow_free(struct allow_set *s)
{
    if (!s)
        return;
    allow_free_tables(s->retired);
    free(atomic_load(&s->t));
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* The slot holding h, or the empty slot that ends its probe sequence. A
 * table is never full (growth keeps it at most 3/4 used), so this ends. */
static struct allow_slot *find(const struct allow_table *t, struct hash128 h, uint64_t *word)
{
    uint64_t want = h.lo & FP_MASK;
    for (size_t i = slot_of(h, t->mask);; i = (i + 1) & t->mask) {
        struct allow_slot *sl = (struct allow_slot *)&t->slots[i];
        uint64_t w = atomic_load_explicit(&sl->lo, memory_order_acquire);
        if (w == 0 ||
            ((w & FP_MASK) == want && atomic_load_explicit(&sl->hi, memory_order_relaxed) == h.hi)) {
            *word = w;
            return sl;
        }
    }
}

unsigned allow_get(const struct allow_set *s, struct hash128 h)
{
    const struct allow_table *t = atomic_load_explicit(&s->t, memory_order_acquire);
    uint64_t w;
    find(t, h, &w);
    return w ? (unsigned)(w >> 1) & 3u : 0;
}

/* Copy the live entries into a table sized for them (at most 1/4 full), publish
 * it, and keep the old one for the reload thread to free. Under mu. */
static int grow(struct allow_set *s)
{
    struct allow_table *old = atomic_load_explicit(&s->t, memory_order_relaxed);
    uint64_t live = atomic_load_explicit(&s->n_live, memory_order_relaxed) + 1;
    size_t slots = MIN_SLOTS;
    while (slots < 4 * live)
        slots *= 2;
    struct allow_table *t = table_new(slots);
    if (!t)
        return -1;
    size_t used = 0;
    for (size_t i = 0; i <= old->mask; i++) {
        uint64_t w = atomic_load_explicit(&old->slots[i].lo, memory_order_relaxed);
        if (!((w >> 1) & 3u))
            continue; /* empty, or cleared: dropped here */
        struct hash128 h = {w, atomic_load_explicit(&old->slots[i].hi, memory_order_relaxed)};
        uint64_t dummy;
        struct allow_slot *sl = find(t, h, &dummy);
        atomic_store_explicit(&sl->hi, h.hi, memory_order_relaxed);
        atomic_store_explicit(&sl->lo, w, memory_order_relaxed);
        used++;
    }
    atomic_store_explicit(&s->t, t, memory_order_release);
    old->next_retired = s->retired;
    s->retired = old;
    s->used = used;
    return 0;
}

static void count_flags(struct allow_set *s, unsigned before, unsigned after)
{
    if ((before != 0) != (after != 0))
        atomic_fetch_add_explicit(&s->n_live, after ? 1 : (uint64_t)-1, memory_order_relaxed);
    for (unsigned f = ALLOW_EXCEPT; f <= ALLOW_REMOVED; f <<= 1)
        if ((before & f) != (after & f))
            atomic_fetch_add_explicit(f == ALLOW_EXCEPT ? &s->n_except : &s->n_removed,
                                      (after & f) ? 1 : (uint64_t)-1, memory_order_relaxed);
}

int allow_update(struct allow_set *s, struct hash128 h, unsigned set, unsigned clear,
                 unsigned *old)
{
    pthread_mutex_lock(&s->mu);
    struct allow_table *t = atomic_load_explicit(&s->t, memory_order_relaxed);
    uint64_t w;
    struct allow_slot *sl = find(t, h, &w);
    unsigned before = w ? (unsigned)(w >> 1) & 3u : 0;
    unsigned after = (before | set) & ~clear & 3u;
    int rc = 0;
    if (old)
        *old = before;
    if (w) {
        if (after != before)
            atomic_store_explicit(&sl->lo, slot_word(h, after), memory_order_release);
    } else if (after) {
        if ((s->used + 1) * 4 > (t->mask + 1) * 3) {
            if (grow(s) != 0) {
                rc = -1;
                goto out;
            }
            t = atomic_load_explicit(&s->t, memory_order_relaxed);
            sl = find(t, h, &w);
        }
        atomic_store_explicit(&sl->hi, h.hi, memory_order_relaxed);
        atomic_store_explicit(&sl->lo, slot_word(h, after), memory_order_release);
        s->used++;
    }
    count_flags(s, before, after);
out:
    pthread_mutex_unlock(&s->mu);
    return rc;
}

uint64_t allow_count(const struct allow_set *s, unsigned flag)
{
    return atomic_load_explicit(flag == ALLOW_EXCEPT ? &s->n_except : &s->n_removed,
                                memory_order_relaxed);
}

size_t allow_bytes(const struct allow_set *s)
{
    const struct allow_table *t = atomic_load_explicit(&s->t, memory_order_acquire);
    return sizeof(*t) + (t->mask + 1) * sizeof(struct allow_slot);
}

struct allow_table *allow_take_retired(struct allow_set *s)
{
    pthread_mutex_lock(&s->mu);
    struct allow_table *t = s->retired;
    s->retired = NULL;
    pthread_mutex_unlock(&s->mu);
    return t;
}

/* The offline builder. Worker threads take turns at a shared reader (under a
 * mutex, one large read() each), then scan, hash and insert their chunk with no
 * lock: bits are set with atomic OR (each block prefetched 16 items ahead,
 * ahead_put) and tallies are kept per thread. Lists of
 * host or url keys are parsed line by line (url/lists) on the same threads;
 * the choice is made once per chunk, so plain exact items pay nothing for it. */
#include "config.h"

#include "tool/build.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bloom/format.h"
#include "store/journal.h"
#include "tool/build_fuse.h"
#include "tool/build_exact.h"
#include "tool/build_input.h"
#include "tool/build_journal.h"
#include "base/util.h"

static const char *const form_names[BUILD_FORMS] = {"host", "ip", "url"};

const char *build_form_name(enum build_form f)
{
    return (unsigned)f < BUILD_FORMS ? form_names[f] : "?";
}

/* A canonical host is an IP address when it is IPv6 (a ':', or brackets in a
 * url key) or four dotted decimal parts (a name never is: it would have been
 * read as an IPv4 address). */
static bool host_is_ip(const char *h, size_t n)
{
    if (n > 0 && (h[0] == '[' || memchr(h, ':', n)))
        return true;
    unsigned dots = 0;
    for (size_t i = 0; i < n; i++) {
        if (h[i] == '.')
            dots++;
        else if (h[i] < '0' || h[i] > '9')
            return false;
    }
    return n > 0 && dots == 3;
}

enum build_form build_key_form(enum filter_keys keys, const char *key, size_t len)
{
    size_t hl = len;
    if (keys == FILTER_KEYS_URL) {
        const char *slash = memchr(key, '/', len);
        hl = slash ? (size_t)(slash - key) : len;
        if (len > hl + 1)
            return BUILD_FORM_PATH;
    }
    return host_is_ip(key, hl) ? BUILD_FORM_IP : BUILD_FORM_HOST;
}

struct builder {
    struct reader rd;
    struct filter *f;
    bool parse; /* lines go through url/lists (not plain + exact) */
    enum lists_format format;
    enum url_kind kind;
    FILE *rejects; /* under rej_mu; NULL when not asked for */
    pthread_mutex_t rej_mu;
    bool rej_failed; /* a write to rejects failed (under rej_mu) */
    _Atomic uint64_t lines;
    _Atomic uint64_t bytes;
    _Atomic int done;
    /* --journal: each item's last word in the journals (build_journal.h); a
     * list item removed there stays out. NULL without journals. */
    struct allow_set *jstate;
    _Atomic uint64_t removed_lines; /* list items kept out by a removal */
    struct exact_builder *xb;       /* --exact: the table built from the same keys; NULL without */
};

/* Whether a removal in the journals keeps the item of hash h out. */
static inline bool kept_out(struct builder *b, struct hash128 h)
{
    if (!b->jstate || !(allow_get(b->jstate, h) & ALLOW_REMOVED))
        return false;
    atomic_fetch_add_explicit(&b->removed_lines, 1, memory_order_relaxed);
    return true;
}

/* Hashes waiting for their insert (see ahead_put). 16 keeps that many cache
 * misses in flight, about what one core's fill buffers take. */
#define BUILD_AHEAD 16

struct worker {
    struct builder *b;
    pthread_t tid;
    uint64_t *new_per_shard; /* items that set a new bit, per shard */
    struct hash128 ahead[BUILD_AHEAD];
    uint8_t ahead_form[BUILD_AHEAD];
    unsigned n_ahead;    /* hashes held (0 to BUILD_AHEAD) */
    unsigned next_ahead; /* the slot the next hash goes to */
    uint64_t lines;
    struct build_tally t;  /* parse mode: this thread's counts */
    struct lists_line *ll; /* parse mode: the parser's scratch (about 26 KiB) */
    char *rej;             /* parse mode: this chunk's rejects file lines */
    size_t rej_len, rej_cap;
    struct build_xacc *xacc; /* --exact: keys waiting for the table's builder */
};

/* --exact: the key goes to the table too (whatever the filter's bits say:
 * a key whose bits were all set already is a listed key all the same). A
 * failure fails the build through the reader, as a bad line does. */
static inline void exact_put(struct worker *w, const void *key, size_t len)
{
    char why[512];
    if (w->b->xb && build_exact_put(w->xacc, w->b->xb, key, len, why, sizeof(why)) != 0) {
        pthread_mutex_lock(&w->b->rd.mu);
        build_reader_fail(&w->b->rd, "the exact table: %s", why);
        pthread_mutex_unlock(&w->b->rd.mu);
    }
}

/* Shared with the words build (tool/build_words.c), so every format's
 * rejects file has one shape. The why is one field: a tab or line end in it
 * (a words reason quotes the line) becomes a space. */
bool build_reject_append(char **buf, size_t *len, size_t *cap, const char *input, uint64_t offset,
                         const char *reason, const char *why, const char *line, size_t n)
{
    char clean[256], head[512];
    size_t k = 0;
    for (; why[k] && k < sizeof(clean) - 1; k++)
        clean[k] = why[k] == '\t' || why[k] == '\n' || why[k] == '\r' ? ' ' : why[k];
    clean[k] = '\0';
    int hn = snprintf(head, sizeof(head), "%s:%llu\t%s\t%s\t", input, (unsigned long long)offset,
                      reason, clean);
    if (hn < 0)
        return false;
    size_t h = (size_t)hn < sizeof(head) ? (size_t)hn : sizeof(head) - 1;
    size_t need = *len + h + n + 1;
    if (need > *cap) {
        size_t c = need * 2;
        char *nb = realloc(*buf, c);
        if (!nb)
            return false;
        *buf = nb;
        *cap = c;
    }
    memcpy(*buf + *len, head, h);
    memcpy(*buf + *len + h, line, n);
    *len += h + n;
    (*buf)[(*len)++] = '\n';
    return true;
}

/* Append one rejects-file line for a rejected list line. False when out of
 * memory. Worker threads (the buffer is the worker's). */
static bool rej_append(struct worker *w, const struct chunk_origin *o, uint64_t off,
                       const struct lists_line *ll, const char *line, size_t len)
{
    return build_reject_append(&w->rej, &w->rej_len, &w->rej_cap, o->name, o->offset + off,
                               lists_reason_name(ll->reason), ll->why, line, len);
}

/* Sets the bits of h now and counts it as new where it was. */
static inline void insert_now(struct worker *w, struct hash128 h, uint8_t form)
{
    uint32_t shard;
    if (filter_add_hash_raw(w->b->f, h, &shard)) {
        w->new_per_shard[shard]++;
        w->t.fresh[form]++;
    }
}

/* Inserts h BUILD_AHEAD items later, its first cache line prefetched now: a
 * filter far larger than the cache costs one miss per item, and inserted at
 * once each miss stalls the thread (at 1e9 items that was the build's main
 * cost); held back, the misses of the next items overlap. Composite filters
 * (a fuse build's collector) take their hashes at once. Worker threads. */
static inline void ahead_put(struct worker *w, struct hash128 h, uint8_t form)
{
    const struct filter *f = w->b->f;
    if (f->comp || f->layout == FILTER_FUSE) {
        insert_now(w, h, form);
        return;
    }
    unsigned slot = w->next_ahead;
    if (w->n_ahead == BUILD_AHEAD)
        insert_now(w, w->ahead[slot], w->ahead_form[slot]);
    else
        w->n_ahead++;
    __builtin_prefetch(filter_first_line(f, h), 1, 0);
    w->ahead[slot] = h;
    w->ahead_form[slot] = form;
    w->next_ahead = (slot + 1) % BUILD_AHEAD;
}

/* Inserts every hash still held, oldest first. Worker threads. */
static void ahead_flush(struct worker *w)
{
    unsigned first = (w->next_ahead + BUILD_AHEAD - w->n_ahead) % BUILD_AHEAD;
    for (unsigned i = 0; i < w->n_ahead; i++) {
        unsigned slot = (first + i) % BUILD_AHEAD;
        insert_now(w, w->ahead[slot], w->ahead_form[slot]);
    }
    w->n_ahead = 0;
    w->next_ahead = 0;
}

/* Parse mode: every line of the chunk through url/lists, each key it yields
 * hashed and inserted, every outcome counted. Returns the lines seen. */
static uint64_t parse_chunk(struct worker *w, const char *buf, size_t n, bool last,
                            const struct chunk_origin *origin)
{
    struct builder *b = w->b;
    struct filter *f = b->f;
    struct lists_line *ll = w->ll;
    size_t pos = 0;
    uint64_t lines = 0;
    struct filter_key line;
    bool rej_ok = true;
    while (build_next_line(buf, n, last, &pos, &line)) {
        lines++;
        enum lists_class cls = lists_parse_line(b->format, b->kind, line.data, line.len, ll);
        w->t.cls[cls]++;
        w->t.ignored_names += ll->ignored_names;
        w->t.ignored_opts += ll->ignored_opts;
        if (cls == LISTS_REJECTED) {
            w->t.rejected[ll->reason]++;
            if (b->rejects && rej_ok)
                rej_ok = rej_append(w, origin, (uint64_t)((const char *)line.data - buf), ll,
                                    line.data, line.len);
            continue;
        }
        for (size_t i = 0; i < ll->n; i++) {
            enum build_form form = build_key_form(f->keys, ll->e[i].ptr, ll->e[i].len);
            w->t.kept[form]++;
            struct hash128 h = filter_hash(f, ll->e[i].ptr, ll->e[i].len);
            if (kept_out(b, h))
                continue;
            ahead_put(w, h, (uint8_t)form);
            exact_put(w, ll->e[i].ptr, ll->e[i].len);
        }
    }
    if (b->rejects && (w->rej_len || !rej_ok)) {
        pthread_mutex_lock(&b->rej_mu);
        if (!rej_ok || fwrite(w->rej, 1, w->rej_len, b->rejects) != w->rej_len)
            b->rej_failed = true;
        pthread_mutex_unlock(&b->rej_mu);
        w->rej_len = 0;
    }
    w->t.lines += lines;
    return lines;
}

/* Worker thread: alternate between taking a chunk (under the reader lock) and
 * inserting its items (no lock). */
static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct builder *b = w->b;
    struct filter *f = b->f;
    char *buf = NULL;
    size_t cap = 0;
    for (;;) {
        bool last;
        struct chunk_origin origin;
        pthread_mutex_lock(&b->rd.mu);
        ssize_t n = build_reader_next(&b->rd, &buf, &cap, &last, &origin);
        pthread_mutex_unlock(&b->rd.mu);
        if (n <= 0)
            break;
        if (b->parse) {
            uint64_t lines = parse_chunk(w, buf, (size_t)n, last, &origin);
            atomic_fetch_add_explicit(&b->lines, lines, memory_order_relaxed);
            atomic_fetch_add_explicit(&b->bytes, (uint64_t)n, memory_order_relaxed);
            continue;
        }
        size_t pos = 0;
        uint64_t lines = 0;
        struct filter_key it;
        while (build_next_item(buf, (size_t)n, last, &pos, &it)) {
            if (it.len > BUILD_MAX_LINE) {
                pthread_mutex_lock(&b->rd.mu);
                build_reader_fail(
                    &b->rd, "%s: the line at byte %llu is longer than 1 MiB", origin.name,
                    (unsigned long long)(origin.offset + (uint64_t)((const char *)it.data - buf)));
                pthread_mutex_unlock(&b->rd.mu);
                break;
            }
            struct hash128 h = filter_hash(f, it.data, it.len);
            lines++;
            if (kept_out(b, h))
                continue;
            ahead_put(w, h, 0);
            exact_put(w, it.data, it.len);
        }
        w->lines += lines;
        atomic_fetch_add_explicit(&b->lines, lines, memory_order_relaxed);
        atomic_fetch_add_explicit(&b->bytes, (uint64_t)n, memory_order_relaxed);
    }
    ahead_flush(w);
    char why[512];
    if (b->xb && build_exact_flush(w->xacc, b->xb, why, sizeof(why)) != 0) {
        pthread_mutex_lock(&b->rd.mu);
        build_reader_fail(&b->rd, "the exact table: %s", why);
        pthread_mutex_unlock(&b->rd.mu);
    }
    free(buf);
    return NULL;
}

static void print_progress(const struct builder *b, uint64_t total_bytes, double t0, bool final)
{
    uint64_t lines = atomic_load(&b->lines), bytes = atomic_load(&b->bytes);
    double dt = util_now() - t0, rate = dt > 0 ? (double)lines / dt / 1e6 : 0.0;
    char pct[32] = "";
    if (total_bytes)
        snprintf(pct, sizeof(pct), " %.0f%%,", 100.0 * (double)bytes / (double)total_bytes);
    fprintf(stderr, "\rbuilding: %llu items,%s %.1f M items/s   ", (unsigned long long)lines, pct,
            rate);
    if (final)
        fputc('\n', stderr);
}

/* Check every journal before anything is built: a corrupt one fails the
 * build, and their items count toward the size. Then refuse what parse mode
 * cannot take. Calling thread. */
static int check_journals_and_keys(const struct build_opts *o, bool parse, uint64_t *journal_items,
                                   char *err, size_t errlen)
{
    for (size_t i = 0; i < o->n_journals; i++) {
        int64_t n = journal_read_file(o->journals[i], NULL, NULL, NULL, err, errlen);
        if (n < 0)
            return -1;
        *journal_items += (uint64_t)n;
    }
    if (parse && o->keys == FILTER_KEYS_EXACT) {
        snprintf(err, errlen, "a %s list yields host or url keys, not exact items",
                 o->format == LISTS_HOSTS     ? "hosts"
                 : o->format == LISTS_ADBLOCK ? "adblock"
                                              : "urls");
        return -1;
    }
    if (parse && o->n_journals) {
        snprintf(err, errlen, "journals hold exact items: they cannot go into a %s filter",
                 format_keys_name(o->keys));
        return -1;
    }
    return 0;
}

/* The filter's plan and seed: the capacity asked for, or counted in a first
 * pass over the inputs (plus the journals' items), then a random seed unless
 * one was given. Calling thread. */
static int plan_filter(const struct build_opts *o, struct input *in, size_t n_in, bool parse,
                       enum url_kind kind, uint64_t journal_items, struct build_result *res,
                       char *err, size_t errlen)
{
    uint64_t capacity = o->capacity;
    if (capacity == 0) {
        double tc = util_now();
        struct lists_line *cl = NULL;
        if (parse && !(cl = malloc(sizeof(*cl)))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < n_in; i++)
            if (build_count_items(&in[i], cl, o->format, kind, &capacity, err, errlen) != 0) {
                free(cl);
                return -1;
            }
        free(cl);
        capacity += journal_items;
        res->count_seconds = util_now() - tc;
        if (capacity == 0)
            capacity = 1; /* an empty list still makes a valid (empty) filter */
    }
    if (filter_plan_make(o->layout, capacity, o->fpr, o->shards, &res->plan, err, errlen) != 0)
        return -1;
    uint64_t seed = o->seed;
    while (seed == 0) { /* 0 asks for a random seed */
        char why[256];
        if (util_random_u64(&seed, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "a seed for the filter: %s", why);
            return -1;
        }
    }
    res->seed = seed;
    return 0;
}

/* Frees a builder on success or failure alike (the rejects file is still
 * open only on failure). Calling thread, with the workers joined. */
static void builder_free(struct builder *b)
{
    if (b->rejects)
        fclose(b->rejects);
    filter_free(b->f);
    allow_free(b->jstate);
    exact_builder_free(b->xb);
    free(b->rd.carry);
    pthread_mutex_destroy(&b->rd.mu);
    pthread_mutex_destroy(&b->rej_mu);
    free(b);
}

/* The state the workers share: the empty filter, how to read lines, the
 * rejects file and the reader over the inputs. NULL with err set on failure.
 * Calling thread, before any worker. */
static struct builder *builder_create(const struct build_opts *o, const struct build_result *res,
                                      bool parse, enum url_kind kind, struct input *in, size_t n_in,
                                      char *err, size_t errlen)
{
    struct builder *b = calloc(1, sizeof(*b));
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (!(b->f = build_fuse_filter_create(&res->plan, res->seed, o->output, err, errlen))) {
        free(b);
        return NULL;
    }
    b->f->keys = o->keys;
    b->parse = parse;
    b->format = o->format;
    b->kind = kind;
    pthread_mutex_init(&b->rej_mu, NULL);
    pthread_mutex_init(&b->rd.mu, NULL);
    if (o->rejects && !(b->rejects = fopen(o->rejects, "we"))) {
        snprintf(err, errlen, "%s: cannot write the rejects file: %s", o->rejects, strerror(errno));
        builder_free(b);
        return NULL;
    }
    b->rd.inputs = in;
    b->rd.n_inputs = n_in;
    return b;
}

/* Adds one worker's tally into the run's. */
static void tally_add(struct build_tally *a, const struct build_tally *wt)
{
    a->lines += wt->lines;
    for (size_t i = 0; i <= LISTS_REJECTED; i++)
        a->cls[i] += wt->cls[i];
    for (size_t i = 0; i < LISTS_REASON_COUNT; i++)
        a->rejected[i] += wt->rejected[i];
    for (size_t i = 0; i < BUILD_FORMS; i++) {
        a->kept[i] += wt->kept[i];
        a->fresh[i] += wt->fresh[i];
    }
    a->ignored_names += wt->ignored_names;
    a->ignored_opts += wt->ignored_opts;
}

/* Runs up to nt insert threads over the inputs (as many as start), prints
 * progress from the calling thread meanwhile, then joins them and sums their
 * counts into res and the filter's shards. -1 if no thread started. */
static int run_workers(const struct build_opts *o, struct builder *b, unsigned nt,
                       uint64_t total_bytes, double ti, struct build_result *res, char *err,
                       size_t errlen)
{
    struct worker *ws = calloc(nt, sizeof(*ws));
    unsigned started = 0;
    for (unsigned t = 0; ws && t < nt; t++) {
        ws[t].b = b;
        ws[t].new_per_shard = calloc(res->plan.shard_count, sizeof(uint64_t));
        if (b->parse)
            ws[t].ll = malloc(sizeof(*ws[t].ll));
        if (b->xb)
            ws[t].xacc = calloc(1, sizeof(*ws[t].xacc));
        if (!ws[t].new_per_shard || (b->parse && !ws[t].ll) || (b->xb && !ws[t].xacc) ||
            pthread_create(&ws[t].tid, NULL, worker_main, &ws[t]) != 0) {
            free(ws[t].new_per_shard);
            free(ws[t].ll);
            free(ws[t].xacc);
            break;
        }
        started++;
    }
    if (started == 0) {
        snprintf(err, errlen, "cannot start build threads");
        free(ws);
        return -1;
    }
    if (o->progress) {
        /* Poll the workers' counters: nothing on the insert path waits for us. */
        for (;;) {
            struct timespec ts = {0, 250 * 1000 * 1000};
            nanosleep(&ts, NULL);
            pthread_mutex_lock(&b->rd.mu);
            bool over = b->rd.cur >= b->rd.n_inputs || b->rd.failed;
            pthread_mutex_unlock(&b->rd.mu);
            print_progress(b, total_bytes, ti, false);
            if (over)
                break;
        }
    }
    for (unsigned t = 0; t < started; t++) {
        pthread_join(ws[t].tid, NULL);
        res->lines += ws[t].lines;
        for (uint32_t s = 0; s < res->plan.shard_count; s++)
            atomic_fetch_add(&b->f->shards[s].items, ws[t].new_per_shard[s]);
        free(ws[t].new_per_shard);
        tally_add(&res->tally, &ws[t].t);
        free(ws[t].ll);
        free(ws[t].rej);
        if (ws[t].xacc)
            build_exact_acc_free(ws[t].xacc);
        free(ws[t].xacc);
    }
    free(ws);
    return 0;
}

/* After the workers: a read error fails the build, as does a rejects file
 * that did not reach the disk; then the journals go in and the file is
 * written. Calling thread. */
static int finish_filter(const struct build_opts *o, struct builder *b, unsigned nt, double ti,
                         struct build_result *res, char *err, size_t errlen)
{
    if (b->rd.failed) {
        snprintf(err, errlen, "%s", b->rd.err);
        return -1;
    }
    if (b->rejects) {
        int rc = fclose(b->rejects);
        b->rejects = NULL;
        if (rc != 0 || b->rej_failed) {
            snprintf(err, errlen, "%s: writing the rejects file failed: %s", o->rejects,
                     b->rej_failed ? "out of memory or a short write" : strerror(errno));
            return -1;
        }
    }
    if ((b->jstate &&
         build_journal_fold(o, b->f, b->jstate, b->xb, &res->journal_items, err, errlen)) ||
        build_fuse_finish(&b->f, nt, err, errlen) != 0) /* fuse: built from the hashes */
        return -1;
    if (b->jstate) {
        res->journal_removed = allow_count(b->jstate, ALLOW_REMOVED);
        res->journal_exceptions = allow_count(b->jstate, ALLOW_EXCEPT);
        res->removed_lines = atomic_load(&b->removed_lines);
    }
    res->insert_seconds = util_now() - ti;
    res->items = filter_items(b->f);
    double tw = util_now();
    if (b->xb ? build_exact_commit(o, b->xb, b->f, nt, res, err, errlen) != 0
              : format_write(b->f, o->output, nt, err, errlen) != 0)
        return -1;
    res->write_seconds = util_now() - tw;
    return 0;
}

/* A build, in order: open the inputs, check the journals, plan (counting
 * the items first if no capacity was given), create the filter, insert on
 * worker threads, fold in the journals, write. Calling thread (the tool's
 * main thread); the workers are joined before it returns. */
int build_run(const struct build_opts *o, struct build_result *res, char *err, size_t errlen)
{
    static const char *const stdin_only[] = {"-"};
    const char *const *names = o->n_inputs ? o->inputs : stdin_only;
    size_t n_in = o->n_inputs ? o->n_inputs : o->n_journals ? 0 : 1;
    double t0 = util_now();
    memset(res, 0, sizeof(*res));

    struct input *in = calloc(n_in ? n_in : 1, sizeof(*in));
    if (!in) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n_in; i++)
        in[i].fd = -1;
    uint64_t total_bytes = 0, journal_items = 0;
    bool parse = !(o->format == LISTS_PLAIN && o->keys == FILTER_KEYS_EXACT);
    enum url_kind kind = o->keys == FILTER_KEYS_HOST ? URL_KIND_HOST : URL_KIND_URL;
    if (build_open_inputs(o, names, in, n_in, &total_bytes, err, errlen) != 0 ||
        check_journals_and_keys(o, parse, &journal_items, err, errlen) != 0)
        goto fail_inputs;
    res->parsed = parse;
    if (plan_filter(o, in, n_in, parse, kind, journal_items, res, err, errlen) != 0)
        goto fail_inputs;
    struct builder *b = builder_create(o, res, parse, kind, in, n_in, err, errlen);
    if (!b)
        goto fail_inputs;
    if (o->n_journals && !(b->jstate = build_journal_state(o, b->f, err, errlen)))
        goto fail_builder;
    if (o->exact && !(b->xb = build_exact_begin(o, err, errlen)))
        goto fail_builder;

    unsigned nt = o->threads ? o->threads : util_ncpus();
    double ti = util_now();
    if (run_workers(o, b, nt, total_bytes, ti, res, err, errlen) != 0)
        goto fail_builder;
    if (o->progress)
        print_progress(b, total_bytes, ti, true);
    res->bytes_read = atomic_load(&b->bytes);
    if (parse)
        res->lines = res->tally.lines;
    if (finish_filter(o, b, nt, ti, res, err, errlen) != 0)
        goto fail_builder;
    res->seconds = util_now() - t0;
    builder_free(b);
    build_close_inputs(in, n_in);
    return 0;

fail_builder:
    builder_free(b);
fail_inputs:
    build_close_inputs(in, n_in);
    return -1;
}

int build_write_section(const struct build_opts *o, enum filter_layout layout, uint64_t capacity,
                        double fpr, uint32_t shards, enum filter_keys keys, uint32_t kind,
                        const void *body, size_t len, const char *what, struct filter_plan *plan,
                        char *err, size_t errlen)
{
    char why[512];
    uint64_t seed = o->seed;
    while (seed == 0)
        if (util_random_u64(&seed, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "a seed: %s", why);
            return -1;
        }
    struct filter *f = NULL;
    if (filter_plan_make(layout, capacity, fpr, shards, plan, why, sizeof(why)) != 0 ||
        !(f = filter_create(plan, seed, why, sizeof(why)))) {
        snprintf(err, errlen, "%s: %s", what, why);
        return -1;
    }
    f->keys = keys;
    int rc = format_write_section(f, o->output, o->threads, kind, body, len, err, errlen);
    filter_free(f);
    return rc;
}

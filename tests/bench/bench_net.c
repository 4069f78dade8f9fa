/* bench_net: a closed-loop load generator for bloomgated's line protocol and
 * HTTP API, and for the yardsticks issue #6 measures it against: Redis GET,
 * MGET and a Bloom filter built by hand from k GETBITs, and the null server
 * (tests/bench/null_server). It prints one JSON line of figures; nothing is
 * asserted (a benchmark prints, a test asserts). tests/bench/compare.sh runs it;
 * docs/benchmarks.md holds what it printed.
 *
 *   bench_net --proto line --port 7878 --filter urls --keyspace 1M \
 *             --connections 4 --pipeline 8 --items 100 --duration 10
 *   bench_net --proto redis-get --port 6379 --load 1M     # SET item(i) 1, i < 1M
 *   bench_net --proto resp-bf --port 6380 --filter urls --items 100   # BF.MEXISTS:
 *             bloomgated's resp_listen, or Redis with RedisBloom (--load: BF.MADD)
 *   bench_net --proto bloomd --port 8673 --filter bench --items 100   # bloomd's
 *             ASCII protocol: c, m (--load: b) against a filter made by "create"
 *   bench_net --dump 1M | bloomgate build -o f.bloom --capacity 1M -
 *   bench_net --proto line --port 7878 --replay requests.txt \
 *             --connections 4 --pipeline 4   # the file's lines, as written
 *
 * Items: item(ns, i) is a URL-like string of exactly --item-len bytes made from
 * the index i alone; present items are item('p', i) for i < --keyspace (what
 * --load and --dump produce), absent ones item('a', j), which no present item
 * can equal (the path starts "/p/" or "/a/" right after a host without '/').
 *
 * The client must not be what is measured, so its per-command work is small:
 * every request is formatted before the clock starts into one pool that each
 * connection walks cyclically (the bytes of consecutive requests are adjacent,
 * so one sendmsg sends a whole refill straight from the pool), replies are
 * parsed in the receive buffer, the clock is read once per epoll wake-up, and
 * latencies go into a fixed log-bucket histogram. Its CPU time is printed
 * (getrusage) beside the figures. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bloom/hash.h"
#include "base/util.h"

#define ITEM_MIN_LEN 40 /* "https://" 6 hex ".example.com/" "p/" 10 digits "/" */
#define ITEM_MAX_LEN 4096
#define PRESENT_MAX 10000000000ull       /* present indexes have at most 10 digits */
#define ABSENT_MASK 0xffffffffull        /* absent indexes too */
#define MAX_ITEMS 100000                 /* items per command */
#define IN_START (256u << 10)            /* receive buffer of a connection */
#define IN_MAX (64u << 20)               /* a reply larger than this is garbage */
#define BLOOM_SEED 0x62656e63686e6574ull /* "benchnet": the hand-built filter's hash seed */
#define LOAD_WINDOW 8                    /* batches in flight while loading */

enum kind { K_LINE, K_HTTP, K_REDIS_GET, K_REDIS_MGET, K_REDIS_BLOOM, K_RESP_BF, K_BLOOMD };
static const char *const kind_names[] = {"line",       "http",        "redis-get", "redis-mget",
                                         "redis-bloom", "resp-bf",    "bloomd"};

/* Command-line settings; every one is echoed in the JSON line. */
static struct {
    enum kind kind;
    const char *host;
    int port;
    unsigned connections; /* TCP connections, spread over the threads */
    unsigned pipeline;    /* commands in flight per connection */
    unsigned items;       /* items per command */
    unsigned threads;     /* client threads */
    unsigned item_len;    /* bytes per item */
    double present_share; /* probability that an item is present */
    double duration;      /* measured seconds, after the warm-up */
    double warmup;        /* seconds run but not counted */
    double timeout;       /* bound on --load */
    const char *filter;   /* bloomgate filter name */
    uint64_t keyspace;    /* present items are item('p', i), i < keyspace */
    uint64_t seed;        /* the pool's random choices */
    uint64_t pool_bytes;  /* size of the preformatted request pool */
    bool verify;          /* judge YES/NO against what is present */
    bool http_post;       /* POST even a single item */
    const char *label;    /* free text copied into the JSON */
    int server_pids[8];   /* --server-pid: processes whose CPU time is read */
    unsigned n_server_pids;
    bool url_items;        /* send items respelled (upper-case host, a port) for a url filter */
    bool http_authz;       /* GET /v1/authz/FILTER with the item in gateway headers */
    uint64_t bloom_bits;   /* m of the hand-built Redis filter (0: from keyspace, bloom_fpr) */
    unsigned bloom_k;      /* its k */
    double bloom_fpr;      /* rate m is sized for when bloom_bits is 0 */
    const char *bloom_key; /* its Redis key */
    unsigned load_batch;   /* items per MADD / per pipelined batch of SETs */
    uint64_t load;         /* --load N */
    uint64_t dump;         /* --dump N or --dump-absent N */
    char dump_ns;          /* 'p' (--dump) or 'a' (--dump-absent) */
    bool do_load, do_dump;
    bool window_signals; /* --window-signals */
    const char *replay;  /* --replay FILE: its lines are the requests */
} o = {
    .kind = K_LINE,
    .host = "127.0.0.1",
    .port = 7878,
    .connections = 1,
    .pipeline = 1,
    .items = 1,
    .threads = 1,
    .item_len = 48,
    .present_share = 0.5,
    .duration = 10,
    .warmup = 2,
    .timeout = 1800,
    .filter = "bench",
    .keyspace = 1000000,
    .seed = 1,
    .pool_bytes = 128u << 20,
    .verify = true,
    .label = "",
    .bloom_k = 13,
    .bloom_fpr = 1e-4,
    .bloom_key = "bloom",
    .load_batch = 1000,
};

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench_net: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- items ---- */

static inline uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* item(ns, i): "https://" + 6 hex digits + ".example.com/" + ns + "/" + i in
 * decimal + "/", then URL-safe filler derived from i up to exactly len bytes.
 * out must hold len bytes (len >= ITEM_MIN_LEN was checked, and i has at most
 * 10 digits, so the fixed part always fits). */
static size_t item_make(char *out, char ns, uint64_t i, unsigned len)
{
    static const char hex[] = "0123456789abcdef";
    static const char url[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
    uint64_t h = mix64(i ^ (ns == 'p' ? 0 : 0x5bd1e9955bd1e995ull));
    char *p = out;
    memcpy(p, "https://", 8);
    p += 8;
    for (int s = 20; s >= 0; s -= 4)
        *p++ = hex[(h >> (40 + s)) & 15];
    memcpy(p, ".example.com/", 13);
    p += 13;
    *p++ = ns;
    *p++ = '/';
    char d[20];
    int nd = 0;
    uint64_t v = i;
    do {
        d[nd++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (nd)
        *p++ = d[--nd];
    *p++ = '/';
    size_t used = (size_t)(p - out);
    uint64_t x = 0;
    for (size_t k = 0; used + k < len; k++) {
        if (k % 10 == 0)
            x = mix64(h + k);
        *p++ = url[x & 63];
        x >>= 6;
    }
    return (size_t)(p - out);
}

/* ---- the hand-built Redis Bloom filter ----
 * What application code usually writes: one bitmap key of m bits, k positions
 * by double hashing (Kirsch-Mitzenmacher) of a 128-bit hash, one SETBIT per
 * position to add and one GETBIT per position to look up. Load and lookup use
 * this one function, so they cannot disagree. */
static void bloom_positions(const char *item, size_t len, uint64_t *pos)
{
    XXH128_hash_t h = XXH3_128bits_withSeed(item, len, BLOOM_SEED);
    uint64_t h2 = h.high64 | 1;
    for (unsigned i = 0; i < o.bloom_k; i++)
        pos[i] = (h.low64 + i * h2) % o.bloom_bits;
}

/* ---- a growable byte buffer (set-up and --load only) ---- */

struct gbuf {
    char *p;
    size_t len, cap;
};

static char *gb_reserve(struct gbuf *b, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (cap - b->len < n)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np)
            die("out of memory (%zu bytes of requests)", cap);
        b->p = np;
        b->cap = cap;
    }
    return b->p + b->len;
}

static void gb_put(struct gbuf *b, const void *s, size_t n)
{
    memcpy(gb_reserve(b, n), s, n);
    b->len += n;
}

static void gb_str(struct gbuf *b, const char *s)
{
    gb_put(b, s, strlen(s));
}

static void gb_u64(struct gbuf *b, uint64_t v)
{
    char d[20];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char *p = gb_reserve(b, (size_t)n);
    for (int i = 0; i < n; i++)
        p[i] = d[n - 1 - i];
    b->len += (size_t)n;
}

/* RESP bulk string: $len\r\nbytes\r\n */
static void gb_bulk(struct gbuf *b, const char *s, size_t n)
{
    gb_put(b, "$", 1);
    gb_u64(b, n);
    gb_put(b, "\r\n", 2);
    gb_put(b, s, n);
    gb_put(b, "\r\n", 2);
}

static void gb_bulk_u64(struct gbuf *b, uint64_t v)
{
    char d[24];
    int n = snprintf(d, sizeof(d), "%llu", (unsigned long long)v);
    gb_bulk(b, d, (size_t)n);
}

/* ---- request formatting ----
 * One request ("command" in the figures) for n items: CHECK/MCHECK (line), GET
 * or POST .../check (HTTP), GET or MGET (Redis), or n x k GETBITs (the
 * hand-built filter). With `add`, the --load form: MADD, POST .../add, SET,
 * SETBIT. */
static void put_request(struct gbuf *b, char *const *it, const size_t *il, unsigned n, bool add)
{
    switch (o.kind) {
    case K_LINE:
        gb_str(b, add ? "MADD " : n == 1 ? "CHECK " : "MCHECK ");
        gb_str(b, o.filter);
        for (unsigned i = 0; i < n; i++) {
            gb_put(b, " ", 1);
            gb_put(b, it[i], il[i]);
        }
        gb_put(b, "\n", 1);
        break;
    case K_BLOOMD: /* armon/bloomd: "c F key", "m F k1 k2 ...", "b F k1 k2 ..." */
        gb_str(b, add ? "b " : n == 1 ? "c " : "m ");
        gb_str(b, o.filter);
        for (unsigned i = 0; i < n; i++) {
            gb_put(b, " ", 1);
            gb_put(b, it[i], il[i]);
        }
        gb_put(b, "\n", 1);
        break;
    case K_HTTP:
        if (!add && n == 1 && o.http_authz) {
            /* What nginx's auth_request sends for the item "scheme://host/path":
             * the documented config's headers (docs/gateways.md). */
            const char *sep = memchr(it[0], ':', il[0]);
            const char *host = sep + 3;
            const char *path = memchr(host, '/', il[0] - (size_t)(host - it[0]));
            gb_str(b, "GET /v1/authz/");
            gb_str(b, o.filter);
            gb_str(b, " HTTP/1.1\r\nHost: bloomgate\r\nX-Original-URI: ");
            gb_put(b, path, il[0] - (size_t)(path - it[0]));
            gb_str(b, "\r\nX-Forwarded-Host: ");
            gb_put(b, host, (size_t)(path - host));
            gb_str(b, "\r\nX-Forwarded-Proto: ");
            gb_put(b, it[0], (size_t)(sep - it[0]));
            gb_str(b, "\r\nX-Real-IP: 127.0.0.1\r\n\r\n");
        } else if (!add && n == 1 && !o.http_post) {
            gb_str(b, "GET /v1/filters/");
            gb_str(b, o.filter);
            gb_str(b, "/check?item=");
            gb_put(b, it[0], il[0]); /* URL-safe by construction */
            gb_str(b, " HTTP/1.1\r\nHost: ");
            gb_str(b, o.host);
            gb_str(b, "\r\n\r\n");
        } else {
            size_t body = 10 + 2 + (n - 1); /* {"items":[ ]} and the commas */
            for (unsigned i = 0; i < n; i++)
                body += il[i] + 2;
            gb_str(b, "POST /v1/filters/");
            gb_str(b, o.filter);
            gb_str(b, add ? "/add" : "/check");
            gb_str(b, " HTTP/1.1\r\nHost: ");
            gb_str(b, o.host);
            gb_str(b, "\r\nContent-Type: application/json\r\nContent-Length: ");
            gb_u64(b, body);
            gb_str(b, "\r\n\r\n{\"items\":[");
            for (unsigned i = 0; i < n; i++) {
                gb_str(b, i ? ",\"" : "\"");
                gb_put(b, it[i], il[i]);
                gb_put(b, "\"", 1);
            }
            gb_str(b, "]}");
        }
        break;
    case K_REDIS_GET:
    case K_REDIS_MGET:
        if (add) {
            for (unsigned i = 0; i < n; i++) {
                gb_str(b, "*3\r\n$3\r\nSET\r\n");
                gb_bulk(b, it[i], il[i]);
                gb_str(b, "$1\r\n1\r\n");
            }
        } else if (o.kind == K_REDIS_GET) {
            gb_str(b, "*2\r\n$3\r\nGET\r\n");
            gb_bulk(b, it[0], il[0]);
        } else {
            gb_put(b, "*", 1);
            gb_u64(b, n + 1);
            gb_str(b, "\r\n$4\r\nMGET\r\n");
            for (unsigned i = 0; i < n; i++)
                gb_bulk(b, it[i], il[i]);
        }
        break;
    case K_RESP_BF: /* RedisBloom's commands: bloomgated's resp_listen, or Redis + RedisBloom */
        gb_put(b, "*", 1);
        gb_u64(b, n + 2);
        gb_str(b, add ? "\r\n$7\r\nBF.MADD\r\n"
                      : n == 1 ? "\r\n$9\r\nBF.EXISTS\r\n" : "\r\n$10\r\nBF.MEXISTS\r\n");
        gb_bulk(b, o.filter, strlen(o.filter));
        for (unsigned i = 0; i < n; i++)
            gb_bulk(b, it[i], il[i]);
        break;
    case K_REDIS_BLOOM: {
        uint64_t pos[64];
        for (unsigned i = 0; i < n; i++) {
            bloom_positions(it[i], il[i], pos);
            for (unsigned j = 0; j < o.bloom_k; j++) {
                gb_str(b, add ? "*4\r\n$6\r\nSETBIT\r\n" : "*3\r\n$6\r\nGETBIT\r\n");
                gb_bulk(b, o.bloom_key, strlen(o.bloom_key));
                gb_bulk_u64(b, pos[j]);
                if (add)
                    gb_str(b, "$1\r\n1\r\n");
            }
        }
        break;
    }
    }
}

/* Replies one request gets: one line or response, or one RESP value per
 * command (n SETs, n x k GETBITs or SETBITs). */
static uint64_t replies_per_request(unsigned n, bool add)
{
    switch (o.kind) {
    case K_LINE:
    case K_HTTP:
    case K_BLOOMD:
        return 1;
    case K_REDIS_GET:
    case K_REDIS_MGET:
        return add ? n : 1;
    case K_REDIS_BLOOM:
        return (uint64_t)n * o.bloom_k;
    case K_RESP_BF:
        return 1;
    }
    return 1;
}

/* ---- the request pool ---- */

static struct {
    char *buf; /* every request, back to back */
    uint64_t bytes;
    uint64_t *off;    /* n + 1 start offsets */
    uint8_t *present; /* n x items: was item j of request r present? */
    size_t n;
    uint32_t *n_items; /* --replay: the items of request r (present: all 0); REPLAY_SCAN */
    size_t replayed;   /* --replay: the file's requests */
} pool;

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* --url-items: the item as a gateway might see it, not as the list wrote it:
 * "https://ABC123.EXAMPLE.COM:8080/p/..." for "https://abc123.example.com/p/...".
 * A url filter built from the --dump of the plain items (bloomgate build
 * --format urls --keys url) finds it only through canonicalisation. out has
 * room for len + 5 bytes; returns the new length. */
static size_t url_respell(char *out, size_t len)
{
    char *host = out + 8, *end = memchr(host, '/', len - 8);
    if (!end)
        return len;
    for (char *c = host; c < end; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
    memmove(end + 5, end, len - (size_t)(end - out));
    memcpy(end, ":8080", 5);
    return len + 5;
}

/* Fill the pool with at least max(pipeline + 1, 64) requests and about
 * pool_bytes of them: enough distinct items that the server's filter is read
 * all over (out of cache when it is larger than the caches), and a pool long
 * enough that no connection is ever short of a request. */
static void pool_build(void)
{
    struct gbuf b = {0};
    size_t cap_req = 1024, n = 0;
    uint64_t *off = malloc(cap_req * sizeof(*off));
    uint8_t *present = malloc(cap_req * o.items);
    char **it = malloc(o.items * sizeof(*it));
    size_t *il = malloc(o.items * sizeof(*il));
    size_t stride = o.item_len + 8; /* --url-items adds ":8080" */
    char *arena = malloc((size_t)o.items * stride);
    if (!off || !present || !it || !il || !arena)
        die("out of memory");
    for (unsigned j = 0; j < o.items; j++)
        it[j] = arena + (size_t)j * stride;
    uint64_t rng = mix64(o.seed) | 1;
    size_t min_req = o.pipeline + 1 > 64 ? o.pipeline + 1 : 64;
    while (n < min_req || b.len < o.pool_bytes) {
        if (n + 1 >= cap_req) {
            cap_req *= 2;
            off = realloc(off, cap_req * sizeof(*off));
            present = realloc(present, cap_req * o.items);
            if (!off || !present)
                die("out of memory");
        }
        off[n] = b.len;
        for (unsigned j = 0; j < o.items; j++) {
            uint64_t r = rng_next(&rng);
            bool p = o.keyspace && (double)(r >> 11) * 0x1.0p-53 < o.present_share;
            uint64_t r2 = rng_next(&rng);
            il[j] = p ? item_make(it[j], 'p', r2 % o.keyspace, o.item_len)
                      : item_make(it[j], 'a', r2 & ABSENT_MASK, o.item_len);
            if (o.url_items)
                il[j] = url_respell(it[j], il[j]);
            present[n * o.items + j] = p;
        }
        put_request(&b, it, il, o.items, false);
        n++;
    }
    off[n] = b.len;
    pool.buf = b.p;
    pool.bytes = b.len;
    pool.off = off;
    pool.present = present;
    pool.n = n;
    free(it);
    free(il);
    free(arena);
}

/* pool.n_items of a SCAN: one item (its text), answered on one line by
 * CLEAN or FOUND <n> <word> <start> <end> ..., however many words it holds. */
#define REPLAY_SCAN UINT32_MAX

/* Words of a line-protocol request that are items: every word after the
 * verb and the filter but the context words (type=, from=, method=, in any
 * case), which the server reads as the request's context, not as items.
 * A SCAN (verb in any case) is REPLAY_SCAN: its text is one item. */
static unsigned replay_items(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (end - p > 4 && strncasecmp(p, "SCAN", 4) == 0 && (p[4] == ' ' || p[4] == '\t'))
        return REPLAY_SCAN;
    unsigned words = 0, items = 0;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
            p++;
        if (p == end)
            break;
        const char *w = p;
        while (p < end && *p != ' ' && *p != '\t' && *p != '\r')
            p++;
        size_t n = (size_t)(p - w);
        bool ctx = (n >= 5 && strncasecmp(w, "type=", 5) == 0) ||
                   (n >= 5 && strncasecmp(w, "from=", 5) == 0) ||
                   (n >= 7 && strncasecmp(w, "method=", 7) == 0);
        if (++words > 2 && !ctx)
            items++;
    }
    return items;
}

/* --replay FILE: the pool is the file's non-empty lines, each one request
 * sent byte for byte (a line-protocol CHECK, MCHECK or MATCH, its context
 * words included, or a SCAN), repeated until there are at least
 * max(pipeline + 1, 64) requests. Each request's items are counted here, so
 * that its reply is judged by its count of answers (a SCAN's by its one
 * CLEAN or FOUND); requests may differ in size. What is present is not
 * known: every item counts as absent, so false_positives is the number of
 * YES answers (FOUND for a SCAN). */
static void pool_replay(void)
{
    FILE *f = fopen(o.replay, "r");
    if (!f)
        die("--replay %s: %s", o.replay, strerror(errno));
    struct gbuf b = {0};
    size_t cap_req = 1024, n = 0, lines = 0;
    uint64_t *off = malloc(cap_req * sizeof(*off));
    uint32_t *items = malloc(cap_req * sizeof(*items));
    unsigned most = 1;
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    if (!off || !items)
        die("out of memory");
    while ((len = getline(&line, &line_cap, f)) >= 0) {
        lines++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        if (len == 0)
            continue;
        unsigned k = replay_items(line, line + len);
        if (k == 0 || (k > MAX_ITEMS && k != REPLAY_SCAN))
            die("--replay %s: line %zu has %u items (1 to %u)", o.replay, lines, k, MAX_ITEMS);
        most = k > most && k != REPLAY_SCAN ? k : most;
        if (n + 1 >= cap_req) {
            cap_req *= 2;
            off = realloc(off, cap_req * sizeof(*off));
            items = realloc(items, cap_req * sizeof(*items));
            if (!off || !items)
                die("out of memory");
        }
        items[n] = k;
        off[n++] = b.len;
        gb_put(&b, line, (size_t)len);
        gb_put(&b, "\n", 1);
    }
    if (ferror(f))
        die("--replay %s: %s", o.replay, strerror(errno));
    fclose(f);
    free(line);
    if (n == 0)
        die("--replay %s: no request in it", o.replay);
    size_t once = n, min_req = o.pipeline + 1 > 64 ? o.pipeline + 1 : 64;
    while (n < min_req) { /* a short file is sent over and over */
        if (n + 1 >= cap_req) {
            cap_req *= 2;
            off = realloc(off, cap_req * sizeof(*off));
            items = realloc(items, cap_req * sizeof(*items));
            if (!off || !items)
                die("out of memory");
        }
        size_t r = n % once;
        items[n] = items[r];
        off[n++] = b.len; /* off[once], set first, ends the file's last request */
        size_t rl = off[r + 1] - off[r];
        gb_reserve(&b, rl);
        memcpy(b.p + b.len, b.p + off[r], rl);
        b.len += rl;
    }
    off[n] = b.len;
    pool.buf = b.p;
    pool.bytes = b.len;
    pool.off = off;
    pool.n = n;
    pool.n_items = items;
    pool.replayed = once;
    if (!(pool.present = calloc(most, 1)))
        die("out of memory");
}

/* ---- latency histogram ----
 * Log-linear buckets over nanoseconds, HDR style: values under 32 exactly,
 * above that 32 sub-buckets per power of two (3 % resolution). A fixed array
 * per thread: recording is a count-leading-zeros and an increment. */
#define HIST_SUB_BITS 5
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS (64 * HIST_SUB)

static inline unsigned hist_index(uint64_t v)
{
    if (v < HIST_SUB)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);
    unsigned sub = (unsigned)(v >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1);
    return (e - HIST_SUB_BITS + 1) * HIST_SUB + sub;
}

/* The middle of bucket idx, in nanoseconds. */
static double hist_value(unsigned idx)
{
    if (idx < HIST_SUB)
        return idx;
    unsigned e = idx / HIST_SUB + HIST_SUB_BITS - 1, sub = idx % HIST_SUB;
    double lo = (double)((uint64_t)(HIST_SUB + sub) << (e - HIST_SUB_BITS));
    return lo + (double)(1ull << (e - HIST_SUB_BITS)) / 2;
}

static double hist_quantile(const uint64_t *h, uint64_t total, double q)
{
    if (total == 0)
        return 0;
    uint64_t rank = (uint64_t)ceil(q * (double)total), seen = 0;
    if (rank == 0)
        rank = 1;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += h[i];
        if (seen >= rank)
            return hist_value(i);
    }
    return hist_value(HIST_BUCKETS - 1);
}

/* ---- connections and threads ---- */

struct tstats {
    uint64_t commands;      /* requests answered */
    uint64_t items;         /* items answered */
    uint64_t false_neg;     /* present items answered NO: errors */
    uint64_t false_pos;     /* absent items answered YES */
    uint64_t absent;        /* absent items answered */
    uint64_t error_replies; /* ERR / -ERR / HTTP >= 300 */
    uint64_t malformed;     /* replies we could not read, or with the wrong count */
    uint64_t closed;        /* connections the server closed */
    uint64_t lat_sum_ns, lat_max_ns;
    uint64_t hist[HIST_BUCKETS];
};

struct slot {
    uint64_t req; /* pool index */
    uint64_t t;   /* when it was queued, ns */
};

struct thread;

struct conn {
    int fd;
    bool dead;
    bool out_armed; /* EPOLLOUT registered */
    struct thread *t;
    uint64_t next_req;   /* pool index of the next request to queue */
    uint64_t unsent_off; /* first unsent byte: a cyclic range of the pool */
    uint64_t unsent_len;
    struct slot *ring; /* requests in flight, oldest at head */
    unsigned head, count;
    char *in; /* received, not yet parsed */
    size_t in_len, in_cap;
};

struct thread {
    pthread_t tid;
    int ep;
    struct conn **conns;
    unsigned n_conns, live;
    uint64_t t_measure, t_end;
    bool measuring;
    unsigned complaints; /* error messages printed, to keep stderr short */
    struct tstats s;
    /* --window-signals: the counters when this thread saw the window open
     * and close, and when (ns); the window's figures are w1 - w0. */
    struct tstats *w0, *w1;
    uint64_t w_t0, w_t1;
    bool w_opened, w_closed;
};

/* --window-signals: SIGUSR1 opens the window, SIGUSR2 closes it, SIGINT and
 * SIGTERM end the run early (the figures are then of the seconds actually
 * measured). The handler only stores; every thread reads at its next wake-up
 * (within the 10 ms epoll timeout), the main thread within 50 ms. */
static atomic_int win_state; /* 0 before, 1 open, 2 closed */
static atomic_int stop_req;

static void on_window_signal(int sig)
{
    if (sig == SIGUSR1)
        atomic_store(&win_state, 1);
    else if (sig == SIGUSR2)
        atomic_store(&win_state, 2);
    else
        atomic_store(&stop_req, 1);
}

/* Client thread: snapshot the counters at the window's edges. A close with
 * no open first makes an empty window. */
static void window_poll(struct thread *t, uint64_t now)
{
    int w = atomic_load(&win_state);
    if (w >= 1 && !t->w_opened) {
        *t->w0 = t->s;
        t->w_t0 = now;
        t->w_opened = true;
    }
    if (w >= 2 && !t->w_closed) {
        *t->w1 = t->s;
        t->w_t1 = now;
        t->w_closed = true;
    }
}

static __attribute__((format(printf, 2, 3))) void complain(struct thread *t, const char *fmt, ...)
{
    if (t->complaints++ >= 5)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("bench_net: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Count one answer. Branch-free: present and absent items come in random
 * order, and a mispredicted branch per item cost the client ~10% of its
 * throughput against a real filter (the null server's all-NO answers never
 * mispredict), which skewed the bloomgate / null server ratio. */
static inline void judge(struct tstats *s, bool want, bool yes)
{
    s->items++;
    if (!o.verify)
        return;
    s->false_neg += want & !yes;
    s->absent += !want;
    s->false_pos += !want & yes;
}

/* A printable excerpt of a reply for an error message. */
static const char *excerpt(const char *b, size_t len, char *out, size_t cap)
{
    size_t n = len < cap - 1 ? len : cap - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = (b[i] >= 0x20 && b[i] < 0x7f) ? b[i] : '.';
    out[n] = '\0';
    return out;
}

/* Each parser reads the reply to one request at b[0..len): the bytes it used
 * when the reply is complete, 0 when more must arrive, -1 when the stream is
 * not what the protocol allows (the connection is then given up). */

/* The line protocol's "YES NO ..." and bloomd's "Yes No ..." (in `e`, `s`
 * and `o` the case of the letters after Y and N). Any other bloomd line
 * ("Filter does not exist", "Client Error: ...") is an error reply. */
static ssize_t parse_line(struct thread *t, const char *b, size_t len, const uint8_t *want,
                          unsigned expect)
{
    const char *nl = memchr(b, '\n', len);
    if (!nl)
        return len > IN_MAX / 2 ? -1 : 0;
    size_t ll = (size_t)(nl - b);
    char ex[80];
    const bool bd = o.kind == K_BLOOMD;
    const char e = bd ? 'e' : 'E', s = bd ? 's' : 'S', no = bd ? 'o' : 'O';
    if (ll >= 3 && (bd ? b[0] != 'Y' && b[0] != 'N' : memcmp(b, "ERR", 3) == 0)) {
        t->s.error_replies++;
        complain(t, "error reply: %s", excerpt(b, ll, ex, sizeof(ex)));
        return (ssize_t)ll + 1;
    }
    const char *p = b, *end = nl;
    unsigned got = 0;
    while (end - p >= 2 && got < expect) {
        /* YES or NO without a branch on which: p[2] is readable even after
         * a final NO (it is the LF at end). */
        bool yes = p[0] == 'Y';
        bool ok = (yes & (p[1] == e) & (p[2] == s)) | ((p[0] == 'N') & (p[1] == no));
        if (!ok)
            break;
        p += 2 + yes;
        judge(&t->s, want[got++], yes);
        if (p < end && *p == ' ')
            p++;
        else
            break;
    }
    if (got != expect || p != end) {
        t->s.malformed++;
        complain(t, "reply with %u of %u answers: %s", got, expect, excerpt(b, ll, ex, sizeof(ex)));
    }
    return (ssize_t)ll + 1;
}

static bool hdr_is(const char *line, size_t n, const char *name)
{
    size_t k = strlen(name);
    return n >= k && strncasecmp(line, name, k) == 0;
}

/* An HTTP/1.1 response framed by Content-Length (what evhttp and nginx send;
 * chunked bodies are not expected and count as unreadable). */
static ssize_t parse_http(struct thread *t, const char *b, size_t len, const uint8_t *want)
{
    const char *he = memmem(b, len, "\r\n\r\n", 4);
    if (!he)
        return len > 65536 ? -1 : 0;
    size_t hlen = (size_t)(he - b) + 4;
    char ex[120];
    if (hlen < 16 || memcmp(b, "HTTP/1.", 7) != 0) {
        complain(t, "not an HTTP response: %s", excerpt(b, hlen, ex, sizeof(ex)));
        return -1;
    }
    int status = atoi(b + 9);
    size_t cl = 0;
    bool have_cl = false;
    const char *line = memchr(b, '\n', hlen) + 1;
    while (line < he) {
        const char *eol = memchr(line, '\n', (size_t)(he + 2 - line));
        size_t n = (size_t)(eol - line);
        if (hdr_is(line, n, "content-length:")) {
            cl = strtoull(line + 15, NULL, 10);
            have_cl = true;
        } else if (hdr_is(line, n, "transfer-encoding:")) {
            complain(t, "chunked HTTP replies are not supported");
            return -1;
        }
        line = eol + 1;
    }
    if (!have_cl && status != 204 && status != 304 && status >= 200) {
        complain(t, "HTTP %d without Content-Length", status);
        return -1;
    }
    if (len - hlen < cl)
        return len > IN_MAX / 2 ? -1 : 0;
    const char *body = b + hlen;
    if (o.http_authz && (status == 204 || status == 403)) {
        /* 204 nothing matched, 403 the item's URL is listed. */
        judge(&t->s, want[0], status == 403);
        return (ssize_t)(hlen + cl);
    }
    if (status < 200 || status >= 300) {
        t->s.error_replies++;
        complain(t, "HTTP %d: %s", status, excerpt(body, cl, ex, sizeof(ex)));
        return (ssize_t)(hlen + cl);
    }
    if (!o.verify) {
        t->s.items += o.items;
        return (ssize_t)(hlen + cl);
    }
    /* {"...","present":true} for GET, {"...","present":[true,false,...]} for POST */
    const char *p = cl ? memmem(body, cl, "\"present\":", 10) : NULL;
    const char *end = body + cl;
    unsigned got = 0;
    if (p) {
        p += 10;
        bool array = p < end && *p == '[';
        p += array;
        while (p < end && got < o.items) {
            if (*p == 't')
                judge(&t->s, want[got++], true);
            else if (*p == 'f')
                judge(&t->s, want[got++], false);
            else
                break;
            p += *p == 't' ? 4 : 5;
            if (!array || p >= end || *p != ',')
                break;
            p++;
        }
    }
    if (got != o.items) {
        t->s.malformed++;
        complain(t, "HTTP reply with %u of %u answers: %s", got, o.items,
                 excerpt(body, cl, ex, sizeof(ex)));
    }
    return (ssize_t)(hlen + cl);
}

/* One RESP value that is not an array, or an array's header (type '*').
 * *num: the integer, the bulk length (-1 for nil) or the array length. */
static ssize_t resp_value(const char *b, size_t len, char *type, int64_t *num)
{
    const char *nl = memchr(b, '\n', len);
    if (!nl)
        return len > 4096 ? -1 : 0;
    size_t line = (size_t)(nl - b) + 1;
    if (line < 3 || nl[-1] != '\r')
        return -1;
    *type = b[0];
    *num = 0;
    switch (b[0]) {
    case '+':
    case '-':
        return (ssize_t)line;
    case ':':
    case '*':
    case '$': {
        const char *p = b + 1;
        bool neg = *p == '-';
        p += neg;
        int64_t v = 0;
        while (*p >= '0' && *p <= '9')
            v = v * 10 + (*p++ - '0');
        if (p != nl - 1)
            return -1;
        *num = neg ? -v : v;
        if (b[0] != '$' || v < 0 || neg)
            return (ssize_t)line;
        if (len < line + (size_t)v + 2)
            return 0;
        return (ssize_t)(line + (size_t)v + 2);
    }
    default:
        return -1;
    }
}

/* The next RESP value, with the answers Redis and the BF.* commands send most
 * (":0", ":1", "$-1", a bulk string of under 10 bytes) read without memchr;
 * anything else goes to resp_value. Same results as resp_value. */
static inline ssize_t resp_next(const char *b, size_t len, char *type, int64_t *num)
{
    if (len >= 4 && b[2] == '\r' && b[3] == '\n' && (unsigned char)(b[1] - '0') < 10) {
        size_t v = (size_t)(b[1] - '0');
        if (b[0] == ':') {
            *type = ':';
            *num = (int64_t)v;
            return 4;
        }
        if (b[0] == '$') {
            *type = '$';
            *num = (int64_t)v;
            return len < 6 + v ? 0 : (ssize_t)(6 + v);
        }
    }
    if (len >= 5 && memcmp(b, "$-1\r\n", 5) == 0) {
        *type = '$';
        *num = -1;
        return 5;
    }
    return resp_value(b, len, type, num);
}

/* Answers of one reply, added to the thread's counters only once the reply
 * is complete (a partial one is parsed again when more bytes arrive). */
struct tally {
    uint64_t items, false_neg, false_pos, absent;
};

static inline void tally_judge(struct tally *y, bool want, bool yes)
{
    y->items++;
    y->false_neg += want & !yes;
    y->absent += !want;
    y->false_pos += !want & yes;
}

/* Redis replies, in one pass over the reply: GET (one bulk string), MGET (an
 * array of o.items bulk strings), the hand-built filter (o.bloom_k integers
 * per item, present if all are 1), BF.EXISTS (an integer) and BF.MEXISTS (an
 * array of o.items integers). A value of the wrong type (an error reply
 * inside an array) leaves its item unjudged and counts the reply as one
 * error reply. The earlier parser read each reply twice (once to find its
 * end, once to judge it) with a memchr per value: 247 instructions per item
 * of MGET 100 against 57 for the line protocol's MCHECK. */
static ssize_t parse_redis(struct thread *t, const char *b, size_t len, const uint8_t *want)
{
    size_t off = 0, bad = SIZE_MAX, bad_len = 0;
    char type;
    int64_t num;
    ssize_t u;
    char ex[80];
    const bool ints = o.kind == K_RESP_BF || o.kind == K_REDIS_BLOOM;
    const unsigned per = o.kind == K_REDIS_BLOOM ? o.bloom_k : 1;
    const bool array = o.kind == K_REDIS_MGET || (o.kind == K_RESP_BF && o.items > 1);
    const unsigned n = o.kind == K_REDIS_GET ? 1 : o.items;
    if (array) {
        if ((u = resp_next(b, len, &type, &num)) <= 0)
            return u;
        if (type == '-') {
            t->s.error_replies++;
            complain(t, "error reply: %s", excerpt(b, (size_t)u, ex, sizeof(ex)));
            return u;
        }
        if (type != '*' || num != (int64_t)n) {
            complain(t, "reply is not an array of %u: %s", n,
                     excerpt(b, (size_t)u, ex, sizeof(ex)));
            return -1;
        }
        off = (size_t)u;
    }
    struct tally y = {0};
    for (unsigned i = 0; i < n; i++) {
        bool yes = true, ok = true;
        for (unsigned j = 0; j < per; j++) {
            if ((u = resp_next(b + off, len - off, &type, &num)) <= 0)
                return u;
            if (type != (ints ? ':' : '$')) {
                ok = false;
                if (bad == SIZE_MAX) {
                    bad = off;
                    bad_len = (size_t)u;
                }
            }
            yes &= ints ? num == 1 : num >= 0;
            off += (size_t)u;
        }
        if (ok)
            tally_judge(&y, want[i], yes);
    }
    t->s.items += y.items;
    if (o.verify) {
        t->s.false_neg += y.false_neg;
        t->s.false_pos += y.false_pos;
        t->s.absent += y.absent;
    }
    if (bad != SIZE_MAX) {
        t->s.error_replies++;
        complain(t, "not an answer: %s", excerpt(b + bad, bad_len, ex, sizeof(ex)));
    }
    return (ssize_t)off;
}

/* --replay: the reply to a SCAN, one line: CLEAN (a NO) or FOUND <n>[+]
 * and the matches (a YES), or an ERR. */
static ssize_t parse_scan(struct thread *t, const char *b, size_t len)
{
    const char *nl = memchr(b, '\n', len);
    if (!nl)
        return len > IN_MAX / 2 ? -1 : 0;
    size_t ll = (size_t)(nl - b);
    char ex[80];
    if (ll >= 3 && memcmp(b, "ERR", 3) == 0) {
        t->s.error_replies++;
        complain(t, "error reply: %s", excerpt(b, ll, ex, sizeof(ex)));
    } else if (ll == 5 && memcmp(b, "CLEAN", 5) == 0) {
        judge(&t->s, false, false);
    } else if (ll > 6 && memcmp(b, "FOUND ", 6) == 0 && b[6] >= '0' && b[6] <= '9') {
        judge(&t->s, false, true);
    } else {
        t->s.malformed++;
        complain(t, "not a SCAN reply: %s", excerpt(b, ll, ex, sizeof(ex)));
    }
    return (ssize_t)ll + 1;
}

static ssize_t parse_reply(struct thread *t, const char *b, size_t len, uint64_t req)
{
    if (pool.n_items) /* --replay: nothing is known present */
        return pool.n_items[req] == REPLAY_SCAN
                   ? parse_scan(t, b, len)
                   : parse_line(t, b, len, pool.present, pool.n_items[req]);
    const uint8_t *want = pool.present + req * o.items;
    switch (o.kind) {
    case K_LINE:
    case K_BLOOMD:
        return parse_line(t, b, len, want, o.items);
    case K_HTTP:
        return parse_http(t, b, len, want);
    default:
        return parse_redis(t, b, len, want);
    }
}

static void conn_kill(struct conn *c, const char *why)
{
    if (c->dead)
        return;
    if (why)
        complain(c->t, "connection lost: %s", why);
    c->dead = true;
    epoll_ctl(c->t->ep, EPOLL_CTL_DEL, c->fd, NULL);
    c->t->live--;
    c->t->s.closed++;
}

/* Queue m more requests (the next ones of the pool, cyclically). Their bytes
 * join the unsent range; the caller sends. */
static void conn_queue(struct conn *c, unsigned m, uint64_t now)
{
    for (unsigned i = 0; i < m; i++) {
        uint64_t r = c->next_req;
        struct slot *s = &c->ring[(c->head + c->count) % o.pipeline];
        s->req = r;
        s->t = now;
        c->count++;
        c->unsent_len += pool.off[r + 1] - pool.off[r];
        c->next_req = r + 1 == pool.n ? 0 : r + 1;
    }
}

static void conn_set_out(struct conn *c, bool on)
{
    if (c->out_armed == on)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(c->t->ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->out_armed = on;
}

/* One sendmsg of everything unsent, straight from the pool (two pieces when
 * the range wraps). A short write leaves the rest for EPOLLOUT. */
static int conn_send(struct conn *c)
{
    while (c->unsent_len) {
        struct iovec iov[2];
        int n = 1;
        uint64_t first = pool.bytes - c->unsent_off;
        iov[0].iov_base = pool.buf + c->unsent_off;
        if (first >= c->unsent_len) {
            iov[0].iov_len = c->unsent_len;
        } else {
            iov[0].iov_len = first;
            iov[1].iov_base = pool.buf;
            iov[1].iov_len = c->unsent_len - first;
            n = 2;
        }
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -1;
        }
        c->unsent_off = (c->unsent_off + (uint64_t)w) % pool.bytes;
        c->unsent_len -= (uint64_t)w;
    }
    conn_set_out(c, c->unsent_len > 0);
    return 0;
}

/* One recv, then every complete reply in the buffer: verified, timed against
 * `now`, and popped. Returns how many requests were answered, -1 if the
 * connection is lost. */
static int conn_read(struct conn *c, uint64_t now)
{
    struct thread *t = c->t;
    if (c->in_cap - c->in_len < 4096) {
        if (c->in_cap >= IN_MAX) {
            conn_kill(c, "reply too large");
            return -1;
        }
        char *nb = realloc(c->in, c->in_cap * 2);
        if (!nb)
            die("out of memory");
        c->in = nb;
        c->in_cap *= 2;
    }
    ssize_t r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
    if (r == 0) {
        conn_kill(c, "closed by the server");
        return -1;
    }
    if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return 0;
        conn_kill(c, strerror(errno));
        return -1;
    }
    c->in_len += (size_t)r;
    size_t off = 0;
    int done = 0;
    while (c->count && off < c->in_len) {
        struct slot *s = &c->ring[c->head];
        ssize_t u = parse_reply(t, c->in + off, c->in_len - off, s->req);
        if (u == 0)
            break;
        if (u < 0) {
            t->s.malformed++;
            conn_kill(c, "unreadable reply");
            return -1;
        }
        off += (size_t)u;
        uint64_t lat = now - s->t;
        t->s.commands++;
        t->s.hist[hist_index(lat)]++;
        t->s.lat_sum_ns += lat;
        if (lat > t->s.lat_max_ns)
            t->s.lat_max_ns = lat;
        c->head = c->head + 1 == o.pipeline ? 0 : c->head + 1;
        c->count--;
        done++;
    }
    if (c->count == 0 && off < c->in_len) {
        t->s.malformed++;
        conn_kill(c, "bytes after the last expected reply");
        return -1;
    }
    if (off) {
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
    }
    return done;
}

static void *thread_main(void *arg)
{
    struct thread *t = arg;
    struct epoll_event ev[64];
    uint64_t now = now_ns();
    for (unsigned i = 0; i < t->n_conns; i++) {
        conn_queue(t->conns[i], o.pipeline, now);
        if (conn_send(t->conns[i]) < 0)
            conn_kill(t->conns[i], strerror(errno));
    }
    while (t->live) {
        int n = epoll_wait(t->ep, ev, 64, 10);
        now = now_ns();
        if (!t->measuring && now >= t->t_measure) {
            memset(&t->s, 0, sizeof(t->s)); /* the warm-up is not counted */
            t->measuring = true;
        }
        if (t->measuring && o.window_signals)
            window_poll(t, now);
        if (now >= t->t_end || atomic_load(&stop_req))
            break;
        for (int i = 0; i < n; i++) {
            struct conn *c = ev[i].data.ptr;
            if (c->dead)
                continue;
            if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
                int done = conn_read(c, now);
                if (done < 0)
                    continue;
                conn_queue(c, (unsigned)done, now);
            }
            if (c->unsent_len && conn_send(c) < 0)
                conn_kill(c, strerror(errno));
        }
    }
    if (o.window_signals && t->w_opened && !t->w_closed) { /* open until the end */
        *t->w1 = t->s;
        t->w_t1 = now;
        t->w_closed = true;
    }
    return NULL;
}

static int connect_to(void)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    char port[16];
    snprintf(port, sizeof(port), "%d", o.port);
    int rc = getaddrinfo(o.host, port, &hints, &ai);
    if (rc != 0)
        die("%s: %s", o.host, gai_strerror(rc));
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        fprintf(stderr, "bench_net: connect %s:%d: %s\n", o.host, o.port, strerror(errno));
        exit(1);
    }
    freeaddrinfo(ai);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

static double cpu_seconds(const struct rusage *ru, bool sys)
{
    const struct timeval *tv = sys ? &ru->ru_stime : &ru->ru_utime;
    return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* CPU time (utime + stime, all threads) of the --server-pid processes, in
 * clock ticks, from /proc/PID/stat; -1 if one of them is gone. Read on the
 * main thread at the instants the client's own getrusage is, so the server's
 * cost per item covers exactly the items counted. */
static long long server_ticks(void)
{
    long long sum = 0;
    for (unsigned i = 0; i < o.n_server_pids; i++) {
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", o.server_pids[i]);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -1;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
            return -1;
        buf[n] = '\0';
        /* Fields after the command name, which may hold spaces and ')':
         * state is field 3, utime 14 and stime 15. */
        const char *p = strrchr(buf, ')');
        unsigned long long ut, st;
        if (!p ||
            sscanf(p + 2, "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", &ut, &st) != 2)
            return -1;
        sum += (long long)(ut + st);
    }
    return sum;
}

/* Add x's counters to s (every client thread's, at the end; main thread). */
static void stats_add(struct tstats *s, const struct tstats *x)
{
    s->commands += x->commands;
    s->items += x->items;
    s->false_neg += x->false_neg;
    s->false_pos += x->false_pos;
    s->absent += x->absent;
    s->error_replies += x->error_replies;
    s->malformed += x->malformed;
    s->closed += x->closed;
    s->lat_sum_ns += x->lat_sum_ns;
    if (x->lat_max_ns > s->lat_max_ns)
        s->lat_max_ns = x->lat_max_ns;
    for (unsigned b = 0; b < HIST_BUCKETS; b++)
        s->hist[b] += x->hist[b];
}

/* One part of a --window-signals run (before, window, after): the counters
 * b - a over secs seconds, as a JSON member. Its max is the top latency
 * bucket's middle (3 % resolution); over_100ms counts the commands whose
 * bucket lies at or above 100 ms. Main thread. */
static void print_part(const char *name, const struct tstats *a, const struct tstats *b,
                       double secs)
{
    static uint64_t h[HIST_BUCKETS];
    uint64_t over = 0, cmds = b->commands - a->commands;
    unsigned top = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        h[i] = b->hist[i] - a->hist[i];
        if (h[i])
            top = i;
        if (hist_value(i) >= 1e8)
            over += h[i];
    }
    uint64_t errors = (b->false_neg + b->error_replies + b->malformed + b->closed) -
                      (a->false_neg + a->error_replies + a->malformed + a->closed);
    if (secs <= 0)
        secs = 1e-9;
    printf("\"%s\":{\"seconds\":%.3f,\"items_per_s\":%.0f,\"commands\":%llu,\"p50_us\":%.1f,"
           "\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,\"over_100ms\":%llu,"
           "\"errors\":%llu},",
           name, secs, (double)(b->items - a->items) / secs, (unsigned long long)cmds,
           hist_quantile(h, cmds, 0.50) / 1e3, hist_quantile(h, cmds, 0.99) / 1e3,
           hist_quantile(h, cmds, 0.999) / 1e3, cmds ? hist_value(top) / 1e3 : 0.0,
           (unsigned long long)over, (unsigned long long)errors);
}

static void sleep_until(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* JSON string without escapes: the label and names are printable and have
 * no quote or backslash (checked at parse time). */
static void print_settings(void)
{
    printf("{\"tool\":\"bench_net\",\"label\":\"%s\",\"proto\":\"%s\",\"host\":\"%s\",\"port\":%d,",
           o.label, kind_names[o.kind], o.host, o.port);
}

/* --window-signals: the before, window and after parts of the run, each
 * summed over the client threads; the edges are thread 0's (the others saw
 * them within 10 ms). Main thread, after the join. */
static void print_window(const struct thread *th, const struct tstats *all, uint64_t t_measure,
                         uint64_t t_stop)
{
    struct tstats *z = calloc(3, sizeof(*z)), *w0 = z + 1, *w1 = z + 2;
    if (!z)
        die("out of memory");
    for (unsigned i = 0; i < o.threads; i++) {
        stats_add(w0, th[i].w0);
        stats_add(w1, th[i].w1);
    }
    uint64_t a = th[0].w_t0, b = th[0].w_t1;
    print_part("before", z, w0, (double)(a - t_measure) / 1e9);
    print_part("window", w0, w1, (double)(b - a) / 1e9);
    print_part("after", w1, all, t_stop > b ? (double)(t_stop - b) / 1e9 : 0);
    free(z);
}

static int run_bench(void)
{
    double t_build = util_now();
    if (o.replay)
        pool_replay();
    else
        pool_build();
    t_build = util_now() - t_build;
    struct thread *th = calloc(o.threads, sizeof(*th));
    struct conn *conns = calloc(o.connections, sizeof(*conns));
    if (!th || !conns)
        die("out of memory");
    for (unsigned i = 0; i < o.threads; i++) {
        th[i].ep = epoll_create1(EPOLL_CLOEXEC);
        th[i].conns = calloc(o.connections, sizeof(*th[i].conns));
        if (th[i].ep < 0 || !th[i].conns)
            die("epoll: %s", strerror(errno));
        if (o.window_signals && (!(th[i].w0 = calloc(1, sizeof(struct tstats))) ||
                                 !(th[i].w1 = calloc(1, sizeof(struct tstats)))))
            die("out of memory");
    }
    if (o.window_signals) {
        struct sigaction sa = {.sa_handler = on_window_signal}; /* no SA_RESTART */
        sigemptyset(&sa.sa_mask);
        int sigs[] = {SIGUSR1, SIGUSR2, SIGINT, SIGTERM};
        for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
            if (sigaction(sigs[i], &sa, NULL) != 0)
                die("sigaction: %s", strerror(errno));
    }
    for (unsigned i = 0; i < o.connections; i++) {
        struct conn *c = &conns[i];
        struct thread *t = &th[i % o.threads];
        c->fd = connect_to();
        c->t = t;
        c->next_req = (uint64_t)i * pool.n / o.connections;
        c->unsent_off = pool.off[c->next_req];
        c->ring = calloc(o.pipeline, sizeof(*c->ring));
        c->in_cap = IN_START;
        c->in = malloc(c->in_cap);
        if (!c->ring || !c->in)
            die("out of memory");
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(t->ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
            die("epoll_ctl: %s", strerror(errno));
        t->conns[t->n_conns++] = c;
        t->live++;
    }
    uint64_t t0 = now_ns();
    uint64_t t_measure = t0 + (uint64_t)(o.warmup * 1e9);
    uint64_t t_end = t_measure + (uint64_t)(o.duration * 1e9);
    for (unsigned i = 0; i < o.threads; i++) {
        th[i].t_measure = t_measure;
        th[i].t_end = t_end;
        if (pthread_create(&th[i].tid, NULL, thread_main, &th[i]) != 0)
            die("pthread_create failed");
    }
    struct rusage ru0, ru1;
    sleep_until(t_measure);
    getrusage(RUSAGE_SELF, &ru0);
    long long sv0 = server_ticks();
    uint64_t t_stop = t_end;
    if (o.window_signals) { /* a SIGINT / SIGTERM may end the run early */
        uint64_t now;
        while ((now = now_ns()) < t_end && !atomic_load(&stop_req))
            sleep_until(now + 50000000 < t_end ? now + 50000000 : t_end);
        t_stop = now < t_end ? now : t_end;
        atomic_store(&stop_req, 1);
    } else {
        sleep_until(t_end);
    }
    getrusage(RUSAGE_SELF, &ru1);
    long long sv1 = server_ticks();
    for (unsigned i = 0; i < o.threads; i++)
        pthread_join(th[i].tid, NULL);

    struct tstats *s = calloc(1, sizeof(*s));
    if (!s)
        die("out of memory");
    for (unsigned i = 0; i < o.threads; i++)
        stats_add(s, &th[i].s);
    for (unsigned i = 0; i < o.connections; i++) {
        close(conns[i].fd);
        free(conns[i].ring);
        free(conns[i].in);
    }
    double dur = t_stop > t_measure ? (double)(t_stop - t_measure) / 1e9 : 1e-9;
    double user = cpu_seconds(&ru1, false) - cpu_seconds(&ru0, false);
    double sys = cpu_seconds(&ru1, true) - cpu_seconds(&ru0, true);
    uint64_t errors = s->false_neg + s->error_replies + s->malformed + s->closed;
    print_settings();
    printf("\"connections\":%u,\"pipeline\":%u,\"items_per_command\":%u,\"present_share\":%g,"
           "\"threads\":%u,\"duration_s\":%g,\"warmup_s\":%g,\"item_len\":%u,\"keyspace\":%llu,"
           "\"filter\":\"%s\",\"verify\":%s,\"url_items\":%s,\"http_authz\":%s,",
           o.connections, o.pipeline, o.items, o.present_share, o.threads, o.duration, o.warmup,
           o.item_len, (unsigned long long)o.keyspace, o.filter, o.verify ? "true" : "false",
           o.url_items ? "true" : "false", o.http_authz ? "true" : "false");
    if (o.n_server_pids && sv0 >= 0 && sv1 >= 0) {
        double sv = (double)(sv1 - sv0) / (double)sysconf(_SC_CLK_TCK);
        printf("\"server_cpu_s\":%.2f,\"server_cpu_cores\":%.2f,\"server_cpu_ns_per_item\":%.1f,",
               sv, sv / dur, s->items ? sv * 1e9 / (double)s->items : 0.0);
    }
    if (o.window_signals && th[0].w_opened)
        print_window(th, s, t_measure, t_stop);
    if (o.replay)
        printf("\"replay_requests\":%zu,\"items_per_command_mean\":%.2f,\"yes_share\":%.4f,",
               pool.replayed, s->commands ? (double)s->items / (double)s->commands : 0.0,
               s->items ? (double)s->false_pos / (double)s->items : 0.0);
    if (o.kind == K_REDIS_BLOOM)
        printf("\"bloom_bits\":%llu,\"bloom_k\":%u,\"redis_commands_per_s\":%.0f,",
               (unsigned long long)o.bloom_bits, o.bloom_k, (double)s->items * o.bloom_k / dur);
    printf("\"items_per_s\":%.0f,\"commands_per_s\":%.0f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
           "\"p999_us\":%.1f,\"max_us\":%.1f,\"mean_us\":%.1f,\"commands\":%llu,\"items\":%llu,"
           "\"errors\":%llu,\"false_negatives\":%llu,\"error_replies\":%llu,\"malformed\":%llu,"
           "\"connections_lost\":%llu,\"false_positives\":%llu,\"absent_items\":%llu,"
           "\"false_positive_rate\":%.3g,\"client_cpu_user_s\":%.2f,\"client_cpu_sys_s\":%.2f,"
           "\"client_cpu_cores\":%.2f,\"client_cpu_ns_per_item\":%.1f,\"pool_requests\":%zu,"
           "\"pool_mb\":%.1f,\"pool_build_s\":%.2f}\n",
           (double)s->items / dur, (double)s->commands / dur,
           hist_quantile(s->hist, s->commands, 0.50) / 1e3,
           hist_quantile(s->hist, s->commands, 0.99) / 1e3,
           hist_quantile(s->hist, s->commands, 0.999) / 1e3, (double)s->lat_max_ns / 1e3,
           s->commands ? (double)s->lat_sum_ns / (double)s->commands / 1e3 : 0.0,
           (unsigned long long)s->commands, (unsigned long long)s->items,
           (unsigned long long)errors, (unsigned long long)s->false_neg,
           (unsigned long long)s->error_replies, (unsigned long long)s->malformed,
           (unsigned long long)s->closed, (unsigned long long)s->false_pos,
           (unsigned long long)s->absent,
           s->absent ? (double)s->false_pos / (double)s->absent : 0.0, user, sys,
           (user + sys) / dur, s->items ? (user + sys) * 1e9 / (double)s->items : 0.0, pool.n,
           (double)pool.bytes / 1048576.0, t_build);
    fflush(stdout);
    for (unsigned i = 0; i < o.threads; i++) {
        close(th[i].ep);
        free(th[i].conns);
        free(th[i].w0);
        free(th[i].w1);
    }
    free(th);
    free(conns);
    free(s);
    free(pool.buf);
    free(pool.off);
    free(pool.present);
    free(pool.n_items);
    return errors ? 1 : 0;
}

/* ---- --load and --dump ---- */

/* Count the complete replies in b[0..len), as --load gets them: a line, an
 * HTTP response or a RESP value each. Error replies are counted in *errors. */
static size_t load_replies(const char *b, size_t len, uint64_t *got, uint64_t *errors)
{
    size_t off = 0;
    char ex[120];
    while (off < len) {
        const char *p = b + off;
        size_t rest = len - off, used;
        bool bad = false;
        if (o.kind == K_LINE || o.kind == K_BLOOMD) {
            const char *nl = memchr(p, '\n', rest);
            if (!nl)
                break;
            used = (size_t)(nl - p) + 1;
            bad = o.kind == K_LINE ? used >= 4 && memcmp(p, "ERR", 3) == 0
                                   : p[0] != 'Y' && p[0] != 'N';
        } else if (o.kind == K_HTTP) {
            const char *he = memmem(p, rest, "\r\n\r\n", 4);
            if (!he)
                break;
            size_t hlen = (size_t)(he - p) + 4, cl = 0;
            const char *h = memmem(p, hlen, "\r\nContent-Length:", 17);
            if (!h)
                h = memmem(p, hlen, "\r\ncontent-length:", 17);
            if (h)
                cl = strtoull(h + 17, NULL, 10);
            if (rest < hlen + cl)
                break;
            used = hlen + cl;
            bad = rest < 12 || memcmp(p + 9, "200", 3) != 0;
        } else {
            char type;
            int64_t num;
            ssize_t u = resp_value(p, rest, &type, &num);
            if (u < 0) {
                fprintf(stderr, "bench_net: unreadable reply: %s\n", excerpt(p, rest, ex, 80));
                exit(1);
            }
            if (u == 0)
                break;
            used = (size_t)u;
            bad = type == '-';
            /* BF.MADD answers an array: the array is the one reply. */
            for (int64_t k = 0; o.kind == K_RESP_BF && type == '*' && k < num && u > 0; k++) {
                char t2;
                int64_t n2;
                u = resp_value(p + used, rest - used, &t2, &n2);
                if (u < 0) {
                    fprintf(stderr, "bench_net: unreadable reply: %s\n", excerpt(p, rest, ex, 80));
                    exit(1);
                }
                used += (size_t)u;
            }
            if (u == 0)
                break;
        }
        if (bad && (*errors)++ < 5)
            fprintf(stderr, "bench_net: error reply: %s\n", excerpt(p, used, ex, sizeof(ex)));
        off += used;
        (*got)++;
    }
    return off;
}

/* Add items 0..N-1: MADD batches (line), POST .../add (HTTP), pipelined SETs
 * (redis-get, redis-mget) or SETBITs (redis-bloom), LOAD_WINDOW batches in
 * flight on one connection, bounded by --timeout. */
static int run_load(void)
{
    int fd = connect_to();
    double t0 = util_now();
    struct gbuf out = {0};
    size_t out_off = 0, in_len = 0, in_cap = 1 << 20;
    char *in = malloc(in_cap);
    char **it = malloc(o.load_batch * sizeof(*it));
    size_t *il = malloc(o.load_batch * sizeof(*il));
    char *arena = malloc((size_t)o.load_batch * o.item_len);
    if (!in || !it || !il || !arena)
        die("out of memory");
    for (unsigned j = 0; j < o.load_batch; j++)
        it[j] = arena + (size_t)j * o.item_len;
    uint64_t next = 0, expected = 0, got = 0, errors = 0;
    uint64_t window = LOAD_WINDOW * replies_per_request(o.load_batch, true);
    while (next < o.load || got < expected) {
        while (next < o.load && expected - got < window) {
            unsigned m = o.load - next < o.load_batch ? (unsigned)(o.load - next) : o.load_batch;
            for (unsigned j = 0; j < m; j++)
                il[j] = item_make(it[j], 'p', next + j, o.item_len);
            put_request(&out, it, il, m, true);
            next += m;
            expected += replies_per_request(m, true);
        }
        if (util_now() - t0 > o.timeout) {
            fprintf(stderr, "bench_net: --load did not finish within %g s\n", o.timeout);
            return 1;
        }
        struct pollfd p = {fd, (short)(POLLIN | (out.len > out_off ? POLLOUT : 0)), 0};
        if (poll(&p, 1, 1000) < 0 && errno != EINTR)
            die("poll: %s", strerror(errno));
        if (p.revents & POLLOUT) {
            ssize_t w = send(fd, out.p + out_off, out.len - out_off, MSG_NOSIGNAL);
            if (w < 0 && errno != EAGAIN && errno != EINTR) {
                fprintf(stderr, "bench_net: send: %s\n", strerror(errno));
                return 1;
            }
            if (w > 0)
                out_off += (size_t)w;
            if (out_off == out.len)
                out.len = out_off = 0;
            else if (out_off > out.len / 2) {
                memmove(out.p, out.p + out_off, out.len - out_off);
                out.len -= out_off;
                out_off = 0;
            }
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            if (in_len == in_cap) {
                in_cap *= 2;
                if (!(in = realloc(in, in_cap)))
                    die("out of memory");
            }
            ssize_t r = recv(fd, in + in_len, in_cap - in_len, 0);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
                fprintf(stderr, "bench_net: connection lost while loading (%llu of %llu replies)\n",
                        (unsigned long long)got, (unsigned long long)expected);
                return 1;
            }
            if (r > 0) {
                in_len += (size_t)r;
                size_t used = load_replies(in, in_len, &got, &errors);
                memmove(in, in + used, in_len - used);
                in_len -= used;
            }
        }
    }
    close(fd);
    double dt = util_now() - t0;
    print_settings();
    printf("\"mode\":\"load\",\"items\":%llu,\"item_len\":%u,\"filter\":\"%s\",",
           (unsigned long long)o.load, o.item_len, o.filter);
    if (o.kind == K_REDIS_BLOOM)
        printf("\"bloom_key\":\"%s\",\"bloom_bits\":%llu,\"bloom_k\":%u,", o.bloom_key,
               (unsigned long long)o.bloom_bits, o.bloom_k);
    printf("\"replies\":%llu,\"errors\":%llu,\"seconds\":%.2f,\"items_per_s\":%.0f}\n",
           (unsigned long long)got, (unsigned long long)errors, dt, (double)o.load / dt);
    free(out.p);
    free(in);
    free(it);
    free(il);
    free(arena);
    return errors ? 1 : 0;
}

/* Print item('p', i) for i < N, one per line: `bloomgate build` input; or
 * item('a', i), items certainly absent (for wrk's request list). */
static int run_dump(void)
{
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        die("out of memory");
    for (uint64_t i = 0; i < o.dump; i++) {
        if (cap - len < (size_t)o.item_len + 1) {
            if (util_write_all(STDOUT_FILENO, buf, len) != 0)
                return errno == EPIPE ? 0 : 1;
            len = 0;
        }
        len += item_make(buf + len, o.dump_ns, i, o.item_len);
        buf[len++] = '\n';
    }
    int rc = util_write_all(STDOUT_FILENO, buf, len) != 0;
    free(buf);
    return rc;
}

/* ---- options ---- */

static const char usage_text[] =
    "usage: bench_net [options]              closed-loop load; prints one JSON line\n"
    "       bench_net --load N [options]     add items 0..N-1 to the server\n"
    "       bench_net --dump N [--item-len L] print items 0..N-1, one per line\n"
    "       bench_net --dump-absent N         print N items that are never loaded\n"
    "  --proto P          line | http | redis-get | redis-mget | redis-bloom | resp-bf | bloomd\n"
    "                     (default line; resp-bf: BF.EXISTS, BF.MEXISTS, --load BF.MADD)\n"
    "  --host H --port N  server (default 127.0.0.1:7878)\n"
    "  --connections C    TCP connections (default 1)\n"
    "  --pipeline P       commands in flight per connection (default 1)\n"
    "  --items N          items per command: CHECK (1) / MCHECK (N), HTTP GET (1) / POST (N),\n"
    "                     MGET of N, N lookups of k GETBITs (default 1)\n"
    "  --present-share F  share of items that are present (default 0.5)\n"
    "  --keyspace N       present items are item(i), i < N: what was loaded (default 1M)\n"
    "  --item-len L       bytes per item, >= 40 (default 48)\n"
    "  --filter NAME      bloomgate filter (default bench)\n"
    "  --duration S       measured seconds (default 10)\n"
    "  --warmup S         seconds run before measuring (default 2)\n"
    "  --threads T        client threads (default 1)\n"
    "  --no-verify        count the answers but do not judge them (null server, nginx)\n"
    "  --http-post        POST .../check even for one item\n"
    "  --seed N           random choices of the request pool (default 1)\n"
    "  --pool-mb M        size of the preformatted request pool (default 128)\n"
    "  --label TEXT       copied into the JSON line\n"
    "  --server-pid P[,P] also print the CPU time (utime + stime, all threads, from\n"
    "                     /proc/P/stat) these processes used while measuring, and\n"
    "                     per item answered (server_cpu_ns_per_item)\n"
    "  --http-authz       with --proto http: GET /v1/authz/FILTER with the item as\n"
    "                     X-Forwarded-Proto, X-Forwarded-Host, X-Original-URI (nginx's\n"
    "                     auth_request); 204 is absent, 403 present\n"
    "  --url-items        send each item respelled for a url filter: upper-case host,\n"
    "                     port 8080 (build the filter from --dump with --format urls)\n"
    "  --bloom-bits M     redis-bloom bitmap size (default: for --keyspace at --bloom-fpr)\n"
    "  --bloom-fpr P      (default 0.0001)\n"
    "  --bloom-k K        redis-bloom probes per item (default 13)\n"
    "  --bloom-key KEY    redis-bloom bitmap key (default bloom)\n"
    "  --load-batch N     items per MADD / pipelined batch when loading (default 1000)\n"
    "  --timeout S        bound on --load (default 1800)\n"
    "  --window-signals   SIGUSR1 opens a window of the run, SIGUSR2 closes it, SIGINT or\n"
    "                     SIGTERM ends the run early; the JSON then also holds the\n"
    "                     before, window and after parts (items/s, p50/p99, max, errors)\n"
    "  --replay FILE      with --proto line: send FILE's lines as the requests, as\n"
    "                     written (context words too), cyclically; each line's items\n"
    "                     are counted (--items is ignored); no item counts as\n"
    "                     present, so false_positives is the YES answers (yes_share);\n"
    "                     a SCAN line is one item, its CLEAN a NO, its FOUND a YES\n";

static void usage(const char *why)
{
    if (why)
        fprintf(stderr, "bench_net: %s\n", why);
    fputs(usage_text, why ? stderr : stdout);
    exit(why ? 2 : 0);
}

static uint64_t arg_count(const char *name, const char *s, uint64_t min, uint64_t max)
{
    uint64_t v;
    if (util_parse_count(s, &v) != 0 || v < min || v > max) {
        fprintf(stderr, "bench_net: %s: '%s' is not a whole number in [%llu, %llu]\n", name, s,
                (unsigned long long)min, (unsigned long long)max);
        exit(2);
    }
    return v;
}

static double arg_double(const char *name, const char *s, double min, double max)
{
    double v;
    if (util_parse_double(s, &v) != 0 || v < min || v > max) {
        fprintf(stderr, "bench_net: %s: '%s' is not a number in [%g, %g]\n", name, s, min, max);
        exit(2);
    }
    return v;
}

static const char *arg_word(const char *name, const char *s)
{
    for (const char *p = s; *p; p++)
        if (*p < 0x21 || *p > 0x7e || *p == '"' || *p == '\\')
            die("%s: '%s' must be printable ASCII without spaces, quotes or backslashes", name, s);
    return s;
}

static void parse_args(int argc, char **argv)
{
    enum {
        O_PROTO = 256,
        O_HOST,
        O_PORT,
        O_CONNS,
        O_PIPE,
        O_ITEMS,
        O_SHARE,
        O_KEYSPACE,
        O_LEN,
        O_FILTER,
        O_DUR,
        O_WARM,
        O_THREADS,
        O_NOVERIFY,
        O_POST,
        O_SEED,
        O_POOL,
        O_LABEL,
        O_SPID,
        O_URLITEMS,
        O_AUTHZ,
        O_BBITS,
        O_BFPR,
        O_BK,
        O_BKEY,
        O_LBATCH,
        O_TIMEOUT,
        O_LOAD,
        O_DUMP,
        O_DUMPA,
        O_WSIG,
        O_REPLAY,
        O_HELP
    };
    static const struct option lo[] = {
        {"proto", 1, 0, O_PROTO},         {"host", 1, 0, O_HOST},
        {"port", 1, 0, O_PORT},           {"connections", 1, 0, O_CONNS},
        {"pipeline", 1, 0, O_PIPE},       {"items", 1, 0, O_ITEMS},
        {"present-share", 1, 0, O_SHARE}, {"keyspace", 1, 0, O_KEYSPACE},
        {"item-len", 1, 0, O_LEN},        {"filter", 1, 0, O_FILTER},
        {"duration", 1, 0, O_DUR},        {"warmup", 1, 0, O_WARM},
        {"threads", 1, 0, O_THREADS},     {"no-verify", 0, 0, O_NOVERIFY},
        {"http-post", 0, 0, O_POST},      {"seed", 1, 0, O_SEED},
        {"pool-mb", 1, 0, O_POOL},        {"label", 1, 0, O_LABEL},
        {"server-pid", 1, 0, O_SPID},     {"url-items", 0, 0, O_URLITEMS},
        {"http-authz", 0, 0, O_AUTHZ},    {"bloom-bits", 1, 0, O_BBITS},
        {"bloom-fpr", 1, 0, O_BFPR},      {"bloom-k", 1, 0, O_BK},
        {"bloom-key", 1, 0, O_BKEY},      {"load-batch", 1, 0, O_LBATCH},
        {"timeout", 1, 0, O_TIMEOUT},     {"load", 1, 0, O_LOAD},
        {"dump", 1, 0, O_DUMP},           {"dump-absent", 1, 0, O_DUMPA},
        {"window-signals", 0, 0, O_WSIG}, {"replay", 1, 0, O_REPLAY},
        {"help", 0, 0, O_HELP},           {0, 0, 0, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        const char *a = optarg;
        const char *name = c >= O_PROTO && c <= O_HELP ? lo[c - O_PROTO].name : "?";
        switch (c) {
        case O_PROTO: {
            size_t k = 0;
            while (k < sizeof(kind_names) / sizeof(kind_names[0]) && strcmp(a, kind_names[k]))
                k++;
            if (k == sizeof(kind_names) / sizeof(kind_names[0]))
                usage("--proto: line, http, redis-get, redis-mget, redis-bloom, resp-bf or bloomd");
            o.kind = (enum kind)k;
            break;
        }
        case O_HOST:
            o.host = arg_word(name, a);
            break;
        case O_PORT:
            o.port = (int)arg_count(name, a, 1, 65535);
            break;
        case O_CONNS:
            o.connections = (unsigned)arg_count(name, a, 1, 100000);
            break;
        case O_PIPE:
            o.pipeline = (unsigned)arg_count(name, a, 1, 1000000);
            break;
        case O_ITEMS:
            o.items = (unsigned)arg_count(name, a, 1, MAX_ITEMS);
            break;
        case O_SHARE:
            o.present_share = arg_double(name, a, 0, 1);
            break;
        case O_KEYSPACE:
            o.keyspace = arg_count(name, a, 0, PRESENT_MAX);
            break;
        case O_LEN:
            o.item_len = (unsigned)arg_count(name, a, ITEM_MIN_LEN, ITEM_MAX_LEN);
            break;
        case O_FILTER:
            o.filter = arg_word(name, a);
            break;
        case O_DUR:
            o.duration = arg_double(name, a, 0.1, 86400);
            break;
        case O_WARM:
            o.warmup = arg_double(name, a, 0, 3600);
            break;
        case O_THREADS:
            o.threads = (unsigned)arg_count(name, a, 1, 256);
            break;
        case O_NOVERIFY:
            o.verify = false;
            break;
        case O_POST:
            o.http_post = true;
            break;
        case O_SEED:
            o.seed = arg_count(name, a, 0, UINT64_MAX);
            break;
        case O_POOL:
            o.pool_bytes = arg_count(name, a, 1, 65536) << 20;
            break;
        case O_LABEL:
            o.label = arg_word(name, a);
            break;
        case O_SPID: {
            char *list = strdup(a), *save = NULL;
            if (!list)
                die("out of memory");
            for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                if (o.n_server_pids == sizeof(o.server_pids) / sizeof(o.server_pids[0]))
                    usage("--server-pid: at most 8 processes");
                o.server_pids[o.n_server_pids++] = (int)arg_count(name, w, 1, INT32_MAX);
            }
            free(list);
            break;
        }
        case O_URLITEMS:
            o.url_items = true;
            break;
        case O_AUTHZ:
            o.http_authz = true;
            break;
        case O_BBITS:
            o.bloom_bits = arg_count(name, a, 64, 1ull << 32);
            break;
        case O_BFPR:
            o.bloom_fpr = arg_double(name, a, 1e-12, 0.5);
            break;
        case O_BK:
            o.bloom_k = (unsigned)arg_count(name, a, 1, 64);
            break;
        case O_BKEY:
            o.bloom_key = arg_word(name, a);
            break;
        case O_LBATCH:
            o.load_batch = (unsigned)arg_count(name, a, 1, MAX_ITEMS);
            break;
        case O_TIMEOUT:
            o.timeout = arg_double(name, a, 1, 86400);
            break;
        case O_LOAD:
            o.load = arg_count(name, a, 1, PRESENT_MAX);
            o.do_load = true;
            break;
        case O_DUMP:
        case O_DUMPA:
            o.dump = arg_count(name, a, 0, c == O_DUMP ? PRESENT_MAX : ABSENT_MASK + 1);
            o.dump_ns = c == O_DUMP ? 'p' : 'a';
            o.do_dump = true;
            break;
        case O_WSIG:
            o.window_signals = true;
            break;
        case O_REPLAY:
            o.replay = a;
            break;
        case O_HELP:
            usage(NULL);
            break;
        default:
            usage("unknown option");
        }
    }
    if (optind < argc)
        usage("unexpected argument");
    if (o.do_load && o.do_dump)
        usage("--load and --dump exclude each other");
    if (o.http_authz && (o.kind != K_HTTP || o.items != 1 || o.http_post))
        usage("--http-authz takes --proto http, one item per request, no --http-post");
    if (o.replay && (o.kind != K_LINE || o.do_load || o.do_dump))
        usage("--replay takes --proto line and excludes --load and --dump");
    if (o.kind == K_REDIS_GET && o.items != 1)
        usage("redis-get sends one key per command; use redis-mget for --items N");
    if (o.present_share > 0 && o.keyspace == 0 && !o.do_load && !o.do_dump)
        usage("--present-share > 0 needs a --keyspace of present items");
    if (o.connections < o.threads)
        o.threads = o.connections;
    if (o.kind == K_REDIS_BLOOM && o.bloom_bits == 0) {
        /* Classic sizing for what was (or will be) loaded: m = -n ln p / (ln 2)^2. */
        uint64_t n = o.do_load ? o.load : o.keyspace ? o.keyspace : 1;
        o.bloom_bits = (uint64_t)ceil(-(double)n * log(o.bloom_fpr) / (M_LN2 * M_LN2));
        if (o.bloom_bits > 1ull << 32)
            usage("the Redis bitmap would pass 2^32 bits (SETBIT's limit); lower --keyspace");
    }
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    if (o.do_dump)
        return run_dump();
    if (o.do_load)
        return run_load();
    return run_bench();
}

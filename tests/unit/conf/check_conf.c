/* Unit tests for the config parser: values, defaults, every error path and the
 * exact wording of its messages ("PATH:LINE: directive: reason"). */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fname.h"
#include "conf/conf.h"

#define P "/etc/bloomgate/bloomgate.conf"
#define KIB 1024u
#define MIB (1024u * KIB)
#define GIB (1024u * MIB)

static char err[1024];

static struct conf *parse_as(const char *text, const char *path)
{
    memset(err, 0, sizeof(err));
    return conf_parse(text, strlen(text), path, err, sizeof(err));
}

static struct conf *parse(const char *text)
{
    return parse_as(text, P);
}

/* Parse text that must be valid; the message of a failure is the parser's. */
#define OK(text)                                                                                   \
    ({                                                                                             \
        struct conf *c_ = parse(text);                                                             \
        ck_assert_msg(c_ != NULL, "unexpected error: %s", err);                                    \
        c_;                                                                                        \
    })

/* Parse text that must fail with exactly this message. */
#define FAILS(text, want)                                                                          \
    do {                                                                                           \
        struct conf *c_ = parse(text);                                                             \
        ck_assert_msg(c_ == NULL, "parsed but should not: %s", text);                              \
        ck_assert_str_eq(err, want);                                                               \
    } while (0)

/* Parse text that must fail with a message starting "P:LINE: " and holding part. */
#define FAILS_WITH(text, line, part)                                                               \
    do {                                                                                           \
        struct conf *c_ = parse(text);                                                             \
        ck_assert_msg(c_ == NULL, "parsed but should not: %s", text);                              \
        char prefix_[64];                                                                          \
        snprintf(prefix_, sizeof(prefix_), P ":%u: ", (unsigned)(line));                           \
        ck_assert_msg(strncmp(err, prefix_, strlen(prefix_)) == 0, "want prefix %s, got %s",       \
                      prefix_, err);                                                               \
        ck_assert_msg(strstr(err, part) != NULL, "want \"%s\" in: %s", part, err);                 \
    } while (0)

static unsigned port_of(const struct conf_addr *a)
{
    if (a->ss.ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)&a->ss)->sin_port);
    return ntohs(((const struct sockaddr_in6 *)&a->ss)->sin6_port);
}

static void assert_v4(const struct conf_addr *a, const char *ip, unsigned port)
{
    char buf[INET_ADDRSTRLEN];
    ck_assert_int_eq(a->ss.ss_family, AF_INET);
    ck_assert_uint_eq(a->len, sizeof(struct sockaddr_in));
    ck_assert_ptr_nonnull(
        inet_ntop(AF_INET, &((const struct sockaddr_in *)&a->ss)->sin_addr, buf, sizeof(buf)));
    ck_assert_str_eq(buf, ip);
    ck_assert_uint_eq(port_of(a), port);
}

static void assert_v6(const struct conf_addr *a, const char *ip, unsigned port)
{
    char buf[INET6_ADDRSTRLEN];
    ck_assert_int_eq(a->ss.ss_family, AF_INET6);
    ck_assert_uint_eq(a->len, sizeof(struct sockaddr_in6));
    ck_assert_ptr_nonnull(
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&a->ss)->sin6_addr, buf, sizeof(buf)));
    ck_assert_str_eq(buf, ip);
    ck_assert_uint_eq(port_of(a), port);
}

static const char example[] = "listen 127.0.0.1:7878          # line protocol; repeatable\n"
                              "threads 2\n"
                              "admin_token \"s3cret\"\n"
                              "filter urls {\n"
                              "    file urls.bloom            # prebuilt with `bloomgate build`\n"
                              "}\n"
                              "filter sessions {\n"
                              "    capacity 10000000          # starts empty, filled by ADD\n"
                              "    fpr 0.0001\n"
                              "}\n";

static void check_example(const struct conf *c)
{
    ck_assert_uint_eq(c->n_listen, 1);
    assert_v4(&c->listen[0], "127.0.0.1", 7878);
    ck_assert_str_eq(c->listen[0].text, "127.0.0.1:7878");
    ck_assert_uint_eq(c->listen[0].line, 1);
    ck_assert_uint_eq(c->n_http_listen, 1);
    assert_v4(&c->http_listen[0], "127.0.0.1", 7879);
    ck_assert_uint_eq(c->threads, 2);
    ck_assert_str_eq(c->admin_token, "s3cret");

    ck_assert_uint_eq(c->n_filters, 2);
    const struct conf_filter *u = &c->filters[0], *s = &c->filters[1];
    ck_assert_str_eq(u->name, "urls");
    ck_assert_uint_eq(u->line, 4);
    ck_assert_str_eq(u->file, "/etc/bloomgate/urls.bloom");
    ck_assert_uint_eq(u->capacity, 0);
    ck_assert_str_eq(u->journal, "/etc/bloomgate/urls.bloom.journal");
    ck_assert(!u->journal_off);

    ck_assert_str_eq(s->name, "sessions");
    ck_assert_uint_eq(s->line, 7);
    ck_assert_ptr_null(s->file);
    ck_assert_uint_eq(s->capacity, 10000000);
    ck_assert_double_eq(s->fpr, 0.0001);
    ck_assert_int_eq(s->layout, CONF_LAYOUT_BLOCKED);
    ck_assert_int_eq(s->fsync, CONF_FSYNC_EVERYSEC);
    ck_assert_str_eq(s->journal, "/etc/bloomgate/sessions.journal");

    ck_assert_ptr_eq(conf_find_filter(c, "urls"), u);
    ck_assert_ptr_eq(conf_find_filter(c, "sessions"), s);
    ck_assert_ptr_null(conf_find_filter(c, "url"));
    ck_assert_ptr_null(conf_find_filter(c, "URLS"));
}

START_TEST(test_example)
{
    struct conf *c = OK(example);
    check_example(c);
    conf_free(c);
}
END_TEST

START_TEST(test_crlf)
{
    char text[sizeof(example) * 2];
    size_t n = 0;
    for (const char *s = example; *s; s++) {
        if (*s == '\n')
            text[n++] = '\r';
        text[n++] = *s;
    }
    text[n] = '\0';
    struct conf *c = OK(text);
    check_example(c);
    conf_free(c);

    /* Line numbers still count CRLF lines, and no CR leaks into a value. */
    FAILS("threads 1\r\n\r\nthreads 2\r\n", P ":3: threads: already set on line 1");
    c = OK("user nobody\r\n");
    ck_assert_str_eq(c->user, "nobody");
    conf_free(c);
    /* A CR anywhere but before the newline is not a line ending. */
    FAILS("threads 1\rthreads 2\n", P ":1: control character 0x0d");
}
END_TEST

START_TEST(test_defaults)
{
    struct conf *c = OK("");
    ck_assert_uint_eq(c->n_listen, 1);
    assert_v4(&c->listen[0], "127.0.0.1", 7878);
    ck_assert_str_eq(c->listen[0].text, "127.0.0.1:7878");
    ck_assert_uint_eq(c->listen[0].line, 0);
    ck_assert_uint_eq(c->n_http_listen, 1);
    assert_v4(&c->http_listen[0], "127.0.0.1", 7879);
    ck_assert_str_eq(c->http_listen[0].text, "127.0.0.1:7879");
    ck_assert(!c->http_off);
    ck_assert_uint_eq(c->threads, 0);
    ck_assert_ptr_null(c->admin_token);
    ck_assert_int_eq(c->log_level, CONF_LOG_INFO);
    ck_assert_ptr_null(c->user);
    ck_assert_ptr_null(c->pidfile);
    ck_assert_uint_eq(c->max_line, 64 * KIB);
    ck_assert_uint_eq(c->max_item, 8 * KIB);
    ck_assert_uint_eq(c->max_items, 10000);
    ck_assert_uint_eq(c->max_connections, 10000);
    ck_assert_uint_eq(c->idle_timeout, 300);
    ck_assert_uint_eq(c->max_output, 4 * MIB);
    ck_assert_uint_eq(c->shutdown_timeout, 5);
    ck_assert_uint_eq(c->http_max_body, 8 * MIB);
    ck_assert_uint_eq(c->http_max_headers, 64 * KIB);
    ck_assert_uint_eq(c->n_filters, 0);
    ck_assert_ptr_null(c->filters);
    ck_assert_str_eq(c->path, P);
    ck_assert_str_eq(c->dir, "/etc/bloomgate");
    conf_free(c);

    c = OK("filter f {\ncapacity 5\n}\n");
    ck_assert_uint_eq(c->n_filters, 1);
    const struct conf_filter *f = &c->filters[0];
    ck_assert_str_eq(f->name, "f");
    ck_assert_uint_eq(f->line, 1);
    ck_assert_ptr_null(f->file);
    ck_assert_uint_eq(f->capacity, 5);
    ck_assert_double_eq(f->fpr, 0.0001);
    ck_assert_int_eq(f->layout, CONF_LAYOUT_BLOCKED);
    ck_assert_int_eq(f->fsync, CONF_FSYNC_EVERYSEC);
    ck_assert_str_eq(f->journal, "/etc/bloomgate/f.journal");
    ck_assert(!f->journal_off);
    conf_free(c);

    /* Comments, blank lines and whitespace only: still every default. */
    c = OK("# nothing\n\n   \n\t# indented comment\n\t \n");
    ck_assert_uint_eq(c->n_listen, 1);
    ck_assert_uint_eq(c->max_line, 64 * KIB);
    conf_free(c);
}
END_TEST

START_TEST(test_every_directive)
{
    struct conf *c = OK("listen 10.0.0.1:1\n"
                        "http_listen 10.0.0.1:2\n"
                        "threads 1024\n"
                        "admin_token t\n"
                        "log_level debug\n"
                        "user nobody\n"
                        "pidfile /run/bloomgate.pid\n"
                        "max_line 64M\n"
                        "max_item 1M\n"
                        "max_items 1000000\n"
                        "max_connections 1\n"
                        "idle_timeout 86400\n"
                        "max_output 1G\n"
                        "shutdown_timeout 3600\n"
                        "http_max_body 1K\n"
                        "http_max_headers 16M\n"
                        "filter f {\n"
                        "  file /var/lib/bloomgate/f.bloom\n"
                        "  capacity 4096G\n"
                        "  fpr 0.5\n"
                        "  layout classic\n"
                        "  journal /var/lib/bloomgate/j\n"
                        "  fsync always\n"
                        "}\n");
    ck_assert_uint_eq(c->n_listen, 1);
    assert_v4(&c->listen[0], "10.0.0.1", 1);
    ck_assert_uint_eq(c->n_http_listen, 1);
    assert_v4(&c->http_listen[0], "10.0.0.1", 2);
    ck_assert_uint_eq(c->http_listen[0].line, 2);
    ck_assert_uint_eq(c->threads, 1024);
    ck_assert_str_eq(c->admin_token, "t");
    ck_assert_int_eq(c->log_level, CONF_LOG_DEBUG);
    ck_assert_str_eq(c->user, "nobody");
    ck_assert_str_eq(c->pidfile, "/run/bloomgate.pid");
    ck_assert_uint_eq(c->max_line, 64 * MIB);
    ck_assert_uint_eq(c->max_item, 1 * MIB);
    ck_assert_uint_eq(c->max_items, 1000000);
    ck_assert_uint_eq(c->max_connections, 1);
    ck_assert_uint_eq(c->idle_timeout, 86400);
    ck_assert_uint_eq(c->max_output, 1 * GIB);
    ck_assert_uint_eq(c->shutdown_timeout, 3600);
    ck_assert_uint_eq(c->http_max_body, 1 * KIB);
    ck_assert_uint_eq(c->http_max_headers, 16 * MIB);
    const struct conf_filter *f = &c->filters[0];
    ck_assert_str_eq(f->file, "/var/lib/bloomgate/f.bloom");
    ck_assert_uint_eq(f->capacity, 1ull << 42);
    ck_assert_double_eq(f->fpr, 0.5);
    ck_assert_int_eq(f->layout, CONF_LAYOUT_CLASSIC);
    ck_assert_str_eq(f->journal, "/var/lib/bloomgate/j");
    ck_assert_int_eq(f->fsync, CONF_FSYNC_ALWAYS);
    conf_free(c);

    /* The other ends of the ranges. */
    c = OK("threads 0\nmax_line 1K\nmax_item 1\nmax_items 1\nmax_connections 1000000\n"
           "idle_timeout 0\nmax_output 64K\nshutdown_timeout 0\nhttp_max_body 1G\n"
           "http_max_headers 1K\nlog_level error\n"
           "filter f {\ncapacity 1\nfpr 1e-12\nfsync no\n}\n");
    ck_assert_uint_eq(c->threads, 0);
    ck_assert_uint_eq(c->max_line, 1 * KIB);
    ck_assert_uint_eq(c->max_item, 1);
    ck_assert_uint_eq(c->max_items, 1);
    ck_assert_uint_eq(c->max_connections, 1000000);
    ck_assert_uint_eq(c->idle_timeout, 0);
    ck_assert_uint_eq(c->max_output, 64 * KIB);
    ck_assert_uint_eq(c->shutdown_timeout, 0);
    ck_assert_uint_eq(c->http_max_body, 1 * GIB);
    ck_assert_uint_eq(c->http_max_headers, 1 * KIB);
    ck_assert_int_eq(c->log_level, CONF_LOG_ERROR);
    ck_assert_uint_eq(c->filters[0].capacity, 1);
    ck_assert_double_eq(c->filters[0].fpr, 1e-12);
    ck_assert_int_eq(c->filters[0].fsync, CONF_FSYNC_NO);
    conf_free(c);
}
END_TEST

START_TEST(test_integer_errors)
{
    FAILS("threads abc", P ":1: threads: \"abc\" is not a number");
    FAILS("threads 2x", P ":1: threads: \"2x\" has junk after the number");
    FAILS("threads -1", P ":1: threads: -1 is negative (0 to 1024)");
    FAILS("threads 99999999999999999999999",
          P ":1: threads: 99999999999999999999999 is too large (0 to 1024)");
    FAILS("threads 18446744073709551616",
          P ":1: threads: 18446744073709551616 is too large (0 to 1024)");
    FAILS("threads 18446744073709551615",
          P ":1: threads: 18446744073709551615 is out of range (0 to 1024)");
    FAILS("threads 1025", P ":1: threads: 1025 is out of range (0 to 1024)");
    /* 2^32 + 2 would wrap to 2 if stored in 32 bits before the range check. */
    FAILS("threads 4294967298", P ":1: threads: 4294967298 is out of range (0 to 1024)");
    FAILS("threads 4k", P ":1: threads: \"4k\" has junk after the number");
    FAILS("threads +4", P ":1: threads: \"+4\" is not a number");
    FAILS("threads 0x10", P ":1: threads: \"0x10\" has junk after the number");
    FAILS("threads 1.5", P ":1: threads: \"1.5\" has junk after the number");
    FAILS("threads \"\"", P ":1: threads: \"\" is not a number");
    FAILS("threads \" 4\"", P ":1: threads: \" 4\" is not a number");
    FAILS("max_items 0", P ":1: max_items: 0 is out of range (1 to 1000000)");
    FAILS("max_items 1000001", P ":1: max_items: 1000001 is out of range (1 to 1000000)");
    FAILS("max_connections 0", P ":1: max_connections: 0 is out of range (1 to 1000000)");
    FAILS("idle_timeout 86401", P ":1: idle_timeout: 86401 is out of range (0 to 86400)");
    FAILS("shutdown_timeout 3601", P ":1: shutdown_timeout: 3601 is out of range (0 to 3600)");
    FAILS("shutdown_timeout -0", P ":1: shutdown_timeout: -0 is negative (0 to 3600)");
    /* The line is the line of the value, after comments and blanks. */
    FAILS("# c\n\nthreads 2\n  \nidle_timeout x\n", P ":5: idle_timeout: \"x\" is not a number");
}
END_TEST

START_TEST(test_sizes)
{
    static const struct {
        const char *text;
        size_t want;
    } cases[] = {
        {"max_line 64k", 64 * KIB},   {"max_line 64K", 64 * KIB},
        {"max_line 64KiB", 64 * KIB}, {"max_line 2m", 2 * MIB},
        {"max_line 2M", 2 * MIB},     {"max_line 2MiB", 2 * MIB},
        {"max_line 65536", 65536},    {"max_line 1024\nmax_item 1", 1024},
        {"max_line 0064K", 64 * KIB}, {"max_output 1g", 1 * GIB},
        {"max_output 1G", 1 * GIB},   {"max_output 1GiB", 1 * GIB},
        {"max_output 65537", 65537},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct conf *c = OK(cases[i].text);
        size_t got = strncmp(cases[i].text, "max_line", 8) == 0 ? c->max_line : c->max_output;
        ck_assert_msg(got == cases[i].want, "%s: got %zu, want %zu", cases[i].text, got,
                      cases[i].want);
        conf_free(c);
    }
    struct conf *c = OK("filter f {\ncapacity 10M\n}\n");
    ck_assert_uint_eq(c->filters[0].capacity, 10 * MIB);
    conf_free(c);
}
END_TEST

START_TEST(test_size_errors)
{
    FAILS("max_line 64q",
          P ":1: max_line: \"64q\" has an unknown size suffix (use K, KiB, M, MiB, G or GiB)");
    FAILS_WITH("max_line 64KB", 1, "max_line: \"64KB\" has an unknown size suffix");
    FAILS_WITH("max_line 64kib", 1, "max_line: \"64kib\" has an unknown size suffix");
    FAILS_WITH("max_line 64T", 1, "max_line: \"64T\" has an unknown size suffix");
    FAILS_WITH("max_line 1.5M", 1, "max_line: \"1.5M\" has an unknown size suffix");
    FAILS("max_line K", P ":1: max_line: \"K\" is not a number");
    FAILS("max_line -1k", P ":1: max_line: -1k is negative (1K to 64M)");
    FAILS("max_line 512", P ":1: max_line: 512 is out of range (1K to 64M)");
    FAILS("max_line 1023", P ":1: max_line: 1023 is out of range (1K to 64M)");
    FAILS("max_line 65M", P ":1: max_line: 65M is out of range (1K to 64M)");
    FAILS("max_item 1048577", P ":1: max_item: 1048577 is out of range (1 to 1M)");
    FAILS("max_item 0", P ":1: max_item: 0 is out of range (1 to 1M)");
    FAILS("max_output 63K", P ":1: max_output: 63K is out of range (64K to 1G)");
    FAILS("http_max_body 2G", P ":1: http_max_body: 2G is out of range (1K to 1G)");
    FAILS("http_max_headers 17M", P ":1: http_max_headers: 17M is out of range (1K to 16M)");
    /* The suffix multiplication overflows 64 bits; that must not wrap into range. */
    FAILS("max_output 17179869184G", P ":1: max_output: 17179869184G is too large (64K to 1G)");
    FAILS("max_output 99999999999999999999K",
          P ":1: max_output: 99999999999999999999K is too large (64K to 1G)");
    FAILS("filter f {\ncapacity 4097G\n}", P ":2: capacity: 4097G is out of range (1 to 4096G)");
    FAILS("filter f {\ncapacity 4398046511105\n}",
          P ":2: capacity: 4398046511105 is out of range (1 to 4096G)");
    FAILS("filter f {\ncapacity 0\n}", P ":2: capacity: 0 is out of range (1 to 4096G)");
    FAILS("filter f {\ncapacity -5\n}", P ":2: capacity: -5 is negative (1 to 4096G)");
    FAILS("max_line 64 k", P ":1: max_line: too many values (quote a value that contains spaces)");
}
END_TEST

START_TEST(test_doubles)
{
    static const struct {
        const char *v;
        double want;
    } good[] = {{"0.5", 0.5},   {"1e-12", 1e-12}, {"0.01", 0.01},
                {"1E-3", 1e-3}, {".25", 0.25},    {"5e-1", 0.5}};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char text[128];
        snprintf(text, sizeof(text), "filter f {\ncapacity 1\nfpr %s\n}\n", good[i].v);
        struct conf *c = OK(text);
        ck_assert_double_eq(c->filters[0].fpr, good[i].want);
        conf_free(c);
    }

    static const struct {
        const char *v;
        const char *want;
    } bad[] = {
        {"0.6", "fpr: 0.6 is out of range (1e-12 to 0.5)"},
        {"1e-13", "fpr: 1e-13 is out of range (1e-12 to 0.5)"},
        {"0", "fpr: 0 is out of range (1e-12 to 0.5)"},
        {"-0.1", "fpr: -0.1 is out of range (1e-12 to 0.5)"},
        {"1e999", "fpr: 1e999 is out of range (1e-12 to 0.5)"},
        {"1e-400", "fpr: 1e-400 is out of range (1e-12 to 0.5)"},
        {"abc", "fpr: \"abc\" is not a number"},
        {"nan", "fpr: \"nan\" is not a number"},
        {"inf", "fpr: \"inf\" is not a number"},
        {"0x1p-3", "fpr: \"0x1p-3\" is not a number"},
        {"0.1.2", "fpr: \"0.1.2\" is not a number"},
        {"0.01%", "fpr: \"0.01%\" is not a number"},
        {".", "fpr: \".\" is not a number"},
        {"\"\"", "fpr: \"\" is not a number"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[128], want[256];
        snprintf(text, sizeof(text), "filter f {\ncapacity 1\nfpr %s\n}\n", bad[i].v);
        snprintf(want, sizeof(want), P ":3: %s", bad[i].want);
        FAILS(text, want);
    }
}
END_TEST

START_TEST(test_strings)
{
    char text[600], token[300];
    memset(token, 'x', 256);
    token[256] = '\0';
    snprintf(text, sizeof(text), "admin_token %s\n", token);
    struct conf *c = OK(text);
    ck_assert_str_eq(c->admin_token, token);
    conf_free(c);

    /* Too long, and the secret is never echoed back into a log. */
    memset(token, 'y', 257);
    token[257] = '\0';
    snprintf(text, sizeof(text), "admin_token %s\n", token);
    FAILS(text, P ":1: admin_token: a value of 257 bytes is out of range (1 to 256 bytes)");
    ck_assert_ptr_null(strstr(err, "yyy"));
    FAILS("admin_token \"\"",
          P ":1: admin_token: a value of 0 bytes is out of range (1 to 256 bytes)");
    FAILS("admin_token", P ":1: admin_token: missing value");
    FAILS("user \"\"", P ":1: user: a value of 0 bytes is out of range (1 to 256 bytes)");
}
END_TEST

START_TEST(test_enums)
{
    static const struct {
        const char *v;
        enum conf_log_level want;
    } levels[] = {{"debug", CONF_LOG_DEBUG},
                  {"info", CONF_LOG_INFO},
                  {"warn", CONF_LOG_WARN},
                  {"error", CONF_LOG_ERROR}};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        char text[64];
        snprintf(text, sizeof(text), "log_level %s", levels[i].v);
        struct conf *c = OK(text);
        ck_assert_int_eq(c->log_level, levels[i].want);
        ck_assert_str_eq(conf_log_level_name(c->log_level), levels[i].v);
        conf_free(c);
    }
    FAILS("log_level verbose",
          P ":1: log_level: \"verbose\" is not one of: debug, info, warn, error");
    FAILS("log_level INFO", P ":1: log_level: \"INFO\" is not one of: debug, info, warn, error");
    FAILS("filter f {\ncapacity 1\nlayout Blocked\n}",
          P ":3: layout: \"Blocked\" is not one of: blocked, classic, counting");
    FAILS("filter f {\ncapacity 1\nfsync sometimes\n}",
          P ":3: fsync: \"sometimes\" is not one of: always, everysec, no");
    ck_assert_str_eq(conf_layout_name(CONF_LAYOUT_BLOCKED), "blocked");
    ck_assert_str_eq(conf_layout_name(CONF_LAYOUT_CLASSIC), "classic");
    ck_assert_str_eq(conf_layout_name(CONF_LAYOUT_COUNTING), "counting");
    ck_assert_str_eq(conf_fsync_name(CONF_FSYNC_ALWAYS), "always");
    ck_assert_str_eq(conf_fsync_name(CONF_FSYNC_EVERYSEC), "everysec");
    ck_assert_str_eq(conf_fsync_name(CONF_FSYNC_NO), "no");
}
END_TEST

START_TEST(test_paths)
{
    struct conf *c = OK("pidfile run/bloomgate.pid\n"
                        "filter a {\n file a.bloom\n journal ../j/a.log\n}\n"
                        "filter b {\n file /srv/b.bloom\n}\n"
                        "filter c {\n file \"with space.bloom\"\n}\n");
    ck_assert_str_eq(c->pidfile, "/etc/bloomgate/run/bloomgate.pid");
    ck_assert_str_eq(c->filters[0].file, "/etc/bloomgate/a.bloom");
    ck_assert_str_eq(c->filters[0].journal, "/etc/bloomgate/../j/a.log");
    ck_assert_str_eq(c->filters[1].file, "/srv/b.bloom");
    ck_assert_str_eq(c->filters[1].journal, "/srv/b.bloom.journal");
    ck_assert_str_eq(c->filters[2].file, "/etc/bloomgate/with space.bloom");
    conf_free(c);

    /* A config at the root, and one named with a trailing run of slashes. */
    c = parse_as("pidfile x.pid", "/b.conf");
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_str_eq(c->dir, "/");
    ck_assert_str_eq(c->pidfile, "/x.pid");
    conf_free(c);
    c = parse_as("pidfile x.pid", "/etc//bloomgate//b.conf");
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_str_eq(c->dir, "/etc//bloomgate");
    ck_assert_str_eq(c->pidfile, "/etc//bloomgate/x.pid");
    conf_free(c);

    /* A relative config path is made absolute against the current directory,
     * since the daemon may change directory before it opens anything. */
    char *cwd = getcwd(NULL, 0), want[PATH_MAX + 64];
    ck_assert_ptr_nonnull(cwd);
    c = parse_as("pidfile x.pid", "sub/b.conf");
    ck_assert_msg(c != NULL, "%s", err);
    snprintf(want, sizeof(want), "%s/sub", cwd);
    ck_assert_str_eq(c->dir, want);
    snprintf(want, sizeof(want), "%s/sub/x.pid", cwd);
    ck_assert_str_eq(c->pidfile, want);
    ck_assert_str_eq(c->path, "sub/b.conf");
    conf_free(c);
    c = parse_as("pidfile x.pid", "b.conf");
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_str_eq(c->dir, cwd);
    conf_free(c);

    /* No path at all: messages say so and paths resolve against the cwd. */
    c = parse_as("pidfile x.pid", NULL);
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_ptr_null(c->path);
    ck_assert_str_eq(c->dir, cwd);
    conf_free(c);
    ck_assert_ptr_null(parse_as("bogus 1", NULL));
    ck_assert_str_eq(err, "(config):1: unknown directive \"bogus\"");
    free(cwd);

    FAILS("pidfile \"\"", P ":1: pidfile: empty path");
    char text[PATH_MAX + 64];
    snprintf(text, sizeof(text), "pidfile /%0*d", PATH_MAX, 0);
    FAILS_WITH(text, 1, "pidfile: path longer than");
}
END_TEST

START_TEST(test_quotes_and_comments)
{
    struct conf *c = OK("admin_token \"a b # c\"\n");
    ck_assert_str_eq(c->admin_token, "a b # c");
    conf_free(c);
    c = OK("admin_token \"a\\\"b\\\\c\"   # comment with \"quotes\"\n");
    ck_assert_str_eq(c->admin_token, "a\"b\\c");
    conf_free(c);
    c = OK("admin_token \"x\"# comment right after the quote\n");
    ck_assert_str_eq(c->admin_token, "x");
    conf_free(c);
    c = OK("admin_token \"}\"\n");
    ck_assert_str_eq(c->admin_token, "}");
    conf_free(c);
    c = OK("threads 4 # four\nlog_level warn#no space\n\tuser\t\"nobody\"\t\n");
    ck_assert_uint_eq(c->threads, 4);
    ck_assert_int_eq(c->log_level, CONF_LOG_WARN);
    ck_assert_str_eq(c->user, "nobody");
    conf_free(c);
    /* '#' ends the word outside quotes: the rest is a comment, not the value. */
    c = OK("admin_token s3c#ret\n");
    ck_assert_str_eq(c->admin_token, "s3c");
    conf_free(c);

    FAILS("admin_token \"abc", P ":1: unterminated quoted string");
    FAILS("admin_token \"abc\\", P ":1: unterminated quoted string");
    FAILS("admin_token \"abc\\\"", P ":1: unterminated quoted string");
    FAILS("admin_token \"a\\nb\"",
          P ":1: unknown escape \"\\n\" in quoted string (only \\\" and \\\\)");
    FAILS("admin_token \"abc\"def", P ":1: unexpected text after a closing quote");
    FAILS("admin_token ab\"c\"", P ":1: unexpected quote inside a word (quote all of it)");
    FAILS("admin_token \"a\" \"b\"",
          P ":1: admin_token: too many values (quote a value that contains spaces)");
    /* Control characters are refused even inside quotes; NUL included. */
    FAILS("admin_token \"a\x01\"", P ":1: control character 0x01");
    FAILS("admin_token a\x7f", P ":1: control character 0x7f");
    static const char nul[] = "threads 1\nthreads\0 2\n";
    ck_assert_ptr_null(conf_parse(nul, sizeof(nul) - 1, P, err, sizeof(err)));
    ck_assert_str_eq(err, P ":2: control character 0x00");

    /* A value does not need a final newline; a UTF-8 BOM is skipped. */
    c = OK("\xEF\xBB\xBFthreads 3");
    ck_assert_uint_eq(c->threads, 3);
    conf_free(c);
    /* len, not the NUL, ends the text. */
    c = conf_parse("threads 3garbage", 9, P, err, sizeof(err));
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_uint_eq(c->threads, 3);
    conf_free(c);
}
END_TEST

START_TEST(test_structure_errors)
{
    FAILS("threads 2\nlisen 127.0.0.1:7878\n", P ":2: unknown directive \"lisen\"");
    FAILS("Threads 2", P ":1: unknown directive \"Threads\"");
    FAILS("threads", P ":1: threads: missing value");
    FAILS("threads # two", P ":1: threads: missing value");
    FAILS("threads 1 2", P ":1: threads: too many values (quote a value that contains spaces)");
    FAILS("threads 1\nthreads 1\n", P ":2: threads: already set on line 1");
    FAILS("admin_token a\n\nadmin_token a\n", P ":3: admin_token: already set on line 1");
    FAILS("capacity 10", P ":1: capacity: only allowed inside a filter block");
    FAILS("filter f {\nthreads 2\n}", P ":2: threads: not allowed inside a filter block");
    FAILS("filter f {\ncapacity 1\nfpr 0.1\nfpr 0.2\n}", P ":4: fpr: already set on line 3");
    FAILS("filter f {\ncapacity 1\njournal off\njournal off\n}",
          P ":4: journal: already set on line 3");
}
END_TEST

START_TEST(test_filter_blocks)
{
    /* The same directive in two blocks is not a duplicate. */
    struct conf *c = OK("filter a {\ncapacity 1\nfpr 0.1\n}\nfilter b {\ncapacity 2\nfpr 0.2\n}\n");
    ck_assert_uint_eq(c->n_filters, 2);
    ck_assert_double_eq(c->filters[0].fpr, 0.1);
    ck_assert_double_eq(c->filters[1].fpr, 0.2);
    conf_free(c);

    /* Many blocks: the array grows, order is kept. */
    char text[8192];
    size_t n = 0;
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "filter f%d {\ncapacity %d\n}\n", i,
                              i + 1);
    c = OK(text);
    ck_assert_uint_eq(c->n_filters, 40);
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof(name), "f%d", i);
        ck_assert_str_eq(c->filters[i].name, name);
        ck_assert_uint_eq(c->filters[i].capacity, (uint64_t)i + 1);
        ck_assert_uint_eq(c->filters[i].line, (unsigned)(3 * i + 1));
    }
    conf_free(c);

    c = OK("filter a.b-c_D9 {\nfile x\n}\n");
    ck_assert_str_eq(c->filters[0].name, "a.b-c_D9");
    conf_free(c);

    FAILS("filter a {\ncapacity 1\n}\nfilter a {\ncapacity 2\n}\n",
          P ":4: filter \"a\" is already defined on line 1");
    FAILS("filter \"a b\" {\n}", P ":1: filter: filter name \"a b\" is invalid: use " FNAME_RULE);
    FAILS_WITH("filter \"\" {\n}", 1, "filter name \"\" is invalid");
    FAILS("threads 1\nfilter a {\ncapacity 1\n",
          P ":2: filter \"a\" is not closed (missing \"}\")");
    FAILS("}", P ":1: \"}\" without an open block");
    FAILS("filter a {\ncapacity 1\n}\n}\n", P ":4: \"}\" without an open block");
    FAILS("filter a {\ncapacity 1\nfilter b {\n}\n}\n",
          P ":3: filter blocks cannot be nested (\"a\" from line 1 is open)");
    FAILS("filter", P ":1: filter: missing name (expected: filter NAME {)");
    FAILS("filter a\n{\ncapacity 1\n}\n",
          P ":1: filter: expected \"{\" after the name, on the same line");
    FAILS("filter a \"{\"\n}\n", P ":1: filter: expected \"{\" after the name, on the same line");
    FAILS("filter a x {\n}\n", P ":1: filter: expected \"{\" after the name, on the same line");
    FAILS("filter a { capacity 1 }\n", P ":1: filter: unexpected text after \"{\"");
    FAILS("filter a {\ncapacity 1\n} # ok\nfilter b {\ncapacity 1\n} x\n",
          P ":6: unexpected text after \"}\"");
    FAILS("{\n", P ":1: \"{\" must end the `filter NAME {` line");
    FAILS("filter a {\ncapacity 1 }\n", P ":2: capacity: too many values (quote a value that "
                                          "contains spaces)");
    FAILS("threads 1\nfilter a {\nfpr 0.01\n}\n",
          P ":2: filter \"a\" needs \"file\" (prebuilt) or \"capacity\" (empty)");
    FAILS("filter a {\n}\n",
          P ":1: filter \"a\" needs \"file\" (prebuilt) or \"capacity\" (empty)");
}
END_TEST

START_TEST(test_journal)
{
    struct conf *c = OK("filter a {\nfile a.bloom\n}\n"
                        "filter b {\ncapacity 1\n}\n"
                        "filter c {\ncapacity 1\njournal off\n}\n"
                        "filter d {\nfile d.bloom\njournal off\n}\n"
                        "filter e {\ncapacity 1\njournal journals/e\nfsync no\n}\n");
    ck_assert_str_eq(c->filters[0].journal, "/etc/bloomgate/a.bloom.journal");
    ck_assert(!c->filters[0].journal_off);
    ck_assert_str_eq(c->filters[1].journal, "/etc/bloomgate/b.journal");
    ck_assert_ptr_null(c->filters[2].journal);
    ck_assert(c->filters[2].journal_off);
    ck_assert_ptr_null(c->filters[3].journal);
    ck_assert(c->filters[3].journal_off);
    ck_assert_str_eq(c->filters[3].file, "/etc/bloomgate/d.bloom");
    ck_assert_str_eq(c->filters[4].journal, "/etc/bloomgate/journals/e");
    ck_assert(!c->filters[4].journal_off);
    conf_free(c);

    /* Two filters writing one journal would corrupt it. */
    FAILS("filter a {\ncapacity 1\njournal j\n}\nfilter b {\ncapacity 1\njournal j\n}\n",
          P ":7: filter \"b\": journal /etc/bloomgate/j is also used by filter \"a\" (line 1)");
    FAILS("filter x {\nfile b.bloom\n}\nfilter b {\ncapacity 1\njournal b.bloom.journal\n}\n",
          P ":6: filter \"b\": journal /etc/bloomgate/b.bloom.journal is also used by filter "
            "\"x\" (line 1)");
    FAILS("filter a {\ncapacity 1\njournal x.bloom\n}\nfilter b {\nfile x.bloom\n}\n", P
          ":6: filter \"b\": file /etc/bloomgate/x.bloom is the journal of filter \"a\" (line 1)");
    FAILS("filter a {\ncapacity 1\n}\nfilter b {\ncapacity 1\njournal a.journal\n}\n",
          P ":6: filter \"b\": journal /etc/bloomgate/a.journal is also used by filter \"a\" "
            "(line 1)");
    FAILS("filter a {\nfile x\njournal x\n}\n",
          P ":3: filter \"a\": journal and file are the same path");
    /* Two filters reading one prebuilt file is fine. */
    c = OK("filter a {\nfile x\njournal off\n}\nfilter b {\nfile x\njournal off\n}\n");
    conf_free(c);
}
END_TEST

/* `window` and `slices`: durations, and what a window cannot go with. */
START_TEST(test_window)
{
    struct conf *c = OK("filter a {\ncapacity 100\nwindow 24h\n}\n"
                        "filter b {\ncapacity 100\nwindow 90\nslices 3\n}\n"
                        "filter c {\ncapacity 100\nwindow 1500ms\nslices 1\n}\n"
                        "filter d {\ncapacity 100\n}\n");
    ck_assert_int_eq(c->filters[0].window_ms, 86400000);
    ck_assert_uint_eq(c->filters[0].slices, 4);
    ck_assert_int_eq(c->filters[1].window_ms, 90000);
    ck_assert_uint_eq(c->filters[1].slices, 3);
    ck_assert_int_eq(c->filters[2].window_ms, 1500);
    ck_assert_int_eq(c->filters[3].window_ms, 0);
    conf_free(c);
    FAILS("filter a {\nfile x\ncapacity 100\nlayout counting\n}\n",
          P ":1: filter \"a\": \"layout counting\" is for a filter filled at run time "
            "(\"capacity\", no \"file\"): a built file has its own layout");
    FAILS("filter a {\ncapacity 100\nlayout counting\nwindow 1h\n}\n",
          P ":1: filter \"a\": \"window\" and \"layout counting\" do not combine: a windowed "
            "filter's items expire, a counting filter's are removed");
    FAILS("filter a {\nfile x\nwindow 1h\n}\n",
          P ":1: filter \"a\": \"window\" is for a filter filled at run time (\"capacity\"); "
            "a built \"file\" cannot expire its items");
    FAILS("filter a {\ncapacity 1\nwindow 1w\n}\n",
          P ":1: filter \"a\": window \"1w\": not a duration from 1s to 365d (a count and a "
            "unit: ms, s, m, h, d)");
    FAILS("filter a {\ncapacity 1\nwindow h\n}\n",
          P ":1: filter \"a\": window \"h\": not a duration from 1s to 365d (a count and a "
            "unit: ms, s, m, h, d)");
    FAILS("filter a {\ncapacity 1\nwindow 366d\n}\n",
          P ":1: filter \"a\": window \"366d\": not a duration from 1s to 365d (a count and a "
            "unit: ms, s, m, h, d)");
    FAILS("filter a {\ncapacity 1\nwindow 999ms\n}\n",
          P ":1: filter \"a\": window \"999ms\": shorter than a second");
    FAILS("filter a {\ncapacity 1\nwindow 1001ms\nslices 2\n}\n",
          P ":1: filter \"a\": window \"1001ms\" (1001 ms) is not a whole number of "
            "milliseconds per slice with slices 2");
    FAILS("filter a {\ncapacity 1\nwindow 1h\nslices 65\n}\n",
          P ":4: slices: 65 is out of range (1 to 64)");
}
END_TEST

/* `growth` and `max_memory`: what a growing filter cannot go with. */
START_TEST(test_growth)
{
    struct conf *c = OK("filter a {\ncapacity 100\ngrowth on\nmax_memory 64M\n}\n"
                        "filter b {\ncapacity 100\ngrowth off\n}\n"
                        "filter c {\ncapacity 100\n}\n");
    ck_assert_uint_eq(c->filters[0].growth, 1);
    ck_assert_uint_eq(c->filters[0].max_memory, 64ull << 20);
    ck_assert_uint_eq(c->filters[1].growth, 0);
    ck_assert_uint_eq(c->filters[2].growth, 0);
    ck_assert_uint_eq(c->filters[2].max_memory, 0);
    conf_free(c);
    FAILS("filter a {\nfile x\ngrowth on\n}\n",
          P ":3: filter \"a\": \"growth on\" is for a filter filled at run time "
            "(\"capacity\"); a built \"file\" has a fixed size");
    FAILS("filter a {\ncapacity 1\nwindow 1h\ngrowth on\n}\n",
          P ":4: filter \"a\": \"growth on\" and \"window\" cannot be combined (a windowed "
            "filter's slices are sized for its capacity)");
    FAILS("filter a {\ncapacity 1\nmax_memory 1M\n}\n",
          P ":3: filter \"a\": \"max_memory\" bounds a growing filter; it needs \"growth on\"");
    FAILS("filter a {\ncapacity 1\ngrowth yes\n}\n",
          P ":3: growth: \"yes\" is not one of: off, on");
}
END_TEST

/* `full`: what a fixed-size filter does with an add past its capacity. */
START_TEST(test_full)
{
    struct conf *c = OK("filter a {\ncapacity 100\nfull refuse\n}\n"
                        "filter b {\ncapacity 100\nfull accept\n}\n"
                        "filter c {\ncapacity 100\n}\n");
    ck_assert_uint_eq(c->filters[0].full, CONF_FULL_REFUSE);
    ck_assert_uint_eq(c->filters[1].full, CONF_FULL_ACCEPT);
    ck_assert_uint_eq(c->filters[2].full, CONF_FULL_ACCEPT);
    conf_free(c);
    FAILS("filter a {\ncapacity 1\ngrowth on\nfull refuse\n}\n",
          P ":4: filter \"a\": \"full refuse\" is for a fixed-size filter; a growing filter "
            "grows instead");
    FAILS("filter a {\ncapacity 1\nwindow 1h\nfull refuse\n}\n",
          P ":4: filter \"a\": \"full refuse\" is for a fixed-size filter; a windowed filter "
            "forgets instead");
    FAILS("filter a {\ncapacity 1\nfull no\n}\n",
          P ":3: full: \"no\" is not one of: accept, refuse");
}
END_TEST

START_TEST(test_listen)
{
    struct conf *c = OK("listen 127.0.0.1:7000\n"
                        "listen [::1]:7878\n"
                        "listen *:0\n"
                        "listen [::]:9\n"
                        "listen 0.0.0.0:0\n"
                        "http_listen [::1]:8080\n"
                        "http_listen 10.1.2.3:65535\n");
    ck_assert_uint_eq(c->n_listen, 5);
    assert_v4(&c->listen[0], "127.0.0.1", 7000);
    assert_v6(&c->listen[1], "::1", 7878);
    ck_assert_str_eq(c->listen[1].text, "[::1]:7878");
    ck_assert_uint_eq(c->listen[1].line, 2);
    assert_v4(&c->listen[2], "0.0.0.0", 0);
    ck_assert_str_eq(c->listen[2].text, "*:0");
    assert_v6(&c->listen[3], "::", 9);
    assert_v4(&c->listen[4], "0.0.0.0", 0); /* port 0 twice: two ephemeral ports */
    ck_assert_uint_eq(c->n_http_listen, 2);
    assert_v6(&c->http_listen[0], "::1", 8080);
    assert_v4(&c->http_listen[1], "10.1.2.3", 65535);
    ck_assert(!c->http_off);
    conf_free(c);

    /* Only http_listen given: listen keeps its default, and vice versa. */
    c = OK("http_listen 127.0.0.1:9000");
    ck_assert_uint_eq(c->n_listen, 1);
    assert_v4(&c->listen[0], "127.0.0.1", 7878);
    ck_assert_uint_eq(c->n_http_listen, 1);
    assert_v4(&c->http_listen[0], "127.0.0.1", 9000);
    conf_free(c);

    FAILS("listen 127.0.0.1:7000\nlisten 127.0.0.1:7000\n",
          P ":2: listen: 127.0.0.1:7000 is already a listener (listen on line 1)");
    FAILS("listen [::1]:7000\nhttp_listen [0::1]:7000\n",
          P ":2: http_listen: [0::1]:7000 is already a listener (listen on line 1)");
    FAILS("\nhttp_listen 127.0.0.1:7878\n", P
          ":2: http_listen: 127.0.0.1:7878 is also the default of listen (set listen explicitly)");
    FAILS("listen 127.0.0.1:7879\n",
          P ":1: listen: 127.0.0.1:7879 is also the default of http_listen "
            "(set http_listen explicitly)");
    FAILS("listen localhost:7878",
          P ":1: listen: \"localhost:7878\": \"localhost\" is not a numeric IPv4 address");
    FAILS("listen ::1:7878",
          P ":1: listen: \"::1:7878\": an IPv6 address needs brackets, as in [::1]:7878");
    FAILS("listen 127.0.0.1",
          P ":1: listen: \"127.0.0.1\" has no port (expected HOST:PORT, [IPV6]:PORT or *:PORT)");
    FAILS("listen 127.0.0.1:65536",
          P ":1: listen: \"127.0.0.1:65536\": port \"65536\" is not a number from 0 to 65535");
    FAILS_WITH("listen off", 1, "listen: \"off\" has no port");
    FAILS("listen", P ":1: listen: missing value");
}
END_TEST

/* bloomd_listen (bloomd's text protocol): none unless given, repeatable, an
 * address no other listener may hold, restart-only. */
static int reload(const char *a, const char *b);

START_TEST(test_bloomd_listen)
{
    struct conf *c = OK("listen 127.0.0.1:7000\n");
    ck_assert_uint_eq(c->n_bloomd_listen, 0);
    conf_free(c);
    c = OK("bloomd_listen 127.0.0.1:8673\nbloomd_listen [::1]:8673\n");
    ck_assert_uint_eq(c->n_bloomd_listen, 2);
    assert_v4(&c->bloomd_listen[0], "127.0.0.1", 8673);
    assert_v6(&c->bloomd_listen[1], "::1", 8673);
    conf_free(c);
    FAILS("resp_listen 127.0.0.1:8673\nbloomd_listen 127.0.0.1:8673\n",
          P ":2: bloomd_listen: 127.0.0.1:8673 is already a listener (resp_listen on line 1)");
    FAILS("bloomd_listen 127.0.0.1:7878\n",
          P ":1: bloomd_listen: 127.0.0.1:7878 is also the default of listen (set listen "
            "explicitly)");
    ck_assert_int_eq(reload("bloomd_listen 127.0.0.1:8673\n", "bloomd_listen 127.0.0.1:8673\n"), 0);
    ck_assert_int_eq(reload("bloomd_listen 127.0.0.1:8673\n", "bloomd_listen 127.0.0.1:8674\n"),
                     -1);
    ck_assert_msg(strstr(err, "bloomd_listen changed; it takes effect only on a restart"), "%s",
                  err);
}
END_TEST

START_TEST(test_http_off)
{
    struct conf *c = OK("http_listen off\n");
    ck_assert(c->http_off);
    ck_assert_uint_eq(c->n_http_listen, 0);
    ck_assert_ptr_null(c->http_listen);
    ck_assert_uint_eq(c->n_listen, 1); /* the line protocol keeps its default */
    conf_free(c);

    /* Nothing listens on 7879 any more, so listen may have it. */
    c = OK("http_listen off\nlisten 127.0.0.1:7879\n");
    ck_assert_uint_eq(c->n_listen, 1);
    assert_v4(&c->listen[0], "127.0.0.1", 7879);
    conf_free(c);

    FAILS("http_listen off\nhttp_listen 127.0.0.1:80\n",
          P ":2: http_listen: an address cannot follow \"http_listen off\" (line 1)");
    FAILS("http_listen 127.0.0.1:80\nhttp_listen off\n",
          P ":2: http_listen: off cannot be combined with other http_listen lines (line 1)");
    FAILS("http_listen off\nhttp_listen off\n",
          P ":2: http_listen: off cannot be combined with other http_listen lines (line 1)");
}
END_TEST

START_TEST(test_parse_addr)
{
    struct conf_addr a;
    char e[256];
    ck_assert_int_eq(addr_parse("192.168.1.20:53", &a, e, sizeof(e)), 0);
    assert_v4(&a, "192.168.1.20", 53);
    ck_assert_str_eq(a.text, "192.168.1.20:53");
    ck_assert_uint_eq(a.line, 0);
    ck_assert_int_eq(addr_parse("*:7878", &a, e, sizeof(e)), 0);
    assert_v4(&a, "0.0.0.0", 7878);
    ck_assert_int_eq(addr_parse("1.2.3.4:0", &a, e, sizeof(e)), 0);
    assert_v4(&a, "1.2.3.4", 0);
    ck_assert_int_eq(addr_parse("[2001:db8::42]:443", &a, e, sizeof(e)), 0);
    assert_v6(&a, "2001:db8::42", 443);
    ck_assert_int_eq(addr_parse("[::ffff:10.0.0.1]:1", &a, e, sizeof(e)), 0);
    assert_v6(&a, "::ffff:10.0.0.1", 1);
    ck_assert_int_eq(addr_parse("[fe80::1%1]:80", &a, e, sizeof(e)), 0);
    assert_v6(&a, "fe80::1", 80);
    ck_assert_uint_eq(((struct sockaddr_in6 *)&a.ss)->sin6_scope_id, 1);

    static const struct {
        const char *in;
        const char *want;
    } bad[] = {
        {"", "empty address"},
        {"127.1:80", "\"127.1:80\": \"127.1\" is not a numeric IPv4 address"},
        {"0x7f000001:80", "\"0x7f000001:80\": \"0x7f000001\" is not a numeric IPv4 address"},
        {"256.0.0.1:80", "\"256.0.0.1:80\": \"256.0.0.1\" is not a numeric IPv4 address"},
        {":80", "\":80\" has no address (use *:PORT for any IPv4 address)"},
        {"[]:80", "\"[]:80\" has no address (use *:PORT for any IPv4 address)"},
        {"[::1]", "\"[::1]\" is not [IPV6]:PORT"},
        {"[::1:80", "\"[::1:80\" is not [IPV6]:PORT"},
        {"[::1]80", "\"[::1]80\" is not [IPV6]:PORT"},
        {"[1.2.3.4]:80", "\"[1.2.3.4]:80\": \"1.2.3.4\" is not a numeric IPv6 address"},
        {"[::g]:80", "\"[::g]:80\": \"::g\" is not a numeric IPv6 address"},
        {"1.2.3.4:", "\"1.2.3.4:\": port \"\" is not a number from 0 to 65535"},
        {"1.2.3.4:-1", "\"1.2.3.4:-1\": port \"-1\" is not a number from 0 to 65535"},
        {"1.2.3.4:http", "\"1.2.3.4:http\": port \"http\" is not a number from 0 to 65535"},
        {"1.2.3.4:000080", "\"1.2.3.4:000080\": port \"000080\" is not a number from 0 to 65535"},
        {"1.2.3.4:99999", "\"1.2.3.4:99999\": port \"99999\" is not a number from 0 to 65535"},
        {"[::1]:65536", "\"[::1]:65536\": port \"65536\" is not a number from 0 to 65535"},
        {"1.2.3.4:80x", "\"1.2.3.4:80x\": port \"80x\" is not a number from 0 to 65535"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        e[0] = '\0';
        ck_assert_msg(addr_parse(bad[i].in, &a, e, sizeof(e)) == -1, "accepted %s", bad[i].in);
        ck_assert_str_eq(e, bad[i].want);
    }
    char longest[CONF_ADDR_TEXT_MAX + 8];
    snprintf(longest, sizeof(longest), "[%0*d]:1", CONF_ADDR_TEXT_MAX, 0);
    ck_assert_int_eq(addr_parse(longest, &a, e, sizeof(e)), -1);
    ck_assert_ptr_nonnull(strstr(e, "is too long"));
}
END_TEST

START_TEST(test_max_item_vs_max_line)
{
    FAILS("max_item 64K", P ":1: max_item (64K) must be smaller than max_line (64K)");
    FAILS("threads 1\nmax_line 4K\n", P ":2: max_item (8K) must be smaller than max_line (4K)");
    FAILS("max_item 2K\nmax_line 1K\n", P ":1: max_item (2K) must be smaller than max_line (1K)");
    struct conf *c = OK("max_line 4K\nmax_item 4095\n");
    ck_assert_uint_eq(c->max_line, 4096);
    ck_assert_uint_eq(c->max_item, 4095);
    conf_free(c);
}
END_TEST

START_TEST(test_names)
{
    ck_assert_int_eq(conf_is_valid_name("a", 1), 1);
    ck_assert_int_eq(conf_is_valid_name("A-z_0.9", 7), 1);
    ck_assert_int_eq(conf_is_valid_name("", 0), 0);
    ck_assert_int_eq(conf_is_valid_name("abc ", 3), 1); /* only len bytes count */
    ck_assert_int_eq(conf_is_valid_name("abc ", 4), 0);
    ck_assert_int_eq(conf_is_valid_name("a b", 3), 0);
    ck_assert_int_eq(conf_is_valid_name("a\0b", 3), 0);
    ck_assert_int_eq(conf_is_valid_name("caf\xc3\xa9", 5), 0);
    ck_assert_int_eq(conf_is_valid_name("seen:{sku123}:2026-11-27", 24), 1);
    char name[FNAME_MAX + 1];
    memset(name, 'z', sizeof(name));
    ck_assert_int_eq(conf_is_valid_name(name, FNAME_MAX), 1);
    ck_assert_int_eq(conf_is_valid_name(name, FNAME_MAX + 1), 0);
}
END_TEST

/* `filter NAME {` with a name made of s: accepted (and named so) or refused
 * with the message part want. */
static void name_block(const char *quoted_name, const char *name, const char *want)
{
    char text[1024];
    snprintf(text, sizeof(text), "filter %s {\ncapacity 1\n}\n", quoted_name);
    if (!want) {
        struct conf *c = OK(text);
        ck_assert_str_eq(c->filters[0].name, name);
        conf_free(c);
    } else {
        FAILS_WITH(text, 1, want);
    }
}

/* The name rule at the config's edges: every byte the rule takes, quoted;
 * the rest refused with the rule; the length limit; a bare name only of the
 * old set; the default journal inside the directory. */
START_TEST(test_filter_names)
{
    char q[16], n[8];
    for (int b = 1; b < 256; b++) {
        if (b == '\n' || b == '\r')
            continue; /* ends the line */
        bool ctl = (b < 0x20 && b != '\t') || b == 0x7f;
        bool esc = b == '"' || b == '\\';
        snprintf(q, sizeof(q), "\"a%s%cb\"", esc ? "\\" : "", b);
        snprintf(n, sizeof(n), "a%cb", b);
        name_block(q, n,
                   ctl             ? "control character"
                   : fname_byte[b] ? NULL
                                   : "is invalid: use " FNAME_RULE);
    }
    /* Each character of the wider set, alone and in a key as Redis users
     * write them; `{`, `}`, `;` and `#` inside the quotes are the name's. */
    name_block("\"seen:{sku123}:2026-11-27\"", "seen:{sku123}:2026-11-27", NULL);
    name_block("\"{\"", "{", NULL);
    name_block("\"}\"", "}", NULL);
    name_block("\"#x\"", "#x", NULL);
    name_block("\"a;b,c\"", "a;b,c", NULL);
    name_block("\"!#$%&()*+,-./:;<=>?@[]^_{|}~\"", "!#$%&()*+,-./:;<=>?@[]^_{|}~", NULL);
    /* Bare: the old set only, the rest must be quoted (and says how). */
    name_block("a.b-c_D9", "a.b-c_D9", NULL);
    name_block("bf:blocklist", NULL,
               "filter: filter name bf:blocklist must be quoted, \"bf:blocklist\"");
    name_block("a{b}", NULL, "must be quoted");
    name_block("a#b", NULL, "expected \"{\" after the name"); /* the rest is a comment */
    name_block("n\xc3\xa4me", NULL, "is invalid: use " FNAME_RULE);
    name_block("\"a\\\\b\"", NULL, "is invalid");
    name_block("\"a\\\"b\"", NULL, "is invalid");
    name_block("\"a'b\"", NULL, "is invalid");
    name_block("\"a`b\"", NULL, "is invalid");

    /* FNAME_MAX bytes, bare and quoted; one more is refused with the rule. */
    char name[FNAME_MAX + 2], quoted[FNAME_MAX + 8];
    memset(name, 'n', FNAME_MAX);
    name[FNAME_MAX] = '\0';
    name_block(name, name, NULL);
    name[0] = ':';
    snprintf(quoted, sizeof(quoted), "\"%s\"", name);
    name_block(quoted, name, NULL);
    strcat(name, "n");
    snprintf(quoted, sizeof(quoted), "\"%s\"", name);
    char want[128];
    snprintf(want, sizeof(want), "is %d bytes long: use " FNAME_RULE, FNAME_MAX + 1);
    name_block(quoted, NULL, want);
    name[0] = 'n';
    name_block(name, NULL, want);

    /* The default journal is the name as one file name: '/' and '%' escaped,
     * so no name reaches outside the config's directory. */
    struct conf *c = OK("filter \"../x/y\" {\ncapacity 1\n}\n"
                        "filter \"a%2Fb\" {\ncapacity 1\n}\n"
                        "filter \"seen:{s}\" {\ncapacity 1\n}\n");
    ck_assert_str_eq(c->filters[0].journal, "/etc/bloomgate/..%2Fx%2Fy.journal");
    ck_assert_str_eq(c->filters[1].journal, "/etc/bloomgate/a%252Fb.journal");
    ck_assert_str_eq(c->filters[2].journal, "/etc/bloomgate/seen:{s}.journal");
    conf_free(c);
    memset(name, '/', 90);
    name[90] = '\0';
    snprintf(quoted, sizeof(quoted), "\"%s\"", name);
    name_block(quoted, NULL, "the default journal's file name would be longer than");
    char text[512];
    snprintf(text, sizeof(text), "filter \"%s\" {\ncapacity 1\njournal j\n}\n", name);
    c = OK(text);
    conf_free(c);
}
END_TEST

static int reload(const char *a, const char *b)
{
    struct conf *x = parse(a);
    ck_assert_msg(x != NULL, "%s", err);
    struct conf *y = parse(b);
    ck_assert_msg(y != NULL, "%s", err);
    err[0] = '\0';
    int rc = conf_check_reload(x, y, err, sizeof(err));
    conf_free(x);
    conf_free(y);
    return rc;
}

START_TEST(test_reload)
{
    const char *base = "listen 127.0.0.1:7000\nlisten [::1]:7000\nthreads 2\nuser u\n";
    ck_assert_int_eq(reload(base, base), 0);
    /* Reloadable: limits, token, log level, filters. */
    ck_assert_int_eq(reload(base, "listen 127.0.0.1:7000\nlisten [::1]:7000\nthreads 2\nuser u\n"
                                  "log_level debug\nadmin_token t\nmax_line 1M\nidle_timeout 1\n"
                                  "filter f {\ncapacity 5\n}\n"),
                     0);
    /* Reordered listeners are the same set. */
    ck_assert_int_eq(reload(base, "listen [::1]:7000\nlisten 127.0.0.1:7000\nthreads 2\nuser u\n"),
                     0);

    ck_assert_int_eq(reload(base, "listen 127.0.0.1:7000\nthreads 2\nuser u\n"), -1);
    ck_assert_str_eq(err, P ": listen changed; it takes effect only on a restart");
    ck_assert_int_eq(reload(base, "listen 127.0.0.1:7001\nlisten [::1]:7000\nthreads 2\nuser u\n"),
                     -1);
    ck_assert_str_eq(err, P ": listen changed; it takes effect only on a restart");
    ck_assert_int_eq(reload(base, "listen 127.0.0.1:7000\nlisten [::1]:7000\nthreads 3\nuser u\n"),
                     -1);
    ck_assert_str_eq(err, P ": threads changed; it takes effect only on a restart");
    ck_assert_int_eq(reload(base, "listen 127.0.0.1:7000\nlisten [::1]:7000\nthreads 2\n"), -1);
    ck_assert_str_eq(err, P ": user changed; it takes effect only on a restart");
    ck_assert_int_eq(reload(base, "listen 127.0.0.1:7000\nlisten [::1]:7000\nthreads 2\nuser u\n"
                                  "pidfile p\n"),
                     -1);
    ck_assert_str_eq(err, P ": pidfile changed; it takes effect only on a restart");
    ck_assert_int_eq(reload(base, "listen 127.0.0.1:7000\nlisten [::1]:7000\nthreads 2\nuser u\n"
                                  "http_listen off\n"),
                     -1);
    ck_assert_str_eq(err, P ": http_listen changed; it takes effect only on a restart");
    /* max_items sizes the workers' buffers once: restart-only. */
    ck_assert_int_eq(reload(base, "listen 127.0.0.1:7000\nlisten [::1]:7000\nthreads 2\nuser u\n"
                                  "max_items 7\n"),
                     -1);
    ck_assert_str_eq(err, P ": max_items changed; it takes effect only on a restart");
}
END_TEST

static char warned[1024];

static void collect(void *ctx, const char *msg)
{
    (void)ctx;
    size_t n = strlen(warned);
    snprintf(warned + n, sizeof(warned) - n, "%s|", msg);
}

/* A reload keeps the running value of everything restart-only, and says so. */
START_TEST(test_keep_running)
{
    struct conf *x = parse("listen 127.0.0.1:7000\nthreads 2\nmax_items 100\nhttp_listen off\n");
    ck_assert_msg(x != NULL, "%s", err);
    struct conf *y = parse("listen 127.0.0.1:7001\nlisten [::1]:7000\nthreads 2\nmax_items 200\n"
                           "user u\nmax_line 1M\n");
    ck_assert_msg(y != NULL, "%s", err);
    warned[0] = '\0';
    ck_assert_int_eq(conf_keep_running(y, x, collect, NULL), 0);
    ck_assert_str_eq(warned, "listen: a change needs a restart; still 127.0.0.1:7000|"
                             "http_listen: a change needs a restart; still off|"
                             "user: a change needs a restart; still unset|"
                             "max_items: a change needs a restart; still 100|");
    ck_assert_uint_eq(y->max_items, 100);
    ck_assert_uint_eq(y->n_listen, 1);
    ck_assert_str_eq(y->listen[0].text, "127.0.0.1:7000");
    ck_assert(y->http_off);
    ck_assert_uint_eq(y->n_http_listen, 0);
    ck_assert_ptr_null(y->user);
    ck_assert_uint_eq(y->max_line, 1024 * 1024); /* reloadable: the new value */
    char e2[256];
    ck_assert_int_eq(conf_check_reload(x, y, e2, sizeof(e2)), 0);
    conf_free(x);
    conf_free(y);
}
END_TEST

/* A fresh directory for file tests: never a fixed /tmp path. */
static char *make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *dir = NULL;
    ck_assert_int_gt(asprintf(&dir, "%s/check_conf.XXXXXX", base && *base ? base : "/tmp"), 0);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    return dir;
}

/* mkstemp a file in dir holding len bytes of text; returns its path. */
static char *make_file(const char *dir, const char *text, size_t len)
{
    char *path = NULL;
    ck_assert_int_gt(asprintf(&path, "%s/bloomgate.XXXXXX", dir), 0);
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    ck_assert_int_eq(close(fd), 0);
    return path;
}

START_TEST(test_load)
{
    char *dir = make_tmpdir();
    char want[PATH_MAX + 64];

    const char *text = "threads 3\nfilter u {\nfile u.bloom\n}\n";
    char *path = make_file(dir, text, strlen(text));
    struct conf *c = conf_load(path, err, sizeof(err));
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_uint_eq(c->threads, 3);
    ck_assert_str_eq(c->path, path);
    ck_assert_str_eq(c->dir, dir);
    snprintf(want, sizeof(want), "%s/u.bloom", dir);
    ck_assert_str_eq(c->filters[0].file, want);
    conf_free(c);
    ck_assert_int_eq(unlink(path), 0);
    free(path);

    /* Errors in a loaded file carry its path and line. */
    text = "threads 3\nidle_timeout 5 # ok\nthreads 2000\n";
    path = make_file(dir, text, strlen(text));
    ck_assert_ptr_null(conf_load(path, err, sizeof(err)));
    snprintf(want, sizeof(want), "%s:3: threads: already set on line 1", path);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(unlink(path), 0);
    free(path);

    /* Exactly 1 MiB of comments loads; one byte more does not. */
    size_t big = CONF_MAX_FILE_BYTES + 1;
    char *buf = malloc(big);
    ck_assert_ptr_nonnull(buf);
    memset(buf, '#', big);
    for (size_t i = 63; i < big; i += 64)
        buf[i] = '\n';
    path = make_file(dir, buf, big - 1);
    c = conf_load(path, err, sizeof(err));
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_uint_eq(c->n_listen, 1);
    conf_free(c);
    ck_assert_int_eq(unlink(path), 0);
    free(path);
    path = make_file(dir, buf, big);
    ck_assert_ptr_null(conf_load(path, err, sizeof(err)));
    snprintf(want, sizeof(want), "%s: larger than 1 MiB; not a config file?", path);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(unlink(path), 0);
    free(path);
    free(buf);

    /* Missing file, and a directory. */
    snprintf(want, sizeof(want), "%s/missing.conf", dir);
    ck_assert_ptr_null(conf_load(want, err, sizeof(err)));
    strcat(want, ": No such file or directory");
    ck_assert_str_eq(err, want);
    ck_assert_ptr_null(conf_load(dir, err, sizeof(err)));
    snprintf(want, sizeof(want), "%s: is a directory", dir);
    ck_assert_str_eq(err, want);

    ck_assert_int_eq(rmdir(dir), 0);
    free(dir);
}
END_TEST

START_TEST(test_small_err_buffer)
{
    /* A short buffer truncates the message; it must not overflow it. */
    char small[12];
    memset(small, 'Z', sizeof(small));
    ck_assert_ptr_null(conf_parse("bogus 1", 7, P, small, 8));
    ck_assert_str_eq(small, "/etc/bl");
    ck_assert_int_eq(small[8], 'Z');
    ck_assert_ptr_null(conf_parse("bogus 1", 7, P, NULL, 0));
}
END_TEST

static Suite *conf_suite(void)
{
    Suite *s = suite_create("conf");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_example);
    tcase_add_test(tc, test_crlf);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_every_directive);
    tcase_add_test(tc, test_integer_errors);
    tcase_add_test(tc, test_sizes);
    tcase_add_test(tc, test_size_errors);
    tcase_add_test(tc, test_doubles);
    tcase_add_test(tc, test_strings);
    tcase_add_test(tc, test_enums);
    tcase_add_test(tc, test_paths);
    tcase_add_test(tc, test_quotes_and_comments);
    tcase_add_test(tc, test_structure_errors);
    tcase_add_test(tc, test_filter_blocks);
    tcase_add_test(tc, test_journal);
    tcase_add_test(tc, test_window);
    tcase_add_test(tc, test_growth);
    tcase_add_test(tc, test_full);
    tcase_add_test(tc, test_listen);
    tcase_add_test(tc, test_bloomd_listen);
    tcase_add_test(tc, test_http_off);
    tcase_add_test(tc, test_parse_addr);
    tcase_add_test(tc, test_max_item_vs_max_line);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_filter_names);
    tcase_add_test(tc, test_reload);
    tcase_add_test(tc, test_keep_running);
    tcase_add_test(tc, test_small_err_buffer);
    suite_add_tcase(s, tc);

    TCase *tl = tcase_create("load");
    tcase_add_test(tl, test_load);
    suite_add_tcase(s, tl);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(conf_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

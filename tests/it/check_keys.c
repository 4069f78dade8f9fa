/* Integration tests of the query side of key kinds: a real bloomgated serving
 * the shipped URLhaus list (data/urlhaus-filter-online.txt, Adblock form)
 * built as url keys and as host keys, beside an exact filter. CHECK, MCHECK
 * and MATCH on the line protocol and GET/POST check over HTTP must find every
 * listed URL in three other spellings (upper-case host, a port, an extra path
 * or query), name the listed expression, refuse items the kind cannot read,
 * leave exact filters as they were, and turn an ADD into the canonical key,
 * journaled so that a restart finds it again. Filters are built with a fixed
 * seed: every answer is the same on every run. */
#include "config.h"

#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/daemon_harness.h"
#include "lib/http_client.h"

#define MAX_TARGETS 8192
#define BATCH 100

/* What the list names: host[/path], as tests/it/url_test.sh reads it. */
static char *targets[MAX_TARGETS];
static size_t n_targets;

static void read_targets(void)
{
    if (n_targets)
        return;
    const char *src = getenv("srcdir");
    char path[DH_PATH_MAX];
    snprintf(path, sizeof(path), "%s/data/urlhaus-filter-online.txt", src ? src : ".");
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char line[9000];
    while (fgets(line, sizeof(line), f)) {
        size_t n = strcspn(line, "\r\n");
        line[n] = '\0';
        if (n == 0 || line[0] == '!' || line[0] == '[')
            continue;
        char *t = line;
        if (strncmp(t, "||", 2) == 0)
            t += 2;
        char *opt = strrchr(t, '$');
        if (opt && !strchr(opt, '/'))
            *opt = '\0';
        size_t len = strlen(t);
        if (len && t[len - 1] == '^')
            t[--len] = '\0';
        ck_assert_uint_lt(n_targets, MAX_TARGETS);
        targets[n_targets++] = strdup(t);
    }
    fclose(f);
    ck_assert_uint_eq(n_targets, 6254);
}

/* Spelling k (0..2) of target t as a URL: an upper-case host, a port, an
 * extra path (a host) or query (a path; a fragment if it has a query). */
static void spell(const char *t, int k, char *out, size_t cap)
{
    const char *slash = strchr(t, '/');
    size_t hl = slash ? (size_t)(slash - t) : strlen(t);
    const char *p = slash ? slash : "";
    char host[512];
    snprintf(host, sizeof(host), "%.*s", (int)hl, t);
    if (k == 0) {
        for (char *h = host; *h; h++)
            *h = (char)toupper((unsigned char)*h);
        snprintf(out, cap, "http://%s%s", host, p);
    } else if (k == 1) {
        snprintf(out, cap, "http://%s:8080%s", host, p);
    } else if (!slash) {
        snprintf(out, cap, "https://%s/extra/dir/file.html?x=1", host);
    } else {
        snprintf(out, cap, "http://%s%s%s", host, p,
                 strchr(p, '?') ? "#fragment" : "?utm_source=x");
    }
}

/* The key the list gives target t, when it is written plainly (lower-case
 * host, a path of unreserved bytes): host/path, or host/ for a bare host.
 * NULL if canonicalisation would rewrite it. */
static const char *plain_key(const char *t, char *out, size_t cap)
{
    for (const char *c = t; *c; c++)
        if (!(islower((unsigned char)*c) || isdigit((unsigned char)*c) || strchr("/._-", *c)))
            return NULL;
    if (strstr(t, "//") || strstr(t, "/.") || t[strlen(t) - 1] == '.')
        return NULL;
    snprintf(out, cap, "%s%s", t, strchr(t, '/') ? "" : "/");
    return out;
}

static void build_list(struct dh_daemon *d, const char *keys, const char *name)
{
    const char *src = getenv("srcdir");
    char list[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX];
    snprintf(list, sizeof(list), "%s/data/urlhaus-filter-online.txt", src ? src : ".");
    dh_path(d, name, out);
    dh_path(d, "build.log", log);
    const char *argv[] = {dh_tool_path(), "build", "--seed", "7", "--format", "adblock",
                          "--keys",       keys,    "-o",     out, list,       NULL};
    int st = dh_run(argv, log, 60000);
    ck_assert_msg(st == 0, "bloomgate build --keys %s failed (status %d); see %s", keys, st, log);
}

/* A daemon serving urls (url keys), hosts (host keys), both journaled, and ex
 * (exact keys: a, b, c). */
static struct dh_daemon *start_keys(void)
{
    struct dh_daemon *d = dh_new();
    read_targets();
    build_list(d, "url", "urls.bloom");
    build_list(d, "host", "hosts.bloom");
    static const char *const ex[] = {"a", "b", "c", "http://Exact.Example/"};
    dh_build_filter(d, "ex.bloom", ex, 4, 1000, 1e-4);
    dh_write_config(d, "threads 2\n"
                       "log_level info\n"
                       "http_listen 127.0.0.1:0\n"
                       "max_item 16k\n"
                       "filter urls {\n file @DIR@/urls.bloom\n keys url\n"
                       " journal @DIR@/urls.journal\n}\n"
                       "filter hosts {\n file @DIR@/hosts.bloom\n journal @DIR@/hosts.journal\n}\n"
                       "filter ex {\n file @DIR@/ex.bloom\n}\n");
    dh_start(d, NULL);
    return d;
}

/* GET or POST target on the daemon's HTTP port; the response in r. */
static void http(struct dh_daemon *d, const char *method, const char *target, const char *body,
                 struct hc_resp *r)
{
    struct hc_conn h;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    ck_assert_msg(
        hc_request(&h, method, target, NULL, body, body ? strlen(body) : 0, r, DH_TIMEOUT_MS) == 0,
        "%s %s: %s", method, target, h.err);
    hc_close(&h);
}

static void expect_http(struct dh_daemon *d, const char *method, const char *target,
                        const char *body, int status, const char *want)
{
    struct hc_resp r;
    http(d, method, target, body, &r);
    ck_assert_msg(r.status == status && strcmp(r.body, want) == 0, "%s %s: %d %s, wanted %d %s",
                  method, target, r.status, r.body, status, want);
    hc_resp_free(&r);
}

/* Every listed URL in three spellings: MCHECK in batches of 100 all YES;
 * every 25th also as a one-item CHECK, and MATCH naming the listed key where
 * the target is written plainly. */
START_TEST(test_listed_line)
{
    struct dh_daemon *d = start_keys();
    struct dh_conn *c = dh_connect(d);
    static char req[BATCH * 600 + 64];
    char url[2048], key[2048], want[2100];
    size_t yes = 0, total = 0, matched = 0;
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < n_targets; i += BATCH) {
            size_t len = (size_t)snprintf(req, sizeof(req), "MCHECK urls");
            size_t m = n_targets - i < BATCH ? n_targets - i : BATCH;
            for (size_t j = 0; j < m; j++) {
                spell(targets[i + j], k, url, sizeof(url));
                len += (size_t)snprintf(req + len, sizeof(req) - len, " %s", url);
            }
            const char *reply = dh_cmd(c, req);
            for (const char *p = reply; *p;) {
                size_t w = strcspn(p, " ");
                yes += w == 3 && memcmp(p, "YES", 3) == 0;
                total++;
                p += w + (p[w] == ' ');
            }
            ck_assert_msg(strstr(reply, "NO") == NULL, "spelling %d, batch at %zu: %s", k, i,
                          reply);
        }
        for (size_t i = (size_t)k; i < n_targets; i += 25) {
            spell(targets[i], k, url, sizeof(url));
            snprintf(req, sizeof(req), "CHECK urls %s", url);
            ck_assert_str_eq(dh_cmd(c, req), "YES");
            if (!plain_key(targets[i], key, sizeof(key)))
                continue;
            snprintf(req, sizeof(req), "MATCH urls %s", url);
            snprintf(want, sizeof(want), "MATCH %s", key);
            ck_assert_str_eq(dh_cmd(c, req), want);
            matched++;
        }
    }
    ck_assert_uint_eq(total, 3 * n_targets);
    ck_assert_uint_eq(yes, 3 * n_targets);
    ck_assert_uint_gt(matched, 500);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* 2,000 URLs that are not listed: NO but for the filter's false positives
 * (about 6 probes each at the built rate; fixed seed). */
START_TEST(test_clean_line)
{
    struct dh_daemon *d = start_keys();
    struct dh_conn *c = dh_connect(d);
    static char req[BATCH * 100 + 64];
    size_t yes = 0;
    for (int b = 0; b < 20; b++) {
        size_t len = (size_t)snprintf(req, sizeof(req), "MCHECK urls");
        for (int j = 0; j < BATCH; j++)
            len +=
                (size_t)snprintf(req + len, sizeof(req) - len,
                                 " https://www%d.clean-%d.example.org/a/b%d.html?q=%d", j, b, j, b);
        const char *reply = dh_cmd(c, req);
        for (const char *p = reply; (p = strstr(p, "YES")); p += 3)
            yes++;
    }
    ck_assert_msg(yes <= 10, "%zu of 2000 clean URLs found", yes);
    DH_EXPECT(c, "CHECK urls https://www.debian.org/", "NO");
    DH_EXPECT(c, "MATCH urls https://www.debian.org/", "NO");
    DH_EXPECT(c, "CHECK hosts www.debian.org", "NO");
    DH_EXPECT(c, "MATCH hosts bob@debian.org", "NO");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* Host keys: a listed host as a subdomain, an e-mail address, a URL with a
 * port and a path; MATCH names the listed host. */
START_TEST(test_hosts)
{
    struct dh_daemon *d = start_keys();
    struct dh_conn *c = dh_connect(d);
    char req[1200], want[600];
    size_t n = 0;
    for (size_t i = 0; i < n_targets; i++) {
        const char *h = targets[i];
        if (strchr(h, '/') || strspn(h, "0123456789.") == strlen(h))
            continue;
        snprintf(req, sizeof(req), "CHECK hosts deep.sub.%s", h);
        ck_assert_str_eq(dh_cmd(c, req), "YES");
        snprintf(req, sizeof(req), "MCHECK hosts bob@mail.%s http://WWW.%s:81/x/y?z www.debian.org",
                 h, h);
        ck_assert_str_eq(dh_cmd(c, req), "YES YES NO");
        snprintf(req, sizeof(req), "MATCH hosts https://a.b.%s./", h);
        snprintf(want, sizeof(want), "MATCH %s", h);
        ck_assert_str_eq(dh_cmd(c, req), want);
        n++;
    }
    ck_assert_uint_gt(n, 500);
    /* IP addresses match exactly, in any spelling. */
    DH_EXPECT(c, "MATCH hosts http://1.1.104.12:8080/x", "MATCH 1.1.104.12");
    DH_EXPECT(c, "CHECK hosts 0x1.1.104.12", "YES");
    DH_EXPECT(c, "CHECK hosts 1.1.104.13", "NO");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* Over HTTP: GET and POST find the spellings and name the match; bad items
 * are a 400 naming the item. */
START_TEST(test_http)
{
    struct dh_daemon *d = start_keys();
    expect_http(
        d, "GET", "/v1/filters/urls/check?item=http%3A%2F%2FWWW.111101111.RU%3A81%2Fzz%3Fq", NULL,
        200,
        "{\"filter\":\"urls\",\"item\":\"http://WWW.111101111.RU:81/zz?q\",\"present\":true,"
        "\"match\":\"111101111.ru/\"}");
    expect_http(d, "GET", "/v1/filters/urls/check?item=https://www.debian.org/", NULL, 200,
                "{\"filter\":\"urls\",\"item\":\"https://www.debian.org/\",\"present\":false,"
                "\"match\":null}");
    expect_http(d, "GET", "/v1/filters/hosts/check?item=bob@mail.111101111.ru", NULL, 200,
                "{\"filter\":\"hosts\",\"item\":\"bob@mail.111101111.ru\",\"present\":true,"
                "\"match\":\"111101111.ru\"}");
    expect_http(
        d, "POST", "/v1/filters/urls/check",
        "{\"items\":[\"http://2024.SCI-HUB.SE:8080/2294/7a43bb4cf6c57229b02a9604a1f4614e/"
        "skidmore1966.pdf?download=1\",\"debian.org\",\"111101111.ru:99\"]}",
        200,
        "{\"filter\":\"urls\",\"present\":[true,false,true],\"matches\":[\"2024.sci-hub.se/"
        "2294/7a43bb4cf6c57229b02a9604a1f4614e/skidmore1966.pdf\",null,\"111101111.ru/\"]}");
    expect_http(d, "POST", "/v1/filters/urls/check", "{\"items\":[]}", 200,
                "{\"filter\":\"urls\",\"present\":[],\"matches\":[]}");
    expect_http(d, "GET", "/v1/filters/urls/check?item=mailto:bob@example.org", NULL, 400,
                "{\"error\":{\"code\":\"bad_request\",\"message\":\"item 1: bad URL: not a URL "
                "with a host (scheme without \\\"//\\\")\"}}");
    expect_http(d, "POST", "/v1/filters/urls/check",
                "{\"items\":[\"http://a.example/\",\"http://a.example:99999/\"]}", 400,
                "{\"error\":{\"code\":\"bad_request\",\"message\":\"item 2: bad URL: bad port\"}}");
    expect_http(d, "POST", "/v1/filters/hosts/check", "{\"items\":[\"ok.example\",\"\"]}", 400,
                "{\"error\":{\"code\":\"bad_request\",\"message\":\"item 2: bad host: empty "
                "host\"}}");
    /* An exact filter's answers keep their shape: no "match". */
    expect_http(d, "GET", "/v1/filters/ex/check?item=a", NULL, 200,
                "{\"filter\":\"ex\",\"item\":\"a\",\"present\":true}");
    expect_http(d, "POST", "/v1/filters/ex/check", "{\"items\":[\"a\",\"http://exact.example/\"]}",
                200, "{\"filter\":\"ex\",\"present\":[true,false]}");
    dh_finish(d);
}
END_TEST

/* Items a kind cannot read: ERR bad_item, the connection goes on; an exact
 * filter takes the same bytes as they are. */
START_TEST(test_bad_items)
{
    struct dh_daemon *d = start_keys();
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CHECK urls mailto:bob@example.org",
              "ERR bad_item bad URL: not a URL with a host (scheme without \"//\")");
    DH_EXPECT(c, "MATCH urls http://a.example:99999/", "ERR bad_item bad URL: bad port");
    DH_EXPECT(c, "MCHECK urls http://111101111.ru/ javascript:alert(1) a.example",
              "ERR bad_item item 2: bad URL: not a URL with a host (scheme without \"//\")");
    DH_EXPECT(c, "CHECK hosts http://[::1%25eth0]/", "ERR bad_item bad host: bad IPv6 literal");
    /* Over-long: longer than the canonicaliser's 8 KiB, within max_item. */
    static char big[10000];
    int n = snprintf(big, sizeof(big), "CHECK urls http://long.example/");
    memset(big + n, 'a', 9000);
    big[n + 9000] = '\0';
    const char *reply = dh_cmd(c, big);
    ck_assert_msg(strncmp(reply, "ERR bad_item bad URL: ", 22) == 0, "%s", reply);
    DH_EXPECT(c, "CHECK urls http://111101111.ru/", "YES");
    DH_EXPECT(c, "CHECK ex mailto:bob@example.org", "NO");
    DH_EXPECT(c, "MATCH nosuch a", "ERR unknown_filter no such filter 'nosuch'");
    /* INFO says how each filter reads its items. */
    ck_assert_ptr_nonnull(strstr(dh_cmd(c, "INFO urls"), "\"keys\":\"url\""));
    ck_assert_ptr_nonnull(strstr(dh_cmd(c, "INFO hosts"), "\"keys\":\"host\""));
    ck_assert_ptr_nonnull(strstr(dh_cmd(c, "INFO ex"), "\"keys\":\"exact\""));
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* Exact filters: bytes as they are, the pipelined CHECK path, MATCH names
 * the item. */
START_TEST(test_exact_unchanged)
{
    struct dh_daemon *d = start_keys();
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CHECK ex a", "YES");
    DH_EXPECT(c, "CHECK ex A", "NO");
    DH_EXPECT(c, "CHECK ex http://Exact.Example/", "YES");
    DH_EXPECT(c, "CHECK ex http://exact.example/", "NO");
    DH_EXPECT(c, "MCHECK ex a b zz c", "YES YES NO YES");
    DH_EXPECT(c, "MATCH ex b", "MATCH b");
    DH_EXPECT(c, "MATCH ex http://Exact.Example/", "MATCH http://Exact.Example/");
    DH_EXPECT(c, "MATCH ex zz", "NO");
    /* A pipeline that mixes the kinds answers in order. */
    static const char pipe[] = "CHECK ex a\nCHECK urls http://111101111.ru/x\nCHECK ex zz\n"
                               "MATCH urls 111101111.RU\nCHECK ex c\nCHECK hosts x.111101111.ru\n";
    ck_assert_int_eq(dh_send(c, pipe, sizeof(pipe) - 1, DH_TIMEOUT_MS), 0);
    char **lines = dh_read_lines(c, 6, DH_TIMEOUT_MS);
    const char *want[] = {"YES", "YES", "NO", "MATCH 111101111.ru/", "YES", "YES"};
    for (int i = 0; i < 6; i++)
        ck_assert_str_eq(lines[i], want[i]);
    dh_lines_free(lines);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ADD to a url or host filter adds the canonical key: another spelling finds
 * it, MATCH names it, a re-add is EXISTS, a bad item adds nothing, and it all
 * survives a restart (the journal holds the key). */
START_TEST(test_add_and_restart)
{
    struct dh_daemon *d = start_keys();
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CHECK urls https://added.example/dir/page.html?x=1", "NO");
    DH_EXPECT(c, "ADD urls http://user@Added.EXAMPLE.:8080/dir/./sub/../page.html?x=1#top", "NEW");
    DH_EXPECT(c, "CHECK urls https://added.example/dir/page.html?x=1", "YES");
    DH_EXPECT(c, "CHECK urls http://WWW.ADDED.example:81/dir//page.html?x=1", "YES");
    DH_EXPECT(c, "CHECK urls http://added.example/dir/page.html?x=2", "NO");
    DH_EXPECT(c, "MATCH urls http://a.b.added.example/dir/page.html?x=1",
              "MATCH added.example/dir/page.html?x=1");
    DH_EXPECT(c, "ADD urls added.example/dir/page.html?x=1", "EXISTS");
    /* A bare host blocks the host; the more specific key is still named. */
    DH_EXPECT(c, "MADD urls Spec.Example http://spec.example/a/b.html", "NEW NEW");
    DH_EXPECT(c, "MATCH urls http://x.spec.example/a/b.html?q", "MATCH spec.example/a/b.html");
    DH_EXPECT(c, "MATCH urls http://spec.example/other", "MATCH spec.example/");
    /* A bad item: nothing of the request is added. */
    DH_EXPECT(c, "MADD urls first.example mailto:x",
              "ERR bad_item item 2: bad-url: not a URL with a host (scheme without \"//\")");
    DH_EXPECT(c, "CHECK urls http://first.example/", "NO");
    /* Host keys: a host; a URL with a path would block the whole host. */
    DH_EXPECT(c, "ADD hosts New.Host.EXAMPLE.", "NEW");
    DH_EXPECT(c, "CHECK hosts bob@mx.new.host.example", "YES");
    DH_EXPECT(c, "MATCH hosts http://a.new.host.example:1/p", "MATCH new.host.example");
    DH_EXPECT(c, "ADD hosts http://whole.example/one/file",
              "ERR bad_item path-for-host: names a path: a host key would block all of "
              "whole.example");
    dh_close(c);
    expect_http(d, "POST", "/v1/filters/urls/add", "{\"items\":[\"HTTP://Via-Http.example/a\"]}",
                200, "{\"filter\":\"urls\",\"new\":[true],\"added\":1}");
    expect_http(d, "GET", "/v1/filters/urls/check?item=via-http.example:1/a%3Fz", NULL, 200,
                "{\"filter\":\"urls\",\"item\":\"via-http.example:1/a?z\",\"present\":true,"
                "\"match\":\"via-http.example/a\"}");
    expect_http(d, "POST", "/v1/filters/urls/add", "{\"items\":[\"ok.example\",\"\"]}", 400,
                "{\"error\":{\"code\":\"bad_request\",\"message\":\"item 2: not a url key "
                "(blank)\"}}");

    /* The journal replays the keys after a restart. */
    ck_assert_int_eq(dh_stop(d, DH_TIMEOUT_MS), 0);
    dh_start(d, NULL);
    c = dh_connect(d);
    DH_EXPECT(c, "CHECK urls http://ADDED.example/dir/page.html?x=1", "YES");
    DH_EXPECT(c, "MATCH urls https://spec.example/zz", "MATCH spec.example/");
    DH_EXPECT(c, "MATCH urls via-http.example/a", "MATCH via-http.example/a");
    DH_EXPECT(c, "CHECK hosts deep.new.host.example", "YES");
    DH_EXPECT(c, "CHECK urls http://first.example/", "NO");
    DH_EXPECT(c, "CHECK urls http://ok.example/", "NO");
    dh_close(c);
    dh_finish(d);
}
END_TEST

static Suite *keys_suite(void)
{
    Suite *s = suite_create("keys");
    TCase *tc = tcase_create("keys");
    tcase_add_checked_fixture(tc, NULL, dh_cleanup_all);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_listed_line);
    tcase_add_test(tc, test_clean_line);
    tcase_add_test(tc, test_hosts);
    tcase_add_test(tc, test_http);
    tcase_add_test(tc, test_bad_items);
    tcase_add_test(tc, test_exact_unchanged);
    tcase_add_test(tc, test_add_and_restart);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (dh_root_init() != 0) {
        fprintf(stderr, "check_keys: cannot make a temporary directory\n");
        return EXIT_FAILURE;
    }
    SRunner *sr = srunner_create(keys_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    dh_root_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

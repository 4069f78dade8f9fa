/* Integration tests of an adblock filter served by a real bloomgated: a
 * list compiled by the real tool (`bloomgate build --format adblock`),
 * then the line protocol's lookups with and without request context
 * (CHECK, MATCH and MCHECK's context words), the rule and the exception
 * MATCH names, run-time adds to the host tier and allow-list entries,
 * both journaled (a restart finds them), a SIGHUP that swaps in a rebuilt
 * list, and an exact filter beside it that takes the words and ignores
 * them. docs/protocol.md (Request context) and docs/url-matching.md say
 * what each answer means. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/daemon_harness.h"

static const char list_v1[] =
    "[Adblock Plus 2.0]\n"
    "! a test list: each rule is asked about below\n"
    "||scholar.example^$ping\n"
    "||tracker.example^$third-party\n"
    "||ads.example^$script\n"
    "||pix.example^$image\n"
    "@@||ads.example/ok.js$script\n"
    "/banner/*/img^\n"
    "||post.example^$method=post\n"
    "example.org##.ad-box\n"
    "||csp.example^$csp=script-src 'none'\n"
    "/pct%20ad/\n";

static const char list_v2_extra[] = "||new.example^\n";

/* Compile text into dir/name with the real tool. */
static void build_ads(struct dh_daemon *d, const char *text, const char *name)
{
    char list[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX];
    dh_write_file(d, "list.txt", text, strlen(text));
    dh_path(d, "list.txt", list);
    dh_path(d, name, out);
    dh_path(d, "build.log", log);
    const char *argv[] = {dh_tool_path(), "build", "--seed", "7",  "--format", "adblock",
                          "-o",           out,     list,     NULL};
    int st = dh_run(argv, log, 60000);
    ck_assert_msg(st == 0, "bloomgate build --format adblock failed (status %d); see %s", st, log);
}

static struct dh_daemon *start_ads(void)
{
    struct dh_daemon *d = dh_new();
    build_ads(d, list_v1, "ads.bloom");
    static const char *const ex[] = {"a", "b"};
    dh_build_filter(d, "ex.bloom", ex, 2, 1000, 1e-4);
    dh_write_config(d, "threads 2\n"
                       "log_level info\n"
                       "filter ads {\n file @DIR@/ads.bloom\n keys adblock\n"
                       " journal @DIR@/ads.journal\n}\n"
                       "filter ex {\n file @DIR@/ex.bloom\n}\n"
                       "filter ads_any {\n file @DIR@/ads.bloom\n no_context any\n}\n");
    dh_start(d, NULL);
    return d;
}

/* The lists' options and exceptions, asked with and without context. */
START_TEST(test_context)
{
    struct dh_daemon *d = start_ads();
    struct dh_conn *c = dh_connect(d);
    /* No context: a top-level document without initiator. */
    DH_EXPECT(c, "CHECK ads https://scholar.example/scholar?q=bloom", "NO");
    DH_EXPECT(c, "CHECK ads https://scholar.example/scholar?q=bloom type=ping", "YES");
    DH_EXPECT(c, "CHECK ads https://scholar.example/s type=PING from=https://scholar.example/",
              "YES");
    DH_EXPECT(c, "CHECK ads https://tracker.example/t.js", "NO");
    DH_EXPECT(c, "CHECK ads https://tracker.example/t.js type=script from=https://news.example/",
              "YES");
    DH_EXPECT(c, "CHECK ads https://tracker.example/t.js type=script from=https://www.tracker.example/",
              "NO");
    /* Sec-Fetch-Dest names, as a gateway forwards them. */
    DH_EXPECT(c, "CHECK ads https://ads.example/x.js type=script", "YES");
    DH_EXPECT(c, "CHECK ads https://ads.example/x.js type=serviceworker", "YES");
    DH_EXPECT(c, "CHECK ads https://ads.example/x.js type=image", "NO");
    DH_EXPECT(c, "CHECK ads https://ads.example/ok.js type=script", "NO");
    DH_EXPECT(c, "CHECK ads https://cdn.example/banner/123/img?w=300 type=image", "YES");
    DH_EXPECT(c, "CHECK ads https://cdn.example/banner/123/img.gif type=image", "NO"); /* ^ */
    DH_EXPECT(c, "CHECK ads https://post.example/api method=post type=xhr", "YES");
    DH_EXPECT(c, "CHECK ads https://post.example/api method=get type=xhr", "NO");
    /* No scheme: a top-level request to https:// and the item. */
    DH_EXPECT(c, "CHECK ads ads.example type=script", "YES");
    DH_EXPECT(c, "CHECK ads cdn.example/banner/1/img", "YES");
    DH_EXPECT(c, "CHECK ads localhost:8080/banner/1/img", "YES");
    DH_EXPECT(c, "CHECK ads tracker.example", "NO");
    /* A CONNECT's authority: the host's rules apply to it. */
    DH_EXPECT(c, "CHECK ads scholar.example:443 type=ping", "YES");
    DH_EXPECT(c, "MCHECK ads type=script from=https://news.example/ https://tracker.example/a.js "
                 "from=- https://tracker.example/a.js type=json https://ads.example/x.js",
              "YES NO NO");
    /* A rule a gateway cannot enforce never blocks. */
    DH_EXPECT(c, "CHECK ads https://csp.example/", "NO");
    /* MATCH: the rule as written, the exception that overrode it. */
    DH_EXPECT(c, "MATCH ads https://ads.example/x.js type=script", "MATCH ||ads.example^$script");
    DH_EXPECT(c, "MATCH ads https://ads.example/ok.js type=script",
              "ALLOWED @@||ads.example/ok.js$script ||ads.example^$script");
    DH_EXPECT(c, "MATCH ads https://ads.example/x.js", "NO");
    /* A rule's own '%' is sent as %25, so its "%20" is not read as a space. */
    DH_EXPECT(c, "MATCH ads https://p.example/pct%20ad/x", "MATCH /pct%2520ad/");
    /* MCHECK: each word applies to the items after it. */
    DH_EXPECT(c,
              "MCHECK ads https://tracker.example/a.js type=script from=https://news.example/ "
              "https://tracker.example/a.js https://ads.example/x.js type=image "
              "https://ads.example/x.js https://cdn.example/banner/1/img",
              "NO YES YES NO YES");
    /* Type words in every spelling, each sent several times on one
     * connection (its worker remembers the words it has read, and xhr and
     * img share a slot of its memo): the same verdicts the first time and
     * after. Scripts are blocked on ads.example, images on pix.example. */
    static const char *const types[][2] = {
        {"script", "YES NO"},    {"SCRIPT", "YES NO"},
        {"image", "NO YES"},     {"Script", "YES NO"},
        {"worker", "YES NO"},    {"img", "NO YES"},
        {"css", "NO NO"},        {"serviceworker", "YES NO"},
        {"stylesheet", "NO NO"}, {"xhr", "NO NO"},
        {"empty", "NO NO"},      {"scripts", "ERR"},
        {"document", "NO NO"},   {"s", "ERR"},
        {"IMG", "NO YES"},       {"sharedworker", "YES NO"},
    };
    const size_t n_types = sizeof(types) / sizeof(types[0]);
    for (size_t round = 0; round < 3; round++)
        for (size_t i = 0; i < n_types; i++) {
            const char *const *t = types[(i * 5 + round) % n_types];
            char req[160];
            snprintf(req, sizeof(req),
                     "MCHECK ads type=%s https://ads.example/x.js https://pix.example/p.gif", t[0]);
            const char *got = dh_cmd(c, req);
            ck_assert_msg(strncmp(got, t[1], strlen(t[1])) == 0, "%s: %s, wanted %s", req, got,
                          t[1]);
        }
    /* Bad context: an error naming it; nothing after it applies. */
    DH_EXPECT(c, "CHECK ads https://ads.example/x.js type=bogus",
              "ERR bad_request bad context word 'type=bogus': not a request type (document, "
              "script, image, xhr, ...)");
    DH_EXPECT(c, "CHECK ads https://ads.example/x.js method=fly",
              "ERR bad_request bad context word 'method=fly': not an HTTP method");
    DH_EXPECT(c, "MCHECK ads https://ads.example/x.js type=script",
              "ERR bad_request a context word after the last item applies to no item (MCHECK: "
              "context words come before the items they describe)");
    /* no_context any: a lookup without context asks every type and party;
     * one with context is answered as it says. */
    DH_EXPECT(c, "CHECK ads_any https://scholar.example/scholar?q=bloom", "YES");
    DH_EXPECT(c, "CHECK ads_any https://scholar.example/scholar?q=bloom type=document", "NO");
    DH_EXPECT(c, "CHECK ads_any https://tracker.example/t.js", "YES");
    DH_EXPECT(c, "MATCH ads_any https://ads.example/x.js", "MATCH ||ads.example^$script");
    DH_EXPECT(c, "CHECK ads_any https://ads.example/ok.js", "NO");
    DH_EXPECT(c, "CHECK ads_any https://post.example/api", "NO"); /* $method= needs one */
    DH_EXPECT(c, "MCHECK ads_any https://tracker.example/t.js type=document "
                 "https://tracker.example/t.js",
              "YES NO");
    /* An exact filter takes the words and ignores them. */
    DH_EXPECT(c, "CHECK ex a type=script from=https://news.example/", "YES");
    DH_EXPECT(c, "MCHECK ex type=image a z b", "YES NO YES");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* Poll CHECK until it answers want (a reload in flight); fails after the
 * harness's timeout. */
static void expect_soon(struct dh_conn *c, const char *req, const char *want)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        const char *got = dh_cmd(c, req);
        if (strcmp(got, want) == 0)
            return;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        ck_assert_msg(ms < DH_EXIT_TIMEOUT_MS, "%s: %s, wanted %s", req, got, want);
        struct timespec nap = {0, 20 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
}

/* The host tier and the allow-list at run time, journaled; a rebuilt list
 * swapped in by SIGHUP keeps both; a restart replays them. */
START_TEST(test_adds_reload_restart)
{
    struct dh_daemon *d = start_ads();
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CHECK ads https://sub.evil.example/x", "NO");
    DH_EXPECT(c, "ADD ads evil.example", "NEW");
    DH_EXPECT(c, "ADD ads https://evil.example/", "EXISTS");
    DH_EXPECT(c, "CHECK ads https://sub.evil.example/x type=image", "YES");
    DH_EXPECT(c, "MATCH ads https://sub.evil.example/x", "MATCH evil.example");
    DH_EXPECT(c, "ADD ads https://evil.example/a/path", 
              "ERR bad_item path-for-host: names a path: a host key would block all of "
              "evil.example");
    /* The allow-list un-blocks a host and its subdomains, whichever tier
     * blocked. */
    DH_EXPECT(c, "ALLOW ads good.ads.example", "NEW");
    DH_EXPECT(c, "CHECK ads https://good.ads.example/x.js type=script", "NO");
    DH_EXPECT(c, "MATCH ads https://good.ads.example/x.js type=script",
              "ALLOWED good.ads.example ||ads.example^$script");
    DH_EXPECT(c, "CHECK ads https://ads.example/x.js type=script", "YES");
    /* The lists' own verdict comes first: an exception in them keeps a
     * tier host passing. */
    DH_EXPECT(c, "ADD ads ads.example", "NEW");
    DH_EXPECT(c, "CHECK ads https://ads.example/ok.js type=script", "NO");
    DH_EXPECT(c, "CHECK ads https://ads.example/ok.js type=image", "YES");

    /* A rebuilt list, swapped in: the new rule serves, the adds stay. */
    char both[sizeof(list_v1) + sizeof(list_v2_extra)];
    snprintf(both, sizeof(both), "%s%s", list_v1, list_v2_extra);
    build_ads(d, both, "ads.next");
    char from[DH_PATH_MAX], to[DH_PATH_MAX];
    ck_assert_int_eq(rename(dh_path(d, "ads.next", from), dh_path(d, "ads.bloom", to)), 0);
    ck_assert_int_eq(dh_signal(d, SIGHUP), 0);
    expect_soon(c, "CHECK ads https://new.example/", "YES");
    DH_EXPECT(c, "CHECK ads https://sub.evil.example/x", "YES");
    DH_EXPECT(c, "CHECK ads https://good.ads.example/x.js type=script", "NO");
    const char *info = dh_cmd(c, "INFO ads");
    ck_assert_msg(strstr(info, "\"keys\":\"adblock\"") && strstr(info, "\"block_rules\":8") &&
                      strstr(info, "\"generation\":2"),
                  "%s", info);
    dh_close(c);

    dh_restart(d);
    c = dh_connect(d);
    DH_EXPECT(c, "CHECK ads https://sub.evil.example/x", "YES");
    DH_EXPECT(c, "CHECK ads https://good.ads.example/x.js type=script", "NO");
    DH_EXPECT(c, "CHECK ads https://new.example/", "YES");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* What the tool says about the file, and an adblock filter the daemon
 * cannot serve: refused at start with the reason. */
START_TEST(test_tool_and_refusals)
{
    struct dh_daemon *d = dh_new();
    build_ads(d, list_v1, "ads.bloom");
    char file[DH_PATH_MAX], out[DH_PATH_MAX];
    dh_path(d, "ads.bloom", file);
    dh_path(d, "tool.out", out);
    const char *verify[] = {dh_tool_path(), "verify", file, NULL};
    ck_assert_int_eq(dh_run(verify, out, 60000), 0);
    const char *check[] = {dh_tool_path(), "check",
                           "--match",      "--type",
                           "script",       "--from",
                           "https://news.example/", file,
                           "https://tracker.example/t.js",
                           "https://ads.example/ok.js",
                           "https://x.example/ type=image",
                           NULL};
    ck_assert_int_eq(dh_run(check, out, 60000), 0);
    FILE *fp = fopen(out, "r");
    ck_assert_ptr_nonnull(fp);
    char text[4096];
    size_t n = fread(text, 1, sizeof(text) - 1, fp);
    fclose(fp);
    text[n] = '\0';
    ck_assert_str_eq(text, "YES\t||tracker.example^$third-party\t\n"
                           "NO\t||ads.example^$script\t@@||ads.example/ok.js$script\n"
                           "NO\n");
    /* Keys adblock with no file, or a file of other keys: refused by name. */
    dh_write_config(d, "filter ads {\n file @DIR@/missing.bloom\n keys adblock\n}\n");
    dh_spawn(d, NULL);
    ck_assert_int_ne(dh_wait_exit(d, DH_EXIT_TIMEOUT_MS), 0);
    ck_assert_msg(dh_log_contains(d, "bloomgate build --format adblock"), "%s",
                  dh_explain(d, "missing file"));
    static const char *const ex[] = {"a"};
    dh_build_filter(d, "ex.bloom", ex, 1, 100, 1e-4);
    dh_write_config(d, "filter ads {\n file @DIR@/ex.bloom\n keys adblock\n}\n");
    dh_spawn(d, NULL);
    ck_assert_int_ne(dh_wait_exit(d, DH_EXIT_TIMEOUT_MS), 0);
    ck_assert_msg(dh_log_contains(d, "holds exact keys, but the config"), "%s",
                  dh_explain(d, "kind mismatch"));
    dh_free(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("adblock");
    TCase *tc = tcase_create("served");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_context);
    tcase_add_test(tc, test_adds_reload_restart);
    tcase_add_test(tc, test_tool_and_refusals);
    suite_add_tcase(s, tc);
    return dh_run_suite(s);
}

/* Integration tests of bloomd's text protocol front (bloomd_listen): a real
 * bloomgated, spoken to over a plain socket in bloomd's exact bytes.
 * check/set/multi/bulk and their aliases must answer as bloomd does and as
 * the line protocol does for the same filter; list and info in bloomd's
 * shapes; bloomd's error words; adds journaled (a restart finds them); auth
 * and limits the line protocol's; pipelined lines answered in order; a line
 * over max_line answered and closed while the daemon goes on. bloomd's own
 * integration tests run against it from tests/it/bloomd_integ_test.sh. */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/daemon_harness.h"

#define T_MS 10000

/* A daemon serving `exact` (built from a, b, c: read only, capacity 3) and
 * `foobar` (empty, filled at run time, journaled), with bloomd's protocol
 * on a port of its own; extra is appended to the config. */
static struct dh_daemon *start(const char *extra)
{
    struct dh_daemon *d = dh_new();
    static const char *const items[] = {"a", "b", "c"};
    dh_build_filter(d, "exact.bloom", items, 3, 0, 0);
    char conf[2048];
    snprintf(conf, sizeof(conf),
             "bloomd_listen 127.0.0.1:0\n"
             "%s\n"
             "filter exact {\n  file @DIR@/exact.bloom\n}\n"
             "filter foobar {\n  capacity 100000\n  fpr 0.0001\n"
             "  journal @DIR@/foobar.journal\n  fsync always\n}\n",
             extra ? extra : "");
    dh_write_config(d, conf);
    dh_start(d, NULL);
    ck_assert_int_gt(dh_tagged_port(d, "bloomd protocol listening on ", 0), 0);
    return d;
}

static struct dh_conn *bconnect(struct dh_daemon *d)
{
    int fd = dh_connect_fd(dh_tagged_port(d, "bloomd protocol listening on ", 0));
    ck_assert_msg(fd >= 0, "%s", dh_explain(d, "cannot connect to the bloomd port"));
    return dh_conn_wrap(fd, d);
}

/* Send req and read exactly the lines of want. */
static void expect(struct dh_conn *c, const char *req, const char *want)
{
    dh_expect_text(c, req, want, T_MS);
}

/* The value of `name N` in an info block read from c. */
static long long info_value(struct dh_conn *c, const char *filter, const char *name)
{
    char req[128];
    snprintf(req, sizeof(req), "info %s\n", filter);
    ck_assert_int_eq(dh_send(c, req, strlen(req), T_MS), 0);
    const char *l = dh_read_line(c, T_MS);
    ck_assert_msg(l && strcmp(l, "START") == 0, "info: %s", l ? l : "(nothing)");
    long long v = -1;
    size_t n = strlen(name);
    while ((l = dh_read_line(c, T_MS)) && strcmp(l, "END") != 0)
        if (strncmp(l, name, n) == 0 && l[n] == ' ')
            v = atoll(l + n + 1);
    ck_assert_ptr_nonnull(l);
    return v;
}

START_TEST(test_commands)
{
    struct dh_daemon *d = start(NULL);
    struct dh_conn *c = bconnect(d);
    /* bloomd's test_set, test_doubleset, test_check, test_bulk, test_multi, test_aliases. */
    expect(c, "set foobar test\n", "Yes\n");
    expect(c, "set foobar test\n", "No\n");
    expect(c, "check foobar test\n", "Yes\n");
    expect(c, "multi foobar test test1 test2\n", "Yes No No\n");
    expect(c, "bulk foobar test1 blah\n", "Yes Yes\n");
    expect(c, "b foobar x1 x2 x3\ns foobar x1\nm foobar x2 x3 zz\nc foobar x1\n",
           "Yes Yes Yes\nNo\nYes Yes No\nYes\n");
    /* A filter built from a file answers as on the line protocol. */
    expect(c, "m exact a b z c\nc exact z\n", "Yes Yes No Yes\nNo\n");
    struct dh_conn *l = dh_connect(d);
    ck_assert_str_eq(dh_cmd(l, "MCHECK foobar test x1 zz"), "YES YES NO");
    /* check's key is the rest of the line, spaces and all. */
    expect(c, "s foobar two words\nc foobar two words\nm foobar two words\n", "Yes\nYes\nNo No\n");
    /* list: name order, bloomd's five columns; a prefix. */
    expect(c, "list\n", "START\nexact 0.000100 64 3 3\nfoobar 0.000100 275392 100000 7\nEND\n");
    expect(c, "list foo\nlist zz\n", "START\nfoobar 0.000100 275392 100000 7\nEND\nSTART\nEND\n");
    /* info: bloomd's 13 lines, counted over every front (the MCHECK above). */
    expect(c, "info exact\n",
           "START\ncapacity 3\nchecks 5\ncheck_hits 3\ncheck_misses 2\nin_memory 1\n"
           "page_ins 0\npage_outs 0\nprobability 0.000100\nsets 0\nset_hits 0\nset_misses 0\n"
           "size 3\nstorage 64\nEND\n");
    ck_assert_int_eq(info_value(c, "foobar", "sets"), 9);
    ck_assert_int_eq(info_value(c, "foobar", "set_hits"), 7);
    ck_assert_int_eq(info_value(c, "foobar", "set_misses"), 2);
    ck_assert_int_eq(info_value(c, "foobar", "checks"), 14);
    ck_assert_int_eq(info_value(c, "foobar", "size"), 7);
    /* flush and close: Done on a served filter. */
    expect(c, "flush\nflush foobar\nclose foobar\nc foobar test\n", "Done\nDone\nDone\nYes\n");
    /* bloomd's errors. */
    expect(c,
           "c nope x\nm nope x y\ns nope x\ninfo nope\nflush nope\nclose nope\n"
           "c foobar\nm foobar \ninfo\ninfo foobar x\ndrop\nbogus\nCHECK foobar x\n\n",
           "Filter does not exist\nFilter does not exist\nFilter does not exist\n"
           "Filter does not exist\nFilter does not exist\nFilter does not exist\n"
           "Client Error: Must provide filter name and key\n"
           "Client Error: Must provide filter name and key\n"
           "Client Error: Must provide filter name\nClient Error: Unexpected arguments\n"
           "Client Error: Must provide filter name\nClient Error: Command not supported\n"
           "Client Error: Command not supported\nClient Error: Command not supported\n");
    /* create's name and options are bloomd's; without state_dir nothing is
     * made; a config filter is neither dropped nor cleared, closed or not. */
    expect(c,
           "create a\tb\ncreate f capacity=5\ncreate f capacity=20000\ndrop foobar\n"
           "drop nope\nclear foobar\nclose foobar\nclear foobar\nclear nope\n",
           "Client Error: Bad filter name\nClient Error: Bad arguments\n"
           "Client Error: filters are created only with state_dir in the config\n"
           "Client Error: filter foobar is defined in the config: remove it there and reload\n"
           "Filter does not exist\n"
           "Client Error: filter foobar is defined in the config: it cannot be cleared\nDone\n"
           "Client Error: filter foobar is defined in the config: it cannot be cleared\n"
           "Filter does not exist\n");
    /* A CRLF client is served the same. */
    expect(c, "c foobar test\r\nm foobar test nope\r\n", "Yes\nYes No\n");
    dh_close(l);
    dh_close(c);
    /* Adds are journaled: a restart finds them. */
    dh_restart(d);
    c = bconnect(d);
    expect(c, "m foobar test x3 nope\nc foobar two words\n", "Yes Yes No\nYes\n");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* Many lines in one write, and one line in many writes: every reply, in order. */
START_TEST(test_pipelining)
{
    struct dh_daemon *d = start(NULL);
    struct dh_conn *c = bconnect(d);
    enum { N = 2000 };
    size_t cap = N * 40;
    char *req = malloc(cap), *want = malloc(cap);
    size_t rl = 0, wl = 0;
    for (int i = 0; i < N; i++) {
        rl += (size_t)snprintf(req + rl, cap - rl, "s foobar k%d\nc foobar k%d\n", i, i + 1);
        wl += (size_t)snprintf(want + wl, cap - wl, "Yes\n%s\n", i == N - 1 ? "No" : "No");
    }
    expect(c, req, want);
    /* The same keys again: all present now but the last check's. */
    rl = wl = 0;
    for (int i = 0; i < N; i++) {
        rl += (size_t)snprintf(req + rl, cap - rl, "c foobar k%d\n", i);
        wl += (size_t)snprintf(want + wl, cap - wl, "Yes\n");
    }
    expect(c, req, want);
    /* One line a byte at a time. */
    const char *slow = "m foobar k1 k2 nope\n";
    for (size_t i = 0; slow[i]; i++)
        ck_assert_int_eq(dh_send(c, slow + i, 1, T_MS), 0);
    expect(c, "", "Yes Yes No\n");
    free(req);
    free(want);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* max_items and max_item as on the other fronts; a line over max_line is
 * answered, then the connection closes, and the daemon goes on. */
START_TEST(test_limits)
{
    struct dh_daemon *d = start("max_items 4\nmax_item 8\nmax_line 1024");
    struct dh_conn *c = bconnect(d);
    expect(c, "m foobar 1 2 3 4\nm foobar 1 2 3 4 5\nb foobar 1 2 3 4 5 6\nc foobar x\n",
           "No No No No\nClient Error: 5 keys, the limit is max_items 4\n"
           "Client Error: 6 keys, the limit is max_items 4\nNo\n");
    expect(c, "s foobar 123456789\nm foobar a 123456789\ns foobar 12345678\n",
           "Client Error: item 1 is 9 bytes, the limit is max_item 8\n"
           "Client Error: item 2 is 9 bytes, the limit is max_item 8\nYes\n");
    char big[2048];
    memset(big, 'k', sizeof(big));
    memcpy(big, "c foobar ", 9);
    big[sizeof(big) - 1] = '\n';
    ck_assert_int_eq(dh_send(c, big, sizeof(big), T_MS), 0);
    const char *l = dh_read_line(c, T_MS);
    ck_assert_msg(l && strncmp(l, "Client Error: Line too long", 27) == 0, "%s", l ? l : "-");
    enum dh_closed how = dh_wait_closed(c, T_MS);
    ck_assert_msg(how == DH_EOF || how == DH_RESET, "connection not closed (%d)", (int)how);
    dh_close(c);
    c = bconnect(d);
    expect(c, "c foobar 12345678\n", "Yes\n");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* With an admin_token, sets need `auth <token>` (bloomgate's verb); checks
 * need nothing. */
START_TEST(test_auth)
{
    struct dh_daemon *d = start("admin_token s3cret");
    struct dh_conn *c = bconnect(d);
    expect(c, "c exact a\ns foobar x\nb foobar x y\n",
           "Yes\nClient Error: set needs auth <token> first on this connection\n"
           "Client Error: bulk needs auth <token> first on this connection\n");
    expect(c, "auth wrong\ns foobar x\nauth s3cret\ns foobar x\n",
           "Client Error: wrong token\n"
           "Client Error: set needs auth <token> first on this connection\nDone\nYes\n");
    dh_close(c);
    c = bconnect(d); /* per connection */
    expect(c, "s foobar y\n", "Client Error: set needs auth <token> first on this connection\n");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* A growing filter answers as bloomd's scalable one: its capacity is its
 * sub-filters' summed (4, 8, 16, 32 and 64 after 100 adds). */
START_TEST(test_growing)
{
    struct dh_daemon *d =
        start("filter grow {\n  capacity 4\n  fpr 0.01\n  growth on\n  journal off\n}\n");
    struct dh_conn *c = bconnect(d);
    char req[1024] = "b grow", want[512] = "";
    for (int i = 0; i < 100; i++) {
        snprintf(req + strlen(req), sizeof(req) - strlen(req), " k%d", i);
        strcat(want, i ? " Yes" : "Yes");
    }
    strcat(req, "\n");
    strcat(want, "\n");
    expect(c, req, want);
    ck_assert_int_eq(info_value(c, "grow", "capacity"), 124);
    ck_assert_int_eq(info_value(c, "grow", "size"), 100);
    ck_assert_int_eq(info_value(c, "grow", "set_hits"), 100);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* create and drop with a state_dir (docs/created.md): bloomd's words, a
 * growing filter, sets and checks on it, and the name free again after a
 * drop. */
START_TEST(test_create_drop)
{
    struct dh_daemon *d = start("state_dir @DIR@/state");
    struct dh_conn *c = bconnect(d);
    expect(c, "create nf capacity=20000 prob=0.001\ncreate nf\ns nf k\nc nf k\nc nf q\n",
           "Done\nExists\nYes\nYes\nNo\n");
    expect(c, "list nf\n", "START\n");
    const char *l = dh_read_line(c, DH_TIMEOUT_MS);
    ck_assert_msg(l && strncmp(l, "nf 0.001", 8) == 0, "%s", l ? l : "(none)");
    expect(c, "", "END\n");
    expect(c, "drop nf\ndrop nf\nc nf k\ncreate nf\nc nf k\ndrop nf\n",
           "Done\nFilter does not exist\nFilter does not exist\nDone\nNo\nDone\n");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* bloomd's close and clear (docs/bloomd.md): clear takes only a closed
 * filter, any access of this front reopens it; a cleared filter is gone from
 * the namespace, across a restart too, until a create (of any front) adopts
 * its files with their contents and options; once adopted the shelf is
 * empty, so a drop and a create make a new, empty filter. */
START_TEST(test_close_clear)
{
    struct dh_daemon *d = start("state_dir @DIR@/state");
    struct dh_conn *c = bconnect(d);
    expect(c, "create cf capacity=20000\nb cf k1 k2\nclear cf\nclose cf\nc cf k1\nclear cf\n",
           "Done\nYes Yes\nFilter is not proxied. Close it first.\nDone\nYes\n"
           "Filter is not proxied. Close it first.\n");
    expect(c, "close cf\n", "Done\n");
    ck_assert_int_eq(info_value(c, "cf", "capacity"), 20000); /* info reopens it too */
    expect(c, "clear cf\nclose cf\nlist cf\n",
           "Filter is not proxied. Close it first.\nDone\nSTART\n");
    const char *l = dh_read_line(c, T_MS);
    ck_assert_msg(l && strncmp(l, "cf 0.000100", 11) == 0, "%s", l ? l : "(none)");
    expect(c, "", "END\n");
    expect(c, "clear cf\nlist cf\nc cf k1\nclear cf\ndrop cf\nclose cf\n",
           "Done\nSTART\nEND\nFilter does not exist\nFilter does not exist\n"
           "Filter does not exist\nFilter does not exist\n");
    dh_close(c);
    /* A restart does not serve it; a create of the line protocol adopts it,
     * with its adds and its capacity, not the options asked. */
    dh_restart(d);
    c = bconnect(d);
    expect(c, "list cf\nc cf k1\n", "START\nEND\nFilter does not exist\n");
    struct dh_conn *lc = dh_connect(d);
    DH_EXPECT(lc, "CREATE cf capacity=500", "OK");
    DH_EXPECT(lc, "MCHECK cf k1 k2 k3", "YES YES NO");
    dh_close(lc);
    ck_assert_int_eq(info_value(c, "cf", "capacity"), 20000);
    /* Adopted, it lasts a restart as any created filter; adds after the
     * adoption too. */
    expect(c, "s cf k3\n", "Yes\n");
    dh_close(c);
    dh_restart(d);
    c = bconnect(d);
    expect(c, "m cf k1 k2 k3 k4\n", "Yes Yes Yes No\n");
    /* Checkpointed (its filter a file, its journal cut), cleared, then
     * created again at once: the file comes back too. */
    lc = dh_connect(d);
    DH_EXPECT(lc, "FLUSH cf", "OK");
    dh_close(lc);
    expect(c, "s cf k5\nclose cf\nclear cf\ncreate cf\nm cf k1 k3 k4 k5\n",
           "Yes\nDone\nDone\nDone\nYes Yes No Yes\n");
    /* The shelf was emptied by the adoption: drop and create make it anew. */
    expect(c, "drop cf\ncreate cf\nc cf k1\n", "Done\nDone\nNo\n");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* The leaf cN of the one created filter's block in d's state directory. */
static void state_leaf(struct dh_daemon *d, char *leaf, size_t len)
{
    char dir[DH_PATH_MAX];
    DIR *dd = opendir(dh_path(d, "state", dir));
    ck_assert_ptr_nonnull(dd);
    struct dirent *de;
    int found = 0;
    while ((de = readdir(dd))) {
        size_t n = strlen(de->d_name);
        if (de->d_name[0] == 'c' && n > 5 && strcmp(de->d_name + n - 5, ".conf") == 0) {
            snprintf(leaf, len, "%.*s", (int)(n - 5), de->d_name);
            found++;
        }
    }
    closedir(dd);
    ck_assert_int_eq(found, 1);
}

/* Link state/FROM to TO (both under d's directory). */
static void link_in(struct dh_daemon *d, const char *from, const char *to)
{
    char a[DH_PATH_MAX], b[DH_PATH_MAX];
    ck_assert_int_eq(link(dh_path(d, from, a), dh_path(d, to, b)), 0);
}

static bool exists(struct dh_daemon *d, const char *name)
{
    char p[DH_PATH_MAX];
    struct stat sb;
    return stat(dh_path(d, name, p), &sb) == 0;
}

/* Crashes in the middle of a clear or an adoption, made by hand while the
 * daemon is stopped (docs/created.md, "Put aside"): a clear cut short after
 * its links is no clear (the filter is served, the slot removed); an
 * adoption cut short before its block leaves the filter on the shelf (the
 * orphan removed, a create adopts it). */
START_TEST(test_clear_crash)
{
    struct dh_daemon *d = start("state_dir @DIR@/state");
    struct dh_conn *c = bconnect(d);
    expect(c, "create cr\nb cr k1 k2\n", "Done\nYes Yes\n");
    dh_close(c);
    dh_stop_ok(d);
    char leaf[64], from[128], to[160];
    state_leaf(d, leaf, sizeof(leaf));
    char p[DH_PATH_MAX];
    ck_assert_int_eq(mkdir(dh_path(d, "state/cleared", p), 0750), 0);
    ck_assert_int_eq(mkdir(dh_path(d, "state/cleared/cr.d", p), 0750), 0);
    static const char *const sfx[] = {".journal", ".conf"};
    for (int i = 0; i < 2; i++) {
        snprintf(from, sizeof(from), "state/%s%s", leaf, sfx[i]);
        snprintf(to, sizeof(to), "state/cleared/cr.d/%s%s", leaf, sfx[i]);
        link_in(d, from, to);
    }
    dh_start(d, NULL);
    c = bconnect(d);
    expect(c, "m cr k1 k2 k3\n", "Yes Yes No\n");
    ck_assert(!exists(d, "state/cleared/cr.d"));
    expect(c, "close cr\nclear cr\n", "Done\nDone\n");
    dh_close(c);
    dh_stop_ok(d);
    ck_assert(exists(d, "state/cleared/cr.d"));
    snprintf(from, sizeof(from), "state/cleared/cr.d/%s.journal", leaf);
    link_in(d, from, "state/c99999999.journal");
    dh_start(d, NULL);
    c = bconnect(d);
    expect(c, "c cr k1\n", "Filter does not exist\n");
    ck_assert(!exists(d, "state/c99999999.journal"));
    ck_assert(exists(d, "state/cleared/cr.d"));
    expect(c, "create cr\nm cr k1 k2 k3\n", "Done\nYes Yes No\n");
    ck_assert(!exists(d, "state/cleared/cr.d"));
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* Its counters show in the line protocol's INFO, under their own protocol. */
START_TEST(test_counted)
{
    struct dh_daemon *d = start(NULL);
    struct dh_conn *c = bconnect(d);
    expect(c, "m exact a b z\nnope\nc exact a\n",
           "Yes Yes No\nClient Error: Command not supported\nYes\n");
    struct dh_conn *l = dh_connect(d);
    const char *info = dh_cmd(l, "INFO");
    ck_assert_msg(strstr(info, "\"bloomd_requests\":3") != NULL, "%s", info);
    ck_assert_msg(strstr(info, "\"bloomd_errors\":1") != NULL, "%s", info);
    ck_assert_msg(strstr(info, "\"bloomd_connections_accepted\":1") != NULL, "%s", info);
    dh_close(l);
    dh_close(c);
    dh_finish(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bloomd");
    const TTest *tests[] = {
        test_commands, test_pipelining,  test_limits,      test_auth,        test_growing,
        test_counted,  test_create_drop, test_close_clear, test_clear_crash, NULL};
    dh_add_case(s, "bloomd", 120, tests);
    return dh_run_suite(s);
}

/* Integration tests of the Postfix fronts against a real bloomgated: the
 * policy delegation front with a client that speaks SMTPD_POLICY_README's
 * protocol exactly (every attribute Postfix 3.7 sends, several requests per
 * connection, any order, unknown attributes, an over-long request); the
 * tcp_table(5) front with Debian's own `postmap -q KEY tcp:127.0.0.1:PORT`
 * (run with -c DIR, DIR holding an empty main.cf: postmap refuses to run
 * without one, and no mail system is configured), and the raw protocol for
 * what postmap cannot send (pipelining, put, bad lines, an over-long line).
 * Filters are built with a fixed seed: every answer is the same on every run. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/daemon_harness.h"

#define POSTMAP "/usr/sbin/postmap"

static const char *const listed[] = {"evil.example", "bad@spam.test", "1.2.3.4",
                                     "with space@x.test"};

/* Build dir/name from a list with `bloomgate build --keys host`, a fixed seed. */
static void build_hosts(struct dh_daemon *d, const char *name, const char *const *items, size_t n)
{
    char list[DH_PATH_MAX], out[DH_PATH_MAX];
    dh_path(d, "hosts.txt", list);
    FILE *f = fopen(list, "w");
    ck_assert_ptr_nonnull(f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\n", items[i]);
    fclose(f);
    dh_path(d, name, out);
    const char *argv[] = {dh_tool_path(), "build", "-q", "-k", "host", "-S", "7",
                          "-p",           "1e-6",  "-o", out,  list,   NULL};
    ck_assert_int_eq(dh_run(argv, NULL, DH_TIMEOUT_MS), 0);
}

/* A daemon with an exact filter `l` and a host filter `h` behind two
 * tcp_table blocks. */
static struct dh_daemon *start_tcp_table(const char *extra)
{
    struct dh_daemon *d = dh_new();
    dh_build_filter(d, "l.bloom", listed, 4, 1000, 1e-6);
    static const char *const hosts[] = {"spam.test", "evil.example"};
    build_hosts(d, "h.bloom", hosts, 2);
    char conf[2048];
    snprintf(conf, sizeof(conf),
             "listen 127.0.0.1:0\n"
             "filter l {\n file @DIR@/l.bloom\n keys exact\n}\n"
             "filter h {\n file @DIR@/h.bloom\n keys host\n}\n"
             "tcp_table {\n listen 127.0.0.1:0\n filter l\n found \"REJECT listed here\"\n}\n"
             "tcp_table {\n listen 127.0.0.1:0\n filter h\n}\n%s",
             extra ? extra : "");
    dh_write_config(d, conf);
    dh_start(d, NULL);
    return d;
}

/* `postmap -c DIR -q key tcp:127.0.0.1:port`: its exit status (0 found, 1
 * not found, 2 and up an error) and its output (the value) in out. */
static int postmap_q(struct dh_daemon *d, int port, const char *key, char *out, size_t cap)
{
    char dir[DH_PATH_MAX], maincf[DH_PATH_MAX], table[64], outpath[DH_PATH_MAX];
    dh_path(d, "postfix", dir);
    dh_path(d, "postfix/main.cf", maincf);
    if (access(maincf, F_OK) != 0) {
        char cmd[DH_PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "mkdir -p %s", dir);
        ck_assert_int_eq(system(cmd), 0);
        FILE *f = fopen(maincf, "w");
        ck_assert_ptr_nonnull(f);
        fclose(f);
    }
    snprintf(table, sizeof(table), "tcp:127.0.0.1:%d", port);
    dh_path(d, "postmap.out", outpath);
    const char *argv[] = {POSTMAP, "-c", dir, "-q", key, table, NULL};
    int st = dh_run(argv, outpath, DH_TIMEOUT_MS);
    ck_assert_msg(st >= 0 && WIFEXITED(st), "%s", dh_explain(d, "postmap did not exit"));
    FILE *f = fopen(outpath, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, cap - 1, f);
    fclose(f);
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return WEXITSTATUS(st);
}

START_TEST(test_postmap)
{
    struct dh_daemon *d = start_tcp_table(NULL);
    int exact = dh_tagged_port(d, "tcp_table listening on ", 0);
    int host = dh_tagged_port(d, "tcp_table listening on ", 1);
    ck_assert_int_gt(exact, 0);
    ck_assert_int_gt(host, 0);
    char out[4096];
    for (size_t i = 0; i < 4; i++) {
        ck_assert_int_eq(postmap_q(d, exact, listed[i], out, sizeof(out)), 0);
        ck_assert_str_eq(out, "REJECT listed here"); /* decoded by postmap */
    }
    ck_assert_int_eq(postmap_q(d, exact, "good.example", out, sizeof(out)), 1);
    ck_assert_str_eq(out, "");
    /* postmap sends the key as given: an exact filter holds bytes, a host
     * filter folds case. */
    ck_assert_int_eq(postmap_q(d, exact, "Evil.example", out, sizeof(out)), 1);
    /* The host filter: subdomains and addresses at a listed domain. */
    ck_assert_int_eq(postmap_q(d, host, "deep.sub.spam.test", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "REJECT listed");
    ck_assert_int_eq(postmap_q(d, host, "anyone@evil.example", out, sizeof(out)), 0);
    ck_assert_int_eq(postmap_q(d, host, "DEEP.Spam.TEST", out, sizeof(out)), 0);
    ck_assert_int_eq(postmap_q(d, host, "notspam.test", out, sizeof(out)), 1);
    /* A key the host filter cannot read is not listed (500), not an error. */
    ck_assert_int_eq(postmap_q(d, host, "user@", out, sizeof(out)), 1);
    dh_finish(d);
}
END_TEST

/* What postmap does not send: pipelined requests, put, bad lines, encoding. */
START_TEST(test_raw)
{
    struct dh_daemon *d = start_tcp_table("max_line 1K\nmax_item 512\n");
    int port = dh_tagged_port(d, "tcp_table listening on ", 0);
    struct dh_conn *c = dh_conn_wrap(dh_connect_fd(port), d);
    ck_assert_int_eq(dh_sendf(c, "get evil.example\nget with%%20space@x.test\nget nope\n"
                                 "get a%%2\nfoo bar\nget\nget a b\nget %%31.2.3.4\r\n"),
                     0);
    char **l = dh_read_lines(c, 8, DH_TIMEOUT_MS);
    ck_assert_str_eq(l[0], "200 REJECT%20listed%20here");
    ck_assert_str_eq(l[1], "200 REJECT%20listed%20here");
    ck_assert_str_eq(l[2], "500 not-found");
    ck_assert_str_eq(l[3], "400 bad%20%25-encoding%20in%20the%20key");
    ck_assert_str_eq(l[4], "400 unknown%20request%20\"foo\"%20(get%20or%20put)");
    ck_assert_str_eq(l[5], "400 get%20without%20a%20key");
    ck_assert_str_eq(l[6], "400 get%20takes%20one%20key%20(a%20space%20in%20a%20key%20is%20sent%20"
                           "as%20%2520)");
    ck_assert_str_eq(l[7], "200 REJECT%20listed%20here");
    dh_lines_free(l);
    /* put: loopback without an admin_token may add; the value is ignored. */
    ck_assert_str_eq(dh_cmd(c, "get new.example"), "500 not-found");
    ck_assert_str_eq(dh_cmd(c, "put new.example whatever"), "200 NEW");
    ck_assert_str_eq(dh_cmd(c, "put new.example again"), "200 EXISTS");
    ck_assert_str_eq(dh_cmd(c, "get new.example"), "200 REJECT%20listed%20here");
    /* A line over max_line: 400, then the connection closes. */
    char big[1500];
    memset(big, 'a', sizeof(big));
    memcpy(big, "get ", 4);
    ck_assert_int_eq(dh_send(c, big, sizeof(big), DH_TIMEOUT_MS), 0);
    ck_assert_str_eq(dh_read_line(c, DH_TIMEOUT_MS), "400 request%20longer%20than%20max_line");
    ck_assert_int_eq(dh_wait_closed(c, DH_TIMEOUT_MS), DH_EOF);
    dh_close(c);
    /* Counted as tcp_table's, not the line protocol's: 12 requests, 4 of
     * them faults; the line protocol has answered one request, this INFO. */
    struct dh_conn *lc = dh_connect(d);
    const char *info = dh_cmd(lc, "INFO");
    ck_assert_msg(strstr(info, "\"tcp_table_requests\":12,") != NULL, "%.2000s", info);
    ck_assert_msg(strstr(info, "\"tcp_table_errors\":4,") != NULL, "%.2000s", info);
    ck_assert_msg(strstr(info, "\"commands\":1,") != NULL, "%.2000s", info);
    ck_assert_msg(strstr(info, "\"tcp_table_connections_accepted\":1,") != NULL, "%.2000s", info);
    dh_close(lc);
    dh_finish(d);
}
END_TEST

/* With an admin_token set, put is refused: read-only. */
START_TEST(test_put_read_only)
{
    struct dh_daemon *d = start_tcp_table("admin_token secret\n");
    int port = dh_tagged_port(d, "tcp_table listening on ", 0);
    struct dh_conn *c = dh_conn_wrap(dh_connect_fd(port), d);
    ck_assert_str_eq(dh_cmd(c, "put new.example v"), "500 read-only");
    ck_assert_str_eq(dh_cmd(c, "get new.example"), "500 not-found");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ---- policy delegation (SMTPD_POLICY_README) ---- */

/* A daemon with the exact filter `l` (addresses, domains and an IP) and the
 * host filter `h` behind one policy block. */
static struct dh_daemon *start_policy(const char *extra)
{
    struct dh_daemon *d = dh_new();
    static const char *const exact[] = {"192.0.2.66", "bad@spam.test", "blocked.example",
                                        "mx.evil.example"};
    dh_build_filter(d, "l.bloom", exact, 4, 1000, 1e-6);
    static const char *const hosts[] = {"spam.test", "evil.example"};
    build_hosts(d, "h.bloom", hosts, 2);
    char conf[2048];
    snprintf(conf, sizeof(conf),
             "listen 127.0.0.1:0\n"
             "filter l {\n file @DIR@/l.bloom\n keys exact\n}\n"
             "filter h {\n file @DIR@/h.bloom\n keys host\n}\n"
             "policy {\n listen 127.0.0.1:0\n"
             " check client_address l\n check client_name h\n check helo_name h\n"
             " check sender l\n check recipient l\n"
             " action \"REJECT listed by $filter ($attribute $match)\"\n}\n%s",
             extra ? extra : "");
    dh_write_config(d, conf);
    dh_start(d, NULL);
    return d;
}

/* A request as Postfix sends one: every attribute SMTPD_POLICY_README
 * lists (the checked ones given by the caller), ended by an empty line. */
static void send_request(struct dh_conn *c, const char *client, const char *name, const char *helo,
                         const char *sender, const char *rcpt)
{
    ck_assert_int_eq(
        dh_sendf(c,
                 "request=smtpd_access_policy\nprotocol_state=RCPT\n"
                 "protocol_name=ESMTP\nclient_address=%s\nclient_name=%s\n"
                 "client_port=54321\nreverse_client_name=%s\nserver_address=127.0.0.1\n"
                 "server_port=25\nhelo_name=%s\nsender=%s\nrecipient=%s\n"
                 "recipient_count=0\nqueue_id=\ninstance=1a2b.5c6d.7\nsize=0\n"
                 "etrn_domain=\nstress=\nsasl_method=\nsasl_username=\n"
                 "sasl_sender=\nccert_subject=\nccert_issuer=\n"
                 "ccert_fingerprint=\nencryption_protocol=TLSv1.3\n"
                 "encryption_cipher=TLS_AES_256_GCM_SHA384\nencryption_keysize=256\n"
                 "policy_context=\ncompatibility_level=3.6\n"
                 "mail_version=3.7.11\n\n",
                 client, name, name, helo, sender, rcpt),
        0);
}

/* The reply: `action=...` and an empty line; the action. */
static char *read_action(struct dh_conn *c)
{
    const char *l = dh_read_line(c, DH_TIMEOUT_MS);
    ck_assert_msg(l != NULL, "%s", dh_explain(c->d, "no policy reply"));
    ck_assert_msg(strncmp(l, "action=", 7) == 0, "not an action line: %s", l);
    char *action = strdup(l + 7);
    l = dh_read_line(c, DH_TIMEOUT_MS);
    ck_assert_msg(l != NULL && l[0] == '\0', "no empty line after the action");
    return action;
}

#define EXPECT_ACTION(c, want)                                                                     \
    do {                                                                                           \
        char *a_ = read_action(c);                                                                 \
        ck_assert_str_eq(a_, want);                                                                \
        free(a_);                                                                                  \
    } while (0)

START_TEST(test_policy)
{
    struct dh_daemon *d = start_policy(NULL);
    int port = dh_tagged_port(d, "policy listening on ", 0);
    struct dh_conn *c = dh_conn_wrap(dh_connect_fd(port), d);
    /* Several requests on one connection, each answered in turn. */
    send_request(c, "198.51.100.7", "mail.good.example", "mail.good.example", "a@good.example",
                 "b@good.example");
    EXPECT_ACTION(c, "DUNNO");
    send_request(c, "192.0.2.66", "mail.good.example", "x", "a@good.example", "b@good.example");
    EXPECT_ACTION(c, "REJECT listed by l (client_address 192.0.2.66)");
    send_request(c, "198.51.100.7", "relay.Spam.Test", "x", "a@good.example", "b@good.example");
    EXPECT_ACTION(c, "REJECT listed by h (client_name spam.test)");
    /* client_name "unknown" (no reverse DNS) is not looked up. */
    send_request(c, "198.51.100.7", "unknown", "mx.evil.example", "", "b@good.example");
    EXPECT_ACTION(c, "REJECT listed by h (helo_name evil.example)");
    /* A HELO the host filter cannot read does not match. */
    send_request(c, "198.51.100.7", "unknown", "[198.51.100.7]", "", "b@good.example");
    EXPECT_ACTION(c, "DUNNO");
    /* Sender in the exact filter: the whole address, then its domain. */
    send_request(c, "198.51.100.7", "unknown", "x", "bad@spam.test", "b@good.example");
    EXPECT_ACTION(c, "REJECT listed by l (sender bad@spam.test)");
    send_request(c, "198.51.100.7", "unknown", "x", "anyone@blocked.example", "b@good.example");
    EXPECT_ACTION(c, "REJECT listed by l (sender blocked.example)");
    send_request(c, "198.51.100.7", "unknown", "x", "good@spam.test.example",
                 "who@blocked.example");
    EXPECT_ACTION(c, "REJECT listed by l (recipient blocked.example)");
    /* Attributes in any order, unknown ones ignored, a bare request. */
    ck_assert_int_eq(dh_sendf(c, "future_attribute=1\nrecipient=x@blocked.example\n"
                                 "request=smtpd_access_policy\nsender=\n\n"),
                     0);
    EXPECT_ACTION(c, "REJECT listed by l (recipient blocked.example)");
    ck_assert_int_eq(dh_sendf(c, "request=smtpd_access_policy\n\n\n"), 0);
    EXPECT_ACTION(c, "DUNNO");
    EXPECT_ACTION(c, "DUNNO"); /* the second empty line: an empty request */
    /* Two requests in one write (pipelined). */
    ck_assert_int_eq(dh_sendf(c, "client_address=192.0.2.66\n\nclient_address=192.0.2.67\n\n"), 0);
    EXPECT_ACTION(c, "REJECT listed by l (client_address 192.0.2.66)");
    EXPECT_ACTION(c, "DUNNO");
    /* A line that is no attribute: refused, then closed. */
    ck_assert_int_eq(dh_sendf(c, "client_address=192.0.2.66\nnot an attribute\n\n"), 0);
    EXPECT_ACTION(c, "DEFER_IF_PERMIT bad policy request: line 2 is not NAME=VALUE");
    ck_assert_int_eq(dh_wait_closed(c, DH_TIMEOUT_MS), DH_EOF);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* A request over max_line: refused and closed, never buffered without end. */
START_TEST(test_policy_too_long)
{
    struct dh_daemon *d = start_policy("max_line 1K\nmax_item 512\n");
    int port = dh_tagged_port(d, "policy listening on ", 0);
    struct dh_conn *c = dh_conn_wrap(dh_connect_fd(port), d);
    send_request(c, "192.0.2.66", "x", "x", "", "b@good.example");
    EXPECT_ACTION(c, "REJECT listed by l (client_address 192.0.2.66)");
    static char big[4096];
    memset(big, 'v', sizeof(big));
    memcpy(big, "sender=", 7);
    big[sizeof(big) - 1] = '\n';
    ck_assert_int_eq(dh_send(c, big, sizeof(big), DH_TIMEOUT_MS), 0);
    EXPECT_ACTION(c, "DEFER_IF_PERMIT policy request longer than max_line");
    ck_assert_int_eq(dh_wait_closed(c, DH_TIMEOUT_MS), DH_EOF);
    dh_close(c);
    dh_finish(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("postfix");
    const TTest *const tcp[] = {test_postmap, test_raw, test_put_read_only, NULL};
    dh_add_case(s, "tcp_table", 120, tcp);
    const TTest *const pol[] = {test_policy, test_policy_too_long, NULL};
    dh_add_case(s, "policy", 120, pol);
    return dh_run_suite(s);
}

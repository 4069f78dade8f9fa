/* check_cmd: the command table (src/core/cmd.c) on filters served in process
 * (tests/lib/rig.h): the auth rule of mutating commands, stated once in
 * cmd_authorize and applied by cmd_run whatever the front; the order of
 * admission (the filter, then auth, then the limits); max_items and max_item
 * with their messages; and what each handler answers on a small filter of
 * each key kind, with the per-filter counters it leaves. */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <string.h>

#include "core/cmd.h"
#include "lib/rig.h"
#include "conf/conf.h"

static const char *const conf_plain = "listen 127.0.0.1:1\n"
                                      "http_listen off\n"
                                      "max_items 4\n"
                                      "max_item 8\n"
                                      "filter ex {\n capacity 1000\n keys exact\n}\n";

static const char *const conf_hosts = "listen 127.0.0.1:1\n"
                                      "http_listen off\n"
                                      "filter hosts {\n capacity 1000\n keys host\n}\n";

static const char *const conf_token = "listen 127.0.0.1:1\n"
                                      "http_listen off\n"
                                      "admin_token s3cret-token\n"
                                      "filter ex {\n capacity 1000\n keys exact\n}\n";

/* The rule itself, every combination: without an admin_token only loopback
 * may change anything, whatever it presents; with one, only the token does,
 * from anywhere, and a wrong one is told apart from none. */
START_TEST(test_authorize_rule)
{
    struct rig r;
    rig_open(&r, conf_plain);
    const struct conf *open = registry_read(r.reg)->conf;
    ck_assert_ptr_null(open->admin_token);
    ck_assert_int_eq(cmd_authorize(open, true, CMD_CRED_NONE), CMD_OK);
    ck_assert_int_eq(cmd_authorize(open, true, CMD_CRED_WRONG), CMD_OK);
    ck_assert_int_eq(cmd_authorize(open, false, CMD_CRED_NONE), CMD_ERR_AUTH_REQUIRED);
    ck_assert_int_eq(cmd_authorize(open, false, CMD_CRED_GOOD), CMD_ERR_AUTH_REQUIRED);
    rig_close(&r);

    rig_open(&r, conf_token);
    const struct conf *tok = registry_read(r.reg)->conf;
    ck_assert_str_eq(tok->admin_token, "s3cret-token");
    for (int lo = 0; lo < 2; lo++) {
        ck_assert_int_eq(cmd_authorize(tok, lo, CMD_CRED_GOOD), CMD_OK);
        ck_assert_int_eq(cmd_authorize(tok, lo, CMD_CRED_NONE), CMD_ERR_AUTH_REQUIRED);
        ck_assert_int_eq(cmd_authorize(tok, lo, CMD_CRED_WRONG), CMD_ERR_AUTH_FAILED);
    }
    rig_close(&r);
}
END_TEST

/* cmd_run applies the rule to every mutating row and to no other, and a
 * refused mutation changes nothing. */
START_TEST(test_run_applies_auth)
{
    struct rig r;
    rig_open(&r, conf_token);
    const char *items[] = {"item", NULL};
    for (enum cmd_id id = 0; id < CMD_COUNT_; id++) {
        if (!cmd_table[id].names_filter)
            continue;
        struct cmd_call c = rig_call(&r, id, "ex", items, true, CMD_CRED_NONE);
        if (cmd_table[id].mutating) {
            ck_assert_msg(c.err == CMD_ERR_AUTH_REQUIRED, "%s", cmd_table[id].name);
            ck_assert_str_eq(c.msg, "this needs the admin_token");
            c = rig_call(&r, id, "ex", items, false, CMD_CRED_WRONG);
            ck_assert_int_eq(c.err, CMD_ERR_AUTH_FAILED);
            ck_assert_str_eq(c.msg, "wrong token");
        } else if (id == CMD_SCAN) { /* ex is not a word list: no auth asked, the kind refused */
            ck_assert_msg(c.err == CMD_ERR_WRONG_KIND, "%s: %s", cmd_table[id].name, c.msg);
        } else {
            ck_assert_msg(c.err == CMD_OK, "%s: %s", cmd_table[id].name, c.msg);
        }
    }
    ck_assert(!rig_check1(&r, "ex", "item")); /* no refused ADD reached the filter */
    struct cmd_call c = rig_call(&r, CMD_ADD, "ex", items, false, CMD_CRED_GOOD);
    ck_assert_int_eq(c.err, CMD_OK);
    ck_assert(rig_check1(&r, "ex", "item"));
    /* RELOAD is mutating and answered by the front: admitted, no handler. */
    c = rig_call(&r, CMD_RELOAD, NULL, NULL, false, CMD_CRED_NONE);
    ck_assert_int_eq(c.err, CMD_ERR_AUTH_REQUIRED);
    c = rig_call(&r, CMD_RELOAD, NULL, NULL, false, CMD_CRED_GOOD);
    ck_assert_int_eq(c.err, CMD_OK);
    rig_close(&r);

    /* Without a token: loopback only, with the message that says so. */
    rig_open(&r, conf_plain);
    c = rig_call(&r, CMD_ADD, "ex", items, false, CMD_CRED_GOOD);
    ck_assert_int_eq(c.err, CMD_ERR_AUTH_REQUIRED);
    ck_assert_ptr_nonnull(strstr(c.msg, "only from loopback clients"));
    ck_assert(!rig_check1(&r, "ex", "item"));
    rig_close(&r);
}
END_TEST

/* The filter is looked up before auth (the line protocol has always
 * answered unknown_filter first), and its name is quoted back. */
START_TEST(test_unknown_filter)
{
    struct rig r;
    rig_open(&r, conf_token);
    const char *items[] = {"item", NULL};
    struct cmd_call c = rig_call(&r, CMD_CHECK, "nope", items, true, CMD_CRED_NONE);
    ck_assert_int_eq(c.err, CMD_ERR_UNKNOWN_FILTER);
    ck_assert_str_eq(c.msg, "no such filter 'nope'");
    c = rig_call(&r, CMD_ADD, "nope", items, false, CMD_CRED_WRONG);
    ck_assert_int_eq(c.err, CMD_ERR_UNKNOWN_FILTER);
    /* A prefix or an extension of a served name is not that name. */
    c = rig_call(&r, CMD_CHECK, "e", items, true, CMD_CRED_NONE);
    ck_assert_int_eq(c.err, CMD_ERR_UNKNOWN_FILTER);
    c = rig_call(&r, CMD_CHECK, "exx", items, true, CMD_CRED_NONE);
    ck_assert_int_eq(c.err, CMD_ERR_UNKNOWN_FILTER);
    /* A command that names a filter must name one. */
    c = rig_call(&r, CMD_CHECK, NULL, items, true, CMD_CRED_NONE);
    ck_assert_int_eq(c.err, CMD_ERR_UNKNOWN_FILTER);
    ck_assert_str_eq(c.msg, "no filter named");
    c = rig_call(&r, CMD_INFO, "nope", NULL, true, CMD_CRED_NONE);
    ck_assert_int_eq(c.err, CMD_ERR_UNKNOWN_FILTER);
    ck_assert_ptr_null(c.json);
    rig_close(&r);
}
END_TEST

/* max_items (bounded by the worker's scratch too) and max_item, checked
 * after auth and before the handler: a refused request adds nothing. */
START_TEST(test_limits)
{
    struct rig r;
    rig_open(&r, conf_plain);
    struct cmd_limits lim = cmd_limits(registry_read(r.reg)->conf, RIG_SCRATCH);
    ck_assert_uint_eq(lim.max_items, 4);
    ck_assert_uint_eq(lim.max_item, 8);
    ck_assert_uint_eq(cmd_limits(registry_read(r.reg)->conf, 3).max_items, 3);

    const char *five[] = {"a", "b", "c", "d", "e", NULL};
    struct cmd_call c = rig_call(&r, CMD_ADD, "ex", five, true, CMD_CRED_NONE);
    ck_assert_int_eq(c.err, CMD_ERR_TOO_MANY_ITEMS);
    ck_assert_str_eq(c.msg, "5 items, the limit is max_items 4");
    ck_assert(!rig_check1(&r, "ex", "a"));
    const char *four[] = {"a", "b", "c", "d", NULL};
    rig_ok(&r, CMD_CHECK, "ex", four);

    const char *longer[] = {"12345678", "123456789", NULL};
    c = rig_call(&r, CMD_ADD, "ex", longer, true, CMD_CRED_NONE);
    ck_assert_int_eq(c.err, CMD_ERR_ITEM_TOO_LONG);
    ck_assert_str_eq(c.msg, "item 2 is 9 bytes, the limit is max_item 8");
    ck_assert(!rig_check1(&r, "ex", "12345678"));

    /* Auth comes first: a refused client learns nothing of the limits. */
    c = rig_call(&r, CMD_ADD, "ex", five, false, CMD_CRED_NONE);
    ck_assert_int_eq(c.err, CMD_ERR_AUTH_REQUIRED);

    /* A front whose parser applied the limits says so, and the table trusts it. */
    r.env.scratch_items = 3;
    struct cmd_call call;
    for (int i = 0; i < 4; i++) {
        r.keys[i].data = four[i];
        r.keys[i].len = 1;
    }
    cmd_call_init(&call, registry_read(r.reg), NULL, 4, true, CMD_CRED_NONE);
    call.filter = "ex";
    call.filter_len = 2;
    cmd_run(&r.env, CMD_CHECK, NULL, &call);
    ck_assert_int_eq(call.err, CMD_ERR_TOO_MANY_ITEMS);
    ck_assert_str_eq(call.msg, "4 items, the limit is max_items 3");
    cmd_call_init(&call, registry_read(r.reg), NULL, 4, true, CMD_CRED_NONE);
    call.filter = "ex";
    call.filter_len = 2;
    call.limits_applied = true;
    cmd_run(&r.env, CMD_CHECK, NULL, &call);
    ck_assert_int_eq(call.err, CMD_OK);
    rig_close(&r);
}
END_TEST

/* The handlers on an exact filter: ADD answers which items are new, CHECK
 * which are present, MATCH names the item; the counters of the protocol
 * in env->proto count items and answers. */
START_TEST(test_exact_handlers)
{
    struct rig r;
    rig_open(&r, conf_plain);
    const struct fentry *e = rig_entry(&r, "ex");
    r.env.proto = STATS_RESP;
    const char *add[] = {"one", "two", NULL};
    struct cmd_call c = rig_ok(&r, CMD_ADD, "ex", add);
    ck_assert_uint_eq(c.yes, 2);
    ck_assert(r.bools[0] && r.bools[1]);
    const char *again[] = {"two", "three", NULL};
    c = rig_ok(&r, CMD_ADD, "ex", again);
    ck_assert_uint_eq(c.yes, 1);
    ck_assert(!r.bools[0] && r.bools[1]);

    const char *batch[] = {"one", "absent", "three", "two", NULL};
    c = rig_ok(&r, CMD_CHECK, "ex", batch);
    ck_assert_uint_eq(c.yes, 3);
    ck_assert(r.bools[0] && !r.bools[1] && r.bools[2] && r.bools[3]);
    ck_assert_uint_eq(c.allowed, 0);

    const char *m[] = {"three", NULL};
    c = rig_ok(&r, CMD_MATCH, "ex", m);
    ck_assert_uint_eq(c.match_len, 5);
    ck_assert_int_eq(memcmp(c.match, "three", 5), 0);
    const char *nm[] = {"absent", NULL};
    c = rig_ok(&r, CMD_MATCH, "ex", nm);
    ck_assert_ptr_null(c.match);

    struct fstats *fs = stats_fslot(&r.sb, r.id_gen, e->id);
    ck_assert_uint_eq(fs->adds[STATS_RESP], 4);
    ck_assert_uint_eq(fs->added_new[STATS_RESP], 3);
    ck_assert_uint_eq(fs->checks[STATS_RESP], 4 + 1 + 1);
    ck_assert_uint_eq(fs->hits[STATS_RESP], 3 + 1);
    ck_assert_uint_eq(fs->checks[STATS_LINE], 0);

    /* INFO of the filter and of the daemon; HEALTH with every filter served. */
    c = rig_ok(&r, CMD_INFO, "ex", NULL);
    ck_assert_ptr_nonnull(c.json);
    ck_assert_str_eq(json_string_value(json_object_get(c.json, "name")), "ex");
    ck_assert_int_eq(json_integer_value(json_object_get(c.json, "capacity")), 1000);
    json_decref(c.json);
    c = rig_ok(&r, CMD_HEALTH, NULL, NULL);
    ck_assert_ptr_null(c.json);
    rig_close(&r);
}
END_TEST

/* A host filter: an item is read as a host (from a URL or an address too)
 * and matched by its most specific listed parent; an ADD takes the one key
 * a list line would give, and an item it cannot read fails the request,
 * naming which, with nothing added. */
START_TEST(test_host_handlers)
{
    struct rig r;
    rig_open(&r, conf_hosts);
    const char *add[] = {"Evil.TEST", "a.b.c", NULL};
    struct cmd_call c = rig_ok(&r, CMD_ADD, "hosts", add);
    ck_assert_uint_eq(c.yes, 2);
    const char *q[] = {"http://x.evil.test/p", NULL};
    c = rig_ok(&r, CMD_MATCH, "hosts", q);
    ck_assert_uint_eq(c.match_len, strlen("evil.test"));
    ck_assert_int_eq(memcmp(c.match, "evil.test", c.match_len), 0);
    ck_assert(rig_check1(&r, "hosts", "bob@mail.evil.test"));
    ck_assert(!rig_check1(&r, "hosts", "evil.test.example"));
    ck_assert(!rig_check1(&r, "hosts", "b.c"));

    const char *bad[] = {"fine.test", "http://x.test/with/a/path", NULL};
    c = rig_call(&r, CMD_ADD, "hosts", bad, true, CMD_CRED_NONE);
    ck_assert_int_eq(c.err, CMD_ERR_BAD_ITEM);
    ck_assert_uint_eq(c.bad_item, 2);
    ck_assert(!rig_check1(&r, "hosts", "fine.test"));
    rig_close(&r);
}
END_TEST

/* The rows: which commands name a filter, take items, mutate; the op each
 * mutating one journals. */
START_TEST(test_table_rows)
{
    for (enum cmd_id id = 0; id < CMD_COUNT_; id++) {
        const struct cmd_def *d = &cmd_table[id];
        ck_assert_ptr_nonnull(d->name);
        /* SCAN names a filter and takes a text, not items. */
        ck_assert_msg(d->items == (d->names_filter && id != CMD_SCAN), "%s", d->name);
        bool mut = id == CMD_ADD || id == CMD_RELOAD || id == CMD_ALLOW || id == CMD_UNALLOW ||
                   id == CMD_REMOVE || id == CMD_CREATE || id == CMD_DROP || id == CMD_CLEAR ||
                   id == CMD_FLUSH;
        ck_assert_msg(d->mutating == mut, "%s", d->name);
    }
    ck_assert_int_eq(cmd_op(CMD_ADD), JOURNAL_OP_ADD);
    ck_assert_int_eq(cmd_op(CMD_ALLOW), JOURNAL_OP_ALLOW);
    ck_assert_int_eq(cmd_op(CMD_UNALLOW), JOURNAL_OP_UNALLOW);
    ck_assert_int_eq(cmd_op(CMD_REMOVE), JOURNAL_OP_REMOVE);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cmd");
    TCase *tc = tcase_create("cmd");
    tcase_add_test(tc, test_authorize_rule);
    tcase_add_test(tc, test_run_applies_auth);
    tcase_add_test(tc, test_unknown_filter);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_exact_handlers);
    tcase_add_test(tc, test_host_handlers);
    tcase_add_test(tc, test_table_rows);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

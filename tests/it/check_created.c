/* Filters created at run time in the real daemon (store/created.h): CREATE,
 * DROP, CLEAR on the line protocol and HTTP; what lasts across a restart, a
 * reload and SIGKILL (fsync always); what the state directory holds; the
 * limits (max_filters, max_created_memory, no state_dir); a config filter
 * that cannot be dropped; and drops while clients check the filter. */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/daemon_harness.h"
#include "lib/http_client.h"
#include "lib/line_client.h"

static void write_conf(struct dh_daemon *d, const char *extra)
{
    char conf[1024];
    snprintf(conf, sizeof(conf),
             "http_listen 127.0.0.1:0\nthreads 2\nstate_dir @DIR@/state\n%s"
             "filter cfg {\n capacity 1000\n}\n",
             extra);
    dh_write_config(d, conf);
}

/* Files in the state directory whose names start with c (the filters'). */
static int state_files(struct dh_daemon *d)
{
    char path[4096];
    dh_path(d, "state", path);
    DIR *dir = opendir(path);
    ck_assert_msg(dir != NULL, "no state directory %s", path);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dir)))
        n += de->d_name[0] == 'c';
    closedir(dir);
    return n;
}

static int http(struct dh_daemon *d, const char *method, const char *target, const char *body,
                char *out, size_t outlen)
{
    struct hc_conn h;
    struct hc_resp r;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    ck_assert_msg(hc_request(&h, method, target, NULL, body, body ? strlen(body) : 0, &r,
                             DH_TIMEOUT_MS) == 0,
                  "%s %s: %s", method, target, h.err);
    hc_close(&h);
    int status = r.status;
    if (out)
        snprintf(out, outlen, "%s", r.body ? r.body : "");
    hc_resp_free(&r);
    return status;
}

START_TEST(test_lifecycle_and_restart)
{
    struct dh_daemon *d = dh_new();
    write_conf(d, "");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CREATE a capacity=1000 fpr=0.01", "OK");
    ck_assert_str_eq(dh_cmd(c, "CREATE a"), "ERR exists filter a exists");
    DH_EXPECT(c, "MADD a x y", "NEW NEW");
    DH_EXPECT(c, "CHECK a x", "YES");
    DH_EXPECT(c, "CHECK a q", "NO");
    DH_EXPECT(c, "FILTERS", "cfg a");
    ck_assert_str_eq(dh_cmd(c, "DROP cfg"),
                     "ERR configured filter cfg is defined in the config: remove it there and "
                     "reload");
    ck_assert_str_eq(dh_cmd(c, "CLEAR cfg"),
                     "ERR configured filter cfg is defined in the config: remove it there and "
                     "reload");
    ck_assert(strncmp(dh_cmd(c, "CREATE b capac=1"), "ERR bad_option unknown option capac", 35) ==
              0);
    ck_assert(strncmp(dh_cmd(c, "CREATE b capacity=x"), "ERR bad_option capacity:", 24) == 0);
    ck_assert(strncmp(dh_cmd(c, "CREATE b keys=adblock"), "ERR bad_option keys adblock", 27) == 0);
    ck_assert(strncmp(dh_cmd(c, "CREATE b capacity"), "ERR bad_option option 1 is not", 30) == 0);
    ck_assert(strncmp(dh_cmd(c, "CREATE b fpr=0.1;file=/etc"), "ERR bad_option option fpr", 25) ==
              0);
    ck_assert_str_eq(dh_cmd(c, "DROP nope"), "ERR unknown_filter no filter nope");
    DH_EXPECT(c, "FLUSH a", "OK");
    ck_assert_int_eq(state_files(d), 3); /* a's block, its checkpoint and a new journal */
    DH_EXPECT(c, "ADD a after", "NEW");
    dh_close(c);

    /* A restart serves it again, with its adds. */
    dh_restart(d);
    c = dh_connect(d);
    DH_EXPECT(c, "FILTERS", "cfg a");
    DH_EXPECT(c, "CHECK a x", "YES");   /* from the checkpoint */
    DH_EXPECT(c, "CHECK a after", "YES"); /* from the journal after it */
    /* CLEAR empties it; the cleared state is what a restart finds. */
    DH_EXPECT(c, "CLEAR a", "OK");
    DH_EXPECT(c, "CHECK a x", "NO");
    DH_EXPECT(c, "ADD a z", "NEW");
    ck_assert_int_eq(state_files(d), 2);
    dh_close(c);
    dh_restart(d);
    c = dh_connect(d);
    DH_EXPECT(c, "CHECK a z", "YES");
    DH_EXPECT(c, "CHECK a x", "NO");
    /* DROP: gone now, its files removed, and after a restart too. */
    DH_EXPECT(c, "DROP a", "OK");
    ck_assert_str_eq(dh_cmd(c, "CHECK a z"), "ERR unknown_filter no such filter 'a'");
    ck_assert_int_eq(state_files(d), 0);
    /* The name is free again: a new, empty filter. */
    DH_EXPECT(c, "CREATE a capacity=10", "OK");
    DH_EXPECT(c, "CHECK a z", "NO");
    DH_EXPECT(c, "DROP a", "OK");
    dh_close(c);
    dh_restart(d);
    c = dh_connect(d);
    DH_EXPECT(c, "FILTERS", "cfg");
    dh_close(c);
    dh_finish(d);
}
END_TEST

START_TEST(test_limits)
{
    struct dh_daemon *d = dh_new();
    write_conf(d, "max_filters 2\nmax_created_memory 1M\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CREATE a capacity=100", "OK");
    DH_EXPECT(c, "CREATE b capacity=100", "OK");
    ck_assert_str_eq(dh_cmd(c, "CREATE c capacity=100"),
                     "ERR limit max_filters (2) reached: drop a filter or raise max_filters");
    DH_EXPECT(c, "DROP b", "OK");
    const char *r = dh_cmd(c, "CREATE big capacity=10000000 fpr=0.0001");
    ck_assert_msg(strncmp(r, "ERR limit max_created_memory (1048576 bytes) reached", 52) == 0,
                  "%s", r);
    DH_EXPECT(c, "FILTERS", "cfg a");
    ck_assert_int_eq(state_files(d), 2); /* nothing of the refused one is left */
    dh_close(c);
    dh_finish(d);

    /* Without state_dir nothing is created. */
    d = dh_new();
    dh_write_config(d, "http_listen off\nfilter cfg {\n capacity 10\n}\n");
    dh_start(d, NULL);
    c = dh_connect(d);
    ck_assert_str_eq(dh_cmd(c, "CREATE a"),
                     "ERR no_state_dir filters are created only with state_dir in the config");
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* A reload keeps created filters; a config that defines a created name is
 * refused for that filter, which stays the created one. */
START_TEST(test_reload_keeps_them)
{
    struct dh_daemon *d = dh_new();
    write_conf(d, "");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CREATE x capacity=100", "OK");
    DH_EXPECT(c, "ADD x one", "NEW");
    DH_EXPECT(c, "RELOAD", "OK cfg=unchanged");
    DH_EXPECT(c, "CHECK x one", "YES");
    write_conf(d, "filter x {\n capacity 5\n}\n");
    const char *r = dh_cmd(c, "RELOAD");
    ck_assert_msg(strstr(r, "ERR reload_failed x: the name is taken by a filter created at run "
                            "time") == r,
                  "%s", r);
    DH_EXPECT(c, "CHECK x one", "YES");
    DH_EXPECT(c, "FILTERS", "cfg x");
    dh_close(c);
    /* Started with that config: the config's filter serves, the created one
     * is left on disk untouched and says so in the log. */
    dh_restart(d);
    c = dh_connect(d);
    DH_EXPECT(c, "CHECK x one", "NO");
    ck_assert(dh_log_contains(d, "is not served: the config defines a filter of that name"));
    ck_assert_int_eq(state_files(d), 2);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ---- SIGKILL with fsync always: no acknowledged add of a created filter
 * is lost ---- */

struct k_stream {
    int port;
    atomic_long acked; /* batches 0 .. acked-1 were answered NEW */
    atomic_bool stop;
    atomic_bool done; /* the stream ended (killed, or failed) */
    char fail[256];
};

static void *k_main(void *arg)
{
    struct k_stream *s = arg;
    char err[128];
    struct dh_conn *c = dh_connect_port(s->port, err, sizeof(err));
    if (!c) {
        snprintf(s->fail, sizeof(s->fail), "connect: %s", err);
        atomic_store(&s->done, true);
        return NULL;
    }
    for (long b = 0; !atomic_load(&s->stop); b++) {
        if (dh_sendf(c, "MADD k b%ld-0 b%ld-1 b%ld-2\n", b, b, b) != 0)
            break;
        const char *l = dh_read_line(c, DH_TIMEOUT_MS);
        if (!l)
            break; /* killed */
        if (strcmp(l, "NEW NEW NEW") != 0) {
            snprintf(s->fail, sizeof(s->fail), "batch %ld: %s", b, l);
            break;
        }
        atomic_store(&s->acked, b + 1);
    }
    dh_close(c);
    atomic_store(&s->done, true);
    return NULL;
}

START_TEST(test_sigkill_fsync_always)
{
    struct dh_daemon *d = dh_new();
    write_conf(d, "");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CREATE k capacity=100000 fsync=always", "OK");
    dh_close(c);
    struct k_stream s = {.port = dh_port(d, 0)};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, k_main, &s), 0);
    while (atomic_load(&s.acked) < 200 && !atomic_load(&s.done))
        usleep(1000);
    dh_signal(d, SIGKILL);
    dh_wait_exit(d, DH_TIMEOUT_MS);
    atomic_store(&s.stop, true);
    pthread_join(t, NULL);
    ck_assert_msg(!s.fail[0], "%s", s.fail);
    long acked = atomic_load(&s.acked);
    dh_start(d, NULL);
    c = dh_connect(d);
    for (long b = 0; b < acked; b++) {
        char req[128];
        snprintf(req, sizeof(req), "MCHECK k b%ld-0 b%ld-1 b%ld-2", b, b, b);
        ck_assert_msg(strcmp(dh_cmd(c, req), "YES YES YES") == 0, "batch %ld of %ld lost", b,
                      acked);
    }
    fprintf(stderr, "test_sigkill_fsync_always: %ld acknowledged batches, all found\n", acked);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* ---- DROP while clients check ---- */

struct c_stream {
    int port;
    atomic_bool stop;
    atomic_long yes, gone;
    char fail[256];
};

static void *c_main(void *arg)
{
    struct c_stream *s = arg;
    char err[128];
    struct dh_conn *c = dh_connect_port(s->port, err, sizeof(err));
    if (!c) {
        snprintf(s->fail, sizeof(s->fail), "connect: %s", err);
        return NULL;
    }
    while (!atomic_load(&s->stop)) {
        if (dh_sendf(c, "CHECK v item\n") != 0)
            break;
        const char *l = dh_read_line(c, DH_TIMEOUT_MS);
        if (!l) {
            snprintf(s->fail, sizeof(s->fail), "no reply");
            break;
        }
        if (strcmp(l, "YES") == 0)
            atomic_fetch_add(&s->yes, 1);
        else if (strcmp(l, "ERR unknown_filter no such filter 'v'") == 0 || strcmp(l, "NO") == 0)
            atomic_fetch_add(&s->gone, 1);
        else {
            snprintf(s->fail, sizeof(s->fail), "%s", l);
            break;
        }
    }
    dh_close(c);
    return NULL;
}

START_TEST(test_drop_while_checking)
{
    struct dh_daemon *d = dh_new();
    write_conf(d, "");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    struct c_stream s = {.port = dh_port(d, 0)};
    pthread_t t[2];
    DH_EXPECT(c, "CREATE v capacity=100", "OK");
    DH_EXPECT(c, "ADD v item", "NEW");
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, c_main, &s), 0);
    for (int round = 0; round < 20; round++) {
        DH_EXPECT(c, "DROP v", "OK");
        DH_EXPECT(c, "CREATE v capacity=100", "OK");
        DH_EXPECT(c, "ADD v item", "NEW");
    }
    atomic_store(&s.stop, true);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    ck_assert_msg(!s.fail[0], "%s", s.fail);
    fprintf(stderr, "test_drop_while_checking: %ld YES, %ld between a drop and the next add\n",
            atomic_load(&s.yes), atomic_load(&s.gone));
    ck_assert_int_eq(state_files(d), 2);
    dh_close(c);
    dh_finish(d);
}
END_TEST

START_TEST(test_http)
{
    struct dh_daemon *d = dh_new();
    write_conf(d, "");
    dh_start(d, NULL);
    char body[4096];
    ck_assert_int_eq(http(d, "PUT", "/v1/filters/h", "{\"capacity\": 500, \"fpr\": 0.001, "
                                                     "\"growth\": true}",
                          body, sizeof(body)),
                     201);
    ck_assert_msg(strstr(body, "\"name\":\"h\"") && strstr(body, "\"capacity\":500"), "%s", body);
    ck_assert_int_eq(http(d, "PUT", "/v1/filters/h", NULL, body, sizeof(body)), 409);
    ck_assert_msg(strstr(body, "\"code\":\"exists\""), "%s", body);
    ck_assert_int_eq(http(d, "PUT", "/v1/filters/h2", "[1]", body, sizeof(body)), 400);
    ck_assert_int_eq(http(d, "PUT", "/v1/filters/h2", "{\"capacity\": {}}", body, sizeof(body)),
                     400);
    ck_assert_msg(strstr(body, "\"code\":\"bad_option\""), "%s", body);
    ck_assert_int_eq(http(d, "POST", "/v1/filters/h/add", "{\"items\": [\"a\"]}", NULL, 0), 200);
    ck_assert_int_eq(http(d, "GET", "/v1/filters/h/check?item=a", NULL, body, sizeof(body)), 200);
    ck_assert_msg(strstr(body, "\"present\":true"), "%s", body);
    ck_assert_int_eq(http(d, "POST", "/v1/filters/h/clear", NULL, NULL, 0), 200);
    ck_assert_int_eq(http(d, "GET", "/v1/filters/h/check?item=a", NULL, body, sizeof(body)), 200);
    ck_assert_msg(strstr(body, "\"present\":false"), "%s", body);
    ck_assert_int_eq(http(d, "DELETE", "/v1/filters/cfg", NULL, body, sizeof(body)), 409);
    ck_assert_msg(strstr(body, "\"code\":\"configured\""), "%s", body);
    ck_assert_int_eq(http(d, "DELETE", "/v1/filters/h", NULL, body, sizeof(body)), 200);
    ck_assert_int_eq(http(d, "DELETE", "/v1/filters/h", NULL, body, sizeof(body)), 404);
    ck_assert_int_eq(state_files(d), 0);
    dh_finish(d);
}
END_TEST

static Suite *created_suite(void)
{
    Suite *s = suite_create("created");
    const TTest *tests[] = {test_lifecycle_and_restart, test_limits, test_reload_keeps_them,
                            test_sigkill_fsync_always, test_drop_while_checking, test_http, NULL};
    dh_add_case(s, "created", 300, tests);
    return s;
}

int main(void)
{
    return dh_run_suite(created_suite());
}

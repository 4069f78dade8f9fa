/* Filters created at run time in the real daemon (store/created.h): CREATE,
 * DROP, CLEAR on the line protocol and HTTP; what lasts across a restart, a
 * reload and SIGKILL (fsync always); what the state directory holds; the
 * limits (max_filters, max_created_memory, no state_dir); a config filter
 * that cannot be dropped; drops while clients check the filter; and growing
 * filters (CREATE growth=on, RESP's BF.RESERVE) checkpointed on FLUSH and
 * past checkpoint_bytes, across restarts and SIGKILL. */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
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
    const char *name; /* the filter: "k" when NULL */
    bool any;         /* EXISTS is an answer too (a growing filter's false positive) */
    atomic_long acked; /* batches 0 .. acked-1 were answered NEW */
    atomic_bool stop;
    atomic_bool done; /* the stream ended (killed, or failed) */
    char fail[256];
};

/* Three words, each NEW or EXISTS. */
static bool answers3(const char *l)
{
    for (int i = 0; i < 3; i++) {
        size_t n = strncmp(l, "NEW", 3) == 0 ? 3 : strncmp(l, "EXISTS", 6) == 0 ? 6 : 0;
        if (!n || l[n] != (i < 2 ? ' ' : '\0'))
            return false;
        l += n + 1;
    }
    return true;
}

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
    const char *name = s->name ? s->name : "k";
    for (long b = 0; !atomic_load(&s->stop); b++) {
        if (dh_sendf(c, "MADD %s b%ld-0 b%ld-1 b%ld-2\n", name, b, b, b) != 0)
            break;
        const char *l = dh_read_line(c, DH_TIMEOUT_MS);
        if (!l)
            break; /* killed */
        if (strcmp(l, "NEW NEW NEW") != 0 && !(s->any && answers3(l))) {
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

/* ---- growing filters checkpointed ---- */

/* The growing checkpoints (cN.bloom files starting with the grow_file
 * magic) in the state directory: how many, and the highest N in *top. */
static int grow_checkpoints(struct dh_daemon *d, unsigned long *top)
{
    char dir[4096], path[8192], magic[8];
    dh_path(d, "state", dir);
    DIR *dp = opendir(dir);
    ck_assert_ptr_nonnull(dp);
    int n = 0;
    struct dirent *de;
    if (top)
        *top = 0;
    while ((de = readdir(dp))) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] != 'c' || l < 7 || strcmp(de->d_name + l - 6, ".bloom") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* removed meanwhile */
        bool grow = read(fd, magic, 8) == 8 && memcmp(magic, "BLOOMGW\x1a", 8) == 0;
        close(fd);
        n += grow;
        unsigned long seq = strtoul(de->d_name + 1, NULL, 10);
        if (grow && top && seq > *top)
            *top = seq;
    }
    closedir(dp);
    return n;
}

/* What INFO says of a growing filter that a restart must keep: its items,
 * bytes and each sub-filter's capacity and items. */
static void grow_state(struct dh_conn *c, const char *name, char *out, size_t cap)
{
    char req[256];
    snprintf(req, sizeof(req), "INFO %s", name);
    const char *line = dh_cmd(c, req);
    json_error_t jerr;
    json_t *j = json_loads(line, 0, &jerr);
    ck_assert_msg(j != NULL, "%s", line);
    json_t *arr = json_object_get(json_object_get(j, "growth"), "sub_filters");
    ck_assert_msg(json_array_size(arr) > 0, "not growing: %s", line);
    size_t n = (size_t)snprintf(out, cap, "items %lld bytes %lld subs",
                                (long long)json_integer_value(json_object_get(j, "items")),
                                (long long)json_integer_value(json_object_get(j, "bytes")));
    size_t idx;
    json_t *x;
    json_array_foreach(arr, idx, x)
    {
        n += (size_t)snprintf(out + n, cap - n, " %lld:%lld",
                              (long long)json_integer_value(json_object_get(x, "capacity")),
                              (long long)json_integer_value(json_object_get(x, "items")));
        ck_assert_uint_lt(n, cap);
    }
    json_decref(j);
}

enum { G_BATCH = 100 };

/* MADD name <p>from .. <p>to-1, G_BATCH a request; every reply answered. */
static void g_add(struct dh_conn *c, const char *name, const char *p, long from, long to)
{
    static char req[G_BATCH * 240 + 64];
    for (long b = from; b < to; b += G_BATCH) {
        size_t n = (size_t)snprintf(req, sizeof(req), "MADD %s", name);
        for (long i = b; i < b + G_BATCH && i < to; i++)
            n += (size_t)snprintf(req + n, sizeof(req) - n, " %s%ld", p, i);
        const char *got = dh_cmd(c, req);
        ck_assert_msg(strncmp(got, "NEW", 3) == 0 || strncmp(got, "EXISTS", 6) == 0, "%s", got);
    }
}

/* Every <p>from .. <p>to-1 of name answers YES. */
static void g_all_there(struct dh_conn *c, const char *name, const char *p, long from, long to)
{
    static char req[G_BATCH * 240 + 64];
    for (long b = from; b < to; b += G_BATCH) {
        size_t n = (size_t)snprintf(req, sizeof(req), "MCHECK %s", name);
        for (long i = b; i < b + G_BATCH && i < to; i++)
            n += (size_t)snprintf(req + n, sizeof(req) - n, " %s%ld", p, i);
        const char *got = dh_cmd(c, req);
        ck_assert_msg(strstr(got, "NO") == NULL && strncmp(got, "ERR", 3) != 0,
                      "%s items from %s%ld: %.200s", name, p, b, got);
    }
}

/* A growing filter made by CREATE growth=on and one made by RESP's
 * BF.RESERVE, filled past several sub-filters: FLUSH checkpoints each (its
 * journal cut), a restart loads them back with the same answers and the
 * same INFO; then past checkpoint_bytes the tick checkpoints one again. */
START_TEST(test_growing_checkpoint)
{
    struct dh_daemon *d = dh_new();
    write_conf(d, "resp_listen 127.0.0.1:0\ncheckpoint_bytes 16K\n");
    dh_start(d, NULL);
    int fd = dh_connect_fd(dh_resp_port(d, 0));
    ck_assert_int_ge(fd, 0);
    struct dh_conn *r = dh_conn_wrap(fd, d);
    dh_expect_text(r, "BF.RESERVE r 0.01 100\r\n", "+OK\r\n", DH_TIMEOUT_MS);
    dh_close(r);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CREATE g capacity=100 fpr=0.01 growth=on", "OK");
    const char *names[] = {"g", "r"};
    char before[2][4096], after[4096];
    for (int i = 0; i < 2; i++)
        g_add(c, names[i], "i", 0, 3000);
    ck_assert_int_eq(grow_checkpoints(d, NULL), 0);
    for (int i = 0; i < 2; i++) {
        char req[64];
        snprintf(req, sizeof(req), "FLUSH %s", names[i]);
        DH_EXPECT(c, req, "OK");
    }
    ck_assert_int_eq(grow_checkpoints(d, NULL), 2);
    ck_assert_int_eq(state_files(d), 6); /* per filter: block, checkpoint, new journal */
    for (int i = 0; i < 2; i++) {
        g_add(c, names[i], "after", 0, 10);
        grow_state(c, names[i], before[i], sizeof(before[i]));
        ck_assert_msg(strstr(before[i], " 200:") != NULL, "did not grow: %s", before[i]);
    }
    dh_close(c);
    dh_restart(d);
    c = dh_connect(d);
    for (int i = 0; i < 2; i++) {
        g_all_there(c, names[i], "i", 0, 3000);
        g_all_there(c, names[i], "after", 0, 10);
        grow_state(c, names[i], after, sizeof(after));
        ck_assert_str_eq(after, before[i]);
    }
    /* Past checkpoint_bytes (and four times its bits), once a second: long
     * items, so that the journal outgrows the bits quickly. */
    char longp[200];
    memset(longp, 'x', sizeof(longp) - 1);
    longp[sizeof(longp) - 1] = '\0';
    unsigned long top0, top = 0;
    grow_checkpoints(d, &top0);
    long n = 0;
    for (int round = 0; round < 600; round++) {
        if (grow_checkpoints(d, &top) >= 2 && top > top0)
            break;
        if (n < 40000) {
            g_add(c, "g", longp, n, n + 1000);
            n += 1000;
        } else {
            usleep(100000);
        }
    }
    ck_assert_msg(top > top0, "no checkpoint past checkpoint_bytes after %ld adds", n);
    g_add(c, "g", "late", 0, 10);
    grow_state(c, "g", before[0], sizeof(before[0]));
    dh_close(c);
    dh_restart(d);
    c = dh_connect(d);
    g_all_there(c, "g", "i", 0, 3000);
    g_all_there(c, "g", longp, 0, n);
    g_all_there(c, "g", "late", 0, 10);
    grow_state(c, "g", after, sizeof(after));
    ck_assert_str_eq(after, before[0]);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* SIGKILL with fsync always while a growing filter takes adds and is
 * checkpointed again and again (FLUSH in a loop, and the tick: a
 * checkpoint_bytes of 1): every acknowledged add is there after the
 * restart, at whatever point the kill fell. */
START_TEST(test_growing_sigkill_fsync_always)
{
    struct dh_daemon *d = dh_new();
    write_conf(d, "checkpoint_bytes 1\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CREATE gk capacity=100 fpr=0.001 growth=on fsync=always", "OK");
    struct k_stream s = {.port = dh_port(d, 0), .name = "gk", .any = true};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, k_main, &s), 0);
    /* Checkpoints while the adds run; the kill comes after a number of
     * acknowledged batches that changes from run to run. */
    long want = 300 + (long)(getpid() % 500);
    int flushes = 0;
    while (atomic_load(&s.acked) < want && !atomic_load(&s.done)) {
        const char *got = dh_cmd(c, "FLUSH gk");
        ck_assert_msg(strcmp(got, "OK") == 0, "%s", got);
        flushes++;
    }
    dh_signal(d, SIGKILL);
    dh_wait_exit(d, DH_TIMEOUT_MS);
    atomic_store(&s.stop, true);
    pthread_join(t, NULL);
    dh_close(c);
    ck_assert_msg(!s.fail[0], "%s", s.fail);
    long acked = atomic_load(&s.acked);
    dh_start(d, NULL);
    c = dh_connect(d);
    for (long b = 0; b < acked; b++) {
        char req[128];
        snprintf(req, sizeof(req), "MCHECK gk b%ld-0 b%ld-1 b%ld-2", b, b, b);
        ck_assert_msg(strcmp(dh_cmd(c, req), "YES YES YES") == 0, "batch %ld of %ld lost", b,
                      acked);
    }
    ck_assert_int_ge(grow_checkpoints(d, NULL), 1);
    fprintf(stderr, "test_growing_sigkill_fsync_always: %ld acknowledged batches, %d FLUSHes, "
                    "all found\n", acked, flushes);
    dh_close(c);
    dh_finish(d);
}
END_TEST

/* A removal and an exception live only in memory and the journal: a
 * filter holding them is synced by FLUSH but not checkpointed (cutting its
 * journal would bring the removed item back after a restart). A damaged
 * checkpoint is refused at start-up naming the file, the other filters
 * served. */
START_TEST(test_amends_and_bad_checkpoint)
{
    struct dh_daemon *d = dh_new();
    write_conf(d, "");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CREATE p capacity=1000", "OK");
    DH_EXPECT(c, "CREATE q capacity=100 growth=on", "OK");
    DH_EXPECT(c, "MADD p x y", "NEW NEW");
    DH_EXPECT(c, "REMOVE p x", "REMOVED");
    DH_EXPECT(c, "MADD q x y", "NEW NEW");
    DH_EXPECT(c, "ALLOW q y", "NEW");
    DH_EXPECT(c, "FLUSH", "OK");
    ck_assert_int_eq(state_files(d), 4); /* two blocks, two journals: no checkpoint */
    dh_close(c);
    dh_restart(d);
    c = dh_connect(d);
    DH_EXPECT(c, "MCHECK p x y", "NO YES");
    DH_EXPECT(c, "MCHECK q x y", "YES NO");
    /* Without them, a growing filter is checkpointed; damaged, it is not
     * served and the log names the file. */
    DH_EXPECT(c, "CREATE g capacity=100 growth=on", "OK");
    DH_EXPECT(c, "MADD g a b", "NEW NEW");
    DH_EXPECT(c, "FLUSH g", "OK");
    dh_close(c);
    unsigned long top;
    ck_assert_int_eq(grow_checkpoints(d, &top), 1);
    dh_stop_ok(d);
    char path[4096], rel[64];
    snprintf(rel, sizeof(rel), "state/c%08lu.bloom", top);
    dh_path(d, rel, path);
    ck_assert_int_eq(truncate(path, 100), 0);
    dh_start(d, NULL);
    c = dh_connect(d);
    DH_EXPECT(c, "FILTERS", "cfg p q");
    DH_EXPECT(c, "MCHECK p x y", "NO YES");
    dh_close(c);
    ck_assert_msg(dh_log_contains(d, path), "the log does not name %s", path);
    dh_finish(d);
}
END_TEST

/* Drop the "  capacity N" line from every state block in the directory. */
static int strip_capacity(struct dh_daemon *d)
{
    char dir[4096], path[8192], text[8192];
    dh_path(d, "state", dir);
    DIR *dp = opendir(dir);
    ck_assert_ptr_nonnull(dp);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] != 'c' || l < 6 || strcmp(de->d_name + l - 5, ".conf") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        size_t got = fread(text, 1, sizeof(text) - 1, f);
        fclose(f);
        text[got] = '\0';
        char *cap = strstr(text, "\n  capacity ");
        ck_assert_ptr_nonnull(cap);
        char *eol = strchr(cap + 1, '\n');
        memmove(cap, eol, strlen(eol) + 1);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        fclose(f);
        n++;
    }
    closedir(dp);
    return n;
}

/* A state block edited by hand to have no capacity is not served, and the
 * log says why: its checkpoint would be written back as a block that no
 * start-up reads (fuzz_created found it). */
START_TEST(test_block_without_capacity)
{
    struct dh_daemon *d = dh_new();
    write_conf(d, "");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "CREATE h capacity=1000", "OK");
    DH_EXPECT(c, "MADD h a b", "NEW NEW");
    DH_EXPECT(c, "FLUSH h", "OK");
    dh_close(c);
    dh_stop_ok(d);
    ck_assert_int_eq(strip_capacity(d), 1);
    dh_start(d, NULL);
    c = dh_connect(d);
    DH_EXPECT(c, "FILTERS", "cfg");
    dh_close(c);
    ck_assert(dh_log_contains(d, "filter h has no capacity (a created filter needs one)"));
    dh_finish(d);
}
END_TEST

static Suite *created_suite(void)
{
    Suite *s = suite_create("created");
    const TTest *tests[] = {test_lifecycle_and_restart, test_limits, test_reload_keeps_them,
                            test_sigkill_fsync_always, test_drop_while_checking, test_http,
                            test_growing_checkpoint, test_growing_sigkill_fsync_always,
                            test_amends_and_bad_checkpoint, test_block_without_capacity, NULL};
    dh_add_case(s, "created", 300, tests);
    return s;
}

int main(void)
{
    return dh_run_suite(created_suite());
}

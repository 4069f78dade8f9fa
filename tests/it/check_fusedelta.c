/* A fuse file in the real daemon: built by `bloomgate build --layout fuse`
 * (duplicates in the list), served, every listed item found; ADDs go to the
 * delta beside it (journaled as for any filter), INFO shows the delta and
 * the combined rate, a restart replays the journal into a new delta, and an
 * add past delta_capacity is refused with a clear error, before and after
 * the restart, while items already held still answer EXISTS. */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "lib/daemon_harness.h"

#define N 3000

/* The list: N items, the first 500 twice. */
static void build_fuse_file(struct dh_daemon *d)
{
    char list[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX];
    dh_path(d, "list.txt", list);
    dh_path(d, "f.bgf", out);
    dh_path(d, "build.log", log);
    FILE *f = fopen(list, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < N; i++)
        fprintf(f, "http://listed.example/%d\n", i);
    for (int i = 0; i < 500; i++)
        fprintf(f, "http://listed.example/%d\n", i);
    ck_assert_int_eq(fclose(f), 0);
    const char *argv[] = {dh_tool_path(), "build", "--layout", "fuse", "--seed", "12345",
                          "-o", out, list, NULL};
    int st = dh_run(argv, log, 60000);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "build failed (status 0x%x): see %s", st, log);
}

/* Every listed item answers YES, in batches of 50 (the batched path) and
 * one by one for a sample (the single path). */
static void expect_listed(struct dh_conn *c)
{
    char req[4096];
    for (int base = 0; base < N; base += 50) {
        int n = snprintf(req, sizeof(req), "MCHECK f");
        for (int i = base; i < base + 50; i++)
            n += snprintf(req + n, sizeof(req) - (size_t)n, " http://listed.example/%d", i);
        const char *got = dh_cmd(c, req);
        ck_assert_msg(strstr(got, "NO") == NULL, "%s: %s", req, got);
    }
    DH_EXPECT(c, "CHECK f http://listed.example/0", "YES");
    DH_EXPECT(c, "CHECK f http://listed.example/2999", "YES");
}

static json_t *info(struct dh_conn *c)
{
    const char *line = dh_cmd(c, "INFO f");
    json_error_t jerr;
    json_t *j = json_loads(line, 0, &jerr);
    ck_assert_msg(j != NULL, "%s", line);
    return j;
}

START_TEST(test_fuse_served_with_delta)
{
    struct dh_daemon *d = dh_new();
    build_fuse_file(d);
    dh_write_config(d, "threads 2\nfilter f {\n file @DIR@/f.bgf\n journal @DIR@/f.journal\n"
                       " fsync always\n delta_capacity 5\n}\n");
    dh_start(d, NULL);
    struct dh_conn *c = dh_connect(d);
    expect_listed(c);
    DH_EXPECT(c, "MCHECK f http://new.example/1 http://new.example/2", "NO NO");
    /* An item of the file takes no room; new ones go to the delta. */
    DH_EXPECT(c, "ADD f http://listed.example/7", "EXISTS");
    DH_EXPECT(c, "ADD f http://new.example/1", "NEW");
    DH_EXPECT(c, "MADD f http://new.example/2 http://listed.example/8 http://new.example/3",
              "NEW EXISTS NEW");
    DH_EXPECT(c, "MCHECK f http://new.example/1 http://new.example/2 http://new.example/3",
              "YES YES YES");
    DH_EXPECT(c, "CHECK f http://new.example/3", "YES");
    json_t *j = info(c);
    ck_assert_str_eq(json_string_value(json_object_get(j, "layout")), "fuse");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "items")), N + 3);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "k")), 14);
    double fpr = json_real_value(json_object_get(j, "fpr_estimated"));
    ck_assert_msg(fpr > ldexp(1.0, -14) && fpr < 2e-4, "combined rate %g", fpr);
    json_t *dj = json_object_get(j, "delta");
    ck_assert_msg(json_is_object(dj), "no delta in INFO");
    ck_assert_int_eq(json_integer_value(json_object_get(dj, "capacity")), 5);
    ck_assert_int_eq(json_integer_value(json_object_get(dj, "items")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(dj, "room")), 2);
    json_decref(j);
    /* Three new items with room for two: refused whole, none journaled. */
    const char *got =
        dh_cmd(c, "MADD f http://new.example/4 http://new.example/5 http://new.example/6");
    ck_assert_msg(strncmp(got, "ERR internal filter f is full: ", 31) == 0 &&
                      strstr(got, "room for 2 more (delta_capacity)"),
                  "%s", got);
    DH_EXPECT(c, "MCHECK f http://new.example/4 http://new.example/5", "NO NO");
    DH_EXPECT(c, "MADD f http://new.example/4 http://new.example/5", "NEW NEW");
    got = dh_cmd(c, "ADD f http://new.example/6");
    ck_assert_msg(strncmp(got, "ERR ", 4) == 0 && strstr(got, "is full"), "%s", got);
    DH_EXPECT(c, "ADD f http://new.example/1", "EXISTS"); /* held already: no room needed */
    dh_close(c);

    /* A restart loads the file again and replays the journal into a new
     * delta: the same answers, the same refusal. */
    dh_restart(d);
    c = dh_connect(d);
    expect_listed(c);
    DH_EXPECT(c, "MCHECK f http://new.example/1 http://new.example/2 http://new.example/3 "
                 "http://new.example/4 http://new.example/5 http://new.example/6",
              "YES YES YES YES YES NO");
    got = dh_cmd(c, "ADD f http://new.example/6");
    ck_assert_msg(strncmp(got, "ERR ", 4) == 0 && strstr(got, "is full"), "%s", got);
    j = info(c);
    dj = json_object_get(j, "delta");
    ck_assert_int_eq(json_integer_value(json_object_get(dj, "items")), 5);
    ck_assert_int_eq(json_integer_value(json_object_get(dj, "room")), 0);
    json_decref(j);
    dh_close(c);
    dh_finish(d);
}
END_TEST

static Suite *fusedelta_suite(void)
{
    Suite *s = suite_create("fusedelta");
    dh_add_case(s, "fusedelta", 300, (const TTest *const[]){test_fuse_served_with_delta, NULL});
    return s;
}

int main(void)
{
    return dh_run_suite(fusedelta_suite());
}

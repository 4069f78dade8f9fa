/* check_registry: the catalog of served filters (src/store/registry.c): a
 * name looked up exactly (no prefix, no extension, any bytes); ids stable
 * while a name is served, fresh for a new name, given back when a publish
 * drops the name; a publish that frees only the versions the old catalog
 * alone held, and waits for every online reader to pass a quiescent point
 * (an offline one is not waited for); the fill-based estimate cached while
 * the fill is unchanged. No worker thread: the test plays the reader. */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bloom/filter.h"
#include "store/registry.h"

static struct fversion *version(uint64_t seed)
{
    struct filter_plan plan;
    char err[256];
    ck_assert_int_eq(filter_plan_make(FILTER_BLOCKED, 1000, 0.01, 1, &plan, err, sizeof(err)), 0);
    struct filter *f = filter_create(&plan, seed, err, sizeof(err));
    ck_assert_msg(f != NULL, "%s", err);
    struct fversion *v = fversion_new(f, NULL);
    ck_assert_ptr_nonnull(v);
    return v;
}

/* A catalog of the names given, each with its version and the id the
 * registry gives the name (no conf: the tests below read none). */
static struct catalog *catalog_of(struct registry *reg, size_t n, const char *const *names,
                                  struct fversion *const *vs)
{
    struct catalog *c = calloc(1, sizeof(*c));
    ck_assert_ptr_nonnull(c);
    c->entries = calloc(n ? n : 1, sizeof(*c->entries));
    ck_assert_ptr_nonnull(c->entries);
    c->n = n;
    for (size_t i = 0; i < n; i++) {
        struct fentry *e = &c->entries[i];
        snprintf(e->name, sizeof(e->name), "%s", names[i]);
        e->name_len = strlen(names[i]);
        e->v = vs[i];
        bool fresh;
        int id = registry_filter_id(reg, names[i], &fresh);
        ck_assert_int_ge(id, 0);
        e->id = (unsigned)id;
        e->st = registry_state(reg, e->id);
    }
    return c;
}

static unsigned fresh_calls, released;
static void on_fresh(void *ctx, unsigned id)
{
    (void)ctx;
    (void)id;
    fresh_calls++;
}
static void on_release(struct registry *reg, struct fstate *st)
{
    (void)reg;
    (void)st;
    released++;
}

START_TEST(test_lookup)
{
    struct registry *reg = registry_create(0);
    ck_assert_ptr_nonnull(reg);
    const struct catalog *empty = registry_read(reg);
    ck_assert_ptr_nonnull(empty); /* readers never see NULL */
    ck_assert_uint_eq(empty->n, 0);
    ck_assert_ptr_null(catalog_find(empty, "a", 1));

    const char *names[] = {"alpha", "beta", "al"};
    struct fversion *vs[] = {version(1), version(2), version(3)};
    registry_publish(reg, catalog_of(reg, 3, names, vs));
    const struct catalog *c = registry_read(reg);
    ck_assert_uint_eq(c->n, 3);
    ck_assert_ptr_eq(catalog_find(c, "alpha", 5)->v, vs[0]);
    ck_assert_ptr_eq(catalog_find(c, "beta", 4)->v, vs[1]);
    ck_assert_ptr_eq(catalog_find(c, "al", 2)->v, vs[2]);
    ck_assert_ptr_null(catalog_find(c, "alph", 4));
    ck_assert_ptr_null(catalog_find(c, "alphaa", 6));
    ck_assert_ptr_null(catalog_find(c, "Alpha", 5));
    ck_assert_ptr_null(catalog_find(c, "", 0));
    /* the length is the name's, not a NUL: "alpha" inside a longer buffer */
    ck_assert_ptr_eq(catalog_find(c, "alpha beta", 5)->v, vs[0]);
    registry_free(reg);
}
END_TEST

START_TEST(test_ids)
{
    struct registry *reg = registry_create(0);
    fresh_calls = released = 0;
    reg->on_fresh_id = on_fresh;
    reg->on_state_release = on_release;
    bool fresh;
    int a = registry_filter_id(reg, "a", &fresh);
    ck_assert(fresh);
    int b = registry_filter_id(reg, "b", &fresh);
    ck_assert(fresh);
    ck_assert_int_ne(a, b);
    ck_assert_int_eq(registry_filter_id(reg, "a", &fresh), a);
    ck_assert(!fresh);
    ck_assert_uint_eq(fresh_calls, 2);
    ck_assert_str_eq(registry_state(reg, (unsigned)a)->name, "a");

    /* A publish keeps the ids of the names it serves and frees the others. */
    const char *names[] = {"b"};
    struct fversion *vs[] = {version(1)};
    registry_publish(reg, catalog_of(reg, 1, names, vs));
    ck_assert_uint_eq(released, 1);
    ck_assert_ptr_null(registry_state(reg, (unsigned)a));
    ck_assert_int_eq(registry_filter_id(reg, "b", &fresh), b);
    ck_assert(!fresh);
    /* "a" comes back as a fresh name: its counters start again. */
    registry_filter_id(reg, "a", &fresh);
    ck_assert(fresh);
    ck_assert_uint_eq(fresh_calls, 3);
    registry_free(reg);
    ck_assert_uint_eq(released, 3); /* every state left is released once */
}
END_TEST

/* Every id taken: -1, and nothing given out twice. */
START_TEST(test_ids_run_out)
{
    struct registry *reg = registry_create(0);
    char name[16];
    bool fresh;
    for (unsigned i = 0; i < REGISTRY_MAX_FILTERS; i++) {
        snprintf(name, sizeof(name), "f%u", i);
        ck_assert_int_eq(registry_filter_id(reg, name, &fresh), (int)i);
    }
    ck_assert_int_eq(registry_filter_id(reg, "one-more", &fresh), -1);
    ck_assert_int_eq(registry_filter_id(reg, "f7", &fresh), 7);
    registry_free(reg);
}
END_TEST

/* Replacing the catalog: a version shared by both catalogs stays usable, an
 * added name is served, a dropped one is not. (ASan's leak and use-after-
 * free checks say the rest: the shared version is freed once, at the end.) */
START_TEST(test_replace)
{
    struct registry *reg = registry_create(0);
    struct fversion *keep = version(1), *gone = version(2), *added = version(3);
    const char *n1[] = {"keep", "gone"};
    struct fversion *v1[] = {keep, gone};
    registry_publish(reg, catalog_of(reg, 2, n1, v1));
    filter_add(keep->f, "x", 1);
    const char *n2[] = {"keep", "added"};
    struct fversion *v2[] = {keep, added};
    registry_publish(reg, catalog_of(reg, 2, n2, v2));
    const struct catalog *c = registry_read(reg);
    ck_assert_ptr_eq(catalog_find(c, "keep", 4)->v, keep);
    ck_assert(filter_check(catalog_find(c, "keep", 4)->v->f, "x", 1));
    ck_assert_ptr_eq(catalog_find(c, "added", 5)->v, added);
    ck_assert_ptr_null(catalog_find(c, "gone", 4));
    registry_free(reg);
}
END_TEST

struct publisher {
    struct registry *reg;
    struct catalog *next;
    _Atomic int done;
};

static void *publish_thread(void *arg)
{
    struct publisher *p = arg;
    registry_publish(p->reg, p->next);
    atomic_store(&p->done, 1);
    return NULL;
}

static void pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000};
    nanosleep(&ts, NULL);
}

/* The grace period: a publish does not return (so frees nothing) while an
 * online reader has not been quiescent since it began; a quiescent point or
 * going offline lets it finish. The pauses only give a wrong publish time
 * to show itself; a right one passes however slow the machine. */
START_TEST(test_grace_period)
{
    struct registry *reg = registry_create(2);
    ck_assert_ptr_nonnull(reg);
    registry_quiescent(reg, 0); /* both online, at the first epoch */
    registry_quiescent(reg, 1);
    const char *names[] = {"a"};
    struct fversion *vs[] = {version(1)};
    struct publisher p = {reg, catalog_of(reg, 1, names, vs), 0};
    uint64_t before = atomic_load(&reg->epoch);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, publish_thread, &p), 0);
    /* The grace period has begun once the epoch moved (the new catalog is
     * visible before that): a quiescent point from now on counts. */
    while (atomic_load(&reg->epoch) == before)
        pause_ms(1);
    ck_assert_uint_eq(registry_read(reg)->n, 1);
    pause_ms(50);
    ck_assert_int_eq(atomic_load(&p.done), 0);
    registry_quiescent(reg, 0);
    pause_ms(50);
    ck_assert_int_eq(atomic_load(&p.done), 0); /* reader 1 still holds the old one */
    registry_offline(reg, 1);
    pthread_join(t, NULL);
    ck_assert_int_eq(atomic_load(&p.done), 1);

    /* With every reader offline or quiescent, synchronize returns at once. */
    registry_offline(reg, 0);
    registry_synchronize(reg);
    registry_free(reg);
}
END_TEST

/* The estimate is computed again only when the fill changed. */
START_TEST(test_estimate_cached)
{
    struct fversion *v = version(9);
    double e0 = fversion_estimated_fpr(v);
    ck_assert(e0 == 0.0);
    for (int i = 0; i < 500; i++)
        filter_add(v->f, &i, sizeof(i));
    double e1 = fversion_estimated_fpr(v);
    ck_assert(e1 > 0.0 && e1 < 1.0);
    ck_assert(fversion_estimated_fpr(v) == e1);
    ck_assert(e1 == filter_estimated_fpr(v->f));
    for (int i = 500; i < 1000; i++)
        filter_add(v->f, &i, sizeof(i));
    ck_assert(fversion_estimated_fpr(v) > e1);
    fversion_free(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("registry");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_lookup);
    tcase_add_test(tc, test_ids);
    tcase_add_test(tc, test_ids_run_out);
    tcase_add_test(tc, test_replace);
    tcase_add_test(tc, test_grace_period);
    tcase_add_test(tc, test_estimate_cached);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

/* check_reload: a reload (src/store/reload.c) that rotates a filter's journal (its path changed,
 * or an operator moved the file aside) against a mutation running at the same
 * time. The reload swaps the journal, sets `pending` and replays the tail in one
 * critical section under the filter's mut_mu, which every mutation holds from
 * its journal append to its last version: so a mutation is wholly before the
 * rotation (old journal, old version) or wholly after it (new journal, new
 * version), and the new version is exactly what a restart would replay. In
 * process, with the registry, the reload thread and the gate, and two test
 * seams (gate_test_after_append, reload_test_after_swap) that pause a worker
 * and the reload thread at the exact points of the race, so each order is
 * forced, not hoped for. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "bloom/filter.h"
#include "conf/conf.h"
#include "core/gate.h"
#include "store/journal.h"
#include "store/registry.h"
#include "store/reload.h"
#include "lib/seams.h"

static char dir[256];

/* A config serving one filter, name, with journal (in dir). */
static void write_conf_as(const char *path, const char *name, const char *journal)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "listen 127.0.0.1:0\nhttp_listen off\nthreads 1\n"
            "filter %s {\n    capacity 10000\n    journal %s/%s\n    fsync no\n}\n",
            name, dir, journal);
    fclose(f);
}

static void write_conf(const char *path, const char *journal)
{
    write_conf_as(path, "f", journal);
}

/* The forced orders. The worker's hook runs once, on its first append; the
 * reload's runs at the swap. Each side says where it is (stage) and waits
 * for the test to let it go on (go). */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage; /* bit 1: the worker has appended; bit 2: the reload has swapped;
                     bit 4: the reload is about to publish */
static int go;    /* bit 1: the worker may go on; bit 2, 4: the reload may */
static bool worker_paused;
static int swap_lock; /* pthread_mutex_trylock(mut_mu) at the swap: EBUSY when held */
static struct registry *the_reg;

static void wait_for(int *what, int bit)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 20;
    while (!(*what & bit))
        ck_assert_msg(pthread_cond_timedwait(&cv, &mu, &ts) == 0, "step %d never came", bit);
}

static void set_bit(int *what, int bit)
{
    pthread_mutex_lock(&mu);
    *what |= bit;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void hold_worker(void)
{
    pthread_mutex_lock(&mu);
    if (!worker_paused) { /* only the first append */
        worker_paused = true;
        stage |= 1;
        pthread_cond_broadcast(&cv);
        wait_for(&go, 1);
    }
    pthread_mutex_unlock(&mu);
}

/* On the reload thread, right after the swap: is the filter's mutation lock
 * held (by the reload) here? Then it waits for the test. */
static void hold_reload(const char *filter)
{
    const struct fentry *e = catalog_find(registry_read(the_reg), filter, strlen(filter));
    int rc = e ? pthread_mutex_trylock(&e->st->mut_mu) : -1;
    if (rc == 0)
        pthread_mutex_unlock(&e->st->mut_mu);
    pthread_mutex_lock(&mu);
    swap_lock = rc;
    stage |= 2;
    pthread_cond_broadcast(&cv);
    wait_for(&go, 2);
    pthread_mutex_unlock(&mu);
}

/* On the reload thread, every new version pending, before the publish. */
static void hold_publish(void)
{
    pthread_mutex_lock(&mu);
    stage |= 4;
    pthread_cond_broadcast(&cv);
    wait_for(&go, 4);
    pthread_mutex_unlock(&mu);
}

struct worker {
    struct registry *reg;
    const char *filter; /* NULL: "f" */
    const char *item;
    int rc;
    bool added;
};

/* One request on worker 0: read the catalog, add, commit, report quiescent. */
static void *worker_main(void *arg)
{
    struct worker *w = arg;
    registry_quiescent(w->reg, 0);
    const struct catalog *c = registry_read(w->reg);
    const char *name = w->filter ? w->filter : "f";
    const struct fentry *e = catalog_find(c, name, strlen(name));
    struct gate_batch b = {0};
    struct filter_key k = {w->item, strlen(w->item)};
    char err[512];
    w->rc = e ? gate_add(&b, e, &k, 1, &w->added, err, sizeof(err)) : -2;
    if (!gate_commit(&b))
        w->rc = -3;
    registry_quiescent(w->reg, 0);
    registry_offline(w->reg, 0);
    return NULL;
}

static uint64_t reloads(struct registry *reg)
{
    return atomic_load(&reg->reloads_ok) + atomic_load(&reg->reloads_failed);
}

struct find {
    const char *item;
    int found;
};

static int find_item(void *ctx, const void *item, size_t len)
{
    struct find *f = ctx;
    f->found += len == strlen(f->item) && memcmp(item, f->item, len) == 0;
    return 0;
}

/* How many records of journal file name (in dir) hold item. */
static int in_journal(const char *name, const char *item)
{
    char path[512], err[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct find fi = {.item = item};
    struct journal_scan scan;
    ck_assert_msg(journal_read_file(path, find_item, &fi, &scan, err, sizeof(err)) >= 0, "%s", err);
    return fi.found;
}

/* Filter f served from journal a.journal, the reload thread running, the
 * seams set, the forced order's state reset. */
static struct reloader *start(const char *conf_path, struct registry **regp)
{
    char err[2048], path[512];
    for (int i = 0; i < 2; i++) { /* each test starts with no journal */
        snprintf(path, sizeof(path), "%s/%s", dir, i ? "b.journal" : "a.journal");
        unlink(path);
    }
    write_conf(conf_path, "a.journal");
    struct conf *conf = conf_load(conf_path, err, sizeof(err));
    ck_assert_msg(conf != NULL, "%s", err);
    struct registry *reg = registry_create(1);
    ck_assert_ptr_nonnull(reg);
    ck_assert_msg(reload_initial(reg, conf, 1, err, sizeof(err)) == 0, "%s", err);
    struct reloader *r = reloader_start(reg, conf_path, 1);
    ck_assert_ptr_nonnull(r);
    stage = go = 0;
    worker_paused = false;
    swap_lock = -1;
    the_reg = reg;
    gate_test_after_append = hold_worker;
    reload_test_after_swap = hold_reload;
    *regp = reg;
    return r;
}

/* Wait for the reload requested when reloads() was before, then what it
 * published for f: generation 2, the rotated journal. */
static const struct fentry *reloaded(struct registry *reg, uint64_t before)
{
    for (int i = 0; i < 20000 && reloads(reg) == before; i++)
        usleep(1000);
    ck_assert_msg(reloads(reg) == before + 1, "the reload did not finish");
    ck_assert_uint_eq(atomic_load(&reg->reloads_failed), 0);
    const struct fentry *e = catalog_find(registry_read(reg), "f", 1);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->v->generation, 2);
    return e;
}

static void stop(struct reloader *r, struct registry *reg)
{
    gate_test_after_append = NULL;
    reload_test_after_swap = NULL;
    reload_test_before_publish = NULL;
    reloader_free(r);
    registry_free(reg);
}

/* The reload first: it has swapped in the new journal and holds there; an
 * add starts. The swap is made under the filter's mutation lock, so the add
 * cannot run between the swap and `pending` (it would see the new journal
 * without the new version); once the reload goes on, the add sees both: it
 * is in the new journal once and in the version served after the reload.
 * (When the swap came before the lock, a worker re-read the journal after
 * `pending` to cover that gap: core/gate.c.) */
START_TEST(test_add_after_the_rotation)
{
    char conf_path[512];
    snprintf(conf_path, sizeof(conf_path), "%s/bloomgate.conf", dir);
    struct registry *reg;
    struct reloader *r = start(conf_path, &reg);
    write_conf(conf_path, "b.journal"); /* the rotation */
    uint64_t before = reloads(reg);
    ck_assert(reloader_request(r, NULL, NULL, NULL, NULL));
    pthread_mutex_lock(&mu);
    wait_for(&stage, 2); /* the reload has swapped the journal */
    pthread_mutex_unlock(&mu);
    ck_assert_msg(swap_lock == EBUSY,
                  "the journal was swapped outside the filter's mutation lock (trylock: %d): "
                  "a mutation could see the new journal without the new version",
                  swap_lock);

    struct worker w = {.reg = reg, .item = "after-item"};
    pthread_t tid;
    set_bit(&go, 1); /* the worker does not stop at its append */
    ck_assert_int_eq(pthread_create(&tid, NULL, worker_main, &w), 0);
    set_bit(&go, 2);
    pthread_join(tid, NULL);
    ck_assert_int_eq(w.rc, 0);
    ck_assert_msg(w.added, "the add was not NEW");

    const struct fentry *e = reloaded(reg, before);
    ck_assert_msg(filter_check(e->v->f, w.item, strlen(w.item)),
                  "acknowledged NEW after the rotation, then NO");
    ck_assert_int_eq(in_journal("b.journal", w.item), 1);
    ck_assert_int_eq(in_journal("a.journal", w.item), 0);
    stop(r, reg);
}
END_TEST

/* The add first: a worker has appended to the old journal and holds there
 * (holding the filter's mutation lock) when the reload that rotates the
 * journal runs. The add is wholly before the rotation: it lives in the
 * retired journal and the old version only, like every add made before the
 * rotation (docs/operations.md), and the new version is exactly the new file
 * plus the new journal, which is what a restart replays. The reload comes to
 * the swap only after the add is done. */
START_TEST(test_add_before_the_rotation)
{
    char conf_path[512];
    snprintf(conf_path, sizeof(conf_path), "%s/bloomgate.conf", dir);
    struct registry *reg;
    struct reloader *r = start(conf_path, &reg);
    struct worker w = {.reg = reg, .item = "before-item"};
    pthread_t tid;
    ck_assert_int_eq(pthread_create(&tid, NULL, worker_main, &w), 0);
    pthread_mutex_lock(&mu);
    wait_for(&stage, 1); /* the worker holds the old journal, its record written */
    pthread_mutex_unlock(&mu);

    write_conf(conf_path, "b.journal"); /* the rotation */
    uint64_t before = reloads(reg);
    ck_assert(reloader_request(r, NULL, NULL, NULL, NULL));
    /* Give the reload a second to come to the swap while the add holds the
     * old journal; it must not get there. Only the power to catch a swap
     * made outside the lock depends on that second (the reload's load must
     * end in it); what the test asserts holds whenever the worker goes on. */
    pthread_mutex_lock(&mu);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    while (!(stage & 2) && pthread_cond_timedwait(&cv, &mu, &ts) == 0)
        ;
    bool swapped_first = stage & 2;
    pthread_mutex_unlock(&mu);
    set_bit(&go, 1);
    pthread_join(tid, NULL);
    ck_assert_int_eq(w.rc, 0);
    ck_assert_msg(w.added, "the add was not NEW");
    ck_assert_msg(!swapped_first, "the reload swapped the journal while an add held the old one");
    set_bit(&go, 2);

    const struct fentry *e = reloaded(reg, before);
    ck_assert_int_eq(in_journal("a.journal", w.item), 1);
    int in_new = in_journal("b.journal", w.item);
    bool served = filter_check(e->v->f, w.item, strlen(w.item));
    ck_assert_msg(in_new == (int)served,
                  "the new version and the new journal disagree (journal %d, served %d): a "
                  "restart would serve another set",
                  in_new, served);
    ck_assert_msg(in_new == 0, "an add made before the rotation reached the new journal");
    stop(r, reg);
}
END_TEST

/* A filter renamed in the config, its journal kept: the new name takes the
 * old one's journal over (reload.c, adopt_journal), its version replayed from
 * it up to the journal's end in publish_pending. An add to the old name after
 * that, the new catalog not published yet (a worker still reading the old
 * one), used to be acknowledged, written to the journal and applied to the
 * old version only: the new name's live version lacked it until a restart
 * replayed the journal. Now the old name refuses it, writing nothing: what
 * was acknowledged is served, and what is served is what a restart replays. */
START_TEST(test_add_to_the_old_name_during_a_rename)
{
    char conf_path[512];
    snprintf(conf_path, sizeof(conf_path), "%s/bloomgate.conf", dir);
    struct registry *reg;
    struct reloader *r = start(conf_path, &reg);
    reload_test_before_publish = hold_publish;
    set_bit(&go, 1 | 2); /* stop neither at the append nor at the swap */
    write_conf_as(conf_path, "g", "a.journal"); /* f renamed g */
    uint64_t before = reloads(reg);
    ck_assert(reloader_request(r, NULL, NULL, NULL, NULL));
    pthread_mutex_lock(&mu);
    wait_for(&stage, 4); /* g's version pending, f still served */
    pthread_mutex_unlock(&mu);

    struct worker w = {.reg = reg, .filter = "f", .item = "renamed-item"};
    pthread_t tid;
    ck_assert_int_eq(pthread_create(&tid, NULL, worker_main, &w), 0);
    pthread_join(tid, NULL);
    ck_assert_int_ne(w.rc, -2); /* f was found */
    set_bit(&go, 4);

    for (int i = 0; i < 20000 && reloads(reg) == before; i++)
        usleep(1000);
    ck_assert_uint_eq(atomic_load(&reg->reloads_ok), 1);
    ck_assert_ptr_null(catalog_find(registry_read(reg), "f", 1));
    const struct fentry *e = catalog_find(registry_read(reg), "g", 1);
    ck_assert_ptr_nonnull(e);
    bool served = filter_check(e->v->f, w.item, strlen(w.item));
    ck_assert_msg(w.rc != 0 || served,
                  "acknowledged by f during the rename, then NO from g until a restart");
    ck_assert_int_eq(in_journal("a.journal", w.item), (int)served);
    stop(r, reg);
}
END_TEST

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/check_reload.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return EXIT_FAILURE;
    }
    log_set_level(LOG_WARN);
    Suite *s = suite_create("reload");
    TCase *tc = tcase_create("rotation");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_add_after_the_rotation);
    tcase_add_test(tc, test_add_before_the_rotation);
    tcase_add_test(tc, test_add_to_the_old_name_during_a_rename);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "check_reload: could not remove %s\n", dir);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* check_rotation: a reload that rotates a filter's journal (its path changed,
 * or an operator moved the file aside) must not lose an add that was
 * acknowledged while it ran. In process, with the registry, the reload thread
 * and the gate, and two test seams (gate_test_after_append,
 * reload_test_after_swap) that pause a worker and the reload thread at the
 * exact points of the race, so the interleaving is forced, not hoped for. */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "bloom/filter.h"
#include "core/gate.h"
#include "store/conf.h"
#include "store/journal.h"
#include "store/registry.h"
#include "store/reload.h"
#include "lib/seams.h"

static char dir[256];

static void write_conf(const char *path, const char *journal)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "listen 127.0.0.1:0\nhttp_listen off\nthreads 1\n"
               "filter f {\n    capacity 10000\n    journal %s/%s\n    fsync no\n}\n",
            dir, journal);
    fclose(f);
}

/* The forced interleaving: stage 1, the worker has appended to the old
 * journal and waits; 2, the reload has swapped the journal and waits; 3, the
 * worker goes on; 4, the reload goes on. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage;
static bool worker_paused;

static void wait_stage(int want)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 20;
    while (stage < want)
        ck_assert_msg(pthread_cond_timedwait(&cv, &mu, &ts) == 0, "stage %d never came", want);
}

static void set_stage(int s)
{
    pthread_mutex_lock(&mu);
    stage = s;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void hold_worker(void)
{
    pthread_mutex_lock(&mu);
    if (!worker_paused) { /* only the first append: the one that holds the old journal */
        worker_paused = true;
        stage = 1;
        pthread_cond_broadcast(&cv);
        wait_stage(3);
    }
    pthread_mutex_unlock(&mu);
}

static void hold_reload(const char *filter)
{
    (void)filter;
    pthread_mutex_lock(&mu);
    stage = 2;
    pthread_cond_broadcast(&cv);
    wait_stage(4);
    pthread_mutex_unlock(&mu);
}

struct worker {
    struct registry *reg;
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
    const struct fentry *e = catalog_find(c, "f", 1);
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

/* A worker has read the old journal and appended to it when the reload swaps
 * in the new journal; it reads `pending` after the swap. Before the fix the
 * reload published `pending` only after the swap, so the worker saw none and
 * its add (acknowledged NEW) reached only the retired journal and the old
 * version: after the swap the filter answered NO. Now the add must be in the
 * new version and in the new journal. */
START_TEST(test_add_racing_a_journal_rotation)
{
    char conf_path[512], jb[512];
    snprintf(conf_path, sizeof(conf_path), "%s/bloomgate.conf", dir);
    snprintf(jb, sizeof(jb), "%s/b.journal", dir);
    write_conf(conf_path, "a.journal");
    char err[2048];
    struct conf *conf = conf_load(conf_path, err, sizeof(err));
    ck_assert_msg(conf != NULL, "%s", err);
    struct registry *reg = registry_create(1);
    ck_assert_ptr_nonnull(reg);
    ck_assert_msg(reload_initial(reg, conf, 1, err, sizeof(err)) == 0, "%s", err);
    struct reloader *r = reloader_start(reg, conf_path, 1);
    ck_assert_ptr_nonnull(r);

    gate_test_after_append = hold_worker;
    reload_test_after_swap = hold_reload;
    struct worker w = {.reg = reg, .item = "racing-item"};
    pthread_t tid;
    ck_assert_int_eq(pthread_create(&tid, NULL, worker_main, &w), 0);
    pthread_mutex_lock(&mu);
    wait_stage(1); /* the worker holds the old journal, its record written */
    pthread_mutex_unlock(&mu);

    write_conf(conf_path, "b.journal"); /* the rotation */
    uint64_t before = reloads(reg);
    ck_assert(reloader_request(r, NULL, NULL, NULL));
    pthread_mutex_lock(&mu);
    wait_stage(2); /* the reload has swapped the journal */
    pthread_mutex_unlock(&mu);

    set_stage(3);
    pthread_join(tid, NULL);
    ck_assert_int_eq(w.rc, 0);
    ck_assert_msg(w.added, "the add was not NEW");

    set_stage(4);
    for (int i = 0; i < 20000 && reloads(reg) == before; i++)
        usleep(1000);
    ck_assert_msg(reloads(reg) == before + 1, "the reload did not finish");
    ck_assert_uint_eq(atomic_load(&reg->reloads_failed), 0);

    const struct catalog *c = registry_read(reg);
    const struct fentry *e = catalog_find(c, "f", 1);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->v->generation, 2);
    ck_assert_msg(filter_check(e->v->f, w.item, strlen(w.item)),
                  "acknowledged NEW, then NO after the journal rotation");
    struct find fi = {.item = w.item};
    struct journal_scan scan;
    ck_assert_msg(journal_read_file(jb, find_item, &fi, &scan, err, sizeof(err)) >= 0, "%s", err);
    ck_assert_msg(fi.found >= 1, "the add is not in the new journal: a restart would lose it");

    gate_test_after_append = NULL;
    reload_test_after_swap = NULL;
    reloader_free(r);
    registry_free(reg);
}
END_TEST

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/check_rotation.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return EXIT_FAILURE;
    }
    log_set_level(LOG_WARN);
    Suite *s = suite_create("rotation");
    TCase *tc = tcase_create("rotation");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_add_racing_a_journal_rotation);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "check_rotation: could not remove %s\n", dir);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* check_privileges: bloomgated started as root with `user nobody` opens its
 * filters and journals as nobody, at start-up exactly as on every reload
 * (the order is bind, drop privileges, load, start threads). Needs root: run
 * as anyone else it says so and exits 77, which automake reports as SKIP. */
#include "config.h"

#include <check.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/daemon_harness.h"

static uid_t owner(const char *path)
{
    struct stat st;
    ck_assert_msg(stat(path, &st) == 0, "%s: missing", path);
    return st.st_uid;
}

/* The journal a daemon creates at start-up used to be root's (it was opened
 * before privileges were dropped), while every reload ran as the user. */
START_TEST(test_journal_owned_by_user)
{
    struct passwd *pw = getpwnam("nobody");
    ck_assert_msg(pw != NULL, "no user nobody");
    uid_t nobody = pw->pw_uid;
    struct dh_daemon *d = dh_new();
    /* nobody must reach the directory (its parent is the run's mkdtemp, 0700)
     * and write in it, as a StateDirectory would let it. */
    char parent[DH_PATH_MAX];
    snprintf(parent, sizeof(parent), "%s", d->dir);
    *strrchr(parent, '/') = '\0';
    ck_assert_int_eq(chmod(parent, 0711), 0);
    ck_assert_int_eq(chown(d->dir, nobody, pw->pw_gid), 0);
    dh_write_config(d, "threads 1\n"
                       "user nobody\n"
                       "filter f {\n"
                       "    capacity 1000\n"
                       "    journal @DIR@/f.journal\n"
                       "}\n");
    dh_start(d, NULL);
    char j[DH_PATH_MAX], old[DH_PATH_MAX];
    dh_path(d, "f.journal", j);
    dh_path(d, "f.journal.old", old);
    ck_assert_msg(owner(j) == nobody, "the journal created at start-up belongs to uid %u",
                  (unsigned)owner(j));

    struct dh_conn *c = dh_connect(d);
    DH_EXPECT(c, "ADD f before", "NEW");
    /* A reload rotates it (moved aside by the operator): the new one is nobody's too. */
    ck_assert_int_eq(rename(j, old), 0);
    const char *l = dh_cmd(c, "RELOAD");
    ck_assert_msg(strcmp(l, "OK f=reloaded") == 0, "%s", l);
    ck_assert_msg(owner(j) == nobody, "the journal a reload created belongs to uid %u",
                  (unsigned)owner(j));
    DH_EXPECT(c, "ADD f after", "NEW");
    dh_close(c);

    /* And a restart, as root again, opens what the user wrote. */
    dh_restart(d);
    c = dh_connect(d);
    DH_EXPECT(c, "CHECK f after", "YES");
    dh_close(c);
    dh_finish(d);
}
END_TEST

int main(void)
{
    if (geteuid() != 0) {
        printf("check_privileges: SKIP: needs root, to start bloomgated with `user nobody`\n");
        return 77;
    }
    Suite *s = suite_create("privileges");
    dh_add_case(s, "privileges", 120, (const TTest *const[]){test_journal_owned_by_user, NULL});
    return dh_run_suite(s);
}
